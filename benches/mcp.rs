//! MCP server benchmark on obsidian-help (6,246 notes): prints figures, asserts nothing.
//!
//!     cargo bench --bench mcp
//!
//! Spawns the real `scholia mcp --vault <obsidian-help>` with a private index directory and
//! talks to it over stdio with rmcp's client, as an agent would:
//! - time from spawning to the first answered `tools/list` (initialize handshake included), with
//!   no index yet (cold) and with the index built by the previous run (warm);
//! - `find_notes` latency p50/p99 over stdio (400 queries from the vault's titles and headings);
//! - `read_note` with `outline: true`, then of one section of it, p50/p99 over stdio (the
//!   agent's outline-first read, on 200 notes);
//! - resident memory of the idle server after those queries, and its peak.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_client::Client;
use serde_json::json;

#[path = "../tests/support/mcp_client.rs"]
mod mcp_client;

const BIN: &str = env!("CARGO_BIN_EXE_scholia");

fn main() {
    let vault = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vaults/obsidian-help");
    if !vault.is_dir() {
        println!("skipping: {} not found", vault.display());
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (queries, sections) = queries(&vault);
    let home = tempfile::tempdir().unwrap();
    println!("scholia MCP benchmark on obsidian-help ({} queries)", queries.len());
    rt.block_on(async {
        for run in ["cold", "warm", "warm"] {
            let (client, child, spawned) = spawn(&vault, home.path()).await;
            let listed = spawned.elapsed();
            println!("\n{run}: spawn to first tools/list answered: {:.1} ms", ms(listed));
            let pid = child.id().unwrap();
            // The first find_notes waits for the index (built or opened) and its start-up sync.
            let started = Instant::now();
            call(&client, "find_notes", &queries[0]).await;
            println!("  spawn to first find_notes answered: {:.1} ms", ms(spawned.elapsed()));
            println!("  first find_notes: {:.1} ms", ms(started.elapsed()));
            let mut times = Vec::with_capacity(queries.len());
            for q in &queries {
                let t = Instant::now();
                call(&client, "find_notes", q).await;
                times.push(t.elapsed());
            }
            times.sort();
            let pct = |p: f64| ms(times[((times.len() as f64 - 1.0) * p).round() as usize]);
            println!(
                "  find_notes over stdio: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                pct(0.5),
                pct(0.99),
                pct(1.0)
            );
            let (mut outlines, mut reads) = (Vec::new(), Vec::new());
            for (path, heading) in &sections {
                let t = Instant::now();
                tool(&client, "read_note", json!({"path": path, "outline": true})).await;
                outlines.push(t.elapsed());
                let t = Instant::now();
                tool(&client, "read_note", json!({"path": path, "heading": heading})).await;
                reads.push(t.elapsed());
            }
            for (name, mut times) in [("outline", outlines), ("section", reads)] {
                times.sort();
                let pct = |p: f64| ms(times[((times.len() as f64 - 1.0) * p).round() as usize]);
                println!(
                    "  read_note {name} over stdio: p50 {:.2} ms, p99 {:.2} ms ({} notes)",
                    pct(0.5),
                    pct(0.99),
                    times.len()
                );
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            let (rss, peak) = memory(pid);
            println!("  idle RSS {:.1} MB (peak {:.1} MB)", rss, peak);
            client.cancel().await.unwrap();
            let _ = child.wait_with_output().await;
        }
    });
}

async fn spawn(vault: &Path, home: &Path) -> (Client, tokio::process::Child, Instant) {
    let (client, child, started, tools) = mcp_client::spawn(BIN, vault, home).await;
    assert_eq!(tools, 17);
    (client, child, started)
}

async fn call(c: &Client, name: &str, query: &str) {
    tool(c, name, json!({"query": query, "limit": 10})).await;
}

async fn tool(c: &Client, name: &str, args: serde_json::Value) {
    mcp_client::tool(c, name, args).await;
}

/// Queries from a deterministic sample of the vault (a title or a heading's first words), and
/// notes with a heading to read a section of (unambiguous headings only).
fn queries(vault: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let root = vault.canonicalize().unwrap();
    let scan = scholia::vault::scan::scan(&root);
    let step = (scan.notes.len() / 200).max(1);
    let mut out = Vec::new();
    let mut sections = Vec::new();
    for note in scan.notes.iter().step_by(step) {
        let text = std::fs::read_to_string(root.join(&note.rel)).unwrap_or_default();
        let parsed = scholia::vault::parse::parse(&text, scholia::vault::stem(&note.rel));
        out.push(parsed.title.clone());
        if let Some(h) = parsed.headings.iter().find(|h| !h.text.trim().is_empty()) {
            out.push(h.text.split_whitespace().take(2).collect::<Vec<_>>().join(" "));
        }
        let found = parsed
            .headings
            .iter()
            .filter(|h| h.top_level && h.level >= 2)
            .find(|h| scholia::vault::note_edit::find_heading(&text, &h.text).is_ok());
        if let Some(h) = found {
            sections.push((note.rel.clone(), h.text.clone()));
        }
    }
    out.retain(|q| !q.trim().is_empty());
    out.truncate(400);
    (out, sections)
}

/// Resident and peak resident memory of `pid`, in MB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
