use std::cell::Cell;
use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// Every file under `root` (hidden ones too: a change leaves no temp file, backup or journal)
/// with its bytes, and every folder.
fn state(root: &Path) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    let mut files = BTreeMap::new();
    let mut dirs = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                dirs.push(rel);
                todo.push(e.path());
            } else {
                files.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    dirs.sort();
    (files, dirs)
}

fn rewrite(root: &Path, rel: &str, new: &str) -> Rewrite {
    Rewrite {
        shown: rel.into(),
        path: root.join(rel),
        old: std::fs::read_to_string(root.join(rel)).unwrap(),
        new: new.into(),
    }
}

fn moving(root: &Path, from: &str, to: &str) -> Move {
    Move {
        shown_from: from.into(),
        shown_to: to.into(),
        from: root.join(from),
        to: root.join(to),
    }
}

fn vault() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("Notes")).unwrap();
    std::fs::write(root.join("Kombucha.md"), "# Kombucha\n\nSee [[Tea]].\n").unwrap();
    std::fs::write(root.join("Notes/Tea.md"), "# Tea\n").unwrap();
    std::fs::write(root.join("Notes/Linker.md"), "[[Kombucha]] and [[Kombucha#Brew]]\n").unwrap();
    (dir, root)
}

#[test]
fn a_move_with_its_rewrites_is_made_whole() {
    let (_d, root) = vault();
    let change = Change {
        rewrites: vec![rewrite(&root, "Notes/Linker.md", "[[Brew]] and [[Brew#Brew]]\n")],
        moves: vec![moving(&root, "Kombucha.md", "Drinks/Brew.md")],
    };
    change.apply(&root).unwrap();
    let (files, dirs) = state(&root);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["Drinks/Brew.md", "Notes/Linker.md", "Notes/Tea.md"]
    );
    assert_eq!(files["Notes/Linker.md"], b"[[Brew]] and [[Brew#Brew]]\n");
    assert_eq!(dirs, ["Drinks", "Notes"]);
}

#[test]
fn every_failure_point_leaves_the_vault_as_it_was() {
    let plan = |root: &Path| Change {
        rewrites: vec![
            rewrite(root, "Notes/Linker.md", "new linker\n"),
            rewrite(root, "Kombucha.md", "new self\n"),
        ],
        moves: vec![moving(root, "Kombucha.md", "Deep/Er/Brew.md")],
    };
    // Journal, 2 × (temp, backup), 2 replaces, 1 move: 8 steps.
    fails_whole(plan, 8);
}

/// `plan`, failing at each of its `steps` in turn, says so and leaves the vault as it was.
fn fails_whole(plan: impl Fn(&Path) -> Change, steps: usize) {
    for at in 0..steps {
        let (_d, root) = vault();
        let before = state(&root);
        let faults = FailAt::new(Some(at), false);
        let err = plan(&root).apply_with(&root, &faults).unwrap_err();
        assert!(err.to_string().contains("the disk is full"), "{at}: {err}");
        assert!(err.to_string().ends_with("nothing was changed"), "{at}: {err}");
        assert_eq!(state(&root), before, "step {at}");
    }
}

#[test]
fn a_process_killed_part_way_is_rolled_back_at_the_next_open() {
    for at in 0..8 {
        let (_d, root) = vault();
        let before = state(&root);
        let change = Change {
            rewrites: vec![
                rewrite(&root, "Notes/Linker.md", "new linker\n"),
                rewrite(&root, "Kombucha.md", "new self\n"),
            ],
            moves: vec![moving(&root, "Kombucha.md", "Deep/Er/Brew.md")],
        };
        let faults = FailAt::new(Some(at), true);
        let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| change.apply_with(&root, &faults)));
        assert!(died.is_err());
        let recovered = recover(&root);
        assert_eq!(recovered.finished, 0, "{at}");
        assert_eq!(recovered.rolled_back, usize::from(at > 0), "{at}");
        assert_eq!(state(&root), before, "killed at step {at}");
    }
}

#[test]
fn a_live_change_is_not_recovered_by_another() {
    let (_d, root) = vault();
    struct Recover<'a>(&'a Path, Cell<Option<Recovered>>);
    impl Faults for Recover<'_> {
        fn before(&self, op: Op<'_>) -> std::io::Result<()> {
            if matches!(op, Op::Move(_)) {
                self.1.set(Some(recover(self.0)));
            }
            Ok(())
        }
    }
    let faults = Recover(&root, Cell::new(None));
    Change {
        rewrites: vec![rewrite(&root, "Notes/Linker.md", "x\n")],
        moves: vec![moving(&root, "Kombucha.md", "K2.md")],
    }
    .apply_with(&root, &faults)
    .unwrap();
    assert_eq!(faults.1.take(), Some(Recovered::default()));
    assert_eq!(std::fs::read_to_string(root.join("Notes/Linker.md")).unwrap(), "x\n");
    assert!(root.join("K2.md").exists());
}

