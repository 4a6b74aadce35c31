//! Code actions and the commands they run. A command is checked and returns at once; the work
//! runs as an engine job in a spawned task (cancelled by `window/workDoneProgress/cancel`),
//! reports `$/progress`, and ends in the editor writer's versioned edit, so typing during a run
//! loses nothing.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::errors::{invalid, rpc};
use super::names::args;
use super::progress;
use super::writer::EditorWriter;
use scholia_base::Error;
use scholia_engine::{Engine, Job, NotePath, Question, SECTION, SECTION_LEVEL, Summary};
use scholia_research::deep_search::DeepSearchRequest;
use scholia_research::note::Depth;
use scholia_vault::section;

pub use super::names::{ASK, BACKGROUND, COMMANDS, DEEP_SEARCH, RESEARCH};

const RESEARCH_TITLE: &str = "Research this note";
const RESEARCH_DEEP_TITLE: &str = "Research this note (deep)";
const DEEP_SEARCH_TITLE: &str = "Deep search selection";
const ASK_TITLE: &str = "Ask Sonar about selection";
const BACKGROUND_TITLE: &str = "Start deep research (background)";
/// Every code action's title with the command it runs, in the order offered: the note's own
/// research first (an editor's default action), then what needs a selection.
pub const ACTIONS: &[(&str, &str)] = &[
    (RESEARCH_TITLE, RESEARCH),
    (RESEARCH_DEEP_TITLE, RESEARCH),
    (DEEP_SEARCH_TITLE, DEEP_SEARCH),
    (ASK_TITLE, ASK),
    (BACKGROUND_TITLE, BACKGROUND),
];
/// A refactor kind, not `source.*`: VS Code's light bulb (Ctrl+.) lists quick fixes and
/// refactors at the cursor and hides source actions under "Source Action…"; Neovim's `gra`,
/// eglot and Helix list every kind.
pub const KIND: &str = "refactor.scholia.research";

fn action(title: &str, command: Option<Command>, disabled: Option<String>) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title: title.to_string(),
        kind: Some(CodeActionKind::new(KIND)),
        command,
        disabled: disabled.map(|reason| CodeActionDisabled { reason }),
        ..Default::default()
    })
}

fn command(title: &str, name: &str, args: Value) -> Command {
    Command {
        title: title.to_string(),
        command: name.to_string(),
        arguments: Some(vec![args]),
    }
}

pub async fn code_actions(state: &State, uri: &Uri, range: Range) -> Option<Vec<CodeActionOrCommand>> {
    state.rel(uri).await?;
    let mut actions = Vec::new();
    for (title, depth) in [(RESEARCH_TITLE, Depth::Shallow), (RESEARCH_DEEP_TITLE, Depth::Deep)] {
        let args = json!({"uri": uri.as_str(), "depth": depth.as_str()});
        actions.push(action(title, Some(command(title, RESEARCH, args)), None));
    }
    // Background research is offered only where it can run (Gemini, or scholia's deep search).
    let background = state.engine_now().is_some_and(|e| e.can_run_background());
    match selected(state, uri, range).await {
        Some(selection) => {
            for (title, name) in [
                (DEEP_SEARCH_TITLE, DEEP_SEARCH),
                (ASK_TITLE, ASK),
                (BACKGROUND_TITLE, BACKGROUND),
            ] {
                if name == BACKGROUND && !background {
                    continue;
                }
                actions.push(match &selection {
                    Selection::Query(q) => action(
                        title,
                        Some(command(
                            title,
                            name,
                            json!({"uri": uri.as_str(), "query": q, "range": range}),
                        )),
                        None,
                    ),
                    Selection::OverlapsResearch => action(title, None, Some(OVERLAPS.to_string())),
                });
            }
        }
        // Without a selection, background research is about the note itself.
        None if background => {
            let args = json!({"uri": uri.as_str()});
            actions.push(action(
                BACKGROUND_TITLE,
                Some(command(BACKGROUND_TITLE, BACKGROUND, args)),
                None,
            ));
        }
        None => {}
    }
    Some(actions)
}

/// A selection worth researching: a few words, not the cursor's one-character selection
/// (Helix) or the symbol at point (eglot).
fn is_question(text: &str) -> bool {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
        >= MIN_SELECTION_WORDS
}

