//! research_note without a language model: the note's key terms (tf·idf against the vault's
//! index) stand in for topics, gathering is vault-only, and the section leads with what the
//! owner does not know: related notes the note does not link (either way), each with the
//! passages that relate it, and notes it names without a link (with the line); notes it links
//! already come last, by name only. The default a new user sees.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::json;

use super::ResearchEvent;
use super::note::input::{self, Input};
use super::note::render::{Finished, finish, provenance};
use super::note::types::{Depth, NoteResearch, ResearchError, Source, Topic};
use crate::Context;
use brief::{brief, brief_line, weak, weak_floor};
use quoted::Quoted;
use scholia_base::Job;
use scholia_index::{IndexError, Terms, Tie, VaultIndex, WordsShare, tokenizer};
use scholia_prompts as prompts;
use scholia_providers::llm::Usage;
use scholia_vault::mentions::OwnWords;
use scholia_vault::passage;
use surface::Surface;

mod brief;
mod phrases;
mod quote;
mod quoted;
mod surface;
mod topics;

const KEY_TERMS: usize = 8;
const RELATED_NOTES: usize = 10;
const PASSAGES_PER_NOTE: usize = 2;
/// Shared words shown beside a related note.
const SHARED_TERMS: usize = 4;
/// Words whose weights choose the passages.
const PASSAGE_TERMS: usize = 40;

/// A note related to the researched one, as offline research cites it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RelatedNote {
    pub path: String,
    pub title: String,
    /// The wikilink target naming it.
    pub target: String,
    /// Key terms of the researched note that it shares.
    pub terms: Vec<String>,
    /// Its sentences that carry most of the researched note's words.
    pub passages: Vec<String>,
    /// How related: content similarity normalised to at most 1, plus the vault's signals.
    pub score: f32,
    /// It links to the researched note already (shown last, by name only).
    pub links_back: bool,
    /// The 1-based line where the researched note names it without a link.
    pub mentioned_on: Option<usize>,
    /// Why it is related: its words, or the link, folder or tag that ties it.
    pub tie: Tie,
    /// The wikilink target of the note `tie` names (the linking note), if it names one.
    pub tie_target: Option<String>,
    /// Found by less than the entries before it (see [`brief`]): the section names it on one
    /// line with what found it, without its passages.
    pub brief: bool,
    /// One of its passages tells why it is related ([`quote::tells`]); else what it is is
    /// quoted, or nothing.
    pub told: bool,
    /// What its words share with the note, against what any note of the vault shares
    /// ([`scholia_index::Ties::words_share`]).
    #[serde(skip)]
    pub words: WordsShare,
}

impl RelatedNote {
    /// How many notes link it, when it is cited as one of the vault's hubs: because many notes
    /// link it, not for anything it shares with the researched note.
    fn hub(&self) -> Option<usize> {
        match self.tie {
            Tie::Popular { linking } if !self.links_back => Some(linking),
            _ => None,
        }
    }
}

/// Related notes found beyond [`RELATED_NOTES`], so that notes linking back (moved last) and
/// notes without a passage (left out) do not leave the new ones short.
const SLACK: usize = 15;

