//! The note as the pipeline sees it: its `## Research` section removed, embeds expanded one
//! level, capped; checked before anything costs money.

use std::sync::Arc;

use super::types::{MAX_FOCUS_CHARS, NOTE_CHARS, ResearchError};
use scholia_index::{Likeness, VaultIndex};
use scholia_vault::parse::Link;
use scholia_vault::reading::without_callout_types;
use scholia_vault::section;
use scholia_vault::{NotePath, SECTION, SECTION_LEVEL};

#[derive(Clone)]
pub(crate) struct Input {
    pub rel: String,
    pub title: String,
    /// The note without its `## Research` section, embeds expanded one level, capped.
    pub for_llm: String,
    /// What the note is, for finding related notes: its own text apart from what it embeds.
    pub likeness: Likeness,
    /// The note as written, without its `## Research` section (lines as the owner sees them
    /// above that section).
    pub own: String,
    /// The language of its fixed sentences: its own text's, else its neighbours'
    /// ([`crate::language::among`]).
    pub lang: &'static str,
    pub warnings: Vec<String>,
}

/// Checks the note and the focus and builds the input (off the runtime: embeds are read from
/// the index and the disk).
pub(crate) async fn prepare(
    index: &Arc<VaultIndex>,
    note: &NotePath,
    text: String,
    focus: Option<&str>,
) -> Result<Input, ResearchError> {
    let (index, rel, focus) = (index.clone(), note.rel.clone(), focus.map(str::to_string));
    scholia_base::spawn_blocking(move || prepare_blocking(&index, rel, text, focus.as_deref())).await
}

pub(crate) fn prepare_blocking(
    index: &VaultIndex,
    rel: String,
    text: String,
    focus: Option<&str>,
) -> Result<Input, ResearchError> {
    // Two `## Research` headings: refuse now rather than after the work.
    section::find(&text, SECTION, SECTION_LEVEL)?;
    // Without scholia's parts of it: what the owner wrote there is theirs.
    let without = scholia_vault::research_part::owner_text(text);
    let parsed = scholia_vault::parse::parse(&without, scholia_vault::stem(&rel));
    let note_chars = parsed.plain_text.trim().chars().count();
    if note_chars == 0 {
        return Err(ResearchError::EmptyNote(rel));
    }
    if let Some(focus) = focus {
        let focus_chars = focus.chars().count();
        if focus_chars > MAX_FOCUS_CHARS {
            return Err(ResearchError::FocusTooLong {
                focus_chars,
                limit: MAX_FOCUS_CHARS,
            });
        }
        if focus_chars > note_chars {
            return Err(ResearchError::FocusLongerThanNote {
                focus_chars,
                note_chars,
            });
        }
    }
    let mut warnings = Vec::new();
    let (mut for_llm, embedded) = expand_embeds(index, &rel, &without, &parsed.links);
    let mut likeness = likeness(index, &rel, &parsed, &embedded);
    likeness.focus = focus.unwrap_or_default().to_string();
    let own = without;
    let lang = crate::language::guess(&own).unwrap_or_else(|| neighbours_language(index, &rel, &likeness));
    if for_llm.chars().count() > NOTE_CHARS {
        let cut = for_llm
            .char_indices()
            .nth(NOTE_CHARS)
            .map(|(i, _)| i)
            .unwrap_or(for_llm.len());
        for_llm.truncate(cut);
        warnings.push(format!(
            "the note was cut to {NOTE_CHARS} characters for the language model"
        ));
    }
    Ok(Input {
        rel,
        title: parsed.title,
        for_llm,
        likeness,
        own,
        lang,
        warnings,
    })
}

/// Most notes read for the language of a note whose own text does not say it.
const LANGUAGE_NEIGHBOURS: usize = 24;

