//! Moving notes and folders: for every note that links to a moved note (and every moved note
//! itself), the edits that keep each link leading where it led — wikilinks by file name or by
//! path, and Markdown links in the style they were written (relative stays relative to the
//! linking note, wherever that now is). The index says which notes to read; each is read whole
//! and parsed, so the edits are exact against the text they come with.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::graph::link_key;
use super::refs::{Anchor, NoteEdits, RenameError, Resolver, Texts, Unread, raw_target};
use super::{IndexError, VaultIndex};
use scholia_vault::mdlink;
use scholia_vault::parse::{self, Link};

/// A note renamed or moved, and every link to it rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenamePlan {
    pub from: String,
    pub to: String,
    /// Edits of the notes linking to it (its own self-links included, under `from`).
    pub edits: Vec<NoteEdits>,
    /// Notes that may link to it but could not be read (`(path, why)`): a change made without
    /// them would leave their links behind.
    pub unread: Unread,
}

impl RenamePlan {
    pub fn links_rewritten(&self) -> usize {
        self.edits.iter().map(|e| e.edits.len()).sum()
    }
}

/// Several notes moved at once (a folder), and every link to any of them rewritten.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MovePlan {
    /// Edits of the notes that link to a moved note, or are moved, where they are now.
    pub edits: Vec<NoteEdits>,
    pub unread: Unread,
}

impl VaultIndex {
    /// The edits that rename the note `from` to the vault path `to`: every link naming it by
    /// file name or path rewritten (aliases, headings, blocks and embeds kept; links by an
    /// alias still resolve and are left alone). Refused when `to` exists or its name is
    /// another note's.
    pub fn plan_rename(
        &self,
        from: &str,
        to: &str,
        field: &'static str,
        texts: &dyn Texts,
    ) -> Result<RenamePlan, RenameError> {
        let searcher = self.searcher();
        if self.doc_of(&searcher, from)?.is_none() {
            return Err(RenameError::NoSuchNote(from.to_string()));
        }
        if !scholia_vault::paths::has_note_extension(std::path::Path::new(to)) {
            return Err(RenameError::BadName {
                field,
                name: to.to_string(),
                chars: "an extension that is not a note's (.md, .markdown, .txt)".into(),
            });
        }
        let same_file = to.eq_ignore_ascii_case(from)
            || scholia_vault::naming::same_file(&self.vault().abs(from), &self.vault().abs(to));
        let exists = std::fs::symlink_metadata(self.vault().abs(to)).is_ok() || self.doc_of(&searcher, to)?.is_some();
        if exists && !same_file {
            return Err(RenameError::Exists {
                field,
                to: to.to_string(),
            });
        }
        let new_stem = scholia_vault::stem(to);
        if let Some(key) = link_key(new_stem)
            && let Some((by, _)) = self
                .paths_with(&searcher, &tantivy::Term::from_field_text(self.fields.key, &key))?
                .into_iter()
                .find(|(p, _)| p != from)
        {
            return Err(RenameError::NameTaken {
                field,
                name: new_stem.to_string(),
                by,
            });
        }
        let plan = self.plan_moves(&[(from.to_string(), to.to_string())], texts)?;
        Ok(RenamePlan {
            from: from.to_string(),
            to: to.to_string(),
            edits: plan.edits,
            unread: plan.unread,
        })
    }

