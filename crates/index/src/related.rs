//! Notes related to a note, as a search engine sees it: a BM25 "more like this" query built
//! from the note's weightiest words (its title and headings counting more, embedded text
//! less) and a cosine over word stems (other forms of its words count), plus what the vault
//! says outright: notes it names or that name it, notes it links to, notes sharing its tags,
//! the link graph around it, its folder, and how many notes link each candidate. Each kind
//! of evidence is one number ([`Evidence`]); [`Signals`] weighs them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tantivy::query::{PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Searcher, Term};

use super::schema::MAX_NAME_TOKENS;
use super::tokenizer;
use super::{IndexError, VaultIndex};

mod alike;
mod around;
mod cut;
mod evidence;
mod hubs;
mod live;
mod similar;
mod stock;
mod ties;
pub use evidence::{Evidence, FIGURES};
pub(crate) use hubs::HubFloor;
pub(crate) use live::LiveStats;
pub use ties::{Tie, Ties, WordsShare};

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
    /// What found it, kind by kind (what [`Ties::of`] reads to say why it is related).
    #[serde(skip)]
    pub evidence: Evidence,
}

/// A note's own words (its text, the vault's stock phrases blanked: `stock.rs`), and how many
/// copies of it the index holds (one, or none for a note not yet indexed), which are no other
/// notes having its words. Read once per query.
struct Own {
    text: String,
    indexed: u64,
}

/// The note's words and their weights, heaviest first.
#[derive(Debug, Clone, Default)]
pub struct Terms(pub Vec<(String, f32)>);

/// Candidates the content query contributes before the vault's own signals are added.
const CANDIDATES: usize = 60;
const TITLE_WEIGHT: f32 = 3.0;
const HEADING_WEIGHT: f32 = 2.0;
const EMBED_WEIGHT: f32 = 0.2;
/// How soon a word's weight saturates as the note says it again (BM25's k1). Against 1 + ln tf
/// (`cargo bench --bench related -- --all`): hidden-link recall mean 0.670 -> 0.671, higher in 19
/// of 34 languages and equal in 4, lowest 0.608 -> 0.595 (km); of the words shown as what found a
/// note (9 sections each in en/de/fr/es), those in more than a fifth of the vault's notes fell from
/// 26 % to 15 %. Keeping the logarithm for pairs of unspaced scripts did not help km (0.593).
/// Weighing the heaviest 240 words again by how bursty they are (Church and Gale's residual idf:
/// `favicon` 16 times in 3 notes, `needs` 12 times in 12) did not help either, though it gained
/// 0.01-0.04 on the words alone: scaled 0.3-2 the mean stayed 0.700, the lowest fell 0.664 ->
/// 0.659 and the generic words shown rose 0.030 -> 0.044; scaled 0.5-1 (only lowering the words
/// of no burst) the mean and the lowest stayed 0.700 and 0.664.
const K1: f32 = 1.2;
/// A focus word weighs this many times the note's heaviest word.
const FOCUS_WEIGHT: f32 = 2.0;
/// How much each kind of [`Evidence`] counts: an `Evidence` of weights.
///
/// The weights were fitted to hidden-link recall@10 on obsidian-help, all 34 languages
/// (`RELATED_DUMP=DIR cargo bench --bench related -- --all`, then `benches/related/fit.py DIR`:
/// coordinate search for the best mean plus half the lowest language). Before stems and
/// popularity: mean 0.556, lowest 0.449. Without popularity the same search gave mean 0.576;
/// without the folder 0.594; without the stem cosine 0.625. What the folder-mates link
/// ([`Evidence::folder_linked`]) raised the fit's mean 0.654 -> 0.674 and its lowest (km)
/// 0.577 -> 0.627.
///
/// Meaning (the cosine of the notes' vectors, [`Evidence::meaning`], only when the vault has
/// vectors) was fitted the same way with all-MiniLM-L6-v2, an English model: the search keeps
/// it at 0 (mean 0.674 with or without, lowest 0.635); at 0.25 en goes 0.727 -> 0.733 and de
/// 0.664 -> 0.682 while the mean stays 0.673 and the lowest (km) 0.633; at 1.0 the lowest falls
/// to 0.556. It is 0.25: a note that shares no word but the meaning can be found at all, at no
/// measurable cost. A multilingual model should be refitted.
///
/// The best part's cosine ([`Evidence::part_similar`]) was searched alone, the other weights as
/// they were (`fit.py`'s figure, both draws): mean 0.704 -> 0.707 and lowest 0.666 -> 0.674 at
/// 1.5, against 0.707 and 0.670 at 1.0 and 0.707 and 0.675 at 2.0 with the stem cosine at 2.0.
/// On each half of the pages (split as `fit.py` splits them) and each draw apart, 1.5 moves the
/// mean by -0.002 to +0.009 and the lowest language by +0.004 to +0.032.
/// Within the words a tie is weighed against ([`Ties::of`]), as the stem cosine is.
///
/// Every figure above is of the bench's first draw of hidden links, on which every weight was
/// chosen. Stop 53 added a second (the other half of each note's links): 0.686 there against
/// 0.714, the mean of both 0.700. Weights fitted on one draw and half the languages gain
/// nothing on the other draw and half (+0.001, +0.001, +0.009, -0.009).
#[derive(Debug, Clone, Copy)]
pub struct Signals(pub Evidence);

