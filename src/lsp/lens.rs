//! Code lenses: the note's backlinks on its title, and on `## Research` when, how and from how
//! many sources it was made — and whether the note changed since (click to re-run).

use serde_json::json;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;

use super::State;
use super::names::{REFERENCES, RESEARCH};

use super::documents::Document;
use super::errors;
use scholia_vault::parse;
use scholia_vault::stamp::ResearchStamp;

pub async fn code_lenses(state: &State, uri: Uri) -> RpcResult<Option<Vec<CodeLens>>> {
    let (Some(text), Some(rel)) = (state.text(&uri).await, state.rel(&uri).await) else {
        return Ok(None);
    };
    let doc = Document::new(text, 0);
    let enc = state.encoding();
    let parsed = parse::parse(&doc.text, "");
    let mut lenses = Vec::new();
    if let Some(index) = state.index() {
        let r = rel.clone();
        let count = scholia_base::blocking(move || Ok(index.backlink_count(&r)?))
            .await
            .map_err(|e| errors::rpc(&e))?;
        let at = parsed
            .headings
            .iter()
            .find(|h| h.level == 1)
            .map_or(0, |h| h.section.start);
        let pos = doc.position(at, enc);
        let title = match count {
            0 => "no backlinks".to_string(),
            1 => "1 backlink".to_string(),
            n => format!("{n} backlinks"),
        };
        lenses.push(CodeLens {
            range: Range::new(pos, pos),
            command: Some(Command {
                title,
                command: REFERENCES.into(),
                arguments: Some(vec![json!({"uri": uri.as_str(), "position": pos})]),
            }),
            data: None,
        });
    }
    // Reading the section parses the note again: off the runtime.
    let text = doc.text.clone();
    let research = scholia_base::spawn_blocking(move || {
        let (stamp, start) = ResearchStamp::of(&text)?;
        // An edited part is refused by a new run: the lens says so before it is clicked.
        let since = if scholia_vault::research_part::replaceable(&text).is_err() {
            Since::Edited
        } else if stamp.stale(&text, start) {
            Since::Stale
        } else {
            Since::Current
        };
        Some((stamp, start, since))
    })
    .await;
    if let Some((stamp, start, state_of)) = research {
        let pos = doc.position(start, enc);
        // The minute is in the run's record (the note keeps the day).
        let when = match state.engine_now() {
            Some(engine) => {
                let run = stamp.run.clone();
                let file = uri.to_file_path().map(|p| p.into_owned());
                scholia_base::spawn_blocking(move || engine.run_time(&run, file.as_deref()?)).await
            }
            None => None,
        }
        .unwrap_or_else(|| stamp.at.clone());
        let depth = if stamp.depth == "deep" { "deep" } else { "shallow" };
        lenses.push(CodeLens {
            range: Range::new(pos, pos),
            command: Some(Command {
                title: research_title(&stamp, &when, state_of),
                command: RESEARCH.into(),
                arguments: Some(vec![json!({"uri": uri.as_str(), "depth": depth})]),
            }),
            data: None,
        });
    }
    Ok(Some(lenses))
}

/// What changed since the research was written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Since {
    Current,
    /// The note above the section changed.
    Stale,
    /// The owner wrote inside scholia's part: a new run is refused until they move it out.
    Edited,
}

/// `Researched 2026-11-25 10:04 UTC · deep · llama3.1 · 7 sources · stale: the note changed — re-run`.
fn research_title(stamp: &ResearchStamp, when: &str, since: Since) -> String {
    let when = when.replace('T', " ").replace('Z', " UTC");
    let mut parts = vec![format!("Researched {when}"), stamp.depth.clone()];
    if stamp.model != "none" {
        parts.push(stamp.model.clone());
    }
    parts.push(match stamp.sources {
        1 => "1 source".into(),
        n => format!("{n} sources"),
    });
    parts.push(match since {
        Since::Current => "re-run".into(),
        Since::Stale => "stale: the note changed since — re-run".into(),
        Since::Edited => "edited since: move your words out of it to re-run".into(),
    });
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn research_lens_titles() {
        let s = ResearchStamp {
            run: "r1".into(),
            at: "2026-11-25T10:04Z".into(),
            depth: "offline".into(),
            model: "none".into(),
            sources: 1,
            above: String::new(),
            words: String::new(),
        };
        assert_eq!(
            research_title(&s, "2026-11-25T10:04Z", Since::Current),
            "Researched 2026-11-25 10:04 UTC · offline · 1 source · re-run"
        );
        assert_eq!(
            research_title(&s, "2026-11-25", Since::Current),
            "Researched 2026-11-25 · offline · 1 source · re-run"
        );
        let s = ResearchStamp {
            depth: "deep".into(),
            model: "llama3.1:8b".into(),
            sources: 7,
            ..s
        };
        assert_eq!(
            research_title(&s, "2026-11-25T10:04Z", Since::Stale),
            "Researched 2026-11-25 10:04 UTC · deep · llama3.1:8b · 7 sources · stale: the note changed since — re-run"
        );
        assert_eq!(
            research_title(&s, "2026-11-25", Since::Edited),
            "Researched 2026-11-25 · deep · llama3.1:8b · 7 sources · edited since: move your words out of it to re-run"
        );
    }
}
