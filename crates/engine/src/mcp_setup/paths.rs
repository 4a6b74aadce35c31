//! Where each host keeps its MCP servers, per scope and operating system, as the hosts
//! document it:
//!
//! - Claude Desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude`
//!   (macOS), `%APPDATA%\Claude` (Windows), `$XDG_CONFIG_HOME/Claude` (Linux builds); user only.
//! - Claude Code: the project's `.mcp.json`; the user's `~/.claude.json` (`mcpServers`).
//! - Cursor: the project's `.cursor/mcp.json`; the user's `~/.cursor/mcp.json`.
//! - VS Code: the project's `.vscode/mcp.json`; the user's `mcp.json` in its `User` folder
//!   (`~/Library/Application Support/Code/User`, `%APPDATA%\Code\User`, `~/.config/Code/User`).
//! - Codex: `$CODEX_HOME/config.toml` (default `~/.codex`); a trusted project's
//!   `.codex/config.toml`.
//! - Zed: `settings.json` in `~/.config/zed` (Linux, macOS) or `%APPDATA%\Zed` (Windows); a
//!   project's `.zed/settings.json`.

use std::path::{Path, PathBuf};

use super::{Client, Places, Scope, SetupError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// `%APPDATA%`, else its usual place under the home folder.
fn appdata(p: &Places) -> PathBuf {
    p.appdata
        .clone()
        .unwrap_or_else(|| p.home.join("AppData").join("Roaming"))
}

/// `$XDG_CONFIG_HOME`, else `~/.config`.
fn xdg(p: &Places) -> PathBuf {
    p.xdg_config.clone().unwrap_or_else(|| p.home.join(".config"))
}

/// The file `client` reads its servers from in `scope`.
pub fn config_file(client: Client, scope: Scope, vault: &Path, p: &Places) -> Result<PathBuf, SetupError> {
    let project = |rel: &[&str]| rel.iter().fold(vault.to_path_buf(), |acc, part| acc.join(part));
    Ok(match (client, scope) {
        (Client::ClaudeDesktop, Scope::Project) => {
            return Err(SetupError::Invalid(
                "--scope: Claude Desktop has no project configuration; valid: user".into(),
            ));
        }
        (Client::ClaudeDesktop, Scope::User) => match p.os {
            Os::MacOs => p.home.join("Library/Application Support/Claude"),
            Os::Windows => appdata(p).join("Claude"),
            Os::Linux => xdg(p).join("Claude"),
        }
        .join("claude_desktop_config.json"),
        (Client::ClaudeCode, Scope::Project) => project(&[".mcp.json"]),
        (Client::ClaudeCode, Scope::User) => p.home.join(".claude.json"),
        (Client::Cursor, Scope::Project) => project(&[".cursor", "mcp.json"]),
        (Client::Cursor, Scope::User) => p.home.join(".cursor").join("mcp.json"),
        (Client::Vscode, Scope::Project) => project(&[".vscode", "mcp.json"]),
        (Client::Vscode, Scope::User) => match p.os {
            Os::MacOs => p.home.join("Library/Application Support/Code/User"),
            Os::Windows => appdata(p).join("Code").join("User"),
            Os::Linux => xdg(p).join("Code").join("User"),
        }
        .join("mcp.json"),
        (Client::Codex, Scope::Project) => project(&[".codex", "config.toml"]),
        (Client::Codex, Scope::User) => p
            .codex_home
            .clone()
            .unwrap_or_else(|| p.home.join(".codex"))
            .join("config.toml"),
        (Client::Zed, Scope::Project) => project(&[".zed", "settings.json"]),
        (Client::Zed, Scope::User) => match p.os {
            Os::Windows => appdata(p).join("Zed"),
            Os::MacOs => p.home.join(".config").join("zed"),
            Os::Linux => xdg(p).join("zed"),
        }
        .join("settings.json"),
    })
}
