//! The language a note is written in, for the fixed sentences of the sections scholia writes:
//! the front matter's `lang` (or `language`), else a guess from its script and most common
//! words. Only languages the templates have sentences for; English otherwise.

/// Languages the section templates are written in besides English (a note in another reads
/// them in English). `zh` is Chinese in simplified characters, `zh-TW` in traditional ones.
pub const SUPPORTED: &[&str] = &[
    "de", "fr", "es", "it", "pt", "nl", "ru", "uk", "ko", "ja", "zh", "zh-TW", "pl", "cs", "sk", "sv", "da", "no",
    "fi", "hu", "ro", "ca", "tr", "id", "vi", "el", "he", "ar", "fa", "th", "km", "bn",
];

/// The English name of a language of [`SUPPORTED`] (English for any other code): what a
/// prompt asks the model to write in.
pub fn name(code: &str) -> &'static str {
    match code {
        "de" => "German",
        "fr" => "French",
        "es" => "Spanish",
        "it" => "Italian",
        "pt" => "Portuguese",
        "nl" => "Dutch",
        "ru" => "Russian",
        "uk" => "Ukrainian",
        "ko" => "Korean",
        "ja" => "Japanese",
        "zh" => "Chinese (simplified characters)",
        "zh-TW" => "Chinese (traditional characters)",
        "pl" => "Polish",
        "cs" => "Czech",
        "sk" => "Slovak",
        "sv" => "Swedish",
        "da" => "Danish",
        "no" => "Norwegian",
        "fi" => "Finnish",
        "hu" => "Hungarian",
        "ro" => "Romanian",
        "ca" => "Catalan",
        "tr" => "Turkish",
        "id" => "Indonesian",
        "vi" => "Vietnamese",
        "el" => "Greek",
        "he" => "Hebrew",
        "ar" => "Arabic",
        "fa" => "Persian",
        "th" => "Thai",
        "km" => "Khmer",
        "bn" => "Bengali",
        _ => "English",
    }
}

/// Common characters only traditional Chinese writes, and their simplified forms, in the same
/// order (`這` and `这`, this; `筆記` and `笔记`, note; `連結` and `连结`, link).
const TRADITIONAL: &str =
    "這們個與為說時會來對從還點開關於資檔筆記連結庫設體過見電實題區標號選單擇應該顯檢視變數權讓頁夾話請將無發動種";
const SIMPLIFIED: &str =
    "这们个与为说时会来对从还点开关于资档笔记连结库设体过见电实题区标号选单择应该显检视变数权让页夹话请将无发动种";