/// The note's key terms (as its section names them, see `topics.rs`) and the notes related to
/// it, with passages: what offline research cites (and what `benches/related.rs` measures).
/// The notes it links are left out of the ranking (they are what the owner knows); notes found
/// that link to it come last.
pub(crate) fn select(
    index: &VaultIndex,
    input: &Input,
    limit: usize,
) -> Result<(Vec<String>, Vec<RelatedNote>), IndexError> {
    let mut likeness = input.likeness.clone();
    // What it links is known: never returned, but its neighbourhood still counts.
    likeness.exclude.extend(likeness.links.iter().cloned());
    let (related, terms, ties) = index.related(&likeness, limit + SLACK)?;
    let own = own_terms(&terms, &input.likeness);
    let key = display_terms(&own, KEY_TERMS);
    let surface = Surface::of(&input.likeness.text).in_language(input.lang);
    let weights_of_words: HashMap<String, f32> = terms.0.iter().take(PASSAGE_TERMS).cloned().collect();
    // A note related by its links or stems may share none of the heaviest words: its
    // sentences with any of the note's weighed words explain it next best.
    let every: HashMap<String, f32> = terms.0.iter().cloned().collect();
    let (mut new, mut back) = (Vec::new(), Vec::new());
    // Whether a word is in more than GENERIC_SHARE of the vault's notes, asked once a word.
    let mut shares: HashMap<String, bool> = HashMap::new();
    let mut generic = |word: &str| {
        *shares.entry(word.to_string()).or_insert_with(|| {
            index
                .word_share(word)
                .ok()
                .flatten()
                .is_some_and(|share| share > GENERIC_SHARE)
        })
    };
    // Sentences already shown, and the note's own: each is quoted once, and never to the note
    // that holds it.
    let mut quoted = Quoted::new(own_sentences(&input.own));
    // Read once for every note it may name.
    let own_words = OwnWords::of(&input.own);
    for r in related {
        let links_back = index.links_of(&r.path)?.contains(&input.rel);
        if links_back {
            back.push(RelatedNote {
                target: index.link_target_from(&r.path, Some(&input.rel))?,
                terms: Vec::new(),
                passages: Vec::new(),
                path: r.path,
                title: r.title,
                score: r.score,
                links_back,
                mentioned_on: None,
                tie: Tie::Words,
                tie_target: None,
                brief: false,
                told: false,
                words: ties.words_share(&r.evidence),
            });
            continue;
        }
        if new.len() == limit {
            continue;
        }
        // Its own words: a research section scholia wrote there is neither quoted nor a link.
        let text = scholia_vault::research_part::owner_text(index.note_text(&r.path).unwrap_or_default());
        let parsed = scholia_vault::parse::parse(&text, scholia_vault::stem(&r.path));
        // The words a reader reads in it: its text, title and other names; not its front
        // matter's keys (`aliases`, `permalink`, `publish: true` were shown as shared words).
        let words: HashSet<String> = tokenizer::terms(&parsed.plain_text)
            .into_iter()
            .chain(
                std::iter::once(&parsed.title)
                    .chain(&parsed.aliases)
                    .flat_map(|n| tokenizer::terms(n)),
            )
            .collect();
        // Heaviest first.
        let shared: Vec<String> = terms
            .0
            .iter()
            .filter(|(t, _)| words.contains(t))
            .map(|(t, _)| t.clone())
            .collect();
        let mut names = vec![r.title.clone(), scholia_vault::stem(&r.path).to_string()];
        names.extend(parsed.aliases.iter().cloned());
        let tie = ties.of(&r.path, &r.evidence, &parsed.tags);
        let mut passages = Vec::new();
        if tie != Tie::Words {
            // Found by the vault's links or folders, not by what it says: its words in common
            // are chance, and what it says it is tells the reader most.
            passages = quoted.fresh(
                quote::what_it_is(&parsed, &text, PASSAGES_PER_NOTE + 4),
                PASSAGES_PER_NOTE,
            );
            passages.truncate(1);
        }
        // What a passage must hold two of to tell why: the note's weighed words, and the
        // heaviest it shares with this one (those shown beside it).
        let telling_words: HashSet<String> = weights_of_words
            .keys()
            .chain(shared.iter().take(SHARED_TERMS))
            .cloned()
            .collect();
        if passages.is_empty() {
            let found = passage::best(&text, &weights_of_words, PASSAGES_PER_NOTE + 4, tokenizer::terms);
            let telling = found
                .iter()
                .filter(|p| quote::tells(p, &telling_words, &key))
                .cloned()
                .collect();
            passages = quoted.fresh(telling, PASSAGES_PER_NOTE);
            // (A note tied otherwise was offered what it is above.)
            if passages.is_empty() && !found.is_empty() && tie == Tie::Words {
                // Its sentences share a word with the note, none why the two are alike: what
                // it is says more than a sentence where the word recurs.
                passages = quoted.fresh(
                    quote::what_it_is(&parsed, &text, PASSAGES_PER_NOTE + 4),
                    PASSAGES_PER_NOTE,
                );
                passages.truncate(1);
            }
        }
        if passages.is_empty() {
            passages = quoted.fresh(
                passage::best(&text, &every, PASSAGES_PER_NOTE + 4, tokenizer::terms),
                PASSAGES_PER_NOTE,
            );
        }
        let mut by_meaning = false;
        if passages.is_empty() && index.near_in_meaning(&input.rel, &r.path) {
            // Related by meaning: its sentences closest in meaning to the note.
            passages = quoted.fresh(closest_in_meaning(index, &input.rel, &text), PASSAGES_PER_NOTE);
            by_meaning = !passages.is_empty();
        }
        let mentioned_on = mention_line(index, &input.own, &own_words, &names);
        // A note without a passage or a tie says nothing of why it is related: left out.
        if passages.is_empty() && mentioned_on.is_none() && tie == Tie::Words {
            continue;
        }
        let tie_target = match &tie {
            Tie::LinkedFrom { via: p } | Tie::CitedWith { by: p } | Tie::AlikeLinks { by: p } => {
                Some(index.link_target_from(p, Some(&input.rel))?)
            }
            _ => None,
        };
        // The words it shares are shown when they are why it is here. Its Markdown is read
        // too: a link's text is a word on its own there (zh `[[视图#视图设置|视图设置]]中`),
        // where the readable text runs it into the clause.
        let theirs = (tie == Tie::Words).then(|| format!("{}\n{}\n{text}", parsed.title, parsed.plain_text));
        let shown = match &theirs {
            Some(theirs) => shared_words(&surface, &shared, theirs, &mut generic),
            None => Vec::new(),
        };
        // Found by function words only (th ไม่มี, "none"), not named, not near in meaning:
        // nothing tells the reader why it is here. (An entry whose words are no words to show,
        // a clause's pairs in zh, keeps its passage: leaving those out cost zh recall 0.007.)
        if let Some(theirs) = &theirs
            && shown.is_empty()
            && mentioned_on.is_none()
            && surface.function_words_only(&shared, theirs)
            && !index.near_in_meaning(&input.rel, &r.path)
        {
            continue;
        }
        for p in &passages {
            quoted.add(p);
        }
        let told = by_meaning || passages.iter().any(|p| quote::tells(p, &telling_words, &key));
        new.push(RelatedNote {
            target: index.link_target_from(&r.path, Some(&input.rel))?,
            terms: shown,
            tie,
            tie_target,
            passages,
            mentioned_on,
            path: r.path,
            title: r.title,
            score: r.score,
            links_back,
            brief: false,
            told,
            words: ties.words_share(&r.evidence),
        });
    }
    let best = new.iter().map(|n| n.score).fold(0.0f32, f32::max);
    // The vault's hubs (found because many notes link them, not for anything the two share)
    // come after the notes related to this one in particular; the same ten are cited.
    let (hubs, particular): (Vec<RelatedNote>, Vec<RelatedNote>) = new.into_iter().partition(|n| n.hub().is_some());
    let mut new = particular;
    let floor = weak_floor(new.iter().map(|n| n.score).fold(0.0f32, f32::max));
    for (at, n) in new.iter_mut().enumerate() {
        n.brief = brief(
            at,
            weak(n.score, floor, n.words),
            n.score / best,
            n.mentioned_on.is_some(),
            &n.tie,
            !n.terms.is_empty(),
            n.told,
        );
    }
    new.extend(hubs);
    new.extend(back);
    Ok((topics::topical_first(&own, &input.likeness, KEY_TERMS), new))
}

