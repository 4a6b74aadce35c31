//! The research pipelines: research_note (`note/`, `offline.rs`), deep_search, Ask (`sonar`),
//! the answer gate and the citation check they share. Each takes a [`Context`] (the clients,
//! limits and prompt library it may use — never the engine), runs inside a
//! [`scholia_base::Job`] and returns a result; writing it into a note is the engine's.

pub mod citations;
mod context;
pub mod deep_search;
pub mod gate;
pub mod language;
pub mod note;
pub mod offline;
pub mod pages;
pub mod record;
pub mod sonar;

pub use context::{Context, DeepSearchDefaults};
pub use note::{Depth, NoteResearch, ResearchError, Source};

/// The most of one answer (a synthesis, a deep-search report, a Sonar answer) that lands in a
/// note; the rest is cut at a block boundary and the section says so.
pub const MAX_ANSWER_CHARS: usize = 60_000;

/// Progress of research_note.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum ResearchEvent {
    Started {
        mode: &'static str,
        depth: Depth,
    },
    TopicsFound {
        topics: Vec<String>,
    },
    TopicGathered {
        done: usize,
        total: usize,
        topic: String,
    },
    SourcesGathered {
        web: usize,
        vault: usize,
        pages: usize,
        failed: usize,
    },
    Synthesizing,
    /// A model writing (streamed): tokens so far.
    Generating {
        step: &'static str,
        tokens: u64,
    },
    Checked {
        citations_removed: usize,
    },
}

impl scholia_base::Progress for ResearchEvent {
    /// One line for humans.
    fn message(&self) -> String {
        match self {
            ResearchEvent::Started { mode: "offline", .. } => {
                "researching offline (no language model configured)".into()
            }
            ResearchEvent::Started { depth, .. } => format!("researching ({})", depth.as_str()),
            ResearchEvent::TopicsFound { topics } => format!("{} topics: {}", topics.len(), topics.join(", ")),
            ResearchEvent::TopicGathered { done, total, topic } => format!("gathered {done}/{total}: {topic}"),
            ResearchEvent::SourcesGathered {
                web,
                vault,
                pages,
                failed,
            } => {
                let mut m = format!("sources gathered: {web} web, {vault} vault");
                if *pages > 0 {
                    m.push_str(&format!(", {pages} pages read"));
                }
                if *failed > 0 {
                    m.push_str(&format!(", {failed} failed"));
                }
                m
            }
            ResearchEvent::Synthesizing => "writing the synthesis".into(),
            ResearchEvent::Generating { step, tokens } => format!("{step}: {tokens} tokens generated"),
            ResearchEvent::Checked { citations_removed: 0 } => "citations checked".into(),
            ResearchEvent::Checked { citations_removed } => format!("citations checked: {citations_removed} removed"),
        }
    }

    fn percent(&self) -> Option<u32> {
        Some(match self {
            ResearchEvent::Started { .. } => 5,
            ResearchEvent::TopicsFound { .. } => 15,
            ResearchEvent::TopicGathered { done, total, .. } => 15 + (60 * done / (*total).max(1)) as u32,
            ResearchEvent::SourcesGathered { .. } => 75,
            ResearchEvent::Synthesizing => 80,
            ResearchEvent::Generating { step: "topics", .. } => 10,
            ResearchEvent::Generating { .. } => 85,
            ResearchEvent::Checked { .. } => 95,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_percentages_rise() {
        let events = [
            ResearchEvent::Started {
                mode: "llm",
                depth: Depth::Shallow,
            },
            ResearchEvent::TopicsFound { topics: vec![] },
            ResearchEvent::TopicGathered {
                done: 1,
                total: 2,
                topic: "a".into(),
            },
            ResearchEvent::TopicGathered {
                done: 2,
                total: 2,
                topic: "b".into(),
            },
            ResearchEvent::SourcesGathered {
                web: 0,
                vault: 0,
                pages: 0,
                failed: 0,
            },
            ResearchEvent::Synthesizing,
            ResearchEvent::Checked { citations_removed: 0 },
        ];
        let p: Vec<u32> = events.iter().filter_map(scholia_base::Progress::percent).collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    }
}
