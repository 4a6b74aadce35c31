//! Engine error kinds as JSON-RPC errors: the one place the language server maps them.

use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};

use scholia_base::{Error, ErrorKind};

/// LSP's RequestFailed: the request was valid but could not be carried out.
const REQUEST_FAILED: i64 = -32803;
const CONTENT_MODIFIED: i64 = -32801;
const REQUEST_CANCELLED: i64 = -32800;

pub fn rpc(e: &Error) -> RpcError {
    let code = match e.kind {
        ErrorKind::InvalidInput => ErrorCode::InvalidParams,
        ErrorKind::NotConfigured | ErrorKind::Upstream | ErrorKind::Io => ErrorCode::ServerError(REQUEST_FAILED),
        ErrorKind::Conflict => ErrorCode::ServerError(CONTENT_MODIFIED),
        ErrorKind::Cancelled => ErrorCode::ServerError(REQUEST_CANCELLED),
        ErrorKind::Internal => ErrorCode::InternalError,
    };
    RpcError {
        code,
        message: e.message.clone().into(),
        data: Some(serde_json::json!({"code": e.code, "kind": e.kind})),
    }
}

/// An argument of a request is malformed (the message names it and what is valid).
pub fn invalid(message: impl Into<String>) -> RpcError {
    rpc(&Error::invalid(message))
}
