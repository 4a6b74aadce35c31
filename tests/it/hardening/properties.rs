//! Every writer over generated notes (HTML blocks, fences of every kind, nested quotes and
//! lists, existing sections) with hostile model answers, titles, URLs and passages: every byte
//! outside `## Research` is kept, the outline outside it is unchanged, and what is written
//! passes the containment check.

use proptest::prelude::*;
use scholia::engine::{DiskWriter, Engine, NotePath, SectionEdit};
use scholia::research::deep_search::{self, DeepSearchResult, Metadata};
use scholia::research::sonar::{self, AskRequest};
use scholia::vault::contain;
use scholia::vault::parse;
use scholia::vault::section;
use serde_json::json;

fn engine() -> &'static Engine {
    static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| {
        let env: std::collections::HashMap<String, String> = [("HOME".to_string(), "/nonexistent-home".to_string())]
            .into_iter()
            .collect();
        Engine::load(&env, None, None).unwrap()
    })
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z ,.]{1,30}".prop_map(|s| format!("{s}\n")),
        Just("\n".to_string()),
        (
            1usize..=4,
            prop_oneof![Just("Research"), Just("research"), Just("Notes"), Just("Log")]
        )
            .prop_map(|(l, n)| format!("{} {n}\n", "#".repeat(l))),
        Just("```md\n## Research\ncode\n```\n".to_string()),
        Just("~~~~\n# Research\n~~~~\n".to_string()),
        Just("```rust\nfn x() {}\n```\n".to_string()),
        Just("\n    ## indented code\n\n".to_string()),
        Just("<div>\n## Research inside html\n</div>\n\n".to_string()),
        Just("<!-- comment\n## Research\n-->\n".to_string()),
        Just("<pre>\n# pre\n</pre>\n".to_string()),
        Just("> ## Research\n> > nested quote\n".to_string()),
        Just("- item\n  - nested\n    ## heading in list\n".to_string()),
        Just("> [!note] callout\n> body\n".to_string()),
        Just("Setext heading\n---\n".to_string()),
        Just("### Question?\n\n<!-- scholia:question -->\nanswer\n".to_string()),
        // Rules of every spelling, which must never read as frontmatter mid-note.
        Just("\n---\n## After a rule\ntext\n\n---\n\n".to_string()),
        Just("\n---\n# Research\n...\n".to_string()),
        Just("\n+++\nx = 1\n+++\n".to_string()),
        Just("%% comment %%\n".to_string()),
        Just("<!-- scholia:sources-only -->\n".to_string()),
    ]
}

/// Blocks a note may end inside, left open.
fn open_tail() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\n```\n## Research\n".to_string()),
        Just("\n<!-- open\n".to_string()),
        Just("\n%% open\n".to_string()),
        Just("\n$$\nx\n".to_string()),
    ]
}

fn note() -> impl Strategy<Value = String> {
    (
        0u8..4,
        prop::collection::vec(block(), 0..10),
        0u8..3,
        prop::option::weighted(0.1, open_tail()),
    )
        .prop_map(|(fm, blocks, eol, tail)| {
            let mut t = match fm {
                1 => "---\ntitle: T\n---\n".to_string(),
                2 => "---\ntitle: T\n\n".to_string(),
                3 => "+++\ntitle = \"T\"\n+++\n".to_string(),
                _ => String::new(),
            };
            t.extend(blocks);
            t.extend(tail);
            match eol {
                1 => t.replace('\n', "\r\n"),
                2 => t.replace('\n', "\r"),
                _ => t,
            }
        })
}

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("## Escape\nbody".to_string()),
        Just("# Top level".to_string()),
        Just("Setext\n===".to_string()),
        Just("```rust\nunclosed fence".to_string()),
        Just("~~~\nunclosed tilde".to_string()),
        Just("```rust\nx\n```rust\n".to_string()),
        Just("<!-- never closed".to_string()),
        Just("<div>\n## Inside\n</div>".to_string()),
        Just("<script>alert(1)</script>".to_string()),
        Just("<pre>\n# x".to_string()),
        Just("see ![[Secret]] and [[Link".to_string()),
        Just("> [!danger] boo".to_string()),
        Just("%% hide everything".to_string()),
        Just("$$ open math".to_string()),
        Just("]] ) > \" ` \\ | \r\n## CRLF heading".to_string()),
        "[ -~\n]{0,60}",
    ]
}

