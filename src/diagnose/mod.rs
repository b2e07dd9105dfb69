//! `cephbench diagnose`: one plan that finds a pool's weak links and says
//! what fixing each would gain.
//!
//! The plan, inside a time budget:
//! 1. every OSD of the pool checked on its own (`osd-bench`'s method: the
//!    OSD's own bench, then single writes queued → committed, timed by the
//!    OSD), sampled evenly by id where the budget cannot hold them all;
//! 2. four rados jobs on the pool, the probes around each (split, OSD
//!    counters and CPU, RTT probes, the cluster's quiet check): a QD1 4 KiB
//!    write, a QD16 4 KiB write, 4 KiB random reads of what they wrote at
//!    QD16, and a QD1 4 MiB write.
//!
//! Then [`crate::explain::diagnosis`] ranks the weak links. The document
//! keeps every figure they stand on.
#![forbid(unsafe_code)]

pub mod report;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bench::BenchError;
use crate::ceph::Rados;
use crate::engine::StopRx;
use crate::explain::diagnosis::{self, Diagnosis, Inputs, OsdSettings};
use crate::explain::outliers::OsdFigure;
use crate::osdbench::{self, OsdBenchConfig, OsdBenchError, OsdBenchResult, Target};
use crate::result::BenchResult;
use crate::suite::{self, JobKind, Suite, SuiteDoc, SuiteJob, SuiteOptions};
use crate::telemetry::settings;
use crate::workload::rados::RadosMode;

/// Layout version of [`DiagnosisDoc`].
pub const DIAGNOSE_SCHEMA_VERSION: u32 = 1;

/// The least budget: below it the jobs are too short to say anything.
pub const MIN_BUDGET: Duration = Duration::from_secs(60);

/// The time one OSD's checks take, for the budget (the deep-queue bench of
/// [`OSD_WRITES`] 4 KiB writes and [`OSD_PROBES`] single writes, each a
/// `tell` round trip: 1–2 s on the project's clusters).
pub const PER_OSD: Duration = Duration::from_secs(2);

/// 4 KiB writes of each OSD's deep-queue bench.
pub const OSD_WRITES: u64 = 1000;

/// Single-write benches of each OSD.
pub const OSD_PROBES: u64 = 50;

/// The share of the budget the OSDs' own checks may take.
const OSD_SHARE: f64 = 0.25;

/// What the jobs' start, warm-up and cleanup take beside their measured
/// time, for the budget.
const OVERHEAD: Duration = Duration::from_secs(20);

/// Each job's ramp (excluded from its figures).
pub const RAMP: Duration = Duration::from_secs(2);

/// The jobs, by name (the diagnosis finds its inputs by them).
pub const QD1_WRITE: &str = "4k write QD1";
/// See [`QD1_WRITE`].
pub const DEEP_WRITE: &str = "4k write QD16";
/// See [`QD1_WRITE`].
pub const RAND_READ: &str = "4k rand read QD16";
/// See [`QD1_WRITE`].
pub const BIG_WRITE: &str = "4M write QD1";

/// A validated `diagnose`.
#[derive(Debug, Clone)]
pub struct DiagnoseConfig {
    /// The pool.
    pub pool: String,
    /// The time budget (at least [`MIN_BUDGET`]).
    pub budget: Duration,
    /// The rados jobs' namespace.
    pub namespace: Option<String>,
    /// How often the probes read the OSDs' counters during a job.
    pub counter_interval: Duration,
    /// Progress lines on stderr.
    pub progress: bool,
}

/// How the budget is spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The OSDs checked on their own.
    pub osds: Vec<i32>,
    /// The pool's OSDs left out of those checks (the budget).
    pub not_checked: Vec<i32>,
    /// Each job's measured time.
    pub job_runtime: Duration,
}

/// Spends `budget` on the pool's `osds` (sorted ids): at most
/// [`OSD_SHARE`] of it on the OSDs' own checks ([`PER_OSD`] each, evenly
/// sampled by id beyond that, at least 3), the rest on the four jobs, each
/// measured 3–60 s after its ramp.
pub fn plan(budget: Duration, osds: &[i32]) -> Plan {
    let most = ((budget.as_secs_f64() * OSD_SHARE / PER_OSD.as_secs_f64()) as usize).max(3);
    let chosen: Vec<i32> = if osds.len() <= most {
        osds.to_vec()
    } else {
        (0..most).map(|k| osds[k * osds.len() / most]).collect()
    };
    let not_checked = osds
        .iter()
        .filter(|o| !chosen.contains(o))
        .copied()
        .collect();
    let spent = PER_OSD.as_secs_f64() * chosen.len() as f64 + OVERHEAD.as_secs_f64();
    let per_job = (budget.as_secs_f64() - spent) / 4.0 - RAMP.as_secs_f64();
    Plan {
        osds: chosen,
        not_checked,
        job_runtime: Duration::from_secs_f64(per_job.clamp(3.0, 60.0)),
    }
}

