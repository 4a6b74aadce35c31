//! A vault session: the index opened for a vault, brought up to date, and kept current. One
//! process holds the tantivy writer (start-up sync, file watcher, editor buffers); another on
//! the same vault follows its commits and takes the writer over when it is released. Progress
//! is reported as [`IndexEvent`]s through a job, so every surface shows the same thing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{IndexError, Progress, SyncSummary, Updates, VaultIndex, WriterOptions};
use scholia_base::Dirs;
use scholia_base::{Job, lock};
use scholia_vault::NotePath;

use crate::SearchResults;
use scholia_base::{Error, ErrorKind};
use scholia_vault::Vault;

/// How often a follower tries to take the writer over.
const TAKE_OVER_EVERY: Duration = Duration::from_secs(3);
/// Sync progress is reported at most this often.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// Progress of opening and syncing a vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexEvent {
    /// The walk is done: `total` notes to (re)index, `unchanged` not.
    Started {
        total: usize,
        unchanged: usize,
    },
    Indexed {
        done: usize,
        total: usize,
        searchable: u64,
    },
}

impl scholia_base::Progress for IndexEvent {
    fn message(&self) -> String {
        match self {
            IndexEvent::Started { total, unchanged } => format!("{unchanged} unchanged, {total} to index"),
            IndexEvent::Indexed {
                done,
                total,
                searchable,
            } => format!("{done}/{total} notes ({searchable} searchable)"),
        }
    }

    fn percent(&self) -> Option<u32> {
        match self {
            IndexEvent::Started { .. } => Some(0),
            IndexEvent::Indexed { done, total, .. } => Some((done * 100).checked_div(*total).unwrap_or(100) as u32),
        }
    }
}

impl From<Progress> for IndexEvent {
    fn from(p: Progress) -> IndexEvent {
        match p {
            Progress::Started { total, unchanged } => IndexEvent::Started { total, unchanged },
            Progress::Indexed {
                done,
                total,
                searchable,
            } => IndexEvent::Indexed {
                done,
                total,
                searchable,
            },
        }
    }
}

impl SyncSummary {
    /// How a finished sync is announced in the editor.
    pub fn message(&self) -> String {
        format!(
            "{} notes: {} indexed, {} unchanged, {} skipped, {} failed in {:.2}s",
            self.total_notes(),
            self.indexed,
            self.unchanged,
            self.skipped.len(),
            self.failed.len(),
            self.elapsed.as_secs_f64()
        )
    }
}

/// The title of the indexing job on every surface.
pub const INDEXING: &str = "Indexing vault";

/// The open index of one vault and what keeps it current.
pub struct VaultSession {
    index: Arc<VaultIndex>,
    updates: Mutex<Option<Updates>>,
    /// Open editor buffers, replayed into the updater once it starts.
    buffers: Mutex<HashMap<String, String>>,
    /// Whether the start-up sync is over (or another process keeps the index current).
    pub(crate) synced: tokio::sync::watch::Sender<bool>,
    /// Opened without checking the vault (see [`VaultSession::open_current`]).
    deferred: std::sync::atomic::AtomicBool,
    /// Where a server gets its embedder, once its vault is indexed (see `meaning/upkeep.rs`).
    pub(crate) meaning_source: Mutex<Option<crate::meaning::Source>>,
}

/// How long a second process waits for the first to finish indexing the vault.
pub const READER_WAIT: Duration = Duration::from_secs(120);

impl VaultSession {
    /// Opens (or creates) the index of the vault at `root` (blocking).
    pub fn open(root: &Path, dirs: &Dirs) -> Result<VaultSession, Error> {
        let vault = Vault::open(root)?;
        // A change a killed process left part-way is rolled back before anything reads the
        // vault (its journal says what it had done).
        let recovered = scholia_vault::change::recover(vault.root());
        if recovered.rolled_back > 0 {
            tracing::warn!(
                "{} change(s) of several notes interrupted part-way were rolled back",
                recovered.rolled_back
            );
        }
        let dir = dirs.index_dir(vault.root());
        let index = VaultIndex::open(vault, &dir, WriterOptions::default())?;
        tracing::info!(vault = %index.vault().root().display(), index = %index.dir().display(), "index opened");
        Ok(VaultSession {
            index: Arc::new(index),
            updates: Mutex::new(None),
            buffers: Mutex::new(HashMap::new()),
            synced: tokio::sync::watch::channel(false).0,
            deferred: std::sync::atomic::AtomicBool::new(false),
            meaning_source: Mutex::new(None),
        })
    }

