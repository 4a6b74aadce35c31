//! The task store on PostgreSQL, a team's: every host serving the vault shares its tasks. The
//! same semantics as the SQLite store (`sqlite.rs`), held by the same conformance suite: claims
//! take `FOR UPDATE SKIP LOCKED` rows, so two runners never take one task; a state change is
//! one transaction; the schema is made and migrated by scholia, versioned, in one transaction
//! under an advisory lock (two hosts starting at once migrate once). A pool bounds the
//! connections; TLS goes through rustls (`sslmode=require` honoured). Messages name the
//! database's host, port and name, never its password.

use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::Row;
use tokio_postgres::config::{Host, SslMode};

use super::{Task, now_ms};
use crate::{Kind, Results, Status, TaskError};

mod calls;

/// Each migration moves the schema one version up (`scholia_schema.version` says where a
/// database is).
const MIGRATIONS: &[&str] = &["CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        query TEXT NOT NULL,
        model TEXT,
        note TEXT,
        status TEXT NOT NULL,
        progress INTEGER,
        current_action TEXT,
        remote_id TEXT,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
        error TEXT,
        notify BOOLEAN NOT NULL DEFAULT TRUE,
        max_wait_hours DOUBLE PRECISION NOT NULL DEFAULT 8,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        completed_at BIGINT,
        lease_owner TEXT,
        lease_until BIGINT,
        vault TEXT
    );
    CREATE INDEX tasks_status ON tasks(status);
    CREATE INDEX tasks_created ON tasks(created_at);
    CREATE TABLE results (
        task_id TEXT PRIMARY KEY REFERENCES tasks(id),
        report TEXT NOT NULL,
        sources TEXT NOT NULL,
        metadata TEXT NOT NULL,
        raw TEXT
    );
    CREATE TABLE calls (
        id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        vault TEXT,
        status TEXT NOT NULL,
        message TEXT,
        percent INTEGER,
        result TEXT,
        error TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        ttl_ms BIGINT NOT NULL,
        poll_ms BIGINT NOT NULL,
        resumed INTEGER NOT NULL DEFAULT 0,
        cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
        lease_owner TEXT,
        lease_until BIGINT
    );
    CREATE INDEX calls_status ON calls(status);"];

/// The advisory lock migrations run under (any constant both hosts agree on).
const MIGRATION_LOCK: i64 = 0x5c40_1a7a_5c5e_0001;

#[derive(Clone)]
pub struct Postgres {
    pool: Pool,
    /// `postgres://user@host:port/db`, for messages.
    shown: String,
}

/// `url` without its password (`postgres://user:secret@host/db` → `postgres://user@host/db`).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, after) = match rest.rfind('@') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => return url.to_string(),
    };
    let user = auth.split_once(':').map_or(auth, |(u, _)| u);
    format!("{scheme}://{user}{after}")
        .split(['?'])
        .next()
        .unwrap_or_default()
        .to_string()
}

