//! A finished task's output, typed: the report, its sources and what is known about the run.
//! Stored as JSON in the task store; rows written by older versions read with defaults.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Kind;

/// A finished task's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub report: String,
    pub sources: Vec<SourceRef>,
    pub metadata: ResultsMeta,
    /// The provider's payload, kept on purpose for diagnosis.
    #[serde(skip)]
    pub raw: Option<String>,
}

/// A source a report cites: a web page, or a note of the vault (`vault`, its path as `url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SourceRef {
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vault: bool,
}

/// Tokens a run used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// What is known about a finished run; the fields a kind does not have are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ResultsMeta {
    /// Always `async`: background tasks outlive the request that started them.
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_minutes: Option<f64>,
    pub tokens_used: Tokens,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// gemini: the Interactions API's id and final status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// deep-search: whether verification confirmed the report, and after how many rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// research-note: the note, whether it changed, its topics and what research did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topics: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citations_removed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub research_mode: Option<String>,
}

impl ResultsMeta {
    /// Reads a stored row; a row that does not parse reads as empty metadata, never a failure.
    pub(crate) fn from_stored(text: &str) -> ResultsMeta {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// Reads stored sources; entries that are not sources are skipped.
pub(crate) fn sources_from_stored(text: &str) -> Vec<SourceRef> {
    let values: Vec<serde_json::Value> = serde_json::from_str(text).unwrap_or_default();
    values
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_every_kind_read_back() {
        // Shapes earlier versions stored.
        let gemini = r#"{"duration_minutes":3.5,"tokens_used":{"input":10,"output":2},"cost_usd":0.1,"mode":"async","interaction_id":"i-1","status":"completed"}"#;
        let m = ResultsMeta::from_stored(gemini);
        assert_eq!(
            (m.duration_minutes, m.interaction_id.as_deref()),
            (Some(3.5), Some("i-1"))
        );
        let note = r#"{"mode":"async","kind":"research-note","tokens_used":{"input":1,"output":1},"note":"A.md","written":true,"topics":["x"],"citations_removed":0,"research_mode":"llm"}"#;
        let m = ResultsMeta::from_stored(note);
        assert_eq!((m.kind, m.written), (Some(Kind::ResearchNote), Some(true)));
        assert_eq!(ResultsMeta::from_stored("not json"), ResultsMeta::default());
        let back = serde_json::to_string(&ResultsMeta::from_stored(note)).unwrap();
        assert_eq!(ResultsMeta::from_stored(&back), ResultsMeta::from_stored(note));

        let s = sources_from_stored(
            r#"[{"url":"https://a.example","title":"A"},{"url":"B.md","title":"B","vault":true},7]"#,
        );
        assert_eq!(s.len(), 2);
        assert!(s[1].vault && !s[0].vault);
        assert!(sources_from_stored("{}").is_empty());
    }
}
