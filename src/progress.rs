//! Live progress: per-worker counters the I/O path updates with plain
//! relaxed stores (one writer each), per-worker interval histograms, and a
//! sampler that reads them once an interval (`--interval`, 1 s by default)
//! to build the timeline and, on a terminal, print a rados-bench-style line.
//!
//! Each worker records its ops' latencies into its own interval histograms
//! behind its own mutex: only that worker and the sampler take it, and
//! the sampler once an interval (it swaps in emptied histograms, so the worker
//! never allocates). The sampler merges the workers' histograms into the
//! interval's and keeps each interval's compressed ([`PackedLatencies`]), so
//! intervals can be merged exactly: past [`MAX_INTERVALS`] stored intervals it
//! merges neighbours in pairs and from then on stores intervals twice as long.
#![forbid(unsafe_code)]

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::stats::{LatencyRecorder, PackedLatencies};

use serde::{Deserialize, Serialize};

/// Op kinds counted apart (the engine's read, write and flush, by index).
pub const KINDS: usize = 3;

/// What one kind of a worker's ops added up to in one phase (the ramp, or
/// the measured window). Only that worker writes them.
#[derive(Debug, Default)]
struct PhaseCounters {
    ops: AtomicU64,
    bytes: AtomicU64,
    lat_sum_ns: AtomicU64,
    errors: AtomicU64,
}

/// One interval's latencies of one worker: [ramp, measured][kind].
type IntervalLatencies = [[LatencyRecorder; KINDS]; 2];

/// Counters of one worker. Only that worker writes them.
#[derive(Debug, Default)]
pub struct Counters {
    started: AtomicU64,
    finished: AtomicU64,
    last_lat_ns: AtomicU64,
    /// [ramp, measured][kind]
    phases: [[PhaseCounters; KINDS]; 2],
    /// Set by the sampler when the job reached steady state: the worker
    /// stops issuing ops ([`WorkerProgress::stop_requested`]).
    stop: std::sync::atomic::AtomicBool,
    /// This interval's latencies. The worker records under this lock and
    /// updates `phases` before releasing it, so what the sampler reads under
    /// it (the counts and the histograms) covers the same ops.
    interval: Mutex<IntervalLatencies>,
}

/// The timeline's interval unless `--interval` says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// For serde: [`DEFAULT_INTERVAL`].
pub fn default_interval() -> Duration {
    DEFAULT_INTERVAL
}

/// How many intervals a timeline keeps at most: past it, neighbours are
/// merged in pairs and later intervals are twice as long.
pub const MAX_INTERVALS: usize = 2048;

/// A worker's local tallies of one phase, published with single-writer stores.
#[derive(Debug, Default, Clone, Copy)]
struct PhaseTally {
    ops: u64,
    bytes: u64,
    lat_sum_ns: u64,
    errors: u64,
}

/// The worker-side view: local tallies published with single-writer stores.
#[derive(Debug)]
pub struct WorkerProgress {
    shared: Arc<Counters>,
    started: u64,
    finished: u64,
    phases: [[PhaseTally; KINDS]; 2],
}

/// One completed op, as the worker tells its progress.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    /// Bytes it moved (0 for a flush).
    pub bytes: u64,
    /// Its latency, ns.
    pub lat_ns: u64,
    /// Whether it counts in the measured window (the engine's own rule:
    /// completed after the ramp, or in an open loop due after it).
    pub measured: bool,
    /// Its kind (the engine's `OpKind` index, below [`KINDS`]): each kind
    /// has a timeline of its own.
    pub kind: usize,
}

impl WorkerProgress {
    /// A new worker's counters, registered with the sampler's set.
    pub fn new(shared: Arc<Counters>) -> Self {
        WorkerProgress {
            shared,
            started: 0,
            finished: 0,
            phases: [[PhaseTally::default(); KINDS]; 2],
        }
    }

    /// Whether the sampler asked the job to stop (it reached steady state).
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.shared.stop.load(Relaxed)
    }

    /// One op was submitted.
    #[inline]
    pub fn started(&mut self) {
        self.started += 1;
        self.shared.started.store(self.started, Relaxed);
    }

    /// One op completed successfully.
    #[inline]
    pub fn finished(&mut self, d: Done) {
        self.finished += 1;
        let (p, k) = (usize::from(d.measured), d.kind);
        let mut interval = self
            .shared
            .interval
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        interval[p][k].record(d.lat_ns);
        let (t, c) = (&mut self.phases[p][k], &self.shared.phases[p][k]);
        t.ops += 1;
        t.bytes += d.bytes;
        t.lat_sum_ns += d.lat_ns;
        c.bytes.store(t.bytes, Relaxed);
        c.lat_sum_ns.store(t.lat_sum_ns, Relaxed);
        c.ops.store(t.ops, Relaxed);
        self.shared.last_lat_ns.store(d.lat_ns, Relaxed);
        self.shared.finished.store(self.finished, Relaxed);
        drop(interval);
    }

    /// One op of `kind` failed; `measured` as in [`Done::measured`].
    #[inline]
    pub fn failed(&mut self, kind: usize, measured: bool) {
        self.finished += 1;
        let (p, k) = (usize::from(measured), kind);
        self.phases[p][k].errors += 1;
        self.shared.phases[p][k]
            .errors
            .store(self.phases[p][k].errors, Relaxed);
        self.shared.finished.store(self.finished, Relaxed);
    }
}

