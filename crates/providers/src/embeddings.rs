//! An OpenAI-compatible `/v1/embeddings` endpoint (Ollama, llama.cpp's server, vLLM, OpenAI,
//! any compatible host) as an [`Embedder`]: batched requests, retries of 429, 5xx and timeouts
//! with backoff (honouring `Retry-After`), one deadline per call across its retries ([`Budget`]:
//! the vault's vectors wait long, a question someone waits on does not). Its own small runtime
//! runs the requests, so the index's blocking threads can call it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use scholia_embed::{EmbedError, Embedder, PromptSettings, normalize};

/// Texts per request (OpenAI accepts 2,048; local servers are happier with fewer).
const BATCH: usize = 64;
/// How long one call may take, its retries included, and how often it is tried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub deadline: Duration,
    pub attempts: u32,
    /// Whether a refused connection is tried again (a server restarting); else nothing
    /// listens, and waiting for it only delays the answer by words.
    pub retry_refused: bool,
}

/// The vault's vectors, in the background or under `scholia index`'s progress bar.
pub const BULK: Budget = Budget {
    deadline: Duration::from_secs(60),
    attempts: 5,
    retry_refused: true,
};
/// A question, or the first call of a command someone waits on (`scholia search`): a dead
/// endpoint cost every search 8 s of retries, a hung one 60 s, before words answered.
pub const QUICK: Budget = Budget {
    deadline: Duration::from_secs(4),
    attempts: 2,
    retry_refused: false,
};
/// After texts someone waits on could not be embedded, such texts go by words without asking
/// for this long (a server's searches do not each wait out [`QUICK`] on an endpoint that is
/// down, nor research each of its related notes).
const QUIET_AFTER_FAILURE: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 64 * 1024 * 1024;
/// How often a request that is waited on asks whether to stop.
const STOP_POLL: Duration = Duration::from_millis(50);

/// How texts are asked for: after which prompt, within which [`Budget`], until `stop`.
struct Ask<'a> {
    prompt: &'a str,
    budget: Budget,
    stop: &'a dyn Fn() -> bool,
}

#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// The API's base, e.g. `http://localhost:11434/v1` (without `/embeddings`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Tokens the model reads at most (texts are cut to about this many characters × 4).
    pub max_tokens: usize,
    /// What is put before a question and before a note (the model's own wish, told by the
    /// settings: the API does not add them).
    pub prompts: PromptSettings,
}

pub struct EndpointEmbedder {
    config: EndpointConfig,
    dims: usize,
    /// What it answered for [`scholia_embed::PROBE`] when it connected.
    probe: Vec<f32>,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
    /// Until when questions are not sent, and why (the last question's failure).
    quiet: std::sync::Mutex<Option<(Instant, String)>>,
}

