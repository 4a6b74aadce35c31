//! Finding the notes of a vault: `.md`, `.markdown`, `.txt` files, skipping `.git`,
//! `.obsidian`, `.trash`, `node_modules`, hidden files and whatever `.gitignore` / `.ignore`
//! exclude. Symlinks are followed only while they stay inside the vault.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{WalkBuilder, WalkState};

use super::paths::{has_note_extension, relative};

/// Directory names never descended into (hidden ones are skipped anyway).
pub const SKIP_DIRS: &[&str] = &[".git", ".obsidian", ".trash", "node_modules"];

/// A note file found on disk, with the stamp that tells whether it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteFile {
    /// Vault-relative path with `/` separators.
    pub rel: String,
    pub stamp: Stamp,
}

/// Modification time (ns since the epoch) and size: what start-up compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Stamp {
    pub mtime_ns: u64,
    pub size: u64,
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Stamp {
            mtime_ns,
            size: meta.len(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Scan {
    pub notes: Vec<NoteFile>,
    pub skipped: Vec<Skipped>,
    /// scholia's own temp files (`.scholia-*.tmp`) beside notes: left by a crash mid-write,
    /// or a write in progress.
    pub temp_files: Vec<PathBuf>,
}

/// Whether `name` is a temp file of `vault::write`.
pub fn is_temp_file(name: &str) -> bool {
    name.starts_with(".scholia-") && name.ends_with(".tmp")
}

fn skip_dir_name(name: &str) -> bool {
    name.starts_with('.') || SKIP_DIRS.contains(&name)
}

/// Walks `root` (canonical) with two threads.
pub fn scan(root: &Path) -> Scan {
    let out = Mutex::new(Scan::default());
    let escapes = std::sync::Arc::new(Mutex::new(Vec::new()));
    let escapes_seen = escapes.clone();
    let temps = std::sync::Arc::new(Mutex::new(Vec::new()));
    let temps_seen = temps.clone();
    let root_owned = root.to_path_buf();
    let mut builder = WalkBuilder::new(root);
    builder
        .follow_links(true)
        // Hidden entries are skipped below, after scholia's temp files are noted.
        .hidden(false)
        .git_global(false)
        .git_exclude(true)
        .git_ignore(true)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .threads(2)
        .filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            if entry.depth() > 0 && name.starts_with('.') {
                if is_temp_file(&name) && entry.file_type().is_some_and(|t| t.is_file()) {
                    scholia_base::lock(&temps_seen).push(entry.path().to_path_buf());
                }
                return false;
            }
            if entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir()) && SKIP_DIRS.contains(&&*name) {
                return false;
            }
            if entry.path_is_symlink() {
                let inside = entry.path().canonicalize().is_ok_and(|p| p.starts_with(&root_owned));
                if !inside {
                    let shown = relative(&root_owned, entry.path()).unwrap_or_default();
                    scholia_base::lock(&escapes_seen).push(Skipped {
                        path: shown,
                        reason: "symlink outside the vault".into(),
                    });
                }
                return inside;
            }
            true
        });
    builder.build_parallel().run(|| {
        let out = &out;
        Box::new(move |entry| {
            let entry = match entry {
                Ok(e) => e,
                Err(err) => {
                    let path = error_path(&err).map(|p| relative(root, &p).unwrap_or_else(|| p.display().to_string()));
                    scholia_base::lock(out).skipped.push(Skipped {
                        path: path.unwrap_or_default(),
                        reason: short_error(&err),
                    });
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) || !has_note_extension(entry.path()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(root, entry.path()) else {
                return WalkState::Continue;
            };
            match entry.metadata() {
                // No absolute path kept: `Vault::abs(rel)` is the same path, and a 100k vault's
                // copies of it were 10 MB of a cold build's peak.
                Ok(meta) => scholia_base::lock(out).notes.push(NoteFile {
                    rel,
                    stamp: Stamp::of(&meta),
                }),
                Err(err) => scholia_base::lock(out).skipped.push(Skipped {
                    path: rel,
                    reason: short_error(&err),
                }),
            }
            WalkState::Continue
        })
    });
    let mut scan = out.into_inner().unwrap();
    scan.skipped.append(&mut scholia_base::lock(&escapes));
    scan.temp_files.append(&mut scholia_base::lock(&temps));
    scan.notes.sort_by(|a, b| a.rel.cmp(&b.rel));
    scan.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    scan
}

/// The vault-relative path of every file under `root` (notes and attachments alike), hidden
/// and tool folders skipped and ignore files honoured as [`scan`] does.
pub fn files(root: &Path) -> Vec<String> {
    let walk = WalkBuilder::new(root)
        .follow_links(false)
        .hidden(true)
        .git_global(false)
        .git_ignore(true)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .filter_entry(|e| {
            !(e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && skip_dir_name(&e.file_name().to_string_lossy()))
        })
        .build();
    walk.flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| relative(root, e.path()))
        .collect()
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

fn short_error(err: &ignore::Error) -> String {
    match err {
        ignore::Error::Loop { .. } => "symlink loop".into(),
        ignore::Error::WithPath { err, .. } | ignore::Error::WithDepth { err, .. } => short_error(err),
        ignore::Error::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        ignore::Error::Io(e) if e.kind() == std::io::ErrorKind::NotFound => "vanished".into(),
        other => other.to_string(),
    }
}

/// Decides for single paths (from the file watcher) what [`scan`] decides for a whole walk.
/// Ignore files are read per directory and cached; `forget` drops the cache when one changes.
pub struct NoteFilter {
    root: PathBuf,
    cache: Mutex<HashMap<PathBuf, Option<Gitignore>>>,
}

impl NoteFilter {
    pub fn new(root: &Path) -> NoteFilter {
        NoteFilter {
            root: root.to_path_buf(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// `true` when `path` is an ignore file whose change invalidates the cache.
    pub fn is_ignore_file(path: &Path) -> bool {
        matches!(
            path.file_name().and_then(|n| n.to_str()),
            Some(".gitignore" | ".ignore")
        )
    }

    pub fn forget(&self) {
        scholia_base::lock(&self.cache).clear();
    }

    /// Whether `abs` is outside the root or under a skipped (hidden, `.git`, …) directory.
    pub fn in_skipped_dir(&self, abs: &Path) -> bool {
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return true;
        };
        let n = rel.components().count();
        rel.components()
            .take(n.saturating_sub(1))
            .any(|c| skip_dir_name(&c.as_os_str().to_string_lossy()))
    }

    /// Whether `abs` (inside the root) would be a note of the vault, judging only by its path
    /// (the file may no longer exist).
    pub fn is_note_path(&self, abs: &Path) -> bool {
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return false;
        };
        if !has_note_extension(abs) {
            return false;
        }
        let components: Vec<_> = rel.components().collect();
        if components
            .iter()
            .any(|c| skip_dir_name(&c.as_os_str().to_string_lossy()))
        {
            return false;
        }
        // Every directory from the root down to the file's may hold ignore rules.
        let mut dir = self.root.clone();
        let mut dirs = vec![dir.clone()];
        for c in &components[..components.len().saturating_sub(1)] {
            dir.push(c);
            dirs.push(dir.clone());
        }
        let mut cache = scholia_base::lock(&self.cache);
        for d in &dirs {
            let matcher = cache.entry(d.clone()).or_insert_with(|| load_ignore(d));
            if let Some(m) = matcher {
                let is_dir_check = |p: &Path| m.matched_path_or_any_parents(p, false);
                if is_dir_check(abs).is_ignore() {
                    return false;
                }
            }
        }
        true
    }
}

fn load_ignore(dir: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for name in [".gitignore", ".ignore"] {
        let p = dir.join(name);
        if p.is_file() {
            any = true;
            builder.add(p);
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let files = [
            "a.md",
            "b.markdown",
            "c.txt",
            "d.MD",
            "e.pdf",
            ".hidden.md",
            ".obsidian/x.md",
            ".git/y.md",
            ".trash/z.md",
            "node_modules/m.md",
            "sub/ok.md",
            "sub/ignored.md",
            "build/out.md",
            "deep/n/x.md",
        ];
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("sub/.ignore"), "ignored.md\n").unwrap();
        let s = scan(&root);
        let got: Vec<_> = s.notes.iter().map(|n| n.rel.as_str()).collect();
        assert_eq!(
            got,
            vec!["a.md", "b.markdown", "c.txt", "d.MD", "deep/n/x.md", "sub/ok.md"]
        );

        let filter = NoteFilter::new(&root);
        for f in files {
            let expected = got.contains(&f);
            assert_eq!(filter.is_note_path(&root.join(f)), expected, "{f}");
        }
        assert!(filter.is_note_path(&root.join("new/never-seen.md")));
        assert!(!filter.is_note_path(&root.join("build/new.md")));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_loops_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("vault");
        std::fs::create_dir_all(root.join("real")).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("real/n.md"), "x").unwrap();
        std::fs::write(dir.path().join("outside.md"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("real/loop")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), root.join("escape.md")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("escape-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("real/n.md"), root.join("alias.md")).unwrap();
        let s = scan(&root);
        let got: Vec<_> = s.notes.iter().map(|n| n.rel.as_str()).collect();
        assert_eq!(got, vec!["alias.md", "real/n.md"]);
        assert!(s.skipped.iter().any(|k| k.reason == "symlink loop"), "{:?}", s.skipped);
        assert!(
            s.skipped
                .iter()
                .any(|k| k.path == "escape.md" && k.reason == "symlink outside the vault"),
            "{:?}",
            s.skipped
        );
        assert!(s.skipped.iter().any(|k| k.path == "escape-dir"), "{:?}", s.skipped);
    }
}
