//! `cephbench watch`: a canary that runs until stopped, timing a few real
//! client ops per second on each pool and exporting them for Prometheus.
//!
//! Each pool gets, at `--rate` ops per second, a 4 KiB whole-object write
//! and then a read of it back, in turn over a fixed set of `--objects`
//! objects of its own (`cephbench_data.watch-<host>.N`, with a metadata
//! object, so `cephbench cleanup` finds them), overwritten in place: the
//! pool's space never grows. A read is checked against the last write of
//! its object: a short or different read is a failure, not a latency.
//!
//! One op is in flight per pool and an op is never abandoned: each is bounded
//! by `rados_osd_op_timeout` (`--op-timeout`), and a timed-out op counts
//! as such. The ops' primary OSD (the `osd` label) comes from the pool's
//! placement, read by a thread of its own each interval (off the I/O
//! path); that read is also the cluster-connection gauge.
//!
//! The metrics ([`metrics::Metrics`]) sit behind one mutex, taken after
//! each op completes and by the `/metrics` thread: at a canary's rate there
//! is nothing to contend for.
//!
//! Beside the ops, a probe thread ([`probe`]) times the round trip to each
//! primary of the canary's objects, reads those OSDs' own counters and
//! splits each series' mean, labelled as resting on the OSDs' counters over
//! all their traffic (on a busy cluster the canary is a sliver of it). The
//! logger keeps the last hour of intervals per pool and op and runs the
//! change detector of a run ([`crate::explain::changes`]) over them: a
//! lasting change is logged once and counted.
#![forbid(unsafe_code)]

pub mod metrics;
pub mod probe;
pub mod serve;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

use crate::ceph::{CephError, IoCtx, Rados};
use crate::objects::{self, RunMeta};
use crate::placement::PoolPlacement;
use metrics::{Failure, Metrics, Op};

/// What `watch` was asked to do.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The pools.
    pub pools: Vec<String>,
    /// Ops per second per pool (writes and reads in turn).
    pub rate: f64,
    /// Objects per pool.
    pub objects: u32,
    /// Bytes per object (each write replaces it whole).
    pub block_size: usize,
    /// How often the placement is read and a line logged.
    pub interval: Duration,
    /// Where `/metrics` is served.
    pub listen: SocketAddr,
    /// The RADOS namespace of the objects.
    pub namespace: String,
    /// Leave the objects in place on exit (a restart reuses them).
    pub keep_objects: bool,
    /// How to connect the placement and probe connection anew when the
    /// mons have not answered it for [`RECONNECT_AFTER`] (`None`: never).
    pub reconnect: Option<crate::ceph::ConnectOptions>,
}

/// How long the mons may not answer the placement read before that
/// connection is made anew (and again at most this often): a librados
/// client whose mon session was refused (a key's caps revoked, then the
/// mon restarted) does not come back by itself, even once the caps are
/// restored (measured on pacific: 60 s and no answer).
pub const RECONNECT_AFTER: Duration = Duration::from_secs(15);

/// The connection the placement read and the probe use, replaced whole
/// when it is made anew.
pub type TelemetrySlot = Arc<Mutex<Rados>>;

fn current(slot: &TelemetrySlot) -> Rados {
    slot.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Why `watch` could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The metrics address could not be bound.
    #[error(
        "--listen {addr}: {source} (pick a free address; the mgr's prometheus module has 9283)"
    )]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Another watch of this host runs on the pool.
    #[error(
        "pool '{pool}' is already watched from this host by cephbench pid {pid}: stop it, or give \
         this one another -N namespace"
    )]
    Busy {
        /// The pool.
        pool: String,
        /// The other watch's pid.
        pid: u32,
    },
    /// A cluster call failed where watch cannot go on (at the start).
    #[error(transparent)]
    Ceph(#[from] CephError),
    /// The run's metadata could not be read.
    #[error(transparent)]
    Bench(#[from] crate::bench::BenchError),
}

/// The run name of this host's watch: its objects are
/// `cephbench_data.watch-<host>.N`.
pub fn run_name() -> String {
    format!(
        "watch-{}",
        crate::names::host_token(&crate::names::hostname())
    )
}

/// The canary's `objects` object names of run `run` (the same in every pool).
fn object_names(run: &str, objects: u32) -> Vec<String> {
    (0..objects)
        .map(|i| format!("{}{i}", objects::data_prefix(run)))
        .collect()
}

/// What a watch did, for its last lines.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Per pool: ops that completed, ops that failed.
    pub pools: Vec<(String, u64, u64)>,
    /// Objects removed on the way out.
    pub removed: u64,
}

