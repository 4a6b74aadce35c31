//! Engine jobs shown as server-initiated `$/progress`. The token is created only when the
//! client declared support, and every message goes through one task per job, so `begin`
//! precedes the reports and `end` comes last; the job never awaits the editor.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress as ProgressNotification;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};

use scholia_engine::{JobId, JobStart, ProgressSink, Update};

/// How long to wait for the client to accept a progress token before going on without.
const CREATE_TIMEOUT: Duration = Duration::from_secs(5);
const TOKEN_PREFIX: &str = "scholia/job/";

/// The progress token of a job.
pub fn token(id: JobId) -> NumberOrString {
    NumberOrString::String(format!("{TOKEN_PREFIX}{id}"))
}

/// The job a progress token names (for `window/workDoneProgress/cancel`).
pub fn job_of(token: &NumberOrString) -> Option<JobId> {
    match token {
        NumberOrString::String(s) => s.strip_prefix(TOKEN_PREFIX)?.parse().ok(),
        NumberOrString::Number(_) => None,
    }
}

enum Msg {
    Update(Update),
    End(String),
}

struct Sink(mpsc::UnboundedSender<Msg>);

impl ProgressSink for Sink {
    fn update(&self, update: &Update) {
        let _ = self.0.send(Msg::Update(update.clone()));
    }

    fn end(&self, message: &str) {
        let _ = self.0.send(Msg::End(message.to_string()));
    }
}

/// A progress display for `job` in the editor (nothing is shown when `supported` is false).
pub fn sink(client: &Client, supported: bool, job: &JobStart) -> Arc<dyn ProgressSink> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (client, job) = (client.clone(), job.clone());
    tokio::spawn(async move {
        let token = token(job.id);
        let created = supported
            && matches!(
                tokio::time::timeout(CREATE_TIMEOUT, client.create_work_done_progress(token.clone())).await,
                Ok(Ok(()))
            );
        if !created {
            // Drain so the job's sends never pile up.
            while rx.recv().await.is_some() {}
            return;
        }
        let send = |value| {
            client.send_notification::<ProgressNotification>(ProgressParams {
                token: token.clone(),
                value: ProgressParamsValue::WorkDone(value),
            })
        };
        send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: job.title.clone(),
            cancellable: Some(job.cancellable),
            message: None,
            percentage: Some(0),
        }))
        .await;
        while let Some(msg) = rx.recv().await {
            match msg {
                Msg::Update(u) => {
                    send(WorkDoneProgress::Report(WorkDoneProgressReport {
                        cancellable: None,
                        message: Some(u.message),
                        percentage: u.percent.map(|p| p.min(100)),
                    }))
                    .await
                }
                Msg::End(message) => {
                    send(WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(message) })).await;
                    return;
                }
            }
        }
    });
    Arc::new(Sink(tx))
}
