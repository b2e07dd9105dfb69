//! `cephbench rbd`: creates (or opens) an image, preconditions its test
//! area, runs `numjobs` jobs on their own image handles and offset ranges,
//! removes what it created, and assembles the result.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;

use super::assemble::{cluster_info, job_report, now_unix, SLOW_OP};
use super::error::{check_quota_room, diagnose, first_op_error, BenchError};
use super::measure::{measure, sampled, start_at, Cleanup, Job, Outcome, Ran, Setup, Timelines};
use super::pool::{cache_fit_warning, check_rbd_pools, pool_settings};
use crate::ceph::{self, Image, ImageInfo, IoCtx, Rados};
use crate::engine::{self, JobOutcome, OpKind, RunSpec, StopReason, StopRx};
use crate::placement::OsdSlots;
use crate::progress::{Counters, WorkerProgress};
use crate::result::{ClusterInfo, JobReport, Precondition, RbdWorkload, Workload};
use crate::workload::rbd::{RbdMode, RbdSource, RbdTarget};

/// The object holding a pool's RBD trash.
const RBD_TRASH: &std::ffi::CStr = c"rbd_trash";

/// The object size of the images cephbench creates (librbd's default order 22).
const RBD_OBJECT_SIZE: u64 = 4 << 20;

/// Which image to use.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum ImageChoice {
    /// An existing image; written only with `allow_write`.
    Existing {
        /// Its name.
        name: String,
        /// `--allow-write`.
        allow_write: bool,
    },
    /// A new, uniquely named image, removed afterwards unless `keep`.
    Create {
        /// Its name (see [`new_image_name`]), known before the run starts so
        /// that an interrupt can name the exact cleanup command.
        name: String,
        /// Size in bytes.
        size: u64,
        /// `--keep`.
        keep: bool,
        /// Feature bits (`None`: the cluster's `rbd_default_features`).
        features: Option<u64>,
    },
}

/// A validated `cephbench rbd` invocation (serializable: group runs send
/// it to the agents).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RbdConfig {
    /// Pool (of the image; with `data_pool`, of its metadata only).
    pub pool: String,
    /// `--data-pool`: a created image's data objects go to this pool (as
    /// `rbd create --data-pool`). An existing image's data pool is read
    /// from the image instead.
    #[serde(default)]
    pub data_pool: Option<String>,
    /// Image to use.
    pub image: ImageChoice,
    /// `--rw`.
    pub mode: RbdMode,
    /// `--rwmix-read` (percent).
    pub rwmix_read: u8,
    /// `--bs`.
    pub bs: u64,
    /// `--iodepth` per job.
    pub iodepth: usize,
    /// `--numjobs`.
    pub numjobs: usize,
    /// `--duration` (measured, after the ramp).
    pub duration: Option<Duration>,
    /// `--io-total`: bytes per job.
    pub io_total: Option<u64>,
    /// `--ramp`.
    pub ramp: Duration,
    /// `--test-area` (`None`: the whole image).
    pub test_area: Option<u64>,
    /// `--fsync-every`.
    pub fsync_every: Option<u64>,
    /// `--rbd-cache on` (the caller configured the connection accordingly).
    pub rbd_cache: bool,
    /// `--norandommap`: random offsets uniform with repeats instead of each
    /// block once per pass (fio's option and default).
    #[serde(default)]
    pub norandommap: bool,
    /// `--end-flush`: flush the image after the last write and report the
    /// write rate through that flush (dd conv=fsync, rbd bench).
    #[serde(default)]
    pub end_flush: bool,
    /// Precondition the test area (unless `--no-precondition`).
    pub precondition: bool,
    /// The test area was already written by an earlier run on the same image
    /// (a suite's first job): skip preconditioning and record this pass.
    pub prior_precondition: Option<Precondition>,
    /// Live line on stderr.
    pub live: bool,
    /// Probe placement and OSD counters around the run.
    pub telemetry: bool,
    /// Also sample the OSD counters this often during the run (zero: only
    /// before and after).
    #[serde(default = "crate::telemetry::default_counter_interval")]
    pub counter_interval: std::time::Duration,
    /// The timeline's interval (`--interval`): one sample of IOPS, mean,
    /// p50, p99 and max per interval and op kind.
    #[serde(default = "crate::progress::default_interval")]
    pub interval: std::time::Duration,
    /// `--steady`: stop once steady (the duration is `--steady-max`).
    #[serde(default)]
    pub steady: Option<crate::steady::SteadyConfig>,
    /// `--op-history N`: raise the OSDs' op history to N for the run and
    /// take per-op evidence from it (`None`: the OSDs are left alone).
    #[serde(default)]
    pub op_history: Option<u32>,
    /// `--drop-caches`: every OSD of the pool drops its caches (`cache drop`)
    /// just before a job that reads.
    #[serde(default)]
    pub drop_caches: bool,
    /// Start the measured jobs at this time (after creating and
    /// preconditioning the image), for runs coordinated across clients.
    #[serde(default)]
    pub start_at: Option<std::time::SystemTime>,
    /// Open loop at this rate (`--rate`); `None`: closed loop.
    #[serde(default)]
    pub rate: Option<crate::engine::RateSpec>,
    /// `--disrupt`: what is done to an OSD during the job.
    #[serde(default)]
    pub disrupt: Option<crate::disrupt::DisruptPlan>,
}

