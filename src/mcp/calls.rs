//! MCP tasks (the `io.modelcontextprotocol/tasks` extension): a tool call that may outlast a
//! host's time limit is answered at once with a task; its work goes on here and its status and
//! result wait in scholia's task store (`scholia_tasks::calls`) for `tasks/get`, across
//! reconnections and restarts. A tool whose answer is a background task (`start_deep_research`)
//! hands that task out as the call's task.
//!
//! Only clients that declare the extension get tasks; the others keep progress notifications
//! and the background tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus as McpStatus,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Scholia;
use super::progress::RunContext;
use super::table::{self, Entry};
use scholia_base::{Error, ProgressSink, Update};
use scholia_tasks::calls::{Call, CallStatus, Calls, DEFAULT_TTL, Ending, NewCall, rfc3339 as iso};

/// The calls this process drives, by id: cancelling one stops its run.
#[derive(Default)]
pub struct Driving {
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Driving {
    fn add(&self, id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        scholia_base::lock(&self.running).insert(id.to_string(), token.clone());
        token
    }

    fn remove(&self, id: &str) {
        scholia_base::lock(&self.running).remove(id);
    }

    fn stop(&self, id: &str) {
        if let Some(t) = scholia_base::lock(&self.running).remove(id) {
            t.cancel();
        }
    }

    fn ids(&self) -> Vec<String> {
        scholia_base::lock(&self.running).keys().cloned().collect()
    }
}

fn internal(e: Error) -> ErrorData {
    ErrorData::internal_error(e.message, None)
}

/// `tasks/get` and `tasks/cancel` name a task this server does not know.
fn unknown(e: Error) -> ErrorData {
    ErrorData::invalid_params(e.message, None)
}

impl Scholia {
    async fn calls(&self) -> Result<Calls, ErrorData> {
        Ok(self.engine.open_tasks().await.map_err(internal)?.calls())
    }

    /// Answers `tool`'s call with a task and starts its work.
    pub(super) async fn start_call(
        &self,
        tool: &'static dyn Entry,
        args: Option<JsonObject>,
        run: RunContext,
    ) -> Result<CreateTaskResult, ErrorData> {
        if tool.background() {
            // Its answer names the background task, which is the call's task from now on.
            let result = tool.call(self, args, run).await;
            let id = result
                .structured_content
                .as_ref()
                .and_then(|v| v["task_id"].as_str())
                .map(str::to_string);
            let Some(id) = id else {
                let text = result
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                return Err(ErrorData::invalid_params(text, None));
            };
            let status = self.engine.task_status(&id).await.map_err(internal)?;
            return Ok(CreateTaskResult::new(background_task(&status, tool.poll_ms())));
        }
        let args = args.unwrap_or_default();
        let calls = self.calls().await?;
        // A call made under a token's folders is not resumed by another server, which would
        // run it with the server's own scope: it stays with the server that took it.
        let root = match scholia_base::ambient::current() {
            Some(_) => self.root().map(|r| format!("{r}\u{0}scoped")),
            None => self.root(),
        };
        let call = calls
            .create(NewCall {
                tool: tool.name(),
                arguments: &serde_json::Value::Object(args),
                vault: root.as_deref(),
                ttl: DEFAULT_TTL,
                poll: Duration::from_millis(tool.poll_ms()),
            })
            .await
            .map_err(|e| internal(e.into()))?;
        let task = stored_task(&call);
        self.drive(calls, call);
        Ok(CreateTaskResult::new(task))
    }

    /// Runs a stored call here until it ends, is cancelled or the server stops (then its
    /// lease is given up and the next server runs it again).
    fn drive(&self, calls: Calls, call: Call) {
        let Some(tool) = table::find(&call.tool) else { return };
        let args: Option<JsonObject> = serde_json::from_str(&call.arguments).ok();
        let cancel = self.driving.add(&call.id);
        let (server, shutdown) = (self.clone(), self.host.shutdown_token().clone());
        // A token's folders go with its call's work (see `tokens.rs`).
        let ambient = scholia_base::ambient::current();
        tokio::spawn(async move {
            let Some(scope) = ambient else {
                return server.run_call(calls, call, tool, args, cancel, shutdown).await;
            };
            scholia_base::ambient::within(scope, server.run_call(calls, call, tool, args, cancel, shutdown)).await
        });
    }

