//! What a pipeline may use: the clients, the limits and the prompt library, built once by the
//! engine's composition root.

use std::sync::Arc;
use std::time::Duration;

use scholia_prompts::Library;
use scholia_providers::gemini_cli::GeminiCli;
use scholia_providers::llm::ChatClient;
use scholia_providers::sonar::Sonar;
use scholia_providers::web::fetch::Fetcher;
use scholia_providers::web::search::WebSearch;
use tokio::sync::Semaphore;

use crate::deep_search::DeepSearchBackend;

/// The pipelines' view of the world.
pub struct Context {
    pub library: Library,
    /// The research LLM; `None` runs research offline.
    pub llm: Option<Arc<ChatClient>>,
    pub search: Arc<dyn WebSearch>,
    /// Web searches at once (providers rate-limit bursts).
    pub search_permits: Arc<Semaphore>,
    /// One deadline per web search, retries included.
    pub search_timeout: Duration,
    pub fetcher: Fetcher,
    /// How long one page fetch may take.
    pub page_timeout: Duration,
    /// One handle, so the `--version` probe runs once per process.
    pub gemini: GeminiCli,
    /// The Gemini CLI's model for rounds and for JSON correction (`None`: the CLI's default).
    pub gemini_model: Option<String>,
    pub gemini_correction_model: Option<String>,
    /// `None` when OpenRouter is not configured.
    pub sonar: Option<Sonar>,
    pub deep_search: DeepSearchDefaults,
    /// The embedder, when meaning is configured (built on first use, blocking): long pages'
    /// passages are chosen by it.
    pub embedder: EmbedderSource,
}

/// Gets the embedder when one is configured (blocking; `None` without one or when it failed).
pub type EmbedderSource = Arc<dyn Fn() -> Option<Arc<dyn scholia_embed::Embedder>> + Send + Sync>;

/// deep_search's defaults when a request does not say.
#[derive(Debug, Clone, Copy)]
pub struct DeepSearchDefaults {
    pub max_iterations: u32,
    /// `None`: the Gemini CLI when installed, else the LLM.
    pub backend: Option<DeepSearchBackend>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("llm", &self.llm.as_ref().map(|l| l.model().to_string()))
            .field("deep_search", &self.deep_search)
            .finish_non_exhaustive()
    }
}
