//! The language server's side of issue 38: names that break links refused for files the
//! editor moves, "Create note" only where a note may be made, heading renames that would
//! collide, references from anywhere in a note and past 512 KiB, and Markdown links as links.

use std::time::Duration;

use serde_json::{Value, json};

use crate::links::{places, pos};
use crate::support::lsp_client::file_uri;
use crate::support::{LspClient, TestVault};

async fn refs(c: &mut LspClient, uri: &str, text: &str, at: &str) -> Value {
    c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": pos(text, at, 1), "context": {"includeDeclaration": false}}),
    )
    .await
}

/// 27, 28, 5: references from the front matter or body text of a note without a title
/// heading; Markdown links count; a link past 512 KiB counts.
#[tokio::test(flavor = "multi_thread")]
async fn references_from_anywhere_markdown_links_and_big_notes() {
    let big = format!(
        "# Big\n\n{}\nAt the end: [[Kombucha]].\n",
        "filler words here.\n".repeat(35_000)
    );
    let v = TestVault::with_files(&[
        (
            "Kombucha.md",
            "---\ntags: [tea]\n---\nFermented tea, no title heading.\n",
        ),
        ("A.md", "See [[Kombucha]].\n"),
        (
            "Folder/B.md",
            "Also [the drink](../Kombucha.md) and [again](<../Kombucha.md>).\n",
        ),
        ("C.md", "And [by name](Kombucha.md#Part).\n"),
        ("Big.md", &big),
    ]);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let text = v.read("Kombucha.md");
    let uri = c.open(&v.path("Kombucha.md"), &text).await;
    let want = vec!["A.md:0", "Big.md:35003", "C.md:0", "Folder/B.md:0", "Folder/B.md:0"];
    for at in ["tags", "Fermented", "heading"] {
        let r = refs(&mut c, &uri, &text, at).await;
        assert_eq!(places(&v, &r), want, "from `{at}`");
    }
    // From a Markdown link: its target's references.
    let b = v.read("Folder/B.md");
    let b_uri = c.open(&v.path("Folder/B.md"), &b).await;
    let r = refs(&mut c, &b_uri, &b, "the drink").await;
    assert_eq!(places(&v, &r), want);
    // Definition on a Markdown link goes to the note.
    let d = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": b_uri}, "position": pos(&b, "the drink", 1)}),
        )
        .await;
    assert!(d.to_string().contains("Kombucha.md"), "{d}");
    c.shutdown().await;
}

/// 28: a Markdown link to a missing note is a broken link, with a diagnostic.
#[tokio::test(flavor = "multi_thread")]
async fn broken_markdown_links_are_diagnosed() {
    let v = TestVault::with_files(&[("Kombucha.md", "# Kombucha\n")]);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let text = "# Plan\n\n[ok](Kombucha.md) [gone](Nowhere%20else.md) [web](https://example.com/x.md)\n";
    v.write("Plan.md", text);
    let uri = c.open(&v.path("Plan.md"), text).await;
    let n = c
        .wait_notification(Duration::from_secs(10), |n| {
            n["method"] == "textDocument/publishDiagnostics"
                && n["params"]["uri"] == uri
                && !n["params"]["diagnostics"].as_array().unwrap().is_empty()
        })
        .await
        .expect("published");
    let d = n["params"]["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["message"].as_str().unwrap().contains("Nowhere else"), "{d:?}");
    c.shutdown().await;
}

/// 11: the editor moving a file to a name links cannot name is refused with the reason.
#[tokio::test(flavor = "multi_thread")]
async fn files_the_editor_moves_to_names_links_cannot_carry() {
    let v = TestVault::with_files(&[("Kombucha.md", "# Kombucha\n"), ("A.md", "[[Kombucha]]\n")]);
    let mut c = v.lsp_ready(&Vec::new()).await;
    for bad in ["Kom#bucha.md", "Kom|bucha.md", "Kom^bucha.md", "Kom[bucha.md"] {
        let r = c
            .request_raw(
                "workspace/willRenameFiles",
                json!({"files": [{"oldUri": file_uri(&v.path("Kombucha.md")), "newUri": file_uri(&v.path(bad))}]}),
            )
            .await;
        let err = &r["error"];
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .contains("which links cannot name"),
            "{bad}: {r}"
        );
        assert_ne!(err["code"], -32801, "a code Neovim shows: {r}");
    }
    c.shutdown().await;
}

