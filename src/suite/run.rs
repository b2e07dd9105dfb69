//! Running a suite: one job at a time, `runs` times each (run-major, as
//! the lab method's script does), on one RBD image per pool created and
//! preconditioned once and removed at the end; rados jobs share one run
//! name per pool whose objects are removed at the end. Several pools take
//! turns run by run (A B A B), so that drift over time is shared by all.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use super::summary::{summarize, RunEntry, SuiteDoc, SuiteSettings, SUITE_SCHEMA_VERSION};
use super::{JobKind, Suite};
use crate::bench::{
    self, read_meta, remove_run, run_rados, run_rbd, BenchError, ImageChoice, RadosConfig,
    RbdConfig,
};
use crate::ceph::{self, Rados};
use crate::engine::StopRx;
use crate::names::IMAGE_PREFIX;
use crate::result::{BenchResult, Precondition, Workload};

/// How to run a suite: the pool and the command-line overrides.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// The pool (of the RBD image; with `data_pool`, of its metadata only).
    pub pool: String,
    /// `--data-pool`: the image's data objects go to this pool, and the
    /// rados jobs run on it (the pool the suite measures).
    pub data_pool: Option<String>,
    /// `--runs`.
    pub runs: Option<u32>,
    /// `--runtime`: every job's measured time.
    pub runtime: Option<Duration>,
    /// `--ramp`: every job's ramp.
    pub ramp: Option<Duration>,
    /// `--image-size`.
    pub image_size: Option<u64>,
    /// `--test-area`.
    pub test_area: Option<u64>,
    /// Per-OSD probes around each run.
    pub telemetry: bool,
    /// How often the probes read the OSDs' counters during a run (global
    /// `--counter-interval`; zero: before and after only).
    pub counter_interval: Duration,
    /// Every run's timeline interval (global `--interval`).
    pub interval: Duration,
    /// `--op-history N` for every run (see `RadosConfig::op_history`).
    pub op_history: Option<u32>,
    /// `--drop-caches`: the OSDs drop their caches before each read job.
    pub drop_caches: bool,
    /// Progress lines on stderr.
    pub progress: bool,
    /// `--group/--clients`: every job runs on the group's agents at a
    /// common start and its figures are the merge of theirs.
    pub group: Option<crate::group::GroupConfig>,
    /// `-N`: the rados jobs' namespace, over the suite file's.
    pub namespace: Option<String>,
}

impl SuiteOptions {
    /// The pool the jobs' data goes to: the data pool, else the pool.
    pub fn io_pool(&self) -> &str {
        self.data_pool.as_deref().unwrap_or(&self.pool)
    }
}

/// The run names a suite's rados jobs write: its own, or on a group, each
/// client's (`<run>-c<i>`, as [`crate::group::run_group`] assigns them).
fn run_names(run_name: &str, opts: &SuiteOptions) -> Vec<String> {
    match &opts.group {
        None => vec![run_name.to_string()],
        Some(g) => (0..g.clients).map(|i| format!("{run_name}-c{i}")).collect(),
    }
}

/// Runs one job of the suite (or point of a sweep) on the group: the
/// merged result, and an error naming the agents that delivered no
/// complete result. The first job pins the agents it ran on for the rest.
pub(crate) async fn run_on_group(
    rados: &Rados,
    g: &mut crate::group::GroupConfig,
    job: crate::group::JobSpec,
    stop: StopRx,
    progress: bool,
) -> Result<(crate::result::BenchResult, Option<BenchError>), BenchError> {
    let outcome = crate::group::run_group(rados, g, job, stop, |l| {
        if progress {
            eprintln!("cephbench: group {}: {l}", g.group);
        }
    })
    .await
    .map_err(|e| match e {
        crate::group::GroupError::Bench(b) => b,
        e => BenchError::Group(e.to_string()),
    })?;
    if g.agents.is_none() {
        g.agents = outcome
            .result
            .clients
            .as_ref()
            .map(|c| c.clients.iter().map(|r| r.agent.clone()).collect());
    }
    let bad: Vec<String> = outcome
        .missing
        .iter()
        .chain(outcome.failed.iter())
        .map(|(a, why)| format!("{a}: {why}"))
        .collect();
    let error = (!bad.is_empty()).then(|| {
        BenchError::Group(format!(
            "{} of {} agents delivered no complete result ({}); the job's figures cover the others",
            bad.len(),
            g.clients,
            bad.join("; ")
        ))
    });
    Ok((outcome.result, error))
}

