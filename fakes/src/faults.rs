//! Injected faults, the way remote services really fail: 429 with whatever `Retry-After` they
//! send, 5xx, a response that never comes, a body that is not what it should be, a body cut
//! off mid-way by a dropped connection.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `429:<retry-after>` (the header verbatim, e.g. `429:NaN`), `500`, `huge` (20 MB), `stall`,
/// `malformed`, `truncated`.
pub async fn respond(kind: &str) -> Response {
    let (name, arg) = kind.split_once(':').unwrap_or((kind, ""));
    match name {
        "429" => {
            let mut r = (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response();
            if let Ok(v) = HeaderValue::from_str(arg)
                && !arg.is_empty()
            {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
        "500" => (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response(),
        "huge" => {
            // 20 MB of a valid-looking answer: more than any client should read.
            let filler = "x".repeat(20 << 20);
            let body = format!("{{\"choices\": [{{\"message\": {{\"content\": \"{filler}\"}}}}]}}");
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        "stall" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        "malformed" => (
            [(header::CONTENT_TYPE, "application/json")],
            "{\"choices\": [{\"message\": {\"content\": \"cut",
        )
            .into_response(),
        "truncated" => {
            // Promises 4 KB, sends 100 bytes, then the connection breaks.
            let chunks: Vec<Result<&'static [u8], std::io::Error>> = vec![
                Ok(&b"{\"choices\": [{\"message\": {\"content\": \"<html><body><p>half a page and half an answer"[..]),
                Err(std::io::Error::other("connection reset")),
            ];
            let mut r = Response::new(Body::from_stream(futures_stream(chunks)));
            r.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from_static("4096"));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            r
        }
        other => (StatusCode::BAD_REQUEST, format!("unknown fault {other}")).into_response(),
    }
}

fn futures_stream(
    items: Vec<Result<&'static [u8], std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<&'static [u8], std::io::Error>> + Send + 'static {
    struct Iter(std::vec::IntoIter<Result<&'static [u8], std::io::Error>>);
    impl futures_core::Stream for Iter {
        type Item = Result<&'static [u8], std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Iter(items.into_iter())
}