/// The Unix time now, seconds.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Whether `pid` runs cephbench on this host.
fn cephbench_runs(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim() == "cephbench")
}

/// Runs the canary until `stop` turns true; `log` gets its lines (the
/// address served, one line per pool each interval, state changes).
pub async fn run(
    rados: &Rados,
    cfg: &WatchConfig,
    stop: watch::Receiver<bool>,
    log: impl Fn(&str),
) -> Result<Summary, WatchError> {
    let run = run_name();
    let ios = open_pools(rados, cfg, &run).await?;
    let metrics = Arc::new(Mutex::new(Metrics::new(
        env!("CARGO_PKG_VERSION"),
        &crate::ceph::librados_version(),
        &cfg.pools,
    )));
    let addr =
        serve::start(cfg.listen, Arc::clone(&metrics)).map_err(|source| WatchError::Listen {
            addr: cfg.listen,
            source,
        })?;
    log(&format!(
        "serving http://{addr}/metrics; {} op/s on each of {} pool(s), {} objects of {} B each \
         (`cephbench cleanup -p POOL --run-name {run}` removes them)",
        cfg.rate,
        cfg.pools.len(),
        cfg.objects,
        cfg.block_size
    ));
    let placements: Arc<Mutex<BTreeMap<String, PoolPlacement>>> = Arc::default();
    let slot: TelemetrySlot = Arc::new(Mutex::new(rados.telemetry().clone()));
    // The first read before the first op, so that every op has its OSD.
    refresh(rados.telemetry(), &cfg.pools, &placements, &metrics);
    let done = Arc::new(AtomicBool::new(false));
    let mut refresher = Refresher {
        slot: Arc::clone(&slot),
        reconnect: cfg.reconnect.clone(),
        pools: cfg.pools.clone(),
        placements: Arc::clone(&placements),
        metrics: Arc::clone(&metrics),
        answered_at: Instant::now(),
        tried_at: Instant::now(),
    };
    let refresher = every(
        "cephbench-placement",
        cfg.interval,
        Arc::clone(&done),
        move || refresher.step(),
    );
    // A down OSD's counters wait out the op timeout on the probe's thread,
    // holding up neither the ops nor the placement read. Its first read
    // gives the counters' base; the split follows from the second on.
    let mut prober = probe::Prober::new(
        Arc::clone(&slot),
        &cfg.namespace,
        object_names(&run, cfg.objects),
        cfg.block_size,
    );
    let (probe_placements, probe_metrics) = (Arc::clone(&placements), Arc::clone(&metrics));
    let prober = every(
        "cephbench-probe",
        cfg.interval,
        Arc::clone(&done),
        move || {
            let now = probe_placements
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            prober.probe(&now, &probe_metrics);
        },
    );
    let shared = Shared {
        rados,
        slot: &slot,
        cfg,
        run: &run,
        metrics: &metrics,
        placements: &placements,
    };
    let loops = ios
        .into_iter()
        .map(|io| pool_loop(&shared, io, stop.clone()));
    let logger = log_intervals(&metrics, cfg.interval, stop.clone(), &log);
    let (results, ()) = tokio::join!(futures_util::future::join_all(loops), logger);
    done.store(true, Ordering::Relaxed);
    let _ = refresher.map(std::thread::JoinHandle::join);
    let _ = prober.map(std::thread::JoinHandle::join);
    Ok(wind_up(&results, &metrics, cfg, &run, &log).await)
}

/// Every pool opened and claimed before anything is served: a pool that a
/// live watch of this host holds is refused.
async fn open_pools(rados: &Rados, cfg: &WatchConfig, run: &str) -> Result<Vec<IoCtx>, WatchError> {
    let mut ios = Vec::new();
    for pool in &cfg.pools {
        let mut io = rados.ioctx(pool)?;
        io.set_namespace(&cfg.namespace)?;
        if let Some(m) = crate::bench::read_meta(&io, run).await? {
            if m.host == crate::names::hostname() && cephbench_runs(m.pid) {
                return Err(WatchError::Busy {
                    pool: pool.clone(),
                    pid: m.pid,
                });
            }
        }
        ios.push(io);
    }
    Ok(ios)
}

