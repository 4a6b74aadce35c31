//! A finished task's report saved as Markdown, through the vault's write gate.

use serde::Serialize;
use serde_json::json;

use crate::{TaskError, Tasks};

impl Tasks {
    /// Writes a finished task's report with `templates/research-report.md` to
    /// `{output_dir}/{YYYY-MM}/{prefix}_{task_id}_{YYYYmmdd_HHMMSS}.md`.
    pub async fn save(
        &self,
        library: &scholia_prompts::Library,
        id: &str,
        opts: SaveOptions,
    ) -> Result<SavedReport, TaskError> {
        let (t, r) = self.results(id).await?;
        if opts.prefix.is_empty() || opts.prefix.contains(['/', '\\']) || opts.prefix.starts_with('.') {
            return Err(TaskError::Invalid(format!(
                "filename_prefix: `{}` is not a file name prefix (letters, digits, `-`, `_`)",
                opts.prefix
            )));
        }
        let now = time::OffsetDateTime::now_utc();
        let fmt = |f: &[time::format_description::BorrowedFormatItem<'_>]| now.format(f).unwrap_or_default();
        let month = fmt(time::macros::format_description!("[year]-[month]"));
        let stamp = fmt(time::macros::format_description!(
            "[year][month][day]_[hour][minute][second]"
        ));
        let created = now
            .replace_nanosecond(0)
            .unwrap_or(now)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        // A report becomes a note of the vault: made inert like any section, its links only
        // to the sources it lists.
        let links = scholia_vault::inert::Links::from_urls(r.sources.iter().map(|s| s.url.as_str()));
        let report = scholia_vault::inert::markdown(&r.report, 2, &links, &|_| false).0;
        let text = library
            .render(
                scholia_prompts::RESEARCH_REPORT,
                json!({
                    "task": t, "report": report, "sources": r.sources, "metadata": r.metadata,
                    "include_metadata": opts.include_metadata, "include_sources": opts.include_sources,
                    "saved_at": created,
                }),
            )
            .map_err(|e| TaskError::Invalid(e.to_string()))?;
        let filename = format!("{}_{}_{}.md", opts.prefix, t.id, stamp);
        let bytes = text.len();
        let (dir, name) = (opts.output_dir.clone(), filename.clone());
        let path = scholia_base::spawn_blocking(move || dir.join(&month)?.create(&name, &text)).await?;
        let shown = path.display().to_string();
        Ok(SavedReport {
            success: true,
            task_id: t.id,
            file_path: shown,
            file_size_kb: (bytes as f64 / 1024.0 * 10.0).round() / 10.0,
            filename,
            created_at: created,
        })
    }
}

#[derive(Debug, Clone)]
pub struct SaveOptions {
    /// Where to save: only a directory the write gate allows.
    pub output_dir: scholia_vault::confine::ConfinedDir,
    pub prefix: String,
    pub include_metadata: bool,
    pub include_sources: bool,
}

/// `save_research_to_markdown`'s answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SavedReport {
    pub success: bool,
    pub task_id: String,
    pub file_path: String,
    pub file_size_kb: f64,
    pub filename: String,
    pub created_at: String,
}

impl scholia_base::Summary for SavedReport {
    fn summary(&self) -> String {
        format!("saved {} ({} KB)", self.file_path, self.file_size_kb)
    }
}
