//! The vault's link graph, read from the index: every note's wikilink and embed targets are
//! indexed by their link key (`links`, stored; `research_links` for the `## Research`
//! section), so the notes linking to a note are a term lookup and what a note links is one
//! stored document — no note is read or parsed to answer either.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, DocSet, Searcher, TERMINATED, TantivyDocument, Term};

use super::{IndexError, VaultIndex};

/// The key a wikilink target is looked up by: trimmed, without a leading `/` or a note
/// extension, lower-cased. `None` for a same-note link (`[[#Heading]]`).
pub fn link_key(target: &str) -> Option<String> {
    let target = target.trim().trim_start_matches('/');
    if target.is_empty() {
        return None;
    }
    let lowered = target.to_lowercase();
    let key = ["md", "markdown", "txt"]
        .iter()
        .find_map(|ext| lowered.strip_suffix(&format!(".{ext}")))
        .unwrap_or(&lowered);
    Some(key.to_string())
}

/// What a link asks for, in the order it is tried: a note by name (as wikilinks name them:
/// by path, file name or alias), or the note at exactly a vault path (a Markdown link's path,
/// relative to the linking note or from the vault's root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Want {
    Named(String),
    Path(String),
}

impl Want {
    pub(crate) fn key(&self) -> &str {
        match self {
            Want::Named(k) | Want::Path(k) => k,
        }
    }
}

/// What `link`, in the note `from`, asks for (empty for a same-note link).
pub(crate) fn wants(link: &scholia_vault::parse::Link, from: &str) -> Vec<Want> {
    if !link.is_markdown() {
        return link_key(&link.target).map(Want::Named).into_iter().collect();
    }
    use scholia_vault::mdlink::Form;
    scholia_vault::mdlink::candidates(from, &link.target)
        .into_iter()
        .filter_map(|form| match form {
            Form::Name(p) => link_key(&p).map(Want::Named),
            Form::Relative(p) | Form::Absolute(p) => link_key(&p).map(Want::Path),
        })
        .collect()
}

/// The link keys a note's `links` are indexed under (each link's every candidate, so a
/// Markdown link is found whichever it resolves to), distinct, in order.
pub(crate) fn link_keys(links: &[scholia_vault::parse::Link], from: &str) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for want in links.iter().flat_map(|l| wants(l, from)) {
        if !keys.iter().any(|k| k == want.key()) {
            keys.push(want.key().to_string());
        }
    }
    keys
}

/// The notes each link key names, ranked as links resolve ([`crate::named::Named`]), read
/// once per key for many linking notes: a key of a vault copied sixteen times names sixteen
/// notes, one per folder, and was looked up again from each.
#[derive(Default)]
pub(crate) struct LinkTargets {
    by_key: HashMap<String, Vec<(bool, String)>>,
}

/// Which links count: the owner's, or also those of scholia's `## Research` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkScope {
    Own,
    All,
}

impl VaultIndex {
    /// The notes whose links resolve to `rel`, by path, sorted.
    pub fn linking_to(&self, rel: &str, scope: LinkScope) -> Result<Vec<String>, IndexError> {
        self.linking_to_with(&self.searcher(), rel, scope)
    }

