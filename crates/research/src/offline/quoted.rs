//! The sentences a research section has quoted, and the note's own: each is quoted once, and a
//! near copy of one is not quoted either. obsidian-help repeats a sentence with a word changed
//! ("Type the name of the note, and then press Enter." / "… of the folder, …"; "If your
//! application is approved, future purchases will not be charged taxes." / "Once approved, …"):
//! a reader reads the second as the first again.

use std::collections::{HashMap, HashSet};

use scholia_index::tokenizer;
use scholia_vault::passage;

/// Two sentences sharing this share of their words (of the words either holds) say the same:
/// 3 in 5, a ratio of whole numbers, so that [`Quoted::copies`] can count what a copy lacks.
/// On the offline sections of obsidian-help en, de, ja, zh and th, 57 of 1,799 entries with two
/// passages had a second sharing 0.6 or more with the first; below 0.6 the pairs read as two
/// statements ("You can rename a note or folder without opening it" / "You can also delete a
/// note or folder", 0.53).
const SAME: (usize, usize) = (3, 5);

/// Sentences quoted so far (and the note's own).
pub(super) struct Quoted {
    keys: HashSet<String>,
    /// Each sentence's words.
    words: Vec<HashSet<String>>,
    /// The sentences holding each word (indices into `words`): a note of 16 MB has some
    /// 200,000 sentences, and a passage is compared only with those sharing a word of it.
    holding: HashMap<String, Vec<usize>>,
}

impl Quoted {
    /// `own`: the researched note's sentences, never quoted back to it.
    pub(super) fn new(own: impl IntoIterator<Item = String>) -> Self {
        let mut quoted = Quoted {
            keys: HashSet::new(),
            words: Vec::new(),
            holding: HashMap::new(),
        };
        for s in own {
            quoted.add(&s);
        }
        quoted
    }

    pub(super) fn add(&mut self, sentence: &str) {
        if self.keys.insert(key(sentence)) {
            let w = words(sentence);
            for word in &w {
                self.holding.entry(word.clone()).or_default().push(self.words.len());
            }
            self.words.push(w);
        }
    }

    /// Whether a sentence of words `w` is a near copy of one quoted. A near copy shares at
    /// least [`SAME`] of `w`'s words, so it lacks at most the rest (2 in 5, rounded down) and
    /// holds one of any that many and one more: of `w`'s words held by the fewest sentences,
    /// only the sentences holding those are compared.
    fn copies(&self, w: &HashSet<String>) -> bool {
        let mut rarest: Vec<&Vec<usize>> = w.iter().map(|x| self.holding.get(x).map_or(&NONE, |h| h)).collect();
        rarest.sort_by_key(|h| h.len());
        let (part, whole) = SAME;
        let enough = (whole - part) * w.len() / whole + 1;
        let mut seen = HashSet::new();
        rarest
            .into_iter()
            .take(enough)
            .flatten()
            .any(|&i| seen.insert(i) && same(w, &self.words[i]))
    }

    /// Up to `n` of `found`, in order, that are neither quoted nor near copies of a sentence
    /// quoted or of one taken before them.
    pub(super) fn fresh(&self, found: Vec<String>, n: usize) -> Vec<String> {
        let mut taken: Vec<(String, HashSet<String>)> = Vec::new();
        for p in found {
            if taken.len() == n {
                break;
            }
            if self.keys.contains(&key(&p)) {
                continue;
            }
            let w = words(&p);
            if self.copies(&w) || taken.iter().any(|(_, t)| same(&w, t)) {
                continue;
            }
            taken.push((p, w));
        }
        taken.into_iter().map(|(p, _)| p).collect()
    }
}

static NONE: Vec<usize> = Vec::new();

/// A sentence as compared for repeats: its words, lower-cased, without the mark that ends it
/// (obsidian-help it: a note's step "Seleziona Importa e attendi il completamento
/// dell'importazione." was quoted back to it from another note's list item without the stop).
fn key(s: &str) -> String {
    let words = s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    words
        .trim_end_matches(|c| passage::FULL_STOPS.contains(&c) || ".!?…;: ".contains(c))
        .to_string()
}

