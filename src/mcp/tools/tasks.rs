//! The background-research tools of seed 001: research that outlives the call. Each is one
//! call of the engine's task API; the answers are its typed shapes.

use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::mcp::Scholia;
use crate::mcp::progress::RunContext;
use crate::mcp::tool::{Reply, Tool, reads_vault};
use scholia_base::Error;
use scholia_engine::defaults;
use scholia_engine::{
    BoxFuture, Engine, Estimate as Estimated, ReportSave, SavedReport, TaskCancelled, TaskKind, TaskResults, TaskStart,
    TaskStarted, TaskStatus,
};

fn notify() -> bool {
    defaults::NOTIFY
}
fn max_wait_hours() -> f64 {
    defaults::MAX_WAIT_HOURS
}
fn include_sources() -> bool {
    defaults::INCLUDE_SOURCES
}
fn save_partial() -> bool {
    defaults::SAVE_PARTIAL
}
fn report_dir() -> String {
    defaults::REPORT_DIR.into()
}
fn report_prefix() -> String {
    defaults::REPORT_PREFIX.into()
}
fn report_metadata() -> bool {
    defaults::REPORT_METADATA
}
fn report_sources() -> bool {
    defaults::REPORT_SOURCES
}

/// The store is local: reading it never calls a provider and costs nothing.
fn store_only() -> ToolAnnotations {
    reads_vault()
}

pub struct Start;

#[derive(Deserialize, JsonSchema)]
pub struct StartInput {
    /// The research question; for a research-note task, the aspect of the note to focus on
    /// ("" for the whole note)
    #[schemars(length(min = 0))]
    query: String,
    /// A desktop notification when it completes
    #[serde(default = "notify")]
    enable_notifications: bool,
    /// Give up (and cancel at the provider) after this many hours
    #[serde(default = "max_wait_hours")]
    #[schemars(range(min = 0.1, max = 72.0))]
    max_wait_hours: f64,
    /// The Gemini deep-research agent (default: the server's, else the seed's)
    model: Option<String>,
    /// gemini: Gemini Deep Research (needs GEMINI_API_KEY); deep-search: scholia's own
    /// multi-round deep search, run in the background; research-note: deep research of `note`,
    /// written into its `## Research` section when done (`query` is then the optional focus).
    /// Default: research-note with a `note`, else gemini when GEMINI_API_KEY is set, else
    /// deep-search
    kind: Option<TaskKind>,
    /// research-note: the note's vault path
    note: Option<String>,
}

impl Tool for Start {
    type Input = StartInput;
    type Output = TaskStarted;
    const NAME: &'static str = "start_deep_research";
    const TITLE: &'static str = "Start background deep research";
    const BACKGROUND: bool = true;
    const TASK_POLL_MS: u64 = 5_000;

    fn description() -> String {
        "Start deep research in the background: Gemini Deep Research when the server has \
         GEMINI_API_KEY (it plans, searches and reads for 5-60 minutes and writes a cited report), \
         else scholia's own deep search; or, with `note`, deep research of that note written into \
         its `## Research` section. Returns a task_id at once; follow it with \
         check_research_status and read it with get_research_results. Gemini costs real money \
         (see estimate_research_cost); for a quick answer use `search` instead. A client that \
         supports MCP tasks gets that task as the call's task: tasks/get follows it and, once \
         completed, gives get_research_results' answer."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .open_world(true)
    }

    fn run(s: &Scholia, a: StartInput, _: RunContext) -> BoxFuture<'_, Result<Reply<TaskStarted>, Error>> {
        Box::pin(async move {
            if a.note.is_some() && s.read_only() {
                return Err(Error::invalid(
                    "note: this server is read-only (scholia mcp --read-only); research into a note is not offered",
                ));
            }
            // A note is resolved in the vault this server serves (and within its folders).
            let root = match &a.note {
                Some(n) => {
                    let vault = s.vault().await?;
                    vault.resolve(n, None).map_err(|e| e.field("path", "note"))?;
                    Some(vault.vault().root().to_path_buf())
                }
                None => None,
            };
            let req = TaskStart {
                query: a.query,
                kind: a.kind,
                notify: Some(a.enable_notifications),
                max_wait_hours: Some(a.max_wait_hours),
                model: a.model,
                note: a.note,
            };
            let started = s
                .engine
                .start_task(req, root.as_deref(), None)
                .await
                .map_err(|e| e.field("path", "note"))?;
            Ok(Reply::new(started, ""))
        })
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct TaskIdInput {
    /// The task id start_deep_research returned
    task_id: String,
}

pub struct Status;

impl Tool for Status {
    type Input = TaskIdInput;
    type Output = TaskStatus;
    const NAME: &'static str = "check_research_status";
    const TITLE: &'static str = "Check research status";

