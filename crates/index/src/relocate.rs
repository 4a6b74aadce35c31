//! Moving a note or a folder for agents and scripts (MCP `move_note`, `scholia move`): the
//! destination checked against the directory itself (names that break links, case and
//! normalization twins, ignored folders, the scope on resolved paths), every note that links
//! there read whole and planned ([`crate::moves`]), then one all-or-nothing change
//! ([`scholia_vault::change`]). The reply names exactly what changed, and every note whose
//! links could not be rewritten, with why.

use std::path::Path;

use serde::Serialize;

use super::graph::wants;
use super::refs::{IndexTexts, NoteEdits};
use super::{IndexError, VaultIndex, VaultSession};
use scholia_base::{Error, ErrorKind, Summary, blocking};
use scholia_vault::change::{Change, Faults, Move, NoFaults, Rewrite};

/// A note that links to a moved note and was left as it was.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NotRewritten {
    pub path: String,
    /// Why: `not UTF-8`, `binary`, …
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Moved {
    pub from: String,
    pub to: String,
    /// Notes moved: 1 for a note, every note of a folder.
    pub notes_moved: usize,
    pub links_rewritten: usize,
    /// Notes whose links were rewritten (where they are now).
    pub notes: Vec<String>,
    /// Notes that link to a moved note but could not be rewritten (not text scholia can
    /// edit): their links now lead nowhere. Fix them by hand.
    pub not_rewritten: Vec<NotRewritten>,
}

impl Summary for Moved {
    fn summary(&self) -> String {
        let what = match self.notes_moved {
            1 => format!("moved {} to {}", self.from, self.to),
            n => format!("moved the folder {} ({n} notes) to {}", self.from, self.to),
        };
        let mut s = format!(
            "{what}; {} links in {} notes rewritten",
            self.links_rewritten,
            self.notes.len()
        );
        if !self.not_rewritten.is_empty() {
            let list: Vec<String> = self
                .not_rewritten
                .iter()
                .map(|n| format!("{} ({})", n.path, n.reason))
                .collect();
            s.push_str(&format!(
                "; NOT rewritten, their links now lead nowhere: {}",
                list.join(", ")
            ));
        }
        s
    }
}

fn conflict(message: String) -> Error {
    Error::new("CONFLICT", ErrorKind::Conflict, message)
}

impl VaultIndex {
    /// Whether a note at `rel` would be indexed (not in `.obsidian`, `.git`, `node_modules`,
    /// a hidden folder, or what `.gitignore` / `.ignore` exclude).
    pub fn is_indexable(&self, rel: &str) -> bool {
        self.filter.is_note_path(&self.vault().abs(rel))
    }

    /// Refuses `rel` as a new place for a note (`except`: the file being moved there): names
    /// that break links, twins in its folder by case or normalization, ignored folders, places
    /// outside the scope or the vault once links are followed.
    pub fn check_destination(&self, field: &'static str, rel: &str, except: Option<&Path>) -> Result<(), Error> {
        scholia_vault::naming::check_path(field, rel)?;
        let scope = self.scope();
        if !scope.allows(rel) {
            return Err(scope.refuse(field, rel));
        }
        let root = self.vault().root();
        let real = scholia_vault::confine::real_path(&root.join(rel));
        if !real.starts_with(root) {
            return Err(Error::invalid(format!(
                "{field}: `{rel}` leads out of the vault through a link; give a folder of the vault"
            )));
        }
        // A file already there (by another case or form of the name) is the first thing to say.
        scholia_vault::naming::check_free(field, root, rel, except)?;
        if !self.is_indexable(rel) {
            return Err(Error::invalid(format!(
                "{field}: `{rel}` is in a folder scholia does not index (hidden folders, .obsidian, .git, .trash, node_modules and what .gitignore or .ignore exclude): the note would drop out of search and its links would lead nowhere; choose another folder"
            )));
        }
        scholia_vault::naming::check_free(field, root, rel, except)?;
        Ok(())
    }

