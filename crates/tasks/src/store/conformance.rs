//! One conformance suite, run against both stores: two handles on one store stand for two
//! hosts (two processes on one `tasks.db`, two servers on one database). PostgreSQL comes from
//! `scholia_fakes::postgres` (`SCHOLIA_TEST_DATABASE_URL`, else a throwaway cluster on
//! loopback); without one the PostgreSQL half says it was skipped (and fails with
//! `SCHOLIA_REQUIRE_E2E=1`).

use std::collections::HashSet;
use std::time::Duration;

use super::{Store, Task, now_ms};
use crate::call::{Call, CallEnd, CallStatus};
use crate::{Kind, Results, ResultsMeta, Status};

fn task(id: &str, created_at: i64) -> Task {
    Task {
        id: id.into(),
        kind: Kind::DeepSearch,
        query: format!("question {id}"),
        model: None,
        note: None,
        vault: None,
        status: Status::Pending,
        progress: None,
        current_action: Some("queued".into()),
        remote_id: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        error: None,
        notify: false,
        max_wait_hours: 8.0,
        created_at,
        updated_at: created_at,
        completed_at: None,
        lease_owner: None,
        lease_until: None,
    }
}

fn results(report: &str) -> Results {
    Results {
        report: report.into(),
        sources: Vec::new(),
        metadata: ResultsMeta::default(),
        raw: None,
    }
}

