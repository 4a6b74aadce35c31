//! One writer per note at a time: a lock in the process (threads of one server) and an
//! advisory lock on the file across scholia processes (an editor's language server and an
//! agent's MCP server on one vault). A hash check and its write happen under it, so two edits
//! made against one hash cannot both succeed.
//!
//! The advisory lock is taken on the note file itself. Writers replace a note by renaming a
//! temp file over it, so a waiter that gets the lock may hold the old, replaced file: it checks
//! that the path still names the file it locked, and locks again if not. Programs other than
//! scholia take no such lock; writers re-check the text just before replacing it.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a writer waits for another to finish with a note before giving up.
pub const WAIT: Duration = Duration::from_secs(20);

static HELD: Mutex<HeldSet> = Mutex::new(HeldSet(None));
static RELEASED: Condvar = Condvar::new();

struct HeldSet(Option<HashSet<PathBuf>>);

impl HeldSet {
    fn set(&mut self) -> &mut HashSet<PathBuf> {
        self.0.get_or_insert_with(HashSet::new)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{0}: another writer kept the note busy for {secs} s; nothing was written", secs = WAIT.as_secs())]
    Busy(String),
    #[error("{path}: cannot lock it for writing: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl scholia_base::Coded for LockError {
    fn code(&self) -> &'static str {
        match self {
            LockError::Busy(_) => "NOTE_BUSY",
            LockError::Io { .. } => "WRITE_FAILED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            LockError::Busy(_) => scholia_base::ErrorKind::Conflict,
            LockError::Io { .. } => scholia_base::ErrorKind::Io,
        }
    }
}

/// A note held for writing; released when dropped.
#[derive(Debug)]
pub struct NoteLock {
    path: PathBuf,
    /// The advisory lock (none for a file that does not exist yet, or a file system
    /// without locks).
    _file: Option<File>,
}

impl Drop for NoteLock {
    fn drop(&mut self) {
        let mut held = scholia_base::lock(&HELD);
        held.set().remove(&self.path);
        RELEASED.notify_all();
    }
}

/// Locks the note at `path` (its real path: symlinks followed by the caller) for writing,
/// waiting up to [`WAIT`]; `shown` names it in errors. Blocking.
pub fn lock(path: &Path, shown: &str) -> Result<NoteLock, LockError> {
    lock_until(path, shown, Instant::now() + WAIT)
}

/// Locks every path (sorted first, so two writers of overlapping sets cannot deadlock).
pub fn lock_all(paths: &[(PathBuf, String)]) -> Result<Vec<NoteLock>, LockError> {
    let mut sorted: Vec<&(PathBuf, String)> = paths.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted.dedup_by(|a, b| a.0 == b.0);
    let until = Instant::now() + WAIT;
    sorted
        .into_iter()
        .map(|(p, shown)| lock_until(p, shown, until))
        .collect()
}

fn lock_until(path: &Path, shown: &str, until: Instant) -> Result<NoteLock, LockError> {
    {
        let mut held = scholia_base::lock(&HELD);
        while held.set().contains(path) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LockError::Busy(shown.to_string()));
            }
            held = RELEASED.wait_timeout(held, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        held.set().insert(path.to_path_buf());
    }
    // From here the process lock is ours: dropping `guard` on an error releases it.
    let mut guard = NoteLock {
        path: path.to_path_buf(),
        _file: None,
    };
    guard._file = file_lock(path, shown, until)?;
    Ok(guard)
}

/// The advisory lock on the file now at `path`, or `None` when there is no file or the file
/// system has no locks.
fn file_lock(path: &Path, shown: &str, until: Instant) -> Result<Option<File>, LockError> {
    let io = |source| LockError::Io {
        path: shown.to_string(),
        source,
    };
    loop {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if Instant::now() >= until {
                        return Err(LockError::Busy(shown.to_string()));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                // NFS without lockd, some FUSE mounts: the process lock still holds.
                Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                    return Ok(None);
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        // The note may have been replaced while this waited: then the lock is on a file no
        // longer at `path`; lock the one that is.
        if same_inode(&file, path) {
            return Ok(Some(file));
        }
    }
}

#[cfg(unix)]
fn same_inode(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        // The note is gone: nothing to replace under it; the caller's read will say so.
        (Ok(_), Err(_)) => true,
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_inode(_: &File, _: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn one_holder_at_a_time_in_a_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "x").unwrap();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (path, inside, most) = (path.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _l = lock(&path, "n.md").unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_replaced_file_is_locked_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "old").unwrap();
        // Another process's lock, simulated by a lock on the old file from here.
        let old = File::open(&path).unwrap();
        old.lock().unwrap();
        let p = path.clone();
        let waiter = std::thread::spawn(move || {
            let l = lock(&p, "n.md").unwrap();
            std::fs::read_to_string(&p).unwrap_or_default();
            drop(l);
        });
        std::thread::sleep(Duration::from_millis(30));
        // The holder replaces the note, then lets go of the old file.
        let tmp = dir.path().join("t");
        std::fs::write(&tmp, "new").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        drop(old);
        waiter.join().unwrap();
    }

    #[test]
    fn a_missing_file_locks_in_the_process_only() {
        let dir = tempfile::tempdir().unwrap();
        let l = lock(&dir.path().join("new.md"), "new.md").unwrap();
        assert!(l._file.is_none());
    }
}
