//! Notes related to a note, as a search engine sees it: a BM25 "more like this" query built
//! from the note's weightiest words (its title and headings counting more, embedded text
//! less), plus what the vault says outright: notes it names or that name it, notes it links
//! to, notes sharing its tags.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Searcher, Term};

use super::tokenizer;
use super::{IndexError, VaultIndex};

/// What a note is, for finding the notes related to it.
#[derive(Debug, Clone, Default)]
pub struct Likeness {
    /// The note's own path (never related to itself).
    pub rel: String,
    pub title: String,
    pub aliases: Vec<String>,
    pub headings: Vec<String>,
    pub tags: Vec<String>,
    /// The note's own readable text.
    pub text: String,
    /// The readable text of the notes it embeds: counted, but weakly.
    pub embedded: String,
    /// Vault paths of the notes it links to.
    pub links: Vec<String>,
    /// What the owner asked the research to be about: its words lead the query.
    pub focus: String,
    /// Notes never returned and not weighed against the others (the notes it already links,
    /// when what it does not know is wanted).
    pub exclude: Vec<String>,
}

/// A related note and the words it shares with the note.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Related {
    pub path: String,
    pub title: String,
    pub score: f32,
}

/// The note's words and their weights, heaviest first.
#[derive(Debug, Clone, Default)]
pub struct Terms(pub Vec<(String, f32)>);

/// Words of the query; more add little but cost time.
const QUERY_TERMS: usize = 60;
/// Candidates the content query contributes before the vault's own signals are added.
const CANDIDATES: usize = 60;
const TITLE_WEIGHT: f32 = 3.0;
const HEADING_WEIGHT: f32 = 2.0;
const EMBED_WEIGHT: f32 = 0.2;
/// A focus word weighs this many times the note's heaviest word.
const FOCUS_WEIGHT: f32 = 2.0;
/// What each of the vault's signals adds to a content score normalised to at most 1.
#[derive(Debug, Clone, Copy)]
pub struct Signals {
    /// A note it links to.
    pub linked: f32,
    /// A note whose name its text holds.
    pub names_it: f32,
    /// A note whose text holds its name.
    pub named_by: f32,
    /// Shared tags (divided among its tags).
    pub shared_tag: f32,
    /// A note linked by a note it links (X → Y → Z), Adamic–Adar: divided by the log of how
    /// many notes Y links, a hub's links saying little.
    pub neighbour: f32,
    /// A note linked by a note that links to it (X ← W → Z, co-citation), Adamic–Adar.
    pub cocited: f32,
    /// A note linking to a note it links (X → Y ← Z, coupling), Adamic–Adar.
    pub coupled: f32,
    /// A note in the same folder, divided by the log of the folder's size.
    pub folder: f32,
}

/// Content leads; the vault's signals were set by hidden-link recall@10 on obsidian-help
/// (`cargo bench --bench related -- --all`, 34 languages): names and links at 1.0/0.8/1.0 gave
/// `en` 0.594, at 0.2/0.15/0.2 0.633 (mean 0.528, above tf·idf in 20 of 34); adding the same
/// folder (0.5), co-citation (0.15) and coupling (0.1) gave mean 0.556, above tf·idf in 32 of
/// 34 (folder alone 0.543; co-citation and coupling alone lowered `en`).
impl Default for Signals {
    fn default() -> Self {
        Signals {
            linked: 1.5,
            names_it: 0.2,
            named_by: 0.15,
            shared_tag: 0.3,
            neighbour: 0.2,
            cocited: 0.15,
            coupled: 0.1,
            folder: 0.5,
        }
    }
}

/// Notes whose links are read for the graph signals (linked notes, linking notes).
const MAX_NEIGHBOURS: usize = 30;
/// Notes scoring under this share of the best are left out, once there are [`MIN_RELATED`]:
/// only the weakest (a higher cut loses hidden links: recall@10 0.575 at 0.1, 0.521 at 0.25,
/// 0.318 at 0.6 on obsidian-help `en`, `cargo bench --bench related`).
const CUT: f32 = 0.1;
const MIN_RELATED: usize = 2;
/// Character pairs whose notes are counted (the most promising by an upper bound).
const PAIRS_COUNTED: usize = 150;
/// Longest note name matched in text, in tokens (a character each in Thai or Chinese).
const MAX_NAME_TOKENS: usize = 64;

