//! A fake Hugging Face hub: `GET /hub/{owner}/{name}/resolve/{revision}/{file}` serves the
//! files of a model directory registered with [`super::FakeServer::host_model`], in the hub's
//! wire format. A large file (over [`LARGE`] bytes, as the hub keeps in LFS) answers `302` to
//! `/hub-lfs/{sha256}` with `X-Linked-Etag` (its SHA-256, quoted) and `X-Linked-Size`; a small
//! one answers `200` with its `ETag`. Each answer carries `X-Repo-Commit`. An unknown model is
//! `401` with `X-Error-Code: RepoNotFound`, an unknown revision `404` `RevisionNotFound`, a
//! missing file `404` `EntryNotFound`.
//!
//! The model's name chooses misbehaviour in its large files: ending in `-corrupt`, the store
//! sends other bytes than the hub's hash; `-truncated`, it ends at half the length it declared;
//! `-slow`, it sends 64 KiB every 200 ms.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::FakeState;

/// Files larger than this are served as the hub serves LFS files: by a redirect.
pub const LARGE: usize = 1 << 20;
/// The commit every answer names; asking for it by revision works too.
pub const COMMIT: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, [("x-error-code", code)], message.to_string()).into_response()
}

/// The model directory registered under `repo`.
fn model(state: &FakeState, repo: &str) -> Option<PathBuf> {
    state.hub_models.lock().unwrap().get(repo).cloned()
}

pub async fn resolve(State(state): State<Arc<FakeState>>, UrlPath(path): UrlPath<String>) -> Response {
    state.record(&format!("/hub/{path}"), serde_json::Value::Null);
    let parts: Vec<&str> = path.splitn(5, '/').collect();
    let [owner, name, "resolve", revision, file] = parts[..] else {
        return error(StatusCode::NOT_FOUND, "EntryNotFound", "not a resolve URL");
    };
    let repo = format!("{owner}/{name}");
    let Some(dir) = model(&state, &repo) else {
        return error(StatusCode::UNAUTHORIZED, "RepoNotFound", "Repository Not Found for url");
    };
    if revision != "main" && revision != COMMIT {
        return error(StatusCode::NOT_FOUND, "RevisionNotFound", "Invalid rev id");
    }
    if file.split('/').any(|p| p == ".." || p.is_empty()) {
        return error(StatusCode::NOT_FOUND, "EntryNotFound", "Entry not found");
    }
    let Ok(bytes) = std::fs::read(dir.join(file)) else {
        return error(StatusCode::NOT_FOUND, "EntryNotFound", "Entry not found");
    };
    let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    if bytes.len() > LARGE {
        let to = format!("{}/hub-lfs/{sha}?repo={repo}&file={file}", state.base());
        return Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, to)
            .header("x-linked-etag", format!("\"{sha}\""))
            .header("x-linked-size", bytes.len().to_string())
            .header("x-repo-commit", COMMIT)
            .body(Body::empty())
            .unwrap();
    }
    Response::builder()
        .header(header::ETAG, format!("\"{}\"", &sha[..40]))
        .header("x-repo-commit", COMMIT)
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .body(Body::from(bytes))
        .unwrap()
}

#[derive(serde::Deserialize)]
pub struct Stored {
    repo: String,
    file: String,
}

/// The store a large file is redirected to.
pub async fn lfs(
    State(state): State<Arc<FakeState>>,
    UrlPath(_sha): UrlPath<String>,
    Query(q): Query<Stored>,
) -> Response {
    state.record(&format!("/hub-lfs/{}/{}", q.repo, q.file), serde_json::Value::Null);
    let Some(dir) = model(&state, &q.repo) else {
        return StatusCode::FORBIDDEN.into_response();
    };
    let Ok(mut bytes) = std::fs::read(dir.join(&q.file)) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let declared = bytes.len();
    if q.repo.ends_with("-corrupt") {
        bytes[declared / 2] ^= 0xff;
    }
    let (send, receive) = tokio::sync::mpsc::channel(4);
    let (slow, truncated) = (q.repo.ends_with("-slow"), q.repo.ends_with("-truncated"));
    tokio::spawn(async move {
        let end = if truncated { declared / 2 } else { declared };
        for chunk in bytes[..end].chunks(64 << 10) {
            if send.send(Ok(bytes::Bytes::copy_from_slice(chunk))).await.is_err() {
                return;
            }
            if slow {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        if truncated {
            let _ = send.send(Err(std::io::Error::other("connection reset"))).await;
        }
    });
    Response::builder()
        .header(header::CONTENT_LENGTH, declared.to_string())
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .body(Body::from_stream(Chunks(receive)))
        .unwrap()
}

/// A body sent as its chunks arrive.
struct Chunks(tokio::sync::mpsc::Receiver<Result<bytes::Bytes, std::io::Error>>);

impl futures_core::Stream for Chunks {
    type Item = Result<bytes::Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