/// A sentence's words as the index has them; in a script without spaces, every pair of
/// characters of a run, as a reader compares them. The index's pairs left out what it does not
/// weigh (Thai's particles and short syllables): th quoted "การนำเข้าผ่านไฟล์เป็นวิธีทางเลือก…
/// ไม่รักษา Databases แต่ไม่ต้องใช้โทเค็น API หรือการเชื่อมต่ออินเทอร์เน็ต" and then, of the same
/// note, "นำเข้าผ่านไฟล์ ใช้ไฟล์ส่งออก `.zip` ของ Notion ไม่รักษา Databases แต่ไม่ต้องใช้โทเค็น API
/// หรือการเชื่อมต่ออินเทอร์เน็ต" (scripts/read-sections.py counted it a near copy).
fn words(s: &str) -> HashSet<String> {
    // Vietnamese syllables alone: a pair of them (`ghi chu`) is the index's, not a reader's.
    let mut out: HashSet<String> = tokenizer::terms(s)
        .into_iter()
        .filter(|t| !tokenizer::is_unspaced(t) && !t.contains(' '))
        .collect();
    // Runs of such letters, wherever they stand (`Enterキーを押します` holds one), with the
    // marks written on them, which are no letters (Khmer's coeng, Thai's tone marks).
    let unspaced = |c: char| {
        (tokenizer::is_word_char(c) || tokenizer::is_written_on(c))
            && tokenizer::is_unspaced(c.encode_utf8(&mut [0; 4]))
    };
    let mut run: Vec<char> = Vec::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if unspaced(c) {
            run.push(c);
            continue;
        }
        match run.len() {
            0 => {}
            1 => {
                out.insert(run[0].to_string());
            }
            _ => out.extend(run.windows(2).map(|w| w.iter().collect::<String>())),
        }
        run.clear();
    }
    out
}