/// Common words of Latin-script languages: those the templates have, and others, so that a note
/// in one of those reads as English, not as a neighbour sharing some of its words (Romanian and
/// Italian notes were guessed French, Portuguese and Catalan ones Spanish). A word frequent in
/// several languages is in each of their lists (`el` and `del` in Spanish and Catalan, `que` in
/// four, `des` in French and Catalan): a shared word adds to each, and the words only one has decide. Two lists
/// holding as many of a note's words are a doubt, and a doubt falls to English.
const COMMON: &[(&str, &[&str])] = &[
    (
        "en",
        &["the", "and", "is", "of", "to", "in", "that", "for", "with", "you"],
    ),
    (
        "it",
        &[
            "il", "di", "che", "è", "per", "della", "non", "gli", "nel", "sono", "una", "del", "con", "la", "da",
        ],
    ),
    (
        "pt",
        &[
            "os", "não", "do", "da", "em", "uma", "você", "ao", "são", "pode", "para", "que", "de", "como",
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
        &[
            "og", "er", "af", "ikke", "til", "på", "for", "det", "du", "kan", "at", "dig", "noget", "bruge", "efter",
            "mellem",
        ],
    ),
    (
        "no",
        &[
            "og", "er", "av", "ikke", "til", "på", "for", "det", "du", "å", "kan", "deg", "noe", "bruke", "etter",
            "mellom",
        ],
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
            "je", "se", "že", "pro", "nebo", "které", "na", "lze", "můžete", "jako", "v", "s", "z", "do",
        ],
    ),
    (
        "sk",
        &[
            "sa", "je", "pre", "alebo", "ktoré", "na", "môžete", "ako", "že", "aby", "v", "s", "z", "do",
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
        &[
            "và", "của", "là", "có", "các", "để", "trong", "được", "một", "bạn", "di", "con", "khi", "này", "với",
            "không",
        ],
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

/// Words of a language's list, at least, of them this many different ones, and at least one in
/// this many of the note's words, for the note to be guessed in it: a note of code or of names
/// whose Latin words hold a few of a list (a credits page's `von der`, the MIT licence named
/// five times, `.com` in links) stays English.
const MIN_COMMON: usize = 5;
const MIN_DIFFERENT: usize = 3;
const COMMON_SHARE: usize = 50;

/// Whether the language writes a noun's case, number or "the" as a short ending on it: the
/// Slavic languages of [`SUPPORTED`] (`grupy`, `grupę`, `grupie`), Swedish, Danish and
/// Norwegian (`flik`, `fliken`, `flikar`), Romanian (`font`, `fontul`), Finnish, Hungarian and
/// Turkish (`kuva`, `kuvan`; `téma`, `témát`; `kart`, `kartın`): each is one word to its
/// reader. German and Dutch are not: they showed few such pairs (8 and 6 of about 830 lists),
/// some of them two words (`apple`, `apps`).
pub fn inflects_by_endings(code: &str) -> bool {
    matches!(
        code,
        "pl" | "cs" | "sk" | "ru" | "uk" | "sv" | "da" | "no" | "ro" | "fi" | "hu" | "tr"
    )
}

/// Whether the language writes its particles ("and", "in", "to", "the") onto the front of the
/// next word (Hebrew, Arabic): `בהצפנה`, `ההצפנה` and `הצפנה` are one word to its reader.
/// Persian, in the same script as Arabic, writes them apart.
pub fn writes_particles_on(code: &str) -> bool {
    matches!(code, "he" | "ar")
}

/// How many notes that say their language [`among`] asks.
const VOTES: usize = 5;

/// The language of a note whose own text does not say ([`guess`] is `None`): the one most of
/// `others` (the notes beside it) are guessed in, the first of a tie in their order, reading
/// them only until [`VOTES`] say one; English when none says. he's Credits page, names and
/// licences with a few Hebrew sentences (23 % of its letters), had an English section in a
/// Hebrew vault.
pub fn among(others: impl IntoIterator<Item = String>) -> &'static str {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for (i, code) in others.into_iter().filter_map(|t| guess(&t)).enumerate() {
        match counts.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => counts.push((code, 1)),
        }
        if i + 1 == VOTES {
            break;
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    counts.iter().find(|(_, n)| *n == most).map_or("en", |(c, _)| c)
}

/// The note's language, a code of [`SUPPORTED`] or `en`; `None` when its text does not say:
/// no script is a quarter of its letters and no language's common words are common enough
/// in its Latin words (a note of names, code or links).
pub fn guess(text: &str) -> Option<&'static str> {
    if let Some(fm) = scholia_vault::frontmatter::read(text)
        && let Some(lang) = fm.string("lang").or_else(|| fm.string("language"))
    {
        let code = lang.trim().to_lowercase().replace('_', "-");
        // Chinese in traditional characters, by its script or its regions' codes.
        if ["zh-tw", "zh-hk", "zh-mo"].contains(&code.as_str()) || code.starts_with("zh-hant") {
            return Some("zh-TW");
        }
        let code = match code.split('-').next().unwrap_or("") {
            // Norwegian's written standards, and Hebrew's former code.
            "nb" | "nn" => "no",
            "iw" => "he",
            code => code,
        };
        return Some(SUPPORTED.iter().find(|s| **s == code).copied().unwrap_or("en"));
    }
    let (mut kana, mut han, mut hangul) = (0usize, 0usize, 0usize);
    // Cyrillic letters, those only Russian has among the vault's Cyrillic languages (ы, э) and
    // those only Ukrainian has (і, ї, є, ґ).
    let (mut cyrillic, mut russian, mut ukrainian, mut letters) = (0usize, 0usize, 0usize, 0usize);
    let mut latin = 0usize;
    // Greek, Hebrew and Arabic-script letters; of the latter, those only Persian writes
    // (پ چ ژ گ and its own ک ی), those only Arabic writes (its ي ك ة), and Urdu's own.
    let (mut greek, mut hebrew, mut arabic_script) = (0usize, 0usize, 0usize);
    let (mut persian, mut arabic, mut urdu) = (0usize, 0usize, 0usize);
    // Thai, Khmer and Bengali letters; Han characters only traditional or only simplified
    // Chinese writes.
    let (mut thai, mut khmer, mut bengali) = (0usize, 0usize, 0usize);
    let (mut traditional, mut simplified) = (0usize, 0usize);
    for c in text.chars() {
        letters += usize::from(c.is_alphabetic());
        latin += usize::from(c.is_alphabetic() && (c < '\u{0250}' || ('\u{1e00}'..='\u{1eff}').contains(&c)));
        match c {
            '\u{3040}'..='\u{30ff}' => kana += 1,
            '\u{4e00}'..='\u{9fff}' => {
                han += 1;
                traditional += usize::from(TRADITIONAL.contains(c));
                simplified += usize::from(SIMPLIFIED.contains(c));
            }
            '\u{ac00}'..='\u{d7a3}' => hangul += 1,
            'ы' | 'э' | 'Ы' | 'Э' => (cyrillic, russian) = (cyrillic + 1, russian + 1),
            'і' | 'ї' | 'є' | 'ґ' | 'І' | 'Ї' | 'Є' | 'Ґ' => {
                (cyrillic, ukrainian) = (cyrillic + 1, ukrainian + 1)
            }
            '\u{0400}'..='\u{04ff}' => cyrillic += 1,
            '\u{0370}'..='\u{03ff}' | '\u{1f00}'..='\u{1fff}' => greek += 1,
            '\u{0590}'..='\u{05ff}' => hebrew += 1,
            'پ' | 'چ' | 'ژ' | 'گ' | 'ک' | 'ی' => (arabic_script, persian) = (arabic_script + 1, persian + 1),
            'ي' | 'ك' | 'ة' => (arabic_script, arabic) = (arabic_script + 1, arabic + 1),
            'ٹ' | 'ڈ' | 'ڑ' | 'ں' | 'ے' | 'ھ' | 'ہ' => (arabic_script, urdu) = (arabic_script + 1, urdu + 1),
            '\u{0600}'..='\u{06ff}' | '\u{0750}'..='\u{077f}' => arabic_script += 1,
            '\u{0e00}'..='\u{0e7f}' => thai += 1,
            '\u{1780}'..='\u{17ff}' | '\u{19e0}'..='\u{19ff}' => khmer += 1,
            '\u{0980}'..='\u{09ff}' => bengali += 1,
            _ => {}
        }
    }
    // A script is the note's when it is a quarter of its letters at least: a Latin-script note
    // quoting a line of Korean or Russian stays in its language.
    let mostly = |n: usize| n * 4 >= letters;
    if hangul >= 10 && mostly(hangul) {
        return Some("ko");
    }
    if kana >= 10 {
        return Some("ja");
    }
    if han >= 20 {
        return Some(if traditional > simplified { "zh-TW" } else { "zh" });
    }
    if cyrillic >= 20 && mostly(cyrillic) {
        // Russian writes ы and э (about 2 % of its letters), never і; Ukrainian the reverse.
        // Another Cyrillic language (Bulgarian, Serbian) writes neither.
        let (ru, uk) = (russian * 200 >= cyrillic, ukrainian * 200 >= cyrillic);
        return Some(match (ru, uk) {
            (true, false) => "ru",
            (false, true) => "uk",
            _ => "en",
        });
    }
    if greek >= 20 && mostly(greek) {
        return Some("el");
    }
    if hebrew >= 20 && mostly(hebrew) {
        return Some("he");
    }
    if arabic_script >= 20 && mostly(arabic_script) {
        // Persian writes ی and ک where Arabic writes ي and ك, and no ة; Urdu (ے, ں, ٹ…) and
        // the other languages of the script stay English.
        return if urdu * 200 >= arabic_script {
            Some("en")
        } else if persian > arabic {
            Some("fa")
        } else if arabic > persian {
            Some("ar")
        } else {
            None
        };
    }
    for (n, code) in [(thai, "th"), (khmer, "km"), (bengali, "bn")] {
        if n >= 20 && mostly(n) {
            return Some(code);
        }
    }
    // A note of another script (Burmese, Tamil…) is not guessed by its Latin words.
    if latin * 2 < letters {
        return Some("en");
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let count = |list: &[&str]| words.iter().filter(|w| list.contains(&w.as_str())).count();
    // The list holding most of the note's words; two holding as many are a doubt, which falls
    // to English (a short Slovak note of words Czech shares, `je, na, v`).
    let (mut best, mut n, mut tied): (&(&str, &[&str]), usize, bool) = (&COMMON[0], 0, false);
    for language in COMMON {
        let count = count(language.1);
        if count > n {
            (best, n, tied) = (language, count, false);
        } else if count == n {
            tied = true;
        }
    }
    let (code, list) = *best;
    let different = list.iter().filter(|w| words.iter().any(|x| x == *w)).count();
    if tied || n < MIN_COMMON || different < MIN_DIFFERENT || n * COMMON_SHARE < words.len() {
        return None;
    }
    Some(SUPPORTED.iter().find(|s| **s == code).copied().unwrap_or("en"))
}

#[cfg(test)]
mod tests;
