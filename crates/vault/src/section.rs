//! The `## Research` section editor: find, replace or append one section while every byte
//! outside it stays exactly as it was.
//!
//! A section is a top-level heading of the given level whose text matches case-insensitively,
//! and runs to the next top-level heading of the same or a higher level. Headings inside code
//! fences, block quotes or lists do not count (the parser never reports them as top-level).

use std::ops::Range;

use super::lines::{dominant_eol, eol_of_line, trailing_line_breaks};
use super::parse::{self, Heading};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SectionError {
    #[error(
        "the note has {count} `{marker} {name}` headings (lines {lines}); keep one and run again, nothing was written"
    )]
    Duplicate {
        marker: String,
        name: String,
        count: usize,
        lines: String,
    },
    #[error(
        "the note ends inside {what} opened on line {line}, which would hide a section appended after it; close it and run again, nothing was written"
    )]
    OpenAtEnd { what: &'static str, line: usize },
    /// The words of scholia's part of `## Research` changed since it was written: the owner
    /// wrote in it, and research again would replace what they wrote.
    #[error(
        "{what} (line {line}) was edited since; running it again would replace those edits: {how}, and run again; nothing was written"
    )]
    Edited { what: String, line: usize, how: String },
    /// A subsection of `## Research` the owner wrote has the heading an answer would take.
    #[error(
        "`### {heading}` under `## Research` (line {line}) is not an answer scholia wrote, and the answer would replace it; rename it and run again, nothing was written"
    )]
    NotScholias { heading: String, line: usize },
    /// An agent's edit that cannot be made (a stale hash, a missing heading, content that
    /// would escape its section), as every surface shows it.
    #[error(transparent)]
    Refused(scholia_base::Error),
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

fn matching<'h>(headings: &'h [Heading], name: &str, level: u8, within: &Range<usize>) -> Vec<&'h Heading> {
    headings
        .iter()
        .filter(|h| {
            h.top_level
                && h.level == level
                && same_name(&h.text, name)
                && h.section.start >= within.start
                && h.section.start < within.end.max(within.start + 1)
        })
        .collect()
}

