//! scholia's own part of `## Research`: from its marker line (`<!-- scholia:research … -->`)
//! to its end line ([`END_MARKER`]). The section is the owner's: what they write in it, above
//! the part, below it or in subsections of their own, stays where it is when research runs
//! again. Only the part, and the question subsections deep search and Ask write, are
//! scholia's to replace.
//!
//! The marker carries a fingerprint of the part's words ([`words_of`]): a part whose words
//! changed since it was written holds the owner's edits, and is not replaced (the owner moves
//! them out, or deletes the part). Link targets and punctuation are not words, so a rename
//! that rewrites the part's links, or an editor that reformats it, is no edit.
//!
//! A part written before end lines existed runs from its marker to the first question
//! subsection or the section's end, as it was replaced then.

use std::ops::Range;

use pulldown_cmark::{Event, Tag, TagEnd};

use crate::lines::normalized;
use crate::parse::{self, Heading};
use crate::section::{self, SectionError};
use crate::stamp::{END_MARKER, QUESTION_MARKER, ResearchStamp, SECTION, SECTION_LEVEL, UNHASHED, hash};

/// scholia's part of a `## Research` section, as found in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// From the start of its marker line to the end of its end line, that line's break
    /// included; for a part without an end line, to the first question subsection after it
    /// or the section's end.
    pub range: Range<usize>,
    /// What lies between the marker line and the end line (the whole rest of `range` for a
    /// part without one).
    pub content: Range<usize>,
    pub stamp: ResearchStamp,
    /// Zero-based line of the marker.
    pub line: usize,
    /// Whether an end line closes it.
    pub closed: bool,
}

/// A line scholia writes to mark its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Marker {
    /// The research part's first line.
    Research(ResearchStamp),
    /// The research part's last line.
    ResearchEnd,
    /// An answer's first line, with the fingerprint of its words (empty in an answer written
    /// before it was kept).
    Answer(String),
    /// An answer's last line.
    AnswerEnd,
}

impl Marker {
    fn of(line: &str) -> Option<Marker> {
        let line = line.trim();
        if line == END_MARKER {
            return Some(Marker::ResearchEnd);
        }
        if line == ANSWER_END {
            return Some(Marker::AnswerEnd);
        }
        if let Some(words) = answer_words(line) {
            return Some(Marker::Answer(words));
        }
        ResearchStamp::parse(line).map(Marker::Research)
    }
}

/// The words fingerprint of an answer's marker line (`<!-- scholia:question words=… -->`, or
/// the bare [`QUESTION_MARKER`] of an older answer: empty).
fn answer_words(line: &str) -> Option<String> {
    if line == QUESTION_MARKER {
        return Some(String::new());
    }
    let inner = line.strip_prefix(ANSWER_PREFIX)?.strip_suffix(" -->")?;
    Some(inner.strip_prefix("words=")?.to_string())
}

const ANSWER_PREFIX: &str = "<!-- scholia:question ";
/// The line that ends an answer of deep search or Ask.
pub const ANSWER_END: &str = "<!-- /scholia:question -->";

/// The marker lines at the top level of `within` (not in code, a quote or a list): each
/// line's bytes, its line break included, and what it marks.
fn marker_lines(text: &str, within: &Range<usize>) -> Vec<(Range<usize>, Marker)> {
    let normal = normalized(text);
    let mut depth = 0usize;
    let mut found: Vec<(Range<usize>, Marker)> = Vec::new();
    for (event, range) in parse::events(&normal).1 {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_)) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition) => {
                depth = depth.saturating_sub(1)
            }
            Event::Html(_) if depth == 0 && range.start >= within.start && range.start < within.end => {
                let line = whole_line(text, range.start);
                if let Some(marker) = Marker::of(&text[line.clone()])
                    && found.last().is_none_or(|(r, _)| r.start != line.start)
                {
                    found.push((line, marker));
                }
            }
            _ => {}
        }
    }
    found
}

/// The line holding byte `at`, from its start to past its line break.
fn whole_line(text: &str, at: usize) -> Range<usize> {
    let start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let rest = &text.as_bytes()[at..];
    let end = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => at + i + 2,
        Some(i) => at + i + 1,
        None => text.len(),
    };
    start..end
}

/// scholia's part of the section `section` of `text` (its `## Research`), if it has one: the
/// first marker line at the top level, to the first end line after it.
pub(crate) fn locate(text: &str, section: &Range<usize>) -> Option<Part> {
    locate_in(text, section, &marker_lines(text, section))
}

