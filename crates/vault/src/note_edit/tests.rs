use proptest::prelude::*;
use serde_json::json;

use super::*;

const NOTE: &str =
    "# Trip\n\nIntro.\n\n## Packing\n\n- passport\n\n### Documents\n\nvisa\n\n## Über den Weg\n\nRoute.\n";

#[test]
fn section_edits() {
    let check = |heading: &str, mode: Mode, content: &str, expected: &str| {
        let got = edit_section(NOTE, heading, mode, content).unwrap_or_else(|e| panic!("{heading}: {e}"));
        assert_eq!(got, expected, "{heading} {mode:?}");
    };
    check(
        "Packing",
        Mode::Replace,
        "- tickets",
        "# Trip\n\nIntro.\n\n## Packing\n\n- tickets\n\n## Über den Weg\n\nRoute.\n",
    );
    check(
        "packing",
        Mode::Append,
        "- tickets",
        "# Trip\n\nIntro.\n\n## Packing\n\n- passport\n\n### Documents\n\nvisa\n\n- tickets\n\n## Über den Weg\n\nRoute.\n",
    );
    check(
        "### Documents",
        Mode::Prepend,
        "passport copy",
        "# Trip\n\nIntro.\n\n## Packing\n\n- passport\n\n### Documents\n\npassport copy\n\nvisa\n\n## Über den Weg\n\nRoute.\n",
    );
    check(
        "über den weg",
        Mode::Append,
        "Then the ferry.",
        "# Trip\n\nIntro.\n\n## Packing\n\n- passport\n\n### Documents\n\nvisa\n\n## Über den Weg\n\nRoute.\n\nThen the ferry.\n",
    );
    check(
        "Documents",
        Mode::Replace,
        "",
        "# Trip\n\nIntro.\n\n## Packing\n\n- passport\n\n### Documents\n\n## Über den Weg\n\nRoute.\n",
    );
    // CRLF notes stay CRLF.
    let crlf = NOTE.replace('\n', "\r\n");
    let got = edit_section(&crlf, "Packing", Mode::Append, "- tickets\n- money").unwrap();
    assert!(
        got.contains("- passport\r\n\r\n### Documents") && got.contains("- tickets\r\n- money\r\n\r\n## Über"),
        "{got:?}"
    );
    assert!(!got.replace("\r\n", "").contains('\n'), "{got:?}");
}

#[test]
fn edits_that_would_escape_are_refused() {
    let check = |heading: &str, content: &str, expected: &str| {
        let e = edit_section(NOTE, heading, Mode::Append, content)
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{content:?}: {e}");
    };
    check(
        "Packing",
        "ok\n## Injected\nx",
        "line 2 is a level-2 heading (`## Injected`), which would end the section `## Packing`; use level 3 or deeper",
    );
    check("Documents", "### Sibling", "line 1 is a level-3 heading");
    check("Packing", "Setext title\n===", "level-1 heading");
    check(
        "Packing",
        "```\nnever closed",
        "it ends inside a code block opened on line 1; close it",
    );
    check(
        "Packing",
        "<!-- open comment",
        "it ends inside an HTML block or comment",
    );
    check("Packing", "%% open", "Obsidian comment");
    // Deeper headings are the section's own.
    assert!(edit_section(NOTE, "Packing", Mode::Append, "#### Fine\nx").is_ok());
}

#[test]
fn headings_are_found_or_listed() {
    let dup = "## A\nx\n### A\ny\n## B\n";
    let e = find_heading(dup, "a").unwrap_err();
    assert_eq!(
        e.to_string(),
        "heading: `a` matches 2 headings: `## A` (line 1), `### A` (line 3); give its level too (e.g. `### a`) or change one"
    );
    assert_eq!(find_heading(dup, "### A").unwrap().line, 2);
    let e = find_heading(NOTE, "Missing").unwrap_err();
    assert_eq!(
        e.to_string(),
        "heading: no heading `Missing` in the note; its headings: `# Trip` (line 1), `## Packing` (line 5), `### Documents` (line 9), `## Über den Weg` (line 13)"
    );
    assert!(
        matches!(find_heading("no headings\n", "x"), Err(NoteEditError::NoHeading { headings, .. }) if headings.starts_with("none"))
    );
    // Headings inside a quote or a code block are not sections.
    assert!(find_heading("> ## Quoted\n\n```\n## Code\n```\n", "Quoted").is_err());
}

#[test]
fn hashes_and_conflicts() {
    let h = hash(NOTE);
    assert!(check_hash(NOTE, &h).is_ok());
    let e = check_hash(&format!("{NOTE}x"), &h).unwrap_err();
    assert!(matches!(e, NoteEditError::Conflict { .. }));
    assert!(
        e.to_string()
            .starts_with("the note changed since it was read: its hash is now ")
    );
}

