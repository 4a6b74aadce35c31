//! The note commands for scripts: outline, edit, create, move, backlinks — each one call of
//! the vault session, as the MCP tools make it.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{Map, Value};

use super::{open_vault, render, runtime};
use scholia::engine::Summary;
use scholia::error::Error;
use scholia::index::{EditTarget, VaultSession};
use scholia::vault::note_edit::Mode;

/// The note a user named (relative to the vault or the current directory), as a vault path.
fn note_of(session: &VaultSession, note: &str) -> Result<String> {
    let cwd = std::env::current_dir().ok();
    Ok(session.resolve(note, cwd.as_deref())?.rel)
}

fn text_of(content: Option<String>, file: Option<PathBuf>) -> Result<String> {
    match (content, file) {
        (Some(c), _) => Ok(c),
        (None, Some(f)) if f.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("standard input")?;
            Ok(s)
        }
        (None, Some(f)) => std::fs::read_to_string(&f).with_context(|| format!("--content-file {}", f.display())),
        (None, None) => Ok(String::new()),
    }
}

fn print<T: serde::Serialize + Summary>(value: &T, json: bool, extra: &str) -> Result<()> {
    if json {
        render::json(value)?;
    } else {
        println!("{}", value.summary());
        if !extra.is_empty() {
            println!("{extra}");
        }
    }
    Ok(())
}

pub fn outline(note: String, vault: Option<PathBuf>, json: bool) -> Result<()> {
    let (session, _) = open_vault(vault, false)?;
    let rel = note_of(&session, &note)?;
    let o = runtime()?.block_on(session.outline(&rel))?;
    let lines: Vec<String> = o
        .headings
        .iter()
        .map(|h| {
            format!(
                "{:>5}  {} {} ({} chars)",
                h.line,
                "#".repeat(h.level as usize),
                h.heading,
                h.chars
            )
        })
        .collect();
    print(&o, json, &lines.join("\n"))
}

#[allow(clippy::too_many_arguments)]
pub fn edit(
    note: String,
    heading: Option<String>,
    mode: Mode,
    content: Option<String>,
    content_file: Option<PathBuf>,
    set: Vec<String>,
    unset: Vec<String>,
    expected_hash: Option<String>,
    vault: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    let target = match heading {
        Some(heading) => EditTarget::Section {
            heading,
            mode,
            content: text_of(content, content_file)?,
        },
        None if set.is_empty() && unset.is_empty() => {
            return Err(Error::invalid(
                "--heading: missing; give the heading of the section to edit, or --set/--unset front-matter fields",
            )
            .into());
        }
        None => {
            let mut fields = Map::new();
            for kv in &set {
                let Some((k, v)) = kv.split_once('=') else {
                    return Err(Error::invalid(format!("--set: `{kv}` is not valid; valid: KEY=VALUE")).into());
                };
                let value = serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.to_string()));
                fields.insert(k.trim().to_string(), value);
            }
            for k in &unset {
                fields.insert(k.trim().to_string(), Value::Null);
            }
            EditTarget::Frontmatter { fields }
        }
    };
    let (session, _) = open_vault(vault, false)?;
    let rel = note_of(&session, &note)?;
    let edited = runtime()?.block_on(session.edit_note(&rel, target, expected_hash.as_deref()))?;
    print(&edited, json, "")
}

pub fn create(
    path: String,
    content: Option<String>,
    content_file: Option<PathBuf>,
    template: Option<String>,
    vault: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    let text = text_of(content, content_file)?;
    let (session, _) = open_vault(vault, false)?;
    let created = runtime()?.block_on(session.create_note(&path, &text, template.as_deref()))?;
    print(&created, json, "")
}

pub fn move_note(note: String, to: String, vault: Option<PathBuf>, json: bool) -> Result<()> {
    let (session, _) = open_vault(vault, false)?;
    // A folder moves with every note in it; a note is named as for the other commands.
    let root = session.vault().root();
    let folder = std::env::current_dir()
        .ok()
        .map(|cwd| cwd.join(&note))
        .filter(|p| p.is_dir())
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| scholia::vault::paths::relative(root, &p))
        .filter(|r| !r.is_empty());
    let rel = match folder {
        Some(f) => f,
        None if root.join(note.trim_matches('/')).is_dir() => note.trim_matches('/').to_string(),
        None => note_of(&session, &note)?,
    };
    let moved = runtime()?.block_on(session.move_note(&rel, &to))?;
    let lines: Vec<String> = moved.notes.iter().map(|n| format!("  {n}")).collect();
    print(&moved, json, &lines.join("\n"))
}

pub fn backlinks(note: String, vault: Option<PathBuf>, json: bool) -> Result<()> {
    let (session, _) = open_vault(vault, false)?;
    let rel = note_of(&session, &note)?;
    let found = runtime()?.block_on(session.backlinks(&rel))?;
    let lines: Vec<String> = found
        .notes
        .iter()
        .flat_map(|n| {
            n.lines
                .iter()
                .map(move |l| format!("{}:{}: {}", n.path, l.line, l.text))
        })
        .collect();
    print(&found, json, &lines.join("\n"))
}
