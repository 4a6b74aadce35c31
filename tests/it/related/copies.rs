//! A section quotes a sentence once, and not again with a word changed: obsidian-help repeats
//! its boilerplate with small changes ("Type the name of the note, and then press Enter." /
//! "… of the folder, …"; "To help improve this documentation, submit a pull request…" / "To
//! help improve our developer documentation, …"), and a reader reads the second as the first
//! again. Before, 27 of 1,328 passages in en's sections, 28 in de's and 35 in ja's were such
//! copies (`scripts/read-sections.py`).

use std::collections::HashSet;

use scholia::index::tokenizer;

use super::{language_vault, none_found, research};

/// Whether two passages share at least 0.6 of the words either holds (as the index has them:
/// character pairs in a script without spaces).
fn near_copies(a: &str, b: &str) -> bool {
    let words = |s: &str| tokenizer::terms(s).into_iter().collect::<HashSet<_>>();
    let (a, b) = (words(a), words(b));
    let shared = a.intersection(&b).count();
    shared > 0 && shared * 5 >= (a.len() + b.len() - shared) * 3
}

#[test]
fn near_copies_share_most_of_their_words() {
    assert!(near_copies(
        "Type the name of the note, and then press Enter.",
        "Type the name of the folder, and then press Enter."
    ));
    assert!(near_copies(
        "パブリッシュによる変更の公開ダイアログで、サイトオプションの変更 をクリックします。",
        "パブリッシュによる変更の公開ダイアログで、サイトオプションの変更をクリックします。"
    ));
    assert!(!near_copies(
        "You can rename a note or folder without opening it, by using File explorer",
        "You can also delete a note or folder, using the File explorer."
    ));
}

/// Notes whose sections quoted near copies before.
#[tokio::test(flavor = "multi_thread")]
async fn a_section_quotes_no_near_copy_of_a_sentence_it_quoted() {
    let cases: &[(&str, &[&str])] = &[
        (
            "en",
            &[
                "Home.md",
                "User interface/Drag and drop.md",
                "User interface/Ribbon.md",
                "Licenses and payment/Refund policy.md",
                "Plugins/Canvas.md",
                "Plugins/Search.md",
                "Editing and formatting/Callouts.md",
                "Getting started/Link notes.md",
                "Obsidian Publish/Manage sites.md",
                "Plugins/Daily notes.md",
                "Obsidian Sync/Troubleshoot Obsidian Sync.md",
            ],
        ),
        (
            "de",
            &[
                "Startseite.md",
                "Hilfe und Support.md",
                "Bases/Eine Base erstellen.md",
                "Notizen und Dateien verknüpfen/Aliasse.md",
                "Erste Schritte/Obsidian aktualisieren.md",
                "Erweiterungen/Canvas.md",
                "Obsidian Sync/Versionsgeschichte.md",
            ],
        ),
        (
            "ja",
            &[
                "ユーザーインターフェイス/サイドバー.md",
                "編集と書式設定/添付ファイル.md",
                "チーム/チーム向けSync.md",
                "Bases/ビュー.md",
                "ノートのインポート/OneNote.md",
                "Obsidian への貢献/開発者.md",
            ],
        ),
    ];
    let (mut found, mut passages) = (Vec::new(), 0);
    for (lang, notes) in cases {
        let v = language_vault(lang, notes);
        for rel in *notes {
            let (_, _, section) = research(&v, rel).await;
            let quoted: Vec<&str> = section.lines().filter_map(|l| l.strip_prefix("  > ")).collect();
            for (i, p) in quoted.iter().enumerate() {
                passages += 1;
                if let Some(q) = quoted[..i].iter().find(|q| near_copies(p, q)) {
                    found.push(format!("{lang}/{rel}: {p:?} after {q:?}"));
                }
            }
        }
    }
    none_found(&found, passages, "passages");
}
