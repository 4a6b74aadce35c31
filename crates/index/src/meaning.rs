//! Meaning in the index: the embedder the engine chose (a local model or an endpoint), the
//! notes' vectors ([`crate::vectors`]) kept current by the process that holds the writer
//! (others re-read the file), and search by meaning fused with BM25.
//!
//! A note's vector: its title leads two texts of its own words (a `## Research` section is not
//! the owner's words) as a reader reads them ([`scholia_vault::reading`]: links as their
//! visible text, without image and icon file names, callout types, code or front matter): its
//! lead, the sentence or two that says what the note is, and its first [`CHUNK_CHARS`]
//! characters; their vectors are summed, the lead counting double, and normalised. Search fuses the two rankings (each spread over
//! [0, 1], meaning weighing [`MEANING_WEIGHT`]); a quoted phrase or a `title:` query stays
//! lexical. A model or endpoint that
//! fails leaves lexical search answering, with one warning.

use std::sync::Arc;
use std::time::{Duration, Instant};

use scholia_embed::{EmbedError, Embedder, Quantized};

use super::search::Ranked;
use super::vectors::VectorSet;
use super::{Hit, IndexError, VaultIndex};

/// The texts of a note that make its vector: its lead (about [`LEAD_CHARS`]) and its opening
/// (about [`CHUNK_CHARS`], ~250 tokens of English, what all-MiniLM-L6-v2 reads; longer text is
/// cut by the model). Chosen on the development questions of `benches/embed/questions.json`
/// (mean reciprocal rank by vectors alone, 0.649 for the opening alone, 0.714 with the lead).
const LEAD_CHARS: usize = 300;
const CHUNK_CHARS: usize = 1_000;
/// What a note's vector is made of, in the vectors' file and its name: a change here computes
/// every vector again. `read-`: the text as a reader reads it, where the index's plain text
/// (`obsidian-icon-dice.svg#icon`, `[!info]`) answered 17 of the 20 held-out paraphrase
/// questions in the top 5 and this 18 (vectors alone 17 and 19; development questions 14 and
/// 14 of 16, by words and vectors fused; related notes with embeddings en 0.735 and 0.735,
/// de 0.706 and 0.703).
const RECIPE: &str = "read-lead300+opening1000";

/// Who made a set of vectors: the model, and how it read the notes ([`RECIPE`]).
fn made_by(embedder: &dyn Embedder) -> String {
    format!("{}#{RECIPE}", embedder.model_id())
}
/// How much meaning weighs in a hybrid search's fused score (words: the rest). Fitted on the
/// development questions of `benches/embed/questions.json`: 0.5 to 0.8 answered the same.
pub const MEANING_WEIGHT: f32 = 0.7;
/// How many of each ranking are fused.
const FUSED: usize = 50;
/// The cosine a note needs to be related by meaning alone (no shared word, link or folder):
/// unrelated notes of a vault sit at 0.0-0.25 with all-MiniLM-L6-v2, notes on one subject
/// at 0.4 and above.
pub const MEANING_ALONE: f32 = 0.35;
/// Notes embedded per batch, and how often what is done is saved.
const BATCH: usize = 32;
const SAVE_EVERY: Duration = Duration::from_secs(20);

/// How a search ranks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 over words.
    #[default]
    Lexical,
    /// Vectors alone.
    Semantic,
    /// Both, fused by reciprocal rank.
    Hybrid,
}

impl std::str::FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<SearchMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lexical" => Ok(SearchMode::Lexical),
            "semantic" => Ok(SearchMode::Semantic),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(format!(
                "`{other}` is not a search mode; valid: lexical, semantic, hybrid"
            )),
        }
    }
}

/// Where a server gets its embedder, off the runtime, once its vault is indexed.
pub type Source = Box<dyn Fn() -> Option<Arc<dyn Embedder>> + Send + Sync>;

/// What the index holds of meaning.
#[derive(Default)]
pub(crate) struct Meaning {
    embedder: Option<Arc<dyn Embedder>>,
    vectors: Option<Arc<VectorSet>>,
    /// When the vectors file was last read (a reader re-reads it when it changed).
    read_at: Option<std::time::SystemTime>,
    /// The embedder's answer for [`scholia_embed::PROBE`]: a file whose set another model made
    /// is not read.
    probe: Option<Vec<f32>>,
    /// A failure was said once already.
    warned: bool,
    /// The embedder's stale vectors files were looked for (once per embedder).
    swept: bool,
}

