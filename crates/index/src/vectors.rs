//! The notes' vectors, beside the index: one int8 vector per note (its chunks' meaning, the
//! head counting double), with the stamp of the file it was computed from and the model that
//! computed it. Kept in one file per model in the index directory, read whole at open (384
//! dimensions: 388 bytes a note, 39 MB at 100,000 notes) and scanned whole per query (an int8
//! dot product per note, on every core).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use scholia_embed::Quantized;
use scholia_vault::scan::Stamp;

const MAGIC: &[u8; 8] = b"SCHVEC1\n";

#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    pub model: String,
    pub dims: usize,
    paths: Vec<String>,
    stamps: Vec<Stamp>,
    scales: Vec<f32>,
    /// `dims` values per note, in note order.
    values: Vec<i8>,
    by_path: HashMap<String, usize>,
}

impl VectorSet {
    pub fn new(model: &str, dims: usize) -> VectorSet {
        VectorSet {
            model: model.to_string(),
            dims,
            ..Default::default()
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
        self.values.len() + self.scales.len() * 4 + self.paths.iter().map(|p| p.len() + 18).sum::<usize>()
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
            }
            None => {
                self.by_path.insert(rel.to_string(), self.paths.len());
                self.paths.push(rel.to_string());
                self.stamps.push(stamp);
                self.scales.push(v.scale);
                self.values.extend_from_slice(&v.values);
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
            self.by_path.insert(self.paths[i].clone(), i);
        }
        self.values.truncate(last * self.dims);
    }

    /// The `k` notes nearest `q` among those `keep` accepts, with their cosine, best first.
    pub fn nearest(&self, q: &Quantized, k: usize, keep: impl Fn(&str) -> bool) -> Vec<(String, f32)> {
        if q.values.len() != self.dims || k == 0 {
            return Vec::new();
        }
        // On every core: the scan is most of a query at 100,000 notes.
        use rayon::prelude::*;
        let mut scored: Vec<(f32, usize)> = self
            .values
            .par_chunks_exact(self.dims)
            .enumerate()
            .map(|(i, v)| (scholia_embed::dot_i8(&q.values, v) as f32 * q.scale * self.scales[i], i))
            .collect();
        let by_score =
            |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(self.paths[a.1].cmp(&self.paths[b.1]));
        let mut out = Vec::with_capacity(k);
        // Enough candidates that the filter rarely leaves fewer than `k`.
        let take = (k * 4).min(scored.len());
        if take > 0 && take < scored.len() {
            scored.select_nth_unstable_by(take - 1, by_score);
            scored.truncate(take);
        }
        scored.sort_unstable_by(by_score);
        for (score, i) in scored {
            if out.len() == k {
                break;
            }
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
        let header = serde_json::json!({"model": self.model, "dims": self.dims, "count": self.len()}).to_string();
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
    }
}
