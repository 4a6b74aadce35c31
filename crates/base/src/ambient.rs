//! What a request carries into the work it starts, wherever that work runs: a value set for
//! one request's future (`within`) and seen by the blocking work it hands off
//! (`spawn_blocking` carries it to the thread) — a team server's per-token folder scope, read
//! by every index query of that request without each taking it as an argument.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

/// A request's value.
pub type Value = Arc<dyn Any + Send + Sync>;

tokio::task_local! {
    static ON_TASK: Value;
}

thread_local! {
    static ON_THREAD: RefCell<Option<Value>> = const { RefCell::new(None) };
}

/// Runs `f` with `value` as the request's.
pub async fn within<F: Future>(value: Value, f: F) -> F::Output {
    ON_TASK.scope(value, f).await
}

/// The request's value, on its task or on a thread its blocking work runs on.
pub fn current() -> Option<Value> {
    ON_TASK
        .try_with(Clone::clone)
        .ok()
        .or_else(|| ON_THREAD.with(|v| v.borrow().clone()))
}

/// The request's value of type `T`, if it has one.
pub fn get<T: Any + Send + Sync + Clone>() -> Option<T> {
    current().and_then(|v| v.downcast_ref::<T>().cloned())
}

/// Runs `f` (on a blocking thread) with `value` as the request's.
pub(crate) fn on_thread<T>(value: Option<Value>, f: impl FnOnce() -> T) -> T {
    let Some(value) = value else { return f() };
    struct Reset(Option<Value>);
    impl Drop for Reset {
        fn drop(&mut self) {
            ON_THREAD.with(|v| *v.borrow_mut() = self.0.take());
        }
    }
    let before = ON_THREAD.with(|v| v.borrow_mut().replace(value));
    let _reset = Reset(before);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_value_reaches_its_blocking_work_and_no_other() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let v: Value = Arc::new(String::from("Journal"));
            let seen = within(v, async { crate::spawn_blocking(get::<String>).await }).await;
            assert_eq!(seen.as_deref(), Some("Journal"));
            assert_eq!(
                crate::spawn_blocking(get::<String>).await,
                None,
                "not outside the request"
            );
            assert_eq!(get::<String>(), None);
        });
    }
}
