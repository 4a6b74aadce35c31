//! Server-initiated `$/progress`: created only when the client declared support, and never
//! awaited from inside a request handler (callers run in spawned tasks).

use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress as ProgressNotification;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};

/// How long to wait for the client to accept a progress token before going on without.
const CREATE_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Reporter {
    client: Client,
    token: Option<NumberOrString>,
}

impl Reporter {
    /// Creates the token (when `supported`) and sends `begin`.
    pub async fn begin(client: &Client, supported: bool, token: String, title: &str, cancellable: bool) -> Reporter {
        let token = NumberOrString::String(token);
        let created = supported
            && matches!(
                tokio::time::timeout(CREATE_TIMEOUT, client.create_work_done_progress(token.clone())).await,
                Ok(Ok(()))
            );
        let reporter = Reporter {
            client: client.clone(),
            token: created.then_some(token),
        };
        reporter
            .send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: title.to_string(),
                cancellable: Some(cancellable),
                message: None,
                percentage: Some(0),
            }))
            .await;
        reporter
    }

    pub async fn report(&self, message: impl Into<String>, percentage: Option<u32>) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            cancellable: None,
            message: Some(message.into()),
            percentage: percentage.map(|p| p.min(100)),
        }))
        .await;
    }

    pub async fn end(self, message: impl Into<String>) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message.into()),
        }))
        .await;
    }

    async fn send(&self, value: WorkDoneProgress) {
        if let Some(token) = &self.token {
            self.client
                .send_notification::<ProgressNotification>(ProgressParams {
                    token: token.clone(),
                    value: ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }
}
