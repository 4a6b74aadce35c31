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
//! - [`ambient`]: what a request carries into the blocking work it starts (a per-token scope).

pub mod ambient;
pub mod env;
pub mod error;
pub mod jobs;
pub mod sync;

pub use env::{Dirs, DirsError, Env, ProcessEnv};
pub use error::{CANCELLED, Coded, Error, ErrorKind};
pub use jobs::{Job, JobId, JobInfo, JobStart, Jobs, NoProgress, Progress, ProgressSink, Summary, Update};
pub use sync::{blocking, lock, lower_priority, spawn_blocking};
