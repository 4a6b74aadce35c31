//! Vault benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench vault                 # obsidian-help, 16 copies of it, 100,000 generated
//!     cargo bench --bench vault -- --quick      # obsidian-help only
//!     cargo bench --bench vault -- --dir D      # keep the 100k vaults in D (reused if there)
//!     cargo bench --bench vault -- --cold-runs 3  # time the cold build 3 times: fastest, median
//!     cargo bench --bench vault -- --cold-only    # the cold builds and the floor, nothing after
//!     cargo bench --bench vault -- --ladder       # tantivy on scholia's own documents, each group
//!                                                 # of fields left out in turn: what each costs
//!     cargo bench --bench vault -- --cache-cold   # drop the vault's page cache before each cold
//!                                                 # build and the cold language server
//!     cargo bench --bench vault -- --other BIN    # another Markdown server's first answer beside
//!                                                 # scholia's cold one (markdown-oxide)
//!     cargo bench --bench vault -- --until-ready  # stop after the cold language servers
//!     cargo bench --bench vault -- --only real    # only the vaults whose name holds `real`
//!
//! The vaults are copies (the benchmark edits and researches notes): obsidian-help (6,246
//! notes in 38 languages), sixteen copies of it side by side (99,936 notes, 514 MB of real
//! Markdown) and 100,000 generated notes. Every vault is read once before measuring, so
//! "cold" means no index, not a cold page cache, unless `--cache-cold` drops the vault's pages
//! before each cold build and the cold language servers.
//!
//! For each vault: cold `scholia index` (time, MB/s of Markdown, peak RSS); the language server
//! on the index it just left (symbols while it merges the build's segments); the floor
//! (tantivy alone indexing the notes' text as one field, from memory), warm `scholia index`
//! (nothing changed); the language server cold (first answer, indexing time beside the CLI's)
//! and warm; on the full index only: `workspace/symbol` p50/p99 with result counts,
//! how soon a note saved in the editor is found; MCP `find_notes` over stdio; `scholia search`
//! and offline `scholia research` from the shell; `search` through the library.

#[path = "vault/agents.rs"]
mod agents;
#[path = "vault/cache.rs"]
mod cache;
#[path = "vault/floor.rs"]
mod floor;
#[path = "vault/lsp.rs"]
mod lsp;
#[path = "../tests/support/lsp_client.rs"]
mod lsp_client;
#[path = "../tests/support/mcp_client.rs"]
mod mcp_client;
#[path = "vault/vaults.rs"]
mod vaults;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_scholia");

pub struct Bench {
    name: String,
    vault: PathBuf,
    notes: usize,
    bytes: u64,
    /// Index, config and data directories.
    home: tempfile::TempDir,
    /// What someone types for a symbol: prefixes of real title words.
    symbol_queries: Vec<String>,
    /// Two words of a note's text.
    search_queries: Vec<String>,
    /// Whole titles, as an agent asks for a note.
    titles: Vec<String>,
    /// Notes the editor saves (with a new heading) and notes researched.
    edit_notes: Vec<String>,
    research_notes: Vec<String>,
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
    let tmp = tempfile::tempdir().unwrap();
    let dir = match args.iter().position(|a| a == "--dir") {
        Some(i) => PathBuf::from(&args[i + 1]),
        None => tmp.path().to_path_buf(),
    };
    if shared.is_dir() {
        let copy = tmp.path().join("obsidian-help");
        vaults::copy_tree(&shared, &copy);
        run(&rt, bench("obsidian-help", copy));
        if !quick {
            let started = Instant::now();
            let real = dir.join("real-100k");
            vaults::replicate(&shared, &real, 16);
            println!(
                "\n16 copies of obsidian-help ready in {:.1}s",
                started.elapsed().as_secs_f64()
            );
            run(&rt, bench("obsidian-help x16", real));
        }
    } else {
        println!("skipping obsidian-help: {} not found", shared.display());
    }
    if !quick {
        let generated = dir.join("generated-100k");
        if !generated.join("area-00").is_dir() {
            let started = Instant::now();
            vaults::generate(&generated, 100_000);
            println!("\ngenerated 100,000 notes in {:.1}s", started.elapsed().as_secs_f64());
        }
        run(&rt, bench("generated-100k", generated));
    }
}

