//! The kinds of background task that run in this process — deep search and research-note —
//! run for the task runner of any surface.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{Engine, ProgressSink, Update};
use scholia_base::{Error, ErrorKind};
use scholia_research::note::{Depth, Source};
use scholia_tasks::{Kind, ResultsMeta, RunOutput, SourceRef, Task, Tasks, Tokens};

/// Runs the tasks that run in this process, for the task runner of any surface.
pub(crate) struct TaskRunner(pub(crate) Arc<Engine>);

impl scholia_tasks::Runner for TaskRunner {
    fn run<'a>(
        &'a self,
        task: &'a Task,
        stop: CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunOutput, Error>> + Send + 'a>> {
        Box::pin(async move {
            let engine = &self.0;
            let tasks = engine.open_tasks().await?;
            let title = format!("background {}", task.kind.as_str().replace('-', " "));
            let sink = TaskProgress {
                tasks,
                id: task.id.clone(),
                handle: tokio::runtime::Handle::current(),
            };
            // Cancelled through its task (`tasks cancel`), not as an editor's job.
            let job = engine.jobs().start(&title, false, |_| Arc::new(sink));
            let token = job.token().clone();
            let watcher = tokio::spawn(async move {
                stop.cancelled().await;
                token.cancel();
            });
            let result = match task.kind {
                Kind::ResearchNote => research_note(engine, task, &job).await,
                _ => deep_search(engine, task, &job).await,
            };
            watcher.abort();
            result
        })
    }
}

async fn deep_search(engine: &Engine, task: &Task, job: &crate::Job) -> Result<RunOutput, Error> {
    let req = scholia_research::deep_search::DeepSearchRequest {
        query: task.query.clone(),
        backend: None,
        max_iterations: None,
    };
    let r = engine.deep_search(&req, job).await?;
    let usage = r
        .metadata
        .tokens
        .as_ref()
        .map(|t| Tokens {
            input: t.prompt,
            output: t.candidates + t.thoughts,
        })
        .unwrap_or_default();
    let sources = r
        .metadata
        .sources_visited
        .iter()
        .map(|u| SourceRef {
            url: u.clone(),
            title: String::new(),
            vault: false,
        })
        .collect();
    Ok(RunOutput {
        report: r.result,
        sources,
        usage,
        metadata: ResultsMeta {
            verified: Some(r.verified),
            iterations: Some(r.metadata.iterations),
            ..ResultsMeta::default()
        },
    })
}

/// Deep research_note on the task's note, written through the hosting writer (the editor's
/// buffer when the note is open in the language server running it) or atomically on disk.
async fn research_note(engine: &Engine, task: &Task, job: &crate::Job) -> Result<RunOutput, Error> {
    let (Some(root), Some(rel)) = (&task.vault, &task.note) else {
        return Err(Error::new(
            "INVALID_INPUT",
            ErrorKind::InvalidInput,
            "the task names no note; start it again with the note",
        ));
    };
    let (session, writer) = engine.task_vault(&PathBuf::from(root)).await?;
    let note = session.resolve(rel, None)?;
    let focus = Some(task.query.as_str()).filter(|q| !q.is_empty());
    let outcome = engine
        .research_note(&session, &note, Depth::Deep, focus, writer.as_ref(), job)
        .await?;
    let r = outcome.research;
    let sources = r
        .sources
        .iter()
        .map(|s| match s {
            Source::Web { title, url } => SourceRef {
                url: url.clone(),
                title: title.clone(),
                vault: false,
            },
            Source::Vault { title, path, .. } => SourceRef {
                url: path.clone(),
                title: title.clone(),
                vault: true,
            },
        })
        .collect();
    Ok(RunOutput {
        report: r.section,
        sources,
        usage: Tokens {
            input: r.usage.prompt_tokens,
            output: r.usage.completion_tokens + r.usage.reasoning_tokens,
        },
        metadata: ResultsMeta {
            note: Some(note.rel),
            written: Some(outcome.written),
            topics: Some(r.topics),
            citations_removed: Some(r.citations_removed),
            research_mode: Some(r.mode.to_string()),
            ..ResultsMeta::default()
        },
    })
}

/// A background job's progress, recorded as its task's current action.
struct TaskProgress {
    tasks: Arc<Tasks>,
    id: String,
    handle: tokio::runtime::Handle,
}

impl ProgressSink for TaskProgress {
    fn update(&self, update: &Update) {
        let (tasks, id, message) = (self.tasks.clone(), self.id.clone(), update.message.clone());
        self.handle.spawn(async move { tasks.report(&id, message).await });
    }
    fn end(&self, _: &str) {}
}
