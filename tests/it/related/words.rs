//! The words offline research shows: key terms and the words beside cited notes, in the
//! languages whose words need more than splitting at spaces (function words, Vietnamese
//! syllables), and only words a reader finds in the cited note.

use std::path::Path;

use serde_json::Value;

use super::{language_vault, none_found, obsidian_help, research_sources};

/// The words an offline section shows beside its cited notes: each source's `terms`, which
/// the section shows last on the note's line, or after it in brackets on the line of notes
/// less closely related.
fn shown_words(sources: &[Value], section: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources {
        let Some(terms) = s["terms"].as_array() else {
            continue;
        };
        let terms: Vec<String> = terms.iter().map(|t| t.as_str().unwrap().to_string()).collect();
        // Joined as the section's language joins them (Japanese and Chinese `、` and `（）`).
        let shown = |comma: &str, open: &str, close: &str| {
            let line = format!(" — {}", terms.join(comma));
            let brief = format!(
                "[[{}]]{open}{}{close}",
                s["target"].as_str().unwrap(),
                terms.join(comma)
            );
            section
                .lines()
                .any(|l| (l.starts_with("- [[") && l.ends_with(&line)) || (l.starts_with("- ") && l.contains(&brief)))
        };
        assert!(
            shown(", ", " (", ")") || shown("、", "（", "）"),
            "{terms:?} not shown:\n{section}"
        );
        out.extend(terms);
    }
    out
}

/// The languages a note's function words are guessed in ([`tokenizer::languages_of`]) on
/// obsidian-help: none in an English note (its `die`, `door`, `van` stay words), the note's own
/// in nearly every note of the languages that have a list.
#[test]
fn each_note_is_guessed_in_its_own_language() {
    use scholia::index::tokenizer;
    let root = obsidian_help();
    for (lang, at_least) in [
        ("en", 0.0),
        ("de", 0.99),
        ("fr", 0.95),
        ("es", 0.9),
        ("nl", 0.95),
        ("sv", 0.95),
        ("ru", 0.85),
        ("ar", 0.95),
        ("ca", 0.9),
        ("cs", 0.85),
        ("el", 0.95),
        ("fa", 0.95),
        ("he", 0.9),
        ("id", 0.95),
        ("pl", 0.8),
        ("ro", 0.9),
        ("sk", 0.85),
        ("tr", 0.9),
        ("uk", 0.9),
    ] {
        let (mut notes, mut own, mut other) = (0, 0, Vec::new());
        for path in markdown_files(&root.join(lang)) {
            let tokens = tokenizer::tokens(&std::fs::read_to_string(&path).unwrap());
            if tokens.len() < 40 {
                continue;
            }
            notes += 1;
            let codes = tokenizer::languages_of(tokens.iter().map(String::as_str)).codes();
            if codes.contains(&lang) {
                own += 1;
            } else if !codes.is_empty() {
                other.push(format!("{}: {codes:?}", path.display()));
            }
        }
        assert!(notes > 100, "{lang}: {notes} notes");
        let share = own as f64 / notes as f64;
        println!(
            "{lang}: {own} of {notes} notes guessed {lang}, {} another language",
            other.len()
        );
        assert!(other.is_empty(), "{lang}: {other:?}");
        assert!(share >= at_least, "{lang}: {own} of {notes}");
    }
}

/// Offline research on notes whose key terms were function words (`noch`, `falls`, `dich`,
/// `wir`, `dies`; `feu`, `saya`, `שלי`): no key term of the section is one now.
#[tokio::test(flavor = "multi_thread")]
async fn key_terms_are_no_function_words() {
    use scholia::index::tokenizer;
    let cases: &[(&str, &[&str])] = &[
        (
            "de",
            &[
                "Obsidian Sync/Obsidian Sync einrichten.md",
                "Obsidian erweitern/Plugin-Sicherheit.md",
                "Erweiterungen/Arbeitsbereiche.md",
            ],
        ),
        ("fr", &["Obsidian Sync/Configurer Obsidian Sync.md"]),
        ("es", &["Obsidian Sync/Configurar Obsidian Sync.md"]),
        // Shown before the lists of these languages: `feu`, `saya`, `שלי`, `είτε`, `ваше`.
        ("ca", &["Importar notes/Importar notes Zettelkasten.md"]),
        ("id", &["Lisensi dan pembayaran/Kebijakan pengembalian dana.md"]),
        ("he", &["רישיונות ותשלום/מדיניות החזרים.md"]),
        ("el", &["Άδειες και πληρωμή/Πολιτική επιστροφής χρημάτων.md"]),
        ("uk", &["Obsidian Sync/Вирішення проблем Obsidian Sync.md"]),
    ];
    let mut found = Vec::new();
    let mut terms = 0;
    for (lang, notes) in cases {
        let v = language_vault(lang, notes);
        for rel in *notes {
            let tokens = tokenizer::tokens(&v.read(rel));
            let language = tokenizer::languages_of(tokens.iter().map(String::as_str));
            assert_eq!(language.codes(), [*lang], "{lang}/{rel}");
            let (sources, topics, section) = research_sources(&v, rel).await;
            for term in topics.into_iter().chain(shown_words(&sources, &section)) {
                terms += 1;
                if tokenizer::tokens(&term).iter().any(|t| language.is_stopword(t)) {
                    found.push(format!("{lang}/{rel}: {term}"));
                }
            }
        }
    }
    none_found(&found, terms, "terms");
}

