//! The `### <query>` subsection deep search writes under `## Research`.

use super::*;

/// The heading a query gets under `## Research`: one line, no Markdown heading syntax at the
/// ends, bounded length.
pub fn heading_for(query: &str) -> String {
    let one_line = query.split_whitespace().collect::<Vec<_>>().join(" ");
    // A selected list item or quote line keeps its words, not its marker.
    let trimmed = one_line
        .trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '>') || c.is_whitespace())
        .trim_matches(|c: char| c == '#' || c.is_whitespace());
    let mut h: String = trimmed.chars().take(120).collect();
    if trimmed.chars().count() > 120 {
        h.push('…');
    }
    // A heading is one line of text: links, embeds and HTML in a selection stay words.
    h.chars()
        .flat_map(|c| match c {
            '[' | ']' | '<' | '>' | '`' | '\\' | '|' => vec!['\\', c],
            '%' if h.contains("%%") => "&#37;".chars().collect(),
            c => vec![c],
        })
        .collect()
}

/// The `### <query>` subsection body, from `templates/deep-search-section.md`: the report made
/// inert, linking only to what the rounds gathered (no wikilinks: a web answer names no note),
/// cut to what a note should hold.
/// `rest` is where the whole report was saved when it was cut.
pub fn render_section(
    ctx: &Context,
    r: &DeepSearchResult,
    rest: Option<&str>,
) -> Result<String, scholia_prompts::TemplateError> {
    let date = r.metadata.timestamp.get(..10).unwrap_or_default().to_string();
    let (report, cut) = scholia_vault::inert::cap(&r.result, crate::MAX_ANSWER_CHARS);
    let (report, _) = crate::citations::enforce(&report, 4, &r.links, &|_| false);
    // The CLI reports its own sources: only real web addresses are listed.
    let sources: Vec<&String> = r
        .metadata
        .sources_visited
        .iter()
        .filter(|s| r.links.allows(s))
        .collect();
    ctx.library.render(
        prompts::DEEP_SEARCH_SECTION,
        json!({
            "date": date,
            "iterations": r.metadata.iterations,
            "verified": r.verified,
            "backend": r.metadata.backend,
            "model": r.metadata.model,
            "note": r.note,
            "report": report.trim(),
            "cut": cut.then(|| r.result.chars().count()),
            "rest": rest,
            "sources": sources,
        }),
    )
}

impl scholia_base::Summary for DeepSearchResult {
    fn summary(&self) -> String {
        format!(
            "{} after {} rounds, {} sources",
            if self.verified { "verified" } else { "not verified" },
            self.metadata.iterations,
            self.metadata.sources_visited.len()
        )
    }
}
