//! Loopback fakes of every remote API scholia talks to, for tests, benchmarks and editor
//! end-to-end runs (also as a process: the `scholia-fakes` binary). They speak the real wire
//! formats; the client code paths are the real ones, only base URLs differ.
//!
//! One server hosts them all:
//! - `POST /v1/chat/completions` — OpenAI-compatible chat, streamed as server-sent events when
//!   asked (and OpenRouter's shape for `perplexity/*` models). The model name selects
//!   misbehaviour, e.g. `fake:reject-schema=llama-cpp-python,latency=300` (see
//!   [`llm::Behaviour`]); `GET /props` and `POST /api/show` report a context window when one
//!   is set ([`FakeServer::report_window`]).
//! - `POST /v1/embeddings` — OpenAI-compatible embeddings that know a few concepts by several
//!   names ([`embed`]).
//! - `GET|POST /html/` — DuckDuckGo's HTML results page; `GET /search?format=json` — SearXNG.
//! - `GET /pages/<name>/` — the readability test pages; `/redirect`, `/status/<code>`, … for
//!   fetch edge cases.
//! - `GET /hub/{owner}/{name}/resolve/{revision}/{file}` — a Hugging Face-style model hub
//!   ([`hub`]).
//! - `GET /_requests` — every request body received, for assertions.

pub mod embed;
pub mod faults;
pub mod hub;
pub mod interactions;
pub mod llm;
pub mod postgres;
pub mod search;
pub mod web;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

/// Fixed latencies, for the pipeline-overhead benchmark.
#[derive(Debug, Clone, Copy, Default)]
pub struct Latency {
    pub llm: Duration,
    pub search: Duration,
    pub page: Duration,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Recorded {
    pub path: String,
    pub body: serde_json::Value,
}

pub struct FakeState {
    pub pages_dir: PathBuf,
    pub latency: Latency,
    /// Filled in once the listener is bound: links in fake search results point here.
    pub base: Mutex<String>,
    pub requests: Mutex<Vec<Recorded>>,
    /// Per-model request counters for "first N requests fail" behaviours.
    pub counters: Mutex<std::collections::HashMap<String, u32>>,
    /// Faults for the n-th web search and the n-th page request (see [`faults::respond`]).
    pub search_faults: Mutex<std::collections::HashMap<u32, String>>,
    pub page_faults: Mutex<std::collections::HashMap<u32, String>>,
    pub pages: web::PageIndex,
    /// The context window `/props` (llama.cpp) or `/api/show` (Ollama) reports, when set.
    pub window: Mutex<Option<llm::Window>>,
    /// Streamed answers started, for `interrupt`.
    pub streams: std::sync::atomic::AtomicU64,
    /// Gemini interactions by id.
    pub interactions: Mutex<std::collections::HashMap<String, interactions::Interaction>>,
    /// The model directories the fake hub serves, by `owner/name`.
    pub hub_models: Mutex<std::collections::HashMap<String, PathBuf>>,
}

impl FakeState {
    fn record(&self, path: &str, body: serde_json::Value) {
        self.requests.lock().unwrap().push(Recorded {
            path: path.to_string(),
            body,
        });
    }

    /// Increments and returns the counter for `key` (1 for the first request).
    fn count(&self, key: &str) -> u32 {
        let mut c = self.counters.lock().unwrap();
        let n = c.entry(key.to_string()).or_insert(0);
        *n += 1;
        *n
    }

