use super::*;
use crate::support::lsp_client::EditPolicy;
use crate::support::{fake_env, fakes};

async fn server_with(v: &TestVault, model: &str) -> (scholia_fakes::FakeServer, LspClient) {
    let fake = fakes().await;
    let c = v.lsp_ready(&fake_env(&fake, model)).await;
    (fake, c)
}

fn research_args(uri: &str, depth: &str) -> Value {
    json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": depth}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn code_actions_are_offered_on_vault_notes() {
    let v = TestVault::example();
    let mut c = ready(&v).await;
    let uri = c.open(&v.path("Kombucha.md"), &v.read("Kombucha.md")).await;
    let r = c
        .request("textDocument/codeAction", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}))
        .await;
    let titles: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    // Offline (no Gemini, no deep-search backend): background research is not offered.
    assert_eq!(titles, vec!["Research this note", "Research this note (deep)"]);
    assert_eq!(r[1]["command"]["arguments"][0]["depth"], "deep");
    let outside = tempfile::tempdir().unwrap();
    let other = c.open(&outside.path().join("x.md"), "# x\n").await;
    let r = c
        .request("textDocument/codeAction", json!({"textDocument": {"uri": other}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}))
        .await;
    assert_eq!(r, Value::Null);
    let bad = c
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "scholia.research", "arguments": [{"uri": uri, "depth": "medium"}]}),
        )
        .await;
    assert_eq!(
        bad["error"]["message"],
        "depth: `medium` is not valid; valid values: shallow, deep"
    );
    let bad = c
        .request_raw("workspace/executeCommand", json!({"command": "scholia.frobnicate"}))
        .await;
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("valid: scholia.research")
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn research_lands_in_the_buffer_while_the_user_types() {
    let v = TestVault::example();
    let (fake, mut c) = server_with(&v, "fake:latency=300").await;
    // Unsaved text: the run must research what the buffer says, not the file.
    let disk = v.read("Sourdough starter.md");
    let buffer = disk.replace(
        "## Open questions",
        "- Koji could replace the starter entirely.\n\n## Open questions",
    );
    let uri = c.open(&v.path("Sourdough starter.md"), &buffer).await;
    let started = Instant::now();
    let r = c
        .request("workspace/executeCommand", research_args(&uri, "shallow"))
        .await;
    assert_eq!(r, Value::Null);
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "executeCommand must return at once"
    );
    // Keep typing at the top while it runs.
    let typed = buffer.replacen("# Sourdough starter", "# Sourdough starter (edited)", 1);
    c.change(&uri, &typed).await;
    let end = c
        .wait_progress_end("Research this note", Duration::from_secs(60))
        .await
        .expect("research ended");
    let message = end["params"]["value"]["message"].as_str().unwrap();
    assert!(message.contains("topics") && message.contains("sources"), "{message}");
    let begin = c
        .notifications
        .iter()
        .find(|n| n["params"]["value"]["title"] == "Research this note")
        .unwrap();
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    let reports = c
        .notifications
        .iter()
        .filter(|n| n["params"]["token"] == begin["params"]["token"] && n["params"]["value"]["kind"] == "report")
        .count();
    assert!(reports >= 3, "topics, sources, synthesis reported: {reports}");

    let (text, _) = c.docs[&uri].clone();
    assert!(
        text.contains("\n# Sourdough starter (edited)\n"),
        "the typing survived: {}",
        &text[..200]
    );
    assert!(text.contains("- Koji could replace the starter entirely."));
    assert!(text.contains("\n## Research\n\n<!-- scholia:research run="), "{text}");
    assert!(text.contains(" -->\n### "), "{text}");
    let topics_prompt = fake.requests("/v1/chat/completions")[0].to_string();
    assert!(
        topics_prompt.contains("Koji could replace the starter"),
        "the unsaved buffer was researched"
    );
    // The editor owns the buffer: the file on disk is untouched.
    assert_eq!(v.read("Sourdough starter.md"), disk);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelled_run_changes_nothing() {
    let v = TestVault::example();
    let (_fake, mut c) = server_with(&v, "fake:latency=1500").await;
    let text = v.read("Kombucha.md");
    let uri = c.open(&v.path("Kombucha.md"), &text).await;
    c.request("workspace/executeCommand", research_args(&uri, "deep")).await;
    let begin = c
        .wait_notification(Duration::from_secs(10), |n| {
            n["params"]["value"]["title"] == "Research this note (deep)"
        })
        .await
        .unwrap();
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": begin["params"]["token"]}),
    )
    .await;
    let end = c
        .wait_progress_end("Research this note (deep)", Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(end["params"]["value"]["message"], "cancelled; the note is unchanged");
    c.pump(Duration::from_millis(300)).await;
    assert!(!c.server_requests.iter().any(|r| r["method"] == "workspace/applyEdit"));
    assert_eq!(c.docs[&uri].0, text);
    assert_eq!(v.read("Kombucha.md"), text);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stale_edit_is_recomputed_once() {
    let v = TestVault::example();
    let (_fake, mut c) = server_with(&v, "fake").await;
    let text = v.read("Kombucha.md");
    let uri = c.open(&v.path("Kombucha.md"), &text).await;
    // The user types just as the edit arrives: the first edit is stale.
    let mut typed_once = false;
    let target = uri.clone();
    c.before_apply = Some(Box::new(move |docs| {
        if typed_once {
            return Vec::new();
        }
        typed_once = true;
        let entry = docs.get_mut(&target).unwrap();
        entry.0 = format!("Typed first.\n{}", entry.0);
        entry.1 += 1;
        vec![json!({"textDocument": {"uri": target, "version": entry.1}, "contentChanges": [{"text": entry.0}]})]
    }));
    c.request("workspace/executeCommand", research_args(&uri, "shallow"))
        .await;
    let end = c
        .wait_progress_end("Research this note", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        !end["params"]["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("failed"),
        "{end}"
    );
    let edits = c
        .server_requests
        .iter()
        .filter(|r| r["method"] == "workspace/applyEdit")
        .count();
    assert_eq!(edits, 2);
    let (final_text, _) = c.docs[&uri].clone();
    assert!(
        final_text.starts_with("Typed first.\n---\n") && final_text.contains("\n## Research\n"),
        "{final_text}"
    );

    // An editor that refuses every edit: reported, nothing written anywhere. (A new claim
    // first, so that the second run has something different to write.)
    c.before_apply = None;
    let changed = final_text.replacen("Typed first.\n", "Typed first.\n- Kombucha needs black tea.\n", 1);
    c.change(&uri, &changed).await;
    c.edit_policy = EditPolicy::Refuse;
    c.request("workspace/executeCommand", research_args(&uri, "shallow"))
        .await;
    c.notifications.clear();
    let message = c.progress_message("Research this note", Duration::from_secs(30)).await;
    assert!(message.contains("rejected the edit twice"), "{message}");
    assert_eq!(v.read("Kombucha.md"), text);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_note_is_written_on_disk() {
    let v = TestVault::example();
    let (_fake, mut c) = server_with(&v, "fake").await;
    let uri = c.open(&v.path("Kombucha.md"), &v.read("Kombucha.md")).await;
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
        .await;
    c.docs.remove(&uri);
    c.request("workspace/executeCommand", research_args(&uri, "shallow"))
        .await;
    c.wait_progress_end("Research this note", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(v.read("Kombucha.md").contains("\n## Research\n"));
    c.shutdown().await;
}

/// Research over a part of `## Research` the owner edited in the buffer (not yet saved): the
/// editor is told why, before anything runs, and gets no edit; the file is untouched.
#[tokio::test(flavor = "multi_thread")]
async fn an_edited_research_part_in_the_buffer_is_refused() {
    let v = TestVault::example();
    let (_fake, mut c) = server_with(&v, "fake").await;
    let on_disk = v.read("Kombucha.md");
    let typed = format!(
        "{on_disk}\n## Research\n\n<!-- scholia:research run=r at=2026-11-29 depth=offline model=none sources=1 above=0123456789abcdef words=0123456789abcdef -->\n- [[Koji]] and my own remark\n\n<!-- /scholia:research -->\n"
    );
    let uri = c.open(&v.path("Kombucha.md"), &typed).await;
    c.request("workspace/executeCommand", research_args(&uri, "shallow"))
        .await;
    let message = c.progress_message("Research this note", Duration::from_secs(30)).await;
    assert!(message.contains("was edited since"), "{message}");
    let edits = c
        .server_requests
        .iter()
        .filter(|r| r["method"] == "workspace/applyEdit")
        .count();
    assert_eq!(edits, 0);
    assert_eq!(c.docs[&uri].0, typed);
    assert_eq!(v.read("Kombucha.md"), on_disk);
    c.shutdown().await;
}
