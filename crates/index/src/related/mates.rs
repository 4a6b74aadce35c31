//! A note's folder-mates and what they link: read once for the evidence ([`Evidence::folder`],
//! [`Evidence::folder_linked`]) and for the ties that tell it.
//!
//! [`Evidence::folder`]: super::Evidence::folder
//! [`Evidence::folder_linked`]: super::Evidence::folder_linked

use std::collections::HashMap;

use tantivy::{DocAddress, Searcher};

use crate::graph::LinkTargets;
use crate::{IndexError, VaultIndex};

/// Folder-mates whose links are read (a folder of thousands of daily notes says little more
/// than its first hundred).
pub(super) const FOLDER_MATES: usize = 100;

/// The notes in a note's folder, and what the first [`FOLDER_MATES`] of the others link.
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
