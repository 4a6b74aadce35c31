//! Markdown from outside the note (a model's answer, a report) made inert before it is written
//! under a heading: it renders as text and links, and can do nothing else.
//!
//! [`markdown`] works on what pulldown-cmark parses, never on guesses about lines, and repeats
//! until a parse shows nothing left to fix:
//!
//! - headings above the section's level are lowered, setext underlines cannot make headings;
//! - raw HTML (blocks, comments, inline tags) is escaped, embeds become plain wikilinks,
//!   callouts, Obsidian comments and odd `$$` are defused, a fence left open is closed;
//! - link reference definitions and footnote definitions are escaped (a definition in the
//!   section would repoint or extend the note's own links), and bracketed text cannot become a
//!   reference to the note's definitions;
//! - every link, in any syntax, must point at a URL gathered in the run ([`Links`]), compared
//!   after entity decoding and case folding; anything else loses its target (images lose it
//!   always), and wikilinks that do not resolve become their text;
//! - code blocks whose language a plugin could execute (`dataview`, `dataviewjs`, anything not
//!   a known programming language) become plain text blocks, inline `` `= …` `` and
//!   `` `$= …` `` become text.
//!
//! [`super::contain::check`] then verifies the same rules on the final section body.

use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

pub(super) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
}

/// The URLs text written in a run may link to: the sources gathered in that run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    urls: HashSet<String>,
}

impl Links {
    /// No URL at all (offline research, notes only).
    pub fn none() -> Links {
        Links::default()
    }

    pub fn from_urls<S: AsRef<str>>(urls: impl IntoIterator<Item = S>) -> Links {
        Links {
            urls: urls.into_iter().filter_map(|u| normalize_url(u.as_ref())).collect(),
        }
    }

    /// Whether `url` (as written, entities already decoded) is one of the gathered URLs.
    pub fn allows(&self, url: &str) -> bool {
        normalize_url(url).is_some_and(|u| self.urls.contains(&u))
    }

    pub fn insert(&mut self, url: &str) {
        if let Some(u) = normalize_url(url) {
            self.urls.insert(u);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    pub fn extend(&mut self, other: &Links) {
        self.urls.extend(other.urls.iter().cloned());
    }
}

/// An http(s) URL as compared: scheme and host lower-cased (by the URL parser), without its
/// fragment and trailing slash. Anything else is not a URL a note may link to.
pub fn normalize_url(url: &str) -> Option<String> {
    let mut parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return None;
    }
    parsed.set_fragment(None);
    // `(` and `%28` are one address: compare with every escape decoded.
    let decoded = percent_encoding::percent_decode_str(parsed.as_str()).decode_utf8_lossy();
    Some(decoded.trim_end_matches('/').to_string())
}

/// What [`markdown`] removed: link targets that were not gathered, wikilinks that do not resolve.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    pub urls: Vec<String>,
    pub wikilinks: Vec<String>,
}

impl Removed {
    pub fn count(&self) -> usize {
        self.urls.len() + self.wikilinks.len()
    }
}

