//! `cephbench diagnose`: the pool's weak links, ranked.

use std::io::Write;
use std::process::ExitCode;

use cephbench::report::Format;

use crate::cli::{ConnArgs, DiagnoseArgs, Globals, UsageError};
use crate::cmd::bench::Recorded;
use crate::cmd::{connect, exit, signals};

/// `cephbench diagnose`: the OSDs' own checks, the four jobs, the ranked
/// weak links on stdout; with `--pools`, each pool in turn, each its own
/// report (JSON: an array of the documents). Ctrl-C prints what was found
/// so far (after the cleanup) and exits 130; failed ops exit 3 as in a run.
pub fn diagnose(conn: &ConnArgs, args: &DiagnoseArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    if matches!(g.format, Format::Csv | Format::TimelineCsv) {
        return Err(UsageError(
            "diagnose prints text, markdown, json or html: drop --format csv (the jobs' own \
             results are in the json)"
                .into(),
        )
        .into());
    }
    let cfgs = args.configs(g.counter_interval, g.live)?;
    if cfgs.len() > 1 && g.format == Format::Html {
        return Err(UsageError(
            "diagnose --pools prints text, markdown or json: for the HTML page give one pool \
             (-p POOL) at a time"
                .into(),
        )
        .into());
    }
    let connect::Session { rt, rados } = connect::connect(conn, Vec::new())?;
    for cfg in &cfgs {
        crate::cmd::bench::preflight(&rados, g, &Recorded::new("diagnose", &cfg.pool, None))?;
    }
    let announce = g.announce;
    let cleanup: Vec<String> = cfgs
        .iter()
        .map(|c| format!("cephbench cleanup -p {}", c.pool))
        .collect();
    rt.block_on(async move {
        let stop = signals::install(cleanup.join("; "));
        let mut docs = Vec::new();
        let mut errors = cephbench::result::DataErrors::default();
        let mut failure = None;
        for cfg in &cfgs {
            let pool = cfg.pool.clone();
            let out = cephbench::diagnose::run(&rados, cfg, stop.clone(), |l| {
                if announce {
                    if cfgs.len() > 1 {
                        eprintln!("cephbench diagnose {pool}: {l}")
                    } else {
                        eprintln!("cephbench diagnose: {l}")
                    }
                }
            })
            .await?;
            for r in out.doc.runs.iter().flat_map(|s| &s.runs) {
                errors.add(r.result.data_errors());
            }
            docs.push(out.doc);
            if let Some(e) = out.error {
                failure =
                    Some(anyhow::Error::new(e).context("the diagnosis stopped on a failed job"));
                break;
            }
            if *stop.borrow() {
                break;
            }
        }
        let mut stdout = std::io::stdout().lock();
        match (docs.as_slice(), g.format) {
            ([one], _) => cephbench::diagnose::report::render(one, g.format, &mut stdout)?,
            (_, Format::Json) => {
                serde_json::to_writer_pretty(&mut stdout, &docs)?;
                writeln!(stdout)?;
            }
            (many, _) => {
                for (i, d) in many.iter().enumerate() {
                    if i > 0 {
                        writeln!(stdout)?;
                    }
                    cephbench::diagnose::report::render(d, g.format, &mut stdout)?;
                }
            }
        }
        stdout.flush()?;
        let interrupted = *stop.borrow();
        exit::after_stop(errors, interrupted, failure)
    })
}
