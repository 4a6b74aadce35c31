//! The Gemini Interactions API: create a background deep-research interaction, poll it, cancel
//! it. Both response shapes in the wild are read: the older `outputs[]` and the newer
//! `steps[]` (where the user's own input comes back as a step and is never part of the report).

use std::time::Duration;

use serde_json::{Value, json};

use crate::llm::Secret;

pub const BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";
pub const AGENT: &str = "deep-research-pro-preview-12-2025";

#[derive(Debug, thiserror::Error)]
pub enum InteractionError {
    #[error("Gemini Interactions at {base_url} is unreachable: {reason}")]
    Unreachable { base_url: String, reason: String },
    /// 403/404 on a stored id: the session is gone.
    #[error("Gemini Interactions: interaction `{0}` not found or not accessible")]
    Gone(String),
    #[error("Gemini Interactions refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("Gemini Interactions failed (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    #[error("Gemini Interactions answered something unreadable: {0}")]
    Protocol(String),
}

impl InteractionError {
    /// Worth trying again later: the network or the server, not the request.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            InteractionError::Unreachable { .. } | InteractionError::Server { .. }
        ) || matches!(self, InteractionError::Rejected { status: 429, .. })
    }
}

/// One poll's view of an interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Interaction {
    pub id: String,
    /// `in_progress`, `completed`, `failed`, `cancelled`, `incomplete`, …
    pub status: String,
    pub report: String,
    pub sources: Vec<Source>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub error: Option<String>,
    pub raw: Value,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Source {
    pub url: String,
    #[serde(default)]
    pub title: String,
}

impl Interaction {
    pub fn is_final(&self) -> bool {
        matches!(
            self.status.as_str(),
            "completed" | "failed" | "cancelled" | "incomplete"
        )
    }
}

#[derive(Clone)]
pub struct Interactions {
    http: reqwest::Client,
    base_url: String,
    key: Secret,
}

impl std::fmt::Debug for Interactions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interactions")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Interactions {
    pub fn new(base_url: &str, key: Secret) -> Interactions {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .expect("HTTP client builds");
        Interactions {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            key,
        }
    }

    /// `POST /interactions` with `background: true`.
    pub async fn create(&self, query: &str, agent: &str) -> Result<Interaction, InteractionError> {
        let body = json!({"input": query, "agent": agent, "background": true, "store": true});
        let v = self
            .send(
                self.http.post(format!("{}/interactions", self.base_url)).json(&body),
                None,
            )
            .await?;
        parse(v)
    }

    pub async fn get(&self, id: &str) -> Result<Interaction, InteractionError> {
        let v = self
            .send(
                self.http.get(format!("{}/interactions/{}", self.base_url, encode(id))),
                Some(id),
            )
            .await?;
        parse(v)
    }

    /// `POST /interactions/{id}/cancel`: stops the remote work (and its bill).
    pub async fn cancel(&self, id: &str) -> Result<(), InteractionError> {
        self.send(
            self.http
                .post(format!("{}/interactions/{}/cancel", self.base_url, encode(id)))
                .json(&json!({})),
            Some(id),
        )
        .await
        .map(|_| ())
    }

    async fn send(&self, req: reqwest::RequestBuilder, id: Option<&str>) -> Result<Value, InteractionError> {
        let base_url = crate::http::redact(&self.base_url);
        let response = req
            .header("x-goog-api-key", self.key.expose())
            .send()
            .await
            .map_err(|e| InteractionError::Unreachable {
                base_url: base_url.clone(),
                reason: e.without_url().to_string(),
            })?;
        let status = response.status().as_u16();
        let text = crate::http::read_text(response, 32 << 20).await.map_err(|e| match e {
            crate::http::BodyError::TooLarge(cap) => InteractionError::Protocol(format!("a response over {cap} bytes")),
            crate::http::BodyError::Read(reason) => InteractionError::Unreachable { base_url, reason },
        })?;
        if (200..300).contains(&status) {
            return serde_json::from_str(&text).map_err(|e| InteractionError::Protocol(e.to_string()));
        }
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| text.chars().take(300).collect());
        Err(match (status, id) {
            (403 | 404, Some(id)) => InteractionError::Gone(id.to_string()),
            (s, _) if s >= 500 => InteractionError::Server { status, message },
            _ => InteractionError::Rejected { status, message },
        })
    }
}

