//! The tools: their schemas and descriptions (what an agent reads to choose one), and each
//! call translated to one engine operation. Results carry a bounded text and the same data as
//! `structuredContent`; every engine error is a tool error (`isError`) with its code.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::Scholia;
use super::args::Args;
use super::progress::RunContext;
use scholia_base::Error;
use scholia_engine::{Answer, DiskWriter, Question, Summary};
use scholia_index::PAGE_CHARS;
use scholia_research::deep_search::DeepSearchRequest;
use scholia_research::note::Depth;
use scholia_research::sonar;

/// Text a tool result carries at most (about 6,000 tokens): an agent's context is not flooded.
pub const MAX_TEXT: usize = 24_000;
/// A long report or answer in a result is cut here; the rest of [`MAX_TEXT`] leaves room for
/// its sources and for how to read all of it.
pub const MAX_FIELD: usize = 18_000;

fn schema(v: Value) -> Arc<JsonObject> {
    Arc::new(v.as_object().cloned().expect("a schema is an object"))
}

fn tool(name: &'static str, title: &str, description: String, input: Value, output: Value) -> Tool {
    Tool::new(name, description, schema(input))
        .with_title(title)
        .with_raw_output_schema(schema(output))
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).open_world(false)
}

/// Every tool, in the order an agent should consider them.
pub fn list() -> Vec<Tool> {
    vec![
        tool(
            "find_notes",
            "Find notes",
            "Full-text search of the user's vault (BM25 over titles, headings, tags and text; \
             \"quoted phrases\", title:word). Use this first whenever the question may be answered \
             by the user's own notes: it is instant and free. Returns paths to pass to read_note."
                .into(),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "Words to search for; \"quoted phrase\" for exact wording; title:word to search titles only"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "How many notes at most"}
            }, "required": ["query"]}),
            json!({"type": "object", "properties": {
                "query": {"type": "string"},
                "results": {"type": "array", "items": {"type": "object", "properties": {
                    "path": {"type": "string"}, "title": {"type": "string"},
                    "heading": {"type": ["string", "null"]}, "snippet": {"type": "string"}, "score": {"type": "number"}
                }, "required": ["path", "title", "snippet", "score"]}}
            }, "required": ["query", "results"]}),
        )
        .with_annotations(read_only().with_title_of("Find notes")),
        tool(
            "read_note",
            "Read a note",
            format!(
                "Read a note of the vault, or only the section under one heading. Long notes come in \
                 pages of {PAGE_CHARS} characters: call again with `offset` set to `next_offset`. \
                 After research_note, read its findings with heading \"Research\"."
            ),
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The note, relative to the vault (e.g. `Projects/Koji.md`)"},
                "heading": {"type": "string", "description": "Only the section under this heading (any level)"},
                "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "Character to start from (the previous result's next_offset)"}
            }, "required": ["path"]}),
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "title": {"type": "string"}, "heading": {"type": ["string", "null"]},
                "content": {"type": "string"}, "offset": {"type": "integer"}, "total_chars": {"type": "integer"},
                "next_offset": {"type": ["integer", "null"]}
            }, "required": ["path", "content", "offset", "total_chars"]}),
        )
        .with_annotations(read_only().with_title_of("Read a note")),
        tool(
            "list_notes",
            "List notes",
            "List the vault's notes by path, optionally only those in a folder or carrying a tag \
             (nested tags included). Paged: pass `offset` = the previous `next_offset`."
                .into(),
            json!({"type": "object", "properties": {
                "folder": {"type": "string", "description": "Only notes under this folder, e.g. `Journal`"},
                "tag": {"type": "string", "description": "Only notes with this tag (with or without #); `project` also matches `project/alpha`"},
                "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "Where to start (the previous result's next_offset)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "How many notes at most"}
            }}),
            json!({"type": "object", "properties": {
                "notes": {"type": "array", "items": {"type": "object", "properties": {
                    "path": {"type": "string"}, "title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}
                }, "required": ["path", "title", "tags"]}},
                "total": {"type": "integer"}, "offset": {"type": "integer"}, "next_offset": {"type": ["integer", "null"]}
            }, "required": ["notes", "total"]}),
        )
        .with_annotations(read_only().with_title_of("List notes")),
        tool(
            "research_note",
            "Research a note",
            "Research one note of the vault and write cited findings into its `## Research` section \
             (replacing research's earlier findings; questions answered there by deep_search or \
             search are kept). Extracts up to 10 topics, searches the web and the vault for each \
             (`deep` also reads the top pages), and writes a synthesis citing only sources it \
             gathered. Without a language model configured it runs offline: related vault notes \
             with their matching passages. Takes seconds (shallow) to minutes (deep); reports \
             progress. Returns a preview; read the whole section with read_note(path, heading=\"Research\")."
                .into(),
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The note to research, relative to the vault (.md, .markdown or .txt)"},
                "depth": {"type": "string", "enum": ["shallow", "deep"], "default": "shallow", "description": "shallow: search snippets only; deep: also fetch and read the top 2 pages per topic"},
                "focus": {"type": "string", "description": "Optional: narrow the topics to this aspect of the note (a short phrase)"}
            }, "required": ["path"]}),
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "mode": {"type": "string"}, "depth": {"type": "string"},
                "model": {"type": ["string", "null"]}, "topics": {"type": "array", "items": {"type": "string"}},
                "topics_researched": {"type": "integer"}, "sources": {"type": "array"},
                "citations_removed": {"type": "integer"}, "preview": {"type": "string"},
                "usage": {"type": "object"}, "cost_usd": {"type": ["number", "null"]},
                "warnings": {"type": "array", "items": {"type": "string"}}, "written": {"type": "boolean"}
            }, "required": ["path", "topics_researched", "preview", "written"]}),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true)
                .with_title_of("Research a note"),
        ),
        tool(
            "deep_search",
            "Deep search",
            "Multi-round web research with verification: round 1 drafts a cited report from five \
             perspectives, later rounds verify and correct it until it is confirmed (at most \
             `max_iterations`, default 5). Use for questions that need a thorough, checked answer \
             and can wait minutes; prefer find_notes for what the vault already holds and `search` \
             for a quick answer. Runs the Gemini CLI when installed, else the research LLM with \
             scholia's own search. Pass `note` to also write the report into that note's \
             `## Research` section as `### <query>`. Errors carry a code: CLI_NOT_FOUND, \
             EXECUTION_ERROR, TIMEOUT, INVALID_INPUT, CANCELLED."
                .into(),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "The question to research"},
                "max_iterations": {"type": "integer", "minimum": 2, "maximum": 50, "description": "Rounds at most (default DEEP_SEARCH_MAX_ITERATIONS or 5)"},
                "backend": {"type": "string", "enum": ["gemini-cli", "llm"], "description": "Default: the Gemini CLI when installed, else the research LLM"},
                "note": {"type": "string", "description": "Optional: a note of the vault to write the report into"}
            }, "required": ["query"]}),
            json!({"type": "object", "properties": {
                "success": {"type": "boolean"}, "result": {"type": "string"}, "verified": {"type": "boolean"},
                "note": {"type": "string"}, "result_truncated": {"type": "boolean"},
                "metadata": {"type": "object", "properties": {
                    "duration_ms": {"type": "integer"}, "query": {"type": "string"}, "model": {"type": "string"},
                    "timestamp": {"type": "string"}, "iterations": {"type": "integer"},
                    "sources_visited": {"type": "array", "items": {"type": "string"}},
                    "search_queries_used": {"type": "array", "items": {"type": "string"}},
                    "rounds": {"type": "array"}
                }, "required": ["duration_ms", "query", "model", "timestamp", "iterations", "sources_visited", "search_queries_used"]},
                "written_to": {"type": "object"}
            }, "required": ["success", "result", "verified", "metadata"]}),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .open_world(true)
                .with_title_of("Deep search"),
        ),
        tool(
            "search",
            "Ask Perplexity Sonar",
            format!(
                "{} Pass `note` to also write the answer into that note's `## Research` section as \
                 `### <query>`.",
                sonar::tool_description()
            ),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "The question"},
                "model": {"type": "string", "enum": sonar::MODELS.iter().map(|m| m.name).collect::<Vec<_>>(), "default": sonar::DEFAULT_MODEL,
                          "description": sonar::MODELS.iter().map(|m| format!("{}: {}", m.name, m.use_when)).collect::<Vec<_>>().join("; ")},
                "timeout": {"type": "integer", "minimum": sonar::MIN_TIMEOUT_MS, "maximum": sonar::MAX_TIMEOUT_MS, "description": "Overall deadline in milliseconds, retries included (default per model)"},
                "note": {"type": "string", "description": "Optional: a note of the vault to write the answer into"}
            }, "required": ["query"]}),
            json!({"type": "object", "properties": {
                "answer": {"type": "string"}, "answer_truncated": {"type": "boolean"},
                "sources": {"type": "array", "items": {"type": "object", "properties": {"url": {"type": "string"}, "title": {"type": ["string", "null"]}}, "required": ["url"]}},
                "metadata": {"type": "object", "properties": {
                    "model": {"type": "string"}, "timeout": {"type": "integer"}, "costTier": {"type": "string"},
                    "responseTime": {"type": "integer"}, "usage": {"type": "object"}
                }, "required": ["model", "timeout", "responseTime", "usage"]},
                "written_to": {"type": "object"}
            }, "required": ["answer", "sources", "metadata"]}),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .open_world(true)
                .with_title_of("Ask Perplexity Sonar"),
        ),
        tool(
            "fetch_page",
            "Read a web page",
            "Fetch a web page and return its main content as Markdown (navigation and boilerplate \
             removed), the way research reads pages. Only public http(s) addresses are fetched."
                .into(),
            json!({"type": "object", "properties": {
                "url": {"type": "string", "description": "An http(s) URL"},
                "max_chars": {"type": "integer", "minimum": 1, "maximum": MAX_TEXT, "default": 20000, "description": "Characters of content at most"}
            }, "required": ["url"]}),
            json!({"type": "object", "properties": {
                "url": {"type": "string"}, "title": {"type": ["string", "null"]}, "markdown": {"type": "string"},
                "method": {"type": "string"}, "truncated": {"type": "boolean"}
            }, "required": ["url", "markdown", "truncated"]}),
        )
        .with_annotations(read_only().open_world(true).with_title_of("Read a web page")),
    ]
    .into_iter()
    .chain(task_tools())
    .collect()
}

