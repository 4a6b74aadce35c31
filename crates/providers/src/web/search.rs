//! Web search providers behind one trait: DuckDuckGo's HTML endpoint (the default, no key) and
//! a SearXNG instance's JSON API. Base URLs are configurable so tests use loopback fakes.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use reqwest::Url;
use serde::Deserialize;

pub const DUCKDUCKGO_URL: &str = "https://html.duckduckgo.com";

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WebResult {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SearchError {
    #[error("{provider}: rate limited; try again in a minute")]
    RateLimited {
        provider: &'static str,
        retry_after: Option<Duration>,
    },
    #[error("{provider}: HTTP {status}{hint}")]
    Status {
        provider: &'static str,
        status: u16,
        hint: String,
    },
    #[error("{provider}: {reason}")]
    Request { provider: &'static str, reason: String },
    #[error("{provider}: timed out")]
    Timeout { provider: &'static str },
}

pub type SearchFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<WebResult>, SearchError>> + Send + 'a>>;

/// A web search provider.
pub trait WebSearch: Send + Sync {
    fn name(&self) -> &'static str;
    /// One request: the top `limit` results.
    fn search_once<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a>;
}

/// Searches with the provider, backing off (honouring Retry-After) while it rate-limits, until
/// `deadline`.
pub async fn search(
    provider: &dyn WebSearch,
    query: &str,
    limit: usize,
    deadline: Instant,
) -> Result<Vec<WebResult>, SearchError> {
    let started = Instant::now();
    let result = search_retrying(provider, query, limit, deadline).await;
    let ms = started.elapsed().as_millis() as u64;
    match &result {
        Ok(r) => tracing::info!(provider = provider.name(), ms, results = r.len(), "web search"),
        Err(e) => tracing::warn!(provider = provider.name(), ms, "web search failed: {e}"),
    }
    result
}

async fn search_retrying(
    provider: &dyn WebSearch,
    query: &str,
    limit: usize,
    deadline: Instant,
) -> Result<Vec<WebResult>, SearchError> {
    let mut delay = Duration::from_millis(800);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(SearchError::Timeout {
                provider: provider.name(),
            });
        }
        let attempt = tokio::time::timeout(left, provider.search_once(query, limit)).await;
        match attempt {
            Err(_) => {
                return Err(SearchError::Timeout {
                    provider: provider.name(),
                });
            }
            Ok(Err(SearchError::RateLimited {
                retry_after,
                provider: p,
            })) => {
                let wait = retry_after.unwrap_or(delay);
                if crate::http::past_deadline(wait, deadline) {
                    return Err(SearchError::RateLimited {
                        provider: p,
                        retry_after,
                    });
                }
                tracing::warn!("{p} rate-limited; retrying in {wait:?}");
                tokio::time::sleep(wait).await;
                delay = (delay * 2).min(Duration::from_secs(8));
            }
            Ok(other) => return other,
        }
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(concat!(
            "Mozilla/5.0 (X11; Linux x86_64) scholia/",
            env!("CARGO_PKG_VERSION")
        ))
        .timeout(Duration::from_secs(20))
        .build()
        .expect("HTTP client builds")
}

use crate::http::retry_after_header as retry_after;

/// A results page larger than this is refused.
const MAX_RESPONSE_BYTES: usize = 4 << 20;

/// DuckDuckGo's HTML results page (`POST /html/` with `q=`).
pub struct DuckDuckGo {
    http: reqwest::Client,
    base: String,
}

impl DuckDuckGo {
    pub fn new(base: &str) -> DuckDuckGo {
        DuckDuckGo {
            http: client(),
            base: base.trim_end_matches('/').to_string(),
        }
    }
}

impl WebSearch for DuckDuckGo {
    fn name(&self) -> &'static str {
        "DuckDuckGo"
    }

    fn search_once<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let err = |reason: String| SearchError::Request {
                provider: "DuckDuckGo",
                reason,
            };
            let resp = self
                .http
                .post(format!("{}/html/", self.base))
                .form(&[("q", query), ("kl", "")])
                .send()
                .await
                .map_err(|e| err(e.without_url().to_string()))?;
            let status = resp.status().as_u16();
            let after = retry_after(resp.headers());
            // DuckDuckGo answers a suspected bot with 202 and a challenge page.
            if status == 202 || status == 429 || status == 403 {
                return Err(SearchError::RateLimited {
                    provider: "DuckDuckGo",
                    retry_after: after,
                });
            }
            if !(200..300).contains(&status) {
                return Err(SearchError::Status {
                    provider: "DuckDuckGo",
                    status,
                    hint: String::new(),
                });
            }
            let html = crate::http::read_text(resp, MAX_RESPONSE_BYTES)
                .await
                .map_err(|e| err(e.to_string()))?;
            if html.contains("anomaly-modal") || html.contains("bots use DuckDuckGo too") {
                return Err(SearchError::RateLimited {
                    provider: "DuckDuckGo",
                    retry_after: after,
                });
            }
            Ok(parse_duckduckgo(&html, limit))
        })
    }
}

