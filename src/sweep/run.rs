//! Running a sweep: the workload once per point, each point an ordinary
//! `rados`/`rbd` run (its own probes, its objects removed after it), pool
//! after pool. An RBD image is created and preconditioned once per pool
//! and removed at the end, also after an error or an interrupt.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use super::{figures, should_stop, split, Axis, Curve, Figures, Point, SweepDoc, SweepSettings};
use crate::bench::{self, run_rados, run_rbd, BenchError, ImageChoice, RadosConfig, RbdConfig};
use crate::ceph::{self, Rados};
use crate::engine::{Arrival, RateSpec, StopRx};
use crate::result::Workload;

/// The workload of every point (its rate or queue depth set per point).
#[derive(Debug, Clone)]
pub enum SweepJob {
    /// `cephbench sweep rados ...`.
    Rados(RadosConfig),
    /// `cephbench sweep rbd ...`.
    Rbd(RbdConfig),
}

impl SweepJob {
    fn duration(&self) -> Duration {
        match self {
            SweepJob::Rados(c) => c.duration,
            SweepJob::Rbd(c) => c.duration,
        }
        .unwrap_or_default()
    }

    fn ramp(&self) -> Duration {
        match self {
            SweepJob::Rados(c) => c.ramp,
            SweepJob::Rbd(c) => c.ramp,
        }
    }

    /// Ops in flight per point of a rate sweep.
    fn concurrency(&self) -> usize {
        match self {
            SweepJob::Rados(c) => c.concurrency,
            SweepJob::Rbd(c) => c.iodepth * c.numjobs,
        }
    }

    /// The `cephbench cleanup` command(s) that remove what an interrupted
    /// sweep on `pools` may leave.
    pub fn cleanup_hint(&self, pools: &[String]) -> String {
        let per_pool: Vec<String> = match self {
            SweepJob::Rados(c) => pools
                .iter()
                .map(|p| bench::cleanup_hint(p, &c.namespace, &c.run_name))
                .collect(),
            SweepJob::Rbd(c) => match &c.image {
                ImageChoice::Create { name, .. } => pools
                    .iter()
                    .map(|p| format!("cephbench cleanup -p {p} --image {name}"))
                    .collect(),
                ImageChoice::Existing { .. } => {
                    vec!["nothing (the image is not cephbench's)".into()]
                }
            },
        };
        per_pool.join("; ")
    }

    /// The workload's name: `rados write 4 KiB`, `rbd randwrite 4 KiB`.
    pub fn label(&self) -> String {
        use crate::units::fmt_bytes;
        match self {
            SweepJob::Rados(c) => format!("rados {} {}", c.mode.as_str(), fmt_bytes(c.block_size)),
            SweepJob::Rbd(c) => format!(
                "rbd {} {}{}",
                c.mode.as_str(),
                fmt_bytes(c.bs),
                if c.numjobs > 1 {
                    format!(" x{} jobs", c.numjobs)
                } else {
                    String::new()
                }
            ),
        }
    }
}

/// How to sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The pools, one curve each, in this order.
    pub pools: Vec<String>,
    /// rbd: each pool's data pool (`--data-pool`, `--data-pools`), in the
    /// order of `pools` (empty, or `None` entries: the data in the pool).
    pub data_pools: Vec<Option<String>>,
    /// What rises.
    pub axis: Axis,
    /// The rates (ops/s) or queue depths, rising.
    pub steps: Vec<f64>,
    /// `--p99-target`.
    pub p99_target: Option<Duration>,
    /// Rate sweeps: how intended starts are spaced.
    pub arrival: Arrival,
    /// One line per point on stderr.
    pub progress: bool,
    /// `--group/--clients` (rados): every point runs on the group's agents
    /// at a common start, the rate split evenly between them, and its
    /// figures are the merge of theirs.
    pub group: Option<crate::group::GroupConfig>,
}

/// The line a sweep starts with: what runs where, and how long at most.
pub fn announce(job: &SweepJob, opts: &SweepOptions) -> String {
    let per_point = job.duration() + job.ramp();
    let points = opts.steps.len() * opts.pools.len();
    format!(
        "sweep: {} on {}: up to {} points of {} + {} ramp each ({} of measuring at most; \
         the ceiling or a p99 far past the target ends a pool's curve)",
        job.label(),
        opts.pools.join(", "),
        opts.steps.len(),
        super::secs(job.duration().as_secs_f64()),
        super::secs(job.ramp().as_secs_f64()),
        crate::suite::clock(per_point * points as u32)
    )
}

