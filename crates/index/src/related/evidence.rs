//! What the vault says about each note that may be related to a note: one number per kind of
//! evidence, gathered once and weighed by [`Signals`](super::Signals).

use std::collections::{HashMap, HashSet};

use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Searcher, Term};

use super::around::{Around, folder_of, reach};
use super::similar::Stems;
use super::{Likeness, Terms, mentioned};
use crate::schema::nameable;
use crate::{IndexError, VaultIndex, tokenizer};

/// Words of the query; more add little but cost time.
const QUERY_TERMS: usize = 60;
/// Notes whose links are read for the graph signals (linked notes, linking notes).
const MAX_NEIGHBOURS: usize = 30;

/// The evidence relating one note to the researched one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    /// BM25 of the note's weightiest words, divided by the best candidate's.
    pub content: f32,
    /// The note links to it.
    pub linked: f32,
    /// Its names found in the note's text, each by how much the name says.
    pub names_it: f32,
    /// The note's names found in its text.
    pub named_by: f32,
    /// Share of the note's tags it has.
    pub shared_tag: f32,
    /// Linked by a note the note links (X → Y → Z), Adamic–Adar: each Y counts
    /// 1 / ln(2 + what Y links), a hub's links saying little.
    pub neighbour: f32,
    /// Linked beside the note (X ← W → Z, co-citation), Adamic–Adar.
    pub cocited: f32,
    /// In the note's folder: 1 / ln(2 + the folder's size).
    pub folder: f32,
    /// The share of the note's folder-mates that link to it: what the notes beside it link
    /// (a section's hub notes, which need share no words with the note).
    pub folder_linked: f32,
    /// Cosine of the two notes' stem vectors (log tf; the note's side weighted by idf).
    pub similar: f32,
    /// The best cosine of one part of the note (its own words between two headings, fifteen
    /// stems or more) with it, measured as `similar` measures the whole: a note about what one
    /// section says, which the note's other sections drown in the whole's cosine (see
    /// `similar.rs`). The whole's cosine for a note of one part. Hidden-link recall on
    /// obsidian-help, 34 languages, both draws: mean 0.701 -> 0.704, lowest 0.662 -> 0.671
    /// (vi); below 0.70 by the draws' intervals ar, ca, he, sv, vi -> ar, da, th.
    pub part_similar: f32,
    /// ln(1 + the notes linking to it): a note many link is one more is likely to.
    pub popularity: f32,
    /// Share of the stems of its file name found in the note's text: its name in any form
    /// (`names_it` needs the name as written).
    pub name_stems: f32,
    /// Cosine of the two notes' vectors (their meaning), when the vault has embeddings; 0
    /// without them.
    pub meaning: f32,
    /// The share of the note's links that go into its folder: a note linking five notes of
    /// `Plugins/` is likely to link a sixth (hidden-link recall on obsidian-help, 34 languages:
    /// mean 0.681 -> 0.701, lowest 0.633 -> 0.666 with the weights refitted, in `fit.py`'s figure).
    pub link_folder: f32,
    /// Linked by the notes most like the note (by stems), each link weighed by how alike its
    /// note is, Adamic–Adar (see `alike.rs`): mean 0.704 -> 0.730 on `fit.py`'s figure.
    pub alike_link: f32,
}

/// How many figures an [`Evidence`] has.
pub const FIGURES: usize = 16;

impl Evidence {
    /// Every figure, in the order of the fields (what `benches/related/fit.py` reads).
    pub fn figures(&self) -> [f32; FIGURES] {
        [
            self.content,
            self.linked,
            self.names_it,
            self.named_by,
            self.shared_tag,
            self.neighbour,
            self.cocited,
            self.folder,
            self.folder_linked,
            self.similar,
            self.popularity,
            self.name_stems,
            self.meaning,
            self.link_folder,
            self.alike_link,
            self.part_similar,
        ]
    }
}

/// Each candidate's [`Evidence::link_folder`], from the paths of the note's links and of the
/// candidates (`paths`).
pub(super) fn link_folders(
    note: &Likeness,
    found: &mut HashMap<DocAddress, Evidence>,
    paths: &HashMap<DocAddress, String>,
) {
    let links: Vec<&str> = note
        .links
        .iter()
        .filter(|p| **p != note.rel)
        .map(|p| folder_of(p))
        .collect();
    if links.is_empty() {
        return;
    }
    let mut into: HashMap<&str, usize> = HashMap::new();
    for f in &links {
        *into.entry(f).or_default() += 1;
    }
    for (addr, e) in found.iter_mut() {
        if let Some(n) = paths.get(addr).and_then(|p| into.get(folder_of(p))) {
            e.link_folder = *n as f32 / links.len() as f32;
        }
    }
}