    fn description() -> String {
        "Status of a background research task from the local store (never calls a provider, costs \
         nothing): status, elapsed minutes, tokens and cost so far, the current action."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        store_only()
    }

    fn run(s: &Scholia, a: TaskIdInput, _: RunContext) -> BoxFuture<'_, Result<Reply<TaskStatus>, Error>> {
        Box::pin(async move { Ok(Reply::new(s.engine.task_status(&a.task_id).await?, "")) })
    }
}

pub struct Results;

#[derive(Deserialize, JsonSchema)]
pub struct ResultsInput {
    /// The task id start_deep_research returned
    task_id: String,
    /// Include the cited sources
    #[serde(default = "include_sources")]
    include_sources: bool,
}

impl Tool for Results {
    type Input = ResultsInput;
    type Output = TaskResults;
    const NAME: &'static str = "get_research_results";
    const TITLE: &'static str = "Get research results";

    fn description() -> String {
        "The report, sources and metadata of a finished background research task (an error with \
         the current status while it runs). A long report is cut; save_research_to_markdown writes \
         it whole."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        store_only()
    }

    fn run(s: &Scholia, a: ResultsInput, _: RunContext) -> BoxFuture<'_, Result<Reply<TaskResults>, Error>> {
        Box::pin(async move {
            let r = s.engine.task_results(&a.task_id, Some(a.include_sources)).await?;
            let text = r.report.clone();
            Ok(Reply::new(r, text))
        })
    }
}

pub struct Cancel;

#[derive(Deserialize, JsonSchema)]
pub struct CancelInput {
    /// The task id start_deep_research returned
    task_id: String,
    /// Keep the report written so far as the task's results
    #[serde(default = "save_partial")]
    save_partial: bool,
}

impl Tool for Cancel {
    type Input = CancelInput;
    type Output = TaskCancelled;
    const NAME: &'static str = "cancel_research";
    const TITLE: &'static str = "Cancel research";

    fn description() -> String {
        "Cancel a running background research task, here and at Gemini (which stops the bill); \
         with save_partial the report so far is kept as its results."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .open_world(true)
    }

    fn run(s: &Scholia, a: CancelInput, _: RunContext) -> BoxFuture<'_, Result<Reply<TaskCancelled>, Error>> {
        Box::pin(async move {
            Ok(Reply::new(
                s.engine.cancel_task(&a.task_id, Some(a.save_partial)).await?,
                "",
            ))
        })
    }
}

pub struct Estimate;

#[derive(Deserialize, JsonSchema)]
pub struct EstimateInput {
    /// The research question
    query: String,
}

impl Tool for Estimate {
    type Input = EstimateInput;
    type Output = Estimated;
    const NAME: &'static str = "estimate_research_cost";
    const TITLE: &'static str = "Estimate research cost";

    fn description() -> String {
        "Estimate the complexity, duration and cost of a Gemini deep research from the query alone \
         (no model call, free). Use before start_deep_research."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        store_only()
    }

    fn run(s: &Scholia, a: EstimateInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Estimated>, Error>> {
        Box::pin(async move { Ok(Reply::new(s.engine.estimate_task(&a.query).await?, "")) })
    }
}

pub struct Save;

#[derive(Deserialize, JsonSchema)]
pub struct SaveInput {
    /// The task id start_deep_research returned
    task_id: String,
    /// The directory, relative to the vault (only inside the vault or scholia's data directory)
    #[serde(default = "report_dir")]
    output_dir: String,
    /// The file name's first part
    #[serde(default = "report_prefix")]
    filename_prefix: String,
    /// A table of task id, status, duration, tokens and cost
    #[serde(default = "report_metadata")]
    include_metadata: bool,
    /// A Sources list at the end
    #[serde(default = "report_sources")]
    include_sources: bool,
}

impl Tool for Save {
    type Input = SaveInput;
    type Output = SavedReport;
    const NAME: &'static str = "save_research_to_markdown";
    const TITLE: &'static str = "Save research to Markdown";
    const WRITES: bool = true;

    fn description() -> String {
        "Write a finished task's report as a Markdown file \
         `{output_dir}/{YYYY-MM}/{prefix}_{task_id}_{YYYYmmdd_HHMMSS}.md` (directories created)."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .open_world(false)
    }

    fn run(s: &Scholia, a: SaveInput, _: RunContext) -> BoxFuture<'_, Result<Reply<SavedReport>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await.ok();
            let opts = ReportSave {
                output_dir: Some(a.output_dir),
                prefix: Some(a.filename_prefix),
                include_metadata: Some(a.include_metadata),
                include_sources: Some(a.include_sources),
            };
            let saved = s
                .engine
                .save_report(vault.as_deref().and_then(Engine::reports_root), &a.task_id, opts)
                .await?;
            Ok(Reply::new(saved, ""))
        })
    }
}
