//! deep_search (DESIGN §7, seeds 002 and 003): multi-round research with verification. Round 1
//! drafts a report from five perspectives; rounds 2..N verify and update it until a round says
//! `verified: true` or the rounds run out. Two backends run a round: the Gemini CLI (which
//! searches and reads itself) and the research LLM fed by scholia's own web search and fetcher.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::citations;
use crate::config::DeepSearchBackend;
use crate::gemini_cli::{CliError, GeminiCli, Purpose, Tokens};
use crate::llm::{ChatClient, Message, Usage};
use crate::prompts::untrusted;
use crate::web::search as websearch;

pub const MAX_QUERY_CHARS: usize = 2_000;
pub const MAX_ITERATIONS_LIMIT: u32 = 50;
/// Whole main-prompt-then-correction cycles per round before the round fails.
pub const JSON_CYCLES: usize = 3;
/// Waits before cycle 2, 3 (and a 4th, were there one).
pub const CYCLE_BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(5)];
const QUERIES_PER_ROUND: usize = 5;
const RESULTS_PER_QUERY: usize = 5;
const PAGES_PER_ROUND: usize = 5;
const PAGE_CHARS: usize = 12_000;
const SEARCH_TIMEOUT: Duration = Duration::from_secs(30);
const SUMMARY_CHARS: usize = 300;

/// The JSON every round must answer with; also the example shown to the model and the
/// correction prompt.
pub fn schema_example() -> String {
    serde_json::to_string_pretty(&json!({
        "success": true,
        "verified": false,
        "report": "## Answer\n\nMarkdown report citing [sources](https://example.org/page) inline…",
        "metadata": {
            "sources_visited": ["https://example.org/page"],
            "search_queries_used": ["first search query", "second search query"],
            "summary": "One or two sentences: what the report concludes (or what this round changed)."
        }
    }))
    .expect("serializable")
}

fn round_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "verified": {"type": "boolean"},
            "report": {"type": "string"},
            "metadata": {
                "type": "object",
                "properties": {
                    "sources_visited": {"type": "array", "items": {"type": "string"}},
                    "search_queries_used": {"type": "array", "items": {"type": "string"}},
                    "summary": {"type": "string"}
                }
            }
        },
        "required": ["verified", "report"]
    })
}

#[derive(Debug, Clone, Deserialize)]
struct RoundJson {
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    verified: bool,
    #[serde(alias = "result")]
    report: String,
    #[serde(default)]
    metadata: RoundJsonMeta,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RoundJsonMeta {
    #[serde(default)]
    sources_visited: Vec<String>,
    #[serde(default, alias = "search_queries")]
    search_queries_used: Vec<String>,
    #[serde(default)]
    summary: Option<String>,
}

/// Parses a round's answer: the outermost JSON object (fenced or not) with a non-empty report.
fn parse_round(text: &str) -> Result<RoundJson, String> {
    let value = crate::llm::json::extract(text).ok_or("no JSON object found")?;
    let round: RoundJson = serde_json::from_value(value).map_err(|e| format!("JSON has the wrong shape: {e}"))?;
    if round.report.trim().is_empty() {
        return Err("the report is empty".into());
    }
    if round.success == Some(false) {
        return Err("the round reported success: false".into());
    }
    Ok(round)
}

#[derive(Debug, Clone)]
pub struct DeepSearchRequest {
    pub query: String,
    pub backend: Option<DeepSearchBackend>,
    pub max_iterations: Option<u32>,
}

/// The seed's error shape: a code and a message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DeepSearchError {
    pub code: &'static str,
    pub message: String,
    /// Every later round would fail the same way (missing CLI, bad login, cancelled).
    stops_the_loop: bool,
}

impl DeepSearchError {
    fn new(code: &'static str, message: impl Into<String>) -> DeepSearchError {
        DeepSearchError {
            code,
            message: message.into(),
            stops_the_loop: false,
        }
    }

    fn invalid(message: impl Into<String>) -> DeepSearchError {
        DeepSearchError::new("INVALID_INPUT", message)
    }

