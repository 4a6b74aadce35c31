//! Ask: a Perplexity Sonar tier answers a question (the client is `providers::sonar`); its
//! answer is written under `## Research` with only its own citations as links.

use serde_json::json;

pub use scholia_providers::sonar::*;

use crate::Context;

/// Progress of an Ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskEvent {
    Asking { model_id: &'static str, timeout_ms: u64 },
}

impl scholia_base::Progress for AskEvent {
    fn message(&self) -> String {
        match self {
            AskEvent::Asking { model_id, timeout_ms } => format!("asking {model_id} (timeout {timeout_ms} ms)"),
        }
    }

    fn percent(&self) -> Option<u32> {
        Some(10)
    }
}

/// The URLs an answer may link to: its citations and annotations.
pub fn links(a: &SonarAnswer) -> scholia_vault::inert::Links {
    scholia_vault::inert::Links::from_urls(a.sources.iter().map(|s| s.url.as_str()))
}

/// The `### <question>` block for the editor: the question quoted, the answer, the sources.
/// `rest` is where the whole answer was saved when it was cut.
pub fn render_section(
    ctx: &Context,
    req: &AskRequest,
    a: &SonarAnswer,
    rest: Option<&str>,
) -> Result<String, scholia_prompts::TemplateError> {
    let date = time::OffsetDateTime::now_utc().date().to_string();
    // Sonar's own citations are what it gathered: the answer links to them or to nothing (and
    // to no note: a web answer cannot know the vault).
    let (answer, cut) = scholia_vault::inert::cap(&a.answer, crate::MAX_ANSWER_CHARS);
    let (answer, _) = crate::citations::enforce(&answer, 4, &links(a), &|_| false);
    ctx.library.render(
        scholia_prompts::ASK_SECTION,
        json!({
            "question": req.query.lines().map(|l| format!("> {}", scholia_vault::contain::passage(l))).collect::<Vec<_>>().join("\n"),
            "answer": answer.trim(),
            "cut": cut.then(|| a.answer.chars().count()),
            "rest": rest,
            "sources": a.sources,
            "model": a.metadata.model,
            "date": date,
        }),
    )
}
