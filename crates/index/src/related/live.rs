//! Statistics of the live notes: tantivy's own count the old versions of notes rewritten
//! since the last merge too (every research run rewrites one), and research must not drift
//! with them.

use std::collections::HashMap;

use tantivy::schema::IndexRecordOption;
use tantivy::{Searcher, Term};

use crate::VaultIndex;

impl VaultIndex {
    /// How many live notes hold `term`. Tantivy's `doc_freq` also counts the old versions of
    /// notes rewritten since the last merge (every research run rewrites one): weights from it
    /// would drift with each run, and the same vault would not give the same research twice.
    /// The few deleted documents of a segment are looked for in the term's postings by seeking
    /// (reading every posting of common words was a tenth of offline research).
    pub(crate) fn live_doc_freq(&self, searcher: &Searcher, term: &Term) -> tantivy::Result<u64> {
        let mut df = 0u64;
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(term.field())?;
            // One look-up in the term dictionary per segment: it is most of the cost.
            let Some(info) = inverted.get_term_info(term)? else {
                continue;
            };
            df += self.live_postings(segment, &inverted, &info)?;
        }
        Ok(df)
    }

    /// How many live notes of `segment` the term whose postings `info` locates is in.
    pub(crate) fn live_postings(
        &self,
        segment: &tantivy::SegmentReader,
        inverted: &tantivy::InvertedIndexReader,
        info: &tantivy::postings::TermInfo,
    ) -> tantivy::Result<u64> {
        use tantivy::{DocSet, TERMINATED};
        let stored = u64::from(info.doc_freq);
        let Some(alive) = segment.alive_bitset() else {
            return Ok(stored);
        };
        let mut postings = inverted.read_postings_from_terminfo(info, IndexRecordOption::Basic)?;
        let deleted = self.deleted_docs(segment, alive);
        // Many deletes (a segment mostly rewritten): reading the postings is cheaper.
        if deleted.len() as u64 > stored {
            let mut live = 0;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                live += u64::from(alive.is_alive(doc));
                doc = postings.advance();
            }
            return Ok(live);
        }
        let mut dead = 0;
        for &doc in deleted.iter() {
            match postings.doc() {
                TERMINATED => break,
                at if at > doc => continue,
                _ => dead += u64::from(postings.seek(doc) == doc),
            }
        }
        Ok(stored - dead)
    }

    /// The deleted documents of a segment, ascending: read once per segment and count of
    /// deletes (deletes only grow, and a segment id is never reused).
    pub(super) fn deleted_docs(
        &self,
        segment: &tantivy::SegmentReader,
        alive: &tantivy::fastfield::AliveBitSet,
    ) -> crate::DeletedDocs {
        let key = (segment.segment_id(), segment.num_deleted_docs());
        if let Some(d) = scholia_base::lock(&self.deleted).get(&key) {
            return d.clone();
        }
        let docs: std::sync::Arc<Vec<_>> =
            std::sync::Arc::new((0..segment.max_doc()).filter(|&d| alive.is_deleted(d)).collect());
        let mut cache = scholia_base::lock(&self.deleted);
        cache.retain(|(id, _), _| *id != key.0);
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(key, docs.clone());
        docs
    }
}

/// BM25 statistics of the live notes only. Tantivy's own also count the old versions of notes
/// rewritten since the last merge (every research run rewrites one): scores from them drift
/// with each run, and two notes nearly tied swapped places between a first and a second run
/// (3 of 27 sections of obsidian-help en/de/ja). A field's token total is the live documents'
/// field norms summed: a norm is a function of the document's own text, whatever its segment.
pub(crate) struct LiveStats<'a> {
    index: &'a VaultIndex,
    searcher: &'a Searcher,
    /// Token totals by field, summed once per query.
    tokens: std::cell::RefCell<HashMap<tantivy::schema::Field, u64>>,
    /// Live document frequencies, counted once per query: the content query's weights are
    /// made twice (the union, then [`in_clause_order`]).
    doc_freqs: std::cell::RefCell<HashMap<Term, u64>>,
}

impl<'a> LiveStats<'a> {
    pub(crate) fn new(index: &'a VaultIndex, searcher: &'a Searcher) -> LiveStats<'a> {
        LiveStats {
            index,
            searcher,
            tokens: Default::default(),
            doc_freqs: Default::default(),
        }
    }
}

