//! The OSDs' perf counters as the result keeps them: one OSD's counters over
//! a job's window and over each interval of its counter timeline, and the
//! mgr's `osd perf` rows (`telemetry::counters` reads and subtracts them).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// A counter over a window: how many samples and their mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AvgDelta {
    /// Samples in the window.
    pub count: u64,
    /// Mean, nanoseconds (null with no samples).
    pub mean_ns: Option<f64>,
}

/// One OSD's counters over a run window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OsdCounters {
    /// The OSD id.
    pub osd: i32,
    /// Whether a counter went backwards (OSD restarted): then the figures are null.
    pub reset: bool,
    /// Client write ops the OSD handled as primary.
    pub op_w: Option<u64>,
    /// Client read ops.
    pub op_r: Option<u64>,
    /// Replica writes.
    pub subop_w: Option<u64>,
    /// Receive → reply of client writes.
    pub op_w_latency: Option<AvgDelta>,
    /// Dequeue → reply of client writes.
    pub op_w_process_latency: Option<AvgDelta>,
    /// Dequeue → transaction prepared.
    pub op_w_prepare_latency: Option<AvgDelta>,
    /// Receive → reply of client reads.
    pub op_r_latency: Option<AvgDelta>,
    /// Dequeue → reply of client reads.
    pub op_r_process_latency: Option<AvgDelta>,
    /// Replica: repop received → committed.
    pub subop_w_latency: Option<AvgDelta>,
    /// BlueStore: transaction queued → kv committed.
    pub commit_lat: Option<AvgDelta>,
    /// BlueStore, per kv sync round: the block device's flush (fdatasync).
    #[serde(default)]
    pub kv_flush_lat: Option<AvgDelta>,
    /// BlueStore, per kv sync round: RocksDB's synchronous commit.
    #[serde(default)]
    pub kv_commit_lat: Option<AvgDelta>,
    /// BlueStore, per kv sync round: flush + commit.
    #[serde(default)]
    pub kv_sync_lat: Option<AvgDelta>,
    /// BlueStore, per transaction: queued for the kv sync thread → taken
    /// into a round (waiting, typically, for the round in progress).
    #[serde(default)]
    pub state_kv_queued_lat: Option<AvgDelta>,
    /// BlueStore, per transaction: in its kv sync round until committed
    /// (the device flush and the WAL commit); Ceph spells it so.
    #[serde(default)]
    pub state_kv_commiting_lat: Option<AvgDelta>,
    /// BlueStore, per transaction: `queue_transactions` from the
    /// transaction's creation to its return (building it, the throttle,
    /// submitting its data writes). A primary's `op_w_prepare_latency` ends
    /// after its `queue_transactions`, so this much of `commit_lat` lies
    /// inside prepare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_lat: Option<AvgDelta>,
    /// Every op the OSD queued (client ops, repops, repop replies): receive
    /// stamp (the message's first frame read, before its payload) → queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_before_queue_op_lat: Option<AvgDelta>,
    /// The same ops: receive stamp → dequeued by an op shard's thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_before_dequeue_op_lat: Option<AvgDelta>,
}

impl OsdCounters {
    /// BlueStore transactions beyond the OSD's own client writes and its
    /// replica writes (`commit_lat`'s count − `op_w` − `subop_w`). On an
    /// erasure-coded pool these are its sub-writes: `ECBackend::handle_sub_write`
    /// queues one transaction per sub-write and Ceph counts them in no op
    /// counter. They are the shard writes it took for other primaries (a
    /// primary's own shard is its client write's transaction) and the
    /// empty sub-write every shard, the primary's included, gets to roll
    /// the log forward after a write with no other write behind it
    /// (`ECBackend::try_finish_rmw`): at QD1, (k + m − 1) + (k + m) per
    /// client write over the pool's OSDs. Elsewhere, the OSD's housekeeping
    /// and other pools' or clients' sub-writes. `None` without the counts.
    pub fn other_transactions(&self) -> Option<u64> {
        let txc = self.commit_lat?.count;
        Some(txc.saturating_sub(self.op_w? + self.subop_w.unwrap_or(0)))
    }
}

/// One OSD's counters over one interval of a run: a point of the counter
/// timeline sampled every `--counter-interval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterSample {
    /// End of the interval, seconds from the run's start: the clock of
    /// the job's own timeline (the first interval began a little before
    /// it, when the counters were first read; a group run's first ones end
    /// before 0, while it waits for its common start).
    pub t_s: f64,
    /// Length of the interval, seconds.
    pub interval_s: f64,
    /// The CPU time (`utime + stime`) of the OSD's process over the
    /// interval, seconds, where it runs on the measuring host
    /// (`telemetry::osdcpu`); absent elsewhere and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// The counters over the interval.
    #[serde(flatten)]
    pub counters: OsdCounters,
}

/// One OSD's row of `ceph osd perf` (the mgr's view, from the stats each
/// OSD reports every few seconds: BlueStore's recent commit latency, in
/// whole milliseconds as the CLI prints it, and in nanoseconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MgrOsdPerf {
    /// The OSD id.
    pub osd: i32,
    /// `commit_latency(ms)`.
    pub commit_latency_ms: u64,
    /// `apply_latency(ms)`.
    pub apply_latency_ms: u64,
    /// The same in ns (null where a release does not report it).
    pub commit_latency_ns: Option<u64>,
    /// The same in ns.
    pub apply_latency_ns: Option<u64>,
}
