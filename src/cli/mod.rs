//! The CLI: each command is one engine call, printed. Engine errors map to exit statuses here
//! and nowhere else.

pub mod args;
mod notes;
mod render;
mod setup;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::json;

use args::{Command, McpAction};
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
        Command::Index {
            vault,
            background: true,
            ..
        } => {
            let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
            let check = VaultSession::open(&dir_or_cwd(vault)?, &dirs)?.check_in_background()?;
            tracing::debug!("background check: {check:?}");
        }
        Command::Index {
            vault, reasons, json, ..
        } => {
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
            let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
            let (session, summary) =
                VaultSession::open_synced_until(&root, &dirs, &mut render::index_bar(true), &stopped)?;
            let summary =
                summary.context("another scholia process holds the index writer; it keeps the index current")?;
            // The vectors, when embeddings are configured: done before this command ends.
            let engine = load_engine(Some(session.vault().root()))?;
            let warning = {
                let mut waiting = engine.meaning_waits_on().map(render::Waiting::on);
                engine.meaning_to_index(&session, &stopped, &mut |bytes| {
                    if let Some(w) = &mut waiting {
                        w.received(bytes);
                    }
                })
            };
            let embedded = match session.index().embedder() {
                Some(_) => Some(session.embed_now(&mut render::embed_bar(), &stopped)?),
                None => None,
            };
            if json {
                render::json(&summary)?;
            } else {
                render::sync_summary(&summary, reasons);
                if let Some(e) = &embedded {
                    println!(
                        "vectors: {} notes embedded ({} tokens), {} unchanged, {} removed{}",
                        e.embedded,
                        e.tokens,
                        e.kept,
                        e.removed,
                        match e.left {
                            0 => String::new(),
                            n => format!(", {n} left for the next run"),
                        }
                    );
                }
            }
            // Ctrl-C while the vectors were asked for or made: what was done is saved, the
            // rest is the next run's, status 130 as when the words were stopped.
            if stopped() {
                return Err(Error::new(
                    "CANCELLED",
                    ErrorKind::Cancelled,
                    "cancelled; the word index is saved, and the vectors made so far; the next run makes the rest",
                )
                .into());
            }
            // The embedder that could not be had, else why the vectors stopped: one warning.
            if let Some(w) = warning.or_else(|| embedded.and_then(|e| e.warning)) {
                eprintln!("scholia: warning: {w}");
            }
        }
        Command::Check { paths, vault, format } => return check(paths, vault, &format),
        Command::Search {
            query,
            vault,
            limit,
            mode,
            json,
        } => {
            let (session, _) = open_vault(vault, false)?;
            let engine = load_engine(Some(session.vault().root()))?;
            let failed = engine.meaning_to_search(&session);
            let results = runtime()?.block_on(session.search(&query, limit as usize, mode))?;
            // One warning: the embedder that failed, else what the search says.
            for w in failed
                .iter()
                .chain(results.warnings.iter().take(usize::from(failed.is_none())))
            {
                eprintln!("scholia: warning: {w}");
            }
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
        Command::Outline { note, vault, json } => notes::outline(note, vault, json)?,
        Command::Edit {
            note,
            heading,
            mode,
            content,
            content_file,
            set,
            unset,
            expected_hash,
            vault,
            json,
        } => notes::edit(
            note,
            heading,
            mode,
            content,
            content_file,
            set,
            unset,
            expected_hash,
            vault,
            json,
        )?,
        Command::Create {
            path,
            content,
            content_file,
            template,
            vault,
            json,
        } => notes::create(path, content, content_file, template, vault, json)?,
        Command::Move { note, to, vault, json } => notes::move_note(note, to, vault, json)?,
        Command::Backlinks { note, vault, json } => notes::backlinks(note, vault, json)?,
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
        Command::ExtractWorker => return Ok(ExitCode::from(scholia::web::extract::worker::worker_main() as u8)),
        Command::Lsp { describe: true } => render::json(&scholia::lsp::describe())?,
        Command::Lsp { describe: false } => scholia::lsp::serve_stdio()?,
        Command::Mcp {
            action: Some(McpAction::Install(ask)),
            ..
        } => return setup::install(ask),
        Command::Mcp {
            action: None,
            vault,
            http,
            token_env,
            read_only,
            allow_folder,
            tools,
            tokens_file,
        } => scholia::mcp::serve(scholia::mcp::McpOptions {
            vault,
            http,
            token_env,
            read_only,
            allow_folders: allow_folder,
            tools,
            tokens_file,
        })?,
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
/// `scholia check`: the index brought up to date, then every note's problems.
fn check(paths: Vec<PathBuf>, vault: Option<PathBuf>, format: &str) -> Result<ExitCode> {
    let root = dir_or_cwd(vault)?;
    let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
    let (session, _) = VaultSession::open_synced(&root, &dirs, &mut render::index_bar(format == "text"))?;
    let root = session.vault().root().to_path_buf();
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.clone());
    let mut under = Vec::new();
    for p in paths {
        let abs = if p.is_absolute() { p.clone() } else { cwd.join(&p) };
        let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
        match scholia::vault::paths::relative(&root, &abs) {
            Some(rel) => under.push(rel),
            None => {
                return Err(Error::invalid(format!(
                    "{}: not in the vault {}; give notes or folders inside it",
                    p.display(),
                    root.display()
                ))
                .into());
            }
        }
    }
    let index = session.index().clone();
    let checked = index.check_notes(&under)?;
    render::checked(&checked, format)?;
    Ok(ExitCode::from(u8::from(checked.errors > 0)))
}

