//! The calls table on PostgreSQL (see `crate::calls`), as the SQLite store keeps it.

use tokio_postgres::Row;

use super::Postgres;
use crate::TaskError;
use crate::call::{Call, CallEnd, CallStatus};
use crate::store::now_ms;

const CALL_SELECT: &str = "SELECT id, tool, arguments, vault, status, message, percent, result, error, created_at,
    updated_at, ttl_ms, poll_ms, resumed FROM calls";

fn call_of(r: &Row) -> Call {
    Call {
        id: r.get(0),
        tool: r.get(1),
        arguments: r.get(2),
        vault: r.get(3),
        status: CallStatus::parse(r.get::<_, &str>(4)),
        message: r.get(5),
        percent: r.get::<_, Option<i32>>(6).map(|p| p.clamp(0, 100) as u8),
        result: r.get(7),
        error: r.get(8),
        created_at: r.get(9),
        updated_at: r.get(10),
        ttl_ms: r.get::<_, i64>(11).max(0) as u64,
        poll_ms: r.get::<_, i64>(12).max(0) as u64,
        resumed: r.get::<_, i32>(13).max(0) as u32,
    }
}

impl Postgres {
    pub async fn insert_call(&self, c: Call, owner: String, until: i64) -> Result<(), TaskError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO calls (id, tool, arguments, vault, status, message, percent, result, error,
                    created_at, updated_at, ttl_ms, poll_ms, resumed, cancel_requested, lease_owner, lease_until)
                 VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, NULL, $7, $7, $8, $9, 0, FALSE, $10, $11)",
                &[
                    &c.id,
                    &c.tool,
                    &c.arguments,
                    &c.vault,
                    &c.status.as_str(),
                    &c.message,
                    &c.created_at,
                    &(c.ttl_ms as i64),
                    &(c.poll_ms as i64),
                    &owner,
                    &until,
                ],
            )
            .await
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }

    pub async fn get_call(&self, id: &str) -> Result<Option<Call>, TaskError> {
        let client = self.client().await?;
        client
            .execute("DELETE FROM calls WHERE created_at + ttl_ms < $1", &[&now_ms()])
            .await
            .map_err(|e| self.fail(e))?;
        let row = client
            .query_opt(&format!("{CALL_SELECT} WHERE id = $1"), &[&id])
            .await
            .map_err(|e| self.fail(e))?;
        Ok(row.as_ref().map(call_of))
    }

    pub async fn call_progress(
        &self,
        id: &str,
        message: &str,
        percent: Option<u8>,
        owner: &str,
    ) -> Result<(), TaskError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE calls SET message = $1, percent = $2, updated_at = $3
                 WHERE id = $4 AND status = 'working' AND lease_owner = $5",
                &[&message, &percent.map(i32::from), &now_ms(), &id, &owner],
            )
            .await
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }

    pub async fn finish_call(&self, id: &str, owner: &str, end: CallEnd) -> Result<Option<Call>, TaskError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE calls SET status = $1, result = $2, error = $3, message = $4, updated_at = $5,
                        lease_owner = NULL, lease_until = NULL
                     WHERE id = $6 AND status = 'working' AND lease_owner = $7
                     RETURNING {}",
                    CALL_SELECT
                        .trim_start_matches("SELECT ")
                        .trim_end_matches(" FROM calls")
                ),
                &[
                    &end.status.as_str(),
                    &end.result,
                    &end.error,
                    &end.message,
                    &now_ms(),
                    &id,
                    &owner,
                ],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(row.as_ref().map(call_of))
    }

    pub async fn cancel_call(&self, id: &str) -> Result<Option<Result<Call, CallStatus>>, TaskError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| self.fail(e))?;
        let Some(row) = tx
            .query_opt(&format!("{CALL_SELECT} WHERE id = $1 FOR UPDATE"), &[&id])
            .await
            .map_err(|e| self.fail(e))?
        else {
            return Ok(None);
        };
        let call = call_of(&row);
        if call.status.is_final() {
            return Ok(Some(Err(call.status)));
        }
        tx.execute(
            "UPDATE calls SET status = 'cancelled', cancel_requested = TRUE, message = 'cancelled',
                updated_at = $1, lease_owner = NULL, lease_until = NULL
             WHERE id = $2",
            &[&now_ms(), &id],
        )
        .await
        .map_err(|e| self.fail(e))?;
        let row = tx
            .query_opt(&format!("{CALL_SELECT} WHERE id = $1"), &[&id])
            .await
            .map_err(|e| self.fail(e))?;
        tx.commit().await.map_err(|e| self.fail(e))?;
        Ok(row.as_ref().map(|r| Ok(call_of(r))))
    }

    pub async fn renew_calls(&self, ids: Vec<String>, owner: &str, until: i64) -> Result<Vec<String>, TaskError> {
        let client = self.client().await?;
        let kept: Vec<String> = client
            .query(
                "UPDATE calls SET lease_until = $1 WHERE id = ANY($2) AND status = 'working' AND lease_owner = $3
                 RETURNING id",
                &[&until, &ids, &owner],
            )
            .await
            .map_err(|e| self.fail(e))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        Ok(ids.into_iter().filter(|id| !kept.contains(id)).collect())
    }

    pub async fn take_over_calls(
        &self,
        owner: &str,
        until: i64,
        vault: Option<String>,
        tools: Vec<String>,
    ) -> Result<Vec<Call>, TaskError> {
        let now = now_ms();
        let client = self.client().await?;
        client
            .execute("DELETE FROM calls WHERE created_at + ttl_ms < $1", &[&now])
            .await
            .map_err(|e| self.fail(e))?;
        let rows = client
            .query(
                &format!(
                    "UPDATE calls SET lease_owner = $1, lease_until = $2, resumed = resumed + 1,
                        message = 'resumed after the server restarted', updated_at = $3
                     WHERE id IN (
                        SELECT id FROM calls WHERE status = 'working' AND (lease_owner IS NULL OR lease_until < $3)
                        AND (vault IS NULL OR vault = $4) AND tool = ANY($5) ORDER BY created_at
                        FOR UPDATE SKIP LOCKED)
                     RETURNING {}",
                    CALL_SELECT
                        .trim_start_matches("SELECT ")
                        .trim_end_matches(" FROM calls")
                ),
                &[&owner, &until, &now, &vault, &tools],
            )
            .await
            .map_err(|e| self.fail(e))?;
        let mut taken: Vec<Call> = rows.iter().map(call_of).collect();
        taken.sort_by_key(|c| c.created_at);
        Ok(taken)
    }

    pub async fn release_calls(&self, owner: &str) -> Result<(), TaskError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE calls SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND status = 'working'",
                &[&owner],
            )
            .await
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }
}