/// The timeline's zero, shared with what acts on its clock (`--disrupt`):
/// [`crate::bench::sampled`] marks it when the job's first interval starts.
#[derive(Clone, Default)]
pub struct JobClock(Option<Arc<dyn Fn(Instant) + Send + Sync>>);

impl JobClock {
    /// A clock that calls `on_start` with the job's start.
    pub fn new(on_start: impl Fn(Instant) + Send + Sync + 'static) -> JobClock {
        JobClock(Some(Arc::new(on_start)))
    }

    /// Marks the job's start.
    pub fn mark(&self, t: Instant) {
        if let Some(f) = &self.0 {
            f(t);
        }
    }

    /// A clock that marks both `self` and `other`.
    pub fn and(self, other: JobClock) -> JobClock {
        match (self.0, other.0) {
            (Some(a), Some(b)) => JobClock::new(move |t| {
                a(t);
                b(t);
            }),
            (a, b) => JobClock(a.or(b)),
        }
    }
}

/// One interval of the run, as the sampler saw it, for one kind of op.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the start of the run (ramp included): the interval's end.
    pub t_s: f64,
    /// Whether this interval lies in the ramp-up (excluded from the
    /// figures). Intervals end at the ramp's end, so none straddles it.
    pub ramp: bool,
    /// Ops of this kind completed in this interval.
    pub ops: u64,
    /// Bytes transferred in this interval.
    pub bytes: u64,
    /// Mean completion latency of this interval's ops, ns (0 when none).
    pub mean_latency_ns: f64,
    /// Ops in flight at the sample (every kind).
    pub in_flight: u64,
    /// Errors in this interval.
    pub errors: u64,
    /// Median completion latency of this interval's ops, ns (from the
    /// interval's own histogram, 3 significant digits; absent when none, or
    /// where no histogram was kept: merged group results, older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_latency_ns: Option<u64>,
    /// 99th percentile of this interval's ops, ns (as `p50_latency_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_latency_ns: Option<u64>,
    /// Slowest op of this interval, ns (exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<u64>,
}

/// The timeline's interval, s: the median gap between samples (the first
/// sample's gap from 0 counts), to 10 ms; 1 s without samples.
pub fn typical_interval(samples: &[Sample]) -> f64 {
    let mut prev = 0.0;
    let mut gaps: Vec<u64> = samples
        .iter()
        .map(|s| {
            let g = ((s.t_s - prev) * 100.0).round() as u64;
            prev = s.t_s;
            g
        })
        .collect();
    if gaps.is_empty() {
        return 1.0;
    }
    gaps.sort_unstable();
    gaps[gaps.len() / 2] as f64 / 100.0
}

/// Samples shorter than this (half the timeline's interval) are left out
/// of the per-interval figures: the job's last, partial interval (the
/// drain), whose few ops would show as a spike.
pub fn shortest_counted(samples: &[Sample]) -> f64 {
    typical_interval(samples) / 2.0
}

/// One phase's cumulative counts over every worker.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
struct Phase {
    ops: u64,
    bytes: u64,
    lat_sum_ns: u64,
    errors: u64,
}

impl Phase {
    fn minus(self, o: Phase) -> Phase {
        Phase {
            ops: self.ops - o.ops,
            bytes: self.bytes - o.bytes,
            lat_sum_ns: self.lat_sum_ns - o.lat_sum_ns,
            errors: self.errors - o.errors,
        }
    }

    fn plus(self, o: Phase) -> Phase {
        Phase {
            ops: self.ops + o.ops,
            bytes: self.bytes + o.bytes,
            lat_sum_ns: self.lat_sum_ns + o.lat_sum_ns,
            errors: self.errors + o.errors,
        }
    }
}

#[derive(Default, Clone, Copy, Debug)]
struct Totals {
    started: u64,
    finished: u64,
    last_lat_ns: u64,
    /// [ramp, measured][kind]
    phases: [[Phase; KINDS]; 2],
}

impl Totals {
    /// Every phase and kind.
    fn all(&self) -> Phase {
        self.phases
            .iter()
            .flatten()
            .fold(Phase::default(), |a, p| a.plus(*p))
    }
}

/// Adds one worker's counters into `t`.
fn add_counters(t: &mut Totals, c: &Counters) {
    t.started += c.started.load(Relaxed);
    t.finished += c.finished.load(Relaxed);
    t.last_lat_ns = t.last_lat_ns.max(c.last_lat_ns.load(Relaxed));
    for (p, pc) in t.phases.iter_mut().flatten().zip(c.phases.iter().flatten()) {
        p.ops += pc.ops.load(Relaxed);
        p.bytes += pc.bytes.load(Relaxed);
        p.lat_sum_ns += pc.lat_sum_ns.load(Relaxed);
        p.errors += pc.errors.load(Relaxed);
    }
}

