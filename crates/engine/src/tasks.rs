//! Background tasks as engine operations: starting one (notes resolved and defaults applied
//! here, once for every surface) and running the kinds that run in this process — deep search
//! and research-note — for the task runner.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{DiskWriter, Engine, NoteWriter, ProgressSink, Update};
use scholia_base::blocking;
use scholia_base::{Error, ErrorKind};
use scholia_index::VaultSession;
use scholia_research::note::{Depth, Source};
use scholia_tasks::{Kind, RunOutput, SaveOptions, SavedReport, StartRequest, Task, TaskNote, Tasks};
use scholia_vault::confine::ConfinedDir;

/// Reports are saved here in the vault unless a request names a directory.
pub const REPORT_DIR: &str = "research_reports";
/// How long a background task may run before it is given up (and cancelled at Gemini).
pub const MAX_WAIT_HOURS: f64 = 8.0;

/// Saved reports' file names start with this unless a request names a prefix.
pub const REPORT_PREFIX: &str = "research";

/// How a surface asks to save a report; `None` takes the default.
#[derive(Debug, Clone)]
pub struct ReportSave {
    pub output_dir: Option<String>,
    pub prefix: Option<String>,
    pub include_metadata: bool,
    pub include_sources: bool,
}

impl Default for ReportSave {
    fn default() -> ReportSave {
        ReportSave {
            output_dir: None,
            prefix: None,
            include_metadata: true,
            include_sources: true,
        }
    }
}

/// A vault whose notes this process writes through its own writer: the language server hosts
/// its vault, so a research-note task on a note open in the editor lands in the buffer.
#[derive(Clone)]
pub struct NoteHost {
    pub session: Arc<VaultSession>,
    /// Must not own what owns the engine (the engine keeps it): hold surface state weakly.
    pub writer: Arc<dyn NoteWriter>,
}

/// The engine keeps the hosted session weakly: the surface that opened it decides when it
/// closes (and with it the index writer's lock).
#[derive(Clone)]
pub(super) struct HostedNotes {
    session: std::sync::Weak<VaultSession>,
    writer: Arc<dyn NoteWriter>,
}

/// A task as a surface asks for it.
#[derive(Debug, Clone)]
pub struct TaskStart {
    /// The research question; for a research-note task, the optional focus.
    pub query: String,
    pub kind: Kind,
    pub notify: bool,
    /// Give up after this long (default [`MAX_WAIT_HOURS`], 0.1 to 72).
    pub max_wait_hours: Option<f64>,
    /// The Gemini agent (default: `[tasks]`/GEMINI_DEEP_RESEARCH_AGENT, else the seed's).
    pub model: Option<String>,
    /// research-note: the note, as the user gave it (vault-relative, or relative to `cwd`).
    pub note: Option<String>,
}

impl Engine {
    /// Makes `host` the vault whose research-note tasks this process writes through
    /// `host.writer` (other vaults' notes are written on disk).
    pub fn host_notes(&self, host: NoteHost) {
        *scholia_base::lock(&self.note_host) = Some(HostedNotes {
            session: Arc::downgrade(&host.session),
            writer: host.writer,
        });
    }

    /// Starts a background task. A research-note task's note is resolved inside `vault_root`
    /// (relative to `cwd` when given) before anything is stored.
    pub async fn start_task(
        &self,
        req: TaskStart,
        vault_root: Option<&Path>,
        cwd: Option<&Path>,
    ) -> Result<Task, Error> {
        let note = match (&req.note, req.kind) {
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
                return Err(Error::new(
                    "INVALID_INPUT",
                    ErrorKind::InvalidInput,
                    format!(
                        "note: only a research-note task takes a note (this is a {} task)",
                        kind.as_str()
                    ),
                ));
            }
            (None, _) => None,
        };
        let max_wait_hours = req.max_wait_hours.unwrap_or(MAX_WAIT_HOURS);
        if !(0.1..=72.0).contains(&max_wait_hours) {
            return Err(Error::invalid(format!(
                "max_wait_hours: {max_wait_hours} is not valid; valid: a number of hours from 0.1 to 72"
            )));
        }
        if req.kind == Kind::DeepSearch {
            // Refused now, not after the runner picks it up: a backend must be there to run it.
            self.check_deep_search(&scholia_research::deep_search::DeepSearchRequest {
                query: req.query.clone(),
                backend: None,
                max_iterations: None,
            })?;
        }
        let model = req
            .model
            .or_else(|| self.settings.gemini_agent.clone())
            .filter(|_| req.kind == Kind::Gemini);
        let tasks = self.tasks()?;
        Ok(tasks
            .start(StartRequest {
                query: req.query,
                kind: req.kind,
                notify: req.notify,
                max_wait_hours,
                model,
                note,
            })
            .await?)
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
            include_metadata: opts.include_metadata,
            include_sources: opts.include_sources,
        };
        Ok(self.tasks()?.save(&self.ctx.library, id, save).await?)
    }

    /// The session and writer for a research-note task's vault: the hosted one, else the
    /// vault opened (and synced when this process holds its index) for this run.
    async fn task_vault(&self, root: &Path) -> Result<(Arc<VaultSession>, Arc<dyn NoteWriter>), Error> {
        let host = scholia_base::lock(&self.note_host).clone();
        if let Some(h) = host
            && let Some(session) = h.session.upgrade()
            && same_dir(session.vault().root(), root)
        {
            return Ok((session, h.writer));
        }
        let (root, dirs) = (root.to_path_buf(), self.settings.dirs.clone());
        let session = blocking(move || VaultSession::open_synced(&root, &dirs, &mut |_| {}).map(|(s, _)| s)).await?;
        Ok((Arc::new(session), Arc::new(DiskWriter)))
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a == b || canon(a) == canon(b)
}

