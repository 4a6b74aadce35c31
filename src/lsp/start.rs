//! The server's start: the engine is built, the vault decided (from the workspace or the
//! first note opened), then opened and kept current, with diagnostics and symbols following
//! each commit of the index.

use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::{State, diagnostics, progress, root, settings, writer};
use scholia_base::Error;
use scholia_engine::config::Dirs;
use scholia_index::{INDEXING, VaultSession};

/// How long the server waits for the first note to decide the vault before it builds an
/// engine without one (editors open the note right after `initialized`).
const ROOT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Builds the engine, then opens the vault and keeps it current. Each failure is shown once.
pub async fn start(client: Client, state: Arc<State>) {
    let said = scholia_base::lock(&state.said).take();
    if let Some(said) = said {
        root::tell(&client, said).await;
    }
    let mut root = state.root.wait(Some(ROOT_WAIT)).await;
    let engine = settings::build_engine(&state, false).await;
    match &engine {
        Ok(e) => {
            if let Some(untrusted) = e.untrusted().cloned() {
                tokio::spawn(settings::offer_trust(client.clone(), state.clone(), untrusted));
            }
            // Background research tasks run in the language server while it lives; without a
            // desktop session a finished one is shown as a message.
            let announcer = client.clone();
            let handle = tokio::runtime::Handle::current();
            let announce: scholia_tasks::Announce = Arc::new(move |line: String| {
                let client = announcer.clone();
                handle.spawn(async move { client.show_message(MessageType::INFO, line).await });
            });
            state.host.run_tasks(e.clone(), Some(announce));
        }
        Err(e) => {
            tracing::error!("configuration: {e}");
            client.show_message(MessageType::ERROR, format!("scholia: {e}")).await;
        }
    }
    let mut runner_engine = engine.as_ref().ok().cloned();
    state.engine.send_replace(Some(engine));

    if root.is_none() {
        tracing::info!("no vault yet: waiting for a note of one to be opened");
        root = state.root.wait(None).await;
        // The vault's own settings apply from now on.
        let engine = settings::build_engine(&state, false).await;
        runner_engine = engine.as_ref().ok().cloned();
        state.engine.send_replace(Some(engine));
    }
    let Some(root) = root else { return };
    let dirs = match Dirs::from_env(&state.env) {
        Ok(d) => d,
        Err(e) => {
            let e = Error::from(e);
            client.show_message(MessageType::ERROR, format!("scholia: {e}")).await;
            return;
        }
    };
    let start_job = {
        let (client, state) = (client.clone(), state.clone());
        move || {
            let supported = state.supports_progress();
            state
                .jobs
                .start(INDEXING, false, |job| progress::sink(&client, supported, job))
        }
    };
    let on_open = {
        let (state, client) = (state.clone(), client.clone());
        move |vault: &Arc<VaultSession>| {
            let uris: Vec<Uri> = state.docs().keys().cloned().collect();
            for uri in &uris {
                state.buffer_changed(uri);
            }
            // Diagnostics and lenses follow the index: a note created, renamed or deleted
            // anywhere changes what the open notes' links resolve to.
            // Held weakly: the server's state owns the index whose changes are awaited.
            // Symbol search reads names from memory: each commit's new segments are read
            // now, not by the next query.
            let (mut commits, index) = (vault.index().changes(), Arc::downgrade(vault.index()));
            tokio::spawn(async move {
                loop {
                    let Some(index) = index.upgrade() else { return };
                    if let Err(e) = scholia_base::spawn_blocking(move || index.warm_names()).await {
                        tracing::debug!("reading note names for symbols: {e}");
                    }
                    if commits.changed().await.is_err() {
                        return;
                    }
                }
            });
            let mut changes = vault.index().changes();
            let (state, client) = (Arc::downgrade(&state), client.clone());
            tokio::spawn(async move {
                loop {
                    let Some(s) = state.upgrade() else { return };
                    diagnostics::refresh_all(&client, &s).await;
                    drop(s);
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            });
        }
    };
    // Research-note tasks on this vault land in the editor's buffer when it is open.
    let writer = {
        let (state, client) = (state.clone(), client.clone());
        move |_: &Arc<VaultSession>| -> Arc<dyn scholia_engine::NoteWriter> {
            Arc::new(writer::HostedWriter::new(client.clone(), &state))
        }
    };
    let served = state
        .host
        .serve_vault(runner_engine, root, dirs, &start_job, Some(&writer), &on_open)
        .await;
    if let Err(e) = served {
        client.show_message(MessageType::ERROR, format!("scholia: {e}")).await;
    }
}
