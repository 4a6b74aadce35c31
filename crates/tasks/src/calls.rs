//! Calls that run as tasks: a request (an MCP `tools/call`) answered at once with a task id,
//! whose work goes on in the process that took it and whose result waits in the store for
//! whoever polls, until its time to live runs out. Stored beside background tasks, so a call
//! outlives the server that started it: a process that stops cleanly gives its leases up, one
//! that dies loses them when they run out (the background tasks' lease: thirty polls, 1 to 30
//! seconds), and the next server of the same vault takes the call over and runs it again from
//! its arguments.
//!
//! The store keeps what a call is (`tool`, `arguments`, `vault`), where it is (`status`, a
//! `message` and a `percent`) and how it ended (`result` or `error`, each a JSON object the
//! surface made). It does not know what a tool is.

use std::time::Duration;

use crate::TaskError;
pub use crate::call::{Call, CallEnd, CallStatus};
use crate::store::{Store, now_ms};

/// How long a call's task and its result are kept after it starts.
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);

/// What a new call is.
pub struct NewCall<'a> {
    pub tool: &'a str,
    pub arguments: &'a serde_json::Value,
    pub vault: Option<&'a str>,
    pub ttl: Duration,
    pub poll: Duration,
}

/// How a call ended.
pub enum Ending {
    Completed(serde_json::Value),
    Failed { code: i64, message: String },
}

/// The calls of one store, driven by one process (`owner`) under leases of `lease`.
#[derive(Clone)]
pub struct Calls {
    store: Store,
    owner: String,
    lease: Duration,
}

impl Calls {
    pub fn new(store: Store, owner: String, lease: Duration) -> Calls {
        Calls { store, owner, lease }
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// How often a driver renews its leases (and learns of cancels made elsewhere).
    pub fn renew_every(&self) -> Duration {
        self.lease / 6
    }

    fn lease_ms(&self) -> i64 {
        self.lease.as_millis() as i64
    }

    /// Records a new working call, leased to this process.
    pub async fn create(&self, new: NewCall<'_>) -> Result<Call, TaskError> {
        let now = now_ms();
        let call = Call {
            id: format!("call-{}", crate::new_id()),
            tool: new.tool.to_string(),
            arguments: new.arguments.to_string(),
            vault: new.vault.map(str::to_string),
            status: CallStatus::Working,
            message: Some("queued".into()),
            percent: None,
            result: None,
            error: None,
            created_at: now,
            updated_at: now,
            ttl_ms: new.ttl.as_millis() as u64,
            poll_ms: new.poll.as_millis() as u64,
            resumed: 0,
        };
        self.store
            .insert_call(call.clone(), self.owner.clone(), now + self.lease_ms())
            .await?;
        Ok(call)
    }

    /// The call `id`; an unknown or expired one is [`TaskError::Unknown`] (expired ones are
    /// deleted on the way).
    pub async fn get(&self, id: &str) -> Result<Call, TaskError> {
        self.store
            .get_call(id)
            .await?
            .ok_or_else(|| TaskError::Unknown(id.to_string()))
    }

    /// Where a working call is; ignored once it ended or this process lost it.
    pub async fn progress(&self, id: &str, message: &str, percent: Option<u8>) -> Result<(), TaskError> {
        self.store.call_progress(id, message, percent, &self.owner).await
    }

    /// Ends a working call this process holds; `None` when it had already ended (cancelled
    /// meanwhile) or was taken over.
    pub async fn finish(&self, id: &str, ending: Ending) -> Result<Option<Call>, TaskError> {
        let end = match ending {
            Ending::Completed(v) => CallEnd {
                status: CallStatus::Completed,
                result: Some(v.to_string()),
                error: None,
                message: "completed".to_string(),
            },
            Ending::Failed { code, message } => CallEnd {
                status: CallStatus::Failed,
                result: None,
                error: Some(serde_json::json!({"code": code, "message": message}).to_string()),
                message,
            },
        };
        self.store.finish_call(id, &self.owner, end).await
    }

    /// Cancels a working call, wherever it runs (its driver learns of it on its next
    /// renewal, at most [`Calls::renew_every`] later). An ended call is
    /// [`TaskError::AlreadyFinished`].
    pub async fn cancel(&self, id: &str) -> Result<Call, TaskError> {
        match self.store.cancel_call(id).await? {
            None => Err(TaskError::Unknown(id.to_string())),
            Some(Ok(call)) => Ok(call),
            Some(Err(status)) => Err(TaskError::AlreadyFinished {
                id: id.to_string(),
                status: status.as_str(),
            }),
        }
    }

    /// Extends this process's leases on `ids`; returns those no longer working here (cancelled
    /// elsewhere, or taken over): their drivers stop.
    pub async fn renew(&self, ids: Vec<String>) -> Result<Vec<String>, TaskError> {
        self.store
            .renew_calls(ids, &self.owner, now_ms() + self.lease_ms())
            .await
    }

    /// Takes over the working calls of `vault` (and of no vault) whose driver stopped or died,
    /// among `tools`: leased to this process, counted as resumed.
    pub async fn take_over(&self, vault: Option<String>, tools: Vec<String>) -> Result<Vec<Call>, TaskError> {
        self.store
            .take_over_calls(&self.owner, now_ms() + self.lease_ms(), vault, tools)
            .await
    }

    /// Gives this process's leases up (a clean shutdown): the next server takes its calls
    /// over at once.
    pub async fn release(&self) -> Result<(), TaskError> {
        self.store.release_calls(&self.owner).await
    }
}

/// Unix milliseconds as RFC 3339 (UTC).
pub fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