/// [`locate`] among the section's marker lines, read already.
fn locate_in(text: &str, section: &Range<usize>, lines: &[(Range<usize>, Marker)]) -> Option<Part> {
    let (start, stamp) = lines.iter().find_map(|(r, m)| match m {
        Marker::Research(s) => Some((r.clone(), s.clone())),
        _ => None,
    })?;
    let end_line = lines
        .iter()
        .find(|(r, m)| *m == Marker::ResearchEnd && r.start >= start.end)
        .map(|(r, _)| r.clone());
    let line = crate::lines::LineIndex::new(text).line_of(start.start) as usize;
    let (range, content, closed) = match end_line {
        Some(end) => (start.start..end.end, start.end..end.start, true),
        None => {
            // (Read only for such a part: the note is parsed once more.)
            let end = parse::headings(text)
                .iter()
                .filter(|h| {
                    h.top_level
                        && h.level == SECTION_LEVEL + 1
                        && h.section.start >= start.end
                        && h.section.start < section.end
                })
                .find(|h| is_question(&text[h.section.clone()]))
                .map_or(section.end, |h| h.section.start);
            (start.start..end, start.end..end, false)
        }
    };
    Some(Part {
        range,
        content,
        stamp,
        line,
        closed,
    })
}

/// The owner's words and scholia's in a note with one `## Research`: the note without
/// scholia's parts (its research part, and each answer from its `###` heading to its end
/// line), and those parts; what scholia wrote is searchable but never taken for the owner's
/// words. A section that holds nothing of the owner's goes whole, heading and all, and is
/// scholia's, as before the owner's text in it was kept. `None` without one such section.
pub fn split_research(text: &str) -> Option<(String, String)> {
    let section = section::find(text, SECTION, SECTION_LEVEL).ok()??;
    let lines = marker_lines(text, &section);
    let mut parts: Vec<Range<usize>> = locate_in(text, &section, &lines).map(|p| p.range).into_iter().collect();
    let headings = parse::headings(text);
    for h in headings.iter().filter(|h| {
        h.top_level && h.level == SECTION_LEVEL + 1 && h.section.start > section.start && h.section.start < section.end
    }) {
        if let Some(answer) = answer_in(text, &h.section, &lines) {
            parts.push(h.section.start..answer.end.map_or(h.section.end, |e| e.end));
        }
    }
    parts.sort_by_key(|r| r.start);
    // The owner's text in the section: what its parts leave past the heading line.
    let mut at = whole_line(text, section.start).end;
    let mut owner_wrote = false;
    for part in &parts {
        owner_wrote |= part.start > at && !text[at..part.start].trim().is_empty();
        at = at.max(part.end);
    }
    owner_wrote |= at < section.end && !text[at..section.end].trim().is_empty();
    if !owner_wrote {
        return Some((
            format!("{}{}", &text[..section.start], &text[section.end..]),
            text[section].to_string(),
        ));
    }
    let mut own = String::with_capacity(text.len());
    let mut research = String::new();
    let mut at = 0;
    for part in parts.iter().filter(|p| p.start >= section.start) {
        if part.start < at {
            continue;
        }
        own.push_str(&text[at..part.start]);
        research.push_str(&text[part.clone()]);
        research.push('\n');
        at = part.end;
    }
    own.push_str(&text[at..]);
    Some((own, research))
}

/// The owner's words: `text` without scholia's parts of `## Research` ([`split_research`]; as
/// it is when it has no such section, or more than one).
pub fn owner_text(text: String) -> String {
    match split_research(&text) {
        Some((own, _)) => own,
        None => text,
    }
}

/// `text` with the answer `body` under `### heading` in `## Research`: in place of the answer
/// there, from its heading to its end line (what the owner wrote after that line stays), or
/// appended at the section's end. Refused as [`answerable`] says.
pub(crate) fn write_answer(text: &str, heading: &str, body: &str) -> Result<String, SectionError> {
    let marked = format!(
        "{ANSWER_PREFIX}words={} -->\n{}\n\n{ANSWER_END}\n",
        words_of(body.trim()),
        body.trim()
    );
    let Some(AnswerAt { sub, replaced }) = answer_at(text, heading)? else {
        return section::upsert_subsection(text, SECTION, SECTION_LEVEL, heading, &marked);
    };
    // Rendered where it was, in the line endings there.
    let eol = section::eol_at(text, sub.start);
    let mut block = section::render(SECTION_LEVEL + 1, heading, &marked, eol);
    if replaced.end == sub.end && replaced.end < text.len() {
        block.push_str(eol);
    }
    Ok(format!("{}{block}{}", &text[..replaced.start], &text[replaced.end..]))
}