    pub fn base(&self) -> String {
        self.base.lock().unwrap().clone()
    }
}

/// A running fake server; dropping it stops the server.
pub struct FakeServer {
    pub addr: SocketAddr,
    pub state: Arc<FakeState>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeServer {
    /// Binds 127.0.0.1 on `port` (0 for any) and serves in the current runtime.
    pub async fn start(pages_dir: PathBuf, latency: Latency, port: u16) -> std::io::Result<FakeServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(FakeState {
            pages: web::PageIndex::load(&pages_dir),
            pages_dir,
            latency,
            base: Mutex::new(format!("http://{addr}")),
            requests: Mutex::new(Vec::new()),
            counters: Mutex::new(Default::default()),
            search_faults: Mutex::new(Default::default()),
            page_faults: Mutex::new(Default::default()),
            window: Mutex::new(None),
            streams: std::sync::atomic::AtomicU64::new(0),
            interactions: Mutex::new(Default::default()),
            hub_models: Mutex::new(Default::default()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(llm::chat))
            .route("/v1/embeddings", post(embed::embeddings))
            .route("/props", get(llm::props))
            .route("/openapi.json", get(llm::openapi))
            .route("/v1/completions", post(llm::completions))
            .route("/v1beta/interactions", post(interactions::create))
            .route("/v1beta/interactions/{id}", get(interactions::get))
            .route("/v1beta/interactions/{id}/cancel", post(interactions::cancel))
            .route("/api/show", post(llm::ollama_show))
            .route("/html/", get(search::duckduckgo_get).post(search::duckduckgo_post))
            .route("/html", get(search::duckduckgo_get).post(search::duckduckgo_post))
            .route("/search", get(search::searxng))
            .route("/pages/{name}/", get(web::page))
            .route("/pages/{name}", get(web::page))
            .route("/redirect", get(web::redirect))
            .route("/redirect-loop", get(web::redirect_loop))
            .route("/status/{code}", get(web::status))
            .route("/slow", get(web::slow))
            .route("/binary", get(web::binary))
            .route("/huge", get(web::huge))
            .route("/hub/{*path}", get(hub::resolve))
            .route("/hub-lfs/{sha}", get(hub::lfs))
            .route("/_requests", get(requests))
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeServer { addr, state, task })
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The fake hub serves the model directory `dir` as `repo` (`owner/name`).
    pub fn host_model(&self, repo: &str, dir: PathBuf) {
        self.state.hub_models.lock().unwrap().insert(repo.to_string(), dir);
    }

    /// The `nth` web search (1-based, counted from the last reset) fails with `fault`.
    pub fn fail_search(&self, nth: u32, fault: &str) {
        self.state.search_faults.lock().unwrap().insert(nth, fault.to_string());
    }

    /// The `nth` page request fails with `fault`.
    pub fn fail_page(&self, nth: u32, fault: &str) {
        self.state.page_faults.lock().unwrap().insert(nth, fault.to_string());
    }

    /// The server reports its context window as llama.cpp (`/props`) or Ollama (`/api/show`)
    /// does; `None`: neither endpoint exists (llama-cpp-python, OpenAI).
    pub fn report_window(&self, window: Option<llm::Window>) {
        *self.state.window.lock().unwrap() = window;
    }

    /// No faults; search and page requests are counted from one again.
    pub fn reset_faults(&self) {
        self.state.search_faults.lock().unwrap().clear();
        self.state.page_faults.lock().unwrap().clear();
        let mut c = self.state.counters.lock().unwrap();
        c.remove("search#all");
        c.remove("page#all");
    }

    /// Bodies of the requests received on `path`.
    /// The path of every request so far, in order.
    pub fn all_requests(&self) -> Vec<String> {
        self.state
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.path.clone())
            .collect()
    }

    /// How many requests went to a path starting with `prefix`.
    pub fn count_prefixed(&self, prefix: &str) -> usize {
        self.state
            .requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path.starts_with(prefix))
            .count()
    }

    pub fn requests(&self, path: &str) -> Vec<serde_json::Value> {
        self.state
            .requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == path)
            .map(|r| r.body.clone())
            .collect()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn requests(axum::extract::State(state): axum::extract::State<Arc<FakeState>>) -> axum::Json<Vec<Recorded>> {
    axum::Json(state.requests.lock().unwrap().clone())
}
