//! "Create note `X`" on a link to a note that does not exist: the note is made on disk (from
//! the vault's template for new notes when it has one — `New note`, or its only template —
//! else with its title) and opened (`window/showDocument`). A quick fix running a command,
//! not a workspace edit: Neovim and Emacs made such an edit an unsaved hidden buffer.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::diagnostics;
use super::errors::{invalid, rpc};

pub use super::names::CREATE_NOTE;

/// The quick fixes for the unresolved links under `range`.
pub async fn actions(state: &State, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let Some((found, _)) = diagnostics::compute(state, uri).await else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in found {
        let Some(target) = d.data.as_ref().and_then(|v| v["create"].as_str()) else {
            continue;
        };
        if d.range.end < range.start || range.end < d.range.start {
            continue;
        }
        let Ok(rel) = scholia_index::renamed_path("new.md", target, "link") else {
            continue;
        };
        // Only where a note may be made: no file of that name there (one the index ignores,
        // binary, or differing in case included), not in an ignored folder, inside the scope.
        let Some(index) = state.index() else { continue };
        let r = rel.clone();
        let free = scholia_base::spawn_blocking(move || index.check_destination("link", &r, None).is_ok()).await;
        if !free {
            continue;
        }
        let title = format!("Create note `{rel}`");
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: title.clone(),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![d.clone()]),
            command: Some(Command {
                title,
                command: CREATE_NOTE.into(),
                arguments: Some(vec![json!({"path": rel})]),
            }),
            is_preferred: Some(true),
            ..Default::default()
        }));
    }
    out
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The new note's vault path.
    path: String,
}

/// `scholia.createNote {path}`: the note on disk, then opened; answers its URI.
pub async fn execute(client: &Client, state: &State, arguments: Vec<Value>) -> RpcResult<Option<Value>> {
    let a: Args = arguments
        .into_iter()
        .next()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| {
            invalid(format!(
                "{CREATE_NOTE}: arguments: give {{path}}, the new note's vault path"
            ))
        })?;
    let vault = state.host.vault().get().map_err(|e| state.vault_error(e))?;
    let v = vault.clone();
    let template = scholia_base::spawn_blocking(move || v.new_note_template()).await;
    let title = scholia_vault::stem(&a.path).to_string();
    let content = match template {
        Some(_) => String::new(),
        None => format!("# {title}\n\n"),
    };
    let created = vault
        .create_note(&a.path, &content, template.as_deref())
        .await
        .map_err(|e| rpc(&e))?;
    let uri = state.uri_of(&created.path);
    if let Some(uri) = &uri
        && state.shows_documents()
    {
        let params = ShowDocumentParams {
            uri: uri.clone(),
            external: Some(false),
            take_focus: Some(true),
            selection: None,
        };
        let _ = client.show_document(params).await;
    }
    Ok(Some(
        json!({"uri": uri.map(|u| u.as_str().to_string()), "path": created.path, "template": created.template}),
    ))
}
