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

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::TaskError;
use crate::store::{Store, now_ms};

/// How long a call's task and its result are kept after it starts.
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Working => "working",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> CallStatus {
        match s {
            "completed" => CallStatus::Completed,
            "failed" => CallStatus::Failed,
            "cancelled" => CallStatus::Cancelled,
            _ => CallStatus::Working,
        }
    }

    pub fn is_final(self) -> bool {
        self != CallStatus::Working
    }
}

/// A call as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    pub id: String,
    pub tool: String,
    /// The call's arguments, a JSON object.
    pub arguments: String,
    /// The vault root the call ran against, when it needs one.
    pub vault: Option<String>,
    pub status: CallStatus,
    pub message: Option<String>,
    pub percent: Option<u8>,
    /// The result (a JSON object), once completed.
    pub result: Option<String>,
    /// The error (a JSON object with `code` and `message`), once failed.
    pub error: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// Runs taken over after a process stopped or died (0 for the first).
    pub resumed: u32,
}

impl Call {
    /// When the call and its result are forgotten.
    pub fn expires_at(&self) -> i64 {
        self.created_at.saturating_add(self.ttl_ms.min(i64::MAX as u64) as i64)
    }
}

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
        let (c, owner, until) = (call.clone(), self.owner.clone(), now + self.lease_ms());
        self.store
            .call(move |conn| {
                conn.execute(
                    "INSERT INTO calls (id, tool, arguments, vault, status, message, percent, result, error,
                        created_at, updated_at, ttl_ms, poll_ms, resumed, cancel_requested, lease_owner, lease_until)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, NULL, NULL, ?7, ?7, ?8, ?9, 0, 0, ?10, ?11)",
                    params![
                        c.id,
                        c.tool,
                        c.arguments,
                        c.vault,
                        c.status.as_str(),
                        c.message,
                        c.created_at,
                        c.ttl_ms as i64,
                        c.poll_ms as i64,
                        owner,
                        until
                    ],
                )
                .map(|_| ())
            })
            .await?;
        Ok(call)
    }

    /// The call `id`; an unknown or expired one is [`TaskError::Unknown`] (expired ones are
    /// deleted on the way).
    pub async fn get(&self, id: &str) -> Result<Call, TaskError> {
        let key = id.to_string();
        let found = self
            .store
            .call(move |c| {
                sweep(c)?;
                get(c, &key)
            })
            .await?;
        found.ok_or_else(|| TaskError::Unknown(id.to_string()))
    }

    /// Where a working call is; ignored once it ended or this process lost it.
    pub async fn progress(&self, id: &str, message: &str, percent: Option<u8>) -> Result<(), TaskError> {
        let (id, message, owner) = (id.to_string(), message.to_string(), self.owner.clone());
        self.store
            .call(move |c| {
                c.execute(
                    "UPDATE calls SET message = ?1, percent = ?2, updated_at = ?3
                     WHERE id = ?4 AND status = 'working' AND lease_owner = ?5",
                    params![message, percent, now_ms(), id, owner],
                )
                .map(|_| ())
            })
            .await
    }

    /// Ends a working call this process holds; `None` when it had already ended (cancelled
    /// meanwhile) or was taken over.
    pub async fn finish(&self, id: &str, ending: Ending) -> Result<Option<Call>, TaskError> {
        let (id, owner) = (id.to_string(), self.owner.clone());
        let (status, result, error, message) = match ending {
            Ending::Completed(v) => (
                CallStatus::Completed,
                Some(v.to_string()),
                None,
                "completed".to_string(),
            ),
            Ending::Failed { code, message } => {
                let error = serde_json::json!({"code": code, "message": message}).to_string();
                (CallStatus::Failed, None, Some(error), message)
            }
        };
        self.store
            .call(move |c| {
                let changed = c.execute(
                    "UPDATE calls SET status = ?1, result = ?2, error = ?3, message = ?4, updated_at = ?5,
                        lease_owner = NULL, lease_until = NULL
                     WHERE id = ?6 AND status = 'working' AND lease_owner = ?7",
                    params![status.as_str(), result, error, message, now_ms(), id, owner],
                )?;
                match changed {
                    0 => Ok(None),
                    _ => get(c, &id),
                }
            })
            .await
    }

    /// Cancels a working call, wherever it runs (its driver learns of it on its next
    /// renewal, at most [`Calls::renew_every`] later). An ended call is
    /// [`TaskError::AlreadyFinished`].
    pub async fn cancel(&self, id: &str) -> Result<Call, TaskError> {
        let key = id.to_string();
        let outcome = self
            .store
            .call(move |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let Some(call) = get(&tx, &key)? else { return Ok(None) };
                if call.status.is_final() {
                    return Ok(Some(Err(call.status)));
                }
                tx.execute(
                    "UPDATE calls SET status = 'cancelled', cancel_requested = 1, message = 'cancelled',
                        updated_at = ?1, lease_owner = NULL, lease_until = NULL
                     WHERE id = ?2",
                    params![now_ms(), key],
                )?;
                let call = get(&tx, &key)?;
                tx.commit()?;
                Ok(call.map(Ok))
            })
            .await?;
        match outcome {
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
        let (owner, lease) = (self.owner.clone(), self.lease_ms());
        self.store
            .call(move |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let until = now_ms() + lease;
                let mut gone = Vec::new();
                for id in ids {
                    let n = tx.execute(
                        "UPDATE calls SET lease_until = ?1 WHERE id = ?2 AND status = 'working' AND lease_owner = ?3",
                        params![until, id, owner],
                    )?;
                    if n == 0 {
                        gone.push(id);
                    }
                }
                tx.commit()?;
                Ok(gone)
            })
            .await
    }

    /// Takes over the working calls of `vault` (and of no vault) whose driver stopped or died,
    /// among `tools`: leased to this process, counted as resumed.
    pub async fn take_over(&self, vault: Option<String>, tools: Vec<String>) -> Result<Vec<Call>, TaskError> {
        let (owner, lease) = (self.owner.clone(), self.lease_ms());
        self.store
            .call(move |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let now = now_ms();
                sweep(&tx)?;
                let orphans: Vec<Call> = {
                    let mut stmt = tx.prepare_cached(&format!(
                        "{SELECT} WHERE status = 'working' AND (lease_owner IS NULL OR lease_until < ?1)
                         AND (vault IS NULL OR vault = ?2) ORDER BY created_at"
                    ))?;
                    stmt.query_map(params![now, vault], row_call)?
                        .collect::<rusqlite::Result<_>>()?
                };
                let mut taken = Vec::new();
                for call in orphans.into_iter().filter(|c| tools.contains(&c.tool)) {
                    tx.execute(
                        "UPDATE calls SET lease_owner = ?1, lease_until = ?2, resumed = resumed + 1,
                            message = 'resumed after the server restarted', updated_at = ?3
                         WHERE id = ?4",
                        params![owner, now + lease, now, call.id],
                    )?;
                    taken.extend(get(&tx, &call.id)?);
                }
                tx.commit()?;
                Ok(taken)
            })
            .await
    }

    /// Gives this process's leases up (a clean shutdown): the next server takes its calls
    /// over at once.
    pub async fn release(&self) -> Result<(), TaskError> {
        let owner = self.owner.clone();
        self.store
            .call(move |c| {
                c.execute(
                    "UPDATE calls SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?1 AND status = 'working'",
                    [owner],
                )
                .map(|_| ())
            })
            .await
    }
}

