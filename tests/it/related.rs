//! Related notes in offline research: what the note does not already link, found by content
//! and the vault's own signals (names, tags), embeds weighing little, and passages that read
//! as the cited note's own sentences. `cargo bench --bench related` measures hidden-link
//! recall over whole vaults; these pin behaviour.

use std::path::Path;

use serde_json::Value;

use crate::support::{TestVault, copy_dir, obsidian_help, stderr};

mod copies;
mod language;
mod lines;
mod ties;
mod words;

async fn research(v: &TestVault, rel: &str) -> (Vec<String>, Vec<String>, String) {
    let (sources, topics, section) = research_sources(v, rel).await;
    let cited = sources
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .collect();
    (cited, topics, section)
}

/// [`research`] with the sources as the JSON result gives them (`path`, `target`, and for a
/// note offline research cites, the `terms` it shares or the `tie` that relates it).
async fn research_sources(v: &TestVault, rel: &str) -> (Vec<Value>, Vec<String>, String) {
    let out = v.cli(&Vec::new(), &["research", rel, "--json"]).await;
    assert!(out.status.success(), "{rel}: {}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources = r["sources"].as_array().unwrap().clone();
    let topics = r["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let text = v.read(rel);
    let section = text[text.find("\n## Research\n").unwrap()..].to_string();
    (sources, topics, section)
}

fn writable(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let mut perms = entry.metadata().unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(entry.path(), perms).unwrap();
        if entry.path().is_dir() {
            writable(&entry.path());
        }
    }
}

/// Each quoted passage is a sentence of the cited note (its text, or its description): not a
/// heading glued to text, not a callout label, cut only between words.
fn check_passages(section: &str, v: &TestVault, cited: &[String]) {
    let mut note_text = String::new();
    for line in section.lines() {
        // An entry of its own (not one named on the line of notes less closely related).
        if let Some(target) = line.strip_prefix("- [[").and_then(|l| l.split("]]").next()) {
            let path = cited
                .iter()
                .find(|c| {
                    let c = c.trim_end_matches(".md");
                    c == target || c.ends_with(&format!("/{target}"))
                })
                .expect("a bullet per cited note");
            note_text = v.read(path);
        }
        let Some(quote) = line.trim_start().strip_prefix("> ") else {
            continue;
        };
        if line.starts_with('>') {
            continue; // the section's own callouts
        }
        let plain: String = quote.replace('\\', "");
        assert!(!plain.starts_with("[!"), "a callout label: {line}");
        let words: Vec<&str> = plain.trim_end_matches('…').split_whitespace().collect();
        assert!(words.len() >= 3 || plain.chars().count() >= 8, "too short: {line}");
        // Its last whole word is in the note (a cut never splits a word).
        let last = plain
            .trim_end_matches('…')
            .split(|c: char| !c.is_alphanumeric())
            .rfind(|w| !w.is_empty())
            .unwrap();
        let parsed = scholia::vault::parse::parse(&note_text, "");
        // Its text, or the description its front matter gives (quoted for a note cited for a
        // tie).
        let description = parsed.frontmatter.as_ref().and_then(|f| f.string("description"));
        let plain_note = format!("{}\n{}", parsed.plain_text, description.unwrap_or_default());
        let reading = scholia::vault::reading::blocks(&note_text).join("\n");
        // (Scripts without spaces have no words to split: the run must be in the note, where
        // an icon's brackets, dropped from the passage, may still part it.)
        let squeeze = |s: &str| -> String {
            s.chars()
                .filter(|c| !c.is_whitespace() && !"()（）".contains(*c))
                .collect()
        };
        assert!(
            plain_note.split(|c: char| !c.is_alphanumeric()).any(|w| w == last)
                || (!last.is_ascii() && squeeze(&reading).contains(&squeeze(last))),
            "`{last}` is not a word of the cited note: {line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn related_notes_in_the_real_vault() {
    // Each language of the vault is a vault of its own here, as in `benches/related.rs`.
    // (note, notes it links (never cited), notes it must not cite, words its key terms must
    // not have)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );
    let cases: &[Case] = &[
        (
            // Embeds a licence block: the licence is not what the note is about.
            "en/Editing and formatting/Callouts.md",
            &[
                "en/Linking notes and files/Internal links.md",
                "en/Linking notes and files/Embed files.md",
            ],
            &["en/Obsidian/Credits.md"],
            &["copyright", "mit", "master", "contributors"],
        ),
        ("en/Plugins/Daily notes.md", &["en/Plugins/Templates.md"], &[], &[]),
        ("zh/插件/日记.md", &["zh/插件/模板.md"], &[], &[]),
    ];
    for (rel, must, must_not, not_terms) in cases {
        let v = TestVault::empty();
        let (lang, rel) = rel.split_once('/').unwrap();
        copy_dir(&obsidian_help().join(lang), &v.root);
        writable(&v.root);
        let inside = |p: &&str| p.split_once('/').unwrap().1.to_string();
        let (must, must_not): (Vec<String>, Vec<String>) =
            (must.iter().map(inside).collect(), must_not.iter().map(inside).collect());
        if !v.root.join(rel).is_file() {
            panic!("{rel} is not in the vault");
        }
        let (cited, topics, section) = research(&v, rel).await;
        assert!(!cited.is_empty() && cited.len() <= 15, "{rel}: {cited:?}");
        // What it links is what the owner knows: never offered as related.
        for m in &must {
            assert!(!cited.iter().any(|c| c == m), "{rel} links {m} already: {cited:?}");
        }
        for m in &must_not {
            assert!(!cited.iter().any(|c| c == m), "{rel} should not cite {m}: {cited:?}");
        }
        for t in *not_terms {
            assert!(!topics.iter().any(|k| k == t), "{rel}: key term {t}: {topics:?}");
        }
        check_passages(&section, &v, &cited);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn links_names_and_tags_count_where_words_do_not() {
    let filler =
        |topic: &str| format!("{topic} is discussed here at some length, with several sentences about {topic}.\n");
    // (researched note, its text, the note the vault relates it to and its text)
    let cases = [
        (
            "Planning hub.md",
            "See [[Quiet]] for background.\n".to_string(),
            "Quiet.md",
            filler("Gardening"),
        ),
        (
            "Planning hub.md",
            "The Lantern project matters.\n".to_string(),
            "Lantern project.md",
            filler("Cooking"),
        ),
        (
            "Planning hub.md",
            "Plans go here.\n\n#planning\n".to_string(),
            "Tagged.md",
            format!("{}#planning\n", filler("Astronomy")),
        ),
        // Names the researched note without linking to it.
        (
            "Planning hub.md",
            "Plans go here.\n".to_string(),
            "Mentions.md",
            format!("The Planning hub collects plans.\n{}", filler("Knitting")),
        ),
    ];
    for (rel, text, related, related_text) in cases {
        let v = TestVault::empty();
        v.write(
            rel,
            &format!("# Planning hub\n\n{text}\nGardening, cooking, astronomy and knitting are hobbies here.\n"),
        );
        v.write(related, &related_text);
        for (name, topic) in [
            ("Elsewhere.md", "Sailing"),
            ("Other.md", "Gardening"),
            ("Third.md", "Knitting"),
        ] {
            if name != related {
                v.write(name, &filler(topic));
            }
        }
        let (cited, _, section) = research(&v, rel).await;
        assert!(!cited.iter().any(|c| c == "Elsewhere.md"), "{cited:?}");
        if text.contains("[[Quiet]]") {
            // Linked already: not news.
            assert!(!cited.iter().any(|c| c == related), "{cited:?}\n{section}");
            continue;
        }
        assert_eq!(cited.first().map(String::as_str), Some(related), "{cited:?}\n{section}");
        if related == "Lantern project.md" {
            // An unlinked mention, with the line that names it.
            assert!(
                section.contains("[[Lantern project]] — named on line 3 without a link"),
                "{section}"
            );
        }
    }
}

/// What scholia wrote into other notes is not their owner's words: research sections neither
/// relate notes nor give passages, and the same vault gives the same section twice.
#[tokio::test(flavor = "multi_thread")]
async fn research_sections_do_not_feed_later_research() {
    let v = TestVault::example();
    let (_, _, first) = research(&v, "Sourdough starter.md").await;
    // Research on every other note writes sections naming and quoting the first one's words.
    for other in [
        "Kombucha.md",
        "Fermentation temperature.md",
        "Journal/Bread log.md",
        "Microbes/Wild yeast.md",
    ] {
        research(&v, other).await;
    }
    let (_, _, again) = research(&v, "Sourdough starter.md").await;
    assert_eq!(first, again, "the same vault, the same section");
    for other in ["Kombucha.md", "Journal/Bread log.md"] {
        let text = v.read(other);
        let own = text.split("\n## Research\n").next().unwrap();
        // Quoted passages come from the notes' own text, never from their research sections.
        for line in again.lines().filter_map(|l| l.trim_start().strip_prefix("> ")) {
            let words: String = line.trim_end_matches('…').chars().take(30).collect();
            assert!(
                !text.contains(&words)
                    || own.contains(&words)
                    || v.read("Reading list.txt").contains(&words)
                    || !words.is_ascii(),
                "quoted from {other}'s research section: {line}"
            );
        }
    }
}

/// A note embedding a block of another (obsidian-help en: Create your first note embeds
/// `![[Manage notes#^blockquote-system-limitation]]`) researches the same whether or not that
/// note has a research section: the embed read the whole note, its section included, and the
/// entry "[[Internal links]] — hash, headings, network" became "… press" once Manage notes had
/// one.
#[tokio::test(flavor = "multi_thread")]
async fn an_embedded_note_s_research_section_does_not_feed_research() {
    let (note, embedded) = (
        "Getting started/Create your first note.md",
        "Files and folders/Manage notes.md",
    );
    let v = language_vault("en", &[note, embedded]);
    let (_, _, first) = research(&v, note).await;
    research(&v, embedded).await;
    assert!(v.read(embedded).contains("\n## Research\n"));
    let (_, _, again) = research(&v, note).await;
    assert_eq!(first, again, "the same vault text, the same section");
}

/// What a reader of a quoted passage must not meet, each with the defect obsidian-help showed:
/// code with its `#` turned into ` › ` (`` ` › tag1` ``), bold markers and their escape left as
/// text (`\**暗号化**`), the empty brackets an icon left (`（ ）`), two lines of a table cell
/// glued (`` `x`.Example ``), a Japanese label quoted as a sentence (`ノートコンポーザー`),
/// an HTML entity.
fn hygiene_defects(passage: &str) -> Vec<&'static str> {
    // Code spans as one placeholder: what is inside code is the note's own.
    let mut prose = String::new();
    let mut code = String::new();
    for (i, part) in passage.split('`').enumerate() {
        if i % 2 == 0 {
            prose.push_str(part);
        } else {
            prose.push('x');
            code.push_str(part);
            code.push('\n');
        }
    }
    let han_kana = passage
        .chars()
        .filter(|c| matches!(*c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF))
        .count();
    let ended = passage
        .trim_end_matches('…')
        .ends_with(['。', '！', '？', '.', '!', '?'])
        || passage.ends_with('…');
    let glued = prose.as_bytes().windows(4).any(|w| {
        (w[0].is_ascii_lowercase() || w[0] == b'x')
            && w[1] == b'.'
            && w[2].is_ascii_uppercase()
            && w[3].is_ascii_lowercase()
    });
    // A sentence cut after an abbreviation: it closes a bracket it never opened, or starts
    // with the abbreviation's last letter (de `B. das Aktualisieren von Links…)`, after "z.").
    let mut depth = 0i32;
    let unopened = prose.chars().any(|c| {
        depth += i32::from(matches!(c, '(' | '（')) - i32::from(matches!(c, ')' | '）'));
        depth < 0
    });
    let mut start = prose.chars();
    let cut_after_letter = start.next().is_some_and(char::is_uppercase)
        && start.next() == Some('.')
        && start.next() == Some(' ')
        && start.next().is_some_and(char::is_lowercase);
    let checks = [
        ("a fragment", unopened || cut_after_letter),
        ("code with › for #", code.contains(" › ")),
        ("a backslash escape", prose.contains('\\')),
        ("bold markers", prose.contains("**")),
        (
            "empty brackets",
            prose.contains("( )") || prose.contains("()") || prose.contains("（ ）") || prose.contains("（）"),
        ),
        ("glued lines", glued),
        (
            "an HTML entity",
            ["&#", "&amp;", "&lt;", "&gt;", "&quot;"]
                .iter()
                .any(|e| prose.contains(e)),
        ),
        (
            "a label",
            han_kana > 0 && han_kana < 16 && !ended && passage.split_whitespace().count() < 4,
        ),
    ];
    checks.iter().filter(|(_, bad)| *bad).map(|(name, _)| *name).collect()
}

#[test]
fn hygiene_checks_find_each_defect() {
    let check = |passage: &str, expected: &[&str]| assert_eq!(hygiene_defects(passage), expected, "{passage}");
    check(
        "Beispiel: `file.hasTag(\"tag1\")` gibt `true` zurück, wenn die Datei den Tag ` › tag1` hat.",
        &["code with › for #"],
    );
    check(
        "\\**エンドツーエンド暗号化（デフォルト）**は最も強力です。",
        &["a backslash escape", "bold markers"],
    );
    check(
        "赤い削除（ ）ボタンを使用して切り替えることができます。",
        &["empty brackets"],
    );
    check("Find files matching `x`.Example: `line:(mix flour)`.", &["glued lines"]);
    check("ノートコンポーザー", &["a label"]);
    check("Use &amp; here and there.", &["an HTML entity"]);
    check(
        "B. das Aktualisieren von Links beim Umbenennen einer Datei).",
        &["a fragment"],
    );
    check(
        "iCloud, Dropbox, OneDrive, Google Drive) car cela peut provoquer des conflits.",
        &["a fragment"],
    );
    check("Ein Dienst (z. B. iCloud) und `f(x)` oder (`a)`) genügt.", &[]);
    check("Füge ein Rautezeichen (`#`) und `[[#` hinzu, in C# oder F#.", &[]);
    check("接続を選択します。", &[]);
}

/// Offline research on notes of obsidian-help in five languages whose sections quoted each
/// defect of [`hygiene_defects`] before: none is left, and a second run writes the same bytes.
#[tokio::test(flavor = "multi_thread")]
async fn passages_read_clean_in_five_languages() {
    let cases: &[(&str, &[&str])] = &[
        (
            "en",
            &[
                "Plugins/Canvas.md",
                "Plugins/Search.md",
                "Editing and formatting/Callouts.md",
                // Quotes a line that starts `\- John Locke`: it was quoted `\- John Locke`.
                "Getting started/Link notes.md",
                "Files and folders/How Obsidian stores data.md",
                "Obsidian Publish/Manage sites.md",
                "Import notes/Import from Evernote.md",
                "Plugins/Daily notes.md",
                "Obsidian Sync/Troubleshoot Obsidian Sync.md",
            ],
        ),
        // Quotes `> \# Оттачивайте своё мышление.`: it was quoted with its backslash.
        ("ru", &["Начало работы/Импорт заметок.md"]),
        (
            "de",
            &[
                "Bases/Eine Base erstellen.md",
                "Lizenzen und Zahlung/Einführung in Lizenzen und Zahlung.md",
                "Notizen und Dateien verknüpfen/Aliasse.md",
                // Quoted `B. das Aktualisieren von Links beim Umbenennen einer Datei).`: a
                // sentence cut after "z.".
                "Erste Schritte/Obsidian aktualisieren.md",
                "Erweiterungen/Datenwiederherstellung.md",
                "Erweiterungen/Canvas.md",
                "Obsidian Sync/Versionsgeschichte.md",
            ],
        ),
        // Quoted `iCloud, Dropbox, OneDrive, Google Drive) car cela…`: cut after "p. ex.".
        ("fr", &["Commencer ici/Sauvegarder vos fichiers Obsidian.md"]),
        (
            "ja",
            &[
                "Bases/ビュー.md",
                "Obsidian Publish/セキュリティとプライバシー.md",
                "Obsidian Web Clipper/Web Clipperのトラブルシューティング.md",
                "Obsidian への貢献/開発者.md",
                "チーム/チームのセキュリティに関する考慮事項.md",
                "ノートのインポート/OneNote.md",
                "編集と書式設定/添付ファイル.md",
            ],
        ),
    ];
    let mut found = Vec::new();
    let mut passages = 0;
    for (lang, notes) in cases {
        let v = language_vault(lang, notes);
        for rel in *notes {
            let (_, _, first) = research(&v, rel).await;
            let (_, _, second) = research(&v, rel).await;
            let steady = |s: &str| {
                s.lines()
                    .filter(|l| !l.starts_with("<!-- scholia:research"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_eq!(steady(&first), steady(&second), "{lang}/{rel}: a second run differs");
            for line in first.lines().filter(|l| l.starts_with("  > ")) {
                passages += 1;
                let defects = hygiene_defects(&line[4..]);
                if !defects.is_empty() {
                    found.push(format!("{lang}/{rel}: {defects:?}: {line}"));
                }
            }
        }
    }
    none_found(&found, passages, "passages");
}

/// A writable copy of one language of obsidian-help, which holds `notes`.
fn language_vault(lang: &str, notes: &[&str]) -> TestVault {
    let v = TestVault::empty();
    copy_dir(&obsidian_help().join(lang), &v.root);
    writable(&v.root);
    for rel in notes {
        assert!(v.root.join(rel).is_file(), "{lang}/{rel} is not in the vault");
    }
    v
}

/// Over a hundred things were checked (`seen`, named `what`) and none was found wanting.
fn none_found(found: &[String], seen: usize, what: &str) {
    assert!(seen > 100, "only {seen} {what}");
    assert!(
        found.is_empty(),
        "{} of {seen} {what}:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The same vault gives the same evidence, every candidate and every figure to the bit,
/// whatever segments its notes fell into. A union's BM25 sum followed the order its scorers met
/// a note, so a rebuilt index (a FORMAT bump, a deleted cache) gave sums ≤ 3·10⁻⁷ apart and
/// swapped two nearly tied notes; and where more notes tied at a cut (the 60 notes naming it,
/// the 100 most similar by stems) than it keeps, the note's place in the index chose. Here one
/// index is built at once on two threads, the other on one thread in two halves.
#[test]
fn the_same_vault_rebuilt_gives_the_same_evidence() {
    use scholia::index::{VaultIndex, WriterOptions};
    let v = language_vault("en", &[]);
    let mut notes: Vec<String> = Vec::new();
    collect_notes(&v.root, &v.root, &mut notes);
    notes.sort();
    let index = |options: WriterOptions, halves: bool| {
        let dir = tempfile::tempdir().unwrap();
        let aside = tempfile::tempdir().unwrap();
        // Half the notes first, the others after: every other note (the first among them), so
        // that the two indexes order them differently.
        let later: Vec<&String> = notes.iter().step_by(2).collect();
        if halves {
            for (i, rel) in later.iter().enumerate() {
                std::fs::rename(v.root.join(rel), aside.path().join(i.to_string())).unwrap();
            }
        }
        let vault = scholia::vault::Vault::open(&v.root).unwrap();
        let index = VaultIndex::open(vault, dir.path(), options).unwrap();
        index.sync(&mut |_| {}).unwrap();
        if halves {
            for (i, rel) in later.iter().enumerate() {
                std::fs::rename(aside.path().join(i.to_string()), v.root.join(rel)).unwrap();
            }
            index.sync(&mut |_| {}).unwrap();
        }
        (index, dir)
    };
    let (at_once, _a) = index(WriterOptions::default(), false);
    let one_thread = WriterOptions {
        threads: 1,
        memory_bytes: 15_000_000,
    };
    let (in_halves, _b) = index(one_thread, true);
    assert_eq!(at_once.num_notes(), in_halves.num_notes());
    let (mut compared, mut differ) = (0, Vec::new());
    for rel in notes.iter().step_by(4) {
        let text = v.read(rel);
        let evidence = |index: &VaultIndex| {
            let mut e = scholia::research::offline::related_evidence(index, rel, text.clone(), 60).unwrap();
            e.sort_by(|a, b| a.0.cmp(&b.0));
            e.into_iter()
                .map(|(p, e)| (p, e.figures().map(f32::to_bits)))
                .collect::<Vec<_>>()
        };
        let (a, b) = (evidence(&at_once), evidence(&in_halves));
        compared += a.len();
        if a != b {
            let only = |x: &[(String, [u32; scholia::index::FIGURES])],
                        y: &[(String, [u32; scholia::index::FIGURES])]|
             -> Vec<String> {
                x.iter().filter(|c| !y.contains(c)).map(|(p, _)| p.clone()).collect()
            };
            differ.push(format!("{rel}: {:?} / {:?}", only(&a, &b), only(&b, &a)));
        }
    }
    assert!(compared > 1000, "only {compared} candidates compared");
    none_found(
        &differ,
        compared,
        "candidates compared, the notes where they differ listed",
    );
}

/// The vault-relative paths of the Markdown notes under `dir`.
fn collect_notes(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_notes(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}
