//! One tool's definition, as each tool module writes it: its input and output types, its
//! name and hints, and its handler. The table ([`super::table`]) erases the types and makes
//! `tools/list` and every result from these.

use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Scholia;
use super::progress::RunContext;
use scholia_base::{Error, Summary};
use scholia_engine::BoxFuture;

/// Text a tool result carries at most (about 6,000 tokens): an agent's context is not flooded.
pub const MAX_TEXT: usize = 24_000;

/// What a handler answers: the engine's typed result, and the text an agent reads after its
/// summary (empty when the summary says it all).
pub struct Reply<O> {
    pub value: O,
    pub text: String,
}

impl<O> Reply<O> {
    pub fn new(value: O, text: impl Into<String>) -> Reply<O> {
        Reply {
            value,
            text: text.into(),
        }
    }
}

/// One tool.
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send;
    type Output: Serialize + JsonSchema + Summary + Send;
    const NAME: &'static str;
    const TITLE: &'static str;
    /// Arguments the engine checks itself, with the error codes a seed gives.
    const ENGINE_CHECKED: &'static [&'static str] = &[];
    /// It writes notes (or reports) in the vault: not offered by a read-only server.
    const WRITES: bool = false;
    /// Its answer is a background task's id (`task_id`): for a client that declares the tasks
    /// extension, that task is the call's task, and its result is the task's results.
    const BACKGROUND: bool = false;
    /// How often a client should poll this tool's task, in milliseconds.
    const TASK_POLL_MS: u64 = 2_000;
    fn description() -> String;
    /// The hints beside the title (which `tools/list` adds).
    fn annotations() -> ToolAnnotations;
    /// Whether this call may outlast a host's time limit for a call (about 60 seconds): a
    /// client that declares the tasks extension gets a task for it at once.
    fn long(_s: &Scholia, _input: &Self::Input) -> bool {
        Self::BACKGROUND
    }
    fn run(s: &Scholia, input: Self::Input, run: RunContext) -> BoxFuture<'_, Result<Reply<Self::Output>, Error>>;
}

/// `text`, cut at `max` characters with a note saying so.
pub fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}\n\n[… cut at {max} of {total} characters]")
}

/// The hints of a tool that only reads the vault.
pub fn reads_vault() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).open_world(false)
}

/// The hints of a tool that reads the web and may write a note.
pub fn researches() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(false)
        .destructive(false)
        .open_world(true)
}

/// A JSON value an engine-checked argument may hold.
pub type Raw = Option<Value>;
