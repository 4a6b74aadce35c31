//! The vault's hubs: the notes linked from so many others that citing one tells a reader
//! nothing about the note researched. obsidian-help `en` links Settings from 64 of its 173
//! notes and Command palette from 36; offline research cited Settings in 72 of its 173 sections
//! and Command palette in 58, most often as an entry of its own with chance words beside it.
//! A hub is told on the section's hubs line instead, unless its words are why it is there.

use tantivy::Searcher;

use crate::{IndexError, VaultIndex};

/// Notes linking a note before it is one of the vault's hubs, whatever the vault's size.
pub(super) const MIN_HUB: usize = 5;

/// The share of the vault's notes that are its hubs: the most linked. In each language of
/// obsidian-help (173 notes) the seventh most linked note has 22 links and the eighth 16; 4 %
/// is those seven (Settings, Command palette, Core plugins, the two introductions to Sync and
/// Publish, Properties, Community plugins), and the whole vault's 4 % their 38 translations.
const HUB_SHARE: f64 = 0.04;

/// The hub floor and the segments, with their deletes, it was read at.
pub(crate) type HubFloor = (Vec<(tantivy::index::SegmentId, u32)>, usize);

impl VaultIndex {
    /// The fewest notes linking a note that make it one of the vault's hubs: as many as link
    /// the note at [`HUB_SHARE`] of the vault's notes down the list of the most linked, and at
    /// least [`MIN_HUB`]. Counted on live notes only (research sections' links are not links),
    /// so the same vault text gives the same hubs; read once per generation of the index.
    pub(super) fn hub_floor(&self, searcher: &Searcher) -> Result<usize, IndexError> {
        let generation: Vec<_> = searcher
            .segment_readers()
            .iter()
            .map(|s| (s.segment_id(), s.num_deleted_docs()))
            .collect();
        if let Some((at, floor)) = scholia_base::lock(&self.hub_floor).as_ref()
            && *at == generation
        {
            return Ok(*floor);
        }
        // Notes linking each link key, over every segment.
        let mut linking: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.links)?;
            let mut keys = inverted.terms().stream().map_err(tantivy::TantivyError::from)?;
            while keys.advance() {
                let live = self.live_postings(segment, &inverted, keys.value())?;
                *linking.entry(keys.key().to_vec()).or_default() += live as usize;
            }
        }
        let floor = floor_of(linking.into_values().collect(), searcher.num_docs());
        *scholia_base::lock(&self.hub_floor) = Some((generation, floor));
        Ok(floor)
    }
}

/// The hub floor of a vault of `notes` notes whose link keys are linked from `linking` notes
/// each (see [`VaultIndex::hub_floor`]).
fn floor_of(mut linking: Vec<usize>, notes: u64) -> usize {
    linking.sort_unstable_by(|a, b| b.cmp(a));
    let at = (notes as f64 * HUB_SHARE) as usize;
    linking.get(at).copied().unwrap_or(0).max(MIN_HUB)
}

#[cfg(test)]
mod tests {
    use super::floor_of;

    #[test]
    fn the_most_linked_twenty_fifth_are_hubs_from_five_links() {
        let check = |linking: &[usize], notes: u64, floor: usize| {
            assert_eq!(floor_of(linking.to_vec(), notes), floor, "{linking:?} of {notes} notes");
        };
        // obsidian-help en: the seventh most linked has 22 links, the eighth 16.
        let en = [64, 36, 35, 33, 32, 25, 22, 16, 15, 15, 15, 14, 14, 13, 1, 1];
        check(&en, 173, 22);
        // A vault of 38 such languages: the same floor.
        check(&en.repeat(38), 38 * 173, 22);
        // Small vaults: five links at least.
        check(&[9, 3, 2], 10, 9);
        check(&[4, 3, 2], 10, 5);
        check(&[], 0, 5);
        // Fewer link keys than a twenty-fifth of the notes: any of them linked five times.
        check(&[7, 6], 1000, 5);
    }
}
