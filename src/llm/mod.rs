//! The LLM layer: one OpenAI-compatible client, structured output, usage and cost.

pub mod client;
pub mod json;
pub mod usage;

pub use client::{ChatAnswer, ChatClient, ChatRequest, LlmConfig, LlmError, Message, Secret, StructuredMode};
pub use usage::{Price, Usage};
