//! The shape of `.scholia.toml` and of LSP initializationOptions: every key, what it holds,
//! and which keys only a trusted vault may set.

use serde::Deserialize;

pub const CONFIG_FILE: &str = ".scholia.toml";

use super::ConfigError;
use scholia_providers::llm::Price;

/// The shape of `.scholia.toml` and of LSP initializationOptions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub(super) llm: FileLlm,
    #[serde(default)]
    pub(super) search: FileSearch,
    #[serde(default)]
    pub(super) sonar: FileSonar,
    #[serde(default)]
    pub(super) deep_search: FileDeepSearch,
    #[serde(default)]
    pub(super) tasks: FileTasks,
    #[serde(default)]
    pub(super) embeddings: FileEmbeddings,
    /// LSP only: the vault root.
    #[serde(default)]
    pub(super) vault: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileLlm {
    pub(super) base_url: Option<String>,
    pub(super) model: Option<String>,
    /// Name of the environment variable holding the key (keys do not belong in a vault file).
    pub(super) api_key_env: Option<String>,
    pub(super) max_concurrency: Option<usize>,
    pub(super) timeout_secs: Option<u64>,
    /// The model's context window in tokens, when the server does not say.
    pub(super) context_tokens: Option<u32>,
    pub(super) price: Option<Price>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileSearch {
    pub(super) provider: Option<String>,
    pub(super) url: Option<String>,
    pub(super) max_concurrency: Option<usize>,
    pub(super) timeout_secs: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileTasks {
    /// USD per million tokens of Gemini deep research, for estimates and costs.
    pub(super) price: Option<Price>,
    /// `postgres://…`: the task store a team's hosts share.
    pub(super) database_url: Option<String>,
}

/// Embeddings: a local sentence-transformers directory, or an OpenAI-compatible endpoint.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileEmbeddings {
    pub(super) model_path: Option<String>,
    pub(super) hub_model: Option<String>,
    pub(super) hub_url: Option<String>,
    pub(super) base_url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) api_key_env: Option<String>,
    pub(super) query_prompt: Option<String>,
    pub(super) document_prompt: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileSonar {
    pub(super) model: Option<String>,
}

/// A number written as a TOML/JSON integer or as a string (environment-style).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum IntOrString {
    Int(i64),
    Str(String),
}

