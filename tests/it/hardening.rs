//! Untrusted vaults, pages and model output: each point of the hardening review has its test
//! here (or beside the code it covers, named in the closing note).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TestVault, env, fake_env, fake_gemini, fakes, stderr};

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn gemini(v: &TestVault, scenario: &str, log: &Path) -> scholia::gemini_cli::GeminiCli {
    let vars: std::collections::HashMap<String, String> = env(&[
        ("PATH", &std::env::var("PATH").unwrap()),
        ("GEMINI_FAKE_SCENARIO", scenario),
        ("GEMINI_FAKE_LOG", log.to_str().unwrap()),
    ])
    .into_iter()
    .collect();
    let child = scholia::gemini_cli::ChildEnv::allowlisted(&vars);
    scholia::gemini_cli::GeminiCli::new(fake_gemini().to_str().unwrap(), &v.home.join("config"), child)
}

fn logged_pids(log: &Path) -> Vec<i32> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["pid"].as_i64().unwrap() as i32)
        .collect()
}

/// Dropping a run's future (an aborted job, a panic) kills the CLI's whole process group.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_gemini_run_leaves_no_process_behind() {
    let v = TestVault::empty();
    let log = v.home.join("gemini.jsonl");
    let cli = std::sync::Arc::new(gemini(&v, "hang", &log));
    let c = cli.clone();
    let run = tokio::spawn(async move {
        let cancel = tokio_util::sync::CancellationToken::new();
        c.run("q", None, scholia::gemini_cli::Purpose::Search, &cancel).await
    });
    let started = Instant::now();
    while logged_pids(&log).is_empty() && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = logged_pids(&log)[0];
    assert!(alive(pid));
    run.abort();
    let _ = run.await;
    let gone = Instant::now();
    while alive(pid) && gone.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the CLI outlived its dropped run");
    // Its private directory went with it.
    let runs = v.home.join("config/gemini-cli");
    let left = std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "run directories left in {runs:?}");
}

/// A child of the CLI that keeps stderr open cannot hold the run past the CLI's exit.
#[tokio::test(flavor = "multi_thread")]
async fn stderr_held_open_by_a_child_does_not_hang_a_run() {
    let v = TestVault::empty();
    let log = v.home.join("gemini.jsonl");
    let cli = gemini(&v, "valid,orphan-stderr", &log);
    let cancel = tokio_util::sync::CancellationToken::new();
    let started = Instant::now();
    let out = cli
        .run(
            "You are the research assistant. what is koji?",
            None,
            scholia::gemini_cli::Purpose::Search,
            &cancel,
        )
        .await
        .unwrap();
    assert!(!out.response.is_empty());
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// `user:password@` in a base URL never reaches a log line or an error message.
#[tokio::test(flavor = "multi_thread")]
async fn credentials_in_a_base_url_are_never_shown() {
    let v = TestVault::example();
    let vars = env(&[
        ("SCHOLIA_LLM_BASE_URL", "http://alice:hunter2@127.0.0.1:9/v1"),
        ("SCHOLIA_LLM_MODEL", "m"),
        ("SCHOLIA_LOG", "scholia=debug"),
    ]);
    let out = v.cli(&vars, &["research", "Kombucha.md"]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("LLM at http://127.0.0.1:9/v1 is unreachable"), "{err}");
    assert!(!err.contains("hunter2") && !err.contains("alice"), "{err}");
}

/// The page fetcher never goes through a proxy from the environment (a proxy would resolve
/// and connect past the address check).
#[tokio::test(flavor = "multi_thread")]
async fn page_fetches_ignore_proxy_variables() {
    let server = fakes().await;
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((_conn, _)) = proxy.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let v = TestVault::empty();
    let mut vars = env(&[("SCHOLIA_ALLOW_PRIVATE_HOSTS", "1")]);
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        vars.push((name.into(), proxy_url.clone()));
    }
    let url = format!("{}/pages/mozilla-1/", server.base());
    let out = v.cli(&vars, &["fetch", &url]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(hits.load(std::sync::atomic::Ordering::Relaxed), 0, "the proxy was used");
}

/// Only regular files are notes: a directory or a FIFO named like a note is refused (reading a
/// FIFO would block forever).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn uris_that_are_not_regular_files_are_refused() {
    let v = TestVault::example();
    std::fs::create_dir(v.path("folder.md")).unwrap();
    let fifo = v.path("pipe.md");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let mut c = v.lsp_ready(&Vec::new()).await;
    for name in ["folder.md", "pipe.md"] {
        let uri = crate::support::lsp_client::file_uri(&v.path(name));
        let r = c
            .request_raw(
                "workspace/executeCommand",
                json!({"command": "scholia.research", "arguments": [{"uri": uri}]}),
            )
            .await;
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("is not a note of the vault"),
            "{name}: {r}"
        );
    }
    c.shutdown().await;
    let out = v.cli(&Vec::new(), &["research", "pipe.md"]).await;
    assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
}

