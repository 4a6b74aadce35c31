//! Background indexing for the language server: open the index, sync it with `$/progress`,
//! then keep it current (watcher + open buffers). A second server on the same vault follows
//! the first one's commits and takes over the writer when the first goes away.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;

use super::State;
use super::progress::Reporter;
use crate::config::Settings;
use crate::index::{Progress, Updates, VaultIndex, WriterOptions};
use crate::research::Engine;
use crate::vault::Vault;

const TAKE_OVER_EVERY: Duration = Duration::from_secs(3);

pub async fn start(client: Client, state: Arc<State>, root: PathBuf) {
    let vault = match Vault::open(&root) {
        Ok(v) => v,
        Err(e) => {
            tracing::error!("{e}");
            client.show_message(MessageType::ERROR, format!("scholia: {e}")).await;
            return;
        }
    };
    let dir = state.dirs.index_dir(vault.root());
    let reporter = Reporter::begin(
        &client,
        state.supports_progress(),
        "scholia/index".into(),
        "Indexing vault",
        false,
    )
    .await;
    let opened = tokio::task::spawn_blocking(move || VaultIndex::open(vault, &dir, WriterOptions::default())).await;
    let index = match opened {
        Ok(Ok(index)) => Arc::new(index),
        Ok(Err(e)) => return fail(&client, reporter, e.to_string()).await,
        Err(e) => return fail(&client, reporter, e.to_string()).await,
    };
    tracing::info!(vault = %index.vault().root().display(), index = %index.dir().display(), "index opened");
    *state.index.write().unwrap() = Some(index.clone());
    build_engine(&client, &state, &index).await;
    if index.is_writer() {
        sync_and_watch(&client, &state, &index, reporter).await;
        return;
    }
    reporter
        .end(format!(
            "read-only: another scholia process keeps this index ({} notes)",
            index.num_notes()
        ))
        .await;
    tracing::info!("another process holds the index writer; following its commits");
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(TAKE_OVER_EVERY) => {}
        }
        let idx = index.clone();
        if let Ok(Ok(true)) = tokio::task::spawn_blocking(move || idx.try_acquire_writer()).await {
            tracing::info!("took over the index writer");
            let reporter = Reporter::begin(
                &client,
                state.supports_progress(),
                "scholia/index".into(),
                "Indexing vault",
                false,
            )
            .await;
            sync_and_watch(&client, &state, &index, reporter).await;
            return;
        }
    }
}

/// Settings (environment, `.scholia.toml`, initializationOptions) and the research engine.
async fn build_engine(client: &Client, state: &Arc<State>, index: &Arc<VaultIndex>) {
    let options = state.options.get().cloned().unwrap_or(Ok(None));
    let engine = options
        .and_then(|o| Settings::load(&state.env, Some(index.vault().root()), o.as_ref()).map_err(|e| e.to_string()))
        .and_then(|s| Engine::new(s, index.clone()).map_err(|e| e.to_string()));
    if let Ok(e) = &engine {
        crate::gemini_cli::GeminiCli::startup_cleanup(&e.settings.dirs.config);
    }
    match &engine {
        Ok(e) if e.llm.is_none() => tracing::info!("no LLM configured: research runs offline"),
        Ok(e) => tracing::info!(
            "research LLM: {} at {}",
            e.settings.llm.as_ref().map(|l| l.model.as_str()).unwrap_or(""),
            e.settings.llm.as_ref().map(|l| l.base_url.as_str()).unwrap_or("")
        ),
        Err(message) => {
            tracing::error!("configuration: {message}");
            client
                .show_message(MessageType::ERROR, format!("scholia: {message}"))
                .await;
        }
    }
    *state.engine.write().unwrap() = Some(engine.map(Arc::new));
}

async fn fail(client: &Client, reporter: Reporter, message: String) {
    tracing::error!("indexing failed: {message}");
    reporter.end(format!("failed: {message}")).await;
    client
        .show_message(MessageType::ERROR, format!("scholia: indexing failed: {message}"))
        .await;
}

async fn sync_and_watch(client: &Client, state: &Arc<State>, index: &Arc<VaultIndex>, reporter: Reporter) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let idx = index.clone();
    let job = tokio::task::spawn_blocking(move || {
        idx.sync(&mut |p| {
            let _ = tx.send(p);
        })
    });
    let mut last = Instant::now() - Duration::from_secs(1);
    while let Some(p) = rx.recv().await {
        match p {
            Progress::Started { total, unchanged } => {
                reporter
                    .report(format!("{unchanged} unchanged, {total} to index"), Some(0))
                    .await;
            }
            Progress::Indexed {
                done,
                total,
                searchable,
            } => {
                if done == total || last.elapsed() >= Duration::from_millis(100) {
                    last = Instant::now();
                    let pct = (done * 100).checked_div(total).unwrap_or(100) as u32;
                    reporter
                        .report(format!("{done}/{total} notes ({searchable} searchable)"), Some(pct))
                        .await;
                }
            }
        }
    }
    let summary = match job.await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return fail(client, reporter, e.to_string()).await,
        Err(e) => return fail(client, reporter, e.to_string()).await,
    };
    let message = format!(
        "{} notes: {} indexed, {} unchanged, {} skipped, {} failed in {:.2}s",
        summary.total_notes(),
        summary.indexed,
        summary.unchanged,
        summary.skipped.len(),
        summary.failed.len(),
        summary.elapsed.as_secs_f64()
    );
    tracing::info!("{message}");
    for s in summary.skipped.iter().chain(&summary.failed) {
        tracing::info!("not indexed: {} ({})", s.path, s.reason);
    }
    reporter.end(message).await;
    match Updates::start(index.clone(), true) {
        Ok(updates) => {
            let open: Vec<_> = state
                .docs
                .lock()
                .unwrap()
                .iter()
                .map(|(u, d)| (u.clone(), d.text.clone()))
                .collect();
            *state.updates.lock().unwrap() = Some(updates);
            for (uri, text) in open {
                state.buffer_changed(&uri, text);
            }
        }
        Err(e) => tracing::warn!("index updates disabled: {e}"),
    }
}