    async fn run_call(
        &self,
        calls: Calls,
        call: Call,
        tool: &'static dyn Entry,
        args: Option<JsonObject>,
        cancel: CancellationToken,
        shutdown: CancellationToken,
    ) {
        let server = self;
        {
            let sink = StatusSink::start(calls.clone(), call.id.clone());
            let run = RunContext::detached(sink, cancel.clone());
            let ending = tokio::select! {
                result = tool.call(server, args, run) => Some(result),
                _ = shutdown.cancelled() => None,
            };
            server.driving.remove(&call.id);
            let Some(result) = ending else { return };
            if cancel.is_cancelled() {
                return;
            }
            let ending = match serde_json::to_value(&result) {
                Ok(v) => Ending::Completed(v),
                Err(e) => Ending::Failed {
                    code: rmcp::model::ErrorCode::INTERNAL_ERROR.0 as i64,
                    message: e.to_string(),
                },
            };
            if let Err(e) = calls.finish(&call.id, ending).await {
                tracing::warn!(call = %call.id, "the result of a task could not be stored: {e}");
            }
        }
    }

    /// Keeps this server's calls: renews their leases, stops those cancelled elsewhere, takes
    /// over those a stopped or dead server left (for this vault and the tools offered here),
    /// and gives its own up when the host shuts down.
    pub(super) fn keep_calls(&self) {
        let server = self.clone();
        tokio::spawn(async move {
            let Ok(calls) = server.calls().await else { return };
            let shutdown = server.host.shutdown_token().clone();
            loop {
                let offered: Vec<String> = server
                    .tools()
                    .iter()
                    .filter(|t| !t.background())
                    .map(|t| t.name().to_string())
                    .collect();
                match calls.take_over(server.root(), offered).await {
                    Ok(taken) => {
                        for call in taken {
                            tracing::info!(call = %call.id, tool = %call.tool, "resuming a task another server left");
                            server.drive(calls.clone(), call);
                        }
                    }
                    Err(e) => tracing::warn!("tasks: {e}"),
                }
                match calls.renew(server.driving.ids()).await {
                    Ok(gone) => gone.iter().for_each(|id| server.driving.stop(id)),
                    Err(e) => tracing::warn!("tasks: {e}"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(calls.renew_every()) => {}
                    _ = shutdown.cancelled() => break,
                }
            }
            if let Err(e) = calls.release().await {
                tracing::warn!("tasks: {e}");
            }
        });
    }

    /// Gives this server's calls up (it is stopping): the next server resumes them at once.
    pub(super) async fn release_calls(&self) {
        if let Ok(calls) = self.calls().await
            && let Err(e) = calls.release().await
        {
            tracing::warn!("tasks: {e}");
        }
    }

    /// `tasks/get`.
    pub(super) async fn task(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        if !id.starts_with("call-") {
            return self.background(id).await;
        }
        let call = self.calls().await?.get(id).await.map_err(|e| unknown(e.into()))?;
        let payload = match call.status {
            CallStatus::Working => TaskPayload::Working,
            CallStatus::Cancelled => TaskPayload::Cancelled,
            CallStatus::Completed => TaskPayload::Completed {
                result: object(call.result.as_deref()),
            },
            CallStatus::Failed => TaskPayload::Failed {
                error: object(call.error.as_deref()),
            },
        };
        Ok(DetailedTask::new(stored_task(&call), payload))
    }

    /// `tasks/cancel`: stops the work wherever it runs, as `cancel_research` does.
    pub(super) async fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        if !id.starts_with("call-") {
            self.engine.cancel_task(id, None).await.map_err(unknown)?;
            return Ok(());
        }
        self.calls().await?.cancel(id).await.map_err(|e| unknown(e.into()))?;
        self.driving.stop(id);
        Ok(())
    }