    pub(crate) fn linking_to_with(
        &self,
        searcher: &Searcher,
        rel: &str,
        scope: LinkScope,
    ) -> Result<Vec<String>, IndexError> {
        let mut out: Vec<String> = Vec::new();
        let allowed = self.scope();
        for key in self.keys_of(searcher, rel)? {
            // A key only this note has needs no resolving; a shared one (two notes of one
            // name) is resolved from each linking note, as Obsidian would.
            let named = self.paths_with(searcher, &Term::from_field_text(self.fields.key, &key))?;
            let shared = named.len() > 1;
            let ranked = crate::named::Named::new(self, &named, &key);
            let mut fields = vec![self.fields.links];
            if scope == LinkScope::All {
                fields.push(self.fields.research_links);
            }
            for field in fields {
                for (source, _) in self.paths_with(searcher, &Term::from_field_text(field, &key))? {
                    if source == rel || out.contains(&source) || !allowed.allows(&source) {
                        continue;
                    }
                    let resolves_here = !shared || ranked.pick(Some(&source)).is_some_and(|(p, _)| p == rel);
                    if resolves_here {
                        out.push(source);
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Notes outside this server's folders whose links lead to `rel`, as the whole vault
    /// resolves them (empty for a server of the whole vault): what a move from here would
    /// break without being able to rewrite.
    pub fn linking_from_outside(&self, rel: &str) -> Result<Vec<String>, IndexError> {
        let allowed = self.scope();
        if allowed.is_whole_vault() {
            return Ok(Vec::new());
        }
        let whole = crate::Scope::default();
        let searcher = self.searcher();
        let mut out: Vec<String> = Vec::new();
        for key in self.keys_of(&searcher, rel)? {
            let named = self.paths_with(&searcher, &Term::from_field_text(self.fields.key, &key))?;
            let ranked = crate::named::Named::in_scope(&whole, &named, &key);
            for field in [self.fields.links, self.fields.research_links] {
                for (source, _) in self.paths_with(&searcher, &Term::from_field_text(field, &key))? {
                    // A note in the scope, or the same file under another path, is rewritten
                    // with the move.
                    if source == rel || out.contains(&source) || allowed.allows(&source) || allowed.holds_file(&source)
                    {
                        continue;
                    }
                    // A link that opens `rel`, or a twin of it (the same file through a
                    // symlinked folder: the name resolves to the nearest path).
                    let opens = |p: &str| p == rel || self.same_file(p, rel);
                    if ranked.pick(Some(&source)).is_some_and(|(p, _)| opens(p)) || named.len() <= 1 {
                        out.push(source);
                    }
                }
            }
        }
        // Notes too large to rewrite that name it: they may link it past what the index read.
        for (source, _) in self.too_large_naming(&self.keys_of(&searcher, rel)?)? {
            if !(out.contains(&source) || allowed.allows(&source) || allowed.holds_file(&source)) {
                out.push(source);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether two vault paths are one file (a folder linked into another).
    pub(crate) fn same_file(&self, a: &str, b: &str) -> bool {
        let root = self.vault().root();
        match (std::fs::canonicalize(root.join(a)), std::fs::canonicalize(root.join(b))) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }

    /// The notes `rel`'s own text links to (embeds too), resolved, each once, in the order
    /// it first links them; links to missing notes are left out.
    pub fn links_of(&self, rel: &str) -> Result<Vec<String>, IndexError> {
        self.links_of_with(&self.searcher(), rel, &mut LinkTargets::default())
    }

    /// [`VaultIndex::links_of`], resolving through `targets` (the notes of each key, read once).
    pub(crate) fn links_of_with(
        &self,
        searcher: &Searcher,
        rel: &str,
        targets: &mut LinkTargets,
    ) -> Result<Vec<String>, IndexError> {
        let Some(addr) = self.doc_of(searcher, rel)? else {
            return Ok(Vec::new());
        };
        let doc: TantivyDocument = searcher.doc(addr)?;
        let mut out: Vec<String> = Vec::new();
        for key in doc.get_all(self.fields.links).filter_map(|v| v.as_str()) {
            if !targets.by_key.contains_key(key) {
                let found = self.paths_with(searcher, &Term::from_field_text(self.fields.key, key))?;
                let ranked = crate::named::Named::new(self, &found, key).into_ranked();
                targets.by_key.insert(key.to_string(), ranked);
            }
            let target = crate::named::pick_ranked(&targets.by_key[key], Some(rel));
            if let Some(t) = target.filter(|t| *t != rel && !out.iter().any(|o| o == t)) {
                out.push(t.to_string());
            }
        }
        Ok(out)
    }

    /// The link keys naming `rel`: its file name, its path, its aliases (lower-cased).
    pub(crate) fn keys_of(&self, searcher: &Searcher, rel: &str) -> Result<Vec<String>, IndexError> {
        let without_ext = rel.rsplit_once('.').map(|(p, _)| p).unwrap_or(rel);
        let mut keys = vec![scholia_vault::stem(rel).to_lowercase(), without_ext.to_lowercase()];
        if let Some(addr) = self.doc_of(searcher, rel)? {
            for alias in self.stored(searcher, addr)?.1.aliases {
                keys.push(alias.trim().to_lowercase());
            }
        }
        keys.retain(|k| !k.is_empty());
        keys.dedup();
        let mut seen = Vec::with_capacity(keys.len());
        keys.retain(|k| {
            let new = !seen.contains(k);
            seen.push(k.clone());
            new
        });
        Ok(keys)
    }

    /// The live document of the note at `rel` (its path term alone: no path table is read).
    pub(crate) fn doc_of(&self, searcher: &Searcher, rel: &str) -> Result<Option<DocAddress>, IndexError> {
        let term = self.path_term(rel);
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(term.field())?;
            let postings = inverted
                .read_postings(&term, IndexRecordOption::Basic)
                .map_err(self.io())?;
            let Some(mut postings) = postings else {
                continue;
            };
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    return Ok(Some(DocAddress::new(ordinal as u32, doc)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    /// The notes directly in `folder` (vault-relative, `""` for the root), by the path terms
    /// that start with it.
    pub(crate) fn paths_in_folder(
        &self,
        searcher: &Searcher,
        folder: &str,
    ) -> Result<Vec<(String, DocAddress)>, IndexError> {
        let prefix = if folder.is_empty() {
            String::new()
        } else {
            format!("{folder}/")
        };
        let mut out = Vec::new();
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.path)?;
            let alive = segment.alive_bitset();
            let mut upper = prefix.clone().into_bytes();
            upper.push(0xff);
            let mut stream = inverted
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .lt(&upper)
                .into_stream()
                .map_err(self.io())?;
            while stream.advance() {
                let Ok(path) = std::str::from_utf8(stream.key()) else {
                    continue;
                };
                if path[prefix.len()..].contains('/') {
                    continue;
                }
                let postings = inverted
                    .read_postings_from_terminfo(stream.value(), IndexRecordOption::Basic)
                    .map_err(self.io())?;
                let mut postings = postings;
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        out.push((path.to_string(), DocAddress::new(ordinal as u32, doc)));
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(out)
    }

    /// The live notes holding `term`, with their paths.
    pub(crate) fn paths_with(&self, searcher: &Searcher, term: &Term) -> Result<Vec<(String, DocAddress)>, IndexError> {
        let io = self.io();
        let mut out = Vec::new();
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic).map_err(io)? else {
                continue;
            };
            let paths = self.segment_paths(segment)?;
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc))
                    && let Some(p) = paths.get(doc)
                {
                    out.push((p.to_string(), DocAddress::new(ordinal as u32, doc)));
                }
                doc = postings.advance();
            }
        }
        Ok(out)
    }

    /// The path of the document at `addr` (from its segment's path table, no stored read).
    pub(crate) fn path_at(&self, searcher: &Searcher, addr: DocAddress) -> Result<String, IndexError> {
        let segment = searcher.segment_reader(addr.segment_ord);
        Ok(self
            .segment_paths(segment)?
            .get(addr.doc_id)
            .unwrap_or_default()
            .to_string())
    }

    /// The paths of a segment's documents, by document id. Segments never change, so each is
    /// read once (one pass over its path column's dictionary: looking paths up one at a time
    /// decompresses a dictionary block per look-up).
    pub(crate) fn segment_paths(&self, segment: &tantivy::SegmentReader) -> Result<Arc<PathTable>, IndexError> {
        let id = segment.segment_id();
        if let Some(p) = scholia_base::lock(&self.paths).get(&id) {
            return Ok(p.clone());
        }
        let io = self.io();
        let mut table = PathTable {
            text: String::new(),
            starts: vec![0],
            by_doc: vec![NO_PATH; segment.max_doc() as usize],
        };
        if let Some(column) = segment.fast_fields().str("path")? {
            let mut stream = column.dictionary().stream().map_err(io)?;
            // Checked as UTF-8 once here (a sort compares paths thousands of times); a key that
            // is not (tantivy writes `str` keys) stays empty, which reads as no path.
            while stream.advance() {
                table
                    .text
                    .push_str(std::str::from_utf8(stream.key()).unwrap_or_default());
                table.starts.push(table.text.len() as u32);
            }
            for (doc, slot) in table.by_doc.iter_mut().enumerate() {
                if let Some(ord) = column.term_ords(doc as u32).next()
                    && (ord as usize) + 1 < table.starts.len()
                {
                    *slot = ord as u32;
                }
            }
        }
        let table = Arc::new(table);
        let mut cache = scholia_base::lock(&self.paths);
        // Forget segments merged away (their ids never come back).
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(id, table.clone());
        Ok(table)
    }
}

const NO_PATH: u32 = u32::MAX;

/// A segment's paths by document: the sorted paths back to back and, per document, which
/// one (two allocations for a segment, not one per note).
pub(crate) struct PathTable {
    text: String,
    /// Where each path starts in `text`, in dictionary order, and where the last ends.
    starts: Vec<u32>,
    by_doc: Vec<u32>,
}

impl PathTable {
    /// The path of `doc`; `None` for a document without one.
    pub(crate) fn get(&self, doc: tantivy::DocId) -> Option<&str> {
        let ord = *self.by_doc.get(doc as usize)? as usize;
        let (from, to) = (*self.starts.get(ord)?, *self.starts.get(ord + 1)?);
        self.text.get(from as usize..to as usize).filter(|p| !p.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_keys() {
        let check =
            |target: &str, expected: Option<&str>| assert_eq!(link_key(target).as_deref(), expected, "{target}");
        check("Note", Some("note"));
        check(" Folder/Note.md ", Some("folder/note"));
        check("/Folder/Note.MD", Some("folder/note"));
        check("Über.markdown", Some("über"));
        check("notes.txt", Some("notes"));
        check("v1.2 release", Some("v1.2 release"));
        check("", None);
        check("  ", None);
    }

    /// A note longer than the index reads: the links past the cut count, each as its part of
    /// the note says. Those of its `## Research` section are research's, never the owner's
    /// (what research reads and ranks by).
    #[test]
    fn a_long_notes_research_links_past_the_cut_stay_researchs() {
        let filler = "Plain words of a long note.\n".repeat(crate::MAX_INDEX_BYTES as usize / 27 + 10);
        let long = format!(
            "# Long\n\nSee [[Alpha]].\n\n{filler}\nAnd [[Beta]].\n\n{}",
            crate::fixture::researched("- [[Gamma]]")
        );
        let f = crate::fixture::vault(&[
            ("Long.md", &long),
            ("Alpha.md", "a"),
            ("Beta.md", "b"),
            ("Gamma.md", "c"),
        ]);
        let own = |rel: &str| f.index.linking_to(rel, LinkScope::Own).unwrap();
        let all = |rel: &str| f.index.linking_to(rel, LinkScope::All).unwrap();
        assert_eq!(own("Alpha.md"), ["Long.md"]);
        assert_eq!(own("Beta.md"), ["Long.md"], "the owner's link past the cut");
        assert!(own("Gamma.md").is_empty(), "research's link is no link of the owner's");
        assert_eq!(all("Gamma.md"), ["Long.md"], "research's link past the cut");
        assert_eq!(f.index.links_of("Long.md").unwrap(), ["Alpha.md", "Beta.md"]);
        // Re-read on its own (a save, a watcher's event), not in a sync: the same links.
        std::fs::write(f.root().join("Long.md"), long.replace("See [[Alpha]]", "See Alpha")).unwrap();
        f.index.refresh(&f.root().join("Long.md")).unwrap();
        f.index.flush().unwrap();
        assert!(own("Alpha.md").is_empty());
        assert_eq!(own("Beta.md"), ["Long.md"], "the owner's link past the cut, re-read");
        assert!(own("Gamma.md").is_empty());
        assert_eq!(all("Gamma.md"), ["Long.md"]);
        // What a rename of Beta rewrites: the link past the cut.
        let plan = f
            .index
            .plan_rename("Beta.md", "Bravo.md", "to", &crate::IndexTexts(&f.index))
            .unwrap();
        let long = plan
            .edits
            .iter()
            .find(|e| e.rel == "Long.md")
            .expect("Long.md is rewritten");
        assert!(long.applied().ends_with(&format!(
            "And [[Bravo]].\n\n{}",
            crate::fixture::researched("- [[Gamma]]")
        )));
    }
}
