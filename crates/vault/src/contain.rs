//! The containment gate: the one check every section body passes before any writer writes
//! it, and the escapers that make interpolated values inert.
//!
//! - [`check`] refuses a body that would not stay inside its section or would act outside it:
//!   a heading at the section's level or above, a block left open, raw HTML, embeds, Obsidian
//!   comments, odd math, link or footnote definitions, links to anything but the URLs gathered
//!   in the run ([`Links`]), images, code a plugin would run, oversized bodies.
//! - [`passage`], [`text`], [`url`], [`target`] make quoted text and interpolated values inert.
//! - Model answers are made inert first by [`super::inert::markdown`].

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Parser, Tag, TagEnd};

pub use super::inert::Links;
use super::inert::{definition_lines, inline_query, options, plain_language, urls_in};

/// The most a section body may hold; pipelines cut longer answers first ([`super::inert::cap`]).
pub const MAX_BODY_CHARS: usize = 100_000;

/// Why a body is not contained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the text to write into `{section}` would {reason}; nothing was written (this is a bug or a hostile answer, not something to fix in the note)"
)]
pub struct Uncontained {
    pub section: String,
    pub reason: String,
}

/// `body` with its front-matter delimiter lines made harmless: a line `---`, `...` or `+++`
/// at the start of a line could close a front matter a note leaves open at byte 0, and change
/// how its metadata is read the next time (a rule becomes `***`, which Markdown draws alike).
pub fn neutral_delimiters(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    for line in body.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let ending = &line[content.len()..];
        match content.trim_end_matches([' ', '\t']) {
            "---" => out.push_str("***"),
            "..." => out.push_str("\\..."),
            "+++" => out.push_str("\\+++"),
            _ => out.push_str(content),
        }
        out.push_str(ending);
    }
    out
}

/// Checks that `body`, written under a heading of `level` named `name`, stays inside that
/// section and is inert: see the module. `links` are the URLs the body may link to.
pub fn check(name: &str, level: u8, body: &str, links: &Links) -> Result<(), Uncontained> {
    let fail = |reason: String| {
        Err(Uncontained {
            section: format!("{} {name}", "#".repeat(level as usize)),
            reason,
        })
    };
    let chars = body.chars().count();
    if chars > MAX_BODY_CHARS {
        return fail(format!("hold {chars} characters, more than {MAX_BODY_CHARS}"));
    }
    let marker = "#".repeat(level as usize);
    let probe = format!("{marker} {name}\n\n{body}\n\n{marker} Sentinel scholia end\n");
    let probe = super::lines::normalized(&probe).into_owned();
    let parser = Parser::new_ext(&probe, options());
    if let Some((label, _)) = parser.reference_definitions().iter().next() {
        return fail(format!("define a link reference (`[{label}]: …`)"));
    }
    let mut top = Vec::new();
    let mut depth = 0usize;
    let mut heading: Option<(u8, String)> = None;
    let mut code: Vec<Range<usize>> = Vec::new();
    let mut in_code = false;
    let mut math = 0;
    let mut in_link = 0usize;
    // Consecutive text events (entities are events of their own) read as one run.
    let mut text_run = String::new();
    for (event, range) in parser.into_offset_iter() {
        match &event {
            Event::Text(t) if !in_code && in_link == 0 => text_run.push_str(t),
            Event::Text(_) => {}
            _ => {
                if let Some(u) = urls_in(&text_run)
                    .into_iter()
                    .find(|u| !links.allows(&text_run[u.clone()]))
                {
                    return fail(format!("link to `{}`, which was not gathered", &text_run[u]));
                }
                text_run.clear();
            }
        }
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item) => depth = depth.saturating_sub(1),
            Event::Start(Tag::FootnoteDefinition(label)) => {
                return fail(format!("define a footnote (`[^{label}]: …`)"));
            }
            Event::FootnoteReference(label) => return fail(format!("refer to a footnote (`[^{label}]`)")),
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code = true;
                code.push(range);
                if let CodeBlockKind::Fenced(info) = kind
                    && !plain_language(&info)
                {
                    return fail(format!("hold a `{info}` code block, which a plugin could run"));
                }
            }
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Code(c) if inline_query(&c) => {
                return fail(format!("hold an inline query (`{c}`), which a plugin could run"));
            }
            Event::Start(Tag::Heading { level: l, .. }) if depth == 0 && (l as u8) <= level => {
                heading = Some((l as u8, String::new()));
            }
            Event::Text(t) if heading.is_some() => heading.as_mut().expect("some").1.push_str(&t),
            Event::End(TagEnd::Heading(_)) => {
                if let Some((_, text)) = heading.take() {
                    top.push(text);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                let shown: String = h.trim().chars().take(40).collect();
                return fail(format!("contain raw HTML (`{shown}`)"));
            }
            Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { .. },
                ..
            }) => {
                return fail(format!("embed another note (`{}`)", &probe[range]));
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                return fail(format!("show an image (`{dest_url}`)"));
            }
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { .. },
                ..
            }) => {}
            Event::Start(Tag::Link { dest_url, .. }) => {
                if !links.allows(&dest_url) {
                    return fail(format!("link to `{dest_url}`, which was not gathered"));
                }
                in_link += 1;
            }
            Event::End(TagEnd::Link) => in_link = in_link.saturating_sub(1),
            Event::Text(t) if !in_code => {
                if t.contains("%%") {
                    return fail("contain an Obsidian comment (`%%`)".into());
                }
                math += t.matches("$$").count();
            }
            _ => {}
        }
    }
    if let Some(at) = definition_lines(&probe, &code).first() {
        let line: String = probe[*at..].lines().next().unwrap_or("").chars().take(40).collect();
        return fail(format!("define a link or footnote (`{line}`)"));
    }
    match top.as_slice() {
        [_, last] if last == "Sentinel scholia end" => {}
        [_, .., last] if last == "Sentinel scholia end" => {
            return fail(format!("start a new section (`{}`)", top[1]));
        }
        _ => {
            return fail(
                "leave a block open (a code fence, a quote or a list) that swallows the rest of the note".into(),
            );
        }
    }
    if math % 2 == 1 {
        return fail("leave a math block (`$$`) open".into());
    }
    Ok(())
}