/// 14: "Create note" is offered only where no file of that name exists (ignored, binary, or
/// differing in case) and never in `.obsidian`.
#[tokio::test(flavor = "multi_thread")]
async fn create_note_only_where_a_note_may_be_made() {
    let v = TestVault::with_files(&[(".gitignore", "Private.md\n"), ("Private.md", "# Private, ignored\n")]);
    std::fs::write(v.path("Blob.md"), b"bin\0ary").unwrap();
    let mut c = v.lsp_ready(&Vec::new()).await;
    let text = "[[Private]] [[Blob]] [[blob]] [[.obsidian/x]] [[Fresh]]\n";
    v.write("Plan.md", text);
    let uri = c.open(&v.path("Plan.md"), text).await;
    let n = c
        .wait_notification(Duration::from_secs(10), |n| {
            n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
        })
        .await
        .expect("published");
    let all = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 60}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": all, "context": {"diagnostics": n["params"]["diagnostics"]}}),
        )
        .await;
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["title"].as_str())
        .filter(|t| t.starts_with("Create note"))
        .collect();
    assert_eq!(titles, ["Create note `Fresh.md`"], "{actions}");
    c.shutdown().await;
}

/// 15: a heading renamed to another heading's name is refused (links to that one would move).
#[tokio::test(flavor = "multi_thread")]
async fn heading_renames_that_collide_are_refused() {
    let v = TestVault::with_files(&[
        ("Bread.md", "# Bread\n\n## Sourness\n\nsharp\n\n## Elsewhere\n\nother\n"),
        ("A.md", "[[Bread#Elsewhere]] [[Bread#Sourness]]\n"),
    ]);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let text = v.read("Bread.md");
    let uri = c.open(&v.path("Bread.md"), &text).await;
    let r = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": uri}, "position": pos(&text, "Sourness", 2), "newName": "elsewhere"}),
        )
        .await;
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("already has a heading `Elsewhere`"), "{r}");
    assert_eq!(r["error"]["code"], -32803, "{r}");
    c.shutdown().await;
}

/// Issue 41, point 1: an editor that cannot rename files (eglot 1.9: `documentChanges`
/// without `resourceOperations`) gets the note moved on disk by scholia, the closed linking
/// notes rewritten there, the open ones as edits, and the note opened at its new path; a
/// renamed note with unsaved changes is refused with a code the editor shows.
#[tokio::test(flavor = "multi_thread")]
async fn an_editor_that_cannot_rename_files_never_gets_dangling_links() {
    let v = TestVault::with_files(&[
        ("Sourdough starter.md", "# Sourdough starter\n\nFlour and water.\n"),
        ("Open.md", "# Open\n\nFeed the [[Sourdough starter]].\n"),
        (
            "Closed.md",
            "# Closed\n\nMy [[Sourdough starter|starter]] and [[Sourdough starter#Feeding]].\n",
        ),
    ]);
    let eglot = json!({
        "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
        "window": {"showDocument": {"support": true}}
    });
    let mut c = v.lsp_capable(&v.root, &Vec::new(), eglot).await;
    c.pump(Duration::from_millis(500)).await;
    let note = v.read("Sourdough starter.md");
    let uri = c.open(&v.path("Sourdough starter.md"), &note).await;
    let open_text = v.read("Open.md");
    let open_uri = c.open(&v.path("Open.md"), &open_text).await;
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": uri}, "position": pos(&note, "Sourdough", 1), "newName": "Levain"}),
        )
        .await;
    // The file moved, the closed linker rewritten on disk, the title heading with it.
    assert!(!v.path("Sourdough starter.md").exists());
    assert_eq!(v.read("Levain.md"), "# Levain\n\nFlour and water.\n");
    assert_eq!(
        v.read("Closed.md"),
        "# Closed\n\nMy [[Levain|starter]] and [[Levain#Feeding]].\n"
    );
    // The open linker comes as an edit of its buffer, and no file operation is asked for.
    assert_eq!(v.read("Open.md"), open_text, "not written under the editor");
    let changes = edit["documentChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{edit}");
    assert_eq!(changes[0]["textDocument"]["uri"], open_uri.as_str());
    assert!(!edit.to_string().contains("\"kind\":\"rename\""), "{edit}");
    let mut buffer = open_text.clone();
    crate::support::lsp_client::apply_text_edits(&mut buffer, changes[0]["edits"].as_array().unwrap());
    assert_eq!(buffer, "# Open\n\nFeed the [[Levain]].\n");
    // The note opens at its new path.
    c.pump(Duration::from_millis(300)).await;
    let shown: Vec<&Value> = c
        .server_requests
        .iter()
        .filter(|r| r["method"] == "window/showDocument")
        .collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["params"]["uri"], file_uri(&v.path("Levain.md")).as_str());

    // Unsaved changes in the note to rename: refused, nothing moved.
    let levain = v.read("Levain.md");
    let levain_uri = c.open(&v.path("Levain.md"), &levain).await;
    c.change(&levain_uri, "# Levain\n\nFlour, water and salt.\n").await;
    let refused = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": levain_uri}, "position": pos(&levain, "Levain", 1), "newName": "Mother"}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unsaved changes"),
        "{refused}"
    );
    assert!(v.path("Levain.md").exists() && !v.path("Mother.md").exists());
    c.shutdown().await;
}
