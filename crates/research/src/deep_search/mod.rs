//! deep_search (DESIGN §7, seeds 002 and 003): multi-round research with verification. Round 1
//! drafts a report from five perspectives; rounds 2..N verify and update it until a round says
//! `verified: true` or the rounds run out. Two [`Backend`]s run a round: the Gemini CLI
//! (`gemini.rs`, which searches and reads itself) and the research LLM fed by scholia's own web
//! search and fetcher (`llm.rs`).

mod error;
mod gemini;
mod llm;

pub use error::DeepSearchError;
mod section;

pub use section::{heading_for, render_section};

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Context;
use scholia_base::Job;
use scholia_base::{Coded, ErrorKind};
use scholia_prompts::{self as prompts, untrusted};
use scholia_providers::gemini_cli::{CliError, Tokens};
use scholia_providers::llm::Usage;

pub const MAX_QUERY_CHARS: usize = 2_000;
pub const MAX_ITERATIONS_LIMIT: u32 = 50;
/// Whole main-prompt-then-correction cycles per round before the round fails.
pub const JSON_CYCLES: usize = 3;
/// Waits before cycle 2, 3 (and a 4th, were there one).
pub const CYCLE_BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(5)];
const SUMMARY_CHARS: usize = 300;

/// Which backend runs deep_search rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeepSearchBackend {
    GeminiCli,
    Llm,
}

impl DeepSearchBackend {
    pub const NAMES: &[&str] = &["gemini-cli", "llm"];

    pub fn as_str(self) -> &'static str {
        match self {
            DeepSearchBackend::GeminiCli => "gemini-cli",
            DeepSearchBackend::Llm => "llm",
        }
    }

    /// `gemini-cli` (or `gemini`) or `llm`, in any case.
    pub fn parse(value: &str) -> Option<DeepSearchBackend> {
        match value.trim().to_ascii_lowercase().as_str() {
            "gemini-cli" | "gemini" => Some(DeepSearchBackend::GeminiCli),
            "llm" => Some(DeepSearchBackend::Llm),
            _ => None,
        }
    }
}

/// The example report and summary the schema example shows: an answer holding them is the
/// example, not an answer (the gate refuses it).
pub(crate) const EXAMPLE_REPORT: &str =
    "## Answer\n\nMarkdown report citing [sources](https://example.org/page) inline…";
pub(crate) const EXAMPLE_SUMMARY: &str =
    "One or two sentences: what the report concludes (or what this round changed).";
pub(crate) const EXAMPLES: &[&str] = &[EXAMPLE_REPORT, EXAMPLE_SUMMARY];

