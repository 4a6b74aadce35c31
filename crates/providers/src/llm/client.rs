//! One OpenAI-compatible chat client (OpenRouter, Fireworks, OpenAI, Ollama, llama.cpp,
//! llama-cpp-python, vLLM).
//!
//! Every call has one deadline shared by its retries; 429, 5xx, timeouts and connection errors
//! are retried with exponential backoff and jitter, honouring `Retry-After`; concurrency per
//! provider is bounded by a semaphore. Research calls are streamed: a stream that stops
//! producing is abandoned after [`STALL`]. What an endpoint turned out to support (structured
//! output mode, streaming, its context window) is remembered per endpoint for the process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::json::{extract, strip_think};
use super::usage::{Price, Usage};
use scholia_base::error::{Coded, ErrorKind};
use scholia_prompts::Library;

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
    fn retryable(&self) -> bool {
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

/// How JSON is asked for. A server that refuses a mode (any 4xx or 5xx whose message names the
/// response format) is asked the next way, and the endpoint remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum StructuredMode {
    /// `response_format: json_schema`.
    JsonSchema = 0,
    /// `response_format: json_object`, with the schema (llama-cpp-python and llama.cpp
    /// constrain generation to it; others ignore it).
    JsonObject = 1,
    /// The schema in the prompt only.
    PromptOnly = 2,
}

impl StructuredMode {
    fn from_u8(v: u8) -> StructuredMode {
        match v {
            0 => StructuredMode::JsonSchema,
            1 => StructuredMode::JsonObject,
            _ => StructuredMode::PromptOnly,
        }
    }

    fn next(self) -> Option<StructuredMode> {
        match self {
            StructuredMode::JsonSchema => Some(StructuredMode::JsonObject),
            StructuredMode::JsonObject => Some(StructuredMode::PromptOnly),
            StructuredMode::PromptOnly => None,
        }
    }
}

/// What an endpoint (base URL and model) turned out to support.
#[derive(Debug, Clone, Copy)]
struct Negotiated {
    mode: StructuredMode,
    /// Streams at all.
    stream: bool,
    /// Accepts `stream_options` (usage in the last chunk).
    stream_usage: bool,
    /// Context window learnt from an overflow error.
    context: Option<u32>,
    /// One call at a time: the server cut a stream when another call arrived (llama-cpp-python
    /// interrupts a running request for a new one).
    serial: bool,
}

impl Default for Negotiated {
    fn default() -> Negotiated {
        Negotiated {
            mode: StructuredMode::JsonSchema,
            stream: true,
            stream_usage: true,
            context: None,
            serial: false,
        }
    }
}

/// Per endpoint, for the whole process: an engine rebuilt for new settings keeps what the
/// endpoint taught the previous one.
static NEGOTIATED: Mutex<Option<HashMap<String, Negotiated>>> = Mutex::new(None);

pub struct ChatClient {
    http: reqwest::Client,
    config: LlmConfig,
    permits: Arc<Semaphore>,
    /// Held around each request once the endpoint is known to take one call at a time.
    serial: tokio::sync::Mutex<()>,
    mode: AtomicU8,
    /// The context window the server reports, asked once.
    probed: tokio::sync::OnceCell<Option<u32>>,
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
/// A stream that has started and then sends nothing for this long (or a third of the call's
/// timeout, when shorter) is abandoned. The first chunk may take longer: a local model reads
/// the whole prompt first.
pub const STALL: Duration = Duration::from_secs(45);

impl ChatClient {
    pub fn new(config: LlmConfig) -> ChatClient {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("HTTP client builds");
        let known = Self::negotiated_for(&config, None);
        ChatClient {
            http,
            permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
            serial: tokio::sync::Mutex::new(()),
            mode: AtomicU8::new(known.mode as u8),
            config,
            probed: tokio::sync::OnceCell::new(),
        }
    }

    fn endpoint_key(config: &LlmConfig, model: Option<&str>) -> String {
        format!(
            "{}|{}",
            config.base_url.trim_end_matches('/'),
            model.unwrap_or(&config.model)
        )
    }

