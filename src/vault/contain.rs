//! Markdown that cannot escape the section it is written into.
//!
//! Everything scholia writes into a note is untrusted text put together: model answers,
//! passages quoted from other notes, titles and URLs of web pages. Three tools keep it inside
//! `## Research`:
//!
//! - [`model_markdown`] neutralises a model's Markdown: headings above the section's level are
//!   lowered, setext underlines cannot make headings, raw HTML (blocks, comments, inline tags)
//!   is escaped, embeds become plain wikilinks, callouts and Obsidian comments are defused, and
//!   a fence left open is closed. It works on what pulldown-cmark parses — fence info strings,
//!   tilde and indented fences, HTML block rules — not on guesses about lines.
//! - [`passage`], [`text`], [`url`], [`target`] make quoted text and interpolated values inert.
//! - [`check`] is the one gate every section body passes before any writer writes it: a body
//!   that would not stay inside its section is refused.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag};

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
}

/// Why a body is not contained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the text to write into `{section}` would {reason}; nothing was written (this is a bug or a hostile answer, not something to fix in the note)"
)]
pub struct Uncontained {
    pub section: String,
    pub reason: String,
}

/// Checks that `body`, written under a heading of `level` named `name`, stays inside that
/// section: no heading at `level` or above, no block left open that would swallow what
/// follows, no raw HTML, no embeds, balanced Obsidian comments and math blocks.
pub fn check(name: &str, level: u8, body: &str) -> Result<(), Uncontained> {
    let fail = |reason: String| {
        Err(Uncontained {
            section: format!("{} {name}", "#".repeat(level as usize)),
            reason,
        })
    };
    let marker = "#".repeat(level as usize);
    let probe = format!("{marker} {name}\n\n{body}\n\n{marker} Sentinel scholia end\n");
    let mut top = Vec::new();
    let mut depth = 0usize;
    let mut heading: Option<(u8, String)> = None;
    let mut code = false;
    let mut math = 0;
    for (event, range) in Parser::new_ext(&probe, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_)) => depth += 1,
            Event::End(
                pulldown_cmark::TagEnd::BlockQuote(_)
                | pulldown_cmark::TagEnd::List(_)
                | pulldown_cmark::TagEnd::Item
                | pulldown_cmark::TagEnd::FootnoteDefinition,
            ) => depth = depth.saturating_sub(1),
            Event::Start(Tag::CodeBlock(_)) => code = true,
            Event::End(pulldown_cmark::TagEnd::CodeBlock) => code = false,
            Event::Start(Tag::Heading { level: l, .. }) if depth == 0 && (l as u8) <= level => {
                heading = Some((l as u8, String::new()));
            }
            Event::Text(t) if heading.is_some() => heading.as_mut().expect("some").1.push_str(&t),
            Event::End(pulldown_cmark::TagEnd::Heading(_)) => {
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
            Event::Text(t) if !code => {
                if t.contains("%%") {
                    return fail("contain an Obsidian comment (`%%`)".into());
                }
                math += t.matches("$$").count();
            }
            _ => {}
        }
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

/// One edit: insert `text` at `at`, or replace `at..end`.
struct Edit {
    at: usize,
    end: usize,
    text: String,
}

fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.at, e.end));
    let mut out = String::with_capacity(text.len() + edits.len() * 2);
    let mut pos = 0;
    for e in edits {
        if e.at < pos {
            continue;
        }
        out.push_str(&text[pos..e.at]);
        out.push_str(&e.text);
        pos = e.end;
    }
    out.push_str(&text[pos..]);
    out
}

fn insert(at: usize, text: &str) -> Edit {
    Edit {
        at,
        end: at,
        text: text.to_string(),
    }
}

/// The start of the line holding `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0)
}

/// Makes a model's Markdown safe under a heading of level `min_level - 1`: see the module.
pub fn model_markdown(markdown: &str, min_level: u8) -> String {
    let mut text = markdown.replace("\r\n", "\n");
    // Each pass fixes what the parse shows; escaping an HTML block can expose the next.
    for _ in 0..8 {
        let edits = edits(&text, min_level);
        if edits.is_empty() {
            break;
        }
        text = apply(&text, edits);
    }
    close_open_fence(&text)
}

