//! The commands that read files only: `compare` and `report`. Every file is
//! loaded and checked before anything is printed or written; an unusable
//! file is bad input (exit 2).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use cephbench::input::Input;
use cephbench::report::{Document, Format};

use crate::cli::{CompareArgs, Globals, ReportArgs, UsageError};
use crate::cmd::exit;

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
pub fn compare(args: &CompareArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let (format, view) = (g.format, args.view.view(g));
    let inputs = load_inputs(&args.files, args.view.aggregate)?;
    let mut sources = Vec::new();
    for (f, i) in &inputs {
        match i {
            Input::Result(r) => sources.push(cephbench::compare::Source::from(&**r)),
            Input::Fio(s) => sources.push((**s).clone()),
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
    let mut c = cephbench::compare::compare_sources(&sources);
    if args.own_projections {
        c = c.with_own_projections(&sources);
    }
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
    if let Some(pct) = args.fail_if_slower {
        let r = cephbench::compare::regressions(&c, pct);
        for l in &r {
            eprintln!("cephbench: regression: {l}");
        }
        if !r.is_empty() {
            return Ok(ExitCode::from(exit::REGRESSION));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `cephbench report`: re-renders saved results, suites or a sweep, no
/// cluster involved. Every file is loaded and checked first; on any error
/// nothing is written.
pub fn report(args: &ReportArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let (format, view, output) = (g.format, args.view.view(g), args.output.as_deref());
    let inputs = load_inputs(&args.files, args.view.aggregate)?;
    let mut buf = Vec::new();
    if !args.what_if.is_empty() && !inputs.iter().all(|(_, i)| matches!(i, Input::Result(_))) {
        return Err(UsageError(
            "--what-if projects result files (cephbench rados/rbd --format json); drop it for \
             suites, sweeps and fio output"
                .into(),
        )
        .into());
    }
    if let [(_, Input::Sweep(doc))] = &inputs[..] {
        if matches!(format, Format::Csv | Format::TimelineCsv) {
            return Err(UsageError(
                "a sweep renders as text, markdown, json or html; drop --format csv/timeline-csv"
                    .into(),
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
                Input::Result(mut r) => {
                    if !args.what_if.is_empty()
                        && cephbench::explain::whatif::add_asked(&mut r, &args.what_if) == 0
                    {
                        return Err(UsageError(format!(
                            "{f}: no job's split allows the --what-if asked (flush changes \
                             need writes of at most 64 KiB with a device-flush share, \
                             cluster-rtt a cluster-network share, like:osd.N that OSD's counters)"
                        ))
                        .into());
                    }
                    results.push((f, *r))
                }
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
