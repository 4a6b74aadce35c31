//! The CLI: each command is one engine call, printed. Engine errors map to exit statuses here
//! and nowhere else.

pub mod args;
mod render;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::json;

use args::Command;
use scholia::config::{Dirs, ProcessEnv};
use scholia::engine::{DiskWriter, Engine, Job};
use scholia::error::{Error, ErrorKind};
use scholia::index::VaultSession;
use scholia::research::deep_search::DeepSearchRequest;
use scholia::research::note::Depth;
use scholia::research::sonar::AskRequest;

/// Exit statuses: 0 success, 1 the request failed (invalid input, upstream failure, conflict),
/// 2 bad command-line usage (clap), 3 a provider is not configured, 4 local I/O failed,
/// 70 internal error, 130 cancelled (Ctrl-C).
pub fn exit_status(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::InvalidInput | ErrorKind::Upstream | ErrorKind::Conflict => 1,
        ErrorKind::NotConfigured => 3,
        ErrorKind::Io => 4,
        ErrorKind::Internal => 70,
        ErrorKind::Cancelled => 130,
    }
}

pub fn run(command: Command) -> ExitCode {
    match dispatch(command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scholia: error: {e:#}");
            let status = e.downcast_ref::<Error>().map(|e| exit_status(e.kind)).unwrap_or(1);
            ExitCode::from(status)
        }
    }
}

