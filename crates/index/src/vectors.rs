//! The notes' vectors, beside the index: one int8 vector per note (its chunks' meaning, the
//! head counting double), with the stamp of the file it was computed from and the model that
//! computed it. Kept in one file per model (and way of reading notes: `meaning.rs`'s recipe;
//! the writer removes the same model's files of another recipe) in the index directory, read whole at open (384
//! dimensions: 388 bytes a note, 39 MB at 100,000 notes). A query scores every note by an
//! int8 dot product on every core; from [`PREFILTER_AT`] notes it first ranks them by their
//! values' signs and scores only the nearest share.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use scholia_embed::Quantized;
use scholia_vault::scan::Stamp;

const MAGIC: &[u8; 8] = b"SCHVEC1\n";
/// The most of a header read to learn whose vectors a file holds (its probe's 384 to 4,096
/// numbers included).
const MAX_HEADER: usize = 256 * 1024;

#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    pub model: String,
    pub dims: usize,
    paths: Vec<String>,
    stamps: Vec<Stamp>,
    scales: Vec<f32>,
    /// `dims` values per note, in note order.
    values: Vec<i8>,
    /// Each value's sign, [`words`] `u64`s per note: the first pass of a large set's scan.
    signs: Vec<u64>,
    by_path: HashMap<String, usize>,
    /// What the model that made the set answered for [`scholia_embed::PROBE`], when known.
    pub probe: Option<Vec<f32>>,
}

/// The cosine two answers for [`scholia_embed::PROBE`] reach when one model gave both (an
/// endpoint's floating point may differ in the last digits): below it, the set is another
/// model's.
const SAME_MODEL: f32 = 0.99;

/// Notes from which a scan first ranks every note by its signs (a Hamming distance, an eighth
/// of the bytes) and then scores only the nearest [`PREFILTER_SHARE`] by their int8 vectors.
/// Smaller sets are scanned exactly.
pub const PREFILTER_AT: usize = 20_000;
/// The share of a large set (1 in 50) scored exactly after the first pass.
pub const PREFILTER_SHARE: usize = 50;