/// The background-research tools (seed 001): long research that outlives the call.
fn task_tools() -> Vec<Tool> {
    let id = json!({"type": "string", "description": "The task id start_deep_research returned"});
    let any = json!({"type": "object"});
    let store_only = |t: &str| read_only().with_title_of(t);
    vec![
        tool(
            "start_deep_research",
            "Start background deep research",
            "Start Gemini Deep Research in the background (it plans, searches and reads for 5-60              minutes and writes a cited report). Returns a task_id at once; follow it with              check_research_status and read it with get_research_results. Costs real money              (see estimate_research_cost); for a quick answer use `search` instead. Needs              GEMINI_API_KEY in the server's environment."
                .into(),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "The research question"},
                "enable_notifications": {"type": "boolean", "default": true, "description": "A desktop notification when it completes"},
                "max_wait_hours": {"type": "number", "minimum": 0.1, "maximum": 72, "default": 8, "description": "Give up (and cancel at Gemini) after this long"},
                "model": {"type": "string", "default": "deep-research-pro-preview-12-2025", "description": "The Gemini deep-research agent"},
                "kind": {"type": "string", "enum": scholia_tasks::Kind::NAMES, "default": "gemini", "description": "gemini: Gemini Deep Research (needs GEMINI_API_KEY); deep-search: scholia's own multi-round deep search, run in the background; research-note: deep research of `note`, written into its `## Research` section when done (`query` is then the optional focus)"},
                "note": {"type": "string", "description": "research-note only: the note's vault path"}
            }, "required": ["query"]}),
            any.clone(),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).open_world(true).with_title_of("Start background deep research")),
        tool(
            "check_research_status",
            "Check research status",
            "Status of a background research task from the local store (never calls a provider,              costs nothing): status, elapsed minutes, tokens and cost so far, the current action."
                .into(),
            json!({"type": "object", "properties": {"task_id": id}, "required": ["task_id"]}),
            any.clone(),
        )
        .with_annotations(store_only("Check research status")),
        tool(
            "get_research_results",
            "Get research results",
            "The report, sources and metadata of a finished background research task (an error              with the current status while it runs)."
                .into(),
            json!({"type": "object", "properties": {
                "task_id": id,
                "include_sources": {"type": "boolean", "default": true, "description": "Include the cited sources"}
            }, "required": ["task_id"]}),
            any.clone(),
        )
        .with_annotations(store_only("Get research results")),
        tool(
            "cancel_research",
            "Cancel research",
            "Cancel a running background research task, here and at Gemini (which stops the              bill); with save_partial the report so far is kept as its results."
                .into(),
            json!({"type": "object", "properties": {
                "task_id": id,
                "save_partial": {"type": "boolean", "default": true, "description": "Keep the report written so far as the task's results"}
            }, "required": ["task_id"]}),
            any.clone(),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(true).open_world(true).with_title_of("Cancel research")),
        tool(
            "estimate_research_cost",
            "Estimate research cost",
            "Estimate the complexity, duration and cost of a Gemini deep research from the query              alone (no model call, free). Use before start_deep_research."
                .into(),
            json!({"type": "object", "properties": {"query": {"type": "string", "description": "The research question"}}, "required": ["query"]}),
            any.clone(),
        )
        .with_annotations(store_only("Estimate research cost")),
        tool(
            "save_research_to_markdown",
            "Save research to Markdown",
            "Write a finished task's report as a Markdown file              `{output_dir}/{YYYY-MM}/{prefix}_{task_id}_{YYYYmmdd_HHMMSS}.md` (directories created)."
                .into(),
            json!({"type": "object", "properties": {
                "task_id": id,
                "output_dir": {"type": "string", "default": "./research_reports", "description": "Relative to the vault"},
                "filename_prefix": {"type": "string", "default": "research", "description": "The file name's first part"},
                "include_metadata": {"type": "boolean", "default": true, "description": "A table of task id, status, duration, tokens and cost"},
                "include_sources": {"type": "boolean", "default": true, "description": "A Sources list at the end"}
            }, "required": ["task_id"]}),
            any,
        )
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).open_world(false).with_title_of("Save research to Markdown")),
    ]
}

