//! The particles Hebrew and Arabic write onto the front of a word ("and", "in", "to", "as",
//! "the"): a word shown as what two notes share reads best without them, once, not as three
//! words (he `בהצפנה`, `ההצפנה`, `הצפנה`: in the encryption, the encryption, encryption).
//!
//! The index strips them for its own ends, by other rules: `tokenizer::hebrew_bare` tries
//! every particle letter to find a note's name inside a word, and an Arabic stem loses its
//! article whole. Here every form on the way is kept, since the one shown is the barest the
//! note itself writes.

/// Letters left, at least, once the particles are gone: fewer are no word to trust (ar `بحث`,
/// search, is no `ب` and `حث`).
const MIN_LETTERS: usize = 3;

/// Hebrew's, in the order they are written: and; in, as, to; the. `מ` (from) and `ש` (that)
/// begin too many words of their own (`מערך`, array, is no `ערך`, value; `שדרוג`, upgrade).
const HEBREW_AND: char = 'ו';
const HEBREW_PREPOSITIONS: [char; 3] = ['ב', 'כ', 'ל'];
const HEBREW_THE: char = 'ה';

/// Arabic's, in the order they are written: and, so; in, as, to; the (`ل` and `ال` are written
/// `لل`).
const ARABIC_AND: [char; 2] = ['و', 'ف'];
const ARABIC_PREPOSITIONS: [char; 3] = ['ب', 'ك', 'ل'];
const ARABIC_THE: &str = "ال";

/// The forms of `word` without one particle more each, the barest last, each of
/// [`MIN_LETTERS`] or more: he `ובהצפנה` → `בהצפנה`, `הצפנה`, `צפנה` (the last only shown if
/// the note writes it); ar `والمجلدات` (and the
/// folders) → `المجلدات`, `مجلدات`; ar `للويب` (for the web) → `الويب`, `ويب`. None for a
/// word of another script.
pub(super) fn without(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = word.to_string();
    let mut take = |rest: &mut String, bare: Option<String>| {
        if let Some(bare) = bare {
            *rest = bare;
            out.push(rest.clone());
        }
    };
    match word.chars().next().map(|c| c as u32) {
        Some(0x05D0..=0x05EA) => {
            for particles in [&[HEBREW_AND][..], &HEBREW_PREPOSITIONS, &[HEBREW_THE]] {
                let bare = strip_one(&rest, particles);
                take(&mut rest, bare);
            }
        }
        Some(0x0620..=0x064A) => {
            let bare = strip_one(&rest, &ARABIC_AND);
            take(&mut rest, bare);
            // `ل` before the article drops the article's alif: `للويب` is `ل` + `الويب`, and the
            // word after the article must have its letters.
            let bare = match rest.strip_prefix("لل") {
                Some(after) => (letters(after) >= MIN_LETTERS).then(|| format!("{ARABIC_THE}{after}")),
                None => strip_one(&rest, &ARABIC_PREPOSITIONS),
            };
            take(&mut rest, bare);
            let bare = rest
                .strip_prefix(ARABIC_THE)
                .filter(|b| letters(b) >= MIN_LETTERS)
                .map(str::to_string);
            take(&mut rest, bare);
        }
        _ => {}
    }
    out
}

/// `word` without "and" when "the" follows it (ar `والتصفية`, and the filtering → `التصفية`;
/// he `והצפנה` → `הצפנה`), whatever the note writes: no word of either language starts so
/// with [`MIN_LETTERS`] after the article. A reader reads "and the filtering" as a piece of a
/// clause; ar showed one in the key terms of 10 of 173 sections.
pub(super) fn without_and_before_the(word: &str) -> Option<String> {
    let and = word.chars().next()?;
    let bare = &word[and.len_utf8()..];
    let after = match and {
        c if ARABIC_AND.contains(&c) => bare.strip_prefix(ARABIC_THE)?,
        HEBREW_AND => bare.strip_prefix(HEBREW_THE)?,
        _ => return None,
    };
    (letters(after) >= MIN_LETTERS).then(|| bare.to_string())
}

/// `word` without its first letter, when that is one of `particles` and [`MIN_LETTERS`] are
/// left.
fn strip_one(word: &str, particles: &[char]) -> Option<String> {
    let c = word.chars().next().filter(|c| particles.contains(c))?;
    let bare = &word[c.len_utf8()..];
    (letters(bare) >= MIN_LETTERS).then(|| bare.to_string())
}

/// Letters, not the marks written on them (Arabic's short vowels and shadda, Hebrew's points).
fn letters(word: &str) -> usize {
    word.chars()
        .filter(|c| !matches!(*c as u32, 0x0591..=0x05C7 | 0x064B..=0x065F | 0x0670))
        .count()
}

#[cfg(test)]
mod tests {
    use super::without;

    #[test]
    fn particles_come_off_one_at_a_time() {
        let check = |word: &str, expected: &[&str]| assert_eq!(without(word), expected, "{word}");
        check("ובהצפנה", &["בהצפנה", "הצפנה", "צפנה"]);
        check("ההצפנה", &["הצפנה"]);
        check("מערך", &[]);
        check("שדרוג", &[]);
        // Three letters stay.
        check("לאתר", &["אתר"]);
        check("בית", &[]);
        check("والمجلدات", &["المجلدات", "مجلدات"]);
        check("للويب", &["الويب", "ويب"]);
        check("كخزنة", &["خزنة"]);
        check("بحث", &[]);
        check("المُثبّت", &["مُثبّت"]);
        check("Sync", &[]);
        // Nothing but particles, or too little left: nothing.
        check("", &[]);
        check("ובה", &[]);
        check("ال", &[]);
        check("لل", &[]);
        check("للب", &[]);
        check("وَ", &[]);
    }

    #[test]
    fn and_before_the_comes_off_always() {
        let check = |word: &str, expected: Option<&str>| {
            assert_eq!(super::without_and_before_the(word).as_deref(), expected, "{word}")
        };
        check("والتصفية", Some("التصفية"));
        check("فالملف", Some("الملف"));
        check("והצפנה", Some("הצפנה"));
        // No article after it, or too little after the article: as written.
        check("وتضمينها", None);
        check("واجهة", None);
        check("والدة", None);
        check("ורד", None);
        check("Sync", None);
    }
}
