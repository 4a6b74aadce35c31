//! The index as a library: incremental sync, the watcher, two processes, CJK text.

use std::sync::Arc;
use std::time::{Duration, Instant};

use scholia::index::{Updates, VaultIndex, WriterOptions};
use scholia::vault::Vault;

use crate::support::TestVault;

fn open(v: &TestVault) -> Arc<VaultIndex> {
    let vault = Vault::open(&v.root).unwrap();
    let dir = v.dirs().index_dir(vault.root());
    Arc::new(VaultIndex::open(vault, &dir, WriterOptions::default()).unwrap())
}

fn top_path(index: &VaultIndex, q: &str) -> Option<String> {
    index.search(q, 5, None).unwrap().first().map(|h| h.path.clone())
}

/// Polls until `f` holds, returning how long it took.
fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn incremental_sync_reads_only_what_changed() {
    let v = TestVault::example();
    let index = open(&v);
    let first = index.sync(&mut |_| {}).unwrap();
    assert_eq!((first.indexed, first.unchanged, first.removed), (7, 0, 0));
    drop(index);

    v.write("Kombucha.md", "# Kombucha\n\nNow about jun tea instead.\n");
    std::fs::remove_file(v.path("Fermentation temperature.md")).unwrap();
    v.write("Journal/New.md", "# New\n");
    let index = open(&v);
    let second = index.sync(&mut |_| {}).unwrap();
    assert_eq!((second.indexed, second.unchanged, second.removed), (2, 5, 1));
    assert_eq!(top_path(&index, "jun"), Some("Kombucha.md".into()));
    assert_eq!(top_path(&index, "scoby"), None);
    assert_eq!(index.num_notes(), 7);
}

#[test]
fn a_note_changed_on_disk_is_searchable_within_a_second() {
    let v = TestVault::example();
    let index = open(&v);
    index.sync(&mut |_| {}).unwrap();
    let _updates = Updates::start(index.clone(), true).unwrap();
    std::thread::sleep(Duration::from_millis(100));

    v.write(
        "Microbes/Wild yeast.md",
        "# Wild yeast\n\nBrettanomyces appears in lambic beer.\n",
    );
    let took = eventually(Duration::from_secs(3), || top_path(&index, "brettanomyces").is_some());
    let took = took.expect("change never became searchable");
    assert!(took < Duration::from_secs(1), "took {took:?}");

    v.write("Ideas/Miso.md", "# Miso\n\nKoji-fermented soybeans.\n");
    assert!(eventually(Duration::from_secs(1), || top_path(&index, "soybeans").is_some()).is_some());

    std::fs::remove_file(v.path("Kombucha.md")).unwrap();
    assert!(eventually(Duration::from_secs(1), || top_path(&index, "scoby").is_none()).is_some());

    // A folder removed takes its notes with it; one moved in brings them.
    std::fs::rename(v.path("Microbes"), v.home.join("Microbes")).unwrap();
    assert!(
        eventually(Duration::from_secs(2), || top_path(&index, "sanfranciscensis")
            .is_none())
        .is_some()
    );
    std::fs::rename(v.home.join("Microbes"), v.path("Bugs")).unwrap();
    assert!(
        eventually(Duration::from_secs(2), || top_path(&index, "sanfranciscensis")
            == Some("Bugs/Lactic acid bacteria.md".into()))
        .is_some()
    );

    // Ignored and non-note files never show up.
    v.write(".obsidian/workspace.md", "# hidden zanzibar\n");
    v.write("attachment.pdf", "zanzibar");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(top_path(&index, "zanzibar"), None);
}