/// Results of DuckDuckGo's HTML page: `a.result__a` (title, link) and `.result__snippet`;
/// links are `//duckduckgo.com/l/?uddg=<target>` redirects; ads are skipped.
pub fn parse_duckduckgo(html: &str, limit: usize) -> Vec<WebResult> {
    let doc = dom_query::Document::from(html);
    let mut out: Vec<WebResult> = Vec::new();
    for result in doc.select("div.result").iter() {
        if out.len() >= limit {
            break;
        }
        if result.has_class("result--ad") {
            continue;
        }
        let link = result.select("a.result__a");
        let Some(href) = link.attr("href") else { continue };
        let Some(url) = decode_ddg_link(&href) else { continue };
        if out.iter().any(|r| r.url == url) {
            continue;
        }
        out.push(WebResult {
            title: squash(&link.text()),
            url,
            snippet: squash(&result.select(".result__snippet").text()),
        });
    }
    out
}

fn decode_ddg_link(href: &str) -> Option<String> {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_string()
    };
    let url = Url::parse(&absolute).ok()?;
    let target = if url.path() == "/l/" {
        url.query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned())?
    } else {
        absolute
    };
    let parsed = Url::parse(&target).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_some_and(|h| h.ends_with("duckduckgo.com"))
    {
        return None;
    }
    Some(target)
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A SearXNG instance's JSON API (`GET /search?q=…&format=json`).
pub struct Searxng {
    http: reqwest::Client,
    base: String,
}

impl Searxng {
    pub fn new(base: &str) -> Searxng {
        Searxng {
            http: client(),
            base: base.trim_end_matches('/').to_string(),
        }
    }
}

#[derive(Deserialize)]
struct SearxResponse {
    #[serde(default)]
    results: Vec<SearxResult>,
}

#[derive(Deserialize)]
struct SearxResult {
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

impl WebSearch for Searxng {
    fn name(&self) -> &'static str {
        "SearXNG"
    }

    fn search_once<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let err = |reason: String| SearchError::Request {
                provider: "SearXNG",
                reason,
            };
            let resp = self
                .http
                .get(format!("{}/search", self.base))
                .query(&[("q", query), ("format", "json")])
                .send()
                .await
                .map_err(|e| err(e.without_url().to_string()))?;
            let status = resp.status().as_u16();
            if status == 429 {
                return Err(SearchError::RateLimited {
                    provider: "SearXNG",
                    retry_after: retry_after(resp.headers()),
                });
            }
            if status == 403 {
                let hint = "; the instance does not allow format=json (enable it under search.formats in settings.yml)";
                return Err(SearchError::Status {
                    provider: "SearXNG",
                    status,
                    hint: hint.into(),
                });
            }
            if !(200..300).contains(&status) {
                return Err(SearchError::Status {
                    provider: "SearXNG",
                    status,
                    hint: String::new(),
                });
            }
            let bytes = crate::http::read_body(resp, MAX_RESPONSE_BYTES)
                .await
                .map_err(|e| err(e.to_string()))?;
            let body: SearxResponse =
                serde_json::from_slice(&bytes).map_err(|e| err(format!("unexpected response: {e}")))?;
            let mut out: Vec<WebResult> = Vec::new();
            for r in body.results {
                if out.len() >= limit {
                    break;
                }
                if !(r.url.starts_with("http://") || r.url.starts_with("https://"))
                    || out.iter().any(|o| o.url == r.url)
                {
                    continue;
                }
                out.push(WebResult {
                    title: squash(&r.title),
                    url: r.url,
                    snippet: squash(&r.content),
                });
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duckduckgo_markup() {
        let html = r#"
<div class="result results_links results_links_deep result--ad">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;u3=x">Buy now</a></h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?x">An ad.</a>
  </div>
</div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FSourdough&amp;rut=abc">Sourdough - <b>Wikipedia</b></a></h2>
    <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FSourdough&amp;rut=abc">en.wikipedia.org/wiki/Sourdough</a></div></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">Sourdough is bread made by the <b>fermentation</b> of dough &amp; more.</a>
  </div>
</div>
<div class="result results_links results_links_deep web-result ">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://plain.example/page">Plain</a></h2>
  <div class="result__snippet">No redirect here.</div>
</div>
<div class="result"><a class="result__a" href="javascript:alert(1)">Bad</a></div>
"#;
        let got = parse_duckduckgo(html, 10);
        assert_eq!(
            got,
            vec![
                WebResult {
                    title: "Sourdough - Wikipedia".into(),
                    url: "https://en.wikipedia.org/wiki/Sourdough".into(),
                    snippet: "Sourdough is bread made by the fermentation of dough & more.".into(),
                },
                WebResult {
                    title: "Plain".into(),
                    url: "https://plain.example/page".into(),
                    snippet: "No redirect here.".into()
                },
            ]
        );
        assert_eq!(parse_duckduckgo(html, 1).len(), 1);
        assert!(parse_duckduckgo("<div class=\"no-results\">No results.</div>", 5).is_empty());
    }
}