impl scholia_base::Coded for Uncontained {
    fn code(&self) -> &'static str {
        "UNCONTAINED"
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        scholia_base::ErrorKind::Upstream
    }
}

pub use super::inert::passage;

/// A note's sentence quoted for a reader, on one line, inert as [`passage`] makes text, and
/// readable in the raw Markdown an editor shows: code spans stay code spans, and a word that
/// would make markup (`[[…]]`, `[x](…)`, `<tag>`, `$math$`, `%%`, an entity, a URL) becomes a
/// code span itself rather than a word full of backslashes.
pub fn quote(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len() + 16);
    let mut rest = one_line.as_str();
    while !rest.is_empty() {
        // A code span: a run of backticks to the next run of as many.
        if let Some(open) = rest.find('`') {
            let ticks = rest[open..].chars().take_while(|c| *c == '`').count();
            let body = &rest[open + ticks..];
            let fence = "`".repeat(ticks);
            if let Some(close) = find_run(body, &fence) {
                words(&rest[..open], &mut out);
                let code = &body[..close];
                if crate::plugins::inline_query(code) {
                    // A note's own inline query is quoted as its text, never run here.
                    words(code, &mut out);
                } else {
                    out.push_str(&rest[open..open + ticks + close + ticks]);
                }
                rest = &body[close + ticks..];
                continue;
            }
            // An unmatched backtick is no code: dropped, but for a space where the marks on
            // either side would otherwise join into one (`%`%` is no `%%` comment).
            words(&rest[..open], &mut out);
            if let (Some(before), Some(after)) = (out.chars().last(), body.chars().next())
                && before == after
                && before.is_ascii_punctuation()
            {
                out.push(' ');
            }
            rest = body;
            continue;
        }
        words(rest, &mut out);
        break;
    }
    // At the start of the line (after the quote's `> `): no heading, list, quote or fence,
    // and, where it can be, no backslash for a reader to read past: a heading's `#` run is
    // code (`# Title` → `` `#` Title``), a bullet a dash (`- John Locke` → `— John Locke`, an
    // attribution as the note shows it), a number's dot escaped after it (`1\.`).
    let hashes = out.chars().take_while(|c| *c == '#').count();
    let number = out
        .split_once(['.', ')'])
        .map(|(n, _)| n)
        .filter(|n| !n.is_empty() && n.len() < 10 && n.chars().all(|c| c.is_ascii_digit()));
    if hashes > 0 && out[hashes..].starts_with(' ') {
        out = format!("`{}`{}", &out[..hashes], &out[hashes..]);
    } else if out.starts_with(['-', '+', '*']) && out[1..].starts_with(' ') {
        out.replace_range(..1, "—");
    } else if let Some(n) = number {
        out.insert(n.len(), '\\');
    } else if out.starts_with(['#', '-', '+', '*', '>', '|'])
        || out.starts_with("~~~")
        || (out.starts_with('=') && out.chars().all(|c| c == '=' || c == ' '))
    {
        // `=` only underlines a heading when the line is nothing else, and `~` only fences
        // three at a time: `==highlight== then text` stays as the note writes it.
        out.insert(0, '\\');
    }
    out
}

