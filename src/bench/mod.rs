//! Benchmark runs: orchestration around the engine for each command
//! (metadata, images, preconditioning, cleanup) and assembly of the
//! [`BenchResult`]. `rados` and `rbd` live in their own files.
#![forbid(unsafe_code)]

mod rados;
mod rbd;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::ceph::{CephError, Rados};
use crate::engine::{JobOutcome, OpKind};
use crate::placement::{self, OsdSlots};
use crate::progress::{Counters, Sample, Sampler};
use crate::result::{
    BenchResult, ClusterInfo, JobReport, NetworkReport, OsdClientRow, OsdReport, PlacementInfo,
    ToolInfo,
};
use crate::telemetry::cluster as probe;
use crate::telemetry::counters::{self, Snapshot};
use crate::telemetry::network::RttProbe;
use crate::telemetry::{CounterSampler, PlacementWatcher};

pub use rados::{
    cleanup, cleanup_all_namespaces, cleanup_hint, read_meta, remove_objects, remove_run,
    run_rados, CleanupReport, RadosConfig,
};
pub use rbd::{
    new_image_name, prepare_image, rbd_cache_overrides, run_rbd, ImageChoice, RbdConfig,
    IMAGE_PREFIX,
};

/// The definition printed next to every latency figure.
pub const LATENCY_DEFINITION: &str =
    "completion latency: op submitted to librados/librbd -> its completion callback ran";

/// The definition of open-loop (`--rate`) latency.
pub const INTENDED_LATENCY_DEFINITION: &str =
    "latency from intended start (open loop, corrected for coordinated omission): \
     op's scheduled start -> its completion callback ran; service time (from submit) beside it";

/// `latency_kind` of a run: `completion`, or `intended_start` in an open loop.
pub fn latency_kind(open_loop: bool) -> &'static str {
    if open_loop {
        "intended_start"
    } else {
        "completion"
    }
}

/// `latency_definition` of a run.
pub fn latency_definition(open_loop: bool) -> &'static str {
    if open_loop {
        INTENDED_LATENCY_DEFINITION
    } else {
        LATENCY_DEFINITION
    }
}

/// Ops slower than this are counted as slow.
pub const SLOW_OP: Duration = Duration::from_secs(1);