    /// Brings notes changed on disk since the index saw them into it (a move must see every
    /// note that links), and returns the notes the index cannot hold (not text it reads) that
    /// link to one of `moved`: `(path, why)`.
    fn unindexed_linkers(&self, moved: &[(String, String)]) -> Result<Vec<(String, String)>, IndexError> {
        let scan = scholia_vault::scan::scan(self.vault().root());
        let stamps = self.stamps()?;
        let stale: Vec<&str> = scan
            .notes
            .iter()
            .filter(|n| stamps.get(&n.rel) != Some(&n.stamp))
            .map(|n| n.rel.as_str())
            .collect();
        if !stale.is_empty() && self.refresh_if_changed(&stale)? {
            self.flush()?;
        }
        let stamps = self.stamps()?;
        let keys: Vec<String> = moved
            .iter()
            .flat_map(|(from, _)| {
                let without = from.rsplit_once('.').map_or(from.as_str(), |(p, _)| p);
                [scholia_vault::stem(from).to_lowercase(), without.to_lowercase()]
            })
            .collect();
        let scope = self.scope();
        let mut out = Vec::new();
        for n in scan
            .notes
            .iter()
            .filter(|n| !stamps.contains_key(&n.rel) && scope.allows(&n.rel))
        {
            let abs = self.vault().abs(&n.rel);
            let Ok(bytes) = std::fs::read(&abs) else { continue };
            let reason = if bytes[..bytes.len().min(8192)].contains(&0) {
                "binary"
            } else if std::str::from_utf8(&bytes).is_err() {
                "not UTF-8"
            } else {
                "not readable as a note"
            };
            let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
            let links = scholia_vault::parse::links(&text);
            let names_one = links
                .iter()
                .any(|l| wants(l, &n.rel).iter().any(|w| keys.iter().any(|k| k == w.key())));
            if names_one {
                out.push((n.rel.clone(), reason.to_string()));
            }
        }
        Ok(out)
    }
}

impl VaultSession {
    /// Moves or renames a note, or a folder of notes, and rewrites every link to what moved —
    /// all or nothing. Refused when the destination is taken (case and normalization too),
    /// names a place links cannot name or the index ignores, or leaves the scope.
    pub async fn move_note(&self, from: &str, to: &str) -> Result<Moved, Error> {
        let index = self.index().clone();
        let root = index.vault().root().to_path_buf();
        let trimmed = from.trim().trim_matches('/').to_string();
        let is_folder = !trimmed.is_empty()
            && !trimmed.split('/').any(|c| c == "..")
            && std::fs::symlink_metadata(root.join(&trimmed)).is_ok_and(|m| m.is_dir());
        let note = match is_folder {
            true => None,
            false => Some(self.resolve_async(from).await?),
        };
        let to = to.to_string();
        let outcome = blocking(move || match note {
            Some(note) => move_one(&index, &note, &to, &NoFaults),
            None => move_folder(&index, &trimmed, &to, &NoFaults),
        })
        .await;
        outcome.map_err(|e| relative_paths(e, &root))
    }
}

