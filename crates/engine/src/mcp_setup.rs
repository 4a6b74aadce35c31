//! `scholia mcp install`: scholia written into an MCP host's own configuration, one command
//! per host. The entry names the binary by its absolute path (a host started from a desktop
//! launcher does not see the shell's PATH: the usual "spawn … ENOENT"), is merged into what the
//! file holds (every other server and setting kept, in order), and the file changed is backed
//! up first. An existing `scholia` entry that differs is replaced only when asked; a file
//! scholia cannot rewrite without losing something (comments in a JSON file) is left alone with
//! the entry to add by hand.
//!
//! Where each host keeps its servers, from its documentation: `paths.rs`; how each file is
//! merged: `json.rs` (every host but Codex) and `codex.rs` (TOML, comments kept).

mod codex;
mod json;
mod paths;

use std::path::{Path, PathBuf};

use serde::Serialize;

use scholia_base::{Coded, ErrorKind, Summary};

pub use paths::Os;

/// The hosts `install` knows, as users name them.
pub const CLIENTS: &[&str] = &["claude-desktop", "claude-code", "cursor", "vscode", "codex", "zed"];

/// The name scholia's entry has in every host's file.
pub const ENTRY: &str = "scholia";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Codex,
    Zed,
}

impl Client {
    pub const ALL: [Client; 6] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Codex,
        Client::Zed,
    ];

    pub fn name(self) -> &'static str {
        CLIENTS[Client::ALL.iter().position(|c| *c == self).unwrap_or(0)]
    }

    /// What users call it.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Codex => "Codex",
            Client::Zed => "Zed",
        }
    }

    /// The scope a host's entry goes to unless asked: the vault as a project where the host
    /// reads project files, else the user's.
    pub fn default_scope(self) -> Scope {
        match self {
            Client::ClaudeCode | Client::Cursor | Client::Vscode => Scope::Project,
            Client::ClaudeDesktop | Client::Codex | Client::Zed => Scope::User,
        }
    }
}

