//! Where vectors come from: a sentence-transformers directory run in-process
//! (`SCHOLIA_EMBED_MODEL_PATH` / `embeddings.model_path`), else an OpenAI-compatible endpoint
//! (`SCHOLIA_EMBED_BASE_URL` + `SCHOLIA_EMBED_MODEL`, key in `SCHOLIA_EMBED_API_KEY` or the
//! variable `embeddings.api_key_env` names). In a vault's `.scholia.toml` these are trusted-only:
//! a cloned vault does not choose a program's weights, an endpoint or a credential.

use std::path::PathBuf;

use scholia_providers::embeddings::EndpointConfig;

use super::ConfigError;
use super::layers::{Layers, http_url};

/// Tokens an endpoint's model is assumed to read (texts are cut to about 4 characters each).
const ENDPOINT_TOKENS: usize = 512;

#[derive(Debug, Clone)]
pub enum EmbedConfig {
    Local { path: PathBuf },
    Endpoint(EndpointConfig),
}

impl EmbedConfig {
    /// What it is, for messages (never a key).
    pub fn describe(&self) -> String {
        match self {
            EmbedConfig::Local { path } => format!("the local model in {}", path.display()),
            EmbedConfig::Endpoint(c) => format!(
                "the endpoint {} (model {})",
                scholia_providers::http::redact(&c.base_url),
                c.model
            ),
        }
    }
}

pub(super) fn embeddings(l: &Layers) -> Result<Option<EmbedConfig>, ConfigError> {
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
        return Ok(Some(EmbedConfig::Local { path }));
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
    })))
}