/// Fenced code languages written as they are: languages with no plugin that runs them. Any
/// other info string (`dataview`, `dataviewjs`, `query`, `button`, …) becomes `text`.
const CODE_LANGUAGES: &[&str] = &[
    "",
    "asm",
    "awk",
    "bash",
    "bat",
    "c",
    "c++",
    "clj",
    "clojure",
    "cmake",
    "cmd",
    "conf",
    "console",
    "cpp",
    "cs",
    "csharp",
    "css",
    "csv",
    "dart",
    "diff",
    "docker",
    "dockerfile",
    "elixir",
    "elm",
    "erlang",
    "ex",
    "f#",
    "fish",
    "fortran",
    "fsharp",
    "go",
    "golang",
    "gql",
    "graphql",
    "groovy",
    "h",
    "haskell",
    "hcl",
    "hpp",
    "hs",
    "html",
    "http",
    "ini",
    "java",
    "javascript",
    "jinja",
    "jl",
    "js",
    "json",
    "json5",
    "jsonc",
    "jsx",
    "julia",
    "kotlin",
    "kt",
    "latex",
    "less",
    "lisp",
    "log",
    "lua",
    "make",
    "makefile",
    "markdown",
    "matlab",
    "md",
    "mjs",
    "nginx",
    "nim",
    "nix",
    "objc",
    "ocaml",
    "pascal",
    "patch",
    "perl",
    "php",
    "pl",
    "plain",
    "plaintext",
    "powershell",
    "prolog",
    "properties",
    "proto",
    "protobuf",
    "ps1",
    "py",
    "python",
    "python3",
    "r",
    "racket",
    "rb",
    "regex",
    "ruby",
    "rs",
    "rust",
    "sass",
    "scala",
    "scheme",
    "scss",
    "sed",
    "sh",
    "shell",
    "sol",
    "solidity",
    "sql",
    "svelte",
    "swift",
    "tex",
    "text",
    "tf",
    "toml",
    "ts",
    "tsv",
    "tsx",
    "txt",
    "typescript",
    "vb",
    "verilog",
    "vhdl",
    "vim",
    "vue",
    "wasm",
    "xml",
    "yaml",
    "yml",
    "zig",
    "zsh",
];

/// Whether a fence's info string names a language written as is.
pub(super) fn plain_language(info: &str) -> bool {
    let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    CODE_LANGUAGES.contains(&lang.as_str())
}

/// Whether inline code is a Dataview query (`= …`) or Dataview JS (`$= …`).
pub(super) fn inline_query(code: &str) -> bool {
    let t = code.trim_start();
    t.starts_with('=') || t.starts_with("$=")
}

/// One edit: replace `at..end` with `text`.
struct Edit {
    at: usize,
    end: usize,
    text: String,
}

fn insert(at: usize, text: &str) -> Edit {
    Edit {
        at,
        end: at,
        text: text.to_string(),
    }
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

/// The start of the line holding `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind(['\n', '\r']).map(|i| i + 1).unwrap_or(0)
}

/// Makes `markdown` inert under a heading of level `min_level - 1` (see the module): only
/// links to `links` and wikilinks for which `resolves` is true keep their targets.
pub fn markdown(markdown: &str, min_level: u8, links: &Links, resolves: &dyn Fn(&str) -> bool) -> (String, Removed) {
    let mut text = markdown.replace("\r\n", "\n").replace('\r', "\n");
    let mut removed = Removed::default();
    // Each pass fixes what the parse shows; escaping an HTML block or removing a link can
    // expose the next thing to fix.
    for _ in 0..12 {
        let edits = edits(&text, min_level, links, resolves, &mut removed);
        if edits.is_empty() {
            break;
        }
        text = apply(&text, edits);
    }
    // Passes repeat what they see until it is fixed: each removal counts once.
    for list in [&mut removed.urls, &mut removed.wikilinks] {
        let mut seen = HashSet::new();
        list.retain(|u| seen.insert(u.clone()));
    }
    (close_open_fence(&text), removed)
}

/// [`markdown`] for text that may keep no link but wikilinks (tests and templates).
pub fn markdown_without_urls(text: &str, min_level: u8) -> String {
    markdown(text, min_level, &Links::none(), &|_| true).0
}

