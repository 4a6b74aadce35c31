//! The research tools: research_note, deep_search and search (Sonar). Long: each runs as an
//! engine job with progress and cancellation; deep_search and search can write their answer
//! into a note.

use rmcp::model::ToolAnnotations;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::Scholia;
use crate::mcp::progress::RunContext;
use crate::mcp::schema::one_of;
use crate::mcp::tool::{Raw, Reply, Tool, researches};
use scholia_base::{Error, Summary};
use scholia_engine::{Answer, BoxFuture, DiskWriter, Question, ResearchOutcome};
use scholia_research::deep_search::{DeepSearchBackend, DeepSearchRequest, DeepSearchResult};
use scholia_research::note::Depth;
use scholia_research::sonar::{self, SonarAnswer};

/// A long report or answer in a result is cut here; the rest of the text budget leaves room for
/// its sources and for how to read all of it.
pub const MAX_FIELD: usize = 18_000;

/// About how long hosts wait for a tool call before they cancel it.
const HOST_CALL_LIMIT_MS: u64 = 60_000;

pub struct ResearchNote;

#[derive(Deserialize, JsonSchema)]
pub struct ResearchNoteInput {
    /// The note to research, relative to the vault (.md, .markdown or .txt)
    path: String,
    /// shallow: search snippets only; deep: also fetch and read the top 2 pages per topic
    #[serde(default)]
    depth: Depth,
    /// Optional: narrow the topics to this aspect of the note (a short phrase)
    focus: Option<String>,
}

impl Tool for ResearchNote {
    type Input = ResearchNoteInput;
    type Output = ResearchOutcome;
    const NAME: &'static str = "research_note";
    const TITLE: &'static str = "Research a note";
    const WRITES: bool = true;

    fn description() -> String {
        "Research one note of the vault and write cited findings into its `## Research` section \
         (replacing research's earlier findings; questions answered there by deep_search or search \
         are kept). Extracts up to 10 topics, searches the web and the vault for each (`deep` also \
         reads the top pages), and writes a synthesis citing only sources it gathered. Without a \
         language model configured it runs offline: related vault notes with their matching \
         passages. Takes seconds (shallow) to minutes (deep); reports progress. Returns a preview; \
         read the whole section with read_note(path, heading=\"Research\"). With a language model \
         and a client that supports MCP tasks it answers at once with a task (research may \
         outlast a call): poll tasks/get for this same result."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        researches().idempotent(false)
    }

    /// With a language model it reads the web (minutes at depth deep); offline it takes
    /// seconds.
    fn long(s: &Scholia, _: &ResearchNoteInput) -> bool {
        s.engine.providers().llm.is_some()
    }

    fn run(s: &Scholia, a: ResearchNoteInput, run: RunContext) -> BoxFuture<'_, Result<Reply<ResearchOutcome>, Error>> {
        Box::pin(async move {
            let vault = s.vault().await?;
            let engine = s.engine.clone();
            let note = engine.resolve_note(&vault, &a.path, None).await?;
            let mut outcome = run
                .job(&engine, Self::NAME, async |job| {
                    engine
                        .research_note(&vault, &note, a.depth, a.focus.as_deref(), &DiskWriter, job)
                        .await
                })
                .await?;
            // The section itself is in the note: read it with read_note.
            outcome.research.section.clear();
            let text = format!(
                "{}\n\nRead the whole section with read_note(path=\"{}\", heading=\"Research\").",
                outcome.research.preview, outcome.research.path
            );
            Ok(Reply::new(outcome, text))
        })
    }
}

/// Where an answer was written, when a call named a note.
#[derive(Serialize, JsonSchema)]
pub struct WrittenTo {
    pub path: String,
    pub heading: String,
    /// Whether the note changed (the same answer again changes nothing).
    pub written: bool,
}

/// A read-only server answers, but writes no note.
fn writable(s: &Scholia, note: &Option<String>) -> Result<(), Error> {
    if note.is_some() && s.read_only() {
        return Err(Error::invalid(
            "note: this server is read-only (scholia mcp --read-only); leave `note` out to get the answer",
        ));
    }
    Ok(())
}

/// Runs `question`, writing the answer into `note` when one is given.
async fn answer(
    s: &Scholia,
    run: RunContext,
    tool: &str,
    question: Question,
    note: Option<String>,
) -> Result<(Answer, Option<WrittenTo>), Error> {
    let engine = s.engine.clone();
    let Some(path) = note else {
        let answer = run
            .job(&engine, tool, async |job| engine.answer(&question, job).await)
            .await?;
        return Ok((answer, None));
    };
    let vault = s.vault().await?;
    let target = engine
        .resolve_note(&vault, &path, None)
        .await
        .map_err(|e| e.field("path", "note"))?;
    let o = run
        .job(&engine, tool, async |job| {
            engine.answer_into_note(&target, &question, &DiskWriter, job).await
        })
        .await?;
    let written = WrittenTo {
        path: o.path,
        heading: o.heading,
        written: o.written,
    };
    Ok((o.answer, Some(written)))
}

