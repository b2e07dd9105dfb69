//! The stop signal of the telemetry threads: each sleeps until its next
//! turn or until it is stopped, whichever comes first, woken by the stop
//! itself rather than waking every few milliseconds to look at a flag (at
//! one op in flight the client does little else, and three threads polling
//! every 20 ms were 150 wake-ups a second beside a few hundred ops).
#![forbid(unsafe_code)]

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Raised once by the thread that owns a poller, waited on by the poller.
/// The lock is the telemetry threads' own: the I/O path never takes it.
#[derive(Clone, Default)]
pub(crate) struct StopSignal(Arc<(Mutex<bool>, Condvar)>);

impl StopSignal {
    pub(crate) fn new() -> StopSignal {
        StopSignal::default()
    }

    fn raised(&self) -> MutexGuard<'_, bool> {
        // A poller that panicked holding the lock leaves a valid bool.
        self.0 .0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Raises the signal and wakes every thread waiting on it.
    pub(crate) fn raise(&self) {
        *self.raised() = true;
        self.0 .1.notify_all();
    }

    /// Whether the signal is raised.
    pub(crate) fn is_raised(&self) -> bool {
        *self.raised()
    }

    /// Sleeps until `deadline` unless the signal is (or gets) raised;
    /// `true` when it is.
    pub(crate) fn wait_until(&self, deadline: Instant) -> bool {
        let mut raised = self.raised();
        loop {
            if *raised {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            raised = self
                .0
                 .1
                .wait_timeout(raised, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_wait_ends_at_its_deadline_or_at_once_when_raised() {
        let s = StopSignal::new();
        let t = Instant::now();
        assert!(!s.wait_until(t + Duration::from_millis(30)));
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert!(!s.is_raised());
        let waiter = {
            let s = s.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (s.wait_until(t + Duration::from_secs(30)), t.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        s.raise();
        let (raised, waited) = waiter.join().unwrap();
        assert!(raised);
        assert!(
            waited < Duration::from_secs(5),
            "woken by the raise: {waited:?}"
        );
        assert!(s.is_raised());
        assert!(s.wait_until(Instant::now() + Duration::from_secs(30)));
    }
}
