//! The LLM layer: one OpenAI-compatible client (streaming, structured-output negotiation, the
//! context window), usage and cost.

pub mod client;
pub mod json;
pub mod stream;
pub mod usage;
pub mod window;

pub use client::{ChatAnswer, ChatClient, ChatRequest, LlmConfig, LlmError, Message, Secret, StructuredMode};
pub use usage::{Price, Usage};
