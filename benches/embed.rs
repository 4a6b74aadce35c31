//! Meaning benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench embed -- --model DIR            # all-MiniLM-L6-v2 (sentence-transformers layout)
//!     cargo bench --bench embed -- --model DIR --vault PATH --questions FILE
//!     cargo bench --bench embed -- --model DIR --scan N   # also: a hybrid query's vector scan at N notes
//!     EMBED_DUMP=FILE cargo bench --bench embed -- --model DIR   # also writes each question's
//!                                   # two rankings (50 each, with scores) as JSON lines, to fit
//!                                   # the fusion on the development questions
//!
//! On `../shared/vaults/obsidian-help/en` (read only; the index goes to a temp directory):
//! 1. the cost of the vault's vectors: notes, chunks, tokens, seconds, tokens per second (on
//!    every core, as `scholia index` runs), and their size in memory and on disk;
//! 2. the paraphrase questions of `benches/embed/questions.json` (a held-out set, and the
//!    issue's four as a development set): how many are answered in the top 5 by words alone
//!    (BM25), by vectors alone, and by both fused, each question's ranks shown;
//! 3. query latency: p50 and p99 of each mode over the questions;
//! 4. with `--scan N`: the vector scan of a hybrid query over N notes of random vectors (the
//!    part of a query that grows with the vault).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use scholia::index::{SearchMode, VaultIndex, WriterOptions};
use scholia::vault::Vault;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(model) = arg(&args, "--model").or_else(|| std::env::var("SCHOLIA_EMBED_TEST_MODEL").ok()) else {
        println!("skipping: give --model DIR (or SCHOLIA_EMBED_TEST_MODEL): an all-MiniLM-L6-v2 directory");
        return;
    };
    let vault = arg(&args, "--vault")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared/vaults/obsidian-help/en"));
    if !vault.is_dir() {
        println!("skipping: {} not found", vault.display());
        return;
    }
    let questions = arg(&args, "--questions")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("benches/embed/questions.json"));
    let questions: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&questions).unwrap()).unwrap();

    let loaded = Instant::now();
    let embedder = Arc::new(scholia::embed::local::LocalModel::load(std::path::Path::new(&model)).unwrap());
    println!("model: {model} loaded in {:.2} s", loaded.elapsed().as_secs_f64());
    let cache = tempfile::tempdir().unwrap();
    let index = VaultIndex::open(
        Vault::open(&vault).unwrap(),
        &cache.path().join("index"),
        WriterOptions::default(),
    )
    .unwrap();
    index.sync(&mut |_| {}).unwrap();
    index.set_embedder(embedder.clone());
    let started = Instant::now();
    let done = index.embed_pending(&mut |_| {}, &|| false).unwrap();
    let secs = started.elapsed().as_secs_f64();
    let vectors = index.vectors().unwrap();
    let on_disk: u64 = std::fs::read_dir(cache.path().join("index"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("vectors-"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    println!(
        "vectors: {} notes, {} tokens in {secs:.1} s: {:.0} tokens/s, {:.1} notes/s on {} threads; {:.2} MB in memory, {:.2} MB on disk ({:.0} bytes a note)",
        done.embedded,
        done.tokens,
        done.tokens as f64 / secs,
        done.embedded as f64 / secs,
        rayon::current_num_threads(),
        vectors.bytes() as f64 / 1e6,
        on_disk as f64 / 1e6,
        on_disk as f64 / done.embedded.max(1) as f64
    );

    let mut dump = std::env::var("EMBED_DUMP")
        .ok()
        .map(|f| std::fs::File::create(f).unwrap());
    for set in ["held_out", "dev"] {
        let list = questions[set].as_array().unwrap();
        println!(
            "\n{set} ({} questions): rank of the first answering note in the top 5 (- when missed)",
            list.len()
        );
        println!("{:<62} {:>7} {:>8} {:>6}", "question", "lexical", "semantic", "hybrid");
        let mut totals = [0usize; 3];
        let mut times: [Vec<f64>; 3] = Default::default();
        for q in list {
            let text = q["q"].as_str().unwrap();
            let answers: Vec<&str> = q["answers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let mut ranks = Vec::new();
            for (i, mode) in [SearchMode::Lexical, SearchMode::Semantic, SearchMode::Hybrid]
                .into_iter()
                .enumerate()
            {
                let t = Instant::now();
                let (hits, _, _) = index.search_mode(text, 5, None, Some(mode)).unwrap();
                times[i].push(t.elapsed().as_secs_f64() * 1000.0);
                let rank = hits
                    .iter()
                    .position(|h| answers.contains(&scholia::vault::stem(&h.path)));
                if rank.is_some() {
                    totals[i] += 1;
                }
                ranks.push(rank.map_or("-".to_string(), |r| (r + 1).to_string()));
            }
            println!("{:<62} {:>7} {:>8} {:>6}", text, ranks[0], ranks[1], ranks[2]);
            if let Some(out) = dump.as_mut() {
                use std::io::Write;
                let (words, _, _) = index.search_mode(text, 50, None, Some(SearchMode::Lexical)).unwrap();
                let words: Vec<(&str, f32)> = words.iter().map(|h| (scholia::vault::stem(&h.path), h.score)).collect();
                let meaning = index.semantic(text, 50, None).unwrap();
                let meaning: Vec<(&str, f32)> = meaning.iter().map(|(p, c)| (scholia::vault::stem(p), *c)).collect();
                let line =
                    serde_json::json!({"set": set, "q": text, "answers": answers, "words": words, "meaning": meaning});
                writeln!(out, "{line}").unwrap();
            }
        }
        println!(
            "{:<62} {:>7} {:>8} {:>6}",
            format!("answered in the top 5 (of {})", list.len()),
            totals[0],
            totals[1],
            totals[2]
        );
        let p = |v: &mut Vec<f64>, q: f64| {
            v.sort_by(f64::total_cmp);
            v[((v.len() as f64 - 1.0) * q).round() as usize]
        };
        println!(
            "query ms p50 / p99: lexical {:.1} / {:.1}, semantic {:.1} / {:.1}, hybrid {:.1} / {:.1}",
            p(&mut times[0], 0.5),
            p(&mut times[0], 0.99),
            p(&mut times[1], 0.5),
            p(&mut times[1], 0.99),
            p(&mut times[2], 0.5),
            p(&mut times[2], 0.99)
        );
    }

    if let Some(n) = arg(&args, "--scan").and_then(|n| n.parse::<usize>().ok()) {
        let mut set = scholia::index::VectorSet::new("random", 384);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for i in 0..n {
            let v: Vec<f32> = (0..384)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            set.upsert(
                &format!("notes/{i}.md"),
                Default::default(),
                &scholia::embed::Quantized::new(&v),
            );
        }
        let q = set.vector("notes/7.md").unwrap();
        let mut times: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(set.nearest(&q, 50, |_| true));
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "\nvector scan of {n} notes: p50 {:.2} ms, p99 {:.2} ms; {:.1} MB of vectors",
            times[25],
            times[49],
            set.bytes() as f64 / 1e6
        );
        println!("sign prefilter at {n} random notes: {}", prefilter_recall(&set));
        if let Some(file) = arg(&args, "--vectors") {
            let real = scholia::index::VectorSet::load(std::path::Path::new(&file)).expect("a vectors file");
            println!(
                "sign prefilter at {} real notes ({file}): {}",
                real.len(),
                prefilter_recall(&real)
            );
        }
        // The meaning half of a hybrid query at that size: the question embedded, then the scan
        // (the words half is the lexical figure above; the two are fused after).
        let asked = ["keep my notes the same on my laptop and my phone", "record voice memos"];
        let mut times: Vec<f64> = (0..50)
            .map(|i| {
                let t = Instant::now();
                let v = scholia::embed::Embedder::embed(&*embedder, &[asked[i % 2]]).unwrap();
                let q = scholia::embed::Quantized::new(&v[0]);
                std::hint::black_box(set.nearest(&q, 50, |_| true));
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "a question embedded and scanned at {n} notes: p50 {:.2} ms, p99 {:.2} ms",
            times[25], times[49]
        );
    }
}

/// How many of the exact scan's 10 nearest the sign prefilter (scoring 1 in
/// `PREFILTER_SHARE` notes) keeps, over 200 of the set's own notes as queries.
fn prefilter_recall(set: &scholia::index::VectorSet) -> String {
    let share = (set.len() / scholia::index::PREFILTER_SHARE).max(10);
    let paths: Vec<String> = set.paths().map(str::to_string).collect();
    let step = (paths.len() / 200).max(1);
    let (mut kept, mut total) = (0usize, 0usize);
    for rel in paths.iter().step_by(step).take(200) {
        let q = set.vector(rel).unwrap();
        let all = |_: &str| true;
        let exact: Vec<String> = set.nearest_in(&q, 10, &all, None).into_iter().map(|x| x.0).collect();
        let fast: Vec<String> = set
            .nearest_in(&q, 10, &all, Some(share))
            .into_iter()
            .map(|x| x.0)
            .collect();
        kept += exact.iter().filter(|p| fast.contains(p)).count();
        total += exact.len();
    }
    format!(
        "recall@10 {:.3} scoring {share} of {} notes",
        kept as f64 / total.max(1) as f64,
        set.len()
    )
}
