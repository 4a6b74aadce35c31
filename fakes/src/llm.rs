//! A fake OpenAI-compatible chat API that reads scholia's own prompts and answers them
//! deterministically, with misbehaviour chosen by the model name:
//! `fake:<flag>,<flag>=<n>,…`, flags:
//!
//! `latency=MS` · `no-json-schema` (400 on json_schema) · `no-response-format` (400 on any) ·
//! `reject-schema=SHAPE` / `reject-format=SHAPE` (json_schema / any response format refused the
//! way SHAPE does: `llama.cpp` 400, `llama-cpp-python` 500, `ollama` 400, `vllm` 422) ·
//! `rate-limit-first=N` (429 + Retry-After: 1) · `server-error-first=N` (500) · `stall` ·
//! `malformed-first` · `malformed-always` · `empty-choices` · `null-content` · `think` ·
//! `fail-call=K,fault=F` (the K-th request fails with fault F, see `faults`; `;` for `:`) ·
//! `hallucinate` (invented citations) · `hostile` (a synthesis that tries to escape its section)
//! · `no-topics` · `too-many-topics` · `fail-synthesis` · `hostile-links` (reference
//! definitions, schemes in every spelling, plugin code) · `long-synthesis=N` (N more characters).
//!
//! What a small local model does: `echo-topics` (the schema's description and numbers as
//! topics) · `echo-prompt` (a synthesis that is its prompt, repeated) · `echo-prompt-once` (the
//! first synthesis only) · `loop` (a synthesis repeating one sentence) · `copy-note` (a
//! synthesis copying the note) · `echo-page` (page extraction echoing its instructions) ·
//! `echo-example` (a deep-search round answering with the prompt's own JSON example).
//!
//! Streaming (`"stream": true`): `no-stream` (answers plain JSON anyway) ·
//! `reject-stream-options` (400 naming `stream_options`) · `stall-stream` (a few chunks, then
//! nothing) · `chunk-ms=MS` (delay between chunks) · `interrupt` (a stream is broken off when
//! another streamed request arrives, as llama-cpp-python's `interrupt_requests` does). Context: `ctx=N` (a prompt plus
//! `max_tokens` over N tokens is refused as llama-cpp-python does: an empty event stream when
//! streamed, an OpenAI-style 400 otherwise).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::FakeState;

mod answers;
mod behaviour;
mod sonar;

pub use behaviour::Behaviour;

use answers::{completion, data_block, deep_round, page_extract, synthesis, topics_json};
use sonar::sonar;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Task {
    Topics,
    Page,
    Synthesis,
    PlanSearches,
    DeepRound,
    Other,
}

