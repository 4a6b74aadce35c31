//! A team server's callers: the token a request carries (checked in `http.rs` against
//! `scholia_engine::tokens`) becomes a [`Caller`] with its name, its policy (read-only, tools)
//! and its scope (folders), put in the request's extensions; each handler serves the request
//! as that caller, its index queries confined to the caller's folders
//! (`scholia_base::ambient`).

use std::path::Path;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::{Policy, Scholia};
use scholia_base::Error;
use scholia_engine::tokens::{TokenScope, Tokens};
use scholia_index::Scope;

/// Who a request is from, and what it may do.
#[derive(Clone)]
pub struct Caller {
    pub name: String,
    pub policy: Arc<Policy>,
    pub scope: Scope,
}

impl Caller {
    /// The caller a valid token's scope makes (its folders checked against the vault).
    pub fn of(t: &TokenScope, root: &Path) -> Result<Caller, Error> {
        Ok(Caller {
            name: t.name.clone(),
            policy: Arc::new(Policy {
                token: Some(t.name.clone()),
                ..Policy::new(t.read_only, t.tools.clone())?
            }),
            scope: Scope::new(root, &t.allow_folder)?,
        })
    }
}

/// The tokens file, every scope checked now (a wrong tool or folder is an error at start).
pub fn load(file: &Path, root: &Path) -> Result<Tokens, Error> {
    let root = root.to_path_buf();
    Tokens::load(file, move |t| Caller::of(t, &root).map(|_| ()))
}

/// The caller of a request, when the server has tokens.
pub fn caller(ctx: &RequestContext<RoleServer>) -> Option<Caller> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Caller>())
        .cloned()
}

impl Scholia {
    /// This server as `caller` sees it: its policy.
    pub(super) fn as_caller(&self, caller: &Caller) -> Scholia {
        let mut s = self.clone();
        s.policy = caller.policy.clone();
        s
    }
}
