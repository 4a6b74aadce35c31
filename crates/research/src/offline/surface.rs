//! How offline research shows the index's terms to a reader: as the note writes them.

use std::collections::{HashMap, HashSet};

use scholia_index::tokenizer;

/// The words of a note as written, by the term the index makes of each: what a reader is
/// shown instead of index terms (`Einführung`, not `einfuhrung`). Words of links, file names
/// and addresses are left out (`%20laws` is no word of the note), and a term that is no single
/// word of the note (a CJK character pair) has none.
pub(crate) struct Surface {
    /// The word written for each term.
    shown: HashMap<String, String>,
    text: String,
    joins: Joins,
    /// Every word written, as written.
    written: HashSet<String>,
    /// Whether the note's language inflects by endings ([`Surface::in_language`]).
    inflects: bool,
    /// Whether the note's language writes particles onto the front of its words (Hebrew,
    /// Arabic: [`particles`]).
    particles: bool,
    /// Whether the note is Chinese, whose runs of characters are clauses ([`chinese`]).
    chinese: bool,
    /// Whether the note is German, whose instructions address the reader ([`addresses`]).
    german: bool,
}

/// For each Vietnamese pair of the note (lower-cased as written), the syllables written before
/// and after each time (at most [`MAX_OCCURRENCES`]).
type Joins = HashMap<String, Vec<(Option<String>, Option<String>)>>;

impl Surface {
    /// The word of the note a term was made of, as written.
    pub(crate) fn written(&self, term: &str) -> Option<String> {
        self.shown.get(term).cloned()
    }

    pub(crate) fn of(text: &str) -> Surface {
        let mut map = HashMap::new();
        // Terms shown as the word they are a part of (see `ZWNJ`), until written alone.
        let mut parts: HashSet<String> = Default::default();
        // Every word written, for a Korean word's bare form (see `bare`).
        let mut written: HashSet<String> = Default::default();
        for chunk in text.split_whitespace() {
            let lower = chunk.to_lowercase();
            if ["://", "%", "/", "\\", "#", "="].iter().any(|c| lower.contains(c))
                || [".svg", ".png", ".jpg", ".gif", ".webp", ".md", ".pdf"]
                    .iter()
                    .any(|e| lower.contains(e))
            {
                continue;
            }
            // A word of more parts than a word has is read part by part.
            let words = chunk
                .split(|c: char| !tokenizer::is_word_char(c) && c != '-' && c != '\'' && c != ZWNJ)
                .flat_map(
                    |w| match w.split(ZWNJ).count() <= MAX_PARTS && w.chars().count() <= MAX_JOINED {
                        true => vec![w],
                        false => w.split(ZWNJ).collect(),
                    },
                );
            for word in words {
                let word = word.trim_matches(|c: char| !tokenizer::is_word_char(c));
                if word.is_empty() {
                    continue;
                }
                written.insert(word.to_string());
                let terms = tokenizer::terms(word);
                if word.contains(ZWNJ) {
                    // A word of parts: each part is shown as the whole word, until written alone.
                    for term in terms {
                        if !map.contains_key(&term) {
                            map.insert(term.clone(), word.to_string());
                            parts.insert(term);
                        }
                    }
                } else if let [term] = terms.as_slice() {
                    if parts.remove(term) {
                        map.remove(term);
                    }
                    // As written; a capital only at a sentence's start gives way to the word's
                    // lower-case use elsewhere ("Rye flour…" and "whole rye" → `rye`).
                    let lower = word.to_lowercase() == word;
                    let shown = map.entry(term.clone()).or_insert_with(|| word.to_string());
                    if lower && shown.to_lowercase() == word && *shown != word {
                        *shown = word.to_string();
                    }
                }
            }
        }
        let mut joins = Joins::new();
        if tokenizer::is_vietnamese(text) {
            // Two syllables with only spaces between, as written (`phóng to`), for the pairs
            // `terms` makes of a Vietnamese text.
            for line in text.lines() {
                for run in line.split(|c: char| !c.is_alphabetic() && c != ' ') {
                    // Each syllable and its term, made once.
                    let syllables: Vec<(&str, Option<String>)> = run
                        .split(' ')
                        .filter(|w| !w.is_empty())
                        .map(|w| match tokenizer::terms(w).as_slice() {
                            [term] => (w, Some(term.clone())),
                            _ => (w, None),
                        })
                        .collect();
                    for (i, pair) in syllables.windows(2).enumerate() {
                        if let [(a, Some(x)), (b, Some(y))] = pair {
                            map.entry(format!("{x} {y}")).or_insert_with(|| format!("{a} {b}"));
                            let sides = joins.entry(format!("{a} {b}").to_lowercase()).or_default();
                            if sides.len() < MAX_OCCURRENCES {
                                let side = |j: Option<usize>| j.and_then(|j| syllables.get(j)).map(|s| s.0.to_string());
                                sides.push((side(i.checked_sub(1)), side(Some(i + 2))));
                            }
                        }
                    }
                }
            }
        }
        Surface {
            shown: map,
            text: text.to_string(),
            joins,
            written,
            inflects: false,
            particles: false,
            chinese: false,
            german: false,
        }
    }

