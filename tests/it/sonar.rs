//! Sonar tiers (`ask`) through the real binary against the fake OpenRouter, and the client's
//! in-flight sharing, cache and deadlines in process.

use std::time::{Duration, Instant};

use scholia::research::sonar::{AskRequest, MODELS, Sonar};
use serde_json::{Value, json};

use crate::support::{EnvVars, TestVault, fakes, openrouter_env, stderr};

async fn ask(env: EnvVars, args: &[&str]) -> (std::process::Output, Value, Duration) {
    let v = TestVault::empty();
    let args: Vec<&str> = ["ask"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--json"])
        .collect();
    let started = Instant::now();
    let out = v.cli(&env, &args).await;
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, json, started.elapsed())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tier_maps_ids_timeouts_and_cost() {
    let server = fakes().await;
    let env = openrouter_env(&server, "test-key");
    // (model, id, default timeout, premium)
    let table = [
        ("sonar", "perplexity/sonar", 30_000, false),
        ("sonar-pro", "perplexity/sonar-pro", 60_000, true),
        ("sonar-reasoning-pro", "perplexity/sonar-reasoning-pro", 120_000, true),
        ("sonar-deep-research", "perplexity/sonar-deep-research", 300_000, true),
    ];
    assert_eq!(table.len(), MODELS.len());
    for (model, id, timeout, premium) in table {
        let (out, j, _) = ask(env.clone(), &[&format!("what is kefir ({model})?"), "--model", model]).await;
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        let m = &j["metadata"];
        assert_eq!(m["model"], model);
        assert_eq!(m["modelId"], id);
        assert_eq!(m["timeout"], timeout);
        assert_eq!(m["costTier"].as_str(), premium.then_some("premium"), "{model}");
        assert!(m["responseTime"].as_u64().is_some());
        assert_eq!(m["usage"]["prompt_tokens"], 12);
        assert_eq!(m["cost"], 0.0061);
        assert!(j["answer"].as_str().unwrap().starts_with(&format!("Fake {id} answer")));
        let sent = server.requests("/v1/chat/completions").pop().unwrap();
        assert_eq!(sent["model"], id);
        assert!(sent["max_tokens"].as_u64().unwrap() >= 8_192);
        // The override wins.
        let (_, j, _) = ask(
            env.clone(),
            &[&format!("kefir again ({model})"), "--model", model, "--timeout", "7000"],
        )
        .await;
        assert_eq!(j["metadata"]["timeout"], 7000);
    }
    // Default tier: sonar; from .scholia.toml when set there.
    let (_, j, _) = ask(env.clone(), &["default tier?"]).await;
    assert_eq!(j["metadata"]["model"], "sonar");
    assert!(j["metadata"].get("costTier").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn sources_from_citations_and_annotations_and_think_stripped() {
    let server = fakes().await;
    let env = openrouter_env(&server, "test-key");
    let urls = |j: &Value| -> Vec<String> {
        j["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["url"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, j, _) = ask(env.clone(), &["both shapes"]).await;
    assert_eq!(
        urls(&j),
        [
            "https://sonar.example/one",
            "https://sonar.example/two",
            "https://sonar.example/three"
        ],
        "deduplicated in order"
    );
    assert_eq!(j["sources"][1]["title"], "Two");
    let (_, j, _) = ask(env.clone(), &["only annotations fake:annotations-only"]).await;
    assert_eq!(urls(&j), ["https://sonar.example/two/", "https://sonar.example/three"]);
    let (_, j, _) = ask(env.clone(), &["none fake:no-citations"]).await;
    assert!(urls(&j).is_empty());
    // Neither citations nor annotations: the links the answer writes are its sources.
    let (_, j, _) = ask(env.clone(), &["links in text fake:no-citations,invent"]).await;
    assert_eq!(
        urls(&j),
        [
            "https://invented.example/study",
            "https://invented.example/auto",
            "https://invented.example/bare"
        ]
    );
    assert_eq!(
        j["metadata"]["usage"]["total_tokens"], 52,
        "the API's own count kept: {j}"
    );
    let (_, j, _) = ask(
        env.clone(),
        &["why? fake:think,reasoning", "--model", "sonar-reasoning-pro"],
    )
    .await;
    let answer = j["answer"].as_str().unwrap();
    assert!(
        !answer.contains("<think>") && !answer.contains("chain of thought") && !answer.contains("hidden reasoning"),
        "{answer}"
    );
    assert!(answer.starts_with("Fake perplexity/sonar-reasoning-pro answer"));
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_input_is_refused_before_any_call() {
    let server = fakes().await;
    let env = openrouter_env(&server, "test-key");
    let msg = |out: &std::process::Output| stderr(out).trim().to_string();
    // Bad flag values are usage errors (status 2), with the engine's own words.
    let (out, _, _) = ask(env.clone(), &["q", "--model", "invalid"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        msg(&out).contains(
            "Invalid model 'invalid'. Valid options: sonar, sonar-pro, sonar-reasoning-pro, sonar-deep-research"
        ),
        "{}",
        msg(&out)
    );
    for bad in ["abc", "4999", "600001", "5000.5", "-1"] {
        let (out, _, _) = ask(env.clone(), &["q", &format!("--timeout={bad}")]).await;
        assert_eq!(out.status.code(), Some(2));
        assert!(
            msg(&out).contains(&format!(
                "timeout: `{bad}` is not valid; valid: an integer number of milliseconds from 5000 to 600000"
            )),
            "{}",
            msg(&out)
        );
    }
    let (out, _, _) = ask(env.clone(), &["   "]).await;
    assert!(msg(&out).contains("query: empty"));
    let (out, _, _) = ask(vec![], &["q"]).await;
    assert!(msg(&out).contains("set OPENROUTER_API_KEY"), "{}", msg(&out));
    assert!(server.requests("/v1/chat/completions").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn http_failures_map_to_clear_messages_within_one_deadline() {
    let server = fakes().await;
    let (out, _, _) = ask(openrouter_env(&server, "bad-key"), &["q"]).await;
    assert!(
        stderr(&out).contains("OpenRouter rejected the API key (HTTP 401); check OPENROUTER_API_KEY"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("bad-key"), "the key never appears");
    let env = openrouter_env(&server, "test-key");
    let (out, _, took) = ask(env.clone(), &["q fake:status=429", "--timeout", "5000"]).await;
    assert!(
        stderr(&out).contains("kept rate-limiting (HTTP 429) until the 5000 ms deadline"),
        "{}",
        stderr(&out)
    );
    assert!(took < Duration::from_millis(7_000), "{took:?}");
    let (out, _, _) = ask(env.clone(), &["q fake:status=503", "--timeout", "5000"]).await;
    assert!(
        stderr(&out).contains("OpenRouter server error (HTTP 503)"),
        "{}",
        stderr(&out)
    );
    // A transient 500 is retried inside the deadline.
    let (out, j, _) = ask(env.clone(), &["q fake:server-error-first=1"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(j["answer"].as_str().is_some());
    // A stalled upstream: the whole call ends at the deadline.
    let (out, _, took) = ask(env.clone(), &["q fake:stall", "--timeout", "5000"]).await;
    assert!(
        stderr(&out).contains("sonar did not answer within 5000 ms (retries included)"),
        "{}",
        stderr(&out)
    );
    assert!(
        took >= Duration::from_millis(4_900) && took < Duration::from_millis(7_000),
        "{took:?}"
    );
}

fn client(server: &scholia_fakes::FakeServer) -> Sonar {
    let env: std::collections::HashMap<String, String> = openrouter_env(server, "test-key")
        .into_iter()
        .chain([("HOME".to_string(), "/nonexistent-home".to_string())])
        .collect();
    let settings = scholia::config::Settings::load(&env, None, None).unwrap();
    Sonar::new(settings.openrouter.unwrap(), "system".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_requests_share_one_call_and_keys_include_model_and_timeout() {
    let server = fakes().await;
    let sonar = client(&server);
    let req = |q: &str, model: &str, timeout: Option<u64>| {
        AskRequest::new(q, Some(model), timeout.map(|t| json!(t)).as_ref()).unwrap()
    };
    let a = req("shared fake:latency=400", "sonar", None);
    let (x, y) = tokio::join!(sonar.ask(&a), sonar.ask(&a));
    let (x, y) = (x.unwrap(), y.unwrap());
    assert_eq!(sonar.upstream_calls(), 1, "in flight: one upstream call");
    assert_eq!(x.answer, y.answer);
    assert!(x.metadata.cached != y.metadata.cached, "one caller waited on the other");
    // Cached afterwards.
    let z = sonar.ask(&a).await.unwrap();
    assert!(z.metadata.cached);
    assert_eq!(sonar.upstream_calls(), 1);
    // Another timeout or model is another key.
    sonar
        .ask(&req("shared fake:latency=400", "sonar", Some(40_000)))
        .await
        .unwrap();
    assert_eq!(sonar.upstream_calls(), 2);
    sonar
        .ask(&req("shared fake:latency=400", "sonar-pro", None))
        .await
        .unwrap();
    assert_eq!(sonar.upstream_calls(), 3);
    // The TTL expires.
    let sonar = client(&server).with_ttl(Duration::ZERO);
    sonar.ask(&a).await.unwrap();
    sonar.ask(&a).await.unwrap();
    assert_eq!(sonar.upstream_calls(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn waiting_on_a_stalled_request_ends_at_the_deadline() {
    let server = fakes().await;
    let sonar = client(&server);
    let a = AskRequest::new("stalled fake:stall", None, Some(&json!(5_000))).unwrap();
    let started = Instant::now();
    let (x, y) = tokio::join!(sonar.ask(&a), async {
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        sonar.ask(&a).await
    });
    assert!(x.unwrap_err().to_string().contains("within 5000 ms"));
    assert!(y.is_err());
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(6_800),
        "the waiter's own deadline: {took:?}"
    );
    // The waiter takes over when the first caller gives up, but never waits past its deadline.
    assert!(sonar.upstream_calls() <= 2);
}