/// Runs the tasks that run in this process, for the task runner of any surface.
pub(super) struct TaskRunner(pub(super) Arc<Engine>);

impl scholia_tasks::Runner for TaskRunner {
    fn run<'a>(
        &'a self,
        task: &'a Task,
        stop: CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunOutput, String>> + Send + 'a>> {
        Box::pin(async move {
            let engine = &self.0;
            let tasks = engine.tasks().map_err(|e| e.message)?;
            let title = format!("background {}", task.kind.as_str().replace('-', " "));
            let sink = TaskProgress {
                tasks,
                id: task.id.clone(),
                handle: tokio::runtime::Handle::current(),
            };
            // Cancelled through its task (`tasks cancel`), not as an editor's job.
            let job = engine.jobs().start(&title, false, |_| Arc::new(sink));
            let token = job.token().clone();
            let watcher = tokio::spawn(async move {
                stop.cancelled().await;
                token.cancel();
            });
            let result = match task.kind {
                Kind::ResearchNote => research_note(engine, task, &job).await,
                _ => deep_search(engine, task, &job).await,
            };
            watcher.abort();
            result.map_err(|e| e.message)
        })
    }
}

async fn deep_search(engine: &Engine, task: &Task, job: &super::Job) -> Result<RunOutput, Error> {
    let req = scholia_research::deep_search::DeepSearchRequest {
        query: task.query.clone(),
        backend: None,
        max_iterations: None,
    };
    let r = engine.deep_search(&req, job).await?;
    let usage = r
        .metadata
        .tokens
        .as_ref()
        .map(|t| (t.prompt, t.candidates + t.thoughts))
        .unwrap_or((0, 0));
    let sources = r
        .metadata
        .sources_visited
        .iter()
        .map(|u| json!({"url": u, "title": ""}))
        .collect::<Vec<_>>();
    Ok(RunOutput {
        report: r.result,
        sources: Value::Array(sources),
        usage,
        metadata: json!({"verified": r.verified, "iterations": r.metadata.iterations}),
    })
}

/// Deep research_note on the task's note, written through the hosting writer (the editor's
/// buffer when the note is open in the language server running it) or atomically on disk.
async fn research_note(engine: &Engine, task: &Task, job: &super::Job) -> Result<RunOutput, Error> {
    let (Some(root), Some(rel)) = (&task.vault, &task.note) else {
        return Err(Error::new(
            "INVALID_INPUT",
            ErrorKind::InvalidInput,
            "the task names no note; start it again with the note",
        ));
    };
    let (session, writer) = engine.task_vault(&PathBuf::from(root)).await?;
    let note = session.resolve(rel, None)?;
    let focus = Some(task.query.as_str()).filter(|q| !q.is_empty());
    let outcome = engine
        .research_note(&session, &note, Depth::Deep, focus, writer.as_ref(), job)
        .await?;
    let r = &outcome.research;
    let sources = r
        .sources
        .iter()
        .map(|s| match s {
            Source::Web { title, url } => json!({"url": url, "title": title}),
            Source::Vault { title, path, .. } => json!({"url": path, "title": title, "vault": true}),
        })
        .collect::<Vec<_>>();
    Ok(RunOutput {
        report: r.section.clone(),
        sources: Value::Array(sources),
        usage: (
            r.usage.prompt_tokens,
            r.usage.completion_tokens + r.usage.reasoning_tokens,
        ),
        metadata: json!({"note": note.rel, "written": outcome.written, "topics": r.topics,
                         "citations_removed": r.citations_removed, "research_mode": r.mode}),
    })
}

/// A background job's progress, recorded as its task's current action.
struct TaskProgress {
    tasks: Arc<Tasks>,
    id: String,
    handle: tokio::runtime::Handle,
}

impl ProgressSink for TaskProgress {
    fn update(&self, update: &Update) {
        let (tasks, id, message) = (self.tasks.clone(), self.id.clone(), update.message.clone());
        self.handle.spawn(async move { tasks.report(&id, message).await });
    }
    fn end(&self, _: &str) {}
}
