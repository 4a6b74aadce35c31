//! The Gemini Interactions API (`/v1beta/interactions`), as background deep research uses it.
//!
//! The agent name carries the behaviour, like the fake LLM's model: `fake:FLAGS` with
//! `polls=N` (completed on the N-th GET; default 2; `polls=0`: the create call already answers
//! completed, the seed's synchronous case) · `steps` (the newer `steps[]` shape instead
//! of `outputs[]`) · `fail` (ends `failed`) · `incomplete` (ends `incomplete` with a partial
//! report) · `gone` (GET answers 404, as an expired session does) · `flaky=N` (the first N GETs
//! answer 503) · `create-ms=MS` (a slow create) · `silent` (nothing written before it ends
//! unfinished: a cancel reaches Gemini before its first words) · `cancel-ms=MS` (the cancel
//! answers MS after it took effect, while polls already see `cancelled`). Cancel is recorded
//! (`/_requests`) and makes the interaction `cancelled`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::FakeState;
use crate::llm::Behaviour;

#[derive(Debug, Clone, Default)]
pub struct Interaction {
    pub agent: String,
    pub input: String,
    pub polls: u64,
    pub cancelled: bool,
}

fn unauthorised(headers: &HeaderMap) -> Option<Response> {
    match headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()) {
        Some(k) if !k.is_empty() => None,
        _ => Some(
            (
                StatusCode::UNAUTHORIZED,
                Json(json!({"error": {"code": 401, "message": "API key not valid", "status": "UNAUTHENTICATED"}})),
            )
                .into_response(),
        ),
    }
}

pub async fn create(State(state): State<Arc<FakeState>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    state.record("/v1beta/interactions", body.clone());
    if let Some(r) = unauthorised(&headers) {
        return r;
    }
    let (Some(input), Some(agent)) = (body["input"].as_str(), body["agent"].as_str()) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"code": 400, "message": "`input` and `agent` are required", "status": "INVALID_ARGUMENT"}})),
        )
            .into_response();
    };
    if body["background"] != json!(true) {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"code": 400, "message": "agents require background=true", "status": "INVALID_ARGUMENT"}})),
        )
            .into_response();
    }
    if let Some(ms) = Behaviour::parse(agent).num("create-ms") {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    let id = format!("v1_{:016x}", fastrand::u64(..));
    let interaction = Interaction {
        agent: agent.to_string(),
        input: input.to_string(),
        ..Default::default()
    };
    state
        .interactions
        .lock()
        .unwrap()
        .insert(id.clone(), interaction.clone());
    if Behaviour::parse(agent).num("polls") == Some(0) {
        // Usage as after one poll: the work was done before the answer.
        let done = Interaction {
            polls: 1,
            ..interaction
        };
        return Json(render(&id, &done, "completed", Behaviour::parse(agent).has("steps"))).into_response();
    }
    Json(json!({"id": id, "status": "in_progress", "agent": agent, "created": "2026-11-22T10:00:00Z"})).into_response()
}

pub async fn get(State(state): State<Arc<FakeState>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    state.record(&format!("/v1beta/interactions/{id}"), Value::Null);
    if let Some(r) = unauthorised(&headers) {
        return r;
    }
    let Some(snapshot) = touch(&state, &id, |i| i.polls += 1) else {
        return not_found(&id);
    };
    let b = Behaviour::parse(&snapshot.agent);
    if b.has("gone") {
        return not_found(&id);
    }
    if b.num("flaky").is_some_and(|n| snapshot.polls <= n) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": {"code": 503, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}})),
        )
            .into_response();
    }
    let done = snapshot.polls >= b.num("polls").unwrap_or(2) + b.num("flaky").unwrap_or(0);
    let status = match (snapshot.cancelled, done) {
        (true, _) => "cancelled",
        (false, false) => "in_progress",
        (false, true) if b.has("fail") => "failed",
        (false, true) if b.has("incomplete") => "incomplete",
        (false, true) => "completed",
    };
    Json(render(&id, &snapshot, status, b.has("steps"))).into_response()
}

pub async fn cancel(State(state): State<Arc<FakeState>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    state.record(&format!("/v1beta/interactions/{id}/cancel"), Value::Null);
    if let Some(r) = unauthorised(&headers) {
        return r;
    }
    let Some(snapshot) = touch(&state, &id, |i| i.cancelled = true) else {
        return not_found(&id);
    };
    if let Some(ms) = Behaviour::parse(&snapshot.agent).num("cancel-ms") {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    Json(render(
        &id,
        &snapshot,
        "cancelled",
        Behaviour::parse(&snapshot.agent).has("steps"),
    ))
    .into_response()
}

/// Changes a known interaction and returns it as changed.
fn touch(state: &FakeState, id: &str, change: impl FnOnce(&mut Interaction)) -> Option<Interaction> {
    let mut all = state.interactions.lock().unwrap();
    let i = all.get_mut(id)?;
    change(i);
    Some(i.clone())
}

fn not_found(id: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": {"code": 404, "message": format!("Interaction {id} not found."), "status": "NOT_FOUND"}})),
    )
        .into_response()
}

/// The interaction as the API shows it: a report once there is one (a partial one while
/// running), its `url_citation` sources, usage growing with each poll.
fn render(id: &str, i: &Interaction, status: &str, steps: bool) -> Value {
    let partial = status != "completed";
    let report = if partial {
        format!("# Notes so far on {}\n\nThe research was not finished.", i.input)
    } else {
        format!(
            "# {}\n\nA fake deep-research report. Starters are stable cultures of yeast and lactic acid bacteria [1].\n",
            i.input
        )
    };
    let annotations = json!([
        {"type": "url_citation", "url": "https://example.org/starter-science", "title": "Starter science", "start_index": 0, "end_index": 10},
        {"type": "url_citation", "url": "https://example.org/fermentation", "title": "Fermentation", "start_index": 11, "end_index": 20}
    ]);
    let usage = json!({"total_input_tokens": 10_000 * i.polls, "total_output_tokens": 1_000 * i.polls,
                       "total_thought_tokens": 500 * i.polls, "total_tokens": 11_500 * i.polls});
    let mut v = json!({"id": id, "status": status, "agent": i.agent, "usage": usage});
    if status == "in_progress" {
        return v;
    }
    if status == "failed" {
        v["error"] = json!({"code": 13, "message": "The agent could not complete the research."});
        return v;
    }
    if partial && Behaviour::parse(&i.agent).has("silent") {
        v["outputs"] = json!([]);
        return v;
    }
    let text = json!({"type": "text", "text": report, "annotations": annotations});
    if steps {
        v["steps"] = json!([
            {"type": "user_input", "content": [{"type": "text", "text": i.input}]},
            {"type": "thought", "summary": [{"type": "text", "text": "Planning searches"}]},
            {"type": "model_output", "content": [text]}
        ]);
    } else {
        v["outputs"] = json!([{"type": "thought", "summary": "Planning searches"}, text]);
    }
    v
}
