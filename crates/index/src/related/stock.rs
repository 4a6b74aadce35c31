//! Stock phrases: three words in a row that many notes of the vault hold, a documentation
//! vault's "(or `Cmd` on macOS)" and "Klicke mit der rechten Maustaste", a journal's template
//! lines. A word a note says only inside them tells nothing of what the note is about, yet
//! counted as a word it made Bookmarks, Quick switcher and Canvas related to Page preview
//! through `Cmd, Ctrl, macOS`. [`own_words`] blanks them: what is left is what the note's key
//! terms and its stem cosine are made of (its names and links are read from the whole text).

use std::collections::HashMap;

use tantivy::tokenizer::TokenStream;
use tantivy::{Searcher, Term};

use crate::{IndexError, VaultIndex, tokenizer};

/// The share of the vault's notes a phrase must be in to be stock, and at least
/// [`STOCK_NOTES`] notes, the note itself among them. On obsidian-help `en` (173 notes: six
/// notes), 0.03 takes Page preview's `Cmd`, `Ctrl`, `macOS` and Graph view's "upper right
/// corner" and leaves their subjects; 0.05 no longer takes the keyboard words.
const STOCK_SHARE: f32 = 0.03;
const STOCK_NOTES: f32 = 5.0;
/// Phrases counted for one note, in the order of its text: a phrase count reads positions,
/// and a long note would otherwise count thousands (the rest are taken as the note's own).
const MAX_COUNTED: usize = 300;
/// Positions a phrase's three words may span: two keys or numbers passed over at most.
const MAX_SPAN: usize = 4;
/// Positions a phrase that passes over keys may be off by in another note: `Ctrl+Shift+I (or
/// Cmd+Option+I on macOS)` is the phrase `Ctrl+B (or Cmd+B on macOS)` is.
const KEYS_SLOP: usize = 2;

/// Notes of postings the phrase counts of one note read at most (each phrase, those of its
/// rarest word); the phrases after are taken as the note's own. In 100,000 generated notes of
/// one vocabulary (Zipf), where the common words' phrases are in thousands of notes, finding a
/// note's own words took 21-67 ms with 200,000, 7-24 ms with 50,000 (ten notes, `scholia
/// research` of a note of `benches/vault.rs`'s kind); obsidian-help's languages read less.
const MAX_READ: u64 = 50_000;

