//! The tool table: one definition per tool — name, title, description, annotations, input and
//! output types, handler — from which `tools/list`, argument checking and every result are
//! made. Input and output schemas are derived from the types the call reads and returns, so a
//! schema cannot drift from the result.

use std::marker::PhantomData;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Serialize;

use super::Scholia;
use super::progress::RunContext;
use super::schema;
use super::tool::{MAX_TEXT, Tool, bounded};
use super::tools::{edit, research, tasks, vault};
use scholia_base::{Error, Summary};
use scholia_engine::BoxFuture;

/// A tool with its types erased, for the table.
pub trait Entry: Send + Sync {
    fn name(&self) -> &'static str;
    fn writes(&self) -> bool;
    fn describe(&self) -> rmcp::model::Tool;
    fn call<'a>(&'a self, s: &'a Scholia, args: Option<JsonObject>, run: RunContext) -> BoxFuture<'a, CallToolResult>;
    /// Whether the call `args` make may outlast a host's time limit; arguments that do not
    /// parse make a call that fails at once.
    fn long(&self, s: &Scholia, args: &JsonObject) -> bool;
    fn background(&self) -> bool;
    fn poll_ms(&self) -> u64;
    /// Checks `args` as a call would, without running the tool.
    #[cfg(test)]
    fn parse(&self, args: JsonObject) -> Result<(), Error>;
}

struct Def<T>(PhantomData<T>);

impl<T: Tool> Entry for Def<T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn writes(&self) -> bool {
        T::WRITES
    }

    fn describe(&self) -> rmcp::model::Tool {
        let mut annotations = T::annotations();
        annotations.title = Some(T::TITLE.to_string());
        let description = T::description().split_whitespace().collect::<Vec<_>>().join(" ");
        rmcp::model::Tool::new(T::NAME, description, std::sync::Arc::new(schema::input::<T::Input>()))
            .with_title(T::TITLE)
            .with_raw_output_schema(std::sync::Arc::new(schema::output::<T::Output>()))
            .with_annotations(annotations)
    }

    fn long(&self, s: &Scholia, args: &JsonObject) -> bool {
        let mut args = args.clone();
        schema::check(T::NAME, &schema::input::<T::Input>(), &mut args, T::ENGINE_CHECKED)
            .and_then(|()| schema::read::<T::Input>(args))
            .is_ok_and(|input| T::long(s, &input))
    }

    fn background(&self) -> bool {
        T::BACKGROUND
    }

    fn poll_ms(&self) -> u64 {
        T::TASK_POLL_MS
    }

    #[cfg(test)]
    fn parse(&self, mut args: JsonObject) -> Result<(), Error> {
        schema::check(T::NAME, &schema::input::<T::Input>(), &mut args, T::ENGINE_CHECKED)?;
        schema::read::<T::Input>(args).map(|_| ())
    }

    fn call<'a>(&'a self, s: &'a Scholia, args: Option<JsonObject>, run: RunContext) -> BoxFuture<'a, CallToolResult> {
        Box::pin(async move {
            let result = async {
                let mut args = args.unwrap_or_default();
                schema::check(T::NAME, &schema::input::<T::Input>(), &mut args, T::ENGINE_CHECKED)?;
                let input = schema::read::<T::Input>(args)?;
                T::run(s, input, run).await
            }
            .await;
            match result {
                Ok(reply) => ok(&reply.value, &reply.text),
                Err(e) => error(&e),
            }
        })
    }
}

const fn def<T: Tool>() -> &'static dyn Entry {
    &Def::<T>(PhantomData)
}

/// Every tool, in the order an agent should consider them.
pub static TOOLS: &[&dyn Entry] = &[
    def::<vault::FindNotes>(),
    def::<vault::ReadNote>(),
    def::<vault::ListNotes>(),
    def::<edit::BacklinksTool>(),
    def::<edit::EditNote>(),
    def::<edit::CreateNote>(),
    def::<edit::MoveNote>(),
    def::<research::ResearchNote>(),
    def::<research::DeepSearch>(),
    def::<research::Ask>(),
    def::<vault::FetchPage>(),
    def::<tasks::Start>(),
    def::<tasks::Status>(),
    def::<tasks::Results>(),
    def::<tasks::Cancel>(),
    def::<tasks::Estimate>(),
    def::<tasks::Save>(),
];

/// Every tool's description (tests hold each to the table's rules).
#[cfg(test)]
pub fn list() -> Vec<rmcp::model::Tool> {
    TOOLS.iter().map(|t| t.describe()).collect()
}

pub fn find(name: &str) -> Option<&'static dyn Entry> {
    TOOLS.iter().copied().find(|t| t.name() == name)
}

pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name()).collect()
}

/// A successful result: the summary and a bounded text, and the value as structured content.
fn ok<O: Serialize + Summary>(value: &O, text: &str) -> CallToolResult {
    let structured = serde_json::to_value(value).expect("a tool's output serializes");
    let mut r = CallToolResult::structured(structured);
    let body = bounded(text, MAX_TEXT);
    let summary = value.summary();
    r.content = vec![ContentBlock::text(if body.is_empty() {
        summary
    } else {
        format!("{summary}\n\n{body}")
    })];
    r
}

/// A tool error: `[CODE] message` as text and no `structuredContent`. Clients on the
/// TypeScript SDK (and the MCP Inspector) validate structured content against the tool's
/// output schema even on error results, so an error of another shape would hide the message;
/// the text is what every client shows.
fn error(e: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("[{}] {}", e.code, e.message))])
}

#[cfg(test)]
mod tests;