    /// The edits that keep every link right when each `(from, to)` note moves: in the notes
    /// linking to them and in the moved notes themselves (their relative Markdown links).
    pub fn plan_moves(&self, moves: &[(String, String)], texts: &dyn Texts) -> Result<MovePlan, IndexError> {
        let moved: HashMap<&str, &str> = moves.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let mut unread = Vec::new();
        let mut affected: BTreeMap<String, Option<String>> = BTreeMap::new();
        for (from, _) in moves {
            let (found, not_read) = self.references_checked(&Anchor::Note(from.clone()), texts)?;
            unread.extend(not_read);
            for n in found {
                affected.insert(n.rel, Some(n.text));
            }
            affected.entry(from.clone()).or_insert(None);
        }
        let searcher = self.searcher();
        let mut resolver = Resolver::new(self, &searcher);
        let mut edits = Vec::new();
        for (rel, text) in affected {
            let text = match text.map_or_else(|| texts.read(&rel), Ok) {
                Ok(t) => t,
                Err(why) => {
                    unread.push((rel, why));
                    continue;
                }
            };
            let at = moved.get(rel.as_str()).copied().unwrap_or(&rel);
            let changes: Vec<(Range<usize>, String)> = parse::links(&text)
                .iter()
                .filter_map(|l| rewrite(&mut resolver, &text, l, &rel, at, &moved))
                .collect();
            if !changes.is_empty() {
                edits.push(NoteEdits {
                    rel,
                    text,
                    edits: changes,
                });
            }
        }
        unread.sort();
        unread.dedup();
        Ok(MovePlan { edits, unread })
    }
}

/// The edit that keeps `link` (in the note `rel`, which will be at `at`) leading to its note
/// once the notes in `moved` are where it says.
fn rewrite(
    resolver: &mut Resolver<'_>,
    text: &str,
    link: &Link,
    rel: &str,
    at: &str,
    moved: &HashMap<&str, &str>,
) -> Option<(Range<usize>, String)> {
    if link.target.trim().is_empty() {
        return None;
    }
    let Some(dest) = &link.markdown else {
        let target = resolver.target(link, rel)?;
        let to = *moved.get(target.as_str())?;
        let raw = raw_target(text, link)?;
        let written = &text[raw.clone()];
        // A link by alias names the note still; one by its file name or path is rewritten.
        let names = [link_key(scholia_vault::stem(&target)), link_key(&target)];
        if !link_key(written).is_some_and(|k| names.contains(&Some(k))) {
            return None;
        }
        let new = new_target(written, to);
        return (new != written).then_some((raw, new));
    };
    let (form, target) = resolver.markdown_form(link, rel)?;
    let to = moved.get(target.as_str()).copied().unwrap_or(&target);
    let relative = matches!(form, mdlink::Form::Relative(_));
    if to == target && !(relative && at != rel) {
        return None;
    }
    let written = &text[dest.range.clone()];
    let (path, fragment) = mdlink::split(written);
    let decoded = mdlink::decode(path);
    let new_path = mdlink::new_path(&form, at, to, &decoded);
    if new_path == decoded {
        return None;
    }
    let mut new = mdlink::render(&new_path, dest.angle);
    if let Some(f) = fragment {
        new.push('#');
        new.push_str(f);
    }
    Some((dest.range.clone(), new))
}

/// A link target naming `to` as `written` named the old note: a path stays a path (with its
/// leading `/` and extension if it had them), a file name stays a file name.
fn new_target(written: &str, to: &str) -> String {
    let lead = if written.starts_with('/') { "/" } else { "" };
    let has_ext = scholia_vault::paths::has_note_extension(std::path::Path::new(written));
    let path = if written.trim_start_matches('/').contains('/') {
        to.to_string()
    } else {
        to.rsplit('/').next().unwrap_or(to).to_string()
    };
    let path = if has_ext {
        path
    } else {
        path.rsplit_once('.').map(|(p, _)| p.to_string()).unwrap_or(path)
    };
    format!("{lead}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_targets_keep_the_form_written() {
        let check =
            |written: &str, to: &str, expected: &str| assert_eq!(new_target(written, to), expected, "{written}");
        check("Old", "Notes/New.md", "New");
        check("Old.md", "Notes/New.md", "New.md");
        check("Notes/Old", "Archive/New.md", "Archive/New");
        check("/Notes/Old.md", "Archive/New.md", "/Archive/New.md");
    }
}
