//! Perplexity Sonar tiers over OpenRouter (DESIGN §6, seed 000): `ask(query, model, timeout)`.
//! One table holds each tier's OpenRouter id, default timeout, cost tier and output budget.
//! The effective timeout is one deadline for the call and its retries, and also bounds how long
//! a caller waits on an identical request already in flight. Answers are cached briefly; the
//! key includes model and timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use scholia_base::{Coded, ErrorKind};

use crate::llm::{ChatClient, ChatRequest, LlmConfig, LlmError, Message, Usage};

mod sources;
pub use sources::{SonarSource, sources, urls_in};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CostTier {
    Standard,
    Premium,
}

#[derive(Debug, PartialEq, Eq)]
pub struct SonarModel {
    /// What users pass: `sonar`, `sonar-pro`, …
    pub name: &'static str,
    /// OpenRouter's identifier.
    pub id: &'static str,
    pub timeout_ms: u64,
    pub cost_tier: CostTier,
    /// Output budget: large enough that a deep-research report is not cut off.
    pub max_tokens: u32,
    /// When to pick this tier (goes into the tool description).
    pub use_when: &'static str,
}

pub const MODELS: [SonarModel; 4] = [
    SonarModel {
        name: "sonar",
        id: "perplexity/sonar",
        timeout_ms: 30_000,
        cost_tier: CostTier::Standard,
        max_tokens: 8_192,
        use_when: "fast factual Q&A and quick lookups (default; cheapest)",
    },
    SonarModel {
        name: "sonar-pro",
        id: "perplexity/sonar-pro",
        timeout_ms: 60_000,
        cost_tier: CostTier::Premium,
        max_tokens: 16_384,
        use_when: "multi-step questions that need more sources and follow-up searches",
    },
    SonarModel {
        name: "sonar-reasoning-pro",
        id: "perplexity/sonar-reasoning-pro",
        timeout_ms: 120_000,
        cost_tier: CostTier::Premium,
        max_tokens: 32_768,
        use_when: "questions that need chain-of-thought reasoning: comparisons, trade-offs, analysis",
    },
    SonarModel {
        name: "sonar-deep-research",
        id: "perplexity/sonar-deep-research",
        timeout_ms: 300_000,
        cost_tier: CostTier::Premium,
        max_tokens: 65_536,
        use_when: "exhaustive research reports across many sources (minutes; most expensive)",
    },
];

pub const DEFAULT_MODEL: &str = "sonar";
pub const MIN_TIMEOUT_MS: u64 = 5_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
const CACHE_TTL: Duration = Duration::from_secs(300);
const CACHE_ENTRIES: usize = 256;

pub fn model(name: &str) -> Result<&'static SonarModel, SonarError> {
    MODELS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| SonarError::InvalidModel(name.to_string()))
}

fn valid_names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// The `search` tool's description (MCP) and `ask --help`: which tier to use when.
pub fn tool_description() -> String {
    let mut d = String::from(
        "Search the web with Perplexity Sonar (via OpenRouter) and get an answer with its sources. \
         Choose the model by how much depth the question needs:\n",
    );
    for m in &MODELS {
        d.push_str(&format!(
            "- `{}`: {} (default timeout {} s{})\n",
            m.name,
            m.use_when,
            m.timeout_ms / 1000,
            if m.cost_tier == CostTier::Premium {
                ", premium cost"
            } else {
                ""
            }
        ));
    }
    d.push_str(&format!(
        "`timeout` (milliseconds, {MIN_TIMEOUT_MS}..={MAX_TIMEOUT_MS}) overrides the model's default; it bounds the whole call including retries."
    ));
    d
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SonarError {
    #[error("Invalid model '{0}'. Valid options: {valid}", valid = valid_names())]
    InvalidModel(String),
    #[error(
        "timeout: `{0}` is not valid; valid: an integer number of milliseconds from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}"
    )]
    InvalidTimeout(String),
    #[error("query: empty; give the question to ask")]
    EmptyQuery,
    #[error("Sonar needs OpenRouter: set OPENROUTER_API_KEY (and OPENROUTER_BASE_URL for another endpoint)")]
    NotConfigured,
    #[error("OpenRouter rejected the API key (HTTP {0}); check OPENROUTER_API_KEY")]
    Auth(u16),
    #[error("OpenRouter kept rate-limiting (HTTP 429) until the {0} ms deadline; try again later")]
    RateLimited(u64),
    #[error("OpenRouter server error (HTTP {0}) persisted; try again later")]
    Server(u16),
    #[error(
        "{model} did not answer within {ms} ms (retries included); pass a larger timeout (at most {MAX_TIMEOUT_MS})"
    )]
    Timeout { model: &'static str, ms: u64 },
    #[error("{}", .0.to_string().replacen("LLM", "OpenRouter", 1))]
    Upstream(LlmError),
}

