//! A server keeps its vault's vectors current: once the start-up sync is over it gets its
//! embedder (a model loaded, an endpoint asked) off the runtime, computes what is missing or
//! stale, then again a little after each change the index commits — on threads of lowered
//! priority, so that answers to the editor and the agent come first.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Source;
use crate::VaultSession;

/// How long after a change the vectors are brought up to date (edits come in bursts).
const SETTLE: Duration = Duration::from_secs(5);

/// The pool vectors are computed on: every core, at lowered priority.
fn background_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("scholia-vectors-{i}"))
            .start_handler(|_| scholia_base::lower_priority())
            .build()
            .expect("a thread pool")
    })
}

impl VaultSession {
    /// Lets a server's embedder be got later (see [`VaultSession::keep_meaning`]).
    pub fn set_meaning_source(&self, source: Source) {
        *scholia_base::lock(&self.meaning_source) = Some(source);
    }

    /// Computes the vault's vectors now (a command: `scholia index`), reporting progress.
    /// Blocking.
    pub fn embed_now(
        &self,
        progress: &mut dyn FnMut(crate::EmbedProgress),
        stop: &dyn Fn() -> bool,
    ) -> Result<crate::Embedded, crate::IndexError> {
        self.index().embed_pending(progress, stop)
    }

    pub(crate) async fn keep_meaning(self: Arc<Self>, shutdown: CancellationToken) {
        let Some(source) = scholia_base::lock(&self.meaning_source).take() else {
            return;
        };
        let mut synced = self.synced.subscribe();
        tokio::select! {
            _ = shutdown.cancelled() => return,
            done = synced.wait_for(|s| *s) => if done.is_err() { return },
        }
        let Some(embedder) = scholia_base::spawn_blocking(source).await else {
            return;
        };
        self.index().set_embedder(embedder);
        let mut changes = self.index().changes();
        loop {
            let (index, stop) = (self.index().clone(), shutdown.clone());
            let done = scholia_base::spawn_blocking(move || index.embed_in_background(&|| stop.is_cancelled())).await;
            if let Ok(Some(warning)) = done.as_ref().map(|d| d.warning.as_ref()) {
                tracing::warn!("vectors: {warning}");
            }
            match done {
                Ok(d) if d.embedded + d.removed > 0 => tracing::info!(
                    "vectors: {} notes embedded ({} tokens), {} removed, {} kept",
                    d.embedded,
                    d.tokens,
                    d.removed,
                    d.kept
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("vectors: {e}"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(SETTLE) => {}
            }
        }
    }
}

impl crate::VaultIndex {
    /// Computes the vectors missing or stale as a server does, on the background pool (every
    /// core, lowered priority), until `stop`. `benches/embed.rs --busy` measures the answers
    /// given meanwhile. Blocking.
    pub fn embed_in_background(&self, stop: &(dyn Fn() -> bool + Sync)) -> Result<crate::Embedded, crate::IndexError> {
        background_pool().install(|| self.embed_pending(&mut |_| {}, stop))
    }
}