/// Every name a note goes by (file name, path, aliases), as word sequences, for one searcher
/// generation.
pub(super) struct Names {
    generation: u64,
    /// First word → (the name's words, the name as indexed).
    by_first: HashMap<String, Vec<(Vec<String>, String)>>,
}

impl VaultIndex {
    /// The notes most related to `note`, best first, and the words that found them.
    pub fn related(&self, note: &Likeness, limit: usize) -> Result<(Vec<Related>, Terms), IndexError> {
        self.related_with(note, limit, &Signals::default())
    }

    /// [`VaultIndex::related`] with the vault's signals weighed as given.
    pub fn related_with(
        &self,
        note: &Likeness,
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Related>, Terms), IndexError> {
        let searcher = self.searcher();
        let terms = self.weigh_with(&searcher, note)?;
        let mut scores: HashMap<DocAddress, f32> = HashMap::new();

        // Content: BM25 over body, title and headings, each word boosted by its weight.
        if let Some(&(_, top)) = terms.0.first() {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for (word, weight) in terms.0.iter().take(QUERY_TERMS) {
                let boost = weight / top;
                for (field, field_boost) in [
                    (self.fields.body, 1.0),
                    (self.fields.title, 2.0),
                    (self.fields.headings, 1.0),
                ] {
                    let q: Box<dyn Query> = match tokenizer::phrase(word) {
                        Some(parts) => Box::new(PhraseQuery::new(
                            parts.iter().map(|p| Term::from_field_text(field, p)).collect(),
                        )),
                        None => Box::new(TermQuery::new(
                            Term::from_field_text(field, word),
                            IndexRecordOption::WithFreqs,
                        )),
                    };
                    clauses.push((Occur::Should, Box::new(BoostQuery::new(q, boost * field_boost))));
                }
            }
            clauses.push((Occur::MustNot, self.path_query(&note.rel)));
            let top_docs = searcher.search(
                &*self.scoped(Box::new(BooleanQuery::new(clauses))),
                &TopDocs::with_limit(CANDIDATES).order_by_score(),
            )?;
            let best = top_docs.first().map(|(s, _)| *s).unwrap_or(1.0).max(f32::EPSILON);
            for (score, addr) in top_docs {
                scores.insert(addr, score / best);
            }
        }

        // The vault's own word: links, names in the text both ways, shared tags.
        for path in note.links.iter().filter(|p| **p != note.rel) {
            for addr in self.docs_where(&searcher, self.path_query(path), 1)? {
                *scores.entry(addr).or_default() += signals.linked;
            }
        }
        self.graph_signals(&searcher, note, signals, &mut scores)?;
        let names = self.names(&searcher)?;
        for (name, strength) in mentioned(&names, &note.text, &searcher, self)? {
            let key = TermQuery::new(Term::from_field_text(self.fields.key, &name), IndexRecordOption::Basic);
            for addr in self.docs_where(&searcher, Box::new(key), 3)? {
                *scores.entry(addr).or_default() += signals.names_it * strength;
            }
        }
        let own_names: Vec<&str> = std::iter::once(note.title.as_str())
            .chain(std::iter::once(scholia_vault::stem(&note.rel)))
            .chain(note.aliases.iter().map(String::as_str))
            .collect();
        let mut naming: HashSet<DocAddress> = HashSet::new();
        for name in own_names {
            let words = tokenizer::tokens(name);
            if !nameable(&words) {
                continue;
            }
            let strength = self.name_strength(&searcher, &words)?;
            let query: Box<dyn Query> = match words.as_slice() {
                [one] => Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, one),
                    IndexRecordOption::Basic,
                )),
                many => Box::new(PhraseQuery::new(
                    many.iter()
                        .map(|w| Term::from_field_text(self.fields.body, w))
                        .collect(),
                )),
            };
            for addr in self.docs_where(&searcher, query, CANDIDATES)? {
                if naming.insert(addr) {
                    *scores.entry(addr).or_default() += signals.named_by * strength;
                }
            }
        }
        for tag in &note.tags {
            let q = TermQuery::new(
                Term::from_field_text(self.fields.tags, &tag.to_lowercase()),
                IndexRecordOption::Basic,
            );
            for addr in self.docs_where(&searcher, Box::new(q), CANDIDATES)? {
                *scores.entry(addr).or_default() += signals.shared_tag / note.tags.len() as f32;
            }
        }

        let mut ranked: Vec<(f32, DocAddress)> = scores.into_iter().map(|(a, s)| (s, a)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut best = None;
        let scope = self.scope();
        let mut out = Vec::with_capacity(limit);
        for (score, addr) in ranked {
            // Weak matches beside strong ones are noise: a note it links to or names outranks
            // every note that merely shares some words.
            if out.len() == limit || (out.len() >= MIN_RELATED && score < CUT * best.unwrap_or(score)) {
                break;
            }
            let (path, outline) = self.stored(&searcher, addr)?;
            if path == note.rel || path.is_empty() || note.exclude.contains(&path) || !scope.allows(&path) {
                continue;
            }
            best.get_or_insert(score);
            out.push(Related {
                path,
                title: outline.title,
                score,
            });
        }
        Ok((out, terms))
    }

    /// The link graph around the note: notes its links link (X → Y → Z), notes linked beside it
    /// (X ← W → Z) and notes linking where it links (X → Y ← Z), each through a note of few
    /// links counting more (Adamic–Adar).
    fn graph_signals(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        signals: &Signals,
        scores: &mut HashMap<DocAddress, f32>,
    ) -> Result<(), IndexError> {
        let mut cache = HashMap::new();
        let add = |paths: &[String], weight: f32, scores: &mut HashMap<DocAddress, f32>| -> Result<(), IndexError> {
            let weight = weight / (2.0 + paths.len() as f32).ln();
            for p in paths.iter().filter(|p| **p != note.rel) {
                if let Some(addr) = self.doc_of(searcher, p)? {
                    *scores.entry(addr).or_default() += weight;
                }
            }
            Ok(())
        };
        let linked: Vec<&String> = note
            .links
            .iter()
            .filter(|p| **p != note.rel)
            .take(MAX_NEIGHBOURS)
            .collect();
        for path in &linked {
            if signals.neighbour > 0.0 {
                let theirs = self.links_of_with(searcher, path, &mut cache)?;
                add(&theirs, signals.neighbour, scores)?;
            }
            if signals.coupled > 0.0 {
                let linking = self.linking_to_with(searcher, path, crate::LinkScope::Own)?;
                add(&linking, signals.coupled, scores)?;
            }
        }
        if signals.folder > 0.0 {
            let folder = note.rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            let siblings = self.paths_in_folder(searcher, folder)?;
            let weight = signals.folder / (2.0 + siblings.len() as f32).ln();
            for (path, addr) in siblings {
                if path != note.rel {
                    *scores.entry(addr).or_default() += weight;
                }
            }
        }
        if signals.cocited > 0.0 {
            let linking = self.linking_to_with(searcher, &note.rel, crate::LinkScope::Own)?;
            for source in linking.iter().take(MAX_NEIGHBOURS) {
                let theirs = self.links_of_with(searcher, source, &mut cache)?;
                add(&theirs, signals.cocited, scores)?;
            }
        }
        Ok(())
    }

    /// The note's words weighted by tf·idf against the vault, title and headings heavier,
    /// embedded text lighter; words no other note has are left out.
    pub fn weigh(&self, note: &Likeness) -> Result<Terms, IndexError> {
        self.weigh_with(&self.searcher(), note)
    }

    fn weigh_with(&self, searcher: &Searcher, note: &Likeness) -> Result<Terms, IndexError> {
        let n = searcher.num_docs().max(1) as f32;
        // The note's own copy in the index does not count as another note having a word.
        let indexed = searcher.search(&*self.path_query(&note.rel), &tantivy::collector::Count)? as f32;
        let mut tf: HashMap<String, f32> = HashMap::new();
        let mut add = |text: &str, weight: f32| {
            for t in tokenizer::terms(text) {
                if tokenizer::is_term(&t) {
                    *tf.entry(t).or_default() += weight;
                }
            }
        };
        add(&note.text, 1.0);
        add(&note.title, TITLE_WEIGHT);
        for h in &note.headings {
            add(h, HEADING_WEIGHT - 1.0);
        }
        add(&note.embedded, EMBED_WEIGHT);
        let word_df = |w: &str| live_doc_freq(searcher, &Term::from_field_text(self.fields.body, w));
        // A pair is in at most as many notes as its rarer character: rank by that bound, then
        // count the pairs that can matter (a phrase count costs more than a lookup).
        let mut bounded = Vec::with_capacity(tf.len());
        for (term, count) in tf {
            let (df, exact) = match tokenizer::phrase(&term) {
                Some(parts) => (word_df(&parts[0])?.min(word_df(&parts[1])?) as f32, false),
                None => (word_df(&term)? as f32, true),
            };
            bounded.push((term, count, df, exact));
        }
        let idf = |df: f32| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        bounded.sort_by(|a, b| {
            (b.1.ln_1p() * idf(b.2))
                .total_cmp(&(a.1.ln_1p() * idf(a.2)))
                .then_with(|| a.0.cmp(&b.0))
        });
        let mut pairs_counted = 0;
        let mut scored = Vec::with_capacity(bounded.len());
        for (term, count, df, exact) in bounded {
            let df = match exact {
                true => df,
                false if pairs_counted < PAIRS_COUNTED => {
                    pairs_counted += 1;
                    let parts = tokenizer::phrase(&term).expect("a pair");
                    let q = PhraseQuery::new(
                        parts
                            .iter()
                            .map(|p| Term::from_field_text(self.fields.body, p))
                            .collect(),
                    );
                    searcher.search(&q, &tantivy::collector::Count)? as f32
                }
                false => continue,
            };
            // A word of this note alone relates it to nothing; one in most notes, to everything.
            if df - indexed < 1.0 || df > n * 0.5 {
                continue;
            }
            scored.push((term, (1.0 + count.ln().max(0.0)) * idf(df)));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        // The focus steers: its words (those other notes have) lead, in the order given.
        let top = scored.first().map_or(1.0, |s| s.1);
        let mut focus = Vec::new();
        for (i, t) in tokenizer::terms(&note.focus).into_iter().enumerate() {
            if !tokenizer::is_term(&t) || focus.iter().any(|(f, _)| *f == t) || word_df(&t)? as f32 - indexed < 1.0 {
                continue;
            }
            focus.push((t, top * FOCUS_WEIGHT / (1.0 + i as f32 * 0.01)));
        }
        scored.retain(|(t, _)| !focus.iter().any(|(f, _)| f == t));
        focus.extend(scored);
        Ok(Terms(focus))
    }

    fn path_query(&self, rel: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(self.path_term(rel), IndexRecordOption::Basic))
    }

    fn docs_where(&self, searcher: &Searcher, q: Box<dyn Query>, limit: usize) -> Result<Vec<DocAddress>, IndexError> {
        Ok(searcher
            .search(&q, &TopDocs::with_limit(limit).order_by_score())?
            .into_iter()
            .map(|(_, a)| a)
            .collect())
    }

    /// How much naming `words` says: a name of one common word says little.
    fn name_strength(&self, searcher: &Searcher, words: &[String]) -> Result<f32, IndexError> {
        let [one] = words else {
            return Ok(1.0);
        };
        let n = searcher.num_docs().max(2) as f32;
        let df = live_doc_freq(searcher, &Term::from_field_text(self.fields.body, one))? as f32;
        let idf = ((n + 1.0) / (df + 1.0)).ln();
        Ok((idf / (n + 1.0).ln() * 2.0).clamp(0.0, 1.0))
    }

    /// Every note name in the index, cached until the next commit.
    fn names(&self, searcher: &Searcher) -> Result<Arc<Names>, IndexError> {
        let generation = searcher.generation().generation_id();
        let mut cache = scholia_base::lock(&self.names);
        if let Some(names) = cache.as_ref().filter(|n| n.generation == generation) {
            return Ok(names.clone());
        }
        let mut by_first: HashMap<String, Vec<(Vec<String>, String)>> = HashMap::new();
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.key)?;
            let mut stream = inverted.terms().stream().map_err(|e| IndexError::Io {
                path: "the index's note names".into(),
                source: e,
            })?;
            while stream.advance() {
                // A vault path is a name of its note too, but prose names notes by file name
                // or alias (as Obsidian's unlinked mentions do); each name once.
                if stream.key().contains(&b'/') || !seen.insert(stream.key().to_vec()) {
                    continue;
                }
                let Ok(name) = std::str::from_utf8(stream.key()) else {
                    continue;
                };
                let words = tokenizer::tokens(name);
                if nameable(&words) {
                    by_first
                        .entry(words[0].clone())
                        .or_default()
                        .push((words, name.to_string()));
                }
            }
        }
        let names = Arc::new(Names { generation, by_first });
        *cache = Some(names.clone());
        Ok(names)
    }
}

