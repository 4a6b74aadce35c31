//! The index schema and how a parsed note becomes a tantivy document.

use serde::{Deserialize, Serialize};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{TantivyDocument, doc};

use super::tokenizer::{self, BODY, PREFIXES, WORDS};
use scholia_vault::parse::ParsedNote;
use scholia_vault::scan::Stamp;

/// Bumped whenever the schema or what goes into it changes: an index of another format is
/// rebuilt, not read.
pub const FORMAT: u32 = 22;

#[derive(Clone, Copy)]
pub struct Fields {
    /// Vault-relative path, the document's identity.
    pub path: Field,
    /// Lower-cased names a wikilink may use: stem, path without extension, aliases.
    pub key: Field,
    /// The names prose may mention the note by (file name, aliases) as their words joined by
    /// spaces ([`name_words`]), when specific enough: unlinked mentions walk
    /// it along the text's words, with no table of every name in the vault.
    pub names: Field,
    pub title: Field,
    pub headings: Field,
    pub tags: Field,
    /// Each tag lower-cased, and each of its parents (`project` for `project/alpha`): the
    /// notes carrying a tag, nested ones included, are a term lookup.
    pub tag_keys: Field,
    /// Each tag as written: the vault's tags, in their own case, for completion.
    pub tag_names: Field,
    /// The owner's text: the note without scholia's `## Research` section.
    pub body: Field,
    /// The `## Research` section's text: searchable, never the note's own words (related
    /// notes and passages read `body`).
    pub research: Field,
    /// Word prefixes of title, aliases and file name, for symbol search and completion.
    pub sym_title: Field,
    /// Word prefixes of headings.
    pub sym_head: Field,
    /// JSON [`Outline`] for symbols and heading lookups.
    pub outline: Field,
    /// The link key ([`crate::link_key`]) of every wikilink and embed in the owner's text,
    /// once each: the notes linking to a note are a term lookup (stored: what a note links).
    pub links: Field,
    /// The same for links in the `## Research` section: references and renames count them,
    /// relatedness never does.
    pub research_links: Field,
    /// Word stems of the owner's text and title ([`crate::tokenizer::stems`]), counted: what
    /// notes are compared by.
    pub stems: Field,
    /// The length of the note's stem vector, √Σ(1 + ln tf)²: cosine similarity from postings
    /// alone.
    pub stem_norm: Field,
    pub mtime: Field,
    pub size: Field,
}

pub fn build() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let words = |tokenizer: &str, positions: bool| {
        let record = if positions {
            IndexRecordOption::WithFreqsAndPositions
        } else {
            IndexRecordOption::WithFreqs
        };
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(record),
        )
    };
    let prefixes = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(PREFIXES)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED | FAST),
        key: b.add_text_field("key", STRING),
        names: b.add_text_field("names", STRING),
        title: b.add_text_field("title", words(WORDS, true) | STORED),
        headings: b.add_text_field("headings", words(WORDS, true)),
        tags: b.add_text_field("tags", words(WORDS, false)),
        tag_keys: b.add_text_field("tag_keys", STRING),
        tag_names: b.add_text_field("tag_names", STRING),
        body: b.add_text_field("body", words(BODY, true)),
        research: b.add_text_field("research", words(BODY, true)),
        sym_title: b.add_text_field("sym_title", prefixes.clone()),
        sym_head: b.add_text_field("sym_head", prefixes),
        outline: b.add_text_field("outline", STORED),
        links: b.add_text_field("links", STRING | STORED),
        research_links: b.add_text_field("research_links", STRING),
        stems: b.add_text_field("stems", words("whitespace", false)),
        stem_norm: b.add_f64_field("stem_norm", FAST),
        mtime: b.add_u64_field("mtime", FAST | INDEXED),
        size: b.add_u64_field("size", FAST),
    };
    (b.build(), fields)
}