trait WithTitle {
    fn with_title_of(self, title: &str) -> Self;
}

impl WithTitle for ToolAnnotations {
    fn with_title_of(mut self, title: &str) -> Self {
        self.title = Some(title.to_string());
        self
    }
}

/// A successful result: the summary and a bounded text, and the data as structured content.
fn ok(summary: String, text: &str, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::structured(structured);
    let body = bounded(text, MAX_TEXT);
    r.content = vec![ContentBlock::text(if body.is_empty() {
        summary
    } else {
        format!("{summary}\n\n{body}")
    })];
    r
}

/// A tool error: the message the model should see, and the code and kind.
pub fn error(e: &Error) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("[{}] {}", e.code, e.message))]);
    r.structured_content = Some(json!({"code": e.code, "kind": e.kind, "message": e.message}));
    r
}

/// `text`, cut at `max` characters with a note saying so.
fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}\n\n[… cut at {max} of {total} characters]")
}

/// Runs tool `name`.
pub async fn call(s: &Scholia, name: &str, args: Option<JsonObject>, run: RunContext) -> Option<CallToolResult> {
    let result = match name {
        "find_notes" => find_notes(s, args).await,
        "read_note" => read_note(s, args).await,
        "list_notes" => list_notes(s, args).await,
        "research_note" => research_note(s, args, run).await,
        "deep_search" => deep_search(s, args, run).await,
        "search" => ask(s, args, run).await,
        "fetch_page" => fetch_page(s, args).await,
        "start_deep_research"
        | "check_research_status"
        | "get_research_results"
        | "cancel_research"
        | "estimate_research_cost"
        | "save_research_to_markdown" => task_tool(s, task_name(name), args).await,
        _ => return None,
    };
    Some(result.unwrap_or_else(|e| error(&e)))
}