fn edits(
    text: &str,
    min_level: u8,
    links: &Links,
    resolves: &dyn Fn(&str) -> bool,
    removed: &mut Removed,
) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut code: Vec<Range<usize>> = Vec::new();
    // Math blocks (`$$`) are kept when they pair up; an odd one out could swallow the note.
    let math: usize = Parser::new_ext(text, options())
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.matches("$$").count()),
            _ => None,
        })
        .sum();
    let parser = Parser::new_ext(text, options());
    let defs: Vec<usize> = parser
        .reference_definitions()
        .iter()
        .map(|(_, d)| d.span.start)
        .collect();
    // The link being removed: its range and the range of its label.
    let mut dropping: Option<(Range<usize>, Option<Range<usize>>, bool)> = None;
    let mut in_link = 0usize;
    let mut run: Option<(String, Range<usize>, bool)> = None;
    for (event, range) in parser.into_offset_iter() {
        if !matches!(event, Event::Text(_))
            && let Some(r) = run.take()
        {
            bare_urls(r, links, removed, &mut out);
        }
        if let Some((_, label, _)) = dropping.as_mut()
            && !matches!(event, Event::End(TagEnd::Link | TagEnd::Image))
        {
            *label = Some(match label.take() {
                Some(l) => l.start.min(range.start)..l.end.max(range.end),
                None => range.clone(),
            });
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                code.push(range.clone());
                if let CodeBlockKind::Fenced(info) = kind
                    && !plain_language(&info)
                {
                    // The info string follows the fence characters on the first line.
                    let first = &text[range.start..];
                    let indent = first.len() - first.trim_start_matches(' ').len();
                    let fence = first[indent..].chars().take_while(|c| *c == '`' || *c == '~').count();
                    let at = range.start + indent + fence;
                    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
                    out.push(Edit {
                        at,
                        end,
                        text: "text".into(),
                    });
                }
            }
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
                dest_url,
                ..
            }) => {
                let target = dest_url.split('#').next().unwrap_or("").trim();
                if target.is_empty() || resolves(target) {
                    out.push(insert(range.start, "\\"));
                } else {
                    removed.wikilinks.push(target.to_string());
                    dropping = Some((range, None, false));
                }
            }
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { .. },
                dest_url,
                ..
            }) => {
                let target = dest_url.split('#').next().unwrap_or("").trim();
                if !target.is_empty() && !resolves(target) {
                    removed.wikilinks.push(target.to_string());
                    dropping = Some((range, None, false));
                }
            }
            Event::Start(Tag::Link {
                link_type, dest_url, ..
            }) => {
                in_link += 1;
                if !links.allows(&dest_url) || matches!(link_type, LinkType::Email) {
                    removed.urls.push(dest_url.to_string());
                    let autolink = matches!(link_type, LinkType::Autolink | LinkType::Email);
                    dropping = Some((range, None, autolink));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                removed.urls.push(dest_url.to_string());
                dropping = Some((range, None, false));
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                in_link = in_link.saturating_sub(matches!(event, Event::End(TagEnd::Link)) as usize);
                if let Some((whole, label, autolink)) = dropping.take() {
                    let label = label.filter(|_| !autolink).map(|l| text[l].to_string());
                    out.push(Edit {
                        at: whole.start,
                        end: whole.end,
                        text: label.unwrap_or_default(),
                    });
                }
            }
            Event::FootnoteReference(_) => out.push(insert(range.start, "\\")),
            Event::Code(c) if inline_query(&c) => out.push(Edit {
                at: range.start,
                end: range.end,
                text: super::contain::passage(&c),
            }),
            Event::Text(t) => {
                let literal = text.get(range.clone()).is_some_and(|s| s == &*t);
                if literal && (t.contains("%%") || (math % 2 == 1 && t.contains("$$"))) {
                    for (i, _) in t.match_indices("%%") {
                        out.push(Edit {
                            at: range.start + i,
                            end: range.start + i + 2,
                            text: "%&#37;".into(),
                        });
                    }
                    if math % 2 == 1 {
                        for (i, _) in t.match_indices("$$") {
                            out.push(Edit {
                                at: range.start + i,
                                end: range.start + i + 2,
                                text: "$&#36;".into(),
                            });
                        }
                    }
                }
                let outside = in_link == 0 && dropping.is_none();
                // Brackets outside links: a `[label]` could resolve against the note's own
                // reference definitions.
                if literal && outside {
                    for (i, _) in t.match_indices('[') {
                        if !escaped(text, range.start + i) {
                            out.push(insert(range.start + i, "\\"));
                        }
                    }
                }
                // Consecutive text events (an entity is one of its own) are one run of text.
                if outside {
                    run = Some(match run.take() {
                        Some((mut s, r, lit)) if r.end == range.start => {
                            s.push_str(&t);
                            (s, r.start..range.end, lit && literal)
                        }
                        Some(previous) => {
                            bare_urls(previous, links, removed, &mut out);
                            (t.to_string(), range.clone(), literal)
                        }
                        None => (t.to_string(), range.clone(), literal),
                    });
                    continue;
                }
            }
            _ => {}
        }
    }
    if let Some(r) = run.take() {
        bare_urls(r, links, removed, &mut out);
    }
    // Definitions (links and footnotes), wherever they are, and callouts.
    for at in defs.into_iter().chain(definition_lines(text, &code)) {
        if !escaped(text, at) {
            out.push(insert(at, "\\"));
        }
    }
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
    out.sort_by_key(|e| (e.at, e.end));
    out.dedup_by_key(|e| (e.at, e.end));
    out
}