impl Postgres {
    pub async fn connect(url: &str, pool: usize) -> Result<Postgres, TaskError> {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
            TaskError::Store(format!(
                "tasks database URL `{}`: {e}; valid: postgres://user@host:5432/database",
                redacted(url)
            ))
        })?;
        let shown = describe(&config);
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match config.get_ssl_mode() {
            SslMode::Disable => Manager::from_config(config, tokio_postgres::NoTls, manager_config),
            _ => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut roots = rustls::RootCertStore::empty();
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                let tls = rustls::ClientConfig::builder()
                    .with_root_certificates(roots)
                    .with_no_client_auth();
                Manager::from_config(
                    config,
                    tokio_postgres_rustls::MakeRustlsConnect::new(tls),
                    manager_config,
                )
            }
        };
        let pool = Pool::builder(manager)
            .max_size(pool.max(1))
            .build()
            .map_err(|e| TaskError::Store(format!("task store {shown}: {e}")))?;
        let store = Postgres { pool, shown };
        store.migrate().await?;
        Ok(store)
    }

    pub fn describe(&self) -> String {
        self.shown.clone()
    }

    fn fail(&self, e: impl std::fmt::Display) -> TaskError {
        TaskError::Store(format!("task store {}: {e}", self.shown))
    }

    async fn client(&self) -> Result<deadpool_postgres::Client, TaskError> {
        self.pool.get().await.map_err(|e| self.fail(e))
    }

    async fn migrate(&self) -> Result<(), TaskError> {
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(|e| self.fail(e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(|e| self.fail(e))?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS scholia_schema (version INTEGER NOT NULL)")
            .await
            .map_err(|e| self.fail(e))?;
        let version: i32 = match tx
            .query_opt("SELECT version FROM scholia_schema", &[])
            .await
            .map_err(|e| self.fail(e))?
        {
            Some(r) => r.get(0),
            None => {
                tx.execute("INSERT INTO scholia_schema (version) VALUES (0)", &[])
                    .await
                    .map_err(|e| self.fail(e))?;
                0
            }
        };
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            tx.batch_execute(sql).await.map_err(|e| self.fail(e))?;
            tx.execute("UPDATE scholia_schema SET version = $1", &[&((i + 1) as i32)])
                .await
                .map_err(|e| self.fail(e))?;
        }
        tx.commit().await.map_err(|e| self.fail(e))
    }

    pub async fn insert(&self, t: Task) -> Result<(), TaskError> {
        let c = self.client().await?;
        c.execute(
            "INSERT INTO tasks (id, kind, query, model, note, status, progress, current_action, remote_id,
                input_tokens, output_tokens, cost_usd, error, notify, max_wait_hours, created_at, updated_at,
                completed_at, lease_owner, lease_until, vault)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
            &[
                &t.id,
                &t.kind.as_str(),
                &t.query,
                &t.model,
                &t.note,
                &t.status.as_str(),
                &t.progress.map(i32::from),
                &t.current_action,
                &t.remote_id,
                &(t.input_tokens as i64),
                &(t.output_tokens as i64),
                &t.cost_usd,
                &t.error,
                &t.notify,
                &t.max_wait_hours,
                &t.created_at,
                &t.updated_at,
                &t.completed_at,
                &t.lease_owner,
                &t.lease_until,
                &t.vault,
            ],
        )
        .await
        .map(|_| ())
        .map_err(|e| self.fail(e))
    }

    pub async fn get(&self, id: &str) -> Result<Option<Task>, TaskError> {
        let c = self.client().await?;
        let row = c
            .query_opt(&format!("{SELECT} WHERE id = $1"), &[&id])
            .await
            .map_err(|e| self.fail(e))?;
        Ok(row.as_ref().map(task_of))
    }

    pub async fn list(&self, limit: usize) -> Result<Vec<Task>, TaskError> {
        let c = self.client().await?;
        let rows = c
            .query(
                &format!("{SELECT} ORDER BY created_at DESC, id LIMIT $1"),
                &[&(limit as i64)],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(rows.iter().map(task_of).collect())
    }

    pub async fn results(&self, id: &str) -> Result<Option<Results>, TaskError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT report, sources, metadata, raw FROM results WHERE task_id = $1",
                &[&id],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(row.map(|r| Results {
            report: r.get(0),
            sources: crate::results::sources_from_stored(&r.get::<_, String>(1)),
            metadata: crate::results::ResultsMeta::from_stored(&r.get::<_, String>(2)),
            raw: r.get(3),
        }))
    }

    pub async fn update(
        &self,
        id: &str,
        owner: Option<&str>,
        change: impl FnOnce(&mut Task) + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        self.transact(id, owner, false, change, None, None).await
    }

    pub async fn finish(
        &self,
        id: &str,
        owner: Option<&str>,
        status: Status,
        results: Option<Results>,
        change: impl FnOnce(&mut Task) + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        self.transact(id, owner, true, change, Some(status), results).await
    }

    /// Reads a task locked (`FOR UPDATE`), checks `owner` holds it (and, with `unfinished`,
    /// that it has not ended), applies `change` (and the end, when `finished` is given) and
    /// writes it back, all in one transaction.
    async fn transact(
        &self,
        id: &str,
        owner: Option<&str>,
        unfinished: bool,
        change: impl FnOnce(&mut Task) + Send + 'static,
        finished: Option<Status>,
        results: Option<Results>,
    ) -> Result<Option<Task>, TaskError> {
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(|e| self.fail(e))?;
        let Some(row) = tx
            .query_opt(&format!("{SELECT} WHERE id = $1 FOR UPDATE"), &[&id])
            .await
            .map_err(|e| self.fail(e))?
        else {
            return Ok(None);
        };
        let mut task = task_of(&row);
        if (owner.is_some() && task.lease_owner.as_deref() != owner) || (unfinished && task.status.is_final()) {
            return Ok(None);
        }
        change(&mut task);
        if let Some(status) = finished {
            task.status = status;
            task.completed_at = Some(now_ms());
            task.lease_owner = None;
            task.lease_until = None;
            if let Some(r) = &results {
                put_results(&tx, &task.id, r).await.map_err(|e| self.fail(e))?;
            }
        }
        task.updated_at = now_ms();
        write(&tx, &task).await.map_err(|e| self.fail(e))?;
        tx.commit().await.map_err(|e| self.fail(e))?;
        Ok(Some(task))
    }

    pub async fn keep_results(&self, id: &str, results: Results) -> Result<(), TaskError> {
        let c = self.client().await?;
        put_results(&c, id, &results).await.map_err(|e| self.fail(e))
    }

    pub async fn claim(&self, owner: &str, until: i64, limit: usize) -> Result<Vec<Task>, TaskError> {
        let c = self.client().await?;
        let rows = c
            .query(
                &format!(
                    "UPDATE tasks SET lease_owner = $1, lease_until = $2 WHERE id IN (
                        SELECT id FROM tasks WHERE status IN ('pending', 'running')
                        AND (lease_owner IS NULL OR lease_until < $3) ORDER BY created_at LIMIT $4
                        FOR UPDATE SKIP LOCKED)
                     RETURNING {COLUMNS}"
                ),
                &[&owner, &until, &now_ms(), &(limit as i64)],
            )
            .await
            .map_err(|e| self.fail(e))?;
        let mut taken: Vec<Task> = rows.iter().map(task_of).collect();
        taken.sort_by_key(|t| t.created_at);
        Ok(taken)
    }

    pub async fn renew(&self, owner: &str, until: i64) -> Result<Vec<String>, TaskError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "UPDATE tasks SET lease_until = $1 WHERE lease_owner = $2 AND status IN ('pending', 'running')
                 RETURNING id",
                &[&until, &owner],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    pub async fn release(&self, owner: &str) -> Result<(), TaskError> {
        let c = self.client().await?;
        c.execute(
            "UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1",
            &[&owner],
        )
        .await
        .map(|_| ())
        .map_err(|e| self.fail(e))
    }
}