impl VaultIndex {
    /// Every note with any evidence relating it to `note`: the `candidates` best by content and
    /// every note the vault's links, names, tags and folders tie to it; and what lies around
    /// the note, as read for that.
    pub(super) fn evidence(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        stems: &Stems,
        terms: &Terms,
        candidates: usize,
    ) -> Result<(HashMap<DocAddress, Evidence>, Around), IndexError> {
        let mut found: HashMap<DocAddress, Evidence> = HashMap::new();
        self.content(searcher, note, terms, candidates, &mut found)?;
        for path in note.links.iter().filter(|p| **p != note.rel) {
            if let Some(addr) = self.doc_of(searcher, path)? {
                found.entry(addr).or_default().linked = 1.0;
            }
        }
        // Link keys resolved once for the graph and the notes alike.
        let mut links = crate::graph::LinkTargets::default();
        let mut around = self.graph(searcher, note, &mut found, &mut links)?;
        around.usual = self.similar(searcher, stems, &mut found)?;
        self.alike_links(searcher, note, &mut found, &mut around.alike, &mut links)?;
        self.meaning_evidence(searcher, &note.rel, candidates, &mut found)?;
        self.names_both_ways(searcher, note, candidates, &mut found)?;
        for tag in &note.tags {
            let q = TermQuery::new(
                Term::from_field_text(self.fields.tags, &tag.to_lowercase()),
                IndexRecordOption::Basic,
            );
            for addr in self.docs_where(searcher, Box::new(q), candidates)? {
                found.entry(addr).or_default().shared_tag += 1.0 / note.tags.len() as f32;
            }
        }
        Ok((found, around))
    }

    /// BM25 over body, title and headings, each word boosted by its weight.
    fn content(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        terms: &Terms,
        candidates: usize,
        found: &mut HashMap<DocAddress, Evidence>,
    ) -> Result<(), IndexError> {
        let Some(&(_, top)) = terms.0.first() else {
            return Ok(());
        };
        let mut clauses: Vec<Box<dyn Query>> = Vec::new();
        // Vietnamese syllable pairs are shown, not searched: the stems compare by them already,
        // and searched they cost the words their place (obsidian-help vi 0.650 -> 0.637).
        for (word, weight) in terms.0.iter().filter(|(w, _)| !w.contains(' ')).take(QUERY_TERMS) {
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
                clauses.push(Box::new(BoostQuery::new(q, boost * field_boost)));
            }
        }
        let query: Vec<(Occur, Box<dyn Query>)> = clauses
            .iter()
            .map(|q| (Occur::Should, q.box_clone()))
            .chain(std::iter::once((Occur::MustNot, self.path_query(&note.rel))))
            .collect();
        let stats = super::LiveStats::new(self, searcher);
        let union = self.scoped(Box::new(BooleanQuery::new(query)));
        let top_docs = self.around_cut(searcher, &*union, candidates, &stats)?;
        // Summed again in the query's order, then cut: the same candidates and figures
        // whatever segments the notes lie in.
        let scores = super::live::in_clause_order(
            searcher,
            &stats,
            &clauses,
            top_docs.into_iter().map(|(_, a)| a).collect(),
        )?;
        let scores = self.cut(searcher, scores.into_iter().map(|(a, s)| (s, a)).collect(), candidates)?;
        let best = scores.iter().map(|(s, _)| *s).fold(0.0, f32::max).max(f32::EPSILON);
        for (score, addr) in scores {
            found.entry(addr).or_default().content = score / best;
        }
        Ok(())
    }

    /// Names in the text both ways: the notes whose names the note's text holds, and the notes
    /// whose text holds one of the note's names.
    fn names_both_ways(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        candidates: usize,
        found: &mut HashMap<DocAddress, Evidence>,
    ) -> Result<(), IndexError> {
        for (name, strength) in mentioned(&note.text, searcher, self)? {
            let key = TermQuery::new(
                Term::from_field_text(self.fields.names, &name),
                IndexRecordOption::Basic,
            );
            for addr in self.docs_where(searcher, Box::new(key), 3)? {
                found.entry(addr).or_default().names_it += strength;
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
            let strength = self.name_strength(searcher, &words)?;
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
            for addr in self.docs_where(searcher, query, candidates)? {
                if naming.insert(addr) {
                    found.entry(addr).or_default().named_by += strength;
                }
            }
        }
        Ok(())
    }

    /// The link graph around the note: notes its links link (X → Y → Z), notes linked beside it
    /// (X ← W → Z), and its folder. (Notes linking where it links, X → Y ← Z, added nothing to
    /// hidden-link recall once stems and popularity counted.)
    fn graph(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        found: &mut HashMap<DocAddress, Evidence>,
        cache: &mut crate::graph::LinkTargets,
    ) -> Result<Around, IndexError> {
        let mut around = Around::default();
        type Field = fn(&mut Evidence) -> &mut f32;
        let add =
            |paths: &[String], field: Field, found: &mut HashMap<DocAddress, Evidence>| -> Result<(), IndexError> {
                let weight = 1.0 / (2.0 + paths.len() as f32).ln();
                for p in paths.iter().filter(|p| **p != note.rel) {
                    if let Some(addr) = self.doc_of(searcher, p)? {
                        *field(found.entry(addr).or_default()) += weight;
                    }
                }
                Ok(())
            };
        let linked = note.links.iter().filter(|p| **p != note.rel).take(MAX_NEIGHBOURS);
        for path in linked {
            let theirs = self.links_of_with(searcher, path, cache)?;
            add(&theirs, |e| &mut e.neighbour, found)?;
            reach(&mut around.via, path, &theirs);
        }
        let folder = folder_of(&note.rel);
        let mates = self.folder_mates(searcher, &note.rel, folder, cache)?;
        let weight = 1.0 / (2.0 + mates.all.len() as f32).ln();
        for (path, addr) in &mates.all {
            if *path != note.rel {
                found.entry(*addr).or_default().folder += weight;
            }
        }
        for (target, linking) in &mates.linking {
            if *target == note.rel {
                continue;
            }
            if let Some(addr) = self.doc_of(searcher, target)? {
                found.entry(addr).or_default().folder_linked = *linking as f32 / mates.read as f32;
            }
        }
        around.mates = mates;
        let linking = self.linking_to_with(searcher, &note.rel, crate::LinkScope::Own)?;
        for source in linking.iter().take(MAX_NEIGHBOURS) {
            let theirs = self.links_of_with(searcher, source, cache)?;
            add(&theirs, |e| &mut e.cocited, found)?;
            reach(&mut around.beside, source, &theirs);
        }
        Ok(around)
    }
}

