//! Provider settings, merged from LSP initializationOptions (or CLI flags) > environment >
//! `.scholia.toml` in the vault root > defaults. Every error names the field and what is valid.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, Dirs, Env};
use crate::llm::{LlmConfig, Price, Secret};

pub const CONFIG_FILE: &str = ".scholia.toml";
const OPENAI_URL: &str = "https://api.openai.com/v1";
const OPENAI_DEFAULT_MODEL: &str = "gpt-4o-mini";
const FIREWORKS_URL: &str = "https://api.fireworks.ai/inference/v1";
pub const OPENROUTER_URL: &str = "https://openrouter.ai/api/v1";

/// Which web search provider research uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchProvider {
    DuckDuckGo { url: String },
    Searxng { url: String },
}

/// Which backend runs deep_search rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeepSearchBackend {
    GeminiCli,
    Llm,
}

impl DeepSearchBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            DeepSearchBackend::GeminiCli => "gemini-cli",
            DeepSearchBackend::Llm => "llm",
        }
    }

    pub fn parse(field: &str, value: &str) -> Result<DeepSearchBackend, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "gemini-cli" | "gemini" => Ok(DeepSearchBackend::GeminiCli),
            "llm" => Ok(DeepSearchBackend::Llm),
            _ => Err(ConfigError::Invalid {
                field: field.into(),
                value: value.into(),
                valid: "gemini-cli, llm".into(),
            }),
        }
    }
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
    pub env: crate::gemini_cli::ChildEnv,
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
    pub gemini_api: Option<(String, crate::llm::Secret)>,
    /// How often background tasks poll their provider.
    pub tasks_poll: Duration,
    /// The Gemini deep-research agent background tasks use unless a request names one.
    pub gemini_agent: Option<String>,
    /// USD per million tokens of Gemini deep research (`[tasks] price`).
    pub tasks_price: Price,
    pub gemini_cli: GeminiCli,
    pub deep_search_max_iterations: u32,
    /// `None`: the Gemini CLI when installed, else the LLM.
    pub deep_search_backend: Option<DeepSearchBackend>,
    /// Default Sonar tier for `ask` and the editor action.
    pub sonar_model: Option<String>,
    /// Settings of an untrusted vault's `.scholia.toml` that were ignored.
    pub untrusted: Option<super::trust::Untrusted>,
}

