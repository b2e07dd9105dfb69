//! The `cephbench` binary: parses arguments, runs the command, prints the
//! report, and maps failures to one error line and an exit code: 0 clean;
//! 1 the run could not start or failed outside the measurement (connect,
//! pool, setup, an agent without a result); 2 bad input; 3 the run finished
//! and its report was printed, but ops failed, reads came back short or did
//! not match what was written; 4 `compare --fail-if-slower` found a
//! regression; 130 interrupted (3 wins: an interrupt never hides bad data).
#![forbid(unsafe_code)]

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use tokio::sync::watch;

use cephbench::bench;
use cephbench::ceph::Rados;
use cephbench::input::Input;
use cephbench::report::{Document, Format, View};
use cli::{Cli, Command, Progress, UsageError};

const EXIT_FAILURE: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_DATA_ERRORS: u8 = 3;
const EXIT_REGRESSION: u8 = 4;
const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a run whose report was printed: data errors (3) first,
/// then an interrupt (130), else 0. Data errors are counted on stderr, the
/// error that stopped the run (if any) last, as the line naming the fix.
fn exit_code(
    errors: cephbench::result::DataErrors,
    interrupted: bool,
    stopped_by: Option<anyhow::Error>,
) -> ExitCode {
    if !errors.is_clean() {
        eprintln!("cephbench: error: the run finished with {errors} (exit code 3)");
        if let Some(e) = stopped_by {
            eprintln!("cephbench: error: {e:#}");
        }
        ExitCode::from(EXIT_DATA_ERRORS)
    } else if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help / --version
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("cephbench: error: {first} (see `cephbench --help`)");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cephbench: error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::from(EXIT_FAILURE)
            }
        }
    }
}

