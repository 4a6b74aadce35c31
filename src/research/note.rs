//! research_note: topics → gathering (web + vault, pages in deep mode) → synthesis → citation
//! integrity → the `## Research` section. Nothing is written here; surfaces write the result.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::citations::{self, normalize_url};
use super::{Engine, Event, Progress};
use crate::index::IndexError;
use crate::llm::{ChatClient, ChatRequest, LlmError, Message, Usage};
use crate::prompts::untrusted;
use crate::vault::paths::PathError;
use crate::vault::read::ReadError;
use crate::vault::section::{self, SectionError};
use crate::web::fetch::Page;
use crate::web::search::{self as websearch, WebResult};

pub const MAX_TOPICS: usize = 10;
pub const WEB_RESULTS: usize = 5;
pub const VAULT_RESULTS: usize = 5;
pub const PAGES_PER_TOPIC: usize = 2;
pub const PAGE_TIMEOUT: Duration = Duration::from_secs(10);
pub const PAGE_CHARS: usize = 50_000;
pub const NOTE_CHARS: usize = 200_000;
pub const MAX_FOCUS_CHARS: usize = 500;
const SEARCH_TIMEOUT: Duration = Duration::from_secs(30);
pub const SECTION: &str = "Research";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    Shallow,
    Deep,
}

impl Depth {
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Shallow => "shallow",
            Depth::Deep => "deep",
        }
    }
}

