//! Edits an agent asks for, as text: the body under one heading replaced, appended to or
//! prepended to, or front-matter fields set. Each stays inside its target: the new text may
//! not hold a heading that would end the section or leave a block open, and after the edit
//! every heading outside the target is where it was (checked, not assumed).

use std::ops::Range;

use serde_json::{Map, Value};

use crate::parse::{self, Heading};
use crate::section;

/// The longest text an edit may write (characters).
pub const MAX_CONTENT_CHARS: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Replace,
    Append,
    Prepend,
}

impl std::str::FromStr for Mode {
    type Err = NoteEditError;
    fn from_str(s: &str) -> Result<Mode, NoteEditError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "replace" => Ok(Mode::Replace),
            "append" => Ok(Mode::Append),
            "prepend" => Ok(Mode::Prepend),
            other => Err(NoteEditError::Invalid(format!(
                "mode: `{other}` is not valid; valid: replace, append, prepend"
            ))),
        }
    }
}

/// One heading of a note's outline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct OutlineEntry {
    pub level: u8,
    pub heading: String,
    /// 1-based line of the heading.
    pub line: u32,
    /// Characters of its section (its subsections included).
    pub chars: usize,
}

/// The headings of `text` that sections are made of (not those nested in lists or quotes).
pub fn outline(text: &str) -> Vec<OutlineEntry> {
    parse::headings(text)
        .into_iter()
        .filter(|h| h.top_level)
        .map(|h| OutlineEntry {
            level: h.level,
            chars: text[h.section.clone()].chars().count(),
            line: h.line + 1,
            heading: h.text,
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteEditError {
    #[error(
        "the note changed since it was read: its hash is now {current}, not {expected}; read it again and retry with expected_hash {current}"
    )]
    Conflict { expected: String, current: String },
    #[error("heading: no heading `{heading}` in the note; its headings: {headings}")]
    NoHeading { heading: String, headings: String },
    #[error("heading: `{heading}` matches {found}; give its level too (e.g. `### {heading}`) or change one")]
    Duplicate { heading: String, found: String },
    #[error("content: {0}; nothing was written")]
    Escapes(String),
    /// Appending to a section that runs to the end of a note that ends inside an open block.
    #[error("{0}")]
    OpenAtEnd(String),
    #[error("{0}")]
    Invalid(String),
}

impl scholia_base::Coded for NoteEditError {
    fn code(&self) -> &'static str {
        match self {
            NoteEditError::Conflict { .. } => "CONFLICT",
            NoteEditError::NoHeading { .. } => "HEADING_NOT_FOUND",
            NoteEditError::Duplicate { .. } => "DUPLICATE_HEADING",
            NoteEditError::Escapes(_) => "INVALID_CONTENT",
            NoteEditError::OpenAtEnd(_) => "OPEN_BLOCK_AT_END",
            NoteEditError::Invalid(_) => "INVALID_INPUT",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            NoteEditError::Conflict { .. } => scholia_base::ErrorKind::Conflict,
            _ => scholia_base::ErrorKind::InvalidInput,
        }
    }
}

/// The content hash every read returns and every replacing edit must name.
pub fn hash(text: &str) -> String {
    crate::stamp::hash(text)
}

/// `Err(Conflict)` unless `text` is what `expected` was computed from.
pub fn check_hash(text: &str, expected: &str) -> Result<(), NoteEditError> {
    let current = hash(text);
    if current != expected.trim() {
        return Err(NoteEditError::Conflict {
            expected: expected.trim().to_string(),
            current,
        });
    }
    Ok(())
}