impl VaultIndex {
    /// A note renamed for an editor that cannot rename files itself (eglot: no `rename` in
    /// its `resourceOperations`): the file moved and every closed linking note rewritten on
    /// disk, all or nothing; the edits of the notes in `open` (the editor's buffers, whose
    /// text `texts` gives) are returned for the editor to apply, not written under it. The
    /// renamed note itself must be saved (its buffer the same as the file). `adjust` adds to
    /// the plan (the title heading renamed with the file).
    pub fn move_for_editor(
        &self,
        from: &str,
        to: &str,
        texts: &dyn super::refs::Texts,
        open: &std::collections::HashSet<String>,
        adjust: &dyn Fn(&mut super::RenamePlan),
    ) -> Result<(Moved, Vec<NoteEdits>), Error> {
        let root = self.vault().root().to_path_buf();
        let abs = root.join(from);
        self.check_destination("newName", to, Some(&abs))?;
        if open.contains(from) {
            let on_disk = self
                .note_text_whole(from)
                .map_err(|why| conflict(format!("`{from}`: {why}")))?;
            if texts.text(from).is_some_and(|buffer| buffer != on_disk) {
                return Err(conflict(format!(
                    "`{from}` has unsaved changes: save it first (this editor cannot rename files, so scholia moves it on disk)"
                )));
            }
        }
        let moves = vec![(from.to_string(), to.to_string())];
        let unindexed = self.unindexed_linkers(&moves)?;
        let mut plan = self.plan_rename(from, to, "newName", texts)?;
        refuse_unread(&plan.unread, from)?;
        refuse_outside_links(self, &[from], from)?;
        adjust(&mut plan);
        let (buffers, disk): (Vec<NoteEdits>, Vec<NoteEdits>) = plan
            .edits
            .into_iter()
            .partition(|e| e.rel != from && open.contains(&e.rel));
        let change = change_of(
            &root,
            &disk,
            vec![Move {
                shown_from: from.to_string(),
                shown_to: to.to_string(),
                from: abs,
                to: root.join(to),
            }],
        );
        change.apply_with(&root, &NoFaults)?;
        let mut all = disk;
        all.extend(buffers.iter().cloned());
        let moved = finish(self, from.to_string(), to.to_string(), &moves, &all, unindexed);
        Ok((moved, buffers))
    }
}

/// Messages name vault paths, never where the vault is on disk.
fn relative_paths(mut e: Error, root: &Path) -> Error {
    let prefix = format!("{}/", root.display());
    e.message = e.message.replace(&prefix, "");
    e
}

fn move_one(index: &VaultIndex, note: &scholia_vault::NotePath, to: &str, faults: &dyn Faults) -> Result<Moved, Error> {
    let to_rel = super::edits::new_note_path(to, "to")?;
    index.check_destination("to", &to_rel, Some(&note.abs))?;
    let moves = vec![(note.rel.clone(), to_rel.clone())];
    let unindexed = index.unindexed_linkers(&moves)?;
    let plan = index.plan_rename(&note.rel, &to_rel, "to", &IndexTexts(index))?;
    refuse_unread(&plan.unread, &note.rel)?;
    refuse_outside_links(index, &[note.rel.as_str()], &note.rel)?;
    let root = index.vault().root();
    let change = change_of(
        root,
        &plan.edits,
        vec![Move {
            shown_from: note.rel.clone(),
            shown_to: to_rel.clone(),
            from: note.abs.clone(),
            to: root.join(&to_rel),
        }],
    );
    change.apply_with(root, faults)?;
    Ok(finish(index, note.rel.clone(), to_rel, &moves, &plan.edits, unindexed))
}

fn move_folder(index: &VaultIndex, from: &str, to: &str, faults: &dyn Faults) -> Result<Moved, Error> {
    let root = index.vault().root();
    let to = to.trim().trim_matches('/').to_string();
    let bad = to.is_empty()
        || Path::new(&to).is_absolute()
        || to
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == ".." || c.starts_with('.'));
    if bad {
        return Err(Error::invalid(format!(
            "to: `{to}` is not valid; valid: a folder path relative to the vault, e.g. `Archive/Journal`"
        )));
    }
    if std::fs::symlink_metadata(root.join(from)).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::invalid(format!(
            "path: `{from}` is a link to a folder; move the folder it names"
        )));
    }
    if to == from || to.starts_with(&format!("{from}/")) {
        return Err(Error::invalid(format!(
            "to: `{to}` is inside `{from}`; a folder cannot move into itself"
        )));
    }
    let scope = index.scope();
    if !scope.allows(&format!("{from}/x.md")) {
        return Err(scope.refuse("path", from));
    }
    // The folder's place and a note's place in it are checked as a note's would be.
    index.check_destination("to", &format!("{to}/x.md"), None)?;
    scholia_vault::naming::check_free("to", root, &to, Some(&root.join(from)))?;
    let prefix = format!("{from}/");
    let mut notes: Vec<String> = index.stamps()?.into_keys().filter(|r| r.starts_with(&prefix)).collect();
    notes.sort();
    let moves: Vec<(String, String)> = notes
        .iter()
        .map(|r| (r.clone(), format!("{to}/{}", &r[prefix.len()..])))
        .collect();
    let unindexed = index.unindexed_linkers(&moves)?;
    let plan = index.plan_moves(&moves, &IndexTexts(index))?;
    refuse_unread(&plan.unread, from)?;
    let moved: Vec<&str> = notes.iter().map(String::as_str).collect();
    refuse_outside_links(index, &moved, from)?;
    let change = change_of(
        root,
        &plan.edits,
        vec![Move {
            shown_from: from.to_string(),
            shown_to: to.clone(),
            from: root.join(from),
            to: root.join(&to),
        }],
    );
    change.apply_with(root, faults)?;
    Ok(finish(index, from.to_string(), to, &moves, &plan.edits, unindexed))
}