    pub fn cancelled() -> DeepSearchError {
        DeepSearchError {
            stops_the_loop: true,
            ..DeepSearchError::new("CANCELLED", "cancelled; nothing was written")
        }
    }
}

impl From<CliError> for DeepSearchError {
    fn from(e: CliError) -> DeepSearchError {
        if matches!(e, CliError::Cancelled) {
            return DeepSearchError::cancelled();
        }
        DeepSearchError {
            stops_the_loop: e.is_fatal(),
            ..DeepSearchError::new(e.code(), e.to_string())
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundMeta {
    pub round_number: u32,
    pub sources_visited: Vec<String>,
    pub search_queries: Vec<String>,
    pub intermediate_result_summary: String,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Metadata {
    pub duration_ms: u64,
    pub query: String,
    pub model: String,
    pub timestamp: String,
    pub iterations: u32,
    pub max_iterations: u32,
    pub backend: &'static str,
    pub sources_visited: Vec<String>,
    pub search_queries_used: Vec<String>,
    pub rounds: Vec<RoundMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Links the LLM backend removed because they were never gathered.
    pub citations_removed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeepSearchResult {
    pub success: bool,
    /// The final Markdown report.
    pub result: String,
    pub verified: bool,
    /// Set when verification did not complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub metadata: Metadata,
}

/// Progress for `$/progress` and the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeepEvent {
    Started { backend: &'static str, max: u32 },
    RoundStarted { n: u32, max: u32 },
    Correcting { n: u32, cycle: usize },
    RoundCompleted { n: u32, max: u32, verified: bool },
    RoundFailed { n: u32, max: u32, error: String },
}

impl DeepEvent {
    pub fn message(&self) -> String {
        match self {
            DeepEvent::Started { backend, max } => format!("deep search with {backend}, at most {max} rounds"),
            DeepEvent::RoundStarted { n, max } => format!("round {n}/{max}"),
            DeepEvent::Correcting { n, cycle } => format!("round {n}: correcting invalid JSON (attempt {cycle})"),
            DeepEvent::RoundCompleted { n, max, verified } => {
                format!("round {n}/{max} done, verified: {verified}")
            }
            DeepEvent::RoundFailed { n, max, error } => format!("round {n}/{max} failed: {error}"),
        }
    }

    /// `None` keeps the previous percentage.
    pub fn percent(&self) -> Option<u32> {
        match self {
            DeepEvent::Started { .. } => Some(2),
            DeepEvent::RoundStarted { n, max } => Some(5 + 90 * (n - 1) / max),
            DeepEvent::Correcting { .. } => None,
            DeepEvent::RoundCompleted { n, max, .. } | DeepEvent::RoundFailed { n, max, .. } => Some(5 + 90 * n / max),
        }
    }
}

/// The seed's progress lines go to stderr on every surface (stdout is the protocol for LSP/MCP).
fn info(line: String) {
    eprintln!("[INFO] {line}");
}

/// How a backend's round went.
struct RoundOutput {
    verified: bool,
    report: String,
    sources: Vec<String>,
    queries: Vec<String>,
    summary: String,
}

/// Accumulates what rounds spent and which model ran them.
#[derive(Default)]
struct Spend {
    tokens: Option<Tokens>,
    usage: Option<Usage>,
    detected_model: Option<String>,
    citations_removed: usize,
}

/// Checks the request and settles the backend and the round count.
pub fn validate(engine: &Engine, req: &DeepSearchRequest) -> Result<(DeepSearchBackend, u32), DeepSearchError> {
    let query = req.query.trim();
    if query.is_empty() {
        return Err(DeepSearchError::invalid("query: empty; give the question to research"));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(DeepSearchError::invalid(format!(
            "query: {} characters is longer than {MAX_QUERY_CHARS}; give a question, not a document",
            query.chars().count()
        )));
    }
    let max = match req.max_iterations {
        None => engine.settings.deep_search_max_iterations,
        Some(n) if n > MAX_ITERATIONS_LIMIT => {
            return Err(DeepSearchError::invalid(format!(
                "max_iterations: {n} is not valid; valid: an integer from 2 to {MAX_ITERATIONS_LIMIT} (below 2 becomes 2)"
            )));
        }
        Some(n) => n.max(2),
    };
    let cli = GeminiCli::new(&engine.settings.gemini_cli.program, &engine.settings.dirs.config);
    let backend = match req.backend.or(engine.settings.deep_search_backend) {
        Some(b) => b,
        None if cli.is_installed() => DeepSearchBackend::GeminiCli,
        None if engine.llm.is_some() => DeepSearchBackend::Llm,
        None => {
            return Err(DeepSearchError::new(
                "CLI_NOT_FOUND",
                format!(
                    "deep search needs the Gemini CLI or a research LLM: the Gemini CLI `{}` was not found \
                     (install it with `{}`) and no LLM is configured (set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL)",
                    cli.program(),
                    crate::gemini_cli::INSTALL_HINT
                ),
            ));
        }
    };
    if backend == DeepSearchBackend::Llm && engine.llm.is_none() {
        return Err(DeepSearchError::invalid(
            "backend: llm needs a research LLM; set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL, or use --backend gemini-cli",
        ));
    }
    Ok((backend, max))
}

/// Runs the rounds. Never writes anything but the CLI's temp files (deleted again).
pub async fn deep_search(
    engine: &Engine,
    req: &DeepSearchRequest,
    progress: &(dyn Fn(DeepEvent) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<DeepSearchResult, DeepSearchError> {
    let (backend, max) = validate(engine, req)?;
    let query = req.query.trim().to_string();
    let started = Instant::now();
    let timestamp = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let mut cli = GeminiCli::new(&engine.settings.gemini_cli.program, &engine.settings.dirs.config);
    cli.timeout = engine.settings.gemini_cli.timeout;
    cli.kill_grace = cli.kill_grace.min(cli.timeout);
    if backend == DeepSearchBackend::GeminiCli {
        // Fails fast with CLI_NOT_FOUND before any round.
        cli.json_output().await?;
    }
    progress(DeepEvent::Started {
        backend: backend.as_str(),
        max,
    });

    let mut spend = Spend::default();
    let mut rounds: Vec<RoundMeta> = Vec::new();
    let mut best: Option<RoundOutput> = None;
    let mut last_error = String::new();
    let mut iterations = 0;
    for n in 1..=max {
        if cancel.is_cancelled() {
            return Err(DeepSearchError::cancelled());
        }
        iterations = n;
        info(format!("Deep search round {n}/{max}..."));
        progress(DeepEvent::RoundStarted { n, max });
        let current = best.as_ref().map(|b| b.report.as_str());
        let outcome = match backend {
            DeepSearchBackend::GeminiCli => {
                cli_round(engine, &cli, &query, n, current, &mut spend, progress, cancel).await
            }
            DeepSearchBackend::Llm => {
                let llm = engine.llm.as_deref().expect("validated");
                tokio::select! {
                    r = llm_round(engine, llm, &query, n, current, &mut spend) => r,
                    _ = cancel.cancelled() => Err(DeepSearchError::cancelled()),
                }
            }
        };
        match outcome {
            Ok(out) => {
                info(format!("Round {n} completed, verified: {}", out.verified));
                progress(DeepEvent::RoundCompleted {
                    n,
                    max,
                    verified: out.verified,
                });
                rounds.push(RoundMeta {
                    round_number: n,
                    sources_visited: out.sources.clone(),
                    search_queries: out.queries.clone(),
                    intermediate_result_summary: out.summary.clone(),
                    verified: out.verified,
                    error: None,
                });
                let verified = out.verified;
                best = Some(out);
                if verified {
                    break;
                }
            }
            Err(e) if e.stops_the_loop => return Err(e),
            Err(e) => {
                eprintln!("[ERROR] Deep search round {n} failed: {}", e.message);
                progress(DeepEvent::RoundFailed {
                    n,
                    max,
                    error: e.message.clone(),
                });
                rounds.push(RoundMeta {
                    round_number: n,
                    sources_visited: Vec::new(),
                    search_queries: Vec::new(),
                    intermediate_result_summary: String::new(),
                    verified: false,
                    error: Some(e.message.clone()),
                });
                last_error = e.message;
            }
        }
    }
    let Some(best) = best else {
        info(format!("Deep search completed: {iterations} rounds, verified: false"));
        return Err(DeepSearchError::new(
            "EXECUTION_ERROR",
            format!("deep search failed: all {iterations} rounds failed; last error: {last_error}"),
        ));
    };
    info(format!(
        "Deep search completed: {iterations} rounds, verified: {}",
        best.verified
    ));
    let failed = rounds.iter().filter(|r| r.error.is_some()).count();
    let note = (!best.verified).then(|| {
        let mut n = format!("Verification was not completed: the result was not confirmed within {iterations} rounds");
        if failed > 0 {
            n.push_str(&format!(" ({failed} failed)"));
        }
        n.push_str("; this is the best result obtained.");
        n
    });
    let configured = match backend {
        DeepSearchBackend::GeminiCli => engine.settings.gemini_cli.model.clone(),
        DeepSearchBackend::Llm => engine.llm.as_ref().map(|l| l.model().to_string()),
    };
    Ok(DeepSearchResult {
        success: true,
        verified: best.verified,
        note,
        metadata: Metadata {
            duration_ms: started.elapsed().as_millis() as u64,
            query,
            model: configured
                .or(spend.detected_model)
                .unwrap_or_else(|| "auto-detected".into()),
            timestamp,
            iterations,
            max_iterations: max,
            backend: backend.as_str(),
            sources_visited: dedupe(rounds.iter().flat_map(|r| r.sources_visited.iter())),
            search_queries_used: dedupe(rounds.iter().flat_map(|r| r.search_queries.iter())),
            rounds,
            tokens: spend.tokens,
            usage: spend.usage,
            citations_removed: spend.citations_removed,
        },
        result: best.report,
    })
}

fn dedupe<'a>(items: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .filter(|s| !s.trim().is_empty() && seen.insert(s.trim().to_lowercase()))
        .map(|s| s.trim().to_string())
        .collect()
}

fn summary_of(summary: Option<String>, report: &str) -> String {
    let s = summary
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| report.to_string());
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= SUMMARY_CHARS {
        return s;
    }
    let mut cut: String = s.chars().take(SUMMARY_CHARS).collect();
    cut.push('…');
    cut
}

fn render_round_prompt(
    engine: &Engine,
    query: &str,
    n: u32,
    current: Option<&str>,
    material: Option<String>,
) -> Result<String, DeepSearchError> {
    let r = match current {
        None => engine.library.render(
            "prompts/deep-search-prompt.md",
            json!({"query": untrusted(query), "schema": schema_example(), "material": material}),
        ),
        Some(current) => engine.library.render(
            "prompts/verify-prompt.md",
            json!({"query": untrusted(query), "current": untrusted(current), "round": n, "schema": schema_example(), "material": material}),
        ),
    };
    r.map_err(|e| DeepSearchError::new("EXECUTION_ERROR", format!("template: {e}")))
}

/// One round through the Gemini CLI, with the seed-003 JSON cycle: main prompt; on invalid JSON
/// a correction run over a temp file; on failed correction the whole cycle again after a
/// backoff; `EXECUTION_ERROR` after [`JSON_CYCLES`].
#[allow(clippy::too_many_arguments)]
async fn cli_round(
    engine: &Engine,
    cli: &GeminiCli,
    query: &str,
    n: u32,
    current: Option<&str>,
    spend: &mut Spend,
    progress: &(dyn Fn(DeepEvent) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<RoundOutput, DeepSearchError> {
    let prompt = render_round_prompt(engine, query, n, current, None)?;
    let settings = &engine.settings.gemini_cli;
    for cycle in 1..=JSON_CYCLES {
        let out = cli
            .run(&prompt, settings.model.as_deref(), Purpose::Search, cancel)
            .await
            .map_err(DeepSearchError::from)?;
        spend.add_cli(&out);
        let parse_error = match parse_round(&out.response) {
            Ok(r) => return Ok(cli_output(r)),
            Err(e) => e,
        };
        tracing::warn!("round {n}: output is not valid JSON ({parse_error}); attempting correction");
        progress(DeepEvent::Correcting { n, cycle });
        match correct(engine, cli, &out.response, cancel, spend).await {
            Ok(r) => return Ok(cli_output(r)),
            Err(CliError::Cancelled) => return Err(DeepSearchError::cancelled()),
            Err(e) if e.is_fatal() => return Err(e.into()),
            Err(e) => eprintln!("[ERROR] JSON correction failed (round {n}, attempt {cycle}/{JSON_CYCLES}): {e}"),
        }
        if cycle < JSON_CYCLES {
            let wait = CYCLE_BACKOFF[cycle - 1];
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return Err(DeepSearchError::cancelled()),
            }
        }
    }
    Err(DeepSearchError::new(
        "EXECUTION_ERROR",
        format!(
            "round {n}: the Gemini CLI's output was not valid JSON in {JSON_CYCLES} attempts; all retry and correction attempts were exhausted"
        ),
    ))
}

fn cli_output(r: RoundJson) -> RoundOutput {
    RoundOutput {
        verified: r.verified,
        summary: summary_of(r.metadata.summary, &r.report),
        report: r.report,
        sources: r.metadata.sources_visited,
        queries: r.metadata.search_queries_used,
    }
}

impl Spend {
    fn add_cli(&mut self, out: &crate::gemini_cli::CliOutput) {
        self.tokens.get_or_insert_with(Tokens::default).add(&out.tokens);
        if self.detected_model.is_none() {
            self.detected_model = out.models.first().cloned();
        }
    }

    fn add_llm(&mut self, u: &Usage) {
        self.usage.get_or_insert_with(Usage::default).add(u);
    }
}

/// Writes the invalid output to a temp file, asks the CLI to reformat it, deletes the file.
async fn correct(
    engine: &Engine,
    cli: &GeminiCli,
    invalid: &str,
    cancel: &CancellationToken,
    spend: &mut Spend,
) -> Result<RoundJson, CliError> {
    let path = cli.write_temp(invalid).map_err(|e| CliError::Io {
        program: cli.program().into(),
        message: format!("writing the temp file for JSON correction: {e}"),
    })?;
    let prompt = engine.library.render(
        "prompts/json-correction.md",
        json!({"path": path.display().to_string(), "schema": schema_example()}),
    );
    let result = match prompt {
        Err(e) => Err(CliError::Io {
            program: cli.program().into(),
            message: format!("template: {e}"),
        }),
        Ok(prompt) => {
            let model = engine.settings.gemini_cli.correction_model.as_deref();
            cli.run(&prompt, model, Purpose::Correction, cancel).await
        }
    };
    if let Err(e) = std::fs::remove_file(&path) {
        eprintln!("[ERROR] could not delete {}: {e}", path.display());
        tracing::error!("could not delete {}: {e}", path.display());
    }
    let out = result?;
    spend.add_cli(&out);
    parse_round(&out.response).map_err(|e| CliError::Io {
        program: cli.program().into(),
        message: format!("the corrected output is still not valid: {e}"),
    })
}

#[derive(Deserialize)]
struct Queries {
    queries: Vec<String>,
}

/// One round with the research LLM: it plans queries, scholia searches and reads pages, the LLM
/// writes the round's JSON from that material, and citations are checked against it.
async fn llm_round(
    engine: &Engine,
    llm: &ChatClient,
    query: &str,
    n: u32,
    current: Option<&str>,
    spend: &mut Spend,
) -> Result<RoundOutput, DeepSearchError> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| DeepSearchError::new("EXECUTION_ERROR", format!("{what}: {e}"));
    let system = engine
        .library
        .render("prompts/system.md", json!({}))
        .map_err(|e| failed("template", &e))?;
    let plan = engine
        .library
        .render(
            "prompts/deep-search-queries.md",
            json!({"query": untrusted(query), "current": current.map(untrusted), "max": QUERIES_PER_ROUND}),
        )
        .map_err(|e| failed("template", &e))?;
    let queries_schema = json!({"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}}, "required": ["queries"]});
    let (planned, usage): (Queries, Usage) = llm
        .json(
            vec![Message::system(system.clone()), Message::user(plan)],
            "search_queries",
            &queries_schema,
            llm.deadline(),
        )
        .await
        .map_err(|e| failed("planning searches", &e))?;
    spend.add_llm(&usage);
    let mut seen = HashSet::new();
    let queries: Vec<String> = planned
        .queries
        .into_iter()
        .map(|q| q.trim().to_string())
        .filter(|q| !q.is_empty() && seen.insert(q.to_lowercase()))
        .take(QUERIES_PER_ROUND)
        .collect();
    let queries = if queries.is_empty() {
        vec![query.to_string()]
    } else {
        queries
    };

    let searches = join_all(queries.iter().map(|q| async move {
        let _permit = engine.search_permits.acquire().await.expect("semaphore never closes");
        websearch::search(&*engine.search, q, RESULTS_PER_QUERY, Instant::now() + SEARCH_TIMEOUT).await
    }))
    .await;
    let mut results = Vec::new();
    let mut search_failures = Vec::new();
    for (q, r) in queries.iter().zip(searches) {
        match r {
            Ok(rs) => results.push((q.clone(), rs)),
            Err(e) => search_failures.push(format!("{q}: {e}")),
        }
    }
    if results.iter().all(|(_, rs)| rs.is_empty()) {
        return Err(DeepSearchError::new(
            "EXECUTION_ERROR",
            format!("no search results for any query ({})", search_failures.join("; ")),
        ));
    }
    // Pages: the best result of each query first, then the second of each, …
    let mut page_urls = Vec::new();
    let mut seen_pages = HashSet::new();
    for rank in 0..RESULTS_PER_QUERY {
        for (_, rs) in &results {
            if let Some(r) = rs.get(rank)
                && page_urls.len() < PAGES_PER_ROUND
                && seen_pages.insert(citations::normalize_url(&r.url))
            {
                page_urls.push(r.url.clone());
            }
        }
    }
    let pages = join_all(
        page_urls
            .iter()
            .map(|u| engine.fetcher.fetch_page(u, engine.page_timeout, PAGE_CHARS)),
    )
    .await;
    let mut allowed: HashSet<String> = HashSet::new();
    let searches: Vec<Value> = results
        .iter()
        .map(|(q, rs)| {
            let results: Vec<Value> = rs
                .iter()
                .map(|r| {
                    allowed.insert(citations::normalize_url(&r.url));
                    json!({"title": untrusted(&r.title), "url": r.url, "snippet": untrusted(&r.snippet)})
                })
                .collect();
            json!({"query": untrusted(q), "results": results})
        })
        .collect();
    let mut read = Vec::new();
    let mut read_pages = Vec::new();
    for (url, page) in page_urls.iter().zip(pages) {
        match page {
            Ok(p) => {
                allowed.insert(citations::normalize_url(&p.url));
                allowed.insert(citations::normalize_url(url));
                read_pages.push(json!({"url": url, "content": untrusted(&p.content.markdown)}));
                read.push(url.clone());
            }
            Err(e) => tracing::info!("page skipped: {url}: {e}"),
        }
    }
    let material = engine
        .library
        .render(
            "prompts/deep-search-material.md",
            json!({"searches": searches, "pages": read_pages}),
        )
        .map_err(|e| failed("template", &e))?;
    // A verification round may keep the sources the report already cites.
    if let Some(c) = current {
        // Checking against nothing lists every URL the text links to.
        for u in citations::enforce(c, &HashSet::new(), &|_| true).1.urls {
            allowed.insert(citations::normalize_url(&u));
        }
    }
    let prompt = render_round_prompt(engine, query, n, current, Some(material))?;
    let (round, usage): (RoundJson, Usage) = llm
        .json(
            vec![Message::system(system), Message::user(prompt)],
            "deep_search_round",
            &round_schema(),
            llm.deadline(),
        )
        .await
        .map_err(|e| failed("writing the report", &e))?;
    spend.add_llm(&usage);
    if round.report.trim().is_empty() {
        return Err(failed("writing the report", &"the report is empty"));
    }
    let (report, removed) = citations::enforce(&round.report, &allowed, &|_| false);
    spend.citations_removed += removed.urls.len();
    Ok(RoundOutput {
        verified: round.verified,
        summary: summary_of(round.metadata.summary, &report),
        report,
        sources: read,
        queries,
    })
}

/// The heading a query gets under `## Research`: one line, no Markdown heading syntax at the
/// ends, bounded length.
pub fn heading_for(query: &str) -> String {
    let one_line = query.split_whitespace().collect::<Vec<_>>().join(" ");
    // A selected list item or quote line keeps its words, not its marker.
    let trimmed = one_line
        .trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '>') || c.is_whitespace())
        .trim_matches(|c: char| c == '#' || c.is_whitespace());
    let mut h: String = trimmed.chars().take(120).collect();
    if trimmed.chars().count() > 120 {
        h.push('…');
    }
    h
}

/// The `### <query>` subsection body, from `templates/deep-search-section.md`.
pub fn render_section(engine: &Engine, r: &DeepSearchResult) -> Result<String, DeepSearchError> {
    let date = r.metadata.timestamp.get(..10).unwrap_or_default().to_string();
    let report = super::note::contain_below(&r.result, 4);
    engine
        .library
        .render(
            "templates/deep-search-section.md",
            json!({
                "date": date,
                "iterations": r.metadata.iterations,
                "verified": r.verified,
                "backend": r.metadata.backend,
                "model": r.metadata.model,
                "note": r.note,
                "report": report.trim(),
                "sources": r.metadata.sources_visited,
            }),
        )
        .map_err(|e| DeepSearchError::new("EXECUTION_ERROR", format!("template: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_parsing() {
        let check = |text: &str, ok: bool| assert_eq!(parse_round(text).is_ok(), ok, "{text}");
        check(r#"{"verified": true, "report": "x"}"#, true);
        check(
            "```json\n{\"success\": true, \"verified\": false, \"report\": \"# R\", \"metadata\": {\"sources_visited\": [\"https://a\"]}}\n```",
            true,
        );
        check("Here you go: {\"verified\": false, \"result\": \"alias\"} done", true);
        check(r#"{"verified": true, "report": "  "}"#, false);
        check(r#"{"success": false, "verified": false, "report": "x"}"#, false);
        check("The answer is 42.", false);
        check(r#"{"verified": true, "report": "unterminated"#, false);
        let r = parse_round(r#"{"verified": true, "report": "x", "metadata": {"search_queries": ["q"]}}"#).unwrap();
        assert_eq!(r.metadata.search_queries_used, ["q"]);
        // The example the prompts show is itself a valid answer.
        assert!(parse_round(&schema_example()).is_ok());
    }

    #[test]
    fn headings_and_dedupe() {
        assert_eq!(heading_for("  what is\n  sourdough?  "), "what is sourdough?");
        assert_eq!(heading_for("## rye"), "rye");
        assert_eq!(heading_for("- How long? "), "How long?");
        assert_eq!(heading_for("> * quoted item"), "quoted item");
        assert_eq!(heading_for(&"a".repeat(200)).chars().count(), 121);
        let v = [
            "https://a".to_string(),
            "https://A".into(),
            "https://b".into(),
            " ".into(),
        ];
        assert_eq!(dedupe(v.iter()), ["https://a", "https://b"]);
        assert_eq!(summary_of(None, "short  report\ntext"), "short report text");
        assert_eq!(summary_of(Some("s".into()), "r"), "s");
    }
}
