//! The analysis, in one home: pure functions over a finished result that
//! say why it came out as it did. They read what the engine and telemetry
//! put into the result document and write their answers back into it, so a
//! stored result explains itself again (`cephbench report`).
//!
//! - [`attribution`]: the split of a client-observed mean into the parts of
//!   an op's path, and the findings on the drives, copies and cables;
//! - [`cpu`]: each OSD's CPU figures and whether its CPU set the pace;
//! - [`whatif`]: projections of a job with some parts of its split replaced;
//! - [`changes`]: the lasting changes during a run and what moved with them;
//! - [`drive`]: the thresholds a drive is judged by, which the split's and
//!   the CPU's verdicts share;
//! - [`outliers`]: the OSDs that stand out from their class's peers
//!   (median and MAD);
//! - [`diagnosis`]: a pool's weak links, ranked by what fixing each would
//!   gain (from `outliers`, `cpu` and `whatif`).
//!
//! Inside, each file imports only the ones below it: `drive` ← `cpu` ←
//! `attribution` ← `whatif`, and [`attribute`] here runs them in that order;
//! `changes` and `outliers` stand alone; `diagnosis` stands on top.
//!
//! The layer stands above telemetry and the result document (it imports
//! them, never the other way round) and below the reports and commands,
//! which call it.
#![forbid(unsafe_code)]

pub mod attribution;
pub mod changes;
pub mod cpu;
pub mod diagnosis;
pub mod drive;
pub mod outliers;
pub mod whatif;

use crate::result::BenchResult;

/// Fills in the attribution of every per-OSD row and every job of a result,
/// and the findings, from what the result itself holds (so saved results can
/// be re-analysed). Without telemetry only the client's findings can be made.
pub fn attribute(result: &mut BenchResult) {
    attribution::attribute_shares(result);
    cpu::fill(result);
    result.findings = attribution::findings(result);
    let slow = attribution::slow_drives(result);
    whatif::annotate(result, &slow);
}
