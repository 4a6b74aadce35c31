//! Fake web search: DuckDuckGo's HTML results page (the real markup: result blocks,
//! `a.result__a`, `.result__snippet`, `uddg` redirect links, an ad, the 202 challenge page)
//! and SearXNG's JSON API, both ranking the fake web's pages.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Form, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::FakeState;
use super::web::FakePage;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The URLs a query returns: fake pages, or (for queries mentioning "edgecases") every kind
/// of page a fetch must refuse or survive.
fn results(state: &FakeState, query: &str) -> Vec<(String, String, String)> {
    let base = state.base();
    if query.to_lowercase().contains("edgecases") {
        return vec![
            (
                format!("{base}/binary"),
                "A binary file".into(),
                "Not a web page.".into(),
            ),
            (format!("{base}/status/404"), "A missing page".into(), "Gone.".into()),
            (
                format!("{base}/redirect?to=http://169.254.169.254/latest/meta-data"),
                "Metadata".into(),
                "Redirects to a private address.".into(),
            ),
            (
                format!("{base}/redirect-loop"),
                "Loop".into(),
                "Redirects forever.".into(),
            ),
            (
                format!("{base}/slow"),
                "A very slow page".into(),
                "It never finishes loading.".into(),
            ),
        ];
    }
    state
        .pages
        .rank(query, 8)
        .into_iter()
        .map(|p: &FakePage| (format!("{base}/pages/{}/", p.name), p.title.clone(), snippet(p, query)))
        .collect()
}

fn snippet(p: &FakePage, query: &str) -> String {
    let text = if p.excerpt.is_empty() {
        p.title.clone()
    } else {
        p.excerpt.clone()
    };
    let q: Vec<String> = super::web::words(query).collect();
    text.split_whitespace()
        .map(|w| {
            if q.contains(&w.to_lowercase()) {
                format!("<b>{}</b>", escape(w))
            } else {
                escape(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub async fn duckduckgo_get(State(state): State<Arc<FakeState>>, Query(q): Query<HashMap<String, String>>) -> Response {
    duckduckgo(state, q).await
}

pub async fn duckduckgo_post(State(state): State<Arc<FakeState>>, Form(q): Form<HashMap<String, String>>) -> Response {
    duckduckgo(state, q).await
}

async fn duckduckgo(state: Arc<FakeState>, params: HashMap<String, String>) -> Response {
    let query = params.get("q").cloned().unwrap_or_default();
    state.record("/html/", json!({"q": query}));
    if !state.latency.search.is_zero() {
        tokio::time::sleep(state.latency.search).await;
    }
    let nth = state.count("search#all");
    let fault = state.search_faults.lock().unwrap().get(&nth).cloned();
    if let Some(fault) = fault {
        return super::faults::respond(&fault).await;
    }
    let n = state.count(&format!("ddg#{query}"));
    let lower = query.to_lowercase();
    if lower.contains("ratelimit") && (!lower.contains("ratelimit-once") || n == 1) {
        let page = "<html><body><div class=\"anomaly-modal__title\">Unfortunately, bots use DuckDuckGo too.</div>\
                    <div class=\"anomaly-modal__description\">Please complete the following challenge.</div></body></html>";
        return (StatusCode::ACCEPTED, [(header::CONTENT_TYPE, "text/html")], page).into_response();
    }
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><title>{} at DuckDuckGo</title></head><body>\n<div id=\"links\" class=\"results\">\n",
        escape(&query)
    );
    html.push_str(
        "<div class=\"result results_links results_links_deep result--ad \">\n  <div class=\"links_main links_deep result__body\">\n    \
         <h2 class=\"result__title\"><a rel=\"nofollow\" class=\"result__a\" href=\"https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bing\">Sponsored result</a></h2>\n    \
         <a class=\"result__snippet\" href=\"https://duckduckgo.com/y.js?ad_domain=ads.example\">Buy things.</a>\n  </div>\n</div>\n",
    );
    for (url, title, snippet) in results(&state, &query) {
        let link = format!(
            "//duckduckgo.com/l/?uddg={}&amp;rut={:016x}",
            enc(&url),
            fastrand::u64(..)
        );
        let display = url.split("://").nth(1).unwrap_or(&url);
        html.push_str(&format!(
            "<div class=\"result results_links results_links_deep web-result \">\n  <div class=\"links_main links_deep result__body\">\n    \
             <h2 class=\"result__title\">\n      <a rel=\"nofollow\" class=\"result__a\" href=\"{link}\">{}</a>\n    </h2>\n    \
             <div class=\"result__extras\"><div class=\"result__extras__url\"><a class=\"result__url\" href=\"{link}\">{}</a></div></div>\n    \
             <a class=\"result__snippet\" href=\"{link}\">{snippet}</a>\n    <div class=\"clear\"></div>\n  </div>\n</div>\n",
            escape(&title),
            escape(display),
        ));
    }
    html.push_str("</div>\n</body></html>\n");
    ([(header::CONTENT_TYPE, "text/html; charset=UTF-8")], html).into_response()
}

pub async fn searxng(State(state): State<Arc<FakeState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    let query = params.get("q").cloned().unwrap_or_default();
    state.record("/search", json!({"q": query, "format": params.get("format")}));
    if params.get("format").map(String::as_str) != Some("json") {
        return (StatusCode::FORBIDDEN, "format not allowed").into_response();
    }
    if !state.latency.search.is_zero() {
        tokio::time::sleep(state.latency.search).await;
    }
    if query.to_lowercase().contains("ratelimit") {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "1")],
            "Too Many Requests",
        )
            .into_response();
    }
    let results: Vec<_> = results(&state, &query)
        .into_iter()
        .map(|(url, title, snippet)| {
            json!({"url": url, "title": title, "content": snippet.replace("<b>", "").replace("</b>", ""), "engine": "fake", "score": 1.0})
        })
        .collect();
    Json(json!({"query": query, "number_of_results": results.len(), "results": results, "answers": [], "suggestions": []})).into_response()
}
