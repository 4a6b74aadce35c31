//! The editor half of issue 41 through the language server: tags (completion, references,
//! rename, symbols), unlinked-mention hints with their "Link" fixes, research actions at the
//! cursor (not `source.*`), and ranked `[[` completion.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{LspClient, TestVault, lsp_client::apply_text_edits};

fn pos(line: u64, character: u64) -> Value {
    json!({"line": line, "character": character})
}

async fn ready(v: &TestVault) -> LspClient {
    v.lsp_ready(&Vec::new()).await
}

/// The diagnostics pushed for `uri` that carry `code`, waiting for them.
async fn pushed(c: &mut LspClient, uri: &str, code: &str) -> Vec<Value> {
    let u = uri.to_string();
    let code = code.to_string();
    let found = c
        .wait_notification(Duration::from_secs(10), move |n| {
            n["method"] == "textDocument/publishDiagnostics"
                && n["params"]["uri"] == u.as_str()
                && n["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["code"] == code.as_str()))
        })
        .await
        .expect("diagnostics");
    found["params"]["diagnostics"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn tags_complete_find_and_rename_across_the_vault() {
    let v = TestVault::with_files(&[
        (
            "A.md",
            "---\ntags: [project/alpha, idea]\n---\n# A\n\nAbout #project here.\n",
        ),
        ("B.md", "# B\n\n#Project/beta and #recipe\n"),
        ("C.md", "# C\n\nNothing but `#code`.\n"),
    ]);
    let mut c = ready(&v).await;
    let text = "# D\n\nNow #pro";
    let uri = c.open(&v.path("D.md"), text).await;
    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(2, 8)}),
        )
        .await;
    let labels: Vec<&str> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["#project", "#project/alpha", "#Project/beta"], "{r}");
    assert_eq!(r["items"][0]["textEdit"]["newText"], "project");

    // References from a tag in A: the inline tag, the front-matter tag nested under it, B's.
    let a = c.open(&v.path("A.md"), &v.read("A.md")).await;
    let refs = c
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": a}, "position": pos(5, 8), "context": {"includeDeclaration": true}}),
        )
        .await;
    let places: Vec<(String, u64)> = refs
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let uri = l["uri"].as_str().unwrap();
            (
                uri.rsplit('/').next().unwrap().to_string(),
                l["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(places, [("A.md".into(), 1), ("A.md".into(), 5), ("B.md".into(), 2)]);

    // Rename `project` to `work`: nested tags keep their part; C's code is untouched.
    let prep = c
        .request(
            "textDocument/prepareRename",
            json!({"textDocument": {"uri": a}, "position": pos(5, 8)}),
        )
        .await;
    assert_eq!(prep["placeholder"], "project");
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": a}, "position": pos(5, 8), "newName": "work"}),
        )
        .await;
    let mut texts = std::collections::BTreeMap::new();
    for change in edit["documentChanges"].as_array().unwrap() {
        let file = change["textDocument"]["uri"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        let mut text = v.read(&file);
        apply_text_edits(&mut text, change["edits"].as_array().unwrap());
        texts.insert(file, text);
    }
    assert_eq!(
        texts["A.md"],
        "---\ntags: [work/alpha, idea]\n---\n# A\n\nAbout #work here.\n"
    );
    assert_eq!(texts["B.md"], "# B\n\n#work/beta and #recipe\n");
    assert!(!texts.contains_key("C.md"));
    let bad = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": a}, "position": pos(5, 8), "newName": "two words"}),
        )
        .await;
    assert!(bad["error"]["message"].as_str().unwrap().contains("not a tag"), "{bad}");

    let symbols = c.request("workspace/symbol", json!({"query": "#rec"})).await;
    assert_eq!(symbols[0]["name"], "#recipe", "{symbols}");
    assert!(symbols[0]["location"]["uri"].as_str().unwrap().ends_with("B.md"));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unlinked_mentions_are_hints_with_a_link_fix() {
    let mut files: Vec<(String, String)> = vec![
        (
            "Sourdough starter.md".into(),
            "# Sourdough starter\n\nFlour and water.\n".into(),
        ),
        ("Kombucha.md".into(), "# Kombucha\n\nTea.\n".into()),
    ];
    // Enough notes that a one-word name is no common word of the vault.
    for i in 0..40 {
        files.push((
            format!("Filler {i}.md"),
            format!("# Filler {i}\n\nOther words entirely.\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let v = TestVault::with_files(&refs);
    let mut c = ready(&v).await;
    let text = "# Bread\n\nFeed the Sourdough starter, then Kombucha. Sourdough starter again; [[Kombucha]] linked.\n";
    let uri = c.open(&v.path("Bread.md"), text).await;
    let hints: Vec<Value> = pushed(&mut c, &uri, "unlinked-mention")
        .await
        .into_iter()
        .filter(|d| d["code"] == "unlinked-mention")
        .collect();
    // Kombucha is linked in the note: no hint for it.
    assert_eq!(hints.len(), 2, "{hints:?}");
    assert_eq!(hints[0]["severity"], 4);
    assert!(hints[0]["message"].as_str().unwrap().contains("Sourdough starter.md"));
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": hints[0]["range"], "context": {"diagnostics": []}}),
        )
        .await;
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Link `[[Sourdough starter]]`"), "{titles:?}");
    let every = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Link every mention"))
        .expect("link every mention");
    let mut linked = text.to_string();
    apply_text_edits(
        &mut linked,
        every["edit"]["documentChanges"][0]["edits"].as_array().unwrap(),
    );
    assert_eq!(
        linked,
        "# Bread\n\nFeed the [[Sourdough starter]], then Kombucha. [[Sourdough starter]] again; [[Kombucha]] linked.\n"
    );
    // Research actions are offered at the cursor, as refactors (VS Code's light bulb).
    let research = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Research this note")
        .expect("research action");
    assert_eq!(research["kind"], "refactor.scholia.research");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn completion_puts_names_that_start_with_the_text_first_once_each() {
    let v = TestVault::with_files(&[
        ("Internal links.md", "# Internal links\n"),
        ("Interpreter.md", "---\naliases: [Interpreter]\n---\n# Interpreter\n"),
        (
            "Old/Linking.md",
            "---\naliases: [Old internal links, Interface notes]\n---\n# Linking\n",
        ),
        ("Printing.md", "# Printing\n"),
    ]);
    let mut c = ready(&v).await;
    let uri = c.open(&v.path("D.md"), "# D\n\n[[Inter").await;
    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(2, 7)}),
        )
        .await;
    let mut items: Vec<(String, String)> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["sortText"].as_str().unwrap().to_string(),
                i["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    items.sort();
    let labels: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    let mut first = labels[..2].to_vec();
    first.sort();
    assert_eq!(first, ["Internal links", "Interpreter"], "{labels:?}");
    // Names that only contain the text come after those that start with it.
    assert_eq!(labels.last(), Some(&"Linking"), "{labels:?}");
    assert_eq!(labels.iter().filter(|l| **l == "Interpreter").count(), 1, "{labels:?}");
    c.shutdown().await;
}

/// Point 3: after a rename the editor applied (the file moved, the links rewritten in the
/// buffer), the linking note's diagnostics are clean within 2 s — no "no note named" for
/// links that lead to the new name.
#[tokio::test(flavor = "multi_thread")]
async fn diagnostics_clear_at_once_after_a_rename() {
    let v = TestVault::with_files(&[
        ("Wild yeasts and moulds.md", "# Wild yeasts and moulds\n"),
        ("A.md", "# A\n\nSee [[Wild yeasts and moulds]].\n"),
    ]);
    let mut c = ready(&v).await;
    let a_text = v.read("A.md");
    let a = c.open(&v.path("A.md"), &a_text).await;
    let old = c
        .open(
            &v.path("Wild yeasts and moulds.md"),
            &v.read("Wild yeasts and moulds.md"),
        )
        .await;
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": old}, "position": pos(0, 4), "newName": "Wild yeasts"}),
        )
        .await;
    // The editor applies it: the file moves, the buffers change, then it says so.
    let mut new_a = a_text.clone();
    for op in edit["documentChanges"].as_array().unwrap() {
        if op["textDocument"]["uri"] == a.as_str() {
            apply_text_edits(&mut new_a, op["edits"].as_array().unwrap());
        }
    }
    assert_eq!(new_a, "# A\n\nSee [[Wild yeasts]].\n");
    std::fs::rename(v.path("Wild yeasts and moulds.md"), v.path("Wild yeasts.md")).unwrap();
    c.change(&a, &new_a).await;
    let new_uri = crate::support::lsp_client::file_uri(&v.path("Wild yeasts.md"));
    c.notify(
        "workspace/didRenameFiles",
        json!({"files": [{"oldUri": old, "newUri": new_uri}]}),
    )
    .await;
    let started = std::time::Instant::now();
    let u = a.clone();
    let clean = c
        .wait_notification(Duration::from_secs(2), move |n| {
            n["method"] == "textDocument/publishDiagnostics"
                && n["params"]["uri"] == u.as_str()
                && n["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.iter().any(|d| d["code"] == "unresolved-link"))
                && n["params"]["version"].as_i64() >= Some(2)
        })
        .await;
    assert!(clean.is_some(), "still a broken link 2 s after the rename");
    assert!(started.elapsed() < Duration::from_secs(2));
    c.shutdown().await;
}

/// Point 5: "Create note" makes the note on disk from the vault's template for new notes.
#[tokio::test(flavor = "multi_thread")]
async fn create_note_uses_the_vault_s_new_note_template() {
    let v = TestVault::with_files(&[
        (
            "Templates/New note.md",
            "---\ntags: [inbox]\n---\n# {{title}}\n\nWhy it matters:\n",
        ),
        ("Templates/Meeting.md", "# Meeting {{date}}\n"),
        ("Plan.md", "# Plan\n\nTry [[Tempeh]].\n"),
    ]);
    let mut c = ready(&v).await;
    let text = v.read("Plan.md");
    let uri = c.open(&v.path("Plan.md"), &text).await;
    let d = pushed(&mut c, &uri, "unresolved-link").await;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d[0]["range"], "context": {"diagnostics": []}}),
        )
        .await;
    let create = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Create note `Tempeh.md`")
        .expect("create action");
    let made = c.request("workspace/executeCommand", create["command"].clone()).await;
    assert_eq!(made["template"], "New note");
    assert_eq!(
        v.read("Tempeh.md"),
        "---\ntags: [inbox]\n---\n# Tempeh\n\nWhy it matters:\n"
    );
    c.shutdown().await;
}

