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

/// Counters of one worker. Only that worker writes them.
#[derive(Debug, Default)]
pub struct Counters {
    started: AtomicU64,
    finished: AtomicU64,
    bytes: AtomicU64,
    lat_sum_ns: AtomicU64,
    last_lat_ns: AtomicU64,
    errors: AtomicU64,
}

/// The worker-side view: local tallies published with single-writer stores.
#[derive(Debug)]
pub struct WorkerProgress {
    shared: Arc<Counters>,
    started: u64,
    finished: u64,
    bytes: u64,
    lat_sum_ns: u64,
    errors: u64,
}

impl WorkerProgress {
    /// A new worker's counters, registered with the sampler's set.
    pub fn new(shared: Arc<Counters>) -> Self {
        WorkerProgress {
            shared,
            started: 0,
            finished: 0,
            bytes: 0,
            lat_sum_ns: 0,
            errors: 0,
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
    pub fn finished(&mut self, bytes: u64, lat_ns: u64) {
        self.finished += 1;
        self.bytes += bytes;
        self.lat_sum_ns += lat_ns;
        self.shared.bytes.store(self.bytes, Relaxed);
        self.shared.lat_sum_ns.store(self.lat_sum_ns, Relaxed);
        self.shared.last_lat_ns.store(lat_ns, Relaxed);
        self.shared.finished.store(self.finished, Relaxed);
    }

    /// One op failed.
    #[inline]
    pub fn failed(&mut self) {
        self.finished += 1;
        self.errors += 1;
        self.shared.errors.store(self.errors, Relaxed);
        self.shared.finished.store(self.finished, Relaxed);
    }
}

/// One second of the run, as the sampler saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the start of the run (ramp included).
    pub t_s: f64,
    /// Whether this second lies in the ramp-up (excluded from the figures).
    pub ramp: bool,
    /// Ops completed in this interval.
    pub ops: u64,
    /// Bytes transferred in this interval.
    pub bytes: u64,
    /// Mean completion latency of this interval's ops, ns (0 when none).
    pub mean_latency_ns: f64,
    /// Ops in flight at the sample.
    pub in_flight: u64,
    /// Errors in this interval.
    pub errors: u64,
}

#[derive(Default, Clone, Copy)]
struct Totals {
    started: u64,
    finished: u64,
    bytes: u64,
    lat_sum_ns: u64,
    last_lat_ns: u64,
    errors: u64,
}

fn totals(all: &[Arc<Counters>]) -> Totals {
    let mut t = Totals::default();
    for c in all {
        t.started += c.started.load(Relaxed);
        t.finished += c.finished.load(Relaxed);
        t.bytes += c.bytes.load(Relaxed);
        t.lat_sum_ns += c.lat_sum_ns.load(Relaxed);
        t.last_lat_ns = t.last_lat_ns.max(c.last_lat_ns.load(Relaxed));
        t.errors += c.errors.load(Relaxed);
    }
    t
}

/// Samples the workers' counters once a second until stopped.
pub struct Sampler {
    counters: Vec<Arc<Counters>>,
    start: Instant,
    ramp: Duration,
    print: bool,
    samples: Vec<Sample>,
    prev: Totals,
    line: u64,
}

impl Sampler {
    /// A sampler over `counters`; prints a line per second to stderr if `print`.
    pub fn new(counters: Vec<Arc<Counters>>, start: Instant, ramp: Duration, print: bool) -> Self {
        Sampler {
            counters,
            start,
            ramp,
            print,
            samples: Vec::new(),
            prev: Totals::default(),
            line: 0,
        }
    }

    /// Takes one sample now.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let t = totals(&self.counters);
        let elapsed = now.duration_since(self.start);
        let ops = t.finished - self.prev.finished - (t.errors - self.prev.errors);
        let bytes = t.bytes - self.prev.bytes;
        let lat = t.lat_sum_ns - self.prev.lat_sum_ns;
        let sample = Sample {
            t_s: elapsed.as_secs_f64(),
            ramp: elapsed <= self.ramp,
            ops,
            bytes,
            mean_latency_ns: if ops > 0 {
                lat as f64 / ops as f64
            } else {
                0.0
            },
            in_flight: t.started - t.finished,
            errors: t.errors - self.prev.errors,
        };
        if self.print {
            self.print_line(&sample, &t);
        }
        self.samples.push(sample);
        self.prev = t;
    }

    fn print_line(&mut self, s: &Sample, t: &Totals) {
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
        let avg_bw = t.bytes as f64 / mib / s.t_s.max(1e-9);
        let ok = t.finished - t.errors;
        let avg_lat = if ok > 0 {
            t.lat_sum_ns as f64 / ok as f64 / 1e6
        } else {
            0.0
        };
        let ramp = if s.ramp { " (ramp)" } else { "" };
        let _ = writeln!(
            err,
            "{:>5} {:>7} {:>10} {:>10} {:>10.2} {:>10.2} {:>12.3} {:>12.3}{ramp}",
            s.t_s.round() as u64,
            s.in_flight,
            t.started,
            t.finished,
            avg_bw,
            s.bytes as f64 / mib,
            t.last_lat_ns as f64 / 1e6,
            avg_lat,
        );
    }

    /// The samples taken so far.
    pub fn into_samples(self) -> Vec<Sample> {
        self.samples
    }
}