fn open_vault(
    dir: Option<PathBuf>,
    show_progress: bool,
) -> Result<(VaultSession, Option<scholia::index::SyncSummary>)> {
    let root = dir_or_cwd(dir)?;
    let dirs = Dirs::from_env(&ProcessEnv).map_err(Error::from)?;
    let opened = VaultSession::open_current(
        Path::new(&root),
        &dirs,
        &mut render::index_bar(show_progress),
        &sync_in_background,
    )?;
    Ok(opened)
}

/// Checks the vault against its index in a process of its own (`scholia index --background`)
/// while this one answers from the index: on a large vault the check takes longer than the
/// answer.
fn sync_in_background(root: &Path) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut c = std::process::Command::new(exe);
    c.args(["index", "--background", "--vault"])
        .arg(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group: a Ctrl-C meant for this command does not stop it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    // Not waited for: it outlives this process on purpose (init reaps it).
    #[allow(clippy::zombie_processes)]
    match c.spawn() {
        Ok(child) => tracing::debug!(pid = child.id(), "checking the vault in the background"),
        Err(e) => tracing::warn!("could not start the background check of the vault: {e}"),
    }
}

fn tasks(action: args::TaskAction) -> Result<ExitCode> {
    use args::TaskAction as A;
    use scholia::engine::{ReportSave, Summary};
    // The current directory is the vault whose `.scholia.toml` applies, as for research.
    let cwd = std::env::current_dir()?;
    let engine = std::sync::Arc::new(load_engine(Some(&cwd))?);
    let rt = runtime()?;
    // The engine's typed answer: as JSON, or its summary (`text` when a listing says more).
    fn print<T: serde::Serialize + Summary>(json: bool, value: &T, text: Option<String>) -> Result<()> {
        match json {
            true => render::json(value)?,
            false => println!("{}", text.unwrap_or_else(|| value.summary())),
        }
        Ok(())
    }
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
            if focus.is_some() && kind != Some(Kind::ResearchNote) {
                return Err(Error::invalid("--focus: only a research-note task takes a focus").into());
            }
            let (query, note) = match kind {
                Some(Kind::ResearchNote) => (focus.unwrap_or_default(), Some(query)),
                _ => (query, None),
            };
            let req = scholia::engine::TaskStart {
                query,
                kind,
                notify: Some(!no_notify),
                max_wait_hours,
                model,
                note,
            };
            let t = rt.block_on(engine.start_task(req, Some(&cwd), Some(&cwd)))?;
            let text = format!(
                "{}\n{}; `scholia tasks status {}` to follow, `scholia tasks run` drives it",
                t.task_id,
                t.summary(),
                t.task_id
            );
            print(json, &t, Some(text))?;
        }
        A::Status { id, json } => {
            let s = rt.block_on(engine.task_status(&id))?;
            print(json, &s, None)?;
        }
        A::Results { id, no_sources, json } => {
            let r = rt.block_on(engine.task_results(&id, Some(!no_sources)))?;
            let mut text = r.report.clone();
            for s in r.sources.iter().flatten() {
                text.push_str(&format!("\n- {}", s.url));
            }
            print(json, &r, Some(text))?;
        }
        A::Cancel { id, no_partial, json } => {
            let c = rt.block_on(engine.cancel_task(&id, Some(!no_partial)))?;
            print(json, &c, None)?;
        }
        A::Estimate { query, json } => {
            let e = rt.block_on(engine.estimate_task(&query))?;
            print(json, &e, None)?;
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
                include_metadata: Some(!no_metadata),
                include_sources: Some(!no_sources),
            };
            let saved = rt.block_on(engine.save_report(Some(&root), &id, opts))?;
            print(json, &saved, Some(saved.file_path.clone()))?;
        }
        A::List { limit, json } => {
            let list = rt.block_on(engine.list_tasks(Some(limit as usize)))?;
            match json {
                // An array of tasks, as stored.
                true => render::json(&list.tasks)?,
                false if list.tasks.is_empty() => println!("{}", list.summary()),
                false => println!("{}", list.lines().join("\n")),
            }
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
                    let (stop, tasks) = (shutdown.clone(), engine.open_tasks().await?);
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
