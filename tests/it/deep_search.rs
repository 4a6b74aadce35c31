//! deep_search end to end through the real binary: a fake `gemini` executable
//! (`tests/fakes/gemini`, scenarios chosen by GEMINI_FAKE_SCENARIO) for every scenario of seeds
//! 002 and 003, and the LLM backend against the loopback fakes.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::support::{EnvVars, TestVault, env, fake_env, fake_gemini, fakes, stderr};

struct Run {
    out: std::process::Output,
    json: Value,
    calls: Vec<Value>,
    elapsed: std::time::Duration,
}

impl Run {
    fn err(&self) -> String {
        stderr(&self.out)
    }
    fn mains(&self) -> Vec<&Value> {
        self.calls.iter().filter(|c| c["kind"] != "correction").collect()
    }
    fn corrections(&self) -> Vec<&Value> {
        self.calls.iter().filter(|c| c["kind"] == "correction").collect()
    }
}

/// `scholia deep-search QUERY --json` with the fake CLI and `env`, returning the parsed output
/// and the fake's invocation log.
fn deep(v: &TestVault, scenario: &str, extra: &[(&str, &str)], args: &[&str]) -> Run {
    deep_with(v, scenario, &env(extra), args)
}

fn deep_with(v: &TestVault, scenario: &str, env: &EnvVars, args: &[&str]) -> Run {
    let log = v.home.join(format!("gemini-{}.jsonl", fastrand::u64(..)));
    let mut cmd = v.cmd();
    cmd.env("GEMINI_CLI", fake_gemini())
        .env("GEMINI_FAKE_SCENARIO", scenario)
        .env("GEMINI_FAKE_LOG", &log)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["deep-search", "--json"])
        .args(args);
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let elapsed = started.elapsed();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Run {
        out,
        json,
        calls,
        elapsed,
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn temp_files(config: &Path) -> usize {
    std::fs::read_dir(config)
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("temp-invalid-output-")
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn rounds_run_until_verified_with_the_seed_format_and_logs() {
    let v = TestVault::example();
    let r = deep(&v, "valid", &[], &["what is sourdough?"]);
    assert!(r.out.status.success(), "{}", r.err());
    let j = &r.json;
    assert_eq!(j["success"], true);
    assert_eq!(j["verified"], true);
    assert!(j.get("note").is_none(), "verified results carry no note");
    assert!(
        j["result"]
            .as_str()
            .unwrap()
            .contains("Round 2 report (verified the previous report)")
    );
    let m = &j["metadata"];
    assert_eq!(m["iterations"], 2, "stopped early on verified: true");
    assert_eq!(m["query"], "what is sourdough?");
    assert_eq!(m["model"], "gemini-2.5-pro", "detected from stats");
    assert!(m["duration_ms"].as_u64().is_some());
    assert!(m["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(m["tokens"]["total"], 2600, "summed over both runs");
    // Deduplicated across rounds, in order.
    assert_eq!(
        strings(&m["sources_visited"]),
        [
            "https://example.org/b",
            "https://example.org/c",
            "https://example.org/d"
        ]
    );
    assert_eq!(
        strings(&m["search_queries_used"]),
        [
            "what is sourdough? q1",
            "what is sourdough? q2",
            "what is sourdough? q3"
        ]
    );
    let rounds = m["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["round_number"], 1);
    assert_eq!(rounds[0]["intermediate_result_summary"], "Round 1 summary.");
    assert_eq!(
        strings(&rounds[1]["search_queries"]),
        ["what is sourdough? q2", "what is sourdough? q3"]
    );
    assert_eq!(strings(&rounds[1]["sources_visited"]).len(), 2);

    let err = r.err();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[INFO]")).collect();
    assert_eq!(
        lines,
        [
            "[INFO] Deep search round 1/5...",
            "[INFO] Round 1 completed, verified: false",
            "[INFO] Deep search round 2/5...",
            "[INFO] Round 2 completed, verified: true",
            "[INFO] Deep search completed: 2 rounds, verified: true",
        ]
    );

    // The spawns: prompt on stdin, -o json, no --model, a private cwd per run with web-only
    // tools, removed afterwards.
    let mains = r.mains();
    assert_eq!(mains.len(), 2);
    assert_ne!(mains[0]["cwd"], mains[1]["cwd"], "one directory per run");
    for c in &mains {
        let argv = strings(&c["argv"]);
        assert_eq!(argv, ["-o", "json"], "no --model unless configured");
        let cwd = Path::new(c["cwd"].as_str().unwrap());
        assert!(cwd.starts_with(v.home.join("config/gemini-cli")), "{cwd:?}");
        assert!(!cwd.exists(), "the run's directory is gone: {cwd:?}");
        let settings: Value = serde_json::from_str(c["settings"].as_str().unwrap()).unwrap();
        assert_eq!(strings(&settings["tools"]["core"]), ["google_web_search", "web_fetch"]);
        let policy = c["policy"].as_str().unwrap();
        assert!(policy.contains("\"run_shell_command\"") && policy.contains("decision = \"deny\""));
    }
    let first = mains[0]["stdin"].as_str().unwrap();
    assert!(first.contains("5 different perspectives") && first.contains("what is sourdough?"));
    assert!(first.contains("\"verified\": false"), "the schema example");
    let second = mains[1]["stdin"].as_str().unwrap();
    assert!(second.contains("verification round 2") && second.contains("Round 1 report"));
}

#[test]
fn max_iterations_reached_and_minimum_of_two() {
    let v = TestVault::example();
    let r = deep(
        &v,
        "never-verified",
        &[("DEEP_SEARCH_MAX_ITERATIONS", "3")],
        &["rye flour"],
    );
    assert!(r.out.status.success(), "{}", r.err());
    assert_eq!(r.json["verified"], false);
    assert_eq!(r.json["metadata"]["iterations"], 3);
    assert!(
        r.json["note"]
            .as_str()
            .unwrap()
            .starts_with("Verification was not completed"),
        "{}",
        r.json
    );
    assert!(
        r.json["result"].as_str().unwrap().contains("Round 3 report"),
        "the latest result"
    );
    assert!(
        r.err()
            .contains("[INFO] Deep search completed: 3 rounds, verified: false")
    );

    // The seed's environment variable: below 2 runs 2 rounds (as the flag and the MCP tool do).
    for (env, args) in [
        (vec![("DEEP_SEARCH_MAX_ITERATIONS", "1")], vec!["rye"]),
        (vec![("DEEP_SEARCH_MAX_ITERATIONS", "0")], vec!["rye"]),
    ] {
        let r = deep(&v, "never-verified", &env, &args);
        assert_eq!(r.json["metadata"]["iterations"], 2, "{env:?} {args:?}");
        assert!(r.err().contains("[INFO] Deep search round 2/2..."));
    }
    // The flag beats the environment.
    let r = deep(
        &v,
        "never-verified",
        &[("DEEP_SEARCH_MAX_ITERATIONS", "2")],
        &["rye", "--max-iterations", "4"],
    );
    assert_eq!(r.json["metadata"]["iterations"], 4);
}

#[test]
fn models_are_passed_only_when_configured() {
    let v = TestVault::example();
    // Both set: each task uses its own model; metadata.model is the configured one.
    let r = deep(
        &v,
        "broken:1",
        &[("GEMINI_MODEL", "main-model"), ("GEMINI_CORRECTION_MODEL", "fix-model")],
        &["kefir"],
    );
    assert!(r.out.status.success(), "{}", r.err());
    assert_eq!(r.json["metadata"]["model"], "main-model");
    for c in r.mains() {
        assert_eq!(strings(&c["argv"]), ["-o", "json", "--model=main-model"]);
    }
    let corr = r.corrections();
    assert_eq!(corr.len(), 1);
    assert_eq!(strings(&corr[0]["argv"]), ["-o", "json", "--model=fix-model"]);

    // Only the correction model.
    let r = deep(&v, "broken:1", &[("GEMINI_CORRECTION_MODEL", "fix-model")], &["kefir"]);
    let has_model = |c: &Value| strings(&c["argv"]).iter().any(|a| a.starts_with("--model"));
    assert!(!r.mains().iter().any(|c| has_model(c)));
    assert!(strings(&r.corrections()[0]["argv"]).contains(&"--model=fix-model".to_string()));
    assert_eq!(r.json["metadata"]["model"], "gemini-2.5-pro", "detected");

    // Only the main model.
    let r = deep(&v, "broken:1", &[("GEMINI_MODEL", "main-model")], &["kefir"]);
    assert!(!has_model(r.corrections()[0]));
}

#[test]
fn model_detection_and_token_sums() {
    let v = TestVault::example();
    let r = deep(&v, "models", &[], &["miso"]);
    assert_eq!(
        r.json["metadata"]["model"], "gemini-2.5-pro",
        "the model with most tokens"
    );
    assert_eq!(r.json["metadata"]["tokens"]["total"], 2 * (115 + 1300));
    assert_eq!(r.json["metadata"]["tokens"]["thoughts"], 2 * 105);
    let r = deep(&v, "no-stats", &[], &["miso"]);
    assert_eq!(r.json["metadata"]["model"], "auto-detected");
    // An old CLI without -o json: text output, nothing to detect.
    let r = deep(&v, "valid", &[("GEMINI_FAKE_VERSION", "0.5.0")], &["miso"]);
    assert!(r.out.status.success(), "{}", r.err());
    assert!(r.mains().iter().all(|c| strings(&c["argv"]).is_empty()));
    assert_eq!(r.json["metadata"]["model"], "auto-detected");
    assert_eq!(r.json["verified"], true);
}

#[test]
fn invalid_json_is_corrected_through_a_temp_file() {
    for scenario in ["broken:1", "prose,never-verified"] {
        let v = TestVault::example();
        let config = v.home.join("config");
        let r = deep(&v, scenario, &[("DEEP_SEARCH_MAX_ITERATIONS", "2")], &["tempeh"]);
        assert!(r.out.status.success(), "{scenario}: {}", r.err());
        let corr = r.corrections();
        assert!(!corr.is_empty(), "{scenario}");
        let prompt = corr[0]["stdin"].as_str().unwrap();
        assert!(prompt.contains("You are a JSON formatter"));
        assert!(
            prompt.contains("\"search_queries_used\"") && prompt.contains("\"report\""),
            "the full JSON example"
        );
        let path = prompt
            .split_whitespace()
            .find(|w| w.contains("temp-invalid-output-"))
            .unwrap();
        let name = Path::new(path).file_name().unwrap().to_string_lossy().to_string();
        assert!(Path::new(path).starts_with(&config), "{path}");
        let ts = name
            .strip_prefix("temp-invalid-output-")
            .unwrap()
            .strip_suffix(".txt")
            .unwrap();
        assert!(ts.parse::<u64>().is_ok(), "{name}");
        // The correction could read the file; it is gone afterwards.
        let corrected = |t: &str| t.contains("corrected from");
        assert!(
            corrected(r.json["result"].as_str().unwrap()) || corrected(r.mains()[1]["stdin"].as_str().unwrap()),
            "the corrected report is the round's result: {}",
            r.json
        );
        assert!(!Path::new(path).exists());
        assert_eq!(temp_files(&config), 0);
        let cwd = Path::new(corr[0]["cwd"].as_str().unwrap());
        assert_eq!(
            Path::new(path).parent(),
            Some(cwd),
            "the temp file is in the run's own directory"
        );
        assert!(cwd.starts_with(config.join("gemini-cli")));
        let settings: Value = serde_json::from_str(corr[0]["settings"].as_str().unwrap()).unwrap();
        assert_eq!(strings(&settings["tools"]["core"]), ["read_file"]);
    }
}

#[test]
fn failed_correction_retries_the_cycle_with_backoff() {
    let v = TestVault::example();
    let r = deep(&v, "broken:1,correction-broken", &[], &["natto"]);
    assert!(r.out.status.success(), "{}", r.err());
    assert!(r.err().contains("JSON correction failed"), "{}", r.err());
    // main (broken) → correction (broken) → 1 s → main (valid).
    let kinds: Vec<&str> = r.calls.iter().take(3).map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["round1", "correction", "round1"]);
    let gap = r.calls[2]["time"].as_f64().unwrap() - r.calls[1]["time"].as_f64().unwrap();
    assert!(gap >= 0.95, "waited {gap} s");
    assert_eq!(r.json["verified"], true);
}

#[test]
fn three_failed_cycles_are_an_execution_error() {
    let v = TestVault::example();
    let r = deep(
        &v,
        "broken:99,correction-broken",
        &[],
        &["koji", "--max-iterations", "2"],
    );
    assert!(!r.out.status.success());
    assert_eq!(r.json["success"], false);
    assert_eq!(r.json["error"]["code"], "EXECUTION_ERROR");
    let message = r.json["error"]["message"].as_str().unwrap();
    assert!(message.contains("all 2 rounds failed"), "{message}");
    assert!(r.err().contains("all retry and correction attempts were exhausted"));
    // Two rounds × three cycles of main + correction.
    assert_eq!(r.mains().len(), 6);
    assert_eq!(r.corrections().len(), 6);
    // Waits of 1 s and 2 s inside each round.
    let t: Vec<f64> = r.mains().iter().map(|c| c["time"].as_f64().unwrap()).collect();
    assert!(t[1] - t[0] >= 0.95 && t[2] - t[1] >= 1.95, "{t:?}");
    assert_eq!(temp_files(&v.home.join("config")), 0);
}

#[test]
fn a_failed_round_is_logged_and_the_loop_goes_on() {
    let v = TestVault::example();
    let r = deep(&v, "fail-round:2,verify-at:3", &[], &["amazake"]);
    assert!(r.out.status.success(), "{}", r.err());
    assert!(r.err().contains("[ERROR] Deep search round 2 failed"), "{}", r.err());
    let m = &r.json["metadata"];
    assert_eq!(m["iterations"], 3);
    assert_eq!(r.json["verified"], true);
    let rounds = m["rounds"].as_array().unwrap();
    assert!(rounds[1]["error"].as_str().unwrap().contains("exited with code 1"));
    assert!(rounds[0].get("error").is_none() && rounds[2].get("error").is_none());
    // Round 3 verified round 1's result, the best one available.
    assert!(r.mains()[2]["stdin"].as_str().unwrap().contains("Round 1 report"));
}

#[test]
fn cli_errors_map_to_codes_and_hints() {
    let v = TestVault::example();
    // Not installed.
    let r = deep(
        &v,
        "valid",
        &[("GEMINI_CLI", "/nonexistent/gemini")],
        &["q", "--backend", "gemini-cli"],
    );
    assert_eq!(r.json["error"]["code"], "CLI_NOT_FOUND");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("npm install -g @google/gemini-cli")
    );
    // Not installed and no LLM: the default backend has nothing to run.
    let r = deep(&v, "valid", &[("GEMINI_CLI", "/nonexistent/gemini")], &["q"]);
    assert_eq!(r.json["error"]["code"], "CLI_NOT_FOUND", "{}", r.json);

    // Authentication failure: fatal at once, no second round.
    let r = deep(&v, "exit:41", &[], &["q"]);
    assert_eq!(r.json["error"]["code"], "EXECUTION_ERROR");
    assert!(r.json["error"]["message"].as_str().unwrap().contains("authentication"));
    assert_eq!(r.mains().len(), 1);
    // Turn limit and input errors fail rounds; all failing is an error naming the cause.
    for (code, hint) in [("53", "turn limit"), ("42", "input error")] {
        let r = deep(&v, &format!("exit:{code}"), &[], &["q"]);
        assert_eq!(r.json["error"]["code"], "EXECUTION_ERROR");
        let message = r.json["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(hint) && message.contains(&format!("code {code}")),
            "{message}"
        );
    }
    // An error reported inside the JSON envelope.
    let r = deep(&v, "error-json", &[], &["q"]);
    assert!(
        r.json["error"]["message"].as_str().unwrap().contains("quota exceeded"),
        "{}",
        r.json
    );
}

#[test]
fn a_hanging_cli_is_killed_and_megabytes_of_output_are_refused() {
    let v = TestVault::example();
    v.write(".scholia.toml", "[deep_search]\ntimeout_secs = 1\n");
    let r = deep(&v, "hang-ignore-term", &[], &["q", "--max-iterations", "2"]);
    // Every round timed out: the seed's TIMEOUT, not a generic execution error.
    assert_eq!(r.json["error"]["code"], "TIMEOUT", "{}", r.err());
    let message = r.json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("all 2 rounds timed out") && message.contains("did not finish within 1 s"),
        "{message}"
    );
    // Two rounds of 1 s timeout + ≤1 s grace each, not an hour.
    assert!(r.elapsed.as_secs() < 15, "{:?}", r.elapsed);
    assert!(r.err().contains("ignored SIGTERM"), "{}", r.err());

    let r = deep(&v, "huge", &[], &["q", "--max-iterations", "2"]);
    assert_eq!(r.json["error"]["code"], "EXECUTION_ERROR");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("printed more than 8388608 bytes")
    );
}

#[test]
fn bad_input_is_refused_before_any_spawn() {
    let v = TestVault::example();
    let r = deep(&v, "valid", &[], &["   "]);
    assert_eq!(r.json["error"]["code"], "INVALID_INPUT");
    assert!(r.json["error"]["message"].as_str().unwrap().starts_with("query: empty"));
    assert!(r.calls.is_empty());
    // A flag value outside 1..=50 is a usage error (status 2).
    let out = v
        .cmd()
        .args(["deep-search", "q", "--max-iterations", "99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("99 is not in 1..=50"), "{}", stderr(&out));

    let out = v
        .cmd()
        .env("DEEP_SEARCH_MAX_ITERATIONS", "abc")
        .args(["deep-search", "q"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("DEEP_SEARCH_MAX_ITERATIONS: `abc` is not valid"),
        "{}",
        stderr(&out)
    );
    let out = v
        .cmd()
        .args(["deep-search", "q", "--backend", "bard"])
        .output()
        .unwrap();
    assert!(stderr(&out).contains("valid: gemini-cli, llm"), "{}", stderr(&out));
}

#[test]
fn orphaned_temp_files_are_cleaned_at_start() {
    let v = TestVault::example();
    let config = v.home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    for ts in ["1700000000", "1700000001"] {
        std::fs::write(config.join(format!("temp-invalid-output-{ts}.txt")), "old").unwrap();
    }
    std::fs::write(config.join("other.txt"), "keep").unwrap();
    let r = deep(&v, "valid", &[("SCHOLIA_LOG", "scholia=info")], &["q"]);
    assert!(r.err().contains("cleaned up 2 orphaned"), "{}", r.err());
    assert_eq!(temp_files(&config), 0);
    assert!(config.join("other.txt").exists());
    // Nothing to clean: logs 0. An inaccessible config dir: a warning, and the run goes on.
    let r = deep(&v, "valid", &[("SCHOLIA_LOG", "scholia=info")], &["q"]);
    assert!(r.err().contains("cleaned up 0 orphaned"), "{}", r.err());
    let blocked = v.home.join("not-a-dir");
    std::fs::write(&blocked, "file").unwrap();
    let r = deep(
        &v,
        "valid",
        &[
            ("SCHOLIA_LOG", "scholia=info"),
            ("SCHOLIA_CONFIG_DIR", blocked.to_str().unwrap()),
        ],
        &["q", "--backend", "gemini-cli"],
    );
    assert!(r.err().contains("could not scan"), "{}", r.err());
}

#[tokio::test(flavor = "multi_thread")]
async fn llm_backend_searches_reads_and_verifies_without_the_cli() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut env = fake_env(&server, "fake");
    env.extend(crate::support::env(&[("GEMINI_CLI", "/nonexistent/gemini")]));
    let (r, v) = tokio::task::spawn_blocking(move || (deep_with(&v, "valid", &env, &["mozilla firefox"]), v))
        .await
        .unwrap();
    assert!(r.out.status.success(), "{}", r.err());
    assert!(r.calls.is_empty(), "default backend is the LLM when the CLI is missing");
    let m = &r.json["metadata"];
    assert_eq!(m["backend"], "llm");
    assert_eq!(m["model"], "fake");
    assert_eq!(r.json["verified"], true);
    assert_eq!(m["iterations"], 2);
    let rounds = m["rounds"].as_array().unwrap();
    assert_eq!(rounds[0]["search_queries"].as_array().unwrap().len(), 5);
    let sources = strings(&m["sources_visited"]);
    assert!(
        !sources.is_empty() && sources.iter().all(|s| s.starts_with(&server.base())),
        "{sources:?}"
    );
    let result = r.json["result"].as_str().unwrap();
    assert!(
        sources.iter().any(|s| result.contains(s.as_str())),
        "cites pages it read: {result}"
    );
    assert!(m["usage"]["calls"].as_u64().unwrap() >= 4);

    // Invented citations never survive.
    let mut env = fake_env(&server, "fake:hallucinate");
    env.extend(crate::support::env(&[("GEMINI_CLI", "/nonexistent/gemini")]));
    let r = tokio::task::spawn_blocking(move || deep_with(&v, "valid", &env, &["mozilla firefox", "--backend", "llm"]))
        .await
        .unwrap();
    assert!(r.out.status.success(), "{}", r.err());
    assert!(!r.json["result"].as_str().unwrap().contains("invented.example"));
    assert!(r.json["metadata"]["citations_removed"].as_u64().unwrap() >= 1);
    // A small model answering with the prompt's own JSON example: every round refused, so the
    // search fails (never `success: true` with the example as its result).
    let v2 = TestVault::example();
    let mut env = fake_env(&server, "fake:echo-example");
    env.extend(crate::support::env(&[("GEMINI_CLI", "/nonexistent/gemini")]));
    let r = tokio::task::spawn_blocking(move || {
        deep_with(
            &v2,
            "valid",
            &env,
            &["mozilla firefox", "--backend", "llm", "--max-iterations", "2"],
        )
    })
    .await
    .unwrap();
    assert!(!r.out.status.success(), "{}", r.json);
    assert_eq!(r.json["success"], false, "{}", r.json);
    let message = r.json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("all 2 rounds failed") && message.contains("example its prompt showed"),
        "{message}"
    );
    // The LLM backend without an LLM is a clear error.
    let v = TestVault::example();
    let r = tokio::task::spawn_blocking(move || deep(&v, "valid", &[], &["q", "--backend", "llm"]))
        .await
        .unwrap();
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("backend: llm needs a research LLM")
    );
}
