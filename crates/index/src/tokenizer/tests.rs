//! The tokenizer's tests: tantivy's filters as a reference, scripts, terms and stems.
/// The tokenizer lower-cases and skips long words exactly as tantivy's filters did.
#[test]
fn the_same_tokens_as_tantivys_filters() {
    use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, TextAnalyzer, TokenStream};
    let mut reference = TextAnalyzer::builder(super::WordTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(tantivy::tokenizer::AsciiFoldingFilter)
        .build();
    let long = "Ä".repeat(40);
    for text in [
        "Über ÉCOLE straße İstanbul ΣΊΣΥΦΟΣ Ꭰ 𐐀 ǅ",
        "Синхронизация настроек — ВАЖНО",
        "设置 同步 ＡＢＣ ｱｲｳ ไทย ខ្មែរ 한국어 العربية",
        &format!("a {long} b {} c", "x".repeat(64)),
    ] {
        let mut ours = super::words();
        let mut a = ours.token_stream(text);
        let mut b = reference.token_stream(text);
        loop {
            let (x, y) = (a.next().cloned(), b.next().cloned());
            assert_eq!(
                x.as_ref().map(|t| (&t.text, t.position, t.offset_from)),
                y.as_ref().map(|t| (&t.text, t.position, t.offset_from)),
                "{text}"
            );
            if x.is_none() {
                break;
            }
        }
    }
}

/// The words as the char-by-char scan found them, before ASCII was decided by the byte:
/// `(lower-cased text, position, start, end)`.
fn reference_words(text: &str) -> Vec<(String, usize, usize, usize)> {
    let mut out = Vec::new();
    let mut offset = 0;
    let mut position = usize::MAX;
    loop {
        let rest = &text[offset..];
        let Some((skip, first)) = rest.char_indices().find(|&(_, c)| super::is_word_char(c)) else {
            return out;
        };
        let start = offset + skip;
        let end = if super::is_unspaced_script(first) {
            super::unspaced_end(text, start, first)
        } else {
            let word = &text[start..];
            start
                + word
                    .char_indices()
                    .find(|&(_, c)| !super::is_word_char(c) || super::is_unspaced_script(c))
                    .map_or(word.len(), |(i, _)| i)
        };
        offset = end;
        position = position.wrapping_add(1);
        if end - start < super::MAX_WORD_BYTES {
            let mut lower = String::new();
            super::push_lowercase(&mut lower, &text[start..end]);
            out.push((lower, position, start, end));
        }
    }
}

proptest::proptest! {
    /// Vietnamese pair terms on any text (marks written apart, digits, other scripts, runs of
    /// spaces): no panic, and each pair is two tokens the text has side by side.
    #[test]
    fn vietnamese_pairs_are_adjacent_tokens(
        text in "[a-z0-9 .,\u{1ea1}\u{1ed9}\u{1eef}\u{1a1}\u{1b0}\u{103}\u{301}\u{4e00}\u{e01}\u{a0}\n]{0,60}"
    ) {
        let text = format!("Giới thiệu về nền tảng ghi chú. {text}");
        let tokens = tokens(&text);
        for term in terms(&text) {
            if let Some((a, b)) = term.split_once(' ') {
                proptest::prop_assert!(!b.contains(' '), "{term}");
                proptest::prop_assert_eq!(phrase(&term), Some(vec![a.to_string(), b.to_string()]));
                proptest::prop_assert!(
                    tokens.windows(2).any(|w| w[0] == a && w[1] == b),
                    "{term} in {text:?}"
                );
            }
        }
    }

    #[test]
    fn the_byte_scan_finds_the_reference_words(
        text in "[a-zA-Z0-9 .,\\-_\u{e9}\u{c4}\u{3a3}\u{416}\u{4e00}\u{306e}\u{e01}\u{e31}\u{301}\u{ff21}\u{1f600}\u{10400}\u{a0}\u{3002}]{0,40}"
    ) {
        use tantivy::tokenizer::{TokenStream, Tokenizer};
        let mut tokenizer = super::WordTokenizer::default();
        let mut stream = tokenizer.token_stream(&text);
        let mut ours = Vec::new();
        while stream.advance() {
            let t = stream.token();
            ours.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        }
        proptest::prop_assert_eq!(ours, reference_words(&text));
    }
}

