//! Stage 3: the synthesis, fitted to the model's window and checked by the gate; and the
//! sources-only section when it fails.

use serde_json::json;

use super::fit;
use super::gather::{self, gathered_links};
use super::input::Input;
use super::render::{Finished, finish, provenance};
use super::types::*;
use crate::Context;
use crate::ResearchEvent;
use crate::gate;
use scholia_base::Job;
use scholia_prompts::{self as prompts, untrusted};
use scholia_providers::llm::{ChatClient, ChatRequest, LlmError, Message, Usage};

/// Tokens the synthesis may write: a paragraph or two per topic.
pub(super) fn synthesis_tokens(topics: usize, context: Option<u32>) -> u32 {
    let want = (350 * topics as u32 + 300).clamp(800, 4000);
    match context {
        Some(window_tokens) => want.min(window_tokens / 3).max(256),
        None => want,
    }
}

/// Writes the synthesis: fitted to the context, streamed, checked by the gate; refused once
/// with a firmer instruction, then given up with the reason.
pub(super) async fn synthesize(
    ctx: &Context,
    llm: &ChatClient,
    input: &Input,
    focus: Option<&str>,
    found: &[gather::Material],
    warnings: &mut Vec<String>,
    job: &Job,
) -> Result<(scholia_providers::llm::ChatAnswer, Usage), (String, Usage)> {
    let mut usage = Usage::default();
    let fail = |why: String, usage: Usage| Err((why, usage));
    let system = match ctx.library.render(prompts::SYSTEM, json!({})) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), usage),
    };
    let render = |materials: &[gather::Material], note: &str| {
        ctx.library.render(
            prompts::SYNTHESIS,
            json!({
                "title": input.title,
                "path": input.rel,
                "note": untrusted(note),
                "focus": focus,
                "topics": materials,
                // The findings in the note's language.
                "language": crate::language::name(input.lang),
            }),
        )
    };
    let progress = |tokens: u64| {
        if tokens.is_multiple_of(25) {
            job.report(ResearchEvent::Generating {
                step: "synthesis",
                tokens,
            });
        }
    };
    let mut refusal: Option<String> = None;
    let mut refits = 0;
    loop {
        let context = llm.context_tokens().await;
        let max_tokens = synthesis_tokens(found.len(), context);
        let (mut materials, mut note) = (found.to_vec(), input.for_llm.clone());
        if let Some(window_tokens) = context {
            let overhead = match render(&[], "") {
                Ok(p) => {
                    scholia_providers::llm::window::estimate_tokens(&p)
                        + scholia_providers::llm::window::estimate_tokens(&system)
                        + 128
                }
                Err(e) => return fail(e.to_string(), usage),
            };
            let room = (window_tokens as usize).saturating_sub(overhead + max_tokens as usize);
            let dropped = fit::fit(&mut materials, &mut note, room);
            if !dropped.is_empty() {
                let w = format!(
                    "to fit the model's {window_tokens}-token context, left out: {}",
                    dropped.join(", ")
                );
                tracing::info!("{w}");
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        let prompt = match render(&materials, &note) {
            Ok(p) => p,
            Err(e) => return fail(e.to_string(), usage),
        };
        let mut messages = vec![Message::system(system.clone()), Message::user(prompt.clone())];
        if let Some(reason) = &refusal {
            match ctx.library.render(prompts::SYNTHESIS_RETRY, json!({"reason": reason})) {
                Ok(firmer) => messages.push(Message::user(firmer)),
                Err(e) => return fail(e.to_string(), usage),
            }
        }
        let req = ChatRequest {
            messages,
            temperature: Some(0.3),
            max_tokens: Some(max_tokens),
            stream: true,
            ..Default::default()
        };
        let answer = match llm.chat_with(&req, llm.deadline(), Some(&progress)).await {
            Ok(a) => a,
            // The window is known now (learnt from the error): fit again, once.
            Err(LlmError::ContextExceeded { .. }) if refits == 0 => {
                refits += 1;
                continue;
            }
            Err(e) => return fail(e.to_string(), usage),
        };
        usage.add(&answer.usage);
        // The template's own words, without the material it carries (titles and URLs the
        // answer is meant to cite).
        let instructions = match render(&[], "") {
            Ok(p) => prompts::without_data(&p),
            Err(e) => return fail(e.to_string(), usage),
        };
        let sources: Vec<&str> = materials
            .iter()
            .flat_map(|m| {
                m.web
                    .iter()
                    .flat_map(|w| [Some(w.snippet.as_str()), w.extract.as_deref()])
                    .flatten()
                    .chain(m.vault.iter().map(|v| v.snippet.as_str()))
            })
            .collect();
        let verdict = gate::check(
            &answer.content,
            &gate::Gate {
                instructions: &[&system, &instructions],
                note: &input.for_llm,
                sources: &sources,
                expect: gate::Expect::TopicHeadings,
                examples: &[],
            },
        );
        match verdict {
            Ok(()) => return Ok((answer, usage)),
            Err(why) if refusal.is_none() => {
                tracing::warn!("synthesis refused ({why}); asking once more, more firmly");
                warnings.push(format!("a first synthesis was refused: {why}"));
                refusal = Some(why.to_string());
            }
            Err(why) => return fail(format!("the model's answer was refused twice: {why}"), usage),
        }
    }
}

/// Web and vault sources a sources-only section lists per topic: the best few, each once.
const SOURCES_ONLY_WEB: usize = 4;
const SOURCES_ONLY_VAULT: usize = 2;

/// The gathered material as a reader can take it in: per topic the best few sources (they
/// come best first), none listed twice, topics left with nothing dropped.
fn readable(found: &[gather::Material]) -> Vec<gather::Material> {
    let mut seen = std::collections::HashSet::new();
    found
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.web = std::mem::take(&mut m.web)
                .into_iter()
                .filter(|w| !seen.contains(&crate::citations::url_key(&w.url)))
                .take(SOURCES_ONLY_WEB)
                .collect();
            m.vault = std::mem::take(&mut m.vault)
                .into_iter()
                .filter(|v| !seen.contains(&v.path))
                .take(SOURCES_ONLY_VAULT)
                .collect();
            seen.extend(m.web.iter().map(|w| crate::citations::url_key(&w.url)));
            seen.extend(m.vault.iter().map(|v| v.path.clone()));
            m
        })
        .filter(|m| !m.web.is_empty() || !m.vault.is_empty())
        .collect()
}

