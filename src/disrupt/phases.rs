//! Client I/O through a disruption, phase by phase. Pure: from the job's
//! timeline (one sample per interval), the cluster's looks (one a second)
//! and the actions' times, all on the timeline's clock.
//!
//! * before: up to the first action that took something away;
//! * degraded: from it until recovery begins: the first look that sees a
//!   PG recover or backfill (or wait to), the OSD put back (`in`,
//!   `start`), or, after `down`, the OSD up again;
//! * recovering: from then until the first look, at or after the last
//!   action, that finds every PG active+clean and as many OSDs up and in
//!   as before;
//! * after: from then on.
//!
//! Each interval belongs to the phase its midpoint falls in. A phase's p99
//! is its own, from its intervals' histograms merged; the worst interval's
//! p99 is kept beside it, labelled as such. Its longest stall is the longest time without a completion: the
//! engine's own gaps (from one completion to the next, cut at the phase's
//! edges) or, if longer, a run of intervals without a completion.
#![forbid(unsafe_code)]

use crate::progress::Sample;
use crate::result::disruption::{Action, ActionDone, Look, Phase, PhaseKind, Recovery};
use crate::stats::{LatencyRecorder, PackedLatencies};

/// One job's timeline, as the phases are taken from it.
#[derive(Debug, Clone, Copy)]
pub struct JobTimeline<'a> {
    /// The job's name.
    pub job: &'a str,
    /// Its samples, one per interval.
    pub samples: &'a [Sample],
    /// Each sample's histogram, in the same order (empty where none was
    /// kept: a phase then has no p99 of its own).
    pub latencies: &'a [PackedLatencies],
}

/// Where the phases begin, seconds on the timeline's clock.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bounds {
    /// The first action that took something away took effect.
    pub degraded: Option<f64>,
    /// Recovery began.
    pub recovering: Option<f64>,
    /// Active+clean again after the last action.
    pub clean: Option<f64>,
}

/// When an action took effect (acknowledged, else sent).
fn effect(a: &ActionDone) -> Option<f64> {
    a.done_s.or(a.sent_s)
}

/// The phases' starts from the actions and the looks.
pub fn bounds(actions: &[ActionDone], looks: &[Look]) -> Bounds {
    let Some((first_i, first)) = actions
        .iter()
        .enumerate()
        .find(|(_, a)| a.action.disrupts())
        .and_then(|(i, a)| Some((i, effect(a)?)))
    else {
        return Bounds::default();
    };
    let before = looks.iter().rev().find(|l| l.t_s <= first);
    let restored = actions[first_i..]
        .iter()
        .filter(|a| !a.action.disrupts())
        .find_map(effect);
    let seen = looks
        .iter()
        .filter(|l| l.t_s > first)
        .find(|l| {
            l.recovering
                || (actions[first_i].action == Action::Down
                    && before.is_some_and(|b| l.osds_up >= b.osds_up))
        })
        .map(|l| l.t_s);
    let recovering = match (restored, seen) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let last = actions.iter().filter_map(effect).fold(first, f64::max);
    let clean = recovering.and_then(|r| {
        looks
            .iter()
            .find(|l| {
                l.t_s >= r.max(last)
                    && l.pgs_not_clean == 0
                    && before.map_or(true, |b| l.osds_up >= b.osds_up && l.osds_in >= b.osds_in)
            })
            .map(|l| l.t_s)
    });
    Bounds {
        degraded: Some(first),
        recovering,
        clean,
    }
}

fn phase_of(m: f64, b: &Bounds) -> PhaseKind {
    let before = |t: Option<f64>| t.map_or(true, |t| m < t);
    if b.degraded.map_or(true, |t| m < t) {
        PhaseKind::Before
    } else if before(b.recovering) {
        PhaseKind::Degraded
    } else if before(b.clean) {
        PhaseKind::Recovering
    } else {
        PhaseKind::After
    }
}

