use std::time::Duration;

use serde_json::json;

use super::*;

fn open(dir: &std::path::Path, owner: &str) -> Calls {
    Calls::new(Store::open(dir).unwrap(), owner.to_string(), Duration::from_secs(30))
}

fn new<'a>(tool: &'a str, args: &'a serde_json::Value, ttl: Duration) -> NewCall<'a> {
    NewCall {
        tool,
        arguments: args,
        vault: Some("/vault"),
        ttl,
        poll: Duration::from_secs(2),
    }
}

#[tokio::test]
async fn a_call_lives_from_working_to_its_result_for_any_reader() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (open(dir.path(), "a"), open(dir.path(), "b"));
    let args = json!({"path": "Koji.md", "depth": "deep"});
    let call = a.create(new("research_note", &args, DEFAULT_TTL)).await.unwrap();
    assert!(call.id.starts_with("call-"));
    assert_eq!(call.status, CallStatus::Working);
    a.progress(&call.id, "Reading pages: topic 2 of 5", Some(40))
        .await
        .unwrap();
    // Another process reads the same call.
    let seen = b.get(&call.id).await.unwrap();
    assert_eq!(seen.message.as_deref(), Some("Reading pages: topic 2 of 5"));
    assert_eq!(seen.percent, Some(40));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&seen.arguments).unwrap(),
        args
    );
    // Only the holder ends it, once.
    assert!(
        b.finish(&call.id, Ending::Completed(json!({"x": 1})))
            .await
            .unwrap()
            .is_none()
    );
    let done = a
        .finish(&call.id, Ending::Completed(json!({"x": 1})))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, CallStatus::Completed);
    assert_eq!(done.result.as_deref(), Some(r#"{"x":1}"#));
    assert!(
        a.finish(&call.id, Ending::Completed(json!({"x": 2})))
            .await
            .unwrap()
            .is_none()
    );
    // Progress after the end changes nothing.
    a.progress(&call.id, "late", Some(99)).await.unwrap();
    assert_eq!(b.get(&call.id).await.unwrap().message.as_deref(), Some("completed"));
    // Cancelling an ended call says so.
    let err = b.cancel(&call.id).await.unwrap_err();
    assert!(
        matches!(
            err,
            TaskError::AlreadyFinished {
                status: "completed",
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_cancel_from_another_process_reaches_the_driver_at_its_next_renewal() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (open(dir.path(), "a"), open(dir.path(), "b"));
    let args = json!({"query": "q"});
    let one = a.create(new("deep_search", &args, DEFAULT_TTL)).await.unwrap();
    let two = a.create(new("deep_search", &args, DEFAULT_TTL)).await.unwrap();
    assert_eq!(b.cancel(&one.id).await.unwrap().status, CallStatus::Cancelled);
    let gone = a.renew(vec![one.id.clone(), two.id.clone()]).await.unwrap();
    assert_eq!(gone, vec![one.id.clone()]);
    // The driver's late result does not undo the cancel.
    assert!(a.finish(&one.id, Ending::Completed(json!({}))).await.unwrap().is_none());
    assert_eq!(b.get(&one.id).await.unwrap().status, CallStatus::Cancelled);
}

#[tokio::test]
async fn a_released_or_dead_drivers_calls_are_taken_over_in_the_same_vault_only() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (open(dir.path(), "a"), open(dir.path(), "b"));
    let args = json!({"query": "q"});
    let mine = a.create(new("deep_search", &args, DEFAULT_TTL)).await.unwrap();
    let other_vault = a
        .create(NewCall {
            vault: Some("/elsewhere"),
            ..new("deep_search", &args, DEFAULT_TTL)
        })
        .await
        .unwrap();
    let unoffered = a.create(new("search", &args, DEFAULT_TTL)).await.unwrap();
    let tools = vec!["deep_search".to_string()];
    // Held: nothing to take.
    assert!(
        b.take_over(Some("/vault".into()), tools.clone())
            .await
            .unwrap()
            .is_empty()
    );
    a.release().await.unwrap();
    let taken = b.take_over(Some("/vault".into()), tools.clone()).await.unwrap();
    assert_eq!(
        taken.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        vec![mine.id.as_str()]
    );
    assert_eq!(taken[0].resumed, 1);
    // The first driver lost it: its result is not written, the taker's is.
    assert!(
        a.finish(&mine.id, Ending::Completed(json!({"by": "a"})))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(a.renew(vec![mine.id.clone()]).await.unwrap(), vec![mine.id.clone()]);
    let done = b
        .finish(&mine.id, Ending::Completed(json!({"by": "b"})))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.result.as_deref(), Some(r#"{"by":"b"}"#));
    assert_eq!(b.get(&other_vault.id).await.unwrap().status, CallStatus::Working);
    assert_eq!(b.get(&unoffered.id).await.unwrap().status, CallStatus::Working);
}

#[tokio::test]
async fn a_call_past_its_time_to_live_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let a = open(dir.path(), "a");
    let args = json!({});
    let short = a
        .create(new("deep_search", &args, Duration::from_millis(1)))
        .await
        .unwrap();
    let long = a.create(new("deep_search", &args, DEFAULT_TTL)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(matches!(a.get(&short.id).await, Err(TaskError::Unknown(_))));
    assert!(a.get(&long.id).await.is_ok());
    assert!(matches!(a.cancel(&short.id).await, Err(TaskError::Unknown(_))));
}

#[tokio::test]
async fn a_failed_call_keeps_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = open(dir.path(), "a");
    let args = json!({});
    let call = a.create(new("deep_search", &args, DEFAULT_TTL)).await.unwrap();
    let failed = a
        .finish(
            &call.id,
            Ending::Failed {
                code: -32603,
                message: "the vault is gone".into(),
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, CallStatus::Failed);
    let error: serde_json::Value = serde_json::from_str(failed.error.as_deref().unwrap()).unwrap();
    assert_eq!(error, json!({"code": -32603, "message": "the vault is gone"}));
}