/// The shape of `.scholia.toml` and of LSP initializationOptions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    llm: FileLlm,
    #[serde(default)]
    search: FileSearch,
    #[serde(default)]
    sonar: FileSonar,
    #[serde(default)]
    deep_search: FileDeepSearch,
    #[serde(default)]
    tasks: FileTasks,
    /// LSP only: the vault root.
    #[serde(default)]
    vault: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLlm {
    base_url: Option<String>,
    model: Option<String>,
    /// Name of the environment variable holding the key (keys do not belong in a vault file).
    api_key_env: Option<String>,
    max_concurrency: Option<usize>,
    timeout_secs: Option<u64>,
    /// The model's context window in tokens, when the server does not say.
    context_tokens: Option<u32>,
    price: Option<Price>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSearch {
    provider: Option<String>,
    url: Option<String>,
    max_concurrency: Option<usize>,
    timeout_secs: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTasks {
    /// USD per million tokens of Gemini deep research, for estimates and costs.
    price: Option<Price>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSonar {
    model: Option<String>,
}

/// A number written as a TOML/JSON integer or as a string (environment-style).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum IntOrString {
    Int(i64),
    Str(String),
}

impl IntOrString {
    fn text(&self) -> String {
        match self {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::Str(s) => s.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDeepSearch {
    backend: Option<String>,
    timeout_secs: Option<u64>,
    max_iterations: Option<IntOrString>,
    gemini_cli: Option<String>,
    model: Option<String>,
    correction_model: Option<String>,
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
        ("deep_search.max_iterations", "integer: rounds at most (2 to 50)"),
        ("deep_search.gemini_cli", "string: the Gemini CLI executable"),
        ("deep_search.model", "string: model of the search rounds"),
        ("deep_search.correction_model", "string: model of JSON correction"),
        (
            "tasks.price",
            "table {input, output}: USD per million tokens of Gemini deep research",
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
        ];
        debug_assert!(set.iter().all(|(k, _)| super::trust::SENSITIVE.contains(k)));
        set.iter().filter(|(_, on)| *on).map(|(k, _)| *k).collect()
    }

    fn strip_sensitive(&mut self) {
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
    }
}

fn http_url(field: &str, value: &str) -> Result<String, ConfigError> {
    let ok = url::Url::parse(value).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    if ok {
        Ok(value.trim_end_matches('/').to_string())
    } else {
        Err(ConfigError::Invalid {
            field: field.into(),
            value: value.into(),
            valid: "an http(s) URL such as http://localhost:11434/v1".into(),
        })
    }
}

impl Settings {
    /// Loads settings for the vault at `vault_root` (for `.scholia.toml`), with `overrides`
    /// (LSP initializationOptions) on top.
    pub fn load(
        env: &dyn Env,
        vault_root: Option<&Path>,
        overrides: Option<&FileConfig>,
    ) -> Result<Settings, ConfigError> {
        let dirs = Dirs::from_env(env)?;
        let mut untrusted = None;
        let file = match vault_root.map(|r| (r, r.join(CONFIG_FILE))) {
            Some((root, path)) if path.is_file() => {
                let read_error = |message: String| ConfigError::File {
                    file: path.display().to_string(),
                    message,
                    line: None,
                };
                let bytes = std::fs::read(&path).map_err(|e| read_error(e.to_string()))?;
                let text = String::from_utf8(bytes.clone()).map_err(|_| read_error("not valid UTF-8".into()))?;
                let mut file = FileConfig::from_toml(&text)?;
                let keys = file.sensitive_keys();
                if !keys.is_empty() && !super::trust::is_trusted(&dirs.config, root, &bytes) {
                    file.strip_sensitive();
                    untrusted = Some(super::trust::Untrusted {
                        root: root.to_path_buf(),
                        keys,
                    });
                }
                file
            }
            _ => FileConfig::default(),
        };
        let empty = FileConfig::default();
        let over = overrides.unwrap_or(&empty);
        // A model the vault's file named but may not choose: the error says why it is missing.
        let llm = research_llm(env, &over.llm, &file.llm).map_err(|e| match (e, &untrusted) {
            (ConfigError::Invalid { field, value, valid }, Some(u)) => ConfigError::Invalid {
                field,
                value,
                valid: format!("{valid} ({u})"),
            },
            (e, _) => e,
        })?;
        Ok(Settings {
            untrusted,
            dirs,
            llm,
            search: search_provider(env, &over.search, &file.search)?,
            search_concurrency: match over.search.max_concurrency.or(file.search.max_concurrency).unwrap_or(4) {
                n @ 1..=64 => n,
                n => {
                    return Err(ConfigError::Invalid {
                        field: "search.max_concurrency".into(),
                        value: n.to_string(),
                        valid: "an integer from 1 to 64".into(),
                    });
                }
            },
            search_timeout: match over.search.timeout_secs.or(file.search.timeout_secs).unwrap_or(30) {
                n @ 5..=120 => Duration::from_secs(n),
                n => {
                    return Err(ConfigError::Invalid {
                        field: "search.timeout_secs".into(),
                        value: n.to_string(),
                        valid: "an integer from 5 to 120".into(),
                    });
                }
            },
            allow_private_hosts: flag(env, "SCHOLIA_ALLOW_PRIVATE_HOSTS")?,
            openrouter: openrouter(env)?,
            gemini_api: match env.var("GEMINI_API_KEY") {
                Some(key) => {
                    let base = env
                        .var("GEMINI_API_BASE_URL")
                        .unwrap_or_else(|| crate::tasks::interactions::BASE_URL.into());
                    Some((http_url("GEMINI_API_BASE_URL", &base)?, crate::llm::Secret::new(key)))
                }
                None => None,
            },
            gemini_agent: env.var("GEMINI_DEEP_RESEARCH_AGENT").filter(|a| !a.trim().is_empty()),
            tasks_poll: match env.var("SCHOLIA_TASKS_POLL_MS") {
                Some(v) => match v.parse::<u64>() {
                    Ok(ms) if (10..=600_000).contains(&ms) => Duration::from_millis(ms),
                    _ => {
                        return Err(ConfigError::Invalid {
                            field: "SCHOLIA_TASKS_POLL_MS".into(),
                            value: v,
                            valid: "milliseconds between polls of a background task, 10..=600000".into(),
                        });
                    }
                },
                None => Duration::from_secs(10),
            },
            gemini_cli: GeminiCli {
                env: crate::gemini_cli::ChildEnv::allowlisted(env),
                program: over
                    .deep_search
                    .gemini_cli
                    .clone()
                    .or_else(|| env.var("GEMINI_CLI"))
                    .or_else(|| file.deep_search.gemini_cli.clone())
                    .unwrap_or_else(|| "gemini".into()),
                model: cli_model(
                    over.deep_search
                        .model
                        .clone()
                        .map(|v| ("deep_search.model", v))
                        .or_else(|| env.var("GEMINI_MODEL").map(|v| ("GEMINI_MODEL", v)))
                        .or_else(|| file.deep_search.model.clone().map(|v| ("deep_search.model", v))),
                )?,
                correction_model: cli_model(
                    over.deep_search
                        .correction_model
                        .clone()
                        .map(|v| ("deep_search.correction_model", v))
                        .or_else(|| {
                            env.var("GEMINI_CORRECTION_MODEL")
                                .map(|v| ("GEMINI_CORRECTION_MODEL", v))
                        })
                        .or_else(|| {
                            file.deep_search
                                .correction_model
                                .clone()
                                .map(|v| ("deep_search.correction_model", v))
                        }),
                )?,
                timeout: match over
                    .deep_search
                    .timeout_secs
                    .or(file.deep_search.timeout_secs)
                    .unwrap_or(600)
                {
                    n @ 1..=7200 => Duration::from_secs(n),
                    n => {
                        return Err(ConfigError::Invalid {
                            field: "deep_search.timeout_secs".into(),
                            value: n.to_string(),
                            valid: "an integer from 1 to 7200".into(),
                        });
                    }
                },
            },
            deep_search_max_iterations: max_iterations(
                over.deep_search
                    .max_iterations
                    .as_ref()
                    .map(|v| ("deep_search.max_iterations", v.text()))
                    .or_else(|| {
                        env.var("DEEP_SEARCH_MAX_ITERATIONS")
                            .map(|v| ("DEEP_SEARCH_MAX_ITERATIONS", v))
                    })
                    .or_else(|| {
                        file.deep_search
                            .max_iterations
                            .as_ref()
                            .map(|v| ("deep_search.max_iterations", v.text()))
                    }),
            )?,
            deep_search_backend: over
                .deep_search
                .backend
                .as_deref()
                .or(file.deep_search.backend.as_deref())
                .map(|b| DeepSearchBackend::parse("deep_search.backend", b))
                .transpose()?,
            sonar_model: over.sonar.model.clone().or_else(|| file.sonar.model.clone()),
            tasks_price: {
                let price = over
                    .tasks
                    .price
                    .or(file.tasks.price)
                    .unwrap_or(crate::tasks::estimate::DEFAULT_PRICE);
                if !(price.input.is_finite() && price.output.is_finite() && price.input >= 0.0 && price.output >= 0.0) {
                    return Err(ConfigError::Invalid {
                        field: "tasks.price".into(),
                        value: format!("{{ input = {}, output = {} }}", price.input, price.output),
                        valid: "USD per million tokens, finite and not negative".into(),
                    });
                }
                price
            },
        })
    }
}

/// A model name passed to the Gemini CLI: one word that cannot pass for an option.
fn cli_model(value: Option<(&'static str, String)>) -> Result<Option<String>, ConfigError> {
    let Some((field, name)) = value else { return Ok(None) };
    let ok = !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('-')
        && !name.chars().any(|c| c.is_whitespace() || c.is_control());
    if !ok {
        return Err(ConfigError::Invalid {
            field: field.into(),
            value: name,
            valid: "a model name such as gemini-2.5-pro (no spaces, not starting with `-`)".into(),
        });
    }
    Ok(Some(name))
}

fn flag(env: &dyn Env, name: &'static str) -> Result<bool, ConfigError> {
    match env.var(name).as_deref() {
        None | Some("0") | Some("false") => Ok(false),
        Some("1") | Some("true") => Ok(true),
        Some(other) => Err(ConfigError::Invalid {
            field: name.into(),
            value: other.into(),
            valid: "1 or 0".into(),
        }),
    }
}

/// `DEEP_SEARCH_MAX_ITERATIONS`: an integer, default 5; values below 2 become 2.
fn max_iterations(value: Option<(&'static str, String)>) -> Result<u32, ConfigError> {
    let Some((field, value)) = value else { return Ok(5) };
    let n: i64 = value.trim().parse().map_err(|_| ConfigError::Invalid {
        field: field.into(),
        value: value.clone(),
        valid: "an integer (2 or more; default 5)".into(),
    })?;
    if n > 50 {
        return Err(ConfigError::Invalid {
            field: field.into(),
            value,
            valid: "an integer from 2 to 50".into(),
        });
    }
    Ok(n.max(2) as u32)
}

fn research_llm(env: &dyn Env, over: &FileLlm, file: &FileLlm) -> Result<Option<LlmConfig>, ConfigError> {
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
    let max_concurrency = over.max_concurrency.or(file.max_concurrency).unwrap_or(4);
    if !(1..=64).contains(&max_concurrency) {
        return Err(ConfigError::Invalid {
            field: "llm.max_concurrency".into(),
            value: max_concurrency.to_string(),
            valid: "an integer from 1 to 64".into(),
        });
    }
    let timeout_secs = over.timeout_secs.or(file.timeout_secs).unwrap_or(120);
    if !(5..=3600).contains(&timeout_secs) {
        return Err(ConfigError::Invalid {
            field: "llm.timeout_secs".into(),
            value: timeout_secs.to_string(),
            valid: "an integer from 5 to 3600".into(),
        });
    }
    let context_tokens = match env.var("SCHOLIA_LLM_CONTEXT_TOKENS") {
        Some(v) => Some(v.trim().parse::<u32>().map_err(|_| ConfigError::Invalid {
            field: "SCHOLIA_LLM_CONTEXT_TOKENS".into(),
            value: v.clone(),
            valid: "an integer from 1024 to 10000000".into(),
        })?),
        None => over.context_tokens.or(file.context_tokens),
    };
    if let Some(n) = context_tokens
        && !(1024..=10_000_000).contains(&n)
    {
        return Err(ConfigError::Invalid {
            field: "llm.context_tokens".into(),
            value: n.to_string(),
            valid: "an integer from 1024 to 10000000".into(),
        });
    }
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

fn search_provider(env: &dyn Env, over: &FileSearch, file: &FileSearch) -> Result<SearchProvider, ConfigError> {
    let ddg_url = env
        .var("SCHOLIA_DUCKDUCKGO_URL")
        .unwrap_or_else(|| crate::web::search::DUCKDUCKGO_URL.into());
    let ddg_url = http_url("SCHOLIA_DUCKDUCKGO_URL", &ddg_url)?;
    let from_env = env.var("SCHOLIA_SEARCH").map(|v| {
        let (p, u) = v
            .split_once(':')
            .map(|(p, u)| (p.to_string(), Some(u.to_string())))
            .unwrap_or((v.clone(), None));
        (p, u, "SCHOLIA_SEARCH")
    });
    let pick = |s: &FileSearch, field: &'static str| s.provider.clone().map(|p| (p, s.url.clone(), field));
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

/// Every environment variable scholia reads, for documentation and `--help`.
pub const ENV_VARS: &[(&str, &str)] = &[
    (
        "SCHOLIA_LLM_BASE_URL",
        "research LLM: base URL of an OpenAI-compatible API (…/v1)",
    ),
    (
        "SCHOLIA_LLM_API_KEY",
        "research LLM: API key (optional for local servers)",
    ),
    ("SCHOLIA_LLM_MODEL", "research LLM: model name"),
    (
        "SCHOLIA_LLM_CONTEXT_TOKENS",
        "research LLM: context window in tokens, when the server does not say",
    ),
    (
        "FIREWORKS_BASE_URL",
        "research LLM via Fireworks (base URL; defaults to Fireworks' API)",
    ),
    ("FIREWORKS_API_KEY", "research LLM via Fireworks: API key"),
    ("FIREWORKS_MODEL", "research LLM via Fireworks: model"),
    ("RESEARCH_MODEL", "research LLM: model (after SCHOLIA_LLM_MODEL)"),
    (
        "OPENAI_API_KEY",
        "research LLM via OpenAI (model defaults to gpt-4o-mini)",
    ),
    ("OPENROUTER_API_KEY", "Sonar tiers (`ask`) via OpenRouter"),
    (
        "GEMINI_API_KEY",
        "background deep research via the Gemini Interactions API (`tasks start`)",
    ),
    ("GEMINI_API_BASE_URL", "Gemini Interactions base URL"),
    (
        "SCHOLIA_TASKS_POLL_MS",
        "milliseconds between polls of a background task",
    ),
    (
        "GEMINI_DEEP_RESEARCH_AGENT",
        "the Gemini deep-research agent of background tasks",
    ),
    ("OPENROUTER_BASE_URL", "OpenRouter base URL"),
    (
        "GEMINI_CLI",
        "deep_search: the Gemini CLI executable (default `gemini`)",
    ),
    ("GEMINI_MODEL", "deep_search: model for the search rounds"),
    ("GEMINI_CORRECTION_MODEL", "deep_search: model for JSON correction"),
    (
        "DEEP_SEARCH_MAX_ITERATIONS",
        "deep_search: rounds at most (default 5, at least 2)",
    ),
    ("SCHOLIA_SEARCH", "web search: duckduckgo (default) or searxng:URL"),
    ("SCHOLIA_DUCKDUCKGO_URL", "web search: DuckDuckGo base URL"),
    (
        "SCHOLIA_ALLOW_PRIVATE_HOSTS",
        "1 lets page fetches reach private addresses (tests only)",
    ),
    ("SCHOLIA_CONFIG_DIR", "configuration directory"),
    ("SCHOLIA_DATA_DIR", "data directory"),
    ("SCHOLIA_CACHE_DIR", "index directory"),
    ("SCHOLIA_LOG", "log filter for stderr"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn every_listed_key_is_a_real_key() {
        for (key, what) in FileConfig::KEYS {
            let value = if what.starts_with("table") {
                serde_json::json!({"input": 1.0, "output": 2.0})
            } else if what.starts_with("integer") {
                serde_json::json!(1)
            } else {
                serde_json::json!("x")
            };
            let mut json = value;
            for part in key.rsplit('.') {
                json = serde_json::json!({ part: json });
            }
            assert!(FileConfig::from_json(&json).is_ok(), "{key}: {json}");
        }
        assert!(FileConfig::from_json(&serde_json::json!({"llm": {"modle": "x"}})).is_err());
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        let mut m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        m.insert("HOME".into(), "/home/u".into());
        m
    }

    fn load(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        Settings::load(&env(pairs), None, None)
    }

    #[test]
    fn no_llm_means_offline() {
        let s = load(&[]).unwrap();
        assert!(s.llm.is_none());
        assert_eq!(
            s.search,
            SearchProvider::DuckDuckGo {
                url: "https://html.duckduckgo.com".into()
            }
        );
        assert_eq!(s.deep_search_max_iterations, 5);
    }

    #[test]
    fn llm_sources() {
        let s = load(&[
            ("SCHOLIA_LLM_BASE_URL", "http://localhost:11434/v1/"),
            ("SCHOLIA_LLM_MODEL", "qwen3"),
        ])
        .unwrap();
        let llm = s.llm.unwrap();
        assert_eq!(
            (llm.base_url.as_str(), llm.model.as_str(), llm.api_key),
            ("http://localhost:11434/v1", "qwen3", None)
        );
        let s = load(&[
            ("FIREWORKS_API_KEY", "fw"),
            ("FIREWORKS_MODEL", "accounts/fireworks/models/x"),
        ])
        .unwrap();
        let llm = s.llm.unwrap();
        assert_eq!(llm.base_url, FIREWORKS_URL);
        assert_eq!(llm.api_key, Some(Secret::new("fw")));
        let s = load(&[("OPENAI_API_KEY", "sk"), ("RESEARCH_MODEL", "gpt-4.1")]).unwrap();
        assert_eq!(s.llm.unwrap().model, "gpt-4.1");
        assert_eq!(
            load(&[("OPENAI_API_KEY", "sk")]).unwrap().llm.unwrap().model,
            OPENAI_DEFAULT_MODEL
        );
    }

    #[test]
    fn malformed_settings_name_the_field() {
        let err = |pairs: &[(&str, &str)]| load(pairs).unwrap_err().to_string();
        assert_eq!(
            err(&[("SCHOLIA_LLM_BASE_URL", "ftp://x"), ("SCHOLIA_LLM_MODEL", "m")]),
            "SCHOLIA_LLM_BASE_URL: `ftp://x` is not valid; valid: an http(s) URL such as http://localhost:11434/v1"
        );
        assert_eq!(
            err(&[("SCHOLIA_LLM_BASE_URL", "http://h/v1")]),
            "SCHOLIA_LLM_MODEL: not set; expected the name of a model served at http://h/v1"
        );
        assert!(err(&[("SCHOLIA_LLM_MODEL", "m")]).starts_with("SCHOLIA_LLM_BASE_URL: "));
        assert_eq!(
            err(&[("SCHOLIA_SEARCH", "bing")]),
            "SCHOLIA_SEARCH: `bing` is not valid; valid: duckduckgo, searxng:URL"
        );
        assert_eq!(
            err(&[("DEEP_SEARCH_MAX_ITERATIONS", "abc")]),
            "DEEP_SEARCH_MAX_ITERATIONS: `abc` is not valid; valid: an integer (2 or more; default 5)"
        );
        assert_eq!(
            err(&[("SCHOLIA_ALLOW_PRIVATE_HOSTS", "yes")]),
            "SCHOLIA_ALLOW_PRIVATE_HOSTS: `yes` is not valid; valid: 1 or 0"
        );
        for bad in ["--yolo", "-m", "two words", "x\ny"] {
            assert!(
                err(&[("GEMINI_MODEL", bad)]).starts_with("GEMINI_MODEL: "),
                "{bad:?} is refused"
            );
        }
        assert!(
            err(&[("GEMINI_CORRECTION_MODEL", "--include-directories=/")]).starts_with("GEMINI_CORRECTION_MODEL: ")
        );
    }

    #[test]
    fn iterations_and_searxng() {
        assert_eq!(
            load(&[("DEEP_SEARCH_MAX_ITERATIONS", "1")])
                .unwrap()
                .deep_search_max_iterations,
            2
        );
        assert_eq!(
            load(&[("DEEP_SEARCH_MAX_ITERATIONS", "7")])
                .unwrap()
                .deep_search_max_iterations,
            7
        );
        let s = load(&[("SCHOLIA_SEARCH", "searxng:https://searx.example.org/")]).unwrap();
        assert_eq!(
            s.search,
            SearchProvider::Searxng {
                url: "https://searx.example.org".into()
            }
        );
    }

    /// The environment with a config directory of its own, and `vault` trusted in it.
    fn trusting(vault: &Path, config: &Path, pairs: &[(&str, &str)]) -> HashMap<String, String> {
        crate::config::trust::trust(config, vault).unwrap();
        let mut e = env(pairs);
        e.insert("SCHOLIA_CONFIG_DIR".into(), config.display().to_string());
        e
    }

    #[test]
    fn an_untrusted_vault_cannot_choose_programs_endpoints_or_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[llm]\nbase_url = \"http://evil/v1\"\nmodel = \"m\"\napi_key_env = \"GITHUB_TOKEN\"\nmax_concurrency = 2\n\
             [search]\nprovider = \"searxng\"\nurl = \"http://evil\"\n\
             [deep_search]\ngemini_cli = \"/tmp/evil\"\nmodel = \"x\"\ncorrection_model = \"y\"\nmax_iterations = \"3\"\n",
        )
        .unwrap();
        let mut e = env(&[("GITHUB_TOKEN", "ghp_secret")]);
        e.insert("SCHOLIA_CONFIG_DIR".into(), config.path().display().to_string());
        let s = Settings::load(&e, Some(dir.path()), None).unwrap();
        assert!(s.llm.is_none(), "no endpoint and no key from the vault");
        assert!(matches!(s.search, SearchProvider::DuckDuckGo { .. }));
        assert_eq!(s.gemini_cli.program, "gemini");
        assert_eq!(
            (s.gemini_cli.model.as_deref(), s.gemini_cli.correction_model.as_deref()),
            (None, None)
        );
        assert_eq!(
            s.deep_search_max_iterations, 5,
            "rounds cost money: not from an untrusted vault"
        );
        let u = s.untrusted.unwrap();
        assert_eq!(u.keys.len(), 10);
        let shown = u.to_string();
        assert!(
            shown.contains("llm.base_url") && shown.contains("scholia trust"),
            "{shown}"
        );
        // Trusted: honoured. Edited afterwards: ignored again.
        crate::config::trust::trust(config.path(), dir.path()).unwrap();
        let s = Settings::load(&e, Some(dir.path()), None).unwrap();
        assert!(s.untrusted.is_none());
        assert_eq!(s.llm.unwrap().base_url, "http://evil/v1");
        assert_eq!(s.gemini_cli.program, "/tmp/evil");
        let mut text = std::fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap();
        text.push_str("# edited\n");
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        let s = Settings::load(&e, Some(dir.path()), None).unwrap();
        assert!(s.untrusted.is_some() && s.llm.is_none());
    }

    #[test]
    fn an_untrusted_vault_cannot_spend_the_users_money() {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[llm]\nmodel = \"openai/o1-pro\"\nmax_concurrency = 64\ncontext_tokens = 10000000\ntimeout_secs = 90\n\
             [sonar]\nmodel = \"sonar-deep-research\"\n[deep_search]\nmax_iterations = \"50\"\n",
        )
        .unwrap();
        // The user's key, and no model named: the vault's file would pick it.
        let mut e = env(&[("OPENAI_API_KEY", "sk-user"), ("OPENROUTER_API_KEY", "sk-or")]);
        e.insert("SCHOLIA_CONFIG_DIR".into(), config.path().display().to_string());
        let s = Settings::load(&e, Some(dir.path()), None).unwrap();
        let llm = s.llm.clone().unwrap();
        assert_eq!(llm.model, "gpt-4o-mini");
        assert_eq!(
            llm.max_concurrency,
            Settings::load(&e, None, None).unwrap().llm.unwrap().max_concurrency
        );
        assert_eq!(llm.context_tokens, None);
        assert_eq!(llm.timeout, std::time::Duration::from_secs(90), "tuning is honoured");
        assert_eq!(s.sonar_model, None);
        assert_eq!(s.deep_search_max_iterations, 5);
        let keys = s.untrusted.unwrap().keys;
        assert_eq!(
            keys,
            [
                "llm.model",
                "llm.max_concurrency",
                "llm.context_tokens",
                "sonar.model",
                "deep_search.max_iterations"
            ]
        );
        // Trusted, and an integer is an integer.
        std::fs::write(dir.path().join(CONFIG_FILE), "[deep_search]\nmax_iterations = 7\n").unwrap();
        crate::config::trust::trust(config.path(), dir.path()).unwrap();
        assert_eq!(
            Settings::load(&e, Some(dir.path()), None)
                .unwrap()
                .deep_search_max_iterations,
            7
        );
    }

    #[test]
    fn file_and_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[llm]\nbase_url = \"http://file/v1\"\nmodel = \"file-model\"\nmax_concurrency = 2\n[llm.price]\ninput = 0.5\noutput = 1.5\n",
        )
        .unwrap();
        let env = |pairs: &[(&str, &str)]| trusting(dir.path(), config.path(), pairs);
        let s = Settings::load(&env(&[]), Some(dir.path()), None).unwrap();
        let llm = s.llm.unwrap();
        assert_eq!(
            (llm.base_url.as_str(), llm.model.as_str(), llm.max_concurrency),
            ("http://file/v1", "file-model", 2)
        );
        assert_eq!(
            llm.price,
            Some(Price {
                input: 0.5,
                output: 1.5
            })
        );
        // The environment beats the file; initializationOptions beat both.
        let s = Settings::load(&env(&[("SCHOLIA_LLM_MODEL", "env-model")]), Some(dir.path()), None).unwrap();
        assert_eq!(s.llm.unwrap().model, "env-model");
        let over = FileConfig::from_json(&serde_json::json!({"llm": {"model": "lsp-model"}})).unwrap();
        let s = Settings::load(
            &env(&[("SCHOLIA_LLM_MODEL", "env-model")]),
            Some(dir.path()),
            Some(&over),
        )
        .unwrap();
        assert_eq!(s.llm.unwrap().model, "lsp-model");

        std::fs::write(dir.path().join(CONFIG_FILE), "[llm]\nmodle = \"typo\"\n").unwrap();
        let e = Settings::load(&env(&[]), Some(dir.path()), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(".scholia.toml: line 2: unknown field `modle`, expected one of"),
            "{e}"
        );
    }

    /// The example in the README is a working configuration, and documents every variable.
    #[test]
    fn readme_is_current() {
        let readme = include_str!("../../README.md");
        let toml = readme.split("```toml\n").nth(1).unwrap().split("```").next().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), toml).unwrap();
        let env = trusting(dir.path(), config.path(), &[("MY_KEY_VAR", "k")]);
        let s = Settings::load(&env, Some(dir.path()), None).unwrap();
        assert_eq!(s.llm.unwrap().model, "qwen2.5:7b");
        assert_eq!(s.gemini_cli.correction_model.as_deref(), Some("gemini-2.5-flash"));
        for (name, _) in ENV_VARS {
            assert!(readme.contains(&format!("`{name}`")), "README lacks {name}");
        }
    }
}
