//! References, rename, file renames, hover on wikilinks and the outline: LSP shapes around the
//! index's link graph (`scholia_index::{references, plan_rename, plan_heading_rename}`).

use std::collections::HashMap;
use std::sync::Arc;

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use super::errors;
use scholia_index::{Anchor, NoteEdits, Texts, VaultIndex};
use scholia_vault::parse::{self, Link};

/// Characters of a hover's excerpt.
const HOVER_CHARS: usize = 1_200;

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
    let versions: HashMap<String, i32> = texts.open.iter().map(|(r, (_, v))| (r.clone(), *v)).collect();
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

/// A rename or move is refused when a note that links to what moves cannot be read whole: its
/// links would be left behind.
fn refuse_unread(unread: &[(String, String)], what: &str) -> Result<(), scholia_base::Error> {
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

/// The edits of a rename, and the file renamed (`from`, `to`) when a note is.
type Planned = (Vec<NoteEdits>, Option<(String, String)>);

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
fn title_value(text: &str) -> Option<std::ops::Range<usize>> {
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
    let versions: HashMap<String, i32> = texts.open.iter().map(|(r, (_, v))| (r.clone(), *v)).collect();
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

/// Hover on a wikilink: the target's title and its opening paragraph, or the linked heading's
/// section, bounded.
pub async fn hover(state: &State, uri: Uri, pos: Position) -> RpcResult<Option<Hover>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let offset = doc.offset(pos, enc);
    // A citation in `## Research`: where it was read and what the run was given of it.
    if let Some(engine) = state.engine_now() {
        let t = doc.text.clone();
        if let Some(c) = scholia_base::spawn_blocking(move || engine.citation_at(&t, offset)).await {
            return Ok(Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: citation(&c),
                }),
                range: None,
            }));
        }
    }
    let parsed = parse::parse(&doc.text, "");
    let Some(link) = parsed
        .links
        .iter()
        .find(|l| l.range.start <= offset && offset < l.range.end)
    else {
        return Ok(None);
    };
    let Some(index) = state.index() else { return Ok(None) };
    let rel = state.rel(&uri).await.unwrap_or_default();
    let texts = state.snapshot(index.clone());
    let l = link.clone();
    let shown = scholia_base::blocking(move || -> Result<Option<String>, scholia_base::Error> {
        let target = if l.target.trim().is_empty() {
            rel.clone()
        } else {
            match index.resolve_parsed(&l, &rel)? {
                Some(n) => n.path,
                None => return Ok(Some(format!("No note named `{}` in the vault.", l.target.trim()))),
            }
        };
        let Some(text) = texts.text(&target) else {
            return Ok(None);
        };
        Ok(Some(excerpt(&target, &text, l.heading.as_deref())))
    })
    .await
    .map_err(|e| errors::rpc(&e))?;
    Ok(shown.map(|value| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(doc.range(link.range.clone(), enc)),
    }))
}

/// A cited source as the run that cited it read it: title, where, the passage (inert).
fn citation(c: &scholia_engine::provenance::Citation) -> String {
    use scholia_vault::contain;
    let s = &c.source;
    let place = match (&s.url, &s.note) {
        (Some(u), _) => format!("Read from `{}`", u.replace('`', "")),
        (None, Some(n)) => format!("From the note `{}`", n.replace('`', "")),
        (None, None) => "Source".into(),
    };
    let passage = if s.passage.is_empty() {
        "(no passage was kept)".to_string()
    } else {
        let mut p = contain::quote(&s.passage);
        if p.chars().count() > HOVER_CHARS {
            p = p.chars().take(HOVER_CHARS).collect::<String>() + "…";
        }
        format!("> {p}")
    };
    let model = match c.stamp.model.as_str() {
        "none" => String::new(),
        m => format!(", {m}"),
    };
    format!(
        "**{}**\n\n{place}\n\n{passage}\n\n*Cited by the research of {} ({}{model})*",
        contain::text(&s.title),
        c.when.replace('T', " ").replace('Z', " UTC"),
        c.stamp.depth
    )
}

