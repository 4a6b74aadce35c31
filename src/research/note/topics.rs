//! Stage 1: the topics worth researching, as JSON from the LLM.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::json;

use super::{Input, MAX_TOPICS, ResearchError, Topic};
use crate::engine::Engine;
use crate::llm::{ChatClient, Message, Usage};
use crate::prompts::{self, untrusted};

#[derive(Deserialize)]
#[serde(untagged)]
enum TopicsAnswer {
    Wrapped { topics: Vec<Topic> },
    Bare(Vec<Topic>),
}

pub(super) async fn extract(
    engine: &Engine,
    llm: &ChatClient,
    input: &Input,
    focus: Option<&str>,
) -> Result<(Vec<Topic>, Usage), ResearchError> {
    let prompt = engine.library.render(
        prompts::TOPIC_EXTRACTION,
        json!({"focus": focus, "max_topics": MAX_TOPICS, "path": input.rel, "note": untrusted(&input.for_llm)}),
    )?;
    let schema = json!({
        "type": "object",
        "properties": {"topics": {"type": "array", "maxItems": MAX_TOPICS, "items": {
            "type": "object",
            "properties": {
                "topic": {"type": "string"},
                "context": {"type": "string"},
                "type": {"type": "string", "enum": ["claim", "concept", "question"]}
            },
            "required": ["topic", "context", "type"]
        }}},
        "required": ["topics"]
    });
    let messages = vec![
        Message::system(engine.library.render(prompts::SYSTEM, json!({}))?),
        Message::user(prompt),
    ];
    let (answer, usage): (TopicsAnswer, Usage) = llm
        .json(messages, "topics", &schema, &engine.library, llm.deadline())
        .await
        .map_err(ResearchError::Topics)?;
    let raw = match answer {
        TopicsAnswer::Wrapped { topics } | TopicsAnswer::Bare(topics) => topics,
    };
    let mut seen = HashSet::new();
    let topics: Vec<Topic> = raw
        .into_iter()
        .filter(|t| !t.topic.trim().is_empty() && seen.insert(t.topic.trim().to_lowercase()))
        .map(|t| Topic {
            topic: t.topic.trim().chars().take(200).collect(),
            context: t.context.trim().chars().take(500).collect(),
            kind: match t.kind.trim().to_lowercase().as_str() {
                k @ ("claim" | "concept" | "question") => k.to_string(),
                _ => "concept".into(),
            },
        })
        .take(MAX_TOPICS)
        .collect();
    if topics.is_empty() {
        let why = focus.map(|f| format!(" about the focus `{f}`")).unwrap_or_default();
        return Err(ResearchError::NoTopics(input.rel.clone(), why));
    }
    Ok((topics, usage))
}