/// A word in more than this share of the vault's notes says little of why a note is related
/// (zh `例如`, for example; th `คลิก`, click; `Publish` in th notes).
const GENERIC_SHARE: f32 = 0.2;

/// The words shown beside a note found by its words (`shared`, the researched note's terms it
/// holds, heaviest first; `theirs`, its readable text): the heaviest a reader can be shown, or
/// when none of them can be (pairs of a script without spaces cut out of a clause), the next
/// heaviest that can (an entry saying nothing of why it is here was 7 % of zh sections'
/// entries). Of those, a word most notes write is left out when another is shown: of the words
/// shown, those in more than a fifth of the vault's notes were 0.146 in zh and 0.139 in th once
/// each was a word both notes write (`cargo bench --bench related`, generic). Lighter words do
/// not take their place (`Cmd`, `Ctrl` of the vault's stock phrases came in so).
fn shared_words(
    surface: &Surface,
    shared: &[String],
    theirs: &str,
    generic: &mut impl FnMut(&str) -> bool,
) -> Vec<String> {
    let heaviest = &shared[..SHARED_TERMS.min(shared.len())];
    let shown = match surface.show_shared(heaviest, SHARED_TERMS, theirs) {
        none if none.is_empty() => surface.show_shared(shared, SHARED_TERMS, theirs),
        some => some,
    };
    if shown.len() < 2 {
        return shown; // nothing to give way to
    }
    let specific: Vec<String> = shown.iter().filter(|w| !generic(w)).cloned().collect();
    if specific.is_empty() { shown } else { specific }
}

