//! `cephbench sweep`: one workload at rising load — fixed rates (open loop,
//! `--rate`'s machinery) or queue depths (closed loop) — one short run per
//! point, stopped once the throughput ceiling or the latency target is
//! passed; the curve (rate → achieved IOPS, p50/p99/p99.9, the split of the
//! mean) and its knee.
//!
//! This file holds the pure part: the load steps, each point's figures
//! taken from its result, the stop rule and the knee finder. Running the
//! points is `run.rs`; each output format has its own file.
#![forbid(unsafe_code)]

mod html;
mod run;
mod text;

use serde::{Deserialize, Serialize};

use crate::result::{BenchResult, Part, Share, ToolInfo};

pub use html::render_html;
pub use run::{announce, run_sweep, SweepJob, SweepOptions, SweepOutcome};
pub use text::render_table;

/// Writes `doc` in `format`: text (also for csv, which the CLI refuses
/// before a sweep starts), markdown, json or html.
pub fn render(
    doc: &SweepDoc,
    format: crate::report::Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use crate::report::Format;
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, doc)?;
            writeln!(out)
        }
        Format::Html => render_html(doc, out),
        Format::Markdown => render_table(doc, true, out),
        Format::Text | Format::Csv | Format::TimelineCsv => render_table(doc, false, out),
    }
}

/// Version of the sweep document's layout (`schema/sweep.schema.json`).
pub const SWEEP_SCHEMA_VERSION: u32 = 1;

/// A rate point whose achieved rate is below this fraction of the asked
/// one has hit the throughput ceiling.
pub const CEILING: f64 = 0.95;

/// Without a target, the knee is where p99 rises above this multiple of
/// the low-load p99 (and stays there).
pub const DOUBLING: f64 = 2.0;

/// A sweep stops once a point's p99 exceeds the target by this factor.
pub const TARGET_MARGIN: f64 = 2.0;

/// A queue-depth point whose IOPS are below this multiple of the best
/// lower depth's has hit the ceiling (more ops in flight bought < 5 %).
pub const QD_GAIN: f64 = 1.05;

/// Points a `--rate-from` sweep without `--rate-to` plans at most.
pub const DEFAULT_MAX_POINTS: usize = 12;

/// What rises from point to point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// The asked rate (open loop), ops/s.
    Rate,
    /// The queue depth (closed loop).
    Qd,
}

impl Axis {
    /// The unit of a step, for labels.
    pub fn unit(self) -> &'static str {
        match self {
            Axis::Rate => "ops/s",
            Axis::Qd => "QD",
        }
    }

    /// A step's value as printed: `1600 ops/s`, `QD 8`.
    pub fn fmt(self, x: f64) -> String {
        match self {
            Axis::Rate => format!("{} ops/s", fmt_rate(x)),
            Axis::Qd => format!("QD {x:.0}"),
        }
    }
}

