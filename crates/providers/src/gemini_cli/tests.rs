//! Tests of the Gemini CLI adapter.

use super::*;

mod cases {
    use super::*;

    #[test]
    fn the_child_environment_is_an_allowlist() {
        let env: std::collections::HashMap<String, String> = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("GEMINI_API_KEY", "g"),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("LC_ALL", "C"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("OPENAI_API_KEY", "sk"),
            ("OPENROUTER_API_KEY", "or"),
            ("FIREWORKS_API_KEY", "fw"),
            ("SCHOLIA_LLM_API_KEY", "k"),
            ("GITHUB_TOKEN", "t"),
            ("LD_PRELOAD", "/evil.so"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let child = ChildEnv::allowlisted(&env);
        let names: Vec<&str> = child.names().collect();
        assert_eq!(
            names,
            [
                "GEMINI_API_KEY",
                "GOOGLE_CLOUD_PROJECT",
                "HOME",
                "HTTPS_PROXY",
                "LC_ALL",
                "PATH"
            ]
        );
        let shown = format!("{child:?}");
        assert!(
            shown.contains("GEMINI_API_KEY") && !shown.contains("/bin"),
            "values never print: {shown}"
        );
    }

    #[test]
    fn versions() {
        let check = |text: &str, expected: Option<(u64, u64, u64)>| assert_eq!(parse_version(text), expected, "{text}");
        check("0.8.2\n", Some((0, 8, 2)));
        check("gemini-cli v0.12.0", Some((0, 12, 0)));
        check("0.5.5", Some((0, 5, 5)));
        check("nothing", None);
        assert!((0, 6, 0) >= JSON_SINCE && (0, 5, 9) < JSON_SINCE && (1, 0, 0) >= JSON_SINCE);
    }

    #[test]
    fn json_output_sums_tokens_over_models() {
        let out = parse_json_output(
            r#"Loaded cached credentials.
{"response": "hi", "stats": {"models": {
  "gemini-2.5-flash": {"tokens": {"prompt": 10, "candidates": 2, "total": 12, "cached": 0, "thoughts": 1, "tool": 0}},
  "gemini-2.5-pro": {"tokens": {"prompt": 100, "candidates": 20, "total": 130, "cached": 5, "thoughts": 10, "tool": 3}}
}}}"#,
        )
        .unwrap();
        assert_eq!(out.response, "hi");
        assert_eq!(out.models, ["gemini-2.5-pro", "gemini-2.5-flash"]);
        assert_eq!(out.tokens.total, 142);
        assert_eq!(out.tokens.prompt, 110);
        assert_eq!(out.tokens.thoughts, 11);
        let e = parse_json_output(r#"{"response": null, "error": {"type": "ApiError", "message": "quota exceeded"}}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "the Gemini CLI reported an error: quota exceeded");
        assert_eq!(parse_json_output("plain prose").unwrap().response, "plain prose");
    }

    #[test]
    fn exit_codes_and_codes() {
        assert!(exit_hint(41).contains("authentication"));
        assert!(exit_hint(53).contains("turn limit"));
        assert_eq!(CliError::NotFound { program: "g".into() }.code(), "CLI_NOT_FOUND");
        assert!(
            CliError::NotFound { program: "g".into() }
                .to_string()
                .contains(INSTALL_HINT)
        );
    }

    #[test]
    fn run_dirs_are_private_and_only_dead_processes_are_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create("gemini", dir.path(), Purpose::Search).unwrap();
        let w = run.path().to_path_buf();
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(w.join(".gemini/settings.json")).unwrap()).unwrap();
        assert_eq!(
            settings["tools"]["core"],
            serde_json::json!(["google_web_search", "web_fetch"])
        );
        let policy: toml::Value =
            toml::from_str(&std::fs::read_to_string(w.join(".gemini/policies/scholia.toml")).unwrap()).unwrap();
        let rules = policy["rule"].as_array().unwrap();
        assert_eq!(rules[0]["decision"].as_str(), Some("allow"));
        assert!(
            rules[1]["toolName"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t.as_str() == Some("run_shell_command"))
        );
        assert!(w.starts_with(dir.path().join("gemini-cli")));
        let other = RunDir::create("gemini", dir.path(), Purpose::Correction).unwrap();
        assert_ne!(other.path(), w, "one directory per run");

        // Our own live run keeps its files; a dead process's run directory and legacy temp
        // files in the config directory go.
        let a = write_temp(run.path(), "x").unwrap();
        let b = write_temp(dir.path(), "y").unwrap();
        assert_ne!(a, b);
        let dead = dir.path().join("gemini-cli/run-999999999-0");
        std::fs::create_dir_all(&dead).unwrap();
        write_temp(&dead, "z").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "k").unwrap();
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 2);
        assert!(a.exists(), "a live run's temp file is never deleted");
        assert!(!dead.exists() && !b.exists());
        assert_eq!(GeminiCli::cleanup_orphans(dir.path()).unwrap(), 0);
        assert!(dir.path().join("keep.txt").exists());
        drop(run);
        assert!(!w.exists(), "a run's directory goes with it");
        assert!(GeminiCli::cleanup_orphans(&dir.path().join("missing")).is_err());
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("missing")), Some(0));
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(GeminiCli::startup_cleanup(&dir.path().join("file")), None);
    }
}
