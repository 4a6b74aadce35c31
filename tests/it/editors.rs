//! The language server as editors really start it: no root, a code repository or a note's
//! sub-folder as root; a search the moment it starts; settings changed while it runs.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TestVault, env, fakes, openrouter_env};

fn shown(n: &Value, text: &str) -> bool {
    n["method"] == "window/showMessage" && n["params"]["message"].as_str().is_some_and(|m| m.contains(text))
}

async fn status(c: &mut crate::support::LspClient) -> Value {
    c.request(
        "workspace/executeCommand",
        json!({"command": "scholia.status", "arguments": []}),
    )
    .await
}

/// A code repository opened as the root (Neovim with `.git` among its markers, VS Code on a
/// repository): its README files are not a vault. The first note of a folder of notes in it
/// decides the vault, and the user is told which one.
#[tokio::test(flavor = "multi_thread")]
async fn a_code_repository_is_not_a_vault_but_its_notes_folder_is_said_to_be() {
    let v = TestVault::with_files(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("README.md", "# x\n\nA crate.\n"),
        ("notes/Koji.md", "# Koji\n\nGrows at 30 °C.\n"),
        ("notes/Miso.md", "# Miso\n\nNeeds [[Koji]].\n"),
    ]);
    let mut c = v.lsp_with(&Vec::new()).await;
    c.open(&v.path("README.md"), "# x\n\nA crate.\n").await;
    let warned = c
        .wait_notification(Duration::from_secs(10), |n| shown(n, "is a code project"))
        .await
        .expect("told there is no vault");
    let said = warned["params"]["message"].as_str().unwrap();
    assert!(
        said.contains("create `.scholia.toml`") && said.contains("`vault` setting"),
        "{said}"
    );
    assert_eq!(status(&mut c).await["vault"]["state"], "NO_VAULT");

    c.open(&v.path("notes/Miso.md"), "# Miso\n\nNeeds [[Koji]].\n").await;
    let info = c
        .wait_notification(Duration::from_secs(10), |n| shown(n, "as the vault"))
        .await
        .expect("told which folder is the vault");
    assert!(
        info["params"]["message"]
            .as_str()
            .unwrap()
            .contains("inside the code project"),
        "{info}"
    );
    c.wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    let s = status(&mut c).await;
    assert_eq!(s["vault"]["root"], v.path("notes").display().to_string(), "{s}");
    assert_eq!(s["vault"]["notes"], 2, "{s}");
    c.shutdown().await;
}

/// eglot makes the note's own sub-folder the project: the server climbs to the folder of notes
/// above it, quietly (a plain folder of notes is what the user meant).
#[tokio::test(flavor = "multi_thread")]
async fn a_sub_folder_root_serves_the_whole_vault() {
    let v = TestVault::example();
    let mut c = v.lsp_rooted(&v.path("Microbes"), &Vec::new()).await;
    c.wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    let s = status(&mut c).await;
    assert_eq!(s["vault"]["root"], v.root.display().to_string(), "{s}");
    assert!(s["vault"]["notes"].as_u64().unwrap() >= 7, "{s}");
    c.shutdown().await;
}

/// `:ScholiaSearch` the moment the editor opened: the search waits for the index (bounded)
/// instead of answering "no notes match" from its first batch.
#[tokio::test(flavor = "multi_thread")]
async fn a_search_right_after_start_sees_the_whole_vault() {
    let files: Vec<(String, String)> = (0..1500)
        .map(|i| {
            let word = if i == 1499 { "zeppelin" } else { "bread" };
            (
                format!("n/{i:04}.md"),
                format!("# Note {i}\n\nAbout {word} and flour, number {i}.\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let v = TestVault::with_files(&refs);
    let mut c = v.lsp_with(&Vec::new()).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "scholia.search", "arguments": [{"query": "zeppelin"}]}),
        )
        .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["hits"][0]["path"], "n/1499.md");
    assert_eq!(r["hits"][0]["line"], 1, "the heading over the match");
    assert!(!r["summary"].as_str().unwrap().contains("still being indexed"), "{r}");
    c.shutdown().await;
}