/// Where a run of exactly `fence` starts in `s`.
fn find_run(s: &str, fence: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(fence) {
        let at = from + i;
        let before = s[..at].ends_with('`');
        let after = s[at + fence.len()..].starts_with('`');
        if !before && !after {
            return Some(at);
        }
        from = at + fence.len();
    }
    None
}

/// Plain text's words, each that would make markup written as a code span.
fn words(text: &str, out: &mut String) {
    let urls = urls_in(text);
    let mut at = 0;
    for (i, piece) in text.split_inclusive(char::is_whitespace).scan(0usize, |pos, p| {
        let start = *pos;
        *pos += p.len();
        Some((start, p))
    }) {
        if i < at {
            continue;
        }
        let word = piece.trim_end();
        let space = &piece[word.len()..];
        // A URL anywhere in the word: obsidian-help ru writes `[[Каталог сообщества|каталоге
        // сообщества Obsidian]](https://community.obsidian.md)`, read as
        // `Obsidian(https://community.obsidian.md).`, whose URL a reader's app links.
        let in_url = urls.iter().any(|u| u.start < i + word.len() && i < u.end);
        if in_url || markup(word) {
            let bare: String = word.chars().filter(|c| *c != '`').collect();
            // A code span that begins with `=` or `$=` is a query Dataview runs: those leading
            // characters stay outside it, escaped.
            let lead = match bare.starts_with('=') || bare.starts_with("$=") {
                true => bare.len() - bare.trim_start_matches(['=', '$']).len(),
                false => 0,
            };
            for c in bare[..lead].chars() {
                out.push('\\');
                out.push(c);
            }
            if lead < bare.len() {
                out.push('`');
                out.push_str(&bare[lead..]);
                out.push('`');
            }
        } else {
            out.push_str(word);
        }
        out.push_str(space);
        at = i + piece.len();
    }
}

/// Whether a word would make markup where it is quoted.
fn markup(word: &str) -> bool {
    let b = word.as_bytes();
    word.contains(['[', ']', '$', '\\'])
        || word.contains("%%")
        || b.windows(2)
            .any(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || matches!(w[1], b'/' | b'!' | b'?')))
        || entity(word)
        || (word.starts_with('#') && word[1..].starts_with(char::is_alphanumeric))
}

/// `&name;` or `&#123;`: an entity a renderer would turn into another character.
fn entity(word: &str) -> bool {
    word.match_indices('&').any(|(i, _)| {
        let rest = &word[i + 1..];
        rest.find(';')
            .is_some_and(|end| end > 0 && rest[..end].chars().all(|c| c.is_ascii_alphanumeric() || c == '#'))
    })
}

/// A title (of a page, a note, a model) inside link text or emphasis: one line, bounded,
/// with the characters that would end its construct escaped.
pub fn text(s: &str) -> String {
    let mut one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 200 {
        one = one.chars().take(199).collect::<String>() + "…";
    }
    // In link text a `]` would end the text early.
    passage(&one).replace(']', "\\]")
}