async fn find_notes(s: &Scholia, args: Option<JsonObject>) -> Result<CallToolResult, Error> {
    let a = Args::new("find_notes", args, &["query", "limit"])?;
    let query = a.string("query", "words to search for")?;
    let limit = a.int("limit", 1, 50, 10)?;
    let vault = s.vault.wait(super::VAULT_WAIT).await?;
    let found = vault.search(&query, limit as usize).await?;
    let text: Vec<String> = found
        .hits
        .iter()
        .map(|h| {
            let at = h.heading.as_deref().map(|x| format!(" § {x}")).unwrap_or_default();
            format!("- {} ({}{at}, score {:.2}): {}", h.path, h.title, h.score, h.snippet)
        })
        .collect();
    let results: Vec<Value> = found
        .hits
        .iter()
        .map(
            |h| json!({"path": h.path, "title": h.title, "heading": h.heading, "snippet": h.snippet, "score": h.score}),
        )
        .collect();
    Ok(ok(
        found.summary(),
        &text.join("\n"),
        json!({"query": query, "results": results}),
    ))
}

async fn read_note(s: &Scholia, args: Option<JsonObject>) -> Result<CallToolResult, Error> {
    let a = Args::new("read_note", args, &["path", "heading", "offset"])?;
    let path = a.string("path", "a note path relative to the vault, e.g. `Projects/Koji.md`")?;
    let heading = a.opt_string("heading", "the text of a heading of the note")?;
    let offset = a.int("offset", 0, u64::MAX >> 1, 0)? as usize;
    let vault = s.vault.wait(super::VAULT_WAIT).await?;
    let note = vault.read_note(&path, heading.as_deref(), offset, PAGE_CHARS).await?;
    Ok(ok(
        note.summary(),
        &note.content,
        serde_json::to_value(&note).expect("serializable"),
    ))
}