/// The heading `wanted` names (`Setup`, or `## Setup` for that level): exact text first, then
/// any case; one or an error listing what there is.
pub fn find_heading(text: &str, wanted: &str) -> Result<Heading, NoteEditError> {
    let trimmed = wanted.trim();
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    let (level, name) = match hashes {
        1..=6 if trimmed[hashes..].starts_with(' ') => (Some(hashes as u8), trimmed[hashes..].trim()),
        _ => (None, trimmed),
    };
    if name.is_empty() {
        return Err(NoteEditError::Invalid(
            "heading: empty; give a heading of the note".into(),
        ));
    }
    let headings: Vec<Heading> = parse::headings(text).into_iter().filter(|h| h.top_level).collect();
    let at_level = |h: &&Heading| level.is_none_or(|l| h.level == l);
    let exact: Vec<&Heading> = headings.iter().filter(at_level).filter(|h| h.text == name).collect();
    let found = if exact.is_empty() {
        let lower = name.to_lowercase();
        headings
            .iter()
            .filter(at_level)
            .filter(|h| h.text.to_lowercase() == lower)
            .collect()
    } else {
        exact
    };
    let show = |h: &Heading| format!("`{} {}` (line {})", "#".repeat(h.level as usize), h.text, h.line + 1);
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(NoteEditError::NoHeading {
            heading: wanted.trim().to_string(),
            headings: if headings.is_empty() {
                "none (add one, or edit the front matter)".into()
            } else {
                headings.iter().map(show).collect::<Vec<_>>().join(", ")
            },
        }),
        many => Err(NoteEditError::Duplicate {
            heading: name.to_string(),
            found: format!(
                "{} headings: {}",
                many.len(),
                many.iter().map(|h| show(h)).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

/// `text` with the body under `heading` replaced, appended to or prepended to by `content`.
pub fn edit_section(text: &str, heading: &str, mode: Mode, content: &str) -> Result<String, NoteEditError> {
    let h = find_heading(text, heading)?;
    let eol = crate::lines::dominant_eol(text);
    let content = contained(&h, content)?;
    let content = content.replace("\r\n", "\n").replace('\n', eol);
    // The body: after the heading's line (its lines: a setext heading has two), to the
    // section's end.
    let line_end = h.body_start.min(text.len());
    let body = line_end..h.section.end.max(line_end);
    if mode == Mode::Append
        && body.end == text.len()
        && let Some(open) = section::open_at_end(text)
    {
        return Err(NoteEditError::OpenAtEnd(open.to_string()));
    }
    let old = &text[body.clone()];
    let more_follows = body.end < text.len();
    let tail = if more_follows {
        format!("{eol}{eol}")
    } else {
        eol.to_string()
    };
    let new_body = match mode {
        Mode::Replace if content.is_empty() => {
            if more_follows {
                eol.to_string()
            } else {
                String::new()
            }
        }
        Mode::Replace => format!("{eol}{content}{tail}"),
        Mode::Append => {
            let kept = old.trim_end_matches(['\n', '\r', ' ', '\t']);
            if kept.trim().is_empty() {
                format!("{eol}{content}{tail}")
            } else {
                format!("{kept}{eol}{eol}{content}{tail}")
            }
        }
        Mode::Prepend => {
            let rest = old.trim_start_matches(['\n', '\r']);
            if rest.trim().is_empty() {
                format!("{eol}{content}{tail}")
            } else {
                format!("{eol}{content}{eol}{eol}{rest}")
            }
        }
    };
    // A note without a final line break gains one before the new body.
    let mut new = String::with_capacity(text.len() + new_body.len() + 2);
    new.push_str(&text[..body.start]);
    if !new.ends_with(['\n', '\r']) {
        new.push_str(eol);
    }
    new.push_str(&new_body);
    new.push_str(&text[body.end..]);
    keeps_outline(text, &new, &h, body)?;
    // A note whose `---` at byte 0 is never closed has no front matter; a `---` line written
    // below would close it and turn the lines between into metadata.
    let front = |t: &str| crate::frontmatter::locate(t).map(|(r, _, _)| r);
    if front(text) != front(&new) {
        return Err(NoteEditError::Escapes(
            "a line of it (`---`, `...` or `+++`) would close the front matter the note leaves open on line 1, and change how its metadata is read; write `***` for a rule".into(),
        ));
    }
    Ok(new)
}

/// The content, refused when it would not stay under `h`: a heading at `h`'s level or above,
/// a block it leaves open, or more than [`MAX_CONTENT_CHARS`].
fn contained(h: &Heading, content: &str) -> Result<String, NoteEditError> {
    let chars = content.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(NoteEditError::Escapes(format!(
            "{chars} characters is more than {MAX_CONTENT_CHARS}"
        )));
    }
    let content = content.trim_matches(['\n', '\r']);
    let content = crate::lines::normalized(content).into_owned();
    for inner in parse::headings(&content).iter().filter(|x| x.top_level) {
        if inner.level <= h.level {
            return Err(NoteEditError::Escapes(format!(
                "line {} is a level-{} heading (`{} {}`), which would end the section `{} {}`; use level {} or deeper",
                inner.line + 1,
                inner.level,
                "#".repeat(inner.level as usize),
                inner.text,
                "#".repeat(h.level as usize),
                h.text,
                h.level + 1
            )));
        }
    }
    if let Some(section::SectionError::OpenAtEnd { what, line }) = section::open_at_end(&content) {
        return Err(NoteEditError::Escapes(format!(
            "it ends inside {what} opened on line {line}; close it"
        )));
    }
    Ok(content)
}

/// Every heading outside `body` is where it was, with the same text: the edit stayed in its
/// section (defence in depth: `contained` should make this so).
fn keeps_outline(old: &str, new: &str, h: &Heading, body: Range<usize>) -> Result<(), NoteEditError> {
    let shift = new.len() as isize - old.len() as isize;
    let before: Vec<(u8, String, usize)> = parse::headings(old)
        .into_iter()
        .filter(|x| x.top_level && !(body.start <= x.section.start && x.section.start < body.end))
        .map(|x| {
            (
                x.level,
                x.text,
                if x.section.start >= body.end {
                    (x.section.start as isize + shift) as usize
                } else {
                    x.section.start
                },
            )
        })
        .collect();
    let new_body_end = (body.end as isize + shift) as usize;
    let escaped = || {
        NoteEditError::Escapes(format!(
            "it would change the note outside the section `{} {}` (with what the section already holds, it would end the section or open a block)",
            "#".repeat(h.level as usize),
            h.text
        ))
    };
    let new_headings = parse::headings(new);
    // The section still runs over the whole new body: nothing in it ends the section.
    let still = new_headings
        .iter()
        .find(|x| x.top_level && x.section.start == h.section.start && x.level == h.level && x.text == h.text);
    if still.is_none_or(|x| x.section.end != new_body_end) {
        return Err(escaped());
    }
    let after: Vec<(u8, String, usize)> = new_headings
        .into_iter()
        .filter(|x| x.top_level && !(body.start <= x.section.start && x.section.start < new_body_end))
        .map(|x| (x.level, x.text, x.section.start))
        .collect();
    if before != after {
        return Err(escaped());
    }
    Ok(())
}

/// `text` with front-matter `fields` set (`null` removes one), creating the front matter when
/// the note has none. Values: strings, numbers, booleans, lists of those. Every other line of
/// the note — other fields, their line endings (LF, CRLF, CR or mixed), the text after — stays
/// byte for byte.
pub fn set_frontmatter(text: &str, fields: &Map<String, Value>) -> Result<String, NoteEditError> {
    if fields.is_empty() {
        return Err(NoteEditError::Invalid(
            "frontmatter: empty; give the fields to set".into(),
        ));
    }
    let eol = crate::lines::dominant_eol(text);
    // The block's inner lines, each with its own terminator.
    let (inner, had) = match crate::frontmatter::locate(text) {
        Some((_, inner, true)) => match crate::frontmatter::read(text) {
            Some(fm) if fm.refused.is_none() && (fm.data.is_some() || text[inner.clone()].trim().is_empty()) => {
                (inner, true)
            }
            _ => {
                return Err(NoteEditError::Invalid(
                    "frontmatter: the note's front matter cannot be read (malformed, too large or too deep); fix it by hand".into(),
                ));
            }
        },
        Some((_, _, false)) => {
            return Err(NoteEditError::Invalid(
                "frontmatter: the note's front matter is TOML (`+++`); scholia sets fields in YAML front matter only"
                    .into(),
            ));
        }
        None => (0..0, false),
    };
    let mut lines: Vec<String> = split_keeping_ends(&text[inner.clone()]);
    for (key, value) in fields {
        check_key(key)?;
        let rendered = match value {
            Value::Null => None,
            v => Some(format!("{key}: {}{eol}", yaml_value(key, v)?)),
        };
        // The field's line and the indented or list lines that continue it.
        let at = lines.iter().position(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim_end() == key && !l.starts_with([' ', '\t', '-']))
        });
        match (at, rendered) {
            (Some(i), new) => {
                let mut end = i + 1;
                while end < lines.len()
                    && (lines[end].starts_with([' ', '\t'])
                        || lines[end].starts_with("- ")
                        || lines[end].trim().is_empty())
                {
                    end += 1;
                }
                match new {
                    Some(v) => {
                        lines.splice(i..end, [v]);
                    }
                    None => {
                        lines.drain(i..end);
                    }
                }
            }
            (None, Some(v)) => lines.push(v),
            (None, None) => {}
        }
    }
    let new = if had {
        format!("{}{}{}", &text[..inner.start], lines.concat(), &text[inner.end..])
    } else {
        format!("---{eol}{}---{eol}{text}", lines.concat())
    };
    match crate::frontmatter::read(&new) {
        Some(f) if f.refused.is_none() && f.data.is_some() => Ok(new),
        _ => Err(NoteEditError::Invalid(
            "frontmatter: the fields given would not make readable front matter; nothing was written".into(),
        )),
    }
}

/// The lines of `text`, each with its terminator (`\n`, `\r\n` or a lone `\r`).
fn split_keeping_ends(text: &str) -> Vec<String> {
    let idx = crate::lines::LineIndex::new(text);
    (0..idx.line_count() as u32)
        .filter_map(|l| {
            let start = idx.line_start(l)?;
            let end = idx.line_start(l + 1).unwrap_or(text.len());
            (end > start).then(|| text[start..end].to_string())
        })
        .collect()
}

/// A front-matter key scholia writes: a plain YAML scalar of letters, digits, `_`, `-` and
/// inner spaces (nothing YAML would read as something else, nothing indented).
pub fn check_key(key: &str) -> Result<(), NoteEditError> {
    let plain = !key.is_empty()
        && key.trim() == key
        && !key.starts_with('-')
        && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '));
    match plain {
        true => Ok(()),
        false => Err(NoteEditError::Invalid(format!(
            "frontmatter: `{}` is not a field name; valid: letters, digits, `_`, `-` and spaces between words (no leading or trailing space)",
            key.escape_debug()
        ))),
    }
}

/// A JSON value as one line of YAML: JSON's quoting is YAML's double-quoted style.
fn yaml_value(key: &str, v: &Value) -> Result<String, NoteEditError> {
    let scalar = |x: &Value| match x {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Ok(x.to_string()),
        _ => Err(NoteEditError::Invalid(format!(
            "frontmatter.{key}: lists may hold only strings, numbers and booleans"
        ))),
    };
    match v {
        Value::Array(items) => Ok(format!(
            "[{}]",
            items.iter().map(scalar).collect::<Result<Vec<_>, _>>()?.join(", ")
        )),
        Value::Object(_) => Err(NoteEditError::Invalid(format!(
            "frontmatter.{key}: nested objects are not supported; give a string, number, boolean, list or null"
        ))),
        other => scalar(other),
    }
}

#[cfg(test)]
mod tests;
