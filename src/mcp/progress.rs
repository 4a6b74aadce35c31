//! A tool call as an engine job: progress notifications when the request carries a progress
//! token, and `notifications/cancelled` reaching the job (and through it the pipeline and any
//! child process).

use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use scholia_base::Error;
use scholia_engine::{Engine, Job, JobStart, ProgressSink, Update};

/// What a long tool needs of its request.
pub struct RunContext {
    report: Report,
    cancelled: CancellationToken,
}

/// Where a run's progress goes.
enum Report {
    /// Progress notifications to the client that called, when it gave a progress token.
    Client {
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
    },
    /// A task's status (MCP tasks): whoever polls reads it.
    Task(Arc<dyn ProgressSink>),
}

impl RunContext {
    pub fn new(ctx: &RequestContext<RoleServer>) -> RunContext {
        RunContext {
            report: Report::Client {
                peer: ctx.peer.clone(),
                token: ctx.meta.get_progress_token(),
            },
            cancelled: ctx.ct.clone(),
        }
    }

    /// A run that outlives its request (a task): progress to `sink`, stopped by `cancelled`.
    pub fn detached(sink: Arc<dyn ProgressSink>, cancelled: CancellationToken) -> RunContext {
        RunContext {
            report: Report::Task(sink),
            cancelled,
        }
    }

    /// Runs `op` as a job of `engine` named `title`, reporting progress to the client and
    /// cancelled with the request.
    pub async fn job<T>(
        self,
        engine: &Engine,
        title: &str,
        op: impl AsyncFnOnce(&Job) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let job = match self.report {
            Report::Client { peer, token } => engine
                .jobs()
                .start(title, true, |start: &JobStart| sink(peer, token, start)),
            Report::Task(to) => engine.jobs().start(title, true, |_: &JobStart| to),
        };
        // The request's cancellation reaches the job; the link ends with the call.
        let link = CancellationToken::new();
        let (request, job_token, done) = (self.cancelled, job.token().clone(), link.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = request.cancelled() => job_token.cancel(),
                _ = done.cancelled() => {}
            }
        });
        let _unlink = link.drop_guard();
        let result = op(&job).await;
        match &result {
            Ok(_) => job.end("done"),
            Err(e) => job.end(&e.message),
        }
        result
    }
}

enum Msg {
    Update(Update),
    End,
}

struct Sink(mpsc::UnboundedSender<Msg>);

impl ProgressSink for Sink {
    fn update(&self, update: &Update) {
        let _ = self.0.send(Msg::Update(update.clone()));
    }

    fn end(&self, _: &str) {
        let _ = self.0.send(Msg::End);
    }
}

/// Progress notifications for a job, when the client asked for them (a progress token).
fn sink(peer: Peer<RoleServer>, token: Option<ProgressToken>, _: &JobStart) -> Arc<dyn ProgressSink> {
    let Some(token) = token else {
        return Arc::new(scholia_engine::NoProgress);
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        // Progress must rise with every notification, even when the percentage does not.
        let mut last = 0.0f64;
        while let Some(Msg::Update(u)) = rx.recv().await {
            let progress = (u.percent.unwrap_or(0) as f64).max(last + 0.001).min(100.0);
            if progress <= last {
                continue;
            }
            last = progress;
            let note = ProgressNotificationParam::new(token.clone(), progress)
                .with_total(100.0)
                .with_message(u.message);
            if peer.notify_progress(note).await.is_err() {
                return;
            }
        }
    });
    Arc::new(Sink(tx))
}