#[test]
fn the_word_bitmap_is_unicodes() {
    for i in (0..0x11000u32)
        .step_by(7)
        .chain([0x4E00, 0xAC00, 0x0E01, 0x00E9, 0x0301, 0x09CD, 0x094D, 0x0964])
    {
        if let Some(c) = char::from_u32(i) {
            // Unicode's letters and digits, and the marks of the Indic scripts (not their dandas).
            let indic = (0x0900..=0x0DFF).contains(&i) && !matches!(i, 0x0964 | 0x0965 | 0x0970 | 0x0DF4);
            assert_eq!(super::is_word_char(c), c.is_alphanumeric() || indic, "U+{i:04X}");
        }
    }
}

#[test]
fn stems_cut_words_and_keep_pairs() {
    // The same as `terms` filtered and cut, on every script.
    for text in [
        "知识库 gardens 的 vault",
        "知。识 Straße",
        "ທ ທາ Einführung",
        "a 知 b 识库 ok",
    ] {
        let expected: Vec<String> = terms(text)
            .into_iter()
            .filter(|t| is_term(t))
            .map(|t| t.chars().take(STEM_CHARS).collect())
            .collect();
        assert_eq!(stems(text), expected, "{text}");
    }
    assert_eq!(stems("Einführungen in Bases 2026"), ["einfu", "bases"]);
    assert_eq!(stems("Настройки настройка"), ["настр", "настр"]);
    assert_eq!(stems("설정을 설정에서 열기"), ["설정", "설정", "열기"]);
    // The Arabic article goes before the cut; a short word keeps it.
    assert_eq!(stems("الملاحظات ملاحظة والملاحظات الحب"), ["ملاحظ", "ملاحظ", "ملاحظ", "الحب"]);
    assert_eq!(stems("知识库 gardens"), ["知识", "识库", "garde"]);
    // A katakana word of three characters or more is a stem too, once it ends; a middle dot or
    // another script ends it.
    assert_eq!(
        stems("プロパティを開く"),
        ["プロ", "ロパ", "パテ", "ティ", "プロパティ", "ィを", "を開", "開く"]
    );
    assert_eq!(
        stems("ノート・ビュー"),
        ["ノー", "ート", "ノート", "トビ", "ビュ", "ュー", "ビュー"]
    );
    assert_eq!(stems("カナ gardens"), ["カナ", "garde"]);
    // Hostile: a run of ten thousand is no word, only its pairs.
    let run = "ア".repeat(10_000);
    assert!(stems(&run).iter().all(|s| s == "アア"), "a long run became a stem");
}

#[test]
fn syllables_of_thai_lao_khmer_and_myanmar_are_tokens() {
    let check = |text: &str, expected: &[&str]| assert_eq!(tokens(text), expected, "{text}");
    // Khmer: vowel signs and the coeng's stacked letter stay on their letter.
    check("ស្វែងរក", &["ស្វែ", "ង", "រ", "ក"]);
    check("ការកំណត់", &["កា", "រ", "កំ", "ណ", "ត់"]);
    // Thai: tone marks no longer split a word; a vowel written before its consonant takes
    // it, one written after ends the syllable.
    check("ไม่ยาก", &["ไม่", "ยา", "ก"]);
    check("ตั้งค่า", &["ตั้", "ง", "ค่า"]);
    check("เปิดใช้งาน", &["เปิ", "ด", "ใช้", "งา", "น"]);
    // Lao and Myanmar.
    check("ຄົ້ນຫາ", &["ຄົ້", "ນ", "ຫາ"]);
    check("မြန်မာစာ", &["မြ", "န်", "မာ", "စာ"]);
    // Han and kana stay a character each; a mark alone is a token of its own.
    check("知识 カナ", &["知", "识", "カ", "ナ"]);
    check("ก\u{0E48}\u{0E48}\u{0E48} ok", &["ก\u{0E48}\u{0E48}\u{0E48}", "ok"]);
    // Hostile: ten thousand marks on one letter are one long word, skipped like any.
    check(&format!("ก{} ok", "\u{0E48}".repeat(10_000)), &["ok"]);
    check(&format!("ক{} ok", "\u{09CD}".repeat(10_000)), &["ok"]);
    // Pairs of syllables are the terms, searched as two-token phrases.
    assert_eq!(terms("ស្វែងរក"), ["ស្វែង", "ងរ", "រក"]);
    assert_eq!(phrase("ស្វែង"), Some(vec!["ស្វែ".to_string(), "ង".to_string()]));
    assert_eq!(phrase("ស្វែ"), None);
    assert_eq!(stems("ไม่ยาก"), ["ไม่ยา", "ยาก"]);
}

