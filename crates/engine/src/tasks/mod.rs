//! The task API every surface calls: start, status, results, cancel, list, estimate, save.
//! Defaults (kind, max wait, notification, list length, report directory and prefix, the Gemini
//! agent) are applied here, once; each answer is a typed shape with its summary, the same on
//! the CLI, the language server and the MCP server. `run.rs` runs the kinds that run in this
//! process for the task runner.

mod run;

use std::path::Path;
use std::sync::Arc;

use scholia_base::{Error, ErrorKind, blocking};
use scholia_tasks::estimate::Estimate;
use scholia_tasks::{
    Kind, LIST_LIMIT, MAX_LIST_LIMIT, SaveOptions, SavedReport, StartRequest, TaskCancelled, TaskList, TaskNote,
    TaskResults, TaskStarted, TaskStatus, Tasks,
};
use scholia_vault::confine::ConfinedDir;

use crate::Engine;
pub(crate) use run::TaskRunner;

use crate::defaults;
pub use crate::defaults::{REPORT_DIR, REPORT_PREFIX};

/// Connections to a PostgreSQL task store at most, per process.
const TASKS_POOL: usize = 8;

/// How a surface asks to save a report; every `None` takes the default (the vault's
/// [`REPORT_DIR`], [`REPORT_PREFIX`], the metadata table and the sources list included).
#[derive(Debug, Clone, Default)]
pub struct ReportSave {
    pub output_dir: Option<String>,
    pub prefix: Option<String>,
    pub include_metadata: Option<bool>,
    pub include_sources: Option<bool>,
}

/// A task as a surface asks for it; every `None` takes the engine's default.
#[derive(Debug, Clone, Default)]
pub struct TaskStart {
    /// The research question; for a research-note task, the optional focus.
    pub query: String,
    /// Default: [`Engine::task_kind`].
    pub kind: Option<Kind>,
    /// A desktop notification (or the editor's message) when it ends; default on.
    pub notify: Option<bool>,
    /// Give up after this long (default [`defaults::MAX_WAIT_HOURS`], within
    /// [`scholia_tasks::MAX_WAIT_HOURS`]).
    pub max_wait_hours: Option<f64>,
    /// The Gemini agent (default: `[tasks] agent`/GEMINI_DEEP_RESEARCH_AGENT, else
    /// [`scholia_providers::interactions::AGENT`]).
    pub model: Option<String>,
    /// research-note: the note, as the user gave it (vault-relative, or relative to `cwd`).
    pub note: Option<String>,
}

impl Engine {
    /// The kind of a task that names none: see [`Kind::default_for`].
    pub fn task_kind(&self, explicit: Option<Kind>, note: bool) -> Kind {
        explicit.unwrap_or_else(|| {
            let deep_search = scholia_research::deep_search::validate(
                &self.ctx,
                &scholia_research::deep_search::DeepSearchRequest {
                    query: "q".into(),
                    backend: None,
                    max_iterations: None,
                },
            )
            .is_ok();
            Kind::default_for(note, self.settings.gemini_api.is_some(), deep_search)
        })
    }

    /// Whether a background task without a note can run here: Gemini is configured, or
    /// scholia's deep search can run (editors offer background research only then).
    pub fn can_run_background(&self) -> bool {
        self.task_kind(None, false) == Kind::DeepSearch || self.settings.gemini_api.is_some()
    }

    /// The background tasks of the data directory, opened off the runtime on first use.
    pub async fn open_tasks(&self) -> Result<Arc<Tasks>, Error> {
        if let Some(t) = self.tasks.get() {
            return Ok(t.clone());
        }
        let (data, poll, price) = (
            self.settings.dirs.data.clone(),
            self.settings.tasks_poll,
            self.settings.tasks_price,
        );
        let interactions = self
            .settings
            .gemini_api
            .as_ref()
            .map(|(base, key)| scholia_providers::interactions::Interactions::new(base, key.clone()));
        let opened = match &self.settings.tasks_database {
            // A team's store: no SQLite file is made on this host.
            Some(url) => {
                let store = scholia_tasks::Store::connect(url, TASKS_POOL).await?;
                Arc::new(Tasks::with_store(store, &data, interactions, poll, price))
            }
            None => blocking(move || Ok(Arc::new(Tasks::open(&data, interactions, poll, price)?))).await?,
        };
        Ok(self.tasks.get_or_init(|| opened).clone())
    }

