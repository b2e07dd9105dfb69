//! `cephbench compare`: result files side by side, with a Diff % column per
//! figure against the first file and a verdict on whether the difference is
//! larger than the run-to-run noise.
//!
//! Noise method (stated in the output): each figure's per-second samples in
//! the measured window (ramp seconds excluded) give a mean and a standard
//! error (sd / sqrt(n)); a difference counts as real when it exceeds twice
//! the combined standard error, sqrt(se_a² + se_b²). Per-second samples are
//! serially correlated, so this under-states the noise of short runs; repeat
//! runs give a better estimate. Percentiles have no per-second samples and
//! get no verdict.
#![forbid(unsafe_code)]

use std::io;

use serde::Serialize;

use crate::report::{workload_label, wrap, TEXT_WIDTH};
use crate::result::{BenchResult, JobReport};

/// One figure of one job across the files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `job/op`, e.g. `randwrite/write`.
    pub job: String,
    /// The figure, e.g. `IOPS`.
    pub figure: &'static str,
    /// Its value in each file (`None` if a file lacks the job).
    pub values: Vec<Option<f64>>,
    /// Diff % of each file against the first.
    pub diff_pct: Vec<Option<f64>>,
    /// Whether each difference exceeds the noise (`None`: no estimate).
    pub significant: Vec<Option<bool>>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// A label per file (workload on pool).
    pub labels: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
    /// The noise method, in words.
    pub method: &'static str,
    /// What the reader must know about the inputs (e.g. fio's latency kind).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One input of a comparison: a cephbench result or an imported fio run.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// What ran where, e.g. `rados write 4 KiB QD16 on rbd-vm`.
    pub label: String,
    /// Its jobs, in cephbench's row shape.
    pub jobs: Vec<JobReport>,
    /// Notes printed under the labels.
    pub notes: Vec<String>,
}

impl From<&BenchResult> for Source {
    fn from(r: &BenchResult) -> Self {
        let (w, p) = workload_label(r);
        Source {
            label: format!("{w} on {p}"),
            jobs: r.jobs.clone(),
            notes: Vec::new(),
        }
    }
}

/// How noise is judged, as printed.
pub const METHOD: &str =
    "difference counted as real (*) when larger than 2 x sqrt(se_a^2 + se_b^2), \
se = standard error of the per-second samples of the measured window; percentiles get no verdict";

#[derive(Clone, Copy)]
enum Fig {
    Iops,
    MibS,
    Mean,
    P50,
    P99,
    P999,
}

const FIGURES: [(Fig, &str); 6] = [
    (Fig::Iops, "IOPS"),
    (Fig::MibS, "MiB/s"),
    (Fig::Mean, "mean lat ms"),
    (Fig::P50, "p50 lat ms"),
    (Fig::P99, "p99 lat ms"),
    (Fig::P999, "p99.9 lat ms"),
];

fn value(j: &JobReport, f: Fig) -> f64 {
    let l = &j.latency_ns;
    match f {
        Fig::Iops => j.iops,
        Fig::MibS => j.bytes_per_sec / f64::from(1u32 << 20),
        Fig::Mean => l.mean / 1e6,
        Fig::P50 => l.p50 as f64 / 1e6,
        Fig::P99 => l.p99 as f64 / 1e6,
        Fig::P999 => l.p99_9 as f64 / 1e6,
    }
}

/// Mean and standard error of a figure from the per-second samples: rates
/// are normalised by each sample's interval, and the short last interval
/// (the job ending between two ticks) is left out.
fn noise(j: &JobReport, f: Fig) -> Option<(f64, f64)> {
    let mut prev_t = 0.0;
    let mut samples = Vec::new();
    for s in &j.timeline {
        let dt = s.t_s - prev_t;
        prev_t = s.t_s;
        if s.ramp || s.ops == 0 || dt < 0.5 {
            continue;
        }
        samples.push(match f {
            Fig::Iops => s.ops as f64 / dt,
            Fig::MibS => s.bytes as f64 / f64::from(1u32 << 20) / dt,
            Fig::Mean => s.mean_latency_ns / 1e6,
            _ => return None,
        });
    }
    let n = samples.len();
    if n < 3 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, (var / n as f64).sqrt()))
}

/// Builds the comparison of `results` (the first is the baseline).
pub fn compare(results: &[BenchResult]) -> Comparison {
    let sources: Vec<Source> = results.iter().map(Source::from).collect();
    compare_sources(&sources)
}

