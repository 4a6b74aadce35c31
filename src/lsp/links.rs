//! References, rename, file renames, hover on wikilinks and the outline: LSP shapes around the
//! index's link graph (`scholia_index::{references, plan_rename, plan_heading_rename}`).

use std::collections::HashMap;

use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::diagnostics;
use super::documents::Document;
use super::edits::{refuse_unread, retitle, title_value, workspace_edit};
use super::errors;
use scholia_index::{Anchor, NoteEdits};
use scholia_vault::parse::{self, Link};

/// What the cursor is on, for references and rename.
#[derive(Debug)]
enum Subject {
    /// A wikilink; `heading` when the cursor is on its heading part.
    Link { link: Link, on_heading: bool },
    /// The note's title (its first `# ` heading or its `title:` line).
    Title,
    /// Another heading of the note.
    Heading(String),
}

fn subject_at(text: &str, offset: usize) -> Option<(Subject, std::ops::Range<usize>)> {
    let parsed = parse::parse(text, "");
    if let Some(link) = parsed
        .links
        .iter()
        .find(|l| l.range.start <= offset && offset < l.range.end)
    {
        let heading_at = text[link.range.clone()].rfind('#').map(|i| link.range.start + i);
        let on_heading = link.heading.is_some() && heading_at.is_some_and(|h| offset > h);
        return Some((
            Subject::Link {
                link: link.clone(),
                on_heading,
            },
            link.range.clone(),
        ));
    }
    if let Some(range) = title_value(text).filter(|r| r.start <= offset && offset <= r.end) {
        return Some((Subject::Title, range));
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let title = parsed.headings.iter().find(|h| h.level == 1);
    let h = parsed.headings.iter().find(|h| h.section.start == line_start)?;
    let range = scholia_index::heading_text_range(&text[line_start..], &h.text)
        .map(|r| line_start + r.start..line_start + r.end)?;
    if title.is_some_and(|t| t.section.start == h.section.start) {
        return Some((Subject::Title, range));
    }
    Some((Subject::Heading(h.text.clone()), range))
}

/// The anchor a subject names, and the text range it was found at.
async fn anchor_at(state: &State, uri: &Uri, pos: Position) -> RpcResult<Option<(Anchor, Subject, Document)>> {
    let (Some(text), Some(rel), Some(index)) = (state.text(uri).await, state.rel(uri).await, state.index()) else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let offset = doc.offset(pos, state.encoding());
    let Some((subject, _)) = subject_at(&doc.text, offset) else {
        return Ok(None);
    };
    let anchor = match &subject {
        Subject::Title => Anchor::Note(rel),
        Subject::Heading(h) => Anchor::Heading {
            rel,
            heading: h.clone(),
        },
        Subject::Link { link, .. } => {
            let target = if link.target.trim().is_empty() {
                Some(rel.clone())
            } else {
                let (l, from) = (link.clone(), rel.clone());
                scholia_base::spawn_blocking(move || index.resolve_parsed(&l, &from))
                    .await
                    .map_err(|e| errors::rpc(&e.into()))?
                    .map(|n| n.path)
            };
            let Some(target) = target else { return Ok(None) };
            match (&link.heading, &link.block) {
                (Some(h), _) => Anchor::Heading {
                    rel: target,
                    heading: scholia_index::last_heading(h).to_string(),
                },
                (None, Some(b)) => Anchor::Block {
                    rel: target,
                    id: b.clone(),
                },
                _ => Anchor::Note(target),
            }
        }
    };
    Ok(Some((anchor, subject, doc)))
}

/// The tag written at `pos` of `uri`, if any.
async fn tag_at(state: &State, uri: &Uri, pos: Position) -> Option<(scholia_vault::tags::TagSpan, Document)> {
    let text = state.text(uri).await?;
    let doc = Document::new(text, 0);
    let at = doc.offset(pos, state.encoding());
    super::tags::at(&doc.text, at).map(|t| (t, doc))
}

pub async fn references(state: &State, uri: Uri, pos: Position, declaration: bool) -> RpcResult<Option<Vec<Location>>> {
    if let Some((tag, _)) = tag_at(state, &uri, pos).await {
        return super::tags::references(state, &tag.tag).await;
    }
    // On a link or heading: what it names; anywhere else in a note (front matter, body text):
    // the note itself, as most notes have no title heading (the file name is the title).
    let anchor = match anchor_at(state, &uri, pos).await? {
        Some((anchor, _, _)) => anchor,
        None => match state.rel(&uri).await {
            Some(rel) => Anchor::Note(rel),
            None => return Ok(None),
        },
    };
    let Some(index) = state.index() else { return Ok(None) };
    let texts = state.snapshot(index.clone());
    let a = anchor.clone();
    let found = scholia_base::blocking(move || Ok(index.references(&a, &texts)?))
        .await
        .map_err(|e| errors::rpc(&e))?;
    let enc = state.encoding();
    let mut out = Vec::new();
    if declaration && let Some(target) = state.uri_of(anchor.rel()) {
        out.push(Location::new(target, Range::default()));
    }
    for note in found {
        let doc = Document::new(note.text, 0);
        let Some(uri) = state.uri_of(&note.rel) else { continue };
        out.extend(
            note.links
                .iter()
                .map(|l| Location::new(uri.clone(), doc.range(l.range.clone(), enc))),
        );
    }
    Ok(Some(out))
}

pub async fn prepare_rename(state: &State, uri: Uri, pos: Position) -> RpcResult<Option<PrepareRenameResponse>> {
    if let Some((tag, doc)) = tag_at(state, &uri, pos).await {
        return Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
            range: doc.range(tag.range.clone(), state.encoding()),
            placeholder: tag.tag,
        }));
    }
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let offset = doc.offset(pos, enc);
    let Some((subject, range)) = subject_at(&doc.text, offset) else {
        return Err(errors::invalid(
            "position: not on a wikilink, the note's title or a heading; rename the note from its title or a link to it",
        ));
    };
    let (range, placeholder) = match &subject {
        Subject::Link { link, on_heading } => {
            let part = if *on_heading {
                heading_part(&doc.text, link)
            } else {
                scholia_index::raw_target(&doc.text, link)
            };
            let Some(part) = part else {
                return Err(errors::invalid("position: this link names no note to rename"));
            };
            let shown = doc.text[part.clone()].to_string();
            let shown = if *on_heading {
                shown
            } else {
                scholia_vault::stem(&shown).trim_end_matches(".md").to_string()
            };
            (part, shown)
        }
        Subject::Title => {
            let rel = state.rel(&uri).await.unwrap_or_default();
            (range, scholia_vault::stem(&rel).to_string())
        }
        Subject::Heading(h) => (range, h.clone()),
    };
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: doc.range(range, enc),
        placeholder,
    }))
}