#[test]
fn unsaved_buffers_are_indexed_and_closing_restores_the_disk_text() {
    let v = TestVault::example();
    let index = open(&v);
    index.sync(&mut |_| {}).unwrap();
    let updates = Updates::start(index.clone(), false).unwrap();
    updates.buffer_changed("Kombucha.md", "# Kombucha\n\nUnsaved thought about tepache.\n".into());
    updates.flush();
    assert_eq!(top_path(&index, "tepache"), Some("Kombucha.md".into()));
    updates.buffer_closed("Kombucha.md");
    updates.flush();
    assert_eq!(top_path(&index, "tepache"), None);
    assert_eq!(top_path(&index, "scoby"), Some("Kombucha.md".into()));
}

#[test]
fn a_second_process_reads_while_the_first_writes_then_takes_over() {
    let v = TestVault::example();
    let writer = open(&v);
    writer.sync(&mut |_| {}).unwrap();
    let updates = Updates::start(writer.clone(), true).unwrap();

    let reader = open(&v);
    assert!(!reader.is_writer());
    assert!(matches!(
        reader.sync(&mut |_| {}),
        Err(scholia::index::IndexError::ReadOnly)
    ));
    assert_eq!(top_path(&reader, "scoby"), Some("Kombucha.md".into()));

    v.write("Shared.md", "# Shared\n\nWritten while two processes run: quark.\n");
    assert!(
        eventually(Duration::from_secs(3), || top_path(&reader, "quark").is_some()).is_some(),
        "the reader never saw the writer's commit"
    );

    drop(updates);
    drop(writer);
    assert!(reader.try_acquire_writer().unwrap());
    v.write("After.md", "# After\n\nzymurgy\n");
    reader.sync(&mut |_| {}).unwrap();
    assert_eq!(top_path(&reader, "zymurgy"), Some("After.md".into()));
}

#[test]
fn symbols_links_and_names() {
    let v = TestVault::example();
    let index = open(&v);
    index.sync(&mut |_| {}).unwrap();
    let names = |q: &str| -> Vec<String> {
        index
            .symbols(q, 10)
            .unwrap()
            .into_iter()
            .map(|s| format!("{}:{}", s.path, s.name))
            .collect()
    };
    assert_eq!(
        names("kombucha").first().map(String::as_str),
        Some("Kombucha.md:Kombucha")
    );
    // Prefixes of several words, in any case, match headings too.
    assert!(
        names("open quest").contains(&"Sourdough starter.md:Open questions".to_string()),
        "{:?}",
        names("open quest")
    );
    assert!(
        names("levain").contains(&"Sourdough starter.md:Sourdough starter".to_string()),
        "alias"
    );
    assert!(names("zzzz").is_empty());
    assert_eq!(index.symbols("", 3).unwrap().len(), 3, "empty query lists recent notes");

    let resolve = |t: &str, from: Option<&str>| index.resolve_link(t, from).unwrap().map(|n| n.path);
    assert_eq!(resolve("Wild yeast", None), Some("Microbes/Wild yeast.md".into()));
    assert_eq!(resolve("wild YEAST", None), Some("Microbes/Wild yeast.md".into()));
    assert_eq!(
        resolve("Microbes/Wild yeast", None),
        Some("Microbes/Wild yeast.md".into())
    );
    assert_eq!(
        resolve("Journal/Bread log.md", None),
        Some("Journal/Bread log.md".into())
    );
    assert_eq!(resolve("Levain", None), Some("Sourdough starter.md".into()));
    assert_eq!(resolve("Nope", None), None);

    let named: Vec<_> = index
        .notes_named("ferm", 5)
        .unwrap()
        .into_iter()
        .map(|n| n.path)
        .collect();
    assert_eq!(named, vec!["Fermentation temperature.md"]);
}

#[test]
fn cjk_and_other_scripts_are_searchable() {
    let v = TestVault::with_files(&[
        ("zh.md", "# 知识库\n\n双向链接让笔记互相连接。\n"),
        ("ja.md", "# ノート\n\nリンクを使ってノートをつなぐ。\n"),
        ("ru.md", "# Заметки\n\nСвязи между заметками.\n"),
    ]);
    let index = open(&v);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(top_path(&index, "链接"), Some("zh.md".into()));
    assert_eq!(top_path(&index, "リンク"), Some("ja.md".into()));
    assert_eq!(top_path(&index, "заметками"), Some("ru.md".into()));
    assert_eq!(index.symbols("知识", 5).unwrap()[0].path, "zh.md");
}

