//! Streamed chat completions (server-sent events): the answer is assembled from `delta`
//! chunks as they come, so progress can show generation and a stalled stream is noticed.

use serde_json::Value;

/// What the chunks of one stream add up to.
#[derive(Debug, Default)]
pub struct Assembled {
    pub content: String,
    /// Chunks that carried content: close to the number of generated tokens.
    pub chunks: u64,
    pub model: Option<String>,
    /// The `usage` object of the last chunk that had one (`stream_options.include_usage`).
    pub usage: Option<Value>,
    pub finish_reason: Option<String>,
    pub done: bool,
}

/// Splits server-sent events out of a byte buffer as they arrive.
#[derive(Debug, Default)]
pub struct Events {
    buf: Vec<u8>,
}

impl Events {
    /// Adds `bytes` and returns the `data:` payloads of the events now complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((end, sep)) = event_end(&self.buf) {
            let event: Vec<u8> = self.buf.drain(..end + sep).take(end).collect();
            let text = String::from_utf8_lossy(&event);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() {
                out.push(data.join("\n"));
            }
        }
        out
    }

    /// What is left when the body ends (a last event without its blank line).
    pub fn finish(&mut self) -> Vec<String> {
        let rest = std::mem::take(&mut self.buf);
        let mut tail = rest;
        tail.extend_from_slice(b"\n\n");
        self.push(&tail)
    }
}

fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

impl Assembled {
    /// Adds one event's payload; an error object in the stream is returned as its message.
    pub fn add(&mut self, data: &str) -> Result<(), String> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return Ok(()); // keep-alive comments and the like
        };
        if let Some(err) = v.get("error") {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(msg);
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_string());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        if let Some(choice) = v.get("choices").and_then(Value::as_array).and_then(|c| c.first()) {
            let piece = choice
                .pointer("/delta/content")
                .or_else(|| choice.pointer("/message/content"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !piece.is_empty() {
                self.content.push_str(piece);
                self.chunks += 1;
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(r.to_string());
            }
        }
        Ok(())
    }

    /// The response as if it had not been streamed (one `choices[0].message`).
    pub fn into_response(self, prompt_chars: usize) -> Value {
        // Servers that do not report usage for streams: estimated from what was seen.
        let usage = self.usage.unwrap_or_else(|| {
            serde_json::json!({
                "prompt_tokens": crate::llm::window::estimate_tokens_of_len(prompt_chars),
                "completion_tokens": self.chunks,
                "estimated": true,
            })
        });
        serde_json::json!({
            "model": self.model,
            "choices": [{"message": {"role": "assistant", "content": self.content}, "finish_reason": self.finish_reason}],
            "usage": usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_reads() {
        let mut e = Events::default();
        assert!(e.push(b"data: {\"a\":").is_empty());
        assert_eq!(e.push(b"1}\n\ndata: [DONE]\n\n"), vec!["{\"a\":1}", "[DONE]"]);
        assert_eq!(e.push(b": keep-alive\r\n\r\ndata: x\r\ndata: y\r\n\r\n"), vec!["x\ny"]);
        assert_eq!(e.push(b"data: tail"), Vec::<String>::new());
        assert_eq!(e.finish(), vec!["tail"]);
    }

    #[test]
    fn chunks_assemble_into_an_answer() {
        let mut a = Assembled::default();
        for d in [
            r#"{"model":"m","choices":[{"delta":{"role":"assistant"}}]}"#,
            r#"{"choices":[{"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}"#,
            "[DONE]",
        ] {
            a.add(d).unwrap();
        }
        assert_eq!((a.content.as_str(), a.chunks, a.done), ("Hello", 2, true));
        let r = a.into_response(100);
        assert_eq!(r["usage"]["prompt_tokens"], 7);
        assert_eq!(r["choices"][0]["message"]["content"], "Hello");
        let mut b = Assembled::default();
        assert_eq!(
            b.add(r#"{"error":{"message":"context full"}}"#).unwrap_err(),
            "context full"
        );
    }
}