/// Errors of a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A librados call failed.
    #[error(transparent)]
    Ceph(#[from] CephError),
    /// `seq`/`rand` found no write run to read.
    #[error(
        "no objects of run '{run}' in pool '{pool}': run `cephbench rados write -p {pool}{ns} --run-name {run} --no-cleanup` first"
    )]
    NothingWritten {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
    },
    /// `seq`/`rand` of a run that wrote omap values or xattrs.
    #[error(
        "run '{run}' in pool '{pool}' wrote {dest}; seq and rand read object data only, as rados bench does: \
         read a run written without --write-omap/--write-xattr"
    )]
    NotObjectData {
        /// Pool.
        pool: String,
        /// Run name.
        run: String,
        /// Where it wrote, e.g. `object+omap`.
        dest: String,
    },
    /// `write` would overwrite an earlier run's objects.
    #[error(
        "pool '{pool}' still holds run '{run}' ({ops} ops written by {host}); remove it with `cephbench cleanup -p {pool}{ns} --run-name {run}` or choose another --run-name"
    )]
    RunExists {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
        /// Ops recorded in the metadata.
        ops: u64,
        /// Host that wrote them.
        host: String,
    },
    /// The image named by `--image` does not exist.
    #[error("no image '{image}' in pool '{pool}' (list images with `rbd ls -p {pool}`, or use --size to let cephbench create one)")]
    NoSuchImage {
        /// Pool.
        pool: String,
        /// Image.
        image: String,
    },
    /// The workload would write to an image cephbench did not create.
    #[error("image '{image}' was not created by cephbench and {why} would write to it; pass --allow-write if its data may be destroyed")]
    ReadOnlyImage {
        /// Image.
        image: String,
        /// What would write.
        why: String,
    },
    /// The client's caps do not allow I/O on the pool.
    #[error("{entity} may not do I/O on pool '{pool}' ({refused}); grant it: ceph auth caps {entity} mon 'allow r' osd 'allow rw pool={pool}'")]
    NoAccess {
        /// The client.
        entity: String,
        /// The pool.
        pool: String,
        /// The refused call.
        refused: Box<CephError>,
    },
    /// `--test-area` / `--bs` do not fit the image.
    #[error("{0}")]
    BadGeometry(String),
    /// A job run on a group of agents (`suite --group`) failed, or agents
    /// delivered no result (the message names them).
    #[error("{0}")]
    Group(String),
    /// The pool does not exist and `--create-pool` was not given.
    #[error("pool '{pool}' does not exist (list pools with `ceph osd pool ls`); create it, or pass --create-pool [--pool-size N] [--pg-num N] to let cephbench create it and remove it afterwards")]
    NoPool {
        /// Pool.
        pool: String,
    },
    /// Writes failed because the pool reached its quota (EDQUOT) or the
    /// cluster is full (ENOSPC).
    #[error("pool '{pool}' is full: {detail}; writes stopped")]
    PoolFull {
        /// Pool.
        pool: String,
        /// Which limit, and how much is stored.
        detail: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// The pool disappeared while the run used it.
    #[error("pool '{pool}' was deleted during the run; nothing of the run is left in it")]
    PoolDeleted {
        /// Pool.
        pool: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// An op did not complete within `--op-timeout`.
    #[error("an op did not complete within --op-timeout {limit}; check `ceph -s` (mons or OSDs down, PGs inactive, pool full) and raise --op-timeout if the cluster is merely slow")]
    OpTimeout {
        /// The bound, as configured.
        limit: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// A data object of the requested run exists without the run's
    /// metadata: it was not written by this run, and is left alone.
    #[error("pool '{pool}' already holds object '{name}' but no metadata of run '{run}': it is not cephbench's to overwrite; choose another --run-name (if it is a crashed cephbench run's, `cephbench cleanup -p {pool}{ns} --run-name {run}` removes it)")]
    ForeignObject {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
        /// The object found.
        name: String,
    },
    /// The metadata object exists but is not ours or is corrupt.
    #[error("metadata object '{name}' in pool '{pool}' is unusable: {why}")]
    BadMeta {
        /// Pool.
        pool: String,
        /// Object name.
        name: String,
        /// What is wrong.
        why: String,
    },
}

/// A finished run: the result document and whether it should fail the command.
#[derive(Debug)]
pub struct Outcome {
    /// The result.
    pub result: BenchResult,
    /// The first op error, explained (the run is then reported and fails).
    pub error: Option<BenchError>,
    /// Objects removed afterwards.
    pub cleaned: Option<u64>,
    /// When the run could not remove what it created: the command that does.
    pub leftovers: Option<String>,
    /// When the measured ops started, on this host's clock (rados runs).
    pub measured_start: Option<SystemTime>,
}

/// Explains a failed op of a run on `pool`: a full pool (naming the quota),
/// a deleted pool, an op timeout; other errors pass through. Each check is
/// one bounded mon command.
pub fn diagnose(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    match e.errno() {
        Some(libc::EDQUOT) | Some(libc::ENOSPC) => BenchError::PoolFull {
            pool: pool.into(),
            detail: quota_detail(rados, pool).unwrap_or_else(|| {
                if e.errno() == Some(libc::ENOSPC) {
                    "the cluster (an OSD at its full ratio) or the pool has no room; see `ceph health detail`, free space or add OSDs".into()
                } else {
                    format!(
                        "its quota was reached (the mons clear the full flag seconds after usage drops below it); \
                         see `ceph osd pool get-quota {pool}`, free space, or remove the quota with \
                         `ceph osd pool set-quota {pool} max_bytes 0` (and max_objects 0)"
                    )
                }
            }),
            source: Box::new(e),
        },
        Some(libc::ENOENT) | Some(libc::ETIMEDOUT) if pool_gone(rados, pool) => {
            BenchError::PoolDeleted {
                pool: pool.into(),
                source: Box::new(e),
            }
        }
        Some(libc::ETIMEDOUT) => match quota_detail(rados, pool) {
            // librbd (and librados without FULL_TRY) waits on a full pool
            // until the op timeout: name the quota rather than the timeout.
            Some(detail) => BenchError::PoolFull {
                pool: pool.into(),
                detail,
                source: Box::new(e),
            },
            None => BenchError::OpTimeout {
                limit: rados
                    .conf_get("rados_osd_op_timeout")
                    .map(|s| format!("{s} s"))
                    .unwrap_or_else(|_| "?".into()),
                source: Box::new(e),
            },
        },
        _ => data_access(e, rados, pool),
    }
}

/// [`diagnose`] for the first op on the pool (e.g. creating the image): a
/// timeout there, with the pool present, no quota reached and every OSD up,
/// is the missing osd cap of reef and later (see [`data_access`]).
pub(crate) fn first_op_error(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    if e.errno() == Some(libc::ETIMEDOUT)
        && !pool_gone(rados, pool)
        && quota_detail(rados, pool).is_none()
    {
        return match data_access(e, rados, pool) {
            BenchError::Ceph(e) => diagnose(rados, pool, e),
            other => other,
        };
    }
    diagnose(rados, pool, e)
}

/// Whether the pool no longer exists (per the client's current OSD map).
fn pool_gone(rados: &Rados, pool: &str) -> bool {
    matches!(rados.pool_id(pool), Err(CephError::NoSuchPool(_)))
}

/// "quota max_objects 100 reached (3337 objects stored)", if a quota of the
/// pool is reached.
fn quota_detail(rados: &Rados, pool: &str) -> Option<String> {
    let cmd = serde_json::json!({"prefix": "osd pool get-quota", "pool": pool, "format": "json"});
    let out = rados.mon_command(&cmd.to_string()).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.out).ok()?;
    let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let (max_obj, obj) = (n("quota_max_objects"), n("current_num_objects"));
    let (max_b, b) = (n("quota_max_bytes"), n("current_num_bytes"));
    let fix = |q: &str| {
        format!(
            "; free space, or raise or remove the quota: `ceph osd pool set-quota {pool} {q} 0`"
        )
    };
    if max_obj > 0 && obj >= max_obj {
        Some(format!(
            "quota max_objects {max_obj} reached ({obj} objects stored){}",
            fix("max_objects")
        ))
    } else if max_b > 0 && b >= max_b {
        Some(format!(
            "quota max_bytes {max_b} ({}) reached ({b} bytes stored){}",
            crate::units::fmt_bytes(max_b),
            fix("max_bytes")
        ))
    } else {
        None
    }
}

/// How `--create-pool` makes a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PoolSpec {
    /// Replicas (`size`).
    pub size: u32,
    /// Placement groups (`pg_num` = `pgp_num`).
    pub pg_num: u32,
}