/// A long text cut at [`MAX_FIELD`] for an agent's context, and the text to show with how to
/// read all of it; `None` when it fits.
fn cut(full: &mut String, written: bool) -> Option<String> {
    let total = full.chars().count();
    if total <= MAX_FIELD {
        return None;
    }
    *full = full.chars().take(MAX_FIELD).collect();
    let how = match written {
        true => "read the whole text with read_note(path, heading) on the note it was written to",
        false => "call again with `note` to write the whole text into a note, then read it with read_note",
    };
    Some(format!("{full}\n\n[… cut at {MAX_FIELD} of {total} characters; {how}]"))
}

pub struct DeepSearch;

#[derive(Deserialize, JsonSchema)]
pub struct DeepSearchInput {
    /// The question to research
    query: String,
    /// Rounds at most (default DEEP_SEARCH_MAX_ITERATIONS or 5); below 2 runs 2 rounds
    #[schemars(range(min = 1, max = 50))]
    max_iterations: Option<u32>,
    /// Default: the Gemini CLI when installed, else the research LLM
    backend: Option<DeepSearchBackend>,
    /// Optional: a note of the vault to write the report into
    note: Option<String>,
}

/// deep_search's answer (seed 002's shape), cut for an agent's context when long.
#[derive(Serialize, JsonSchema)]
pub struct DeepSearchReply {
    #[serde(flatten)]
    pub result: DeepSearchResult,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub result_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_to: Option<WrittenTo>,
}

impl Summary for DeepSearchReply {
    fn summary(&self) -> String {
        self.result.summary()
    }
}

impl Tool for DeepSearch {
    type Input = DeepSearchInput;
    type Output = DeepSearchReply;
    const NAME: &'static str = "deep_search";
    const TITLE: &'static str = "Deep search";
    const TASK_POLL_MS: u64 = 5_000;

    fn description() -> String {
        "Multi-round web research with verification: round 1 drafts a cited report from five \
         perspectives, later rounds verify and correct it until it is confirmed (at most \
         `max_iterations`, default 5). Use for questions that need a thorough, checked answer and \
         can wait minutes; prefer find_notes for what the vault already holds and `search` for a \
         quick answer. Runs the Gemini CLI when installed, else the research LLM with scholia's own \
         search. Pass `note` to also write the report into that note's `## Research` section as \
         `### <query>`. Errors carry a code: CLI_NOT_FOUND, EXECUTION_ERROR, TIMEOUT, \
         INVALID_INPUT, CANCELLED. A client that supports MCP tasks gets a task at once (it takes \
         minutes): poll tasks/get for this same result."
            .into()
    }

    fn annotations() -> ToolAnnotations {
        researches()
    }

    /// Several rounds of search and verification: minutes.
    fn long(_: &Scholia, _: &DeepSearchInput) -> bool {
        true
    }

    fn run(s: &Scholia, a: DeepSearchInput, run: RunContext) -> BoxFuture<'_, Result<Reply<DeepSearchReply>, Error>> {
        Box::pin(async move {
            writable(s, &a.note)?;
            let req = DeepSearchRequest {
                query: a.query,
                backend: a.backend,
                max_iterations: a.max_iterations,
            };
            s.engine.check_deep_search(&req)?;
            let (found, written_to) = answer(s, run, Self::NAME, Question::DeepSearch(req), a.note).await?;
            let Answer::DeepSearch(r) = found else {
                unreachable!("a deep search answers with a deep search result")
            };
            let mut result = *r;
            let shown = cut(&mut result.result, written_to.is_some());
            let mut text = shown.clone().unwrap_or_else(|| result.result.clone());
            if let Some(n) = &result.note {
                text.push_str(&format!("\n\n{n}"));
            }
            let reply = DeepSearchReply {
                result,
                result_truncated: shown.is_some(),
                written_to,
            };
            Ok(Reply::new(reply, text))
        })
    }
}

pub struct Ask;

#[derive(Deserialize, JsonSchema)]
pub struct AskInput {
    /// The question
    #[schemars(schema_with = "question_schema")]
    query: Raw,
    #[serde(default)]
    #[schemars(schema_with = "model_schema")]
    model: Raw,
    // Described by `timeout_schema`, with each model's own deadline.
    #[serde(default)]
    #[schemars(schema_with = "timeout_schema")]
    timeout: Raw,
    /// Optional: a note of the vault to write the answer into
    note: Option<String>,
}

fn question_schema(_: &mut SchemaGenerator) -> Schema {
    let mut s = Schema::default();
    s.insert("type".into(), "string".into());
    s.insert("description".into(), "The question".into());
    s
}