    /// The note's words as its language reads them: in one that inflects them by short endings,
    /// two forms of one are shown once (see [`two_endings`]); in one that writes particles onto
    /// them, a word is shown without them when the note writes it so (see [`Surface::bare`]).
    pub(crate) fn in_language(mut self, lang: &str) -> Surface {
        self.inflects = crate::language::inflects_by_endings(lang);
        self.particles = crate::language::writes_particles_on(lang);
        self.chinese = matches!(lang, "zh" | "zh-TW");
        self.german = lang == "de";
        self
    }

    /// The first `n` of `terms` a reader can be shown, as the note writes them: a word of the
    /// note, or in a script without spaces the word around a character pair (`リン` →
    /// `リンク`); each once, and once for all its forms (`callouts`, not `callout` after it). A
    /// word of a pair already shown is not shown again, and a pair takes the place of its word
    /// shown before it (`tròn`, then `vòng tròn`).
    pub(crate) fn show(&self, terms: &[String], n: usize) -> Vec<String> {
        self.show_in(terms, n, None)
    }

    /// [`Surface::show`] for the words the note shares with another, whose text is `other`:
    /// in a script without spaces, only a word both write. A character pair is shared by
    /// words that are not (ja showed `スナップショット`, snapshot, for a note on snapping,
    /// and `コミュニティチャンネル` for one with `チャンネル`; th and zh more than half of
    /// their words shown, which were no words of the note cited).
    pub(crate) fn show_shared(&self, terms: &[String], n: usize, other: &str) -> Vec<String> {
        self.show_in(terms, n, Some(other))
    }

    /// Whether the words `terms` make, shared with `other` as [`Surface::show_shared`] reads
    /// them, are all function words of Thai, Khmer or Chinese (th ไม่มี, "none"; zh `我們的`,
    /// "our"), and there are some.
    pub(crate) fn function_words_only(&self, terms: &[String], other: &str) -> bool {
        let mut found = terms
            .iter()
            .filter_map(|t| self.shown.get(t).cloned().or_else(|| self.unspaced(t, Some(other))))
            .peekable();
        found.peek().is_some() && found.all(|w| self.without_function_words(&w).is_none())
    }

    /// `word` without the function words beside it (Thai, Khmer; Chinese in a Chinese note),
    /// or `None` when it is function words only.
    fn without_function_words(&self, word: &str) -> Option<String> {
        let word = super::phrases::shown(word)?;
        match self.chinese {
            true => chinese::shown(&word),
            false => Some(word),
        }
    }

