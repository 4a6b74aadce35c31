//! Bringing the index up to date with the vault: only files whose mtime or size changed are
//! read; the first batch is committed early so searches answer while the rest is indexed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use tantivy::TantivyDocument;

use super::{IndexError, MAX_INDEX_BYTES, VaultIndex};
use scholia_vault::read::{ReadError, read_text};
use scholia_vault::scan::{NoteFile, Skipped, scan};

/// Reported while syncing, for progress bars and `$/progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The walk is done: `total` notes need (re)indexing, `unchanged` do not.
    Started { total: usize, unchanged: usize },
    /// `done` of `total` processed; `searchable` notes answer queries now.
    Indexed { done: usize, total: usize, searchable: u64 },
}

#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct SyncSummary {
    /// Notes (re)indexed by this run.
    pub indexed: usize,
    pub unchanged: usize,
    pub removed: usize,
    /// Not indexed on purpose: binary, not UTF-8, symlink loops or escapes.
    pub skipped: Vec<Skipped>,
    /// Could not be read: permissions, vanished mid-scan.
    pub failed: Vec<Skipped>,
    /// Indexed only up to the size cap.
    pub truncated: Vec<String>,
    #[serde(serialize_with = "as_secs")]
    pub elapsed: Duration,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl SyncSummary {
    pub fn total_notes(&self) -> usize {
        self.indexed + self.unchanged
    }
}

enum Outcome {
    Indexed { truncated: bool },
    Skipped(Skipped),
    Failed(Skipped),
}

enum Prepared {
    Doc {
        doc: TantivyDocument,
        truncated: bool,
        body_len: u64,
    },
    Skipped(Skipped),
    Failed(Skipped),
}

/// First commit after this many notes, so a cold start answers queries early.
const FIRST_BATCH: usize = 400;
const BATCH: usize = 4096;
/// Later batches hold at most this much text (between commits, progress reports).
const BATCH_BYTES: u64 = 16 * 1024 * 1024;
/// tantivy queues up to 10,000 documents ahead of its indexing threads. Adding waits while
/// more than this much body text is queued but not yet tokenized. At real 100k (the vault
/// bench, three cold builds each): 8 MB peaked at 144.6-151.0 MB, 4 MB at 131.3-142.4 MB,
/// with the build as fast (17.1 and 17.4 s median, floors 6.2 and 6.7 s).
const MAX_BACKLOG: u64 = 4 * 1024 * 1024;
const MAX_BACKPRESSURE_WAIT: Duration = Duration::from_secs(2);
/// Commits after the first batch's: the first this long after it, each gap twice the last, up
/// to [`LONGEST_GAP`]. A commit closes each indexing thread's segment part-filled, and a
/// segment costs its own term dictionaries: at real 100k (the vault bench, profiling build) a
/// commit every 2 s left 64 segments, peak RSS 133.6-134.5 MB and 46.2-48.7 CPU-s (two cold
/// builds); these gaps leave 60 segments, 126.7-129.3 MB and 42.6-49.1 CPU-s (median 45.6, five
/// builds; this machine's neighbours move a build by ±10 %). A small vault's build still
/// commits every 2 s, and a big one early on. (45 MB per indexing thread instead of 30 left 38
/// segments but peaked at 162-167 MB, over the 150 MB asked.)
const FIRST_GAP: Duration = Duration::from_millis(2000);
const LONGEST_GAP: Duration = Duration::from_secs(16);

impl VaultIndex {
    /// Walks the vault and (re)indexes what changed since the last run.
    pub fn sync(&self, progress: &mut dyn FnMut(Progress)) -> Result<SyncSummary, IndexError> {
        self.sync_until(progress, &|| false)
    }