/// Each pool's ops and failures, and (unless kept) its objects removed.
async fn wind_up(
    results: &[(IoCtx, u64)],
    metrics: &Mutex<Metrics>,
    cfg: &WatchConfig,
    run: &str,
    log: &impl Fn(&str),
) -> Summary {
    let mut summary = Summary::default();
    for (io, ops) in results {
        let ops = *ops;
        let failed = metrics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .failures_of(io.pool_name());
        summary
            .pools
            .push((io.pool_name().to_string(), ops, failed));
        if !cfg.keep_objects {
            let mut names = object_names(run, cfg.objects);
            names.push(objects::meta_name(run));
            match crate::bench::remove_objects(io, names, 8).await {
                Ok(n) => summary.removed += n,
                Err(e) => log(&format!(
                    "pool '{}': its objects were not all removed ({e}): `cephbench cleanup -p {} \
                     --run-name {run}`",
                    io.pool_name(),
                    io.pool_name()
                )),
            }
        }
    }
    summary
}

/// Reads each pool's placement into `placements`; the connection gauge
/// follows whether the cluster answered (a pool that is gone is an answer).
fn refresh(
    rados: &Rados,
    pools: &[String],
    placements: &Mutex<BTreeMap<String, PoolPlacement>>,
    metrics: &Mutex<Metrics>,
) -> bool {
    let (mut answered, mut why) = (false, None);
    for pool in pools {
        let got = crate::telemetry::cluster::placement(rados, pool);
        let mut map = placements.lock().unwrap_or_else(PoisonError::into_inner);
        match got {
            Ok(p) => {
                answered = true;
                map.insert(pool.clone(), p);
            }
            Err(crate::telemetry::cluster::ProbeError::Ceph(e))
                if e.errno() == Some(libc::ENOENT) =>
            {
                answered = true;
                map.remove(pool);
            }
            Err(e) => why = Some(e.to_string()),
        }
    }
    metrics
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .set_connected(answered, why);
    answered
}

/// `step` now and then every `interval` on a thread named `name`, until
/// `done` (each its own thread: a slow step holds up no other).
fn every(
    name: &str,
    interval: Duration,
    done: Arc<AtomicBool>,
    mut step: impl FnMut() + Send + 'static,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || loop {
            let started = Instant::now();
            step();
            // Sleep out the interval in short steps, so the end is prompt.
            while !done.load(Ordering::Relaxed) && started.elapsed() < interval {
                std::thread::sleep(Duration::from_millis(100));
            }
            if done.load(Ordering::Relaxed) {
                return;
            }
        })
        .ok()
}

/// The placement read ([`refresh`]), once an interval; the connection made
/// anew (`reconnect`) when the mons have not answered it for
/// [`RECONNECT_AFTER`].
struct Refresher {
    slot: TelemetrySlot,
    reconnect: Option<crate::ceph::ConnectOptions>,
    pools: Vec<String>,
    placements: Arc<Mutex<BTreeMap<String, PoolPlacement>>>,
    metrics: Arc<Mutex<Metrics>>,
    answered_at: Instant,
    tried_at: Instant,
}

impl Refresher {
    fn step(&mut self) {
        if refresh(
            &current(&self.slot),
            &self.pools,
            &self.placements,
            &self.metrics,
        ) {
            self.answered_at = Instant::now();
            return;
        }
        let Some(opts) = &self.reconnect else { return };
        if self.answered_at.elapsed() < RECONNECT_AFTER || self.tried_at.elapsed() < RECONNECT_AFTER
        {
            return;
        }
        self.tried_at = Instant::now();
        let silent = self.answered_at.elapsed().as_secs();
        let outcome = match Rados::connect(opts) {
            Ok(fresh) => {
                *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = fresh;
                format!(
                    "the mons had not answered for {silent} s: connected anew as {}",
                    opts.entity
                )
            }
            Err(e) => {
                format!("the mons had not answered for {silent} s; connecting anew failed ({e})")
            }
        };
        self.metrics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .reconnected(outcome);
    }
}

/// The first seconds of a watch are not fed to the change detector.
const WARM_S: f64 = 30.0;

/// Intervals of history the change detector looks at, per pool and op.
const CHANGE_HISTORY: usize = 360;

/// The lasting changes of one pool and op's latency, from its intervals.
#[derive(Default)]
struct ChangeWatch {
    /// The last [`CHANGE_HISTORY`] intervals: their index since the start
    /// and their figures.
    intervals: std::collections::VecDeque<(u64, metrics::IntervalLine)>,
    /// The interval index of the last change reported.
    reported: Option<u64>,
}

