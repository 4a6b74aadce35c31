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
    use crate::support::lsp_client::EditPolicy;
    use crate::support::{fake_env, fakes};

    async fn server_with(v: &TestVault, model: &str) -> (scholia_fakes::FakeServer, LspClient) {
        let fake = fakes().await;
        let c = v.lsp_ready(&fake_env(&fake, model)).await;
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
        // Offline (no Gemini, no deep-search backend): background research is not offered.
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
        assert!(text.contains("\n## Research\n\n<!-- scholia:research run="), "{text}");
        assert!(text.contains(" -->\n### "), "{text}");
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

        // An editor that refuses every edit: reported, nothing written anywhere. (A new claim
        // first, so that the second run has something different to write.)
        c.before_apply = None;
        let changed = final_text.replacen("Typed first.\n", "Typed first.\n- Kombucha needs black tea.\n", 1);
        c.change(&uri, &changed).await;
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

/// "Deep search selection" and "Ask Sonar about selection".
mod selection {
    use super::*;
    use crate::support::{EnvVars, env, fakes, gemini_env};

    fn range(text: &str, needle: &str) -> Value {
        let start = text.find(needle).unwrap();
        let pos = |offset: usize| {
            let line = text[..offset].matches('\n').count();
            let col = offset - text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
            json!({"line": line, "character": col})
        };
        json!({"start": pos(start), "end": pos(start + needle.len())})
    }

    async fn actions(c: &mut LspClient, uri: &str, range: Value) -> Vec<Value> {
        let r = c
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
            )
            .await;
        r.as_array().unwrap().clone()
    }

    const NOTE: &str = "# Koji\n\nHow long does koji take to grow at 30 °C?\n\n## Research\n\nOld findings.\n";

    async fn server(v: &TestVault, scenario: &str, extra: &[(&str, &str)]) -> LspClient {
        let mut all: EnvVars = gemini_env(scenario);
        all.extend(env(extra));
        v.lsp_ready(&all).await
    }

    /// "Start deep research (background)": returns at once, progress while the task runs, and
    /// the summary with a link to the saved report lands under `## Research`; cancelling from
    /// the editor cancels the task at Gemini.
    #[tokio::test(flavor = "multi_thread")]
    async fn background_research_from_a_selection_lands_with_a_link_to_its_report() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let fake = fakes().await;
        let base = format!("{}/v1beta", fake.base());
        let mut c = server(
            &v,
            "valid",
            &[
                ("GEMINI_API_KEY", "k"),
                ("GEMINI_API_BASE_URL", &base),
                ("SCHOLIA_TASKS_POLL_MS", "20"),
                // About 2 s of research per task.
                ("GEMINI_DEEP_RESEARCH_AGENT", "fake:polls=100"),
            ],
        )
        .await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        let question = "How long does koji take to grow at 30 °C?";
        let found = actions(&mut c, &uri, range(NOTE, question)).await;
        let action = found
            .iter()
            .find(|a| a["title"] == "Start deep research (background)")
            .unwrap()
            .clone();
        let started = std::time::Instant::now();
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
            )
            .await;
        assert!(r.get("error").is_none(), "{r}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the command returns at once"
        );
        let end = c
            .wait_progress_end("Start deep research (background)", Duration::from_secs(30))
            .await
            .expect("background research ended");
        let message = end["params"]["value"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("report saved to"), "{message}");
        let reports: Vec<String> = c
            .notifications
            .iter()
            .filter(|n| n["method"] == "$/progress")
            .filter_map(|n| n["params"]["value"]["message"].as_str().map(str::to_string))
            .collect();
        assert!(
            reports
                .iter()
                .any(|m| m.starts_with("background research running async")),
            "{reports:?}"
        );
        assert!(
            c.notifications
                .iter()
                .filter(|n| n["method"] == "$/progress")
                .filter(|n| n["params"]["value"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("background research")))
                .all(|n| n["params"]["value"].get("percentage").is_none()),
            "no invented percentages"
        );
        let (text, _) = c.docs[&uri].clone();
        assert!(text.contains(&format!("### {question}\n")), "{text}");
        assert!(text.contains("[[research_reports/"), "{text}");
        assert!(text.contains("> A fake deep-research report"), "{text}");
        let link = text.split("[[").nth(1).unwrap().split("]]").next().unwrap();
        assert!(v.root.join(format!("{link}.md")).is_file(), "{link}");

        // On the whole note, cancelled from the editor: the task is cancelled at Gemini and the
        // note is unchanged.
        c.notifications.clear();
        let long_note = "# Long\n\nWhy is the sky blue at noon and red at dusk?\n";
        v.write("Long.md", long_note);
        let long_uri = c.open(&v.path("Long.md"), long_note).await;
        let whole = actions(&mut c, &long_uri, range(long_note, "")).await;
        let action = whole
            .iter()
            .find(|a| a["title"] == "Start deep research (background)")
            .unwrap()
            .clone();
        assert_eq!(action["command"]["arguments"][0].get("query"), None, "the note itself");
        c.request(
            "workspace/executeCommand",
            json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
        )
        .await;
        let running = c
            .wait_notification(Duration::from_secs(10), |n| {
                n["params"]["value"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("background research running async"))
            })
            .await
            .expect("running");
        c.notify(
            "window/workDoneProgress/cancel",
            json!({"token": running["params"]["token"]}),
        )
        .await;
        let end = c
            .wait_progress_end("Start deep research (background)", Duration::from_secs(10))
            .await
            .unwrap();
        assert!(
            end["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .contains("cancelled"),
            "{end}"
        );
        let cancels = fake
            .all_requests()
            .into_iter()
            .filter(|p| p.ends_with("/cancel"))
            .count();
        assert_eq!(cancels, 1, "cancelled at Gemini");
        let sent = fake.requests("/v1beta/interactions");
        assert!(
            sent.last().unwrap()["input"]
                .as_str()
                .unwrap()
                .contains("Why is the sky blue"),
            "the note's text is the brief"
        );
        c.pump(Duration::from_millis(200)).await;
        assert_eq!(c.docs[&long_uri].0, long_note);
    }

    /// `scholia.tasks start` on an open note: a research-note task that this server's runner
    /// drives to the end and writes into the buffer (unsaved text kept), never on disk; status,
    /// results, list and bad arguments through the same command.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_research_note_task_lands_in_the_open_buffer() {
        let v = TestVault::example();
        let fake = fakes().await;
        let mut e = crate::support::fake_env(&fake, "valid");
        e.extend(env(&[("SCHOLIA_TASKS_POLL_MS", "20")]));
        let mut c = v.lsp_ready(&e).await;
        let disk = v.read("Sourdough starter.md");
        let buffer = disk.replace(
            "## Open questions",
            "- Koji could replace the starter entirely.\n\n## Open questions",
        );
        let uri = c.open(&v.path("Sourdough starter.md"), &buffer).await;
        let tasks = |args: Value| json!({"command": "scholia.tasks", "arguments": [args]});
        let started = Instant::now();
        let r = c
            .request(
                "workspace/executeCommand",
                tasks(json!({"action": "start", "uri": uri})),
            )
            .await;
        assert!(started.elapsed() < Duration::from_secs(2), "start answers at once");
        assert_eq!(r["kind"], "research-note", "{r}");
        assert_eq!(r["note"], "Sourdough starter.md", "{r}");
        let id = r["task_id"].as_str().unwrap().to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !c.docs[&uri].0.contains("\n## Research\n") {
            assert!(Instant::now() < deadline, "the research never landed");
            c.pump(Duration::from_millis(100)).await;
        }
        let text = c.docs[&uri].0.clone();
        assert!(text.contains("- Koji could replace the starter entirely."), "{text}");
        assert_eq!(v.read("Sourdough starter.md"), disk, "the editor owns the open note");
        let prompt = fake.requests("/v1/chat/completions")[0].to_string();
        assert!(
            prompt.contains("Koji could replace the starter"),
            "the buffer was researched"
        );
        let mut status = Value::Null;
        while Instant::now() < deadline {
            status = c
                .request(
                    "workspace/executeCommand",
                    tasks(json!({"action": "status", "task_id": id})),
                )
                .await;
            if status["status"] == "completed" {
                break;
            }
            c.pump(Duration::from_millis(50)).await;
        }
        assert_eq!(status["status"], "completed", "{status}");
        assert_eq!(status["note"], "Sourdough starter.md");
        let results = c
            .request(
                "workspace/executeCommand",
                tasks(json!({"action": "results", "task_id": id})),
            )
            .await;
        assert_eq!(results["metadata"]["note"], "Sourdough starter.md", "{results}");
        assert_eq!(results["metadata"]["written"], true, "{results}");
        assert!(!results["sources"].as_array().unwrap().is_empty(), "{results}");
        let listed = c
            .request("workspace/executeCommand", tasks(json!({"action": "list"})))
            .await;
        assert_eq!(listed["tasks"][0]["id"], id.as_str());
        for (args, message) in [
            (
                json!({"action": "frob"}),
                "action: `frob` is not valid; valid: start, status, results, cancel, list, save, estimate",
            ),
            (json!({"action": "status"}), "task_id: missing; give a task id"),
            (
                json!({"action": "start", "kind": "research-note"}),
                "uri: missing; a research-note task needs the note",
            ),
            (
                json!({"action": "start", "kind": "deeper", "query": "q"}),
                "kind: `deeper` is not valid; valid: gemini, deep-search, research-note",
            ),
            (
                json!({"action": "cancel", "task_id": id}),
                &format!("task `{id}` is already completed"),
            ),
        ] {
            let bad = c.request_raw("workspace/executeCommand", tasks(args.clone())).await;
            assert_eq!(bad["error"]["message"], message, "{args}: {bad}");
        }
        c.shutdown().await;
    }

    /// A task started elsewhere (here the CLI) on the same data directory is driven by the
    /// language server's runner; without a desktop session its end is shown as a message.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_language_server_runs_tasks_and_announces_their_end() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let fake = fakes().await;
        let base = format!("{}/v1beta", fake.base());
        let extra = [
            ("GEMINI_API_KEY", "k"),
            ("GEMINI_API_BASE_URL", base.as_str()),
            ("SCHOLIA_TASKS_POLL_MS", "20"),
        ];
        let mut c = server(&v, "valid", &extra).await;
        let out = v
            .cli(
                &env(&extra),
                &[
                    "tasks",
                    "start",
                    "Why does koji smell of chestnuts?",
                    "--model",
                    "fake:polls=2",
                    "--json",
                ],
            )
            .await;
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        let id = serde_json::from_slice::<Value>(&out.stdout).unwrap()["task_id"]
            .as_str()
            .unwrap()
            .to_string();
        let shown = c
            .wait_notification(Duration::from_secs(20), |n| {
                n["method"] == "window/showMessage"
                    && n["params"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("background research completed"))
            })
            .await
            .expect("the end of the task was announced");
        assert!(shown["params"]["message"].as_str().unwrap().contains(&id), "{shown}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn deep_search_lands_as_a_subsection_and_reruns_replace_it() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let mut c = server(&v, "valid", &[]).await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        let question = "How long does koji take to grow at 30 °C?";
        let found = actions(&mut c, &uri, range(NOTE, question)).await;
        let titles: Vec<&str> = found.iter().map(|a| a["title"].as_str().unwrap()).collect();
        assert_eq!(
            titles,
            [
                "Research this note",
                "Research this note (deep)",
                "Deep search selection",
                "Ask Sonar about selection",
                "Start deep research (background)",
            ]
        );
        let command = found[2]["command"].clone();
        assert_eq!(command["arguments"][0]["query"], question);
        for round in 0..2 {
            c.request(
                "workspace/executeCommand",
                json!({"command": command["command"], "arguments": command["arguments"]}),
            )
            .await;
            let end = c
                .wait_progress_end("Deep search selection", Duration::from_secs(30))
                .await
                .expect("deep search ended");
            assert_eq!(
                end["params"]["value"]["message"], "verified after 2 rounds, 3 sources",
                "{round}"
            );
            c.notifications.clear();
        }
        let (text, _) = c.docs[&uri].clone();
        let sub = format!("### {question}\n");
        assert_eq!(
            text.matches(&sub).count(),
            1,
            "re-running replaced the subsection: {text}"
        );
        assert!(text.starts_with(
            "# Koji\n\nHow long does koji take to grow at 30 °C?\n\n## Research\n\nOld findings.\n\n### How long"
        ));
        assert!(text.contains("rounds, verified (gemini-cli, gemini-2.5-pro)"), "{text}");
        assert!(
            text.contains("#### Findings on How long"),
            "report headings sit below the subsection: {text}"
        );
        assert!(text.contains("- <https://example.org/b>"));
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn progress_per_round_and_cancel_stops_the_cli() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let mut c = server(&v, "hang", &[]).await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        let args = json!({"command": "scholia.deepSearch", "arguments": [{"uri": uri, "query": "koji growth"}]});
        c.request("workspace/executeCommand", args).await;
        let round = c
            .wait_notification(Duration::from_secs(10), |n| {
                n["params"]["value"]["message"].as_str() == Some("round 1/5")
            })
            .await
            .expect("round progress");
        let started = Instant::now();
        c.notify(
            "window/workDoneProgress/cancel",
            json!({"token": round["params"]["token"]}),
        )
        .await;
        let end = c
            .wait_progress_end("Deep search selection", Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(end["params"]["value"]["message"], "cancelled; the note is unchanged");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the CLI was stopped, not waited for"
        );
        c.pump(Duration::from_millis(300)).await;
        assert!(!c.server_requests.iter().any(|r| r["method"] == "workspace/applyEdit"));
        assert_eq!(c.docs[&uri].0, NOTE);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn bad_selections_are_refused() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let mut c = server(&v, "valid", &[]).await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        // Spanning the Research section: offered disabled, with the reason.
        let found = actions(&mut c, &uri, range(NOTE, "30 °C?\n\n## Research\n\nOld")).await;
        // The note's own research first (an editor's default action), then the selection's.
        assert_eq!(found[0]["title"], "Research this note");
        assert_eq!(found[2]["title"], "Deep search selection");
        assert!(found[2].get("command").is_none());
        assert!(
            found[2]["disabled"]["reason"]
                .as_str()
                .unwrap()
                .contains("overlaps the `## Research` section")
        );
        // Whitespace, Helix's one-character cursor and eglot's symbol at point are not
        // selections: only the note actions (research it, deeply, in the background).
        for not_a_selection in ["\n\n", "?", "koji"] {
            let found = actions(&mut c, &uri, range(NOTE, not_a_selection)).await;
            let titles: Vec<&str> = found.iter().map(|a| a["title"].as_str().unwrap()).collect();
            assert_eq!(
                titles,
                [
                    "Research this note",
                    "Research this note (deep)",
                    "Start deep research (background)"
                ],
                "{not_a_selection:?}"
            );
        }
        let refuse = |args: Value| json!({"command": "scholia.deepSearch", "arguments": [args]});
        let r = c
            .request_raw("workspace/executeCommand", refuse(json!({"uri": uri, "query": "  "})))
            .await;
        assert_eq!(r["error"]["message"], "query: empty; select the question to research");
        let r = c
            .request_raw(
                "workspace/executeCommand",
                refuse(json!({"uri": uri, "query": "x", "range": range(NOTE, "Old findings")})),
            )
            .await;
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("range: the selection overlaps")
        );
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x", "model": "gpt"}]}),
            )
            .await;
        assert_eq!(
            r["error"]["message"],
            "Invalid model 'gpt'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"
        );
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x"}]}),
            )
            .await;
        assert!(r["error"]["message"].as_str().unwrap().contains("OPENROUTER_API_KEY"));
        c.pump(Duration::from_millis(200)).await;
        assert_eq!(c.docs[&uri].0, NOTE);
        assert_eq!(v.read("Koji.md"), NOTE);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn ask_sonar_inserts_the_quoted_question_and_sources() {
        let fake = fakes().await;
        let v = TestVault::with_files(&[("Koji.md", NOTE), (".scholia.toml", "[sonar]\nmodel = \"sonar-pro\"\n")]);
        // The Sonar tier costs money: the vault's choice holds once the user trusts it.
        scholia::config::trust::trust(&v.dirs().config, &v.root).unwrap();
        let base = format!("{}/v1", fake.base());
        let mut c = server(
            &v,
            "valid",
            &[("OPENROUTER_API_KEY", "test-key"), ("OPENROUTER_BASE_URL", &base)],
        )
        .await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        let question = "How long does koji take to grow at 30 °C?";
        let found = actions(&mut c, &uri, range(NOTE, question)).await;
        let ask = found
            .iter()
            .find(|a| a["title"] == "Ask Sonar about selection")
            .unwrap();
        c.request(
            "workspace/executeCommand",
            json!({"command": ask["command"]["command"], "arguments": ask["command"]["arguments"]}),
        )
        .await;
        let end = c
            .wait_progress_end("Ask Sonar about selection", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(
            end["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .starts_with("sonar-pro: 3 sources"),
            "{end}"
        );
        let (text, _) = c.docs[&uri].clone();
        let block = &text[text.find(&format!("### {question}")).expect(&text)..];
        assert!(block.contains(&format!("\n> {question}\n")), "{block}");
        assert!(
            block.contains("Fake perplexity/sonar-pro answer"),
            "the configured default tier"
        );
        assert!(
            block.contains("1. <https://sonar.example/one>") && block.contains("2. [Two](https://sonar.example/two)"),
            "{block}"
        );
        assert!(text.contains("Old findings."));
        assert_eq!(
            fake.requests("/v1/chat/completions")[0]["model"],
            "perplexity/sonar-pro"
        );
        c.shutdown().await;
    }
}

/// The engine API behind the editor: one engine per server (one Gemini CLI probe), research
/// that keeps the questions deep search and Ask wrote, and a vault that cannot be opened.
mod engine_api {
    use super::*;
    use crate::support::{EnvVars, env, fake_env, fakes, gemini_env};

    const NOTE: &str = "# Koji\n\n- Koji grows best at 30 °C.\n\nHow long does koji take to grow?\n";

    fn selection(uri: &str, query: &str) -> Value {
        json!({"command": "scholia.deepSearch", "arguments": [{"uri": uri, "query": query}]})
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn research_keeps_questions_and_the_cli_is_probed_once() {
        let fake = fakes().await;
        let v = TestVault::with_files(&[
            ("Koji.md", NOTE),
            ("Rice.md", "# Rice\n\nKoji grows on steamed rice.\n"),
        ]);
        let versions = v.home.join("versions.log");
        let mut all: EnvVars = fake_env(&fake, "fake");
        all.extend(gemini_env("valid"));
        all.extend(env(&[("GEMINI_FAKE_VERSION_LOG", versions.to_str().unwrap())]));
        let mut c = v.lsp_ready(&all).await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        for query in ["How long does koji take to grow?", "Which rice suits koji?"] {
            c.request("workspace/executeCommand", selection(&uri, query)).await;
            let end = c
                .wait_progress_end("Deep search selection", Duration::from_secs(30))
                .await
                .unwrap();
            assert!(
                end["params"]["value"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("verified"),
                "{end}"
            );
            c.notifications.clear();
        }
        let probes = std::fs::read_to_string(&versions).unwrap();
        assert_eq!(
            probes.lines().count(),
            1,
            "one Gemini CLI handle per process: `--version` runs once"
        );
        // Even the probe runs in a private directory of scholia's, never where it was started.
        let cwd = probes.trim_end().trim_start_matches("--version ");
        assert!(cwd.starts_with(v.home.join("config").to_str().unwrap()), "{cwd}");
        c.request(
            "workspace/executeCommand",
            json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "shallow"}]}),
        )
        .await;
        let end = c
            .wait_progress_end("Research this note", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(
            end["params"]["value"]["message"].as_str().unwrap().starts_with("Wrote"),
            "{end}"
        );
        let text = c.docs[&uri].0.clone();
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("`{s}` missing:\n{text}"));
        // Research's own part first, both questions kept after it, each once.
        assert!(at("**Sources**") < at("### How long does koji take to grow?"), "{text}");
        assert!(at("### How long does koji take to grow?") < at("### Which rice suits koji?"));
        assert_eq!(text.matches("### Which rice suits koji?").count(), 1);
        assert_eq!(text.matches("\n## Research\n").count(), 1);
        // Research again: still one copy of everything.
        c.notifications.clear();
        c.request(
            "workspace/executeCommand",
            json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "shallow"}]}),
        )
        .await;
        c.wait_progress_end("Research this note", Duration::from_secs(30))
            .await
            .unwrap();
        let again = c.docs[&uri].0.clone();
        assert_eq!(
            again.matches("### How long does koji take to grow?").count(),
            1,
            "{again}"
        );
        assert_eq!(again.matches("**Sources**").count(), 1, "{again}");
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_vault_that_cannot_be_opened_says_why_once_and_questions_still_work() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        // An index directory inside the vault is refused: the vault cannot be opened.
        let inside = v.root.join(".cache");
        let mut all: EnvVars = gemini_env("valid");
        all.extend(env(&[("SCHOLIA_CACHE_DIR", inside.to_str().unwrap())]));
        let mut c = v.lsp_with(&all).await;
        let end = c
            .wait_progress_end("Indexing vault", Duration::from_secs(30))
            .await
            .unwrap();
        assert!(
            end["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .starts_with("failed: the vault could not be opened: index directory"),
            "{end}"
        );
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        // Research needs the index: it says why there is none, not "still being opened".
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.research", "arguments": [{"uri": uri}]}),
            )
            .await;
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("the vault could not be opened"), "{r}");
        assert_eq!(r["error"]["data"]["code"], "INVALID_CONFIG", "{r}");
        // Deep search needs no index.
        c.request(
            "workspace/executeCommand",
            selection(&uri, "How long does koji take to grow?"),
        )
        .await;
        let end = c
            .wait_progress_end("Deep search selection", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(end["params"]["value"]["message"], "verified after 2 rounds, 3 sources");
        assert!(c.docs[&uri].0.contains("### How long does koji take to grow?"));
        c.pump(Duration::from_millis(200)).await;
        let shown = c
            .notifications
            .iter()
            .filter(|n| n["method"] == "window/showMessage")
            .filter(|n| {
                n["params"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("could not be opened")
            })
            .count();
        assert_eq!(shown, 1, "reported once: {:?}", c.notifications);
        c.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn errors_carry_their_code_and_kind() {
        let v = TestVault::with_files(&[("Koji.md", NOTE)]);
        let mut c = v.lsp_ready(&Vec::new()).await;
        let uri = c.open(&v.path("Koji.md"), NOTE).await;
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x"}]}),
            )
            .await;
        assert_eq!(
            r["error"]["data"],
            json!({"code": "NOT_CONFIGURED", "kind": "not_configured"})
        );
        assert_eq!(r["error"]["code"], -32803, "RequestFailed");
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x", "model": "gpt"}]}),
            )
            .await;
        assert_eq!(r["error"]["data"]["kind"], "invalid_input");
        assert_eq!(r["error"]["code"], -32602, "InvalidParams");
        c.shutdown().await;
    }
}
