//! Extraction in a child process that a deadline kills. The readers (dom_smoothie,
//! rs-trafilatura, html2text) cannot be stopped part-way from outside; a page's shape is bounded
//! before they run, but a deadline must stop the work itself, not only the wait for it. The
//! binary names itself ([`run_in_child_of`]); each page is then read by `scholia
//! extract-worker`, which the deadline kills with whatever it was doing. Without it (tests of
//! the library in process), extraction runs on a blocking thread, as before.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Extracted;

static WORKER: OnceLock<PathBuf> = OnceLock::new();

/// The hidden command of the binary that reads one page.
pub const COMMAND: &str = "extract-worker";

/// From now on pages are read by `exe extract-worker` child processes.
pub fn run_in_child_of(exe: PathBuf) {
    let _ = WORKER.set(exe);
}

/// Whether pages are read in child processes.
pub fn in_child() -> bool {
    WORKER.get().is_some()
}

#[derive(Serialize, Deserialize)]
struct Request {
    url: Option<String>,
    max_chars: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("took longer than its deadline")]
    Deadline,
    #[error("{0}")]
    Failed(String),
}

/// Reads `html` in a child process, killed when `deadline` passes.
pub async fn extract_in_child(
    html: String,
    url: Option<String>,
    max_chars: usize,
    deadline: Duration,
) -> Result<Extracted, WorkerError> {
    let exe = WORKER.get().ok_or_else(|| WorkerError::Failed("no worker".into()))?;
    let mut child = tokio::process::Command::new(exe)
        .arg(COMMAND)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .env("SCHOLIA_LOG", "off")
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| WorkerError::Failed(format!("could not start the page reader: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let request = serde_json::to_string(&Request { url, max_chars }).expect("serialises");
    let run = async move {
        // The pipe is closed (dropped) once the page is written: the reader waits for its end.
        let write = async move {
            stdin.write_all(request.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.write_all(html.as_bytes()).await?;
            drop(stdin);
            Ok::<(), std::io::Error>(())
        };
        let mut out = Vec::new();
        let (wrote, read) = tokio::join!(write, stdout.read_to_end(&mut out));
        wrote
            .and(read)
            .map_err(|e| WorkerError::Failed(format!("the page reader: {e}")))?;
        serde_json::from_slice::<Extracted>(&out)
            .map_err(|e| WorkerError::Failed(format!("the page reader answered badly: {e}")))
    };
    match tokio::time::timeout(deadline, run).await {
        Ok(result) => {
            let _ = child.wait().await;
            result
        }
        Err(_) => {
            // The work stops here, whatever it was doing.
            let _ = child.start_kill();
            let _ = child.wait().await;
            Err(WorkerError::Deadline)
        }
    }
}

/// `scholia extract-worker`: one request line, then the page, on stdin; the extraction as JSON
/// on stdout. Returns the exit status.
pub fn worker_main() -> i32 {
    use std::io::{Read, Write};
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return 1;
    }
    let Some(newline) = input.iter().position(|&b| b == b'\n') else {
        return 1;
    };
    let Ok(request) = serde_json::from_slice::<Request>(&input[..newline]) else {
        return 1;
    };
    let html = String::from_utf8_lossy(&input[newline + 1..]);
    let extracted = super::extract(&html, request.url.as_deref(), request.max_chars);
    let out = serde_json::to_vec(&extracted).expect("serialises");
    match std::io::stdout().write_all(&out) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}
