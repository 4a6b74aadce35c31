//! The editor's note-writer: a note open in the editor is read from its buffer and written as a
//! versioned `workspace/applyEdit` computed against the buffer as it is then (recomputed once
//! when the editor finds it stale); a closed note goes to the disk writer.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use scholia_engine::{BoxFuture, DiskWriter, NotePath, NoteWriter, SectionEdit, WriteError};
use scholia_vault::section;

const APPLY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct EditorWriter {
    client: Client,
    state: Arc<State>,
}

impl EditorWriter {
    pub fn new(client: Client, state: Arc<State>) -> EditorWriter {
        EditorWriter { client, state }
    }

    /// The open document holding `note`.
    fn open(&self, note: &NotePath) -> Option<(Uri, Document)> {
        self.state
            .docs()
            .iter()
            .find(|(_, d)| d.path.as_deref() == Some(note.abs.as_path()))
            .map(|(uri, d)| (uri.clone(), d.clone()))
    }

    async fn write_open(&self, note: &NotePath, edit: &SectionEdit) -> Result<bool, WriteError> {
        for attempt in 0..2 {
            let Some((uri, doc)) = self.open(note) else {
                return DiskWriter.write(note, edit).await;
            };
            // Parsing a large note is work: off the runtime.
            let (text, change) = (doc.text.clone(), edit.clone());
            let computed = scholia_base::spawn_blocking(move || {
                let new_text = change.apply(&text)?;
                Ok::<_, WriteError>((new_text != text).then(|| section::minimal_edit(&text, &new_text)))
            })
            .await?;
            let Some((range, new)) = computed else {
                return Ok(false);
            };
            let lsp_range = doc.range(range, self.state.encoding());
            let version = doc.version;
            let workspace_edit = WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri,
                        version: Some(version),
                    },
                    edits: vec![OneOf::Left(TextEdit::new(lsp_range, new))],
                }])),
                ..Default::default()
            };
            match tokio::time::timeout(APPLY_TIMEOUT, self.client.apply_edit(workspace_edit)).await {
                Ok(Ok(r)) if r.applied => return Ok(true),
                Ok(Ok(r)) => {
                    tracing::info!("edit not applied (attempt {}): {:?}", attempt + 1, r.failure_reason);
                    // Give the editor's didChange a moment to arrive before recomputing.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(e)) => return Err(WriteError::EditorRefused(e.to_string())),
                Err(_) => return Err(WriteError::EditorTimeout),
            }
        }
        Err(WriteError::EditorRejected)
    }
}

impl NoteWriter for EditorWriter {
    fn read<'a>(&'a self, note: &'a NotePath) -> BoxFuture<'a, Result<String, WriteError>> {
        Box::pin(async move {
            match self.open(note) {
                Some((_, doc)) => Ok(doc.text),
                None => DiskWriter.read(note).await,
            }
        })
    }

    fn write<'a>(&'a self, note: &'a NotePath, edit: &'a SectionEdit) -> BoxFuture<'a, Result<bool, WriteError>> {
        Box::pin(self.write_open(note, edit))
    }
}

/// The editor writer as the engine keeps it for research-note tasks: the server's state held
/// weakly (the engine is owned by that state), the disk once the server is gone.
pub struct HostedWriter {
    client: Client,
    state: std::sync::Weak<State>,
}

impl HostedWriter {
    pub fn new(client: Client, state: &Arc<State>) -> HostedWriter {
        HostedWriter {
            client,
            state: Arc::downgrade(state),
        }
    }

    fn editor(&self) -> Option<EditorWriter> {
        Some(EditorWriter::new(self.client.clone(), self.state.upgrade()?))
    }
}

impl NoteWriter for HostedWriter {
    fn read<'a>(&'a self, note: &'a NotePath) -> BoxFuture<'a, Result<String, WriteError>> {
        Box::pin(async move {
            match self.editor() {
                Some(w) => w.read(note).await,
                None => DiskWriter.read(note).await,
            }
        })
    }

    fn write<'a>(&'a self, note: &'a NotePath, edit: &'a SectionEdit) -> BoxFuture<'a, Result<bool, WriteError>> {
        Box::pin(async move {
            match self.editor() {
                Some(w) => w.write(note, edit).await,
                None => DiskWriter.write(note, edit).await,
            }
        })
    }
}
