//! What a rename edits: the editor's open notes over the index's files (`Snapshot`), the
//! title that follows the file name, refusals, and the `WorkspaceEdit` of a plan — shared by
//! the rename the editor applies (`links.rs`) and the one scholia makes on disk for an editor
//! that cannot rename files (`rename_here.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use scholia_index::{NoteEdits, Texts, VaultIndex};
use scholia_vault::parse;

/// The editor's open notes (text and version) over the index's files: what link edits are
/// computed against.
pub(crate) struct Snapshot {
    index: Arc<VaultIndex>,
    open: HashMap<String, (String, i32)>,
}

impl Snapshot {
    /// The notes open in the editor.
    pub fn open_notes(&self) -> std::collections::HashSet<String> {
        self.open.keys().cloned().collect()
    }

    /// The version of each open note, for versioned edits.
    pub fn versions(&self) -> HashMap<String, i32> {
        self.open.iter().map(|(r, (_, v))| (r.clone(), *v)).collect()
    }
}

impl Texts for Snapshot {
    fn read(&self, rel: &str) -> Result<String, String> {
        match self.open.get(rel) {
            Some((t, _)) => Ok(t.clone()),
            None => self.index.note_text_whole(rel),
        }
    }
    fn open(&self) -> Vec<String> {
        self.open.keys().cloned().collect()
    }
}

impl State {
    pub(crate) fn snapshot(&self, index: Arc<VaultIndex>) -> Snapshot {
        let open = self
            .docs()
            .iter()
            .filter_map(|(uri, d)| {
                // The canonical path, else (still being resolved after didOpen) the URI's.
                let path = d.path.clone().or_else(|| uri.to_file_path().map(|p| p.into_owned()))?;
                let note = self.note_at(path)?;
                Some((note.rel, (d.text.clone(), d.version)))
            })
            .collect();
        Snapshot { index, open }
    }
}

/// A rename or move is refused when a note that links to what moves cannot be read whole: its
/// links would be left behind.
pub(super) fn refuse_unread(unread: &[(String, String)], what: &str) -> Result<(), scholia_base::Error> {
    if unread.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = unread.iter().map(|(p, why)| format!("`{p}` ({why})")).collect();
    Err(scholia_base::Error::new(
        "CONFLICT",
        scholia_base::ErrorKind::Conflict,
        format!(
            "`{what}` cannot be renamed: the links to it could not be rewritten in {}",
            list.join(", ")
        ),
    ))
}

/// A note whose first heading is its file name keeps them equal: the heading is renamed too.
pub(super) fn retitle(plan: &mut scholia_index::RenamePlan, texts: &dyn Texts) {
    let old = scholia_vault::stem(&plan.from).to_string();
    let new = scholia_vault::stem(&plan.to).to_string();
    let Some(text) = texts.text(&plan.from) else { return };
    // A front matter `title:` that is the file name follows it too.
    if let Some(range) = title_value(&text).filter(|r| text[r.clone()] == old) {
        add_edit(plan, &text, range, new.clone());
    }
    let parsed = parse::parse(&text, &old);
    let Some(h1) = parsed.headings.iter().find(|h| h.level == 1) else {
        return;
    };
    if !scholia_index::same_heading(&h1.text, &old) {
        return;
    }
    let Some(range) = scholia_index::heading_text_range(&text, &h1.text) else {
        return;
    };
    add_edit(plan, &text, range, new);
}

/// One more edit of the renamed note itself.
fn add_edit(plan: &mut scholia_index::RenamePlan, text: &str, range: std::ops::Range<usize>, new: String) {
    match plan.edits.iter_mut().find(|e| e.rel == plan.from) {
        Some(own) => {
            own.edits.push((range, new));
            own.edits.sort_by_key(|(r, _)| r.start);
        }
        None => plan.edits.push(NoteEdits {
            rel: plan.from.clone(),
            text: text.to_string(),
            edits: vec![(range, new)],
        }),
    }
}

/// The bytes of the front matter's top-level `title:` value (quotes left out).
pub(super) fn title_value(text: &str) -> Option<std::ops::Range<usize>> {
    let (_, inner, true) = scholia_vault::frontmatter::locate(text)? else {
        return None;
    };
    let mut at = inner.start;
    for line in text[inner].split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(rest) = line.strip_prefix("title:") else {
            continue;
        };
        let body = rest.trim_end_matches(['\n', '\r']);
        let value = body.trim();
        let lead = body.len() - body.trim_start().len();
        let mut from = start + "title:".len() + lead;
        let mut v = value;
        for q in ['"', '\''] {
            if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
                v = &v[1..v.len() - 1];
                from += 1;
            }
        }
        return (!v.is_empty()).then_some(from..from + v.len());
    }
    None
}

/// Text edits (versioned for open notes) and then the file rename, if any.
pub(super) fn workspace_edit(
    state: &State,
    edits: Vec<NoteEdits>,
    versions: &HashMap<String, i32>,
    rename: Option<(String, String)>,
) -> WorkspaceEdit {
    let enc = state.encoding();
    let mut ops = Vec::new();
    for note in edits {
        let Some(uri) = state.uri_of(&note.rel) else { continue };
        let doc = Document::new(note.text.clone(), 0);
        let edits = note
            .edits
            .iter()
            .map(|(r, new)| OneOf::Left(TextEdit::new(doc.range(r.clone(), enc), new.clone())))
            .collect();
        ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri,
                version: versions.get(&note.rel).copied(),
            },
            edits,
        }));
    }
    if let Some((from, to)) = rename
        && from != to
        && let (Some(old_uri), Some(new_uri)) = (state.uri_of(&from), state.uri_of(&to))
    {
        ops.push(DocumentChangeOperation::Op(ResourceOp::Rename(RenameFile {
            old_uri,
            new_uri,
            options: Some(RenameFileOptions {
                overwrite: Some(false),
                ignore_if_exists: Some(false),
            }),
            annotation_id: None,
        })));
    }
    if !state.document_changes() {
        // A client of plain `changes` (no versions, no file operations).
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for op in ops {
            if let DocumentChangeOperation::Edit(e) = op {
                let edits = e.edits.into_iter().filter_map(|x| match x {
                    OneOf::Left(t) => Some(t),
                    OneOf::Right(_) => None,
                });
                changes.entry(e.text_document.uri).or_default().extend(edits);
            }
        }
        return WorkspaceEdit {
            changes: Some(changes),
            ..Default::default()
        };
    }
    WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(ops)),
        ..Default::default()
    }
}