/// When a job's samples are taken: every `interval`, aligned so that one
/// interval ends exactly where the ramp does (with a 2.5 s ramp and 1 s
/// intervals: at 0.5, 1.5, 2.5, 3.5 s, ...). The ramp's intervals are then
/// the first `ramp_ticks`, and no interval holds both ramp and measured ops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// The first sample's offset from the start.
    pub first: Duration,
    /// The interval.
    pub interval: Duration,
    /// How many samples lie in the ramp (the last of them ends at its end).
    pub ramp_ticks: usize,
}

impl Schedule {
    /// The schedule for a job with `ramp` and samples every `interval`.
    pub fn new(ramp: Duration, interval: Duration) -> Schedule {
        let interval = interval.max(Duration::from_millis(1));
        let rest = Duration::from_nanos((ramp.as_nanos() % interval.as_nanos()) as u64);
        let first = if rest.is_zero() { interval } else { rest };
        let ramp_ticks = if ramp.is_zero() {
            0
        } else {
            ((ramp - first).as_nanos() / interval.as_nanos()) as usize + 1
        };
        Schedule {
            first,
            interval,
            ramp_ticks,
        }
    }
}

/// One kind's part of a stored interval.
#[derive(Debug, Clone, Default, PartialEq)]
struct KindInterval {
    counts: Phase,
    latencies: PackedLatencies,
}

/// One stored interval of the timeline: one tick, or several merged.
#[derive(Debug, Clone, PartialEq)]
struct Interval {
    t_s: f64,
    ramp: bool,
    in_flight: u64,
    /// Ticks merged into it.
    ticks: u32,
    kinds: [KindInterval; KINDS],
}

impl Interval {
    /// Adds the later interval `o` (its end, its in-flight count).
    fn absorb(&mut self, o: &Interval) {
        self.t_s = o.t_s;
        self.in_flight = o.in_flight;
        self.ticks += o.ticks;
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.counts = a.counts.plus(b.counts);
            a.latencies.merge(&b.latencies);
        }
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .kinds
                .iter()
                .map(|k| k.latencies.bytes() - std::mem::size_of::<PackedLatencies>())
                .sum::<usize>()
    }
}

/// The stored intervals of a timeline, at most [`MAX_INTERVALS`] (or the
/// cap given): when one more would pass it, neighbours of the same phase
/// are merged in pairs and later ticks are merged in twos (fours, ...).
#[derive(Debug, Clone)]
struct Intervals {
    kept: Vec<Interval>,
    cap: usize,
    /// Ticks per stored interval now.
    width: u32,
}

impl Intervals {
    fn new(cap: usize) -> Self {
        Intervals {
            kept: Vec::new(),
            cap: cap.max(2),
            width: 1,
        }
    }

    fn push(&mut self, i: Interval) {
        if let Some(last) = self.kept.last_mut() {
            if last.ramp == i.ramp && last.ticks < self.width {
                last.absorb(&i);
                return;
            }
        }
        self.kept.push(i);
        if self.kept.len() > self.cap {
            self.coarsen();
        }
    }

    /// Merges neighbours of the same phase in pairs; doubles the width.
    fn coarsen(&mut self) {
        let mut out: Vec<Interval> = Vec::with_capacity(self.kept.len() / 2 + 2);
        let mut pending: Option<Interval> = None;
        for i in self.kept.drain(..) {
            match pending.take() {
                Some(mut p) if p.ramp == i.ramp => {
                    p.absorb(&i);
                    out.push(p);
                }
                Some(p) => {
                    out.push(p);
                    pending = Some(i);
                }
                None => pending = Some(i),
            }
        }
        out.extend(pending);
        self.kept = out;
        self.width *= 2;
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.kept.iter().map(Interval::bytes).sum::<usize>()
            + (self.kept.capacity() - self.kept.len()) * std::mem::size_of::<Interval>()
    }
}

/// The last job's measured figures so far, refreshed at each measured
/// tick: what a second interrupt, which exits at once, prints
/// ([`so_far_lines`]), also while the run reads the OSDs' counters, waits
/// for active+clean or removes its objects after the job. Cleared by
/// [`forget_so_far`] once the report is printed.
static SO_FAR: Mutex<Option<SoFar>> = Mutex::new(None);

/// A job's measured window up to its last tick.
#[derive(Debug, Clone, Copy)]
struct SoFar {
    measured_s: f64,
    totals: Phase,
    latency: crate::stats::LatencySummary,
}

fn set_so_far(s: Option<SoFar>) {
    *SO_FAR.lock().unwrap_or_else(PoisonError::into_inner) = s;
}

/// The report is out: a second interrupt from here has no results so far
/// to print in its place.
pub fn forget_so_far() {
    set_so_far(None);
}

/// The results so far of the last job, from its sampler's last measured
/// tick, as lines marked interrupted; `None` before any job's ramp ended,
/// or once the report is printed ([`forget_so_far`]).
pub fn so_far_lines() -> Option<Vec<String>> {
    let s = (*SO_FAR.lock().unwrap_or_else(PoisonError::into_inner))?;
    Some(lines_of(&s))
}

