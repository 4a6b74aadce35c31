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
