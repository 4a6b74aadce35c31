//! Every note's names — title, aliases, file name, headings — held in memory per segment, read
//! once from the stored outlines: symbol search takes its candidates from the index and their
//! names from here, instead of reading and parsing a stored document per candidate (that was
//! most of a `workspace/symbol` answer).

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::index::SegmentId;
use tantivy::schema::Value;
use tantivy::{DocId, SegmentReader, TantivyDocument};

use super::schema::Outline;
use super::{IndexError, VaultIndex};

/// What a name is to its note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// The note's title (always its first name).
    Title,
    /// An alias or the file name: other names of the note.
    Other,
    Heading(u8),
}

#[derive(Clone, Copy)]
struct Name {
    at: u32,
    len: u32,
    line: u32,
    kind: NameKind,
    /// What the name's words start with ([`start_bits`]): most names are ruled out by it
    /// without splitting them into words again.
    starts: u64,
}

/// Bits for how `word` (a normalised word) starts: its first character, and its first two.
/// A name whose bits do not hold a query word's bits has no word starting with it.
pub(crate) fn start_bits(word: &str) -> u64 {
    let mut chars = word.chars();
    let Some(a) = chars.next() else {
        return 0;
    };
    let one = 1u64 << (a as u64 % 32);
    match chars.next() {
        Some(b) => one | 1u64 << (32 + (a as u64 * 31 + b as u64) % 32),
        None => one,
    }
}

/// The bits a name must hold for each query word to start one of its words.
pub(crate) fn query_bits(words: &[String]) -> u64 {
    words.iter().map(|w| start_bits(w)).fold(0, |a, b| a | b)
}

/// The names of one segment's documents.
pub(crate) struct SegmentNames {
    /// Where each document's names start in `names` (one more entry than documents).
    starts: Vec<u32>,
    names: Vec<Name>,
    /// The names' text, back to back.
    text: String,
}

impl SegmentNames {
    /// The names of `doc`: kind, zero-based line (0 for note names), text. The title first.
    pub fn of(&self, doc: DocId) -> impl Iterator<Item = (NameKind, u32, &str)> {
        self.of_starting(doc, 0)
    }

