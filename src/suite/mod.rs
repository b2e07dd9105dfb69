//! Suites: a fixed list of jobs run one after another, each `runs` times,
//! summarised as one table (median over runs, spread between runs).
//!
//! Built-ins: `lab` (the lab method on an RBD image: precondition, five
//! jobs, two runs, the checks beside them), `cdm`
//! (CrystalDiskMark's four tests, read and write) and `rados` (rados
//! bench's write / seq / rand at its defaults) and `vm` (a guest's fio lines, for IOPS per GiB of one OSD's RAM:
//! fio's 4k random read and write at QD32 x 4 jobs and a 1M sequential read,
//! whose table sets IOPS beside the RAM the OSDs hold). A user suite is a TOML file
//! whose jobs take the options of `cephbench rbd` / `cephbench rados`
//! ([`load`], format in docs/usage.md and `examples/suite.toml`).
#![forbid(unsafe_code)]

mod cdm;
mod file;
mod run;
mod summary;

use std::time::Duration;

use crate::workload::rados::RadosMode;
use crate::workload::rbd::RbdMode;

pub use cdm::{cdm_table, is_cdm, CdmCell, CdmDiff, CdmRow, CdmTable, CDM_PROFILES};
pub use file::{load, parse, SuiteFileError};
pub(crate) use run::run_on_group;
pub use run::{clock, run_suite, run_suites, SuiteOptions, SuiteOutcome};
pub use summary::{
    as_bench_result, compare_suites, median, mib_s, not_quiet_runs, row_client, suite_source,
    summarize, Aggregate, Figure, RunEntry, SuiteDoc, SuiteSettings, Suites, Summary, SummaryRow,
    SPREAD_LIMIT_PCT, SUITE_SCHEMA_VERSION,
};

/// A suite: jobs and their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Its name (`lab`, `cdm`, `rados`, or the file's `name`).
    pub name: String,
    /// Where it came from: `built-in` or the file's path.
    pub source: String,
    /// Runs of every job (`--runs` overrides).
    pub runs: u32,
    /// Measured time of each run (`--runtime` overrides; a job's own wins over this).
    pub runtime: Duration,
    /// Ramp-up of each run, excluded from the figures (`--ramp` overrides).
    pub ramp: Duration,
    /// Size of the RBD image the `rbd` jobs share (created once, removed at the end).
    pub image_size: u64,
    /// Bytes of that image the jobs use, preconditioned once before the first job.
    pub test_area: u64,
    /// The jobs, in order.
    pub jobs: Vec<SuiteJob>,
    /// RADOS namespace of the rados jobs' objects ("" for the default;
    /// `-N` overrides); RBD images stay in the pool's default namespace.
    pub namespace: String,
    /// The pool of the RBD image's data objects (a suite file's
    /// `data-pool`; `--data-pool`/`--data-pools` override it).
    pub data_pool: Option<String>,
}

/// One job of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteJob {
    /// Row name in the table.
    pub name: String,
    /// What it runs.
    pub kind: JobKind,
    /// Its own measured time, if it differs from the suite's.
    pub runtime: Option<Duration>,
    /// Its own ramp, if it differs from the suite's.
    pub ramp: Option<Duration>,
    /// Its own number of runs, if fewer than the suite's (the lab method runs
    /// its fsync job once); `--runs` overrides it as it does the suite's.
    pub runs: Option<u32>,
}

/// The command a job runs, with that command's options.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    /// `cephbench rbd` on the suite's image.
    Rbd {
        /// `--rw`.
        rw: RbdMode,
        /// `--bs`.
        bs: u64,
        /// `--iodepth`.
        iodepth: usize,
        /// `--numjobs`.
        numjobs: usize,
        /// `--rwmix-read`.
        rwmix_read: u8,
        /// `--fsync-every`.
        fsync_every: Option<u64>,
    },
    /// `cephbench rados`; a `write` keeps its objects for the `seq`/`rand`
    /// jobs after it, and the suite removes them.
    Rados {
        /// write, seq or rand.
        mode: RadosMode,
        /// `-b`.
        block_size: u64,
        /// `-O`.
        object_size: u64,
        /// `-t`.
        concurrent_ios: usize,
    },
}

impl JobKind {
    /// Whether this job runs on the suite's RBD image.
    pub fn is_rbd(&self) -> bool {
        matches!(self, JobKind::Rbd { .. })
    }
}

/// The names of the built-in suites.
pub const BUILTINS: [&str; 4] = ["lab", "cdm", "rados", "vm"];

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

fn rbd(name: &str, rw: RbdMode, bs: u64, iodepth: usize, fsync: Option<u64>) -> SuiteJob {
    rbd_jobs(name, rw, bs, iodepth, 1, fsync)
}

