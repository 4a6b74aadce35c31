//! The client's vocabulary: configuration, messages, answers, errors, structured-output modes.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::usage::{Price, Usage};
use scholia_base::error::{Coded, ErrorKind};

/// An API key that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    /// Up to and including `/v1` (the client appends `/chat/completions`).
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub model: String,
    pub max_concurrency: usize,
    /// Default deadline of one call, retries included.
    pub timeout: Duration,
    /// The model's context window, when configured (else asked of the server).
    pub context_tokens: Option<u32>,
    pub price: Option<Price>,
    /// Where the settings came from, for error messages ("SCHOLIA_LLM_API_KEY", …).
    pub key_source: &'static str,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &crate::http::redact(&self.base_url))
            .field("api_key", &self.api_key)
            .field("model", &self.model)
            .field("max_concurrency", &self.max_concurrency)
            .field("timeout", &self.timeout)
            .field("context_tokens", &self.context_tokens)
            .field("price", &self.price)
            .field("key_source", &self.key_source)
            .finish()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: "user".into(),
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: "assistant".into(),
            content: content.into(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// Overrides the configured model (Sonar tiers use one client for several models).
    pub model: Option<String>,
    pub response_format: Option<Value>,
    /// Stream the answer (when the endpoint supports it): progress and stall detection.
    pub stream: bool,
}

#[derive(Debug, Clone)]
pub struct ChatAnswer {
    /// The answer text, `<think>` blocks removed.
    pub content: String,
    pub usage: Usage,
    pub model: String,
    /// The whole response body, for provider-specific fields (citations, annotations).
    pub raw: Value,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("LLM at {base_url} is unreachable: {reason}")]
    Unreachable { base_url: String, reason: String },
    #[error(
        "LLM call timed out after {0:.0?} (retries included); a slow or local model needs a longer `[llm] timeout_secs`"
    )]
    Timeout(Duration),
    #[error("LLM at {base_url}: authentication failed (HTTP {status}); check {key_source}")]
    Auth {
        base_url: String,
        status: u16,
        key_source: &'static str,
    },
    #[error("LLM at {base_url}: model `{model}` not found (HTTP 404)")]
    ModelNotFound { base_url: String, model: String },
    #[error("LLM at {base_url}: rate limited (HTTP 429) until the deadline; try again later")]
    RateLimited { base_url: String },
    #[error("LLM at {base_url}: server error (HTTP {status}){}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Server {
        base_url: String,
        status: u16,
        message: String,
    },
    #[error("LLM at {base_url} does not support this structured-output mode (HTTP {status}): {message}")]
    FormatUnsupported {
        base_url: String,
        status: u16,
        message: String,
    },
    #[error("LLM at {base_url}: the prompt does not fit the model's context{}: {message}", limit.map(|n| format!(" of {n} tokens")).unwrap_or_default())]
    ContextExceeded {
        base_url: String,
        limit: Option<u32>,
        message: String,
    },
    #[error("LLM stream stalled: no output for {0:?}")]
    Stalled(Duration),
    #[error("LLM at {base_url}: request rejected (HTTP {status}): {message}")]
    Rejected {
        base_url: String,
        status: u16,
        message: String,
    },
    #[error("LLM returned no answer ({0})")]
    Empty(&'static str),
    #[error("LLM answer is not the expected JSON: {error}")]
    BadJson { error: String, excerpt: String },
    #[error("LLM response could not be read: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
}

impl Coded for LlmError {
    fn code(&self) -> &'static str {
        match self {
            LlmError::Unreachable { .. } => "LLM_UNREACHABLE",
            LlmError::Timeout(_) => "TIMEOUT",
            LlmError::Auth { .. } => "AUTH_FAILED",
            LlmError::ModelNotFound { .. } => "MODEL_NOT_FOUND",
            LlmError::RateLimited { .. } => "RATE_LIMITED",
            LlmError::Server { .. } | LlmError::Rejected { .. } | LlmError::FormatUnsupported { .. } => {
                "UPSTREAM_ERROR"
            }
            LlmError::ContextExceeded { .. } => "CONTEXT_EXCEEDED",
            LlmError::Stalled(_) => "TIMEOUT",
            LlmError::Empty(_) | LlmError::BadJson { .. } | LlmError::Protocol(_) => "BAD_ANSWER",
            LlmError::Cancelled => "CANCELLED",
        }
    }

    fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Cancelled => ErrorKind::Cancelled,
            _ => ErrorKind::Upstream,
        }
    }
}

impl LlmError {
    pub(crate) fn retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Unreachable { .. }
                | LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Timeout(_)
                | LlmError::Stalled(_)
        )
    }
}
