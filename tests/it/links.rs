//! The editor half over the link graph, in-process: references, rename (notes, headings,
//! files the editor moves), diagnostics (pushed and pulled), hover, the outline, code lenses,
//! and research seen in place (its lens, contradictions, citations).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::lsp_client::{apply_text_edits, file_uri};
use crate::support::{LspClient, TestVault, fake_env, fakes};

const VAULT: &[(&str, &str)] = &[
    (
        "Koji.md",
        "# Koji\n\nKoji grows on steamed rice.\n\n## Growing\nWarm and humid. ^warm\n",
    ),
    (
        "Miso.md",
        "# Miso\n\nMade with [[Koji]] and [[Koji#Growing|grown koji]].\n\n![[Koji]]\n",
    ),
    (
        "Sake/Brewing.md",
        "# Brewing\n\nStarts with [[Koji#^warm]] and [[Koji.md]].\n",
    ),
    ("Soy sauce.md", "# Soy sauce\n\nAlso from [[koji]], see [[Miso]].\n"),
];

/// The LSP position of the first occurrence of `needle` (plus `skip` characters) in `text`.
pub(crate) fn pos(text: &str, needle: &str, skip: usize) -> Value {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle} not in {text}")) + skip;
    let line = text[..at].matches('\n').count();
    let col: usize = text[text[..at].rfind('\n').map_or(0, |i| i + 1)..at]
        .encode_utf16()
        .count();
    json!({"line": line, "character": col})
}

async fn open(c: &mut LspClient, v: &TestVault, rel: &str) -> (String, String) {
    let text = v.read(rel);
    let uri = c.open(&v.path(rel), &text).await;
    (uri, text)
}

/// `rel:line` of each location, sorted.
pub(crate) fn places(v: &TestVault, locations: &Value) -> Vec<String> {
    let root = file_uri(&v.root);
    let mut out: Vec<String> = locations
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let uri = l["uri"].as_str().unwrap();
            format!(
                "{}:{}",
                uri.strip_prefix(&format!("{root}/")).unwrap_or(uri).replace("%20", " "),
                l["range"]["start"]["line"]
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn references_from_a_title_a_heading_a_link() {
    let v = TestVault::with_files(VAULT);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let (koji, koji_text) = open(&mut c, &v, "Koji.md").await;
    let (miso, miso_text) = open(&mut c, &v, "Miso.md").await;
    for (uri, text, at, expected) in [
        // The title: every link and embed to the note, any form.
        (
            &koji,
            &koji_text,
            "Koji",
            vec![
                "Miso.md:2",
                "Miso.md:2",
                "Miso.md:4",
                "Sake/Brewing.md:2",
                "Sake/Brewing.md:2",
                "Soy sauce.md:2",
            ],
        ),
        // A heading: the links to it.
        (&koji, &koji_text, "Growing", vec!["Miso.md:2"]),
        // A link: its target's references (here the heading's).
        (&miso, &miso_text, "Growing|", vec!["Miso.md:2"]),
        // A link to the note.
        (
            &miso,
            &miso_text,
            "[[Koji]]",
            vec![
                "Miso.md:2",
                "Miso.md:2",
                "Miso.md:4",
                "Sake/Brewing.md:2",
                "Sake/Brewing.md:2",
                "Soy sauce.md:2",
            ],
        ),
    ] {
        let r = c
            .request(
                "textDocument/references",
                json!({"textDocument": {"uri": uri}, "position": pos(text, at, 1), "context": {"includeDeclaration": false}}),
            )
            .await;
        assert_eq!(places(&v, &r), expected, "{at}");
    }
    // Backlinks on the title, as a lens.
    let lenses = c
        .request("textDocument/codeLens", json!({"textDocument": {"uri": koji}}))
        .await;
    assert_eq!(lenses[0]["command"]["title"], "3 backlinks", "{lenses}");
    assert_eq!(lenses[0]["command"]["command"], "scholia.references");
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "scholia.references", "arguments": [lenses[0]["command"]["arguments"][0]]}),
        )
        .await;
    assert_eq!(r.as_array().unwrap().len(), 6, "{r}");
    c.shutdown().await;
}

/// The file a `file://` URI names (percent-decoded).
fn file_of(uri: &str) -> std::path::PathBuf {
    let raw = uri.strip_prefix("file://").unwrap().as_bytes();
    let mut bytes = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            bytes.push(u8::from_str_radix(std::str::from_utf8(&raw[i + 1..i + 3]).unwrap(), 16).unwrap());
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    std::path::PathBuf::from(String::from_utf8(bytes).unwrap())
}