fn dispatch(command: Command) -> Result<ExitCode> {
    match command {
        Command::Index { vault, reasons, json } => {
            // Ctrl-C stops between batches: what was indexed is committed, the rest next time.
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let rt = runtime()?;
            let flag = stop.clone();
            rt.spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
            let root = dir_or_cwd(vault)?;
            let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
            let (_session, summary) =
                VaultSession::open_synced_until(&root, &dirs, &mut render::index_bar(true), &|| {
                    stop.load(std::sync::atomic::Ordering::Relaxed)
                })?;
            let summary =
                summary.context("another scholia process holds the index writer; it keeps the index current")?;
            if json {
                render::json(&summary)?;
            } else {
                render::sync_summary(&summary, reasons);
            }
        }
        Command::Search {
            query,
            vault,
            limit,
            json,
        } => {
            let (session, _) = open_vault(vault, false)?;
            let results = runtime()?.block_on(session.search(&query, limit as usize))?;
            if json {
                render::json(&results)?;
            } else {
                render::hits(&results)?;
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
            let cwd = std::env::current_dir().ok();
            let (session, _) = open_vault(vault, false)?;
            let engine = load_engine(Some(session.vault().root()))?;
            let outcome = run_job(&engine, async |job| {
                let note = engine.resolve_note(&session, &note, cwd.as_deref()).await?;
                engine
                    .research_note(&session, &note, depth, focus.as_deref(), &DiskWriter, job)
                    .await
            })?;
            if json {
                render::json(&outcome)?;
            } else {
                render::research(&outcome);
            }
        }
        Command::DeepSearch {
            query,
            backend,
            max_iterations,
            vault,
            json,
        } => {
            let engine = load_engine(Some(&dir_or_cwd(vault)?))?;
            let req = DeepSearchRequest {
                query,
                backend,
                max_iterations,
            };
            match run_job(&engine, async |job| engine.deep_search(&req, job).await) {
                Ok(r) if json => render::json(&r)?,
                Ok(r) => render::deep_search(&r),
                Err(e) if json => {
                    let e = e.downcast::<Error>()?;
                    render::json(&json!({"success": false, "error": {"code": e.code, "message": e.message}}))?;
                    return Ok(ExitCode::from(exit_status(e.kind)));
                }
                Err(e) => return Err(e),
            }
        }
        Command::Ask {
            query,
            model,
            timeout,
            vault,
            json,
        } => {
            let engine = load_engine(Some(&dir_or_cwd(vault)?))?;
            let timeout = timeout.map(|t| AskRequest::timeout_arg(&t));
            let req = engine.ask_request(&query, model.as_deref(), timeout.as_ref())?;
            let answer = run_job(&engine, async |job| engine.ask(&req, job).await)?;
            if json {
                render::json(&answer)?;
            } else {
                render::answer(&answer);
            }
        }
        Command::Fetch { url, max_chars, json } => {
            let engine = load_engine(None)?;
            let page = runtime()?.block_on(engine.fetch_page(&url, max_chars))?;
            if json {
                render::json(&page)?;
            } else {
                render::page(&page);
            }
        }
        Command::Trust { dir, revoke, list } => trust(dir, revoke, list)?,
        Command::Tasks { action } => return tasks(action),
        Command::Lsp { describe: true } => render::json(&scholia::lsp::describe())?,
        Command::Lsp { describe: false } => scholia::lsp::serve_stdio()?,
        Command::Mcp { vault, http, token_env } => {
            scholia::mcp::serve(scholia::mcp::McpOptions { vault, http, token_env })?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The engine for the vault (or directory) at `root`; settings an untrusted vault may not
/// make are named once on stderr.
fn load_engine(root: Option<&Path>) -> Result<Engine> {
    let engine = Engine::load(&ProcessEnv, root, None)?;
    if let Some(u) = engine.untrusted() {
        eprintln!("scholia: warning: {u}");
    }
    Ok(engine)
}

fn trust(dir: Option<PathBuf>, revoke: bool, list: bool) -> Result<()> {
    use scholia::config::trust;
    let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
    if list {
        let trusted = trust::list(&dirs.config).map_err(Error::from)?;
        if trusted.is_empty() {
            println!("no vault is trusted; `scholia trust DIR` trusts one");
        }
        for e in trusted {
            println!("{}  (trusted {}, sha256 {})", e.path, e.trusted_at, &e.sha256[..12]);
        }
        return Ok(());
    }
    let root = dir_or_cwd(dir)?;
    if revoke {
        match trust::revoke(&dirs.config, &root).map_err(Error::from)? {
            true => println!("{} is no longer trusted", root.display()),
            false => println!("{} was not trusted", root.display()),
        }
        return Ok(());
    }
    let entry = trust::trust(&dirs.config, &root).map_err(Error::from)?;
    println!(
        "Trusted {} as its {} is now (sha256 {}): it may choose programs, endpoints, credentials and arguments until it changes",
        entry.path,
        scholia::config::CONFIG_FILE,
        &entry.sha256[..12]
    );
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Runs `op` as a job of `engine` on a fresh runtime; Ctrl-C cancels it (the pipeline then
/// changes nothing).
fn run_job<T>(engine: &Engine, op: impl AsyncFnOnce(&Job) -> Result<T, Error>) -> Result<T> {
    let rt = runtime()?;
    let result = rt.block_on(async {
        let job = engine.jobs().start("scholia", true, render::progress_lines);
        let cancel = job.token().clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        op(&job).await
    });
    Ok(result?)
}

fn dir_or_cwd(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => Ok(d),
        None => std::env::current_dir().context("current directory"),
    }
}

/// Opens the vault's index and syncs it (a progress bar on a terminal when `show_progress`).
fn open_vault(
    dir: Option<PathBuf>,
    show_progress: bool,
) -> Result<(VaultSession, Option<scholia::index::SyncSummary>)> {
    let root = dir_or_cwd(dir)?;
    let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
    let opened = VaultSession::open_synced(Path::new(&root), &dirs, &mut render::index_bar(show_progress))?;
    Ok(opened)
}

fn tasks(action: args::TaskAction) -> Result<ExitCode> {
    use args::TaskAction as A;
    use scholia::engine::ReportSave;
    // The current directory is the vault whose `.scholia.toml` applies, as for research.
    let cwd = std::env::current_dir()?;
    let engine = std::sync::Arc::new(load_engine(Some(&cwd))?);
    let rt = runtime()?;
    let tasks = engine.tasks()?;
    let print = |json: bool, value: serde_json::Value, line: String| -> Result<()> {
        if json {
            render::json(&value)?;
        } else {
            println!("{line}");
        }
        Ok(())
    };
    match action {
        A::Start {
            query,
            kind,
            focus,
            no_notify,
            max_wait_hours,
            model,
            json,
        } => {
            use scholia::tasks::Kind;
            if focus.is_some() && kind != Kind::ResearchNote {
                return Err(Error::invalid("--focus: only a research-note task takes a focus").into());
            }
            let (query, note) = match kind {
                Kind::ResearchNote => (focus.unwrap_or_default(), Some(query)),
                _ => (query, None),
            };
            let req = scholia::engine::TaskStart {
                query,
                kind,
                notify: !no_notify,
                max_wait_hours,
                model,
                note,
            };
            let t = rt.block_on(engine.start_task(req, Some(&cwd), Some(&cwd)))?;
            print(
                json,
                json!({"success": true, "task_id": t.id, "status": "running_async", "mode": "async",
                       "message": "Research running in background. Notification when complete.",
                       "check_status_command": format!("scholia tasks status {}", t.id)}),
                format!(
                    "{}\nstarted ({}); `scholia tasks status {}` to follow, `scholia tasks run` drives it",
                    t.id,
                    t.kind.as_str(),
                    t.id
                ),
            )?;
        }
        A::Status { id, json } => {
            let s = rt.block_on(tasks.status(&id)).map_err(Error::from)?;
            let line = format!(
                "{} {} · {:.1} min · {} in / {} out tokens · ${:.2}{}{}",
                s.task_id,
                s.status,
                s.elapsed_minutes,
                s.tokens_used["input"],
                s.tokens_used["output"],
                s.cost_so_far,
                // What it is doing, when that says more than its status.
                s.current_action
                    .as_deref()
                    .filter(|a| a.replace(' ', "_") != s.status)
                    .map(|a| format!(" · {a}"))
                    .unwrap_or_default(),
                s.error.as_deref().map(|e| format!("\nerror: {e}")).unwrap_or_default()
            );
            print(json, serde_json::to_value(&s)?, line)?;
        }
        A::Results { id, no_sources, json } => {
            let (t, r) = rt.block_on(tasks.results(&id)).map_err(Error::from)?;
            let mut v = json!({"success": true, "task_id": t.id, "query": t.query, "status": t.status,
                               "report": r.report, "metadata": r.metadata});
            if !no_sources {
                v["sources"] = r.sources.clone();
            }
            let mut line = r.report.clone();
            if !no_sources {
                for s in r.sources.as_array().into_iter().flatten() {
                    line.push_str(&format!("\n- {}", s["url"].as_str().unwrap_or_default()));
                }
            }
            print(json, v, line)?;
        }
        A::Cancel { id, no_partial, json } => {
            let t = rt.block_on(tasks.cancel(&id, !no_partial)).map_err(Error::from)?;
            print(
                json,
                json!({"success": true, "task_id": t.id, "status": t.status, "final_cost_usd": t.cost_usd, "error": t.error}),
                format!("{} cancelled (cost so far ${:.2})", t.id, t.cost_usd),
            )?;
        }
        A::Estimate { query, json } => {
            let e = tasks.estimate(&query);
            let line = format!(
                "{} · {}–{} min · ${}–${} · {}",
                e.query_complexity,
                e.estimated_duration["min_minutes"],
                e.estimated_duration["max_minutes"],
                e.estimated_cost["min_usd"],
                e.estimated_cost["max_usd"],
                e.recommendation
            );
            print(json, serde_json::to_value(&e)?, line)?;
        }
        A::Save {
            id,
            output_dir,
            vault,
            prefix,
            no_metadata,
            no_sources,
            json,
        } => {
            let root = dir_or_cwd(vault)?;
            let opts = ReportSave {
                output_dir,
                prefix,
                include_metadata: !no_metadata,
                include_sources: !no_sources,
            };
            let saved = rt.block_on(engine.save_report(Some(&root), &id, opts))?;
            let line = saved.file_path.clone();
            print(json, serde_json::to_value(&saved)?, line)?;
        }
        A::List { limit, json } => {
            let list = rt.block_on(tasks.list(limit as usize)).map_err(Error::from)?;
            let lines: Vec<String> = list
                .iter()
                .map(|t| {
                    format!(
                        "{} {:<17} {:<11} {}",
                        t.id,
                        t.status.as_str(),
                        t.kind.as_str(),
                        match (&t.note, t.query.as_str()) {
                            (Some(note), "") => note.clone(),
                            (Some(note), focus) => format!("{note} ({focus})"),
                            (None, q) => q.chars().take(60).collect::<String>(),
                        }
                    )
                })
                .collect();
            let text = match lines.is_empty() {
                true => "no tasks yet; `scholia tasks start QUESTION` starts one".to_string(),
                false => lines.join("\n"),
            };
            print(json, serde_json::to_value(&list)?, text)?;
        }
        A::Run { until_idle } => {
            let shutdown = tokio_util::sync::CancellationToken::new();
            rt.block_on(async {
                let stop = shutdown.clone();
                tokio::spawn(async move {
                    let _ = tokio::signal::ctrl_c().await;
                    stop.cancel();
                });
                if until_idle {
                    let (stop, tasks) = (shutdown.clone(), tasks.clone());
                    tokio::spawn(async move {
                        loop {
                            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                            let open = tasks.list(10_000).await.map(|l| l.iter().any(|t| !t.status.is_final()));
                            if matches!(open, Ok(false)) {
                                stop.cancel();
                                break;
                            }
                        }
                    });
                }
                engine.run_tasks(shutdown).await
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
