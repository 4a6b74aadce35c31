//! Spawning the Gemini CLI (deep_search's default backend). The CLI runs headless with the
//! prompt on stdin, in a private working directory whose generated `.gemini/` settings and
//! policy allow only web search and web fetch, under a hard wall-clock timeout that ends in
//! SIGTERM then SIGKILL to the whole process group. Output is read with a byte cap.

mod output;
mod rundir;
use output::*;
use rundir::*;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

pub const INSTALL_HINT: &str = "npm install -g @google/gemini-cli";
/// `-o json` appeared in 0.6; older CLIs reject it ("Unknown arguments: output-format").
const JSON_SINCE: (u64, u64, u64) = (0, 6, 0);
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);
const STDERR_TAIL: usize = 4096;
/// How long stderr may stay open after the CLI exited (a child of it holding the pipe).
const STDERR_GRACE: Duration = Duration::from_secs(1);
const TEMP_PREFIX: &str = "temp-invalid-output-";

/// The environment the CLI runs with: only what it needs to run, authenticate with Google and
/// reach the network; never the keys of other providers (OpenAI, OpenRouter, Fireworks, …).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChildEnv(Vec<(String, String)>);

/// Variables passed through as they are.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TZ",
    "TMPDIR",
    "NO_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];
/// Prefixes passed through: locale, and the CLI's own and Google's authentication settings.
const PASSED_PREFIXES: &[&str] = &["LC_", "GEMINI_", "GOOGLE_", "CLOUDSDK_"];

impl ChildEnv {
    pub fn allowlisted(env: &dyn scholia_base::Env) -> ChildEnv {
        let mut vars: Vec<(String, String)> = env
            .vars()
            .into_iter()
            .filter(|(k, _)| PASSED.contains(&k.as_str()) || PASSED_PREFIXES.iter().any(|p| k.starts_with(p)))
            .collect();
        vars.sort();
        ChildEnv(vars)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

impl std::fmt::Debug for ChildEnv {
    // Values may be credentials: only names print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// What a spawn is for: each has its own working directory and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Research rounds: `google_web_search` and `web_fetch` only.
    Search,
    /// JSON correction: reading the invalid output file only.
    Correction,
}

impl Purpose {
    fn allowed_tools(self) -> &'static [&'static str] {
        match self {
            Purpose::Search => &["google_web_search", "web_fetch"],
            Purpose::Correction => &["read_file"],
        }
    }
}

/// Tools that change the machine; denied by policy on top of the allowlist.
const DENIED_TOOLS: &[&str] = &[
    "run_shell_command",
    "write_file",
    "replace",
    "edit",
    "save_memory",
    "write_todos",
    "delegate_to_agent",
];

#[derive(Debug, Clone, thiserror::Error)]
pub enum CliError {
    #[error(
        "the Gemini CLI `{program}` was not found; install it with `{INSTALL_HINT}` (Node.js 20+), run `gemini` once to log in, or set GEMINI_CLI to its path"
    )]
    NotFound { program: String },
    #[error("the Gemini CLI did not finish within {secs} s and was stopped")]
    Timeout { secs: u64 },
    #[error("the Gemini CLI exited with code {code}: {hint}{stderr}")]
    Exit {
        code: i32,
        hint: &'static str,
        stderr: String,
    },
    #[error("the Gemini CLI was killed by a signal{stderr}")]
    Killed { stderr: String },
    #[error("the Gemini CLI printed more than {limit} bytes and was stopped")]
    OutputTooLarge { limit: usize },
    #[error("the Gemini CLI reported an error: {0}")]
    Reported(String),
    #[error("cancelled")]
    Cancelled,
    #[error("running the Gemini CLI `{program}`: {message}")]
    Io { program: String, message: String },
}

impl CliError {
    /// The error code of the seed's API.
    pub fn code(&self) -> &'static str {
        match self {
            CliError::NotFound { .. } => "CLI_NOT_FOUND",
            CliError::Timeout { .. } => "TIMEOUT",
            CliError::Cancelled => "CANCELLED",
            _ => "EXECUTION_ERROR",
        }
    }

    /// Errors every later spawn would repeat: no point running more rounds.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            CliError::NotFound { .. } | CliError::Cancelled | CliError::Exit { code: 41 | 52, .. }
        )
    }
}

