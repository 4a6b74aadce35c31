//! Notifications when a task ends: the desktop's, else a log line and the surface's own.

use std::time::Duration;

use crate::{Announce, Task};

/// A desktop notification when there is a session; else a log line and the surface's own
/// announcement (the editor's message). Never fails the task, never blocks the runtime.
pub(crate) async fn notify(t: &Task, announce: Option<Announce>) {
    let query: String = match (&t.note, t.query.as_str()) {
        (Some(note), "") => note.clone(),
        (Some(note), focus) => format!("{note} ({focus})"),
        (None, q) => q.chars().take(80).collect(),
    };
    let line = format!(
        "scholia: background research {} ({}): {query}; `scholia tasks results {}`",
        t.status.as_str().replace('_', " "),
        t.id,
        t.id
    );
    let (summary, body) = (
        format!("Research {}", t.status.as_str().replace('_', " ")),
        query.clone(),
    );
    let shown = tokio::time::timeout(
        Duration::from_secs(2),
        // A notifier that panics is a bug like any other: it is not caught here.
        scholia_base::spawn_blocking(move || {
            notify_rust::Notification::new()
                .appname("scholia")
                .summary(&summary)
                .body(&body)
                .show()
                .map(|_| ())
        }),
    )
    .await;
    match shown {
        Ok(Ok(())) => tracing::info!(task = %t.id, "desktop notification shown"),
        other => {
            // notify-rust's errors cannot be told apart (no session bus, no server): any is
            // "no desktop notifications here".
            let why = match other {
                Ok(Err(e)) => e.to_string(),
                Err(_) => "no answer within 2 s".into(),
                Ok(Ok(())) => unreachable!("matched above"),
            };
            tracing::info!(task = %t.id, "no desktop notification ({why}); {line}");
            if let Some(a) = announce {
                a(line);
            }
        }
    }
}
