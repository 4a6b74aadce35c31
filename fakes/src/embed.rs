//! A fake OpenAI-compatible `/v1/embeddings`: vectors that know a few concepts by several
//! names (two texts that name one concept, in different words, are near), so tests can ask a
//! question that shares no word with the note that answers it. The model name chooses
//! misbehaviour: `fake-embed:down` (503 always), `fake-embed:rate-limit-first=N` (429 with
//! `Retry-After: 0` for the first N requests), `fake-embed:garbage` (not JSON),
//! `fake-embed:stall-after=N` (answers N requests, then holds each later one for [`STALL`]
//! before answering: a host that hangs), `fake-embed:down-after=N` (answers N, then 503).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::FakeState;
use super::llm::Behaviour;

/// Concepts and the words that name them.
const CONCEPTS: &[&[&str]] = &[
    &[
        "kombucha", "tea", "scoby", "fizzy", "beverage", "drink", "drinks", "soda", "brew",
    ],
    &[
        "sourdough",
        "bread",
        "loaf",
        "starter",
        "baking",
        "bake",
        "leaven",
        "dough",
    ],
    &["temperature", "warm", "heat", "hot", "cold", "thermometer", "degrees"],
    &[
        "bacteria",
        "yeast",
        "microbe",
        "microbes",
        "culture",
        "germs",
        "lactobacillus",
    ],
    &["journal", "log", "diary", "daily", "day", "record"],
    &["voice", "audio", "recorder", "memo", "memos", "microphone", "recording"],
];
pub const DIMS: usize = 32;
/// How long `stall-after` holds a request: far past any deadline a question may wait.
pub const STALL: std::time::Duration = std::time::Duration::from_secs(40);

/// The fake's vector of `text`.
pub fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMS];
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let w = w.to_lowercase();
        match CONCEPTS.iter().position(|c| c.contains(&w.as_str())) {
            Some(i) => v[i] += 3.0,
            None => v[CONCEPTS.len() + w.bytes().map(usize::from).sum::<usize>() % (DIMS - CONCEPTS.len())] += 0.2,
        }
    }
    v
}

pub async fn embeddings(State(state): State<Arc<FakeState>>, Json(body): Json<Value>) -> Response {
    state.record("/v1/embeddings", body.clone());
    let model = body["model"].as_str().unwrap_or("").to_string();
    let b = Behaviour::parse(&model);
    if b.has("down") {
        return (StatusCode::SERVICE_UNAVAILABLE, "embeddings are down").into_response();
    }
    if let Some(n) = b.value("rate-limit-first").and_then(|v| v.parse::<u32>().ok())
        && state.count(&format!("embed:{model}")) <= n
    {
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "0")], "slow down").into_response();
    }
    if let Some(n) = b.value("down-after").and_then(|v| v.parse::<u32>().ok())
        && state.count(&format!("embed:{model}")) > n
    {
        return (StatusCode::SERVICE_UNAVAILABLE, "embeddings are down").into_response();
    }
    if let Some(n) = b.value("stall-after").and_then(|v| v.parse::<u32>().ok())
        && state.count(&format!("embed:{model}")) > n
    {
        tokio::time::sleep(STALL).await;
    }
    if b.has("garbage") {
        return (StatusCode::OK, "<html>not json</html>").into_response();
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect(),
        _ => return (StatusCode::BAD_REQUEST, "input: a string or a list of strings").into_response(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t)}))
        .collect();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    Json(json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    }))
    .into_response()
}
