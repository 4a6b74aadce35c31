//! The MCP server: every error case in process over duplex pipes (rmcp's own client), the MCP
//! server beside the language server on one vault, and the real MCP Python SDK end to end
//! (`tests/e2e/mcp/client.py`; skipped without `pip install mcp` unless `SCHOLIA_REQUIRE_E2E=1`).

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::{EnvVars, TestVault, env, fakes};

pub(crate) type Client = RunningService<RoleClient, ()>;

/// An MCP server in this process on `v` (with `extra` environment), and a client connected to
/// it over pipes. The server stops when the returned token is dropped.
pub(crate) async fn connect(v: &TestVault, extra: &EnvVars) -> (Client, tokio_util::sync::DropGuard) {
    connect_with(
        v,
        extra,
        scholia::mcp::Policy::default(),
        scholia::index::Scope::default(),
    )
    .await
}

/// [`connect`] to a server offering what `policy` allows, confined to `scope`.
pub(crate) async fn connect_with(
    v: &TestVault,
    extra: &EnvVars,
    policy: scholia::mcp::Policy,
    scope: scholia::index::Scope,
) -> (Client, tokio_util::sync::DropGuard) {
    serve_to(v, extra, policy, scope, ()).await
}

/// An MCP server in this process on `v`, and `client` (a handler saying what the client
/// declares) connected to it.
pub(crate) async fn serve_to<C: rmcp::ClientHandler>(
    v: &TestVault,
    extra: &EnvVars,
    policy: scholia::mcp::Policy,
    scope: scholia::index::Scope,
    client: C,
) -> (RunningService<RoleClient, C>, tokio_util::sync::DropGuard) {
    let map = v.env(extra);
    let engine = scholia::engine::Engine::load(&map, Some(&v.root), None).unwrap();
    let dirs = scholia::config::Dirs::from_env(&map).unwrap();
    let host = Arc::new(scholia::engine::Host::default());
    let shutdown = host.shutdown_token().clone();
    let server = scholia::mcp::Scholia::with_policy(Arc::new(engine), host, policy, scope);
    server.open_vault(v.root.clone(), dirs);
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    tokio::spawn(scholia::mcp::serve_streams(server, server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_side);
    let client = client.serve((client_read, client_write)).await.unwrap();
    (client, shutdown.drop_guard())
}

pub(crate) async fn call(c: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().expect("arguments are an object");
    c.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

pub(crate) fn text(r: &CallToolResult) -> String {
    let v = serde_json::to_value(r).unwrap();
    v["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `tool` with `args`: `None` when the result is a tool error whose code is `code` and
/// whose message contains `message`, else what is wrong.
pub(crate) async fn error_mismatch(c: &Client, tool: &str, args: Value, code: &str, message: &str) -> Option<String> {
    let r = call(c, tool, args.clone()).await;
    let shown = text(&r);
    if r.is_error != Some(true) {
        return Some(format!("{tool} {args}: not an error: {shown}"));
    }
    // Errors are `[CODE] message` text with no structured content: a client that validates
    // structured content against the output schema (the TypeScript SDK) would hide them.
    if r.structured_content.is_some() {
        return Some(format!("{tool} {args}: structured content on an error: {shown}"));
    }
    let (got_code, got_message) = match shown.strip_prefix('[').and_then(|s| s.split_once("] ")) {
        Some((code, message)) => (Some(code), message),
        None => (None, shown.as_str()),
    };
    if got_code != Some(code) || !got_message.contains(message) {
        return Some(format!(
            "{tool} {args}:\n  got  [{}] {got_message}\n  want [{code}] …{message}…",
            got_code.unwrap_or("-")
        ));
    }
    if got_message.ends_with('.') {
        return Some(format!("{tool} {args}: a trailing period: {got_message}"));
    }
    None
}

pub(crate) async fn check_errors(c: &Client, cases: &[(&str, Value, &str, &str)]) {
    let mut wrong = Vec::new();
    for (tool, args, code, message) in cases {
        wrong.extend(error_mismatch(c, tool, args.clone(), code, message).await);
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

const INVALID: &str = "INVALID_INPUT";

/// research_note over research the owner edited, or an answer over the owner's own
/// subsection: a tool error with its code, the note untouched (the CLI's case is
/// `attacks::the_owner_s_words_in_research_are_never_replaced`).
#[tokio::test(flavor = "multi_thread")]
async fn research_never_replaces_the_owner_s_words() {
    let v = TestVault::example();
    let edited = "# Kombucha\n\nSweet tea and a SCOBY.\n\n## Research\n\n<!-- scholia:research run=r at=2026-11-29 depth=offline model=none sources=1 above=0123456789abcdef words=0123456789abcdef -->\n- [[Koji]] and my own remark\n\n<!-- /scholia:research -->\n";
    v.write("Kombucha.md", edited);
    let (c, _stop) = connect(&v, &env(&[])).await;
    #[rustfmt::skip]
    let cases: &[(&str, Value, &str, &str)] = &[
        ("research_note", json!({"path": "Kombucha.md"}), "RESEARCH_EDITED", "the research scholia wrote under `## Research` (line 7) was edited since"),
    ];
    check_errors(&c, cases).await;
    assert_eq!(std::fs::read_to_string(v.path("Kombucha.md")).unwrap(), edited);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_invalid_argument_is_a_tool_error_naming_the_field() {
    let v = TestVault::example();
    let before = std::fs::read_to_string(v.path("Kombucha.md")).unwrap();
    let gemini = crate::support::fake_gemini().display().to_string();
    let (c, _stop) = connect(&v, &env(&[("OPENROUTER_API_KEY", "k"), ("GEMINI_CLI", &gemini)])).await;
    #[rustfmt::skip]
    let cases: &[(&str, Value, &str, &str)] = &[
        ("find_notes", json!({}), INVALID, "query: missing; give words to search for"),
        ("find_notes", json!({"query": "  "}), INVALID, "query: empty; give words to search for"),
        ("find_notes", json!({"query": 3}), INVALID, "query: `3` is not valid; valid: words to search for"),
        ("find_notes", json!({"query": "x", "limit": 0}), INVALID, "limit: `0` is not valid; valid: an integer from 1 to 50"),
        ("find_notes", json!({"query": "x", "limit": 51}), INVALID, "limit: `51` is not valid; valid: an integer from 1 to 50"),
        ("find_notes", json!({"query": "x", "limit": -1}), INVALID, "limit: `-1` is not valid"),
        ("find_notes", json!({"query": "x", "limit": 2.5}), INVALID, "limit: `2.5` is not valid"),
        ("find_notes", json!({"query": "x", "limit": "ten"}), INVALID, "limit: `ten` is not valid"),
        ("find_notes", json!({"query": "x", "lmit": 1}), INVALID, "lmit: not an argument of find_notes; valid: query, limit"),
        ("read_note", json!({}), INVALID, "path: missing; give a note path relative to the vault"),
        ("read_note", json!({"path": "../secret.md"}), "INVALID_PATH", "`..` is not allowed"),
        ("read_note", json!({"path": "/etc/passwd"}), "INVALID_PATH", "path `/etc/passwd`: files without an extension are not notes; valid extensions: .md, .markdown, .txt"),
        ("read_note", json!({"path": "/etc/hosts.md"}), "INVALID_PATH", "path `/etc/hosts.md`: outside the vault"),
        ("read_note", json!({"path": "Missing.md"}), "NOTE_NOT_FOUND", "no such note"),
        ("read_note", json!({"path": "Kombucha.md", "heading": "Nope"}), "HEADING_NOT_FOUND", "heading: no heading `Nope` in the note; its headings: `# Kombucha` (line 5)"),
        ("read_note", json!({"path": "Kombucha.md", "offset": 1000000}), INVALID, "offset: `1000000` is not valid; valid: a number of characters from 0 to"),
        ("read_note", json!({"path": "Kombucha.md", "offset": -3}), INVALID, "offset: `-3` is not valid"),
        ("read_note", json!({"path": "Kombucha.md", "heading": 1}), INVALID, "heading: `1` is not valid"),
        ("list_notes", json!({"limit": 0}), INVALID, "limit: `0` is not valid; valid: an integer from 1 to 200"),
        ("list_notes", json!({"limit": 201}), INVALID, "limit: `201` is not valid"),
        ("list_notes", json!({"folder": "../etc"}), INVALID, "folder"),
        ("list_notes", json!({"folder": "/etc"}), INVALID, "folder: `/etc` is not valid"),
        ("list_notes", json!({"folder": "Jornal"}), INVALID, "folder: `Jornal` does not exist in the vault; valid: a folder of the vault: "),
        ("list_notes", json!({"tag": ["a"]}), INVALID, "tag: `[\"a\"]` is not valid"),
        ("list_notes", json!({"page": 2}), INVALID, "page: not an argument of list_notes; valid: folder, tag, offset, limit"),
        ("research_note", json!({}), INVALID, "path: missing"),
        ("research_note", json!({"path": "Kombucha.md", "depth": "medium"}), INVALID, "depth: `medium` is not valid; valid: shallow, deep"),
        ("research_note", json!({"path": "Kombucha.md", "depth": 2}), INVALID, "depth: `2` is not valid; valid: shallow, deep"),
        ("research_note", json!({"path": "../outside.md"}), "INVALID_PATH", "`..` is not allowed"),
        ("research_note", json!({"path": "Missing.md"}), "NOTE_NOT_FOUND", "no such note"),
        ("research_note", json!({"path": "Kombucha.md", "focus": 7}), INVALID, "focus: `7` is not valid"),
        ("deep_search", json!({}), INVALID, "query: missing; give the question to research"),
        ("deep_search", json!({"query": "  "}), INVALID, "query: empty; give the question to research"),
        ("deep_search", json!({"query": "q", "max_iterations": 0}), INVALID, "max_iterations: `0` is not valid; valid: an integer from 1 to 50"),
        ("deep_search", json!({"query": "q", "max_iterations": 51}), INVALID, "max_iterations: `51` is not valid"),
        ("deep_search", json!({"query": "q", "backend": "bard"}), INVALID, "backend: `bard` is not valid; valid: gemini-cli, llm"),
        ("deep_search", json!({"query": "q", "depth": 3}), INVALID, "depth: not an argument of deep_search"),
        ("deep_search", json!({"query": "q", "backend": "llm"}), "NOT_CONFIGURED", "backend: llm needs a research LLM; set SCHOLIA_LLM_BASE_URL and SCHOLIA_LLM_MODEL"),
        ("deep_search", json!({"query": "q", "note": "../x.md", "backend": "gemini-cli"}), "INVALID_PATH", "note `../x.md`: `..` is not allowed"),
        ("search", json!({}), "INVALID_QUERY", "query: empty; give the question to ask"),
        ("search", json!({"query": "x", "model": "gpt"}), "INVALID_MODEL", "Invalid model 'gpt'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"),
        ("search", json!({"query": "x", "timeout": 1000}), "INVALID_TIMEOUT", "timeout: `1000` is not valid; valid: an integer number of milliseconds from 5000 to 600000"),
        ("search", json!({"query": "x", "timeout": "soon"}), "INVALID_TIMEOUT", "timeout: `soon` is not valid"),
        ("search", json!({"query": "x", "note": "Missing.md"}), "NOTE_NOT_FOUND", "note `Missing.md`: no such note"),
        ("search", json!({"query": "x", "note": "../x.md"}), "INVALID_PATH", "note `../x.md`: `..` is not allowed"),
        ("start_deep_research", json!({}), INVALID, "query: missing"),
        ("start_deep_research", json!({"query": "", "note": "Missing.md"}), "NOTE_NOT_FOUND", "note `Missing.md`: no such note"),
        ("fetch_page", json!({}), INVALID, "url: missing; give an http(s) URL"),
        ("fetch_page", json!({"url": "ftp://example.com/x"}), "INVALID_URL", "url `ftp://example.com/x`: only http and https URLs are fetched"),
        ("fetch_page", json!({"url": "not a url"}), "INVALID_URL", "url `not a url`: not a valid URL"),
        ("fetch_page", json!({"url": "http://169.254.169.254/latest/meta-data"}), "BLOCKED_ADDRESS", "refused"),
        ("fetch_page", json!({"url": "http://example.com", "max_chars": 0}), INVALID, "max_chars: `0` is not valid; valid: an integer from 1 to 24000"),
    ];
    check_errors(&c, cases).await;
    // Remote clients learn nothing of the server's file system.
    for (tool, args) in [
        ("read_note", json!({"path": "/etc/hosts.md"})),
        ("research_note", json!({"path": "/tmp/x.md"})),
        ("list_notes", json!({"folder": "Nope"})),
    ] {
        let shown = text(&call(&c, tool, args).await);
        let root = v.root.canonicalize().unwrap();
        assert!(!shown.contains(root.to_str().unwrap()), "{tool}: {shown}");
    }
    assert_eq!(
        std::fs::read_to_string(v.path("Kombucha.md")).unwrap(),
        before,
        "no error touched a note"
    );
    c.cancel().await.unwrap();
}

/// Hostile arguments: query syntax a thousand deep, a 10 MB query, report directories outside
/// the vault. Each is a tool error (or a plain search), and the server keeps serving.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_arguments_never_take_the_server_down() {
    let v = TestVault::with_files(&[("Koji.md", "# Koji\n\nKoji grows on rice.\n")]);
    let (c, _stop) = connect(&v, &Vec::new()).await;
    let r = call(&c, "find_notes", json!({"query": format!("{}koji", "(".repeat(990))})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let big = "koji ".repeat(2_000_000);
    let elsewhere = tempfile::tempdir().unwrap();
    check_errors(
        &c,
        &[
            (
                "find_notes",
                json!({"query": big}),
                "INVALID_INPUT",
                "query: 10000000 characters is longer than 200000",
            ),
            (
                "find_notes",
                json!({"query": "koji ".repeat(300)}),
                "INVALID_QUERY",
                "query: 1500 characters is longer than 1000",
            ),
            (
                "save_research_to_markdown",
                json!({"task_id": "t", "output_dir": "../../x"}),
                "INVALID_PATH",
                "output_dir `../../x`: `..` is not allowed",
            ),
            (
                "save_research_to_markdown",
                json!({"task_id": "t", "output_dir": elsewhere.path().to_str().unwrap()}),
                "INVALID_PATH",
                "outside the vault and scholia's data directory",
            ),
        ],
    )
    .await;
    assert!(std::fs::read_dir(elsewhere.path()).unwrap().next().is_none());
    let r = call(&c, "find_notes", json!({"query": "koji"})).await;
    assert!(text(&r).contains("Koji.md"), "still serving: {}", text(&r));
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_that_need_a_provider_say_which_setting_is_missing() {
    let v = TestVault::example();
    let (c, _stop) = connect(&v, &env(&[("GEMINI_CLI", "/nonexistent/gemini")])).await;
    check_errors(
        &c,
        &[
            (
                "search",
                json!({"query": "what is koji?"}),
                "NOT_CONFIGURED",
                "OPENROUTER_API_KEY",
            ),
            (
                "deep_search",
                json!({"query": "what is koji?", "backend": "gemini-cli"}),
                "CLI_NOT_FOUND",
                "/nonexistent/gemini",
            ),
        ],
    )
    .await;
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn protocol_faults_are_protocol_errors() {
    let v = TestVault::example();
    let (c, _stop) = connect(&v, &Vec::new()).await;
    let e = c
        .call_tool(CallToolRequestParams::new("frobnicate"))
        .await
        .expect_err("an unknown tool is a protocol error");
    assert!(
        e.to_string()
            .contains("tool `frobnicate` does not exist; tools: find_notes"),
        "{e}"
    );
    for uri in ["file:///etc/passwd", "note:///../outside.md", "note:///Missing.md"] {
        let e = c
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .expect_err("a bad resource is a protocol error");
        assert!(!e.to_string().is_empty(), "{uri}");
    }
    let e = c
        .list_resources(Some(
            rmcp::model::PaginatedRequestParams::default().with_cursor(Some("abc".into())),
        ))
        .await
        .expect_err("a cursor the server never gave");
    assert!(e.to_string().contains("cursor `abc`"), "{e}");
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn results_are_bounded_and_long_notes_come_in_pages() {
    let v = TestVault::example();
    let long: String = (0..3000).map(|i| format!("Line {i} about koji and rice.\n")).collect();
    v.write("Long.md", &format!("# Long\n\n{long}"));
    let (c, _stop) = connect(&v, &Vec::new()).await;
    let mut offset = 0;
    let mut whole = String::new();
    let mut pages = 0;
    loop {
        let r = call(&c, "read_note", json!({"path": "Long.md", "offset": offset})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        let sc = r.structured_content.clone().unwrap();
        let content = sc["content"].as_str().unwrap();
        assert!(content.chars().count() <= scholia::index::PAGE_CHARS);
        assert!(text(&r).chars().count() <= scholia::mcp::MAX_TEXT + 500);
        whole.push_str(content);
        pages += 1;
        match sc["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(whole, v.read("Long.md"), "the pages are the note");
    assert_eq!(pages, 5);
    // A resource read of a long note says how to read the rest.
    let r = c
        .read_resource(ReadResourceRequestParams::new("note:///Long.md"))
        .await
        .unwrap();
    let got = serde_json::to_value(&r).unwrap();
    let body = got["contents"][0]["text"].as_str().unwrap();
    assert!(
        body.contains("read the rest with read_note(path=\"Long.md\", offset=20000)"),
        "{}",
        &body[body.len() - 200..]
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_answer_is_cut_with_how_to_read_all_of_it() {
    let v = TestVault::example();
    let fake = fakes().await;
    let (c, _stop) = connect(&v, &crate::support::openrouter_env(&fake, "k")).await;
    let r = call(&c, "search", json!({"query": "how does koji grow? fake:long=60000"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let sc = r.structured_content.clone().unwrap();
    assert_eq!(sc["answer"].as_str().unwrap().chars().count(), scholia::mcp::MAX_FIELD);
    assert_eq!(sc["answer_truncated"], true);
    let shown = text(&r);
    let end = |s: &str| {
        s.chars()
            .rev()
            .take(400)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    assert!(
        shown.contains("[… cut at 18000 of 60")
            && shown.contains("call again with `note` to write the whole text into a note"),
        "…{}",
        end(&shown)
    );
    assert!(
        shown.contains("Sources:\n1. https://sonar.example/one"),
        "…{}",
        end(&shown)
    );
    // What structuredContent holds, for clients that show only text (the seed's metadata).
    assert!(
        shown.contains("Search Metadata:\n- model: sonar (perplexity/sonar)\n- timeout: ")
            && shown.contains("- usage: 52 tokens"),
        "…{}",
        end(&shown)
    );
    assert!(shown.chars().count() <= scholia::mcp::MAX_TEXT);

    let r = call(
        &c,
        "search",
        json!({"query": "how does koji grow? fake:long=60000", "note": "Kombucha.md"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains("read the whole text with read_note(path, heading)"),
        "…{}",
        end(&text(&r))
    );
    let written = &r.structured_content.as_ref().unwrap()["written_to"];
    assert_eq!(written["path"], "Kombucha.md");
    // The note holds the start of it and a link to the whole answer, saved beside the reports.
    let note = v.read("Kombucha.md");
    let at = note
        .find("the whole answer is in [[research_reports/")
        .expect("a link to the rest");
    let target = note[at..].split("[[").nth(1).unwrap().split("]]").next().unwrap();
    assert!(
        v.read(&format!("{target}.md")).len() > 60_000,
        "the whole answer is saved"
    );
    let r = call(
        &c,
        "read_note",
        json!({"path": "Kombucha.md", "heading": written["heading"]}),
    )
    .await;
    assert_eq!(r.structured_content.unwrap()["next_offset"], 20_000, "read in pages");
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_are_paged() {
    let v = TestVault::empty();
    for i in 0..450 {
        v.write(&format!("n/{i:03}.md"), &format!("# Note {i}\n"));
    }
    let (c, _stop) = connect(&v, &Vec::new()).await;
    let mut cursor = None;
    let mut seen = Vec::new();
    loop {
        let page = c
            .list_resources(Some(rmcp::model::PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .unwrap();
        assert!(page.resources.len() <= 200);
        seen.extend(page.resources.iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 450);
    assert_eq!(seen[0], "note:///n/000.md");
    c.cancel().await.unwrap();
}

/// The server beside the language server, and real MCP clients (the Python and TypeScript SDKs).
mod clients;
