//! The task store on SQLite, one person's: `tasks.db` in the data directory (WAL, versioned
//! migrations), owned by one thread so no SQLite call ever blocks the async runtime. Every
//! state change is one transaction.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Task, now_ms};
use crate::{Kind, Results, Status, TaskError};

/// Each migration moves the schema one version up; `PRAGMA user_version` says where a file is.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        query TEXT NOT NULL,
        model TEXT,
        note TEXT,
        status TEXT NOT NULL,
        progress INTEGER,
        current_action TEXT,
        remote_id TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        error TEXT,
        notify INTEGER NOT NULL DEFAULT 1,
        max_wait_hours REAL NOT NULL DEFAULT 8,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        completed_at INTEGER,
        lease_owner TEXT,
        lease_until INTEGER
    );
    CREATE INDEX tasks_status ON tasks(status);
    CREATE TABLE results (
        task_id TEXT PRIMARY KEY REFERENCES tasks(id),
        report TEXT NOT NULL,
        sources TEXT NOT NULL,
        metadata TEXT NOT NULL,
        raw TEXT
    );",
    // Research-note tasks name their vault's root beside the note's vault path.
    "ALTER TABLE tasks ADD COLUMN vault TEXT;",
    // Calls answered with a task (MCP tasks): see `calls.rs`.
    "CREATE TABLE calls (
        id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        vault TEXT,
        status TEXT NOT NULL,
        message TEXT,
        percent INTEGER,
        result TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ttl_ms INTEGER NOT NULL,
        poll_ms INTEGER NOT NULL,
        resumed INTEGER NOT NULL DEFAULT 0,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_until INTEGER
    );
    CREATE INDEX calls_status ON calls(status);",
];

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A handle to the store's thread; cheap to clone.
#[derive(Clone)]
pub struct Sqlite {
    tx: mpsc::Sender<Job>,
    path: PathBuf,
}

