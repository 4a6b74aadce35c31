//! Adapters to everything outside the vault, and nothing more: each module speaks one remote
//! API or program (its wire format, retries, deadlines, errors) and knows no pipeline.
//!
//! - [`http`]: the shared HTTP client pieces (redaction of credentials in URLs);
//! - [`llm`]: one OpenAI-compatible chat client;
//! - [`web`]: web search, SSRF-safe page fetching, main-content extraction;
//! - [`sonar`]: Perplexity Sonar tiers through OpenRouter;
//! - [`gemini_cli`]: spawning the Gemini CLI in a private directory;
//! - [`interactions`]: the Gemini Interactions API (background deep research);
//! - [`embeddings`]: an OpenAI-compatible `/v1/embeddings` endpoint as an embedder;
//! - [`hub`]: a model named on a Hugging Face-style hub, fetched into the cache on first use.

pub mod embeddings;
pub mod gemini_cli;
pub mod http;
pub mod hub;
pub mod interactions;
pub mod llm;
pub mod sonar;
pub mod web;
