//! `--graded`: what a reader made of entries offline research showed whole, and how they are
//! shown now. `graded.json` holds 243 entries of obsidian-help en, de, ja, fr, es, it, zh and
//! pt-br sections (each language a vault of its own, its links all there), each graded by one
//! reader from the note's opening, the entry's words and its passages, before its figures were
//! read: 2 glad to learn of it, 1 of some use, 0 found by chance words. The "chosen" set (en,
//! de) is the one the rules for chance words were chosen on; "checked" (en, de, ja) was graded
//! after that, to check them, and "checked2" (fr, es) after they were written, drawn from the
//! entries shown whole without them. "checked3" (en, it, zh, pt-br: 12 each, one a note, notes
//! not graded before) was drawn from the entries those rules left whole, to choose and check
//! the bound on notes many link (`offline/brief.rs`, `KNOWN_COSINE`).
//!
//! An entry a reader graded 0 is better on the brief line; one graded 2 is better whole. The
//! figure a change should raise is the mean grade of the entries still whole. `--model DIR`
//! (or `SCHOLIA_EMBED_TEST_MODEL`) embeds each language's notes first.

use std::collections::BTreeMap;
use std::path::Path;

use super::hidden::{indexed, read_notes};

/// One graded entry: the set, the language, the researched note, the note cited, the grade.
struct Graded {
    set: String,
    lang: String,
    note: String,
    cited: String,
    grade: u8,
}

/// How a graded entry is cited now.
#[derive(Clone, Copy, PartialEq)]
enum Shown {
    Whole,
    /// Named on a line with what found it: the brief line, or the hubs line.
    Brief,
    Gone,
}

pub fn graded(root: &Path) {
    let all: Vec<serde_json::Value> = serde_json::from_str(include_str!("graded.json")).unwrap();
    let graded: Vec<Graded> = all
        .iter()
        .map(|g| Graded {
            set: g["set"].as_str().unwrap().to_string(),
            lang: g["lang"].as_str().unwrap().to_string(),
            note: g["note"].as_str().unwrap().to_string(),
            cited: g["cited"].as_str().unwrap().to_string(),
            grade: g["grade"].as_u64().unwrap() as u8,
        })
        .collect();
    let mut langs: Vec<&str> = graded.iter().map(|g| g.lang.as_str()).collect();
    langs.sort();
    langs.dedup();
    let mut shown: Vec<Shown> = vec![Shown::Gone; graded.len()];
    for lang in langs {
        let tmp = tempfile::tempdir().unwrap();
        let dir = root.join(lang);
        let mut notes = Vec::new();
        read_notes(&dir, &dir, &mut notes);
        let (_, index) = indexed(tmp.path(), notes.iter().map(|(r, t)| (r, t)));
        let texts: BTreeMap<&str, &str> = notes.iter().map(|(r, t)| (r.as_str(), t.as_str())).collect();
        let mut researched: BTreeMap<&str, Vec<scholia::research::offline::RelatedNote>> = BTreeMap::new();
        for (i, g) in graded.iter().enumerate().filter(|(_, g)| g.lang == lang) {
            let cited = researched.entry(g.note.as_str()).or_insert_with(|| {
                let text = texts
                    .get(g.note.as_str())
                    .unwrap_or_else(|| panic!("{lang}/{} is gone", g.note));
                scholia::research::offline::related_with_topics(&index, &g.note, text.to_string())
                    .unwrap()
                    .1
            });
            shown[i] = match cited.iter().find(|c| c.path == g.cited && !c.links_back) {
                Some(c) if c.brief || matches!(c.tie, scholia::index::Tie::Popular { .. }) => Shown::Brief,
                Some(_) => Shown::Whole,
                None => Shown::Gone,
            };
        }
    }
    println!("a reader's grades of entries shown whole (2 glad, 1 of some use, 0 chance words), as shown now");
    println!(
        "{:<8} {:<5} {:>7} {:>6} {:>11} {:>11} {:>11} {:>6}",
        "set", "lang", "graded", "whole", "mean whole", "was whole", "brief 0/1/2", "gone"
    );
    let mut rows: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, g) in graded.iter().enumerate() {
        rows.entry((g.set.clone(), g.lang.clone())).or_default().push(i);
        rows.entry((g.set.clone(), "all".into())).or_default().push(i);
    }
    for ((set, lang), at) in rows.iter().rev() {
        let mean = |of: &[usize]| of.iter().map(|i| graded[*i].grade as f64).sum::<f64>() / of.len().max(1) as f64;
        let whole: Vec<usize> = at.iter().copied().filter(|i| shown[*i] == Shown::Whole).collect();
        let brief = |grade: u8| {
            at.iter()
                .filter(|i| shown[**i] == Shown::Brief && graded[**i].grade == grade)
                .count()
        };
        println!(
            "{:<8} {:<5} {:>7} {:>6} {:>11.2} {:>11.2} {:>11} {:>6}",
            set,
            lang,
            at.len(),
            whole.len(),
            mean(&whole),
            mean(at),
            format!("{}/{}/{}", brief(0), brief(1), brief(2)),
            at.iter().filter(|i| shown[**i] == Shown::Gone).count()
        );
    }
}