fn edits(text: &str, min_level: u8) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut code: Vec<Range<usize>> = Vec::new();
    // Math blocks (`$$`) are kept when they pair up; an odd one out could swallow the note.
    let math: usize = Parser::new_ext(text, options())
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.matches("$$").count()),
            _ => None,
        })
        .sum();
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => code.push(range),
            Event::Start(Tag::Heading { level, .. }) if (level as u8) < min_level => {
                let line = line_start(text, range.start);
                let head = &text[line..range.end];
                let indent = head.len() - head.trim_start_matches(' ').len();
                if head[indent..].starts_with('#') {
                    let hashes = head[indent..].chars().take_while(|c| *c == '#').count();
                    out.push(Edit {
                        at: line + indent,
                        end: line + indent + hashes,
                        text: "#".repeat(min_level as usize),
                    });
                } else {
                    // A setext heading: a blank line before the underline turns it into a
                    // paragraph and a rule.
                    let underline = line_start(text, range.end.saturating_sub(1).max(range.start));
                    out.push(insert(underline, "\n"));
                }
            }
            Event::Html(_) => {
                // Every line of an HTML block: its first `<` is escaped.
                let mut at = line_start(text, range.start);
                while at < range.end {
                    let line_end = text[at..].find('\n').map(|i| at + i + 1).unwrap_or(text.len());
                    if let Some(lt) = text[at..line_end].find('<') {
                        out.push(insert(at + lt, "\\"));
                    }
                    at = line_end;
                }
            }
            Event::InlineHtml(_) => out.push(insert(range.start, "\\")),
            Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { .. },
                ..
            }) => out.push(insert(range.start, "\\")),
            Event::Text(t) if t.contains("%%") || (math % 2 == 1 && t.contains("$$")) => {
                if let Some(src) = text.get(range.clone())
                    && src == &*t
                {
                    for (i, _) in src.match_indices("%%") {
                        out.push(Edit {
                            at: range.start + i,
                            end: range.start + i + 2,
                            text: "%&#37;".into(),
                        });
                    }
                    if math % 2 == 1 {
                        for (i, _) in src.match_indices("$$") {
                            out.push(Edit {
                                at: range.start + i,
                                end: range.start + i + 2,
                                text: "$&#36;".into(),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // Callouts: `> [!type]` lines outside code.
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if !code.iter().any(|r| r.contains(&at)) {
            let rest = line.trim_start_matches([' ', '>']);
            if line.trim_start().starts_with('>') && rest.starts_with("[!") {
                out.push(insert(at + (line.len() - rest.len()), "\\"));
            }
        }
        at += line.len();
    }
    out
}

/// Appends a closing fence when the text ends inside a fenced code block.
fn close_open_fence(text: &str) -> String {
    let mut open: Option<String> = None;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                let src = text[range.clone()].trim_start();
                let fence: String = src.chars().take_while(|c| *c == '`' || *c == '~').collect();
                let body = text[range.clone()].trim_end();
                let closed = body.lines().count() > 1
                    && body.lines().last().is_some_and(|l| {
                        let l = l.trim();
                        l.len() >= fence.len() && l.chars().all(|c| fence.starts_with(c))
                    });
                open = (!closed && range.end >= text.trim_end().len()).then_some(fence);
            }
            _ => open = open.filter(|_| range.end >= text.trim_end().len()),
        }
    }
    match open {
        Some(fence) => format!("{}\n{fence}", text.trim_end()),
        None => text.to_string(),
    }
}

impl crate::error::Coded for Uncontained {
    fn code(&self) -> &'static str {
        "UNCONTAINED"
    }
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::Upstream
    }
}

