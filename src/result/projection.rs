//! What-if projections of a job (`jobs[].projections[]`), as
//! `explain::whatif` makes them.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use super::Part;

/// What a projection changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Another pool's (or OSD's) drive-side shares in place of this one's.
    Drives,
    /// Every drive's flush as a class of drive flushes (or as the pool's
    /// fastest drive's).
    Flush,
    /// A cluster network with a shorter round trip.
    ClusterCable,
    /// No wait for copies (replicas or shards) at all.
    NoCopyWait,
}

/// One part of a projection: as measured and as projected, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedPart {
    /// The part.
    pub part: Part,
    /// Its share as measured (0 where the split had none).
    pub measured_ns: f64,
    /// Its share as projected.
    pub projected_ns: f64,
}

/// How far the pool measured after the change lay from a projection of
/// its kind on the project's own rig (perf/projections.sh: each projection
/// against a run it was not made from), percent of the projected mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// The lowest, percent (negative: measured below the projection).
    pub low_pct: f64,
    /// The highest, percent.
    pub high_pct: f64,
}

/// One what-if projection of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// What kind of change.
    pub kind: Kind,
    /// The change in words, e.g. "PLP drives (a flush of 0.1 ms)".
    pub what: String,
    /// Where the replacing figures come from.
    pub reference: String,
    /// The measured mean completion latency, ns.
    pub mean_ns: f64,
    /// The projected mean, ns.
    pub projected_mean_ns: f64,
    /// The measured IOPS.
    pub iops: f64,
    /// The projected IOPS (null where it cannot be projected: see `iops_basis`).
    pub projected_iops: Option<f64>,
    /// How the IOPS was projected, or why not.
    pub iops_basis: String,
    /// The parts that moved.
    pub parts: Vec<ProjectedPart>,
    /// What the projection assumes.
    pub assumptions: Vec<String>,
    /// Why the change moves nothing, where it binds nothing (a cap above
    /// every flush, a pool without copies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<String>,
    /// What the change was held to, where it asked for more than the
    /// measured part holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clamped: Option<String>,
    /// Where the change moves the ops' pace, how far a pool measured after
    /// such a change lay from a projection of this kind on the project's rig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
    /// What the faster pace takes off the parts kept as measured, ns: the
    /// path's wake-ups from idle at this run's pace against the projected
    /// one (the run's pace probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_ns: Option<f64>,
}
