//! A change of several files — a note moved with the notes linking to it rewritten, a folder
//! moved — made all or nothing.
//!
//! The caller plans it: every file read whole, its text kept as the plan's `old`. Applying then
//! runs in three steps:
//!
//! 1. **Journal**: a file in the vault root (`.scholia-journal-*.json`, locked while the change
//!    runs) names every step and the temp and backup file each will use, before any of them
//!    exists.
//! 2. **Prepare**, nothing visible changed: each note is locked ([`crate::lock`]) and read
//!    again (a note changed since the plan is a conflict), its new text written to a temp file
//!    beside it and its current file kept as a backup (a hard link, else a copy). A full disk
//!    or an unwritable folder fails here.
//! 3. **Apply**: each temp file renamed over its note, then each move made (never over an
//!    existing file). A failure part-way puts back every file already changed, from the
//!    backups, and the error says so; only then is the journal marked committed and the backups
//!    removed.
//!
//! A process killed mid-change leaves its journal unlocked: [`recover`] (run when a vault is
//! opened for writing) rolls such a change back, or finishes cleaning up a committed one.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::read::{ReadError, read_text};

mod journal;

use journal::{Entry, JOURNAL_PREFIX, Journal, remove_empty, tidy, write_journal};
pub use journal::{Recovered, recover};

/// The largest note a change rewrites (bytes): links are rewritten in whole notes only.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// One note's text replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The vault path, for messages.
    pub shown: String,
    pub path: PathBuf,
    /// The text the plan read (a change to it since is a conflict).
    pub old: String,
    pub new: String,
}

/// A file or folder renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub shown_from: String,
    pub shown_to: String,
    pub from: PathBuf,
    pub to: PathBuf,
}

/// What a change does: its rewrites (made first, where the files are now), then its moves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub rewrites: Vec<Rewrite>,
    pub moves: Vec<Move>,
}

