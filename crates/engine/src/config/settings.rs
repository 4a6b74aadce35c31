//! Provider settings, merged from LSP initializationOptions (or CLI flags) > environment >
//! `.scholia.toml` in the vault root > defaults. Every error names the field and what is valid.

use std::path::Path;
use std::time::Duration;

use scholia_base::{Dirs, Env};
use scholia_providers::llm::{LlmConfig, Price, Secret};
use scholia_research::deep_search::DeepSearchBackend;

use super::ConfigError;
use super::file::CONFIG_FILE;
use super::file::FileConfig;
use super::layers::{Layers, Picked, cli_model, flag, http_url, ranged};

const OPENAI_URL: &str = "https://api.openai.com/v1";
pub(super) const OPENAI_DEFAULT_MODEL: &str = "gpt-4o-mini";
pub(super) const FIREWORKS_URL: &str = "https://api.fireworks.ai/inference/v1";
pub const OPENROUTER_URL: &str = "https://openrouter.ai/api/v1";

/// Which web search provider research uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchProvider {
    DuckDuckGo { url: String },
    Searxng { url: String },
}

/// Gemini CLI settings for deep_search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiCli {
    /// The executable (`GEMINI_CLI`, default `gemini` on PATH).
    pub program: String,
    pub model: Option<String>,
    pub correction_model: Option<String>,
    /// Hard wall-clock limit per spawn (`deep_search.timeout_secs`, default 600).
    pub timeout: Duration,
    /// The CLI's environment: an allowlist of the caller's (no other provider's keys).
    pub env: scholia_providers::gemini_cli::ChildEnv,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub dirs: Dirs,
    /// The research LLM; `None` runs research offline.
    pub llm: Option<LlmConfig>,
    pub search: SearchProvider,
    /// Web searches at once ([search] max_concurrency; providers rate-limit bursts).
    pub search_concurrency: usize,
    /// One deadline per web search, retries included ([search] timeout_secs).
    pub search_timeout: Duration,
    /// Only for tests against loopback fakes.
    pub allow_private_hosts: bool,
    /// OpenRouter, for the Sonar tiers.
    pub openrouter: Option<LlmConfig>,
    /// Gemini Interactions (background deep research): base URL and key, from the environment.
    pub gemini_api: Option<(String, scholia_providers::llm::Secret)>,
    /// How often background tasks poll their provider.
    pub tasks_poll: Duration,
    /// The Gemini deep-research agent background tasks use unless a request names one.
    pub gemini_agent: Option<String>,
    /// USD per million tokens of Gemini deep research (`[tasks] price`).
    pub tasks_price: Price,
    /// The PostgreSQL task store a team's hosts share (`SCHOLIA_TASKS_DATABASE_URL`,
    /// `[tasks] database_url`); `None`: SQLite in the data directory.
    pub tasks_database: Option<String>,
    pub gemini_cli: GeminiCli,
    pub deep_search_max_iterations: u32,
    /// `None`: the Gemini CLI when installed, else the LLM.
    pub deep_search_backend: Option<DeepSearchBackend>,
    /// Default Sonar tier for `ask` and the editor action.
    pub sonar_model: Option<String>,
    /// Settings of an untrusted vault's `.scholia.toml` that were ignored.
    pub untrusted: Option<super::trust::Untrusted>,
    /// Where vectors come from; `None`: search and related notes by words alone.
    pub embeddings: Option<super::embeddings::EmbedConfig>,
}

