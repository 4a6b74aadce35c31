//! The vault's writing tools — edit_note, create_note, move_note — and backlinks: an agent
//! reads the outline, then one section with its hash, then edits against that hash.

use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::Scholia;
use crate::mcp::progress::RunContext;
use crate::mcp::tool::{Reply, Tool, reads_vault};
use scholia_base::Error;
use scholia_engine::BoxFuture;
use scholia_index::{Backlinks, Created, EditTarget, Edited, Moved};
use scholia_vault::note_edit::Mode;

/// The hints of a tool that changes notes but nothing outside the vault.
fn edits_vault(destructive: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(false)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

pub struct EditNote;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    /// The section's body becomes `content` (needs expected_hash)
    Replace,
    /// `content` after the section's body (its subsections included)
    Append,
    /// `content` right under the heading
    Prepend,
}

#[derive(Deserialize, JsonSchema)]
pub struct EditNoteInput {
    /// A note path relative to the vault, e.g. `Projects/Koji.md`
    path: String,
    /// The heading whose section to edit, any level (`Setup`, or `## Setup` to pick the level);
    /// exact text first, then any case. Leave out to edit the front matter
    heading: Option<String>,
    /// What to do with `content` in the section
    #[serde(default = "append")]
    mode: EditMode,
    /// The Markdown to write (for a section); it may not hold a heading at the section's level
    /// or above, nor leave a code block or comment open
    #[serde(default)]
    content: String,
    /// Front-matter fields to set instead of a section (`null` removes one); values are strings,
    /// numbers, booleans or lists of those
    frontmatter: Option<Map<String, Value>>,
    /// The hash read_note returned: required to replace or set front matter; an edit of a note
    /// that changed since is refused with CONFLICT and the current hash
    expected_hash: Option<String>,
}

fn append() -> EditMode {
    EditMode::Append
}

impl Tool for EditNote {
    type Input = EditNoteInput;
    type Output = Edited;
    const NAME: &'static str = "edit_note";
    const TITLE: &'static str = "Edit a note";
    const WRITES: bool = true;

    fn description() -> String {
        "Edit one section of a note (replace, append to or prepend to the text under a heading) or \
         its front-matter fields. Read first: read_note with outline=true gives the headings and \
         the note's hash; replacing needs that hash as expected_hash, and a note changed since is \
         refused with CONFLICT (read again). The text cannot leave its section: a heading at the \
         section's level or above is refused. Atomic; returns the new hash."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        edits_vault(true, false)
    }

    fn run(s: &Scholia, a: EditNoteInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Edited>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let target = match (a.heading, a.frontmatter) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid(
                        "heading, frontmatter: give one: a heading to edit its section, or frontmatter fields",
                    ));
                }
                (None, None) => {
                    return Err(Error::invalid(
                        "heading: missing; give the heading of the section to edit, or frontmatter fields",
                    ));
                }
                (Some(heading), None) => EditTarget::Section {
                    heading,
                    mode: match a.mode {
                        EditMode::Replace => Mode::Replace,
                        EditMode::Append => Mode::Append,
                        EditMode::Prepend => Mode::Prepend,
                    },
                    content: a.content,
                },
                (None, Some(fields)) => EditTarget::Frontmatter { fields },
            };
            let edited = vault.edit_note(&a.path, target, a.expected_hash.as_deref()).await?;
            Ok(Reply::new(edited, ""))
        })
    }
}

pub struct CreateNote;

#[derive(Deserialize, JsonSchema)]
pub struct CreateNoteInput {
    /// The new note's path relative to the vault, e.g. `Projects/Koji.md` (`.md` added when it
    /// has no extension); folders are created
    path: String,
    /// The note's Markdown
    #[serde(default)]
    content: String,
    /// A note of the vault's templates folder to start from ({{title}}, {{date}}, {{time}}
    /// filled in); `content` follows it
    template: Option<String>,
}

impl Tool for CreateNote {
    type Input = CreateNoteInput;
    type Output = Created;
    const NAME: &'static str = "create_note";
    const TITLE: &'static str = "Create a note";
    const WRITES: bool = true;

    fn description() -> String {
        "Create a new note in the vault, optionally from one of its templates. Never replaces a \
         note: an existing path is refused (edit it with edit_note)."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        edits_vault(false, false)
    }

    fn run(s: &Scholia, a: CreateNoteInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Created>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let created = vault.create_note(&a.path, &a.content, a.template.as_deref()).await?;
            Ok(Reply::new(created, ""))
        })
    }
}

pub struct MoveNote;

#[derive(Deserialize, JsonSchema)]
pub struct MoveNoteInput {
    /// The note to move or rename, relative to the vault
    path: String,
    /// Its new path relative to the vault, e.g. `Archive/Koji.md`
    to: String,
}

impl Tool for MoveNote {
    type Input = MoveNoteInput;
    type Output = Moved;
    const NAME: &'static str = "move_note";
    const TITLE: &'static str = "Move or rename a note";
    const WRITES: bool = true;

    fn description() -> String {
        "Move or rename a note and rewrite every link to it across the vault ([[Old|shown]] becomes \
         [[New|shown]]; headings, blocks and embeds kept). Refused when the destination exists or \
         another note has that name."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        edits_vault(true, false)
    }

    fn run(s: &Scholia, a: MoveNoteInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Moved>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let moved = vault.move_note(&a.path, &a.to).await?;
            let text = moved
                .notes
                .iter()
                .map(|n| format!("- {n}"))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Reply::new(moved, text))
        })
    }
}

pub struct BacklinksTool;

#[derive(Deserialize, JsonSchema)]
pub struct BacklinksInput {
    /// A note path relative to the vault
    path: String,
}

impl Tool for BacklinksTool {
    type Input = BacklinksInput;
    type Output = Backlinks;
    const NAME: &'static str = "backlinks";
    const TITLE: &'static str = "Notes linking to a note";

    fn description() -> String {
        "The notes that link to or embed a note (by name, path, alias, heading or block), each \
         with the lines that link."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        reads_vault()
    }

    fn run(s: &Scholia, a: BacklinksInput, _: RunContext) -> BoxFuture<'_, Result<Reply<Backlinks>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let found = vault.backlinks(&a.path).await?;
            let text = found
                .notes
                .iter()
                .flat_map(|n| {
                    n.lines
                        .iter()
                        .map(move |l| format!("- {}:{}: {}", n.path, l.line, l.text))
                })
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Reply::new(found, text))
        })
    }
}