fn lines_of(s: &SoFar) -> Vec<String> {
    let t = s.totals;
    let per_s = |x: f64| {
        if s.measured_s > 0.0 {
            x / s.measured_s
        } else {
            0.0
        }
    };
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    let l = s.latency;
    vec![
        format!(
            "INTERRUPTED (a second interrupt): the results so far, the job's measured window up \
             to its last sample ({:.0} s), not a full report (no OSD telemetry, no cleanup)",
            s.measured_s
        ),
        format!(
            "  measured {:.3} s: {} ops (errors: {}), {:.1} IOPS, {:.3} MiB/s",
            s.measured_s,
            t.ops,
            t.errors,
            per_s(t.ops as f64),
            per_s(t.bytes as f64) / crate::units::MIB
        ),
        format!(
            "  latency, ms: min {}  mean {}  p50 {}  p99 {}  p99.9 {}  max {}",
            ms(l.min as f64),
            ms(l.mean),
            ms(l.p50 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
            ms(l.max as f64)
        ),
    ]
}

/// Samples the workers' counters and interval histograms on a [`Schedule`]
/// until stopped.
pub struct Sampler {
    counters: Vec<Arc<Counters>>,
    start: Instant,
    ramp_ticks: usize,
    print: bool,
    line: u64,
    ticks: usize,
    /// The previous tick's totals (the live line's current rate).
    prev: Totals,
    /// Cumulative counts at the last ramp tick / measured tick, per kind.
    ramp_prev: [Phase; KINDS],
    measured_prev: [Phase; KINDS],
    /// The swap partner of the workers' interval histograms (emptied).
    spare: IntervalLatencies,
    /// This interval's latencies over every worker; the measured half
    /// keeps adding up through the ramp's ticks (measured ops reaped before
    /// the ramp's last tick belong to the first measured interval).
    merged: IntervalLatencies,
    intervals: Intervals,
    steady: Option<SteadyWatch>,
    /// Every measured op's latency so far, and when the ramp's last tick
    /// was: the figures a second interrupt prints ([`so_far_lines`]).
    so_far: LatencyRecorder,
    ramp_end_s: f64,
    last: Option<SoFar>,
}

/// The sampler's steady-state watch: the last window's per-interval figures.
struct SteadyWatch {
    criterion: crate::steady::Criterion,
    ticks: usize,
    figures: std::collections::VecDeque<f64>,
    interval_s: f64,
    prev_t_s: f64,
    verdict: crate::steady::Verdict,
}

impl Sampler {
    /// A sampler over `counters` whose first `ramp_ticks` samples are the
    /// ramp's ([`Schedule::ramp_ticks`]); prints a line per sample to
    /// stderr if `print`.
    pub fn new(
        counters: Vec<Arc<Counters>>,
        start: Instant,
        ramp_ticks: usize,
        print: bool,
    ) -> Self {
        Self::with_cap(counters, start, ramp_ticks, print, MAX_INTERVALS)
    }

    /// As [`Sampler::new`], keeping at most `cap` intervals.
    pub fn with_cap(
        counters: Vec<Arc<Counters>>,
        start: Instant,
        ramp_ticks: usize,
        print: bool,
        cap: usize,
    ) -> Self {
        Sampler {
            counters,
            start,
            ramp_ticks,
            print,
            line: 0,
            ticks: 0,
            prev: Totals::default(),
            ramp_prev: Default::default(),
            measured_prev: Default::default(),
            spare: Default::default(),
            merged: Default::default(),
            intervals: Intervals::new(cap),
            steady: None,
            so_far: LatencyRecorder::new(),
            ramp_end_s: 0.0,
            last: None,
        }
    }

    /// Watches for steady state: after each measured tick, `criterion` over
    /// the last `window` of intervals (`interval` long, at least two); once
    /// it holds, every worker is asked to stop.
    pub fn watch_steady(
        &mut self,
        criterion: crate::steady::Criterion,
        window: Duration,
        interval: Duration,
    ) {
        let ticks = (window.as_secs_f64() / interval.as_secs_f64())
            .round()
            .max(2.0) as usize;
        self.steady = Some(SteadyWatch {
            criterion,
            ticks,
            figures: std::collections::VecDeque::with_capacity(ticks + 1),
            interval_s: interval.as_secs_f64(),
            prev_t_s: 0.0,
            verdict: crate::steady::Verdict {
                attained: false,
                at_s: None,
                last: None,
            },
        });
    }

    /// Where the job stood against `--steady`, if watched.
    pub fn steady_verdict(&self) -> Option<crate::steady::Verdict> {
        self.steady.as_ref().map(|w| w.verdict)
    }

    /// Feeds the steady watch one measured interval (every op kind).
    fn watch(&mut self, t_s: f64, kinds: &[KindInterval; KINDS]) {
        let Some(w) = self.steady.as_mut() else {
            return;
        };
        let dt = t_s - std::mem::replace(&mut w.prev_t_s, t_s);
        // A short interval (the drain's last) says nothing of the rate.
        if w.verdict.attained || dt < w.interval_s / 2.0 {
            return;
        }
        let all = kinds.iter().fold(Phase::default(), |a, k| a.plus(k.counts));
        let figure = match w.criterion.metric {
            crate::steady::Metric::Iops => all.ops as f64 / dt,
            crate::steady::Metric::Lat if all.ops > 0 => {
                all.lat_sum_ns as f64 / all.ops as f64 / 1e6
            }
            // No op completed: no latency this interval; the window waits.
            crate::steady::Metric::Lat => return,
        };
        w.figures.push_back(figure);
        if w.figures.len() > w.ticks {
            w.figures.pop_front();
        }
        if w.figures.len() < w.ticks {
            return;
        }
        let check = w.criterion.check(w.figures.make_contiguous(), w.interval_s);
        w.verdict.last = Some(check);
        if check.steady {
            w.verdict.attained = true;
            w.verdict.at_s = Some(t_s);
            for c in &self.counters {
                c.stop.store(true, Relaxed);
            }
        }
    }

    /// Takes one sample now: each worker's counts and interval histograms,
    /// read together under that worker's lock.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let mut t = Totals::default();
        for c in &self.counters {
            let mut lat = c.interval.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::swap(&mut *lat, &mut self.spare);
            add_counters(&mut t, c);
            drop(lat);
            for (m, taken) in self
                .merged
                .iter_mut()
                .flatten()
                .zip(self.spare.iter_mut().flatten())
            {
                if taken.count() > 0 {
                    m.merge(taken);
                    taken.reset();
                }
            }
        }
        let t_s = now.duration_since(self.start).as_secs_f64();
        let in_flight = t.started - t.finished;
        let ramp = self.ticks < self.ramp_ticks;
        if self.print {
            self.print_line(t_s, in_flight, &t, ramp);
        }
        let phase = usize::from(!ramp);
        if ramp {
            self.ramp_end_s = t_s;
        } else {
            for m in &self.merged[1] {
                self.so_far.merge(m);
            }
            let totals = t.phases[1].iter().fold(Phase::default(), |a, p| a.plus(*p));
            self.last = Some(SoFar {
                measured_s: t_s - self.ramp_end_s,
                totals,
                latency: self.so_far.summary(),
            });
            set_so_far(self.last);
        }
        let kinds = std::array::from_fn(|k| {
            let cum = t.phases[phase][k];
            let prev = if ramp {
                &mut self.ramp_prev[k]
            } else {
                &mut self.measured_prev[k]
            };
            let counts = cum.minus(*prev);
            *prev = cum;
            let m = &mut self.merged[phase][k];
            let latencies = m.pack();
            m.reset();
            KindInterval { counts, latencies }
        });
        if !ramp {
            self.late_ramp_ops(&t);
            self.watch(t_s, &kinds);
        } else if let Some(w) = self.steady.as_mut() {
            w.prev_t_s = t_s;
        }
        self.intervals.push(Interval {
            t_s,
            ramp,
            in_flight,
            ticks: 1,
            kinds,
        });
        self.prev = t;
        self.ticks += 1;
    }

    /// Ramp ops reaped after the ramp's last tick: into the last ramp interval.
    fn late_ramp_ops(&mut self, t: &Totals) {
        let Some(last) = self.intervals.kept.iter_mut().rev().find(|i| i.ramp) else {
            return;
        };
        for (k, part) in last.kinds.iter_mut().enumerate() {
            let cum = t.phases[0][k];
            let late = cum.minus(self.ramp_prev[k]);
            self.ramp_prev[k] = cum;
            part.counts = part.counts.plus(late);
            let m = &mut self.merged[0][k];
            if m.count() > 0 {
                part.latencies.merge(&m.pack());
                m.reset();
            }
        }
    }

    /// Intervals kept now (after any merging).
    pub fn kept(&self) -> usize {
        self.intervals.kept.len()
    }

    /// Bytes the kept intervals take in memory.
    pub fn kept_bytes(&self) -> usize {
        self.intervals.bytes()
    }

    fn print_line(&mut self, t_s: f64, in_flight: u64, t: &Totals, ramp: bool) {
        let prev = self.prev.all();
        let mut err = std::io::stderr().lock();
        if self.line % 20 == 0 {
            let _ = writeln!(
                err,
                "{:>5} {:>7} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}",
                "sec",
                "Cur ops",
                "started",
                "finished",
                "avg MiB/s",
                "cur MiB/s",
                "last lat(ms)",
                "avg lat(ms)"
            );
        }
        self.line += 1;
        let mib = (1u64 << 20) as f64;
        let all = t.all();
        let avg_bw = all.bytes as f64 / mib / t_s.max(1e-9);
        let avg_lat = if all.ops > 0 {
            all.lat_sum_ns as f64 / all.ops as f64 / 1e6
        } else {
            0.0
        };
        let ramp = if ramp { " (ramp)" } else { "" };
        let _ = writeln!(
            err,
            "{:>5} {:>7} {:>10} {:>10} {:>10.2} {:>10.2} {:>12.3} {:>12.3}{ramp}",
            t_s.round() as u64,
            in_flight,
            t.started,
            t.finished,
            avg_bw,
            (all.bytes - prev.bytes) as f64 / mib,
            t.last_lat_ns as f64 / 1e6,
            avg_lat,
        );
    }

    /// Each kind's samples ([`KINDS`], by the engine's `OpKind` index): the
    /// ramp's intervals from the ramp's counts (the last of them also holds
    /// ramp ops reaped after its tick), the measured intervals from the
    /// measured counts (the first also holds measured ops reaped before the
    /// ramp's last tick). A kind's measured samples add up to exactly the
    /// ops of that kind the job measured, and their histograms to the job's.
    pub fn into_samples(self) -> [Vec<Sample>; KINDS] {
        self.into_timelines().samples
    }

    /// [`Sampler::into_samples`], with each sample's histogram beside it.
    pub fn into_timelines(self) -> IntervalTimelines {
        let samples =
            std::array::from_fn(|k| self.intervals.kept.iter().map(|i| i.sample(k)).collect());
        let mut latencies: [Vec<PackedLatencies>; KINDS] = Default::default();
        for i in self.intervals.kept {
            for (k, part) in i.kinds.into_iter().enumerate() {
                latencies[k].push(part.latencies);
            }
        }
        IntervalTimelines { samples, latencies }
    }
}