/// `postgres://user@host:port/db` from a parsed configuration.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

const COLUMNS: &str = "id, kind, query, model, note, status, progress, current_action, remote_id,
    input_tokens, output_tokens, cost_usd, error, notify, max_wait_hours, created_at, updated_at, completed_at,
    lease_owner, lease_until, vault";

const SELECT: &str = "SELECT id, kind, query, model, note, status, progress, current_action, remote_id,
    input_tokens, output_tokens, cost_usd, error, notify, max_wait_hours, created_at, updated_at, completed_at,
    lease_owner, lease_until, vault FROM tasks";

fn task_of(r: &Row) -> Task {
    Task {
        id: r.get(0),
        kind: Kind::parse(r.get::<_, &str>(1)).unwrap_or(Kind::Gemini),
        query: r.get(2),
        model: r.get(3),
        note: r.get(4),
        status: Status::parse(r.get::<_, &str>(5)).unwrap_or(Status::Failed),
        progress: r.get::<_, Option<i32>>(6).map(|p| p.clamp(0, 100) as u8),
        current_action: r.get(7),
        remote_id: r.get(8),
        input_tokens: r.get::<_, i64>(9).max(0) as u64,
        output_tokens: r.get::<_, i64>(10).max(0) as u64,
        cost_usd: r.get(11),
        error: r.get(12),
        notify: r.get(13),
        max_wait_hours: r.get(14),
        created_at: r.get(15),
        updated_at: r.get(16),
        completed_at: r.get(17),
        lease_owner: r.get(18),
        lease_until: r.get(19),
        vault: r.get(20),
    }
}

async fn write(c: &impl deadpool_postgres::GenericClient, t: &Task) -> Result<(), tokio_postgres::Error> {
    c.execute(
        "UPDATE tasks SET status = $2, progress = $3, current_action = $4, remote_id = $5, input_tokens = $6,
            output_tokens = $7, cost_usd = $8, error = $9, updated_at = $10, completed_at = $11,
            lease_owner = $12, lease_until = $13 WHERE id = $1",
        &[
            &t.id,
            &t.status.as_str(),
            &t.progress.map(i32::from),
            &t.current_action,
            &t.remote_id,
            &(t.input_tokens as i64),
            &(t.output_tokens as i64),
            &t.cost_usd,
            &t.error,
            &t.updated_at,
            &t.completed_at,
            &t.lease_owner,
            &t.lease_until,
        ],
    )
    .await
    .map(|_| ())
}

async fn put_results(
    c: &impl deadpool_postgres::GenericClient,
    id: &str,
    r: &Results,
) -> Result<(), tokio_postgres::Error> {
    c.execute(
        "INSERT INTO results (task_id, report, sources, metadata, raw) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (task_id) DO UPDATE SET report = EXCLUDED.report, sources = EXCLUDED.sources,
            metadata = EXCLUDED.metadata, raw = EXCLUDED.raw",
        &[
            &id,
            &r.report,
            &serde_json::to_string(&r.sources).unwrap_or_default(),
            &serde_json::to_string(&r.metadata).unwrap_or_default(),
            &r.raw,
        ],
    )
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_url_is_shown_without_its_password() {
        let check = |url: &str, expected: &str| assert_eq!(redacted(url), expected, "{url}");
        check(
            "postgres://scholia:s3cret@db.example:5432/tasks?sslmode=require",
            "postgres://scholia@db.example:5432/tasks",
        );
        check("postgres://db.example/tasks", "postgres://db.example/tasks");
        check("postgres://u:p@h/d", "postgres://u@h/d");
    }
}