/// Creates a replicated pool for `app` and waits (up to 60 s) until its PGs
/// are active.
pub fn create_pool(rados: &Rados, pool: &str, spec: PoolSpec, app: &str) -> Result<(), CephError> {
    use serde_json::json;
    let cmd = |v: serde_json::Value| rados.mon_command(&v.to_string()).map(|_| ());
    cmd(
        json!({"prefix": "osd pool create", "pool": pool, "pg_num": spec.pg_num,
               "pgp_num": spec.pg_num, "pool_type": "replicated"}),
    )?;
    cmd(
        json!({"prefix": "osd pool set", "pool": pool, "var": "size",
               "val": spec.size.to_string(), "yes_i_really_mean_it": true}),
    )?;
    let min = spec.size.saturating_sub(1).max(1);
    cmd(
        json!({"prefix": "osd pool set", "pool": pool, "var": "min_size", "val": min.to_string()}),
    )?;
    cmd(json!({"prefix": "osd pool application enable", "pool": pool, "app": app}))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let q = json!({"prefix": "pg ls-by-pool", "poolstr": pool, "format": "json"}).to_string();
    while Instant::now() < deadline {
        let active = rados.mgr_command(&q).ok().and_then(|o| {
            let v: serde_json::Value = serde_json::from_slice(&o.out).ok()?;
            let pgs = v.get("pg_stats").or(Some(&v))?.as_array()?.clone();
            Some(
                pgs.len() as u64 >= u64::from(spec.pg_num)
                    && pgs.iter().all(|p| {
                        p.get("state")
                            .and_then(|s| s.as_str())
                            .is_some_and(|s| s.starts_with("active"))
                    }),
            )
        });
        if active == Some(true) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(CephError::Timeout {
        what: format!("activation of the PGs of the new pool '{pool}'"),
        limit: Duration::from_secs(60),
    })
}

/// Deletes a pool cephbench created, if it holds no object any more.
/// Returns a warning when it cannot.
pub fn remove_created_pool(rados: &Rados, io: &crate::ceph::IoCtx, pool: &str) -> Option<String> {
    // Objects of every namespace count, not only those of `io`'s.
    let left = rados.ioctx(io.pool_name()).and_then(|mut all| {
        all.set_all_namespaces();
        all.list_prefix("")
    });
    match left {
        Ok(left) if !left.is_empty() => {
            return Some(format!(
                "pool '{pool}' (created by cephbench) was kept: it holds {} objects cephbench did not write",
                left.len()
            ))
        }
        Err(e) => return Some(format!("pool '{pool}' (created by cephbench) was kept: {e}")),
        Ok(_) => {}
    }
    let cmd = serde_json::json!({"prefix": "osd pool rm", "pool": pool, "pool2": pool,
                                 "yes_i_really_really_mean_it": true});
    match rados.mon_command(&cmd.to_string()) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "pool '{pool}' (created by cephbench) was kept: {e} (pool deletion needs mon_allow_pool_delete=true; or `ceph osd pool rm {pool} {pool} --yes-i-really-really-mean-it`)"
        )),
    }
}

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub use crate::telemetry::hostname;

