//! The language server: a thin adapter from LSP to the engine. It answers `initialize` at
//! once, indexes in the background, serves symbols, definitions and completions from the
//! index, and keeps open buffers (unsaved text included) searchable.

mod actions;
mod documents;
mod indexing;
mod navigation;
mod progress;
mod selection;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::config::{Dirs, FileConfig};
use crate::index::{Updates, VaultIndex};
use crate::research::Engine;
use documents::{Document, Encoding};

/// What the server needs from its environment: the variables it reads settings from (the
/// process environment, or a map in tests).
#[derive(Debug, Clone)]
pub struct LspConfig {
    pub env: HashMap<String, String>,
}

impl LspConfig {
    pub fn from_process() -> LspConfig {
        LspConfig {
            env: std::env::vars().collect(),
        }
    }
}

/// Runs the server on stdin/stdout until the client exits.
pub fn serve_stdio() -> anyhow::Result<()> {
    let config = LspConfig::from_process();
    Dirs::from_env(&config.env)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout(), config));
    // Background indexing threads must not keep the process alive after `exit`.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
}

/// Runs the server over any byte streams (stdio, or in-process pipes in tests).
pub async fn serve<I, O>(input: I, output: O, config: LspConfig)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (service, socket) = LspService::build(|client| Backend::new(client, config))
        .custom_method("window/workDoneProgress/cancel", Backend::cancel_progress)
        .finish();
    Server::new(input, output, socket).serve(service).await;
}

pub(crate) struct State {
    env: HashMap<String, String>,
    dirs: Dirs,
    /// initializationOptions (same shape as `.scholia.toml`), or why they are invalid.
    options: OnceLock<Result<Option<FileConfig>, String>>,
    /// The research engine once the index is open, or why it could not be built.
    engine: RwLock<Option<Result<Arc<Engine>, String>>>,
    /// Running commands by progress token, for `window/workDoneProgress/cancel`.
    running: Mutex<HashMap<String, CancellationToken>>,
    root: OnceLock<Option<PathBuf>>,
    encoding: OnceLock<Encoding>,
    work_done_progress: OnceLock<bool>,
    index: RwLock<Option<Arc<VaultIndex>>>,
    updates: Mutex<Option<Updates>>,
    docs: Mutex<HashMap<Uri, Document>>,
    shutdown: CancellationToken,
}

impl State {
    fn encoding(&self) -> Encoding {
        *self.encoding.get().unwrap_or(&Encoding::Utf16)
    }

    fn supports_progress(&self) -> bool {
        *self.work_done_progress.get().unwrap_or(&false)
    }

    fn index(&self) -> Option<Arc<VaultIndex>> {
        self.index.read().unwrap().clone()
    }

    fn engine(&self) -> Result<Arc<Engine>, String> {
        match &*self.engine.read().unwrap() {
            Some(Ok(e)) => Ok(e.clone()),
            Some(Err(e)) => Err(e.clone()),
            None => Err("the vault is still being opened; try again in a moment".into()),
        }
    }

    /// The text of `uri`: the open buffer, else the file on disk.
    fn text(&self, uri: &Uri) -> Option<String> {
        if let Some(doc) = self.docs.lock().unwrap().get(uri) {
            return Some(doc.text.clone());
        }
        let path = uri.to_file_path()?;
        crate::vault::read::read_note(&path).ok()
    }

    /// The vault-relative path of `uri`, when it is a note of the vault.
    fn rel(&self, uri: &Uri) -> Option<String> {
        let index = self.index()?;
        let path = uri.to_file_path()?;
        let path = path.canonicalize().ok().or_else(|| {
            let parent = path.parent()?.canonicalize().ok()?;
            Some(parent.join(path.file_name()?))
        })?;
        if !crate::vault::paths::has_note_extension(&path) {
            return None;
        }
        index.vault().rel(&path)
    }

    fn uri_of(&self, rel: &str) -> Option<Uri> {
        let index = self.index()?;
        Uri::from_file_path(index.vault().abs(rel))
    }

    /// Tells the index about the unsaved text of an open buffer.
    fn buffer_changed(&self, uri: &Uri, text: String) {
        let Some(rel) = self.rel(uri) else { return };
        if let Some(updates) = self.updates.lock().unwrap().as_ref() {
            updates.buffer_changed(&rel, text);
        }
    }
}

pub struct Backend {
    client: Client,
    state: Arc<State>,
}