    /// [`VaultIndex::sync`] that stops between batches once `stop` says so (what was indexed
    /// so far is committed: the next sync goes on from there).
    pub fn sync_until(
        &self,
        progress: &mut dyn FnMut(Progress),
        stop: &dyn Fn() -> bool,
    ) -> Result<SyncSummary, IndexError> {
        let started = Instant::now();
        let known = self.stamps()?;
        let found = scan(self.vault.root());
        remove_stale_temp_files(&found.temp_files);
        let mut summary = SyncSummary::default();
        let mut todo: Vec<NoteFile> = Vec::new();
        // What is left of `known` once every note found is taken out was removed.
        let mut gone = known;
        let known_before = !gone.is_empty();
        for note in found.notes {
            match gone.remove(&note.rel) {
                Some(stamp) if stamp == note.stamp => summary.unchanged += 1,
                _ => todo.push(note),
            }
        }
        for s in found.skipped {
            if s.reason == "permission denied" || s.reason == "vanished" {
                summary.failed.push(s);
            } else {
                summary.skipped.push(s);
            }
        }
        let total = todo.len();
        let check_took = started.elapsed();
        progress(Progress::Started {
            total,
            unchanged: summary.unchanged,
        });

        let mut guard = self.writer()?;
        let writer = guard.as_mut().expect("checked");
        for rel in gone.keys() {
            writer.delete_term(self.path_term(rel));
            summary.removed += 1;
        }
        // A cold build has nothing to replace: skipping deletes saves work per document.
        let replace = known_before;
        let overlays = scholia_base::lock(&self.overlays).clone();
        let sent = AtomicU64::new(self.body_consumed.load(Ordering::Relaxed));
        let mut done = 0;
        let mut last_commit = Instant::now();
        let mut gap = FIRST_GAP;
        let batches = batches(&todo);
        for (i, batch) in batches.iter().enumerate() {
            if stop() {
                self.commit(writer)?;
                return Err(IndexError::Cancelled);
            }
            let writer_ref = &*writer;
            // Read, parse and queue in parallel; hold back while tantivy is far behind.
            let outcomes: Vec<Outcome> = batch
                .par_iter()
                .map(|f| match self.prepare(f, overlays.get(&f.rel)) {
                    Prepared::Doc {
                        doc,
                        truncated,
                        body_len,
                    } => {
                        let queued = sent.fetch_add(body_len, Ordering::Relaxed) + body_len;
                        // Bounded: a stalled counter must cost memory, never a hang.
                        let waiting = Instant::now();
                        while queued.saturating_sub(self.body_consumed.load(Ordering::Relaxed)) > MAX_BACKLOG
                            && waiting.elapsed() < MAX_BACKPRESSURE_WAIT
                        {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        if replace {
                            writer_ref.delete_term(self.path_term(&f.rel));
                        }
                        match writer_ref.add_document(doc) {
                            Ok(_) => Outcome::Indexed { truncated },
                            Err(e) => Outcome::Failed(Skipped {
                                path: f.rel.clone(),
                                reason: e.to_string(),
                            }),
                        }
                    }
                    Prepared::Skipped(s) => Outcome::Skipped(s),
                    Prepared::Failed(s) => Outcome::Failed(s),
                })
                .collect();
            for (f, outcome) in batch.iter().zip(outcomes) {
                match outcome {
                    Outcome::Indexed { truncated } => {
                        summary.indexed += 1;
                        if truncated {
                            summary.truncated.push(f.rel.clone());
                        }
                    }
                    Outcome::Skipped(s) => summary.skipped.push(s),
                    Outcome::Failed(s) => summary.failed.push(s),
                }
            }
            done += batch.len();
            let due = last_commit.elapsed() >= gap;
            if i == 0 || i + 1 == batches.len() || due {
                self.commit(writer)?;
                last_commit = Instant::now();
                if due && i > 0 {
                    gap = (gap * 2).min(LONGEST_GAP);
                }
            }
            progress(Progress::Indexed {
                done,
                total,
                searchable: self.num_notes(),
            });
        }
        // One last commit carries the mark that the vault is all in; when nothing changed and
        // the index already says so, there is nothing to commit.
        let unchanged = total == 0 && summary.removed == 0;
        if !(unchanged && self.writer_is_complete()) || self.keep_merged.load(Ordering::Relaxed) {
            self.mark_complete(writer)?;
        } else {
            self.complete.store(true, Ordering::Relaxed);
        }
        for s in summary.skipped.iter().chain(&summary.failed) {
            tracing::debug!("not indexed: {} ({})", s.path, s.reason);
        }
        summary.elapsed = started.elapsed();
        self.record_check(check_took, summary.total_notes());
        Ok(summary)
    }
}

impl VaultIndex {
    /// Reads and parses one note into a document (CPU and IO, no index lock needed).
    fn prepare(&self, f: &NoteFile, overlay: Option<&String>) -> Prepared {
        let (text, truncated) = match overlay {
            Some(text) => (text.clone(), false),
            None => match read_text(&self.vault.abs(&f.rel), MAX_INDEX_BYTES, true) {
                Ok(t) => (t.text, t.truncated),
                Err(e) => return classify(&f.rel, e),
            },
        };
        let note = self.indexed_note(&self.vault.abs(&f.rel), &f.rel, &text, truncated);
        for w in &note.note.warnings {
            tracing::warn!("{}: {w}", f.rel);
        }
        Prepared::Doc {
            doc: super::schema::document(&self.fields, &f.rel, f.stamp, &note),
            truncated,
            body_len: note.body_bytes(),
        }
    }
}

/// A temp file older than this was left by a crash (a write takes milliseconds).
const STALE_TEMP: Duration = Duration::from_secs(600);

/// Removes the write temp files a crash left beside notes.
fn remove_stale_temp_files(paths: &[std::path::PathBuf]) {
    for p in paths {
        let age = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if age.is_some_and(|a| a >= STALE_TEMP) {
            match std::fs::remove_file(p) {
                Ok(()) => tracing::info!("removed {}, left by an interrupted write", p.display()),
                Err(e) => tracing::warn!("could not remove {}: {e}", p.display()),
            }
        }
    }
}

/// The first batch is small so a cold start answers queries early; later ones are bounded by
/// count and by bytes of text.
fn batches(todo: &[NoteFile]) -> Vec<&[NoteFile]> {
    let mut out = Vec::new();
    let mut rest = todo;
    while !rest.is_empty() {
        let max = if out.is_empty() { FIRST_BATCH } else { BATCH }.min(rest.len());
        let mut n = 0;
        let mut bytes = 0;
        while n < max && (n == 0 || bytes < BATCH_BYTES) {
            bytes += rest[n].stamp.size.min(MAX_INDEX_BYTES);
            n += 1;
        }
        let (batch, tail) = rest.split_at(n);
        out.push(batch);
        rest = tail;
    }
    out
}

fn classify(rel: &str, e: ReadError) -> Prepared {
    let s = Skipped {
        path: rel.to_string(),
        reason: e.reason().to_string(),
    };
    match e {
        ReadError::Binary(_) | ReadError::NotUtf8 { .. } | ReadError::TooLarge { .. } => Prepared::Skipped(s),
        ReadError::Io { .. } => Prepared::Failed(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the producer counts as sent is what the body tokenizer counts as consumed, research
    /// sections included: a difference would grow note by note until every note waited for a
    /// backlog that never drains.
    #[test]
    fn the_backlog_counts_what_the_tokenizer_consumes() {
        let notes = [
            ("Plain.md", "# Plain\n\nplankton drifts"),
            (
                "Researched.md",
                "# Researched\n\nkrill swarm\n\n## Research\n\n- [[Plain]] krill eat plankton\n\n## After\n\nmore",
            ),
            (
                "Front.md",
                "---\naliases: [F]\n---\n# Front\n\n## Research\n\nonly this",
            ),
        ];
        let expected: u64 = notes
            .iter()
            .map(|(name, text)| crate::schema::IndexedNote::parse(text, name).body_bytes())
            .sum();
        // Written after the fixture's first sync: this sync indexes them.
        let f = crate::fixture::vault(&[]);
        for (name, text) in &notes {
            std::fs::write(f.root().join(name), text).unwrap();
        }
        let index = &f.index;
        let before = index.body_consumed.load(Ordering::Relaxed);
        index.sync(&mut |_| {}).unwrap();
        assert_eq!(index.body_consumed.load(Ordering::Relaxed) - before, expected);
    }
}