/// The client settings of `--rbd-cache on|off`. On means write-back from the
/// first write, as the `rbd` CLI sets it and as a guest sees it once it sent
/// its first flush: librbd's default `rbd_cache_writethrough_until_flush`
/// would keep a run without flushes in write-through (writes acknowledged by
/// the OSDs) however the cache is set.
pub fn rbd_cache_overrides(on: bool) -> Vec<(String, String)> {
    let mut v = vec![("rbd_cache".to_string(), on.to_string())];
    if on {
        v.push((
            "rbd_cache_writethrough_until_flush".to_string(),
            "false".to_string(),
        ));
    }
    v
}

/// Runs a `cephbench rbd` benchmark.
pub async fn run_rbd(rados: &Rados, cfg: &RbdConfig, stop: StopRx) -> Result<Outcome, BenchError> {
    let cluster = cluster_info(rados)?;
    if matches!(cfg.image, ImageChoice::Create { .. }) {
        // Before anything is written: the pools can hold the image.
        check_rbd_pools(rados, &cfg.pool, cfg.data_pool.as_deref())?;
    }
    let mut io = rados.ioctx(&cfg.pool)?;
    // A full pool (quota reached, or an OSD at its full ratio) fails writes
    // at once with EDQUOT/ENOSPC instead of pausing them until the op
    // timeout: librbd's ImageCtx duplicates this ioctx, FULL_TRY included.
    io.set_pool_full_try();
    let started_unix = now_unix();
    let writes = cfg.mode.writes(cfg.rwmix_read);

    let (name, created) = match &cfg.image {
        ImageChoice::Existing { name, allow_write } => {
            if writes && !allow_write {
                return Err(BenchError::ReadOnlyImage {
                    image: name.clone(),
                    why: format!("--rw {}", cfg.mode.as_str()),
                });
            }
            (name.clone(), false)
        }
        ImageChoice::Create {
            name,
            size,
            features,
            ..
        } => {
            // librbd removes an image by first moving it to the pool's trash,
            // which needs the `rbd_trash` object: a full pool cannot create
            // it, and the removal then fails (ENOENT). Make sure it exists
            // (empty, as any `rbd rm` leaves it) while the pool has room, so
            // the image can be removed even after the run filled the pool; on
            // a pool that is full already this fails first, naming the quota.
            io.create_if_missing(RBD_TRASH)
                .map_err(|e| first_op_error(rados, &cfg.pool, e))?;
            // The preconditioning writes the whole test area: refuse it now
            // if the quota of the pool the data goes to has no room for it
            // (a timed write job may not reach the quota; its EDQUOT is
            // reported when it does).
            if cfg.precondition {
                let area = cfg.test_area.unwrap_or(*size).min(*size);
                let data = cfg.data_pool.as_deref().unwrap_or(&cfg.pool);
                check_quota_room(rados, data, area, RBD_OBJECT_SIZE)?;
            }
            ceph::create_image_in(&io, name, *size, *features, cfg.data_pool.as_deref())
                .map_err(|e| first_op_error(rados, &cfg.pool, e))?;
            settle_after_create(rados, &io, cfg.data_pool.as_deref());
            (name.clone(), true)
        }
    };
    let run = ImageRun {
        rados,
        io: &io,
        cfg,
        name: &name,
        created,
        cluster,
        started_unix,
    };
    let mut result = run_on_image(run, stop).await;
    if created && !matches!(cfg.image, ImageChoice::Create { keep: true, .. }) {
        // Every handle on the image is closed by now (run_on_image owns them).
        if cfg.live {
            eprintln!("cleaning up: removing image '{name}'");
        }
        let removed = ceph::remove_image(&io, &name);
        match (&mut result, removed) {
            (_, Ok(())) => {}
            (Ok(o), Err(e)) => {
                let hint = format!("cephbench cleanup -p {} --image {name}", cfg.pool);
                let gone = matches!(o.error, Some(BenchError::PoolDeleted { .. }));
                if !gone {
                    o.result.warnings.push(format!(
                        "could not remove image '{name}' ({e}); remove it with `{hint}`"
                    ));
                    o.leftovers = Some(hint);
                }
            }
            (Err(_), Err(e)) => eprintln!(
                "cephbench: warning: could not remove image '{name}' ({e}); remove it with `cephbench cleanup -p {} --image {name}`",
                cfg.pool
            ),
        }
    }
    result
}

