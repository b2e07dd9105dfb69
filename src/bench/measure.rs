//! The measure step every run shares: probes before the job, the counter
//! sampler, the job itself (the engine), probes after it and the slowest
//! ops explained, the job reports, the first error diagnosed, and the result
//! document assembled and attributed. What differs between `rados` and
//! `rbd` (what the engine runs on which objects or images, what is cleaned
//! up after) is a [`Job`].
#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::assemble::{latency_definition, latency_kind, tool_info};
use super::error::{diagnose, BenchError};
use crate::ceph::Rados;
use crate::engine::{JobOutcome, StopReason};
use crate::placement::OsdSlots;
use crate::progress::{Counters, IntervalTimelines, JobClock, Sample, Sampler, Schedule, KINDS};
use crate::stats::PackedLatencies;

/// Each op kind's samples, by the engine's `OpKind` index.
pub type Timelines = [Vec<Sample>; KINDS];
use crate::result::ReadCache;
use crate::result::{BenchResult, ClusterInfo, JobReport, PoolSettings, Workload, SCHEMA_VERSION};
use crate::telemetry::quiet::{QuietEnding, QuietWatch, QUIET_POLL};
use crate::telemetry::{cluster, Probes};

/// The part of a run that differs between commands: the measured ops, their
/// reports, what is done with what they left, and the workload block.
pub(super) trait Job {
    /// Runs the measured ops, tagging each with its primary OSD when `slots`
    /// (the probes' placement) is known. `None`: nothing was run (rbd, when
    /// preconditioning failed or was interrupted).
    /// `clock` is marked when the measured job (its timeline) starts.
    async fn run(
        &mut self,
        slots: Option<&OsdSlots>,
        clock: &JobClock,
    ) -> Result<Option<Ran>, BenchError>;

    /// The job reports of `out` (one per op kind).
    /// `timelines` holds each op kind's samples (by [`OpKind::index`](crate::engine::OpKind::index)).
    fn reports(&self, out: &JobOutcome, timelines: Timelines) -> Vec<JobReport>;

    /// After the reports, with the run's first error diagnosed: records or
    /// removes what the run wrote, and adds the warnings of the outcome.
    async fn finish(
        &mut self,
        out: &JobOutcome,
        error: Option<&BenchError>,
        warnings: &mut Vec<String>,
    ) -> Cleanup;

    /// The result's workload block.
    fn workload(self) -> Workload;
}

/// The measured ops, as they ran.
pub(super) struct Ran {
    /// The job's outcome (several jobs' merged).
    pub out: JobOutcome,
    /// The per-second samples, per op kind, each with its histogram.
    pub timeline: IntervalTimelines,
    /// When the measured ops started, on this host's clock.
    pub measured_start: SystemTime,
    /// Where the job stood against `--steady`, if asked.
    pub steady: Option<crate::steady::Verdict>,
    /// The ramp, from `measured_start` on: its ops are not measured.
    pub ramp: Duration,
}

/// What a run's cleanup did.
#[derive(Debug, Default)]
pub(super) struct Cleanup {
    /// Objects removed.
    pub cleaned: Option<u64>,
    /// When the run could not remove what it created: the command that does.
    pub leftovers: Option<String>,
    /// What the run made and could not remove, which fails the command
    /// after the report (a pool of `--create-pool` the mons kept).
    pub failed: Option<String>,
}