fn task_of(text: &str) -> Task {
    if text.contains("# Task: topic extraction") {
        Task::Topics
    } else if text.contains("# Task: page extraction") {
        Task::Page
    } else if text.contains("# Task: synthesis") {
        Task::Synthesis
    } else if text.contains("# Task: plan searches") {
        Task::PlanSearches
    } else if text.contains("# Task: deep search") {
        Task::DeepRound
    } else {
        Task::Other
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

pub async fn chat(State(state): State<Arc<FakeState>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    state.record("/v1/chat/completions", body.clone());
    let model = body["model"].as_str().unwrap_or("fake").to_string();
    if model.starts_with("perplexity/") {
        return sonar(&state, &headers, &model, &body).await;
    }
    let b = Behaviour::parse(&model);
    let latency = state.latency.llm + Duration::from_millis(b.num("latency").unwrap_or(0));
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if b.has("stall") {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let n = state.count(&model);
    if b.num("fail-call").is_some_and(|k| u64::from(n) == k) {
        // `fault` uses `;` for `:` (a model name keeps its commas and colons for flags).
        let fault = b.value("fault").unwrap_or("500").replace(';', ":");
        return super::faults::respond(&fault).await;
    }
    if b.num("rate-limit-first").is_some_and(|k| u64::from(n) <= k) {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("1"));
        return (
            StatusCode::TOO_MANY_REQUESTS,
            headers,
            Json(json!({"error": {"message": "rate limited"}})),
        )
            .into_response();
    }
    if b.num("server-error-first").is_some_and(|k| u64::from(n) <= k) {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded");
    }
    let format = body
        .pointer("/response_format/type")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(f) = format.as_deref() {
        let shape = if f == "json_schema" {
            b.value("reject-schema")
        } else {
            None
        }
        .or(b.value("reject-format"));
        if let Some(shape) = shape {
            return format_refusal(shape, f);
        }
    }
    let streaming = body["stream"] == json!(true) && !b.has("no-stream");
    if streaming && b.has("reject-stream-options") && body.get("stream_options").is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "Unrecognized request argument supplied: stream_options",
        );
    }
    if let Some(ctx) = b.num("ctx") {
        let prompt: usize = body["messages"]
            .as_array()
            .map(|m| m.iter().filter_map(|m| m["content"].as_str()).map(str::len).sum())
            .unwrap_or(0);
        let wanted = (prompt / 4) as u64 + body["max_tokens"].as_u64().unwrap_or(0);
        if wanted > ctx {
            // llama-cpp-python: a streamed request over the window gets an empty 200 event
            // stream (the error is raised inside the generator); a plain one an OpenAI-style 400.
            if streaming {
                let mut r = axum::response::Response::new(axum::body::Body::empty());
                r.headers_mut().insert(
                    "content-type",
                    HeaderValue::from_static("text/event-stream; charset=utf-8"),
                );
                return r;
            }
            return error(
                StatusCode::BAD_REQUEST,
                &format!(
                    "This model's maximum context length is {ctx} tokens. However, you requested {wanted} tokens ({} in the messages, {} in the completion). Please reduce the length of the messages or completion.",
                    wanted - body["max_tokens"].as_u64().unwrap_or(0),
                    body["max_tokens"].as_u64().unwrap_or(0)
                ),
            );
        }
    }
    if b.has("no-response-format") && format.is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "response_format is not supported by this server",
        );
    }
    if b.has("no-json-schema") && format.as_deref() == Some("json_schema") {
        return error(
            StatusCode::BAD_REQUEST,
            "'response_format.type' json_schema is not supported; use json_object",
        );
    }
    if b.has("empty-choices") {
        return Json(json!({"id": "x", "object": "chat.completion", "model": model, "choices": []})).into_response();
    }
    if b.has("null-content") {
        return Json(completion(&model, Value::Null, 10)).into_response();
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let all_text: String = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let is_repair = last_user.starts_with("That answer could not be used");
    let is_retry = last_user.starts_with("Your previous answer could not be used");
    let task = task_of(&all_text);
    // The task's own prompt (a retry adds a message after it).
    let task_prompt = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.contains("# Task: "))
        .unwrap_or(last_user);
    let answer = match task {
        Task::Topics => {
            let key = format!("{model}#topics");
            let attempt = state.count(&key);
            let broken = b.has("malformed-always") || (b.has("malformed-first") && attempt == 1 && !is_repair);
            if broken {
                "Sure! Here are the topics: {\"topics\": [{\"topic\": \"unterminated".to_string()
            } else {
                let json = if b.has("echo-topics") {
                    json!({"topics": [
                        {"topic": "a short label that works as a web search query", "context": "what the note says about it, in one sentence", "type": "claim"},
                        {"topic": "1.0", "context": "1.0", "type": "claim"},
                        {"topic": "1.0", "context": "2.0", "type": "concept"}
                    ]})
                    .to_string()
                } else {
                    topics_json(&all_text, &b).to_string()
                };
                if format.is_some() {
                    json
                } else {
                    format!("Here you go:\n\n```json\n{json}\n```\n")
                }
            }
        }
        Task::Page if b.has("echo-page") => format!("{}\n\n{task_prompt}", system_of(&messages)),
        Task::Page => page_extract(task_prompt),
        Task::Synthesis => {
            if b.has("fail-synthesis") {
                return error(StatusCode::INTERNAL_SERVER_ERROR, "synthesis crashed");
            }
            let echo = b.has("echo-prompt") || (b.has("echo-prompt-once") && !is_retry);
            if echo {
                // What a 270M model wrote after 4,000 tokens: its prompt, over and over.
                format!("{}\n\n{task_prompt}", system_of(&messages)).repeat(3)
            } else if b.has("loop") {
                let first = synthesis(task_prompt, &Behaviour::default());
                let mut out = first.lines().take(3).collect::<Vec<_>>().join("\n");
                out.push_str(&"\nThe starter is alive and the bread will rise when the starter is alive.".repeat(12));
                out
            } else if b.has("copy-note") {
                let note = data_block(task_prompt, "note").unwrap_or("");
                format!("### The note\n\n{note}\n\n{}", synthesis(task_prompt, &b))
            } else {
                synthesis(task_prompt, &b)
            }
        }
        Task::PlanSearches => {
            let query = data_block(last_user, "user query").unwrap_or("?");
            let verifying = last_user.contains("source=\"current report\"");
            let queries: Vec<String> = (1..=5)
                .map(|i| format!("{query} {} {i}", if verifying { "check" } else { "angle" }))
                .collect();
            json!({ "queries": queries }).to_string()
        }
        Task::DeepRound => deep_round(last_user, &b),
        Task::Other => "I am a fake model and did not recognise this task.".to_string(),
    };
    let answer = if b.has("think") {
        format!("<think>Let me reason privately.</think>{answer}")
    } else {
        answer
    };
    let prompt_tokens = (all_text.len() / 4) as u64;
    if streaming {
        let usage = body.pointer("/stream_options/include_usage") == Some(&json!(true));
        let interrupt = b.has("interrupt").then(|| {
            (
                state.clone(),
                state.streams.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
            )
        });
        return stream(&model, answer, prompt_tokens, usage, &b, interrupt);
    }
    Json(completion(&model, Value::String(answer), prompt_tokens)).into_response()
}

