//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use scholia::config::DeepSearchBackend;
use scholia::engine::defaults;
use scholia::research::note::Depth;

#[derive(Parser)]
#[command(name = "scholia", version, about = "Research assistant for Markdown note vaults")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Index the vault (incrementally: only changed notes are read)
    Index {
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// List every skipped, failed or truncated note with the reason
        #[arg(long)]
        reasons: bool,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
        /// Quietly, for a command that answered before checking a large vault
        #[arg(long, hide = true)]
        background: bool,
    },
    /// Every problem the editor's diagnostics find (links to missing notes, headings, blocks,
    /// embeds; names several notes share), as path:line:col lines; exit 1 when there is an error
    Check {
        /// Notes or folders to check, relative to the vault or the current directory (default:
        /// the whole vault)
        paths: Vec<PathBuf>,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// text (path:line:col: severity: message [code]), json, or github (workflow commands)
        #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json", "github"])]
        format: String,
    },
    /// Full-text search of the vault (BM25; "quoted phrases", title:word)
    Search {
        /// Words, "quoted phrases", title:word
        query: String,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Maximum number of results, 1 to 1000
        #[arg(long, value_name = "N", default_value_t = defaults::SEARCH_LIMIT, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
        /// lexical, semantic or hybrid (default: hybrid when embeddings are configured)
        #[arg(long, value_name = "MODE", value_parser = parse_search_mode)]
        mode: Option<scholia::index::SearchMode>,
        /// Print the hits as JSON
        #[arg(long)]
        json: bool,
    },
    /// Research a note and write the findings into its `## Research` section
    Research {
        /// The note: relative to the vault (or the current directory), or absolute
        note: String,
        /// Also read the top web pages of each topic
        #[arg(long, conflicts_with = "depth")]
        deep: bool,
        /// shallow (search snippets) or deep (read pages)
        #[arg(long, value_name = "DEPTH", value_parser = parse_depth)]
        depth: Option<Depth>,
        /// Narrow the research to this aspect of the note
        #[arg(long, value_name = "TEXT")]
        focus: Option<String>,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Multi-round web research with verification (Gemini CLI or the research LLM)
    DeepSearch {
        /// The question to research
        query: String,
        /// gemini-cli or llm (default: the Gemini CLI when installed, else the LLM)
        #[arg(long, value_name = "BACKEND", value_parser = parse_backend)]
        backend: Option<DeepSearchBackend>,
        /// Rounds at most, 1 to 50; below 2 runs 2 rounds (default DEEP_SEARCH_MAX_ITERATIONS or 5)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=50))]
        max_iterations: Option<u32>,
        /// Where `.scholia.toml` is read from (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the whole result (report and metadata) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Ask a Perplexity Sonar tier (via OpenRouter) and print the answer with its sources
    #[command(after_help = scholia::research::sonar::tool_description())]
    Ask {
        /// The question
        query: String,
        /// sonar (default), sonar-pro, sonar-reasoning-pro or sonar-deep-research
        #[arg(long, value_name = "MODEL", value_parser = parse_sonar_model)]
        model: Option<String>,
        /// Overall deadline in milliseconds, retries included (5000..=600000; default per model)
        #[arg(long, value_name = "MS", value_parser = parse_timeout)]
        timeout: Option<String>,
        /// Where `.scholia.toml` is read from (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the answer, sources and metadata as JSON
        #[arg(long)]
        json: bool,
    },
    /// A note's headings with their sizes, and its hash (what `edit --expected-hash` needs)
    Outline {
        /// The note: relative to the vault (or the current directory), or absolute
        note: String,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the outline as JSON
        #[arg(long)]
        json: bool,
    },
    /// Edit the section under one heading, or front-matter fields, of a note
    Edit {
        /// The note: relative to the vault (or the current directory), or absolute
        note: String,
        /// The heading whose section to edit (`Setup`, or `## Setup` for that level)
        #[arg(long, value_name = "HEADING", conflicts_with_all = ["set", "unset"])]
        heading: Option<String>,
        /// replace (needs the expected hash), append (default) or prepend
        #[arg(long, value_name = "MODE", default_value = "append", value_parser = parse_mode)]
        mode: scholia::vault::note_edit::Mode,
        /// The text to write into the section
        #[arg(
            long,
            value_name = "TEXT",
            conflicts_with = "content_file",
            allow_hyphen_values = true
        )]
        content: Option<String>,
        /// Read the text to write from a file (`-`: standard input)
        #[arg(long, value_name = "FILE")]
        content_file: Option<PathBuf>,
        /// Set a front-matter field (repeatable; a JSON value, else text)
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a front-matter field (repeatable)
        #[arg(long, value_name = "KEY")]
        unset: Vec<String>,
        /// The hash `scholia outline` printed: required to replace or set fields; a note that
        /// changed since is refused
        #[arg(long, value_name = "HASH")]
        expected_hash: Option<String>,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Create a note (never replacing one), optionally from a template of the vault
    Create {
        /// The new note's path relative to the vault (`.md` added when it has no extension)
        path: String,
        /// The note's text
        #[arg(
            long,
            value_name = "TEXT",
            conflicts_with = "content_file",
            allow_hyphen_values = true
        )]
        content: Option<String>,
        /// Read the note's text from a file (`-`: standard input)
        #[arg(long, value_name = "FILE")]
        content_file: Option<PathBuf>,
        /// A note of the vault's templates folder to start from
        #[arg(long, value_name = "NAME")]
        template: Option<String>,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Move or rename a note and rewrite every link to it
    Move {
        /// The note to move: relative to the vault (or the current directory), or absolute
        note: String,
        /// Its new path relative to the vault
        to: String,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// The notes linking to a note, with their lines
    Backlinks {
        /// The note: relative to the vault (or the current directory), or absolute
        note: String,
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the Markdown research would read from a web page
    Fetch {
        /// An http(s) URL (public addresses only)
        url: String,
        /// Maximum characters of content
        #[arg(long, value_name = "N", default_value_t = defaults::PRINTED_PAGE_CHARS)]
        max_chars: usize,
        /// Print the page (URL, title, Markdown, method) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Trust a vault: let its .scholia.toml choose programs, endpoints, credentials and
    /// command-line arguments (until the file changes)
    Trust {
        /// The vault (default: the current directory)
        dir: Option<PathBuf>,
        /// Forget the vault instead
        #[arg(long, conflicts_with = "list")]
        revoke: bool,
        /// List the trusted vaults
        #[arg(long)]
        list: bool,
    },
    /// Background research: start, follow, cancel and save tasks that outlive the command
    Tasks {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Reads one web page from stdin for a scholia process (killed at its deadline)
    #[command(name = "extract-worker", hide = true)]
    ExtractWorker,
    /// Language server on stdin/stdout
    Lsp {
        /// Print the commands, code actions, settings and environment variables the server
        /// offers editors (JSON) and exit
        #[arg(long)]
        describe: bool,
    },
    /// MCP server for agents: stdio, or streamable HTTP with --http; `mcp install` sets up a host
    #[command(args_conflicts_with_subcommands = true)]
    Mcp {
        #[command(subcommand)]
        action: Option<McpAction>,
        /// The vault (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// The environment variable holding the bearer token HTTP clients must send
        #[arg(long, value_name = "VAR", requires = "http")]
        token_env: Option<String>,
        /// Offer no tool that writes the vault (edit_note, create_note, move_note,
        /// research_note, save_research_to_markdown; `note` arguments are refused)
        #[arg(long)]
        read_only: bool,
        /// Confine every tool, resource and search to this folder of the vault (repeatable)
        #[arg(long = "allow-folder", value_name = "DIR")]
        allow_folder: Vec<String>,
        /// Offer only these tools (comma-separated names)
        #[arg(long, value_name = "NAMES", value_delimiter = ',')]
        tools: Option<Vec<String>>,
        /// A team's tokens (TOML, owner-only): each token's hash with a name and its own scope
        /// (read_only, allow_folder, tools); read again when it changes
        #[arg(long, value_name = "FILE", requires = "http", conflicts_with_all = ["token_env", "read_only", "allow_folder", "tools"])]
        tokens_file: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum McpAction {
    /// Write scholia into an MCP host's configuration (the binary by its absolute path, merged
    /// into what is there, the file backed up); --list shows each host's files
    Install(Install),
}

/// What `scholia mcp install` is asked.
#[derive(clap::Args)]
pub struct Install {
    /// claude-desktop, claude-code, cursor, vscode, codex or zed
    #[arg(long, value_name = "NAME", required_unless_present = "list")]
    pub client: Option<String>,
    /// The vault the host's scholia serves (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// project (the vault's own folder) or user (default: project for claude-code, cursor
    /// and vscode; user for the others)
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// Point the host at a running `scholia mcp --http` at this URL instead of starting one
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// The environment variable the host reads the bearer token from; needs --http
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
    /// Print the file as it would be; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Replace a `scholia` entry that differs
    #[arg(long)]
    pub force: bool,
    /// Each host's configuration files and whether scholia is in them
    #[arg(long, conflicts_with_all = ["client", "http", "dry_run", "force"])]
    pub list: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum TaskAction {
    /// Start a background task; prints its id (a running `scholia tasks run`, language server
    /// or MCP server drives it)
    Start {
        /// The research question; for `--kind research-note`, the note to research
        query: String,
        /// gemini (Gemini deep research, needs GEMINI_API_KEY), deep-search, or research-note
        /// (deep research of the note QUERY, written into its `## Research` when done); default:
        /// gemini when GEMINI_API_KEY is set, else deep-search when it can run
        #[arg(long, value_name = "KIND", value_parser = parse_kind)]
        kind: Option<scholia::tasks::Kind>,
        /// research-note: what to focus the research on
        #[arg(long, value_name = "TEXT")]
        focus: Option<String>,
        /// No desktop notification when it ends
        #[arg(long)]
        no_notify: bool,
        /// Give up on a task after this many hours, 0.1 to 72 (default 8)
        #[arg(long, value_name = "H")]
        max_wait_hours: Option<f64>,
        #[arg(long, value_name = "AGENT", help = agent_help())]
        model: Option<String>,
        /// Print the task as JSON
        #[arg(long)]
        json: bool,
    },
    /// A task's status (from the local store; never calls the provider)
    Status {
        id: String,
        /// Print the status as JSON
        #[arg(long)]
        json: bool,
    },
    /// A finished task's report
    Results {
        id: String,
        /// Leave the sources out
        #[arg(long)]
        no_sources: bool,
        /// Print the report, metadata and sources as JSON
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task here and at its provider
    Cancel {
        id: String,
        /// Do not keep what the provider produced so far
        #[arg(long)]
        no_partial: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Estimate the cost and duration of a Gemini deep research (no model call)
    Estimate {
        query: String,
        /// Print the estimate as JSON
        #[arg(long)]
        json: bool,
    },
    /// Save a finished task's report as Markdown
    Save {
        id: String,
        /// Folder inside the vault (default research_reports), or inside scholia's data directory
        #[arg(long, value_name = "DIR")]
        output_dir: Option<String>,
        /// The vault the report is saved in (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// File name prefix (default research)
        #[arg(long, value_name = "P")]
        prefix: Option<String>,
        /// Leave the metadata table out
        #[arg(long)]
        no_metadata: bool,
        /// Leave the sources out
        #[arg(long)]
        no_sources: bool,
        /// Print where it was saved as JSON
        #[arg(long)]
        json: bool,
    },
    /// The newest tasks
    List {
        /// How many of the newest tasks (1 to 1000)
        #[arg(long, value_name = "N", default_value_t = defaults::TASK_LIST_LIMIT, value_parser = clap::value_parser!(u16).range(1..=1000))]
        limit: u16,
        /// Print the tasks as JSON
        #[arg(long)]
        json: bool,
    },
    /// Drive tasks in the foreground until Ctrl-C (or, with --until-idle, until none is left)
    Run {
        /// Stop once every task has ended
        #[arg(long)]
        until_idle: bool,
    },
}

fn agent_help() -> String {
    format!(
        "The Gemini agent (default: [tasks] agent, GEMINI_DEEP_RESEARCH_AGENT, else {})",
        scholia::providers::interactions::AGENT
    )
}

fn parse_kind(s: &str) -> Result<scholia::tasks::Kind, String> {
    scholia::tasks::Kind::parse(s)
        .ok_or_else(|| format!("--kind: `{s}`; valid: {}", scholia::tasks::Kind::NAMES.join(", ")))
}

impl Command {
    /// The log level when SCHOLIA_LOG is not set: the MCP server logs more (hosts keep its
    /// log); the language server only warnings (editors such as Helix show its stderr as errors).
    pub fn default_log_level(&self) -> &'static str {
        match self {
            Command::Mcp { .. } => "info",
            _ => "warn",
        }
    }
}

fn parse_backend(s: &str) -> Result<DeepSearchBackend, String> {
    DeepSearchBackend::parse(s).ok_or_else(|| format!("`{s}`; valid: {}", DeepSearchBackend::NAMES.join(", ")))
}

fn parse_search_mode(s: &str) -> Result<scholia::index::SearchMode, String> {
    s.parse()
}

fn parse_mode(s: &str) -> Result<scholia::vault::note_edit::Mode, String> {
    s.parse()
        .map_err(|e: scholia::vault::note_edit::NoteEditError| e.to_string())
}

fn parse_depth(s: &str) -> Result<Depth, scholia::research::ResearchError> {
    s.parse::<Depth>()
}

/// A Sonar tier, checked where every bad flag is (exit status 2).
fn parse_sonar_model(s: &str) -> Result<String, scholia::research::sonar::SonarError> {
    scholia::research::sonar::model(s).map(|m| m.name.to_string())
}

fn parse_timeout(s: &str) -> Result<String, scholia::research::sonar::SonarError> {
    let arg = scholia::research::sonar::AskRequest::timeout_arg(s);
    scholia::research::sonar::AskRequest::new("q", None, Some(&arg)).map(|_| s.to_string())
}
