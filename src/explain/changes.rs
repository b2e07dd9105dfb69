//! Lasting changes during a run, and what moved with them: pure functions
//! over a finished result (its job timelines, the OSDs' counter timelines
//! and the cluster's events), so a stored result explains itself again.
//!
//! The method (docs/methods.md, *Changes during a run*):
//!
//! 1. Each job's measured intervals (ramp and short last interval left out)
//!    give two series: ln IOPS and ln p99 (the mean where an interval kept
//!    no p99). Each series' noise σ is the MAD of its first differences
//!    (× 1.4826 / √2): a robust per-interval scale that one slow second, or
//!    one step, barely moves.
//! 2. A running median over [`MIN_SEGMENT`] intervals smooths both series;
//!    a single slow second disappears from it.
//! 3. Binary segmentation on the smoothed series: the split that best
//!    separates the segment's two sides (the largest between-sides sum of
//!    squares, each series in units of its σ); where no single split
//!    passes the test below, the best pair of splits (a dip, or a burst,
//!    inside the segment against what surrounds it). Each side holds at
//!    least [`MIN_SEGMENT`] intervals, and its median must be the changed
//!    level: a change lasts most of [`MIN_SEGMENT`] intervals (3 of 5), or
//!    it is not a lasting change.
//! 4. The test, on the raw intervals: the two sides' medians differ by a
//!    factor of at least [`IOPS_FACTOR`] in IOPS or [`P99_FACTOR`] in p99,
//!    and by at least [`NOISE_SIGMAS`] σ of that series. Accepted splits are
//!    searched again on both sides, at most [`MAX_CHANGES`] in all; at the
//!    end, neighbouring segments are tested once more and merged where they
//!    no longer differ.
//!
//! For each change the OSDs whose own latency counters moved the same way
//! between the counter samples wholly before and wholly after it are named
//! ([`OSD_FACTOR`], [`OSD_FLOOR_NS`]), with the cluster's events that began
//! or ended near it.
#![forbid(unsafe_code)]

use crate::progress::{typical_interval, Sample};
use crate::result::changes::{Change, OsdMove, Phase};
use crate::result::cluster::{ClusterEvent, ClusterState};
use crate::result::counters::{AvgDelta, OsdCounters};
use crate::result::disruption::{Action, Disruption};
use crate::result::{BenchResult, OsdReport};
use crate::units::ms_prose as ms;

/// Fewest intervals on each side of a change.
pub const MIN_SEGMENT: usize = 5;
/// Least factor between the sides' median IOPS for a change.
pub const IOPS_FACTOR: f64 = 1.5;
/// Least factor between the sides' median p99 for a change.
pub const P99_FACTOR: f64 = 2.0;
/// Least shift of the sides' medians, in units of the series' noise σ.
pub const NOISE_SIGMAS: f64 = 3.0;
/// Most changes reported per job.
pub const MAX_CHANGES: usize = 8;
/// Least factor between an OSD counter's means before and after a change
/// for the OSD to be named.
pub const OSD_FACTOR: f64 = 1.5;
/// Least difference between those means, ns (a counter of tens of
/// microseconds doubling explains no drop in the client's figures).
pub const OSD_FLOOR_NS: f64 = 200_000.0;
/// Fewest events of a counter on each side for its mean to count.
pub const OSD_MIN_COUNT: u64 = 5;
/// Smallest noise σ (ln units, about 1 %): a perfectly flat series makes
/// any wobble look significant otherwise.
const MIN_SIGMA: f64 = 0.01;

impl Change {
    /// The IOPS move in words, e.g. `−59 %` (empty when there were no
    /// IOPS before it).
    pub fn iops_move(&self) -> String {
        if self.before.iops > 0.0 {
            format!(
                "{:+.0} %",
                (self.after.iops / self.before.iops - 1.0) * 100.0
            )
            .replace('-', "−")
        } else {
            String::new()
        }
    }
}

/// The latency counters looked at, deepest (closest to the drive) first:
/// Ceph's name, the report's words, and what its move says when it rose
/// and when it fell (a sentence follows the direction of its figures).
pub const COUNTERS: [(&str, &str, &str, &str); 5] = [
    (
        "kv_sync_lat",
        "kv sync round",
        "its drive's syncs slowed",
        "its drive's syncs got faster",
    ),
    (
        "commit_lat",
        "BlueStore commit",
        "its transactions waited longer to commit",
        "its transactions committed sooner",
    ),
    (
        "subop_w_latency",
        "replica write",
        "its replica writes took longer",
        "its replica writes took less time",
    ),
    (
        "op_w_latency",
        "op_w latency",
        "its client writes took longer in the OSD",
        "its client writes took less time in the OSD",
    ),
    (
        "op_r_latency",
        "op_r latency",
        "its reads took longer in the OSD",
        "its reads took less time in the OSD",
    ),
];

