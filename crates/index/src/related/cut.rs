//! Cuts of ranked candidates that keep the same notes whatever the index's layout. Where more
//! notes tie at a cut than it keeps (notes of one length naming the note, copies of one text),
//! the first by path stay, not the first in the index: the same vault rebuilt, or its notes
//! indexed in another order, gives the same candidates.

use tantivy::collector::TopDocs;
use tantivy::query::Query;
use tantivy::{DocAddress, Searcher};

use super::LiveStats;
use crate::{IndexError, VaultIndex};

/// How far below the cut a score must lie to be certainly below it when sums may be made in
/// another order (a union's BM25 follows the segments: ≤ 3·10⁻⁷ apart, relatively).
const SUM_NOISE: f32 = 1e-5;

impl VaultIndex {
    /// The documents `query` scores (live statistics), at least the `limit` best and every one
    /// that may tie with the last of them however its sum was made: what [`VaultIndex::lead`]
    /// then cuts. Searched again with a larger limit while the last found is not clearly below.
    pub(super) fn around_cut(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
        limit: usize,
        stats: &LiveStats,
    ) -> Result<Vec<(f32, DocAddress)>, IndexError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut want = limit + limit / 8 + 4;
        loop {
            let top =
                searcher.search_with_statistics_provider(query, &TopDocs::with_limit(want).order_by_score(), stats)?;
            let complete = top.len() < want || {
                let cut = top[limit - 1].0;
                top[want - 1].0 < cut - SUM_NOISE * cut.abs()
            };
            if complete {
                return Ok(top);
            }
            want = want.saturating_mul(4);
        }
    }

    /// Puts the `n` best of `scored` first (highest score; at a tie, the lowest path), in no
    /// order, and says how many that is. Only which notes lead matters: at 100k nearly every
    /// note shares a stem with the note, and sorting them all was a tenth of a research run.
    /// Paths are looked up only for the notes tied at the cut.
    pub(super) fn lead(
        &self,
        searcher: &Searcher,
        scored: &mut [(f32, DocAddress)],
        n: usize,
    ) -> Result<usize, IndexError> {
        let n = n.min(scored.len());
        if n == 0 || n == scored.len() {
            return Ok(n);
        }
        let by_score = |a: &(f32, DocAddress), b: &(f32, DocAddress)| b.0.total_cmp(&a.0);
        scored.select_nth_unstable_by(n - 1, by_score);
        let last = scored[n - 1].0;
        let tied = |s: &(f32, DocAddress)| s.0.total_cmp(&last).is_eq();
        if !scored[n..].iter().any(tied) {
            return Ok(n);
        }
        // Those above the cut first, then every tied one, ordered by path.
        let above = partition(&mut scored[..n], |s| s.0.total_cmp(&last).is_gt());
        let ties = partition(&mut scored[above..], tied);
        let mut keyed = scored[above..above + ties]
            .iter()
            .map(|&(s, a)| Ok((self.path_at(searcher, a)?, (s, a))))
            .collect::<Result<Vec<_>, IndexError>>()?;
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        for (slot, (_, s)) in scored[above..].iter_mut().zip(keyed) {
            *slot = s;
        }
        Ok(n)
    }

    /// The `n` best of `scored` ([`VaultIndex::lead`]), the rest dropped.
    pub(super) fn cut(
        &self,
        searcher: &Searcher,
        mut scored: Vec<(f32, DocAddress)>,
        n: usize,
    ) -> Result<Vec<(f32, DocAddress)>, IndexError> {
        let n = self.lead(searcher, &mut scored, n)?;
        scored.truncate(n);
        Ok(scored)
    }
}

