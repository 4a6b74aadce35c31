//! Tags in the editor: completion of the vault's tags after `#` (and in the front matter's
//! `tags:`), references of the tag under the cursor (inline and front matter, nested tags
//! included), its rename across the vault, and `#tag` workspace symbols.

use std::collections::HashMap;

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use super::errors;
use scholia_vault::tags::{self, TagSpan};

const COMPLETION_LIMIT: usize = 50;
const SYMBOL_LIMIT: usize = 50;

/// The tag written under byte `at` of `text`.
pub fn at(text: &str, at: usize) -> Option<TagSpan> {
    tags::spans(text)
        .into_iter()
        .find(|s| s.range.start <= at && at <= s.range.end)
}

/// What is being typed as a tag before the cursor: `#par` in the text (the part after `#`), or
/// a value of the front matter's `tags:`; `None` elsewhere.
fn typed(text: &str, cursor: usize) -> Option<(usize, String, bool)> {
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..cursor];
    let word_start = before
        .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '/')))
        .map_or(0, |i| i + before[i..].chars().next().map_or(1, char::len_utf8));
    let word = &before[word_start..];
    let in_front_matter =
        scholia_vault::frontmatter::locate(text).is_some_and(|(_, inner, yaml)| yaml && inner.contains(&line_start));
    if in_front_matter {
        // `tags: [a, pa`, `tags: pa`, or `  - pa` under `tags:`.
        let line = before.trim_start();
        let key_line = line.starts_with("tags:") || line.starts_with("tag:");
        let item = line.starts_with('-') && list_is_tags(&text[..line_start]);
        return (key_line || item).then(|| (cursor - word.len(), word.trim_start_matches('#').to_string(), false));
    }
    let hash = word_start.checked_sub(1).filter(|&h| before.as_bytes()[h] == b'#')?;
    let before_hash = before[..hash].chars().next_back();
    if before_hash.is_some_and(|c| !c.is_whitespace()) || before.contains("[[") && !before.contains("]]") {
        return None;
    }
    Some((cursor - word.len(), word.to_string(), true))
}

/// Whether the list an item line continues belongs to the front matter's `tags:` key.
fn list_is_tags(before: &str) -> bool {
    for line in before.lines().rev() {
        let t = line.trim_start();
        if t.starts_with('-') || t.is_empty() {
            continue;
        }
        return !line.starts_with([' ', '\t']) && (t.starts_with("tags:") || t.starts_with("tag:"));
    }
    false
}

/// Tag completion at `cursor`, when a tag is being typed there.
pub async fn completion(state: &State, doc: &Document, pos: Position) -> RpcResult<Option<Vec<CompletionItem>>> {
    let enc = state.encoding();
    let cursor = doc.offset(pos, enc);
    let Some((start, partial, inline)) = typed(&doc.text, cursor) else {
        return Ok(None);
    };
    let Some(index) = state.index() else { return Ok(None) };
    let p = partial.clone();
    let found = scholia_base::spawn_blocking(move || index.tags(&p, COMPLETION_LIMIT))
        .await
        .map_err(|e| errors::rpc(&scholia_base::Error::from(e)))?;
    let range = doc.range(start..cursor, enc);
    let items = found
        .into_iter()
        .enumerate()
        .map(|(i, t)| CompletionItem {
            label: if inline { format!("#{}", t.tag) } else { t.tag.clone() },
            kind: Some(CompletionItemKind::KEYWORD),
            detail: Some(match t.notes {
                1 => "tag of 1 note".to_string(),
                n => format!("tag of {n} notes"),
            }),
            sort_text: Some(format!("{i:05}")),
            filter_text: Some(t.tag.clone()),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, t.tag))),
            ..Default::default()
        })
        .collect();
    Ok(Some(items))
}

/// Every place the tag (and the tags under it) is written, in the vault and open buffers.
pub async fn references(state: &State, tag: &str) -> RpcResult<Option<Vec<Location>>> {
    let Some(index) = state.index() else { return Ok(None) };
    let texts = state.snapshot(index.clone());
    let t = tag.to_string();
    let uses = scholia_base::blocking(move || Ok(index.tag_uses(&t, &texts)?))
        .await
        .map_err(|e| errors::rpc(&e))?;
    let enc = state.encoding();
    let mut out = Vec::new();
    for u in uses {
        let Some(uri) = state.uri_of(&u.rel) else { continue };
        let doc = Document::new(u.text, 0);
        out.extend(
            u.spans
                .iter()
                .map(|s| Location::new(uri.clone(), doc.range(s.range.clone(), enc))),
        );
    }
    Ok(Some(out))
}

