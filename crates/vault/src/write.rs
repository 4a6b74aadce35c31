//! Atomic note updates that never drop a concurrent edit.
//!
//! The edit is a function of the note's current text. Under the note's lock ([`crate::lock`]:
//! scholia's own writers, in this process and others, one at a time) it is applied to what is
//! on disk, the result goes to a temp file beside the note, and just before the rename the note
//! is read again: if a program outside scholia saved in between, the edit is re-applied to
//! their text (an edit that checks a hash then fails with CONFLICT). The window left is the
//! rename itself, microseconds instead of the length of a research run. A symlinked note is
//! written through: the file it points at is replaced, the link stays.

use std::io::Write;
use std::path::Path;

use super::read::{ReadError, read_note_full};
use super::section::SectionError;

const MAX_ATTEMPTS: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Edit(#[from] SectionError),
    #[error("{path}: could not write: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: the note kept changing while scholia tried to write it; nothing was written")]
    Contended(String),
    #[error("{0}: the note is read-only; nothing was written")]
    ReadOnly(String),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}

impl scholia_base::Coded for WriteError {
    fn code(&self) -> &'static str {
        match self {
            WriteError::Read(e) => e.code(),
            WriteError::Edit(e) => e.code(),
            WriteError::Io { .. } => "WRITE_FAILED",
            WriteError::ReadOnly(_) => "READ_ONLY_NOTE",
            WriteError::Contended(_) => "NOTE_CHANGING",
            WriteError::Lock(e) => e.code(),
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        use scholia_base::ErrorKind;
        match self {
            WriteError::Read(e) => e.kind(),
            WriteError::Edit(e) => e.kind(),
            WriteError::Io { .. } | WriteError::ReadOnly(_) => ErrorKind::Io,
            WriteError::Contended(_) => ErrorKind::Conflict,
            WriteError::Lock(e) => e.kind(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The note now holds the returned text.
    Written { text: String, retries: usize },
    /// The edit produced the same text; the file was not touched.
    Unchanged,
}

/// Applies `edit` to the current text of `path` and replaces the file atomically.
pub fn update_note<F>(path: &Path, edit: F) -> Result<WriteOutcome, WriteError>
where
    F: FnMut(&str) -> Result<String, SectionError>,
{
    update_note_as(path, &path.display().to_string(), edit)
}

/// [`update_note`], naming the note `shown` (its vault path) in every error.
pub fn update_note_as<F>(path: &Path, shown: &str, mut edit: F) -> Result<WriteOutcome, WriteError>
where
    F: FnMut(&str) -> Result<String, SectionError>,
{
    let named = |e: ReadError| WriteError::Read(e.named(shown));
    // Through a symlink to the file it names: the link is never replaced by a copy.
    let real = path.canonicalize().map_err(|e| named(ReadError::io(path, e)))?;
    let io = |source| WriteError::Io {
        path: shown.to_string(),
        source,
    };
    let dir = real.parent().unwrap_or(Path::new("."));
    if std::fs::metadata(&real).is_ok_and(|m| m.permissions().readonly()) {
        return Err(WriteError::ReadOnly(shown.to_string()));
    }
    let _lock = crate::lock::lock(&real, shown)?;
    for attempt in 0..MAX_ATTEMPTS {
        let current = read_note_full(&real).map_err(named)?;
        let new_text = edit(&current.text).map_err(WriteError::Edit)?;
        if new_text == current.text {
            return Ok(WriteOutcome::Unchanged);
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".scholia-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(io)?;
        if current.bom {
            tmp.write_all("\u{feff}".as_bytes()).map_err(io)?;
        }
        tmp.write_all(new_text.as_bytes()).map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;
        if let Ok(meta) = std::fs::metadata(&real) {
            let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
        }
        // A program outside scholia may have saved meanwhile: re-checked just before the
        // replace; the edit is made again on its text.
        let now = read_note_full(&real).map_err(named)?;
        if now.text != current.text || now.bom != current.bom {
            tracing::debug!(path = %shown, attempt, "note changed during write; re-applying the edit");
            continue;
        }
        tmp.persist(&real).map_err(|e| io(e.error))?;
        // The rename is durable once the directory is.
        if let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all()) {
            tracing::warn!("{shown}: could not sync the directory after writing: {e}");
        }
        return Ok(WriteOutcome::Written {
            text: new_text,
            retries: attempt,
        });
    }
    Err(WriteError::Contended(shown.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> SectionError {
        SectionError::Duplicate {
            marker: "##".into(),
            name: "Research".into(),
            count: 2,
            lines: "1, 2".into(),
        }
    }

    #[test]
    fn concurrent_edit_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "first\n").unwrap();
        let mut calls = 0;
        let out = update_note(&path, |text| {
            calls += 1;
            if calls == 1 {
                // Someone saves while the edit is being computed.
                std::fs::write(&path, "first\nuser typed this\n").unwrap();
            }
            Ok::<_, SectionError>(format!("{text}appended\n"))
        })
        .unwrap();
        assert_eq!(
            out,
            WriteOutcome::Written {
                text: "first\nuser typed this\nappended\n".into(),
                retries: 1
            }
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first\nuser typed this\nappended\n"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temp files left behind");
    }

    #[test]
    fn failed_edit_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "keep").unwrap();
        let err = update_note(&path, |_| Err(refused())).unwrap_err();
        assert!(matches!(err, WriteError::Edit(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep");
        assert_eq!(
            update_note(&path, |t| Ok::<_, SectionError>(t.to_string())).unwrap(),
            WriteOutcome::Unchanged
        );
    }

    #[test]
    fn byte_order_mark_survives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "\u{feff}x").unwrap();
        update_note(&path, |t| Ok::<_, SectionError>(format!("{t}y"))).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), "\u{feff}xy".as_bytes());
    }

    #[test]
    fn read_only_notes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "keep").unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&path, perms).unwrap();
        let err = update_note(&path, |t| Ok(format!("{t} changed"))).unwrap_err();
        assert!(matches!(err, WriteError::ReadOnly(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep");
    }

    #[cfg(unix)]
    #[test]
    fn permissions_survive() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        std::fs::write(&path, "x").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        update_note(&path, |t| Ok::<_, SectionError>(format!("{t}y"))).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
    }
}
