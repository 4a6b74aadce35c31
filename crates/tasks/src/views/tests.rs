use serde_json::{Value, json};

use super::*;

fn task(kind: Kind, status: Status) -> Task {
    Task {
        id: "t1".into(),
        kind,
        query: "Why is sourdough sour?".into(),
        model: None,
        note: None,
        vault: None,
        status,
        progress: None,
        current_action: None,
        remote_id: None,
        input_tokens: 1200,
        output_tokens: 340,
        cost_usd: 0.5,
        error: None,
        notify: true,
        max_wait_hours: 8.0,
        created_at: 0,
        updated_at: 0,
        completed_at: Some(90_000),
        lease_owner: None,
        lease_until: None,
    }
}

fn results(report: &str) -> Results {
    Results {
        report: report.into(),
        sources: vec![SourceRef {
            url: "https://example.org/a".into(),
            title: "A".into(),
            vault: false,
        }],
        metadata: ResultsMeta {
            mode: "async".into(),
            ..Default::default()
        },
        raw: None,
    }
}

#[test]
fn a_start_says_what_the_task_really_is() {
    let check = |kind: Kind, status: Status, expected_status: &str, expected_summary: &str| {
        let started = TaskStarted::of(&task(kind, status));
        let v = serde_json::to_value(&started).unwrap();
        assert_eq!(v["status"], expected_status);
        assert_eq!(v["mode"], "async");
        assert_eq!(v["check_status_command"], "check_research_status(task_id='t1')");
        assert!(v.get("note").is_none());
        assert_eq!(started.summary(), expected_summary);
    };
    check(
        Kind::Gemini,
        Status::Running,
        "running_async",
        "started gemini task t1 (running_async)",
    );
    check(
        Kind::DeepSearch,
        Status::Pending,
        "pending",
        "started deep-search task t1 (pending)",
    );
}

#[test]
fn a_status_reports_minutes_tokens_and_cost() {
    let mut t = task(Kind::DeepSearch, Status::Running);
    t.current_action = Some("searching the web".into());
    let s = TaskStatus::of(t);
    assert_eq!(s.elapsed_minutes, 1.5);
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["status"], "running_async");
    assert_eq!(v["tokens_used"], json!({"input": 1200, "output": 340}));
    assert_eq!(v["progress"], Value::Null, "never invented");
    assert_eq!(
        s.summary(),
        "t1 running_async · 1.5 min · 1200 in / 340 out tokens · $0.50 · searching the web"
    );
}

#[test]
fn results_are_cut_with_the_way_to_the_whole() {
    let check = |chars: usize, truncated: bool| {
        let report = "x".repeat(chars);
        let r = TaskResults::of(task(Kind::Gemini, Status::Completed), results(&report), true);
        assert_eq!(r.report_chars, chars);
        assert_eq!(r.report_truncated, truncated);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v.get("report_truncated").is_some(), truncated);
        match truncated {
            true => {
                assert!(r.report.starts_with(&"x".repeat(MAX_REPORT_CHARS)));
                assert!(!r.report.starts_with(&"x".repeat(MAX_REPORT_CHARS + 1)));
                assert!(
                    r.report.contains("scholia tasks save t1"),
                    "{}",
                    &r.report[MAX_REPORT_CHARS..]
                );
                assert!(r.summary().contains("(cut at 18000)"));
            }
            false => assert_eq!(r.report, report),
        }
    };
    check(0, false);
    check(MAX_REPORT_CHARS, false);
    check(MAX_REPORT_CHARS + 1, true);
}

#[test]
fn sources_are_left_out_only_when_asked() {
    let with = TaskResults::of(task(Kind::Gemini, Status::Completed), results("r"), true);
    let without = TaskResults::of(task(Kind::Gemini, Status::Completed), results("r"), false);
    assert_eq!(
        serde_json::to_value(&with).unwrap()["sources"][0]["url"],
        "https://example.org/a"
    );
    assert!(serde_json::to_value(&without).unwrap().get("sources").is_none());
    assert_eq!(with.summary(), "t1 completed: 1 characters of report, 1 sources");
    assert_eq!(without.summary(), "t1 completed: 1 characters of report");
}

