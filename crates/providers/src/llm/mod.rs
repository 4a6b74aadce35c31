//! The LLM layer: one OpenAI-compatible client (streaming, structured-output negotiation, the
//! context window), usage and cost.

mod attempt;
pub mod client;
pub mod json;
mod refusal;
pub mod stream;
mod structured;
mod types;
pub mod usage;
pub mod window;

pub use client::{ChatClient, STALL, StructuredMode};
pub use types::{ChatAnswer, ChatRequest, LlmConfig, LlmError, Message, Secret};
pub use usage::{Price, Usage};
