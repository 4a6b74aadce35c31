//! The language server: a thin adapter from LSP to the engine API. It answers `initialize` at
//! once; builds the engine and opens the vault session in the background (indexing shows as
//! `$/progress`); serves symbols, definitions and completions from the index; keeps open
//! buffers (unsaved text included) searchable; and runs the research pipelines from code
//! actions as engine jobs that end in an edit of the buffer.

mod capabilities;
mod commands;
mod create_note;
mod diagnostics;
mod documents;
mod edits;
mod errors;
mod hover;
mod lens;
mod links;
mod mentions;
mod names;
mod navigation;
mod progress;
mod queries;
mod rename_here;
mod root;
mod settings;
mod start;
mod tags;
mod writer;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

pub use commands::{ACTIONS, COMMANDS};
pub use queries::TASK_ACTIONS;

/// What the server offers editors, in one JSON document (`scholia lsp --describe`): commands,
/// code-action titles, `scholia.tasks` actions, settings (initializationOptions keys) and
/// environment variables. Editor plugins are checked against it.
pub fn describe() -> serde_json::Value {
    serde_json::json!({
        "name": "scholia",
        "version": env!("CARGO_PKG_VERSION"),
        "commands": COMMANDS,
        "code_actions": ACTIONS.iter().map(|(title, command)| serde_json::json!({"title": title, "command": command})).collect::<Vec<_>>(),
        "task_actions": TASK_ACTIONS,
        "task_kinds": scholia_tasks::Kind::NAMES,
        "settings": scholia_engine::config::FileConfig::KEYS.iter().map(|(k, what)| serde_json::json!({"key": k, "description": what})).collect::<Vec<_>>(),
        "env": scholia_engine::config::ENV_VARS.iter().map(|(k, what)| serde_json::json!({"name": k, "description": what})).collect::<Vec<_>>(),
    })
}

use documents::{Document, Encoding};
use scholia_base::Error;
use scholia_engine::config::{Dirs, FileConfig};
use scholia_engine::{Engine, Host, Jobs, NotePath};

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
    runtime.block_on(async { serve(crate::stdio::input(), crate::stdio::output(), config).await });
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

type EngineState = Option<Result<Arc<Engine>, Error>>;

pub(crate) struct State {
    env: HashMap<String, String>,
    /// Jobs of this server: indexing and every command (the engine shares the registry).
    jobs: Jobs,
    /// initializationOptions (same shape as `.scholia.toml`), or why they are invalid.
    options: Mutex<Result<Option<FileConfig>, Error>>,
    /// The engine once built, or why it could not be.
    engine: watch::Sender<EngineState>,
    /// The vault this server serves, the task runner, their shutdown.
    host: Host,
    /// The vault's root, canonical, once decided.
    root: root::Root,
    /// What the user is to be told about the vault once the client is initialized.
    said: Mutex<Option<root::Said>>,
    encoding: OnceLock<Encoding>,
    work_done_progress: OnceLock<bool>,
    snippet_support: OnceLock<bool>,
    /// The client asks for diagnostics (`textDocument/diagnostic`) rather than being sent them.
    pull_diagnostics: OnceLock<bool>,
    diagnostic_refresh: OnceLock<bool>,
    code_lens_refresh: OnceLock<bool>,
    /// The client applies `documentChanges`, and renames files in them (eglot 1.9 does not:
    /// it drops the rename and keeps the text edits).
    document_changes: OnceLock<bool>,
    renames_files: OnceLock<bool>,
    /// The client opens documents the server asks it to (`window/showDocument`).
    show_document: OnceLock<bool>,
    docs: Mutex<HashMap<Uri, Document>>,
    /// URIs of notes answers named lately: building one (a path joined, percent-encoded and
    /// parsed) was a tenth of a `workspace/symbol` answer.
    uris: Mutex<HashMap<String, Uri>>,
}

/// URIs kept at most; the cache starts over when full.
const URIS_KEPT: usize = 4096;

impl State {
    fn new(env: HashMap<String, String>) -> State {
        State {
            env,
            jobs: Jobs::default(),
            options: Mutex::new(Ok(None)),
            engine: watch::channel(None).0,
            host: Host::default(),
            root: root::Root::default(),
            said: Mutex::new(None),
            encoding: OnceLock::new(),
            work_done_progress: OnceLock::new(),
            snippet_support: OnceLock::new(),
            pull_diagnostics: OnceLock::new(),
            diagnostic_refresh: OnceLock::new(),
            code_lens_refresh: OnceLock::new(),
            document_changes: OnceLock::new(),
            renames_files: OnceLock::new(),
            show_document: OnceLock::new(),
            docs: Mutex::new(HashMap::new()),
            uris: Mutex::new(HashMap::new()),
        }
    }

