//! The engine a server runs on: built from the environment, the vault's `.scholia.toml` and the
//! editor's settings; rebuilt when the user trusts the vault or the editor's settings change.

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::{State, root};
use scholia_base::Error;
use scholia_engine::Engine;
use scholia_engine::config::{Dirs, FileConfig};

/// The engine for this server's vault (settings from the environment, the vault's
/// `.scholia.toml` and initializationOptions), sharing the server's job registry. With
/// `trust_vault`, the vault is trusted first (the user said so).
pub(super) async fn build_engine(state: &Arc<State>, trust_vault: bool) -> Result<Arc<Engine>, Error> {
    let root = state.root.get();
    let options = scholia_base::lock(&state.options).clone();
    let (env, jobs) = (state.env.clone(), state.jobs.clone());
    scholia_base::spawn_blocking(move || {
        let options = options?;
        if let (true, Some(root)) = (trust_vault, &root) {
            scholia_engine::config::trust::trust(&Dirs::from_env(&env)?.config, root)?;
        }
        Ok(Arc::new(
            Engine::load(&env, root.as_deref(), options.as_ref())?.with_jobs(jobs),
        ))
    })
    .await
}

/// `workspace/didChangeConfiguration`: new settings (the shape of initializationOptions,
/// alone or under `scholia`) rebuild the engine; a bad one is refused with the field named
/// and the old settings kept. The vault itself changes only with a restart.
pub(super) async fn settings_changed(state: &Arc<State>, settings: serde_json::Value) -> Option<root::Said> {
    let settings = match settings.get("scholia") {
        Some(s) => s.clone(),
        None => settings,
    };
    // Editors send `null` or `{}` to say "re-read your settings": there is nothing new.
    if settings.is_null() || settings.as_object().is_some_and(|o| o.is_empty()) {
        return None;
    }
    let new = match FileConfig::from_json(&settings) {
        Ok(c) => c,
        Err(e) => return Some(root::Said::Warning(format!("scholia: settings not applied: {e}"))),
    };
    let old = std::mem::replace(&mut *scholia_base::lock(&state.options), Ok(Some(new.clone())));
    match build_engine(state, false).await {
        Ok(engine) => {
            state.engine.send_replace(Some(Ok(engine)));
            let restart = new.vault().is_some_and(|v| Some(PathBuf::from(v)) != state.root.get());
            Some(root::Said::Info(match restart {
                true => "scholia: settings applied; a new `vault` takes effect when the server restarts".into(),
                false => "scholia: settings applied".into(),
            }))
        }
        Err(e) => {
            *scholia_base::lock(&state.options) = old;
            Some(root::Said::Warning(format!("scholia: settings not applied: {e}")))
        }
    }
}

const TRUST: &str = "Trust this vault";

/// Asks once whether to trust the vault whose settings were ignored; never trusts silently.
pub(super) async fn offer_trust(
    client: Client,
    state: Arc<State>,
    untrusted: scholia_engine::config::trust::Untrusted,
) {
    let actions = [TRUST, "Not now"]
        .map(|title| MessageActionItem {
            title: title.into(),
            properties: Default::default(),
        })
        .to_vec();
    let answer = client
        .show_message_request(MessageType::WARNING, format!("scholia: {untrusted}"), Some(actions))
        .await;
    if !matches!(&answer, Ok(Some(a)) if a.title == TRUST) {
        tracing::info!("the vault stays untrusted");
        return;
    }
    match build_engine(&state, true).await {
        Ok(engine) => {
            state.engine.send_replace(Some(Ok(engine)));
            client
                .show_message(
                    MessageType::INFO,
                    format!("scholia: trusted {}; its settings are in use", untrusted.root.display()),
                )
                .await;
        }
        Err(e) => client.show_message(MessageType::ERROR, format!("scholia: {e}")).await,
    }
}