fn system_of(messages: &[Value]) -> String {
    messages
        .iter()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A structured-output refusal as `shape`'s server words it.
fn format_refusal(shape: &str, format: &str) -> Response {
    let (status, body) = match shape {
        "llama-cpp-python" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": format!("1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{format}', 'ctx': {{'expected': \"'text' or 'json_object'\"}}}}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions"), "type": "internal_server_error", "param": null, "code": null}}),
        ),
        "ollama" => (
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": format!("invalid response_format type: {format}"), "type": "invalid_request_error", "param": null, "code": null}}),
        ),
        "vllm" => (
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"detail": [{"type": "literal_error", "loc": ["body", "response_format", "type"], "msg": "Input should be 'text'", "input": format}]}),
        ),
        _ => (
            StatusCode::BAD_REQUEST,
            json!({"error": {"code": 400, "message": format!("\"response_format\" type {format} is not supported"), "type": "invalid_request_error"}}),
        ),
    };
    (status, Json(body)).into_response()
}

/// The answer as server-sent events, a few characters per chunk, as OpenAI streams it.
fn stream(
    model: &str,
    answer: String,
    prompt_tokens: u64,
    usage: bool,
    b: &Behaviour,
    interrupt: Option<(Arc<FakeState>, u64)>,
) -> Response {
    let chunk_ms = b.num("chunk-ms").unwrap_or(0);
    let stall = b.has("stall-stream");
    let model = model.to_string();
    let pieces: Vec<String> = {
        let chars: Vec<char> = answer.chars().collect();
        chars.chunks(16).map(|c| c.iter().collect()).collect()
    };
    let body = async_stream(move |tx| async move {
        let chunk = |delta: Value, finish: Value| {
            let v = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            format!("data: {v}\n\n")
        };
        if tx.send(chunk(json!({"role": "assistant"}), Value::Null)).await.is_err() {
            return;
        }
        let n = pieces.len();
        for (i, p) in pieces.iter().enumerate() {
            if stall && i == 3.min(n.saturating_sub(1)) {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            if chunk_ms > 0 {
                tokio::time::sleep(Duration::from_millis(chunk_ms)).await;
            }
            if let Some((state, mine)) = &interrupt
                && state.streams.load(std::sync::atomic::Ordering::SeqCst) != *mine
            {
                let _ = tx.send(ABORT.to_string()).await;
                return;
            }
            if tx.send(chunk(json!({"content": p}), Value::Null)).await.is_err() {
                return;
            }
        }
        let _ = tx.send(chunk(json!({}), json!("stop"))).await;
        if usage {
            let v = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [],
                           "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n as u64}});
            let _ = tx.send(format!("data: {v}\n\n")).await;
        }
        let _ = tx.send("data: [DONE]\n\n".to_string()).await;
    });
    (
        [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// Sent through the channel to break the body off with an error, as a server that drops a
/// connection does.
const ABORT: &str = "\u{0}abort";

/// A body fed by `produce` through a channel.
fn async_stream<F, Fut>(produce: F) -> impl futures_core::Stream<Item = Result<String, std::io::Error>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<String>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(produce(tx));
    Receiver(rx)
}

struct Receiver(tokio::sync::mpsc::Receiver<String>);

impl futures_core::Stream for Receiver {
    type Item = Result<String, std::io::Error>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|o| {
            o.map(|s| match s == ABORT {
                true => Err(std::io::Error::other("interrupted by a newer request")),
                false => Ok(s),
            })
        })
    }
}

/// How a fake server reports its context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// llama.cpp's `GET /props`.
    LlamaCpp(u32),
    /// Ollama's `POST /api/show` with `num_ctx` among the parameters.
    Ollama(u32),
    /// llama-cpp-python: says nowhere, but its OpenAPI title names it and `/v1/completions`
    /// checks the prompt against the window first, then refuses `logprobs`.
    LlamaCppPython(u32),
}

