//! Code actions and the commands they run. A command returns at once; the work runs in a
//! spawned task with its own cancellation token (cancelled by `window/workDoneProgress/cancel`),
//! reports `$/progress`, and ends with a versioned `workspace/applyEdit` computed against the
//! buffer as it is then, so typing during a run loses nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result as RpcResult};
use tower_lsp_server::ls_types::*;

use super::State;
use super::progress::Reporter;
use crate::research::note::{self, Depth, NoteRequest, SECTION};
use crate::research::{Event, ResearchError};
use crate::vault::section;

pub const RESEARCH: &str = "scholia.research";
pub const COMMANDS: &[&str] = &[RESEARCH, super::selection::DEEP_SEARCH, super::selection::ASK];
const APPLY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

pub fn code_actions(state: &State, uri: &Uri, range: Range) -> Option<Vec<CodeActionOrCommand>> {
    state.rel(uri)?;
    let mut actions = super::selection::code_actions(state, uri, range);
    let action = |title: &str, depth: Depth| {
        CodeActionOrCommand::CodeAction(CodeAction {
            title: title.to_string(),
            kind: Some(CodeActionKind::new("source.scholia.research")),
            command: Some(Command {
                title: title.to_string(),
                command: RESEARCH.to_string(),
                arguments: Some(vec![json!({"uri": uri.as_str(), "depth": depth.as_str()})]),
            }),
            ..Default::default()
        })
    };
    actions.push(action("Research this note", Depth::Shallow));
    actions.push(action("Research this note (deep)", Depth::Deep));
    Some(actions)
}

#[derive(Deserialize)]
struct ResearchArgs {
    uri: String,
    #[serde(default)]
    depth: Option<String>,
    #[serde(default)]
    focus: Option<String>,
}