/// Identity of the cluster for the result document.
pub fn cluster_info(rados: &Rados) -> Result<ClusterInfo, CephError> {
    let ceph_version = rados
        .mon_command(r#"{"prefix":"version","format":"json"}"#)
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.out).ok())
        .and_then(|v| {
            v.get("version")
                .and_then(|s| s.as_str())
                .map(str::to_string)
        });
    Ok(ClusterInfo {
        fsid: rados.fsid()?,
        ceph_version,
        librados_version: crate::ceph::librados_version(),
        client_host: hostname(),
        entity: rados.entity().to_string(),
    })
}

/// The report of one op kind of a job.
pub fn job_report(
    name: &str,
    kind: OpKind,
    out: &JobOutcome,
    verify: bool,
    timeline: Vec<crate::progress::Sample>,
) -> JobReport {
    let k = out.kind(kind);
    let elapsed = out.elapsed.as_secs_f64();
    let rate = |x: u64| {
        if elapsed > 0.0 {
            x as f64 / elapsed
        } else {
            0.0
        }
    };
    JobReport {
        per_second: crate::result::PerSecond::of(&timeline),
        end_flush: None,
        name: name.into(),
        op: kind.as_str().into(),
        ops: k.ops,
        errors: out.errors,
        bytes: k.bytes,
        elapsed_s: elapsed,
        iops: rate(k.ops),
        bytes_per_sec: rate(k.bytes),
        latency_ns: k.latency.summary(),
        stop_reason: out.stop.as_str().into(),
        verify_mismatches: verify.then_some(out.mismatches),
        short_reads: if kind == OpKind::Read {
            out.short_reads
        } else {
            0
        },
        first_error: out.first_error.as_ref().map(|e| e.to_string()).or_else(|| {
            // Short reads and mismatches belong to the read job of a mix.
            (kind == OpKind::Read)
                .then(|| out.first_data_error.clone())
                .flatten()
        }),
        errors_by_errno: out
            .errors_by_errno
            .iter()
            .map(|(e, n)| (e.to_string(), *n))
            .collect(),
        longest_gap_s: out.longest_gap.as_secs_f64(),
        slow_ops: out.slow_ops,
        slow_op_s: SLOW_OP.as_secs_f64(),
        timeline,
        histogram: (k.ops > 0).then(|| crate::stats::encode_histogram(k.latency.histogram())),
        attribution: None,
        service_latency_ns: k.service.as_ref().map(|s| s.summary()),
        rate: out.rate.as_ref().map(|r| rate_report(r, rate(k.ops))),
    }
}

/// The `rate` block of an open-loop job.
pub fn rate_report(r: &crate::engine::RateOutcome, achieved: f64) -> crate::result::RateReport {
    let e = r.schedule_error.summary();
    let kept_up = achieved >= 0.98 * r.asked && r.late_ops * 100 <= r.scheduled.max(1);
    crate::result::RateReport {
        asked: r.asked,
        achieved,
        arrival: r.arrival.as_str().into(),
        late_ops: r.late_ops,
        scheduled_ops: r.scheduled,
        max_backlog: r.max_backlog,
        final_backlog: r.final_backlog,
        schedule_error_ns: crate::result::ScheduleError {
            p50: e.p50,
            p99: e.p99,
            max: e.max,
        },
        kept_up,
    }
}

