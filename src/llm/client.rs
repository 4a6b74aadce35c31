//! One OpenAI-compatible chat client (OpenRouter, Fireworks, OpenAI, Ollama, llama.cpp, vLLM).
//!
//! Every call has one deadline shared by its retries; 429, 5xx, timeouts and connection errors
//! are retried with exponential backoff and jitter, honouring `Retry-After`; concurrency per
//! provider is bounded by a semaphore.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::json::{extract, strip_think};
use super::usage::{Price, Usage};
use crate::error::{Coded, ErrorKind};
use crate::prompts::Library;

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
    #[error("LLM call timed out after {0:.0?} (retries included)")]
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
    #[error("LLM at {base_url}: server error (HTTP {status})")]
    Server { base_url: String, status: u16 },
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
            LlmError::Server { .. } | LlmError::Rejected { .. } => "UPSTREAM_ERROR",
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
    fn retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Unreachable { .. }
                | LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Timeout(_)
        )
    }
}

/// How JSON is asked for; servers that reject a mode with 400 are asked the next way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum StructuredMode {
    JsonSchema = 0,
    JsonObject = 1,
    PromptOnly = 2,
}

pub struct ChatClient {
    http: reqwest::Client,
    config: LlmConfig,
    permits: Arc<Semaphore>,
    mode: AtomicU8,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

const MIN_BACKOFF: Duration = Duration::from_millis(400);
/// A chat answer larger than this is refused (a deep-research report is a few hundred KB).
const MAX_RESPONSE_BYTES: usize = 16 << 20;
const MAX_BACKOFF: Duration = Duration::from_secs(8);

impl ChatClient {
    pub fn new(config: LlmConfig) -> ChatClient {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("HTTP client builds");
        ChatClient {
            http,
            permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
            config,
            mode: AtomicU8::new(StructuredMode::JsonSchema as u8),
        }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    pub fn structured_mode(&self) -> StructuredMode {
        match self.mode.load(Ordering::Relaxed) {
            0 => StructuredMode::JsonSchema,
            1 => StructuredMode::JsonObject,
            _ => StructuredMode::PromptOnly,
        }
    }

    /// The default deadline for a call starting now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.config.timeout
    }

