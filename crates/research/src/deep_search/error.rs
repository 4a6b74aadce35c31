//! deep_search's errors: the seed's code and message, and whether the loop goes on.

use super::*;

/// The seed's error shape: a code and a message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DeepSearchError {
    pub code: &'static str,
    pub kind: ErrorKind,
    pub message: String,
    /// Every later round would fail the same way (missing CLI, bad login, cancelled).
    pub(super) stops_the_loop: bool,
}

impl Coded for DeepSearchError {
    fn code(&self) -> &'static str {
        self.code
    }
    fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl DeepSearchError {
    pub(super) fn new(code: &'static str, kind: ErrorKind, message: impl Into<String>) -> DeepSearchError {
        DeepSearchError {
            code,
            kind,
            message: message.into(),
            stops_the_loop: false,
        }
    }

    /// A round failed: the loop goes on with the next one.
    pub(super) fn failed(message: impl Into<String>) -> DeepSearchError {
        DeepSearchError::new("EXECUTION_ERROR", ErrorKind::Upstream, message)
    }

    /// A round's LLM call failed: an LLM that cannot be reached, refuses the key or lacks the
    /// model fails every later round the same way, so the loop stops with that error.
    pub(super) fn from_llm(what: &str, e: scholia_providers::llm::LlmError) -> DeepSearchError {
        use scholia_providers::llm::LlmError as E;
        let message = format!("{what}: {e}");
        match e {
            E::Unreachable { .. } | E::Auth { .. } | E::ModelNotFound { .. } => DeepSearchError {
                stops_the_loop: true,
                ..DeepSearchError::new(e.code(), e.kind(), message)
            },
            E::Cancelled => DeepSearchError::cancelled(),
            // A timed-out round keeps its code: when every round times out, so does the search.
            _ if e.code() == "TIMEOUT" => DeepSearchError::new("TIMEOUT", ErrorKind::Upstream, message),
            _ => DeepSearchError::failed(message),
        }
    }

    pub(super) fn invalid(message: impl Into<String>) -> DeepSearchError {
        DeepSearchError::new("INVALID_INPUT", ErrorKind::InvalidInput, message)
    }

    pub fn cancelled() -> DeepSearchError {
        DeepSearchError {
            stops_the_loop: true,
            ..DeepSearchError::new("CANCELLED", ErrorKind::Cancelled, scholia_base::CANCELLED)
        }
    }
}

impl From<CliError> for DeepSearchError {
    fn from(e: CliError) -> DeepSearchError {
        if matches!(e, CliError::Cancelled) {
            return DeepSearchError::cancelled();
        }
        let kind = match e {
            CliError::NotFound { .. } => ErrorKind::NotConfigured,
            _ => ErrorKind::Upstream,
        };
        DeepSearchError {
            stops_the_loop: e.is_fatal(),
            ..DeepSearchError::new(e.code(), kind, e.to_string())
        }
    }
}

impl From<scholia_prompts::TemplateError> for DeepSearchError {
    fn from(e: scholia_prompts::TemplateError) -> DeepSearchError {
        DeepSearchError {
            stops_the_loop: true,
            ..DeepSearchError::new(e.code(), e.kind(), format!("template: {e}"))
        }
    }
}
