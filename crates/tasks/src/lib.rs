//! Background tasks: research that outlives a request. A SQLite store (`store.rs`) holds every
//! task and result; a runner in whichever scholia process runs tasks (the language server, the
//! MCP server, `scholia tasks run`) leases tasks so exactly one process drives each, and takes
//! over the tasks of a process that died. Gemini deep research runs on Google's side through the
//! Interactions API (`providers::interactions`); the kinds that run here (deep search,
//! research-note) run through the [`Runner`] the engine implements.
//!
//! Code map: `service.rs` the [`Tasks`] API (start, status, results, cancel, list),
//! `views.rs` the typed answers every surface shows, `results.rs` a finished task's output,
//! `runner.rs` the leased runner, `report.rs` saving reports, `notify.rs` notifications,
//! `store.rs` SQLite, `estimate.rs` cost and duration estimates, `calls.rs` calls answered with
//! a task (MCP tasks) and kept for whoever polls them.

mod call;
pub mod calls;
pub mod estimate;
mod notify;
mod report;
mod results;
mod runner;
mod service;
pub mod store;
mod views;

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use scholia_base::{Coded, ErrorKind};
use scholia_providers::interactions::InteractionError;

pub use report::{SaveOptions, SavedReport};
pub use results::{Results, ResultsMeta, SourceRef, Tokens};
pub use runner::{RunOutput, Runner};
pub use service::{Announce, StartRequest, TaskNote, Tasks};
pub use store::{Store, Task, now_ms};
pub use views::{MAX_REPORT_CHARS, SyncResults, TaskCancelled, TaskList, TaskResults, TaskStarted, TaskStatus};

/// How long a lease lasts without renewal (a process that died releases its tasks after
/// this): thirty polls, between 1 and 30 seconds.
fn lease(poll: Duration) -> Duration {
    (poll * 30).clamp(Duration::from_secs(1), Duration::from_secs(30))
}
/// How long a task may run before it is given up (and cancelled at its provider), in hours:
/// [`DEFAULT_MAX_WAIT_HOURS`] unless a request says otherwise, within this range.
pub const MAX_WAIT_HOURS: std::ops::RangeInclusive<f64> = 0.1..=72.0;
pub const DEFAULT_MAX_WAIT_HOURS: f64 = 8.0;
/// How many tasks a list shows unless asked, and at most.
pub const LIST_LIMIT: usize = 20;
pub const MAX_LIST_LIMIT: usize = 1000;

/// What start-up and the runner claim at once.
const CLAIM_BATCH: usize = 64;
pub const EXPIRED: &str = "Research session expired on Gemini servers. Task was interrupted and cannot be recovered.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Gemini deep research through the Interactions API.
    Gemini,
    /// scholia's own deep search (the Gemini CLI or the research LLM).
    DeepSearch,
    /// Deep research_note on one note, written into its `## Research` section when done.
    ResearchNote,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Gemini => "gemini",
            Kind::DeepSearch => "deep-search",
            Kind::ResearchNote => "research-note",
        }
    }
    /// Every kind's name, for error messages.
    pub const NAMES: &'static [&'static str] = &["gemini", "deep-search", "research-note"];

    /// The kind a request that names none gets: research-note when it names a note, else
    /// Gemini deep research when Gemini is configured, else scholia's deep search when it can
    /// run, else Gemini (whose refusal says what to configure).
    pub fn default_for(note: bool, gemini: bool, deep_search: bool) -> Kind {
        match (note, gemini, deep_search) {
            (true, _, _) => Kind::ResearchNote,
            (false, true, _) => Kind::Gemini,
            (false, false, true) => Kind::DeepSearch,
            (false, false, false) => Kind::Gemini,
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "gemini" => Some(Kind::Gemini),
            "deep-search" => Some(Kind::DeepSearch),
            "research-note" => Some(Kind::ResearchNote),
            _ => None,
        }
    }
}

/// A task's state. Serialised with the seed's names (a running task is `running_async`)
/// everywhere a surface shows it; stored and logged with [`Status::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    #[serde(rename = "running_async")]
    Running,
    Completed,
    CompletedPartial,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Completed => "completed",
            Status::CompletedPartial => "completed_partial",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
    /// The name surfaces show (the seed's): `running_async` for a running task.
    pub fn shown(self) -> &'static str {
        match self {
            Status::Running => "running_async",
            s => s.as_str(),
        }
    }
    pub fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "pending" => Status::Pending,
            "running" => Status::Running,
            "completed" => Status::Completed,
            "completed_partial" => Status::CompletedPartial,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }
    pub fn is_final(self) -> bool {
        !matches!(self, Status::Pending | Status::Running)
    }
}

/// `status == "completed"`: by its stored name.
impl PartialEq<&str> for Status {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The longest the runner keeps retrying a task store that fails every time (30 polls).
pub const STORE_GIVE_UP: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("task store: {0}")]
    Store(String),
    #[error(
        "task_id: no task `{0}`; use the task_id that starting the task returned (`scholia tasks list` shows every task)"
    )]
    Unknown(String),
    #[error("task `{id}` is already {status}")]
    AlreadyFinished { id: String, status: &'static str },
    #[error("task `{id}` has not completed yet (status: {status}); check it with check_research_status")]
    NotCompleted { id: String, status: &'static str },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "background Gemini research needs GEMINI_API_KEY (a Google AI Studio key); without it start a `deep-search` task"
    )]
    NoGemini,
    #[error(transparent)]
    Gemini(#[from] InteractionError),
    #[error(transparent)]
    Save(#[from] scholia_vault::confine::ConfineError),
}

impl Coded for TaskError {
    fn code(&self) -> &'static str {
        match self {
            TaskError::Store(_) => "TASK_STORE",
            TaskError::Unknown(_) => "UNKNOWN_TASK",
            TaskError::AlreadyFinished { .. } => "TASK_FINISHED",
            TaskError::NotCompleted { .. } => "TASK_NOT_COMPLETED",
            TaskError::Invalid(_) => "INVALID_INPUT",
            TaskError::NoGemini => "GEMINI_NOT_CONFIGURED",
            TaskError::Gemini(_) => "GEMINI_FAILED",
            TaskError::Save(e) => e.code(),
        }
    }
    fn kind(&self) -> ErrorKind {
        match self {
            TaskError::Store(_) => ErrorKind::Io,
            TaskError::Unknown(_) | TaskError::Invalid(_) => ErrorKind::InvalidInput,
            TaskError::AlreadyFinished { .. } | TaskError::NotCompleted { .. } => ErrorKind::Conflict,
            TaskError::NoGemini => ErrorKind::NotConfigured,
            TaskError::Gemini(_) => ErrorKind::Upstream,
            TaskError::Save(e) => e.kind(),
        }
    }
}

fn new_id() -> String {
    let (a, b) = (fastrand::u64(..), fastrand::u64(..));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}
