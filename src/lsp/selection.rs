//! Code actions on a selection: "Deep search selection" and "Ask Sonar about selection". The
//! selected text is the query; the answer lands under `## Research` as `### <query>` (replaced
//! when the same query runs again). Like note research, the run is spawned with its own
//! cancellation token and ends in a versioned edit against the buffer as it is then.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::actions::{NEXT_TOKEN, apply_with, invalid, note_uri};
use super::progress::Reporter;
use crate::research::deep_search::{self, DeepEvent, DeepSearchRequest};
use crate::research::note::SECTION;
use crate::research::sonar;
use crate::vault::section;

pub const DEEP_SEARCH: &str = "scholia.deepSearch";
pub const ASK: &str = "scholia.ask";

/// The selected text, or why it cannot be a query.
fn selected(state: &State, uri: &Uri, range: Range) -> Option<Result<String, String>> {
    let docs = state.docs.lock().unwrap();
    let doc = docs.get(uri)?;
    let enc = state.encoding();
    let (start, end) = (doc.offset(range.start, enc), doc.offset(range.end, enc));
    if start >= end {
        return None;
    }
    let text = doc.text[start..end].trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(Some(research)) = section::find(&doc.text, SECTION, 2)
        && start < research.end
        && end > research.start
    {
        return Some(Err(format!(
            "the selection overlaps the `## {SECTION}` section; select a question in the note itself"
        )));
    }
    Some(Ok(text.to_string()))
}

pub fn code_actions(state: &State, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let Some(query) = selected(state, uri, range) else {
        return Vec::new();
    };
    let action = |title: &str, command: &str| {
        let (command, disabled) = match &query {
            Ok(q) => (
                Some(Command {
                    title: title.to_string(),
                    command: command.to_string(),
                    arguments: Some(vec![json!({"uri": uri.as_str(), "query": q, "range": range})]),
                }),
                None,
            ),
            Err(reason) => (None, Some(CodeActionDisabled { reason: reason.clone() })),
        };
        CodeActionOrCommand::CodeAction(CodeAction {
            title: title.to_string(),
            kind: Some(CodeActionKind::new("source.scholia.research")),
            command,
            disabled,
            ..Default::default()
        })
    };
    vec![
        action("Deep search selection", DEEP_SEARCH),
        action("Ask Sonar about selection", ASK),
    ]
}

#[derive(Deserialize)]
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

pub async fn execute(
    client: &Client,
    state: &Arc<State>,
    command: &str,
    arguments: Vec<Value>,
) -> RpcResult<Option<Value>> {
    let arg = arguments
        .into_iter()
        .next()
        .ok_or_else(|| invalid(format!("{command} needs {{uri, query}}")))?;
    let args: SelectionArgs = serde_json::from_value(arg).map_err(|e| invalid(format!("{command}: {e}")))?;
    let uri = note_uri(state, &args.uri)?;
    if args.query.trim().is_empty() {
        return Err(invalid("query: empty; select the question to research"));
    }
    if let Some(range) = args.range
        && let Some(Err(reason)) = selected(state, &uri, range)
    {
        return Err(invalid(format!("range: {reason}")));
    }
    let engine = state.engine().map_err(invalid)?;
    let kind = if command == DEEP_SEARCH {
        let req = DeepSearchRequest {
            query: args.query.clone(),
            backend: None,
            max_iterations: None,
        };
        deep_search::validate(&engine, &req).map_err(|e| invalid(format!("[{}] {}", e.code, e.message)))?;
        Kind::DeepSearch(req)
    } else {
        let model = args.model.or_else(|| engine.settings.sonar_model.clone());
        let req = sonar::AskRequest::new(&args.query, model.as_deref(), args.timeout.as_ref())
            .map_err(|e| invalid(e.to_string()))?;
        if engine.settings.openrouter.is_none() {
            return Err(invalid(sonar::SonarError::NotConfigured.to_string()));
        }
        Kind::Ask(req)
    };
    let token = format!("scholia/{}/{}", kind.slug(), NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
    tokio::spawn(run(client.clone(), state.clone(), engine, uri, kind, token));
    Ok(None)
}

enum Kind {
    DeepSearch(DeepSearchRequest),
    Ask(sonar::AskRequest),
}

impl Kind {
    fn slug(&self) -> &'static str {
        match self {
            Kind::DeepSearch(_) => "deep-search",
            Kind::Ask(_) => "ask",
        }
    }

    fn title(&self) -> &'static str {
        match self {
            Kind::DeepSearch(_) => "Deep search selection",
            Kind::Ask(_) => "Ask Sonar about selection",
        }
    }

    fn query(&self) -> &str {
        match self {
            Kind::DeepSearch(r) => &r.query,
            Kind::Ask(r) => &r.query,
        }
    }
}

