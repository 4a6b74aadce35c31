//! SentencePiece's normaliser as a `tokenizer.json` carries it: the `precompiled_charsmap` of
//! a `Precompiled` normaliser (the model's `nmt_nfkc` rules: NFKC, control characters dropped,
//! every space a plain one). The blob is a little-endian `u32` byte length, a Darts
//! double-array trie of that many bytes, then the replacement strings, each ended by `\0`.
//!
//! Text is rewritten a grapheme cluster at a time, exactly as Hugging Face's reader does (the
//! ids must be the ones the model was trained on): a cluster shorter than 6 bytes is looked up
//! whole; otherwise, or when it is not found, each character is looked up alone. A lookup takes
//! the shortest entry that is a prefix of what it is given.

use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug)]
pub struct Charsmap {
    trie: Vec<u32>,
    replacements: String,
}

impl Charsmap {
    /// Reads the blob; `Err` says what is wrong with it.
    pub fn parse(blob: &[u8]) -> Result<Charsmap, String> {
        let bad = |what: &str| format!("precompiled_charsmap: {what}");
        let size = blob
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| bad("shorter than its header"))?;
        let trie = blob
            .get(4..4 + size)
            .filter(|t| t.len() % 4 == 0 && !t.is_empty())
            .ok_or_else(|| bad("its trie is cut short"))?;
        let trie = trie
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let replacements =
            String::from_utf8(blob[4 + size..].to_vec()).map_err(|_| bad("its replacements are not UTF-8"))?;
        Ok(Charsmap { trie, replacements })
    }

    /// `text` rewritten by the rules.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for cluster in text.graphemes(true) {
            if cluster.len() < 6
                && let Some(r) = self.lookup(cluster)
            {
                out.push_str(r);
                continue;
            }
            for (i, c) in cluster.char_indices() {
                match self.lookup(&cluster[i..i + c.len_utf8()]) {
                    Some(r) => out.push_str(r),
                    None => out.push(c),
                }
            }
        }
        out
    }

    /// The replacement of the shortest rule that is a prefix of `key`.
    fn lookup(&self, key: &str) -> Option<&str> {
        let start = self.first_prefix(key.as_bytes())?;
        let rest = self.replacements.get(start..)?;
        Some(&rest[..rest.find('\0').unwrap_or(rest.len())])
    }

    /// Darts' common-prefix search, stopped at its first result. A unit holds a label (its
    /// low byte, or bit 31 for a leaf), a has-leaf flag (bit 8), and an offset to its children
    /// (bits 10.., shifted 8 more when bit 9 is set); a leaf's value is its low 31 bits. An index
    /// outside the trie ends the search (a hostile blob cannot make it panic).
    fn first_prefix(&self, key: &[u8]) -> Option<usize> {
        let unit = |i: usize| self.trie.get(i).copied();
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let mut pos = offset(unit(0)?);
        for &c in key {
            if c == 0 {
                break;
            }
            pos ^= c as usize;
            let u = unit(pos)?;
            if (u & ((1 << 31) | 0xFF)) != c as u32 {
                return None;
            }
            pos ^= offset(u);
            if (u >> 8) & 1 == 1 {
                return Some((unit(pos)? & ((1 << 31) - 1)) as usize);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob of `len` units, `units` set, then the replacements.
    fn blob(units: &[(usize, u32)], len: usize, replacements: &str) -> Vec<u8> {
        let mut trie = vec![0u32; len];
        for (i, u) in units {
            trie[*i] = *u;
        }
        let mut b = ((len * 4) as u32).to_le_bytes().to_vec();
        trie.iter().for_each(|u| b.extend(u.to_le_bytes()));
        b.extend(replacements.as_bytes());
        b
    }

    #[test]
    fn rules_replace_and_unknown_characters_stay() {
        // The root's children sit at 0x40 ^ byte; `a` (0x61) is at 0x21, has a leaf, and its
        // own children at 0x21 ^ 0x40 = 0x61, where the leaf says: the replacement at byte 2.
        let units = [
            (0usize, 0x40u32 << 10),
            (0x40 ^ 0x61, (0x40 << 10) | (1 << 8) | 0x61),
            (0x40 ^ 0x61 ^ 0x40, 2),
        ];
        let map = Charsmap::parse(&blob(&units, 0x100, "Y\0X\0")).unwrap();
        assert_eq!(map.lookup("a"), Some("X"));
        assert_eq!(map.lookup("ab"), Some("X"));
        assert_eq!(map.lookup("b"), None);
        assert_eq!(map.normalize("bab"), "bXb");
        assert!(Charsmap::parse(&[1, 0]).unwrap_err().contains("header"));
        assert!(Charsmap::parse(&[8, 0, 0, 0, 1]).unwrap_err().contains("cut short"));
        // A trie that points outside itself ends the search.
        let wild = Charsmap::parse(&blob(&[(0, 0xFFFF << 10)], 4, "")).unwrap();
        assert_eq!(wild.normalize("abc"), "abc");
    }
}
