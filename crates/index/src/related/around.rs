//! What lies around a note in the vault's links and folders, as the evidence reads it once: the
//! figures are summed from it ([`Evidence::neighbour`], [`Evidence::cocited`],
//! [`Evidence::folder_linked`]), and the ties that tell a reader why are read from it
//! ([`Ties`](super::Ties)).
//!
//! [`Evidence::neighbour`]: super::Evidence::neighbour
//! [`Evidence::cocited`]: super::Evidence::cocited
//! [`Evidence::folder_linked`]: super::Evidence::folder_linked

use std::collections::HashMap;

use tantivy::{DocAddress, Searcher};

use crate::graph::LinkTargets;
use crate::{IndexError, VaultIndex};

/// Folder-mates whose links are read (a folder of thousands of daily notes says little more
/// than its first hundred).
pub(super) const FOLDER_MATES: usize = 100;

/// The folder of a vault path (`""` at the top).
pub(super) fn folder_of(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// Each note reached through another, with the note it is reached through: the one linking
/// fewest notes (as Adamic–Adar weighs them), then the first by path.
pub(super) type Through = HashMap<String, (usize, String)>;

/// Notes `source` links (`theirs`), reached through it.
pub(super) fn reach(through: &mut Through, source: &str, theirs: &[String]) {
    for target in theirs {
        let tie = through
            .entry(target.clone())
            .or_insert_with(|| (theirs.len(), source.to_string()));
        if (theirs.len(), source) < (tie.0, tie.1.as_str()) {
            *tie = (theirs.len(), source.to_string());
        }
    }
}

/// What lies around a note: in the vault's links and folders, and in words (what any note
/// sharing some of its stems shares with it).
#[derive(Default)]
pub(super) struct Around {
    /// What the notes it links link (X → Y → Z): Z, through Y.
    pub(super) via: Through,
    /// What the notes linking it link (X ← W → Z): Z, through W.
    pub(super) beside: Through,
    /// What the notes most like it link (X ~ W → Z): Z, through the most alike W.
    pub(super) alike: HashMap<String, String>,
    pub(super) mates: FolderMates,
    /// The stem cosine of the median note sharing a stem with it (see `similar.rs`).
    pub(super) usual: f32,
}

/// The notes in a note's folder, and what the first [`FOLDER_MATES`] of the others link.
#[derive(Default)]
pub(super) struct FolderMates {
    /// Every note in the folder, the note itself included when it is indexed.
    pub(super) all: Vec<(String, DocAddress)>,
    /// How many of the other notes were read.
    pub(super) read: usize,
    /// Whether every other note was read.
    pub(super) every: bool,
    /// How many of the notes read link each note.
    pub(super) linking: HashMap<String, usize>,
}

impl VaultIndex {
    /// The mates of the note at `rel`, in its folder (`folder`, `""` at the top).
    pub(super) fn folder_mates(
        &self,
        searcher: &Searcher,
        rel: &str,
        folder: &str,
        cache: &mut LinkTargets,
    ) -> Result<FolderMates, IndexError> {
        let all = self.paths_in_folder(searcher, folder)?;
        let others: Vec<&String> = all.iter().map(|(p, _)| p).filter(|p| *p != rel).collect();
        let mut linking: HashMap<String, usize> = HashMap::new();
        for mate in others.iter().take(FOLDER_MATES) {
            for target in self.links_of_with(searcher, mate, cache)? {
                *linking.entry(target).or_default() += 1;
            }
        }
        let read = others.len().min(FOLDER_MATES);
        let every = read == others.len();
        Ok(FolderMates {
            all,
            read,
            every,
            linking,
        })
    }
}