async fn list_notes(s: &Scholia, args: Option<JsonObject>) -> Result<CallToolResult, Error> {
    let a = Args::new("list_notes", args, &["folder", "tag", "offset", "limit"])?;
    let folder = a.opt_string("folder", "a folder of the vault")?;
    let tag = a.opt_string("tag", "a tag such as `project`")?;
    let offset = a.int("offset", 0, u64::MAX >> 1, 0)? as usize;
    let limit = a.int("limit", 1, 200, 50)? as usize;
    let vault = s.vault.wait(super::VAULT_WAIT).await?;
    let list = vault
        .list_notes(folder.as_deref(), tag.as_deref(), offset, limit)
        .await?;
    let text: Vec<String> = list
        .notes
        .iter()
        .map(|n| format!("- {} ({})", n.path, n.title))
        .collect();
    Ok(ok(
        list.summary(),
        &text.join("\n"),
        serde_json::to_value(&list).expect("serializable"),
    ))
}

async fn research_note(s: &Scholia, args: Option<JsonObject>, run: RunContext) -> Result<CallToolResult, Error> {
    let a = Args::new("research_note", args, &["path", "depth", "focus"])?;
    let path = a.string("path", "a note path relative to the vault, e.g. `Projects/Koji.md`")?;
    let depth = match a.choice("depth", &["shallow", "deep"], "shallow")? {
        "deep" => Depth::Deep,
        _ => Depth::Shallow,
    };
    let focus = a.opt_string("focus", "a short phrase")?;
    let vault = s.vault.wait(super::VAULT_WAIT).await?;
    let engine = s.engine.clone();
    let note = engine.resolve_note(&vault, &path, None).await?;
    let outcome = run
        .job(&engine, "research_note", async |job| {
            engine
                .research_note(&vault, &note, depth, focus.as_deref(), &DiskWriter, job)
                .await
        })
        .await?;
    let mut structured = serde_json::to_value(&outcome).expect("serializable");
    // The section itself stays in the note: read it with read_note.
    structured.as_object_mut().expect("object").remove("section");
    let text = format!(
        "{}\n\nRead the whole section with read_note(path=\"{}\", heading=\"Research\").",
        outcome.research.preview, outcome.research.path
    );
    Ok(ok(outcome.summary(), &text, structured))
}

