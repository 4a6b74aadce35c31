//! Boilerplate removed before the reader scores a page: captions and galleries, share bars,
//! related and recommended links, promos and sign-ups, bylines and tag lists, hidden elements.
//! Readability keeps such blocks when their class also says `content` or `article`; a reader of
//! the article never counts them as its text. Matched by tag and by the words of `class`/`id`,
//! never on an element that holds much of the page's text.

use dom_query::{Document, NodeRef};

/// Elements that are never article text.
const TAGS: &[&str] = &[
    "figcaption",
    "aside",
    "nav",
    "form",
    "button",
    "dialog",
    "select",
    "iframe",
    "template",
    "menu",
];

/// Words of a `class` or `id` that mark boilerplate (whole words: `share-bar` and `shareBar`
/// match `share`, `shared` does not).
const WORDS: &[&str] = &[
    "caption",
    "captions",
    "credit",
    "credits",
    "gallery",
    "slideshow",
    "carousel",
    "related",
    "share",
    "sharing",
    "sharebar",
    "social",
    "newsletter",
    "subscribe",
    "subscription",
    "signup",
    "promo",
    "promotion",
    "advert",
    "advertisement",
    "ad",
    "ads",
    "sponsor",
    "sponsored",
    "outbrain",
    "taboola",
    "recirc",
    "recommended",
    "recommendations",
    "trending",
    "popular",
    "breadcrumb",
    "breadcrumbs",
    "byline",
    "dateline",
    "timestamp",
    "published",
    "updated",
    "author",
    "bio",
    "tags",
    "keywords",
    "comments",
    "copyright",
    "cookie",
    "consent",
    "paywall",
    "modal",
    "popup",
    "toolbar",
    "sidebar",
    "navigation",
    "menu",
    "footer",
    "tooltip",
    "popover",
    "hovercard",
    "rollover",
];

/// A matched element holding more than this share of the page's text is kept: it is more
/// likely the article with an unlucky class than boilerplate.
const MAX_SHARE: f64 = 0.3;

/// Words of a class or id that mark a caption or a credit.
const CAPTION_WORDS: &[&str] = &["caption", "captions", "credit", "credits"];

/// Removes captions, credits and hidden elements from a whole page (small elements that do not
/// change which part of the page is the article).
pub fn captions(doc: &Document) {
    remove(doc, |node, name| {
        name == "figcaption" || hidden(node) || has_word(node, CAPTION_WORDS)
    });
}

/// Removes boilerplate from `doc` in place.
pub fn boilerplate(doc: &Document) {
    remove(doc, |node, name| {
        TAGS.contains(&name) || hidden(node) || has_word(node, WORDS)
    });
}

/// Removes the elements `doomed(node, lower-cased tag name)` picks, except the page's frame
/// and any that hold much of its text.
fn remove(doc: &Document, doomed: impl Fn(&NodeRef, &str) -> bool) {
    let Some(body) = doc.body() else { return };
    let total = text_len(&body).max(1) as f64;
    let mut picked = Vec::new();
    for node in body.descendants_it() {
        if !node.is_element() {
            continue;
        }
        let name = node.node_name().map(|n| n.to_ascii_lowercase()).unwrap_or_default();
        if matches!(name.as_str(), "html" | "body" | "main" | "article") {
            continue;
        }
        if doomed(&node, &name) {
            picked.push(node);
        }
    }
    for node in picked {
        // (One inside an element already removed goes again, harmlessly.)
        if text_len(&node) as f64 > MAX_SHARE * total {
            continue;
        }
        node.remove_from_parent();
    }
}

/// Lists inside an article that are mostly links (related stories, "read more", navigation):
/// at least this share of their text in links.
const LIST_LINK_SHARE: f64 = 0.7;
/// A short block that is a link and (almost) nothing else: a teaser for another page.
const BLOCK_LINK_SHARE: f64 = 0.9;
const MAX_TEASER: usize = 200;
/// Longer lists are not judged by their links.
const MAX_LINK_LIST: usize = 1500;

