//! The quiet check a command from the shell leaves behind (`scholia index --background`). A
//! script running commands back to back leaves one per command; all but one waiting check
//! step aside, since the one waiting walks the vault after every command before it started.

use std::time::{Duration, Instant};

use super::{IndexError, VaultIndex};

/// How a background check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The vault was checked (and a bulk build's segments merged).
    Done,
    /// Another check was already waiting for the writer: it will see what this one would.
    Queued,
    /// The writer stayed busy past the wait: a server holds it and keeps the index current.
    Busy,
}

/// The lock a check holds while it waits for the writer (beside the index's own files).
const WAITING: &str = "check-waiting.lock";

impl VaultIndex {
    /// Waits (at most `wait`) for the index writer, then brings the index up to date and makes
    /// the merges a server would. One check waits at a time; it stops waiting, and lets the
    /// next one queue, as soon as it holds the writer (changes made after that are the next
    /// check's).
    pub fn check_when_free(&self, wait: Duration) -> Result<Check, IndexError> {
        let path = self.dir().join(WAITING);
        let waiting = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(self.io())?;
        match waiting.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(Check::Queued),
            Err(std::fs::TryLockError::Error(e)) => return Err(self.io()(e)),
        }
        let started = Instant::now();
        while !self.try_acquire_writer()? {
            if started.elapsed() >= wait {
                return Ok(Check::Busy);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(waiting);
        self.sync(&mut |_| {})?;
        self.merge_now()?;
        Ok(Check::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// While one check waits for the writer, another steps aside at once; the waiting one
    /// checks the vault once the writer is released.
    #[test]
    fn one_check_waits_at_a_time() {
        let f = crate::fixture::vault(&[("a.md", "# A\n\nalpha")]);
        let open = || {
            let vault = scholia_vault::Vault::open(&f.root()).unwrap();
            VaultIndex::open(vault, f.index.dir(), crate::WriterOptions::default()).unwrap()
        };
        let (first, second) = (open(), open());
        assert!(
            !first.is_writer() && !second.is_writer(),
            "the fixture holds the writer"
        );
        // Nothing waits yet: a check with no time to wait finds the writer busy.
        assert_eq!(second.check_when_free(Duration::ZERO).unwrap(), Check::Busy);
        std::thread::scope(|s| {
            let waiting = s.spawn(|| first.check_when_free(Duration::from_secs(60)));
            // Whether a check holds the waiting lock (a probe's own lock ends with its file).
            let held = || {
                std::fs::File::open(f.index.dir().join(WAITING))
                    .is_ok_and(|l| matches!(l.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)))
            };
            let started = Instant::now();
            while !held() {
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "the first check never waited"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            assert_eq!(second.check_when_free(Duration::from_secs(60)).unwrap(), Check::Queued);
            std::fs::write(f.root().join("b.md"), "# B\n\nbeta").unwrap();
            f.index.release_writer();
            assert_eq!(waiting.join().unwrap().unwrap(), Check::Done);
        });
        first.reload().unwrap();
        assert_eq!(first.num_notes(), 2, "the waiting check saw the new note");
    }
}
