//! Which folder is the vault when nobody said (an editor without a root, or one that made a
//! note's own sub-folder or a code repository its root): the nearest folder marked as a vault
//! (`.obsidian`, `.scholia.toml`) above the note or the editor's root; else the highest folder
//! of notes around the note. Never a code project, the home folder or `/`: a repository's
//! README files are not a vault.

use std::path::{Path, PathBuf};

/// Files or folders that mark a vault.
pub const MARKERS: &[&str] = &[".obsidian", ".scholia.toml"];

/// Files that make a folder a code project (its Markdown is documentation, not notes).
const PROJECT_FILES: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "CMakeLists.txt",
    "Makefile",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "deno.json",
    "meson.build",
    "configure.ac",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
    "WORKSPACE.bazel",
    "MODULE.bazel",
    "build.sbt",
    "build.zig",
    "stack.yaml",
    "Package.swift",
    "pubspec.yaml",
    "setup.cfg",
    "Pipfile",
    "tsconfig.json",
    "flake.nix",
    "shard.yml",
    "dune-project",
    "rebar.config",
    "project.clj",
    "deps.edn",
    "SConstruct",
];

/// Top folders of an operating system: documentation under them is not a vault.
const SYSTEM: &[&str] = &[
    "usr",
    "etc",
    "var",
    "bin",
    "sbin",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "boot",
    "dev",
    "proc",
    "sys",
    "run",
    "snap",
    "nix",
    "System",
    "Library",
    "Applications",
    "private",
    "Windows",
    "Program Files",
    "Program Files (x86)",
    "ProgramData",
];

/// What a home folder holds and a vault does not.
const HOME_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".config",
    ".cache",
    ".ssh",
];

/// How far up a search goes, and how many entries of a folder are looked at.
const MAX_LEVELS: usize = 40;
const MAX_ENTRIES: usize = 4_000;

/// The vault found, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A folder holding a marker.
    Marked(PathBuf),
    /// No marker: the highest folder of notes around the note (or the editor's root).
    /// `project` is the code project it sits in, if any.
    Unmarked { root: PathBuf, project: Option<PathBuf> },
}

impl Found {
    pub fn root(&self) -> &Path {
        match self {
            Found::Marked(r) | Found::Unmarked { root: r, .. } => r,
        }
    }
}

/// Why there is no vault yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoVault {
    /// Nothing to start from: wait for a note to be opened.
    #[error("no vault yet: open a note of the vault")]
    NeedNote,
    #[error(
        "no vault for `{}`: {why}; open a note inside your vault, create `.scholia.toml` in the vault's folder, or set the `vault` setting",
        dir.display()
    )]
    NotNotes { dir: PathBuf, why: &'static str },
}

/// Decides the vault from the editor's root (if any) and the note it opened (if any).
/// `home` is never a vault nor climbed past.
pub fn find(client_root: Option<&Path>, note: Option<&Path>, home: Option<&Path>) -> Result<Found, NoVault> {
    let note_dir = note.and_then(Path::parent);
    // A marker above the note, then above the editor's root.
    for start in [note_dir, client_root].into_iter().flatten() {
        if let Some(marked) = marked_ancestor(start, home) {
            return Ok(Found::Marked(marked));
        }
    }
    // The editor's root stands when it holds the note and is a folder of notes, or of folders
    // only (a vault whose top holds only folders); not a code project, the home folder, `/`,
    // or a folder of other files (an editor's working directory).
    let client = client_root.filter(|r| {
        note_dir.is_none_or(|d| d.starts_with(r))
            && match not_notes(r, home) {
                None => true,
                Some(why) => {
                    why == HOLDS_NO_NOTES
                        && visible_files(r).is_some_and(|(_, others)| others == 0)
                        && folder_of_note_folders(r)
                }
            }
    });
    let Some(start) = note_dir.or(client) else {
        return Err(NoVault::NeedNote);
    };
    if let Some(why) = not_notes(start, home).filter(|_| client.is_none()) {
        return Err(NoVault::NotNotes {
            dir: start.to_path_buf(),
            why,
        });
    }
    let mut root = start.to_path_buf();
    for _ in 0..MAX_LEVELS {
        match root.parent() {
            Some(p) if is_notes_folder(p, home) => root = p.to_path_buf(),
            _ => break,
        }
    }
    // The editor's root above the climb (e.g. a vault whose top holds only folders) wins.
    if let Some(c) = client
        && root.starts_with(c)
    {
        root = c.to_path_buf();
    }
    let project = root
        .ancestors()
        .skip(1)
        .take(MAX_LEVELS)
        .find(|a| is_project(a))
        .map(Path::to_path_buf);
    Ok(Found::Unmarked { root, project })
}

