use super::*;

fn part(text: &str) -> Option<Part> {
    let section = crate::section::find(text, "Research", 2).unwrap()?;
    locate(text, &section)
}

const STAMP: &str = "<!-- scholia:research run=r at=d depth=offline model=none sources=1 above=0 words=0 -->";

#[test]
fn the_part_runs_from_its_marker_to_its_end_line() {
    let text = format!("# N\n\n## Research\n\nmine\n\n{STAMP}\nfound\n\n{END_MARKER}\n\nmine too\n");
    let p = part(&text).unwrap();
    assert!(p.closed);
    assert_eq!(&text[p.range.clone()], format!("{STAMP}\nfound\n\n{END_MARKER}\n"));
    assert_eq!(&text[p.content.clone()], "found\n\n");
    assert_eq!(p.line, 6);
}

#[test]
fn markers_in_code_quotes_or_lists_are_text() {
    for text in [
        format!("## Research\n\n```\n{STAMP}\n```\n"),
        format!("## Research\n\n> {STAMP}\n"),
        format!("## Research\n\n- {STAMP}\n"),
        format!("## Research\n\n    {STAMP}\n"),
    ] {
        assert_eq!(part(&text), None, "{text}");
    }
    // An end line inside code does not end the part.
    let text = format!("## Research\n\n{STAMP}\n```\n{END_MARKER}\n```\nafter\n");
    let p = part(&text).unwrap();
    assert!(!p.closed && text[p.range].ends_with("after\n"));
}

#[test]
fn a_part_without_an_end_line_stops_at_the_first_question() {
    let text = format!(
        "## Research\r\n\r\n{STAMP}\r\nold\r\n\r\n### Topic\r\n\r\nx\r\n\r\n### Q\r\n\r\n{QUESTION_MARKER}\r\na\r\n\r\n## Next\r\n"
    );
    let p = part(&text).unwrap();
    assert!(!p.closed);
    assert!(text[p.range.clone()].ends_with("x\r\n\r\n"), "{:?}", &text[p.range]);
}

#[test]
fn words_survive_renames_and_reformatting_but_not_edits() {
    let written = "- [[Old name]] — sync\n  > Sync keeps *every* device.\n- [b](Some%20note.md)\n";
    let same = [
        "- [[New name|x]] — sync\n  > Sync keeps *every* device.\n- [b](Other.md)\n",
        "* [[Old name]] — sync\r\n  > Sync keeps _every_\r\n  > device.\r\n- [b](Some%20note.md)\r\n",
    ];
    for s in same {
        assert_eq!(words_of(s), words_of(written), "{s}");
    }
    let edited = [
        "- [[Old name]] — sync\n  > Sync keeps *every* device.\n  my own remark\n- [b](Some%20note.md)\n",
        "- [[Old name]] — sync\n- [b](Some%20note.md)\n",
    ];
    for s in edited {
        assert_ne!(words_of(s), words_of(written), "{s}");
    }
    // A bracket never closed reads as text.
    assert_ne!(words_of("[[open and more"), words_of(""));
}

#[test]
fn a_stamped_section_knows_when_the_note_changed() {
    use crate::{SectionEdit, contain::Links};
    let stamp = ResearchStamp {
        run: "r1".into(),
        at: "2026-11-25T10:04Z".into(),
        depth: "shallow".into(),
        model: "m".into(),
        sources: 2,
        above: String::new(),
        words: String::new(),
    };
    let edit = SectionEdit::research("Findings.", &Links::none())
        .unwrap()
        .stamped(stamp);
    for note in [
        "# Koji\n\nRice.\n",
        "# Koji\r\n\r\nRice.\r\n\r\n## Research\r\n\r\nold\r\n\r\n## After\r\nx\r\n",
    ] {
        let written = edit.apply(note).unwrap();
        let (found, start) = ResearchStamp::of(&written).unwrap();
        assert_eq!((found.run.as_str(), found.sources), ("r1", 2), "{written:?}");
        assert!(!found.stale(&written, start), "{written:?}");
        assert!(written[start..].contains("Findings."), "{written:?}");
        // Re-running replaces the marker, never stacks a second one.
        let again = edit.apply(&written).unwrap();
        assert_eq!(again.matches("<!-- scholia:research ").count(), 1, "{again:?}");
        // The owner edits the text above: stale; below the section: not.
        let edited = written.replacen("Rice.", "Rice and barley.", 1);
        let (s, at) = ResearchStamp::of(&edited).unwrap();
        assert!(s.stale(&edited, at));
        let below = format!("{written}More after.\n");
        let (s, at) = ResearchStamp::of(&below).unwrap();
        assert!(!s.stale(&below, at));
    }
}