/// Applies a WorkspaceEdit of text edits and file renames to files on disk, as an editor
/// would for notes that are not open.
fn apply_on_disk(edit: &Value) {
    for change in edit["documentChanges"].as_array().unwrap() {
        if change["kind"] == "rename" {
            let to = file_of(change["newUri"].as_str().unwrap());
            assert!(!to.exists(), "never overwrites");
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(file_of(change["oldUri"].as_str().unwrap()), to).unwrap();
            continue;
        }
        let file = file_of(change["textDocument"]["uri"].as_str().unwrap());
        let mut text = std::fs::read_to_string(&file).unwrap();
        apply_text_edits(&mut text, change["edits"].as_array().unwrap());
        std::fs::write(&file, text).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn renaming_a_note_from_its_title_or_a_link() {
    let v = TestVault::with_files(VAULT);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let (miso, miso_text) = open(&mut c, &v, "Miso.md").await;
    // What will be renamed, and the name to edit.
    let p = c
        .request(
            "textDocument/prepareRename",
            json!({"textDocument": {"uri": miso}, "position": pos(&miso_text, "[[Koji]]", 3)}),
        )
        .await;
    assert_eq!(p["placeholder"], "Koji", "{p}");
    // A name another note has, or one links cannot carry, is refused, and nothing changes.
    let on_link = pos(&miso_text, "[[Koji]]", 3);
    for (name, expected) in [
        ("Miso", "`Miso.md` already exists"),
        ("a|b", "newName: `a|b` holds `|`"),
    ] {
        let r = c
            .request_raw(
                "textDocument/rename",
                json!({"textDocument": {"uri": miso}, "position": on_link, "newName": name}),
            )
            .await;
        assert!(r["error"]["message"].as_str().unwrap().contains(expected), "{r}");
    }
    // Renamed from a link: an open note gets a versioned edit, the others plain ones, the file
    // is renamed last and its title follows its name.
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": miso}, "position": pos(&miso_text, "[[Koji]]", 3), "newName": "Rice koji"}),
        )
        .await;
    let ops = edit["documentChanges"].as_array().unwrap();
    assert_eq!(ops.last().unwrap()["kind"], "rename", "{edit}");
    let miso_op = ops.iter().find(|o| o["textDocument"]["uri"] == miso).unwrap();
    assert_eq!(miso_op["textDocument"]["version"], 1);
    // The open note in the editor's buffer; the rest on disk.
    let disk_only = json!({"documentChanges": ops.iter().filter(|o| o["textDocument"]["uri"] != miso).cloned().collect::<Vec<_>>()});
    apply_on_disk(&disk_only);
    assert_eq!(
        v.read("Rice koji.md"),
        "# Rice koji\n\nKoji grows on steamed rice.\n\n## Growing\nWarm and humid. ^warm\n"
    );
    assert_eq!(
        v.read("Sake/Brewing.md"),
        "# Brewing\n\nStarts with [[Rice koji#^warm]] and [[Rice koji.md]].\n"
    );
    assert_eq!(
        v.read("Soy sauce.md"),
        "# Soy sauce\n\nAlso from [[Rice koji]], see [[Miso]].\n"
    );
    assert!(!v.path("Koji.md").exists());
    let miso_edits: Vec<&str> = miso_op["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["newText"].as_str().unwrap())
        .collect();
    assert_eq!(miso_edits, vec!["Rice koji", "Rice koji", "Rice koji"]);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn renaming_a_heading_and_files_the_editor_moves() {
    let v = TestVault::with_files(VAULT);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let (koji, koji_text) = open(&mut c, &v, "Koji.md").await;
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": koji}, "position": pos(&koji_text, "Growing", 2), "newName": "Growing koji"}),
        )
        .await;
    let ops = edit["documentChanges"].as_array().unwrap();
    assert!(
        ops.iter().all(|o| o.get("kind").is_none()),
        "no file is renamed: {edit}"
    );
    let koji_op = ops.iter().find(|o| o["textDocument"]["uri"] == koji).unwrap();
    assert_eq!(koji_op["edits"][0]["newText"], "Growing koji");
    apply_on_disk(
        &json!({"documentChanges": ops.iter().filter(|o| o["textDocument"]["uri"] != koji).cloned().collect::<Vec<_>>()}),
    );
    assert_eq!(
        v.read("Miso.md"),
        "# Miso\n\nMade with [[Koji]] and [[Koji#Growing koji|grown koji]].\n\n![[Koji]]\n"
    );

    // The editor moves a folder itself: links to its notes are rewritten first.
    let moved = c
        .request(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": file_uri(&v.path("Sake")), "newUri": file_uri(&v.path("Drinks/Sake"))}]}),
        )
        .await;
    assert!(
        moved.is_null() || moved["documentChanges"].as_array().unwrap().is_empty(),
        "nothing links to Brewing: {moved}"
    );
    let moved = c
        .request(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": file_uri(&v.path("Miso.md")), "newUri": file_uri(&v.path("Pastes/Red miso.md"))}]}),
        )
        .await;
    apply_on_disk(&moved);
    assert_eq!(
        v.read("Soy sauce.md"),
        "# Soy sauce\n\nAlso from [[koji]], see [[Red miso]].\n"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn diagnostics_are_pushed_then_follow_the_vault() {
    let v = TestVault::with_files(VAULT);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let text = "# Plan\n\n[[Koji]] [[Tempeh]] [[Koji#Nope]] ![[missing.png]]\n";
    v.write("Plan.md", text);
    let uri = c.open(&v.path("Plan.md"), text).await;
    let published = |n: &Value, want: usize| {
        n["method"] == "textDocument/publishDiagnostics"
            && n["params"]["uri"] == uri
            && n["params"]["diagnostics"].as_array().unwrap().len() == want
    };
    let n = c
        .wait_notification(Duration::from_secs(10), |n| published(n, 3))
        .await
        .expect("three problems published");
    let d = &n["params"]["diagnostics"];
    let codes: Vec<&str> = d
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        vec!["unresolved-link", "unresolved-heading", "missing-embed"],
        "{d}"
    );
    assert_eq!(d[0]["message"], "no note named `Tempeh` in the vault");
    assert_eq!(d[0]["range"]["start"], json!({"line": 2, "character": 9}));
    // "Create note" on the unresolved link.
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d[0]["range"], "context": {"diagnostics": [d[0]]}}),
        )
        .await;
    let create = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Create note `Tempeh.md`")
        .expect("create action");
    // A command that makes the note on disk and opens it (not a hidden unsaved buffer).
    assert_eq!(create["command"]["command"], "scholia.createNote");
    let made = c.request("workspace/executeCommand", create["command"].clone()).await;
    assert_eq!(made["path"], "Tempeh.md", "{made}");
    assert_eq!(v.read("Tempeh.md"), "# Tempeh\n\n");
    c.pump(Duration::from_millis(200)).await;
    assert!(
        c.server_requests
            .iter()
            .any(|r| r["method"] == "window/showDocument" && r["params"]["uri"] == made["uri"]),
        "the new note is opened"
    );
    // Made again: refused, the note kept.
    let again = c
        .request_raw("workspace/executeCommand", create["command"].clone())
        .await;
    assert!(
        again["error"]["message"].as_str().unwrap().contains("already exists"),
        "{again}"
    );
    c.wait_notification(Duration::from_secs(10), |n| {
        published(n, 2) && n["params"]["diagnostics"][0]["code"] == "unresolved-heading"
    })
    .await
    .expect("republished after the index changed");
    // Typing a fix: republished once the text settles.
    c.change(&uri, "# Plan\n\n[[Koji]] [[Tempeh]] [[Koji#Growing]]\n").await;
    c.wait_notification(Duration::from_secs(10), |n| published(n, 0))
        .await
        .expect("clean");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn diagnostics_pulled_by_clients_that_pull() {
    let v = TestVault::with_files(VAULT);
    let mut c = v
        .lsp_capable(
            &v.root,
            &Vec::new(),
            json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
        )
        .await;
    c.wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    let text = "[[Dup]] [[Koji]]\n";
    let uri = c.open(&v.path("Pull.md"), text).await;
    v.write("A/Dup.md", "# Dup\n");
    v.write("B/Dup.md", "# Dup\n");
    let mut report = Value::Null;
    for _ in 0..50 {
        report = c
            .request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}))
            .await;
        // Until the index has the two new notes (the first answers say `Dup` is missing).
        if report["items"][0]["code"] == "ambiguous-link" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(report["kind"], "full");
    assert_eq!(report["items"][0]["code"], "ambiguous-link", "{report}");
    assert!(
        report["items"][0]["message"]
            .as_str()
            .unwrap()
            .contains("A/Dup.md, B/Dup.md")
    );
    c.pump(Duration::from_millis(500)).await;
    assert!(
        !c.notifications
            .iter()
            .any(|n| n["method"] == "textDocument/publishDiagnostics"),
        "a pulling client is not also pushed to"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hover_on_links_and_the_outline() {
    let v = TestVault::with_files(VAULT);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let (miso, text) = open(&mut c, &v, "Miso.md").await;
    for (at, expected) in [
        ("[[Koji]]", "**Koji** · `Koji.md`\n\nKoji grows on steamed rice."),
        ("Growing|", "**Koji** · `Koji.md`\n\n## Growing\nWarm and humid. ^warm"),
    ] {
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": miso}, "position": pos(&text, at, 3)}),
            )
            .await;
        assert_eq!(h["contents"]["value"], expected);
    }
    let h = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": miso}, "position": pos(&text, "Made", 0)}),
        )
        .await;
    assert!(h.is_null());
    let (koji, _) = open(&mut c, &v, "Koji.md").await;
    let outline = c
        .request("textDocument/documentSymbol", json!({"textDocument": {"uri": koji}}))
        .await;
    assert_eq!(outline[0]["name"], "Koji");
    assert_eq!(outline[0]["children"][0]["name"], "Growing");
    assert_eq!(outline[0]["children"][0]["range"]["start"]["line"], 4);
    c.shutdown().await;
}

