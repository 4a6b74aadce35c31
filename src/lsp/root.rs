//! The vault this server serves: the `vault` setting, else what `scholia_vault::root` finds
//! from the editor's root and the first note opened — so an editor without a root, or one that
//! made a note's sub-folder or a code repository its root, still serves the right vault. When
//! there is none, the user is told why and how to set one.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use scholia_vault::root::{Found, NoVault};
use tokio::sync::watch;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{InitializeParams, MessageType};

#[derive(Default)]
pub(crate) struct Root {
    /// The vault's canonical root once decided.
    decided: watch::Sender<Option<PathBuf>>,
    /// The editor's root, when it gave one.
    client: OnceLock<Option<PathBuf>>,
    home: OnceLock<Option<PathBuf>>,
    /// Why there is no vault yet, as the user is told.
    why_none: Mutex<Option<String>>,
}

/// A line to show the user about the vault chosen (or not).
pub(crate) enum Said {
    Info(String),
    Warning(String),
}

impl Root {
    pub(crate) fn get(&self) -> Option<PathBuf> {
        self.decided.borrow().clone()
    }

    /// The root once decided; gives up after `within`.
    pub(crate) async fn wait(&self, within: Option<Duration>) -> Option<PathBuf> {
        let mut rx = self.decided.subscribe();
        let decided = async { rx.wait_for(Option::is_some).await.ok().and_then(|r| r.clone()) };
        match within {
            Some(d) => tokio::time::timeout(d, decided).await.ok().flatten(),
            None => decided.await,
        }
    }

    /// What a request that needs the vault answers while there is none.
    pub(crate) fn missing(&self) -> String {
        scholia_base::lock(&self.why_none)
            .clone()
            .unwrap_or_else(|| NoVault::NeedNote.to_string())
    }

    /// At `initialize`: the `vault` setting, else the editor's root when it decides the vault.
    pub(crate) async fn init(
        &self,
        setting: Option<PathBuf>,
        client: Option<PathBuf>,
        home: Option<PathBuf>,
    ) -> Option<Said> {
        let canon = |p: PathBuf| p.canonicalize().unwrap_or(p);
        let (setting, client, home) =
            scholia_base::spawn_blocking(move || (setting.map(canon), client.map(canon), home.map(canon))).await;
        let _ = self.home.set(home);
        let _ = self.client.set(client);
        if let Some(r) = setting {
            self.decided.send_replace(Some(r));
            return None;
        }
        self.find(None).await
    }

    /// A document was opened: decides the vault from it when nothing did yet.
    pub(crate) async fn note_opened(&self, abs: &Path) -> Option<Said> {
        if self.get().is_some() || !scholia_vault::paths::has_note_extension(abs) {
            return None;
        }
        self.find(Some(abs.to_path_buf())).await
    }

    async fn find(&self, note: Option<PathBuf>) -> Option<Said> {
        let client = self.client.get().cloned().flatten();
        let home = self.home.get().cloned().flatten();
        let (c, h) = (client.clone(), home);
        let found = scholia_base::spawn_blocking(move || {
            scholia_vault::root::find(c.as_deref(), note.as_deref(), h.as_deref())
        })
        .await;
        match found {
            Ok(found) => {
                let said = said(&found, client.as_deref());
                tracing::info!("vault: {}", found.root().display());
                if self
                    .decided
                    .send_if_modified(|d| d.is_none() && d.replace(found.root().to_path_buf()).is_none())
                {
                    *scholia_base::lock(&self.why_none) = None;
                    return said;
                }
                None
            }
            Err(NoVault::NeedNote) => None,
            Err(e) => {
                let line = format!("scholia: {e}");
                let mut why = scholia_base::lock(&self.why_none);
                // Said once per reason, not on every note opened.
                if why.as_deref() == Some(e.to_string().as_str()) {
                    return None;
                }
                *why = Some(e.to_string());
                Some(Said::Warning(line))
            }
        }
    }
}

/// What the user is told about a vault found without a marker: which folder, and how to
/// choose another, when it sits in a code project (its docs must not silently become a vault)
/// or differs from the folder the editor chose. A plain folder of notes opened without a root
/// is what the user meant: nothing to say.
fn said(found: &Found, client: Option<&Path>) -> Option<Said> {
    let Found::Unmarked { root, project } = found else {
        return None;
    };
    let inside = match (project, client) {
        (Some(p), _) => format!(" (inside the code project {}, which is not a vault)", p.display()),
        (None, Some(c)) if c != root => format!(" (not {}, the editor's folder)", c.display()),
        _ => return None,
    };
    Some(Said::Info(format!(
        "scholia: serving {} as the vault{inside}; no .obsidian or .scholia.toml marks one. To choose another, create .scholia.toml in its folder or set the `vault` setting",
        root.display()
    )))
}

/// The editor's root: the first workspace folder, else the root URI.
#[allow(deprecated)]
pub(crate) fn client_root(params: &InitializeParams) -> Option<PathBuf> {
    params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .and_then(|f| f.uri.to_file_path().map(|p| p.into_owned()))
        .or_else(|| {
            params
                .root_uri
                .as_ref()
                .and_then(|u| u.to_file_path().map(|p| p.into_owned()))
        })
        .or_else(|| params.root_path.as_ref().map(PathBuf::from))
}

/// Shows what the user is to know about the vault chosen (or why there is none).
pub(crate) async fn tell(client: &Client, said: Said) {
    let (kind, line) = match said {
        Said::Info(l) => (MessageType::INFO, l),
        Said::Warning(l) => (MessageType::WARNING, l),
    };
    tracing::info!("{line}");
    client.show_message(kind, line).await;
}