#[test]
fn outlines_give_section_sizes() {
    let o = outline(NOTE);
    let shown: Vec<(u8, &str, u32, usize)> = o
        .iter()
        .map(|e| (e.level, e.heading.as_str(), e.line, e.chars))
        .collect();
    assert_eq!(
        shown,
        vec![
            (1, "Trip", 1, NOTE.chars().count()),
            (2, "Packing", 5, 45),
            (3, "Documents", 9, 21),
            (2, "Über den Weg", 13, 24)
        ]
    );
}

#[test]
fn frontmatter_fields() {
    let fields = |v: serde_json::Value| v.as_object().unwrap().clone();
    let check = |text: &str, v: serde_json::Value, expected: &str| {
        assert_eq!(set_frontmatter(text, &fields(v)).unwrap(), expected, "{text:?}");
    };
    check("# T\n", json!({"status": "done"}), "---\nstatus: \"done\"\n---\n# T\n");
    check(
        "---\ntitle: T\ntags:\n  - a\n  - b\nstatus: draft\n---\n# T\n",
        json!({"tags": ["x", "y"], "status": null, "count": 3}),
        "---\ntitle: T\ntags: [\"x\", \"y\"]\ncount: 3\n---\n# T\n",
    );
    check(
        "---\r\na: 1\r\n---\r\nbody\r\n",
        json!({"b": true}),
        "---\r\na: 1\r\nb: true\r\n---\r\nbody\r\n",
    );
    // A value cannot close the front matter or start a second document.
    check(
        "# T\n",
        json!({"x": "a\n---\nevil: 1"}),
        "---\nx: \"a\\n---\\nevil: 1\"\n---\n# T\n",
    );
    let e = set_frontmatter("# T\n", &fields(json!({"x": {"nested": 1}}))).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("frontmatter.x: nested objects are not supported"),
        "{e}"
    );
    let e = set_frontmatter("# T\n", &fields(json!({"bad: key": 1}))).unwrap_err();
    assert!(e.to_string().contains("is not a field name"), "{e}");
}

/// Front matter in every line-ending style keeps every other field, byte for byte.
#[test]
fn frontmatter_in_every_line_ending_style() {
    let fields = |v: serde_json::Value| v.as_object().unwrap().clone();
    let check = |text: &str, expected: &str| {
        assert_eq!(
            set_frontmatter(text, &fields(json!({"status": "done"}))).unwrap(),
            expected,
            "{text:?}"
        );
    };
    check(
        "---\ntitle: Kombucha\ntags: [tea]\naliases:\n  - Booch\n---\n# K\n",
        "---\ntitle: Kombucha\ntags: [tea]\naliases:\n  - Booch\nstatus: \"done\"\n---\n# K\n",
    );
    check(
        "---\rtitle: Kombucha\rtags: [tea]\raliases:\r  - Booch\r---\r# K\r",
        "---\rtitle: Kombucha\rtags: [tea]\raliases:\r  - Booch\rstatus: \"done\"\r---\r# K\r",
    );
    check(
        "---\r\ntitle: Kombucha\r\ntags: [tea]\r\n---\r\n# K\r\n",
        "---\r\ntitle: Kombucha\r\ntags: [tea]\r\nstatus: \"done\"\r\n---\r\n# K\r\n",
    );
    // Mixed: each kept line keeps its own ending; the new one takes the note's usual one.
    check(
        "---\r\ntitle: Kombucha\ntags: [tea]\r\nstatus: draft\r\n---\n\n# K\r\n",
        "---\r\ntitle: Kombucha\ntags: [tea]\r\nstatus: \"done\"\r\n---\n\n# K\r\n",
    );
    check("---\n---\nbody\n", "---\nstatus: \"done\"\n---\nbody\n");
    check("no front matter\r", "---\rstatus: \"done\"\r---\rno front matter\r");
    for bad in [" evil", "evil ", "-x", "a:b", "", "x\ny"] {
        let e = set_frontmatter("# T\n", &fields(json!({ bad: 1 }))).unwrap_err();
        assert!(e.to_string().contains("is not a field name"), "{bad:?}: {e}");
    }
    let e = set_frontmatter("+++\na = 1\n+++\n", &fields(json!({"b": 1}))).unwrap_err();
    assert!(e.to_string().contains("TOML"), "{e}");
}

