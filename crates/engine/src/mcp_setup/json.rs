//! The JSON hosts: scholia's entry merged under the host's key, every other key kept in its
//! order. A file that is not plain JSON (comments, trailing commas: VS Code and Zed allow them)
//! is not rewritten: serializing it again would drop them.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Action, Client, ENTRY, Merged, SetupError, Transport};

/// The key a host lists its servers under.
fn servers_key(client: Client) -> &'static str {
    match client {
        Client::Vscode => "servers",
        Client::Zed => "context_servers",
        _ => "mcpServers",
    }
}

/// How `client` names an environment variable inside its own file (None: it does not).
fn env_ref(client: Client, var: &str) -> Option<String> {
    match client {
        Client::ClaudeCode => Some(format!("${{{var}}}")),
        Client::Cursor | Client::Vscode => Some(format!("${{env:{var}}}")),
        Client::ClaudeDesktop | Client::Zed | Client::Codex => None,
    }
}

/// scholia's entry for `client`.
pub(super) fn entry(client: Client, transport: &Transport) -> Result<Value, SetupError> {
    match transport {
        Transport::Stdio { binary, vault } => {
            let args = json!(["mcp", "--vault", vault.to_string_lossy()]);
            let command = binary.to_string_lossy();
            Ok(match client {
                Client::ClaudeCode | Client::Vscode => json!({"type": "stdio", "command": command, "args": args}),
                Client::Zed => json!({"source": "custom", "command": command, "args": args, "env": {}}),
                _ => json!({"command": command, "args": args}),
            })
        }
        Transport::Http { url, token_env } => {
            if client == Client::ClaudeDesktop {
                return Err(SetupError::Invalid(
                    "--http: Claude Desktop adds remote servers in Settings → Connectors, not in its file; leave out --http to have it start scholia itself".into(),
                ));
            }
            let mut e = Map::new();
            if matches!(client, Client::ClaudeCode | Client::Vscode) {
                e.insert("type".into(), "http".into());
            }
            e.insert("url".into(), url.clone().into());
            if let Some(var) = token_env {
                let Some(reference) = env_ref(client, var) else {
                    return Err(SetupError::Invalid(format!(
                        "--token-env: {} reads no environment variable in its settings, and scholia does not write a token into a file; add the `Authorization: Bearer …` header there by hand",
                        client.title()
                    )));
                };
                e.insert(
                    "headers".into(),
                    json!({"Authorization": format!("Bearer {reference}")}),
                );
            }
            Ok(Value::Object(e))
        }
    }
}

/// The file's JSON, or why it cannot be rewritten.
fn parse(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err("it is not a JSON object".into()),
        Err(e) if text.contains("//") || text.contains("/*") => Err(format!("it has comments ({e})")),
        Err(e) => Err(format!("it is not plain JSON ({e})")),
    }
}

pub(super) fn merge(
    client: Client,
    path: &Path,
    before: Option<&str>,
    transport: &Transport,
    force: bool,
) -> Result<Merged, SetupError> {
    let wanted = entry(client, transport)?;
    let key = servers_key(client);
    let shown = serde_json::to_string_pretty(&json!({ ENTRY: wanted })).unwrap_or_default();
    let mut root = parse(before.unwrap_or("")).map_err(|why| SetupError::Unmergeable {
        path: path.to_path_buf(),
        why,
        key: key.into(),
        entry: shown.clone(),
    })?;
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(SetupError::Unmergeable {
            path: path.to_path_buf(),
            why: format!("`{key}` is not an object"),
            key: key.into(),
            entry: shown,
        });
    };
    let action = match servers.get(ENTRY) {
        None => Action::Added,
        Some(old) if *old == wanted => Action::Unchanged,
        Some(old) if !force => {
            return Err(SetupError::Differs {
                path: path.to_path_buf(),
                existing: serde_json::to_string_pretty(old).unwrap_or_default(),
                wanted: serde_json::to_string_pretty(&wanted).unwrap_or_default(),
            });
        }
        Some(_) => Action::Replaced,
    };
    servers.insert(ENTRY.into(), wanted);
    let text = match action {
        Action::Unchanged => before.unwrap_or_default().to_string(),
        _ => serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default() + "\n",
    };
    Ok(Merged {
        action,
        text,
        entry: shown,
    })
}

/// Whether the file names scholia among its servers.
pub(super) fn has_entry(client: Client, text: &str) -> Result<bool, String> {
    Ok(parse(text)?
        .get(servers_key(client))
        .and_then(Value::as_object)
        .is_some_and(|s| s.contains_key(ENTRY)))
}