/// A claim, heartbeats and the end, seen from the other host.
async fn claim_heartbeat_complete(a: Store, b: Store) {
    a.insert(task("t1", now_ms())).await.unwrap();
    let until = now_ms() + 60_000;
    let taken = a.claim("A", until, 10).await.unwrap();
    assert_eq!(taken.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t1"]);
    assert!(b.claim("B", until, 10).await.unwrap().is_empty(), "held by A");
    assert_eq!(a.renew("A", until + 1000).await.unwrap(), ["t1"]);
    let seen = b.get("t1").await.unwrap().unwrap();
    assert_eq!(
        (seen.lease_owner.as_deref(), seen.lease_until),
        (Some("A"), Some(until + 1000))
    );
    let running = a
        .update("t1", Some("A"), |t| {
            t.status = Status::Running;
            t.progress = Some(40);
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.progress, Some(40));
    // B cannot change what A holds.
    assert!(
        b.update("t1", Some("B"), |t| t.progress = Some(1))
            .await
            .unwrap()
            .is_none()
    );
    let done = a
        .finish("t1", Some("A"), Status::Completed, Some(results("the report")), |t| {
            t.input_tokens = 7
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (done.status, done.input_tokens, done.lease_owner.as_deref()),
        (Status::Completed, 7, None)
    );
    assert!(done.completed_at.is_some());
    assert_eq!(b.results("t1").await.unwrap().unwrap().report, "the report");
    // A finished task is finished once.
    assert!(
        b.finish("t1", None, Status::Failed, None, |_| {})
            .await
            .unwrap()
            .is_none()
    );
    assert!(a.renew("A", until).await.unwrap().is_empty());
    b.keep_results("t1", results("kept")).await.unwrap();
    assert_eq!(a.results("t1").await.unwrap().unwrap().report, "kept");
}

/// A runner that dies (no release) loses its tasks when its lease runs out; one that stops
/// cleanly gives them up at once.
async fn leases_run_out_and_are_taken_over(a: Store, b: Store) {
    a.insert(task("t1", now_ms())).await.unwrap();
    a.insert(task("t2", now_ms() + 1)).await.unwrap();
    let taken = a.claim("A", now_ms() + 150, 1).await.unwrap();
    assert_eq!(taken[0].id, "t1");
    assert_eq!(b.claim("B", now_ms() + 60_000, 10).await.unwrap()[0].id, "t2");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A was killed: its lease ran out; B takes t1 and A's late writes are refused.
    let took = b.claim("B", now_ms() + 60_000, 10).await.unwrap();
    assert_eq!(took.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t1"]);
    assert!(
        a.update("t1", Some("A"), |t| t.progress = Some(99))
            .await
            .unwrap()
            .is_none()
    );
    b.release("B").await.unwrap();
    let again = a.claim("A", now_ms() + 60_000, 10).await.unwrap();
    assert_eq!(again.len(), 2, "released: taken over at once");
}

/// Two runners claiming at once: every task is taken by exactly one.
async fn racing_runners_take_each_task_once(a: Store, b: Store) {
    let base = now_ms();
    for i in 0..60 {
        a.insert(task(&format!("r{i:02}"), base + i)).await.unwrap();
    }
    let race = |s: Store, owner: &'static str| async move {
        let mut mine = Vec::new();
        loop {
            let got = s.claim(owner, now_ms() + 60_000, 3).await.unwrap();
            if got.is_empty() {
                return mine;
            }
            mine.extend(got.into_iter().map(|t| t.id));
            tokio::task::yield_now().await;
        }
    };
    let (x, y) = tokio::join!(race(a.clone(), "A"), race(b.clone(), "B"));
    let (sx, sy): (HashSet<_>, HashSet<_>) = (x.iter().cloned().collect(), y.iter().cloned().collect());
    assert_eq!(sx.len() + sy.len(), 60, "A {} + B {}", sx.len(), sy.len());
    assert!(
        sx.is_disjoint(&sy),
        "a task claimed twice: {:?}",
        sx.intersection(&sy).collect::<Vec<_>>()
    );
}

/// A cancel made on the other host: the holder stops holding it at its next heartbeat.
async fn a_cancel_elsewhere_reaches_the_holder(a: Store, b: Store) {
    a.insert(task("c1", now_ms())).await.unwrap();
    a.claim("A", now_ms() + 60_000, 10).await.unwrap();
    let cancelled = b
        .finish("c1", None, Status::Cancelled, None, |t| {
            t.current_action = Some("cancelled".into())
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cancelled.status, Status::Cancelled);
    assert!(a.renew("A", now_ms() + 60_000).await.unwrap().is_empty());
    assert!(
        a.update("c1", Some("A"), |t| t.progress = Some(5))
            .await
            .unwrap()
            .is_none()
    );
}

/// Ten thousand tasks: listed newest first.
async fn ten_thousand_tasks_are_listed(a: Store, b: Store) {
    let base = now_ms() - 20_000;
    for i in 0..10_000 {
        a.insert(task(&format!("l{i:05}"), base + i)).await.unwrap();
    }
    let listed = b.list(10_000).await.unwrap();
    assert_eq!(listed.len(), 10_000);
    assert_eq!(listed[0].id, "l09999");
    assert_eq!(listed[9_999].id, "l00000");
    assert_eq!(b.list(5).await.unwrap().len(), 5);
}

fn call(id: &str, vault: Option<&str>) -> Call {
    Call {
        id: id.into(),
        tool: "deep_search".into(),
        arguments: "{\"query\":\"q\"}".into(),
        vault: vault.map(str::to_string),
        status: CallStatus::Working,
        message: Some("queued".into()),
        percent: None,
        result: None,
        error: None,
        created_at: now_ms(),
        updated_at: now_ms(),
        ttl_ms: 3_600_000,
        poll_ms: 2_000,
        resumed: 0,
    }
}

/// Calls answered with a task: progress, the end, a cancel from elsewhere, a takeover.
async fn calls_live_across_hosts(a: Store, b: Store) {
    let until = now_ms() + 60_000;
    a.insert_call(call("call-1", Some("/v")), "A".into(), until)
        .await
        .unwrap();
    a.insert_call(call("call-2", Some("/v")), "A".into(), until)
        .await
        .unwrap();
    a.insert_call(call("call-3", Some("/v")), "A".into(), now_ms() + 100)
        .await
        .unwrap();
    a.call_progress("call-1", "reading", Some(30), "A").await.unwrap();
    b.call_progress("call-1", "not mine", Some(99), "B").await.unwrap();
    let seen = b.get_call("call-1").await.unwrap().unwrap();
    assert_eq!((seen.message.as_deref(), seen.percent), (Some("reading"), Some(30)));
    let end = CallEnd {
        status: CallStatus::Completed,
        result: Some("{\"ok\":true}".into()),
        error: None,
        message: "completed".into(),
    };
    assert!(b.finish_call("call-1", "B", end.clone()).await.unwrap().is_none());
    let done = a.finish_call("call-1", "A", end).await.unwrap().unwrap();
    assert_eq!(done.status, CallStatus::Completed);
    assert!(matches!(
        b.cancel_call("call-1").await.unwrap(),
        Some(Err(CallStatus::Completed))
    ));
    assert!(matches!(b.cancel_call("call-2").await.unwrap(), Some(Ok(c)) if c.status == CallStatus::Cancelled));
    assert!(b.cancel_call("call-none").await.unwrap().is_none());
    // The cancel reaches A's next heartbeat; call-3's heartbeats stop (its driver dies).
    let gone = a.renew_calls(vec!["call-2".into()], "A", until).await.unwrap();
    assert_eq!(gone, ["call-2"]);
    // call-3's driver dies: its lease runs out and B takes it over.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let taken = b
        .take_over_calls("B", now_ms() + 60_000, Some("/v".into()), vec!["deep_search".into()])
        .await
        .unwrap();
    assert_eq!(
        taken.iter().map(|c| (c.id.as_str(), c.resumed)).collect::<Vec<_>>(),
        [("call-3", 1)]
    );
    assert!(
        b.take_over_calls(
            "B",
            now_ms() + 60_000,
            Some("/other".into()),
            vec!["deep_search".into()]
        )
        .await
        .unwrap()
        .is_empty()
    );
    b.release_calls("B").await.unwrap();
    let back = a
        .take_over_calls("A", now_ms() + 60_000, Some("/v".into()), vec!["deep_search".into()])
        .await
        .unwrap();
    assert_eq!(back.len(), 1);
}

/// Runs `suite` on two handles of a fresh SQLite store and of a fresh PostgreSQL database.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    let dir = tempfile::tempdir().unwrap();
                    let (a, b) = (super::Store::open(dir.path()).unwrap(), super::Store::open(dir.path()).unwrap());
                    super::$name(a, b).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $name() {
                    let Some(url) = super::fresh_database(stringify!($name)).await else { return };
                    let a = super::Store::connect(&url, 4).await.unwrap();
                    let b = super::Store::connect(&url, 4).await.unwrap();
                    super::$name(a, b).await;
                }
            )*
        }
    };
}

conformance!(
    claim_heartbeat_complete,
    leases_run_out_and_are_taken_over,
    racing_runners_take_each_task_once,
    a_cancel_elsewhere_reaches_the_holder,
    ten_thousand_tasks_are_listed,
    calls_live_across_hosts,
);

/// A new, empty database for one test (`scholia_fakes::postgres`); `None` (skipped) without
/// PostgreSQL.
async fn fresh_database(name: &str) -> Option<String> {
    scholia_fakes::postgres::fresh_database(name).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_that_is_down_is_named_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://scholia:hunter2@127.0.0.1:{port}/tasks?sslmode=disable&connect_timeout=2");
    let err = match Store::connect(&url, 2).await {
        Ok(_) => panic!("nothing listens there"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains(&format!("postgres://scholia@127.0.0.1:{port}/tasks")),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    let err = match Store::connect("mysql://x", 2).await {
        Ok(_) => panic!("not a PostgreSQL URL"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("valid: postgres://"), "{err}");
}
