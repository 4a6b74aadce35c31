//! Streamable HTTP: loopback by default, a bearer token from an environment variable when one
//! is named (requests without it get 401), and `Origin` checked against DNS rebinding (a
//! browser page on another origin gets 403).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::Scholia;

/// The path the server answers on.
pub const PATH: &str = "/mcp";

/// The bearer token from the variable `name`, when one is named.
pub fn token(name: Option<&str>) -> anyhow::Result<Option<Arc<String>>> {
    let Some(name) = name else { return Ok(None) };
    match std::env::var(name) {
        Ok(t) if t.trim().len() >= 16 => Ok(Some(Arc::new(t.trim().to_string()))),
        Ok(_) => {
            anyhow::bail!("--token-env: the variable `{name}` holds fewer than 16 characters; use a long random token")
        }
        Err(_) => anyhow::bail!(
            "--token-env: the variable `{name}` is not set; valid: the name of a set variable holding the token"
        ),
    }
}

/// How requests prove who they are from.
#[derive(Clone)]
pub enum Auth {
    /// Loopback only, no token.
    None,
    /// One token for everyone (`--token-env`).
    One(Arc<String>),
    /// A team's tokens, each with its scope (`--tokens-file`), and the vault's root.
    Tokens(Arc<scholia_engine::tokens::Tokens>, std::path::PathBuf),
}

pub async fn serve(server: Scholia, addr: SocketAddr, auth: Auth, shutdown: CancellationToken) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && matches!(auth, Auth::None) {
        anyhow::bail!(
            "--http: {addr} is not a loopback address; serving a vault beyond this machine needs a token (--token-env VAR or --tokens-file FILE)"
        );
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        addr.ip().to_string(),
        format!("localhost:{}", addr.port()),
        addr.to_string(),
    ];
    // Browsers send Origin; only pages served from this very server may talk to it.
    let origins = [
        format!("http://localhost:{}", addr.port()),
        format!("http://127.0.0.1:{}", addr.port()),
        format!("http://[::1]:{}", addr.port()),
        format!("http://{addr}"),
    ];
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(shutdown.child_token());
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    let app = axum::Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(move |req, next| {
            ended_session(sessions.clone(), req, next)
        }))
        .layer(middleware::from_fn(move |req, next| bearer(auth.clone(), req, next)))
        .layer(middleware::from_fn(close_on_refusal));
    eprintln!("scholia: MCP over streamable HTTP at http://{addr}{PATH}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        })
        .await?;
    Ok(())
}

/// A `DELETE` that ends a session gets `204 No Content` (rmcp answers `202`, which the MCP
/// Python SDK reports as a failed termination); one of a session that does not exist (or has
/// ended) gets `404`, as the specification says.
async fn ended_session(sessions: Arc<LocalSessionManager>, req: Request, next: Next) -> Response {
    let delete = req.method() == axum::http::Method::DELETE;
    if delete
        && let Some(id) = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        && !sessions.sessions.read().await.contains_key(id)
    {
        return (StatusCode::NOT_FOUND, "no such session").into_response();
    }
    let mut r = next.run(req).await;
    if delete && r.status() == StatusCode::ACCEPTED {
        *r.status_mut() = StatusCode::NO_CONTENT;
    }
    r
}

/// A refused request (4xx) ends its connection, and says so: its body was not read, and a
/// client reusing the kept-alive connection for its next request could otherwise send it as
/// the server closes it ("server disconnected without sending a response").
async fn close_on_refusal(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    if r.status().is_client_error() {
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

/// Refuses a request without a valid bearer token (when the server has any), in constant
/// time; with a team's tokens, the request carries its [`super::tokens::Caller`].
async fn bearer(auth: Auth, mut req: Request, next: Next) -> Response {
    // Only the MCP endpoint is guarded: anything else is 404, so a client probing for OAuth
    // metadata (`/.well-known/oauth-protected-resource`) learns there is none instead of
    // starting an OAuth flow.
    if !req.uri().path().starts_with(PATH) {
        return next.run(req).await;
    }
    let token = match auth {
        Auth::None => return next.run(req).await,
        Auth::One(t) => t,
        Auth::Tokens(tokens, root) => {
            let given = given_token(&req).to_string();
            let caller = tokens
                .scope_of(&given)
                .and_then(|t| match super::tokens::Caller::of(&t, &root) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        tracing::error!("token `{}`: {}", t.name, e.message);
                        None
                    }
                });
            return match caller {
                Some(c) => {
                    tracing::info!(token = %c.name, method = %req.method(), "MCP request");
                    req.extensions_mut().insert(c);
                    next.run(req).await
                }
                None => unauthorized(),
            };
        }
    };
    let given = given_token(&req);
    let matches =
        given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if matches {
        return next.run(req).await;
    }
    unauthorized()
}

/// The bearer token a request carries (the scheme is case-insensitive, RFC 7235); empty
/// when none.
fn given_token(req: &Request) -> &str {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .unwrap_or("")
}

fn unauthorized() -> Response {
    let mut r = (StatusCode::UNAUTHORIZED, "a bearer token is required").into_response();
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}