/// What the probes saw before a job: the placement (for per-OSD tagging)
/// and the OSDs' counters.
pub struct Probes {
    /// Object → primary OSD slot map, if the placement could be read
    /// (kept current by the watcher when the osdmap changes).
    pub slots: Option<Arc<OsdSlots>>,
    watcher: Option<PlacementWatcher>,
    before: Vec<(i32, Snapshot)>,
    rtt: Option<RttProbe>,
    pool: String,
    states: Vec<(i32, bool, bool)>,
    /// When `before` was read.
    t0: Instant,
    sampler: Option<CounterSampler>,
    /// Each OSD's device, read before the run.
    devices: Vec<(i32, crate::device::DeviceInfo)>,
}

impl Probes {
    /// Probes the pool before a job. Failures (missing caps, an old
    /// release's output shape) become warnings: the benchmark itself goes on.
    pub fn before(rados: &Rados, pool: &str, enabled: bool, warnings: &mut Vec<String>) -> Probes {
        let rados = rados.telemetry();
        if !enabled {
            return Probes {
                slots: None,
                watcher: None,
                before: Vec::new(),
                rtt: None,
                pool: pool.to_string(),
                states: Vec::new(),
                t0: Instant::now(),
                sampler: None,
                devices: Vec::new(),
            };
        }
        let mut rtt = None;
        let slots = match probe::cluster_map(rados, pool) {
            Ok((p, addrs)) => {
                let serving = p.osds();
                let targets = addrs
                    .into_iter()
                    .filter(|(o, _)| serving.contains(o))
                    .collect();
                rtt = Some(RttProbe::start(
                    targets,
                    Duration::from_secs(1),
                    Duration::from_secs(1),
                ));
                Some(Arc::new(OsdSlots::new(p)))
            }
            Err(e) => {
                warnings.push(format!(
                    "no per-OSD view: {} cannot read the PG map ({e}); it needs mon 'allow r' \
                     and mgr 'allow r'",
                    rados.entity()
                ));
                None
            }
        };
        let t0 = Instant::now();
        let before = match &slots {
            Some(s) => match probe::perf_dumps(rados, s.osds()) {
                Ok(v) => v,
                Err(e) => {
                    warnings.push(format!(
                        "no OSD counters and no attribution: `perf dump` as {} failed ({e}); \
                         it needs osd 'allow *' (or pass --telemetry-id with such an identity)",
                        rados.entity()
                    ));
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        let watcher = slots.as_ref().map(|s| {
            PlacementWatcher::start(
                rados.clone(),
                pool.to_string(),
                Arc::clone(s),
                PLACEMENT_POLL,
            )
        });
        let devices = match (&slots, probe::osd_devices(rados)) {
            (None, _) => Vec::new(),
            (Some(_), Ok(d)) => d,
            (Some(_), Err(e)) => {
                warnings.push(format!(
                    "no drive identity per OSD: `osd metadata` as {} failed ({e}); it needs mon 'allow r'",
                    rados.entity()
                ));
                Vec::new()
            }
        };
        Probes {
            slots,
            watcher,
            before,
            rtt,
            pool: pool.to_string(),
            states: probe::osd_states(rados).unwrap_or_default(),
            t0,
            sampler: None,
            devices,
        }
    }

    /// Samples the OSDs' counters every `interval` until [`Probes::after`]
    /// (the counter timelines); zero: only before and after.
    pub fn sample_counters(&mut self, rados: &Rados, interval: Duration) {
        if interval.is_zero() || self.before.is_empty() {
            return;
        }
        self.sampler = Some(CounterSampler::start(
            rados.telemetry().clone(),
            self.before.clone(),
            self.t0,
            interval,
        ));
    }

    /// Stops the RTT probe and reads the OSDs' heartbeat round trips.
    pub fn network(&mut self, rados: &Rados) -> Option<NetworkReport> {
        let rados = rados.telemetry();
        let client_rtt = self.rtt.take()?.finish();
        let mut heartbeat = Vec::new();
        for (osd, _) in &self.before {
            if let Ok(h) = probe::osd_network(rados, *osd) {
                heartbeat.extend(h);
            }
        }
        Some(NetworkReport {
            client_rtt,
            heartbeat,
        })
    }

    /// Probes again after the job and builds the per-OSD reports.
    pub fn after(
        &mut self,
        rados: &Rados,
        out: Option<&JobOutcome>,
        warnings: &mut Vec<String>,
    ) -> Vec<OsdReport> {
        let rados = rados.telemetry();
        let mut mons_away = false;
        if let Some(w) = self.watcher.take() {
            let (w, away) = w.finish();
            warnings.extend(w);
            mons_away = away;
        }
        let Some(slots) = &self.slots else {
            return Vec::new();
        };
        warnings.extend(self.placement_change(rados, mons_away));
        let mut after = Vec::new();
        if !self.before.is_empty() {
            let osds: Vec<i32> = self.before.iter().map(|(o, _)| *o).collect();
            match probe::perf_dumps(rados, &osds) {
                Ok(v) => after = v,
                Err(e) => warnings.push(format!("no OSD counters after the run: {e}")),
            }
        }
        let t_end = Instant::now();
        let mgr_perf = match probe::osd_perf(rados) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("no `osd perf` (mgr): {e}; it needs mgr 'allow r'"));
                Vec::new()
            }
        };
        let mut timelines = self
            .sampler
            .take()
            .map(|s| s.finish(&after, t_end))
            .unwrap_or_default();
        slots
            .osds()
            .iter()
            .enumerate()
            .map(|(slot, &osd)| {
                let client = OpKind::ALL
                    .iter()
                    .filter_map(|k| {
                        let ks = out?.osd_kind(slot, *k)?;
                        (ks.ops > 0).then(|| {
                            let s = ks.latency.summary();
                            OsdClientRow {
                                op: k.as_str().into(),
                                ops: ks.ops,
                                mean_ns: s.mean,
                                p99_ns: s.p99,
                                histogram: Some(crate::stats::encode_histogram(
                                    ks.latency.histogram(),
                                )),
                                attribution: None,
                            }
                        })
                    })
                    .collect();
                let counters = self
                    .before
                    .iter()
                    .find(|(o, _)| *o == osd)
                    .zip(after.iter().find(|(o, _)| *o == osd))
                    .map(|((_, b), (_, a))| counters::delta(osd, b, a));
                OsdReport {
                    osd,
                    client,
                    counters,
                    timeline: timelines
                        .iter_mut()
                        .find(|(o, _)| *o == osd)
                        .map(|(_, t)| std::mem::take(t))
                        .unwrap_or_default(),
                    mgr_perf: mgr_perf.iter().find(|m| m.osd == osd).cloned(),
                    device: self
                        .devices
                        .iter()
                        .find(|(o, _)| *o == osd)
                        .map(|(_, d)| d.clone()),
                    replica_sets: slots.placement().replica_sets(osd),
                }
            })
            .collect()
    }

