//! Which language a note is read as, and that every language's sections are whole.

#[test]
fn languages_of_notes() {
    // English where the text does not say (the notes beside it decide then: below).
    let check = |text: &str, expected: &str| assert_eq!(super::guess(text).unwrap_or("en"), expected, "{text}");
    check("---\nlang: de-AT\n---\n# Notiz\n", "de");
    check("---\nlanguage: pt\n---\nTexto em português.\n", "pt");
    check("---\nlanguage: nl\n---\nTekst in het Nederlands.\n", "nl");
    check("---\nlanguage: pl\n---\nTekst po polsku.\n", "pl");
    check("---\nlang: nb-NO\n---\nTekst på norsk.\n", "no");
    check("---\nlang: th\n---\nข้อความภาษาไทย\n", "th");
    check("---\nlang: my\n---\nမြန်မာစာ\n", "en");
    // Chinese in traditional characters by its regions' codes or its script's.
    check("---\nlang: zh_TW\n---\n筆記\n", "zh-TW");
    check("---\nlang: zh-Hant-HK\n---\n筆記\n", "zh-TW");
    check("---\nlang: zh-CN\n---\n笔记\n", "zh");
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
    // A megabyte of traditional characters; as many of each form is a doubt, simplified.
    check(&"這是筆記。".repeat(70_000), "zh-TW");
    check(&"這个筆记。".repeat(10), "zh");
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
    // Thai, Khmer and Bengali by their scripts, whatever Latin words they hold; another script
    // without sentences (Burmese) stays English.
    check("หากต้องการสร้างโน้ตใหม่ ให้คลิกปุ่มในแถบด้านข้างแล้วพิมพ์ชื่อ the and of", "th");
    check("ដើម្បីបង្កើតកំណត់ត្រាថ្មី សូមចុចប៊ូតុងនៅរបារចំហៀង ហើយវាយចំណងជើង។ Obsidian", "km");
    check(
        "নতুন নোট তৈরি করতে সাইডবারের বোতামে ক্লিক করুন এবং শিরোনাম লিখুন। Obsidian",
        "bn",
    );
    check("မှတ်စုအသစ်တစ်ခုဖန်တီးရန် ဘေးဘားရှိခလုတ်ကိုနှိပ်ပြီး ခေါင်းစဉ်ကိုရိုက်ပါ။ the and of", "en");
    // Chinese in traditional characters (obsidian-help zh-TW), and a simplified note quoting a
    // traditional word.
    check(
        "一則筆記的反向連結是指從另一則筆記連結到該筆記的連結。在以下範例中，你可以查看目前筆記的所有反向連結。",
        "zh-TW",
    );
    check(
        "笔记的反向链接是指从另一篇笔记指向该笔记的链接。繁体写作「筆記」，在以下示例中你可以查看当前笔记的所有反向链接。",
        "zh",
    );
}