/// A finished (or stopped) sweep.
#[derive(Debug)]
pub struct SweepOutcome {
    /// The document, with every point that was measured.
    pub doc: SweepDoc,
    /// The error that stopped it, if any.
    pub error: Option<BenchError>,
    /// Commands that remove what could not be removed.
    pub leftovers: Vec<String>,
}

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Runs the sweep on every pool in turn.
pub async fn run_sweep(
    rados: &Rados,
    job: &SweepJob,
    opts: &SweepOptions,
    stop: StopRx,
) -> Result<SweepOutcome, BenchError> {
    let start = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let target_ns = opts.p99_target.map(|d| d.as_nanos() as u64);
    let mut curves = Vec::new();
    let mut error = None;
    let mut leftovers = Vec::new();
    let mut interrupted = false;
    // The agents the first point ran on run every later one.
    let mut group = opts.group.clone();
    for (i, pool) in opts.pools.iter().enumerate() {
        let data_pool = opts.data_pools.get(i).cloned().flatten();
        let mut sweep = PoolSweep {
            rados,
            job,
            opts,
            pool,
            data_pool: data_pool.clone(),
            image: None,
            prior: None,
            leftovers: &mut leftovers,
            group: group.clone(),
        };
        let (points, stopped, err) = sweep.run(target_ns, &stop).await;
        sweep.remove_image();
        group = sweep.group.take();
        interrupted |= *stop.borrow();
        match err {
            // Nothing measured at all: the sweep could not run.
            Some(e) if points.is_empty() && curves.is_empty() => return Err(e),
            Some(e) if points.is_empty() => {
                error = Some(e);
                break;
            }
            e => error = e,
        }
        curves.push(Curve {
            data_pool,
            ..Curve::new(opts.axis, pool.clone(), points, target_ns, stopped)
        });
        if interrupted || error.is_some() {
            break;
        }
    }
    let doc = SweepDoc {
        sweep_schema_version: super::SWEEP_SCHEMA_VERSION,
        tool: bench::tool_info(),
        workload: job.label(),
        axis: opts.axis,
        latency_kind: bench::latency_kind(opts.axis == Axis::Rate).into(),
        settings: SweepSettings {
            duration_s: job.duration().as_secs_f64(),
            ramp_s: job.ramp().as_secs_f64(),
            steps: opts.steps.clone(),
            concurrency: (opts.axis == Axis::Rate).then_some(job.concurrency() as u64),
            arrival: (opts.axis == Axis::Rate).then(|| opts.arrival.as_str().to_string()),
            p99_target_ns: target_ns,
        },
        curves,
        started_unix,
        elapsed_s: start.elapsed().as_secs_f64(),
        interrupted,
    };
    Ok(SweepOutcome {
        doc,
        error,
        leftovers,
    })
}

/// One pool's sweep.
struct PoolSweep<'a> {
    rados: &'a Rados,
    job: &'a SweepJob,
    opts: &'a SweepOptions,
    pool: &'a str,
    /// rbd: the pool of the created image's data objects.
    data_pool: Option<String>,
    /// The image this sweep created (rbd `--size`), to remove at the end.
    image: Option<(String, bool)>,
    /// The first point's preconditioning pass (rbd).
    prior: Option<crate::result::Precondition>,
    leftovers: &'a mut Vec<String>,
    group: Option<crate::group::GroupConfig>,
}

