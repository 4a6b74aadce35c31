//! Background-task benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench tasks
//!
//! With 10,000 tasks in the store: `status` latency p50/p99 in-process (the `Tasks` service,
//! SQLite on its own thread) and `check_research_status` over MCP stdio (the real `scholia mcp`
//! and rmcp's client); the report template's render time for a 20 KB report with 40 sources.
//! First, both stores side by side (SQLite, and PostgreSQL on loopback when the system has it:
//! `scholia_fakes::postgres`): insert, status p50/p99 and claim throughput with 10,000 tasks.

use std::time::{Duration, Instant};

#[path = "../tests/support/mcp_client.rs"]
mod mcp_client;

use scholia::tasks::{Kind, Results, Status, Task, Tasks};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_scholia");
const TASKS: usize = 10_000;

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    postgres(&rt);
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let tasks = Tasks::open(
        &data,
        None,
        Duration::from_secs(10),
        scholia::tasks::estimate::DEFAULT_PRICE,
    )
    .unwrap();
    println!("scholia background-task benchmark ({TASKS} tasks in the store)");
    let ids = rt.block_on(async {
        let started = Instant::now();
        let mut ids = Vec::with_capacity(TASKS);
        for i in 0..TASKS {
            let now = scholia::tasks::now_ms() - (TASKS - i) as i64 * 1000;
            tasks.store().insert(sample(i, now)).await.unwrap();
            ids.push(format!("bench-{i:05}"));
        }
        println!("inserted {TASKS} tasks in {:.1} s", started.elapsed().as_secs_f64());
        ids
    });

    // In-process status.
    let mut times = Vec::new();
    rt.block_on(async {
        for k in 0..5_000 {
            let id = &ids[(k * 7919) % TASKS];
            let started = Instant::now();
            let s = tasks.status(id).await.unwrap();
            times.push(started.elapsed());
            assert_eq!(&s.task_id, id);
        }
    });
    let (p50, p99) = percentiles(&mut times);
    println!("status in-process (5,000 calls): p50 {p50:.3} ms, p99 {p99:.3} ms");

    // Template render.
    let library = scholia::prompts::Library::load(None).unwrap();
    let report = "A paragraph of a research report about starters and their microbes. ".repeat(300);
    let sources: Vec<_> = (0..40)
        .map(|i| scholia::tasks::SourceRef {
            url: format!("https://example.org/source/{i}"),
            title: format!("Source {i}"),
            vault: false,
        })
        .collect();
    let task = rt.block_on(tasks.store().get(&ids[0])).unwrap().unwrap();
    let results = Results {
        report: report.clone(),
        sources,
        metadata: scholia::tasks::ResultsMeta {
            duration_minutes: Some(12.5),
            ..Default::default()
        },
        raw: None,
    };
    let mut renders = Vec::new();
    for _ in 0..1_000 {
        let started = Instant::now();
        let text = library
            .render(
                scholia::prompts::RESEARCH_REPORT,
                json!({"task": task, "report": results.report, "sources": results.sources, "metadata": results.metadata,
                       "include_metadata": true, "include_sources": true, "saved_at": "2026-11-22T00:00:00Z"}),
            )
            .unwrap();
        renders.push(started.elapsed());
        assert!(text.len() > report.len());
    }
    let (p50, p99) = percentiles(&mut renders);
    println!(
        "report template render ({} KB, 40 sources): p50 {p50:.3} ms, p99 {p99:.3} ms",
        report.len() / 1024
    );
    drop(tasks);

    // Over MCP stdio.
    rt.block_on(async {
        let vault = home.path().join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        std::fs::write(vault.join("Note.md"), "# Note\n").unwrap();
        let (client, _child, _, _) = mcp_client::spawn(BIN, &vault, home.path()).await;
        let mut times = Vec::new();
        for k in 0..1_000 {
            let id = &ids[(k * 104_729) % TASKS];
            let started = Instant::now();
            mcp_client::tool(&client, "check_research_status", json!({"task_id": id})).await;
            times.push(started.elapsed());
        }
        let (p50, p99) = percentiles(&mut times);
        println!("check_research_status over MCP stdio (1,000 calls): p50 {p50:.3} ms, p99 {p99:.3} ms");
        let _ = client.cancel().await;
    });
}

fn percentiles(times: &mut [Duration]) -> (f64, f64) {
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1000.0;
    (at(0.5), at(0.99))
}

/// SQLite and PostgreSQL side by side: 10,000 tasks inserted, 2,000 `get`s (what a status
/// reads), and claims of 25 at a time until none is left.
fn postgres(rt: &tokio::runtime::Runtime) {
    let home = tempfile::tempdir().unwrap();
    let mut stores = vec![(
        "SQLite",
        scholia::tasks::Store::open(&home.path().join("data")).unwrap(),
    )];
    if let Some(url) = rt.block_on(scholia_fakes::postgres::fresh_database("bench")) {
        stores.push((
            "PostgreSQL (loopback)",
            rt.block_on(scholia::tasks::Store::connect(&url, 8)).unwrap(),
        ));
    } else {
        println!("PostgreSQL: not installed here, only SQLite measured");
    }
    for (name, store) in stores {
        rt.block_on(async {
            let now = scholia::tasks::now_ms();
            let started = Instant::now();
            for i in 0..TASKS {
                let mut t = sample(i, now);
                t.status = Status::Pending;
                t.completed_at = None;
                store.insert(t).await.unwrap();
            }
            let insert = started.elapsed();
            let mut times = Vec::new();
            for k in 0..2_000 {
                let id = format!("bench-{:05}", (k * 7919) % TASKS);
                let started = Instant::now();
                store.get(&id).await.unwrap().unwrap();
                times.push(started.elapsed());
            }
            let (p50, p99) = percentiles(&mut times);
            let started = Instant::now();
            let mut claimed = 0;
            loop {
                let got = store.claim("bench", scholia::tasks::now_ms() + 60_000, 25).await.unwrap();
                if got.is_empty() {
                    break;
                }
                claimed += got.len();
            }
            let claim = started.elapsed();
            println!(
                "{name}: {TASKS} inserts in {:.1} s; status read p50 {p50:.3} ms, p99 {p99:.3} ms; {claimed} claimed in {:.2} s ({:.0} tasks/s)",
                insert.as_secs_f64(),
                claim.as_secs_f64(),
                claimed as f64 / claim.as_secs_f64()
            );
        });
    }
}

/// The `i`th task of the benchmark's store, made at `now`.
fn sample(i: usize, now: i64) -> Task {
    let id = format!("bench-{i:05}");
    let status = [Status::Completed, Status::Running, Status::Failed, Status::Cancelled][i % 4];
    Task {
        id: id.clone(),
        kind: Kind::Gemini,
        query: format!("Question number {i} about fermentation and bread"),
        model: None,
        note: None,
        vault: None,
        status,
        progress: None,
        current_action: Some("Gemini is researching".into()),
        remote_id: Some(format!("v1_{i:016x}")),
        input_tokens: 1000 * i as u64,
        output_tokens: 100 * i as u64,
        cost_usd: 0.01 * i as f64,
        error: None,
        notify: false,
        max_wait_hours: 8.0,
        created_at: now,
        updated_at: now,
        completed_at: status.is_final().then_some(now + 500),
        lease_owner: None,
        lease_until: None,
    }
}
