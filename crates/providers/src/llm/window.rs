//! The model's context window: configured (`[llm] context_tokens`), else asked of the server
//! where it says (llama.cpp `/props`, Ollama `/api/show`, llama-cpp-python by a probe that
//! fails before any token is evaluated), else learnt from a context-overflow error. And the
//! estimate prompts are fitted with.

use std::time::Duration;

use serde_json::{Value, json};

/// Tokens in `text`, estimated on the high side: a token is about four bytes of English and
/// one CJK character (three bytes); dividing bytes by three covers both.
pub fn estimate_tokens(text: &str) -> usize {
    estimate_tokens_of_len(text.len())
}

pub fn estimate_tokens_of_len(bytes: usize) -> usize {
    bytes.div_ceil(3)
}

/// `text` cut to about `tokens` tokens (at a character boundary); whether it was cut.
pub fn fit_text(text: &str, tokens: usize) -> (&str, bool) {
    let max = tokens.saturating_mul(3);
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// Ollama's context when a model sets no `num_ctx` (its documented default).
const OLLAMA_DEFAULT_CTX: u32 = 4096;
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The server's root: the base URL without its `/v1`.
fn root(base_url: &str) -> &str {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

/// Words of the llama-cpp-python probe: one token each, more than any window it is likely
/// run with below which fitting matters.
const PROBE_WORDS: usize = 32_768;

/// Asks the server for its context window: llama.cpp's `/props`, then Ollama's `/api/show`,
/// then llama-cpp-python's (see [`llama_cpp_python`]). `None` when none answers (OpenAI and
/// most gateways).
pub async fn probe(http: &reqwest::Client, base_url: &str, model: &str) -> Option<u32> {
    if let Some(n) = reported(http, base_url, model).await {
        return Some(n);
    }
    llama_cpp_python(http, base_url, model).await
}

/// llama-cpp-python's server reports its window nowhere (`/v1/models` names only the model),
/// but it checks a completion's prompt against the window before anything else, and refuses
/// `logprobs` (without `--logits_all`, its default) before evaluating a token: a prompt of
/// [`PROBE_WORDS`] words with `logprobs` fails at once, naming the window when the prompt
/// exceeds it. Sent only to a server whose OpenAPI title says it is llama-cpp-python.
async fn llama_cpp_python(http: &reqwest::Client, base_url: &str, model: &str) -> Option<u32> {
    let api = http
        .get(format!("{}/openapi.json", root(base_url)))
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .ok()
        .filter(|r| r.status().is_success())?
        .json::<Value>()
        .await
        .ok()?;
    let title = api.pointer("/info/title").and_then(Value::as_str).unwrap_or_default();
    if !title.contains("llama.cpp Python") {
        return None;
    }
    let probe = json!({
        "model": model,
        "prompt": " ok".repeat(PROBE_WORDS),
        "max_tokens": 1,
        "logprobs": 1,
    });
    let answer = http
        .post(format!("{}/completions", base_url.trim_end_matches('/')))
        .json(&probe)
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .ok()?;
    if answer.status().is_success() {
        return None;
    }
    overflow(&answer.text().await.ok()?).flatten()
}

async fn reported(http: &reqwest::Client, base_url: &str, model: &str) -> Option<u32> {
    let root = root(base_url);
    let get = http.get(format!("{root}/props")).timeout(PROBE_TIMEOUT).send();
    if let Ok(r) = get.await
        && r.status().is_success()
        && let Ok(v) = r.json::<Value>().await
        && let Some(n) = llama_cpp_ctx(&v)
    {
        return Some(n);
    }
    let show = http
        .post(format!("{root}/api/show"))
        .json(&json!({"model": model}))
        .timeout(PROBE_TIMEOUT)
        .send();
    if let Ok(r) = show.await
        && r.status().is_success()
        && let Ok(v) = r.json::<Value>().await
    {
        return ollama_ctx(&v);
    }
    None
}

fn llama_cpp_ctx(v: &Value) -> Option<u32> {
    v.pointer("/default_generation_settings/n_ctx")
        .or_else(|| v.get("n_ctx"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// Ollama runs a model with its `num_ctx` parameter, else its default — not the model's
/// (often far larger) trained `context_length`.
fn ollama_ctx(v: &Value) -> Option<u32> {
    let params = v.get("parameters").and_then(Value::as_str).unwrap_or_default();
    let num_ctx = params.lines().find_map(|l| {
        let mut parts = l.split_whitespace();
        (parts.next() == Some("num_ctx")).then(|| parts.next()?.parse::<u32>().ok())?
    });
    if num_ctx.is_some() {
        return num_ctx;
    }
    let trained = v
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|m| m.iter().find(|(k, _)| k.ends_with(".context_length")))
        .and_then(|(_, n)| n.as_u64())
        .and_then(|n| u32::try_from(n).ok());
    Some(trained.map_or(OLLAMA_DEFAULT_CTX, |t| t.min(OLLAMA_DEFAULT_CTX)))
}

/// When `message` reports a prompt too long for the context: `Some` with the window if it says
/// (llama-cpp-python "exceed context window of 2048", OpenAI and vLLM "maximum context length
/// is 8192 tokens", llama.cpp "exceeds the available context size (4096 tokens)").
pub fn overflow(message: &str) -> Option<Option<u32>> {
    let lower = message.to_lowercase();
    let at = lower.find("context")?;
    let said = [
        "exceed",
        "maximum context length",
        "too long",
        "context size",
        "context window",
        "context_length",
    ]
    .iter()
    .any(|p| lower.contains(p));
    if !said {
        return None;
    }
    let number = lower[at..]
        .split(|c: char| !c.is_ascii_digit())
        .find(|d| !d.is_empty())
        .and_then(|d| d.parse::<u32>().ok())
        .filter(|n| *n >= 256);
    Some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_servers() {
        assert_eq!(
            llama_cpp_ctx(&json!({"default_generation_settings": {"n_ctx": 8192}})),
            Some(8192)
        );
        assert_eq!(llama_cpp_ctx(&json!({"detail": "Not Found"})), None);
        let ollama = json!({"parameters": "stop \"<end_of_turn>\"\nnum_ctx 16384", "model_info": {"gemma3.context_length": 131072}});
        assert_eq!(ollama_ctx(&ollama), Some(16384));
        assert_eq!(
            ollama_ctx(&json!({"model_info": {"llama.context_length": 131072}})),
            Some(4096)
        );
        assert_eq!(
            ollama_ctx(&json!({"model_info": {"tiny.context_length": 2048}})),
            Some(2048)
        );
        assert_eq!(root("http://h:8080/v1/"), "http://h:8080");
    }

    #[test]
    fn overflow_messages() {
        let check = |m: &str, want: Option<Option<u32>>| assert_eq!(overflow(m), want, "{m}");
        check(
            "Requested tokens (5000) exceed context window of 2048",
            Some(Some(2048)),
        );
        check(
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            Some(Some(8192)),
        );
        check(
            "the request exceeds the available context size (4096 tokens), try increasing it",
            Some(Some(4096)),
        );
        check("context length exceeded", Some(None));
        check("invalid response_format", None);
        check("the context is fine", None);
    }

    #[test]
    fn estimates_err_high() {
        assert!(estimate_tokens("The quick brown fox jumps over the lazy dog") >= 9);
        assert!(estimate_tokens("発酵の温度と時間") >= 8);
    }
}
