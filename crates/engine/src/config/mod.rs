//! Settings: which providers, limits and prompts a process uses, and whether a vault's own
//! `.scholia.toml` is trusted to choose them.
//!
//! Precedence, for every setting alike (`layers.rs`): LSP initializationOptions / CLI flags >
//! environment > `.scholia.toml` in the vault root > defaults. Code map: `settings.rs` the
//! [`Settings`] and how each is found, `file.rs` the file's shape, `env_vars.rs` every
//! variable read, `embeddings.rs` where vectors come from, `trust.rs` trusted vaults. Directories are `scholia_base::Dirs`.

mod embeddings;
mod env_vars;
mod file;
mod layers;
mod settings;
pub mod trust;

pub use embeddings::EmbedConfig;
pub use env_vars::ENV_VARS;
pub use file::CONFIG_FILE;
pub use file::FileConfig;
pub use scholia_base::{Dirs, DirsError, Env, ProcessEnv};
pub use scholia_research::deep_search::DeepSearchBackend;
pub use settings::{GeminiCli, OPENROUTER_URL, SearchProvider, Settings};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Dirs(#[from] DirsError),
    #[error("{}", invalid(field, value, valid))]
    Invalid {
        field: String,
        value: String,
        valid: String,
    },
    #[error("{file}: {}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    File {
        file: String,
        message: String,
        line: Option<usize>,
    },
}

fn invalid(field: &str, value: &str, valid: &str) -> String {
    if value.is_empty() {
        format!("{field}: not set; expected {valid}")
    } else {
        format!("{field}: `{value}` is not valid; valid: {valid}")
    }
}

impl scholia_base::Coded for ConfigError {
    fn code(&self) -> &'static str {
        "INVALID_CONFIG"
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        scholia_base::ErrorKind::InvalidInput
    }
}

#[cfg(test)]
mod tests;
