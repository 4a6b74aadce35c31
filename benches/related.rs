//! Related-notes benchmark: prints figures, asserts nothing.
//!
//!     cargo bench --bench related               # obsidian-help `en`
//!     cargo bench --bench related -- --all      # every language of the vault
//!     cargo bench --bench related -- --lang ja  # one language (--lang ar --lang vi: several)
//!     cargo bench --bench related -- --all --draws 1   # one way of hiding links, not the
//!                                   # two whose mean each figure is by default
//!     cargo bench --bench related -- --all --draws 8   # six more, each hiding a half chosen
//!                                   # by a hash: each language's figure with its interval
//!     cargo bench --bench related -- --all --one-at-a-time   # each note's links hidden with
//!                                   # the rest of the vault whole (see related/alone.rs)
//!     cargo bench --bench related -- --precision   # the earlier precision figure
//!     cargo bench --bench related -- --graded   # a reader's grades of entries, and how they
//!                                   # are shown now (see related/graded.rs)
//!     RELATED_DUMP=DIR cargo bench --bench related -- --all   # also writes every candidate's
//!                                   # evidence per language, for benches/related/fit.py
//!     RELATED_GENERIC=15 cargo bench --bench related -- --lang de   # also the 15 generic
//!                                   # words shown most (see "generic" below)
//!
//! Link prediction (the default): what offline research tells the owner that the note does
//! not already say. Each language folder becomes a vault of its own. For every note with at
//! least four notes it links to, half of those links are hidden: the links and their text are
//! removed from the note, and the hidden notes' links back to it are removed from them. Offline
//! research then cites notes; those the note still links (either direction) are not new. The
//! figure is hidden-link recall@10: the share of hidden notes among the first ten new notes
//! cited, averaged over notes and over two draws (every second of a note's sorted links
//! hidden, then the others), beside a tf·idf cosine over the same texts ranked the same way
//! (visibly linked notes left out). "new" is the share of cited notes the note does not visibly
//! link. "generic" is what a reader sees of chance words: of the words shown beside cited notes
//! (what found them), the share that more than a fifth of the vault's notes hold.
//! "tied" is the share of new notes cited told by a link, folder, tag or hub, not by words;
//! "hubs" the share told on the hubs line (the vault's most linked, see `related::hubs`).
//! "mute" is the share of notes cited shown with nothing saying why (no shared word, tie or
//! line naming it; a passage only).
//! "hits" is the share of the first ten new notes cited that are hidden links: what share of
//! the entries a reader meets the vault's author had linked.
//!
//! `--precision`: every wikilink made plain text (`[[Target|shown]]` → `shown`), and the notes
//! cited scored against the notes linked in the real vault. With the link text left in place,
//! finding the notes a note names is easy: this rewards repeating the note's own links.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use scholia::index::{VaultIndex, WriterOptions, tokenizer};
use scholia::vault::Vault;
use scholia::vault::parse::parse;

#[path = "related/alone.rs"]
mod alone;
#[path = "related/graded.rs"]
mod graded;
#[path = "related/hidden.rs"]
mod hidden;
#[path = "related/links.rs"]
mod links;
use hidden::hidden_links;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vaults/obsidian-help");
    if !root.is_dir() {
        println!("skipping: {} not found", root.display());
        return;
    }
    if args.iter().any(|a| a == "--graded") {
        graded::graded(&root);
        return;
    }
    let langs: Vec<String> = if args.iter().any(|a| a == "--all") {
        let mut l: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && n != "Release notes")
            .collect();
        l.sort();
        l
    } else {
        // `--lang ar --lang vi`: each, in that order.
        let named: Vec<String> = args
            .windows(2)
            .filter(|w| w[0] == "--lang")
            .map(|w| w[1].clone())
            .collect();
        if named.is_empty() { vec!["en".into()] } else { named }
    };
    if !args.iter().any(|a| a == "--precision") {
        hidden_links(&root, &langs);
        return;
    }
    println!("related notes: precision of the ten cited against the real vault's links");
    println!(
        "{:<6} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "lang", "notes", "scholia", "tf-idf", "terms", "p50 ms", "p95 ms", "terms ms"
    );
    let (mut sum, mut worst) = (0.0, (1.0f64, String::new()));
    for lang in &langs {
        let r = bench(&root.join(lang), args.iter().any(|a| a == "--detail"));
        println!(
            "{:<6} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>8.2} {:>8.2} {:>8.2}",
            lang, r.notes, r.precision, r.baseline, r.terms, r.p50_ms, r.p95_ms, r.terms_p50_ms
        );
        sum += r.precision;
        if r.precision < worst.0 {
            worst = (r.precision, lang.clone());
        }
    }
    if langs.len() > 1 {
        println!(
            "mean {:.3}, lowest {:.3} ({})",
            sum / langs.len() as f64,
            worst.0,
            worst.1
        );
    }
}

