//! Queries: full-text search with snippets, symbol search, wikilink resolution, note names.

use std::ops::Range;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use scholia_base::Summary;

use super::schema::Outline;
use super::tokenizer::{self};
use super::{IndexError, VaultIndex};

/// A full-text search result.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Hit {
    pub path: String,
    pub title: String,
    pub score: f32,
    /// A passage of the note around the matches, plain text.
    pub snippet: String,
    /// Byte ranges of matched words within `snippet`.
    pub highlights: Vec<Range<usize>>,
    /// The heading of the section where the first match is, if it is under one.
    pub heading: Option<String>,
    /// The 1-based line to open the note at: the heading over the first match, else the
    /// match's own line, else 1.
    pub line: usize,
}

/// A note a search ranks, before its snippet is made.
pub(crate) struct Ranked {
    pub path: String,
    pub title: String,
    pub score: f32,
}

/// Vault search hits, best first.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(transparent)]
pub struct SearchResults {
    pub hits: Vec<Hit>,
    #[serde(skip)]
    pub query: String,
    /// How the hits were ranked.
    #[serde(skip)]
    pub mode: crate::SearchMode,
    /// What the caller should know (meaning asked for and not to be had), said once.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl Summary for SearchResults {
    fn summary(&self) -> String {
        match self.hits.len() {
            0 => format!("no notes match `{}`", self.query),
            1 => format!("1 note matches `{}`", self.query),
            n => format!("{n} notes match `{}`", self.query),
        }
    }
}

/// A note as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct NoteInfo {
    pub path: String,
    pub title: String,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "level")]
pub enum SymbolKind {
    Note,
    Heading(u8),
}

/// A note or a heading, for `workspace/symbol`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    pub path: String,
    /// Zero-based line (0 for notes).
    pub line: u32,
    /// The note's title, for headings.
    pub container: Option<String>,
    #[serde(skip)]
    pub(crate) score: f32,
}

/// A note found by name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NoteRef {
    pub path: String,
    pub outline: Outline,
}

/// Whose words a search reads: all a note holds (a person searching finds what scholia wrote
/// too, ranked below the owner's words), or the owner's alone (research: what it finds and
/// quotes must not change as notes gain research sections, issue 39).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    All,
    Owner,
}

const SNIPPET_CHARS: usize = 220;
/// The longest query searched: tantivy's parser recurses over the query's structure, so its
/// input is bounded before it runs.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Deeper-nested or operator-heavy queries are read as plain words.
const MAX_QUERY_NESTING: usize = 8;
const MAX_QUERY_OPERATORS: usize = 64;
/// Words of a query given a typo-tolerant title match (each builds an automaton).
const MAX_FUZZY_WORDS: usize = 16;

impl VaultIndex {
    pub(super) fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    pub(super) fn stored(&self, searcher: &Searcher, addr: DocAddress) -> Result<(String, Outline), IndexError> {
        let doc: TantivyDocument = searcher.doc(addr)?;
        let path = doc
            .get_first(self.fields.path)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let outline = doc
            .get_first(self.fields.outline)
            .and_then(|v| v.as_str())
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        Ok((path, outline))
    }

    pub(crate) fn parse_user_query(&self, query: &str, whose: Whose) -> Result<Box<dyn Query>, IndexError> {
        if query.trim().is_empty() {
            return Err(IndexError::EmptyQuery);
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(IndexError::QueryTooLong {
                chars,
                max: MAX_QUERY_CHARS,
            });
        }
        let plain;
        let query = if syntax_is_bounded(query) {
            query
        } else {
            tracing::debug!("query nested or operator-heavy: searched as plain words");
            plain = plain_words(query);
            if plain.trim().is_empty() {
                return Err(IndexError::EmptyQuery);
            }
            plain.as_str()
        };
        let f = &self.fields;
        let mut fields = vec![f.title, f.headings, f.tags, f.body];
        if whose == Whose::All {
            fields.push(f.research);
        }
        let mut parser = QueryParser::for_index(&self.index, fields);
        // What scholia wrote is found, below what the owner wrote.
        parser.set_field_boost(f.research, 0.5);
        parser.set_field_boost(f.title, 3.0);
        parser.set_field_boost(f.headings, 1.5);
        parser.set_field_boost(f.tags, 2.0);
        // An unclosed quote would swallow the rest of the query into a phrase.
        let balanced;
        let query = if query.matches('"').count() % 2 == 1 {
            let i = query.rfind('"').expect("odd count");
            balanced = format!("{}{}", &query[..i], &query[i + 1..]);
            balanced.as_str()
        } else {
            query
        };
        let (q, errors) = parser.parse_query_lenient(query);
        if !errors.is_empty() {
            tracing::debug!(?errors, "query parsed leniently");
        }
        Ok(q)
    }

