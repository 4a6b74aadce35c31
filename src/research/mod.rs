//! Research pipelines over one engine: `research_note` (note.rs, offline.rs). Surfaces (CLI,
//! LSP, MCP) build an [`Engine`], run a pipeline with a progress callback and a cancellation
//! token, then write the result their own way.

pub mod citations;
pub mod deep_search;
pub mod note;
mod offline;
pub mod sonar;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::config::{SearchProvider, Settings};
use crate::index::VaultIndex;
use crate::llm::ChatClient;
use crate::prompts::{Library, TemplateError};
use crate::web::fetch::Fetcher;
use crate::web::search::{DuckDuckGo, Searxng, WebSearch};

pub use note::{Depth, NoteRequest, NoteResearch, ResearchError, Source};

/// Progress of a pipeline, for `$/progress` and terminal output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Event {
    Started {
        mode: &'static str,
        depth: Depth,
    },
    TopicsFound {
        topics: Vec<String>,
    },
    TopicGathered {
        done: usize,
        total: usize,
        topic: String,
    },
    SourcesGathered {
        web: usize,
        vault: usize,
        pages: usize,
        failed: usize,
    },
    Synthesizing,
    Checked {
        citations_removed: usize,
    },
}

impl Event {
    /// One line for humans.
    pub fn message(&self) -> String {
        match self {
            Event::Started { mode: "offline", .. } => "researching offline (no language model configured)".into(),
            Event::Started { depth, .. } => format!("researching ({})", depth.as_str()),
            Event::TopicsFound { topics } => format!("{} topics: {}", topics.len(), topics.join(", ")),
            Event::TopicGathered { done, total, topic } => format!("gathered {done}/{total}: {topic}"),
            Event::SourcesGathered {
                web,
                vault,
                pages,
                failed,
            } => {
                let mut m = format!("sources gathered: {web} web, {vault} vault");
                if *pages > 0 {
                    m.push_str(&format!(", {pages} pages read"));
                }
                if *failed > 0 {
                    m.push_str(&format!(", {failed} failed"));
                }
                m
            }
            Event::Synthesizing => "writing the synthesis".into(),
            Event::Checked { citations_removed: 0 } => "citations checked".into(),
            Event::Checked { citations_removed } => format!("citations checked: {citations_removed} removed"),
        }
    }
}

/// Receives pipeline events; must not block.
pub type Progress<'a> = &'a (dyn Fn(Event) + Send + Sync);

/// Everything a pipeline needs: settings, prompts, the vault index and the remote clients.
pub struct Engine {
    pub settings: Settings,
    pub library: Library,
    /// `None` for pipelines that need no vault (deep_search, ask from the CLI).
    index: Option<Arc<VaultIndex>>,
    pub llm: Option<Arc<ChatClient>>,
    pub search: Arc<dyn WebSearch>,
    pub fetcher: Fetcher,
    /// Web searches at once (providers rate-limit bursts).
    pub search_permits: Arc<Semaphore>,
    pub page_timeout: Duration,
    /// The Sonar client, made on first use: it holds the in-flight table and the answer cache.
    sonar: std::sync::OnceLock<Arc<sonar::Sonar>>,
}

impl Engine {
    pub fn new(settings: Settings, index: Arc<VaultIndex>) -> Result<Engine, TemplateError> {
        Engine::build(settings, Some(index))
    }

    /// An engine for the pipelines that read no vault.
    pub fn without_vault(settings: Settings) -> Result<Engine, TemplateError> {
        Engine::build(settings, None)
    }

    fn build(settings: Settings, index: Option<Arc<VaultIndex>>) -> Result<Engine, TemplateError> {
        let library = Library::load(Some(&settings.dirs.config))?;
        let search: Arc<dyn WebSearch> = match &settings.search {
            SearchProvider::DuckDuckGo { url } => Arc::new(DuckDuckGo::new(url)),
            SearchProvider::Searxng { url } => Arc::new(Searxng::new(url)),
        };
        Ok(Engine {
            llm: settings.llm.clone().map(|c| Arc::new(ChatClient::new(c))),
            fetcher: Fetcher::new(settings.allow_private_hosts),
            search_permits: Arc::new(Semaphore::new(settings.search_concurrency.max(1))),
            page_timeout: note::PAGE_TIMEOUT,
            sonar: std::sync::OnceLock::new(),
            library,
            search,
            index,
            settings,
        })
    }

    /// The Sonar tiers' client; an error when OpenRouter is not configured.
    pub fn sonar(&self) -> Result<Arc<sonar::Sonar>, sonar::SonarError> {
        let config = self
            .settings
            .openrouter
            .clone()
            .ok_or(sonar::SonarError::NotConfigured)?;
        if let Some(s) = self.sonar.get() {
            return Ok(s.clone());
        }
        let system = self
            .library
            .render("prompts/sonar-system.md", serde_json::json!({}))
            .map_err(|e| sonar::SonarError::Other(e.to_string()))?;
        Ok(self
            .sonar
            .get_or_init(|| Arc::new(sonar::Sonar::new(config, system)))
            .clone())
    }

    pub fn has_vault(&self) -> bool {
        self.index.is_some()
    }

    /// The vault index. Vault pipelines check [`Engine::has_vault`] on entry.
    pub fn index(&self) -> &Arc<VaultIndex> {
        self.index
            .as_ref()
            .expect("a vault pipeline runs on an engine with a vault")
    }

    pub fn vault(&self) -> &crate::vault::Vault {
        self.index().vault()
    }
}
