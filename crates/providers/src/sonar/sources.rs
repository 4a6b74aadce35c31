//! The sources of a Sonar answer: OpenRouter's citations and `url_citation` annotations, or
//! else the URLs written in the answer, each once.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

/// Sources compare by their normalised URL.
fn url_key(url: &str) -> String {
    scholia_vault::inert::normalize_url(url).unwrap_or_else(|| url.trim().trim_end_matches('/').to_string())
}

/// A source a Sonar answer cites.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SonarSource {
    pub url: String,
    pub title: Option<String>,
}

/// Sources from OpenRouter's top-level `citations` and the message's `url_citation`
/// annotations, deduplicated in order (titles from annotations fill in).
pub fn sources(raw: &Value) -> Vec<SonarSource> {
    let mut out: Vec<SonarSource> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut push = |url: &str, title: Option<&str>| {
        let url = url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return;
        }
        let title = title.map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        match index.get(&url_key(url)) {
            Some(&i) => {
                if out[i].title.is_none() {
                    out[i].title = title;
                }
            }
            None => {
                index.insert(url_key(url), out.len());
                out.push(SonarSource {
                    url: url.to_string(),
                    title,
                });
            }
        }
    };
    for c in raw.get("citations").and_then(Value::as_array).into_iter().flatten() {
        match c {
            Value::String(u) => push(u, None),
            Value::Object(_) => push(
                c.get("url").and_then(Value::as_str).unwrap_or_default(),
                c.get("title").and_then(Value::as_str),
            ),
            _ => {}
        }
    }
    let annotations = raw.pointer("/choices/0/message/annotations").and_then(Value::as_array);
    for a in annotations.into_iter().flatten() {
        if a.get("type").and_then(Value::as_str) != Some("url_citation") {
            continue;
        }
        let c = a.get("url_citation").unwrap_or(a);
        if let Some(url) = c.get("url").and_then(Value::as_str) {
            push(url, c.get("title").and_then(Value::as_str));
        }
    }
    out
}

/// The http(s) URLs written in `text`, in order, once each (Markdown link syntax and trailing
/// punctuation left out).
pub fn urls_in(text: &str) -> Vec<SonarSource> {
    let mut out: Vec<SonarSource> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("http") {
        let tail = &rest[at..];
        let is_url = tail.starts_with("http://") || tail.starts_with("https://");
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '<' | '"' | '\'' | '`'))
            .unwrap_or(tail.len());
        let url = tail[..end].trim_end_matches(['.', ',', ';', ':', '!', '?']);
        if is_url && url.len() > "https://".len() && seen.insert(url_key(url)) {
            out.push(SonarSource {
                url: url.to_string(),
                title: None,
            });
        }
        rest = &tail[end.max(4)..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_in_the_answer_text() {
        let check = |text: &str, expected: &[&str]| {
            let got: Vec<String> = urls_in(text).into_iter().map(|s| s.url).collect();
            assert_eq!(got, expected, "{text}");
        };
        check("no links here", &[]);
        check(
            "See https://a.org/x. And [b](https://b.org/y), <https://c.org>!",
            &["https://a.org/x", "https://b.org/y", "https://c.org"],
        );
        check(
            "twice https://a.org/x and https://a.org/x; http://d.org/p?q=1",
            &["https://a.org/x", "http://d.org/p?q=1"],
        );
        check("httpx://no and https:// alone and httpsfoo", &[]);
    }

    #[test]
    fn sources_from_both_shapes() {
        let raw = json!({
            "citations": ["https://a.example/x", "https://b.example/", "not a url"],
            "choices": [{"message": {"content": "c", "annotations": [
                {"type": "url_citation", "url_citation": {"url": "https://b.example", "title": "B"}},
                {"type": "url_citation", "url_citation": {"url": "https://c.example/y", "title": "C"}},
                {"type": "file", "file": {"url": "https://d.example"}}
            ]}}]
        });
        let s = sources(&raw);
        let urls: Vec<&str> = s.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(
            urls,
            ["https://a.example/x", "https://b.example/", "https://c.example/y"]
        );
        assert_eq!(s[1].title.as_deref(), Some("B"), "the annotation's title fills in");
        let only_annotations = json!({"choices": [{"message": {"annotations": [
            {"type": "url_citation", "url_citation": {"url": "https://z.example"}}]}}]});
        assert_eq!(sources(&only_annotations).len(), 1);
        assert!(sources(&json!({})).is_empty());
    }
}
