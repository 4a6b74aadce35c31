//! A fake web: Mozilla Readability's test pages, plus URLs for every fetch failure.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::FakeState;

/// One test page: its directory name, title, words for ranking search results, and its HTML
/// (served from memory, like a real web server's cache).
#[derive(Debug, Clone)]
pub struct FakePage {
    pub name: String,
    pub title: String,
    pub excerpt: String,
    pub words: HashSet<String>,
    pub html: bytes::Bytes,
}

#[derive(Debug, Default)]
pub struct PageIndex {
    pub pages: Vec<FakePage>,
}

pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
}

impl PageIndex {
    pub fn load(dir: &Path) -> PageIndex {
        let mut pages = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return PageIndex::default();
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.join("source.html").is_file() {
                continue;
            }
            let meta: serde_json::Value = std::fs::read(path.join("expected-metadata.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            let name = entry.file_name().to_string_lossy().into_owned();
            let title = meta["title"]
                .as_str()
                .filter(|t| !t.is_empty())
                .unwrap_or(&name)
                .to_string();
            let excerpt = meta["excerpt"].as_str().unwrap_or("").to_string();
            let expected = std::fs::read_to_string(path.join("expected.html")).unwrap_or_default();
            let text = dom_query::Document::from(expected.as_str()).root().text().to_string();
            let words = words(&title).chain(words(&excerpt)).chain(words(&text)).collect();
            let html = std::fs::read(path.join("source.html")).unwrap_or_default().into();
            pages.push(FakePage {
                name,
                title,
                excerpt,
                words,
                html,
            });
        }
        pages.sort_by(|a, b| a.name.cmp(&b.name));
        PageIndex { pages }
    }

    /// Pages ranked by how many query words they contain; every query gets results, like a
    /// real engine (unmatched queries get a stable pseudo-random pick).
    pub fn rank(&self, query: &str, limit: usize) -> Vec<&FakePage> {
        let q: Vec<String> = words(query).collect();
        let seed = q
            .iter()
            .flat_map(|w| w.bytes())
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        let mut scored: Vec<(usize, u64, &FakePage)> = self
            .pages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let score = q.iter().filter(|w| p.words.contains(*w)).count();
                (score, (i as u64).wrapping_mul(2654435761) ^ seed, p)
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, _, p)| p).collect()
    }
}

async fn delay(state: &FakeState) {
    if !state.latency.page.is_zero() {
        tokio::time::sleep(state.latency.page).await;
    }
}

pub async fn page(State(state): State<Arc<FakeState>>, UrlPath(name): UrlPath<String>) -> Response {
    delay(&state).await;
    let nth = state.count("page#all");
    let fault = state.page_faults.lock().unwrap().get(&nth).cloned();
    if let Some(fault) = fault {
        return super::faults::respond(&fault).await;
    }
    if name.contains("..") || name.contains('/') {
        return StatusCode::NOT_FOUND.into_response();
    }
    match state.pages.pages.iter().find(|p| p.name == name) {
        Some(p) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], p.html.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

#[derive(serde::Deserialize)]
pub struct To {
    to: String,
}

pub async fn redirect(Query(to): Query<To>) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to)]).into_response()
}

pub async fn redirect_loop() -> Response {
    (StatusCode::FOUND, [(header::LOCATION, "/redirect-loop")]).into_response()
}

pub async fn status(UrlPath(code): UrlPath<u16>) -> Response {
    StatusCode::from_u16(code)
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        .into_response()
}

pub async fn slow() -> Response {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "too late".into_response()
}

pub async fn binary() -> Response {
    (
        [(header::CONTENT_TYPE, "application/octet-stream")],
        vec![0u8, 159, 146, 150],
    )
        .into_response()
}

pub async fn huge() -> Response {
    let para = "<p>".to_string() + &"All work and no play makes a very long page. ".repeat(100) + "</p>\n";
    let body = format!("<html><body><article>{}</article></body></html>", para.repeat(2500));
    ([(header::CONTENT_TYPE, "text/html")], body).into_response()
}
