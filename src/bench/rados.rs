//! `cephbench rados`: checks the run's metadata, writes or reads the run's
//! objects through the engine, removes what it created, and assembles the
//! result.
#![forbid(unsafe_code)]

use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::assemble::{cluster_info, job_report, now_unix, SLOW_OP};
use super::error::{check_write_limits, data_access, diagnose, BenchError};
use super::measure::{measure, sampled, start_at, Cleanup, Job, Outcome, Ran, Setup, Timelines};
use super::pool::{cache_fit_warning, create_pool, pool_settings, remove_created_pool, PoolSpec};
use crate::ceph::{CephError, IoCtx, Rados};
use crate::engine::{self, JobOutcome, OpKind, RunSpec, StopRx};
use crate::names::{GROUP_PREFIX, IMAGE_PREFIX};
use crate::objects::{self, RunMeta};
use crate::placement::OsdSlots;
use crate::progress::{Counters, WorkerProgress};
use crate::result::{JobReport, RadosWorkload, Workload};
use crate::workload::rados::{Layout, RadosMode, RadosSource, RadosTarget, WriteDest};

/// A validated `cephbench rados` invocation (serializable: group runs send it
/// to the agents).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RadosConfig {
    /// Pool to use.
    pub pool: String,
    /// Workload.
    pub mode: RadosMode,
    /// Bytes per op (for reads: taken from the write run).
    pub block_size: u64,
    /// Bytes per object (for reads: taken from the write run).
    pub object_size: u64,
    /// Ops in flight.
    pub concurrency: usize,
    /// Measured duration.
    pub duration: Option<Duration>,
    /// Ramp-up excluded from the figures.
    pub ramp: Duration,
    /// Op limit.
    pub max_ops: Option<u64>,
    /// Object limit for writes.
    pub max_objects: Option<u64>,
    /// RADOS namespace of every object of the run ("" for the default).
    #[serde(default)]
    pub namespace: String,
    /// Run name.
    pub run_name: String,
    /// Keep written objects.
    pub no_cleanup: bool,
    /// Wrap `seq` around.
    pub wrap: bool,
    /// Where writes put their payload (`--write-object/-omap/-xattr`).
    #[serde(default)]
    pub write_dest: WriteDest,
    /// How reads are checked (writes: none).
    #[serde(default)]
    pub verify: objects::VerifyMode,
    /// Print the per-second line to stderr.
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
    /// `--create-pool`: create the pool if it does not exist (and remove it
    /// afterwards, when it was created by this run and cleanup is on).
    pub create_pool: Option<PoolSpec>,
    /// Start the measured ops at this time (after every preparation), for
    /// runs coordinated across clients; `None`: at once.
    #[serde(default)]
    pub start_at: Option<std::time::SystemTime>,
    /// Open loop at this rate (`--rate`); `None`: closed loop.
    #[serde(default)]
    pub rate: Option<crate::engine::RateSpec>,
    /// `--disrupt`: what is done to an OSD during the job.
    #[serde(default)]
    pub disrupt: Option<crate::disrupt::DisruptPlan>,
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("names built by cephbench have no NUL")
}

/// Reads a run's metadata; `None` if there is none.
pub async fn read_meta(io: &IoCtx, run: &str) -> Result<Option<RunMeta>, BenchError> {
    let name = objects::meta_name(run);
    let done = io.read(&cstr(&name), vec![0u8; 64 * 1024], 0)?.await?;
    if done.ret == -i64::from(libc::ENOENT) {
        return Ok(None);
    }
    let n = done.check(|| format!("read metadata object '{name}'"))? as usize;
    RunMeta::parse(&done.buf[..n])
        .map(Some)
        .map_err(|why| BenchError::BadMeta {
            pool: io.pool_name().into(),
            name,
            why,
        })
}

/// Writes (replaces) a run's metadata object.
pub async fn write_meta(io: &IoCtx, meta: &RunMeta) -> Result<(), CephError> {
    let name = objects::meta_name(&meta.run_name);
    let body = serde_json::to_vec(meta).expect("metadata serializes");
    let done = io.write_full(&cstr(&name), &body)?.await?;
    done.check(|| format!("write metadata object '{name}'"))?;
    Ok(())
}