/// Each kind's samples and, beside each, its interval's histogram (the
/// same intervals, in order; by the engine's `OpKind` index).
#[derive(Debug, Clone, Default)]
pub struct IntervalTimelines {
    /// One sample per stored interval.
    pub samples: [Vec<Sample>; KINDS],
    /// The latencies of each sample's ops.
    pub latencies: [Vec<PackedLatencies>; KINDS],
}

impl Interval {
    /// Kind `k`'s sample of this interval.
    fn sample(&self, k: usize) -> Sample {
        let part = &self.kinds[k];
        let d = part.counts;
        let (p50, p99, max) = if part.latencies.count() > 0 {
            let r = part.latencies.unpack();
            (
                Some(r.quantile(0.5)),
                Some(r.quantile(0.99)),
                Some(part.latencies.max()),
            )
        } else {
            (None, None, None)
        };
        Sample {
            t_s: self.t_s,
            ramp: self.ramp,
            ops: d.ops,
            bytes: d.bytes,
            mean_latency_ns: if d.ops > 0 {
                d.lat_sum_ns as f64 / d.ops as f64
            } else {
                0.0
            },
            in_flight: self.in_flight,
            errors: d.errors,
            p50_latency_ns: p50,
            p99_latency_ns: p99,
            max_latency_ns: max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(measured: bool) -> Done {
        Done {
            bytes: 4096,
            lat_ns: 1_000_000,
            measured,
            kind: 1,
        }
    }

    #[test]
    fn an_interval_ends_where_the_ramp_does() {
        let s =
            |ramp_ms: u64| Schedule::new(Duration::from_millis(ramp_ms), Duration::from_secs(1));
        let none = s(0);
        assert_eq!((none.first, none.ramp_ticks), (Duration::from_secs(1), 0));
        let three = s(3000);
        assert_eq!((three.first, three.ramp_ticks), (Duration::from_secs(1), 3));
        // 2.5 s: ticks at 0.5, 1.5, 2.5 (the ramp's three), 3.5, ...
        let half = s(2500);
        assert_eq!(
            (half.first, half.ramp_ticks),
            (Duration::from_millis(500), 3)
        );
        let short = s(300);
        assert_eq!(
            (short.first, short.ramp_ticks),
            (Duration::from_millis(300), 1)
        );
    }

    /// The measured samples add up to exactly the measured ops, whichever
    /// side of a tick an op near the ramp's end was reaped on; the ramp's
    /// samples hold the ramp's ops and nothing else.
    #[test]
    fn samples_split_exactly_at_the_ramp() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let mut s = Sampler::new(vec![Arc::clone(&c)], Instant::now(), 2, false);
        for _ in 0..10 {
            w.started();
            w.finished(done(false));
        }
        s.tick(); // ramp tick 1: 10 ramp ops
        for _ in 0..5 {
            w.started();
            w.finished(done(false));
        }
        // A measured op reaped before the ramp's last tick read (the tick ran late).
        w.started();
        w.finished(done(true));
        s.tick(); // ramp tick 2 (the ramp's end)
                  // A ramp op (completed before the ramp ended) reaped after that tick.
        w.started();
        w.finished(done(false));
        for _ in 0..7 {
            w.started();
            w.finished(done(true));
        }
        w.started();
        w.failed(1, true);
        s.tick();
        for _ in 0..3 {
            w.started();
            w.finished(done(true));
        }
        s.tick();
        let [reads, v, flushes] = s.into_samples();
        assert!(reads.iter().chain(&flushes).all(|x| x.ops == 0));
        let ops: Vec<(bool, u64, u64)> = v.iter().map(|x| (x.ramp, x.ops, x.errors)).collect();
        assert_eq!(
            ops,
            vec![(true, 10, 0), (true, 6, 0), (false, 8, 1), (false, 3, 0)]
        );
        let measured: u64 = v.iter().filter(|x| !x.ramp).map(|x| x.ops).sum();
        assert_eq!(measured, 11);
        assert_eq!(v[2].bytes, 8 * 4096);
    }

    /// A second interrupt prints the measured window so far, marked
    /// interrupted: the measured ops only (the ramp's left out, a measured
    /// op reaped before the ramp's last tick in), their errors, and the
    /// percentiles of every measured op so far, not of the last interval.
    #[test]
    fn a_second_interrupt_has_the_results_so_far() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let mut s = Sampler::new(vec![Arc::clone(&c)], Instant::now(), 1, false);
        let op = |w: &mut WorkerProgress, measured: bool, ms: u64| {
            w.started();
            w.finished(Done {
                bytes: 1 << 20,
                lat_ns: ms * 1_000_000,
                measured,
                kind: 1,
            });
        };
        for _ in 0..50 {
            op(&mut w, false, 500); // ramp ops: slow, and not in the figures
        }
        op(&mut w, true, 1);
        s.tick(); // the ramp's only tick
        assert!(s.last.is_none(), "nothing measured yet");
        // 99 ops of 1 ms so far (with the one above), then one of 200 ms in
        // a later interval: p99 over all of them is 1 ms, max 200 ms.
        for _ in 0..98 {
            op(&mut w, true, 1);
        }
        w.started();
        w.failed(1, true);
        s.tick();
        op(&mut w, true, 200);
        s.tick();
        let so_far = s.last.expect("measured ticks");
        assert_eq!((so_far.totals.ops, so_far.totals.errors), (100, 1));
        assert_eq!(so_far.totals.bytes, 100 << 20);
        let l = so_far.latency;
        assert_eq!((l.p50 / 100_000, l.p99 / 100_000), (10, 10), "{l:?}");
        assert_eq!(l.max / 1_000_000, 200, "{l:?}");
        let lines = lines_of(&so_far);
        assert!(lines[0].starts_with("INTERRUPTED"), "{lines:?}");
        assert!(lines[1].contains("100 ops (errors: 1)"), "{lines:?}");
        assert!(
            lines[2].contains("p99 1.00") && lines[2].contains("max 200."),
            "{lines:?}"
        );
    }