fn open(io: &IoCtx, pool: &str, name: &str) -> Result<Image, BenchError> {
    Image::open(io, name).map_err(|e| match e.errno() {
        Some(libc::ENOENT) => BenchError::NoSuchImage {
            pool: pool.into(),
            image: name.into(),
        },
        _ => e.into(),
    })
}

/// The pool holding `image`'s data objects when it is not `io`'s (an
/// image made with a data pool), by name.
fn data_pool_of(rados: &Rados, io: &IoCtx, image: &Image) -> Result<Option<String>, BenchError> {
    let id = image.data_pool_id();
    if id < 0 || id == io.pool_id() {
        return Ok(None);
    }
    Ok(Some(rados.pool_name(id)?))
}

/// 1 MiB (the lab method's fill: `fio --rw=write --bs=1M --iodepth=16`), else
/// the larger of 64 KiB or `bs` that divides `area`.
fn precondition_bs(area: u64, bs: u64) -> u64 {
    [1 << 20, 64 << 10]
        .into_iter()
        .find(|b| area % b == 0 && *b <= area)
        .unwrap_or(bs)
}

/// Preconditions `image`: writes its first `area` bytes once, sequentially
/// (blocks of 1 MiB, 64 KiB or `bs`, whichever divides `area` first), 16
/// in flight. Returns the pass, whether `stop` cut it short, and the error
/// that ended it early (e.g. the pool filled up), if any.
async fn write_test_area(
    rados: &Rados,
    pool: &str,
    image: &Image,
    area: u64,
    bs: u64,
    live: bool,
    stop: &StopRx,
) -> (Precondition, bool, Option<BenchError>) {
    let started_unix = now_unix();
    let pbs = precondition_bs(area, bs);
    let mut source = RbdSource::new(RbdMode::Write, 0, pbs, 0, area, None, started_unix);
    let mut target = RbdTarget::new(image, pbs, started_unix, 16, None);
    let spec = RunSpec {
        concurrency: 16,
        duration: None,
        ramp: Duration::ZERO,
        max_ops: None,
        max_bytes: Some(area),
        slow_op: SLOW_OP,
        rate: None,
    };
    let counters = Arc::new(Counters::default());
    let job = engine::run(
        &mut target,
        &mut source,
        &spec,
        stop.clone(),
        WorkerProgress::new(Arc::clone(&counters)),
    );
    let (mut out, _, _) = sampled(
        job,
        vec![counters],
        Duration::ZERO,
        crate::progress::DEFAULT_INTERVAL,
        live,
        None,
        &crate::progress::JobClock::default(),
    )
    .await;
    let error = out.first_error.take().map(|e| diagnose(rados, pool, e));
    let k = out.kind(OpKind::Write);
    (
        Precondition {
            bytes: k.bytes,
            block_size: pbs,
            elapsed_s: out.elapsed.as_secs_f64(),
        },
        out.stop == StopReason::Interrupted,
        error,
    )
}

