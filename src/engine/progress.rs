//! Progress of every pipeline as one enum: a line for humans and a percentage, both computed
//! here so that every surface shows the same thing.

use crate::index::IndexEvent;
use crate::research::ResearchEvent;
use crate::research::deep_search::DeepEvent;
use crate::research::sonar::AskEvent;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Research(ResearchEvent),
    DeepSearch(DeepEvent),
    Ask(AskEvent),
    Index(IndexEvent),
    /// The result is being written into the note.
    Writing,
    /// A background task's status as its store says (never a percentage: the provider gives none).
    Task {
        status: String,
        minutes: String,
    },
}

impl Event {
    pub fn message(&self) -> String {
        match self {
            Event::Research(e) => e.message(),
            Event::DeepSearch(e) => e.message(),
            Event::Ask(e) => e.message(),
            Event::Index(e) => e.message(),
            Event::Writing => "writing the note".into(),
            Event::Task { status, minutes } => format!("background research {status}, {minutes} min"),
        }
    }

    /// `None` keeps the previous percentage.
    pub fn percent(&self) -> Option<u32> {
        match self {
            Event::Research(e) => e.percent(),
            Event::DeepSearch(e) => e.percent(),
            Event::Ask(e) => e.percent(),
            Event::Index(e) => e.percent(),
            Event::Writing => Some(98),
            Event::Task { .. } => None,
        }
    }
}

impl From<ResearchEvent> for Event {
    fn from(e: ResearchEvent) -> Event {
        Event::Research(e)
    }
}

impl From<DeepEvent> for Event {
    fn from(e: DeepEvent) -> Event {
        Event::DeepSearch(e)
    }
}

impl From<AskEvent> for Event {
    fn from(e: AskEvent) -> Event {
        Event::Ask(e)
    }
}

impl From<IndexEvent> for Event {
    fn from(e: IndexEvent) -> Event {
        Event::Index(e)
    }
}