    /// BM25 over title (boosted), headings, tags and body; phrase queries with quotes; a fuzzy
    /// title match when nothing matches exactly. `exclude` drops one note (by path).
    pub fn search(&self, query: &str, limit: usize, exclude: Option<&str>) -> Result<Vec<Hit>, IndexError> {
        let ranked = self.search_ranked(query, limit, exclude, Whose::All)?;
        self.with_snippets(query, ranked, Whose::All)
    }

    /// [`VaultIndex::search`] of the owner's words alone, snippets included: what research
    /// reads of the vault, so that no research section (its own, or another note's) decides
    /// what it finds or quotes.
    pub fn search_owned(&self, query: &str, limit: usize, exclude: Option<&str>) -> Result<Vec<Hit>, IndexError> {
        let ranked = self.search_ranked(query, limit, exclude, Whose::Owner)?;
        self.with_snippets(query, ranked, Whose::Owner)
    }

    /// [`VaultIndex::search`]'s ranking without the snippets (which read each note): what a
    /// fusion with other rankings needs of its many candidates.
    pub(crate) fn search_ranked(
        &self,
        query: &str,
        limit: usize,
        exclude: Option<&str>,
        whose: Whose,
    ) -> Result<Vec<Ranked>, IndexError> {
        let parsed = self.parse_user_query(query, whose)?;
        let searcher = self.searcher();
        let exclude_clause = |q: Box<dyn Query>| -> Box<dyn Query> {
            let q = self.scoped(q);
            match exclude {
                Some(path) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, q),
                    (
                        Occur::MustNot,
                        Box::new(TermQuery::new(self.path_term(path), IndexRecordOption::Basic)),
                    ),
                ])),
                None => q,
            }
        };
        let limit = limit.max(1);
        let mut top = searcher.search(
            &exclude_clause(parsed.box_clone()),
            &TopDocs::with_limit(limit).order_by_score(),
        )?;
        // A quoted phrase asks for exactly that; anything else gets a typo-tolerant second try.
        if top.is_empty()
            && !query.contains('"')
            && let Some(fuzzy) = self.fuzzy_title_query(query)
        {
            top = searcher.search(&exclude_clause(fuzzy), &TopDocs::with_limit(limit).order_by_score())?;
        }
        let mut ranked = Vec::with_capacity(top.len());
        let scope = self.scope();
        for (score, addr) in top {
            let (path, outline) = self.stored(&searcher, addr)?;
            // The query kept the scope's folders as written; a link out of them is left out here.
            if !scope.is_whole_vault() && !scope.allows(&path) {
                continue;
            }
            ranked.push(Ranked {
                path,
                title: outline.title,
                score,
            });
        }
        Ok(ranked)
    }

    /// Hits of `ranked` notes, in their order, with the passages around `query`'s matches.
    pub(crate) fn with_snippets(&self, query: &str, ranked: Vec<Ranked>, whose: Whose) -> Result<Vec<Hit>, IndexError> {
        if ranked.is_empty() {
            return Ok(Vec::new());
        }
        let parsed = self.parse_user_query(query, whose)?;
        let searcher = self.searcher();
        let generator = SnippetGenerator::create(&searcher, &*parsed, self.fields.body)
            .ok()
            .map(|mut g| {
                g.set_max_num_chars(SNIPPET_CHARS);
                g
            });
        Ok(ranked
            .into_iter()
            .map(|r| {
                let (snippet, highlights, heading, line) = generator
                    .as_ref()
                    .map(|g| self.snippet(g, &r.path, whose))
                    .unwrap_or_else(|| (String::new(), Vec::new(), None, 1));
                Hit {
                    path: r.path,
                    title: r.title,
                    score: r.score,
                    snippet,
                    highlights,
                    heading,
                    line,
                }
            })
            .collect())
    }

    /// The passage around the matches, the matched ranges in it, and the heading over the first
    /// match. Read from the open buffer or the file (never through a link out of the vault).
    fn snippet(
        &self,
        generator: &SnippetGenerator,
        rel: &str,
        whose: Whose,
    ) -> (String, Vec<Range<usize>>, Option<String>, usize) {
        let Some(mut text) = self.note_text(rel) else {
            return (String::new(), Vec::new(), None, 1);
        };
        if whose == Whose::Owner {
            text = scholia_vault::research_part::owner_text(text);
        }
        let parsed = scholia_vault::parse::parse(&text, "");
        let plain = &parsed.plain_text;
        let snippet = generator.snippet(plain);
        let fragment = snippet.fragment();
        if fragment.is_empty() {
            // No body match (a title or tag hit): show the start of the note instead.
            let start: String = plain.split_whitespace().collect::<Vec<_>>().join(" ");
            let cut = start
                .char_indices()
                .nth(SNIPPET_CHARS)
                .map(|(i, _)| i)
                .unwrap_or(start.len());
            return (start[..cut].to_string(), Vec::new(), None, 1);
        }
        // The first matched word, found in the source (ASCII lowercasing keeps byte offsets
        // aligned with the headings' ranges), and the heading over it.
        let at = snippet.highlighted().first().and_then(|r| {
            let word = fragment.get(r.clone())?.to_ascii_lowercase();
            text.to_ascii_lowercase().find(&word)
        });
        let over = at.and_then(|at| {
            parsed
                .headings
                .iter()
                .filter(|h| h.section.start <= at && at < h.section.end)
                .max_by_key(|h| h.section.start)
        });
        let heading = over.map(|h| h.text.clone());
        let line_at = |byte: usize| {
            text.as_bytes()[..byte.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        };
        let line = match (over, at) {
            (Some(h), _) => h.line as usize + 1,
            (None, Some(at)) => line_at(at),
            (None, None) => 1,
        };
        // Collapse the whitespace of the fragment, keeping highlight ranges aligned.
        let mut out = String::with_capacity(fragment.len());
        let mut map = vec![0usize; fragment.len() + 1];
        let mut last_space = false;
        for (i, c) in fragment.char_indices() {
            map[i] = out.len();
            if c.is_whitespace() {
                if !last_space && !out.is_empty() {
                    out.push(' ');
                }
                last_space = true;
            } else {
                out.push(c);
                last_space = false;
            }
        }
        map[fragment.len()] = out.len();
        let highlights = snippet.highlighted().iter().map(|r| map[r.start]..map[r.end]).collect();
        (out, highlights, heading, line)
    }

    /// A note's text for quoting: the open buffer, else the file (its first 512 KiB, never
    /// through a link out of the vault).
    pub fn note_text(&self, rel: &str) -> Option<String> {
        if !self.scope().allows(rel) {
            return None;
        }
        let overlay = scholia_base::lock(&self.overlays).get(rel).cloned();
        if overlay.is_some() {
            return overlay;
        }
        let abs = self.vault.abs(rel);
        if !self.vault.holds(&abs) {
            return None;
        }
        scholia_vault::read::read_text(&abs, 512 * 1024, true)
            .ok()
            .map(|t| t.text)
    }

    /// A note's whole text (the open buffer, else the file, up to
    /// [`scholia_vault::change::MAX_BYTES`]), or why it cannot be read: what references and
    /// renames read.
    pub fn note_text_whole(&self, rel: &str) -> Result<String, String> {
        if !self.scope().allows(rel) {
            return Err("outside the folders this server may use".into());
        }
        if let Some(t) = scholia_base::lock(&self.overlays).get(rel).cloned() {
            return Ok(t);
        }
        let abs = self.vault.abs(rel);
        if !self.vault.holds(&abs) {
            return Err("not a file inside the vault".into());
        }
        match scholia_vault::read::read_text(&abs, scholia_vault::change::MAX_BYTES, false) {
            Ok(t) => Ok(t.text),
            Err(scholia_vault::read::ReadError::TooLarge { size, limit, .. }) => {
                Err(format!("{size} bytes is more than the {limit} bytes scholia rewrites"))
            }
            Err(e) => Err(e.reason().to_string()),
        }
    }

    /// Notes in `folder` (vault-relative, any depth) carrying `tag` (or a nested tag under it),
    /// by path: `(page, total)`.
    pub fn list_notes(
        &self,
        folder: Option<&str>,
        tag: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<NoteInfo>, usize), IndexError> {
        let folder = folder.map(|f| f.trim_matches('/')).filter(|f| !f.is_empty());
        let scope = self.scope();
        let in_folder = |p: &str| folder.is_none_or(|f| p.starts_with(&format!("{f}/"))) && scope.allows(p);
        let searcher = self.searcher();
        let mut paths: Vec<String> = self.stamps()?.into_keys().filter(|p| in_folder(p)).collect();
        paths.sort();
        let tag = tag
            .map(|t| t.trim().trim_start_matches('#').to_lowercase())
            .filter(|t| !t.is_empty());
        let Some(tag) = tag else {
            let total = paths.len();
            let page = paths.into_iter().skip(offset).take(limit);
            let mut out = Vec::new();
            for path in page {
                let outline = self.outline(&path)?.unwrap_or_default();
                out.push(NoteInfo {
                    path,
                    title: outline.title,
                    tags: outline.tags,
                });
            }
            return Ok((out, total));
        };
        // Notes whose tags field has the tag's words, then the exact tag (or a nested one).
        let words = tokenizer::tokens(&tag);
        let clauses: Vec<(Occur, Box<dyn Query>)> = words
            .iter()
            .map(|w| {
                let term = Term::from_field_text(self.fields.tags, w);
                (
                    Occur::Must,
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic)) as Box<dyn Query>,
                )
            })
            .collect();
        let candidates = searcher.search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(searcher.num_docs().max(1) as usize).order_by_score(),
        )?;
        let mut matching = Vec::new();
        for (_, addr) in candidates {
            let (path, outline) = self.stored(&searcher, addr)?;
            let has = outline.tags.iter().any(|t| {
                let t = t.to_lowercase();
                t == tag || t.starts_with(&format!("{tag}/"))
            });
            if has && in_folder(&path) {
                matching.push(NoteInfo {
                    path,
                    title: outline.title,
                    tags: outline.tags,
                });
            }
        }
        matching.sort_by(|a, b| a.path.cmp(&b.path));
        let total = matching.len();
        Ok((matching.into_iter().skip(offset).take(limit).collect(), total))
    }

    fn fuzzy_title_query(&self, query: &str) -> Option<Box<dyn Query>> {
        let words = tokenizer::tokens(query);
        let clauses: Vec<(Occur, Box<dyn Query>)> = words
            .iter()
            .filter(|w| w.chars().count() >= 3)
            .take(MAX_FUZZY_WORDS)
            .map(|w| {
                let distance = if w.chars().count() > 5 { 2 } else { 1 };
                let q: Box<dyn Query> = Box::new(FuzzyTermQuery::new(
                    Term::from_field_text(self.fields.title, w),
                    distance,
                    true,
                ));
                (Occur::Should, q)
            })
            .collect();
        (!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>)
    }
}

/// Whether the query's syntax is shallow enough for tantivy's recursive parser.
fn syntax_is_bounded(query: &str) -> bool {
    let (mut depth, mut max, mut operators) = (0usize, 0usize, 0usize);
    for c in query.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '+' | '-' | '!' | '^' | '~' | ':' | '*' | '\\' => operators += 1,
            _ => {}
        }
    }
    let words = query
        .split_whitespace()
        .filter(|w| matches!(*w, "AND" | "OR" | "NOT"))
        .count();
    max <= MAX_QUERY_NESTING && operators + words <= MAX_QUERY_OPERATORS
}

/// The query's words without any syntax.
fn plain_words(query: &str) -> String {
    query
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
