//! The environment as a trait (the process's, or a map in tests) and the directories scholia
//! keeps its own files in — never the current directory, never the vault.

use std::path::{Path, PathBuf};

use crate::error::{Coded, ErrorKind};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirsError {
    #[error("{0}: not set and no home directory to default to; set {0} or HOME")]
    NoHome(&'static str),
    #[error("{var}: `{value}` is not an absolute path")]
    NotAbsolute { var: &'static str, value: String },
}

impl Coded for DirsError {
    fn code(&self) -> &'static str {
        "INVALID_CONFIG"
    }
    fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}

/// Where scholia keeps its own files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// Prompts overrides, Gemini CLI workspace, temp files: `$SCHOLIA_CONFIG_DIR` or
    /// `$XDG_CONFIG_HOME/scholia`.
    pub config: PathBuf,
    /// Task database and reports: `$SCHOLIA_DATA_DIR` or `$XDG_DATA_HOME/scholia`.
    pub data: PathBuf,
    /// Indexes, one per vault: `$SCHOLIA_CACHE_DIR` or `$XDG_CACHE_HOME/scholia`.
    pub cache: PathBuf,
}

/// A source of environment variables (the process environment, or a map in tests).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
    /// Every variable, for the allowlisted environment of child processes.
    fn vars(&self) -> Vec<(String, String)>;
}

/// The real process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    fn vars(&self) -> Vec<(String, String)> {
        std::env::vars().collect()
    }
}

impl Env for std::collections::HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.is_empty()).cloned()
    }

    fn vars(&self) -> Vec<(String, String)> {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl Dirs {
    pub fn from_env(env: &dyn Env) -> Result<Dirs, DirsError> {
        let pick = |own: &'static str, xdg: &'static str, home_rel: &str| -> Result<PathBuf, DirsError> {
            if let Some(v) = env.var(own) {
                return absolute(own, v);
            }
            if let Some(v) = env.var(xdg) {
                return Ok(absolute(xdg, v)?.join("scholia"));
            }
            let home = env.var("HOME").ok_or(DirsError::NoHome(own))?;
            Ok(absolute("HOME", home)?.join(home_rel).join("scholia"))
        };
        Ok(Dirs {
            config: pick("SCHOLIA_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")?,
            data: pick("SCHOLIA_DATA_DIR", "XDG_DATA_HOME", ".local/share")?,
            cache: pick("SCHOLIA_CACHE_DIR", "XDG_CACHE_HOME", ".cache")?,
        })
    }

    /// The index directory of the vault at `root` (canonical): `<cache>/index/<name>-<hash>`.
    pub fn index_dir(&self, root: &Path) -> PathBuf {
        let name: String = root
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        self.cache
            .join("index")
            .join(format!("{name}-{:016x}", fnv1a(root.as_os_str().as_encoded_bytes())))
    }
}

fn absolute(var: &'static str, value: String) -> Result<PathBuf, DirsError> {
    let p = PathBuf::from(&value);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(DirsError::NotAbsolute { var, value })
    }
}

/// FNV-1a: a stable hash (std's hasher may change between releases; index paths must not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf29ce484222325, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn directory_precedence() {
        let d = Dirs::from_env(&env(&[("HOME", "/home/u")])).unwrap();
        assert_eq!(d.config, PathBuf::from("/home/u/.config/scholia"));
        assert_eq!(d.data, PathBuf::from("/home/u/.local/share/scholia"));
        assert_eq!(d.cache, PathBuf::from("/home/u/.cache/scholia"));
        let d = Dirs::from_env(&env(&[
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            ("SCHOLIA_DATA_DIR", "/d"),
        ]))
        .unwrap();
        assert_eq!(d.cache, PathBuf::from("/x/scholia"));
        assert_eq!(d.data, PathBuf::from("/d"));
        let e = Dirs::from_env(&env(&[("SCHOLIA_CACHE_DIR", "rel"), ("HOME", "/h")])).unwrap_err();
        assert_eq!(e.to_string(), "SCHOLIA_CACHE_DIR: `rel` is not an absolute path");
        assert!(Dirs::from_env(&env(&[])).is_err());
    }

    #[test]
    fn index_dir_is_stable_and_per_vault() {
        let d = Dirs::from_env(&env(&[("SCHOLIA_CACHE_DIR", "/c"), ("HOME", "/h")])).unwrap();
        assert_eq!(
            d.index_dir(Path::new("/v/My Notes")),
            PathBuf::from("/c/index/My_Notes-a2578e7410b33406")
        );
        assert_ne!(d.index_dir(Path::new("/a/notes")), d.index_dir(Path::new("/b/notes")));
    }
}