/// The fewest words a selection needs for the selection actions.
const MIN_SELECTION_WORDS: usize = 2;

enum Selection {
    Query(String),
    /// A question is asked in the note, not in its findings.
    OverlapsResearch,
}

const OVERLAPS: &str = "the selection overlaps the `## Research` section; select a question in the note itself";

/// The selected text as a query; `None` when nothing is selected.
async fn selected(state: &State, uri: &Uri, range: Range) -> Option<Selection> {
    let (text, start, end) = {
        let docs = state.docs();
        let doc = docs.get(uri)?;
        let enc = state.encoding();
        let (start, end) = (doc.offset(range.start, enc), doc.offset(range.end, enc));
        (doc.text.clone(), start, end)
    };
    if start >= end || !is_question(&text[start..end]) {
        return None;
    }
    // Finding the section parses the note: off the runtime.
    Some(
        scholia_base::spawn_blocking(move || {
            if let Ok(Some(research)) = section::find(&text, SECTION, SECTION_LEVEL)
                && start < research.end
                && end > research.start
            {
                return Selection::OverlapsResearch;
            }
            Selection::Query(text[start..end].trim().to_string())
        })
        .await,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResearchArgs {
    uri: String,
    #[serde(default)]
    depth: Option<String>,
    #[serde(default)]
    focus: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectionArgs {
    uri: String,
    query: String,
    #[serde(default)]
    range: Option<Range>,
    /// Ask only: the Sonar tier.
    #[serde(default)]
    model: Option<String>,
    /// Ask only: milliseconds.
    #[serde(default)]
    timeout: Option<Value>,
}

/// `workspace/executeCommand`: checks the arguments, starts the job, returns at once.
pub async fn execute(client: &Client, state: &Arc<State>, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
    match params.command.as_str() {
        RESEARCH => {
            let a: ResearchArgs = args(RESEARCH, params.arguments, "{uri, depth}")?;
            let depth: Depth = a
                .depth
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e| rpc(&Error::from(e)))?
                .unwrap_or_default();
            let note = note_arg(state, &a.uri).await?;
            let engine = state.engine().await.map_err(|e| rpc(&e))?;
            let vault = state.host.vault().get().map_err(|e| state.vault_error(e))?;
            let title = match depth {
                Depth::Shallow => RESEARCH_TITLE,
                Depth::Deep => RESEARCH_DEEP_TITLE,
            };
            let job = start_job(client, state, &engine, title);
            let (client, state) = (client.clone(), state.clone());
            tokio::spawn(async move {
                let writer = EditorWriter::new(client.clone(), state);
                let r = engine
                    .research_note(&vault, &note, depth, a.focus.as_deref(), &writer, &job)
                    .await;
                finish(&client, title, job, r.map(|o| Done::same(o.summary()))).await;
            });
            Ok(None)
        }
        BACKGROUND => {
            let a: BackgroundArgs = args(BACKGROUND, params.arguments, "{uri, query?}")?;
            let note = note_arg(state, &a.uri).await?;
            if let (Some(range), Ok(uri)) = (a.range, a.uri.parse::<Uri>())
                && let Some(Selection::OverlapsResearch) = selected(state, &uri, range).await
            {
                return Err(invalid(format!("range: {OVERLAPS}")));
            }
            let engine = state.engine().await.map_err(|e| rpc(&e))?;
            let vault = state.host.vault().get().map_err(|e| state.vault_error(e))?;
            let query = match a.query.as_deref().map(str::trim) {
                Some("") => return Err(invalid("query: empty; select the question to research")),
                Some(q) => q.to_string(),
                None => note_query(state, &engine, &a.uri).await?,
            };
            let job = start_job(client, state, &engine, BACKGROUND_TITLE);
            let (client, state) = (client.clone(), state.clone());
            tokio::spawn(async move {
                let writer = EditorWriter::new(client.clone(), state);
                let r = engine
                    .background_research_into_note(&vault, &note, &query, &writer, &job)
                    .await;
                let done = r.map(|o| Done {
                    told: format!(
                        "{}; report saved to {}",
                        wrote(o.written, &o.heading, &o.path),
                        o.report
                    ),
                    summary: o.summary(),
                });
                finish(&client, BACKGROUND_TITLE, job, done).await;
            });
            Ok(None)
        }
        name @ (DEEP_SEARCH | ASK) => {
            let a: SelectionArgs = args(name, params.arguments, "{uri, query}")?;
            let note = note_arg(state, &a.uri).await?;
            if a.query.trim().is_empty() {
                return Err(invalid("query: empty; select the question to research"));
            }
            let uri: Uri = a
                .uri
                .parse()
                .map_err(|_| invalid(format!("uri: `{}` is not a URI", a.uri)))?;
            if let Some(range) = a.range
                && let Some(Selection::OverlapsResearch) = selected(state, &uri, range).await
            {
                return Err(invalid(format!("range: {OVERLAPS}")));
            }
            let engine = state.engine().await.map_err(|e| rpc(&e))?;
            let (question, title) = if name == DEEP_SEARCH {
                let req = DeepSearchRequest {
                    query: a.query.clone(),
                    backend: None,
                    max_iterations: None,
                };
                engine.check_deep_search(&req).map_err(|e| rpc(&e))?;
                (Question::DeepSearch(req), DEEP_SEARCH_TITLE)
            } else {
                let req = engine
                    .ask_request(&a.query, a.model.as_deref(), a.timeout.as_ref())
                    .map_err(|e| rpc(&e))?;
                (Question::Ask(req), ASK_TITLE)
            };
            // Deep search and Ask need no index: they work while the vault is still opening,
            // and when it could not be opened.
            let job = start_job(client, state, &engine, title);
            let (client, state) = (client.clone(), state.clone());
            tokio::spawn(async move {
                let writer = EditorWriter::new(client.clone(), state);
                let r = engine.answer_into_note(&note, &question, &writer, &job).await;
                let done = r.map(|o| Done {
                    told: format!("{}: {}", wrote(o.written, &o.heading, &o.path), o.summary()),
                    summary: o.summary(),
                });
                finish(&client, title, job, done).await;
            });
            Ok(None)
        }
        super::names::TASKS => super::queries::execute_tasks(state, params.arguments).await,
        super::names::SEARCH => super::queries::execute_search(state, params.arguments).await,
        super::names::STATUS => super::queries::execute_status(state).await,
        super::names::CANCEL => super::queries::execute_cancel(state, params.arguments).await,
        super::names::REFERENCES => {
            let a: PositionArgs = args(super::names::REFERENCES, params.arguments, "{uri, position}")?;
            let uri: Uri = a
                .uri
                .parse()
                .map_err(|_| invalid(format!("uri: `{}` is not a URI", a.uri)))?;
            let found = super::links::references(state, uri, a.position, false).await?;
            Ok(Some(
                serde_json::to_value(found.unwrap_or_default()).expect("locations serialise"),
            ))
        }
        super::names::SHOW_SOURCE => {
            let a: SourceArgs = args(super::names::SHOW_SOURCE, params.arguments, "{uri, source}")?;
            show_source(client, state, a).await
        }
        super::names::CREATE_NOTE => super::create_note::execute(client, state, params.arguments).await,
        other => Err(invalid(format!(
            "command: `{other}` is not valid; valid: {}",
            COMMANDS.join(", ")
        ))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionArgs {
    uri: String,
    position: Position,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceArgs {
    uri: String,
    source: String,
}

/// "Show the contradicting source" on a contradiction diagnostic.
pub fn source_actions(diagnostics: &[Diagnostic], uri: &Uri) -> Vec<CodeActionOrCommand> {
    diagnostics
        .iter()
        .filter(|d| d.code == Some(NumberOrString::String("contradiction".into())))
        .filter_map(|d| {
            let source = d.data.as_ref()?["source"].as_str()?.to_string();
            let title = "Show the contradicting source";
            let args = json!({"uri": uri.as_str(), "source": source});
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: title.into(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                command: Some(command(title, super::names::SHOW_SOURCE, args)),
                ..Default::default()
            }))
        })
        .collect()
}

/// Opens a source: a web page outside the editor (http(s) only), a note of the vault in it.
async fn show_source(client: &Client, state: &State, a: SourceArgs) -> RpcResult<Option<Value>> {
    let source = a.source.trim();
    let target: Uri = if source.starts_with("https://") || source.starts_with("http://") {
        let url = scholia_vault::contain::url(source);
        url.parse()
            .map_err(|_| invalid(format!("source: `{source}` is not a web address")))?
    } else {
        let from = match a.uri.parse::<Uri>() {
            Ok(u) => state.rel(&u).await,
            Err(_) => None,
        };
        let index = state.index().ok_or_else(|| {
            state.vault_error(Error::new(
                "NO_VAULT",
                scholia_base::ErrorKind::NotConfigured,
                "no vault",
            ))
        })?;
        let t = source.to_string();
        let found = scholia_base::spawn_blocking(move || index.resolve_link(&t, from.as_deref()))
            .await
            .map_err(|e| rpc(&e.into()))?
            .ok_or_else(|| invalid(format!("source: no note named `{source}` in the vault")))?;
        state
            .uri_of(&found.path)
            .ok_or_else(|| invalid(format!("source: `{source}` is not in the vault")))?
    };
    let external = !target.as_str().starts_with("file:");
    let shown = client
        .show_document(ShowDocumentParams {
            uri: target,
            external: Some(external),
            take_focus: Some(true),
            selection: None,
        })
        .await
        .map_err(|e| {
            rpc(&Error::new(
                "SHOW_FAILED",
                scholia_base::ErrorKind::Upstream,
                e.message.to_string(),
            ))
        })?;
    Ok(Some(json!({"shown": shown})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackgroundArgs {
    uri: String,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    range: Option<Range>,
}

/// What background research on a whole note asks (the engine writes the brief).
async fn note_query(state: &State, engine: &Arc<Engine>, raw: &str) -> RpcResult<String> {
    let uri: Uri = raw.parse().map_err(|_| invalid(format!("uri: `{raw}` is not a URI")))?;
    let text = state
        .docs()
        .get(&uri)
        .map(|d| d.text.clone())
        .ok_or_else(|| invalid(format!("uri: {} is not open", uri.as_str())))?;
    let engine = engine.clone();
    scholia_base::spawn_blocking(move || engine.note_brief(&text))
        .await
        .map_err(|e| rpc(&e))
}

/// A command's `uri` argument: a URI naming a note of the vault.
async fn note_arg(state: &State, raw: &str) -> RpcResult<NotePath> {
    let uri: Uri = raw.parse().map_err(|_| invalid(format!("uri: `{raw}` is not a URI")))?;
    state.note(&uri).await.ok_or_else(|| state.not_a_note(uri.as_str()))
}

fn start_job(client: &Client, state: &State, engine: &Engine, title: &str) -> Job {
    let supported = state.supports_progress();
    engine
        .jobs()
        .start(title, true, |job| progress::sink(client, supported, job))
}

/// How a job ended well: the progress line, and what the user is told (what was written where).
struct Done {
    summary: String,
    told: String,
}

/// Where a subsection landed, as the user is told.
fn wrote(written: bool, heading: &str, path: &str) -> String {
    let verb = if written { "Wrote" } else { "Unchanged" };
    format!("{verb} `### {heading}` in {path}")
}

impl Done {
    fn same(summary: String) -> Done {
        Done {
            told: summary.clone(),
            summary,
        }
    }
}

/// Ends the job with the result's summary, or the error, and tells the user once
/// (`window/showMessage`): editors that show no progress still learn that it ended, what was
/// written where, or why it failed.
async fn finish(client: &Client, title: &str, job: Job, result: Result<Done, Error>) {
    let (kind, line) = match result {
        Ok(done) => {
            job.end(&done.summary);
            (MessageType::INFO, done.told)
        }
        Err(e) if e.is_cancelled() => {
            job.end(&e.message);
            (MessageType::INFO, format!("{title}: {}", e.message))
        }
        Err(e) => {
            tracing::warn!("command failed: {e}");
            job.end(&format!("failed: {e}"));
            let what = match e.kind {
                scholia_base::ErrorKind::InvalidInput => "could not start",
                _ => "failed",
            };
            (MessageType::ERROR, format!("{title} {what}: {e}"))
        }
    };
    client.show_message(kind, format!("scholia: {line}")).await;
}