fn research(body: &str) -> crate::SectionEdit {
    crate::SectionEdit::research(body, &crate::contain::Links::none()).unwrap()
}

fn question(heading: &str, body: &str) -> crate::SectionEdit {
    crate::SectionEdit::question(heading, body, &crate::contain::Links::none()).unwrap()
}

/// What research makes of a note the owner wrote under `## Research` themselves: `Ok` with
/// the owner's lines that must still be there, in order, after a first and a second run;
/// or the error's code, the note unchanged.
fn check(note: &str, expected: Result<&[&str], &str>) {
    use scholia_base::Coded;
    let first = research("found first").apply(note);
    match (first, expected) {
        (Ok(once), Ok(kept)) => {
            let twice = research("found second").apply(&once).unwrap();
            for (run, text) in [("first", &once), ("second", &twice)] {
                let mut at = 0;
                for line in kept {
                    let found = text[at..]
                        .find(line)
                        .unwrap_or_else(|| panic!("{run} run lost {line:?}: {text}"));
                    at += found + line.len();
                }
                assert_eq!(text.matches("<!-- scholia:research ").count(), 1, "{text}");
                assert_eq!(text.matches(END_MARKER).count(), 1, "{text}");
            }
            assert!(
                twice.contains("found second") && !twice.contains("found first"),
                "{twice}"
            );
            // The same research again gives the same bytes.
            assert_eq!(research("found second").apply(&twice).unwrap(), twice);
        }
        (Err(e), Err(code)) => assert_eq!(e.code(), code, "{note}: {e}"),
        (got, want) => panic!("{note}: {got:?}, expected {want:?}"),
    }
}

/// The attack: the owner's words under `## Research` were replaced by research (the whole
/// section was scholia's). Now only scholia's part is.
#[test]
fn the_owner_s_words_under_research_stay() {
    // The owner's own section: their text, their subsections, a setext heading.
    check(
        "# N\n\n## Research\n\nMy reading list: Koji.\n",
        Ok(&["## Research\n\nMy reading list: Koji.\n", "found"]),
    );
    check(
        "## Research\n\nintro\n\n### Mine\n\nmine\n\n## After\n\nkeep\n",
        Ok(&["intro", "found", END_MARKER, "### Mine\n\nmine\n", "## After\n\nkeep\n"]),
    );
    check(
        "Research\n--------\n\nsetext body\n\n## Tail\n",
        Ok(&["Research\n--------\n\nsetext body\n", "found", "## Tail"]),
    );
    check(
        "# N\r\n\r\n## Research\r\n\r\nold notes\r\n\r\n## After\r\nx\r\n",
        Ok(&[
            "## Research\r\n\r\nold notes\r\n\r\n",
            "found",
            "\r\n\r\n## After\r\nx\r\n",
        ]),
    );
    // Text the owner writes around scholia's part after it was written.
    let once = research("found").apply("# N\n\ntext\n").unwrap();
    let around = once
        .replace("## Research\n\n", "## Research\n\nAbove it.\n\n")
        .replace(&format!("{END_MARKER}\n"), &format!("{END_MARKER}\n\nBelow it.\n"));
    check(&around, Ok(&["Above it.", "found", END_MARKER, "Below it."]));
}