/// After creating an image in `io`'s pool (its data in `data_pool`): waits
/// (at most [`SNAP_PURGE_WAIT`]) for the OSDs to purge the snapshot librbd
/// made and removed while creating it, whose osdmap change would otherwise
/// land in the measurement as the cluster not being quiet.
fn settle_after_create(rados: &Rados, io: &IoCtx, data_pool: Option<&str>) {
    let mut ids = vec![io.pool_id()];
    if let Some(id) = data_pool.and_then(|d| rados.pool_id(d).ok()) {
        ids.push(id);
    }
    crate::telemetry::cluster::wait_snaps_purged(rados, &ids, SNAP_PURGE_WAIT);
}

/// The longest wait for the OSDs to purge image creation's snapshot (~3 s
/// on an idle 3-OSD pacific cluster).
const SNAP_PURGE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Creates image `name` (`size` bytes) in `pool`, its data in `data_pool`
/// if given, and preconditions its first `area` bytes (see
/// [`RbdConfig::prior_precondition`]): a group agent's own image for the rbd
/// jobs of a suite. On failure or interruption the image is removed again.
#[allow(clippy::too_many_arguments)]
pub async fn prepare_image(
    rados: &Rados,
    pool: &str,
    data_pool: Option<&str>,
    name: &str,
    size: u64,
    area: u64,
    bs: u64,
    stop: StopRx,
) -> Result<Precondition, BenchError> {
    check_rbd_pools(rados, pool, data_pool)?;
    let io = rados.ioctx(pool)?;
    ceph::create_image_in(&io, name, size, None, data_pool)
        .map_err(|e| first_op_error(rados, pool, e))?;
    settle_after_create(rados, &io, data_pool);
    let data = data_pool.unwrap_or(pool);
    let done = match open(&io, pool, name) {
        Ok(img) => {
            let r = write_test_area(rados, data, &img, area.min(size), bs, false, &stop).await;
            drop(img);
            match r {
                (_, _, Some(e)) => Err(e),
                (p, stopped, None) => Ok((p, stopped)),
            }
        }
        Err(e) => Err(e),
    };
    match done {
        Ok((p, false)) => Ok(p),
        other => {
            let _ = ceph::remove_image(&io, name);
            match other {
                Err(e) => Err(e),
                _ => Err(BenchError::Group(format!(
                    "interrupted while preconditioning image '{name}' (removed)"
                ))),
            }
        }
    }
}

/// What `run_rbd` hands the measurement: the pool it opened, the image
/// (and whether the run created it), the cluster and when the run started.
struct ImageRun<'a> {
    rados: &'a Rados,
    io: &'a IoCtx,
    cfg: &'a RbdConfig,
    name: &'a str,
    created: bool,
    cluster: ClusterInfo,
    started_unix: u64,
}