impl EndpointEmbedder {
    /// Connects and asks for one vector, to learn the model's dimensions, within `probe`
    /// ([`QUICK`] for a command someone waits on, [`BULK`] where a cold model may take its
    /// time to load): an endpoint that is down or wrong is an error here, before the vault
    /// counts on it. Blocking (call off the async runtime).
    ///
    /// `stop` ends the wait at once ([`EmbedError::Stopped`]): Ctrl-C under `scholia index`
    /// did nothing for the minute a hung host may take.
    pub fn connect(
        config: EndpointConfig,
        probe: Budget,
        stop: &dyn Fn() -> bool,
    ) -> Result<EndpointEmbedder, EmbedError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| EmbedError::Endpoint(format!("could not start its runtime: {e}")))?;
        let http = {
            let _guard = rt.enter();
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .map_err(|e| EmbedError::Endpoint(e.to_string()))?
        };
        let mut e = EndpointEmbedder {
            config,
            dims: 0,
            probe: Vec::new(),
            http,
            rt,
            quiet: std::sync::Mutex::new(None),
        };
        let ask = Ask {
            prompt: e.document(),
            budget: probe,
            stop,
        };
        let probe = e.request(&[scholia_embed::PROBE], &ask)?;
        e.probe = probe.into_iter().next().unwrap_or_default();
        e.dims = e.probe.len();
        if e.dims == 0 {
            return Err(EmbedError::Endpoint(format!(
                "{}: answered an empty vector",
                e.where_()
            )));
        }
        Ok(e)
    }

    /// The endpoint as messages show it (never its key).
    fn where_(&self) -> String {
        format!(
            "{}/embeddings (model `{}`)",
            crate::http::redact(self.config.base_url.trim_end_matches('/')),
            self.config.model
        )
    }

    fn document(&self) -> &str {
        self.config.prompts.document.as_deref().unwrap_or("")
    }

    /// One batch, each text after the prompt, within the budget, given up when `stop` says so
    /// (asked every [`STOP_POLL`]).
    fn request(&self, texts: &[&str], ask: &Ask) -> Result<Vec<Vec<f32>>, EmbedError> {
        let Ask { prompt, budget, stop } = *ask;
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let cut: Vec<String> = texts
            .iter()
            .map(|t| {
                prompt
                    .chars()
                    .chain(t.chars())
                    .take(self.config.max_tokens * 4)
                    .collect()
            })
            .collect();
        let body = json!({"model": self.config.model, "input": cut});
        let deadline = Instant::now() + budget.deadline;
        let fail = |m: String| EmbedError::Endpoint(format!("{}: {m}", self.where_()));
        let asked = async {
            let mut attempt = 0u32;
            loop {
                attempt += 1;
                let mut req = self
                    .http
                    .post(&url)
                    .json(&body)
                    .timeout(deadline.saturating_duration_since(Instant::now()));
                if let Some(key) = &self.config.api_key {
                    req = req.bearer_auth(key);
                }
                let retry = match req.send().await {
                    Ok(r) if r.status().is_success() => {
                        let bytes = crate::http::read_body(r, MAX_BODY)
                            .await
                            .map_err(|e| fail(e.to_string()))?;
                        return parse(&bytes, texts.len()).map_err(fail);
                    }
                    Ok(r) if r.status().as_u16() == 429 || r.status().is_server_error() => {
                        let wait = crate::http::retry_after_header(r.headers());
                        (format!("HTTP {}", r.status().as_u16()), wait)
                    }
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let text = crate::http::read_text(r, 4096).await.unwrap_or_default();
                        return Err(fail(format!("HTTP {status}: {}", text.trim())));
                    }
                    Err(e) if e.is_timeout() || (e.is_connect() && budget.retry_refused) => {
                        (crate::http::reason(e), None)
                    }
                    Err(e) => return Err(fail(crate::http::reason(e))),
                };
                let backoff = Duration::from_millis(250 * 2u64.pow(attempt.min(6)) + fastrand::u64(0..250));
                let wait = retry.1.unwrap_or(backoff);
                if attempt >= budget.attempts || crate::http::past_deadline(wait, deadline) {
                    return Err(fail(format!("{} (after {attempt} attempts)", retry.0)));
                }
                tokio::time::sleep(wait).await;
            }
        };
        self.rt.block_on(async {
            tokio::select! {
                answer = asked => answer,
                () = crate::http::stopped(stop, STOP_POLL) => Err(EmbedError::Stopped(format!("while waiting for {}", self.where_()))),
            }
        })
    }
}

/// The vectors of an OpenAI-style answer, by `index` (by place when a host leaves it out),
/// normalised. Every vector asked for must be answered once, and every value be a number an
/// `f32` holds: a `null` or a value out of range is an error naming the item, not a zero that
/// would give the note a vector of no meaning without a word said.
fn parse(bytes: &[u8], want: usize) -> Result<Vec<Vec<f32>>, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let data = v["data"].as_array().ok_or("the answer has no `data`")?;
    let mut out = vec![Vec::new(); want];
    for (at, item) in data.iter().enumerate() {
        let i = match &item["index"] {
            Value::Null => at,
            index => index
                .as_u64()
                .map(|i| i as usize)
                .filter(|i| *i < want)
                .ok_or_else(|| format!("data[{at}].index is {index}; valid: 0 to {}", want.saturating_sub(1)))?,
        };
        let e = item["embedding"]
            .as_array()
            .ok_or_else(|| format!("data[{at}].embedding is not a list of numbers"))?;
        let mut vector = Vec::with_capacity(e.len());
        for (k, x) in e.iter().enumerate() {
            match x.as_f64().map(|x| x as f32).filter(|x| x.is_finite()) {
                Some(x) => vector.push(x),
                None => return Err(format!("data[{at}].embedding[{k}] is {x}, not a number a vector holds")),
            }
        }
        normalize(&mut vector);
        let slot = out.get_mut(i).expect("an index below `want`");
        if !slot.is_empty() {
            return Err(format!("data[{at}].index {i} was answered twice"));
        }
        *slot = vector;
    }
    if out.iter().any(Vec::is_empty) {
        return Err(format!("{} vectors asked for, {} answered", want, data.len()));
    }
    Ok(out)
}

impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> String {
        format!(
            "endpoint:{}:{}",
            self.config.base_url.trim_end_matches('/'),
            self.config.model
        )
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn probe(&self) -> Option<Vec<f32>> {
        Some(self.probe.clone())
    }

    fn max_tokens(&self) -> usize {
        self.config.max_tokens
    }

    fn count_tokens(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.batches(
            texts,
            &Ask {
                prompt: self.document(),
                budget: BULK,
                stop: &|| false,
            },
        )
    }

    fn embed_until(&self, texts: &[&str], stop: &dyn Fn() -> bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.batches(
            texts,
            &Ask {
                prompt: self.document(),
                budget: BULK,
                stop,
            },
        )
    }

    fn embed_now(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.now(texts, self.document())
    }

    fn prompts(&self) -> PromptSettings {
        self.config.prompts.clone()
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let prompt = self.config.prompts.query.as_deref().unwrap_or("");
        Ok(self.now(&[query], prompt)?.pop().unwrap_or_default())
    }
}

