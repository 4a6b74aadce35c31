//! The time one short query takes: `cargo run --release -p scholia-embed --example query -- MODEL_DIR`.

use std::time::Instant;

use scholia_embed::Embedder;
use scholia_embed::local::LocalModel;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = LocalModel::load(std::path::Path::new(&args[1])).expect("model");
    let q = ["keep my notes the same on my laptop and my phone"];
    for _ in 0..3 {
        model.embed(&q).unwrap();
    }
    let mut times: Vec<f64> = (0..50)
        .map(|_| {
            let t = Instant::now();
            model.embed(&q).unwrap();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "query of {} tokens: p50 {:.2} ms, p99 {:.2} ms",
        model.count_tokens(q[0]) + 2,
        times[25],
        times[49]
    );
}
