//! The names a note or folder may take, checked against the directory itself, not an index:
//! a name that breaks wikilinks (`# | [ ] ^`, a line break, NUL …) is refused, and so is a
//! name that only differs from an existing file's in case or Unicode normalization (`Kombucha.md`
//! beside `kombucha.md`, an NFD twin of an NFC name): on a case-insensitive disk, or once the
//! vault is synced to one, they are the same file.

use std::path::Path;

/// Characters a wikilink cannot carry in a note's or folder's name (and those that no
/// file system of a synced vault accepts).
pub const NOT_IN_NAMES: &[char] = &[
    '[', ']', '#', '^', '|', '\\', ':', '*', '"', '<', '>', '?', '\n', '\r', '\0',
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error(
        "{field}: `{name}` holds {chars}, which links cannot name; use letters, digits, spaces and - _ . , ( ) instead"
    )]
    BadChars {
        field: &'static str,
        name: String,
        chars: String,
    },
    #[error("{field}: `{name}` already exists; choose another name")]
    Exists { field: &'static str, name: String },
    #[error(
        "{field}: `{name}` already exists as `{existing}` (names that differ only in case or accents are one file on many disks); choose another name"
    )]
    Twin {
        field: &'static str,
        name: String,
        existing: String,
    },
}

impl scholia_base::Coded for NameError {
    fn code(&self) -> &'static str {
        match self {
            NameError::BadChars { .. } => "INVALID_PATH",
            NameError::Twin { .. } | NameError::Exists { .. } => "CONFLICT",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            NameError::BadChars { .. } => scholia_base::ErrorKind::InvalidInput,
            NameError::Twin { .. } | NameError::Exists { .. } => scholia_base::ErrorKind::Conflict,
        }
    }
}

/// Refuses a vault path (`Folder/Note.md`) any of whose parts holds a character of
/// [`NOT_IN_NAMES`] or a control character.
pub fn check_path(field: &'static str, rel: &str) -> Result<(), NameError> {
    let mut found: Vec<String> = Vec::new();
    for c in rel.chars() {
        let bad = NOT_IN_NAMES.contains(&c) || c.is_control();
        let shown = format!("`{}`", c.escape_default());
        if bad && !found.contains(&shown) {
            found.push(shown);
        }
    }
    match found.is_empty() {
        true => Ok(()),
        false => Err(NameError::BadChars {
            field,
            name: rel.escape_debug().to_string(),
            chars: found.join(" "),
        }),
    }
}

/// A name as disks that fold case and normalization see it: NFC, then lower case.
pub fn fold(name: &str) -> String {
    let nfc = icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(name);
    nfc.to_lowercase()
}

/// Whether two names are one on a case-insensitive, normalization-insensitive disk.
pub fn same_name(a: &str, b: &str) -> bool {
    a == b || fold(a) == fold(b)
}

/// The entry of `dir` (any file or folder, ignored or not, readable or not) whose name is
/// `name` up to case and normalization, other than `except` (the file being renamed: the same
/// file, compared by identity). `Ok(None)` when `dir` does not exist.
pub fn twin_in(dir: &Path, name: &str, except: Option<&Path>) -> std::io::Result<Option<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let wanted = fold(name);
    let except = except.and_then(identity);
    for entry in entries {
        let entry = entry?;
        let found = entry.file_name().to_string_lossy().into_owned();
        if found != name && fold(&found) != wanted {
            continue;
        }
        if except.is_some() && identity(&entry.path()) == except {
            continue;
        }
        return Ok(Some(found));
    }
    Ok(None)
}