#[test]
fn an_edited_part_is_not_replaced() {
    let once = research("- [[Koji]] — rice\n  > Koji grows on rice.")
        .apply("# N\n")
        .unwrap();
    // Words the owner adds or removes inside the part: refused, nothing changes.
    for edited in [
        once.replace("Koji grows on rice.", "Koji grows on rice. My remark."),
        once.replace("  > Koji grows on rice.\n", ""),
    ] {
        check(&edited, Err("RESEARCH_EDITED"));
        assert!(replaceable(&edited).is_err());
        let e = research("x").apply(&edited).unwrap_err();
        assert!(e.to_string().contains("(line 5)"), "{e}");
    }
    // A rename rewriting its link, or an editor changing line endings: no edit.
    for same in [
        once.replace("[[Koji]]", "[[Koji (food)|Koji]]"),
        once.replace('\n', "\r\n"),
    ] {
        assert!(replaceable(&same).is_ok());
        assert!(research("y").apply(&same).unwrap().contains("\ny"));
    }
    // A part written before its words were kept is taken as written.
    let old =
        "## Research\n\n<!-- scholia:research run=r at=d depth=offline model=none sources=1 above=0 -->\nold, edited\n";
    assert!(research("z").apply(old).unwrap().contains("\nz\n"));
}

#[test]
fn an_answer_replaces_only_an_answer() {
    use scholia_base::Coded;
    let mine = "## Research\n\n### Why?\n\nbecause I say so\n";
    let e = question("Why?", "an answer").apply(mine).unwrap_err();
    assert_eq!(e.code(), "NOT_SCHOLIAS", "{e}");
    assert!(e.to_string().contains("line 3"), "{e}");
    let ours = question("Why?", "first").apply("# N\n").unwrap();
    let again = question("Why?", "second").apply(&ours).unwrap();
    assert!(again.contains("second") && !again.contains("first"), "{again}");
    // The owner's words after the answer stay when it is asked again; in it, they refuse it.
    let after = format!("{again}\nMy note on it.\n");
    let third = question("Why?", "third").apply(&after).unwrap();
    assert!(
        third.contains("third") && third.ends_with("\nMy note on it.\n"),
        "{third}"
    );
    let inside = third.replace("third", "third, and mine");
    let e = question("Why?", "fourth").apply(&inside).unwrap_err();
    assert_eq!(e.code(), "RESEARCH_EDITED", "{e}");
    assert!(e.to_string().contains("`### Why?` (line 5)"), "{e}");
    // An answer from before its end line was written: replaced whole, as it was.
    let old = "## Research\n\n### Why?\n\n<!-- scholia:question -->\nold answer\n";
    assert_eq!(question("Why?", "new").apply(old).unwrap().matches("answer").count(), 0);
}

/// A sources-only part goes beside the owner's text, never over it, and never over
/// scholia's own research.
#[test]
fn a_sources_only_part_keeps_the_owner_s_text() {
    let fallback = |body: &str| crate::SectionEdit::sources_only(body, &crate::contain::Links::none()).unwrap();
    let owner = "## Research\n\nmine\n";
    let with = fallback("- [[A]]").apply(owner).unwrap();
    assert!(with.starts_with(owner) && with.contains("[[A]]"), "{with}");
    let good = research("useful").apply(owner).unwrap();
    assert_eq!(fallback("- [[B]]").apply(&good).unwrap(), good);
}

mod model {
    //! A model of the section's owner: random owner text around scholia's part, in
    //! subsections of theirs and as question answers, researched again and again with edits
    //! inside the part injected. Every owner line survives every run in its order; an edited
    //! part refuses the run and leaves the note as it was.
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Step {
        Research(String),
        Ask(u8, String),
        /// Owner text appended at the end of the note.
        Owner(String),
        /// Owner text put just above the part's marker line.
        AbovePart(String),
        /// A word typed inside the part.
        EditPart(String),
    }

