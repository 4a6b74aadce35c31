//! Safe resolution of user-supplied note paths: inside the vault, no `..`, no symlink escape,
//! only note extensions.

use std::path::{Component, Path, PathBuf};

/// Extensions of files scholia treats as notes (compared case-insensitively).
pub const NOTE_EXTENSIONS: &[&str] = &["md", "markdown", "txt"];

pub fn has_note_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| NOTE_EXTENSIONS.iter().any(|n| e.eq_ignore_ascii_case(n)))
}

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("path: empty; give a note path relative to the vault, e.g. `notes/idea.md`")]
    Empty,
    #[error("path `{0}`: `..` is not allowed; give a path inside the vault")]
    ParentComponent(String),
    /// The vault's root is not named: a remote client has no business knowing it.
    #[error("path `{0}`: outside the vault; give a path relative to the vault, e.g. `notes/idea.md`")]
    OutsideVault(String),
    #[error("path `{0}`: no such note in the vault")]
    NotFound(String),
    #[error("path `{0}`: not a regular file")]
    NotAFile(String),
    #[error("path `{0}`: is a directory; give a note inside it, e.g. `{0}/note.md`")]
    IsDirectory(String),
    #[error("path `{path}`: {files} are not notes; {}", match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => "valid extensions: .md, .markdown, .txt".to_string(),
    })]
    BadExtension {
        path: String,
        files: String,
        /// A note of that name with a note extension, when one exists.
        suggestion: Option<String>,
    },
}

/// Resolves `input` (absolute, relative to the vault root, or relative to `cwd` when that is
/// inside the vault) to the canonical path of an existing note inside `root`.
///
/// `root` must already be canonical.
pub fn resolve_note(root: &Path, input: &str, cwd: Option<&Path>) -> Result<PathBuf, PathError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let given = Path::new(trimmed);
    if given.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(PathError::ParentComponent(trimmed.to_string()));
    }
    let candidate = if given.is_absolute() {
        given.to_path_buf()
    } else {
        let in_vault = root.join(given);
        match cwd.map(|c| c.join(given)) {
            Some(from_cwd) if !in_vault.exists() && from_cwd.exists() => from_cwd,
            _ => in_vault,
        }
    };
    if candidate.is_dir() {
        return Err(PathError::IsDirectory(trimmed.trim_end_matches('/').to_string()));
    }
    if let Err(PathError::BadExtension { path, files, .. }) = check_extension(given, trimmed) {
        // `Kombucha` for `Kombucha.md`: say which note was meant.
        let suggestion = NOTE_EXTENSIONS
            .iter()
            .map(|ext| format!("{trimmed}.{ext}"))
            .find(|name| {
                candidate
                    .with_file_name(Path::new(name).file_name().unwrap_or_default())
                    .is_file()
            });
        return Err(PathError::BadExtension {
            path,
            files,
            suggestion,
        });
    }
    let canonical = match candidate.canonicalize() {
        Ok(p) => p,
        Err(_) if candidate.starts_with(root) || !given.is_absolute() => {
            return Err(PathError::NotFound(trimmed.to_string()));
        }
        Err(_) => return Err(outside(trimmed)),
    };
    if !canonical.starts_with(root) {
        return Err(outside(trimmed));
    }
    // The link target, not only the link, must be a note.
    check_extension(&canonical, trimmed)?;
    if !canonical.is_file() {
        return Err(PathError::NotAFile(trimmed.to_string()));
    }
    Ok(canonical)
}

fn outside(input: &str) -> PathError {
    PathError::OutsideVault(input.to_string())
}

fn check_extension(path: &Path, input: &str) -> Result<(), PathError> {
    if has_note_extension(path) {
        return Ok(());
    }
    let files = match path.extension() {
        Some(e) => format!("`.{}` files", e.to_string_lossy()),
        None => "files without an extension".to_string(),
    };
    Err(PathError::BadExtension {
        path: input.to_string(),
        files,
        suggestion: None,
    })
}

/// The vault-relative path of `abs` with `/` separators, or `None` when outside `root`.
pub fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect();
    Some(parts.join("/"))
}

impl scholia_base::Coded for PathError {
    fn code(&self) -> &'static str {
        match self {
            PathError::NotFound(_) => "NOTE_NOT_FOUND",
            _ => "INVALID_PATH",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            // A note that is not there could not be read: a local file problem.
            PathError::NotFound(_) => scholia_base::ErrorKind::Io,
            _ => scholia_base::ErrorKind::InvalidInput,
        }
    }
}

/// Extensions of the image files notes embed (`![[icon.svg#icon]]`, `![[photo.png]]`).
const IMAGE_EXTENSIONS: &[&str] = &[".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".bmp"];

/// Whether `target` (a link's target, a `#part` after it allowed) names an image file.
pub fn is_image(target: &str) -> bool {
    let file = target.split('#').next().unwrap_or(target).to_ascii_lowercase();
    IMAGE_EXTENSIONS.iter().any(|e| file.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.md"), "x").unwrap();
        std::fs::write(root.join("b.pdf"), "x").unwrap();
        let outside_dir = tempfile::tempdir().unwrap();
        std::fs::write(outside_dir.path().join("secret.md"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside_dir.path().join("secret.md"), root.join("link.md")).unwrap();

        let ok = |input: &str| resolve_note(&root, input, None).map(|p| relative(&root, &p).unwrap());
        assert_eq!(ok("sub/a.md").unwrap(), "sub/a.md");
        assert_eq!(ok(&root.join("sub/a.md").display().to_string()).unwrap(), "sub/a.md");
        assert!(matches!(ok(""), Err(PathError::Empty)));
        assert!(matches!(ok("../x.md"), Err(PathError::ParentComponent(_))));
        assert!(matches!(ok("sub/../sub/a.md"), Err(PathError::ParentComponent(_))));
        assert!(matches!(ok("b.pdf"), Err(PathError::BadExtension { .. })));
        assert_eq!(
            ok("/etc/passwd").unwrap_err().to_string(),
            "path `/etc/passwd`: files without an extension are not notes; valid extensions: .md, .markdown, .txt"
        );
        assert!(matches!(ok("missing.md"), Err(PathError::NotFound(_))));
        assert!(matches!(ok("sub.md"), Err(PathError::NotFound(_))));
        #[cfg(unix)]
        assert!(matches!(ok("link.md"), Err(PathError::OutsideVault(..))));
        let abs_outside = outside_dir.path().join("secret.md").display().to_string();
        assert!(matches!(ok(&abs_outside), Err(PathError::OutsideVault(..))));
        assert_eq!(
            resolve_note(&root, "a.md", Some(&root.join("sub")))
                .map(|p| relative(&root, &p).unwrap())
                .unwrap(),
            "sub/a.md"
        );
        let err = ok("b.pdf").unwrap_err().to_string();
        assert_eq!(
            err,
            "path `b.pdf`: `.pdf` files are not notes; valid extensions: .md, .markdown, .txt"
        );
    }
}
