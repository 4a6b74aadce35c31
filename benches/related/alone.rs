//! `--one-at-a-time`: each measured note's links hidden with the rest of the vault whole, as
//! a user's vault is (the default hides every measured note's links at once, about 40 % of
//! obsidian-help's wikilinks, which weakens every figure read from links: see `hidden.rs`).
//! The index is built once on the whole vault; for each note, its text and its hidden notes'
//! (without their links back to it) are written, synced, asked, and written back before the
//! next.
//!
//! Measured at stop 71 (`--all --one-at-a-time`, both draws, about 25 minutes on 2 cores):
//! mean 0.750, lowest 0.703 (da; vi 0.716); by the draws' intervals 30 of the 34 languages
//! above 0.70 and none below. Hiding every measured note's links at once, the same code gives
//! mean 0.704, lowest 0.671, three languages below. Before the best part's cosine
//! (`part_similar`): 0.748, lowest 0.707 (vi), 27 above.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use scholia::index::VaultIndex;

use super::Baseline;
use super::links::{Resolver, strip};

/// Whether `--one-at-a-time` was given.
pub fn asked() -> bool {
    std::env::args().any(|a| a == "--one-at-a-time")
}

/// The vault on disk with one note's links hidden at a time.
pub struct Alone {
    dir: PathBuf,
    /// What the whole vault's notes link.
    targets: HashMap<String, HashSet<String>>,
    /// The notes written changed for the note last asked.
    changed: Vec<String>,
    /// Links hidden, and of them those the index still finds.
    hidden: usize,
    kept: usize,
}

/// One note's links hidden: its text, what it still links either way, and the tf·idf
/// baseline over the vault as it now is.
pub struct Here {
    pub text: String,
    pub seen: HashSet<String>,
    pub baseline: Baseline,
}

impl Alone {
    pub fn new(dir: PathBuf, texts: &HashMap<String, String>, resolver: &Resolver) -> Alone {
        let targets = texts
            .iter()
            .map(|(rel, text)| (rel.clone(), resolver.targets(text, rel)))
            .collect();
        Alone {
            dir,
            targets,
            changed: Vec::new(),
            hidden: 0,
            kept: 0,
        }
    }

    /// Of the links hidden, those the index still found (they count as missed).
    pub fn kept(&self) -> String {
        format!("{} of {} hidden links still found by the index", self.kept, self.hidden)
    }

    /// Hides `rel`'s links to `gone` (and theirs back to it) in the vault and the index, the
    /// note asked before made whole again.
    pub fn hide(
        &mut self,
        index: &VaultIndex,
        texts: &HashMap<String, String>,
        resolver: &Resolver,
        rel: &str,
        gone: &HashSet<String>,
    ) -> Here {
        for was in std::mem::take(&mut self.changed) {
            std::fs::write(self.dir.join(&was), &texts[&was]).unwrap();
        }
        let mut now: HashMap<&str, String> = texts.iter().map(|(r, t)| (r.as_str(), t.clone())).collect();
        let text = strip(&texts[rel], gone, resolver);
        let me = HashSet::from([rel.to_string()]);
        let mut changed: Vec<(&str, String)> = vec![(rel, text.clone())];
        changed.extend(
            gone.iter()
                .map(|other| (other.as_str(), strip(&texts[other], &me, resolver))),
        );
        for (path, new) in changed {
            std::fs::write(self.dir.join(path), &new).unwrap();
            self.changed.push(path.to_string());
            now.insert(path, new);
        }
        index.sync(&mut |_| {}).unwrap();
        // Links the index still holds: written in a second form the bench resolves elsewhere
        // (by file name, where the index takes the nearer of two notes of one name).
        let linked = index.links_of(rel).unwrap();
        self.hidden += gone.len();
        self.kept += gone.iter().filter(|t| linked.contains(t)).count();
        let mut seen = resolver.targets(&text, rel);
        for (other, theirs) in &self.targets {
            if other != rel && !gone.contains(other) && theirs.contains(rel) {
                seen.insert(other.clone());
            }
        }
        Here {
            text,
            seen,
            baseline: Baseline::new(&now),
        }
    }
}
