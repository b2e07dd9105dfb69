//! CrystalDiskMark's table (its four profiles, pools side by side): one row per profile, read and write
//! MB/s (10^6 bytes/s, as CrystalDiskMark counts) side by side per pool
//! with the Diff against the first pool, and each cell's p99. Pure: built
//! from suite documents whose jobs are CrystalDiskMark's profiles.
#![forbid(unsafe_code)]

use super::summary::{Aggregate, SuiteDoc, SummaryRow};
use crate::compare::welch_differs;

/// CrystalDiskMark's default profiles, in its order.
pub const CDM_PROFILES: [&str; 4] = ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"];

/// Whether `doc` gets CrystalDiskMark's table: the built-in `cdm` suite, or
/// any suite whose jobs are exactly the profiles + ` read` / ` write`.
pub fn is_cdm(doc: &SuiteDoc) -> bool {
    if doc.suite == "cdm" && doc.source == "built-in" {
        return true;
    }
    let mut jobs = doc.job_order();
    jobs.sort();
    let mut want: Vec<String> = CDM_PROFILES
        .iter()
        .flat_map(|p| [format!("{p} read"), format!("{p} write")])
        .collect();
    want.sort();
    jobs == want
}

/// One pool's figures of one profile and direction.
#[derive(Debug, Clone, PartialEq)]
pub struct CdmCell {
    /// MB/s (10^6 bytes/s): the median of the runs, or the best run's.
    pub mb_s: f64,
    /// p99 completion latency, ms (of the same aggregate).
    pub p99_ms: f64,
    /// Each run's MB/s, for the noise verdict.
    pub runs: Vec<f64>,
}

/// A pool's Diff against the first pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CdmDiff {
    /// (pool - first) / first, percent of MB/s.
    pub pct: f64,
    /// Real (`Some(true)`), within the noise (`Some(false)`), or no
    /// verdict (a side with one run): Welch's t-test between runs.
    pub significant: Option<bool>,
}

/// One profile: per pool (in order) its read and write cells, and each
/// pool's Diff against the first (`None` for the first, or a missing cell).
#[derive(Debug, Clone, PartialEq)]
pub struct CdmRow {
    /// `SEQ1M Q8T1`, ...
    pub profile: String,
    /// Read cell per pool.
    pub read: Vec<Option<CdmCell>>,
    /// Write cell per pool.
    pub write: Vec<Option<CdmCell>>,
    /// Read Diff per pool.
    pub read_diff: Vec<Option<CdmDiff>>,
    /// Write Diff per pool.
    pub write_diff: Vec<Option<CdmDiff>>,
}

/// The table over one or several pools (the first is the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct CdmTable {
    /// The pools, in order.
    pub pools: Vec<String>,
    /// How each cell is made from the runs.
    pub aggregate: Aggregate,
    /// Most runs behind a cell, per pool.
    pub runs: Vec<u32>,
    /// One row per profile.
    pub rows: Vec<CdmRow>,
    /// Each pool's usable fraction of its raw capacity (1/size, or k/(k+m)
    /// erasure-coded), `None` where its settings are unknown.
    pub usable: Vec<Option<f64>>,
}

impl CdmTable {
    /// `median of 3 runs` (or `2-3 runs` when the pools differ).
    pub fn of_runs(&self) -> String {
        let lo = self.runs.iter().copied().min().unwrap_or(0);
        let hi = self.runs.iter().copied().max().unwrap_or(0);
        if lo == hi {
            self.aggregate.of_runs(lo)
        } else {
            format!("{} of {lo}-{hi} runs", self.aggregate.as_str())
        }
    }

    /// Whether any Diff lacks a verdict because a side had one run.
    pub fn single_run(&self) -> bool {
        self.pools.len() > 1 && self.runs.iter().any(|r| *r < 2)
    }
}

fn row<'a>(doc: &'a SuiteDoc, job: &str, op: &str) -> Option<&'a SummaryRow> {
    let rows = || doc.summary.rows.iter().filter(|r| r.job == job);
    rows().find(|r| r.op == op).or_else(|| rows().next())
}

fn cell(doc: &SuiteDoc, job: &str, op: &str) -> Option<CdmCell> {
    row(doc, job, op).map(|r| CdmCell {
        mb_s: r.mb_s.value,
        p99_ms: r.p99_ms.value,
        runs: r.mb_s.runs.clone(),
    })
}

fn diffs(cells: &[Option<CdmCell>]) -> Vec<Option<CdmDiff>> {
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (Some(a), Some(b)) = (cells[0].as_ref(), c.as_ref()) else {
                return None;
            };
            (i > 0 && a.mb_s != 0.0).then(|| CdmDiff {
                pct: (b.mb_s - a.mb_s) / a.mb_s * 100.0,
                significant: welch_differs(&a.runs, &b.runs),
            })
        })
        .collect()
}

/// The table of `docs` (one per pool, the first the baseline), when every
/// one is CrystalDiskMark-shaped ([`is_cdm`]) and they share an aggregate.
pub fn cdm_table(docs: &[SuiteDoc]) -> Option<CdmTable> {
    let first = docs.first()?;
    let aggregate = first.settings.aggregate;
    if !docs
        .iter()
        .all(|d| is_cdm(d) && d.settings.aggregate == aggregate)
    {
        return None;
    }
    let rows = CDM_PROFILES
        .iter()
        .map(|p| {
            let read: Vec<_> = docs
                .iter()
                .map(|d| cell(d, &format!("{p} read"), "read"))
                .collect();
            let write: Vec<_> = docs
                .iter()
                .map(|d| cell(d, &format!("{p} write"), "write"))
                .collect();
            CdmRow {
                profile: p.to_string(),
                read_diff: diffs(&read),
                write_diff: diffs(&write),
                read,
                write,
            }
        })
        .collect();
    Some(CdmTable {
        pools: docs.iter().map(|d| d.io_pool().to_string()).collect(),
        usable: docs
            .iter()
            .map(|d| {
                d.pool_settings
                    .as_ref()
                    .map(crate::result::PoolSettings::usable_fraction)
            })
            .collect(),
        aggregate,
        runs: docs
            .iter()
            .map(|d| d.summary.rows.iter().map(|r| r.runs).max().unwrap_or(0))
            .collect(),
        rows,
    })
}