/// Offline research of obsidian-help notes whose passages are full of wikilinks, HTML,
/// callouts, code and URLs: they stay words inside the section. The Callouts note (en); a note
/// added to ru naming Каталог сообщества (so that its entry is whole, whatever the ranking),
/// whose sentence `[[Каталог сообщества|каталоге сообщества Obsidian]](https://community.obsidian.md)`
/// reads as `Obsidian(https://…)`: its URL, glued to a word, was quoted bare and the research
/// failed ("would link to https://community.obsidian.md"). The Importer note quoted it until
/// the ranking put that entry on the brief line.
#[tokio::test(flavor = "multi_thread")]
async fn quoted_passages_cannot_make_links_html_or_callouts() {
    let pages = "# Страницы плагинов\n\nКаталог сообщества: у каждого плагина и темы есть публичная страница.\n";
    for (lang, rel, added, quoted) in [
        ("en", "Editing and formatting/Callouts.md", None, None),
        (
            "ru",
            "Страницы плагинов.md",
            Some(pages),
            Some("`Obsidian(https://community.obsidian.md).`"),
        ),
    ] {
        let v = TestVault::empty();
        crate::support::copy_dir(&crate::support::obsidian_help().join(lang), &v.root);
        make_writable(&v.root);
        if let Some(text) = added {
            std::fs::write(v.root.join(rel), text).unwrap();
        }
        let before = v.read(rel);
        let out = v.cli(&Vec::new(), &["research", rel]).await;
        assert!(out.status.success(), "{rel}: {}", stderr(&out));
        let after = v.read(rel);
        assert!(
            after.starts_with(before.trim_end()),
            "the note before the section is kept"
        );
        let body = &after[after.find("\n## Research\n").unwrap() + "\n## Research\n".len()..];
        let body = &scholia::vault::stamp::unmarked(body);
        scholia::vault::contain::check("Research", 2, body, &scholia::vault::contain::Links::none()).unwrap();
        for line in body.lines().filter(|l| l.trim_start().starts_with('>')) {
            let unescaped = |pat: &str| line.match_indices(pat).any(|(i, _)| !line[..i].ends_with('\\'));
            assert!(!unescaped("[[") && !unescaped("<") && !unescaped("[!"), "{line}");
        }
        if let Some(quoted) = quoted {
            assert!(body.contains(quoted), "{rel}:\n{body}");
        }
    }
}

fn make_writable(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).unwrap();
        if path.is_dir() {
            make_writable(&path);
        }
    }
}

mod properties;

