//! Content-extraction benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench extract
//!
//! For each of Mozilla Readability's test pages (`../shared/webpages/readability-test-pages`):
//! bag-of-words F1 (lower-cased `\w+` tokens) of scholia's extracted text against the text of
//! `expected.html`, beside the same figure for html2text on the whole page.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use scholia::web::extract;

fn words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
    {
        *counts.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    counts
}

fn f1(got: &str, expected: &str) -> f64 {
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

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/webpages/readability-test-pages");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("readability-test-pages not found beside the repository")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("source.html").is_file())
        .collect();
    dirs.sort();
    let (mut ours, mut baseline) = (Vec::new(), Vec::new());
    let mut worst = Vec::new();
    let mut readability_used = 0;
    let started = Instant::now();
    for dir in &dirs {
        let source = std::fs::read_to_string(dir.join("source.html")).unwrap_or_default();
        let expected_html = std::fs::read_to_string(dir.join("expected.html")).unwrap_or_default();
        let expected = dom_query::Document::from(expected_html.as_str())
            .root()
            .text()
            .to_string();
        let got = extract::extract(&source, Some("http://fakehost/test/page.html"), usize::MAX);
        if got.method == extract::Method::Readability {
            readability_used += 1;
        }
        let ours_f1 = f1(&got.markdown, &expected);
        ours.push(ours_f1);
        baseline.push(f1(&extract::html2text_whole(&source), &expected));
        worst.push((ours_f1, dir.file_name().unwrap().to_string_lossy().into_owned()));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    worst.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!(
        "content extraction on {} readability test pages ({:.1} s)",
        dirs.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "  scholia (readability → markdown, html2text fallback): mean F1 {:.3}",
        mean(&ours)
    );
    println!(
        "  html2text on whole pages:                             mean F1 {:.3}",
        mean(&baseline)
    );
    println!("  readability article found on {readability_used}/{} pages", dirs.len());
    println!(
        "  lowest: {}",
        worst
            .iter()
            .take(8)
            .map(|(f, n)| format!("{n} {f:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