async fn run(
    client: Client,
    state: Arc<State>,
    engine: Arc<crate::research::Engine>,
    uri: Uri,
    kind: Kind,
    token: String,
) {
    let cancel = CancellationToken::new();
    state.running.lock().unwrap().insert(token.clone(), cancel.clone());
    let reporter = Reporter::begin(&client, state.supports_progress(), token.clone(), kind.title(), true).await;
    let outcome = answer(&engine, &kind, &cancel, &reporter).await;
    let outcome = match outcome {
        Ok(_) if cancel.is_cancelled() => Err(Outcome::Cancelled),
        Ok((body, summary)) => {
            let rel = state.rel(&uri).unwrap_or_default();
            let heading = deep_search::heading_for(kind.query());
            let edit = |text: &str| section::upsert_subsection(text, SECTION, 2, &heading, &body);
            match apply_with(&client, &state, &uri, &rel, &edit).await {
                Ok(()) => Ok(summary),
                Err(e) => Err(Outcome::Failed(e.to_string())),
            }
        }
        Err(e) => Err(e),
    };
    state.running.lock().unwrap().remove(&token);
    match outcome {
        Ok(summary) => reporter.end(summary).await,
        Err(Outcome::Cancelled) => reporter.end("cancelled; the note is unchanged").await,
        Err(Outcome::Failed(message)) => {
            tracing::warn!("{} failed: {message}", kind.title());
            reporter.end(format!("failed: {message}")).await;
            client
                .show_message(MessageType::ERROR, format!("scholia: {message}"))
                .await;
        }
    }
}

enum Outcome {
    Cancelled,
    Failed(String),
}

/// Runs the pipeline; returns the subsection body and a one-line summary.
async fn answer(
    engine: &crate::research::Engine,
    kind: &Kind,
    cancel: &CancellationToken,
    reporter: &Reporter,
) -> Result<(String, String), Outcome> {
    match kind {
        Kind::DeepSearch(req) => {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<DeepEvent>();
            let forward = async {
                let mut last = 0;
                while let Some(e) = rx.recv().await {
                    last = e.percent().unwrap_or(last);
                    reporter.report(e.message(), Some(last)).await;
                }
            };
            let progress = move |e: DeepEvent| {
                let _ = tx.send(e);
            };
            let work = async {
                let r = deep_search::deep_search(engine, req, &progress, cancel).await;
                drop(progress);
                r
            };
            let (result, ()) = tokio::join!(work, forward);
            let result = result.map_err(|e| match e.code {
                "CANCELLED" => Outcome::Cancelled,
                _ => Outcome::Failed(format!("[{}] {}", e.code, e.message)),
            })?;
            let body = deep_search::render_section(engine, &result).map_err(|e| Outcome::Failed(e.message))?;
            let summary = format!(
                "{} after {} rounds, {} sources",
                if result.verified { "verified" } else { "not verified" },
                result.metadata.iterations,
                result.metadata.sources_visited.len()
            );
            Ok((body, summary))
        }
        Kind::Ask(req) => {
            reporter
                .report(
                    format!("asking {} (timeout {} ms)", req.model.id, req.timeout_ms),
                    Some(10),
                )
                .await;
            let sonar = engine.sonar().map_err(|e| Outcome::Failed(e.to_string()))?;
            let answer = tokio::select! {
                r = sonar.ask(req) => r.map_err(|e| Outcome::Failed(e.to_string()))?,
                _ = cancel.cancelled() => return Err(Outcome::Cancelled),
            };
            let body = sonar::render_section(engine, req, &answer).map_err(|e| Outcome::Failed(e.to_string()))?;
            let summary = format!(
                "{}: {} sources in {} ms",
                answer.metadata.model,
                answer.sources.len(),
                answer.metadata.response_time
            );
            Ok((body, summary))
        }
    }
}
