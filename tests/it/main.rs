//! The one integration-test binary: CLI, index, language server, MCP server and editor
//! end-to-end tests.

mod support;

mod agents;
mod attacks;
mod cli;
mod deep_search;
mod editor_features;
mod editors;
mod emacs;
mod hardening;
mod hub;
mod index;
mod layers;
mod links;
mod local_models;
mod lsp;
mod mcp;
mod mcp_tasks;
mod meaning;
mod nvim;
mod plugins;
mod related;
mod research;
mod sonar;
mod tasks;
mod team;
mod writes;
mod writes_lsp;
