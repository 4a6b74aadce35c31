//! Main-content extraction: a Readability port (dom_smoothie) to Markdown, falling back to
//! html2text over the whole page when no article is found.

use dom_smoothie::{Config, Readability, TextMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Readability,
    Html2text,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
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

/// Extracts the main content of `html` as Markdown, at most `max_chars` characters.
pub fn extract(html: &str, url: Option<&str>, max_chars: usize) -> Extracted {
    let config = Config {
        text_mode: TextMode::Markdown,
        ..Config::default()
    };
    let article = Readability::new(html, url.filter(|u| u.starts_with("http")), Some(config))
        .ok()
        .and_then(|mut r| r.parse().ok())
        .filter(|a| a.text_content.trim().chars().count() >= MIN_ARTICLE_CHARS);
    let (title, text, method) = match article {
        Some(a) => {
            let title = Some(a.title.trim().to_string()).filter(|t| !t.is_empty());
            (title, a.text_content.to_string(), Method::Readability)
        }
        None => (page_title(html), html2text_whole(html), Method::Html2text),
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
/// and link targets only cost tokens.
fn strip_link_targets(md: &str) -> String {
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
            out.push_str(&rest[open + 1..open + label_end]);
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
}
