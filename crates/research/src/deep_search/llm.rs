//! The LLM backend: the research LLM plans queries, scholia searches and reads pages, the LLM
//! writes the round's JSON from that material, and every link is checked against it.

use std::collections::HashSet;
use std::time::Instant;

use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Backend, DeepSearchError, RoundJson, RoundOutput, Spend, render_round_prompt, round_schema, summary_of};
use crate::Context;
use crate::{citations, gate};
use scholia_base::Job;
use scholia_prompts::{self as prompts, untrusted};
use scholia_providers::llm::{ChatClient, LlmError, Message, Usage, window};
use scholia_providers::web::search as websearch;

const QUERIES_PER_ROUND: usize = 5;
const RESULTS_PER_QUERY: usize = 5;
const PAGES_PER_ROUND: usize = 5;
const PAGE_CHARS: usize = 12_000;
/// Tokens for the planned queries and for a round's report.
const QUERY_TOKENS: u32 = 400;
const REPORT_TOKENS: u32 = 3000;

pub(super) struct LlmBackend<'a> {
    pub ctx: &'a Context,
    pub llm: &'a ChatClient,
}

#[derive(Deserialize)]
struct Queries {
    queries: Vec<String>,
}

impl Backend for LlmBackend<'_> {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn configured_model(&self) -> Option<String> {
        Some(self.llm.model().to_string())
    }

    async fn ready(&self) -> Result<(), DeepSearchError> {
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
        tokio::select! {
            r = self.round_inner(query, n, current, spend) => r,
            _ = job.cancelled() => Err(DeepSearchError::cancelled()),
        }
    }
}

