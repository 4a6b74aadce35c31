//! The tasks API every surface reaches through the engine: start, status, results, cancel,
//! list; estimates.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use scholia_providers::interactions::{self, InteractionError, Interactions};

use crate::runner::results_of;
use crate::{Kind, MAX_WAIT_HOURS, Results, Status, Store, Task, TaskError, TaskStatus, estimate, new_id, now_ms};

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
        if !MAX_WAIT_HOURS.contains(&self.max_wait_hours) {
            return Err(TaskError::Invalid(format!(
                "max_wait_hours: {} is not valid; valid: a number of hours from {} to {}",
                self.max_wait_hours,
                MAX_WAIT_HOURS.start(),
                MAX_WAIT_HOURS.end()
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

/// The background-task service of one data directory.
pub struct Tasks {
    pub(crate) store: Store,
    pub(crate) interactions: Option<Interactions>,
    pub(crate) poll: Duration,
    /// This process's name in leases.
    pub(crate) owner: String,
    /// Tasks this process drives, by id: cancelling one stops its driver.
    pub(crate) driving: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) wake: tokio::sync::Notify,
    pub(crate) data_dir: PathBuf,
    pub(crate) price: scholia_providers::llm::Price,
    /// Where a finished task is announced when there is no desktop session (the language
    /// server shows it as a message).
    pub(crate) announce: Mutex<Option<Announce>>,
}

/// Shows a line to the user, e.g. as an LSP `window/showMessage`.
pub type Announce = Arc<dyn Fn(String) + Send + Sync>;

impl Tasks {
    /// The tasks of the SQLite store in `data_dir`.
    pub fn open(
        data_dir: &Path,
        interactions: Option<Interactions>,
        poll: Duration,
        price: scholia_providers::llm::Price,
    ) -> Result<Tasks, TaskError> {
        Ok(Tasks::with_store(
            Store::open(data_dir)?,
            data_dir,
            interactions,
            poll,
            price,
        ))
    }

    /// The tasks of `store` (a team's PostgreSQL, or SQLite); `data_dir` keeps this host's
    /// reports when no vault takes them.
    pub fn with_store(
        store: Store,
        data_dir: &Path,
        interactions: Option<Interactions>,
        poll: Duration,
        price: scholia_providers::llm::Price,
    ) -> Tasks {
        Tasks {
            store,
            interactions,
            poll,
            owner: format!("{}-{:016x}", std::process::id(), fastrand::u64(..)),
            driving: Mutex::new(HashMap::new()),
            wake: tokio::sync::Notify::new(),
            data_dir: data_dir.to_path_buf(),
            price,
            announce: Mutex::new(None),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The calls answered with a task, driven by this process.
    pub fn calls(&self) -> crate::calls::Calls {
        crate::calls::Calls::new(self.store.clone(), self.owner.clone(), crate::lease(self.poll))
    }

    /// Sets where finished tasks are announced when desktop notifications are unavailable.
    pub fn set_announce(&self, announce: Announce) {
        *scholia_base::lock(&self.announce) = Some(announce);
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
            // The seed's synchronous case: the create call already answers with the report.
            let done = match created.status.as_str() {
                "completed" => Some(Status::Completed),
                "incomplete" => Some(Status::CompletedPartial),
                _ => None,
            };
            if let Some(status) = done {
                self.store.insert(task.clone()).await?;
                let mut results = results_of(&task, &created, self.price);
                results.metadata.mode = "sync".into();
                let (input, output, price) = (created.input_tokens, created.output_tokens, self.price);
                let finished = self
                    .store
                    .finish(&task.id, None, status, Some(results), move |t| {
                        t.current_action = Some("completed at once".into());
                        (t.input_tokens, t.output_tokens) = (input, output);
                        t.cost_usd = estimate::cost(price, input, output);
                    })
                    .await?;
                tracing::info!(task = %task.id, "Gemini answered at once: completed synchronously");
                return finished.ok_or_else(|| TaskError::Unknown(task.id.clone()));
            }
        }
        self.store.insert(task.clone()).await?;
        self.wake.notify_waiters();
        tracing::info!(task = %task.id, kind = task.kind.as_str(), "background task started");
        Ok(task)
    }

    pub async fn status(&self, id: &str) -> Result<TaskStatus, TaskError> {
        Ok(TaskStatus::of(self.task(id).await?))
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
        // A cancelled or failed task whose provider wrote nothing has no results, however
        // its end was recorded (by `cancel`, or first by the runner seeing the provider's end).
        let empty = |r: &Results| t.status != Status::Completed && r.report.trim().is_empty();
        match self.store.results(id).await?.filter(|r| !empty(r)) {
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
    /// kept as its results. Returns the task and whether partial results were kept.
    pub async fn cancel(&self, id: &str, save_partial: bool) -> Result<(Task, bool), TaskError> {
        let t = self.task(id).await?;
        if t.status.is_final() {
            return Err(TaskError::AlreadyFinished {
                id: t.id,
                status: t.status.as_str(),
            });
        }
        if let Some(token) = scholia_base::lock(&self.driving).get(id) {
            token.cancel();
        }
        // The end is recorded here before Gemini hears of it: a runner polling meanwhile then
        // sees a finished task and records nothing, so it cannot keep a partial report the
        // caller declined (it would see Gemini's `cancelled` with what was written so far).
        let Some(finished) = self
            .store
            .finish(id, None, Status::Cancelled, None, |t| {
                t.current_action = Some("cancelled".into());
            })
            .await?
        else {
            // Another caller or process ended it between the read above and now.
            return match self.task(id).await? {
                t if t.status == Status::Cancelled => {
                    let kept = self
                        .store
                        .results(id)
                        .await?
                        .is_some_and(|r| !r.report.trim().is_empty());
                    Ok((t, kept))
                }
                t => Err(TaskError::AlreadyFinished {
                    id: t.id,
                    status: t.status.as_str(),
                }),
            };
        };
        let (Some(remote), Some(client)) = (&finished.remote_id, &self.interactions) else {
            return Ok((finished, false));
        };
        let remote_error = client.cancel(remote).await.err().map(|e| e.to_string());
        let mut partial = None;
        if save_partial
            && let Ok(i) = client.get(remote).await
            && !i.report.is_empty()
        {
            partial = Some(results_of(&finished, &i, self.price));
        }
        let kept = partial.is_some();
        if let Some(r) = partial {
            self.store.keep_results(id, r).await?;
        }
        let task = match remote_error {
            Some(e) => self
                .store
                .update(id, None, move |t| {
                    t.error = Some(format!("cancelling at Gemini failed: {e}"));
                })
                .await?
                .unwrap_or(finished),
            None => finished,
        };
        Ok((task, kept))
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
}

#[cfg(test)]
mod tests;
