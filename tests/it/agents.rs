//! Agents working in the vault through the MCP server, in process: outline first, edits
//! against the hash they read (a stale one is a conflict), new notes, moves that rewrite every
//! link, backlinks; a read-only server, one confined to folders, one offering some tools.

use serde_json::{Value, json};

use crate::mcp::{Client, call, check_errors, connect_with, text};
use crate::support::TestVault;

async fn connect(
    v: &TestVault,
    read_only: bool,
    folders: &[&str],
    tools: Option<&[&str]>,
) -> (Client, tokio_util::sync::DropGuard) {
    let policy =
        scholia::mcp::Policy::new(read_only, tools.map(|t| t.iter().map(|s| s.to_string()).collect())).unwrap();
    let folders: Vec<String> = folders.iter().map(|s| s.to_string()).collect();
    let scope = scholia::index::Scope::new(&v.root, &folders).unwrap();
    connect_with(v, &Vec::new(), policy, scope).await
}

fn structured(r: &rmcp::model::CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    r.structured_content.clone().expect("structured content")
}

const TRIP: &str =
    "# Trip\n\nTo [[Kyoto]].\n\n## Packing\n\n- passport\n\n### Documents\n\nvisa\n\n## Über den Weg\n\nRoute.\n";

fn vault() -> TestVault {
    TestVault::with_files(&[
        ("Trip.md", TRIP),
        ("Places/Kyoto.md", "---\naliases: [Kyōto]\n---\n# Kyoto\n\nTemples.\n"),
        (
            "Journal/Day one.md",
            "# Day one\n\nArrived in [[Kyoto]]; see [[Kyoto#Temples|temples]].\n\n![[Kyoto]]\n",
        ),
        ("Journal/Day two.md", "# Day two\n\nStill in [[Kyōto]].\n"),
        ("Templates/Daily.md", "# {{title}}\n\nCreated {{date}}.\n"),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn outline_then_edit_with_the_hash_then_a_conflict() {
    let v = vault();
    let (c, _stop) = connect(&v, false, &[], None).await;
    let outline = structured(&call(&c, "read_note", json!({"path": "Trip.md", "outline": true})).await);
    let headings: Vec<(u64, &str, u64)> = outline["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["level"].as_u64().unwrap(),
                h["heading"].as_str().unwrap(),
                h["chars"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        headings,
        vec![
            (1, "Trip", 92),
            (2, "Packing", 45),
            (3, "Documents", 21),
            (2, "Über den Weg", 24)
        ]
    );
    assert_eq!(outline["content"], "");
    let hash = outline["hash"].as_str().unwrap().to_string();
    // One section, with the same hash.
    let section = structured(&call(&c, "read_note", json!({"path": "Trip.md", "heading": "über den weg"})).await);
    assert_eq!(section["content"], "## Über den Weg\n\nRoute.\n");
    assert_eq!(section["hash"], hash.as_str());

    let edited = structured(
        &call(&c, "edit_note", json!({"path": "Trip.md", "heading": "Packing", "mode": "replace", "content": "- tickets\n\n### Documents\n\nvisa, passport", "expected_hash": hash})).await,
    );
    assert_eq!(edited["written"], true);
    assert_eq!(edited["target"], "`## Packing`");
    assert_eq!(
        v.read("Trip.md"),
        "# Trip\n\nTo [[Kyoto]].\n\n## Packing\n\n- tickets\n\n### Documents\n\nvisa, passport\n\n## Über den Weg\n\nRoute.\n"
    );
    let new_hash = edited["hash"].as_str().unwrap().to_string();
    assert_ne!(new_hash, hash);
    // Append needs no hash; an append to a non-ASCII heading.
    structured(
        &call(
            &c,
            "edit_note",
            json!({"path": "Trip.md", "heading": "Über den Weg", "content": "Then the ferry."}),
        )
        .await,
    );
    assert!(v.read("Trip.md").ends_with("Route.\n\nThen the ferry.\n"));
    // The stale hash: a conflict naming the current one, nothing written.
    let before = v.read("Trip.md");
    let r = call(
        &c,
        "edit_note",
        json!({"path": "Trip.md", "heading": "Packing", "mode": "replace", "content": "x", "expected_hash": new_hash}),
    )
    .await;
    let shown = text(&r);
    assert!(
        shown.starts_with("[CONFLICT] the note changed since it was read: its hash is now "),
        "{shown}"
    );
    assert_eq!(v.read("Trip.md"), before);
    // Front matter, against the current hash.
    let current = structured(&call(&c, "read_note", json!({"path": "Trip.md", "outline": true})).await)["hash"].clone();
    structured(&call(&c, "edit_note", json!({"path": "Trip.md", "frontmatter": {"status": "planned", "tags": ["travel", "japan"]}, "expected_hash": current})).await);
    assert!(
        v.read("Trip.md")
            .starts_with("---\nstatus: \"planned\"\ntags: [\"travel\", \"japan\"]\n---\n# Trip\n")
    );
    // The index heard of it at once.
    let found = structured(&call(&c, "find_notes", json!({"query": "ferry"})).await);
    assert_eq!(found["results"][0]["path"], "Trip.md");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_edit_error_names_what_to_do() {
    let v = vault();
    v.write("Dup.md", "## Notes\nx\n### Notes\ny\n");
    let (c, _stop) = connect(&v, false, &[], None).await;
    let hash = structured(&call(&c, "read_note", json!({"path": "Trip.md", "outline": true})).await)["hash"]
        .as_str()
        .unwrap()
        .to_string();
    let before = v.read("Trip.md");
    check_errors(
        &c,
        &[
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "mode": "replace", "content": "x"}),
                "INVALID_INPUT",
                "expected_hash: required to replace",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Nope", "content": "x"}),
                "HEADING_NOT_FOUND",
                "heading: no heading `Nope` in the note; its headings: `# Trip` (line 1), `## Packing` (line 5)",
            ),
            (
                "edit_note",
                json!({"path": "Dup.md", "heading": "notes", "content": "x"}),
                "DUPLICATE_HEADING",
                "heading: `notes` matches 2 headings: `## Notes` (line 1), `### Notes` (line 3); give its level too",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "content": "ok\n## Injected\n"}),
                "INVALID_CONTENT",
                "content: line 2 is a level-2 heading (`## Injected`), which would end the section `## Packing`",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "content": "```\nopen"}),
                "INVALID_CONTENT",
                "content: it ends inside a code block",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "mode": "rewrite", "content": "x"}),
                "INVALID_INPUT",
                "mode",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md"}),
                "INVALID_INPUT",
                "heading: missing",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "frontmatter": {"a": 1}}),
                "INVALID_INPUT",
                "give one",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "frontmatter": {"a": {"b": 1}}, "expected_hash": hash}),
                "INVALID_INPUT",
                "frontmatter.a: nested objects are not supported",
            ),
            (
                "edit_note",
                json!({"path": "../outside.md", "heading": "x", "content": "y"}),
                "INVALID_PATH",
                "`..` is not allowed",
            ),
            (
                "create_note",
                json!({"path": "Trip.md", "content": "x"}),
                "NOTE_EXISTS",
                "path: `Trip.md` already exists; create_note never replaces a note",
            ),
            (
                "create_note",
                json!({"path": "../x.md"}),
                "INVALID_INPUT",
                "path: `../x.md` is not valid",
            ),
            (
                "create_note",
                json!({"path": "New.md", "template": "Weekly"}),
                "INVALID_INPUT",
                "template: `Weekly` is not a template of the vault; valid: Daily",
            ),
            (
                "move_note",
                json!({"path": "Trip.md", "to": "Places/Kyoto.md"}),
                "CONFLICT",
                "to: `Places/Kyoto.md` already exists",
            ),
            (
                "move_note",
                json!({"path": "Trip.md", "to": "Archive/Day one.md"}),
                "CONFLICT",
                "to: `Day one` is already the name of `Journal/Day one.md`",
            ),
            (
                "backlinks",
                json!({"path": "Nowhere.md"}),
                "NOTE_NOT_FOUND",
                "no such note",
            ),
        ],
    )
    .await;
    assert_eq!(v.read("Trip.md"), before, "no error wrote anything");
}

