//! Issue 42: a team's hosts share background tasks through PostgreSQL. Two hosts with data
//! directories of their own and one database (a throwaway cluster, `scholia_fakes::postgres`):
//! both see the six tasks; a runner killed with -9 loses none; each is created once at the
//! research API and polled by one runner at a time; a cancel from the other host reaches the
//! task and its provider; no SQLite store is written.

use std::time::{Duration, Instant};

use crate::support::{EnvVars, Reaped, TestVault, env, fakes, stderr};
use crate::tasks::{gemini_env, json, run_until_idle, start};

#[tokio::test(flavor = "multi_thread")]
async fn two_hosts_share_tasks_through_postgresql() {
    let Some(url) = scholia_fakes::postgres::fresh_database("team").await else {
        return;
    };
    let server = fakes().await;
    let (a, b) = (TestVault::empty(), TestVault::empty());
    let mut e: EnvVars = gemini_env(&server);
    e.extend(env(&[("SCHOLIA_TASKS_DATABASE_URL", &url)]));
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(start(&a, &e, &format!("question from A {i}"), "fake:polls=30").await);
        ids.push(start(&b, &e, &format!("question from B {i}"), "fake:polls=30").await);
    }
    // Each host sees all six.
    for host in [&a, &b] {
        let listed = json(host, &e, &["tasks", "list", "--json"]).await;
        let seen: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        for id in &ids {
            assert!(seen.contains(&id.as_str()), "{id} not listed on a host: {listed}");
        }
    }
    // A's runner dies mid-way (kill -9): its leases are left behind.
    let mut runner = a.cmd();
    runner.envs(e.iter().map(|(k, v)| (k, v))).args(["tasks", "run"]);
    let mut child = Reaped(runner.spawn().unwrap());
    let started = Instant::now();
    while server.count_prefixed("/v1beta/interactions/") < 12 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    // Runners on both hosts finish them, once the leases run out.
    tokio::join!(run_until_idle(&a, &e), run_until_idle(&b, &e));
    for id in &ids {
        let s = json(&b, &e, &["tasks", "status", id, "--json"]).await;
        assert_eq!(s["status"], "completed", "{s}");
    }
    // Created once each at the research API, and polled by one runner at a time.
    assert_eq!(server.requests("/v1beta/interactions").len(), 6);
    let mut per: std::collections::HashMap<String, usize> = Default::default();
    for p in server.all_requests() {
        if let Some(id) = p.strip_prefix("/v1beta/interactions/")
            && !id.ends_with("/cancel")
        {
            *per.entry(id.to_string()).or_default() += 1;
        }
    }
    assert_eq!(per.len(), 6);
    assert!(per.values().all(|n| *n == 30), "{per:?}");

    // A task B runs, cancelled from A: B's runner stops, Gemini is told.
    let long = start(&a, &e, "a long one", "fake:polls=100000").await;
    let mut runner = b.cmd();
    runner.envs(e.iter().map(|(k, v)| (k, v))).args(["tasks", "run"]);
    let _b_runner = Reaped(runner.spawn().unwrap());
    let started = Instant::now();
    while json(&a, &e, &["tasks", "status", &long, "--json"]).await["current_action"]
        .as_str()
        .is_some_and(|s| s == "queued")
        && started.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = a.cli(&e, &["tasks", "cancel", &long, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let s = json(&b, &e, &["tasks", "status", &long, "--json"]).await;
    assert_eq!(s["status"], "cancelled", "{s}");
    assert!(
        server.all_requests().iter().any(|p| p.ends_with("/cancel")),
        "the provider was told"
    );
    // B's runner stops polling it at its next heartbeat.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = server.count_prefixed("/v1beta/interactions/");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        server.count_prefixed("/v1beta/interactions/"),
        before,
        "still polled after the cancel"
    );
    // Nothing in SQLite on either host.
    for host in [&a, &b] {
        assert!(!host.home.join("data/tasks.db").exists(), "a SQLite store was written");
    }
}

/// Tokens with a scope, through the MCP Python SDK over streamable HTTP
/// (`tests/e2e/mcp/tokens.py`; skipped without `pip install mcp` unless
/// `SCHOLIA_REQUIRE_E2E=1`).
#[tokio::test(flavor = "multi_thread")]
async fn tokens_carry_their_scope() {
    let Some(python) = crate::support::mcp_python() else {
        return;
    };
    let v = TestVault::example();
    let work = v.home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = v.command(&python);
    cmd.arg(crate::support::repo().join("tests/e2e/mcp/tokens.py"))
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .env("VAULT", &v.root)
        .env("WORK", &work)
        .env("SCHOLIA_LOG", "scholia=info");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    eprintln!("{}", stderr(&out));
    assert!(out.status.success(), "the tokens test failed:\n{}", stderr(&out));
    assert!(stderr(&out).trim_end().ends_with("OK"));
}