/// The diagnosis' jobs, each measured `runtime` once.
pub fn jobs_suite(runtime: Duration) -> Suite {
    const KIB: u64 = 1024;
    let job = |name: &str, mode, size: u64, depth| SuiteJob {
        name: name.into(),
        kind: JobKind::Rados {
            mode,
            block_size: size,
            object_size: size,
            concurrent_ios: depth,
        },
        runtime: None,
        ramp: None,
        runs: None,
    };
    Suite {
        name: "diagnose".into(),
        source: "built-in".into(),
        runs: 1,
        runtime,
        ramp: RAMP,
        image_size: 0,
        test_area: 0,
        jobs: vec![
            job(QD1_WRITE, RadosMode::Write, 4 * KIB, 1),
            job(DEEP_WRITE, RadosMode::Write, 4 * KIB, 16),
            // Reads the 4 KiB objects the two writes left (the suite removes
            // them at the end); the 4 MiB write comes after it.
            job(RAND_READ, RadosMode::Rand, 4 * KIB, 16),
            job(BIG_WRITE, RadosMode::Write, 4096 * KIB, 1),
        ],
        namespace: String::new(),
        data_pool: None,
    }
}

/// The whole `diagnose` document (`--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisDoc {
    /// Layout version ([`DIAGNOSE_SCHEMA_VERSION`]).
    pub diagnose_schema_version: u32,
    /// cephbench's version.
    pub version: String,
    /// The pool.
    pub pool: String,
    /// The budget, s.
    pub budget_s: f64,
    /// How long it took, s.
    pub elapsed_s: f64,
    /// Whether it was interrupted (what it found so far is here).
    pub interrupted: bool,
    /// The pool's OSDs left out of the per-OSD checks (the budget).
    pub osds_not_checked: Vec<i32>,
    /// What each checked OSD ran with (see [`settings`]).
    #[serde(default)]
    pub settings: Vec<OsdSettings>,
    /// The OSDs' own checks.
    pub osd_bench: Option<OsdBenchResult>,
    /// The jobs.
    pub runs: Option<SuiteDoc>,
    /// The weak links.
    pub diagnosis: Diagnosis,
}

impl DiagnosisDoc {
    /// The result of job `name`, if it ran.
    pub fn job(&self, name: &str) -> Option<&BenchResult> {
        self.runs
            .as_ref()?
            .runs
            .iter()
            .find(|r| r.job == name)
            .map(|r| &r.result)
    }

    /// The diagnosis from the figures the document holds.
    pub fn diagnose(&mut self) {
        let commits: Vec<OsdFigure> = self
            .osd_bench
            .iter()
            .flat_map(|b| &b.osds)
            .filter_map(|r| {
                Some(OsdFigure {
                    osd: r.osd,
                    class: r
                        .device
                        .as_ref()
                        .and_then(|d| d.class.clone())
                        .unwrap_or_default(),
                    value: r.qd1?.p50_ns,
                })
            })
            .collect();
        let qd1_write = self.job(QD1_WRITE);
        self.diagnosis = diagnosis::diagnose(&Inputs {
            commits: &commits,
            qd1_write,
            deep_write: self.job(DEEP_WRITE),
        });
        // The gains are the QD1 write's: named as the plan names it.
        if self.diagnosis.projected_job.is_some() {
            self.diagnosis.projected_job = Some(QD1_WRITE.into());
        }
        let not_quiet: Vec<(String, String)> = self
            .runs
            .iter()
            .flat_map(|s| &s.runs)
            .filter_map(|r| Some((r.job.clone(), r.result.cluster_state.as_ref()?.not_quiet()?)))
            .collect();
        self.diagnosis.distortions = diagnosis::distortions(&self.settings, &not_quiet);
    }
}

