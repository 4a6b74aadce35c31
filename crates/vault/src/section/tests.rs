//! Tests of `section`.

use super::*;

mod cases {
    use super::*;

    #[test]
    fn minimal_edits() {
        let check = |old: &str, new: &str| {
            let (range, text) = minimal_edit(old, new);
            let mut applied = old.to_string();
            applied.replace_range(range.clone(), &text);
            assert_eq!(applied, new, "{old:?} -> {new:?}");
            range
        };
        assert_eq!(check("abc", "abc"), 3..3);
        assert_eq!(check("abXc", "abYc"), 2..3);
        assert_eq!(check("a", "ab"), 1..1);
        assert_eq!(check("héllo", "hèllo"), 1..3);
        check("aaa", "aa");
        check("", "new");
    }

    fn check(input: &str, body: &str, expected: &str) {
        let got = upsert(input, "Research", 2, body).unwrap();
        assert_eq!(got, expected, "input: {input:?}");
        // Re-running with the same body changes nothing.
        assert_eq!(
            upsert(&got, "Research", 2, body).unwrap(),
            got,
            "not idempotent for {input:?}"
        );
    }

    #[test]
    fn append_cases() {
        check("", "x", "## Research\n\nx\n");
        check("text", "x", "text\n\n## Research\n\nx\n");
        check("text\n", "x", "text\n\n## Research\n\nx\n");
        check("text\n\n", "x", "text\n\n## Research\n\nx\n");
        check("a\r\nb\r\n", "x\ny", "a\r\nb\r\n\r\n## Research\r\n\r\nx\r\ny\r\n");
        check("# Research\n", "x", "# Research\n\n## Research\n\nx\n");
        check("### Research\n", "x", "### Research\n\n## Research\n\nx\n");
        check(
            "```\n## Research\n```\n",
            "x",
            "```\n## Research\n```\n\n## Research\n\nx\n",
        );
        check("> ## Research\n", "x", "> ## Research\n\n## Research\n\nx\n");
    }

    #[test]
    fn replace_cases() {
        check("## Research\nold\n", "new", "## Research\n\nnew\n");
        check("## research\nold", "new", "## Research\n\nnew\n");
        check(
            "# T\n## Research\nold\n### Sub\nold too\n## Next\nkeep\n",
            "new",
            "# T\n## Research\n\nnew\n\n## Next\nkeep\n",
        );
        check(
            "## Research\nold\n# Top\nkeep",
            "new",
            "## Research\n\nnew\n\n# Top\nkeep",
        );
        check("## **Research**\nold\n", "new", "## Research\n\nnew\n");
        check(
            "Research\n--------\nold\n\n## After\n",
            "new",
            "## Research\n\nnew\n\n## After\n",
        );
        check(
            "a\r\n## Research\r\nold\r\n## B\r\n",
            "new",
            "a\r\n## Research\r\n\r\nnew\r\n\r\n## B\r\n",
        );
        check("## Research\n```\n## B\n```\n", "new", "## Research\n\nnew\n");
    }

    /// Hostile notes: the section is found where a reader sees it, and nothing else changes.
    #[test]
    fn hostile_notes() {
        // A rule, text and a later rule are not frontmatter: the user's sections survive.
        for close in ["---", "...", "+++"] {
            let open = if close == "+++" { "+++" } else { "---" };
            check(
                &format!(
                    "# Trip\nA sentence.\n## Research\nold\n\n{open}\n## Packing list\n- passport\n\n{close}\n\nLast line.\n"
                ),
                "new",
                &format!(
                    "# Trip\nA sentence.\n## Research\n\nnew\n\n## Packing list\n- passport\n\n{close}\n\nLast line.\n"
                ),
            );
        }
        // An unclosed `---` at the top is a rule, not frontmatter that swallows the note.
        check(
            "---\n# Title\n## Research\nold\n",
            "new",
            "---\n# Title\n## Research\n\nnew\n",
        );
        // Frontmatter holding a heading-like line stays frontmatter.
        check(
            "---\ntitle: x\n## Research: no\n---\n# N\n",
            "new",
            "---\ntitle: x\n## Research: no\n---\n# N\n\n## Research\n\nnew\n",
        );
        // Classic Mac line endings: the section is where it is, never at byte 0.
        check(
            "---\rtitle: T\r---\r# N\rtext\r",
            "x\ny",
            "---\rtitle: T\r---\r# N\rtext\r\r## Research\r\rx\ry\r",
        );
        check(
            "# N\r## Research\rold\r## After\rkeep\r",
            "new",
            "# N\r## Research\r\rnew\r\r## After\rkeep\r",
        );
    }

