//! The MCP server: a thin adapter from MCP (rmcp) to the engine API. The vault and every
//! pipeline as tools (one table, `table.rs`, of the definitions in `tools/`, with schemas
//! derived in `schema.rs`), notes as `note:///` resources, progress and cancellation through
//! engine jobs (`progress.rs`); over stdio or streamable HTTP (`http.rs`).

mod calls;
mod http;
mod progress;
mod resources;
mod schema;
mod table;
mod tokens;
mod tool;
mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult, Implementation,
    InitializeResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResourceTemplate, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

pub use tool::MAX_TEXT;
pub use tools::research::MAX_FIELD;

use scholia_base::Error;
use scholia_engine::config::{Dirs, ProcessEnv};
use scholia_engine::{Engine, Host, JobStart, ProgressSink};
use scholia_index::{INDEXING, VaultSession};

/// How `scholia mcp` runs.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The vault (default: the current directory).
    pub vault: Option<PathBuf>,
    /// Streamable HTTP on this address instead of stdio.
    pub http: Option<SocketAddr>,
    /// The environment variable holding the bearer token HTTP requests must carry.
    pub token_env: Option<String>,
    /// Offer no tool that writes the vault (`--read-only`).
    pub read_only: bool,
    /// Folders every tool, resource and search is confined to (`--allow-folder`; none: all).
    pub allow_folders: Vec<String>,
    /// Only these tools (`--tools a,b`; none: all).
    pub tools: Option<Vec<String>>,
    /// A team's tokens, each with its own scope (`--tokens-file`; HTTP only).
    pub tokens_file: Option<PathBuf>,
}

/// What a server offers: which tools, and whether it may write.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub read_only: bool,
    pub tools: Option<Vec<String>>,
    /// The token whose scope this is (`--tokens-file`), for messages.
    pub token: Option<String>,
}

impl Policy {
    /// The policy of `--read-only` and `--tools`; an unknown tool name is an error naming
    /// the valid ones.
    pub fn new(read_only: bool, tools: Option<Vec<String>>) -> Result<Policy, Error> {
        if let Some(names) = &tools {
            for n in names {
                if table::find(n).is_none() {
                    return Err(Error::invalid(format!(
                        "--tools: `{n}` is not a tool; valid: {}",
                        table::names().join(", ")
                    )));
                }
            }
            if names.is_empty() {
                return Err(Error::invalid(format!(
                    "--tools: empty; valid: {}",
                    table::names().join(", ")
                )));
            }
        }
        Ok(Policy {
            read_only,
            tools,
            token: None,
        })
    }

    /// Whether the tool is offered; `Err` says why not.
    fn offers(&self, tool: &dyn table::Entry) -> Result<(), String> {
        if self.read_only && tool.writes() {
            return Err(match &self.token {
                Some(t) => format!(
                    "tool `{}` writes the vault and the token `{t}` is read-only",
                    tool.name()
                ),
                None => format!(
                    "tool `{}` writes the vault and this server is read-only (scholia mcp --read-only)",
                    tool.name()
                ),
            });
        }
        if let Some(names) = &self.tools
            && !names.iter().any(|n| n == tool.name())
        {
            return Err(match &self.token {
                Some(t) => format!("tool `{}` is not offered to the token `{t}`", tool.name()),
                None => format!(
                    "tool `{}` is not offered by this server (scholia mcp --tools {})",
                    tool.name(),
                    names.join(",")
                ),
            });
        }
        Ok(())
    }
}

