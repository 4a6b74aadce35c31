//! The key terms a section names: of the words the note weighs most, first those it writes
//! where a reader looks for what it is about (its title, other names and headings, and the
//! focus asked for). The weights alone led with words said in passing: ja 数式 (formulas)
//! showed "price, formula, 計算, 通貨, 期限, toFixed" from its examples, de Canvas "wählst"
//! (you select); the opening, tried too, brought its own (better, trying, away).

use std::collections::{HashMap, HashSet};

use scholia_index::{Likeness, Terms, tokenizer};

/// How far down the weighed terms (times the terms shown) such a word is taken from.
const REACH: usize = 2;

/// The first `n` of `terms` (heaviest first), and of the next `n` × ([`REACH`] - 1) those
/// `note` writes in its title, names, headings or focus; those first, then of the rest those
/// the note writes twice or more. A section shows the first `n` of them it can show as the
/// note writes them (a word none of the `n` heaviest is shown only for such a word, never for
/// a word said in passing). obsidian-help en led with words said once: "receiving,
/// conflicting, assistance, developing, strong" (Troubleshoot Obsidian Publish), "turn,
/// adhere" (Plugin security).
pub(super) fn topical_first(terms: &Terms, note: &Likeness, n: usize) -> Vec<String> {
    // The note's words, as many times as it writes them.
    let written = tokenizer::terms(&note.text);
    let labels = labels_only(note, &written);
    let topical: HashSet<String> = [note.title.as_str(), note.focus.as_str()]
        .into_iter()
        .chain(note.aliases.iter().map(String::as_str))
        .chain(note.headings.iter().map(String::as_str))
        .flat_map(tokenizer::terms)
        // Not a lone character of a script without spaces (版 of `Android版Obsidian`).
        .filter(|t| tokenizer::is_word_term(t, tokenizer::Languages::NONE))
        .filter(|t| !labels.contains(t))
        .collect();
    let reach: Vec<&String> = terms
        .0
        .iter()
        .map(|(t, _)| t)
        .filter(|t| !labels.contains(*t))
        .collect();
    let reach = &reach[..reach.len().min(n * REACH)];
    // How often the note writes each word: a word said once, in passing, comes after those it
    // says again.
    let mut times: HashMap<String, usize> = HashMap::new();
    for t in &written {
        *times.entry(t.clone()).or_default() += 1;
    }
    let again = |t: &str| times.get(t).is_some_and(|n| *n >= 2);
    let first = reach.iter().filter(|t| topical.contains(**t));
    let rest = || reach.iter().take(n).filter(|t| !topical.contains(**t));
    first
        .chain(rest().filter(|t| again(t)))
        .chain(rest().filter(|t| !again(t)))
        .map(|t| (*t).clone())
        .collect()
}

/// The words the note writes only in its headings (not in its title, names or focus, nor
/// anywhere in its text but the headings): a section's label, "Open" of "## Open questions",
/// says nothing of what the note is about (example-vault's Sourdough starter led its key terms
/// with it).
fn labels_only(note: &Likeness, written: &[String]) -> HashSet<String> {
    // Each word of the headings: how many more times the text writes it than they do.
    let mut beyond: HashMap<String, isize> = HashMap::new();
    for t in note.headings.iter().flat_map(|h| tokenizer::terms(h)) {
        *beyond.entry(t).or_default() -= 1;
    }
    for t in written {
        if let Some(n) = beyond.get_mut(t) {
            *n += 1;
        }
    }
    // The text holds the headings: a word it writes less often than they do means it does not
    // (a heading's markup the readable text drops), and then nothing is taken for a label.
    if beyond.values().any(|more| *more < 0) {
        return HashSet::new();
    }
    let named: HashSet<String> = [note.title.as_str(), note.focus.as_str()]
        .into_iter()
        .chain(note.aliases.iter().map(String::as_str))
        .flat_map(tokenizer::terms)
        .collect();
    // A word the text writes no more often than the headings is only there.
    beyond
        .into_iter()
        .filter(|(t, more)| *more == 0 && !named.contains(t))
        .map(|(t, _)| t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(title: &str, headings: &[&str], text: &str, weighed: &[&str], n: usize, expected: &[&str]) {
        let note = Likeness {
            title: title.into(),
            headings: headings.iter().map(|h| h.to_string()).collect(),
            text: text.into(),
            ..Default::default()
        };
        let terms = Terms(
            weighed
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), 10.0 - i as f32))
                .collect(),
        );
        assert_eq!(topical_first(&terms, &note, n), expected);
    }

    #[test]
    fn the_words_of_the_title_and_headings_lead() {
        let text = "Daily notes opens a note for today's date. For instance, journals.";
        // "instance" and "activated" are said once, in passing.
        check(
            "Daily notes",
            &["Date format", "Journals"],
            text,
            &["instance", "daily", "activated", "journals", "format", "day"],
            3,
            &["daily", "journals", "format", "instance", "activated"],
        );
        // Taken from twice as far down as shown, no further.
        check(
            "Daily notes",
            &["Journals"],
            text,
            &["instance", "activated", "other", "daily", "journals"],
            2,
            &["daily", "instance", "activated"],
        );
        // The text alone leads nothing; a note whose subject words are not weighed keeps the
        // order of the weights.
        check(
            "Untitled",
            &[],
            text,
            &["instance", "journals"],
            2,
            &["instance", "journals"],
        );
        // A word written only in a heading is a section's label, not a key term ("Open" of
        // "Open questions"); one the text writes too stays ("starter").
        check(
            "Sourdough starter",
            &["Open questions", "Starter care"],
            "Open questions\nHow long can it wait?\nStarter care\nFeed the starter with rye.",
            &["open", "rye", "care", "starter", "wait"],
            3,
            &["starter", "rye", "wait"],
        );
        // Of the rest, a word the note says again comes before one said once, in passing.
        check(
            "Troubleshoot Publish",
            &[],
            "Receiving errors. A css file and its css rule, and more css.",
            &["receiving", "css", "rule"],
            2,
            &["css", "receiving"],
        );
        // A lone Han character of the title is no word to lead with.
        check(
            "Android版Obsidian",
            &[],
            "",
            &["ウィジェット", "ホーム", "版", "android"],
            2,
            &["android", "ウィジェット", "ホーム"],
        );
    }
}
