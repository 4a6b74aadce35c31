//! Stage 2: for each topic, web and vault search, and in deep mode its top pages read by the
//! LLM. A failed source is recorded, never fatal.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::future::join_all;
use serde::Serialize;
use serde_json::json;

use super::types::{Depth, PAGE_CHARS, PAGES_PER_TOPIC, Topic, VAULT_RESULTS, WEB_RESULTS};
use crate::Context;
use crate::citations::url_key;
use crate::gate;
use scholia_index::{IndexError, VaultIndex};
use scholia_prompts::{self as prompts, untrusted};
use scholia_providers::llm::{ChatClient, ChatRequest, Message, Usage, window};
use scholia_providers::web::fetch::{FetchError, Page};
use scholia_providers::web::search::{self as websearch, WebResult};

#[derive(Debug, Clone, Serialize)]
pub(super) struct WebSource {
    pub title: String,
    pub url: String,
    pub snippet: String,
    pub extract: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct VaultSource {
    pub title: String,
    pub path: String,
    pub target: String,
    pub snippet: String,
}

/// What was gathered for one topic (the synthesis prompt's material).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Material {
    pub topic: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub context: String,
    pub web: Vec<WebSource>,
    pub vault: Vec<VaultSource>,
    #[serde(skip)]
    pub failures: Vec<String>,
    #[serde(skip)]
    pub pages_read: usize,
    #[serde(skip)]
    pub usage: Usage,
}

/// What every topic's gathering shares.
pub(super) struct Gathering<'a> {
    pub ctx: &'a Context,
    pub index: &'a Arc<VaultIndex>,
    pub llm: &'a ChatClient,
    /// The note itself, excluded from vault results.
    pub rel: &'a str,
    pub depth: Depth,
    pub pages: &'a PageCache,
}

