//! The tools, by what they reach: the vault (and one web page), writing the vault, research pipelines, background
//! tasks. Each is a [`crate::mcp::table::Tool`]: its input and output types, description,
//! annotations and handler in one place.

pub mod edit;
pub mod research;
pub mod tasks;
pub mod vault;
