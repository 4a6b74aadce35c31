//! Renaming a note for an editor that cannot rename files (eglot 1.9 advertises
//! `documentChanges` without `resourceOperations`: it would apply the link edits and drop the
//! file rename, leaving every rewritten link dangling). scholia moves the note on disk itself
//! with the closed linking notes, all or nothing (`VaultIndex::move_for_editor`), returns the
//! edits of the linking notes open in the editor for it to apply, and opens the note at its
//! new path (`window/showDocument`). A renamed note with unsaved changes is refused.

use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::edits::{Snapshot, retitle, workspace_edit};
use super::errors;

pub async fn rename(
    state: &State,
    client: &Client,
    from: String,
    to: String,
    texts: Snapshot,
) -> RpcResult<Option<WorkspaceEdit>> {
    let Some(index) = state.index() else { return Ok(None) };
    let open = texts.open_notes();
    let versions = texts.versions();
    let was_open = open.contains(&from);
    let (f, t) = (from.clone(), to.clone());
    let (moved, buffers) =
        scholia_base::blocking(move || index.move_for_editor(&f, &t, &texts, &open, &|plan| retitle(plan, &texts)))
            .await
            .map_err(|e| errors::rpc(&e))?;
    tracing::info!(
        "renamed on disk for an editor that cannot rename files: {}",
        scholia_base::Summary::summary(&moved)
    );
    if was_open
        && state.shows_documents()
        && let Some(uri) = state.uri_of(&to)
    {
        let client = client.clone();
        tokio::spawn(async move {
            let params = ShowDocumentParams {
                uri,
                external: Some(false),
                take_focus: Some(true),
                selection: None,
            };
            let _ = client.show_document(params).await;
        });
    }
    Ok(Some(workspace_edit(state, buffers, &versions, None)))
}