    /// [`SegmentNames::of`], only names whose words' starts hold `bits` (see [`query_bits`]).
    pub fn of_starting(&self, doc: DocId, bits: u64) -> impl Iterator<Item = (NameKind, u32, &str)> {
        let (from, to) = match (self.starts.get(doc as usize), self.starts.get(doc as usize + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        self.names[from..to]
            .iter()
            .filter(move |n| n.starts & bits == bits)
            .map(|n| (n.kind, n.line, &self.text[n.at as usize..(n.at + n.len) as usize]))
    }

    /// The title of `doc` (empty for a deleted or unknown one).
    pub fn title(&self, doc: DocId) -> &str {
        self.of(doc)
            .find(|(k, _, _)| *k == NameKind::Title)
            .map_or("", |(_, _, t)| t)
    }

    fn read(
        segment: &SegmentReader,
        outline_field: tantivy::schema::Field,
        paths: &crate::graph::PathTable,
    ) -> Result<SegmentNames, IndexError> {
        // Documents are read in order: a few cached blocks decompress each block once.
        let mut analyzer = crate::tokenizer::words();
        let store = segment
            .get_store_reader(4)
            .map_err(|e| IndexError::Tantivy(tantivy::TantivyError::from(e)))?;
        let alive = segment.alive_bitset();
        let mut out = SegmentNames {
            starts: Vec::with_capacity(segment.max_doc() as usize + 1),
            names: Vec::new(),
            text: String::new(),
        };
        for doc in 0..segment.max_doc() {
            out.starts.push(out.names.len() as u32);
            if alive.is_some_and(|a| !a.is_alive(doc)) {
                continue;
            }
            let stored: TantivyDocument = store.get(doc)?;
            let outline: Outline = stored
                .get_first(outline_field)
                .and_then(|v| v.as_str())
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default();
            let stem = paths.get(doc).map_or("", scholia_vault::stem);
            out.push(&mut analyzer, NameKind::Title, 0, &outline.title);
            for alias in &outline.aliases {
                out.push(&mut analyzer, NameKind::Other, 0, alias);
            }
            if stem != outline.title && !outline.aliases.iter().any(|a| a == stem) {
                out.push(&mut analyzer, NameKind::Other, 0, stem);
            }
            for (level, line, text) in &outline.headings {
                out.push(&mut analyzer, NameKind::Heading(*level), *line, text);
            }
        }
        out.starts.push(out.names.len() as u32);
        out.names.shrink_to_fit();
        out.text.shrink_to_fit();
        Ok(out)
    }

    fn push(&mut self, analyzer: &mut tantivy::tokenizer::TextAnalyzer, kind: NameKind, line: u32, text: &str) {
        let mut starts = 0;
        let mut stream = analyzer.token_stream(text);
        while let Some(t) = stream.next() {
            starts |= start_bits(&t.text);
        }
        self.names.push(Name {
            at: self.text.len() as u32,
            len: text.len() as u32,
            line,
            kind,
            starts,
        });
        self.text.push_str(text);
    }

    /// Bytes held, roughly.
    fn size(&self) -> usize {
        self.starts.len() * 4 + self.names.len() * std::mem::size_of::<Name>() + self.text.len()
    }
}

/// The tables of the segments searched now, built when first asked for.
#[derive(Default)]
pub(crate) struct NameTables {
    by_segment: HashMap<SegmentId, Arc<SegmentNames>>,
}

impl VaultIndex {
    /// Whether every segment of `searcher` has its name table (and so its path table) read.
    pub(crate) fn names_ready(&self, searcher: &tantivy::Searcher) -> bool {
        let segments = searcher.segment_readers();
        // One lock at a time: nothing here waits on the other while holding one.
        let named = {
            let tables = scholia_base::lock(&self.name_tables);
            segments
                .iter()
                .all(|seg| tables.by_segment.contains_key(&seg.segment_id()))
        };
        named && {
            let paths = scholia_base::lock(&self.paths);
            segments.iter().all(|seg| paths.contains_key(&seg.segment_id()))
        }
    }

    /// The names of every segment of `searcher`, in segment order; tables of segments merged
    /// away are dropped.
    pub(crate) fn segment_names(&self, searcher: &tantivy::Searcher) -> Result<Vec<Arc<SegmentNames>>, IndexError> {
        let segments = searcher.segment_readers();
        let mut out = Vec::with_capacity(segments.len());
        let mut missing = Vec::new();
        {
            let tables = scholia_base::lock(&self.name_tables);
            for (i, seg) in segments.iter().enumerate() {
                match tables.by_segment.get(&seg.segment_id()) {
                    Some(t) => out.push(Some(t.clone())),
                    None => {
                        out.push(None);
                        missing.push(i);
                    }
                }
            }
        }
        for i in missing {
            let seg = &segments[i];
            let paths = self.segment_paths(seg)?;
            let table = Arc::new(SegmentNames::read(seg, self.fields.outline, &paths)?);
            out[i] = Some(table);
        }
        let out: Vec<Arc<SegmentNames>> = out.into_iter().map(|t| t.expect("filled")).collect();
        let mut tables = scholia_base::lock(&self.name_tables);
        tables
            .by_segment
            .retain(|id, _| segments.iter().any(|s| s.segment_id() == *id));
        for (seg, t) in segments.iter().zip(&out) {
            tables.by_segment.entry(seg.segment_id()).or_insert_with(|| t.clone());
        }
        Ok(out)
    }

    /// Reads the name tables of segments not read yet (after a commit or merge), so the next
    /// symbol search does not pay for it. Returns the bytes the tables hold.
    pub fn warm_names(&self) -> Result<usize, IndexError> {
        let tables = self.segment_names(&self.searcher())?;
        Ok(tables.iter().map(|t| t.size()).sum())
    }
}

impl VaultIndex {
    /// The `k` live notes with the fewest words in `field` among those holding the term `word`,
    /// shortest first. For one word this is BM25's order (a name holds a word once), without
    /// scoring: a word that starts every title ("not") costs a read of its postings and one
    /// byte per note.
    pub(crate) fn shortest_with(
        &self,
        searcher: &tantivy::Searcher,
        field: tantivy::schema::Field,
        word: &str,
        k: usize,
    ) -> Result<Vec<tantivy::DocAddress>, IndexError> {
        use std::collections::BinaryHeap;
        if k == 0 {
            return Ok(Vec::new());
        }
        let term = tantivy::Term::from_field_text(field, word);
        // Max-heap of (length, segment, doc): the worst kept on top; ties keep the first seen.
        let mut heap: BinaryHeap<(u8, u32, DocId)> = BinaryHeap::with_capacity(k + 1);
        // Lengths below this get in (all of them until `k` are kept).
        let mut bar = u16::MAX;
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let postings = segment
                .inverted_index(field)?
                .read_block_postings(&term, tantivy::schema::IndexRecordOption::Basic)
                .map_err(self.io())?;
            let Some(mut postings) = postings else {
                continue;
            };
            let norms = segment.get_fieldnorms_reader(field)?;
            let alive = segment.alive_bitset();
            // A block of doc ids at a time: a word in every title is most of the work here.
            loop {
                let docs = postings.docs();
                if docs.is_empty() {
                    break;
                }
                for &doc in docs {
                    let len = norms.fieldnorm_id(doc);
                    if u16::from(len) >= bar || alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    heap.push((len, ordinal as u32, doc));
                    if heap.len() > k {
                        heap.pop();
                    }
                    if heap.len() == k {
                        bar = heap.peek().map_or(u16::MAX, |top| u16::from(top.0));
                    }
                }
                postings.advance();
            }
        }
        Ok(heap
            .into_sorted_vec()
            .into_iter()
            .map(|(_, seg, doc)| tantivy::DocAddress::new(seg, doc))
            .collect())
    }
}

/// How well `name` matches query words (normalised like the index's words) that must each
/// start one of its words; `None` when one does not. Whole-name and leading matches rank
/// first, then shorter names. `scratch` holds the name's words between calls.
pub(crate) fn match_score(
    analyzer: &mut tantivy::tokenizer::TextAnalyzer,
    words: &[String],
    name: &str,
    scratch: &mut Vec<String>,
) -> Option<f32> {
    let count = if name.is_ascii() {
        ascii_words(name, scratch)
    } else {
        let mut stream = analyzer.token_stream(name);
        let mut n = 0;
        while let Some(t) = stream.next() {
            set_word(scratch, n, &t.text);
            n += 1;
        }
        n
    };
    let name_words = &scratch[..count];
    let mut score = 0.0f32;
    for (qi, w) in words.iter().enumerate() {
        let pos = name_words.iter().position(|n| n.starts_with(w.as_str()))?;
        if name_words[pos] == *w {
            score += 1.0;
        }
        if pos == qi {
            score += 1.0;
        }
    }
    if name_words.len() == words.len() && words.iter().zip(name_words).all(|(a, b)| a == b) {
        score += 10.0;
    }
    Some(score - name_words.len() as f32 * 0.1)
}

/// The index's words of an ASCII name (runs of letters and digits, lower-cased, at most 64
/// bytes), into `scratch`; returns how many. What the analyzer does, without allocating.
fn ascii_words(name: &str, scratch: &mut Vec<String>) -> usize {
    let mut n = 0;
    for word in name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if word.len() >= 64 {
            continue;
        }
        if scratch.len() <= n {
            scratch.push(String::new());
        }
        let slot = &mut scratch[n];
        slot.clear();
        slot.extend(word.chars().map(|c| c.to_ascii_lowercase()));
        n += 1;
    }
    n
}