/// What an agent is told of each tool, in the table's order; only the tools a server offers
/// are named (a `--tools` or `--read-only` server advertises nothing it refuses).
const TOOL_HINTS: &[(&str, &str)] = &[
    ("find_notes", "full-text search of the vault, instant and free"),
    (
        "read_note",
        "a note or one section, in pages; with outline=true the headings and the note's hash",
    ),
    ("list_notes", "notes by folder or tag"),
    ("backlinks", "the notes linking to one, with their lines"),
    (
        "edit_note",
        "replace, append to or prepend to one section (or set front-matter fields) against the hash read_note gave; a note changed since is refused with CONFLICT: read again",
    ),
    (
        "create_note",
        "a new note (from a template of the vault); never replaces one",
    ),
    (
        "move_note",
        "rename or move a note or a folder and rewrite every link to it, all or nothing",
    ),
    (
        "research_note",
        "writes cited findings into a note's `## Research` section (web + vault; offline without an LLM); read them with read_note(path, heading=\"Research\")",
    ),
    (
        "search",
        "asks Perplexity Sonar: sonar (fast, cheap), sonar-pro (multi-step), sonar-reasoning-pro (reasoning), sonar-deep-research (exhaustive, minutes, most expensive); with `note` it writes the answer into that note",
    ),
    (
        "deep_search",
        "multi-round research with verification (minutes); with `note` it writes the answer into that note",
    ),
    ("fetch_page", "one web page as Markdown"),
    (
        "start_deep_research",
        "background research that outlives the call (Gemini Deep Research with GEMINI_API_KEY, else scholia's deep search; with `note`, deep research written into that note); answers a task_id at once",
    ),
    ("check_research_status", "where a background task is"),
    ("get_research_results", "a finished task's report and sources"),
    ("cancel_research", "stops a task here and at the provider"),
    (
        "estimate_research_cost",
        "what a Gemini deep research will cost before you start (it costs real money)",
    ),
    ("save_research_to_markdown", "a finished report saved as a note"),
];

/// The server's instructions for the tools in `offered`.
fn instructions(offered: &[&str]) -> String {
    let mut out = String::from("scholia gives you the user's Markdown vault and research tools:\n");
    for (name, hint) in TOOL_HINTS.iter().filter(|(n, _)| offered.contains(n)) {
        out.push_str(&format!("- {name}: {hint}\n"));
    }
    if offered.contains(&"read_note") {
        out.push_str("Notes are also resources at note:///<path>.\n");
    }
    let vault = ["find_notes", "read_note", "list_notes", "backlinks"];
    let web = ["search", "deep_search", "fetch_page", "start_deep_research"];
    if vault.iter().any(|t| offered.contains(t)) && web.iter().any(|t| offered.contains(t)) {
        out.push_str(
            "Prefer the vault when the user's own notes may answer; use the web tools for what they do not hold. ",
        );
    }
    out.push_str("Long tools report progress and stop when the request is cancelled; a cancelled run changes no note.");
    let long: Vec<&str> = ["research_note", "deep_search", "search", "start_deep_research"]
        .into_iter()
        .filter(|t| offered.contains(t))
        .collect();
    if !long.is_empty() {
        out.push_str(&format!(
            "\nIf your client supports MCP tasks (io.modelcontextprotocol/tasks), {} answer with a task at once when the work may outlast a call (research with a model, deep search, Sonar deep research, background research): poll it with tasks/get until it is completed; its result is the tool's own. ",
            long.join(", ")
        ));
        if offered.contains(&"start_deep_research") {
            out.push_str(
                "Without tasks, start work of many minutes with start_deep_research and follow it with check_research_status and get_research_results.",
            );
        }
    }
    out
}

/// The server's state: one engine and what it hosts (the vault it serves, the task runner).
#[derive(Clone)]
pub struct Scholia {
    engine: Arc<Engine>,
    host: Arc<Host>,
    policy: Arc<Policy>,
    /// The folders the vault is confined to, set on it when it opens.
    scope: Arc<scholia_index::Scope>,
    /// The vault's root, once `open_vault` named it.
    root: Arc<std::sync::OnceLock<PathBuf>>,
    /// The calls answered with a task that this server runs.
    driving: Arc<calls::Driving>,
}

impl Scholia {
    pub fn new(engine: Arc<Engine>, host: Arc<Host>) -> Scholia {
        Scholia::with_policy(engine, host, Policy::default(), scholia_index::Scope::default())
    }

    pub fn with_policy(engine: Arc<Engine>, host: Arc<Host>, policy: Policy, scope: scholia_index::Scope) -> Scholia {
        Scholia {
            engine,
            host,
            policy: Arc::new(policy),
            scope: Arc::new(scope),
            root: Arc::default(),
            driving: Arc::default(),
        }
    }

