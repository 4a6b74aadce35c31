//! Meaning (issue 39): an OpenAI-compatible embeddings endpoint (the fake knows a few
//! concepts by several names) and the local model, on every surface. A question that shares no
//! word with a note finds it; a dead endpoint leaves words answering with one warning, exit 0.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::mcp::{call, text};
use crate::support::{EnvVars, LspClient, TestVault, env, fakes, stderr, stdout};

fn endpoint(server: &scholia_fakes::FakeServer, model: &str) -> EnvVars {
    env(&[
        ("SCHOLIA_EMBED_BASE_URL", &format!("{}/v1", server.base())),
        ("SCHOLIA_EMBED_MODEL", model),
    ])
}

/// `fizzy beverage` shares no word with the kombucha note; the endpoint knows tea and soda
/// are drinks.
const QUESTION: &str = "fizzy beverage";

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_finds_by_meaning_and_survives_a_dead_endpoint() {
    let server = fakes().await;
    let v = TestVault::example();
    assert!(!v.read("Kombucha.md").to_lowercase().contains("fizzy"));
    let e = endpoint(&server, "fake-embed:rate-limit-first=1");
    let out = v.cli(&e, &["index"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("vectors: 7 notes embedded"), "{}", stdout(&out));
    let lexical = v.cli(&e, &["search", QUESTION, "--mode", "lexical"]).await;
    assert!(!stdout(&lexical).contains("Kombucha.md"), "{}", stdout(&lexical));
    for mode in ["hybrid", "semantic"] {
        let out = v.cli(&e, &["search", QUESTION, "--mode", mode, "--limit", "2"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).starts_with("Kombucha.md"), "{mode}: {}", stdout(&out));
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    }
    // The index knew the vectors were current: nothing embedded again.
    let again = v.cli(&e, &["index"]).await;
    assert!(
        stdout(&again).contains("vectors: 0 notes embedded"),
        "{}",
        stdout(&again)
    );

    // The endpoint goes down: words answer, one warning, exit 0.
    let down = endpoint(&server, "fake-embed:down");
    let out = v.cli(&down, &["search", "kombucha"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Kombucha.md"), "{}", stdout(&out));
    let warnings = said(&out);
    assert!(warnings[0].contains("503"), "{warnings:?}");
    // It goes down between the probe and the vectors: `index` says so once, exit 0.
    let v2 = TestVault::example();
    let out = v2.cli(&endpoint(&server, "fake-embed:down-after=1"), &["index"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("vectors: 0 notes embedded"), "{}", stdout(&out));
    assert!(said(&out)[0].contains("503"), "{}", stderr(&out));
    // A bad setting is an error naming the field.
    let bad = env(&[("SCHOLIA_EMBED_BASE_URL", "ftp://x"), ("SCHOLIA_EMBED_MODEL", "m")]);
    let out = v.cli(&bad, &["search", "kombucha"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("SCHOLIA_EMBED_BASE_URL"), "{}", stderr(&out));
    let out = v
        .cli(&env(&[("SCHOLIA_EMBED_MODEL_PATH", "/nowhere")]), &["search", "x"])
        .await;
    assert!(stderr(&out).contains("SCHOLIA_EMBED_MODEL_PATH") && stderr(&out).contains("sentence-transformers"));
}

/// The settings' prompts reach the endpoint: every note after the document prompt, the question
/// after the query prompt (nomic-embed-text's task prefixes, which the API does not add), and a
/// search still finds by meaning. A prompt longer than 1,000 characters is an error naming it.
#[tokio::test(flavor = "multi_thread")]
async fn the_settings_prompts_go_before_notes_and_questions() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut e = endpoint(&server, "fake-embed:prompted");
    e.extend(env(&[
        ("SCHOLIA_EMBED_QUERY_PROMPT", "search_query: "),
        ("SCHOLIA_EMBED_DOCUMENT_PROMPT", "search_document: "),
    ]));
    let out = v.cli(&e, &["index"]).await;
    assert!(stdout(&out).contains("vectors: 7 notes embedded"), "{}", stdout(&out));
    let out = v
        .cli(&e, &["search", QUESTION, "--mode", "semantic", "--limit", "1"])
        .await;
    assert!(stdout(&out).starts_with("Kombucha.md"), "{}", stdout(&out));
    let inputs: Vec<String> = server
        .requests("/v1/embeddings")
        .iter()
        .filter(|b| b["model"] == "fake-embed:prompted")
        .flat_map(|b| b["input"].as_array().cloned().unwrap_or_default())
        .map(|i| i.as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        inputs.iter().any(|i| i == &format!("search_query: {QUESTION}")),
        "{inputs:?}"
    );
    let notes: Vec<&String> = inputs.iter().filter(|i| !i.starts_with("search_query: ")).collect();
    assert!(notes.len() >= 8, "{inputs:?}"); // the probe and the 7 notes
    assert!(notes.iter().all(|i| i.starts_with("search_document: ")), "{inputs:?}");
    // The editor's status (`:checkhealth scholia`) says how the model reads, prompts included.
    let mut lsp = v.lsp_ready(&e).await;
    let started = Instant::now();
    let reads = loop {
        let status = lsp
            .request(
                "workspace/executeCommand",
                json!({"command": "scholia.status", "arguments": []}),
            )
            .await;
        let reads = status["providers"]["embeddings"]["reads"].clone();
        if !reads.is_null() || started.elapsed() > Duration::from_secs(30) {
            break reads;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(reads["dimensions"], scholia_fakes::embed::DIMS, "{reads}");
    assert_eq!(reads["query_prompt"], "search_query: ", "{reads}");
    assert_eq!(reads["document_prompt"], "search_document: ", "{reads}");
    lsp.shutdown().await;
    let long = "x".repeat(1001);
    let out = v
        .cli(&env(&[("SCHOLIA_EMBED_QUERY_PROMPT", &long)]), &["search", "x"])
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("SCHOLIA_EMBED_QUERY_PROMPT") && stderr(&out).contains("1000"),
        "{}",
        stderr(&out)
    );
}

/// What a command said of its embeddings failing: one line, on stderr (it was two: the log's
/// and the CLI's own).
fn said(out: &std::process::Output) -> Vec<String> {
    let err = stderr(out);
    let lines: Vec<String> = err
        .lines()
        .filter(|l| l.contains("words only"))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("scholia: warning: embeddings"), "{err}");
    lines
}

/// An endpoint that hangs once the vectors are made, or that nothing listens on: a search
/// waits seconds, not the minute a batch of the vault's vectors may take, before words
/// answer (it took 8 s of retries on a refused port and 60 s on a hung host); a server
/// searching again does not wait again.
#[tokio::test(flavor = "multi_thread")]
async fn a_hung_or_absent_endpoint_gives_way_to_words_within_seconds() {
    let server = fakes().await;
    let v = TestVault::example();
    // The probe and one batch make the vectors; every later request hangs.
    let hangs = endpoint(&server, "fake-embed:stall-after=2");
    let out = v.cli(&hangs, &["index"]).await;
    assert!(stdout(&out).contains("vectors: 7 notes embedded"), "{}", stdout(&out));
    let words_within = |limit: Duration, out: &std::process::Output, took: Duration| {
        assert!(out.status.success(), "{}", stderr(out));
        assert!(stdout(out).starts_with("Kombucha.md"), "{}", stdout(out));
        assert!(took < limit, "{took:?}");
        said(out);
    };
    let started = Instant::now();
    let out = v.cli(&hangs, &["search", "kombucha"]).await;
    words_within(scholia_fakes::embed::STALL / 4, &out, started.elapsed());

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = env(&[
        ("SCHOLIA_EMBED_BASE_URL", &format!("http://127.0.0.1:{port}/v1")),
        ("SCHOLIA_EMBED_MODEL", "m"),
    ]);
    let started = Instant::now();
    let out = v.cli(&nobody, &["search", "kombucha"]).await;
    words_within(Duration::from_secs(3), &out, started.elapsed());
    // It says why: not only reqwest's "error sending request".
    assert!(said(&out)[0].contains("refused"), "{}", stderr(&out));

    // An MCP server makes its vectors in the background (two requests), then its question
    // hangs: words answer, said once; the next search does not ask the endpoint again.
    // (A model of its own: the fake counts requests by model.)
    let v = TestVault::example();
    let (c, _stop) = crate::mcp::connect(&v, &endpoint(&server, "fake-embed:stall-after=2,server")).await;
    let started = Instant::now();
    let (found, took) = loop {
        let asked = Instant::now();
        let r = call(&c, "find_notes", json!({"query": "kombucha", "limit": 3})).await;
        let s = r.structured_content.clone().unwrap();
        let warned = s["warnings"].as_array().is_some_and(|w| !w.is_empty());
        if warned || started.elapsed() > scholia_fakes::embed::STALL / 2 {
            break (s, asked.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(found["warnings"][0].as_str().unwrap().contains("words only"), "{found}");
    assert_eq!(found["mode"], "lexical", "{found}");
    assert_eq!(found["results"][0]["path"], "Kombucha.md", "{found}");
    assert!(took < scholia_fakes::embed::STALL / 4, "{took:?}");
    let asked = Instant::now();
    let r = call(&c, "find_notes", json!({"query": "kombucha", "limit": 3})).await;
    let s = r.structured_content.clone().unwrap();
    assert!(asked.elapsed() < Duration::from_secs(2), "{:?}", asked.elapsed());
    assert_eq!(
        (s["mode"].as_str(), s["results"][0]["path"].as_str()),
        (Some("lexical"), Some("Kombucha.md")),
        "{s}"
    );

    // The language server alike.
    let v = TestVault::example();
    let mut lsp: LspClient = v.lsp_ready(&endpoint(&server, "fake-embed:stall-after=2,editor")).await;
    let search = json!({"command": "scholia.search", "arguments": [{"query": "kombucha"}]});
    let started = Instant::now();
    let (found, took) = loop {
        let asked = Instant::now();
        let r = lsp.request("workspace/executeCommand", search.clone()).await;
        if r["warnings"].as_array().is_some_and(|w| !w.is_empty())
            || started.elapsed() > scholia_fakes::embed::STALL / 2
        {
            break (r, asked.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(found["warnings"][0].as_str().unwrap().contains("words only"), "{found}");
    assert_eq!(
        (found["mode"].as_str(), found["hits"][0]["path"].as_str()),
        (Some("lexical"), Some("Kombucha.md")),
        "{found}"
    );
    assert!(took < scholia_fakes::embed::STALL / 4, "{took:?}");
    let asked = Instant::now();
    let r = lsp.request("workspace/executeCommand", search).await;
    assert!(asked.elapsed() < Duration::from_secs(2), "{:?}", asked.elapsed());
    assert_eq!(r["hits"][0]["path"], "Kombucha.md", "{r}");
    lsp.shutdown().await;
}

/// An MCP server computes the vectors in the background; `find_notes` fuses once they are
/// there, and says which mode it used.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_and_lsp_search_by_meaning() {
    let server = fakes().await;
    let v = TestVault::example();
    let e = endpoint(&server, "fake-embed");
    let (c, _stop) = crate::mcp::connect(&v, &e).await;
    let started = Instant::now();
    let found = loop {
        let r = call(&c, "find_notes", json!({"query": QUESTION, "limit": 3})).await;
        let s = r.structured_content.clone().unwrap();
        if s["mode"] == "hybrid" || started.elapsed() > Duration::from_secs(20) {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(found["results"][0]["path"], "Kombucha.md", "{found}");
    let r = call(
        &c,
        "find_notes",
        json!({"query": QUESTION, "mode": "semantic", "limit": 1}),
    )
    .await;
    assert!(text(&r).contains("Kombucha.md"), "{}", text(&r));
    let r = call(&c, "find_notes", json!({"query": QUESTION, "mode": "fuzzy"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("lexical") && text(&r).contains("semantic") && text(&r).contains("hybrid"));

    // The language server on the same vault reads the vectors the MCP server saved.
    let mut lsp: LspClient = v.lsp_ready(&e).await;
    let started = Instant::now();
    let found = loop {
        let r = lsp
            .request(
                "workspace/executeCommand",
                json!({"command": "scholia.search", "arguments": [{"query": QUESTION, "mode": "semantic"}]}),
            )
            .await;
        if r["hits"][0]["path"] == "Kombucha.md" || started.elapsed() > Duration::from_secs(20) {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(found["hits"][0]["path"], "Kombucha.md", "{found}");
    assert_eq!(found["mode"], "semantic");
    lsp.shutdown().await;
}

/// The local model: a paraphrase finds its note by meaning (skipped without the model unless
/// SCHOLIA_REQUIRE_E2E=1).
#[tokio::test(flavor = "multi_thread")]
async fn the_local_model_answers_a_paraphrase() {
    let Some(model) = crate::support::embed_model() else {
        return;
    };
    let v = TestVault::example();
    let e = env(&[("SCHOLIA_EMBED_MODEL_PATH", &model.display().to_string())]);
    let out = v.cli(&e, &["index"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = v
        .cli(
            &e,
            &[
                "search",
                "how hot should the room be",
                "--limit",
                "1",
                "--mode",
                "semantic",
            ],
        )
        .await;
    assert!(
        stdout(&out).starts_with("Fermentation temperature.md"),
        "{}",
        stdout(&out)
    );
}

/// Related notes find by meaning too: offline research on a note lists one that shares no
/// word with it but its meaning (and quotes its sentence), only when the vault has vectors.
#[tokio::test(flavor = "multi_thread")]
async fn related_notes_find_a_note_by_its_meaning() {
    let server = fakes().await;
    let files = [
        ("Kombucha.md", "# Kombucha\n\nA scoby ferments sweet tea for a week.\n"),
        (
            "Party.md",
            "# Party\n\nWe served fizzy soda and sparkling beverage at the party.\n",
        ),
        ("Taxes.md", "# Taxes\n\nFile the income return before April ends.\n"),
        ("Garden.md", "# Garden\n\nWater the tomatoes every morning in summer.\n"),
    ];
    let research = async |e: &EnvVars| {
        let v = TestVault::with_files(&files);
        let out = v.cli(e, &["index"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let out = v.cli(e, &["research", "Kombucha.md"]).await;
        (out, v.read("Kombucha.md"))
    };
    let (out, with) = research(&endpoint(&server, "fake-embed")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(with.contains("[[Party]]"), "{with}");
    assert!(with.contains("fizzy soda"), "the sentence that explains it: {with}");
    assert!(!with.contains("[[Taxes]]") && !with.contains("[[Garden]]"), "{with}");
    // By words alone it shares nothing with any note: nothing to research, nothing written.
    let (out, without) = research(&Vec::new()).await;
    assert!(stderr(&out).contains("no words it shares"), "{}", stderr(&out));
    assert!(!without.contains("[[Party]]"), "{without}");
}

/// Ctrl-C while `scholia index` waits on a hung endpoint, for its first answer or for a batch
/// of vectors, ends it at once (it did nothing for the minute a cold model is granted): the
/// word index is saved, status 130 as when the words are stopped, and the next run makes the
/// vectors.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_the_wait_on_a_hung_endpoint() {
    let server = fakes().await;
    // The request that hangs is the probe's (the first), or the batch's (the second).
    for (model, hangs) in [
        ("fake-embed:stall-after=0,ctrl-c", 1),
        ("fake-embed:stall-after=1,ctrl-c", 2),
    ] {
        let v = TestVault::example();
        let child = v
            .cmd()
            .envs(endpoint(&server, model).iter().map(|(k, v)| (k, v)))
            .arg("index")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let asked = || {
            server
                .requests("/v1/embeddings")
                .iter()
                .filter(|b| b["model"] == model)
                .count()
        };
        let started = Instant::now();
        while asked() < hangs {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{model}: asked {} times",
                asked()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let signalled = Instant::now();
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let took = signalled.elapsed();
        assert!(took < Duration::from_secs(3), "{model}: {took:?}");
        assert_eq!(out.status.code(), Some(130), "{model}: {}", stderr(&out));
        assert!(stderr(&out).contains("the word index is saved"), "{}", stderr(&out));
        assert!(stdout(&out).contains("7 notes indexed"), "{}", stdout(&out));
        if hangs == 2 {
            assert!(
                stdout(&out).contains("vectors: 0 notes embedded") && stdout(&out).contains("7 left for the next run"),
                "{}",
                stdout(&out)
            );
        }
        // The words answer, and the next run makes the vectors.
        let found = v.cli(&[], &["search", "kombucha"]).await;
        assert!(stdout(&found).starts_with("Kombucha.md"), "{}", stdout(&found));
        let next = v.cli(&endpoint(&server, "fake-embed:after-ctrl-c"), &["index"]).await;
        assert!(next.status.success(), "{}", stderr(&next));
        assert!(stdout(&next).contains("vectors: 7 notes embedded"), "{}", stdout(&next));
    }
}