impl Default for Signals {
    fn default() -> Self {
        Signals(Evidence {
            content: 0.49,
            linked: 1.5,
            names_it: 0.1,
            named_by: 0.14,
            shared_tag: 0.3,
            neighbour: 0.28,
            cocited: 0.034,
            folder: 0.7,
            folder_linked: 1.0,
            similar: 2.8,
            popularity: 0.2,
            name_stems: 0.4,
            meaning: 0.25,
            link_folder: 0.5,
            alike_link: 0.6,
            part_similar: 1.5,
        })
    }
}

impl Signals {
    /// What the evidence adds up to.
    pub fn score(&self, e: &Evidence) -> f32 {
        self.0.figures().iter().zip(e.figures()).map(|(w, x)| w * x).sum()
    }
}

/// A score to three decimals: sums made in another order (segments, hash maps) differ in the
/// last bits, which must not reorder notes.
fn steady(score: f32) -> f32 {
    (score * 1000.0).round() / 1000.0
}

/// Notes scoring under this share of the best are left out, once there are [`MIN_RELATED`]:
/// only the weakest (a higher cut loses hidden links: recall@10 0.575 at 0.1, 0.521 at 0.25,
/// 0.318 at 0.6 on obsidian-help `en`, `cargo bench --bench related`).
const CUT: f32 = 0.1;
const MIN_RELATED: usize = 2;
/// Leading candidates whose popularity and name stems are counted.
const POPULARITY_FOR: usize = 200;
/// Character pairs whose notes are counted (the most promising by an upper bound).
const PAIRS_COUNTED: usize = 150;
/// The share of the notes holding the rarer of two Vietnamese syllables that must hold them
/// together for the pair to be a word. On obsidian-help vi, 0.1 still let halves of two words
/// lead the key terms (`tượng ứng` of `biểu tượng ứng dụng`, `thẻ chia`, `nhấn Shift`); 0.25
/// left `vòng tròn`, `JSON Canvas`, `vùng chọn`, `màn hình`, `Khởi động`.
const COHESION: f32 = 0.25;
/// Occurrences of a word (or a name's beginning) in a text followed to see whether a name
/// goes on: a text of one word repeated, and a name of that word 64 times, would otherwise walk
/// every position 64 deep.
const MAX_OCCURRENCES: usize = 1_000;

impl VaultIndex {
    /// The notes most related to `note`, best first, the words that found them, and the ties
    /// around it that tell why the others did.
    pub fn related(&self, note: &Likeness, limit: usize) -> Result<(Vec<Related>, Terms, Ties), IndexError> {
        self.related_with(note, limit, &Signals::default())
    }

