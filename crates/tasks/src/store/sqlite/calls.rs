//! The calls table on SQLite (see `crate::calls`).

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use crate::TaskError;
use crate::call::{Call, CallEnd, CallStatus};
use crate::store::now_ms;

/// Calls answered with a task (see `crate::calls`).
impl Sqlite {
    pub async fn insert_call(&self, c: Call, owner: String, until: i64) -> Result<(), TaskError> {
        self.call(move |conn| {
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
        .await
    }

    pub async fn get_call(&self, id: &str) -> Result<Option<Call>, TaskError> {
        let key = id.to_string();
        self.call(move |c| {
            sweep_calls(c)?;
            get_call(c, &key)
        })
        .await
    }

    pub async fn call_progress(
        &self,
        id: &str,
        message: &str,
        percent: Option<u8>,
        owner: &str,
    ) -> Result<(), TaskError> {
        let (id, message, owner) = (id.to_string(), message.to_string(), owner.to_string());
        self.call(move |c| {
            c.execute(
                "UPDATE calls SET message = ?1, percent = ?2, updated_at = ?3
                 WHERE id = ?4 AND status = 'working' AND lease_owner = ?5",
                params![message, percent, now_ms(), id, owner],
            )
            .map(|_| ())
        })
        .await
    }

    pub async fn finish_call(&self, id: &str, owner: &str, end: CallEnd) -> Result<Option<Call>, TaskError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.call(move |c| {
            let changed = c.execute(
                "UPDATE calls SET status = ?1, result = ?2, error = ?3, message = ?4, updated_at = ?5,
                    lease_owner = NULL, lease_until = NULL
                 WHERE id = ?6 AND status = 'working' AND lease_owner = ?7",
                params![
                    end.status.as_str(),
                    end.result,
                    end.error,
                    end.message,
                    now_ms(),
                    id,
                    owner
                ],
            )?;
            match changed {
                0 => Ok(None),
                _ => get_call(c, &id),
            }
        })
        .await
    }

    pub async fn cancel_call(&self, id: &str) -> Result<Option<Result<Call, CallStatus>>, TaskError> {
        let key = id.to_string();
        self.call(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let Some(call) = get_call(&tx, &key)? else {
                return Ok(None);
            };
            if call.status.is_final() {
                return Ok(Some(Err(call.status)));
            }
            tx.execute(
                "UPDATE calls SET status = 'cancelled', cancel_requested = 1, message = 'cancelled',
                    updated_at = ?1, lease_owner = NULL, lease_until = NULL
                 WHERE id = ?2",
                params![now_ms(), key],
            )?;
            let call = get_call(&tx, &key)?;
            tx.commit()?;
            Ok(call.map(Ok))
        })
        .await
    }

    pub async fn renew_calls(&self, ids: Vec<String>, owner: &str, until: i64) -> Result<Vec<String>, TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
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

    pub async fn take_over_calls(
        &self,
        owner: &str,
        until: i64,
        vault: Option<String>,
        tools: Vec<String>,
    ) -> Result<Vec<Call>, TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let now = now_ms();
            sweep_calls(&tx)?;
            let orphans: Vec<Call> = {
                let mut stmt = tx.prepare_cached(&format!(
                    "{CALL_SELECT} WHERE status = 'working' AND (lease_owner IS NULL OR lease_until < ?1)
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
                    params![owner, until, now, call.id],
                )?;
                taken.extend(get_call(&tx, &call.id)?);
            }
            tx.commit()?;
            Ok(taken)
        })
        .await
    }

    pub async fn release_calls(&self, owner: &str) -> Result<(), TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            c.execute(
                "UPDATE calls SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?1 AND status = 'working'",
                [owner],
            )
            .map(|_| ())
        })
        .await
    }
}

const CALL_SELECT: &str = "SELECT id, tool, arguments, vault, status, message, percent, result, error, created_at,
    updated_at, ttl_ms, poll_ms, resumed FROM calls";

fn get_call(c: &Connection, id: &str) -> rusqlite::Result<Option<Call>> {
    c.prepare_cached(&format!("{CALL_SELECT} WHERE id = ?1"))?
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
fn sweep_calls(c: &Connection) -> rusqlite::Result<()> {
    c.execute("DELETE FROM calls WHERE created_at + ttl_ms < ?1", [now_ms()])
        .map(|_| ())
}