impl Settings {
    /// Loads settings for the vault at `vault_root` (for `.scholia.toml`), with `overrides`
    /// (LSP initializationOptions or CLI flags) on top: a line per setting, each found by the
    /// same precedence (override > environment > file > default).
    pub fn load(
        env: &dyn Env,
        vault_root: Option<&Path>,
        overrides: Option<&FileConfig>,
    ) -> Result<Settings, ConfigError> {
        let dirs = Dirs::from_env(env)?;
        let (file, untrusted) = read_file(vault_root, &dirs)?;
        let empty = FileConfig::default();
        let l = Layers {
            env,
            over: overrides.unwrap_or(&empty),
            file: &file,
        };
        // A model the vault's file named but may not choose: the error says why it is missing.
        let llm = research_llm(&l).map_err(|e| match (e, &untrusted) {
            (ConfigError::Invalid { field, value, valid }, Some(u)) => ConfigError::Invalid {
                field,
                value,
                valid: format!("{valid} ({u})"),
            },
            (e, _) => e,
        })?;
        let secs = Duration::from_secs;
        Ok(Settings {
            llm,
            search: search_provider(&l)?,
            search_concurrency: l.ranged("search.max_concurrency", None, |f| f.search.max_concurrency, 4, 1..=64)?,
            search_timeout: secs(l.ranged("search.timeout_secs", None, |f| f.search.timeout_secs, 30, 5..=120)?),
            allow_private_hosts: flag(env, "SCHOLIA_ALLOW_PRIVATE_HOSTS")?,
            openrouter: openrouter(env)?,
            gemini_api: gemini_api(env)?,
            gemini_agent: env.var("GEMINI_DEEP_RESEARCH_AGENT").filter(|a| !a.trim().is_empty()),
            tasks_poll: Duration::from_millis(l.ranged(
                "SCHOLIA_TASKS_POLL_MS",
                Some("SCHOLIA_TASKS_POLL_MS"),
                |_| None,
                10_000,
                10..=600_000,
            )?),
            tasks_price: price(l.over.tasks.price.or(l.file.tasks.price))?,
            tasks_database: l
                .text("tasks.database_url", Some("SCHOLIA_TASKS_DATABASE_URL"), |f| {
                    f.tasks.database_url.clone()
                })?
                .map(|p| {
                    let url = p.value.trim().to_string();
                    match url.starts_with("postgres://") || url.starts_with("postgresql://") {
                        true => Ok(url),
                        false => Err(ConfigError::Invalid {
                            field: p.field.to_string(),
                            value: scholia_tasks::store::redacted(&url),
                            valid: "a PostgreSQL URL, postgres://user@host:5432/database (unset: SQLite in the data directory)".into(),
                        }),
                    }
                })
                .transpose()?,
            gemini_cli: GeminiCli {
                env: scholia_providers::gemini_cli::ChildEnv::allowlisted(env),
                program: l
                    .text("deep_search.gemini_cli", Some("GEMINI_CLI"), |f| {
                        f.deep_search.gemini_cli.clone()
                    })?
                    .map_or_else(|| "gemini".into(), |p| p.value),
                model: cli_model(l.text("deep_search.model", Some("GEMINI_MODEL"), |f| {
                    f.deep_search.model.clone()
                })?)?,
                correction_model: cli_model(l.text(
                    "deep_search.correction_model",
                    Some("GEMINI_CORRECTION_MODEL"),
                    |f| f.deep_search.correction_model.clone(),
                )?)?,
                timeout: secs(l.ranged(
                    "deep_search.timeout_secs",
                    None,
                    |f| f.deep_search.timeout_secs,
                    600,
                    1..=7200,
                )?),
            },
            deep_search_max_iterations: max_iterations(l.text(
                "deep_search.max_iterations",
                Some("DEEP_SEARCH_MAX_ITERATIONS"),
                |f| f.deep_search.max_iterations.as_ref().map(|v| v.text()),
            )?)?,
            deep_search_backend: l
                .text("deep_search.backend", None, |f| f.deep_search.backend.clone())?
                .map(backend)
                .transpose()?,
            sonar_model: l
                .text("sonar.model", None, |f| f.sonar.model.clone())?
                .map(|p| match scholia_providers::sonar::model(&p.value) {
                    Ok(_) => Ok(p.value),
                    Err(_) => Err(ConfigError::Invalid {
                        field: p.field.to_string(),
                        value: p.value.clone(),
                        valid: scholia_providers::sonar::MODELS
                            .iter()
                            .map(|m| m.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                    }),
                })
                .transpose()?,
            embeddings: super::embeddings::embeddings(&l, &dirs.cache)?,
            untrusted,
            dirs,
        })
    }
}

/// The vault's `.scholia.toml`, with the keys it may not set without trust removed (and named).
fn read_file(
    vault_root: Option<&Path>,
    dirs: &Dirs,
) -> Result<(FileConfig, Option<super::trust::Untrusted>), ConfigError> {
    let Some((root, path)) = vault_root
        .map(|r| (r, r.join(CONFIG_FILE)))
        .filter(|(_, p)| p.is_file())
    else {
        return Ok((FileConfig::default(), None));
    };
    let read_error = |message: String| ConfigError::File {
        file: path.display().to_string(),
        message,
        line: None,
    };
    let bytes = std::fs::read(&path).map_err(|e| read_error(e.to_string()))?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| read_error("not valid UTF-8".into()))?;
    let mut file = FileConfig::from_toml(&text)?;
    let keys = file.sensitive_keys();
    if keys.is_empty() || super::trust::is_trusted(&dirs.config, root, &bytes) {
        return Ok((file, None));
    }
    file.strip_sensitive();
    Ok((
        file,
        Some(super::trust::Untrusted {
            root: root.to_path_buf(),
            keys,
        }),
    ))
}

