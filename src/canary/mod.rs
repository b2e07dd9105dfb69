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
//! What it does not export (yet): the split of the mean into network,
//! queue, flush and replicas, and the RTT probes. On a busy cluster the
//! OSDs' counters are over all their traffic, of which the canary is a
//! sliver; a split is only the canary's own from the OSDs' records of its
//! ops, and none is passed off as its own.
#![forbid(unsafe_code)]

pub mod metrics;
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
    // Every pool opened and claimed before anything is served.
    let mut ios = Vec::new();
    for pool in &cfg.pools {
        let mut io = rados.ioctx(pool)?;
        io.set_namespace(&cfg.namespace)?;
        if let Some(m) = crate::bench::read_meta(&io, &run).await? {
            if m.host == crate::names::hostname() && cephbench_runs(m.pid) {
                return Err(WatchError::Busy {
                    pool: pool.clone(),
                    pid: m.pid,
                });
            }
        }
        ios.push(io);
    }
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
    // The first read before the first op, so that every op has its OSD.
    refresh(rados.telemetry(), &cfg.pools, &placements, &metrics);
    let done = Arc::new(AtomicBool::new(false));
    let refresher = start_refresher(
        rados.telemetry().clone(),
        cfg.pools.clone(),
        cfg.interval,
        Arc::clone(&placements),
        Arc::clone(&metrics),
        Arc::clone(&done),
    );
    let loops = ios
        .into_iter()
        .map(|io| pool_loop(rados, io, cfg, &run, &metrics, &placements, stop.clone()));
    let logger = log_intervals(&metrics, cfg.interval, stop.clone(), &log);
    let (results, ()) = tokio::join!(futures_util::future::join_all(loops), logger);
    done.store(true, Ordering::Relaxed);
    let _ = refresher.map(std::thread::JoinHandle::join);
    let mut summary = Summary::default();
    for (io, ops) in &results {
        let (io, ops) = (io, *ops);
        let failed = metrics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .failures_of(io.pool_name());
        summary
            .pools
            .push((io.pool_name().to_string(), ops, failed));
        if !cfg.keep_objects {
            let mut names: Vec<String> = (0..cfg.objects)
                .map(|i| format!("{}{i}", objects::data_prefix(&run)))
                .collect();
            names.push(objects::meta_name(&run));
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
    Ok(summary)
}

/// Reads each pool's placement into `placements`; the connection gauge
/// follows whether the cluster answered (a pool that is gone is an answer).
fn refresh(
    rados: &Rados,
    pools: &[String],
    placements: &Mutex<BTreeMap<String, PoolPlacement>>,
    metrics: &Mutex<Metrics>,
) {
    let mut answered = false;
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
            Err(_) => {}
        }
    }
    metrics
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .set_connected(answered);
}

/// [`refresh`] every `interval` on a thread of its own (off the I/O path),
/// until `done`.
fn start_refresher(
    rados: Rados,
    pools: Vec<String>,
    interval: Duration,
    placements: Arc<Mutex<BTreeMap<String, PoolPlacement>>>,
    metrics: Arc<Mutex<Metrics>>,
    done: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("cephbench-placement".into())
        .spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let started = Instant::now();
                // Sleep out the interval in short steps, so the end is prompt.
                while !done.load(Ordering::Relaxed) && started.elapsed() < interval {
                    std::thread::sleep(Duration::from_millis(100));
                }
                if !done.load(Ordering::Relaxed) {
                    refresh(&rados, &pools, &placements, &metrics);
                }
            }
        })
        .ok()
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
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let (lines, up, failed) = {
            let mut m = metrics.lock().unwrap_or_else(PoisonError::into_inner);
            let failed: BTreeMap<String, u64> = m
                .pool_names()
                .into_iter()
                .map(|p| {
                    let n = m.failures_of(&p);
                    (p, n)
                })
                .collect();
            (m.take_interval(), m.connected(), failed)
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
            log("the cluster did not answer the placement read: cephbench_watch_up is 0");
        }
        failed_before = failed;
    }
}

/// After this many failed ops in a row a pool's canary looks (once an
/// interval) whether the pool was made anew under its name, and opens that.
const REOPEN_AFTER: u32 = 3;