/// What symbol search and heading lookups need of a note, stored with it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Outline {
    #[serde(rename = "t")]
    pub title: String,
    #[serde(rename = "a", default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// `(level, zero-based line, text)`.
    #[serde(rename = "h", default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<(u8, u32, String)>,
    #[serde(rename = "g", default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A note as the index reads it: the whole note (outline, names, links), and apart its own
/// text and its `## Research` section when it has one.
pub struct IndexedNote {
    pub note: ParsedNote,
    /// The note without its `## Research` section, parsed; `None` when it has none.
    own: Option<ParsedNote>,
    research: String,
    /// Link keys of the research section's links.
    research_links: Vec<String>,
    /// Link keys of a note indexed in part: those of the whole note (see
    /// [`IndexedNote::links_of_whole`]).
    more_links: Vec<String>,
}

impl IndexedNote {
    pub fn parse(text: &str, rel: &str) -> IndexedNote {
        let note = scholia_vault::parse::parse(text, scholia_vault::stem(rel));
        // Only a note with a level-2 "Research" heading pays for the split.
        let maybe = note.headings.iter().any(|h| {
            h.level == scholia_vault::SECTION_LEVEL && h.text.trim().eq_ignore_ascii_case(scholia_vault::SECTION)
        });
        let split = maybe
            .then(|| scholia_vault::research_part::split_research(text))
            .flatten();
        let (own, research, research_links) = match split {
            Some((own, research)) => {
                let research = scholia_vault::parse::parse(&research, "");
                (
                    Some(scholia_vault::parse::parse(&own, scholia_vault::stem(rel))),
                    research.plain_text,
                    crate::graph::link_keys(&research.links, rel),
                )
            }
            None => (None, String::new(), Vec::new()),
        };
        IndexedNote {
            note,
            own,
            research,
            research_links,
            more_links: Vec::new(),
        }
    }

    /// A note longer than the index reads is searched by its first part, but every link it
    /// holds counts: backlinks, renames and moves find the links past the cut too. Those of its
    /// `## Research` section (at the end, so mostly past the cut) are research's, as in a
    /// note read whole: counted as the owner's, they fed what research ranks by.
    pub fn links_of_whole(&mut self, whole: &str, rel: &str) {
        let (own, research): (std::borrow::Cow<str>, String) = match scholia_vault::research_part::split_research(whole)
        {
            Some((own, research)) => (own.into(), research),
            None => (whole.into(), String::new()),
        };
        self.more_links = crate::graph::link_keys(&scholia_vault::parse::links(&own), rel);
        for key in crate::graph::link_keys(&scholia_vault::parse::links(&research), rel) {
            if !self.research_links.contains(&key) {
                self.research_links.push(key);
            }
        }
    }

    /// Bytes of text the body tokenizer will count for this note (its own text and its
    /// research section): what the producer's backlog is measured in.
    pub fn body_bytes(&self) -> u64 {
        (self.own().plain_text.len() + self.research.len()) as u64
    }

    /// The owner's part: the whole note when it has no research section.
    pub fn own(&self) -> &ParsedNote {
        self.own.as_ref().unwrap_or(&self.note)
    }
}

