//! Links as pulldown-cmark's events go by: wikilinks and embeds (`[[…]]`, `![[…]]`), and
//! Markdown links and embeds whose destination names a note (see [`crate::mdlink`]), each with
//! the byte ranges a rename rewrites.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Tag, TagEnd};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The note part of the link; empty for same-note links such as `[[#Heading]]`.
    pub target: String,
    pub heading: Option<String>,
    pub block: Option<String>,
    pub alias: Option<String>,
    pub embed: bool,
    /// Bytes of the whole link, `[[…]]` or `![[…]]` (`[…](…)`, `![…](…)` for a Markdown link).
    pub range: Range<usize>,
    /// A Markdown link's destination as written; `None` for a wikilink.
    pub markdown: Option<MdDest>,
}

/// Where a Markdown link's destination is written: its bytes (inside `<…>` when bracketed),
/// `#fragment` included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MdDest {
    pub range: Range<usize>,
    pub angle: bool,
}

impl Link {
    pub fn is_markdown(&self) -> bool {
        self.markdown.is_some()
    }
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
        markdown: None,
    }
}

/// Links as the events go by: wikilinks and embeds, and Markdown links and embeds whose
/// destination names a note (see [`crate::mdlink`]).
#[derive(Default)]
pub(crate) struct LinkBuilder {
    /// The open link, the text shown so far, and where its text ended (for a Markdown link's
    /// destination, which follows).
    open: Option<(Link, String, usize)>,
    /// Links nested in an open one that are not notes' (an image inside a link's text).
    depth: usize,
    /// The open link is a Markdown link.
    markdown: bool,
}

impl LinkBuilder {
    pub(crate) fn on(&mut self, event: &Event<'_>, range: Range<usize>, text: &str) -> Option<Link> {
        match event {
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) if self.open.is_none() => {
                let start = range.start;
                self.open = Some((wikilink(dest_url, *has_pothole, false, range), String::new(), start));
            }
            Event::Start(Tag::Image {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) if self.open.is_none() => {
                // pulldown-cmark's range for an embed starts at `!`.
                let start = range.start;
                self.open = Some((wikilink(dest_url, *has_pothole, true, range), String::new(), start));
            }
            Event::Start(
                Tag::Link {
                    link_type: LinkType::Inline,
                    dest_url,
                    ..
                }
                | Tag::Image {
                    link_type: LinkType::Inline,
                    dest_url,
                    ..
                },
            ) if self.open.is_none() && crate::mdlink::names_a_note(dest_url) => {
                let embed = matches!(event, Event::Start(Tag::Image { .. }));
                let (path, fragment) = crate::mdlink::split(dest_url);
                let (heading, block) = match fragment {
                    Some(f) if f.starts_with('^') => (None, Some(crate::mdlink::decode(&f[1..]))),
                    Some(f) => {
                        let h = crate::mdlink::decode(f);
                        (Some(h.trim().to_string()).filter(|h| !h.is_empty()), None)
                    }
                    None => (None, None),
                };
                let start = range.start + if embed { 2 } else { 1 };
                self.markdown = true;
                let link = Link {
                    target: crate::mdlink::decode(path).trim().to_string(),
                    heading,
                    block: block.filter(|b| !b.is_empty()),
                    alias: Some(String::new()),
                    embed,
                    range,
                    markdown: None,
                };
                self.open = Some((link, String::new(), start));
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => self.depth += 1,
            Event::End(TagEnd::Link | TagEnd::Image) if self.depth > 0 => self.depth -= 1,
            Event::End(TagEnd::Link | TagEnd::Image) => {
                let (mut l, shown, text_end) = self.open.take()?;
                if l.alias.is_some() {
                    l.alias = Some(shown.trim().to_string()).filter(|s| !s.is_empty());
                }
                if self.markdown {
                    self.markdown = false;
                    l.markdown = Some(md_dest(text, &l.range, text_end)?);
                }
                return Some(l);
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, shown, end)) = self.open.as_mut() {
                    shown.push_str(t);
                    *end = (*end).max(range.end);
                }
            }
            _ => {
                if let Some((_, _, end)) = self.open.as_mut() {
                    *end = (*end).max(range.end);
                }
            }
        }
        None
    }
}

/// The destination of the Markdown link at `link` (`[text](dest "title")`), whose text ends at
/// or before `text_end`.
fn md_dest(text: &str, link: &Range<usize>, text_end: usize) -> Option<MdDest> {
    let from = text_end.clamp(link.start, link.end);
    let open = text[from..link.end].find("](")? + from + 2;
    let rest = &text[open..link.end];
    let lead = rest.len() - rest.trim_start().len();
    let at = open + lead;
    if text[at..].starts_with('<') {
        let close = text[at + 1..link.end].find('>')? + at + 1;
        return Some(MdDest {
            range: at + 1..close,
            angle: true,
        });
    }
    let mut depth = 0usize;
    let mut end = at;
    let bytes = text.as_bytes();
    while end < link.end {
        match bytes[end] {
            b'\\' => end += 1,
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            b' ' | b'\t' | b'\n' | b'\r' => break,
            _ => {}
        }
        end += 1;
    }
    (end > at).then_some(MdDest {
        range: at..end.min(link.end),
        angle: false,
    })
}
