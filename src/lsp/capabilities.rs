//! What the server offers (`server`) and what it reads of the client's capabilities
//! (`read_client`): encodings, progress, snippets, pulled diagnostics, refreshes, whether the
//! client applies `documentChanges` and renames files in them, `window/showDocument`.

use tower_lsp_server::ls_types::*;

use super::COMMANDS;
use super::State;
use super::documents::Encoding;

/// The server's capabilities, positions in `encoding`.
pub fn server(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["[".into(), "#".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
            identifier: Some(super::names::SOURCE.into()),
            inter_file_dependencies: true,
            workspace_diagnostics: false,
            work_done_progress_options: Default::default(),
        })),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: None,
            file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                will_rename: Some(renamed_notes()),
                did_rename: Some(renamed_notes()),
                ..Default::default()
            }),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// What the server needs to know of the client, kept in `state`.
pub fn read_client(state: &State, params: &InitializeParams) {
    let _ = state.work_done_progress.set(
        params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
    );
    let _ = state.snippet_support.set(
        params
            .capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false),
    );
    let text_caps = params.capabilities.text_document.as_ref();
    let _ = state
        .pull_diagnostics
        .set(text_caps.and_then(|t| t.diagnostic.as_ref()).is_some());
    let workspace_caps = params.capabilities.workspace.as_ref();
    let _ = state.diagnostic_refresh.set(
        workspace_caps
            .and_then(|w| w.diagnostics.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false),
    );
    let _ = state.code_lens_refresh.set(
        workspace_caps
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false),
    );
    let edit_caps = workspace_caps.and_then(|w| w.workspace_edit.as_ref());
    let document_changes = edit_caps.and_then(|e| e.document_changes).unwrap_or(false);
    let _ = state.document_changes.set(document_changes);
    let _ = state.renames_files.set(
        document_changes
            && edit_caps
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Rename)),
    );
    let _ = state.show_document.set(
        params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support),
    );
}

/// The renames the server follows: notes (by extension, any case) and folders.
fn renamed_notes() -> FileOperationRegistrationOptions {
    FileOperationRegistrationOptions {
        filters: vec![
            FileOperationFilter {
                scheme: Some("file".into()),
                pattern: FileOperationPattern {
                    glob: "**/*.{md,markdown,txt}".into(),
                    matches: Some(FileOperationPatternKind::File),
                    options: Some(FileOperationPatternOptions {
                        ignore_case: Some(true),
                    }),
                },
            },
            FileOperationFilter {
                scheme: Some("file".into()),
                pattern: FileOperationPattern {
                    glob: "**".into(),
                    matches: Some(FileOperationPatternKind::Folder),
                    options: None,
                },
            },
        ],
    }
}