/// A rate without needless decimals: `1600`, `1.5`, `333.3`.
pub fn fmt_rate(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The rates of `--rate-from A [--rate-to B] [--rate-step S | --rate-factor F]`:
/// A, then +S or ×F (×2 when neither is given) up to B, at most `max_points`.
pub fn rate_steps(
    from: f64,
    to: Option<f64>,
    step: Option<f64>,
    factor: Option<f64>,
    max_points: usize,
) -> Result<Vec<f64>, String> {
    if !(from.is_finite() && from > 0.0) {
        return Err("--rate-from must be a rate above 0, e.g. 200".into());
    }
    if let Some(to) = to {
        if to <= from {
            return Err(format!(
                "--rate-to {} must be above --rate-from {}",
                fmt_rate(to),
                fmt_rate(from)
            ));
        }
    }
    if !(2..=100).contains(&max_points) {
        return Err("--max-points must be between 2 and 100".into());
    }
    let next: Box<dyn Fn(f64) -> f64> = match (step, factor) {
        (Some(_), Some(_)) => {
            return Err("give --rate-step (add) or --rate-factor (multiply), not both".into())
        }
        (Some(s), None) if s.is_finite() && s > 0.0 => Box::new(move |x| x + s),
        (Some(_), None) => return Err("--rate-step must be above 0, e.g. 200".into()),
        (None, Some(f)) if f.is_finite() && f > 1.0 => Box::new(move |x| x * f),
        (None, Some(_)) => return Err("--rate-factor must be above 1, e.g. 1.5 or 2".into()),
        (None, None) => Box::new(|x| x * 2.0),
    };
    let mut v = vec![from];
    while v.len() < max_points {
        let x = next(*v.last().expect("not empty"));
        match to {
            Some(to) if x > to * (1.0 + 1e-9) => break,
            _ => v.push(x),
        }
    }
    Ok(v)
}

/// Checks that the steps of `flag` rise strictly and are not too many.
pub fn check_rising(steps: &[f64], flag: &str) -> Result<(), String> {
    if steps.len() < 2 {
        return Err(format!(
            "{flag} needs at least two points to make a curve, e.g. {flag} {}",
            if flag == "--qd" {
                "1,2,4,8"
            } else {
                "200,400,800"
            }
        ));
    }
    if steps.len() > 100 {
        return Err(format!("{flag}: at most 100 points"));
    }
    if let Some(w) = steps.windows(2).find(|w| w[1] <= w[0]) {
        return Err(format!(
            "{flag} must rise from point to point ({} is not above {}); list them in increasing order",
            fmt_rate(w[1]),
            fmt_rate(w[0])
        ));
    }
    Ok(())
}

/// Latency percentiles of a point, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
}

impl From<&crate::stats::LatencySummary> for Percentiles {
    fn from(s: &crate::stats::LatencySummary) -> Self {
        Percentiles {
            mean: s.mean,
            p50: s.p50,
            p99: s.p99,
            p99_9: s.p99_9,
        }
    }
}

/// The figures of one point of the curve (a mix's read and write jobs
/// together: IOPS summed, each percentile the worse of the two).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The asked rate, ops/s (null on a queue-depth sweep).
    pub asked_rate: Option<f64>,
    /// Ops in flight at most (the queue depth).
    pub qd: u64,
    /// Measured ops per second.
    pub achieved_iops: f64,
    /// Latency from each op's intended start (rate points) or completion
    /// latency (queue-depth points), ns.
    pub latency_ns: Percentiles,
    /// Rate points: service time (submit → completion), ns.
    pub service_latency_ns: Option<Percentiles>,
    /// Rate points: the run's own overload flag (achieved < 98 % of asked or
    /// > 1 % of the ops late).
    pub overload: bool,
    /// Rate points: ops issued > 1 ms late because every slot was busy.
    pub late_ops: u64,
    /// Rate points: most ops due but not yet issued at once.
    pub max_backlog: u64,
}

/// Where a point's mean went: the run's split of its mean (the job with
/// the most ops), with a rate point's wait for its issue taken out of
/// `unattributed`. The shares and `schedule_wait_ns` add up to `mean_ns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// The mean the shares split, ns.
    pub mean_ns: f64,
    /// The shares, as in the result's `attribution`.
    pub shares: Vec<Share>,
    /// Rate points: mean intended-start latency − mean service time, ns:
    /// the time ops waited to be issued (the timer; a backlog when every
    /// slot was busy). 0 on queue-depth points.
    pub schedule_wait_ns: f64,
}

impl Split {
    /// One part's share, ns (`None`: not measured).
    pub fn ns(&self, part: Part) -> Option<f64> {
        self.shares.iter().find(|s| s.part == part).map(|s| s.ns)
    }
}

/// One point: its figures, its split and its full result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The figures the curve is made of.
    #[serde(flatten)]
    pub figures: Figures,
    /// Where the mean went (null without the OSD counters).
    pub split: Option<Split>,
    /// The point's run, as `cephbench rados|rbd --format json` prints it.
    pub result: BenchResult,
}

/// The jobs of a result that make a point (flush rows are not ops of the
/// workload's rate).
fn io_jobs(r: &BenchResult) -> impl Iterator<Item = &crate::result::JobReport> {
    r.jobs.iter().filter(|j| j.op != "flush")
}