    /// [`VaultIndex::related`] with the vault's signals weighed as given.
    pub fn related_with(
        &self,
        note: &Likeness,
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Related>, Terms, Ties), IndexError> {
        let searcher = self.searcher();
        let own = self.own_text(&searcher, note)?;
        let terms = self.weigh_with(&searcher, note, &own)?;
        let stems = similar::Stems::of(note, &own);
        let (mut evidence, around) = self.evidence(&searcher, note, &stems, &terms, CANDIDATES)?;
        // Popularity and name stems only reorder the notes other evidence found (the same recall as
        // counting it for all, at a fraction of the lookups).
        // Ranked by score, then path: the same vault text gives the same order, whatever the
        // segments (a note rewritten moves to a new one) and the order sums were made in.
        let names = self.paths_of(&searcher, evidence.keys())?;
        evidence::link_folders(note, &mut evidence, &names);
        let mut before: Vec<(f32, DocAddress)> = evidence.iter().map(|(a, e)| (steady(signals.score(e)), *a)).collect();
        before.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| names[&a.1].cmp(&names[&b.1])));
        let leading: Vec<DocAddress> = before.iter().take(POPULARITY_FOR).map(|(_, a)| *a).collect();
        self.late_evidence(&searcher, &stems, &mut evidence, &leading)?;
        let mut ranked: Vec<(f32, DocAddress)> = evidence.iter().map(|(a, e)| (steady(signals.score(e)), *a)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| names[&a.1].cmp(&names[&b.1])));
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
                evidence: evidence[&addr],
            });
        }
        let hubs = self.hub_floor(&searcher)?;
        Ok((out, terms, Ties::new(note, around, signals.0, hubs)))
    }

    /// Every candidate related to `note` with its evidence, unranked (the notes it excludes
    /// and itself left out): what the weights in [`Signals`] are tuned on.
    pub fn related_evidence(&self, note: &Likeness, candidates: usize) -> Result<Vec<(String, Evidence)>, IndexError> {
        let searcher = self.searcher();
        let own = self.own_text(&searcher, note)?;
        let terms = self.weigh_with(&searcher, note, &own)?;
        let stems = similar::Stems::of(note, &own);
        let (mut found, _) = self.evidence(&searcher, note, &stems, &terms, candidates)?;
        let all: Vec<DocAddress> = found.keys().copied().collect();
        let mut paths = self.paths_of(&searcher, &all)?;
        evidence::link_folders(note, &mut found, &paths);
        self.late_evidence(&searcher, &stems, &mut found, &all)?;
        let mut out = Vec::new();
        for (addr, e) in found {
            let path = paths.remove(&addr).unwrap_or_default();
            if path != note.rel && !path.is_empty() && !note.exclude.contains(&path) {
                out.push((path, e));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The note's words weighted by tf·idf against the vault (tf saturating, [`K1`]), title and
    /// headings heavier, embedded text lighter; words no other note has are left out, and so are
    /// the function words of the note's language (`noch`, `falls`, `dich` in German) and Japanese
    /// pairs holding hiragana (a particle or an ending: `更の`, `側に`), which say nothing of what a
    /// note is about (hidden-link recall on obsidian-help ja 0.670 -> 0.680).
    pub fn weigh(&self, note: &Likeness) -> Result<Terms, IndexError> {
        let searcher = self.searcher();
        let own = self.own_text(&searcher, note)?;
        self.weigh_with(&searcher, note, &own)
    }

    /// The note's own words: its text with the vault's stock phrases blanked (`stock.rs`).
    fn own_text(&self, searcher: &Searcher, note: &Likeness) -> Result<Own, IndexError> {
        let indexed = searcher.search(&*self.path_query(&note.rel), &tantivy::collector::Count)? as u64;
        let text = stock::own_words(self, searcher, &note.text, indexed)?;
        Ok(Own { text, indexed })
    }

    /// [`VaultIndex::weigh`] of the note's `own` words.
    fn weigh_with(&self, searcher: &Searcher, note: &Likeness, own: &Own) -> Result<Terms, IndexError> {
        let n = searcher.num_docs().max(1) as f32;
        // The note's own copy in the index does not count as another note having a word.
        let indexed = own.indexed as f32;
        let mut tf: HashMap<String, f32> = HashMap::new();
        let text = tokenizer::terms(&own.text);
        // The function words of the language the note is written in say nothing either.
        let language = tokenizer::languages_of(text.iter().map(String::as_str));
        let mut add_terms = |terms: Vec<String>, weight: f32| {
            for t in terms {
                if tokenizer::is_term(&t) && !language.is_stopword(&t) && !tokenizer::holds_hiragana(&t) {
                    *tf.entry(t).or_default() += weight;
                }
            }
        };
        add_terms(text, 1.0);
        let mut add = |text: &str, weight: f32| add_terms(tokenizer::terms(text), weight);
        add(&note.title, TITLE_WEIGHT);
        for h in &note.headings {
            add(h, HEADING_WEIGHT - 1.0);
        }
        add(&note.embedded, EMBED_WEIGHT);
        let word_df = |w: &str| self.live_doc_freq(searcher, &Term::from_field_text(self.fields.body, w));
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
                    let together = searcher.search(&q, &tantivy::collector::Count)? as f32;
                    // Two Vietnamese syllables that are seldom together where either is are two
                    // words' halves (`dụng tùy` of `ứng dụng tùy chỉnh`), not a word.
                    if term.contains(' ') && together < COHESION * df {
                        continue;
                    }
                    together
                }
                false => continue,
            };
            // A word of this note alone relates it to nothing; one in most notes, to everything.
            if df - indexed < 1.0 || df > n * 0.5 {
                continue;
            }
            // A word said again says less each time (BM25's saturation): a step-by-step note's
            // `Drücke` and `Enter`, said ten times, outweighed its rarer words under 1 + ln tf.
            scored.push((term, count * (K1 + 1.0) / (count + K1) * idf(df)));
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

    /// The vault path of each of `addrs`.
    fn paths_of<'a>(
        &self,
        searcher: &Searcher,
        addrs: impl IntoIterator<Item = &'a DocAddress>,
    ) -> Result<HashMap<DocAddress, String>, IndexError> {
        addrs
            .into_iter()
            .map(|a| Ok((*a, self.path_at(searcher, *a)?)))
            .collect()
    }

    fn path_query(&self, rel: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(self.path_term(rel), IndexRecordOption::Basic))
    }

    /// The `limit` notes `q` scores best, ties at the cut broken by path ([`VaultIndex::cut`]).
    fn docs_where(&self, searcher: &Searcher, q: Box<dyn Query>, limit: usize) -> Result<Vec<DocAddress>, IndexError> {
        let scored = self.around_cut(searcher, &*q, limit, &LiveStats::new(self, searcher))?;
        Ok(self.cut(searcher, scored, limit)?.into_iter().map(|(_, a)| a).collect())
    }

    /// How much naming `words` says: a name of one common word says little.
    fn name_strength(&self, searcher: &Searcher, words: &[String]) -> Result<f32, IndexError> {
        let [one] = words else {
            return Ok(1.0);
        };
        let n = searcher.num_docs().max(2) as f32;
        let df = self.live_doc_freq(searcher, &Term::from_field_text(self.fields.body, one))? as f32;
        let idf = ((n + 1.0) / (df + 1.0)).ln();
        Ok((idf / (n + 1.0).ln() * 2.0).clamp(0.0, 1.0))
    }
}

