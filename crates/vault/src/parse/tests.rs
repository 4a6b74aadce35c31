use super::*;

fn link(
    target: &str,
    heading: Option<&str>,
    alias: Option<&str>,
    embed: bool,
) -> (String, Option<String>, Option<String>, bool) {
    (target.into(), heading.map(Into::into), alias.map(Into::into), embed)
}

#[test]
fn links_alone_are_what_parse_finds() {
    for text in [
        "[[A]] and ![[B#h|x]] `[[not]]`\n```\n[[code]]\n```\n> [[Quoted|q]]\n- [[Item#^b]]\n",
        "---\ntitle: [[x]]\n---\n[[After frontmatter]]\r\n| [[T\\|a]] |\n|---|\n",
        "",
    ] {
        assert_eq!(links(text), parse(text, "").links, "{text:?}");
    }
}

#[test]
fn wikilink_forms() {
    let text = "See [[Note]], [[Note|alias]], [[Note#Heading]], [[Folder/Other#Part|shown]], \
                [[#Local]], ![[image.png]], ![[Embedded#Sec]] and [[Blocky#^abc123]].\n\n\
                `[[not a link]]`\n\n```\n[[nor this]]\n```\n";
    let note = parse(text, "x");
    let got: Vec<_> = note
        .links
        .iter()
        .map(|l| (l.target.clone(), l.heading.clone(), l.alias.clone(), l.embed))
        .collect();
    assert_eq!(
        got,
        vec![
            link("Note", None, None, false),
            link("Note", None, Some("alias"), false),
            link("Note", Some("Heading"), None, false),
            link("Folder/Other", Some("Part"), Some("shown"), false),
            link("", Some("Local"), None, false),
            link("image.png", None, None, true),
            link("Embedded", Some("Sec"), None, true),
            link("Blocky", None, None, false),
        ]
    );
    assert_eq!(note.links[7].block.as_deref(), Some("abc123"));
    assert_eq!(&text[note.links[0].range.clone()], "[[Note]]");
    assert_eq!(&text[note.links[5].range.clone()], "![[image.png]]");
}

#[test]
fn markdown_links_to_notes() {
    let text = "See [a](Note.md), [b](Note%20name.md#Part), [c](<Other name.md>), \
                [d](../up/Deep.md#^blk \"title\"), ![e](Pic.md) and [f](folder/X.md).\n\
                Not: [web](https://x.org/a.md), [img](p.png), [here](#Heading), `[code](C.md)`.\n";
    let links = links(text);
    let got: Vec<_> = links
        .iter()
        .map(|l| {
            let d = l.markdown.as_ref().expect("markdown");
            (
                l.target.as_str(),
                l.heading.as_deref(),
                l.block.as_deref(),
                l.alias.as_deref(),
                l.embed,
                &text[d.range.clone()],
                d.angle,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("Note.md", None, None, Some("a"), false, "Note.md", false),
            (
                "Note name.md",
                Some("Part"),
                None,
                Some("b"),
                false,
                "Note%20name.md#Part",
                false
            ),
            ("Other name.md", None, None, Some("c"), false, "Other name.md", true),
            (
                "../up/Deep.md",
                None,
                Some("blk"),
                Some("d"),
                false,
                "../up/Deep.md#^blk",
                false
            ),
            ("Pic.md", None, None, Some("e"), true, "Pic.md", false),
            ("folder/X.md", None, None, Some("f"), false, "folder/X.md", false),
        ]
    );
    assert_eq!(&text[links[0].range.clone()], "[a](Note.md)");
    assert_eq!(&text[links[4].range.clone()], "![e](Pic.md)");
    assert_eq!(parse(text, "").links, links);
    // A wikilink inside a Markdown link's text, and the other way round, stay one link.
    let mixed = "[[Wiki]] [x ![[Emb]]](N.md)\n";
    let l = super::links(mixed);
    assert_eq!(
        l.iter().map(|l| l.target.as_str()).collect::<Vec<_>>(),
        ["Wiki", "N.md"]
    );
}

#[test]
fn many_nested_headings_are_linear() {
    // Quoted headings never end a section: a naive scan for each would be quadratic.
    let text = format!("# Top\n{}## Research\nbody\n", "> # quoted\n".repeat(60_000));
    let started = std::time::Instant::now();
    let h = headings(&text);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(h.len(), 60_002);
    assert_eq!(h[0].section, 0..text.len());
    let quoted = &h[1];
    assert!(!quoted.top_level);
    assert_eq!(
        quoted.section.end,
        text.len(),
        "no top-level heading of level 1 follows"
    );
    let research = h.last().unwrap();
    assert_eq!(research.section, text.find("## Research").unwrap()..text.len());
}

#[test]
fn title_precedence() {
    let check = |text: &str, expected: &str| assert_eq!(parse(text, "stem").title, expected, "{text:?}");
    check("---\ntitle: From FM\n---\n# H1\n", "From FM");
    check("intro\n\n# The H1\n\n## Sub\n", "The H1");
    check("## Only h2\n", "stem");
    check("", "stem");
    check("---\ntitle: \"\"\n---\n# H1\n", "H1");
}

#[test]
fn headings_sections_and_levels() {
    let text = "# Title\r\nintro\r\n## A\r\na\r\n### A1\r\nx\r\n## B\r\nb\r\n> ## Quoted\r\n";
    let note = parse(text, "t");
    let h: Vec<_> = note
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str(), h.line, h.top_level))
        .collect();
    assert_eq!(
        h,
        vec![
            (1, "Title", 0, true),
            (2, "A", 2, true),
            (3, "A1", 4, true),
            (2, "B", 6, true),
            (2, "Quoted", 8, false)
        ]
    );
    assert_eq!(&text[note.headings[1].section.clone()], "## A\r\na\r\n### A1\r\nx\r\n");
    assert_eq!(&text[note.headings[2].section.clone()], "### A1\r\nx\r\n");
    assert_eq!(&text[note.headings[3].section.clone()], "## B\r\nb\r\n> ## Quoted\r\n");
    assert_eq!(note.headings[0].section, 0..text.len());
}