impl Gathering<'_> {
    /// Web and vault search for one topic; in deep mode also reads its top pages.
    pub async fn gather(&self, topic: &Topic) -> Material {
        let ctx = self.ctx;
        let mut m = Material {
            topic: topic.topic.clone(),
            kind: topic.kind.clone(),
            context: topic.context.clone(),
            web: Vec::new(),
            vault: Vec::new(),
            failures: Vec::new(),
            pages_read: 0,
            usage: Usage::default(),
        };
        let web = async {
            let _permit = ctx.search_permits.acquire().await.expect("semaphore never closes");
            websearch::search(
                &*ctx.search,
                &topic.topic,
                WEB_RESULTS,
                Instant::now() + ctx.search_timeout,
            )
            .await
        };
        let index = self.index.clone();
        let (query, exclude) = (topic.topic.clone(), self.rel.to_string());
        let vault = scholia_base::spawn_blocking(move || -> Result<Vec<VaultSource>, IndexError> {
            let hits = index.search_owned(&query, VAULT_RESULTS, Some(&exclude))?;
            hits.into_iter()
                .map(|h| {
                    Ok(VaultSource {
                        target: index.link_target(&h.path)?,
                        title: h.title,
                        path: h.path,
                        snippet: untrusted(&h.snippet),
                    })
                })
                .collect()
        });
        let (web, vault) = tokio::join!(web, vault);
        match web {
            Ok(results) => {
                m.web = results
                    .into_iter()
                    .map(|r: WebResult| WebSource {
                        title: untrusted(&r.title),
                        url: r.url,
                        snippet: untrusted(&r.snippet),
                        extract: None,
                    })
                    .collect()
            }
            Err(e) => m.failures.push(format!("web search failed: {e}")),
        }
        match vault {
            Ok(v) => m.vault = v,
            Err(e) => m.failures.push(format!("vault search failed: {e}")),
        }
        if self.depth == Depth::Deep {
            let reads = m
                .web
                .iter()
                .take(PAGES_PER_TOPIC)
                .map(|w| self.read_page(topic, &w.url));
            let results = join_all(reads).await;
            for (i, r) in results.into_iter().enumerate() {
                match r {
                    Ok((extract, usage)) => {
                        m.pages_read += 1;
                        m.usage.add(&usage);
                        m.web[i].extract = extract;
                    }
                    Err(e) => m.failures.push(e.to_string()),
                }
            }
        }
        m
    }

    /// Fetches a page and asks the LLM what in it is relevant; `None` when nothing is (or when
    /// the answer fails the gate).
    async fn read_page(&self, topic: &Topic, url: &str) -> Result<(Option<String>, Usage), PageSkipped> {
        let ctx = self.ctx;
        let page = self.pages.get(ctx, url).await?;
        let render_for = |topic: &str, context: &str, text: &str| {
            ctx.library.render(
                prompts::PAGE_EXTRACT,
                json!({"topic": topic, "context": context, "url": page.url, "page": untrusted(text)}),
            )
        };
        let render = |text: &str| render_for(&topic.topic, &topic.context, text);
        let system = ctx.library.render(prompts::SYSTEM, json!({}))?;
        let mut chosen = None;
        let mut text: &str = &page.content.markdown;
        if let Some(window_tokens) = self.llm.context_tokens().await {
            let fixed = window::estimate_tokens(&system) + window::estimate_tokens(&render("")?) + 64;
            let room = (window_tokens as usize).saturating_sub(fixed + EXTRACT_TOKENS as usize);
            let (cut, longer) = window::fit_text(text, room.max(200));
            // Too long: the paragraphs closest to the topic by meaning, when there are embeddings.
            if longer {
                let (source, topic, page_text, chars) = (
                    ctx.embedder.clone(),
                    format!("{}\n{}", topic.topic, topic.context),
                    text.to_string(),
                    cut.len(),
                );
                chosen = scholia_base::spawn_blocking(move || {
                    source().and_then(|e| crate::pages::closest(&e, &topic, &page_text, chars))
                })
                .await;
            }
            text = cut;
        }
        if let Some(c) = &chosen {
            text = c;
        }
        let prompt = render(text)?;
        let answer = self
            .llm
            .chat(
                &ChatRequest {
                    messages: vec![Message::system(system.clone()), Message::user(prompt.clone())],
                    temperature: Some(0.1),
                    max_tokens: Some(EXTRACT_TOKENS),
                    stream: true,
                    ..Default::default()
                },
                self.llm.deadline(),
            )
            .await
            .map_err(|e| PageSkipped::Extraction {
                url: url.to_string(),
                e,
            })?;
        let reply = answer.content.trim();
        if reply.is_empty() || reply.eq_ignore_ascii_case("NOTHING RELEVANT") {
            return Ok((None, answer.usage));
        }
        let instructions = prompts::without_data(&render_for("", "", "")?);
        gate::check(
            reply,
            &gate::Gate {
                instructions: &[&system, &instructions],
                note: "",
                sources: &[text],
                expect: gate::Expect::Prose,
                examples: &[],
            },
        )
        .map_err(|why| PageSkipped::Refused {
            url: url.to_string(),
            why,
        })?;
        Ok((Some(untrusted(reply)), answer.usage))
    }
}

/// Tokens for what a page says about a topic (eight short bullet points).
const EXTRACT_TOKENS: u32 = 600;

/// Why a page added nothing (recorded as a warning; the topic keeps its snippets).
#[derive(Debug, thiserror::Error)]
pub(super) enum PageSkipped {
    #[error("page skipped: {0}")]
    Fetch(#[from] FetchError),
    #[error("page extraction failed for {url}: {e}")]
    Extraction {
        url: String,
        e: scholia_providers::llm::LlmError,
    },
    #[error("page extraction for {url} was refused: {why}")]
    Refused { url: String, why: crate::gate::Refused },
    #[error("page skipped: template: {0}")]
    Template(#[from] scholia_prompts::TemplateError),
}

/// Pages fetched during one run, shared by the topics that found the same URL: each page is
/// fetched and extracted once.
#[derive(Default)]
pub(super) struct PageCache {
    pages: Mutex<HashMap<String, Arc<PageCell>>>,
}

type PageCell = tokio::sync::OnceCell<Result<Page, FetchError>>;

impl PageCache {
    async fn get(&self, ctx: &Context, url: &str) -> Result<Page, FetchError> {
        let cell = scholia_base::lock(&self.pages).entry(url_key(url)).or_default().clone();
        cell.get_or_init(|| async { ctx.fetcher.fetch_page(url, ctx.page_timeout, PAGE_CHARS).await })
            .await
            .clone()
    }
}

/// The URLs a section may link to: the web pages the run gathered.
pub(super) fn gathered_links(materials: &[Material]) -> crate::citations::Links {
    crate::citations::Links::from_urls(materials.iter().flat_map(|m| m.web.iter().map(|w| w.url.as_str())))
}