/// The JSON every round must answer with; also the example shown to the model and the
/// correction prompt.
pub fn schema_example() -> String {
    serde_json::to_string_pretty(&json!({
        "success": true,
        "verified": false,
        "report": EXAMPLE_REPORT,
        "metadata": {
            "sources_visited": ["https://example.org/page"],
            "search_queries_used": ["first search query", "second search query"],
            "summary": EXAMPLE_SUMMARY
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

/// Why a round's answer is not usable.
#[derive(Debug, thiserror::Error)]
enum BadRound {
    #[error("no JSON object found")]
    NoJson,
    #[error("JSON has the wrong shape: {0}")]
    Shape(#[from] serde_json::Error),
    #[error("the report is empty")]
    EmptyReport,
    #[error("the round reported success: false")]
    Unsuccessful,
}

/// Parses a round's answer: the outermost JSON object (fenced or not) with a non-empty report.
fn parse_round(text: &str) -> Result<RoundJson, BadRound> {
    let value = scholia_providers::llm::json::extract(text).ok_or(BadRound::NoJson)?;
    let round: RoundJson = serde_json::from_value(value)?;
    if round.report.trim().is_empty() {
        return Err(BadRound::EmptyReport);
    }
    if round.success == Some(false) {
        return Err(BadRound::Unsuccessful);
    }
    Ok(round)
}

#[derive(Debug, Clone)]
pub struct DeepSearchRequest {
    pub query: String,
    pub backend: Option<DeepSearchBackend>,
    pub max_iterations: Option<u32>,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RoundMeta {
    pub round_number: u32,
    pub sources_visited: Vec<String>,
    pub search_queries: Vec<String>,
    pub intermediate_result_summary: String,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DeepSearchResult {
    pub success: bool,
    /// The final Markdown report.
    pub result: String,
    pub verified: bool,
    /// Set when verification did not complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub metadata: Metadata,
    /// The URLs the report may link to (every round's sources): what a note may cite.
    #[serde(skip)]
    pub links: scholia_vault::inert::Links,
}

/// Progress of deep_search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeepEvent {
    Started { backend: &'static str, max: u32 },
    RoundStarted { n: u32, max: u32 },
    Correcting { n: u32, cycle: usize },
    RoundCompleted { n: u32, max: u32, verified: bool },
    RoundFailed { n: u32, max: u32, error: String },
}

impl scholia_base::Progress for DeepEvent {
    fn message(&self) -> String {
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
    fn percent(&self) -> Option<u32> {
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
    /// The URLs the report may link to: what the round gathered or the CLI says it visited.
    links: scholia_vault::inert::Links,
    verified: bool,
    report: String,
    sources: Vec<String>,
    queries: Vec<String>,
    summary: String,
}

/// What rounds spent and which model ran them.
#[derive(Default)]
struct Spend {
    tokens: Option<Tokens>,
    usage: Option<Usage>,
    detected_model: Option<String>,
    citations_removed: usize,
}

impl Spend {
    fn add_llm(&mut self, u: &Usage) {
        self.usage.get_or_insert_with(Usage::default).add(u);
    }
}

/// What runs a round: the Gemini CLI or the research LLM.
trait Backend {
    fn name(&self) -> &'static str;

    /// The model that runs the rounds, when configured.
    fn configured_model(&self) -> Option<String>;

    /// Checks the backend can run at all, before the first round.
    async fn ready(&self) -> Result<(), DeepSearchError>;

    async fn round(
        &self,
        query: &str,
        n: u32,
        current: Option<&str>,
        spend: &mut Spend,
        job: &Job,
    ) -> Result<RoundOutput, DeepSearchError>;
}

/// Checks the request and settles the backend and the round count.
pub fn validate(ctx: &Context, req: &DeepSearchRequest) -> Result<(DeepSearchBackend, u32), DeepSearchError> {
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
        None => ctx.deep_search.max_iterations,
        Some(n) if n == 0 || n > MAX_ITERATIONS_LIMIT => {
            return Err(DeepSearchError::invalid(format!(
                "max_iterations: {n} is not valid; valid: an integer from 1 to {MAX_ITERATIONS_LIMIT} (below 2 runs 2 rounds)"
            )));
        }
        Some(n) => n.max(2),
    };
    let cli = &ctx.gemini;
    let backend = match req.backend.or(ctx.deep_search.backend) {
        Some(b) => b,
        None if cli.is_installed() => DeepSearchBackend::GeminiCli,
        None if ctx.llm.is_some() => DeepSearchBackend::Llm,
        None => {
            return Err(DeepSearchError::new(
                "CLI_NOT_FOUND",
                ErrorKind::NotConfigured,
                format!(
                    "deep search needs the Gemini CLI or a research LLM: the Gemini CLI `{}` was not found \
                     (install it with `{}`) and no LLM is configured (set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL)",
                    cli.program(),
                    scholia_providers::gemini_cli::INSTALL_HINT
                ),
            ));
        }
    };
    if backend == DeepSearchBackend::Llm && ctx.llm.is_none() {
        return Err(DeepSearchError::new(
            "NOT_CONFIGURED",
            ErrorKind::NotConfigured,
            "backend: llm needs a research LLM; set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL, or use --backend gemini-cli",
        ));
    }
    Ok((backend, max))
}

/// Runs the rounds. Never writes anything but the CLI's temp files (deleted again).
pub async fn deep_search(
    ctx: &Context,
    req: &DeepSearchRequest,
    job: &Job,
) -> Result<DeepSearchResult, DeepSearchError> {
    let (backend, max) = validate(ctx, req)?;
    match backend {
        DeepSearchBackend::GeminiCli => run(&gemini::GeminiBackend { ctx }, req, max, job).await,
        DeepSearchBackend::Llm => {
            let llm = ctx.llm.as_deref().expect("validated");
            run(&llm::LlmBackend { ctx, llm }, req, max, job).await
        }
    }
}

async fn run<B: Backend>(
    backend: &B,
    req: &DeepSearchRequest,
    max: u32,
    job: &Job,
) -> Result<DeepSearchResult, DeepSearchError> {
    let query = req.query.trim().to_string();
    let started = Instant::now();
    let timestamp = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    backend.ready().await?;
    job.report(DeepEvent::Started {
        backend: backend.name(),
        max,
    });

    let mut spend = Spend::default();
    let mut rounds: Vec<RoundMeta> = Vec::new();
    let mut best: Option<RoundOutput> = None;
    let mut links = scholia_vault::inert::Links::none();
    let mut last_error = String::new();
    // The seed's code for a search whose every round failed: TIMEOUT when they all timed out.
    let mut all_timed_out = true;
    let mut iterations = 0;
    for n in 1..=max {
        if job.is_cancelled() {
            return Err(DeepSearchError::cancelled());
        }
        iterations = n;
        info(format!("Deep search round {n}/{max}..."));
        job.report(DeepEvent::RoundStarted { n, max });
        let current = best.as_ref().map(|b| b.report.as_str());
        // Each backend stops on cancellation itself (the CLI's process group must be killed,
        // not abandoned).
        // Every backend's report passes the example check: a small model answers with the
        // schema's own example, which is no answer.
        let outcome = backend
            .round(&query, n, current, &mut spend, job)
            .await
            .and_then(|out| {
                crate::gate::echoes_example(&out.report, EXAMPLES)
                    .map(|()| out)
                    .map_err(|why| DeepSearchError::failed(format!("round {n}: {why}")))
            });
        match outcome {
            Ok(out) => {
                info(format!("Round {n} completed, verified: {}", out.verified));
                job.report(DeepEvent::RoundCompleted {
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
                links.extend(&out.links);
                best = Some(out);
                if verified {
                    break;
                }
            }
            Err(e) if e.stops_the_loop => return Err(e),
            Err(e) => {
                eprintln!("[ERROR] Deep search round {n} failed: {}", e.message);
                job.report(DeepEvent::RoundFailed {
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
                all_timed_out &= e.code == "TIMEOUT";
                last_error = e.message;
            }
        }
    }
    let Some(best) = best else {
        info(format!("Deep search completed: {iterations} rounds, verified: false"));
        let code = if all_timed_out { "TIMEOUT" } else { "EXECUTION_ERROR" };
        let what = if all_timed_out { "timed out" } else { "failed" };
        return Err(DeepSearchError::new(
            code,
            ErrorKind::Upstream,
            format!("deep search failed: all {iterations} rounds {what}; last error: {last_error}"),
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
    Ok(DeepSearchResult {
        success: true,
        verified: best.verified,
        note,
        metadata: Metadata {
            duration_ms: started.elapsed().as_millis() as u64,
            query,
            model: backend
                .configured_model()
                .or(spend.detected_model)
                .unwrap_or_else(|| "auto-detected".into()),
            timestamp,
            iterations,
            max_iterations: max,
            backend: backend.name(),
            sources_visited: dedupe(rounds.iter().flat_map(|r| r.sources_visited.iter())),
            search_queries_used: dedupe(rounds.iter().flat_map(|r| r.search_queries.iter())),
            rounds,
            tokens: spend.tokens,
            usage: spend.usage,
            citations_removed: spend.citations_removed,
        },
        result: best.report,
        links,
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

/// The round-1 or verification prompt, with `material` gathered by scholia (LLM backend).
fn render_round_prompt(
    ctx: &Context,
    query: &str,
    n: u32,
    current: Option<&str>,
    material: Option<String>,
) -> Result<String, DeepSearchError> {
    // The material was rendered by scholia from prompts/deep-search-material.md: its fences
    // are real ones.
    let material = material.map(minijinja::Value::from_safe_string);
    let schema = schema_example();
    Ok(match current {
        None => ctx.library.render(
            prompts::DEEP_SEARCH_PROMPT,
            minijinja::context! {query => untrusted(query), schema, material},
        )?,
        Some(current) => ctx.library.render(
            prompts::VERIFY_PROMPT,
            minijinja::context! {query => untrusted(query), current => untrusted(current), round => n, schema, material},
        )?,
    })
}

#[cfg(test)]
mod tests;