    /// A background task (`start_deep_research`) as an MCP task; completed, its result is
    /// `get_research_results`'s.
    async fn background(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let status = self.engine.task_status(id).await.map_err(unknown)?;
        let poll = table::find("start_deep_research").map_or(5_000, |t| t.poll_ms());
        let task = background_task(&status, poll);
        let payload = match status.status {
            scholia_tasks::Status::Pending | scholia_tasks::Status::Running => TaskPayload::Working,
            scholia_tasks::Status::Cancelled => TaskPayload::Cancelled,
            scholia_tasks::Status::Failed => TaskPayload::Failed {
                error: object(Some(
                    &serde_json::json!({
                        "code": rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                        "message": status.error.clone().unwrap_or_else(|| "the task failed".into()),
                    })
                    .to_string(),
                )),
            },
            scholia_tasks::Status::Completed | scholia_tasks::Status::CompletedPartial => {
                let mut args = JsonObject::new();
                args.insert("task_id".into(), id.into());
                let results = table::find("get_research_results").expect("the results tool");
                let run = RunContext::detached(Arc::new(scholia_engine::NoProgress), CancellationToken::new());
                let result: CallToolResult = results.call(self, Some(args), run).await;
                TaskPayload::Completed {
                    result: serde_json::to_value(&result)
                        .ok()
                        .and_then(|v| v.as_object().cloned())
                        .unwrap_or_default(),
                }
            }
        };
        Ok(DetailedTask::new(task, payload))
    }
}

/// A stored JSON object (an empty one when it does not parse).
fn object(text: Option<&str>) -> JsonObject {
    text.and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default()
}

fn status_of(call: &Call) -> McpStatus {
    match call.status {
        CallStatus::Working => McpStatus::Working,
        CallStatus::Completed => McpStatus::Completed,
        CallStatus::Failed => McpStatus::Failed,
        CallStatus::Cancelled => McpStatus::Cancelled,
    }
}

/// What a stored call says as an MCP task: its stage and progress in the status message.
fn stored_task(call: &Call) -> Task {
    let mut message = call.message.clone().unwrap_or_default();
    if let Some(p) = call.percent {
        message = format!("{message} ({p}%)");
    }
    if call.resumed > 0 && call.status == CallStatus::Working && !message.contains("resumed") {
        message = format!("{message}; resumed after a server restart");
    }
    Task::new(
        call.id.clone(),
        status_of(call),
        iso(call.created_at),
        iso(call.updated_at),
    )
    .with_status_message(message)
    .with_ttl_ms(call.ttl_ms)
    .with_poll_interval_ms(call.poll_ms)
}

/// A background task as an MCP task (kept as long as the task store keeps it: no TTL).
fn background_task(status: &scholia_engine::TaskStatus, poll_ms: u64) -> Task {
    let state = match status.status {
        scholia_tasks::Status::Pending | scholia_tasks::Status::Running => McpStatus::Working,
        scholia_tasks::Status::Completed | scholia_tasks::Status::CompletedPartial => McpStatus::Completed,
        scholia_tasks::Status::Failed => McpStatus::Failed,
        scholia_tasks::Status::Cancelled => McpStatus::Cancelled,
    };
    let mut message = status
        .current_action
        .clone()
        .unwrap_or_else(|| status.status.shown().to_string());
    if let Some(p) = status.progress {
        message = format!("{message} ({p}%)");
    }
    let now = iso(scholia_tasks::now_ms());
    let started = iso(scholia_tasks::now_ms() - (status.elapsed_minutes * 60_000.0) as i64);
    let mut task = Task::new(status.task_id.clone(), state, started, now)
        .with_status_message(message)
        .with_poll_interval_ms(poll_ms);
    task.ttl_ms = None;
    task
}

/// A run's progress written to its stored call, at most twice a second (the latest wins).
struct StatusSink(mpsc::UnboundedSender<String>);

impl StatusSink {
    fn start(calls: Calls, id: String) -> Arc<dyn ProgressSink> {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(mut latest) = rx.recv().await {
                tokio::time::sleep(Duration::from_millis(500)).await;
                while let Ok(newer) = rx.try_recv() {
                    latest = newer;
                }
                let (message, percent) = split(&latest);
                if let Err(e) = calls.progress(&id, message, percent).await {
                    tracing::debug!("task status: {e}");
                }
            }
        });
        Arc::new(StatusSink(tx))
    }
}

/// `message\u{1f}percent` back into its parts.
fn split(s: &str) -> (&str, Option<u8>) {
    match s.split_once('\u{1f}') {
        Some((m, p)) => (m, p.parse().ok()),
        None => (s, None),
    }
}

impl ProgressSink for StatusSink {
    fn update(&self, u: &Update) {
        let percent = u.percent.map(|p| p.min(100).to_string()).unwrap_or_default();
        let _ = self.0.send(format!("{}\u{1f}{percent}", u.message));
    }

    fn end(&self, _: &str) {}
}