fn one<'h>(found: Vec<&'h Heading>, name: &str, level: u8) -> Result<Option<&'h Heading>, SectionError> {
    match found.as_slice() {
        [] => Ok(None),
        [h] => Ok(Some(h)),
        many => Err(SectionError::Duplicate {
            marker: "#".repeat(level as usize),
            name: name.to_string(),
            count: many.len(),
            lines: many
                .iter()
                .map(|h| (h.line + 1).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The byte range of the section `name` at `level`, if the note has exactly one.
pub fn find(text: &str, name: &str, level: u8) -> Result<Option<Range<usize>>, SectionError> {
    let headings = parse::headings(text);
    Ok(one(matching(&headings, name, level, &(0..text.len())), name, level)?.map(|h| h.section.clone()))
}

/// The byte range of the block that `^id` marks (what `![[Note#^id]]` embeds), without the
/// marker: the paragraph or list item whose last line ends with ` ^id`, or, for a marker on a
/// line of its own, the lines just above it (a quote, a callout, a table, a list). `None` when
/// no line ends with the marker, or `id` is empty.
pub fn block(text: &str, id: &str) -> Option<Range<usize>> {
    // `![[Note#^]]` names no block (a bare `^` would match any line ending with one).
    if id.trim().is_empty() {
        return None;
    }
    let marker = format!("^{id}");
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        lines.push(at..at + line.trim_end_matches(['\n', '\r']).len());
        at += line.len();
    }
    let blank = |r: &Range<usize>| text[r.clone()].trim().is_empty();
    let marked = lines.iter().position(|r| {
        text[r.clone()]
            .trim_end()
            .strip_suffix(&marker)
            .is_some_and(|before| before.is_empty() || before.ends_with(char::is_whitespace))
    })?;
    let line = text[lines[marked].clone()].trim_end();
    let kept = line[..line.len() - marker.len()].trim_end();
    let (last, end) = match kept.trim_start().is_empty() {
        true => {
            let last = (0..marked).rev().find(|&j| !blank(&lines[j]))?;
            (last, lines[last].end)
        }
        false => (marked, lines[marked].start + kept.len()),
    };
    let item = |l: &str| {
        let l = l.trim_start();
        ["- ", "* ", "+ "].iter().any(|m| l.starts_with(m))
            || l.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut first = last;
    if !(last == marked && item(&text[lines[marked].clone()])) {
        while first > 0 && !blank(&lines[first - 1]) {
            first -= 1;
        }
    }
    Some(lines[first].start..end)
}

/// The body of the section (without its heading line), if present.
pub fn body<'t>(text: &'t str, name: &str, level: u8) -> Result<Option<&'t str>, SectionError> {
    Ok(find(text, name, level)?.map(|r| {
        let section = &text[r.clone()];
        match eol_of_line(text, r.start) {
            Some(eol) => section.split_once(eol).map(|(_, rest)| rest).unwrap_or(""),
            None => "",
        }
    }))
}

/// `heading` + blank line + `body`, ending with a line break, in the note's line endings.
pub(crate) fn render(level: u8, name: &str, body: &str, eol: &str) -> String {
    let mut out = format!("{} {}{eol}{eol}", "#".repeat(level as usize), name.trim());
    out.push_str(&in_line_endings(body, eol));
    out
}

/// `body`'s lines, blank lines at either end left out, each ended by `eol`: every terminator
/// of the body (a lone `\r` is one too) becomes the note's.
pub(crate) fn in_line_endings(body: &str, eol: &str) -> String {
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(body.len() + 16);
    for line in body.trim_matches('\n').lines() {
        out.push_str(line);
        out.push_str(eol);
    }
    out
}

/// Replaces `range` of `text` with `block`, keeping a blank line before whatever follows.
pub(crate) fn splice(text: &str, range: Range<usize>, mut block: String, eol: &str) -> String {
    if range.end < text.len() {
        block.push_str(eol);
    }
    let mut out = String::with_capacity(text.len() + block.len());
    out.push_str(&text[..range.start]);
    out.push_str(&block);
    out.push_str(&text[range.end..]);
    out
}

/// Appends `block` at the end of `text[..at]`, separated from what precedes it by a blank line.
fn append_at(text: &str, at: usize, block: &str, eol: &str) -> String {
    let head = &text[..at];
    let mut out = String::with_capacity(text.len() + block.len() + 4);
    out.push_str(head);
    if !head.is_empty() {
        if !head.ends_with(['\n', '\r']) {
            out.push_str(eol);
        }
        if !ends_with_blank_line(&out) {
            out.push_str(eol);
        }
    }
    out.push_str(block);
    if at < text.len() {
        out.push_str(eol);
    }
    out.push_str(&text[at..]);
    out
}

fn ends_with_blank_line(s: &str) -> bool {
    let trimmed = s.trim_end_matches(['\n', '\r']);
    trimmed.is_empty() || trailing_line_breaks(s) >= 2
}

/// The line ending of the line starting at `at`: new text follows the lines it replaces, so a
/// second run over a note with mixed endings writes exactly what the first did.
pub(crate) fn eol_at(text: &str, at: usize) -> &'static str {
    eol_of_line(text, at).unwrap_or_else(|| dominant_eol(text))
}

/// The line ending of the note's last terminated line, for text appended at its end.
fn eol_at_end(text: &str) -> &'static str {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    if trimmed.len() == text.len() {
        return dominant_eol(text);
    }
    eol_of_line(text, trimmed.len()).unwrap_or("\n")
}

/// Why a section appended at the end of `text` would not be seen: the note ends inside a
/// block that swallows it (a code fence, an HTML block or comment, an Obsidian `%%` comment or
/// a `$$` math block). The answer comes from the parser itself: a probe heading is appended and
/// looked for.
pub fn open_at_end(text: &str) -> Option<SectionError> {
    use pulldown_cmark::{Event, Tag, TagEnd};
    let eol = eol_at_end(text);
    let probed = append_at(text, text.len(), &format!("## Scholia probe{eol}"), eol);
    let probed = super::lines::normalized(&probed);
    let probe_at = text.len();
    let (mut seen, mut swallowed) = (false, None);
    let (mut in_code, mut comment, mut math) = (false, None::<usize>, None::<usize>);
    let toggle = |open: Option<usize>, at: usize| if open.is_some() { None } else { Some(at) };
    for (event, range) in parse::events(&probed).1 {
        match event {
            Event::Start(Tag::Heading { .. }) if range.start >= probe_at => seen = true,
            Event::Start(Tag::CodeBlock(_)) => {
                in_code = true;
                if range.end > probe_at {
                    swallowed = Some(("a code block", range.start));
                }
            }
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Start(Tag::HtmlBlock) if range.end > probe_at => {
                swallowed = Some(("an HTML block or comment", range.start));
            }
            Event::Text(t) if !in_code && range.start < probe_at => {
                for _ in t.matches("%%") {
                    comment = toggle(comment, range.start);
                }
                for _ in t.matches("$$") {
                    math = toggle(math, range.start);
                }
            }
            _ => {}
        }
    }
    let lines = super::lines::LineIndex::new(text);
    let open = |what: &'static str, at: usize| SectionError::OpenAtEnd {
        what,
        line: lines.line_of(at) as usize + 1,
    };
    if !seen {
        let (what, at) = swallowed.unwrap_or(("a block", text.len()));
        return Some(open(what, at));
    }
    comment
        .map(|at| open("an Obsidian comment (`%%`)", at))
        .or_else(|| math.map(|at| open("a math block (`$$`)", at)))
}

