//! Moves of notes and folders on vaults of random links (wikilinks and Markdown links, by
//! name, path and relative path), with a failure injected at a random step: afterwards the
//! vault is exactly as it was or exactly as the move without failure leaves it, and there every
//! link that led to a note leads to the same note where it now is.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::fixture::{Fixture, vault};
use scholia_vault::change::FailAt;

const NOTES: &[&str] = &["A.md", "B b.md", "Folder/C.md", "Folder/Sub/D.md", "Other/E.md"];

/// Every file of the vault with its bytes (hidden ones too: nothing may be left behind).
fn state(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// A link from `from` to `to` in one of the forms vaults write.
fn link(from: &str, to: &str, form: usize) -> String {
    let stem = scholia_vault::stem(to);
    let without = to.trim_end_matches(".md");
    let encoded = scholia_vault::mdlink::render(to.rsplit('/').next().unwrap(), false);
    match form % 7 {
        0 => format!("[[{stem}]]"),
        1 => format!("[[{without}|shown]]"),
        2 => format!("![[{stem}#Part]]"),
        3 => format!("[text]({encoded})"),
        4 => format!(
            "[text]({})",
            scholia_vault::mdlink::render(&scholia_vault::mdlink::relative(from, to), false)
        ),
        5 => format!("[text](<{}>)", scholia_vault::mdlink::relative(from, to)),
        _ => format!("[text]({}#Part)", scholia_vault::mdlink::render(to, false)),
    }
}

fn note_text(from: &str, links: &[(usize, usize)]) -> String {
    let mut t = format!("# {}\n\n## Part\n\n", scholia_vault::stem(from));
    for (to, form) in links {
        t.push_str(&format!("See {} here.\n", link(from, NOTES[*to], *form)));
    }
    t
}

/// Where each note's links lead, as the index resolves them: (note, link, target).
fn resolved(f: &Fixture) -> Vec<(String, String, Option<String>)> {
    let searcher = f.index.searcher();
    let mut r = crate::refs::Resolver::new(&f.index, &searcher);
    let mut out = Vec::new();
    let mut notes: Vec<String> = f.index.stamps().unwrap().into_keys().collect();
    notes.sort();
    for rel in notes {
        let text = std::fs::read_to_string(f.root().join(&rel)).unwrap();
        for l in scholia_vault::parse::links(&text) {
            out.push((rel.clone(), text[l.range.clone()].to_string(), r.target(&l, &rel)));
        }
    }
    // In each note's order of links.
    out
}

fn moving(f: &Fixture, op: usize, faults: &dyn Faults) -> Result<Moved, Error> {
    match op {
        0 => move_folder(&f.index, "Folder", "Archive/Kept", faults),
        n => {
            let from = NOTES[n % NOTES.len()];
            let to = ["Z.md", "New place/A2.md", "Folder/Sub/Deeper/Q r.md", "Other/Y.md"][n % 4];
            let note = scholia_vault::NotePath {
                rel: from.to_string(),
                abs: f.root().canonicalize().unwrap().join(from),
            };
            move_one(&f.index, &note, to, faults)
        }
    }
}

/// Each note's links (to which note, in which form), the move, the step that fails, whether
/// the process dies there.
type MoveCase = (Vec<Vec<(usize, usize)>>, usize, Option<usize>, bool);

fn case() -> impl Strategy<Value = MoveCase> {
    (
        prop::collection::vec(prop::collection::vec((0..NOTES.len(), 0usize..7), 0..4), NOTES.len()),
        0usize..9,
        prop::option::of(0usize..16),
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn a_move_is_all_or_nothing_and_every_link_still_leads_home((links, op, fail, panic) in case()) {
        let files: Vec<(&str, String)> = NOTES.iter().zip(&links).map(|(n, l)| (*n, note_text(n, l))).collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        // The move made whole, to compare with.
        let clean = vault(&refs);
        let before_links = resolved(&clean);
        let expected = match moving(&clean, op, &NoFaults) {
            Ok(m) => m,
            // Refused before anything was touched (a name another note has): nothing to check.
            Err(_) => return Ok(()),
        };
        let after = state(&clean.root());
        clean.index.sync(&mut |_| {}).unwrap();
        // Every link that led to a note leads to the same note, where it now is.
        let moved_to = |p: &str| -> String {
            if expected.notes_moved == 1 {
                if p == expected.from { expected.to.clone() } else { p.to_string() }
            } else if let Some(rest) = p.strip_prefix(&format!("{}/", expected.from)) {
                format!("{}/{rest}", expected.to)
            } else {
                p.to_string()
            }
        };
        let mut now: BTreeMap<(String, usize), Option<String>> = BTreeMap::new();
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for (rel, _, t) in resolved(&clean) {
            let n = count.entry(rel.clone()).or_default();
            now.insert((rel, *n), t);
            *n += 1;
        }
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (rel, written, target) in &before_links {
            let n = seen.entry(rel.clone()).or_default();
            let at = (moved_to(rel), *n);
            *n += 1;
            if let Some(t) = target {
                prop_assert_eq!(now.get(&at).cloned().flatten(), Some(moved_to(t)), "{} in {}", written, rel);
            }
        }

        // The same move with a failure at a step: all or nothing.
        let faulty = vault(&refs);
        let before = state(&faulty.root());
        let faults = FailAt::new(fail, panic);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| moving(&faulty, op, &faults)));
        match outcome {
            Ok(Ok(_)) => prop_assert_eq!(state(&faulty.root()), after),
            Ok(Err(_)) => prop_assert_eq!(state(&faulty.root()), before),
            Err(_) => {
                scholia_vault::change::recover(&faulty.root().canonicalize().unwrap());
                prop_assert_eq!(state(&faulty.root()), before);
            }
        }
    }
}