/// The field norms of every document of a segment summed, deleted ones too: a segment never
/// changes but for its deletes, so the sum is kept for the process (segment ids are unique
/// across indexes), and a query only takes off its few deleted documents' norms.
fn segment_norms(
    segment: &tantivy::SegmentReader,
    field: tantivy::schema::Field,
    norms: &tantivy::fieldnorm::FieldNormReader,
) -> u64 {
    type Sums = HashMap<(tantivy::index::SegmentId, tantivy::schema::Field), u64>;
    static SUMS: std::sync::Mutex<Option<Sums>> = std::sync::Mutex::new(None);
    let key = (segment.segment_id(), field);
    if let Some(&n) = scholia_base::lock(&SUMS).get_or_insert_default().get(&key) {
        return n;
    }
    let n: u64 = (0..segment.max_doc()).map(|doc| u64::from(norms.fieldnorm(doc))).sum();
    let mut sums = scholia_base::lock(&SUMS);
    let sums = sums.get_or_insert_default();
    if sums.len() > 4096 {
        sums.clear();
    }
    sums.insert(key, n);
    n
}

impl tantivy::query::Bm25StatisticsProvider for LiveStats<'_> {
    fn total_num_tokens(&self, field: tantivy::schema::Field) -> tantivy::Result<u64> {
        if let Some(&n) = self.tokens.borrow().get(&field) {
            return Ok(n);
        }
        let mut total = 0u64;
        for segment in self.searcher.segment_readers() {
            let norms = segment.get_fieldnorms_reader(field)?;
            total += segment_norms(segment, field, &norms);
            if let Some(alive) = segment.alive_bitset() {
                for &doc in self.index.deleted_docs(segment, alive).iter() {
                    total -= u64::from(norms.fieldnorm(doc));
                }
            }
        }
        self.tokens.borrow_mut().insert(field, total);
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(&n) = self.doc_freqs.borrow().get(term) {
            return Ok(n);
        }
        let n = self.index.live_doc_freq(self.searcher, term)?;
        self.doc_freqs.borrow_mut().insert(term.clone(), n);
        Ok(n)
    }
}