impl ChangeWatch {
    /// Adds interval `k` and returns a new lasting change, in words with its
    /// direction (`true`: slower), if one is found. A change is reported
    /// once: a later one must begin at least a detector's segment after it;
    /// it is reported two segments after its start.
    fn push(&mut self, k: u64, line: metrics::IntervalLine, secs: f64) -> Option<(String, bool)> {
        self.intervals.push_back((k, line));
        while self.intervals.len() > CHANGE_HISTORY {
            self.intervals.pop_front();
        }
        let first = self.intervals.front()?.0;
        // The window's own clock (its first interval ends at `secs`), so
        // that the detector's first interval is as long as the others.
        let samples: Vec<crate::progress::Sample> = self
            .intervals
            .iter()
            .map(|(k, l)| crate::progress::Sample {
                t_s: (k - first + 1) as f64 * secs,
                ramp: false,
                ops: l.ops,
                bytes: 0,
                mean_latency_ns: l.mean_ns,
                in_flight: 1,
                errors: 0,
                p50_latency_ns: (l.ops > 0).then_some(l.p50_ns),
                p99_latency_ns: (l.ops > 0).then_some(l.p99_ns),
                max_latency_ns: (l.ops > 0).then_some(l.max_ns),
            })
            .collect();
        let changes = crate::explain::changes::job_changes(&samples, &[], None)?;
        let c = changes.last()?;
        let at = first + (c.t_s / secs).round() as u64;
        let segment = crate::explain::changes::MIN_SEGMENT as u64;
        // Placed once it has two segments after it: with one, the
        // smoothing at the window's end places it an interval or two early.
        if k < at + 2 * segment || self.reported.is_some_and(|r| at < r + segment) {
            return None;
        }
        self.reported = Some(at);
        let ms = |ns: f64| crate::units::ms_prose(ns);
        let (b, a) = (&c.before, &c.after);
        let slower = a.p99_ns.unwrap_or(a.mean_ns) > b.p99_ns.unwrap_or(b.mean_ns);
        let p99 = match (b.p99_ns, a.p99_ns) {
            (Some(x), Some(y)) => format!("p99 {} → {} ms, ", ms(x), ms(y)),
            _ => String::new(),
        };
        Some((
            format!(
                "a lasting change from {:.0} s after the start: {p99}mean {} → {} ms ({})",
                at as f64 * secs,
                ms(b.mean_ns),
                ms(a.mean_ns),
                if slower { "slower" } else { "faster" }
            ),
            slower,
        ))
    }
}

/// Logs each pool's interval every `interval` until `stop`.
async fn log_intervals(
    metrics: &Mutex<Metrics>,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
    log: &impl Fn(&str),
) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    let mut failed_before: BTreeMap<String, u64> = BTreeMap::new();
    let mut watches: BTreeMap<(String, Op), ChangeWatch> = BTreeMap::new();
    let mut k = 0u64;
    let mut last_note: Option<String> = None;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let (lines, up, why, note, failed) = {
            let mut m = metrics.lock().unwrap_or_else(PoisonError::into_inner);
            let failed: BTreeMap<String, u64> = m
                .pool_names()
                .into_iter()
                .map(|p| {
                    let n = m.failures_of(&p);
                    (p, n)
                })
                .collect();
            (
                m.take_interval(),
                m.connected(),
                m.not_connected_why().map(str::to_string),
                m.probe_note().map(str::to_string),
                failed,
            )
        };
        let ms = |ns: u64| crate::units::ms_prose(ns as f64);
        for (pool, n) in &failed {
            let ops: Vec<String> = lines
                .iter()
                .filter(|l| &l.pool == pool)
                .map(|l| {
                    format!(
                        "{} {} ops, p50 {} ms, p99 {} ms",
                        l.op.label(),
                        l.ops,
                        ms(l.p50_ns),
                        ms(l.p99_ns)
                    )
                })
                .collect();
            let new = n - failed_before.get(pool).copied().unwrap_or(0);
            let ops = if ops.is_empty() {
                "no op completed".to_string()
            } else {
                ops.join("; ")
            };
            let failures = if new > 0 {
                format!("; {new} failed")
            } else {
                String::new()
            };
            log(&format!("pool '{pool}': {ops}{failures}"));
        }
        if !up {
            log(&format!(
                "the cluster did not answer the placement read ({}): cephbench_watch_up is 0",
                why.as_deref().unwrap_or("no answer")
            ));
        }
        let events = metrics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take_events();
        for e in &events {
            log(e);
        }
        // The probe's trouble, once each time it changes.
        if note != last_note {
            if let Some(n) = &note {
                log(n);
            }
            last_note = note;
        }
        // Each pool and op's interval, also one without ops (a stall).
        for pool in failed.keys() {
            for op in [Op::Write, Op::Read] {
                let line = lines
                    .iter()
                    .find(|l| &l.pool == pool && l.op == op)
                    .cloned()
                    .unwrap_or(metrics::IntervalLine {
                        pool: pool.clone(),
                        op,
                        ops: 0,
                        mean_ns: 0.0,
                        p50_ns: 0,
                        p99_ns: 0,
                        max_ns: 0,
                    });
                // The first intervals hold the objects' first writes
                // (creating them): a start, not a change.
                if (k as f64) * interval.as_secs_f64() < WARM_S {
                    continue;
                }
                let w = watches.entry((pool.clone(), op)).or_default();
                if let Some((words, slower)) = w.push(k, line, interval.as_secs_f64()) {
                    log(&format!("pool '{pool}' {}: {words}", op.label()));
                    metrics
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .count_change(pool, op, slower);
                }
            }
        }
        k += 1;
        failed_before = failed;
    }
}