/// A finished (or stopped) suite.
#[derive(Debug)]
pub struct SuiteOutcome {
    /// The document, with every run that finished.
    pub doc: SuiteDoc,
    /// The error that stopped it, if any.
    pub error: Option<BenchError>,
}

impl Suite {
    /// The suite with the command-line overrides applied; an error names the fix.
    pub fn with_options(&self, o: &SuiteOptions) -> Result<Suite, String> {
        let mut s = self.clone();
        if let Some(r) = o.runs {
            crate::plan::in_range(
                crate::plan::Source::Flags,
                "runs",
                r,
                1,
                crate::plan::MAX_RUNS,
            )?;
            s.runs = r;
            s.jobs.iter_mut().for_each(|j| j.runs = None);
        }
        if let Some(d) = o.runtime {
            if d.is_zero() {
                return Err("--runtime must be longer than 0".into());
            }
            s.runtime = d;
            s.jobs.iter_mut().for_each(|j| j.runtime = None);
        }
        if let Some(d) = o.ramp {
            s.ramp = d;
            s.jobs.iter_mut().for_each(|j| j.ramp = None);
        }
        if let Some(n) = &o.namespace {
            s.namespace = n.clone();
        }
        if !s.uses_image() {
            if o.image_size.is_some() || o.test_area.is_some() || o.data_pool.is_some() {
                return Err(format!(
                    "suite {} has no rbd jobs; drop --image-size/--test-area/--data-pool(s) \
                     (its rados jobs run on -p)",
                    s.name
                ));
            }
            return Ok(s);
        }
        if let Some(z) = o.image_size {
            s.image_size = z;
            s.test_area = s.test_area.min(z);
        }
        if let Some(a) = o.test_area {
            s.test_area = a;
        }
        if s.test_area == 0 || s.test_area > s.image_size {
            return Err(format!(
                "--test-area {} must be between 1 byte and the image size {}",
                crate::units::fmt_bytes(s.test_area),
                crate::units::fmt_bytes(s.image_size)
            ));
        }
        for j in &s.jobs {
            if let JobKind::Rbd { bs, numjobs, .. } = j.kind {
                if s.test_area % bs != 0 || s.test_area / bs < numjobs as u64 {
                    return Err(format!(
                        "job '{}': its block size {} does not divide the test area {}; choose a --test-area that is a multiple of it",
                        j.name,
                        crate::units::fmt_bytes(bs),
                        crate::units::fmt_bytes(s.test_area)
                    ));
                }
            }
        }
        Ok(s)
    }

    /// The runs in order: (job index, 1-based run), run-major; a job with
    /// fewer runs of its own sits out the later rounds.
    pub fn plan(&self) -> Vec<(usize, u32)> {
        (1..=self.runs)
            .flat_map(|r| {
                (0..self.jobs.len())
                    .filter(move |&j| r <= self.job_runs(j))
                    .map(move |j| (j, r))
            })
            .collect()
    }

    /// How many times job `j` runs.
    pub fn job_runs(&self, j: usize) -> u32 {
        self.jobs[j].runs.map_or(self.runs, |r| r.min(self.runs))
    }

    fn times(&self, j: usize) -> (Duration, Duration) {
        let job = &self.jobs[j];
        (
            job.runtime.unwrap_or(self.runtime),
            job.ramp.unwrap_or(self.ramp),
        )
    }

    /// Measured time plus ramp of every run (preconditioning and probes not included).
    pub fn expected(&self) -> Duration {
        self.plan()
            .iter()
            .map(|(j, _)| {
                let (d, r) = self.times(*j);
                d + r
            })
            .sum()
    }
}

/// `m:ss` (or `h:mm:ss`).
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Runs `suite` (already [`Suite::with_options`]) on `opts.pool`.
pub async fn run_suite(
    rados: &Rados,
    suite: &Suite,
    opts: &SuiteOptions,
    stop: StopRx,
) -> Result<SuiteOutcome, BenchError> {
    let mut out = run_suites(rados, suite, std::slice::from_ref(opts), stop).await?;
    Ok(out.pop().expect("one pool in, one outcome out"))
}

