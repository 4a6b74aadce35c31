//! How an attempt at a call ended without an answer, and the jitter of retries: what the
//! client and one attempt share.

use std::time::Duration;

use super::types::LlmError;

/// Why an attempt did not answer: an error, or the endpoint refusing streaming (asked again
/// without it at once).
pub(super) enum Refusal {
    Error(LlmError),
    Stream(String),
    /// A streamed answer that ended before any output: llama-cpp-python reports a prompt over
    /// its window that way, so the call is asked once more without streaming to learn why.
    EmptyStream,
    /// A streamed answer broken off after it had started.
    Cut(String),
}

pub(super) const EMPTY_STREAM: &str = "the stream ended before any output";
pub(super) const CUT: &str = "the stream was cut off";

pub(super) fn jitter(d: Duration) -> Duration {
    // ±25 % so parallel callers do not retry in lockstep.
    let factor = 0.75 + fastrand::f64() * 0.5;
    d.mul_f64(factor)
}
