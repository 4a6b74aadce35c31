//! Stage 5: the section body, its provenance line and the sources it cites.

use std::collections::HashSet;

use super::gather::Material;
use super::types::{Depth, NoteResearch, ResearchError, Source, Topic};
use crate::citations::url_key;
use scholia_providers::llm::Usage;
use scholia_vault::{SECTION, SECTION_LEVEL};

/// Everything a finished run is made of.
pub(crate) struct Finished {
    pub path: String,
    pub mode: &'static str,
    pub depth: Depth,
    pub model: Option<String>,
    pub topics: Vec<Topic>,
    pub sources: Vec<Source>,
    pub citations_removed: usize,
    pub section: String,
    pub usage: Usage,
    pub warnings: Vec<String>,
    pub synthesis_failed: Option<String>,
    pub links: scholia_vault::inert::Links,
    /// What the run read, kept beside the note.
    pub record: crate::record::RunRecord,
}

/// The result, once the section is known to stay inside `## Research`.
pub(crate) fn finish(f: Finished) -> Result<NoteResearch, ResearchError> {
    let section = f.section.trim().to_string();
    scholia_vault::contain::check(SECTION, SECTION_LEVEL, &section, &f.links)?;
    // At most 500 characters, the last an ellipsis when the section goes on.
    let preview: String = match section.chars().nth(500) {
        None => section.clone(),
        Some(_) => section.chars().take(499).chain(std::iter::once('…')).collect(),
    };
    Ok(NoteResearch {
        path: f.path,
        mode: f.mode,
        depth: f.depth,
        model: f.model,
        topics_researched: f.topics.len(),
        topics: f.topics.into_iter().map(|t| t.topic).collect(),
        sources: f.sources,
        citations_removed: f.citations_removed,
        section,
        preview,
        cost_usd: f.usage.cost_usd,
        usage: f.usage,
        warnings: f.warnings,
        synthesis_failed: f.synthesis_failed,
        links: f.links,
        record: f.record,
    })
}

pub(crate) fn provenance(
    depth: Depth,
    model: Option<&str>,
    cost: Option<f64>,
    topics: usize,
    removed: usize,
) -> String {
    let date = time::OffsetDateTime::now_utc().date();
    let mut parts = vec![format!("Researched {date}"), depth.as_str().to_string()];
    parts.push(
        model
            .map(str::to_string)
            .unwrap_or_else(|| "offline, no language model".into()),
    );
    if let Some(c) = cost {
        parts.push(format!("${c:.4}"));
    }
    parts.push(format!("{topics} topics"));
    if removed > 0 {
        parts.push(format!("{removed} unverifiable citations removed"));
    }
    format!("{} · scholia", parts.join(" · "))
}

/// The provenance line's parts, which the LLM section templates write in the note's language
/// (`templates/section-words.md`), added to a template's `context`.
pub(crate) fn add_line_parts(
    context: &mut serde_json::Value,
    lang: &str,
    depth: Depth,
    model: &str,
    cost: Option<f64>,
) {
    if let Some(map) = context.as_object_mut() {
        map.insert("lang".into(), lang.into());
        map.insert("when".into(), time::OffsetDateTime::now_utc().date().to_string().into());
        map.insert("depth".into(), depth.as_str().into());
        map.insert("model".into(), model.into());
        map.insert("cost".into(), cost.map(|c| format!("${c:.4}")).into());
    }
}

/// Web sources whose URL the findings cite, then vault notes they link, in order.
pub(super) fn cited_sources(findings: &str, materials: &[Material]) -> Vec<Source> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for m in materials {
        for w in &m.web {
            if findings.contains(&w.url) && seen.insert(url_key(&w.url)) {
                out.push(Source::Web {
                    title: w.title.clone(),
                    url: w.url.clone(),
                });
            }
        }
    }
    let lower = findings.to_lowercase();
    for m in materials {
        for v in &m.vault {
            if lower.contains(&format!("[[{}", v.target.to_lowercase())) && seen.insert(v.path.clone()) {
                out.push(Source::Vault {
                    title: v.title.clone(),
                    path: v.path.clone(),
                    target: v.target.clone(),
                    terms: Vec::new(),
                    tie: None,
                });
            }
        }
    }
    out
}

/// What each source in `sources` gave the synthesis: its page text when read, else its
/// search snippet; a note's snippet.
pub(super) fn source_records(sources: &[Source], materials: &[Material]) -> Vec<crate::record::SourceRecord> {
    use crate::record::SourceRecord;
    sources
        .iter()
        .map(|s| match s {
            Source::Web { title, url } => {
                let read = materials.iter().flat_map(|m| &m.web).find(|w| w.url == *url);
                let passage = read
                    .map(|w| w.extract.clone().unwrap_or_else(|| w.snippet.clone()))
                    .unwrap_or_default();
                SourceRecord::web(title, url, &passage)
            }
            Source::Vault {
                title, path, target, ..
            } => {
                let read = materials.iter().flat_map(|m| &m.vault).find(|v| v.path == *path);
                SourceRecord::vault(
                    title,
                    path,
                    target,
                    &read.map(|v| v.snippet.clone()).unwrap_or_default(),
                )
            }
        })
        .collect()
}