/// `workspace/executeCommand`: validates, spawns the run, returns at once.
pub async fn execute(client: &Client, state: &Arc<State>, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
    match params.command.as_str() {
        RESEARCH => {
            let arg = params
                .arguments
                .into_iter()
                .next()
                .ok_or_else(|| invalid("scholia.research needs {uri, depth}"))?;
            let args: ResearchArgs =
                serde_json::from_value(arg).map_err(|e| invalid(format!("scholia.research: {e}")))?;
            let depth: Depth = args
                .depth
                .as_deref()
                .unwrap_or("shallow")
                .parse()
                .map_err(|e: ResearchError| invalid(e.to_string()))?;
            let uri = note_uri(state, &args.uri)?;
            let token = format!("scholia/research/{}", NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
            tokio::spawn(run_research(
                client.clone(),
                state.clone(),
                uri,
                depth,
                args.focus,
                token,
            ));
            Ok(None)
        }
        cmd @ (super::selection::DEEP_SEARCH | super::selection::ASK) => {
            super::selection::execute(client, state, cmd, params.arguments).await
        }
        other => Err(invalid(format!(
            "command: `{other}` is not valid; valid: {}",
            COMMANDS.join(", ")
        ))),
    }
}

/// A command's `uri` argument: a URI naming a note of the vault.
pub(crate) fn note_uri(state: &State, raw: &str) -> RpcResult<Uri> {
    let uri: Uri = raw.parse().map_err(|_| invalid(format!("uri: `{raw}` is not a URI")))?;
    if state.rel(&uri).is_none() {
        return Err(invalid(format!("uri: {} is not a note of the vault", uri.as_str())));
    }
    Ok(uri)
}

/// `window/workDoneProgress/cancel`.
pub fn cancel(state: &State, token: &NumberOrString) {
    let key = match token {
        NumberOrString::String(s) => s.clone(),
        NumberOrString::Number(n) => n.to_string(),
    };
    if let Some(t) = state.running.lock().unwrap().get(&key) {
        tracing::info!("cancelling {key}");
        t.cancel();
    }
}

fn percent(e: &Event) -> u32 {
    match e {
        Event::Started { .. } => 5,
        Event::TopicsFound { .. } => 15,
        Event::TopicGathered { done, total, .. } => 15 + (60 * done / (*total).max(1)) as u32,
        Event::SourcesGathered { .. } => 75,
        Event::Synthesizing => 80,
        Event::Checked { .. } => 95,
    }
}

async fn run_research(client: Client, state: Arc<State>, uri: Uri, depth: Depth, focus: Option<String>, token: String) {
    let title = match depth {
        Depth::Shallow => "Research this note",
        Depth::Deep => "Research this note (deep)",
    };
    let cancel = CancellationToken::new();
    state.running.lock().unwrap().insert(token.clone(), cancel.clone());
    let reporter = Reporter::begin(&client, state.supports_progress(), token.clone(), title, true).await;
    let outcome = research_and_apply(&client, &state, &uri, depth, focus, &cancel, &reporter).await;
    state.running.lock().unwrap().remove(&token);
    match outcome {
        Ok(summary) => reporter.end(summary).await,
        Err(ResearchError::Cancelled) => reporter.end("cancelled; the note is unchanged").await,
        Err(e) => {
            tracing::warn!("research failed: {e}");
            reporter.end(format!("failed: {e}")).await;
            client.show_message(MessageType::ERROR, format!("scholia: {e}")).await;
        }
    }
}

async fn research_and_apply(
    client: &Client,
    state: &Arc<State>,
    uri: &Uri,
    depth: Depth,
    focus: Option<String>,
    cancel: &CancellationToken,
    reporter: &Reporter,
) -> Result<String, ResearchError> {
    let engine = state.engine().map_err(ResearchError::Write)?;
    let rel = state
        .rel(uri)
        .ok_or_else(|| ResearchError::Write(format!("{} is not a note of the vault", uri.as_str())))?;
    let text = state.docs.lock().unwrap().get(uri).map(|d| d.text.clone());
    let req = NoteRequest {
        path: rel.clone(),
        depth,
        focus,
        text,
        cwd: None,
    };

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let forward = async {
        while let Some(e) = rx.recv().await {
            reporter.report(e.message(), Some(percent(&e))).await;
        }
    };
    let progress = move |e: Event| {
        let _ = tx.send(e);
    };
    let run = async {
        let r = note::research_note(&engine, &req, &progress, cancel).await;
        drop(progress);
        r
    };
    let (result, ()) = tokio::join!(run, forward);
    let result = result?;
    if cancel.is_cancelled() {
        return Err(ResearchError::Cancelled);
    }
    apply_section(client, state, uri, &rel, &result.section).await?;
    let mut summary = format!("{} topics, {} sources", result.topics_researched, result.sources.len());
    if result.citations_removed > 0 {
        summary.push_str(&format!(
            ", {} unverifiable citations removed",
            result.citations_removed
        ));
    }
    if let Some(c) = result.cost_usd {
        summary.push_str(&format!(", ${c:.4}"));
    }
    Ok(summary)
}

/// Puts `body` under `## Research` in the open buffer (a versioned edit against its current
/// text, recomputed once if the editor finds it stale), or in the file when the buffer is
/// closed.
pub(crate) async fn apply_section(
    client: &Client,
    state: &State,
    uri: &Uri,
    rel: &str,
    body: &str,
) -> Result<(), ResearchError> {
    apply_with(client, state, uri, rel, &|text: &str| {
        section::upsert(text, SECTION, 2, body)
    })
    .await
}

pub(crate) async fn apply_with(
    client: &Client,
    state: &State,
    uri: &Uri,
    rel: &str,
    edit: &(dyn Fn(&str) -> Result<String, section::SectionError> + Sync),
) -> Result<(), ResearchError> {
    for attempt in 0..2 {
        let Some((text, version, doc_edit)) = ({
            let docs = state.docs.lock().unwrap();
            match docs.get(uri) {
                None => None,
                Some(doc) => {
                    let new_text = edit(&doc.text)?;
                    let (range, new) = section::minimal_edit(&doc.text, &new_text);
                    let lsp_range = doc.range(range, state.encoding());
                    Some((doc.text.clone(), doc.version, TextEdit::new(lsp_range, new)))
                }
            }
        }) else {
            // Not open in the editor: the file on disk, atomically.
            let index = state
                .index()
                .ok_or_else(|| ResearchError::Write("the index is not open".into()))?;
            let path = index.vault().abs(rel);
            crate::vault::write::update_note(&path, |current| edit(current))
                .map_err(|e| ResearchError::Write(e.to_string()))?;
            return Ok(());
        };
        let _ = text;
        let workspace_edit = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: Some(version),
                },
                edits: vec![OneOf::Left(doc_edit)],
            }])),
            ..Default::default()
        };
        match tokio::time::timeout(APPLY_TIMEOUT, client.apply_edit(workspace_edit)).await {
            Ok(Ok(r)) if r.applied => return Ok(()),
            Ok(Ok(r)) => {
                tracing::info!("edit not applied (attempt {}): {:?}", attempt + 1, r.failure_reason);
                // Give the editor's didChange a moment to arrive before recomputing.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(Err(e)) => return Err(ResearchError::Write(format!("the editor refused the edit: {e}"))),
            Err(_) => {
                return Err(ResearchError::Write(
                    "the editor did not answer workspace/applyEdit".into(),
                ));
            }
        }
    }
    Err(ResearchError::Write(
        "the editor rejected the edit twice (the buffer kept changing); nothing was written".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_percentages_rise() {
        let events = [
            Event::Started {
                mode: "llm",
                depth: Depth::Shallow,
            },
            Event::TopicsFound { topics: vec![] },
            Event::TopicGathered {
                done: 1,
                total: 2,
                topic: "a".into(),
            },
            Event::TopicGathered {
                done: 2,
                total: 2,
                topic: "b".into(),
            },
            Event::SourcesGathered {
                web: 0,
                vault: 0,
                pages: 0,
                failed: 0,
            },
            Event::Synthesizing,
            Event::Checked { citations_removed: 0 },
        ];
        let p: Vec<u32> = events.iter().map(percent).collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    }
}