    /// What the reader must know of placement changes during the run: the
    /// re-reads the watcher made, OSDs that changed state, and a change the
    /// watcher did not see in time (in the run's last poll period).
    /// With `mons_away` (they failed the watcher's last poll) no mon is asked.
    fn placement_change(&self, rados: &Rados, mons_away: bool) -> Vec<String> {
        let mut out = Vec::new();
        let Some(slots) = self.slots.as_ref() else {
            return out;
        };
        let start = slots.placement();
        let refreshes = slots.refreshes();
        if let Some(last) = refreshes.last() {
            let moved: u32 = refreshes.iter().map(|r| r.moved).sum();
            let outside: u32 = refreshes.iter().map(|r| r.outside).max().unwrap_or(0);
            out.push(format!(
                "the placement changed during the run: re-read {} time(s) (osdmap epoch {} -> {}, \
                 pg_num {} -> {}, {moved} PG primary change(s)); each op is tagged with the primary \
                 of the placement current when it was issued{}",
                refreshes.len(),
                start.epoch,
                last.epoch,
                start.pg_num,
                last.pg_num,
                if outside > 0 {
                    format!(
                        "; {outside} PG(s) moved to OSDs that did not serve the pool at the start: \
                         their ops are in the job's figures, in no per-OSD row"
                    )
                } else {
                    String::new()
                }
            ));
        }
        // One bounded mon command; when the mons do not answer, skip the rest
        // (each further command would wait out the op timeout too).
        if mons_away {
            return out;
        }
        let Ok(states) = probe::osd_states(rados) else {
            return out;
        };
        let changed: Vec<String> = states
            .iter()
            .filter(|s| !self.states.is_empty() && !self.states.contains(s))
            .map(|(id, up, inn)| {
                format!(
                    "osd.{id} now {} and {}",
                    if *up { "up" } else { "down" },
                    if *inn { "in" } else { "out" }
                )
            })
            .collect();
        if !changed.is_empty() {
            out.push(format!(
                "OSDs changed state during the run: {}",
                changed.join(", ")
            ));
        }
        let Ok(now) = probe::placement_now(rados, &self.pool, start.pool) else {
            return out;
        };
        let cur = slots.current();
        let moved = (0..now.pg_num)
            .filter(|pg| {
                cur.primary_of_pg(placement::stable_mod(*pg, cur.pg_num)) != now.primary_of_pg(*pg)
            })
            .count();
        if moved > 0 || now.pg_num != cur.pg_num {
            out.push(format!(
                "the placement changed at the end of the run, after its last re-read (osdmap epoch \
                 {} -> {}, pg_num {} -> {}, {moved} PG(s) with another primary): the run's last ops \
                 may be tagged with their old primary",
                cur.epoch, now.epoch, cur.pg_num, now.pg_num
            ));
        }
        out
    }

