//! The names the server and its clients share: every command (`workspace/executeCommand`),
//! the diagnostics' source, and how a command's arguments are read. A leaf: the modules that
//! offer commands and those that name them in lenses and actions all read it.

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result as RpcResult;

use super::errors::invalid;

pub const RESEARCH: &str = "scholia.research";
pub const DEEP_SEARCH: &str = "scholia.deepSearch";
pub const ASK: &str = "scholia.ask";
pub const BACKGROUND: &str = "scholia.startDeepResearch";
pub const TASKS: &str = "scholia.tasks";
pub const SEARCH: &str = "scholia.search";
pub const STATUS: &str = "scholia.status";
pub const CANCEL: &str = "scholia.cancel";
/// Run by the backlinks lens: the references of a note, client-side.
pub const REFERENCES: &str = "scholia.references";
/// Run by "Show the contradicting source".
pub const SHOW_SOURCE: &str = "scholia.showSource";
/// Run by the "Create note" quick fix.
pub const CREATE_NOTE: &str = "scholia.createNote";

/// Every command the server executes.
pub const COMMANDS: &[&str] = &[
    RESEARCH,
    DEEP_SEARCH,
    ASK,
    BACKGROUND,
    TASKS,
    SEARCH,
    STATUS,
    CANCEL,
    REFERENCES,
    SHOW_SOURCE,
    CREATE_NOTE,
];

/// What the server's diagnostics say they come from.
pub const SOURCE: &str = "scholia";

/// A command's one argument as `T`; `shape` says what it should be.
pub(super) fn args<T: serde::de::DeserializeOwned>(command: &str, arguments: Vec<Value>, shape: &str) -> RpcResult<T> {
    let arg = arguments
        .into_iter()
        .next()
        .ok_or_else(|| invalid(format!("{command} needs {shape}")))?;
    serde_json::from_value(arg).map_err(|e| invalid(format!("{command}: {e}")))
}
