//! Meaning for the vault: the embedder the settings choose, built once per process (loading a
//! local model or asking an endpoint its dimensions is blocking and takes a moment), and handed
//! to a vault session — at once for a command, lazily for a server (its first answers never
//! wait for a model).

use std::sync::Arc;

use scholia_embed::{EmbedError, Embedder};
use scholia_index::VaultSession;

use super::Engine;
use super::config::EmbedConfig;

/// The embedder, or why there is none (said once, by whoever asked: the CLI on stderr, a
/// server in its log).
pub(crate) type Built = Result<Option<Arc<dyn Embedder>>, String>;

/// How long building the embedder waits for an endpoint's first answer (a local model loads
/// as fast either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patience {
    /// A command someone waits on (`scholia search`): a dead or hung endpoint gives way to
    /// words within seconds.
    Quick,
    /// The vault's vectors (`scholia index`, a server's background, research): a cold model
    /// may take its time to load.
    Patient,
}

/// The embedder `config` chooses, built once into `cell` (the engine and the pipelines'
/// context share one). `stop` ends an endpoint's first answer or a model's fetch early; the
/// failure is kept like any other (only a process that is ending stops). `fetched` hears the
/// bytes of a model fetched so far. Blocking.
pub(crate) fn build(
    cell: &std::sync::OnceLock<Built>,
    config: Option<&EmbedConfig>,
    patience: Patience,
    stop: &dyn Fn() -> bool,
    fetched: &mut dyn FnMut(u64),
) -> Built {
    cell.get_or_init(|| {
        let Some(config) = config else {
            return Ok(None);
        };
        let built: Result<Arc<dyn Embedder>, EmbedError> = match config {
            EmbedConfig::Local { path, prompts } => scholia_embed::local::LocalModel::load(path)
                .map(|m| Arc::new(m.with_prompts(prompts)) as Arc<dyn Embedder>),
            // A command someone waits on does not wait for a download: `scholia index` and
            // the servers' background fetch it.
            EmbedConfig::Hub { model, .. } if patience == Patience::Quick && config.awaits_download() => {
                Err(EmbedError::Model {
                    path: model.describe(),
                    message: "not fetched yet; `scholia index` (or the editor's or agent's server, in the background) fetches it once into the cache directory".into(),
                })
            }
            EmbedConfig::Hub { model, cache, prompts } => scholia_providers::hub::fetch(model, cache, stop, fetched)
                .and_then(|dir| scholia_embed::local::LocalModel::load(&dir))
                .map(|m| Arc::new(m.with_prompts(prompts)) as Arc<dyn Embedder>),
            EmbedConfig::Endpoint(c) => {
                let probe = match patience {
                    Patience::Quick => scholia_providers::embeddings::QUICK,
                    Patience::Patient => scholia_providers::embeddings::BULK,
                };
                scholia_providers::embeddings::EndpointEmbedder::connect(c.clone(), probe, stop)
                    .map(|m| Arc::new(m) as Arc<dyn Embedder>)
            }
        };
        built.map(Some).map_err(|e| match e {
            EmbedError::Stopped(when) => {
                format!("embeddings: stopped {when}; words answer until the vectors are made")
            }
            e => format!("embeddings: {e}; search and related notes use words only"),
        })
    })
    .clone()
}

/// Whether building the embedder would download a model first (a named one not yet in the
/// cache, nor built): research, which reads meaning on its way, goes on by words instead of
/// waiting for it (`scholia index` and the servers' background fetch it). Said in the log.
pub(crate) fn would_download(cell: &std::sync::OnceLock<Built>, config: Option<&EmbedConfig>) -> bool {
    let waits = cell.get().is_none() && config.is_some_and(EmbedConfig::awaits_download);
    if waits {
        tracing::warn!("embeddings: the model is not fetched yet; research relates notes by words this time");
    }
    waits
}

