//! Markdown → note structure: title, headings with ranges, tags, wikilinks, embeds, frontmatter.
//!
//! pulldown-cmark does the Markdown; this module only walks its events, so everything inside
//! code fences, inline code and HTML is ignored the way a Markdown reader would ignore it.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

use super::frontmatter::{self, Frontmatter};
use super::lines::{LineIndex, normalized};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// Zero-based line of the heading.
    pub line: u32,
    /// From the start of the heading's line to the start of the next heading of the same or a
    /// higher level (or the end of the text).
    pub section: Range<usize>,
    /// `false` for headings nested in a block quote, list item or footnote.
    pub top_level: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The note part of the link; empty for same-note links such as `[[#Heading]]`.
    pub target: String,
    pub heading: Option<String>,
    pub block: Option<String>,
    pub alias: Option<String>,
    pub embed: bool,
    /// Bytes of the whole link, `[[…]]` or `![[…]]`.
    pub range: Range<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct ParsedNote {
    pub title: String,
    pub frontmatter: Option<Frontmatter>,
    pub aliases: Vec<String>,
    pub headings: Vec<Heading>,
    pub tags: Vec<String>,
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
    let mut link: Option<(Link, String)> = None;
    let mut in_code_block = false;
    let mut container_depth = 0usize;
    let mut raw_headings: Vec<(u8, usize, String, bool)> = Vec::new();

    let (fm, events) = events(text);
    if let Some(why) = fm.as_ref().and_then(|f| f.refused.clone()) {
        note.warnings.push(why);
    }
    note.frontmatter = fm;
    for (event, range) in events {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((level_num(level), range.start, String::new(), container_depth == 0));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, text_buf, top)) = heading.take() {
                    let text_buf = text_buf.trim().to_string();
                    note.plain_text.push_str(&text_buf);
                    note.plain_text.push('\n');
                    raw_headings.push((level, start, text_buf, top));
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
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => {
                link = Some((wikilink(&dest_url, has_pothole, false, range), String::new()));
            }
            Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => {
                // pulldown-cmark's range for an embed starts at `!`.
                link = Some((wikilink(&dest_url, has_pothole, true, range), String::new()));
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some((mut l, shown)) = link.take() {
                    if l.alias.is_some() {
                        l.alias = Some(shown.trim().to_string()).filter(|s| !s.is_empty());
                    }
                    note.links.push(l);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, buf, _)) = heading.as_mut() {
                    buf.push_str(&t);
                } else {
                    note.plain_text.push_str(&t);
                }
                if let Some((_, shown)) = link.as_mut() {
                    shown.push_str(&t);
                }
                if !in_code_block && literal_with_hash(&t, &range, text) {
                    collect_inline_tags(text, range.clone(), &mut note.tags);
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
    let mut headings = Vec::with_capacity(raw_headings.len());
    for (level, start, htext, top) in raw_headings.into_iter().rev() {
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

// Text events that come from entities or escapes do not map byte-for-byte onto the source;
// tags are only looked for where the source slice is the literal text.
fn literal_with_hash(t: &str, range: &Range<usize>, source: &str) -> bool {
    source.get(range.clone()).is_some_and(|s| s == t) && t.contains('#')
}

fn wikilink(dest: &str, has_pothole: bool, embed: bool, range: Range<usize>) -> Link {
    let (rest, block) = match dest.split_once("#^") {
        Some((note, block)) => (note, Some(block.trim().to_string())),
        None => (dest, None),
    };
    let (target, heading) = match rest.split_once('#') {
        Some((note, heading)) => (note, Some(heading.trim().to_string())),
        None => (rest, None),
    };
    Link {
        target: target.trim().to_string(),
        heading: heading.filter(|h| !h.is_empty()),
        block: block.filter(|b| !b.is_empty()),
        alias: has_pothole.then(String::new),
        embed,
        range,
    }
}

fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// Obsidian tags: `#` at the start of a line or after whitespace, then letters, digits, `_`,
/// `-` or `/`, with at least one character that is not a digit.
fn collect_inline_tags(source: &str, range: Range<usize>, tags: &mut Vec<String>) {
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
    let mut open: Option<(Link, String)> = None;
    for (event, range) in events(text).1 {
        match event {
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => open = Some((wikilink(&dest_url, has_pothole, false, range), String::new())),
            Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => open = Some((wikilink(&dest_url, has_pothole, true, range), String::new())),
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some((mut l, shown)) = open.take() {
                    if l.alias.is_some() {
                        l.alias = Some(shown.trim().to_string()).filter(|s| !s.is_empty());
                    }
                    out.push(l);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, shown)) = open.as_mut() {
                    shown.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// Just the headings of `text`, for the section editor.
pub fn headings(text: &str) -> Vec<Heading> {
    parse(text, "").headings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(
        target: &str,
        heading: Option<&str>,
        alias: Option<&str>,
        embed: bool,
    ) -> (String, Option<String>, Option<String>, bool) {
        (target.into(), heading.map(Into::into), alias.map(Into::into), embed)
    }

    #[test]
    fn links_alone_are_what_parse_finds() {
        for text in [
            "[[A]] and ![[B#h|x]] `[[not]]`\n```\n[[code]]\n```\n> [[Quoted|q]]\n- [[Item#^b]]\n",
            "---\ntitle: [[x]]\n---\n[[After frontmatter]]\r\n| [[T\\|a]] |\n|---|\n",
            "",
        ] {
            assert_eq!(links(text), parse(text, "").links, "{text:?}");
        }
    }

    #[test]
    fn wikilink_forms() {
        let text = "See [[Note]], [[Note|alias]], [[Note#Heading]], [[Folder/Other#Part|shown]], \
                    [[#Local]], ![[image.png]], ![[Embedded#Sec]] and [[Blocky#^abc123]].\n\n\
                    `[[not a link]]`\n\n```\n[[nor this]]\n```\n";
        let note = parse(text, "x");
        let got: Vec<_> = note
            .links
            .iter()
            .map(|l| (l.target.clone(), l.heading.clone(), l.alias.clone(), l.embed))
            .collect();
        assert_eq!(
            got,
            vec![
                link("Note", None, None, false),
                link("Note", None, Some("alias"), false),
                link("Note", Some("Heading"), None, false),
                link("Folder/Other", Some("Part"), Some("shown"), false),
                link("", Some("Local"), None, false),
                link("image.png", None, None, true),
                link("Embedded", Some("Sec"), None, true),
                link("Blocky", None, None, false),
            ]
        );
        assert_eq!(note.links[7].block.as_deref(), Some("abc123"));
        assert_eq!(&text[note.links[0].range.clone()], "[[Note]]");
        assert_eq!(&text[note.links[5].range.clone()], "![[image.png]]");
    }

    #[test]
    fn many_nested_headings_are_linear() {
        // Quoted headings never end a section: a naive scan for each would be quadratic.
        let text = format!("# Top\n{}## Research\nbody\n", "> # quoted\n".repeat(60_000));
        let started = std::time::Instant::now();
        let h = headings(&text);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(h.len(), 60_002);
        assert_eq!(h[0].section, 0..text.len());
        let quoted = &h[1];
        assert!(!quoted.top_level);
        assert_eq!(
            quoted.section.end,
            text.len(),
            "no top-level heading of level 1 follows"
        );
        let research = h.last().unwrap();
        assert_eq!(research.section, text.find("## Research").unwrap()..text.len());
    }

    #[test]
    fn title_precedence() {
        let check = |text: &str, expected: &str| assert_eq!(parse(text, "stem").title, expected, "{text:?}");
        check("---\ntitle: From FM\n---\n# H1\n", "From FM");
        check("intro\n\n# The H1\n\n## Sub\n", "The H1");
        check("## Only h2\n", "stem");
        check("", "stem");
        check("---\ntitle: \"\"\n---\n# H1\n", "H1");
    }

    #[test]
    fn headings_sections_and_levels() {
        let text = "# Title\r\nintro\r\n## A\r\na\r\n### A1\r\nx\r\n## B\r\nb\r\n> ## Quoted\r\n";
        let note = parse(text, "t");
        let h: Vec<_> = note
            .headings
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.line, h.top_level))
            .collect();
        assert_eq!(
            h,
            vec![
                (1, "Title", 0, true),
                (2, "A", 2, true),
                (3, "A1", 4, true),
                (2, "B", 6, true),
                (2, "Quoted", 8, false)
            ]
        );
        assert_eq!(&text[note.headings[1].section.clone()], "## A\r\na\r\n### A1\r\nx\r\n");
        assert_eq!(&text[note.headings[2].section.clone()], "### A1\r\nx\r\n");
        assert_eq!(&text[note.headings[3].section.clone()], "## B\r\nb\r\n> ## Quoted\r\n");
        assert_eq!(note.headings[0].section, 0..text.len());
    }

    #[test]
    fn headings_in_code_are_not_headings() {
        let text = "```md\n## Research\n```\n~~~\n# no\n~~~\n    ## indented code\n";
        assert!(parse(text, "t").headings.is_empty());
    }

    #[test]
    fn tags_inline_and_frontmatter() {
        let text = "---\ntags: [alpha, \"#beta\"]\n---\nText #gamma and #nested/tag, not#this, #123 no, `#code` no.\n\n# Heading #notatag?\n";
        let note = parse(text, "t");
        assert_eq!(note.tags, vec!["gamma", "nested/tag", "notatag", "alpha", "beta"]);

        let text = "---\ntags: one, two\naliases:\n  - Other name\n---\n";
        let note = parse(text, "t");
        assert_eq!(note.tags, vec!["one", "two"]);
        assert_eq!(note.aliases, vec!["Other name"]);
    }

    #[test]
    fn plain_text_drops_markup() {
        let note = parse("---\nk: v\n---\n# T\n\nSome *emph* and [[Link|shown]] text.\n", "t");
        assert!(
            note.plain_text.contains("Some emph and shown text."),
            "{:?}",
            note.plain_text
        );
        assert!(!note.plain_text.contains("k: v"));
    }
}