/// Runs `suite` on each pool of `opts`, alternating the pools run by run
/// (run 1 on A, run 1 on B, run 2 on A, ...), so that a drift of the
/// machine or the cluster over time (caches warming, compaction, other
/// load) falls on every pool alike instead of on the one that ran last.
/// One outcome per pool, in `opts` order; a stop (interrupt or error) on
/// one pool ends the suite on all of them, and every pool is cleaned up.
pub async fn run_suites(
    rados: &Rados,
    suite: &Suite,
    opts: &[SuiteOptions],
    stop: StopRx,
) -> Result<Vec<SuiteOutcome>, BenchError> {
    let mut sessions = Vec::with_capacity(opts.len());
    for o in opts {
        match PoolSession::open(rados, suite, o) {
            Ok(s) => sessions.push(s),
            Err(e) => {
                for s in sessions {
                    let _ = s.close(rados, suite).await;
                }
                return Err(e);
            }
        }
    }
    let start = Instant::now();
    let total = suite.plan().len() * sessions.len();
    let mut done = 0;
    'rounds: for round in 1..=suite.runs {
        for s in &mut sessions {
            let go_on = s
                .run_round(rados, suite, round, stop.clone(), (start, &mut done, total))
                .await;
            if !go_on {
                break 'rounds;
            }
        }
    }
    let mut outcomes = Vec::with_capacity(sessions.len());
    let mut first_err = None;
    for s in sessions {
        match s.close(rados, suite).await {
            Ok(o) => outcomes.push(o),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(outcomes),
    }
}

/// How one run of a suite job is configured.
enum RunConfig {
    Rbd(RbdConfig),
    Rados(RadosConfig),
}

/// One pool's part of a suite: its image, its run name, the runs so far.
struct PoolSession {
    /// The options, with the group's agents pinned by the first job.
    opts: SuiteOptions,
    start: Instant,
    started_unix: u64,
    pool_settings: Option<crate::result::PoolSettings>,
    /// The image the rbd jobs share (not on a group: each agent has its own).
    image: Option<String>,
    run_name: String,
    image_base: String,
    agent_images: Vec<String>,
    agents_prepared: bool,
    prior: Option<Precondition>,
    runs: Vec<RunEntry>,
    /// Interrupted, or stopped by `error`.
    stopped: bool,
    /// The error that stopped the runs (the report still prints).
    error: Option<BenchError>,
    /// A failure outside the measurement (returned after the cleanup).
    failed: Option<BenchError>,
}

