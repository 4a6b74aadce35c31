//! The safetensors format (a little-endian header length, a JSON header of tensors' dtype,
//! shape and byte range, the raw data): F32, F16 and BF16 tensors read by name as f32 (a model
//! published in half precision runs at full precision, from half the download).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

pub struct Tensors {
    source: Source,
    index: Index,
}

/// name → (shape, its type, byte range in the source)
type Index = HashMap<String, (Vec<usize>, Dtype, Range<usize>)>;

/// Where the tensors' bytes are: a file is read a tensor at a time, in slices, so that loading
/// a model holds little more than the model (a 470 MB multilingual one would otherwise need
/// twice that while it loads).
enum Source {
    File(std::fs::File),
    #[cfg(test)]
    Bytes(Vec<u8>),
}

/// The bytes read at a time from a file.
const SLICE: usize = 1 << 20;
/// From this size a table read a row at a time ([`Tensors::table`]) stays in its file.
const LEFT_IN_FILE: usize = 8 << 20;

/// A tensor read a row at a time: a model's word table, of which a text reads a few hundred
/// rows (all-MiniLM-L6-v2's is 47 MB of its 90; a multilingual model's 384 MB of its 470). A
/// large one stays in its file, and what is read stays in the page cache, shared by every
/// process running the model, instead of each holding a copy.
pub enum Table {
    Memory {
        values: Vec<f32>,
        width: usize,
    },
    File {
        file: std::fs::File,
        start: u64,
        dtype: Dtype,
        width: usize,
    },
}

impl Table {
    /// Adds row `i` to `out` (`out.len()` values).
    pub fn add_row(&self, i: usize, out: &mut [f32]) -> Result<(), String> {
        match self {
            Table::Memory { values, width } => {
                let row = &values[i * width..(i + 1) * width];
                out.iter_mut().zip(row).for_each(|(o, v)| *o += v);
            }
            Table::File {
                file,
                start,
                dtype,
                width,
            } => {
                let size = width * dtype.size();
                let mut bytes = vec![0u8; size];
                read_at(file, &mut bytes, start + (i * size) as u64)
                    .map_err(|e| format!("model.safetensors changed since it was loaded: {e}"))?;
                let mut k = 0;
                convert(*dtype, &bytes, &mut |v| {
                    out[k] += v;
                    k += 1;
                });
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], at + done as u64)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => done += n,
        }
    }
    Ok(())
}