/// After this many failed ops in a row a pool's canary looks (once an
/// interval) whether the pool was made anew under its name, and opens that.
const REOPEN_AFTER: u32 = 3;

/// What every pool's canary shares: the connection, the settings, the run's
/// name and the tables it reads and writes.
struct Shared<'a> {
    rados: &'a Rados,
    slot: &'a TelemetrySlot,
    cfg: &'a WatchConfig,
    run: &'a str,
    metrics: &'a Mutex<Metrics>,
    placements: &'a Mutex<BTreeMap<String, PoolPlacement>>,
}

/// One pool's canary until `stop`: every object written once, then a write
/// and a read in turn at the pool's rate. A pool deleted and made again
/// under the same name is taken up again (its objects written anew).
/// Returns its I/O context (no op in flight) and the ops that completed.
async fn pool_loop(sh: &Shared<'_>, io: IoCtx, mut stop: watch::Receiver<bool>) -> (IoCtx, u64) {
    let mut canary = PoolCanary::new(sh, io);
    let period = Duration::from_secs_f64(1.0 / sh.cfg.rate);
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return (canary.io, canary.done),
        }
        canary.step().await;
    }
}

/// An op's completion as the library gave it: its return value and when
/// its callback ran.
type Outcome = Result<(i64, Instant), CephError>;

/// One pool's canary: its objects, the stamps they hold, the buffers its
/// ops reuse and where it is in its round.
struct PoolCanary<'a> {
    sh: &'a Shared<'a>,
    io: IoCtx,
    pool: String,
    /// Each object's name, and as the library takes it.
    names: Vec<(String, CString)>,
    pattern: Vec<u8>,
    data: Vec<u8>,
    read_buf: Vec<u8>,
    /// The stamp each object holds (its last write's sequence number).
    stamps: Vec<Option<u64>>,
    meta: RunMeta,
    meta_written: bool,
    /// The last write's sequence number.
    seq: u64,
    /// Ops that completed.
    done: u64,
    /// The next op and its object. Writes go first through every object
    /// (`warm` after), then a write and a read of each in turn.
    next: (usize, Op),
    warm: bool,
    /// Ops failed in a row.
    failing: u32,
    /// When the pool was last looked up anew, after failures.
    looked: Instant,
    /// When the placement was last read for an op without an OSD.
    reread: Instant,
}

