//! One operation per capability, defaults applied inside, each result with one serde shape and
//! a one-line summary that every surface shows.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use scholia_base::Summary;

use super::writer::WriteError;
use super::{Engine, Event, Job, NotePath, NoteWriter, SectionEdit};
use scholia_base::{Error, ErrorKind, blocking};
use scholia_index::VaultSession;
use scholia_providers::web::fetch::Page;
use scholia_research::deep_search::{self, DeepSearchRequest, DeepSearchResult};
use scholia_research::note::{self, Depth, NoteResearch, Source};
use scholia_research::sonar::{self, AskEvent, AskRequest, SonarAnswer, SonarError};

/// research_note's result and whether the note changed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ResearchOutcome {
    #[serde(flatten)]
    pub research: NoteResearch,
    pub written: bool,
}

/// What an offline run's report adds: why only the vault was read, and how to read the web.
pub const OFFLINE_HINT: &str = "; offline: no language model is configured, so only the vault was read \
     (\"A real LLM\" in scholia's README sets one up for web research and a written synthesis)";

impl Summary for ResearchOutcome {
    fn summary(&self) -> String {
        let r = &self.research;
        let (web, vault) = r.sources.iter().fold((0, 0), |(w, v), s| match s {
            Source::Web { .. } => (w + 1, v),
            Source::Vault { .. } => (w, v + 1),
        });
        let mut line = format!(
            "{} `## Research` in {}: {} topics, {} sources cited ({web} web, {vault} vault)",
            if self.written { "Wrote" } else { "Unchanged" },
            r.path,
            r.topics_researched,
            r.sources.len(),
        );
        if r.citations_removed > 0 {
            line.push_str(&format!(", {} unverifiable citations removed", r.citations_removed));
        }
        if let Some(c) = r.cost_usd {
            line.push_str(&format!(", ${c:.4}"));
        }
        // Said where the run is reported, not in every note's section.
        if r.mode == "offline" {
            line.push_str(OFFLINE_HINT);
        }
        line
    }
}

/// A question answered into a note as `### <question>` under `## Research`.
#[derive(Debug, Clone)]
pub enum Question {
    DeepSearch(DeepSearchRequest),
    Ask(AskRequest),
}