/// Whether the character at `at` is backslash-escaped (an odd run of backslashes before it).
fn escaped(text: &str, at: usize) -> bool {
    text[..at].bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// Where lines outside code that look like a definition (`[label]: …`, `[^1]: …`, behind any
/// quote or list markers) have their `[`.
pub(super) fn definition_lines(text: &str, code: &[Range<usize>]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if code.iter().any(|r| r.contains(&start)) {
            continue;
        }
        let mut rest = line;
        loop {
            let trimmed = rest.trim_start_matches([' ', '\t', '>']);
            let after_marker = trimmed
                .strip_prefix(['-', '*', '+'])
                .or_else(|| {
                    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
                    (digits > 0)
                        .then(|| trimmed[digits..].strip_prefix(['.', ')']))
                        .flatten()
                })
                .filter(|r| r.starts_with([' ', '\t']));
            match after_marker {
                Some(r) => rest = r,
                None => {
                    rest = trimmed;
                    break;
                }
            }
        }
        if rest.starts_with('[')
            && let Some(close) = rest.find("]:")
            && !rest[..close].contains('\n')
        {
            out.push(start + (line.len() - rest.len()));
        }
    }
    out
}

/// Bare URLs in a run of text (any `scheme://`): removed unless gathered.
fn bare_urls(
    (t, range, literal): (String, Range<usize>, bool),
    links: &Links,
    removed: &mut Removed,
    out: &mut Vec<Edit>,
) {
    let found = urls_in(&t);
    if found.iter().all(|u| links.allows(&t[u.clone()])) {
        return;
    }
    if literal {
        for u in found {
            let url = &t[u.clone()];
            if !links.allows(url) {
                removed.urls.push(url.to_string());
                out.push(Edit {
                    at: range.start + u.start,
                    end: range.start + u.end,
                    text: String::new(),
                });
            }
        }
        return;
    }
    // Entities or escapes made this URL: write the decoded text, without it, as text.
    let mut kept = String::new();
    let mut pos = 0;
    for u in found {
        kept.push_str(&t[pos..u.start]);
        if links.allows(&t[u.clone()]) {
            kept.push_str(&t[u.clone()]);
        } else {
            removed.urls.push(t[u.clone()].to_string());
        }
        pos = u.end;
    }
    kept.push_str(&t[pos..]);
    out.push(Edit {
        at: range.start,
        end: range.end,
        text: super::contain::passage(&kept),
    });
}

