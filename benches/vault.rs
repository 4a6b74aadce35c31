//! Vault benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench vault                 # obsidian-help (6,246 notes) and 100,000 generated
//!     cargo bench --bench vault -- --quick      # obsidian-help only
//!     cargo bench --bench vault -- --gen-dir D  # keep the generated vault in D (reused if there)
//!
//! Every vault is read once before measuring, so "cold" means no index, not a cold page cache.
//!
//! For each vault: cold `scholia index` (time, peak RSS), warm `scholia index` (nothing
//! changed), time from spawning `scholia lsp` to its first non-empty `workspace/symbol` answer
//! (cold and warm), `workspace/symbol` latency p50/p99 over the LSP, `search` latency p50/p99
//! through the library, and the language server's peak RSS.

#[path = "../tests/support/lsp_client.rs"]
mod lsp_client;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lsp_client::LspClient;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_scholia");

struct Bench {
    name: String,
    vault: PathBuf,
    notes: usize,
    cache: tempfile::TempDir,
    /// Words for queries: prefixes of real titles and headings.
    symbol_queries: Vec<String>,
    search_queries: Vec<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vaults/obsidian-help");
    let rt = tokio::runtime::Runtime::new().unwrap();
    println!(
        "scholia vault benchmark ({} cores)",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    if shared.is_dir() {
        run(&rt, bench("obsidian-help", shared));
    } else {
        println!("skipping obsidian-help: {} not found", shared.display());
    }
    if !quick {
        let tmp = tempfile::tempdir().unwrap();
        let dir = match args.iter().position(|a| a == "--gen-dir") {
            Some(i) => PathBuf::from(&args[i + 1]),
            None => tmp.path().to_path_buf(),
        };
        if !dir.join("area-00").is_dir() {
            let started = Instant::now();
            generate(&dir, 100_000);
            println!("\ngenerated 100,000 notes in {:.1}s", started.elapsed().as_secs_f64());
        }
        run(&rt, bench("generated-100k", dir));
    }
}

fn bench(name: &str, vault: PathBuf) -> Bench {
    let scan = scholia::vault::scan::scan(&vault.canonicalize().unwrap());
    for note in &scan.notes {
        let _ = std::fs::read(&note.abs);
    }
    let mut symbol_queries = Vec::new();
    let mut search_queries = Vec::new();
    // Deterministic sample of notes: their title/heading words make the queries.
    for (i, note) in scan
        .notes
        .iter()
        .enumerate()
        .filter(|(i, _)| i % (scan.notes.len() / 200).max(1) == 0)
    {
        let text = std::fs::read_to_string(&note.abs).unwrap_or_default();
        let parsed = scholia::vault::parse::parse(&text, scholia::vault::stem(&note.rel));
        let words = scholia::index::tokenizer::tokens(&parsed.title);
        if let Some(w) = words.first() {
            // What someone types: the first 3-5 characters of a title word.
            let cut: String = w.chars().take(3 + i % 3).collect();
            symbol_queries.push(cut);
        }
        let body = scholia::index::tokenizer::tokens(&parsed.plain_text);
        if body.len() > 10 {
            search_queries.push(format!("{} {}", body[i % body.len()], body[(i * 7) % body.len()]));
        }
    }
    Bench {
        name: name.into(),
        notes: scan.notes.len(),
        vault,
        cache: tempfile::tempdir().unwrap(),
        symbol_queries,
        search_queries,
    }
}

fn cmd(b: &Bench) -> Command {
    let mut c = Command::new(BIN);
    c.env("SCHOLIA_CACHE_DIR", b.cache.path())
        .env("SCHOLIA_CONFIG_DIR", b.cache.path().join("config"))
        .env("SCHOLIA_DATA_DIR", b.cache.path().join("data"))
        .env("SCHOLIA_LOG", "warn");
    c
}

/// Runs a command to completion: wall time and peak RSS (from wait4).
fn timed(mut c: Command) -> (Duration, u64) {
    let started = Instant::now();
    // Reaped by wait4 below (std's wait would not give the child's rusage).
    #[allow(clippy::zombie_processes)]
    let child = c.stdout(Stdio::null()).spawn().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waiting on our own child; `usage` is a valid out-pointer.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    assert_eq!(status, 0, "command failed");
    (started.elapsed(), usage.ru_maxrss as u64 * 1024)
}

fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.99))
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn run(rt: &tokio::runtime::Runtime, b: Bench) {
    println!("\n== {} ({} notes) ==", b.name, b.notes);
    let mut index = cmd(&b);
    index.args(["index", "--vault"]).arg(&b.vault);
    let (cold, cold_rss) = timed(index);
    println!(
        "cold index (CLI):              {:>10.3} s   peak RSS {}",
        cold.as_secs_f64(),
        mb(cold_rss)
    );
    let mut index = cmd(&b);
    index.args(["index", "--vault"]).arg(&b.vault);
    let (warm, warm_rss) = timed(index);
    println!(
        "warm index (CLI, no change):   {:>10.3} s   peak RSS {}",
        warm.as_secs_f64(),
        mb(warm_rss)
    );

    std::fs::remove_dir_all(b.cache.path().join("index")).unwrap();
    rt.block_on(lsp_round(&b, "cold"));
    rt.block_on(lsp_round(&b, "warm"));

    let vault = scholia::vault::Vault::open(&b.vault).unwrap();
    let dir = scholia::config::Dirs {
        config: b.cache.path().join("config"),
        data: b.cache.path().join("data"),
        cache: b.cache.path().to_path_buf(),
    }
    .index_dir(vault.root());
    let idx = scholia::index::VaultIndex::open(vault, &dir, Default::default()).unwrap();
    let mut times = Vec::new();
    let mut hits = 0;
    for _ in 0..3 {
        for q in &b.search_queries {
            let t = Instant::now();
            hits += idx.search(q, 10, None).unwrap().len();
            times.push(t.elapsed());
        }
    }
    let (p50, p99) = percentiles(times.clone());
    println!(
        "search (library, 10 hits + snippets): p50 {} p99 {}  ({} queries, {:.1} hits avg)",
        ms(p50),
        ms(p99),
        times.len(),
        hits as f64 / times.len() as f64
    );
}