    /// Opens the index and, when this process holds the writer, brings it up to date
    /// (blocking). `None` for the summary when another process keeps the index: then this one
    /// waits (at most [`READER_WAIT`]) until that process has the whole vault in it.
    pub fn open_synced(
        root: &Path,
        dirs: &Dirs,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(VaultSession, Option<SyncSummary>), Error> {
        VaultSession::open_synced_until(root, dirs, progress, &|| false)
    }

    /// [`VaultSession::open_synced`] that gives up (cancelled) once `stop` says so.
    pub fn open_synced_until(
        root: &Path,
        dirs: &Dirs,
        progress: &mut dyn FnMut(Progress),
        stop: &dyn Fn() -> bool,
    ) -> Result<(VaultSession, Option<SyncSummary>), Error> {
        VaultSession::open(root, dirs)?.synced_until(progress, stop)
    }

    /// Brings an opened session up to date (see [`VaultSession::open_synced_until`]).
    fn synced_until(
        self,
        progress: &mut dyn FnMut(Progress),
        stop: &dyn Fn() -> bool,
    ) -> Result<(VaultSession, Option<SyncSummary>), Error> {
        let session = self;
        let summary = if session.index.is_writer() {
            Some(session.index.sync_until(progress, stop)?)
        } else {
            // Another process keeps the index: answer once it holds the whole vault (a cold
            // build by a process started a moment earlier), or take it over if that one left.
            let started = Instant::now();
            let mut said = false;
            let mut summary = None;
            while !session.index.writer_is_complete() && started.elapsed() < READER_WAIT {
                if stop() {
                    return Err(crate::IndexError::Cancelled.into());
                }
                if session.index.try_acquire_writer()? {
                    summary = Some(session.index.sync_until(progress, stop)?);
                    break;
                }
                if !said && started.elapsed() > Duration::from_millis(500) {
                    tracing::warn!("another scholia process is indexing this vault; waiting for it");
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            session.index.reload()?;
            summary
        };
        session.synced.send_replace(true);
        Ok((session, summary))
    }

    /// For a process that answers and exits: [`VaultSession::open_synced`], except that when
    /// the index holds the whole vault and checking every note took longer than
    /// [`crate::fresh::DEFER_ABOVE`] last time, the check is not made now: `later` is called
    /// (unless a check finished moments ago) to have it made in the background, and answers
    /// re-read the notes they show when those changed (see [`VaultSession::search`]).
    pub fn open_current(
        root: &Path,
        dirs: &Dirs,
        progress: &mut dyn FnMut(Progress),
        later: &dyn Fn(&Path),
    ) -> Result<(VaultSession, Option<SyncSummary>), Error> {
        let session = VaultSession::open(root, dirs)?;
        let check = session.index.last_check();
        let deferrable = session.index.writer_is_complete() && check.is_some_and(|c| c.may_defer());
        if !deferrable {
            return session.synced_until(progress, &|| false);
        }
        // A check that finished moments ago is trusted: no other is started.
        if check.is_some_and(|c| c.age() >= crate::fresh::TRUST_FOR) {
            later(session.vault().root());
        }
        session.index.trust_complete();
        session.deferred.store(true, std::sync::atomic::Ordering::Relaxed);
        session.synced.send_replace(true);
        Ok((session, None))
    }

    /// The notes among `rels` that changed since the index last saw them are re-read, when
    /// this session did not check the vault before answering; returns whether any were.
    pub async fn refresh_shown(&self, rels: Vec<String>) -> Result<bool, Error> {
        if !self.deferred.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(false);
        }
        let index = self.index.clone();
        scholia_base::blocking(move || {
            let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
            Ok(index.refresh_if_changed(&rels)?)
        })
        .await
    }

    pub fn index(&self) -> &Arc<VaultIndex> {
        &self.index
    }

    /// The quiet check a command from the shell leaves behind (`scholia index --background`):
    /// waits (at most 30 s) for the process that started it to release the index writer,
    /// brings the index up to date and merges a bulk build's segments as a server would. Steps
    /// aside when another check is waiting already. Someone holding the writer longer is a
    /// server, which keeps the index current itself.
    pub fn check_in_background(&self) -> Result<crate::Check, IndexError> {
        self.index.check_when_free(Duration::from_secs(30))
    }

    /// Waits until the start-up sync is over, at most `timeout`: a query right after start
    /// sees the vault, not the first batch of it. (The editor does not wait: it answers from
    /// what is indexed so far.)
    pub async fn wait_synced(&self, timeout: Duration) {
        let mut rx = self.synced.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|s| *s)).await;
    }

    /// Whether the start-up sync is over (the index holds the whole vault).
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    pub fn vault(&self) -> &Vault {
        self.index.vault()
    }