/// Point 11: a front matter `title:` that is the note's name is renamed with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_rename_updates_a_title_that_is_the_name() {
    let v = TestVault::with_files(&[
        ("Koji.md", "---\ntitle: \"Koji\"\ntags: [ferment]\n---\nA mould.\n"),
        ("Other.md", "---\ntitle: Something else\n---\nSee [[Koji]].\n"),
    ]);
    let mut c = ready(&v).await;
    let text = v.read("Koji.md");
    let uri = c.open(&v.path("Koji.md"), &text).await;
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": uri}, "position": pos(1, 9), "newName": "Aspergillus"}),
        )
        .await;
    let own = edit["documentChanges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["textDocument"]["uri"] == uri.as_str())
        .expect("the note's own edit");
    let mut renamed = text.clone();
    apply_text_edits(&mut renamed, own["edits"].as_array().unwrap());
    assert_eq!(renamed, "---\ntitle: \"Aspergillus\"\ntags: [ferment]\n---\nA mould.\n");
    c.shutdown().await;
}

/// Point 10: the first note opened while the index fills gets its backlinks lens right once
/// the index holds the vault — the server asks the client to refresh its lenses (a client
/// that supports it) after each commit, so the count an early request saw is not kept.
#[tokio::test(flavor = "multi_thread")]
async fn lenses_made_while_the_index_fills_are_refreshed() {
    const LINKERS: usize = 3000;
    let v = TestVault::empty();
    std::fs::create_dir_all(v.path(".obsidian")).unwrap();
    v.write("Target.md", "# Target\n\nThe note every other note links.\n");
    let filler = "Words about fermentation, starters and timing that make each note worth reading. ".repeat(20);
    for i in 0..LINKERS {
        v.write(
            &format!("Notes/Note {i:04}.md"),
            &format!("# Note {i}\n\n{filler}\n\nSee [[Target]].\n"),
        );
    }
    let caps = json!({"workspace": {"codeLens": {"refreshSupport": true}}});
    let mut c = v.lsp_capable(&v.root, &Vec::new(), caps).await;
    let uri = c.open(&v.path("Target.md"), &v.read("Target.md")).await;
    let title = |lenses: &Value| lenses[0]["command"]["title"].as_str().unwrap_or("none").to_string();
    let first = title(
        &c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
            .await,
    );
    let want = format!("{LINKERS} backlinks");
    // Each refresh the server asks for, the client makes its lenses again (as editors do);
    // the last one made must count every linker.
    let mut last = first.clone();
    let mut refreshes = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while last != want && std::time::Instant::now() < deadline {
        let seen = c.server_requests.len();
        c.pump(Duration::from_millis(200)).await;
        let asked = c.server_requests[seen..]
            .iter()
            .filter(|r| r["method"] == "workspace/codeLens/refresh")
            .count();
        if asked > 0 {
            refreshes += asked;
            last = title(
                &c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
                    .await,
            );
        }
    }
    eprintln!("first lens: {first}; after {refreshes} refreshes: {last}");
    assert_eq!(last, want, "first lens: {first}, refreshes asked: {refreshes}");
    if first != want {
        assert!(refreshes > 0);
    }
    c.shutdown().await;
}