struct Result {
    notes: usize,
    precision: f64,
    baseline: f64,
    /// The selection before this benchmark existed: the notes found by searching each of the
    /// note's eight tf·idf key terms (embeds expanded), most terms shared first.
    terms: f64,
    terms_p50_ms: f64,
    p50_ms: f64,
    p95_ms: f64,
}

fn bench(dir: &Path, detail: bool) -> Result {
    let tmp = tempfile::tempdir().unwrap();
    let vault_dir = tmp.path().join("vault");
    let mut notes: Vec<(String, String)> = Vec::new(); // (rel, original text)
    copy_plain(dir, dir, &vault_dir, &mut notes);
    notes.sort();
    let truth = links(&notes);

    let vault = Vault::open(&vault_dir).unwrap();
    let index = VaultIndex::open(vault, &tmp.path().join("index"), WriterOptions::default()).unwrap();
    index.sync(&mut |_| {}).unwrap();

    let plain: HashMap<&str, String> = notes
        .iter()
        .map(|(rel, _)| (rel.as_str(), std::fs::read_to_string(vault_dir.join(rel)).unwrap()))
        .collect();
    let baseline = Baseline::new(&plain);
    let (mut ours, mut theirs, mut old, mut counted) = (0.0, 0.0, 0.0, 0);
    let mut old_times = Vec::new();
    let mut times = Vec::new();
    // Hits and citations at each rank, for --detail.
    let mut at_rank = [(0usize, 0usize); 10];
    // (cited with scores, linked) per note, for --detail's cut-off table.
    type Kept = (Vec<(String, f32)>, HashSet<String>);
    let mut kept: Vec<Kept> = Vec::new();
    for (rel, _) in &notes {
        let Some(linked) = truth.get(rel.as_str()).filter(|l| !l.is_empty()) else {
            continue;
        };
        let started = Instant::now();
        // An empty note cites nothing and counts as zero.
        let cited =
            scholia::research::offline::related_notes(&index, rel, plain[rel.as_str()].clone()).unwrap_or_default();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        counted += 1;
        ours += precision(cited.iter().map(|c| c.path.as_str()), linked);
        kept.push((
            cited.iter().map(|c| (c.path.clone(), c.score)).collect(),
            linked.clone(),
        ));
        for (i, c) in cited.iter().enumerate().take(10) {
            at_rank[i].1 += 1;
            at_rank[i].0 += linked.contains(&c.path) as usize;
        }
        if std::env::var_os("SHOW_NOTES").is_some() && precision(cited.iter().map(|c| c.path.as_str()), linked) < 0.3 {
            let shown: Vec<String> = cited
                .iter()
                .map(|c| {
                    format!(
                        "{}{} {:.2}",
                        if linked.contains(&c.path) { "+" } else { "-" },
                        c.title,
                        c.score
                    )
                })
                .collect();
            println!("  {rel} ({} linked): {}", linked.len(), shown.join(" | "));
        }
        theirs += precision(baseline.top(rel, 10).into_iter(), linked);
        let started = Instant::now();
        let by_terms = key_term_notes(&index, rel, &plain[rel.as_str()]);
        old_times.push(started.elapsed().as_secs_f64() * 1000.0);
        old += precision(by_terms.iter().map(String::as_str), linked);
    }
    if detail {
        for (ratio, min) in [
            (0.0, 10),
            (0.3, 3),
            (0.4, 3),
            (0.5, 3),
            (0.6, 3),
            (0.4, 1),
            (0.5, 1),
            (0.6, 2),
            (0.7, 2),
        ] {
            let mut total = 0.0;
            for (cited, linked) in &kept {
                let top = cited.first().map(|c: &(String, f32)| c.1).unwrap_or(0.0);
                let chosen = cited
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| *i < min || c.1 >= ratio * top)
                    .map(|(_, c)| c.0.as_str());
                total += precision(chosen, linked);
            }
            println!(
                "  cut at {ratio} of the best, at least {min}: {:.3}",
                total / kept.len().max(1) as f64
            );
        }
        let ranks: Vec<String> = at_rank
            .iter()
            .map(|(hit, n)| format!("{:.2}/{n}", *hit as f64 / (*n).max(1) as f64))
            .collect();
        println!("  precision at each rank: {}", ranks.join(" "));
    }
    times.sort_by(f64::total_cmp);
    old_times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Result {
        notes: counted,
        precision: ours / counted.max(1) as f64,
        baseline: theirs / counted.max(1) as f64,
        terms: old / counted.max(1) as f64,
        terms_p50_ms: old_times.get(old_times.len() / 2).copied().unwrap_or(0.0),
        p50_ms: pct(0.5),
        p95_ms: pct(0.95),
    }
}

