//! Cost and duration of a Gemini deep research, estimated from the query alone (no model
//! call): its length, how many questions and comparisons it asks, and words that ask for
//! breadth.

use schemars::JsonSchema;
use serde::Serialize;

use scholia_providers::llm::Price;

/// USD per million tokens unless `[tasks] price` says otherwise (Gemini 3 Pro pricing, as the
/// deep-research agent bills its tokens).
pub const DEFAULT_PRICE: Price = Price {
    input: 2.0,
    output: 12.0,
};

pub fn cost(price: Price, input_tokens: u64, output_tokens: u64) -> f64 {
    let usd = input_tokens as f64 / 1e6 * price.input + output_tokens as f64 / 1e6 * price.output;
    (usd * 100.0).round() / 100.0
}

/// How long a research may take, in minutes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Minutes {
    pub min_minutes: f64,
    pub max_minutes: f64,
    pub likely_minutes: f64,
}

/// What a research may cost, in US dollars.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Usd {
    pub min_usd: f64,
    pub max_usd: f64,
    pub likely_usd: f64,
}

/// `estimate_research_cost`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Estimate {
    /// simple, medium or complex.
    pub query_complexity: &'static str,
    pub estimated_duration: Minutes,
    pub estimated_cost: Usd,
    pub will_likely_go_async: bool,
    pub recommendation: String,
}

impl scholia_base::Summary for Estimate {
    fn summary(&self) -> String {
        let (d, c) = (&self.estimated_duration, &self.estimated_cost);
        format!(
            "{} query: {}–{} min, ${}–${}; {}",
            self.query_complexity, d.min_minutes, d.max_minutes, c.min_usd, c.max_usd, self.recommendation
        )
    }
}

const BROAD: &[&str] = &[
    "compare",
    "comparison",
    "versus",
    "vs",
    "trade-off",
    "tradeoffs",
    "landscape",
    "survey",
    "history",
    "comprehensive",
    "all",
    "every",
    "market",
    "analysis",
    "analyze",
    "analyse",
    "evaluate",
    "pros",
    "cons",
    "impact",
    "trends",
    "review",
];

pub fn estimate(query: &str, price: Price) -> Estimate {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let questions = query.matches('?').count();
    let broad = words.iter().filter(|w| BROAD.contains(&w.as_str())).count();
    let conjunctions = words.iter().filter(|w| ["and", "or"].contains(&w.as_str())).count();
    let score = words.len() / 12 + questions.saturating_sub(1) + broad * 2 + conjunctions;
    let (complexity, minutes, tokens) = match score {
        0..=1 => ("simple", (3.0, 10.0, 5.0), (60_000u64, 200_000u64, 120_000u64)),
        2..=4 => ("medium", (10.0, 25.0, 15.0), (200_000, 600_000, 350_000)),
        _ => ("complex", (20.0, 60.0, 35.0), (500_000, 1_500_000, 900_000)),
    };
    // Output is roughly a tenth of what the agent reads.
    let usd = |t: u64| cost(price, t, t / 10);
    Estimate {
        query_complexity: complexity,
        estimated_duration: Minutes {
            min_minutes: minutes.0,
            max_minutes: minutes.1,
            likely_minutes: minutes.2,
        },
        estimated_cost: Usd {
            min_usd: usd(tokens.0),
            max_usd: usd(tokens.1),
            likely_usd: usd(tokens.2),
        },
        will_likely_go_async: true,
        recommendation: match complexity {
            "simple" => "Simple query: a few minutes in the background. For a quick answer, `scholia ask` (Sonar) is cheaper.".into(),
            "medium" => "Medium query: expect 10–25 minutes in the background; check status or wait for the notification.".into(),
            _ => "Complex query detected: expect 20–60 minutes and a higher cost; consider splitting it into narrower questions.".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complexity_classes() {
        let check = |q: &str, expected: &str| assert_eq!(estimate(q, DEFAULT_PRICE).query_complexity, expected, "{q}");
        check("What is a sourdough starter?", "simple");
        check(
            "How do rye and wheat starters differ in activity and flavour?",
            "medium",
        );
        check(
            "Compare the market landscape, history and trends of sourdough, kombucha and kefir producers in Europe and the US, with a comprehensive analysis of pros and cons",
            "complex",
        );
        assert_eq!(cost(DEFAULT_PRICE, 1_000_000, 100_000), 3.2);
        let cheap = scholia_providers::llm::Price {
            input: 1.0,
            output: 1.0,
        };
        assert_eq!(cost(cheap, 1_000_000, 1_000_000), 2.0);
        let e = estimate("x", DEFAULT_PRICE);
        assert!(
            e.estimated_cost.min_usd <= e.estimated_cost.likely_usd
                && e.estimated_cost.likely_usd <= e.estimated_cost.max_usd
        );
    }
}
