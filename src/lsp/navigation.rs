//! `workspace/symbol`, `textDocument/definition` on wikilinks, and `[[` completion (tags:
//! `tags.rs`).

use tower_lsp_server::jsonrpc::{Error, Result as RpcResult};
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use scholia_index::{SymbolKind as Kind, VaultIndex};
use scholia_vault::parse;

/// Symbols answered at most, as gopls and clangd do: a picker shows the best; more typing narrows.
const SYMBOL_LIMIT: usize = 100;
const COMPLETION_LIMIT: usize = 50;
/// Notes read for `[[` completion before ranking their names: the index ranks notes, the
/// editor wants names that start with the text first.
const COMPLETION_CANDIDATES: usize = 200;

fn internal(e: impl std::fmt::Display) -> Error {
    Error {
        code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
        message: e.to_string().into(),
        data: None,
    }
}

/// Runs an index query off the async runtime.
async fn query<T: Send + 'static>(
    index: std::sync::Arc<VaultIndex>,
    f: impl FnOnce(&VaultIndex) -> Result<T, scholia_index::IndexError> + Send + 'static,
) -> RpcResult<T> {
    scholia_base::spawn_blocking(move || f(&index)).await.map_err(internal)
}

fn line_location(uri: Uri, line: u32) -> Location {
    let p = Position::new(line, 0);
    Location::new(uri, Range::new(p, p))
}

pub async fn symbols(state: &State, q: String) -> RpcResult<Option<WorkspaceSymbolResponse>> {
    if q.starts_with('#') {
        return Ok(Some(WorkspaceSymbolResponse::Nested(
            super::tags::symbols(state, &q).await?,
        )));
    }
    let Some(index) = state.index() else {
        return Ok(Some(WorkspaceSymbolResponse::Nested(Vec::new())));
    };
    // With its tables read, an answer takes well under a millisecond (a few at 100k): given in
    // place, without the hop to a blocking thread and back (a tenth of the round trip at 6k).
    // Reading a table after a merge takes longer and goes to a blocking thread.
    let found = match index.symbols_if_ready(&q, SYMBOL_LIMIT) {
        Some(found) => found.map_err(internal)?,
        None => query(index, move |i| i.symbols(&q, SYMBOL_LIMIT)).await?,
    };
    let symbols = found
        .into_iter()
        .filter_map(|s| {
            let uri = state.uri_of(&s.path)?;
            Some(WorkspaceSymbol {
                name: s.name,
                kind: match s.kind {
                    Kind::Note => SymbolKind::FILE,
                    Kind::Heading(_) => SymbolKind::STRING,
                },
                tags: None,
                container_name: s.container.or(Some(s.path)),
                location: OneOf::Left(line_location(uri, s.line)),
                data: None,
            })
        })
        .collect();
    Ok(Some(WorkspaceSymbolResponse::Nested(symbols)))
}

pub async fn definition(state: &State, uri: Uri, pos: Position) -> RpcResult<Option<GotoDefinitionResponse>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let offset = doc.offset(pos, state.encoding());
    let note = parse::parse(&doc.text, "");
    let Some(link) = note
        .links
        .into_iter()
        .find(|l| l.range.start <= offset && offset < l.range.end)
    else {
        return Ok(None);
    };
    // Which note, and its headings.
    let (target_uri, headings, target_rel) = if link.target.is_empty() {
        let headings = note
            .headings
            .iter()
            .map(|h| (h.level, h.line, h.text.clone()))
            .collect();
        (uri.clone(), headings, state.rel(&uri).await)
    } else {
        let Some(index) = state.index() else { return Ok(None) };
        let from = state.rel(&uri).await;
        let parsed_link = link.clone();
        let from = from.unwrap_or_default();
        let Some(found) = query(index, move |i| i.resolve_parsed(&parsed_link, &from)).await? else {
            return Ok(None);
        };
        let Some(target_uri) = state.uri_of(&found.path) else {
            return Ok(None);
        };
        (target_uri, found.outline.headings, Some(found.path))
    };
    let mut line = 0;
    if let Some(heading) = &link.heading {
        // `[[Note#A#B]]` names B, nested under A.
        let wanted = heading.rsplit('#').next().unwrap_or(heading).trim().to_lowercase();
        if let Some((_, l, _)) = headings.iter().find(|(_, _, t)| t.trim().to_lowercase() == wanted) {
            line = *l;
        }
    } else if let Some(block) = &link.block {
        let text = if target_uri == uri {
            Some(doc.text.clone())
        } else if target_rel.is_some() {
            state.text(&target_uri).await
        } else {
            None
        };
        if let Some(text) = text {
            let marker = format!("^{block}");
            if let Some(i) = text.lines().position(|l| l.trim_end().ends_with(&marker)) {
                line = i as u32;
            }
        }
    }
    Ok(Some(GotoDefinitionResponse::Scalar(line_location(target_uri, line))))
}

