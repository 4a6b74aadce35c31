use super::*;

/// Builds a tree from `files` (paths relative to a temporary directory; a trailing `/` makes a
/// folder) and returns its canonical root.
fn tree(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for f in files {
        let p = root.join(f);
        match f.ends_with('/') {
            true => std::fs::create_dir_all(&p).unwrap(),
            false => {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, "x").unwrap();
            }
        }
    }
    (dir, root)
}

/// (editor root, note, home) relative to the tree → the vault found, relative, or the error.
fn check(files: &[&str], client: Option<&str>, note: Option<&str>, expected: &str) {
    let (_keep, t) = tree(files);
    let home = t.join("home");
    let abs = |r: &str| if r.is_empty() { t.clone() } else { t.join(r) };
    let client = client.map(abs);
    let note = note.map(abs);
    let got = match find(client.as_deref(), note.as_deref(), Some(&home)) {
        Ok(Found::Marked(r)) => format!("marked {}", rel(&t, &r)),
        Ok(Found::Unmarked { root, project }) => match project {
            Some(p) => format!("unmarked {} in project {}", rel(&t, &root), rel(&t, &p)),
            None => format!("unmarked {}", rel(&t, &root)),
        },
        Err(NoVault::NeedNote) => "need a note".into(),
        Err(NoVault::NotNotes { dir, why }) => format!("none: {} {why}", rel(&t, &dir)),
    };
    assert_eq!(got, expected, "client {client:?}, note {note:?}");
}

fn rel(t: &Path, p: &Path) -> String {
    let r = p.strip_prefix(t).unwrap().to_string_lossy().into_owned();
    if r.is_empty() { ".".into() } else { r }
}

const OBSIDIAN: &[&str] = &[
    "home/v/.obsidian/",
    "home/v/a.md",
    "home/v/Plugins/b.md",
    "home/v/Plugins/Deep/c.md",
];
/// example-vault in scholia's repository: no marker, inside a code project.
const REPO: &[&str] = &[
    "home/repo/Cargo.toml",
    "home/repo/README.md",
    "home/repo/docs/ARCHITECTURE.md",
    "home/repo/ev/Kombucha.md",
    "home/repo/ev/Reading list.txt",
    "home/repo/ev/Plugins/p.md",
];
/// obsidian-help: no marker, a top of language folders only.
const HELP: &[&str] = &[
    "home/h/en/Home.md",
    "home/h/en/Sub/b.md",
    "home/h/de/Start.md",
    "home/h/de/x.png",
];

#[test]
fn a_marker_above_the_note_or_the_editor_s_root_wins() {
    check(OBSIDIAN, None, Some("home/v/Plugins/Deep/c.md"), "marked home/v");
    check(OBSIDIAN, Some("home/v/Plugins"), None, "marked home/v");
    check(OBSIDIAN, Some("home"), Some("home/v/a.md"), "marked home/v");
}

#[test]
fn without_a_marker_the_highest_folder_of_notes_below_any_code_project() {
    // Neovim without a root, or with the repository as root: the notes folder, said to be in
    // a project.
    check(
        REPO,
        None,
        Some("home/repo/ev/Plugins/p.md"),
        "unmarked home/repo/ev in project home/repo",
    );
    check(
        REPO,
        Some("home/repo"),
        Some("home/repo/ev/Plugins/p.md"),
        "unmarked home/repo/ev in project home/repo",
    );
    // eglot making the note's sub-folder the project: climbs to the vault.
    check(
        REPO,
        Some("home/repo/ev/Plugins"),
        None,
        "unmarked home/repo/ev in project home/repo",
    );
    // The repository itself is never a vault of README files.
    check(REPO, Some("home/repo"), None, "need a note");
    check(
        REPO,
        None,
        Some("home/repo/README.md"),
        "none: home/repo it is a code project, whose Markdown files are documentation",
    );
}

#[test]
fn the_editor_s_root_stands_when_it_holds_the_note() {
    check(HELP, Some("home/h"), Some("home/h/en/Sub/b.md"), "unmarked home/h");
    check(HELP, Some("home/h"), None, "unmarked home/h");
    // Without it, the climb stops where folders stop holding notes.
    check(HELP, None, Some("home/h/en/Sub/b.md"), "unmarked home/h/en");
    // A root that does not hold the note is ignored.
    check(HELP, Some("home/h/de"), Some("home/h/en/Home.md"), "unmarked home/h/en");
    // So is a working directory of other files above the vault (Neovim without a root).
    let mut files = HELP.to_vec();
    files.push("home/out.log");
    files.push("home/work/run.log");
    check(&files, Some("home/work"), None, "need a note");
    files.push("home/work/h/en/c.md");
    check(
        &files,
        Some("home/work"),
        Some("home/work/h/en/c.md"),
        "unmarked home/work/h/en",
    );
}

#[test]
fn the_home_folder_and_the_root_are_never_vaults() {
    check(
        &["home/n.md", "home/v/a.md"],
        None,
        Some("home/n.md"),
        "none: home it is the home folder",
    );
    check(
        &["home/v/a.md", "home/n.md"],
        None,
        Some("home/v/a.md"),
        "unmarked home/v",
    );
    check(&["home/v/a.md"], Some("home"), None, "need a note");
    check(
        &["home/misc/a.md", "home/misc/b.pdf", "home/misc/c.pdf"],
        None,
        Some("home/misc/a.md"),
        "none: home/misc most of its files are not notes",
    );
}

#[test]
fn trees_of_projects_homes_and_system_folders_are_not_vaults() {
    // A folder of code repositories: each a project, none a vault.
    let repos = &[
        "home/code/a/Cargo.toml",
        "home/code/a/README.md",
        "home/code/b/meson.build",
        "home/code/b/README.md",
        "home/code/b/docs/x.md",
    ];
    check(repos, Some("home/code"), None, "need a note");
    check(
        repos,
        None,
        Some("home/code/b/README.md"),
        "none: home/code/b it is a code project, whose Markdown files are documentation",
    );
    // A home-like folder of folders (someone else's home, a backup of one).
    let homey = &[
        "home/old/.bashrc",
        "home/old/.config/",
        "home/old/Documents/a.md",
        "home/old/Downloads/x.zip",
        "home/old/Pictures/p.png",
    ];
    check(homey, Some("home/old"), None, "need a note");
    check(
        &["home/old/.bashrc", "home/old/.profile", "home/old/n.md"],
        None,
        Some("home/old/n.md"),
        "none: home/old it looks like a home folder (shell settings, .config)",
    );
    // Folders of other files: not a vault's sections.
    check(
        &[
            "home/mixed/pics/a.png",
            "home/mixed/pics/b.png",
            "home/mixed/notes/n.md",
        ],
        Some("home/mixed"),
        None,
        "need a note",
    );
    // An empty folder is a vault about to begin.
    check(&["home/new/"], Some("home/new"), None, "unmarked home/new");
    assert!(is_system(Path::new("/usr")) && is_system(Path::new("/usr/share/doc/x")));
    assert!(is_system(Path::new("/etc")) && !is_system(Path::new("/var/home/me/vault")));
    assert!(!is_system(Path::new("/home/me/vault")) && !is_system(Path::new("/srv/team-vault")));
}
