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
    /// `pending` until a runner picks it up; a Gemini task runs at once (`running_async`), or
    /// is already `completed` when Gemini answered at once (`mode: sync`).
    pub status: Status,
    /// `async`: the task outlives the request; `sync`: it finished within it, `results` hold it.
    pub mode: &'static str,
    pub message: String,
    pub check_status_command: String,
    /// research-note: the note's vault path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `mode: sync` only: the report, its sources and metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<SyncResults>,
    /// `mode: sync` only: what the research cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The results of a task that completed within its start request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SyncResults {
    pub report: String,
    pub report_chars: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub report_truncated: bool,
    pub sources: Vec<SourceRef>,
    pub metadata: ResultsMeta,
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
            results: None,
            cost_usd: None,
        }
    }

    /// A task that finished within its start request, with its results.
    pub fn sync(t: Task, r: Results) -> TaskStarted {
        let mut started = TaskStarted::of(&t);
        let cost = t.cost_usd;
        let full = TaskResults::of(t, r, true);
        started.mode = "sync";
        started.message = "Research completed at once; the results are here.".into();
        started.cost_usd = Some(cost);
        started.results = Some(SyncResults {
            report: full.report,
            report_chars: full.report_chars,
            report_truncated: full.report_truncated,
            sources: full.sources.unwrap_or_default(),
            metadata: full.metadata,
        });
        started
    }
}

impl Summary for TaskStarted {
    fn summary(&self) -> String {
        if let Some(r) = &self.results {
            return format!(
                "{} task {} completed at once: {} characters of report, {} sources, ${:.2}\n\n{}",
                self.kind.as_str(),
                self.task_id,
                r.report_chars,
                r.sources.len(),
                self.cost_usd.unwrap_or(0.0),
                r.report
            );
        }
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
    /// Percent done: the provider's figure when it gives one; otherwise, for a Gemini task,
    /// estimated from the query's likely duration and the time elapsed (`progress_estimated`),
    /// below 100 until the task completes.
    pub progress: Option<u8>,
    /// Whether `progress` and `estimated_completion_minutes` are estimates, not the provider's.
    pub progress_estimated: bool,
    pub current_action: Option<String>,
    pub elapsed_minutes: f64,
    /// Minutes still to go, estimated like `progress`; absent once the task runs past the
    /// estimate's longest duration or when nothing estimates it.
    pub estimated_completion_minutes: Option<f64>,
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
        let elapsed = (end - t.created_at).max(0) as f64 / 60_000.0;
        let (progress, remaining, estimated) = match (t.progress, t.status) {
            (_, Status::Completed | Status::CompletedPartial) => (Some(100), Some(0.0), false),
            (Some(p), _) => (Some(p), None, false),
            (None, Status::Pending | Status::Running) if t.kind == Kind::Gemini => {
                let d = crate::estimate::estimate(&t.query, crate::estimate::DEFAULT_PRICE).estimated_duration;
                let (p, r) = estimated_progress(elapsed, d.likely_minutes, d.max_minutes);
                (Some(p), r, true)
            }
            (None, _) => (None, None, false),
        };
        TaskStatus {
            task_id: t.id,
            kind: t.kind,
            status: t.status,
            progress,
            progress_estimated: estimated,
            current_action: t.current_action,
            estimated_completion_minutes: remaining,
            elapsed_minutes: (elapsed * 10.0).round() / 10.0,
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

/// Percent done and minutes to go after `elapsed` minutes of a task likely to take `likely`
/// and at most `max`: linear to 90 % at the likely duration, then creeping towards 99 %; never
/// 100 before the task says it completed.
fn estimated_progress(elapsed: f64, likely: f64, max: f64) -> (u8, Option<f64>) {
    let p = match elapsed <= likely {
        true => 90.0 * elapsed / likely,
        false => 90.0 + 9.0 * (1.0 - likely / elapsed),
    };
    let remaining = match elapsed {
        e if e < likely => Some(likely - e),
        e if e < max => Some(max - e),
        _ => None,
    };
    let round = |m: f64| (m * 10.0).round() / 10.0;
    (p.clamp(0.0, 99.0) as u8, remaining.map(round))
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
        if let (Some(p), false) = (self.progress, self.status.is_final()) {
            let about = if self.progress_estimated { "~" } else { "" };
            line.push_str(&format!(" · {about}{p}%"));
            if let Some(m) = self.estimated_completion_minutes {
                line.push_str(&format!(", ~{m:.0} min to go"));
            }
        }
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
