//! The vault's tags: which there are (completion, workspace symbols), which notes carry one
//! (nested tags included), and where each is written (references, rename). Tags compare
//! without case; `project` contains `project/alpha`.

use std::collections::HashMap;

use tantivy::Term;

use super::refs::Texts;
use super::{IndexError, VaultIndex};
use scholia_vault::tags::{self, TagSpan};

/// A tag of the vault and how many notes carry it (as written most often).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagCount {
    pub tag: String,
    pub notes: u64,
}

/// Where a tag is written in one note.
#[derive(Debug, Clone)]
pub struct TagUses {
    pub rel: String,
    /// The text the spans are in (an editor's buffer when it has the note open).
    pub text: String,
    pub spans: Vec<TagSpan>,
}

impl VaultIndex {
    /// The vault's tags whose name, or a part of it after `/`, starts with `prefix` (without
    /// `#`; any case), most used first, at most `limit`.
    pub fn tags(&self, prefix: &str, limit: usize) -> Result<Vec<TagCount>, IndexError> {
        let wanted = tags::key(prefix);
        let searcher = self.searcher();
        // key → (notes, written form → notes)
        let mut found: HashMap<String, (u64, HashMap<String, u64>)> = HashMap::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.tag_names)?;
            let mut stream = inverted.terms().stream().map_err(self.io())?;
            while stream.advance() {
                let Ok(name) = std::str::from_utf8(stream.key()) else {
                    continue;
                };
                let key = name.to_lowercase();
                let matches = wanted.is_empty()
                    || key.starts_with(&wanted)
                    || key.split('/').any(|part| part.starts_with(&wanted));
                if !matches {
                    continue;
                }
                let n = u64::from(stream.value().doc_freq);
                let entry = found.entry(key).or_default();
                entry.0 += n;
                *entry.1.entry(name.to_string()).or_default() += n;
            }
        }
        let mut out: Vec<TagCount> = found
            .into_values()
            .map(|(notes, forms)| {
                let tag = forms
                    .into_iter()
                    // The most used spelling; on a tie the one with fewer capitals, then the first.
                    .max_by(|a, b| {
                        let caps = |s: &str| s.chars().filter(|c| c.is_uppercase()).count();
                        (a.1, std::cmp::Reverse(caps(&a.0)), std::cmp::Reverse(&a.0)).cmp(&(
                            b.1,
                            std::cmp::Reverse(caps(&b.0)),
                            std::cmp::Reverse(&b.0),
                        ))
                    })
                    .map(|(f, _)| f)
                    .unwrap_or_default();
                TagCount { tag, notes }
            })
            .collect();
        // Names that start with the prefix first, then the most used.
        out.sort_by(|a, b| {
            let starts = |t: &TagCount| !t.tag.to_lowercase().starts_with(&wanted);
            (starts(a), std::cmp::Reverse(a.notes), a.tag.to_lowercase()).cmp(&(
                starts(b),
                std::cmp::Reverse(b.notes),
                b.tag.to_lowercase(),
            ))
        });
        out.truncate(limit);
        Ok(out)
    }

    /// The notes (in the scope) carrying `tag` or a tag nested under it, sorted.
    pub fn notes_tagged(&self, tag: &str) -> Result<Vec<String>, IndexError> {
        let term = Term::from_field_text(self.fields.tag_keys, &tags::key(tag));
        let scope = self.scope();
        let mut paths: Vec<String> = self
            .paths_with(&self.searcher(), &term)?
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| scope.allows(p))
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Where `tag` (and the tags under it) is written, note by note: the notes the index
    /// says carry it, and every note `texts` has open (the index lags a keystroke).
    pub fn tag_uses(&self, tag: &str, texts: &dyn Texts) -> Result<Vec<TagUses>, IndexError> {
        let mut notes = self.notes_tagged(tag)?;
        for open in texts.open() {
            if !notes.contains(&open) {
                notes.push(open);
            }
        }
        notes.sort();
        let mut out = Vec::new();
        for rel in notes {
            let Some(text) = texts.text(&rel) else { continue };
            let spans: Vec<TagSpan> = tags::spans(&text)
                .into_iter()
                .filter(|s| tags::within(&s.tag, tag))
                .collect();
            if !spans.is_empty() {
                out.push(TagUses { rel, text, spans });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::refs::IndexTexts;

    #[test]
    fn tags_are_listed_counted_and_found_nested() {
        let f = crate::fixture::vault(&[
            ("a.md", "---\ntags: [Project/Alpha, idea]\n---\n# A\n"),
            ("b.md", "# B\n\nAbout #project and #Idea.\n"),
            ("c.md", "# C\n\n#project/beta #recipe\n"),
            ("d.md", "# D\n\nno tags, `#code`\n"),
        ]);
        let listed = |prefix: &str| -> Vec<(String, u64)> {
            f.index
                .tags(prefix, 10)
                .unwrap()
                .into_iter()
                .map(|t| (t.tag, t.notes))
                .collect()
        };
        assert_eq!(
            listed("pro"),
            [
                ("project".into(), 1),
                ("Project/Alpha".into(), 1),
                ("project/beta".into(), 1)
            ]
        );
        assert_eq!(listed("ide"), [("idea".into(), 2)]);
        // A nested part matches too, after the tags that start with it.
        assert_eq!(listed("alp"), [("Project/Alpha".into(), 1)]);
        assert_eq!(f.index.notes_tagged("PROJECT").unwrap(), ["a.md", "b.md", "c.md"]);
        assert_eq!(f.index.notes_tagged("project/beta").unwrap(), ["c.md"]);
        let uses = f.index.tag_uses("project", &IndexTexts(&f.index)).unwrap();
        let spans: Vec<(String, String, bool)> = uses
            .iter()
            .flat_map(|u| {
                u.spans
                    .iter()
                    .map(|s| (u.rel.clone(), s.tag.clone(), s.in_front_matter))
            })
            .collect();
        assert_eq!(
            spans,
            [
                ("a.md".into(), "Project/Alpha".into(), true),
                ("b.md".into(), "project".into(), false),
                ("c.md".into(), "project/beta".into(), false),
            ]
        );
    }
}