/// Removes objects by name with up to `concurrency` removals in flight;
/// objects already gone are fine. Returns how many were removed.
pub async fn remove_objects(
    io: &IoCtx,
    names: impl IntoIterator<Item = String>,
    concurrency: usize,
) -> Result<u64, CephError> {
    let mut names = names.into_iter();
    let mut inflight = FuturesUnordered::new();
    let mut removed = 0;
    loop {
        while inflight.len() < concurrency.max(1) {
            let Some(n) = names.next() else { break };
            let c = cstr(&n);
            let fut = io.remove(&c)?;
            inflight.push(async move { (n, fut.await) });
        }
        let Some((name, res)) = inflight.next().await else {
            break;
        };
        let done = res?;
        if done.ret == -i64::from(libc::ENOENT) {
            continue;
        }
        done.check(|| format!("remove object '{name}'"))?;
        removed += 1;
    }
    Ok(removed)
}

/// Removes a finished write run: its data objects and its metadata.
pub async fn remove_run(io: &IoCtx, meta: &RunMeta, concurrency: usize) -> Result<u64, CephError> {
    let prefix = objects::data_prefix(&meta.run_name);
    let names = (0..meta.objects()).map(|i| format!("{prefix}{i}"));
    let n = remove_objects(io, names, concurrency).await?;
    let m = remove_objects(io, [objects::meta_name(&meta.run_name)], 1).await?;
    Ok(n + m)
}

/// Runs a `cephbench rados` benchmark.
pub async fn run_rados(
    rados: &Rados,
    cfg: &RadosConfig,
    stop: StopRx,
) -> Result<Outcome, BenchError> {
    let cluster = cluster_info(rados)?;
    let (mut io, created_pool) = open_or_create_pool(rados, cfg)?;
    // A full pool fails writes with EDQUOT/ENOSPC at once instead of pausing
    // them in the client until the op timeout.
    io.set_pool_full_try();
    io.set_namespace(&cfg.namespace)?;
    let io = io;
    let started_unix = now_unix();
    let existing = match read_meta(&io, &cfg.run_name).await {
        Err(BenchError::Ceph(e)) => return Err(data_access(e, rados, &cfg.pool)),
        r => r?,
    };
    let mut warnings = Vec::new();
    let pool_settings = pool_settings(rados, &cfg.pool, &mut warnings);
    if cfg.mode == RadosMode::Write {
        if let Some(s) = &pool_settings {
            check_write_limits(rados, &s.osds, cfg.block_size, cfg.object_size)?;
        }
    }

    let (meta, available_ops) = if cfg.mode == RadosMode::Write {
        let meta = RunMeta {
            tool: "cephbench".into(),
            format: 1,
            run_name: cfg.run_name.clone(),
            block_size: cfg.block_size,
            object_size: cfg.object_size,
            ops: 0,
            seed: started_unix ^ (u64::from(std::process::id()) << 32) | 1,
            complete: false,
            host: cluster.client_host.clone(),
            pid: std::process::id(),
            started_unix,
            created_pool,
            write_dest: cfg.write_dest,
        };
        begin_write_run(rados, cfg, &io, existing, &meta).await?;
        (meta, 0)
    } else {
        let (meta, available_ops) = written_run(cfg, existing, &mut warnings)?;
        let area = available_ops.saturating_mul(meta.block_size);
        warnings.extend(cache_fit_warning(area, pool_settings.as_ref()));
        (meta, available_ops)
    };
    let layout = Layout {
        block_size: meta.block_size,
        object_size: meta.object_size,
    };
    let verify = if cfg.mode.is_write() {
        objects::VerifyMode::None
    } else {
        cfg.verify
    };
    let spec = run_spec(cfg, &meta);
    let stop_rx = stop.clone();
    let job = RadosJob {
        rados,
        cfg,
        io: &io,
        meta,
        layout,
        available_ops,
        max_ops: spec.max_ops,
        verify,
        spec,
        created_pool,
        stop,
    };
    let setup = Setup {
        rados,
        pool: &cfg.pool,
        cluster,
        started_unix,
        telemetry: cfg.telemetry,
        counter_interval: cfg.counter_interval,
        op_history: cfg.op_history,
        drop_caches: (!cfg.mode.is_write()).then_some(cfg.drop_caches),
        open_loop: cfg.rate.is_some(),
        steady: cfg.steady.clone(),
        pool_settings,
        warnings,
        interrupted: false,
        error: None,
        disrupt: cfg.disrupt.clone(),
        ramp: cfg.ramp,
        stop: Some(stop_rx),
    };
    measure(setup, job).await
}

