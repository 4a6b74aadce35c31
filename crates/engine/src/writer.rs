//! The note-writer port: how a result reaches a note. Two implementations: [`DiskWriter`]
//! (atomic replace, off the async runtime, concurrent edits re-applied) and the language
//! server's editor writer (a versioned `workspace/applyEdit` against the open buffer, the disk
//! for closed notes). Every pipeline that writes goes through one [`SectionEdit`].

use std::future::Future;
use std::pin::Pin;

use scholia_base::{Coded, ErrorKind};
use scholia_vault::read::ReadError;
use scholia_vault::section::SectionError;
use scholia_vault::write::{self as disk, WriteOutcome};
use scholia_vault::{NotePath, SectionEdit};

/// Why a note was not written: by the disk writer, or by the editor.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Disk(#[from] disk::WriteError),
    #[error("the editor rejected the edit twice (the buffer kept changing); nothing was written")]
    EditorRejected,
    #[error("the editor did not answer workspace/applyEdit; nothing was written")]
    EditorTimeout,
    #[error("the editor refused the edit: {0}; nothing was written")]
    EditorRefused(String),
}

impl Coded for WriteError {
    fn code(&self) -> &'static str {
        match self {
            WriteError::Disk(e) => e.code(),
            WriteError::EditorRejected => "NOTE_CHANGING",
            WriteError::EditorTimeout | WriteError::EditorRefused(_) => "EDITOR_REFUSED",
        }
    }

    fn kind(&self) -> ErrorKind {
        match self {
            WriteError::Disk(e) => e.kind(),
            _ => ErrorKind::Conflict,
        }
    }
}

impl From<ReadError> for WriteError {
    fn from(e: ReadError) -> WriteError {
        WriteError::Disk(e.into())
    }
}

impl From<SectionError> for WriteError {
    fn from(e: SectionError) -> WriteError {
        WriteError::Disk(e.into())
    }
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Reads and writes notes for the pipelines.
pub trait NoteWriter: Send + Sync {
    /// The note's current text: the editor's buffer when it is open there, else the file.
    fn read<'a>(&'a self, note: &'a NotePath) -> BoxFuture<'a, Result<String, WriteError>>;

    /// Applies `edit` to the note's current text and stores the result; `Ok(false)` when the
    /// text did not change.
    fn write<'a>(&'a self, note: &'a NotePath, edit: &'a SectionEdit) -> BoxFuture<'a, Result<bool, WriteError>>;
}

/// Notes on disk: atomic replace, re-applied when the file changed meanwhile.
pub struct DiskWriter;

impl DiskWriter {
    /// The blocking write, for callers already off the runtime.
    pub fn write_blocking(note: &NotePath, edit: &SectionEdit) -> Result<bool, WriteError> {
        let outcome = disk::update_note_as(&note.abs, &note.rel, |text| edit.apply(text))?;
        Ok(matches!(outcome, WriteOutcome::Written { .. }))
    }
}

impl NoteWriter for DiskWriter {
    fn read<'a>(&'a self, note: &'a NotePath) -> BoxFuture<'a, Result<String, WriteError>> {
        let path = note.abs.clone();
        let rel = note.rel.clone();
        Box::pin(async move {
            scholia_base::spawn_blocking(move || Ok(scholia_vault::read::read_note(&path).map_err(|e| e.named(&rel))?))
                .await
        })
    }

    fn write<'a>(&'a self, note: &'a NotePath, edit: &'a SectionEdit) -> BoxFuture<'a, Result<bool, WriteError>> {
        let (note, edit) = (note.clone(), edit.clone());
        Box::pin(async move { scholia_base::spawn_blocking(move || DiskWriter::write_blocking(&note, &edit)).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn research(body: &str) -> SectionEdit {
        SectionEdit::research(body, &scholia_vault::contain::Links::none()).unwrap()
    }

    #[tokio::test]
    async fn disk_writer_reads_and_writes_off_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let note = NotePath {
            rel: "n.md".into(),
            abs: dir.path().join("n.md"),
        };
        std::fs::write(&note.abs, "# N\n").unwrap();
        assert_eq!(DiskWriter.read(&note).await.unwrap(), "# N\n");
        assert!(DiskWriter.write(&note, &research("b")).await.unwrap());
        assert!(!DiskWriter.write(&note, &research("b")).await.unwrap(), "unchanged");
        std::fs::write(&note.abs, "## Research\na\n## research\nb\n").unwrap();
        let e = DiskWriter.write(&note, &research("b")).await.unwrap_err();
        assert_eq!(e.code(), "DUPLICATE_SECTION");
    }
}
