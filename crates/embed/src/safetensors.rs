//! The safetensors format (a little-endian header length, a JSON header of tensors' dtype,
//! shape and byte range, the raw data): F32 tensors read by name.

use std::collections::HashMap;

pub struct Tensors {
    data: Vec<u8>,
    /// name → (shape, byte range in `data`)
    index: HashMap<String, (Vec<usize>, std::ops::Range<usize>)>,
}

impl Tensors {
    /// Reads `bytes` (a whole `model.safetensors`); tensor names lose a leading `bert.`.
    pub fn parse(bytes: Vec<u8>) -> Result<Tensors, String> {
        let n = bytes.get(..8).ok_or("shorter than its header")?;
        let n = u64::from_le_bytes(n.try_into().expect("8 bytes")) as usize;
        // A header is a few kB; a bound before parsing keeps a broken file from asking for more.
        if n > 16 * 1024 * 1024 || 8 + n > bytes.len() {
            return Err(format!("a header of {n} bytes does not fit the file"));
        }
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..8 + n]).map_err(|e| format!("header: {e}"))?;
        let base = 8 + n;
        let mut index = HashMap::new();
        for (name, t) in header {
            if name == "__metadata__" || t["dtype"] != "F32" {
                continue;
            }
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
            if range.end < range.start || range.end - range.start != len * 4 || base + range.end > bytes.len() {
                return Err(format!("{name}: its bytes do not fit its shape"));
            }
            let key = name.strip_prefix("bert.").unwrap_or(&name).to_string();
            index.insert(key, (shape, base + range.start..base + range.end));
        }
        Ok(Tensors { data: bytes, index })
    }

    /// The tensor `name` as f32s, with its shape.
    pub fn get(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        let (shape, range) = self.index.get(name).ok_or_else(|| format!("no tensor `{name}`"))?;
        let values = self.data[range.clone()]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        Ok((shape.clone(), values))
    }
}
