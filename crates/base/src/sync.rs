//! One policy for blocking work and one for locks.

use std::sync::{Mutex, MutexGuard};

use crate::error::Error;

/// A lock that a panicking holder cannot poison for everyone after it: the data is what it
/// was when the panic happened, and every lock in scholia is taken this way.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the blocking pool (file and index work never runs on the async runtime); a
/// panic there is re-raised where the result is awaited, so it is never mistaken for an error
/// value. The work starts at once, as with tokio's own.
pub fn spawn_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> impl Future<Output = T> {
    // The request's ambient value goes with its work (see `ambient`).
    let carried = crate::ambient::current();
    let handle = tokio::task::spawn_blocking(move || crate::ambient::on_thread(carried, f));
    async move {
        match handle.await {
            Ok(v) => v,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // The runtime is shutting down: nothing will look at the result.
            Err(e) => panic!("blocking work was cancelled: {e}"),
        }
    }
}

/// [`spawn_blocking`] for work that returns scholia's [`Error`].
pub fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> impl Future<Output = Result<T, Error>> {
    spawn_blocking(f)
}

/// Lowers the calling thread's CPU priority (Linux: nice 10): background work such as
/// computing a vault's vectors takes what the foreground leaves.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take and return plain integers; a failure leaves the
    // priority as it was.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_opens() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("holder panics");
        })
        .join();
        assert!(m.lock().is_err(), "std poisons it");
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }

    #[test]
    fn panics_in_blocking_work_are_raised_again() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { spawn_blocking(|| -> u8 { panic!("inside") }).await })
        }));
        assert!(caught.is_err());
        assert_eq!(rt.block_on(async { blocking(|| Ok(3)).await }).unwrap(), 3);
    }
}
