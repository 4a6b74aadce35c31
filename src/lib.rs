//! scholia: a research assistant for Markdown note vaults.
//!
//! The engine (`engine`, `vault`, `index`, `llm`, `web`, `research`) knows neither LSP nor MCP
//! types; `lsp` is a thin adapter over the engine API. See `docs/ARCHITECTURE.md`.

pub mod config;
pub mod engine;
pub mod error;
pub mod gemini_cli;
pub mod http;
pub mod index;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod prompts;
pub mod research;
pub mod tasks;
pub mod vault;
pub mod web;