/// Unix milliseconds as RFC 3339 (UTC).
pub fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

const SELECT: &str = "SELECT id, tool, arguments, vault, status, message, percent, result, error, created_at,
    updated_at, ttl_ms, poll_ms, resumed FROM calls";

fn get(c: &Connection, id: &str) -> rusqlite::Result<Option<Call>> {
    c.prepare_cached(&format!("{SELECT} WHERE id = ?1"))?
        .query_row([id], row_call)
        .optional()
}

fn row_call(r: &rusqlite::Row<'_>) -> rusqlite::Result<Call> {
    Ok(Call {
        id: r.get(0)?,
        tool: r.get(1)?,
        arguments: r.get(2)?,
        vault: r.get(3)?,
        status: CallStatus::parse(&r.get::<_, String>(4)?),
        message: r.get(5)?,
        percent: r.get(6)?,
        result: r.get(7)?,
        error: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
        ttl_ms: r.get::<_, i64>(11)?.max(0) as u64,
        poll_ms: r.get::<_, i64>(12)?.max(0) as u64,
        resumed: r.get::<_, i64>(13)?.max(0) as u32,
    })
}

/// Forgets the calls whose time to live ran out.
fn sweep(c: &Connection) -> rusqlite::Result<()> {
    c.execute("DELETE FROM calls WHERE created_at + ttl_ms < ?1", [now_ms()])
        .map(|_| ())
}

#[cfg(test)]
mod tests;