    /// Starts a background task. A research-note task's note is resolved inside `vault_root`
    /// (relative to `cwd` when given) before anything is stored.
    pub async fn start_task(
        &self,
        req: TaskStart,
        vault_root: Option<&Path>,
        cwd: Option<&Path>,
    ) -> Result<TaskStarted, Error> {
        let kind = self.task_kind(req.kind, req.note.is_some());
        let note = match (&req.note, kind) {
            (Some(input), Kind::ResearchNote) => {
                let root = vault_root.ok_or_else(|| {
                    Error::new(
                        "NO_VAULT",
                        ErrorKind::NotConfigured,
                        "note: a research-note task needs a vault (run it in the vault's folder)",
                    )
                })?;
                let (input, root, cwd) = (input.clone(), root.to_path_buf(), cwd.map(Path::to_path_buf));
                Some(
                    blocking(move || {
                        let vault = scholia_vault::Vault::open(&root)?;
                        let (rel, _) = vault.resolve_rel(&input, cwd.as_deref())?;
                        Ok(TaskNote {
                            vault: vault.root().to_path_buf(),
                            rel,
                        })
                    })
                    .await?,
                )
            }
            (None, Kind::ResearchNote) => None, // the request's check names the field
            (Some(_), kind) => {
                return Err(Error::invalid(format!(
                    "note: only a research-note task takes a note (this is a {} task)",
                    kind.as_str()
                )));
            }
            (None, _) => None,
        };
        if kind == Kind::DeepSearch {
            // Refused now, not after the runner picks it up: a backend must be there to run it.
            self.check_deep_search(&scholia_research::deep_search::DeepSearchRequest {
                query: req.query.clone(),
                backend: None,
                max_iterations: None,
            })?;
        }
        let model = (kind == Kind::Gemini).then(|| self.gemini_agent(req.model.as_deref()));
        let tasks = self.open_tasks().await?;
        let task = tasks
            .start(StartRequest {
                query: req.query,
                kind,
                notify: req.notify.unwrap_or(defaults::NOTIFY),
                max_wait_hours: req.max_wait_hours.unwrap_or(defaults::MAX_WAIT_HOURS),
                model,
                note,
            })
            .await?;
        if task.status.is_final() {
            let (t, r) = tasks.results(&task.id).await?;
            return Ok(TaskStarted::sync(t, r));
        }
        Ok(TaskStarted::of(&task))
    }

    /// A task's status, from the store (never calls the provider).
    pub async fn task_status(&self, id: &str) -> Result<TaskStatus, Error> {
        Ok(self.open_tasks().await?.status(id).await?)
    }

    /// A finished task's results, the report cut at [`scholia_tasks::MAX_REPORT_CHARS`]
    /// (saving writes it whole); sources unless `include_sources` is false.
    pub async fn task_results(&self, id: &str, include_sources: Option<bool>) -> Result<TaskResults, Error> {
        let (t, r) = self.open_tasks().await?.results(id).await?;
        Ok(TaskResults::of(
            t,
            r,
            include_sources.unwrap_or(defaults::INCLUDE_SOURCES),
        ))
    }

    /// Cancels a task here and at its provider, keeping what it has so far unless
    /// `save_partial` is false.
    pub async fn cancel_task(&self, id: &str, save_partial: Option<bool>) -> Result<TaskCancelled, Error> {
        let (t, kept) = self
            .open_tasks()
            .await?
            .cancel(id, save_partial.unwrap_or(defaults::SAVE_PARTIAL))
            .await?;
        Ok(TaskCancelled::of(t, kept))
    }

    /// The newest tasks ([`LIST_LIMIT`] unless asked, at most [`MAX_LIST_LIMIT`]).
    pub async fn list_tasks(&self, limit: Option<usize>) -> Result<TaskList, Error> {
        let limit = limit.unwrap_or(LIST_LIMIT);
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            return Err(Error::invalid(format!(
                "limit: {limit} is not valid; valid: 1 to {MAX_LIST_LIMIT}"
            )));
        }
        Ok(TaskList::of(self.open_tasks().await?.list(limit).await?))
    }

    /// Cost and duration of a Gemini deep research on `query` (no model call).
    pub async fn estimate_task(&self, query: &str) -> Result<Estimate, Error> {
        if query.trim().is_empty() {
            return Err(Error::invalid("query: empty; give the research question"));
        }
        Ok(self.open_tasks().await?.estimate(query))
    }

    /// The vault root reports of `vault` may be saved under: its root, unless the vault is
    /// confined to some folders (`--allow-folder`), whose reports go to the data directory.
    pub fn reports_root(vault: &scholia_index::VaultSession) -> Option<&Path> {
        vault.index().scope().is_whole_vault().then(|| vault.vault().root())
    }

    /// Where reports are saved: `given` (relative to the vault), else `research_reports/` in the
    /// vault, so saved reports are notes the index sees; without a vault, the data directory.
    /// Only inside the vault or the data directory (the write gate).
    pub async fn report_dir(&self, vault_root: Option<&Path>, given: Option<&str>) -> Result<ConfinedDir, Error> {
        let data = self.settings.dirs.data.clone();
        let (root, given) = (vault_root.map(Path::to_path_buf), given.map(str::to_string));
        blocking(move || {
            let base = root.clone().unwrap_or_else(|| data.clone());
            let mut roots: Vec<&Path> = vec![&data];
            roots.extend(root.as_deref());
            Ok(ConfinedDir::new(
                "output_dir",
                given.as_deref().unwrap_or(REPORT_DIR),
                &base,
                &roots,
            )?)
        })
        .await
    }

    /// Saves a finished task's report (`save_research_to_markdown`): defaults for the prefix
    /// and the directory ([`Engine::report_dir`]) applied here for every surface.
    pub async fn save_report(
        &self,
        vault_root: Option<&Path>,
        id: &str,
        opts: ReportSave,
    ) -> Result<SavedReport, Error> {
        let save = SaveOptions {
            output_dir: self.report_dir(vault_root, opts.output_dir.as_deref()).await?,
            prefix: opts.prefix.unwrap_or_else(|| REPORT_PREFIX.into()),
            include_metadata: opts.include_metadata.unwrap_or(defaults::REPORT_METADATA),
            include_sources: opts.include_sources.unwrap_or(defaults::REPORT_SOURCES),
        };
        Ok(self.open_tasks().await?.save(&self.ctx.library, id, save).await?)
    }
}
