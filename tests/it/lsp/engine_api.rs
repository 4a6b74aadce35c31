//! The engine API behind the editor: one engine per server (one Gemini CLI probe), research
//! that keeps the questions deep search and Ask wrote, and a vault that cannot be opened.

use super::*;
use crate::support::{EnvVars, env, fake_env, fakes, gemini_env};

const NOTE: &str = "# Koji\n\n- Koji grows best at 30 °C.\n\nHow long does koji take to grow?\n";

fn selection(uri: &str, query: &str) -> Value {
    json!({"command": "scholia.deepSearch", "arguments": [{"uri": uri, "query": query}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn research_keeps_questions_and_the_cli_is_probed_once() {
    let fake = fakes().await;
    let v = TestVault::with_files(&[
        ("Koji.md", NOTE),
        ("Rice.md", "# Rice\n\nKoji grows on steamed rice.\n"),
    ]);
    let versions = v.home.join("versions.log");
    let mut all: EnvVars = fake_env(&fake, "fake");
    all.extend(gemini_env("valid"));
    all.extend(env(&[("GEMINI_FAKE_VERSION_LOG", versions.to_str().unwrap())]));
    let mut c = v.lsp_ready(&all).await;
    let uri = c.open(&v.path("Koji.md"), NOTE).await;
    for query in ["How long does koji take to grow?", "Which rice suits koji?"] {
        c.request("workspace/executeCommand", selection(&uri, query)).await;
        let message = c
            .progress_message("Deep search selection", Duration::from_secs(30))
            .await;
        assert!(message.starts_with("verified"), "{message}");
        c.notifications.clear();
    }
    let probes = std::fs::read_to_string(&versions).unwrap();
    assert_eq!(
        probes.lines().count(),
        1,
        "one Gemini CLI handle per process: `--version` runs once"
    );
    // Even the probe runs in a private directory of scholia's, never where it was started.
    let cwd = probes.trim_end().trim_start_matches("--version ");
    assert!(cwd.starts_with(v.home.join("config").to_str().unwrap()), "{cwd}");
    c.request(
        "workspace/executeCommand",
        json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "shallow"}]}),
    )
    .await;
    let message = c.progress_message("Research this note", Duration::from_secs(30)).await;
    assert!(message.starts_with("Wrote"), "{message}");
    let text = c.docs[&uri].0.clone();
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("`{s}` missing:\n{text}"));
    // Research's own part first, both questions kept after it, each once.
    assert!(at("**Sources**") < at("### How long does koji take to grow?"), "{text}");
    assert!(at("### How long does koji take to grow?") < at("### Which rice suits koji?"));
    assert_eq!(text.matches("### Which rice suits koji?").count(), 1);
    assert_eq!(text.matches("\n## Research\n").count(), 1);
    // Research again: still one copy of everything.
    c.notifications.clear();
    c.request(
        "workspace/executeCommand",
        json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "shallow"}]}),
    )
    .await;
    c.wait_progress_end("Research this note", Duration::from_secs(30))
        .await
        .unwrap();
    let again = c.docs[&uri].0.clone();
    assert_eq!(
        again.matches("### How long does koji take to grow?").count(),
        1,
        "{again}"
    );
    assert_eq!(again.matches("**Sources**").count(), 1, "{again}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vault_that_cannot_be_opened_says_why_once_and_questions_still_work() {
    let v = TestVault::with_files(&[("Koji.md", NOTE)]);
    // An index directory inside the vault is refused: the vault cannot be opened.
    let inside = v.root.join(".cache");
    let mut all: EnvVars = gemini_env("valid");
    all.extend(env(&[("SCHOLIA_CACHE_DIR", inside.to_str().unwrap())]));
    let mut c = v.lsp_with(&all).await;
    let message = c.progress_message("Indexing vault", Duration::from_secs(30)).await;
    assert!(
        message.starts_with("failed: the vault could not be opened: index directory"),
        "{message}"
    );
    let uri = c.open(&v.path("Koji.md"), NOTE).await;
    // Research needs the index: it says why there is none, not "still being opened".
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.research", "arguments": [{"uri": uri}]}),
        )
        .await;
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("the vault could not be opened"), "{r}");
    assert_eq!(r["error"]["data"]["code"], "INVALID_CONFIG", "{r}");
    // Deep search needs no index.
    c.request(
        "workspace/executeCommand",
        selection(&uri, "How long does koji take to grow?"),
    )
    .await;
    let end = c
        .wait_progress_end("Deep search selection", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(end["params"]["value"]["message"], "verified after 2 rounds, 3 sources");
    assert!(c.docs[&uri].0.contains("### How long does koji take to grow?"));
    c.pump(Duration::from_millis(200)).await;
    let shown = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "window/showMessage")
        .filter(|n| {
            n["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("could not be opened")
        })
        .count();
    assert_eq!(shown, 1, "reported once: {:?}", c.notifications);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_carry_their_code_and_kind() {
    let v = TestVault::with_files(&[("Koji.md", NOTE)]);
    let mut c = v.lsp_ready(&Vec::new()).await;
    let uri = c.open(&v.path("Koji.md"), NOTE).await;
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x"}]}),
        )
        .await;
    assert_eq!(
        r["error"]["data"],
        json!({"code": "NOT_CONFIGURED", "kind": "not_configured"})
    );
    assert_eq!(r["error"]["code"], -32803, "RequestFailed");
    let r = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.ask", "arguments": [{"uri": uri, "query": "x", "model": "gpt"}]}),
        )
        .await;
    assert_eq!(r["error"]["data"]["kind"], "invalid_input");
    assert_eq!(r["error"]["code"], -32602, "InvalidParams");
    c.shutdown().await;
}
