//! `scholia.tasks`, `scholia.search` and `scholia.status`: commands that answer at once with
//! data (the editor plugins' `:ScholiaTask`, `:ScholiaSearch` and health checks). Task work itself runs in this server's task
//! runner; a research-note task on a note open here lands in the buffer through the editor
//! writer (see `Engine::host_notes`).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::Uri;

use super::State;
use super::errors::{invalid, rpc};
use scholia_base::Error;
use scholia_engine::{ReportSave, Summary, TaskStart};
use scholia_tasks::Kind;

use super::names::{CANCEL, SEARCH, TASKS};
/// `scholia.tasks` actions.
pub const TASK_ACTIONS: &[&str] = &["start", "status", "results", "cancel", "list", "save", "estimate"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    action: String,
    #[serde(default)]
    task_id: Option<String>,
    /// start: the question (gemini, deep-search) or the focus (research-note); estimate.
    #[serde(default)]
    query: Option<String>,
    /// start: gemini, deep-search or research-note (default: research-note with `uri` and no
    /// query, else gemini when GEMINI_API_KEY is set, else deep-search).
    #[serde(default)]
    kind: Option<String>,
    /// start research-note: the note.
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    max_wait_hours: Option<f64>,
    #[serde(default)]
    notify: Option<bool>,
    /// cancel: keep partial results (default true).
    #[serde(default)]
    save_partial: Option<bool>,
    /// save: the directory (default `research_reports` in the vault).
    #[serde(default)]
    output_dir: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

fn need(value: Option<String>, field: &str, what: &str) -> RpcResult<String> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(invalid(format!("{field}: missing; give {what}"))),
    }
}

pub async fn execute_tasks(state: &Arc<State>, arguments: Vec<Value>) -> RpcResult<Option<Value>> {
    let a: TaskArgs = super::names::args(TASKS, arguments, "{action, …}")?;
    let engine = state.engine().await.map_err(|e| rpc(&e))?;
    let root = state.root.get();
    let task_id = |id: Option<String>| need(id, "task_id", "a task id");
    let value = match a.action.as_str() {
        "start" => {
            let kind =
                match a.kind.as_deref() {
                    Some(k) => Some(Kind::parse(k).ok_or_else(|| {
                        invalid(format!("kind: `{k}` is not valid; valid: {}", Kind::NAMES.join(", ")))
                    })?),
                    None => None,
                };
            // The editor names the note by its URI: the field it gets told about is `uri`.
            let note = match (&a.uri, kind) {
                (Some(raw), _) => {
                    let uri: Uri = raw.parse().map_err(|_| invalid(format!("uri: `{raw}` is not a URI")))?;
                    let note = state.note(&uri).await.ok_or_else(|| state.not_a_note(raw))?;
                    Some(note.rel)
                }
                (None, Some(Kind::ResearchNote)) => {
                    return Err(invalid("uri: missing; a research-note task needs the note"));
                }
                (None, _) => None,
            };
            let req = TaskStart {
                query: a.query.unwrap_or_default(),
                kind,
                notify: a.notify,
                max_wait_hours: a.max_wait_hours,
                model: None,
                note,
            };
            to_value(engine.start_task(req, root.as_deref(), None).await)?
        }
        "status" => to_value(engine.task_status(&task_id(a.task_id)?).await)?,
        "results" => to_value(engine.task_results(&task_id(a.task_id)?, None).await)?,
        "cancel" => to_value(engine.cancel_task(&task_id(a.task_id)?, a.save_partial).await)?,
        "list" => to_value(engine.list_tasks(a.limit).await)?,
        "save" => {
            let opts = ReportSave {
                output_dir: a.output_dir,
                ..ReportSave::default()
            };
            to_value(engine.save_report(root.as_deref(), &task_id(a.task_id)?, opts).await)?
        }
        "estimate" => to_value(engine.estimate_task(&a.query.unwrap_or_default()).await)?,
        other => {
            return Err(invalid(format!(
                "action: `{other}` is not valid; valid: {}",
                TASK_ACTIONS.join(", ")
            )));
        }
    };
    Ok(Some(value))
}