    fn negotiated_for(config: &LlmConfig, model: Option<&str>) -> Negotiated {
        let key = Self::endpoint_key(config, model);
        let map = NEGOTIATED.lock().unwrap_or_else(|e| e.into_inner());
        map.as_ref().and_then(|m| m.get(&key)).copied().unwrap_or_default()
    }

    fn negotiated(&self, model: Option<&str>) -> Negotiated {
        Self::negotiated_for(&self.config, model)
    }

    fn learn(&self, model: Option<&str>, change: impl FnOnce(&mut Negotiated)) {
        let key = Self::endpoint_key(&self.config, model);
        let mut map = NEGOTIATED.lock().unwrap_or_else(|e| e.into_inner());
        change(map.get_or_insert_with(HashMap::new).entry(key).or_default());
    }

    /// The model's context window in tokens: configured, learnt from an overflow, or as the
    /// server reports it; `None` when nothing says (hosted APIs with large windows).
    pub async fn context_tokens(&self) -> Option<u32> {
        if let Some(n) = self.config.context_tokens {
            return Some(n);
        }
        if let Some(n) = self.negotiated(None).context {
            return Some(n);
        }
        *self
            .probed
            .get_or_init(|| async {
                let n = super::window::probe(&self.http, &self.config.base_url, &self.config.model).await;
                if let Some(n) = n {
                    tracing::info!("LLM context window: {n} tokens (reported by the server)");
                }
                n
            })
            .await
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    pub fn structured_mode(&self) -> StructuredMode {
        StructuredMode::from_u8(self.mode.load(Ordering::Relaxed))
    }

    fn step_down(&self, from: StructuredMode, why: &str) -> Option<StructuredMode> {
        let next = from.next()?;
        // Only the first of several parallel callers logs and records it.
        if self
            .mode
            .compare_exchange(from as u8, next as u8, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            tracing::warn!("the LLM refused {from:?} output ({why}); asking with {next:?} from now on");
            self.learn(None, |n| n.mode = next);
        }
        let now = self.structured_mode();
        Some(if (now as u8) > (next as u8) { now } else { next })
    }

    /// The default deadline for a call starting now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.config.timeout
    }

    /// One chat completion, retried until `deadline` on transient failures.
    pub async fn chat(&self, req: &ChatRequest, deadline: Instant) -> Result<ChatAnswer, LlmError> {
        self.chat_with(req, deadline, None).await
    }