/// One job's figures per phase (phases without a measured interval left
/// out). `stalls`: the engine's gaps without a completion, (start, length)
/// in seconds on the timeline's clock.
pub fn phases(tl: &JobTimeline, b: &Bounds, stalls: &[(f64, f64)]) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    // Each phase's ops' latencies, merged from its intervals' histograms.
    let mut merged: Vec<LatencyRecorder> = Vec::new();
    let mut prev_t = 0.0;
    // The run of intervals without a completion the phase is in.
    let mut zero_run = 0.0;
    for (i, s) in tl.samples.iter().enumerate() {
        let (from, to) = (prev_t, s.t_s);
        prev_t = s.t_s;
        if s.ramp || to <= from {
            continue;
        }
        let kind = phase_of((from + to) / 2.0, b);
        if out.last().map_or(true, |p| p.phase != kind) {
            zero_run = 0.0;
            merged.push(LatencyRecorder::new());
            out.push(Phase {
                job: tl.job.to_string(),
                phase: kind,
                from_s: from,
                to_s: to,
                duration_s: 0.0,
                ops: 0,
                errors: 0,
                iops: 0.0,
                mean_ns: 0.0,
                p99_ns: None,
                worst_interval_p99_ns: None,
                max_ns: None,
                longest_stall_s: 0.0,
            });
        }
        let p = out.last_mut().expect("pushed above");
        p.to_s = to;
        p.duration_s += to - from;
        if s.ops > 0 {
            // Running mean, weighted by ops.
            let n = (p.ops + s.ops) as f64;
            p.mean_ns += (s.mean_latency_ns - p.mean_ns) * s.ops as f64 / n;
            zero_run = 0.0;
        } else {
            zero_run += to - from;
            p.longest_stall_s = p.longest_stall_s.max(zero_run);
        }
        p.ops += s.ops;
        p.errors += s.errors;
        p.worst_interval_p99_ns = p.worst_interval_p99_ns.max(s.p99_latency_ns);
        if let Some(h) = tl.latencies.get(i) {
            merged.last_mut().expect("pushed above").merge(&h.unpack());
        }
        p.max_ns = p.max_ns.max(s.max_latency_ns);
    }
    for (p, h) in out.iter_mut().zip(&merged) {
        p.p99_ns = (h.count() > 0).then(|| h.quantile(0.99));
        p.iops = if p.duration_s > 0.0 {
            p.ops as f64 / p.duration_s
        } else {
            0.0
        };
        for &(start, len) in stalls {
            let cut = (start + len).min(p.to_s) - start.max(p.from_s);
            p.longest_stall_s = p.longest_stall_s.max(cut);
        }
    }
    out
}

