//! Names of notes: symbol search (`workspace/symbol`), `[[` completion, wikilink resolution,
//! outlines.

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Order, Searcher, Term};

use super::named::Named;
use super::schema::Outline;
use super::search::{NoteRef, Symbol, SymbolKind};
use super::symbols::{NameKind, match_score, query_bits};
use super::tokenizer::{self, MAX_PREFIX_CHARS};
use super::{IndexError, VaultIndex};

const SYMBOL_CANDIDATES: usize = 256;
/// Words of a query looked up as name prefixes.
const MAX_NAME_WORDS: usize = 16;

impl VaultIndex {
    /// Query words cut to the indexed prefix length.
    fn prefix_words(query: &str) -> Vec<String> {
        tokenizer::tokens(query)
            .into_iter()
            .take(MAX_NAME_WORDS)
            .map(|w| w.chars().take(MAX_PREFIX_CHARS).collect())
            .collect()
    }

    fn prefix_query(&self, words: &[String], headings: bool) -> Box<dyn Query> {
        let clauses = words
            .iter()
            .map(|w| {
                let title: Box<dyn Query> = Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.sym_title, w),
                        IndexRecordOption::WithFreqs,
                    )),
                    3.0,
                ));
                let q: Box<dyn Query> = if headings {
                    let head = Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.sym_head, w),
                        IndexRecordOption::WithFreqs,
                    ));
                    Box::new(BooleanQuery::new(vec![(Occur::Should, title), (Occur::Should, head)]))
                } else {
                    title
                };
                (Occur::Must, q)
            })
            .collect();
        Box::new(BooleanQuery::new(clauses))
    }

    /// Notes whose names hold every word as a word's start, best first, `k` at most: by title
    /// (and, with `headings`, by heading too). One word takes the notes with the shortest
    /// names holding it ([`VaultIndex::shortest_with`]); several are ranked by BM25.
    fn name_candidates(
        &self,
        searcher: &Searcher,
        words: &[String],
        headings: bool,
        k: usize,
    ) -> Result<Vec<DocAddress>, IndexError> {
        if let [word] = words {
            let mut top = self.shortest_with(searcher, self.fields.sym_title, word, k)?;
            if headings {
                let titled: std::collections::HashSet<DocAddress> = top.iter().copied().collect();
                for addr in self.shortest_with(searcher, self.fields.sym_head, word, k)? {
                    if !titled.contains(&addr) {
                        top.push(addr);
                    }
                }
            }
            return Ok(top);
        }
        let top = searcher.search(
            &*self.prefix_query(words, headings),
            &TopDocs::with_limit(k.max(1)).order_by_score(),
        )?;
        Ok(top.into_iter().map(|(_, a)| a).collect())
    }

    /// The most recently modified notes first.
    fn recent(&self, searcher: &Searcher, limit: usize) -> Result<Vec<DocAddress>, IndexError> {
        let top = searcher.search(
            &tantivy::query::AllQuery,
            &TopDocs::with_limit(limit.max(1)).order_by_fast_field::<u64>("mtime", Order::Desc),
        )?;
        Ok(top.into_iter().map(|(_, a)| a).collect())
    }

    /// Notes and headings whose words start with the query's words, best first. An empty query
    /// lists recently modified notes.
    pub fn symbols(&self, query: &str, limit: usize) -> Result<Vec<Symbol>, IndexError> {
        self.symbols_in(&self.searcher(), query, limit)
    }

    /// [`VaultIndex::symbols`] when it is quick: `None` when a segment's name table would have
    /// to be read first (after a merge, tens of milliseconds at 100k), so a caller on an event
    /// loop can answer in place and hand only that case to a blocking thread.
    pub fn symbols_if_ready(&self, query: &str, limit: usize) -> Option<Result<Vec<Symbol>, IndexError>> {
        let searcher = self.searcher();
        if !self.names_ready(&searcher) {
            return None;
        }
        Some(self.symbols_in(&searcher, query, limit))
    }

    fn symbols_in(&self, searcher: &Searcher, query: &str, limit: usize) -> Result<Vec<Symbol>, IndexError> {
        let words = Self::prefix_words(query);
        let tables = self.segment_names(searcher)?;
        let path_of = |addr: DocAddress| -> Result<String, IndexError> {
            let paths = self.segment_paths(searcher.segment_reader(addr.segment_ord))?;
            Ok(paths.get(addr.doc_id).unwrap_or_default().to_string())
        };
        if words.is_empty() {
            return self
                .recent(searcher, limit)?
                .into_iter()
                .map(|a| {
                    let title = tables[a.segment_ord as usize].title(a.doc_id).to_string();
                    Ok(note_symbol(path_of(a)?, title, 0.0))
                })
                .collect();
        }
        let top = self.name_candidates(searcher, &words, true, SYMBOL_CANDIDATES)?;
        let mut analyzer = tokenizer::words();
        let mut scratch = Vec::new();
        let bits = query_bits(&words);
        // Ranked borrowed from the tables; only the `limit` kept become owned symbols.
        struct Found<'t> {
            score: f32,
            name: &'t str,
            addr: DocAddress,
            /// `None` for the note itself.
            heading: Option<(u8, u32)>,
        }
        let mut found: Vec<Found> = Vec::new();
        for addr in top {
            let names = &tables[addr.segment_ord as usize];
            let mut note_score: Option<f32> = None;
            for (kind, line, text) in names.of_starting(addr.doc_id, bits) {
                let Some(score) = match_score(&mut analyzer, &words, text, &mut scratch) else {
                    continue;
                };
                match kind {
                    NameKind::Title | NameKind::Other => {
                        note_score = Some(note_score.map_or(score, |s| s.max(score)));
                    }
                    NameKind::Heading(level) => found.push(Found {
                        score,
                        name: text,
                        addr,
                        heading: Some((level, line)),
                    }),
                }
            }
            if let Some(score) = note_score {
                found.push(Found {
                    score: score + 0.5,
                    name: names.title(addr.doc_id),
                    addr,
                    heading: None,
                });
            }
        }
        let paths = searcher
            .segment_readers()
            .iter()
            .map(|segment| self.segment_paths(segment))
            .collect::<Result<Vec<_>, _>>()?;
        let path = |a: DocAddress| paths[a.segment_ord as usize].get(a.doc_id).unwrap_or_default();
        let order = |a: &Found, b: &Found| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.name.cmp(b.name))
                .then_with(|| path(a.addr).cmp(path(b.addr)))
                .then_with(|| a.heading.cmp(&b.heading))
        };
        // Only the `limit` best are ordered: headings can make thousands of matches.
        if found.len() > limit && limit > 0 {
            found.select_nth_unstable_by(limit - 1, order);
        }
        found.truncate(limit);
        found.sort_unstable_by(order);
        Ok(found
            .into_iter()
            .map(|f| {
                let path = path(f.addr).to_string();
                match f.heading {
                    None => note_symbol(path, f.name.to_string(), f.score),
                    Some((level, line)) => Symbol {
                        name: f.name.to_string(),
                        kind: SymbolKind::Heading(level),
                        path,
                        line,
                        container: Some(tables[f.addr.segment_ord as usize].title(f.addr.doc_id).to_string()),
                        score: f.score,
                    },
                }
            })
            .collect())
    }

    /// Notes whose title, alias or file name starts with the words of `prefix` (completion
    /// after `[[`). An empty prefix lists recently modified notes.
    pub fn notes_named(&self, prefix: &str, limit: usize) -> Result<Vec<NoteRef>, IndexError> {
        let searcher = self.searcher();
        let words = Self::prefix_words(prefix);
        let addrs: Vec<DocAddress> = if words.is_empty() {
            self.recent(&searcher, limit)?
        } else {
            self.name_candidates(&searcher, &words, false, limit)?
        };
        addrs
            .into_iter()
            .map(|a| {
                let (path, outline) = self.stored(&searcher, a)?;
                Ok(NoteRef { path, outline })
            })
            .collect()
    }

    /// The note a `[[target]]` names, as Obsidian resolves it: a vault path (with or without
    /// extension), else a file name or alias anywhere, preferring the linking note's folder and
    /// then the shortest path.
    pub fn resolve_link(&self, target: &str, from: Option<&str>) -> Result<Option<NoteRef>, IndexError> {
        let Some(key) = crate::link_key(target) else {
            return Ok(None);
        };
        self.resolve_key(&self.searcher(), &key, from)
    }

    /// The note a [`crate::link_key`] names, seen from the note `from`.
    pub(crate) fn resolve_key(
        &self,
        searcher: &Searcher,
        key: &str,
        from: Option<&str>,
    ) -> Result<Option<NoteRef>, IndexError> {
        let Some((path, addr)) = self.resolve_key_path(searcher, key, from)? else {
            return Ok(None);
        };
        let outline = self.stored(searcher, addr)?.1;
        Ok(Some(NoteRef { path, outline }))
    }

    /// The path a [`crate::link_key`] names, seen from the note `from`: the note at that path,
    /// else the one in `from`'s folder, else the shortest path (Obsidian's order). Reads only
    /// the path fast field.
    pub(crate) fn resolve_key_path(
        &self,
        searcher: &Searcher,
        key: &str,
        from: Option<&str>,
    ) -> Result<Option<(String, DocAddress)>, IndexError> {
        let found = self.paths_with(searcher, &Term::from_field_text(self.fields.key, key))?;
        Ok(Named::new(self, &found, key).pick(from).cloned())
    }

    /// The note at exactly the vault path `key` (a [`crate::link_key`]: lower-cased, without
    /// extension), as a Markdown link's path names it.
    pub(crate) fn path_of_key(&self, searcher: &Searcher, key: &str) -> Result<Option<String>, IndexError> {
        let scope = self.scope();
        let found = self.paths_with(searcher, &Term::from_field_text(self.fields.key, key))?;
        Ok(found.into_iter().map(|(p, _)| p).filter(|p| scope.allows(p)).find(|p| {
            let without_ext = p.rsplit_once('.').map(|(x, _)| x).unwrap_or(p);
            without_ext.chars().flat_map(char::to_lowercase).eq(key.chars())
        }))
    }

    /// The words of `text` that best characterise it against the rest of the vault (tf·idf
    /// over the body field), keeping only words some other note contains. `note` is the
    /// note's own path, which does not count.
    pub fn key_terms(&self, text: &str, limit: usize, note: Option<&str>) -> Result<Vec<(String, f32)>, IndexError> {
        let searcher = self.searcher();
        let n = searcher.num_docs().max(1) as f32;
        let mut tf: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let tokens = tokenizer::tokens(text);
        let language = tokenizer::languages_of(tokens.iter().map(String::as_str));
        for t in tokens {
            if tokenizer::is_word_term(&t, language) {
                *tf.entry(t).or_default() += 1;
            }
        }
        let mut scored = Vec::with_capacity(tf.len());
        for (term, count) in tf {
            // doc_freq also counts deleted documents: it only ranks; the count below decides.
            let df = searcher.doc_freq(&Term::from_field_text(self.fields.body, &term))?;
            if df == 0 {
                continue;
            }
            let idf = (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
            scored.push((term, (count as f32).sqrt() * idf));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut out = Vec::with_capacity(limit);
        for (term, score) in scored {
            if out.len() == limit {
                break;
            }
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, &term),
                    IndexRecordOption::Basic,
                )),
            )];
            if let Some(rel) = note {
                clauses.push((
                    Occur::MustNot,
                    Box::new(TermQuery::new(self.path_term(rel), IndexRecordOption::Basic)),
                ));
            }
            if searcher.search(&BooleanQuery::new(clauses), &tantivy::collector::Count)? > 0 {
                out.push((term, score));
            }
        }
        Ok(out)
    }

    /// The wikilink target that names `rel` unambiguously: its file name when that resolves to
    /// it, else its vault path without the extension.
    pub fn link_target(&self, rel: &str) -> Result<String, IndexError> {
        self.link_target_from(rel, None)
    }

    /// [`VaultIndex::link_target`] for a link written in the note `from`: its file name when
    /// that leads there from `from` (two notes of one name: the nearer one), else its path.
    pub fn link_target_from(&self, rel: &str, from: Option<&str>) -> Result<String, IndexError> {
        let stem = scholia_vault::stem(rel);
        if self.resolve_link(stem, from)?.is_some_and(|n| n.path == rel) {
            return Ok(stem.to_string());
        }
        Ok(rel.rsplit_once('.').map(|(p, _)| p).unwrap_or(rel).to_string())
    }

    /// The share of notes whose text holds `word` (as one index term): how common a word of
    /// the vault's language it is. `None` when it is no single term.
    pub fn word_share(&self, word: &str) -> Result<Option<f32>, IndexError> {
        let terms = tokenizer::terms(word);
        let searcher = self.searcher();
        let n = searcher.num_docs().max(1) as f32;
        let df = match terms.as_slice() {
            [] => return Ok(None),
            [term] => self.live_doc_freq(&searcher, &Term::from_field_text(self.fields.body, term))?,
            // A word of a script without spaces is several terms: counted as a phrase of the
            // owners' text, never of research sections (obsidian-help km: Manage vaults, named in
            // the sections other notes gained, became a common word, and a note's line naming
            // it was no longer told).
            _ => {
                let parts: Vec<Term> = tokenizer::tokens(word)
                    .iter()
                    .map(|t| Term::from_field_text(self.fields.body, t))
                    .collect();
                match parts.len() {
                    0 => return Ok(None),
                    1 => self.live_doc_freq(&searcher, &parts[0])?,
                    _ => searcher.search(&tantivy::query::PhraseQuery::new(parts), &tantivy::collector::Count)? as u64,
                }
            }
        };
        Ok(Some(df as f32 / n))
    }

    /// The stored outline of one note.
    pub fn outline(&self, rel: &str) -> Result<Option<Outline>, IndexError> {
        let searcher = self.searcher();
        let q = TermQuery::new(self.path_term(rel), IndexRecordOption::Basic);
        let top = searcher.search(&q, &TopDocs::with_limit(1).order_by_score())?;
        match top.first() {
            Some((_, addr)) => Ok(Some(self.stored(&searcher, *addr)?.1)),
            None => Ok(None),
        }
    }
}