/// A point's figures from its run's result.
pub fn figures(axis: Axis, qd: u64, r: &BenchResult) -> Figures {
    let worst = |f: &dyn Fn(&crate::result::JobReport) -> Option<Percentiles>| {
        io_jobs(r).filter_map(f).reduce(|a, b| Percentiles {
            mean: a.mean.max(b.mean),
            p50: a.p50.max(b.p50),
            p99: a.p99.max(b.p99),
            p99_9: a.p99_9.max(b.p99_9),
        })
    };
    let zero = Percentiles {
        mean: 0.0,
        p50: 0,
        p99: 0,
        p99_9: 0,
    };
    let achieved: f64 = io_jobs(r).map(|j| j.iops).sum();
    let rate = io_jobs(r).find_map(|j| j.rate.as_ref());
    let asked = match axis {
        Axis::Rate => rate.map(|x| x.asked),
        Axis::Qd => None,
    };
    Figures {
        asked_rate: asked,
        qd,
        achieved_iops: achieved,
        latency_ns: worst(&|j| Some((&j.latency_ns).into())).unwrap_or(zero),
        service_latency_ns: worst(&|j| j.service_latency_ns.as_ref().map(Into::into)),
        // A mix's rows each hold part of the achieved rate: judge the sum.
        overload: rate.is_some_and(|x| {
            achieved < 0.98 * x.asked || x.late_ops * 100 > x.scheduled_ops.max(1)
        }),
        late_ops: rate.map_or(0, |x| x.late_ops),
        max_backlog: rate.map_or(0, |x| x.max_backlog),
    }
}

/// A point's split from its run's result (null without an attribution).
pub fn split(r: &BenchResult) -> Option<Split> {
    let j = io_jobs(r)
        .filter(|j| j.attribution.is_some())
        .max_by_key(|j| j.ops)?;
    let a = j.attribution.as_ref()?;
    let wait = j
        .service_latency_ns
        .as_ref()
        .map_or(0.0, |s| (j.latency_ns.mean - s.mean).max(0.0));
    let shares = a
        .shares
        .iter()
        .map(|s| Share {
            part: s.part,
            ns: if s.part == Part::Unattributed {
                s.ns - wait
            } else {
                s.ns
            },
        })
        .collect();
    Some(Split {
        mean_ns: a.mean_ns,
        shares,
        schedule_wait_ns: wait,
    })
}

/// Why a point is past the knee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Past {
    /// Achieved < 95 % of asked (rate), or more ops in flight bought < 5 %
    /// more IOPS (queue depth).
    Ceiling,
    /// p99 above `--p99-target`.
    P99Target,
    /// p99 above twice the low-load p99 (no target given).
    P99Doubled,
}

impl Past {
    /// The rule, in words.
    pub fn describe(self, axis: Axis) -> &'static str {
        match (self, axis) {
            (Past::Ceiling, Axis::Rate) => "throughput ceiling: achieved fell below 95 % of asked",
            (Past::Ceiling, Axis::Qd) => {
                "throughput ceiling: more ops in flight gave under 5 % more IOPS"
            }
            (Past::P99Target, _) => "p99 above --p99-target",
            (Past::P99Doubled, _) => "p99 doubled over the low-load p99",
        }
    }
}

/// The low-load p99: the lowest p99 of the points below the ceiling, ns.
pub fn baseline_p99(axis: Axis, pts: &[Figures]) -> Option<u64> {
    (0..pts.len())
        .filter(|i| !at_ceiling(axis, pts, *i))
        .map(|i| pts[i].latency_ns.p99)
        .filter(|p| *p > 0)
        .min()
}

/// Whether point `i` has hit the throughput ceiling (on a queue-depth
/// sweep, judged with the points measured after it too).
pub fn at_ceiling(axis: Axis, pts: &[Figures], i: usize) -> bool {
    let p = &pts[i];
    match axis {
        Axis::Rate => p.asked_rate.is_some_and(|a| p.achieved_iops < CEILING * a),
        // IOPS stopped growing for good: neither this depth nor any deeper
        // one measured bought 5 % over the best shallower one.
        Axis::Qd => {
            let best = pts[..i]
                .iter()
                .map(|q| q.achieved_iops)
                .fold(0.0f64, f64::max);
            i > 0 && pts[i..].iter().all(|q| q.achieved_iops < QD_GAIN * best)
        }
    }
}

