//! Stage 1: the topics worth researching, as JSON from the LLM — checked for sense, not only
//! shape. A small model echoes the schema ("a short label that works as a web search query"),
//! repeats itself or answers numbers; such topics are dropped, and when none is left the note's
//! key terms are researched instead (the section says so).

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::input::Input;
use super::types::{MAX_TOPICS, ResearchError, Topic};
use crate::Context;
use crate::ResearchEvent;
use scholia_base::Job;
use scholia_index::VaultIndex;
use scholia_prompts::{self as prompts, untrusted};
use scholia_providers::llm::{ChatClient, Message, Usage, window};

/// Tokens the answer may use: ten topics with a sentence of context each.
pub const TOPIC_TOKENS: u32 = 900;
/// A topic longer than this is a sentence, not a search query.
const MAX_TOPIC_WORDS: usize = 12;
const MAX_TOPIC_CHARS: usize = 120;

#[derive(Deserialize)]
#[serde(untagged)]
enum TopicsAnswer {
    Wrapped { topics: Vec<Topic> },
    Bare(Vec<Topic>),
}

/// The topics, their usage, and a notice when they are the note's key terms instead.
pub(super) struct Topics {
    pub topics: Vec<Topic>,
    pub usage: Usage,
    pub notice: Option<String>,
    pub dropped: Vec<String>,
}

pub(super) async fn extract(
    ctx: &Context,
    index: &Arc<VaultIndex>,
    llm: &ChatClient,
    input: &Input,
    focus: Option<&str>,
    job: &Job,
) -> Result<Topics, ResearchError> {
    let system = ctx.library.render(prompts::SYSTEM, json!({}))?;
    let render = |note: &str| {
        ctx.library.render(
            prompts::TOPIC_EXTRACTION,
            json!({"focus": focus, "max_topics": MAX_TOPICS, "path": input.rel, "note": untrusted(note)}),
        )
    };
    // The note is cut to what fits the model's context beside the instructions and the answer.
    let mut note: &str = &input.for_llm;
    if let Some(window_tokens) = llm.context_tokens().await {
        let overhead = window::estimate_tokens(&system) + window::estimate_tokens(&render("")?) + 64;
        let room = (window_tokens as usize).saturating_sub(overhead + TOPIC_TOKENS as usize);
        let (fitted, cut) = window::fit_text(note, room.max(256));
        if cut {
            tracing::info!("the note was cut to about {room} tokens for a {window_tokens}-token context");
        }
        note = fitted;
    }
    let prompt = render(note)?;
    let instructions = prompts::without_data(&prompt);
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
    let messages = vec![Message::system(system.clone()), Message::user(prompt)];
    let progress = |tokens: u64| {
        if tokens.is_multiple_of(20) {
            job.report(ResearchEvent::Generating { step: "topics", tokens });
        }
    };
    let (answer, usage): (TopicsAnswer, Usage) = llm
        .json(
            messages,
            "topics",
            &schema,
            TOPIC_TOKENS,
            &ctx.library,
            llm.deadline(),
            Some(&progress),
        )
        .await
        .map_err(ResearchError::Topics)?;
    let raw = match answer {
        TopicsAnswer::Wrapped { topics } | TopicsAnswer::Bare(topics) => topics,
    };
    let (topics, dropped) = sane(raw, &[&system, &instructions, &schema.to_string()], &input.for_llm);
    if !dropped.is_empty() {
        tracing::warn!("dropped {} unusable topic(s): {}", dropped.len(), dropped.join("; "));
    }
    if !topics.is_empty() {
        return Ok(Topics {
            topics,
            usage,
            notice: None,
            dropped,
        });
    }
    // Nothing usable: the note's own key terms, as offline research finds them.
    let terms = crate::offline::key_terms(index, input, MAX_TOPICS).await?;
    if terms.is_empty() {
        let why = focus.map(|f| format!(" about the focus `{f}`")).unwrap_or_default();
        return Err(ResearchError::NoTopics(input.rel.clone(), why));
    }
    let notice = format!(
        "The language model's topics were unusable ({}); the note's key terms were researched instead.",
        if dropped.is_empty() {
            "none given".to_string()
        } else {
            format!("{} dropped", dropped.len())
        }
    );
    Ok(Topics {
        topics: terms
            .into_iter()
            .map(|t| Topic {
                topic: t,
                context: String::new(),
                kind: "concept".into(),
            })
            .collect(),
        usage,
        notice: Some(notice),
        dropped,
    })
}

/// The usable topics and a description of each dropped one. A topic is dropped when it is empty
/// or has no letters, is far too long, repeats an earlier one, or repeats the instructions or
/// the schema (text the note does not contain).
fn sane(raw: Vec<Topic>, instructions: &[&str], note: &str) -> (Vec<Topic>, Vec<String>) {
    let norm = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let instructions: Vec<String> = instructions.iter().map(|i| format!(" {} ", norm(i))).collect();
    let note = format!(" {} ", norm(note));
    let mut seen = HashSet::new();
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for t in raw {
        let topic = t.topic.trim();
        let n = norm(topic);
        let words = n.split(' ').filter(|w| !w.is_empty()).count();
        let why = if !topic.chars().any(char::is_alphabetic) {
            Some("no words")
        } else if words > MAX_TOPIC_WORDS || topic.chars().count() > MAX_TOPIC_CHARS {
            Some("too long for a search query")
        } else if !seen.insert(n.clone()) {
            Some("a repeat")
        } else if !note.contains(&format!(" {n} "))
            && instructions.iter().any(|i| i.contains(&format!(" {n} ")))
            && (words >= 3 || ["claim", "concept", "question", "topic", "context", "type"].contains(&n.as_str()))
        {
            Some("an echo of the instructions")
        } else {
            None
        };
        match why {
            Some(why) => dropped.push(format!("`{}` ({why})", topic.chars().take(60).collect::<String>())),
            None => kept.push(Topic {
                topic: topic.to_string(),
                context: t.context.trim().chars().take(500).collect(),
                kind: match t.kind.trim().to_lowercase().as_str() {
                    k @ ("claim" | "concept" | "question") => k.to_string(),
                    _ => "concept".into(),
                },
            }),
        }
        if kept.len() == MAX_TOPICS {
            break;
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(topic: &str) -> Topic {
        Topic {
            topic: topic.into(),
            context: String::new(),
            kind: "claim".into(),
        }
    }

    #[test]
    fn topics_that_are_no_topics_are_dropped() {
        let instructions = "Reply with JSON: {\"topic\": \"a short label that works as a web search query\", \"context\": \"what the note says about it, in one sentence\"}";
        let note = "# Koji\n\nKoji grows on steamed rice at 30 degrees. Is a short label enough?";
        let raw = vec![
            t("koji temperature"),
            t("a short label that works as a web search query"),
            t("Koji temperature"),
            t("1.0"),
            t(""),
            t("what the note says about it, in one sentence"),
            t("context"),
            t("a very long topic that goes on and on and is really a whole sentence rather than a query"),
            t("steamed rice"),
        ];
        let (kept, dropped) = sane(raw, &[instructions], note);
        let kept: Vec<&str> = kept.iter().map(|t| t.topic.as_str()).collect();
        assert_eq!(kept, ["koji temperature", "steamed rice"]);
        assert_eq!(dropped.len(), 7, "{dropped:?}");
        assert!(
            dropped.iter().any(|d| d.contains("echo of the instructions")),
            "{dropped:?}"
        );
        // Words the note itself uses are topics even when the instructions use them too.
        let (kept, _) = sane(vec![t("a short label")], &[instructions], note);
        assert_eq!(kept.len(), 1);
    }
}