/// The earlier selection, kept here as a reference: eight key terms by tf·idf over the text
/// with embeds expanded, five search hits (with snippets) per term, notes sharing the most
/// terms first, ten at most.
fn key_term_notes(index: &VaultIndex, rel: &str, text: &str) -> Vec<String> {
    let Ok(terms) = index.key_terms(text, 8, Some(rel)) else {
        return Vec::new();
    };
    let mut by_note: HashMap<String, (usize, f32)> = HashMap::new();
    for (term, _) in &terms {
        for hit in index.search(term, 5, Some(rel)).unwrap_or_default() {
            let e = by_note.entry(hit.path).or_default();
            e.0 += 1;
            e.1 += hit.score;
        }
    }
    let mut notes: Vec<(String, (usize, f32))> = by_note.into_iter().collect();
    notes.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.total_cmp(&a.1.1)).then(a.0.cmp(&b.0)));
    notes.into_iter().take(10).map(|(p, _)| p).collect()
}

fn precision<'a>(cited: impl Iterator<Item = &'a str>, linked: &HashSet<String>) -> f64 {
    let cited: Vec<&str> = cited.collect();
    if cited.is_empty() {
        return 0.0;
    }
    cited.iter().filter(|c| linked.contains(**c)).count() as f64 / cited.len() as f64
}

/// Copies the Markdown notes under `dir` with wikilinks made plain text.
fn copy_plain(root: &Path, dir: &Path, out: &Path, notes: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.is_dir() {
            copy_plain(root, &path, out, notes);
            continue;
        }
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap();
        let target = out.join(&rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, unlink(&text)).unwrap();
        notes.push((rel, text));
    }
}

/// `[[Target#Heading|shown]]` → `shown`, `[[Target]]` → `Target`, `[[#Heading]]` → `Heading`;
/// `![[embeds]]` stay.
fn unlink(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("[[") {
        let embed = rest[..at].ends_with('!');
        let Some(len) = rest[at + 2..].find("]]") else {
            break;
        };
        let inner = &rest[at + 2..at + 2 + len];
        out.push_str(&rest[..at]);
        if embed || inner.contains('\n') {
            out.push_str(&rest[at..at + 4 + len]);
        } else {
            let (target, shown) = match inner.split_once('|') {
                Some((t, s)) => (t, Some(s)),
                None => (inner, None),
            };
            let shown = shown
                .map(str::to_string)
                .unwrap_or_else(|| match target.split_once('#') {
                    Some(("", h)) => h.to_string(),
                    Some((t, _)) => t.rsplit('/').next().unwrap_or(t).to_string(),
                    None => target.rsplit('/').next().unwrap_or(target).to_string(),
                });
            out.push_str(&shown);
        }
        rest = &rest[at + 4 + len..];
    }
    out.push_str(rest);
    out
}

