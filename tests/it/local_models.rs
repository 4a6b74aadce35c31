//! What a real small local model and its server do, reproduced by the fakes (llama-cpp-python
//! with Gemma 3 270M was the model these cases come from; `scripts/local-model.sh` runs the real
//! one): structured-output refusals in the shapes of llama.cpp, llama-cpp-python, Ollama and
//! vLLM; streaming, stalls and context windows; topics that echo the schema; a synthesis that
//! is its own prompt, a loop or a copy of the note. And the log lines every call leaves.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use scholia::llm::{ChatClient, ChatRequest, LlmConfig, LlmError, Message, StructuredMode};
use scholia::prompts::Library;
use scholia_fakes::FakeServer;
use scholia_fakes::llm::Window;
use serde_json::{Value, json};

use crate::support::{TestVault, env, fake_env, fakes, stderr};

fn chat_requests(server: &FakeServer) -> Vec<Value> {
    server.requests("/v1/chat/completions")
}

/// The chat requests whose prompt contains `marker`.
fn requests_for(server: &FakeServer, marker: &str) -> Vec<Value> {
    chat_requests(server)
        .into_iter()
        .filter(|r| r["messages"].to_string().contains(marker))
        .collect()
}

fn client(server: &FakeServer, model: &str, timeout: Duration) -> ChatClient {
    ChatClient::new(LlmConfig {
        base_url: format!("{}/v1", server.base()),
        api_key: None,
        model: model.into(),
        max_concurrency: 4,
        timeout,
        context_tokens: None,
        price: None,
        key_source: "SCHOLIA_LLM_API_KEY",
    })
}

#[derive(serde::Deserialize, Debug)]
struct Topics {
    topics: Vec<Value>,
}