fn markdown_files(dir: &Path) -> Vec<std::path::PathBuf> {
    crate::support::files_under(dir, "md")
}

/// Vietnamese writes a word as syllables apart: key terms and the words shown beside cited
/// notes are such words whole (`vòng tròn` "circle", `màn hình` "screen"), never a pair holding
/// a function word (`và kéo` "and drag") nor the halves of two words (`tượng ứng` of `biểu
/// tượng ứng dụng`).
#[tokio::test]
async fn vietnamese_terms_are_whole_words() {
    use scholia::index::tokenizer;
    let notes = [
        ("Plugin/Canvas.md", "vòng tròn"),
        ("Giao diện người dùng/Giao diện.md", "màn hình"),
        ("Obsidian Publish/SEO.md", "SEO"),
    ];
    let v = language_vault("vi", &notes.map(|(rel, _)| rel));
    let halves = ["dụng tùy", "tượng ứng", "thẻ chia", "nhấn Shift", "sẻ mạng", "kết cố"];
    let (mut found, mut terms) = (Vec::new(), 0);
    for (rel, expected) in notes {
        let (sources, topics, section) = research_sources(&v, rel).await;
        assert!(topics.iter().any(|t| t == expected), "{rel}: {topics:?}");
        for term in topics.into_iter().chain(shown_words(&sources, &section)) {
            terms += 1;
            let function = term
                .split(' ')
                .any(|s| tokenizer::is_vietnamese_function_syllable(&s.to_lowercase()));
            if (term.contains(' ') && function) || halves.contains(&term.as_str()) {
                found.push(format!("{rel}: {term}"));
            }
        }
    }
    assert!(terms > 40, "only {terms} terms");
    assert!(found.is_empty(), "{found:?}");
}

/// A word shown beside a cited note is one a reader finds in it: its text, title or aliases,
/// never a key of its front matter (`aliases`, `permalink`, `publish: true` were shown as
/// shared words by every note carrying them). In a script without spaces, the word as written:
/// a character pair the two notes share was shown as the researched note's word around it
/// (ja `コミュニティチャンネル` beside Catalyst license, which writes `チャンネル`; th and zh
/// likewise, more than half of their words shown).
#[tokio::test]
async fn shown_words_are_read_in_the_cited_note() {
    use scholia::index::tokenizer;
    let cases: &[(&str, &[&str])] = &[
        (
            "en",
            &["Editing and formatting/Callouts.md", "Obsidian Publish/Permalinks.md"],
        ),
        ("de", &["Obsidian Publish/Permalinks.md"]),
        ("ja", &["ヘルプとサポート.md", "プラグイン/ファイルリカバリー.md"]),
        ("zh", &["帮助与支持.md"]),
        ("th", &["ความช่วยเหลือและการสนับสนุน.md"]),
    ];
    let (mut found, mut words) = (Vec::new(), 0);
    for (lang, notes) in cases {
        let v = language_vault(lang, notes);
        for rel in *notes {
            let (sources, _, section) = research_sources(&v, rel).await;
            shown_words(&sources, &section);
            for source in &sources {
                let path = source["path"].as_str().unwrap();
                let stem = scholia::vault::stem(path);
                let parsed = scholia::vault::parse::parse(&v.read(path), stem);
                let readable: std::collections::HashSet<String> = tokenizer::tokens(&parsed.plain_text)
                    .into_iter()
                    .chain(tokenizer::tokens(&parsed.title))
                    .chain(parsed.aliases.iter().flat_map(|a| tokenizer::tokens(a)))
                    .collect();
                for word in source["terms"].as_array().into_iter().flatten() {
                    let word = word.as_str().unwrap();
                    words += 1;
                    let as_written = !tokenizer::is_unspaced(word)
                        || parsed.plain_text.contains(word)
                        || parsed.title.contains(word)
                        || scholia::vault::research_part::owner_text(v.read(path)).contains(word);
                    if !as_written || !tokenizer::tokens(word).iter().all(|t| readable.contains(t)) {
                        found.push(format!("{lang}/{rel} → {path}: {word}"));
                    }
                }
            }
        }
    }
    assert!(words > 40, "only {words} words");
    assert!(found.is_empty(), "{found:#?}");
}