    #[test]
    fn never_appended_where_it_cannot_be_seen() {
        let refused = |input: &str, what: &str, line: usize| {
            let err = upsert(input, "Research", 2, "x").unwrap_err();
            assert_eq!(
                err,
                SectionError::OpenAtEnd {
                    what: match what {
                        "code" => "a code block",
                        "html" => "an HTML block or comment",
                        "comment" => "an Obsidian comment (`%%`)",
                        _ => "a math block (`$$`)",
                    },
                    line
                },
                "{input:?}"
            );
            assert!(upsert_subsection(input, "Research", 2, "Q", "x").is_err());
        };
        refused("# N\n```\ncode\n", "code", 2);
        refused("# N\n~~~python\ncode", "code", 2);
        refused("# N\n\n<!-- hidden\ntext\n", "html", 3);
        refused("# N\n\n%% hidden\n", "comment", 3);
        refused("# N\n\n$$\nx = 1\n", "math", 3);
        assert_eq!(
            SectionError::OpenAtEnd {
                what: "a code block",
                line: 2
            }
            .to_string(),
            "the note ends inside a code block opened on line 2, which would hide a section appended after it; close it and run again, nothing was written"
        );
        // Closed blocks are fine; an open block inside an existing section is replaced with it.
        check(
            "# N\n```\ncode\n```\n",
            "x",
            "# N\n```\ncode\n```\n\n## Research\n\nx\n",
        );
        check("# N\n%% c %%\n", "x", "# N\n%% c %%\n\n## Research\n\nx\n");
        check("## Research\n```\nopen\n", "x", "## Research\n\nx\n");
    }

    #[test]
    fn duplicate_is_refused() {
        let err = upsert("## Research\na\n## research\nb\n", "Research", 2, "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the note has 2 `## Research` headings (lines 1, 3); keep one and run again, nothing was written"
        );
    }

    fn check_sub(input: &str, child: &str, body: &str, expected: &str) {
        let got = upsert_subsection(input, "Research", 2, child, body).unwrap();
        assert_eq!(got, expected, "input: {input:?}");
        assert_eq!(
            upsert_subsection(&got, "Research", 2, child, body).unwrap(),
            got,
            "not idempotent for {input:?}"
        );
    }

    #[test]
    fn subsections() {
        check_sub("note\n", "Q", "a", "note\n\n## Research\n\n### Q\n\na\n");
        check_sub(
            "## Research\n\nintro\n",
            "Q",
            "a",
            "## Research\n\nintro\n\n### Q\n\na\n",
        );
        check_sub(
            "## Research\n\n### Q\n\nold\n\n### R\n\nr\n",
            "q",
            "a",
            "## Research\n\n### q\n\na\n\n### R\n\nr\n",
        );
        check_sub(
            "## Research\n\nintro\n\n## Next\nx\n",
            "Q",
            "a",
            "## Research\n\nintro\n\n### Q\n\na\n\n## Next\nx\n",
        );
        check_sub(
            "## Research\nintro\n## Next\n",
            "Q",
            "a",
            "## Research\nintro\n\n### Q\n\na\n\n## Next\n",
        );
        check_sub("## Research\nintro", "Q", "a", "## Research\nintro\n\n### Q\n\na\n");
        check_sub("## Research\n", "Q", "a", "## Research\n\n### Q\n\na\n");
    }
}

