//! The private working directory of a run, its temp files, their clean-up, and the child's process group.

use super::*;

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
pub(super) const RUNS_DIR: &str = "gemini-cli";

pub(super) fn is_temp_file(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(".txt")
}

/// `run-<pid>-<n>` → pid.
pub(super) fn run_dir_pid(name: &str) -> Option<i32> {
    name.strip_prefix("run-")?.split('-').next()?.parse().ok()
}

pub(super) fn process_alive(pid: i32) -> bool {
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
    pub(super) fn create(program: &str, config_dir: &Path, purpose: Purpose) -> Result<RunDir, CliError> {
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
        scholia_base::spawn_blocking(move || write_temp(&dir, &content)).await
    }
}

impl RunDir {
    /// Removes the directory (off the runtime).
    pub async fn remove(mut self) {
        let path = std::mem::take(&mut self.path);
        scholia_base::spawn_blocking(move || remove_run_dir(&path)).await;
    }
}

pub(super) fn remove_run_dir(path: &Path) {
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
pub(super) struct ProcessGroup(pub(super) Option<u32>);

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
    pub(super) async fn terminate(self, child: &mut tokio::process::Child, grace: Duration) {
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
