//! Structured answers: JSON asked for in the best mode the endpoint supports, extracted,
//! checked against the expected shape, repaired once.

use super::client::*;
use super::types::*;
use std::time::Instant;

use serde_json::{Value, json};

use super::json::extract;
use super::usage::Usage;
use scholia_prompts::Library;

impl ChatClient {
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
            let found = scholia_base::spawn_blocking(move || extract(&content)).await;
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
