//! Stage 5: the section body, its provenance line and the sources it cites.

use std::collections::HashSet;

use super::gather::Material;
use super::{Depth, NoteResearch, ResearchError, Source, Topic};
use crate::engine::{SECTION, SECTION_LEVEL};
use crate::llm::Usage;
use crate::research::citations::normalize_url;
use crate::vault::section;

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
}

/// The result, once the section is known to stay inside `## Research`.
pub(crate) fn finish(f: Finished) -> Result<NoteResearch, ResearchError> {
    let section = f.section.trim().to_string();
    if !section::body_is_contained(SECTION, SECTION_LEVEL, &section) {
        return Err(ResearchError::Uncontained);
    }
    let preview: String = section.chars().take(500).collect();
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

/// Web sources whose URL the findings cite, then vault notes they link, in order.
pub(super) fn cited_sources(findings: &str, materials: &[Material]) -> Vec<Source> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for m in materials {
        for w in &m.web {
            if findings.contains(&w.url) && seen.insert(normalize_url(&w.url)) {
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
                });
            }
        }
    }
    out
}

/// Keeps a model's Markdown inside the section: `#`/`##` headings become `###`, a lone `---` or
/// `===` line gets a blank line above (no setext heading), an open code fence is closed.
pub(crate) fn contain(markdown: &str) -> String {
    contain_below(markdown, 3)
}

/// Makes model Markdown safe inside a section whose headings are above `min_level`: shallower
/// headings become `min_level`, setext underlines cannot turn a line into a heading, and an
/// unclosed code fence is closed.
pub(crate) fn contain_below(markdown: &str, min_level: usize) -> String {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str()) {
                fence = None;
            }
            out.push(line.to_string());
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(trimmed.chars().take_while(|c| *c == '`' || *c == '~').collect());
            out.push(line.to_string());
            continue;
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..min_level).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            out.push(format!("{}{}", "#".repeat(min_level), &trimmed[hashes..]));
            continue;
        }
        let underline = !trimmed.is_empty() && (trimmed.chars().all(|c| c == '-') || trimmed.chars().all(|c| c == '='));
        if underline && out.last().is_some_and(|l: &String| !l.trim().is_empty()) {
            out.push(String::new());
        }
        out.push(line.to_string());
    }
    if let Some(open) = fence {
        out.push(open);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_of_model_markdown() {
        let check = |input: &str, expected: &str| {
            let got = contain(input);
            assert_eq!(got, expected, "{input:?}");
            assert!(section::body_is_contained(SECTION, 2, &got), "{got:?}");
        };
        check("## Topic\ntext", "### Topic\ntext");
        check("# Big\n### Fine", "### Big\n### Fine");
        check("Line\n---\nafter", "Line\n\n---\nafter");
        check("```rust\nfn x() {}\n", "```rust\nfn x() {}\n```");
        check("```\n## not a heading\n```", "```\n## not a heading\n```");
        check("#hashtag stays", "#hashtag stays");
    }
}