/// `text` with every word that lies in a stock phrase blanked (replaced by spaces, so offsets
/// and the other words stay). Words of scripts written without spaces are left: their
/// "phrases" are three characters, often one common word; so is Vietnamese, where three
/// syllables are a word and a half (blanking them, hidden-link recall on obsidian-help vi
/// fell from 0.671 to 0.655).
pub(super) fn own_words(
    index: &VaultIndex,
    searcher: &Searcher,
    text: &str,
    indexed: u64,
) -> Result<String, IndexError> {
    let n = searcher.num_docs() as f32;
    // Notes holding the phrase, this one among them (its copy in the index, if any, is
    // counted in the vault's figure, so others must make up the rest).
    let floor = (n * STOCK_SHARE).max(STOCK_NOTES).ceil() as u64 - 1 + indexed;
    if searcher.num_docs() < floor || tokenizer::is_vietnamese(text) {
        return Ok(text.to_string());
    }
    // The words (position, byte range, text) a phrase is made of: not a key's letter or a
    // number, nor a key pressed with another, which a phrase passes over (`Ctrl+P (or Cmd+P on
    // macOS)`, `Ctrl+E (or Cmd+E on macOS)` and `Ctrl+Enter (or Cmd+Enter on macOS)` are one
    // phrase).
    let mut words: Vec<(usize, usize, usize, String)> = Vec::new();
    let mut analyzer = tokenizer::words();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        let t = stream.token();
        if !is_gap(&t.text) && !text[..t.offset_from].ends_with('+') {
            words.push((t.position, t.offset_from, t.offset_to, t.text.clone()));
        }
    }
    let mut df: HashMap<&str, u64> = HashMap::new();
    let mut counted: HashMap<([&str; 3], [usize; 2]), bool> = HashMap::new();
    let mut stock = vec![false; words.len()];
    // Postings the phrase counts may read, at most (their rarest words' notes).
    let mut read = 0u64;
    for i in 0..words.len().saturating_sub(2) {
        let three = [&words[i], &words[i + 1], &words[i + 2]];
        let at = [three[1].0 - three[0].0, three[2].0 - three[0].0];
        if at[1] > MAX_SPAN || three.iter().any(|w| tokenizer::is_unspaced(&w.3)) {
            continue;
        }
        let key = ([three[0].3.as_str(), three[1].3.as_str(), three[2].3.as_str()], at);
        // A phrase of function words alone blanks nothing that counts.
        if !key.0.iter().any(|w| tokenizer::is_term(w)) {
            continue;
        }
        let is_stock = match counted.get(&key) {
            Some(&s) => s,
            None if counted.len() >= MAX_COUNTED => false,
            None => {
                // A phrase is in no more notes than its rarest word.
                let mut rarest = u64::MAX;
                for w in key.0 {
                    let d = match df.get(w) {
                        Some(&d) => d,
                        None => {
                            let d = index.live_doc_freq(searcher, &Term::from_field_text(index.fields.body, w))?;
                            df.insert(w, d);
                            d
                        }
                    };
                    rarest = rarest.min(d);
                }
                let s = rarest >= floor && read < MAX_READ && {
                    read += rarest;
                    // Passing over keys: as many as another note's shortcut has.
                    let slop = if at[1] > 2 { KEYS_SLOP } else { 0 };
                    holds_at_least(index, searcher, key.0, at, slop, floor)?
                };
                counted.insert(key, s);
                s
            }
        };
        if is_stock {
            stock[i..i + 3].iter_mut().for_each(|s| *s = true);
        }
    }
    let mut out = text.to_string();
    // Each word becomes as many spaces as it has bytes: the text around keeps its offsets.
    for (w, _) in words.iter().zip(&stock).filter(|(_, s)| **s) {
        out.replace_range(w.1..w.2, &" ".repeat(w.2 - w.1));
    }
    Ok(out)
}

/// Whether a token is passed over in a phrase: a single letter or digit (a key of a shortcut,
/// a step's number) or a number.
fn is_gap(token: &str) -> bool {
    (token.len() == 1 && token.as_bytes()[0].is_ascii_alphanumeric()) || token.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `floor` live notes or more hold the three `words`, the second `at[0]` positions
/// after the first and the third `at[1]`, each `slop` positions off at most, all told, and in
/// their order: counting stops there (a stock phrase of a large vault is in thousands).
/// Tantivy's sloppy phrase query is not used: it chains the words by the sizes of their
/// postings in each segment, so what it matched changed as notes were rewritten.
fn holds_at_least(
    index: &VaultIndex,
    searcher: &Searcher,
    words: [&str; 3],
    at: [usize; 2],
    slop: usize,
    floor: u64,
) -> Result<bool, IndexError> {
    use tantivy::postings::Postings;
    use tantivy::schema::IndexRecordOption;
    use tantivy::{DocSet, TERMINATED};
    let mut found = 0u64;
    let mut positions: [Vec<u32>; 3] = Default::default();
    'segments: for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(index.fields.body)?;
        let mut postings = Vec::with_capacity(3);
        for w in words {
            let term = Term::from_field_text(index.fields.body, w);
            let read = inverted.read_postings(&term, IndexRecordOption::WithFreqsAndPositions);
            match read.map_err(tantivy::TantivyError::from)? {
                Some(p) => postings.push(p),
                None => continue 'segments,
            }
        }
        let alive = segment.alive_bitset();
        let mut doc = 0;
        'docs: loop {
            // The first note at or after `doc` that holds the three words.
            loop {
                let mut agreed = true;
                for p in &mut postings {
                    let next = if p.doc() < doc { p.seek(doc) } else { p.doc() };
                    if next == TERMINATED {
                        break 'docs;
                    }
                    if next > doc {
                        doc = next;
                        agreed = false;
                    }
                }
                if agreed {
                    break;
                }
            }
            if alive.is_none_or(|a| a.is_alive(doc)) {
                for (p, out) in postings.iter_mut().zip(&mut positions) {
                    p.positions(out);
                }
                if holds_near(&positions, at, slop) {
                    found += 1;
                    if found >= floor {
                        return Ok(true);
                    }
                }
            }
            doc += 1;
        }
    }
    Ok(false)
}

