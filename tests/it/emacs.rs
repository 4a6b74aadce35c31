//! End-to-end in real Emacs: Debian's `emacs-nox` (28) with `elpa-eglot` 1.9, in batch mode —
//! the eglot that cannot rename files. Without an Emacs that loads eglot the test is skipped,
//! unless `SCHOLIA_REQUIRE_E2E=1` (CI sets it and installs both) makes that a failure.

use std::process::Command;

use crate::support::{TestVault, repo, stderr};

/// `emacs` (or `SCHOLIA_EMACS`) when it loads eglot.
fn emacs() -> Option<String> {
    let bin = std::env::var("SCHOLIA_EMACS").unwrap_or_else(|_| "emacs".into());
    let out = Command::new(&bin)
        .args(["--batch", "-q", "--eval", "(progn (require 'eglot) (princ \"eglot\"))"])
        .output()
        .ok()?;
    (out.status.success() && String::from_utf8_lossy(&out.stdout).contains("eglot")).then_some(bin)
}

/// Renaming a note from its title in eglot 1.9 (no `resourceOperations`): scholia moves the
/// file, rewrites the closed linker on disk and edits the open one's buffer; eglot applies
/// the edit without asking. The script checks each; see `tests/e2e/emacs/rename.el`.
#[test]
fn eglot_1_9_renames_a_note_without_a_dangling_link() {
    let Some(bin) = emacs() else {
        return crate::support::missing_e2e("Emacs with eglot", "apt-get install emacs-nox elpa-eglot");
    };
    let v = TestVault::with_files(&[
        ("Sourdough starter.md", "# Sourdough starter\n\nFlour and water.\n"),
        ("Open.md", "# Open\n\nFeed the [[Sourdough starter]].\n"),
        (
            "Closed.md",
            "# Closed\n\nMy [[Sourdough starter|starter]] and [[Sourdough starter#Feeding]].\n",
        ),
    ]);
    std::fs::create_dir_all(v.path(".obsidian")).unwrap();
    let out = v
        .command(bin)
        .env("VAULT", &v.root)
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .args(["--batch", "-q", "-l"])
        .arg(repo().join("tests/e2e/emacs/rename.el"))
        .output()
        .unwrap();
    eprintln!("{}", stderr(&out));
    assert!(out.status.success(), "rename.el failed:\n{}", stderr(&out));
    assert!(!v.path("Sourdough starter.md").exists());
    assert_eq!(
        v.read("Closed.md"),
        "# Closed\n\nMy [[Levain|starter]] and [[Levain#Feeding]].\n"
    );
}