/// A URL for `[text](url)` or `<url>`: only http(s); characters that would end the link are
/// percent-encoded. Anything else becomes empty (and is not linked).
pub fn url(s: &str) -> String {
    let s = s.trim();
    let Ok(parsed) = url::Url::parse(s) else {
        return String::new();
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return String::new();
    }
    let mut out = String::with_capacity(s.len());
    for c in parsed.as_str().chars() {
        match c {
            ' ' | '<' | '>' | '(' | ')' | '[' | ']' | '"' | '\\' | '`' | '|' | '{' | '}' | '^' => {
                out.push_str(&format!("%{:02X}", c as u32));
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `[title](url)` (`<url>` without a title of its own) for an http(s) URL; the title alone, as
/// text, for anything else.
pub fn link(title: &str, url: &str) -> String {
    let untitled = title.trim().is_empty() || title.trim() == url.trim();
    match self::url(url) {
        u if u.is_empty() => text(if untitled { url } else { title }),
        u if untitled => format!("<{u}>"),
        u => format!("[{}]({u})", text(title)),
    }
}

/// A wikilink target for `[[target]]`: nothing that ends or splits the link, no backtick that
/// would open code around it, no `%%` that would open a comment, no `<` or `>` that would open
/// HTML (`<!a`), no `$` that would open math across the link (two in one name did), and no
/// `://` that reads as an address. A vault path never needs them but for `$`: a note named
/// with it gets a link the check can accept instead of a section refused whole.
pub fn target(s: &str) -> String {
    let mut t: String = s
        .chars()
        .filter(|c| !matches!(c, '[' | ']' | '|' | '#' | '^' | '`' | '\n' | '\r' | '<' | '>' | '$'))
        .collect();
    while t.contains("%%") || t.contains("://") {
        t = t.replace("%%", "%").replace("://", ":/");
    }
    t.trim().to_string()
}

#[cfg(test)]
mod quote_tests {
    use super::*;

    /// A wikilink made of any note name stays one link that the section check accepts: the
    /// names the hardening proptest shrank to (`a://$`, `><!a`) opened math or HTML across it.
    #[test]
    fn any_name_makes_one_contained_wikilink() {
        for name in [
            "a://$",
            "><!a",
            "Cost $5 and $10",
            "w%*3c{l R y$x.\"=hk$ztu://H&",
            "<b>bold</b>",
            "a<!--b",
            "]:",
            "=[",
        ] {
            let body = format!("- [[{}]]", target(name));
            assert!(check("Research", 2, &body, &Links::none()).is_ok(), "{name}: {body}");
        }
        assert_eq!(target("Sourdough starter"), "Sourdough starter");
        assert_eq!(target("Folder/Sub note"), "Folder/Sub note");
    }

    #[test]
    fn quotes_read_as_the_note_reads_and_stay_inert() {
        let check = |s: &str, want: &str| {
            let q = quote(s);
            assert_eq!(q, want, "{s}");
            assert!(check("Research", 2, &format!("> {q}"), &Links::none()).is_ok(), "{q}");
        };
        check("Use `[aliases]` to find files.", "Use `[aliases]` to find files.");
        check("Type [[Note]] or [x](y) here.", "Type `[[Note]]` or `[x](y)` here.");
        check(
            "Costs $5 or 100%% of <b>it</b> &copy; R&D",
            "Costs `$5` or `100%%` of `<b>it</b>` `&copy;` R&D",
        );
        check(
            "See https://example.com/a%20b now.",
            "See `https://example.com/a%20b` now.",
        );
        check(
            "A page in the catalog(https://community.obsidian.md). Or (see https://a.example).",
            "A page in the `catalog(https://community.obsidian.md).` Or (see `https://a.example).`",
        );
        check("#tag then a # alone and C# code.", "`#tag` then a # alone and C# code.");
        // An unmatched backtick is dropped, and joins no marks into one (the `%%` of a comment,
        // a hostile title found by the writers' property test).
        check("%`%", "% %");
        check("it`s here", "its here");
        // A line that would start a block: no backslash where the reader can be spared one.
        check("- not a list", "— not a list");
        check("+ nor * this", "— nor * this");
        check("* nor this", "— nor this");
        check("# Sharpen your thinking.", "`#` Sharpen your thinking.");
        check("### Three", "`###` Three");
        check("1. not a list either", "1\\. not a list either");
        check("2024) a year", "2024\\) a year");
        check("-v is a flag", "\\-v is a flag");
        check("> not a quote", "\\> not a quote");
        check("--- not a rule", "\\--- not a rule");
        // Obsidian's highlight and strikethrough at the start are text, as written (da
        // Refusionspolitik quoted `\==Bidrag til Obsidian Unlimited…==`); an underline or a
        // fence is not.
        check("==Highlighted.== Then more.", "==Highlighted.== Then more.");
        check("~~Struck~~ words", "~~Struck~~ words");
        check("===", "\\===");
        check("~~~ fence", "\\~~~ fence");
        check(
            "An ``a`b`` span and a lone ` tick.",
            "An ``a`b`` span and a lone  tick.",
        );
        check("plain words, nothing else.", "plain words, nothing else.");
        check("a =?\\ query and $=[x]", "a \\=`?\\` query and \\$\\=`[x]`");
    }
}

#[cfg(test)]
mod delimiter_tests {
    use super::neutral_delimiters;

    #[test]
    fn delimiter_lines_are_made_harmless() {
        assert_eq!(neutral_delimiters("a\n\n---\n\nb\n"), "a\n\n***\n\nb\n");
        assert_eq!(neutral_delimiters("...  \r\n+++"), "\\...\r\n\\+++");
        assert_eq!(neutral_delimiters(" ---\n----\n"), " ---\n----\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> Links {
        Links::from_urls(["https://example.org", "https://real.example/a"])
    }

    fn contained(body: &str) -> bool {
        check("Research", 2, body, &links()).is_ok()
    }

    #[test]
    fn the_check() {
        let ok = |b: &str| assert!(contained(b), "{b:?}: {:?}", check("Research", 2, b, &links()));
        let bad = |b: &str| assert!(!contained(b), "{b:?} passed");
        ok("### Topic\n\ntext\n\n```\ncode\n```");
        ok("text with <https://example.org> autolink and [[Note]] link");
        ok("[a](HTTPS://Real.Example/a#x) and https://real.example/a/ bare");
        ok("[https://shown.example](https://real.example/a) label");
        bad("[a](https://evil.example)");
        bad("[a](https&#58;//evil.example)");
        bad("<javascript:alert(1)>");
        bad("<obsidian://open?vault=v>");
        bad("<a@b.example>");
        bad("bare https://evil.example/x");
        bad("bare https&#58;//evil.example/x");
        bad("![pixel](https://real.example/a)");
        bad("x\n\n[guide]: https://real.example/a");
        bad("> [guide]: https://real.example/a");
        bad("x[^1]\n\n[^1]: note");
        bad("```dataviewjs\ndv.el('b')\n```");
        bad("```DataView\nLIST\n```");
        bad("`$= dv.pages()`");
        bad("`= this.file`");
        bad(&"a".repeat(MAX_BODY_CHARS + 1));
        ok("```python\nprint(1)\n```");
        ok("```html\n<div>in code</div>\n```");
        ok("`<b>` in code and `%%` too");
        ok("$$x$$ balanced math");
        bad("## Escapes\n");
        bad("# Top");
        bad("Setext\n---");
        bad("```\nnever closed");
        bad("~~~\nnever closed");
        bad("```rust\nfn x() {}\n```rust\n");
        bad("<div>\nraw\n</div>");
        bad("<!-- a comment that never ends");
        bad("<script>alert(1)</script>");
        bad("<pre>\n## inside pre\n");
        bad("text <b>bold</b>");
        bad("![[Secret note]]");
        bad("%% hide the rest");
        bad("$$ open math");
        ok("> quoted\n> ## quoted heading stays inside");
        ok("- list\n  ## heading in a list item");
    }

    #[test]
    fn quoted_and_interpolated_values_are_inert() {
        assert_eq!(
            passage("half [[Link\nand ![[Embed]] <b> # x"),
            "half \\[\\[Link and !\\[\\[Embed]] \\<b> # x"
        );
        assert_eq!(passage("# heading"), "\\# heading");
        // A URL in quoted text is shown, never linked.
        assert_eq!(
            passage("failed at http://127.0.0.1:4/v1: 500"),
            "failed at `http://127.0.0.1:4/v1`: 500"
        );
        assert!(contained(&passage(
            "see obsidian://open?vault=x and https://evil.example/"
        )));
        assert_eq!(passage("> [!note] x %% y"), "\\> \\[!note] x &#37;&#37; y");
        for p in ["half [[Link", "```", "<!--", "%%", "$$", "> [!x]", "## h", "</div>"] {
            let body = format!("- [[Note]]\n  > {}", passage(p));
            assert!(contained(&body), "{p:?} → {body:?}");
        }
        // A bare scheme at the end of a value becomes a URL with what the template puts after
        // it (a folder `+:` shown as `+:/`, then Arabic's comma): it is code already.
        assert_eq!(text("+://"), "`+://`");
        assert!(contained(&format!("- [[Note]] — في {}، مثل", text("+://"))));
        assert_eq!(text("A [title]\nwith (parens)"), "A \\[title\\] with (parens)");
        assert_eq!(url("https://a.example/x (y)"), "https://a.example/x%20%28y%29");
        assert_eq!(url("javascript:alert(1)"), "");
        assert_eq!(url("https://a.example/a>b<c"), "https://a.example/a%3Eb%3Cc");
        assert_eq!(target("Note]] [[Other|x#y"), "Note Otherxy");
    }
}