/// One pool's canary until `stop`: every object written once, then a write
/// and a read in turn at the pool's rate. A pool deleted and made again
/// under the same name is taken up again (its objects written anew).
/// Returns its I/O context (no op in flight) and the ops that completed.
async fn pool_loop(
    rados: &Rados,
    mut io: IoCtx,
    cfg: &WatchConfig,
    run: &str,
    metrics: &Mutex<Metrics>,
    placements: &Mutex<BTreeMap<String, PoolPlacement>>,
    mut stop: watch::Receiver<bool>,
) -> (IoCtx, u64) {
    let pool = io.pool_name().to_string();
    let names: Vec<(String, CString)> = (0..cfg.objects)
        .map(|i| {
            let n = format!("{}{i}", objects::data_prefix(run));
            let c = CString::new(n.clone()).expect("our names have no NUL");
            (n, c)
        })
        .collect();
    let seed = u64::from(std::process::id()) << 20 | u64::from(cfg.objects);
    let mut pattern = vec![0u8; cfg.block_size];
    objects::fill_pattern(&mut pattern, seed);
    let mut data = pattern.clone();
    let mut read_buf = vec![0u8; cfg.block_size];
    // The stamp each object holds (its last write's sequence number).
    let mut stamps: Vec<Option<u64>> = vec![None; names.len()];
    let meta = RunMeta {
        tool: "cephbench".into(),
        format: 1,
        run_name: run.to_string(),
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
    let mut meta_written = false;
    let period = Duration::from_secs_f64(1.0 / cfg.rate);
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut seq, mut done) = (0u64, 0u64);
    // Writes go first through every object (`warm` after), then a write and
    // a read of each in turn.
    let (mut next, mut warm) = ((0usize, Op::Write), false);
    let (mut failing, mut looked, mut reread) = (0u32, Instant::now(), Instant::now());
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return (io, done),
        }
        if failing >= REOPEN_AFTER && looked.elapsed() >= cfg.interval {
            looked = Instant::now();
            if let Some(fresh) = reopened(rados, &io, &cfg.namespace) {
                // (No op is in flight on the old one.)
                io = fresh;
                stamps.fill(None);
                (meta_written, next, warm) = (false, (0, Op::Write), false);
            }
        }
        if !meta_written {
            // (Retried each tick until the pool takes it.)
            meta_written = crate::bench::write_meta(&io, &meta).await.is_ok();
            if !meta_written {
                metrics.lock().unwrap_or_else(PoisonError::into_inner).fail(
                    &pool,
                    Op::Write,
                    Failure::Error,
                );
                failing += 1;
                continue;
            }
        }
        let (i, op) = next;
        let (name, oid) = &names[i];
        let primary = || {
            placements
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&pool)
                .and_then(|p| p.primary_of(&cfg.namespace, name))
        };
        let mut osd = primary();
        let started = Instant::now();
        let outcome = match op {
            Op::Write => {
                seq += 1;
                objects::stamp(&mut data, seq);
                match io.write_full(oid, &data) {
                    Ok(f) => f.await.map(|d| (d.ret, d.completed_at)),
                    Err(e) => Err(e),
                }
            }
            Op::Read => {
                // The read buffer comes back with the op and is reused (a
                // new one only after a submit that failed kept it).
                if read_buf.len() != cfg.block_size {
                    read_buf = vec![0u8; cfg.block_size];
                }
                match io.read(oid, std::mem::take(&mut read_buf), 0) {
                    Ok(f) => f.await.map(|d| {
                        read_buf = d.buf;
                        (d.ret, d.completed_at)
                    }),
                    Err(e) => Err(e),
                }
            }
        };
        let result = match outcome {
            Ok((ret, _)) if ret < 0 => Err(if ret == -i64::from(libc::ETIMEDOUT) {
                Failure::Timeout
            } else {
                Failure::Error
            }),
            Ok((ret, at)) => match op {
                Op::Write => {
                    stamps[i] = Some(seq);
                    Ok(at)
                }
                Op::Read if (ret as usize) < cfg.block_size => Err(Failure::Short),
                Op::Read => match stamps[i] {
                    Some(s) if objects::verify_stamp(&read_buf[..ret as usize], &pattern, s) => {
                        Ok(at)
                    }
                    // Not written by this watch yet: the length is all there is to check.
                    None => Ok(at),
                    Some(_) => Err(Failure::Mismatch),
                },
            },
            Err(e) if e.errno() == Some(libc::ETIMEDOUT) => Err(Failure::Timeout),
            Err(_) => Err(Failure::Error),
        };
        if osd.is_none() && result.is_ok() && reread.elapsed() >= Duration::from_secs(1) {
            // A pool made again, or PGs that had no acting set at the last
            // read: the placement now (one bounded mon command, at most once
            // a second), so that the op that completed has its OSD.
            reread = Instant::now();
            if let Ok(p) = crate::telemetry::cluster::placement(rados.telemetry(), &pool) {
                placements
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(pool.clone(), p);
                osd = primary();
            }
        }
        let osd = osd.unwrap_or(-1);
        {
            let mut m = metrics.lock().unwrap_or_else(PoisonError::into_inner);
            match result {
                Ok(at) => {
                    let ns = at.saturating_duration_since(started).as_nanos() as u64;
                    m.record(&pool, op, osd, ns, unix_now());
                    done += 1;
                    failing = 0;
                }
                Err(why) => {
                    failing += 1;
                    // A write that failed leaves the object's content unknown.
                    if op == Op::Write {
                        stamps[i] = None;
                    }
                    m.fail(&pool, op, why);
                }
            }
        }
        next = match op {
            Op::Write if !warm && i + 1 < names.len() => (i + 1, Op::Write),
            Op::Write if !warm => {
                warm = true;
                (0, Op::Read)
            }
            Op::Write => (i, Op::Read),
            Op::Read => ((i + 1) % names.len(), Op::Write),
        };
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
