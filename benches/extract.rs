//! Content-extraction benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench extract               # both page sets
//!     cargo bench --bench extract -- --worst 10 # also the 10 lowest pages of each set
//!     cargo bench --bench extract -- --dump DIR # each page's truth and extractions, as text files
//!
//! 1. `../shared/webpages/article-extraction-dev`: 97 news and blog pages with human-marked
//!    article bodies, scored as the article-extraction-benchmark does (4-gram shingles of `\w+`
//!    tokens; tp/fp/fn normalised per page; precision and recall averaged over pages; F1 of
//!    the averages), on scholia's plain reading text. Beside it, the same figure for each
//!    extractor scholia combines, run alone, and extraction time per page.
//! 2. `../shared/webpages/readability-test-pages`: Mozilla Readability's 130 test pages,
//!    bag-of-words F1 against `expected.html` (Readability's own output, so a Readability port
//!    scores high there by construction: a regression check, not a measure of quality).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scholia::web::extract;

fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The benchmark's shingles: every run of 4 tokens (the whole text when shorter).
fn shingles<'a>(toks: &[&'a str]) -> HashMap<Vec<&'a str>, usize> {
    let mut counts = HashMap::new();
    if toks.is_empty() {
        return counts;
    }
    for i in 0..toks.len().saturating_sub(4) + 1 {
        let end = (i + 4).min(toks.len());
        *counts.entry(toks[i..end].to_vec()).or_insert(0) += 1;
    }
    counts
}

/// Normalised (tp, fp, fn) of one page.
fn shingle_match(truth: &str, predicted: &str) -> (f64, f64, f64) {
    let (t, p) = (tokens(truth), tokens(predicted));
    let (ts, ps) = (shingles(&t), shingles(&p));
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (k, &tc) in &ts {
        let pc = *ps.get(k).unwrap_or(&0);
        tp += tc.min(pc);
        fn_ += tc.saturating_sub(pc);
    }
    for (k, &pc) in &ps {
        fp += pc.saturating_sub(*ts.get(k).unwrap_or(&0));
    }
    let sum = (tp + fp + fn_) as f64;
    if sum == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    (tp as f64 / sum, fp as f64 / sum, fn_ as f64 / sum)
}

struct Score {
    precision: f64,
    recall: f64,
    f1: f64,
}