/// Sentences of a related note's `text` considered for their meaning.
const MEANING_SENTENCES: usize = 24;

/// The sentences of `text` nearest in meaning to the note `rel` (its stored vector), best
/// first; none without vectors or an embedder that answers.
fn closest_in_meaning(index: &VaultIndex, rel: &str, text: &str) -> Vec<String> {
    let (Some(embedder), Some(mine)) = (index.embedder(), index.note_vector(rel)) else {
        return Vec::new();
    };
    let sentences = passage::quotable(text, MEANING_SENTENCES);
    let inputs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let Ok(vectors) = embedder.embed_now(&inputs) else {
        return Vec::new();
    };
    let mut scored: Vec<(f32, usize)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (mine.dot(&scholia_embed::Quantized::new(v)), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| sentences[i].clone()).collect()
}

/// The first line of `text` that names one of `names` as the note (see
/// [`scholia_vault::mentions`]); a one-word name only when the word is no common word of the
/// vault's language (in at most [`COMMON_SHARE`] of its notes).
fn mention_line(index: &VaultIndex, text: &str, own: &OwnWords, names: &[String]) -> Option<usize> {
    let common = |word: &str| {
        index
            .word_share(word)
            .ok()
            .flatten()
            .is_some_and(|share| share > COMMON_SHARE)
    };
    let (at, _) = own.first(names, &common)?;
    Some(scholia_vault::lines::LineIndex::new(text).line_of(at) as usize + 1)
}

/// A one-word name found in more than this share of the vault's notes is a common word.
const COMMON_SHARE: f32 = 0.03;

/// The note's own sentences.
fn own_sentences(text: &str) -> Vec<String> {
    let reading = scholia_vault::reading::blocks(text).join("\n");
    passage::sentences(&reading, &HashSet::new())
}

/// The notes offline research would cite for the note at `rel` whose text is `text`, best
/// first. Blocking.
pub fn related_notes(index: &VaultIndex, rel: &str, text: String) -> Result<Vec<RelatedNote>, ResearchError> {
    Ok(related_with_topics(index, rel, text)?.1)
}

/// [`related_notes`] with the key terms the section names (`benches/related.rs` reads both).
#[doc(hidden)]
pub fn related_with_topics(
    index: &VaultIndex,
    rel: &str,
    text: String,
) -> Result<(Vec<String>, Vec<RelatedNote>), ResearchError> {
    let input = input::prepare_blocking(index, rel.to_string(), text, None)?;
    Ok(select(index, &input, RELATED_NOTES)?)
}

/// Every note offline research weighs for the note at `rel`, with its evidence, for tuning
/// [`scholia_index::Signals`] (`benches/related.rs`). Blocking.
#[doc(hidden)]
pub fn related_evidence(
    index: &VaultIndex,
    rel: &str,
    text: String,
    candidates: usize,
) -> Result<Vec<(String, scholia_index::Evidence)>, ResearchError> {
    let input = input::prepare_blocking(index, rel.to_string(), text, None)?;
    let mut likeness = input.likeness.clone();
    likeness.exclude.extend(likeness.links.iter().cloned());
    Ok(index.related_evidence(&likeness, candidates)?)
}

/// The terms of the note's own text (what it embeds weighs in finding related notes, but the
/// note is not about its embedded licence block).
fn own_terms(terms: &Terms, likeness: &scholia_index::Likeness) -> Terms {
    let own: HashSet<String> = tokenizer::terms(&likeness.text)
        .into_iter()
        .chain(tokenizer::terms(&likeness.title))
        .chain(tokenizer::terms(&likeness.focus))
        .collect();
    Terms(terms.0.iter().filter(|(t, _)| own.contains(t)).cloned().collect())
}

/// The first `n` terms, by weight (as the index has them: folded, CJK in pairs).
fn display_terms(terms: &Terms, n: usize) -> Vec<String> {
    terms.0.iter().take(n).map(|(t, _)| t.clone()).collect()
}

fn terms_of(index: &VaultIndex, likeness: &scholia_index::Likeness) -> Result<Terms, IndexError> {
    index.weigh(likeness)
}

