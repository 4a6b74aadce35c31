//! One error model for every pipeline: a stable code, a kind, and a message that names the
//! field and the valid values. Each module keeps its own precise error enum and says, through
//! [`Coded`] implemented beside it, which code and kind each case has; surfaces map kinds in
//! one place each (CLI exit status, LSP error codes, MCP `isError`).

use serde::Serialize;

/// What went wrong, as far as a surface needs to know to react.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request or a setting is wrong; the message names the field and the valid values.
    InvalidInput,
    /// A provider (LLM, OpenRouter, the Gemini CLI, …) the request needs is not set up.
    NotConfigured,
    /// Stopped by the caller; nothing was written.
    Cancelled,
    /// A remote service or the Gemini CLI failed or answered nonsense.
    Upstream,
    /// Reading or writing local files (notes, index, data) failed.
    Io,
    /// The state of the note or the vault conflicts with the request (duplicate sections, a
    /// buffer that keeps changing, the vault still opening).
    Conflict,
    /// A bug: a job panicked.
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::NotConfigured => "not_configured",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Upstream => "upstream",
            ErrorKind::Io => "io",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Internal => "internal",
        }
    }
}

/// Implemented by every error a pipeline can return.
pub trait Coded: std::fmt::Display {
    /// Stable, upper snake case: `INVALID_PATH`, `CLI_NOT_FOUND`, …
    fn code(&self) -> &'static str;
    fn kind(&self) -> ErrorKind;
}

/// A pipeline error as every surface sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct Error {
    pub code: &'static str,
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(code: &'static str, kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            code,
            kind,
            message: message.into(),
        }
    }

    /// The same error about an argument a surface names `to` where the layer below says
    /// `from` (a note path is `path` to the vault and `note` to a tool that takes one).
    pub fn field(mut self, from: &str, to: &str) -> Error {
        if let Some(rest) = self.message.strip_prefix(from)
            && rest.starts_with([' ', ':'])
        {
            self.message = format!("{to}{rest}");
        }
        self
    }

    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new("INVALID_INPUT", ErrorKind::InvalidInput, message)
    }

    pub fn cancelled() -> Error {
        Error::new("CANCELLED", ErrorKind::Cancelled, CANCELLED)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new("INTERNAL", ErrorKind::Internal, message)
    }

    pub fn is_cancelled(&self) -> bool {
        self.kind == ErrorKind::Cancelled
    }
}

/// What a cancelled run says, on every surface.
pub const CANCELLED: &str = "cancelled; the note is unchanged";

impl<E: Coded> From<E> for Error {
    fn from(e: E) -> Error {
        Error::new(e.code(), e.kind(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("path `{0}`: no such note in the vault")]
    struct Missing(String);

    impl Coded for Missing {
        fn code(&self) -> &'static str {
            "NOTE_NOT_FOUND"
        }
        fn kind(&self) -> ErrorKind {
            ErrorKind::Io
        }
    }

    #[test]
    fn coded_errors_convert() {
        let e: Error = Missing("x.md".into()).into();
        assert_eq!((e.code, e.kind), ("NOTE_NOT_FOUND", ErrorKind::Io));
        assert_eq!(e.message, "path `x.md`: no such note in the vault");
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "io");
        assert!(Error::cancelled().is_cancelled());
    }
}