#[test]
fn vietnamese_syllables_pair_in_stems() {
    // Adjacent syllables of a Vietnamese text are stems too, as `a_b`; punctuation ends a pair.
    let vi = "Giới thiệu về Obsidian. Nền tảng ghi chú của bạn được lưu trên thiết bị.";
    assert!(is_vietnamese(vi));
    let stems = stems(vi);
    for pair in ["gioi_thieu", "nen_tang", "ghi_chu", "thiet_bi"] {
        assert!(stems.iter().any(|s| s == pair), "{pair} in {stems:?}");
    }
    assert!(!stems.iter().any(|s| s == "obsidian_nen"), "{stems:?}");
    // Other languages with a few of these letters, and short texts, are not Vietnamese.
    for text in [
        "Această notă și această bază de date sunt în același dosar, împreună cu șablonul.",
        "Đorđe je otvorio bilješku i pročitao ju do kraja, pa je zatvorio aplikaciju.",
        "Notes about the café and the naïve résumé, written in English.",
        "Ếch",
    ] {
        assert!(!is_vietnamese(text), "{text}");
        assert!(!super::stems(text).iter().any(|s| s.contains('_')), "{text}");
    }
}

#[test]
fn vietnamese_syllables_pair_in_terms() {
    // Each two syllables with only spaces between are a term after the second, searched as a
    // phrase; punctuation, digits and other languages make none.
    let vi = "Giới thiệu về Obsidian. Nền tảng ghi chú của bạn được lưu trên thiết bị, bước 2.";
    let terms = terms(vi);
    for pair in ["gioi thieu", "nen tang", "ghi chu", "thiet bi"] {
        assert!(terms.iter().any(|s| s == pair), "{pair} in {terms:?}");
    }
    // `của` ("of") and `được` are function words: no pair holds them.
    for none in [
        "obsidian nen",
        "bi buoc",
        "buoc 2",
        "chu cua",
        "cua ban",
        "duoc luu",
        "thieu ve",
    ] {
        assert!(!terms.iter().any(|s| s == none), "{none} in {terms:?}");
    }
    let at = |t: &str| terms.iter().position(|s| s == t).unwrap();
    assert_eq!(at("ghi chu"), at("chu") + 1);
    assert_eq!(phrase("ghi chu"), Some(vec!["ghi".to_string(), "chu".to_string()]));
    assert!(is_term("ghi chu"));
    assert!(
        !super::terms("Notes about the café and the naïve résumé")
            .iter()
            .any(|t| t.contains(' '))
    );
}

#[test]
fn stems_leave_out_the_function_words_of_the_texts_language() {
    let check = |text: &str, expected: &[&str]| assert_eq!(stems(text), expected, "{text}");
    check(
        "Drücke die Taste und wähle dann den Befehl aus der Liste",
        &["taste", "befeh", "liste"],
    );
    // `die` is an English word: an English text keeps it.
    check(
        "Plants die in winter without water and light",
        &["plant", "die", "winte", "water", "light"],
    );
    // Words of the other languages in the text stay; pairs of unspaced scripts too.
    check(
        "Die Notiz über 知识库 und die Tags, der Tresor und das Plugin",
        &["notiz", "知识", "识库", "tags", "treso", "plugi"],
    );
}

#[test]
fn terms_pair_characters_of_unspaced_scripts() {
    let check = |text: &str, expected: &[&str]| assert_eq!(terms(text), expected, "{text}");
    check("Sourdough starter", &["sourdough", "starter"]);
    check("知识库 notes", &["知识", "识库", "notes"]);
    check("知。识", &["知", "识"]);
    check("的 vault", &["的", "vault"]);
    assert_eq!(phrase("知识"), Some(vec!["知".to_string(), "识".to_string()]));
    assert_eq!(phrase("vault"), None);
    assert!(is_term("知识") && is_term("知") && !is_term("of") && !is_term("2026"));
}

use super::*;

fn analyze(mut a: TextAnalyzer, text: &str) -> Vec<(String, usize)> {
    let mut s = a.token_stream(text);
    let mut out = Vec::new();
    while let Some(t) = s.next() {
        out.push((t.text.clone(), t.position));
    }
    out
}