#[tokio::test(flavor = "multi_thread")]
async fn create_move_and_backlinks() {
    let v = vault();
    let (c, _stop) = connect(&v, false, &[], None).await;
    let created = structured(
        &call(
            &c,
            "create_note",
            json!({"path": "Journal/Day three", "template": "Daily", "content": "Left [[Kyoto]]."}),
        )
        .await,
    );
    assert_eq!(created["path"], "Journal/Day three.md");
    let text3 = v.read("Journal/Day three.md");
    assert!(
        text3.starts_with("# Day three\n\nCreated 20") && text3.ends_with("\n\nLeft [[Kyoto]]."),
        "{text3:?}"
    );

    let back = structured(&call(&c, "backlinks", json!({"path": "Places/Kyoto.md"})).await);
    let lines: Vec<String> = back["notes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| {
            n["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |l| format!("{}:{}", n["path"].as_str().unwrap(), l["line"]))
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            "Journal/Day one.md:3",
            "Journal/Day one.md:5",
            "Journal/Day three.md:5",
            "Journal/Day two.md:3",
            "Trip.md:3"
        ]
    );

    let moved = structured(
        &call(
            &c,
            "move_note",
            json!({"path": "Places/Kyoto.md", "to": "Japan/Kyoto city.md"}),
        )
        .await,
    );
    assert_eq!(moved["links_rewritten"], 5, "{moved}");
    assert!(!v.path("Places/Kyoto.md").exists());
    assert_eq!(
        v.read("Journal/Day one.md"),
        "# Day one\n\nArrived in [[Kyoto city]]; see [[Kyoto city#Temples|temples]].\n\n![[Kyoto city]]\n"
    );
    assert_eq!(
        v.read("Journal/Day two.md"),
        "# Day two\n\nStill in [[Kyōto]].\n",
        "a link by alias still resolves"
    );
    assert!(v.read("Trip.md").contains("To [[Kyoto city]]."));
    let back = structured(&call(&c, "backlinks", json!({"path": "Japan/Kyoto city.md"})).await);
    assert_eq!(back["notes"].as_array().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_server_offers_no_writing_tool() {
    let v = vault();
    let (c, _stop) = connect(&v, true, &[], None).await;
    let names: Vec<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for writer in [
        "edit_note",
        "create_note",
        "move_note",
        "research_note",
        "save_research_to_markdown",
    ] {
        assert!(!names.contains(&writer.to_string()), "{writer} listed: {names:?}");
    }
    for reader in ["find_notes", "read_note", "backlinks", "deep_search"] {
        assert!(names.contains(&reader.to_string()), "{reader} missing: {names:?}");
    }
    let args = json!({"path": "Trip.md", "heading": "Packing", "content": "x"});
    let r = c
        .call_tool(
            rmcp::model::CallToolRequestParams::new("edit_note").with_arguments(args.as_object().cloned().unwrap()),
        )
        .await;
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("tool `edit_note` writes the vault and this server is read-only"),
        "{e}"
    );
    check_errors(
        &c,
        &[(
            "search",
            json!({"query": "What is koji?", "note": "Trip.md"}),
            "INVALID_INPUT",
            "note: this server is read-only",
        )],
    )
    .await;
    assert_eq!(v.read("Trip.md"), TRIP);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_confined_to_folders_sees_and_writes_only_them() {
    let v = vault();
    let (c, _stop) = connect(&v, false, &["Journal"], None).await;
    let found = structured(&call(&c, "find_notes", json!({"query": "Kyoto"})).await);
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.starts_with("Journal/")),
        "{paths:?}"
    );
    let listed = structured(&call(&c, "list_notes", json!({})).await);
    assert_eq!(listed["total"], 2, "{listed}");
    check_errors(
        &c,
        &[
            (
                "read_note",
                json!({"path": "Trip.md"}),
                "OUT_OF_SCOPE",
                "path: `Trip.md` is outside the folders this server may use (Journal)",
            ),
            (
                "edit_note",
                json!({"path": "Trip.md", "heading": "Packing", "content": "x"}),
                "OUT_OF_SCOPE",
                "outside the folders",
            ),
            (
                "create_note",
                json!({"path": "Elsewhere/New.md"}),
                "OUT_OF_SCOPE",
                "outside the folders",
            ),
            (
                "move_note",
                json!({"path": "Journal/Day one.md", "to": "Out/Day one.md"}),
                "OUT_OF_SCOPE",
                "to: `Out/Day one.md` is outside",
            ),
            (
                "research_note",
                json!({"path": "Trip.md"}),
                "OUT_OF_SCOPE",
                "outside the folders",
            ),
            (
                "backlinks",
                json!({"path": "Places/Kyoto.md"}),
                "OUT_OF_SCOPE",
                "outside the folders",
            ),
        ],
    )
    .await;
    // Resources too.
    let resources = c.list_all_resources().await.unwrap();
    assert!(
        resources.iter().all(|r| r.uri.starts_with("note:///Journal/")),
        "{resources:?}"
    );
    // Research of a note inside cites only notes inside.
    let r = structured(&call(&c, "research_note", json!({"path": "Journal/Day one.md"})).await);
    let cited = r["research"]["sources"].to_string();
    assert!(!cited.contains("Places/") && !cited.contains("Trip.md"), "{cited}");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_tools_asked_for() {
    let v = vault();
    let (c, _stop) = connect(&v, false, &[], Some(&["find_notes", "read_note"])).await;
    let names: Vec<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, vec!["find_notes", "read_note"]);
    let e = scholia::mcp::Policy::new(false, Some(vec!["find_notes".into(), "rm_rf".into()])).unwrap_err();
    assert!(
        e.message
            .starts_with("--tools: `rm_rf` is not a tool; valid: find_notes, read_note, list_notes, backlinks"),
        "{}",
        e.message
    );
}

