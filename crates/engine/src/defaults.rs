//! The defaults a caller gets for what it leaves out, named once: the engine applies them and
//! every surface shows these same values (an MCP tool's schema `default`, a CLI flag's help).
//! Defaults that come from configuration (the Sonar tier, deep search's rounds, the Gemini
//! agent) are the engine's settings, not constants; see `Engine::providers`.

/// A desktop notification (or the editor's message) when a background task ends.
pub const NOTIFY: bool = true;
/// A background task is given up after this many hours.
pub const MAX_WAIT_HOURS: f64 = scholia_tasks::DEFAULT_MAX_WAIT_HOURS;
/// A task's results carry the sources it cites.
pub const INCLUDE_SOURCES: bool = true;
/// A cancelled task keeps the report written so far as its results.
pub const SAVE_PARTIAL: bool = true;
/// Reports are saved here in the vault.
pub const REPORT_DIR: &str = "research_reports";
/// Saved reports' file names start with this.
pub const REPORT_PREFIX: &str = "research";
/// A saved report has its metadata table.
pub const REPORT_METADATA: bool = true;
/// A saved report has its Sources list.
pub const REPORT_SOURCES: bool = true;
/// Notes a search answers at most.
pub const SEARCH_LIMIT: u32 = 10;
/// Notes a listing answers at most.
pub const LIST_LIMIT: u32 = 50;
/// Characters of a fetched page at most.
pub const PAGE_CHARS: usize = 20_000;
/// Notes an editor's search picker lists at most.
pub const PICKER_SEARCH_LIMIT: u32 = 50;
/// Characters of a fetched page the CLI prints at most (a terminal shows more than an
/// agent's context should hold).
pub const PRINTED_PAGE_CHARS: usize = 50_000;
/// Tasks `scholia tasks list` shows at most.
pub const TASK_LIST_LIMIT: u16 = 20;