/// How many live notes hold `term`. Tantivy's `doc_freq` also counts the old versions of
/// notes rewritten since the last merge (every research run rewrites one): weights from it
/// would drift with each run, and the same vault would not give the same research twice.
fn live_doc_freq(searcher: &Searcher, term: &Term) -> tantivy::Result<u64> {
    use tantivy::{DocSet, TERMINATED};
    let mut df = 0u64;
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(term.field())?;
        let Some(alive) = segment.alive_bitset() else {
            df += inverted.doc_freq(term)? as u64;
            continue;
        };
        if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? {
            let mut doc = postings.doc();
            while doc != TERMINATED {
                df += alive.is_alive(doc) as u64;
                doc = postings.advance();
            }
        }
    }
    Ok(df)
}

/// Whether a name is specific enough that finding it in a text means the note: more than one
/// character of an unspaced script, more than three letters otherwise.
fn nameable(words: &[String]) -> bool {
    if words.is_empty() || words.len() > MAX_NAME_TOKENS {
        return false;
    }
    let chars: usize = words.iter().map(|w| w.chars().count()).sum();
    let unspaced = words.iter().all(|w| w.chars().count() == 1 && !w.is_ascii());
    if unspaced {
        chars >= 2
    } else {
        chars >= 4 && !(words.len() == 1 && tokenizer::is_stopword(&words[0]))
    }
}

/// The names of notes that occur in `text` (as whole words), each with how much it says.
fn mentioned(
    names: &Names,
    text: &str,
    searcher: &Searcher,
    index: &VaultIndex,
) -> Result<Vec<(String, f32)>, IndexError> {
    let words = tokenizer::tokens(text);
    let mut found: HashSet<&str> = HashSet::new();
    for start in 0..words.len() {
        let Some(candidates) = names.by_first.get(&words[start]) else {
            continue;
        };
        for (name_words, name) in candidates {
            if words[start..].starts_with(name_words) {
                found.insert(name.as_str());
            }
        }
    }
    let mut out = Vec::with_capacity(found.len());
    for name in found {
        let strength = index.name_strength(searcher, &tokenizer::tokens(name))?;
        out.push((name.to_string(), strength));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_specific_enough_to_mean_a_note() {
        let check = |name: &str, expected: bool| assert_eq!(nameable(&tokenizer::tokens(name)), expected, "{name}");
        check("Callouts", true);
        check("Graph view", true);
        check("pdf", false);
        check("with", false);
        check("属性", true);
        check("属", false);
        check(&"word ".repeat(65), false);
    }
}
