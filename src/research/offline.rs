//! research_note without a language model: the note's key terms (tf·idf against the vault's
//! index) stand in for topics, gathering is vault-only, and the section lists the related notes
//! with their matching passages. The default a new user sees.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::ResearchEvent;
use super::note::{self, Depth, Input, NoteResearch, ResearchError, Source, Topic};
use crate::engine::{Engine, Job};
use crate::index::{IndexError, VaultIndex};
use crate::llm::Usage;
use crate::prompts;

const KEY_TERMS: usize = 8;
const RELATED_NOTES: usize = 10;
const PASSAGES_PER_NOTE: usize = 2;

struct Related {
    path: String,
    title: String,
    target: String,
    terms: Vec<String>,
    score: f32,
    passages: Vec<String>,
}

pub(crate) async fn research(
    engine: &Engine,
    index: &Arc<VaultIndex>,
    input: Input,
    job: &Job,
) -> Result<NoteResearch, ResearchError> {
    job.report(ResearchEvent::Started {
        mode: "offline",
        depth: Depth::Shallow,
    });
    let index = index.clone();
    let (text, rel) = (input.for_llm.clone(), input.rel.clone());
    let (terms, related) = tokio::task::spawn_blocking(move || -> Result<_, IndexError> {
        let terms: Vec<String> = index
            .key_terms(&text, KEY_TERMS, Some(&rel))?
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let mut by_note: HashMap<String, Related> = HashMap::new();
        for term in &terms {
            for hit in index.search(term, 5, Some(&rel))? {
                let entry = match by_note.entry(hit.path.clone()) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => v.insert(Related {
                        target: index.link_target(&hit.path)?,
                        path: hit.path.clone(),
                        title: hit.title.clone(),
                        terms: Vec::new(),
                        score: 0.0,
                        passages: Vec::new(),
                    }),
                };
                entry.terms.push(term.clone());
                entry.score += hit.score;
                let passage = hit.snippet.trim().to_string();
                if !passage.is_empty() && entry.passages.len() < PASSAGES_PER_NOTE && !entry.passages.contains(&passage)
                {
                    entry.passages.push(passage);
                }
            }
        }
        let mut related: Vec<Related> = by_note.into_values().collect();
        related.sort_by(|a, b| {
            b.terms
                .len()
                .cmp(&a.terms.len())
                .then(b.score.total_cmp(&a.score))
                .then(a.path.cmp(&b.path))
        });
        related.truncate(RELATED_NOTES);
        Ok((terms, related))
    })
    .await
    .expect("offline research does not panic")?;
    if terms.is_empty() {
        return Err(ResearchError::NoTopics(
            input.rel,
            " (no words it shares with other notes)".into(),
        ));
    }
    job.report(ResearchEvent::TopicsFound { topics: terms.clone() });
    job.report(ResearchEvent::SourcesGathered {
        web: 0,
        vault: related.len(),
        pages: 0,
        failed: 0,
    });
    let topics: Vec<Topic> = terms
        .iter()
        .map(|t| Topic {
            topic: t.clone(),
            context: String::new(),
            kind: "concept".into(),
        })
        .collect();
    let provenance = note::provenance(Depth::Shallow, None, None, topics.len(), 0);
    let section = engine.library.render(
        prompts::RESEARCH_OFFLINE,
        json!({
            "terms": terms,
            "notes": related.iter().map(|r| json!({
                "target": r.target,
                "terms": r.terms,
                // Made inert and one line each by the template's md_passage filter.
                "passages": r.passages,
            })).collect::<Vec<_>>(),
            "provenance": provenance,
        }),
    )?;
    let sources = related
        .into_iter()
        .map(|r| Source::Vault {
            title: r.title,
            path: r.path,
            target: r.target,
        })
        .collect();
    note::finish(note::Finished {
        path: input.rel,
        mode: "offline",
        depth: Depth::Shallow,
        model: None,
        topics,
        sources,
        citations_removed: 0,
        section,
        usage: Usage::default(),
        warnings: input.warnings,
    })
}
