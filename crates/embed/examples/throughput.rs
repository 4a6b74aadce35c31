//! Embedding throughput on real notes: `cargo run --release -p scholia-embed --example
//! throughput -- MODEL_DIR NOTES_DIR [N]` prints tokens per second, one thread and all.

use std::time::Instant;

use scholia_embed::Embedder;
use scholia_embed::local::LocalModel;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = LocalModel::load(std::path::Path::new(&args[1])).expect("model");
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let mut texts = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(&args[2])];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("notes").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md")
                && let Ok(t) = std::fs::read_to_string(&p)
                && texts.len() < n
            {
                texts.push(t.chars().take(1500).collect::<String>());
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs
        .iter()
        .map(|t| model.count_tokens(t).min(model.max_tokens() - 2) + 2)
        .sum();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let started = Instant::now();
        pool.install(|| model.embed(&refs).unwrap());
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{threads} thread(s): {} texts, {tokens} tokens in {secs:.2} s: {:.0} tokens/s",
            refs.len(),
            tokens as f64 / secs
        );
    }
}
