//! Spawning the real `scholia mcp` and calling its tools over stdio with rmcp's client, as an
//! agent would (benchmarks).

#![allow(dead_code)]

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

pub type Client = RunningService<RoleClient, ()>;

/// `scholia mcp` on `vault` with private directories under `home`, connected and past its
/// first `tools/list`; returns when it was spawned.
pub async fn spawn(bin: &str, vault: &Path, home: &Path) -> (Client, tokio::process::Child, Instant, usize) {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(bin)
        .args(["mcp", "--vault"])
        .arg(vault)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SCHOLIA_CONFIG_DIR", home.join("config"))
        .env("SCHOLIA_DATA_DIR", home.join("data"))
        .env("SCHOLIA_CACHE_DIR", home.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (out, input) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve((out, input)).await.unwrap();
    let tools = client.list_tools(None).await.unwrap();
    (client, child, started, tools.tools.len())
}

/// Calls a tool; panics on a transport error or an error result.
pub async fn tool(c: &Client, name: &str, args: serde_json::Value) -> CallToolResult {
    let a = args.as_object().cloned().unwrap();
    let r = c
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(a))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{args}: {:?}", r.content);
    r
}
