//! References, renames and link problems on a small vault on disk.

use std::collections::HashMap;

use super::*;
use crate::VaultIndex;
use crate::problems::Problem;

use crate::fixture::{Fixture, vault};

/// Texts from a map (an editor's buffers), else the index's.
struct Buffers<'a>(&'a VaultIndex, HashMap<String, String>);

impl Texts for Buffers<'_> {
    fn read(&self, rel: &str) -> Result<String, String> {
        self.1.get(rel).cloned().map_or_else(|| self.0.note_text_whole(rel), Ok)
    }
    fn open(&self) -> Vec<String> {
        self.1.keys().cloned().collect()
    }
}

const VAULT: &[(&str, &str)] = &[
    (
        "Koji.md",
        "---\naliases: [Aspergillus]\n---\n# Koji\n\n## Growing\nWarm rice. ^warm\n",
    ),
    (
        "Miso.md",
        "# Miso\n\nMade with [[Koji]] and [[Koji#Growing|grown koji]].\n\n![[Koji]] and [[Aspergillus]].\n",
    ),
    (
        "Sake/Brewing.md",
        "# Brewing\n\nStarts with [[Sake/../Koji]]? No: [[Koji#^warm]] and [[Koji.md]].\n",
    ),
    (
        "Notes/Other.md",
        "# Other\n\n```\n[[Koji]] in code is no link\n```\n[[Nowhere]] [[Koji#Missing]]\n",
    ),
];