impl PoolSession {
    /// Reads the pool's settings and creates the suite's image on it.
    fn open(rados: &Rados, suite: &Suite, opts: &SuiteOptions) -> Result<Self, BenchError> {
        let start = Instant::now();
        let started_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if suite.uses_image() {
            bench::check_rbd_pools(rados, &opts.pool, opts.data_pool.as_deref())?;
        }
        let io = rados.ioctx(&opts.pool)?;
        let mut warnings = Vec::new();
        // The settings of the pool the data goes to.
        let pool_settings = bench::pool_settings(rados, opts.io_pool(), &mut warnings);
        for w in &warnings {
            eprintln!("cephbench: warning: {w}");
        }
        // On a group, each agent makes its own image (see `run_round`).
        let image = if suite.uses_image() && opts.group.is_none() {
            let name = crate::names::new_image_name();
            let data = opts.data_pool.as_deref();
            ceph::create_image_in(&io, &name, suite.image_size, None, data).map_err(|e| match e
                .errno()
            {
                Some(libc::EPERM | libc::EACCES) => bench::no_access(rados, &opts.pool, e),
                _ => BenchError::Ceph(e),
            })?;
            Some(name)
        } else {
            None
        };
        // Two pools opened in the same second get different run names.
        let run_name = format!(
            "suite-{}-{started_unix}-{}",
            std::process::id(),
            opts.io_pool()
                .bytes()
                .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32))
                % 10_000
        );
        Ok(PoolSession {
            image_base: format!("{IMAGE_PREFIX}{run_name}"),
            opts: opts.clone(),
            start,
            started_unix,
            pool_settings,
            image,
            run_name,
            agent_images: Vec::new(),
            agents_prepared: false,
            prior: None,
            runs: Vec::new(),
            stopped: false,
            error: None,
            failed: None,
        })
    }

    /// Runs round `round` (every job's run `round`); false when the suite
    /// must stop (interrupt, an error that stopped a run, or a failure).
    async fn run_round(
        &mut self,
        rados: &Rados,
        suite: &Suite,
        round: u32,
        stop: StopRx,
        progress: (Instant, &mut usize, usize),
    ) -> bool {
        if self.stopped || self.failed.is_some() {
            return false;
        }
        match self.round(rados, suite, round, stop, progress).await {
            Ok(go_on) => go_on,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    async fn round(
        &mut self,
        rados: &Rados,
        suite: &Suite,
        round: u32,
        stop: StopRx,
        (start, done, total): (Instant, &mut usize, usize),
    ) -> Result<bool, BenchError> {
        // The rados jobs' objects live in the suite's namespace, in the
        // pool the data goes to.
        let mut io = rados.ioctx(self.opts.io_pool())?;
        io.set_namespace(&suite.namespace)?;
        let io = io;
        if self.opts.group.is_some() && suite.uses_image() && !self.agents_prepared {
            self.agents_prepared = true;
            prepare_agent_images(
                rados,
                suite,
                &mut self.opts,
                &self.image_base,
                stop.clone(),
                &mut self.agent_images,
            )
            .await?;
        }
        for j in 0..suite.jobs.len() {
            if *stop.borrow() {
                self.stopped = true;
                return Ok(false);
            }
            if round > suite.job_runs(j) {
                continue;
            }
            let job = &suite.jobs[j];
            *done += 1;
            if self.opts.progress {
                eprintln!(
                    "suite {}: job {} of {} ({} / {} expected): {} on {} (run {round} of {})",
                    suite.name,
                    done,
                    total,
                    clock(start.elapsed()),
                    clock(suite.expected() * (total / suite.plan().len().max(1)) as u32),
                    job.name,
                    self.opts.io_pool(),
                    suite.job_runs(j)
                );
            }
            let (result, error) = match self.run_config(suite, j) {
                RunConfig::Rbd(cfg) => self.run_rbd_job(rados, suite, cfg, &stop).await?,
                RunConfig::Rados(cfg) => self.run_rados_job(rados, &io, cfg, &stop).await?,
            };
            if self.opts.progress {
                for r in &result.jobs {
                    eprintln!(
                        "  {} {}: {:.0} IOPS, {:.1} MiB/s, mean {:.3} ms, p99 {:.3} ms",
                        job.name,
                        r.op,
                        r.iops,
                        r.bytes_per_sec / crate::units::MIB,
                        r.latency_ns.mean / 1e6,
                        r.latency_ns.p99 as f64 / 1e6
                    );
                }
            }
            let interrupted = result.interrupted;
            self.runs.push(RunEntry {
                job: job.name.clone(),
                run: round,
                result,
            });
            if error.is_some() {
                self.stopped = true;
                self.error = error;
                return Ok(false);
            }
            if interrupted {
                self.stopped = true;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// How job `j` of the suite runs on this pool: its keys, the suite's
    /// times, image and namespace, and the options.
    fn run_config(&self, suite: &Suite, j: usize) -> RunConfig {
        let opts = &self.opts;
        let (runtime, ramp) = suite.times(j);
        match &suite.jobs[j].kind {
            JobKind::Rbd {
                rw,
                bs,
                iodepth,
                numjobs,
                rwmix_read,
                fsync_every,
            } => RunConfig::Rbd(RbdConfig {
                pool: opts.pool.clone(),
                data_pool: opts.data_pool.clone(),
                image: ImageChoice::Existing {
                    // On a group, each agent puts its own image here.
                    name: self
                        .image
                        .as_deref()
                        .unwrap_or(&self.image_base)
                        .to_string(),
                    allow_write: true,
                },
                mode: *rw,
                rwmix_read: *rwmix_read,
                bs: *bs,
                iodepth: *iodepth,
                numjobs: *numjobs,
                duration: Some(runtime),
                io_total: None,
                ramp,
                test_area: Some(suite.test_area),
                fsync_every: *fsync_every,
                rbd_cache: false,
                norandommap: false,
                end_flush: false,
                precondition: true,
                prior_precondition: self.prior.clone(),
                live: false,
                telemetry: opts.telemetry,
                counter_interval: opts.counter_interval,
                interval: opts.interval,
                steady: None,
                op_history: opts.op_history,
                drop_caches: opts.drop_caches,
                disrupt: None,
                start_at: None,
                rate: None,
            }),
            JobKind::Rados {
                mode,
                block_size,
                object_size,
                concurrent_ios,
            } => RunConfig::Rados(RadosConfig {
                pool: opts.io_pool().to_string(),
                mode: *mode,
                block_size: *block_size,
                object_size: *object_size,
                concurrency: *concurrent_ios,
                duration: Some(runtime),
                ramp,
                max_ops: None,
                max_objects: None,
                run_name: self.run_name.clone(),
                namespace: suite.namespace.clone(),
                no_cleanup: mode.is_write(),
                wrap: false,
                write_dest: Default::default(),
                verify: crate::objects::VerifyMode::default(),
                live: false,
                telemetry: opts.telemetry,
                counter_interval: opts.counter_interval,
                interval: opts.interval,
                steady: None,
                op_history: opts.op_history,
                drop_caches: opts.drop_caches,
                disrupt: None,
                start_at: None,
                rate: None,
                create_pool: None,
            }),
        }
    }

    /// One run of an rbd job: on the suite's image, preconditioned by the
    /// first (on a group, each agent on its own image).
    async fn run_rbd_job(
        &mut self,
        rados: &Rados,
        suite: &Suite,
        cfg: RbdConfig,
        stop: &StopRx,
    ) -> Result<(BenchResult, Option<BenchError>), BenchError> {
        let opts = &mut self.opts;
        if self.prior.is_none() && opts.progress && opts.group.is_none() {
            eprintln!(
                "suite {}: preconditioning: writing the test area ({}) of pool {} once",
                suite.name,
                crate::units::fmt_bytes(suite.test_area),
                opts.io_pool()
            );
        }
        if let Some(g) = &mut opts.group {
            let job = crate::group::JobSpec::RbdOwnImage {
                image_base: self.image_base.clone(),
                cfg,
            };
            return run_on_group(rados, g, job, stop.clone(), opts.progress).await;
        }
        let o = run_rbd(rados, &cfg, stop.clone()).await?;
        if self.prior.is_none() {
            if let Workload::Rbd(w) = &o.result.workload {
                self.prior = w.precondition.clone();
            }
        }
        Ok((o.result, o.error))
    }

    /// One run of a rados job; a write job first removes what the previous
    /// write run left for the reads.
    async fn run_rados_job(
        &mut self,
        rados: &Rados,
        io: &ceph::IoCtx,
        cfg: RadosConfig,
        stop: &StopRx,
    ) -> Result<(BenchResult, Option<BenchError>), BenchError> {
        let opts = &mut self.opts;
        if cfg.mode.is_write() {
            for name in run_names(&self.run_name, opts) {
                if let Some(meta) = read_meta(io, &name).await? {
                    remove_run(io, &meta, 16).await?;
                }
            }
        }
        match &mut opts.group {
            Some(g) => {
                let job = crate::group::JobSpec::Rados(cfg);
                run_on_group(rados, g, job, stop.clone(), opts.progress).await
            }
            None => {
                let o = run_rados(rados, &cfg, stop.clone()).await?;
                Ok((o.result, o.error))
            }
        }
    }

    /// Removes the image(s) and objects the suite made on this pool and
    /// builds its document; a failure outside the measurement is returned
    /// after the cleanup.
    async fn close(self, rados: &Rados, suite: &Suite) -> Result<SuiteOutcome, BenchError> {
        let opts = &self.opts;
        let io = rados.ioctx(&opts.pool)?;
        let mut cleanup_err = None;
        if let Some(name) = &self.image {
            if let Err(e) = ceph::remove_image(&io, name) {
                cleanup_err = Some(e);
            }
        }
        // The agents' own images (an agent that left removed its own already).
        for name in &self.agent_images {
            match ceph::remove_image(&io, name) {
                Err(e) if e.errno() != Some(libc::ENOENT) => {
                    eprintln!(
                        "cephbench: warning: could not remove image '{name}' ({e}); remove it with `cephbench cleanup -p {} --image {name}`",
                        opts.pool
                    );
                    cleanup_err.get_or_insert(e);
                }
                _ => {}
            }
        }
        if suite.jobs.iter().any(|j| !j.kind.is_rbd()) {
            let mut rio = rados.ioctx(opts.io_pool())?;
            rio.set_namespace(&suite.namespace)?;
            for name in run_names(&self.run_name, opts) {
                if let Ok(Some(meta)) = read_meta(&rio, &name).await {
                    if let Err(e) = remove_run(&rio, &meta, 16).await {
                        cleanup_err.get_or_insert(e);
                    }
                }
            }
        }
        if let Some(e) = self.failed {
            return Err(e);
        }
        if let (Some(e), None) = (cleanup_err, &self.error) {
            return Err(e.into());
        }
        let order: Vec<String> = suite.jobs.iter().map(|j| j.name.clone()).collect();
        let summary = summarize(
            &order,
            &self.runs,
            self.pool_settings.as_ref(),
            Default::default(),
        );
        let doc = SuiteDoc {
            suite_schema_version: SUITE_SCHEMA_VERSION,
            suite: suite.name.clone(),
            source: suite.source.clone(),
            pool: opts.pool.clone(),
            data_pool: opts.data_pool.clone(),
            settings: SuiteSettings {
                runs: suite.runs,
                runtime_s: suite.runtime.as_secs_f64(),
                ramp_s: suite.ramp.as_secs_f64(),
                image_size: if suite.uses_image() {
                    suite.image_size
                } else {
                    0
                },
                test_area: if suite.uses_image() {
                    suite.test_area
                } else {
                    0
                },
                telemetry: opts.telemetry,
                aggregate: Default::default(),
            },
            pool_settings: self.pool_settings,
            started_unix: self.started_unix,
            elapsed_s: self.start.elapsed().as_secs_f64(),
            interrupted: self.stopped,
            runs: self.runs,
            summary,
        };
        Ok(SuiteOutcome {
            doc,
            error: self.error,
        })
    }
}

/// Has each agent of the group create and precondition its own image for
/// the suite's rbd jobs, `<IMAGE_PREFIX><run_name>.<agent id>`, and pins
/// those agents for the suite. Every image that may exist goes to `made`.
async fn prepare_agent_images(
    rados: &Rados,
    suite: &Suite,
    opts: &mut SuiteOptions,
    image_base: &str,
    stop: StopRx,
    made: &mut Vec<String>,
) -> Result<(), BenchError> {
    let g = opts.group.as_mut().expect("a group");
    let bs = suite
        .jobs
        .iter()
        .find_map(|j| match j.kind {
            JobKind::Rbd { bs, .. } => Some(bs),
            _ => None,
        })
        .unwrap_or(4096);
    if opts.progress {
        eprintln!(
            "suite {}: each agent creates image {image_base}.<agent id> ({}) and preconditions its test area ({}) once",
            suite.name,
            crate::units::fmt_bytes(suite.image_size),
            crate::units::fmt_bytes(suite.test_area)
        );
    }
    let spec = crate::group::PrepareSpec {
        pool: opts.pool.clone(),
        data_pool: opts.data_pool.clone(),
        image_base: image_base.to_string(),
        size: suite.image_size,
        test_area: suite.test_area,
        bs,
    };
    let progress = opts.progress;
    let group = g.group.clone();
    let r = crate::group::prepare_images(rados, g, spec, stop, |l| {
        if progress {
            eprintln!("cephbench: group {group}: {l}");
        }
    })
    .await;
    let (ids, err) = match r {
        Ok(ids) => (ids, None),
        Err((ids, e)) => (ids, Some(e)),
    };
    made.extend(ids.iter().map(|a| crate::group::agent_image(image_base, a)));
    if let Some(e) = err {
        return Err(match e {
            crate::group::GroupError::Bench(b) => b,
            e => BenchError::Group(e.to_string()),
        });
    }
    g.agents = Some(ids);
    Ok(())
}
