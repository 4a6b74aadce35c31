//! What a word is in scripts the Latin rules fail: where a Thai, Lao, Khmer or Myanmar token
//! ends, how short a Korean term may be, the Arabic article, and whether a text is
//! Vietnamese. Each rule was measured by hidden-link recall (`cargo bench --bench related`).

/// Scripts written without spaces between words: a token is a character (or a syllable, see
/// [`unspaced_end`]), and terms pair them.
pub(super) fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0x20000..=0x2FFFF) // CJK extensions B..
}

/// Where a token of an unspaced script that starts with `first` at `start` ends: after the
/// character for Han and kana; in Thai, Lao, Khmer and Myanmar, after the marks written on the
/// letter (vowel signs, tone marks) and, past a Khmer coeng or a Myanmar virama, the letter
/// stacked under it; in Thai and Lao, a vowel written before its consonant with the consonant,
/// and a vowel written after one (`า`) with it. A token is then a syllable or most of one
/// (`ស្វែ`, `ไม่`, `ค่า`), where each code point alone made pairs of a letter and its vowel
/// sign, and tone marks split words. Hidden-link recall on obsidian-help: km 0.595 -> 0.622;
/// th 0.632 -> 0.653 with the marks, 0.682 with the vowels before and after.
pub(super) fn unspaced_end(text: &str, start: usize, first: char) -> usize {
    let mut end = start + first.len_utf8();
    if !matches!(first as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF) {
        return end;
    }
    let mut prev = first;
    // A Thai or Lao vowel written before its consonant takes the consonant; a vowel written
    // after one (`า`, `ะ`, `ำ`) ends the syllable.
    let mut wants_consonant = matches!(first as u32, 0x0E40..=0x0E44 | 0x0EC0..=0x0EC4);
    for c in text[end..].chars() {
        let stacked = matches!(prev as u32, 0x17D2 | 0x1039) && is_unspaced_script(c);
        let consonant = wants_consonant && matches!(c as u32, 0x0E01..=0x0E2E | 0x0E81..=0x0EAE);
        let after =
            !wants_consonant && matches!(c as u32, 0x0E30 | 0x0E32 | 0x0E33 | 0x0E45 | 0x0EB0 | 0x0EB2 | 0x0EB3);
        if !(is_written_on(c) || stacked || consonant || after) {
            break;
        }
        end += c.len_utf8();
        prev = c;
        wants_consonant = false;
        if after {
            break;
        }
    }
    end
}

/// The combining marks of Thai, Lao, Myanmar and Khmer (Unicode's Mn and Mc in those blocks):
/// vowel signs, tone marks, Khmer's coeng.
pub fn is_written_on(c: char) -> bool {
    matches!(c as u32,
        0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E                    // Thai
        | 0x0EB1 | 0x0EB4..=0x0EBC | 0x0EC8..=0x0ECE                   // Lao
        | 0x102B..=0x103E | 0x1056..=0x1059 | 0x105E..=0x1060 | 0x1062..=0x1064
        | 0x1067..=0x106D | 0x1071..=0x1074 | 0x1082..=0x108D | 0x108F
        | 0x109A..=0x109D                                              // Myanmar
        | 0x17B4..=0x17D3 | 0x17DD) // Khmer
}

/// `STEM_CHARS` for a Korean word: most nouns are two syllables and the particles and
/// endings that follow them (`설정을`, `설정에서`) are what a cut at five kept apart. Hidden-link
/// recall on obsidian-help ko (two-syllable words terms, [`least_letters`]): 0.693 at five,
/// 0.689 at three, **0.705 at two**, 0.694 at one (0.649 before either change).
pub(super) const HANGUL_STEM: usize = 2;

/// The fewest characters a word of a spaced script needs to say what a note is about: three
/// letters, or two Hangul syllables (`설정`, `검색`: most Korean nouns; with three, recall on
/// obsidian-help ko was 0.673, with two 0.705).
pub fn least_letters(word: &str) -> usize {
    if word.chars().next().is_some_and(is_hangul) {
        2
    } else {
        3
    }
}