    fn step() -> impl Strategy<Value = Step> {
        let words = "[a-z]{1,8}( [a-z]{1,8}){0,4}";
        prop_oneof![
            words.prop_map(Step::Research),
            (0u8..3, words).prop_map(|(q, w)| Step::Ask(q, w)),
            words.prop_map(Step::Owner),
            words.prop_map(Step::AbovePart),
            words.prop_map(Step::EditPart),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn owner_lines_survive_every_run(steps in prop::collection::vec(step(), 1..12), start in 0usize..3) {
            let mut text = ["# N\n\nbody\n", "# N\n\n## Research\n\nowner intro\n", "## Research\n\n### Mine\n\nmine\n"][start].to_string();
            // The owner's lines, each unique, in the order they must stay.
            let mut owner: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
            let mut n = 0;
            for s in steps {
                n += 1;
                match s {
                    Step::Research(w) => {
                        let body = format!("finding {n} {w}");
                        match research(&body).apply(&text) {
                            Ok(new) => {
                                prop_assert!(new.contains(&body));
                                text = new;
                            }
                            Err(e) => {
                                prop_assert_eq!(scholia_base::Coded::code(&e), "RESEARCH_EDITED");
                                prop_assert!(replaceable(&text).is_err());
                                // The owner deletes the part, as the error says; research then writes.
                                let p = part(&text).unwrap();
                                text.replace_range(p.range, "");
                                text = research(&body).apply(&text).unwrap();
                            }
                        }
                    }
                    Step::Ask(q, w) => {
                        let heading = format!("Question {q}");
                        if let Ok(new) = question(&heading, &format!("answer {n} {w}")).apply(&text) {
                            text = new;
                        }
                    }
                    Step::Owner(w) => {
                        let line = format!("owner {n} {w}");
                        text.push_str(&format!("\n{line}\n"));
                        owner.push(line);
                    }
                    Step::AbovePart(w) => {
                        if let Some(p) = part(&text) {
                            let line = format!("above {n} {w}");
                            // The owner line goes just above the marker; find where it falls
                            // among the owner's lines so the order to check stays right.
                            let before = owner.iter().take_while(|o| text.find(o.as_str()).is_some_and(|at| at < p.range.start)).count();
                            text.insert_str(p.range.start, &format!("{line}\n\n"));
                            owner.insert(before, line);
                        }
                    }
                    Step::EditPart(w) => {
                        if let Some(p) = part(&text) {
                            text.insert_str(p.content.start, &format!("typed {n} {w}\n"));
                        }
                    }
                }
                let mut at = 0;
                for line in &owner {
                    let found = text[at..].find(line.as_str());
                    prop_assert!(found.is_some(), "lost {:?} in {}", line, text);
                    at += found.unwrap() + line.len();
                }
            }
        }
    }
}

/// The owner's words and scholia's, split: `check_split(note, own, theirs)` once research
/// has written its part into `note`.
#[test]
fn the_owner_s_words_in_research_are_the_owner_s() {
    let check_split = |note: &str, own: &str, theirs: &[&str]| {
        let written = research("scholia found zymurgy").apply(note).unwrap();
        let (got_own, got_research) = split_research(&written).unwrap();
        assert_eq!(got_own, own, "{written}");
        for r in theirs {
            assert!(got_research.contains(r), "{r} not in {got_research}");
        }
        assert!(
            !got_own.contains("zymurgy") && !got_own.contains("scholia:"),
            "{got_own}"
        );
    };
    // Nothing of the owner's in the section: it goes whole, as it always did.
    check_split("# N\n\nbody\n", "# N\n\nbody\n\n", &["## Research", "zymurgy"]);
    // The owner's text and subsection stay the owner's; the part is scholia's.
    check_split(
        "# N\n\nbody\n\n## Research\n\nMy notes on koji.\n\n### Mine\n\nmine\n\n## After\n\nx\n",
        "# N\n\nbody\n\n## Research\n\nMy notes on koji.\n\n\n### Mine\n\nmine\n\n## After\n\nx\n",
        &["zymurgy", END_MARKER],
    );
    // An answer is scholia's from its heading to its end line; the owner's words after it stay.
    let with_answer = question("Why koji?", "because zymurgy")
        .apply("# N\n\n## Research\n\nMine.\n")
        .unwrap()
        + "\nMy reply.\n";
    let (own, research) = split_research(&with_answer).unwrap();
    assert_eq!(own, "# N\n\n## Research\n\nMine.\n\n\nMy reply.\n");
    assert!(
        research.contains("### Why koji?") && research.contains("because zymurgy"),
        "{research}"
    );
    // Nothing in a note without the section, or with two.
    assert_eq!(split_research("# N\n"), None);
    assert_eq!(split_research("## Research\n\na\n\n## Research\n\nb\n"), None);
}

/// A model's answer cannot forge scholia's marker or end lines (which would end a part early
/// and make its rest the owner's, or start a part in an answer): the containment gate refuses
/// raw HTML, comments included.
#[test]
fn an_answer_cannot_forge_a_marker() {
    let none = crate::contain::Links::none();
    for forged in [
        format!("found\n\n{END_MARKER}\n\nmore"),
        format!("found\n\n{ANSWER_END}\n"),
        "found\n\n<!-- scholia:research run=x at=y depth=z model=m sources=1 above=0 words=0 -->\nmore".to_string(),
        "> found\n>\n> <!-- /scholia:research -->".to_string(),
    ] {
        assert!(crate::SectionEdit::research(&forged, &none).is_err(), "{forged}");
        assert!(crate::SectionEdit::question("Q", &forged, &none).is_err(), "{forged}");
    }
}

/// Brackets that never close, a megabyte of them: the fingerprint reads them in one pass
/// (looked for again after each `[[`, the closer cost a scan of the rest each time).
#[test]
fn unclosed_brackets_are_read_once() {
    for hostile in ["[[".repeat(500_000), "](".repeat(500_000), "[[a](".repeat(200_000)] {
        let started = std::time::Instant::now();
        let _ = words_of(&hostile);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    assert_eq!(words_of("[[x"), words_of("x"));
    assert_eq!(words_of("](x"), words_of("x"));
}

/// The owner saves an edit inside scholia's part while a run is writing: the run's edit is
/// made again on what they saved, refused there, and their save stays as they made it.
#[test]
fn an_edit_saved_during_the_write_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.md");
    let once = research("- [[Koji]] — rice").apply("# N\n").unwrap();
    std::fs::write(&path, &once).unwrap();
    let theirs = once.replace("— rice", "— rice, and my remark");
    let edit = research("- [[Miso]] — soy");
    let mut calls = 0;
    let out = crate::write::update_note(&path, |text| {
        calls += 1;
        if calls == 1 {
            std::fs::write(&path, &theirs).unwrap();
        }
        edit.apply(text)
    });
    assert!(out.is_err(), "{out:?}");
    assert_eq!(calls, 2, "made again on the saved text");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs);
}

/// Twenty thousand answers in one section: split in one pass over them, not one per answer.
#[test]
fn many_answers_split_in_one_pass() {
    let mut note = String::from("# N\n\n## Research\n\nMine.\n");
    for i in 0..20_000 {
        note.push_str(&format!(
            "\n### Q{i}\n\n{QUESTION_MARKER}\nanswer {i}\n\n{ANSWER_END}\n"
        ));
    }
    let started = std::time::Instant::now();
    let (own, research) = split_research(&note).unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        own.contains("Mine.") && !own.contains("answer 19999"),
        "{}",
        &own[..200]
    );
    assert!(research.contains("### Q19999"));
}