#[test]
fn conflicts_read_only_notes_and_taken_places_change_nothing() {
    let (_d, root) = vault();
    let before_edit = rewrite(&root, "Notes/Linker.md", "new\n");
    std::fs::write(root.join("Notes/Linker.md"), "the user typed this\n").unwrap();
    let before = state(&root);
    let err = Change {
        rewrites: vec![rewrite(&root, "Notes/Tea.md", "t\n"), before_edit],
        moves: vec![],
    }
    .apply(&root)
    .unwrap_err();
    assert!(
        matches!(&err, ChangeError::Conflict(n) if n == "Notes/Linker.md"),
        "{err}"
    );
    assert_eq!(state(&root), before);

    let mut perms = std::fs::metadata(root.join("Notes/Tea.md")).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(root.join("Notes/Tea.md"), perms).unwrap();
    let err = Change {
        rewrites: vec![
            rewrite(&root, "Kombucha.md", "k\n"),
            rewrite(&root, "Notes/Tea.md", "t\n"),
        ],
        moves: vec![],
    }
    .apply(&root)
    .unwrap_err();
    assert_eq!(err.to_string(), "`Notes/Tea.md` is read-only; nothing was changed");
    assert_eq!(state(&root), before);

    let err = Change {
        rewrites: vec![rewrite(&root, "Kombucha.md", "k\n")],
        moves: vec![moving(&root, "Kombucha.md", "Notes/Tea.md")],
    }
    .apply(&root)
    .unwrap_err();
    assert!(matches!(err, ChangeError::Exists(_)), "{err}");
    assert_eq!(state(&root), before);
}

#[cfg(unix)]
#[test]
fn symlinked_notes_are_written_through() {
    let (_d, root) = vault();
    std::os::unix::fs::symlink(root.join("Notes/Linker.md"), root.join("Link.md")).unwrap();
    Change {
        rewrites: vec![rewrite(&root, "Link.md", "through\n")],
        moves: vec![],
    }
    .apply(&root)
    .unwrap();
    assert!(
        std::fs::symlink_metadata(root.join("Link.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("Notes/Linker.md")).unwrap(),
        "through\n"
    );
}

#[test]
fn byte_order_marks_and_permissions_stay() {
    let (_d, root) = vault();
    std::fs::write(root.join("Bom.md"), "\u{feff}old").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("Bom.md"), std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let r = Rewrite {
        shown: "Bom.md".into(),
        path: root.join("Bom.md"),
        old: "old".into(),
        new: "new".into(),
    };
    Change {
        rewrites: vec![r],
        moves: vec![],
    }
    .apply(&root)
    .unwrap();
    assert_eq!(std::fs::read(root.join("Bom.md")).unwrap(), "\u{feff}new".as_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(root.join("Bom.md")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}

/// Each file's text, its new text (if rewritten), its new place (if moved), the step that
/// fails and whether the process dies there.
type ChangeCase = (
    Vec<String>,
    Vec<Option<String>>,
    Vec<Option<String>>,
    Option<usize>,
    bool,
);

/// The model: files with texts; a change rewrites some and moves some (into new folders too),
/// and any one step may fail. Afterwards the disk is exactly the old state or exactly the new.
fn arb_case() -> impl Strategy<Value = ChangeCase> {
    (2usize..6).prop_flat_map(|n| {
        (
            prop::collection::vec("[a-z ]{0,12}", n),
            prop::collection::vec(prop::option::of("[a-z\n]{0,12}"), n),
            prop::collection::vec(prop::option::of("(new/)?(deep/)?m[0-9]"), n),
            prop::option::of(0usize..20),
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn a_change_is_all_or_nothing((texts, news, moves, fail, panic) in arb_case()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("f")).unwrap();
        let rels: Vec<String> = (0..texts.len()).map(|i| format!("f/n{i}.md")).collect();
        for (rel, t) in rels.iter().zip(&texts) {
            std::fs::write(root.join(rel), t).unwrap();
        }
        let before = state(&root);
        let mut change = Change::default();
        let mut expected = before.0.clone();
        for (i, new) in news.iter().enumerate() {
            if let Some(new) = new {
                change.rewrites.push(rewrite(&root, &rels[i], new));
                expected.insert(rels[i].clone(), new.clone().into_bytes());
            }
        }
        let mut taken: Vec<String> = Vec::new();
        for (i, to) in moves.iter().enumerate() {
            let Some(to) = to else { continue };
            let to = format!("{to}-{i}.md");
            taken.push(to.clone());
            change.moves.push(moving(&root, &rels[i], &to));
            let bytes = expected.remove(&rels[i]).unwrap();
            expected.insert(to, bytes);
        }
        let faults = FailAt::new(fail, panic);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| change.apply_with(&root, &faults)));
        let ok = matches!(outcome, Ok(Ok(())));
        if outcome.is_err() {
            recover(&root);
        }
        let (files, _) = state(&root);
        if ok {
            prop_assert_eq!(files, expected);
        } else {
            prop_assert_eq!(state(&root), before);
        }
    }
}

/// A folder moved with a note in it rewritten: the note's backup moved with the folder, and
/// is gone too; every failure point leaves the folder where it was.
#[test]
fn a_folder_moves_with_its_rewritten_notes_and_leaves_nothing() {
    let plan = |root: &Path| Change {
        rewrites: vec![rewrite(root, "Notes/Tea.md", "# Tea, moved\n")],
        moves: vec![moving(root, "Notes", "Archive/Notes")],
    };
    let (_d, root) = vault();
    plan(&root).apply(&root).unwrap();
    let (files, dirs) = state(&root);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["Archive/Notes/Linker.md", "Archive/Notes/Tea.md", "Kombucha.md"]
    );
    assert_eq!(dirs, ["Archive", "Archive/Notes"]);
    // Journal, temp, backup, replace, move: 5 steps.
    fails_whole(plan, 5);
}