async fn run_on_image(run: ImageRun<'_>, stop: StopRx) -> Result<Outcome, BenchError> {
    let ImageRun {
        rados,
        io,
        cfg,
        name,
        created,
        cluster,
        started_unix,
    } = run;
    let first = open(io, &cfg.pool, name)?;
    let info = first.info()?;
    // Where the image's data objects live: its data pool, if it has one.
    // The I/O, the capacity, the placement and the per-OSD rows are there.
    let data_pool = data_pool_of(rados, io, &first)?;
    let io_pool = data_pool.as_deref().unwrap_or(&cfg.pool);
    let (area, blocks_per_job) = test_area_blocks(cfg, name, info.size)?;

    let may_write = created
        || matches!(
            cfg.image,
            ImageChoice::Existing {
                allow_write: true,
                ..
            }
        );
    let mut warnings = Vec::new();
    let pool_settings = pool_settings(rados, io_pool, &mut warnings);
    let mut precondition = None;
    let mut interrupted = false;
    let mut pre_error = None;
    if let Some(p) = &cfg.prior_precondition {
        precondition = Some(p.clone());
    } else if cfg.precondition && may_write {
        if cfg.live {
            eprintln!(
                "preconditioning: writing the test area ({}) once, {} sequential writes, 16 in flight",
                crate::units::fmt_bytes(area),
                crate::units::fmt_bytes(precondition_bs(area, cfg.bs))
            );
        }
        // A failed precondition (e.g. the pool filled up) skips the run but
        // still reports what was written, like an interrupt.
        let (p, stopped, error) =
            write_test_area(rados, io_pool, &first, area, cfg.bs, cfg.live, &stop).await;
        interrupted = stopped;
        pre_error = error;
        precondition = Some(p);
    } else if cfg.mode.reads(cfg.rwmix_read) {
        let why = if !cfg.precondition {
            "--no-precondition"
        } else {
            "the image is not cephbench's and --allow-write was not given"
        };
        warnings.push(format!(
            "NOT PRECONDITIONED ({why}): reads of never-written blocks are answered with zeros \
             without touching a disk, so read figures may be far too good"
        ));
    }
    if cfg.mode.reads(cfg.rwmix_read) {
        warnings.extend(cache_fit_warning(area, pool_settings.as_ref()));
    }
    if cfg.rbd_cache && cfg.mode.writes(cfg.rwmix_read) {
        warnings.push(
            "rbd cache on: writes may be acknowledged from client RAM, not by the OSDs".into(),
        );
    }

    let skip_run = interrupted || pre_error.is_some();
    let stop_rx = stop.clone();
    let job = RbdJob {
        cfg,
        io,
        name,
        data_pool: data_pool.clone(),
        created,
        first: (!skip_run).then_some(first),
        info,
        area,
        per_job: blocks_per_job * cfg.bs,
        spec: run_spec(cfg),
        started_unix,
        precondition,
        end_flush: None,
        stop,
    };
    let setup = Setup {
        rados,
        pool: io_pool,
        cluster,
        started_unix,
        telemetry: cfg.telemetry && !skip_run,
        counter_interval: cfg.counter_interval,
        op_history: cfg.op_history,
        drop_caches: cfg.mode.reads(cfg.rwmix_read).then_some(cfg.drop_caches),
        open_loop: cfg.rate.is_some(),
        steady: cfg.steady.clone(),
        pool_settings,
        warnings,
        interrupted,
        error: pre_error,
        disrupt: cfg.disrupt.clone().filter(|_| !skip_run),
        ramp: cfg.ramp,
        stop: Some(stop_rx),
    };
    measure(setup, job).await
}

/// The test area on image `name` of `size` bytes, and the blocks of `--bs`
/// each job's slice of it holds; an area that does not fit or divide is
/// refused, naming the fix.
fn test_area_blocks(cfg: &RbdConfig, name: &str, size: u64) -> Result<(u64, u64), BenchError> {
    let area = cfg.test_area.unwrap_or(size);
    if area > size {
        return Err(BenchError::BadGeometry(format!(
            "--test-area {} is larger than image '{name}' ({}); use --test-area {} or less",
            crate::units::fmt_bytes(area),
            crate::units::fmt_bytes(size),
            crate::units::fmt_bytes(size)
        )));
    }
    if area == 0 || area % cfg.bs != 0 {
        return Err(BenchError::BadGeometry(format!(
            "--bs {} does not divide the test area {} of image '{name}'; pick a --bs or --test-area so that it does",
            crate::units::fmt_bytes(cfg.bs),
            crate::units::fmt_bytes(area)
        )));
    }
    let blocks_per_job = area / cfg.bs / cfg.numjobs as u64;
    if blocks_per_job == 0 {
        return Err(BenchError::BadGeometry(format!(
            "the test area {} holds fewer than --numjobs {} blocks of {}",
            crate::units::fmt_bytes(area),
            cfg.numjobs,
            crate::units::fmt_bytes(cfg.bs)
        )));
    }
    Ok((area, blocks_per_job))
}

/// The engine's limits for each of the run's jobs: one op in flight with
/// `--fsync-every`, the rate split evenly across the jobs.
fn run_spec(cfg: &RbdConfig) -> RunSpec {
    RunSpec {
        concurrency: if cfg.fsync_every.is_some() {
            1
        } else {
            cfg.iodepth
        },
        duration: cfg.duration,
        ramp: cfg.ramp,
        max_ops: None,
        max_bytes: cfg.io_total,
        slow_op: SLOW_OP,
        // The rate is split evenly across the jobs.
        rate: cfg.rate.map(|r| crate::engine::RateSpec {
            ops_per_sec: r.ops_per_sec / cfg.numjobs.max(1) as f64,
            ..r
        }),
    }
}

