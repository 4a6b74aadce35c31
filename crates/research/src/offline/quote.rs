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

/// How many of `words` a sentence's `terms` (as the index has them) hold, each once. In a
/// script without spaces, where the index has a word as overlapping character pairs (ダウ,
/// ウン, ンロ of ダウンロード), a run of such pairs held one after the other is one word held.
fn words_held(terms: &[String], words: &HashSet<String>) -> usize {
    let mut held: Vec<&String> = Vec::new();
    // The parts of the previous term, when it was a pair held.
    let mut previous: Option<Vec<String>> = None;
    for term in terms {
        if !words.contains(term) {
            previous = None;
            continue;
        }
        let parts = tokenizer::phrase(term).filter(|_| tokenizer::is_unspaced(term));
        let goes_on = matches!((&previous, &parts), (Some(p), Some(q)) if p[1] == q[0]);
        if !goes_on {
            held.push(term);
        }
        previous = parts;
    }
    held.sort();
    held.dedup();
    held.len()
}

/// Whether a sentence tells why its note is related to the researched one: it holds two of
/// `words` (the researched note's weighed words and the heaviest the two notes share), or one
/// of its key terms (`key`). A sentence holding one lighter word (Canvas quoting Ribbon's
/// "Scroll down to Advanced." for "scroll") is where a word recurs, not why the notes are alike.
pub(super) fn tells(sentence: &str, words: &HashSet<String>, key: &[String]) -> bool {
    let terms = tokenizer::terms(sentence);
    words_held(&terms, words) >= 2 || terms.iter().any(|t| key.contains(t))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use scholia_index::tokenizer;

    #[test]
    fn a_sentence_tells_by_two_weighed_words_or_one_key_term() {
        // Canvas's weighed words, its key terms first.
        let weights: HashSet<String> = ["canvas", "zoom", "card", "scroll"]
            .into_iter()
            .map(String::from)
            .collect();
        let key = vec!["canvas".to_string(), "zoom".to_string()];
        let check = |sentence: &str, held: usize, tells: bool| {
            assert_eq!(
                super::words_held(&tokenizer::terms(sentence), &weights),
                held,
                "{sentence}"
            );
            assert_eq!(super::tells(sentence, &weights, &key), tells, "{sentence}");
        };
        check("Scroll down to Advanced.", 1, false);
        check("Scroll down, then scroll up.", 1, false);
        check("Only .md and .canvas files can be restored.", 1, true);
        check("Zoom in using the scroll wheel.", 2, true);
        check("Drag a card, then scroll.", 2, true);
        check("Nothing of the note here.", 0, false);
    }

    #[test]
    fn a_word_of_a_script_without_spaces_is_held_once_however_many_pairs_it_is() {
        // ダウンロード is five pairs to the index; 無効 one.
        let words: HashSet<String> = ["ダウ", "ウン", "ンロ", "ロー", "ード", "無効"]
            .into_iter()
            .map(String::from)
            .collect();
        let held = |s: &str| super::words_held(&tokenizer::terms(s), &words);
        assert_eq!(held("ダウンロードします。"), 1);
        assert_eq!(held("ダウンロードを無効にします。"), 2);
        // Two runs of the same word, apart: one word.
        assert_eq!(held("ダウンロードしてダウンロード。"), 1);
        assert_eq!(held("無効です。"), 1);
        assert!(!super::tells("オンデマンドダウンロードを使う。", &words, &[]));
        assert!(super::tells("ダウンロードを無効にします。", &words, &[]));
    }
}
