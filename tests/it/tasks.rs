//! Background tasks against the fake Gemini Interactions API: start, status, results, save,
//! cancel (recorded at the provider), an expired session, both response shapes, kill -9 and
//! resume, two runners on one data directory, many tasks at once.

use std::time::{Duration, Instant};

use scholia_fakes::FakeServer;
use serde_json::Value;

use crate::support::{EnvVars, Reaped, TestVault, env, fakes, stderr};

pub(crate) fn gemini_env(server: &FakeServer) -> EnvVars {
    env(&[
        ("GEMINI_API_KEY", "test-key"),
        ("GEMINI_API_BASE_URL", &format!("{}/v1beta", server.base())),
        ("SCHOLIA_TASKS_POLL_MS", "20"),
    ])
}

pub(crate) async fn json(v: &TestVault, env: &EnvVars, args: &[&str]) -> Value {
    let out = v.cli(env, args).await;
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

pub(crate) async fn start(v: &TestVault, env: &EnvVars, query: &str, agent: &str) -> String {
    let r = json(
        v,
        env,
        &["tasks", "start", query, "--model", agent, "--json", "--no-notify"],
    )
    .await;
    assert_eq!(r["status"], "running_async", "{r}");
    r["task_id"].as_str().unwrap().to_string()
}

pub(crate) async fn run_until_idle(v: &TestVault, env: &EnvVars) {
    let out = v.cli(env, &["tasks", "run", "--until-idle"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gemini_task_from_start_to_saved_report() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    for (agent, shape) in [("fake:polls=3", "outputs"), ("fake:polls=2,steps", "steps")] {
        let id = start(&v, &e, "How do sourdough starters work?", agent).await;
        let created = server.requests("/v1beta/interactions");
        let sent = created.last().unwrap();
        assert_eq!(
            (sent["background"].clone(), sent["store"].clone()),
            (Value::Bool(true), Value::Bool(true))
        );
        assert_eq!(sent["agent"], agent);

        // Status reads the store only: no GET reaches the provider.
        let polls_before = server.count_prefixed("/v1beta/interactions/");
        let s = json(&v, &e, &["tasks", "status", &id, "--json"]).await;
        assert_eq!(s["status"], "running_async");
        // No percentage from Gemini: an estimate from the query, and marked as one.
        assert_eq!(s["progress_estimated"], true, "{s}");
        assert!(s["progress"].as_u64().unwrap() < 100, "{s}");
        assert!(s["estimated_completion_minutes"].as_f64().unwrap() > 0.0, "{s}");
        assert_eq!(server.count_prefixed("/v1beta/interactions/"), polls_before);

        let out = v.cli(&e, &["tasks", "results", &id]).await;
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("has not completed yet (status: running)"),
            "{}",
            stderr(&out)
        );

        run_until_idle(&v, &e).await;
        let s = json(&v, &e, &["tasks", "status", &id, "--json"]).await;
        assert_eq!(s["status"], "completed", "{shape}: {s}");
        assert!(s["tokens_used"]["input"].as_u64().unwrap() > 0, "{s}");
        let r = json(&v, &e, &["tasks", "results", &id, "--json"]).await;
        let report = r["report"].as_str().unwrap();
        assert!(
            report.starts_with("# How do sourdough starters work?"),
            "{shape}: {report}"
        );
        assert!(
            !report.contains("Planning searches"),
            "{shape}: thoughts are not the report"
        );
        assert_eq!(r["sources"].as_array().unwrap().len(), 2, "{shape}: {r}");
        let r = json(&v, &e, &["tasks", "results", &id, "--json", "--no-sources"]).await;
        assert!(r.get("sources").is_none());

        // Inside scholia's data directory (or the vault): the only places reports may go.
        let out_dir = v.home.join("data").join("reports");
        let saved = json(
            &v,
            &e,
            &[
                "tasks",
                "save",
                &id,
                "--output-dir",
                out_dir.to_str().unwrap(),
                "--json",
            ],
        )
        .await;
        let path = std::path::PathBuf::from(saved["file_path"].as_str().unwrap());
        let month = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(month.len(), 7, "{}", path.display());
        let name = saved["filename"].as_str().unwrap();
        assert!(
            name.starts_with(&format!("research_{id}_")) && name.ends_with(".md"),
            "{name}"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("A fake deep-research report") && text.contains("https://example.org/fermentation"),
            "{text}"
        );
        assert!(text.contains("| Task |"), "metadata included by default");
        let bare = json(
            &v,
            &e,
            &[
                "tasks",
                "save",
                &id,
                "--output-dir",
                out_dir.to_str().unwrap(),
                "--prefix",
                "bare",
                "--no-metadata",
                "--no-sources",
                "--json",
            ],
        )
        .await;
        let bare = std::fs::read_to_string(bare["file_path"].as_str().unwrap()).unwrap();
        assert!(!bare.contains("| Task |") && !bare.contains("## Sources"), "{bare}");

        let out = v.cli(&e, &["tasks", "cancel", &id]).await;
        assert!(stderr(&out).contains("is already completed"), "{}", stderr(&out));
    }
    let out = v.cli(&e, &["tasks", "status", "no-such-task"]).await;
    assert!(
        stderr(&out).contains("task_id: no task `no-such-task`"),
        "{}",
        stderr(&out)
    );
    let out = v.cli(&e, &["tasks", "start", "  ", "--model", "fake"]).await;
    assert!(stderr(&out).contains("query: empty"), "{}", stderr(&out));
    let out = v.cli(&e, &["tasks", "start", "q", "--max-wait-hours", "0"]).await;
    assert!(stderr(&out).contains("max_wait_hours"), "{}", stderr(&out));
    let out = v.cli(&env(&[]), &["tasks", "start", "q"]).await;
    assert_eq!(out.status.code(), Some(3), "not configured: {}", stderr(&out));
    assert!(stderr(&out).contains("GEMINI_API_KEY"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_answering_at_once_completes_synchronously() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let r = json(
        &v,
        &e,
        &[
            "tasks",
            "start",
            "What is a levain?",
            "--model",
            "fake:polls=0",
            "--json",
            "--no-notify",
        ],
    )
    .await;
    assert_eq!(
        (r["mode"].as_str(), r["status"].as_str()),
        (Some("sync"), Some("completed")),
        "{r}"
    );
    assert!(
        r["results"]["report"]
            .as_str()
            .unwrap()
            .starts_with("# What is a levain?"),
        "{r}"
    );
    assert_eq!(r["results"]["sources"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(r["results"]["metadata"]["mode"], "sync");
    assert!(r["cost_usd"].as_f64().unwrap() > 0.0, "{r}");
    // Nothing left to poll; the stored task says the same.
    assert_eq!(server.count_prefixed("/v1beta/interactions/"), 0);
    let id = r["task_id"].as_str().unwrap();
    let s = json(&v, &e, &["tasks", "status", id, "--json"]).await;
    assert_eq!(
        (s["status"].as_str(), s["progress"].as_u64()),
        (Some("completed"), Some(100))
    );
    let again = json(&v, &e, &["tasks", "results", id, "--json"]).await;
    assert_eq!(again["report"], r["results"]["report"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_reaches_gemini_and_keeps_the_partial_report() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let id = start(&v, &e, "A long question", "fake:polls=100000").await;
    let r = json(&v, &e, &["tasks", "cancel", &id, "--json"]).await;
    assert_eq!(r["status"], "cancelled", "{r}");
    let cancels: Vec<String> = server
        .all_requests()
        .into_iter()
        .filter(|p| p.ends_with("/cancel"))
        .collect();
    assert_eq!(
        cancels.len(),
        1,
        "POST /interactions/{{id}}/cancel was called: {cancels:?}"
    );
    let r = json(&v, &e, &["tasks", "results", &id, "--json"]).await;
    assert!(
        r["report"].as_str().unwrap().contains("not finished"),
        "partial report kept: {r}"
    );
    let out = v.cli(&e, &["tasks", "cancel", &id]).await;
    assert!(stderr(&out).contains("is already cancelled"), "{}", stderr(&out));

    // Without the partial report.
    let id = start(&v, &e, "Another", "fake:polls=100000").await;
    json(&v, &e, &["tasks", "cancel", &id, "--no-partial", "--json"]).await;
    let out = v.cli(&e, &["tasks", "results", &id]).await;
    assert!(stderr(&out).contains("cancelled, without results"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn expired_sessions_failures_and_flaky_polls() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let gone = start(&v, &e, "q1", "fake:gone").await;
    let failed = start(&v, &e, "q2", "fake:fail").await;
    let flaky = start(&v, &e, "q3", "fake:flaky=3,polls=1").await;
    let partial = start(&v, &e, "q4", "fake:incomplete").await;
    run_until_idle(&v, &e).await;
    let status = |id: String| {
        let (v, e) = (&v, &e);
        async move { json(v, e, &["tasks", "status", &id, "--json"]).await }
    };
    let s = status(gone).await;
    assert_eq!(s["status"], "failed");
    assert_eq!(
        s["error"],
        "Research session expired on Gemini servers. Task was interrupted and cannot be recovered."
    );
    let s = status(failed).await;
    assert_eq!(s["status"], "failed");
    assert!(s["error"].as_str().unwrap().contains("could not complete"), "{s}");
    assert_eq!(status(flaky).await["status"], "completed", "503s are retried");
    assert_eq!(status(partial).await["status"], "completed_partial");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_runner_s_tasks_are_resumed_and_two_runners_never_share_one() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(start(&v, &e, &format!("question {i}"), "fake:polls=40").await);
    }
    // A runner that dies mid-way: kill -9 leaves its leases behind.
    let mut runner = v.cmd();
    runner.envs(e.iter().map(|(k, v)| (k, v))).args(["tasks", "run"]);
    let mut child = Reaped(runner.spawn().unwrap());
    let started = Instant::now();
    while server.count_prefixed("/v1beta/interactions/") < 12 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    let s = json(&v, &e, &["tasks", "status", &ids[0], "--json"]).await;
    assert_eq!(s["status"], "running_async", "{s}");

    // Two runners on the same data directory take the tasks over once the leases expire.
    tokio::join!(run_until_idle(&v, &e), run_until_idle(&v, &e));
    for id in &ids {
        let s = json(&v, &e, &["tasks", "status", id, "--json"]).await;
        assert_eq!(s["status"], "completed", "resumed: {s}");
    }
    // Each interaction was polled exactly as often as it took to complete: 40 GETs, never a
    // second poller's.
    let mut per: std::collections::HashMap<String, usize> = Default::default();
    for p in server.all_requests() {
        if let Some(id) = p.strip_prefix("/v1beta/interactions/")
            && !id.ends_with("/cancel")
        {
            *per.entry(id.to_string()).or_default() += 1;
        }
    }
    assert_eq!(per.len(), 6);
    assert!(per.values().all(|n| *n == 40), "{per:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_tasks_at_once() {
    let server = fakes().await;
    let v = TestVault::empty();
    let e = gemini_env(&server);
    let engine = std::sync::Arc::new(scholia::engine::Engine::load(&v.env(&e), None, None).unwrap());
    let tasks = engine.open_tasks().await.unwrap();
    let started = Instant::now();
    let mut ids = Vec::new();
    for i in 0..100 {
        let t = tasks
            .start(scholia::tasks::StartRequest {
                query: format!("question {i}"),
                kind: scholia::tasks::Kind::Gemini,
                notify: false,
                max_wait_hours: 1.0,
                model: Some("fake:polls=3".into()),
                note: None,
            })
            .await
            .unwrap();
        ids.push(t.id);
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    let runner = tokio::spawn({
        let (engine, shutdown) = (engine.clone(), shutdown.clone());
        async move { engine.run_tasks(shutdown).await }
    });
    loop {
        let list = tasks.list(1000).await.unwrap();
        if list.iter().all(|t| t.status.is_final()) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "100 tasks did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    shutdown.cancel();
    runner.await.unwrap().unwrap();
    for id in ids {
        assert_eq!(tasks.status(&id).await.unwrap().status, "completed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_search_task_needs_no_gemini_key() {
    let v = TestVault::empty();
    let mut e = crate::support::gemini_env("valid");
    e.extend(env(&[
        ("SCHOLIA_TASKS_POLL_MS", "20"),
        ("DEEP_SEARCH_MAX_ITERATIONS", "3"),
    ]));
    let r = json(
        &v,
        &e,
        &[
            "tasks",
            "start",
            "How long does koji take to grow?",
            "--kind",
            "deep-search",
            "--json",
        ],
    )
    .await;
    let id = r["task_id"].as_str().unwrap().to_string();
    assert_eq!(
        json(&v, &e, &["tasks", "status", &id, "--json"]).await["kind"],
        "deep-search"
    );
    run_until_idle(&v, &e).await;
    let s = json(&v, &e, &["tasks", "status", &id, "--json"]).await;
    assert_eq!(s["status"], "completed", "{s}");
    let r = json(&v, &e, &["tasks", "results", &id, "--json"]).await;
    assert!(!r["report"].as_str().unwrap().is_empty(), "{r}");
    let out = v.cli(&e, &["tasks", "start", "q", "--kind", "gemin"]).await;
    assert!(stderr(&out).contains("valid: gemini, deep-search"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn estimates_use_the_configured_price_table() {
    let v = TestVault::empty();
    let query = "Compare the history and market of kefir and kombucha producers";
    let base = json(&v, &env(&[]), &["tasks", "estimate", query, "--json"]).await;
    assert_eq!(base["will_likely_go_async"], true);
    assert!(base["recommendation"].as_str().is_some());
    v.write(".scholia.toml", "[tasks]\nprice = { input = 4.0, output = 24.0 }\n");
    let doubled = json(&v, &env(&[]), &["tasks", "estimate", query, "--json"]).await;
    let usd = |v: &Value| v["estimated_cost"]["likely_usd"].as_f64().unwrap();
    assert!((usd(&doubled) - 2.0 * usd(&base)).abs() < 0.02, "{base} {doubled}");
    v.write(".scholia.toml", "[tasks]\nprice = { input = -1.0, output = 24.0 }\n");
    let out = v.cli(&env(&[]), &["tasks", "estimate", query]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("tasks.price"), "{}", stderr(&out));
}

/// Research-note tasks, and one task API on every surface.
mod surfaces;
