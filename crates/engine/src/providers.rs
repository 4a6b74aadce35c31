//! Which providers are configured, for health checks and status lines. Never a secret: URLs are
//! shown without credentials, keys only as whether they are set.

use std::path::PathBuf;

use serde::Serialize;

use crate::Engine;
use crate::config::{EmbedConfig, SearchProvider};
use scholia_providers::http::redact;

#[derive(Debug, Clone, Serialize)]
pub struct Providers {
    pub llm: Option<LlmInfo>,
    pub search: SearchInfo,
    pub sonar: Option<SonarInfo>,
    pub gemini_api: Option<GeminiApiInfo>,
    /// Where vectors come from, when embeddings are configured.
    pub embeddings: Option<EmbeddingsInfo>,
    /// The Gemini CLI program deep search runs.
    pub gemini_cli: String,
    pub data_dir: PathBuf,
    /// Settings of an untrusted vault that were ignored, and how to trust it.
    pub untrusted: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LlmInfo {
    pub model: String,
    pub base_url: String,
    /// Whether an API key is set.
    pub key: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchInfo {
    pub provider: &'static str,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SonarInfo {
    pub base_url: String,
    pub default_model: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingsInfo {
    /// `local` (a model directory), `hub` (a model named on a hub) or `endpoint`.
    pub source: &'static str,
    /// What it is, as messages show it (never a key).
    pub model: String,
    /// Whether a model named on a hub is in the cache yet; `None` for the others.
    pub fetched: Option<bool>,
    /// Why there are no vectors, once the model was asked for and could not be had (the
    /// warning a search gives).
    pub problem: Option<String>,
    /// How it reads, once it is loaded or connected.
    pub reads: Option<ReadingInfo>,
}

/// How a model reads: what a user checks after naming a model or setting prompts.
#[derive(Debug, Clone, Serialize)]
pub struct ReadingInfo {
    pub dimensions: usize,
    /// Tokens a text is read to (an endpoint's is assumed).
    pub max_tokens: usize,
    pub query_prompt: Option<String>,
    pub document_prompt: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GeminiApiInfo {
    pub base_url: String,
    pub agent: String,
}

impl Engine {
    /// Which providers are configured.
    pub fn providers(&self) -> Providers {
        let s = &self.settings;
        let search = match &s.search {
            SearchProvider::DuckDuckGo { url } => SearchInfo {
                provider: "duckduckgo",
                url: redact(url),
            },
            SearchProvider::Searxng { url } => SearchInfo {
                provider: "searxng",
                url: redact(url),
            },
        };
        Providers {
            llm: s.llm.as_ref().map(|l| LlmInfo {
                model: l.model.clone(),
                base_url: redact(&l.base_url),
                key: l.api_key.is_some(),
            }),
            search,
            sonar: s.openrouter.as_ref().map(|o| SonarInfo {
                base_url: redact(&o.base_url),
                default_model: self.sonar_tier(None).to_string(),
            }),
            gemini_api: s.gemini_api.as_ref().map(|(base, _)| GeminiApiInfo {
                base_url: redact(base),
                agent: self.gemini_agent(None),
            }),
            embeddings: s.embeddings.as_ref().map(|e| EmbeddingsInfo {
                source: match e {
                    EmbedConfig::Local { .. } => "local",
                    EmbedConfig::Hub { .. } => "hub",
                    EmbedConfig::Endpoint(_) => "endpoint",
                },
                model: e.describe(),
                fetched: match e {
                    EmbedConfig::Hub { model, cache, .. } => Some(model.is_fetched(cache)),
                    _ => None,
                },
                problem: self.embedder.get().and_then(|built| built.as_ref().err().cloned()),
                reads: self
                    .embedder
                    .get()
                    .and_then(|built| built.as_ref().ok().cloned().flatten())
                    .map(|m| {
                        let prompts = m.prompts();
                        ReadingInfo {
                            dimensions: m.dims(),
                            max_tokens: m.max_tokens(),
                            query_prompt: prompts.query,
                            document_prompt: prompts.document,
                        }
                    }),
            }),
            gemini_cli: s.gemini_cli.program.clone(),
            data_dir: s.dirs.data.clone(),
            untrusted: s.untrusted.as_ref().map(|u| u.to_string()),
        }
    }

    /// The Sonar tier a request gets: the one it names, else `[sonar] model`, else `sonar`.
    pub fn sonar_tier<'a>(&'a self, asked: Option<&'a str>) -> &'a str {
        asked
            .or(self.settings.sonar_model.as_deref())
            .unwrap_or(scholia_providers::sonar::DEFAULT_MODEL)
    }

    /// The Gemini deep-research agent a task gets: the one it names, else `[tasks] agent` /
    /// GEMINI_DEEP_RESEARCH_AGENT, else the seed's.
    pub fn gemini_agent(&self, asked: Option<&str>) -> String {
        asked
            .map(str::to_string)
            .or_else(|| self.settings.gemini_agent.clone())
            .unwrap_or_else(|| scholia_providers::interactions::AGENT.to_string())
    }
}