/// Runs `question`, writing the answer into `note` when one is given: the answer and where it
/// was written.
async fn answer(
    s: &Scholia,
    run: RunContext,
    tool: &str,
    question: Question,
    note: Option<String>,
) -> Result<(Answer, Option<Value>), Error> {
    let engine = s.engine.clone();
    let Some(path) = note else {
        let answer = run
            .job(&engine, tool, async |job| engine.answer(&question, job).await)
            .await?;
        return Ok((answer, None));
    };
    let vault = s.vault.wait(super::VAULT_WAIT).await?;
    let target = engine.resolve_note(&vault, &path, None).await?;
    let o = run
        .job(&engine, tool, async |job| {
            engine.answer_into_note(&target, &question, &DiskWriter, job).await
        })
        .await?;
    let written = json!({"path": o.path, "heading": o.heading, "written": o.written});
    Ok((o.answer, Some(written)))
}

/// A long report in a result: cut, with `<field>_truncated` set and how to get all of it.
fn cut_field(v: &mut Value, field: &str, written: bool) -> String {
    let full = v[field].as_str().unwrap_or_default().to_string();
    let total = full.chars().count();
    if total <= MAX_FIELD {
        return full;
    }
    let cut: String = full.chars().take(MAX_FIELD).collect();
    v[field] = Value::String(cut.clone());
    v[format!("{field}_truncated")] = json!(true);
    let how = if written {
        "read the whole text with read_note(path, heading) on the note it was written to"
    } else {
        "call again with `note` to write the whole text into a note, then read it with read_note"
    };
    format!("{cut}\n\n[… cut at {MAX_FIELD} of {total} characters; {how}]")
}

async fn deep_search(s: &Scholia, args: Option<JsonObject>, run: RunContext) -> Result<CallToolResult, Error> {
    // Every failure has the seed's shape too: {success: false, error: {code, message}}.
    let failed = |e: Error| {
        let mut r = error(&e);
        r.structured_content = Some(json!({"success": false, "error": {"code": e.code, "message": e.message}}));
        r
    };
    let parsed = Args::new("deep_search", args, &["query", "max_iterations", "backend", "note"]).and_then(|a| {
        let query = a.string("query", "the question to research")?;
        let max_iterations = a.opt_int("max_iterations", 1, 50)?.map(|n| n as u32);
        let backend = match a.raw("backend") {
            None => None,
            Some(_) => {
                scholia_engine::config::DeepSearchBackend::parse(a.choice("backend", &["gemini-cli", "llm"], "")?)
            }
        };
        let note = a.opt_string("note", "a note path relative to the vault")?;
        Ok((
            DeepSearchRequest {
                query,
                backend,
                max_iterations,
            },
            note,
        ))
    });
    let (req, note) = match parsed {
        Ok(p) => p,
        Err(e) => return Ok(failed(e)),
    };
    if let Err(e) = s.engine.check_deep_search(&req) {
        return Ok(failed(e));
    }
    let (found, written) = match answer(s, run, "deep_search", Question::DeepSearch(req), note).await {
        Ok(x) => x,
        Err(e) => return Ok(failed(e)),
    };
    let Answer::DeepSearch(r) = found else {
        unreachable!("a deep search answers with a deep search result")
    };
    let mut v = serde_json::to_value(&r).expect("serializable");
    let text = cut_field(&mut v, "result", written.is_some());
    if let Some(w) = written {
        v["written_to"] = w;
    }
    let note = r.note.as_deref().map(|n| format!("\n\n{n}")).unwrap_or_default();
    Ok(ok(r.summary(), &format!("{text}{note}"), v))
}