    /// Like [`ChatClient::chat`]; a streamed answer reports its generated tokens to `progress`.
    pub async fn chat_with(
        &self,
        req: &ChatRequest,
        deadline: Instant,
        progress: Option<&(dyn Fn(u64) + Send + Sync)>,
    ) -> Result<ChatAnswer, LlmError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let _permit = tokio::time::timeout(wait, self.permits.acquire())
            .await
            .map_err(|_| LlmError::Timeout(self.config.timeout))?
            .expect("semaphore never closes");
        let started = Instant::now();
        let model = req.model.as_deref();
        let mut backoff = MIN_BACKOFF;
        let (mut refused, mut server_errors) = (0, 0);
        let mut plain = false;
        loop {
            let mut known = self.negotiated(model);
            known.stream &= !plain;
            let in_flight = self.config.max_concurrency.max(1) - self.permits.available_permits();
            let serial = match known.serial {
                true => Some(self.serial.lock().await),
                false => None,
            };
            let (result, retry_after) = self.attempt(req, deadline, known, progress).await;
            drop(serial);
            let err = match result {
                Ok(answer) => {
                    tracing::info!(
                        model = %answer.model,
                        ms = started.elapsed().as_millis() as u64,
                        prompt_tokens = answer.usage.prompt_tokens,
                        completion_tokens = answer.usage.completion_tokens,
                        streamed = req.stream && known.stream,
                        "LLM call"
                    );
                    return Ok(answer);
                }
                Err(Refusal::Stream(why)) => {
                    tracing::warn!("the LLM refused streaming options ({why}); asking without them from now on");
                    self.learn(model, |n| {
                        if n.stream_usage {
                            n.stream_usage = false;
                        } else {
                            n.stream = false;
                        }
                    });
                    continue;
                }
                Err(Refusal::EmptyStream) if !plain => {
                    tracing::warn!("the LLM's streamed answer ended before any output; asking once without streaming");
                    plain = true;
                    continue;
                }
                Err(Refusal::EmptyStream) => LlmError::Empty("the stream ended before any output"),
                Err(Refusal::Cut(reason)) if in_flight > 1 && !known.serial => {
                    tracing::warn!(
                        "the LLM server cut a streamed answer while another call was running ({reason}); sending one call at a time from now on"
                    );
                    self.learn(model, |n| n.serial = true);
                    continue;
                }
                // llama-cpp-python ends an interrupted stream cleanly, with nothing in it.
                Err(Refusal::Error(LlmError::Empty(why)))
                    if in_flight > 1 && !known.serial && req.stream && known.stream =>
                {
                    tracing::warn!(
                        "the LLM sent an empty streamed answer while another call was running ({why}); sending one call at a time from now on"
                    );
                    self.learn(model, |n| n.serial = true);
                    continue;
                }
                Err(Refusal::Cut(reason)) => LlmError::Unreachable {
                    base_url: crate::http::redact(&self.config.base_url),
                    reason,
                },
                Err(Refusal::Error(e)) => e,
            };
            if let LlmError::ContextExceeded { limit: Some(n), .. } = &err {
                let n = *n;
                self.learn(None, |k| k.context = Some(n));
            }
            let err = match err {
                // Nothing listening is rarely fixed by waiting: give up after three tries.
                e @ LlmError::Unreachable { .. } if refused >= 2 => e,
                // A server failing four times in a row is down, not hiccuping.
                e @ LlmError::Server { .. } if server_errors >= 3 => e,
                e if e.retryable() => {
                    match e {
                        LlmError::Unreachable { .. } => refused += 1,
                        LlmError::Server { .. } => server_errors += 1,
                        _ => {}
                    }
                    let wait = retry_after.unwrap_or_else(|| jitter(backoff));
                    if crate::http::past_deadline(wait, deadline) {
                        tracing::warn!("LLM call failed ({e}); not retrying: the deadline is nearer than {wait:?}");
                        return Err(match e {
                            LlmError::Timeout(_) => LlmError::Timeout(self.config.timeout),
                            other => other,
                        });
                    }
                    tracing::warn!("LLM call failed ({e}); retrying in {wait:?}");
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                e => e,
            };
            tracing::warn!(ms = started.elapsed().as_millis() as u64, "LLM call failed: {err}");
            return Err(err);
        }
    }