/// The rename of tag `from` to `new_name` everywhere it is written (the tags nested under it
/// keep their own part): one text edit per place, versioned for open notes.
pub async fn rename(state: &State, from: &str, new_name: &str) -> RpcResult<Option<WorkspaceEdit>> {
    let to = tags::check("newName", new_name).map_err(errors::invalid)?;
    let Some(index) = state.index() else { return Ok(None) };
    let texts = state.snapshot(index.clone());
    let versions: HashMap<String, i32> = texts.versions();
    let f = from.to_string();
    let uses = scholia_base::blocking(move || Ok(index.tag_uses(&f, &texts)?))
        .await
        .map_err(|e| errors::rpc(&e))?;
    let enc = state.encoding();
    let mut changes = Vec::new();
    for u in uses {
        let Some(uri) = state.uri_of(&u.rel) else { continue };
        let doc = Document::new(u.text, 0);
        let edits: Vec<OneOf<TextEdit, AnnotatedTextEdit>> = u
            .spans
            .iter()
            .filter_map(|s| {
                let new = tags::renamed(&s.tag, from, &to)?;
                Some(OneOf::Left(TextEdit::new(doc.range(s.range.clone(), enc), new)))
            })
            .collect();
        changes.push(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri,
                version: versions.get(&u.rel).copied(),
            },
            edits,
        });
    }
    Ok(Some(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(changes)),
        ..Default::default()
    }))
}

/// `#tag` symbols for a workspace-symbol query that starts with `#`: each tag where it is
/// first written.
pub async fn symbols(state: &State, query: &str) -> RpcResult<Vec<WorkspaceSymbol>> {
    let Some(index) = state.index() else {
        return Ok(Vec::new());
    };
    let q = query.trim_start_matches('#').to_string();
    let found = scholia_base::spawn_blocking(
        move || -> Result<Vec<(String, u64, String, u32)>, scholia_index::IndexError> {
            let mut out = Vec::new();
            for t in index.tags(&q, SYMBOL_LIMIT)? {
                let Some(first) = index.notes_tagged(&t.tag)?.into_iter().next() else {
                    continue;
                };
                let line = index
                    .note_text(&first)
                    .and_then(|text| {
                        let at = tags::spans(&text)
                            .into_iter()
                            .find(|s| tags::key(&s.tag) == tags::key(&t.tag))?;
                        Some(scholia_vault::lines::LineIndex::new(&text).line_of(at.range.start))
                    })
                    .unwrap_or(0);
                out.push((t.tag, t.notes, first, line));
            }
            Ok(out)
        },
    )
    .await
    .map_err(|e| errors::rpc(&scholia_base::Error::from(e)))?;
    Ok(found
        .into_iter()
        .filter_map(|(tag, notes, path, line)| {
            let uri = state.uri_of(&path)?;
            let p = Position::new(line, 0);
            Some(WorkspaceSymbol {
                name: format!("#{tag}"),
                kind: SymbolKind::KEY,
                tags: None,
                container_name: Some(format!("{notes} notes")),
                location: OneOf::Left(Location::new(uri, Range::new(p, p))),
                data: None,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_is_typed_after_hash_or_in_tags() {
        // `|` is the cursor.
        let check = |marked: &str, expected: Option<(&str, bool)>| {
            let cursor = marked.find('|').unwrap_or(marked.len());
            let text = marked.replacen('|', "", 1);
            let got = typed(&text, cursor);
            assert_eq!(got.as_ref().map(|(_, p, i)| (p.as_str(), *i)), expected, "{marked:?}");
            if let Some((start, p, _)) = got {
                assert_eq!(&text[start..cursor], p.trim_start_matches('#'), "{marked:?}");
            }
        };
        check("Some #pro", Some(("pro", true)));
        check("#", Some(("", true)));
        check("Some #project/al", Some(("project/al", true)));
        check("issue#12", None);
        check("[[Note#Hea", None);
        check("plain words", None);
        check("---\ntags: [a, pro|]\n---\n", Some(("pro", false)));
        check("---\ntags:\n  - pro|\n---\n", Some(("pro", false)));
        check("---\naliases:\n  - pro|\n---\n", None);
        check("---\ntitle: pro|\n---\n", None);
    }
}