    /// One chat completion, retried until `deadline` on transient failures.
    pub async fn chat(&self, req: &ChatRequest, deadline: Instant) -> Result<ChatAnswer, LlmError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let _permit = tokio::time::timeout(wait, self.permits.acquire())
            .await
            .map_err(|_| LlmError::Timeout(self.config.timeout))?
            .expect("semaphore never closes");
        let mut backoff = MIN_BACKOFF;
        let (mut refused, mut server_errors) = (0, 0);
        loop {
            let (result, retry_after) = self.attempt(req, deadline).await;
            let err = match result {
                Ok(answer) => return Ok(answer),
                // Nothing listening is rarely fixed by waiting: give up after three tries.
                Err(e @ LlmError::Unreachable { .. }) if refused >= 2 => return Err(e),
                // A server failing four times in a row is down, not hiccuping.
                Err(e @ LlmError::Server { .. }) if server_errors >= 3 => return Err(e),
                Err(e) if e.retryable() => e,
                Err(e) => return Err(e),
            };
            match err {
                LlmError::Unreachable { .. } => refused += 1,
                LlmError::Server { .. } => server_errors += 1,
                _ => {}
            }
            let wait = retry_after.unwrap_or_else(|| jitter(backoff));
            if crate::http::past_deadline(wait, deadline) {
                tracing::debug!("not retrying {err}: the deadline is nearer than {wait:?}");
                return Err(match err {
                    LlmError::Timeout(_) => LlmError::Timeout(self.config.timeout),
                    other => other,
                });
            }
            tracing::info!("LLM call failed ({err}); retrying in {wait:?}");
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn attempt(&self, req: &ChatRequest, deadline: Instant) -> (Result<ChatAnswer, LlmError>, Option<Duration>) {
        let endpoint = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        // What messages show: never the `user:password@` a base URL may carry.
        let base_url = crate::http::redact(self.config.base_url.trim_end_matches('/'));
        let model = req.model.clone().unwrap_or_else(|| self.config.model.clone());
        let mut body = json!({"model": model, "messages": req.messages});
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = req.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if let Some(rf) = &req.response_format {
            body["response_format"] = rf.clone();
        }
        let mut builder = self.http.post(endpoint).json(&body);
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (Err(LlmError::Timeout(self.config.timeout)), None);
        }
        let response = match tokio::time::timeout(left, builder.send()).await {
            Err(_) => return (Err(LlmError::Timeout(self.config.timeout)), None),
            Ok(Err(e)) if e.is_timeout() => return (Err(LlmError::Timeout(self.config.timeout)), None),
            Ok(Err(e)) => {
                let reason = e.without_url().to_string();
                return (Err(LlmError::Unreachable { base_url, reason }), None);
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        let retry_after = crate::http::retry_after_header(response.headers());
        let left = deadline.saturating_duration_since(Instant::now());
        let text = match tokio::time::timeout(left, crate::http::read_text(response, MAX_RESPONSE_BYTES)).await {
            Err(_) => return (Err(LlmError::Timeout(self.config.timeout)), None),
            Ok(Err(crate::http::BodyError::TooLarge(cap))) => {
                return (
                    Err(LlmError::Protocol(format!("the response is larger than {cap} bytes"))),
                    None,
                );
            }
            Ok(Err(crate::http::BodyError::Read(reason))) => {
                return (Err(LlmError::Unreachable { base_url, reason }), None);
            }
            Ok(Ok(t)) => t,
        };
        let result = match status {
            200..=299 => parse_answer(&text, &model, self.config.price),
            401 | 403 => Err(LlmError::Auth {
                base_url,
                status,
                key_source: self.config.key_source,
            }),
            404 => Err(LlmError::ModelNotFound { base_url, model }),
            429 => Err(LlmError::RateLimited { base_url }),
            500..=599 => Err(LlmError::Server { base_url, status }),
            _ => Err(LlmError::Rejected {
                base_url,
                status,
                message: error_message(&text),
            }),
        };
        (result, retry_after)
    }

    /// Asks for JSON shaped like `schema` and deserializes it into `T`, negotiating how
    /// structured output is requested and repairing one malformed answer.
    pub async fn json<T: serde::de::DeserializeOwned>(
        &self,
        messages: Vec<Message>,
        schema_name: &str,
        schema: &Value,
        prompts: &Library,
        deadline: Instant,
    ) -> Result<(T, Usage), LlmError> {
        let mut usage = Usage::default();
        let mut messages = messages;
        let mut repaired = false;
        loop {
            let mode = self.structured_mode();
            let response_format = match mode {
                StructuredMode::JsonSchema => Some(json!({
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": false}
                })),
                StructuredMode::JsonObject => Some(json!({"type": "json_object"})),
                StructuredMode::PromptOnly => None,
            };
            let req = ChatRequest {
                messages: messages.clone(),
                temperature: Some(0.2),
                response_format,
                ..Default::default()
            };
            let answer = match self.chat(&req, deadline).await {
                Ok(a) => a,
                Err(LlmError::Rejected {
                    status: 400, message, ..
                }) if mode != StructuredMode::PromptOnly => {
                    let next = if mode == StructuredMode::JsonSchema {
                        StructuredMode::JsonObject
                    } else {
                        StructuredMode::PromptOnly
                    };
                    tracing::info!("the LLM rejected {mode:?} ({message}); asking with {next:?} from now on");
                    self.mode.store(next as u8, Ordering::Relaxed);
                    continue;
                }
                Err(LlmError::Empty(why)) if !repaired => {
                    repaired = true;
                    tracing::info!("LLM returned no answer ({why}); asking once more");
                    continue;
                }
                Err(e) => return Err(e),
            };
            usage.add(&answer.usage);
            // A long answer is searched off the runtime.
            let content = answer.content.clone();
            let found = tokio::task::spawn_blocking(move || extract(&content))
                .await
                .ok()
                .flatten();
            let parsed = found
                .ok_or_else(|| "no JSON found in the answer".to_string())
                .and_then(|v| serde_json::from_value::<T>(v).map_err(|e| e.to_string()));
            match parsed {
                Ok(v) => return Ok((v, usage)),
                Err(error) if !repaired => {
                    repaired = true;
                    tracing::info!("LLM answer was not valid JSON ({error}); asking for a repair");
                    let repair = prompts
                        .render(
                            crate::prompts::JSON_REPAIR,
                            json!({"error": error, "schema": schema.to_string()}),
                        )
                        .map_err(|e| LlmError::BadJson {
                            error: format!("{error} (and the repair prompt failed: {e})"),
                            excerpt: String::new(),
                        })?;
                    messages.push(Message::assistant(answer.content.clone()));
                    messages.push(Message::user(repair));
                }
                Err(error) => {
                    let excerpt: String = answer.content.chars().take(200).collect();
                    return Err(LlmError::BadJson { error, excerpt });
                }
            }
        }
    }
}

fn jitter(d: Duration) -> Duration {
    // ±25 % so parallel callers do not retry in lockstep.
    let factor = 0.75 + fastrand::f64() * 0.5;
    d.mul_f64(factor)
}

fn error_message(body: &str) -> String {
    let v: Option<Value> = serde_json::from_str(body).ok();
    let msg = v
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
        })
        .and_then(|m| m.as_str().map(str::to_string))
        .unwrap_or_else(|| body.chars().take(300).collect());
    msg.trim().to_string()
}

fn parse_answer(text: &str, model: &str, price: Option<Price>) -> Result<ChatAnswer, LlmError> {
    let raw: Value = serde_json::from_str(text).map_err(|e| LlmError::Protocol(e.to_string()))?;
    if let Some(err) = raw.get("error") {
        // Some gateways answer 200 with an error object.
        return Err(LlmError::Protocol(format!("provider error: {err}")));
    }
    let choices = raw
        .get("choices")
        .and_then(Value::as_array)
        .ok_or(LlmError::Empty("no `choices` in the response"))?;
    let first = choices.first().ok_or(LlmError::Empty("`choices` is empty"))?;
    let content = first
        .pointer("/message/content")
        .and_then(Value::as_str)
        .ok_or(LlmError::Empty("`content` is null"))?;
    let content = strip_think(content);
    if content.is_empty() {
        return Err(LlmError::Empty("the answer is empty"));
    }
    let usage = Usage::from_response(&raw, price);
    let model = raw.get("model").and_then(Value::as_str).unwrap_or(model).to_string();
    Ok(ChatAnswer {
        content,
        usage,
        model,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_failures() {
        let ok = r#"{"model":"m","choices":[{"message":{"role":"assistant","content":"<think>x</think>Hi","reasoning":"secret"}}],
                     "usage":{"prompt_tokens":10,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":2},"cost":0.001}}"#;
        let a = parse_answer(ok, "m", None).unwrap();
        assert_eq!(a.content, "Hi");
        assert_eq!(
            (
                a.usage.prompt_tokens,
                a.usage.completion_tokens,
                a.usage.reasoning_tokens
            ),
            (10, 5, 2)
        );
        assert_eq!(a.usage.cost_usd, Some(0.001));
        let err = |body: &str| parse_answer(body, "m", None).unwrap_err().to_string();
        assert_eq!(err(r#"{"choices":[]}"#), "LLM returned no answer (`choices` is empty)");
        assert_eq!(
            err(r#"{"choices":[{"message":{"content":null}}]}"#),
            "LLM returned no answer (`content` is null)"
        );
        assert!(err("not json").starts_with("LLM response could not be read"));
    }

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("sk-123");
        assert_eq!(format!("{s:?}"), "Secret(***)");
    }
}
