//! The fake OpenRouter serving a Perplexity (Sonar) model.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::behaviour::Behaviour;
use crate::FakeState;

/// OpenRouter serving a Perplexity model: top-level `citations`, `message.annotations` of type
/// `url_citation`, `usage.cost`. Misbehaviour comes from a `fake:<flags>` word in the question:
/// `stall` · `latency=MS` · `status=CODE` (always) · `server-error-first=N` · `think` ·
/// `reasoning` · `no-citations` · `annotations-only` · `invent` (links no citation gave) ·
/// `long=N` (an answer of about N
/// characters). A missing key or `bad-key` gets 401.
pub(super) async fn sonar(state: &FakeState, headers: &HeaderMap, model: &str, body: &Value) -> Response {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
    if auth.is_empty() || auth == "Bearer bad-key" {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": {"message": "No auth credentials found", "code": 401}})),
        )
            .into_response();
    }
    let question = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let spec = question
        .split_whitespace()
        .find(|w| w.starts_with("fake:"))
        .unwrap_or("");
    let b = Behaviour::parse(spec);
    if let Some(ms) = b.num("latency") {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if b.has("stall") {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let n = state.count(&format!("sonar#{question}"));
    let status = b
        .num("status")
        .map(|s| s as u16)
        .or_else(|| b.num("server-error-first").filter(|k| u64::from(n) <= *k).map(|_| 500));
    if let Some(code) = status {
        let mut headers = HeaderMap::new();
        if code == 429 {
            headers.insert("retry-after", HeaderValue::from_static("1"));
        }
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return (
            status,
            headers,
            Json(json!({"error": {"message": format!("fake status {code}"), "code": code}})),
        )
            .into_response();
    }
    let mut content = format!("Fake {model} answer to: {question} [1][2]");
    if b.has("invent") {
        content.push_str(
            "\n\nSee [a made-up study](https://invented.example/study), <https://invented.example/auto>, \
             https://invented.example/bare and the vault's [[Imaginary Note]].",
        );
    }
    if let Some(n) = b.num("long") {
        let sentence = "Koji grows on steamed rice at thirty degrees for two days. ";
        content.push_str("\n\n");
        content.push_str(&sentence.repeat(n as usize / sentence.len() + 1));
    }
    if b.has("think") {
        content = format!("<think>private chain of thought</think>\n{content}");
    }
    let citations = ["https://sonar.example/one", "https://sonar.example/two"];
    let mut message = json!({"role": "assistant", "content": content});
    if !b.has("no-citations") {
        message["annotations"] = json!([
            {"type": "url_citation", "url_citation": {"url": "https://sonar.example/two/", "title": "Two", "start_index": 0, "end_index": 4}},
            {"type": "url_citation", "url_citation": {"url": "https://sonar.example/three", "title": "Three", "start_index": 5, "end_index": 9}}
        ]);
    }
    if b.has("reasoning") {
        message["reasoning"] = json!("hidden reasoning text");
    }
    let mut response = json!({
        "id": format!("gen-fake-{}", fastrand::u32(..)),
        "provider": "Perplexity",
        "model": model,
        "object": "chat.completion",
        "created": 1_760_000_000,
        "choices": [{"index": 0, "finish_reason": "stop", "native_finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 40, "total_tokens": 52, "cost": 0.0061,
                  "completion_tokens_details": {"reasoning_tokens": 0}}
    });
    if !b.has("no-citations") && !b.has("annotations-only") {
        response["citations"] = json!(citations);
    }
    Json(response).into_response()
}
