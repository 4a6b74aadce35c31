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
    pub fn allowlisted(env: &dyn crate::config::Env) -> ChildEnv {
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
    fn dir(self) -> &'static str {
        match self {
            Purpose::Search => "search",
            Purpose::Correction => "correction",
        }
    }

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

    /// `--version`, once: whether this CLI supports `-o json`.
    pub async fn json_output(&self) -> Result<bool, CliError> {
        self.json
            .get_or_try_init(|| async {
                let mut cmd = self.command();
                cmd.arg("--version")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                let out = tokio::time::timeout(VERSION_TIMEOUT, cmd.output())
                    .await
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

    /// The private working directory for `purpose`, with freshly written settings and policy.
    pub fn workdir(&self, purpose: Purpose) -> Result<PathBuf, CliError> {
        workdir(&self.program, &self.config_dir, purpose)
    }

    /// One headless run: `prompt` on stdin, `--model` only when `model` is set.
    pub async fn run(
        &self,
        prompt: &str,
        model: Option<&str>,
        purpose: Purpose,
        cancel: &CancellationToken,
    ) -> Result<CliOutput, CliError> {
        let json = self.json_output().await?;
        let dir = {
            let (program, config_dir) = (self.program.clone(), self.config_dir.clone());
            tokio::task::spawn_blocking(move || workdir(&program, &config_dir, purpose))
                .await
                .map_err(|e| CliError::Io {
                    program: self.program.clone(),
                    message: e.to_string(),
                })??
        };
        let mut cmd = self.command();
        if json {
            cmd.args(["-o", "json"]);
        }
        if let Some(m) = model {
            cmd.args(["--model", m]);
        }
        if purpose == Purpose::Correction {
            cmd.arg("--include-directories").arg(&self.config_dir);
        }
        cmd.current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| self.spawn_error(e))?;
        let pid = child.id();
        let mut stdin = child.stdin.take().expect("piped");
        let prompt = prompt.to_string();
        tokio::spawn(async move {
            // A CLI that exits early closes the pipe; that shows in its exit status.
            let _ = stdin.write_all(prompt.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
        let stderr = tokio::spawn(read_tail(child.stderr.take().expect("piped"), STDERR_TAIL));
        let mut stdout = child.stdout.take().expect("piped");
        let limit = self.max_output;
        let work = async {
            let out = read_capped(&mut stdout, limit).await?;
            let status = child.wait().await.map_err(|e| CliError::Io {
                program: self.program.clone(),
                message: e.to_string(),
            })?;
            Ok::<_, CliError>((out, status))
        };
        let outcome = tokio::select! {
            r = work => r,
            _ = tokio::time::sleep(self.timeout) => Err(CliError::Timeout { secs: self.timeout.as_secs() }),
            _ = cancel.cancelled() => Err(CliError::Cancelled),
        };
        let (out, status) = match outcome {
            Ok(v) => v,
            Err(e) => {
                terminate(&mut child, pid, self.kill_grace).await;
                stderr.abort();
                return Err(e);
            }
        };
        let stderr = stderr.await.unwrap_or_default();
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

    /// Deletes `temp-invalid-output-*.txt` files left by a crash; returns how many.
    pub fn cleanup_orphans(config_dir: &Path) -> std::io::Result<usize> {
        let mut n = 0;
        for entry in std::fs::read_dir(config_dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(TEMP_PREFIX) && name.ends_with(".txt") && entry.file_type()?.is_file() {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => n += 1,
                    Err(e) => tracing::error!("could not delete {}: {e}", entry.path().display()),
                }
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

    /// Writes invalid output to `<config>/temp-invalid-output-<unix-ts>.txt` (a new file).
    pub fn write_temp(&self, content: &str) -> std::io::Result<PathBuf> {
        write_temp(&self.config_dir, content)
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

/// Writes the working directory for `purpose` (blocking).
fn workdir(program: &str, config_dir: &Path, purpose: Purpose) -> Result<PathBuf, CliError> {
    let dir = config_dir.join("gemini-cli").join(purpose.dir());
    let gemini = dir.join(".gemini");
    let io = |e: std::io::Error| CliError::Io {
        program: program.to_string(),
        message: format!("preparing {}: {e}", gemini.display()),
    };

    std::fs::create_dir_all(gemini.join("policies")).map_err(io)?;
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
        "# Written by scholia on every run: deep_search may use only these tools.\n\
         [[rule]]\ntoolName = [{}]\ndecision = \"allow\"\npriority = 900\n\n\
         [[rule]]\ntoolName = [{}]\ndecision = \"deny\"\npriority = 999\n",
        quoted(allowed),
        quoted(DENIED_TOOLS)
    );
    std::fs::write(gemini.join("policies").join("scholia.toml"), policy).map_err(io)?;
    Ok(dir)
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

async fn terminate(child: &mut tokio::process::Child, pid: Option<u32>, grace: Duration) {
    let signal = |sig| {
        if let Some(pid) = pid {
            // The whole group: the CLI is a node process that may have children.
            // SAFETY: kill(2) with a negative pid signals a process group; no memory involved.
            unsafe {
                libc::kill(-(pid as i32), sig);
            }
        }
    };
    signal(libc::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        tracing::warn!("the Gemini CLI ignored SIGTERM for {grace:?}; sending SIGKILL");
        signal(libc::SIGKILL);
        let _ = child.kill().await;
    }
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
    fn workdir_allows_only_web_tools_and_orphans_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let cli = GeminiCli::new("gemini", dir.path(), ChildEnv::default());
        let w = cli.workdir(Purpose::Search).unwrap();
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
        assert!(w.starts_with(dir.path()));

        let a = cli.write_temp("x").unwrap();
        let b = cli.write_temp("y").unwrap();
        assert_ne!(a, b);
        std::fs::write(dir.path().join("keep.txt"), "k").unwrap();
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 2);
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 0);
        assert!(dir.path().join("keep.txt").exists());
        assert!(GeminiCli::cleanup_orphans(&dir.path().join("missing")).is_err());
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("missing")), Some(0));
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("file")), None);
    }
}