    /// Each kind has its own timeline: with a flush after every write
    /// (`--fsync-every 1`) the write samples count writes only, the flush
    /// samples flushes (no bytes).
    #[test]
    fn flushes_are_not_writes() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let mut s = Sampler::new(vec![Arc::clone(&c)], Instant::now(), 0, false);
        for _ in 0..4 {
            w.started();
            w.finished(done(true));
            w.started();
            w.finished(Done {
                bytes: 0,
                lat_ns: 9_000_000,
                measured: true,
                kind: 2,
            });
        }
        s.tick();
        let [_, writes, flushes] = s.into_samples();
        assert_eq!(
            (writes[0].ops, writes[0].bytes, writes[0].in_flight),
            (4, 4 * 4096, 0)
        );
        assert_eq!(writes[0].mean_latency_ns, 1e6);
        assert_eq!((flushes[0].ops, flushes[0].bytes), (4, 0));
        assert_eq!(flushes[0].mean_latency_ns, 9e6);
    }

    fn op(kind: usize, lat_ns: u64) -> Done {
        Done {
            bytes: 4096,
            lat_ns,
            measured: true,
            kind,
        }
    }

    /// Nearest-rank percentile over raw values: the independent reference.
    fn nearest_rank(v: &[u64], q: f64) -> u64 {
        let mut s = v.to_vec();
        s.sort_unstable();
        s[((q * s.len() as f64).ceil() as usize).max(1) - 1]
    }

    /// A deterministic spread of latencies around `base` ns with a slow tail.
    fn latencies(n: usize, base: u64, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = base / 2 + x % base;
                if i % 97 == 0 {
                    v * 30
                } else {
                    v
                }
            })
            .collect()
    }

    /// Each interval's p50, p99 and max are those of exactly that
    /// interval's ops, over two workers: equal to a histogram fed only
    /// those ops, within 0.1 % of the exact nearest-rank value, and the max
    /// exact.
    #[test]
    fn an_intervals_percentiles_are_those_of_its_own_ops() {
        let (c1, c2) = (Arc::new(Counters::default()), Arc::new(Counters::default()));
        let (mut w1, mut w2) = (
            WorkerProgress::new(Arc::clone(&c1)),
            WorkerProgress::new(Arc::clone(&c2)),
        );
        let mut s = Sampler::new(vec![c1, c2], Instant::now(), 0, false);
        // Interval 1 fast, 2 ten times slower, 3 empty, 4 mixed.
        let fed = [
            latencies(3000, 1_000_000, 1),
            latencies(2000, 10_000_000, 2),
            vec![],
            latencies(1001, 3_000_000, 3),
        ];
        for lats in &fed {
            for (i, &l) in lats.iter().enumerate() {
                let w = if i % 3 == 0 { &mut w1 } else { &mut w2 };
                w.started();
                w.finished(op(1, l));
            }
            s.tick();
        }
        let [reads, writes, _] = s.into_samples();
        assert!(reads.iter().all(|x| x.p99_latency_ns.is_none()));
        assert_eq!(writes.len(), 4);
        for (got, lats) in writes.iter().zip(&fed) {
            assert_eq!(got.ops, lats.len() as u64);
            if lats.is_empty() {
                assert_eq!(
                    (got.p50_latency_ns, got.p99_latency_ns, got.max_latency_ns),
                    (None, None, None)
                );
                continue;
            }
            let mut own = LatencyRecorder::new();
            lats.iter().for_each(|&l| own.record(l));
            assert_eq!(got.p50_latency_ns, Some(own.quantile(0.5)));
            assert_eq!(got.p99_latency_ns, Some(own.quantile(0.99)));
            assert_eq!(got.max_latency_ns, lats.iter().max().copied());
            for (q, v) in [(0.5, got.p50_latency_ns), (0.99, got.p99_latency_ns)] {
                let (v, want) = (v.unwrap() as f64, nearest_rank(lats, q) as f64);
                assert!((v - want).abs() <= want * 0.001, "q{q}: {v} vs {want}");
            }
            let mean = lats.iter().sum::<u64>() as f64 / lats.len() as f64;
            assert!((got.mean_latency_ns - mean).abs() < 1e-6 * mean);
        }
        let (a, b) = (&writes[0], &writes[1]);
        assert!(a.p50_latency_ns <= a.p99_latency_ns && a.p99_latency_ns <= a.max_latency_ns);
        assert!(b.p99_latency_ns > a.p99_latency_ns);
    }

    /// Across the ramp's end the histograms split as the counts do: a
    /// measured op reaped before the ramp's last tick is in the first
    /// measured interval's percentiles, a ramp op reaped after it in the
    /// last ramp interval's.
    #[test]
    fn interval_histograms_split_at_the_ramp_like_the_counts() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let mut s = Sampler::new(vec![Arc::clone(&c)], Instant::now(), 1, false);
        w.started();
        w.finished(Done {
            measured: false,
            ..op(1, 2_000_000)
        });
        w.started();
        w.finished(op(1, 90_000_000)); // measured, before the ramp's tick
        s.tick();
        w.started();
        w.finished(Done {
            measured: false,
            ..op(1, 70_000_000)
        }); // a ramp op reaped late
        w.started();
        w.finished(op(1, 1_000_000));
        s.tick();
        let [_, v, _] = s.into_samples();
        assert_eq!(
            (v[0].ramp, v[0].ops, v[0].max_latency_ns),
            (true, 2, Some(70_000_000))
        );
        assert_eq!(
            (v[1].ramp, v[1].ops, v[1].max_latency_ns),
            (false, 2, Some(90_000_000))
        );
    }

    /// An hour of 1 s intervals stays under the cap: pairs are
    /// merged exactly (the ops add up, the max is the job's, a merged
    /// interval's p99 is that of its ops), and the memory kept is bounded.
    #[test]
    fn a_long_run_keeps_bounded_memory() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let cap = 512;
        let mut s = Sampler::with_cap(vec![Arc::clone(&c)], Instant::now(), 0, false, cap);
        let mut job = LatencyRecorder::new();
        let (mut first8, mut fed, mut peak_bytes) = (Vec::new(), 0u64, 0usize);
        let ticks = 3600;
        for t in 0..ticks {
            // 500 ops a second around 1 ms (a few slower seconds).
            let base = if t % 600 == 0 { 20_000_000 } else { 1_000_000 };
            for l in latencies(500, base, t as u64 + 7) {
                w.started();
                w.finished(op(1, l));
                job.record(l);
                if t < 8 {
                    first8.push(l);
                }
                fed += 1;
            }
            s.tick();
            assert!(s.kept() <= cap);
            peak_bytes = peak_bytes.max(s.kept_bytes());
        }
        eprintln!(
            "one hour of 1 s intervals: {} kept, {} bytes, peak {peak_bytes}",
            s.kept(),
            s.kept_bytes()
        );
        // 512 intervals of a few hundred distinct latencies each: under 1 MiB.
        assert!(peak_bytes < 1 << 20, "{peak_bytes} bytes");
        let [_, v, _] = s.into_samples();
        assert!(v.len() <= cap && v.len() > cap / 4);
        assert_eq!(v.iter().map(|x| x.ops).sum::<u64>(), fed);
        let max = v.iter().filter_map(|x| x.max_latency_ns).max();
        assert_eq!(max, Some(job.summary().max));
        // 3,600 ticks under a cap of 512: 8 ticks an interval.
        assert_eq!(v[0].ops, 8 * 500);
        let mut own = LatencyRecorder::new();
        first8.iter().for_each(|&l| own.record(l));
        let x = first8;
        assert_eq!(v[0].p99_latency_ns, Some(own.quantile(0.99)));
        assert_eq!(v[0].max_latency_ns, x.iter().max().copied());
    }

    /// `--steady lat:10%`: the sampler asks the workers to stop at the
    /// first measured tick whose window of intervals meets the criterion,
    /// and not before the window is full.
    #[test]
    fn a_steady_window_asks_the_workers_to_stop() {
        let c = Arc::new(Counters::default());
        let mut w = WorkerProgress::new(Arc::clone(&c));
        let mut s = Sampler::new(vec![Arc::clone(&c)], Instant::now(), 0, false);
        let interval = Duration::from_millis(5);
        s.watch_steady(
            "lat:10%".parse().unwrap(),
            Duration::from_millis(15),
            interval,
        );
        // Mean latency 1, 2, 3 ms, then 3 ms on.
        for (i, ms) in [1, 2, 3, 3, 3, 3].into_iter().enumerate() {
            for _ in 0..50 {
                w.started();
                w.finished(op(1, ms * 1_000_000));
            }
            std::thread::sleep(interval);
            s.tick();
            let v = s.steady_verdict().unwrap();
            // Windows: [1,2,3] no; [2,3,3] no; [3,3,3] at tick 5.
            assert_eq!(v.attained, i >= 4, "tick {i}: {v:?}");
            assert_eq!(w.stop_requested(), i >= 4);
            assert_eq!(v.last.is_some(), i >= 2);
        }
    }
}