/// The section when synthesis failed after gathering: the best few gathered sources of each
/// topic, each once, under a warning that says why.
#[allow(clippy::too_many_arguments)]
pub(super) fn sources_only(
    ctx: &Context,
    input: Input,
    depth: Depth,
    topics: Vec<Topic>,
    found: &[gather::Material],
    reason: String,
    usage: Usage,
    warnings: Vec<String>,
    model: &str,
) -> Result<NoteResearch, ResearchError> {
    // The model was used (its synthesis was refused): named, never "no language model".
    let provenance = provenance(depth, Some(model), usage.cost_usd, topics.len(), 0);
    let found = &readable(found);
    let mut context = json!({
        "reason": reason,
        "topics": found,
        "provenance": provenance,
        "topics_count": topics.len(),
    });
    // The warning and the provenance line in the note's language, as a whole section's.
    super::render::add_line_parts(&mut context, input.lang, depth, model, usage.cost_usd);
    let section = ctx.library.render(prompts::RESEARCH_SOURCES_ONLY, context)?;
    let sources = found
        .iter()
        .flat_map(|m| {
            m.web
                .iter()
                .map(|w| Source::Web {
                    title: w.title.clone(),
                    url: w.url.clone(),
                })
                .chain(m.vault.iter().map(|v| Source::Vault {
                    title: v.title.clone(),
                    path: v.path.clone(),
                    target: v.target.clone(),
                    terms: Vec::new(),
                    tie: None,
                }))
        })
        .collect::<Vec<Source>>();
    let record = crate::record::RunRecord {
        note: input.rel.clone(),
        at: String::new(),
        sources: super::render::source_records(&sources, found),
        contradictions: Vec::new(),
    };
    finish(Finished {
        record,
        path: input.rel,
        mode: "llm",
        depth,
        // The model was used (its synthesis was refused): named, never "none".
        model: Some(model.to_string()),
        topics,
        sources,
        citations_removed: 0,
        section,
        usage,
        warnings,
        synthesis_failed: Some(reason),
        links: gathered_links(found),
    })
}
