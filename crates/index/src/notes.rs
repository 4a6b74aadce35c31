//! Reading and listing notes for agents and other surfaces: a note (or one of its sections) in
//! pages of bounded size, and the vault's notes by folder and tag.

use serde::Serialize;

use super::{NoteInfo, VaultSession};
use scholia_base::{Error, ErrorKind};
use scholia_base::{Summary, blocking};
use scholia_vault::parse;

/// Characters of a note one read returns at most.
pub const PAGE_CHARS: usize = 20_000;

/// A note, or one of its sections, from `offset` (in characters).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteContent {
    pub path: String,
    pub title: String,
    pub heading: Option<String>,
    pub content: String,
    /// Where `content` starts, in characters of the note (or section).
    pub offset: usize,
    pub total_chars: usize,
    /// Where the next page starts; `None` when this is the end.
    pub next_offset: Option<usize>,
    /// The whole note's hash: pass it as `expected_hash` to edit it.
    pub hash: String,
    /// With `outline`: the note's headings and their sections' sizes (and no content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<scholia_vault::note_edit::OutlineEntry>>,
}

impl Summary for NoteContent {
    fn summary(&self) -> String {
        if let Some(o) = &self.outline {
            return format!(
                "{}: outline of {} headings, {} characters, hash {}",
                self.path,
                o.len(),
                self.total_chars,
                self.hash
            );
        }
        let what = match &self.heading {
            Some(h) => format!("{} § {h}", self.path),
            None => self.path.clone(),
        };
        match self.next_offset {
            Some(next) => format!(
                "{what}: characters {}..{next} of {}; read on with offset {next}",
                self.offset, self.total_chars
            ),
            None if self.offset == 0 => format!("{what}: {} characters", self.total_chars),
            None => format!("{what}: characters {}..{} (the end)", self.offset, self.total_chars),
        }
    }
}

/// Notes of the vault, a page at a time, by path.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteList {
    pub notes: Vec<NoteInfo>,
    pub total: usize,
    pub offset: usize,
    pub next_offset: Option<usize>,
}

impl Summary for NoteList {
    fn summary(&self) -> String {
        let shown = self.notes.len();
        match self.next_offset {
            Some(next) => format!(
                "notes {}..{} of {}; more from offset {next}",
                self.offset,
                self.offset + shown,
                self.total
            ),
            None => format!("{} of {} notes", shown, self.total),
        }
    }
}

fn invalid(field: &str, value: impl std::fmt::Display, valid: &str) -> Error {
    Error::new(
        "INVALID_INPUT",
        ErrorKind::InvalidInput,
        format!("{field}: `{value}` is not valid; valid: {valid}"),
    )
}

impl VaultSession {
    /// A note (or the section under `heading`, at any level) from character `offset`, at most
    /// `limit` characters — or, with `outline`, its headings and their sizes — with the note's
    /// hash (off the runtime).
    pub async fn read_note(
        &self,
        input: &str,
        heading: Option<&str>,
        offset: usize,
        limit: usize,
        outline: bool,
    ) -> Result<NoteContent, Error> {
        let limit = limit.clamp(1, PAGE_CHARS);
        let note = self.resolve_async(input).await?;
        let heading = heading.map(str::trim).filter(|h| !h.is_empty()).map(str::to_string);
        blocking(move || {
            let text = scholia_vault::read::read_note(&note.abs)?;
            let parsed = parse::parse(&text, scholia_vault::stem(&note.rel));
            let hash = scholia_vault::note_edit::hash(&text);
            if outline {
                return Ok(NoteContent {
                    path: note.rel,
                    title: parsed.title,
                    heading: None,
                    content: String::new(),
                    offset: 0,
                    total_chars: text.chars().count(),
                    next_offset: None,
                    hash,
                    outline: Some(scholia_vault::note_edit::outline(&text)),
                });
            }
            let part = match &heading {
                None => text.as_str(),
                // Found as edit_note finds it: exact, then any case (any script), `## h` for a level.
                Some(h) => {
                    let found = scholia_vault::note_edit::find_heading(&text, h)?;
                    &text[found.section.clone()]
                }
            };
            let total_chars = part.chars().count();
            if offset > total_chars {
                return Err(invalid(
                    "offset",
                    offset,
                    &format!("a number of characters from 0 to {total_chars}"),
                ));
            }
            let content: String = part.chars().skip(offset).take(limit).collect();
            let end = offset + content.chars().count();
            Ok(NoteContent {
                path: note.rel,
                title: parsed.title,
                heading,
                content,
                offset,
                total_chars,
                next_offset: (end < total_chars).then_some(end),
                hash,
                outline: None,
            })
        })
        .await
    }

    /// Notes in `folder` with `tag` (either optional), `limit` from `offset` (off the runtime).
    pub async fn list_notes(
        &self,
        folder: Option<&str>,
        tag: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<NoteList, Error> {
        let index = self.index().clone();
        let (folder, tag) = (folder.map(str::to_string), tag.map(str::to_string));
        if folder
            .as_deref()
            .is_some_and(|f| f.starts_with('/') || f.contains('\\') || f.split('/').any(|c| c == ".."))
        {
            return Err(invalid(
                "folder",
                folder.unwrap_or_default(),
                "a folder inside the vault, e.g. `Journal`",
            ));
        }
        blocking(move || {
            let (notes, total) = index.list_notes(folder.as_deref(), tag.as_deref(), offset, limit)?;
            if let Some(f) = folder.as_deref().filter(|_| total == 0) {
                missing_folder(index.vault().root(), f)?;
            }
            let end = offset + notes.len();
            Ok(NoteList {
                notes,
                total,
                offset,
                next_offset: (end < total).then_some(end),
            })
        })
        .await
    }

    pub(crate) async fn resolve_async(&self, input: &str) -> Result<scholia_vault::NotePath, Error> {
        let (vault, input, scope) = (self.vault().clone(), input.to_string(), self.index().scope());
        blocking(move || {
            let (rel, abs) = vault.resolve_rel(&input, None)?;
            if !scope.allows(&rel) {
                return Err(scope.refuse("path", &rel));
            }
            Ok(scholia_vault::NotePath { rel, abs })
        })
        .await
    }
}

/// An empty listing of a folder that is not there says so, with the folders that are.
fn missing_folder(root: &std::path::Path, folder: &str) -> Result<(), Error> {
    let f = folder.trim_matches('/');
    if f.is_empty() || root.join(f).is_dir() {
        return Ok(());
    }
    let mut folders: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect();
    folders.sort();
    let valid = match folders.len() {
        0 => "no folder: this vault keeps its notes at the top".to_string(),
        n if n > 12 => format!(
            "a folder of the vault, e.g. {} (and {} more)",
            folders[..12].join(", "),
            n - 12
        ),
        _ => format!("a folder of the vault: {}", folders.join(", ")),
    };
    Err(Error::invalid(format!(
        "folder: `{folder}` does not exist in the vault; valid: {valid}"
    )))
}