/// The names of notes that occur in `text` (as whole words), as indexed, each with how much
/// it says. Each segment's names are walked along the text's own word sequences: a name
/// prefix is followed only while some name continues it, so the look-ups grow with the text,
/// not with the vault (a word that begins 100,000 names costs one look-up per distinct word
/// after it in the text).
fn mentioned(text: &str, searcher: &Searcher, index: &VaultIndex) -> Result<Vec<(String, f32)>, IndexError> {
    let found = mentioned_names(text, searcher, index)?;
    let mut out = Vec::with_capacity(found.len());
    for name in found {
        let name_words: Vec<String> = name.split(' ').map(str::to_string).collect();
        let strength = index.name_strength(searcher, &name_words)?;
        out.push((name, strength));
    }
    Ok(out)
}

/// The names of notes (as indexed: their words joined by spaces) that occur in `text` as
/// whole words.
pub(crate) fn mentioned_names(
    text: &str,
    searcher: &Searcher,
    index: &VaultIndex,
) -> Result<BTreeSet<String>, IndexError> {
    let words = tokenizer::tokens(text);
    let mut firsts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in words.iter().enumerate() {
        // A Hebrew name may begin after the particles written onto its first word.
        for first in std::iter::once(w.as_str()).chain(tokenizer::hebrew_bare(w)) {
            let at = firsts.entry(first).or_default();
            if at.len() < MAX_OCCURRENCES {
                at.push(i);
            }
        }
    }
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut prefix = String::new();
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(index.fields.names)?;
        let walk = NameWalk {
            dict: inverted.terms(),
            words: &words,
        };
        for (first, positions) in &firsts {
            prefix.clear();
            prefix.push_str(first);
            walk.extend(&mut prefix, positions, 1, &mut found)
                .map_err(|e| IndexError::Io {
                    path: "the index's note names".into(),
                    source: e,
                })?;
        }
    }
    Ok(found)
}