/// Builds the comparison of `sources` (the first is the baseline).
pub fn compare_sources(results: &[Source]) -> Comparison {
    let labels = results.iter().map(|s| s.label.clone()).collect();
    let mut notes: Vec<String> = Vec::new();
    for s in results {
        for n in &s.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let mut keys: Vec<String> = Vec::new();
    for r in results {
        for j in &r.jobs {
            let k = format!("{}/{}", j.name, j.op);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let find = |r: &Source, key: &str| -> Option<JobReport> {
        r.jobs
            .iter()
            .find(|j| format!("{}/{}", j.name, j.op) == key)
            .cloned()
    };
    let mut rows = Vec::new();
    for key in &keys {
        let jobs: Vec<Option<JobReport>> = results.iter().map(|r| find(r, key)).collect();
        for (fig, name) in FIGURES {
            let values: Vec<Option<f64>> = jobs
                .iter()
                .map(|j| j.as_ref().map(|j| value(j, fig)))
                .collect();
            let base = values[0];
            let diff_pct = values
                .iter()
                .map(|v| match (base, v) {
                    (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b * 100.0),
                    _ => None,
                })
                .collect();
            let base_noise = jobs[0].as_ref().and_then(|j| noise(j, fig));
            let significant = jobs
                .iter()
                .map(|j| {
                    let (_, se_b) = noise(j.as_ref()?, fig)?;
                    let (_, se_a) = base_noise?;
                    let (a, b) = (base?, value(j.as_ref()?, fig));
                    Some((b - a).abs() > 2.0 * (se_a * se_a + se_b * se_b).sqrt())
                })
                .collect();
            rows.push(Row {
                job: key.clone(),
                figure: name,
                values,
                diff_pct,
                significant,
            });
        }
    }
    Comparison {
        labels,
        rows,
        method: METHOD,
        notes,
    }
}

/// The figures `compare --fail-if-slower` judges, and whether higher is better.
const GATED: [(&str, bool); 3] = [("IOPS", true), ("MiB/s", true), ("mean lat ms", false)];

/// The regressions beyond `pct` percent: every IOPS, MiB/s or mean-latency
/// figure of a file other than the baseline that is worse than the
/// baseline's by more than `pct` % (lower throughput, higher latency), unless
/// the noise verdict says the difference is within the noise. One line each.
pub fn regressions(c: &Comparison, pct: f64) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        let Some(&(_, higher_better)) = GATED.iter().find(|(f, _)| *f == r.figure) else {
            continue;
        };
        for i in 1..r.diff_pct.len() {
            let Some(d) = r.diff_pct[i] else { continue };
            let worse = if higher_better { -d } else { d };
            if worse > pct && r.significant[i] != Some(false) {
                out.push(format!(
                    "{} {}: {} -> {} ({:+.1}%, worse than the {pct}% threshold) in {}",
                    r.job,
                    r.figure,
                    fmt_value(r.values[0]),
                    fmt_value(r.values[i]),
                    d,
                    c.labels[i]
                ));
            }
        }
    }
    out
}

/// A figure as the tables print it (`-` when absent).
pub fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// A Diff % cell: `+12.3% *` (significant), `~` (within the noise), or
/// bare (no noise estimate).
pub fn fmt_diff(d: Option<f64>, sig: Option<bool>) -> String {
    match d {
        None => "-".into(),
        Some(d) => format!(
            "{d:+.1}%{}",
            match sig {
                Some(true) => " *",
                Some(false) => " ~",
                None => "",
            }
        ),
    }
}

/// Renders the comparison as a text or Markdown table.
pub fn render(c: &Comparison, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    // Prose is wrapped to the terminal width in text mode; the table is not.
    let fit = |s: String| {
        if markdown {
            s
        } else {
            wrap(&s, TEXT_WIDTH)
        }
    };
    for (i, l) in c.labels.iter().enumerate() {
        let line = format!("{}{}: {l}", if markdown { "- " } else { "" }, letter(i));
        writeln!(out, "{}", fit(line))?;
    }
    for n in &c.notes {
        let line = format!("{}Note: {n}", if markdown { "- " } else { "" });
        writeln!(out, "{}", fit(line))?;
    }
    writeln!(out)?;
    let mut head = vec!["job".to_string(), "figure".to_string()];
    for i in 0..c.labels.len() {
        head.push(letter(i));
        if i > 0 {
            head.push(format!("Diff {}", letter(i)));
        }
    }
    let mut lines = vec![head];
    for r in &c.rows {
        let mut line = vec![r.job.clone(), r.figure.to_string()];
        for i in 0..r.values.len() {
            line.push(fmt_value(r.values[i]));
            if i > 0 {
                line.push(fmt_diff(r.diff_pct[i], r.significant[i]));
            }
        }
        lines.push(line);
    }
    if markdown {
        for (n, l) in lines.iter().enumerate() {
            writeln!(out, "| {} |", l.join(" | "))?;
            if n == 0 {
                let seps: Vec<&str> = l
                    .iter()
                    .enumerate()
                    .map(|(i, _)| if i < 2 { "---" } else { "---:" })
                    .collect();
                writeln!(out, "| {} |", seps.join(" | "))?;
            }
        }
    } else {
        let cols = lines[0].len();
        let widths: Vec<usize> = (0..cols)
            .map(|i| {
                lines
                    .iter()
                    .map(|l| l[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for l in &lines {
            let cells: Vec<String> = l
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if i < 2 {
                        format!("{s:<w$}", w = widths[i])
                    } else {
                        format!("{s:>w$}", w = widths[i])
                    }
                })
                .collect();
            writeln!(out, "{}", cells.join("  ").trim_end())?;
        }
    }
    writeln!(out)?;
    let foot = format!("* = {}; ~ = within the noise.", c.method);
    writeln!(out, "{}", fit(foot))
}

fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Sample;
    use crate::stats::LatencySummary;

    fn job(iops_per_sec: &[u64], mean_ms: f64) -> JobReport {
        let ops: u64 = iops_per_sec.iter().sum();
        let secs = iops_per_sec.len() as f64;
        JobReport {
            name: "write".into(),
            op: "write".into(),
            ops,
            errors: 0,
            bytes: ops * 4096,
            elapsed_s: secs,
            iops: ops as f64 / secs,
            bytes_per_sec: ops as f64 * 4096.0 / secs,
            latency_ns: LatencySummary {
                mean: mean_ms * 1e6,
                p99: (mean_ms * 3e6) as u64,
                ..Default::default()
            },
            stop_reason: "duration".into(),
            verify_mismatches: None,
            short_reads: 0,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: 0.0,
            slow_ops: 0,
            slow_op_s: 1.0,
            timeline: iops_per_sec
                .iter()
                .enumerate()
                .map(|(i, o)| Sample {
                    t_s: i as f64 + 1.0,
                    ramp: false,
                    ops: *o,
                    bytes: o * 4096,
                    mean_latency_ns: mean_ms * 1e6,
                    in_flight: 16,
                    errors: 0,
                })
                .collect(),
            histogram: None,
            attribution: None,
            service_latency_ns: None,
            rate: None,
        }
    }

    fn result_with(j: JobReport) -> BenchResult {
        crate::result::test_result("p", vec![j])
    }

    #[test]
    fn diff_and_noise_verdicts() {
        let a = job(&[1000, 1010, 990, 1005, 995], 16.0);
        let b_same = job(&[1001, 1012, 989, 1004, 996], 16.0);
        let b_faster = job(&[2000, 2010, 1990, 2005, 1995], 8.0);
        let noisy = job(&[500, 1500, 700, 1400, 900], 16.0);
        for (b, sig, pct) in [(b_same, false, 0.04), (b_faster, true, 100.0)] {
            let ra = result_with(a.clone());
            let rb = result_with(b);
            let c = compare(&[ra, rb]);
            let iops = c.rows.iter().find(|r| r.figure == "IOPS").unwrap();
            assert!((iops.diff_pct[1].unwrap() - pct).abs() < 0.5, "{iops:?}");
            assert_eq!(iops.significant[1], Some(sig), "{iops:?}");
            let p99 = c.rows.iter().find(|r| r.figure == "p99 lat ms").unwrap();
            assert_eq!(p99.significant[1], None, "percentiles get no verdict");
        }
        let c = compare(&[
            result_with(noisy),
            result_with(job(&[1100, 1100, 1100, 1100, 1100], 16.0)),
        ]);
        let iops = c.rows.iter().find(|r| r.figure == "IOPS").unwrap();
        assert_eq!(
            iops.significant[1],
            Some(false),
            "+10% inside a noisy baseline: {iops:?}"
        );
    }

    #[test]
    fn regressions_beyond_threshold() {
        let base = job(&[1000, 1010, 990, 1005, 995], 16.0);
        let slower = job(&[800, 810, 790, 805, 795], 20.0);
        let faster = job(&[2000, 2010, 1990, 2005, 1995], 8.0);
        let c = compare(&[result_with(base.clone()), result_with(slower)]);
        let r = regressions(&c, 10.0);
        // IOPS -20%, MiB/s -20%, mean latency +25%: three lines.
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(
            r[0].starts_with("write/write IOPS: ") && r[0].contains("-20.0%"),
            "{r:?}"
        );
        assert!(regressions(&c, 30.0).is_empty(), "within a 30% threshold");
        let c = compare(&[result_with(base.clone()), result_with(faster)]);
        assert!(regressions(&c, 1.0).is_empty(), "faster is no regression");
        let noisy = job(&[500, 1500, 700, 1400, 900], 16.0);
        let c = compare(&[result_with(base), result_with(noisy)]);
        assert!(
            regressions(&c, 5.0).is_empty(),
            "-20% but within the noise: {:?}",
            regressions(&c, 5.0)
        );
    }
}