    /// Joins the job's slowest ops with the OSDs' own records of their
    /// slowest ops (`dump_historic_ops_by_duration`).
    pub fn tail(
        &self,
        rados: &Rados,
        out: Option<&JobOutcome>,
        warnings: &mut Vec<String>,
    ) -> Vec<crate::result::TailOp> {
        use crate::telemetry::historic::{join, ClientSlowOp};
        let rados = rados.telemetry();
        let (Some(slots), Some(out)) = (&self.slots, out) else {
            return Vec::new();
        };
        if self.before.is_empty() || out.slowest.is_empty() {
            return Vec::new();
        }
        let mut osd_ops = Vec::new();
        for osd in slots.osds() {
            match probe::historic_ops(rados, *osd) {
                Ok(v) => osd_ops.extend(v),
                Err(e) => {
                    warnings.push(format!(
                        "no OSD record of the slowest ops of osd.{osd}: {e}"
                    ));
                }
            }
        }
        let unix = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        out.slowest
            .iter()
            .filter_map(|s| {
                let (object, offset) = s.object.clone()?;
                let c = ClientSlowOp {
                    op: s.kind.as_str().into(),
                    object,
                    offset,
                    latency_ns: s.latency_ns,
                    submitted: unix(s.submitted),
                };
                // Same host clocks here; 50 ms of slack for another host's.
                let split = join(&c, &osd_ops, 0.05).and_then(|h| h.split());
                Some(crate::result::TailOp {
                    outside_osd_ns: split.as_ref().map(|x| c.latency_ns as f64 - x.total_ns),
                    op: c.op,
                    object: c.object,
                    offset: c.offset,
                    latency_ns: c.latency_ns,
                    submitted_unix: c.submitted,
                    osd: split,
                })
            })
            .collect()
    }

    /// The placement summary for the result.
    pub fn placement_info(&self) -> Option<PlacementInfo> {
        self.slots.as_ref().map(|s| PlacementInfo {
            pool_id: s.placement().pool,
            pg_num: s.placement().pg_num,
            epoch: s.placement().epoch,
            size: s.placement().acting.iter().map(Vec::len).max().unwrap_or(0) as u32,
            refreshes: s.refreshes(),
        })
    }
}

/// How often the placement watcher polls the osdmap epoch.
const PLACEMENT_POLL: Duration = Duration::from_secs(1);

/// Turns a refused data op (EPERM/EACCES) into an error naming the cap to add.
/// A timeout while every OSD is up counts as refused too: from reef on, the
/// mons issue no OSD ticket to a key without osd caps, so its ops time out
/// (ETIMEDOUT) instead of failing with EPERM as on pacific.
pub(crate) fn data_access(e: CephError, rados: &Rados, pool: &str) -> BenchError {
    let refused = match e.errno() {
        Some(libc::EPERM | libc::EACCES) => true,
        Some(libc::ETIMEDOUT) => probe::osd_states(rados)
            .is_ok_and(|s| !s.is_empty() && s.iter().all(|&(_, up, inn)| up && inn)),
        _ => false,
    };
    if refused {
        BenchError::NoAccess {
            entity: rados.entity().to_string(),
            pool: pool.to_string(),
            refused: Box::new(e),
        }
    } else {
        BenchError::Ceph(e)
    }
}