/// Appends a new section at the end of `text`, unless the note ends inside an open block.
fn append_section(text: &str, block: impl FnOnce(&str) -> String) -> Result<String, SectionError> {
    if let Some(e) = open_at_end(text) {
        return Err(e);
    }
    let eol = eol_at_end(text);
    Ok(append_at(text, text.len(), &block(eol), eol))
}

/// Replaces the section `name` at `level` with `body`, or appends it at the end of the note.
pub fn upsert(text: &str, name: &str, level: u8, body: &str) -> Result<String, SectionError> {
    match find(text, name, level)? {
        Some(range) => {
            let eol = eol_at(text, range.start);
            Ok(splice(text, range, render(level, name, body, eol), eol))
        }
        None => append_section(text, |eol| render(level, name, body, eol)),
    }
}

/// The subsection `child` (level `level + 1`) of the section `parent` (level `level`): its
/// byte range and zero-based line, if the note has exactly one of each.
pub fn subsection(
    text: &str,
    parent: &str,
    level: u8,
    child: &str,
) -> Result<Option<(Range<usize>, u32)>, SectionError> {
    let headings = parse::headings(text);
    let Some(parent_heading) = one(matching(&headings, parent, level, &(0..text.len())), parent, level)? else {
        return Ok(None);
    };
    let found = one(
        matching(&headings, child, level + 1, &parent_heading.section),
        child,
        level + 1,
    )?;
    Ok(found.map(|h| (h.section.clone(), h.line)))
}

/// Inside the section `parent` (level `level`), replaces or appends the subsection `child`
/// (level `level + 1`). Creates the parent section when the note has none.
pub fn upsert_subsection(text: &str, parent: &str, level: u8, child: &str, body: &str) -> Result<String, SectionError> {
    let headings = parse::headings(text);
    let Some(parent_heading) = one(matching(&headings, parent, level, &(0..text.len())), parent, level)? else {
        return append_section(text, |eol| {
            let mut whole = render(level, parent, "", eol);
            whole.push_str(&render(level + 1, child, body, eol));
            whole
        });
    };
    let within = parent_heading.section.clone();
    let eol = eol_at(text, within.start);
    let block = render(level + 1, child, body, eol);
    let children = matching(&headings, child, level + 1, &within);
    match one(children, child, level + 1)? {
        Some(h) => Ok(splice(text, h.section.clone(), block, eol)),
        None => {
            // The new subsection follows the parent's last non-blank line; the blank lines
            // after it belong to the parent section and are normalised to one.
            let content_end = within.start + text[within.clone()].trim_end_matches(['\n', '\r']).len();
            let mut insert = format!("{eol}{eol}");
            insert.push_str(&block);
            Ok(splice(text, content_end..within.end, insert, eol))
        }
    }
}

/// The smallest single replacement turning `old` into `new`: the byte range of `old` to replace
/// and the text to put there (so an editor edit touches only what changed).
pub fn minimal_edit(old: &str, new: &str) -> (Range<usize>, String) {
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    (prefix..old.len() - suffix, new[prefix..new.len() - suffix].to_string())
}

impl scholia_base::Coded for SectionError {
    fn code(&self) -> &'static str {
        match self {
            SectionError::Duplicate { .. } => "DUPLICATE_SECTION",
            SectionError::OpenAtEnd { .. } => "OPEN_BLOCK_AT_END",
            SectionError::Edited { .. } => "RESEARCH_EDITED",
            SectionError::NotScholias { .. } => "NOT_SCHOLIAS",
            SectionError::Refused(e) => e.code,
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            SectionError::Refused(e) => e.kind,
            _ => scholia_base::ErrorKind::Conflict,
        }
    }
}

#[cfg(test)]
mod tests;