/// Property: over generated notes, `upsert` replaces exactly the byte range an independent
/// oracle computes from how the note was built, keeps every other byte, and is idempotent.
mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct Block {
        lines: Vec<String>,
        /// Level of a top-level heading opening this block, and whether it is a Research one.
        heading: Option<(u8, bool)>,
    }

    fn text_line() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z ,.]{1,30}",
            "[à-ÿ一-龥 ]{1,10}",
            Just("Some [[Link]] and #tag".to_string()),
            Just("Research is nice".to_string()),
        ]
    }

    fn block() -> impl Strategy<Value = Block> {
        let name = prop_oneof![
            Just("Research"),
            Just("research"),
            Just("RESEARCH"),
            Just("Notes"),
            Just("Research notes")
        ];
        prop_oneof![
            4 => prop::collection::vec(text_line(), 1..4).prop_map(|lines| Block { lines, heading: None }),
            1 => Just(Block { lines: vec![String::new()], heading: None }),
            4 => (1u8..=4, name).prop_map(|(level, name)| Block {
                lines: vec![format!("{} {name}", "#".repeat(level as usize))],
                heading: Some((level, level == 2 && name.eq_ignore_ascii_case("research"))),
            }),
            1 => text_line().prop_map(|l| Block {
                lines: vec!["```md".into(), "## Research".into(), l, "```".into()],
                heading: None,
            }),
            1 => Just(Block { lines: vec!["~~~".into(), "# Research".into(), "~~~".into()], heading: None }),
            1 => Just(Block { lines: vec!["> ## Research".into(), "> quoted".into()], heading: None }),
            1 => Just(Block { lines: vec!["- ## Research".into()], heading: None }),
            1 => Just(Block { lines: vec![String::new(), "    ## Research (indented code)".into()], heading: None }),
            1 => Just(Block { lines: vec!["<div>".into(), "## Research".into(), "</div>".into(), String::new()], heading: None }),
            // Rules of every spelling, set apart so that no line above becomes a setext heading.
            2 => prop_oneof![Just("---"), Just("***"), Just("___"), Just("..."), Just("+++")].prop_map(|r| Block {
                lines: vec![String::new(), r.to_string(), String::new()],
                heading: None,
            }),
            1 => Just(Block { lines: vec!["<!-- a comment".into(), "## Research".into(), "-->".into()], heading: None }),
            1 => Just(Block { lines: vec!["%% hidden %%".into()], heading: None }),
        ]
    }

    /// A block that leaves the note open when it ends it.
    fn open_tail() -> impl Strategy<Value = Vec<String>> {
        prop_oneof![
            Just(vec!["```".to_string(), "## Research".to_string()]),
            Just(vec!["<!-- never closed".to_string()]),
            Just(vec!["%% never closed".to_string()]),
        ]
    }

    #[derive(Debug, Clone)]
    struct Note {
        text: String,
        /// Byte offset where each block starts, with its heading info.
        starts: Vec<(usize, Option<(u8, bool)>)>,
        /// The note ends inside an open block.
        open_at_end: bool,
    }

    fn note() -> impl Strategy<Value = Note> {
        (
            prop_oneof![Just(0u8), Just(1), Just(2)],
            prop::collection::vec(block(), 0..14),
            prop_oneof![Just(0u8), Just(1), Just(2), Just(3)],
            any::<bool>(),
            any::<u64>(),
            prop::option::weighted(0.15, open_tail()),
        )
            .prop_map(|(frontmatter, blocks, eol_mode, trailing, seed, tail)| {
                let mut rng = seed;
                let mut eol = || match eol_mode {
                    0 => "\n",
                    1 => "\r\n",
                    3 => "\r",
                    _ => {
                        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        if rng >> 63 == 0 { "\n" } else { "\r\n" }
                    }
                };
                let mut all: Vec<Block> = Vec::new();
                match frontmatter {
                    1 => all.push(Block {
                        lines: vec!["---".into(), "title: T".into(), "tags: [a, b]".into(), "---".into()],
                        heading: None,
                    }),
                    // Never closed: a rule and a line of text.
                    2 => all.push(Block {
                        lines: vec!["---".into(), "title: T".into(), String::new()],
                        heading: None,
                    }),
                    _ => {}
                }
                // After an unclosed `---` at the top, a later `---` or `...` line would close it
                // (frontmatter, as in Obsidian): the oracle's notes keep it unclosed.
                let closes = |b: &Block| b.lines.iter().any(|l| l == "---" || l == "...");
                all.extend(blocks.into_iter().filter(|b| frontmatter != 2 || !closes(b)));
                let open_at_end = tail.is_some();
                if let Some(lines) = tail {
                    all.push(Block {
                        lines: std::iter::once(String::new()).chain(lines).collect(),
                        heading: None,
                    });
                }
                let mut text = String::new();
                let mut starts = Vec::new();
                let n = all.len();
                for (bi, b) in all.iter().enumerate() {
                    starts.push((text.len(), b.heading));
                    for (li, line) in b.lines.iter().enumerate() {
                        text.push_str(line);
                        let last = bi + 1 == n && li + 1 == b.lines.len();
                        if !last || trailing {
                            text.push_str(eol());
                        }
                    }
                }
                Note {
                    text,
                    starts,
                    open_at_end,
                }
            })
    }

    /// The oracle: Research headings and the range of the section, from the construction.
    fn oracle(note: &Note) -> (usize, Option<Range<usize>>) {
        let research: Vec<usize> = note
            .starts
            .iter()
            .enumerate()
            .filter(|(_, (_, h))| matches!(h, Some((2, true))))
            .map(|(i, _)| i)
            .collect();
        let Some(&first) = research.first() else {
            return (0, None);
        };
        let start = note.starts[first].0;
        let end = note.starts[first + 1..]
            .iter()
            .find(|(_, h)| matches!(h, Some((level, _)) if *level <= 2))
            .map(|(s, _)| *s)
            .unwrap_or(note.text.len());
        (research.len(), Some(start..end))
    }

    /// Research sections a reader sees in `text`.
    fn oracle_count(text: &str) -> usize {
        parse::headings(text)
            .iter()
            .filter(|h| h.top_level && h.level == 2 && same_name(&h.text, "Research"))
            .count()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn upsert_preserves_everything_outside(note in note(), body in "[a-z \n]{0,40}") {
            let (count, range) = oracle(&note);
            let old = &note.text;
            let result = upsert(old, "Research", 2, &body);
            if count > 1 {
                let dup = matches!(result, Err(SectionError::Duplicate { count: c, .. }) if c == count);
                prop_assert!(dup, "expected duplicate error");
                return Ok(());
            }
            if count == 0 && note.open_at_end {
                prop_assert!(matches!(result, Err(SectionError::OpenAtEnd { .. })), "{:?}", result);
                return Ok(());
            }
            let new = result.unwrap();
            // One section, always: the one written.
            prop_assert_eq!(oracle_count(&new), 1);
            prop_assert_eq!(find(old, "Research", 2).unwrap(), range.clone());
            match range {
                Some(r) => {
                    prop_assert_eq!(&new[..r.start], &old[..r.start]);
                    prop_assert!(new.ends_with(&old[r.end..]));
                }
                None => prop_assert!(new.starts_with(old.as_str())),
            }
            let written = find(&new, "Research", 2).unwrap().expect("section present after upsert");
            let expected_body: Vec<&str> = body.trim_matches('\n').lines().collect();
            let written_text = new[written].replace("\r\n", "\n").replace('\r', "\n");
            let got_body: Vec<&str> = written_text.lines().skip(2).filter(|l| !l.is_empty() || !expected_body.is_empty()).collect();
            let got_body: Vec<&str> = got_body.into_iter().take(expected_body.len()).collect();
            prop_assert_eq!(got_body, expected_body);
            prop_assert_eq!(upsert(&new, "Research", 2, &body).unwrap(), new.clone());
        }
    }
}

