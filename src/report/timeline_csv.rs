//! `--format timeline-csv`: the timeline, one line per job (op kind) and
//! interval, for spreadsheets and plotting tools. Latencies in
//! milliseconds, bandwidth in MiB/s, rates over each interval's own length.
#![forbid(unsafe_code)]

use std::io;

use super::csv::field;
use super::{workload_label, Csv, Reporter};
use crate::compare::Comparison;
use crate::result::BenchResult;
use crate::suite::Suites;

/// The timeline CSV reporter.
pub struct TimelineCsv;

/// The columns, in order. `source`: the file (several results), or the
/// suite, pool and run (`suite:pool:job#run`); empty for a single run.
/// `t_s`: the interval's end, seconds since the job started (ramp
/// included); `interval_s`: its length; `ramp`: whether it lies in the
/// ramp-up (not in the job's figures). `lat_p50_ms`/`lat_p99_ms` come from
/// the interval's own histogram, `lat_max_ms` is its slowest op; they are
/// empty for an interval without ops or without a histogram (merged group
/// results, files written before them).
pub const TIMELINE_HEADER: &str =
    "source,workload,pool,job,op,t_s,interval_s,ramp,ops,errors,iops,\
mib_per_s,lat_mean_ms,lat_p50_ms,lat_p99_ms,lat_max_ms,in_flight";

impl Reporter for TimelineCsv {
    fn render(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{TIMELINE_HEADER}")?;
        rows("", r, out)
    }

    /// One header for every file; `source` names each.
    fn render_results(
        &self,
        results: &[(String, BenchResult)],
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        writeln!(out, "{TIMELINE_HEADER}")?;
        for (name, r) in results {
            rows(if results.len() > 1 { name } else { "" }, r, out)?;
        }
        Ok(())
    }

    /// A comparison has no timeline of its own: its CSV (`--format csv`).
    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()> {
        Csv.render_comparison(c, out)
    }

    /// Every run of every suite, in the order they ran.
    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{TIMELINE_HEADER}")?;
        for d in &s.docs {
            for run in &d.runs {
                let source = format!("{}:{}:{}#{}", d.suite, d.pool, run.job, run.run);
                rows(&source, &run.result, out)?;
            }
        }
        Ok(())
    }
}

/// One line per job and interval of `r`.
fn rows(source: &str, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let (workload, pool) = workload_label(r);
    let (workload, pool, source) = (field(&workload), field(&pool), field(source));
    let ms = |ns: Option<u64>| ns.map_or(String::new(), |ns| format!("{:.3}", ns as f64 / 1e6));
    for j in &r.jobs {
        let mut prev = 0.0;
        for s in &j.timeline {
            let dt = s.t_s - prev;
            prev = s.t_s;
            let per_s = |x: f64| if dt > 0.0 { x / dt } else { 0.0 };
            writeln!(
                out,
                "{source},{workload},{pool},{},{},{:.3},{:.3},{},{},{},{:.1},{:.3},{},{},{},{},{}",
                field(&j.name),
                j.op,
                s.t_s,
                dt,
                s.ramp,
                s.ops,
                s.errors,
                per_s(s.ops as f64),
                per_s(s.bytes as f64 / f64::from(1u32 << 20)),
                if s.ops > 0 {
                    format!("{:.3}", s.mean_latency_ns / 1e6)
                } else {
                    String::new()
                },
                ms(s.p50_latency_ns),
                ms(s.p99_latency_ns),
                ms(s.max_latency_ns),
                s.in_flight
            )?;
        }
    }
    Ok(())
}