    async fn attempt(
        &self,
        req: &ChatRequest,
        deadline: Instant,
        known: Negotiated,
        progress: Option<&(dyn Fn(u64) + Send + Sync)>,
    ) -> (Result<ChatAnswer, Refusal>, Option<Duration>) {
        let fail = |e: LlmError| (Err(Refusal::Error(e)), None);
        let endpoint = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        // What messages show: never the `user:password@` a base URL may carry.
        let base_url = crate::http::redact(self.config.base_url.trim_end_matches('/'));
        let model = req.model.clone().unwrap_or_else(|| self.config.model.clone());
        let stream = req.stream && known.stream;
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
        if stream {
            body["stream"] = json!(true);
            if known.stream_usage {
                body["stream_options"] = json!({"include_usage": true});
            }
        }
        let mut builder = self.http.post(endpoint).json(&body);
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return fail(LlmError::Timeout(self.config.timeout));
        }
        let response = match tokio::time::timeout(left, builder.send()).await {
            Err(_) => return fail(LlmError::Timeout(self.config.timeout)),
            Ok(Err(e)) if e.is_timeout() => return fail(LlmError::Timeout(self.config.timeout)),
            Ok(Err(e)) => {
                let reason = e.without_url().to_string();
                return fail(LlmError::Unreachable { base_url, reason });
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        let retry_after = crate::http::retry_after_header(response.headers());
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if (200..300).contains(&status) && is_sse {
            let prompt_chars: usize = req.messages.iter().map(|m| m.content.len()).sum();
            let result = match self
                .read_stream(response, deadline, prompt_chars, &model, progress)
                .await
            {
                Err(LlmError::Empty(EMPTY_STREAM)) => Err(Refusal::EmptyStream),
                Err(LlmError::Unreachable { reason, .. }) if reason.starts_with(CUT) => Err(Refusal::Cut(reason)),
                other => other.map_err(Refusal::Error),
            };
            return (result, retry_after);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let text = match tokio::time::timeout(left, crate::http::read_text(response, MAX_RESPONSE_BYTES)).await {
            Err(_) => return fail(LlmError::Timeout(self.config.timeout)),
            Ok(Err(crate::http::BodyError::TooLarge(cap))) => {
                return fail(LlmError::Protocol(format!("the response is larger than {cap} bytes")));
            }
            Ok(Err(crate::http::BodyError::Read(reason))) => {
                return fail(LlmError::Unreachable { base_url, reason });
            }
            Ok(Ok(t)) => t,
        };
        if (200..300).contains(&status) {
            return (
                parse_answer(&text, &model, self.config.price).map_err(Refusal::Error),
                retry_after,
            );
        }
        let message = error_message(&text);
        if matches!(status, 401 | 403 | 404 | 429) {
            let e = match status {
                401 | 403 => LlmError::Auth {
                    base_url,
                    status,
                    key_source: self.config.key_source,
                },
                404 => LlmError::ModelNotFound { base_url, model },
                _ => LlmError::RateLimited { base_url },
            };
            return (Err(Refusal::Error(e)), retry_after);
        }
        // What a refusal is about, whatever its status: llama-cpp-python answers 500 to a
        // response format it does not know, vLLM 422, llama.cpp and Ollama 400.
        let lower = text.to_lowercase();
        if req.response_format.is_some()
            && ["response_format", "json_schema", "json_object", "grammar"]
                .iter()
                .any(|w| lower.contains(w))
        {
            return fail(LlmError::FormatUnsupported {
                base_url,
                status,
                message,
            });
        }
        if let Some(limit) = super::window::overflow(&message) {
            return fail(LlmError::ContextExceeded {
                base_url,
                limit,
                message,
            });
        }
        if stream && (lower.contains("stream_options") || (status < 500 && lower.contains("stream"))) {
            return (Err(Refusal::Stream(message)), None);
        }
        let e = if status >= 500 {
            LlmError::Server {
                base_url,
                status,
                message,
            }
        } else {
            LlmError::Rejected {
                base_url,
                status,
                message,
            }
        };
        (Err(Refusal::Error(e)), retry_after)
    }

    /// Reads a streamed answer: chunks until `[DONE]` or the end, each within [`STALL`] of the
    /// last once output has started, all before `deadline`.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        deadline: Instant,
        prompt_chars: usize,
        model: &str,
        progress: Option<&(dyn Fn(u64) + Send + Sync)>,
    ) -> Result<ChatAnswer, LlmError> {
        let mut events = super::stream::Events::default();
        let mut answer = super::stream::Assembled::default();
        let mut bytes = 0usize;
        let stall = STALL.min(self.config.timeout / 3);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = if answer.chunks > 0 { left.min(stall) } else { left };
            let chunk = match tokio::time::timeout(wait, response.chunk()).await {
                Err(_) if answer.chunks > 0 && wait == stall => return Err(LlmError::Stalled(stall)),
                Err(_) => return Err(LlmError::Timeout(self.config.timeout)),
                Ok(Err(e)) => {
                    let e = e.without_url();
                    return Err(LlmError::Unreachable {
                        base_url: crate::http::redact(&self.config.base_url),
                        reason: if bytes > 0 {
                            format!("{CUT}: {e}")
                        } else {
                            e.to_string()
                        },
                    });
                }
                Ok(Ok(c)) => c,
            };
            let datas = match &chunk {
                Some(c) => {
                    bytes += c.len();
                    if bytes > MAX_RESPONSE_BYTES {
                        return Err(LlmError::Protocol(format!(
                            "the response is larger than {MAX_RESPONSE_BYTES} bytes"
                        )));
                    }
                    events.push(c)
                }
                None => events.finish(),
            };
            let before = answer.chunks;
            for data in datas {
                answer.add(&data).map_err(|m| match super::window::overflow(&m) {
                    Some(limit) => LlmError::ContextExceeded {
                        base_url: crate::http::redact(&self.config.base_url),
                        limit,
                        message: m,
                    },
                    None => LlmError::Protocol(format!("provider error in the stream: {m}")),
                })?;
            }
            if let Some(p) = progress
                && answer.chunks > before
            {
                p(answer.chunks);
            }
            if chunk.is_none() && bytes == 0 {
                return Err(LlmError::Empty(EMPTY_STREAM));
            }
            if answer.done || chunk.is_none() {
                break;
            }
        }
        let raw = std::mem::take(&mut answer).into_response(prompt_chars);
        parse_answer(&raw.to_string(), model, self.config.price)
    }