async fn lsp_round(b: &Bench, label: &str) {
    let mut child = tokio::process::Command::new(BIN)
        .arg("lsp")
        .env("SCHOLIA_CACHE_DIR", b.cache.path())
        .env("SCHOLIA_CONFIG_DIR", b.cache.path().join("config"))
        .env("SCHOLIA_DATA_DIR", b.cache.path().join("data"))
        .env("SCHOLIA_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let started = Instant::now();
    let pid = child.id().unwrap();
    let mut c = LspClient::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    c.initialize(&b.vault.canonicalize().unwrap(), json!({})).await;
    let init = started.elapsed();
    let probe = b.symbol_queries.first().cloned().unwrap_or_else(|| "a".into());
    let ready = loop {
        let r = c.request("workspace/symbol", json!({"query": probe})).await;
        if r.as_array().is_some_and(|a| !a.is_empty()) {
            break started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let end = c.wait_progress_end("Indexing vault", Duration::from_secs(600)).await;
    let indexed = started.elapsed();
    let mut times = Vec::new();
    let mut results = 0;
    for _ in 0..3 {
        for q in &b.symbol_queries {
            let t = Instant::now();
            let r = c.request("workspace/symbol", json!({"query": q})).await;
            times.push(t.elapsed());
            results += r.as_array().map_or(0, Vec::len);
        }
    }
    let (p50, p99) = percentiles(times.clone());
    let rss = peak_rss(pid);
    println!(
        "LSP {label}: initialize {}, first non-empty workspace/symbol {:.3} s, indexing ended {:.3} s ({})",
        ms(init),
        ready.as_secs_f64(),
        indexed.as_secs_f64(),
        end.as_ref()
            .and_then(|e| e["params"]["value"]["message"].as_str())
            .unwrap_or("?")
    );
    println!(
        "LSP {label}: workspace/symbol p50 {} p99 {} ({} queries, {:.1} results avg), peak RSS {}",
        ms(p50),
        ms(p99),
        times.len(),
        results as f64 / times.len() as f64,
        mb(rss)
    );
    c.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
}

/// A deterministic synthetic vault: folders, frontmatter, headings, wikilinks, tags, and
/// Zipf-distributed words from an invented vocabulary.
fn generate(root: &Path, n: usize) {
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ren", "sa", "tor", "vel", "an", "qui", "des", "mar", "no", "pe", "ri", "sun", "tal", "ex",
        "bo", "gra", "fi",
    ];
    let vocab: Vec<String> = (0..6000u64)
        .map(|i| {
            let mut w = String::new();
            let mut x = i * 7919 + 13;
            for _ in 0..(2 + i % 3) {
                w.push_str(SYLLABLES[(x % SYLLABLES.len() as u64) as usize]);
                x /= SYLLABLES.len() as u64;
                x += i;
            }
            w
        })
        .collect();
    let word = |next: &mut dyn FnMut() -> u64| -> &str {
        // Zipf-like: small indices are much more frequent.
        let r = (next() % 1_000_000) as f64 / 1_000_000.0;
        let idx = ((vocab.len() as f64).powf(r) - 1.0) as usize;
        &vocab[idx.min(vocab.len() - 1)]
    };
    let title = |i: usize| format!("Note {i} {}", vocab[(i * 31) % vocab.len()]);
    for i in 0..n {
        let dir = root.join(format!("area-{:02}/topic-{:03}", i % 20, i % 500));
        if i < 500 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut text = format!(
            "---\ntags: [{}, {}]\n---\n\n# {}\n\n",
            word(&mut next),
            word(&mut next),
            title(i)
        );
        let sections = 2 + next() % 4;
        for s in 0..sections {
            text.push_str(&format!("## {} {}\n\n", word(&mut next), word(&mut next)));
            let words = 40 + next() % 120;
            for k in 0..words {
                text.push_str(word(&mut next));
                text.push(if k % 15 == 14 { '\n' } else { ' ' });
            }
            let target = (next() as usize) % n;
            text.push_str(&format!("\nSee [[{}]] and #{}.\n\n", title(target), word(&mut next)));
            if s == 0 {
                text.push_str("- a list item\n- another\n\n");
            }
        }
        std::fs::write(dir.join(format!("{}.md", title(i))), text).unwrap();
    }
}
