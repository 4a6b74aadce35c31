//! Keeping a writer index current after start-up: file-system events and unsaved editor
//! buffers are collected for a short quiet period, applied together and committed once, so a
//! saved note is searchable within a second without a commit per keystroke.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::{IndexError, VaultIndex};
use scholia_vault::paths::has_note_extension;
use scholia_vault::scan::NoteFilter;

/// Changes are applied after this long without a new one…
const QUIET: Duration = Duration::from_millis(150);
/// …or this long after the first, whichever comes first.
const MAX_DELAY: Duration = Duration::from_millis(500);

enum Msg {
    Paths(Vec<PathBuf>),
    Buffer {
        rel: String,
        text: String,
    },
    Closed {
        rel: String,
    },
    Flush(mpsc::Sender<()>),
    /// Apply what is pending now, without waiting for quiet (a buffer was saved).
    Now,
    Stop,
}

/// The background updater of a writer index. Dropping it stops the watcher and the thread.
pub struct Updates {
    tx: mpsc::Sender<Msg>,
    _watcher: Option<RecommendedWatcher>,
    thread: Option<JoinHandle<()>>,
}

impl Updates {
    /// Starts the updater; with `watch_files`, also a recursive watcher on the vault.
    pub fn start(index: Arc<VaultIndex>, watch_files: bool) -> Result<Updates, IndexError> {
        let (tx, rx) = mpsc::channel();
        let watcher = if watch_files {
            let events = tx.clone();
            let mut w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(ev) if !matches!(ev.kind, EventKind::Access(_)) => {
                    let _ = events.send(Msg::Paths(ev.paths));
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("file watcher: {e}"),
            })
            .map_err(watch_error)?;
            match w.watch(index.vault().root(), RecursiveMode::Recursive) {
                Ok(()) => Some(w),
                Err(e) => {
                    // Too many directories for inotify, say: searching still works, it just
                    // will not see changes made outside the editor until the next start.
                    tracing::warn!("not watching the vault for changes: {e}");
                    None
                }
            }
        } else {
            None
        };
        let thread = std::thread::Builder::new()
            .name("scholia-index-updates".into())
            .spawn(move || run(index, rx))
            .map_err(|e| IndexError::Io {
                path: "updater thread".into(),
                source: e,
            })?;
        Ok(Updates {
            tx,
            _watcher: watcher,
            thread: Some(thread),
        })
    }

    /// The unsaved text of an open buffer changed.
    pub fn buffer_changed(&self, rel: &str, text: String) {
        let _ = self.tx.send(Msg::Buffer {
            rel: rel.to_string(),
            text,
        });
    }

    /// A buffer was closed: the file on disk is the truth again.
    pub fn buffer_closed(&self, rel: &str) {
        let _ = self.tx.send(Msg::Closed { rel: rel.to_string() });
    }

    /// Paths changed that the watcher may not see (or before it starts).
    pub fn paths_changed(&self, paths: Vec<PathBuf>) {
        let _ = self.tx.send(Msg::Paths(paths));
    }

    /// A buffer was saved: what is pending is applied now, not after the quiet period (the
    /// owner stopped typing; a save is searchable at once).
    pub fn saved(&self) {
        let _ = self.tx.send(Msg::Now);
    }

    /// Applies everything pending now and waits until it is searchable.
    pub fn flush(&self) {
        let (ack, done) = mpsc::channel();
        if self.tx.send(Msg::Flush(ack)).is_ok() {
            let _ = done.recv_timeout(Duration::from_secs(30));
        }
    }
}

impl Drop for Updates {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch_error(e: notify::Error) -> IndexError {
    IndexError::Io {
        path: "file watcher".into(),
        source: std::io::Error::other(e),
    }
}

fn run(index: Arc<VaultIndex>, rx: mpsc::Receiver<Msg>) {
    loop {
        let Ok(first) = rx.recv() else { return };
        let started = Instant::now();
        let mut batch = vec![first];
        let mut stop = false;
        while !matches!(batch.last(), Some(Msg::Flush(_) | Msg::Now | Msg::Stop)) {
            let left = MAX_DELAY.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(QUIET.min(left)) {
                Ok(m) => batch.push(m),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    stop = true;
                    break;
                }
            }
        }
        stop |= batch.iter().any(|m| matches!(m, Msg::Stop));
        if let Err(e) = apply(&index, batch) {
            tracing::warn!("index update failed: {e}");
        }
        if stop {
            return;
        }
    }
}

fn apply(index: &VaultIndex, batch: Vec<Msg>) -> Result<(), IndexError> {
    let mut paths = HashSet::new();
    let mut buffers = HashMap::new();
    let mut closed = HashSet::new();
    let mut acks = Vec::new();
    for m in batch {
        match m {
            Msg::Paths(p) => paths.extend(p),
            Msg::Buffer { rel, text } => {
                closed.remove(&rel);
                buffers.insert(rel, text);
            }
            Msg::Closed { rel } => {
                buffers.remove(&rel);
                closed.insert(rel);
            }
            Msg::Flush(ack) => acks.push(ack),
            Msg::Now | Msg::Stop => {}
        }
    }
    let mut resync = false;
    for path in paths {
        if index.filter.in_skipped_dir(&path) {
            continue;
        }
        if NoteFilter::is_ignore_file(&path) {
            index.filter.forget();
            resync = true;
        } else if has_note_extension(&path) {
            index.refresh(&path)?;
        } else if path.is_dir() {
            // A folder appeared (or was moved in): its notes are found by a walk.
            resync = true;
        } else if !path.exists() && path.extension().is_none() {
            // Probably a folder that went away.
            if let Some(rel) = index.vault().rel(&path) {
                index.remove_prefix(&rel)?;
            }
        }
    }
    for (rel, text) in buffers {
        index.set_overlay(&rel, text)?;
    }
    for rel in closed {
        index.clear_overlay(&rel)?;
    }
    if resync {
        index.sync(&mut |_| {})?;
    }
    index.flush()?;
    for ack in acks {
        let _ = ack.send(());
    }
    Ok(())
}