/// The same operations from a script: outline, edit with the hash (a stale one exits 1 with
/// CONFLICT's message), front matter, create, move, backlinks.
#[tokio::test(flavor = "multi_thread")]
async fn the_note_commands_for_scripts() {
    use crate::support::{stderr, stdout};
    let v = vault();
    let none = Vec::new();
    let out = v.cli(&none, &["outline", "Trip.md", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let o: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hash = o["hash"].as_str().unwrap().to_string();
    let out = v.cli(&none, &["outline", "Trip.md"]).await;
    assert!(
        stdout(&out).contains("    5  ## Packing (45 chars)"),
        "{}",
        stdout(&out)
    );
    let out = v
        .cli(
            &none,
            &[
                "edit",
                "Trip.md",
                "--heading",
                "Packing",
                "--mode",
                "replace",
                "--content",
                "- tickets",
                "--expected-hash",
                &hash,
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("replaced `## Packing` in Trip.md; its hash is now "),
        "{}",
        stdout(&out)
    );
    let out = v
        .cli(
            &none,
            &[
                "edit",
                "Trip.md",
                "--heading",
                "Packing",
                "--mode",
                "replace",
                "--content",
                "x",
                "--expected-hash",
                &hash,
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the note changed since it was read"),
        "{}",
        stderr(&out)
    );
    let now =
        serde_json::from_slice::<Value>(&v.cli(&none, &["outline", "Trip.md", "--json"]).await.stdout).unwrap()["hash"]
            .clone();
    let out = v
        .cli(
            &none,
            &[
                "edit",
                "Trip.md",
                "--set",
                "status=done",
                "--set",
                "rating=4",
                "--expected-hash",
                now.as_str().unwrap(),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        v.read("Trip.md").starts_with("---\nstatus: \"done\"\nrating: 4\n---\n"),
        "{}",
        v.read("Trip.md")
    );
    let out = v
        .cli(
            &none,
            &["edit", "Trip.md", "--heading", "Packing", "--mode", "sideways"],
        )
        .await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad flag value is usage: {}",
        stderr(&out)
    );
    let out = v.cli(&none, &["create", "Notes/Idea", "--template", "Daily"]).await;
    assert!(
        out.status.success() && v.read("Notes/Idea.md").starts_with("# Idea\n"),
        "{}",
        stderr(&out)
    );
    let out = v.cli(&none, &["move", "Places/Kyoto.md", "Kyoto.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("moved Places/Kyoto.md to Kyoto.md; 0 links in 0 notes rewritten"),
        "{}",
        stdout(&out)
    );
    let out = v.cli(&none, &["move", "Kyoto.md", "Japan/Kyōto city.md"]).await;
    assert!(
        stdout(&out).starts_with("moved Kyoto.md to Japan/Kyōto city.md; 4 links in 2 notes rewritten"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = v.cli(&none, &["backlinks", "Japan/Kyōto city.md"]).await;
    assert!(
        stdout(&out).contains("Journal/Day one.md:3: Arrived in [[Kyōto city]]"),
        "{}",
        stdout(&out)
    );
}
