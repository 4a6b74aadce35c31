//! Trusted vaults. A vault is often a cloned repository or a synced folder: its `.scholia.toml`
//! may tune scholia, but settings that choose an executable, an endpoint, a credential or a
//! command-line argument are honoured only when the user has trusted that vault, in their own
//! config directory, with the file's hash — an edited file needs trusting again (the direnv /
//! Neovim `exrc` model). Nothing in a vault can trust itself.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{CONFIG_FILE, ConfigError};

/// `.scholia.toml` keys honoured only in a trusted vault.
pub const SENSITIVE: &[&str] = &[
    "llm.base_url",
    "llm.model",
    "llm.api_key_env",
    "llm.max_concurrency",
    "llm.context_tokens",
    "sonar.model",
    "deep_search.max_iterations",
    "search.provider",
    "search.url",
    "deep_search.gemini_cli",
    "deep_search.model",
    "deep_search.correction_model",
    "embeddings.model_path",
    "embeddings.hub_model",
    "embeddings.hub_url",
    "embeddings.base_url",
    "embeddings.model",
    "embeddings.api_key_env",
    "embeddings.query_prompt",
    "embeddings.document_prompt",
    "tasks.database_url",
];

/// The file in the config directory that records trusted vaults.
pub const STORE: &str = "trusted-vaults.toml";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Store {
    #[serde(default, rename = "vault")]
    vaults: Vec<Entry>,
}

/// One trusted vault: its root and the hash of its `.scholia.toml` when trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub sha256: String,
    pub trusted_at: String,
}

/// A vault file whose sensitive settings were ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub root: PathBuf,
    pub keys: Vec<&'static str>,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} sets {}, which scholia ignores until you trust this vault (they choose programs, endpoints, credentials, command-line arguments or what costs money): run `scholia trust {}`",
            self.root.join(CONFIG_FILE).display(),
            self.keys.join(", "),
            self.root.display()
        )
    }
}

pub fn hash(bytes: &[u8]) -> String {
    scholia_base::hex(&Sha256::digest(bytes))
}

fn store_path(config_dir: &Path) -> PathBuf {
    config_dir.join(STORE)
}

fn load(config_dir: &Path) -> Result<Store, ConfigError> {
    let path = store_path(config_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| ConfigError::File {
            file: path.display().to_string(),
            message: e.message().to_string(),
            line: None,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Store::default()),
        Err(e) => Err(ConfigError::File {
            file: path.display().to_string(),
            message: e.to_string(),
            line: None,
        }),
    }
}

fn save(config_dir: &Path, store: &Store) -> Result<(), ConfigError> {
    let path = store_path(config_dir);
    let io = |e: std::io::Error| ConfigError::File {
        file: path.display().to_string(),
        message: e.to_string(),
        line: None,
    };
    std::fs::create_dir_all(config_dir).map_err(io)?;
    let text = format!(
        "# Vaults whose .scholia.toml may choose programs, endpoints, credentials and arguments.\n\
         # Written by `scholia trust`; a changed file needs trusting again.\n\n{}",
        toml::to_string_pretty(store).expect("serializable")
    );
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}

fn canonical(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

/// Whether the vault at `root`, with `.scholia.toml` holding `bytes`, is trusted.
pub fn is_trusted(config_dir: &Path, root: &Path, bytes: &[u8]) -> bool {
    let (path, sha) = (canonical(root), hash(bytes));
    match load(config_dir) {
        Ok(store) => store.vaults.iter().any(|e| e.path == path && e.sha256 == sha),
        Err(e) => {
            tracing::warn!("{e}; no vault is trusted");
            false
        }
    }
}

/// Trusts the vault at `root` as its `.scholia.toml` is now. Returns the entry.
pub fn trust(config_dir: &Path, root: &Path) -> Result<Entry, ConfigError> {
    let file = root.join(CONFIG_FILE);
    let bytes = std::fs::read(&file).map_err(|e| ConfigError::Invalid {
        field: "DIR".into(),
        value: root.display().to_string(),
        valid: match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "a vault with a {CONFIG_FILE}; this one has none, so there is nothing to trust (scholia reads it as it is)"
            ),
            _ => format!("a vault whose {CONFIG_FILE} can be read ({e})"),
        },
    })?;
    let mut store = load(config_dir)?;
    let path = canonical(root);
    store.vaults.retain(|e| e.path != path);
    let entry = Entry {
        path,
        sha256: hash(&bytes),
        trusted_at: time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
    };
    store.vaults.push(entry.clone());
    save(config_dir, &store)?;
    Ok(entry)
}

/// Forgets the vault at `root`; `false` when it was not trusted.
pub fn revoke(config_dir: &Path, root: &Path) -> Result<bool, ConfigError> {
    let mut store = load(config_dir)?;
    let path = canonical(root);
    let before = store.vaults.len();
    store.vaults.retain(|e| e.path != path);
    if store.vaults.len() == before {
        return Ok(false);
    }
    save(config_dir, &store)?;
    Ok(true)
}

pub fn list(config_dir: &Path) -> Result<Vec<Entry>, ConfigError> {
    Ok(load(config_dir)?.vaults)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_vault_and_per_content() {
        let config = tempfile::tempdir().unwrap();
        let vault = tempfile::tempdir().unwrap();
        let file = vault.path().join(CONFIG_FILE);
        std::fs::write(&file, "[llm]\nbase_url = \"http://evil\"\n").unwrap();
        let bytes = std::fs::read(&file).unwrap();
        assert!(!is_trusted(config.path(), vault.path(), &bytes));
        trust(config.path(), vault.path()).unwrap();
        assert!(is_trusted(config.path(), vault.path(), &bytes));
        // Another vault with the same file is not trusted; an edited file is not either.
        let other = tempfile::tempdir().unwrap();
        assert!(!is_trusted(config.path(), other.path(), &bytes));
        assert!(!is_trusted(
            config.path(),
            vault.path(),
            b"[llm]\nbase_url = \"http://evil2\"\n"
        ));
        assert_eq!(list(config.path()).unwrap().len(), 1);
        assert!(revoke(config.path(), vault.path()).unwrap());
        assert!(!is_trusted(config.path(), vault.path(), &bytes));
        assert!(!revoke(config.path(), vault.path()).unwrap());
        let e = trust(config.path(), other.path()).unwrap_err().to_string();
        assert!(e.starts_with("DIR: "), "{e}");
    }
}
