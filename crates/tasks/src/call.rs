//! A call answered with a task, as the store keeps it (see `calls.rs` for what drives it):
//! the types the store and the calls API share.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Working => "working",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(s: &str) -> CallStatus {
        match s {
            "completed" => CallStatus::Completed,
            "failed" => CallStatus::Failed,
            "cancelled" => CallStatus::Cancelled,
            _ => CallStatus::Working,
        }
    }

    pub fn is_final(self) -> bool {
        self != CallStatus::Working
    }
}

/// A call as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    pub id: String,
    pub tool: String,
    /// The call's arguments, a JSON object.
    pub arguments: String,
    /// The vault root the call ran against, when it needs one.
    pub vault: Option<String>,
    pub status: CallStatus,
    pub message: Option<String>,
    pub percent: Option<u8>,
    /// The result (a JSON object), once completed.
    pub result: Option<String>,
    /// The error (a JSON object with `code` and `message`), once failed.
    pub error: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// Runs taken over after a process stopped or died (0 for the first).
    pub resumed: u32,
}

impl Call {
    /// When the call and its result are forgotten.
    pub fn expires_at(&self) -> i64 {
        self.created_at.saturating_add(self.ttl_ms.min(i64::MAX as u64) as i64)
    }
}

/// How a call ends, as stored.
#[derive(Debug, Clone)]
pub struct CallEnd {
    pub status: CallStatus,
    pub result: Option<String>,
    pub error: Option<String>,
    pub message: String,
}
