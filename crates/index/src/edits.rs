//! Writing the vault for agents: a section or the front matter edited against the hash the
//! agent read (never a silent overwrite), a new note (from a template), a note moved with
//! every link rewritten (the editor's rename plan), and the notes linking to one. Every write
//! is atomic, inside the vault and the scope, and the index hears of it at once.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::VaultSession;
use super::refs::{Anchor, IndexTexts};
use scholia_base::{Error, ErrorKind, Summary, blocking};
use scholia_vault::note_edit::{self, Mode, NoteEditError, OutlineEntry};
use scholia_vault::section::SectionError;
use scholia_vault::write::{WriteError, WriteOutcome, update_note_as};

/// A note's headings with their sizes, and its hash: read this first, then one section.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteOutline {
    pub path: String,
    pub title: String,
    /// Pass it as `expected_hash` to edit the note.
    pub hash: String,
    pub total_chars: usize,
    pub headings: Vec<OutlineEntry>,
}

impl Summary for NoteOutline {
    fn summary(&self) -> String {
        format!(
            "{}: {} headings, {} characters, hash {}",
            self.path,
            self.headings.len(),
            self.total_chars,
            self.hash
        )
    }
}

/// What an edit asks for: the section under `heading`, or the front matter's `fields`.
#[derive(Debug, Clone)]
pub enum EditTarget {
    Section {
        heading: String,
        mode: Mode,
        content: String,
    },
    Frontmatter {
        fields: Map<String, Value>,
    },
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Edited {
    pub path: String,
    /// What was edited: `## Heading` or `front matter`.
    pub target: String,
    /// `replace`, `append`, `prepend` or `set`.
    pub mode: String,
    /// Whether the note changed (the same text again changes nothing).
    pub written: bool,
    /// The note's hash now: the `expected_hash` of a next edit.
    pub hash: String,
}

impl Summary for Edited {
    fn summary(&self) -> String {
        match self.written {
            true => format!(
                "{} {} in {}; its hash is now {}",
                past(&self.mode),
                self.target,
                self.path,
                self.hash
            ),
            false => format!("{} unchanged (the same text); hash {}", self.path, self.hash),
        }
    }
}

fn past(mode: &str) -> &'static str {
    match mode {
        "replace" => "replaced",
        "append" => "appended to",
        "prepend" => "prepended to",
        _ => "set",
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Created {
    pub path: String,
    pub hash: String,
    /// The template it was made from, if any.
    pub template: Option<String>,
}

impl Summary for Created {
    fn summary(&self) -> String {
        match &self.template {
            Some(t) => format!("created {} from the template {t}", self.path),
            None => format!("created {}", self.path),
        }
    }
}

/// One line of a note that links to another.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LinkLine {
    /// 1-based.
    pub line: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Backlink {
    pub path: String,
    pub title: String,
    pub lines: Vec<LinkLine>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Backlinks {
    pub path: String,
    pub notes: Vec<Backlink>,
}

impl Summary for Backlinks {
    fn summary(&self) -> String {
        match self.notes.len() {
            0 => format!("no note links to {}", self.path),
            1 => format!("1 note links to {}", self.path),
            n => format!("{n} notes link to {}", self.path),
        }
    }
}

/// Lines of a linking note shown per note, and characters per line.
const LINES_PER_NOTE: usize = 20;
const LINE_CHARS: usize = 300;
/// The longest note `create_note` writes (characters).
const MAX_NOTE_CHARS: usize = note_edit::MAX_CONTENT_CHARS;

fn write_error(e: WriteError) -> Error {
    match e {
        WriteError::Edit(SectionError::Refused(inner)) => inner,
        other => Error::from(other),
    }
}

impl VaultSession {
    /// The note's outline and hash (off the runtime).
    pub async fn outline(&self, input: &str) -> Result<NoteOutline, Error> {
        let note = self.resolve_async(input).await?;
        blocking(move || {
            let text = scholia_vault::read::read_note(&note.abs)?;
            let parsed = scholia_vault::parse::parse(&text, scholia_vault::stem(&note.rel));
            Ok(NoteOutline {
                path: note.rel,
                title: parsed.title,
                hash: note_edit::hash(&text),
                total_chars: text.chars().count(),
                headings: note_edit::outline(&text),
            })
        })
        .await
    }

    /// Edits a section or the front matter; replacing needs `expected_hash`, and any edit
    /// given one is refused (`CONFLICT`, with the current hash) when the note changed since.
    pub async fn edit_note(
        &self,
        input: &str,
        target: EditTarget,
        expected_hash: Option<&str>,
    ) -> Result<Edited, Error> {
        let replaces = matches!(
            &target,
            EditTarget::Frontmatter { .. }
                | EditTarget::Section {
                    mode: Mode::Replace,
                    ..
                }
        );
        let expected = expected_hash
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string);
        match &target {
            EditTarget::Section { content, .. } => no_nul("content", content)?,
            EditTarget::Frontmatter { fields } => {
                for (k, v) in fields {
                    note_edit::check_key(k)?;
                    no_nul("frontmatter", k)?;
                    no_nul(&format!("frontmatter.{k}"), &v.to_string())?;
                }
            }
        }
        if replaces && expected.is_none() {
            return Err(Error::invalid(
                "expected_hash: required to replace a section or set front matter; read the note first (read_note returns its hash)",
            ));
        }
        let note = self.resolve_async(input).await?;
        let index = self.index().clone();
        blocking(move || {
            let (what, mode) = match &target {
                EditTarget::Section { heading, mode, .. } => (heading.clone(), format!("{mode:?}").to_lowercase()),
                EditTarget::Frontmatter { .. } => ("front matter".to_string(), "set".to_string()),
            };
            let mut shown = what.clone();
            let outcome = update_note_as(&note.abs, &note.rel, |text| {
                let refused = |e: NoteEditError| SectionError::Refused(Error::from(e));
                if let Some(h) = &expected {
                    note_edit::check_hash(text, h).map_err(refused)?;
                }
                match &target {
                    EditTarget::Section { heading, mode, content } => {
                        let h = note_edit::find_heading(text, heading).map_err(refused)?;
                        shown = format!("`{} {}`", "#".repeat(h.level as usize), h.text);
                        note_edit::edit_section(text, heading, *mode, content).map_err(refused)
                    }
                    EditTarget::Frontmatter { fields } => note_edit::set_frontmatter(text, fields).map_err(refused),
                }
            })
            .map_err(write_error)?;
            let (written, text) = match outcome {
                WriteOutcome::Written { text, .. } => (true, text),
                WriteOutcome::Unchanged => (
                    false,
                    scholia_vault::read::read_note(&note.abs).map_err(|e| e.named(&note.rel))?,
                ),
            };
            index.touched(&[note.abs.as_path()]);
            Ok(Edited {
                path: note.rel,
                target: shown,
                mode,
                written,
                hash: note_edit::hash(&text),
            })
        })
        .await
    }

    /// Creates a note at `path` with `content` (after the template's text, when one of the
    /// vault's templates is named); never replaces a file.
    /// The template an editor's "Create note" uses (see `templates::for_new_note`).
    pub fn new_note_template(&self) -> Option<String> {
        let index = self.index();
        super::templates::for_new_note(index.vault().root(), &index.scope())
    }

    pub async fn create_note(&self, path: &str, content: &str, template: Option<&str>) -> Result<Created, Error> {
        let rel = new_note_path(path, "path")?;
        no_nul("content", content)?;
        let chars = content.chars().count();
        if chars > MAX_NOTE_CHARS {
            return Err(Error::invalid(format!(
                "content: {chars} characters is more than {MAX_NOTE_CHARS}"
            )));
        }
        let (index, content, template) = (self.index().clone(), content.to_string(), template.map(str::to_string));
        blocking(move || {
            let root = index.vault().root().to_path_buf();
            let exists = || {
                Error::new(
                    "NOTE_EXISTS",
                    ErrorKind::Conflict,
                    format!("path: `{rel}` already exists; create_note never replaces a note (edit it with edit_note)"),
                )
            };
            if std::fs::symlink_metadata(root.join(&rel)).is_ok() {
                return Err(exists());
            }
            index.check_destination("path", &rel, None)?;
            let body = match &template {
                Some(t) => {
                    let text = super::templates::read(&root, &index.scope(), t)?;
                    let title = scholia_vault::stem(&rel);
                    let filled = super::templates::fill(&text, title);
                    if content.is_empty() {
                        filled
                    } else {
                        format!("{}\n\n{content}", filled.trim_end())
                    }
                }
                None => content.clone(),
            };
            let (dir, name) = match rel.rsplit_once('/') {
                Some((d, n)) => (d.to_string(), n.to_string()),
                None => (String::new(), rel.clone()),
            };
            let folder = scholia_vault::confine::ConfinedDir::new(
                "path",
                if dir.is_empty() { "." } else { &dir },
                &root,
                &[&root],
            )?;
            let abs = folder.create(&name, &body).map_err(|e| match e {
                scholia_vault::confine::ConfineError::Exists { .. } => Error::new(
                    "NOTE_EXISTS",
                    ErrorKind::Conflict,
                    format!("path: `{rel}` already exists; create_note never replaces a note (edit it with edit_note)"),
                ),
                other => Error::from(other),
            })?;
            index.touched(&[abs.as_path()]);
            Ok(Created {
                hash: note_edit::hash(&body),
                path: rel,
                template,
            })
        })
        .await
    }

    /// The notes linking to a note (embeds, headings and aliases too), with their lines.
    pub async fn backlinks(&self, input: &str) -> Result<Backlinks, Error> {
        let note = self.resolve_async(input).await?;
        let index = self.index().clone();
        blocking(move || {
            let found = index.references(&Anchor::Note(note.rel.clone()), &IndexTexts(&index))?;
            let mut notes = Vec::new();
            for n in found.into_iter().filter(|n| n.rel != note.rel) {
                let parsed_title = scholia_vault::parse::parse(&n.text, scholia_vault::stem(&n.rel)).title;
                let mut lines: Vec<LinkLine> = Vec::new();
                for l in &n.links {
                    let line = n.text[..l.range.start].matches('\n').count() + 1;
                    if lines.iter().any(|x| x.line == line) || lines.len() == LINES_PER_NOTE {
                        continue;
                    }
                    let text = n.text.lines().nth(line - 1).unwrap_or_default().trim();
                    lines.push(LinkLine {
                        line,
                        text: text.chars().take(LINE_CHARS).collect(),
                    });
                }
                notes.push(Backlink {
                    path: n.rel,
                    title: parsed_title,
                    lines,
                });
            }
            Ok(Backlinks { path: note.rel, notes })
        })
        .await
    }
}

/// Notes are text: a NUL byte would make one unreadable (it would drop out of search and
/// links), so none is written.
fn no_nul(field: &str, text: &str) -> Result<(), Error> {
    match text.find('\0') {
        None => Ok(()),
        Some(at) => Err(Error::invalid(format!(
            "{field}: holds a NUL byte (U+0000) at character {}; notes are text: remove it",
            text[..at].chars().count()
        ))),
    }
}

/// A vault path for a new note (`field` names the argument): relative, no `..`, nothing links
/// cannot name, a note extension (`.md` added when none).
pub(crate) fn new_note_path(path: &str, field: &'static str) -> Result<String, Error> {
    let p = path.trim().trim_start_matches("./");
    let bad = p.is_empty()
        || Path::new(p).is_absolute()
        || p.contains('\\')
        || p.split('/')
            .any(|c| c.is_empty() || c == "." || c == ".." || c.starts_with('.'));
    if bad {
        return Err(Error::invalid(format!(
            "{field}: `{}` is not valid; valid: a note path relative to the vault, e.g. `Projects/Koji.md`",
            path.escape_debug()
        )));
    }
    scholia_vault::naming::check_path(field, p)?;
    let has_ext = scholia_vault::paths::has_note_extension(Path::new(p));
    let ext = Path::new(p).extension().and_then(|e| e.to_str());
    match (has_ext, ext) {
        (true, _) => Ok(p.to_string()),
        (false, Some(e)) if e.chars().all(|c| c.is_ascii_alphabetic()) && e.len() <= 5 => Err(Error::invalid(format!(
            "{field}: `.{e}` files are not notes; valid extensions: .md, .markdown, .txt"
        ))),
        _ => Ok(format!("{p}.md")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_note_paths() {
        let check = |p: &str, expected: Result<&str, &str>| match (new_note_path(p, "path"), expected) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{p}"),
            (Err(e), Err(want)) => assert!(e.message.contains(want), "{p}: {}", e.message),
            (got, want) => panic!("{p}: {got:?} vs {want:?}"),
        };
        check("Ideas/Koji.md", Ok("Ideas/Koji.md"));
        check("Ideas/Koji", Ok("Ideas/Koji.md"));
        check("v1.2 notes", Ok("v1.2 notes.md"));
        check("../x.md", Err("not valid"));
        check("/etc/x.md", Err("not valid"));
        check(".obsidian/x.md", Err("not valid"));
        check("photo.png", Err("`.png` files are not notes"));
        check("Kom#bucha.md", Err("`#`, which links cannot name"));
        check("Kom|bucha", Err("`|`"));
        check("]]", Err("`]`"));
        check("a^b", Err("`^`"));
        check("a[b.md", Err("`[`"));
        check("a\nb.md", Err("`\\n`"));
    }
}