/// Top-level headings outside `range` (the section), as (level, text).
fn outline(text: &str, range: Option<std::ops::Range<usize>>) -> Vec<(u8, String)> {
    parse::headings(text)
        .into_iter()
        .filter(|h| h.top_level && range.as_ref().is_none_or(|r| !r.contains(&h.section.start)))
        .map(|h| (h.level, h.text))
        .collect()
}

fn edits(answer: &str, title: &str, url: &str, lang: &str) -> Vec<SectionEdit> {
    let e = engine();
    let lib = e.library();
    let mut out = Vec::new();
    let links = contain::Links::from_urls([url]);
    let findings = scholia::vault::inert::markdown(answer, 3, &links, &|_| true).0;
    let research = lib
        .render(
            scholia::prompts::RESEARCH_SECTION,
            json!({"findings": findings, "provenance": title,
                   "sources": [{"title": title, "url": url, "target": null}, {"title": title, "url": null, "target": title}]}),
        )
        .unwrap();
    out.extend(SectionEdit::research(research.trim(), &links).ok());
    let offline = lib
        .render(
            scholia::prompts::RESEARCH_OFFLINE,
            json!({"terms": [title], "notes": [
                       {"target": title, "terms": [title], "passages": [answer, title], "mentioned_on": 3},
                       {"target": title, "terms": [], "passages": [title], "tie": {"kind": "linked_from", "via": title}, "tie_target": title},
                       {"target": answer, "terms": [], "passages": [], "tie": {"kind": "folder_links", "folder": answer, "linking": 2, "mates": 3}},
                       {"target": title, "terms": [], "passages": [], "tie": {"kind": "folder", "folder": title}},
                       {"target": answer, "terms": [], "passages": [], "tie": {"kind": "links_into", "folder": title, "linked": 2}},
                       {"target": title, "terms": [], "passages": [title], "tie": {"kind": "alike_links", "by": title}, "tie_target": title},
                       {"target": title, "terms": [], "passages": [], "tie": {"kind": "tag", "tag": answer}},
                       {"target": answer, "terms": [title, answer], "passages": [answer], "brief": true},
                       {"target": title, "terms": [], "passages": [], "tie": {"kind": "linked", "linking": 8}, "brief": true},
                       {"target": answer, "terms": [], "passages": [], "tie": {"kind": "folder", "folder": title}, "brief": true}],
                   "brief": [{"targets": [answer], "terms": [title, answer], "tie": {"kind": "words"}},
                             {"targets": [title, answer], "terms": [], "tie": {"kind": "linked", "linking": 8}},
                             {"targets": [answer, title], "terms": [], "tie": {"kind": "folder", "folder": title}}],
                   "hubs": [{"target": answer, "linking": 7}, {"target": title, "linking": 5}],
                   "linked": [title], "provenance": title, "lang": lang, "when": "2026-11-27",
                   "topics": 1, "focus": title}),
        )
        .unwrap();
    // Hostile titles, words and passages, on every kind of entry and line (the brief line, the
    // hubs line): the section is always contained.
    let contained = SectionEdit::research(offline.trim(), &contain::Links::none());
    assert!(contained.is_ok(), "{contained:?}\n{offline}");
    out.extend(contained.ok());
    out.extend(SectionEdit::sources_only(offline.trim(), &contain::Links::none()).ok());
    let result = DeepSearchResult {
        success: true,
        result: answer.to_string(),
        verified: false,
        note: Some(title.to_string()),
        metadata: Metadata {
            duration_ms: 1,
            query: title.into(),
            model: title.into(),
            timestamp: "2026-11-22T00:00:00Z".into(),
            iterations: 1,
            max_iterations: 2,
            backend: "gemini-cli",
            sources_visited: vec![url.into(), title.into()],
            search_queries_used: vec![],
            rounds: vec![],
            tokens: None,
            usage: None,
            citations_removed: 0,
        },
        links: contain::Links::from_urls([url, title]),
    };
    let body = deep_search::render_section(e.context(), &result, Some(title)).unwrap();
    out.extend(SectionEdit::question(&deep_search::heading_for(title).replace('\r', " "), body, &result.links).ok());
    if let Ok(req) = AskRequest::new(&format!("{title}\n{answer}"), None, None) {
        let a = sonar::SonarAnswer {
            answer: answer.into(),
            sources: vec![sonar::SonarSource {
                url: url.into(),
                title: Some(title.into()),
            }],
            metadata: sonar::AskMetadata {
                model: "sonar",
                model_id: "perplexity/sonar",
                timeout: 1,
                cost_tier: None,
                response_time: 1,
                usage: Default::default(),
                cost: None,
                cached: false,
            },
        };
        let body = sonar::render_section(e.context(), &req, &a, None).unwrap();
        out.extend(SectionEdit::question(&deep_search::heading_for(&req.query), body, &sonar::links(&a)).ok());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn writers_keep_everything_outside_the_section(
        text in note(),
        answer in hostile(),
        title in hostile(),
        url in prop_oneof![Just("https://a.example/x(y)<z> w".to_string()), Just("javascript:alert(1)".to_string()), hostile()],
        // The offline section in each language it has sentences in, and in English.
        lang in prop::sample::select([&["en"][..], scholia::research::language::SUPPORTED].concat()),
    ) {
        let made = edits(&answer, &title, &url, lang);
        prop_assert!(made.len() >= 4, "the pipelines' own output is always contained: {}", made.len());
        let old_range = match section::find(&text, "Research", 2) {
            Ok(r) => r,
            Err(_) => return Ok(()), // duplicate headings: nothing is written
        };
        let old_outline = outline(&text, old_range.clone());
        let dir = tempfile::tempdir().unwrap();
        for edit in made {
            let new = match edit.apply(&text) {
                Ok(new) => new,
                // Only a note ending inside an open block, with nowhere visible to write.
                Err(e) => {
                    prop_assert!(old_range.is_none() && section::open_at_end(&text).is_some(), "{}", e);
                    continue;
                }
            };
            // One section, always.
            let sections = parse::headings(&new)
                .iter()
                .filter(|h| h.top_level && h.level == 2 && h.text.eq_ignore_ascii_case("research"))
                .count();
            prop_assert_eq!(sections, 1);
            // Bytes outside the section.
            match &old_range {
                Some(r) => {
                    prop_assert_eq!(&new[..r.start], &text[..r.start]);
                    prop_assert!(new.ends_with(&text[r.end..]));
                }
                None => prop_assert!(new.starts_with(text.as_str())),
            }
            // The outline outside the section.
            let new_range = section::find(&new, "Research", 2).unwrap();
            prop_assert_eq!(outline(&new, new_range), old_outline.clone(), "{:?}", new);
            // The disk writer writes exactly that; the editor's minimal edit makes it.
            let path = dir.path().join("n.md");
            std::fs::write(&path, &text).unwrap();
            let note = NotePath { rel: "n.md".into(), abs: path.clone() };
            DiskWriter::write_blocking(&note, &edit).unwrap();
            prop_assert_eq!(std::fs::read_to_string(&path).unwrap(), new.clone());
            let (range, replacement) = section::minimal_edit(&text, &new);
            let mut edited = text.clone();
            edited.replace_range(range, &replacement);
            prop_assert_eq!(edited, new);
        }
    }
}