/// What computing vectors did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Embedded {
    pub embedded: usize,
    pub removed: usize,
    pub kept: usize,
    pub tokens: usize,
    /// Notes whose vectors are still to be made (it was stopped, or the embedder failed):
    /// the next run makes them.
    pub left: usize,
    /// Why it stopped before the end (the model or endpoint failed), said once per index:
    /// for the caller to show (`scholia index`) or log (a server).
    pub warning: Option<String>,
}

/// Progress of a vector computation: notes done of notes to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedProgress {
    pub done: usize,
    pub total: usize,
}

impl VaultIndex {
    /// Uses `embedder` for vectors from now on (its stored vectors are read, if any).
    /// Vectors another model made under the same name (an endpoint's tag pulled again: its
    /// answer for [`scholia_embed::PROBE`] differs) are not used, and are made again.
    pub fn set_embedder(&self, embedder: Arc<dyn Embedder>) {
        let file = self.vector_file(embedder.as_ref());
        let probe = embedder.probe();
        let loaded = VectorSet::load(&file)
            .filter(|s| s.dims == embedder.dims())
            .filter(|s| {
                let same = s.made_by_same(probe.as_deref());
                if !same {
                    tracing::warn!(
                        "{}: another model answers under this name now; the vault's vectors are made again",
                        embedder.model_id()
                    );
                }
                same
            });
        let mut set = loaded.unwrap_or_else(|| VectorSet::new(&made_by(embedder.as_ref()), embedder.dims()));
        set.probe = probe.clone().or(set.probe);
        let mut m = scholia_base::lock(&self.meaning);
        m.read_at = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
        m.vectors = Some(Arc::new(set));
        m.probe = probe;
        m.embedder = Some(embedder);
        m.warned = false;
        m.swept = false;
    }

