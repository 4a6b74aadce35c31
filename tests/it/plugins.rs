//! The editor plugins (`editor-plugins/`) name only what the server has: its commands, its
//! settings (checked with the server's own parser) and its environment variables, as
//! `scholia::lsp::describe()` lists them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::repo;

struct Server {
    commands: BTreeSet<String>,
    settings: BTreeSet<String>,
    env: BTreeSet<String>,
}

fn server() -> Server {
    let d = scholia::lsp::describe();
    let names = |field: &str, key: &str| -> BTreeSet<String> {
        d[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| match key {
                "" => v.as_str().unwrap().to_string(),
                k => v[k].as_str().unwrap().to_string(),
            })
            .collect()
    };
    Server {
        commands: names("commands", ""),
        settings: names("settings", "key"),
        env: names("env", "name"),
    }
}

/// Every quoted `scholia.<name>` in `text` that is neither a server command nor in `own`.
fn unknown_commands(text: &str, commands: &BTreeSet<String>, own: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("scholia.") {
        let quote = text[..at].chars().last();
        if !matches!(quote, Some('\'' | '"' | '`')) {
            continue;
        }
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
            .collect();
        let name = name.trim_end_matches('.').to_string();
        let file = [".txt", ".lua", ".exe", ".vsix", ".md", ".toml", ".json"]
            .iter()
            .any(|e| name.ends_with(e));
        if text[at + name.len()..].chars().next() != quote || file {
            continue; // not a whole quoted name: a file name, or part of a sentence
        }
        if !commands.contains(&name) && !own.contains(&name) {
            found.push(name);
        }
    }
    found
}

fn plugin_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !matches!(name.as_str(), "node_modules" | "dist" | "out" | "server") {
                plugin_files(&path, out);
            }
        } else if !name.ends_with("-lock.json")
            && ["lua", "ts", "json", "toml", "md", "txt", "mjs"]
                .iter()
                .any(|e| name.ends_with(&format!(".{e}")))
        {
            out.push(path);
        }
    }
}

fn vscode_manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join("editor-plugins/vscode/package.json")).unwrap()).unwrap()
}

#[test]
fn the_checker_finds_a_command_the_server_lacks() {
    let s = server();
    let own = BTreeSet::from(["scholia.editor.research".to_string()]);
    let text = "a('scholia.research') b(\"scholia.frobnicate\") c('scholia.editor.research') `scholia.tasks` scholia.prose 'scholia.txt'";
    assert_eq!(unknown_commands(text, &s.commands, &own), vec!["scholia.frobnicate"]);
}

#[test]
fn plugins_name_only_commands_the_server_has() {
    let s = server();
    // What the VS Code extension defines itself: its palette commands and settings.
    let manifest = vscode_manifest();
    let mut own: BTreeSet<String> = manifest["contributes"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap().to_string())
        .collect();
    for key in manifest["contributes"]["configuration"]["properties"]
        .as_object()
        .unwrap()
        .keys()
    {
        own.insert(key.clone());
        // `affectsConfiguration('scholia.server')` names a prefix of its settings.
        if let Some((prefix, _)) = key.rsplit_once('.') {
            own.insert(prefix.to_string());
        }
    }
    let mut files = Vec::new();
    plugin_files(&repo().join("editor-plugins"), &mut files);
    assert!(files.len() >= 10, "{files:?}");
    let mut unknown = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for name in unknown_commands(&text, &s.commands, &own) {
            unknown.push(format!("{}: {name}", f.strip_prefix(repo()).unwrap().display()));
        }
    }
    assert!(unknown.is_empty(), "commands the server does not have: {unknown:#?}");
    // The Neovim plugin's table of commands is what its health check verifies.
    let nvim = std::fs::read_to_string(repo().join("editor-plugins/nvim/lua/scholia/init.lua")).unwrap();
    for c in &s.commands {
        assert!(nvim.contains(&format!("'{c}'")), "the Neovim plugin does not offer {c}");
    }
}

/// The lines of a vimdoc section: the first word of each indented line between `marker` and
/// the next rule.
fn doc_section(doc: &str, marker: &str) -> BTreeSet<String> {
    doc.split(marker)
        .nth(1)
        .unwrap_or_else(|| panic!("no {marker}"))
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("====="))
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_neovim_help_lists_exactly_the_server_s_settings_and_environment() {
    let s = server();
    let doc = std::fs::read_to_string(repo().join("editor-plugins/nvim/doc/scholia.txt")).unwrap();
    assert_eq!(
        doc_section(
            &doc,
            "shape of a vault's `.scholia.toml` and wins over it. Keys (dotted = nested):"
        ),
        s.settings
    );
    assert_eq!(
        doc_section(
            &doc,
            "The server reads these from its environment (Neovim's, plus `env`):"
        ),
        s.env
    );
}

#[test]
fn plugin_settings_parse_with_the_server_s_own_parser() {
    let s = server();
    // Helix: the `config` table is sent as initializationOptions.
    let helix: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo().join("editor-plugins/helix/languages.toml")).unwrap()).unwrap();
    let config = serde_json::to_value(&helix["language-server"]["scholia"]["config"]).unwrap();
    assert!(config.as_object().is_some_and(|c| !c.is_empty()));
    scholia::config::FileConfig::from_json(&config).unwrap();
    assert_eq!(
        helix["language-server"]["scholia"]["args"].as_array().unwrap()[0].as_str(),
        Some("lsp")
    );
    // Zed: `initialization_options` in the README's settings.json.
    let readme = std::fs::read_to_string(repo().join("editor-plugins/README.md")).unwrap();
    let block = readme.split("```json").nth(1).unwrap().split("```").next().unwrap();
    let zed: Value = serde_json::from_str(block).unwrap();
    scholia::config::FileConfig::from_json(&zed["lsp"]["scholia"]["initialization_options"]).unwrap();
    // A key the server lacks fails that parser (so the checks above can fail).
    assert!(scholia::config::FileConfig::from_json(&serde_json::json!({"sonar": {"tier": "x"}})).is_err());
    // VS Code: `scholia.settings` declares exactly the server's keys, `scholia.server.env`
    // exactly its variables (the log level has a setting of its own).
    let props = &vscode_manifest()["contributes"]["configuration"]["properties"];
    let mut declared = BTreeSet::new();
    for (k, v) in props["scholia.settings"]["properties"].as_object().unwrap() {
        match v["properties"].as_object() {
            Some(sub) => declared.extend(sub.keys().map(|s| format!("{k}.{s}"))),
            None => {
                declared.insert(k.clone());
            }
        }
    }
    assert_eq!(declared, s.settings);
    let env: BTreeSet<String> = props["scholia.server.env"]["propertyNames"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut want = s.env.clone();
    want.remove("SCHOLIA_LOG");
    assert_eq!(env, want);
}