    /// A note named by a user: vault-relative, absolute, or relative to `cwd` (blocking).
    pub fn resolve(&self, input: &str, cwd: Option<&Path>) -> Result<NotePath, Error> {
        let (rel, abs) = self.vault().resolve_rel(input, cwd)?;
        let scope = self.index.scope();
        if !scope.allows(&rel) {
            return Err(scope.refuse("path", &rel));
        }
        Ok(NotePath { rel, abs })
    }

    /// The note at vault-relative `rel` (already known to be a note of this vault).
    pub fn note(&self, rel: &str) -> NotePath {
        NotePath {
            rel: rel.to_string(),
            abs: self.vault().abs(rel),
        }
    }

    /// The vault's notes for `query`, by words (BM25), meaning (vectors) or both fused (see
    /// [`crate::SearchMode`]; `None`: both when the vault has vectors), off the runtime.
    pub async fn search(
        &self,
        query: &str,
        limit: usize,
        mode: Option<crate::SearchMode>,
    ) -> Result<SearchResults, Error> {
        if !(1..=1000).contains(&limit) {
            return Err(Error::invalid(format!(
                "limit: {limit} is not valid; valid: an integer from 1 to 1000"
            )));
        }
        let (index, q) = (self.index.clone(), query.to_string());
        let deferred = self.deferred.load(std::sync::atomic::Ordering::Relaxed);
        let (hits, mode, warnings) = scholia_base::blocking(move || {
            let found = index.search_mode(&q, limit, None, mode)?;
            // Answered before the vault was checked: a note shown that changed since it was
            // indexed is re-read, and the question asked again.
            let shown: Vec<&str> = found.0.iter().map(|h| h.path.as_str()).collect();
            if deferred && index.refresh_if_changed(&shown)? {
                return Ok(index.search_mode(&q, limit, None, mode)?);
            }
            Ok(found)
        })
        .await?;
        Ok(SearchResults {
            hits,
            query: query.to_string(),
            mode,
            warnings,
        })
    }

    /// The unsaved text of an open buffer changed: index it instead of the file.
    pub fn buffer_changed(&self, rel: &str, text: String) {
        if let Some(u) = lock(&self.updates).as_ref() {
            u.buffer_changed(rel, text.clone());
        }
        lock(&self.buffers).insert(rel.to_string(), text);
    }

    /// A buffer was saved: its text is indexed now rather than after the quiet period.
    pub fn buffer_saved(&self) {
        if let Some(u) = lock(&self.updates).as_ref() {
            u.saved();
        }
    }

    /// A buffer was closed: the file on disk is the truth again.
    pub fn buffer_closed(&self, rel: &str) {
        lock(&self.buffers).remove(rel);
        if let Some(u) = lock(&self.updates).as_ref() {
            u.buffer_closed(rel);
        }
    }

    /// Keeps the index current until `shutdown`: the writer syncs and watches; a follower
    /// reloads the writer's commits and takes the writer over when it is released. `job`
    /// starts an indexing job (reported and ended by the session).
    pub async fn maintain(self: Arc<Self>, start_job: &(dyn Fn() -> Job + Send + Sync), shutdown: CancellationToken) {
        let mut job = start_job();
        // Vectors follow once the index holds the vault (a reader's too: it reads the file).
        tokio::spawn(self.clone().keep_meaning(shutdown.clone()));
        self.index.keep_merged();
        if !self.index.is_writer() {
            // Another process keeps the index current: what it committed is the vault.
            self.synced.send_replace(true);
            job.end(&format!(
                "read-only: another scholia process keeps this index ({} notes)",
                self.index.num_notes()
            ));
            tracing::info!("another process holds the index writer; following its commits");
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(TAKE_OVER_EVERY) => {}
                }
                let idx = self.index.clone();
                if let Ok(true) = scholia_base::spawn_blocking(move || idx.try_acquire_writer()).await {
                    tracing::info!("took over the index writer");
                    job = start_job();
                    break;
                }
            }
        }
        let synced = self.sync(&job).await;
        self.synced.send_replace(true);
        match synced {
            Ok(summary) => {
                let message = summary.message();
                tracing::info!("{message}");
                for s in summary.skipped.iter().chain(&summary.failed) {
                    tracing::info!("not indexed: {} ({})", s.path, s.reason);
                }
                job.end(&message);
            }
            Err(e) => {
                tracing::error!("indexing failed: {e}");
                job.end(&format!("failed: {e}"));
                return;
            }
        }
        self.start_updates();
    }

    async fn sync(&self, job: &Job) -> Result<SyncSummary, Error> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let idx = self.index.clone();
        let work = scholia_base::spawn_blocking(move || {
            idx.sync(&mut |p| {
                let _ = tx.send(p);
            })
        });
        let mut last = Instant::now() - REPORT_EVERY;
        while let Some(p) = rx.recv().await {
            let done = matches!(p, Progress::Indexed { done, total, .. } if done == total);
            if matches!(p, Progress::Started { .. }) || done || last.elapsed() >= REPORT_EVERY {
                last = Instant::now();
                job.report(IndexEvent::from(p));
            }
        }
        Ok(work.await?)
    }

    /// Starts the watcher and the buffer updater (writer only), replaying open buffers.
    fn start_updates(&self) {
        match Updates::start(self.index.clone(), true) {
            Ok(updates) => {
                for (rel, text) in lock(&self.buffers).iter() {
                    updates.buffer_changed(rel, text.clone());
                }
                *lock(&self.updates) = Some(updates);
            }
            Err(e) => tracing::warn!("index updates disabled: {e}"),
        }
    }

    /// Stops the watcher and the updater thread (blocking: joins the thread).
    pub fn stop(&self) {
        let updates = lock(&self.updates).take();
        drop(updates);
    }
}

