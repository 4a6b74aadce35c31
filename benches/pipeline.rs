//! Pipeline-overhead benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench pipeline
//!
//! research_note on a 10-topic note against loopback fakes with fixed latencies (LLM 300 ms,
//! search 150 ms, page 100 ms). The critical path is the longest chain of dependent calls:
//! shallow = topics + search + synthesis = 750 ms; deep adds a page fetch and a page
//! extraction = 1,150 ms. Reported: median wall time of 5 runs / critical path, with the
//! concurrency limits lifted to the fan-out (the pipeline's own overhead), and with the
//! default limits (4 LLM calls, 4 searches at once).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scholia::config::Dirs;
use scholia::engine::{DiskWriter, Engine, JobStart, ProgressSink, Update};
use scholia::index::VaultSession;
use scholia::research::note::Depth;
use scholia_fakes::{FakeServer, Latency};

const LLM: u64 = 300;
const SEARCH: u64 = 150;
const PAGE: u64 = 100;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let pages = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/webpages/readability-test-pages");
    let latency = Latency {
        llm: Duration::from_millis(LLM),
        search: Duration::from_millis(SEARCH),
        page: Duration::from_millis(PAGE),
    };
    let server = rt.block_on(FakeServer::start(pages, latency, 0)).unwrap();
    println!("research_note pipeline overhead (LLM {LLM} ms, search {SEARCH} ms, page {PAGE} ms; median of 5)");
    for (label, llm_conc, search_conc) in [("limits lifted", 32, 16), ("default limits", 4, 4)] {
        for depth in [Depth::Shallow, Depth::Deep] {
            let critical = match depth {
                Depth::Shallow => LLM + SEARCH + LLM,
                Depth::Deep => LLM + SEARCH + PAGE + LLM + LLM,
            };
            let mut times: Vec<Duration> = (0..5)
                .map(|_| rt.block_on(run_once(&server, depth, llm_conc, search_conc)))
                .collect();
            times.sort();
            let median = times[2];
            println!(
                "  {:<8} {label:<15} wall {:>6.0} ms / critical path {critical} ms = {:.3}",
                depth.as_str(),
                median.as_secs_f64() * 1e3,
                median.as_secs_f64() * 1e3 / critical as f64
            );
        }
    }
}

async fn run_once(server: &FakeServer, depth: Depth, llm_conc: usize, search_conc: usize) -> Duration {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    let bullets: String = [
        "Wikipedia is edited by volunteers.",
        "Mozilla builds the Firefox browser.",
        "The New York Times covers politics.",
        "Medium hosts long-form blogging.",
        "The Guardian reports world news.",
        "Ars Technica reviews hardware.",
        "Readability extracts article text.",
        "The Washington Post investigates government.",
        "Blogger was bought by Google.",
        "Hacker News discusses startups.",
    ]
    .iter()
    .map(|b| format!("- {b}\n"))
    .collect();
    std::fs::write(root.join("Ten topics.md"), format!("# Ten topics\n\n{bullets}")).unwrap();
    std::fs::write(
        root.join("Browsers.md"),
        "# Browsers\n\nFirefox and Mozilla, Wikipedia articles.\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".scholia.toml"),
        format!("[llm]\nmax_concurrency = {llm_conc}\n\n[search]\nmax_concurrency = {search_conc}\n"),
    )
    .unwrap();
    // LLM concurrency multiplies cost: a vault's file sets it only once the user trusts it.
    scholia::config::trust::trust(&tmp.path().join(".config/scholia"), &root).unwrap();
    let env: std::collections::HashMap<String, String> = [
        ("HOME", tmp.path().display().to_string()),
        ("SCHOLIA_CACHE_DIR", tmp.path().join("cache").display().to_string()),
        ("SCHOLIA_LLM_BASE_URL", format!("{}/v1", server.base())),
        ("SCHOLIA_LLM_MODEL", "fake".into()),
        ("SCHOLIA_DUCKDUCKGO_URL", server.base()),
        ("SCHOLIA_ALLOW_PRIVATE_HOSTS", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let dirs = Dirs::from_env(&env).unwrap();
    let (session, _) = VaultSession::open_synced(&root, &dirs, &mut |_| {}).unwrap();
    let engine = Engine::load(&env, Some(session.vault().root()), None).unwrap();
    let started = Instant::now();
    let trace = std::env::var("TRACE").is_ok();
    let job = engine
        .jobs()
        .start("bench", true, |_: &JobStart| Arc::new(Trace { started, trace }));
    let note = engine.resolve_note(&session, "Ten topics.md", None).await.unwrap();
    let result = engine
        .research_note(&session, &note, depth, None, &DiskWriter, &job)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(result.research.topics_researched, 10);
    elapsed
}

/// Prints each progress line with its time when TRACE is set.
struct Trace {
    started: Instant,
    trace: bool,
}

impl ProgressSink for Trace {
    fn update(&self, u: &Update) {
        if self.trace {
            eprintln!("{:>6.0} ms {}", self.started.elapsed().as_secs_f64() * 1e3, u.message);
        }
    }
    fn end(&self, _: &str) {}
}
