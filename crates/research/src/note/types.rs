//! The types of a research_note run every stage shares: its depth, its limits, its errors,
//! its sources and its outcome (the stages in the other files of `note/`).

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::citations::Links;
pub use crate::record::Topic;
use scholia_base::{Coded, ErrorKind};
use scholia_index::IndexError;
use scholia_providers::llm::{LlmError, Usage};
use scholia_vault::paths::PathError;
use scholia_vault::read::ReadError;
use scholia_vault::section::SectionError;

pub const MAX_TOPICS: usize = 10;
pub const WEB_RESULTS: usize = 5;
pub const VAULT_RESULTS: usize = 5;
pub const PAGES_PER_TOPIC: usize = 2;
pub const PAGE_CHARS: usize = 50_000;
pub const NOTE_CHARS: usize = 200_000;
pub const MAX_FOCUS_CHARS: usize = 500;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    #[default]
    Shallow,
    Deep,
}

impl Depth {
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Shallow => "shallow",
            Depth::Deep => "deep",
        }
    }
}

impl FromStr for Depth {
    type Err = ResearchError;
    fn from_str(s: &str) -> Result<Depth, ResearchError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "shallow" => Ok(Depth::Shallow),
            "deep" => Ok(Depth::Deep),
            _ => Err(ResearchError::BadDepth(s.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResearchError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("depth: `{0}` is not valid; valid values: shallow, deep")]
    BadDepth(String),
    #[error("note `{0}` is empty; write something to research first")]
    EmptyNote(String),
    #[error("focus: {focus_chars} characters is longer than {limit}; give a short phrase")]
    FocusTooLong { focus_chars: usize, limit: usize },
    #[error("focus: {focus_chars} characters is longer than the note itself ({note_chars}); give a short phrase")]
    FocusLongerThanNote { focus_chars: usize, note_chars: usize },
    #[error(
        "focus: no word of `{0}` is in another note; offline research steers by the vault's own words (configure an LLM to research it as a topic)"
    )]
    FocusNotInVault(String),
    #[error("{0}")]
    Section(#[from] SectionError),
    #[error("no topics to research were found in `{0}`{1}")]
    NoTopics(String, String),
    #[error("topic extraction failed: {0}")]
    Topics(LlmError),
    #[error("nothing was found for any topic ({0}); the note is unchanged")]
    NothingFound(String),
    #[error("synthesis failed: {0}; the note is unchanged")]
    Synthesis(LlmError),
    #[error(transparent)]
    Uncontained(#[from] scholia_vault::contain::Uncontained),
    #[error("index: {0}")]
    Index(#[from] IndexError),
    #[error("template: {0}")]
    Template(#[from] scholia_prompts::TemplateError),
    #[error("{}", scholia_base::CANCELLED)]
    Cancelled,
}

impl Coded for ResearchError {
    fn code(&self) -> &'static str {
        match self {
            ResearchError::Path(e) => e.code(),
            ResearchError::Read(e) => e.code(),
            ResearchError::Section(e) => e.code(),
            ResearchError::Index(e) => e.code(),
            ResearchError::Template(e) => e.code(),
            ResearchError::BadDepth(_)
            | ResearchError::FocusTooLong { .. }
            | ResearchError::FocusLongerThanNote { .. }
            | ResearchError::FocusNotInVault(_) => "INVALID_INPUT",
            ResearchError::EmptyNote(_) => "EMPTY_NOTE",
            ResearchError::NoTopics(..) => "NO_TOPICS",
            ResearchError::NothingFound(_) => "NOTHING_FOUND",
            ResearchError::Topics(e) | ResearchError::Synthesis(e) => e.code(),
            ResearchError::Uncontained(_) => "UNCONTAINED",
            ResearchError::Cancelled => "CANCELLED",
        }
    }

    fn kind(&self) -> ErrorKind {
        match self {
            ResearchError::Path(e) => e.kind(),
            ResearchError::Read(e) => e.kind(),
            ResearchError::Section(e) => e.kind(),
            ResearchError::Index(e) => e.kind(),
            ResearchError::Template(e) => e.kind(),
            ResearchError::BadDepth(_)
            | ResearchError::FocusTooLong { .. }
            | ResearchError::FocusLongerThanNote { .. }
            | ResearchError::FocusNotInVault(_)
            | ResearchError::EmptyNote(_) => ErrorKind::InvalidInput,
            ResearchError::Topics(e) | ResearchError::Synthesis(e) => e.kind(),
            ResearchError::NoTopics(..) | ResearchError::NothingFound(_) | ResearchError::Uncontained(_) => {
                ErrorKind::Upstream
            }
            ResearchError::Cancelled => ErrorKind::Cancelled,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    Web {
        title: String,
        url: String,
    },
    Vault {
        title: String,
        path: String,
        target: String,
        /// The researched note's key terms it shares, when they are why it is cited
        /// (offline research).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        terms: Vec<String>,
        /// Why it is cited when its words are not: the link, folder, tag or hub that ties it
        /// (offline research).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tie: Option<scholia_index::Tie>,
    },
}

/// The outcome of a run: the section body to write and what it is made of.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteResearch {
    /// Vault-relative path of the note.
    pub path: String,
    /// `llm` or `offline`.
    pub mode: &'static str,
    pub depth: Depth,
    pub model: Option<String>,
    pub topics: Vec<String>,
    pub topics_researched: usize,
    pub sources: Vec<Source>,
    pub citations_removed: usize,
    /// The body of `## Research`, as rendered from `templates/research-section.md` (left out
    /// where a surface shows only the preview: the section is in the note).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub section: String,
    /// The first 500 characters of the section.
    pub preview: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub warnings: Vec<String>,
    /// Why the synthesis failed after sources were gathered: the section lists the sources
    /// only, and the run reports this as its error once the section is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthesis_failed: Option<String>,
    /// The URLs the section may link to: the web sources gathered in the run.
    #[serde(skip)]
    pub links: Links,
    /// What the run read (passages per source, contradictions with their lines), kept in the
    /// data directory rather than the note.
    #[serde(skip)]
    pub record: crate::record::RunRecord,
}
