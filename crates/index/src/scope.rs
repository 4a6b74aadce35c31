//! The folders a server may use (`scholia mcp --allow-folder`). A scoped index answers as if
//! the vault held only them: searches, related notes, listings, link lookups, references and
//! note texts leave out everything else, and resolving or writing a note outside is an error.
//!
//! A path is in scope when it is under a folder as written *and* once symlinks are followed:
//! `Journal/ToMicrobes → ../Microbes` does not carry `Microbes` into a server confined to
//! `Journal`, for reading or for writing.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use tantivy::Term;
use tantivy::query::{BooleanQuery, Occur, Query, RangeQuery};

use super::VaultIndex;
use scholia_base::{Error, ErrorKind};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Vault-relative folders, each ending in `/`; empty: the whole vault.
    folders: Vec<String>,
    /// The vault's root and the folders' real paths (symlinks followed).
    root: PathBuf,
    real: Vec<PathBuf>,
}

impl Scope {
    /// The folders given (`--allow-folder`), each inside the vault and existing under `root`.
    pub fn new(root: &Path, folders: &[String]) -> Result<Scope, Error> {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
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
            let real = root
                .join(trimmed)
                .canonicalize()
                .map_err(|e| Error::invalid(format!("--allow-folder: `{f}`: {e}")))?;
            if !real.starts_with(&root) {
                return Err(Error::invalid(format!(
                    "--allow-folder: `{f}` is a link to a folder outside the vault; valid: a folder of the vault"
                )));
            }
            out.push((format!("{trimmed}/"), real));
        }
        out.sort();
        out.dedup();
        Ok(Scope {
            folders: out.iter().map(|(f, _)| f.clone()).collect(),
            real: out.into_iter().map(|(_, r)| r).collect(),
            root,
        })
    }

    pub fn is_whole_vault(&self) -> bool {
        self.folders.is_empty()
    }

    /// Whether `rel` is under one of the folders, as written and with symlinks followed
    /// (blocking for a scoped index: it reads the links on the way).
    pub fn allows(&self, rel: &str) -> bool {
        if self.folders.is_empty() {
            return true;
        }
        if !self.folders.iter().any(|f| rel.starts_with(f.as_str())) {
            return false;
        }
        let real = scholia_vault::confine::real_path(&self.root.join(rel));
        self.real.iter().any(|r| real.starts_with(r))
    }

    /// Whether the file at `rel` (symlinks followed) lies in one of the folders, whatever
    /// path names it: a folder linked into another shows the same files twice.
    pub fn holds_file(&self, rel: &str) -> bool {
        if self.folders.is_empty() {
            return true;
        }
        let real = scholia_vault::confine::real_path(&self.root.join(rel));
        self.real.iter().any(|r| real.starts_with(r))
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

    /// The folders this query may use: the request's own (a team server's token, see
    /// `scholia_base::ambient`), else the server's.
    pub fn scope(&self) -> Scope {
        if let Some(own) = scholia_base::ambient::get::<Scope>() {
            return own;
        }
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

    #[cfg(unix)]
    #[test]
    fn links_do_not_carry_a_folder_into_the_scope() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("Journal")).unwrap();
        std::fs::create_dir_all(root.join("Microbes")).unwrap();
        std::fs::write(root.join("Microbes/Yeast.md"), "y").unwrap();
        std::fs::write(root.join("Journal/Day.md"), "d").unwrap();
        std::os::unix::fs::symlink(root.join("Microbes"), root.join("Journal/ToMicrobes")).unwrap();
        std::os::unix::fs::symlink(root.join("Microbes/Yeast.md"), root.join("Journal/Yeast.md")).unwrap();
        std::os::unix::fs::symlink(root.join("Journal"), root.join("ToJournal")).unwrap();
        let s = Scope::new(&root, &["Journal".into()]).unwrap();
        assert!(s.allows("Journal/Day.md") && s.allows("Journal/New.md"));
        assert!(
            !s.allows("Journal/ToMicrobes/Yeast.md"),
            "a linked folder out of the scope"
        );
        assert!(!s.allows("Journal/ToMicrobes/New.md"), "a new note through the link");
        assert!(!s.allows("Journal/Yeast.md"), "a linked note out of the scope");
        assert!(!s.allows("ToJournal/Day.md"), "out of the scope as written");
        // A folder given by a link is the folder it names.
        let linked = Scope::new(&root, &["ToJournal".into()]).unwrap();
        assert!(linked.allows("ToJournal/Day.md"));
    }
}
