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
    /// The stems of each part of the note's own words between two headings, counted, where it
    /// has [`PART_STEMS`] at least; none for a note of one part (the whole is compared).
    parts: Vec<HashMap<String, u32>>,
    all: HashSet<String>,
    /// The note's copies in the index (see [`Own`]).
    indexed: u64,
}

impl Stems {
    pub(super) fn of(note: &Likeness, own: &Own) -> Stems {
        let counts = counted(
            tokenizer::stems(&own.text)
                .into_iter()
                .chain(tokenizer::stems(&note.title)),
        );
        let mut all: HashSet<String> = tokenizer::stems(&note.text).into_iter().collect();
        all.extend(counts.keys().cloned());
        Stems {
            counts,
            parts: parts(note, &own.text),
            all,
            indexed: own.indexed,
        }
    }
}

/// How many times each stem comes.
fn counted(stems: impl IntoIterator<Item = String>) -> HashMap<String, u32> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for s in stems {
        *counts.entry(s).or_default() += 1;
    }
    counts
}

/// A part of a note compared on its own has this many stems at least (a heading and a line
/// under it say too little to find a note by).
const PART_STEMS: usize = 15;
/// The parts of a note compared, the longest: each is a pass over the postings.
const MAX_PARTS: usize = 12;

/// The stems of the parts of `text` (the note's own words, its headings each on a line of its
/// own) that begin at a line holding one of the note's headings, and of the part before the
/// first, counted: those of [`PART_STEMS`] stems or more, the [`MAX_PARTS`] longest. None when
/// fewer than two are left: the whole note is then its one part.
fn parts(note: &Likeness, text: &str) -> Vec<HashMap<String, u32>> {
    let headings: HashSet<&str> = note
        .headings
        .iter()
        .map(|h| h.trim())
        .filter(|h| !h.is_empty())
        .collect();
    let mut cut: Vec<String> = vec![String::new()];
    for line in text.lines() {
        if headings.contains(line.trim()) {
            cut.push(String::new());
        }
        let part = cut.last_mut().expect("one part at least");
        part.push_str(line);
        part.push('\n');
    }
    let mut parts: Vec<(usize, HashMap<String, u32>)> = cut
        .iter()
        .map(|part| {
            let stems = tokenizer::stems(part);
            (stems.len(), counted(stems))
        })
        .filter(|(n, _)| *n >= PART_STEMS)
        .collect();
    if parts.len() < 2 {
        return Vec::new();
    }
    // The longest first, then in the note's order: the same text gives the same parts.
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    parts.truncate(MAX_PARTS);
    parts.into_iter().map(|(_, counts)| counts).collect()
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
    /// Returns the usual cosine: the median of every note sharing a stem compared (see
    /// [`usual`]).
    pub(super) fn similar(
        &self,
        searcher: &Searcher,
        stems: &Stems,
        found: &mut HashMap<DocAddress, Evidence>,
    ) -> Result<f32, IndexError> {
        use tantivy::postings::Postings;
        use tantivy::{DocSet, TERMINATED};
        let n = searcher.num_docs().max(1) as f32;
        let indexed = stems.indexed as f32;
        // Each stem compared: its term, its weight in the note, and its idf.
        let mut query: Vec<(Term, f32, f32, &str)> = Vec::with_capacity(stems.counts.len());
        for (stem, &tf) in &stems.counts {
            let term = Term::from_field_text(self.fields.stems, stem);
            let df = self.live_doc_freq(searcher, &term)? as f32;
            // A stem of this note alone relates it to nothing; one in most notes, to everything.
            if df - indexed < 1.0 || df > n * 0.5 {
                continue;
            }
            let idf = (n / df).ln();
            query.push((term, (1.0 + (tf as f32).ln()) * idf, idf, stem));
        }
        query.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        query.truncate(SIMILAR_STEMS);
        let length = query.iter().map(|q| q.1 * q.1).sum::<f32>().sqrt();
        if length == 0.0 {
            return Ok(0.0);
        }
        // For each stem compared, the parts that have it and its weight in each (their own
        // counts); and each part's length.
        let mut in_parts: Vec<Vec<(usize, f32)>> = vec![Vec::new(); query.len()];
        let mut part_lengths = vec![0f32; stems.parts.len()];
        for (p, part) in stems.parts.iter().enumerate() {
            for (i, &(_, _, idf, stem)) in query.iter().enumerate() {
                if let Some(&tf) = part.get(stem) {
                    let w = (1.0 + (tf as f32).ln()) * idf;
                    in_parts[i].push((p, w));
                    part_lengths[p] += w * w;
                }
            }
        }
        for l in &mut part_lengths {
            *l = l.sqrt();
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
        // The best part's cosine with each note, by segment and document (0 where no part
        // shares a stem with it).
        let mut by_part: Vec<Vec<f32>> = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.stems)?;
            let norms = segment.fast_fields().f64("stem_norm")?;
            let alive = segment.alive_bitset();
            let max_doc = segment.max_doc() as usize;
            let mut sums = vec![0f32; max_doc];
            let mut part_sums = vec![vec![0f32; max_doc]; stems.parts.len()];
            for (i, (term, weight, _, _)) in query.iter().enumerate() {
                let postings = inverted
                    .read_postings(term, IndexRecordOption::WithFreqs)
                    .map_err(tantivy::TantivyError::from)?;
                let Some(mut postings) = postings else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    let tf = log_tf(postings.term_freq());
                    sums[doc as usize] += weight * tf;
                    for &(p, w) in &in_parts[i] {
                        part_sums[p][doc as usize] += w * tf;
                    }
                    doc = postings.advance();
                }
            }
            let mut best = vec![0f32; if part_sums.is_empty() { 0 } else { max_doc }];
            for (doc, sum) in sums.into_iter().enumerate() {
                if sum == 0.0 || alive.is_some_and(|a| !a.is_alive(doc as u32)) {
                    continue;
                }
                let norm = norms.first(doc as u32).unwrap_or(1.0).max(1.0) as f32;
                scored.push((sum / length / norm, DocAddress::new(ord as u32, doc as u32)));
                if let Some(best) = best.get_mut(doc) {
                    *best = part_sums
                        .iter()
                        .zip(&part_lengths)
                        .filter(|(_, l)| **l > 0.0)
                        .map(|(sums, l)| sums[doc] / l / norm)
                        .fold(0.0f32, f32::max);
                }
            }
            by_part.push(best);
        }
        let usual = usual(&mut scored);
        let leading = self.lead(searcher, &mut scored, SIMILAR_NOTES)?;
        for (i, (score, addr)) in scored.into_iter().enumerate() {
            let e = if i < leading {
                Some(found.entry(addr).or_default())
            } else {
                found.get_mut(&addr)
            };
            if let Some(e) = e {
                e.similar = score;
                // A note of one part: its part is the whole.
                e.part_similar = if stems.parts.is_empty() {
                    score
                } else {
                    by_part
                        .get(addr.segment_ord as usize)
                        .and_then(|b| b.get(addr.doc_id as usize))
                        .copied()
                        .unwrap_or(0.0)
                };
            }
        }
        Ok(usual)
    }
}

