//! The job registry. Every long operation — a research run, a deep search, indexing, a
//! background task — is a job: an id, a cancellation token, its latest progress. Surfaces
//! cancel jobs by id (`window/workDoneProgress/cancel`, MCP `notifications/cancelled`, Ctrl-C,
//! the task runner) and show progress through the [`ProgressSink`] they hand in. The [`Job`]
//! guard removes the entry and ends the progress display when dropped, even when the job panics.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::sync::lock;

pub type JobId = u64;

/// A one-line summary of a result, for progress ends, status lines and tool results: every
/// surface shows the same line for the same result.
pub trait Summary {
    fn summary(&self) -> String;
}

/// A pipeline's progress event: a line for humans and, when the pipeline knows it, how far
/// along it is. Each pipeline's event type implements it, so every surface shows the same.
pub trait Progress {
    fn message(&self) -> String;
    /// `None` keeps the previous percentage.
    fn percent(&self) -> Option<u32>;
}

/// One progress report: a line for humans and, when the engine knows it, a percentage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Update {
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<u32>,
}

/// Where a job's progress is shown: `$/progress`, MCP progress notifications, a terminal.
/// Called from the job's task and from `Drop`: must not block.
pub trait ProgressSink: Send + Sync {
    fn update(&self, update: &Update);
    fn end(&self, message: &str);
}

/// A sink that shows nothing.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn update(&self, _: &Update) {}
    fn end(&self, _: &str) {}
}

/// What a surface needs to set up a progress display for a new job.
#[derive(Debug, Clone)]
pub struct JobStart {
    pub id: JobId,
    pub title: String,
    pub cancellable: bool,
}

/// Running jobs of this process.
#[derive(Clone, Default)]
pub struct Jobs {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    next: AtomicU64,
    running: Mutex<HashMap<JobId, Entry>>,
}

struct Entry {
    title: String,
    cancellable: bool,
    cancel: CancellationToken,
    latest: Option<Update>,
    started: Instant,
}

/// A running job as a status query sees it.
#[derive(Debug, Clone, Serialize)]
pub struct JobInfo {
    pub id: JobId,
    pub title: String,
    pub latest: Option<Update>,
    pub elapsed_ms: u64,
    pub cancellable: bool,
}