/// What the CLI's exit code means (gemini-cli's documented codes).
fn exit_hint(code: i32) -> &'static str {
    match code {
        41 => "authentication failed; run `gemini` once interactively to log in, or set GEMINI_API_KEY",
        42 => "input error (the prompt or arguments were rejected)",
        52 => "configuration error (check ~/.gemini/settings.json and the model name)",
        53 => "turn limit exceeded (the model used too many turns)",
        54 => "a tool failed during the run",
        130 => "interrupted",
        _ => "general error or API failure",
    }
}

/// Token counts summed over every model the CLI used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Tokens {
    pub prompt: u64,
    pub candidates: u64,
    pub cached: u64,
    pub thoughts: u64,
    pub tool: u64,
    pub total: u64,
}

impl Tokens {
    pub fn add(&mut self, o: &Tokens) {
        self.prompt += o.prompt;
        self.candidates += o.candidates;
        self.cached += o.cached;
        self.thoughts += o.thoughts;
        self.tool += o.tool;
        self.total += o.total;
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CliOutput {
    /// The model's answer (the `response` field, or all of stdout in text mode).
    pub response: String,
    /// Models reported in `stats.models`, most tokens first.
    pub models: Vec<String>,
    pub tokens: Tokens,
}

/// One Gemini CLI installation, configured for deep_search.
#[derive(Debug)]
pub struct GeminiCli {
    program: String,
    config_dir: PathBuf,
    env: ChildEnv,
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    pub max_output: usize,
    json: OnceCell<bool>,
}

impl GeminiCli {
    pub fn new(program: &str, config_dir: &Path, env: ChildEnv) -> GeminiCli {
        GeminiCli {
            program: program.to_string(),
            config_dir: config_dir.to_path_buf(),
            env,
            timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(3),
            max_output: 8 << 20,
            json: OnceCell::new(),
        }
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Whether the executable can be found (on the child's PATH or as a path).
    pub fn is_installed(&self) -> bool {
        find_program(&self.program, self.env.get("PATH")).is_some()
    }

    /// A command for the CLI with only the allowlisted environment.
    fn command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.env_clear().envs(self.env.0.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// `--version`, once: whether this CLI supports `-o json`. Like every run, in a private
    /// directory of its own, never in the vault or the current directory.
    pub async fn json_output(&self) -> Result<bool, CliError> {
        self.json
            .get_or_try_init(|| async {
                let dir = self.prepare(Purpose::Correction).await?;
                let mut cmd = self.command();
                cmd.current_dir(dir.path())
                    .arg("--version")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                let out = tokio::time::timeout(VERSION_TIMEOUT, cmd.output()).await;
                dir.remove().await;
                let out = out
                    .map_err(|_| CliError::Timeout {
                        secs: VERSION_TIMEOUT.as_secs(),
                    })?
                    .map_err(|e| self.spawn_error(e))?;
                let text = String::from_utf8_lossy(&out.stdout);
                let json = match parse_version(&text) {
                    Some(v) => v >= JSON_SINCE,
                    None => {
                        tracing::warn!("could not read the Gemini CLI version from {text:?}; using text output");
                        false
                    }
                };
                tracing::info!(version = %text.trim(), json, "Gemini CLI detected");
                Ok(json)
            })
            .await
            .copied()
    }

    fn spawn_error(&self, e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::NotFound {
                program: self.program.clone(),
            }
        } else {
            CliError::Io {
                program: self.program.clone(),
                message: e.to_string(),
            }
        }
    }

    /// A private working directory for one run (off the runtime): `.gemini/settings.json` and
    /// the policy for `purpose`, and room for the run's own files. Removed when dropped.
    pub async fn prepare(&self, purpose: Purpose) -> Result<RunDir, CliError> {
        let (program, config_dir) = (self.program.clone(), self.config_dir.clone());
        scholia_base::spawn_blocking(move || RunDir::create(&program, &config_dir, purpose)).await
    }

    /// One headless run in its own directory: `prompt` on stdin, `--model=<name>` only when
    /// `model` is set.
    pub async fn run(
        &self,
        prompt: &str,
        model: Option<&str>,
        purpose: Purpose,
        cancel: &CancellationToken,
    ) -> Result<CliOutput, CliError> {
        let dir = self.prepare(purpose).await?;
        let out = self.run_in(&dir, prompt, model, cancel).await;
        dir.remove().await;
        out
    }

    /// One headless run in a directory made by [`GeminiCli::prepare`].
    pub async fn run_in(
        &self,
        dir: &RunDir,
        prompt: &str,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CliOutput, CliError> {
        let json = self.json_output().await?;
        let mut cmd = self.command();
        if json {
            cmd.args(["-o", "json"]);
        }
        if let Some(m) = model {
            // One argument: a name can never be read as another option.
            cmd.arg(format!("--model={m}"));
        }
        cmd.current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| self.spawn_error(e))?;
        // However this future ends — finished, timed out, cancelled, dropped, panicked — the
        // CLI's whole process group is gone afterwards.
        let group = ProcessGroup(child.id());
        let mut stdin = child.stdin.take().expect("piped");
        let prompt = prompt.to_string();
        tokio::spawn(async move {
            // A CLI that exits early closes the pipe; that shows in its exit status.
            let _ = stdin.write_all(prompt.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
        // stderr drains alongside stdout; once the CLI has exited, what a straggling child
        // still holds open is waited for briefly, never past the time limit.
        let mut stderr_task = tokio::spawn(read_tail(child.stderr.take().expect("piped"), STDERR_TAIL));
        let mut stdout = child.stdout.take().expect("piped");
        let limit = self.max_output;
        let work = async {
            let out = read_capped(&mut stdout, limit).await?;
            let status = child.wait().await.map_err(|e| CliError::Io {
                program: self.program.clone(),
                message: e.to_string(),
            })?;
            let err = match tokio::time::timeout(STDERR_GRACE, &mut stderr_task).await {
                Ok(Ok(tail)) => tail,
                _ => String::new(),
            };
            Ok::<_, CliError>((out, err, status))
        };
        let outcome = tokio::select! {
            r = work => r,
            _ = tokio::time::sleep(self.timeout) => Err(CliError::Timeout { secs: self.timeout.as_secs() }),
            _ = cancel.cancelled() => Err(CliError::Cancelled),
        };
        stderr_task.abort();
        let (out, stderr, status) = match outcome {
            Ok(v) => v,
            Err(e) => {
                group.terminate(&mut child, self.kill_grace).await;
                return Err(e);
            }
        };
        drop(group);
        let tail = if stderr.trim().is_empty() {
            String::new()
        } else {
            format!("; stderr: {}", stderr.trim())
        };
        match status.code() {
            Some(0) => {}
            Some(code) => {
                return Err(CliError::Exit {
                    code,
                    hint: exit_hint(code),
                    stderr: tail,
                });
            }
            None => return Err(CliError::Killed { stderr: tail }),
        }
        let text = String::from_utf8_lossy(&out).into_owned();
        if json {
            parse_json_output(&text)
        } else {
            Ok(CliOutput {
                response: text,
                ..Default::default()
            })
        }
    }

    /// Deletes what crashed runs left: `temp-invalid-output-*.txt` files in the config
    /// directory (older versions), and run directories of processes that are gone (never a
    /// live process's). Returns how many temp files went.
    pub fn cleanup_orphans(config_dir: &Path) -> std::io::Result<usize> {
        let mut n = 0;
        for entry in std::fs::read_dir(config_dir)? {
            let entry = entry?;
            let name = entry.file_name();
            if is_temp_file(&name.to_string_lossy()) && entry.file_type()?.is_file() {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => n += 1,
                    Err(e) => tracing::error!("could not delete {}: {e}", entry.path().display()),
                }
            }
        }
        let runs = config_dir.join(RUNS_DIR);
        let Ok(entries) = std::fs::read_dir(&runs) else {
            return Ok(n);
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = run_dir_pid(&name) else { continue };
            if process_alive(pid) {
                continue;
            }
            n += std::fs::read_dir(entry.path())
                .map(|d| {
                    d.flatten()
                        .filter(|f| is_temp_file(&f.file_name().to_string_lossy()))
                        .count()
                })
                .unwrap_or(0);
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::error!("could not delete {}: {e}", entry.path().display());
            }
        }
        Ok(n)
    }

    /// Start-up cleanup with the outcome logged; an inaccessible config dir is only a warning.
    pub fn startup_cleanup(config_dir: &Path) -> Option<usize> {
        match GeminiCli::cleanup_orphans(config_dir) {
            Ok(n) => {
                tracing::info!(
                    "cleaned up {n} orphaned temp-invalid-output files in {}",
                    config_dir.display()
                );
                Some(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!(
                    "cleaned up 0 orphaned temp-invalid-output files ({} does not exist yet)",
                    config_dir.display()
                );
                Some(0)
            }
            Err(e) => {
                tracing::warn!(
                    "could not scan {} for orphaned temp files: {e}; continuing",
                    config_dir.display()
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