fn same(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    let shared = a.intersection(b).count();
    let either = a.len() + b.len() - shared;
    let (part, whole) = SAME;
    either > 0 && shared * whole >= either * part
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `found` offered after `quoted`, what is taken (two at most).
    fn check(quoted: &[&str], found: &[&str], expected: &[&str]) {
        let q = Quoted::new(quoted.iter().map(|s| s.to_string()));
        let taken = q.fresh(found.iter().map(|s| s.to_string()).collect(), 2);
        assert_eq!(taken, expected, "after {quoted:?}");
    }

    #[test]
    fn a_sentence_is_quoted_once_and_a_near_copy_not_at_all() {
        // The same sentence, spaced, cased or stopped otherwise.
        check(&["Open the  vault."], &["open the vault", "Close it."], &["Close it."]);
        // A word changed: the second of an entry's passages is dropped for the next one.
        check(
            &[],
            &[
                "Type the name of the note, and then press Enter.",
                "Type the name of the folder, and then press Enter.",
                "Drag the tab to a tab group.",
            ],
            &[
                "Type the name of the note, and then press Enter.",
                "Drag the tab to a tab group.",
            ],
        );
        check(
            &["If your application is approved, future purchases will not be charged taxes."],
            &["Once approved, future purchases will not be charged taxes."],
            &[],
        );
        // Two statements about the same things.
        check(
            &["You can rename a note or folder without opening it, by using File explorer"],
            &["You can also delete a note or folder, using the File explorer."],
            &["You can also delete a note or folder, using the File explorer."],
        );
        // Character pairs compared in a script without spaces.
        check(
            &["パブリッシュによる変更の公開ダイアログで、サイトオプションの変更 をクリックします。"],
            &["パブリッシュによる変更の公開ダイアログで、サイトオプションの変更をクリックします。"],
            &[],
        );
        // Thai: the pairs of every character, not only those the index weighs.
        check(
            &[
                "การนำเข้าผ่านไฟล์เป็นวิธีทางเลือกในการนำเข้าข้อมูล Notion ของคุณ วิธีนี้ไม่รักษา Databases แต่ไม่ต้องใช้โทเค็น API หรือการเชื่อมต่ออินเทอร์เน็ต",
            ],
            &["นำเข้าผ่านไฟล์ ใช้ไฟล์ส่งออก `.zip` ของ Notion ไม่รักษา Databases แต่ไม่ต้องใช้โทเค็น API หรือการเชื่อมต่ออินเทอร์เน็ต"],
            &[],
        );
        // Khmer: a run goes on past its marks (the coeng of `ប្រអប់`, a Thai tone mark), which
        // are no letters; km quoted "in the Publish changes dialog, select / click Change site
        // options" one after the other.
        check(
            &[],
            &[
                "ក្នុងប្រអប់ Publish changes ជ្រើសរើស Change site options ។",
                "នៅក្នុងប្រអប់ Publish changes ចុច Change site options ។",
            ],
            &["ក្នុងប្រអប់ Publish changes ជ្រើសរើស Change site options ។"],
        );
        // Vietnamese: by its syllables, as a reader compares them; the pairs the index makes of
        // them (`ghi chu`) halved the share two such sentences have in common.
        check(
            &["Obsidian lưu canvas dưới dạng tệp `.canvas` sử dụng định dạng mở JSON Canvas."],
            &[
                "Obsidian lưu trữ dữ liệu canvas của bạn dưới dạng tệp `.canvas` sử dụng định dạng tệp mở có tên JSON Canvas.",
            ],
            &[],
        );
        // And in a run that begins with another script's word.
        check(
            &[],
            &[
                "ノートの名前を入力し、Enterキーを押します。",
                "フォルダの名前を入力し、Enterキーを押します。",
            ],
            &["ノートの名前を入力し、Enterキーを押します。"],
        );
        check(&[], &["", "Nothing."], &["", "Nothing."]);
    }

    #[test]
    fn a_sentence_repeats_whatever_its_case_spacing_and_final_stop() {
        let same = |a: &str, b: &str| assert_eq!(key(a), key(b), "{a} / {b}");
        same(
            "Seleziona Importa e attendi il completamento dell'importazione.",
            "seleziona  Importa e attendi il completamento dell'importazione",
        );
        same("インポートを待ちます。", "インポートを待ちます");
        same("Really?!", "really");
        assert_ne!(key("Use it. Then"), key("Use it then"));
        assert_eq!(key("..."), "");
    }

    /// What the index of words must give: the same as comparing with every sentence quoted.
    /// Sentences of a few words from a small vocabulary, so that near copies are common.
    #[test]
    fn comparing_by_shared_words_finds_what_comparing_with_all_finds() {
        let vocabulary = [
            "tab", "group", "drag", "file", "window", "note", "the", "a", "press", "enter", "新規", "タブ",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let sentence = |next: &mut dyn FnMut(usize) -> usize| {
            let len = 1 + next(7);
            (0..len)
                .map(|_| vocabulary[next(vocabulary.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut copies = 0;
        for _ in 0..2_000 {
            let own: Vec<String> = (0..next(12)).map(|_| sentence(&mut next)).collect();
            let found: Vec<String> = (0..1 + next(6)).map(|_| sentence(&mut next)).collect();
            let quoted = Quoted::new(own.clone());
            let taken = quoted.fresh(found.clone(), 2);
            // The reference: every sentence compared.
            let all: Vec<HashSet<String>> = own.iter().map(|s| words(s)).collect();
            let keys: HashSet<String> = own.iter().map(|s| key(s)).collect();
            let mut expected: Vec<(String, HashSet<String>)> = Vec::new();
            for p in found {
                if expected.len() == 2 {
                    break;
                }
                let w = words(&p);
                let copy =
                    keys.contains(&key(&p)) || all.iter().chain(expected.iter().map(|(_, t)| t)).any(|o| same(&w, o));
                copies += usize::from(copy);
                if !copy {
                    expected.push((p, w));
                }
            }
            let expected: Vec<String> = expected.into_iter().map(|(p, _)| p).collect();
            assert_eq!(taken, expected, "own {own:?}");
        }
        assert!(copies > 200, "only {copies} copies: the cases test little");
    }
}