fn bench(name: &str, vault: PathBuf) -> Bench {
    let root = vault.canonicalize().unwrap();
    let scan = scholia::vault::scan::scan(&root);
    let bytes = scan.notes.iter().map(|n| n.stamp.size).sum();
    // Every note read once, so "cold" means no index, not a cold page cache: a vault kept in
    // `--dir` from an earlier run is not in the page cache, and a cold build measured its disk
    // (the generated vault's took 28 s against the language server's 11 s right after).
    for note in &scan.notes {
        let _ = std::fs::read(root.join(&note.rel));
    }
    let mut b = Bench {
        name: name.into(),
        notes: scan.notes.len(),
        bytes,
        vault,
        home: tempfile::tempdir().unwrap(),
        symbol_queries: Vec::new(),
        search_queries: Vec::new(),
        titles: Vec::new(),
        edit_notes: Vec::new(),
        research_notes: Vec::new(),
    };
    // A deterministic sample of notes: their words make the queries.
    let step = (scan.notes.len() / 200).max(1);
    for (i, note) in scan.notes.iter().enumerate().filter(|(i, _)| i % step == 0) {
        let text = std::fs::read_to_string(root.join(&note.rel)).unwrap_or_default();
        let parsed = scholia::vault::parse::parse(&text, scholia::vault::stem(&note.rel));
        let words = scholia::index::tokenizer::tokens(&parsed.title);
        if let Some(w) = words.first() {
            // What someone types: the first 3-5 characters of a title word.
            let cut: String = w.chars().take(3 + i % 3).collect();
            b.symbol_queries.push(cut);
            b.titles.push(parsed.title.clone());
        }
        let body = scholia::index::tokenizer::tokens(&parsed.plain_text);
        if body.len() > 10 {
            b.search_queries
                .push(format!("{} {}", body[i % body.len()], body[(i * 7) % body.len()]));
            if b.research_notes.len() < 20 && i % (step * 7) == 0 {
                b.research_notes.push(note.rel.clone());
            } else if b.edit_notes.len() < 10 && i % (step * 5) == 0 {
                b.edit_notes.push(note.rel.clone());
            }
        }
    }
    b
}

impl Bench {
    /// The cache directory (the index is in it) every process here uses: the MCP client's
    /// (`tests/support`), `home/cache`. A server with a cache of its own built its own index
    /// and was measured while merging it.
    pub fn cache(&self) -> PathBuf {
        self.home.path().join("cache")
    }
}

pub fn cmd(b: &Bench) -> Command {
    let mut c = Command::new(BIN);
    c.env("SCHOLIA_CACHE_DIR", b.cache())
        .env("SCHOLIA_CONFIG_DIR", b.home.path().join("config"))
        .env("SCHOLIA_DATA_DIR", b.home.path().join("data"))
        .env("SCHOLIA_LOG", "warn");
    c
}

/// Runs a command to completion: wall time and peak RSS. The peak is the child's own VmHWM,
/// read while it runs: wait4's ru_maxrss also counts the address space the child was spawned
/// from (this benchmark's, hundreds of MB once a 100k vault was generated).
fn timed(c: Command) -> (Duration, u64) {
    let (took, rss, _) = timed_cpu(c);
    (took, rss)
}

/// [`timed`], and the CPU time the command's process took (every thread).
fn timed_cpu(mut c: Command) -> (Duration, u64, Duration) {
    let cpu_before = floor::cpu(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let mut child = c.stdout(Stdio::null()).spawn().unwrap();
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(peak_rss(pid));
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        })
    };
    let status = child.wait().unwrap();
    let elapsed = started.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(status.success(), "command failed");
    let cpu = floor::cpu(libc::RUSAGE_CHILDREN) - cpu_before;
    (elapsed, watcher.join().unwrap(), cpu)
}

pub fn peak_rss(pid: u32) -> u64 {
    status_bytes(pid, "VmHWM:")
}

/// Resident memory the process itself allocated, now: its peak RSS also counts the index
/// files' pages it has mapped (the page cache, which a merge reads through).
pub fn anon_rss(pid: u32) -> u64 {
    status_bytes(pid, "RssAnon:")
}

fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.99))
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// `--cold-runs N`: how many cold builds to time (1 unless asked).
fn cold_runs() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--cold-runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// The value after `name` on the command line.
fn flag_value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Drops the vault's page cache when `--cache-cold` asks for it, and says what it held.
fn cool(b: &Bench) {
    if std::env::args().any(|a| a == "--cache-cold") {
        println!("{}", cache::evict(&b.vault));
    }
}

