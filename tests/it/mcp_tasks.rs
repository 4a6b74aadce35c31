//! MCP tasks (issue 40): a client that declares `io.modelcontextprotocol/tasks` gets a task at
//! once for work that may outlast a call, polls it with `tasks/get` to the tool's own result,
//! cancels it with `tasks/cancel`, and finds it again after the server restarts. rmcp's own
//! client, in process and against the binary; the TypeScript ext-tasks client is in
//! `tests/e2e/mcp-node/tasks.mjs`.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation, TaskPayload, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::mcp::{call, serve_to};
use crate::support::{EnvVars, TestVault, env, fake_env, fakes};

type TaskClient = RunningService<RoleClient, ClientConfig>;

/// A client that declares the tasks extension.
fn declares_tasks() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "1"),
    )
}

async fn connect(v: &TestVault, extra: &EnvVars) -> (TaskClient, tokio_util::sync::DropGuard) {
    serve_to(v, extra, Default::default(), Default::default(), declares_tasks()).await
}

async fn start(c: &TaskClient, tool: &str, args: Value) -> CallToolResponse {
    let args = args.as_object().cloned().unwrap();
    c.peer()
        .call_tool_once(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The task a call answered with (it must be one).
fn task_id(r: &CallToolResponse) -> String {
    match r {
        CallToolResponse::Task(t) => {
            assert_eq!(t.task.status, TaskStatus::Working);
            assert!(t.task.poll_interval_ms.is_some_and(|p| p > 0));
            t.task.task_id.clone()
        }
        other => panic!("not a task: {other:?}"),
    }
}

/// Polls until the task ends; the status messages seen on the way.
async fn settle(c: &TaskClient, id: &str, within: Duration) -> (rmcp::model::GetTaskResult, Vec<String>) {
    let started = Instant::now();
    let mut seen = Vec::new();
    loop {
        let r = c.peer().get_task(GetTaskParams::new(id)).await.unwrap();
        if let Some(m) = &r.task.task.status_message
            && seen.last() != Some(m)
        {
            seen.push(m.clone());
        }
        if r.task.status().is_terminal() {
            return (r, seen);
        }
        assert!(started.elapsed() < within, "{id} still working: {seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn completed(r: &rmcp::model::GetTaskResult) -> Value {
    match &r.task.payload {
        TaskPayload::Completed { result } => Value::Object(result.clone()),
        other => panic!("not completed: {other:?}"),
    }
}

const NOTE: &str = "Kombucha.md";

#[tokio::test(flavor = "multi_thread")]
async fn research_answers_with_a_task_and_polls_to_the_tools_own_result() {
    let server = fakes().await;
    let v = TestVault::example();
    let e = fake_env(&server, "fake:latency=1000");
    let (c, _stop) = connect(&v, &e).await;
    let asked = Instant::now();
    let r = start(&c, "research_note", json!({"path": NOTE})).await;
    assert!(asked.elapsed() < Duration::from_secs(5), "a task comes at once");
    let id = task_id(&r);
    let (done, seen) = settle(&c, &id, Duration::from_secs(120)).await;
    let result = completed(&done);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["path"], NOTE, "{result}");
    assert_eq!(result["structuredContent"]["written"], true, "{result}");
    assert!(v.read(NOTE).contains("## Research"), "the note is written");
    // The stages showed while it worked, with their progress.
    assert!(seen.iter().any(|m| m.contains('%')), "{seen:?}");
    // The same call from a client without tasks answers in place, with the same shape.
    let (plain, _stop2) = crate::mcp::connect(&v, &e).await;
    let direct = call(&plain, "research_note", json!({"path": NOTE})).await;
    let direct = serde_json::to_value(&direct).unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["structuredContent"].as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&direct), keys(&result));
    // The task is still there to read, and a cancel of it says it ended.
    let again = c.peer().get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(again.task.status(), TaskStatus::Completed);
    let err = c.peer().cancel_task(CancelTaskParams::new(&id)).await.unwrap_err();
    assert!(err.to_string().contains("already completed"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn quick_calls_stay_calls_and_unknown_tasks_are_named() {
    let server = fakes().await;
    let v = TestVault::example();
    // No model: research runs offline in seconds, and a search is instant.
    let (c, _stop) = connect(&v, &Vec::new()).await;
    for (tool, args) in [
        ("research_note", json!({"path": NOTE})),
        ("find_notes", json!({"query": "kombucha"})),
    ] {
        let r = start(&c, tool, args).await;
        assert!(matches!(r, CallToolResponse::Complete(_)), "{tool}: {r:?}");
    }
    // Sonar: only a deadline past a minute is a task.
    let e = crate::support::openrouter_env(&server, "k");
    let (c, _stop) = connect(&v, &e).await;
    let quick = start(&c, "search", json!({"query": "What is kombucha?"})).await;
    assert!(matches!(quick, CallToolResponse::Complete(_)), "{quick:?}");
    let deep = start(
        &c,
        "search",
        json!({"query": "What is kombucha?", "model": "sonar-deep-research"}),
    )
    .await;
    let id = task_id(&deep);
    let (done, _) = settle(&c, &id, Duration::from_secs(60)).await;
    assert_eq!(
        completed(&done)["structuredContent"]["metadata"]["model"],
        "sonar-deep-research"
    );
    let err = c.peer().get_task(GetTaskParams::new("call-nope")).await.unwrap_err();
    assert!(err.to_string().contains("call-nope"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_task_stops_and_writes_nothing() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut e = fake_env(&server, "fake:latency=1500");
    e.extend(env(&[("GEMINI_CLI", "/nonexistent/gemini")]));
    let before = v.read(NOTE);
    let (c, _stop) = connect(&v, &e).await;
    let id = task_id(
        &start(
            &c,
            "deep_search",
            json!({"query": "why does kombucha fizz", "note": NOTE}),
        )
        .await,
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.peer().cancel_task(CancelTaskParams::new(&id)).await.unwrap();
    let (done, _) = settle(&c, &id, Duration::from_secs(10)).await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(v.read(NOTE), before, "a cancelled run changes no note");
    assert_eq!(
        c.peer().get_task(GetTaskParams::new(&id)).await.unwrap().task.status(),
        TaskStatus::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn background_research_is_the_calls_task() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut e = fake_env(&server, "fake");
    e.extend(env(&[
        ("GEMINI_CLI", "/nonexistent/gemini"),
        ("SCHOLIA_TASKS_POLL_MS", "50"),
    ]));
    // The binary: its server runs background tasks.
    let (c, _p) = server_process(&v, &e).await;
    let r = start(
        &c,
        "start_deep_research",
        json!({"query": "why does kombucha fizz", "kind": "deep-search"}),
    )
    .await;
    let id = task_id(&r);
    assert!(!id.starts_with("call-"), "the background task's own id: {id}");
    let (done, _) = settle(&c, &id, Duration::from_secs(120)).await;
    let result = completed(&done);
    assert!(
        result["structuredContent"]["report"]
            .as_str()
            .is_some_and(|r| !r.is_empty()),
        "get_research_results' answer: {result}"
    );
    // The background tools see the same task.
    let (plain, _stop2) = crate::mcp::connect(&v, &e).await;
    let status = call(&plain, "check_research_status", json!({"task_id": id})).await;
    assert_eq!(status.structured_content.unwrap()["status"], "completed");
}

/// The binary over stdio, on `v` with `extra`.
async fn server_process(v: &TestVault, extra: &EnvVars) -> (TaskClient, tokio::process::Child) {
    let mut cmd = tokio::process::Command::from(v.cmd());
    cmd.envs(extra.iter().map(|(k, v)| (k, v)))
        .args(["mcp", "--vault", v.root.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = declares_tasks().serve((stdout, stdin)).await.unwrap();
    (client, child)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_outlives_the_server_that_started_it() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut e = fake_env(&server, "fake:latency=400");
    e.extend(env(&[
        ("GEMINI_CLI", "/nonexistent/gemini"),
        ("SCHOLIA_TASKS_POLL_MS", "50"),
    ]));
    let (first, mut process) = server_process(&v, &e).await;
    let id = task_id(
        &start(
            &first,
            "deep_search",
            json!({"query": "why does kombucha fizz", "note": NOTE}),
        )
        .await,
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The server dies mid-run (no clean shutdown: its lease runs out).
    process.kill().await.unwrap();
    drop(first);
    let (second, _p2) = server_process(&v, &e).await;
    let (done, seen) = settle(&second, &id, Duration::from_secs(120)).await;
    let result = completed(&done);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["written_to"]["path"], NOTE, "{result}");
    assert!(v.read(NOTE).contains("### why does kombucha fizz"), "{}", v.read(NOTE));
    assert!(seen.iter().any(|m| m.contains("resumed")), "{seen:?}");
    // Another server, later: the result is still there until its time to live.
    drop(second);
    let (third, _p3) = server_process(&v, &e).await;
    let again = third.peer().get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(completed(&again), result);
    assert!(again.task.task.ttl_ms.is_some_and(|t| t >= 3_600_000));
}

/// The TypeScript packages hosts build on: `@modelcontextprotocol/ext-tasks` over
/// `@modelcontextprotocol/client` 2.x (`tests/e2e/mcp-node/tasks.mjs`; needs `npm ci` there,
/// skipped without it unless `SCHOLIA_REQUIRE_E2E=1`).
#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_ext_tasks_client_gets_and_settles_a_task() {
    let dir = crate::support::repo().join("tests/e2e/mcp-node");
    if !dir.join("node_modules/@modelcontextprotocol/ext-tasks").is_dir() {
        return crate::support::missing_e2e("@modelcontextprotocol/ext-tasks", "cd tests/e2e/mcp-node && npm ci");
    }
    let v = TestVault::example();
    let fake = fakes().await;
    let mut cmd = v.command("node");
    cmd.arg(dir.join("tasks.mjs"))
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .env("VAULT", &v.root)
        .env("FAKES", fake.base());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let err = crate::support::stderr(&out);
    eprintln!("{err}");
    assert!(out.status.success(), "the ext-tasks client failed:\n{err}");
    assert!(err.contains("settled in") && err.trim_end().ends_with("OK"), "{err}");
}
