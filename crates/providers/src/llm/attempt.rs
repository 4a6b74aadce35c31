//! One attempt of a call: the request as the endpoint's negotiated mode needs it, the answer
//! read whole or streamed, refusals told apart from failures.

use super::client::*;
use super::refusal::*;
use super::types::*;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::json::strip_think;
use super::usage::{Price, Usage};

impl ChatClient {
    pub(super) async fn attempt(
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
    pub(super) async fn read_stream(
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
}

/// The message of an endpoint's error body (OpenAI's `error.message`, or a bare `error` or
/// `message`), else the body itself.
pub(super) fn error_message(body: &str) -> String {
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

pub(super) fn parse_answer(text: &str, model: &str, price: Option<Price>) -> Result<ChatAnswer, LlmError> {
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