fn marked_ancestor(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    start
        .ancestors()
        .take(MAX_LEVELS)
        .take_while(|a| Some(*a) != home && a.parent().is_some())
        .find(|a| MARKERS.iter().any(|m| a.join(m).exists()))
        .map(Path::to_path_buf)
}

fn is_project(dir: &Path) -> bool {
    PROJECT_FILES.iter().any(|f| dir.join(f).is_file())
}

/// A folder of the operating system (`/usr`, `/etc`, `C:\Windows` …) or under one (homes under
/// `/var/home` aside).
fn is_system(dir: &Path) -> bool {
    let mut parts = dir.components().filter_map(|c| match c {
        std::path::Component::Normal(n) => n.to_str(),
        _ => None,
    });
    match (parts.next(), parts.next()) {
        // Homes (Fedora's atomic desktops) and temporary folders (macOS's).
        (Some("var"), Some("home" | "folders" | "tmp")) | (Some("private"), Some("var" | "tmp")) => false,
        (Some(top), _) => SYSTEM.contains(&top),
        (None, _) => false,
    }
}

/// A home folder by what it holds (shell settings, `.config`, `.ssh`), whoever's it is.
fn is_home_like(dir: &Path) -> bool {
    HOME_FILES.iter().filter(|f| dir.join(f).exists()).count() >= 2
}

/// A folder of folders only, most of them folders of notes: a vault whose top holds its
/// sections (or an empty folder: a vault about to begin). Not a folder of code repositories,
/// nor of homes, nor of folders of other files.
fn folder_of_note_folders(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let (mut with_notes, mut without) = (0usize, 0usize);
    for e in entries.flatten().take(MAX_ENTRIES) {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let sub = e.path();
        if is_project(&sub) || is_home_like(&sub) || sub.join(".git").exists() && !holds_notes(&sub) {
            return false;
        }
        match holds_notes(&sub) {
            true => with_notes += 1,
            false => without += 1,
        }
    }
    with_notes > without || with_notes + without == 0
}

/// Whether `dir` holds notes, directly or in one of its folders (one level down).
fn holds_notes(dir: &Path) -> bool {
    if visible_files(dir).is_some_and(|(notes, others)| notes > 0 && notes >= others) {
        return true;
    }
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .take(200)
        .any(|e| {
            !e.file_name().to_string_lossy().starts_with('.')
                && e.file_type().is_ok_and(|t| t.is_dir())
                && visible_files(&e.path()).is_some_and(|(notes, others)| notes > 0 && notes >= others)
        })
}

fn is_notes_folder(dir: &Path, home: Option<&Path>) -> bool {
    not_notes(dir, home).is_none()
}

/// Why `dir` is not a folder of notes, if it is not: the home folder, `/`, a code project,
/// or a folder whose visible files are mostly not notes.
fn not_notes(dir: &Path, home: Option<&Path>) -> Option<&'static str> {
    if Some(dir) == home {
        return Some("it is the home folder");
    }
    if dir.parent().is_none() {
        return Some("it is the file system's root");
    }
    if is_system(dir) {
        return Some("it is a folder of the operating system, whose Markdown files are documentation");
    }
    if is_home_like(dir) {
        return Some("it looks like a home folder (shell settings, .config)");
    }
    if is_project(dir) {
        return Some("it is a code project, whose Markdown files are documentation");
    }
    let Some((notes, others)) = visible_files(dir) else {
        return Some("it cannot be read");
    };
    match (notes, others) {
        (0, _) => Some(HOLDS_NO_NOTES),
        (n, o) if n < o => Some("most of its files are not notes"),
        _ => None,
    }
}

const HOLDS_NO_NOTES: &str = "it holds no notes";

/// How many Markdown notes and other files `dir` holds directly (hidden ones left out).
fn visible_files(dir: &Path) -> Option<(usize, usize)> {
    let (mut notes, mut others) = (0usize, 0usize);
    for e in std::fs::read_dir(dir).ok()?.flatten().take(MAX_ENTRIES) {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        // Markdown only: plain-text notes exist, but stray `.txt` files (logs, exports) are
        // too common to make a folder a vault.
        let markdown = Path::new(&name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
        match markdown {
            true => notes += 1,
            false => others += 1,
        }
    }
    Some((notes, others))
}

#[cfg(test)]
mod tests;
