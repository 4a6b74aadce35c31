//! Codex's `config.toml`: `[mcp_servers.scholia]` merged with `toml_edit`, so every other
//! table, key, comment and blank line stays as the user wrote it.

use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::{Action, ENTRY, Merged, SetupError, Transport};

fn entry(transport: &Transport) -> Table {
    let mut t = Table::new();
    match transport {
        Transport::Stdio { binary, vault } => {
            t.insert("command", value(binary.to_string_lossy().as_ref()));
            let mut args = Array::new();
            for a in ["mcp", "--vault", vault.to_string_lossy().as_ref()] {
                args.push(a);
            }
            t.insert("args", value(args));
        }
        Transport::Http { url, token_env } => {
            t.insert("url", value(url.as_str()));
            if let Some(var) = token_env {
                // Codex reads the token from this variable; it refuses one written inline.
                t.insert("bearer_token_env_var", value(var.as_str()));
            }
        }
    }
    t
}

/// A table's keys and values, compared without formatting.
fn plain(t: &Table) -> Vec<(String, String)> {
    let mut kv: Vec<(String, String)> = t
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                v.as_value()
                    .map(|v| v.clone().decorated("", "").to_string())
                    .unwrap_or_default(),
            )
        })
        .collect();
    kv.sort();
    kv
}

fn shown(t: &Table) -> String {
    let mut doc = DocumentMut::new();
    let mut servers = Table::new();
    servers.set_implicit(true);
    servers.insert(ENTRY, Item::Table(t.clone()));
    doc.insert("mcp_servers", Item::Table(servers));
    doc.to_string()
}

pub(super) fn merge(
    path: &Path,
    before: Option<&str>,
    transport: &Transport,
    force: bool,
) -> Result<Merged, SetupError> {
    let wanted = entry(transport);
    let text = before.unwrap_or("");
    let unmergeable = |why: String| SetupError::Unmergeable {
        path: path.to_path_buf(),
        why,
        key: "mcp_servers".into(),
        entry: shown(&wanted),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| unmergeable(format!("it is not valid TOML ({e})")))?;
    if !doc.contains_key("mcp_servers") {
        let mut servers = Table::new();
        servers.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(servers));
    }
    let servers = doc["mcp_servers"]
        .as_table_mut()
        .ok_or_else(|| unmergeable("`mcp_servers` is not a table".into()))?;
    let action = match servers.get(ENTRY).map(|i| i.as_table()) {
        None => Action::Added,
        Some(Some(old)) if plain(old) == plain(&wanted) => Action::Unchanged,
        Some(old) if !force => {
            return Err(SetupError::Differs {
                path: path.to_path_buf(),
                existing: old.map(shown).unwrap_or_else(|| "(not a table)".into()),
                wanted: shown(&wanted),
            });
        }
        Some(_) => Action::Replaced,
    };
    let text = match action {
        Action::Unchanged => text.to_string(),
        _ => {
            servers.insert(ENTRY, Item::Table(wanted.clone()));
            doc.to_string()
        }
    };
    Ok(Merged {
        action,
        text,
        entry: shown(&wanted),
    })
}

pub(super) fn has_entry(text: &str) -> Result<bool, String> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_string())?;
    Ok(doc
        .get("mcp_servers")
        .and_then(Item::as_table)
        .is_some_and(|t| t.contains_key(ENTRY)))
}