#[test]
fn hidden_headings_and_two_line_names() {
    let text = "# Top\n%%\n## In a comment\n%%\n$$\n# In math\n$$\n`%%` ## not\n## After\n\nTwo\nlines\n---\nbody\n";
    let h = headings(text);
    let names: Vec<&str> = h.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(names, ["Top", "After", "Two lines"]);
    let setext = &h[2];
    assert_eq!(&text[setext.section.start..setext.body_start], "Two\nlines\n---\n");
    assert_eq!(&text[h[1].section.start..h[1].body_start], "## After\n");
}

#[test]
fn headings_in_code_are_not_headings() {
    let text = "```md\n## Research\n```\n~~~\n# no\n~~~\n    ## indented code\n";
    assert!(parse(text, "t").headings.is_empty());
}

#[test]
fn tags_inline_and_frontmatter() {
    let text = "---\ntags: [alpha, \"#beta\"]\n---\nText #gamma and #nested/tag, not#this, #123 no, `#code` no.\n\n# Heading #notatag?\n";
    let note = parse(text, "t");
    assert_eq!(note.tags, vec!["gamma", "nested/tag", "notatag", "alpha", "beta"]);

    let text = "---\ntags: one, two\naliases:\n  - Other name\n---\n";
    let note = parse(text, "t");
    assert_eq!(note.tags, vec!["one", "two"]);
    assert_eq!(note.aliases, vec!["Other name"]);
}

#[test]
fn plain_text_drops_markup() {
    let note = parse("---\nk: v\n---\n# T\n\nSome *emph* and [[Link|shown]] text.\n", "t");
    assert!(
        note.plain_text.contains("Some emph and shown text."),
        "{:?}",
        note.plain_text
    );
    assert!(!note.plain_text.contains("k: v"));
}

/// An image file embedded by name is no word of the note (obsidian-help's Random note was
/// found by "dice" and showed "obsidian-icon-dice.svg#icon" in its snippet); a Markdown image's
/// alt text, a note embedded by name and the link to the image stay.
#[test]
fn an_embedded_image_file_s_name_is_no_word() {
    let note = parse(
        "Click ![[obsidian-icon-dice.svg#icon]] in the ribbon. ![A rolling die](die.png) and ![[Bread log]].\n",
        "t",
    );
    assert_eq!(
        note.plain_text.split_whitespace().collect::<Vec<_>>().join(" "),
        "Click in the ribbon. A rolling die and Bread log."
    );
    let targets: Vec<&str> = note.links.iter().map(|l| l.target.as_str()).collect();
    assert!(targets.contains(&"obsidian-icon-dice.svg"), "{targets:?}");
}