fn topic_messages() -> Vec<Message> {
    vec![Message::user(
        "# Task: topic extraction\n<untrusted-data source=\"note\" path=\"n.md\">\n- Yeast rises.\n</untrusted-data>",
    )]
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_and_one_deadline() {
    let server = fakes().await;
    let req = ChatRequest {
        messages: topic_messages(),
        ..Default::default()
    };
    // 429 with Retry-After: 1 twice, then success, within one call.
    let c = client(&server, "fake:rate-limit-first=2", Duration::from_secs(10));
    let started = Instant::now();
    c.chat(&req, c.deadline()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "Retry-After honoured: {:?}",
        started.elapsed()
    );
    let c = client(&server, "fake:server-error-first=2", Duration::from_secs(10));
    c.chat(&req, c.deadline()).await.unwrap();

    // A stalled server: the retries share the deadline instead of multiplying it.
    let c = client(&server, "fake:stall", Duration::from_secs(2));
    let started = Instant::now();
    let err = c.chat(&req, c.deadline()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err}");
    assert!(
        started.elapsed() < Duration::from_millis(2600),
        "took {:?}",
        started.elapsed()
    );

    // Rate-limited past the deadline: a clear error, not a hang.
    let c = client(&server, "fake:rate-limit-first=100", Duration::from_secs(2));
    let err = c.chat(&req, c.deadline()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "LLM at {}/v1: rate limited (HTTP 429) until the deadline; try again later",
            server.base()
        )
    );

    // Answers without content are errors that say so.
    let c = client(&server, "fake:empty-choices", Duration::from_secs(5));
    assert_eq!(
        c.chat(&req, c.deadline()).await.unwrap_err().to_string(),
        "LLM returned no answer (`choices` is empty)"
    );
    let c = client(&server, "fake:null-content", Duration::from_secs(5));
    assert_eq!(
        c.chat(&req, c.deadline()).await.unwrap_err().to_string(),
        "LLM returned no answer (`content` is null)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn structured_output_steps_down_whatever_the_refusal_looks_like() {
    let server = fakes().await;
    let schema = json!({"type": "object"});
    // (model flags, the mode reached, response_format types sent over two calls)
    #[rustfmt::skip]
    let cases: &[(&str, StructuredMode, &[&str])] = &[
        ("fake:reject-schema=llama.cpp", StructuredMode::JsonObject, &["json_schema", "json_object", "json_object"]),
        ("fake:reject-schema=llama-cpp-python", StructuredMode::JsonObject, &["json_schema", "json_object", "json_object"]),
        ("fake:reject-schema=ollama", StructuredMode::JsonObject, &["json_schema", "json_object", "json_object"]),
        ("fake:reject-schema=vllm", StructuredMode::JsonObject, &["json_schema", "json_object", "json_object"]),
        ("fake:no-json-schema", StructuredMode::JsonObject, &["json_schema", "json_object", "json_object"]),
        ("fake:reject-format=llama-cpp-python", StructuredMode::PromptOnly, &["json_schema", "json_object", "none", "none"]),
        ("fake:reject-format=vllm", StructuredMode::PromptOnly, &["json_schema", "json_object", "none", "none"]),
        ("fake:no-response-format", StructuredMode::PromptOnly, &["json_schema", "json_object", "none", "none"]),
        ("fake", StructuredMode::JsonSchema, &["json_schema", "json_schema"]),
    ];
    for (model, mode, sent) in cases {
        let before = chat_requests(&server).len();
        let c = client(&server, model, Duration::from_secs(10));
        for _ in 0..2 {
            let (t, _): (Topics, _) = c
                .json(
                    topic_messages(),
                    "topics",
                    &schema,
                    500,
                    &Library::builtin(),
                    c.deadline(),
                    None,
                )
                .await
                .unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!(t.topics.len(), 1, "{model}");
        }
        assert_eq!(c.structured_mode(), *mode, "{model}");
        let formats: Vec<String> = chat_requests(&server)[before..]
            .iter()
            .map(|r| r["response_format"]["type"].as_str().unwrap_or("none").to_string())
            .collect();
        assert_eq!(formats, *sent, "{model}: a refusal is not retried as a server error");
        let last = chat_requests(&server).pop().unwrap();
        if *mode == StructuredMode::JsonObject {
            assert_eq!(
                last["response_format"]["schema"], schema,
                "json_object carries the schema"
            );
        }
        assert_eq!(last["max_tokens"], 500, "every call has a token budget");
        // A new client for the same endpoint starts where the last one ended.
        let again = client(&server, model, Duration::from_secs(10));
        assert_eq!(again.structured_mode(), *mode, "{model}: remembered per endpoint");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_are_streamed_and_stalls_are_noticed() {
    let server = fakes().await;
    let req = ChatRequest {
        messages: topic_messages(),
        max_tokens: Some(300),
        stream: true,
        ..Default::default()
    };
    let c = client(&server, "fake", Duration::from_secs(10));
    let seen = Arc::new(AtomicU64::new(0));
    let s = seen.clone();
    let progress = move |n: u64| s.store(n, Ordering::Relaxed);
    let a = c.chat_with(&req, c.deadline(), Some(&progress)).await.unwrap();
    assert!(a.content.contains("topics"), "{}", a.content);
    assert!(seen.load(Ordering::Relaxed) >= 2, "progress while generating");
    assert!(
        a.usage.prompt_tokens > 0 && a.usage.completion_tokens > 0,
        "{:?}",
        a.usage
    );
    let sent = chat_requests(&server).pop().unwrap();
    assert_eq!(
        (sent["stream"].clone(), sent["stream_options"]["include_usage"].clone()),
        (json!(true), json!(true))
    );

    // A server that answers plain JSON to a stream request, one that refuses stream_options.
    for model in ["fake:no-stream", "fake:reject-stream-options"] {
        let c = client(&server, model, Duration::from_secs(10));
        let a = c
            .chat(&req, c.deadline())
            .await
            .unwrap_or_else(|e| panic!("{model}: {e}"));
        assert!(a.content.contains("topics"), "{model}");
    }
    let last = chat_requests(&server).pop().unwrap();
    assert!(
        last.get("stream_options").is_none(),
        "asked again without stream_options"
    );

    // A stream that stops: abandoned after a third of the timeout, not at the deadline.
    let c = client(&server, "fake:stall-stream", Duration::from_secs(6));
    let started = Instant::now();
    let err = c.chat(&req, c.deadline()).await.unwrap_err();
    assert!(matches!(err, LlmError::Stalled(_) | LlmError::Timeout(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(7), "{:?}", started.elapsed());
    assert!(
        err.to_string().contains("stalled") || matches!(err, LlmError::Timeout(_)),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_context_window_comes_from_the_server_or_its_errors() {
    let server = fakes().await;
    let c = client(&server, "fake", Duration::from_secs(5));
    assert_eq!(c.context_tokens().await, None, "neither /props nor /api/show: unknown");
    server.report_window(Some(Window::LlamaCpp(4096)));
    let c = client(&server, "fake:a", Duration::from_secs(5));
    assert_eq!(c.context_tokens().await, Some(4096), "llama.cpp /props");
    server.report_window(Some(Window::Ollama(8192)));
    let c = client(&server, "fake:b", Duration::from_secs(5));
    assert_eq!(c.context_tokens().await, Some(8192), "Ollama /api/show num_ctx");
    // llama-cpp-python reports it nowhere: a probe it refuses before evaluating anything.
    server.report_window(Some(Window::LlamaCppPython(8192)));
    let c = client(&server, "fake:c", Duration::from_secs(5));
    assert_eq!(c.context_tokens().await, Some(8192), "llama-cpp-python probe");
    let probes = server.requests("/v1/completions");
    assert_eq!(probes.len(), 1, "probed once");
    assert_eq!(probes[0]["max_tokens"], 1);
    assert!(!probes[0]["logprobs"].is_null(), "refused before a token is evaluated");
    // A window wider than the probe: unknown, and nothing is generated.
    server.report_window(Some(Window::LlamaCppPython(65_536)));
    let c = client(&server, "fake:d", Duration::from_secs(5));
    assert_eq!(c.context_tokens().await, None);
    server.report_window(None);

    // llama-cpp-python says nothing until a prompt is too long; then the client knows.
    let c = client(&server, "fake:ctx=2048", Duration::from_secs(5));
    let long = ChatRequest {
        messages: vec![Message::user("word ".repeat(3000))],
        max_tokens: Some(100),
        ..Default::default()
    };
    let err = c.chat(&long, c.deadline()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::ContextExceeded { limit: Some(2048), .. }),
        "{err}"
    );
    assert_eq!(c.context_tokens().await, Some(2048));

    // Streamed, llama-cpp-python answers an overflow with an empty event stream: the call is
    // asked once more without streaming, which names the window; streaming stays on.
    let c = client(&server, "fake:ctx=1024", Duration::from_secs(5));
    let before = chat_requests(&server).len();
    let err = c
        .chat(
            &ChatRequest {
                stream: true,
                ..long.clone()
            },
            c.deadline(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, LlmError::ContextExceeded { limit: Some(1024), .. }),
        "{err}"
    );
    let sent = &chat_requests(&server)[before..];
    assert_eq!(sent.len(), 2, "one streamed try, one plain");
    assert_eq!(
        (sent[0]["stream"].clone(), sent[1]["stream"].clone()),
        (json!(true), Value::Null)
    );
    let short = ChatRequest {
        messages: vec![Message::user("Say hello.")],
        stream: true,
        ..Default::default()
    };
    c.chat(&short, c.deadline()).await.unwrap();
    assert_eq!(chat_requests(&server).last().unwrap()["stream"], json!(true));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_interrupts_streams_gets_one_call_at_a_time() {
    // llama-cpp-python breaks a running stream off when another request arrives.
    let server = fakes().await;
    let c = Arc::new(client(&server, "fake:interrupt,chunk-ms=5", Duration::from_secs(20)));
    let calls = (0..4).map(|i| {
        let c = c.clone();
        tokio::spawn(async move {
            let req = ChatRequest {
                messages: vec![Message::user(format!("Tell me about bread number {i}."))],
                stream: true,
                ..Default::default()
            };
            c.chat(&req, c.deadline()).await
        })
    });
    for call in calls.collect::<Vec<_>>() {
        let answer = call
            .await
            .unwrap()
            .expect("every call answers once the client serialises");
        assert!(!answer.content.is_empty());
    }
    // Each call is cut at most once before the client learns; without that they cut each
    // other on every retry.
    assert!(
        chat_requests(&server).len() <= 8,
        "{} requests",
        chat_requests(&server).len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn research_fits_the_prompts_into_a_small_context() {
    let server = fakes().await;
    let v = TestVault::example();
    // A 2,048-token window the server never reports: the first synthesis overflows, the
    // second is fitted; topics and pages are fitted once the window is known.
    let out = v
        .cli(
            &fake_env(&server, "fake:ctx=2048"),
            &["research", "Sourdough starter.md", "--deep", "--json"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("to fit the model's 2048-token context, left out"),
        "{warnings}"
    );
    let synth = requests_for(&server, "# Task: synthesis");
    let last = synth.last().unwrap().to_string();
    assert!(last.len() / 4 < 2048, "the fitted prompt fits: {} bytes", last.len());
    assert!(v.read("Sourdough starter.md").contains("\n## Research\n"));

    // Known from the start (llama.cpp /props; llama-cpp-python by its probe): no request
    // overflows, the first one included.
    for (window, model) in [
        (Window::LlamaCpp(3000), "fake:ctx=3000,x"),
        (Window::LlamaCppPython(3000), "fake:ctx=3000,y"),
    ] {
        server.report_window(Some(window));
        let before = chat_requests(&server).len();
        let out = v
            .cli(
                &fake_env(&server, model),
                &["research", "Kombucha.md", "--deep", "--json"],
            )
            .await;
        assert!(out.status.success(), "{window:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("maximum context length"),
            "{window:?}: {}",
            stderr(&out)
        );
        assert!(
            chat_requests(&server)[before..]
                .iter()
                .all(|r| r["max_tokens"].as_u64().is_some())
        );
    }
    server.report_window(None);
}

#[tokio::test(flavor = "multi_thread")]
async fn topics_that_echo_the_schema_become_the_notes_key_terms() {
    let server = fakes().await;
    let v = TestVault::example();
    let out = v
        .cli(
            &fake_env(&server, "fake:reject-schema=llama-cpp-python,echo-topics"),
            &["research", "Sourdough starter.md", "--json"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let topics = result["topics"].as_array().unwrap();
    assert!(!topics.is_empty());
    assert!(!result["topics"].to_string().contains("short label"), "{topics:?}");
    let searched: Vec<String> = server.requests("/html/").iter().map(|r| r.to_string()).collect();
    assert!(
        searched
            .iter()
            .all(|q| !q.contains("short+label") && !q.contains("short label")),
        "{searched:?}"
    );
    let note = v.read("Sourdough starter.md");
    assert!(note.contains("the note's key terms were researched instead"), "{note}");
    assert!(result["warnings"].to_string().contains("an echo of the instructions"));

    // No topics at all: the same.
    let out = v
        .cli(
            &fake_env(&server, "fake:no-topics"),
            &["research", "Kombucha.md", "--json"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(v.read("Kombucha.md").contains("key terms were researched instead"));
}

/// A synthesis the gate refuses: (model flags, what the error says). The note gets the
/// gathered sources under a warning, never the model's text.
#[tokio::test(flavor = "multi_thread")]
async fn an_echoed_prompt_never_reaches_the_note() {
    let server = fakes().await;
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("fake:echo-prompt", "the answer contains the tags that fence its prompt's material"),
        ("fake:loop", "the answer repeats itself"),
        ("fake:copy-note", "words of the note verbatim"),
        ("fake:fail-synthesis", "server error (HTTP 500)"),
    ];
    for (model, why) in cases {
        let v = TestVault::example();
        let before = v.read("Sourdough starter.md");
        let out = v
            .cli(&fake_env(&server, model), &["research", "Sourdough starter.md"])
            .await;
        assert_eq!(out.status.code(), Some(1), "{model}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("synthesis failed: ") && err.contains(why),
            "{model}: {err}"
        );
        assert!(
            err.contains("gathered sources were written to `Sourdough starter.md` as a sources-only section"),
            "{err}"
        );
        let note = v.read("Sourdough starter.md");
        assert!(note.starts_with(before.trim_end()), "{model}: the note's text is kept");
        let section = &note[note.find("## Research").unwrap()..];
        assert!(
            section.contains("> [!warning] Sources only: the synthesis failed"),
            "{model}: {section}"
        );
        assert!(
            section.contains("](http://127.0.0.1:"),
            "{model}: the gathered sources are listed"
        );
        // Readable: per topic a handful of sources, none listed twice.
        let items: Vec<&str> = section.lines().filter(|l| l.starts_with("- ")).collect();
        let unique: std::collections::HashSet<&&str> = items.iter().collect();
        assert_eq!(unique.len(), items.len(), "{model}: a source listed twice:\n{section}");
        for topic in section.split("\n### ").skip(1) {
            let n = topic.lines().filter(|l| l.starts_with("- ")).count();
            assert!((1..=6).contains(&n), "{model}: {n} sources under one topic:\n{section}");
        }
        // The model was used: named in the footer, never "no language model".
        assert!(
            section.contains(&format!("· {model} ·")) && !section.contains("no language model"),
            "{model}: {section}"
        );
        for leaked in [
            "untrusted-data",
            "You are the research assistant",
            "# Task:",
            "Write the research supplement",
        ] {
            assert!(
                !section.contains(leaked),
                "{model}: `{leaked}` reached the note:\n{section}"
            );
        }
    }

    // Refused once, then a good answer: the note gets the synthesis.
    let retried_before = requests_for(&server, "Your previous answer could not be used").len();
    let v = TestVault::example();
    let out = v
        .cli(
            &fake_env(&server, "fake:echo-prompt-once"),
            &["research", "Sourdough starter.md", "--json"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(result["warnings"].to_string().contains("a first synthesis was refused"));
    let section = v.read("Sourdough starter.md");
    assert!(!section.contains("Sources only") && !section.contains("untrusted-data"));
    let retries = requests_for(&server, "Your previous answer could not be used");
    assert_eq!(retries.len() - retried_before, 1, "one firmer retry");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_echoing_page_extract_is_dropped() {
    let server = fakes().await;
    let v = TestVault::example();
    let out = v
        .cli(
            &fake_env(&server, "fake:echo-page"),
            &["research", "Kombucha.md", "--deep", "--json"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        result["warnings"].to_string().contains("was refused: the answer"),
        "{}",
        result["warnings"]
    );
    let synth = requests_for(&server, "# Task: synthesis").pop().unwrap().to_string();
    assert!(
        !synth.contains("Read from the page:"),
        "no refused extract reaches the synthesis"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_call_is_logged_without_secrets_or_prompts() {
    let server = fakes().await;
    let v = TestVault::example();
    let mut e = fake_env(&server, "fake:reject-schema=ollama");
    e.extend(env(&[
        ("SCHOLIA_LOG", "scholia=info"),
        ("SCHOLIA_LLM_API_KEY", "sk-secret-key-123"),
    ]));
    server.fail_search(2, "500");
    let out = v.cli(&e, &["research", "Kombucha.md"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stderr(&out);
    let calls: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" INFO ") && l.contains("LLM call"))
        .collect();
    assert!(calls.len() >= 2, "{log}");
    for l in &calls {
        assert!(
            l.contains("model=")
                && l.contains("ms=")
                && l.contains("prompt_tokens=")
                && l.contains("completion_tokens="),
            "{l}"
        );
    }
    assert!(
        log.lines().any(|l| l.contains(" INFO ")
            && l.contains("web search")
            && l.contains("provider=")
            && l.contains("results=")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains(" WARN ") && l.contains("web search failed")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains(" WARN ") && l.contains("refused JsonSchema")),
        "{log}"
    );
    assert!(!log.contains("sk-secret-key-123"), "a secret in the log");
    assert!(
        !log.contains("# Task:") && !log.contains("You are the research assistant"),
        "a prompt in the log"
    );
}