/// How long a request that needs the whole vault (a search) waits for it to open and finish
/// its start-up sync, on every surface.
pub const VAULT_WAIT: Duration = Duration::from_secs(10);

/// Where a long-running surface (the language server, the MCP server) keeps its vault: not
/// configured, opening, open, or failed (with why, reported once).
pub struct VaultSlot {
    state: tokio::sync::watch::Sender<SlotState>,
}

impl Default for VaultSlot {
    fn default() -> VaultSlot {
        VaultSlot {
            state: tokio::sync::watch::channel(SlotState::None).0,
        }
    }
}

#[derive(Clone)]
enum SlotState {
    None,
    Opening(PathBuf),
    Ready(Arc<VaultSession>),
    Failed(Error),
}

impl VaultSlot {
    /// The open vault, or why there is none.
    pub fn get(&self) -> Result<Arc<VaultSession>, Error> {
        match &*self.state.borrow() {
            SlotState::Ready(s) => Ok(s.clone()),
            SlotState::Failed(e) => Err(e.clone()),
            SlotState::Opening(root) => Err(Error::new(
                "VAULT_OPENING",
                ErrorKind::Conflict,
                format!(
                    "the vault {} is still being opened; try again in a moment",
                    root.display()
                ),
            )),
            SlotState::None => Err(Error::new(
                "NO_VAULT",
                ErrorKind::NotConfigured,
                "no vault: open a folder of notes as the workspace, or set the `vault` option",
            )),
        }
    }

    /// The open vault, if there is one.
    pub fn ready(&self) -> Option<Arc<VaultSession>> {
        self.get().ok()
    }

    /// The vault once it is open and synced, waiting at most `timeout` for either; then
    /// whatever [`VaultSlot::get`] says.
    pub async fn wait(&self, timeout: Duration) -> Result<Arc<VaultSession>, Error> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut rx = self.state.subscribe();
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|s| !matches!(s, SlotState::Opening(_)))).await;
        let session = self.get()?;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        session.wait_synced(left).await;
        Ok(session)
    }

    fn set(&self, state: SlotState) {
        self.state.send_replace(state);
    }

    /// Says the vault at `root` is being opened (before the task that opens it runs).
    pub fn mark_opening(&self, root: &std::path::Path) {
        self.set(SlotState::Opening(root.to_path_buf()));
    }

    /// Opens the vault at `root` and keeps it current until `shutdown`; `on_open` runs once
    /// the index answers queries. Returns the error when opening fails (it stays in the slot:
    /// every later request answers with it).
    pub async fn serve(
        &self,
        root: PathBuf,
        dirs: Dirs,
        start_job: &(dyn Fn() -> Job + Send + Sync),
        on_open: &(dyn Fn(&Arc<VaultSession>) + Send + Sync),
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        self.set(SlotState::Opening(root.clone()));
        let opened = scholia_base::spawn_blocking(move || VaultSession::open(&root, &dirs)).await;
        let session = match opened {
            Ok(s) => Arc::new(s),
            Err(e) => {
                let e = Error::new(e.code, e.kind, format!("the vault could not be opened: {}", e.message));
                start_job().end(&format!("failed: {e}"));
                self.set(SlotState::Failed(e.clone()));
                return Err(e);
            }
        };
        // Before anyone can reach it (the MCP server confines it to its folders here).
        on_open(&session);
        self.set(SlotState::Ready(session.clone()));
        session.clone().maintain(start_job, shutdown).await;
        Ok(())
    }

    /// Stops the open session's watcher (blocking).
    pub fn stop(&self) {
        if let Some(s) = self.ready() {
            s.stop();
        }
    }
}