    /// The vault's root, as calls record it.
    fn root(&self) -> Option<String> {
        self.root.get().map(|r| r.to_string_lossy().into_owned())
    }

    /// Notes are resources only where `read_note` is offered: the tool list decides what a
    /// client may read, through tools or resources alike.
    fn offers_resources(&self) -> bool {
        self.tools().iter().any(|t| t.name() == "read_note")
    }

    fn no_resources(&self) -> ErrorData {
        let offered: Vec<&str> = self.tools().iter().map(|t| t.name()).collect();
        ErrorData::invalid_params(
            format!(
                "this server offers no note resources (they come with the read_note tool); tools: {}",
                offered.join(", ")
            ),
            None,
        )
    }

    /// A read-only server refuses what would write a note.
    pub(crate) fn read_only(&self) -> bool {
        self.policy.read_only
    }

    fn tools(&self) -> Vec<&'static dyn table::Entry> {
        table::TOOLS
            .iter()
            .copied()
            .filter(|t| self.policy.offers(*t).is_ok())
            .collect()
    }

    /// Opens the vault at `root` in the background and keeps it current until the host shuts
    /// down (indexing progress goes to the log; research-note tasks on it write on disk).
    pub fn open_vault(&self, root: PathBuf, dirs: Dirs) {
        let (host, engine, self_scope) = (self.host.clone(), self.engine.clone(), self.scope.clone());
        host.vault().mark_opening(&root);
        let _ = self.root.set(root.clone());
        // Calls a stopped server left for this vault run again here.
        self.keep_calls();
        tokio::spawn(async move {
            let jobs = engine.jobs().clone();
            let start = move || {
                jobs.start(INDEXING, false, |_: &JobStart| {
                    Arc::new(Logged) as Arc<dyn ProgressSink>
                })
            };
            // Confined before the first request can reach it.
            let scope = (*self_scope).clone();
            let confine = move |v: &Arc<VaultSession>| v.index().set_scope(scope.clone());
            if let Err(e) = host.serve_vault(Some(engine), root, dirs, &start, None, &confine).await {
                tracing::error!("{e}");
            }
        });
    }

    /// The vault, once open and past its start-up sync (waiting a bounded time for it).
    async fn vault(&self) -> Result<Arc<VaultSession>, Error> {
        self.host.vault().wait(scholia_index::VAULT_WAIT).await
    }
}

/// Indexing progress, in the log (stdout belongs to the protocol).
struct Logged;

impl ProgressSink for Logged {
    fn update(&self, u: &scholia_engine::Update) {
        tracing::debug!("indexing: {}", u.message);
    }
    fn end(&self, message: &str) {
        tracing::info!("indexing: {message}");
    }
}

/// Runs the server until the client goes away (stdio) or the process is stopped (HTTP).
pub fn serve(options: McpOptions) -> anyhow::Result<()> {
    let root = match &options.vault {
        Some(v) => v.clone(),
        None => std::env::current_dir()?,
    };
    // A vault that is not there is an error now, not a server that answers "opening" forever.
    let root = scholia_vault::Vault::open(&root)
        .map_err(Error::from)?
        .root()
        .to_path_buf();
    if options.http.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!(
            "scholia mcp: serving {} to an MCP client on stdin/stdout; this is a server for agents \
             (see the README's \"MCP server\" section), Ctrl-C to stop",
            root.display()
        );
    }
    let policy = Policy::new(options.read_only, options.tools.clone())?;
    let scope = scholia_index::Scope::new(&root, &options.allow_folders)?;
    let engine = Arc::new(Engine::load(&ProcessEnv, Some(&root), None)?);
    if let Some(u) = engine.untrusted() {
        tracing::warn!("{u}");
    }
    let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
    let auth = match &options.tokens_file {
        Some(file) => http::Auth::Tokens(Arc::new(tokens::load(file, &root)?), root.clone()),
        None => match http::token(options.token_env.as_deref())? {
            Some(t) => http::Auth::One(t),
            None => http::Auth::None,
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let host = Arc::new(Host::default());
        // Background research tasks run in this process while it serves.
        host.run_tasks(engine.clone(), None);
        let server = Scholia::with_policy(engine, host.clone(), policy, scope);
        server.open_vault(root, dirs);
        let served = match options.http {
            None => serve_stdio(server.clone()).await,
            Some(addr) => http::serve(server.clone(), addr, auth, host.shutdown_token().clone()).await,
        };
        host.shutdown().await;
        // The calls still running here are taken over by the next server at once.
        server.release_calls().await;
        served
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
}

async fn serve_stdio(server: Scholia) -> anyhow::Result<()> {
    let running = server.serve((crate::stdio::input(), crate::stdio::output())).await?;
    running.waiting().await?;
    Ok(())
}

/// Runs the server over any byte streams (in-process tests).
pub async fn serve_streams<R, W>(server: Scholia, read: R, write: W) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = server.serve((read, write)).await?;
    running.waiting().await?;
    Ok(())
}