    fn show_in(&self, terms: &[String], n: usize, other: Option<&str>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let words = |s: &str| s.split(' ').map(str::to_lowercase).collect::<Vec<_>>();
        let within = |small: &[String], big: &[String]| small.iter().all(|w| big.contains(w));
        // `small` of a script without spaces inside `big`, which holds more than the word: a
        // phrase around it (zh `在导航栏上`, "on the navigation bar"; th `ทั่วทีม`, "across the
        // team") or a compound (ja `タブグループ`). Shown beside it, it says the word twice (ja
        // `タブ、タブグループ`, `翻訳、翻訳者` in 72 of 809 lists; zh 96 of 595; th 113 of 594).
        let held = |small: &str, big: &str| {
            tokenizer::is_unspaced(small) && tokenizer::is_unspaced(big) && big.contains(small)
        };
        // A word inside another shown: its words among the other's (a Vietnamese pair holds its
        // syllable), or the longer run of a script without spaces that holds the other.
        let inside = |small: &str, big: &str| within(&words(small), &words(big)) || held(big, small);
        // German verbs addressing the reader, shown only when nothing else is.
        let mut verbs: Vec<String> = Vec::new();
        for t in terms {
            let Some(s) = self.shown.get(t).cloned().or_else(|| self.unspaced(t, other)) else {
                continue;
            };
            if self.german && addresses(&s) {
                if verbs.len() < n && !verbs.contains(&s) {
                    verbs.push(s);
                }
                continue;
            }
            let s = if s.contains(' ') { self.whole(s) } else { s };
            // Thai, Khmer and Chinese: without the function words beside it.
            let Some(s) = self.without_function_words(&s) else {
                continue;
            };
            let s = self.bare(s);
            if out
                .iter()
                .any(|o| inside(&s, o) || same_stem(o, &s) || (self.inflects && two_endings(o, &s)))
            {
                continue;
            }
            match out.iter().position(|o| inside(o, &s)) {
                Some(at) => {
                    // The pair takes its syllable's place, the word the place of a run holding
                    // it; any other such goes.
                    out[at] = s.clone();
                    let mut i = 0;
                    out.retain(|o| {
                        let keep = i == at || !inside(o, &s);
                        i += 1;
                        keep
                    });
                }
                None => out.push(s),
            }
            if out.len() == n {
                break;
            }
        }
        if out.is_empty() { verbs } else { out }
    }

    /// A Korean word without the particle or ending written on it (`사이트에서`, on the site,
    /// → `사이트`; `플러그인이에요`, is a plugin → `플러그인`), when the note writes the bare word
    /// too, or the same word with another ending (`구독을`, `구독이`); a word of another script
    /// always (`Sync를` → `Sync`); and without an ending no noun has (`화살표를`, `선택하는`)
    /// always ([`korean`]). ko showed 1,128 of 2,784 words with an ending (`열기를`, `폴더는`).
    ///
    /// A Hebrew or Arabic word without the particles on its front, as bare as the note writes it
    /// ([`particles::without`]): he `בהצפנה`, in the encryption → `הצפנה`; ar `لموقعك`, for your
    /// site → `موقعك`. he showed a word in two forms or more in 117 of 721 lists, ar in 20 of 799.
    fn bare(&self, word: String) -> String {
        if self.particles
            && let Some(bare) = particles::without(&word)
                .into_iter()
                .rev()
                .find(|w| self.written.contains(w))
        {
            return bare;
        }
        if self.particles
            && let Some(bare) = particles::without_and_before_the(&word)
        {
            return bare;
        }
        korean::bare(&word, &|w| self.written.contains(w)).unwrap_or(word)
    }

    /// The word of the note around `pair` (see [`unspaced_word`]); with `other`, a word both
    /// texts write: the note's when `other` has it too, else `other`'s when the note has it.
    fn unspaced(&self, pair: &str, other: Option<&str>) -> Option<String> {
        let mine = unspaced_word(&self.text, pair);
        let Some(other) = other else { return mine };
        mine.filter(|w| other.contains(w.as_str()))
            .or_else(|| unspaced_word(other, pair).filter(|w| self.text.contains(w.as_str())))
    }

    /// A Vietnamese pair as the word of up to [`MAX_VIETNAMESE_SYLLABLES`] it is part of in
    /// the note: when the note writes its first two syllables twice or more, always after the
    /// same syllable, that syllable joins it in front (`độ xem` → `chế độ xem`), else when it
    /// writes its last two always before the same syllable, that one joins after (`plugin cốt`
    /// → `plugin cốt lõi`); again until neither holds. obsidian-help vi showed `Ghi chú ngẫu,
    /// chú ngẫu nhiên` for `ghi chú ngẫu nhiên` (random note), `tên miền tùy` for `tên miền
    /// tùy chỉnh` (custom domain): three syllables of a word of four.
    fn whole(&self, pair: String) -> String {
        let same = |seen: Vec<Option<&String>>| -> Option<String> {
            let first = (*seen.first()?)?;
            let joins = seen.len() >= 2
                && seen
                    .iter()
                    .all(|s| s.is_some_and(|s| s.to_lowercase() == first.to_lowercase()))
                && !tokenizer::is_vietnamese_function_syllable(&first.to_lowercase());
            joins.then(|| first.clone())
        };
        let sides = |a: &str, b: &str| self.joins.get(&format!("{a} {b}").to_lowercase());
        // The syllable that joins, and whether in front.
        let joins = |words: &[String]| -> Option<(bool, String)> {
            let n = words.len();
            let before = sides(&words[0], &words[1]).and_then(|s| same(s.iter().map(|s| s.0.as_ref()).collect()));
            let after =
                || sides(&words[n - 2], &words[n - 1]).and_then(|s| same(s.iter().map(|s| s.1.as_ref()).collect()));
            before.map(|w| (true, w)).or_else(|| after().map(|w| (false, w)))
        };
        let mut words: Vec<String> = pair.split(' ').map(String::from).collect();
        if words.len() != 2 {
            return pair;
        }
        let mut last = None;
        while words.len() < MAX_VIETNAMESE_SYLLABLES {
            let Some((front, w)) = joins(&words) else { break };
            match front {
                true => words.insert(0, w),
                false => words.push(w),
            }
            last = Some(front);
        }
        // Still joined at the most: a phrase, not a word (`mua giấy phép thương` of `mua giấy
        // phép thương mại`, buy a commercial licence); the last syllable joined goes.
        if words.len() == MAX_VIETNAMESE_SYLLABLES && joins(&words).is_some() {
            match last {
                Some(true) => drop(words.remove(0)),
                Some(false) => drop(words.pop()),
                None => {}
            }
        }
        words.join(" ")
    }
}