/// `u64` words of signs for a vector of `dims` values.
fn words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `values` (a bit set where the value is positive), `words(len)` words.
fn signs_of(values: &[i8]) -> Vec<u64> {
    let mut out = vec![0u64; words(values.len())];
    for (i, v) in values.iter().enumerate() {
        if *v > 0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

/// Differing bits of two sign words.
fn hamming(a: &[u64], b: &[u64]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the feature was just detected on this CPU.
        return unsafe { hamming_popcnt(a, b) };
    }
    hamming_words(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn hamming_popcnt(a: &[u64], b: &[u64]) -> u32 {
    hamming_words(a, b)
}

#[inline(always)]
fn hamming_words(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

impl VectorSet {
    pub fn new(model: &str, dims: usize) -> VectorSet {
        VectorSet {
            model: model.to_string(),
            dims,
            ..Default::default()
        }
    }

    /// Whether the model whose answer for [`scholia_embed::PROBE`] is `probe` made the set
    /// (when either is not known, the name says so).
    pub fn made_by_same(&self, probe: Option<&[f32]>) -> bool {
        match (&self.probe, probe) {
            (Some(mine), Some(theirs)) => {
                mine.len() == theirs.len() && scholia_embed::cosine(mine, theirs) >= SAME_MODEL
            }
            _ => true,
        }
    }

    /// The file vectors of `model` live in, in the index directory.
    pub fn file(dir: &Path, model: &str) -> PathBuf {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in model.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        dir.join(format!("vectors-{h:016x}.bin"))
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Bytes the vectors take in memory (and about as many on disk).
    pub fn bytes(&self) -> usize {
        self.values.len()
            + self.signs.len() * 8
            + self.scales.len() * 4
            + self.paths.iter().map(|p| p.len() + 18).sum::<usize>()
    }

    pub fn stamp(&self, rel: &str) -> Option<Stamp> {
        self.by_path.get(rel).map(|&i| self.stamps[i])
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(String::as_str)
    }

    pub fn vector(&self, rel: &str) -> Option<Quantized> {
        let i = *self.by_path.get(rel)?;
        Some(Quantized {
            scale: self.scales[i],
            values: self.values[i * self.dims..(i + 1) * self.dims].to_vec(),
        })
    }

    pub fn upsert(&mut self, rel: &str, stamp: Stamp, v: &Quantized) {
        assert_eq!(v.values.len(), self.dims, "a vector of another model");
        match self.by_path.get(rel) {
            Some(&i) => {
                self.stamps[i] = stamp;
                self.scales[i] = v.scale;
                self.values[i * self.dims..(i + 1) * self.dims].copy_from_slice(&v.values);
                let w = words(self.dims);
                self.signs[i * w..(i + 1) * w].copy_from_slice(&signs_of(&v.values));
            }
            None => {
                self.by_path.insert(rel.to_string(), self.paths.len());
                self.paths.push(rel.to_string());
                self.stamps.push(stamp);
                self.scales.push(v.scale);
                self.values.extend_from_slice(&v.values);
                self.signs.extend_from_slice(&signs_of(&v.values));
            }
        }
    }

    pub fn remove(&mut self, rel: &str) {
        let Some(i) = self.by_path.remove(rel) else { return };
        let last = self.paths.len() - 1;
        self.paths.swap_remove(i);
        self.stamps.swap_remove(i);
        self.scales.swap_remove(i);
        if i != last {
            let (d, from) = (self.dims, last * self.dims);
            self.values.copy_within(from..from + d, i * d);
            let w = words(d);
            self.signs.copy_within(last * w..(last + 1) * w, i * w);
            self.by_path.insert(self.paths[i].clone(), i);
        }
        self.values.truncate(last * self.dims);
        self.signs.truncate(last * words(self.dims));
    }

    /// The `k` notes nearest `q` among those `keep` accepts, with their cosine, best first.
    /// A set of [`PREFILTER_AT`] notes or more is ranked by signs first (see there); when
    /// `keep` leaves fewer than `k` of that share, the whole set is scored.
    pub fn nearest(&self, q: &Quantized, k: usize, keep: impl Fn(&str) -> bool) -> Vec<(String, f32)> {
        if self.len() >= PREFILTER_AT {
            let found = self.nearest_in(q, k, &keep, Some(self.len() / PREFILTER_SHARE));
            if found.len() == k {
                return found;
            }
        }
        self.nearest_in(q, k, &keep, None)
    }

    /// [`VectorSet::nearest`] scoring only the `share` notes nearest by signs (all: `None`).
    pub fn nearest_in(
        &self,
        q: &Quantized,
        k: usize,
        keep: &impl Fn(&str) -> bool,
        share: Option<usize>,
    ) -> Vec<(String, f32)> {
        if q.values.len() != self.dims || k == 0 {
            return Vec::new();
        }
        // On every core: the scan is most of a query at 100,000 notes.
        use rayon::prelude::*;
        let score = |i: usize| {
            let v = &self.values[i * self.dims..(i + 1) * self.dims];
            (scholia_embed::dot_i8(&q.values, v) as f32 * q.scale * self.scales[i], i)
        };
        let mut scored: Vec<(f32, usize)> = match share {
            Some(share) if share.max(k) < self.len() => {
                let w = words(self.dims);
                let qs = signs_of(&q.values);
                let mut near: Vec<(u32, usize)> = self
                    .signs
                    .par_chunks_exact(w)
                    .enumerate()
                    .map(|(i, s)| (hamming(&qs, s), i))
                    .collect();
                let take = share.max(k);
                near.select_nth_unstable(take - 1);
                near.truncate(take);
                near.into_iter().map(|(_, i)| score(i)).collect()
            }
            _ => (0..self.len()).into_par_iter().map(score).collect(),
        };
        let by_score =
            |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(self.paths[a.1].cmp(&self.paths[b.1]));
        let mut out = Vec::with_capacity(k);
        // The best few sorted first (enough that the filter rarely leaves fewer than `k`);
        // the rest only when it does.
        let take = (k * 4).min(scored.len());
        if take > 0 && take < scored.len() {
            scored.select_nth_unstable_by(take - 1, by_score);
        }
        let (head, rest) = scored.split_at_mut(take);
        head.sort_unstable_by(by_score);
        let mut rest_sorted = false;
        for at in 0..head.len() + rest.len() {
            if out.len() == k {
                break;
            }
            let (score, i) = if at < head.len() {
                head[at]
            } else {
                if !rest_sorted {
                    rest.sort_unstable_by(by_score);
                    rest_sorted = true;
                }
                rest[at - head.len()]
            };
            if keep(&self.paths[i]) {
                out.push((self.paths[i].clone(), score));
            }
        }
        out
    }

    /// Writes the set atomically to `path`.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new().prefix(".vectors-").tempfile_in(dir)?;
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        out.write_all(MAGIC)?;
        let header =
            serde_json::json!({"model": self.model, "dims": self.dims, "count": self.len(), "probe": self.probe})
                .to_string();
        out.write_all(&(header.len() as u32).to_le_bytes())?;
        out.write_all(header.as_bytes())?;
        for i in 0..self.len() {
            let p = self.paths[i].as_bytes();
            out.write_all(&(p.len() as u16).to_le_bytes())?;
            out.write_all(p)?;
            out.write_all(&self.stamps[i].mtime_ns.to_le_bytes())?;
            out.write_all(&self.stamps[i].size.to_le_bytes())?;
            out.write_all(&self.scales[i].to_le_bytes())?;
            let v = &self.values[i * self.dims..(i + 1) * self.dims];
            out.write_all(&v.iter().map(|x| *x as u8).collect::<Vec<u8>>())?;
        }
        out.flush()?;
        drop(out);
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// The model named in the header of the set in `path` (the rest is not read).
    pub fn model_of(path: &Path) -> Option<String> {
        let mut head = [0u8; 12];
        let mut file = std::fs::File::open(path).ok()?;
        file.read_exact(&mut head).ok()?;
        if &head[..8] != MAGIC {
            return None;
        }
        let n = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
        let mut header = vec![0u8; n.min(MAX_HEADER)];
        file.read_exact(&mut header).ok()?;
        let header: serde_json::Value = serde_json::from_slice(&header).ok()?;
        header["model"].as_str().map(str::to_string)
    }

    /// Reads the set in `path`; `None` when there is none or it cannot be read (then the
    /// vectors are computed again).
    pub fn load(path: &Path) -> Option<VectorSet> {
        let mut bytes = Vec::new();
        std::fs::File::open(path).ok()?.read_to_end(&mut bytes).ok()?;
        let mut r = Reader { bytes: &bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return None;
        }
        let n = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        let header: serde_json::Value = serde_json::from_slice(r.take(n)?).ok()?;
        let mut set = VectorSet::new(header["model"].as_str()?, header["dims"].as_u64()? as usize);
        set.probe = match &header["probe"] {
            serde_json::Value::Array(values) if values.len() == set.dims => Some(
                values
                    .iter()
                    .map(|v| v.as_f64().map(|x| x as f32))
                    .collect::<Option<Vec<f32>>>()?,
            ),
            serde_json::Value::Null => None,
            _ => return None,
        };
        let count = header["count"].as_u64()? as usize;
        for _ in 0..count {
            let len = u16::from_le_bytes(r.take(2)?.try_into().ok()?) as usize;
            let rel = std::str::from_utf8(r.take(len)?).ok()?.to_string();
            let mtime_ns = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let size = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let scale = f32::from_le_bytes(r.take(4)?.try_into().ok()?);
            let values = r.take(set.dims)?.iter().map(|b| *b as i8).collect();
            set.upsert(&rel, Stamp { mtime_ns, size }, &Quantized { scale, values });
        }
        Some(set)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32) -> Quantized {
        let mut v: Vec<f32> = (0..8).map(|i| (((i * 7 + seed * 13) % 11) as f32) - 5.0).collect();
        scholia_embed::normalize(&mut v);
        Quantized::new(&v)
    }

    #[test]
    fn kept_found_removed_saved_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = VectorSet::new("m", 8);
        let s = |n| Stamp { mtime_ns: n, size: n };
        for (i, p) in ["a.md", "b.md", "c.md"].iter().enumerate() {
            set.upsert(p, s(i as u64), &unit(i as u32));
        }
        assert_eq!(set.nearest(&unit(1), 1, |_| true)[0].0, "b.md");
        assert_eq!(set.nearest(&unit(1), 1, |p| p != "b.md")[0].0.len(), 4);
        set.remove("a.md");
        assert_eq!(set.len(), 2);
        assert_eq!(set.vector("c.md"), Some(unit(2)));
        set.upsert("b.md", s(9), &unit(5));
        let file = VectorSet::file(dir.path(), "m");
        set.save(&file).unwrap();
        let back = VectorSet::load(&file).unwrap();
        assert_eq!((back.model.as_str(), back.dims, back.len()), ("m", 8, 2));
        assert_eq!(back.stamp("b.md"), Some(s(9)));
        assert_eq!(back.vector("b.md"), Some(unit(5)));
        std::fs::write(&file, b"SCHVEC1\ngarbage").unwrap();
        assert!(VectorSet::load(&file).is_none());
        // The model's answer for the probe is kept; one of another size is no set of ours.
        let mut set = back;
        set.probe = Some(vec![0.5; 8]);
        set.save(&file).unwrap();
        let back = VectorSet::load(&file).unwrap();
        assert_eq!(back.probe, Some(vec![0.5; 8]));
        assert!(back.made_by_same(Some(&[0.5; 8])) && back.made_by_same(None));
        assert!(!back.made_by_same(Some(&[-0.5; 8])) && !back.made_by_same(Some(&[0.5; 9])));
        set.probe = Some(vec![0.5; 7]);
        set.save(&file).unwrap();
        assert!(VectorSet::load(&file).is_none());
    }

    /// A vector of `dims` pseudo-random values.
    fn random(seed: &mut u64, dims: usize) -> Quantized {
        let v: Vec<f32> = (0..dims)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        Quantized::new(&v)
    }

    /// A large set is ranked by signs first: each note's own vector finds it, removals and
    /// replacements keep the signs in step, the answers match the exact scan's, and a filter
    /// that leaves too few of the share falls back to the whole set.
    #[test]
    fn a_large_set_is_prefiltered_by_signs() {
        let (dims, n) = (64, PREFILTER_AT + 500);
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let mut set = VectorSet::new("m", dims);
        for i in 0..n {
            set.upsert(&format!("{i}.md"), Stamp::default(), &random(&mut seed, dims));
        }
        for i in (0..n).step_by(997) {
            set.remove(&format!("{i}.md"));
        }
        set.upsert("10.md", Stamp::default(), &random(&mut seed, dims));
        assert_eq!(set.signs.len(), set.len() * words(dims));
        for i in (1..n).step_by(1_009) {
            let rel = format!("{i}.md");
            let q = set.vector(&rel).unwrap();
            assert_eq!(set.nearest(&q, 1, |_| true)[0].0, rel);
            // What the exact scan ranks first among the first pass's share is what it ranks
            // first overall, for a query that is a note of the set.
            let exact = set.nearest_in(&q, 5, &|_: &str| true, None);
            assert_eq!(set.nearest(&q, 5, |_| true)[0], exact[0]);
        }
        // Only notes far from the query kept: the share holds none, the whole set answers.
        let q = set.vector("11.md").unwrap();
        let far: std::collections::HashSet<String> = set
            .nearest_in(&q, set.len(), &|_: &str| true, None)
            .into_iter()
            .rev()
            .take(10)
            .map(|(p, _)| p)
            .collect();
        let got = set.nearest(&q, 3, |p| far.contains(p));
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got.iter().all(|(p, _)| far.contains(p)));
    }
}