/// Removes, inside an article, the lists and short blocks that are mostly links.
pub fn link_lists(doc: &Document) {
    let Some(body) = doc.body() else { return };
    let mut doomed = Vec::new();
    for node in body.descendants_it() {
        if !node.is_element() {
            continue;
        }
        let name = node.node_name().map(|n| n.to_ascii_lowercase()).unwrap_or_default();
        let (share, max) = match name.as_str() {
            "ul" | "ol" => (LIST_LINK_SHARE, MAX_LINK_LIST),
            "p" | "div" | "section" => (BLOCK_LINK_SHARE, MAX_TEASER),
            _ => continue,
        };
        let text = text_len(&node);
        if text == 0 || text > max {
            continue;
        }
        let linked: usize = node
            .descendants_it()
            .filter(|d| d.is_element() && d.node_name().is_some_and(|n| n.eq_ignore_ascii_case("a")))
            .map(|a| text_len(&a))
            .sum();
        if linked as f64 >= share * text as f64 {
            doomed.push(node);
        }
    }
    for node in doomed {
        node.remove_from_parent();
    }
}

/// Short lines that are page furniture whatever the markup: ads, comment counters, credits,
/// sign-up and "more stories" prompts. Whole lines (numbers aside) …
const FURNITURE_LINES: &[&str] = &[
    "advert",
    "advertisement",
    "sponsored",
    "comments",
    "comment",
    "loading",
    "loading content",
    "subscribe",
    "share",
    "share this",
    "related",
    "related articles",
    "related stories",
    "more stories",
    "you may also like",
    "don't miss",
    "read more",
    "see more",
];
/// … and line openings (lower-cased).
const FURNITURE_PREFIXES: &[&str] = &[
    "(image credit",
    "image credit",
    "photo credit",
    "sign up for",
    "sign up to",
    "you may also like",
    "see more:",
    "see also:",
    "read more:",
    "related:",
    "follow us on",
    "share this",
    "share on",
    "tell us what you think",
];
/// Lines longer than this (in words) are text, whatever they start with.
const MAX_FURNITURE_WORDS: usize = 25;
/// Words that label a timestamp line.
const TIME_LABELS: &[&str] = &[
    "published",
    "updated",
    "posted",
    "modified",
    "publicado",
    "atualizado",
    "actualizado",
    "veröffentlicht",
    "aktualisiert",
    "publié",
    "pubblicato",
    "aggiornato",
];

