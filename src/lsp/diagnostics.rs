//! Diagnostics: links that lead nowhere (`scholia_index::link_problems`), the contradictions
//! research found, and hints where a note names another without linking it
//! (`mentions.rs`), for open notes. Pushed (`publishDiagnostics`, a short pause after typing)
//! to clients that do not pull; answered on `textDocument/diagnostic` for clients that do, and
//! both recomputed when the index commits.

use std::time::Duration;

use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::documents::Document;
use scholia_index::{LinkProblem, Problem};

/// Quiet time after a keystroke before a note's diagnostics are pushed.
const SETTLE: Duration = Duration::from_millis(200);
pub use super::names::SOURCE;

/// The diagnostics of an open note's current text, and its version.
pub async fn compute(state: &State, uri: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
    let index = state.index()?;
    let rel = state.rel(uri).await?;
    let (text, version) = state.docs().get(uri).map(|d| (d.text.clone(), d.version))?;
    let t = text.clone();
    let engine = state.engine_now();
    let (problems, contradictions, mentions) = scholia_base::blocking(move || {
        let links = index.link_problems(&rel, &t)?;
        let found = engine.map(|e| e.contradictions(&rel, &t)).unwrap_or_default();
        let mentions = index.unlinked_mentions(&rel, &t)?;
        Ok((links, found, mentions))
    })
    .await
    .ok()?;
    let doc = Document::new(text, version);
    let enc = state.encoding();
    let mut out: Vec<Diagnostic> = problems.iter().map(|p| link_diagnostic(&doc, p, enc)).collect();
    out.extend(super::mentions::hints(&doc, &mentions, enc));
    for c in contradictions {
        let related = state.uri_of(&c.source_note).map(|uri| {
            vec![DiagnosticRelatedInformation {
                location: Location::new(uri, doc.range(c.research_line.clone(), enc)),
                message: format!("Research: {}", c.summary),
            }]
        });
        out.push(Diagnostic {
            range: doc.range(c.claim.clone(), enc),
            severity: Some(DiagnosticSeverity::INFORMATION),
            code: Some(NumberOrString::String("contradiction".into())),
            source: Some(SOURCE.into()),
            message: format!("Contradicted by {}: {}", c.source_label, c.summary),
            related_information: related,
            data: Some(json!({"source": c.source})),
            ..Default::default()
        });
    }
    Some((out, version))
}

fn link_diagnostic(doc: &Document, p: &LinkProblem, enc: super::documents::Encoding) -> Diagnostic {
    let data = match &p.problem {
        Problem::NoNote { target } => Some(json!({"create": target})),
        _ => None,
    };
    Diagnostic {
        range: doc.range(p.range.clone(), enc),
        severity: Some(match p.problem {
            Problem::NoNote { .. } => DiagnosticSeverity::INFORMATION,
            _ => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(p.problem.code().into())),
        source: Some(SOURCE.into()),
        message: p.problem.message(),
        data,
        ..Default::default()
    }
}

/// Pushes `uri`'s diagnostics once its text has settled (clients that do not pull).
pub fn schedule(client: &Client, state: &std::sync::Arc<State>, uri: &Uri) {
    if state.pulls_diagnostics() {
        return;
    }
    let (client, state, uri) = (client.clone(), state.clone(), uri.clone());
    tokio::spawn(async move {
        let version = state.docs().get(&uri).map(|d| d.version);
        tokio::time::sleep(SETTLE).await;
        if state.docs().get(&uri).map(|d| d.version) != version {
            return; // a later change schedules its own
        }
        publish(&client, &state, &uri).await;
    });
}

async fn publish(client: &Client, state: &State, uri: &Uri) {
    if let Some((diagnostics, version)) = compute(state, uri).await {
        client
            .publish_diagnostics(uri.clone(), diagnostics, Some(version))
            .await;
    }
}

/// Every open note again: the index changed (a note created, renamed, deleted elsewhere).
pub async fn refresh_all(client: &Client, state: &State) {
    if state.pulls_diagnostics() {
        if state.diagnostic_refresh() {
            let _ = client.workspace_diagnostic_refresh().await;
        }
    } else {
        let uris: Vec<Uri> = state.docs().keys().cloned().collect();
        for uri in uris {
            publish(client, state, &uri).await;
        }
    }
    if state.code_lens_refresh() {
        let _ = client.code_lens_refresh().await;
    }
}

/// `textDocument/diagnostic`.
pub async fn pull(state: &State, params: DocumentDiagnosticParams) -> RpcResult<DocumentDiagnosticReportResult> {
    let uri = params.text_document.uri;
    if state.docs().get(&uri).is_none() && state.rel(&uri).await.is_none() {
        return Err(state.not_a_note(uri.as_str()));
    }
    let items = match compute(state, &uri).await {
        Some((d, _)) => d,
        // Not open, or the vault still opening: nothing to say yet.
        None => Vec::new(),
    };
    Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
        RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
        },
    )))
}
