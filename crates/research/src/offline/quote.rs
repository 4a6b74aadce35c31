//! Which of a related note's sentences offline research quotes: the ones that tell the reader
//! why it is related, else what the note is.

use std::collections::HashSet;

use scholia_index::tokenizer;
use scholia_vault::parse::ParsedNote;
use scholia_vault::passage;

/// What a note says it is: its `description` (Accepted file formats: "This page describes the
/// accepted file formats within Obsidian.", where its first sentence is a list item), else its
/// opening sentences; up to `n`.
pub(super) fn what_it_is(parsed: &ParsedNote, text: &str, n: usize) -> Vec<String> {
    let described = parsed
        .frontmatter
        .as_ref()
        .and_then(|f| f.string("description"))
        .map(|d| passage::quotable(&d, 1))
        .unwrap_or_default();
    described.into_iter().chain(passage::quotable(text, n)).collect()
}

/// How many of `words` (as the index has them) the sentence holds, each once.
pub(super) fn words_held(sentence: &str, words: &HashSet<String>) -> usize {
    let mut held: Vec<String> = tokenizer::terms(sentence)
        .into_iter()
        .filter(|t| words.contains(t))
        .collect();
    held.sort();
    held.dedup();
    held.len()
}

/// Whether a sentence tells why its note is related to the researched one: it holds two of
/// `words` (the researched note's weighed words and the heaviest the two notes share), or one
/// of its key terms (`key`). A sentence holding one lighter word (Canvas quoting Ribbon's
/// "Scroll down to Advanced." for "scroll") is where a word recurs, not why the notes are alike.
pub(super) fn tells(sentence: &str, words: &HashSet<String>, key: &[String]) -> bool {
    words_held(sentence, words) >= 2 || tokenizer::terms(sentence).iter().any(|t| key.contains(t))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn a_sentence_tells_by_two_weighed_words_or_one_key_term() {
        // Canvas's weighed words, its key terms first.
        let weights: HashSet<String> = ["canvas", "zoom", "card", "scroll"]
            .into_iter()
            .map(String::from)
            .collect();
        let key = vec!["canvas".to_string(), "zoom".to_string()];
        let check = |sentence: &str, held: usize, tells: bool| {
            assert_eq!(super::words_held(sentence, &weights), held, "{sentence}");
            assert_eq!(super::tells(sentence, &weights, &key), tells, "{sentence}");
        };
        check("Scroll down to Advanced.", 1, false);
        check("Scroll down, then scroll up.", 1, false);
        check("Only .md and .canvas files can be restored.", 1, true);
        check("Zoom in using the scroll wheel.", 2, true);
        check("Drag a card, then scroll.", 2, true);
        check("Nothing of the note here.", 0, false);
    }
}
