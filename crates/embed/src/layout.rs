//! What a sentence-transformers directory says besides its weights and tokenizer: the modules
//! a text goes through (`modules.json`), the pooling (`1_Pooling/config.json`), how many tokens
//! a text is read to (`sentence_bert_config.json`) and the prompts
//! (`config_sentence_transformers.json`). A directory asking for what this reader does not do
//! (a `Dense` projection, two pooling modes at once) is refused by name: its vectors would be
//! another space than the model's, silently.

use std::path::Path;

use serde_json::Value;

use crate::PromptSettings;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pooling {
    Mean,
    Cls,
    Max,
}

/// The modules this reader runs: the encoder, its pooling, and normalisation (vectors are made
/// unit length in any case).
const MODULES: [&str; 3] = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
];

fn json(dir: &Path, file: &str) -> Result<Option<Value>, String> {
    match std::fs::read_to_string(dir.join(file)) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{file}: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{file}: {e}")),
    }
}

/// `Err` names a module of `modules.json` this reader does not run.
pub(crate) fn check_modules(dir: &Path) -> Result<(), String> {
    let Some(modules) = json(dir, "modules.json")? else {
        return Ok(());
    };
    for m in modules.as_array().ok_or("modules.json: not a list of modules")? {
        let kind = m["type"].as_str().unwrap_or("");
        if !MODULES.contains(&kind) {
            return Err(format!(
                "modules.json: the module `{}` ({}) is not supported; supported: Transformer, Pooling, Normalize",
                m["path"].as_str().unwrap_or(""),
                kind.rsplit('.').next().unwrap_or(kind)
            ));
        }
    }
    Ok(())
}

/// The pooling `1_Pooling/config.json` asks for: exactly one mode this reader knows.
pub(crate) fn pooling(dir: &Path) -> Result<Pooling, String> {
    const FILE: &str = "1_Pooling/config.json";
    let v = json(dir, FILE)?.ok_or_else(|| format!("{FILE}: not found"))?;
    let mut on: Vec<&str> = v
        .as_object()
        .ok_or_else(|| format!("{FILE}: not an object"))?
        .iter()
        .filter(|(k, on)| k.starts_with("pooling_mode_") && **on == true)
        .map(|(k, _)| k.as_str())
        .collect();
    on.sort_unstable();
    match on.as_slice() {
        ["pooling_mode_mean_tokens"] => Ok(Pooling::Mean),
        ["pooling_mode_cls_token"] => Ok(Pooling::Cls),
        ["pooling_mode_max_tokens"] => Ok(Pooling::Max),
        [] => Err(format!(
            "{FILE}: no pooling mode; supported: mean, cls, max (one of them)"
        )),
        modes => Err(format!(
            "{FILE}: {} is not supported; supported: one of mean, cls, max",
            modes.join(" + ")
        )),
    }
}

/// How many tokens a text is read to: `max_seq_length`, else 256.
pub(crate) fn max_seq_length(dir: &Path) -> Result<usize, String> {
    Ok(json(dir, "sentence_bert_config.json")?
        .and_then(|v| v["max_seq_length"].as_u64())
        .map_or(256, |n| n as usize))
}

/// The prompts put before a text as sentence-transformers' `encode_query` and
/// `encode_document` put them: `query` for a question; `document`, `passage` or `corpus` (the
/// first there) for a note; where the one wanted is not there, the `default_prompt_name`'s;
/// else none (an empty prompt is none).
pub(crate) fn prompts(dir: &Path) -> Result<PromptSettings, String> {
    const FILE: &str = "config_sentence_transformers.json";
    let Some(v) = json(dir, FILE)? else {
        return Ok(PromptSettings::default());
    };
    let prompts = &v["prompts"];
    if !(prompts.is_object() || prompts.is_null()) {
        return Err(format!("{FILE}: `prompts` is not a map of names to texts"));
    }
    let named = |name: &str| prompts[name].as_str().filter(|p| !p.is_empty()).map(str::to_string);
    let default = v["default_prompt_name"].as_str().and_then(named);
    Ok(PromptSettings {
        query: named("query").or(default.clone()),
        document: ["document", "passage", "corpus"]
            .iter()
            .find_map(|n| named(n))
            .or(default),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = d.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn modules_and_pooling_this_reader_does_not_run_are_named() {
        let st = |kinds: &[&str]| {
            let list: Vec<Value> = kinds
                .iter()
                .enumerate()
                .map(|(i, k)| serde_json::json!({"idx": i, "name": i.to_string(), "path": format!("{i}_{k}"), "type": format!("sentence_transformers.models.{k}")}))
                .collect();
            dir(&[("modules.json", &serde_json::to_string(&list).unwrap())])
        };
        assert_eq!(
            check_modules(st(&["Transformer", "Pooling", "Normalize"]).path()),
            Ok(())
        );
        assert_eq!(check_modules(dir(&[]).path()), Ok(()));
        // LaBSE, distiluse: a Dense projection after the pooling.
        let e = check_modules(st(&["Transformer", "Pooling", "Dense", "Normalize"]).path()).unwrap_err();
        assert!(e.contains("`2_Dense` (Dense) is not supported"), "{e}");
        assert!(check_modules(dir(&[("modules.json", "{}")]).path()).is_err());

        let pool = |json: &str| pooling(dir(&[("1_Pooling/config.json", json)]).path());
        assert_eq!(
            pool(
                r#"{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}"#
            ),
            Ok(Pooling::Mean)
        );
        assert_eq!(pool(r#"{"pooling_mode_cls_token": true}"#), Ok(Pooling::Cls));
        assert_eq!(pool(r#"{"pooling_mode_max_tokens": true}"#), Ok(Pooling::Max));
        let two = pool(r#"{"pooling_mode_mean_tokens": true, "pooling_mode_mean_sqrt_len_tokens": true}"#).unwrap_err();
        assert!(
            two.contains("pooling_mode_mean_sqrt_len_tokens + pooling_mode_mean_tokens"),
            "{two}"
        );
        assert!(
            pool(r#"{"pooling_mode_lasttoken": true}"#)
                .unwrap_err()
                .contains("not supported")
        );
        assert!(pool(r#"{}"#).unwrap_err().contains("no pooling mode"));
        assert!(pooling(dir(&[]).path()).unwrap_err().contains("not found"));
        assert_eq!(
            max_seq_length(dir(&[("sentence_bert_config.json", r#"{"max_seq_length": 128}"#)]).path()),
            Ok(128)
        );
        assert_eq!(max_seq_length(dir(&[]).path()), Ok(256));
    }
}