/// llama-cpp-python's `GET /openapi.json` (its title; the rest left out).
pub async fn openapi(State(state): State<Arc<FakeState>>) -> Response {
    match *state.window.lock().unwrap() {
        Some(Window::LlamaCppPython(_)) => {
            Json(json!({"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API", "version": "0.0.1"}}))
                .into_response()
        }
        _ => (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response(),
    }
}

/// llama-cpp-python's `POST /v1/completions`, as far as its checks go: a prompt (a token a
/// word) at or over the window is a 400 naming it; `logprobs` without `--logits_all` a 500;
/// anything else one token of text.
pub async fn completions(State(state): State<Arc<FakeState>>, Json(body): Json<Value>) -> Response {
    state.record("/v1/completions", body.clone());
    let Some(Window::LlamaCppPython(ctx)) = *state.window.lock().unwrap() else {
        return (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response();
    };
    let tokens = body["prompt"].as_str().unwrap_or_default().split_whitespace().count() as u64;
    let max = body["max_tokens"].as_u64().unwrap_or(16);
    if tokens >= u64::from(ctx) {
        return error(
            StatusCode::BAD_REQUEST,
            &format!(
                "This model's maximum context length is {ctx} tokens, however you requested {} tokens ({tokens} in your prompt; {max} for the completion). Please reduce your prompt; or completion length.",
                tokens + max
            ),
        );
    }
    if !body["logprobs"].is_null() {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "logprobs is not supported for models created with logits_all=False",
        );
    }
    Json(json!({"id": "cmpl-1", "object": "text_completion", "choices": [{"text": "ok", "index": 0, "finish_reason": "length"}]}))
        .into_response()
}

pub async fn props(State(state): State<Arc<FakeState>>) -> Response {
    match *state.window.lock().unwrap() {
        Some(Window::LlamaCpp(n)) => {
            Json(json!({"default_generation_settings": {"n_ctx": n}, "total_slots": 1})).into_response()
        }
        _ => (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response(),
    }
}

pub async fn ollama_show(State(state): State<Arc<FakeState>>) -> Response {
    match *state.window.lock().unwrap() {
        Some(Window::Ollama(n)) => Json(json!({
            "parameters": format!("stop \"<end_of_turn>\"\nnum_ctx {n}"),
            "model_info": {"gemma3.context_length": 131072}
        }))
        .into_response(),
        _ => (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaviour_flags() {
        let b = Behaviour::parse("fake:no-json-schema,latency=300,rate-limit-first=2");
        assert!(b.has("no-json-schema") && !b.has("stall"));
        assert_eq!((b.num("latency"), b.num("rate-limit-first")), (Some(300), Some(2)));
        assert!(!Behaviour::parse("gpt-4o").has("stall"));
    }

    #[test]
    fn topics_from_a_note() {
        let prompt = "# Task: topic extraction\n<untrusted-data source=\"note\" path=\"a.md\">\n---\ntags: [x]\n---\n# T\n\n## Facts\n\n- Yeast makes gas.\n- Does rye help?\n</untrusted-data>";
        let t = topics_json(prompt, &Behaviour::default());
        let labels: Vec<_> = t["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["topic"].as_str().unwrap(), t["type"].as_str().unwrap()))
            .collect();
        assert_eq!(
            labels,
            vec![
                ("Facts", "concept"),
                ("Yeast makes gas", "claim"),
                ("Does rye help", "question")
            ]
        );
        let focused = format!("{prompt}\n<untrusted-data source=\"focus\">\nrye flour\n</untrusted-data>");
        assert_eq!(
            topics_json(&focused, &Behaviour::default())["topics"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}
