//! How current the index is, for a process that answers one question and exits (the CLI).
//!
//! Bringing the index up to date means a walk and a stat of every note: milliseconds on a
//! few thousand notes, half a second on 100,000. When the last check took longer than
//! [`DEFER_ABOVE`], a short-lived process answers from the index at once — after re-reading
//! the notes it is about to show, if they changed — and leaves the full check to a process in
//! the background (see [`crate::VaultSession::open_current`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{IndexError, VaultIndex};
use scholia_vault::scan::Stamp;

/// A check of every note that took longer than this is not repeated before an answer.
pub const DEFER_ABOVE: Duration = Duration::from_millis(100);
/// A check finished this recently is trusted: no other is started.
pub const TRUST_FOR: Duration = Duration::from_secs(5);

const FILE: &str = "last-check.json";

/// The last full check of the vault against the index.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LastCheck {
    /// How long the walk and comparison took, in milliseconds.
    pub took_ms: u64,
    pub notes: usize,
    /// When it finished, in milliseconds since the Unix epoch.
    pub finished_ms: u64,
}

impl LastCheck {
    pub fn age(&self) -> Duration {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        now.saturating_sub(Duration::from_millis(self.finished_ms))
    }

    /// Whether an answer may come before the next check.
    pub fn may_defer(&self) -> bool {
        Duration::from_millis(self.took_ms) > DEFER_ABOVE
    }
}

impl VaultIndex {
    pub fn last_check(&self) -> Option<LastCheck> {
        let text = std::fs::read_to_string(self.dir().join(FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(crate) fn record_check(&self, took: Duration, notes: usize) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let check = LastCheck {
            took_ms: took.as_millis() as u64,
            notes,
            finished_ms: now.as_millis() as u64,
        };
        let tmp = self.dir().join(format!(".{FILE}.{}", std::process::id()));
        let written = std::fs::write(&tmp, serde_json::to_vec(&check).expect("serialises"))
            .and_then(|()| std::fs::rename(&tmp, self.dir().join(FILE)));
        if let Err(e) = written {
            tracing::debug!("could not record the check: {e}");
        }
    }

    /// Re-reads the notes among `rels` whose file changed or vanished since they were indexed
    /// (when this process holds the writer); returns whether any did.
    pub fn refresh_if_changed(&self, rels: &[&str]) -> Result<bool, IndexError> {
        if !self.is_writer() {
            return Ok(false);
        }
        let mut changed = false;
        for rel in rels {
            let abs = self.vault().abs(rel);
            let now = std::fs::metadata(&abs)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| Stamp::of(&m));
            if now.is_some() && now == self.stamp_of(rel)? {
                continue;
            }
            self.refresh(&abs)?;
            changed = true;
        }
        if changed {
            self.flush()?;
        }
        Ok(changed)
    }

    /// The stamp the index holds for `rel`.
    fn stamp_of(&self, rel: &str) -> Result<Option<Stamp>, IndexError> {
        let searcher = self.searcher();
        let found = self.paths_with(&searcher, &self.path_term(rel))?;
        let Some((_, addr)) = found.first() else {
            return Ok(None);
        };
        let ff = searcher.segment_reader(addr.segment_ord).fast_fields();
        Ok(Some(Stamp {
            mtime_ns: ff.u64("mtime")?.first(addr.doc_id).unwrap_or(0),
            size: ff.u64("size")?.first(addr.doc_id).unwrap_or(0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::VaultSession;
    use scholia_base::Dirs;

    fn dirs(home: &std::path::Path) -> Dirs {
        Dirs {
            config: home.join("config"),
            data: home.join("data"),
            cache: home.join("cache"),
        }
    }

    /// A vault whose last check was slow answers without one: the background check is asked
    /// for (once: not again right after a check), a changed note shown is re-read before the
    /// answer, and a small vault is checked first as before.
    #[tokio::test]
    async fn answers_first_on_a_slow_vault_and_rereads_what_it_shows() {
        let vault = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let note = vault.path().join("Kombucha.md");
        std::fs::write(&note, "# Kombucha\n\nSweet tea ferments.\n").unwrap();
        std::fs::write(vault.path().join("Bread.md"), "# Bread\n\nRye and water.\n").unwrap();
        let dirs = dirs(home.path());
        let asked = Cell::new(0);
        let later = |_: &std::path::Path| asked.set(asked.get() + 1);

        // First open: nothing recorded, so it checks (and records a quick check).
        let (session, summary) = VaultSession::open_current(vault.path(), &dirs, &mut |_| {}, &later).unwrap();
        assert_eq!(summary.map(|s| s.indexed), Some(2));
        let dir = session.index().dir().to_path_buf();
        drop(session);
        let record = |took_ms: u64, age_ms: u64| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64;
            let c = super::LastCheck {
                took_ms,
                notes: 2,
                finished_ms: now - age_ms,
            };
            std::fs::write(dir.join(super::FILE), serde_json::to_vec(&c).unwrap()).unwrap();
        };

        // A quick last check: checked before answering, a new note is found.
        record(5, 60_000);
        std::fs::write(vault.path().join("Cider.md"), "# Cider\n\nApples ferment.\n").unwrap();
        let (session, summary) = VaultSession::open_current(vault.path(), &dirs, &mut |_| {}, &later).unwrap();
        assert_eq!(summary.map(|s| s.indexed), Some(1));
        assert_eq!(asked.get(), 0);
        drop(session);

        // A slow last check a minute ago: no check, the background one is asked for; the
        // note shown changed on disk, so it is re-read before the answer.
        record(500, 60_000);
        std::fs::write(&note, "# Kombucha\n\nSweet tea ferments with a scoby.\n").unwrap();
        let (session, summary) = VaultSession::open_current(vault.path(), &dirs, &mut |_| {}, &later).unwrap();
        assert!(summary.is_none());
        assert_eq!(asked.get(), 1);
        let hits = session.search("ferments", 10, None).await.unwrap().hits;
        let kombucha = hits.iter().find(|h| h.path == "Kombucha.md").expect("found");
        assert!(kombucha.snippet.contains("scoby"), "{}", kombucha.snippet);
        // A note created since is not seen until the background check: the price of answering first.
        std::fs::write(vault.path().join("Miso.md"), "# Miso\n\nSoybeans ferments slowly.\n").unwrap();
        let hits = session.search("soybeans", 10, None).await.unwrap().hits;
        assert!(hits.is_empty());
        drop(session);

        // A slow check that finished a moment ago is trusted: no second background check.
        record(500, 100);
        let (_session, summary) = VaultSession::open_current(vault.path(), &dirs, &mut |_| {}, &later).unwrap();
        assert!(summary.is_none());
        assert_eq!(asked.get(), 1);
    }
}
