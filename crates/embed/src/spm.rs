//! A SentencePiece tokenizer as a `tokenizer.json` describes it (the multilingual
//! sentence-transformers models: XLM-RoBERTa's, multilingual E5's). In the reference's order:
//! - added tokens (`<s>`, `<mask>`, …) are cut out of the raw text first, honouring their
//!   `lstrip`, `rstrip` and `single_word`;
//! - the rest is normalised (the model's precompiled charsmap, `Strip`, `Replace`, Unicode
//!   forms, lower case), then cut at normalised added tokens;
//! - pre-tokenised (`WhitespaceSplit`; `Metaspace`: spaces become `▁`, one is prepended, words
//!   start at each `▁`);
//! - each word segmented by the [`Unigram`] model;
//! - and framed by the post-processor's special tokens (`<s> … </s>`).
//!
//! Anything else a `tokenizer.json` may say is refused by name, so that a model is never read
//! with ids it was not trained on.

use serde_json::Value;

use crate::added::{Added, Part, split};
use crate::charsmap::Charsmap;
use crate::unigram::Unigram;

#[derive(Debug)]
enum Normalizer {
    Charsmap(Charsmap),
    Strip { left: bool, right: bool },
    Replace { pattern: Pattern, content: String },
    Prepend(String),
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
}

#[derive(Debug)]
enum Pattern {
    Literal(String),
    Regex(regex::Regex),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Prepend {
    Always,
    First,
    Never,
}

#[derive(Debug)]
struct Metaspace {
    replacement: char,
    prepend: Prepend,
    split: bool,
}

#[derive(Debug)]
pub struct SentencePiece {
    model: Unigram,
    normalizers: Vec<Normalizer>,
    whitespace_split: bool,
    metaspace: Option<Metaspace>,
    /// Added tokens matched in the raw text, and (their content normalised) in the normalised.
    raw: Vec<Added>,
    normalized: Vec<Added>,
    prefix: Vec<u32>,
    suffix: Vec<u32>,
}

impl SentencePiece {
    pub fn from_json(v: &Value) -> Result<SentencePiece, String> {
        let model = Unigram::from_json(&v["model"])?;
        let mut normalizers = Vec::new();
        normalizer(&v["normalizer"], &mut normalizers)?;
        let mut whitespace_split = false;
        let mut metaspace = None;
        pre_tokenizer(&v["pre_tokenizer"], &mut whitespace_split, &mut metaspace)?;
        let (prefix, suffix) = post_processor(&v["post_processor"])?;
        let mut tokenizer = SentencePiece {
            model,
            normalizers,
            whitespace_split,
            metaspace,
            raw: Vec::new(),
            normalized: Vec::new(),
            prefix,
            suffix,
        };
        for (added, normalized) in Added::read(v)? {
            if normalized {
                let content = tokenizer.normalize(&added.content);
                tokenizer.normalized.push(Added { content, ..added });
            } else {
                tokenizer.raw.push(added);
            }
        }
        Ok(tokenizer)
    }

    /// The prefix tokens, `text`'s pieces (at most what `max_len` leaves room for), the suffix.
    ///
    /// Only the start of a long text is read: no piece is longer than the longest in the
    /// vocabulary, so `room` pieces come from at most `room` times that many bytes; with a
    /// margin for what normalising removes, the rest cannot change them (a pasted megabyte
    /// costs what its first kilobytes do).
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let room = max_len.saturating_sub(self.prefix.len() + self.suffix.len());
        let reach = room.saturating_mul(self.model.longest() + 16).max(4096);
        let text = match text.char_indices().nth(reach) {
            Some((cut, _)) => &text[..cut],
            None => text,
        };
        let mut ids = self.prefix.clone();
        self.pieces(text, &mut ids, room + self.prefix.len());
        ids.truncate(room + self.prefix.len());
        ids.extend(&self.suffix);
        ids
    }

    /// How many pieces `text` makes (without the prefix and suffix).
    pub fn count(&self, text: &str) -> usize {
        let mut ids = Vec::new();
        self.pieces(text, &mut ids, usize::MAX);
        ids.len()
    }

