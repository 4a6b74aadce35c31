//! Settings: precedence, validation, trust.

use std::collections::HashMap;
use std::path::Path;

use super::settings::{FIREWORKS_URL, OPENAI_DEFAULT_MODEL};
use super::*;
use scholia_providers::llm::{Price, Secret};

#[test]
fn every_listed_key_is_a_real_key() {
    for (key, what) in FileConfig::KEYS {
        let value = if what.starts_with("table") {
            serde_json::json!({"input": 1.0, "output": 2.0})
        } else if what.starts_with("integer") {
            serde_json::json!(1)
        } else {
            serde_json::json!("x")
        };
        let mut json = value;
        for part in key.rsplit('.') {
            json = serde_json::json!({ part: json });
        }
        assert!(FileConfig::from_json(&json).is_ok(), "{key}: {json}");
    }
    assert!(FileConfig::from_json(&serde_json::json!({"llm": {"modle": "x"}})).is_err());
}

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    let mut m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    m.insert("HOME".into(), "/home/u".into());
    m
}

fn load(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    Settings::load(&env(pairs), None, None)
}

#[test]
fn no_llm_means_offline() {
    let s = load(&[]).unwrap();
    assert!(s.llm.is_none());
    assert_eq!(
        s.search,
        SearchProvider::DuckDuckGo {
            url: "https://html.duckduckgo.com".into()
        }
    );
    assert_eq!(s.deep_search_max_iterations, 5);
}

#[test]
fn llm_sources() {
    let s = load(&[
        ("SCHOLIA_LLM_BASE_URL", "http://localhost:11434/v1/"),
        ("SCHOLIA_LLM_MODEL", "qwen3"),
    ])
    .unwrap();
    let llm = s.llm.unwrap();
    assert_eq!(
        (llm.base_url.as_str(), llm.model.as_str(), llm.api_key),
        ("http://localhost:11434/v1", "qwen3", None)
    );
    let s = load(&[
        ("FIREWORKS_API_KEY", "fw"),
        ("FIREWORKS_MODEL", "accounts/fireworks/models/x"),
    ])
    .unwrap();
    let llm = s.llm.unwrap();
    assert_eq!(llm.base_url, FIREWORKS_URL);
    assert_eq!(llm.api_key, Some(Secret::new("fw")));
    let s = load(&[("OPENAI_API_KEY", "sk"), ("RESEARCH_MODEL", "gpt-4.1")]).unwrap();
    assert_eq!(s.llm.unwrap().model, "gpt-4.1");
    assert_eq!(
        load(&[("OPENAI_API_KEY", "sk")]).unwrap().llm.unwrap().model,
        OPENAI_DEFAULT_MODEL
    );
}

#[test]
fn malformed_settings_name_the_field() {
    let err = |pairs: &[(&str, &str)]| load(pairs).unwrap_err().to_string();
    assert_eq!(
        err(&[("SCHOLIA_LLM_BASE_URL", "ftp://x"), ("SCHOLIA_LLM_MODEL", "m")]),
        "SCHOLIA_LLM_BASE_URL: `ftp://x` is not valid; valid: an http(s) URL such as http://localhost:11434/v1"
    );
    assert_eq!(
        err(&[("SCHOLIA_LLM_BASE_URL", "http://h/v1")]),
        "SCHOLIA_LLM_MODEL: not set; expected the name of a model served at http://h/v1"
    );
    assert!(err(&[("SCHOLIA_LLM_MODEL", "m")]).starts_with("SCHOLIA_LLM_BASE_URL: "));
    assert_eq!(
        err(&[("SCHOLIA_SEARCH", "bing")]),
        "SCHOLIA_SEARCH: `bing` is not valid; valid: duckduckgo, searxng:URL"
    );
    assert_eq!(
        err(&[("DEEP_SEARCH_MAX_ITERATIONS", "abc")]),
        "DEEP_SEARCH_MAX_ITERATIONS: `abc` is not valid; valid: an integer up to 50; below 2 runs 2 rounds (default 5)"
    );
    assert_eq!(
        err(&[("SCHOLIA_ALLOW_PRIVATE_HOSTS", "yes")]),
        "SCHOLIA_ALLOW_PRIVATE_HOSTS: `yes` is not valid; valid: 1 or 0"
    );
    for bad in ["--yolo", "-m", "two words", "x\ny"] {
        assert!(
            err(&[("GEMINI_MODEL", bad)]).starts_with("GEMINI_MODEL: "),
            "{bad:?} is refused"
        );
    }
    assert!(err(&[("GEMINI_CORRECTION_MODEL", "--include-directories=/")]).starts_with("GEMINI_CORRECTION_MODEL: "));
}

