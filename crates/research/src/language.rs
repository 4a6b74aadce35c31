//! The language a note is written in, for the fixed sentences of the sections scholia writes:
//! the front matter's `lang` (or `language`), else a guess from its script and most common
//! words. Only languages the templates have sentences for; English otherwise.

/// Languages the section templates are written in besides English.
pub const SUPPORTED: &[&str] = &["de", "fr", "es", "ja", "zh"];

/// Common words of Latin-script languages: those the templates have, and others, so that a note
/// in one of those reads as English, not as a neighbour sharing some of its words (Romanian and
/// Italian notes were guessed French, Portuguese and Catalan ones Spanish). A word frequent in
/// several languages is in each of their lists (`el` and `del` in Spanish and Catalan, `que` in
/// four, `des` in French and Catalan): a shared word adds to each, and the words only one has decide. At a tie the earlier
/// list wins: English, then the languages without sentences, so a doubt falls to English.
const COMMON: &[(&str, &[&str])] = &[
    (
        "en",
        &["the", "and", "is", "of", "to", "in", "that", "for", "with", "you"],
    ),
    (
        "it",
        &[
            "il", "di", "che", "è", "per", "della", "non", "gli", "nel", "sono", "una", "del", "con", "la",
        ],
    ),
    (
        "pt",
        &[
            "os", "não", "do", "da", "em", "com", "uma", "você", "ao", "são", "pode", "para", "que", "de",
        ],
    ),
    (
        "ca",
        &[
            "el", "els", "les", "amb", "és", "una", "del", "que", "per", "més", "aquesta", "també", "pots", "la", "de",
            "en", "des",
        ],
    ),
    (
        "ro",
        &[
            "și", "în", "este", "pentru", "să", "sau", "din", "care", "pe", "la", "un", "de", "poți", "nu",
        ],
    ),
    (
        "nl",
        &["het", "een", "van", "je", "niet", "voor", "op", "dat", "met", "kunt"],
    ),
    (
        "sv",
        &["och", "att", "är", "på", "för", "inte", "av", "som", "du", "kan", "det"],
    ),
    (
        "da",
        &["og", "er", "af", "ikke", "til", "på", "for", "det", "du", "kan", "at"],
    ),
    (
        "no",
        &["og", "er", "av", "ikke", "til", "på", "for", "det", "du", "å", "kan"],
    ),
    (
        "pl",
        &[
            "się", "jest", "nie", "że", "lub", "oraz", "na", "do", "aby", "możesz", "w", "z",
        ],
    ),
    (
        "cs",
        &[
            "je", "se", "že", "pro", "nebo", "které", "na", "lze", "můžete", "jako", "v", "s",
        ],
    ),
    (
        "sk",
        &[
            "sa", "je", "pre", "alebo", "ktoré", "na", "môžete", "ako", "že", "aby", "v", "s",
        ],
    ),
    (
        "tr",
        &[
            "ve", "bir", "bu", "için", "ile", "veya", "olarak", "daha", "gibi", "notu",
        ],
    ),
    (
        "id",
        &[
            "yang", "dan", "di", "untuk", "dengan", "ini", "dari", "dalam", "atau", "anda",
        ],
    ),
    (
        "vi",
        &["và", "của", "là", "có", "các", "để", "trong", "được", "một", "bạn"],
    ),
    (
        "hu",
        &["az", "és", "hogy", "egy", "nem", "vagy", "van", "meg", "ha", "is"],
    ),
    (
        "fi",
        &["ja", "on", "ei", "että", "tai", "voit", "kun", "tämä", "jos", "myös"],
    ),
    (
        "de",
        &["der", "die", "das", "und", "ist", "nicht", "mit", "eine", "ein", "sie"],
    ),
    (
        "fr",
        &[
            "le", "les", "et", "est", "des", "une", "pour", "dans", "vous", "sur", "avec", "que", "qui", "la", "de",
            "en",
        ],
    ),
    (
        "es",
        &[
            "el", "los", "las", "y", "es", "una", "con", "del", "que", "para", "puedes", "está", "como", "la", "de",
            "en",
        ],
    ),
];

/// Words of a language's list, at least, and at least one in this many of the note's words, for
/// the note to be guessed in it: a note of another script or of code whose few Latin words hold
/// five of a list (a credits page's names, `von der`) stays English.
const MIN_COMMON: usize = 5;
const COMMON_SHARE: usize = 50;

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
    // The first of the lists holding most of the note's words.
    let mut best = ("en", 0);
    for (code, list) in COMMON {
        let n = count(list);
        if n > best.1 {
            best = (code, n);
        }
    }
    let (code, n) = best;
    if n < MIN_COMMON || n * COMMON_SHARE < words.len() {
        return "en";
    }
    SUPPORTED.iter().find(|s| **s == code).copied().unwrap_or("en")
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
        // Languages without sentences read as English, not as a neighbour sharing words.
        check(
            "Pentru a crea o notă nouă, apasă pe butonul din bara laterală și scrie titlul. Nota este salvată în seif, la fel ca un fișier de text.",
            "en",
        );
        check(
            "Il plugin permette di creare una nota per ogni giorno. La nota è salvata nella cartella che scegli, con il modello della nota.",
            "en",
        );
        check(
            "Você pode criar uma nota para cada dia. A nota é salva na pasta que você escolher, com o modelo da nota e os links do dia.",
            "en",
        );
        check(
            "El connector permet crear una nota per a cada dia. La nota es desa a la carpeta que triïs, amb la plantilla de les notes i els enllaços del dia.",
            "en",
        );
    }
}
