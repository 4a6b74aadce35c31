//! The `scholia` binary: parses arguments, builds the engine, prints results.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use scholia::config::{DeepSearchBackend, Dirs, ProcessEnv, Settings};
use scholia::index::{self, Progress, SyncSummary};
use scholia::research::note::{Depth, NoteRequest};
use scholia::research::{Engine, Event};
use scholia::vault::Vault;
use scholia::vault::write::WriteOutcome;

#[derive(Parser)]
#[command(name = "scholia", version, about = "Research assistant for Markdown note vaults")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Index the vault (incrementally: only changed notes are read)
    Index {
        /// Vault directory (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// List every skipped, failed or truncated note with the reason
        #[arg(long)]
        reasons: bool,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
    /// Full-text search of the vault (BM25; "quoted phrases", title:word)
    Search {
        query: String,
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Maximum number of results
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Research a note and write the findings into its `## Research` section
    Research {
        /// The note: relative to the vault (or the current directory), or absolute
        note: String,
        /// Also read the top web pages of each topic
        #[arg(long, conflicts_with = "depth")]
        deep: bool,
        /// shallow (search snippets) or deep (read pages)
        #[arg(long, value_parser = parse_depth)]
        depth: Option<Depth>,
        /// Narrow the research to this aspect of the note
        #[arg(long, value_name = "TEXT")]
        focus: Option<String>,
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Multi-round web research with verification (Gemini CLI or the research LLM)
    DeepSearch {
        /// The question to research
        query: String,
        /// gemini-cli or llm (default: the Gemini CLI when installed, else the LLM)
        #[arg(long, value_parser = parse_backend)]
        backend: Option<DeepSearchBackend>,
        /// Rounds at most (default DEEP_SEARCH_MAX_ITERATIONS or 5; below 2 becomes 2)
        #[arg(long, value_name = "N")]
        max_iterations: Option<u32>,
        /// Where `.scholia.toml` is read from (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the whole result (report and metadata) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Ask a Perplexity Sonar tier (via OpenRouter) and print the answer with its sources
    #[command(after_help = scholia::research::sonar::tool_description())]
    Ask {
        /// The question
        query: String,
        /// sonar (default), sonar-pro, sonar-reasoning-pro or sonar-deep-research
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Overall deadline in milliseconds, retries included (5000..=600000; default per model)
        #[arg(long, value_name = "MS")]
        timeout: Option<String>,
        /// Where `.scholia.toml` is read from (default: the current directory)
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Print the answer, sources and metadata as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the Markdown research would read from a web page
    Fetch {
        url: String,
        /// Maximum characters of content
        #[arg(long, default_value_t = 50_000)]
        max_chars: usize,
        #[arg(long)]
        json: bool,
    },
    /// Language server on stdin/stdout
    Lsp,
}

fn parse_backend(s: &str) -> Result<DeepSearchBackend, String> {
    DeepSearchBackend::parse("--backend", s).map_err(|e| e.to_string())
}

fn parse_depth(s: &str) -> Result<Depth, String> {
    s.parse::<Depth>().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    limit_allocator_retention();
    let cli = Cli::parse();
    let default_level = if matches!(cli.command, Command::Lsp) {
        "info"
    } else {
        "warn"
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SCHOLIA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("scholia={default_level},warn"))),
        )
        .init();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scholia: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// glibc raises its mmap threshold each time a large block is freed, after which the index
/// writer's per-segment arenas come from the heap and are kept after use: ~20 MB of resident
/// memory for nothing on a 6,000-note vault. A fixed threshold returns them to the system.
fn limit_allocator_retention() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only tunes the allocator; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Index { vault, reasons, json } => {
            let (_index, summary) = open_index(vault, true)?;
            let summary =
                summary.context("another scholia process holds the index writer; it keeps the index current")?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                print_summary(&summary, reasons);
            }
        }
        Command::Search {
            query,
            vault,
            limit,
            json,
        } => {
            let (index, _) = open_index(vault, false)?;
            let hits = index.search(&query, limit as usize, None)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else if hits.is_empty() {
                eprintln!("no notes match `{query}`");
            } else {
                let bold = std::io::stdout().is_terminal();
                let mut out = std::io::stdout().lock();
                for h in hits {
                    writeln!(out, "{}  {:.2}  {}", h.path, h.score, h.title)?;
                    writeln!(out, "    {}", highlight(&h.snippet, &h.highlights, bold))?;
                }
            }
        }
        Command::Research {
            note,
            deep,
            depth,
            focus,
            vault,
            json,
        } => {
            let depth = depth.unwrap_or(if deep { Depth::Deep } else { Depth::Shallow });
            return research(note, depth, focus, vault, json);
        }
        Command::DeepSearch {
            query,
            backend,
            max_iterations,
            vault,
            json,
        } => {
            let req = scholia::research::deep_search::DeepSearchRequest {
                query,
                backend,
                max_iterations,
            };
            return deep_search(req, vault, json);
        }
        Command::Ask {
            query,
            model,
            timeout,
            vault,
            json,
        } => return ask(query, model, timeout, vault, json),
        Command::Fetch { url, max_chars, json } => {
            let settings = Settings::load(&ProcessEnv, None, None)?;
            let rt = runtime()?;
            let fetcher = scholia::web::fetch::Fetcher::new(settings.allow_private_hosts);
            let page = rt.block_on(fetcher.fetch_page(&url, scholia::research::note::PAGE_TIMEOUT, max_chars))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&page)?);
            } else {
                if let Some(title) = &page.content.title {
                    println!("# {title}\n");
                }
                println!("{}", page.content.markdown);
                eprintln!(
                    "({} characters from {} via {:?}{})",
                    page.content.markdown.chars().count(),
                    page.url,
                    page.content.method,
                    if page.content.truncated { ", truncated" } else { "" }
                );
            }
        }
        Command::Lsp => scholia::lsp::serve_stdio()?,
    }
    Ok(ExitCode::SUCCESS)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Runs a pipeline on a fresh runtime; Ctrl-C cancels `cancel` (the pipeline then leaves the
/// note unchanged).
fn run_cancellable<T>(cancel: &CancellationToken, pipeline: impl std::future::Future<Output = T>) -> Result<T> {
    let rt = runtime()?;
    Ok(rt.block_on(async {
        let on_ctrl_c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_ctrl_c.cancel();
            }
        });
        pipeline.await
    }))
}