/// The rbd part of the measure step: `numjobs` jobs on their own handles
/// of one image and their own offset ranges; after them, the end flush.
struct RbdJob<'a> {
    cfg: &'a RbdConfig,
    io: &'a IoCtx,
    name: &'a str,
    /// The image's data pool, if it has one.
    data_pool: Option<String>,
    created: bool,
    /// The handle opened first (the first job's); `None`: nothing is run.
    first: Option<Image>,
    info: ImageInfo,
    area: u64,
    per_job: u64,
    spec: RunSpec,
    started_unix: u64,
    precondition: Option<Precondition>,
    /// `--end-flush`: how long the flush took, or how it failed.
    end_flush: Option<Result<Duration, ceph::CephError>>,
    stop: StopRx,
}

impl Job for RbdJob<'_> {
    async fn run(
        &mut self,
        slots: Option<&OsdSlots>,
        clock: &crate::progress::JobClock,
    ) -> Result<Option<Ran>, BenchError> {
        let Some(first) = self.first.take() else {
            return Ok(None);
        };
        let cfg = self.cfg;
        start_at(cfg.start_at).await;
        let mut images = vec![first];
        for _ in 1..cfg.numjobs {
            images.push(open(self.io, &cfg.pool, self.name)?);
        }
        let counters: Vec<Arc<Counters>> = (0..cfg.numjobs).map(|_| Arc::default()).collect();
        let mut targets: Vec<RbdTarget> = images
            .iter()
            .map(|img| {
                RbdTarget::new(
                    img,
                    cfg.bs,
                    self.started_unix ^ 0xB10C,
                    cfg.iodepth,
                    slots.map(|s| (s, &self.info)),
                )
            })
            .collect();
        let mut sources: Vec<RbdSource> = (0..cfg.numjobs)
            .map(|j| {
                let s = RbdSource::new(
                    cfg.mode,
                    cfg.rwmix_read,
                    cfg.bs,
                    j as u64 * self.per_job,
                    self.per_job,
                    cfg.fsync_every,
                    self.started_unix.wrapping_add(j as u64 * 0x9E37_79B9),
                );
                if cfg.norandommap {
                    s
                } else {
                    s.with_random_map()
                }
            })
            .collect();
        let measured_start = std::time::SystemTime::now();
        let jobs = targets
            .iter_mut()
            .zip(sources.iter_mut())
            .zip(counters.iter())
            .map(|((t, s), c)| {
                engine::run(
                    t,
                    s,
                    &self.spec,
                    self.stop.clone(),
                    WorkerProgress::new(Arc::clone(c)),
                )
            });
        let (outs, timeline, steady) = sampled(
            join_all(jobs),
            counters,
            cfg.ramp,
            cfg.interval,
            cfg.live,
            cfg.steady.as_ref(),
            clock,
        )
        .await;
        drop(targets);
        let out = JobOutcome::merge(outs);
        let done = out
            .as_ref()
            .is_some_and(|o| o.stop != StopReason::Interrupted && o.first_error.is_none());
        if cfg.end_flush && done {
            self.end_flush = Some(flush_all(&images).await);
        }
        drop(images);
        Ok(out.map(|out| Ran {
            out,
            timeline,
            steady,
            measured_start,
            ramp: cfg.ramp,
        }))
    }

    fn reports(&self, out: &JobOutcome, mut timelines: Timelines) -> Vec<JobReport> {
        let cfg = self.cfg;
        let kinds: &[OpKind] = match (
            cfg.mode.reads(cfg.rwmix_read),
            cfg.mode.writes(cfg.rwmix_read),
        ) {
            (true, false) => &[OpKind::Read],
            (false, true) => &[OpKind::Write],
            _ => &[OpKind::Read, OpKind::Write],
        };
        let mut jobs = Vec::new();
        for k in kinds
            .iter()
            .chain(cfg.fsync_every.iter().map(|_| &OpKind::Flush))
        {
            let name = format!("{}/{}", cfg.mode.as_str(), k.as_str());
            let timeline = std::mem::take(&mut timelines[k.index()]);
            let mut job = job_report(&name, *k, out, false, timeline);
            if *k == OpKind::Write {
                match &self.end_flush {
                    Some(Ok(flush)) => {
                        job.end_flush = Some(crate::result::EndFlush::new(
                            job.bytes,
                            job.elapsed_s,
                            flush.as_secs_f64(),
                        ))
                    }
                    // The writes are not known to be durable: the flush is
                    // an op of this job that failed.
                    Some(Err(e)) => {
                        job.errors += 1;
                        let errno = e.errno().unwrap_or(0).to_string();
                        *job.errors_by_errno.entry(errno).or_default() += 1;
                        job.first_error
                            .get_or_insert_with(|| format!("the end flush failed: {e}"));
                    }
                    None => {}
                }
            }
            jobs.push(job);
        }
        jobs
    }

    async fn finish(
        &mut self,
        out: &JobOutcome,
        _error: Option<&BenchError>,
        warnings: &mut Vec<String>,
    ) -> Cleanup {
        if out.short_reads > 0 {
            warnings.push(format!(
                "{} reads returned fewer bytes than asked; they count as errors, only the bytes \
                 that came back are counted",
                out.short_reads
            ));
        }
        // The image is removed by `run_rbd`, once every handle on it is closed.
        Cleanup::default()
    }

    fn workload(self) -> Workload {
        let cfg = self.cfg;
        Workload::Rbd(RbdWorkload {
            pool: cfg.pool.clone(),
            data_pool: self.data_pool,
            image: self.name.to_string(),
            image_created: self.created,
            image_size: self.info.size,
            object_size: self.info.object_size,
            features: self.info.features,
            test_area: self.area,
            rw: cfg.mode.as_str().into(),
            rwmix_read: cfg.rwmix_read,
            bs: cfg.bs,
            iodepth: self.spec.concurrency as u64,
            numjobs: cfg.numjobs as u64,
            duration_s: cfg.duration.map(|d| d.as_secs_f64()),
            io_total: cfg.io_total,
            ramp_s: cfg.ramp.as_secs_f64(),
            fsync_every: cfg.fsync_every,
            rbd_cache: cfg.rbd_cache,
            random_map: cfg.mode.is_random().then_some(!cfg.norandommap),
            end_flush: cfg.end_flush,
            // Only a pass that wrote the whole test area preconditioned it.
            preconditioned: self
                .precondition
                .as_ref()
                .is_some_and(|p| p.bytes >= self.area),
            precondition: self.precondition,
        })
    }
}

