//! What a long-running server hosts around its engine — the vault it serves (opened in the
//! background, kept current), the writer research-note tasks on that vault go through, the
//! background-task runner — started and shut down the same way by the language server and the
//! MCP server. The surface passes in only what is its own: how indexing shows progress, its
//! note writer, how a finished task is announced.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::Dirs;
use crate::{DiskWriter, Engine, Job, NoteWriter};
use scholia_base::{Error, blocking};
use scholia_index::{VaultSession, VaultSlot};

/// How long shutdown waits for the task runner to give its leases back.
const RUNNER_GRACE: Duration = Duration::from_secs(2);

/// A vault whose notes this process writes through its own writer: the language server hosts
/// its vault, so a research-note task on a note open in the editor lands in the buffer.
#[derive(Clone)]
pub struct NoteHost {
    pub session: Arc<VaultSession>,
    /// Must not own what owns the engine (the engine keeps it): hold surface state weakly.
    pub writer: Arc<dyn NoteWriter>,
}

/// The engine keeps the hosted session weakly: the surface that opened it decides when it
/// closes (and with it the index writer's lock).
#[derive(Clone)]
pub(crate) struct HostedNotes {
    session: std::sync::Weak<VaultSession>,
    writer: Arc<dyn NoteWriter>,
}

/// Makes the writer research-note tasks on a freshly opened vault go through.
pub type WriterFor = dyn Fn(&Arc<VaultSession>) -> Arc<dyn NoteWriter> + Send + Sync;

/// The vault, the task runner and their shutdown, for one server process.
pub struct Host {
    vault: Arc<VaultSlot>,
    shutdown: CancellationToken,
    runner: Mutex<Option<JoinHandle<()>>>,
}

impl Default for Host {
    fn default() -> Host {
        Host {
            vault: Arc::new(VaultSlot::default()),
            shutdown: CancellationToken::new(),
            runner: Mutex::new(None),
        }
    }
}

impl Host {
    /// The vault this server serves (opening, ready or failed).
    pub fn vault(&self) -> &Arc<VaultSlot> {
        &self.vault
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Runs background tasks with `engine` while the server lives (leases keep them from
    /// running twice beside another scholia process on the same data directory). `announce`
    /// shows a finished task where desktop notifications are unavailable.
    pub fn run_tasks(&self, engine: Arc<Engine>, announce: Option<scholia_tasks::Announce>) {
        let shutdown = self.shutdown.clone();
        let handle = tokio::spawn(async move {
            if let (Some(announce), Ok(tasks)) = (announce, engine.open_tasks().await) {
                tasks.set_announce(announce);
            }
            if let Err(e) = engine.run_tasks(shutdown).await {
                tracing::warn!("background tasks are not running: {e}");
            }
        });
        if let Some(old) = scholia_base::lock(&self.runner).replace(handle) {
            old.abort();
        }
    }

    /// Opens the vault at `root` and keeps it current until shutdown (returns when it stops, or
    /// with the error that kept it from opening). `start_job` starts the indexing job the
    /// surface shows; once the vault is open, `on_open` runs and research-note tasks on it go
    /// through `writer` (on disk when `None`).
    pub async fn serve_vault(
        &self,
        engine: Option<Arc<Engine>>,
        root: PathBuf,
        dirs: Dirs,
        start_job: &(dyn Fn() -> Job + Send + Sync),
        writer: Option<&WriterFor>,
        on_open: &(dyn Fn(&Arc<VaultSession>) + Send + Sync),
    ) -> Result<(), Error> {
        let opened = |session: &Arc<VaultSession>| {
            on_open(session);
            if let Some(engine) = &engine {
                // Vectors are computed in the background once the vault is indexed.
                engine.meaning_for(session);
                let writer = match writer {
                    Some(make) => make(session),
                    None => Arc::new(DiskWriter),
                };
                engine.host_notes(NoteHost {
                    session: session.clone(),
                    writer,
                });
            }
        };
        self.vault
            .serve(root, dirs, start_job, &opened, self.shutdown.clone())
            .await
    }

    /// Stops everything: the vault's watcher (joined off the runtime) and the task runner,
    /// which gets [`RUNNER_GRACE`] to give its leases back so another process takes the tasks
    /// over at once.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let vault = self.vault.clone();
        scholia_base::spawn_blocking(move || vault.stop()).await;
        let runner = scholia_base::lock(&self.runner).take();
        if let Some(runner) = runner {
            let _ = tokio::time::timeout(RUNNER_GRACE, runner).await;
        }
    }
}

impl Engine {
    /// Makes `host` the vault whose research-note tasks this process writes through
    /// `host.writer` (other vaults' notes are written on disk).
    pub fn host_notes(&self, host: NoteHost) {
        *scholia_base::lock(&self.note_host) = Some(HostedNotes {
            session: Arc::downgrade(&host.session),
            writer: host.writer,
        });
    }

    /// The session and writer for a research-note task's vault: the hosted one, else the
    /// vault opened (and synced when this process holds its index) for this run.
    pub(crate) async fn task_vault(&self, root: &Path) -> Result<(Arc<VaultSession>, Arc<dyn NoteWriter>), Error> {
        let host = scholia_base::lock(&self.note_host).clone();
        if let Some(h) = host
            && let Some(session) = h.session.upgrade()
            && same_dir(session.vault().root(), root)
        {
            return Ok((session, h.writer));
        }
        let (root, dirs) = (root.to_path_buf(), self.settings.dirs.clone());
        let session = blocking(move || VaultSession::open_synced(&root, &dirs, &mut |_| {}).map(|(s, _)| s)).await?;
        Ok((Arc::new(session), Arc::new(DiskWriter)))
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a == b || canon(a) == canon(b)
}
