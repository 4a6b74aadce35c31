//! The one gate for files scholia creates (saved reports, whole answers too long for a note):
//! a [`ConfinedDir`] can only be made inside the places scholia may write — the vault, the
//! data directory — so a request cannot name a directory elsewhere (`/etc`, `../../x`, a
//! symlink out of the vault). Files are created atomically (temp file + rename), never over an
//! existing one.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfineError {
    #[error("{field} `{given}`: `..` is not allowed; give a folder inside the vault, e.g. `research_reports`")]
    Parent { field: &'static str, given: String },
    #[error(
        "{field} `{given}`: outside the vault and scholia's data directory; give a folder inside the vault, e.g. `research_reports`"
    )]
    Outside { field: &'static str, given: String },
    #[error("{path}: could not create it: {message}")]
    Io { path: String, message: String },
    #[error("{path}: a file of that name exists; nothing was written")]
    Exists { path: String },
}

/// A directory inside one of the allowed roots (it may not exist yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedDir(PathBuf);

impl ConfinedDir {
    /// `given` (`field` names it in errors) relative to `base`, or absolute; it must lie inside
    /// one of `roots` once symlinks are followed. Blocking (canonicalises).
    pub fn new(field: &'static str, given: &str, base: &Path, roots: &[&Path]) -> Result<ConfinedDir, ConfineError> {
        let path = Path::new(given.trim());
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(ConfineError::Parent {
                field,
                given: given.into(),
            });
        }
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            base.join(path)
        };
        let real = real_path(&joined);
        let inside = roots.iter().any(|r| {
            let root = r.canonicalize().unwrap_or_else(|_| r.to_path_buf());
            real.starts_with(&root)
        });
        if !inside {
            return Err(ConfineError::Outside {
                field,
                given: given.into(),
            });
        }
        Ok(ConfinedDir(real))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, sub: &str) -> Result<ConfinedDir, ConfineError> {
        let root = self.0.clone();
        ConfinedDir::new("folder", sub, &root, &[&root])
    }

    /// Creates `name` in this directory (and the directory) with `text`, atomically; never
    /// replaces an existing file. Returns the file's path. Blocking.
    pub fn create(&self, name: &str, text: &str) -> Result<PathBuf, ConfineError> {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(ConfineError::Parent {
                field: "file name",
                given: name.into(),
            });
        }
        let io = |path: &Path, e: std::io::Error| ConfineError::Io {
            path: path.display().to_string(),
            message: match e.raw_os_error() {
                Some(28) => format!("the disk is full ({} bytes needed)", text.len()),
                _ => e.to_string(),
            },
        };
        std::fs::create_dir_all(&self.0).map_err(|e| io(&self.0, e))?;
        // A symlink planted after the check could point out: check the real directory again.
        let real = self.0.canonicalize().map_err(|e| io(&self.0, e))?;
        if real != self.0 {
            return Err(ConfineError::Outside {
                field: "folder",
                given: self.0.display().to_string(),
            });
        }
        let path = self.0.join(name);
        let mut tmp = tempfile::Builder::new()
            .prefix(".scholia-")
            .suffix(".tmp")
            .tempfile_in(&self.0)
            .map_err(|e| io(&self.0, e))?;
        tmp.write_all(text.as_bytes()).map_err(|e| io(&path, e))?;
        tmp.as_file().sync_all().map_err(|e| io(&path, e))?;
        tmp.persist_noclobber(&path).map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => ConfineError::Exists {
                path: path.display().to_string(),
            },
            _ => io(&path, e.error),
        })?;
        Ok(path)
    }
}

/// `path` with symlinks followed as far as it exists; the part that does not exist yet is
/// appended as written.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut real = existing.canonicalize().unwrap_or(existing);
    for name in tail.into_iter().rev() {
        real.push(name);
    }
    real
}

impl scholia_base::Coded for ConfineError {
    fn code(&self) -> &'static str {
        match self {
            ConfineError::Parent { .. } | ConfineError::Outside { .. } => "INVALID_PATH",
            ConfineError::Io { .. } | ConfineError::Exists { .. } => "WRITE_FAILED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        use scholia_base::ErrorKind;
        match self {
            ConfineError::Parent { .. } | ConfineError::Outside { .. } => ErrorKind::InvalidInput,
            ConfineError::Io { .. } => ErrorKind::Io,
            ConfineError::Exists { .. } => ErrorKind::Conflict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inside_the_roots() {
        let vault = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let roots = [vault.path(), data.path()];
        let new = |given: &str| ConfinedDir::new("output_dir", given, vault.path(), &roots);
        assert!(new("research_reports").is_ok());
        assert!(new("").is_ok());
        assert!(new(&data.path().join("reports").display().to_string()).is_ok());
        assert_eq!(
            new("../../x").unwrap_err().to_string(),
            "output_dir `../../x`: `..` is not allowed; give a folder inside the vault, e.g. `research_reports`"
        );
        assert!(matches!(new("/etc"), Err(ConfineError::Outside { .. })));
        assert!(matches!(
            new(&elsewhere.path().display().to_string()),
            Err(ConfineError::Outside { .. })
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(elsewhere.path(), vault.path().join("out")).unwrap();
            assert!(matches!(new("out/reports"), Err(ConfineError::Outside { .. })));
        }
        assert!(std::fs::read_dir(elsewhere.path()).unwrap().next().is_none());
    }

    #[test]
    fn creates_atomically_and_never_over_a_file() {
        let vault = tempfile::tempdir().unwrap();
        let dir = ConfinedDir::new("output_dir", "a/b", vault.path(), &[vault.path()]).unwrap();
        let path = dir.create("r.md", "text").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "text");
        assert!(matches!(dir.create("r.md", "other"), Err(ConfineError::Exists { .. })));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "text");
        assert!(dir.create("../x.md", "t").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("r.md")]);
    }
}
