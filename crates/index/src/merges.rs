//! Which segments a server merges in the background. A short-lived process never merges (a
//! merge the CLI started was abandoned at exit, and a bulk build is cheaper without them).

use super::{IndexError, VaultIndex};

/// Segments under this many notes are what edits leave (a commit per save): merged once
/// there are [`SMALL_SEGMENTS`] of them.
const SMALL_SEGMENT_DOCS: u32 = 1_000;
const SMALL_SEGMENTS: usize = 8;
/// A bulk build leaves a segment per indexing buffer (~60 at 100,000 notes), and every term
/// look-up asks each one: offline research at 100k made ~3,000 (document frequencies, link
/// keys, names), 60 fst walks each. Past this many segments the smallest are merged, up to
/// [`GROUP`] at a time and [`GROUP_DOCS`] notes (a merge holds ~70 MB; merging a 100k build
/// into one segment held ~400 MB).
const MANY_SEGMENTS: usize = 16;
const GROUP: usize = 8;
const GROUP_DOCS: u32 = 16_384;

/// What a server merges in the background (one merge at a time): the small segments edits
/// leave, and a bulk build's segments in groups while there are many. tantivy asks again
/// after each merge and commit.
#[derive(Debug)]
pub(crate) struct ServerMerges;

impl tantivy::merge_policy::MergePolicy for ServerMerges {
    fn compute_merge_candidates(
        &self,
        segments: &[tantivy::SegmentMeta],
    ) -> Vec<tantivy::merge_policy::MergeCandidate> {
        merge_groups(&segments.iter().map(|s| (s.id(), s.num_docs())).collect::<Vec<_>>())
            .into_iter()
            .map(tantivy::merge_policy::MergeCandidate)
            .collect()
    }
}

impl VaultIndex {
    /// Makes the merges a server would make in the background, now, one after another, and
    /// returns how many: for a process no one waits for (`scholia index --background`), so a
    /// vault used only from the shell gets them too. Each merge is committed as it ends.
    pub fn merge_now(&self) -> Result<usize, IndexError> {
        let mut guard = self.writer()?;
        let writer = guard.as_mut().expect("checked");
        let mut merges = 0;
        loop {
            let metas = self.index.searchable_segment_metas()?;
            let sizes: Vec<_> = metas.iter().map(|m| (m.id(), m.num_docs())).collect();
            let Some(group) = merge_groups(&sizes).into_iter().next() else {
                break;
            };
            writer.merge(&group).wait()?;
            merges += 1;
        }
        if merges > 0 {
            self.reader.reload()?;
        }
        Ok(merges)
    }
}

/// The merges for segments of these sizes (see [`ServerMerges`]): the smallest first, as many
/// small ones as fit in [`GROUP_DOCS`] notes, at most [`GROUP`] in all once larger ones join.
fn merge_groups<Id: Copy>(segments: &[(Id, u32)]) -> Vec<Vec<Id>> {
    let small = segments.iter().filter(|(_, docs)| *docs < SMALL_SEGMENT_DOCS).count();
    if small < SMALL_SEGMENTS && segments.len() <= MANY_SEGMENTS {
        return Vec::new();
    }
    let mut by_size: Vec<&(Id, u32)> = segments.iter().collect();
    by_size.sort_by_key(|(_, docs)| *docs);
    let mut group = Vec::new();
    let mut docs = 0;
    for (id, n) in by_size {
        if docs + n > GROUP_DOCS || (*n >= SMALL_SEGMENT_DOCS && group.len() >= GROUP) {
            break;
        }
        group.push(*id);
        docs += n;
    }
    if group.len() < 2 {
        return Vec::new();
    }
    vec![group]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups() {
        let check = |sizes: &[u32], expected: &[&[usize]]| {
            let segments: Vec<(usize, u32)> = sizes.iter().copied().enumerate().collect();
            let got = merge_groups(&segments);
            let expected: Vec<Vec<usize>> = expected.iter().map(|g| g.to_vec()).collect();
            assert_eq!(got, expected, "{sizes:?}");
        };
        // A few bulk segments and edits: nothing.
        check(&[20_000, 30_000, 5, 7], &[]);
        // Eight edits' segments: merged together.
        check(&[20_000, 1, 2, 3, 4, 5, 6, 7, 999], &[&[1, 2, 3, 4, 5, 6, 7, 8]]);
        // A bulk build of 17 segments: the eight smallest.
        let mut bulk = vec![1_700; 17];
        bulk[3] = 1_200;
        bulk[10] = 1_100;
        check(&bulk, &[&[10, 3, 0, 1, 2, 4, 5, 6]]);
        // Groups stop at the notes a merge may hold.
        let big = vec![9_000; 17];
        check(&big, &[]);
        let mixed: Vec<u32> = (0..17).map(|i| if i < 2 { 8_000 } else { 20_000 }).collect();
        check(&mixed, &[&[0, 1]]);
        // At most sixteen segments stay as they are.
        check(&[1_700; 16], &[]);
        // A server's build, committed every few seconds: small segments, as many as fit.
        let expected: Vec<usize> = (0..20).collect();
        check(&[800; 50], &[&expected]);
    }

    /// Ten saves leave ten small segments; merged now, the notes are all still found.
    #[test]
    fn merged_now() {
        let f = crate::fixture::vault(&[("First.md", "# First\n\nplankton")]);
        let index = &f.index;
        for i in 0..10 {
            let path = f.root().join(format!("Saved {i}.md"));
            std::fs::write(&path, format!("# Saved {i}\n\nplankton {i}")).unwrap();
            index.touched(&[&path]);
        }
        let segments = || index.index.searchable_segment_metas().unwrap().len();
        assert!(segments() >= 10, "{}", segments());
        assert_eq!(index.merge_now().unwrap(), 1);
        assert_eq!(segments(), 1);
        assert_eq!(index.search("plankton", 20, None).unwrap().len(), 11);
        assert_eq!(index.merge_now().unwrap(), 0);
    }
}
