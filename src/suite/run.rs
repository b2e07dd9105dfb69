//! Running a suite: one job at a time, `runs` times each (run-major, as
//! seed 002's script does), on one RBD image created and preconditioned
//! once and removed at the end; rados jobs share one run name whose
//! objects are removed at the end.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use super::summary::{summarize, RunEntry, SuiteDoc, SuiteSettings, SUITE_SCHEMA_VERSION};
use super::{JobKind, Suite};
use crate::bench::{
    self, read_meta, remove_run, run_rados, run_rbd, BenchError, ImageChoice, RadosConfig,
    RbdConfig, IMAGE_PREFIX,
};
use crate::ceph::{self, Rados};
use crate::engine::StopRx;
use crate::result::{Precondition, Workload};

/// How to run a suite: the pool and the command-line overrides.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// The pool.
    pub pool: String,
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
    /// Progress lines on stderr.
    pub progress: bool,
    /// `--group/--clients`: every job runs on the group's agents at a
    /// common start and its figures are the merge of theirs.
    pub group: Option<crate::group::GroupConfig>,
    /// `-N`: the rados jobs' namespace, over the suite file's.
    pub namespace: Option<String>,
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
            if r == 0 || r > 1000 {
                return Err("--runs must be between 1 and 1000".into());
            }
            s.runs = r;
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
            if o.image_size.is_some() || o.test_area.is_some() {
                return Err(format!(
                    "suite {} has no rbd jobs; drop --image-size/--test-area",
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

    /// The runs in order: (job index, 1-based run), run-major.
    pub fn plan(&self) -> Vec<(usize, u32)> {
        (1..=self.runs)
            .flat_map(|r| (0..self.jobs.len()).map(move |j| (j, r)))
            .collect()
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
    let start = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let io = rados.ioctx(&opts.pool)?;
    let mut warnings = Vec::new();
    let pool_settings = bench::pool_settings(rados, &opts.pool, &mut warnings);
    for w in &warnings {
        eprintln!("cephbench: warning: {w}");
    }
    // On a group, each agent makes its own image (see `run_plan`).
    let image = if suite.uses_image() && opts.group.is_none() {
        let host: String = bench::hostname()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{IMAGE_PREFIX}{host}.{}.{started_unix}", std::process::id());
        ceph::create_image(&io, &name, suite.image_size, None).map_err(|e| match e.errno() {
            Some(libc::EPERM | libc::EACCES) => BenchError::NoAccess {
                entity: rados.entity().to_string(),
                pool: opts.pool.clone(),
                refused: Box::new(e),
            },
            _ => BenchError::Ceph(e),
        })?;
        Some(name)
    } else {
        None
    };
    let run_name = format!("suite-{}-{started_unix}", std::process::id());
    let mut runs = Vec::new();
    let mut group_opts = opts.clone();
    let mut agent_images = Vec::new();
    let res = run_plan(
        rados,
        suite,
        &mut group_opts,
        image.as_deref(),
        &run_name,
        stop,
        start,
        &mut runs,
        &mut agent_images,
    )
    .await;
    // Clean up whatever happened.
    let mut cleanup_err = None;
    if let Some(name) = &image {
        if let Err(e) = ceph::remove_image(&io, name) {
            cleanup_err = Some(e);
        }
    }
    // The agents' own images (an agent that left removed its own already).
    for name in &agent_images {
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
        let mut rio = rados.ioctx(&opts.pool)?;
        rio.set_namespace(&suite.namespace)?;
        for name in run_names(&run_name, opts) {
            if let Ok(Some(meta)) = read_meta(&rio, &name).await {
                if let Err(e) = remove_run(&rio, &meta, 16).await {
                    cleanup_err.get_or_insert(e);
                }
            }
        }
    }
    let (interrupted, error) = res?;
    if let (Some(e), None) = (cleanup_err, &error) {
        return Err(e.into());
    }
    let order: Vec<String> = suite.jobs.iter().map(|j| j.name.clone()).collect();
    let memory = pool_settings.as_ref().and_then(|p| p.memory_held_bytes);
    let summary = summarize(&order, &runs, memory);
    let doc = SuiteDoc {
        suite_schema_version: SUITE_SCHEMA_VERSION,
        suite: suite.name.clone(),
        source: suite.source.clone(),
        pool: opts.pool.clone(),
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
        },
        pool_settings,
        started_unix,
        elapsed_s: start.elapsed().as_secs_f64(),
        interrupted: interrupted || error.is_some(),
        runs,
        summary,
    };
    Ok(SuiteOutcome { doc, error })
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

#[allow(clippy::too_many_arguments)]
async fn run_plan(
    rados: &Rados,
    suite: &Suite,
    opts: &mut SuiteOptions,
    image: Option<&str>,
    run_name: &str,
    stop: StopRx,
    start: Instant,
    runs: &mut Vec<RunEntry>,
    agent_images: &mut Vec<String>,
) -> Result<(bool, Option<BenchError>), BenchError> {
    let plan = suite.plan();
    let expected = suite.expected();
    let mut prior: Option<Precondition> = None;
    // The rados jobs' objects live in the suite's namespace.
    let mut io = rados.ioctx(&opts.pool)?;
    io.set_namespace(&suite.namespace)?;
    let io = io;
    let image_base = format!("{IMAGE_PREFIX}{run_name}");
    if opts.group.is_some() && suite.uses_image() {
        prepare_agent_images(rados, suite, opts, &image_base, stop.clone(), agent_images).await?;
        if *stop.borrow() {
            return Ok((true, None));
        }
    }
    for (k, &(j, run)) in plan.iter().enumerate() {
        if *stop.borrow() {
            return Ok((true, None));
        }
        let job = &suite.jobs[j];
        let (runtime, ramp) = suite.times(j);
        if opts.progress {
            eprintln!(
                "suite {}: job {} of {} ({} / {} expected): {} (run {run} of {})",
                suite.name,
                k + 1,
                plan.len(),
                clock(start.elapsed()),
                clock(expected),
                job.name,
                suite.runs
            );
        }
        let (result, error) = match &job.kind {
            JobKind::Rbd {
                rw,
                bs,
                iodepth,
                numjobs,
                rwmix_read,
                fsync_every,
            } => {
                if prior.is_none() && opts.progress && opts.group.is_none() {
                    eprintln!(
                        "suite {}: preconditioning: writing the test area ({}) once",
                        suite.name,
                        crate::units::fmt_bytes(suite.test_area)
                    );
                }
                let cfg = RbdConfig {
                    pool: opts.pool.clone(),
                    image: ImageChoice::Existing {
                        // On a group, each agent puts its own image here.
                        name: image.unwrap_or(&image_base).to_string(),
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
                    precondition: true,
                    prior_precondition: prior.clone(),
                    live: false,
                    telemetry: opts.telemetry,
                    counter_interval: opts.counter_interval,
                    start_at: None,
                    rate: None,
                };
                if let Some(g) = &mut opts.group {
                    let job = crate::group::JobSpec::RbdOwnImage {
                        image_base: image_base.clone(),
                        cfg,
                    };
                    run_on_group(rados, g, job, stop.clone(), opts.progress).await?
                } else {
                    let o = run_rbd(rados, &cfg, stop.clone()).await?;
                    if prior.is_none() {
                        if let Workload::Rbd(w) = &o.result.workload {
                            prior = w.precondition.clone();
                        }
                    }
                    (o.result, o.error)
                }
            }
            JobKind::Rados {
                mode,
                block_size,
                object_size,
                concurrent_ios,
            } => {
                if mode.is_write() {
                    for name in run_names(run_name, opts) {
                        if let Some(meta) = read_meta(&io, &name).await? {
                            remove_run(&io, &meta, 16).await?;
                        }
                    }
                }
                let cfg = RadosConfig {
                    pool: opts.pool.clone(),
                    mode: *mode,
                    block_size: *block_size,
                    object_size: *object_size,
                    concurrency: *concurrent_ios,
                    duration: Some(runtime),
                    ramp,
                    max_ops: None,
                    max_objects: None,
                    run_name: run_name.to_string(),
                    namespace: suite.namespace.clone(),
                    no_cleanup: mode.is_write(),
                    wrap: false,
                    write_dest: Default::default(),
                    verify: crate::objects::VerifyMode::default(),
                    live: false,
                    telemetry: opts.telemetry,
                    counter_interval: opts.counter_interval,
                    start_at: None,
                    rate: None,
                    create_pool: None,
                };
                match &mut opts.group {
                    Some(g) => {
                        let job = crate::group::JobSpec::Rados(cfg);
                        run_on_group(rados, g, job, stop.clone(), opts.progress).await?
                    }
                    None => {
                        let o = run_rados(rados, &cfg, stop.clone()).await?;
                        (o.result, o.error)
                    }
                }
            }
        };
        if opts.progress {
            for r in &result.jobs {
                eprintln!(
                    "  {} {}: {:.0} IOPS, {:.1} MB/s, mean {:.3} ms, p99 {:.3} ms",
                    job.name,
                    r.op,
                    r.iops,
                    r.bytes_per_sec / 1e6,
                    r.latency_ns.mean / 1e6,
                    r.latency_ns.p99 as f64 / 1e6
                );
            }
        }
        let interrupted = result.interrupted;
        runs.push(RunEntry {
            job: job.name.clone(),
            run,
            result,
        });
        if error.is_some() {
            return Ok((true, error));
        }
        if interrupted {
            return Ok((true, None));
        }
    }
    Ok((false, None))
}