impl Sqlite {
    /// Opens (creating and migrating) `tasks.db` in `dir`.
    pub fn open(dir: &Path) -> Result<Sqlite, TaskError> {
        std::fs::create_dir_all(dir).map_err(|e| TaskError::Store(format!("{}: {e}", dir.display())))?;
        let path = dir.join("tasks.db");
        let mut conn = Connection::open(&path).map_err(|e| store_error(&path, e))?;
        migrate(&mut conn).map_err(|e| store_error(&path, e))?;
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("scholia-tasks-db".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job(&mut conn);
                }
            })
            .map_err(|e| TaskError::Store(e.to_string()))?;
        Ok(Sqlite { tx, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the store's thread.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, TaskError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let path = self.path.clone();
        self.tx
            .send(Box::new(move |conn| {
                let _ = tx.send(f(conn).map_err(|e| store_error(&path, e)));
            }))
            .map_err(|_| TaskError::Store("the task store's thread has stopped".into()))?;
        rx.await
            .map_err(|_| TaskError::Store("the task store's thread has stopped".into()))?
    }

    pub async fn insert(&self, task: Task) -> Result<(), TaskError> {
        self.call(move |c| {
            c.execute(
                "INSERT INTO tasks (id, kind, query, model, note, status, progress, current_action, remote_id,
                    input_tokens, output_tokens, cost_usd, error, notify, max_wait_hours, created_at, updated_at,
                    completed_at, lease_owner, lease_until, vault)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
                params![
                    task.id,
                    task.kind.as_str(),
                    task.query,
                    task.model,
                    task.note,
                    task.status.as_str(),
                    task.progress,
                    task.current_action,
                    task.remote_id,
                    task.input_tokens as i64,
                    task.output_tokens as i64,
                    task.cost_usd,
                    task.error,
                    task.notify,
                    task.max_wait_hours,
                    task.created_at,
                    task.updated_at,
                    task.completed_at,
                    task.lease_owner,
                    task.lease_until,
                    task.vault
                ],
            )
            .map(|_| ())
        })
        .await
    }

    pub async fn get(&self, id: &str) -> Result<Option<Task>, TaskError> {
        let id = id.to_string();
        self.call(move |c| get(c, &id)).await
    }

    pub async fn list(&self, limit: usize) -> Result<Vec<Task>, TaskError> {
        self.call(move |c| {
            let mut stmt = c.prepare_cached(&format!("{SELECT} ORDER BY created_at DESC, id LIMIT ?1"))?;
            let rows = stmt.query_map([limit as i64], row_task)?;
            rows.collect()
        })
        .await
    }

    pub async fn results(&self, id: &str) -> Result<Option<Results>, TaskError> {
        let id = id.to_string();
        self.call(move |c| {
            c.query_row(
                "SELECT report, sources, metadata, raw FROM results WHERE task_id = ?1",
                [id],
                |r| {
                    Ok(Results {
                        report: r.get(0)?,
                        sources: crate::results::sources_from_stored(&r.get::<_, String>(1)?),
                        metadata: crate::results::ResultsMeta::from_stored(&r.get::<_, String>(2)?),
                        raw: r.get(3)?,
                    })
                },
            )
            .optional()
        })
        .await
    }

    /// Applies `change` to a task in one transaction, when `owner` still holds its lease (or
    /// `owner` is `None`); returns the task as written, or `None` when the lease was lost.
    pub async fn update(
        &self,
        id: &str,
        owner: Option<&str>,
        change: impl FnOnce(&mut Task) + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        self.transact(id, owner, false, move |task, _| {
            change(task);
            Ok(())
        })
        .await
    }

    /// Marks a task finished with its results, in one transaction, if `owner` holds it and it
    /// has not finished already.
    pub async fn finish(
        &self,
        id: &str,
        owner: Option<&str>,
        status: Status,
        results: Option<Results>,
        change: impl FnOnce(&mut Task) + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        self.transact(id, owner, true, move |task, tx| {
            change(task);
            task.status = status;
            task.completed_at = Some(now_ms());
            task.lease_owner = None;
            task.lease_until = None;
            if let Some(r) = results {
                put_results(tx, &task.id, &r)?;
            }
            Ok(())
        })
        .await
    }

    /// Stores results for a task that has already ended (a cancel that kept the partial
    /// report it fetched after recording the end).
    pub async fn keep_results(&self, id: &str, results: Results) -> Result<(), TaskError> {
        let id = id.to_string();
        self.call(move |c| put_results(c, &id, &results).map(|_| ())).await
    }

    /// Reads a task, checks `owner` holds it (and, with `unfinished`, that it has not
    /// ended), applies `change` and writes it back, all in one transaction.
    async fn transact(
        &self,
        id: &str,
        owner: Option<&str>,
        unfinished: bool,
        change: impl FnOnce(&mut Task, &rusqlite::Transaction<'_>) -> rusqlite::Result<()> + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        let (id, owner) = (id.to_string(), owner.map(str::to_string));
        self.call(move |c| {
            // Immediate: a read that later writes would fail at once with SQLITE_BUSY (no busy
            // wait) when another process wrote in between, e.g. a runner polling the task.
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let Some(mut task) = get(&tx, &id)? else {
                return Ok(None);
            };
            if (owner.is_some() && task.lease_owner != owner) || (unfinished && task.status.is_final()) {
                return Ok(None);
            }
            change(&mut task, &tx)?;
            task.updated_at = now_ms();
            write(&tx, &task)?;
            tx.commit()?;
            Ok(Some(task))
        })
        .await
    }

    /// Takes the lease of every unfinished task that nobody holds (or whose holder's lease
    /// expired) for `owner` until `until`; returns the tasks taken.
    pub async fn claim(&self, owner: &str, until: i64, limit: usize) -> Result<Vec<Task>, TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let now = now_ms();
            let ids: Vec<String> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT id FROM tasks WHERE status IN ('pending', 'running')
                     AND (lease_owner IS NULL OR lease_until < ?1) ORDER BY created_at LIMIT ?2",
                )?;
                stmt.query_map(params![now, limit as i64], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            };
            let mut taken = Vec::with_capacity(ids.len());
            for id in ids {
                tx.execute(
                    "UPDATE tasks SET lease_owner = ?1, lease_until = ?2 WHERE id = ?3",
                    params![owner, until, id],
                )?;
                if let Some(t) = get(&tx, &id)? {
                    taken.push(t);
                }
            }
            tx.commit()?;
            Ok(taken)
        })
        .await
    }

    /// Extends `owner`'s leases; returns the ids it still holds.
    pub async fn renew(&self, owner: &str, until: i64) -> Result<Vec<String>, TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE tasks SET lease_until = ?1 WHERE lease_owner = ?2 AND status IN ('pending', 'running')",
                params![until, owner],
            )?;
            let held = {
                let mut stmt = tx.prepare_cached(
                    "SELECT id FROM tasks WHERE lease_owner = ?1 AND status IN ('pending', 'running')",
                )?;
                stmt.query_map([&owner], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()?
            };
            tx.commit()?;
            Ok(held)
        })
        .await
    }

    /// Gives `owner`'s leases up (a clean shutdown), so another process takes over at once.
    pub async fn release(&self, owner: &str) -> Result<(), TaskError> {
        let owner = owner.to_string();
        self.call(move |c| {
            c.execute(
                "UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?1",
                [owner],
            )
            .map(|_| ())
        })
        .await
    }
}