async fn ask(s: &Scholia, args: Option<JsonObject>, run: RunContext) -> Result<CallToolResult, Error> {
    let a = Args::new("search", args, &["query", "model", "timeout", "note"])?;
    // Query, model and timeout are checked by the engine, with the seed's messages.
    let query = a.raw("query").and_then(Value::as_str).unwrap_or_default().to_string();
    let model = match a.raw("model") {
        None => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => Some(other.to_string()),
    };
    let req = s.engine.ask_request(&query, model.as_deref(), a.raw("timeout"))?;
    let note = a.opt_string("note", "a note path relative to the vault")?;
    let (found, written) = answer(s, run, "search", Question::Ask(req), note).await?;
    let Answer::Ask(reply) = found else {
        unreachable!("an ask answers with a Sonar answer")
    };
    let mut v = serde_json::to_value(&reply).expect("serializable");
    let mut text = cut_field(&mut v, "answer", written.is_some());
    if let Some(w) = written {
        v["written_to"] = w;
    }
    if !reply.sources.is_empty() {
        text.push_str("\n\nSources:\n");
        for (i, src) in reply.sources.iter().enumerate() {
            text.push_str(&format!("{}. {}\n", i + 1, src.url));
        }
    }
    Ok(ok(reply.summary(), &text, v))
}

async fn fetch_page(s: &Scholia, args: Option<JsonObject>) -> Result<CallToolResult, Error> {
    let a = Args::new("fetch_page", args, &["url", "max_chars"])?;
    let url = a.string("url", "an http(s) URL")?;
    let max_chars = a.int("max_chars", 1, MAX_TEXT as u64, 20_000)? as usize;
    let page = s.engine.fetch_page(&url, max_chars).await?;
    let title = page
        .content
        .title
        .clone()
        .map(|t| format!("# {t}\n\n"))
        .unwrap_or_default();
    Ok(ok(
        page.summary(),
        &format!("{title}{}", page.content.markdown),
        serde_json::to_value(&page).expect("serializable"),
    ))
}

fn task_name(name: &str) -> &'static str {
    [
        "start_deep_research",
        "check_research_status",
        "get_research_results",
        "cancel_research",
        "estimate_research_cost",
        "save_research_to_markdown",
    ]
    .into_iter()
    .find(|n| *n == name)
    .expect("a task tool")
}

