//! `cephbench rados` and `cephbench rbd`: one run on this host, or a group
//! run whose agents run it with us.

use std::io::Write;
use std::process::ExitCode;

use cephbench::bench;
use cephbench::ceph::Rados;
use cephbench::group::{GroupConfig, JobSpec};
use cephbench::report::{Format, View};
use tokio::sync::watch;

use crate::cli::{ConnArgs, Globals, RadosArgs, RbdArgs, UsageError};
use crate::cmd::{connect, exit, signals};

/// `cephbench rados MODE`.
pub fn rados(conn: &ConnArgs, args: &RadosArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let mut cfg = args.config(g.live)?;
    cfg.telemetry = g.telemetry;
    cfg.counter_interval = g.counter_interval;
    cfg.interval = g.interval;
    steady_at_interval(cfg.steady.as_ref(), g)?;
    cfg.op_history = g.op_history;
    cfg.drop_caches = g.drop_caches;
    drop_caches_usage(g, !cfg.mode.is_write(), "a write job")?;
    let group = args.group.config(&args.pool, &args.namespace)?;
    no_op_history_in_groups(group.is_some(), g)?;
    cfg.disrupt = disrupt_plan(g, group.is_some(), cfg.duration.map(|d| d + cfg.ramp))?;
    let s = connect::connect(conn, Vec::new())?;
    let command = format!("rados {}", cfg.mode.as_str());
    preflight(
        &s.rados,
        g,
        &Recorded::new(&command, &cfg.pool, Some(&cfg.run_name)),
    )?;
    disrupt_preflight(&s.rados, cfg.disrupt.as_ref(), &cfg.pool)?;
    s.rt.block_on(async {
        let stop = signals::install(bench::cleanup_hint(
            &args.pool,
            &cfg.namespace,
            &cfg.run_name,
        ));
        let signalled = stop.clone();
        if let Some(group) = group {
            return run_group(&s.rados, group, JobSpec::Rados(cfg), stop, g).await;
        }
        let outcome = bench::run_rados(&s.rados, &cfg, stop).await?;
        let signalled = *signalled.borrow();
        finish(outcome, g, signalled)
    })
}

/// `cephbench rbd`.
pub fn rbd(conn: &ConnArgs, args: &RbdArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let mut cfg = args.config(g.live)?;
    cfg.telemetry = g.telemetry;
    cfg.counter_interval = g.counter_interval;
    cfg.interval = g.interval;
    steady_at_interval(cfg.steady.as_ref(), g)?;
    cfg.op_history = g.op_history;
    cfg.drop_caches = g.drop_caches;
    drop_caches_usage(g, cfg.mode.reads(cfg.rwmix_read), "a write job")?;
    let group = args.group.config(&args.pool, "")?;
    no_op_history_in_groups(group.is_some(), g)?;
    cfg.disrupt = disrupt_plan(g, group.is_some(), cfg.duration.map(|d| d + cfg.ramp))?;
    let s = connect::connect(conn, bench::rbd_cache_overrides(cfg.rbd_cache))?;
    let image = match &cfg.image {
        bench::ImageChoice::Create { name, .. } => Some(name.as_str()),
        bench::ImageChoice::Existing { .. } => None,
    };
    preflight(&s.rados, g, &Recorded::new("rbd", &cfg.pool, image))?;
    if let bench::ImageChoice::Create { .. } = cfg.image {
        rbd_pools_preflight(&s.rados, &cfg.pool, cfg.data_pool.as_deref())?;
    }
    // The OSDs that serve the image's data.
    let data_pool = cfg.data_pool.as_deref().unwrap_or(&cfg.pool);
    disrupt_preflight(&s.rados, cfg.disrupt.as_ref(), data_pool)?;
    s.rt.block_on(async {
        let hint = match &cfg.image {
            bench::ImageChoice::Create { name, .. } => {
                format!("cephbench cleanup -p {} --image {name}", args.pool)
            }
            // An existing image is not removed; nothing to clean.
            bench::ImageChoice::Existing { .. } => "nothing (the image is not cephbench's)".into(),
        };
        let stop = signals::install(hint);
        let signalled = stop.clone();
        if let Some(group) = group {
            return run_group(&s.rados, group, JobSpec::Rbd(cfg), stop, g).await;
        }
        let outcome = bench::run_rbd(&s.rados, &cfg, stop).await?;
        let signalled = *signalled.borrow();
        finish(outcome, g, signalled)
    })
}