fn note_symbol(path: String, title: String, score: f32) -> Symbol {
    Symbol {
        name: title,
        kind: SymbolKind::Note,
        path,
        line: 0,
        container: None,
        score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::named::pick_ranked;

    /// How common a word is counts the owners' text only: words and unspaced words (a phrase
    /// of tokens) that research sections repeat do not become common.
    #[test]
    fn a_word_s_share_is_of_the_owners_text() {
        let section = format!(
            "\n{}",
            crate::fixture::researched("- [[Vaults]] — วอลต์ คลังข้อมูล, 管理仓库, vaultword")
        );
        let mut files = vec![
            (
                "a.md".to_string(),
                "จัดการคลังข้อมูล 管理仓库 vaultword here.\n".to_string(),
            ),
            ("b.md".to_string(), "Nothing of it.\n".to_string()),
        ];
        for i in 0..8 {
            files.push((format!("n{i}.md"), format!("Note {i}.\n{section}")));
        }
        let files: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let f = crate::fixture::vault(&files);
        for word in ["vaultword", "管理仓库", "คลังข้อมูล"] {
            assert_eq!(f.index.word_share(word).unwrap(), Some(0.1), "{word}");
        }
        assert_eq!(f.index.word_share("nowhere").unwrap(), Some(0.0));
        assert_eq!(f.index.word_share("  ").unwrap(), None);
    }

    /// An ambiguous name means the note nearest the linking note in the folder tree: its own
    /// folder, then the longest common folder prefix, then the shortest path.
    #[test]
    fn an_ambiguous_name_is_the_nearest_note() {
        let files: Vec<(&str, &str)> = [
            "da/Plugin/Canvas.md",
            "en/Plugins/Canvas.md",
            "en/Plugins/Deep/Canvas.md",
            "fr/Extensions/Canvas.md",
            "Canvas notes/x.md",
        ]
        .into_iter()
        .map(|p| (p, "# t"))
        .collect();
        let f = crate::fixture::vault(&files);
        let check = |from: Option<&str>, expected: &str| {
            let got = f.index.resolve_link("Canvas", from).unwrap().map(|n| n.path);
            assert_eq!(got.as_deref(), Some(expected), "from {from:?}");
        };
        check(
            Some("en/Linking notes and files/Embed files.md"),
            "en/Plugins/Canvas.md",
        );
        check(Some("en/Plugins/Deep/Other.md"), "en/Plugins/Deep/Canvas.md");
        check(Some("en/Plugins/Other.md"), "en/Plugins/Canvas.md");
        check(Some("fr/Autre.md"), "fr/Extensions/Canvas.md");
        check(Some("da/x.md"), "da/Plugin/Canvas.md");
        // Nothing nearer than the root: Obsidian's shortest path.
        check(Some("Top.md"), "da/Plugin/Canvas.md");
        check(None, "da/Plugin/Canvas.md");
        // A path names exactly, wherever the link is.
        let got = f.index.resolve_link("fr/Extensions/Canvas", Some("en/x.md")).unwrap();
        assert_eq!(got.map(|n| n.path).as_deref(), Some("fr/Extensions/Canvas.md"));
    }

    /// Picking from the owned ranking is picking from [`Named`], from every folder.
    #[test]
    fn ranked_picks_are_nameds() {
        let files: Vec<(&str, &str)> = [
            "a/Note.md",
            "b/Note.md",
            "b/c/Note.md",
            "Note.md",
            "note/x.md",
            "z/Note.markdown",
        ]
        .into_iter()
        .map(|p| (p, "# t"))
        .collect();
        let f = crate::fixture::vault(&files);
        let index = &f.index;
        let searcher = index.searcher();
        for key in ["note", "b/note", "b/c/note", "missing"] {
            let found = index
                .paths_with(&searcher, &Term::from_field_text(index.fields.key, key))
                .unwrap();
            let named = Named::new(index, &found, key);
            let ranked = Named::new(index, &found, key).into_ranked();
            for from in [
                None,
                Some("a/x.md"),
                Some("b/y.md"),
                Some("b/c/y.md"),
                Some("q.md"),
                Some("z/w.md"),
            ] {
                assert_eq!(
                    pick_ranked(&ranked, from),
                    named.pick(from).map(|(p, _)| p.as_str()),
                    "{key} from {from:?}"
                );
            }
        }
    }
}