/// A step about to touch the disk: what a [`Faults`] may fail, in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    Journal,
    Temp(&'a str),
    Backup(&'a str),
    Replace(&'a str),
    Move(&'a str),
}

/// Failures injected before each step (tests); production uses [`NoFaults`].
pub trait Faults {
    fn before(&self, op: Op<'_>) -> std::io::Result<()>;
}

pub struct NoFaults;

impl Faults for NoFaults {
    fn before(&self, _: Op<'_>) -> std::io::Result<()> {
        Ok(())
    }
}

/// Fails the `at`-th step (from 0) once, as a full disk would, or — `die` — panics there, as a
/// killed process would stop: what the model tests of every layer inject.
pub struct FailAt {
    at: usize,
    seen: std::cell::Cell<usize>,
    die: bool,
}

impl FailAt {
    pub fn new(at: Option<usize>, die: bool) -> FailAt {
        FailAt {
            at: at.unwrap_or(usize::MAX),
            seen: std::cell::Cell::new(0),
            die,
        }
    }
}

impl Faults for FailAt {
    fn before(&self, _: Op<'_>) -> std::io::Result<()> {
        let n = self.seen.get();
        self.seen.set(n + 1);
        if n == self.at {
            if self.die {
                panic!("the process dies here");
            }
            return Err(std::io::Error::from_raw_os_error(28));
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error("`{0}` changed since it was read; nothing was changed: try again")]
    Conflict(String),
    #[error("`{0}` is read-only; nothing was changed")]
    ReadOnly(String),
    #[error("`{shown}` cannot be rewritten ({reason}); nothing was changed")]
    Unreadable { shown: String, reason: String },
    #[error("`{0}` already exists; nothing was changed")]
    Exists(String),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error("{shown}: {message}; {}", restored_text(.left))]
    Io {
        shown: String,
        message: String,
        /// What could not be put back (empty: nothing was changed).
        left: Vec<String>,
    },
}

fn restored_text(left: &[String]) -> String {
    match left.is_empty() {
        true => "nothing was changed".into(),
        false => format!(
            "these could not be put back and hold the new text or place: {}",
            left.join(", ")
        ),
    }
}

impl scholia_base::Coded for ChangeError {
    fn code(&self) -> &'static str {
        match self {
            ChangeError::Conflict(_) | ChangeError::Exists(_) => "CONFLICT",
            ChangeError::ReadOnly(_) => "READ_ONLY_NOTE",
            ChangeError::Unreadable { .. } => "NOT_A_NOTE",
            ChangeError::Lock(e) => e.code(),
            ChangeError::Io { .. } => "WRITE_FAILED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        use scholia_base::ErrorKind;
        match self {
            ChangeError::Conflict(_) | ChangeError::Exists(_) => ErrorKind::Conflict,
            ChangeError::ReadOnly(_) | ChangeError::Io { .. } => ErrorKind::Io,
            ChangeError::Unreadable { .. } => ErrorKind::InvalidInput,
            ChangeError::Lock(e) => e.kind(),
        }
    }
}

fn io_message(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(28) => "the disk is full".into(),
        _ => e.to_string(),
    }
}

/// The real path of a rewrite's note (written through symlinks), inside `root`.
fn real_target(root: &Path, r: &Rewrite) -> Result<PathBuf, ChangeError> {
    let real = r.path.canonicalize().map_err(|e| ChangeError::Io {
        shown: r.shown.clone(),
        message: io_message(&e),
        left: Vec::new(),
    })?;
    if !real.starts_with(root) {
        return Err(ChangeError::Unreadable {
            shown: r.shown.clone(),
            reason: "it is a link to a file outside the vault".into(),
        });
    }
    Ok(real)
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.rewrites.is_empty() && self.moves.is_empty()
    }

    /// Applies the change under `root` (the vault, canonical) all or nothing. Blocking.
    pub fn apply(&self, root: &Path) -> Result<(), ChangeError> {
        self.apply_with(root, &NoFaults)
    }

    /// [`Change::apply`] with failures injected before steps (tests).
    pub fn apply_with(&self, root: &Path, faults: &dyn Faults) -> Result<(), ChangeError> {
        if self.is_empty() {
            return Ok(());
        }
        let reals: Vec<PathBuf> = self
            .rewrites
            .iter()
            .map(|r| real_target(root, r))
            .collect::<Result<_, _>>()?;
        for (r, real) in self.rewrites.iter().zip(&reals) {
            if std::fs::metadata(real).is_ok_and(|m| m.permissions().readonly()) {
                return Err(ChangeError::ReadOnly(r.shown.clone()));
            }
        }
        for m in &self.moves {
            if std::fs::symlink_metadata(&m.to).is_ok() && !crate::naming::same_file(&m.from, &m.to) {
                return Err(ChangeError::Exists(m.shown_to.clone()));
            }
        }
        let locks: Vec<(PathBuf, String)> = reals
            .iter()
            .zip(&self.rewrites)
            .map(|(p, r)| (p.clone(), r.shown.clone()))
            .collect();
        let _locks = crate::lock::lock_all(&locks)?;

        let id = unique_id();
        let journal_path = root.join(format!("{JOURNAL_PREFIX}{id}.json"));
        let mut steps = Vec::new();
        for (i, real) in reals.iter().enumerate() {
            let dir = real.parent().unwrap_or(root);
            steps.push(Entry::Rewrite {
                target: real.clone(),
                temp: dir.join(format!(".scholia-{id}-{i}.tmp")),
                backup: dir.join(format!(".scholia-{id}-{i}.bak")),
            });
        }
        for m in &self.moves {
            steps.push(Entry::Move {
                from: m.from.clone(),
                to: m.to.clone(),
                dirs: missing_dirs(root, &m.to),
            });
        }
        let mut journal = Journal {
            steps,
            committed: false,
        };
        let fail = |shown: &str, e: std::io::Error| ChangeError::Io {
            shown: shown.to_string(),
            message: io_message(&e),
            left: Vec::new(),
        };
        faults.before(Op::Journal).map_err(|e| fail(".scholia journal", e))?;
        let mut _held = write_journal(&journal_path, &journal).map_err(|e| fail(".scholia journal", e))?;

        let outcome = self.prepare(&journal, faults).and_then(|()| self.run(&journal, faults));
        match outcome {
            Ok(()) => {
                journal.committed = true;
                // The change is made; what follows only tidies up (a crash here is finished by
                // `recover`).
                match write_journal(&journal_path, &journal) {
                    Ok(f) => _held = f,
                    Err(e) => tracing::warn!("could not mark the change's journal committed: {e}"),
                }
                tidy(&journal.steps, true);
                let _ = std::fs::remove_file(&journal_path);
                sync_dirs(&journal.steps);
                Ok(())
            }
            Err(e) => {
                if matches!(&e, ChangeError::Io { left, .. } if !left.is_empty()) {
                    // Keep the journal and the backups: `recover` tries again.
                    return Err(e);
                }
                tidy(&journal.steps, false);
                let _ = std::fs::remove_file(&journal_path);
                Err(e)
            }
        }
    }

    /// Step 2: every note locked and read again, its temp file and backup made.
    fn prepare(&self, journal: &Journal, faults: &dyn Faults) -> Result<(), ChangeError> {
        for (r, entry) in self.rewrites.iter().zip(&journal.steps) {
            let Entry::Rewrite { target, temp, backup } = entry else {
                unreachable!("rewrites come first")
            };
            let now = read_text(target, MAX_BYTES, false).map_err(|e| unreadable(&r.shown, e))?;
            if now.text != r.old {
                return Err(ChangeError::Conflict(r.shown.clone()));
            }
            let fail = |e: std::io::Error| ChangeError::Io {
                shown: r.shown.clone(),
                message: io_message(&e),
                left: Vec::new(),
            };
            faults.before(Op::Temp(&r.shown)).map_err(fail)?;
            let mut bytes = Vec::with_capacity(r.new.len() + 3);
            if now.bom {
                bytes.extend_from_slice("\u{feff}".as_bytes());
            }
            bytes.extend_from_slice(r.new.as_bytes());
            write_new(temp, &bytes).map_err(fail)?;
            if let Ok(meta) = std::fs::metadata(target) {
                let _ = std::fs::set_permissions(temp, meta.permissions());
            }
            faults.before(Op::Backup(&r.shown)).map_err(fail)?;
            if std::fs::hard_link(target, backup).is_err() {
                let original = std::fs::read(target).map_err(fail)?;
                write_new(backup, &original).map_err(fail)?;
            }
        }
        Ok(())
    }

    /// Step 3: the replaces and moves, undone from the backups when one fails.
    fn run(&self, journal: &Journal, faults: &dyn Faults) -> Result<(), ChangeError> {
        let mut done: Vec<&Entry> = Vec::new();
        let shown = self
            .rewrites
            .iter()
            .map(|r| r.shown.as_str())
            .chain(self.moves.iter().map(|m| m.shown_from.as_str()));
        for (entry, shown) in journal.steps.iter().zip(shown) {
            let result = match entry {
                Entry::Rewrite { target, temp, .. } => faults
                    .before(Op::Replace(shown))
                    .and_then(|()| std::fs::rename(temp, target)),
                Entry::Move { from, to, dirs } => faults.before(Op::Move(shown)).and_then(|()| {
                    for d in dirs {
                        std::fs::create_dir(d).or_else(|e| match e.kind() {
                            std::io::ErrorKind::AlreadyExists => Ok(()),
                            _ => Err(e),
                        })?;
                    }
                    rename_new(from, to)
                }),
            };
            match result {
                Ok(()) => done.push(entry),
                Err(e) => {
                    if let Entry::Move { dirs, .. } = entry {
                        remove_empty(dirs);
                    }
                    let left = undo(&done);
                    let message = match e.kind() {
                        std::io::ErrorKind::AlreadyExists => format!("{} already exists", describe_to(entry)),
                        _ => io_message(&e),
                    };
                    return Err(ChangeError::Io {
                        shown: shown.to_string(),
                        message,
                        left,
                    });
                }
            }
        }
        Ok(())
    }
}

fn describe_to(entry: &Entry) -> String {
    match entry {
        Entry::Move { to, .. } => to
            .file_name()
            .map(|n| format!("`{}`", n.to_string_lossy()))
            .unwrap_or_default(),
        Entry::Rewrite { .. } => "the file".into(),
    }
}

fn unreadable(shown: &str, e: ReadError) -> ChangeError {
    match e {
        ReadError::Io { source, .. } => ChangeError::Io {
            shown: shown.to_string(),
            message: io_message(&source),
            left: Vec::new(),
        },
        ReadError::TooLarge { size, .. } => ChangeError::Unreadable {
            shown: shown.to_string(),
            reason: format!("{size} bytes is more than the {MAX_BYTES} bytes a rewrite reads"),
        },
        other => ChangeError::Unreadable {
            shown: shown.to_string(),
            reason: other.reason().to_string(),
        },
    }
}

/// Puts back what `done` changed, last first; returns what could not be.
fn undo(done: &[&Entry]) -> Vec<String> {
    let mut left = Vec::new();
    for entry in done.iter().rev() {
        match entry {
            Entry::Rewrite { target, backup, .. } => {
                if let Err(e) = std::fs::rename(backup, target) {
                    tracing::error!("could not put back {}: {e}", target.display());
                    left.push(target.display().to_string());
                }
            }
            Entry::Move { from, to, dirs } => {
                if let Err(e) = std::fs::rename(to, from) {
                    tracing::error!("could not move {} back: {e}", to.display());
                    left.push(to.display().to_string());
                }
                remove_empty(dirs);
            }
        }
    }
    left
}

fn sync_dirs(steps: &[Entry]) {
    let mut dirs: Vec<&Path> = steps
        .iter()
        .flat_map(|e| match e {
            Entry::Rewrite { target, .. } => vec![target.parent()],
            Entry::Move { from, to, .. } => vec![from.parent(), to.parent()],
        })
        .flatten()
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        if let Err(e) = std::fs::File::open(d).and_then(|f| f.sync_all()) {
            tracing::debug!("could not sync {}: {e}", d.display());
        }
    }
}

/// Folders between `root` and `to`'s folder that do not exist yet, outermost first.
fn missing_dirs(root: &Path, to: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = to.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || d.exists() {
            break;
        }
        out.push(d.to_path_buf());
        dir = d.parent();
    }
    out.reverse();
    out
}

/// Renames `from` to `to`, never over an existing file (a case-only rename of one file on a
/// case-insensitive disk aside).
pub fn rename_new(from: &Path, to: &Path) -> std::io::Result<()> {
    if crate::naming::same_file(from, to) {
        return std::fs::rename(from, to);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let (f, t) = (c(from)?, c(to)?);
        // SAFETY: two NUL-terminated paths, resolved from the current directory.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                f.as_ptr(),
                libc::AT_FDCWD,
                t.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        // File systems without RENAME_NOREPLACE: the way below.
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
            return Err(e);
        }
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the destination exists",
        ));
    }
    if from.is_dir() {
        return std::fs::rename(from, to);
    }
    // A hard link is made only where nothing is: no clobbering, even in a race.
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) => std::fs::rename(from, to),
    }
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

fn unique_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}-{:x}-{}",
        std::process::id(),
        nanos,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests;
