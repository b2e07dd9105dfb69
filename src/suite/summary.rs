//! The suite result document, its summary table (one row per job and op:
//! the median over runs and the spread between them) and its text and
//! Markdown renderings.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use crate::compare::{self, Comparison};
use crate::progress::Sample;
use crate::result::{BenchResult, JobReport, PoolSettings};
use crate::stats::LatencySummary;

/// Layout version of [`SuiteDoc`].
pub const SUITE_SCHEMA_VERSION: u32 = 1;

/// A figure whose spread between runs is larger than this (percent) is flagged.
pub const SPREAD_LIMIT_PCT: f64 = 10.0;

/// What `cephbench suite --format json` prints (schema: `schema/suite.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteDoc {
    /// Layout version ([`SUITE_SCHEMA_VERSION`]).
    pub suite_schema_version: u32,
    /// The suite's name.
    pub suite: String,
    /// `built-in` or the suite file's path.
    pub source: String,
    /// The pool it ran on (with `data_pool`: of the RBD image's metadata).
    pub pool: String,
    /// `--data-pool`: the pool the RBD image's data objects and the rados
    /// jobs went to, whose settings `pool_settings` are (null: `pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// The settings the suite ran with.
    pub settings: SuiteSettings,
    /// The pool's settings and its OSDs' memory targets, as probed before the first job.
    pub pool_settings: Option<PoolSettings>,
    /// When the suite started, seconds since the epoch.
    pub started_unix: u64,
    /// Wall time of the whole suite, seconds.
    pub elapsed_s: f64,
    /// Whether it was cut short by SIGINT/SIGTERM or a failed job.
    pub interrupted: bool,
    /// Every run's full result, in the order they ran.
    pub runs: Vec<RunEntry>,
    /// The table.
    pub summary: Summary,
}

/// The options a suite ran with (after `--runs`, `--runtime`, `--ramp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteSettings {
    /// Runs of every job.
    pub runs: u32,
    /// Measured seconds of each run (a job of a user suite may have its own).
    pub runtime_s: f64,
    /// Ramp-up seconds of each run.
    pub ramp_s: f64,
    /// Size of the shared RBD image (0: no RBD jobs).
    pub image_size: u64,
    /// Bytes of it used and preconditioned once.
    pub test_area: u64,
    /// Whether the per-OSD probes ran.
    pub telemetry: bool,
    /// How the table's figures are made from the runs (`--aggregate`;
    /// documents without it: median).
    #[serde(default)]
    pub aggregate: Aggregate,
}

/// How a summary row's figures are made from a job's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// The median over runs (for two runs, their mean), as the lab method takes it.
    #[default]
    Median,
    /// The best run (the highest MB/s, or IOPS where no bytes move), every
    /// figure of the row that run's, as CrystalDiskMark takes the best of
    /// its passes.
    Best,
}

impl Aggregate {
    /// `median of 3 runs`, `best of 3 runs`.
    pub fn of_runs(self, runs: u32) -> String {
        let s = if runs == 1 { "" } else { "s" };
        match self {
            Aggregate::Median => format!("median of {runs} run{s}"),
            Aggregate::Best => format!("best of {runs} run{s}"),
        }
    }

    /// Its name, as `--aggregate` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregate::Median => "median",
            Aggregate::Best => "best",
        }
    }
}

/// One run of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// The suite job's name.
    pub job: String,
    /// 1-based run number.
    pub run: u32,
    /// The run's result document.
    pub result: BenchResult,
}