/// Each note's neighbours in the real vault: the notes it links to and that link to it.
fn links(notes: &[(String, String)]) -> HashMap<String, HashSet<String>> {
    let mut by_stem: HashMap<String, Vec<&str>> = HashMap::new();
    let mut by_path: HashMap<String, &str> = HashMap::new();
    for (rel, text) in notes {
        let without = rel.trim_end_matches(".md");
        by_path.insert(without.to_lowercase(), rel);
        let stem = without.rsplit('/').next().unwrap().to_lowercase();
        by_stem.entry(stem).or_default().push(rel);
        // Links may name a note by an alias (renamed notes keep their old names as aliases,
        // often as old paths), as scholia and Obsidian Publish resolve them.
        for alias in parse(text, "").aliases {
            let alias = alias.trim().to_lowercase();
            by_path.entry(alias.clone()).or_insert(rel);
            let last = alias.rsplit('/').next().unwrap_or(&alias).to_string();
            by_stem.entry(last).or_default().push(rel);
        }
    }
    let mut graph: HashMap<String, HashSet<String>> = HashMap::new();
    for (rel, text) in notes {
        for link in parse(text, "")
            .links
            .iter()
            .filter(|l| !l.embed && !l.target.is_empty())
        {
            let t = link.target.trim().trim_end_matches(".md").to_lowercase();
            let found = by_path.get(&t).copied().or_else(|| {
                by_stem
                    .get(t.rsplit('/').next().unwrap())
                    .and_then(|v| v.first().copied())
            });
            if let Some(other) = found.filter(|o| *o != rel) {
                graph.entry(rel.clone()).or_default().insert(other.to_string());
                graph.entry(other.to_string()).or_default().insert(rel.clone());
            }
        }
    }
    graph
}

/// tf·idf vectors over every word of the notes' plain text, compared by cosine.
struct Baseline {
    vectors: HashMap<String, HashMap<String, f64>>,
}

impl Baseline {
    fn new(notes: &HashMap<&str, String>) -> Baseline {
        let tf: HashMap<String, HashMap<String, f64>> = notes
            .iter()
            .map(|(rel, text)| {
                let mut counts = HashMap::new();
                for t in tokenizer::tokens(&parse(text, "").plain_text) {
                    *counts.entry(t).or_insert(0.0) += 1.0;
                }
                (rel.to_string(), counts)
            })
            .collect();
        let mut df: HashMap<&str, f64> = HashMap::new();
        for counts in tf.values() {
            for t in counts.keys() {
                *df.entry(t.as_str()).or_insert(0.0) += 1.0;
            }
        }
        let n = tf.len() as f64;
        let vectors = tf
            .iter()
            .map(|(rel, counts)| {
                let mut v: HashMap<String, f64> = counts
                    .iter()
                    .map(|(t, c)| (t.clone(), c * (n / df[t.as_str()]).ln()))
                    .collect();
                let norm = v.values().map(|x| x * x).sum::<f64>().sqrt().max(f64::EPSILON);
                v.values_mut().for_each(|x| *x /= norm);
                (rel.clone(), v)
            })
            .collect();
        Baseline { vectors }
    }

    fn top(&self, rel: &str, k: usize) -> Vec<&str> {
        let me = &self.vectors[rel];
        let mut scored: Vec<(f64, &str)> = self
            .vectors
            .iter()
            .filter(|(other, _)| other.as_str() != rel)
            .map(|(other, v)| {
                (
                    me.iter().map(|(t, x)| x * v.get(t).unwrap_or(&0.0)).sum(),
                    other.as_str(),
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(k).map(|(_, r)| r).collect()
    }
}