    /// Appends `text`'s ids to `out` until it holds `limit`.
    fn pieces(&self, text: &str, out: &mut Vec<u32>, limit: usize) {
        for part in split(text, true, &self.raw) {
            let (text, at_start) = match part {
                Part::Token(id) => {
                    out.push(id);
                    continue;
                }
                Part::Text { text, at_start } => (text, at_start),
            };
            let normal = self.normalize(text);
            for part in split(&normal, at_start, &self.normalized) {
                match part {
                    Part::Token(id) => out.push(id),
                    Part::Text { text, at_start } => {
                        for word in self.words(text, at_start) {
                            self.model.encode(&word, out);
                            if out.len() >= limit {
                                return;
                            }
                        }
                    }
                }
            }
            if out.len() >= limit {
                return;
            }
        }
    }

    fn normalize(&self, text: &str) -> String {
        let mut s = text.to_string();
        for n in &self.normalizers {
            s = match n {
                Normalizer::Charsmap(map) => map.normalize(&s),
                Normalizer::Strip { left, right } => {
                    let t = if *right { s.trim_end() } else { &s };
                    (if *left { t.trim_start() } else { t }).to_string()
                }
                Normalizer::Replace { pattern, content } => match pattern {
                    Pattern::Literal(p) => s.replace(p.as_str(), content),
                    Pattern::Regex(r) => r.replace_all(&s, regex::NoExpand(content)).into_owned(),
                },
                Normalizer::Prepend(p) if !s.is_empty() => format!("{p}{s}"),
                Normalizer::Prepend(_) => s,
                Normalizer::Nfc => icu_normalizer::ComposingNormalizerBorrowed::new_nfc()
                    .normalize(&s)
                    .into_owned(),
                Normalizer::Nfkc => icu_normalizer::ComposingNormalizerBorrowed::new_nfkc()
                    .normalize(&s)
                    .into_owned(),
                Normalizer::Nfd => icu_normalizer::DecomposingNormalizerBorrowed::new_nfd()
                    .normalize(&s)
                    .into_owned(),
                Normalizer::Nfkd => icu_normalizer::DecomposingNormalizerBorrowed::new_nfkd()
                    .normalize(&s)
                    .into_owned(),
                // A character at a time, as the reference does (no final-sigma rule).
                Normalizer::Lowercase => s.chars().flat_map(char::to_lowercase).collect(),
            };
        }
        s
    }

    /// The words the model segments: split at whitespace where asked, then by `Metaspace`.
    fn words(&self, text: &str, at_start: bool) -> Vec<String> {
        let words: Vec<(String, bool)> = if self.whitespace_split {
            let mut first = at_start;
            let mut out = Vec::new();
            let mut rest = text;
            while let Some(i) = rest.find(|c: char| !c.is_whitespace()) {
                first &= i == 0;
                let end = rest[i..].find(char::is_whitespace).map_or(rest.len(), |e| i + e);
                out.push((rest[i..end].to_string(), first));
                first = false;
                rest = &rest[end..];
            }
            out
        } else if text.is_empty() {
            Vec::new()
        } else {
            vec![(text.to_string(), at_start)]
        };
        let Some(m) = &self.metaspace else {
            return words.into_iter().map(|w| w.0).collect();
        };
        let mut out = Vec::new();
        for (word, first) in words {
            let mut w = word.replace(' ', m.replacement.encode_utf8(&mut [0; 4]));
            let prepend = match m.prepend {
                Prepend::Always => true,
                Prepend::First => first,
                Prepend::Never => false,
            };
            if prepend && !w.starts_with(m.replacement) {
                w.insert(0, m.replacement);
            }
            if !m.split {
                out.push(w);
                continue;
            }
            let mut start = 0;
            for (i, _) in w.match_indices(m.replacement) {
                if i > start {
                    out.push(w[start..i].to_string());
                }
                start = i;
            }
            if start < w.len() {
                out.push(w[start..].to_string());
            }
        }
        out
    }
}

fn unsupported(what: &str, kind: &Value) -> String {
    format!(
        "tokenizer.json: a `{}` {what} is not supported",
        kind.as_str().unwrap_or("unknown")
    )
}

