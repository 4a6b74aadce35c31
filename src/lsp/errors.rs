//! Engine error kinds as JSON-RPC errors: the one place the language server maps them.

use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};

use scholia_base::{Error, ErrorKind};

/// LSP's RequestFailed: the request was valid but could not be carried out. Conflicts (a name
/// taken, a note changed) use it too, not ContentModified (-32801), which clients such as
/// Neovim discard without showing: the user must read why a rename was refused.
const REQUEST_FAILED: i64 = -32803;
const REQUEST_CANCELLED: i64 = -32800;

pub fn rpc(e: &Error) -> RpcError {
    let code = match e.kind {
        ErrorKind::InvalidInput => ErrorCode::InvalidParams,
        ErrorKind::NotConfigured | ErrorKind::Upstream | ErrorKind::Io | ErrorKind::Conflict => {
            ErrorCode::ServerError(REQUEST_FAILED)
        }
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