fn rbd_jobs(
    name: &str,
    rw: RbdMode,
    bs: u64,
    iodepth: usize,
    numjobs: usize,
    fsync: Option<u64>,
) -> SuiteJob {
    SuiteJob {
        name: name.into(),
        kind: JobKind::Rbd {
            rw,
            bs,
            iodepth,
            numjobs,
            rwmix_read: 50,
            fsync_every: fsync,
        },
        runtime: None,
        ramp: None,
        runs: None,
    }
}

fn rados(mode: RadosMode) -> SuiteJob {
    SuiteJob {
        name: mode.as_str().into(),
        kind: JobKind::Rados {
            mode,
            block_size: 4 * MIB,
            object_size: 4 * MIB,
            concurrent_ios: 16,
        },
        runtime: None,
        ramp: None,
        runs: None,
    }
}

/// A built-in suite by name.
pub fn builtin(name: &str) -> Option<Suite> {
    use RbdMode::*;
    let s = |name: &str, runtime, ramp, image_size, test_area, jobs| Suite {
        name: name.into(),
        source: "built-in".into(),
        runs: 2,
        runtime: Duration::from_secs(runtime),
        ramp: Duration::from_secs(ramp),
        image_size,
        test_area,
        jobs,
        namespace: String::new(),
        data_pool: None,
    };
    match name {
        // The lab method: 8 GiB disk, 2 GiB test area preconditioned, five
        // 20-second jobs with a 3-second ramp, twice; the fsync job (QD1,
        // 15 s + 2 s ramp) once; and its first check, `rados bench -b 4096
        // -t 1` write: the same 4k sync write without librbd in the way.
        "lab" => Some(s(
            "lab",
            20,
            3,
            8 * GIB,
            2 * GIB,
            vec![
                rbd("4k randread QD32", Randread, 4 * KIB, 32, None),
                rbd("4k randwrite QD32", Randwrite, 4 * KIB, 32, None),
                rbd("4k randwrite QD1", Randwrite, 4 * KIB, 1, None),
                rbd("1M seq read QD16", Read, MIB, 16, None),
                rbd("1M seq write QD16", Write, MIB, 16, None),
                SuiteJob {
                    runtime: Some(Duration::from_secs(15)),
                    ramp: Some(Duration::from_secs(2)),
                    runs: Some(1),
                    ..rbd("4k randwrite QD1 fsync", Randwrite, 4 * KIB, 1, Some(1))
                },
                SuiteJob {
                    name: "rados 4k write QD1".into(),
                    kind: JobKind::Rados {
                        mode: RadosMode::Write,
                        block_size: 4 * KIB,
                        object_size: 4 * KIB,
                        concurrent_ios: 1,
                    },
                    runtime: None,
                    ramp: None,
                    runs: None,
                },
            ],
        )),
        // CrystalDiskMark's default profile: a 1 GiB test file, reads then writes.
        "cdm" => Some(s(
            "cdm",
            5,
            1,
            GIB,
            GIB,
            vec![
                rbd("SEQ1M Q8T1 read", Read, MIB, 8, None),
                rbd("SEQ1M Q1T1 read", Read, MIB, 1, None),
                rbd("RND4K Q32T1 read", Randread, 4 * KIB, 32, None),
                rbd("RND4K Q1T1 read", Randread, 4 * KIB, 1, None),
                rbd("SEQ1M Q8T1 write", Write, MIB, 8, None),
                rbd("SEQ1M Q1T1 write", Write, MIB, 1, None),
                rbd("RND4K Q32T1 write", Randwrite, 4 * KIB, 32, None),
                rbd("RND4K Q1T1 write", Randwrite, 4 * KIB, 1, None),
            ],
        )),
        // IOPS per GiB of one OSD's RAM: one guest's 32 GB data disk, fio at QD32 x 4 jobs for 4k
        // random read and write, one job for the 1M read, 60 s, the median
        // of three runs.
        "vm" => Some(Suite {
            runs: 3,
            ..s(
                "vm",
                60,
                3,
                32 * GIB,
                32 * GIB,
                vec![
                    rbd_jobs("4k randread QD32x4", Randread, 4 * KIB, 32, 4, None),
                    rbd_jobs("4k randwrite QD32x4", Randwrite, 4 * KIB, 32, 4, None),
                    rbd("1M seq read QD32", Read, MIB, 32, None),
                ],
            )
        }),
        // rados bench's defaults: 4 MiB ops, 16 in flight, 60 s.
        "rados" => Some(s(
            "rados",
            60,
            0,
            0,
            0,
            vec![
                rados(RadosMode::Write),
                rados(RadosMode::Seq),
                rados(RadosMode::Rand),
            ],
        )),
        _ => None,
    }
}

impl Suite {
    /// Whether any job runs on an RBD image.
    pub fn uses_image(&self) -> bool {
        self.jobs.iter().any(|j| j.kind.is_rbd())
    }
}
