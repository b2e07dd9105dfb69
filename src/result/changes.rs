//! The lasting changes of a job's per-interval figures (`jobs[].changes[]`),
//! as `explain::changes` finds them.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use super::cluster::ClusterEvent;

/// A lasting change of a job's per-interval figures (`jobs[].changes[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// When it began: the start of the first interval after it, seconds
    /// from the run's start (the timeline's clock, ramp included).
    pub t_s: f64,
    /// The stretch before it (from the previous change, or the measured
    /// start).
    pub before: Phase,
    /// The stretch after it (to the next change, or the end).
    pub after: Phase,
    /// The OSD counters that moved with it, deepest first per OSD.
    pub osds: Vec<OsdMove>,
    /// The cluster events that began or ended near it.
    pub events: Vec<ClusterEvent>,
}

/// One side of a change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Start, seconds from the run's start.
    pub from_s: f64,
    /// End, seconds from the run's start.
    pub to_s: f64,
    /// Ops over the stretch's intervals / their length.
    pub iops: f64,
    /// Mean completion latency of the stretch's ops, ns.
    pub mean_ns: f64,
    /// The median of the stretch's per-interval p99s, ns (null where the
    /// intervals kept no percentiles).
    pub p99_ns: Option<f64>,
}

/// An OSD counter that moved with a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdMove {
    /// The OSD id.
    pub osd: i32,
    /// Ceph's counter, e.g. `kv_sync_lat`.
    pub counter: String,
    /// Its mean over the counter samples wholly before the change, ns.
    pub before_ns: f64,
    /// Its mean over those wholly after it, ns.
    pub after_ns: f64,
}
