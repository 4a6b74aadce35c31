//! Meaning as vectors. The [`Embedder`] port (what the index and the pipelines ask of a model:
//! texts in, unit vectors out), a sentence-transformers BERT model run in this process on the
//! CPU ([`local::LocalModel`]: WordPiece or SentencePiece tokenizer, safetensors weights, the pooling and
//! normalisation the model directory declares), and the int8 form vectors are kept in.
//!
//! Depends on `base` only. An endpoint (OpenAI-compatible `/v1/embeddings`) is an adapter in
//! `providers`; the engine chooses which one the index gets.

mod added;
mod bert;
mod charsmap;
mod layout;
pub mod local;
mod safetensors;
mod spm;
pub mod tokenizer;
mod unigram;
mod vector;
pub mod wordpiece;

pub use vector::{Quantized, cosine, dot_i8, normalize};

/// The text whose vector tells one model from another under the same name
/// ([`Embedder::probe`]): an Ollama tag pulled again, a directory whose model was replaced.
pub const PROBE: &str = "dimensions";

/// Prompts the user's settings put before questions and before the texts compared with them
/// (`embeddings.query_prompt`, `embeddings.document_prompt`): for a model behind an endpoint that
/// wants them (nomic-embed-text's `search_query: ` and `search_document: `), or in place of
/// those a local model declares. `None`: the model's own (an endpoint's: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSettings {
    pub query: Option<String>,
    pub document: Option<String>,
}

/// Why texts could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model `{path}`: {message}")]
    Model { path: String, message: String },
    #[error("embeddings endpoint: {0}")]
    Endpoint(String),
    #[error("embedding stopped: {0}")]
    Stopped(String),
}

impl scholia_base::Coded for EmbedError {
    fn code(&self) -> &'static str {
        match self {
            EmbedError::Model { .. } => "EMBED_MODEL",
            EmbedError::Endpoint(_) => "EMBED_ENDPOINT",
            EmbedError::Stopped(_) => "CANCELLED",
        }
    }
    fn kind(&self) -> scholia_base::ErrorKind {
        match self {
            EmbedError::Model { .. } => scholia_base::ErrorKind::InvalidInput,
            EmbedError::Endpoint(_) => scholia_base::ErrorKind::Upstream,
            EmbedError::Stopped(_) => scholia_base::ErrorKind::Cancelled,
        }
    }
}

/// Turns texts into unit vectors of one model. Blocking; called off the async runtime.
pub trait Embedder: Send + Sync {
    /// What produced the vectors (vectors of another model are recomputed).
    fn model_id(&self) -> String;
    fn dims(&self) -> usize;
    /// The most tokens a text is read to (longer texts are cut); chunks are made to fit it.
    fn max_tokens(&self) -> usize;
    /// A text's length in the model's tokens, as [`Embedder::embed`] would count it (an
    /// estimate for endpoints).
    fn count_tokens(&self, text: &str) -> usize;
    /// One unit vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// [`Embedder::embed`] for texts someone is waiting on (a question, the sentences of a
    /// note being researched): an adapter that can be slow or gone (an endpoint) gives up
    /// within seconds, and the caller goes on by words.
    fn embed_now(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }
    /// The vector of a question someone waits on (a search, a research topic), as the model
    /// reads questions: a model may declare a prompt for them ("query: "), and one for the
    /// texts it is compared with, which [`Embedder::embed`] and [`Embedder::embed_now`] use.
    /// By default, as any text.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed_now(&[query])?.pop().unwrap_or_default())
    }
    /// The prompts it puts before questions and before notes, for status lines (`None`:
    /// none).
    fn prompts(&self) -> PromptSettings {
        PromptSettings::default()
    }
    /// Its vector of [`PROBE`], computed once: vectors stored by a model that answered
    /// otherwise are another model's, whatever its name (`None`: not known).
    fn probe(&self) -> Option<Vec<f32>> {
        None
    }
    /// [`Embedder::embed`] that gives up once `stop` says so ([`EmbedError::Stopped`]):
    /// Ctrl-C under `scholia index`, a server shutting down. An adapter that waits on a
    /// network looks at `stop` while it waits, the local model between texts; by default,
    /// before it starts.
    fn embed_until(&self, texts: &[&str], stop: &dyn Fn() -> bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        if stop() {
            return Err(EmbedError::Stopped("before the texts were embedded".into()));
        }
        self.embed(texts)
    }
}