impl Engine {
    /// The embedder the settings choose, built on first use; `Ok(None)` when none is
    /// configured, `Err` (a warning) when it could not be had. Blocking.
    pub(crate) fn embedder(&self, patience: Patience) -> Result<Option<Arc<dyn Embedder>>, String> {
        build(
            &self.embedder,
            self.settings.embeddings.as_ref(),
            patience,
            &|| false,
            &mut |_| {},
        )
    }

    /// The endpoint a command would wait on to start its vectors (as messages show it, never
    /// its key), when one is configured and not yet asked: for a terminal to say what it waits
    /// for.
    pub fn meaning_waits_on(&self) -> Option<String> {
        match self.settings.embeddings.as_ref()? {
            c @ EmbedConfig::Hub { model, cache, .. } if self.embedder.get().is_none() && c.awaits_download() => {
                Some(format!(
                    "{} to be fetched into {} (once)",
                    model.describe(),
                    model.dir(cache).display()
                ))
            }
            EmbedConfig::Endpoint(c) if self.embedder.get().is_none() => Some(format!(
                "{}/embeddings",
                scholia_providers::http::redact(c.base_url.trim_end_matches('/'))
            )),
            _ => None,
        }
    }

    /// Gives `session` the embedder now, for a command that computes the vault's vectors
    /// (`scholia index`: an endpoint's cold model may take its time, a named model is fetched,
    /// until `stop`; `fetched` hears the bytes of the model so far); the warning, when
    /// embeddings are configured and could not be had, for the caller to show. Blocking.
    pub fn meaning_to_index(
        &self,
        session: &VaultSession,
        stop: &dyn Fn() -> bool,
        fetched: &mut dyn FnMut(u64),
    ) -> Option<String> {
        self.use_meaning(session, Patience::Patient, stop, fetched)
    }

    /// [`Engine::meaning_to_index`] for a search someone waits on: a dead or hung endpoint
    /// gives way to words within seconds. Blocking.
    pub fn meaning_to_search(&self, session: &VaultSession) -> Option<String> {
        self.use_meaning(session, Patience::Quick, &|| false, &mut |_| {})
    }

    fn use_meaning(
        &self,
        session: &VaultSession,
        patience: Patience,
        stop: &dyn Fn() -> bool,
        fetched: &mut dyn FnMut(u64),
    ) -> Option<String> {
        match build(
            &self.embedder,
            self.settings.embeddings.as_ref(),
            patience,
            stop,
            fetched,
        ) {
            Ok(Some(e)) => {
                session.index().set_embedder(e);
                None
            }
            Ok(None) => None,
            Err(warning) => Some(warning),
        }
    }

    /// Gives `session` the embedder before a pipeline reads it (research's related notes), off
    /// the runtime; nothing when it has one or none is configured (a failure is the warning
    /// search gives, and research goes on by words).
    pub(crate) async fn meaning_now(&self, session: &VaultSession) {
        if self.settings.embeddings.is_none() || session.index().embedder().is_some() {
            return;
        }
        if would_download(&self.embedder, self.settings.embeddings.as_ref()) {
            return;
        }
        let (cell, config) = (self.embedder.clone(), self.settings.embeddings.clone());
        let built = scholia_base::spawn_blocking(move || {
            build(&cell, config.as_ref(), Patience::Patient, &|| false, &mut |_| {})
        })
        .await;
        match built {
            Ok(Some(e)) => session.index().set_embedder(e),
            Ok(None) => {}
            Err(warning) => tracing::warn!("{warning}"),
        }
    }

    /// Gives `session` a way to get the embedder later, off the runtime (a server: it loads
    /// the model in the background once the vault is indexed).
    pub fn meaning_for(self: &Arc<Self>, session: &VaultSession) {
        if self.settings.embeddings.is_none() {
            return;
        }
        let engine = self.clone();
        session.set_meaning_source(Box::new(move || {
            engine
                .embedder(Patience::Patient)
                .inspect_err(|warning| tracing::warn!("{warning}"))
                .ok()
                .flatten()
        }));
    }
}