/// workspace/didChangeConfiguration: new settings apply at once; a bad one names the field
/// and keeps the old settings.
#[tokio::test(flavor = "multi_thread")]
async fn changed_settings_apply_or_name_the_field() {
    let v = TestVault::example();
    let fake = fakes().await;
    let mut extra = openrouter_env(&fake, "k");
    extra.extend(env(&[]));
    let mut c = v.lsp_ready(&extra).await;
    let model = |s: &Value| s["providers"]["sonar"]["default_model"].clone();
    assert_eq!(model(&status(&mut c).await), "sonar");

    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"scholia": {"sonar": {"tier": "sonar-pro"}}}}),
    )
    .await;
    let refused = c
        .wait_notification(Duration::from_secs(10), |n| shown(n, "settings not applied"))
        .await
        .expect("the bad setting is refused");
    assert!(
        refused["params"]["message"].as_str().unwrap().contains("tier"),
        "{refused}"
    );
    assert_eq!(model(&status(&mut c).await), "sonar", "the old settings stay");

    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sonar": {"model": "sonar-pro"}}}),
    )
    .await;
    c.wait_notification(Duration::from_secs(10), |n| shown(n, "settings applied"))
        .await
        .expect("applied");
    assert_eq!(model(&status(&mut c).await), "sonar-pro");
    // `null` ("re-read your settings") changes nothing and says nothing.
    c.notify("workspace/didChangeConfiguration", json!({"settings": null}))
        .await;
    c.pump(Duration::from_millis(300)).await;
    assert_eq!(model(&status(&mut c).await), "sonar-pro");
    c.shutdown().await;
}

/// Helix (and others) show the server's stderr as errors: by default the language server logs
/// only warnings, so a normal start and stop writes nothing there.
#[test]
fn the_language_server_is_quiet_on_stderr_by_default() {
    use std::io::Write;
    let v = TestVault::example();
    let mut cmd = v.cmd();
    cmd.arg("lsp")
        .env_remove("SCHOLIA_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let uri = format!("file://{}", v.root.display());
    let frame = |v: Value| {
        let body = v.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let mut stdin = child.stdin.take().unwrap();
    for msg in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": uri, "capabilities": {}}}),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    ] {
        stdin.write_all(frame(msg).as_bytes()).unwrap();
    }
    stdin.flush().unwrap();
    // Long enough to index the vault and start the task runner.
    std::thread::sleep(Duration::from_secs(2));
    for msg in [
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ] {
        stdin.write_all(frame(msg).as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\"id\":2"),
        "shut down cleanly"
    );
    assert!(stderr.trim().is_empty(), "the server wrote to stderr:\n{stderr}");
}

/// Neovim and VS Code (libuv) give a server Unix sockets for stdin and stdout, Helix pipes: the
/// server reads and writes both on its event loop, and puts a socket's blocking mode back when
/// it exits (the open file is shared with the editor's copy of it).
#[test]
fn the_language_server_over_unix_sockets_as_libuv_starts_it() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    let v = TestVault::example();
    let (mut to_server, server_in) = UnixStream::pair().unwrap();
    let (from_server, server_out) = UnixStream::pair().unwrap();
    // What the editor would still hold of the server's end: it shares the open file.
    let shared = server_in.try_clone().unwrap();
    let mut cmd = v.cmd();
    cmd.arg("lsp")
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(server_in)))
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(server_out)))
        .stderr(std::process::Stdio::null());
    let mut child = crate::support::Reaped(cmd.spawn().unwrap());
    from_server.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = BufReader::new(from_server);
    let mut send = |v: Value| {
        let body = v.to_string();
        write!(to_server, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    };
    let answer = |reader: &mut BufReader<UnixStream>, id: i64| -> Value {
        loop {
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                match line.trim_end() {
                    "" => break,
                    l => {
                        if let Some(n) = l.strip_prefix("Content-Length:") {
                            length = n.trim().parse().unwrap();
                        }
                    }
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let msg: Value = serde_json::from_slice(&body).unwrap();
            if msg["id"] == id && msg.get("method").is_none() {
                return msg;
            }
        }
    };
    let uri = format!("file://{}", v.root.display());
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": uri, "capabilities": {}}}),
    );
    assert!(answer(&mut reader, 1)["result"]["capabilities"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let started = std::time::Instant::now();
    let found = loop {
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": "sourd"}}));
        let r = answer(&mut reader, 2);
        if r["result"].as_array().is_some_and(|a| !a.is_empty()) || started.elapsed() > Duration::from_secs(20) {
            break r;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(found["result"].to_string().contains("Sourdough starter"), "{found}");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    answer(&mut reader, 3);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(child.0.wait().unwrap().success());
    // SAFETY: F_GETFL on a descriptor this test owns.
    let flags = unsafe { libc::fcntl(shared.as_raw_fd(), libc::F_GETFL) };
    assert_eq!(flags & libc::O_NONBLOCK, 0, "the socket was left non-blocking");
}