impl Backend {
    async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        actions::cancel(&self.state, &params.token);
    }

    fn new(client: Client, config: LspConfig) -> Backend {
        let dirs = Dirs::from_env(&config.env).unwrap_or_else(|e| {
            tracing::error!("{e}");
            Dirs {
                config: "/nonexistent".into(),
                data: "/nonexistent".into(),
                cache: std::env::temp_dir().join("scholia"),
            }
        });
        Backend {
            client,
            state: Arc::new(State {
                env: config.env,
                dirs,
                options: OnceLock::new(),
                engine: RwLock::new(None),
                running: Mutex::new(HashMap::new()),
                root: OnceLock::new(),
                encoding: OnceLock::new(),
                work_done_progress: OnceLock::new(),
                index: RwLock::new(None),
                updates: Mutex::new(None),
                docs: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
            }),
        }
    }
}

/// The vault: `initializationOptions.vault`, else the first workspace folder, else the root URI.
#[allow(deprecated)]
fn vault_root(params: &InitializeParams, options: Option<&FileConfig>) -> Option<PathBuf> {
    let from_options = options.and_then(|o| o.vault()).map(PathBuf::from);
    from_options
        .or_else(|| {
            params
                .workspace_folders
                .as_ref()
                .and_then(|f| f.first())
                .and_then(|f| f.uri.to_file_path().map(|p| p.into_owned()))
        })
        .or_else(|| {
            params
                .root_uri
                .as_ref()
                .and_then(|u| u.to_file_path().map(|p| p.into_owned()))
        })
        .or_else(|| params.root_path.as_ref().map(PathBuf::from))
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        let encoding = Encoding::negotiate(
            params
                .capabilities
                .general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        );
        let _ = self.state.encoding.set(encoding);
        let _ = self.state.work_done_progress.set(
            params
                .capabilities
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
        );
        let options = match params.initialization_options.as_ref().filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) => FileConfig::from_json(v).map(Some).map_err(|e| e.to_string()),
        };
        let _ = self
            .state
            .root
            .set(vault_root(&params, options.as_ref().ok().and_then(|o| o.as_ref())));
        let _ = self.state.options.set(options);
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "scholia".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
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
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: actions::COMMANDS.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let root = self.state.root.get().cloned().flatten();
        match root {
            Some(root) => {
                tokio::spawn(indexing::start(self.client.clone(), self.state.clone(), root));
            }
            None => tracing::warn!("no workspace folder or `vault` option: running without a vault index"),
        }
    }

    async fn shutdown(&self) -> RpcResult<()> {
        self.state.shutdown.cancel();
        for t in self.state.running.lock().unwrap().values() {
            t.cancel();
        }
        let updates = self.state.updates.lock().unwrap().take();
        // Stopping the updater joins its thread: not on the async runtime.
        if let Some(u) = updates {
            let _ = tokio::task::spawn_blocking(move || drop(u)).await;
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        self.state
            .docs
            .lock()
            .unwrap()
            .insert(doc.uri.clone(), Document::new(doc.text.clone(), doc.version));
        self.state.buffer_changed(&doc.uri, doc.text);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let enc = self.state.encoding();
        let text = {
            let mut docs = self.state.docs.lock().unwrap();
            let Some(doc) = docs.get_mut(&uri) else {
                tracing::warn!("didChange for a document that is not open: {}", uri.as_str());
                return;
            };
            for change in params.content_changes {
                doc.apply(change, enc);
            }
            doc.version = params.text_document.version;
            doc.text.clone()
        };
        self.state.buffer_changed(&uri, text);
    }

    async fn did_save(&self, _: DidSaveTextDocumentParams) {
        // The watcher sees the file; the buffer overlay already holds the same text.
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.docs.lock().unwrap().remove(&uri);
        if let Some(rel) = self.state.rel(&uri)
            && let Some(updates) = self.state.updates.lock().unwrap().as_ref()
        {
            updates.buffer_closed(&rel);
        }
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> RpcResult<Option<WorkspaceSymbolResponse>> {
        navigation::symbols(&self.state, params.query).await
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> RpcResult<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        navigation::definition(&self.state, p.text_document.uri, p.position).await
    }

    async fn completion(&self, params: CompletionParams) -> RpcResult<Option<CompletionResponse>> {
        let p = params.text_document_position;
        navigation::completion(&self.state, p.text_document.uri, p.position).await
    }

    async fn code_action(&self, params: CodeActionParams) -> RpcResult<Option<CodeActionResponse>> {
        Ok(actions::code_actions(
            &self.state,
            &params.text_document.uri,
            params.range,
        ))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> RpcResult<Option<serde_json::Value>> {
        actions::execute(&self.client, &self.state, params).await
    }
}
