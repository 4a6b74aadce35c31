//! What agents and scripts see on a warm index: MCP `find_notes` and offline `research_note`
//! over stdio, `scholia search` and offline `scholia research` from the shell (each a process:
//! start-up and the index's freshness check included).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use super::mcp_client;
use super::{BIN, Bench, cmd, ms, percentiles};

pub async fn find_notes(b: &Bench) {
    let (client, mut child, _, _) = mcp_client::spawn(BIN, &b.vault, b.home.path()).await;
    // The first call waits for the start-up sync.
    mcp_client::tool(
        &client,
        "find_notes",
        json!({"query": b.search_queries[0], "limit": 10}),
    )
    .await;
    let mut times = Vec::new();
    let mut hits = 0;
    for q in b.titles.iter() {
        let t = Instant::now();
        let r = mcp_client::tool(&client, "find_notes", json!({"query": q, "limit": 10})).await;
        times.push(t.elapsed());
        hits += r
            .structured_content
            .as_ref()
            .and_then(|s| s["results"].as_array().map(Vec::len))
            .unwrap_or(0);
    }
    let (p50, p99) = percentiles(times.clone());
    println!(
        "MCP find_notes over stdio: p50 {} p99 {} ({} queries, {:.1} hits avg)",
        ms(p50),
        ms(p99),
        times.len(),
        hits as f64 / times.len() as f64
    );
    // Offline research through the same warm server: each run writes the note and commits.
    // Twice: right away, while the server may still be merging what the last build left (every
    // term look-up asks every segment), and once its merges are over (what it is after).
    let (now, later) = b.research_notes.split_at(b.research_notes.len() / 2);
    for (when, notes) in [("right after start", now), ("merged", later)] {
        if when == "merged" {
            let settled = settle_merges(b).await;
            println!("server merges settled after {:.1} s", settled.as_secs_f64());
        }
        let segments = super::lsp::index_segments(b);
        let mut times = Vec::new();
        for rel in notes {
            let t = Instant::now();
            let r = mcp_client::tool(&client, "research_note", json!({"path": rel})).await;
            times.push(t.elapsed());
            assert_ne!(r.is_error, Some(true), "{rel}: {r:?}");
        }
        let (p50, p99) = percentiles(times.clone());
        println!(
            "MCP research_note offline ({when}, {segments} -> {} segments): p50 {} p99 {} ({} notes)",
            super::lsp::index_segments(b),
            ms(p50),
            ms(p99),
            times.len()
        );
    }
    let _ = client.cancel().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
}

/// Waits (two minutes at most) until the index has no more segments than a server keeps (16)
/// and their number has not changed for five seconds: a server merges in the background
/// after a bulk build. Returns how long it waited.
async fn settle_merges(b: &Bench) -> Duration {
    let started = Instant::now();
    let (mut last, mut since) = (super::lsp::index_segments(b), Instant::now());
    while started.elapsed() < Duration::from_secs(120) && (last > 16 || since.elapsed() < Duration::from_secs(5)) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = super::lsp::index_segments(b);
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    started.elapsed()
}

pub fn cli_search(b: &Bench) {
    let mut times = Vec::new();
    let mut lines = 0;
    for q in b.search_queries.iter().take(20) {
        let t = Instant::now();
        let out = cmd(b)
            .args(["search", "--json", "--vault"])
            .arg(&b.vault)
            .arg(q)
            .output()
            .unwrap();
        times.push(t.elapsed());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        lines += v["hits"].as_array().or(v.as_array()).map_or(0, Vec::len);
    }
    let (p50, p99) = percentiles(times.clone());
    println!(
        "CLI search (process, warm index): p50 {} p99 {} ({} queries, {:.1} hits avg)",
        ms(p50),
        ms(p99),
        times.len(),
        lines as f64 / times.len() as f64
    );
}

pub fn cli_research(b: &Bench) {
    let mut times = Vec::new();
    let mut related = 0;
    for rel in b.research_notes.iter().take(10) {
        let t = Instant::now();
        let out = cmd(b)
            .args(["research", "--json", "--vault"])
            .arg(&b.vault)
            .arg(rel)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        times.push(t.elapsed());
        assert!(out.status.success(), "{rel}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        related += v["sources"].as_array().map_or(0, Vec::len);
    }
    let (p50, p99) = percentiles(times.clone());
    println!(
        "CLI offline research of one note (process, warm index of {} segments): p50 {} p99 {} ({} notes, {:.1} sources avg)",
        super::lsp::index_segments(b),
        ms(p50),
        ms(p99),
        times.len(),
        related as f64 / times.len() as f64
    );
}
