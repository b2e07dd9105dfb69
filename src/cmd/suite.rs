//! `cephbench suite` and `cephbench sweep`: many runs, one report.

use std::io::Write;
use std::process::ExitCode;

use cephbench::report::{Document, Format};

use crate::cli::{ConnArgs, Globals, SuiteArgs, SweepArgs, UsageError};
use crate::cmd::bench::Recorded;
use crate::cmd::{connect, exit, signals};

/// `cephbench suite`: runs the suite on each pool in turn, prints each
/// table and, for several pools, their comparison.
pub fn suite(conn: &ConnArgs, args: &SuiteArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let (suite, mut opts) = args.plan(g.telemetry, g.counter_interval, g.live)?;
    for o in &mut opts {
        o.interval = g.interval;
        super::bench::no_op_history_in_groups(o.group.is_some(), g)?;
        o.op_history = g.op_history;
        o.drop_caches = g.drop_caches;
    }
    let (suite, opts) = (&suite, &opts[..]);
    let (format, view) = (g.format, args.view.view(g));
    let aggregate = args.view.aggregate.unwrap_or_default();
    // A suite measures what the OSDs acknowledge: librbd's cache stays off.
    let connect::Session { rt, rados } =
        connect::connect(conn, vec![("rbd_cache".into(), "false".into())])?;
    let command = format!("suite {}", suite.name);
    let pool = opts.first().map_or("", |o| o.pool.as_str());
    crate::cmd::bench::preflight(&rados, g, &Recorded::new(&command, pool, None))?;
    if suite.uses_image() {
        for o in opts {
            crate::cmd::bench::rbd_pools_preflight(&rados, &o.pool, o.data_pool.as_deref())?;
        }
    }
    if g.announce {
        let per_pool = suite.expected();
        eprintln!(
            "suite {}: {} jobs x {} runs on {} pool(s), expected {} of measuring{}",
            suite.name,
            suite.jobs.len(),
            suite.runs,
            opts.len(),
            cephbench::suite::clock(per_pool * opts.len() as u32),
            if suite.uses_image() {
                format!(
                    ", plus writing the {} test area once per pool",
                    cephbench::units::fmt_bytes(suite.test_area)
                )
            } else {
                String::new()
            }
        );
    }
    rt.block_on(async move {
        // The images are in -p, the rados jobs' objects in the data pool.
        let mut cleaned: Vec<&str> = Vec::new();
        for o in opts {
            for p in [o.pool.as_str(), o.io_pool()] {
                if !cleaned.contains(&p) {
                    cleaned.push(p);
                }
            }
        }
        let stop = signals::install(format!("cephbench cleanup -p {}", cleaned.join(" / -p ")));
        let mut docs = Vec::new();
        let mut failure = None;
        let outcomes = cephbench::suite::run_suites(&rados, suite, opts, stop.clone()).await?;
        let interrupted = *stop.borrow();
        for out in outcomes {
            docs.push(out.doc);
            if let Some(e) = out.error {
                failure = Some(e);
            }
        }
        let mut errors = cephbench::result::DataErrors::default();
        for d in &docs {
            for r in &d.runs {
                errors.add(r.result.data_errors());
            }
        }
        let docs = docs
            .into_iter()
            .map(|d| d.with_aggregate(aggregate))
            .collect();
        let doc = Document::Suites(cephbench::suite::Suites::new(docs));
        let mut out = std::io::stdout().lock();
        cephbench::report::render(&doc, format, view, &mut out)?;
        out.flush()?;
        let failure =
            failure.map(|e| anyhow::Error::new(e).context("the suite stopped on a failed job"));
        // A job whose ops failed after it started measuring is a data error
        // of a finished report; anything earlier stopped the suite.
        exit::after_stop(errors, interrupted, failure)
    })
}

/// `cephbench sweep`: runs the points on each pool, prints the curves.
pub fn sweep(conn: &ConnArgs, args: &SweepArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    crate::cmd::bench::drop_caches_usage(g, false, "a sweep (its points share the caches)")?;
    let (mut job, opts) = args.plan(g.telemetry, g.counter_interval, g.announce)?;
    super::bench::no_op_history_in_groups(opts.group.is_some(), g)?;
    match &mut job {
        cephbench::sweep::SweepJob::Rados(c) => {
            c.interval = g.interval;
            c.op_history = g.op_history;
        }
        cephbench::sweep::SweepJob::Rbd(c) => {
            c.interval = g.interval;
            c.op_history = g.op_history;
        }
    }
    let (job, opts, format) = (&job, &opts, g.format);
    if matches!(format, Format::Csv | Format::TimelineCsv) {
        return Err(UsageError(
            "sweep prints text, markdown, json or html; --format csv and timeline-csv are for \
             single results"
                .into(),
        )
        .into());
    }
    let overrides = match job {
        cephbench::sweep::SweepJob::Rbd(c) => cephbench::bench::rbd_cache_overrides(c.rbd_cache),
        _ => Vec::new(),
    };
    let connect::Session { rt, rados } = connect::connect(conn, overrides)?;
    let pool = opts.pools.first().map_or("", String::as_str);
    crate::cmd::bench::preflight(&rados, g, &Recorded::new("sweep", pool, None))?;
    if let cephbench::sweep::SweepJob::Rbd(c) = job {
        if let cephbench::bench::ImageChoice::Create { .. } = c.image {
            for (pool, data) in opts.pools.iter().zip(&opts.data_pools) {
                crate::cmd::bench::rbd_pools_preflight(&rados, pool, data.as_deref())?;
            }
        }
    }
    if opts.progress {
        eprintln!("{}", cephbench::sweep::announce(job, opts));
    }
    rt.block_on(async move {
        let stop = signals::install(job.cleanup_hint(&opts.pools));
        let signalled = stop.clone();
        let out = cephbench::sweep::run_sweep(&rados, job, opts, stop).await?;
        let mut stdout = std::io::stdout().lock();
        cephbench::sweep::render(&out.doc, format, &mut stdout)?;
        stdout.flush()?;
        for hint in &out.leftovers {
            eprintln!(
                "cephbench: warning: the sweep left objects behind; remove them with `{hint}`"
            );
        }
        let mut errors = cephbench::result::DataErrors::default();
        for c in &out.doc.curves {
            for p in &c.points {
                errors.add(p.result.data_errors());
            }
        }
        let failure = out
            .error
            .map(|e| anyhow::Error::new(e).context("the sweep stopped on an error"));
        // Also an interrupt during the last point's cleanup.
        let interrupted = out.doc.interrupted || *signalled.borrow();
        exit::after_stop(errors, interrupted, failure)
    })
}