/// Text quoted from a note or a page, made inert on one line: it renders as the words it
/// holds and cannot make links, embeds, callouts, HTML, code or comments.
pub fn passage(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len() + 16);
    for (i, c) in one_line.chars().enumerate() {
        match c {
            // Links, embeds, wikilinks, callouts, HTML, code and math all need one of these.
            '\\' | '`' | '[' | '<' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // At the start of a line: headings, lists, quotes, fences.
            '#' | '-' | '+' | '*' | '>' | '~' | '=' | '|' if i == 0 => {
                out.push('\\');
                out.push(c);
            }
            '%' => out.push_str("&#37;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
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

/// A wikilink target for `[[target]]`: nothing that ends or splits the link, and no `%%` or
/// `$$` that would open a comment or a math block.
pub fn target(s: &str) -> String {
    let mut t: String = s
        .chars()
        .filter(|c| !matches!(c, '[' | ']' | '|' | '#' | '^' | '\n' | '\r'))
        .collect();
    while t.contains("%%") || t.contains("$$") {
        t = t.replace("%%", "%").replace("$$", "$");
    }
    t.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contained(body: &str) -> bool {
        check("Research", 2, body).is_ok()
    }

    #[test]
    fn the_check() {
        let ok = |b: &str| assert!(contained(b), "{b:?}: {:?}", check("Research", 2, b));
        let bad = |b: &str| assert!(!contained(b), "{b:?} passed");
        ok("### Topic\n\ntext\n\n```\ncode\n```");
        ok("text with <https://example.org> autolink and [[Note]] link");
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
    fn model_markdown_is_made_safe() {
        let check_case = |input: &str, expected: &str| {
            let got = model_markdown(input, 3);
            assert_eq!(got, expected, "{input:?}");
            assert!(contained(&got), "{got:?}: {:?}", check("Research", 2, &got));
        };
        check_case("## Topic\ntext", "### Topic\ntext");
        check_case("# Big\n### Fine", "### Big\n### Fine");
        check_case("Line\n---\nafter", "Line\n\n---\nafter");
        check_case("Line\n===\nafter", "Line\n\n===\nafter");
        check_case("```rust\nfn x() {}\n", "```rust\nfn x() {}\n```");
        check_case("```\n## not a heading\n```", "```\n## not a heading\n```");
        check_case("#hashtag stays", "#hashtag stays");
        // A fence whose info string looks like a fence line never closes it.
        check_case("```rust\ncode\n```rust\n", "```rust\ncode\n```rust\n```");
        check_case("~~~\n## x\n", "~~~\n## x\n~~~");
        check_case("    ## indented code\n", "    ## indented code\n");
        check_case("<div>\n## Escape\n</div>", "\\<div>\n### Escape\n\\</div>");
        check_case("<!-- hide\n## rest", "\\<!-- hide\n### rest");
        check_case("a <script>x</script> b", "a \\<script>x\\</script> b");
        check_case("see ![[Secret]] and [[Public]]", "see \\![[Secret]] and [[Public]]");
        check_case("> [!warning] boo\n> text", "> \\[!warning] boo\n> text");
        check_case("%% hidden", "%&#37; hidden");
        check_case("$$ open math", "$&#36; open math");
        check_case("$$x$$ paired", "$$x$$ paired");
        check_case(
            "keep <https://a.example/x> and `<b>`",
            "keep <https://a.example/x> and `<b>`",
        );
    }

    #[test]
    fn quoted_and_interpolated_values_are_inert() {
        assert_eq!(
            passage("half [[Link\nand ![[Embed]] <b> # x"),
            "half \\[\\[Link and !\\[\\[Embed]] \\<b> # x"
        );
        assert_eq!(passage("# heading"), "\\# heading");
        assert_eq!(passage("> [!note] x %% y"), "\\> \\[!note] x &#37;&#37; y");
        for p in ["half [[Link", "```", "<!--", "%%", "$$", "> [!x]", "## h", "</div>"] {
            let body = format!("- [[Note]]\n  > {}", passage(p));
            assert!(contained(&body), "{p:?} → {body:?}");
        }
        assert_eq!(text("A [title]\nwith (parens)"), "A \\[title\\] with (parens)");
        assert_eq!(url("https://a.example/x (y)"), "https://a.example/x%20%28y%29");
        assert_eq!(url("javascript:alert(1)"), "");
        assert_eq!(url("https://a.example/a>b<c"), "https://a.example/a%3Eb%3Cc");
        assert_eq!(target("Note]] [[Other|x#y"), "Note Otherxy");
    }
}