/// The summary table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How the figures are made, in words.
    pub method: String,
    /// Spread (percent) above which a figure is flagged.
    pub spread_limit_pct: f64,
    /// RAM the pool's OSDs are configured to hold (sum of `osd_memory_target`), bytes.
    pub memory_held_bytes: Option<u64>,
    /// RAM the pool's OSDs held, measured: the largest sum of their
    /// processes' resident sets after any run (null unless every OSD of the
    /// pool runs on this host), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_measured_bytes: Option<u64>,
    /// What `iops_per_gib` divides by: the RAM one OSD holds (the pool's
    /// total over its OSD count), bytes; measured when known, else the
    /// configured target (IOPS per GiB of one OSD's RAM; e.g. 8 GiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_per_osd_bytes: Option<f64>,
    /// Where `ram_per_osd_bytes` comes from: `measured` (resident sets) or
    /// `osd_memory_target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_source: Option<String>,
    /// One row per job and op kind.
    pub rows: Vec<SummaryRow>,
}

/// One row: a job's op kind over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The suite job.
    pub job: String,
    /// `read`, `write` or `flush`.
    pub op: String,
    /// Row label (`job`, plus the op when the job has several).
    pub label: String,
    /// Runs that contributed.
    pub runs: u32,
    /// Ops per second.
    pub iops: Figure,
    /// Megabytes (10^6 bytes) per second.
    pub mb_s: Figure,
    /// Mean completion latency, ms.
    pub mean_ms: Figure,
    /// 99th percentile completion latency, ms.
    pub p99_ms: Figure,
    /// IOPS per GiB of RAM one OSD of the pool holds (72,000 IOPS / 8 GiB = 9,000); see `Summary::ram_source`.
    pub iops_per_gib: Option<f64>,
    /// Whether any figure's spread exceeds the limit.
    pub flagged: bool,
    /// CPU µs per client op of the pool's OSDs ([`crate::explain::cpu::pool`]),
    /// over the runs as the other figures; absent unless every run measured
    /// every OSD of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_op: Option<f64>,
}

/// One figure over the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The median over runs (for two runs: their mean), or with
    /// `--aggregate best` the best run's value.
    pub value: f64,
    /// Half the range between runs, in percent of `value`: (max - min) / 2 / value.
    pub spread_pct: f64,
    /// Whether `spread_pct` exceeds the limit.
    pub flagged: bool,
    /// Each run's value.
    pub runs: Vec<f64>,
}

impl SuiteDoc {
    /// Whether every job of the suite ran once: its figures have no spread.
    pub fn one_run_each(&self) -> bool {
        self.summary.rows.iter().all(|r| r.runs <= 1)
    }

    /// The pool the data went to, what the tables call the suite's side:
    /// the data pool, else the pool.
    pub fn io_pool(&self) -> &str {
        self.data_pool.as_deref().unwrap_or(&self.pool)
    }

    /// Where it ran, in words: `pool rbd`, or `pool rbd, data in pool ec21`.
    pub fn where_ran(&self) -> String {
        crate::result::where_ran(&self.pool, self.data_pool.as_deref())
    }

