//! Thai and Khmer words shown to a reader, without the function words beside them. These
//! scripts write no space between words, so a word shown (key terms, what a cited note shares)
//! is the run of letters around a pair the index found (`surface::unspaced_word`), and takes
//! whatever stands beside it: a preposition in front (ในแถบด้านข้าง, "in the sidebar";
//! នៅលើកុំព្យូទ័រ, "on the computer") is left out, and a run of function words only (ของเรา,
//! "our"; គឺជា, "is"; សូមយោងទៅ, "please refer to") is not shown.

use std::sync::LazyLock;

/// A script's function words (`phrases/*.txt`), the words left out in front of a word (only
/// those no common word of the script starts with: not ของ, ของขวัญ is "gift") and after it
/// ("your", "our"), and its letters (a run of fewer than two is a piece of a word: นๆ of อื่นๆ).
struct Script {
    words: Vec<&'static str>,
    before: &'static [&'static str],
    after: &'static [&'static str],
    letters: std::ops::RangeInclusive<char>,
    /// Vowels written before the letter they follow in speech (Thai แ of แถบ).
    leading: std::ops::RangeInclusive<char>,
}

fn list(text: &'static str) -> Vec<&'static str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

static THAI: LazyLock<Script> = LazyLock::new(|| Script {
    words: list(include_str!("phrases/th.txt")),
    before: &[
        "ใน",
        "บน",
        "จาก",
        "และ",
        "หรือ",
        "เพื่อ",
        "สำหรับ",
        "โปรด",
        "หาก",
        "ให้",
        "จะ",
        "เมื่อ",
        "โดย",
        "เป็น",
        "ฉัน",
    ],
    after: &["ของคุณ", "ของเรา", "ของ", "ไปที่", "ไปยัง", "ด้วย", "อีกครั้ง"],
    letters: 'ก'..='ฮ',
    leading: 'เ'..='ไ',
});
static KHMER: LazyLock<Script> = LazyLock::new(|| Script {
    words: list(include_str!("phrases/km.txt")),
    before: &[
        "នៅលើ",
        "នៅក្នុង",
        "ក្នុង",
        "នៅ",
        "ជាមួយ",
        "សម្រាប់",
        "និង",
        "របស់",
        "ដែល",
        "សូម",
        "ដើម្បី",
        "ហើយ",
        "ត្រូវបាន",
    ],
    after: &["របស់អ្នក", "របស់យើង"],
    letters: 'ក'..='ឳ',
    leading: 'ក'..='ឳ',
});

/// `word` as shown: without a preposition in front, or `None` when it is function words only.
/// Words of other scripts are as they are.
pub(crate) fn shown(word: &str) -> Option<String> {
    let script: &Script = match word.chars().next().map(u32::from) {
        Some(0x0E00..=0x0E7F) => &THAI,
        Some(0x1780..=0x17FF) => &KHMER,
        _ => return Some(word.to_string()),
    };
    let letters = |s: &str| s.chars().filter(|c| script.letters.contains(c)).count();
    let mut rest = word;
    // One after another (ฉันจะหา…, "I will find…").
    while let Some(p) = script
        .before
        .iter()
        .filter(|p| rest.starts_with(**p))
        .max_by_key(|p| p.len())
        && letters(&rest[p.len()..]) >= 2
    {
        rest = &rest[p.len()..];
    }
    if let Some(a) = script.after.iter().find(|a| rest.ends_with(**a))
        && letters(&rest[..rest.len() - a.len()]) >= 2
    {
        rest = &rest[..rest.len() - a.len()];
    }
    let starts_a_word = rest
        .chars()
        .next()
        .is_some_and(|c| script.letters.contains(&c) || script.leading.contains(&c));
    (starts_a_word && letters(rest) >= 2 && !function_words_only(rest, &script.words)).then(|| rest.to_string())
}

/// Whether `s` is a run of `words` and nothing else.
pub(super) fn function_words_only(s: &str, words: &[&str]) -> bool {
    // whole[i]: whether s[i..] is such a run.
    let mut whole = vec![false; s.len() + 1];
    whole[s.len()] = true;
    for i in (0..s.len()).rev().filter(|&i| s.is_char_boundary(i)) {
        whole[i] = words.iter().any(|w| s[i..].starts_with(w) && whole[i + w.len()]);
    }
    whole[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_words_are_not_shown() {
        let check = |word: &str, expected: Option<&str>| assert_eq!(shown(word).as_deref(), expected, "{word}");
        // Thai: a preposition in front goes; function words only are not shown.
        check("ในแถบด้านข้าง", Some("แถบด้านข้าง"));
        check("บนเดสก์ท็อป", Some("เดสก์ท็อป"));
        check("ของเรา", None);
        check("คลิก", Some("คลิก"));
        // A word that starts as a function word does ("gift": ของ + ขวัญ).
        check("ของขวัญ", Some("ของขวัญ"));
        check("เว็บไซต์ของคุณ", Some("เว็บไซต์"));
        check("โปรดดู", None);
        check("อย่างไรก็ตาม", None);
        // A piece of a word: one letter and the repetition mark of อื่นๆ.
        check("นๆ", None);
        // "will" in front, "of", "to", "with", "again" after (obsidian-help th showed
        // จะผสานไฟล์, "will merge files"; ภูมิภาคของ, "region of").
        check("จะผสานไฟล์", Some("ผสานไฟล์"));
        check("ภูมิภาคของ", Some("ภูมิภาค"));
        check("ย้ายห้องนิรภัยไปที่", Some("ย้ายห้องนิรภัย"));
        check("ฉันจะหาเซิร์ฟเวอร์", Some("หาเซิร์ฟเวอร์"));
        // Not "with": ป้ายกำกับ (label) and เกี่ยวกับ (about) end so.
        check("แก้ไขป้ายกำกับ", Some("แก้ไขป้ายกำกับ"));
        check("ของคุณอีกครั้ง", None);
        // "Not" stays: ไม่พอดี, "does not fit", is no "fit".
        check("ไม่พอดี", Some("ไม่พอดี"));
        // Nothing is left out that would leave less than a word.
        check("ในที่", None);
        // Khmer.
        check("នៅលើកុំព្យូទ័រ", Some("កុំព្យូទ័រ"));
        check("គឺជា", None);
        check("សូមយោងទៅ", None);
        check("ដែលចែករំលែក", Some("ចែករំលែក"));
        check("ដើម្បីបើក", Some("បើក"));
        // "syntax" starts with វា ("it"), which is no word left out in front.
        check("វាក្យសម្ពន្ធ", Some("វាក្យសម្ពន្ធ"));
        check("លក្ខណៈសម្បត្តិ", Some("លក្ខណៈសម្បត្តិ"));
        // "two" starts with ពី ("from"), and is a word.
        check("ពីរ", Some("ពីរ"));
        // Other scripts as they are.
        check("Importer", Some("Importer"));
        check("リンク", Some("リンク"));
    }
}
