//! The language server in-process over pipes, driven by a small LSP client.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::lsp_client::file_uri;
use crate::support::{LspClient, TestVault};

async fn ready(v: &TestVault) -> LspClient {
    let mut c = v.lsp().await;
    let end = c
        .wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .expect("indexing never ended");
    assert!(
        end["params"]["value"]["message"].as_str().unwrap().contains("notes"),
        "{end}"
    );
    c
}

fn names(result: &Value) -> Vec<String> {
    result
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn initialize_answers_at_once_and_indexing_reports_progress() {
    let v = TestVault::example();
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(server_side);
    tokio::spawn(scholia::lsp::serve(
        r,
        w,
        scholia::lsp::LspConfig {
            env: v.env(&Vec::new()),
        },
    ));
    let (cr, cw) = tokio::io::split(client_side);
    let mut c = LspClient::new(cr, cw);
    let started = Instant::now();
    let init = c.initialize(&v.root, json!({})).await;
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "initialize took {:?}",
        started.elapsed()
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["workspaceSymbolProvider"], true);
    assert_eq!(caps["definitionProvider"], true);
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 2);
    assert_eq!(init["serverInfo"]["name"], "scholia");

    let message = c.progress_message("Indexing vault", Duration::from_secs(30)).await;
    assert!(message.starts_with("7 notes: 7 indexed"), "{message}");
    let kinds: Vec<_> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "$/progress")
        .map(|n| n["params"]["value"]["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("begin"));
    assert!(kinds.iter().any(|k| k == "report"));
    assert!(
        c.server_requests
            .iter()
            .any(|r| r["method"] == "window/workDoneProgress/create")
    );
    c.shutdown().await;
}

/// Hostile queries and report directories from the editor: answers or clear errors, and the
/// server keeps serving.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_queries_and_directories_from_the_editor() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let deep = format!("{}wild", "(".repeat(990));
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.search", "arguments": [{"query": deep}]}),
        )
        .await;
    assert!(r.get("error").is_none(), "{r}");
    let r = c.request("workspace/symbol", json!({"query": "(".repeat(5000)})).await;
    assert!(r.is_array(), "{r}");
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.search", "arguments": [{"query": "wild ".repeat(300)}]}),
        )
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("query: 1500 characters"),
        "{r}"
    );
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.tasks", "arguments": [{"action": "save", "task_id": "t", "output_dir": "/etc"}]}),
        )
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("output_dir `/etc`: outside the vault"),
        "{r}"
    );
    let r = c.request("workspace/symbol", json!({"query": "wild"})).await;
    assert_eq!(names(&r)[0], "Wild yeast");
    c.shutdown().await;
}

#[tokio::test]
async fn workspace_symbols_from_the_index() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let r = c.request("workspace/symbol", json!({"query": "wild"})).await;
    assert_eq!(names(&r)[0], "Wild yeast");
    assert_eq!(r[0]["kind"], 1, "notes are files");
    assert_eq!(r[0]["location"]["uri"], file_uri(&v.path("Microbes/Wild yeast.md")));

    let r = c.request("workspace/symbol", json!({"query": "carbon diox"})).await;
    assert_eq!(names(&r), vec!["Carbon dioxide"]);
    assert_eq!(r[0]["containerName"], "Wild yeast");
    assert_eq!(r[0]["location"]["range"]["start"]["line"], 15);
    c.shutdown().await;
}

#[tokio::test]
async fn definition_follows_wikilinks_to_notes_and_headings() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let text =
        "# Scratch\n\nSee [[Wild yeast#Carbon dioxide]] and [[Kombucha|tea]] and [[#Scratch]] and [[Missing]].\n";
    v.write("Scratch.md", text);
    let uri = c.open(&v.path("Scratch.md"), text).await;
    let at = |character: u32| json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": character}});

    let r = c.request("textDocument/definition", at(8)).await;
    assert_eq!(r["uri"], file_uri(&v.path("Microbes/Wild yeast.md")));
    assert_eq!(r["range"]["start"]["line"], 15);
    let r = c.request("textDocument/definition", at(45)).await;
    assert_eq!(r["uri"], file_uri(&v.path("Kombucha.md")));
    assert_eq!(r["range"]["start"]["line"], 0);
    let r = c.request("textDocument/definition", at(66)).await;
    assert_eq!(r["uri"], uri);
    assert_eq!(r["range"]["start"]["line"], 0);
    assert_eq!(
        c.request("textDocument/definition", at(85)).await,
        Value::Null,
        "unresolved link"
    );
    assert_eq!(
        c.request("textDocument/definition", at(2)).await,
        Value::Null,
        "not on a link"
    );
    // Positions past the end of the line or the document are clamped, not errors.
    let past = json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 9999}});
    assert_eq!(c.request("textDocument/definition", past).await, Value::Null);
    let past = json!({"textDocument": {"uri": uri}, "position": {"line": 999, "character": 3}});
    assert_eq!(c.request("textDocument/definition", past).await, Value::Null);
    c.shutdown().await;
}

#[tokio::test]
async fn completion_after_double_bracket() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let text = "Link to [[ferm\nand [[Wild yeast#car]]\n";
    let uri = c.open(&v.path("Draft.md"), text).await;
    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 14}}),
        )
        .await;
    let items = r["items"].as_array().unwrap();
    assert_eq!(items[0]["label"], "Fermentation temperature");
    assert_eq!(items[0]["textEdit"]["newText"], "Fermentation temperature]]");
    assert_eq!(items[0]["textEdit"]["range"]["start"]["character"], 10);

    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 20}}),
        )
        .await;
    let items = r["items"].as_array().unwrap();
    assert_eq!(items[0]["label"], "Carbon dioxide");
    assert_eq!(
        items[0]["textEdit"]["newText"], "Wild yeast#Carbon dioxide",
        "already closed: no extra ]]"
    );

    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}}),
        )
        .await;
    assert_eq!(r, Value::Null, "not inside [[");
    c.shutdown().await;
}

#[tokio::test]
async fn unsaved_buffer_text_is_indexed() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let uri = c.open(&v.path("Kombucha.md"), &v.read("Kombucha.md")).await;
    c.change(&uri, "# Kombucha\n\n## Jun variant with honey\n").await;
    let mut found = false;
    for _ in 0..50 {
        let r = c.request("workspace/symbol", json!({"query": "jun variant"})).await;
        if names(&r) == vec!["Jun variant with honey"] {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(found, "unsaved heading never became a symbol");
    // Changes for documents that were never opened are ignored, the server keeps serving.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere.md", "version": 2}, "contentChanges": [{"text": "x"}]}),
    )
    .await;
    let r = c.request("workspace/symbol", json!({"query": "kombucha"})).await;
    assert!(!names(&r).is_empty());
    c.shutdown().await;
}

#[tokio::test]
async fn two_servers_on_one_vault() {
    let v = TestVault::example();
    let mut first = ready(&v).await;
    let mut second = v.lsp().await;
    let message = second.progress_message("Indexing vault", Duration::from_secs(30)).await;
    assert!(message.starts_with("read-only"), "{message}");
    let r = second.request("workspace/symbol", json!({"query": "kombucha"})).await;
    assert_eq!(names(&r)[0], "Kombucha");
    first.shutdown().await;
    second.shutdown().await;
}

mod research;

mod selection;

mod engine_api;
