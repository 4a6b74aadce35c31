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

pub(super) use crate::links::urls_in;
pub use crate::links::{Links, Removed, normalize_url};
pub(super) use crate::plugins::{inline_query, plain_language};

pub(super) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
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
                let hashes = head[indent..].chars().take_while(|c| *c == '#').count();
                // An ATX heading's hashes are followed by a space or the line's end; a setext
                // heading's text may begin with `#` too (`#A` over `=`).
                let atx = (1..=6).contains(&hashes)
                    && head[indent + hashes..]
                        .chars()
                        .next()
                        .is_none_or(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
                if atx {
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
                text: passage(&c),
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
        let at = start + (line.len() - rest.len());
        if opens_definition(&text[at..]) {
            out.push(at);
        }
    }
    out
}

/// Whether `text` starts with a definition's label, `[label]:` (CommonMark: at most 999
/// characters, across lines but not a blank one, escapes skipped, no unescaped `[` inside).
fn opens_definition(text: &str) -> bool {
    let Some(label) = text.strip_prefix('[') else {
        return false;
    };
    let mut chars = label.char_indices().take(1000).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => return false,
            ']' => return label[i + 1..].starts_with(':'),
            '\n' if label[i + 1..].trim_start_matches([' ', '\t', '\r']).starts_with('\n') => return false,
            _ => {}
        }
    }
    false
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
        text: passage(&kept),
    });
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

/// Text quoted from a note or a page, made inert on one line: it renders as the words it
/// holds and cannot make links, embeds, callouts, HTML, code or comments. URLs in it become
/// code, which no reader turns into a link.
pub fn passage(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let urls = urls_in(&one_line);
    let mut out = String::with_capacity(one_line.len() + 16);
    let mut next_url = urls.iter().peekable();
    let mut skip_to = 0;
    for (i, c) in one_line.char_indices() {
        if i < skip_to {
            continue;
        }
        if let Some(u) = next_url.next_if(|u| u.start == i) {
            out.push('`');
            out.push_str(&one_line[u.clone()].replace('`', ""));
            out.push('`');
            skip_to = u.end;
            continue;
        }
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

#[cfg(test)]
mod tests;
