//! The Gemini CLI backend: the CLI searches and reads by itself; scholia runs the seed-003 JSON
//! cycle around it (main prompt; on invalid JSON a correction run over a temp file; on a failed
//! correction the whole cycle again after a backoff; `EXECUTION_ERROR` after [`JSON_CYCLES`]).

use std::path::PathBuf;

use serde_json::json;

use super::{
    Backend, CYCLE_BACKOFF, DeepEvent, DeepSearchError, JSON_CYCLES, RoundJson, RoundOutput, Spend, parse_round,
    render_round_prompt, schema_example, summary_of,
};
use crate::Context;
use scholia_base::Job;
use scholia_prompts as prompts;
use scholia_providers::gemini_cli::{CliError, CliOutput, Purpose, Tokens};

pub(super) struct GeminiBackend<'a> {
    pub ctx: &'a Context,
}

/// Why a JSON correction did not produce a round.
#[derive(Debug, thiserror::Error)]
enum CorrectionFailed {
    #[error(transparent)]
    Cli(#[from] CliError),
    #[error("writing the temp file for JSON correction: {0}")]
    TempFile(std::io::Error),
    #[error("the corrected output is still not valid: {0}")]
    StillInvalid(#[from] super::BadRound),
    #[error("template: {0}")]
    Template(#[from] scholia_prompts::TemplateError),
}

impl Backend for GeminiBackend<'_> {
    fn name(&self) -> &'static str {
        "gemini-cli"
    }

    fn configured_model(&self) -> Option<String> {
        self.ctx.gemini_model.clone()
    }

    async fn ready(&self) -> Result<(), DeepSearchError> {
        // Fails fast with CLI_NOT_FOUND before any round.
        self.ctx.gemini.json_output().await?;
        Ok(())
    }

    async fn round(
        &self,
        query: &str,
        n: u32,
        current: Option<&str>,
        spend: &mut Spend,
        job: &Job,
    ) -> Result<RoundOutput, DeepSearchError> {
        let ctx = self.ctx;
        let cli = &ctx.gemini;
        let prompt = render_round_prompt(ctx, query, n, current, None)?;
        let model = ctx.gemini_model.as_deref();
        for cycle in 1..=JSON_CYCLES {
            let out = cli.run(&prompt, model, Purpose::Search, job.token()).await?;
            spend.add_cli(&out);
            let parse_error = match parse_round(&out.response) {
                Ok(r) => return Ok(output(r)),
                Err(e) => e,
            };
            tracing::warn!("round {n}: output is not valid JSON ({parse_error}); attempting correction");
            job.report(DeepEvent::Correcting { n, cycle });
            match self.correct(&out.response, job, spend).await {
                Ok(r) => return Ok(output(r)),
                Err(CorrectionFailed::Cli(e)) if e.is_fatal() => return Err(e.into()),
                Err(e) => eprintln!("[ERROR] JSON correction failed (round {n}, attempt {cycle}/{JSON_CYCLES}): {e}"),
            }
            if cycle < JSON_CYCLES {
                let wait = CYCLE_BACKOFF[cycle - 1];
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = job.cancelled() => return Err(DeepSearchError::cancelled()),
                }
            }
        }
        Err(DeepSearchError::failed(format!(
            "round {n}: the Gemini CLI's output was not valid JSON in {JSON_CYCLES} attempts; all retry and correction attempts were exhausted"
        )))
    }
}

impl GeminiBackend<'_> {
    /// Writes the invalid output to a temp file in the correction run's own directory, asks the
    /// CLI to reformat it, deletes the file.
    async fn correct(&self, invalid: &str, job: &Job, spend: &mut Spend) -> Result<RoundJson, CorrectionFailed> {
        let ctx = self.ctx;
        let cli = &ctx.gemini;
        let dir = cli.prepare(Purpose::Correction).await?;
        let path = dir.write_temp(invalid).await.map_err(CorrectionFailed::TempFile)?;
        let result = async {
            let prompt = ctx.library.render(
                prompts::JSON_CORRECTION,
                json!({"path": path.display().to_string(), "schema": schema_example()}),
            )?;
            let model = ctx.gemini_correction_model.as_deref();
            Ok::<CliOutput, CorrectionFailed>(cli.run_in(&dir, &prompt, model, job.token()).await?)
        }
        .await;
        remove_temp(path).await;
        dir.remove().await;
        let out = result?;
        spend.add_cli(&out);
        Ok(parse_round(&out.response)?)
    }
}

async fn remove_temp(path: PathBuf) {
    let shown = path.display().to_string();
    if let Err(e) = blocking(move || std::fs::remove_file(&path)).await {
        eprintln!("[ERROR] could not delete {shown}: {e}");
        tracing::error!("could not delete {shown}: {e}");
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> std::io::Result<T> + Send + 'static) -> std::io::Result<T> {
    scholia_base::spawn_blocking(f).await
}

fn output(r: RoundJson) -> RoundOutput {
    RoundOutput {
        links: scholia_vault::inert::Links::from_urls(&r.metadata.sources_visited),
        verified: r.verified,
        summary: summary_of(r.metadata.summary, &r.report),
        report: r.report,
        sources: r.metadata.sources_visited,
        queries: r.metadata.search_queries_used,
    }
}

impl Spend {
    fn add_cli(&mut self, out: &CliOutput) {
        self.tokens.get_or_insert_with(Tokens::default).add(&out.tokens);
        if self.detected_model.is_none() {
            self.detected_model = out.models.first().cloned();
        }
    }
}