#[test]
fn index_inside_the_vault_is_refused() {
    let v = TestVault::example();
    let vault = Vault::open(&v.root).unwrap();
    let err = VaultIndex::open(vault, &v.root.join(".cache"), WriterOptions::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("inside the vault"), "{err}");
}

/// A process that cannot read the index while another one holds the writer never deletes it:
/// it retries, then says the index is busy; the writer's index is intact.
#[test]
fn an_unreadable_index_is_only_rebuilt_under_the_writer_lock() {
    let v = TestVault::example();
    let writer = open(&v);
    writer.sync(&mut |_| {}).unwrap();
    assert!(writer.is_writer());
    // What a reader sees when it opens mid-commit: an index it cannot read.
    let marker = writer.dir().join("scholia-index.json");
    let saved = std::fs::read(&marker).unwrap();
    std::fs::remove_file(&marker).unwrap();
    let files_before = std::fs::read_dir(writer.dir()).unwrap().count();
    let vault = Vault::open(&v.root).unwrap();
    let started = Instant::now();
    let err = VaultIndex::open(vault, writer.dir(), WriterOptions::default())
        .err()
        .expect("a busy index is an error, not a rebuild");
    assert!(
        err.to_string().contains("another scholia process is writing it"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        std::fs::read_dir(writer.dir()).unwrap().count(),
        files_before,
        "nothing deleted"
    );
    assert_eq!(top_path(&writer, "kombucha").as_deref(), Some("Kombucha.md"));
    // Once the writer is gone, the next process rebuilds it.
    std::fs::write(&marker, saved).unwrap();
    drop(writer);
    let reopened = open(&v);
    assert!(reopened.is_writer());
}

/// A symlink that leaves the vault is never indexed, whether the start-up walk or the watcher
/// (or an editor's save) reports it.
#[cfg(unix)]
#[test]
fn links_out_of_the_vault_are_never_indexed() {
    let v = TestVault::example();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.md"),
        "# Secret\n\nzanzibarquokka password\n",
    )
    .unwrap();
    let index = open(&v);
    index.sync(&mut |_| {}).unwrap();
    let updates = Updates::start(index.clone(), true).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), v.path("leak.md")).unwrap();
    // Whatever the watcher reports, and an explicit refresh of that path, index nothing.
    updates.paths_changed(vec![v.path("leak.md")]);
    updates.flush();
    index.refresh(&v.path("leak.md")).unwrap();
    index.flush().unwrap();
    assert_eq!(top_path(&index, "zanzibarquokka"), None);
    let vault = index.vault();
    assert!(!vault.holds(&v.path("leak.md")));
    assert!(vault.holds(&v.path("Kombucha.md")));
    // A link inside the vault is fine.
    std::os::unix::fs::symlink(v.path("Kombucha.md"), v.path("alias.md")).unwrap();
    assert!(vault.holds(&v.path("alias.md")));
}

/// Temp files a crash left beside notes are removed at start-up; one being written now stays.
#[test]
fn stale_write_temp_files_are_removed_at_start() {
    let v = TestVault::example();
    v.write("Journal/.scholia-crashed.tmp", "half a note");
    v.write(".scholia-live.tmp", "being written");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(v.path("Journal/.scholia-crashed.tmp"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let index = open(&v);
    let summary = index.sync(&mut |_| {}).unwrap();
    assert_eq!(summary.indexed, 7, "temp files are not notes");
    assert!(!v.path("Journal/.scholia-crashed.tmp").exists());
    assert!(v.path(".scholia-live.tmp").exists());
}
