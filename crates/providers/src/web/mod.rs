//! The web: search providers, SSRF-safe page fetching, main-content extraction.

pub mod extract;
pub mod fetch;
pub mod search;
