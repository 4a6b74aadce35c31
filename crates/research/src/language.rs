//! The language a note is written in, for the fixed sentences of the sections scholia writes:
//! the front matter's `lang` (or `language`), else a guess from its script and most common
//! words. Only languages the templates have sentences for; English otherwise.

/// Languages the section templates are written in besides English.
pub const SUPPORTED: &[&str] = &["de", "fr", "es", "ja", "zh"];

/// Common words that tell a Latin-script language apart, English first.
const COMMON: &[(&str, &[&str])] = &[
    (
        "en",
        &["the", "and", "is", "of", "to", "in", "that", "for", "with", "you"],
    ),
    (
        "de",
        &["der", "die", "das", "und", "ist", "nicht", "mit", "eine", "ein", "sie"],
    ),
    (
        "fr",
        &["le", "la", "les", "et", "est", "des", "une", "un", "pour", "dans"],
    ),
    (
        "es",
        &["el", "los", "las", "y", "es", "una", "para", "con", "del", "que"],
    ),
];

/// The note's language: a code of [`SUPPORTED`], or `en`.
pub fn of(text: &str) -> &'static str {
    if let Some(fm) = scholia_vault::frontmatter::read(text)
        && let Some(lang) = fm.string("lang").or_else(|| fm.string("language"))
    {
        let code = lang.trim().to_lowercase();
        let code = code.split(['-', '_']).next().unwrap_or("");
        return SUPPORTED.iter().find(|s| **s == code).copied().unwrap_or("en");
    }
    let (mut kana, mut han) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '\u{3040}'..='\u{30ff}' => kana += 1,
            '\u{4e00}'..='\u{9fff}' => han += 1,
            _ => {}
        }
    }
    if kana >= 10 {
        return "ja";
    }
    if han >= 20 {
        return "zh";
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let count = |list: &[&str]| words.iter().filter(|w| list.contains(&w.as_str())).count();
    let (best, n) = COMMON
        .iter()
        .map(|(code, list)| (*code, count(list)))
        .max_by_key(|(_, n)| *n)
        .unwrap_or(("en", 0));
    if n >= 5 { best } else { "en" }
}

#[cfg(test)]
mod tests {
    #[test]
    fn languages_of_notes() {
        let check = |text: &str, expected: &str| assert_eq!(super::of(text), expected, "{text}");
        check("---\nlang: de-AT\n---\n# Notiz\n", "de");
        check("---\nlanguage: pt\n---\nTexto em português.\n", "en");
        check(
            "Die Synchronisierung ist nicht aktiv, und die Notizen sind mit der Cloud nicht verbunden. Das ist ein Problem.",
            "de",
        );
        check(
            "La synchronisation est une option pour les notes et les fichiers dans le coffre.",
            "fr",
        );
        check(
            "La sincronización es una opción para los archivos y las notas del que escribe con el móvil.",
            "es",
        );
        check("ノートをリンクするには、ブラケットを二つ入力します。", "ja");
        check(
            "要链接笔记，请输入两个方括号。双链是黑曜石的核心功能，可以在笔记之间建立联系。",
            "zh",
        );
        check(
            "The sync is on and the notes are in the cloud for you to see with ease.",
            "en",
        );
        check("Short.", "en");
    }
}