/// Why point `i` is past the knee, if it is: the ceiling first, then the
/// latency rule (`target_ns`, else twice `baseline`).
pub fn past(
    axis: Axis,
    pts: &[Figures],
    i: usize,
    target_ns: Option<u64>,
    baseline: Option<u64>,
) -> Option<Past> {
    let p99 = pts[i].latency_ns.p99;
    if at_ceiling(axis, pts, i) {
        Some(Past::Ceiling)
    } else if let Some(t) = target_ns {
        (p99 > t).then_some(Past::P99Target)
    } else {
        baseline
            .filter(|b| p99 as f64 > DOUBLING * *b as f64)
            .map(|_| Past::P99Doubled)
    }
}

/// Whether the sweep should run no further points after the last of
/// `pts`: it hit the ceiling (on a queue-depth sweep: twice in a row, one
/// flat step may be noise), or its p99 exceeds the target by
/// [`TARGET_MARGIN`].
pub fn should_stop(axis: Axis, pts: &[Figures], target_ns: Option<u64>) -> Option<String> {
    let i = pts.len().checked_sub(1)?;
    let p = &pts[i];
    let ceiling = match axis {
        Axis::Rate => at_ceiling(axis, pts, i),
        Axis::Qd => i >= 1 && at_ceiling(axis, pts, i) && at_ceiling(axis, pts, i - 1),
    };
    if ceiling {
        return Some(match axis {
            Axis::Rate => format!(
                "stopped at {}: achieved {} ops/s, below 95 % of asked (the throughput ceiling)",
                axis.fmt(p.asked_rate.unwrap_or(0.0)),
                fmt_rate(p.achieved_iops.round())
            ),
            Axis::Qd => format!(
                "stopped at QD {}: IOPS stopped growing with the queue depth (the throughput ceiling)",
                p.qd
            ),
        });
    }
    match target_ns {
        Some(t) if p.latency_ns.p99 as f64 > TARGET_MARGIN * t as f64 => Some(format!(
            "stopped at {}: p99 {} is over {}x the --p99-target {}",
            x_label(axis, p),
            ms(p.latency_ns.p99 as f64),
            TARGET_MARGIN,
            ms(t as f64)
        )),
        _ => None,
    }
}

/// A point's step: `1600 ops/s` or `QD 8`.
pub fn x_label(axis: Axis, p: &Figures) -> String {
    match axis {
        Axis::Rate => axis.fmt(p.asked_rate.unwrap_or(0.0)),
        Axis::Qd => axis.fmt(p.qd as f64),
    }
}

/// A point's step as a number (asked rate or queue depth).
pub fn x_of(axis: Axis, p: &Figures) -> f64 {
    match axis {
        Axis::Rate => p.asked_rate.unwrap_or(0.0),
        Axis::Qd => p.qd as f64,
    }
}

/// Seconds without needless decimals: `5 s`, `0.5 s`.
pub fn secs(s: f64) -> String {
    format!("{} s", fmt_rate((s * 10.0).round() / 10.0))
}

/// `1.234 ms`.
pub fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// The knee of a curve and the rule that found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The knee point's index in `points` (null: none found).
    pub index: Option<usize>,
    /// Its asked rate (rate sweeps), ops/s.
    pub asked_rate: Option<f64>,
    /// Its queue depth.
    pub qd: Option<u64>,
    /// Its achieved IOPS.
    pub achieved_iops: Option<f64>,
    /// Its p99, ns.
    pub p99_ns: Option<u64>,
    /// Why the next point is past it: `ceiling`, `p99_target`,
    /// `p99_doubled` (null: no point is past it, or all are).
    pub rule: Option<Past>,
    /// The first point past the knee (from which on every point is).
    pub past_index: Option<usize>,
    /// The low-load p99 the doubling rule compares with, ns.
    pub baseline_p99_ns: Option<u64>,
    /// `--p99-target`, ns.
    pub target_p99_ns: Option<u64>,
    /// The finding in one sentence.
    pub line: String,
    /// Points past the knee that the curve later left again (noise?).
    pub notes: Vec<String>,
}

