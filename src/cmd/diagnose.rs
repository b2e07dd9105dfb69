//! `cephbench diagnose`: the pool's weak links, ranked.

use std::io::Write;
use std::process::ExitCode;

use cephbench::report::Format;

use crate::cli::{ConnArgs, DiagnoseArgs, Globals, UsageError};
use crate::cmd::bench::Recorded;
use crate::cmd::{connect, exit, signals};

/// `cephbench diagnose`: the OSDs' own checks, the four jobs, the ranked
/// weak links on stdout. Ctrl-C prints what was found so far (after the
/// cleanup) and exits 130; failed ops exit 3 as in a run.
pub fn diagnose(conn: &ConnArgs, args: &DiagnoseArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    if matches!(g.format, Format::Csv | Format::TimelineCsv) {
        return Err(UsageError(
            "diagnose prints text, markdown, json or html: drop --format csv (the jobs' own \
             results are in the json)"
                .into(),
        )
        .into());
    }
    let cfg = args.config(g.counter_interval, g.live)?;
    let connect::Session { rt, rados } = connect::connect(conn, Vec::new())?;
    crate::cmd::bench::preflight(&rados, g, &Recorded::new("diagnose", &cfg.pool, None))?;
    let announce = g.announce;
    rt.block_on(async move {
        let stop = signals::install(format!("cephbench cleanup -p {}", cfg.pool));
        let out = cephbench::diagnose::run(&rados, &cfg, stop.clone(), |l| {
            if announce {
                eprintln!("cephbench diagnose: {l}")
            }
        })
        .await?;
        let mut errors = cephbench::result::DataErrors::default();
        for r in out.doc.runs.iter().flat_map(|s| &s.runs) {
            errors.add(r.result.data_errors());
        }
        let mut stdout = std::io::stdout().lock();
        cephbench::diagnose::report::render(&out.doc, g.format, &mut stdout)?;
        stdout.flush()?;
        let failure = out
            .error
            .map(|e| anyhow::Error::new(e).context("the diagnosis stopped on a failed job"));
        let interrupted = *stop.borrow();
        exit::after_stop(errors, interrupted, failure)
    })
}
