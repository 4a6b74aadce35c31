//! The language a note is written in, for the fixed sentences of the sections scholia writes:
//! the front matter's `lang` (or `language`), else a guess from its script and most common
//! words. Only languages the templates have sentences for; English otherwise.

/// Languages the section templates are written in besides English (a note in Thai, Bengali,
/// Khmer or another reads them in English).
pub const SUPPORTED: &[&str] = &[
    "de", "fr", "es", "it", "pt", "nl", "ru", "uk", "ko", "ja", "zh", "pl", "cs", "sk", "sv", "da", "no", "fi", "hu",
    "ro", "ca", "tr", "id", "vi", "el", "he", "ar", "fa",
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
        "zh" => "Chinese",
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
        _ => "English",
    }
}

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

/// The note's language: a code of [`SUPPORTED`], or `en`.
pub fn of(text: &str) -> &'static str {
    if let Some(fm) = scholia_vault::frontmatter::read(text)
        && let Some(lang) = fm.string("lang").or_else(|| fm.string("language"))
    {
        let code = lang.trim().to_lowercase();
        let code = match code.split(['-', '_']).next().unwrap_or("") {
            // Norwegian's written standards, and Hebrew's former code.
            "nb" | "nn" => "no",
            "iw" => "he",
            code => code,
        };
        return SUPPORTED.iter().find(|s| **s == code).copied().unwrap_or("en");
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
    for c in text.chars() {
        letters += usize::from(c.is_alphabetic());
        latin += usize::from(c.is_alphabetic() && (c < '\u{0250}' || ('\u{1e00}'..='\u{1eff}').contains(&c)));
        match c {
            '\u{3040}'..='\u{30ff}' => kana += 1,
            '\u{4e00}'..='\u{9fff}' => han += 1,
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
            _ => {}
        }
    }
    // A script is the note's when it is a quarter of its letters at least: a Latin-script note
    // quoting a line of Korean or Russian stays in its language.
    let mostly = |n: usize| n * 4 >= letters;
    if hangul >= 10 && mostly(hangul) {
        return "ko";
    }
    if kana >= 10 {
        return "ja";
    }
    if han >= 20 {
        return "zh";
    }
    if cyrillic >= 20 && mostly(cyrillic) {
        // Russian writes ы and э (about 2 % of its letters), never і; Ukrainian the reverse.
        // Another Cyrillic language (Bulgarian, Serbian) writes neither.
        let (ru, uk) = (russian * 200 >= cyrillic, ukrainian * 200 >= cyrillic);
        return match (ru, uk) {
            (true, false) => "ru",
            (false, true) => "uk",
            _ => "en",
        };
    }
    if greek >= 20 && mostly(greek) {
        return "el";
    }
    if hebrew >= 20 && mostly(hebrew) {
        return "he";
    }
    if arabic_script >= 20 && mostly(arabic_script) {
        // Persian writes ی and ک where Arabic writes ي and ك, and no ة; Urdu (ے, ں, ٹ…) and
        // the other languages of the script stay English.
        return if urdu * 200 >= arabic_script {
            "en"
        } else if persian > arabic {
            "fa"
        } else if arabic > persian {
            "ar"
        } else {
            "en"
        };
    }
    // A note of another script (Thai, Bengali, Khmer…) is not guessed by its Latin words.
    if latin * 2 < letters {
        return "en";
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
        check("---\nlanguage: pt\n---\nTexto em português.\n", "pt");
        check("---\nlanguage: nl\n---\nTekst in het Nederlands.\n", "nl");
        check("---\nlanguage: pl\n---\nTekst po polsku.\n", "pl");
        check("---\nlang: nb-NO\n---\nTekst på norsk.\n", "no");
        check("---\nlang: th\n---\nข้อความภาษาไทย\n", "en");
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
        // Hostile: nothing, marks and digits only, one common word repeated (a list holds
        // three different words at least), a megabyte of one language's words.
        check("", "en");
        check("。、!? 123 ่ ្ ---", "en");
        check(&"der ".repeat(1000), "en");
        check(&"und die der mit ist ".repeat(50_000), "de");
        // Persian's and Arabic's own letters as many: a doubt, English; a megabyte of Greek.
        check(&"ی ي ک ك ".repeat(20), "en");
        check(&"σημείωση ".repeat(60_000), "el");
        // Each language reads as itself, not as a neighbour sharing words.
        check(
            "Pentru a crea o notă nouă, apasă pe butonul din bara laterală și scrie titlul. Nota este salvată în seif, la fel ca un fișier de text.",
            "ro",
        );
        check(
            "Il plugin permette di creare una nota per ogni giorno. La nota è salvata nella cartella che scegli, con il modello della nota.",
            "it",
        );
        check(
            "Você pode criar uma nota para cada dia. A nota é salva na pasta que você escolher, com o modelo da nota e os links do dia.",
            "pt",
        );
        check(
            "Чтобы создать заметку, нажмите на кнопку в боковой панели и введите её название.",
            "ru",
        );
        check(
            "Щоб створити нотатку, натисніть кнопку на бічній панелі та введіть її назву.",
            "uk",
        );
        check(
            "За да създадете бележка, натиснете бутона в страничния панел и въведете заглавие.",
            "en",
        );
        check("노트를 만들려면 사이드바의 버튼을 누르고 제목을 입력하세요.", "ko");
        check(
            "The Korean word for note is 노트 and the Russian one is заметка, in this English text about languages.",
            "en",
        );
        check(
            "El connector permet crear una nota per a cada dia. La nota es desa a la carpeta que triïs, amb la plantilla de les notes i els enllaços del dia.",
            "ca",
        );
        check(
            "Aby utworzyć nową notatkę, kliknij przycisk na pasku bocznym i wpisz jej tytuł. Notatka jest zapisana w sejfie, więc możesz ją otworzyć na każdym urządzeniu, na którym się logujesz.",
            "pl",
        );
        check(
            "Για να δημιουργήσετε μια νέα σημείωση, πατήστε το κουμπί στην πλαϊνή γραμμή και πληκτρολογήστε τον τίτλο της.",
            "el",
        );
        check(
            "כדי ליצור הערה חדשה, לחצו על הכפתור בסרגל הצד והקלידו את הכותרת שלה.",
            "he",
        );
        check(
            "لإنشاء ملاحظة جديدة، انقر على الزر في الشريط الجانبي واكتب عنوانها في الخزنة.",
            "ar",
        );
        check(
            "برای ساختن یک یادداشت تازه، روی دکمهٔ نوار کناری کلیک کنید و عنوان آن را بنویسید.",
            "fa",
        );
        // Urdu shares the script and Persian's letters; it has no sentences.
        check(
            "نیا نوٹ بنانے کے لیے سائیڈ بار میں بٹن پر کلک کریں اور اس کا عنوان لکھیں۔",
            "en",
        );
        // Another script, without sentences, stays English whatever its Latin words.
        check("หากต้องการสร้างโน้ตใหม่ ให้คลิกปุ่มในแถบด้านข้างแล้วพิมพ์ชื่อ the and of", "en");
    }

    /// Every language the templates have gives every sentence of an offline section in that
    /// language: each kind of tie, a hubs line, the notes linking back, a focus and the footer,
    /// with no placeholder left and no English sentence.
    #[test]
    fn every_language_s_offline_section_is_whole() {
        let lib = scholia_prompts::Library::builtin();
        let english = [
            "Researched without",
            "linked from",
            "which this note links",
            "links both",
            "beside it",
            "notes this note links",
            "a note much like this one",
            "also tagged",
            "Hubs of this vault",
            "Less closely related",
            "linked from 8 notes",
            "Already linking",
            "named on line",
            "No note this one",
            "Configure an LLM",
        ];
        // With `notes` and two hubs, or with neither (the sentence saying nothing was found).
        let section = |lang: &str, notes: serde_json::Value| {
            let hubs = match notes.as_array().is_some_and(|n| n.is_empty()) {
                true => serde_json::json!([]),
                false => serde_json::json!([{"target": "Hub A", "linking": 9}, {"target": "Hub B", "linking": 7}]),
            };
            lib.render(
                scholia_prompts::RESEARCH_OFFLINE,
                serde_json::json!({
                    "lang": lang, "terms": ["Sauerteig", "Roggen"], "focus": "Hefe", "when": "2026-11-27",
                    "topics": 2, "provenance": "PROVENANCE", "linked": ["Back"],
                    "notes": notes,
                    "hubs": hubs,
                }),
            )
            .unwrap()
        };
        let notes = serde_json::json!([
            {"target": "Named", "terms": ["Roggen"], "passages": ["A passage."], "mentioned_on": 3},
            {"target": "Via", "terms": [], "passages": [], "tie": {"kind": "linked_from"}, "tie_target": "Mid"},
            {"target": "Both", "terms": [], "passages": [], "tie": {"kind": "cited_with"}, "tie_target": "Mid"},
            {"target": "Some", "terms": [], "passages": [], "tie": {"kind": "folder_links", "folder": "F", "linking": 2, "mates": 5}},
            {"target": "All", "terms": [], "passages": [], "tie": {"kind": "folder_links", "folder": "F", "linking": 5, "mates": 5}},
            {"target": "Two", "terms": [], "passages": [], "tie": {"kind": "folder_links", "folder": "F", "linking": 2, "mates": 2}},
            {"target": "Beside", "terms": [], "passages": [], "tie": {"kind": "folder", "folder": "F"}},
            {"target": "Into", "terms": [], "passages": [], "tie": {"kind": "links_into", "folder": "G", "linked": 3}},
            {"target": "Alike", "terms": [], "passages": [], "tie": {"kind": "alike_links"}, "tie_target": "Twin"},
            {"target": "Tagged", "terms": [], "passages": [], "tie": {"kind": "tag", "tag": "bread"}},
            {"target": "Linked", "terms": [], "passages": [], "tie": {"kind": "linked", "linking": 8}},
            {"target": "Faint", "terms": ["Roggen"], "passages": ["Unshown."], "brief": true},
            {"target": "Far", "terms": [], "passages": ["Unshown."], "brief": true, "tie": {"kind": "folder", "folder": "F"}},
        ]);
        let en = section("en", notes.clone()) + &section("en", serde_json::json!([]));
        for phrase in english {
            assert!(en.contains(phrase), "{phrase}:\n{en}");
        }
        for lang in super::SUPPORTED {
            let text = section(lang, notes.clone());
            let empty = section(lang, serde_json::json!([]));
            for t in [&text, &empty] {
                assert!(!t.contains('{') && !t.contains('}'), "{lang}: a placeholder left\n{t}");
                for phrase in english {
                    assert!(!t.contains(phrase), "{lang}: {phrase}\n{t}");
                }
                assert!(
                    t.contains("2026-11-27") && !t.contains("PROVENANCE"),
                    "{lang}: no footer\n{t}"
                );
            }
            // Every entry says why it is here (a tie's sentence, the line it is named on).
            for target in [
                "Named", "Via", "Both", "Some", "All", "Two", "Beside", "Into", "Alike", "Tagged", "Linked",
            ] {
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&format!("- [[{target}]]")))
                    .unwrap();
                assert!(line.chars().count() > target.len() + 10, "{lang}: {line}");
            }
            // Brief entries share one line, each with what found it, and no passage.
            let brief = text.lines().find(|l| l.contains("[[Faint]]")).unwrap();
            assert!(
                brief.contains("[[Far]]") && brief.contains("Roggen") && brief.contains("F/"),
                "{lang}: {brief}"
            );
            assert!(!text.contains("Unshown"), "{lang}\n{text}");
            assert!(
                text.contains("[[Hub A]]") && text.contains("[[Back]]"),
                "{lang}\n{text}"
            );
        }
    }

    /// The model is asked to write in each language the templates have, by its name.
    #[test]
    fn every_supported_language_has_a_name() {
        for code in super::SUPPORTED {
            assert_ne!(super::name(code), "English", "{code}");
        }
        assert_eq!(super::name("en"), "English");
        assert_eq!(super::name("th"), "English");
    }

    /// An LLM research section's own words (the sources' label, the provenance line) are in
    /// the note's language; in English, and for a caller passing only `provenance`, the section
    /// is what it was.
    #[test]
    fn every_language_s_research_section_is_whole() {
        let lib = scholia_prompts::Library::builtin();
        let sources = serde_json::json!([
            {"title": "T", "url": "https://a.example/", "target": null},
            {"title": "N", "url": null, "target": "N"},
        ]);
        let render = |ctx: serde_json::Value| lib.render(scholia_prompts::RESEARCH_SECTION, ctx).unwrap();
        let parts = |lang: &str| {
            serde_json::json!({
                "notice": null, "findings": "F", "sources": sources, "provenance": "PROVENANCE",
                "lang": lang, "when": "2026-11-27", "depth": "deep", "model": "m", "cost": "$0.0100",
                "topics": 3, "removed": 2,
            })
        };
        let before = "F\n\n**Sources**\n\n- [T](https://a.example/)\n- [[N]]\n\n*PROVENANCE*\n";
        let only = render(
            serde_json::json!({"notice": null, "findings": "F", "sources": sources, "provenance": "PROVENANCE"}),
        );
        assert_eq!(only, before);
        assert_eq!(render(parts("en")), before);
        for lang in super::SUPPORTED {
            let text = render(parts(lang));
            ends_in_its_language(lang, &text);
            // `$` is escaped, as in every provenance line (Obsidian reads it as math).
            assert!(
                text.contains(" · m · \\$0.0100 · ") && text.contains('3') && text.contains('2'),
                "{lang}: {text}"
            );
            assert!(*lang == "fr" || !text.contains("**Sources**"), "{lang}: {text}");
            assert!(text.contains("- [T](https://a.example/)\n- [[N]]"), "{lang}: {text}");
        }
    }

    /// A section of sources only (the synthesis failed) warns in the note's language, with the
    /// reason as given and inert, and ends with the provenance line in that language; English,
    /// and a caller passing only `provenance`, get what they got before.
    #[test]
    fn every_language_s_sources_only_section_is_whole() {
        let lib = scholia_prompts::Library::builtin();
        let render = |ctx: serde_json::Value| lib.render(scholia_prompts::RESEARCH_SOURCES_ONLY, ctx).unwrap();
        let topics = serde_json::json!([{"topic": "Rye", "web": [{"title": "T", "url": "https://a.example/"}],
                                          "vault": [{"target": "N"}]}]);
        let reason = "HTTP 500 [[Evil]] <b>";
        let parts = |lang: &str| {
            serde_json::json!({
                "reason": reason, "topics": topics, "provenance": "PROVENANCE", "topics_count": 1,
                "lang": lang, "when": "2026-11-27", "depth": "shallow", "model": "m", "cost": null,
            })
        };
        let only = render(serde_json::json!({"reason": reason, "topics": topics, "provenance": "PROVENANCE"}));
        assert!(
            only.starts_with("> [!warning] Sources only: the synthesis failed (") && only.ends_with("*PROVENANCE*\n"),
            "{only}"
        );
        assert_eq!(render(parts("en")), only);
        let inert = scholia_vault::contain::text(reason);
        assert!(only.contains(&inert) && !only.contains("[[Evil]]"), "{only}");
        for lang in super::SUPPORTED {
            let text = render(parts(lang));
            let warning = text.lines().next().unwrap();
            assert!(
                warning.starts_with("> [!warning] ") && warning.contains(&inert) && !warning.contains("Sources only"),
                "{lang}: {text}"
            );
            ends_in_its_language(lang, &text);
            assert!(
                text.contains("### Rye") && text.contains("- [T](https://a.example/)\n- [[N]]"),
                "{lang}: {text}"
            );
        }
    }

    /// An LLM section rendered in `lang`: no placeholder left, and its last line the provenance
    /// line of that language (dated 2026-11-27, model `m`), not the English one.
    fn ends_in_its_language(lang: &str, text: &str) {
        assert!(!text.contains('{') && !text.contains("PROVENANCE"), "{lang}: {text}");
        assert!(
            text.contains("2026-11-27") && text.contains(" · m · ") && text.ends_with("· scholia*\n"),
            "{lang}: {text}"
        );
    }
}