    pub fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        scholia_base::lock(&self.meaning).embedder.clone()
    }

    /// The vectors as they are now (re-read when another process saved newer ones).
    pub fn vectors(&self) -> Option<Arc<VectorSet>> {
        let mut m = scholia_base::lock(&self.meaning);
        let embedder = m.embedder.clone()?;
        if !self.is_writer() {
            let file = self.vector_file(embedder.as_ref());
            let at = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
            if at.is_some()
                && at != m.read_at
                && let Some(set) =
                    VectorSet::load(&file).filter(|s| s.dims == embedder.dims() && s.made_by_same(m.probe.as_deref()))
            {
                m.vectors = Some(Arc::new(set));
                m.read_at = at;
            }
        }
        m.vectors.clone()
    }

    /// The note's vector, if it has one.
    pub fn note_vector(&self, rel: &str) -> Option<Quantized> {
        self.vectors()?.vector(rel)
    }

    /// Whether two notes are near in meaning (their vectors' cosine reaches
    /// [`MEANING_ALONE`]); `false` without vectors.
    pub fn near_in_meaning(&self, a: &str, b: &str) -> bool {
        let Some(vectors) = self.vectors() else { return false };
        match (vectors.vector(a), vectors.vector(b)) {
            (Some(x), Some(y)) => x.dot(&y) >= MEANING_ALONE,
            _ => false,
        }
    }

    /// A failure of the model or endpoint, said once: `Some(message)` the first time, for the
    /// caller to show (a search's answer) or to log (`embed_pending`, which no one reads).
    fn warn_once(&self, e: &EmbedError) -> Option<String> {
        let mut m = scholia_base::lock(&self.meaning);
        if m.warned {
            return None;
        }
        m.warned = true;
        Some(format!("{e}; searching by words only"))
    }

    /// Computes the vectors of every note whose file changed since its vector was made, and
    /// drops those of notes that are gone; saves as it goes. Only the process that holds the
    /// writer computes; `stop` ends it early (what is done is kept). Blocking.
    pub fn embed_pending(
        &self,
        progress: &mut dyn FnMut(EmbedProgress),
        stop: &dyn Fn() -> bool,
    ) -> Result<Embedded, IndexError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Embedded::default());
        };
        if !self.is_writer() {
            return Ok(Embedded::default());
        }
        if !std::mem::replace(&mut scholia_base::lock(&self.meaning).swept, true) {
            self.drop_stale_vectors(embedder.as_ref());
        }
        let file = self.vector_file(embedder.as_ref());
        let mut set = match self.vectors() {
            Some(v) => (*v).clone(),
            None => {
                let mut set = VectorSet::new(&made_by(embedder.as_ref()), embedder.dims());
                set.probe = scholia_base::lock(&self.meaning).probe.clone();
                set
            }
        };
        let stamps = self.stamps()?;
        let gone: Vec<String> = set
            .paths()
            .filter(|p| !stamps.contains_key(*p))
            .map(str::to_string)
            .collect();
        let mut done = Embedded {
            removed: gone.len(),
            ..Default::default()
        };
        for rel in &gone {
            set.remove(rel);
        }
        let mut todo: Vec<(&String, scholia_vault::scan::Stamp)> = stamps
            .iter()
            .filter(|(rel, stamp)| set.stamp(rel) != Some(**stamp))
            .map(|(rel, stamp)| (rel, *stamp))
            .collect();
        todo.sort_by(|a, b| a.0.cmp(b.0));
        done.kept = stamps.len() - todo.len();
        let total = todo.len();
        progress(EmbedProgress { done: 0, total });
        let mut saved = Instant::now();
        for batch in todo.chunks(BATCH) {
            if stop() {
                break;
            }
            let notes: Vec<(String, Vec<String>)> = batch
                .iter()
                .map(|(rel, _)| ((*rel).clone(), self.chunks_of(rel)))
                .collect();
            let texts: Vec<&str> = notes.iter().flat_map(|(_, c)| c.iter().map(String::as_str)).collect();
            done.tokens += texts
                .iter()
                .map(|t| embedder.count_tokens(t).min(embedder.max_tokens()))
                .sum::<usize>();
            let vectors = match embedder.embed_until(&texts, stop) {
                Ok(v) => v,
                // Asked to stop: what was done is kept, nothing failed.
                Err(EmbedError::Stopped(_)) => break,
                Err(e) => {
                    done.warning = self.warn_once(&e);
                    break;
                }
            };
            let mut at = 0;
            for ((rel, chunks), (_, stamp)) in notes.iter().zip(batch) {
                let v = combine(&vectors[at..at + chunks.len()]);
                at += chunks.len();
                set.upsert(rel, *stamp, &Quantized::new(&v));
                done.embedded += 1;
            }
            progress(EmbedProgress {
                done: done.embedded,
                total,
            });
            if saved.elapsed() > SAVE_EVERY {
                self.publish(&set, &file);
                saved = Instant::now();
            }
        }
        done.left = total - done.embedded;
        if done.embedded > 0 || done.removed > 0 || !file.exists() {
            self.publish(&set, &file);
        }
        Ok(done)
    }

    fn publish(&self, set: &VectorSet, file: &std::path::Path) {
        if let Err(e) = set.save(file) {
            tracing::warn!("{}: the vectors could not be saved: {e}", file.display());
        }
        let mut m = scholia_base::lock(&self.meaning);
        m.vectors = Some(Arc::new(set.clone()));
        m.read_at = std::fs::metadata(file).and_then(|m| m.modified()).ok();
    }

    /// The file this embedder's vectors live in, for the current [`RECIPE`].
    fn vector_file(&self, embedder: &dyn Embedder) -> std::path::PathBuf {
        VectorSet::file(self.dir(), &made_by(embedder))
    }

    /// Removes the vectors this embedder's model made another way (another [`RECIPE`], or
    /// before the recipe was named): at 100,000 notes, 39 MB the index would keep for nothing.
    /// Another model's vectors stay (switching back needs none computed again).
    fn drop_stale_vectors(&self, embedder: &dyn Embedder) {
        let (model, current) = (embedder.model_id(), self.vector_file(embedder));
        let Ok(entries) = std::fs::read_dir(self.dir()) else {
            return;
        };
        for path in entries.flatten().map(|e| e.path()) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path == current || !name.starts_with("vectors-") || !name.ends_with(".bin") {
                continue;
            }
            let stale = VectorSet::model_of(&path)
                .is_some_and(|m| m == model || m.strip_prefix(model.as_str()).is_some_and(|r| r.starts_with('#')));
            if stale && let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!("{}: stale vectors could not be removed: {e}", path.display());
            }
        }
    }

    /// The texts a note's vector is made of: its title leading each chunk of its own text.
    fn chunks_of(&self, rel: &str) -> Vec<String> {
        let text = scholia_vault::read::read_text(&self.vault().abs(rel), crate::MAX_INDEX_BYTES, true)
            .map(|t| scholia_vault::research_part::owner_text(t.text))
            .unwrap_or_default();
        let parsed = scholia_vault::parse::parse(&text, scholia_vault::stem(rel));
        chunks(&parsed.title, &read(&text))
    }

    /// The notes nearest `query` by meaning (at most `k`, in the scope, `exclude` aside).
    pub fn semantic(&self, query: &str, k: usize, exclude: Option<&str>) -> Result<Vec<(String, f32)>, EmbedError> {
        let (Some(embedder), Some(vectors)) = (self.embedder(), self.vectors()) else {
            return Ok(Vec::new());
        };
        let q = embedder.embed_query(query)?;
        let q = Quantized::new(&q);
        let scope = self.scope();
        Ok(vectors.nearest(&q, k, |p| Some(p) != exclude && scope.allows(p)))
    }

    /// Search in `mode` (`None`: hybrid when the vault has vectors and the query is not a
    /// quoted phrase or `title:` query, else lexical): the hits, the mode used, and a warning
    /// when meaning was asked for and could not be had.
    pub fn search_mode(
        &self,
        query: &str,
        limit: usize,
        exclude: Option<&str>,
        mode: Option<SearchMode>,
    ) -> Result<(Vec<Hit>, SearchMode, Vec<String>), IndexError> {
        let exact = query.contains('"') || query.contains("title:");
        let has_vectors = self.vectors().is_some_and(|v| !v.is_empty());
        let mode = match mode {
            Some(m) => m,
            None if has_vectors && !exact => SearchMode::Hybrid,
            None => SearchMode::Lexical,
        };
        if mode == SearchMode::Lexical {
            return Ok((self.search(query, limit, exclude)?, mode, Vec::new()));
        }
        let mut warnings = Vec::new();
        if !has_vectors {
            warnings.push(match self.embedder() {
                None => "no embeddings are configured (SCHOLIA_EMBED_MODEL_PATH or SCHOLIA_EMBED_BASE_URL): searched by words only".to_string(),
                Some(_) => "the vault's vectors are not computed yet (scholia index computes them): searched by words only".to_string(),
            });
            return Ok((self.search(query, limit, exclude)?, SearchMode::Lexical, warnings));
        }
        let by_meaning = match self.semantic(query, FUSED.max(limit), exclude) {
            Ok(found) => found,
            Err(e) => {
                warnings.extend(self.warn_once(&e));
                return Ok((self.search(query, limit, exclude)?, SearchMode::Lexical, warnings));
            }
        };
        if mode == SearchMode::Semantic {
            let hits = by_meaning
                .into_iter()
                .take(limit)
                .filter_map(|(p, score)| self.plain_hit(&p, score))
                .collect();
            return Ok((hits, mode, warnings));
        }
        let by_words = self.search_ranked(query, FUSED.max(limit), exclude, super::search::Whose::All)?;
        Ok((fuse(self, query, by_words, by_meaning, limit)?, mode, warnings))
    }

    /// The cosine of the note's vector and each candidate's, and the notes nearest it by
    /// meaning as candidates (none without vectors). The note's own stored vector stands for
    /// it: research reads the owner's text, which is what the vector was made of.
    pub(crate) fn meaning_evidence(
        &self,
        searcher: &tantivy::Searcher,
        rel: &str,
        candidates: usize,
        found: &mut std::collections::HashMap<tantivy::DocAddress, crate::Evidence>,
    ) -> Result<(), IndexError> {
        let Some(vectors) = self.vectors() else { return Ok(()) };
        let Some(mine) = vectors.vector(rel) else { return Ok(()) };
        let scope = self.scope();
        for (path, cosine) in vectors.nearest(&mine, candidates, |p| p != rel && scope.allows(p)) {
            let Some(addr) = self.doc_of(searcher, &path)? else {
                continue;
            };
            match found.get_mut(&addr) {
                Some(e) => e.meaning = cosine.max(0.0),
                // Near in meaning alone: only when it is near, not merely the least far.
                None if cosine >= MEANING_ALONE => {
                    found.entry(addr).or_default().meaning = cosine;
                }
                None => {}
            }
        }
        let unscored: Vec<tantivy::DocAddress> = found
            .iter()
            .filter(|(_, e)| e.meaning == 0.0)
            .map(|(a, _)| *a)
            .collect();
        for addr in unscored {
            let (path, _) = self.stored(searcher, addr)?;
            if let (Some(v), Some(e)) = (vectors.vector(&path), found.get_mut(&addr)) {
                e.meaning = mine.dot(&v).max(0.0);
            }
        }
        Ok(())
    }

    /// A hit for a note found by meaning alone: its title and opening words, as its vector
    /// reads them.
    fn plain_hit(&self, rel: &str, score: f32) -> Option<Hit> {
        let title = self.outline(rel).ok().flatten().map(|o| o.title)?;
        let text = scholia_vault::research_part::owner_text(self.note_text(rel).unwrap_or_default());
        let opening: String = read(&text).split_whitespace().collect::<Vec<_>>().join(" ");
        let cut = opening.char_indices().nth(200).map_or(opening.len(), |(i, _)| i);
        Some(Hit {
            path: rel.to_string(),
            title,
            score,
            snippet: opening[..cut].to_string(),
            highlights: Vec::new(),
            heading: None,
            line: 1,
        })
    }
}

