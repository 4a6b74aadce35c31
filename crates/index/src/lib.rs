//! The vault's full-text index (tantivy), persisted in the cache directory.
//!
//! One process holds the tantivy writer lock and keeps the index current (start-up sync by
//! mtime+size, a file watcher, open editor buffers); any other process on the same vault opens
//! it read-only, follows the writer's commits, and takes the lock over when it is released.
//!
//! Depends on `base` and `vault` only: it knows notes, never models, pipelines or protocols.

mod background;
mod check;
mod edits;
#[cfg(test)]
mod fixture;
pub mod fresh;
mod graph;
mod meaning;
mod mentions;
mod merges;
mod moves;
mod named;
mod names;
mod notes;
mod problems;
mod put;
mod refs;
mod related;
mod relocate;
pub mod schema;
mod scope;
mod search;
mod session;
mod symbols;
mod sync;
mod tags;
mod templates;
pub mod tokenizer;
mod vectors;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::directory::error::LockError;
use tantivy::directory::{Directory, MmapDirectory};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyError, Term};

pub use background::Check;
pub use check::{Checked, Found, Severity};
pub use edits::{Backlink, Backlinks, Created, EditTarget, Edited, LinkLine, NoteOutline};
pub use graph::{LinkScope, link_key};
pub use meaning::{EmbedProgress, Embedded, SearchMode};
pub use mentions::Mention;
pub use moves::{MovePlan, RenamePlan};
pub use notes::{NoteContent, NoteList, PAGE_CHARS};
pub use problems::{LinkProblem, Problem};
pub use refs::{
    Anchor, IndexTexts, NoteEdits, NoteLinks, RenameError, Texts, Unread, heading_text_range, last_heading, raw_target,
    renamed_path, same_heading,
};
pub use related::{Evidence, FIGURES, Likeness, Related, Signals, Terms, Tie, Ties, WordsShare};
pub use relocate::{Moved, NotRewritten};
pub use schema::Outline;
pub use scope::Scope;
pub use search::{Hit, NoteInfo, NoteRef, SearchResults, Symbol, SymbolKind};
pub use session::{INDEXING, IndexEvent, VAULT_WAIT, VaultSession, VaultSlot};
pub use sync::{Progress, SyncSummary};
pub use tags::{TagCount, TagUses};
pub use vectors::{PREFILTER_AT, PREFILTER_SHARE, VectorSet};
pub use watch::Updates;

use schema::Fields;
use scholia_vault::Vault;
use scholia_vault::scan::{NoteFilter, Stamp};

/// Notes longer than this are indexed up to here (and counted as truncated).
pub const MAX_INDEX_BYTES: u64 = 2 * 1024 * 1024;
const MARKER: &str = "scholia-index.json";

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index directory `{0}` is inside the vault; set SCHOLIA_CACHE_DIR to a directory outside it")]
    InsideVault(String),
    #[error("index directory `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("index: {0}")]
    Tantivy(#[from] TantivyError),
    #[error("index is read-only: another scholia process on this vault holds the writer")]
    ReadOnly,
    #[error("query: empty; type some words, a \"quoted phrase\", or title:word")]
    EmptyQuery,
    #[error("query: {chars} characters is longer than {max}; give a few words")]
    QueryTooLong { chars: usize, max: usize },
    #[error("cancelled; what was indexed so far is kept")]
    Cancelled,
    #[error("the index cannot be read ({0}) and another scholia process is writing it; try again in a moment")]
    Busy(String),
}

impl scholia_base::Coded for IndexError {
    fn code(&self) -> &'static str {
        match self {
            IndexError::InsideVault(_) => "INVALID_CONFIG",
            IndexError::EmptyQuery | IndexError::QueryTooLong { .. } => "INVALID_QUERY",
            IndexError::ReadOnly => "INDEX_READ_ONLY",
            IndexError::Busy(_) => "INDEX_BUSY",
            IndexError::Io { .. } | IndexError::Tantivy(_) => "INDEX_FAILED",
            IndexError::Cancelled => "CANCELLED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        use scholia_base::ErrorKind;
        match self {
            IndexError::InsideVault(_) | IndexError::EmptyQuery | IndexError::QueryTooLong { .. } => {
                ErrorKind::InvalidInput
            }
            IndexError::ReadOnly | IndexError::Busy(_) => ErrorKind::Conflict,
            IndexError::Io { .. } | IndexError::Tantivy(_) => ErrorKind::Io,
            IndexError::Cancelled => ErrorKind::Cancelled,
        }
    }
}