#[test]
fn iterations_and_searxng() {
    assert_eq!(
        load(&[("DEEP_SEARCH_MAX_ITERATIONS", "1")])
            .unwrap()
            .deep_search_max_iterations,
        2
    );
    assert_eq!(
        load(&[("DEEP_SEARCH_MAX_ITERATIONS", "7")])
            .unwrap()
            .deep_search_max_iterations,
        7
    );
    let s = load(&[("SCHOLIA_SEARCH", "searxng:https://searx.example.org/")]).unwrap();
    assert_eq!(
        s.search,
        SearchProvider::Searxng {
            url: "https://searx.example.org".into()
        }
    );
}

/// The environment with a config directory of its own, and `vault` trusted in it.
fn trusting(vault: &Path, config: &Path, pairs: &[(&str, &str)]) -> HashMap<String, String> {
    crate::config::trust::trust(config, vault).unwrap();
    let mut e = env(pairs);
    e.insert("SCHOLIA_CONFIG_DIR".into(), config.display().to_string());
    e
}

#[test]
fn an_untrusted_vault_cannot_choose_programs_endpoints_or_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "[llm]\nbase_url = \"http://evil/v1\"\nmodel = \"m\"\napi_key_env = \"GITHUB_TOKEN\"\nmax_concurrency = 2\n\
         [search]\nprovider = \"searxng\"\nurl = \"http://evil\"\n\
         [deep_search]\ngemini_cli = \"/tmp/evil\"\nmodel = \"x\"\ncorrection_model = \"y\"\nmax_iterations = \"3\"\n",
    )
    .unwrap();
    let mut e = env(&[("GITHUB_TOKEN", "ghp_secret")]);
    e.insert("SCHOLIA_CONFIG_DIR".into(), config.path().display().to_string());
    let s = Settings::load(&e, Some(dir.path()), None).unwrap();
    assert!(s.llm.is_none(), "no endpoint and no key from the vault");
    assert!(matches!(s.search, SearchProvider::DuckDuckGo { .. }));
    assert_eq!(s.gemini_cli.program, "gemini");
    assert_eq!(
        (s.gemini_cli.model.as_deref(), s.gemini_cli.correction_model.as_deref()),
        (None, None)
    );
    assert_eq!(
        s.deep_search_max_iterations, 5,
        "rounds cost money: not from an untrusted vault"
    );
    let u = s.untrusted.unwrap();
    assert_eq!(u.keys.len(), 10);
    let shown = u.to_string();
    assert!(
        shown.contains("llm.base_url") && shown.contains("scholia trust"),
        "{shown}"
    );
    // Trusted: honoured. Edited afterwards: ignored again.
    crate::config::trust::trust(config.path(), dir.path()).unwrap();
    let s = Settings::load(&e, Some(dir.path()), None).unwrap();
    assert!(s.untrusted.is_none());
    assert_eq!(s.llm.unwrap().base_url, "http://evil/v1");
    assert_eq!(s.gemini_cli.program, "/tmp/evil");
    let mut text = std::fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap();
    text.push_str("# edited\n");
    std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
    let s = Settings::load(&e, Some(dir.path()), None).unwrap();
    assert!(s.untrusted.is_some() && s.llm.is_none());
}