/// Every language the templates have gives every sentence of an offline section in that
/// language: each kind of tie, a hubs line, the notes linking back, a focus and the footer,
/// with no placeholder left and no English sentence.
/// A note of names and code says no language; the notes beside it do.
#[test]
fn a_note_that_does_not_say_takes_its_neighbours_language() {
    let hebrew = "כדי לקשר הערות, הקלידו שני סוגריים מרובעים ובחרו את ההערה מהרשימה שמופיעה.";
    // he's Credits page: licences and names, a Hebrew sentence (under a quarter of its letters).
    let credits = format!(
        "{hebrew}\n\n{}",
        "- Electron (MIT License), lucide, CodeMirror, Prism, MathJax\n".repeat(4)
    );
    assert_eq!(super::guess(&credits), None);
    assert_eq!(super::guess(hebrew), Some("he"));
    assert_eq!(super::guess("Short."), None);
    let among = |others: &[&str]| super::among(others.iter().map(|t| t.to_string()));
    assert_eq!(among(&[hebrew, &credits, "Short."]), "he");
    // The most; of a tie, the first.
    let german = "Die Notiz ist mit der Vorlage verbunden, und das ist gut für die Suche in der Ablage.";
    assert_eq!(among(&[german, hebrew, hebrew]), "he");
    assert_eq!(among(&[german, hebrew]), "de");
    // Read until five say: the sixth is not asked.
    let mut asked = 0;
    let five_then_more = (0..10).map(|i| {
        asked += 1;
        (if i < 5 { german } else { hebrew }).to_string()
    });
    assert_eq!(super::among(five_then_more), "de");
    assert_eq!(asked, 5);
    // None says: English, as before.
    assert_eq!(among(&[&credits, "Short."]), "en");
    assert_eq!(among(&[]), "en");
}

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
        "Only loosely related",
        "linked from 8 notes",
        "Already linking",
        "named on line",
        "No note this one",
    ];
    // With `notes` and two hubs, or with neither (the sentence saying nothing was found).
    let section = |lang: &str, notes: serde_json::Value| {
        let (hubs, brief) = match notes.as_array().is_some_and(|n| n.is_empty()) {
            true => (serde_json::json!([]), serde_json::json!([])),
            false => (
                serde_json::json!([{"target": "Hub A", "linking": 9}, {"target": "Hub B", "linking": 7}]),
                // As `brief_line` makes them of the brief notes below.
                serde_json::json!([
                    {"targets": ["Faint"], "terms": ["Roggen"], "tie": {"kind": "words"}},
                    {"targets": ["Far", "Farther"], "terms": [], "tie": {"kind": "folder", "folder": "F"}},
                ]),
            ),
        };
        lib.render(
            scholia_prompts::RESEARCH_OFFLINE,
            serde_json::json!({
                "lang": lang, "terms": ["Sauerteig", "Roggen"], "focus": "Hefe", "when": "2026-11-27",
                "topics": 2, "provenance": "PROVENANCE", "linked": ["Back"],
                "notes": notes,
                "brief": brief,
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
        {"target": "Farther", "terms": [], "passages": ["Unshown."], "brief": true, "tie": {"kind": "folder", "folder": "F"}},
    ]);
    // Only the brief entries: the line says that nothing is closely related.
    let loose_notes = serde_json::Value::Array(
        notes
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["brief"] == true)
            .cloned()
            .collect(),
    );
    let en = section("en", notes.clone()) + &section("en", serde_json::json!([])) + &section("en", loose_notes.clone());
    for phrase in english {
        assert!(en.contains(phrase), "{phrase}:\n{en}");
    }
    for lang in super::SUPPORTED {
        let text = section(lang, notes.clone());
        let empty = section(lang, serde_json::json!([]));
        let loose = section(lang, loose_notes.clone());
        for t in [&text, &empty, &loose] {
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
        // The notes one tie found are named together, with it once.
        let brief = text.lines().find(|l| l.contains("[[Faint]]")).unwrap();
        assert!(
            brief.contains("[[Far]]") && brief.contains("Roggen") && brief.matches("F/").count() == 1,
            "{lang}: {brief}"
        );
        let (far, farther) = (brief.find("[[Far]]").unwrap(), brief.find("[[Farther]]").unwrap());
        assert!(far < farther && !brief[far..farther].contains("F/"), "{lang}: {brief}");
        assert!(!text.contains("Unshown"), "{lang}\n{text}");
        // With no entry whole, the line opens otherwise: nothing above it is closer.
        let opening = |t: &str| {
            let line = t.lines().find(|l| l.contains("[[Faint]]")).unwrap().to_string();
            line[..line.find("[[Faint]]").unwrap()].to_string()
        };
        assert_ne!(opening(&text), opening(&loose), "{lang}\n{loose}");
        assert!(!loose.contains("Unshown"), "{lang}\n{loose}");
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
    assert_eq!(super::name("my"), "English");
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
    let only =
        render(serde_json::json!({"notice": null, "findings": "F", "sources": sources, "provenance": "PROVENANCE"}));
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