/// Research in place: the section's lens (when, how, stale), contradictions on the lines they
/// concern (cleared by an edit), the contradicting source, a citation's provenance on hover.
#[tokio::test(flavor = "multi_thread")]
async fn research_seen_in_place() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut c = v.lsp_ready(&fake_env(&server, "fake")).await;
    let (uri, _) = open(&mut c, &v, "Kombucha.md").await;
    c.request(
        "workspace/executeCommand",
        json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "shallow"}]}),
    )
    .await;
    c.wait_progress_end("Research this note", Duration::from_secs(60))
        .await
        .expect("research ended");
    c.pump(Duration::from_millis(300)).await;
    let text = c.docs[&uri].0.clone();
    assert!(text.contains("<!-- scholia:research run="), "{text}");
    let lenses = c
        .request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
        .await;
    let lens = lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["command"]["command"] == "scholia.research")
        .expect("research lens");
    let title = lens["command"]["title"].as_str().unwrap();
    assert!(
        title.starts_with("Researched ") && title.contains(" · shallow · fake · ") && title.ends_with("re-run"),
        "{title}"
    );
    assert!(!title.contains("stale"), "{title}");

    // The contradiction sits on the note's line that makes the claim.
    let n = c
        .wait_notification(Duration::from_secs(10), |n| {
            n["method"] == "textDocument/publishDiagnostics"
                && n["params"]["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["code"] == "contradiction")
        })
        .await
        .expect("a contradiction diagnostic");
    let d = n["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "contradiction")
        .unwrap()
        .clone();
    assert_eq!(d["severity"], 3);
    let line = d["range"]["start"]["line"].as_u64().unwrap() as usize;
    let claim = text.lines().nth(line).unwrap();
    assert!(
        !claim.starts_with('#') && text.find(claim).unwrap() < text.find("## Research").unwrap(),
        "{claim}"
    );
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
        )
        .await;
    assert!(
        actions
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["title"] == "Show the contradicting source"
                && a["command"]["arguments"][0]["source"]
                    .as_str()
                    .unwrap()
                    .starts_with("http")),
        "{actions}"
    );

    // A citation's provenance on hover.
    let section = text.find("## Research").unwrap();
    let link = section + text[section..].find("](http").unwrap() - 2;
    let line = text[..link].matches('\n').count();
    let col = text[text[..link].rfind('\n').unwrap() + 1..link].encode_utf16().count();
    let h = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": col}}),
        )
        .await;
    let shown = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("Read from `http") && shown.contains("\n\n> ") && shown.contains("Cited by the research of"),
        "{h}"
    );

    // The owner edits the claim: the contradiction clears and the lens says stale.
    let edited = text.replacen(claim, "- (rewritten by the owner)", 1);
    c.change(&uri, &edited).await;
    let version = c.docs[&uri].1;
    c.wait_notification(Duration::from_secs(10), |n| {
        n["method"] == "textDocument/publishDiagnostics"
            && n["params"]["version"] == json!(version)
            && !n["params"]["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["code"] == "contradiction")
    })
    .await
    .expect("cleared");
    let lenses = c
        .request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
        .await;
    let stale = lenses
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["command"]["title"].as_str().unwrap().contains("stale"));
    assert!(stale, "{lenses}");

    // The owner writes inside scholia's part: the lens says a new run waits on them.
    let inside = edited.replacen(
        "<!-- /scholia:research -->",
        "My own remark.\n\n<!-- /scholia:research -->",
        1,
    );
    c.change(&uri, &inside).await;
    let lenses = c
        .request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
        .await;
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["command"]["title"].as_str())
        .collect();
    assert!(
        titles
            .iter()
            .any(|t| t.ends_with("edited since: move your words out of it to re-run")),
        "{titles:?}"
    );
    c.shutdown().await;
}