/// Finds the knee: the last point before the run of points, up to the
/// end of the curve, that are all past it — past the ceiling, or with p99
/// above `target_ns` (when given), else above twice the low-load p99. A
/// point past it followed by one that is not is noted, not taken.
pub fn find_knee(axis: Axis, pts: &[Figures], target_ns: Option<u64>) -> Knee {
    let baseline = baseline_p99(axis, pts);
    let why: Vec<Option<Past>> = (0..pts.len())
        .map(|i| past(axis, pts, i, target_ns, baseline))
        .collect();
    let first_past = (0..pts.len())
        .rev()
        .take_while(|i| why[*i].is_some())
        .last();
    let mut knee = Knee {
        index: None,
        asked_rate: None,
        qd: None,
        achieved_iops: None,
        p99_ns: None,
        rule: None,
        past_index: first_past,
        baseline_p99_ns: baseline,
        target_p99_ns: target_ns,
        line: String::new(),
        notes: Vec::new(),
    };
    let end = first_past.unwrap_or(pts.len());
    for i in 0..end {
        if let Some(w) = why[i] {
            knee.notes.push(format!(
                "{}: {} ({}), but not the points after it: taken for noise",
                x_label(axis, &pts[i]),
                w.describe(axis),
                figures_brief(&pts[i])
            ));
        }
    }
    let Some(last) = pts.last() else {
        knee.line = "no points were measured".into();
        return knee;
    };
    match first_past {
        None => {
            knee.line = format!(
                "no knee up to {}: p99 {}, achieved {} ops/s, no point past the ceiling or {}; \
                 sweep higher",
                x_label(axis, last),
                ms(last.latency_ns.p99 as f64),
                fmt_rate(last.achieved_iops.round()),
                latency_rule(target_ns, baseline)
            );
        }
        Some(0) => {
            let w = why[0].expect("past");
            knee.rule = Some(w);
            knee.line = format!(
                "no knee: already the lowest point, {}, is past it ({}: {}); sweep lower",
                x_label(axis, &pts[0]),
                w.describe(axis),
                figures_brief(&pts[0])
            );
        }
        Some(f) => {
            let k = &pts[f - 1];
            let w = why[f].expect("past");
            knee.index = Some(f - 1);
            knee.asked_rate = k.asked_rate;
            knee.qd = Some(k.qd);
            knee.achieved_iops = Some(k.achieved_iops);
            knee.p99_ns = Some(k.latency_ns.p99);
            knee.rule = Some(w);
            let rule = match w {
                Past::P99Target => format!(
                    "the highest {} whose p99 stays under --p99-target {}",
                    if axis == Axis::Rate { "rate" } else { "depth" },
                    ms(target_ns.unwrap_or(0) as f64)
                ),
                Past::P99Doubled => format!(
                    "p99 more than doubles over the low-load p99 {} from {} on",
                    ms(baseline.unwrap_or(0) as f64),
                    x_label(axis, &pts[f])
                ),
                Past::Ceiling => format!(
                    "the throughput ceiling comes next: {}",
                    match axis {
                        Axis::Rate => format!(
                            "{} asked, {} ops/s achieved",
                            x_label(axis, &pts[f]),
                            fmt_rate(pts[f].achieved_iops.round())
                        ),
                        Axis::Qd => format!(
                            "{} gave {} IOPS",
                            x_label(axis, &pts[f]),
                            fmt_rate(pts[f].achieved_iops.round())
                        ),
                    }
                ),
            };
            knee.line = format!(
                "knee at {} (p99 {}, achieved {} ops/s); rule: {rule}",
                x_label(axis, k),
                ms(k.latency_ns.p99 as f64),
                fmt_rate(k.achieved_iops.round()),
            );
        }
    }
    knee
}

fn latency_rule(target_ns: Option<u64>, baseline: Option<u64>) -> String {
    match (target_ns, baseline) {
        (Some(t), _) => format!("above --p99-target {}", ms(t as f64)),
        (None, Some(b)) => format!("with p99 above 2x the low-load p99 {}", ms(b as f64)),
        (None, None) => "with a p99".into(),
    }
}

