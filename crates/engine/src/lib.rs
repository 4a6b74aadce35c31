//! The engine: the facade every surface calls. One composition root ([`Engine::load`]: settings,
//! prompts, every client, the research [`Context`]), one operation per capability with its
//! defaults inside (`ops.rs`), the task API (`tasks/`), the server host the language server
//! and the MCP server share (`host.rs`), and the note-writer port ([`NoteWriter`]). Surfaces (CLI, LSP, MCP, the task runner) translate their protocol to these
//! calls and back; they do not set up, default or decide.

pub mod config;
pub mod defaults;
mod events;
pub mod host;
pub mod mcp_setup;
mod meaning;
mod ops;
pub mod provenance;
mod providers;
mod tasks;
pub mod tokens;
mod writer;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

pub use events::Event;
pub use host::{Host, NoteHost};
pub use ops::{Answer, BackgroundOutcome, OFFLINE_HINT, Question, QuestionOutcome, ResearchOutcome};
pub use providers::Providers;
pub use scholia_base::{
    Error, ErrorKind, Job, JobId, JobInfo, JobStart, Jobs, NoProgress, ProgressSink, Summary, Update, blocking,
};
pub use scholia_index::SearchResults;
pub use scholia_research::Context;
pub use scholia_tasks::estimate::Estimate;
pub use scholia_tasks::{
    Kind as TaskKind, SavedReport, Status as TaskState, TaskCancelled, TaskList, TaskResults, TaskStarted, TaskStatus,
};
pub use scholia_vault::{NotePath, QUESTION_MARKER, SECTION, SECTION_LEVEL, SectionEdit};
pub use tasks::{REPORT_DIR, REPORT_PREFIX, ReportSave, TaskStart};
pub use writer::{BoxFuture, DiskWriter, NoteWriter, WriteError};

use config::{Env, FileConfig, SearchProvider, Settings};
use scholia_prompts::{self as prompts, Library};
use scholia_providers::gemini_cli::GeminiCli;
use scholia_providers::llm::ChatClient;
use scholia_providers::sonar::Sonar;
use scholia_providers::web::fetch::Fetcher;
use scholia_providers::web::search::{DuckDuckGo, Searxng, WebSearch};
use scholia_research::DeepSearchDefaults;

