//! Notes on disk: scanning, parsing (frontmatter only at byte 0), sections and the one
//! [`SectionEdit`] that writes them, safe paths, reading and atomic writes, the write gate for
//! new files, and Markdown made inert — everything about text in or from a note, nothing about
//! indexes, models or protocols.

pub mod change;
pub mod confine;
pub mod contain;
pub mod edit;
pub mod fence;
pub mod frontmatter;
pub mod inert;
pub mod lines;
mod link_events;
pub mod links;
pub mod lock;
pub mod mdlink;
pub mod mentions;
pub mod naming;
pub mod note_edit;
pub mod parse;
pub mod passage;
pub mod paths;
pub mod plugins;
pub mod read;
pub mod reading;
pub mod research_part;
pub mod root;
pub mod scan;
pub mod section;
pub mod stamp;
pub mod tags;
pub mod write;

use std::path::{Path, PathBuf};

pub use edit::{NotePath, SectionEdit};
pub use stamp::{END_MARKER, QUESTION_MARKER, SECTION, SECTION_LEVEL, SOURCES_ONLY_MARKER};

/// An open vault: a canonical root directory.
#[derive(Debug, Clone)]
pub struct Vault {
    root: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("vault `{0}`: no such directory")]
    Missing(String),
    #[error("vault `{0}`: not a directory")]
    NotADirectory(String),
    #[error("vault `{path}`: cannot read it: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl scholia_base::Coded for VaultError {
    fn code(&self) -> &'static str {
        "INVALID_VAULT"
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            VaultError::Unreadable { .. } => scholia_base::ErrorKind::Io,
            _ => scholia_base::ErrorKind::InvalidInput,
        }
    }
}

impl Vault {
    pub fn open(dir: &Path) -> Result<Vault, VaultError> {
        let shown = dir.display().to_string();
        let root = dir.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => VaultError::Missing(shown.clone()),
            _ => VaultError::Unreadable {
                path: shown.clone(),
                source: e,
            },
        })?;
        if !root.is_dir() {
            return Err(VaultError::NotADirectory(shown));
        }
        std::fs::read_dir(&root).map_err(|e| VaultError::Unreadable { path: shown, source: e })?;
        Ok(Vault { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn rel(&self, abs: &Path) -> Option<String> {
        paths::relative(&self.root, abs)
    }

    /// Whether `abs`, symlinks followed, is a file inside the vault (blocking: canonicalises).
    /// A link that leaves the vault is never indexed, quoted or sent to a model.
    pub fn holds(&self, abs: &Path) -> bool {
        abs.canonicalize()
            .is_ok_and(|real| real.starts_with(&self.root) && real.is_file())
    }

    /// Resolves a user-given note path; see [`paths::resolve_note`].
    pub fn resolve(&self, input: &str, cwd: Option<&Path>) -> Result<PathBuf, paths::PathError> {
        paths::resolve_note(&self.root, input, cwd)
    }

    /// Like [`Vault::resolve`], with the vault-relative path: `(rel, abs)`.
    pub fn resolve_rel(&self, input: &str, cwd: Option<&Path>) -> Result<(String, PathBuf), paths::PathError> {
        let abs = self.resolve(input, cwd)?;
        let rel = self
            .rel(&abs)
            .ok_or_else(|| paths::PathError::OutsideVault(input.to_string()))?;
        Ok((rel, abs))
    }
}

/// The file stem of a vault-relative path: what `[[wikilinks]]` name.
pub fn stem(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}