/// The run's pool, created first when a write run asks for it
/// (`--create-pool`); true when it was created.
fn open_or_create_pool(rados: &Rados, cfg: &RadosConfig) -> Result<(IoCtx, bool), BenchError> {
    match rados.ioctx(&cfg.pool) {
        Err(CephError::NoSuchPool(_)) => match (cfg.mode, cfg.create_pool) {
            (RadosMode::Write, Some(spec)) => {
                super::pool::check_pool_delete_allowed(rados).map_err(BenchError::UnfitPool)?;
                create_pool(rados, &cfg.pool, spec, "rados")?;
                Ok((rados.ioctx(&cfg.pool)?, true))
            }
            _ => Err(BenchError::NoPool {
                pool: cfg.pool.clone(),
            }),
        },
        r => Ok((r?, false)),
    }
}

/// Starts a write run: refuses a run name already used (`existing`) and
/// objects its metadata would not account for, then records `meta`.
async fn begin_write_run(
    rados: &Rados,
    cfg: &RadosConfig,
    io: &IoCtx,
    existing: Option<RunMeta>,
    meta: &RunMeta,
) -> Result<(), BenchError> {
    if let Some(m) = existing {
        return Err(BenchError::RunExists {
            pool: cfg.pool.clone(),
            ns: ns_flag(&cfg.namespace),
            run: cfg.run_name.clone(),
            ops: m.ops,
            host: m.host,
        });
    }
    // Never overwrite what this run's metadata does not account for.
    let first = format!("{}0", objects::data_prefix(&cfg.run_name));
    let st = io.stat(&cstr(&first))?.await?;
    if st.ret != -i64::from(libc::ENOENT) {
        st.check(|| format!("stat object '{first}'"))
            .map_err(|e| diagnose(rados, &cfg.pool, e))?;
        return Err(BenchError::ForeignObject {
            pool: cfg.pool.clone(),
            ns: ns_flag(&cfg.namespace),
            run: cfg.run_name.clone(),
            name: first,
        });
    }
    write_meta(io, meta)
        .await
        .map_err(|e| diagnose(rados, &cfg.pool, e))
}

/// The write run a seq or rand run reads (`existing`), and how many ops it
/// wrote; a run that did not finish is read with a warning.
fn written_run(
    cfg: &RadosConfig,
    existing: Option<RunMeta>,
    warnings: &mut Vec<String>,
) -> Result<(RunMeta, u64), BenchError> {
    match existing {
        None => Err(BenchError::NothingWritten {
            pool: cfg.pool.clone(),
            ns: ns_flag(&cfg.namespace),
            run: cfg.run_name.clone(),
        }),
        Some(m) if !m.write_dest.object_only() => Err(BenchError::NotObjectData {
            pool: cfg.pool.clone(),
            run: cfg.run_name.clone(),
            dest: m.write_dest.label(),
        }),
        Some(m) => {
            if !m.complete {
                warnings.push(format!(
                    "the write run '{}' did not finish; objects it never wrote will fail to read",
                    m.run_name
                ));
            }
            let ops = m.ops;
            Ok((m, ops))
        }
    }
}