fn gemini_api(env: &dyn Env) -> Result<Option<(String, Secret)>, ConfigError> {
    let Some(key) = env.var("GEMINI_API_KEY") else {
        return Ok(None);
    };
    let base = env
        .var("GEMINI_API_BASE_URL")
        .unwrap_or_else(|| scholia_providers::interactions::BASE_URL.into());
    Ok(Some((http_url("GEMINI_API_BASE_URL", &base)?, Secret::new(key))))
}

fn price(price: Option<Price>) -> Result<Price, ConfigError> {
    let price = price.unwrap_or(scholia_tasks::estimate::DEFAULT_PRICE);
    if !(price.input.is_finite() && price.output.is_finite() && price.input >= 0.0 && price.output >= 0.0) {
        return Err(ConfigError::Invalid {
            field: "tasks.price".into(),
            value: format!("{{ input = {}, output = {} }}", price.input, price.output),
            valid: "USD per million tokens, finite and not negative".into(),
        });
    }
    Ok(price)
}

fn backend(p: Picked<String>) -> Result<DeepSearchBackend, ConfigError> {
    DeepSearchBackend::parse(&p.value).ok_or_else(|| ConfigError::Invalid {
        field: p.field.into(),
        value: p.value,
        valid: DeepSearchBackend::NAMES.join(", "),
    })
}

/// `DEEP_SEARCH_MAX_ITERATIONS`: an integer, default 5; values below 2 become 2.
fn max_iterations(value: Option<Picked<String>>) -> Result<u32, ConfigError> {
    let Some(Picked { value, field }) = value else {
        return Ok(5);
    };
    let n: i64 = value.trim().parse().map_err(|_| ConfigError::Invalid {
        field: field.into(),
        value: value.clone(),
        valid: "an integer up to 50; below 2 runs 2 rounds (default 5)".into(),
    })?;
    if n > 50 {
        return Err(ConfigError::Invalid {
            field: field.into(),
            value,
            valid: "an integer up to 50; below 2 runs 2 rounds".into(),
        });
    }
    Ok(n.max(2) as u32)
}