fn counter(c: &OsdCounters, name: &str) -> Option<AvgDelta> {
    match name {
        "kv_sync_lat" => c.kv_sync_lat,
        "commit_lat" => c.commit_lat,
        "subop_w_latency" => c.subop_w_latency,
        "op_w_latency" => c.op_w_latency,
        "op_r_latency" => c.op_r_latency,
        _ => None,
    }
}

/// One measured interval.
#[derive(Debug, Clone, Copy)]
struct Point {
    from_s: f64,
    to_s: f64,
    ops: u64,
    mean_ns: f64,
    p99_ns: Option<f64>,
}

/// The measured, full-length intervals of a timeline (as rados bench's
/// per-second summary: at least half the typical interval).
fn points(timeline: &[Sample]) -> Vec<Point> {
    let typical = typical_interval(timeline);
    let mut prev = 0.0;
    let mut out = Vec::new();
    for s in timeline {
        let from = prev;
        prev = s.t_s;
        if s.ramp || s.t_s - from < 0.5 * typical {
            continue;
        }
        out.push(Point {
            from_s: from,
            to_s: s.t_s,
            ops: s.ops,
            mean_ns: s.mean_latency_ns,
            p99_ns: s.p99_latency_ns.map(|v| v as f64),
        });
    }
    out
}

/// The two series, ln IOPS and ln latency (p99, else the mean; an interval
/// without ops carries the last known latency).
fn series(pts: &[Point]) -> [Vec<f64>; 2] {
    let iops = pts
        .iter()
        .map(|p| {
            // Half an op for an interval without one: ln 0 is no figure.
            let ops = if p.ops == 0 { 0.5 } else { p.ops as f64 };
            (ops / (p.to_s - p.from_s)).ln()
        })
        .collect();
    let mut last = None;
    let lat: Vec<Option<f64>> = pts
        .iter()
        .map(|p| {
            let v = p
                .p99_ns
                .or((p.ops > 0).then_some(p.mean_ns))
                .filter(|v| *v > 0.0)
                .map(f64::ln)
                .or(last);
            last = v;
            v
        })
        .collect();
    // Leading intervals without a latency take the first known one.
    let first = lat.iter().flatten().next().copied().unwrap_or(0.0);
    [iops, lat.into_iter().map(|v| v.unwrap_or(first)).collect()]
}

fn median(v: &mut [f64]) -> f64 {
    crate::stats::median(v).unwrap_or(0.0)
}

fn median_of(v: &[f64]) -> f64 {
    median(&mut v.to_vec())
}

/// A series' per-interval noise: the MAD of its first differences, scaled
/// to a normal σ of one interval (× 1.4826 / √2), at least [`MIN_SIGMA`].
fn noise(x: &[f64]) -> f64 {
    if x.len() < 3 {
        return MIN_SIGMA;
    }
    let mut d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let m = median(&mut d);
    let mut dev: Vec<f64> = d.iter().map(|v| (v - m).abs()).collect();
    (1.4826 * median(&mut dev) / std::f64::consts::SQRT_2).max(MIN_SIGMA)
}

/// A running median over `w` intervals (shorter at the ends).
fn running_median(x: &[f64], w: usize) -> Vec<f64> {
    let h = w / 2;
    (0..x.len())
        .map(|i| median_of(&x[i.saturating_sub(h)..(i + h + 1).min(x.len())]))
        .collect()
}

/// The lasting-change test between two sets of intervals of each series:
/// some series' medians differ by its factor and by [`NOISE_SIGMAS`] σ.
fn differ(raw: &[Vec<f64>; 2], sigma: [f64; 2], a: &[usize], b: &[usize]) -> bool {
    let factors = [IOPS_FACTOR, P99_FACTOR];
    (0..2).any(|s| {
        let ma = median(&mut a.iter().map(|&i| raw[s][i]).collect::<Vec<_>>());
        let mb = median(&mut b.iter().map(|&i| raw[s][i]).collect::<Vec<_>>());
        let shift = (ma - mb).abs();
        shift >= factors[s].ln() && shift >= NOISE_SIGMAS * sigma[s]
    })
}

/// Prefix sums of each smoothed series, scaled by its σ.
struct Prefix {
    sums: [Vec<f64>; 2],
}

impl Prefix {
    fn new(smooth: &[Vec<f64>; 2], sigma: [f64; 2]) -> Prefix {
        let sum = |s: usize| {
            let mut acc = vec![0.0];
            for v in &smooth[s] {
                acc.push(acc.last().copied().unwrap_or(0.0) + v / sigma[s]);
            }
            acc
        };
        Prefix {
            sums: [sum(0), sum(1)],
        }
    }