impl PoolSweep<'_> {
    /// Runs the points until the end, a stop rule, an error or an
    /// interrupt: the points, why it stopped early, and the error that
    /// ended it.
    async fn run(
        &mut self,
        target_ns: Option<u64>,
        stop: &StopRx,
    ) -> (Vec<Point>, Option<String>, Option<BenchError>) {
        let mut points: Vec<Point> = Vec::new();
        let mut figs: Vec<Figures> = Vec::new();
        let n = self.opts.steps.len();
        for (k, &x) in self.opts.steps.iter().enumerate() {
            if *stop.borrow() {
                return (points, Some("interrupted".into()), None);
            }
            let qd = match self.opts.axis {
                Axis::Rate => self.job.concurrency(),
                Axis::Qd => x as usize,
            };
            let outcome = match self.point(x, stop.clone()).await {
                Ok(o) => o,
                Err(e) => return (points, None, Some(e)),
            };
            if let Some(h) = &outcome.leftovers {
                self.leftovers.push(h.clone());
            }
            let r = outcome.result;
            let f = figures(self.opts.axis, qd as u64, &r);
            if self.opts.progress {
                eprintln!(
                    "sweep {}: point {} of {n}: {}: achieved {} ops/s, p50 {}, p99 {}{}",
                    self.pool,
                    k + 1,
                    self.opts.axis.fmt(x),
                    super::fmt_rate(f.achieved_iops.round()),
                    super::ms(f.latency_ns.p50 as f64),
                    super::ms(f.latency_ns.p99 as f64),
                    super::overload_words(&f).map_or(String::new(), |w| format!("; {w}"))
                );
            }
            let interrupted = r.interrupted;
            figs.push(f.clone());
            points.push(Point {
                figures: f,
                split: split(&r),
                result: r,
            });
            if let Some(e) = outcome.error {
                return (points, None, Some(e));
            }
            if interrupted {
                return (points, Some("interrupted".into()), None);
            }
            if let Some(why) = should_stop(self.opts.axis, &figs, target_ns) {
                let why = if k + 1 < n {
                    Some(format!("{why}; {} of {n} points not run", n - (k + 1)))
                } else {
                    None
                };
                return (points, why, None);
            }
        }
        (points, None, None)
    }

    /// Runs one point.
    async fn point(&mut self, x: f64, stop: StopRx) -> Result<bench::Outcome, BenchError> {
        // On a group each agent runs its share of the rate.
        let clients = self.group.as_ref().map_or(1, |g| g.clients);
        let rate = (self.opts.axis == Axis::Rate).then(|| RateSpec {
            ops_per_sec: x / clients as f64,
            arrival: self.opts.arrival,
            seed: seed(),
        });
        match self.job {
            SweepJob::Rados(base) => {
                let mut cfg = base.clone();
                cfg.pool = self.pool.to_string();
                cfg.rate = rate;
                if self.opts.axis == Axis::Qd {
                    cfg.concurrency = x as usize;
                }
                match &mut self.group {
                    None => run_rados(self.rados, &cfg, stop).await,
                    Some(g) => {
                        let job = crate::group::JobSpec::Rados(cfg);
                        let (result, error) = crate::suite::run_on_group(
                            self.rados,
                            g,
                            job,
                            stop,
                            self.opts.progress,
                        )
                        .await?;
                        Ok(bench::Outcome {
                            result,
                            error,
                            cleaned: None,
                            leftovers: None,
                            cleanup_failed: None,
                            measured_start: None,
                        })
                    }
                }
            }
            SweepJob::Rbd(base) => {
                let mut cfg = base.clone();
                cfg.pool = self.pool.to_string();
                cfg.data_pool = self.data_pool.clone();
                cfg.rate = rate;
                if self.opts.axis == Axis::Qd {
                    cfg.iodepth = x as usize;
                }
                match (&base.image, &self.image) {
                    // The first point creates the image and keeps it for the others.
                    (ImageChoice::Create { name, keep, .. }, None) => {
                        if let ImageChoice::Create { keep: k, .. } = &mut cfg.image {
                            *k = true;
                        }
                        self.image = Some((name.clone(), *keep));
                    }
                    (ImageChoice::Create { .. }, Some((name, _))) => {
                        cfg.image = ImageChoice::Existing {
                            name: name.clone(),
                            allow_write: true,
                        };
                    }
                    (ImageChoice::Existing { .. }, _) => {}
                }
                // The test area is written once, before the first point.
                if self.prior.is_some() {
                    cfg.prior_precondition = self.prior.clone();
                }
                let o = run_rbd(self.rados, &cfg, stop).await?;
                if self.prior.is_none() {
                    if let Workload::Rbd(w) = &o.result.workload {
                        self.prior = w.precondition.clone();
                    }
                }
                Ok(o)
            }
        }
    }

    /// Removes the image the first point created (unless `--keep`).
    fn remove_image(&mut self) {
        let Some((name, keep)) = self.image.take() else {
            return;
        };
        if keep {
            return;
        }
        let removed = self
            .rados
            .ioctx(self.pool)
            .and_then(|io| ceph::remove_image(&io, &name));
        match removed {
            Ok(()) => {}
            Err(e) if e.errno() == Some(libc::ENOENT) => {}
            Err(e) => {
                let hint = format!("cephbench cleanup -p {} --image {name}", self.pool);
                eprintln!("cephbench: warning: could not remove image '{name}' ({e}); remove it with `{hint}`");
                self.leftovers.push(hint);
            }
        }
    }
}