/// Why a diagnosis stopped.
#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    /// The OSDs' own checks could not start.
    #[error(transparent)]
    OsdBench(#[from] OsdBenchError),
    /// A job could not run.
    #[error(transparent)]
    Bench(#[from] BenchError),
}

/// The outcome: the document, and the error that stopped a job, if any
/// (the document then holds what ran).
#[derive(Debug)]
pub struct DiagnoseOutcome {
    /// What was found.
    pub doc: DiagnosisDoc,
    /// The error that stopped the jobs.
    pub error: Option<BenchError>,
}

/// Runs the plan (see the module); `progress` gets a line per step.
pub async fn run(
    rados: &Rados,
    cfg: &DiagnoseConfig,
    stop: StopRx,
    mut progress: impl FnMut(&str),
) -> Result<DiagnoseOutcome, DiagnoseError> {
    let start = Instant::now();
    let all = osdbench::choose_osds(rados.telemetry(), &Target::Pool(cfg.pool.clone()))?;
    let plan = plan(cfg.budget, &all);
    progress(&format!(
        "checking {} of the pool's {} OSDs on their own, then 4 jobs of {:.0} s",
        plan.osds.len(),
        all.len(),
        plan.job_runtime.as_secs_f64()
    ));
    let bench = osdbench::run(
        rados,
        &OsdBenchConfig {
            target: Target::Osds(plan.osds.clone()),
            block_size: 4096,
            writes: OSD_WRITES,
            probes: OSD_PROBES,
        },
        &mut progress,
    )?;
    let settings = settings::read(rados.telemetry(), &plan.osds);
    let mut error = None;
    let runs = if *stop.borrow() {
        None
    } else {
        let opts = SuiteOptions {
            pool: cfg.pool.clone(),
            data_pool: None,
            runs: None,
            runtime: None,
            ramp: None,
            image_size: None,
            test_area: None,
            telemetry: true,
            counter_interval: cfg.counter_interval,
            interval: crate::progress::DEFAULT_INTERVAL,
            op_history: None,
            drop_caches: false,
            progress: cfg.progress,
            group: None,
            namespace: cfg.namespace.clone(),
        };
        let out =
            suite::run_suite(rados, &jobs_suite(plan.job_runtime), &opts, stop.clone()).await?;
        error = out.error;
        Some(out.doc)
    };
    let mut doc = DiagnosisDoc {
        diagnose_schema_version: DIAGNOSE_SCHEMA_VERSION,
        version: env!("CARGO_PKG_VERSION").into(),
        pool: cfg.pool.clone(),
        budget_s: cfg.budget.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        interrupted: *stop.borrow(),
        osds_not_checked: plan.not_checked,
        settings,
        osd_bench: Some(bench),
        runs,
        diagnosis: Diagnosis::default(),
    };
    doc.diagnose();
    Ok(DiagnoseOutcome { doc, error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_holds_the_osds_and_four_jobs() {
        let five = Duration::from_secs(300);
        // 3 OSDs: all checked; (300 - 6 - 20) / 4 - 2 = 66.5 s, held to 60.
        let p = plan(five, &[0, 1, 2]);
        assert_eq!((p.osds.len(), p.not_checked.len()), (3, 0));
        assert_eq!(p.job_runtime, Duration::from_secs(60));
        // 1,000 OSDs: a quarter of 300 s at 2 s each, 37, evenly by id.
        let ids: Vec<i32> = (0..1000).collect();
        let p = plan(five, &ids);
        assert_eq!(p.osds.len(), 37);
        assert_eq!(p.not_checked.len(), 963);
        assert_eq!((p.osds[0], p.osds[1], p.osds[36]), (0, 27, 972));
        // (300 - 74 - 20) / 4 - 2 = 49.5 s.
        assert!((p.job_runtime.as_secs_f64() - 49.5).abs() < 1e-9);
        // The least budget: 7 OSDs at most, jobs of (60 - 14 - 20)/4 - 2 = 4.5 s.
        let p = plan(MIN_BUDGET, &ids[..7]);
        assert_eq!(p.osds.len(), 7);
        assert!((p.job_runtime.as_secs_f64() - 4.5).abs() < 1e-9);
        // What the whole plan spends stays within the budget (its estimates).
        for (b, n) in [(60, 3), (60, 500), (300, 1000), (1800, 40)] {
            let budget = Duration::from_secs(b);
            let p = plan(budget, &ids[..n]);
            let spent = PER_OSD * p.osds.len() as u32 + OVERHEAD + (p.job_runtime + RAMP) * 4;
            assert!(spent <= budget, "{b} s, {n} OSDs: {spent:?}");
        }
    }

    #[test]
    fn the_jobs_read_what_the_4k_writes_left() {
        let s = jobs_suite(Duration::from_secs(10));
        let names: Vec<&str> = s.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, [QD1_WRITE, DEEP_WRITE, RAND_READ, BIG_WRITE]);
        assert_eq!(s.runs, 1);
    }
}