impl ServerHandler for Scholia {
    fn get_info(&self) -> InitializeResult {
        let names: Vec<&str> = self.tools().iter().map(|t| t.name()).collect();
        let capabilities = match self.offers_resources() {
            true => ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_tasks()
                .build(),
            false => ServerCapabilities::builder().enable_tools().enable_tasks().build(),
        };
        let mut info = InitializeResult::new(capabilities).with_instructions(instructions(&names));
        info.server_info = Implementation::new("scholia", env!("CARGO_PKG_VERSION")).with_title("scholia");
        info
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A token's caller is offered its own tools.
        let me = tokens::caller(&context).map(|c| self.as_caller(&c));
        let me = me.as_ref().unwrap_or(self);
        Ok(ListToolsResult::with_all_items(
            me.tools().iter().map(|t| t.describe()).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        table::find(name)
            .filter(|t| self.policy.offers(*t).is_ok())
            .map(|t| t.describe())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A team's token: its policy, and its folders for every query the call makes.
        if let Some(c) = tokens::caller(&context) {
            let me = self.as_caller(&c);
            let scope: scholia_base::ambient::Value = Arc::new(c.scope.clone());
            return scholia_base::ambient::within(scope, me.call(request, context)).await;
        }
        self.call(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if let Some(c) = tokens::caller(&context) {
            let me = self.as_caller(&c);
            let scope: scholia_base::ambient::Value = Arc::new(c.scope.clone());
            return scholia_base::ambient::within(scope, me.resources(request)).await;
        }
        self.resources(request).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(c) = tokens::caller(&context) {
            let me = self.as_caller(&c);
            let scope: scholia_base::ambient::Value = Arc::new(c.scope.clone());
            return scholia_base::ambient::within(scope, me.resource(request)).await;
        }
        self.resource(request).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.task(&request.task_id).await?))
    }

    async fn cancel_task(&self, request: CancelTaskParams, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.cancel(&request.task_id).await
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if !self.offers_resources() {
            return Ok(ListResourceTemplatesResult::with_all_items(Vec::new()));
        }
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("note:///{path}", "note")
                .with_title("A note of the vault")
                .with_description("A Markdown note by its path relative to the vault, e.g. note:///Projects/Koji.md")
                .with_mime_type("text/markdown"),
        ]))
    }
}

/// What the handlers serve, for the server or for a token's caller.
impl Scholia {
    /// A tool call, as this server (or a token's caller) may make it.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let run = progress::RunContext::new(&context);
        let offered = || self.tools().iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
        let tasks = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        match table::find(&request.name) {
            Some(tool) => match self.policy.offers(tool) {
                Ok(()) if tasks && tool.long(self, request.arguments.as_ref().unwrap_or(&Default::default())) => {
                    let run = progress::RunContext::detached(Arc::new(scholia_engine::NoProgress), Default::default());
                    Ok(CallToolResponse::Task(
                        self.start_call(tool, request.arguments, run).await?,
                    ))
                }
                Ok(()) => Ok(CallToolResponse::Complete(
                    tool.call(self, request.arguments, run).await,
                )),
                Err(why) => Err(ErrorData::invalid_params(format!("{why}; tools: {}", offered()), None)),
            },
            None => Err(ErrorData::invalid_params(
                format!("tool `{}` does not exist; tools: {}", request.name, offered()),
                None,
            )),
        }
    }
}