fn heading_part(text: &str, link: &Link) -> Option<std::ops::Range<usize>> {
    let whole = &text[link.range.clone()];
    let hash = whole.rfind('#')?;
    let end = whole[hash..].find(['|', ']']).map_or(whole.len(), |i| hash + i);
    let seg = &whole[hash + 1..end];
    let lead = seg.len() - seg.trim_start().len();
    let start = link.range.start + hash + 1 + lead;
    Some(start..start + seg.trim().len())
}

pub async fn rename(
    state: &State,
    client: &tower_lsp_server::Client,
    uri: Uri,
    pos: Position,
    new_name: String,
) -> RpcResult<Option<WorkspaceEdit>> {
    if let Some((tag, _)) = tag_at(state, &uri, pos).await {
        return super::tags::rename(state, &tag.tag, &new_name).await;
    }
    let Some((anchor, subject, doc)) = anchor_at(state, &uri, pos).await? else {
        return Err(errors::invalid(
            "position: not on a wikilink, the note's title or a heading; nothing to rename",
        ));
    };
    let Some(index) = state.index() else { return Ok(None) };
    let texts = state.snapshot(index.clone());
    let versions: HashMap<String, i32> = texts.versions();
    let heading_rename =
        matches!(subject, Subject::Heading(_)) || matches!(&subject, Subject::Link { on_heading: true, .. });
    drop(doc);
    if !heading_rename && !state.renames_files() {
        // The editor cannot rename files: scholia moves the note itself (see `rename_here`).
        let from = anchor.rel().to_string();
        let to = scholia_index::renamed_path(&from, &new_name, "newName").map_err(|e| errors::rpc(&e.into()))?;
        return super::rename_here::rename(state, client, from, to, texts).await;
    }
    let plan = scholia_base::blocking(move || -> Result<Planned, scholia_base::Error> {
        match anchor {
            Anchor::Heading { rel, heading } if heading_rename => {
                Ok((index.plan_heading_rename(&rel, &heading, &new_name, &texts)?, None))
            }
            anchor => {
                let from = anchor.rel().to_string();
                let to = scholia_index::renamed_path(&from, &new_name, "newName")?;
                let mut plan = index.plan_rename(&from, &to, "newName", &texts)?;
                refuse_unread(&plan.unread, &from)?;
                retitle(&mut plan, &texts);
                Ok((plan.edits, Some((plan.from, plan.to))))
            }
        }
    })
    .await
    .map_err(|e| errors::rpc(&e))?;
    Ok(Some(workspace_edit(state, plan.0, &versions, plan.1)))
}

/// The edits of a rename, and the file renamed (`from`, `to`) when a note is.
type Planned = (Vec<NoteEdits>, Option<(String, String)>);

