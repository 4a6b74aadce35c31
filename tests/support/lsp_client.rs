//! A small LSP client for tests and benchmarks: Content-Length framing over any byte streams
//! (in-process pipes or a child's stdio), answers the server's own requests (progress tokens,
//! `workspace/applyEdit` against its copy of the documents), and records notifications.

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How the client answers `workspace/applyEdit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditPolicy {
    /// Apply when the versions match, like an editor.
    Apply,
    /// Refuse every edit (to test the server's retry).
    Refuse,
}

/// The client's copy of open documents: uri -> (text, version).
pub type Docs = HashMap<String, (String, i32)>;
/// Edits the documents before an applyEdit is answered; returns didChange params to send.
pub type BeforeApply = Box<dyn FnMut(&mut Docs) -> Vec<Value> + Send>;

pub struct LspClient {
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    incoming: mpsc::UnboundedReceiver<(Instant, Value)>,
    next_id: i64,
    /// When the last response waited for had been read whole (before it was parsed): a
    /// benchmark's round trip without this client's own JSON work.
    pub arrived: Option<Instant>,
    /// Every notification received, in order.
    pub notifications: Vec<Value>,
    /// Every request the server sent, in order.
    pub server_requests: Vec<Value>,
    pub docs: Docs,
    pub edit_policy: EditPolicy,
    /// Called before answering an applyEdit: lets a test type into the buffer first.
    pub before_apply: Option<BeforeApply>,
    /// The action chosen when the server shows a message request (none: dismissed).
    pub message_action: Option<String>,
}

async fn read_message<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<(Instant, Value)> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    let at = Instant::now();
    Some((at, serde_json::from_slice(&body).ok()?))
}

impl LspClient {
    /// Spawns `cmd` (its arguments, environment and stderr as the caller set them) with piped
    /// stdin and stdout, killed when dropped; the client talks over its stdio.
    pub fn spawn(cmd: &mut tokio::process::Command) -> (LspClient, tokio::process::Child) {
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let client = LspClient::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
        (client, child)
    }

    pub fn new<R, W>(reader: R, writer: W) -> LspClient
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            while let Some(msg) = read_message(&mut reader).await {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        LspClient {
            writer: Box::new(writer),
            incoming,
            next_id: 1,
            arrived: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            docs: HashMap::new(),
            edit_policy: EditPolicy::Apply,
            before_apply: None,
            message_action: None,
        }
    }

    pub async fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).unwrap();
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend_from_slice(&body);
        self.writer.write_all(&framed).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Sends a request and returns its id without waiting.
    pub async fn request_id(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a request and waits for its response (the whole response object).
    pub async fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_id(method, params).await;
        self.wait_response(id, Duration::from_secs(60)).await
    }

    /// Sends a request and returns its `result`, panicking on an error response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let mut resp = self.request_raw(method, params).await;
        if let Some(err) = resp.get("error") {
            panic!("{method} failed: {err}");
        }
        resp["result"].take()
    }

    pub async fn wait_response(&mut self, id: i64, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let (at, msg) = self
                .next_timed(deadline)
                .await
                .unwrap_or_else(|| panic!("no response to request {id}"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                self.arrived = Some(at);
                return msg;
            }
        }
    }

    /// Reads one message, answering server requests and recording notifications.
    async fn next_message(&mut self, deadline: Instant) -> Option<Value> {
        self.next_timed(deadline).await.map(|(_, msg)| msg)
    }

    /// [`LspClient::next_message`] with when it had been read.
    async fn next_timed(&mut self, deadline: Instant) -> Option<(Instant, Value)> {
        let left = deadline.saturating_duration_since(Instant::now());
        let (at, msg) = tokio::time::timeout(left, self.incoming.recv()).await.ok()??;
        if msg.get("method").is_some() && msg.get("id").is_some() {
            self.server_requests.push(msg.clone());
            let result = self.answer(&msg).await;
            self.send(json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
                .await;
        } else if msg.get("method").is_some() {
            self.notifications.push(msg.clone());
        }
        Some((at, msg))
    }

    async fn answer(&mut self, req: &Value) -> Value {
        match req["method"].as_str().unwrap_or_default() {
            "workspace/applyEdit" => {
                if let Some(hook) = self.before_apply.as_mut() {
                    let changes = hook(&mut self.docs);
                    for change in changes {
                        self.notify("textDocument/didChange", change).await;
                    }
                }
                if self.edit_policy == EditPolicy::Refuse {
                    return json!({"applied": false, "failureReason": "refused by test"});
                }
                match apply_workspace_edit(&mut self.docs, &req["params"]["edit"]) {
                    Ok(changed) => {
                        // Like an editor: the server hears about the new text.
                        for uri in changed {
                            let (text, version) = self.docs[&uri].clone();
                            self.notify(
                                "textDocument/didChange",
                                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
                            )
                            .await;
                        }
                        json!({"applied": true})
                    }
                    Err(reason) => json!({"applied": false, "failureReason": reason}),
                }
            }
            "window/showMessageRequest" => {
                let offered = req["params"]["actions"].as_array().cloned().unwrap_or_default();
                match &self.message_action {
                    Some(title) if offered.iter().any(|a| a["title"] == *title) => json!({"title": title}),
                    _ => Value::Null,
                }
            }
            _ => Value::Null,
        }
    }

    /// Processes messages until `pred` holds for a notification (returned) or the timeout.
    pub async fn wait_notification(&mut self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(n) = self.notifications.iter().find(|n| pred(n)) {
            return Some(n.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let msg = self.next_message(deadline).await?;
            if msg.get("id").is_none() && pred(&msg) {
                return Some(msg);
            }
        }
    }

    /// Keeps answering server requests for `d`.
    pub async fn pump(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while self.next_message(deadline).await.is_some() {}
    }

    pub async fn initialize(&mut self, root: &std::path::Path, options: Value) -> Value {
        self.initialize_with(root, options, json!({})).await
    }

    /// [`LspClient::initialize`] with more client capabilities (merged at the top level).
    pub async fn initialize_with(&mut self, root: &std::path::Path, options: Value, extra: Value) -> Value {
        let uri = file_uri(root);
        let mut capabilities = json!({
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}},
            "window": {"workDoneProgress": true, "showDocument": {"support": true}},
            "general": {"positionEncodings": ["utf-16"]}
        });
        if let (Some(c), Some(e)) = (capabilities.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                c.insert(k.clone(), v.clone());
            }
        }
        let result = self
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": "vault"}],
                    "initializationOptions": options,
                    "capabilities": capabilities
                }),
            )
            .await;
        self.notify("initialized", json!({})).await;
        result
    }

    /// Waits for the `end` of the progress whose `begin` title is `title`.
    pub async fn wait_progress_end(&mut self, title: &str, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        let token = self
            .wait_notification(timeout, |n| {
                n["method"] == "$/progress"
                    && n["params"]["value"]["kind"] == "begin"
                    && n["params"]["value"]["title"] == title
            })
            .await?["params"]["token"]
            .clone();
        let left = deadline.saturating_duration_since(Instant::now());
        self.wait_notification(left, |n| {
            n["method"] == "$/progress" && n["params"]["token"] == token && n["params"]["value"]["kind"] == "end"
        })
        .await
    }

    /// The message the progress titled `title` ends with (it must end within `timeout`).
    pub async fn progress_message(&mut self, title: &str, timeout: Duration) -> String {
        let end = self
            .wait_progress_end(title, timeout)
            .await
            .unwrap_or_else(|| panic!("no end of \"{title}\" within {timeout:?}"));
        end["params"]["value"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub async fn open(&mut self, path: &std::path::Path, text: &str) -> String {
        let uri = file_uri(path);
        self.docs.insert(uri.clone(), (text.to_string(), 1));
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        )
        .await;
        uri
    }

    /// Replaces the whole text of an open document.
    pub async fn change(&mut self, uri: &str, text: &str) {
        let version = {
            let entry = self.docs.get_mut(uri).expect("document open");
            entry.1 += 1;
            entry.0 = text.to_string();
            entry.1
        };
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        )
        .await;
    }

    pub async fn shutdown(&mut self) {
        let _ = self.request_raw("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
    }
}

pub fn file_uri(path: &std::path::Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Byte offset of an LSP (UTF-16) position.
pub fn offset_of(text: &str, line: u64, character: u64) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 == line {
            let mut units = 0;
            for (bi, c) in l.char_indices() {
                if units >= character || c == '\n' || c == '\r' {
                    return offset + bi;
                }
                units += c.len_utf16() as u64;
            }
            return offset + l.trim_end_matches(['\n', '\r']).len();
        }
        offset += l.len();
    }
    text.len()
}

/// Applies LSP text edits (UTF-16 positions) to `text`, from the end so earlier offsets stay
/// valid.
pub fn apply_text_edits(text: &mut String, edits: &[Value]) {
    let mut edits = edits.to_vec();
    edits.sort_by_key(|e| {
        std::cmp::Reverse((
            e["range"]["start"]["line"].as_u64(),
            e["range"]["start"]["character"].as_u64(),
        ))
    });
    for e in edits {
        let s = &e["range"]["start"];
        let en = &e["range"]["end"];
        let start = offset_of(text, s["line"].as_u64().unwrap(), s["character"].as_u64().unwrap());
        let end = offset_of(text, en["line"].as_u64().unwrap(), en["character"].as_u64().unwrap());
        text.replace_range(start..end, e["newText"].as_str().unwrap_or_default());
    }
}

fn apply_workspace_edit(docs: &mut Docs, edit: &Value) -> Result<Vec<String>, String> {
    let mut changed = Vec::new();
    for change in edit["documentChanges"].as_array().cloned().unwrap_or_default() {
        let uri = change["textDocument"]["uri"].as_str().unwrap_or_default().to_string();
        let version = change["textDocument"]["version"].as_i64();
        let (text, current) = docs.get_mut(&uri).ok_or_else(|| format!("{uri} is not open"))?;
        if version.is_some_and(|v| v != *current as i64) {
            return Err(format!("stale edit: version {version:?}, document is at {current}"));
        }
        apply_text_edits(text, change["edits"].as_array().map(Vec::as_slice).unwrap_or_default());
        *current += 1;
        changed.push(uri);
    }
    Ok(changed)
}