fn model_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = sonar::MODELS.iter().map(|m| m.name).collect();
    let what: Vec<String> = sonar::MODELS
        .iter()
        .map(|m| format!("{}: {}", m.name, m.use_when))
        .collect();
    one_of(
        &names,
        &format!("{} (default: the server's [sonar] model, else sonar)", what.join("; ")),
    )
}

fn timeout_schema(_: &mut SchemaGenerator) -> Schema {
    let mut s = Schema::default();
    s.insert("type".into(), "integer".into());
    s.insert("minimum".into(), sonar::MIN_TIMEOUT_MS.into());
    s.insert("maximum".into(), sonar::MAX_TIMEOUT_MS.into());
    let per_model: Vec<String> = sonar::MODELS
        .iter()
        .map(|m| format!("{} {}", m.name, m.timeout_ms))
        .collect();
    s.insert(
        "description".into(),
        format!(
            "Overall deadline in milliseconds, retries included (default: the model's own: {})",
            per_model.join(", ")
        )
        .into(),
    );
    s
}

/// search's answer (seed 004's shape), cut for an agent's context when long.
#[derive(Serialize, JsonSchema)]
pub struct AskReply {
    #[serde(flatten)]
    pub answer: SonarAnswer,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub answer_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_to: Option<WrittenTo>,
}

impl Summary for AskReply {
    fn summary(&self) -> String {
        self.answer.summary()
    }
}

impl Tool for Ask {
    type Input = AskInput;
    type Output = AskReply;
    const NAME: &'static str = "search";
    const TITLE: &'static str = "Ask Perplexity Sonar";
    // Checked by the engine with seed 004's codes (INVALID_QUERY, INVALID_MODEL, INVALID_TIMEOUT).
    const ENGINE_CHECKED: &'static [&'static str] = &["query", "model", "timeout"];

    fn description() -> String {
        format!(
            "{} Pass `note` to also write the answer into that note's `## Research` section as \
             `### <query>`. A client that supports MCP tasks gets a task at once when the deadline \
             passes a minute (sonar-deep-research, sonar-reasoning-pro): poll tasks/get for this \
             same result.",
            sonar::tool_description()
        )
    }

    fn annotations() -> ToolAnnotations {
        researches()
    }

    /// A deadline beyond a host's limit for a call (sonar-deep-research's 300 s,
    /// sonar-reasoning-pro's 120 s, or a `timeout` given above 60 s).
    fn long(s: &Scholia, a: &AskInput) -> bool {
        let query = a.query.as_ref().and_then(Value::as_str).unwrap_or("?");
        let model = a.model.as_ref().and_then(Value::as_str);
        sonar::AskRequest::new(query, Some(s.engine.sonar_tier(model)), a.timeout.as_ref())
            .is_ok_and(|r| r.timeout_ms > HOST_CALL_LIMIT_MS)
    }

    fn run(s: &Scholia, a: AskInput, run: RunContext) -> BoxFuture<'_, Result<Reply<AskReply>, Error>> {
        Box::pin(async move {
            writable(s, &a.note)?;
            let query = a.query.as_ref().and_then(Value::as_str).unwrap_or_default();
            let model = match &a.model {
                None | Some(Value::Null) => None,
                Some(Value::String(m)) => Some(m.clone()),
                Some(other) => Some(other.to_string()),
            };
            let req = s.engine.ask_request(query, model.as_deref(), a.timeout.as_ref())?;
            let (found, written_to) = answer(s, run, Self::NAME, Question::Ask(req), a.note).await?;
            let Answer::Ask(mut reply) = found else {
                unreachable!("an ask answers with a Sonar answer")
            };
            let shown = cut(&mut reply.answer, written_to.is_some());
            let mut text = shown.clone().unwrap_or_else(|| reply.answer.clone());
            if !reply.sources.is_empty() {
                text.push_str("\n\nSources:\n");
                for (i, src) in reply.sources.iter().enumerate() {
                    text.push_str(&format!("{}. {}\n", i + 1, src.url));
                }
            }
            // What structuredContent holds, for clients that show only text.
            let m = &reply.metadata;
            text.push_str(&format!(
                "\n\nSearch Metadata:\n- model: {} ({})\n- timeout: {} ms\n- responseTime: {} ms\n- usage: {} tokens",
                m.model, m.model_id, m.timeout, m.response_time, m.usage.total_tokens
            ));
            if m.cost_tier.is_some() {
                text.push_str("\n- costTier: premium");
            }
            if let Some(cost) = m.cost {
                text.push_str(&format!("\n- cost: ${cost:.4}"));
            }
            if m.cached {
                text.push_str("\n- cached: true");
            }
            if let Some(w) = &written_to {
                text.push_str(&format!("\n- written to: {}", w.path));
            }
            let value = AskReply {
                answer: reply,
                answer_truncated: shown.is_some(),
                written_to,
            };
            Ok(Reply::new(value, text))
        })
    }
}
