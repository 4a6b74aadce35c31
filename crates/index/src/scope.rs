//! The folders a server may use (`scholia mcp --allow-folder`). A scoped index answers as if
//! the vault held only them: searches, related notes, listings, link lookups, references and
//! note texts leave out everything else, and resolving or writing a note outside is an error.

use std::ops::Bound;
use std::sync::RwLock;

use tantivy::Term;
use tantivy::query::{BooleanQuery, Occur, Query, RangeQuery};

use super::VaultIndex;
use scholia_base::{Error, ErrorKind};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Vault-relative folders, each ending in `/`; empty: the whole vault.
    folders: Vec<String>,
}

impl Scope {
    /// The folders given (`--allow-folder`), each inside the vault and existing under `root`.
    pub fn new(root: &std::path::Path, folders: &[String]) -> Result<Scope, Error> {
        let mut out = Vec::new();
        for f in folders {
            let trimmed = f.trim().trim_matches('/');
            let bad = trimmed.is_empty()
                || std::path::Path::new(trimmed).is_absolute()
                || trimmed.contains('\\')
                || trimmed.split('/').any(|c| c.is_empty() || c == "." || c == "..");
            if bad {
                return Err(Error::invalid(format!(
                    "--allow-folder: `{f}` is not valid; valid: a folder of the vault, relative to it, e.g. `Journal`"
                )));
            }
            if !root.join(trimmed).is_dir() {
                return Err(Error::invalid(format!(
                    "--allow-folder: `{f}` is not a folder of the vault {}",
                    root.display()
                )));
            }
            out.push(format!("{trimmed}/"));
        }
        out.sort();
        out.dedup();
        Ok(Scope { folders: out })
    }

    pub fn is_whole_vault(&self) -> bool {
        self.folders.is_empty()
    }

    pub fn allows(&self, rel: &str) -> bool {
        self.folders.is_empty() || self.folders.iter().any(|f| rel.starts_with(f.as_str()))
    }

    /// `Journal, Projects/Koji`.
    pub fn describe(&self) -> String {
        self.folders
            .iter()
            .map(|f| f.trim_end_matches('/'))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The error for a note outside the scope (`field` names the argument).
    pub fn refuse(&self, field: &str, rel: &str) -> Error {
        Error::new(
            "OUT_OF_SCOPE",
            ErrorKind::InvalidInput,
            format!(
                "{field}: `{rel}` is outside the folders this server may use ({}); valid: a note under one of them",
                self.describe()
            ),
        )
    }
}

impl VaultIndex {
    /// Confines this index to `scope` from now on.
    pub fn set_scope(&self, scope: Scope) {
        *self.scope.write().unwrap_or_else(|e| e.into_inner()) = scope;
    }

    pub fn scope(&self) -> Scope {
        self.scope.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `q` limited to the scope's folders (itself for the whole vault).
    pub(crate) fn scoped(&self, q: Box<dyn Query>) -> Box<dyn Query> {
        let scope = self.scope();
        if scope.is_whole_vault() {
            return q;
        }
        let folders: Vec<(Occur, Box<dyn Query>)> = scope
            .folders
            .iter()
            .map(|f| {
                // Paths under `f/`: from `f/` up to `f0` (`0` follows `/`).
                let upper = format!("{}0", f.trim_end_matches('/'));
                let range = RangeQuery::new(
                    Bound::Included(Term::from_field_text(self.fields.path, f)),
                    Bound::Excluded(Term::from_field_text(self.fields.path, &upper)),
                );
                (Occur::Should, Box::new(range) as Box<dyn Query>)
            })
            .collect();
        Box::new(BooleanQuery::new(vec![
            (Occur::Must, q),
            (Occur::Must, Box::new(BooleanQuery::new(folders))),
        ]))
    }
}

/// Where a scope lives in the index (a lock, so it can be set once the vault is open).
pub(crate) type ScopeCell = RwLock<Scope>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Journal/2026")).unwrap();
        std::fs::create_dir_all(dir.path().join("Projects")).unwrap();
        let s = Scope::new(dir.path(), &["Journal/".into(), "Projects".into()]).unwrap();
        assert!(s.allows("Journal/2026/a.md") && s.allows("Projects/b.md"));
        assert!(!s.allows("Journalism/c.md") && !s.allows("top.md"));
        assert_eq!(s.describe(), "Journal, Projects");
        for bad in ["../x", "/etc", "", "a//b", "Missing"] {
            assert!(Scope::new(dir.path(), &[bad.into()]).is_err(), "{bad}");
        }
        assert!(Scope::default().allows("anything.md"));
    }
}