/// The reader of stdout went away (e.g. `| head`): not an error of ours.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let live = match cli.progress {
        Progress::Always => true,
        Progress::Never => false,
        Progress::Auto => std::io::stderr().is_terminal(),
    };
    // Validate everything before touching the cluster.
    if let Command::Compare(args) = &cli.command {
        let view = View {
            verbose: cli.verbose,
            long: args.view.long,
        };
        return compare(
            &args.files,
            cli.format,
            view,
            args.view.aggregate,
            args.fail_if_slower,
        );
    }
    if let Command::Report(args) = &cli.command {
        let view = View {
            verbose: cli.verbose,
            long: args.view.long,
        };
        return report(
            &args.files,
            args.output.as_deref(),
            cli.format,
            view,
            args.view.aggregate,
        );
    }
    let mut conn = cli.conn.options();
    if let Command::Sweep(args) = &cli.command {
        let (job, opts) = args.plan(
            !cli.no_telemetry,
            cli.counter_interval,
            cli.progress != Progress::Never,
        )?;
        if cli.format == Format::Csv {
            return Err(UsageError(
                "sweep prints text, markdown, json or html; --format csv is for single results"
                    .into(),
            )
            .into());
        }
        if let cephbench::sweep::SweepJob::Rbd(c) = &job {
            conn.overrides
                .extend(cephbench::bench::rbd_cache_overrides(c.rbd_cache));
        }
        return run_sweep(&conn, cli.conn.telemetry_options(), &job, &opts, cli.format);
    }
    if let Command::Suite(args) = &cli.command {
        let (s, opts) = args.plan(!cli.no_telemetry, cli.counter_interval, live)?;
        conn.overrides.push(("rbd_cache".into(), "false".into()));
        let view = View {
            verbose: cli.verbose,
            long: args.view.long,
        };
        return run_suite(
            &conn,
            cli.conn.telemetry_options(),
            &s,
            &opts,
            (cli.format, view, args.view.aggregate.unwrap_or_default()),
            cli.progress != Progress::Never,
        );
    }
    if let Command::OsdBench(args) = &cli.command {
        let cfg = args.config()?;
        if cli.format == Format::Html {
            return Err(UsageError(
                "osd-bench prints text, markdown, csv or json; --format html is for benchmark results"
                    .into(),
            )
            .into());
        }
        return osd_bench(&conn, cli.conn.telemetry_options(), &cfg, cli.format, live);
    }
    let (rados_cfg, rbd_cfg) = match &cli.command {
        Command::Rados(a) => {
            let mut cfg = a.config(live)?;
            cfg.telemetry = !cli.no_telemetry;
            cfg.counter_interval = cli.counter_interval;
            (Some(cfg), None)
        }
        Command::Rbd(a) => {
            let mut cfg = a.config(live)?;
            cfg.telemetry = !cli.no_telemetry;
            cfg.counter_interval = cli.counter_interval;
            conn.overrides
                .extend(cephbench::bench::rbd_cache_overrides(cfg.rbd_cache));
            (None, Some(cfg))
        }
        Command::Compare(_)
        | Command::Report(_)
        | Command::Suite(_)
        | Command::OsdBench(_)
        | Command::Sweep(_) => {
            unreachable!("handled above")
        }
        Command::Agent(_) => (None, None),
        Command::Cleanup(a) => {
            if let Some(r) = &a.run_name {
                cephbench::objects::validate_run_name(r).map_err(UsageError)?;
            }
            cephbench::objects::validate_namespace(&a.namespace).map_err(UsageError)?;
            if let Some(i) = &a.image {
                if !i.starts_with(bench::IMAGE_PREFIX) || i.len() == bench::IMAGE_PREFIX.len() {
                    return Err(UsageError(format!(
                        "--image '{i}' is not an image cephbench made (those are named {}*); remove other images with `rbd rm`",
                        bench::IMAGE_PREFIX
                    ))
                    .into());
                }
            }
            (None, None)
        }
    };
    let group_cfg = match &cli.command {
        Command::Rados(a) => a.group.config(&a.pool, &a.namespace)?,
        Command::Rbd(a) => a.group.config(&a.pool, "")?,
        _ => None,
    };
    let agent_cfg = match &cli.command {
        Command::Agent(a) => Some(a.config()?),
        _ => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let rados = connect(&conn, cli.conn.telemetry_options())?;
    rt.block_on(async move {
        match cli.command {
            Command::Rados(args) => {
                let cfg = rados_cfg.expect("validated above");
                let hint =
                    cephbench::bench::cleanup_hint(&args.pool, &cfg.namespace, &cfg.run_name);
                let stop = install_signal_handlers(hint);
                if let Some(g) = group_cfg {
                    let job = cephbench::group::JobSpec::Rados(cfg);
                    let outcome = cephbench::group::run_group(&rados, &g, job, stop, |l| {
                        eprintln!("cephbench: group {}: {l}", g.group)
                    })
                    .await?;
                    return finish_group(outcome, cli.format, cli.verbose);
                }
                let outcome = bench::run_rados(&rados, &cfg, stop).await?;
                finish(outcome, cli.format, cli.verbose)
            }
            Command::Rbd(args) => {
                let cfg = rbd_cfg.expect("validated above");
                let hint = match &cfg.image {
                    bench::ImageChoice::Create { name, .. } => {
                        format!("cephbench cleanup -p {} --image {name}", args.pool)
                    }
                    // An existing image is not removed; nothing to clean.
                    bench::ImageChoice::Existing { .. } => {
                        "nothing (the image is not cephbench's)".into()
                    }
                };
                let stop = install_signal_handlers(hint);
                if let Some(g) = group_cfg {
                    let job = cephbench::group::JobSpec::Rbd(cfg);
                    let outcome = cephbench::group::run_group(&rados, &g, job, stop, |l| {
                        eprintln!("cephbench: group {}: {l}", g.group)
                    })
                    .await?;
                    return finish_group(outcome, cli.format, cli.verbose);
                }
                let outcome = bench::run_rbd(&rados, &cfg, stop).await?;
                finish(outcome, cli.format, cli.verbose)
            }
            Command::Compare(_)
            | Command::Report(_)
            | Command::Suite(_)
            | Command::OsdBench(_)
            | Command::Sweep(_) => {
                unreachable!("handled above")
            }
            Command::Agent(args) => {
                let cfg = agent_cfg.expect("validated above");
                let stop = install_signal_handlers(format!("cephbench cleanup -p {}", args.pool));
                let interrupted = stop.clone();
                let id = cfg.id.clone();
                let jobs = cephbench::group::run_agent(&rados, &cfg, stop, |l| {
                    eprintln!("cephbench agent {id}: {l}")
                })
                .await?;
                eprintln!("cephbench agent {}: ran {jobs} job(s)", cfg.id);
                Ok(if *interrupted.borrow() {
                    ExitCode::from(EXIT_INTERRUPTED)
                } else {
                    ExitCode::SUCCESS
                })
            }
            Command::Cleanup(args) => {
                let mut io = rados.ioctx(&args.pool)?;
                // Removal works on a full pool too.
                io.set_pool_full_try();
                if let Some(image) = &args.image {
                    cephbench::ceph::remove_image(&io, image)?;
                    println!("removed image '{image}' from pool '{}'", args.pool);
                    return Ok(ExitCode::SUCCESS);
                }
                let r = if args.all_namespaces {
                    bench::cleanup_all_namespaces(&rados, &mut io, args.run_name.as_deref(), 16)
                        .await?
                } else {
                    io.set_namespace(&args.namespace)?;
                    bench::cleanup(&rados, &io, args.run_name.as_deref(), 16).await?
                };
                let what = if args.all_namespaces {
                    " (every namespace)".to_string()
                } else if args.namespace.is_empty() {
                    String::new()
                } else {
                    format!(", namespace '{}'", args.namespace)
                };
                println!(
                    "removed {} cephbench objects and images from pool '{}'{what}",
                    r.removed, args.pool
                );
                if r.pool_removed {
                    println!(
                        "removed pool '{}' (created by cephbench --create-pool)",
                        args.pool
                    );
                }
                if let Some(w) = r.warning {
                    eprintln!("cephbench: warning: {w}");
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// Connects the data identity (and the telemetry identity, when given),
/// warning about a keyring others can read.
fn connect(
    conn: &cephbench::ceph::ConnectOptions,
    telemetry: Option<cephbench::ceph::ConnectOptions>,
) -> anyhow::Result<Rados> {
    let mut rados = Rados::connect(conn)?;
    if let Some(t) = telemetry {
        let telemetry = Rados::connect(&t)
            .with_context(|| format!("connecting the telemetry identity {}", t.entity))?;
        rados = rados.with_telemetry(telemetry);
    }
    if let Ok(k) = rados.conf_get("keyring") {
        for w in cephbench::secrets::keyring_warnings(&k) {
            eprintln!("cephbench: warning: {w}");
        }
    }
    Ok(rados)
}

/// `cephbench osd-bench`: each OSD's own bench in turn, its report on
/// stdout; exit 3 when an OSD's bench failed (the others still reported).
fn osd_bench(
    conn: &cephbench::ceph::ConnectOptions,
    telemetry: Option<cephbench::ceph::ConnectOptions>,
    cfg: &cephbench::osdbench::OsdBenchConfig,
    format: Format,
    live: bool,
) -> anyhow::Result<ExitCode> {
    let rados = connect(conn, telemetry)?;
    let r = cephbench::osdbench::run(&rados, cfg, |l| {
        if live {
            eprintln!("cephbench: {l}")
        }
    })?;
    let mut out = std::io::stdout().lock();
    cephbench::osdbench::report::render(&r, format, &mut out)?;
    out.flush()?;
    let failed = r.failed();
    if failed > 0 {
        eprintln!(
            "cephbench: error: the bench failed on {failed} of {} OSDs (exit code 3)",
            r.osds.len()
        );
        return Ok(ExitCode::from(EXIT_DATA_ERRORS));
    }
    Ok(ExitCode::SUCCESS)
}

/// The async runtime of a command and its connection to the cluster.
fn runtime_and_connect(
    conn: &cephbench::ceph::ConnectOptions,
    telemetry: Option<cephbench::ceph::ConnectOptions>,
) -> anyhow::Result<(tokio::runtime::Runtime, Rados)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    Ok((rt, connect(conn, telemetry)?))
}

/// `cephbench suite`: runs the suite on each pool in turn, prints each
/// table and, for several pools, their comparison.
fn run_suite(
    conn: &cephbench::ceph::ConnectOptions,
    telemetry: Option<cephbench::ceph::ConnectOptions>,
    suite: &cephbench::suite::Suite,
    opts: &[cephbench::suite::SuiteOptions],
    (format, view, aggregate): (Format, View, cephbench::suite::Aggregate),
    announce: bool,
) -> anyhow::Result<ExitCode> {
    let (rt, rados) = runtime_and_connect(conn, telemetry)?;
    if announce {
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
        let stop = install_signal_handlers(format!(
            "cephbench cleanup -p {}",
            opts.iter()
                .map(|o| o.pool.as_str())
                .collect::<Vec<_>>()
                .join(" / -p ")
        ));
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
        match failure {
            Some(e) if errors.is_clean() => Err(e),
            failure => Ok(exit_code(errors, interrupted, failure)),
        }
    })
}

/// `cephbench sweep`: runs the points on each pool, prints the curves.
fn run_sweep(
    conn: &cephbench::ceph::ConnectOptions,
    telemetry: Option<cephbench::ceph::ConnectOptions>,
    job: &cephbench::sweep::SweepJob,
    opts: &cephbench::sweep::SweepOptions,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let (rt, rados) = runtime_and_connect(conn, telemetry)?;
    if opts.progress {
        eprintln!("{}", cephbench::sweep::announce(job, opts));
    }
    rt.block_on(async move {
        let stop = install_signal_handlers(job.cleanup_hint(&opts.pools));
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
        match failure {
            Some(e) if errors.is_clean() => Err(e),
            failure => Ok(exit_code(errors, out.doc.interrupted, failure)),
        }
    })
}

/// Loads every file first (an unusable one is bad input, exit 2); suite
/// files get `aggregate` (or the one they recorded).
fn load_inputs(
    files: &[std::path::PathBuf],
    aggregate: Option<cephbench::suite::Aggregate>,
) -> anyhow::Result<Vec<(String, Input)>> {
    let mut inputs = Vec::new();
    for f in files {
        let input = cephbench::input::load_input(f).map_err(|e| UsageError(e.to_string()))?;
        let input = match (input, aggregate) {
            (Input::Suites(docs), Some(a)) => {
                Input::Suites(docs.into_iter().map(|d| d.with_aggregate(a)).collect())
            }
            (input, _) => input,
        };
        inputs.push((f.display().to_string(), input));
    }
    if aggregate.is_some() && !inputs.iter().any(|(_, i)| matches!(i, Input::Suites(_))) {
        return Err(UsageError(
            "--aggregate applies to suite files (`suite --format json`); drop it".into(),
        )
        .into());
    }
    Ok(inputs)
}

/// The suite documents of `inputs` when every input is a suite file.
fn all_suites(inputs: &[(String, Input)]) -> Option<Vec<cephbench::suite::SuiteDoc>> {
    let mut docs = Vec::new();
    for (_, i) in inputs {
        match i {
            Input::Suites(d) => docs.extend(d.iter().cloned()),
            _ => return None,
        }
    }
    Some(docs)
}

/// `cephbench compare`: no cluster involved. Inputs are cephbench results,
/// suites or fio JSON outputs; an unusable file is bad input (exit 2).
/// Suites with CrystalDiskMark's jobs print its table (`--long`: and the
/// full comparison); `--format json` always prints the comparison.
fn compare(
    files: &[std::path::PathBuf],
    format: Format,
    view: View,
    aggregate: Option<cephbench::suite::Aggregate>,
    fail_if_slower: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let inputs = load_inputs(files, aggregate)?;
    let mut sources = Vec::new();
    for (f, i) in &inputs {
        match i {
            Input::Result(r) => sources.push(cephbench::compare::Source::from(&**r)),
            Input::Fio(s) => sources.push(s.clone()),
            Input::Suites(docs) => {
                for d in docs {
                    sources.push(cephbench::suite::suite_source(d).ok_or_else(|| {
                        UsageError(format!("{f}: a suite result without any run"))
                    })?);
                }
            }
            Input::Sweep(_) => {
                return Err(UsageError(format!(
                    "{f}: a sweep cannot be compared; render it with `cephbench report {f}`"
                ))
                .into())
            }
        }
    }
    if sources.len() < 2 {
        return Err(UsageError(
            "compare needs at least two results (or one `suite --pools` file); add a file".into(),
        )
        .into());
    }
    let c = cephbench::compare::compare_sources(&sources);
    let suites = all_suites(&inputs)
        .map(cephbench::suite::Suites::new)
        .filter(|s| s.cdm.is_some() && format != Format::Json);
    let doc = match suites {
        Some(s) => Document::Suites(s),
        None => Document::Comparison(c.clone()),
    };
    let mut out = std::io::stdout().lock();
    cephbench::report::render(&doc, format, view, &mut out)?;
    out.flush()?;
    if let Some(pct) = fail_if_slower {
        let r = cephbench::compare::regressions(&c, pct);
        for l in &r {
            eprintln!("cephbench: regression: {l}");
        }
        if !r.is_empty() {
            return Ok(ExitCode::from(EXIT_REGRESSION));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `cephbench report`: re-renders saved results, suites or a sweep, no
/// cluster involved. Every file is loaded and checked first; on any error
/// nothing is written.
fn report(
    files: &[std::path::PathBuf],
    output: Option<&std::path::Path>,
    format: Format,
    view: View,
    aggregate: Option<cephbench::suite::Aggregate>,
) -> anyhow::Result<ExitCode> {
    let inputs = load_inputs(files, aggregate)?;
    let mut buf = Vec::new();
    if let [(_, Input::Sweep(doc))] = &inputs[..] {
        if format == Format::Csv {
            return Err(UsageError(
                "a sweep renders as text, markdown, json or html; drop --format csv".into(),
            )
            .into());
        }
        cephbench::sweep::render(doc, format, &mut buf)?;
        return write_report(&buf, output);
    }
    let doc = if let Some(docs) = all_suites(&inputs) {
        Document::Suites(cephbench::suite::Suites::new(docs))
    } else {
        let mut results = Vec::new();
        for (f, i) in inputs {
            match i {
                Input::Result(r) => results.push((f, *r)),
                Input::Fio(_) => {
                    return Err(UsageError(format!(
                        "{f}: this is fio output: `cephbench compare` imports it; `report` renders \
                         cephbench results"
                    ))
                    .into())
                }
                other => {
                    return Err(UsageError(format!(
                    "{f}: {} cannot be rendered with results on one report; render it on its own",
                    other.kind()
                ))
                    .into())
                }
            }
        }
        Document::Results(results)
    };
    cephbench::report::render(&doc, format, view, &mut buf)?;
    write_report(&buf, output)
}

/// Writes a rendered report to `output`, or to stdout.
fn write_report(buf: &[u8], output: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    match output {
        Some(path) => {
            std::fs::write(path, buf).with_context(|| format!("cannot write {}", path.display()))?
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(buf)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the report and turns the outcome into an exit code.
fn finish(outcome: bench::Outcome, format: Format, verbose: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    format
        .reporter_for(View {
            verbose,
            long: false,
        })
        .render(&outcome.result, &mut out)?;
    if let Some(n) = outcome.cleaned {
        if format == Format::Text {
            writeln!(out, "\nRemoved {n} objects written by this run.")?;
        }
    }
    out.flush()?;
    if let Some(hint) = &outcome.leftovers {
        eprintln!("cephbench: warning: this run left objects behind; remove them with `{hint}`");
    }
    let errors = outcome.result.data_errors();
    let error = outcome
        .error
        .map(|e| anyhow::Error::new(e).context("the benchmark stopped on an error"));
    match error {
        // Nothing measured (e.g. preconditioning failed): the run never started.
        Some(e) if errors.is_clean() => Err(e),
        error => Ok(exit_code(errors, outcome.result.interrupted, error)),
    }
}

/// Prints a group run's merged report; agents without a result fail the
/// command (exit 1) after the report, each named on stderr.
fn finish_group(
    outcome: cephbench::group::GroupOutcome,
    format: Format,
    verbose: bool,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    format
        .reporter_for(View {
            verbose,
            long: false,
        })
        .render(&outcome.result, &mut out)?;
    out.flush()?;
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
    Ok(exit_code(
        outcome.result.data_errors(),
        outcome.result.interrupted,
        None,
    ))
}

/// A second SIGINT/SIGTERM this soon after the first is the same interrupt
/// delivered twice (as `timeout` does), not a request to exit at once.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(250);

/// First SIGINT/SIGTERM: stop issuing ops, drain, report, clean up.
/// Second (at least [`SAME_INTERRUPT`] later): exit at once, naming the
/// command that removes the leftovers.
fn install_signal_handlers(cleanup_hint: String) -> watch::Receiver<bool> {
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
        std::process::exit(i32::from(EXIT_INTERRUPTED));
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