/// A move is refused when a note that links to what moves cannot be read whole.
fn refuse_unread(unread: &[(String, String)], what: &str) -> Result<(), Error> {
    if unread.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = unread.iter().map(|(p, why)| format!("`{p}` ({why})")).collect();
    Err(conflict(format!(
        "`{what}` was not moved: its links could not be rewritten in {}; nothing was changed",
        list.join(", ")
    )))
}

/// A server confined to folders may not break links it cannot rewrite: a move is refused when
/// notes outside its folders link to what moves (they are counted, not named).
fn refuse_outside_links(index: &VaultIndex, moved: &[&str], what: &str) -> Result<(), Error> {
    let scope = index.scope();
    if scope.is_whole_vault() {
        return Ok(());
    }
    let mut outside: Vec<String> = Vec::new();
    for rel in moved {
        for source in index.linking_from_outside(rel)? {
            if !outside.contains(&source) {
                outside.push(source);
            }
        }
    }
    match outside.len() {
        0 => Ok(()),
        n => Err(Error::new(
            "OUT_OF_SCOPE",
            ErrorKind::InvalidInput,
            format!(
                "`{what}` was not moved: {n} note{} outside the folders this server may use ({}) link{} to it, and their links cannot be rewritten from here; move it with a server that may write the whole vault",
                if n == 1 { "" } else { "s" },
                scope.describe(),
                if n == 1 { "s" } else { "" }
            ),
        )),
    }
}

fn change_of(root: &Path, edits: &[NoteEdits], moves: Vec<Move>) -> Change {
    Change {
        rewrites: edits
            .iter()
            .map(|e| Rewrite {
                shown: e.rel.clone(),
                path: root.join(&e.rel),
                old: e.text.clone(),
                new: e.applied(),
            })
            .collect(),
        moves,
    }
}

/// The index told of every path that changed, and the reply.
fn finish(
    index: &VaultIndex,
    from: String,
    to: String,
    moves: &[(String, String)],
    edits: &[NoteEdits],
    unindexed: Vec<(String, String)>,
) -> Moved {
    let root = index.vault().root();
    let now = |rel: &str| {
        moves
            .iter()
            .find(|(f, _)| f == rel)
            .map_or_else(|| rel.to_string(), |(_, t)| t.clone())
    };
    let mut touched: Vec<std::path::PathBuf> = Vec::new();
    for (f, t) in moves {
        touched.push(root.join(f));
        touched.push(root.join(t));
    }
    let notes: Vec<String> = edits.iter().map(|e| now(&e.rel)).collect();
    touched.extend(notes.iter().map(|n| root.join(n)));
    let paths: Vec<&Path> = touched.iter().map(|p| p.as_path()).collect();
    index.touched(&paths);
    Moved {
        from,
        to,
        notes_moved: moves.len(),
        links_rewritten: edits.iter().map(|e| e.edits.len()).sum(),
        notes,
        not_rewritten: unindexed
            .into_iter()
            .map(|(path, reason)| NotRewritten { path, reason })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