impl IntOrString {
    pub(super) fn text(&self) -> String {
        match self {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::Str(s) => s.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDeepSearch {
    pub(super) backend: Option<String>,
    pub(super) timeout_secs: Option<u64>,
    pub(super) max_iterations: Option<IntOrString>,
    pub(super) gemini_cli: Option<String>,
    pub(super) model: Option<String>,
    pub(super) correction_model: Option<String>,
}

impl FileConfig {
    /// Every key `.scholia.toml` and initializationOptions take, dotted, with what it holds
    /// (editor plugins are checked against this list).
    pub const KEYS: &'static [(&'static str, &'static str)] = &[
        ("vault", "string: the vault root (language server only)"),
        (
            "llm.base_url",
            "string: research LLM base URL (OpenAI-compatible, …/v1)",
        ),
        ("llm.model", "string: research LLM model"),
        (
            "llm.api_key_env",
            "string: the environment variable holding the LLM key",
        ),
        ("llm.max_concurrency", "integer: LLM calls at once"),
        ("llm.timeout_secs", "integer: seconds per LLM call"),
        ("llm.context_tokens", "integer: the model's context window"),
        ("llm.price", "table {input, output}: USD per million tokens"),
        ("search.provider", "string: duckduckgo or searxng"),
        ("search.url", "string: the search provider's base URL"),
        ("search.max_concurrency", "integer: web searches at once"),
        ("search.timeout_secs", "integer: seconds per search"),
        ("sonar.model", "string: default Sonar tier of Ask"),
        ("deep_search.backend", "string: gemini-cli or llm"),
        ("deep_search.timeout_secs", "integer: seconds per Gemini CLI run"),
        (
            "deep_search.max_iterations",
            "integer: rounds at most (up to 50; below 2 runs 2 rounds)",
        ),
        ("deep_search.gemini_cli", "string: the Gemini CLI executable"),
        ("deep_search.model", "string: model of the search rounds"),
        ("deep_search.correction_model", "string: model of JSON correction"),
        (
            "tasks.price",
            "table {input, output}: USD per million tokens of Gemini deep research",
        ),
        (
            "tasks.database_url",
            "string: postgres://… the task store a team's hosts share (default: SQLite in the data directory)",
        ),
        (
            "embeddings.model_path",
            "string: a sentence-transformers model directory run in-process",
        ),
        (
            "embeddings.hub_model",
            "string: owner/name[@revision] of a sentence-transformers model, fetched into the cache on first use and run in-process",
        ),
        (
            "embeddings.hub_url",
            "string: the hub hub_model is fetched from (default https://huggingface.co)",
        ),
        (
            "embeddings.base_url",
            "string: an OpenAI-compatible embeddings API (…/v1)",
        ),
        ("embeddings.model", "string: the embeddings endpoint's model"),
        (
            "embeddings.api_key_env",
            "string: the environment variable holding the embeddings key",
        ),
        (
            "embeddings.query_prompt",
            "string: put before a question (e.g. \"search_query: \" for nomic-embed-text), in place of the model's own",
        ),
        (
            "embeddings.document_prompt",
            "string: put before a note (e.g. \"search_document: \"), in place of the model's own",
        ),
    ];

    pub fn from_toml(text: &str) -> Result<FileConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::File {
            file: CONFIG_FILE.into(),
            message: e.message().to_string(),
            line: e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1),
        })
    }

    pub fn from_json(value: &serde_json::Value) -> Result<FileConfig, ConfigError> {
        serde_json::from_value(value.clone()).map_err(|e| ConfigError::File {
            file: "initializationOptions".into(),
            message: e.to_string(),
            line: None,
        })
    }

    pub fn vault(&self) -> Option<&str> {
        self.vault.as_deref()
    }

    /// The keys this file sets that only a trusted vault may set: what runs a program, picks an
    /// endpoint or a credential, or spends the user's money (the model, and limits that
    /// multiply calls or tokens).
    pub fn sensitive_keys(&self) -> Vec<&'static str> {
        let set = [
            ("llm.base_url", self.llm.base_url.is_some()),
            ("llm.model", self.llm.model.is_some()),
            ("llm.api_key_env", self.llm.api_key_env.is_some()),
            ("llm.max_concurrency", self.llm.max_concurrency.is_some()),
            ("llm.context_tokens", self.llm.context_tokens.is_some()),
            ("sonar.model", self.sonar.model.is_some()),
            ("deep_search.max_iterations", self.deep_search.max_iterations.is_some()),
            ("search.provider", self.search.provider.is_some()),
            ("search.url", self.search.url.is_some()),
            ("deep_search.gemini_cli", self.deep_search.gemini_cli.is_some()),
            ("deep_search.model", self.deep_search.model.is_some()),
            (
                "deep_search.correction_model",
                self.deep_search.correction_model.is_some(),
            ),
            ("embeddings.model_path", self.embeddings.model_path.is_some()),
            ("embeddings.hub_model", self.embeddings.hub_model.is_some()),
            ("embeddings.hub_url", self.embeddings.hub_url.is_some()),
            ("embeddings.base_url", self.embeddings.base_url.is_some()),
            ("embeddings.model", self.embeddings.model.is_some()),
            ("embeddings.api_key_env", self.embeddings.api_key_env.is_some()),
            ("embeddings.query_prompt", self.embeddings.query_prompt.is_some()),
            ("embeddings.document_prompt", self.embeddings.document_prompt.is_some()),
            ("tasks.database_url", self.tasks.database_url.is_some()),
        ];
        debug_assert!(set.iter().all(|(k, _)| super::trust::SENSITIVE.contains(k)));
        set.iter().filter(|(_, on)| *on).map(|(k, _)| *k).collect()
    }

    pub(super) fn strip_sensitive(&mut self) {
        self.llm.model = None;
        self.llm.base_url = None;
        self.llm.api_key_env = None;
        self.llm.max_concurrency = None;
        self.llm.context_tokens = None;
        self.sonar.model = None;
        self.deep_search.max_iterations = None;
        self.search.provider = None;
        self.search.url = None;
        self.deep_search.gemini_cli = None;
        self.deep_search.model = None;
        self.deep_search.correction_model = None;
        self.embeddings = FileEmbeddings::default();
        self.tasks.database_url = None;
    }
}