/// Whether the three words' `positions` (each ascending) hold them in order, the second
/// `at[0]` after the first and the third `at[1]`, `slop` positions off at most, all told.
fn holds_near(positions: &[Vec<u32>; 3], at: [usize; 2], slop: usize) -> bool {
    let [first, second, third] = positions;
    let slop = slop as i64;
    // How far from `want` the nearest of `list` is, among those between `after` and `before`
    // (both left out) and `slop` from it at most.
    let nearest = |list: &[u32], want: i64, after: i64, before: i64| {
        let (lo, hi) = ((want - slop).max(after + 1), (want + slop).min(before - 1));
        let start = list.partition_point(|&q| i64::from(q) < lo);
        list[start..]
            .iter()
            .map(|&q| i64::from(q))
            .take_while(|&q| q <= hi)
            .map(|q| (q - want).abs())
            .min()
    };
    second.iter().any(|&p| {
        let p = i64::from(p);
        nearest(first, p - at[0] as i64, -1, p)
            .is_some_and(|b| nearest(third, p + (at[1] - at[0]) as i64, p, i64::MAX).is_some_and(|a| a + b <= slop))
    })
}

#[cfg(test)]
mod tests {
    /// `check(notes, text, expected)`: the words of `text` left once the stock phrases of a
    /// vault of `notes` are blanked.
    fn check(notes: &[(String, String)], text: &str, expected: &str) {
        let notes: Vec<(&str, &str)> = notes.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let f = crate::fixture::vault(&notes);
        let searcher = f.index.searcher();
        let own = super::own_words(&f.index, &searcher, text, 0).unwrap();
        assert_eq!(
            own.split_whitespace().collect::<Vec<_>>().join(" "),
            expected,
            "{text:?}"
        );
    }

    /// A vault of `total` notes, the first holding `phrase(i)` where it gives one.
    fn vault(total: usize, phrase: impl Fn(usize) -> Option<String>) -> Vec<(String, String)> {
        (0..total)
            .map(|i| {
                let body = match phrase(i) {
                    Some(p) => format!("Topic{i} words here. {p} to go on."),
                    None => format!("Topic{i} other words."),
                };
                (format!("n{i}.md"), body)
            })
            .collect()
    }

    /// The keyboard phrase in the first `holding` of `total` notes.
    fn keyboard(holding: usize, total: usize) -> Vec<(String, String)> {
        vault(total, |i| {
            (i < holding).then(|| "Press Ctrl (or Cmd on macOS)".to_string())
        })
    }

    #[test]
    fn a_phrase_many_notes_hold_is_blanked() {
        let notes = keyboard(6, 10);
        // ("to" too: the vault's notes go on "macOS) to".)
        check(
            &notes,
            "Hover a link and press Ctrl (or Cmd on macOS) to preview it.",
            "Hover a link and ( ) preview it.",
        );
        // Its words elsewhere stay: only their stock uses are blanked.
        check(&notes, "Cmd is a key; macOS a system.", "Cmd is a key; macOS a system.");
    }