/// Whether an answer under `### heading` may be written into `text`: refused when a
/// subsection of that heading is the owner's ([`SectionError::NotScholias`]), or when the
/// words of the answer there changed since it was written ([`SectionError::Edited`]).
pub fn answerable(text: &str, heading: &str) -> Result<(), SectionError> {
    answer_at(text, heading).map(|_| ())
}

/// The answer a subsection holds.
struct Answer {
    /// Its marker line: the first line after the heading that is not blank.
    marker: Range<usize>,
    /// The fingerprint its marker keeps (empty for an answer written before it was kept).
    kept: String,
    /// Its end line, if it has one.
    end: Option<Range<usize>>,
}

/// The answer of scholia's the subsection `sub` holds, among the marker lines `lines`; `None`
/// for a subsection of the owner's.
fn answer_in(text: &str, sub: &Range<usize>, lines: &[(Range<usize>, Marker)]) -> Option<Answer> {
    // The lines are in the note's order: found by halves, then read to the subsection's end
    // (a note of many answers is read once, not once per subsection).
    let from = lines.partition_point(|(r, _)| r.start < sub.start);
    let mut within = lines[from..].iter().take_while(|(r, _)| r.start < sub.end);
    let (marker, kept) = match within.next()? {
        (r, Marker::Answer(kept)) => (r.clone(), kept.clone()),
        _ => return None,
    };
    if !text[sub.start..marker.start]
        .lines()
        .skip(1)
        .all(|l| l.trim().is_empty())
    {
        return None;
    }
    let end = within.find(|(_, m)| *m == Marker::AnswerEnd).map(|(r, _)| r.clone());
    Some(Answer { marker, kept, end })
}

/// A subsection holding an answer, and what of it a new answer replaces.
struct AnswerAt {
    sub: Range<usize>,
    /// From its heading to the answer's end line, or the whole subsection for an answer
    /// written before end lines.
    replaced: Range<usize>,
}

/// The subsection `### heading` of `## Research` and what of it a new answer replaces, if
/// there is one; refused as [`answerable`] says.
fn answer_at(text: &str, heading: &str) -> Result<Option<AnswerAt>, SectionError> {
    let Some((sub, line)) = section::subsection(text, SECTION, SECTION_LEVEL, heading)? else {
        return Ok(None);
    };
    let Some(Answer { marker, kept, end }) = answer_in(text, &sub, &marker_lines(text, &sub)) else {
        return Err(SectionError::NotScholias {
            heading: heading.trim().to_string(),
            line: line as usize + 1,
        });
    };
    let content = marker.end..end.as_ref().map_or(sub.end, |e| e.start);
    if !kept.is_empty() && kept != words_of(&text[content]) {
        return Err(SectionError::Edited {
            what: format!("the answer scholia wrote under `### {}`", heading.trim()),
            line: line as usize + 1,
            how: format!("move your text below the line `{ANSWER_END}`, or delete the answer with its heading"),
        });
    }
    let replaced = sub.start..end.map_or(sub.end, |e| e.end);
    Ok(Some(AnswerAt { sub, replaced }))
}

/// Where a first part goes in a section that has none: after the owner's text under the
/// heading, before the section's first subsection (the owner's, or a question), or at its end.
pub(crate) fn insertion_point(section: &Range<usize>, headings: &[Heading]) -> usize {
    headings
        .iter()
        .filter(|h| {
            h.top_level && h.level > SECTION_LEVEL && h.section.start > section.start && h.section.start < section.end
        })
        .map(|h| h.section.start)
        .min()
        .unwrap_or(section.end)
}

/// Whether a subsection (heading line first) was written by deep search or Ask.
pub(crate) fn is_question(sub: &str) -> bool {
    sub.lines()
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| answer_words(l.trim()).is_some())
}

/// The fingerprint of a part's words: its letters and digits, lower-cased, outside link
/// targets (`[[…]]` and a Markdown link's `(…)`), hashed. A rename rewriting the links, line
/// endings, wrapping, emphasis or list markers an editor changes leave it as it was; a word
/// the owner adds or takes out does not.
pub(crate) fn words_of(content: &str) -> String {
    let mut kept = String::with_capacity(content.len());
    let mut rest = content;
    // Whether a closer is still ahead: once one is not, it is never looked for again (a
    // megabyte of `[[` is read once, not once per bracket).
    let (mut wikilinks_close, mut targets_close) = (true, true);
    while let Some(c) = rest.chars().next() {
        let closing = |open: bool, close: &str, ahead: &mut bool| {
            if !open || !*ahead {
                return None;
            }
            let found = rest.find(close).map(|i| i + close.len());
            *ahead = found.is_some();
            found
        };
        let skip_to = closing(rest.starts_with("[["), "]]", &mut wikilinks_close)
            .or_else(|| closing(rest.starts_with("]("), ")", &mut targets_close));
        if let Some(to) = skip_to {
            rest = &rest[to..];
            continue;
        }
        if c.is_alphanumeric() {
            kept.extend(c.to_lowercase());
        }
        rest = &rest[c.len_utf8()..];
    }
    hash(&kept)
}