fn encode(id: &str) -> String {
    id.chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c.to_string(),
            false => format!("%{:02X}", c as u32 & 0xFF),
        })
        .collect()
}

/// Reads either response shape.
pub fn parse(raw: Value) -> Result<Interaction, InteractionError> {
    let id = raw["id"].as_str().unwrap_or_default().to_string();
    if id.is_empty() {
        return Err(InteractionError::Protocol("no `id` in the interaction".into()));
    }
    let status = raw["status"].as_str().unwrap_or("in_progress").to_string();
    let mut report = String::new();
    let mut sources: Vec<Source> = Vec::new();
    let mut take = |item: &Value, report: &mut String| {
        if item["type"].as_str().is_some_and(|t| t != "text") {
            return;
        }
        if let Some(t) = item["text"].as_str() {
            *report = t.to_string();
        }
        for a in item["annotations"].as_array().into_iter().flatten() {
            if a["type"] == "url_citation"
                && let Some(url) = a["url"].as_str()
                && !sources.iter().any(|s| s.url == url)
            {
                let title = a["title"].as_str().unwrap_or_default().to_string();
                sources.push(Source {
                    url: url.to_string(),
                    title,
                });
            }
        }
    };
    if let Some(outputs) = raw["outputs"].as_array() {
        // The report is the last text item.
        for item in outputs {
            take(item, &mut report);
        }
    } else if let Some(steps) = raw["steps"].as_array() {
        let mut parts = Vec::new();
        for step in steps.iter().filter(|s| s["type"] == "model_output") {
            let items: Vec<&Value> = match step["content"].as_array() {
                Some(c) => c.iter().collect(),
                None => vec![step],
            };
            for item in items {
                let mut text = String::new();
                take(item, &mut text);
                if !text.is_empty() {
                    parts.push(text);
                }
            }
        }
        report = parts.join("\n\n");
    }
    let usage = &raw["usage"];
    let tokens = |k: &str| usage[k].as_u64().unwrap_or(0);
    let error = raw
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Interaction {
        id,
        status,
        report,
        sources,
        input_tokens: tokens("total_input_tokens"),
        output_tokens: tokens("total_output_tokens") + tokens("total_thought_tokens"),
        error,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes() {
        let outputs = json!({"id": "i1", "status": "completed",
            "outputs": [{"type": "thought", "summary": "x"},
                        {"type": "text", "text": "draft"},
                        {"type": "text", "text": "# Report", "annotations": [
                            {"type": "url_citation", "url": "https://a.example/1", "title": "A"},
                            {"type": "url_citation", "url": "https://a.example/1", "title": "A"}]}],
            "usage": {"total_input_tokens": 10, "total_output_tokens": 5, "total_thought_tokens": 2}});
        let i = parse(outputs).unwrap();
        assert_eq!(
            (i.report.as_str(), i.sources.len(), i.input_tokens, i.output_tokens),
            ("# Report", 1, 10, 7)
        );
        let steps = json!({"id": "i2", "status": "completed", "steps": [
            {"type": "user_input", "content": [{"type": "text", "text": "my question"}]},
            {"type": "thought"},
            {"type": "model_output", "content": [{"type": "text", "text": "Answer", "annotations": [
                {"type": "url_citation", "url": "https://b.example/", "title": "B"}]}]}]});
        let i = parse(steps).unwrap();
        assert_eq!(i.report, "Answer");
        assert_eq!(
            i.sources,
            vec![Source {
                url: "https://b.example/".into(),
                title: "B".into()
            }]
        );
        assert!(parse(json!({"status": "completed"})).is_err());
        assert!(!parse(json!({"id": "x", "status": "in_progress"})).unwrap().is_final());
    }
}
