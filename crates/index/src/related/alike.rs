//! Notes that notes like this one link ([`Evidence::alike_link`]): what the nearest notes by
//! stems link, each link weighed by how alike its note is and damped by how many it links
//! (Adamic–Adar), as [`Evidence::neighbour`] weighs the notes the note itself links.
//!
//! [`Evidence::alike_link`]: super::Evidence::alike_link
//! [`Evidence::neighbour`]: super::Evidence::neighbour

use std::collections::HashMap;

use tantivy::{DocAddress, Searcher};

use super::{Evidence, Likeness};
use crate::{IndexError, VaultIndex};

/// The notes most alike by stems whose links are read: 20 gave 0.730 and 50 0.732 on
/// `fit.py`'s figure, 100 less (0.726).
const ALIKE_NOTES: usize = 30;

impl VaultIndex {
    /// Adds [`Evidence::alike_link`] to every note the [`ALIKE_NOTES`] most alike to `note`
    /// (by [`Evidence::similar`], already in `found`) link, the note itself left out, and
    /// puts in `through` the most alike note linking each. Ties in likeness go to the first
    /// by path, so the same vault gives the same figures and the same notes through.
    pub(super) fn alike_links(
        &self,
        searcher: &Searcher,
        note: &Likeness,
        found: &mut HashMap<DocAddress, Evidence>,
        through: &mut HashMap<String, String>,
        cache: &mut crate::graph::LinkTargets,
    ) -> Result<(), IndexError> {
        let mut alike: Vec<(f32, String)> = Vec::new();
        for (addr, e) in found.iter() {
            if e.similar > 0.0 {
                let path = self.path_at(searcher, *addr)?;
                if path != note.rel && !path.is_empty() {
                    alike.push((e.similar, path));
                }
            }
        }
        alike.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        alike.truncate(ALIKE_NOTES);
        for (likeness, path) in alike {
            let theirs: Vec<String> = self
                .links_of_with(searcher, &path, cache)?
                .into_iter()
                .filter(|t| *t != note.rel && *t != path)
                .collect();
            let weight = likeness / (2.0 + theirs.len() as f32).ln();
            for target in &theirs {
                if let Some(addr) = self.doc_of(searcher, target)? {
                    found.entry(addr).or_default().alike_link += weight;
                    through.entry(target.clone()).or_insert_with(|| path.clone());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::evidence::tests::evidence_in;

    /// A note sharing no word with the researched one is found when a note much like it
    /// links it; what an unlike note links is not.
    #[test]
    fn what_notes_alike_link_counts() {
        let found = evidence_in(
            &[
                (
                    "Sourdough.md",
                    "Feed the sourdough starter with rye flour and water; the starter rises overnight.",
                ),
                (
                    "Levain.md",
                    "A levain is sourdough starter fed with rye flour and water before baking. See [[Oven]].",
                ),
                ("Garden.md", "Tomatoes need sun and water in summer. See [[Shed]]."),
                ("Oven.md", "Preheat to 250 degrees with the stone inside."),
                ("Shed.md", "Tools hang on the wall."),
            ],
            "Sourdough",
        );
        let oven = &found["Oven.md"];
        assert!(
            oven.content == 0.0 && oven.similar == 0.0 && oven.alike_link > 0.0,
            "{oven:?}"
        );
        assert_eq!(
            found.get("Shed.md").map_or(0.0, |e| e.alike_link),
            0.0,
            "{:?}",
            found.get("Shed.md")
        );
    }
}
