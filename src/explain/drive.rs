//! A drive as its own flushes show it: the thresholds that the split's drive
//! verdicts ([`super::attribution`]) and the CPU verdict ([`super::cpu`])
//! both judge an OSD's drive by, and that figure of one OSD.
#![forbid(unsafe_code)]

use crate::result::OsdReport;

/// A drive is judged on at least this many of its kv sync rounds.
pub const MIN_FLUSH_ROUNDS: u64 = 20;

/// A device flush (one WAL commit) at least this long marks a drive that
/// writes its cache to the media on every flush: drives with power-loss
/// protection acknowledge a flush from protected RAM in 0.02–0.2 ms;
/// consumer SSDs without it take 1–10 ms, disks a rotation (4–15 ms).
/// File-backed OSDs and virtual disks flush through the host's own storage:
/// 1 ms and more on this project's test machine.
pub const SLOW_DRIVE_FLUSH_NS: f64 = 1e6;

/// The OSD's drive flush as the drive verdicts judge it: its mean RocksDB
/// WAL commit per kv sync round, ns (over enough rounds).
pub fn drive_flush_ns(o: &OsdReport) -> Option<f64> {
    let c = o.counters.as_ref().filter(|c| !c.reset)?;
    c.kv_commit_lat
        .filter(|d| d.count >= MIN_FLUSH_ROUNDS)?
        .mean_ns
}
