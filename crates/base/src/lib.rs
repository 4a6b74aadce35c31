//! The layer every other scholia crate stands on, importing nothing of scholia:
//!
//! - [`error`]: the one error model — a stable code, a kind every surface maps once, a message
//!   that names the field and the valid values — and the [`Coded`] trait each error type
//!   implements beside itself;
//! - [`jobs`]: the job registry — cancellation and progress of every long operation, shown
//!   through the [`ProgressSink`] a surface hands in; a pipeline's events implement
//!   [`Progress`];
//! - [`env`]: the environment as a trait, and the directories scholia keeps its files in;
//! - [`sync`]: blocking work off the async runtime (a panic there is re-raised, never
//!   swallowed) and the one lock policy (a panicking holder poisons nothing for the others);
//! - [`ambient`]: what a request carries into the blocking work it starts (a per-token scope);
//! - [`hex`]: bytes as lower-case hexadecimal (digests as files and headers write them).

pub mod ambient;
pub mod env;
pub mod error;
pub mod jobs;
pub mod sync;

pub use env::{Dirs, DirsError, Env, ProcessEnv};
pub use error::{CANCELLED, Coded, Error, ErrorKind};
pub use jobs::{Job, JobId, JobInfo, JobStart, Jobs, NoProgress, Progress, ProgressSink, Summary, Update};
pub use sync::{blocking, lock, lower_priority, spawn_blocking};

/// `bytes` as lower-case hexadecimal, two digits a byte (a SHA-256 as `sha256sum` prints it).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(super::hex(&[0, 1, 0xab, 0xff]), "0001abff");
        assert_eq!(super::hex(&[]), "");
    }
}
