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
//!    part of a query that grows with the vault);
//! 5. with `--busy`: foreground answers (lexical searches, offline research's related notes)
//!    while the vectors of all of obsidian-help (6,246 notes) are computed in the background
//!    as a server computes them (`VaultIndex::embed_in_background`), against the same answers
//!    idle: the issue asks that they slow by 20 % at most.

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

    if args.iter().any(|a| a == "--busy") {
        let list: Vec<String> = questions["held_out"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["q"].as_str().unwrap().to_string())
            .collect();
        busy(embedder.clone(), &vault, &list);
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

/// Foreground answers idle, then while every note of obsidian-help (the parent of `en`) is
/// embedded in the background, then idle again: p50 and p90 of each kind, and the ratio.
fn busy(embedder: Arc<scholia::embed::local::LocalModel>, en: &std::path::Path, questions: &[String]) {
    let root = en.parent().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let index = Arc::new(
        VaultIndex::open(
            Vault::open(root).unwrap(),
            &cache.path().join("index"),
            WriterOptions::default(),
        )
        .unwrap(),
    );
    index.sync(&mut |_| {}).unwrap();
    index.set_embedder(embedder);
    // The notes whose related notes are asked: every 20th of en's, as a reader opens them.
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut stack = vec![en.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                notes.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    notes.sort();
    let notes: Vec<(String, String)> = notes.into_iter().step_by(20).collect();
    let round = |index: &VaultIndex| -> (Vec<f64>, Vec<f64>) {
        let (mut searched, mut related) = (Vec::new(), Vec::new());
        for q in questions {
            let t = Instant::now();
            std::hint::black_box(index.search(q, 10, None).unwrap());
            searched.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        for (rel, text) in &notes {
            let t = Instant::now();
            std::hint::black_box(scholia::research::offline::related_notes(index, rel, text.clone()).unwrap());
            related.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        (searched, related)
    };
    let p = |v: &[f64], q: f64| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[((v.len() as f64 - 1.0) * q).round() as usize]
    };
    let measure = |label: &str, rounds: usize| -> (f64, f64) {
        let (mut s, mut r) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (a, b) = round(&index);
            s.extend(a);
            r.extend(b);
        }
        println!(
            "{label:<28} search p50 {:.2} ms p90 {:.2} ms; related notes p50 {:.1} ms p90 {:.1} ms ({} and {} answers)",
            p(&s, 0.5),
            p(&s, 0.9),
            p(&r, 0.5),
            p(&r, 0.9),
            s.len(),
            r.len()
        );
        (p(&s, 0.5), p(&r, 0.5))
    };
    println!(
        "\nforeground answers while {} notes are embedded in the background ({} threads, lowered priority)",
        index.num_notes(),
        rayon::current_num_threads()
    );
    round(&index); // warm
    let idle = measure("idle", 8);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let background = {
        let (index, stop) = (index.clone(), stop.clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            let done = index.embed_in_background(&|| stop.load(std::sync::atomic::Ordering::Relaxed));
            (done, t.elapsed().as_secs_f64())
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(2));
    let busy = measure("embedding in the background", 8);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (done, secs) = background.join().unwrap();
    let done = done.unwrap();
    let after = measure("idle again", 8);
    println!(
        "background: {} notes embedded ({} tokens) in {secs:.1} s before it was stopped: {:.0} tokens/s",
        done.embedded,
        done.tokens,
        done.tokens as f64 / secs
    );
    let base = |i: usize| {
        if i == 0 {
            idle.0.min(after.0)
        } else {
            idle.1.min(after.1)
        }
    };
    println!(
        "slowed by: search {:+.0} %, related notes {:+.0} % (p50 busy against the faster idle p50)",
        (busy.0 / base(0) - 1.0) * 100.0,
        (busy.1 / base(1) - 1.0) * 100.0
    );
}