impl EndpointEmbedder {
    /// Texts someone waits on: within [`QUICK`], and not asked for at all for a while after
    /// such texts failed.
    fn now(&self, texts: &[&str], prompt: &str) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut quiet = scholia_base::lock(&self.quiet);
        if let Some((until, why)) = quiet.as_ref()
            && Instant::now() < *until
        {
            return Err(EmbedError::Endpoint(why.clone()));
        }
        let asked = self.batches(
            texts,
            &Ask {
                prompt,
                budget: QUICK,
                stop: &|| false,
            },
        );
        *quiet = match &asked {
            Err(EmbedError::Endpoint(why)) => Some((Instant::now() + QUIET_AFTER_FAILURE, why.clone())),
            Err(other) => Some((Instant::now() + QUIET_AFTER_FAILURE, other.to_string())),
            Ok(_) => None,
        };
        asked
    }

    /// `texts` embedded batch by batch as `ask` says (its budget for each batch), every
    /// vector of the model's size.
    fn batches(&self, texts: &[&str], ask: &Ask) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let got = self.request(batch, ask)?;
            if got.iter().any(|v| v.len() != self.dims) {
                return Err(EmbedError::Endpoint(format!(
                    "{}: answered vectors of another size than {}",
                    self.where_(),
                    self.dims
                )));
            }
            out.extend(got);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_any_order_are_put_in_order() {
        let body = br#"{"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [3, 4]}]}"#;
        let v = parse(body, 2).unwrap();
        assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        assert!(
            parse(br#"{"data": [{"index": 0, "embedding": [1]}]}"#, 2)
                .unwrap_err()
                .contains("2 vectors asked for, 1 answered")
        );
        assert!(parse(b"<html>", 1).is_err());
    }

    /// What a broken or half-compatible host answers: each an error naming the item and what
    /// is wrong with it, or, for a host that leaves `index` out, the vectors in their places.
    #[test]
    fn an_answer_is_read_whole_or_refused() {
        let check = |body: &str, want: usize, expected: Result<Vec<Vec<f32>>, &str>| {
            let got = parse(body.as_bytes(), want);
            match (&got, &expected) {
                (Ok(v), Ok(e)) => assert_eq!(v, e, "{body}"),
                (Err(m), Err(e)) => assert!(m.contains(e), "{body}: {m}"),
                _ => panic!("{body}: {got:?}, expected {expected:?}"),
            }
        };
        check(
            r#"{"data": [{"embedding": [3, 4]}, {"embedding": [0, 2]}]}"#,
            2,
            Ok(vec![vec![0.6, 0.8], vec![0.0, 1.0]]),
        );
        check(
            r#"{"data": [{"index": 0, "embedding": [1, null]}]}"#,
            1,
            Err("data[0].embedding[1] is null"),
        );
        check(
            r#"{"data": [{"index": 0, "embedding": [1, "2"]}]}"#,
            1,
            Err("data[0].embedding[1] is \"2\""),
        );
        check(
            r#"{"data": [{"index": 0, "embedding": [1e39, 1]}]}"#,
            1,
            Err("data[0].embedding[0] is 1e+39"),
        );
        check(
            r#"{"data": [{"index": 0, "embedding": "AAAA"}]}"#,
            1,
            Err("data[0].embedding is not a list"),
        );
        check(
            r#"{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [2]}]}"#,
            2,
            Err("index 0 was answered twice"),
        );
        check(
            r#"{"data": [{"index": 2, "embedding": [1]}]}"#,
            2,
            Err("data[0].index is 2; valid: 0 to 1"),
        );
        check(
            r#"{"data": [{"index": -1, "embedding": [1]}]}"#,
            1,
            Err("data[0].index is -1; valid: 0 to 0"),
        );
        check(r#"{"data": []}"#, 1, Err("1 vectors asked for, 0 answered"));
        check(
            r#"{"error": {"message": "model not found"}}"#,
            1,
            Err("the answer has no `data`"),
        );
    }

    /// A host that takes the connection and never answers: the minute a cold model is
    /// granted ends when `stop` says so, not when the minute is up.
    #[test]
    fn a_stop_ends_the_wait_for_a_hung_host() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let held: Vec<_> = listener.incoming().flatten().collect();
            drop(held);
        });
        let config = EndpointConfig {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            model: "m".into(),
            prompts: PromptSettings::default(),
            api_key: None,
            max_tokens: 256,
        };
        let started = Instant::now();
        let stop = || started.elapsed() > Duration::from_millis(300);
        let e = EndpointEmbedder::connect(config, BULK, &stop).err().unwrap();
        let took = started.elapsed();
        assert!(
            matches!(&e, EmbedError::Stopped(m) if m.contains(&format!("127.0.0.1:{port}"))),
            "{e}"
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}