/// Before anything is written: the pools can hold an RBD image created in
/// `pool` with its data in `data_pool` ([`bench::check_rbd_pools`]); a pool
/// that cannot is bad input (exit 2).
pub fn rbd_pools_preflight(
    rados: &Rados,
    pool: &str,
    data_pool: Option<&str>,
) -> anyhow::Result<()> {
    bench::check_rbd_pools(rados, pool, data_pool).map_err(|e| {
        if e.is_bad_input() {
            anyhow::Error::new(UsageError(e.to_string()))
        } else {
            anyhow::Error::new(e)
        }
    })
}

/// `--drop-caches` on a command whose job does not read (`reads`) is bad input.
pub fn drop_caches_usage(g: &Globals, reads: bool, what: &str) -> Result<(), UsageError> {
    if g.drop_caches && !reads {
        return Err(UsageError(format!(
            "--drop-caches is for jobs that read (rados seq/rand, rbd read/randread/rw/randrw, \
             suites): drop it for {what}"
        )));
    }
    Ok(())
}

/// Who a run is, in the records of the changes it makes to the cluster
/// (`cephbench::undo`): its command, pool and run name.
pub struct Recorded<'a> {
    command: &'a str,
    pool: &'a str,
    run: Option<&'a str>,
}

impl<'a> Recorded<'a> {
    /// The run of `command` on `pool`, named `run`.
    pub fn new(command: &'a str, pool: &'a str, run: Option<&'a str>) -> Recorded<'a> {
        Recorded { command, pool, run }
    }
}

/// Before anything is written: a warning for each change an earlier run
/// left recorded in the cluster (undone by `cephbench cleanup` once that
/// run is gone), `--require-quiet` refuses a cluster that is not quiet,
/// `--drop-caches` checks that an OSD drops its caches for this identity.
pub fn preflight(rados: &Rados, g: &Globals, who: &Recorded<'_>) -> anyhow::Result<()> {
    cephbench::undo::set_context(who.command, who.pool, who.run);
    for w in cephbench::undo::open_warnings(rados.telemetry()) {
        eprintln!("cephbench: warning: {w}");
    }
    if g.require_quiet {
        cephbench::telemetry::quiet::require_quiet(rados).map_err(anyhow::Error::msg)?;
    }
    if g.drop_caches {
        cephbench::telemetry::cluster::check_drop_caches(rados).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// `--disrupt` as far as the flags tell: `--allow-disrupt` given, one
/// client, every action before the job's end (`end`: ramp + duration,
/// when a duration is given).
fn disrupt_plan(
    g: &Globals,
    group: bool,
    end: Option<std::time::Duration>,
) -> Result<Option<cephbench::disrupt::DisruptPlan>, UsageError> {
    let Some(plan) = &g.disrupt else {
        return Ok(None);
    };
    if !g.allow_disrupt {
        return Err(UsageError(format!(
            "--disrupt changes the cluster for everyone on it (osd.{} {}): add --allow-disrupt \
             to confirm",
            plan.osd,
            plan.steps
                .iter()
                .map(|s| s.action.as_str())
                .collect::<Vec<_>>()
                .join(", then ")
        )));
    }
    if group {
        return Err(UsageError(
            "--disrupt is for one client (each agent would act on the same OSD): drop it or \
             --group/--clients"
                .into(),
        ));
    }
    if let Some(end) = end {
        plan.within(end).map_err(UsageError)?;
    }
    Ok(Some(plan.clone()))
}

/// Before anything is written: the OSD, the pool and the caps `--disrupt`
/// needs (a spec that does not fit the cluster is bad input, exit 2).
fn disrupt_preflight(
    rados: &Rados,
    plan: Option<&cephbench::disrupt::DisruptPlan>,
    pool: &str,
) -> anyhow::Result<()> {
    let Some(plan) = plan else {
        return Ok(());
    };
    cephbench::disrupt::check(rados, plan, Some(pool)).map_err(|e| match e {
        cephbench::disrupt::CheckError::Usage(m) => anyhow::Error::new(UsageError(m)),
        cephbench::disrupt::CheckError::Refused(m) => anyhow::Error::msg(m),
    })
}

/// Runs `job` as a group with its agents (`--group`) and prints the merged
/// report.
async fn run_group(
    rados: &Rados,
    group: GroupConfig,
    job: JobSpec,
    stop: watch::Receiver<bool>,
    g: &Globals,
) -> anyhow::Result<ExitCode> {
    let signalled = stop.clone();
    let outcome = cephbench::group::run_group(rados, &group, job, stop, |l| {
        eprintln!("cephbench: group {}: {l}", group.group)
    })
    .await?;
    let signalled = *signalled.borrow();
    finish_group(outcome, g, signalled)
}

/// Prints `result` on stdout in the chosen format; `text_trailer` is one
/// more line for the text report only.
fn print(
    result: &cephbench::result::BenchResult,
    g: &Globals,
    text_trailer: Option<String>,
) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let view = View {
        verbose: g.verbose,
        long: false,
    };
    g.format.reporter_for(view).render(result, &mut out)?;
    if let (Some(line), Format::Text) = (text_trailer, g.format) {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Prints the report and turns the outcome into an exit code; `signalled`:
/// an interrupt came at any point, also after the job (during cleanup),
/// which the result's own flag does not record.
fn finish(outcome: bench::Outcome, g: &Globals, signalled: bool) -> anyhow::Result<ExitCode> {
    let removed = outcome
        .cleaned
        .map(|n| format!("\nRemoved {n} objects written by this run."));
    // The report is about to be out: a second interrupt from here has no
    // results so far to print in its place.
    cephbench::progress::forget_so_far();
    print(&outcome.result, g, removed)?;
    if let Some(hint) = &outcome.leftovers {
        eprintln!("cephbench: warning: this run left objects behind; remove them with `{hint}`");
    }
    let errors = outcome.result.data_errors();
    if let (Some(why), None) = (&outcome.cleanup_failed, &outcome.error) {
        // The report is printed; what the run made and could not remove
        // fails the command (it was a warning and exit 0).
        if errors.is_clean() {
            anyhow::bail!("{why}");
        }
    }
    let error = outcome
        .error
        .map(|e| anyhow::Error::new(e).context("the benchmark stopped on an error"));
    // Nothing measured (e.g. preconditioning failed): the run never started.
    exit::after_stop(errors, outcome.result.interrupted || signalled, error)
}

/// Prints a group run's merged report; agents without a result fail the
/// command (exit 1) after the report, each named on stderr.
fn finish_group(
    outcome: cephbench::group::GroupOutcome,
    g: &Globals,
    signalled: bool,
) -> anyhow::Result<ExitCode> {
    cephbench::progress::forget_so_far();
    print(&outcome.result, g, None)?;
    let mut bad: Vec<String> = Vec::new();
    for (a, why) in outcome.missing.iter().chain(outcome.failed.iter()) {
        eprintln!("cephbench: warning: agent {a}: {why}");
        bad.push(a.clone());
    }
    if !bad.is_empty() {
        let n = outcome
            .result
            .clients
            .as_ref()
            .map_or(0, |c| c.clients.len());
        anyhow::bail!(
            "{} of {n} agents delivered no complete result ({}); the report covers the others",
            bad.len(),
            bad.join(", ")
        );
    }
    Ok(exit::after_report(
        outcome.result.data_errors(),
        outcome.result.interrupted || signalled,
        None,
    ))
}

/// `--steady-window` against the `--interval` given (the flags were checked
/// at the default interval).
fn steady_at_interval(
    s: Option<&cephbench::steady::SteadyConfig>,
    g: &Globals,
) -> Result<(), crate::cli::UsageError> {
    if let Some(s) = s {
        cephbench::plan::steady(
            Some(&s.criterion),
            Some(s.window),
            Some(s.max),
            g.interval,
            false,
        )
        .map_err(crate::cli::UsageError)?;
    }
    Ok(())
}

/// `--op-history` changes the OSDs' settings for the run and puts them
/// back: clients of a group would each save the others' raised value.
pub(crate) fn no_op_history_in_groups(
    group: bool,
    g: &Globals,
) -> Result<(), crate::cli::UsageError> {
    if group && g.op_history.is_some() {
        return Err(crate::cli::UsageError(
            "--op-history is for one client (each agent would raise and put back the same \
             OSDs' settings): drop it or --group/--clients"
                .into(),
        ));
    }
    Ok(())
}
