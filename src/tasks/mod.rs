//! Background tasks: research that outlives a request. A SQLite store (`store.rs`) holds every
//! task and result; a runner in whichever scholia process runs tasks (the language server, the
//! MCP server, `scholia tasks run`) leases tasks so exactly one process drives each, and takes
//! over the tasks of a process that died. Gemini deep research runs on Google's side through the
//! Interactions API (`interactions.rs`); a deep search runs here.

pub mod estimate;
pub mod interactions;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, ErrorKind};
use interactions::{InteractionError, Interactions};
pub use store::{Results, Store, Task, now_ms};

/// How long a lease lasts without renewal (a process that died releases its tasks after
/// this): thirty polls, between 1 and 30 seconds.
fn lease(poll: Duration) -> Duration {
    (poll * 30).clamp(Duration::from_secs(1), Duration::from_secs(30))
}
/// What start-up and the runner claim at once.
const CLAIM_BATCH: usize = 64;
pub const EXPIRED: &str = "Research session expired on Gemini servers. Task was interrupted and cannot be recovered.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "gemini" => Some(Kind::Gemini),
            "deep-search" => Some(Kind::DeepSearch),
            "research-note" => Some(Kind::ResearchNote),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
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

/// The longest the runner keeps retrying a task store that fails every time (30 polls).
pub const STORE_GIVE_UP: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("task store: {0}")]
    Store(String),
    #[error("task_id: no task `{0}`; `scholia tasks list` shows the tasks")]
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
    Save(#[from] crate::vault::confine::ConfineError),
}

impl From<TaskError> for Error {
    fn from(e: TaskError) -> Error {
        let (code, kind) = match &e {
            TaskError::Store(_) => ("TASK_STORE", ErrorKind::Io),
            TaskError::Unknown(_) => ("UNKNOWN_TASK", ErrorKind::InvalidInput),
            TaskError::AlreadyFinished { .. } => ("TASK_FINISHED", ErrorKind::Conflict),
            TaskError::NotCompleted { .. } => ("TASK_NOT_COMPLETED", ErrorKind::Conflict),
            TaskError::Invalid(_) => ("INVALID_INPUT", ErrorKind::InvalidInput),
            TaskError::NoGemini => ("GEMINI_NOT_CONFIGURED", ErrorKind::NotConfigured),
            TaskError::Gemini(_) => ("GEMINI_FAILED", ErrorKind::Upstream),
            TaskError::Save(e) => {
                use crate::error::Coded;
                (e.code(), e.kind())
            }
        };
        Error::new(code, kind, e.to_string())
    }
}

/// What `start` needs.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub query: String,
    pub kind: Kind,
    pub notify: bool,
    pub max_wait_hours: f64,
    pub model: Option<String>,
    /// research-note tasks: the note (the query is then the optional focus).
    pub note: Option<TaskNote>,
}

/// The note a research-note task researches and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskNote {
    /// The vault's root, absolute.
    pub vault: PathBuf,
    /// Vault-relative, `/`-separated.
    pub rel: String,
}

impl StartRequest {
    pub fn check(&self) -> Result<(), TaskError> {
        match (self.kind, &self.note) {
            (Kind::ResearchNote, None) => {
                return Err(TaskError::Invalid(
                    "note: missing; a research-note task needs the note to research".into(),
                ));
            }
            (Kind::ResearchNote, Some(_)) => {}
            (_, Some(_)) => {
                return Err(TaskError::Invalid(format!(
                    "note: only a research-note task takes a note (this is a {} task)",
                    self.kind.as_str()
                )));
            }
            (_, None) if self.query.trim().is_empty() => {
                return Err(TaskError::Invalid("query: empty; give the research question".into()));
            }
            (_, None) => {}
        }
        if self.query.chars().count() > 20_000 {
            return Err(TaskError::Invalid("query: longer than 20,000 characters".into()));
        }
        if !(self.max_wait_hours > 0.0 && self.max_wait_hours <= 72.0) {
            return Err(TaskError::Invalid(format!(
                "max_wait_hours: {} is out of range; valid: more than 0, at most 72",
                self.max_wait_hours
            )));
        }
        if let Some(m) = &self.model
            && (m.is_empty() || m.starts_with('-') || m.chars().any(char::is_whitespace))
        {
            return Err(TaskError::Invalid(format!(
                "model: `{m}` is not a model name (no spaces, no leading `-`)"
            )));
        }
        Ok(())
    }
}