    /// The jobs in the table's order.
    pub fn job_order(&self) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        for r in &self.summary.rows {
            if !order.contains(&r.job) {
                order.push(r.job.clone());
            }
        }
        order
    }

    /// The document with its summary made as `aggregate` says (recorded in
    /// its settings).
    pub fn with_aggregate(mut self, aggregate: Aggregate) -> SuiteDoc {
        if aggregate != self.settings.aggregate {
            self.summary = summarize(
                &self.job_order(),
                &self.runs,
                self.pool_settings.as_ref(),
                aggregate,
            );
            self.settings.aggregate = aggregate;
        }
        self
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

impl Figure {
    /// The spread between runs in percent; none with one run (there is no
    /// spread to give).
    pub fn spread(&self) -> Option<f64> {
        (self.runs.len() > 1).then_some(self.spread_pct)
    }

    /// The figure of `runs`: their median.
    pub fn of(runs: Vec<f64>) -> Figure {
        let value = median(&runs);
        Figure::around(value, runs)
    }

    /// The figure of `runs` centred on `value` (the median, or the best run's).
    fn around(value: f64, runs: Vec<f64>) -> Figure {
        let max = runs.iter().copied().fold(f64::MIN, f64::max);
        let min = runs.iter().copied().fold(f64::MAX, f64::min);
        let spread_pct = if runs.len() > 1 && value != 0.0 {
            (max - min) / 2.0 / value.abs() * 100.0
        } else {
            0.0
        };
        Figure {
            value,
            spread_pct,
            flagged: spread_pct > SPREAD_LIMIT_PCT,
            runs,
        }
    }
}

const METHOD: &str = "each figure is the median over runs (for two runs, their mean); \
spread = (max - min) / 2 / median; flagged (!) above 10%; latencies are completion latencies; \
bandwidth in MiB/s (2^20 bytes/s; the mb_s field holds 10^6 bytes/s); IOPS/GiB = IOPS / the RAM one OSD of the pool holds (measured resident set when every OSD runs on \
this host, else osd_memory_target; the pool's total over its OSD count)";

const METHOD_BEST: &str = "each figure is the best run's (the run with the highest bandwidth, or IOPS \
where no bytes move; its latencies too, not the best latencies of any run); \
spread = (max - min) / 2 / that value; flagged (!) above 10%; latencies are completion latencies; \
bandwidth in MiB/s (2^20 bytes/s; the mb_s field holds 10^6 bytes/s); IOPS/GiB = IOPS / the RAM one OSD of the pool holds (measured resident set when every OSD runs on \
this host, else osd_memory_target; the pool's total over its OSD count)";

/// A row's `mb_s` (10^6 bytes/s, as stored and as CrystalDiskMark
/// counts) in MiB/s, the unit of every other table; the spread is a
/// percentage and does not change.
pub fn mib_s(mb_s: &Figure) -> Figure {
    let to = |x: f64| x * 1e6 / crate::units::MIB;
    Figure {
        value: to(mb_s.value),
        runs: mb_s.runs.iter().map(|x| to(*x)).collect(),
        ..mb_s.clone()
    }
}

/// The index of the best of `reps`: the highest bytes/s, then IOPS.
fn best_index(reps: &[&JobReport]) -> usize {
    (0..reps.len())
        .max_by(|a, b| {
            let (a, b) = (reps[*a], reps[*b]);
            a.bytes_per_sec
                .total_cmp(&b.bytes_per_sec)
                .then(a.iops.total_cmp(&b.iops))
        })
        .unwrap_or(0)
}

/// The job reports of one row, in run order.
fn row_reports<'a>(runs: &'a [RunEntry], job: &str, op: &str) -> Vec<&'a JobReport> {
    runs.iter()
        .filter(|r| r.job == job)
        .filter_map(|r| r.result.jobs.iter().find(|j| j.op == op))
        .collect()
}

/// Of several repetitions' clients, the one that kept the least of its
/// asked ops in flight.
fn shortest_client(reps: &[&JobReport]) -> Option<crate::result::ClientLoad> {
    reps.iter()
        .filter_map(|j| j.client)
        .min_by(|a, b| a.share().total_cmp(&b.share()))
}

/// The runs of `doc` on a cluster that was not quiet: `job 'J' run N
/// not quiet: ...` ([`crate::result::cluster::ClusterState::not_quiet`]),
/// in the order they ran.
pub fn not_quiet_runs(doc: &SuiteDoc) -> Vec<String> {
    doc.runs
        .iter()
        .filter_map(|r| {
            let line = r.result.cluster_state.as_ref()?.not_quiet()?;
            Some(format!("job '{}' run {} {line}", r.job, r.run))
        })
        .collect()
}

/// The client of a summary row: over the row's runs, the one that kept
/// the least of its asked ops in flight (`None` where none recorded it).
pub fn row_client(doc: &SuiteDoc, row: &SummaryRow) -> Option<crate::result::ClientLoad> {
    shortest_client(&row_reports(&doc.runs, &row.job, &row.op))
}

