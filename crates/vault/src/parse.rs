//! Markdown → note structure: title, headings with ranges, tags, wikilinks, embeds, frontmatter.
//!
//! pulldown-cmark does the Markdown; this module only walks its events, so everything inside
//! code fences, inline code and HTML is ignored the way a Markdown reader would ignore it.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

use super::frontmatter::{self, Frontmatter};
use super::lines::{LineIndex, normalized};
use super::link_events::LinkBuilder;
pub use super::link_events::{Link, MdDest};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// Zero-based line of the heading.
    pub line: u32,
    /// From the start of the heading's line to the start of the next heading of the same or a
    /// higher level (or the end of the text).
    pub section: Range<usize>,
    /// Where the line after the heading starts: a setext heading is two lines (or more).
    pub body_start: usize,
    /// `false` for headings nested in a block quote, list item or footnote.
    pub top_level: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ParsedNote {
    pub title: String,
    pub frontmatter: Option<Frontmatter>,
    pub aliases: Vec<String>,
    pub headings: Vec<Heading>,
    pub tags: Vec<String>,
    /// Where each inline `#tag` is: the tag as written and the bytes of its name (after `#`).
    pub tag_spans: Vec<(String, Range<usize>)>,
    pub links: Vec<Link>,
    /// The readable text without markup, for full-text search.
    pub plain_text: String,
    /// What was left out of the note and why (frontmatter over its bounds).
    pub warnings: Vec<String>,
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
}

/// The Markdown events of `text` after its frontmatter, with byte ranges into `text`: the one
/// way notes are read, so that a `---` line anywhere but byte 0 is a rule, never metadata.
/// `text` must be [`normalized`] (lone `\r` made `\n`).
pub fn events(text: &str) -> (Option<Frontmatter>, impl Iterator<Item = (Event<'_>, Range<usize>)>) {
    let fm = frontmatter::read(text);
    let offset = fm.as_ref().map_or(0, |f| f.range.end);
    let events = Parser::new_ext(&text[offset..], options())
        .into_offset_iter()
        .map(move |(e, r)| (e, r.start + offset..r.end + offset));
    (fm, events)
}

fn level_num(level: HeadingLevel) -> u8 {
    level as u8
}

/// Parses `text`; `stem` (the file name without extension) is the title of last resort.
pub fn parse(text: &str, stem: &str) -> ParsedNote {
    // Offsets into the normalised text are offsets into `text`.
    let text = &*normalized(text);
    let lines = LineIndex::new(text);
    let mut note = ParsedNote::default();
    let mut heading: Option<(u8, usize, String, bool)> = None;
    let mut links = LinkBuilder::default();
    let mut in_code_block = false;
    // The images being read, innermost last: whether each is an image file embedded by name.
    let mut images: Vec<bool> = Vec::new();
    let mut container_depth = 0usize;
    let mut raw_headings: Vec<(u8, usize, usize, String, bool)> = Vec::new();
    // Where `%%` and `$$` are written in the note's text (not in code, not in a heading).
    let mut hidden = Hidden::default();

    let (fm, events) = events(text);
    if let Some(why) = fm.as_ref().and_then(|f| f.refused.clone()) {
        note.warnings.push(why);
    }
    note.frontmatter = fm;
    for (event, range) in events {
        match &event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((level_num(*level), range.start, String::new(), container_depth == 0));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, text_buf, top)) = heading.take() {
                    let text_buf = text_buf.trim().to_string();
                    note.plain_text.push_str(&text_buf);
                    note.plain_text.push('\n');
                    let last = lines.line_of(range.end.saturating_sub(1).max(start));
                    let body = lines.line_start(last + 1).unwrap_or(text.len());
                    raw_headings.push((level, start, body, text_buf, top));
                }
            }
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_)) => {
                container_depth += 1;
                // A tight list item's text is not a paragraph: end the text before it (the
                // parent item's) here, or the two read as one.
                if !note.plain_text.is_empty() && !note.plain_text.ends_with('\n') {
                    note.plain_text.push('\n');
                }
            }
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition) => {
                container_depth = container_depth.saturating_sub(1);
                note.plain_text.push('\n');
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                if let CodeBlockKind::Fenced(_) = kind {
                    note.plain_text.push('\n');
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code_block = false;
                note.plain_text.push('\n');
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) | Event::End(TagEnd::Link | TagEnd::Image) => {
                // An embedded image file's name is no word of the note (`![[dice.svg#icon]]`
                // made Random note a note about dice); a Markdown image's alt text stays.
                match &event {
                    Event::Start(Tag::Image {
                        link_type: LinkType::WikiLink { .. },
                        dest_url,
                        ..
                    }) => images.push(crate::paths::is_image(dest_url)),
                    Event::Start(Tag::Image { .. }) => images.push(false),
                    Event::End(TagEnd::Image) => {
                        images.pop();
                    }
                    _ => {}
                }
                if let Some(l) = links.on(&event, range.clone(), text) {
                    note.links.push(l);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if matches!(event, Event::Text(_)) && !in_code_block && heading.is_none() {
                    hidden.note(text, range.clone());
                }
                if let Some((_, _, buf, _)) = heading.as_mut() {
                    buf.push_str(t);
                } else if !images.contains(&true) {
                    note.plain_text.push_str(t);
                }
                links.on(&event, range.clone(), text);
                if !in_code_block && literal_with_hash(t, &range, text) {
                    collect_inline_tags(text, range.clone(), &mut note.tags, &mut note.tag_spans);
                }
            }
            Event::SoftBreak | Event::HardBreak if heading.is_some() => {
                // A setext heading of two lines: one name, its words apart.
                if let Some((_, _, buf, _)) = heading.as_mut() {
                    buf.push(' ');
                }
            }
            Event::SoftBreak => {
                // A callout's `[!type] Title` line is a label of its own.
                let line = note.plain_text.rfind('\n').map_or(0, |i| i + 1);
                let title = container_depth > 0 && note.plain_text[line..].starts_with("[!");
                note.plain_text.push(if title { '\n' } else { ' ' });
            }
            Event::HardBreak => note.plain_text.push('\n'),
            Event::End(TagEnd::Paragraph | TagEnd::TableRow | TagEnd::TableCell) => note.plain_text.push('\n'),
            _ => {}
        }
    }

    // Sections: a heading's section runs to the next top-level heading of the same or a higher
    // level. Nested headings do not end sections. One pass from the end, keeping for each level
    // where the nearest following top-level heading of that level or higher starts.
    let line_start = |at: usize| lines.line_start(lines.line_of(at)).unwrap_or(at);
    let mut next_at_or_above = [text.len(); 7];
    // Obsidian's comments (`%% … %%`) and math blocks (`$$ … $$`) hold no headings.
    raw_headings.retain(|h| !hidden.covers(h.1));
    let mut headings = Vec::with_capacity(raw_headings.len());
    for (level, start, body_start, htext, top) in raw_headings.into_iter().rev() {
        let section_start = line_start(start);
        let end = next_at_or_above[level as usize];
        if top {
            for slot in &mut next_at_or_above[level as usize..] {
                *slot = section_start;
            }
        }
        headings.push(Heading {
            level,
            text: htext,
            line: lines.line_of(start),
            section: section_start..end,
            body_start,
            top_level: top,
        });
    }
    headings.reverse();
    note.headings = headings;

    if let Some(fm) = &note.frontmatter {
        for tag in fm.string_list("tags").into_iter().chain(fm.string_list("tag")) {
            let tag = tag.trim_start_matches('#').to_string();
            if !tag.is_empty() {
                note.tags.push(tag);
            }
        }
        note.aliases = fm.string_list("aliases");
        note.aliases.extend(fm.string_list("alias"));
    }
    dedupe(&mut note.tags);
    dedupe(&mut note.aliases);

    note.title = note
        .frontmatter
        .as_ref()
        .and_then(|fm| fm.string("title"))
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            note.headings
                .iter()
                .find(|h| h.level == 1 && !h.text.is_empty())
                .map(|h| h.text.clone())
        })
        .unwrap_or_else(|| stem.to_string());
    note
}

