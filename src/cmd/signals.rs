//! SIGINT/SIGTERM: the first stops the run gracefully, a second exits at once.

use tokio::sync::watch;

use crate::cmd::exit::INTERRUPTED;

/// A second SIGINT/SIGTERM this soon after the first is the same interrupt
/// delivered twice (as `timeout` does), not a request to exit at once.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(250);

/// First SIGINT/SIGTERM: stop issuing ops, drain, report, clean up.
/// Second (at least [`SAME_INTERRUPT`] later): exit at once, naming the
/// command that removes the leftovers.
pub fn install(cleanup_hint: String) -> watch::Receiver<bool> {
    use tokio::signal::unix::{signal, SignalKind};
    let (tx, rx) = watch::channel(false);
    // Register both handlers now, not when the task first runs: until then
    // a signal would kill the process with its default action (no report, no
    // cleanup), e.g. while a synchronous librbd call keeps the runtime busy.
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    tokio::spawn(async move {
        next_signal(&mut int, &mut term).await;
        let first = std::time::Instant::now();
        eprintln!(
            "cephbench: interrupted: stopping, waiting for ops in flight, then cleaning up \
             (interrupt again to exit at once)"
        );
        let _ = tx.send(true);
        loop {
            next_signal(&mut int, &mut term).await;
            // timeout(1) signals its child, then the child's whole process
            // group: one interrupt can arrive twice, microseconds apart.
            if first.elapsed() >= SAME_INTERRUPT {
                break;
            }
        }
        eprintln!(
            "cephbench: interrupted again: exiting now; remove what this run left with `{cleanup_hint}`"
        );
        std::process::exit(i32::from(INTERRUPTED));
    });
    rx
}

async fn next_signal(
    int: &mut Option<tokio::signal::unix::Signal>,
    term: &mut Option<tokio::signal::unix::Signal>,
) {
    async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        () = recv(int) => {},
        () = recv(term) => {},
    }
}
