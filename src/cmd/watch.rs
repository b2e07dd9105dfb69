//! `cephbench watch`: the canary, until SIGINT/SIGTERM.

use std::process::ExitCode;

use cephbench::report::Format;

use crate::cli::{ConnArgs, Globals, UsageError, WatchArgs};
use crate::cmd::{connect, signals};

/// `cephbench watch`: serves `/metrics` and logs a line per pool each
/// interval on stderr (the journal, under systemd) until stopped; then
/// removes its objects and exits 0: stopping is how a canary ends.
pub fn watch(conn: &ConnArgs, args: &WatchArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    if g.format != Format::Text || g.disrupt.is_some() {
        return Err(UsageError(
            "watch logs lines and serves /metrics: drop --format and --disrupt (watch only \
             observes)"
                .into(),
        )
        .into());
    }
    let mut cfg = args.config()?;
    // The placement and probe connection is made anew with these when the
    // mons stop answering it (see `canary`).
    cfg.reconnect = Some(conn.telemetry_options().unwrap_or_else(|| conn.options()));
    let connect::Session { rt, rados } = connect::connect(conn, Vec::new())?;
    for pool in &cfg.pools {
        if rados.pool_id(pool).is_err() {
            return Err(UsageError(format!(
                "no such pool '{pool}' (list pools with `ceph osd pool ls`)"
            ))
            .into());
        }
    }
    rt.block_on(async move {
        let stop = signals::install(format!(
            "cephbench cleanup -p POOL --run-name {}",
            cephbench::canary::run_name()
        ));
        let log = |l: &str| eprintln!("cephbench watch: {l}");
        let s = cephbench::canary::run(&rados, &cfg, stop, log).await?;
        for (pool, ok, failed) in &s.pools {
            log(&format!(
                "pool '{pool}': {ok} ops completed, {failed} failed"
            ));
        }
        log(&format!("stopped; removed {} objects", s.removed));
        Ok(ExitCode::SUCCESS)
    })
}