/// Where `%%` comments and `$$` math blocks open and close, as written in the note's text
/// (code and headings aside): a position is inside one when an odd number of either's markers
/// come before it.
#[derive(Default)]
struct Hidden {
    comments: Vec<usize>,
    math: Vec<usize>,
}

impl Hidden {
    /// The markers in the text at `range` (a text event, read from the source).
    fn note(&mut self, text: &str, range: Range<usize>) {
        let Some(source) = text.get(range.clone()) else { return };
        for (pat, into) in [("%%", &mut self.comments), ("$$", &mut self.math)] {
            into.extend(source.match_indices(pat).map(|(i, _)| range.start + i));
        }
    }

    fn covers(&self, at: usize) -> bool {
        self.comments.partition_point(|&m| m < at) % 2 == 1 || self.math.partition_point(|&m| m < at) % 2 == 1
    }
}

// Text events that come from entities or escapes do not map byte-for-byte onto the source;
// tags are only looked for where the source slice is the literal text.
fn literal_with_hash(t: &str, range: &Range<usize>, source: &str) -> bool {
    source.get(range.clone()).is_some_and(|s| s == t) && t.contains('#')
}

fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// Obsidian tags: `#` at the start of a line or after whitespace, then letters, digits, `_`,
/// `-` or `/`, with at least one character that is not a digit.
fn collect_inline_tags(
    source: &str,
    range: Range<usize>,
    tags: &mut Vec<String>,
    spans: &mut Vec<(String, Range<usize>)>,
) {
    let slice = &source[range.clone()];
    for (i, _) in slice.match_indices('#') {
        let abs = range.start + i;
        let before = source[..abs].chars().next_back();
        if before.is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let tag: String = slice[i + 1..].chars().take_while(|&c| is_tag_char(c)).collect();
        let tag = tag.trim_end_matches('/');
        if !tag.is_empty() && !tag.chars().all(|c| c.is_ascii_digit()) {
            tags.push(tag.to_string());
            spans.push((tag.to_string(), abs + 1..abs + 1 + tag.len()));
        }
    }
}

fn dedupe(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|t| seen.insert(t.to_lowercase()));
}

/// Just the wikilinks and embeds of `text` (what [`parse`] finds, without building the rest):
/// references and renames read many notes and need only these.
pub fn links(text: &str) -> Vec<Link> {
    let text = &*normalized(text);
    let mut out = Vec::new();
    let mut builder = LinkBuilder::default();
    for (event, range) in events(text).1 {
        if let Some(l) = builder.on(&event, range, text) {
            out.push(l);
        }
    }
    out
}

/// Just the headings of `text`, for the section editor.
pub fn headings(text: &str) -> Vec<Heading> {
    parse(text, "").headings
}

#[cfg(test)]
mod tests;