const SELECT: &str = "SELECT id, kind, query, model, note, status, progress, current_action, remote_id,
    input_tokens, output_tokens, cost_usd, error, notify, max_wait_hours, created_at, updated_at, completed_at,
    lease_owner, lease_until, vault FROM tasks";

fn get(c: &Connection, id: &str) -> rusqlite::Result<Option<Task>> {
    let mut stmt = c.prepare_cached(&format!("{SELECT} WHERE id = ?1"))?;
    stmt.query_row([id], row_task).optional()
}

fn row_task(r: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    let text = |i: usize| -> rusqlite::Result<String> { r.get(i) };
    Ok(Task {
        id: r.get(0)?,
        kind: Kind::parse(&text(1)?).unwrap_or(Kind::Gemini),
        query: r.get(2)?,
        model: r.get(3)?,
        note: r.get(4)?,
        status: Status::parse(&text(5)?).unwrap_or(Status::Failed),
        progress: r.get::<_, Option<i64>>(6)?.map(|p| p.clamp(0, 100) as u8),
        current_action: r.get(7)?,
        remote_id: r.get(8)?,
        input_tokens: r.get::<_, i64>(9)?.max(0) as u64,
        output_tokens: r.get::<_, i64>(10)?.max(0) as u64,
        cost_usd: r.get(11)?,
        error: r.get(12)?,
        notify: r.get(13)?,
        max_wait_hours: r.get(14)?,
        created_at: r.get(15)?,
        updated_at: r.get(16)?,
        completed_at: r.get(17)?,
        lease_owner: r.get(18)?,
        lease_until: r.get(19)?,
        vault: r.get(20)?,
    })
}

fn write(c: &Connection, t: &Task) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE tasks SET status = ?2, progress = ?3, current_action = ?4, remote_id = ?5, input_tokens = ?6,
            output_tokens = ?7, cost_usd = ?8, error = ?9, updated_at = ?10, completed_at = ?11,
            lease_owner = ?12, lease_until = ?13 WHERE id = ?1",
        params![
            t.id,
            t.status.as_str(),
            t.progress,
            t.current_action,
            t.remote_id,
            t.input_tokens as i64,
            t.output_tokens as i64,
            t.cost_usd,
            t.error,
            t.updated_at,
            t.completed_at,
            t.lease_owner,
            t.lease_until
        ],
    )
    .map(|_| ())
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    let version: usize = conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated meanwhile.
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now as usize > i {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

/// The store's error with its path and, when SQLite only says it cannot open or write the
/// file, the cause found on disk.
fn store_error(path: &Path, e: rusqlite::Error) -> TaskError {
    use rusqlite::ErrorCode;
    let cause = match e.sqlite_error_code() {
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => unwritable(path),
        Some(ErrorCode::DiskFull) => Some("the disk is full".to_string()),
        _ => None,
    };
    let cause = cause
        .map(|c| format!(" ({c}; or set SCHOLIA_DATA_DIR to another directory)"))
        .unwrap_or_default();
    TaskError::Store(format!("{}: {e}{cause}", path.display()))
}

/// Why `path` (or its directory) cannot be written, if the file system says.
fn unwritable(path: &Path) -> Option<String> {
    let read_only = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly()) || !writable(p);
    if path.exists() && read_only(path) {
        return Some("the file is read-only".into());
    }
    let dir = path.parent()?;
    if !dir.exists() {
        return Some(format!("the directory {} does not exist", dir.display()));
    }
    read_only(dir).then(|| format!("the directory {} is read-only", dir.display()))
}

fn writable(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: a valid NUL-terminated path; access(2) only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

fn put_results(c: &Connection, id: &str, r: &Results) -> rusqlite::Result<usize> {
    c.execute(
        "INSERT OR REPLACE INTO results (task_id, report, sources, metadata, raw) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            id,
            r.report,
            serde_json::to_string(&r.sources).unwrap_or_default(),
            serde_json::to_string(&r.metadata).unwrap_or_default(),
            r.raw
        ],
    )
}

mod calls;