/// One segment's names, walked along a text's words.
struct NameWalk<'a> {
    dict: &'a tantivy::termdict::TermDictionary,
    words: &'a [String],
}

impl NameWalk<'_> {
    /// `prefix` is the words `depth` long at each of `positions`: records it if it is a name,
    /// and follows the next words of the text while some name goes on ("prefix " < name <
    /// "prefix!"). At most [`MAX_NAME_TOKENS`] deep.
    fn extend(
        &self,
        prefix: &mut String,
        positions: &[usize],
        depth: usize,
        found: &mut BTreeSet<String>,
    ) -> std::io::Result<()> {
        if !found.contains(prefix.as_str()) && self.dict.term_ord(prefix.as_bytes())?.is_some() {
            found.insert(prefix.clone());
        }
        if depth >= MAX_NAME_TOKENS {
            return Ok(());
        }
        let len = prefix.len();
        let mut upper = prefix.as_bytes().to_vec();
        upper.push(b'!');
        prefix.push(' ');
        let continued = self
            .dict
            .range()
            .ge(prefix.as_bytes())
            .lt(&upper)
            .into_stream()?
            .advance();
        if continued {
            let mut next: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for &p in positions {
                if let Some(w) = self.words.get(p + depth) {
                    next.entry(w.as_str()).or_default().push(p);
                }
            }
            for (word, at) in next {
                prefix.truncate(len + 1);
                prefix.push_str(word);
                self.extend(prefix, &at, depth + 1, found)?;
            }
        }
        prefix.truncate(len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::nameable;

    /// Pairs holding hiragana (`の設`, `を変`) are no terms of a Japanese note; its katakana
    /// and kanji pairs are.
    #[test]
    fn japanese_particles_weigh_nothing() {
        let files = [
            ("設定.md", "# 設定\n\nリボンメニューの設定を変更します。"),
            ("公開.md", "# 公開\n\nサイトの設定を変更してから公開します。"),
            ("同期.md", "# 同期\n\nリボンから同期を開始します。"),
            ("検索.md", "# 検索\n\n検索語を入力します。"),
            ("画像.md", "# 画像\n\n画像を貼り付けます。"),
            ("音声.md", "# 音声\n\n音声を録音します。"),
        ];
        let f = crate::fixture::vault(&files);
        let note = Likeness {
            rel: "設定.md".into(),
            title: "設定".into(),
            text: "リボンメニューの設定を変更します。".into(),
            ..Default::default()
        };
        let terms = f.index.weigh(&note).unwrap();
        let terms: Vec<&str> = terms.0.iter().map(|(t, _)| t.as_str()).collect();
        assert!(terms.contains(&"リボ") && terms.contains(&"設定"), "{terms:?}");
        assert!(terms.iter().all(|t| !tokenizer::holds_hiragana(t)), "{terms:?}");
    }

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