#[test]
fn a_cancel_says_what_was_kept_and_what_failed() {
    let mut t = task(Kind::Gemini, Status::Cancelled);
    assert_eq!(
        TaskCancelled::of(t.clone(), true).summary(),
        "t1 cancelled (cost so far $0.50), partial results kept"
    );
    t.error = Some("the provider did not confirm the cancel".into());
    let c = TaskCancelled::of(t, false);
    assert_eq!(serde_json::to_value(&c).unwrap()["status"], "cancelled");
    assert_eq!(
        c.summary(),
        "t1 cancelled (cost so far $0.50); the provider did not confirm the cancel"
    );
}

#[test]
fn a_list_shows_one_line_per_task() {
    assert!(TaskList::of(vec![]).summary().starts_with("no tasks yet"));
    let mut note = task(Kind::ResearchNote, Status::Running);
    note.note = Some("Sourdough.md".into());
    note.query = String::new();
    let list = TaskList::of(vec![note, task(Kind::Gemini, Status::Completed)]);
    assert_eq!(list.summary(), "2 tasks, 1 still running");
    assert_eq!(
        list.lines(),
        [
            "t1 running_async     research-note Sourdough.md",
            "t1 completed         gemini        Why is sourdough sour?"
        ]
    );
}

#[test]
fn estimated_progress_grows_and_stays_below_100_until_done() {
    // (elapsed, likely, max) → (percent, minutes to go)
    let check = |e: f64, expected: (u8, Option<f64>)| assert_eq!(estimated_progress(e, 10.0, 20.0), expected, "{e}");
    check(0.0, (0, Some(10.0)));
    check(5.0, (45, Some(5.0)));
    check(10.0, (90, Some(10.0)));
    check(15.0, (93, Some(5.0)));
    check(600.0, (98, None));
    check(1e9, (98, None));
}

#[test]
fn a_gemini_status_estimates_progress_and_says_so() {
    let mut t = task(Kind::Gemini, Status::Running);
    t.completed_at = None;
    t.created_at = now_ms() - 2 * 60_000;
    t.query = "What is a levain?".into();
    let s = TaskStatus::of(t.clone());
    // "What is a levain?" is simple: likely 5 minutes, so 2 minutes in is 36 %.
    assert_eq!((s.progress, s.progress_estimated), (Some(36), true));
    assert_eq!(s.estimated_completion_minutes, Some(3.0));
    assert!(s.summary().contains("~36%, ~3 min to go"), "{}", s.summary());
    // The provider's own figure wins and is not marked as an estimate.
    t.progress = Some(65);
    let s = TaskStatus::of(t.clone());
    assert_eq!(
        (s.progress, s.progress_estimated, s.estimated_completion_minutes),
        (Some(65), false, None)
    );
    // Only a completed task is at 100.
    let done = TaskStatus::of(task(Kind::Gemini, Status::Completed));
    assert_eq!(
        (done.progress, done.estimated_completion_minutes),
        (Some(100), Some(0.0))
    );
    let failed = TaskStatus::of(task(Kind::Gemini, Status::Failed));
    assert_eq!(failed.progress, None);
}

#[test]
fn a_sync_start_carries_the_results() {
    let mut t = task(Kind::Gemini, Status::Completed);
    t.cost_usd = 1.25;
    let s = TaskStarted::sync(t, results("# Report\n\nBody [1]."));
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["mode"], "sync");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["cost_usd"], 1.25);
    assert!(v["results"]["report"].as_str().unwrap().starts_with("# Report"));
    assert!(v["results"]["sources"].is_array());
    assert!(s.summary().contains("completed at once"), "{}", s.summary());
    let asynchronous = serde_json::to_value(TaskStarted::of(&task(Kind::Gemini, Status::Running))).unwrap();
    assert_eq!(asynchronous["mode"], "async");
    assert!(asynchronous.get("results").is_none());
}
