//! A change's journal: what it records before it touches anything (every step, with the temp
//! file and backup each uses), how its leftovers are tidied, and how a change a killed process
//! left part-way is rolled back ([`recover`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(super) const JOURNAL_PREFIX: &str = ".scholia-journal-";

/// What the journal says of one step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "step", rename_all = "snake_case")]
pub(super) enum Entry {
    Rewrite {
        target: PathBuf,
        temp: PathBuf,
        backup: PathBuf,
    },
    Move {
        from: PathBuf,
        to: PathBuf,
        /// Folders the move creates (removed again when it is undone), outermost first.
        dirs: Vec<PathBuf>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) steps: Vec<Entry>,
    pub(super) committed: bool,
}

/// Removes the temp files and backups a change made (those still there); `moved`: its moves
/// were made, so a backup beside a note of a moved folder moved with it.
pub(super) fn tidy(steps: &[Entry], moved: bool) {
    let moves: Vec<(&Path, &Path)> = steps
        .iter()
        .filter_map(|e| match e {
            Entry::Move { from, to, .. } if moved => Some((from.as_path(), to.as_path())),
            _ => None,
        })
        .collect();
    let now = |p: &Path| -> PathBuf {
        for (from, to) in &moves {
            if let Ok(rest) = p.strip_prefix(from)
                && !rest.as_os_str().is_empty()
            {
                return to.join(rest);
            }
        }
        p.to_path_buf()
    };
    for entry in steps {
        if let Entry::Rewrite { temp, backup, .. } = entry {
            let _ = std::fs::remove_file(now(temp));
            let _ = std::fs::remove_file(now(backup));
        }
    }
}

pub(super) fn remove_empty(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Writes the journal atomically, locked from the moment it is visible (so [`recover`] never
/// takes a live change for a dead one); returns it, holding the lock.
pub(super) fn write_journal(path: &Path, journal: &Journal) -> std::io::Result<std::fs::File> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".scholia-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(&serde_json::to_vec(journal).map_err(std::io::Error::other)?)?;
    tmp.as_file().sync_all()?;
    // File systems without locks: the journal still records the change.
    let _ = tmp.as_file().try_lock();
    tmp.persist(path).map_err(|e| e.error)
}

/// What [`recover`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Changes rolled back (a process died part-way).
    pub rolled_back: usize,
    /// Changes that had been made, whose leftovers were removed.
    pub finished: usize,
}

/// Rolls back every change a dead process left part-way in `root` (journals no live process
/// holds), and tidies up after those it had finished. Blocking.
pub fn recover(root: &Path) -> Recovered {
    let mut out = Recovered::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with(JOURNAL_PREFIX) && name.ends_with(".json")) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = std::fs::File::open(&path) else { continue };
        // A live change holds its journal.
        if file.try_lock().is_err() {
            continue;
        }
        let journal: Option<Journal> = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok());
        let Some(journal) = journal else {
            tracing::warn!("{name}: an unreadable change journal; left as it is");
            continue;
        };
        if journal.committed {
            out.finished += 1;
        } else {
            roll_back(&journal.steps);
            out.rolled_back += 1;
            tracing::warn!("{name}: a change interrupted part-way was rolled back");
        }
        tidy(&journal.steps, journal.committed);
        let _ = std::fs::remove_file(&path);
    }
    out
}

/// Puts every file of an interrupted change back as it was, judging by what is on disk.
fn roll_back(steps: &[Entry]) {
    for entry in steps.iter().rev() {
        match entry {
            Entry::Move { from, to, dirs } => {
                if std::fs::symlink_metadata(from).is_err() && std::fs::symlink_metadata(to).is_ok() {
                    let _ = std::fs::rename(to, from);
                }
                remove_empty(dirs);
            }
            Entry::Rewrite { target, temp, backup } => {
                let applied = std::fs::symlink_metadata(temp).is_err();
                if applied && std::fs::symlink_metadata(backup).is_ok() {
                    let _ = std::fs::rename(backup, target);
                }
            }
        }
    }
}