fn research(note: String, depth: Depth, focus: Option<String>, vault: Option<PathBuf>, json: bool) -> Result<ExitCode> {
    let cwd = std::env::current_dir().ok();
    let (index, _) = open_index(vault, false)?;
    let settings = Settings::load(&ProcessEnv, Some(index.vault().root()), None)?;
    let engine = Engine::new(settings, index.clone())?;
    let req = NoteRequest {
        path: note,
        depth,
        focus,
        text: None,
        cwd,
    };
    let tty = std::io::stderr().is_terminal();
    let progress = move |e: Event| {
        if tty {
            eprintln!("· {}", e.message());
        }
    };
    let cancel = CancellationToken::new();
    let result = run_cancellable(
        &cancel,
        scholia::research::note::research_note(&engine, &req, &progress, &cancel),
    )??;
    let outcome = scholia::research::note::write_section(index.vault().root(), &result.path, &result.section)?;
    let written = matches!(outcome, WriteOutcome::Written { .. });
    if json {
        let mut v = serde_json::to_value(&result)?;
        v["written"] = serde_json::json!(written);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    let (web, vault_notes) = result.sources.iter().fold((0, 0), |(w, v), s| match s {
        scholia::research::Source::Web { .. } => (w + 1, v),
        scholia::research::Source::Vault { .. } => (w, v + 1),
    });
    println!(
        "{} `## Research` in {}: {} topics, {} sources cited ({web} web, {vault_notes} vault){}{}",
        if written { "Wrote" } else { "Unchanged" },
        result.path,
        result.topics_researched,
        result.sources.len(),
        match result.citations_removed {
            0 => String::new(),
            n => format!(", {n} unverifiable citations removed"),
        },
        result.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default(),
    );
    for w in &result.warnings {
        println!("warning: {w}");
    }
    println!("\n{}", result.preview);
    Ok(ExitCode::SUCCESS)
}

fn deep_search(
    req: scholia::research::deep_search::DeepSearchRequest,
    vault: Option<PathBuf>,
    json: bool,
) -> Result<ExitCode> {
    use scholia::research::deep_search::{self, DeepEvent};
    let root = match vault {
        Some(v) => v,
        None => std::env::current_dir().context("current directory")?,
    };
    let settings = Settings::load(&ProcessEnv, Some(&root), None)?;
    scholia::gemini_cli::GeminiCli::startup_cleanup(&settings.dirs.config);
    let engine = Engine::without_vault(settings)?;
    let tty = std::io::stderr().is_terminal();
    let progress = move |e: DeepEvent| {
        if tty {
            eprintln!("· {}", e.message());
        }
    };
    let cancel = CancellationToken::new();
    let result = run_cancellable(&cancel, deep_search::deep_search(&engine, &req, &progress, &cancel))?;
    let result = match result {
        Ok(r) => r,
        Err(e) if json => {
            let v = serde_json::json!({"success": false, "error": {"code": e.code, "message": e.message}});
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => {
            eprintln!("scholia: error: [{}] {}", e.code, e.message);
            return Ok(ExitCode::FAILURE);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", result.result.trim_end());
    let m = &result.metadata;
    println!(
        "\n---\n{} after {} of at most {} rounds ({}, {}); {} sources, {} searches, {:.1} s",
        if result.verified { "Verified" } else { "Not verified" },
        m.iterations,
        m.max_iterations,
        m.backend,
        m.model,
        m.sources_visited.len(),
        m.search_queries_used.len(),
        m.duration_ms as f64 / 1000.0
    );
    if let Some(note) = &result.note {
        println!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

fn ask(
    query: String,
    model: Option<String>,
    timeout: Option<String>,
    vault: Option<PathBuf>,
    json: bool,
) -> Result<ExitCode> {
    use scholia::research::sonar::AskRequest;
    let root = match vault {
        Some(v) => v,
        None => std::env::current_dir().context("current directory")?,
    };
    let settings = Settings::load(&ProcessEnv, Some(&root), None)?;
    let model = model.or_else(|| settings.sonar_model.clone());
    let timeout = timeout.map(|t| AskRequest::timeout_arg(&t));
    let req = AskRequest::new(&query, model.as_deref(), timeout.as_ref())?;
    let engine = Engine::without_vault(settings)?;
    let sonar = engine.sonar()?;
    let rt = runtime()?;
    let answer = rt.block_on(sonar.ask(&req))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", answer.answer.trim_end());
    if !answer.sources.is_empty() {
        println!("\nSources:");
        for (i, s) in answer.sources.iter().enumerate() {
            match &s.title {
                Some(t) => println!("{}. {t} <{}>", i + 1, s.url),
                None => println!("{}. <{}>", i + 1, s.url),
            }
        }
    }
    let m = &answer.metadata;
    eprintln!(
        "({}, {} ms of {} ms{}{}, {} tokens{})",
        m.model_id,
        m.response_time,
        m.timeout,
        if m.cost_tier.is_some() { ", premium" } else { "" },
        if m.cached { ", cached" } else { "" },
        m.usage.prompt_tokens + m.usage.completion_tokens,
        m.cost.map(|c| format!(", ${c:.4}")).unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn open_vault(dir: Option<PathBuf>) -> Result<(Vault, Dirs)> {
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir().context("current directory")?,
    };
    let vault = Vault::open(&dir)?;
    let dirs = Dirs::from_env(&ProcessEnv)?;
    Ok((vault, dirs))
}

/// Opens and syncs the index, drawing a progress line on a terminal when `show_progress`.
fn open_index(
    dir: Option<PathBuf>,
    show_progress: bool,
) -> Result<(std::sync::Arc<index::VaultIndex>, Option<SyncSummary>)> {
    let (vault, dirs) = open_vault(dir)?;
    let index_dir = dirs.index_dir(vault.root());
    let tty = show_progress && std::io::stderr().is_terminal();
    let mut progress = |p: Progress| {
        if !tty {
            return;
        }
        if let Progress::Indexed { done, total, .. } = p {
            let width = 30;
            let filled = (done * width).checked_div(total).unwrap_or(width);
            eprint!(
                "\r[{}{}] {done}/{total} notes",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprint!("\r{}\r", " ".repeat(width + 30));
            }
        }
    };
    Ok(index::open_synced(vault, &index_dir, &mut progress)?)
}

fn print_summary(s: &SyncSummary, reasons: bool) {
    println!(
        "{} notes indexed, {} unchanged, {} removed, {} skipped, {} failed, {} truncated in {:.2}s",
        s.indexed,
        s.unchanged,
        s.removed,
        s.skipped.len(),
        s.failed.len(),
        s.truncated.len(),
        s.elapsed.as_secs_f64()
    );
    if reasons {
        for k in &s.skipped {
            println!("skipped  {}  ({})", k.path, k.reason);
        }
        for k in &s.failed {
            println!("failed   {}  ({})", k.path, k.reason);
        }
        for t in &s.truncated {
            println!("truncated  {t}  (indexed the first {} bytes)", index::MAX_INDEX_BYTES);
        }
    } else if !s.skipped.is_empty() || !s.failed.is_empty() || !s.truncated.is_empty() {
        println!("(run with --reasons to see why)");
    }
}

fn highlight(snippet: &str, ranges: &[std::ops::Range<usize>], ansi: bool) -> String {
    let (open, close) = if ansi { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
    let mut out = String::with_capacity(snippet.len() + ranges.len() * 8);
    let mut at = 0;
    for r in ranges {
        if r.start < at || r.end > snippet.len() {
            continue;
        }
        out.push_str(&snippet[at..r.start]);
        out.push_str(open);
        out.push_str(&snippet[r.clone()]);
        out.push_str(close);
        at = r.end;
    }
    out.push_str(&snippet[at..]);
    out
}