/// Builds the summary of `runs`, jobs in the order `job_order` gives, each
/// figure made as `aggregate` says.
pub fn summarize(
    job_order: &[String],
    runs: &[RunEntry],
    pool: Option<&crate::result::PoolSettings>,
    aggregate: Aggregate,
) -> Summary {
    let (measured, per_osd, source) = ram_per_osd(pool, runs);
    let mut rows = Vec::new();
    for job in job_order {
        let mut ops: Vec<String> = Vec::new();
        for r in runs.iter().filter(|r| &r.job == job) {
            for j in &r.result.jobs {
                if !ops.contains(&j.op) {
                    ops.push(j.op.clone());
                }
            }
        }
        for op in &ops {
            let reps = row_reports(runs, job, op);
            let best = best_index(&reps);
            let fig = |f: &dyn Fn(&JobReport) -> f64| {
                let v: Vec<f64> = reps.iter().map(|j| f(j)).collect();
                match aggregate {
                    Aggregate::Median => Figure::of(v),
                    Aggregate::Best => Figure::around(v.get(best).copied().unwrap_or(0.0), v),
                }
            };
            let iops = fig(&|j| j.iops);
            let cpu: Option<Vec<f64>> = runs
                .iter()
                .filter(|r| r.job == *job && r.result.jobs.iter().any(|j| j.op == *op))
                .map(|r| crate::explain::cpu::pool(&r.result).and_then(|p| p.us_per_op))
                .collect();
            let cpu_us_per_op = cpu.filter(|v| !v.is_empty()).map(|v| match aggregate {
                Aggregate::Median => Figure::of(v).value,
                Aggregate::Best => v.get(best).copied().unwrap_or(v[0]),
            });
            // A flush moves no data of its own: no IOPS per GiB for it.
            let per_gib = per_osd
                .filter(|_| op != "flush")
                .map(|b| iops.value / (b / f64::from(1u32 << 30)));
            let row = SummaryRow {
                job: job.clone(),
                op: op.clone(),
                label: if ops.len() > 1 {
                    format!("{job} {op}")
                } else {
                    job.clone()
                },
                runs: reps.len() as u32,
                mb_s: fig(&|j| j.bytes_per_sec / 1e6),
                mean_ms: fig(&|j| j.latency_ns.mean / 1e6),
                p99_ms: fig(&|j| j.latency_ns.p99 as f64 / 1e6),
                iops_per_gib: per_gib,
                flagged: false,
                iops,
                cpu_us_per_op,
            };
            let flagged =
                row.iops.flagged || row.mb_s.flagged || row.mean_ms.flagged || row.p99_ms.flagged;
            rows.push(SummaryRow { flagged, ..row });
        }
    }
    Summary {
        method: match aggregate {
            Aggregate::Median => METHOD,
            Aggregate::Best => METHOD_BEST,
        }
        .into(),
        spread_limit_pct: SPREAD_LIMIT_PCT,
        memory_held_bytes: pool.and_then(|p| p.memory_held_bytes),
        memory_measured_bytes: measured,
        ram_per_osd_bytes: per_osd,
        ram_source: source.map(str::to_string),
        rows,
    }
}

/// The RAM one OSD of the pool holds, for IOPS/GiB: (the measured total,
/// bytes per OSD, where that comes from). Measured is the largest total of
/// the runs whose every OSD was measured (the OSDs grow as they cache), over
/// that run's OSD count; else the configured targets over theirs.
fn ram_per_osd(
    pool: Option<&crate::result::PoolSettings>,
    runs: &[RunEntry],
) -> (Option<u64>, Option<f64>, Option<&'static str>) {
    let measured = runs
        .iter()
        .filter_map(|r| r.result.pool.as_ref()?.ram_per_osd())
        .filter(|m| m.measured)
        .max_by_key(|m| m.total);
    if let Some(m) = measured {
        return (Some(m.total), Some(m.per_osd), Some("measured"));
    }
    match pool.and_then(|p| p.configured_ram_per_osd()) {
        Some(m) => (None, Some(m.per_osd), Some("osd_memory_target")),
        None => (None, None, None),
    }
}