/// The engine's answer as the command's result, with its summary for the editor to show.
fn to_value<T: serde::Serialize + Summary>(r: Result<T, Error>) -> RpcResult<Value> {
    let r = r.map_err(|e| rpc(&e))?;
    let mut v = serde_json::to_value(&r).expect("serializable");
    if let Some(o) = v.as_object_mut() {
        o.insert("summary".into(), Value::String(r.summary()));
    }
    Ok(v)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
    /// lexical, semantic or hybrid (default: hybrid when the vault has vectors).
    #[serde(default)]
    mode: Option<String>,
}

/// Full-text search of the vault: hits with their URIs, for a quickfix list or a picker.
pub async fn execute_search(state: &Arc<State>, arguments: Vec<Value>) -> RpcResult<Option<Value>> {
    let a: SearchArgs = super::names::args(SEARCH, arguments, "{query}")?;
    if a.query.trim().is_empty() {
        return Err(invalid("query: empty; give the words to search for"));
    }
    let mode = a
        .mode
        .as_deref()
        .map(str::parse::<scholia_index::SearchMode>)
        .transpose()
        .map_err(|e| invalid(format!("mode: {e}")))?;
    // Right after start the index is still filling: wait (bounded) rather than answer
    // "no notes match" from the first batch.
    let vault = state
        .host
        .vault()
        .wait(scholia_index::VAULT_WAIT)
        .await
        .map_err(|e| state.vault_error(e))?;
    let results = vault
        .search(
            &a.query,
            a.limit
                .unwrap_or(scholia_engine::defaults::PICKER_SEARCH_LIMIT as usize),
            mode,
        )
        .await
        .map_err(|e| rpc(&e))?;
    let hits: Vec<Value> = results
        .hits
        .iter()
        .map(|h| {
            let uri = state.uri_of(&h.path).map(|u| u.as_str().to_string());
            json!({"path": h.path, "uri": uri, "title": h.title, "snippet": h.snippet,
                   "heading": h.heading, "line": h.line, "score": h.score})
        })
        .collect();
    let mut summary = results.summary();
    if !vault.is_synced() {
        summary.push_str(" (the vault is still being indexed: results so far)");
    }
    Ok(Some(
        json!({"summary": summary, "hits": hits, "mode": results.mode, "warnings": results.warnings}),
    ))
}

/// The server's state for a health check: version, vault and index, configured providers,
/// running jobs. Never a secret.
pub async fn execute_status(state: &Arc<State>) -> RpcResult<Option<Value>> {
    let vault = match state.host.vault().get() {
        Ok(v) => {
            let index = v.index().clone();
            let (notes, writer, vectors) = scholia_base::spawn_blocking(move || {
                (
                    index.num_notes(),
                    index.is_writer(),
                    index.vectors().map(|set| set.len()),
                )
            })
            .await;
            json!({"state": "ready", "root": v.vault().root(), "notes": notes, "index_writer": writer,
                   "index_dir": v.index().dir(), "vectors": vectors})
        }
        Err(e) => json!({"state": e.code, "message": e.message}),
    };
    let (providers, jobs) = match state.engine().await {
        Ok(engine) => (json!(engine.providers()), json!(engine.jobs().running())),
        Err(e) => (json!({"error": e.message}), json!([])),
    };
    Ok(Some(
        json!({"name": "scholia", "version": env!("CARGO_PKG_VERSION"), "vault": vault,
                   "providers": providers, "jobs": jobs}),
    ))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    #[serde(default)]
    job: Option<u64>,
}

/// Cancels a running job: `job` (an id from `scholia.status`), else the newest cancellable one.
/// Cancelling a job ends its progress as cancellation does from the editor's progress UI.
pub async fn execute_cancel(state: &Arc<State>, arguments: Vec<Value>) -> RpcResult<Option<Value>> {
    let a: CancelArgs = match arguments.is_empty() {
        true => CancelArgs::default(),
        false => super::names::args(CANCEL, arguments, "{job?}")?,
    };
    let jobs = &state.jobs;
    let cancelled = match a.job {
        Some(id) => match jobs.get(id) {
            Some(info) if info.cancellable && jobs.cancel(id) => Some(info),
            Some(info) => return Err(invalid(format!("job: {id} ({}) cannot be cancelled", info.title))),
            None => return Err(invalid(format!("job: no running job {id}"))),
        },
        None => jobs.cancel_latest(),
    };
    Ok(Some(match cancelled {
        Some(info) => json!({"cancelled": true, "job": info.id, "title": info.title}),
        None => json!({"cancelled": false, "message": "nothing to cancel"}),
    }))
}