/// An item's edit. As a snippet when the client takes them: Neovim 0.11 inserts only the first
/// word of a plain `newText` (`[[Lac` → `[[Lactic`), but a snippet's whole label, then the
/// snippet itself.
fn inserting(range: Range, text: &str, snippet: bool) -> CompletionItem {
    let (new_text, format) = match snippet {
        true => (escape_snippet(text), InsertTextFormat::SNIPPET),
        false => (text.to_string(), InsertTextFormat::PLAIN_TEXT),
    };
    CompletionItem {
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, new_text))),
        insert_text_format: Some(format),
        ..Default::default()
    }
}

/// Text as a snippet that inserts it literally (`$`, `}` and `\` escaped).
fn escape_snippet(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '$' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub async fn completion(state: &State, uri: Uri, pos: Position) -> RpcResult<Option<CompletionResponse>> {
    let Some(text) = state.text(&uri).await else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let cursor = doc.offset(pos, enc);
    let line_start = doc.offset(Position::new(pos.line, 0), enc);
    let before = &doc.text[line_start..cursor];
    let open_link = before.rfind("[[").filter(|&open| !before[open + 2..].contains("]]"));
    let Some(open) = open_link else {
        // Not in a link: a tag, when one is being typed.
        let items = super::tags::completion(state, &doc, pos).await?;
        return Ok(items.map(|items| {
            CompletionResponse::List(CompletionList {
                is_incomplete: true,
                items,
            })
        }));
    };
    let typed = &before[open + 2..];
    if typed.contains('|') {
        return Ok(None);
    }
    let typed_start = line_start + open + 2;
    let closes = doc.text[cursor..].starts_with("]]");
    let close = if closes { "" } else { "]]" };
    let Some(index) = state.index() else { return Ok(None) };
    let edit_range = doc.range(typed_start..cursor, enc);
    let snippets = state.snippet_support();

    let mut items = Vec::new();
    if let Some((note_part, heading_part)) = typed.split_once('#') {
        // Headings of the named note (or of this one for `[[#`).
        let headings = if note_part.is_empty() {
            parse::parse(&doc.text, "")
                .headings
                .into_iter()
                .map(|h| (h.level, h.text))
                .collect::<Vec<_>>()
        } else {
            let from = state.rel(&uri).await;
            let target = note_part.to_string();
            match query(index, move |i| i.resolve_link(&target, from.as_deref())).await? {
                Some(n) => n.outline.headings.into_iter().map(|(l, _, t)| (l, t)).collect(),
                None => Vec::new(),
            }
        };
        let wanted = heading_part.to_lowercase();
        for (i, (level, text)) in headings
            .into_iter()
            .filter(|(_, t)| t.to_lowercase().contains(&wanted))
            .enumerate()
        {
            let new_text = format!("{note_part}#{text}{close}");
            items.push(CompletionItem {
                label: text.clone(),
                kind: Some(CompletionItemKind::REFERENCE),
                detail: Some(format!("{} {text}", "#".repeat(level as usize))),
                sort_text: Some(format!("{i:05}")),
                filter_text: Some(format!("{typed}{text}")),
                ..inserting(edit_range, &new_text, snippets)
            });
        }
    } else {
        let prefix = typed.to_string();
        let notes = query(index, move |i| i.notes_named(&prefix, COMPLETION_CANDIDATES)).await?;
        // Each name once: a note's file name, then its aliases that say something else.
        let mut names: Vec<(String, String, String, bool)> = Vec::new();
        for n in notes {
            let stem = scholia_vault::stem(&n.path).to_string();
            names.push((stem.clone(), stem.clone(), n.path.clone(), false));
            for alias in &n.outline.aliases {
                if !alias.eq_ignore_ascii_case(&stem) && !names.iter().any(|(l, _, p, _)| l == alias && *p == n.path) {
                    names.push((
                        alias.clone(),
                        format!("{stem}|{alias}"),
                        format!("alias of {}", n.path),
                        true,
                    ));
                }
            }
        }
        let wanted = typed.to_lowercase();
        // Names that start with what was typed first, then those with a word that does; file
        // names before aliases; shorter before longer.
        let rank = |label: &str, alias: bool| {
            let l = label.to_lowercase();
            let starts = match () {
                _ if l.starts_with(&wanted) => 0,
                _ if l.split_whitespace().any(|w| w.starts_with(&wanted)) => 1,
                _ => 2,
            };
            (starts, alias, l.chars().count(), l)
        };
        names.sort_by_key(|a| rank(&a.0, a.3));
        names.truncate(COMPLETION_LIMIT);
        for (i, (label, insert, detail, _)) in names.into_iter().enumerate() {
            items.push(CompletionItem {
                label: label.clone(),
                kind: Some(CompletionItemKind::FILE),
                detail: Some(detail),
                sort_text: Some(format!("{i:05}")),
                filter_text: Some(format!("{typed} {label}")),
                ..inserting(edit_range, &format!("{insert}{close}"), snippets)
            });
        }
    }
    Ok(Some(CompletionResponse::List(CompletionList {
        is_incomplete: true,
        items,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_insert_names_literally() {
        let check = |text: &str, expected: &str| assert_eq!(escape_snippet(text), expected, "{text}");
        check("Lactic acid bacteria]]", "Lactic acid bacteria]]");
        check("Costs $5 {x}", "Costs \\$5 {x\\}");
        check("a\\b", "a\\\\b");
        check("${1:x}", "\\${1:x\\}");
    }
}
