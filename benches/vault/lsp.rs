//! The language server's figures: first answer and indexing time from spawn, then, on the full
//! index, `workspace/symbol` latency and how soon a saved note is found.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use super::lsp_client::LspClient;
use super::{BIN, Bench, anon_rss, mb, ms, peak_rss, percentiles};

/// scholia's language server on the bench's vault, with the bench's directories.
fn spawn(b: &Bench) -> (LspClient, tokio::process::Child) {
    LspClient::spawn(
        tokio::process::Command::new(BIN)
            .arg("lsp")
            .env("SCHOLIA_CACHE_DIR", b.cache())
            .env("SCHOLIA_CONFIG_DIR", b.home.path().join("config"))
            .env("SCHOLIA_DATA_DIR", b.home.path().join("data"))
            .env("SCHOLIA_LOG", "warn")
            .stderr(Stdio::inherit()),
    )
}

/// Asks `workspace/symbol` for the bench's first query every `every_ms` until an answer is not
/// empty: its time from `started`, or `None` once `limit` has passed.
async fn first_answer(
    b: &Bench,
    c: &mut LspClient,
    started: Instant,
    limit: Duration,
    every_ms: u64,
) -> Option<Duration> {
    let probe = b.symbol_queries.first().cloned().unwrap_or_else(|| "a".into());
    loop {
        let r = c.request("workspace/symbol", json!({"query": probe})).await;
        if r.as_array().is_some_and(|a| !a.is_empty()) {
            return Some(started.elapsed());
        }
        if started.elapsed() > limit {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(every_ms)).await;
    }
}

/// One language server from spawn to shutdown; returns when its indexing ended (from spawn).
pub async fn round(b: &Bench, label: &str, edits: bool) -> Duration {
    let started = Instant::now();
    let (mut c, mut child) = spawn(b);
    let pid = child.id().unwrap();
    c.initialize(&b.vault.canonicalize().unwrap(), json!({})).await;
    let init = started.elapsed();
    let ready = first_answer(b, &mut c, started, Duration::from_secs(900), 5)
        .await
        .expect("a first answer");
    let end = c.wait_progress_end("Indexing vault", Duration::from_secs(900)).await;
    let indexed = started.elapsed();
    println!(
        "LSP {label}: initialize {}, first non-empty workspace/symbol {:.3} s, indexing ended {:.3} s ({})",
        ms(init),
        ready.as_secs_f64(),
        indexed.as_secs_f64(),
        end.as_ref()
            .and_then(|e| e["params"]["value"]["message"].as_str())
            .unwrap_or("?")
    );
    // A bulk build's segments are merged in groups once indexing ends (see
    // `scholia_index::merges`): measured once the server has finished.
    let merging = Instant::now();
    let mut segments = index_segments(b);
    while segments > 16 && merging.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        segments = index_segments(b);
    }
    println!(
        "LSP {label}: background merges over after {:.1} s ({segments} segments), peak RSS {} (allocated now {})",
        merging.elapsed().as_secs_f64(),
        mb(peak_rss(pid)),
        mb(anon_rss(pid))
    );
    // Measured on the full index only: from the request sent to the answer read whole (the
    // server's time), and to the answer parsed by this client.
    let (mut times, mut parsed) = (Vec::new(), Vec::new());
    let mut results = 0;
    for _ in 0..3 {
        for q in &b.symbol_queries {
            let t = Instant::now();
            let r = c.request("workspace/symbol", json!({"query": q})).await;
            parsed.push(t.elapsed());
            times.push(c.arrived.expect("a response") - t);
            results += r.as_array().map_or(0, Vec::len);
        }
    }
    let (p50, p99) = percentiles(times.clone());
    let (parsed_p50, parsed_p99) = percentiles(parsed);
    println!(
        "LSP {label}: workspace/symbol on the full index p50 {} p99 {} ({} queries, {:.1} results avg; with this client's JSON parse p50 {} p99 {}), peak RSS {} (allocated now {})",
        ms(p50),
        ms(p99),
        times.len(),
        results as f64 / times.len() as f64,
        ms(parsed_p50),
        ms(parsed_p99),
        mb(peak_rss(pid)),
        mb(anon_rss(pid))
    );
    if edits {
        saved_note_found(b, &mut c).await;
    }
    c.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    indexed
}

