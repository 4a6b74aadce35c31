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

use serde::Serialize;
use tokio::sync::Semaphore;

use super::refusal::{Refusal, jitter};
use super::types::*;

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
    pub(super) fn from_u8(v: u8) -> StructuredMode {
        match v {
            0 => StructuredMode::JsonSchema,
            1 => StructuredMode::JsonObject,
            _ => StructuredMode::PromptOnly,
        }
    }

    pub(super) fn next(self) -> Option<StructuredMode> {
        match self {
            StructuredMode::JsonSchema => Some(StructuredMode::JsonObject),
            StructuredMode::JsonObject => Some(StructuredMode::PromptOnly),
            StructuredMode::PromptOnly => None,
        }
    }
}

/// What an endpoint (base URL and model) turned out to support.
#[derive(Debug, Clone, Copy)]
pub(super) struct Negotiated {
    pub(super) mode: StructuredMode,
    /// Streams at all.
    pub(super) stream: bool,
    /// Accepts `stream_options` (usage in the last chunk).
    pub(super) stream_usage: bool,
    /// Context window learnt from an overflow error.
    pub(super) context: Option<u32>,
    /// One call at a time: the server cut a stream when another call arrived (llama-cpp-python
    /// interrupts a running request for a new one).
    pub(super) serial: bool,
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
    pub(super) http: reqwest::Client,
    pub(super) config: LlmConfig,
    pub(super) permits: Arc<Semaphore>,
    /// Held around each request once the endpoint is known to take one call at a time.
    pub(super) serial: tokio::sync::Mutex<()>,
    pub(super) mode: AtomicU8,
    /// The context window the server reports, asked once.
    pub(super) probed: tokio::sync::OnceCell<Option<u32>>,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

pub(super) const MIN_BACKOFF: Duration = Duration::from_millis(400);
/// A chat answer larger than this is refused (a deep-research report is a few hundred KB).
pub(super) const MAX_RESPONSE_BYTES: usize = 16 << 20;
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(8);
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

    pub(super) fn endpoint_key(config: &LlmConfig, model: Option<&str>) -> String {
        format!(
            "{}|{}",
            config.base_url.trim_end_matches('/'),
            model.unwrap_or(&config.model)
        )
    }

    pub(super) fn negotiated_for(config: &LlmConfig, model: Option<&str>) -> Negotiated {
        let key = Self::endpoint_key(config, model);
        let map = scholia_base::lock(&NEGOTIATED);
        map.as_ref().and_then(|m| m.get(&key)).copied().unwrap_or_default()
    }

    pub(super) fn negotiated(&self, model: Option<&str>) -> Negotiated {
        Self::negotiated_for(&self.config, model)
    }

    pub(super) fn learn(&self, model: Option<&str>, change: impl FnOnce(&mut Negotiated)) {
        let key = Self::endpoint_key(&self.config, model);
        let mut map = scholia_base::lock(&NEGOTIATED);
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

    pub(super) fn step_down(&self, from: StructuredMode, why: &str) -> Option<StructuredMode> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::attempt::parse_answer;

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
