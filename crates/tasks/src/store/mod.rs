//! The task store: every task, its results, its lease, and the calls answered with a task.
//! One person's store is SQLite in the data directory (`sqlite.rs`); a team's is PostgreSQL
//! (`postgres.rs`), shared by every host that serves the vault. Both keep the same semantics,
//! held by one conformance suite (`conformance.rs`): every state change is one transaction,
//! a task is claimed by one runner at a time (a lease, renewed by heartbeats, taken over when
//! it runs out), and status reads never call a provider.

use std::path::Path;

use serde::Serialize;

use crate::call::{Call, CallEnd, CallStatus};
use crate::{Kind, Results, Status, TaskError};

mod postgres;
mod sqlite;

pub use postgres::redacted;

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    pub id: String,
    pub kind: Kind,
    pub query: String,
    pub model: Option<String>,
    /// For research-note tasks: the note's vault path.
    pub note: Option<String>,
    /// For research-note tasks: the vault's root.
    pub vault: Option<String>,
    pub status: Status,
    pub progress: Option<u8>,
    pub current_action: Option<String>,
    pub remote_id: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub error: Option<String>,
    pub notify: bool,
    pub max_wait_hours: f64,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub completed_at: Option<i64>,
    #[serde(skip)]
    pub lease_owner: Option<String>,
    #[serde(skip)]
    pub lease_until: Option<i64>,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The store of one process: a handle, cheap to clone.
#[derive(Clone)]
pub struct Store(Backend);

#[derive(Clone)]
enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(postgres::Postgres),
}

/// Each backend's answer to one call.
macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match &$self.0 {
            Backend::Sqlite($s) => $e,
            Backend::Postgres($s) => $e,
        }
    };
}

impl Store {
    /// Opens (creating and migrating) `tasks.db` in `dir`.
    pub fn open(dir: &Path) -> Result<Store, TaskError> {
        Ok(Store(Backend::Sqlite(sqlite::Sqlite::open(dir)?)))
    }

    /// Connects to PostgreSQL at `url` (`postgres://…`; `sslmode=require` is honoured, over
    /// rustls), creating and migrating the schema; the pool holds at most `pool` connections.
    pub async fn connect(url: &str, pool: usize) -> Result<Store, TaskError> {
        Ok(Store(Backend::Postgres(postgres::Postgres::connect(url, pool).await?)))
    }

    /// Where the store is, for messages: the file, or the database's host and name (never a
    /// password).
    pub fn describe(&self) -> String {
        match &self.0 {
            Backend::Sqlite(s) => s.path().display().to_string(),
            Backend::Postgres(p) => p.describe(),
        }
    }

    pub async fn insert(&self, task: Task) -> Result<(), TaskError> {
        each!(self, s => s.insert(task).await)
    }

    pub async fn get(&self, id: &str) -> Result<Option<Task>, TaskError> {
        each!(self, s => s.get(id).await)
    }

    /// The newest `limit` tasks.
    pub async fn list(&self, limit: usize) -> Result<Vec<Task>, TaskError> {
        each!(self, s => s.list(limit).await)
    }

    pub async fn results(&self, id: &str) -> Result<Option<Results>, TaskError> {
        each!(self, s => s.results(id).await)
    }

    /// Applies `change` to a task in one transaction, when `owner` still holds its lease (or
    /// `owner` is `None`); returns the task as written, or `None` when the lease was lost.
    pub async fn update(
        &self,
        id: &str,
        owner: Option<&str>,
        change: impl FnOnce(&mut Task) + Send + 'static,
    ) -> Result<Option<Task>, TaskError> {
        each!(self, s => s.update(id, owner, change).await)
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
        each!(self, s => s.finish(id, owner, status, results.clone(), change).await)
    }

    /// Stores results for a task that has already ended.
    pub async fn keep_results(&self, id: &str, results: Results) -> Result<(), TaskError> {
        each!(self, s => s.keep_results(id, results.clone()).await)
    }

    /// Takes the lease of unfinished tasks nobody holds (or whose lease ran out) for `owner`
    /// until `until`, at most `limit`; each is taken by one process only.
    pub async fn claim(&self, owner: &str, until: i64, limit: usize) -> Result<Vec<Task>, TaskError> {
        each!(self, s => s.claim(owner, until, limit).await)
    }

    /// Extends `owner`'s leases; returns the ids it still holds.
    pub async fn renew(&self, owner: &str, until: i64) -> Result<Vec<String>, TaskError> {
        each!(self, s => s.renew(owner, until).await)
    }

    /// Gives `owner`'s leases up (a clean shutdown), so another process takes over at once.
    pub async fn release(&self, owner: &str) -> Result<(), TaskError> {
        each!(self, s => s.release(owner).await)
    }

    pub(crate) async fn insert_call(&self, call: Call, owner: String, until: i64) -> Result<(), TaskError> {
        each!(self, s => s.insert_call(call.clone(), owner.clone(), until).await)
    }

    /// A call (expired ones are deleted on the way).
    pub(crate) async fn get_call(&self, id: &str) -> Result<Option<Call>, TaskError> {
        each!(self, s => s.get_call(id).await)
    }

    pub(crate) async fn call_progress(
        &self,
        id: &str,
        message: &str,
        percent: Option<u8>,
        owner: &str,
    ) -> Result<(), TaskError> {
        each!(self, s => s.call_progress(id, message, percent, owner).await)
    }

    pub(crate) async fn finish_call(&self, id: &str, owner: &str, end: CallEnd) -> Result<Option<Call>, TaskError> {
        each!(self, s => s.finish_call(id, owner, end.clone()).await)
    }

    /// `None`: no such call; `Err(status)`: it had ended.
    pub(crate) async fn cancel_call(&self, id: &str) -> Result<Option<Result<Call, CallStatus>>, TaskError> {
        each!(self, s => s.cancel_call(id).await)
    }

    pub(crate) async fn renew_calls(
        &self,
        ids: Vec<String>,
        owner: &str,
        until: i64,
    ) -> Result<Vec<String>, TaskError> {
        each!(self, s => s.renew_calls(ids.clone(), owner, until).await)
    }

    pub(crate) async fn take_over_calls(
        &self,
        owner: &str,
        until: i64,
        vault: Option<String>,
        tools: Vec<String>,
    ) -> Result<Vec<Call>, TaskError> {
        each!(self, s => s.take_over_calls(owner, until, vault.clone(), tools.clone()).await)
    }

    pub(crate) async fn release_calls(&self, owner: &str) -> Result<(), TaskError> {
        each!(self, s => s.release_calls(owner).await)
    }
}

#[cfg(test)]
mod conformance;