impl VaultIndex {
    /// Sets what is counted only for the leading candidates, `which`: [`Evidence::popularity`]
    /// (notes whose links name it by file name or path; aliases are not counted, two notes of
    /// one name share the figure) and [`Evidence::name_stems`].
    pub(super) fn late_evidence(
        &self,
        searcher: &Searcher,
        stems: &Stems,
        found: &mut HashMap<DocAddress, Evidence>,
        which: &[DocAddress],
    ) -> Result<(), IndexError> {
        for addr in which {
            let (path, _) = self.stored(searcher, *addr)?;
            let without_ext = path.rsplit_once('.').map(|(p, _)| p).unwrap_or(&path).to_lowercase();
            let name = scholia_vault::stem(&path);
            let stem = name.to_lowercase();
            let mut linking = self.live_doc_freq(searcher, &Term::from_field_text(self.fields.links, &stem))?;
            if without_ext != stem {
                linking += self.live_doc_freq(searcher, &Term::from_field_text(self.fields.links, &without_ext))?;
            }
            let names: HashSet<String> = tokenizer::stems(name).into_iter().collect();
            let Some(e) = found.get_mut(addr) else {
                continue;
            };
            e.popularity = (1.0 + linking as f32).ln();
            if !names.is_empty() {
                e.name_stems = names.iter().filter(|s| stems.has(s)).count() as f32 / names.len() as f32;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::WriterOptions;

    /// The evidence for `note` (its text as the first file's) in a vault of `files`.
    pub(in crate::related) fn evidence_in(files: &[(&str, &str)], title: &str) -> HashMap<String, Evidence> {
        let vault = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let path = vault.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let vault = scholia_vault::Vault::open(vault.path()).unwrap();
        let index = VaultIndex::open(vault, home.path(), WriterOptions::default()).unwrap();
        index.sync(&mut |_| {}).unwrap();
        let note = Likeness {
            rel: files[0].0.into(),
            title: title.into(),
            text: files[0].1.into(),
            ..Default::default()
        };
        index.related_evidence(&note, 10).unwrap().into_iter().collect()
    }

    #[test]
    fn stems_relate_other_forms_of_words_and_links_make_popularity() {
        let sync = "Синхронизация заметок между устройствами шифруется. Хранилище синхронизируется автоматически.";
        let found = evidence_in(
            &[
                ("Синхронизация.md", sync),
                (
                    "Устройства.md",
                    "На устройствах заметки хранятся локально, шифрованием защищены. Хранилища синхронизируются.",
                ),
                ("Сад.md", "Томаты в саду поливают утром. [[Узел]]"),
                ("Горы.md", "Летом в горах ходят пешком. [[Узел]]"),
                ("Море.md", "Парус и ветер на море. [[Узел]]"),
                ("Узел.md", "Ночью на небе видны звёзды."),
            ],
            "Синхронизация",
        );
        // No word in common as written, four stems in common.
        let devices = &found["Устройства.md"];
        assert!(devices.content == 0.0 && devices.similar > 0.3, "{devices:?}");
        assert_eq!(found["Сад.md"].similar, 0.0);
        assert!(
            (found["Узел.md"].popularity - 4f32.ln()).abs() < 1e-6,
            "{:?}",
            found["Узел.md"]
        );
        assert_eq!(found["Горы.md"].popularity, 0.0);
    }

    /// A section's hub: linked by the note's folder-mates, sharing no word or folder with it.
    #[test]
    fn what_folder_mates_link_counts() {
        let found = evidence_in(
            &[
                (
                    "Sync/Conflicts.md",
                    "When two devices edit one file, the newer edit wins.",
                ),
                ("Sync/Regions.md", "Data centres in Europe and Asia. See [[Settings]]."),
                (
                    "Sync/History.md",
                    "Older versions are kept for a year. See [[Settings]] and [[Plans]].",
                ),
                ("Basics/Settings.md", "Preferences live here."),
                ("Basics/Plans.md", "Prices per month."),
                ("Basics/Unrelated.md", "Nothing in common."),
            ],
            "Conflicts",
        );
        let share = |rel: &str| found.get(rel).map_or(0.0, |e| e.folder_linked);
        assert_eq!((share("Basics/Settings.md"), share("Basics/Plans.md")), (1.0, 0.5));
        assert_eq!(share("Basics/Unrelated.md"), 0.0);
        assert_eq!(
            share("Sync/Regions.md"),
            0.0,
            "folder-mates themselves are the folder's evidence"
        );
    }

    /// Unlinked mentions: names (file names, aliases) found in the text as whole words,
    /// through the index's names field, a look-up per word of the text.
    #[test]
    fn names_in_the_text_are_mentions() {
        let found = evidence_in(
            &[
                (
                    "Daily.md",
                    "Open the graph view, then the Whiteboard. Graphs and viewing differ; see the pdf. \
                     Obsidian URI and obsidian-uri links. 属性は便利。 Then note 12 alpha, and note 13.",
                ),
                ("Graph view.md", "Shows notes as nodes."),
                ("Graph.md", "A word alone in the text only as part of graph view."),
                ("Views.md", "Plural, not in the text."),
                ("Canvas.md", "---\naliases: [Whiteboard]\n---\nInfinite space."),
                ("pdf.md", "Too short a name to mean the note."),
                ("Obsidian URI.md", "Links that open the app."),
                ("属性.md", "ノートの属性。"),
                ("Elsewhere/Unrelated.md", "Nothing named."),
                ("Graph settings.md", "Begins like a name in the text."),
                ("Note 12 alpha.md", "Named in full."),
                ("Note 13 alpha.md", "Named in part."),
                ("Note 12 alpha beta.md", "Longer than what the text names."),
            ],
            "Daily",
        );
        let check = |rel: &str, mentioned: bool| {
            let names_it = found.get(rel).map_or(0.0, |e| e.names_it);
            assert_eq!(names_it > 0.0, mentioned, "{rel}: {:?}", found.get(rel));
        };
        check("Graph view.md", true);
        check("Graph.md", true);
        check("Views.md", false);
        check("Canvas.md", true);
        check("pdf.md", false);
        check("Obsidian URI.md", true);
        check("属性.md", true);
        check("Elsewhere/Unrelated.md", false);
        check("Graph settings.md", false);
        check("Note 12 alpha.md", true);
        check("Note 13 alpha.md", false);
        check("Note 12 alpha beta.md", false);
    }

    /// Hostile: one word a million times, and a note named by that word 64 times (the longest
    /// name matched). Each occurrence would be followed 64 deep; a thousand are.
    #[test]
    fn a_repeated_word_does_not_walk_every_position() {
        let text = "ab ".repeat(1_000_000);
        let name = vec!["ab"; 64].join(" ");
        let started = std::time::Instant::now();
        let found = evidence_in(
            &[("Long.md", &text), (&format!("{name}.md"), "Named at length.")],
            "Long",
        );
        assert!(found[&format!("{name}.md")].names_it > 0.0);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }
}