impl<'a> PoolCanary<'a> {
    fn new(sh: &'a Shared<'a>, io: IoCtx) -> Self {
        let cfg = sh.cfg;
        let names: Vec<(String, CString)> = object_names(sh.run, cfg.objects)
            .into_iter()
            .map(|n| {
                let c = CString::new(n.clone()).expect("our names have no NUL");
                (n, c)
            })
            .collect();
        let seed = u64::from(std::process::id()) << 20 | u64::from(cfg.objects);
        let mut pattern = vec![0u8; cfg.block_size];
        objects::fill_pattern(&mut pattern, seed);
        let meta = RunMeta {
            tool: "cephbench".into(),
            format: 1,
            run_name: sh.run.to_string(),
            block_size: cfg.block_size as u64,
            object_size: cfg.block_size as u64,
            ops: u64::from(cfg.objects),
            seed,
            complete: false,
            host: crate::names::hostname(),
            pid: std::process::id(),
            started_unix: unix_now() as u64,
            created_pool: false,
            write_dest: Default::default(),
        };
        PoolCanary {
            sh,
            pool: io.pool_name().to_string(),
            io,
            stamps: vec![None; names.len()],
            names,
            data: pattern.clone(),
            pattern,
            read_buf: vec![0u8; cfg.block_size],
            meta,
            meta_written: false,
            seq: 0,
            done: 0,
            next: (0, Op::Write),
            warm: false,
            failing: 0,
            looked: Instant::now(),
            reread: Instant::now(),
        }
    }

    /// One tick: the pool's marker written if it is not yet, else the next
    /// op, judged and counted.
    async fn step(&mut self) {
        self.reopen_if_made_again();
        if !self.meta_written {
            // (Retried each tick until the pool takes it.)
            self.meta_written = crate::bench::write_meta(&self.io, &self.meta).await.is_ok();
            if !self.meta_written {
                self.metrics().fail(&self.pool, Op::Write, Failure::Error);
                self.failing += 1;
                return;
            }
        }
        let (i, op) = self.next;
        let mut osd = self.primary(i);
        let started = Instant::now();
        let outcome = self.issue(i, op).await;
        let result = self.judge(i, op, outcome);
        if osd.is_none() && result.is_ok() && self.reread.elapsed() >= Duration::from_secs(1) {
            // A pool made again, or PGs that had no acting set at the last
            // read: the placement now (one bounded mon command, at most once
            // a second), so that the op that completed has its OSD.
            self.reread = Instant::now();
            osd = self.read_placement(i);
        }
        self.count(i, op, osd.unwrap_or(-1), started, result);
        self.next = match op {
            Op::Write if !self.warm && i + 1 < self.names.len() => (i + 1, Op::Write),
            Op::Write if !self.warm => {
                self.warm = true;
                (0, Op::Read)
            }
            Op::Write => (i, Op::Read),
            Op::Read => ((i + 1) % self.names.len(), Op::Write),
        };
    }

    fn metrics(&self) -> std::sync::MutexGuard<'a, Metrics> {
        self.sh
            .metrics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// After [`REOPEN_AFTER`] failures in a row (once an interval): the pool
    /// made anew under its name is opened, its objects to be written anew.
    fn reopen_if_made_again(&mut self) {
        if self.failing < REOPEN_AFTER || self.looked.elapsed() < self.sh.cfg.interval {
            return;
        }
        self.looked = Instant::now();
        if let Some(fresh) = reopened(self.sh.rados, &self.io, &self.sh.cfg.namespace) {
            // (No op is in flight on the old one.)
            self.io = fresh;
            self.stamps.fill(None);
            (self.meta_written, self.next, self.warm) = (false, (0, Op::Write), false);
        }
    }

