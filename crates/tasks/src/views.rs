//! The answers of the task API, one typed shape each, the same on every surface (the MCP tools
//! of seed 001 serialise them as they are), each with the line a surface shows.

use schemars::JsonSchema;
use serde::Serialize;

use scholia_base::Summary;

use crate::{Kind, Results, ResultsMeta, SourceRef, Status, Task, Tokens, now_ms};

/// A task's report in an answer is cut here (about 4,500 tokens); saving it writes it whole.
pub const MAX_REPORT_CHARS: usize = 18_000;

/// `start_deep_research`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskStarted {
    pub success: bool,
    pub task_id: String,
    pub kind: Kind,
    /// `pending` until a runner picks it up; a Gemini task runs at once (`running_async`).
    pub status: Status,
    /// Always `async`: the task outlives the request.
    pub mode: &'static str,
    pub message: String,
    pub check_status_command: String,
    /// research-note: the note's vault path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TaskStarted {
    pub fn of(t: &Task) -> TaskStarted {
        TaskStarted {
            success: true,
            task_id: t.id.clone(),
            kind: t.kind,
            status: t.status,
            mode: "async",
            message: "Research running in background. Notification when complete.".into(),
            check_status_command: format!("check_research_status(task_id='{}')", t.id),
            note: t.note.clone(),
        }
    }
}

impl Summary for TaskStarted {
    fn summary(&self) -> String {
        let on = self.note.as_deref().map(|n| format!(" on {n}")).unwrap_or_default();
        format!(
            "started {} task {}{on} ({})",
            self.kind.as_str(),
            self.task_id,
            self.status.shown()
        )
    }
}

/// `check_research_status`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskStatus {
    pub task_id: String,
    pub kind: Kind,
    pub status: Status,
    /// Only when the provider says it; never invented.
    pub progress: Option<u8>,
    pub current_action: Option<String>,
    pub elapsed_minutes: f64,
    pub tokens_used: Tokens,
    pub cost_so_far: f64,
    pub error: Option<String>,
    pub query: String,
    /// research-note tasks: the note's vault path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TaskStatus {
    pub fn of(t: Task) -> TaskStatus {
        let end = t.completed_at.unwrap_or_else(now_ms);
        TaskStatus {
            task_id: t.id,
            kind: t.kind,
            status: t.status,
            progress: t.progress,
            current_action: t.current_action,
            elapsed_minutes: ((end - t.created_at).max(0) as f64 / 60_000.0 * 10.0).round() / 10.0,
            tokens_used: Tokens {
                input: t.input_tokens,
                output: t.output_tokens,
            },
            cost_so_far: t.cost_usd,
            error: t.error,
            query: t.query,
            note: t.note,
        }
    }
}

impl Summary for TaskStatus {
    fn summary(&self) -> String {
        let mut line = format!(
            "{} {} · {:.1} min · {} in / {} out tokens · ${:.2}",
            self.task_id,
            self.status.shown(),
            self.elapsed_minutes,
            self.tokens_used.input,
            self.tokens_used.output,
            self.cost_so_far,
        );
        // What it is doing, when that says more than its status.
        if let Some(a) = self
            .current_action
            .as_deref()
            .filter(|a| *a != self.status.as_str() && *a != self.status.shown())
        {
            line.push_str(&format!(" · {a}"));
        }
        if let Some(e) = &self.error {
            line.push_str(&format!("\nerror: {e}"));
        }
        line
    }
}

/// `get_research_results`'s answer: the report (cut at [`MAX_REPORT_CHARS`]; saving writes it
/// whole), its sources unless left out, and what is known about the run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskResults {
    pub success: bool,
    pub task_id: String,
    pub kind: Kind,
    pub query: String,
    pub status: Status,
    pub report: String,
    /// The report's length before any cut, in characters.
    pub report_chars: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub report_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<SourceRef>>,
    pub metadata: ResultsMeta,
}

impl TaskResults {
    pub fn of(t: Task, r: Results, include_sources: bool) -> TaskResults {
        let report_chars = r.report.chars().count();
        let report_truncated = report_chars > MAX_REPORT_CHARS;
        let report = match report_truncated {
            true => {
                let cut: String = r.report.chars().take(MAX_REPORT_CHARS).collect();
                format!(
                    "{cut}\n\n[… cut at {MAX_REPORT_CHARS} of {report_chars} characters; save the report \
                     (save_research_to_markdown, `scholia tasks save {}`) to read all of it]",
                    t.id
                )
            }
            false => r.report,
        };
        TaskResults {
            success: true,
            task_id: t.id,
            kind: t.kind,
            query: t.query,
            status: t.status,
            report,
            report_chars,
            report_truncated,
            sources: include_sources.then_some(r.sources),
            metadata: r.metadata,
        }
    }
}

impl Summary for TaskResults {
    fn summary(&self) -> String {
        let sources = match &self.sources {
            Some(s) => format!(", {} sources", s.len()),
            None => String::new(),
        };
        let cut = match self.report_truncated {
            true => format!(" (cut at {MAX_REPORT_CHARS})"),
            false => String::new(),
        };
        format!(
            "{} {}: {} characters of report{cut}{sources}",
            self.task_id,
            self.status.shown(),
            self.report_chars
        )
    }
}

/// `cancel_research`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskCancelled {
    pub success: bool,
    pub task_id: String,
    pub status: Status,
    pub final_cost_usd: f64,
    /// Whether what the provider produced so far was kept as the task's results.
    pub partial_saved: bool,
    /// Cancelling at the provider failed (the task is cancelled here all the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TaskCancelled {
    pub fn of(t: Task, partial_saved: bool) -> TaskCancelled {
        TaskCancelled {
            success: true,
            task_id: t.id,
            status: t.status,
            final_cost_usd: t.cost_usd,
            partial_saved,
            error: t.error,
        }
    }
}

impl Summary for TaskCancelled {
    fn summary(&self) -> String {
        let kept = match self.partial_saved {
            true => ", partial results kept",
            false => "",
        };
        let warn = self.error.as_deref().map(|e| format!("; {e}")).unwrap_or_default();
        format!(
            "{} cancelled (cost so far ${:.2}){kept}{warn}",
            self.task_id, self.final_cost_usd
        )
    }
}

/// The newest tasks, newest first, as stored.
#[derive(Debug, Clone, Serialize)]
pub struct TaskList {
    pub tasks: Vec<Task>,
}

impl TaskList {
    pub fn of(tasks: Vec<Task>) -> TaskList {
        TaskList { tasks }
    }

    /// One line per task.
    pub fn lines(&self) -> Vec<String> {
        self.tasks
            .iter()
            .map(|t| {
                format!(
                    "{} {:<17} {:<13} {}",
                    t.id,
                    t.status.shown(),
                    t.kind.as_str(),
                    match (&t.note, t.query.as_str()) {
                        (Some(note), "") => note.clone(),
                        (Some(note), focus) => format!("{note} ({focus})"),
                        (None, q) => q.chars().take(60).collect::<String>(),
                    }
                )
            })
            .collect()
    }
}

impl Summary for TaskList {
    fn summary(&self) -> String {
        if self.tasks.is_empty() {
            return "no tasks yet; start one with start_deep_research (`scholia tasks start QUESTION`)".into();
        }
        let open = self.tasks.iter().filter(|t| !t.status.is_final()).count();
        format!("{} tasks, {open} still running", self.tasks.len())
    }
}

#[cfg(test)]
mod tests;
