//! The editor half over links, measured the same way for scholia and (when given) another
//! Markdown language server, on a copy of `../shared/vaults/obsidian-help`: prints figures,
//! asserts nothing.
//!
//!     cargo bench --bench links
//!     cargo bench --bench links -- --other /path/to/markdown-oxide
//!
//! Each server is spawned on the vault and measured through stdio as an editor drives it:
//! - first diagnostics: from spawning to the first `publishDiagnostics` of a note opened at
//!   once (a note with a link to a missing note), and whether it names that link;
//! - references: `textDocument/references` on 100 wikilinks spread over the vault, p50/p99,
//!   after the server has the whole vault (scholia: indexing ended; others: a first answer);
//! - rename: `textDocument/rename` from a wikilink to the note with the backlink count closest
//!   to 100, wall time until the `WorkspaceEdit` (not applied), and how many edits it holds;
//! - peak RSS.

#[path = "../tests/support/lsp_client.rs"]
mod lsp_client;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use lsp_client::{LspClient, file_uri};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_scholia");
const SAMPLE: usize = 100;

/// A wikilink to measure at: the note it is in and the LSP position inside it.
#[derive(Clone)]
struct At {
    rel: String,
    line: u32,
    character: u32,
    target: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vaults/obsidian-help");
    if !shared.is_dir() {
        println!("skipping: {} not found", shared.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    copy(&shared, &vault);
    let vault = vault.canonicalize().unwrap();
    let (links, hub, notes) = sample(&vault);
    println!(
        "links benchmark: obsidian-help ({notes} notes), {} wikilinks for references, rename target `{}` ({} links to it)",
        links.len(),
        hub.0.target,
        hub.1
    );
    let missing = "Benchmark probe.md";
    std::fs::write(
        vault.join(missing),
        "# Probe\n\nSee [[A note nobody wrote]] and [[Obsidian Sync]].\n",
    )
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let scholia = || {
        let mut c = tokio::process::Command::new(BIN);
        c.arg("lsp")
            .env("SCHOLIA_CACHE_DIR", cache.path())
            .env("SCHOLIA_CONFIG_DIR", cache.path().join("config"))
            .env("SCHOLIA_DATA_DIR", cache.path().join("data"))
            .env("SCHOLIA_LOG", "warn");
        c
    };
    rt.block_on(measure(
        "scholia (cold index)",
        scholia(),
        &vault,
        &links,
        &hub.0,
        missing,
        true,
    ));
    rt.block_on(measure(
        "scholia (warm)",
        scholia(),
        &vault,
        &links,
        &hub.0,
        missing,
        true,
    ));
    if let Some(i) = args.iter().position(|a| a == "--other") {
        let other = PathBuf::from(&args[i + 1]);
        let name = other.file_name().unwrap().to_string_lossy().to_string();
        let c = tokio::process::Command::new(&other);
        rt.block_on(measure(&name, c, &vault, &links, &hub.0, missing, false));
    }
}

async fn measure(
    name: &str,
    mut cmd: tokio::process::Command,
    vault: &Path,
    links: &[At],
    hub: &At,
    missing: &str,
    scholia: bool,
) {
    let started = Instant::now();
    let (mut c, mut child) = LspClient::spawn(cmd.current_dir(vault).stderr(Stdio::null()));
    let pid = child.id().unwrap();
    let caps = json!({
        "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}},
        "textDocument": {"publishDiagnostics": {"relatedInformation": true}}
    });
    c.initialize_with(vault, json!({}), caps).await;
    let init = started.elapsed();
    // A note opened at once: its diagnostics, as soon as the server publishes them.
    let probe = vault.join(missing);
    let probe_uri = c.open(&probe, &std::fs::read_to_string(&probe).unwrap()).await;
    let first = c
        .wait_notification(Duration::from_secs(120), |n| {
            n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == probe_uri
        })
        .await;
    let diagnostics = started.elapsed();
    let named = first
        .as_ref()
        .is_some_and(|n| n.to_string().contains("A note nobody wrote"));
    // The whole vault, before anything is timed.
    if scholia {
        c.wait_progress_end("Indexing vault", Duration::from_secs(600)).await;
    }
    let whole = started.elapsed();
    let mut times = Vec::new();
    let mut found = 0usize;
    let mut opened: HashMap<String, ()> = HashMap::new();
    for at in links {
        let uri = open(&mut c, vault, &at.rel, &mut opened).await;
        let t = Instant::now();
        let r = c
            .request_raw(
                "textDocument/references",
                json!({"textDocument": {"uri": uri}, "position": {"line": at.line, "character": at.character}, "context": {"includeDeclaration": false}}),
            )
            .await;
        times.push(t.elapsed());
        found += r["result"].as_array().map_or(0, Vec::len);
    }
    let (p50, p99) = percentiles(times.clone());
    let uri = open(&mut c, vault, &hub.rel, &mut opened).await;
    let t = Instant::now();
    let r = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": uri}, "position": {"line": hub.line, "character": hub.character}, "newName": "Renamed by the benchmark"}),
        )
        .await;
    let rename = t.elapsed();
    let edits = count_edits(&r["result"]);
    println!("\n== {name} ==");
    println!(
        "initialize {:.1} ms; first diagnostics {:.3} s after spawn ({}); whole vault ready {:.3} s",
        init.as_secs_f64() * 1e3,
        diagnostics.as_secs_f64(),
        if first.is_none() {
            "none published".to_string()
        } else if named {
            "names the missing note".to_string()
        } else {
            "published, without the missing note".to_string()
        },
        whole.as_secs_f64()
    );
    println!(
        "references: p50 {:.2} ms p99 {:.2} ms ({} requests, {:.1} locations avg)",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        times.len(),
        found as f64 / times.len() as f64
    );
    println!(
        "rename of `{}`: {:.1} ms, {} text edits{}",
        hub.target,
        rename.as_secs_f64() * 1e3,
        edits,
        r.get("error").map(|e| format!(" (error: {e})")).unwrap_or_default()
    );
    println!("peak RSS {:.1} MB", peak_rss(pid) as f64 / 1e6);
    c.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
}

async fn open(c: &mut LspClient, vault: &Path, rel: &str, opened: &mut HashMap<String, ()>) -> String {
    let path = vault.join(rel);
    if opened.insert(rel.to_string(), ()).is_none() {
        c.open(&path, &std::fs::read_to_string(&path).unwrap()).await
    } else {
        file_uri(&path)
    }
}

fn count_edits(edit: &Value) -> usize {
    let from_changes: usize = edit["changes"]
        .as_object()
        .map_or(0, |m| m.values().map(|v| v.as_array().map_or(0, Vec::len)).sum());
    let from_docs: usize = edit["documentChanges"].as_array().map_or(0, |ops| {
        ops.iter().map(|o| o["edits"].as_array().map_or(0, Vec::len)).sum()
    });
    from_changes + from_docs
}

/// 100 wikilinks spread over the vault, and a link to the note with the backlink count
/// closest to 100.
fn sample(vault: &Path) -> (Vec<At>, (At, usize), usize) {
    let scan = scholia::vault::scan::scan(vault);
    let stems: HashMap<String, usize> = scan.notes.iter().fold(HashMap::new(), |mut m, n| {
        *m.entry(scholia::vault::stem(&n.rel).to_lowercase()).or_default() += 1;
        m
    });
    let mut all: Vec<At> = Vec::new();
    let mut backlinks: HashMap<String, usize> = HashMap::new();
    for note in &scan.notes {
        let text = std::fs::read_to_string(vault.join(&note.rel)).unwrap_or_default();
        let parsed = scholia::vault::parse::parse(&text, "");
        for l in parsed.links.iter().filter(|l| !l.embed && l.heading.is_none()) {
            let stem = l.target.rsplit('/').next().unwrap_or(&l.target).trim().to_lowercase();
            // Unambiguous names only: every server resolves them the same way.
            if stems.get(&stem) != Some(&1) {
                continue;
            }
            *backlinks.entry(stem.clone()).or_default() += 1;
            // Inside the link, on its first character.
            let open = l.range.start + text[l.range.start..].find("[[").unwrap_or(0) + 2;
            let at = open + text[open..].chars().next().map_or(0, char::len_utf8);
            let line = text[..at].matches('\n').count() as u32;
            let col = text[text[..at].rfind('\n').map_or(0, |i| i + 1)..at]
                .encode_utf16()
                .count() as u32;
            all.push(At {
                rel: note.rel.clone(),
                line,
                character: col,
                target: stem,
            });
        }
    }
    let step = (all.len() / SAMPLE).max(1);
    let links: Vec<At> = all.iter().step_by(step).take(SAMPLE).cloned().collect();
    let (hub, n) = backlinks
        .iter()
        .min_by_key(|(t, n)| ((**n as i64 - 100).abs(), (*t).clone()))
        .map(|(t, n)| (t.clone(), *n))
        .unwrap();
    let at = all.iter().find(|a| a.target == hub).unwrap().clone();
    (links, (at, n), scan.notes.len())
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let p = entry.path();
        let dest = to.join(entry.file_name());
        if p.is_dir() {
            copy(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.99))
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