/// Ranges of `scheme://…` URLs in `t`, without trailing punctuation.
pub(super) fn urls_in(t: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = t[from..].find("://").map(|i| from + i) {
        let start = t[..i]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .last()
            .map(|(j, _)| j)
            .unwrap_or(i);
        let len = t[i..]
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`' | ')' | ']'))
            .unwrap_or(t.len() - i);
        let end = i + t[i..i + len]
            .trim_end_matches(['.', ',', ';', ':', '!', '?', '\''])
            .len();
        if start < i && end > i + 3 {
            out.push(start..end);
        }
        from = (i + len).max(i + 3);
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

/// At most `max_chars` characters of `markdown`, cut at the last blank line outside code in the
/// second half before the limit, else at the last line break, sentence end or space there:
/// `(kept, cut)`. What is kept is still to be made inert (a fence cut open is closed there).
pub fn cap(markdown: &str, max_chars: usize) -> (String, bool) {
    let Some((limit, _)) = markdown.char_indices().nth(max_chars) else {
        return (markdown.to_string(), false);
    };
    let head = &markdown[..limit];
    let code: Vec<Range<usize>> = Parser::new_ext(head, options())
        .into_offset_iter()
        .filter_map(|(e, r)| matches!(e, Event::Start(Tag::CodeBlock(_))).then_some(r))
        .collect();
    let late = |i: &usize| *i > limit / 2;
    let blank = head
        .match_indices("\n\n")
        .map(|(i, _)| i)
        .filter(|i| !code.iter().any(|r| r.contains(i)) && late(i))
        .last();
    let at = blank
        .or_else(|| head.rfind('\n').filter(late))
        .or_else(|| head.rfind(". ").map(|i| i + 1).filter(late))
        .or_else(|| head.rfind(' ').filter(late))
        .unwrap_or(limit);
    (head[..at].trim_end().to_string(), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contain::check;

    fn gathered() -> Links {
        Links::from_urls(["https://real.example/a", "https://real.example/b"])
    }

    fn resolves(t: &str) -> bool {
        matches!(t.to_lowercase().as_str(), "wild yeast" | "kombucha")
    }

    /// `input` made inert with the gathered links: the expected text and number removed; the
    /// result always passes the containment check.
    fn check_links(input: &str, expected: &str, expected_removed: usize) {
        let links = gathered();
        let (got, removed) = markdown(input, 3, &links, &resolves);
        assert_eq!(got, expected, "{input:?}");
        assert_eq!(removed.count(), expected_removed, "{input:?}: {removed:?}");
        check("Research", 2, &got, &links).unwrap_or_else(|e| panic!("{got:?}: {e}"));
    }

    #[test]
    fn citations() {
        check_links(
            "See [A](https://real.example/a).",
            "See [A](https://real.example/a).",
            0,
        );
        check_links(
            "See [A](https://real.example/a/#frag).",
            "See [A](https://real.example/a/#frag).",
            0,
        );
        check_links("See [Fake](https://invented.example/x).", "See Fake.", 1);
        check_links("![img](https://real.example/a) ok", "img ok", 1);
        check_links(
            "Bare https://invented.example/y, and https://real.example/b.",
            "Bare , and https://real.example/b.",
            1,
        );
        check_links("Auto <https://invented.example/z> link", "Auto  link", 1);
        check_links(
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], [[Imaginary]] and [[Ghost|boo]].",
            "Notes: [[Wild yeast]], [[Kombucha#SCOBY|tea]], Imaginary and boo.",
            2,
        );
        check_links("Embed ![[Nope]] here", "Embed Nope here", 1);
        check_links("Embed ![[Kombucha]] here", "Embed \\![[Kombucha]] here", 0);
        check_links("[not a link] and [x](", "\\[not a link] and \\[x](", 0);
        check_links(
            "Mixed [[Wild yeast]] [A](https://real.example/a) [B](http://evil/)",
            "Mixed [[Wild yeast]] [A](https://real.example/a) B",
            1,
        );
    }

    #[test]
    fn hostile_links() {
        // Reference definitions repoint the note's own links: escaped, whatever they define.
        check_links(
            "Text.\n\n[guide]: HTTPS://evil.example/guide\n",
            "Text.\n\n\\[guide]: \n",
            1,
        );
        check_links(
            "> [g]: https://real.example/a\n",
            "> \\[g]: https://real.example/a\n",
            0,
        );
        check_links("- [^1]: footnote\n", "- \\[^1]: footnote\n", 0);
        check_links(
            "See [guide][g].\n\n[g]: https://evil.example\n",
            "See guide.\n\n\\[g]: \n",
            1,
        );
        check_links(
            "![pixel][px]\n\n[px]: https://real.example/a\n",
            "pixel\n\n\\[px]: https://real.example/a\n",
            1,
        );
        // Entities and case do not smuggle a scheme past the check.
        check_links("[x](https&#58;//evil.example/p)", "x", 1);
        check_links("[x](HTTPS://REAL.example/a)", "[x](HTTPS://REAL.example/a)", 0);
        check_links("[x](javascript:alert(1))", "x", 1);
        // Autolinks of any scheme but gathered http(s) go.
        for bad in [
            "<javascript:alert(1)>",
            "<obsidian://open?vault=x&file=y>",
            "<file:///etc/passwd>",
            "<HTTPS://evil.example/>",
            "<ftp://evil.example/x>",
            "<someone@example.org>",
        ] {
            check_links(&format!("a {bad} b"), "a  b", 1);
        }
        check_links("a <HTTPS://real.example/a> b", "a <HTTPS://real.example/a> b", 0);
        check_links("Footnote[^1] here", "Footnote\\[^1] here", 0);
        check_links("text https&#58;//evil.example/x end", "text end", 1);
        check_links("obsidian://open?vault=x bare", " bare", 1);
    }

    #[test]
    fn script_blocks_are_inert() {
        check_links("```dataviewjs\ndv.el('b', 1)\n```", "```text\ndv.el('b', 1)\n```", 0);
        check_links("~~~ DataView\nLIST\n~~~", "~~~text\nLIST\n~~~", 0);
        check_links("```query\nsecret\n```", "```text\nsecret\n```", 0);
        check_links("```rust\nfn x() {}\n```", "```rust\nfn x() {}\n```", 0);
        check_links("run `$= dv.pages().length` now", "run \\$= dv.pages().length now", 0);
        check_links("run `= this.file.name` now", "run \\= this.file.name now", 0);
        check_links("plain `code` stays", "plain `code` stays", 0);
    }

    #[test]
    fn made_safe() {
        let check_case = |input: &str, expected: &str| {
            let got = markdown_without_urls(input, 3);
            assert_eq!(got, expected, "{input:?}");
            check("Research", 2, &got, &Links::none()).unwrap_or_else(|e| panic!("{got:?}: {e}"));
        };
        check_case("## Topic\ntext", "### Topic\ntext");
        check_case("# Big\n### Fine", "### Big\n### Fine");
        check_case("Line\n---\nafter", "Line\n\n---\nafter");
        check_case("Line\n===\nafter", "Line\n\n===\nafter");
        check_case("```rust\nfn x() {}\n", "```rust\nfn x() {}\n```");
        check_case("```\n## not a heading\n```", "```\n## not a heading\n```");
        check_case("#hashtag stays", "#hashtag stays");
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
        check_case("a\rb\r## c", "a\nb\n### c");
    }

    #[test]
    fn capped_at_a_block() {
        let text = format!(
            "{}\n\n{}\n\n```\n{}\n```\n",
            "a".repeat(50),
            "b".repeat(50),
            "c\n\nc".repeat(30)
        );
        let (kept, cut) = cap(&text, 150);
        assert!(cut);
        assert_eq!(kept, format!("{}\n\n{}", "a".repeat(50), "b".repeat(50)));
        assert_eq!(cap("short", 10), ("short".to_string(), false));
        // One long paragraph after a short one: cut at a sentence, not at the first break.
        let text = format!("Intro.\n\n{}", "A sentence here. ".repeat(100));
        let (kept, cut) = cap(&text, 1000);
        assert!(cut && kept.len() > 900 && kept.ends_with("here."), "{kept}");
    }
}
