//! scholia's surfaces over its engine: the language server ([`lsp`], the only module that knows
//! LSP types) and the MCP server ([`mcp`], the only one that knows MCP types); the CLI is the
//! binary's own `cli` module. Each translates its protocol to `scholia_engine` calls and back.
//!
//! The layer crates are re-exported under their names for tests, benchmarks and embedders; the
//! direction between them is in `docs/ARCHITECTURE.md`.

pub mod lsp;
pub mod mcp;
mod stdio;

pub use scholia_base::error;
pub use scholia_embed as embed;
pub use scholia_engine as engine;
pub use scholia_engine::config;
pub use scholia_index as index;
pub use scholia_prompts as prompts;
pub use scholia_providers as providers;
pub use scholia_providers::{gemini_cli, http, llm, web};
pub use scholia_research as research;
pub use scholia_tasks as tasks;
pub use scholia_vault as vault;