/// What a run knows when its measure step starts.
pub(super) struct Setup<'a> {
    /// The connection (its telemetry connection does the probing).
    pub rados: &'a Rados,
    /// The pool.
    pub pool: &'a str,
    /// The cluster's identity.
    pub cluster: ClusterInfo,
    /// When the run started.
    pub started_unix: u64,
    /// Probe placement and OSD counters around the job.
    pub telemetry: bool,
    /// How often to sample the OSD counters during the job (zero: only
    /// before and after).
    pub counter_interval: Duration,
    /// `--op-history N`: per-op evidence from the OSDs' raised op history.
    pub op_history: Option<u32>,
    /// For a job that reads: whether the OSDs drop their caches just before
    /// it (`--drop-caches`); `None`: the job does not read.
    pub drop_caches: Option<bool>,
    /// An open loop (`--rate`).
    pub open_loop: bool,
    /// `--steady`, if asked.
    pub steady: Option<crate::steady::SteadyConfig>,
    /// The pool's settings (its OSDs' RAM is measured after the job).
    pub pool_settings: Option<PoolSettings>,
    /// The warnings so far.
    pub warnings: Vec<String>,
    /// Interrupted before the measured ops (rbd's preconditioning).
    pub interrupted: bool,
    /// What failed before the measured ops (rbd's preconditioning).
    pub error: Option<BenchError>,
    /// `--disrupt`: the plan carried out beside the job.
    pub disrupt: Option<crate::disrupt::DisruptPlan>,
    /// The ramp at the job's start: the OSDs' CPU is measured after it.
    pub ramp: Duration,
    /// The interrupt (cuts `--disrupt`'s wait for active+clean short).
    pub stop: Option<crate::engine::StopRx>,
}

/// The measure step: probes around `job`, its reports, and the result.
pub(super) async fn measure<J: Job>(setup: Setup<'_>, mut job: J) -> Result<Outcome, BenchError> {
    let Setup {
        rados,
        pool,
        mut warnings,
        mut pool_settings,
        mut interrupted,
        mut error,
        ..
    } = setup;
    let mut probes = Probes::before(rados, pool, setup.telemetry, &mut warnings);
    probes.sample_counters(rados, setup.counter_interval);
    probes.sample_ops(rados, setup.op_history, &mut warnings);
    let read_cache = setup
        .drop_caches
        .map(|drop| read_cache(rados, drop, probes.slots.as_deref(), &mut warnings));
    let quiet = setup
        .telemetry
        .then(|| QuietWatch::start(rados, QUIET_POLL));
    // Dropped on every way out (an error included): it puts the OSD back.
    let disruptor = setup
        .disrupt
        .clone()
        .map(|plan| crate::disrupt::Disruptor::start(rados, plan, setup.stop.clone()));
    let clock = disruptor
        .as_ref()
        .map_or_else(JobClock::default, crate::disrupt::Disruptor::clock)
        .and(probes.cpu_clock(setup.ramp));
    let ran = job.run(probes.slots.as_deref(), &clock).await?;
    probes.job_ended();
    if let Some(d) = &disruptor {
        let interrupted = ran
            .as_ref()
            .map_or(interrupted, |r| r.out.stop == StopReason::Interrupted);
        d.job_ended(interrupted);
    }
    let stalls = ran
        .as_ref()
        .map(|r| r.out.stalls.clone())
        .unwrap_or_default();
    let (outcome, timeline, measured_start, ramp) = match ran {
        Some(r) => {
            warnings.extend(not_steady(setup.steady.as_ref(), r.steady.as_ref()));
            (Some(r.out), r.timeline, Some(r.measured_start), r.ramp)
        }
        None => (None, IntervalTimelines::default(), None, Duration::ZERO),
    };
    // The look after the job runs beside the probes' own reads.
    let quiet = quiet.map(QuietWatch::end);
    let ramp_end = measured_start.map(|t| t + ramp);
    let mut osds = probes.after(rados, outcome.as_ref(), ramp_end, &mut warnings);
    if let Some(start) = measured_start {
        probes.to_run_clock(&mut osds, start);
    }
    let (cluster_state, note) = quiet.map_or((None, None), QuietEnding::collect);
    warnings.extend(note);
    if let Some(p) = pool_settings.as_mut() {
        cluster::measure_osd_ram(rados, p);
    }
    let tail = probes.tail(rados, outcome.as_ref(), &mut warnings);
    let pace = match &outcome {
        Some(out) if setup.telemetry => pace_of(rados, pool, out).await,
        _ => None,
    };

    let mut jobs = Vec::new();
    let mut cleanup = Cleanup::default();
    if let Some(mut out) = outcome {
        interrupted |= out.stop == StopReason::Interrupted;
        jobs = job.reports(&out, timeline.samples);
        error = out.first_error.take().map(|e| diagnose(rados, pool, e));
        cleanup = job.finish(&out, error.as_ref(), &mut warnings).await;
    }
    // The wait for active+clean went on beside the probes and the cleanup.
    let disruption = disruptor
        .and_then(|d| finish_disruption(d, &jobs, &timeline.latencies, &stalls, &mut warnings));
    // After `--disrupt`'s OSD is back: the state against the one before.
    warnings.extend(probes.osd_state_change(rados));
    let mut result = BenchResult {
        schema_version: SCHEMA_VERSION,
        tool: tool_info(),
        cluster: setup.cluster,
        started_unix: setup.started_unix,
        workload: job.workload(),
        latency_kind: latency_kind(setup.open_loop).into(),
        latency_definition: latency_definition(setup.open_loop).into(),
        jobs,
        osds,
        placement: probes.placement_info(),
        network: probes.network(rados),
        tail,
        interrupted,
        warnings,
        findings: Vec::new(),
        pool: pool_settings,
        clients: None,
        cluster_state,
        read_cache,
        disruption,
        pace,
    };
    crate::explain::changes::annotate(&mut result);
    crate::explain::attribute(&mut result);
    Ok(Outcome {
        result,
        error,
        cleaned: cleanup.cleaned,
        leftovers: cleanup.leftovers,
        cleanup_failed: cleanup.failed,
        measured_start,
    })
}