impl Question {
    pub fn query(&self) -> &str {
        match self {
            Question::DeepSearch(r) => &r.query,
            Question::Ask(r) => &r.query,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Answer {
    DeepSearch(Box<DeepSearchResult>),
    Ask(SonarAnswer),
}

impl Answer {
    /// The answer's Markdown.
    pub fn text(&self) -> &str {
        match self {
            Answer::DeepSearch(r) => &r.result,
            Answer::Ask(a) => &a.answer,
        }
    }

    /// The URLs the answer may link to: what it gathered.
    pub fn links(&self) -> scholia_vault::inert::Links {
        match self {
            Answer::DeepSearch(r) => r.links.clone(),
            Answer::Ask(a) => sonar::links(a),
        }
    }

    fn source(&self) -> String {
        match self {
            Answer::DeepSearch(r) => format!("Deep search ({})", r.metadata.backend),
            Answer::Ask(a) => format!("Perplexity {}", a.metadata.model),
        }
    }
}

impl Summary for Answer {
    fn summary(&self) -> String {
        match self {
            Answer::DeepSearch(r) => r.summary(),
            Answer::Ask(a) => a.summary(),
        }
    }
}

/// What background research from a note did.
#[derive(Debug, Clone, Serialize)]
pub struct BackgroundOutcome {
    pub path: String,
    pub heading: String,
    pub written: bool,
    pub task_id: String,
    /// The saved report's path.
    pub report: String,
}

impl Summary for BackgroundOutcome {
    fn summary(&self) -> String {
        format!(
            "background research {} done: report saved to {}",
            self.task_id, self.report
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct QuestionOutcome {
    pub path: String,
    pub heading: String,
    pub written: bool,
    pub answer: Answer,
}

impl Summary for QuestionOutcome {
    fn summary(&self) -> String {
        self.answer.summary()
    }
}

impl Engine {
    /// Researches a note and writes its `## Research` section through `writer` (the text
    /// researched is what the writer reads: an editor's unsaved buffer, or the file).
    pub async fn research_note(
        &self,
        vault: &VaultSession,
        note: &NotePath,
        depth: Depth,
        focus: Option<&str>,
        writer: &dyn NoteWriter,
        job: &Job,
    ) -> Result<ResearchOutcome, Error> {
        let started = std::time::Instant::now();
        let text = writer.read(note).await?;
        // Asked before research spends anything: a note whose research holds the owner's edits
        // (or that has two `## Research`) is refused now, not after the run.
        scholia_vault::research_part::replaceable(&text).map_err(WriteError::from)?;
        // A session that answered before checking the vault: the note itself is current.
        vault.refresh_shown(vec![note.rel.clone()]).await?;
        // Related notes weigh meaning where the vault has vectors, on every surface.
        self.meaning_now(vault).await;
        let read = started.elapsed();
        let research = note::research_note(&self.ctx, vault.index(), note, text, depth, focus, job).await?;
        let researched = started.elapsed();
        if job.is_cancelled() {
            return Err(Error::cancelled());
        }
        job.report(Event::Writing);
        let edit = match research.synthesis_failed {
            Some(_) => SectionEdit::sources_only(research.section.clone(), &research.links)?,
            None => SectionEdit::research(research.section.clone(), &research.links)?,
        };
        let how = if research.mode == "offline" {
            "offline"
        } else {
            research.depth.as_str()
        };
        // A small file in the data directory, written before the note names it.
        let stamp = self
            .record_run(
                research.record.clone(),
                how,
                research.model.clone(),
                research.sources.len(),
                &note.abs,
            )
            .await;
        let edit = edit.stamped(stamp);
        let recorded = started.elapsed();
        let written = writer.write(note, &edit).await?;
        tracing::debug!(
            note = note.rel,
            "research stages: read {:?}, research {:?}, record {:?}, write {:?}",
            read,
            researched - read,
            recorded - researched,
            started.elapsed() - recorded
        );
        if let Some(why) = &research.synthesis_failed {
            // The run failed and says why; the sources are in the note unless it already held
            // better research, which is never replaced by a list of links.
            let kept = !written && writer.read(note).await.is_ok_and(|now| edit.keeps_better(&now));
            let what = if kept {
                format!("the research already in `{}` was kept", note.rel)
            } else {
                format!(
                    "the {} gathered sources were written to `{}` as a sources-only section",
                    research.sources.len(),
                    note.rel
                )
            };
            return Err(Error::new(
                "SYNTHESIS_FAILED",
                ErrorKind::Upstream,
                format!("synthesis failed: {why}; {what}"),
            ));
        }
        Ok(ResearchOutcome { research, written })
    }

    /// Resolves a user-given note path inside `vault` (off the runtime).
    pub async fn resolve_note(&self, vault: &VaultSession, input: &str, cwd: Option<&Path>) -> Result<NotePath, Error> {
        let (input, cwd) = (input.to_string(), cwd.map(Path::to_path_buf));
        let index = vault.index().clone();
        blocking(move || {
            let (rel, abs) = index.vault().resolve_rel(&input, cwd.as_deref())?;
            let scope = index.scope();
            if !scope.allows(&rel) {
                return Err(scope.refuse("path", &rel));
            }
            Ok(NotePath { rel, abs })
        })
        .await
    }

    /// Checks a deep-search request before any work (the editor refuses it at once).
    pub fn check_deep_search(&self, req: &DeepSearchRequest) -> Result<(), Error> {
        deep_search::validate(&self.ctx, req).map(|_| ()).map_err(Error::from)
    }

    /// deep_search (seeds 002/003): rounds until verified or the limit.
    pub async fn deep_search(&self, req: &DeepSearchRequest, job: &Job) -> Result<DeepSearchResult, Error> {
        Ok(deep_search::deep_search(&self.ctx, req, job).await?)
    }

    /// A validated Sonar request: the tier defaults to `[sonar] model`, else `sonar`; an
    /// error when OpenRouter is not configured.
    pub fn ask_request(&self, query: &str, model: Option<&str>, timeout: Option<&Value>) -> Result<AskRequest, Error> {
        let req = AskRequest::new(query, Some(self.sonar_tier(model)), timeout)?;
        if self.ctx.sonar.is_none() {
            return Err(SonarError::NotConfigured.into());
        }
        Ok(req)
    }

    /// Asks a Sonar tier.
    pub async fn ask(&self, req: &AskRequest, job: &Job) -> Result<SonarAnswer, Error> {
        let sonar = self.ctx.sonar.as_ref().ok_or(SonarError::NotConfigured)?;
        job.report(AskEvent::Asking {
            model_id: req.model.id,
            timeout_ms: req.timeout_ms,
        });
        tokio::select! {
            r = sonar.ask(req) => Ok(r?),
            _ = job.cancelled() => Err(Error::cancelled()),
        }
    }

    /// Answers `question` (deep search or a Sonar tier).
    pub async fn answer(&self, question: &Question, job: &Job) -> Result<Answer, Error> {
        match question {
            Question::DeepSearch(req) => self
                .deep_search(req, job)
                .await
                .map(|r| Answer::DeepSearch(Box::new(r))),
            Question::Ask(req) => self.ask(req, job).await.map(Answer::Ask),
        }
    }

    /// Answers `question` and writes it under `## Research` as `### <question>` (replaced
    /// when the same question runs again).
    pub async fn answer_into_note(
        &self,
        note: &NotePath,
        question: &Question,
        writer: &dyn NoteWriter,
        job: &Job,
    ) -> Result<QuestionOutcome, Error> {
        // Asked before the question is: an answer replaces only an answer of scholia's that
        // holds no edit of the owner's.
        let heading = deep_search::heading_for(question.query());
        let text = writer.read(note).await?;
        scholia_vault::research_part::answerable(&text, &heading).map_err(WriteError::from)?;
        let answer = self.answer(question, job).await?;
        let rest = match answer.text().chars().count() > scholia_research::MAX_ANSWER_CHARS {
            true => Some(self.save_whole_answer(note, question.query(), &answer).await?),
            false => None,
        };
        let body = match (question, &answer) {
            (Question::Ask(req), Answer::Ask(a)) => sonar::render_section(&self.ctx, req, a, rest.as_deref())?,
            (_, Answer::DeepSearch(r)) => deep_search::render_section(&self.ctx, r, rest.as_deref())?,
            (Question::DeepSearch(_), Answer::Ask(_)) => unreachable!("answers match their questions"),
        };
        if job.is_cancelled() {
            return Err(Error::cancelled());
        }
        job.report(Event::Writing);
        let edit = SectionEdit::question(&heading, body, &answer.links())?;
        let written = writer.write(note, &edit).await?;
        Ok(QuestionOutcome {
            path: note.rel.clone(),
            heading,
            written,
            answer,
        })
    }

    /// Saves an answer too long for a note, whole and made inert, beside the vault's reports;
    /// returns its wikilink target.
    async fn save_whole_answer(&self, note: &NotePath, question: &str, answer: &Answer) -> Result<String, Error> {
        let root = note.vault_root();
        let dir = self.report_dir(Some(&root), None).await?;
        let links = answer.links();
        let text = scholia_vault::inert::markdown(answer.text(), 2, &links, &|_| false).0;
        let now = time::OffsetDateTime::now_utc();
        let body = self.ctx.library.render(
            scholia_prompts::WHOLE_ANSWER,
            serde_json::json!({
                "question": question, "source": answer.source(), "date": now.date().to_string(),
                "note": scholia_vault::stem(&note.rel), "answer": text,
            }),
        )?;
        let month = format!("{}-{:02}", now.year(), now.month() as u8);
        let name = format!("answer_{}.md", now.unix_timestamp_nanos());
        let path = blocking(move || Ok(dir.join(&month)?.create(&name, &body)?)).await?;
        let rel = scholia_vault::paths::relative(&root, &path).unwrap_or_default();
        Ok(rel.trim_end_matches(".md").to_string())
    }

    /// The brief background research on a whole note sends: its title and text (without its
    /// `## Research` section), cut to what a brief can carry. Blocking: parses the note.
    pub fn note_brief(&self, text: &str) -> Result<String, Error> {
        let body = match scholia_vault::section::find(text, super::SECTION, super::SECTION_LEVEL) {
            Ok(Some(r)) => format!("{}{}", &text[..r.start], &text[r.end..]),
            _ => text.to_string(),
        };
        let parsed = scholia_vault::parse::parse(&body, "");
        let plain: String = parsed.plain_text.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = scholia_vault::passage::cut(&plain, 4_000);
        Ok(self
            .ctx
            .library
            .render(
                scholia_prompts::BACKGROUND_BRIEF,
                serde_json::json!({"title": parsed.title, "text": text}),
            )?
            .trim_end()
            .to_string())
    }

    /// Starts background research on `query` from `note` and follows it until it ends: its
    /// status as progress, the job's cancellation cancelling the task (at Gemini too). A
    /// finished report is saved under `research_reports/` in the vault and a `### <query>`
    /// subsection with its opening and a link to it is written under `## Research`. Gemini deep
    /// research when GEMINI_API_KEY is set, else scholia's deep search.
    pub async fn background_research_into_note(
        &self,
        vault: &scholia_index::VaultSession,
        note: &NotePath,
        query: &str,
        writer: &dyn NoteWriter,
        job: &Job,
    ) -> Result<BackgroundOutcome, Error> {
        use scholia_tasks::Status;
        // Asked before the task starts (it may run for many minutes): its answer would replace
        // only an answer of scholia's holding no edit of the owner's.
        let heading = scholia_research::deep_search::heading_for(query);
        let text = writer.read(note).await?;
        scholia_vault::research_part::answerable(&text, &heading).map_err(WriteError::from)?;
        let start = self.start_task(
            super::TaskStart {
                query: query.to_string(),
                ..Default::default()
            },
            None,
            None,
        );
        let task = tokio::select! {
            t = start => t?,
            _ = job.cancelled() => return Err(Error::cancelled()),
        };
        let poll = self.settings.tasks_poll.min(std::time::Duration::from_secs(2));
        let status = loop {
            let s = self.task_status(&task.task_id).await?;
            job.report(Event::Task {
                status: s.status.shown().replace('_', " "),
                minutes: format!("{:.1}", s.elapsed_minutes),
            });
            if s.status.is_final() {
                break s;
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = job.cancelled() => {
                    let _ = self.cancel_task(&task.task_id, Some(true)).await;
                    return Err(Error::cancelled());
                }
            }
        };
        if !matches!(status.status, Status::Completed | Status::CompletedPartial) {
            return Err(Error::new(
                "TASK_FAILED",
                scholia_base::ErrorKind::Upstream,
                format!(
                    "background research {}: {}",
                    status.status.as_str(),
                    status.error.unwrap_or_else(|| "no report".into())
                ),
            ));
        }
        let saved = self
            .save_report(Some(vault.vault().root()), &task.task_id, super::ReportSave::default())
            .await?;
        let results = self.task_results(&task.task_id, Some(true)).await?;
        let report_rel = std::path::Path::new(&saved.file_path)
            .strip_prefix(vault.vault().root())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| saved.filename.clone());
        let target = report_rel.trim_end_matches(".md").to_string();
        let opening: Vec<String> = results
            .report
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .take(3)
            .map(|l| scholia_vault::passage::cut(l, 300))
            .collect();
        let body = self.ctx.library.render(
            scholia_prompts::TASK_SECTION,
            serde_json::json!({
                "kind": task.kind.as_str(), "status": status.status.as_str(), "minutes": status.elapsed_minutes,
                "tokens": status.tokens_used, "cost": status.cost_so_far, "target": target,
                "opening": opening, "sources": results.sources.as_ref().map(Vec::len).unwrap_or(0),
            }),
        )?;
        job.report(Event::Writing);
        let edit = SectionEdit::question(&heading, body, &scholia_vault::inert::Links::none())?;
        let written = writer.write(note, &edit).await?;
        Ok(BackgroundOutcome {
            path: note.rel.clone(),
            heading,
            written,
            task_id: task.task_id,
            report: saved.file_path,
        })
    }

    /// A web page as research reads it: fetched (SSRF-safe) and reduced to its main content.
    pub async fn fetch_page(&self, url: &str, max_chars: usize) -> Result<Page, Error> {
        if max_chars == 0 {
            return Err(Error::invalid(
                "max_chars: 0 is not valid; valid: a positive number of characters",
            ));
        }
        Ok(self
            .ctx
            .fetcher
            .fetch_page(url, self.ctx.page_timeout, max_chars)
            .await?)
    }
}