/// The editor renames or moves files itself: the links to each note (every note of a moved
/// folder) are rewritten first.
pub async fn will_rename_files(state: &State, params: RenameFilesParams) -> RpcResult<Option<WorkspaceEdit>> {
    let Some(index) = state.index() else { return Ok(None) };
    let root = state.root.get();
    let mut moves: Vec<(String, String)> = Vec::new();
    for f in &params.files {
        let (Ok(old), Ok(new)) = (f.old_uri.parse::<Uri>(), f.new_uri.parse::<Uri>()) else {
            continue;
        };
        let (Some(old), Some(new), Some(root)) = (old.to_file_path(), new.to_file_path(), root.as_ref()) else {
            continue;
        };
        let (Some(old_rel), Some(new_rel)) = (
            scholia_vault::paths::relative(root, &old),
            scholia_vault::paths::relative(root, &new),
        ) else {
            continue;
        };
        scholia_vault::naming::check_path("newUri", &new_rel).map_err(|e| errors::rpc(&e.into()))?;
        if scholia_vault::paths::has_note_extension(&old) {
            moves.push((old_rel, new_rel));
        } else {
            // A folder: every note under it.
            let prefix = format!("{old_rel}/");
            let index = index.clone();
            let notes = scholia_base::blocking(move || Ok(index.stamps()?))
                .await
                .map_err(|e| errors::rpc(&e))?;
            for rel in notes.into_keys().filter(|r| r.starts_with(&prefix)) {
                let moved = format!("{new_rel}/{}", &rel[prefix.len()..]);
                moves.push((rel, moved));
            }
        }
    }
    if moves.is_empty() {
        return Ok(None);
    }
    let texts = state.snapshot(index.clone());
    let versions: HashMap<String, i32> = texts.versions();
    let edits = scholia_base::blocking(move || -> Result<Vec<NoteEdits>, scholia_base::Error> {
        let plan = index.plan_moves(&moves, &texts)?;
        let what = moves.first().map(|(f, _)| f.clone()).unwrap_or_default();
        refuse_unread(&plan.unread, &what)?;
        Ok(plan.edits)
    })
    .await
    .map_err(|e| errors::rpc(&e))?;
    Ok(Some(workspace_edit(state, edits, &versions, None)))
}

/// The client renamed files (and their buffers): open documents follow, and every open
/// note's diagnostics are made again now, not when the watcher sees the move.
pub async fn did_rename_files(client: &Client, state: &State, params: RenameFilesParams) {
    {
        let mut docs = state.docs();
        for f in &params.files {
            let (Ok(old), Ok(new)) = (f.old_uri.parse::<Uri>(), f.new_uri.parse::<Uri>()) else {
                continue;
            };
            if !docs.contains_key(&new)
                && let Some(mut doc) = docs.remove(&old)
            {
                doc.path = None;
                docs.insert(new, doc);
            }
        }
    }
    // The index learns of the move now (the watcher would, a pause later).
    if let (Some(index), Some(root)) = (state.index(), state.root.get()) {
        let mut rels: Vec<String> = Vec::new();
        for f in &params.files {
            for u in [&f.old_uri, &f.new_uri] {
                if let Ok(uri) = u.parse::<Uri>()
                    && let Some(path) = uri.to_file_path()
                    && scholia_vault::paths::has_note_extension(&path)
                    && let Some(rel) = scholia_vault::paths::relative(&root, &path)
                {
                    rels.push(rel);
                }
            }
        }
        let refreshed = scholia_base::blocking(move || {
            let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
            Ok(index.refresh_if_changed(&rels)?)
        })
        .await;
        if let Err(e) = refreshed {
            tracing::warn!("didRenameFiles: {e}");
        }
    }
    diagnostics::refresh_all(client, state).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_cursor_is_on() {
        let text = "# Koji\n\n## Growing\nSee [[Miso#Making|m]] and [[Sake]].\n";
        let check = |at: &str, expected: &str| {
            let offset = text.find(at).unwrap();
            let got = match subject_at(text, offset).map(|(s, r)| (s, &text[r])) {
                Some((Subject::Title, r)) => format!("title {r}"),
                Some((Subject::Heading(h), r)) => format!("heading {h} {r}"),
                Some((Subject::Link { link, on_heading }, r)) => format!("link {} {on_heading} {r}", link.target),
                None => "none".into(),
            };
            assert_eq!(got, expected, "{at}");
        };
        check("Koji", "title Koji");
        check("Growing", "heading Growing Growing");
        check("Miso#", "link Miso false [[Miso#Making|m]]");
        check("Making", "link Miso true [[Miso#Making|m]]");
        check("Sake", "link Sake false [[Sake]]");
        check("See", "none");
    }
}
