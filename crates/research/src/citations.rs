//! Citation integrity: after synthesis, every URL must be one that was gathered and every
//! `[[wikilink]]` must resolve to a note of the vault. The work is `vault::inert::markdown`
//! (links in every syntax, after entity decoding and case folding); this module holds what
//! the pipelines share around it.

pub use scholia_vault::inert::{Links, Removed};

/// The key URLs are compared and deduplicated by: the normalised http(s) URL, else the text.
pub fn url_key(url: &str) -> String {
    scholia_vault::inert::normalize_url(url).unwrap_or_else(|| url.trim().trim_end_matches('/').to_string())
}

/// Every URL `markdown` links to, in any syntax (what a report already cites).
pub fn linked_urls(markdown: &str) -> Vec<String> {
    scholia_vault::inert::markdown(markdown, 1, &Links::none(), &|_| true)
        .1
        .urls
}

/// `markdown` with only gathered links and resolving wikilinks, made inert under a heading of
/// level `min_level - 1`.
pub fn enforce(markdown: &str, min_level: u8, links: &Links, resolves: &dyn Fn(&str) -> bool) -> (String, Removed) {
    scholia_vault::inert::markdown(markdown, min_level, links, resolves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_links() {
        assert_eq!(url_key("HTTPS://Example.org/a/#x"), "https://example.org/a");
        assert_eq!(url_key("not a url/"), "not a url");
        assert_eq!(
            linked_urls("[a](https://a.example/x) and <https://b.example> and https://c.example/y."),
            vec!["https://a.example/x", "https://b.example", "https://c.example/y"]
        );
    }
}
