//! The runner: claims unleased tasks, renews its leases, drives each task to its end (polling
//! Gemini, or running a kind that runs here), takes over the tasks of a process that died.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use scholia_providers::interactions::{self, InteractionError};

use crate::notify::notify;
use crate::{
    CLAIM_BATCH, EXPIRED, Kind, Results, ResultsMeta, STORE_GIVE_UP, SourceRef, Status, Task, TaskError, Tasks, Tokens,
    estimate, lease, now_ms,
};

impl Tasks {
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
                let driven = scholia_base::lock(&self.driving).contains_key(&id);
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
                    let mut driving = scholia_base::lock(&self.driving);
                    if driving.contains_key(&task.id) {
                        continue;
                    }
                    driving.insert(task.id.clone(), token.clone());
                }
                let (me, runner) = (self.clone(), runner.clone());
                tokio::spawn(async move {
                    let id = task.id.clone();
                    me.drive(task, runner, token).await;
                    scholia_base::lock(&me.driving).remove(&id);
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
                let price = self.price;
                tokio::select! {
                    r = runner.run(&task, stop.clone()) => Some(match r {
                        Ok(out) => Ok(out.into_results(&task, price)),
                        Err(e) => Err(e.message),
                    }),
                    _ = stop.cancelled() => None,
                }
            }
        };
        let Some(outcome) = outcome else {
            return; // cancelled or the lease was lost: someone else records the end
        };
        let (status, results, error, usage) = match outcome {
            // A provider that ended without writing anything left no results (a cancel that
            // reached Gemini before its first words), whoever records the end first.
            Ok((status, results, usage)) if status != Status::Completed && results.report.trim().is_empty() => {
                (status, None, None, usage)
            }
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
                let announce = scholia_base::lock(&self.announce).clone();
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
}

fn minutes_since(created_at: i64) -> f64 {
    let minutes = (now_ms() - created_at).max(0) as f64 / 60_000.0;
    (minutes * 10.0).round() / 10.0
}

pub(crate) fn results_of(task: &Task, i: &interactions::Interaction, price: scholia_providers::llm::Price) -> Results {
    Results {
        report: i.report.clone(),
        sources: i
            .sources
            .iter()
            .map(|s| SourceRef {
                url: s.url.clone(),
                title: s.title.clone(),
                vault: false,
            })
            .collect(),
        metadata: ResultsMeta {
            mode: "async".into(),
            kind: Some(Kind::Gemini),
            duration_minutes: Some(minutes_since(task.created_at)),
            tokens_used: Tokens {
                input: i.input_tokens,
                output: i.output_tokens,
            },
            cost_usd: Some(estimate::cost(price, i.input_tokens, i.output_tokens)),
            interaction_id: Some(i.id.clone()),
            status: Some(i.status.clone()),
            ..ResultsMeta::default()
        },
        raw: Some(i.raw.to_string()),
    }
}

/// What a task run in this process gives.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub report: String,
    pub sources: Vec<SourceRef>,
    pub usage: Tokens,
    /// What the kind knows about its run (verification, the note written, …); the runner adds
    /// the mode, kind, duration, tokens and cost.
    pub metadata: ResultsMeta,
}

impl RunOutput {
    fn into_results(self, task: &Task, price: scholia_providers::llm::Price) -> (Status, Results, (u64, u64)) {
        let usage = (self.usage.input, self.usage.output);
        let metadata = ResultsMeta {
            mode: "async".into(),
            kind: Some(task.kind),
            duration_minutes: Some(minutes_since(task.created_at)),
            tokens_used: self.usage,
            cost_usd: Some(estimate::cost(price, usage.0, usage.1)),
            ..self.metadata
        };
        let results = Results {
            report: self.report,
            sources: self.sources,
            metadata,
            raw: None,
        };
        (Status::Completed, results, usage)
    }
}

/// Runs the tasks that run in this process — deep search and research-note (the engine
/// implements it); an error is the task's failure, its message what the task records.
pub trait Runner: Send + Sync {
    fn run<'a>(
        &'a self,
        task: &'a Task,
        stop: CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunOutput, scholia_base::Error>> + Send + 'a>>;
}
