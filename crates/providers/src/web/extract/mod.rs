//! Main-content extraction. Readability (dom_smoothie) finds the article; captions are removed
//! before it runs and the rest of the boilerplate inside the article after (`clean.rs`); the
//! article becomes Markdown. When Readability finds no article, rs-trafilatura reads the page,
//! and failing that html2text renders all of it.

mod clean;
pub mod worker;

use dom_smoothie::{Config, Readability, TextMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Readability,
    /// rs-trafilatura, when Readability finds no article.
    Trafilatura,
    Html2text,
    /// Tags stripped in one pass: the page was too deep or too large for a DOM.
    Text,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Extracted {
    pub title: Option<String>,
    pub markdown: String,
    pub method: Method,
    /// Cut at the character limit.
    pub truncated: bool,
}

/// Below this many characters a "readable" article is probably a cookie banner: use the
/// whole page instead.
const MIN_ARTICLE_CHARS: usize = 250;

/// Pages nested deeper than this, with more elements (counted wherever they sit, inside
/// `<svg>`, `<template>` and `<noscript>` too) or with more end tags that close nothing, are
/// not parsed into a DOM (the readers recurse over it and some of their passes are quadratic):
/// their text is read in one linear pass instead. Real pages stay far below (the largest of the
/// test pages: 10,000 elements).
pub const MAX_DEPTH: usize = 256;
pub const MAX_ELEMENTS: usize = 50_000;
pub const MAX_UNMATCHED_END_TAGS: usize = 2_000;

/// Extracts the main content of `html` as Markdown, at most `max_chars` characters.
pub fn extract(html: &str, url: Option<&str>, max_chars: usize) -> Extracted {
    let Shape {
        elements,
        depth,
        unmatched,
    } = shape(html);
    if elements > MAX_ELEMENTS || depth > MAX_DEPTH || unmatched > MAX_UNMATCHED_END_TAGS {
        tracing::info!(
            "page has {elements} elements nested {depth} deep, {unmatched} stray end tags: reading its text without a DOM"
        );
        let (markdown, truncated) = cut(tidy(&strip_tags(html)), max_chars);
        return Extracted {
            title: None,
            markdown,
            method: Method::Text,
            truncated,
        };
    }
    // Classes stay on the article so that its boilerplate can be found afterwards.
    let config = Config {
        text_mode: TextMode::Markdown,
        keep_classes: true,
        ..Config::default()
    };
    // Captions are removed before Readability, which rewrites them into plain paragraphs.
    let doc = dom_query::Document::from(html);
    clean::captions(&doc);
    let article = Readability::with_document(doc, url.filter(|u| u.starts_with("http")), Some(config))
        .ok()
        .and_then(|mut r| r.parse().ok())
        .filter(|a| a.text_content.trim().chars().count() >= MIN_ARTICLE_CHARS);
    let (title, text, method) = match article {
        Some(a) => {
            let title = Some(a.title.trim().to_string()).filter(|t| !t.is_empty());
            (title, article_text(&a), Method::Readability)
        }
        None => {
            let text = trafilatura_only(html, url);
            if text.trim().chars().count() >= MIN_ARTICLE_CHARS {
                (page_title(html), text, Method::Trafilatura)
            } else {
                (page_title(html), html2text_whole(html), Method::Html2text)
            }
        }
    };
    let markdown = tidy(&strip_link_targets(&text));
    let (markdown, truncated) = cut(markdown, max_chars);
    Extracted {
        title,
        markdown,
        method,
        truncated,
    }
}

/// The article's text as Markdown, its boilerplate removed (Readability chose the right part
/// of the page; inside it, captions, share bars and related links remain).
fn article_text(a: &dom_smoothie::Article) -> String {
    let doc = dom_query::Document::from(a.content.as_ref());
    clean::boilerplate(&doc);
    clean::link_lists(&doc);
    let text = clean::furniture_lines(&doc.root().md(None));
    if text.trim().chars().count() >= MIN_ARTICLE_CHARS {
        text
    } else {
        a.text_content.to_string()
    }
}

/// dom_smoothie's article alone, as plain reading text (benchmarks compare the extractors).
pub fn readability_only(html: &str, url: Option<&str>) -> String {
    let config = Config {
        text_mode: TextMode::Markdown,
        ..Config::default()
    };
    Readability::new(html, url.filter(|u| u.starts_with("http")), Some(config))
        .ok()
        .and_then(|mut r| r.parse().ok())
        .map(|a| tidy(&strip_link_targets(&a.text_content)))
        .unwrap_or_default()
}

/// rs-trafilatura's main content alone, as plain reading text.
pub fn trafilatura_only(html: &str, url: Option<&str>) -> String {
    let options = rs_trafilatura::Options {
        url: url.map(str::to_string),
        ..rs_trafilatura::Options::default()
    };
    rs_trafilatura::extract_with_options(html, &options)
        .map(|r| r.content_text)
        .unwrap_or_default()
}

/// Elements whose end tag may be left out: they do not nest in practice.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "td", "th", "tr", "dt", "dd", "option", "optgroup", "tbody", "thead", "tfoot", "colgroup", "rb", "rt",
    "rp",
];
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
];
/// Elements whose content is not text to read.
const RAW: &[&str] = &["script", "style", "noscript", "template", "svg"];
/// Elements whose content every parser reads as text, never as tags.
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "plaintext"];
/// Opening one of these closes an open `<p>`.
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// The tag name at the start of `s` (after `<` or `</`), lowercased.
fn tag_name(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(32)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// What a page would make as a DOM, estimated in one linear pass without building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    elements: usize,
    depth: usize,
    /// End tags that close no open element.
    unmatched: usize,
}

