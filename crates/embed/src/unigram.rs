//! A Unigram language model's segmentation (SentencePiece's, as Hugging Face's `Unigram`
//! model runs it): the pieces of a word are the path through the vocabulary whose scores sum
//! highest (Viterbi). A character no piece starts with is unknown, scored 10 below the lowest
//! piece, and neighbouring unknowns become one unknown token. Ties go to the path found first:
//! shorter pieces before longer, as the reference's trie walks them.

use std::collections::HashMap;

use serde_json::Value;

#[derive(Debug)]
pub struct Unigram {
    pieces: HashMap<String, (u32, f64)>,
    /// The longest piece, in bytes: no lookup reaches further.
    longest: usize,
    unk: Option<u32>,
    unk_score: f64,
    byte_fallback: bool,
}

/// What the reference adds below the lowest piece's score for an unknown character.
const UNK_PENALTY: f64 = 10.0;

impl Unigram {
    /// Reads the `model` object of a `tokenizer.json` (`vocab`: `[piece, score]` pairs, their
    /// index the id; `unk_id`; `byte_fallback`).
    pub fn from_json(model: &Value) -> Result<Unigram, String> {
        let vocab = model["vocab"]
            .as_array()
            .filter(|v| !v.is_empty())
            .ok_or("tokenizer.json: the Unigram model has no vocabulary")?;
        let mut pieces = HashMap::with_capacity(vocab.len());
        let mut lowest = f64::INFINITY;
        let mut longest = 0;
        for (id, entry) in vocab.iter().enumerate() {
            let (Some(piece), Some(score)) = (entry[0].as_str(), entry[1].as_f64()) else {
                return Err(format!("tokenizer.json: vocabulary entry {id} is not [piece, score]"));
            };
            let id = u32::try_from(id).map_err(|_| "tokenizer.json: too large a vocabulary")?;
            lowest = lowest.min(score);
            longest = longest.max(piece.len());
            pieces.insert(piece.to_string(), (id, score));
        }
        let unk = match &model["unk_id"] {
            Value::Null => None,
            v => Some(
                v.as_u64()
                    .filter(|u| (*u as usize) < vocab.len())
                    .ok_or("tokenizer.json: `unk_id` is not an id of the vocabulary")? as u32,
            ),
        };
        Ok(Unigram {
            pieces,
            longest,
            unk,
            unk_score: lowest - UNK_PENALTY,
            byte_fallback: model["byte_fallback"].as_bool().unwrap_or(false),
        })
    }

    /// The longest piece, in bytes.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// The id of a piece, if the vocabulary has it.
    pub fn id(&self, piece: &str) -> Option<u32> {
        self.pieces.get(piece).map(|p| p.0)
    }

    /// Appends the ids of `word`'s best segmentation to `out`.
    pub fn encode(&self, word: &str, out: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        #[derive(Clone, Copy)]
        struct Best {
            score: f64,
            from: usize,
            id: Option<u32>,
            reached: bool,
        }
        let none = Best {
            score: 0.0,
            from: 0,
            id: None,
            reached: false,
        };
        let n = word.len();
        let mut best = vec![none; n + 1];
        let offer = |best: &mut Vec<Best>, at: usize, from: usize, score: f64, id: Option<u32>| {
            let target = &mut best[at];
            if !target.reached || score > target.score {
                *target = Best {
                    score,
                    from,
                    id,
                    reached: true,
                };
            }
        };
        let mut start = 0;
        while start < n {
            let here = best[start].score;
            let first = word[start..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            let mut end = start + first;
            while end <= n && end - start <= self.longest {
                if let Some((id, score)) = self.pieces.get(&word[start..end]) {
                    offer(&mut best, end, start, score + here, Some(*id));
                    single |= end - start == first;
                }
                end += word[end..].chars().next().map_or(1, char::len_utf8);
            }
            if !single {
                // `None`: unknown (with or without an unknown id, the text is kept to fuse).
                offer(&mut best, start + first, start, self.unk_score + here, None);
            }
            start += first;
        }
        // Back from the end: pieces, with runs of unknowns joined.
        let mut found: Vec<(usize, usize, Option<u32>)> = Vec::new();
        let mut at = n;
        while at > 0 {
            let b = best[at];
            match (found.last_mut(), b.id) {
                (Some(last), None) if last.2.is_none() => last.0 = b.from,
                _ => found.push((b.from, at, b.id)),
            }
            at = b.from;
        }
        for (from, to, id) in found.into_iter().rev() {
            match id {
                Some(id) => out.push(id),
                None => self.unknown(&word[from..to], out),
            }
        }
    }

    /// An unknown run: its bytes as `<0xNN>` pieces where the model falls back to bytes and
    /// has them all, else the unknown id (none: dropped, where the reference would fail).
    fn unknown(&self, text: &str, out: &mut Vec<u32>) {
        if let Some(id) = self.id(text) {
            // A fused run can spell a piece (the reference looks the joined text up).
            return out.push(id);
        }
        if self.byte_fallback {
            let bytes: Option<Vec<u32>> = text.bytes().map(|b| self.id(&format!("<0x{b:02X}>"))).collect();
            if let Some(bytes) = bytes {
                return out.extend(bytes);
            }
        }
        out.extend(self.unk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(vocab: &[(&str, f64)], byte_fallback: bool) -> Unigram {
        Unigram::from_json(&serde_json::json!({
            "type": "Unigram", "unk_id": 0, "byte_fallback": byte_fallback,
            "vocab": vocab.iter().map(|(p, s)| serde_json::json!([p, s])).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    fn check(m: &Unigram, word: &str, want: &[u32]) {
        let mut got = Vec::new();
        m.encode(word, &mut got);
        assert_eq!(got, want, "{word}");
    }

    #[test]
    fn the_best_path_wins_and_unknowns_fuse() {
        let m = model(
            &[
                ("<unk>", 0.0),
                ("▁a", -1.0),
                ("b", -2.0),
                ("▁ab", -2.5),
                ("c", -5.0),
                ("bc", -6.5),
            ],
            false,
        );
        check(&m, "▁ab", &[3]); // -2.5 beats -1 + -2
        check(&m, "▁abc", &[1, 5]); // ▁a bc and ▁ab c tie at -7.5: the one reached first wins
        check(&m, "▁axyb", &[1, 0, 2]); // x and y are one unknown
        check(&m, "", &[]);
        let bytes = model(&[("<unk>", 0.0), ("a", -1.0), ("<0xC3>", -3.0), ("<0xA9>", -3.0)], true);
        check(&bytes, "aéa", &[1, 2, 3, 1]);
        check(&bytes, "a€", &[1, 0]); // a byte it lacks: the unknown id
        assert!(Unigram::from_json(&serde_json::json!({"vocab": []})).is_err());
        assert!(
            Unigram::from_json(&serde_json::json!({"vocab": [["a", 0.0]], "unk_id": 5}))
                .unwrap_err()
                .contains("unk_id")
        );
    }
}