/// Most syllables a Vietnamese word shown has (`ghi chú ngẫu nhiên`, `biểu tượng thùng rác`).
const MAX_VIETNAMESE_SYLLABLES: usize = 4;

/// Whether a German word is a verb addressing the reader (`drückst`, `auswählst`,
/// `fortfährst`: "you press", "you select", "you continue"), or another word ending so that is
/// written lower-case, so no noun (`umfasst`, `ausgelöst`). obsidian-help de instructs its
/// reader as `du` throughout: such a verb was a key term of 18 of 173 sections and a word
/// shown beside 76 of 2,114 entries, where it says nothing of what two notes are about.
fn addresses(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_lowercase) && word.ends_with("st") && word.chars().count() >= 5
}

/// The zero-width non-joiner: Persian writes it between the parts of one word (مارک‌داون,
/// Markdown; the verb prefix of برمی‌گرداند; the plural of یادداشت‌ها), and the index's tokenizer
/// cuts there.
const ZWNJ: char = '\u{200c}';
/// Most parts, and letters, of a word joined so (`یادداشت‌های‌تان`, your notes, is three).
const MAX_PARTS: usize = 4;
const MAX_JOINED: usize = 40;

/// Occurrences of a pair kept to see whether it is part of a longer word.
const MAX_OCCURRENCES: usize = 64;

/// Whether two words shown are forms of one word: the same stem, as notes are compared by
/// ([`tokenizer::stems`]: `Einführung`, `Einführungen`), or, for words too short for a stem of
/// their own, one is the other with an `s` (`card`, `cards`). Words of scripts without spaces
/// and pairs of syllables are not.
fn same_stem(a: &str, b: &str) -> bool {
    let one = |w: &str| match tokenizer::stems(w).as_slice() {
        [stem] if !w.contains(' ') && !tokenizer::is_unspaced(w) => Some(stem.clone()),
        _ => None,
    };
    let (x, y) = (a.to_lowercase(), b.to_lowercase());
    let plural = |long: &str, short: &str| short.chars().count() > 2 && long.strip_suffix('s') == Some(short);
    one(a).is_some_and(|s| one(b) == Some(s))
        || (one(a).is_some() && one(b).is_some() && (plural(&x, &y) || plural(&y, &x)))
}

/// Whether two words are one word with two endings (pl `grupy`, `grupę`; ru `сайт`, `сайте`;
/// cs `stav`, `stavu`): the same three letters or more, then at most two letters each. Words of
/// five letters or fewer are their own stems, so `same_stem` cannot tell; one key-term or
/// shared-word list in 20 of pl, cs, ru and uk sections showed two such forms.
fn two_endings(a: &str, b: &str) -> bool {
    let (x, y): (Vec<char>, Vec<char>) = (a.to_lowercase().chars().collect(), b.to_lowercase().chars().collect());
    if x.len().min(y.len()) < 4 || x == y || !x.iter().chain(&y).all(|c| c.is_alphabetic()) {
        return false;
    }
    let common = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
    common >= 3 && x.len() - common <= 2 && y.len() - common <= 2
}