/// The word and meaning rankings fused, best first, `limit` at most: each ranking's scores
/// spread over [0, 1] (its weakest to its strongest), then weighed [`MEANING_WEIGHT`] to
/// the rest. Reciprocal rank fusion was measured first: it let a list of weak word matches
/// push the note that means the question out of the top 5 (`cargo bench --bench embed`,
/// development questions: 9 of 16 answered, vectors alone 12; this 12).
fn fuse(
    index: &VaultIndex,
    query: &str,
    by_words: Vec<Ranked>,
    by_meaning: Vec<(String, f32)>,
    limit: usize,
) -> Result<Vec<Hit>, IndexError> {
    let mut scores: std::collections::HashMap<String, f32> = std::collections::HashMap::new();
    let spread = |xs: Vec<(String, f32)>| -> Vec<(String, f32)> {
        let hi = xs.iter().map(|x| x.1).fold(f32::MIN, f32::max);
        let lo = xs.iter().map(|x| x.1).fold(f32::MAX, f32::min);
        xs.into_iter()
            .map(|(p, x)| (p, if hi > lo { (x - lo) / (hi - lo) } else { 1.0 }))
            .collect()
    };
    for (p, x) in spread(by_words.iter().map(|h| (h.path.clone(), h.score)).collect()) {
        *scores.entry(p).or_default() += (1.0 - MEANING_WEIGHT) * x;
    }
    for (p, x) in spread(by_meaning) {
        *scores.entry(p).or_default() += MEANING_WEIGHT * x;
    }
    let mut ranked: Vec<(String, f32)> = scores.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(limit);
    // Snippets only for the hits shown: the words' ones around the matches, the others'
    // from the note's opening.
    let mut words: std::collections::HashMap<String, Ranked> =
        by_words.into_iter().map(|h| (h.path.clone(), h)).collect();
    let shown: Vec<Ranked> = ranked
        .iter()
        .filter_map(|(p, score)| {
            words.remove(p).map(|mut h| {
                h.score = *score;
                h
            })
        })
        .collect();
    let mut snipped: std::collections::HashMap<String, Hit> = index
        .with_snippets(query, shown, super::search::Whose::All)?
        .into_iter()
        .map(|h| (h.path.clone(), h))
        .collect();
    Ok(ranked
        .into_iter()
        .filter_map(|(p, score)| match snipped.remove(&p) {
            Some(h) => Some(h),
            None => index.plain_hit(&p, score),
        })
        .collect())
}

