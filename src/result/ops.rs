//! What the OSDs' own records of ops say, as the result keeps it: one slow
//! op's split inside its primary, and a primary's means over this run's ops
//! (`telemetry::historic` parses the records and joins them).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// Where one op's time went inside its primary OSD, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdSplit {
    /// The primary OSD.
    pub osd: i32,
    /// Receive stamp → reply sent (`commit_sent`, else `done`).
    pub total_ns: f64,
    /// Receive stamp → payload read (`header_read` → `all_read`).
    pub receive_ns: f64,
    /// Payload read → the PG started the op (dispatch, throttles, op queue).
    pub queue_ns: f64,
    /// Started → local commit (writes) or → done (reads).
    pub local_ns: f64,
    /// Local commit → the last replica's commit, when the replicas were later.
    pub replication_ns: f64,
    /// Events relative to the receive stamp, ms.
    pub events: Vec<(String, f64)>,
}

/// Where one primary OSD spent this run's ops of one kind, from its records
/// of each op (means over `ops`, ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpEvidence {
    /// This run's ops of the kind the OSD recorded in the measured window.
    pub ops: u64,
    /// Of those, the ones whose wait for the replicas was split: every
    /// replica's record of the repop and the primary's of each reply found.
    pub split_ops: u64,
    /// Receive stamp → payload read (`header_read` → `all_read`).
    pub receive_ns: f64,
    /// Payload read → the PG took the op (`all_read` → `reached_pg`).
    pub queue_ns: f64,
    /// The PG took the op → its own commit callback ran (`op_commit`), plus
    /// the reply's dispatch after the last commit; reads: → `done`.
    pub local_ns: f64,
    /// Own commit → the last replica's commit handled (≥ 0): the wait for
    /// the replicas beyond the primary's own commit.
    pub replication_ns: f64,
    /// Of `replication_ns`: the last reply's wait on the primary, from its
    /// receive stamp until the PG handled it.
    pub reply_queue_ns: Option<f64>,
    /// Of `replication_ns`: the repop and its reply between the OSDs (sent
    /// → the replica's receive stamp, its reply → the primary's receive
    /// stamp: the back network and both OSDs' messengers), as far as the
    /// primary waited for them.
    pub cluster_network_ns: Option<f64>,
    /// Of `replication_ns`: the rest, the replica's own time (receive →
    /// commit sent) beyond the primary's own commit.
    pub replica_ns: Option<f64>,
    /// Receive stamp → reply sent.
    pub osd_ns: f64,
    /// The repop's round trip between the OSDs (both legs, messengers
    /// included; what `cluster_network_ns` is cut from) of the fastest tenth
    /// of the split ops: the wire and messengers that did not wait for a CPU.
    #[serde(default)]
    pub repop_round_trip_p10_ns: Option<f64>,
    /// The primary's history held as many records as its size at some
    /// poll: ops may have been dropped, the fastest first.
    #[serde(default)]
    pub history_full: bool,
}