impl Coded for SonarError {
    fn code(&self) -> &'static str {
        match self {
            SonarError::InvalidModel(_) => "INVALID_MODEL",
            SonarError::InvalidTimeout(_) => "INVALID_TIMEOUT",
            SonarError::EmptyQuery => "INVALID_QUERY",
            SonarError::NotConfigured => "NOT_CONFIGURED",
            SonarError::Auth(_) => "AUTH_FAILED",
            SonarError::RateLimited(_) => "RATE_LIMITED",
            SonarError::Server(_) => "UPSTREAM_ERROR",
            SonarError::Timeout { .. } => "TIMEOUT",
            SonarError::Upstream(e) => e.code(),
        }
    }

    fn kind(&self) -> ErrorKind {
        match self {
            SonarError::InvalidModel(_) | SonarError::InvalidTimeout(_) | SonarError::EmptyQuery => {
                ErrorKind::InvalidInput
            }
            SonarError::NotConfigured => ErrorKind::NotConfigured,
            SonarError::Upstream(e) => e.kind(),
            _ => ErrorKind::Upstream,
        }
    }
}

/// A validated request.
#[derive(Debug, Clone)]
pub struct AskRequest {
    pub query: String,
    pub model: &'static SonarModel,
    /// The effective timeout: the override, else the model's default.
    pub timeout_ms: u64,
}