/// `text` as a reader reads it, one block a line: what a note's vector and a hit found by
/// meaning show.
fn read(text: &str) -> String {
    scholia_vault::reading::without_callout_types(&scholia_vault::reading::blocks(text).join("\n"))
}

/// A note's texts for its vector: `title` leading its lead (the words of `text` up to about
/// [`LEAD_CHARS`] characters) and, when `text` is longer, its opening (up to about
/// [`CHUNK_CHARS`]); each is cut at a space.
pub(crate) fn chunks(title: &str, text: &str) -> Vec<String> {
    let upto = |limit: usize| -> (String, bool) {
        let mut out = String::new();
        for w in text.split_whitespace() {
            if !out.is_empty() && out.len() + 1 + w.len() > limit {
                return (out, true);
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        (out, false)
    };
    let with_title = |body: String| format!("{title}\n{body}").trim_end().to_string();
    let (lead, longer) = upto(LEAD_CHARS);
    let mut out = vec![with_title(lead)];
    if longer {
        out.push(with_title(upto(CHUNK_CHARS).0));
    }
    out
}

/// One vector of a note's text vectors: their sum, the first (the lead) counting double,
/// normalised.
pub(crate) fn combine(chunks: &[Vec<f32>]) -> Vec<f32> {
    let dims = chunks.first().map_or(0, Vec::len);
    let mut v = vec![0f32; dims];
    for (i, c) in chunks.iter().enumerate() {
        let w = if i == 0 { 2.0 } else { 1.0 };
        v.iter_mut().zip(c).for_each(|(a, b)| *a += w * b);
    }
    scholia_embed::normalize(&mut v);
    v
}

#[cfg(test)]
mod tests;
mod upkeep;
