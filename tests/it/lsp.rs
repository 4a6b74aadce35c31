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
    tokio::spawn(scholia::lsp::serve(r, w, scholia::lsp::LspConfig { env: v.env(&[]) }));
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

    let end = c
        .wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        end["params"]["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("7 notes: 7 indexed"),
        "{end}"
    );
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
    let end = second
        .wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        end["params"]["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("read-only"),
        "{end}"
    );
    let r = second.request("workspace/symbol", json!({"query": "kombucha"})).await;
    assert_eq!(names(&r)[0], "Kombucha");
    first.shutdown().await;
    second.shutdown().await;
}

mod research {
    use super::*;
    use crate::research::{fake_env, fakes};
    use crate::support::lsp_client::EditPolicy;

    async fn server_with(v: &TestVault, model: &str) -> (scholia::fakes::FakeServer, LspClient) {
        let fake = fakes().await;
        let env: Vec<(String, String)> = fake_env(&fake, model);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut c = v.lsp_with(&env).await;
        c.wait_progress_end("Indexing vault", Duration::from_secs(30))
            .await
            .expect("indexing ended");
        (fake, c)
    }

    fn research_args(uri: &str, depth: &str) -> Value {
        json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": depth}]})
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn code_actions_are_offered_on_vault_notes() {
        let v = TestVault::example();
        let mut c = ready(&v).await;
        let uri = c.open(&v.path("Kombucha.md"), &v.read("Kombucha.md")).await;
        let r = c
            .request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}))
            .await;
        let titles: Vec<&str> = r
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, vec!["Research this note", "Research this note (deep)"]);
        assert_eq!(r[1]["command"]["arguments"][0]["depth"], "deep");
        let outside = tempfile::tempdir().unwrap();
        let other = c.open(&outside.path().join("x.md"), "# x\n").await;
        let r = c
            .request("textDocument/codeAction", json!({"textDocument": {"uri": other}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}))
            .await;
        assert_eq!(r, Value::Null);
        let bad = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "medium"}]}),
            )
            .await;
        assert_eq!(
            bad["error"]["message"],
            "depth: `medium` is not valid; valid values: shallow, deep"
        );
        let bad = c
            .request_raw("workspace/executeCommand", json!({"command": "scholia.frobnicate"}))
            .await;
        assert!(
            bad["error"]["message"]
                .as_str()
                .unwrap()
                .contains("valid: scholia.research")
        );
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn research_lands_in_the_buffer_while_the_user_types() {
        let v = TestVault::example();
        let (fake, mut c) = server_with(&v, "fake:latency=300").await;
        // Unsaved text: the run must research what the buffer says, not the file.
        let disk = v.read("Sourdough starter.md");
        let buffer = disk.replace(
            "## Open questions",
            "- Koji could replace the starter entirely.\n\n## Open questions",
        );
        let uri = c.open(&v.path("Sourdough starter.md"), &buffer).await;
        let started = Instant::now();
        let r = c
            .request("workspace/executeCommand", research_args(&uri, "shallow"))
            .await;
        assert_eq!(r, Value::Null);
        assert!(
            started.elapsed() < Duration::from_millis(250),
            "executeCommand must return at once"
        );
        // Keep typing at the top while it runs.
        let typed = buffer.replacen("# Sourdough starter", "# Sourdough starter (edited)", 1);
        c.change(&uri, &typed).await;
        let end = c
            .wait_progress_end("Research this note", Duration::from_secs(60))
            .await
            .expect("research ended");
        let message = end["params"]["value"]["message"].as_str().unwrap();
        assert!(message.contains("topics") && message.contains("sources"), "{message}");
        let begin = c
            .notifications
            .iter()
            .find(|n| n["params"]["value"]["title"] == "Research this note")
            .unwrap();
        assert_eq!(begin["params"]["value"]["cancellable"], true);
        let reports = c
            .notifications
            .iter()
            .filter(|n| n["params"]["token"] == begin["params"]["token"] && n["params"]["value"]["kind"] == "report")
            .count();
        assert!(reports >= 3, "topics, sources, synthesis reported: {reports}");

        let (text, _) = c.docs[&uri].clone();
        assert!(
            text.contains("\n# Sourdough starter (edited)\n"),
            "the typing survived: {}",
            &text[..200]
        );
        assert!(text.contains("- Koji could replace the starter entirely."));
        assert!(text.contains("\n## Research\n\n### "), "{text}");
        let topics_prompt = fake.requests("/v1/chat/completions")[0].to_string();
        assert!(
            topics_prompt.contains("Koji could replace the starter"),
            "the unsaved buffer was researched"
        );
        // The editor owns the buffer: the file on disk is untouched.
        assert_eq!(v.read("Sourdough starter.md"), disk);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn cancelled_run_changes_nothing() {
        let v = TestVault::example();
        let (_fake, mut c) = server_with(&v, "fake:latency=1500").await;
        let text = v.read("Kombucha.md");
        let uri = c.open(&v.path("Kombucha.md"), &text).await;
        c.request("workspace/executeCommand", research_args(&uri, "deep")).await;
        let begin = c
            .wait_notification(Duration::from_secs(10), |n| {
                n["params"]["value"]["title"] == "Research this note (deep)"
            })
            .await
            .unwrap();
        c.notify(
            "window/workDoneProgress/cancel",
            json!({"token": begin["params"]["token"]}),
        )
        .await;
        let end = c
            .wait_progress_end("Research this note (deep)", Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(end["params"]["value"]["message"], "cancelled; the note is unchanged");
        c.pump(Duration::from_millis(300)).await;
        assert!(!c.server_requests.iter().any(|r| r["method"] == "workspace/applyEdit"));
        assert_eq!(c.docs[&uri].0, text);
        assert_eq!(v.read("Kombucha.md"), text);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn stale_edit_is_recomputed_once() {
        let v = TestVault::example();
        let (_fake, mut c) = server_with(&v, "fake").await;
        let text = v.read("Kombucha.md");
        let uri = c.open(&v.path("Kombucha.md"), &text).await;
        // The user types just as the edit arrives: the first edit is stale.
        let mut typed_once = false;
        let target = uri.clone();
        c.before_apply = Some(Box::new(move |docs| {
            if typed_once {
                return Vec::new();
            }
            typed_once = true;
            let entry = docs.get_mut(&target).unwrap();
            entry.0 = format!("Typed first.\n{}", entry.0);
            entry.1 += 1;
            vec![json!({"textDocument": {"uri": target, "version": entry.1}, "contentChanges": [{"text": entry.0}]})]
        }));
        c.request("workspace/executeCommand", research_args(&uri, "shallow"))
            .await;
        let end = c
            .wait_progress_end("Research this note", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(
            !end["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .starts_with("failed"),
            "{end}"
        );
        let edits = c
            .server_requests
            .iter()
            .filter(|r| r["method"] == "workspace/applyEdit")
            .count();
        assert_eq!(edits, 2);
        let (final_text, _) = c.docs[&uri].clone();
        assert!(
            final_text.starts_with("Typed first.\n---\n") && final_text.contains("\n## Research\n"),
            "{final_text}"
        );

        // An editor that refuses every edit: reported, nothing written anywhere.
        c.before_apply = None;
        c.edit_policy = EditPolicy::Refuse;
        c.request("workspace/executeCommand", research_args(&uri, "shallow"))
            .await;
        c.notifications.clear();
        let end = c
            .wait_progress_end("Research this note", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(
            end["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .contains("rejected the edit twice"),
            "{end}"
        );
        assert_eq!(v.read("Kombucha.md"), text);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_closed_note_is_written_on_disk() {
        let v = TestVault::example();
        let (_fake, mut c) = server_with(&v, "fake").await;
        let uri = c.open(&v.path("Kombucha.md"), &v.read("Kombucha.md")).await;
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
            .await;
        c.docs.remove(&uri);
        c.request("workspace/executeCommand", research_args(&uri, "shallow"))
            .await;
        c.wait_progress_end("Research this note", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(v.read("Kombucha.md").contains("\n## Research\n"));
        c.shutdown().await;
    }
}