/// Tuning for the writer: indexing threads and their shared memory budget.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    pub threads: usize,
    pub memory_bytes: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 2);
        WriterOptions {
            threads,
            memory_bytes: threads * 30_000_000,
        }
    }
}

/// A segment's deleted documents, ascending.
type DeletedDocs = Arc<Vec<tantivy::DocId>>;

pub struct VaultIndex {
    vault: Vault,
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    options: WriterOptions,
    writer: Mutex<Option<IndexWriter>>,
    filter: NoteFilter,
    /// Unsaved editor buffers: indexed instead of the file on disk while open.
    overlays: Mutex<HashMap<String, String>>,
    /// Bytes of note bodies the indexing threads have tokenized (see `tokenizer::BODY`).
    body_consumed: Arc<AtomicU64>,
    /// Each segment's paths by document, read once per segment (see `graph::PathTable`).
    paths: Mutex<HashMap<tantivy::index::SegmentId, Arc<graph::PathTable>>>,
    /// Deleted documents of each segment, at its number of deletes (see `live_doc_freq`).
    deleted: Mutex<HashMap<(tantivy::index::SegmentId, u32), DeletedDocs>>,
    /// The vault's hub floor and the segments and deletes it was read at (`related::hubs`).
    hub_floor: Mutex<Option<related::HubFloor>>,
    /// Each segment's note names, for symbol search (see `symbols`).
    name_tables: Mutex<symbols::NameTables>,
    /// This process has brought the whole vault into the index: its commits say so.
    complete: std::sync::atomic::AtomicBool,
    /// Merge segments after the start-up sync (see [`VaultIndex::keep_merged`]).
    keep_merged: std::sync::atomic::AtomicBool,
    /// The vault's files, for embeds of attachments (listed when needed, briefly kept).
    files: Mutex<Option<problems::Files>>,
    /// Bumped at every commit this process makes: what listeners (an editor's diagnostics)
    /// recompute on.
    changes: tokio::sync::watch::Sender<u64>,
    /// The folders this process may use (all by default).
    scope: scope::ScopeCell,
    /// The embedder and the notes' vectors, when meaning is configured.
    meaning: Mutex<meaning::Meaning>,
}

/// The payload of commits made once the writer's start-up sync is over: what a second process
/// waits for before it trusts the index to hold the whole vault.
const COMPLETE: &str = "scholia:complete";

impl VaultIndex {
    /// Opens (or creates, or rebuilds when corrupt or foreign) the index of `vault` in `dir`.
    pub fn open(vault: Vault, dir: &Path, options: WriterOptions) -> Result<VaultIndex, IndexError> {
        let io = |source| IndexError::Io {
            path: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let dir = dir.canonicalize().map_err(io)?;
        if dir.starts_with(vault.root()) {
            return Err(IndexError::InsideVault(dir.display().to_string()));
        }
        let (schema, fields) = schema::build();
        let (index, created) = open_or_rebuild(&dir, &schema, vault.root())?;
        let body_consumed = Arc::new(AtomicU64::new(0));
        tokenizer::register(index.tokenizers(), body_consumed.clone());
        let mut writer = try_writer(&index, options)?;
        // Creating the index held the writer lock a moment ago: a child process another thread
        // forked meanwhile holds a copy of that lock until it execs. Wait it out, briefly.
        for _ in 0..(if created { 50 } else { 0 }) {
            if writer.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            writer = try_writer(&index, options)?;
        }
        let policy = if writer.is_some() {
            ReloadPolicy::Manual
        } else {
            ReloadPolicy::OnCommitWithDelay
        };
        let reader = index.reader_builder().reload_policy(policy).try_into()?;
        Ok(VaultIndex {
            filter: NoteFilter::new(vault.root()),
            vault,
            dir,
            index,
            reader,
            fields,
            options,
            writer: Mutex::new(writer),
            overlays: Mutex::new(HashMap::new()),
            body_consumed,
            paths: Mutex::new(HashMap::new()),
            deleted: Mutex::new(HashMap::new()),
            hub_floor: Mutex::new(None),
            name_tables: Mutex::new(Default::default()),
            complete: std::sync::atomic::AtomicBool::new(false),
            keep_merged: std::sync::atomic::AtomicBool::new(false),
            files: Mutex::new(None),
            changes: tokio::sync::watch::channel(0).0,
            scope: Default::default(),
            meaning: Default::default(),
        })
    }

    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_writer(&self) -> bool {
        scholia_base::lock(&self.writer).is_some()
    }

    /// A read-only index tries to take the writer lock over; `true` once it holds it.
    pub fn try_acquire_writer(&self) -> Result<bool, IndexError> {
        let mut guard = scholia_base::lock(&self.writer);
        if guard.is_none() {
            *guard = try_writer(&self.index, self.options)?;
        }
        Ok(guard.is_some())
    }

    /// Lets another process take the writer (as this one's exit would).
    #[cfg(test)]
    pub(crate) fn release_writer(&self) {
        scholia_base::lock(&self.writer).take();
    }

    /// Makes the latest commit (another process's too) visible to searches now.
    pub fn reload(&self) -> Result<(), IndexError> {
        Ok(self.reader.reload()?)
    }

    /// Number of notes searchable now.
    pub fn num_notes(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn writer(&self) -> Result<MutexGuard<'_, Option<IndexWriter>>, IndexError> {
        let guard = scholia_base::lock(&self.writer);
        if guard.is_none() {
            return Err(IndexError::ReadOnly);
        }
        Ok(guard)
    }

    /// An I/O error reading this index, naming its directory.
    pub(crate) fn io(&self) -> impl Fn(std::io::Error) -> IndexError + Copy + '_ {
        |source| IndexError::Io {
            path: self.dir.display().to_string(),
            source,
        }
    }