/// Refuses `rel` (a new path under `root`) when one of its parts has a twin in its folder: a
/// file or folder whose name differs only in case or normalization, or the exact name already
/// taken (`except`, the file being moved, aside). Folders that exist by their exact name are
/// walked through.
pub fn check_free(field: &'static str, root: &Path, rel: &str, except: Option<&Path>) -> Result<(), NameError> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut dir = root.to_path_buf();
    let mut shown = String::new();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let exact = dir.join(part);
        if !last && exact.is_dir() && !exact.is_symlink() {
            // The folder itself: still refuse a twin folder beside it.
            if let Ok(Some(twin)) = twin_in(&dir, part, Some(&exact)) {
                return Err(twin_error(field, rel, &shown, &twin));
            }
            shown.push_str(part);
            shown.push('/');
            dir = exact;
            continue;
        }
        match twin_in(&dir, part, if last { except } else { None }) {
            Ok(Some(twin)) => return Err(twin_error(field, rel, &shown, &twin)),
            Ok(None) => {}
            // An unreadable folder: the write itself will say so.
            Err(_) => {}
        }
        if !last {
            // A new folder: nothing below it exists.
            return Ok(());
        }
    }
    Ok(())
}

fn twin_error(field: &'static str, rel: &str, folder: &str, twin: &str) -> NameError {
    let existing = format!("{folder}{twin}");
    if existing == rel {
        return NameError::Exists {
            field,
            name: rel.to_string(),
        };
    }
    NameError::Twin {
        field,
        name: rel.to_string(),
        existing: format!("{folder}{twin}"),
    }
}

/// The identity of a file (device and inode), following no link.
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<std::path::PathBuf> {
    path.canonicalize().ok()
}

/// Whether two paths are one file (a case-only rename on a case-insensitive disk).
pub fn same_file(a: &Path, b: &Path) -> bool {
    identity(a).is_some() && identity(a) == identity(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_break_links() {
        let check = |name: &str, bad: Option<&str>| match (check_path("to", name), bad) {
            (Ok(()), None) => {}
            (Err(NameError::BadChars { chars, .. }), Some(want)) => assert_eq!(chars, want, "{name:?}"),
            (got, want) => panic!("{name:?}: {got:?} vs {want:?}"),
        };
        check("Kombucha.md", None);
        check("Notes/Über café (2).md", None);
        check("Kom#bucha.md", Some("`#`"));
        check("Kom|bucha.md", Some("`|`"));
        check("Kom]]bucha.md", Some("`]`"));
        check("a^b.md", Some("`^`"));
        check("a[b.md", Some("`[`"));
        check("a\nb.md", Some("`\\n`"));
        check("a\0b.md", Some("`\\u{0}`"));
        check("Fold#er/Note.md", Some("`#`"));
        check("a\u{7}b.md", Some("`\\u{7}`"));
    }

    #[test]
    fn twins_by_case_and_normalization() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("Kombucha.md"), "a").unwrap();
        std::fs::write(d.join("Caf\u{e9}.md"), "nfc").unwrap();
        std::fs::create_dir(d.join("Journal")).unwrap();
        assert_eq!(twin_in(d, "kombucha.md", None).unwrap().as_deref(), Some("Kombucha.md"));
        assert_eq!(twin_in(d, "KOMBUCHA.MD", None).unwrap().as_deref(), Some("Kombucha.md"));
        // NFD é is e + combining acute.
        assert_eq!(
            twin_in(d, "Cafe\u{301}.md", None).unwrap().as_deref(),
            Some("Caf\u{e9}.md")
        );
        assert_eq!(twin_in(d, "Other.md", None).unwrap(), None);
        // The file being renamed is not its own twin.
        assert_eq!(twin_in(d, "kombucha.md", Some(&d.join("Kombucha.md"))).unwrap(), None);
        assert_eq!(twin_in(&d.join("missing"), "x.md", None).unwrap(), None);

        assert!(check_free("to", d, "New.md", None).is_ok());
        assert!(check_free("to", d, "Journal/New.md", None).is_ok());
        assert!(check_free("to", d, "Brand/new/folder/N.md", None).is_ok());
        let twin = check_free("to", d, "journal/New.md", None).unwrap_err();
        assert_eq!(
            twin.to_string(),
            "to: `journal/New.md` already exists as `Journal` (names that differ only in case or accents are one file on many disks); choose another name"
        );
        assert!(check_free("to", d, "kombucha.md", None).is_err());
        assert_eq!(
            check_free("to", d, "Kombucha.md", None).unwrap_err().to_string(),
            "to: `Kombucha.md` already exists; choose another name"
        );
        assert!(check_free("to", d, "kombucha.md", Some(&d.join("Kombucha.md"))).is_ok());
    }
}