/// A callout's type (`> [!todo]- Bookmark a file`) is an icon to a reader, not a word of the
/// note: obsidian-help's Bookmarks had `todo` as its second key term, from eight such callouts,
/// and was related by it to every note with a to-do callout. The titles stay words.
#[tokio::test]
async fn a_callout_s_type_is_no_key_term() {
    let rel = "Plugins/Bookmarks.md";
    let v = language_vault("en", &[rel]);
    assert!(
        v.read(rel).matches("> [!todo]-").count() >= 5,
        "the case is gone from the vault"
    );
    let (sources, topics, section) = research_sources(&v, rel).await;
    let shown = shown_words(&sources, &section);
    assert!(topics.iter().any(|t| t.eq_ignore_ascii_case("bookmark")), "{topics:?}");
    for word in topics.iter().chain(&shown) {
        assert!(!word.eq_ignore_ascii_case("todo"), "{word}: {topics:?}\n{section}");
    }
}

/// Every note an offline section cites says why it is there: a word both share, a tie, or the
/// line naming it. In scripts without spaces the heaviest shared terms are often character
/// pairs cut out of a clause, which are no word to show; entries of zh, th and km sections
/// were shown with a passage only (zh Card view: Map view, List view and Table view), and
/// Khmer words were not shown at all.
#[tokio::test]
async fn every_cited_note_says_why() {
    let cases: &[(&str, &[&str])] = &[
        ("zh", &["Bases/布局/卡片视图.md", "Bases/布局/地图视图.md"]),
        (
            "th",
            &["Obsidian Publish/ข้อจำกัดของ Publish.md", "Bases/เลย์เอาต์/มุมมองรายการ.md"],
        ),
        (
            "km",
            &["Bases/ប្លង់/ទិដ្ឋភាពផែនទី.md", "Obsidian Publish/ការមើលជាមុនតំណភ្ជាប់បណ្ដាញសង្គម.md"],
        ),
    ];
    let (mut entries, mut mute) = (0, Vec::new());
    for (lang, notes) in cases {
        let v = language_vault(lang, notes);
        for rel in *notes {
            let (_, _, section) = research_sources(&v, rel).await;
            for line in section.lines().filter(|l| l.starts_with("- ")) {
                if line.starts_with("- [[") {
                    entries += 1;
                    // `- [[Target]]` alone, or with only a passage under it.
                    if !line.contains(" — ") {
                        mute.push(format!("{lang} {rel}: {line}"));
                    }
                    continue;
                }
                // The line of notes less closely related (or of the hubs): in brackets after
                // each group of them, what found it.
                for (targets, why) in super::lines::groups(line) {
                    entries += targets.len();
                    if why.is_empty() {
                        mute.push(format!("{lang} {rel}: {line}"));
                    }
                }
            }
        }
    }
    assert!(entries > 30, "only {entries} entries");
    assert!(mute.is_empty(), "{mute:#?}");
}

/// obsidian-help says "press `Ctrl+P` (or `Cmd+P` on macOS)" in dozens of notes, each with its
/// own key. A note that says `Cmd`, `Ctrl` and `macOS` only there is about none of them: they
/// are neither its key terms nor the words shown beside a note it cites (Page preview cited
/// Bookmarks, Quick switcher and Tags view for `Cmd, Ctrl, macOS`).
#[tokio::test]
async fn a_phrase_many_notes_repeat_relates_nothing() {
    let notes = [
        "Plugins/Page preview.md",
        "Getting started/Create your first note.md",
        "Plugins/Quick switcher.md",
        "Plugins/Bookmarks.md",
        "Plugins/Tags view.md",
    ];
    let keyboard = ["cmd", "ctrl", "macos"];
    let v = language_vault("en", &notes);
    let mut found = Vec::new();
    for rel in notes {
        let text = v.read(rel).to_lowercase();
        assert!(text.contains("(or `cmd"), "{rel} holds no keyboard phrase");
        let (sources, topics, section) = research_sources(&v, rel).await;
        for word in topics.iter().chain(&shown_words(&sources, &section)) {
            if keyboard.contains(&word.to_lowercase().as_str()) {
                found.push(format!("{rel}: {word}\n{section}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