fn research_llm(l: &Layers) -> Result<Option<LlmConfig>, ConfigError> {
    let (env, over, file) = (l.env, &l.over.llm, &l.file.llm);
    // Each candidate is (value, the field it came from).
    let base = over
        .base_url
        .clone()
        .map(|v| (v, "initializationOptions llm.base_url"))
        .or_else(|| env.var("SCHOLIA_LLM_BASE_URL").map(|v| (v, "SCHOLIA_LLM_BASE_URL")))
        .or_else(|| env.var("FIREWORKS_BASE_URL").map(|v| (v, "FIREWORKS_BASE_URL")))
        .or_else(|| {
            env.var("FIREWORKS_API_KEY")
                .map(|_| (FIREWORKS_URL.to_string(), "FIREWORKS_API_KEY"))
        })
        .or_else(|| file.base_url.clone().map(|v| (v, "llm.base_url in .scholia.toml")))
        .or_else(|| {
            env.var("OPENAI_API_KEY")
                .map(|_| (OPENAI_URL.to_string(), "OPENAI_API_KEY"))
        });
    let model = over
        .model
        .clone()
        .or_else(|| env.var("SCHOLIA_LLM_MODEL"))
        .or_else(|| env.var("RESEARCH_MODEL"))
        .or_else(|| env.var("FIREWORKS_MODEL"))
        .or_else(|| file.model.clone());
    let Some((base, base_field)) = base else {
        // Every `[llm]` setting is checked when read, used or not: a wrong value is never
        // accepted silently to fail later.
        l.ranged(
            "llm.timeout_secs",
            None,
            |f| f.llm.timeout_secs,
            LLM_TIMEOUT_SECS,
            5..=3600,
        )?;
        l.ranged("llm.max_concurrency", None, |f| f.llm.max_concurrency, 4, 1..=64)?;
        if model.is_some() {
            return Err(ConfigError::Invalid {
                field: "SCHOLIA_LLM_BASE_URL".into(),
                value: String::new(),
                valid: "the base URL of an OpenAI-compatible API (a model is set but no URL), \
                        e.g. http://localhost:11434/v1 for Ollama"
                    .into(),
            });
        }
        return Ok(None);
    };
    let base_url = http_url(base_field, &base)?;
    let model = match model {
        Some(m) => m,
        None if base_url == OPENAI_URL => OPENAI_DEFAULT_MODEL.into(),
        None => {
            return Err(ConfigError::Invalid {
                field: "SCHOLIA_LLM_MODEL".into(),
                value: String::new(),
                valid: format!("the name of a model served at {base_url}"),
            });
        }
    };
    let key_env = over.api_key_env.clone().or_else(|| file.api_key_env.clone());
    let (api_key, key_source) = if let Some(name) = key_env {
        let key = env.var(&name).ok_or_else(|| ConfigError::Invalid {
            field: "llm.api_key_env".into(),
            value: name.clone(),
            valid: "the name of a set environment variable".into(),
        })?;
        (Some(Secret::new(key)), "the variable named by llm.api_key_env")
    } else if let Some(k) = env.var("SCHOLIA_LLM_API_KEY") {
        (Some(Secret::new(k)), "SCHOLIA_LLM_API_KEY")
    } else if let Some(k) = env.var("FIREWORKS_API_KEY").filter(|_| base_url.contains("fireworks")) {
        (Some(Secret::new(k)), "FIREWORKS_API_KEY")
    } else if let Some(k) = env.var("OPENAI_API_KEY") {
        (Some(Secret::new(k)), "OPENAI_API_KEY")
    } else {
        (None, "SCHOLIA_LLM_API_KEY (none is set)")
    };
    let max_concurrency = l.ranged("llm.max_concurrency", None, |f| f.llm.max_concurrency, 4, 1..=64)?;
    // A model on this machine (a loopback server) is a CPU model: minutes, not seconds.
    let default_timeout = if is_loopback(&base_url) {
        LOCAL_LLM_TIMEOUT_SECS
    } else {
        LLM_TIMEOUT_SECS
    };
    let timeout_secs = l.ranged(
        "llm.timeout_secs",
        None,
        |f| f.llm.timeout_secs,
        default_timeout,
        5..=3600,
    )?;
    let context_tokens = match l.pick("llm.context_tokens", Some("SCHOLIA_LLM_CONTEXT_TOKENS"), |f| {
        f.llm.context_tokens
    })? {
        Some(p) => Some(ranged(p.field, p.value, 1024..=10_000_000)?),
        None => None,
    };
    Ok(Some(LlmConfig {
        base_url,
        api_key,
        model,
        max_concurrency,
        timeout: Duration::from_secs(timeout_secs),
        context_tokens,
        price: over.price.or(file.price),
        key_source,
    }))
}