    fn encoding(&self) -> Encoding {
        *self.encoding.get().unwrap_or(&Encoding::Utf16)
    }

    fn snippet_support(&self) -> bool {
        *self.snippet_support.get().unwrap_or(&false)
    }

    fn pulls_diagnostics(&self) -> bool {
        *self.pull_diagnostics.get().unwrap_or(&false)
    }

    fn diagnostic_refresh(&self) -> bool {
        *self.diagnostic_refresh.get().unwrap_or(&false)
    }

    fn code_lens_refresh(&self) -> bool {
        *self.code_lens_refresh.get().unwrap_or(&false)
    }

    fn document_changes(&self) -> bool {
        *self.document_changes.get().unwrap_or(&false)
    }

    fn renames_files(&self) -> bool {
        *self.renames_files.get().unwrap_or(&false)
    }

    fn shows_documents(&self) -> bool {
        *self.show_document.get().unwrap_or(&false)
    }

    fn supports_progress(&self) -> bool {
        *self.work_done_progress.get().unwrap_or(&false)
    }

    /// Open documents; a handler that panicked while holding the lock does not poison it.
    fn docs(&self) -> MutexGuard<'_, HashMap<Uri, Document>> {
        scholia_base::lock(&self.docs)
    }

    /// The engine, waiting for it while it is being built.
    async fn engine(&self) -> Result<Arc<Engine>, Error> {
        let mut rx = self.engine.subscribe();
        let built = rx.wait_for(Option::is_some).await;
        match built.as_deref() {
            Ok(Some(r)) => r.clone(),
            _ => Err(Error::internal("the server is shutting down")),
        }
    }

    /// Once the vault is decided, requests that need it wait for it to open (bounded) rather
    /// than answer that there is none.
    fn vault_decided(&self) {
        if let Some(root) = self.root.get()
            && matches!(self.host.vault().get(), Err(e) if e.code == "NO_VAULT")
        {
            self.host.vault().mark_opening(&root);
        }
    }

    /// A vault error as the editor is told it: without a vault, why and how to set one.
    fn vault_error(&self, e: Error) -> tower_lsp_server::jsonrpc::Error {
        match e.code {
            "NO_VAULT" => errors::rpc(&Error::new(
                "NO_VAULT",
                scholia_base::ErrorKind::NotConfigured,
                self.root.missing(),
            )),
            _ => errors::rpc(&e),
        }
    }

    /// The engine if it is built, without waiting for it.
    fn engine_now(&self) -> Option<Arc<Engine>> {
        self.engine.borrow().as_ref().and_then(|r| r.as_ref().ok().cloned())
    }

    /// The open vault's index, if any.
    fn index(&self) -> Option<Arc<scholia_index::VaultIndex>> {
        self.host.vault().ready().map(|v| v.index().clone())
    }

    /// The text of `uri`: the open buffer, else the file on disk (off the runtime).
    async fn text(&self, uri: &Uri) -> Option<String> {
        if let Some(doc) = self.docs().get(uri) {
            return Some(doc.text.clone());
        }
        let path = uri.to_file_path()?.into_owned();
        scholia_base::spawn_blocking(move || scholia_vault::read::read_note(&path).ok()).await
    }

    /// The note `uri` names, when it is a note of the vault (whether or not the vault's
    /// index is open yet).
    async fn note(&self, uri: &Uri) -> Option<NotePath> {
        let known = self.docs().get(uri).and_then(|d| d.path.clone());
        let path = match known {
            Some(p) => p,
            None => canonical(uri).await?,
        };
        self.note_at(path)
    }

    fn note_at(&self, abs: PathBuf) -> Option<NotePath> {
        let root = self.root.get()?;
        if !scholia_vault::paths::has_note_extension(&abs) {
            return None;
        }
        let rel = scholia_vault::paths::relative(&root, &abs)?;
        Some(NotePath { rel, abs })
    }

    /// The vault-relative path of `uri`, when it is a note of the vault.
    async fn rel(&self, uri: &Uri) -> Option<String> {
        self.note(uri).await.map(|n| n.rel)
    }

    /// The error for a `uri` that is not a note of the vault, or the reason there is no vault.
    fn not_a_note(&self, uri: &str) -> tower_lsp_server::jsonrpc::Error {
        match self.root.get() {
            Some(root) => errors::invalid(format!("uri: {uri} is not a note of the vault {}", root.display())),
            None => errors::invalid(self.root.missing()),
        }
    }

    /// The URI of a vault-relative path (the root is decided once, so the cache never goes
    /// stale).
    fn uri_of(&self, rel: &str) -> Option<Uri> {
        if let Some(uri) = scholia_base::lock(&self.uris).get(rel) {
            return Some(uri.clone());
        }
        let uri = Uri::from_file_path(self.root.get()?.join(rel))?;
        let mut uris = scholia_base::lock(&self.uris);
        if uris.len() >= URIS_KEPT {
            uris.clear();
        }
        uris.insert(rel.to_string(), uri.clone());
        Some(uri)
    }

    /// Tells the index about the unsaved text of an open buffer.
    fn buffer_changed(&self, uri: &Uri) {
        let Some(vault) = self.host.vault().ready() else { return };
        let Some((path, text)) = self
            .docs()
            .get(uri)
            .and_then(|d| Some((d.path.clone()?, d.text.clone())))
        else {
            return;
        };
        if let Some(note) = self.note_at(path) {
            vault.buffer_changed(&note.rel, text);
        }
    }
}

