//! The `## Research` section editor: find, replace or append one section while every byte
//! outside it stays exactly as it was.
//!
//! A section is a top-level heading of the given level whose text matches case-insensitively,
//! and runs to the next top-level heading of the same or a higher level. Headings inside code
//! fences, block quotes or lists do not count (the parser never reports them as top-level).

use std::ops::Range;

use super::lines::{dominant_eol, eol_of_line, trailing_line_breaks};
use super::parse::{self, Heading};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SectionError {
    #[error(
        "the note has {count} `{marker} {name}` headings (lines {lines}); keep one and run again, nothing was written"
    )]
    Duplicate {
        marker: String,
        name: String,
        count: usize,
        lines: String,
    },
    #[error(
        "the note ends inside {what} opened on line {line}, which would hide a section appended after it; close it and run again, nothing was written"
    )]
    OpenAtEnd { what: &'static str, line: usize },
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

fn matching<'h>(headings: &'h [Heading], name: &str, level: u8, within: &Range<usize>) -> Vec<&'h Heading> {
    headings
        .iter()
        .filter(|h| {
            h.top_level
                && h.level == level
                && same_name(&h.text, name)
                && h.section.start >= within.start
                && h.section.start < within.end.max(within.start + 1)
        })
        .collect()
}

fn one<'h>(found: Vec<&'h Heading>, name: &str, level: u8) -> Result<Option<&'h Heading>, SectionError> {
    match found.as_slice() {
        [] => Ok(None),
        [h] => Ok(Some(h)),
        many => Err(SectionError::Duplicate {
            marker: "#".repeat(level as usize),
            name: name.to_string(),
            count: many.len(),
            lines: many
                .iter()
                .map(|h| (h.line + 1).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The byte range of the section `name` at `level`, if the note has exactly one.
pub fn find(text: &str, name: &str, level: u8) -> Result<Option<Range<usize>>, SectionError> {
    let headings = parse::headings(text);
    Ok(one(matching(&headings, name, level, &(0..text.len())), name, level)?.map(|h| h.section.clone()))
}

/// The body of the section (without its heading line), if present.
pub fn body<'t>(text: &'t str, name: &str, level: u8) -> Result<Option<&'t str>, SectionError> {
    Ok(find(text, name, level)?.map(|r| {
        let section = &text[r.clone()];
        match eol_of_line(text, r.start) {
            Some(eol) => section.split_once(eol).map(|(_, rest)| rest).unwrap_or(""),
            None => "",
        }
    }))
}

/// `heading` + blank line + `body`, ending with a line break, in the note's line endings.
fn render(level: u8, name: &str, body: &str, eol: &str) -> String {
    let mut out = format!("{} {}{eol}{eol}", "#".repeat(level as usize), name.trim());
    // Every terminator of the body (a lone `\r` is one too) becomes the note's.
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    for line in body.trim_matches('\n').lines() {
        out.push_str(line);
        out.push_str(eol);
    }
    out
}

/// Replaces `range` of `text` with `block`, keeping a blank line before whatever follows.
fn splice(text: &str, range: Range<usize>, mut block: String, eol: &str) -> String {
    if range.end < text.len() {
        block.push_str(eol);
    }
    let mut out = String::with_capacity(text.len() + block.len());
    out.push_str(&text[..range.start]);
    out.push_str(&block);
    out.push_str(&text[range.end..]);
    out
}

/// Appends `block` at the end of `text[..at]`, separated from what precedes it by a blank line.
fn append_at(text: &str, at: usize, block: &str, eol: &str) -> String {
    let head = &text[..at];
    let mut out = String::with_capacity(text.len() + block.len() + 4);
    out.push_str(head);
    if !head.is_empty() {
        if !head.ends_with(['\n', '\r']) {
            out.push_str(eol);
        }
        if !ends_with_blank_line(&out) {
            out.push_str(eol);
        }
    }
    out.push_str(block);
    if at < text.len() {
        out.push_str(eol);
    }
    out.push_str(&text[at..]);
    out
}

fn ends_with_blank_line(s: &str) -> bool {
    let trimmed = s.trim_end_matches(['\n', '\r']);
    trimmed.is_empty() || trailing_line_breaks(s) >= 2
}

/// The line ending of the line starting at `at`: new text follows the lines it replaces, so a
/// second run over a note with mixed endings writes exactly what the first did.
fn eol_at(text: &str, at: usize) -> &'static str {
    eol_of_line(text, at).unwrap_or_else(|| dominant_eol(text))
}

/// The line ending of the note's last terminated line, for text appended at its end.
fn eol_at_end(text: &str) -> &'static str {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    if trimmed.len() == text.len() {
        return dominant_eol(text);
    }
    eol_of_line(text, trimmed.len()).unwrap_or("\n")
}