/// The note's key terms (what a topic-less LLM run searches for).
pub(crate) async fn key_terms(index: &Arc<VaultIndex>, input: &Input, n: usize) -> Result<Vec<String>, ResearchError> {
    let (index, likeness) = (index.clone(), input.likeness.clone());
    let terms = scholia_base::spawn_blocking(move || -> Result<Vec<String>, IndexError> {
        let mut terms = topics::topical_first(&own_terms(&terms_of(&index, &likeness)?, &likeness), &likeness, n);
        terms.truncate(n);
        // Searched as written where the note has the word (`Einführung`, not `einfuhrung`).
        let surface = Surface::of(&likeness.text);
        Ok(terms.into_iter().map(|t| surface.written(&t).unwrap_or(t)).collect())
    })
    .await?;
    Ok(terms)
}

pub(crate) async fn research(
    ctx: &Context,
    index: &Arc<VaultIndex>,
    input: Input,
    job: &Job,
) -> Result<NoteResearch, ResearchError> {
    job.report(ResearchEvent::Started {
        mode: "offline",
        depth: Depth::Shallow,
    });
    let (terms, related) = {
        let (index, input) = (index.clone(), input.clone());
        scholia_base::spawn_blocking(move || select(&index, &input, RELATED_NOTES)).await?
    };
    // Words it shares, or notes near it in meaning (with vectors): either is something to say.
    if terms.is_empty() && related.is_empty() {
        return Err(ResearchError::NoTopics(
            input.rel,
            " (no words it shares with other notes)".into(),
        ));
    }
    let focus = input.likeness.focus.trim().to_string();
    if !focus.is_empty() {
        let words: HashSet<String> = tokenizer::terms(&focus).into_iter().collect();
        if !terms.iter().any(|t| words.contains(t)) {
            return Err(ResearchError::FocusNotInVault(focus));
        }
    }
    // Shown as the note writes them, or not at all (a CJK character pair is no word of it).
    let l = &input.likeness;
    let terms = Surface::of(&format!("{}\n{}\n{}", l.title, l.text, l.focus))
        .in_language(input.lang)
        .show(&terms, KEY_TERMS);
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
    let provenance = provenance(Depth::Shallow, None, None, topics.len(), 0);
    // The vault's hubs are one line, most linked first: found because many notes link them,
    // they say nothing of this note in particular; five entries of "linked from N notes"
    // buried the others, and one alone (Settings, quoting "Learn how to customize Obsidian
    // through the Settings interface.") was the entry a reader of obsidian-help met most.
    let mut hubs: Vec<(usize, &str)> = related
        .iter()
        .filter_map(|r| Some((r.hub()?, r.target.as_str())))
        .collect();
    hubs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let hubs: Vec<_> = hubs
        .into_iter()
        .map(|(linking, target)| json!({"target": target, "linking": linking}))
        .collect();
    // The entries: the notes neither hubs nor linking back.
    let entries: Vec<&RelatedNote> = related.iter().filter(|r| !r.links_back && r.hub().is_none()).collect();
    let section = ctx.library.render(
        prompts::RESEARCH_OFFLINE,
        json!({
            "terms": terms,
            "notes": entries.iter().map(|r| json!({
                "brief": r.brief,
                "target": r.target,
                "terms": r.terms,
                // Made inert and one line each by the template's md_passage filter.
                "passages": r.passages,
                "mentioned_on": r.mentioned_on,
                // Why it is here when its words are not why: the template says it.
                "tie": r.tie,
                "tie_target": r.tie_target,
            })).collect::<Vec<_>>(),
            "brief": brief_line(&entries),
            "hubs": hubs,
            "linked": related.iter().filter(|r| r.links_back).map(|r| &r.target).collect::<Vec<_>>(),
            "provenance": provenance,
            "when": time::OffsetDateTime::now_utc().date().to_string(),
            "topics": topics.len(),
            "focus": (!focus.is_empty()).then_some(focus.as_str()),
            // The fixed sentences in the note's language (English when unknown).
            "lang": input.lang,
        }),
    )?;
    let record = crate::record::RunRecord {
        note: input.rel.clone(),
        at: String::new(),
        sources: related
            .iter()
            .map(|r| crate::record::SourceRecord::vault(&r.title, &r.path, &r.target, &r.passages.join("\n")))
            .collect(),
        contradictions: Vec::new(),
    };
    let sources = related
        .into_iter()
        .map(|r| Source::Vault {
            title: r.title,
            path: r.path,
            target: r.target,
            terms: r.terms,
            tie: (r.tie != Tie::Words).then_some(r.tie),
        })
        .collect();
    finish(Finished {
        record,
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
        synthesis_failed: None,
        links: scholia_vault::inert::Links::none(),
    })
}

#[cfg(test)]
mod tests;
