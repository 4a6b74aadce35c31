//! The tokenizer a model directory's `tokenizer.json` declares: BERT's WordPiece, or a
//! SentencePiece Unigram model (the multilingual models). Both give ids framed by the model's
//! special tokens and cut to the length the model reads.

use serde_json::Value;

use crate::spm::SentencePiece;
use crate::wordpiece::WordPiece;

#[derive(Debug)]
pub enum Tokenizer {
    WordPiece(WordPiece),
    SentencePiece(SentencePiece),
}

impl Tokenizer {
    /// Reads a `tokenizer.json`; `Err` names what is missing or not supported.
    pub fn from_json(text: &str) -> Result<Tokenizer, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("tokenizer.json: {e}"))?;
        match v["model"]["type"].as_str() {
            Some("WordPiece") => WordPiece::from_value(&v).map(Tokenizer::WordPiece),
            Some("Unigram") => SentencePiece::from_json(&v).map(Tokenizer::SentencePiece),
            other => Err(format!(
                "tokenizer.json: a `{}` tokenizer is not supported; supported: WordPiece (BERT models such as all-MiniLM-L6-v2) and Unigram (SentencePiece models such as paraphrase-multilingual-MiniLM-L12-v2)",
                other.unwrap_or("unknown")
            )),
        }
    }

    /// The text's ids, special tokens included, at most `max_len` of them.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        match self {
            Tokenizer::WordPiece(t) => t.encode(text, max_len),
            Tokenizer::SentencePiece(t) => t.encode(text, max_len),
        }
    }

    /// How many pieces `text` makes, special tokens left out.
    pub fn count(&self, text: &str) -> usize {
        match self {
            Tokenizer::WordPiece(t) => t.count(text),
            Tokenizer::SentencePiece(t) => t.count(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tokenizer.json` nested past any real one (a Sequence of Sequences …) is an error
    /// before it is read, not a stack overflow; a few levels are read.
    #[test]
    fn nesting_is_bounded_before_reading() {
        let nest = |depth: usize| {
            let mut n = serde_json::json!({"type": "Lowercase"});
            for _ in 0..depth {
                n = serde_json::json!({"type": "Sequence", "normalizers": [n]});
            }
            n
        };
        let shallow = serde_json::json!({"normalizer": nest(5), "pre_tokenizer": {"type": "Metaspace"},
            "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0]]}});
        assert_eq!(Tokenizer::from_json(&shallow.to_string()).unwrap().encode("A", 8), [1]);
        // Written as text: a value that deep could not even be built and printed safely.
        let deep = format!(
            "{{\"normalizer\": {}{}, \"model\": {{\"type\": \"Unigram\", \"vocab\": [[\"<unk>\", 0.0]]}}}}",
            "{\"type\": \"Sequence\", \"normalizers\": [".repeat(100_000),
            "]}".repeat(100_000)
        );
        let e = Tokenizer::from_json(&deep).unwrap_err();
        assert!(e.contains("tokenizer.json") && e.contains("recursion"), "{e}");
    }
}