/// How long one bounded end flush may take before it counts as failed.
const END_FLUSH_TIMEOUT: Duration = Duration::from_secs(120);

/// Flushes every handle at once (`--end-flush`); the wall time until the
/// last one completed, or the first failure.
async fn flush_all(images: &[Image]) -> Result<Duration, ceph::CephError> {
    let start = std::time::Instant::now();
    let flushes = images
        .iter()
        .map(|img| async move { img.flush()?.await.map(|_| ()) });
    match tokio::time::timeout(END_FLUSH_TIMEOUT, join_all(flushes)).await {
        Ok(results) => {
            for r in results {
                r?;
            }
            Ok(start.elapsed())
        }
        Err(_) => Err(ceph::CephError::Timeout {
            what: "the end flush".into(),
            limit: END_FLUSH_TIMEOUT,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precondition_block_divides_the_area() {
        assert_eq!(precondition_bs(2 << 30, 4096), 1 << 20);
        assert_eq!(precondition_bs(3 << 20, 4096), 1 << 20);
        assert_eq!(precondition_bs(12288, 4096), 4096);
    }

    #[test]
    fn error_names_the_image_and_the_fix() {
        let e = BenchError::ReadOnlyImage {
            image: "vm-100-disk-0".into(),
            why: "--rw randwrite".into(),
        };
        let s = e.to_string();
        assert!(
            s.contains("vm-100-disk-0") && s.contains("--allow-write"),
            "{s}"
        );
    }
}
