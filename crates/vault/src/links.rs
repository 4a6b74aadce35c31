//! Which links text written in a run may keep: the URLs gathered in that run, compared after
//! entity decoding, case folding and percent-decoding.

use std::collections::HashSet;
use std::ops::Range;

/// The URLs text written in a run may link to: the sources gathered in that run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    urls: HashSet<String>,
}

impl Links {
    /// No URL at all (offline research, notes only).
    pub fn none() -> Links {
        Links::default()
    }

    pub fn from_urls<S: AsRef<str>>(urls: impl IntoIterator<Item = S>) -> Links {
        Links {
            urls: urls.into_iter().filter_map(|u| normalize_url(u.as_ref())).collect(),
        }
    }

    /// Whether `url` (as written, entities already decoded) is one of the gathered URLs.
    pub fn allows(&self, url: &str) -> bool {
        normalize_url(url).is_some_and(|u| self.urls.contains(&u))
    }

    pub fn insert(&mut self, url: &str) {
        if let Some(u) = normalize_url(url) {
            self.urls.insert(u);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    pub fn extend(&mut self, other: &Links) {
        self.urls.extend(other.urls.iter().cloned());
    }
}

/// An http(s) URL as compared: scheme and host lower-cased (by the URL parser), without its
/// fragment and trailing slash. Anything else is not a URL a note may link to.
pub fn normalize_url(url: &str) -> Option<String> {
    let mut parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return None;
    }
    parsed.set_fragment(None);
    // `(` and `%28` are one address: compare with every escape decoded.
    let decoded = percent_encoding::percent_decode_str(parsed.as_str()).decode_utf8_lossy();
    Some(decoded.trim_end_matches('/').to_string())
}

/// What [`markdown`] removed: link targets that were not gathered, wikilinks that do not resolve.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    pub urls: Vec<String>,
    pub wikilinks: Vec<String>,
}

impl Removed {
    pub fn count(&self) -> usize {
        self.urls.len() + self.wikilinks.len()
    }
}

/// Ranges of `scheme://…` URLs in `t`, without trailing punctuation. A bare `scheme://` counts
/// too: quoted into a template, whatever follows it there (Arabic's `،` after a folder named
/// `+:`, found by the hardening proptest) would make it a URL.
pub(crate) fn urls_in(t: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = t[from..].find("://").map(|i| from + i) {
        let start = t[..i]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .last()
            .map(|(j, _)| j)
            .unwrap_or(i);
        let len = t[i..]
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`' | ')' | ']'))
            .unwrap_or(t.len() - i);
        let end = i + t[i..i + len]
            .trim_end_matches(['.', ',', ';', ':', '!', '?', '\''])
            .len();
        if start < i && end >= i + 3 {
            out.push(start..end);
        }
        from = (i + len).max(i + 3);
    }
    out
}
