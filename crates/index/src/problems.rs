//! Links that lead nowhere: wikilinks whose note, heading or block does not exist, links that
//! two notes could answer, embeds of files the vault does not hold. One problem per link.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tantivy::Term;

use super::graph::link_key;
use super::refs::{Resolver, last_heading, same_heading};
use super::{IndexError, VaultIndex};
use scholia_vault::parse;

/// What is wrong with one link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// No note is named `target`.
    NoNote { target: String },
    /// The note exists; the heading does not.
    NoHeading { note: String, heading: String },
    /// The note exists; the `^block` does not.
    NoBlock { note: String, block: String },
    /// Several notes answer to `target`; the link goes to `chosen`.
    Ambiguous {
        target: String,
        notes: Vec<String>,
        chosen: String,
    },
    /// An embed of a file that is not in the vault.
    NoFile { target: String },
}

impl Problem {
    pub fn message(&self) -> String {
        match self {
            Problem::NoNote { target } => format!("no note named `{target}` in the vault"),
            Problem::NoHeading { note, heading } => format!("`{note}` has no heading `{heading}`"),
            Problem::NoBlock { note, block } => format!("`{note}` has no block `^{block}`"),
            Problem::Ambiguous { target, notes, chosen } => format!(
                "`{target}` names {} notes ({}); this link opens `{chosen}` — link by path to choose",
                notes.len(),
                notes.join(", ")
            ),
            Problem::NoFile { target } => format!("no file `{target}` in the vault"),
        }
    }

    /// A short stable code, for editors that group problems.
    pub fn code(&self) -> &'static str {
        match self {
            Problem::NoNote { .. } => "unresolved-link",
            Problem::NoHeading { .. } => "unresolved-heading",
            Problem::NoBlock { .. } => "unresolved-block",
            Problem::Ambiguous { .. } => "ambiguous-link",
            Problem::NoFile { .. } => "missing-embed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkProblem {
    /// Bytes of the whole link in the text given.
    pub range: Range<usize>,
    pub problem: Problem,
}

/// Files of the vault that are not notes (attachments), by lower-cased path and file name;
/// listed again when older than [`FILES_FRESH`].
pub(crate) struct Files {
    listed: Instant,
    names: Arc<HashSet<String>>,
}

const FILES_FRESH: Duration = Duration::from_secs(10);
/// Links checked per note: a generated note of a million links gets its first problems.
const MAX_LINKS: usize = 5_000;

impl VaultIndex {
    /// The problems of the links in `text`, the content of the note `rel`, in order.
    pub fn link_problems(&self, rel: &str, text: &str) -> Result<Vec<LinkProblem>, IndexError> {
        let searcher = self.searcher();
        let parsed = parse::parse(text, scholia_vault::stem(rel));
        let mut resolver = Resolver::new(self, &searcher);
        let mut out = Vec::new();
        for link in parsed.links.iter().take(MAX_LINKS) {
            let problem = match link_key(&link.target) {
                None => self.missing_part(rel, &parsed, text, None, link),
                Some(key) => match resolver.target(link, rel) {
                    None if is_attachment(&link.target) => (!self.has_file(&key)).then(|| Problem::NoFile {
                        target: link.target.trim().to_string(),
                    }),
                    None => Some(Problem::NoNote {
                        target: link.target.trim().to_string(),
                    }),
                    Some(found) => {
                        let named: Vec<String> = self
                            .paths_with(&searcher, &Term::from_field_text(self.fields.key, &key))?
                            .into_iter()
                            .map(|(p, _)| p)
                            .collect();
                        let by_path = found.rsplit_once('.').map(|(p, _)| p).unwrap_or(&found).to_lowercase() == key;
                        if named.len() > 1 && !by_path {
                            let mut notes = named;
                            notes.sort();
                            Some(Problem::Ambiguous {
                                target: link.target.trim().to_string(),
                                notes,
                                chosen: found,
                            })
                        } else {
                            self.missing_part(&found, &parsed, text, Some(rel), link)
                        }
                    }
                },
            };
            if let Some(problem) = problem {
                out.push(LinkProblem {
                    range: link.range.clone(),
                    problem,
                });
            }
        }
        Ok(out)
    }

    /// A heading or block of `note` that `link` names and `note` lacks. `from` is the linking
    /// note when it is another (else `own`, parsed from `own_text`, is the note). A block is
    /// one [`section::block`](scholia_vault::section::block) finds, as embeds read it: a
    /// marker ending a line after a space (`x^id` and `^idx` mark no `^id`).
    fn missing_part(
        &self,
        note: &str,
        own: &parse::ParsedNote,
        own_text: &str,
        from: Option<&str>,
        link: &parse::Link,
    ) -> Option<Problem> {
        if let Some(h) = &link.heading {
            let wanted = last_heading(h);
            let has = match from {
                None => own.headings.iter().any(|x| same_heading(&x.text, wanted)),
                Some(_) => self
                    .outline(note)
                    .ok()
                    .flatten()
                    .is_some_and(|o| o.headings.iter().any(|(_, _, t)| same_heading(t, wanted))),
            };
            if !has {
                return Some(Problem::NoHeading {
                    note: note.to_string(),
                    heading: wanted.to_string(),
                });
            }
        }
        if let Some(b) = &link.block {
            let has = match from {
                None => scholia_vault::section::block(own_text, b).is_some(),
                // A note the index cannot read now is not said to lack it.
                Some(_) => self
                    .note_text(note)
                    .is_none_or(|t| scholia_vault::section::block(&t, b).is_some()),
            };
            if !has {
                return Some(Problem::NoBlock {
                    note: note.to_string(),
                    block: b.clone(),
                });
            }
        }
        None
    }

    /// Whether the vault holds a file (not a note) of that path or file name.
    fn has_file(&self, key: &str) -> bool {
        let names = {
            let mut files = scholia_base::lock(&self.files);
            if files.as_ref().is_none_or(|f| f.listed.elapsed() > FILES_FRESH) {
                *files = Some(Files {
                    listed: Instant::now(),
                    names: Arc::new(list_files(self.vault().root())),
                });
            }
            files.as_ref().expect("listed").names.clone()
        };
        names.contains(key) || names.contains(key.rsplit('/').next().unwrap_or(key))
    }
}

/// Whether a link names a file other than a note (`image.png`, `paper.pdf`).
fn is_attachment(target: &str) -> bool {
    let t = target.trim();
    let Some((_, ext)) = t.rsplit_once('.') else {
        return false;
    };
    !ext.is_empty()
        && ext.len() <= 5
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && !scholia_vault::paths::NOTE_EXTENSIONS
            .iter()
            .any(|n| ext.eq_ignore_ascii_case(n))
        && ext.chars().any(|c| c.is_ascii_alphabetic())
}

/// Lower-cased vault paths and file names of every file of the vault: a link may embed a
/// note's file too.
fn list_files(root: &Path) -> HashSet<String> {
    let mut out = HashSet::new();
    for rel in scholia_vault::scan::files(root) {
        let lower = rel.to_lowercase();
        if let Some(name) = lower.rsplit('/').next() {
            out.insert(name.to_string());
        }
        out.insert(lower);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments() {
        for (t, yes) in [
            ("image.png", true),
            ("Folder/paper.PDF", true),
            ("Note", false),
            ("Note.md", false),
            ("v1.2", false),
            ("Meeting 2024.01", false),
            ("clip.webm", true),
        ] {
            assert_eq!(is_attachment(t), yes, "{t}");
        }
    }
}
