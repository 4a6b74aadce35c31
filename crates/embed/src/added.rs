//! Added tokens (`<s>`, `<mask>`, `[CLS]`, …): a `tokenizer.json`'s tokens that are cut out of
//! a text before the model reads it, as Hugging Face's `AddedVocabulary` cuts them: leftmost
//! match first and the longest there; `lstrip`/`rstrip` take the whitespace beside a token,
//! `single_word` matches only between non-word characters.

use std::sync::LazyLock;

use serde_json::Value;

#[derive(Debug)]
pub(crate) struct Added {
    pub content: String,
    pub id: u32,
    pub lstrip: bool,
    pub rstrip: bool,
    pub single_word: bool,
}

impl Added {
    /// The `added_tokens` of a `tokenizer.json`, each with whether it is matched in the
    /// normalised text (`normalized`, by default for tokens that are not special).
    pub fn read(v: &Value) -> Result<Vec<(Added, bool)>, String> {
        let mut out = Vec::new();
        for t in v["added_tokens"].as_array().into_iter().flatten() {
            let (Some(content), Some(id)) = (t["content"].as_str(), t["id"].as_u64()) else {
                return Err("tokenizer.json: an added token without content or id".into());
            };
            if content.is_empty() {
                continue;
            }
            let flag = |k: &str| t[k].as_bool().unwrap_or(false);
            let added = Added {
                content: content.to_string(),
                id: u32::try_from(id).map_err(|_| "tokenizer.json: an added token's id is too large")?,
                lstrip: flag("lstrip"),
                rstrip: flag("rstrip"),
                single_word: flag("single_word"),
            };
            out.push((added, t["normalized"].as_bool().unwrap_or(!flag("special"))));
        }
        Ok(out)
    }
}

/// A stretch of text, or an added token found in it.
pub(crate) enum Part<'a> {
    Text { text: &'a str, at_start: bool },
    Token(u32),
}

/// `text` cut at the added tokens in `tokens`: leftmost match first, the longest there.
pub(crate) fn split<'a>(text: &'a str, at_start: bool, tokens: &[Added]) -> Vec<Part<'a>> {
    static WORD_END: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"\w$").unwrap());
    static WORD_START: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"^\w").unwrap());
    let mut parts = Vec::new();
    let mut done = 0;
    let mut from = 0;
    while !tokens.is_empty() && from < text.len() {
        let found = text[from..].char_indices().find_map(|(i, _)| {
            let at = from + i;
            tokens
                .iter()
                .filter(|t| text[at..].starts_with(&t.content))
                .max_by_key(|t| t.content.len())
                .map(|t| (at, t))
        });
        let Some((at, token)) = found else { break };
        let (mut start, mut stop) = (at, at + token.content.len());
        from = stop;
        if token.single_word && (WORD_END.is_match(&text[..start]) || WORD_START.is_match(&text[stop..])) {
            continue;
        }
        if token.lstrip {
            start = text[..start].trim_end().len().max(done);
        }
        if token.rstrip {
            stop = text.len() - text[stop..].trim_start().len();
        }
        if done < start {
            parts.push(Part::Text {
                text: &text[done..start],
                at_start: at_start && done == 0,
            });
        }
        parts.push(Part::Token(token.id));
        done = stop;
    }
    if done < text.len() {
        parts.push(Part::Text {
            text: &text[done..],
            at_start: at_start && done == 0,
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Added tokens: leftmost and longest, `lstrip`/`rstrip` take the spaces beside them,
    /// `single_word` only between non-word characters.
    #[test]
    fn added_tokens_are_cut_as_the_reference_cuts_them() {
        let tokens = |specs: &[(&str, bool, bool, bool)]| -> Vec<Added> {
            specs
                .iter()
                .enumerate()
                .map(|(i, (c, l, r, w))| Added {
                    content: c.to_string(),
                    id: 100 + i as u32,
                    lstrip: *l,
                    rstrip: *r,
                    single_word: *w,
                })
                .collect()
        };
        let show = |parts: Vec<Part>| -> String {
            parts
                .iter()
                .map(|p| match p {
                    Part::Text { text, at_start } => format!("[{text}{}]", if *at_start { "^" } else { "" }),
                    Part::Token(id) => format!("<{id}>"),
                })
                .collect()
        };
        let t = tokens(&[
            ("<m>", true, false, false),
            ("<m>x", false, true, false),
            ("tok", false, false, true),
        ]);
        assert_eq!(show(split("a  <m> b", true, &t)), "[a^]<100>[ b]");
        assert_eq!(show(split("a <m>x  b", true, &t)), "[a ^]<101>[b]");
        assert_eq!(show(split("tok atok tok.", true, &t)), "<102>[ atok ]<102>[.]");
        assert_eq!(show(split("<m>", true, &t)), "<100>");
        assert_eq!(show(split("plain", false, &t)), "[plain]");
    }
}