/// The score of each of `docs` under `clauses` (a disjunction), summed clause by clause in the
/// clauses' order. A union's sum follows the order its scorers meet a document, and that
/// follows how the vault's notes fell into segments: the same vault rebuilt gave sums ≤ 3·10⁻⁷
/// apart, and two notes nearly tied swapped places (km, one note in several thousand).
pub(super) fn in_clause_order(
    searcher: &Searcher,
    stats: &LiveStats,
    clauses: &[Box<dyn tantivy::query::Query>],
    mut docs: Vec<tantivy::DocAddress>,
) -> Result<Vec<(tantivy::DocAddress, f32)>, crate::IndexError> {
    use tantivy::DocSet;
    let scoring = tantivy::query::EnableScoring::enabled_from_statistics_provider(stats, searcher);
    let weights = clauses
        .iter()
        .map(|q| q.weight(scoring))
        .collect::<tantivy::Result<Vec<_>>>()?;
    docs.sort();
    let mut sums = vec![0f64; docs.len()];
    let mut from = 0;
    for segment in docs.chunk_by(|a, b| a.segment_ord == b.segment_ord) {
        let reader = searcher.segment_reader(segment[0].segment_ord);
        for weight in &weights {
            let mut scorer = weight.scorer(reader, 1.0)?;
            for (i, addr) in segment.iter().enumerate() {
                if scorer.doc() < addr.doc_id {
                    scorer.seek(addr.doc_id);
                }
                if scorer.doc() == addr.doc_id {
                    sums[from + i] += f64::from(scorer.score());
                }
            }
        }
        from += segment.len();
    }
    Ok(docs.into_iter().zip(sums).map(|(a, s)| (a, s as f32)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewritten and removed notes leave deleted documents in their segment: the live count
    /// is what a search counts, for words in every note and in a few.
    #[test]
    fn live_doc_freq_skips_deleted_documents() {
        let names: Vec<(String, String)> = (0..40)
            .map(|i| {
                let rare = if i % 10 == 3 { " krill" } else { "" };
                (format!("N{i:02}.md"), format!("# N{i}\n\nplankton{rare}"))
            })
            .collect();
        let files: Vec<(&str, &str)> = names.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let f = crate::fixture::vault(&files);
        let (index, dir) = (&f.index, f.root());
        let check = |word: &str| {
            let searcher = index.searcher();
            let term = Term::from_field_text(index.fields.body, word);
            let query = tantivy::query::TermQuery::new(term.clone(), IndexRecordOption::Basic);
            let live = searcher.search(&query, &tantivy::collector::Count).unwrap() as u64;
            assert_eq!(index.live_doc_freq(&searcher, &term).unwrap(), live, "{word}");
            live
        };
        assert_eq!((check("plankton"), check("krill")), (40, 4));
        // Rewritten: N03 and N13 keep krill, N05 and N39 do not change; N23 loses it.
        for (i, text) in [
            (3, "plankton krill"),
            (13, "krill"),
            (5, "plankton"),
            (39, "plankton"),
            (23, "plankton"),
        ] {
            let path = dir.join(format!("N{i:02}.md"));
            std::fs::write(&path, format!("# N{i}\n\n{text}")).unwrap();
            index.touched(&[&path]);
        }
        std::fs::remove_file(dir.join("N33.md")).unwrap();
        index.sync(&mut |_| {}).unwrap();
        assert_eq!((check("plankton"), check("krill")), (38, 2));
    }

    /// A note rewritten with a research section (its own text unchanged) leaves a deleted
    /// document behind until a merge: every figure relating it to the others stays as it was,
    /// to the last bit.
    #[test]
    fn a_rewritten_note_relates_as_before() {
        let names: Vec<(String, String)> = (0..30)
            .map(|i| {
                // Words in some notes, repeated a varying number of times.
                let some = |word: &str, every: usize| {
                    if i % every == 0 {
                        format!("{word} ").repeat(1 + i % 4)
                    } else {
                        String::new()
                    }
                };
                let text = format!(
                    "# N{i}\n\nplankton {}{}{}\n\n## Tides\n\n{}{}",
                    some("seagrass", 2),
                    some("tidepool", 3),
                    some("seafoam", 5),
                    some("driftwood", 7),
                    some("krill", 4)
                );
                (format!("N{i:02}.md"), text)
            })
            .collect();
        // One indexing thread: every note in one segment, so the rewritten note's old
        // version stays there deleted (a segment of deleted documents only is dropped).
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("vault");
        std::fs::create_dir_all(&dir).unwrap();
        for (rel, text) in &names {
            std::fs::write(dir.join(rel), text).unwrap();
        }
        let options = crate::WriterOptions {
            threads: 1,
            memory_bytes: 30_000_000,
        };
        let vault = scholia_vault::Vault::open(&dir).unwrap();
        let index = &VaultIndex::open(vault, &tmp.path().join("index"), options).unwrap();
        index.sync(&mut |_| {}).unwrap();
        let note = crate::Likeness {
            rel: "N00.md".into(),
            title: "N0".into(),
            text: "plankton seagrass tidepool seafoam driftwood krill".into(),
            ..Default::default()
        };
        let evidence = || {
            let mut all: Vec<(String, [f32; crate::related::FIGURES])> = index
                .related_evidence(&note, 30)
                .unwrap()
                .into_iter()
                .map(|(p, e)| (p, e.figures()))
                .collect();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        };
        let before = evidence();
        assert!(
            before.len() > 10 && before.iter().any(|(_, f)| f[0] > 0.0),
            "{before:?}"
        );
        let path = dir.join("N00.md");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            format!(
                "{text}\n{}",
                crate::fixture::researched("- [[N07]] shares plankton and sea.")
            ),
        )
        .unwrap();
        index.sync(&mut |_| {}).unwrap();
        let searcher = index.searcher();
        assert!(
            searcher.segment_readers().iter().any(|s| s.num_deleted_docs() > 0),
            "a deleted document stays: {:?}",
            searcher
                .segment_readers()
                .iter()
                .map(|s| (s.max_doc(), s.num_deleted_docs()))
                .collect::<Vec<_>>()
        );
        assert_eq!(evidence(), before);
    }
}
