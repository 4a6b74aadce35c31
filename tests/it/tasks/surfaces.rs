//! Tasks seen from every surface: a research-note task writing its note, one task API on the
//! CLI, MCP and the language server, a cancel under load.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{gemini_env, json, run_until_idle};
use crate::support::{Reaped, TestVault, env, fakes, stderr};

/// `--kind research-note`: deep research_note in the background, written atomically into the
/// note on disk by whichever runner drives it; bad notes are refused before anything is stored.
#[tokio::test(flavor = "multi_thread")]
async fn a_research_note_task_writes_its_note_when_it_finishes() {
    let v = TestVault::example();
    let server = fakes().await;
    let mut e = crate::support::fake_env(&server, "valid");
    e.extend(env(&[("SCHOLIA_TASKS_POLL_MS", "20")]));
    let before = v.read("Kombucha.md");
    let r = json(
        &v,
        &e,
        &[
            "tasks",
            "start",
            "Kombucha.md",
            "--kind",
            "research-note",
            "--focus",
            "SCOBY care",
            "--json",
        ],
    )
    .await;
    let id = r["task_id"].as_str().unwrap().to_string();
    let s = json(&v, &e, &["tasks", "status", &id, "--json"]).await;
    assert_eq!(
        (s["kind"].as_str(), s["note"].as_str()),
        (Some("research-note"), Some("Kombucha.md")),
        "{s}"
    );
    assert_eq!(
        v.read("Kombucha.md"),
        before,
        "nothing is written before a runner runs it"
    );
    run_until_idle(&v, &e).await;
    let s = json(&v, &e, &["tasks", "status", &id, "--json"]).await;
    assert_eq!(s["status"], "completed", "{s}");
    let after = v.read("Kombucha.md");
    assert!(after.starts_with(before.trim_end()), "the user's text is kept");
    assert!(after.contains("\n## Research\n"), "{after}");
    let r = json(&v, &e, &["tasks", "results", &id, "--json"]).await;
    assert_eq!(r["metadata"]["kind"], "research-note");
    assert!(
        after.contains(r["report"].as_str().unwrap().trim()),
        "the report is the section written"
    );
    let topics = server.requests("/v1/chat/completions")[0].to_string();
    assert!(topics.contains("SCOBY care"), "the focus reaches the research");
    for (args, message) in [
        (
            vec!["tasks", "start", "../outside.md", "--kind", "research-note"],
            "outside",
        ),
        (
            vec!["tasks", "start", "Missing.md", "--kind", "research-note"],
            "Missing.md",
        ),
        (
            vec!["tasks", "start", "q", "--focus", "x"],
            "--focus: only a research-note task takes a focus",
        ),
    ] {
        let out = v.cli(&e, &args).await;
        assert!(
            !out.status.success() && stderr(&out).contains(message),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let listed = json(&v, &e, &["tasks", "list", "--json"]).await;
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(1),
        "refused starts store nothing: {listed}"
    );
}

/// The task API answers in one shape on every surface: the CLI's `--json`, the language
/// server's `scholia.tasks` (plus its `summary`) and the MCP tools' structured content.
#[tokio::test(flavor = "multi_thread")]
async fn one_task_api_on_every_surface() {
    use serde_json::json;
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let (mcp, _stop) = crate::mcp::connect(&v, &e).await;
    let mut lsp = v.lsp_ready(&e).await;
    let tasks = |args: Value| json!({"command": "scholia.tasks", "arguments": [args]});
    let structured = |r: rmcp::model::CallToolResult| {
        assert_ne!(r.is_error, Some(true), "{r:?}");
        r.structured_content.expect("structured content")
    };
    // The language server adds the line an editor shows; the rest is the engine's answer.
    let without_summary = |mut v: Value| {
        let summary = v.as_object_mut().unwrap().remove("summary");
        assert!(summary.is_some_and(|s| s.is_string()), "{v}");
        v
    };
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();

    let cli = json(&v, &e, &["tasks", "start", "Why is rye sour?", "--json", "--no-notify"]).await;
    let mcp_start =
        structured(crate::mcp::call(&mcp, "start_deep_research", json!({"query": "Why is rye sour?"})).await);
    let lsp_start = without_summary(
        lsp.request(
            "workspace/executeCommand",
            tasks(json!({"action": "start", "query": "Why is rye sour?"})),
        )
        .await,
    );
    for started in [&mcp_start, &lsp_start] {
        assert_eq!(keys(started), keys(&cli), "{started} vs {cli}");
        assert_eq!((&started["kind"], &started["status"]), (&cli["kind"], &cli["status"]));
    }
    assert_eq!(
        (cli["kind"].as_str(), cli["status"].as_str()),
        (Some("gemini"), Some("running_async"))
    );
    let ids: Vec<String> = [&cli, &mcp_start, &lsp_start]
        .iter()
        .map(|s| s["task_id"].as_str().unwrap().to_string())
        .collect();

    // The language server's runner drives them; then every surface reads the same answers.
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in &ids {
        while json(&v, &e, &["tasks", "status", id, "--json"]).await["status"] != "completed" {
            assert!(Instant::now() < deadline, "{id} never completed");
            lsp.pump(Duration::from_millis(50)).await;
        }
    }
    for id in &ids {
        for (action, tool) in [("status", "check_research_status"), ("results", "get_research_results")] {
            let cli = json(&v, &e, &["tasks", action, id, "--json"]).await;
            let mcp = structured(crate::mcp::call(&mcp, tool, json!({"task_id": id})).await);
            let lsp = without_summary(
                lsp.request(
                    "workspace/executeCommand",
                    tasks(json!({"action": action, "task_id": id})),
                )
                .await,
            );
            assert_eq!(mcp, cli, "{action}: MCP vs CLI");
            assert_eq!(lsp, cli, "{action}: LSP vs CLI");
        }
    }

    // Cancelling long tasks: one from each surface, one answer shape.
    let long = |n: usize| {
        let (v, e) = (&v, &e);
        async move {
            let q = format!("Long question {n}");
            let r = json(
                v,
                e,
                &[
                    "tasks",
                    "start",
                    &q,
                    "--model",
                    "fake:polls=100000",
                    "--json",
                    "--no-notify",
                ],
            )
            .await;
            r["task_id"].as_str().unwrap().to_string()
        }
    };
    let (a, b, c) = (long(1).await, long(2).await, long(3).await);
    let cli = json(&v, &e, &["tasks", "cancel", &a, "--json"]).await;
    let mcp_cancel = structured(crate::mcp::call(&mcp, "cancel_research", json!({"task_id": b})).await);
    let lsp_cancel = without_summary(
        lsp.request(
            "workspace/executeCommand",
            tasks(json!({"action": "cancel", "task_id": c})),
        )
        .await,
    );
    for cancelled in [&cli, &mcp_cancel, &lsp_cancel] {
        assert_eq!(keys(cancelled), keys(&cli), "{cancelled} vs {cli}");
        assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
        assert_eq!(cancelled["success"], true, "{cancelled}");
    }
    lsp.shutdown().await;
}

/// A cancel that reaches Gemini before it wrote anything, while a runner polls the same tasks
/// (the runner often records Gemini's `cancelled` first), and a cancel that declines what
/// Gemini wrote: every one answers "cancelled, without results", never an empty report or
/// the declined one.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_before_any_words_has_no_results_under_load() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let map = v.env(&e);
    let engine = std::sync::Arc::new(scholia::engine::Engine::load(&map, None, None).unwrap());
    let mut ids = Vec::new();
    for i in 0..24 {
        let r = engine
            .start_task(
                scholia::engine::TaskStart {
                    query: format!("question {i}"),
                    // Odd tasks have written something by the time they are cancelled, and Gemini
                    // answers their cancel late: the runner's polls see `cancelled` first.
                    model: Some(
                        if i % 2 == 0 {
                            "fake:polls=100000,silent"
                        } else {
                            "fake:polls=100000,cancel-ms=100"
                        }
                        .into(),
                    ),
                    notify: Some(false),
                    ..Default::default()
                },
                None,
                None,
            )
            .await
            .unwrap();
        ids.push(r.task_id);
    }
    let mut runner = v.cmd();
    runner.envs(e.iter().map(|(k, v)| (k, v))).args(["tasks", "run"]);
    let child = Reaped(runner.spawn().unwrap());
    let started = Instant::now();
    while server.count_prefixed("/v1beta/interactions/") < 48 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // One after another, while the runner polls them; what the odd ones wrote is declined.
    for (i, id) in ids.iter().enumerate() {
        let c = engine.cancel_task(id, Some(i % 2 == 0)).await.unwrap();
        assert_eq!(c.status, "cancelled");
        assert!(!c.partial_saved, "nothing was written or kept: {c:?}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await; // the runner sees the ends too
    drop(child);
    for id in &ids {
        let e = engine.task_results(id, None).await.unwrap_err();
        assert!(e.message.contains("cancelled, without results"), "{id}: {}", e.message);
    }
}
