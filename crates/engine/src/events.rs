//! The engine's own progress events (a pipeline's come from the pipeline).

/// What the engine itself reports while it runs an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The result is being written into the note.
    Writing,
    /// A background task's status as its store says (never a percentage: the provider gives none).
    Task { status: String, minutes: String },
}

impl scholia_base::Progress for Event {
    fn message(&self) -> String {
        match self {
            Event::Writing => "writing the note".into(),
            Event::Task { status, minutes } => format!("background research {status}, {minutes} min"),
        }
    }

    fn percent(&self) -> Option<u32> {
        match self {
            Event::Writing => Some(98),
            Event::Task { .. } => None,
        }
    }
}