fn figures_brief(p: &Figures) -> String {
    match p.asked_rate {
        Some(_) => format!(
            "p99 {}, achieved {} ops/s",
            ms(p.latency_ns.p99 as f64),
            fmt_rate(p.achieved_iops.round())
        ),
        None => format!(
            "p99 {}, {} IOPS",
            ms(p.latency_ns.p99 as f64),
            fmt_rate(p.achieved_iops.round())
        ),
    }
}

/// What happened at an overloaded rate point, in words (none where it kept
/// up): what was achieved of the asked rate, the ops issued late and the
/// most left waiting to be issued.
pub fn overload_words(p: &Figures) -> Option<String> {
    let asked = p.asked_rate.filter(|_| p.overload)?;
    let mut w = format!(
        "the cluster could not keep up: achieved {} of {} ops/s ({:.0} %)",
        fmt_rate(p.achieved_iops.round()),
        fmt_rate(asked),
        100.0 * p.achieved_iops / asked.max(f64::MIN_POSITIVE)
    );
    if p.late_ops > 0 {
        w.push_str(&format!(
            ", {} ops issued over 1 ms late (every slot busy)",
            crate::units::thousands(p.late_ops)
        ));
    }
    if p.max_backlog > 0 {
        w.push_str(&format!(
            ", up to {} ops waiting to be issued",
            crate::units::thousands(p.max_backlog)
        ));
    }
    Some(w)
}

/// One pool's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The pool (rbd with a data pool: of the image's metadata).
    pub pool: String,
    /// rbd `--data-pool(s)`: the pool of the image's data objects, where
    /// the I/O went (null: `pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// The points, in the order run (rising load).
    pub points: Vec<Point>,
    /// Its knee.
    pub knee: Knee,
    /// Why the sweep ran no further points, when it stopped early.
    pub stopped: Option<String>,
}

impl Curve {
    /// What the plots and lists call it: the pool the I/O went to.
    pub fn name(&self) -> &str {
        self.data_pool.as_deref().unwrap_or(&self.pool)
    }

    /// Where it ran, in words: `pool rbd`, or `pool rbd, data in pool ec21`.
    pub fn where_ran(&self) -> String {
        crate::result::where_ran(&self.pool, self.data_pool.as_deref())
    }

    /// The curve of `points`, its knee found.
    pub fn new(
        axis: Axis,
        pool: String,
        points: Vec<Point>,
        target_ns: Option<u64>,
        stopped: Option<String>,
    ) -> Curve {
        let f: Vec<Figures> = points.iter().map(|p| p.figures.clone()).collect();
        Curve {
            pool,
            data_pool: None,
            knee: find_knee(axis, &f, target_ns),
            points,
            stopped,
        }
    }
}

/// The sweep's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSettings {
    /// Each point's measured time, s.
    pub duration_s: f64,
    /// Each point's excluded ramp, s.
    pub ramp_s: f64,
    /// The planned steps (asked rates or queue depths), in order.
    pub steps: Vec<f64>,
    /// Rate sweeps: the ops in flight at most; queue-depth sweeps: null.
    pub concurrency: Option<u64>,
    /// Rate sweeps: `uniform` or `poisson`.
    pub arrival: Option<String>,
    /// `--p99-target`, ns.
    pub p99_target_ns: Option<u64>,
}