impl std::str::FromStr for Client {
    type Err = SetupError;
    fn from_str(s: &str) -> Result<Client, SetupError> {
        CLIENTS
            .iter()
            .position(|n| *n == s)
            .map(|i| Client::ALL[i])
            .ok_or_else(|| {
                SetupError::Invalid(format!(
                    "--client: `{s}` is not a host scholia knows; valid: {}",
                    CLIENTS.join(", ")
                ))
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The vault's own folder (`.mcp.json`, `.cursor/`, `.vscode/`, `.codex/`, `.zed/`).
    Project,
    /// The user's configuration.
    User,
}

impl std::str::FromStr for Scope {
    type Err = SetupError;
    fn from_str(s: &str) -> Result<Scope, SetupError> {
        match s {
            "project" => Ok(Scope::Project),
            "user" => Ok(Scope::User),
            _ => Err(SetupError::Invalid(format!(
                "--scope: `{s}` is not valid; valid: project, user"
            ))),
        }
    }
}

/// How the host reaches scholia.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// The host starts `scholia mcp --vault VAULT` itself.
    Stdio { binary: PathBuf, vault: PathBuf },
    /// A running `scholia mcp --http`, with the bearer token in an environment variable the
    /// host reads (never written into the file).
    Http { url: String, token_env: Option<String> },
}

/// An install as asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub client: Client,
    pub scope: Scope,
    pub transport: Transport,
    /// The vault: where project-scoped files go.
    pub vault: PathBuf,
    /// Replace a `scholia` entry that differs.
    pub force: bool,
}

/// Where the user's configuration lives on this machine.
#[derive(Debug, Clone)]
pub struct Places {
    pub os: Os,
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME` (Linux), `APPDATA` (Windows), `CODEX_HOME`, when set.
    pub xdg_config: Option<PathBuf>,
    pub appdata: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
}

impl Places {
    /// This machine's, from its environment.
    pub fn from_env(env: &dyn scholia_base::Env) -> Result<Places, SetupError> {
        let home = env
            .var("HOME")
            .or_else(|| env.var("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .ok_or_else(|| SetupError::Invalid("HOME is not set: the hosts' configuration cannot be found".into()))?;
        let path = |k: &str| env.var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Ok(Places {
            os: Os::current(),
            home: PathBuf::from(home),
            xdg_config: path("XDG_CONFIG_HOME"),
            appdata: path("APPDATA"),
            codex_home: path("CODEX_HOME"),
        })
    }
}

/// What an install does (or did) to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub client: Client,
    pub scope: Scope,
    pub path: PathBuf,
    /// added, unchanged (already there, the same) or replaced.
    pub action: Action,
    /// The file as it will be.
    pub text: String,
    /// The entry alone, as the file spells it.
    pub entry: String,
    #[serde(skip)]
    existed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Added,
    Unchanged,
    Replaced,
}

/// What `apply` did.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    #[serde(flatten)]
    pub plan: Plan,
    /// The copy of the file as it was, when there was one and it changed.
    pub backup: Option<PathBuf>,
}

impl Summary for Installed {
    fn summary(&self) -> String {
        let p = &self.plan;
        let what = match p.action {
            Action::Added => "added scholia to",
            Action::Replaced => "replaced scholia in",
            Action::Unchanged => "scholia is already in",
        };
        let mut s = format!(
            "{} ({}): {what} {}",
            p.client.title(),
            scope_name(p.scope),
            p.path.display()
        );
        if let Some(b) = &self.backup {
            s.push_str(&format!("; the file as it was: {}", b.display()));
        }
        if p.action != Action::Unchanged {
            s.push_str(&format!("; restart {} to load it", p.client.title()));
        }
        s
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Project => "project",
        Scope::User => "user",
    }
}

/// One host's file in `--list`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub client: Client,
    pub scope: Scope,
    pub path: PathBuf,
    /// missing (no file), absent (a file without scholia), present, or unreadable (why).
    pub state: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Invalid(String),
    #[error(
        "{path}: scholia is there already, differently:\n{existing}\nrun again with --force to replace it with:\n{wanted}"
    )]
    Differs {
        path: PathBuf,
        existing: String,
        wanted: String,
    },
    #[error(
        "{path}: {why}; scholia does not rewrite it (it would lose what it cannot read back). Add this under `{key}` by hand:\n{entry}"
    )]
    Unmergeable {
        path: PathBuf,
        why: String,
        key: String,
        entry: String,
    },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

impl Coded for SetupError {
    fn code(&self) -> &'static str {
        match self {
            SetupError::Invalid(_) => "INVALID_INPUT",
            SetupError::Differs { .. } => "CONFLICT",
            SetupError::Unmergeable { .. } => "UNMERGEABLE",
            SetupError::Io { .. } => "IO",
        }
    }
    fn kind(&self) -> ErrorKind {
        match self {
            SetupError::Invalid(_) => ErrorKind::InvalidInput,
            SetupError::Differs { .. } => ErrorKind::Conflict,
            SetupError::Unmergeable { .. } => ErrorKind::Conflict,
            SetupError::Io { .. } => ErrorKind::Io,
        }
    }
}

fn io(path: &Path, e: impl std::fmt::Display) -> SetupError {
    SetupError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// What installing would do, nothing written.
pub fn plan(req: &Request, places: &Places) -> Result<Plan, SetupError> {
    let path = paths::config_file(req.client, req.scope, &req.vault, places)?;
    let before = match std::fs::read(&path) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| io(&path, "not UTF-8"))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&path, e)),
    };
    let merged = match req.client {
        Client::Codex => codex::merge(&path, before.as_deref(), &req.transport, req.force)?,
        c => json::merge(c, &path, before.as_deref(), &req.transport, req.force)?,
    };
    Ok(Plan {
        client: req.client,
        scope: req.scope,
        existed: before.is_some(),
        path,
        action: merged.action,
        text: merged.text,
        entry: merged.entry,
    })
}

/// Writes a plan: the file backed up (`NAME.scholia-backup-<unix seconds>`), then replaced in
/// one rename (through a symlink, to the file it names).
pub fn apply(plan: Plan) -> Result<Installed, SetupError> {
    if plan.action == Action::Unchanged {
        return Ok(Installed { plan, backup: None });
    }
    let target = match std::fs::canonicalize(&plan.path) {
        Ok(real) => real,
        Err(_) => plan.path.clone(),
    };
    let dir = target.parent().ok_or_else(|| io(&target, "no folder"))?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let backup = match plan.existed {
        true => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let name = format!(
                "{}.scholia-backup-{stamp}",
                target.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            );
            let b = target.with_file_name(name);
            std::fs::copy(&target, &b).map_err(|e| io(&b, e))?;
            Some(b)
        }
        false => None,
    };
    write_replacing(&target, &plan.text)?;
    Ok(Installed { plan, backup })
}

/// `text` into `path` through a temporary file beside it and one rename, with the old file's
/// permissions (a config holding keys stays private).
fn write_replacing(path: &Path, text: &str) -> Result<(), SetupError> {
    use std::io::Write;
    let tmp = path.with_file_name(format!(
        ".{}.scholia-{}",
        path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
        std::process::id()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| io(&tmp, e))?;
    let done = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| match std::fs::metadata(path) {
            Ok(m) => std::fs::set_permissions(&tmp, m.permissions()),
            Err(_) => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(path, e));
    }
    Ok(())
}

/// Every host's files (both scopes where a host has two) and whether scholia is in them.
pub fn list(vault: &Path, places: &Places) -> Vec<Listed> {
    let mut out = Vec::new();
    for client in Client::ALL {
        for scope in [Scope::Project, Scope::User] {
            let Ok(path) = paths::config_file(client, scope, vault, places) else {
                continue;
            };
            let state = match std::fs::read_to_string(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => "missing".to_string(),
                Err(e) => format!("unreadable ({e})"),
                Ok(text) => match client {
                    Client::Codex => codex::has_entry(&text),
                    c => json::has_entry(c, &text),
                }
                .map_or_else(
                    |why| format!("unreadable ({why})"),
                    |has| if has { "present" } else { "absent" }.into(),
                ),
            };
            out.push(Listed {
                client,
                scope,
                path,
                state,
            });
        }
    }
    out
}

/// What a merge made.
struct Merged {
    action: Action,
    text: String,
    entry: String,
}

#[cfg(test)]
mod tests;
