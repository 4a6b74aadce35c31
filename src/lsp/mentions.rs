//! Unlinked mentions in the editor: a Hint where an open note names another note without
//! linking it (`scholia_index::unlinked_mentions`: the name as written, whole, not a common
//! word), with the quick fixes "Link `[[Note]]`" and "Link every mention of `[[Note]]` in this
//! note".

use serde_json::json;
use tower_lsp_server::ls_types::*;

use super::documents::{Document, Encoding};
use super::names::SOURCE;

pub const CODE: &str = "unlinked-mention";

/// The hints of `mentions` in `doc`.
pub fn hints(doc: &Document, mentions: &[scholia_index::Mention], enc: Encoding) -> Vec<Diagnostic> {
    mentions
        .iter()
        .map(|m| {
            let name = &doc.text[m.range.clone()];
            Diagnostic {
                range: doc.range(m.range.clone(), enc),
                severity: Some(DiagnosticSeverity::HINT),
                code: Some(NumberOrString::String(CODE.into())),
                source: Some(SOURCE.into()),
                message: format!("`{name}` names the note `{}` without linking it", m.path),
                data: Some(json!({"link": m.link, "path": m.path})),
                ..Default::default()
            }
        })
        .collect()
}

/// The quick fixes of the hints under `range`.
pub fn actions(uri: &Uri, version: i32, diagnostics: &[Diagnostic], range: Range) -> Vec<CodeActionOrCommand> {
    let mine: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.code == Some(NumberOrString::String(CODE.into())))
        .collect();
    let edit = |edits: Vec<TextEdit>| WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version: Some(version),
            },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        }])),
        ..Default::default()
    };
    let mut out = Vec::new();
    for d in mine
        .iter()
        .filter(|d| !(d.range.end < range.start || range.end < d.range.start))
    {
        let (Some(link), Some(path)) = (
            d.data.as_ref().and_then(|v| v["link"].as_str()),
            d.data.as_ref().and_then(|v| v["path"].as_str()),
        ) else {
            continue;
        };
        let shown = link.split('|').next().unwrap_or(link);
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Link `[[{shown}]]`"),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![(*d).clone()]),
            edit: Some(edit(vec![TextEdit::new(d.range, format!("[[{link}]]"))])),
            is_preferred: Some(true),
            ..Default::default()
        }));
        let all: Vec<&&Diagnostic> = mine
            .iter()
            .filter(|o| o.data.as_ref().and_then(|v| v["path"].as_str()) == Some(path))
            .collect();
        if all.len() > 1 {
            let edits = all
                .iter()
                .map(|o| {
                    let l = o.data.as_ref().and_then(|v| v["link"].as_str()).unwrap_or(link);
                    TextEdit::new(o.range, format!("[[{l}]]"))
                })
                .collect();
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Link every mention of `[[{shown}]]` in this note ({})", all.len()),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(all.iter().map(|o| (**o).clone()).collect()),
                edit: Some(edit(edits)),
                ..Default::default()
            }));
        }
    }
    out
}