/// The suite as one [`BenchResult`] whose jobs are the summary rows (the
/// medians), each with a timeline made of every run's measured seconds
/// back to back, so that [`compare`] can judge the noise of a difference
/// from all the runs.
pub fn as_bench_result(doc: &SuiteDoc) -> Option<BenchResult> {
    let template = doc.runs.first()?.result.clone();
    let mut jobs = Vec::new();
    for row in &doc.summary.rows {
        let reps = row_reports(&doc.runs, &row.job, &row.op);
        let Some(first) = reps.first() else { continue };
        let best = best_index(&reps);
        let med = |f: &dyn Fn(&JobReport) -> f64| match doc.settings.aggregate {
            Aggregate::Median => median(&reps.iter().map(|j| f(j)).collect::<Vec<_>>()),
            Aggregate::Best => f(reps[best]),
        };
        let mut timeline = Vec::new();
        let mut t = 0.0;
        for j in &reps {
            let mut prev = 0.0;
            for s in &j.timeline {
                let dt = s.t_s - prev;
                prev = s.t_s;
                if s.ramp {
                    continue;
                }
                t += dt;
                timeline.push(Sample { t_s: t, ..*s });
            }
        }
        jobs.push(JobReport {
            per_second: crate::result::PerSecond::of(&timeline),
            end_flush: None,
            name: row.label.clone(),
            op: row.op.clone(),
            ops: reps.iter().map(|j| j.ops).sum(),
            errors: reps.iter().map(|j| j.errors).sum(),
            bytes: reps.iter().map(|j| j.bytes).sum(),
            elapsed_s: reps.iter().map(|j| j.elapsed_s).sum(),
            iops: row.iops.value,
            bytes_per_sec: row.mb_s.value * 1e6,
            latency_ns: LatencySummary {
                min: reps.iter().map(|j| j.latency_ns.min).min().unwrap_or(0),
                mean: row.mean_ms.value * 1e6,
                stddev: med(&|j| j.latency_ns.stddev),
                p50: med(&|j| j.latency_ns.p50 as f64) as u64,
                p90: med(&|j| j.latency_ns.p90 as f64) as u64,
                p99: (row.p99_ms.value * 1e6).round() as u64,
                p99_9: med(&|j| j.latency_ns.p99_9 as f64) as u64,
                max: reps.iter().map(|j| j.latency_ns.max).max().unwrap_or(0),
            },
            stop_reason: first.stop_reason.clone(),
            verify_mismatches: None,
            short_reads: 0,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: reps.iter().map(|j| j.longest_gap_s).fold(0.0, f64::max),
            slow_ops: reps.iter().map(|j| j.slow_ops).sum(),
            slow_op_s: first.slow_op_s,
            timeline,
            histogram: None,
            attribution: mean_attribution(&reps),
            service_latency_ns: None,
            rate: None,
            // The repetition that kept the least of its asked ops in flight.
            client: shortest_client(&reps),
            changes: None,
            projections: None,
        });
    }
    Some(BenchResult {
        jobs,
        osds: Vec::new(),
        network: None,
        interrupted: doc.interrupted,
        pool: doc.pool_settings.clone(),
        // Each run has its own (the suite's notes name the runs not quiet).
        cluster_state: None,
        disruption: None,
        pace: None,
        ..template
    })
}

