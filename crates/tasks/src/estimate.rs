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

/// Words that widen the scope: many sources, many years, many players.
const SCOPE: &[&str] = &[
    "comprehensive",
    "landscape",
    "survey",
    "all",
    "every",
    "history",
    "trends",
    "literature",
    "market",
    "state-of-the-art",
    "ecosystem",
    "overview",
];
/// Words that ask to set things side by side (counted once: two things compared are medium).
const COMPARE: &[&str] = &[
    "compare",
    "compared",
    "comparison",
    "versus",
    "vs",
    "differ",
    "difference",
    "differences",
    "trade-off",
    "tradeoffs",
    "pros",
    "advantages",
];
/// Words that ask why or how, not what (counted once): an explanation, not a look-up.
const EXPLAIN: &[&str] = &[
    "why",
    "cause",
    "caused",
    "causes",
    "effect",
    "effects",
    "evidence",
    "explain",
    "impact",
    "work",
    "works",
    "review",
    "analyze",
    "analyse",
    "evaluate",
    "affect",
    "affects",
    "influence",
];

/// How much a query asks: length, enumerated items (commas, and/or), scope, comparison,
/// explanation and further questions. Calibrated on the labelled queries in the tests.
fn score(query: &str) -> f64 {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let count = |list: &[&str]| words.iter().filter(|w| list.contains(&w.as_str())).count() as f64;
    let items = query.matches(',').count() as f64 + count(&["and", "or"]);
    let questions = query.matches('?').count().saturating_sub(1) as f64;
    words.len() as f64 / 8.0
        + items * 0.75
        + count(SCOPE) * 1.5
        + count(COMPARE).min(1.0)
        + count(EXPLAIN).min(1.0)
        + questions * 1.5
}

pub fn estimate(query: &str, price: Price) -> Estimate {
    let score = score(query);
    let (complexity, minutes, tokens) = match score {
        s if s < 1.5 => ("simple", (3.0, 10.0, 5.0), (60_000u64, 200_000u64, 120_000u64)),
        s if s < 5.5 => ("medium", (10.0, 25.0, 15.0), (200_000, 600_000, 350_000)),
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

    /// Thirty queries labelled by hand (what a researcher would expect of each), the classes'
    /// calibration set.
    const LABELLED: &[(&str, &str)] = &[
        ("simple", "What is a sourdough starter?"),
        ("simple", "Who invented the printing press?"),
        ("simple", "When was the Rust programming language first released?"),
        ("simple", "What does HTTP status code 418 mean?"),
        ("simple", "How tall is Mount Everest?"),
        ("simple", "What is the capital of Australia?"),
        ("simple", "Define photosynthesis."),
        ("simple", "What is the half-life of carbon-14?"),
        ("simple", "Which company makes the Raspberry Pi?"),
        ("simple", "Where does Obsidian keep attachments by default?"),
        (
            "medium",
            "Compare the advantages and disadvantages of Python vs JavaScript for web development",
        ),
        (
            "medium",
            "How do rye and wheat starters differ in activity and flavour?",
        ),
        ("medium", "What are the health effects of intermittent fasting?"),
        ("medium", "How does CRDT-based sync work in local-first apps?"),
        (
            "medium",
            "What are the pros and cons of remote work for software teams?",
        ),
        (
            "medium",
            "Explain how mRNA vaccines train the immune system and why they need cold storage",
        ),
        ("medium", "Rust vs Go for command-line tools: which is better?"),
        ("medium", "What caused the 2008 financial crisis?"),
        (
            "medium",
            "How do heat pumps perform in cold climates compared with gas boilers?",
        ),
        ("medium", "Review the evidence on whether standing desks improve health"),
        (
            "complex",
            "Compare the market landscape, history and trends of sourdough, kombucha and kefir producers in Europe and the US, with a comprehensive analysis of pros and cons",
        ),
        (
            "complex",
            "Survey the state of the art in retrieval-augmented generation: architectures, evaluation methods, failure modes, and open research problems",
        ),
        (
            "complex",
            "Analyze the economic, environmental and social impact of lithium mining in Chile, Argentina, Bolivia and Australia over the last twenty years",
        ),
        (
            "complex",
            "Give a comprehensive history of public-key cryptography, from Diffie-Hellman to post-quantum schemes, including the standards, attacks and deployments along the way",
        ),
        (
            "complex",
            "What are all the approaches to nuclear fusion, how far has each come, who funds them, and when might any of them deliver power to the grid?",
        ),
        (
            "complex",
            "Evaluate every major vector database (Pinecone, Weaviate, Milvus, Qdrant, pgvector, Chroma) on performance, cost, scaling and operational burden",
        ),
        (
            "complex",
            "Compare the healthcare systems of the US, UK, Germany, Japan and Canada on cost, outcomes, access and wait times",
        ),
        (
            "complex",
            "Map the competitive landscape of electric vehicle batteries: chemistries, suppliers, costs, supply chains and trends to 2035",
        ),
        (
            "complex",
            "How have remote work, automation and offshoring together changed white-collar employment in OECD countries since 2000, and what do forecasts say?",
        ),
        (
            "complex",
            "Review the literature on microplastics in human tissue: detection methods, measured concentrations, health effects and regulatory responses",
        ),
    ];

    #[test]
    fn complexity_classes_match_the_labelled_queries() {
        let wrong: Vec<String> = LABELLED
            .iter()
            .filter_map(|(label, q)| {
                let got = estimate(q, DEFAULT_PRICE).query_complexity;
                (got != *label).then(|| format!("{q:?}: {got}, labelled {label} (score {:.2})", score(q)))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} of {} misclassified:\n{}",
            wrong.len(),
            LABELLED.len(),
            wrong.join("\n")
        );
        // Each class keeps a margin from its borders, so one word more does not flip it.
        for (label, q) in LABELLED {
            let s = score(q);
            let margin = [1.5, 5.5].iter().map(|b| (s - b).abs()).fold(f64::MAX, f64::min);
            assert!(margin >= 0.25, "{q:?} ({label}) is {margin:.2} from a border");
        }
    }

    #[test]
    fn costs_and_ranges() {
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
