//! A small vault on disk, indexed: what the crate's tests build on.

use std::path::PathBuf;

use crate::{VaultIndex, WriterOptions};

pub(crate) struct Fixture {
    /// The vault (`vault/`) and the index (`index/`) beside it; removed when dropped.
    dir: tempfile::TempDir,
    pub index: VaultIndex,
}

impl Fixture {
    /// The vault's root, to write notes into.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("vault")
    }
}

/// A `## Research` section holding `body` as research wrote it (its part between scholia's
/// marker and end lines): scholia's words, not the owner's.
pub(crate) fn researched(body: &str) -> String {
    format!(
        "## Research\n\n<!-- scholia:research run=r at=2026-11-29 depth=offline model=none sources=1 above=0 -->\n{body}\n\n{}\n",
        scholia_vault::END_MARKER
    )
}

/// A vault of `files` (vault-relative path, text), indexed once.
pub(crate) fn vault(files: &[(&str, &str)]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let vault = scholia_vault::Vault::open(&root).unwrap();
    let index = VaultIndex::open(vault, &dir.path().join("index"), WriterOptions::default()).unwrap();
    index.sync(&mut |_| {}).unwrap();
    Fixture { dir, index }
}