/// Each value of `bytes` (in `dtype`) as f32, in order.
fn convert(dtype: Dtype, bytes: &[u8], out: &mut dyn FnMut(f32)) {
    match dtype {
        Dtype::F32 => bytes
            .chunks_exact(4)
            .for_each(|b| out(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        Dtype::F16 => bytes
            .chunks_exact(2)
            .for_each(|b| out(f16_to_f32(u16::from_le_bytes([b[0], b[1]])))),
        Dtype::Bf16 => bytes
            .chunks_exact(2)
            .for_each(|b| out(f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))),
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }
}

/// An IEEE half-precision number as f32, exactly (subnormals, infinities and NaN included).
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac * 2^-24.
            let magnitude = frac as f32 * 2f32.powi(-24);
            return if sign != 0 { -magnitude } else { magnitude };
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

impl Tensors {
    /// Opens a `model.safetensors` and reads its header; tensor names lose a leading `bert.`
    /// or `roberta.`.
    pub fn open(path: &std::path::Path) -> Result<Tensors, String> {
        let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let total = file.metadata().map_err(|e| e.to_string())?.len() as usize;
        let mut head = [0u8; 8];
        file.read_exact(&mut head).map_err(|_| "shorter than its header")?;
        let n = Self::header_len(head, total)?;
        let mut header = vec![0u8; n];
        file.read_exact(&mut header).map_err(|e| format!("header: {e}"))?;
        let index = Self::index(&header, 8 + n, total)?;
        Ok(Tensors {
            source: Source::File(file),
            index,
        })
    }

    /// [`Tensors::open`] on bytes in memory.
    #[cfg(test)]
    pub fn parse(bytes: Vec<u8>) -> Result<Tensors, String> {
        let head = bytes.get(..8).ok_or("shorter than its header")?;
        let n = Self::header_len(head.try_into().expect("8 bytes"), bytes.len())?;
        let index = Self::index(&bytes[8..8 + n], 8 + n, bytes.len())?;
        Ok(Tensors {
            source: Source::Bytes(bytes),
            index,
        })
    }

    /// A header is a few kB; a bound before reading it keeps a broken file from asking for more.
    fn header_len(head: [u8; 8], total: usize) -> Result<usize, String> {
        let n = u64::from_le_bytes(head);
        if n > 16 * 1024 * 1024 || 8 + n as usize > total {
            return Err(format!("a header of {n} bytes does not fit the file"));
        }
        Ok(n as usize)
    }

    fn index(header: &[u8], base: usize, total: usize) -> Result<Index, String> {
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(header).map_err(|e| format!("header: {e}"))?;
        let mut index = HashMap::new();
        for (name, t) in header {
            let dtype = match t["dtype"].as_str() {
                Some("F32") => Dtype::F32,
                Some("F16") => Dtype::F16,
                Some("BF16") => Dtype::Bf16,
                _ => continue,
            };
            let shape: Vec<usize> = t["shape"]
                .as_array()
                .ok_or_else(|| format!("{name}: no shape"))?
                .iter()
                .map(|d| d.as_u64().map(|d| d as usize))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("{name}: bad shape"))?;
            let range = t["data_offsets"]
                .as_array()
                .and_then(|o| Some(o.first()?.as_u64()? as usize..o.get(1)?.as_u64()? as usize))
                .ok_or_else(|| format!("{name}: no data offsets"))?;
            let len: usize = shape.iter().product();
            if range.end < range.start || range.end - range.start != len * dtype.size() || base + range.end > total {
                return Err(format!("{name}: its bytes do not fit its shape"));
            }
            let key = ["bert.", "roberta."]
                .iter()
                .find_map(|p| name.strip_prefix(p))
                .unwrap_or(&name)
                .to_string();
            index.insert(key, (shape, dtype, base + range.start..base + range.end));
        }
        Ok(index)
    }

    /// The 2-d tensor `name` to be read a row at a time, with its shape: left in the file
    /// from [`LEFT_IN_FILE`] bytes where the platform reads at an offset, else in memory.
    pub fn table(&self, name: &str) -> Result<(Vec<usize>, Table), String> {
        let (shape, dtype, range) = self.index.get(name).ok_or_else(|| format!("no tensor `{name}`"))?;
        let [_, width] = shape[..] else {
            return Err(format!("`{name}` is {shape:?}, not a table"));
        };
        #[cfg(any(unix, windows))]
        if let Source::File(file) = &self.source
            && range.len() >= LEFT_IN_FILE
        {
            let file = file.try_clone().map_err(|e| format!("`{name}`: {e}"))?;
            let start = range.start as u64;
            let dtype = *dtype;
            return Ok((
                shape.clone(),
                Table::File {
                    file,
                    start,
                    dtype,
                    width,
                },
            ));
        }
        let (shape, values) = self.get(name)?;
        Ok((shape, Table::Memory { values, width }))
    }

    /// The tensor `name` as f32s, with its shape.
    pub fn get(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        let (shape, dtype, range) = self.index.get(name).ok_or_else(|| format!("no tensor `{name}`"))?;
        let mut values = Vec::with_capacity(range.len() / dtype.size());
        let mut convert = |bytes: &[u8]| convert(*dtype, bytes, &mut |v| values.push(v));
        match &self.source {
            Source::File(file) => {
                let mut file = file;
                file.seek(SeekFrom::Start(range.start as u64))
                    .map_err(|e| format!("`{name}`: {e}"))?;
                let mut buf = vec![0u8; SLICE.min(range.len())];
                let mut left = range.len();
                while left > 0 {
                    let part = &mut buf[..SLICE.min(left)];
                    file.read_exact(part).map_err(|e| format!("`{name}`: {e}"))?;
                    convert(part);
                    left -= part.len();
                }
            }
            #[cfg(test)]
            Source::Bytes(bytes) => convert(&bytes[range.clone()]),
        }
        Ok((shape.clone(), values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of one tensor per type, as the safetensors writer lays it out.
    fn file(tensors: &[(&str, &str, Vec<u8>)]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        let mut data: Vec<u8> = Vec::new();
        for (name, dtype, bytes) in tensors {
            let n = bytes.len() / if *dtype == "F32" { 4 } else { 2 };
            header.insert(
                name.to_string(),
                serde_json::json!({"dtype": dtype, "shape": [n], "data_offsets": [data.len(), data.len() + bytes.len()]}),
            );
            data.extend(bytes);
        }
        let head = serde_json::to_vec(&header).unwrap();
        let mut out = (head.len() as u64).to_le_bytes().to_vec();
        out.extend(head);
        out.extend(data);
        out
    }

    /// A large table is read from its file a row at a time, as the same rows in memory; a
    /// file cut short under the model is an error naming what happened, not a crash.
    #[test]
    fn a_large_table_is_read_from_its_file_row_by_row() {
        let (rows, width) = (1 << 14, 160);
        let values: Vec<f32> = (0..rows * width).map(|i| (i % 977) as f32 * 0.5 - 100.0).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(bytes.len() >= LEFT_IN_FILE);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, file(&[("bert.w", "F32", bytes)])).unwrap();
        let mut tensors = Tensors::open(&path).unwrap();
        let range = tensors.index["w"].2.clone();
        // `file` writes one dimension: give the table its two.
        tensors.index.get_mut("w").unwrap().0 = vec![rows, width];
        let (shape, table) = tensors.table("w").unwrap();
        assert_eq!(shape, [rows, width]);
        assert!(matches!(table, Table::File { .. }), "left in the file");
        for i in [0, 1, 5000, rows - 1] {
            let mut row = vec![1.0f32; width];
            table.add_row(i, &mut row).unwrap();
            let want: Vec<f32> = values[i * width..(i + 1) * width].iter().map(|v| v + 1.0).collect();
            assert_eq!(row, want, "row {i}");
        }
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(range.start as u64 + 100).unwrap();
        let e = table.add_row(rows - 1, &mut vec![0.0; width]).unwrap_err();
        assert!(e.contains("changed since it was loaded"), "{e}");
    }

    #[test]
    fn half_precision_is_read_as_f32() {
        let halves: Vec<u16> = vec![0x3c00, 0xc000, 0x0001, 0x7bff, 0x7c00, 0x0000, 0x3555];
        let f16: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
        let bf16: Vec<u8> = [1.5f32, -0.0078125, 3.0e38]
            .iter()
            .flat_map(|x| ((x.to_bits() >> 16) as u16).to_le_bytes())
            .collect();
        let f32s: Vec<u8> = [0.25f32, -7.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let t = Tensors::parse(file(&[
            ("bert.a", "F16", f16),
            ("roberta.b", "BF16", bf16),
            ("c", "F32", f32s),
            ("d", "I64", vec![0; 8]),
        ]))
        .unwrap();
        let (shape, a) = t.get("a").unwrap();
        assert_eq!(shape, [7]);
        assert_eq!(a[..6], [1.0, -2.0, 2f32.powi(-24), 65504.0, f32::INFINITY, 0.0]);
        assert!((a[6] - 0.333_251_95).abs() < 1e-7, "{}", a[6]);
        assert_eq!(t.get("b").unwrap().1[..2], [1.5, -0.0078125]);
        assert_eq!(t.get("c").unwrap().1, [0.25, -7.0]);
        assert!(t.get("d").unwrap_err().contains("no tensor"));
        let short = file(&[("a", "F16", vec![0; 3])]);
        assert!(Tensors::parse(short).is_err());
    }
}