fn set_word(scratch: &mut Vec<String>, n: usize, word: &str) {
    if scratch.len() <= n {
        scratch.push(String::new());
    }
    scratch[n].clear();
    scratch[n].push_str(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII path splits and folds as the analyzer does.
    #[test]
    fn ascii_words_are_the_analyzers_words() {
        for name in [
            "Sync settings and selective syncing",
            "How to: use   the CLI (v1.2)",
            "snake_case-and-kebab",
            "a 1234567890123456789012345678901234567890123456789012345678901234567890 b",
            "",
            "   ",
        ] {
            let mut scratch = Vec::new();
            let n = ascii_words(name, &mut scratch);
            assert_eq!(scratch[..n].to_vec(), crate::tokenizer::tokens(name), "{name}");
        }
    }

    /// A name is never ruled out by its bits when a query word starts one of its words.
    #[test]
    fn start_bits_never_rule_out_a_match() {
        let mut analyzer = crate::tokenizer::words();
        let mut scratch = Vec::new();
        let names = [
            "Sync settings",
            "Über Obsidian",
            "设置 同步",
            "ไทย ภาษา",
            "a",
            "Canvas (plugin)",
        ];
        for name in names {
            let words = crate::tokenizer::tokens(name);
            let bits = query_bits(&words);
            let have = query_bits(&words);
            for word in &words {
                for cut in 1..=word.chars().count() {
                    let prefix: String = word.chars().take(cut).collect();
                    let q = vec![prefix];
                    assert_eq!(have & query_bits(&q), query_bits(&q), "{name} {q:?}");
                    assert!(match_score(&mut analyzer, &q, name, &mut scratch).is_some());
                }
            }
            assert_eq!(have & bits, bits);
        }
        assert_ne!(query_bits(&["zq".into()]) & !query_bits(&["sy".into()]), 0);
    }

    /// Answered in place only once every segment's tables are read, and then as `symbols` is.
    #[test]
    fn symbols_are_ready_once_every_segment_is_read() {
        let f = crate::fixture::vault(&[("Alpha.md", "# Alpha\n\n## Also\n"), ("Gamma.md", "# Gamma")]);
        let index = &f.index;
        assert!(index.symbols_if_ready("al", 10).is_none(), "no table read yet");
        let all = index.symbols("al", 10).unwrap();
        assert_eq!(all.len(), 3, "the note, its title heading, Also: {all:?}");
        assert_eq!(index.symbols_if_ready("al", 10).expect("tables read").unwrap(), all);
        std::fs::write(f.root().join("Alder.md"), "# Alder").unwrap();
        index.sync(&mut |_| {}).unwrap();
        assert!(
            index.symbols_if_ready("al", 10).is_none(),
            "the new segment's table is not read"
        );
        assert_eq!(index.symbols("al", 10).unwrap().len(), 5, "Alder and its heading too");
        assert!(index.symbols_if_ready("al", 10).is_some());
    }

    /// The notes with the shortest titles holding a word, as a sort of every one would give,
    /// before and after notes are rewritten (deleted documents) and removed.
    #[test]
    fn shortest_with_is_a_sort_of_every_holder() {
        use tantivy::collector::DocSetCollector;
        // Titles of 1 to 13 words, in an order that is not their length's.
        let names: Vec<(String, String)> = (0..40)
            .map(|i| {
                let words: Vec<String> = (0..(i * 7) % 13).map(|w| format!("w{w}")).collect();
                let title = format!("Alpha {}", words.join(" ")).trim().to_string();
                (format!("{i:02} {title}.md"), format!("# {title}\n\ntext"))
            })
            .collect();
        let files: Vec<(&str, &str)> = names.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let f = crate::fixture::vault(&files);
        let (index, root) = (&f.index, f.root());
        let check = |k: usize| {
            let searcher = index.searcher();
            let field = index.fields.sym_title;
            let term = tantivy::Term::from_field_text(field, "alp");
            let query = tantivy::query::TermQuery::new(term, tantivy::schema::IndexRecordOption::Basic);
            let mut every: Vec<(u8, tantivy::DocAddress)> = searcher
                .search(&query, &DocSetCollector)
                .unwrap()
                .into_iter()
                .map(|a| {
                    let norms = searcher
                        .segment_reader(a.segment_ord)
                        .get_fieldnorms_reader(field)
                        .unwrap();
                    (norms.fieldnorm_id(a.doc_id), a)
                })
                .collect();
            every.sort();
            let expected: Vec<_> = every.iter().take(k).map(|(_, a)| *a).collect();
            let got = index.shortest_with(&searcher, field, "alp", k).unwrap();
            assert_eq!(got, expected, "k={k}");
            got.len()
        };
        for k in [0, 1, 5, 40, 50] {
            check(k);
        }
        for i in [2, 9, 17] {
            let (rel, _) = &names[i];
            std::fs::write(root.join(rel), "# Alpha\n\nrewritten").unwrap();
            index.touched(&[&root.join(rel)]);
        }
        std::fs::remove_file(root.join(&names[1].0)).unwrap();
        index.sync(&mut |_| {}).unwrap();
        for k in [1, 5, 39] {
            check(k);
        }
        assert_eq!(check(50), 39);
        // Symbol search takes its candidates from here: the notes now titled "Alpha" alone
        // come first, by path.
        let found = index.symbols("alp", 4).unwrap();
        let paths: Vec<&str> = found.iter().map(|s| s.path.as_str()).collect();
        let expected: Vec<&str> = [0, 2, 9, 13].iter().map(|&i| names[i].0.as_str()).collect();
        assert_eq!(paths, expected, "{found:?}");
    }

    #[test]
    fn scores() {
        let mut analyzer = crate::tokenizer::words();
        let mut scratch = Vec::new();
        let mut check = |words: &[&str], name: &str, expected: Option<f32>| {
            let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            let got = match_score(&mut analyzer, &words, name, &mut scratch);
            assert_eq!(got.map(|s| (s * 10.0).round() / 10.0), expected, "{words:?} {name}");
        };
        check(&["sync"], "Sync", Some(11.9));
        check(&["syn"], "Sync settings", Some(0.8));
        check(&["set"], "Sync settings", Some(-0.2));
        check(&["set", "syn"], "Sync settings", Some(-0.2));
        check(&["xyz"], "Sync settings", None);
        check(&["uber"], "Über Obsidian", Some(1.8));
        check(&["设", "置"], "设置", Some(13.8));
        check(&["设置"], "设置", None);
    }
}
