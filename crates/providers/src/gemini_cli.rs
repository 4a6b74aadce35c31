//! Spawning the Gemini CLI (deep_search's default backend). The CLI runs headless with the
//! prompt on stdin, in a private working directory whose generated `.gemini/` settings and
//! policy allow only web search and web fetch, under a hard wall-clock timeout that ends in
//! SIGTERM then SIGKILL to the whole process group. Output is read with a byte cap.

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
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
        tokio::task::spawn_blocking(move || RunDir::create(&program, &config_dir, purpose))
            .await
            .map_err(|e| CliError::Io {
                program: self.program.clone(),
                message: e.to_string(),
            })?
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

/// Writes `content` to a new `<dir>/temp-invalid-output-<unix-ms>.txt` (blocking).
pub fn write_temp(dir: &Path, content: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    loop {
        let path = dir.join(format!("{TEMP_PREFIX}{ts}.txt"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                use std::io::Write;
                f.write_all(content.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ts += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Where run directories live, under the config directory.
const RUNS_DIR: &str = "gemini-cli";

fn is_temp_file(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(".txt")
}

/// `run-<pid>-<n>` → pid.
fn run_dir_pid(name: &str) -> Option<i32> {
    name.strip_prefix("run-")?.split('-').next()?.parse().ok()
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The private working directory of one run: `<config>/gemini-cli/run-<pid>-<n>/` holding a
/// freshly written `.gemini/settings.json` and policy, and the run's own files (the temp file
/// of a JSON correction). Nothing is shared between runs, so no run rewrites another's policy.
/// Removed when dropped.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    fn create(program: &str, config_dir: &Path, purpose: Purpose) -> Result<RunDir, CliError> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = config_dir
            .join(RUNS_DIR)
            .join(format!("run-{}-{n}", std::process::id()));
        let gemini = path.join(".gemini");
        let io = |e: std::io::Error| CliError::Io {
            program: program.to_string(),
            message: format!("preparing {}: {e}", gemini.display()),
        };
        std::fs::create_dir_all(gemini.join("policies")).map_err(io)?;
        let dir = RunDir { path };
        let allowed = purpose.allowed_tools();
        let settings = serde_json::json!({
            "tools": {"core": allowed, "exclude": DENIED_TOOLS},
            "mcpServers": {},
        });
        std::fs::write(
            gemini.join("settings.json"),
            serde_json::to_string_pretty(&settings).expect("serializable"),
        )
        .map_err(io)?;
        let quoted = |tools: &[&str]| tools.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
        let policy = format!(
            "# Written by scholia for this run: deep_search may use only these tools.\n\
             [[rule]]\ntoolName = [{}]\ndecision = \"allow\"\npriority = 900\n\n\
             [[rule]]\ntoolName = [{}]\ndecision = \"deny\"\npriority = 999\n",
            quoted(allowed),
            quoted(DENIED_TOOLS)
        );
        std::fs::write(gemini.join("policies").join("scholia.toml"), policy).map_err(io)?;
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes invalid output to `temp-invalid-output-<unix-ms>.txt` in this run's directory
    /// (off the runtime).
    pub async fn write_temp(&self, content: &str) -> std::io::Result<PathBuf> {
        let (dir, content) = (self.path.clone(), content.to_string());
        tokio::task::spawn_blocking(move || write_temp(&dir, &content))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

impl RunDir {
    /// Removes the directory (off the runtime).
    pub async fn remove(mut self) {
        let path = std::mem::take(&mut self.path);
        let _ = tokio::task::spawn_blocking(move || remove_run_dir(&path)).await;
    }
}

fn remove_run_dir(path: &Path) {
    if path.as_os_str().is_empty() {
        return;
    }
    if let Err(e) = std::fs::remove_dir_all(path) {
        tracing::warn!("could not delete {}: {e}", path.display());
    }
}

impl Drop for RunDir {
    /// When a run ends without [`RunDir::remove`] (cancelled, panicked), the directory still
    /// goes; start-up cleanup catches a crash.
    fn drop(&mut self) {
        remove_run_dir(&self.path);
    }
}

/// The CLI's process group, killed when dropped (the CLI is a node process that may have
/// children of its own).
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn signal(&self, sig: i32) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory involved.
            unsafe {
                libc::kill(-(pid as i32), sig);
            }
        }
    }

    /// SIGTERM, then SIGKILL after `grace`.
    async fn terminate(self, child: &mut tokio::process::Child, grace: Duration) {
        self.signal(libc::SIGTERM);
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            tracing::warn!("the Gemini CLI ignored SIGTERM for {grace:?}; sending SIGKILL");
            self.signal(libc::SIGKILL);
            let _ = child.kill().await;
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

fn find_program(program: &str, path: Option<&str>) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(path?)
        .map(|d| d.join(program))
        .find(|c| c.is_file())
}

async fn read_capped(r: &mut (impl AsyncReadExt + Unpin), limit: usize) -> Result<Vec<u8>, CliError> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf).await.map_err(|e| CliError::Io {
            program: "gemini".into(),
            message: format!("reading its output: {e}"),
        })?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > limit {
            return Err(CliError::OutputTooLarge { limit });
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Drains a pipe, keeping its last `keep` bytes.
async fn read_tail(mut r: impl AsyncReadExt + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > keep * 2 {
            tail.drain(..tail.len() - keep);
        }
    }
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| {
            let mut parts = w.split('.').map(|p| p.parse::<u64>().ok());
            Some((parts.next()??, parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .next()
}

/// `-o json` output: `{response, stats: {models: {<name>: {tokens: {…}}}}, error}`, possibly
/// after lines of noise.
pub fn parse_json_output(stdout: &str) -> Result<CliOutput, CliError> {
    let value: Option<Value> = serde_json::from_str(stdout.trim()).ok().or_else(|| {
        let start = stdout.find("\n{").map(|i| i + 1).or_else(|| stdout.find('{'))?;
        serde_json::Deserializer::from_str(&stdout[start..])
            .into_iter::<Value>()
            .next()?
            .ok()
    });
    let Some(value) = value.filter(|v| v.is_object()) else {
        // Not the CLI's envelope: treat it as the answer itself.
        return Ok(CliOutput {
            response: stdout.to_string(),
            ..Default::default()
        });
    };
    if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(CliError::Reported(message));
    }
    let response = value
        .get("response")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut tokens = Tokens::default();
    let mut models: Vec<(String, u64)> = Vec::new();
    if let Some(map) = value.pointer("/stats/models").and_then(Value::as_object) {
        for (name, stats) in map {
            let t = stats.get("tokens");
            let get = |k: &str| t.and_then(|t| t.get(k)).and_then(Value::as_u64).unwrap_or(0);
            let m = Tokens {
                prompt: get("prompt"),
                candidates: get("candidates"),
                cached: get("cached"),
                thoughts: get("thoughts"),
                tool: get("tool"),
                total: get("total"),
            };
            tokens.add(&m);
            models.push((name.clone(), m.total));
        }
    }
    models.sort_by_key(|m| std::cmp::Reverse(m.1));
    Ok(CliOutput {
        response,
        models: models.into_iter().map(|(n, _)| n).collect(),
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_environment_is_an_allowlist() {
        let env: std::collections::HashMap<String, String> = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("GEMINI_API_KEY", "g"),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("LC_ALL", "C"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("OPENAI_API_KEY", "sk"),
            ("OPENROUTER_API_KEY", "or"),
            ("FIREWORKS_API_KEY", "fw"),
            ("SCHOLIA_LLM_API_KEY", "k"),
            ("GITHUB_TOKEN", "t"),
            ("LD_PRELOAD", "/evil.so"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let child = ChildEnv::allowlisted(&env);
        let names: Vec<&str> = child.names().collect();
        assert_eq!(
            names,
            [
                "GEMINI_API_KEY",
                "GOOGLE_CLOUD_PROJECT",
                "HOME",
                "HTTPS_PROXY",
                "LC_ALL",
                "PATH"
            ]
        );
        let shown = format!("{child:?}");
        assert!(
            shown.contains("GEMINI_API_KEY") && !shown.contains("/bin"),
            "values never print: {shown}"
        );
    }

    #[test]
    fn versions() {
        let check = |text: &str, expected: Option<(u64, u64, u64)>| assert_eq!(parse_version(text), expected, "{text}");
        check("0.8.2\n", Some((0, 8, 2)));
        check("gemini-cli v0.12.0", Some((0, 12, 0)));
        check("0.5.5", Some((0, 5, 5)));
        check("nothing", None);
        assert!((0, 6, 0) >= JSON_SINCE && (0, 5, 9) < JSON_SINCE && (1, 0, 0) >= JSON_SINCE);
    }

    #[test]
    fn json_output_sums_tokens_over_models() {
        let out = parse_json_output(
            r#"Loaded cached credentials.
{"response": "hi", "stats": {"models": {
  "gemini-2.5-flash": {"tokens": {"prompt": 10, "candidates": 2, "total": 12, "cached": 0, "thoughts": 1, "tool": 0}},
  "gemini-2.5-pro": {"tokens": {"prompt": 100, "candidates": 20, "total": 130, "cached": 5, "thoughts": 10, "tool": 3}}
}}}"#,
        )
        .unwrap();
        assert_eq!(out.response, "hi");
        assert_eq!(out.models, ["gemini-2.5-pro", "gemini-2.5-flash"]);
        assert_eq!(out.tokens.total, 142);
        assert_eq!(out.tokens.prompt, 110);
        assert_eq!(out.tokens.thoughts, 11);
        let e = parse_json_output(r#"{"response": null, "error": {"type": "ApiError", "message": "quota exceeded"}}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "the Gemini CLI reported an error: quota exceeded");
        assert_eq!(parse_json_output("plain prose").unwrap().response, "plain prose");
    }

    #[test]
    fn exit_codes_and_codes() {
        assert!(exit_hint(41).contains("authentication"));
        assert!(exit_hint(53).contains("turn limit"));
        assert_eq!(CliError::NotFound { program: "g".into() }.code(), "CLI_NOT_FOUND");
        assert!(
            CliError::NotFound { program: "g".into() }
                .to_string()
                .contains(INSTALL_HINT)
        );
    }

    #[test]
    fn run_dirs_are_private_and_only_dead_processes_are_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create("gemini", dir.path(), Purpose::Search).unwrap();
        let w = run.path().to_path_buf();
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(w.join(".gemini/settings.json")).unwrap()).unwrap();
        assert_eq!(
            settings["tools"]["core"],
            serde_json::json!(["google_web_search", "web_fetch"])
        );
        let policy: toml::Value =
            toml::from_str(&std::fs::read_to_string(w.join(".gemini/policies/scholia.toml")).unwrap()).unwrap();
        let rules = policy["rule"].as_array().unwrap();
        assert_eq!(rules[0]["decision"].as_str(), Some("allow"));
        assert!(
            rules[1]["toolName"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t.as_str() == Some("run_shell_command"))
        );
        assert!(w.starts_with(dir.path().join("gemini-cli")));
        let other = RunDir::create("gemini", dir.path(), Purpose::Correction).unwrap();
        assert_ne!(other.path(), w, "one directory per run");

        // Our own live run keeps its files; a dead process's run directory and legacy temp
        // files in the config directory go.
        let a = write_temp(run.path(), "x").unwrap();
        let b = write_temp(dir.path(), "y").unwrap();
        assert_ne!(a, b);
        let dead = dir.path().join("gemini-cli/run-999999999-0");
        std::fs::create_dir_all(&dead).unwrap();
        write_temp(&dead, "z").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "k").unwrap();
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 2);
        assert!(a.exists(), "a live run's temp file is never deleted");
        assert!(!dead.exists() && !b.exists());
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 0);
        assert!(dir.path().join("keep.txt").exists());
        drop(run);
        assert!(!w.exists(), "a run's directory goes with it");
        assert!(GeminiCli::cleanup_orphans(&dir.path().join("missing")).is_err());
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("missing")), Some(0));
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("file")), None);
    }
}