/// `check_research_status`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct StatusView {
    pub task_id: String,
    pub kind: Kind,
    pub status: &'static str,
    /// Only when the provider says it; never invented.
    pub progress: Option<u8>,
    pub current_action: Option<String>,
    pub elapsed_minutes: f64,
    pub tokens_used: Value,
    pub cost_so_far: f64,
    pub error: Option<String>,
    pub query: String,
    /// research-note tasks: the note's vault path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The background-task service of one data directory.
pub struct Tasks {
    store: Store,
    interactions: Option<Interactions>,
    poll: Duration,
    /// This process's name in leases.
    owner: String,
    /// Tasks this process drives, by id: cancelling one stops its driver.
    driving: Mutex<HashMap<String, CancellationToken>>,
    wake: tokio::sync::Notify,
    data_dir: PathBuf,
    price: crate::llm::Price,
    /// Where a finished task is announced when there is no desktop session (the language
    /// server shows it as a message).
    announce: Mutex<Option<Announce>>,
}

/// Shows a line to the user, e.g. as an LSP `window/showMessage`.
pub type Announce = Arc<dyn Fn(String) + Send + Sync>;

impl Tasks {
    pub fn open(
        data_dir: &Path,
        interactions: Option<Interactions>,
        poll: Duration,
        price: crate::llm::Price,
    ) -> Result<Tasks, TaskError> {
        Ok(Tasks {
            store: Store::open(data_dir)?,
            interactions,
            poll,
            owner: format!("{}-{:016x}", std::process::id(), fastrand::u64(..)),
            driving: Mutex::new(HashMap::new()),
            wake: tokio::sync::Notify::new(),
            data_dir: data_dir.to_path_buf(),
            price,
            announce: Mutex::new(None),
        })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Sets where finished tasks are announced when desktop notifications are unavailable.
    pub fn set_announce(&self, announce: Announce) {
        *self.announce.lock().unwrap_or_else(|e| e.into_inner()) = Some(announce);
    }

    /// Cost and duration of a Gemini deep research on `query`, at this store's prices.
    pub fn estimate(&self, query: &str) -> estimate::Estimate {
        estimate::estimate(query, self.price)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    async fn task(&self, id: &str) -> Result<Task, TaskError> {
        self.store
            .get(id)
            .await?
            .ok_or_else(|| TaskError::Unknown(id.to_string()))
    }

    /// Records the task and, for Gemini, creates the remote interaction (so the work starts
    /// even if no runner is up yet). Returns within the provider's request timeout.
    pub async fn start(&self, req: StartRequest) -> Result<Task, TaskError> {
        req.check()?;
        let now = now_ms();
        let mut task = Task {
            id: new_id(),
            kind: req.kind,
            query: req.query.trim().to_string(),
            model: req.model.clone(),
            note: req.note.as_ref().map(|n| n.rel.clone()),
            vault: req.note.as_ref().map(|n| n.vault.to_string_lossy().into_owned()),
            status: Status::Pending,
            progress: None,
            current_action: Some("queued".into()),
            remote_id: None,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            error: None,
            notify: req.notify,
            max_wait_hours: req.max_wait_hours,
            created_at: now,
            updated_at: now,
            completed_at: None,
            lease_owner: None,
            lease_until: None,
        };
        if req.kind == Kind::Gemini {
            let client = self.interactions.as_ref().ok_or(TaskError::NoGemini)?;
            let agent = req.model.as_deref().unwrap_or(interactions::AGENT);
            let created = tokio::time::timeout(Duration::from_secs(25), client.create(&req.query, agent))
                .await
                .map_err(|_| {
                    TaskError::Gemini(InteractionError::Unreachable {
                        base_url: "Gemini Interactions".into(),
                        reason: "no answer within 25 s".into(),
                    })
                })??;
            task.remote_id = Some(created.id.clone());
            task.status = Status::Running;
            task.current_action = Some(format!("Gemini is researching (status {})", created.status));
        }
        self.store.insert(task.clone()).await?;
        self.wake.notify_waiters();
        tracing::info!(task = %task.id, kind = task.kind.as_str(), "background task started");
        Ok(task)
    }

    pub async fn status(&self, id: &str) -> Result<StatusView, TaskError> {
        let t = self.task(id).await?;
        let end = t.completed_at.unwrap_or_else(now_ms);
        Ok(StatusView {
            task_id: t.id,
            kind: t.kind,
            status: match t.status {
                Status::Running => "running_async",
                s => s.as_str(),
            },
            progress: t.progress,
            current_action: t.current_action,
            elapsed_minutes: ((end - t.created_at).max(0) as f64 / 60_000.0 * 10.0).round() / 10.0,
            tokens_used: json!({"input": t.input_tokens, "output": t.output_tokens}),
            cost_so_far: t.cost_usd,
            error: t.error,
            query: t.query,
            note: t.note,
        })
    }

    /// A finished task's results (partial ones for `completed_partial` and a cancelled task
    /// that kept them).
    pub async fn results(&self, id: &str) -> Result<(Task, Results), TaskError> {
        let t = self.task(id).await?;
        if !t.status.is_final() {
            return Err(TaskError::NotCompleted {
                id: t.id,
                status: t.status.as_str(),
            });
        }
        match self.store.results(id).await? {
            Some(r) => Ok((t, r)),
            None => Err(TaskError::AlreadyFinished {
                id: t.id,
                status: match t.status {
                    Status::Failed => "failed, without results",
                    Status::Cancelled => "cancelled, without results",
                    s => s.as_str(),
                },
            }),
        }
    }

    /// Cancels a task here and at its provider; with `save_partial`, what it has so far is
    /// kept as its results.
    pub async fn cancel(&self, id: &str, save_partial: bool) -> Result<Task, TaskError> {
        let t = self.task(id).await?;
        if t.status.is_final() {
            return Err(TaskError::AlreadyFinished {
                id: t.id,
                status: t.status.as_str(),
            });
        }
        if let Some(token) = self.driving.lock().unwrap_or_else(|e| e.into_inner()).get(id) {
            token.cancel();
        }
        let mut partial = None;
        let mut remote_error = None;
        if let (Some(remote), Some(client)) = (&t.remote_id, &self.interactions) {
            if let Err(e) = client.cancel(remote).await {
                remote_error = Some(e.to_string());
            }
            if save_partial
                && let Ok(i) = client.get(remote).await
                && !i.report.is_empty()
            {
                partial = Some(results_of(&t, &i, self.price));
            }
        }
        let finished = self
            .store
            .finish(id, None, Status::Cancelled, partial, move |t| {
                t.current_action = Some("cancelled".into());
                t.error = remote_error.map(|e| format!("cancelling at Gemini failed: {e}"));
            })
            .await?;
        if let Some(t) = finished {
            return Ok(t);
        }
        // The runner saw the remote cancellation first and recorded it: the same outcome.
        match self.task(id).await? {
            t if t.status == Status::Cancelled => Ok(t),
            t => Err(TaskError::AlreadyFinished {
                id: t.id,
                status: t.status.as_str(),
            }),
        }
    }

    pub async fn list(&self, limit: usize) -> Result<Vec<Task>, TaskError> {
        self.store.list(limit).await
    }

    /// Records what a task this process drives is doing now (its status line); ignored once
    /// the task ended or another process holds it.
    pub async fn report(&self, id: &str, action: String) {
        let _ = self
            .store
            .update(id, Some(&self.owner), move |t| t.current_action = Some(action))
            .await;
    }

    /// Drives tasks until `shutdown`: claims unleased ones (a dead process's after its lease
    /// expires), renews its own, polls each. Leases are given up on a clean shutdown. A store
    /// that keeps failing (a full disk, a read-only file) is logged once, retried with backoff,
    /// and after [`STORE_GIVE_UP`] ends the run with its error.
    pub async fn run(self: Arc<Self>, runner: Arc<dyn Runner>, shutdown: CancellationToken) -> Result<(), TaskError> {
        let lease = lease(self.poll);
        let renew_every = lease / 3;
        let mut failing: Option<(Instant, Duration)> = None;
        loop {
            let until = now_ms() + lease.as_millis() as i64;
            let store = async {
                let held = self.store.renew(&self.owner, until).await?;
                let claimed = self.store.claim(&self.owner, until, CLAIM_BATCH).await?;
                Ok::<_, TaskError>((held, claimed))
            };
            let (held, mut to_drive) = match store.await {
                Ok(found) => {
                    if failing.take().is_some() {
                        tracing::info!("the task store works again");
                    }
                    found
                }
                Err(e) => {
                    let (since, backoff) = failing.get_or_insert_with(|| {
                        tracing::error!("the task store failed: {e}; retrying with backoff");
                        (Instant::now(), self.poll.max(Duration::from_millis(50)))
                    });
                    let give_up = (self.poll * 30).clamp(Duration::from_secs(1), STORE_GIVE_UP);
                    if since.elapsed() >= give_up {
                        tracing::error!("the task store kept failing for {give_up:?}; background tasks stop here");
                        return Err(e);
                    }
                    let wait = *backoff;
                    *backoff = (*backoff * 2).min(Duration::from_secs(10));
                    tokio::select! {
                        _ = shutdown.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(wait) => continue,
                    }
                }
            };
            // A task this process holds but does not drive (its driver had just given it up
            // when the lease came back): drive it again, or nobody ever would.
            for id in held {
                let driven = self.driving.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&id);
                if !driven
                    && !to_drive.iter().any(|t| t.id == id)
                    && let Ok(Some(t)) = self.store.get(&id).await
                {
                    to_drive.push(t);
                }
            }
            for task in to_drive {
                let token = shutdown.child_token();
                {
                    let mut driving = self.driving.lock().unwrap_or_else(|e| e.into_inner());
                    if driving.contains_key(&task.id) {
                        continue;
                    }
                    driving.insert(task.id.clone(), token.clone());
                }
                let (me, runner) = (self.clone(), runner.clone());
                tokio::spawn(async move {
                    let id = task.id.clone();
                    me.drive(task, runner, token).await;
                    me.driving.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                });
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(renew_every.min(self.poll.max(Duration::from_millis(50)))) => {}
                _ = self.wake.notified() => {}
            }
        }
        let _ = self.store.release(&self.owner).await;
        Ok(())
    }

    /// Runs one task to its end (or until this process loses it).
    async fn drive(&self, task: Task, runner: Arc<dyn Runner>, stop: CancellationToken) {
        let owner = self.owner.clone();
        let outcome = match task.kind {
            Kind::Gemini => self.drive_gemini(&task, &owner, &stop).await,
            Kind::DeepSearch | Kind::ResearchNote => {
                let _ = self
                    .store
                    .update(&task.id, Some(&owner), |t| {
                        t.status = Status::Running;
                        t.current_action = Some(format!("{} running", t.kind.as_str().replace('-', " ")));
                    })
                    .await;
                tokio::select! {
                    r = runner.run(&task, stop.clone()) => Some(r.map(|out| {
                        let mut metadata = json!({"mode": "async", "kind": task.kind.as_str(),
                            "tokens_used": {"input": out.usage.0, "output": out.usage.1}});
                        if let (Some(m), Value::Object(extra)) = (metadata.as_object_mut(), out.metadata) {
                            m.extend(extra);
                        }
                        (Status::Completed, Results { report: out.report, metadata, sources: out.sources, raw: None }, out.usage)
                    })),
                    _ = stop.cancelled() => None,
                }
            }
        };
        let Some(outcome) = outcome else {
            return; // cancelled or the lease was lost: someone else records the end
        };
        let (status, results, error, usage) = match outcome {
            Ok((status, results, usage)) => (status, Some(results), None, usage),
            Err(message) => (Status::Failed, None, Some(message), (0, 0)),
        };
        let price = self.price;
        let finished = self
            .store
            .finish(&task.id, Some(&owner), status, results, move |t| {
                t.error = error;
                t.current_action = Some(status.as_str().into());
                if usage != (0, 0) {
                    (t.input_tokens, t.output_tokens) = usage;
                    t.cost_usd = estimate::cost(price, usage.0, usage.1);
                }
            })
            .await;
        if let Ok(Some(t)) = finished {
            tracing::info!(task = %t.id, status = t.status.as_str(), "background task finished");
            if t.notify {
                let announce = self.announce.lock().unwrap_or_else(|e| e.into_inner()).clone();
                notify(&t, announce).await;
            }
        }
    }

    /// Polls the interaction until it ends, `max_wait_hours` pass, or `stop`.
    async fn drive_gemini(
        &self,
        task: &Task,
        owner: &str,
        stop: &CancellationToken,
    ) -> Option<Result<(Status, Results, (u64, u64)), String>> {
        let Some(remote) = task.remote_id.clone() else {
            return Some(Err(
                "the task was interrupted before Gemini accepted it; start it again".into(),
            ));
        };
        let Some(client) = self.interactions.clone() else {
            return Some(Err("GEMINI_API_KEY is not set in the process running tasks".into()));
        };
        let deadline = task.created_at + (task.max_wait_hours * 3_600_000.0) as i64;
        let mut backoff = self.poll;
        loop {
            if now_ms() > deadline {
                let _ = client.cancel(&remote).await;
                return Some(Err(format!(
                    "no result within max_wait_hours ({}); cancelled at Gemini",
                    task.max_wait_hours
                )));
            }
            // Poll only while this process holds the task: a lease lost under load (a late
            // renewal) means another process polls it now.
            match self.store.get(&task.id).await {
                Ok(Some(t))
                    if t.lease_owner.as_deref() == Some(owner) && t.lease_until.is_some_and(|u| u > now_ms()) => {}
                _ => return None,
            }
            match client.get(&remote).await {
                Ok(i) if i.is_final() => {
                    let status = match i.status.as_str() {
                        "completed" => Status::Completed,
                        "incomplete" => Status::CompletedPartial,
                        "cancelled" => Status::Cancelled,
                        _ => {
                            return Some(Err(format!(
                                "Gemini reports the research failed: {}",
                                i.error.clone().unwrap_or_else(|| i.status.clone())
                            )));
                        }
                    };
                    return Some(Ok((
                        status,
                        results_of(task, &i, self.price),
                        (i.input_tokens, i.output_tokens),
                    )));
                }
                Ok(i) => {
                    backoff = self.poll;
                    let elapsed = (now_ms() - task.created_at) as f64 / 60_000.0;
                    let (input, output, price) = (i.input_tokens, i.output_tokens, self.price);
                    let held = self
                        .store
                        .update(&task.id, Some(owner), move |t| {
                            t.status = Status::Running;
                            t.current_action = Some(format!(
                                "Gemini is researching (status {}, {elapsed:.1} min elapsed)",
                                i.status
                            ));
                            (t.input_tokens, t.output_tokens) = (input, output);
                            t.cost_usd = estimate::cost(price, input, output);
                        })
                        .await;
                    if !matches!(held, Ok(Some(_))) {
                        return None; // cancelled elsewhere, or another process holds it now
                    }
                }
                Err(InteractionError::Gone(_)) => return Some(Err(EXPIRED.into())),
                Err(e) if e.retryable() => {
                    tracing::warn!(task = %task.id, "polling Gemini failed ({e}); retrying in {backoff:?}");
                    backoff = (backoff * 2).min(Duration::from_secs(300));
                }
                Err(e) => return Some(Err(e.to_string())),
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                _ = tokio::time::sleep(backoff) => {}
            }
        }
    }

    /// Writes a finished task's report with `templates/research-report.md` to
    /// `{output_dir}/{YYYY-MM}/{prefix}_{task_id}_{YYYYmmdd_HHMMSS}.md`.
    pub async fn save(
        &self,
        library: &crate::prompts::Library,
        id: &str,
        opts: SaveOptions,
    ) -> Result<SavedReport, TaskError> {
        let (t, r) = self.results(id).await?;
        if opts.prefix.is_empty() || opts.prefix.contains(['/', '\\']) || opts.prefix.starts_with('.') {
            return Err(TaskError::Invalid(format!(
                "filename_prefix: `{}` is not a file name prefix (letters, digits, `-`, `_`)",
                opts.prefix
            )));
        }
        let now = time::OffsetDateTime::now_utc();
        let fmt = |f: &[time::format_description::BorrowedFormatItem<'_>]| now.format(f).unwrap_or_default();
        let month = fmt(time::macros::format_description!("[year]-[month]"));
        let stamp = fmt(time::macros::format_description!(
            "[year][month][day]_[hour][minute][second]"
        ));
        let created = now
            .replace_nanosecond(0)
            .unwrap_or(now)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        // A report becomes a note of the vault: made inert like any section, its links only
        // to the sources it lists.
        let links = crate::vault::inert::Links::from_urls(
            r.sources
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("url").and_then(|u| u.as_str())),
        );
        let report = crate::vault::inert::markdown(&r.report, 2, &links, &|_| false).0;
        let text = library
            .render(
                crate::prompts::RESEARCH_REPORT,
                json!({
                    "task": t, "report": report, "sources": r.sources, "metadata": r.metadata,
                    "include_metadata": opts.include_metadata, "include_sources": opts.include_sources,
                    "saved_at": created,
                }),
            )
            .map_err(|e| TaskError::Invalid(e.to_string()))?;
        let filename = format!("{}_{}_{}.md", opts.prefix, t.id, stamp);
        let bytes = text.len();
        let (dir, name) = (opts.output_dir.clone(), filename.clone());
        let path = tokio::task::spawn_blocking(move || dir.join(&month)?.create(&name, &text))
            .await
            .expect("saving does not panic")?;
        let shown = path.display().to_string();
        Ok(SavedReport {
            success: true,
            task_id: t.id,
            file_path: shown,
            file_size_kb: (bytes as f64 / 1024.0 * 10.0).round() / 10.0,
            filename,
            created_at: created,
        })
    }
}

fn results_of(task: &Task, i: &interactions::Interaction, price: crate::llm::Price) -> Results {
    let minutes = (now_ms() - task.created_at).max(0) as f64 / 60_000.0;
    Results {
        report: i.report.clone(),
        sources: serde_json::to_value(&i.sources).unwrap_or_default(),
        metadata: json!({
            "duration_minutes": (minutes * 10.0).round() / 10.0,
            "tokens_used": {"input": i.input_tokens, "output": i.output_tokens},
            "cost_usd": estimate::cost(price, i.input_tokens, i.output_tokens),
            "mode": "async",
            "interaction_id": i.id,
            "status": i.status,
        }),
        raw: Some(i.raw.to_string()),
    }
}

#[derive(Debug, Clone)]
pub struct SaveOptions {
    /// Where to save: only a directory the write gate allows.
    pub output_dir: crate::vault::confine::ConfinedDir,
    pub prefix: String,
    pub include_metadata: bool,
    pub include_sources: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SavedReport {
    pub success: bool,
    pub task_id: String,
    pub file_path: String,
    pub file_size_kb: f64,
    pub filename: String,
    pub created_at: String,
}

/// What a task run in this process gives.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub report: String,
    /// `[{url, title}, …]`.
    pub sources: Value,
    /// Input and output tokens.
    pub usage: (u64, u64),
    /// Added to the results' metadata (an object).
    pub metadata: Value,
}

/// Runs the tasks that run in this process — deep search and research-note (the engine
/// implements it); the error is the task's failure message.
pub trait Runner: Send + Sync {
    fn run<'a>(
        &'a self,
        task: &'a Task,
        stop: CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunOutput, String>> + Send + 'a>>;
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

/// A desktop notification when there is a session; else a log line and the surface's own
/// announcement (the editor's message). Never fails the task, never blocks the runtime.
async fn notify(t: &Task, announce: Option<Announce>) {
    let query: String = match (&t.note, t.query.as_str()) {
        (Some(note), "") => note.clone(),
        (Some(note), focus) => format!("{note} ({focus})"),
        (None, q) => q.chars().take(80).collect(),
    };
    let line = format!(
        "scholia: background research {} ({}): {query}; `scholia tasks results {}`",
        t.status.as_str().replace('_', " "),
        t.id,
        t.id
    );
    let (summary, body) = (
        format!("Research {}", t.status.as_str().replace('_', " ")),
        query.clone(),
    );
    let shown = tokio::time::timeout(
        Duration::from_secs(2),
        tokio::task::spawn_blocking(move || {
            notify_rust::Notification::new()
                .appname("scholia")
                .summary(&summary)
                .body(&body)
                .show()
                .map(|_| ())
        }),
    )
    .await;
    match shown {
        Ok(Ok(Ok(()))) => tracing::info!(task = %t.id, "desktop notification shown"),
        other => {
            // notify-rust's errors cannot be told apart (no session bus, no server): any is
            // "no desktop notifications here".
            let why = match other {
                Ok(Ok(Err(e))) => e.to_string(),
                Err(_) => "no answer within 2 s".into(),
                _ => "the notifier panicked".into(),
            };
            tracing::info!(task = %t.id, "no desktop notification ({why}); {line}");
            if let Some(a) = announce {
                a(line);
            }
        }
    }
}