fn score(pages: &[(f64, f64, f64)]) -> Score {
    let p: Vec<f64> = pages
        .iter()
        .filter(|(tp, fp, _)| tp + fp > 0.0)
        .map(|(tp, fp, _)| tp / (tp + fp))
        .collect();
    let r: Vec<f64> = pages
        .iter()
        .filter(|(tp, _, fn_)| tp + fn_ > 0.0)
        .map(|(tp, _, fn_)| tp / (tp + fn_))
        .collect();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let (precision, recall) = (mean(&p), mean(&r));
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Score { precision, recall, f1 }
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

type Extractor = (&'static str, fn(&str, &str) -> String);

fn extractors() -> Vec<Extractor> {
    vec![
        ("scholia", |html, url| {
            extract::extract(html, Some(url), usize::MAX).markdown
        }),
        ("dom_smoothie alone", |html, url| {
            extract::readability_only(html, Some(url))
        }),
        ("rs-trafilatura alone", |html, url| {
            extract::trafilatura_only(html, Some(url))
        }),
    ]
}

fn article_dev(worst_n: usize, dump: Option<&Path>) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/webpages/article-extraction-dev");
    let Ok(truth) = std::fs::read_to_string(root.join("ground-truth.json")) else {
        println!("skipping article-extraction-dev: not found beside the repository");
        return;
    };
    let truth: serde_json::Value = serde_json::from_str(&truth).unwrap();
    let mut ids: Vec<&String> = truth.as_object().unwrap().keys().collect();
    ids.sort();
    let pages: Vec<(String, String, String, String)> = ids
        .iter()
        .map(|id| {
            let html = gunzip(&root.join(format!("html/{id}.html.gz")));
            let t = &truth[id.as_str()];
            (
                id.to_string(),
                html,
                t["articleBody"].as_str().unwrap_or_default().to_string(),
                t["url"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    println!(
        "article extraction, development split ({} pages, 4-gram shingle F1 as the benchmark scores it):",
        pages.len()
    );
    for (name, run) in extractors() {
        let mut scored = Vec::new();
        let mut times = Vec::new();
        let mut per_page = Vec::new();
        for (id, html, body, url) in &pages {
            let started = Instant::now();
            let got = run(html, url);
            times.push(started.elapsed());
            if let Some(dir) = dump {
                std::fs::create_dir_all(dir).unwrap();
                std::fs::write(dir.join(format!("{id}.truth.txt")), body).unwrap();
                std::fs::write(dir.join(format!("{id}.{}.txt", name.split(' ').next().unwrap())), &got).unwrap();
            }
            let m = shingle_match(body, &got);
            scored.push(m);
            let page = score(&[m]);
            per_page.push((page.f1, page.precision, page.recall, id.clone()));
        }
        let s = score(&scored);
        println!(
            "  {name:<22} F1 {:.4}  precision {:.4}  recall {:.4}  time per page p50 {:.1} ms, p99 {:.1} ms",
            s.f1,
            s.precision,
            s.recall,
            percentile(&mut times, 0.5),
            percentile(&mut times, 0.99)
        );
        if worst_n > 0 {
            per_page.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (f, p, r, id) in per_page.iter().take(worst_n) {
                println!("      {id}: F1 {f:.3} (P {p:.3}, R {r:.3})");
            }
        }
    }
}

fn gunzip(path: &Path) -> String {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

fn words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in tokens(text) {
        *counts.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    counts
}

fn bag_f1(got: &str, expected: &str) -> f64 {
    let (g, e) = (words(got), words(expected));
    let (ng, ne): (usize, usize) = (g.values().sum(), e.values().sum());
    if ng == 0 && ne == 0 {
        return 1.0;
    }
    let overlap: usize = g.iter().map(|(w, c)| (*c).min(*e.get(w).unwrap_or(&0))).sum();
    if overlap == 0 {
        return 0.0;
    }
    let (p, r) = (overlap as f64 / ng as f64, overlap as f64 / ne as f64);
    2.0 * p * r / (p + r)
}

fn readability_pages() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/webpages/readability-test-pages");
    let Ok(entries) = std::fs::read_dir(&root) else {
        println!("skipping readability-test-pages: not found beside the repository");
        return;
    };
    let mut dirs: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("source.html").is_file())
        .collect();
    dirs.sort();
    let (mut ours, mut baseline) = (Vec::new(), Vec::new());
    for dir in &dirs {
        let source = std::fs::read_to_string(dir.join("source.html")).unwrap_or_default();
        let expected_html = std::fs::read_to_string(dir.join("expected.html")).unwrap_or_default();
        let expected = dom_query::Document::from(expected_html.as_str())
            .root()
            .text()
            .to_string();
        let got = extract::extract(&source, Some("http://fakehost/test/page.html"), usize::MAX);
        ours.push(bag_f1(&got.markdown, &expected));
        baseline.push(bag_f1(&extract::html2text_whole(&source), &expected));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "\nMozilla Readability test pages ({}; bag-of-words F1 against Readability's own output):",
        dirs.len()
    );
    println!("  scholia                F1 {:.3}", mean(&ours));
    println!("  html2text, whole page  F1 {:.3}", mean(&baseline));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let worst = args
        .iter()
        .position(|a| a == "--worst")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    // Writes each page's truth and every extractor's text into DIR, for reading failures.
    let dump = args
        .iter()
        .position(|a| a == "--dump")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    article_dev(worst, dump.as_deref());
    readability_pages();
}