/// End tags look this far down the open elements for their start tag (a parser's "in scope").
const SCOPE: usize = 64;

fn shape(html: &str) -> Shape {
    let mut s = Shape {
        elements: 0,
        depth: 0,
        unmatched: 0,
    };
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        // Past every bound: the answer is known.
        if s.elements > MAX_ELEMENTS || s.depth > MAX_DEPTH || s.unmatched > MAX_UNMATCHED_END_TAGS {
            break;
        }
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix("!--") {
            rest = after.find("-->").map(|e| &after[e + 3..]).unwrap_or("");
            continue;
        }
        if let Some(after) = rest.strip_prefix('/') {
            let name = tag_name(after);
            if name.is_empty() {
                continue;
            }
            let from = open.len().saturating_sub(SCOPE);
            match open[from..].iter().rposition(|n| *n == name) {
                Some(at) => open.truncate(from + at),
                // A `</p>` or `</br>` that closes nothing makes an element (the HTML parsing
                // rules insert an empty `<p>`, a `<br>`): 200,000 of them are 200,000 elements.
                None if name == "p" || name == "br" => s.elements += 1,
                None if OPTIONAL_END.contains(&name.as_str()) || VOID.contains(&name.as_str()) => {}
                None => s.unmatched += 1,
            }
            continue;
        }
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let name = tag_name(rest);
        let end = rest.find('>').unwrap_or(rest.len());
        let self_closing = rest[..end].ends_with('/');
        s.elements += 1;
        if RAW_TEXT.contains(&name.as_str()) {
            let close = format!("</{name}");
            rest = find_ci(rest, &close).map(|e| &rest[e..]).unwrap_or("");
            continue;
        }
        // Elements whose end tag may be left out close an open one of their kind; block
        // elements close an open paragraph.
        if (OPTIONAL_END.contains(&name.as_str()) && open.last() == Some(&name))
            || (CLOSES_P.contains(&name.as_str()) && open.last().is_some_and(|n| n == "p"))
        {
            open.pop();
        }
        if !(self_closing || VOID.contains(&name.as_str())) {
            open.push(name);
            s.depth = s.depth.max(open.len());
        }
        rest = &rest[end.min(rest.len())..];
    }
    s
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let hay = hay.as_bytes();
    let needle = needle.as_bytes();
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// The text of `html` in one pass: tags dropped (block tags become line breaks), scripts and
/// styles skipped, common entities decoded.
fn strip_tags(html: &str) -> String {
    const BLOCK: &[&str] = &[
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
    ];
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..i]));
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix("!--") {
            rest = after.find("-->").map(|e| &after[e + 3..]).unwrap_or("");
            continue;
        }
        let name = tag_name(rest.trim_start_matches('/'));
        if !rest.starts_with('/') && RAW.contains(&name.as_str()) {
            let close = format!("</{name}");
            rest = find_ci(rest, &close).map(|e| &rest[e..]).unwrap_or("");
        }
        if BLOCK.contains(&name.as_str()) {
            out.push('\n');
        }
        rest = rest.find('>').map(|e| &rest[e + 1..]).unwrap_or("");
    }
    out.push_str(&decode_entities(rest));
    out
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    text.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// html2text over the whole page, links without footnotes.
pub fn html2text_whole(html: &str) -> String {
    html2text::config::plain()
        .link_footnotes(false)
        .string_from_read(html.as_bytes(), 120)
        .unwrap_or_default()
}