fn normalizer(v: &Value, out: &mut Vec<Normalizer>) -> Result<(), String> {
    let kind = &v["type"];
    match kind.as_str() {
        None if v.is_null() => {}
        Some("Sequence") => {
            for n in v["normalizers"].as_array().into_iter().flatten() {
                normalizer(n, out)?;
            }
        }
        Some("Precompiled") => {
            use base64::Engine as _;
            let blob = v["precompiled_charsmap"].as_str().unwrap_or("");
            if !blob.is_empty() {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| format!("tokenizer.json: precompiled_charsmap: {e}"))?;
                out.push(Normalizer::Charsmap(Charsmap::parse(&bytes)?));
            }
        }
        Some("Strip") => out.push(Normalizer::Strip {
            left: v["strip_left"].as_bool().unwrap_or(true),
            right: v["strip_right"].as_bool().unwrap_or(true),
        }),
        Some("Replace") => {
            let content = v["content"].as_str().unwrap_or("").to_string();
            let pattern = match (v["pattern"]["String"].as_str(), v["pattern"]["Regex"].as_str()) {
                (Some(s), _) => Pattern::Literal(s.to_string()),
                (None, Some(r)) => {
                    Pattern::Regex(regex::Regex::new(r).map_err(|e| format!("tokenizer.json: a Replace pattern: {e}"))?)
                }
                _ => return Err("tokenizer.json: a Replace normalizer without a pattern".into()),
            };
            out.push(Normalizer::Replace { pattern, content });
        }
        Some("Prepend") => out.push(Normalizer::Prepend(v["prepend"].as_str().unwrap_or("").to_string())),
        Some("NFC") => out.push(Normalizer::Nfc),
        Some("NFD") => out.push(Normalizer::Nfd),
        Some("NFKC") => out.push(Normalizer::Nfkc),
        Some("NFKD") => out.push(Normalizer::Nfkd),
        Some("Lowercase") => out.push(Normalizer::Lowercase),
        _ => return Err(unsupported("normalizer", kind)),
    }
    Ok(())
}

fn pre_tokenizer(v: &Value, whitespace: &mut bool, metaspace: &mut Option<Metaspace>) -> Result<(), String> {
    let kind = &v["type"];
    match kind.as_str() {
        None if v.is_null() => {}
        Some("Sequence") => {
            for p in v["pretokenizers"].as_array().into_iter().flatten() {
                if metaspace.is_some() {
                    return Err("tokenizer.json: pre-tokenizers after Metaspace are not supported".into());
                }
                pre_tokenizer(p, whitespace, metaspace)?;
            }
        }
        Some("WhitespaceSplit") if metaspace.is_none() => *whitespace = true,
        Some("Metaspace") if metaspace.is_none() => {
            let replacement = v["replacement"].as_str().and_then(|r| r.chars().next()).unwrap_or('▁');
            let prepend = match (v["prepend_scheme"].as_str(), v["add_prefix_space"].as_bool()) {
                (_, Some(false)) | (Some("never"), _) => Prepend::Never,
                (Some("first"), _) => Prepend::First,
                _ => Prepend::Always,
            };
            *metaspace = Some(Metaspace {
                replacement,
                prepend,
                split: v["split"].as_bool().unwrap_or(true),
            });
        }
        _ => return Err(unsupported("pre-tokenizer", kind)),
    }
    Ok(())
}

/// The ids before and after a text's own.
fn post_processor(v: &Value) -> Result<(Vec<u32>, Vec<u32>), String> {
    let kind = &v["type"];
    let pair = |p: &Value| -> Result<Vec<u32>, String> {
        Ok(vec![
            p[1].as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or("tokenizer.json: a post-processor's token has no id")?,
        ])
    };
    match kind.as_str() {
        None if v.is_null() => Ok((Vec::new(), Vec::new())),
        Some("RobertaProcessing" | "BertProcessing") => Ok((pair(&v["cls"])?, pair(&v["sep"])?)),
        Some("TemplateProcessing") => {
            let (mut before, mut after, mut seen) = (Vec::new(), Vec::new(), false);
            for piece in v["single"].as_array().into_iter().flatten() {
                if piece.get("Sequence").is_some() {
                    seen = true;
                } else if let Some(name) = piece["SpecialToken"]["id"].as_str() {
                    let ids = v["special_tokens"][name]["ids"]
                        .as_array()
                        .ok_or_else(|| format!("tokenizer.json: the template's `{name}` has no ids"))?;
                    let side = if seen { &mut after } else { &mut before };
                    side.extend(ids.iter().filter_map(|i| i.as_u64()).map(|i| i as u32));
                }
            }
            Ok((before, after))
        }
        Some("Sequence") => {
            let mut found = (Vec::new(), Vec::new());
            for p in v["processors"].as_array().into_iter().flatten() {
                if p["type"] != "ByteLevel" {
                    found = post_processor(p)?;
                }
            }
            Ok(found)
        }
        _ => Err(unsupported("post-processor", kind)),
    }
}

#[cfg(test)]
#[path = "spm_tests.rs"]
mod tests;