/// The language most of the notes beside `rel` are written in: the notes it links, those
/// linking to it by their owners' text (a research section's links do not count), then the
/// notes of its folder, in order; read only until enough say (de's Mehrere Cursor links none
/// and none links it).
fn neighbours_language(index: &VaultIndex, rel: &str, likeness: &Likeness) -> &'static str {
    let linking = index.linking_to(rel, scholia_index::LinkScope::Own).unwrap_or_default();
    let folder = rel.rsplit_once('/').map(|(f, _)| f);
    let mates = index
        .list_notes(folder, None, 0, LANGUAGE_NEIGHBOURS)
        .map(|(notes, _)| notes)
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::from([rel.to_string()]);
    let texts = likeness
        .links
        .iter()
        .chain(&linking)
        .chain(mates.iter().map(|n| &n.path))
        .filter(move |p| seen.insert(p.to_string()))
        .take(LANGUAGE_NEIGHBOURS)
        .filter_map(|p| index.note_text(p))
        .map(scholia_vault::research_part::owner_text);
    crate::language::among(texts)
}

/// What the note is, for finding related notes: its own words, what it embeds apart, the
/// notes it links to.
pub(crate) fn likeness(
    index: &VaultIndex,
    rel: &str,
    parsed: &scholia_vault::parse::ParsedNote,
    embedded: &[String],
) -> Likeness {
    let (mut links, mut embeds): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for link in parsed.links.iter().filter(|l| !l.target.is_empty()) {
        let Ok(Some(target)) = index.resolve_parsed(link, rel) else {
            continue;
        };
        let list = if link.embed { &mut embeds } else { &mut links };
        if !list.contains(&target.path) {
            list.push(target.path);
        }
    }
    Likeness {
        rel: rel.to_string(),
        title: parsed.title.clone(),
        aliases: parsed.aliases.clone(),
        headings: parsed.headings.iter().map(|h| h.text.clone()).collect(),
        tags: parsed.tags.clone(),
        text: without_callout_types(&parsed.plain_text),
        embedded: embedded
            .iter()
            .map(|e| without_callout_types(&scholia_vault::parse::parse(e, "").plain_text))
            .collect::<Vec<_>>()
            .join("\n"),
        links,
        focus: String::new(),
        // What it embeds is part of it, not news.
        exclude: embeds,
    }
}

/// Replaces `![[Note]]` / `![[Note#Heading]]` / `![[Note#^block]]` embeds of notes by the
/// owner's text they embed, never a research section (one level); returns the expanded text and
/// what was embedded.
fn expand_embeds(index: &VaultIndex, rel: &str, text: &str, links: &[Link]) -> (String, Vec<String>) {
    let mut embedded = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for link in links.iter().filter(|l| l.embed && !l.target.is_empty()) {
        let Ok(Some(target)) = index.resolve_parsed(link, rel) else {
            continue;
        };
        let abs = index.vault().abs(&target.path);
        if !index.vault().holds(&abs) {
            continue;
        }
        let Ok(content) = scholia_vault::read::read_note(&abs) else {
            continue;
        };
        // The owner's words only: an embedded note's research section is scholia's, and read
        // here it made a note's section change when the note it embeds gained one (obsidian-help
        // en: Create your first note embeds a block of Manage notes).
        let content = scholia_vault::research_part::owner_text(content);
        let content = match (&link.heading, &link.block) {
            (Some(h), _) => match section::find(&content, h, level_of(&content, h)) {
                Ok(Some(r)) => content[r].to_string(),
                _ => continue,
            },
            // The block it embeds, not the whole note.
            (None, Some(b)) => match section::block(&content, b) {
                Some(r) => content[r].to_string(),
                None => continue,
            },
            (None, None) => content,
        };
        out.push_str(&text[at..link.range.start]);
        out.push_str(&format!(
            "\n<!-- embedded from {} -->\n{}\n",
            target.path,
            content.trim()
        ));
        embedded.push(content);
        at = link.range.end;
    }
    out.push_str(&text[at..]);
    (out, embedded)
}

fn level_of(text: &str, heading: &str) -> u8 {
    scholia_vault::parse::headings(text)
        .iter()
        .find(|h| h.text.eq_ignore_ascii_case(heading.trim()))
        .map(|h| h.level)
        .unwrap_or(2)
}
