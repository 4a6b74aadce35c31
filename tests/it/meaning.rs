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
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{}", stderr(&out));
    assert!(
        warnings[0].contains("503") && warnings[0].contains("words only"),
        "{warnings:?}"
    );
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