/// Recovery in figures: when it began and ended, how fast it went (the
/// mgr's `recovering_*_per_sec` of the looks from its start until clean).
pub fn recovery(
    b: &Bounds,
    actions: &[ActionDone],
    looks: &[Look],
    job_end_s: f64,
    wait_limit_s: f64,
) -> Recovery {
    let last = actions.iter().filter_map(effect).fold(f64::NAN, f64::max);
    let during: Vec<&Look> = match b.recovering {
        Some(r) => looks
            .iter()
            .filter(|l| l.t_s >= r && b.clean.map_or(true, |c| l.t_s <= c))
            .filter(|l| l.pgs_not_clean > 0)
            .filter(|l| l.recovering_objects_per_sec > 0.0 || l.recovering_bytes_per_sec > 0.0)
            .collect(),
        None => Vec::new(),
    };
    let n = during.len().max(1) as f64;
    let disrupted: Vec<&Look> = match b.degraded {
        Some(d) => looks
            .iter()
            .filter(|l| l.t_s >= d && b.clean.map_or(true, |c| l.t_s <= c))
            .collect(),
        None => Vec::new(),
    };
    let last_look = looks.last().map_or(job_end_s, |l| l.t_s);
    Recovery {
        degraded_from_s: b.degraded,
        recovering_from_s: b.recovering,
        clean_at_s: b.clean,
        clean_after_last_action_s: b.clean.filter(|_| last.is_finite()).map(|c| c - last),
        job_end_s,
        clean_by_job_end: b.clean.is_some_and(|c| c <= job_end_s),
        waited_after_job_s: (b.clean.unwrap_or(last_look) - job_end_s).max(0.0),
        wait_limit_s,
        max_objects_per_sec: during
            .iter()
            .map(|l| l.recovering_objects_per_sec)
            .fold(0.0, f64::max),
        max_bytes_per_sec: during
            .iter()
            .map(|l| l.recovering_bytes_per_sec)
            .fold(0.0, f64::max),
        mean_objects_per_sec: during
            .iter()
            .fold(0.0, |a, l| a + l.recovering_objects_per_sec)
            / n,
        mean_bytes_per_sec: during
            .iter()
            .fold(0.0, |a, l| a + l.recovering_bytes_per_sec)
            / n,
        max_degraded_objects: disrupted
            .iter()
            .map(|l| l.degraded_objects)
            .max()
            .unwrap_or(0),
        max_misplaced_objects: disrupted
            .iter()
            .map(|l| l.misplaced_objects)
            .max()
            .unwrap_or(0),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, ops: u64, mean_ms: f64, p99_ms: u64, max_ms: u64) -> Sample {
        Sample {
            t_s: t,
            ramp: false,
            ops,
            bytes: ops * 4096,
            mean_latency_ns: mean_ms * 1e6,
            in_flight: 4,
            errors: 0,
            p50_latency_ns: (ops > 0).then_some(1_000_000),
            p99_latency_ns: (ops > 0).then_some(p99_ms * 1_000_000),
            max_latency_ns: (ops > 0).then_some(max_ms * 1_000_000),
        }
    }

    fn timeline<'a>(samples: &'a [Sample], latencies: &'a [PackedLatencies]) -> JobTimeline<'a> {
        JobTimeline {
            job: "w",
            samples,
            latencies,
        }
    }

    /// An interval's histogram of `n` latencies spread evenly over
    /// `from_ms..to_ms`.
    fn spread(n: u64, from_ms: f64, to_ms: f64) -> Vec<u64> {
        (0..n)
            .map(|k| ((from_ms + (to_ms - from_ms) * k as f64 / n as f64) * 1e6) as u64)
            .collect()
    }

    fn packed(values: &[u64]) -> PackedLatencies {
        let mut r = LatencyRecorder::new();
        values.iter().for_each(|&v| r.record(v));
        r.pack()
    }

    /// The nearest-rank quantile of `values`.
    fn nearest_rank(values: &mut [u64], q: f64) -> u64 {
        values.sort_unstable();
        let rank = (q * values.len() as f64).ceil() as usize;
        values[rank.max(1) - 1]
    }

    fn act(action: Action, asked: f64, done: f64) -> ActionDone {
        ActionDone {
            action,
            asked_s: Some(asked),
            sent_s: Some(asked),
            done_s: Some(done),
            on_exit: false,
            error: None,
        }
    }

    fn look(t: f64, not_clean: u32, recovering: bool, up: u32, inn: u32) -> Look {
        Look {
            t_s: t,
            pgs: 32,
            pgs_not_clean: not_clean,
            recovering,
            degraded_objects: 0,
            misplaced_objects: 0,
            recovering_objects_per_sec: if recovering { 100.0 } else { 0.0 },
            recovering_bytes_per_sec: if recovering { 409_600.0 } else { 0.0 },
            osds_up: up,
            osds_in: inn,
        }
    }

    /// out@5s, in@20s on 3 OSDs: undersized from 5 s, recovering from the
    /// `in` at 20 s until clean at 24 s; a 1 s interval straddling a
    /// boundary goes to the phase of its midpoint.
    #[test]
    fn out_then_in() {
        let actions = [act(Action::Out, 5.0, 5.2), act(Action::In, 20.0, 20.1)];
        let mut looks = vec![look(0.0, 0, false, 3, 3)];
        for t in 1..=40 {
            let t = t as f64;
            looks.push(match t {
                t if t < 6.0 => look(t, 0, false, 3, 3),
                t if t < 21.0 => look(t, 32, false, 3, 2),
                t if t < 24.0 => look(t, 10, true, 3, 3),
                t => look(t, 0, false, 3, 3),
            });
        }
        let b = bounds(&actions, &looks);
        assert_eq!(
            b,
            Bounds {
                degraded: Some(5.2),
                recovering: Some(20.1),
                clean: Some(24.0)
            }
        );
        let mut tl: Vec<Sample> = (1..=40)
            .map(|t| sample(t as f64, 1000, 2.0, 4, 9))
            .collect();
        // The peering stall: two intervals without a completion at 6-8 s.
        tl[6] = sample(7.0, 0, 0.0, 0, 0);
        tl[7] = sample(8.0, 0, 0.0, 0, 0);
        tl[8] = sample(9.0, 500, 6.0, 30, 1200);
        // The intervals' own latencies: 1-3 ms, 2-10 ms in the slow one.
        let values: Vec<Vec<u64>> = tl
            .iter()
            .map(|s| match s.ops {
                0 => Vec::new(),
                500 => spread(500, 2.0, 10.0),
                n => spread(n, 1.0, 3.0),
            })
            .collect();
        let latencies: Vec<PackedLatencies> = values.iter().map(|v| packed(v)).collect();
        let ph = phases(&timeline(&tl, &latencies), &b, &[(5.9, 2.3)]);
        let kinds: Vec<_> = ph.iter().map(|p| p.phase).collect();
        assert_eq!(
            kinds,
            [
                PhaseKind::Before,
                PhaseKind::Degraded,
                PhaseKind::Recovering,
                PhaseKind::After
            ]
        );
        let before = &ph[0];
        // Interval 4-5 s has its midpoint before 5.2: before; 5-6 s is not.
        assert_eq!((before.from_s, before.to_s, before.ops), (0.0, 5.0, 5000));
        assert_eq!(before.iops, 1000.0);
        let d = &ph[1];
        assert_eq!((d.from_s, d.to_s), (5.0, 20.0));
        assert_eq!(d.ops, 12 * 1000 + 500);
        let mean = (12.0 * 1000.0 * 2.0 + 500.0 * 6.0) / 12_500.0 * 1e6;
        assert!((d.mean_ns - mean).abs() < 1.0, "{} vs {mean}", d.mean_ns);
        // Its own p99 is that of its ops (the intervals 5-20 s), to the
        // histogram's 3 digits; the worst interval's is beside it.
        let mut ops: Vec<u64> = values[5..20].concat();
        assert_eq!(ops.len() as u64, d.ops);
        let want = nearest_rank(&mut ops, 0.99) as f64;
        let got = d.p99_ns.unwrap() as f64;
        assert!((got / want - 1.0).abs() < 1e-3, "{got} vs {want}");
        assert!(got < 10e6, "{got}");
        assert_eq!(d.worst_interval_p99_ns, Some(30_000_000));
        assert_eq!(d.max_ns, Some(1_200_000_000));
        // The engine's gap (2.3 s) is longer than the two empty intervals.
        assert!((d.longest_stall_s - 2.3).abs() < 1e-9);
        assert_eq!((ph[2].from_s, ph[2].to_s), (20.0, 24.0));
        assert_eq!((ph[3].from_s, ph[3].to_s, ph[3].ops), (24.0, 40.0, 16_000));
        assert_eq!(ph[3].longest_stall_s, 0.0);

        let r = recovery(&b, &actions, &looks, 40.0, 60.0);
        assert!((r.clean_after_last_action_s.unwrap() - 3.9).abs() < 1e-9);
        assert!(r.clean_by_job_end);
        assert_eq!(r.waited_after_job_s, 0.0);
        assert_eq!(
            (r.max_objects_per_sec, r.mean_objects_per_sec),
            (100.0, 100.0)
        );
    }

    /// Without engine gaps a stall is the longest run of empty intervals.
    #[test]
    fn a_stall_from_empty_intervals_and_a_gap_cut_at_the_phase_edge() {
        let b = Bounds {
            degraded: Some(3.0),
            recovering: None,
            clean: None,
        };
        let tl: Vec<Sample> = (1..=8)
            .map(|t| {
                if (5..=7).contains(&t) {
                    sample(t as f64, 0, 0.0, 0, 0)
                } else {
                    sample(t as f64, 10, 1.0, 1, 1)
                }
            })
            .collect();
        let ph = phases(&timeline(&tl, &[]), &b, &[(1.5, 2.0)]);
        assert_eq!(ph.len(), 2);
        // The gap 1.5-3.5 s: 1.5 s of it before 3 s, 0.5 s after.
        assert!((ph[0].longest_stall_s - 1.5).abs() < 1e-9);
        assert!((ph[1].longest_stall_s - 3.0).abs() < 1e-9);
        assert_eq!(ph[1].phase, PhaseKind::Degraded);
    }

    /// `down`: the OSD comes back up by itself; recovery begins with it.
    /// Clean not reached by the job's end: waited for afterwards.
    #[test]
    fn down_and_clean_after_the_job() {
        let actions = [act(Action::Down, 5.0, 5.1)];
        let looks = vec![
            look(4.0, 0, false, 3, 3),
            look(6.0, 8, false, 2, 3),
            look(7.0, 8, false, 3, 3),
            look(8.0, 8, false, 3, 3),
            look(12.0, 0, false, 3, 3),
        ];
        let b = bounds(&actions, &looks);
        assert_eq!(b.recovering, Some(7.0));
        assert_eq!(b.clean, Some(12.0));
        let r = recovery(&b, &actions, &looks, 10.0, 60.0);
        assert!(!r.clean_by_job_end);
        assert!((r.waited_after_job_s - 2.0).abs() < 1e-9);
        assert!((r.clean_after_last_action_s.unwrap() - 6.9).abs() < 1e-9);
        assert_eq!(r.max_objects_per_sec, 0.0);
    }

    #[test]
    fn nothing_done_is_all_before() {
        let b = bounds(&[], &[look(1.0, 0, false, 3, 3)]);
        assert_eq!(b, Bounds::default());
        let tl: Vec<Sample> = (1..=3).map(|t| sample(t as f64, 5, 1.0, 1, 1)).collect();
        let ph = phases(&timeline(&tl, &[]), &b, &[]);
        assert_eq!(ph.len(), 1);
        // No histograms kept: no p99 of its own, the worst interval's only.
        assert_eq!(ph[0].p99_ns, None);
        assert_eq!(ph[0].worst_interval_p99_ns, Some(1_000_000));
        assert_eq!(ph[0].phase, PhaseKind::Before);
        assert_eq!(ph[0].ops, 15);
    }
}