/// The language server started on the index a cold CLI build just left (its segments not yet
/// merged): 50 `workspace/symbol` queries from its first non-empty answer on, inside the window
/// where it merges them, p50 and p99 of the server's time, and the segments before and after.
pub async fn right_after_build(b: &Bench) {
    let before = index_segments(b);
    let started = Instant::now();
    let (mut c, mut child) = spawn(b);
    c.initialize(&b.vault.canonicalize().unwrap(), json!({})).await;
    let first = first_answer(b, &mut c, started, Duration::from_secs(60), 5)
        .await
        .unwrap_or_else(|| started.elapsed());
    let mut times = Vec::new();
    let mut empty = 0;
    for q in b.symbol_queries.iter().cycle().take(50) {
        let t = Instant::now();
        let r = c.request("workspace/symbol", json!({"query": q})).await;
        times.push(c.arrived.expect("a response") - t);
        if r.as_array().is_none_or(|a| a.is_empty()) {
            empty += 1;
        }
    }
    let took = started.elapsed();
    let after = index_segments(b);
    let (p50, p99) = percentiles(times);
    println!(
        "LSP right after the CLI build: first answer {:.3} s from spawn, then 50 workspace/symbol until {:.2} s: p50 {} p99 {} ({empty} empty), segments {before} -> {after}",
        first.as_secs_f64(),
        took.as_secs_f64(),
        ms(p50),
        ms(p99)
    );
    c.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
}

/// Another Markdown language server (`--other BIN`, e.g. markdown-oxide) on the same vault:
/// from spawn to its `initialize` answer and to its first non-empty `workspace/symbol` (what
/// it calls ready: it reads the whole vault before answering), and its peak RSS.
pub async fn other(b: &Bench, bin: &std::path::Path, label: &str) {
    let started = Instant::now();
    let (mut c, mut child) = LspClient::spawn(
        tokio::process::Command::new(bin)
            .current_dir(&b.vault)
            .stderr(Stdio::null()),
    );
    let pid = child.id().unwrap();
    c.initialize(&b.vault.canonicalize().unwrap(), json!({})).await;
    let init = started.elapsed();
    let ready = first_answer(b, &mut c, started, Duration::from_secs(600), 50).await;
    println!(
        "{} {label}: initialize answered {:.3} s, first non-empty workspace/symbol {}, peak RSS {}",
        bin.file_name().map_or("other".into(), |n| n.to_string_lossy()),
        init.as_secs_f64(),
        ready.map_or("none within 600 s".into(), |t| format!("{:.3} s", t.as_secs_f64())),
        mb(peak_rss(pid))
    );
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
}

/// An editor adds a heading with a new word to a note and saves it: the time until
/// `workspace/symbol` finds the word (the note re-read and committed, the reader reloaded).
async fn saved_note_found(b: &Bench, c: &mut LspClient) {
    let mut times = Vec::new();
    for (i, rel) in b.edit_notes.iter().enumerate() {
        let path = b.vault.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = c.open(&path, &text).await;
        let word = format!("zqxsaved{i}w{}", std::process::id());
        let edited = format!("{text}\n## {word} heading\n\nSaved text {word}.\n");
        let started = Instant::now();
        c.change(&uri, &edited).await;
        std::fs::write(&path, &edited).unwrap();
        c.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}}))
            .await;
        let found = loop {
            let r = c.request("workspace/symbol", json!({"query": word})).await;
            if r.as_array().is_some_and(|a| !a.is_empty()) {
                break Some(started.elapsed());
            }
            if started.elapsed() > Duration::from_secs(10) {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
            .await;
        match found {
            Some(t) => times.push(t),
            None => println!("  saved note {rel}: not found within 10 s"),
        }
    }
    if times.is_empty() {
        return;
    }
    let (p50, _) = percentiles(times.clone());
    println!(
        "LSP: saved note searchable after p50 {} max {} ({} saves)",
        ms(p50),
        ms(*times.iter().max().unwrap()),
        times.len()
    );
}

/// How many segments the index's last commit or merge lists.
pub fn index_segments(b: &Bench) -> usize {
    let Ok(dirs) = std::fs::read_dir(b.cache().join("index")) else {
        return 0;
    };
    dirs.flatten()
        .filter_map(|d| std::fs::read(d.path().join("meta.json")).ok())
        .filter_map(|m| serde_json::from_slice::<serde_json::Value>(&m).ok())
        .map(|m| m["segments"].as_array().map_or(0, Vec::len))
        .sum()
}