    #[test]
    fn a_phrase_passes_over_keys_and_numbers() {
        let keys = ["P", "O", "E", "1", "K", "22"];
        let notes = vault(10, |i| {
            keys.get(i).map(|k| format!("Press Ctrl+{k} (or Cmd+{k} on macOS)"))
        });
        check(
            &notes,
            "Hover, and press Ctrl+Z (or Cmd+Z on macOS).",
            "Hover, and +Z ( +Z ).",
        );
        // Three positions apart at most: a word between is another phrase.
        check(&notes, "Press Ctrl or Cmd on macOS.", "Press Ctrl or Cmd on macOS.");
        // A key pressed with another is passed over as a letter is (Quick switcher's
        // `Ctrl+Enter` showed `Cmd` as a word it shares with Unique note creator).
        check(
            &notes,
            "Open it in a new tab with Ctrl+Enter (or Cmd+Enter on macOS).",
            "Open it in a new tab with +Enter ( +Enter ).",
        );
        // Keys of a shortcut are passed over however many it has.
        check(
            &notes,
            "Close it with Ctrl+Shift+W (or Cmd+Shift+W on macOS).",
            "Close it with +Shift+W ( +Shift+W ).",
        );
        // A word after a plus sign and a space is a word.
        check(&notes, "Ctrl + Cmd on macOS.", "Ctrl + Cmd on macOS.");
    }

    #[test]
    fn a_phrase_over_keys_is_found_whichever_word_is_commoner() {
        // Six notes hold the words of "alpha 1 beta 2 gamma" with keys between, fourteen others
        // make beta, or gamma, the commoner word. Tantivy's sloppy phrase chains its words rarest
        // first in each segment, so whether it found "alpha 1 2 3 beta 4 5 6 gamma" (two keys
        // more, twice) followed the words' counts: a note rewritten moves to a new segment, and
        // which words another note's research blanked changed between a first and a second run
        // (obsidian-help en, Editing shortcuts).
        for common in ["beta", "gamma"] {
            let notes = |holding: &str| {
                vault(30, |i| match i {
                    0..6 => Some(holding.to_string()),
                    6..20 => Some(format!("{common} again")),
                    _ => None,
                })
            };
            let text = "Then alpha 1 beta 2 gamma.";
            // Two keys more, or fewer, all told: the same phrase.
            check(&notes("alpha 1 2 beta 3 4 gamma"), text, "Then 1 2 .");
            check(&notes("alpha beta gamma"), text, "Then 1 2 .");
            // More: another.
            check(&notes("alpha 1 2 3 beta 4 5 6 gamma"), text, text);
            check(&notes("alpha 1 2 3 beta 4 5 gamma"), text, text);
            check(&notes("alpha 1 2 3 beta 4 gamma"), text, "Then 1 2 .");
            // The words in another order: another.
            check(&notes("gamma 1 beta 2 alpha"), text, text);
        }
    }

    proptest::proptest! {
        /// `holds_near` finds what trying every three positions finds.
        #[test]
        fn holds_near_is_every_three_positions_tried(
            lists in proptest::collection::vec(proptest::collection::btree_set(0u32..40, 0..8), 3),
            gaps in (1usize..4, 1usize..4),
            slop in 0usize..3,
        ) {
            let positions: [Vec<u32>; 3] = std::array::from_fn(|i| lists[i].iter().copied().collect());
            let at = [gaps.0, gaps.0 + gaps.1];
            let [a, b, c] = &positions;
            let off = |x: u32, y: u32, gap: usize| (i64::from(y) - i64::from(x) - gap as i64).abs();
            let every = a.iter().any(|&x| {
                b.iter().filter(|&&y| y > x).any(|&y| {
                    c.iter().filter(|&&z| z > y).any(|&z| off(x, y, gaps.0) + off(y, z, gaps.1) <= slop as i64)
                })
            });
            proptest::prop_assert_eq!(super::holds_near(&positions, at, slop), every);
        }
    }

    #[test]
    fn a_phrase_few_notes_hold_stays() {
        // With the note, four notes: under five.
        check(
            &keyboard(3, 10),
            "press Ctrl (or Cmd on macOS)",
            "press Ctrl (or Cmd on macOS)",
        );
    }

    #[test]
    fn unspaced_scripts_and_small_vaults_are_left() {
        let notes = vault(10, |i| (i < 8).then(|| "设置中的核心插件".to_string()));
        check(&notes, "打开设置中的核心插件", "打开设置中的核心插件");
        check(
            &keyboard(3, 3),
            "press Ctrl (or Cmd on macOS)",
            "press Ctrl (or Cmd on macOS)",
        );
    }
}