/// A vault's `.scholia.toml` cannot run a program, pick an endpoint or send a credential until
/// the user trusts the vault; the warning names the keys and the command.
#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_vault_cannot_run_programs_or_redirect_secrets() {
    use std::os::unix::fs::PermissionsExt;
    let server = fakes().await;
    let v = TestVault::example();
    let marker = v.home.join("evil-ran");
    let evil = v.home.join("evil.sh");
    std::fs::write(&evil, format!("#!/bin/sh\ntouch {}\necho 0.9.0\n", marker.display())).unwrap();
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    v.write(
        ".scholia.toml",
        &format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"fake\"\napi_key_env = \"GITHUB_TOKEN\"\n\n[deep_search]\ngemini_cli = \"{}\"\nmax_iterations = \"2\"\n",
            server.base(),
            evil.display()
        ),
    );
    let vars = env(&[("GITHUB_TOKEN", "ghp_secret"), ("SCHOLIA_ALLOW_PRIVATE_HOSTS", "1")]);
    let out = v.cli(&vars, &["deep-search", "koji", "--json"]).await;
    let err = stderr(&out);
    assert!(!marker.exists(), "the vault ran a program");
    assert!(
        err.contains("scholia: warning:")
            && err.contains(
                "llm.base_url, llm.model, llm.api_key_env, deep_search.max_iterations, deep_search.gemini_cli"
            )
            && err.contains("scholia trust"),
        "{err}"
    );
    assert_eq!(err.matches("scholia: warning:").count(), 1, "one warning");
    let out = v.cli(&vars, &["research", "Kombucha.md", "--json"]).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["mode"], "offline", "no endpoint from the vault");
    assert!(
        server.requests("/v1/chat/completions").is_empty(),
        "nothing was sent with the token"
    );

    // Trusted by the user: honoured, until the file changes.
    let out = v.cli(&vars, &["trust"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = v.cli(&vars, &["research", "Kombucha.md", "--json"]).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["mode"], "llm", "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"));
    let text = v.read(".scholia.toml") + "# edited\n";
    v.write(".scholia.toml", &text);
    let out = v.cli(&vars, &["research", "Kombucha.md", "--json"]).await;
    assert!(
        stderr(&out).contains("scholia trust"),
        "an edited file needs trusting again"
    );
}

/// In the editor: one message offering to trust the vault; nothing is trusted unless chosen.
#[tokio::test(flavor = "multi_thread")]
async fn the_editor_offers_to_trust_the_vault_once() {
    let v = TestVault::with_files(&[("Koji.md", "# Koji\n\nHow long does koji take?\n")]);
    v.write(
        ".scholia.toml",
        &format!(
            "[deep_search]\ngemini_cli = \"{}\"\nmax_iterations = \"2\"\n",
            fake_gemini().display()
        ),
    );
    let query = json!({"command": "scholia.deepSearch", "arguments": [{"uri": crate::support::lsp_client::file_uri(&v.path("Koji.md")), "query": "How long does koji take?"}]});
    // Dismissed: the CLI the vault names is not used.
    let mut c = v.lsp_ready(&Vec::new()).await;
    c.pump(Duration::from_millis(300)).await;
    let offers: Vec<&Value> = c
        .server_requests
        .iter()
        .filter(|r| r["method"] == "window/showMessageRequest")
        .collect();
    assert_eq!(offers.len(), 1, "offered once");
    let message = offers[0]["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("deep_search.gemini_cli") && message.contains("scholia trust"),
        "{message}"
    );
    let r = c.request_raw("workspace/executeCommand", query.clone()).await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the Gemini CLI `gemini` was not found"),
        "{r}"
    );
    assert!(
        !v.home.join("config/trusted-vaults.toml").exists(),
        "never trusted silently"
    );
    c.shutdown().await;

    // Accepted: trusted, and the vault's CLI is used.
    let mut c = v.lsp_with(&env(&[("PATH", &std::env::var("PATH").unwrap())])).await;
    c.message_action = Some("Trust this vault".into());
    c.wait_progress_end("Indexing vault", Duration::from_secs(30))
        .await
        .unwrap();
    c.wait_notification(Duration::from_secs(10), |n| {
        n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap_or("").contains("trusted")
    })
    .await
    .expect("trusted");
    c.open(&v.path("Koji.md"), &v.read("Koji.md")).await;
    c.request("workspace/executeCommand", query).await;
    let message = c
        .progress_message("Deep search selection", Duration::from_secs(30))
        .await;
    assert!(message.starts_with("verified"), "{message}");
    assert!(v.home.join("config/trusted-vaults.toml").exists());
    c.shutdown().await;
}