/// Removes the lines of `md` that are page furniture: see [`FURNITURE_PREFIXES`], timestamps,
/// and "image N of M" counters.
pub fn furniture_lines(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    for line in md.lines() {
        if !furniture(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn furniture(line: &str) -> bool {
    let plain: String = line
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '#' | '\\' | '|' | '[' | ']'))
        .collect::<String>()
        .trim()
        .trim_start_matches(['-', '+', '>', ' '])
        .to_lowercase()
        .replace('’', "'");
    if plain.is_empty() {
        return false;
    }
    let words: Vec<&str> = plain
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() > MAX_FURNITURE_WORDS {
        return false;
    }
    if FURNITURE_PREFIXES.iter().any(|p| plain.starts_with(p)) {
        return true;
    }
    let label: Vec<&str> = words.iter().copied().filter(|w| w.parse::<u64>().is_err()).collect();
    if !label.is_empty() && FURNITURE_LINES.contains(&label.join(" ").replace(" t ", "'t ").as_str()) {
        return true;
    }
    // "Image 3 of 5", "1 of 4"
    if words.len() <= 4
        && words
            .windows(3)
            .any(|w| w[0].parse::<u32>().is_ok() && w[1] == "of" && w[2].parse::<u32>().is_ok())
    {
        return true;
    }
    // A timestamp: a short line with a clock time, or a year and a label.
    let clock = plain
        .as_bytes()
        .windows(4)
        .any(|w| w[0].is_ascii_digit() && w[1] == b':' && w[2].is_ascii_digit() && w[3].is_ascii_digit())
        || plain.as_bytes().windows(5).any(|w| {
            w[0].is_ascii_digit()
                && w[1].is_ascii_digit()
                && w[2] == b':'
                && w[3].is_ascii_digit()
                && w[4].is_ascii_digit()
        });
    let year = words
        .iter()
        .any(|w| w.len() == 4 && (w.starts_with("19") || w.starts_with("20")) && w.parse::<u32>().is_ok());
    let labelled = words.iter().any(|w| TIME_LABELS.contains(w));
    words.len() <= 12 && (clock || (year && labelled))
}

fn hidden(node: &NodeRef) -> bool {
    if node.attr("hidden").is_some() || node.attr("aria-hidden").is_some_and(|v| v.trim() == "true") {
        return true;
    }
    node.attr("style").is_some_and(|s| {
        let s: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    })
}

/// Whether a word of the element's `class` or `id` is one of `list`.
fn has_word(node: &NodeRef, list: &[&str]) -> bool {
    ["class", "id"].iter().any(|attr| {
        node.attr(attr)
            .is_some_and(|v| words(&v).any(|w| list.contains(&w.as_str())))
    })
}

/// The words of a class or id: split at non-alphanumerics and lower-to-upper case changes.
fn words(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .flat_map(|part| {
            let mut out = Vec::new();
            let mut cur = String::new();
            let mut prev_lower = false;
            for c in part.chars() {
                if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
                cur.push(c.to_ascii_lowercase());
            }
            if !cur.is_empty() {
                out.push(cur);
            }
            out
        })
}

fn text_len(node: &NodeRef) -> usize {
    node.text().chars().filter(|c| !c.is_whitespace()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn furniture() {
        let check = |line: &str, expected: bool| assert_eq!(super::furniture(line), expected, "{line:?}");
        check("Advert", true);
        check("**SEE MORE**: Hong Kong protests", true);
        check("Image 2 of 5", true);
        check("(Image credit: Blue Origin)", true);
        check("Posted: Fri 6:45 PM, Feb 16, 2018  \\|", true);
        check("PUBLISHED: 10:48, Tue, Nov 19, 2019", true);
        check("segunda-feira, 22 de janeiro de 2018 às 0:13", true);
        check("Published November 20th, 2019 - 07:50 GMT", true);
        check("The plague was last seen in Beijing in 2009, officials said.", false);
        check(
            "Comments made by the minister at 10:30 on Tuesday drew a sharp response from the opposition, who called them a distraction from the budget.",
            false,
        );
        check("Subscribers pay more", false);
        check("## Loading the truck", false);
        check("12 comments", true);
        check("Don't miss", true);
        check("Loading content ...", true);
    }

    #[test]
    fn class_words() {
        let w = |v: &str| words(v).collect::<Vec<_>>();
        assert_eq!(w("share-bar shareBar"), ["share", "bar", "share", "bar"]);
        assert_eq!(w("c-caption__text"), ["c", "caption", "text"]);
        assert_eq!(w("shared-content"), ["shared", "content"]);
    }

    #[test]
    fn boilerplate_goes_and_the_article_stays() {
        let para = "<p>The article's own words, long enough to be the body of the page and then some more words.</p>";
        let html = format!(
            "<html><body><article class=\"article-content share-enabled\">{para}{para}{para}\
             <figure><img src=a.jpg><figcaption>A caption</figcaption></figure>\
             <div class=\"related-content\"><a href=x>Another story</a></div>\
             <div class=\"socialShare\">Share this</div><div style=\"display: none\">Hidden</div>\
             <p class=\"shared\">Shared kitchens are common.</p></article></body></html>"
        );
        let doc = Document::from(html.as_str());
        boilerplate(&doc);
        let text = doc.select("body").text();
        assert!(text.contains("The article's own words"));
        assert!(text.contains("Shared kitchens"));
        for gone in ["A caption", "Another story", "Share this", "Hidden"] {
            assert!(!text.contains(gone), "{gone}: {text}");
        }
    }
}