async fn task_tool(s: &Scholia, name: &'static str, args: Option<JsonObject>) -> Result<CallToolResult, Error> {
    use scholia_engine::ReportSave;
    use scholia_engine::TaskStart;
    use scholia_tasks::Kind;
    let engine = s.engine.clone();
    let tasks = scholia_base::spawn_blocking(move || engine.tasks()).await?;
    match name {
        "estimate_research_cost" => {
            let a = Args::new(name, args, &["query"])?;
            let query = a.string("query", "the research question")?;
            let e = tasks.estimate(&query);
            let v = serde_json::to_value(&e).expect("serializable");
            Ok(ok(format!("{} query: {}", e.query_complexity, e.recommendation), "", v))
        }
        "start_deep_research" => {
            let a = Args::new(
                name,
                args,
                &[
                    "query",
                    "enable_notifications",
                    "max_wait_hours",
                    "model",
                    "kind",
                    "note",
                ],
            )?;
            let kind = match a.choice("kind", scholia_tasks::Kind::NAMES, "gemini")? {
                "deep-search" => Kind::DeepSearch,
                "research-note" => Kind::ResearchNote,
                _ => Kind::Gemini,
            };
            let query = match kind {
                Kind::ResearchNote => a.opt_string("query", "the focus of the research")?.unwrap_or_default(),
                _ => a.string("query", "the research question")?,
            };
            let req = TaskStart {
                query,
                kind,
                notify: a.bool("enable_notifications", true)?,
                max_wait_hours: a.opt_number("max_wait_hours", 0.1, 72.0)?,
                model: a.opt_string("model", "a Gemini deep-research agent name")?,
                note: a.opt_string("note", "the note's vault path")?,
            };
            let root = match kind {
                Kind::ResearchNote => Some(s.vault.wait(super::VAULT_WAIT).await?.vault().root().to_path_buf()),
                _ => None,
            };
            let t = s.engine.start_task(req, root.as_deref(), None).await?;
            let v = json!({"success": true, "task_id": t.id, "status": "running_async", "mode": "async",
                           "message": "Research running in background. Notification when complete.",
                           "check_status_command": format!("check_research_status(task_id='{}')", t.id)});
            Ok(ok(format!("started background research {}", t.id), "", v))
        }
        "check_research_status" => {
            let a = Args::new(name, args, &["task_id"])?;
            let st = tasks.status(&a.string("task_id", "a task id")?).await?;
            let summary = format!("{} {} ({:.1} min)", st.task_id, st.status, st.elapsed_minutes);
            Ok(ok(summary, "", serde_json::to_value(&st).expect("serializable")))
        }
        "get_research_results" => {
            let a = Args::new(name, args, &["task_id", "include_sources"])?;
            let (t, r) = tasks.results(&a.string("task_id", "a task id")?).await?;
            let include = a.bool("include_sources", true)?;
            let mut v = json!({"success": true, "task_id": t.id, "query": t.query, "status": t.status,
                               "report": bounded(&r.report, MAX_FIELD), "metadata": r.metadata});
            if include {
                v["sources"] = r.sources;
            }
            let report = v["report"].as_str().unwrap_or_default().to_string();
            Ok(ok(format!("results of {}", t.id), &report, v))
        }
        "cancel_research" => {
            let a = Args::new(name, args, &["task_id", "save_partial"])?;
            let t = tasks
                .cancel(&a.string("task_id", "a task id")?, a.bool("save_partial", true)?)
                .await?;
            let v = json!({"success": true, "task_id": t.id, "status": t.status, "final_cost_usd": t.cost_usd});
            Ok(ok(format!("cancelled {}", t.id), "", v))
        }
        "save_research_to_markdown" => {
            let a = Args::new(
                name,
                args,
                &[
                    "task_id",
                    "output_dir",
                    "filename_prefix",
                    "include_metadata",
                    "include_sources",
                ],
            )?;
            let id = a.string("task_id", "a task id")?;
            let dir = a.opt_string("output_dir", "a directory")?;
            let vault = s.vault.wait(super::VAULT_WAIT).await.ok();
            let opts = ReportSave {
                output_dir: dir,
                prefix: a.opt_string("filename_prefix", "a file name prefix")?,
                include_metadata: a.bool("include_metadata", true)?,
                include_sources: a.bool("include_sources", true)?,
            };
            let saved = s
                .engine
                .save_report(vault.as_ref().map(|v| v.vault().root()), &id, opts)
                .await?;
            Ok(ok(
                format!("saved {}", saved.file_path),
                "",
                serde_json::to_value(&saved).expect("serializable"),
            ))
        }
        _ => unreachable!("only task tools reach here"),
    }
}