/// Notes sharing a stem with the note that make a usual: the median of a handful is no
/// vault's chance (example-vault's six notes are all on fermenting, and its Sourdough
/// starter's one related note was under the median of the four).
const USUAL_FROM: usize = 30;

/// The median of the cosines: what a note of the vault that shares some of the note's stems
/// shares with it by chance, on the scale of the note's language (a Japanese note's cosines
/// are half an English one's) and of how common its words are. 0 (none) under
/// [`USUAL_FROM`] notes.
fn usual(scored: &mut [(f32, DocAddress)]) -> f32 {
    if scored.len() < USUAL_FROM {
        return 0.0;
    }
    let mid = scored.len() / 2;
    let (_, median, _) = scored.select_nth_unstable_by(mid, |a, b| a.0.total_cmp(&b.0));
    median.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long note of two parts (a garden's soil, then its bees) and a short note about bees:
    /// the bees part alone is nearer it than the whole note is; a note of one part is its whole.
    #[test]
    fn a_part_of_the_note_finds_a_note_about_it() {
        let soil = "Loam soil holds water; compost feeds the clay; mulch keeps roots cool; \
                    worms turn the loam; sand drains the clay soil; manure enriches compost; \
                    lime sweetens acid soil; gravel drains beds; peat holds water.";
        let bees = "Bees visit lavender; hives need shade; beekeepers smoke the hive; \
                    honey forms in combs; queens lay eggs; drones mate; workers gather pollen; \
                    swarms leave the hive; wax seals honey.";
        let garden = format!("# Garden\n\n{soil}\n\n## Bees\n\n{bees}\n");
        let mut files = vec![
            ("Garden.md".to_string(), garden),
            (
                "Apiary.md".to_string(),
                "# Apiary\n\nHives, honey, pollen and the queen; beekeepers smoke each hive.\n".to_string(),
            ),
        ];
        // Other notes: a few on soil (so that the soil words count, and are rare) and many on
        // trains.
        for i in 0..30 {
            let text = match i % 10 {
                0 => format!("# Other {i}\n\nLoam, clay, compost, mulch, worms, sand, manure, lime, gravel, peat.\n"),
                _ => format!("# Other {i}\n\nTrains and stations, tickets {i}.\n"),
            };
            files.push((format!("Other {i}.md"), text));
        }
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let f = crate::fixture::vault(&files);
        let evidence = |text: &str, headings: &[&str]| {
            let note = Likeness {
                rel: "Garden.md".into(),
                title: "Garden".into(),
                headings: headings.iter().map(|h| h.to_string()).collect(),
                text: text.into(),
                ..Default::default()
            };
            let found = f.index.related_evidence(&note, 20).unwrap();
            found
                .into_iter()
                .find(|(p, _)| p == "Apiary.md")
                .expect("Apiary found")
                .1
        };
        let plain = format!("{soil}\nBees\n{bees}\n");
        let two = evidence(&plain, &["Bees"]);
        assert!(two.part_similar > two.similar * 1.2, "{two:?}");
        // Without its heading the note is one part: the part is the whole.
        let one = evidence(&plain, &[]);
        assert_eq!(one.part_similar, one.similar, "{one:?}");
        // Parts of a few stems are not compared: a heading over one line is no part.
        assert!(
            parts(
                &Likeness {
                    headings: vec!["Bees".into()],
                    ..Default::default()
                },
                "Bees\nhoney\n"
            )
            .is_empty()
        );
    }

    /// The usual cosine is what the median note sharing a stem shares: notes sharing only
    /// "spring" are the usual, and a note about the same bees stands far above them; a vault
    /// with a handful of such notes has none.
    #[test]
    fn a_note_sharing_a_common_word_is_the_usual_and_one_on_the_subject_stands_above() {
        let bees = "# Hives\n\nBees visit lavender; hives need shade; beekeepers smoke the hive; \
                    honey forms in combs; queens lay eggs in spring.\n";
        let files = vec![
            ("Hives.md".to_string(), bees.to_string()),
            (
                "Apiary.md".to_string(),
                "# Apiary\n\nHives, honey, pollen and the queen; beekeepers smoke each hive.\n".to_string(),
            ),
        ];
        let above = |springs: usize| {
            let mut files = files.clone();
            for i in 0..springs {
                files.push((
                    format!("Spring {i}.md"),
                    format!("# Spring {i}\n\nIn spring, trains run late; station {i}.\n"),
                ));
            }
            for i in 0..3 * springs {
                files.push((
                    format!("Train {i}.md"),
                    format!("# Train {i}\n\nTrains and stations, tickets {i}.\n"),
                ));
            }
            let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
            let f = crate::fixture::vault(&files);
            let note = Likeness {
                rel: "Hives.md".into(),
                title: "Hives".into(),
                text: bees.into(),
                ..Default::default()
            };
            let (related, _, ties) = f.index.related(&note, 100).unwrap();
            let above = |path: &str| {
                let r = related
                    .iter()
                    .find(|r| r.path == path)
                    .unwrap_or_else(|| panic!("{path} related"));
                ties.words_share(&r.evidence).above_usual
            };
            (above("Apiary.md"), above("Spring 3.md"))
        };
        let (apiary, spring) = above(USUAL_FROM);
        assert!(apiary > 4.0 && apiary.is_finite(), "{apiary}");
        assert!((0.8..1.25).contains(&spring), "{spring}");
        assert_eq!(above(USUAL_FROM / 2 - 2), (f32::INFINITY, f32::INFINITY));
    }
}