/// Seed 002's cache pitfall on the OSD side: the warning for reads of `area`
/// bytes when that fits in the memory the pool's OSDs may use
/// (`osd_memory_target` summed; BlueStore's cache autotunes within it, and
/// reads are cached by default), so reads may be answered from OSD RAM
/// rather than the drives. `None` when the area is larger or the targets
/// are unknown.
pub fn cache_fit_warning(area: u64, pool: Option<&crate::result::PoolSettings>) -> Option<String> {
    let p = pool?;
    let held = p.memory_held_bytes?;
    if area == 0 || area > held {
        return None;
    }
    let each: Vec<u64> = p.osd_memory_target.iter().map(|o| o.bytes).collect();
    let per = match (each.iter().min(), each.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => {
            format!("{} x {}", each.len(), crate::units::fmt_bytes(*lo))
        }
        _ => format!("{} OSDs", each.len()),
    };
    Some(format!(
        "the {} that is read fits in the pool's OSD memory ({} osd_memory_target = {}, within which \
         BlueStore sizes its cache): reads may come from OSD RAM, not the drives; use a test \
         area larger than {} to measure the drives",
        crate::units::fmt_bytes(area),
        per,
        crate::units::fmt_bytes(held),
        crate::units::fmt_bytes(held)
    ))
}

/// The pool's settings for the result document; a failed probe becomes a
/// warning (the run goes on).
pub fn pool_settings(
    rados: &Rados,
    pool: &str,
    warnings: &mut Vec<String>,
) -> Option<crate::result::PoolSettings> {
    match probe::pool_settings(rados, pool) {
        Ok(s) => {
            if s.memory_held_bytes.is_none() {
                warnings.push(
                    "no osd_memory_target: `config get osd.N osd_memory_target` failed; the cost line is missing".into(),
                );
            }
            Some(s)
        }
        Err(e) => {
            warnings.push(format!(
                "no pool settings: reading them from the mons failed ({e}); it needs mon 'allow r'"
            ));
            None
        }
    }
}

/// This tool's identity for the result document.
pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "cephbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// Drives `job` while sampling `counters` once a second (the timeline, and
/// the live line on stderr when `live`).
pub async fn sampled<F: Future>(
    job: F,
    counters: Vec<Arc<Counters>>,
    ramp: Duration,
    live: bool,
) -> (F::Output, Vec<Sample>) {
    let start = Instant::now();
    let mut sampler = Sampler::new(counters, start, ramp, live);
    tokio::pin!(job);
    let mut tick = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let out = loop {
        tokio::select! {
            out = &mut job => break out,
            _ = tick.tick() => sampler.tick(),
        }
    };
    sampler.tick();
    (out, sampler.into_samples())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{OsdMemory, PoolSettings};

    fn pool(targets: &[u64]) -> PoolSettings {
        PoolSettings {
            name: "p".into(),
            id: 1,
            size: 3,
            min_size: 2,
            pg_num: 32,
            crush_rule: "replicated_rule".into(),
            device_classes: vec!["ssd".into()],
            osds: (0..targets.len() as i32).collect(),
            osd_memory_target: targets
                .iter()
                .enumerate()
                .map(|(i, &bytes)| OsdMemory {
                    osd: i as i32,
                    bytes,
                    rss_bytes: None,
                })
                .collect(),
            memory_held_bytes: (!targets.is_empty()).then(|| targets.iter().sum()),
            memory_measured_bytes: None,
        }
    }

    #[test]
    fn warns_when_the_read_area_fits_in_the_osds_memory() {
        let gib = 1u64 << 30;
        let p = pool(&[4 * gib; 3]);
        let w = cache_fit_warning(2 * gib, Some(&p)).expect("2 GiB fits in 12 GiB");
        assert!(
            w.contains("2 GiB") && w.contains("3 x 4 GiB") && w.contains("larger than 12 GiB"),
            "{w}"
        );
        assert!(cache_fit_warning(12 * gib, Some(&p)).is_some());
        assert_eq!(cache_fit_warning(12 * gib + 1, Some(&p)), None);
        assert_eq!(
            cache_fit_warning(gib, Some(&pool(&[]))),
            None,
            "targets unknown"
        );
        assert_eq!(cache_fit_warning(gib, None), None);
        let mixed = pool(&[4 * gib, 8 * gib]);
        assert!(cache_fit_warning(gib, Some(&mixed))
            .unwrap()
            .contains("(2 OSDs osd_memory_target = 12 GiB"));
    }
}