fn page_title(html: &str) -> Option<String> {
    let doc = dom_query::Document::from(html);
    let title = doc.select("title").text().trim().to_string();
    Some(title).filter(|t| !t.is_empty())
}

/// `[text](url)` → `text`, `![alt](src)` → nothing: the page's own URL is what gets cited,
/// and link targets only cost tokens. A label is stripped too (an image inside a link).
fn strip_link_targets(md: &str) -> String {
    strip_links_nested(md, 4)
}

fn strip_links_nested(md: &str, depth: usize) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(open) = rest.find('[') {
        let is_image = rest[..open].ends_with('!');
        let Some((label_end, target_end)) = link_at(&rest[open..]) else {
            out.push_str(&rest[..=open]);
            rest = &rest[open + 1..];
            continue;
        };
        let before = if is_image { &rest[..open - 1] } else { &rest[..open] };
        out.push_str(before);
        if !is_image {
            let label = &rest[open + 1..open + label_end];
            if depth > 0 && label.contains("](") {
                out.push_str(&strip_links_nested(label, depth - 1));
            } else {
                out.push_str(label);
            }
        }
        rest = &rest[open + target_end..];
    }
    out.push_str(rest);
    out
}

/// For `[label](target)` at the start of `s`: the end of the label and of the whole link.
fn link_at(s: &str) -> Option<(usize, usize)> {
    let mut depth = 0;
    let mut label_end = None;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    label_end = Some(i);
                    break;
                }
            }
            '\n' if s[..i].ends_with('\n') => return None,
            _ => {}
        }
    }
    let label_end = label_end?;
    let after = &s[label_end + 1..];
    if !after.starts_with('(') {
        return None;
    }
    let close = after.find(')')?;
    if after[..close].contains('\n') {
        return None;
    }
    Some((label_end, label_end + 1 + close + 1))
}

/// Collapses runs of blank lines and trailing spaces.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

