//! Notes too large to read whole (over [`MAX_BYTES`]): the index holds the links of their first
//! part only ([`crate::MAX_INDEX_BYTES`]), and scholia rewrites none of their text. A change that
//! rewrites the links to a note must not go ahead while one of them may link it past that part.

use std::io::Read;
use std::ops::Bound;
use std::path::Path;

use tantivy::Term;
use tantivy::collector::DocSetCollector;
use tantivy::query::RangeQuery;

use scholia_vault::change::MAX_BYTES;

use super::names_any;
use crate::{IndexError, VaultIndex};

/// Bytes of a huge note searched at a time.
const CHUNK: usize = 1 << 20;

impl VaultIndex {
    /// The notes over [`MAX_BYTES`] whose text names one of `names` (lower-cased), by path, each
    /// with why it cannot be rewritten. Read a chunk at a time, never whole.
    pub(crate) fn too_large_naming(&self, names: &[String]) -> Result<Vec<(String, String)>, IndexError> {
        // A range over the size column: no path is read but theirs (a folder moved is asked
        // once a note).
        let searcher = self.searcher();
        let over = RangeQuery::new(
            Bound::Excluded(Term::from_field_u64(self.fields.size, MAX_BYTES)),
            Bound::Unbounded,
        );
        let mut huge = Vec::new();
        for addr in searcher.search(&over, &DocSetCollector)? {
            huge.push(self.path_at(&searcher, addr)?);
        }
        huge.sort();
        let mut out = Vec::new();
        for rel in huge {
            let why = match file_names_any(&self.vault().abs(&rel), names) {
                Ok(false) => continue,
                Ok(true) => format!(
                    "larger than {} MB, which scholia does not rewrite, and it names the note: it may link it",
                    MAX_BYTES >> 20
                ),
                Err(e) => format!("larger than {} MB and unreadable: {e}", MAX_BYTES >> 20),
            };
            out.push((rel, why));
        }
        Ok(out)
    }
}

/// Whether the file at `path` holds one of the lower-cased `names`, read [`CHUNK`] bytes at a
/// time; each chunk is searched with the end of the one before, so a name across two is found.
fn file_names_any(path: &Path, names: &[String]) -> std::io::Result<bool> {
    // A name's bytes as written may be longer than lower-cased (`İ`): four times is ample.
    let overlap = names.iter().map(String::len).max().unwrap_or(0) * 4 + 4;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; CHUNK];
    let mut window: Vec<u8> = Vec::with_capacity(CHUNK + overlap);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(false);
        }
        window.extend_from_slice(&buf[..n]);
        if names_any(&String::from_utf8_lossy(&window), names) {
            return Ok(true);
        }
        let keep = overlap.min(window.len());
        window.drain(..window.len() - keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name across two chunks is found, in any case; a name nowhere is not.
    #[test]
    fn a_name_across_two_chunks_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Huge.md");
        let mut text = "x".repeat(CHUNK - 3);
        text.push_str("[[Über Koji]] and more");
        std::fs::write(&path, &text).unwrap();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(file_names_any(&path, &names(&["über koji"])).unwrap());
        assert!(!file_names_any(&path, &names(&["rice"])).unwrap());
        assert!(!file_names_any(&path, &[]).unwrap());
    }
}