/// `text` with `part` (its lines, marker first and end line last) as scholia's part of
/// `## Research`: in place of the part the section has, or, in a section without one, after
/// the owner's text under its heading; in a new section at the note's end when it has none.
/// Refused when the part's words changed since it was written ([`SectionError::Edited`]).
pub(crate) fn write(text: &str, part: &str) -> Result<String, SectionError> {
    let Some(range) = section::find(text, SECTION, SECTION_LEVEL)? else {
        return section::upsert(text, SECTION, SECTION_LEVEL, part);
    };
    let eol = section::eol_at(text, range.start);
    let block = section::in_line_endings(part, eol);
    Ok(match locate(text, &range) {
        Some(found) => {
            if edited(text, &found) {
                return Err(edited_error(&found));
            }
            if found.closed {
                format!("{}{block}{}", &text[..found.range.start], &text[found.range.end..])
            } else {
                section::splice(text, found.range, block, eol)
            }
        }
        None => {
            let at = insertion_point(&range, &parse::headings(text));
            let content_end = range.start + text[range.start..at].trim_end_matches(['\n', '\r']).len();
            section::splice(text, content_end..at, format!("{eol}{eol}{block}"), eol)
        }
    })
}

/// Whether the owner changed the words of scholia's part since it was written (a part from
/// before its words were kept is taken as written).
fn edited(text: &str, part: &Part) -> bool {
    let kept = &part.stamp.words;
    !kept.is_empty() && *kept != UNHASHED && *kept != words_of(&text[part.content.clone()])
}

fn edited_error(part: &Part) -> SectionError {
    SectionError::Edited {
        what: "the research scholia wrote under `## Research`".into(),
        line: part.line + 1,
        how: format!(
            "move your text above the line `<!-- scholia:research …` or below `{END_MARKER}`, or delete the research from the one line to the other"
        ),
    }
}

/// Whether research may be written into `text`, asked before it runs: one `## Research` at
/// most, its part holding no edit of the owner's, and a note that can take a new section at
/// its end when it has none.
pub fn replaceable(text: &str) -> Result<(), SectionError> {
    let Some(range) = section::find(text, SECTION, SECTION_LEVEL)? else {
        return section::open_at_end(text).map_or(Ok(()), Err);
    };
    match locate(text, &range) {
        Some(part) if edited(text, &part) => Err(edited_error(&part)),
        _ => Ok(()),
    }
}

/// The first line of what scholia's part says (after its marker), if the note has a part.
pub(crate) fn first_line(text: &str) -> Result<Option<&str>, SectionError> {
    let Some(range) = section::find(text, SECTION, SECTION_LEVEL)? else {
        return Ok(None);
    };
    Ok(locate(text, &range).map(|part| {
        text[part.content]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && ResearchStamp::parse(l).is_none())
            .unwrap_or("")
    }))
}

impl ResearchStamp {
    /// The stamp of `text`'s `## Research` (its part's marker line, wherever the owner's text
    /// puts it in the section), with where its section starts.
    pub fn of(text: &str) -> Option<(ResearchStamp, usize)> {
        let range = section::find(text, SECTION, SECTION_LEVEL).ok()??;
        let part = locate(text, &range)?;
        Some((part.stamp, range.start))
    }
}

/// Fills the marker's hashes in `new`: of what precedes the section there, and of the part's
/// words.
pub(crate) fn seal(new: String) -> String {
    let Some(section) = section::find(&new, SECTION, SECTION_LEVEL).ok().flatten() else {
        return new;
    };
    let Some(part) = locate(&new, &section) else {
        return new;
    };
    let marker = part.range.start..part.content.start;
    let mut out = new.clone();
    for (key, digest) in [
        ("above=", hash(&new[..section.start])),
        ("words=", words_of(&new[part.content.clone()])),
    ] {
        if let Some(at) = out[marker.clone()].find(&format!("{key}{UNHASHED}")) {
            let at = marker.start + at + key.len();
            out.replace_range(at..at + UNHASHED.len(), &digest);
        }
    }
    out
}

#[cfg(test)]
mod tests;