    /// Object `i`'s primary OSD as the last placement read has it.
    fn primary(&self, i: usize) -> Option<i32> {
        self.sh
            .placements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&self.pool)
            .and_then(|p| p.primary_of(&self.sh.cfg.namespace, &self.names[i].0))
    }

    /// Reads the pool's placement now; object `i`'s primary in it.
    fn read_placement(&self, i: usize) -> Option<i32> {
        let p = crate::telemetry::cluster::placement(&current(self.sh.slot), &self.pool).ok()?;
        self.sh
            .placements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(self.pool.clone(), p);
        self.primary(i)
    }

    /// Writes object `i` whole with the next stamp, or reads it back.
    async fn issue(&mut self, i: usize, op: Op) -> Outcome {
        let oid = &self.names[i].1;
        match op {
            Op::Write => {
                self.seq += 1;
                objects::stamp(&mut self.data, self.seq);
                let f = self.io.write_full(oid, &self.data)?;
                f.await.map(|d| (d.ret, d.completed_at))
            }
            Op::Read => {
                // The read buffer comes back with the op and is reused (a
                // new one only after a submit that failed kept it).
                let size = self.sh.cfg.block_size;
                if self.read_buf.len() != size {
                    self.read_buf = vec![0u8; size];
                }
                let f = self.io.read(oid, std::mem::take(&mut self.read_buf), 0)?;
                let d = f.await?;
                self.read_buf = d.buf;
                Ok((d.ret, d.completed_at))
            }
        }
    }

    /// An op's outcome as the canary counts it: when it completed, or how
    /// it failed (a read must return the whole object with the stamp of the
    /// last write).
    fn judge(&mut self, i: usize, op: Op, outcome: Outcome) -> Result<Instant, Failure> {
        match outcome {
            Ok((ret, _)) if ret < 0 => Err(if ret == -i64::from(libc::ETIMEDOUT) {
                Failure::Timeout
            } else {
                Failure::Error
            }),
            Ok((ret, at)) => match op {
                Op::Write => {
                    self.stamps[i] = Some(self.seq);
                    Ok(at)
                }
                Op::Read if (ret as usize) < self.sh.cfg.block_size => Err(Failure::Short),
                Op::Read => match self.stamps[i] {
                    Some(s)
                        if objects::verify_stamp(
                            &self.read_buf[..ret as usize],
                            &self.pattern,
                            s,
                        ) =>
                    {
                        Ok(at)
                    }
                    // Not written by this watch yet: the length is all there is to check.
                    None => Ok(at),
                    Some(_) => Err(Failure::Mismatch),
                },
            },
            Err(e) if e.errno() == Some(libc::ETIMEDOUT) => Err(Failure::Timeout),
            Err(_) => Err(Failure::Error),
        }
    }

    /// The op's latency into the pool's series, or its failure.
    fn count(
        &mut self,
        i: usize,
        op: Op,
        osd: i32,
        started: Instant,
        result: Result<Instant, Failure>,
    ) {
        let mut m = self.metrics();
        match result {
            Ok(at) => {
                let ns = at.saturating_duration_since(started).as_nanos() as u64;
                m.record(&self.pool, op, osd, ns, unix_now());
                self.done += 1;
                self.failing = 0;
            }
            Err(why) => {
                self.failing += 1;
                // A write that failed leaves the object's content unknown.
                if op == Op::Write {
                    self.stamps[i] = None;
                }
                m.fail(&self.pool, op, why);
            }
        }
    }
}

/// A new I/O context on `io`'s pool name where a pool of that name exists
/// under another id (deleted and made again); `None` otherwise.
fn reopened(rados: &Rados, io: &IoCtx, namespace: &str) -> Option<IoCtx> {
    let id = rados.pool_id(io.pool_name()).ok()?;
    if id == io.pool_id() {
        return None;
    }
    let mut fresh = rados.ioctx(io.pool_name()).ok()?;
    fresh.set_namespace(namespace).ok()?;
    Some(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(p99_ms: f64) -> metrics::IntervalLine {
        metrics::IntervalLine {
            pool: "p".into(),
            op: Op::Write,
            ops: 20,
            mean_ns: p99_ms * 0.6e6,
            p50_ns: (p99_ms * 0.5e6) as u64,
            p99_ns: (p99_ms * 1e6) as u64,
            max_ns: (p99_ms * 1.2e6) as u64,
        }
    }

    /// A step of the p99 from about 1.2 ms to about 4.5 ms (the drive rig's
    /// 3 ms per flush) is reported once, as slower, and the step back as
    /// faster; noise of ±15 % around one level is none.
    #[test]
    fn a_lasting_change_is_reported_once_each_way() {
        let mut w = ChangeWatch::default();
        let wobble = |k: u64| 1.0 + 0.15 * ((k * 7919 % 13) as f64 / 6.0 - 1.0);
        let mut found = Vec::new();
        for k in 0..120u64 {
            let level = if (40..80).contains(&k) { 4.5 } else { 1.2 };
            if let Some((words, slower)) = w.push(k, line(level * wobble(k)), 10.0) {
                found.push((k, words, slower));
            }
        }
        assert_eq!(found.len(), 2, "{found:?}");
        let (k, words, slower) = &found[0];
        assert!(
            *slower && words.contains("from 400 s after the start"),
            "{words}"
        );
        // Found once there are two detector's segments of intervals after it.
        assert_eq!(*k, 50);
        assert!(
            !found[1].2 && found[1].1.contains("from 800 s"),
            "{:?}",
            found[1]
        );
        let mut flat = ChangeWatch::default();
        for k in 0..120u64 {
            assert_eq!(flat.push(k, line(1.2 * wobble(k)), 10.0), None, "{k}");
        }
    }
}
