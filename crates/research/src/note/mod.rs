//! research_note (DESIGN §5, seed 004): topics → gathering (web + vault, pages in deep mode) →
//! synthesis → citation integrity → the `## Research` section body. Nothing is written here:
//! the ctx writes the result through its note-writer.

mod fit;
mod gather;
pub(crate) mod input;
pub(crate) mod render;
mod synthesis;
mod topics;
pub(crate) mod types;

use synthesis::{sources_only, synthesize};

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::join_all;
use serde_json::json;

use super::ResearchEvent;
use super::citations;
use crate::Context;
use scholia_base::Job;
use scholia_index::VaultIndex;
use scholia_prompts::{self as prompts};
use scholia_providers::llm::{ChatClient, Usage};
use scholia_vault::{NotePath, SECTION_LEVEL};

pub(crate) use input::Input;
pub(crate) use render::{Finished, finish, provenance};
pub use types::*;

/// Runs research_note over `text` (the note's current text) — offline when no LLM is
/// configured. Honours cancellation.
pub async fn research_note(
    ctx: &Context,
    index: &Arc<VaultIndex>,
    note: &NotePath,
    text: String,
    depth: Depth,
    focus: Option<&str>,
    job: &Job,
) -> Result<NoteResearch, ResearchError> {
    let focus = focus.map(str::trim).filter(|f| !f.is_empty());
    let input = input::prepare(index, note, text, focus).await?;
    let run = async {
        match &ctx.llm {
            Some(llm) => with_llm(ctx, index, llm, depth, focus, input, job).await,
            None => super::offline::research(ctx, index, input, job).await,
        }
    };
    tokio::select! {
        r = run => r,
        _ = job.cancelled() => Err(ResearchError::Cancelled),
    }
}