/// Section edits on CR-only notes and under setext headings, and an append that would land
/// inside a block the note leaves open.
#[test]
fn line_endings_setext_headings_and_open_blocks() {
    let check = |text: &str, heading: &str, mode: Mode, content: &str, expected: Result<&str, &str>| match (
        edit_section(text, heading, mode, content),
        expected,
    ) {
        (Ok(got), Ok(want)) => assert_eq!(got, want, "{text:?} {mode:?}"),
        (Err(e), Err(code)) => assert_eq!(scholia_base::Coded::code(&e), code, "{text:?}: {e}"),
        (got, want) => panic!("{text:?} {mode:?}: {got:?} vs {want:?}"),
    };
    let cr = "# T\r## A\rold\r## B\rb\r";
    check(cr, "A", Mode::Replace, "new", Ok("# T\r## A\r\rnew\r\r## B\rb\r"));
    check(cr, "A", Mode::Append, "more", Ok("# T\r## A\rold\r\rmore\r\r## B\rb\r"));
    check(
        cr,
        "B",
        Mode::Prepend,
        "first",
        Ok("# T\r## A\rold\r## B\r\rfirst\r\rb\r"),
    );
    let setext = "Title\n=====\n\nintro\n\nPart\n----\nold\n";
    check(
        setext,
        "Part",
        Mode::Replace,
        "new",
        Ok("Title\n=====\n\nintro\n\nPart\n----\n\nnew\n"),
    );
    check(
        setext,
        "Part",
        Mode::Prepend,
        "first",
        Ok("Title\n=====\n\nintro\n\nPart\n----\n\nfirst\n\nold\n"),
    );
    check(
        setext,
        "Title",
        Mode::Prepend,
        "top",
        Ok("Title\n=====\n\ntop\n\nintro\n\nPart\n----\nold\n"),
    );
    let open = "# T\n## Log\n```\ncode never closed\n";
    check(open, "Log", Mode::Append, "more", Err("OPEN_BLOCK_AT_END"));
    check(
        open,
        "Log",
        Mode::Prepend,
        "first",
        Ok("# T\n## Log\n\nfirst\n\n```\ncode never closed\n"),
    );
    check(
        open,
        "Log",
        Mode::Replace,
        "closed now",
        Ok("# T\n## Log\n\nclosed now\n"),
    );
}

fn note() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("## Alpha".to_string()),
        Just("## Beta".to_string()),
        Just("### Gamma".to_string()),
        Just("# Top".to_string()),
        Just("text line".to_string()),
        Just("- item".to_string()),
        Just("```".to_string()),
        Just("---".to_string()),
        Just("> ## quoted".to_string()),
        Just(String::new()),
        Just("<!-- c -->".to_string()),
    ];
    let eols = prop::sample::select(vec!["\n", "\r\n", "\r"]);
    (prop::collection::vec(line, 0..24), eols, any::<bool>()).prop_map(|(lines, eol, last)| {
        let mut t = lines.join(eol);
        if last {
            t.push_str(eol);
        }
        t
    })
}

fn content() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("new words".to_string()),
        Just("## Escape".to_string()),
        Just("#### Deep".to_string()),
        Just("```".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("Title\n===".to_string()),
        Just("- x".to_string()),
        Just(String::new()),
    ];
    prop::collection::vec(line, 0..6).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Whatever the note and the content, an edit changes only its section: the text before
    /// the section's body and after it is byte for byte what it was.
    #[test]
    fn an_edit_changes_only_its_section(
        text in note(),
        heading in prop::sample::select(vec!["Alpha", "beta", "Gamma", "Top", "## Alpha"]),
        mode in prop::sample::select(vec![Mode::Replace, Mode::Append, Mode::Prepend]),
        new in content(),
    ) {
        let Ok(h) = find_heading(&text, heading) else { return Ok(()) };
        let line_end = h.body_start;
        let Ok(edited) = edit_section(&text, heading, mode, &new) else { return Ok(()) };
        let before = &text[..line_end];
        let after = &text[h.section.end.max(line_end)..];
        prop_assert!(edited.starts_with(before.trim_end_matches(['\n', '\r'])), "{:?} -> {:?}", text, edited);
        prop_assert!(edited.ends_with(after), "{:?} -> {:?}", text, edited);
        // The edited section is still there, with the same heading.
        let again = find_heading(&edited, heading);
        prop_assert!(again.is_ok(), "{:?}", edited);
        // Headings outside it unchanged.
        let outside = |t: &str, skip: std::ops::Range<usize>| -> Vec<(u8, String)> {
            parse::headings(t).into_iter().filter(|x| x.top_level && !skip.contains(&x.section.start)).map(|x| (x.level, x.text)).collect()
        };
        let new_h = again.unwrap();
        let new_line_end = new_h.body_start;
        prop_assert_eq!(outside(&text, line_end..h.section.end.max(line_end)), outside(&edited, new_line_end..new_h.section.end.max(new_line_end)));
    }
}