/// What `![[Note#^id]]` embeds: (text, id) -> the block's text, or none.
#[test]
fn a_block_is_what_its_marker_marks() {
    let check = |text: &str, id: &str, want: Option<&str>| {
        assert_eq!(block(text, id).map(|r| &text[r]), want, "{text:?} {id}");
    };
    // A paragraph ending with its marker: the whole paragraph, not the marker.
    check(
        "# T\n\nFirst line\nsecond line ^p1\n\nNext.\n",
        "p1",
        Some("First line\nsecond line"),
    );
    // A list item: the item alone.
    check("- one\n- two ^li\n- three\n", "li", Some("- two"));
    check("1. one\n2. two ^n\n", "n", Some("2. two"));
    // A marker on a line of its own: the block above it (a callout, as obsidian-help writes).
    check(
        "Intro.\n\n> [!hint] Limits\n> Names follow the system's rules.\n^blockquote-limits\n\nMore.\n",
        "blockquote-limits",
        Some("> [!hint] Limits\n> Names follow the system's rules."),
    );
    check(
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n^table\r\n",
        "table",
        Some("| a | b |\n|---|---|\n| 1 | 2 |"),
    );
    // Only a whole marker at the end of a line.
    check("Costs 2^p1 here.\n", "p1", None);
    check("A ^p10\n", "p1", None);
    check("Text ^p1 and more.\n", "p1", None);
    check("^p1\n", "p1", None);
    check("", "p1", None);
    // No id names no block, however many lines end with a caret.
    check("Up ^\n", "", None);
    check("Up ^\n", " ", None);
    // Linear in the note: a marker at the end of 200,000 lines.
    let long = format!("{}last ^end\n", "line\n\n".repeat(100_000));
    check(&long, "end", Some("last"));
}