    fn sum(&self, s: usize, a: usize, b: usize) -> f64 {
        self.sums[s][b] - self.sums[s][a]
    }

    /// Between-sides sum of squares of `inner` (a..b) against the rest of
    /// lo..hi, over both series.
    fn between(&self, lo: usize, hi: usize, a: usize, b: usize) -> f64 {
        let n = (hi - lo) as f64;
        let m = (b - a) as f64;
        if m <= 0.0 || m >= n {
            return 0.0;
        }
        (0..2)
            .map(|s| {
                let inner = self.sum(s, a, b) / m;
                let outer = (self.sum(s, lo, hi) - self.sum(s, a, b)) / (n - m);
                m * (n - m) / n * (inner - outer).powi(2)
            })
            .sum()
    }
}

/// The change points of `pts` (indices of the first interval after each
/// change), in order.
fn change_points(pts: &[Point]) -> Vec<usize> {
    let n = pts.len();
    if n < 2 * MIN_SEGMENT {
        return Vec::new();
    }
    let raw = series(pts);
    let sigma = [noise(&raw[0]), noise(&raw[1])];
    let smooth = [
        running_median(&raw[0], MIN_SEGMENT),
        running_median(&raw[1], MIN_SEGMENT),
    ];
    let prefix = Prefix::new(&smooth, sigma);
    let idx = |a: usize, b: usize| (a..b).collect::<Vec<_>>();
    let mut cuts = Vec::new();
    let mut todo = vec![(0, n)];
    while let Some((lo, hi)) = todo.pop() {
        if cuts.len() >= MAX_CHANGES || hi - lo < 2 * MIN_SEGMENT {
            continue;
        }
        // One split.
        let best = (lo + MIN_SEGMENT..=hi - MIN_SEGMENT)
            .map(|k| (k, prefix.between(lo, hi, lo, k)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((k, _)) = best {
            if differ(&raw, sigma, &idx(lo, k), &idx(k, hi)) {
                cuts.push(k);
                todo.push((lo, k));
                todo.push((k, hi));
                continue;
            }
        }
        // A stretch inside against what surrounds it.
        if hi - lo < 3 * MIN_SEGMENT {
            continue;
        }
        let mut best: Option<(usize, usize, f64)> = None;
        for a in lo + MIN_SEGMENT..=hi - 2 * MIN_SEGMENT {
            for b in a + MIN_SEGMENT..=hi - MIN_SEGMENT {
                let v = prefix.between(lo, hi, a, b);
                if best.map_or(true, |x| v > x.2) {
                    best = Some((a, b, v));
                }
            }
        }
        if let Some((a, b, _)) = best {
            let outside: Vec<usize> = (lo..a).chain(b..hi).collect();
            if differ(&raw, sigma, &idx(a, b), &outside) {
                cuts.push(a);
                cuts.push(b);
                todo.push((lo, a));
                todo.push((a, b));
                todo.push((b, hi));
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.truncate(MAX_CHANGES);
    // Neighbours that no longer differ are merged, one at a time.
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cuts.iter().copied())
            .chain(std::iter::once(n))
            .collect();
        let weak = (1..bounds.len() - 1).find(|&j| {
            !differ(
                &raw,
                sigma,
                &idx(bounds[j - 1], bounds[j]),
                &idx(bounds[j], bounds[j + 1]),
            )
        });
        match weak {
            Some(j) => {
                cuts.remove(j - 1);
            }
            None => return cuts,
        }
    }
}

fn phase(pts: &[Point]) -> Phase {
    let ops: u64 = pts.iter().map(|p| p.ops).sum();
    let secs: f64 = pts.iter().map(|p| p.to_s - p.from_s).sum();
    let lat: f64 = pts.iter().map(|p| p.mean_ns * p.ops as f64).sum();
    let mut p99: Vec<f64> = pts.iter().filter_map(|p| p.p99_ns).collect();
    Phase {
        from_s: pts.first().map_or(0.0, |p| p.from_s),
        to_s: pts.last().map_or(0.0, |p| p.to_s),
        iops: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        mean_ns: if ops > 0 { lat / ops as f64 } else { 0.0 },
        p99_ns: (!p99.is_empty()).then(|| median(&mut p99)),
    }
}

/// The lasting changes of one job's timeline, with the OSD counters and
/// cluster events that moved with them; `None` when the job has too few
/// measured intervals to tell (fewer than twice [`MIN_SEGMENT`]).
pub fn job_changes(
    timeline: &[Sample],
    osds: &[OsdReport],
    cluster: Option<&ClusterState>,
) -> Option<Vec<Change>> {
    let pts = points(timeline);
    if pts.len() < 2 * MIN_SEGMENT {
        return None;
    }
    let cuts = change_points(&pts);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(pts.len()))
        .collect();
    let typical = typical_interval(timeline);
    Some(
        (1..bounds.len() - 1)
            .map(|j| {
                let before = phase(&pts[bounds[j - 1]..bounds[j]]);
                let after = phase(&pts[bounds[j]..bounds[j + 1]]);
                // Slower: fewer IOPS where they moved, else a higher p99.
                let slower = if (before.iops.max(1e-9) / after.iops.max(1e-9)).ln().abs()
                    >= IOPS_FACTOR.ln()
                {
                    after.iops < before.iops
                } else {
                    after.p99_ns.unwrap_or(after.mean_ns) > before.p99_ns.unwrap_or(before.mean_ns)
                };
                Change {
                    t_s: after.from_s,
                    osds: osd_moves(osds, &before, &after, slower),
                    events: cluster
                        .map(|c| near_events(c, after.from_s, typical))
                        .unwrap_or_default(),
                    before,
                    after,
                }
            })
            .collect(),
    )
}

/// A counter's mean over the samples of `o`'s timeline that lie wholly in
/// `p` (a tenth of a sample's length of slack), with its event count.
fn mean_within(o: &OsdReport, name: &str, p: &Phase) -> Option<(f64, u64)> {
    let (mut sum, mut count) = (0.0, 0u64);
    for s in &o.timeline {
        let slack = 0.1 * s.interval_s;
        let from = s.t_s - s.interval_s;
        if from + slack < p.from_s || s.t_s - slack > p.to_s {
            continue;
        }
        if let Some(AvgDelta {
            count: c,
            mean_ns: Some(m),
        }) = counter(&s.counters, name)
        {
            sum += m * c as f64;
            count += c;
        }
    }
    (count >= OSD_MIN_COUNT).then(|| (sum / count as f64, count))
}

/// The OSD counters that moved between `before` and `after` the way the
/// client's figures did (`slower`: up).
fn osd_moves(osds: &[OsdReport], before: &Phase, after: &Phase, slower: bool) -> Vec<OsdMove> {
    let mut out = Vec::new();
    for o in osds {
        for (name, ..) in COUNTERS {
            let (Some((b, _)), Some((a, _))) =
                (mean_within(o, name, before), mean_within(o, name, after))
            else {
                continue;
            };
            let (lo, hi) = (a.min(b), a.max(b));
            if lo <= 0.0 || hi / lo < OSD_FACTOR || hi - lo < OSD_FLOOR_NS || (a > b) != slower {
                continue;
            }
            out.push(OsdMove {
                osd: o.osd,
                counter: name.into(),
                before_ns: b,
                after_ns: a,
            });
        }
    }
    out
}

/// The events that began or ended within a look's period (plus an
/// interval) of `t`: what stood throughout the run explains no change.
fn near_events(c: &ClusterState, t: f64, interval: f64) -> Vec<ClusterEvent> {
    let w = c.poll_s.max(interval) + interval;
    let started_before = |e: &ClusterEvent| c.before.as_ref().is_some_and(|s| e.from_s <= s.t_s);
    c.events
        .iter()
        .filter(|e| {
            let began = !started_before(e) && (e.from_s - t).abs() <= w;
            let ended = !e.until_end && (e.to_s - t).abs() <= w;
            began || ended
        })
        .cloned()
        .collect()
}

/// Fills `jobs[].changes` of a finished result.
pub fn annotate(result: &mut BenchResult) {
    let osds = std::mem::take(&mut result.osds);
    for j in &mut result.jobs {
        j.changes = job_changes(&j.timeline, &osds, result.cluster_state.as_ref());
    }
    result.osds = osds;
}

/// The run's own `--disrupt` action that a change at `t_s` follows, in
/// words (`after osd.1 went out at 3.2 s`): one done from
/// [`DISRUPT_LAG_S`] plus two looks before the change to
/// [`DISRUPT_LEAD_S`] after it (a change point is placed to within an
/// interval or two).
fn disrupt_cause(t_s: f64, d: Option<&Disruption>) -> Option<String> {
    let d = d?;
    let lag = DISRUPT_LAG_S + 2.0 * d.poll_s;
    d.actions
        .iter()
        .filter(|a| !a.on_exit && a.error.is_none())
        .filter_map(|a| Some((a.action, a.done_s.or(a.sent_s)?)))
        .rfind(|(_, at)| *at <= t_s + DISRUPT_LEAD_S && *at >= t_s - lag)
        .map(|(action, at)| {
            let what = match action {
                Action::Out => "went out",
                Action::In => "came back in",
                Action::Down => "was marked down",
                Action::Stop => "was stopped",
                Action::Start => "was started",
            };
            format!("after osd.{} {what} at {at:.1} s", d.osd)
        })
}

/// How long before a change a `--disrupt` action may have been done for the
/// change to be read as its consequence, s (plus two looks: peering and
/// the counters' own sampling lag).
const DISRUPT_LAG_S: f64 = 3.0;
/// How long after a change's start such an action may come, s.
const DISRUPT_LEAD_S: f64 = 2.0;

/// One line per change for the text report, e.g. `from 62 s: IOPS 1,480 →
/// 610 (−59 %), p99 3.1 → 41 ms; osd.3 (class ssd, model X) kv sync round
/// 0.6 → 9.1 ms: its drive's syncs slowed; no cluster event`. A change that
/// follows the run's own `disruption` says so (`from 4 s, after osd.1 went
/// out at 3.2 s: ...`), and its OSDs' moves are not read as their drives'.
pub fn line(
    c: &Change,
    osds: &[OsdReport],
    cluster: Option<&ClusterState>,
    disruption: Option<&Disruption>,
) -> String {
    let pct = match c.iops_move() {
        m if m.is_empty() => m,
        m => format!(" ({m})"),
    };
    let ours = disrupt_cause(c.t_s, disruption);
    let mut s = format!(
        "from {:.0} s{}: IOPS {} → {}{}",
        c.t_s,
        ours.as_ref().map_or(String::new(), |w| format!(", {w}")),
        thousands(c.before.iops),
        thousands(c.after.iops),
        pct
    );
    match (c.before.p99_ns, c.after.p99_ns) {
        (Some(b), Some(a)) => s.push_str(&format!(", p99 {} → {} ms", ms(b), ms(a))),
        _ => s.push_str(&format!(
            ", mean {} → {} ms",
            ms(c.before.mean_ns),
            ms(c.after.mean_ns)
        )),
    }
    let mut named: Vec<i32> = Vec::new();
    let mut parts = Vec::new();
    for m in &c.osds {
        if named.contains(&m.osd) {
            continue;
        }
        named.push(m.osd);
        let (_, words, rose, fell) = COUNTERS
            .iter()
            .find(|x| x.0 == m.counter)
            .copied()
            .unwrap_or(("", "counter", "it rose", "it fell"));
        // The disruption's doing is said once, at the head of the line. A
        // slower kv sync round on an OSD whose CPU set the run's pace may be
        // its sync thread waiting for a core: not put down to the drive.
        let cpu_bound = osds
            .iter()
            .find(|o| o.osd == m.osd)
            .and_then(|o| o.cpu.as_ref())
            .is_some_and(|c| c.cpu_bound);
        let cause = match (&ours, m.after_ns > m.before_ns) {
            (Some(_), _) => String::new(),
            (None, true) if cpu_bound && m.counter == "kv_sync_lat" => {
                ": the OSD was at its CPU limit in this run (its CPU set the pace), so its \
                 sync thread may have waited for a core: not put down to its drive"
                    .to_string()
            }
            (None, true) => format!(": {rose}"),
            (None, false) => format!(": {fell}"),
        };
        let dev = osds
            .iter()
            .find(|o| o.osd == m.osd)
            .and_then(|o| o.device.as_ref())
            .map(|d| {
                let mut v = Vec::new();
                if let Some(c) = &d.class {
                    v.push(format!("class {c}"));
                }
                if let Some(m) = &d.model {
                    v.push(format!("model {m}"));
                }
                v
            })
            .filter(|v| !v.is_empty())
            .map(|v| format!(" ({})", v.join(", ")))
            .unwrap_or_default();
        parts.push(format!(
            "osd.{}{dev} {words} {} → {} ms{cause}",
            m.osd,
            ms(m.before_ns),
            ms(m.after_ns)
        ));
    }
    if parts.is_empty() {
        let sampled = osds.iter().any(|o| o.timeline.len() > 1);
        parts.push(if sampled {
            "no OSD's counters moved with it".into()
        } else {
            "the OSDs' counters were not sampled during the run (--counter-interval)".into()
        });
    }
    s.push_str("; ");
    s.push_str(&parts.join(", "));
    match cluster {
        Some(cs) if !c.events.is_empty() => {
            let ev: Vec<String> = c.events.iter().map(|e| cs.label(e)).collect();
            s.push_str(&format!("; cluster: {}", ev.join("; ")));
        }
        Some(_) => s.push_str("; no cluster event"),
        None => {}
    }
    s
}

fn thousands(x: f64) -> String {
    crate::units::thousands(x.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::counters::CounterSample;

    /// A 1 s timeline of `iops` per second (mean = `qd` / IOPS, p99 twice
    /// the mean), after a `ramp` of seconds.
    fn timeline(iops: &[f64], qd: f64, ramp: usize) -> Vec<Sample> {
        (0..ramp)
            .map(|_| iops[0])
            .chain(iops.iter().copied())
            .enumerate()
            .map(|(i, x)| {
                let mean = qd / x.max(1.0) * 1e9;
                Sample {
                    t_s: (i + 1) as f64,
                    ramp: i < ramp,
                    ops: x.round() as u64,
                    bytes: 4096 * x.round() as u64,
                    mean_latency_ns: mean,
                    in_flight: qd as u64,
                    errors: 0,
                    p50_latency_ns: Some(mean as u64),
                    p99_latency_ns: Some(2 * mean as u64),
                    max_latency_ns: Some(3 * mean as u64),
                }
            })
            .collect()
    }

    /// Pseudo-random noise of ±`amp` (relative), repeatable.
    fn noisy(base: &[f64], amp: f64, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        base.iter()
            .map(|b| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                b * (1.0 + amp * (2.0 * u - 1.0))
            })
            .collect()
    }

    #[test]
    fn a_steady_run_reports_no_change_even_with_one_slow_second() {
        for seed in 0..50 {
            let mut x = noisy(&[1500.0; 40], 0.1, seed);
            x[17] = 80.0; // one slow second
            let c = job_changes(&timeline(&x, 4.0, 2), &[], None).unwrap();
            assert!(c.is_empty(), "seed {seed}: {c:#?}");
        }
    }

    #[test]
    fn one_drop_is_found_where_it_began() {
        for seed in 0..50 {
            let base: Vec<f64> = (0..40)
                .map(|i| if i < 15 { 1480.0 } else { 610.0 })
                .collect();
            let x = noisy(&base, 0.15, seed);
            let tl = timeline(&x, 4.0, 2);
            let c = job_changes(&tl, &[], None).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:#?}");
            // Interval 15 of the measured ones starts at 2 + 15 s.
            assert_eq!(c[0].t_s, 17.0, "seed {seed}");
            assert!((c[0].before.iops / 1480.0 - 1.0).abs() < 0.1);
            assert!((c[0].after.iops / 610.0 - 1.0).abs() < 0.1);
            assert!(c[0].after.p99_ns > c[0].before.p99_ns);
        }
    }

    /// A slow wander of ln IOPS (AR(1), φ = 0.95: each second leans on the
    /// last, as a host's load drifts) scaled so that its highest and lowest
    /// seconds are `span` apart, with ±3 % of per-second noise on top.
    fn drift(n: usize, span: f64, seed: u64) -> Vec<f64> {
        let steps = noisy(&vec![1.0; n], 1.0, seed ^ 0x5eed);
        let mut d = vec![0.0f64; n];
        for i in 1..n {
            d[i] = 0.95 * d[i - 1] + 0.05 * (steps[i] - 1.0);
        }
        let (lo, hi) = d
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        let level: Vec<f64> = d
            .iter()
            .map(|v| 1000.0 * (span.ln() * (v - lo) / (hi - lo)).exp())
            .collect();
        noisy(&level, 0.03, seed)
    }

    #[test]
    fn a_drift_below_the_factor_is_no_change_and_a_step_on_it_is_one() {
        for seed in 0..50 {
            // The drift reaches 1.4x, just short of the 1.5x a change needs,
            // and the per-second noise is small, so the σ test passes
            // everywhere: only the factor keeps the detector quiet.
            let x = drift(60, 1.4, seed);
            let c = job_changes(&timeline(&x, 4.0, 2), &[], None).unwrap();
            assert!(c.is_empty(), "seed {seed}: {c:#?}");
            // The same drift with the pool halving its IOPS from 30 s on:
            // one change, where it began.
            let stepped: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(i, v)| if i < 30 { *v } else { v / 2.5 })
                .collect();
            let c = job_changes(&timeline(&stepped, 4.0, 2), &[], None).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:#?}");
            assert!((c[0].t_s - 32.0).abs() <= 2.0, "seed {seed}: {c:#?}");
        }
    }

    #[test]
    fn a_dip_inside_the_run_is_two_changes() {
        let base: Vec<f64> = (0..60)
            .map(|i| if (25..35).contains(&i) { 300.0 } else { 1000.0 })
            .collect();
        let c = job_changes(&timeline(&noisy(&base, 0.1, 7), 4.0, 0), &[], None).unwrap();
        let t: Vec<f64> = c.iter().map(|c| c.t_s).collect();
        assert_eq!(t, [25.0, 35.0], "{c:#?}");
        // Too short to be lasting: two slow seconds in a row (a stretch
        // counts once it holds most of [`MIN_SEGMENT`] intervals).
        let base: Vec<f64> = (0..60)
            .map(|i| if (25..27).contains(&i) { 300.0 } else { 1000.0 })
            .collect();
        let c = job_changes(&timeline(&noisy(&base, 0.1, 7), 4.0, 0), &[], None).unwrap();
        assert!(c.is_empty(), "{c:#?}");
    }

    #[test]
    fn an_open_loop_change_shows_in_latency_alone() {
        // The rate is kept (IOPS flat) while p99 quadruples from 30 s.
        let mut tl = timeline(&noisy(&[500.0; 50], 0.05, 3), 1.0, 0);
        for s in tl.iter_mut().skip(30) {
            s.p99_latency_ns = s.p99_latency_ns.map(|v| v * 4);
        }
        let c = job_changes(&tl, &[], None).unwrap();
        assert_eq!(c.len(), 1, "{c:#?}");
        assert_eq!(c[0].t_s, 30.0);
    }

    #[test]
    fn too_short_a_run_is_not_judged() {
        assert_eq!(job_changes(&timeline(&[100.0; 9], 1.0, 0), &[], None), None);
    }

    fn osd(id: i32, kv_ms: &[(f64, f64)]) -> OsdReport {
        // One counter sample every 2 s from 0: (end, kv sync mean ms).
        let timeline = kv_ms
            .iter()
            .map(|&(t, m)| CounterSample {
                t_s: t,
                interval_s: 2.0,
                cpu_s: None,
                counters: serde_json::from_value(serde_json::json!({
                    "osd": id,
                    "reset": false,
                    "kv_sync_lat": {"count": 100, "mean_ns": m * 1e6},
                    "op_w_latency": {"count": 100, "mean_ns": m * 1e6 + 1e6},
                }))
                .unwrap(),
            })
            .collect();
        OsdReport {
            osd: id,
            client: Vec::new(),
            counters: None,
            timeline,
            mgr_perf: None,
            device: None,
            replica_sets: Vec::new(),
            cpu: None,
        }
    }

    /// IOPS up from 15 s while osd.1's kv sync round falls 9.1 → 0.6 ms:
    /// the job got faster and so did the drive's syncs.
    fn faster_from_15s() -> (Vec<Sample>, [OsdReport; 2]) {
        let base: Vec<f64> = (0..40)
            .map(|i| if i < 15 { 610.0 } else { 1480.0 })
            .collect();
        let tl = timeline(&noisy(&base, 0.05, 1), 4.0, 0);
        let fast: Vec<(f64, f64)> = (1..=20)
            .map(|k| (2.0 * k as f64, if k <= 7 { 9.1 } else { 0.6 }))
            .collect();
        let calm: Vec<(f64, f64)> = (1..=20).map(|k| (2.0 * k as f64, 9.1)).collect();
        (tl, [osd(0, &calm), osd(1, &fast)])
    }

    #[test]
    fn a_change_sentence_follows_the_direction_of_its_figures() {
        let (tl, osds) = faster_from_15s();
        let c = job_changes(&tl, &osds, None).unwrap();
        assert_eq!(c.len(), 1, "{c:#?}");
        let l = line(&c[0], &osds, None, None);
        assert!(
            l.contains("osd.1 kv sync round 9.10 → 0.600 ms: its drive's syncs got faster"),
            "{l}"
        );
        assert!(!l.contains("slowed") && !l.contains("longer"), "{l}");
    }

    /// A `--disrupt` result with `action` done at `done_s`.
    fn disruption(action: &str, done_s: f64) -> Disruption {
        serde_json::from_value(serde_json::json!({
            "osd": 1,
            "spec": format!("osd.1:{action}@{done_s}s"),
            "actions": [{"action": action, "asked_s": done_s, "sent_s": done_s,
                         "done_s": done_s, "on_exit": false}],
            "phases": [],
            "recovery": {"degraded_from_s": null, "recovering_from_s": null,
                "clean_at_s": null, "clean_after_last_action_s": null, "job_end_s": 40.0,
                "clean_by_job_end": true, "waited_after_job_s": 0.0, "wait_limit_s": 60.0,
                "max_objects_per_sec": 0.0, "max_bytes_per_sec": 0.0,
                "mean_objects_per_sec": 0.0, "mean_bytes_per_sec": 0.0},
            "looks": [],
            "poll_s": 1.0
        }))
        .unwrap()
    }

    #[test]
    fn a_change_after_the_runs_own_disruption_says_so() {
        let (tl, osds) = faster_from_15s();
        let c = job_changes(&tl, &osds, None).unwrap();
        let d = disruption("out", 14.2);
        let l = line(&c[0], &osds, None, Some(&d));
        assert!(
            l.starts_with("from 15 s, after osd.1 went out at 14.2 s: IOPS"),
            "{l}"
        );
        // The OSD's figures stay; no drive is blamed.
        assert!(l.contains("osd.1 kv sync round 9.10 → 0.600 ms"), "{l}");
        assert!(!l.contains("its drive"), "{l}");
        // An action long before the change, or after it, is not its cause.
        for far in [2.0, 25.0] {
            let l = line(&c[0], &osds, None, Some(&disruption("out", far)));
            assert!(!l.contains("went out"), "{l}");
            assert!(l.contains("its drive's syncs got faster"), "{l}");
        }
    }

    #[test]
    fn the_osd_whose_counters_moved_is_named_deepest_first() {
        let base: Vec<f64> = (0..40)
            .map(|i| if i < 15 { 1480.0 } else { 610.0 })
            .collect();
        let tl = timeline(&noisy(&base, 0.05, 1), 4.0, 0);
        let slow: Vec<(f64, f64)> = (1..=20)
            .map(|k| (2.0 * k as f64, if k <= 7 { 0.6 } else { 9.1 }))
            .collect();
        let calm: Vec<(f64, f64)> = (1..=20).map(|k| (2.0 * k as f64, 0.6)).collect();
        let osds = [osd(0, &calm), osd(1, &slow)];
        let c = job_changes(&tl, &osds, None).unwrap();
        assert_eq!(c.len(), 1, "{c:#?}");
        let named: Vec<(i32, &str)> = c[0]
            .osds
            .iter()
            .map(|m| (m.osd, m.counter.as_str()))
            .collect();
        assert_eq!(named, [(1, "kv_sync_lat"), (1, "op_w_latency")]);
        // The sample over 14–16 s straddles the change at 15 s: left out.
        assert!((c[0].osds[0].before_ns - 0.6e6).abs() < 1.0);
        assert!((c[0].osds[0].after_ns - 9.1e6).abs() < 1.0);
        let l = line(&c[0], &osds, None, None);
        assert!(
            l.starts_with("from 15 s: IOPS 1,4") && l.contains("(−5"),
            "{l}"
        );
        assert!(
            l.contains("osd.1 kv sync round 0.600 → 9.10 ms: its drive's syncs slowed"),
            "{l}"
        );
        assert!(!l.contains("osd.0"), "{l}");
        // The same move on an OSD whose CPU set the pace is not its drive's.
        let mut busy = osds.clone();
        busy[1].cpu = Some(crate::result::OsdCpu {
            cpu_bound: true,
            ..Default::default()
        });
        let l = line(&c[0], &busy, None, None);
        assert!(
            l.contains("osd.1 kv sync round 0.600 → 9.10 ms: the OSD was at its CPU limit")
                && l.contains("not put down to its drive")
                && !l.contains("its drive's syncs slowed"),
            "{l}"
        );
    }

    #[test]
    fn events_near_the_change_are_kept_those_of_the_whole_run_not() {
        let base: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 1000.0 } else { 400.0 })
            .collect();
        let tl = timeline(&noisy(&base, 0.05, 2), 4.0, 0);
        let ev = |kind: &str, from: f64, to: f64, until_end: bool| ClusterEvent {
            kind: kind.into(),
            from_s: from,
            to_s: to,
            until_end,
            name: String::new(),
            severity: String::new(),
            detail: String::new(),
            pgs: Some(1),
            pg_ids: Vec::new(),
            max_objects_per_sec: None,
            max_bytes_per_sec: None,
            epochs: None,
        };
        let cs = ClusterState {
            before: None,
            after: None,
            events: vec![
                ev("health", -0.1, 40.0, true),
                ev("deep_scrub", 21.0, 40.0, true),
                ev("scrub", 2.0, 6.0, false),
            ],
            events_left_out: 0,
            poll_s: 5.0,
            looks: 9,
            quiet: false,
        };
        let c = job_changes(&tl, &[], Some(&cs)).unwrap();
        assert_eq!(c.len(), 1);
        let kinds: Vec<&str> = c[0].events.iter().map(|e| e.kind.as_str()).collect();
        // The health check stood from before the run (the look before is
        // absent here, so its start counts): kept only if it began near.
        assert_eq!(kinds, ["deep_scrub"]);
        let l = line(&c[0], &[], Some(&cs), None);
        assert!(l.contains("; cluster: deep scrub, 1 PG"), "{l}");
    }

    #[test]
    fn noise_is_robust_to_one_step() {
        let mut x = vec![0.0; 50];
        for v in x.iter_mut().skip(25) {
            *v = 1.0;
        }
        assert_eq!(noise(&x), MIN_SIGMA);
    }
}
