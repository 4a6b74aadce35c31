//! Token usage and cost, per call and summed per pipeline run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub reasoning_tokens: u64,
    /// As the provider reports it (`usage.total_tokens`), else prompt + completion.
    pub total_tokens: u64,
    /// As reported by the provider (OpenRouter's `usage.cost`), else from the price table;
    /// `None` when neither is known.
    pub cost_usd: Option<f64>,
    pub calls: u32,
}

impl Usage {
    pub fn from_response(raw: &Value, price: Option<Price>) -> Usage {
        let u = raw.get("usage");
        let n = |ptr: &str| u.and_then(|u| u.pointer(ptr)).and_then(Value::as_u64).unwrap_or(0);
        let prompt_tokens = n("/prompt_tokens");
        let completion_tokens = n("/completion_tokens");
        let reported = u.and_then(|u| u.get("cost")).and_then(Value::as_f64);
        let priced = price.map(|p| (prompt_tokens as f64 * p.input + completion_tokens as f64 * p.output) / 1e6);
        Usage {
            prompt_tokens,
            completion_tokens,
            reasoning_tokens: n("/completion_tokens_details/reasoning_tokens"),
            total_tokens: match n("/total_tokens") {
                0 => prompt_tokens + completion_tokens,
                reported => reported,
            },
            cost_usd: reported.or(priced),
            calls: 1,
        }
    }

    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.total_tokens += other.total_tokens;
        self.calls += other.calls;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cost_from_provider_or_price_table() {
        let raw = json!({"usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
        assert_eq!(Usage::from_response(&raw, None).cost_usd, None);
        let p = Price {
            input: 1.0,
            output: 2.0,
        };
        assert_eq!(Usage::from_response(&raw, Some(p)).cost_usd, Some(0.002));
        let raw = json!({"usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 0.5}});
        assert_eq!(Usage::from_response(&raw, Some(p)).cost_usd, Some(0.5));
        let mut total = Usage::default();
        total.add(&Usage::from_response(&raw, None));
        total.add(&Usage::from_response(&json!({"usage": {"prompt_tokens": 3}}), None));
        assert_eq!((total.prompt_tokens, total.calls, total.cost_usd), (4, 2, Some(0.5)));
        assert_eq!(total.total_tokens, 5, "prompt + completion when not reported");
        let raw = json!({"usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 42}});
        assert_eq!(
            Usage::from_response(&raw, None).total_tokens,
            42,
            "the provider's own count kept"
        );
    }
}
