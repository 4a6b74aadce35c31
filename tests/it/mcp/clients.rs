//! The MCP server beside the language server, and driven by real clients: the Python and
//! TypeScript SDKs over stdio and streamable HTTP.

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use serde_json::json;

use super::{Client, call, text};
use crate::support::{TestVault, fakes, repo, stderr};

/// The editor's language server holds the index writer; `scholia mcp` (a real process) follows
/// its commits, writes research the editor then sees, and takes the writer over when the editor
/// goes away.
#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_server_runs_beside_the_language_server() {
    let v = TestVault::example();
    let mut lsp = v.lsp_ready(&Vec::new()).await;

    let mut child = tokio::process::Command::from(v.cmd());
    child
        .args(["mcp", "--vault"])
        .arg(&v.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = child.spawn().unwrap();
    let (out, input) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let mcp = ().serve((out, input)).await.unwrap();

    // The follower answers from the editor's index.
    let r = call(&mcp, "find_notes", json!({"query": "scoby"})).await;
    assert_eq!(
        r.structured_content.as_ref().unwrap()["results"][0]["path"],
        "Kombucha.md",
        "{}",
        text(&r)
    );

    // Research written by the MCP server is indexed by the editor's server.
    let before = v.read("Kombucha.md");
    let r = call(&mcp, "research_note", json!({"path": "Kombucha.md"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    // An agent is told the run was offline, and how to read the web.
    assert!(text(&r).contains(scholia::engine::OFFLINE_HINT), "{}", text(&r));
    let after = v.read("Kombucha.md");
    assert!(
        after.starts_with(before.trim_end()) && after.contains("\n## Research\n"),
        "{after}"
    );
    let mut seen = false;
    for _ in 0..100 {
        let symbols = lsp.request("workspace/symbol", json!({"query": "research"})).await;
        seen = symbols
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["name"] == "Research" && s["containerName"] == "Kombucha");
        if seen {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        seen,
        "the language server never indexed the section the MCP server wrote"
    );

    // A note the editor's server indexes is found by the MCP server.
    v.write("Shared.md", "# Shared\n\nWritten while both run: quark.\n");
    assert!(
        eventually(&mcp, "quark", "Shared.md", Duration::from_secs(10)).await,
        "the MCP server never saw the editor's commit"
    );

    // The editor goes away: the MCP server takes the writer over and indexes changes itself.
    lsp.shutdown().await;
    v.write("After.md", "# After\n\nzymurgy\n");
    assert!(
        eventually(&mcp, "zymurgy", "After.md", Duration::from_secs(15)).await,
        "the MCP server never took over the index writer"
    );
    mcp.cancel().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(
        status.is_ok_and(|s| s.unwrap().success()),
        "scholia mcp exits when its client goes away"
    );
}

async fn eventually(c: &Client, query: &str, path: &str, within: Duration) -> bool {
    let end = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < end {
        let r = call(c, "find_notes", json!({"query": query})).await;
        if r.structured_content.as_ref().unwrap()["results"][0]["path"] == path {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// The MCP Python SDK, over stdio and streamable HTTP, against the real binary and the fakes.
#[tokio::test(flavor = "multi_thread")]
async fn a_real_mcp_client_over_stdio_and_http() {
    let Some(python) = crate::support::mcp_python() else {
        return;
    };
    sdk_client(&python, repo().join("tests/e2e/mcp/client.py"), "the MCP client").await;
}

/// The official TypeScript SDK (most MCP hosts, the MCP Inspector), which validates every
/// result against the tool's output schema, errors included (`tests/e2e/mcp-node`; needs
/// `npm ci` there, skipped without it unless `SCHOLIA_REQUIRE_E2E=1`).
#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_over_stdio_and_http() {
    let dir = repo().join("tests/e2e/mcp-node");
    let has_sdk = dir.join("node_modules/@modelcontextprotocol/sdk").is_dir()
        && std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !has_sdk {
        return crate::support::missing_e2e("the MCP TypeScript SDK", "cd tests/e2e/mcp-node && npm ci");
    }
    sdk_client("node", dir.join("client.mjs"), "the TypeScript SDK client").await;
}

/// Runs an SDK's client `script` with `program` against the real binary, the example vault
/// and the fakes: it must succeed and end by printing `OK`.
async fn sdk_client(program: &str, script: std::path::PathBuf, what: &str) {
    let v = TestVault::example();
    let fake = fakes().await;
    let work = v.home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = v.command(program);
    cmd.arg(script)
        .env("SCHOLIA_BIN", env!("CARGO_BIN_EXE_scholia"))
        .env("VAULT", &v.root)
        .env("FAKES", fake.base())
        .env("WORK", &work)
        .env("GEMINI_CLI", crate::support::fake_gemini());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    eprintln!("{}", stderr(&out));
    assert!(out.status.success(), "{what} failed:\n{}", stderr(&out));
    assert!(stderr(&out).trim_end().ends_with("OK"), "{what}");
}
