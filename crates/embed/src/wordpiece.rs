//! BERT's WordPiece tokenizer as a `tokenizer.json` describes it (Hugging Face's
//! `BertNormalizer`, `BertPreTokenizer` and `WordPiece` model): text cleaned of control
//! characters, CJK ideographs set apart, accents stripped and lower-cased when the model is
//! uncased, words split at whitespace and punctuation, then greedy longest-match pieces with the
//! `##` continuation prefix. The ids are those the reference tokenizer gives (a test holds them
//! to it on hostile text).

use std::collections::HashMap;

use icu_properties::CodePointMapData;
use icu_properties::props::{GeneralCategory, GeneralCategoryGroup};
use serde_json::Value;

use crate::added::{Added, Part, split};

#[derive(Debug)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    /// `[CLS]`, `[SEP]`, `[MASK]`, … where the text spells them: those tokens, as in the
    /// reference (BERT's are matched in the raw text; a normalised one is matched there too).
    added: Vec<Added>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    lowercase: bool,
    strip_accents: bool,
    chinese_chars: bool,
    clean_text: bool,
}

impl WordPiece {
    /// Reads a `tokenizer.json` of a WordPiece model; `Err` names what is missing.
    pub fn from_value(v: &Value) -> Result<WordPiece, String> {
        let model = &v["model"];
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or("tokenizer.json: no vocabulary")?
            .iter()
            .filter_map(|(k, id)| Some((k.clone(), u32::try_from(id.as_u64()?).ok()?)))
            .collect();
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("tokenizer.json: no `{t}` token"))
        };
        let unk_name = model["unk_token"].as_str().unwrap_or("[UNK]");
        let norm = &v["normalizer"];
        let lowercase = norm["lowercase"].as_bool().unwrap_or(true);
        Ok(WordPiece {
            unk: id(unk_name)?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            prefix: model["continuing_subword_prefix"].as_str().unwrap_or("##").to_string(),
            max_word_chars: model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize,
            // `strip_accents: null` follows `lowercase`, as in the reference normalizer.
            strip_accents: norm["strip_accents"].as_bool().unwrap_or(lowercase),
            lowercase,
            chinese_chars: norm["handle_chinese_chars"].as_bool().unwrap_or(true),
            clean_text: norm["clean_text"].as_bool().unwrap_or(true),
            added: Added::read(v)?.into_iter().map(|(a, _)| a).collect(),
            vocab,
        })
    }

    /// `[CLS]`, the text's pieces (at most `max_len - 2`), `[SEP]`.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = max_len.saturating_sub(2);
        'parts: for part in split(text, true, &self.added) {
            let text = match part {
                Part::Token(id) => {
                    ids.push(id);
                    continue;
                }
                Part::Text { text, .. } => text,
            };
            for word in self.words(text) {
                if ids.len() > room {
                    break 'parts;
                }
                self.pieces(&word, &mut ids);
            }
        }
        ids.truncate(room + 1);
        ids.push(self.sep);
        ids
    }

    /// How many pieces `text` makes (without `[CLS]` and `[SEP]`).
    pub fn count(&self, text: &str) -> usize {
        let mut ids = Vec::new();
        for part in split(text, true, &self.added) {
            match part {
                Part::Token(id) => ids.push(id),
                Part::Text { text, .. } => self.words(text).iter().for_each(|w| self.pieces(w, &mut ids)),
            }
        }
        ids.len()
    }

    /// The normalised text split into words and punctuation marks.
    fn words(&self, text: &str) -> Vec<String> {
        let gc = CodePointMapData::<GeneralCategory>::new();
        let mut cleaned = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c, gc.get(c)) {
                    continue;
                }
                if is_whitespace(c) {
                    cleaned.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_cjk(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let mut normal = if self.strip_accents {
            let nfd = icu_normalizer::DecomposingNormalizerBorrowed::new_nfd().normalize(&cleaned);
            nfd.chars()
                .filter(|c| !GeneralCategoryGroup::NonspacingMark.contains(gc.get(*c)))
                .collect::<String>()
        } else {
            cleaned
        };
        if self.lowercase {
            normal = normal.to_lowercase();
        }
        let mut words = Vec::new();
        let mut word = String::new();
        for c in normal.chars() {
            if is_whitespace(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            } else if is_punctuation(c, gc.get(c)) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        words
    }

    /// Greedy longest-match pieces of one word; `[UNK]` when it cannot be split.
    fn pieces(&self, word: &str, out: &mut Vec<u32>) {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > self.max_word_chars {
            out.push(self.unk);
            return;
        }
        let mut found = Vec::new();
        let mut start = 0;
        let mut candidate = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut hit = None;
            while start < end {
                let from = chars[start].0;
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                candidate.clear();
                if start > 0 {
                    candidate.push_str(&self.prefix);
                }
                candidate.push_str(&word[from..to]);
                if let Some(id) = self.vocab.get(candidate.as_str()) {
                    hit = Some(*id);
                    break;
                }
                end -= 1;
            }
            match hit {
                Some(id) => found.push(id),
                None => {
                    out.push(self.unk);
                    return;
                }
            }
            start = end;
        }
        out.extend(found);
    }
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control and format characters, as the reference cleans them (tab and line breaks are
/// whitespace).
fn is_control(c: char, gc: GeneralCategory) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    GeneralCategoryGroup::Other.contains(gc)
}

/// ASCII symbols count as punctuation too (`$`, `^`, `` ` ``), as in BERT.
fn is_punctuation(c: char, gc: GeneralCategory) -> bool {
    let u = c as u32;
    (33..=47).contains(&u)
        || (58..=64).contains(&u)
        || (91..=96).contains(&u)
        || (123..=126).contains(&u)
        || GeneralCategoryGroup::Punctuation.contains(gc)
}

fn is_cjk(c: char) -> bool {
    let u = c as u32;
    (0x4E00..=0x9FFF).contains(&u)
        || (0x3400..=0x4DBF).contains(&u)
        || (0x20000..=0x2A6DF).contains(&u)
        || (0x2A700..=0x2B73F).contains(&u)
        || (0x2B740..=0x2B81F).contains(&u)
        || (0x2B820..=0x2CEAF).contains(&u)
        || (0xF900..=0xFAFF).contains(&u)
        || (0x2F800..=0x2FA1F).contains(&u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab: Vec<&str> = vec![
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", "!", "日", "本", "hello", ",",
        ];
        let json = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null, "handle_chinese_chars": true, "clean_text": true},
            "added_tokens": [{"id": 3, "content": "[SEP]", "special": true, "normalized": false}],
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                      "vocab": vocab.iter().enumerate().map(|(i, t)| (t.to_string(), serde_json::json!(i))).collect::<serde_json::Map<_, _>>()}
        });
        WordPiece::from_value(&json).unwrap()
    }

    #[test]
    fn pieces_accents_cjk_and_unknowns() {
        let t = tiny();
        assert_eq!(t.encode("Unaffable CAFÉ!", 32), [2, 4, 5, 6, 7, 8, 3]);
        assert_eq!(t.encode("日本", 32), [2, 9, 10, 3]);
        assert_eq!(t.encode("hello,\u{200b}zzz\u{0}", 32), [2, 11, 12, 1, 3]);
        assert_eq!(t.encode("hello hello hello", 4), [2, 11, 11, 3]);
        assert_eq!(t.count("hello hello"), 2);
        // `[SEP]` spelled in the text is that token; `[sep]` is not.
        assert_eq!(t.encode("hello[SEP] [sep]", 32), [2, 11, 3, 1, 1, 1, 3]);
        assert_eq!(t.count("[SEP]"), 1);
    }
}
