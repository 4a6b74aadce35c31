//! scholia: a research assistant for Markdown note vaults.
//!
//! The engine (`vault`, `index`, and the research modules) knows neither LSP nor MCP types;
//! `lsp` is a thin adapter over it. See `docs/ARCHITECTURE.md`.

pub mod config;
pub mod fakes;
pub mod gemini_cli;
pub mod index;
pub mod llm;
pub mod lsp;
pub mod prompts;
pub mod research;
pub mod vault;
pub mod web;