/// Why a section appended at the end of `text` would not be seen: the note ends inside a
/// block that swallows it (a code fence, an HTML block or comment, an Obsidian `%%` comment or
/// a `$$` math block). The answer comes from the parser itself: a probe heading is appended and
/// looked for.
pub fn open_at_end(text: &str) -> Option<SectionError> {
    use pulldown_cmark::{Event, Tag, TagEnd};
    let eol = eol_at_end(text);
    let probed = append_at(text, text.len(), &format!("## Scholia probe{eol}"), eol);
    let probed = super::lines::normalized(&probed);
    let probe_at = text.len();
    let (mut seen, mut swallowed) = (false, None);
    let (mut in_code, mut comment, mut math) = (false, None::<usize>, None::<usize>);
    let toggle = |open: Option<usize>, at: usize| if open.is_some() { None } else { Some(at) };
    for (event, range) in parse::events(&probed).1 {
        match event {
            Event::Start(Tag::Heading { .. }) if range.start >= probe_at => seen = true,
            Event::Start(Tag::CodeBlock(_)) => {
                in_code = true;
                if range.end > probe_at {
                    swallowed = Some(("a code block", range.start));
                }
            }
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Start(Tag::HtmlBlock) if range.end > probe_at => {
                swallowed = Some(("an HTML block or comment", range.start));
            }
            Event::Text(t) if !in_code && range.start < probe_at => {
                for _ in t.matches("%%") {
                    comment = toggle(comment, range.start);
                }
                for _ in t.matches("$$") {
                    math = toggle(math, range.start);
                }
            }
            _ => {}
        }
    }
    let lines = super::lines::LineIndex::new(text);
    let open = |what: &'static str, at: usize| SectionError::OpenAtEnd {
        what,
        line: lines.line_of(at) as usize + 1,
    };
    if !seen {
        let (what, at) = swallowed.unwrap_or(("a block", text.len()));
        return Some(open(what, at));
    }
    comment
        .map(|at| open("an Obsidian comment (`%%`)", at))
        .or_else(|| math.map(|at| open("a math block (`$$`)", at)))
}

/// Appends a new section at the end of `text`, unless the note ends inside an open block.
fn append_section(text: &str, block: impl FnOnce(&str) -> String) -> Result<String, SectionError> {
    if let Some(e) = open_at_end(text) {
        return Err(e);
    }
    let eol = eol_at_end(text);
    Ok(append_at(text, text.len(), &block(eol), eol))
}

/// Replaces the section `name` at `level` with `body`, or appends it at the end of the note.
pub fn upsert(text: &str, name: &str, level: u8, body: &str) -> Result<String, SectionError> {
    match find(text, name, level)? {
        Some(range) => {
            let eol = eol_at(text, range.start);
            Ok(splice(text, range, render(level, name, body, eol), eol))
        }
        None => append_section(text, |eol| render(level, name, body, eol)),
    }
}

/// Inside the section `parent` (level `level`), replaces or appends the subsection `child`
/// (level `level + 1`). Creates the parent section when the note has none.
pub fn upsert_subsection(text: &str, parent: &str, level: u8, child: &str, body: &str) -> Result<String, SectionError> {
    let headings = parse::headings(text);
    let Some(parent_heading) = one(matching(&headings, parent, level, &(0..text.len())), parent, level)? else {
        return append_section(text, |eol| {
            let mut whole = render(level, parent, "", eol);
            whole.push_str(&render(level + 1, child, body, eol));
            whole
        });
    };
    let within = parent_heading.section.clone();
    let eol = eol_at(text, within.start);
    let block = render(level + 1, child, body, eol);
    let children = matching(&headings, child, level + 1, &within);
    match one(children, child, level + 1)? {
        Some(h) => Ok(splice(text, h.section.clone(), block, eol)),
        None => {
            // The new subsection follows the parent's last non-blank line; the blank lines
            // after it belong to the parent section and are normalised to one.
            let content_end = within.start + text[within.clone()].trim_end_matches(['\n', '\r']).len();
            let mut insert = format!("{eol}{eol}");
            insert.push_str(&block);
            Ok(splice(text, content_end..within.end, insert, eol))
        }
    }
}

/// Like [`upsert`], but the subsections (level `level + 1`) of an existing section for which
/// `keep` is true survive: they follow the new `body`, in their order. `keep` sees each
/// subsection's text, heading line included.
pub fn upsert_keeping(
    text: &str,
    name: &str,
    level: u8,
    body: &str,
    keep: &dyn Fn(&str) -> bool,
) -> Result<String, SectionError> {
    let headings = parse::headings(text);
    let Some(parent) = one(matching(&headings, name, level, &(0..text.len())), name, level)? else {
        return upsert(text, name, level, body);
    };
    let within = parent.section.clone();
    let mut whole = body.trim_end().to_string();
    for child in headings.iter().filter(|h| {
        h.top_level && h.level == level + 1 && h.section.start > within.start && h.section.start < within.end
    }) {
        let sub = &text[child.section.clone()];
        if keep(sub) {
            whole.push_str("\n\n");
            whole.push_str(sub.trim_end());
        }
    }
    upsert(text, name, level, &whole)
}

/// The smallest single replacement turning `old` into `new`: the byte range of `old` to replace
/// and the text to put there (so an editor edit touches only what changed).
pub fn minimal_edit(old: &str, new: &str) -> (Range<usize>, String) {
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    (prefix..old.len() - suffix, new[prefix..new.len() - suffix].to_string())
}

impl scholia_base::Coded for SectionError {
    fn code(&self) -> &'static str {
        match self {
            SectionError::Duplicate { .. } => "DUPLICATE_SECTION",
            SectionError::OpenAtEnd { .. } => "OPEN_BLOCK_AT_END",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        scholia_base::ErrorKind::Conflict
    }
}

#[cfg(test)]
mod tests {
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
#[cfg(test)]
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
