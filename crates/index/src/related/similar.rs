//! The stem cosine: a note's stems (its own words, stock phrases blanked, and its title)
//! against every other note's, from the postings and each note's stored norm.

use std::collections::{HashMap, HashSet};

use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Searcher, Term};

use super::{Evidence, Likeness, Own};
use crate::{IndexError, VaultIndex, tokenizer};

/// The note's stems compared (heaviest first); all of them measure the same.
const SIMILAR_STEMS: usize = 150;
/// Notes most similar by stems added as candidates.
const SIMILAR_NOTES: usize = 100;

/// The stems of the note's own words (stock phrases blanked, see `stock.rs`) and title,
/// counted: what the cosine compares; and every stem of its whole text, where a note's name is
/// looked for. Stemmed once per query.
pub(crate) struct Stems {
    counts: HashMap<String, u32>,
    all: HashSet<String>,
    /// The note's copies in the index (see [`Own`]).
    indexed: u64,
}

impl Stems {
    pub(super) fn of(note: &Likeness, own: &Own) -> Stems {
        let mut counts: HashMap<String, u32> = HashMap::new();
        for s in tokenizer::stems(&own.text)
            .into_iter()
            .chain(tokenizer::stems(&note.title))
        {
            *counts.entry(s).or_default() += 1;
        }
        let mut all: HashSet<String> = tokenizer::stems(&note.text).into_iter().collect();
        all.extend(counts.keys().cloned());
        Stems {
            counts,
            all,
            indexed: own.indexed,
        }
    }
}

impl Stems {
    /// Whether the note's whole text or title has `stem`.
    pub(super) fn has(&self, stem: &str) -> bool {
        self.all.contains(stem)
    }
}

impl VaultIndex {
    /// Cosine similarity by stems (lnc.ltc): the note's stems weighted (1 + ln tf)·ln(N/df),
    /// every other note's (1 + ln tf) over its stored norm, summed from the postings. The
    /// [`SIMILAR_NOTES`] best become candidates; notes already found get their figure too.
    pub(super) fn similar(
        &self,
        searcher: &Searcher,
        stems: &Stems,
        found: &mut HashMap<DocAddress, Evidence>,
    ) -> Result<(), IndexError> {
        use tantivy::postings::Postings;
        use tantivy::{DocSet, TERMINATED};
        let n = searcher.num_docs().max(1) as f32;
        let indexed = stems.indexed as f32;
        let mut query: Vec<(Term, f32)> = Vec::with_capacity(stems.counts.len());
        for (stem, &tf) in &stems.counts {
            let term = Term::from_field_text(self.fields.stems, stem);
            let df = self.live_doc_freq(searcher, &term)? as f32;
            // A stem of this note alone relates it to nothing; one in most notes, to everything.
            if df - indexed < 1.0 || df > n * 0.5 {
                continue;
            }
            query.push((term, (1.0 + (tf as f32).ln()) * (n / df).ln()));
        }
        query.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        query.truncate(SIMILAR_STEMS);
        let length = query.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        if length == 0.0 {
            return Ok(());
        }
        // 1 + ln tf of the usual counts, the same values computed once: a logarithm per
        // posting was a seventh of a research run at 100k.
        let log_tf: Vec<f32> = (0..64u32).map(|tf| 1.0 + (tf as f32).ln()).collect();
        let log_tf = |tf: u32| {
            log_tf
                .get(tf as usize)
                .copied()
                .unwrap_or_else(|| 1.0 + (tf as f32).ln())
        };
        let mut scored: Vec<(f32, DocAddress)> = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.stems)?;
            let norms = segment.fast_fields().f64("stem_norm")?;
            let alive = segment.alive_bitset();
            let mut sums = vec![0f32; segment.max_doc() as usize];
            for (term, weight) in &query {
                let postings = inverted
                    .read_postings(term, IndexRecordOption::WithFreqs)
                    .map_err(tantivy::TantivyError::from)?;
                let Some(mut postings) = postings else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    sums[doc as usize] += weight * log_tf(postings.term_freq());
                    doc = postings.advance();
                }
            }
            for (doc, sum) in sums.into_iter().enumerate() {
                let doc = doc as u32;
                if sum == 0.0 || alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let norm = norms.first(doc).unwrap_or(1.0).max(1.0) as f32;
                scored.push((sum / length / norm, DocAddress::new(ord as u32, doc)));
            }
        }
        let leading = self.lead(searcher, &mut scored, SIMILAR_NOTES)?;
        for (i, (score, addr)) in scored.into_iter().enumerate() {
            if i < leading {
                found.entry(addr).or_default().similar = score;
            } else if let Some(e) = found.get_mut(&addr) {
                e.similar = score;
            }
        }
        Ok(())
    }
}