#[test]
fn words_and_scripts() {
    let check = |text: &str, expected: &[&str]| assert_eq!(tokens(text), expected, "{text:?}");
    check("Hello, World!", &["hello", "world"]);
    check("Café-crème 2024", &["cafe", "creme", "2024"]);
    check("知识库", &["知", "识", "库"]);
    check("Obsidian的笔记", &["obsidian", "的", "笔", "记"]);
    // A Thai vowel sign written on its letter stays with it.
    check("สวัสดี", &["ส", "วั", "ส", "ดี"]);
    check("Привет мир", &["привет", "мир"]);
    // A virama or a nukta is inside a word; a danda ends it.
    check("ইনস্টল করুন। প্রকাশিত", &["ইনস্টল", "করুন", "প্রকাশিত"]);
    check("हिन्दी पढ़ो", &["हिन्दी", "पढ़ो"]);
    check("", &[]);
    check("   ...  ", &[]);
}

#[test]
fn prefixes() {
    let manager = tantivy::tokenizer::TokenizerManager::default();
    register(&manager, Default::default());
    let got = analyze(manager.get(PREFIXES).unwrap(), "Go Déjà");
    let expected: Vec<(String, usize)> = [("g", 0), ("go", 0), ("d", 1), ("de", 1), ("dej", 1), ("deja", 1)]
        .iter()
        .map(|(s, p)| (s.to_string(), *p))
        .collect();
    assert_eq!(got, expected);
    let long = analyze(manager.get(PREFIXES).unwrap(), "abcdefghijklmnopqrstuvwxyz");
    assert_eq!(long.len(), MAX_PREFIX_CHARS);
}

#[test]
fn word_terms_by_script_and_language() {
    let none = Languages::NONE;
    let de = languages_of(["notiz", "die", "und", "mit", "der", "fur"]);
    let check = |word: &str, language: Languages, expected: bool| {
        assert_eq!(is_word_term(word, language), expected, "{word} {:?}", language.codes());
    };
    check("settings", none, true);
    check("the", none, false);
    check("2026", none, false);
    check("die", none, true);
    check("die", de, false);
    // The imperatives a German step begins with ("Drücke Enter"), folded as the index folds.
    check("drucke", de, false);
    check("drucke", none, true);
    // Two Hangul syllables are a word; a Thai syllable or a Han character is none alone.
    check("설정", none, true);
    check("설", none, false);
    check("ใช้", none, false);
    check("知", none, false);
}

#[test]
fn more_function_words_are_left_out_not_guessed_by() {
    let none = Languages::NONE;
    let es = languages_of(["nota", "que", "los", "las", "para", "una", "con", "del"]);
    let check = |word: &str, language: Languages, expected: bool| {
        assert_eq!(is_word_term(word, language), expected, "{word} {:?}", language.codes());
    };
    // stopwords-iso's words Snowball's Spanish list lacks (entries of obsidian-help es were
    // related by them), in a Spanish text only.
    for word in ["hacia", "entonces", "puedo", "aunque", "mientras"] {
        check(word, es, false);
        check(word, none, true);
    }
    // Nouns a note can be about stay, though stopwords-iso lists them.
    for word in ["dia", "trabajo", "cuenta", "grupo", "tiempo"] {
        check(word, es, true);
    }
    // They do not make a text Spanish: the guess counts Snowball's words.
    assert!(
        languages_of(["hacia", "entonces", "puedo", "aunque", "mientras", "arriba"])
            .codes()
            .is_empty()
    );
}

#[test]
fn arabic_vowel_marks_and_the_tatweel_leave_words() {
    // With and without the shadda, the tanween, the tatweel: one word each.
    assert_eq!(tokens("مكوّن مكون أيضًا أيضا لـ"), ["مكون", "مكون", "أيضا", "أيضا", "ل"]);
    // A word of marks alone stays as written; Hebrew and Persian letters are untouched.
    assert_eq!(tokens("ـ"), ["ـ"]);
    assert_eq!(tokens("הערה یادداشت"), ["הערה", "یادداشت"]);
}

#[test]
fn a_hebrew_word_bare_of_its_particles() {
    let check = |word: &str, expected: &[&str]| {
        assert_eq!(super::hebrew_bare(word).collect::<Vec<_>>(), expected, "{word}");
    };
    // "in the settings": the name may begin after one particle or two.
    check("בהגדרות", &["הגדרות", "גדרות"]);
    check("והערות", &["הערות", "ערות"]);
    // Three letters are left at least; a word not begun by a particle has none.
    check("להם", &[]);
    check("בלוק", &["לוק"]);
    check("תגית", &[]);
    // Other scripts are left.
    check("settings", &[]);
    check("بالملاحظات", &[]);
}