/// The title of `rel` and its first paragraph (or the section of `heading`), cut at
/// [`HOVER_CHARS`].
fn excerpt(rel: &str, text: &str, heading: Option<&str>) -> String {
    let parsed = parse::parse(text, scholia_vault::stem(rel));
    let body = match heading {
        Some(h) => {
            let wanted = scholia_index::last_heading(h);
            match parsed
                .headings
                .iter()
                .find(|x| scholia_index::same_heading(&x.text, wanted))
            {
                Some(x) => text[x.section.clone()].to_string(),
                None => format!("No heading `{wanted}` in this note."),
            }
        }
        None => first_paragraph(text, &parsed),
    };
    let mut body: String = body.trim().to_string();
    if body.chars().count() > HOVER_CHARS {
        body = body.chars().take(HOVER_CHARS).collect::<String>() + "…";
    }
    format!("**{}** · `{rel}`\n\n{body}", parsed.title.replace(['*', '`'], ""))
}

/// The first block of text after the front matter and the title heading.
fn first_paragraph(text: &str, parsed: &parse::ParsedNote) -> String {
    let start = parsed.frontmatter.as_ref().map_or(0, |f| f.range.end);
    let mut paragraph = Vec::new();
    for line in text[start.min(text.len())..].lines() {
        let t = line.trim();
        if paragraph.is_empty() && (t.is_empty() || t.starts_with("# ")) {
            continue;
        }
        if t.is_empty() || (t.starts_with('#') && !paragraph.is_empty()) {
            break;
        }
        paragraph.push(line);
    }
    paragraph.join("\n")
}

/// The note's outline, nested by heading level.
pub async fn document_symbols(state: &State, uri: Uri) -> RpcResult<Option<DocumentSymbolResponse>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let parsed = parse::parse(&doc.text, "");
    // (level, symbol) stack: a heading closes every open one of its level or deeper.
    let mut stack: Vec<(u8, DocumentSymbol)> = Vec::new();
    let mut roots: Vec<DocumentSymbol> = Vec::new();
    let close = |stack: &mut Vec<(u8, DocumentSymbol)>, roots: &mut Vec<DocumentSymbol>| {
        let (_, done) = stack.pop().expect("open");
        match stack.last_mut() {
            Some((_, parent)) => parent.children.get_or_insert_with(Vec::new).push(done),
            None => roots.push(done),
        }
    };
    for h in parsed.headings.iter().filter(|h| h.top_level) {
        while stack.last().is_some_and(|(l, _)| *l >= h.level) {
            close(&mut stack, &mut roots);
        }
        let line_end = doc.text[h.section.start..]
            .find('\n')
            .map_or(doc.text.len(), |i| h.section.start + i);
        #[allow(deprecated)]
        let symbol = DocumentSymbol {
            name: if h.text.is_empty() {
                "(empty heading)".into()
            } else {
                h.text.clone()
            },
            detail: Some("#".repeat(h.level as usize)),
            kind: if h.level == 1 {
                SymbolKind::FILE
            } else {
                SymbolKind::STRING
            },
            tags: None,
            deprecated: None,
            range: doc.range(h.section.clone(), enc),
            selection_range: doc.range(h.section.start..line_end, enc),
            children: None,
        };
        stack.push((h.level, symbol));
    }
    while !stack.is_empty() {
        close(&mut stack, &mut roots);
    }
    Ok(Some(DocumentSymbolResponse::Nested(roots)))
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

    #[test]
    fn excerpts_are_bounded() {
        let long = format!("# Long\n\n{}\n\nSecond paragraph.\n", "word ".repeat(1000));
        let shown = excerpt("Long.md", &long, None);
        assert!(shown.starts_with("**Long** · `Long.md`\n\nword word"), "{shown}");
        assert!(shown.ends_with('…') && !shown.contains("Second"), "{shown}");
        let text = "# T\n\nIntro.\n\n## Part\nInside part.\n\n## Next\nNo.\n";
        assert_eq!(
            excerpt("T.md", text, Some("part")),
            "**T** · `T.md`\n\n## Part\nInside part."
        );
        assert_eq!(excerpt("T.md", text, None), "**T** · `T.md`\n\nIntro.");
    }
}