impl FromStr for Depth {
    type Err = ResearchError;
    fn from_str(s: &str) -> Result<Depth, ResearchError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "shallow" => Ok(Depth::Shallow),
            "deep" => Ok(Depth::Deep),
            _ => Err(ResearchError::BadDepth(s.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResearchError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("depth: `{0}` is not valid; valid values: shallow, deep")]
    BadDepth(String),
    #[error("note `{0}` is empty; write something to research first")]
    EmptyNote(String),
    #[error("focus: {focus_chars} characters is longer than {limit}; give a short phrase")]
    FocusTooLong { focus_chars: usize, limit: usize },
    #[error("focus: {focus_chars} characters is longer than the note itself ({note_chars}); give a short phrase")]
    FocusLongerThanNote { focus_chars: usize, note_chars: usize },
    #[error("{0}")]
    Section(#[from] SectionError),
    #[error("no topics to research were found in `{0}`{1}")]
    NoTopics(String, String),
    #[error("topic extraction failed: {0}")]
    Topics(LlmError),
    #[error("nothing was found for any topic ({0}); the note is unchanged")]
    NothingFound(String),
    #[error("synthesis failed: {0}; the note is unchanged")]
    Synthesis(LlmError),
    #[error(
        "the synthesis would break the note's structure (an unclosed code fence or a heading); the note is unchanged"
    )]
    Uncontained,
    #[error("index: {0}")]
    Index(#[from] IndexError),
    #[error("template: {0}")]
    Template(#[from] crate::prompts::TemplateError),
    #[error("cancelled; the note is unchanged")]
    Cancelled,
    #[error("{0}")]
    Write(String),
}

/// What to research.
#[derive(Debug, Clone)]
pub struct NoteRequest {
    /// As the user gave it: vault-relative, absolute, or relative to `cwd`.
    pub path: String,
    pub depth: Depth,
    pub focus: Option<String>,
    /// The text to research instead of the file's (an editor's unsaved buffer).
    pub text: Option<String>,
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Topic {
    pub topic: String,
    #[serde(default)]
    pub context: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    Web {
        title: String,
        url: String,
    },
    Vault {
        title: String,
        path: String,
        target: String,
    },
}

/// The outcome of a run: the section body to write and what it is made of.
#[derive(Debug, Clone, Serialize)]
pub struct NoteResearch {
    /// Vault-relative path of the note.
    pub path: String,
    /// `llm` or `offline`.
    pub mode: &'static str,
    pub depth: Depth,
    pub model: Option<String>,
    pub topics: Vec<String>,
    pub topics_researched: usize,
    pub sources: Vec<Source>,
    pub citations_removed: usize,
    /// The body of `## Research`, as rendered from `templates/research-section.md`.
    pub section: String,
    /// The first 500 characters of the section.
    pub preview: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub warnings: Vec<String>,
}

/// The note as the pipeline sees it.
pub(crate) struct Input {
    pub rel: String,
    pub title: String,
    /// The note without its `## Research` section, embeds expanded one level, capped.
    pub for_llm: String,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
struct WebSource {
    title: String,
    url: String,
    snippet: String,
    extract: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct VaultSource {
    title: String,
    path: String,
    target: String,
    snippet: String,
}

#[derive(Debug, Clone, Serialize)]
struct Material {
    topic: String,
    #[serde(rename = "type")]
    kind: String,
    context: String,
    web: Vec<WebSource>,
    vault: Vec<VaultSource>,
    #[serde(skip)]
    failures: Vec<String>,
    #[serde(skip)]
    pages_read: usize,
    #[serde(skip)]
    usage: Usage,
}

/// Checks the request and reads the note, before anything costs money.
pub(crate) fn prepare(engine: &Engine, req: &NoteRequest) -> Result<Input, ResearchError> {
    let vault = engine.vault();
    let abs = vault.resolve(&req.path, req.cwd.as_deref())?;
    let rel = vault
        .rel(&abs)
        .ok_or_else(|| PathError::OutsideVault(req.path.clone(), vault.root().display().to_string()))?;
    let text = match &req.text {
        Some(t) => t.clone(),
        None => crate::vault::read::read_note(&abs)?,
    };
    // Two `## Research` headings: refuse now rather than after the work.
    let existing = section::find(&text, SECTION, 2)?;
    let without = match existing {
        Some(r) => format!("{}{}", &text[..r.start], &text[r.end..]),
        None => text.clone(),
    };
    let parsed = crate::vault::parse::parse(&without, crate::vault::stem(&rel));
    let note_chars = parsed.plain_text.trim().chars().count();
    if note_chars == 0 {
        return Err(ResearchError::EmptyNote(rel));
    }
    if let Some(focus) = req.focus.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
        let focus_chars = focus.chars().count();
        if focus_chars > MAX_FOCUS_CHARS {
            return Err(ResearchError::FocusTooLong {
                focus_chars,
                limit: MAX_FOCUS_CHARS,
            });
        }
        if focus_chars > note_chars {
            return Err(ResearchError::FocusLongerThanNote {
                focus_chars,
                note_chars,
            });
        }
    }
    let mut warnings = Vec::new();
    let mut for_llm = expand_embeds(engine, &rel, &without, &parsed.links);
    if for_llm.chars().count() > NOTE_CHARS {
        let cut = for_llm
            .char_indices()
            .nth(NOTE_CHARS)
            .map(|(i, _)| i)
            .unwrap_or(for_llm.len());
        for_llm.truncate(cut);
        warnings.push(format!(
            "the note was cut to {NOTE_CHARS} characters for the language model"
        ));
    }
    Ok(Input {
        rel,
        title: parsed.title,
        for_llm,
        warnings,
    })
}

/// Replaces `![[Note]]` / `![[Note#Heading]]` embeds of notes by their text (one level).
fn expand_embeds(engine: &Engine, rel: &str, text: &str, links: &[crate::vault::parse::Link]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for link in links.iter().filter(|l| l.embed && !l.target.is_empty()) {
        let Ok(Some(target)) = engine.index().resolve_link(&link.target, Some(rel)) else {
            continue;
        };
        let Ok(content) = crate::vault::read::read_note(&engine.vault().abs(&target.path)) else {
            continue;
        };
        let content = match &link.heading {
            Some(h) => match section::find(&content, h, level_of(&content, h)) {
                Ok(Some(r)) => content[r].to_string(),
                _ => continue,
            },
            None => content,
        };
        out.push_str(&text[at..link.range.start]);
        out.push_str(&format!(
            "\n<!-- embedded from {} -->\n{}\n",
            target.path,
            content.trim()
        ));
        at = link.range.end;
    }
    out.push_str(&text[at..]);
    out
}

fn level_of(text: &str, heading: &str) -> u8 {
    crate::vault::parse::headings(text)
        .iter()
        .find(|h| h.text.eq_ignore_ascii_case(heading.trim()))
        .map(|h| h.level)
        .unwrap_or(2)
}

/// Runs research_note (offline when no LLM is configured). Honours `cancel`.
pub async fn research_note(
    engine: &Engine,
    req: &NoteRequest,
    progress: Progress<'_>,
    cancel: &CancellationToken,
) -> Result<NoteResearch, ResearchError> {
    if !engine.has_vault() {
        return Err(ResearchError::Write("research_note needs a vault".into()));
    }
    let input = prepare(engine, req)?;
    let run = async {
        match &engine.llm {
            Some(llm) => with_llm(engine, llm, req, input, progress).await,
            None => super::offline::research(engine, input, progress).await,
        }
    };
    tokio::select! {
        r = run => r,
        _ = cancel.cancelled() => Err(ResearchError::Cancelled),
    }
}

async fn with_llm(
    engine: &Engine,
    llm: &Arc<ChatClient>,
    req: &NoteRequest,
    input: Input,
    progress: Progress<'_>,
) -> Result<NoteResearch, ResearchError> {
    progress(Event::Started {
        mode: "llm",
        depth: req.depth,
    });
    let mut usage = Usage::default();
    let mut warnings = input.warnings.clone();
    let focus = req.focus.as_deref().map(str::trim).filter(|f| !f.is_empty());

    // 1. Topics.
    let (topics, u) = extract_topics(engine, llm, &input, focus).await?;
    usage.add(&u);
    progress(Event::TopicsFound {
        topics: topics.iter().map(|t| t.topic.clone()).collect(),
    });

    // 2. Gather, every topic at once (searches, pages and LLM calls are bounded by their own
    //    semaphores).
    let total = topics.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let rel = input.rel.as_str();
    let pages = PageCache::default();
    let materials: Vec<Material> = join_all(topics.iter().map(|t| {
        let (done, pages) = (&done, &pages);
        async move {
            let m = gather(engine, llm, t, rel, req.depth, pages).await;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(Event::TopicGathered {
                done: n,
                total,
                topic: t.topic.clone(),
            });
            m
        }
    }))
    .await;
    let (mut web, mut vault, mut pages, mut failed) = (0, 0, 0, 0);
    for m in &materials {
        web += m.web.len();
        vault += m.vault.len();
        pages += m.pages_read;
        failed += m.failures.len();
        usage.add(&m.usage);
        warnings.extend(m.failures.iter().map(|f| format!("{}: {f}", m.topic)));
    }
    progress(Event::SourcesGathered {
        web,
        vault,
        pages,
        failed,
    });
    if web + vault == 0 {
        let cause = materials
            .iter()
            .flat_map(|m| m.failures.first())
            .next()
            .cloned()
            .unwrap_or_else(|| "no results".into());
        return Err(ResearchError::NothingFound(cause));
    }

    // 3. Synthesis.
    progress(Event::Synthesizing);
    let prompt = engine.library.render(
        "prompts/synthesis.md",
        json!({
            "title": input.title,
            "path": input.rel,
            "note": untrusted(&input.for_llm),
            "focus": focus,
            "topics": materials.iter().filter(|m| !m.web.is_empty() || !m.vault.is_empty()).collect::<Vec<_>>(),
        }),
    )?;
    let answer = llm
        .chat(
            &ChatRequest {
                messages: vec![
                    Message::system(engine.library.render("prompts/system.md", json!({}))?),
                    Message::user(prompt),
                ],
                temperature: Some(0.3),
                max_tokens: Some(4000),
                ..Default::default()
            },
            llm.deadline(),
        )
        .await
        .map_err(ResearchError::Synthesis)?;
    usage.add(&answer.usage);

    // 4. Citation integrity.
    let allowed: HashSet<String> = materials
        .iter()
        .flat_map(|m| m.web.iter().map(|w| normalize_url(&w.url)))
        .collect();
    let vault_targets: HashSet<String> = materials
        .iter()
        .flat_map(|m| m.vault.iter().map(|v| v.target.to_lowercase()))
        .collect();
    let index = engine.index().clone();
    let rel = input.rel.clone();
    let findings = contain(&answer.content);
    let (findings, removed) = tokio::task::spawn_blocking(move || {
        let resolves = |t: &str| {
            vault_targets.contains(&t.to_lowercase()) || index.resolve_link(t, Some(&rel)).ok().flatten().is_some()
        };
        citations::enforce(&findings, &allowed, &resolves)
    })
    .await
    .expect("citation check does not panic");
    if removed.count() > 0 {
        warnings.push(format!(
            "{} citation(s) not among the gathered sources were removed: {}",
            removed.count(),
            removed
                .urls
                .iter()
                .chain(&removed.wikilinks)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    progress(Event::Checked {
        citations_removed: removed.count(),
    });

    // 5. Render.
    let sources = cited_sources(&findings, &materials);
    let provenance = provenance(
        req.depth,
        Some(&answer.model),
        usage.cost_usd,
        topics.len(),
        removed.count(),
    );
    let section = engine.library.render(
        "templates/research-section.md",
        json!({
            "findings": findings,
            "sources": sources.iter().map(|s| match s {
                Source::Web { title, url } => json!({"title": title, "url": url, "target": null}),
                Source::Vault { title, target, .. } => json!({"title": title, "url": null, "target": target}),
            }).collect::<Vec<_>>(),
            "provenance": provenance,
        }),
    )?;
    finish(
        input.rel,
        "llm",
        req.depth,
        Some(answer.model),
        topics,
        sources,
        removed.count(),
        section,
        usage,
        warnings,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn finish(
    path: String,
    mode: &'static str,
    depth: Depth,
    model: Option<String>,
    topics: Vec<Topic>,
    sources: Vec<Source>,
    citations_removed: usize,
    section: String,
    usage: Usage,
    warnings: Vec<String>,
) -> Result<NoteResearch, ResearchError> {
    let section = section.trim().to_string();
    if !section::body_is_contained(SECTION, 2, &section) {
        return Err(ResearchError::Uncontained);
    }
    let preview: String = section.chars().take(500).collect();
    Ok(NoteResearch {
        path,
        mode,
        depth,
        model,
        topics_researched: topics.len(),
        topics: topics.into_iter().map(|t| t.topic).collect(),
        sources,
        citations_removed,
        section,
        preview,
        cost_usd: usage.cost_usd,
        usage,
        warnings,
    })
}

pub(crate) fn provenance(
    depth: Depth,
    model: Option<&str>,
    cost: Option<f64>,
    topics: usize,
    removed: usize,
) -> String {
    let date = time::OffsetDateTime::now_utc().date();
    let mut parts = vec![format!("Researched {date}"), depth.as_str().to_string()];
    parts.push(
        model
            .map(str::to_string)
            .unwrap_or_else(|| "offline, no language model".into()),
    );
    if let Some(c) = cost {
        parts.push(format!("${c:.4}"));
    }
    parts.push(format!("{topics} topics"));
    if removed > 0 {
        parts.push(format!("{removed} unverifiable citations removed"));
    }
    format!("{} · scholia", parts.join(" · "))
}

/// Web sources whose URL the findings cite, then vault notes they link, in order.
fn cited_sources(findings: &str, materials: &[Material]) -> Vec<Source> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for m in materials {
        for w in &m.web {
            if findings.contains(&w.url) && seen.insert(normalize_url(&w.url)) {
                out.push(Source::Web {
                    title: w.title.clone(),
                    url: w.url.clone(),
                });
            }
        }
    }
    let lower = findings.to_lowercase();
    for m in materials {
        for v in &m.vault {
            if lower.contains(&format!("[[{}", v.target.to_lowercase())) && seen.insert(v.path.clone()) {
                out.push(Source::Vault {
                    title: v.title.clone(),
                    path: v.path.clone(),
                    target: v.target.clone(),
                });
            }
        }
    }
    out
}

/// Keeps a model's Markdown inside the section: `#`/`##` headings become `###`, a lone `---` or
/// `===` line gets a blank line above (no setext heading), an open code fence is closed.
pub(crate) fn contain(markdown: &str) -> String {
    contain_below(markdown, 3)
}

/// Makes model Markdown safe inside a section whose headings are above `min_level`: shallower
/// headings become `min_level`, setext underlines cannot turn a line into a heading, and an
/// unclosed code fence is closed.
pub(crate) fn contain_below(markdown: &str, min_level: usize) -> String {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str()) {
                fence = None;
            }
            out.push(line.to_string());
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(trimmed.chars().take_while(|c| *c == '`' || *c == '~').collect());
            out.push(line.to_string());
            continue;
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..min_level).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            out.push(format!("{}{}", "#".repeat(min_level), &trimmed[hashes..]));
            continue;
        }
        let underline = !trimmed.is_empty() && (trimmed.chars().all(|c| c == '-') || trimmed.chars().all(|c| c == '='));
        if underline && out.last().is_some_and(|l: &String| !l.trim().is_empty()) {
            out.push(String::new());
        }
        out.push(line.to_string());
    }
    if let Some(open) = fence {
        out.push(open);
    }
    out.join("\n")
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TopicsAnswer {
    Wrapped { topics: Vec<Topic> },
    Bare(Vec<Topic>),
}

async fn extract_topics(
    engine: &Engine,
    llm: &ChatClient,
    input: &Input,
    focus: Option<&str>,
) -> Result<(Vec<Topic>, Usage), ResearchError> {
    let prompt = engine.library.render(
        "prompts/topic-extraction.md",
        json!({"focus": focus, "max_topics": MAX_TOPICS, "path": input.rel, "note": untrusted(&input.for_llm)}),
    )?;
    let schema = json!({
        "type": "object",
        "properties": {"topics": {"type": "array", "maxItems": MAX_TOPICS, "items": {
            "type": "object",
            "properties": {
                "topic": {"type": "string"},
                "context": {"type": "string"},
                "type": {"type": "string", "enum": ["claim", "concept", "question"]}
            },
            "required": ["topic", "context", "type"]
        }}},
        "required": ["topics"]
    });
    let messages = vec![
        Message::system(engine.library.render("prompts/system.md", json!({}))?),
        Message::user(prompt),
    ];
    let (answer, usage): (TopicsAnswer, Usage) = llm
        .json(messages, "topics", &schema, llm.deadline())
        .await
        .map_err(ResearchError::Topics)?;
    let raw = match answer {
        TopicsAnswer::Wrapped { topics } | TopicsAnswer::Bare(topics) => topics,
    };
    let mut seen = HashSet::new();
    let topics: Vec<Topic> = raw
        .into_iter()
        .filter(|t| !t.topic.trim().is_empty() && seen.insert(t.topic.trim().to_lowercase()))
        .map(|t| Topic {
            topic: t.topic.trim().chars().take(200).collect(),
            context: t.context.trim().chars().take(500).collect(),
            kind: match t.kind.trim().to_lowercase().as_str() {
                k @ ("claim" | "concept" | "question") => k.to_string(),
                _ => "concept".into(),
            },
        })
        .take(MAX_TOPICS)
        .collect();
    if topics.is_empty() {
        let why = focus.map(|f| format!(" about the focus `{f}`")).unwrap_or_default();
        return Err(ResearchError::NoTopics(input.rel.clone(), why));
    }
    Ok((topics, usage))
}

/// Web and vault search for one topic; in deep mode also reads its top pages. Failures are
/// recorded, never fatal.
async fn gather(
    engine: &Engine,
    llm: &ChatClient,
    topic: &Topic,
    rel: &str,
    depth: Depth,
    pages: &PageCache,
) -> Material {
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
        let _permit = engine.search_permits.acquire().await.expect("semaphore never closes");
        websearch::search(
            &*engine.search,
            &topic.topic,
            WEB_RESULTS,
            Instant::now() + SEARCH_TIMEOUT,
        )
        .await
    };
    let index = engine.index().clone();
    let (query, exclude) = (topic.topic.clone(), rel.to_string());
    let vault = tokio::task::spawn_blocking(move || -> Result<Vec<VaultSource>, IndexError> {
        let hits = index.search(&query, VAULT_RESULTS, Some(&exclude))?;
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
        Ok(Ok(v)) => m.vault = v,
        Ok(Err(e)) => m.failures.push(format!("vault search failed: {e}")),
        Err(e) => m.failures.push(format!("vault search failed: {e}")),
    }
    if depth == Depth::Deep {
        let reads = m
            .web
            .iter()
            .take(PAGES_PER_TOPIC)
            .map(|w| read_page(engine, llm, topic, &w.url, pages));
        let results = join_all(reads).await;
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok((extract, usage)) => {
                    m.pages_read += 1;
                    m.usage.add(&usage);
                    m.web[i].extract = extract;
                }
                Err(e) => m.failures.push(e),
            }
        }
    }
    m
}

/// Pages fetched during one run, shared by the topics that found the same URL: each page is
/// fetched and extracted once.
#[derive(Default)]
struct PageCache {
    pages: std::sync::Mutex<std::collections::HashMap<String, Arc<PageCell>>>,
}

type PageCell = tokio::sync::OnceCell<Result<Page, String>>;

impl PageCache {
    async fn get(&self, engine: &Engine, url: &str) -> Result<Page, String> {
        let cell = self
            .pages
            .lock()
            .unwrap()
            .entry(normalize_url(url))
            .or_default()
            .clone();
        cell.get_or_init(|| async {
            engine
                .fetcher
                .fetch_page(url, engine.page_timeout, PAGE_CHARS)
                .await
                .map_err(|e| format!("page skipped: {e}"))
        })
        .await
        .clone()
    }
}

/// Fetches a page and asks the LLM what in it is relevant; `None` when nothing is.
async fn read_page(
    engine: &Engine,
    llm: &ChatClient,
    topic: &Topic,
    url: &str,
    pages: &PageCache,
) -> Result<(Option<String>, Usage), String> {
    let page = pages.get(engine, url).await?;
    let prompt = engine
        .library
        .render(
            "prompts/page-extract.md",
            json!({"topic": topic.topic, "context": topic.context, "url": page.url, "page": untrusted(&page.content.markdown)}),
        )
        .map_err(|e| e.to_string())?;
    let system = engine
        .library
        .render("prompts/system.md", json!({}))
        .map_err(|e| e.to_string())?;
    let answer = llm
        .chat(
            &ChatRequest {
                messages: vec![Message::system(system), Message::user(prompt)],
                temperature: Some(0.1),
                max_tokens: Some(800),
                ..Default::default()
            },
            llm.deadline(),
        )
        .await
        .map_err(|e| format!("page extraction failed for {url}: {e}"))?;
    let text = answer.content.trim();
    let extract = (!text.eq_ignore_ascii_case("NOTHING RELEVANT") && !text.is_empty()).then(|| untrusted(text));
    Ok((extract, answer.usage))
}

/// Writes the section into the note on disk, atomically, keeping concurrent edits.
pub fn write_section(
    vault_root: &Path,
    rel: &str,
    body: &str,
) -> Result<crate::vault::write::WriteOutcome, ResearchError> {
    let path = vault_root.join(rel);
    crate::vault::write::update_note(&path, |current| section::upsert(current, SECTION, 2, body)).map_err(|e| match e {
        crate::vault::write::WriteError::Read(r) => ResearchError::Read(r),
        crate::vault::write::WriteError::Edit(s) => ResearchError::Section(s),
        other => ResearchError::Write(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_parsing() {
        assert_eq!("Deep".parse::<Depth>().unwrap(), Depth::Deep);
        assert_eq!(
            "medium".parse::<Depth>().unwrap_err().to_string(),
            "depth: `medium` is not valid; valid values: shallow, deep"
        );
    }

    #[test]
    fn containment_of_model_markdown() {
        let check = |input: &str, expected: &str| {
            let got = contain(input);
            assert_eq!(got, expected, "{input:?}");
            assert!(section::body_is_contained(SECTION, 2, &got), "{got:?}");
        };
        check("## Topic\ntext", "### Topic\ntext");
        check("# Big\n### Fine", "### Big\n### Fine");
        check("Line\n---\nafter", "Line\n\n---\nafter");
        check("```rust\nfn x() {}\n", "```rust\nfn x() {}\n```");
        check("```\n## not a heading\n```", "```\n## not a heading\n```");
        check("#hashtag stays", "#hashtag stays");
    }
}
