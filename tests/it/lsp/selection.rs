//! "Deep search selection" and "Ask Sonar about selection".

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

/// A server whose background research is Gemini's, at the fakes (which it returns too),
/// polled every 20 ms; `extra` adds to its environment.
async fn with_gemini(v: &TestVault, extra: &[(&str, &str)]) -> (scholia_fakes::FakeServer, LspClient) {
    let fake = fakes().await;
    let base = format!("{}/v1beta", fake.base());
    let mut all = vec![
        ("GEMINI_API_KEY", "k"),
        ("GEMINI_API_BASE_URL", base.as_str()),
        ("SCHOLIA_TASKS_POLL_MS", "20"),
    ];
    all.extend_from_slice(extra);
    let c = server(v, "valid", &all).await;
    (fake, c)
}

/// "Start deep research (background)": returns at once, progress while the task runs, and
/// the summary with a link to the saved report lands under `## Research`; cancelling from
/// the editor cancels the task at Gemini.
#[tokio::test(flavor = "multi_thread")]
async fn background_research_from_a_selection_lands_with_a_link_to_its_report() {
    let v = TestVault::with_files(&[("Koji.md", NOTE)]);
    // About 2 s of research per task.
    let (fake, mut c) = with_gemini(&v, &[("GEMINI_DEEP_RESEARCH_AGENT", "fake:polls=100")]).await;
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
    let message = c
        .progress_message("Start deep research (background)", Duration::from_secs(10))
        .await;
    assert!(message.contains("cancelled"), "{message}");
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
    let message = c
        .progress_message("Ask Sonar about selection", Duration::from_secs(30))
        .await;
    assert!(message.starts_with("sonar-pro: 3 sources"), "{message}");
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

/// A selection whose answer would take the heading of a subsection the owner wrote: refused
/// before any task starts, the buffer as it was.
#[tokio::test(flavor = "multi_thread")]
async fn an_owner_s_subsection_is_never_an_answer_s_place() {
    let question = "How long does koji take to grow at 30 °C?";
    let note = format!("# Koji\n\n{question}\n\n## Research\n\n### {question}\n\nMy own answer: two days.\n");
    let v = TestVault::with_files(&[("Koji.md", &note)]);
    let (fake, mut c) = with_gemini(&v, &[]).await;
    let uri = c.open(&v.path("Koji.md"), &note).await;
    let found = actions(&mut c, &uri, range(&note, question)).await;
    for title in ["Start deep research (background)", "Deep search selection"] {
        let action = found.iter().find(|a| a["title"] == title).unwrap().clone();
        c.request_raw(
            "workspace/executeCommand",
            json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
        )
        .await;
        let message = c.progress_message(title, Duration::from_secs(30)).await;
        assert!(message.contains("is not an answer scholia wrote"), "{title}: {message}");
        c.notifications.clear();
    }
    assert_eq!(fake.count_prefixed("/v1beta"), 0, "no task started");
    assert_eq!(c.docs[&uri].0, note);
    assert_eq!(v.read("Koji.md"), note);
    c.shutdown().await;
}