/// The engine's limits for the run: a write run's `--max-objects` caps its
/// ops.
fn run_spec(cfg: &RadosConfig, meta: &RunMeta) -> RunSpec {
    let max_ops = match (cfg.mode, cfg.max_objects) {
        (RadosMode::Write, Some(objs)) => {
            let cap = objs.saturating_mul(meta.writes_per_object());
            Some(cfg.max_ops.map_or(cap, |m| m.min(cap)))
        }
        _ => cfg.max_ops,
    };
    RunSpec {
        concurrency: cfg.concurrency,
        duration: cfg.duration,
        ramp: cfg.ramp,
        max_ops,
        max_bytes: None,
        slow_op: SLOW_OP,
        rate: cfg.rate,
    }
}

/// The rados part of the measure step: the run's objects, written or read
/// by one job; after it, the run's metadata recorded or its objects removed.
struct RadosJob<'a> {
    rados: &'a Rados,
    cfg: &'a RadosConfig,
    io: &'a IoCtx,
    meta: RunMeta,
    layout: Layout,
    available_ops: u64,
    max_ops: Option<u64>,
    verify: objects::VerifyMode,
    spec: RunSpec,
    created_pool: bool,
    stop: StopRx,
}

impl RadosJob<'_> {
    fn kind(&self) -> OpKind {
        if self.cfg.mode.is_write() {
            OpKind::Write
        } else {
            OpKind::Read
        }
    }
}

impl Job for RadosJob<'_> {
    async fn run(
        &mut self,
        slots: Option<&OsdSlots>,
        clock: &crate::progress::JobClock,
    ) -> Result<Option<Ran>, BenchError> {
        let (cfg, meta) = (self.cfg, &self.meta);
        let mut source = RadosSource::new(
            cfg.mode,
            self.layout,
            self.available_ops,
            cfg.wrap,
            meta.seed,
        )
        .write_dest(meta.write_dest);
        let mut target = RadosTarget::new(
            self.io,
            self.layout,
            objects::data_prefix(&cfg.run_name),
            &cfg.namespace,
            meta.seed,
            cfg.concurrency,
            slots,
        )
        .verify(self.verify)
        .write_dest(meta.write_dest);
        start_at(cfg.start_at).await;
        let measured_start = std::time::SystemTime::now();
        let counters = Arc::new(Counters::default());
        let worker = engine::run(
            &mut target,
            &mut source,
            &self.spec,
            self.stop.clone(),
            WorkerProgress::new(Arc::clone(&counters)),
        );
        let (out, timeline, steady) = sampled(
            worker,
            vec![counters],
            cfg.ramp,
            cfg.interval,
            cfg.live,
            cfg.steady.as_ref(),
            clock,
        )
        .await;
        Ok(Some(Ran {
            out,
            timeline,
            steady,
            measured_start,
            ramp: cfg.ramp,
        }))
    }

    fn reports(&self, out: &JobOutcome, mut timelines: Timelines) -> Vec<JobReport> {
        let name = self.cfg.mode.as_str();
        let kind = self.kind();
        vec![job_report(
            name,
            kind,
            out,
            self.verify.checks(),
            std::mem::take(&mut timelines[kind.index()]),
        )]
    }

    async fn finish(
        &mut self,
        out: &JobOutcome,
        error: Option<&BenchError>,
        warnings: &mut Vec<String>,
    ) -> Cleanup {
        let (cfg, rados) = (self.cfg, self.rados);
        let pool_gone = matches!(error, Some(BenchError::PoolDeleted { .. }));
        let hint = cleanup_hint(&cfg.pool, &cfg.namespace, &cfg.run_name);
        let mut cleanup = Cleanup::default();
        if cfg.mode.is_write() && !pool_gone {
            let meta = &mut self.meta;
            meta.ops = out.issued;
            meta.complete = true;
            if cfg.no_cleanup {
                if let Err(e) = write_meta(self.io, meta).await {
                    warnings.push(format!(
                        "could not record the run's final metadata ({e}); seq/rand may read fewer objects"
                    ));
                }
            } else {
                if cfg.live {
                    eprintln!(
                        "cleaning up: removing the {} objects of run '{}'",
                        meta.objects() + 1,
                        cfg.run_name
                    );
                }
                match remove_run(self.io, meta, cfg.concurrency.max(16)).await {
                    Ok(n) => {
                        cleanup.cleaned = Some(n);
                        if self.created_pool {
                            if let Some(w) = remove_created_pool(rados, self.io, &cfg.pool) {
                                // A pool it made and could not remove: the
                                // run fails (exit 1) after its report.
                                cleanup.failed = Some(w.clone());
                                warnings.push(w);
                            }
                        }
                    }
                    Err(e) => {
                        warnings.push(format!(
                            "cleanup failed ({e}); remove what this run left with `{hint}`"
                        ));
                        cleanup.leftovers = Some(hint);
                    }
                }
            }
        }

        if out.kind(self.kind()).ops == 0 && !cfg.ramp.is_zero() && out.issued > 0 {
            warnings.push(format!(
                "nothing was measured: the job ended ({}) within the {} s ramp after {} ops; \
                 use a shorter --ramp (seq stops once every written object was read)",
                out.stop.as_str().replace('_', " "),
                cfg.ramp.as_secs_f64(),
                out.issued
            ));
        }
        if out.mismatches > 0 {
            warnings.push(format!(
                "{} reads returned data that differs from what was written ({} check)",
                out.mismatches,
                self.verify.as_str()
            ));
        }
        if out.short_reads > 0 {
            warnings.push(format!(
                "{} reads returned fewer bytes than asked (objects truncated or removed since the write run?); \
                 they count as errors, only the bytes that came back are counted",
                out.short_reads
            ));
        }
        cleanup
    }

    fn workload(self) -> Workload {
        let (cfg, meta) = (self.cfg, &self.meta);
        Workload::Rados(RadosWorkload {
            mode: cfg.mode.as_str().into(),
            pool: cfg.pool.clone(),
            block_size: meta.block_size,
            object_size: meta.object_size,
            concurrent_ios: cfg.concurrency as u64,
            duration_s: cfg.duration.map(|d| d.as_secs_f64()),
            ramp_s: cfg.ramp.as_secs_f64(),
            max_ops: self.max_ops,
            run_name: cfg.run_name.clone(),
            namespace: cfg.namespace.clone(),
            write_to: (!meta.write_dest.object_only()).then(|| meta.write_dest.label()),
            verify: self.verify,
            no_cleanup: cfg.no_cleanup,
            pool_created: self.created_pool,
        })
    }
}