/// The script class of a letter written without spaces between words: kanji, hiragana,
/// katakana (with its long-vowel mark), Thai, Lao, Khmer, Myanmar (the scripts the tokenizer
/// cuts into syllables; without Khmer, a Khmer note's key terms were only its Latin words and
/// 37 of 119 entries of 15 km sections said nothing of why they were there).
fn script(c: char) -> Option<u8> {
    match c as u32 {
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xF900..=0xFAFF => Some(0),
        0x3040..=0x309F => Some(1),
        0x30A0..=0x30FF | 0x31F0..=0x31FF => Some(2),
        // Their digits and punctuation (Khmer's full stop `។`) end a word.
        0x0E4F..=0x0E5B | 0x0ED0..=0x0ED9 | 0x17D4..=0x17DA | 0x17E0..=0x17E9 | 0x1040..=0x104F => None,
        0x0E00..=0x0E7F => Some(3),
        0x0E80..=0x0EFF => Some(4),
        0x1780..=0x17FF | 0x19E0..=0x19FF => Some(5),
        0x1000..=0x109F => Some(6),
        _ => None,
    }
}

/// Longest katakana word shown (`オープンソースプロジェクト` is 13); a longer run is no word
/// but a phrase.
const MAX_UNSPACED_WORD: usize = 16;
/// Longest Thai word shown, in letters (its marks not counted: 16 code points before).
const MAX_THAI_WORD: usize = 16;
/// Longest Khmer, Lao or Myanmar word shown, in letters: `លក្ខណៈសម្បត្តិ` (properties) is 9,
/// `តំណភ្ជាប់ខាងក្រោយ` (backlinks) 10; `បង្កើតកំណត់ត្រាមួយឈ្មោះ` (create a record named) 13 is a
/// phrase.
const MAX_SYLLABIC_WORD: usize = 12;
/// Longest run of kanji shown (Japanese compounds: `多要素認証`, `考慮事項`; Chinese words
/// set off by punctuation or a line: `日记`, `类型标识符`).
const MAX_KANJI_WORD: usize = 6;

/// The word of `text` around `term` (a character pair of a script without spaces): the
/// shortest run of the pair's script holding it anywhere in the text, shown whole up to
/// [`MAX_UNSPACED_WORD`] letters (kanji: [`MAX_KANJI_WORD`]), a run of kanji with the kana
/// that ends it as a word ([`japanese::ending`]: `見出し`, not `見出`). `None` when the pair is in no
/// such run (Chinese writes whole clauses in one run: a clause, or a pair cut out of it such
/// as `天的`, is no key term), when `term` is not such a pair of `text`, or is hiragana (a
/// particle or an ending: `たみ`, `えば`).
fn unspaced_word(text: &str, term: &str) -> Option<String> {
    let letters = |s: &str| s.chars().filter(|c| !tokenizer::is_written_on(*c)).count();
    let chars: Vec<char> = term.chars().collect();
    let kind = chars.first().and_then(|c| script(*c))?;
    if kind == 1 || chars.iter().any(|c| script(*c) != Some(kind)) {
        return None;
    }
    let limit = match kind {
        0 => MAX_KANJI_WORD,
        2 => MAX_UNSPACED_WORD,
        3 => MAX_THAI_WORD,
        _ => MAX_SYLLABIC_WORD,
    };
    // Code points read on each side: a run longer than this holds more than `limit` letters
    // whatever its marks (a letter carries three marks at most).
    let cap = 4 * (limit + 1);
    let mut shortest: Option<String> = None;
    for (at, _) in text.match_indices(term).take(64) {
        let before: Vec<char> = text[..at]
            .chars()
            .rev()
            .take_while(|c| script(*c) == Some(kind))
            .take(cap + 1)
            .collect();
        let after: String = text[at + term.len()..]
            .chars()
            .take_while(|c| script(*c) == Some(kind))
            .take(cap + 1)
            .collect();
        if before.len() > cap || after.chars().count() > cap {
            continue;
        }
        let run: String = before
            .into_iter()
            .rev()
            .chain(chars.iter().copied())
            .collect::<String>()
            + &after;
        if shortest.as_ref().is_none_or(|s| letters(&run) < letters(s)) {
            shortest = Some(run);
        }
    }
    let mut run = shortest?;
    if kind == 0
        && let Some(kana) = japanese::ending(text, &run)
    {
        run.push(kana);
    }
    (letters(&run) <= limit).then_some(run)
}

mod chinese;
mod japanese;
mod korean;
mod particles;
#[cfg(test)]
mod tests;