/// A model answer that tries every way out of its section lands neutralised inside it; the rest
/// of the note, and its outline, are untouched.
#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_synthesis_stays_inside_the_section() {
    let server = fakes().await;
    let v = TestVault::example();
    v.write(
        "Kombucha.md",
        "# Kombucha\n\n- Kombucha is fermented by a SCOBY.\n\n## Research\n\nold\n\n## Log\n\n<div>\nuser html\n</div>\n",
    );
    let out = v
        .cli(&fake_env(&server, "fake:hostile"), &["research", "Kombucha.md"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = v.read("Kombucha.md");
    assert!(
        text.starts_with("# Kombucha\n\n- Kombucha is fermented by a SCOBY.\n\n## Research\n\n"),
        "{text}"
    );
    assert!(text.ends_with("\n\n## Log\n\n<div>\nuser html\n</div>\n"), "{text}");
    let headings: Vec<(u8, String)> = scholia::vault::parse::headings(&text)
        .into_iter()
        .filter(|h| h.top_level && h.level <= 2)
        .map(|h| (h.level, h.text))
        .collect();
    assert_eq!(
        headings,
        [
            (1, "Kombucha".to_string()),
            (2, "Research".to_string()),
            (2, "Log".to_string())
        ]
    );
    let range = scholia::vault::section::find(&text, "Research", 2).unwrap().unwrap();
    let body = &text[range][text.find("## Research").map(|_| "## Research\n".len()).unwrap()..];
    // Every link left points at the fake web the run searched.
    let gathered = scholia::research::citations::linked_urls(body)
        .into_iter()
        .filter(|u| u.starts_with(&server.base()));
    scholia::vault::contain::check(
        "Research",
        2,
        &scholia::vault::stamp::unmarked(body),
        &scholia::vault::contain::Links::from_urls(gathered),
    )
    .unwrap();
    assert!(
        body.contains("### Escaped section") && body.contains("\\<div>") && !body.contains("![["),
        "{body}"
    );
}

/// Research with each remote call failing in turn — 429 with odd `Retry-After`, 5xx, a call
/// that never answers, malformed JSON, a body cut off mid-way — ends in a clear error or a
/// skipped source: never a panic, never a changed note.
#[tokio::test(flavor = "multi_thread")]
async fn every_remote_call_failing_in_turn() {
    use scholia::engine::{DiskWriter, Engine, Job};
    use scholia::error::ErrorKind;
    use scholia::index::VaultSession;
    use scholia::research::note::Depth;

    let server = fakes().await;
    let v = TestVault::example();
    let note = "# Faults\n\n- Mozilla builds the Firefox browser.\n- Wikipedia is edited by volunteers.\n";
    const LLM_FAULTS: [&str; 9] = [
        "429;NaN",
        "429;-1",
        "429;1e309",
        "429;99999999999999999999",
        "429;Fri, 31 Dec 9999 23:59:59 GMT",
        "500",
        "stall",
        "malformed",
        "truncated",
    ];
    // Deep research of two topics: topics (call 1), page extractions (2..=5), synthesis (6).
    const CALLS: [u32; 3] = [1, 2, 6];
    let mut runs = Vec::new();
    for (i, fault) in LLM_FAULTS.iter().enumerate() {
        for call in CALLS {
            let name = format!("Faults {i}-{call}.md");
            v.write(&name, note);
            runs.push((name, format!("fake:fail-call={call},fault={fault}")));
        }
    }
    v.write(
        ".scholia.toml",
        "[llm]\ntimeout_secs = 5\n\n[search]\ntimeout_secs = 5\n",
    );
    let (root, dirs) = (v.root.clone(), v.dirs());
    let session = std::sync::Arc::new(
        tokio::task::spawn_blocking(move || VaultSession::open_synced(&root, &dirs, &mut |_| {}).unwrap().0)
            .await
            .unwrap(),
    );
    let env_for = |model: &str| -> std::collections::HashMap<String, String> {
        let mut e: std::collections::HashMap<String, String> = fake_env(&server, model).into_iter().collect();
        e.extend(v.env(&Vec::new()));
        e
    };
    let research = |name: String, model: String, page_timeout: Duration| {
        let (session, env, root) = (session.clone(), env_for(&model), v.root.clone());
        async move {
            let engine = Engine::load(&env, Some(&root), None)
                .unwrap()
                .with_page_timeout(page_timeout);
            let job = Job::detached();
            let path = engine.resolve_note(&session, &name, None).await.unwrap();
            let before = std::fs::read_to_string(&path.abs).unwrap();
            let r = engine
                .research_note(&session, &path, Depth::Deep, None, &DiskWriter, &job)
                .await;
            let after = std::fs::read_to_string(&path.abs).unwrap();
            (format!("{name} {model}"), r, before, after)
        }
    };
    let check = |(what, r, before, after): (
        String,
        Result<scholia::engine::ResearchOutcome, scholia::error::Error>,
        String,
        String,
    )| {
        match r {
            Ok(o) => {
                let kept = before.split("\n## Research\n").next().unwrap().trim_end();
                assert!(
                    after.starts_with(kept) || !o.written,
                    "{what}: text before the section changed"
                );
                assert!(after.contains("\n## Research\n"), "{what}");
            }
            Err(e) => {
                assert_ne!(e.kind, ErrorKind::Internal, "{what}: {e:?}");
                assert!(
                    !e.message.is_empty() && !e.message.contains("panicked"),
                    "{what}: {e:?}"
                );
                if e.message.contains("as a sources-only section") {
                    // Synthesis failed after gathering: the sources, clearly labelled, and the
                    // note above the section untouched.
                    assert!(after.starts_with(before.trim_end()), "{what}: the note changed");
                    assert!(after.contains("> [!warning] Sources only"), "{what}");
                } else {
                    assert_eq!(after, before, "{what}: a failed run changed the note ({e})");
                }
            }
        }
    };
    let started = Instant::now();
    let results = futures_util::future::join_all(
        runs.into_iter()
            .map(|(name, model)| research(name, model, Duration::from_secs(10))),
    )
    .await;
    let (mut ok, mut failed) = (0, 0);
    for r in results {
        if r.1.is_ok() {
            ok += 1
        } else {
            failed += 1
        }
        check(r);
    }
    assert!(
        ok > 0 && failed > 0,
        "some runs skip a source, some fail: {ok} ok, {failed} failed"
    );

    // Web searches and page fetches, one at a time (the fakes count them globally).
    v.write("Faults.md", note);
    for fault in [
        "429:NaN",
        "429:-5",
        "429:18446744073709551615",
        "500",
        "stall",
        "truncated",
        "malformed",
    ] {
        for nth in [1, 2] {
            server.reset_faults();
            server.fail_search(nth, fault);
            check(research("Faults.md".into(), "fake".into(), Duration::from_secs(10)).await);
        }
    }
    for fault in ["500", "stall", "truncated", "malformed", "429:NaN"] {
        server.reset_faults();
        server.fail_page(1, fault);
        check(research("Faults.md".into(), "fake".into(), Duration::from_secs(1)).await);
    }
    server.reset_faults();
    eprintln!("fault injection: {} runs in {:?}", 27 + 14 + 5, started.elapsed());
}

/// Whatever produced it (here a user's own template), a section that would not stay inside
/// `## Research` is refused with a clear error; the note is untouched.
#[tokio::test(flavor = "multi_thread")]
async fn an_uncontained_section_is_refused() {
    let v = TestVault::example();
    let templates = v.home.join("config/templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(
        templates.join("research-offline.md"),
        "## Escape\n\n*{{ provenance }}*\n",
    )
    .unwrap();
    let before = v.read("Kombucha.md");
    let out = v.cli(&Vec::new(), &["research", "Kombucha.md"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the text to write into `## Research` would start a new section (`Escape`)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(v.read("Kombucha.md"), before);
}

/// Search and LLM responses are read with a size cap: a 20 MB answer is refused, not buffered.
#[tokio::test(flavor = "multi_thread")]
async fn oversized_responses_are_refused() {
    let server = fakes().await;
    let v = TestVault::example();
    let out = v
        .cli(
            &fake_env(&server, "fake:fail-call=1,fault=huge"),
            &["research", "Kombucha.md"],
        )
        .await;
    assert!(stderr(&out).contains("larger than 16777216 bytes"), "{}", stderr(&out));
    server.fail_search(1, "huge");
    let out = v
        .cli(&fake_env(&server, "fake"), &["research", "Kombucha.md", "--json"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = result["warnings"].to_string();
    assert!(warnings.contains("larger than 4194304 bytes"), "{warnings}");
    server.reset_faults();
}
