//! One note into the index or out of it: a file re-read, an editor's unsaved buffer, a folder
//! removed. Visible after [`VaultIndex::flush`].

use std::path::Path;

use tantivy::IndexWriter;

use crate::schema;
use crate::{IndexError, MAX_INDEX_BYTES, Stamp, VaultIndex};

impl VaultIndex {
    /// Indexes `text` as the content of `rel` (an unsaved buffer, or a file just read).
    /// Not visible until [`VaultIndex::flush`].
    fn put(&self, writer: &IndexWriter, rel: &str, stamp: Stamp, text: &str) -> Result<(), IndexError> {
        self.put_parsed(writer, rel, stamp, &schema::IndexedNote::parse(text, rel))
    }

    fn put_parsed(
        &self,
        writer: &IndexWriter,
        rel: &str,
        stamp: Stamp,
        note: &schema::IndexedNote,
    ) -> Result<(), IndexError> {
        writer.delete_term(self.path_term(rel));
        writer.add_document(schema::document(&self.fields, rel, stamp, note))?;
        Ok(())
    }

    /// The note at `abs` as the index reads it, from `text` (its first [`MAX_INDEX_BYTES`],
    /// `truncated` when there is more): a note indexed in part keeps every link it holds.
    pub(crate) fn indexed_note(&self, abs: &Path, rel: &str, text: &str, truncated: bool) -> schema::IndexedNote {
        let mut note = schema::IndexedNote::parse(text, rel);
        if truncated && let Ok(whole) = scholia_vault::read::read_text(abs, scholia_vault::change::MAX_BYTES, false) {
            note.links_of_whole(&whole.text, rel);
        }
        note
    }

    /// Commits pending changes and reloads the reader.
    pub fn flush(&self) -> Result<(), IndexError> {
        let mut guard = self.writer()?;
        self.commit(guard.as_mut().expect("checked"))
    }

    /// Records the unsaved text of an open buffer and indexes it (visible after a flush).
    pub fn set_overlay(&self, rel: &str, text: String) -> Result<(), IndexError> {
        let stamp = std::fs::metadata(self.vault.abs(rel))
            .map(|m| Stamp::of(&m))
            .unwrap_or_default();
        let guard = self.writer()?;
        self.put(guard.as_ref().expect("checked"), rel, stamp, &text)?;
        scholia_base::lock(&self.overlays).insert(rel.to_string(), text);
        Ok(())
    }

    /// Forgets a closed buffer and re-indexes the file from disk.
    pub fn clear_overlay(&self, rel: &str) -> Result<(), IndexError> {
        scholia_base::lock(&self.overlays).remove(rel);
        self.refresh(&self.vault.abs(rel))
    }

    /// Brings one path up to date with the disk (or the open buffer): re-indexed, or removed
    /// when it no longer is a note. Visible after a flush.
    pub fn refresh(&self, abs: &Path) -> Result<(), IndexError> {
        let Some(rel) = self.vault.rel(abs) else {
            return Ok(());
        };
        let guard = self.writer()?;
        let writer = guard.as_ref().expect("checked");
        if let Some(text) = scholia_base::lock(&self.overlays).get(&rel) {
            let stamp = std::fs::metadata(abs).map(|m| Stamp::of(&m)).unwrap_or_default();
            return self.put(writer, &rel, stamp, text);
        }
        let meta = std::fs::metadata(abs).ok().filter(|m| m.is_file());
        let Some(meta) = meta.filter(|_| self.filter.is_note_path(abs) && self.vault.holds(abs)) else {
            writer.delete_term(self.path_term(&rel));
            return Ok(());
        };
        match scholia_vault::read::read_text(abs, MAX_INDEX_BYTES, true) {
            Ok(t) => {
                let note = self.indexed_note(abs, &rel, &t.text, t.truncated);
                self.put_parsed(writer, &rel, Stamp::of(&meta), &note)
            }
            Err(e) => {
                tracing::info!("skipping {rel}: {e}");
                writer.delete_term(self.path_term(&rel));
                Ok(())
            }
        }
    }

    /// Removes every note under the vault-relative directory `rel_dir` (or the note `rel_dir`).
    pub fn remove_prefix(&self, rel_dir: &str) -> Result<usize, IndexError> {
        let stamps = self.stamps()?;
        let prefix = format!("{rel_dir}/");
        let guard = self.writer()?;
        let writer = guard.as_ref().expect("checked");
        let mut n = 0;
        for rel in stamps.keys().filter(|k| k.starts_with(&prefix) || *k == rel_dir) {
            writer.delete_term(self.path_term(rel));
            n += 1;
        }
        Ok(n)
    }
}