#[test]
fn an_untrusted_vault_cannot_spend_the_users_money() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "[llm]\nmodel = \"openai/o1-pro\"\nmax_concurrency = 64\ncontext_tokens = 10000000\ntimeout_secs = 90\n\
         [sonar]\nmodel = \"sonar-deep-research\"\n[deep_search]\nmax_iterations = \"50\"\n",
    )
    .unwrap();
    // The user's key, and no model named: the vault's file would pick it.
    let mut e = env(&[("OPENAI_API_KEY", "sk-user"), ("OPENROUTER_API_KEY", "sk-or")]);
    e.insert("SCHOLIA_CONFIG_DIR".into(), config.path().display().to_string());
    let s = Settings::load(&e, Some(dir.path()), None).unwrap();
    let llm = s.llm.clone().unwrap();
    assert_eq!(llm.model, "gpt-4o-mini");
    assert_eq!(
        llm.max_concurrency,
        Settings::load(&e, None, None).unwrap().llm.unwrap().max_concurrency
    );
    assert_eq!(llm.context_tokens, None);
    assert_eq!(llm.timeout, std::time::Duration::from_secs(90), "tuning is honoured");
    assert_eq!(s.sonar_model, None);
    assert_eq!(s.deep_search_max_iterations, 5);
    let keys = s.untrusted.unwrap().keys;
    assert_eq!(
        keys,
        [
            "llm.model",
            "llm.max_concurrency",
            "llm.context_tokens",
            "sonar.model",
            "deep_search.max_iterations"
        ]
    );
    // Trusted, and an integer is an integer.
    std::fs::write(dir.path().join(CONFIG_FILE), "[deep_search]\nmax_iterations = 7\n").unwrap();
    crate::config::trust::trust(config.path(), dir.path()).unwrap();
    assert_eq!(
        Settings::load(&e, Some(dir.path()), None)
            .unwrap()
            .deep_search_max_iterations,
        7
    );
}

#[test]
fn file_and_precedence() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "[llm]\nbase_url = \"http://file/v1\"\nmodel = \"file-model\"\nmax_concurrency = 2\n[llm.price]\ninput = 0.5\noutput = 1.5\n",
    )
    .unwrap();
    let env = |pairs: &[(&str, &str)]| trusting(dir.path(), config.path(), pairs);
    let s = Settings::load(&env(&[]), Some(dir.path()), None).unwrap();
    let llm = s.llm.unwrap();
    assert_eq!(
        (llm.base_url.as_str(), llm.model.as_str(), llm.max_concurrency),
        ("http://file/v1", "file-model", 2)
    );
    assert_eq!(
        llm.price,
        Some(Price {
            input: 0.5,
            output: 1.5
        })
    );
    // The environment beats the file; initializationOptions beat both.
    let s = Settings::load(&env(&[("SCHOLIA_LLM_MODEL", "env-model")]), Some(dir.path()), None).unwrap();
    assert_eq!(s.llm.unwrap().model, "env-model");
    let over = FileConfig::from_json(&serde_json::json!({"llm": {"model": "lsp-model"}})).unwrap();
    let s = Settings::load(
        &env(&[("SCHOLIA_LLM_MODEL", "env-model")]),
        Some(dir.path()),
        Some(&over),
    )
    .unwrap();
    assert_eq!(s.llm.unwrap().model, "lsp-model");

    std::fs::write(dir.path().join(CONFIG_FILE), "[llm]\nmodle = \"typo\"\n").unwrap();
    let e = Settings::load(&env(&[]), Some(dir.path()), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(".scholia.toml: line 2: unknown field `modle`, expected one of"),
        "{e}"
    );
}

/// The example in the README is a working configuration, and documents every variable.
#[test]
fn readme_is_current() {
    let readme = include_str!("../../../../README.md");
    // The configuration example is the README's TOML block that sets `[llm]` (the team
    // section's tokens file is TOML too).
    let toml = readme
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("[llm]"))
        .expect("a ```toml block with [llm] in the README");
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(CONFIG_FILE), toml).unwrap();
    let env = trusting(dir.path(), config.path(), &[("MY_KEY_VAR", "k")]);
    let s = Settings::load(&env, Some(dir.path()), None).unwrap();
    assert_eq!(s.llm.unwrap().model, "qwen2.5:7b");
    assert_eq!(s.gemini_cli.correction_model.as_deref(), Some("gemini-2.5-flash"));
    for (name, _) in ENV_VARS {
        assert!(readme.contains(&format!("`{name}`")), "README lacks {name}");
    }
}

/// Issue 41, point 14: every setting is checked when read, used or not.
#[test]
fn settings_are_checked_when_read() {
    let check = |toml: &str, expected: &str| {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), toml).unwrap();
        let e = trusting(dir.path(), config.path(), &[]);
        let err = Settings::load(&e, Some(dir.path()), None)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{toml}: {err}");
    };
    check("[llm]\ntimeout_secs = 1\n", "llm.timeout_secs: `1` is not valid");
    check("[llm]\nmax_concurrency = 0\n", "llm.max_concurrency");
    check(
        "[sonar]\nmodel = \"gpt-5\"\n",
        "sonar.model: `gpt-5` is not valid; valid: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research",
    );
}