fn search_provider(l: &Layers) -> Result<SearchProvider, ConfigError> {
    let (env, over, file) = (l.env, &l.over.search, &l.file.search);
    let ddg_url = env
        .var("SCHOLIA_DUCKDUCKGO_URL")
        .unwrap_or_else(|| scholia_providers::web::search::DUCKDUCKGO_URL.into());
    let ddg_url = http_url("SCHOLIA_DUCKDUCKGO_URL", &ddg_url)?;
    let from_env = env.var("SCHOLIA_SEARCH").map(|v| {
        let (p, u) = v
            .split_once(':')
            .map(|(p, u)| (p.to_string(), Some(u.to_string())))
            .unwrap_or((v.clone(), None));
        (p, u, "SCHOLIA_SEARCH")
    });
    let pick = |s: &super::file::FileSearch, field: &'static str| s.provider.clone().map(|p| (p, s.url.clone(), field));
    let chosen = pick(over, "search.provider")
        .or(from_env)
        .or_else(|| pick(file, "search.provider"));
    let Some((provider, url, field)) = chosen else {
        return Ok(SearchProvider::DuckDuckGo { url: ddg_url });
    };
    match provider.trim().to_ascii_lowercase().as_str() {
        "duckduckgo" | "ddg" => Ok(SearchProvider::DuckDuckGo { url: ddg_url }),
        "searxng" => match url {
            Some(u) if !u.is_empty() => Ok(SearchProvider::Searxng {
                url: http_url(field, &u)?,
            }),
            _ => Err(ConfigError::Invalid {
                field: field.into(),
                value: provider,
                valid: "searxng needs a URL: searxng:https://searx.example.org".into(),
            }),
        },
        _ => Err(ConfigError::Invalid {
            field: field.into(),
            value: provider,
            valid: "duckduckgo, searxng:URL".into(),
        }),
    }
}

fn openrouter(env: &dyn Env) -> Result<Option<LlmConfig>, ConfigError> {
    let Some(key) = env.var("OPENROUTER_API_KEY") else {
        return Ok(None);
    };
    let base = env.var("OPENROUTER_BASE_URL").unwrap_or_else(|| OPENROUTER_URL.into());
    Ok(Some(LlmConfig {
        base_url: http_url("OPENROUTER_BASE_URL", &base)?,
        api_key: Some(Secret::new(key)),
        model: "perplexity/sonar".into(),
        max_concurrency: 4,
        timeout: Duration::from_secs(30),
        context_tokens: None,
        price: None,
        key_source: "OPENROUTER_API_KEY",
    }))
}

/// Seconds per LLM call by default (`[llm] timeout_secs`), and for a server on this machine.
pub const LLM_TIMEOUT_SECS: u64 = 120;
pub const LOCAL_LLM_TIMEOUT_SECS: u64 = 600;

/// Whether `url` names this machine (`localhost`, `127.0.0.0/8`, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod loopback_tests {
    #[test]
    fn loopback_endpoints_are_local_models() {
        for (url, local) in [
            ("http://127.0.0.1:8080/v1", true),
            ("http://localhost:11434/v1", true),
            ("http://[::1]:8000/v1", true),
            ("http://user@127.0.0.2/v1", true),
            ("https://api.fireworks.ai/inference/v1", false),
            ("http://127.0.0.1.example.com/v1", false),
            ("http://10.0.0.5:8080/v1", false),
        ] {
            assert_eq!(super::is_loopback(url), local, "{url}");
        }
    }
}