/// Moves the items of `items` that `pred` holds for to its front (in no order) and says how
/// many they are.
fn partition<T>(items: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let mut front = 0;
    for i in 0..items.len() {
        if pred(&items[i]) {
            items.swap(front, i);
            front += 1;
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Likeness, VaultIndex, WriterOptions};

    /// The evidence of the note `Drifting plankton` in a vault of copies of one note naming it
    /// (`Mention NNN`) and 200 notes of other words, indexed on one thread in batches of the
    /// copies given (each a segment).
    fn evidence(batches: &[Vec<usize>]) -> Vec<(String, [u32; crate::related::FIGURES])> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("vault");
        std::fs::create_dir_all(dir.join("Sea")).unwrap();
        std::fs::create_dir_all(dir.join("Notes")).unwrap();
        std::fs::create_dir_all(dir.join("Rocks")).unwrap();
        std::fs::write(
            dir.join("Sea/Drifting plankton.md"),
            "# Drifting plankton\n\nThey feed the krill.\n",
        )
        .unwrap();
        // Notes of other words, so that the copies' words are not in most notes.
        for i in 0..200 {
            std::fs::write(
                dir.join(format!("Rocks/Filler {i:03}.md")),
                "# Filler\n\nStones and sand.\n",
            )
            .unwrap();
        }
        let options = WriterOptions {
            threads: 1,
            memory_bytes: 15_000_000,
        };
        let vault = scholia_vault::Vault::open(&dir).unwrap();
        let index = VaultIndex::open(vault, &tmp.path().join("index"), options).unwrap();
        for batch in batches {
            for i in batch {
                let text = "# Mention\n\nDrifting plankton feed the krill.\n";
                std::fs::write(dir.join(format!("Notes/Mention {i:03}.md")), text).unwrap();
            }
            index.sync(&mut |_| {}).unwrap();
        }
        let note = Likeness {
            rel: "Sea/Drifting plankton.md".into(),
            title: "Drifting plankton".into(),
            text: "They feed the krill.".into(),
            ..Default::default()
        };
        index
            .related_evidence(&note, 60)
            .unwrap()
            .into_iter()
            .map(|(p, e)| (p, e.figures().map(f32::to_bits)))
            .collect()
    }

    /// 130 copies of one text naming the note: more tie at every cut (60 by content, 60
    /// naming it, 100 by stems, the note itself among them) than it keeps. The same notes are kept, the first by path,
    /// however the copies fell into segments.
    #[test]
    fn ties_at_a_cut_keep_the_first_by_path() {
        let all: Vec<usize> = (0..130).collect();
        let at_once = evidence(std::slice::from_ref(&all));
        let odd_first = evidence(&[
            all.iter().copied().filter(|i| i % 2 == 1).rev().collect(),
            all.iter().copied().filter(|i| i % 2 == 0).collect(),
        ]);
        // The notes with the figure `at` (of `Evidence::figures`), and the first `n` copies.
        let holding = |at: usize| -> Vec<&str> {
            let held = at_once.iter().filter(|(_, f)| f[at] > 0);
            held.map(|(p, _)| p.as_str()).collect()
        };
        let first = |n: usize| -> Vec<String> { (0..n).map(|i| format!("Notes/Mention {i:03}.md")).collect() };
        assert_eq!(holding(3), first(60), "the first 60 by path name it");
        // The note itself leads by stems: 99 others.
        assert_eq!(holding(9), first(99), "the first 99 by path are similar");
        assert_eq!(at_once.len(), 99, "{at_once:?}");
        assert_eq!(at_once, odd_first);
    }

    /// `lead` keeps what a full sort by (score, path) keeps, for random scores with many ties.
    #[test]
    fn lead_keeps_what_a_sort_by_score_and_path_keeps() {
        let names: Vec<(String, String)> = (0..40).map(|i| (format!("N{i:02}.md"), format!("# N{i}"))).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let f = crate::fixture::vault(&files);
        let searcher = f.index.searcher();
        let addrs: Vec<DocAddress> = (0..searcher.segment_readers().len())
            .flat_map(|s| (0..searcher.segment_reader(s as u32).max_doc()).map(move |d| DocAddress::new(s as u32, d)))
            .collect();
        assert_eq!(addrs.len(), 40);
        let mut seed = 7u64;
        for round in 0..200 {
            let scored: Vec<(f32, DocAddress)> = addrs
                .iter()
                .map(|&a| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 60) as f32 / 4.0, a)
                })
                .collect();
            let n = round % 42;
            let mut sorted = scored.clone();
            sorted.sort_by(|a, b| {
                b.0.total_cmp(&a.0).then_with(|| {
                    f.index
                        .path_at(&searcher, a.1)
                        .unwrap()
                        .cmp(&f.index.path_at(&searcher, b.1).unwrap())
                })
            });
            sorted.truncate(n);
            let mut got = f.index.cut(&searcher, scored, n).unwrap();
            let key = |s: &(f32, DocAddress)| (s.1.segment_ord, s.1.doc_id);
            got.sort_by_key(key);
            sorted.sort_by_key(key);
            assert_eq!(got, sorted, "round {round}, n {n}");
        }
    }
}