/// The pace probe after a write job that ran to its end without an error:
/// one op every job's time between ops (its elapsed time over its ops).
async fn pace_of(rados: &Rados, pool: &str, out: &JobOutcome) -> Option<crate::result::PaceProbe> {
    use crate::engine::OpKind;
    let ops = out.kinds[OpKind::Write.index()].ops;
    let wrote_only = out.kinds[OpKind::Read.index()].ops == 0 && ops > 0;
    if !wrote_only || out.stop == StopReason::Interrupted || out.first_error.is_some() {
        return None;
    }
    super::pace::probe(
        rados,
        pool,
        out.elapsed / ops.try_into().unwrap_or(u32::MAX),
    )
    .await
}

/// Drops the caches of the OSDs serving the pool (those of `slots`, else
/// every OSD up) when `drop`: `cold` when every one did, else `warm` with a
/// warning naming what failed.
fn read_cache(
    rados: &Rados,
    drop: bool,
    slots: Option<&OsdSlots>,
    warnings: &mut Vec<String>,
) -> ReadCache {
    if !drop {
        return ReadCache::Warm;
    }
    let rados = rados.telemetry();
    let osds = match slots {
        Some(s) => s.osds().to_vec(),
        None => cluster::osd_states(rados)
            .map(|v| v.into_iter().filter(|o| o.1).map(|o| o.0).collect())
            .unwrap_or_default(),
    };
    match cluster::drop_caches(rados, &osds) {
        Ok(()) if !osds.is_empty() => {
            let kept = cluster::onodes_kept(rados, &osds);
            if !kept.is_empty() {
                warnings.push(format!(
                    "--drop-caches: after `cache drop` {} in cache (BlueStore keeps pinned \
                     ones, e.g. of objects whose small writes are still deferred): the reads \
                     of those objects were not cold",
                    kept.iter()
                        .map(|(o, n)| format!("osd.{o} still held {n} onodes"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            ReadCache::Cold
        }
        Ok(()) => {
            warnings.push(
                "--drop-caches: no OSD to drop the caches of (the OSD list could not be read); \
                 the reads ran warm"
                    .into(),
            );
            ReadCache::Warm
        }
        Err(e) => {
            warnings.push(format!("{e}; the reads ran warm"));
            ReadCache::Warm
        }
    }
}

/// Waits until `at` (runs coordinated across clients start their measured
/// ops together); `None` or a time past: at once.
pub(super) async fn start_at(at: Option<SystemTime>) {
    if let Some(at) = at {
        if let Ok(wait) = at.duration_since(SystemTime::now()) {
            tokio::time::sleep(wait).await;
        }
    }
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
    /// What the run made and could not remove (the command then fails).
    pub cleanup_failed: Option<String>,
    /// When the measured ops started, on this host's clock (rados runs).
    pub measured_start: Option<SystemTime>,
}

/// `--disrupt`'s end: what it did, against the jobs' per-second figures
/// and the engine's stalls.
fn finish_disruption(
    d: crate::disrupt::Disruptor,
    jobs: &[JobReport],
    latencies: &[Vec<PackedLatencies>; KINDS],
    stalls: &[crate::engine::Stall],
    warnings: &mut Vec<String>,
) -> Option<crate::result::disruption::Disruption> {
    // Each job's samples with their intervals' histograms (a job is one op kind).
    let timelines: Vec<crate::disrupt::JobTimeline> = jobs
        .iter()
        .map(|j| {
            let kind = crate::engine::OpKind::ALL
                .into_iter()
                .find(|k| k.as_str() == j.op);
            crate::disrupt::JobTimeline {
                job: &j.name,
                samples: &j.timeline,
                latencies: kind.map_or(&[][..], |k| &latencies[k.index()]),
            }
        })
        .collect();
    d.finish(&timelines, stalls, warnings)
}

/// The report's line for a job that ran `--steady-max` without becoming
/// steady (`None`: it became steady, or `--steady` was not asked).
pub(super) fn not_steady(
    cfg: Option<&crate::steady::SteadyConfig>,
    v: Option<&crate::steady::Verdict>,
) -> Option<String> {
    let (cfg, v) = cfg.zip(v).filter(|(_, v)| !v.attained)?;
    let last = match v.last {
        Some(c) => format!(
            "; the last {:.0} s moved {} against a limit of {} (window mean {})",
            cfg.window.as_secs_f64(),
            fmt_figure(c.value),
            fmt_figure(c.limit),
            fmt_figure(c.mean),
        ),
        None => String::new(),
    };
    Some(format!(
        "not steady after {:.0} s ({}{last}): the figures are over the whole measured window",
        cfg.max.as_secs_f64(),
        cfg.criterion
    ))
}

fn fmt_figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// Drives `job` while sampling `counters` every `interval` (the timeline, and
/// the live line on stderr when `live`), on a [`Schedule`] that ends an
/// interval exactly where the ramp does. A tick missed by a busy host is
/// skipped, except the ramp's last: every later interval starts after it.
pub async fn sampled<F: Future>(
    job: F,
    counters: Vec<Arc<Counters>>,
    ramp: Duration,
    interval: Duration,
    live: bool,
    steady: Option<&crate::steady::SteadyConfig>,
    clock: &JobClock,
) -> (F::Output, IntervalTimelines, Option<crate::steady::Verdict>) {
    let start = Instant::now();
    clock.mark(start);
    let plan = Schedule::new(ramp, interval);
    let mut sampler = Sampler::new(counters, start, plan.ramp_ticks, live);
    if let Some(Ok(c)) = steady.map(|s| s.criterion()) {
        sampler.watch_steady(c, steady.map_or(Duration::ZERO, |s| s.window), interval);
    }
    tokio::pin!(job);
    let at = |k: u32| start + plan.first + plan.interval * k;
    let mut k = 0u32;
    let out = loop {
        tokio::select! {
            out = &mut job => break out,
            () = tokio::time::sleep_until(at(k).into()) => {
                sampler.tick();
                k += 1;
                let now = Instant::now();
                while at(k) < now && k as usize >= plan.ramp_ticks {
                    k += 1;
                }
            }
        }
    };
    sampler.tick();
    let verdict = sampler.steady_verdict();
    (out, sampler.into_timelines(), verdict)
}