/// ` -N NS` for a command line naming a run in namespace `NS`; empty for
/// the default namespace.
fn ns_flag(namespace: &str) -> String {
    if namespace.is_empty() {
        String::new()
    } else {
        format!(" -N {namespace}")
    }
}

/// The `cephbench cleanup` command that removes what run `run` left.
pub fn cleanup_hint(pool: &str, namespace: &str, run: &str) -> String {
    format!(
        "cephbench cleanup -p {pool}{} --run-name {run}",
        ns_flag(namespace)
    )
}

/// [`cleanup`] in every namespace of the pool that holds cephbench
/// objects (`cleanup --all-namespaces`); leaves `io` in the last one.
pub async fn cleanup_all_namespaces(
    rados: &Rados,
    io: &mut IoCtx,
    run: Option<&str>,
    concurrency: usize,
) -> Result<CleanupReport, CephError> {
    io.set_all_namespaces();
    let mut namespaces: Vec<String> = io
        .list_prefix("cephbench_")?
        .into_iter()
        .map(|e| e.namespace)
        .collect();
    namespaces.push(String::new());
    namespaces.sort();
    namespaces.dedup();
    let mut total = CleanupReport::default();
    for ns in &namespaces {
        io.set_namespace(ns)?;
        let r = cleanup(rados, io, run, concurrency).await?;
        total.removed += r.removed;
        total.pool_removed |= r.pool_removed;
        total.warning = total.warning.or(r.warning);
    }
    Ok(total)
}