impl AskRequest {
    /// `timeout` as given by a caller (JSON): must be an integer in range.
    pub fn new(query: &str, model_name: Option<&str>, timeout: Option<&Value>) -> Result<AskRequest, SonarError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(SonarError::EmptyQuery);
        }
        let model = model(model_name.unwrap_or(DEFAULT_MODEL))?;
        let timeout_ms = match timeout {
            None | Some(Value::Null) => model.timeout_ms,
            Some(v) => match v.as_u64() {
                Some(ms) if (MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&ms) => ms,
                _ => {
                    let shown = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                    return Err(SonarError::InvalidTimeout(shown));
                }
            },
        };
        Ok(AskRequest {
            query: query.to_string(),
            model,
            timeout_ms,
        })
    }

    /// From a command-line string: numbers are numbers, anything else stays text (and fails).
    pub fn timeout_arg(s: &str) -> Value {
        serde_json::from_str::<Value>(s.trim())
            .ok()
            .filter(Value::is_number)
            .unwrap_or_else(|| Value::String(s.to_string()))
    }

    fn key(&self) -> Key {
        Key {
            model: self.model.id,
            timeout_ms: self.timeout_ms,
            query: self.query.split_whitespace().collect::<Vec<_>>().join(" "),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    model: &'static str,
    timeout_ms: u64,
    query: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskMetadata {
    /// The tier asked (`sonar-pro`).
    pub model: &'static str,
    /// OpenRouter's id (`perplexity/sonar-pro`).
    pub model_id: &'static str,
    /// The effective timeout in milliseconds.
    pub timeout: u64,
    /// Only for premium tiers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_tier: Option<CostTier>,
    /// Milliseconds until the answer (of the upstream call; a cached answer keeps its own).
    pub response_time: u64,
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Served from the short-lived cache or shared with an identical request in flight.
    pub cached: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SonarAnswer {
    pub answer: String,
    pub sources: Vec<SonarSource>,
    pub metadata: AskMetadata,
}

type Slot = Arc<tokio::sync::OnceCell<Result<SonarAnswer, SonarError>>>;

/// The OpenRouter client with in-flight sharing and the answer cache.
pub struct Sonar {
    client: ChatClient,
    system: String,
    inflight: Mutex<HashMap<Key, Slot>>,
    cache: Mutex<HashMap<Key, (Instant, SonarAnswer)>>,
    ttl: Duration,
    upstream_calls: std::sync::atomic::AtomicU64,
}

impl Sonar {
    pub fn new(config: LlmConfig, system: String) -> Sonar {
        Sonar {
            client: ChatClient::new(config),
            system,
            inflight: Mutex::default(),
            cache: Mutex::default(),
            ttl: CACHE_TTL,
            upstream_calls: Default::default(),
        }
    }

    pub fn with_ttl(mut self, ttl: Duration) -> Sonar {
        self.ttl = ttl;
        self
    }

    /// Calls made to OpenRouter so far (not counting shared or cached answers).
    pub fn upstream_calls(&self) -> u64 {
        self.upstream_calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub async fn ask(&self, req: &AskRequest) -> Result<SonarAnswer, SonarError> {
        let key = req.key();
        if let Some(hit) = self.cached(&key) {
            return Ok(hit);
        }
        let deadline = Instant::now() + Duration::from_millis(req.timeout_ms);
        let (slot, first) = {
            let mut inflight = scholia_base::lock(&self.inflight);
            match inflight.get(&key) {
                Some(s) => (s.clone(), false),
                None => {
                    let s = Slot::default();
                    inflight.insert(key.clone(), s.clone());
                    (s, true)
                }
            }
        };
        let waited = tokio::time::timeout_at(
            deadline.into(),
            slot.get_or_init(|| async {
                let r = self.call(req, deadline).await;
                if let Ok(a) = &r {
                    let mut cache = scholia_base::lock(&self.cache);
                    if cache.len() >= CACHE_ENTRIES {
                        let oldest = cache.iter().min_by_key(|(_, (t, _))| *t).map(|(k, _)| k.clone());
                        if let Some(k) = oldest {
                            cache.remove(&k);
                        }
                    }
                    cache.insert(key.clone(), (Instant::now(), a.clone()));
                }
                scholia_base::lock(&self.inflight).remove(&key);
                r
            }),
        )
        .await;
        let result = match waited {
            Ok(r) => r.clone(),
            Err(_) => {
                if first {
                    // Let the next caller start afresh rather than wait on a stalled call.
                    scholia_base::lock(&self.inflight).remove(&key);
                }
                Err(SonarError::Timeout {
                    model: req.model.name,
                    ms: req.timeout_ms,
                })
            }
        };
        result.map(|mut a| {
            if !first {
                a.metadata.cached = true;
            }
            a
        })
    }

    fn cached(&self, key: &Key) -> Option<SonarAnswer> {
        let mut cache = scholia_base::lock(&self.cache);
        match cache.get(key) {
            Some((at, a)) if at.elapsed() < self.ttl => {
                let mut a = a.clone();
                a.metadata.cached = true;
                Some(a)
            }
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }

    async fn call(&self, req: &AskRequest, deadline: Instant) -> Result<SonarAnswer, SonarError> {
        self.upstream_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let started = Instant::now();
        let chat = ChatRequest {
            messages: vec![Message::system(self.system.clone()), Message::user(req.query.clone())],
            model: Some(req.model.id.to_string()),
            max_tokens: Some(req.model.max_tokens),
            ..Default::default()
        };
        let answer = self.client.chat(&chat, deadline).await.map_err(|e| match e {
            LlmError::Auth { status, .. } => SonarError::Auth(status),
            LlmError::RateLimited { .. } => SonarError::RateLimited(req.timeout_ms),
            LlmError::Server { status, .. } => SonarError::Server(status),
            LlmError::Timeout(_) => SonarError::Timeout {
                model: req.model.name,
                ms: req.timeout_ms,
            },
            other => SonarError::Upstream(other),
        })?;
        let mut found = sources(&answer.raw);
        if found.is_empty() {
            // Neither `citations` nor annotations: the answer's own links are its sources.
            found = urls_in(&answer.content);
        }
        Ok(SonarAnswer {
            sources: found,
            metadata: AskMetadata {
                model: req.model.name,
                model_id: req.model.id,
                timeout: req.timeout_ms,
                cost_tier: (req.model.cost_tier == CostTier::Premium).then_some(CostTier::Premium),
                response_time: started.elapsed().as_millis() as u64,
                cost: answer.usage.cost_usd,
                usage: answer.usage,
                cached: false,
            },
            answer: answer.content,
        })
    }
}

impl scholia_base::Summary for SonarAnswer {
    fn summary(&self) -> String {
        format!(
            "{}: {} sources in {} ms",
            self.metadata.model,
            self.sources.len(),
            self.metadata.response_time
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table() {
        // (name, id, default timeout, premium)
        let check = |name: &str, id: &str, timeout: u64, premium: bool| {
            let m = model(name).unwrap();
            assert_eq!((m.id, m.timeout_ms), (id, timeout), "{name}");
            assert_eq!(m.cost_tier == CostTier::Premium, premium, "{name}");
            assert!(m.max_tokens >= 8_192);
            let r = AskRequest::new("q", Some(name), None).unwrap();
            assert_eq!(r.timeout_ms, timeout);
            let r = AskRequest::new("q", Some(name), Some(&json!(7_000))).unwrap();
            assert_eq!(r.timeout_ms, 7_000, "the override wins");
        };
        check("sonar", "perplexity/sonar", 30_000, false);
        check("sonar-pro", "perplexity/sonar-pro", 60_000, true);
        check("sonar-reasoning-pro", "perplexity/sonar-reasoning-pro", 120_000, true);
        check("sonar-deep-research", "perplexity/sonar-deep-research", 300_000, true);
        assert_eq!(AskRequest::new("q", None, None).unwrap().model.name, "sonar");
        assert!(model("sonar-deep-research").unwrap().max_tokens >= 32_768);
        let d = tool_description();
        assert!(MODELS.iter().all(|m| d.contains(&format!("`{}`", m.name))));
    }

    #[test]
    fn validation() {
        let err = |model: Option<&str>, timeout: Option<Value>| {
            AskRequest::new("q", model, timeout.as_ref()).unwrap_err().to_string()
        };
        assert_eq!(
            err(Some("invalid"), None),
            "Invalid model 'invalid'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"
        );
        assert_eq!(
            err(Some("perplexity/sonar"), None),
            "Invalid model 'perplexity/sonar'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"
        );
        let bounds = "valid: an integer number of milliseconds from 5000 to 600000";
        for bad in [
            json!(4_999),
            json!(600_001),
            json!(0),
            json!(-5),
            json!(5000.5),
            json!("abc"),
            json!("6000"),
        ] {
            let e = err(None, Some(bad.clone()));
            assert!(e.starts_with("timeout: `") && e.ends_with(bounds), "{bad}: {e}");
        }
        for ok in [5_000, 600_000] {
            assert_eq!(AskRequest::new("q", None, Some(&json!(ok))).unwrap().timeout_ms, ok);
        }
        assert_eq!(AskRequest::timeout_arg("7000"), json!(7000));
        assert_eq!(AskRequest::timeout_arg("7e3"), json!(7000.0));
        assert_eq!(AskRequest::timeout_arg("abc"), json!("abc"));
        assert_eq!(
            err(None, Some(AskRequest::timeout_arg("abc")))
                .split(';')
                .next()
                .unwrap(),
            "timeout: `abc` is not valid"
        );
        assert_eq!(AskRequest::new("  ", None, None).unwrap_err(), SonarError::EmptyQuery);
    }

    #[test]
    fn keys_include_model_and_timeout() {
        let k =
            |m: &str, t: Option<u64>, q: &str| AskRequest::new(q, Some(m), t.map(|t| json!(t)).as_ref()).unwrap().key();
        assert_eq!(k("sonar", None, "a  b"), k("sonar", None, " a b "));
        assert_ne!(k("sonar", None, "a"), k("sonar-pro", None, "a"));
        assert_ne!(k("sonar", None, "a"), k("sonar", Some(40_000), "a"));
        assert_eq!(
            k("sonar", None, "a"),
            k("sonar", Some(30_000), "a"),
            "the same effective timeout"
        );
    }
}