fn refs(f: &Fixture, anchor: Anchor) -> Vec<(String, Vec<String>)> {
    f.index
        .references(&anchor, &IndexTexts(&f.index))
        .unwrap()
        .into_iter()
        .map(|n| {
            (
                n.rel.clone(),
                n.links.iter().map(|l| n.text[l.range.clone()].to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn references_of_notes_headings_and_blocks() {
    let f = vault(VAULT);
    assert_eq!(
        refs(&f, Anchor::Note("Koji.md".into())),
        vec![
            (
                "Miso.md".to_string(),
                vec![
                    "[[Koji]]".to_string(),
                    "[[Koji#Growing|grown koji]]".into(),
                    "![[Koji]]".into(),
                    "[[Aspergillus]]".into()
                ]
            ),
            ("Notes/Other.md".to_string(), vec!["[[Koji#Missing]]".to_string()]),
            (
                "Sake/Brewing.md".to_string(),
                vec!["[[Koji#^warm]]".to_string(), "[[Koji.md]]".into()]
            ),
        ]
    );
    assert_eq!(
        refs(
            &f,
            Anchor::Heading {
                rel: "Koji.md".into(),
                heading: "growing".into()
            }
        ),
        vec![("Miso.md".to_string(), vec!["[[Koji#Growing|grown koji]]".to_string()])]
    );
    assert_eq!(
        refs(
            &f,
            Anchor::Block {
                rel: "Koji.md".into(),
                id: "warm".into()
            }
        ),
        vec![("Sake/Brewing.md".to_string(), vec!["[[Koji#^warm]]".to_string()])]
    );
    assert_eq!(f.index.backlink_count("Koji.md").unwrap(), 3);
}

#[test]
fn an_open_buffer_counts_before_the_index_sees_it() {
    let f = vault(VAULT);
    let texts = Buffers(
        &f.index,
        HashMap::from([("New.md".to_string(), "fresh [[koji]]".to_string())]),
    );
    let found = f.index.references(&Anchor::Note("Koji.md".into()), &texts).unwrap();
    assert!(found.iter().any(|n| n.rel == "New.md"), "{found:?}");
}

#[test]
fn renaming_a_note_rewrites_every_form_of_link() {
    let f = vault(VAULT);
    let plan = f
        .index
        .plan_rename("Koji.md", "Ferments/Rice koji.md", "newName", &IndexTexts(&f.index))
        .unwrap();
    let after: HashMap<String, String> = plan.edits.iter().map(|e| (e.rel.clone(), e.applied())).collect();
    assert_eq!(
        after["Miso.md"],
        "# Miso\n\nMade with [[Rice koji]] and [[Rice koji#Growing|grown koji]].\n\n![[Rice koji]] and [[Aspergillus]].\n"
    );
    assert_eq!(
        after["Sake/Brewing.md"],
        "# Brewing\n\nStarts with [[Sake/../Koji]]? No: [[Rice koji#^warm]] and [[Rice koji.md]].\n"
    );
    assert_eq!(
        after["Notes/Other.md"],
        "# Other\n\n```\n[[Koji]] in code is no link\n```\n[[Nowhere]] [[Rice koji#Missing]]\n"
    );
    assert_eq!(plan.links_rewritten(), 6);
}

/// A note too large to read whole (over `change::MAX_BYTES`) has only its first part's links
/// indexed and is never rewritten: one that names the note past that part may link it there,
/// so it is unread and the rename is refused with it named; one that does not name the note is
/// no hindrance.
#[test]
fn a_note_too_large_to_rewrite_that_names_the_note_holds_back_its_rename() {
    let filler = "Plain words.\n".repeat(scholia_vault::change::MAX_BYTES as usize / 13 + 10);
    let log = format!("# Log\n\n{filler}\nThen [[Koji]].\n");
    let f = vault(&[
        ("Koji.md", "# Koji\n"),
        ("Rice.md", "# Rice\n"),
        ("Log.md", &log),
        ("Miso.md", "Made with [[Koji]].\n"),
    ]);
    let t = IndexTexts(&f.index);
    let plan = f.index.plan_rename("Koji.md", "Rice koji.md", "newName", &t).unwrap();
    assert_eq!(plan.unread.len(), 1, "{:?}", plan.unread);
    assert_eq!(plan.unread[0].0, "Log.md");
    assert!(plan.unread[0].1.contains("64 MB"), "{}", plan.unread[0].1);
    assert!(plan.edits.iter().any(|e| e.rel == "Miso.md"));
    let plan = f.index.plan_rename("Rice.md", "Grain.md", "newName", &t).unwrap();
    assert!(plan.unread.is_empty(), "Rice is named nowhere in it: {:?}", plan.unread);
    // A server confined to other folders counts it among the notes outside, never names it.
    std::fs::create_dir_all(f.root().join("Kitchen")).unwrap();
    f.index
        .set_scope(crate::Scope::new(&f.root(), &["Kitchen".into()]).unwrap());
    assert_eq!(f.index.linking_from_outside("Koji.md").unwrap(), ["Log.md", "Miso.md"]);
    let plan = f.index.plan_rename("Koji.md", "Rice koji.md", "newName", &t).unwrap();
    assert!(!plan.unread.iter().any(|(p, _)| p == "Log.md"), "{:?}", plan.unread);
}

#[test]
fn a_rename_that_collides_is_refused() {
    let f = vault(VAULT);
    let t = IndexTexts(&f.index);
    let err = f.index.plan_rename("Koji.md", "Miso.md", "newName", &t).unwrap_err();
    assert_eq!(
        err.to_string(),
        "newName: `Miso.md` already exists; choose another name"
    );
    let err = f
        .index
        .plan_rename("Koji.md", "Archive/Brewing.md", "newName", &t)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`Brewing` is already the name of `Sake/Brewing.md`"),
        "{err}"
    );
    // Only the case changes: the same file.
    assert!(f.index.plan_rename("Koji.md", "koji.md", "newName", &t).is_ok());
}

#[test]
fn renaming_a_heading_rewrites_the_line_and_its_links() {
    let f = vault(&[
        ("Koji.md", "# Koji\n\n## Growing ##\nSee [[#Growing]].\n"),
        ("Miso.md", "[[Koji#growing|g]] [[Koji#Other]] [[Koji]]\n"),
    ]);
    let edits = f
        .index
        .plan_heading_rename("Koji.md", "Growing", "Growing koji", &IndexTexts(&f.index))
        .unwrap();
    let after: HashMap<String, String> = edits.iter().map(|e| (e.rel.clone(), e.applied())).collect();
    assert_eq!(
        after["Koji.md"],
        "# Koji\n\n## Growing koji ##\nSee [[#Growing koji]].\n"
    );
    assert_eq!(after["Miso.md"], "[[Koji#Growing koji|g]] [[Koji#Other]] [[Koji]]\n");
    let err = f
        .index
        .plan_heading_rename("Koji.md", "Growing", "a|b", &IndexTexts(&f.index))
        .unwrap_err();
    assert!(err.to_string().starts_with("newName: `a|b` holds `|`"), "{err}");
}

#[test]
fn link_problems_one_per_link() {
    let f = vault(&[
        ("Koji.md", "# Koji\n\n## Growing\n"),
        ("A/Dup.md", "# Dup\n"),
        ("B/Dup.md", "# Dup\n"),
        ("img/photo.png", "png"),
    ]);
    let text = "[[Koji]] [[Nowhere]] [[Koji#Growing]] [[Koji#Nope]] [[#Here]] [[#Missing]]\n[[Dup]] [[A/Dup]] ![[photo.png]] ![[gone.png]] [[Koji#^nope]]\n\n## Here\n";
    let problems: Vec<(String, &str)> = f
        .index
        .link_problems("Note.md", text)
        .unwrap()
        .iter()
        .map(|p| (text[p.range.clone()].to_string(), p.problem.code()))
        .collect();
    assert_eq!(
        problems,
        vec![
            ("[[Nowhere]]".to_string(), "unresolved-link"),
            ("[[Koji#Nope]]".to_string(), "unresolved-heading"),
            ("[[#Missing]]".to_string(), "unresolved-heading"),
            ("[[Dup]]".to_string(), "ambiguous-link"),
            ("![[gone.png]]".to_string(), "missing-embed"),
            ("[[Koji#^nope]]".to_string(), "unresolved-block"),
        ]
    );
    let p = f.index.link_problems("Note.md", "[[Dup]]").unwrap();
    assert!(
        matches!(&p[0].problem, Problem::Ambiguous { notes, .. } if notes == &["A/Dup.md".to_string(), "B/Dup.md".to_string()]),
        "{:?}",
        p[0].problem.message()
    );
}

/// A block link names what an embed of it shows (`section::block`): a marker ending a line
/// after a space, in the note linked or in the note itself. A marker glued to a word, or a
/// longer one the id begins, was taken for it (the note's own by its plain text).
#[test]
fn block_links_name_the_blocks_embeds_show() {
    let koji = "# Koji\n\nSpores on rice. ^spores\n\nGlued x^glued\n\n- an item ^item\n\n> a quote\n\n^quote\n";
    let f = vault(&[("Koji.md", koji)]);
    let text = "Own line. ^mine\n\n[[Koji#^spores]] [[Koji#^spore]] [[Koji#^glued]] [[Koji#^item]] [[Koji#^quote]]\n[[#^mine]] [[#^min]] [[Koji#^]]\n";
    let problems: Vec<String> = f
        .index
        .link_problems("Note.md", text)
        .unwrap()
        .iter()
        .filter(|p| p.problem.code() == "unresolved-block")
        .map(|p| text[p.range.clone()].to_string())
        .collect();
    // `[[Koji#^]]` names no block: it opens Koji, as in Obsidian.
    assert_eq!(problems, ["[[Koji#^spore]]", "[[Koji#^glued]]", "[[#^min]]"]);
}

mod rename_property {
    //! After a rename, every link that named the note by file name or path names the new
    //! one, and nothing else in any note changed (a reference resolver, not the index, judges).
    use super::*;
    use proptest::prelude::*;

    const NOTES: &[&str] = &[
        "Alpha.md",
        "Beta gamma.md",
        "Folder/Delta.md",
        "Folder/Sub/Epsilon.md",
        "Über.md",
    ];
    const NEW: &[&str] = &["Renamed", "Neu Ü", "Other/Moved", "Folder/Sub/Deep one"];

    fn stem_of(rel: &str) -> String {
        scholia_vault::stem(rel).to_string()
    }

    /// The note `target` names from `from`, as Obsidian resolves it, among `notes`.
    fn resolve(notes: &[String], target: &str, from: &str) -> Option<String> {
        let key = crate::link_key(target)?;
        let dir = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        let mut found: Vec<&String> = notes
            .iter()
            .filter(|n| {
                let without = n.rsplit_once('.').map(|(p, _)| p).unwrap_or(n).to_lowercase();
                without == key || stem_of(n).to_lowercase() == key || (n.as_str() == "Alpha.md" && key == "first")
            })
            .collect();
        found.sort_by_key(|n| {
            let without = n.rsplit_once('.').map(|(p, _)| p).unwrap_or(n).to_lowercase();
            (without != key, dir(n) != dir(from), n.len(), n.to_string())
        });
        found.first().map(|n| n.to_string())
    }

    fn link_form() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec![
            "Alpha",
            "alpha",
            "Alpha.md",
            "First",
            "Beta gamma",
            "Folder/Delta",
            "Delta",
            "Folder/Sub/Epsilon",
            "Epsilon",
            "Über",
            "über",
            "Nowhere",
        ]);
        let shape = prop::sample::select(vec![
            "[[{}]]",
            "[[{}|shown]]",
            "[[{}#Part]]",
            "![[{}]]",
            "[[{}#^blk]]",
            "[[{}#A#B|x]]",
            "[[ {} ]]",
        ]);
        (name, shape).prop_map(|(n, s)| s.replace("{}", n))
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => link_form(),
            2 => Just("words and more words".to_string()),
            1 => link_form().prop_map(|l| format!("\n```\ncode {l}\n```\n")),
            1 => link_form().prop_map(|l| format!("`{l}`")),
            1 => Just("\n## Part\n".to_string()),
            1 => Just("\n\n".to_string()),
            1 => link_form().prop_map(|l| format!("\n| a | {} |\n|---|---|\n", l.replace('|', "\\|"))),
        ]
    }

    fn note_text() -> impl Strategy<Value = String> {
        prop::collection::vec(segment(), 0..12).prop_map(|parts| format!("# Note\n\n{}\n", parts.join(" ")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn a_rename_rewrites_exactly_the_links_to_the_note(
            texts in prop::collection::vec(note_text(), NOTES.len()),
            from in 0..NOTES.len(),
            new in prop::sample::select(NEW.to_vec()),
        ) {
            let mut files: Vec<(&str, String)> = NOTES.iter().copied().zip(texts.iter().cloned()).collect();
            files[0].1 = format!("---\naliases: [First]\n---\n{}", files[0].1);
            let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
            let f = vault(&refs);
            let from = NOTES[from];
            let to = renamed_path(from, new, "newName").unwrap();
            let plan = match f.index.plan_rename(from, &to, "newName", &IndexTexts(&f.index)) {
                Ok(p) => p,
                // A name another note has: refused, nothing to check.
                Err(RenameError::NameTaken { .. }) | Err(RenameError::Exists { .. }) => return Ok(()),
                Err(e) => panic!("{e}"),
            };
            let before_notes: Vec<String> = NOTES.iter().map(|s| s.to_string()).collect();
            let after_notes: Vec<String> = NOTES.iter().map(|s| if *s == from { to.clone() } else { s.to_string() }).collect();
            for (rel, text) in &files {
                let after = plan.edits.iter().find(|e| e.rel == *rel).map(|e| e.applied()).unwrap_or_else(|| text.clone());
                let new_rel = if *rel == from { to.as_str() } else { rel };
                let (old_links, new_links) = (parse::parse(text, "").links, parse::parse(&after, "").links);
                prop_assert_eq!(old_links.len(), new_links.len(), "{} -> {}", text, after);
                let mut kept = String::new();
                let mut kept_after = String::new();
                let (mut at, mut at_after) = (0, 0);
                for (o, n) in old_links.iter().zip(&new_links) {
                    let was = resolve(&before_notes, &o.target, rel);
                    let is = resolve(&after_notes, &n.target, new_rel);
                    let by_name = crate::link_key(&o.target).is_some_and(|k| k != "first");
                    if was.as_deref() == Some(from) && by_name {
                        prop_assert_eq!(is.as_deref(), Some(to.as_str()), "{} in {}", &after[n.range.clone()], after);
                    } else {
                        prop_assert_eq!(&text[o.range.clone()], &after[n.range.clone()]);
                    }
                    prop_assert_eq!((&o.heading, &o.alias, o.embed), (&n.heading, &n.alias, n.embed));
                    kept.push_str(&text[at..o.range.start]);
                    kept_after.push_str(&after[at_after..n.range.start]);
                    at = o.range.end;
                    at_after = n.range.end;
                }
                kept.push_str(&text[at..]);
                kept_after.push_str(&after[at_after..]);
                // Outside the links, not a byte changed (the title of the renamed note aside:
                // the language server renames it, not the plan).
                prop_assert_eq!(kept, kept_after);
            }
        }
    }
}