impl Jobs {
    /// Registers a job; `sink` builds its progress display (it may use the id, e.g. in a token).
    pub fn start(
        &self,
        title: impl Into<String>,
        cancellable: bool,
        sink: impl FnOnce(&JobStart) -> Arc<dyn ProgressSink>,
    ) -> Job {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed) + 1;
        let title = title.into();
        let start = JobStart {
            id,
            title: title.clone(),
            cancellable,
        };
        let sink = sink(&start);
        let cancel = CancellationToken::new();
        lock(&self.inner.running).insert(
            id,
            Entry {
                title,
                cancellable,
                cancel: cancel.clone(),
                latest: None,
                started: Instant::now(),
            },
        );
        Job {
            id,
            cancel,
            jobs: self.clone(),
            sink,
            percent: AtomicU32::new(NO_PERCENT),
            ended: AtomicBool::new(false),
        }
    }

    /// Cancels a running job; `false` when there is none with that id.
    pub fn cancel(&self, id: JobId) -> bool {
        match lock(&self.inner.running).get(&id) {
            Some(e) => {
                tracing::info!("cancelling job {id} ({})", e.title);
                e.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels the newest cancellable job (an editor's "cancel what is running").
    pub fn cancel_latest(&self) -> Option<JobInfo> {
        let running = lock(&self.inner.running);
        let (id, e) = running
            .iter()
            .filter(|(_, e)| e.cancellable)
            .max_by_key(|(id, _)| **id)?;
        tracing::info!("cancelling job {id} ({})", e.title);
        e.cancel.cancel();
        Some(info(*id, e))
    }

    pub fn cancel_all(&self) {
        for e in lock(&self.inner.running).values() {
            e.cancel.cancel();
        }
    }

    pub fn get(&self, id: JobId) -> Option<JobInfo> {
        lock(&self.inner.running).get(&id).map(|e| info(id, e))
    }

    pub fn running(&self) -> Vec<JobInfo> {
        let mut all: Vec<JobInfo> = lock(&self.inner.running).iter().map(|(id, e)| info(*id, e)).collect();
        all.sort_by_key(|j| j.id);
        all
    }
}

fn info(id: JobId, e: &Entry) -> JobInfo {
    JobInfo {
        id,
        title: e.title.clone(),
        latest: e.latest.clone(),
        elapsed_ms: e.started.elapsed().as_millis() as u64,
        cancellable: e.cancellable,
    }
}

const NO_PERCENT: u32 = u32::MAX;

/// A running job. Pipelines report progress and watch cancellation through it; dropping it
/// (normally, or while unwinding from a panic) removes it from the registry and ends its
/// progress display.
pub struct Job {
    id: JobId,
    cancel: CancellationToken,
    jobs: Jobs,
    sink: Arc<dyn ProgressSink>,
    /// The last percentage reported; events without one keep it.
    percent: AtomicU32,
    ended: AtomicBool,
}

impl Job {
    /// A job of its own registry that shows nothing (tests, benchmarks, one-shot calls).
    pub fn detached() -> Job {
        Jobs::default().start("detached", true, |_| Arc::new(NoProgress))
    }

    pub fn id(&self) -> JobId {
        self.id
    }

    pub fn token(&self) -> &CancellationToken {
        &self.cancel
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the job is cancelled.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// Reports a pipeline event: its message and percentage (never going back).
    pub fn report(&self, event: impl Progress) {
        let percent = match event.percent() {
            Some(p) => {
                let p = p.min(100).max(self.last_percent().unwrap_or(0));
                self.percent.store(p, Ordering::Relaxed);
                Some(p)
            }
            None => self.last_percent(),
        };
        self.update(Update {
            message: event.message(),
            percent,
        });
    }

    /// Reports a free-form line (statuses that are not pipeline events).
    pub fn update(&self, update: Update) {
        if let Some(e) = lock(&self.jobs.inner.running).get_mut(&self.id) {
            e.latest = Some(update.clone());
        }
        self.sink.update(&update);
    }

    fn last_percent(&self) -> Option<u32> {
        Some(self.percent.load(Ordering::Relaxed)).filter(|p| *p != NO_PERCENT)
    }

    /// Ends the job's progress with `message` (a result summary or an error).
    pub fn end(self, message: &str) {
        self.ended.store(true, Ordering::Relaxed);
        self.sink.end(message);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        lock(&self.jobs.inner.running).remove(&self.id);
        if !self.ended.swap(true, Ordering::Relaxed) {
            let message = if std::thread::panicking() {
                "failed: internal error (the job panicked); the note is unchanged"
            } else {
                "ended"
            };
            self.sink.end(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ProgressSink for Recorder {
        fn update(&self, u: &Update) {
            self.0.lock().unwrap().push(format!("{} {:?}", u.message, u.percent));
        }
        fn end(&self, m: &str) {
            self.0.lock().unwrap().push(format!("end: {m}"));
        }
    }

    #[test]
    fn cancel_by_id_and_cleanup_on_drop() {
        let jobs = Jobs::default();
        let rec = Arc::new(Recorder::default());
        let sink = rec.clone();
        let job = jobs.start("Research", true, move |s| {
            assert_eq!(s.title, "Research");
            sink
        });
        assert_eq!(jobs.running().len(), 1);
        assert!(jobs.cancel(job.id()));
        assert!(job.is_cancelled());
        assert!(!jobs.cancel(999));
        job.update(Update {
            message: "half".into(),
            percent: Some(50),
        });
        assert_eq!(jobs.get(job.id()).unwrap().latest.unwrap().message, "half");
        drop(job);
        assert!(jobs.running().is_empty());
        assert_eq!(*rec.0.lock().unwrap(), ["half Some(50)", "end: ended"]);
    }

    #[test]
    fn a_panicking_job_still_ends_and_leaves_the_registry() {
        let jobs = Jobs::default();
        let rec = Arc::new(Recorder::default());
        let (j2, r2) = (jobs.clone(), rec.clone());
        let result = std::thread::spawn(move || {
            let _job = j2.start("boom", false, move |_| r2);
            panic!("bug");
        })
        .join();
        assert!(result.is_err());
        assert!(jobs.running().is_empty());
        let log = rec.0.lock().unwrap();
        assert!(log[0].starts_with("end: failed: internal error"), "{log:?}");
    }

    #[test]
    fn ended_jobs_end_once() {
        let rec = Arc::new(Recorder::default());
        let r = rec.clone();
        let job = Jobs::default().start("x", true, move |_| r);
        job.end("done");
        assert_eq!(*rec.0.lock().unwrap(), ["end: done"]);
    }
}