fn run(rt: &tokio::runtime::Runtime, b: Bench) {
    if let Some(only) = flag_value("--only")
        && !b.name.contains(&only)
        && !b.vault.to_string_lossy().contains(&only)
    {
        return;
    }
    println!(
        "\n== {} ({} notes, {:.1} MB of Markdown) ==",
        b.name,
        b.notes,
        b.bytes as f64 / 1e6
    );
    // A shared 2-core machine's neighbours can double a run: `--cold-runs N` repeats the
    // cold build (the index removed between) and reports the fastest and the median.
    let index_cmd = || {
        let mut index = cmd(&b);
        index.args(["index", "--vault"]).arg(&b.vault);
        index
    };
    let rate = |d: Duration| {
        format!(
            "{:.3} s ({:.1} MB/s)",
            d.as_secs_f64(),
            b.bytes as f64 / 1e6 / d.as_secs_f64()
        )
    };
    let mut colds = Vec::new();
    for run in 0..cold_runs() {
        if run > 0 {
            std::fs::remove_dir_all(b.cache().join("index")).unwrap();
        }
        cool(&b);
        let (cold, cold_rss, cold_cpu) = timed_cpu(index_cmd());
        println!(
            "cold index (CLI):              {}   peak RSS {}   {} segments   CPU {:.2} s",
            rate(cold),
            mb(cold_rss),
            lsp::index_segments(&b),
            cold_cpu.as_secs_f64()
        );
        colds.push(cold);
    }
    colds.sort();
    let cold = colds[colds.len() / 2];
    if colds.len() > 1 {
        let runs = colds.len();
        println!(
            "cold index (CLI), {runs} runs: fastest {}, median {}",
            rate(colds[0]),
            rate(cold)
        );
    }
    rt.block_on(lsp::right_after_build(&b));
    let floor = floor::measure(&b);
    println!(
        "floor: tantivy alone, the text as one field: {}   CPU {:.2} s   (reading the files first: {:.3} s)",
        rate(floor.index),
        floor.index_cpu.as_secs_f64(),
        floor.read.as_secs_f64()
    );
    println!(
        "CLI cold index / floor: {:.2}x",
        cold.as_secs_f64() / floor.index.as_secs_f64()
    );
    if std::env::args().any(|a| a == "--ladder") {
        // The least a build of those fields could take on this machine: the producers' CPU
        // time and tantivy's, spread over every core with none idle.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let mut producers = 0.0;
        for step in floor::ladder(&b) {
            let cpu = step.cpu.as_secs_f64();
            print!("{:<58} {}   CPU {cpu:>6.2} s", step.name, rate(step.wall));
            if step.name.starts_with("producers") {
                producers += cpu;
                println!();
            } else {
                let least = (producers + cpu) / cores;
                println!(
                    "   with the producers on {cores} cores: >= {least:.2} s = {:.2}x the floor",
                    least / floor.index.as_secs_f64()
                );
            }
        }
    }
    if std::env::args().any(|a| a == "--cold-only") {
        return;
    }
    let (warm, warm_rss) = timed(index_cmd());
    println!(
        "warm index (CLI, no change):   {:>10.3} s   peak RSS {}",
        warm.as_secs_f64(),
        mb(warm_rss)
    );

    std::fs::remove_dir_all(b.cache().join("index")).unwrap();
    cool(&b);
    let lsp_cold = rt.block_on(lsp::round(&b, "cold", false));
    println!(
        "LSP cold indexing / CLI cold index: {:.2}x",
        lsp_cold.as_secs_f64() / cold.as_secs_f64()
    );
    if let Some(other) = flag_value("--other") {
        cool(&b);
        rt.block_on(lsp::other(&b, std::path::Path::new(&other), "cold"));
        rt.block_on(lsp::other(&b, std::path::Path::new(&other), "warm"));
    }
    if std::env::args().any(|a| a == "--until-ready") {
        return;
    }
    rt.block_on(lsp::round(&b, "warm", true));
    rt.block_on(agents::find_notes(&b));
    agents::cli_search(&b);
    agents::cli_research(&b);
    // Each command from the shell leaves a background check behind; the next vault's cold
    // build is not timed beside them.
    let waited = Instant::now();
    let left = background_checks(&b.vault);
    while background_checks(&b.vault) > 0 && waited.elapsed() < Duration::from_secs(600) {
        std::thread::sleep(Duration::from_millis(200));
    }
    println!(
        "background checks the shell commands left: {left}, all over after {:.1} s",
        waited.elapsed().as_secs_f64()
    );

    let vault = scholia::vault::Vault::open(&b.vault).unwrap();
    let dir = scholia::config::Dirs {
        config: b.home.path().join("config"),
        data: b.home.path().join("data"),
        cache: b.cache(),
    }
    .index_dir(vault.root());
    let idx = scholia::index::VaultIndex::open(vault, &dir, Default::default()).unwrap();
    library("search (library, 10 hits + snippets)", "hits", &b.search_queries, |q| {
        idx.search(q, 10, None).unwrap().len()
    });
    // The library's part of workspace/symbol (the LSP's figure less this is the protocol's).
    let _ = idx.symbols("warm", 100);
    library("symbols (library, 100 at most)", "results", &b.symbol_queries, |q| {
        idx.symbols(q, 100).unwrap().len()
    });
}

/// How many `scholia index --background` processes check `vault` now.
fn background_checks(vault: &std::path::Path) -> usize {
    let vault = vault.to_string_lossy();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("index --background") && c.contains(vault.as_ref()))
        .count()
}

/// Each query three times through `run` (which returns how many it found): p50, p99, average.
fn library(label: &str, what: &str, queries: &[String], run: impl Fn(&str) -> usize) {
    let (mut times, mut found) = (Vec::new(), 0);
    for _ in 0..3 {
        for q in queries {
            let t = Instant::now();
            found += run(q);
            times.push(t.elapsed());
        }
    }
    let n = times.len();
    let (p50, p99) = percentiles(times);
    println!(
        "{label}: p50 {} p99 {}  ({n} queries, {:.1} {what} avg)",
        ms(p50),
        ms(p99),
        found as f64 / n as f64
    );
}