    /// Asks for JSON shaped like `schema` (at most `max_tokens` of it) and deserializes it into
    /// `T`, negotiating how structured output is requested and repairing one malformed answer.
    #[allow(clippy::too_many_arguments)]
    pub async fn json<T: serde::de::DeserializeOwned>(
        &self,
        messages: Vec<Message>,
        schema_name: &str,
        schema: &Value,
        max_tokens: u32,
        prompts: &Library,
        deadline: Instant,
        progress: Option<&(dyn Fn(u64) + Send + Sync)>,
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
                StructuredMode::JsonObject => Some(json!({"type": "json_object", "schema": schema})),
                StructuredMode::PromptOnly => None,
            };
            let req = ChatRequest {
                messages: messages.clone(),
                temperature: Some(0.2),
                max_tokens: Some(max_tokens),
                response_format,
                stream: true,
                ..Default::default()
            };
            let answer = match self.chat_with(&req, deadline, progress).await {
                Ok(a) => a,
                Err(LlmError::FormatUnsupported { message, .. }) if mode != StructuredMode::PromptOnly => {
                    self.step_down(mode, &message);
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
                Ok(v) => {
                    tracing::info!(mode = ?mode, "LLM answered usable JSON ({schema_name})");
                    return Ok((v, usage));
                }
                Err(error) if !repaired => {
                    repaired = true;
                    tracing::warn!("LLM answer was not valid {schema_name} JSON ({error}); asking for a repair");
                    let repair = prompts
                        .render(
                            scholia_prompts::JSON_REPAIR,
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
                    tracing::warn!("LLM answer was not valid {schema_name} JSON after a repair: {error}");
                    let excerpt: String = answer.content.chars().take(200).collect();
                    return Err(LlmError::BadJson { error, excerpt });
                }
            }
        }
    }
}

/// Why an attempt did not answer: an error, or the endpoint refusing streaming (asked again
/// without it at once).
enum Refusal {
    Error(LlmError),
    Stream(String),
    /// A streamed answer that ended before any output: llama-cpp-python reports a prompt over
    /// its window that way, so the call is asked once more without streaming to learn why.
    EmptyStream,
    /// A streamed answer broken off after it had started.
    Cut(String),
}

const EMPTY_STREAM: &str = "the stream ended before any output";
const CUT: &str = "the stream was cut off";

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
        .or_else(|| v.as_ref().and_then(|v| v.get("detail")).map(|d| d.to_string()))
        .unwrap_or_else(|| body.to_string());
    // One line, short: servers put tracebacks in their messages.
    let line = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
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