/// The split of the mean averaged over runs: each share the mean of the
/// runs' shares (so they still add up to the mean of the runs' means);
/// `None` unless every run has a split.
fn mean_attribution(reps: &[&JobReport]) -> Option<crate::result::Attribution> {
    let atts: Vec<&crate::result::Attribution> = reps
        .iter()
        .map(|j| j.attribution.as_ref())
        .collect::<Option<_>>()?;
    let first = atts.first()?;
    let n = atts.len() as f64;
    let shares = crate::result::Part::ALL
        .iter()
        .filter(|p| atts.iter().any(|a| a.shares.iter().any(|s| s.part == **p)))
        .map(|p| crate::result::Share {
            part: *p,
            ns: atts
                .iter()
                .flat_map(|a| a.shares.iter().filter(|s| s.part == *p))
                .map(|s| s.ns)
                .sum::<f64>()
                / n,
        })
        .collect();
    Some(crate::result::Attribution {
        mean_ns: atts.iter().map(|a| a.mean_ns).sum::<f64>() / n,
        shares,
        notes: first.notes.clone(),
    })
}

/// A suite as one comparison input: its rows are the per-job medians, its
/// `per_run` every run's report of each row (so that a difference is judged
/// between runs), its OSDs' evidence averaged over the runs. `None` for a
/// suite without any run.
pub fn suite_source(doc: &SuiteDoc) -> Option<compare::Source> {
    let r = as_bench_result(doc)?;
    let mut s = compare::Source::from(&r);
    // Its jobs are matched by name, each its own shape.
    s.shape.clear();
    s.label = match &doc.data_pool {
        Some(d) => format!("suite {} on {}, data in {d}", doc.suite, doc.pool),
        None => format!("suite {} on {}", doc.suite, doc.pool),
    };
    s.per_run = doc
        .summary
        .rows
        .iter()
        .flat_map(|row| {
            row_reports(&doc.runs, &row.job, &row.op)
                .into_iter()
                .map(move |j| JobReport {
                    name: row.label.clone(),
                    ..j.clone()
                })
        })
        .collect();
    let runs: Vec<&BenchResult> = doc.runs.iter().map(|r| &r.result).collect();
    s.osds = compare::osd_evidence(&runs);
    s.ram_per_osd_bytes = doc.summary.ram_per_osd_bytes;
    s.name = doc.io_pool().to_string();
    s.usable = doc
        .pool_settings
        .as_ref()
        .map(PoolSettings::usable_fraction);
    s.back_heartbeat_ms = crate::explain::attribution::back_heartbeat_ms(runs.iter().copied());
    Some(s)
}

/// Compares suites (the first is the baseline) with
/// [`compare::compare_sources`]: each figure is the median over runs, and
/// whether a difference is real is judged from the spread between runs
/// ([`compare::judge_between_runs`]), never from one run's per-second
/// samples.
pub fn compare_suites(docs: &[SuiteDoc]) -> Comparison {
    let sources: Vec<compare::Source> = docs.iter().filter_map(suite_source).collect();
    compare::compare_sources(&sources)
}

/// What a suite command renders: one suite document per pool, their
/// comparison when there are several, and CrystalDiskMark's table when
/// every one has its jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suites {
    /// One document per pool, the first the baseline.
    pub docs: Vec<SuiteDoc>,
    /// The comparison of the pools (several docs only).
    pub comparison: Option<Comparison>,
    /// CrystalDiskMark's table ([`super::cdm_table`]).
    pub cdm: Option<super::CdmTable>,
}

impl Suites {
    /// The bundle of `docs` (at least one).
    pub fn new(docs: Vec<SuiteDoc>) -> Suites {
        let comparison = (docs.len() > 1).then(|| compare_suites(&docs));
        let cdm = super::cdm_table(&docs);
        Suites {
            docs,
            comparison,
            cdm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0]), 1.5);
        let f = Figure::of(vec![90.0, 110.0]);
        assert_eq!(f.value, 100.0);
        assert!((f.spread_pct - 10.0).abs() < 1e-9 && !f.flagged);
        let f = Figure::of(vec![80.0, 100.0, 130.0]);
        assert_eq!(f.value, 100.0);
        assert!((f.spread_pct - 25.0).abs() < 1e-9 && f.flagged);
        let f = Figure::of(vec![5.0]);
        assert_eq!((f.value, f.spread_pct), (5.0, 0.0));
    }
}