fn cut(text: String, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => (text[..i].to_string(), true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_targets_are_dropped() {
        let check = |input: &str, expected: &str| assert_eq!(strip_link_targets(input), expected, "{input:?}");
        check("see [the docs](http://x/y) now", "see the docs now");
        check("![logo](a.png) text", " text");
        check("[a [nested] label](u)", "a [nested] label");
        check("[not a link] and [x]", "[not a link] and [x]");
        check("[broken](", "[broken](");
        check("multi [line\n\nlabel](u)", "multi [line\n\nlabel](u)");
        check(
            "a\n\n![](https://x/a.jpg?q=82&amp;strip=all \"Gift Guide: What?\")\n\nb",
            "a\n\n\n\nb",
        );
        check(
            "![ A caption](<https://x/a.jpg?w=335 335w, https://x/a.jpg?w=480 480w>) after",
            " after",
        );
        check("[![](https://x/a.jpg \"t\")](https://x/a.html) caption", " caption");
        check("[see ![icon](i.png) here](u)", "see  here");
    }

    #[test]
    fn article_and_fallback() {
        let para = "Sourdough fermentation relies on wild yeast and lactic acid bacteria. ".repeat(12);
        let html = format!(
            "<html><head><title>Bread</title></head><body><nav>Home | About | Login</nav>\
             <article><h1>Bread</h1><p>{para}</p><p>See <a href='/x'>more</a>.</p></article>\
             <footer>Copyright</footer></body></html>"
        );
        let e = extract(&html, Some("https://example.org/bread"), 50_000);
        assert_eq!(e.method, Method::Readability);
        assert!(e.markdown.contains("wild yeast"), "{}", e.markdown);
        assert!(e.markdown.contains("See more."), "{}", e.markdown);
        assert!(
            !e.markdown.contains("Login") && !e.markdown.contains("Copyright"),
            "{}",
            e.markdown
        );

        let tiny = extract(
            "<html><head><title>T</title></head><body><ul><li>One</li><li>Two</li></ul></body></html>",
            None,
            100,
        );
        assert_eq!(tiny.method, Method::Html2text);
        assert_eq!(tiny.title.as_deref(), Some("T"));
        assert!(tiny.markdown.contains("One"), "{}", tiny.markdown);

        let cut = extract(&html, None, 40);
        assert!(cut.truncated && cut.markdown.chars().count() == 40);
    }

    #[test]
    fn hostile_pages_are_bounded() {
        // Nested far deeper than any reader's recursion can take (this test's 2 MB stack).
        let deep = format!(
            "<html><body>{}secret text{}</body></html>",
            "<div>".repeat(200_000),
            "</div>".repeat(200_000)
        );
        let started = std::time::Instant::now();
        let e = extract(&deep, None, 1000);
        assert_eq!(e.method, Method::Text);
        assert_eq!(e.markdown, "secret text");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        // Too many elements.
        let wide = format!("<html><body>{}</body></html>", "<span>x</span>".repeat(200_000));
        assert_eq!(extract(&wide, None, 100).method, Method::Text);
        // Elements counted wherever they sit, and end tags that close nothing.
        for (name, page) in [
            (
                "svg",
                format!(
                    "<html><body><p>text</p><svg>{}</svg></body></html>",
                    "<g>".repeat(40_000)
                ),
            ),
            (
                "noscript",
                format!(
                    "<html><body><noscript>{}</noscript></body></html>",
                    "<div>".repeat(30_000)
                ),
            ),
            (
                "template",
                format!(
                    "<html><body><template>{}</template></body></html>",
                    "<div>".repeat(100_000)
                ),
            ),
            (
                "stray end tags",
                format!("<html><body>{}</body></html>", "<div></i>".repeat(100_000)),
            ),
            (
                "only stray end tags",
                format!("<html><body>{}x</body></html>", "</i>".repeat(100_000)),
            ),
        ] {
            let started = std::time::Instant::now();
            let e = extract(&page, None, 1000);
            assert_eq!(e.method, Method::Text, "{name}");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(3),
                "{name}: {:?}",
                started.elapsed()
            );
        }
        // Ordinary pages with unclosed paragraphs and list items are not mistaken for deep ones.
        let normal = format!(
            "<html><body><article>{}</article></body></html>",
            "<p>Some words about bread and yeast here.".repeat(500)
        );
        assert_eq!(shape(&normal).depth, 4);
        assert_ne!(extract(&normal, None, 100).method, Method::Text);
        assert_eq!(
            strip_tags("a<script>x<y</script>b<br>c &amp; d<!-- hidden -->"),
            "ab\nc & d"
        );
    }
}