/// The canonical path of a `file://` URI: an existing regular file, or a new file in an
/// existing directory (an unsaved buffer). Off the runtime.
async fn canonical(uri: &Uri) -> Option<PathBuf> {
    let path = uri.to_file_path()?.into_owned();
    scholia_base::spawn_blocking(move || match path.canonicalize() {
        Ok(p) if p.is_file() => Some(p),
        Ok(_) => None,
        Err(_) if path.exists() => None,
        Err(_) => {
            let parent = path.parent()?.canonicalize().ok()?;
            Some(parent.join(path.file_name()?))
        }
    })
    .await
}

pub struct Backend {
    client: Client,
    state: Arc<State>,
}

impl Backend {
    async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        if let Some(id) = progress::job_of(&params.token) {
            self.state.jobs.cancel(id);
        }
    }

    fn new(client: Client, config: LspConfig) -> Backend {
        Backend {
            client,
            state: Arc::new(State::new(config.env)),
        }
    }
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
        capabilities::read_client(&self.state, &params);
        let options = match params.initialization_options.as_ref().filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) => FileConfig::from_json(v).map(Some).map_err(Error::from),
        };
        let setting = options
            .as_ref()
            .ok()
            .and_then(|o| o.as_ref())
            .and_then(|o| o.vault())
            .map(PathBuf::from);
        let home = self.state.env.get("HOME").map(PathBuf::from);
        let said = self.state.root.init(setting, root::client_root(&params), home).await;
        *scholia_base::lock(&self.state.said) = said;
        self.state.vault_decided();
        *scholia_base::lock(&self.state.options) = options;
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "scholia".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: capabilities::server(encoding),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tokio::spawn(start::start(self.client.clone(), self.state.clone()));
    }

    async fn shutdown(&self) -> RpcResult<()> {
        self.state.jobs.cancel_all();
        self.state.host.shutdown().await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        self.state
            .docs()
            .insert(doc.uri.clone(), Document::new(doc.text, doc.version));
        let path = canonical(&doc.uri).await;
        if let Some(d) = self.state.docs().get_mut(&doc.uri) {
            d.path = path.clone();
        }
        if let Some(said) = match path {
            Some(p) => self.state.root.note_opened(&p).await,
            None => None,
        } {
            root::tell(&self.client, said).await;
        }
        self.state.vault_decided();
        self.state.buffer_changed(&doc.uri);
        diagnostics::schedule(&self.client, &self.state, &doc.uri);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let enc = self.state.encoding();
        {
            let mut docs = self.state.docs();
            // The same file under another spelling of its URI (percent-encoding, a client
            // that renamed the buffer): the document moves to the URI the client now uses.
            if !docs.contains_key(&uri)
                && let Some(path) = uri.to_file_path()
                && let Some(old) = docs
                    .keys()
                    .find(|k| k.to_file_path().is_some_and(|p| p == path))
                    .cloned()
                && let Some(doc) = docs.remove(&old)
            {
                docs.insert(uri.clone(), doc);
            }
            if !docs.contains_key(&uri)
                && let [TextDocumentContentChangeEvent { range: None, text, .. }] = params.content_changes.as_slice()
            {
                // Never opened here, but the client sent the whole text: it is open now.
                docs.insert(uri.clone(), Document::new(text.clone(), params.text_document.version));
            }
            let Some(doc) = docs.get_mut(&uri) else {
                tracing::warn!("didChange for a document that is not open: {}", uri.as_str());
                return;
            };
            for change in params.content_changes {
                doc.apply(change, enc);
            }
            doc.version = params.text_document.version;
        }
        self.state.buffer_changed(&uri);
        diagnostics::schedule(&self.client, &self.state, &uri);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if let Some(said) = settings::settings_changed(&self.state, params.settings).await {
            root::tell(&self.client, said).await;
        }
    }

    async fn did_save(&self, _: DidSaveTextDocumentParams) {
        // The buffer overlay already holds the saved text (the watcher sees the file too): a
        // save applies it now instead of after the typing pause.
        if let Some(vault) = self.state.host.vault().ready() {
            vault.buffer_saved();
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let doc = self.state.docs().remove(&uri);
        let (Some(vault), Some(path)) = (self.state.host.vault().ready(), doc.and_then(|d| d.path)) else {
            return;
        };
        if let Some(note) = self.state.note_at(path) {
            vault.buffer_closed(&note.rel);
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
        let uri = &params.text_document.uri;
        let mut actions = create_note::actions(&self.state, uri, params.range).await;
        if let Some((found, version)) = diagnostics::compute(&self.state, uri).await {
            actions.extend(mentions::actions(uri, version, &found, params.range));
        }
        actions.extend(commands::source_actions(&params.context.diagnostics, uri));
        if let Some(research) = commands::code_actions(&self.state, uri, params.range).await {
            actions.extend(research);
        }
        Ok((!actions.is_empty()).then_some(actions))
    }

    async fn references(&self, params: ReferenceParams) -> RpcResult<Option<Vec<Location>>> {
        let p = params.text_document_position;
        links::references(
            &self.state,
            p.text_document.uri,
            p.position,
            params.context.include_declaration,
        )
        .await
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> RpcResult<Option<PrepareRenameResponse>> {
        links::prepare_rename(&self.state, params.text_document.uri, params.position).await
    }

    async fn rename(&self, params: RenameParams) -> RpcResult<Option<WorkspaceEdit>> {
        let p = params.text_document_position;
        links::rename(
            &self.state,
            &self.client,
            p.text_document.uri,
            p.position,
            params.new_name,
        )
        .await
    }

    async fn will_rename_files(&self, params: RenameFilesParams) -> RpcResult<Option<WorkspaceEdit>> {
        links::will_rename_files(&self.state, params).await
    }

    async fn did_rename_files(&self, params: RenameFilesParams) {
        links::did_rename_files(&self.client, &self.state, params).await
    }

    async fn hover(&self, params: HoverParams) -> RpcResult<Option<Hover>> {
        let p = params.text_document_position_params;
        hover::hover(&self.state, p.text_document.uri, p.position).await
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> RpcResult<Option<DocumentSymbolResponse>> {
        hover::document_symbols(&self.state, params.text_document.uri).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> RpcResult<Option<Vec<CodeLens>>> {
        lens::code_lenses(&self.state, params.text_document.uri).await
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> RpcResult<DocumentDiagnosticReportResult> {
        diagnostics::pull(&self.state, params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> RpcResult<Option<serde_json::Value>> {
        commands::execute(&self.client, &self.state, params).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handler that panics while holding the documents does not take every later request
    /// down with it.
    #[test]
    fn a_panicking_handler_does_not_poison_the_documents() {
        let state = Arc::new(State::new(HashMap::new()));
        let uri: Uri = "file:///v/a.md".parse().unwrap();
        let s = state.clone();
        let u = uri.clone();
        let crashed = std::thread::spawn(move || {
            let mut docs = s.docs();
            docs.insert(u, Document::new("x".into(), 1));
            panic!("a bug in a handler");
        })
        .join();
        assert!(crashed.is_err());
        assert!(state.docs.is_poisoned());
        assert_eq!(state.docs().get(&uri).map(|d| d.text.clone()).as_deref(), Some("x"));
    }
}