    fn path_term(&self, rel: &str) -> Term {
        Term::from_field_text(self.fields.path, rel)
    }

    /// Makes committed changes visible to searches in this process.
    fn commit(&self, writer: &mut IndexWriter) -> Result<(), IndexError> {
        let mut prepared = writer.prepare_commit()?;
        if self.complete.load(Ordering::Relaxed) {
            prepared.set_payload(COMPLETE);
        }
        prepared.commit()?;
        self.reader.reload()?;
        self.changes.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Files this process just wrote: indexed now when it holds the writer (else the
    /// process that does sees them), so a search right after a write finds them.
    pub fn touched(&self, paths: &[&Path]) {
        if !self.is_writer() {
            return;
        }
        for p in paths {
            if let Err(e) = self.refresh(p) {
                tracing::warn!("{}: not re-indexed after the write: {e}", p.display());
            }
        }
        if let Err(e) = self.flush() {
            tracing::warn!("index commit after a write failed: {e}");
        }
    }

    /// Changes whenever this process commits to the index.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Marks the start-up sync over: this and later commits say the index holds the vault.
    fn mark_complete(&self, writer: &mut IndexWriter) -> Result<(), IndexError> {
        self.complete.store(true, Ordering::Relaxed);
        if self.keep_merged.load(Ordering::Relaxed) {
            writer.set_merge_policy(Box::new(merges::ServerMerges));
        }
        self.commit(writer)
    }

    /// The index holds the whole vault as its last commit says, though this process did not
    /// check: its own commits keep saying so (see `VaultSession::open_current`).
    pub(crate) fn trust_complete(&self) {
        self.complete.store(true, Ordering::Relaxed);
    }

    /// This process stays (an editor's or agent's server): once its start-up sync is over,
    /// segments are merged in the background. A short-lived process (the CLI) never merges: a
    /// merge it started would be abandoned at exit, and a bulk build is faster without them.
    pub fn keep_merged(&self) {
        self.keep_merged.store(true, Ordering::Relaxed);
    }

    /// Whether the process writing the index has finished its start-up sync (a reader asks
    /// before it answers from the index).
    pub fn writer_is_complete(&self) -> bool {
        self.index
            .load_metas()
            .is_ok_and(|m| m.payload.as_deref() == Some(COMPLETE))
    }

    /// Path → stamp of every indexed note, read from the fast fields.
    pub fn stamps(&self) -> Result<HashMap<String, Stamp>, IndexError> {
        let searcher = self.reader.searcher();
        let mut out = HashMap::with_capacity(searcher.num_docs() as usize);
        for seg in searcher.segment_readers() {
            let ff = seg.fast_fields();
            let paths = self.segment_paths(seg)?;
            let mtime = ff.u64("mtime")?;
            let size = ff.u64("size")?;
            let alive = seg.alive_bitset();
            for doc in 0..seg.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let Some(path) = paths.get(doc) else {
                    continue;
                };
                let stamp = Stamp {
                    mtime_ns: mtime.first(doc).unwrap_or(0),
                    size: size.first(doc).unwrap_or(0),
                };
                out.insert(path.to_string(), stamp);
            }
        }
        Ok(out)
    }
}

impl WriterOptions {
    /// What tantivy's writer is given (the vault bench's floor uses the same).
    pub fn tantivy(&self) -> tantivy::indexer::IndexWriterOptions {
        tantivy::indexer::IndexWriterOptions::builder()
            .num_worker_threads(self.threads)
            .memory_budget_per_thread(self.memory_bytes / self.threads)
            // Merges run beside indexing and queries on few cores: one at a time.
            .num_merge_threads(1)
            .build()
    }
}

fn try_writer(index: &Index, options: WriterOptions) -> Result<Option<IndexWriter>, IndexError> {
    match index.writer_with_options(options.tantivy()) {
        Ok(w) => {
            // Until the process says it stays (see `VaultIndex::keep_merged`).
            w.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
            Ok(Some(w))
        }
        Err(TantivyError::LockFailure(LockError::LockBusy, _)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Marker {
    format: u32,
    vault: String,
}

fn write_marker(dir: &Path, vault: &Path) -> std::io::Result<()> {
    let marker = Marker {
        format: schema::FORMAT,
        vault: vault.display().to_string(),
    };
    std::fs::write(
        dir.join(MARKER),
        serde_json::to_vec_pretty(&marker).expect("marker serialises"),
    )
}

/// `Err(None)`: nothing there yet. `Err(Some(reason))`: something there that must be rebuilt.
fn open_existing(dir: &Path, schema: &tantivy::schema::Schema) -> Result<Index, Option<String>> {
    let has_meta = dir.join("meta.json").exists();
    let marker: Option<Marker> = std::fs::read(dir.join(MARKER))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    match (has_meta, marker) {
        (false, None) => return Err(None),
        (false, Some(_)) => return Err(Some("index files are missing".into())),
        (true, None) => return Err(Some("not a scholia index (no marker)".into())),
        (true, Some(m)) if m.format != schema::FORMAT => {
            return Err(Some(format!("index format {} is not {}", m.format, schema::FORMAT)));
        }
        (true, Some(_)) => {}
    }
    let index = Index::open_in_dir(dir).map_err(|e| Some(format!("cannot open it: {e}")))?;
    if index.schema() != *schema {
        return Err(Some("schema differs".into()));
    }
    // Opening reads only meta.json; a reader opens every segment and finds damaged files.
    index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map(|_: IndexReader| ())
        .map_err(|e| Some(format!("cannot read it: {e}")))?;
    Ok(index)
}

/// How long a process that cannot read the index waits for the one writing it.
const BUSY_RETRIES: usize = 10;
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// Opens the index in `dir`, or rebuilds it when it is missing, corrupt or foreign — but only
/// while holding the writer lock: a process that fails to read an index another process is
/// committing to retries instead of deleting it.
/// The index in `dir`, and whether it was created (or rebuilt) now.
fn open_or_rebuild(dir: &Path, schema: &tantivy::schema::Schema, vault: &Path) -> Result<(Index, bool), IndexError> {
    let io = |source| IndexError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut last_reason = None;
    for attempt in 0..=BUSY_RETRIES {
        let reason = match open_existing(dir, schema) {
            Ok(index) => return Ok((index, false)),
            Err(reason) => reason,
        };
        let mmap = MmapDirectory::open(dir).map_err(|e| io(std::io::Error::other(e)))?;
        let lock = match mmap.acquire_lock(&tantivy::directory::INDEX_WRITER_LOCK) {
            Ok(lock) => lock,
            Err(LockError::LockBusy) => {
                tracing::info!(
                    attempt,
                    "the index is being written by another process; reading it again shortly"
                );
                last_reason = reason;
                std::thread::sleep(BUSY_WAIT);
                continue;
            }
            Err(LockError::IoError(e)) => return Err(io(std::io::Error::other(e.to_string()))),
        };
        if let Some(reason) = reason {
            tracing::warn!(dir = %dir.display(), "rebuilding the index: {reason}");
        }
        wipe(dir).map_err(io)?;
        let index = Index::create(mmap, schema.clone(), Default::default())?;
        write_marker(dir, vault).map_err(io)?;
        drop(lock);
        return Ok((index, true));
    }
    Err(IndexError::Busy(
        last_reason.unwrap_or_else(|| "it is being created".into()),
    ))
}

/// Removes the files of an index directory (never sub-directories: it is not ours to empty,
/// nor the lock files another process may hold).
fn wipe(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let is_lock = name.to_string_lossy().ends_with(".lock");
        if entry.file_type()?.is_file() && !is_lock {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
