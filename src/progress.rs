//! Live progress: per-worker counters the I/O path updates with plain
//! relaxed stores (one writer each, no locks), and a sampler that reads them
//! once a second to build the timeline and, on a terminal, print a
//! rados-bench-style line.
#![forbid(unsafe_code)]

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Counters of one worker. Only that worker writes them.
#[derive(Debug, Default)]
pub struct Counters {
    started: AtomicU64,
    finished: AtomicU64,
    last_lat_ns: AtomicU64,
    /// [ramp, measured][kind]
    phases: [[PhaseCounters; KINDS]; 2],
}

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
        let (t, c) = (&mut self.phases[p][k], &self.shared.phases[p][k]);
        t.ops += 1;
        t.bytes += d.bytes;
        t.lat_sum_ns += d.lat_ns;
        c.bytes.store(t.bytes, Relaxed);
        c.lat_sum_ns.store(t.lat_sum_ns, Relaxed);
        c.ops.store(t.ops, Relaxed);
        self.shared.last_lat_ns.store(d.lat_ns, Relaxed);
        self.shared.finished.store(self.finished, Relaxed);
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

/// One interval of the run, as the sampler saw it, for one kind of op.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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

fn totals(all: &[Arc<Counters>]) -> Totals {
    let mut t = Totals::default();
    for c in all {
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
    t
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

/// What one tick read: the cumulative counts at that moment.
#[derive(Debug, Clone, Copy)]
struct Tick {
    t_s: f64,
    in_flight: u64,
    totals: Totals,
}

/// Samples the workers' counters on a [`Schedule`] until stopped.
pub struct Sampler {
    counters: Vec<Arc<Counters>>,
    start: Instant,
    ramp_ticks: usize,
    print: bool,
    ticks: Vec<Tick>,
    line: u64,
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
        Sampler {
            counters,
            start,
            ramp_ticks,
            print,
            ticks: Vec::new(),
            line: 0,
        }
    }

    /// Takes one sample now.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let t = totals(&self.counters);
        let tick = Tick {
            t_s: now.duration_since(self.start).as_secs_f64(),
            in_flight: t.started - t.finished,
            totals: t,
        };
        if self.print {
            let ramp = self.ticks.len() < self.ramp_ticks;
            let prev = self
                .ticks
                .last()
                .map(|p| p.totals.all())
                .unwrap_or_default();
            self.print_line(&tick, prev, ramp);
        }
        self.ticks.push(tick);
    }

    fn print_line(&mut self, tick: &Tick, prev: Phase, ramp: bool) {
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
        let (t, all) = (&tick.totals, tick.totals.all());
        let avg_bw = all.bytes as f64 / mib / tick.t_s.max(1e-9);
        let avg_lat = if all.ops > 0 {
            all.lat_sum_ns as f64 / all.ops as f64 / 1e6
        } else {
            0.0
        };
        let ramp = if ramp { " (ramp)" } else { "" };
        let _ = writeln!(
            err,
            "{:>5} {:>7} {:>10} {:>10} {:>10.2} {:>10.2} {:>12.3} {:>12.3}{ramp}",
            tick.t_s.round() as u64,
            tick.in_flight,
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
    /// ops of that kind the job measured.
    pub fn into_samples(self) -> [Vec<Sample>; KINDS] {
        let last = self.ticks.last().map(|t| t.totals).unwrap_or_default();
        std::array::from_fn(|k| {
            let mut out = Vec::with_capacity(self.ticks.len());
            let mut prev = Phase::default();
            for (i, tick) in self.ticks.iter().enumerate() {
                let ramp = i < self.ramp_ticks;
                let cum = if !ramp {
                    tick.totals.phases[1][k]
                } else if i + 1 == self.ramp_ticks {
                    last.phases[0][k]
                } else {
                    tick.totals.phases[0][k]
                };
                if i == self.ramp_ticks {
                    prev = Phase::default();
                }
                let d = cum.minus(prev);
                prev = cum;
                out.push(Sample {
                    t_s: tick.t_s,
                    ramp,
                    ops: d.ops,
                    bytes: d.bytes,
                    mean_latency_ns: if d.ops > 0 {
                        d.lat_sum_ns as f64 / d.ops as f64
                    } else {
                        0.0
                    },
                    in_flight: tick.in_flight,
                    errors: d.errors,
                });
            }
            out
        })
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
}
