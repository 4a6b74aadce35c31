use std::time::Duration;

use scholia_providers::llm::Price;

use super::*;

fn open(dir: &Path) -> Tasks {
    let price = Price {
        input: 2.0,
        output: 12.0,
    };
    Tasks::open(dir, None, Duration::from_millis(10), price).unwrap()
}

fn request(kind: Kind, query: &str) -> StartRequest {
    StartRequest {
        query: query.into(),
        kind,
        notify: false,
        max_wait_hours: 8.0,
        model: None,
        note: None,
    }
}

#[test]
fn a_start_request_names_what_is_wrong() {
    let note = TaskNote {
        vault: "/v".into(),
        rel: "a.md".into(),
    };
    let check = |req: StartRequest, expected: Result<(), &str>| {
        let got = req.check().map_err(|e| e.to_string());
        match expected {
            Ok(()) => assert!(got.is_ok(), "{got:?}"),
            Err(part) => assert!(got.as_ref().is_err_and(|e| e.contains(part)), "{got:?} lacks {part}"),
        }
    };
    check(request(Kind::DeepSearch, "Why?"), Ok(()));
    check(request(Kind::DeepSearch, "  "), Err("query: empty"));
    check(request(Kind::ResearchNote, ""), Err("note: missing"));
    check(
        StartRequest {
            note: Some(note.clone()),
            ..request(Kind::ResearchNote, "")
        },
        Ok(()),
    );
    check(
        StartRequest {
            note: Some(note),
            ..request(Kind::Gemini, "q")
        },
        Err("note: only a research-note task"),
    );
    check(
        StartRequest {
            max_wait_hours: 0.0,
            ..request(Kind::DeepSearch, "q")
        },
        Err("max_wait_hours: 0 is not valid; valid: a number of hours from 0.1 to 72"),
    );
    check(
        StartRequest {
            model: Some("--yolo".into()),
            ..request(Kind::DeepSearch, "q")
        },
        Err("model: `--yolo`"),
    );
    check(
        request(Kind::DeepSearch, &"x".repeat(20_001)),
        Err("query: longer than 20,000"),
    );
}

#[tokio::test]
async fn a_task_from_start_to_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = open(dir.path());
    let t = tasks
        .start(request(Kind::DeepSearch, "  Why is rye sour?  "))
        .await
        .unwrap();
    assert_eq!((t.status, t.query.as_str()), (Status::Pending, "Why is rye sour?"));
    let s = tasks.status(&t.id).await.unwrap();
    assert_eq!(
        (s.status, s.current_action.as_deref()),
        (Status::Pending, Some("queued"))
    );
    let e = tasks.results(&t.id).await.unwrap_err().to_string();
    assert!(e.contains("has not completed yet (status: pending)"), "{e}");
    let (cancelled, kept) = tasks.cancel(&t.id, true).await.unwrap();
    assert_eq!((cancelled.status, kept), (Status::Cancelled, false));
    let e = tasks.results(&t.id).await.unwrap_err().to_string();
    assert!(e.contains("cancelled, without results"), "{e}");
    let e = tasks.cancel(&t.id, true).await.unwrap_err().to_string();
    assert!(e.contains("already cancelled"), "{e}");
    assert_eq!(tasks.list(10).await.unwrap()[0].id, t.id);
    let e = tasks.status("nope").await.unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
    let e = tasks.start(request(Kind::Gemini, "q")).await.unwrap_err().to_string();
    assert!(e.contains("GEMINI_API_KEY"), "{e}");
}

/// The runner may record the provider's `cancelled` with an empty report before `cancel`
/// stores nothing: the answer is the same either way.
#[tokio::test]
async fn a_cancelled_task_with_an_empty_report_has_no_results() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = open(dir.path());
    let t = tasks.start(request(Kind::DeepSearch, "q")).await.unwrap();
    let empty = Results {
        report: " \n".into(),
        sources: vec![],
        metadata: Default::default(),
        raw: None,
    };
    tasks
        .store
        .finish(&t.id, None, Status::Cancelled, Some(empty), |_| {})
        .await
        .unwrap();
    let e = tasks.results(&t.id).await.unwrap_err().to_string();
    assert!(e.contains("cancelled, without results"), "{e}");
}

/// A runner that polled Gemini while the task was being cancelled sees Gemini's `cancelled`
/// with what was written so far; recording it after the cancel must not bring back a partial
/// report the caller declined.
#[tokio::test]
async fn a_runner_recording_the_end_after_a_cancel_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = open(dir.path());
    let t = tasks.start(request(Kind::DeepSearch, "q")).await.unwrap();
    let (cancelled, kept) = tasks.cancel(&t.id, false).await.unwrap();
    assert_eq!((cancelled.status, kept), (Status::Cancelled, false));
    let late = Results {
        report: "# Notes so far\n\nThe research was not finished.".into(),
        sources: vec![],
        metadata: Default::default(),
        raw: None,
    };
    let recorded = tasks
        .store
        .finish(&t.id, None, Status::Cancelled, Some(late), |_| {})
        .await
        .unwrap();
    assert!(recorded.is_none(), "a finished task was finished again");
    let e = tasks.results(&t.id).await.unwrap_err().to_string();
    assert!(e.contains("cancelled, without results"), "{e}");
}