pub fn document(fields: &Fields, rel: &str, stamp: Stamp, indexed: &IndexedNote) -> TantivyDocument {
    let note = &indexed.note;
    let own = indexed.own();
    let stem = scholia_vault::stem(rel);
    let without_ext = rel.rsplit_once('.').map(|(p, _)| p).unwrap_or(rel);
    let outline = Outline {
        title: note.title.clone(),
        aliases: note.aliases.clone(),
        headings: note
            .headings
            .iter()
            .map(|h| (h.level, h.line, h.text.clone()))
            .collect(),
        tags: note.tags.clone(),
    };
    let mut d = doc!(
        fields.path => rel,
        fields.key => stem.to_lowercase(),
        fields.key => without_ext.to_lowercase(),
        fields.title => note.title.as_str(),
        fields.body => own.plain_text.as_str(),
        fields.research => indexed.research.as_str(),
        fields.sym_title => note.title.as_str(),
        fields.outline => serde_json::to_string(&outline).expect("outline serialises"),
        fields.mtime => stamp.mtime_ns,
        fields.size => stamp.size,
    );
    let (stems, norm) = stem_vector(&own.plain_text, &note.title);
    d.add_text(fields.stems, stems);
    d.add_f64(fields.stem_norm, norm);
    if stem != note.title {
        d.add_text(fields.sym_title, stem);
    }
    let mut names: Vec<String> = Vec::new();
    for name in std::iter::once(stem).chain(note.aliases.iter().map(String::as_str)) {
        if let Some(words) = name_words(name)
            && !names.contains(&words)
        {
            d.add_text(fields.names, &words);
            names.push(words);
        }
    }
    for alias in &note.aliases {
        d.add_text(fields.key, alias.to_lowercase());
        d.add_text(fields.sym_title, alias);
        // Searchable as names of the note (the stored title stays the first value).
        d.add_text(fields.title, alias);
    }
    for h in &own.headings {
        d.add_text(fields.headings, &h.text);
    }
    for h in &note.headings {
        d.add_text(fields.sym_head, &h.text);
    }
    let mut keys: Vec<String> = Vec::new();
    for t in &note.tags {
        d.add_text(fields.tags, t);
        d.add_text(fields.tag_names, t.trim_matches('/'));
        let key = scholia_vault::tags::key(t);
        let mut parent = key.as_str();
        loop {
            if !keys.iter().any(|k| k == parent) {
                keys.push(parent.to_string());
            }
            match parent.rsplit_once('/') {
                Some((p, _)) if !p.is_empty() => parent = p,
                _ => break,
            }
        }
    }
    for k in keys {
        d.add_text(fields.tag_keys, k);
    }
    for key in crate::graph::link_keys(&own.links, rel) {
        d.add_text(fields.links, key);
    }
    for key in &indexed.more_links {
        d.add_text(fields.links, key);
    }
    for key in &indexed.research_links {
        d.add_text(fields.research_links, key);
    }
    d
}

/// The note's stems, space-separated for the index, and the length of its stem vector
/// (counted in a hash map: sorting them was a tenth of a cold build).
fn stem_vector(text: &str, title: &str) -> (String, f64) {
    let mut joined = String::with_capacity(text.len() / 2);
    crate::tokenizer::push_stems(text, &mut joined);
    crate::tokenizer::push_stems(title, &mut joined);
    let mut counts: rustc_hash::FxHashMap<&str, u32> = Default::default();
    for stem in joined.split(' ').filter(|s| !s.is_empty()) {
        *counts.entry(stem).or_default() += 1;
    }
    let sum: f64 = counts.values().map(|&n| (1.0 + f64::from(n).ln()).powi(2)).sum();
    (joined, sum.sqrt())
}

/// Longest note name matched in text, in tokens (a character each in Thai or Chinese).
pub(crate) const MAX_NAME_TOKENS: usize = 64;

/// A name as the index holds it for mentions ([`crate::schema::Fields::names`]): its words
/// joined by spaces, when specific enough that finding it in a text means the note.
pub(crate) fn name_words(name: &str) -> Option<String> {
    let words = tokenizer::tokens(name);
    nameable(&words).then(|| words.join(" "))
}

/// Whether a name is specific enough that finding it in a text means the note: more than one
/// character (or syllable) of an unspaced script, more than three letters otherwise.
pub(crate) fn nameable(words: &[String]) -> bool {
    if words.is_empty() || words.len() > MAX_NAME_TOKENS {
        return false;
    }
    let chars: usize = words.iter().map(|w| w.chars().count()).sum();
    let unspaced = words
        .iter()
        .all(|w| (w.chars().count() == 1 && !w.is_ascii()) || tokenizer::is_unspaced(w));
    if unspaced {
        words.len() >= 2
    } else {
        chars >= 4 && !(words.len() == 1 && tokenizer::is_stopword(&words[0]))
    }
}
