//! Where vectors come from: a sentence-transformers directory run in-process
//! (`SCHOLIA_EMBED_MODEL_PATH` / `embeddings.model_path`), else one named on a hub and fetched
//! into the cache directory on first use (`SCHOLIA_EMBED_HUB_MODEL` / `embeddings.hub_model`,
//! from `SCHOLIA_EMBED_HUB_URL` / `embeddings.hub_url`), else an OpenAI-compatible endpoint
//! (`SCHOLIA_EMBED_BASE_URL` + `SCHOLIA_EMBED_MODEL`, key in `SCHOLIA_EMBED_API_KEY` or the
//! variable `embeddings.api_key_env` names). `SCHOLIA_EMBED_QUERY_PROMPT` /
//! `embeddings.query_prompt` and `SCHOLIA_EMBED_DOCUMENT_PROMPT` / `embeddings.document_prompt`
//! go before questions and notes, whichever the source. In a vault's `.scholia.toml` these are
//! trusted-only: a cloned vault does not choose a program's weights, an endpoint, a credential,
//! or prompts that make a paid endpoint embed the whole vault again.

use std::path::{Path, PathBuf};

use scholia_embed::PromptSettings;
use scholia_providers::embeddings::EndpointConfig;
use scholia_providers::hub::{DEFAULT_HUB, HubModel};

use super::ConfigError;
use super::layers::{Layers, http_url};

/// Tokens an endpoint's model is assumed to read (texts are cut to about 4 characters each).
const ENDPOINT_TOKENS: usize = 512;
/// The longest prompt taken (an instruction with its `Query: ` is a few hundred).
const PROMPT_CHARS: usize = 1000;

#[derive(Debug, Clone)]
pub enum EmbedConfig {
    Local {
        path: PathBuf,
        prompts: PromptSettings,
    },
    /// A model named on a hub, kept under `cache` (the cache directory) once fetched.
    Hub {
        model: HubModel,
        cache: PathBuf,
        prompts: PromptSettings,
    },
    Endpoint(EndpointConfig),
}

impl EmbedConfig {
    /// Whether building the embedder downloads a model first: one named on a hub that is not
    /// in the cache yet.
    pub fn awaits_download(&self) -> bool {
        matches!(self, EmbedConfig::Hub { model, cache, .. } if !model.is_fetched(cache))
    }

    /// What it is, for messages (never a key).
    pub fn describe(&self) -> String {
        match self {
            EmbedConfig::Local { path, .. } => format!("the local model in {}", path.display()),
            EmbedConfig::Hub { model, cache, .. } => {
                format!(
                    "the model {} (kept in {})",
                    model.describe(),
                    model.dir(cache).display()
                )
            }
            EmbedConfig::Endpoint(c) => format!(
                "the endpoint {} (model {})",
                scholia_providers::http::redact(&c.base_url),
                c.model
            ),
        }
    }
}

/// A prompt the settings give: at most [`PROMPT_CHARS`] characters.
fn prompt(
    l: &Layers,
    key: &'static str,
    var: &'static str,
    file: fn(&super::file::FileConfig) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    let Some(p) = l.verbatim(key, var, file)? else {
        return Ok(None);
    };
    if p.value.chars().count() > PROMPT_CHARS {
        return Err(ConfigError::Invalid {
            field: p.field.into(),
            value: p.value.chars().take(40).chain("…".chars()).collect(),
            valid: format!("a prompt of at most {PROMPT_CHARS} characters"),
        });
    }
    Ok(Some(p.value))
}

pub(super) fn embeddings(l: &Layers, cache: &Path) -> Result<Option<EmbedConfig>, ConfigError> {
    let prompts = PromptSettings {
        query: prompt(l, "embeddings.query_prompt", "SCHOLIA_EMBED_QUERY_PROMPT", |f| {
            f.embeddings.query_prompt.clone()
        })?,
        document: prompt(l, "embeddings.document_prompt", "SCHOLIA_EMBED_DOCUMENT_PROMPT", |f| {
            f.embeddings.document_prompt.clone()
        })?,
    };
    if let Some(p) = l.text("embeddings.model_path", Some("SCHOLIA_EMBED_MODEL_PATH"), |f| {
        f.embeddings.model_path.clone()
    })? {
        let path = PathBuf::from(p.value.trim());
        if !path.is_dir() {
            return Err(ConfigError::Invalid {
                field: p.field.into(),
                value: p.value.clone(),
                valid: "a sentence-transformers model directory (config.json, model.safetensors, tokenizer.json, 1_Pooling/)".into(),
            });
        }
        return Ok(Some(EmbedConfig::Local { path, prompts }));
    }
    if let Some(name) = l.text("embeddings.hub_model", Some("SCHOLIA_EMBED_HUB_MODEL"), |f| {
        f.embeddings.hub_model.clone()
    })? {
        let hub = match l.text("embeddings.hub_url", Some("SCHOLIA_EMBED_HUB_URL"), |f| {
            f.embeddings.hub_url.clone()
        })? {
            Some(h) => http_url(h.field, h.value.trim())?,
            None => DEFAULT_HUB.to_string(),
        };
        let model = HubModel::parse(&name.value, &hub).map_err(|valid| ConfigError::Invalid {
            field: name.field.into(),
            value: name.value.clone(),
            valid,
        })?;
        return Ok(Some(EmbedConfig::Hub {
            model,
            cache: cache.to_path_buf(),
            prompts,
        }));
    }
    let Some(base) = l.text("embeddings.base_url", Some("SCHOLIA_EMBED_BASE_URL"), |f| {
        f.embeddings.base_url.clone()
    })?
    else {
        return Ok(None);
    };
    let base_url = http_url(base.field, &base.value)?;
    let model = l
        .text("embeddings.model", Some("SCHOLIA_EMBED_MODEL"), |f| {
            f.embeddings.model.clone()
        })?
        .filter(|m| !m.value.trim().is_empty())
        .ok_or_else(|| ConfigError::Invalid {
            field: "SCHOLIA_EMBED_MODEL".into(),
            value: String::new(),
            valid: format!(
                "the model of the embeddings endpoint set by {} (e.g. nomic-embed-text for Ollama)",
                base.field
            ),
        })?
        .value;
    let key_var = l
        .text("embeddings.api_key_env", None, |f| f.embeddings.api_key_env.clone())?
        .map_or_else(|| "SCHOLIA_EMBED_API_KEY".to_string(), |p| p.value);
    Ok(Some(EmbedConfig::Endpoint(EndpointConfig {
        base_url,
        model: model.trim().to_string(),
        api_key: l.env.var(&key_var).filter(|k| !k.trim().is_empty()),
        max_tokens: ENDPOINT_TOKENS,
        prompts,
    })))
}