/// What `cephbench sweep --format json` prints (`schema/sweep.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepDoc {
    /// Layout version ([`SWEEP_SCHEMA_VERSION`]).
    pub sweep_schema_version: u32,
    /// The tool that made it.
    pub tool: ToolInfo,
    /// The workload, e.g. `rados write 4 KiB`.
    pub workload: String,
    /// What rises.
    pub axis: Axis,
    /// Which latency the curve's percentiles are: `intended_start` (rate)
    /// or `completion` (queue depth).
    pub latency_kind: String,
    /// The settings.
    pub settings: SweepSettings,
    /// One curve per pool, in `--pools` order.
    pub curves: Vec<Curve>,
    /// When it started, seconds since the epoch.
    pub started_unix: u64,
    /// Wall time of the whole sweep, s.
    pub elapsed_s: f64,
    /// Whether SIGINT/SIGTERM cut it short.
    pub interrupted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(asked: f64, achieved: f64, p99_ms: f64) -> Figures {
        let p99 = (p99_ms * 1e6) as u64;
        Figures {
            asked_rate: Some(asked),
            qd: 16,
            achieved_iops: achieved,
            latency_ns: Percentiles {
                mean: p99 as f64 / 2.0,
                p50: p99 / 2,
                p99,
                p99_9: p99 * 2,
            },
            service_latency_ns: None,
            overload: false,
            late_ops: 0,
            max_backlog: 0,
        }
    }

    fn qd(depth: u64, iops: f64, p99_ms: f64) -> Figures {
        Figures {
            asked_rate: None,
            qd: depth,
            ..pt(0.0, iops, p99_ms)
        }
    }

    #[test]
    fn rate_steps_add_or_multiply_up_to_the_limit() {
        assert_eq!(
            rate_steps(100.0, Some(500.0), Some(100.0), None, 12).unwrap(),
            vec![100.0, 200.0, 300.0, 400.0, 500.0]
        );
        assert_eq!(
            rate_steps(250.0, Some(2000.0), None, None, 12).unwrap(),
            vec![250.0, 500.0, 1000.0, 2000.0]
        );
        assert_eq!(
            rate_steps(100.0, None, None, Some(1.5), 4).unwrap(),
            vec![100.0, 150.0, 225.0, 337.5]
        );
        assert_eq!(rate_steps(1.0, None, None, None, 12).unwrap().len(), 12);
        assert!(rate_steps(100.0, Some(50.0), None, None, 12)
            .unwrap_err()
            .contains("above --rate-from"));
        assert!(rate_steps(100.0, None, Some(1.0), Some(2.0), 12)
            .unwrap_err()
            .contains("not both"));
        assert!(rate_steps(100.0, None, None, Some(1.0), 12)
            .unwrap_err()
            .contains("above 1"));
        assert!(rate_steps(100.0, None, None, None, 1).is_err());
    }

    #[test]
    fn steps_must_rise() {
        assert!(check_rising(&[100.0, 200.0], "--rates").is_ok());
        let e = check_rising(&[100.0, 400.0, 200.0], "--rates").unwrap_err();
        assert!(e.contains("must rise") && e.contains("200"), "{e}");
        assert!(check_rising(&[4.0], "--qd")
            .unwrap_err()
            .contains("1,2,4,8"));
    }

    #[test]
    fn the_knee_is_where_p99_doubles_for_good() {
        let pts = [
            pt(100.0, 100.0, 1.0),
            pt(200.0, 200.0, 1.1),
            pt(400.0, 400.0, 1.3),
            pt(800.0, 799.0, 2.5),
            pt(1600.0, 1500.0, 9.0),
        ];
        let k = find_knee(Axis::Rate, &pts, None);
        assert_eq!(k.index, Some(2));
        assert_eq!(k.asked_rate, Some(400.0));
        assert_eq!(k.rule, Some(Past::P99Doubled));
        assert_eq!(k.baseline_p99_ns, Some(1_000_000));
        assert!(k.line.starts_with("knee at 400 ops/s"), "{}", k.line);
        assert!(
            k.line.contains("doubles") && k.line.contains("800 ops/s"),
            "{}",
            k.line
        );
        assert!(k.notes.is_empty());
    }

    #[test]
    fn a_passing_spike_is_noted_not_taken() {
        let pts = [
            pt(100.0, 100.0, 1.0),
            pt(200.0, 200.0, 3.0), // a hiccup of the machine
            pt(400.0, 400.0, 1.2),
            pt(800.0, 700.0, 5.0),
        ];
        let k = find_knee(Axis::Rate, &pts, None);
        assert_eq!(k.index, Some(2));
        assert_eq!(k.rule, Some(Past::Ceiling), "the ceiling is checked first");
        assert_eq!(k.notes.len(), 1);
        assert!(k.notes[0].starts_with("200 ops/s"), "{:?}", k.notes);
    }

    #[test]
    fn the_low_load_p99_is_the_lowest_below_the_ceiling() {
        // A noisy first point must not raise the bar.
        let pts = [
            pt(100.0, 100.0, 2.1),
            pt(200.0, 200.0, 1.0),
            pt(400.0, 400.0, 1.5),
            pt(800.0, 800.0, 2.2),
        ];
        assert_eq!(baseline_p99(Axis::Rate, &pts), Some(1_000_000));
        let k = find_knee(Axis::Rate, &pts, None);
        assert_eq!(k.index, Some(2));
        assert_eq!(k.notes.len(), 1, "the first point is over 2x too: {k:?}");
    }

    #[test]
    fn a_target_takes_the_highest_rate_under_it() {
        let pts = [
            pt(100.0, 100.0, 1.0),
            pt(200.0, 200.0, 2.5),
            pt(400.0, 400.0, 4.0),
            pt(800.0, 800.0, 6.0),
        ];
        let k = find_knee(Axis::Rate, &pts, Some(5_000_000));
        assert_eq!((k.index, k.rule), (Some(2), Some(Past::P99Target)));
        assert!(k.line.contains("--p99-target 5.000 ms"), "{}", k.line);
        // Without the target, p99 doubled already at 200.
        assert_eq!(find_knee(Axis::Rate, &pts, None).index, Some(0));
    }

    #[test]
    fn no_knee_says_which_way_to_sweep() {
        let low = [pt(100.0, 100.0, 1.0), pt(200.0, 200.0, 1.1)];
        let k = find_knee(Axis::Rate, &low, None);
        assert_eq!((k.index, k.rule), (None, None));
        assert!(k.line.contains("sweep higher"), "{}", k.line);
        let high = [pt(100.0, 50.0, 1.0), pt(200.0, 60.0, 1.1)];
        let k = find_knee(Axis::Rate, &high, None);
        assert_eq!((k.index, k.rule), (None, Some(Past::Ceiling)));
        assert!(k.line.contains("sweep lower"), "{}", k.line);
        assert!(find_knee(Axis::Rate, &[], None).line.contains("no points"));
    }

    #[test]
    fn queue_depth_knee_is_where_iops_stop_growing() {
        let pts = [
            qd(1, 500.0, 2.0),
            qd(2, 950.0, 2.2),
            qd(4, 1700.0, 2.6),
            qd(8, 1750.0, 5.0),
            qd(16, 1760.0, 10.0),
        ];
        let k = find_knee(Axis::Qd, &pts, None);
        assert_eq!(
            (k.index, k.qd, k.rule),
            (Some(2), Some(4), Some(Past::Ceiling))
        );
        assert!(k.line.starts_with("knee at QD 4"), "{}", k.line);
        // One flat step does not stop a queue-depth sweep; two do.
        assert!(should_stop(Axis::Qd, &pts[..4], None).is_none());
        // A flat step that deeper queues leave again is no ceiling.
        let batching = [
            qd(1, 76.0, 19.0),
            qd(2, 79.0, 30.0),
            qd(4, 144.0, 35.0),
            qd(8, 260.0, 36.0),
        ];
        assert!(!at_ceiling(Axis::Qd, &batching, 1));
        assert_eq!(find_knee(Axis::Qd, &batching, None).index, None);
        assert!(should_stop(Axis::Qd, &pts, None).unwrap().contains("QD 16"));
    }

    #[test]
    fn a_sweep_stops_at_the_ceiling_or_far_past_the_target() {
        let ok = [pt(100.0, 100.0, 1.0), pt(200.0, 196.0, 1.0)];
        assert!(should_stop(Axis::Rate, &ok, None).is_none());
        let ceiling = [pt(100.0, 100.0, 1.0), pt(200.0, 150.0, 1.0)];
        let s = should_stop(Axis::Rate, &ceiling, None).unwrap();
        assert!(s.contains("200 ops/s") && s.contains("ceiling"), "{s}");
        let slow = [pt(100.0, 100.0, 1.0), pt(200.0, 200.0, 11.0)];
        assert!(should_stop(Axis::Rate, &slow, Some(5_000_000)).is_some());
        assert!(should_stop(Axis::Rate, &slow, Some(6_000_000)).is_none());
        assert!(should_stop(Axis::Rate, &[], None).is_none());
    }
}
