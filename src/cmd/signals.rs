//! SIGINT/SIGTERM: the first stops the run gracefully, a second exits at once.

use tokio::sync::watch;

use crate::cmd::exit::INTERRUPTED;

/// A second SIGINT/SIGTERM this soon after the first is the same interrupt
/// delivered twice (as `timeout` does), not a request to exit at once.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(250);

/// First SIGINT/SIGTERM: stop issuing ops, drain, report, clean up.
/// Second (at least [`SAME_INTERRUPT`] later): exit at once, naming the
/// command that removes the leftovers.
///
/// The signals are watched on a thread of their own (with a runtime of its
/// own), not on the command's runtime: a synchronous librados/librbd call
/// (removing a large image, a blocking mon command) keeps that one busy,
/// and a second signal must still exit at once.
pub fn install(cleanup_hint: String) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("cephbench-signals".into())
        .spawn(move || {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                let _ = ready_tx.send(false);
                return;
            };
            rt.block_on(async move {
                // Register both handlers before `install` returns: until
                // then a signal would kill the process with its default
                // action (no report, no cleanup).
                let mut int = signal(SignalKind::interrupt()).ok();
                let mut term = signal(SignalKind::terminate()).ok();
                let _ = ready_tx.send(int.is_some() && term.is_some());
                watch_signals(&mut int, &mut term, &tx, &cleanup_hint).await;
            });
        });
    if spawned.is_err() || ready_rx.recv() != Ok(true) {
        eprintln!("cephbench: warning: SIGINT/SIGTERM cannot be watched: an interrupt kills the run without cleanup");
    }
    rx
}

async fn watch_signals(
    int: &mut Option<tokio::signal::unix::Signal>,
    term: &mut Option<tokio::signal::unix::Signal>,
    tx: &watch::Sender<bool>,
    cleanup_hint: &str,
) {
    next_signal(int, term).await;
    let first = std::time::Instant::now();
    eprintln!(
        "cephbench: interrupted: stopping, waiting for ops in flight, then cleaning up \
         (interrupt again to exit at once)"
    );
    let _ = tx.send(true);
    loop {
        next_signal(int, term).await;
        // timeout(1) signals its child, then the child's whole process
        // group: one interrupt can arrive twice, microseconds apart.
        if first.elapsed() >= SAME_INTERRUPT {
            break;
        }
    }
    // The results so far (the running job's measured window up to its last
    // tick), marked interrupted: the full report needs the drain.
    for line in cephbench::progress::so_far_lines().into_iter().flatten() {
        eprintln!("cephbench: {line}");
    }
    eprintln!(
        "cephbench: interrupted again: exiting now; remove what this run left with `{cleanup_hint}`"
    );
    // What the run changed in the cluster goes back even now (a few
    // bounded commands; nothing to do when it changed nothing): the OSDs'
    // settings (`--op-history`), the OSD put back in and started
    // (`--disrupt`).
    cephbench::undo::restore_now(|_| true);
    std::process::exit(i32::from(INTERRUPTED));
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