async fn with_llm(
    ctx: &Context,
    index: &Arc<VaultIndex>,
    llm: &Arc<ChatClient>,
    depth: Depth,
    focus: Option<&str>,
    input: Input,
    job: &Job,
) -> Result<NoteResearch, ResearchError> {
    job.report(ResearchEvent::Started { mode: "llm", depth });
    let mut usage = Usage::default();
    let mut warnings = input.warnings.clone();

    // 1. Topics.
    let found = topics::extract(ctx, index, llm, &input, focus, job).await?;
    let (topics, notice) = (found.topics, found.notice);
    usage.add(&found.usage);
    if !found.dropped.is_empty() {
        warnings.push(format!("unusable topics dropped: {}", found.dropped.join(", ")));
    }
    job.report(ResearchEvent::TopicsFound {
        topics: topics.iter().map(|t| t.topic.clone()).collect(),
    });

    // 2. Gather, every topic at once (searches, pages and LLM calls are bounded by their own
    //    semaphores).
    let total = topics.len();
    let done = AtomicUsize::new(0);
    let pages = gather::PageCache::default();
    let gathering = gather::Gathering {
        ctx,
        index,
        llm,
        rel: &input.rel,
        depth,
        pages: &pages,
    };
    let materials: Vec<gather::Material> = join_all(topics.iter().map(|t| {
        let (done, gathering) = (&done, &gathering);
        async move {
            let m = gathering.gather(t).await;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            job.report(ResearchEvent::TopicGathered {
                done: n,
                total,
                topic: t.topic.clone(),
            });
            m
        }
    }))
    .await;
    let (mut web, mut vault, mut pages_read, mut failed) = (0, 0, 0, 0);
    for m in &materials {
        web += m.web.len();
        vault += m.vault.len();
        pages_read += m.pages_read;
        failed += m.failures.len();
        usage.add(&m.usage);
        warnings.extend(m.failures.iter().map(|f| format!("{}: {f}", m.topic)));
    }
    job.report(ResearchEvent::SourcesGathered {
        web,
        vault,
        pages: pages_read,
        failed,
    });
    if web + vault == 0 {
        let cause = materials
            .iter()
            .flat_map(|m| m.failures.first())
            .next()
            .cloned()
            .unwrap_or_else(|| "no results".into());
        return Err(ResearchError::NothingFound(cause));
    }
    let found: Vec<gather::Material> = materials
        .iter()
        .filter(|m| !m.web.is_empty() || !m.vault.is_empty())
        .cloned()
        .collect();

    // 3. Synthesis, fitted to the model's context and checked before anything is written.
    job.report(ResearchEvent::Synthesizing);
    let synthesized = synthesize(ctx, llm, &input, focus, &found, &mut warnings, job).await;
    let answer = match synthesized {
        Ok((answer, u)) => {
            usage.add(&u);
            answer
        }
        Err((reason, u)) => {
            usage.add(&u);
            tracing::warn!("synthesis failed after gathering: {reason}");
            let model = llm.model().to_string();
            return sources_only(ctx, input, depth, topics, &found, reason, usage, warnings, &model);
        }
    };

    // 4. Citation integrity.
    let links = gather::gathered_links(&materials);
    let vault_targets: HashSet<String> = materials
        .iter()
        .flat_map(|m| m.vault.iter().map(|v| v.target.to_lowercase()))
        .collect();
    let index = index.clone();
    let rel = input.rel.clone();
    let (content, cut) = scholia_vault::inert::cap(&answer.content, super::MAX_ANSWER_CHARS);
    if cut {
        warnings.push(format!(
            "the synthesis was cut at {} characters (the model wrote {})",
            super::MAX_ANSWER_CHARS,
            answer.content.chars().count()
        ));
    }
    let allowed = links.clone();
    let (findings, removed) = scholia_base::spawn_blocking(move || {
        let resolves = |t: &str| {
            vault_targets.contains(&t.to_lowercase()) || index.resolve_link(t, Some(&rel)).ok().flatten().is_some()
        };
        // Only gathered sources, made inert below `## Research`.
        citations::enforce(&content, SECTION_LEVEL + 1, &allowed, &resolves)
    })
    .await;
    if removed.count() > 0 {
        warnings.push(format!(
            "{} citation(s) not among the gathered sources were removed: {}",
            removed.count(),
            removed
                .urls
                .iter()
                .chain(&removed.wikilinks)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    job.report(ResearchEvent::Checked {
        citations_removed: removed.count(),
    });

    // 5. Render.
    let sources = render::cited_sources(&findings, &materials);
    let provenance = provenance(
        depth,
        Some(&answer.model),
        usage.cost_usd,
        topics.len(),
        removed.count(),
    );
    let mut context = json!({
        "notice": notice,
        "findings": findings,
        "sources": sources.iter().map(|s| match s {
            Source::Web { title, url } => json!({"title": title, "url": url, "target": null}),
            Source::Vault { title, target, .. } => json!({"title": title, "url": null, "target": target}),
        }).collect::<Vec<_>>(),
        "provenance": provenance,
        "topics": topics.len(),
        "removed": removed.count(),
    });
    // The section's own words in the note's language (the provenance's parts).
    render::add_line_parts(&mut context, input.lang, depth, &answer.model, usage.cost_usd);
    let section = ctx.library.render(prompts::RESEARCH_SECTION, context)?;
    let record = crate::record::RunRecord {
        note: input.rel.clone(),
        at: String::new(),
        sources: render::source_records(&sources, &materials),
        contradictions: crate::record::contradictions(&findings, &topics, &input.own),
    };
    finish(Finished {
        record,
        path: input.rel,
        mode: "llm",
        depth,
        model: Some(answer.model),
        topics,
        sources,
        citations_removed: removed.count(),
        section,
        usage,
        warnings,
        synthesis_failed: None,
        links,
    })
}

/// The URLs of every web source gathered.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_parsing() {
        assert_eq!("Deep".parse::<Depth>().unwrap(), Depth::Deep);
        assert_eq!(
            "medium".parse::<Depth>().unwrap_err().to_string(),
            "depth: `medium` is not valid; valid values: shallow, deep"
        );
    }
}