/// How many of cephbench's objects each namespace of the pool other than
/// `ns` holds (what a cleanup of `ns` alone leaves), by namespace.
pub fn cephbench_objects_elsewhere(
    io: &mut IoCtx,
    ns: &str,
) -> Result<std::collections::BTreeMap<String, u64>, CephError> {
    io.set_all_namespaces();
    let listed = io.list_prefix("cephbench_");
    io.set_namespace(ns)?;
    let mut by_ns = std::collections::BTreeMap::new();
    for e in listed? {
        if e.namespace != ns {
            *by_ns.entry(e.namespace).or_insert(0) += 1;
        }
    }
    Ok(by_ns)
}

/// What `cephbench cleanup` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupReport {
    /// Objects and images removed.
    pub removed: u64,
    /// Whether the pool itself was removed (it was created by a run with
    /// `--create-pool` and held nothing else).
    pub pool_removed: bool,
    /// Why a pool cephbench created was kept.
    pub warning: Option<String>,
}

/// Removes leftovers: every object of run `run` (or of every run, and every
/// image `cephbench rbd` created), found by listing the pool for
/// cephbench's own name prefixes. When a removed run's metadata says the run
/// created the pool, the pool goes too once it is empty.
pub async fn cleanup(
    rados: &Rados,
    io: &IoCtx,
    run: Option<&str>,
    concurrency: usize,
) -> Result<CleanupReport, CephError> {
    let (data, meta) = match run {
        Some(r) => (objects::data_prefix(r), objects::meta_name(r)),
        None => (
            objects::DATA_PREFIX.to_string(),
            objects::META_PREFIX.to_string(),
        ),
    };
    let mut names: Vec<String> = io.list_prefix(&data)?.into_iter().map(|e| e.name).collect();
    // Metadata last, so an interrupted cleanup can be run again.
    let metas: Vec<String> = io
        .list_prefix(&meta)?
        .into_iter()
        .map(|e| e.name)
        .filter(|n| run.is_none() || *n == meta)
        .collect();
    let mut created_pool = false;
    for m in &metas {
        let r = &m[objects::META_PREFIX.len()..];
        if let Ok(Some(rm)) = read_meta(io, r).await {
            created_pool |= rm.created_pool;
        }
    }
    let n = remove_objects(io, names.drain(..), concurrency).await?;
    let m = remove_objects(io, metas, concurrency).await?;
    // Group runs' leftovers (an agent killed with SIGKILL, a controller
    // killed before it read the results); agents still watching lose their watch.
    let g = if run.is_none() {
        let groups = io.list_prefix(GROUP_PREFIX)?;
        remove_objects(io, groups.into_iter().map(|e| e.name), concurrency).await?
    } else {
        0
    };
    // Images of `cephbench rbd --size` runs that died before removing them:
    // each RBD image has an id object `rbd_id.<name>`, and an entry in the
    // pool's image directory (which outlives the id object when a removal
    // is cut short).
    let mut images = 0;
    if run.is_none() {
        let id_prefix = format!("rbd_id.{}", IMAGE_PREFIX);
        let mut names: Vec<String> = io
            .list_prefix(&id_prefix)?
            .into_iter()
            .map(|e| e.name["rbd_id.".len()..].to_string())
            .collect();
        // (A pool that never held an image has no directory to list.)
        names.extend(crate::ceph::rbd::list_images(io).unwrap_or_default());
        names.retain(|n| n.starts_with(IMAGE_PREFIX));
        names.sort();
        names.dedup();
        for name in &names {
            crate::ceph::remove_image(io, name)?;
            images += 1;
        }
        // An image removal cut short (a second interrupt, a crash) leaves
        // the image in the trash: librbd moves it there before deleting its
        // objects. Ours are known by their names.
        // (A pool that never held an image has no trash to list.)
        let trash = crate::ceph::rbd::trash_list(io).unwrap_or_default();
        for t in trash.iter().filter(|t| t.name.starts_with(IMAGE_PREFIX)) {
            crate::ceph::rbd::trash_remove(io, &t.id)?;
            images += 1;
        }
    }
    let mut report = CleanupReport {
        removed: n + m + g + images,
        ..Default::default()
    };
    if created_pool {
        report.warning = remove_created_pool(rados, io, io.pool_name());
        report.pool_removed = report.warning.is_none();
    }
    Ok(report)
}