/// How long one page fetch may take.
pub const PAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings, prompts and every remote client, built once per process (or per vault for the
/// language server, whose settings come from the vault's folder).
pub struct Engine {
    pub(crate) settings: Settings,
    /// What the pipelines may use: clients, limits, prompts.
    pub(crate) ctx: Context,
    jobs: Jobs,
    /// The background-task service of the data directory, opened on first use.
    tasks: std::sync::OnceLock<Arc<scholia_tasks::Tasks>>,
    /// The vault whose research-note tasks this process writes through its own writer.
    note_host: Mutex<Option<host::HostedNotes>>,
    /// Run records read so far (a run's id is a hash of its record: it never changes).
    records: Mutex<std::collections::HashMap<String, Option<Arc<scholia_research::record::RunRecord>>>>,
    /// The embedder, built on first use (see `meaning.rs`); the pipelines' context shares it.
    embedder: Arc<std::sync::OnceLock<meaning::Built>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Loads settings (`overrides` > environment > `.scholia.toml` under `vault_root` >
    /// defaults) and builds the engine. Blocking: reads files.
    pub fn load(env: &dyn Env, vault_root: Option<&Path>, overrides: Option<&FileConfig>) -> Result<Engine, Error> {
        Engine::new(Settings::load(env, vault_root, overrides)?)
    }

    /// Builds the prompt library and every client from `settings`. Blocking: reads prompt
    /// overrides and cleans up the Gemini CLI's orphaned temp files (once per process).
    pub fn new(settings: Settings) -> Result<Engine, Error> {
        let library = Library::load(Some(&settings.dirs.config))?;
        cleanup_once(&settings.dirs.config);
        let search: Arc<dyn WebSearch> = match &settings.search {
            SearchProvider::DuckDuckGo { url } => Arc::new(DuckDuckGo::new(url)),
            SearchProvider::Searxng { url } => Arc::new(Searxng::new(url)),
        };
        let sonar = match &settings.openrouter {
            Some(config) => Some(Sonar::new(
                config.clone(),
                library.render(prompts::SONAR_SYSTEM, serde_json::json!({}))?,
            )),
            None => None,
        };
        let mut gemini = GeminiCli::new(
            &settings.gemini_cli.program,
            &settings.dirs.config,
            settings.gemini_cli.env.clone(),
        );
        gemini.timeout = settings.gemini_cli.timeout;
        gemini.kill_grace = gemini.kill_grace.min(gemini.timeout);
        if let Some(u) = &settings.untrusted {
            tracing::info!("{u}");
        }
        match &settings.llm {
            None => tracing::info!("no LLM configured: research runs offline"),
            Some(l) => tracing::info!(
                "research LLM: {} at {}",
                l.model,
                scholia_providers::http::redact(&l.base_url)
            ),
        }
        let embedder: Arc<std::sync::OnceLock<meaning::Built>> = Arc::default();
        let (cell, config) = (embedder.clone(), settings.embeddings.clone());
        let ctx = Context {
            embedder: Arc::new(move || {
                if meaning::would_download(&cell, config.as_ref()) {
                    return None;
                }
                meaning::build(
                    &cell,
                    config.as_ref(),
                    meaning::Patience::Patient,
                    &|| false,
                    &mut |_| {},
                )
                .ok()
                .flatten()
            }),
            llm: settings.llm.clone().map(|c| Arc::new(ChatClient::new(c))),
            fetcher: Fetcher::new(settings.allow_private_hosts),
            search_permits: Arc::new(Semaphore::new(settings.search_concurrency.max(1))),
            search_timeout: settings.search_timeout,
            page_timeout: PAGE_TIMEOUT,
            gemini,
            gemini_model: settings.gemini_cli.model.clone(),
            gemini_correction_model: settings.gemini_cli.correction_model.clone(),
            sonar,
            library,
            search,
            deep_search: DeepSearchDefaults {
                max_iterations: settings.deep_search_max_iterations,
                backend: settings.deep_search_backend,
            },
        };
        Ok(Engine {
            ctx,
            settings,
            jobs: Jobs::default(),
            tasks: std::sync::OnceLock::new(),
            note_host: Mutex::new(None),
            records: Mutex::new(std::collections::HashMap::new()),
            embedder,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings of an untrusted vault's `.scholia.toml` that were ignored, if any: each
    /// surface shows this once (and the editor offers to trust the vault).
    pub fn untrusted(&self) -> Option<&config::trust::Untrusted> {
        self.settings.untrusted.as_ref()
    }

    pub fn library(&self) -> &Library {
        &self.ctx.library
    }

    /// What the pipelines run with.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The running jobs of this engine.
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// Shares `jobs` (a process has one registry: a surface that runs jobs before the engine
    /// exists, such as indexing in the language server, passes its own in).
    pub fn with_jobs(mut self, jobs: Jobs) -> Engine {
        self.jobs = jobs;
        self
    }

    /// Runs background tasks until `shutdown` (a surface calls this once per process, or
    /// through [`Host::run_tasks`]).
    pub async fn run_tasks(self: &Arc<Self>, shutdown: tokio_util::sync::CancellationToken) -> Result<(), Error> {
        let tasks = self.open_tasks().await?;
        Ok(tasks.run(Arc::new(tasks::TaskRunner(self.clone())), shutdown).await?)
    }

    /// The research LLM's model, when one is configured.
    pub fn llm_model(&self) -> Option<&str> {
        self.ctx.llm.as_deref().map(ChatClient::model)
    }

    /// Sets the timeout between page fetches (benchmarks and tests of slow pages).
    pub fn with_page_timeout(mut self, timeout: Duration) -> Engine {
        self.ctx.page_timeout = timeout;
        self
    }
}

/// Deletes the Gemini CLI's orphaned temp files of `config` once per process.
fn cleanup_once(config: &Path) {
    static DONE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let first = scholia_base::lock(&DONE)
        .get_or_insert_with(HashSet::new)
        .insert(config.to_path_buf());
    if first {
        GeminiCli::startup_cleanup(config);
    }
}