/// An Arabic word without the definite article and the particles written onto it (`ال`,
/// `وال`, `بال`, `فال`, `كال`, `لل`), when at least three letters are left: the article took
/// two of a stem's five letters (`الملاحظات` was `الملا`). Hidden-link recall on obsidian-help
/// ar 0.662 -> 0.681, fa 0.636 -> 0.641. (Hebrew's `ה` and the letters before it, stripped
/// alike, moved he 0.645 -> 0.647: not kept, as they also begin words. Stop 68, 8 draws: `ו`,
/// then `ב` `כ` `ל`, then `ה`, 0.675 -> 0.680; the bare forms beside the word, 0.673. Not kept
/// either: a stem must be one word's whatever note it is in, and `כספת` (vault) became `ספת`
/// while `הכספת` (the vault) became `כספת`.)
pub(super) fn without_article(word: &str) -> &str {
    if !word.starts_with(|c: char| matches!(c as u32, 0x0621..=0x064A)) {
        return word;
    }
    for prefix in ["وال", "بال", "فال", "كال", "ال", "لل"] {
        if let Some(rest) = word.strip_prefix(prefix)
            && rest.chars().count() >= 3
        {
            return rest;
        }
    }
    word
}

/// The letters Hebrew writes onto the word after them: and, the, in, to, from, that, as.
const HEBREW_PARTICLES: [char; 7] = ['ו', 'ה', 'ב', 'ל', 'מ', 'ש', 'כ'];

/// A Hebrew word without the one or two particles it may begin with, while three letters are
/// left (`בהגדרות`, "in the settings": `הגדרות`, `גדרות`): where a note's name may begin in
/// the word. Nothing for a word of another script.
pub fn hebrew_bare(word: &str) -> impl Iterator<Item = &str> {
    let hebrew = word.starts_with(|c: char| matches!(c as u32, 0x05D0..=0x05EA));
    let mut rest = word;
    (0..2).map_while(move |_| {
        let c = rest.chars().next().filter(|c| hebrew && HEBREW_PARTICLES.contains(c))?;
        let bare = &rest[c.len_utf8()..];
        (bare.chars().count() >= 3).then(|| {
            rest = bare;
            bare
        })
    })
}

/// Whether `text` is Vietnamese: among its first [`VIETNAMESE_LETTERS`] letters, one in
/// thirty is a letter only Vietnamese writes (`ơ`, `ư`, and the vowels with a tone mark of
/// Latin Extended Additional: `ế`, `ộ`, `ữ`). `ă` and `đ` are left out (Romanian, Croatian).
pub fn is_vietnamese(text: &str) -> bool {
    let (mut letters, mut marked) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            letters += usize::from(c.is_ascii_alphabetic());
        } else if matches!(c as u32, 0x1EA0..=0x1EF9 | 0x01A0 | 0x01A1 | 0x01AF | 0x01B0) {
            letters += 1;
            marked += 1;
        } else {
            letters += usize::from(c.is_alphabetic());
        }
        if letters >= VIETNAMESE_LETTERS {
            break;
        }
    }
    marked >= 5 && marked * 30 >= letters
}

/// Vietnamese syllables that join no pair of [`super::terms`]: function words (`và` "and",
/// `của` "of", `có thể` "can"), as written, lower-cased. A pair holding one is two words of a
/// sentence, not one word (`rồi chọn` "then select", `và kéo` "and drag").
pub fn is_vietnamese_function_syllable(syllable: &str) -> bool {
    static SYLLABLES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    SYLLABLES
        .get_or_init(|| {
            let mut list: Vec<&str> = include_str!("stopwords/vi-syllables.txt")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect();
            list.sort_unstable();
            list
        })
        .binary_search(&syllable)
        .is_ok()
}

/// Letters [`is_vietnamese`] reads: enough past a note's front matter, and a bounded cost per
/// note in a cold build.
const VIETNAMESE_LETTERS: usize = 600;

/// A Hangul syllable.
pub fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0xAC00..=0xD7A3)
}