impl LlmBackend<'_> {
    async fn round_inner(
        &self,
        query: &str,
        n: u32,
        current: Option<&str>,
        spend: &mut Spend,
    ) -> Result<RoundOutput, DeepSearchError> {
        let (ctx, llm) = (self.ctx, self.llm);
        let failed = |what: &str, e: &dyn std::fmt::Display| DeepSearchError::failed(format!("{what}: {e}"));
        let llm_failed = |what: &str, e: LlmError| DeepSearchError::from_llm(what, e);
        let system = ctx.library.render(prompts::SYSTEM, json!({}))?;
        let plan = ctx.library.render(
            prompts::DEEP_SEARCH_QUERIES,
            json!({"query": untrusted(query), "current": current.map(untrusted), "max": QUERIES_PER_ROUND}),
        )?;
        let queries_schema = json!({"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}}, "required": ["queries"]});
        let (planned, usage): (Queries, Usage) = llm
            .json(
                vec![Message::system(system.clone()), Message::user(plan)],
                "search_queries",
                &queries_schema,
                QUERY_TOKENS,
                &ctx.library,
                llm.deadline(),
                None,
            )
            .await
            .map_err(|e| llm_failed("planning searches", e))?;
        spend.add_llm(&usage);
        let mut seen = HashSet::new();
        let queries: Vec<String> = planned
            .queries
            .into_iter()
            .map(|q| q.trim().to_string())
            .filter(|q| !q.is_empty() && seen.insert(q.to_lowercase()))
            .take(QUERIES_PER_ROUND)
            .collect();
        let queries = if queries.is_empty() {
            vec![query.to_string()]
        } else {
            queries
        };

        let searches = join_all(queries.iter().map(|q| async move {
            let _permit = ctx.search_permits.acquire().await.expect("semaphore never closes");
            websearch::search(&*ctx.search, q, RESULTS_PER_QUERY, Instant::now() + ctx.search_timeout).await
        }))
        .await;
        let mut results = Vec::new();
        let mut search_failures = Vec::new();
        for (q, r) in queries.iter().zip(searches) {
            match r {
                Ok(rs) => results.push((q.clone(), rs)),
                Err(e) => search_failures.push(format!("{q}: {e}")),
            }
        }
        if results.iter().all(|(_, rs)| rs.is_empty()) {
            return Err(DeepSearchError::failed(format!(
                "no search results for any query ({})",
                search_failures.join("; ")
            )));
        }
        // Pages: the best result of each query first, then the second of each, …
        let mut page_urls = Vec::new();
        let mut seen_pages = HashSet::new();
        for rank in 0..RESULTS_PER_QUERY {
            for (_, rs) in &results {
                if let Some(r) = rs.get(rank)
                    && page_urls.len() < PAGES_PER_ROUND
                    && seen_pages.insert(citations::url_key(&r.url))
                {
                    page_urls.push(r.url.clone());
                }
            }
        }
        let pages = join_all(
            page_urls
                .iter()
                .map(|u| ctx.fetcher.fetch_page(u, ctx.page_timeout, PAGE_CHARS)),
        )
        .await;
        let mut allowed = citations::Links::none();
        let searches: Vec<Value> = results
            .iter()
            .map(|(q, rs)| {
                let results: Vec<Value> = rs
                    .iter()
                    .map(|r| {
                        allowed.insert(&r.url);
                        json!({"title": untrusted(&r.title), "url": r.url, "snippet": untrusted(&r.snippet)})
                    })
                    .collect();
                json!({"query": untrusted(q), "results": results})
            })
            .collect();
        let fetched: Vec<(String, scholia_providers::web::fetch::Page)> = page_urls
            .iter()
            .zip(pages)
            .filter_map(|(url, page)| match page {
                Ok(p) => Some((url.clone(), p)),
                Err(e) => {
                    tracing::info!("page skipped: {url}: {e}");
                    None
                }
            })
            .collect();
        // Pages share what the context leaves beside the instructions, the searches, the
        // current report and the answer.
        let per_page = match llm.context_tokens().await {
            Some(window_tokens) => {
                let fixed = window::estimate_tokens(&system)
                    + window::estimate_tokens(&render_round_prompt(ctx, query, n, current, Some(String::new()))?)
                    + window::estimate_tokens(&serde_json::to_string(&searches).unwrap_or_default())
                    + 256;
                let room = (window_tokens as usize).saturating_sub(fixed + REPORT_TOKENS as usize);
                Some((room / fetched.len().max(1)).max(200))
            }
            None => None,
        };
        let mut read = Vec::new();
        let mut read_pages = Vec::new();
        let mut page_texts = Vec::new();
        for (url, p) in &fetched {
            allowed.insert(&p.url);
            allowed.insert(url);
            let content = match per_page {
                Some(t) => window::fit_text(&p.content.markdown, t).0,
                None => p.content.markdown.as_str(),
            };
            page_texts.push(content.to_string());
            read_pages.push(json!({"url": url, "content": untrusted(content)}));
            read.push(url.clone());
        }
        let material = ctx.library.render(
            prompts::DEEP_SEARCH_MATERIAL,
            json!({"searches": searches, "pages": read_pages}),
        )?;
        // A verification round may keep the sources the report already cites.
        if let Some(c) = current {
            // Checking against nothing lists every URL the text links to.
            for u in citations::linked_urls(c) {
                allowed.insert(&u);
            }
        }
        let prompt = render_round_prompt(ctx, query, n, current, Some(material))?;
        let instructions = prompts::without_data(&render_round_prompt(ctx, "", n, None, Some(String::new()))?);
        let (round, usage): (RoundJson, Usage) = llm
            .json(
                vec![Message::system(system.clone()), Message::user(prompt)],
                "deep_search_round",
                &round_schema(),
                REPORT_TOKENS,
                &ctx.library,
                llm.deadline(),
                None,
            )
            .await
            .map_err(|e| llm_failed("writing the report", e))?;
        spend.add_llm(&usage);
        if round.report.trim().is_empty() {
            return Err(failed("writing the report", &"the report is empty"));
        }
        let sources: Vec<&str> = page_texts.iter().map(String::as_str).collect();
        gate::check(
            &round.report,
            &gate::Gate {
                instructions: &[&system, &instructions],
                // A verification round rewrites the current report: copying it is its job.
                note: "",
                sources: &sources,
                expect: gate::Expect::Prose,
                examples: super::EXAMPLES,
            },
        )
        .map_err(|why| failed("writing the report", &why))?;
        let (report, removed) = citations::enforce(&round.report, 1, &allowed, &|_| false);
        spend.citations_removed += removed.count();
        Ok(RoundOutput {
            links: allowed,
            verified: round.verified,
            summary: summary_of(round.metadata.summary, &report),
            report,
            sources: read,
            queries,
        })
    }
}
