//! Where the latency went: pure functions that split a client-observed mean
//! into the parts of an op's path, from what the probes measured.
//!
//! For a client op on its primary OSD (see `PrimaryLogPG::do_op`,
//! `log_op_stats`, `ReplicatedBackend::submit_transaction`,
//! `ReplicatedBackend::repop_commit` and `OSD::ms_fast_dispatch` for where
//! each timer starts and stops):
//!
//! ```text
//! client submit ─┬─ client share: librados/librbd, messenger threads (not measured
//!                │   on its own: it stays in `unattributed`)
//!                ├─ public network: request + reply on the wire; the client's TCP
//!                │   connect RTT to that OSD, sampled during the run, plus the
//!                │   payload's transfer time at the path's measured bandwidth
//!   recv_stamp ──┼─ (taken by the messenger before the payload is read, so a
//!                │   write's payload transfer is inside op_w_latency: it is
//!                │   moved from the queue share to the network share; a
//!                │   read's reply payload travels after the OSD's reply stamp)
//!                ├─ OSD queue  = op_w_latency − op_w_process_latency − payload
//!                │   (dispatch throttles, the op queue)
//!   dequeued ────┼─ OSD local  = op_w_process_latency − replication − device flush
//!                │   (prepare: execute the op, build the transaction, send the
//!                │   repops; then the local objectstore commit but for its
//!                │   wait on the device)
//!                ├─ device flush = BlueStore's state_kv_queued_lat +
//!                │   state_kv_commiting_lat: per transaction, the wait for a kv
//!                │   sync round and the round itself — the data flush
//!                │   (fdatasync) and the RocksDB WAL commit that make it durable;
//!                │   a mean over every transaction of the OSD (its replica
//!                │   writes too), capped at the local share
//!                ├─ replication = time the primary still waited for its replicas
//!                │   after its own commit: R = process − prepare − commit_lat
//!                │   (≥ 0), split in two:
//!                ├─ replica = max(0, S − commit_lat), at most R, where S is the
//!                │   slowest replica's subop_w_latency (measured on the replica:
//!                │   repop received → its commit; its queue, objectstore and
//!                │   device flush), averaged over the primary's PGs
//!                ├─ cluster network = R − replica = process − prepare −
//!                │   max(S, commit_lat): the primary's wait beyond both its own
//!                │   commit and the replica's own time — the repop and its reply
//!                │   on the back network, and both OSDs' messengers
//!   reply sent ──┘
//! ```
//!
//! The cluster-network share is not a ping of the back network: it is what
//! the primary's wait has on top of its replica's own timer, so its biases
//! are the counters'. It holds, besides the wire both ways, both OSDs'
//! messenger threads and the primary's handling of the repop reply (it goes
//! through the primary's op queue): on an idle loopback it is a few tenths of
//! a ms, where a TCP round trip is tens of µs. S is a mean of means (the
//! slowest replica's mean, not the mean of each op's slower replica), so
//! replica jitter that makes a different replica the slower one per op lands
//! in the cluster network: low with one slow replica, up to the replicas'
//! spread with equal ones. A repop payload's transfer is after the replica's
//! receive stamp (msgr2 stamps the frame preamble), so for large writes it
//! lands in `replica`, not in the cluster network. The OSDs' back-interface
//! heartbeat pings (`dump_osd_network`) are not used for the share: they are
//! a one-minute average, sampled every few seconds, so a short run's delay
//! change hardly moves them (they include both OSDs' userspace too). Without
//! the replicas' counters (their `subop_w` unread, or a result made before the
//! split) the wait stays one `replication` share, with a note.
//!
//! With `--op-history` ([`OsdInputs::evidence`], at least
//! [`MIN_EVIDENCE_OPS`] recorded ops) the OSD-side shares come from the
//! OSDs' records of this run's own ops instead (`split_from_records`):
//! queue = `all_read → reached_pg` (+ the replies' wait to be handled), local
//! = `reached_pg → op_commit` (when the primary's own commit callback ran, so
//! its dispatch is local, not the cable's), the wait beyond it split per op
//! into the OSDs' round trip and the replica's own time; only the device
//! flush still comes from the counters.
//!
//! Reads have no replication share (`op_r_latency`, `op_r_process_latency`).
//! Every share is an OSD-reported or probe-measured mean over the run window;
//! the client-side remainder is `unattributed`, which may come out negative
//! when the counters' window (ramp included) and the client's differ.
#![forbid(unsafe_code)]

use super::drive::{MIN_FLUSH_ROUNDS, SLOW_DRIVE_FLUSH_NS};
use crate::result::counters::OsdCounters;
use crate::result::ops::OpEvidence;
use crate::result::{Attribution, BenchResult, Part, ReplicaSet, Share};
use crate::units::osd_list;

/// What is known about one op kind on one primary OSD.
#[derive(Debug, Clone, Copy)]
pub struct OsdInputs<'a> {
    /// `read` or `write`.
    pub op: &'a str,
    /// The client's mean completion latency of those ops, ns.
    pub client_mean_ns: f64,
    /// The OSD's counters over the run window.
    pub counters: Option<&'a OsdCounters>,
    /// The client's round trip to this OSD's public address, ns (the
    /// fastest of the run's probes).
    pub rtt_ns: Option<f64>,
    /// How `rtt_ns` was measured (`ICMP echo`, `TCP connect`), for the notes.
    pub rtt_method: Option<&'static str>,
    /// Payload bytes per op (the request's for writes, the reply's for reads).
    pub op_bytes: f64,
    /// The client↔OSD path's bandwidth, bytes/s (`None`: not measured).
    pub bandwidth: Option<f64>,
    /// Copies the pool keeps (1: no replication); an erasure-coded pool's
    /// shards (k + m).
    pub pool_size: u32,
    /// Whether the pool is erasure-coded: its shard writes have no per-op
    /// counter (Ceph's `ECBackend` logs no `subop_w`), so the wait for the
    /// other shards is not split.
    pub erasure: bool,
    /// The slowest replica's mean repop time (`subop_w_latency`, receive →
    /// commit on the replica), averaged over this primary's PGs, ns
    /// ([`slowest_replica_ns`]); `None`: not known, the replication wait is
    /// not split.
    pub replica_ns: Option<f64>,
    /// `--op-history`: the same ops' time on this OSD from its own records
    /// of each op; used instead of the counters' means where it has at least
    /// [`MIN_EVIDENCE_OPS`] ops.
    pub evidence: Option<&'a OpEvidence>,
    /// The back network's own round trip, ns: this host's fastest ICMP echo
    /// (else TCP connect) to the cluster address of this primary's slowest
    /// replica, over its PGs ([`slowest_replica_ns`] over the echoes);
    /// `None` where this host does not reach them. The cluster-network
    /// share is held to it, the rest of the OSDs' round trip is
    /// `messengers`.
    pub back_rtt_ns: Option<f64>,
}

/// The OSDs' round trip `round_trip` for a repop and its reply, split into
/// the back network's own part (at most `back`) and the messengers' rest;
/// without `back`, all of it stays the cluster network's.
fn cable_split(round_trip: f64, back: Option<f64>) -> (f64, Option<f64>) {
    match back {
        Some(b) => {
            let cable = round_trip.min(b.max(0.0));
            (cable, Some(round_trip - cable))
        }
        None => (round_trip, None),
    }
}

/// How a split cluster-network share was made; `callback` when the round
/// trip (from the counters) also holds the primary's commit callback.
fn messengers_note(callback: bool) -> String {
    format!(
        "cluster network = the part of it the back network itself takes: this host's fastest \
         echo to the replicas' cluster addresses (kernel to kernel; the slowest replica's, over \
         the primary's PGs; under the round trips); OSD messengers = the rest: both OSDs' \
         messenger threads, waiting for a core or busy{}",
        if callback {
            ", and the primary's own commit callback waiting to run (no counter times it; \
             --op-history takes it out)"
        } else {
            ""
        }
    )
}

/// Large writes from the counters: the OSD stamps an op when its header
/// arrives, so the queue share holds the payload's receive, which the
/// OSD's messenger threads pace (their CPU, not the cable's bandwidth): at
/// 4 MiB on loopback 2.6 of 17.9 ms.
pub const RECEIVE_NOTE: &str = "writes above 64 KiB: the OSD queue share is receive + queue: \
the OSD's messenger reading the payload (paced by its CPU, not only the cable's measured \
bandwidth) is not timed apart by any counter; --op-history times the receive on its own and \
puts it in the public network share";

/// Large writes whose receive the counters tell apart ([`received`]).
pub const RECEIVED_NOTE: &str = "writes above 64 KiB: public network = round trip + the \
payload's receive (paced by the OSD's messenger CPU), which the OSD's counters time apart from \
its op queue (op_before_queue/dequeue_op_lat: the queue share is the mean wait of all the OSD's \
ops; at depth a write that waits longer than that reads as receive)";

/// Why an erasure-coded pool's reads have no cluster-network share.
pub const EC_READ_NOTE: &str = "erasure-coded pool: a read gathers the other shards from their \
OSDs over the cluster network; no counter times that apart, so it is in OSD local (not \
measured on its own, not 0)";

/// Why an erasure-coded pool's wait for its shards stays one share.
pub const EC_NOTE: &str = "erasure-coded pool: the wait for the other shards' writes is not \
split into cluster network and shards (Ceph counts no per-op latency for EC sub-writes: \
ECBackend logs no subop_w)";

/// The fewest recorded ops per OSD and kind for the split to take its
/// OSD-side shares from them rather than from the counters.
pub const MIN_EVIDENCE_OPS: u64 = 20;

/// The mean over a primary's PGs (weighted by PG count) of the slowest
/// replica's mean repop time, from each replica OSD's `subop_w` mean (ns;
/// `None` for a replica whose counters were not read or saw no repop).
/// `None` when any replica is unknown or there are no replica sets.
pub fn slowest_replica_ns(
    sets: &[ReplicaSet],
    subop_ns: impl Fn(i32) -> Option<f64>,
) -> Option<f64> {
    let (mut sum, mut pgs) = (0.0, 0u64);
    for s in sets.iter().filter(|s| s.pgs > 0) {
        let mut slowest: Option<f64> = None;
        for o in &s.osds {
            let v = subop_ns(*o)?;
            slowest = Some(slowest.map_or(v, |x: f64| x.max(v)));
        }
        sum += slowest? * f64::from(s.pgs);
        pgs += u64::from(s.pgs);
    }
    (pgs > 0).then(|| sum / pgs as f64)
}

/// The client's round trip to one OSD, as the split uses it.
struct RttEstimate {
    ns: f64,
    method: &'static str,
}

/// Splits one primary OSD's mean for one op kind.
pub fn split_osd(i: &OsdInputs<'_>) -> Attribution {
    let mut parts = SplitParts::default();
    parts.note(CLIENT_NOTE);
    let evidence = i.evidence.filter(|e| e.ops >= MIN_EVIDENCE_OPS);
    if let Some(ev) = evidence {
        return split_from_records(i, ev, parts.shares, parts.notes);
    }
    let c = i.counters.filter(|c| !c.reset);
    let received = c.and_then(|c| received(i, c));
    let payload = public_network_share(i, received, &mut parts);
    if i.counters.is_some_and(|c| c.reset) {
        parts.note("the OSD's counters were reset during the run (restart?)");
    }
    match (i.op, c) {
        (_, None) => {
            parts.note("no OSD counters: queue, OSD and replication time stay unattributed")
        }
        ("write", Some(c)) => write_shares(i, c, (payload, received), &mut parts),
        ("read", Some(c)) => {
            let (op, process) = (mean_ns(c.op_r_latency), mean_ns(c.op_r_process_latency));
            parts.push(Part::OsdQueue, op.zip(process).map(|(o, p)| o - p));
            parts.push(Part::OsdLocal, process);
            if i.erasure {
                // The primary gathers the other shards over the cluster
                // network: not 0, just not timed apart.
                parts.note(EC_READ_NOTE);
            } else {
                parts.push(Part::ClusterNetwork, Some(0.0));
                parts.push(Part::Replica, Some(0.0));
            }
        }
        _ => {}
    }
    finish(i.client_mean_ns, parts.shares, parts.notes)
}

/// The shares and notes of a split from the counters, as they are found.
#[derive(Default)]
struct SplitParts {
    shares: Vec<Share>,
    notes: Vec<String>,
}

impl SplitParts {
    /// Adds `part` when its time is known and finite.
    fn push(&mut self, part: Part, ns: Option<f64>) {
        if let Some(ns) = ns.filter(|v| v.is_finite()) {
            self.shares.push(Share { part, ns });
        }
    }

    fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }
}

/// A counter's mean over the run (ns), when it counted.
fn mean_ns(d: Option<crate::result::counters::AvgDelta>) -> Option<f64> {
    d.and_then(|d| d.mean_ns)
}

/// A large write's time before its dequeue, told apart from the counters:
/// the receive (its payload read, and its dispatch) and the wait in the op
/// queue, ns.
#[derive(Debug, Clone, Copy)]
struct Received {
    receive: f64,
    wait: f64,
}

/// A write above [`SMALL_WRITE_BYTES`]'s receive and queue wait: its time
/// before dequeue (`op_w − op_w_process`, from the receive stamp, which
/// msgr2 sets before the payload is read) less the OSD's mean wait in its
/// op queue over all its ops (`op_before_dequeue_op_lat −
/// op_before_queue_op_lat`). `None` for smaller writes (nothing to tell
/// apart; at depth a client write waits longer than the mean op, and that
/// would read as receive), without the counters, or without the client's
/// round trip (the receive then has no public network share to go to).
fn received(i: &OsdInputs<'_>, c: &OsdCounters) -> Option<Received> {
    if i.op != "write" || i.op_bytes <= SMALL_WRITE_BYTES {
        return None;
    }
    i.rtt_ns?;
    let before = mean_ns(c.op_w_latency)? - mean_ns(c.op_w_process_latency)?;
    let queued = mean_ns(c.op_before_dequeue_op_lat)? - mean_ns(c.op_before_queue_op_lat)?;
    (before >= 0.0).then(|| {
        let wait = queued.clamp(0.0, before);
        Received {
            receive: before - wait,
            wait,
        }
    })
}

/// The public network's share: the round trip and, at the path's measured
/// bandwidth, the op's payload on the wire, which it returns (ns). A large
/// write's payload is its receive as the OSD's counters timed it, where
/// they tell it apart ([`received`]).
fn public_network_share(
    i: &OsdInputs<'_>,
    received: Option<Received>,
    parts: &mut SplitParts,
) -> Option<f64> {
    if let (Some(r), Some(rc)) = (i.rtt_ns, received) {
        parts.push(Part::PublicNetwork, Some(r + rc.receive));
        parts.note(RECEIVED_NOTE);
        if let Some(m) = i.rtt_method {
            parts.note(format!(
                "round trip = the fastest {m} of the run's probes (robust to a loaded host)"
            ));
        }
        return Some(rc.receive);
    }
    let payload = i
        .bandwidth
        .filter(|b| *b > 0.0 && i.rtt_ns.is_some())
        .map(|bw| i.op_bytes / bw * 1e9);
    match (i.rtt_ns, payload) {
        (Some(r), Some(p)) => {
            parts.push(Part::PublicNetwork, Some(r + p));
            // One wording for every OSD, so a job's notes stay one line each.
            parts.note(
                "public network = round trip + the op's payload at the path's bandwidth \
                 (measured with ICMP echoes; per OSD under the round trips)",
            );
        }
        (None, _) => parts.note("no client RTT to this OSD: public network not split out"),
        (Some(r), None) => {
            parts.push(Part::PublicNetwork, Some(r));
            parts.note(
                "no path bandwidth (ICMP echo needs root or CAP_NET_RAW): the payload's \
                 transfer time is not in the network share (writes: in OSD queue; \
                 reads: unattributed)",
            );
        }
    }
    if let (Some(_), Some(m)) = (i.rtt_ns, i.rtt_method) {
        parts.note(format!(
            "round trip = the fastest {m} of the run's probes (robust to a loaded host)"
        ));
    }
    payload
}

/// A local time less the device flush in it, and the flush (capped at the
/// local time; `None` without the flush timers).
fn less_flush(local: f64, flush: Option<f64>) -> (f64, Option<f64>) {
    let f = flush.map(|f| f.clamp(0.0, local.max(0.0)));
    (local - f.unwrap_or(0.0), f)
}

/// A write's shares from the primary's counters: queue, local (less the
/// device flush) and, beyond a size-1 pool, the wait for the copies.
fn write_shares(
    i: &OsdInputs<'_>,
    c: &OsdCounters,
    (payload, received): (Option<f64>, Option<Received>),
    parts: &mut SplitParts,
) {
    let (op, process) = (mean_ns(c.op_w_latency), mean_ns(c.op_w_process_latency));
    let queue = op.zip(process).map(|(o, p)| o - p);
    if let Some(rc) = received {
        parts.push(Part::OsdQueue, Some(rc.wait));
    } else {
        queue_share(i, queue, payload, parts);
    }
    local_and_copies(i, c, process, parts);
}

/// A write's queue share where its receive is not told apart: the time
/// before dequeue less the payload's transfer at the path's bandwidth.
fn queue_share(
    i: &OsdInputs<'_>,
    queue: Option<f64>,
    payload: Option<f64>,
    parts: &mut SplitParts,
) {
    if let (Some(q), Some(p)) = (queue, payload) {
        if p > q {
            parts.note(
                "the payload's transfer estimate exceeds the OSD's queue time: \
                 the queue share is 0",
            );
        }
    }
    // A write's payload arrives after the OSD's receive stamp, inside
    // op_w − process: take it out of the queue share (never below zero).
    let unqueue = |queue: f64| {
        let moved = payload.unwrap_or(0.0).min(queue.max(0.0));
        queue - moved
    };
    parts.push(Part::OsdQueue, queue.map(unqueue));
    if i.op_bytes > SMALL_WRITE_BYTES {
        parts.note(RECEIVE_NOTE);
    }
}

/// A write's local share, its device flush and, beyond a size-1 pool, the
/// wait for its copies, from the primary's process time.
fn local_and_copies(
    i: &OsdInputs<'_>,
    c: &OsdCounters,
    process: Option<f64>,
    parts: &mut SplitParts,
) {
    // The objectstore's wait on the device, out of the local share.
    let flush = mean_ns(c.state_kv_queued_lat)
        .zip(mean_ns(c.state_kv_commiting_lat))
        .map(|(q, k)| q + k);
    if flush.is_none() {
        parts.note(
            "no BlueStore kv state timers (memstore, or an objectstore without them): \
             no device flush share, it stays in OSD local",
        );
    }
    if i.pool_size <= 1 {
        let (local, f) = process.map(|p| less_flush(p, flush)).unzip();
        parts.push(Part::OsdLocal, local);
        parts.push(Part::DeviceFlush, f.flatten());
        parts.push(Part::ClusterNetwork, Some(0.0));
        parts.push(Part::Replica, Some(0.0));
        parts.note("size-1 pool: no replication share");
    } else {
        replicated_write_shares(i, c, (process, flush), parts);
    }
}

/// A replicated (or erasure-coded) write's local, flush and replication
/// shares, from the primary's process time and the device flush in it.
fn replicated_write_shares(
    i: &OsdInputs<'_>,
    c: &OsdCounters,
    (process, flush): (Option<f64>, Option<f64>),
    parts: &mut SplitParts,
) {
    let prepare = mean_ns(c.op_w_prepare_latency);
    let commit = mean_ns(c.commit_lat);
    if commit.is_none() {
        parts.note(
            "the objectstore reports no commit latency (memstore?): \
             local commit taken as 0",
        );
    }
    // The primary's own transaction starts inside prepare
    // (execute_ctx ends in issue_repop → queue_transactions):
    // that much of commit_lat lies before prepare's stamp.
    let overlap = mean_ns(c.submit_lat);
    if overlap.is_none() && commit.is_some() {
        parts.note(
            "no BlueStore submit_lat: the part of the local commit that runs inside \
             prepare is not taken off it (large writes then understate the wait \
             for the replicas)",
        );
    }
    match process.zip(prepare) {
        Some((p, pr)) => {
            let wait = (p - pr).max(0.0);
            let own = (commit.unwrap_or(0.0) - overlap.unwrap_or(0.0)).max(0.0);
            let repl = (wait - own).clamp(0.0, wait);
            let (local, f) = less_flush(p - repl, flush);
            parts.push(Part::OsdLocal, Some(local));
            parts.push(Part::DeviceFlush, f);
            replication_shares(i, repl, commit, parts);
        }
        None => {
            let (local, f) = process.map(|p| less_flush(p, flush)).unzip();
            parts.push(Part::OsdLocal, local);
            parts.push(Part::DeviceFlush, f.flatten());
        }
    }
}

/// The primary's wait for its copies (`repl`, ns) split into the replica's
/// own repop time beyond the primary's `commit`, the cable and the
/// messengers; one replication share when the replicas' times are unknown.
fn replication_shares(i: &OsdInputs<'_>, repl: f64, commit: Option<f64>, parts: &mut SplitParts) {
    match i.replica_ns {
        Some(s) => {
            let replica = (s - commit.unwrap_or(0.0)).clamp(0.0, repl);
            parts.push(Part::Replica, Some(replica));
            let (cable, msgr) = cable_split(repl - replica, i.back_rtt_ns);
            parts.push(Part::ClusterNetwork, Some(cable));
            parts.push(Part::Messengers, msgr);
            parts.note(if i.back_rtt_ns.is_some() {
                format!(
                    "the OSDs' round trip = the primary's wait for its \
                     replicas beyond its own commit, less the slowest \
                     replica's own repop time (subop_w); {}; replica = that \
                     repop time beyond the primary's own commit",
                    messengers_note(true)
                )
            } else {
                "cluster network = the primary's wait for its replicas beyond \
                 its own commit, less the slowest replica's own repop time \
                 (subop_w): the back network both ways, both OSDs' messengers \
                 and the primary's own commit callback waiting to run (no \
                 counter times it; --op-history takes it out); replica = that \
                 repop time beyond the primary's own commit"
                    .into()
            });
        }
        None => {
            parts.push(Part::Replication, Some(repl));
            parts.note(if i.erasure {
                EC_NOTE
            } else {
                "replication not split into cluster network and replica: \
                 the replicas' subop_w counters were not read (they need \
                 osd 'allow *' on every replica OSD)"
            });
        }
    }
}

/// The flush share out of a local time: BlueStore's kv queue and sync
/// round (per transaction, a mean over every transaction of the OSD),
/// capped at `local`; `None` without those timers.
fn flush_of(c: Option<&OsdCounters>, local: f64) -> Option<f64> {
    let c = c.filter(|c| !c.reset)?;
    let q = c.state_kv_queued_lat.and_then(|d| d.mean_ns)?;
    let k = c.state_kv_commiting_lat.and_then(|d| d.mean_ns)?;
    Some((q + k).clamp(0.0, local.max(0.0)))
}

/// The split from the OSD's records of this run's own ops: every OSD-side
/// share is a mean over those ops; only the device flush (which no op
/// record times) comes from the counters.
fn split_from_records(
    i: &OsdInputs<'_>,
    ev: &OpEvidence,
    mut shares: Vec<Share>,
    mut notes: Vec<String>,
) -> Attribution {
    let mut push = |part, ns: f64| {
        if ns.is_finite() {
            shares.push(Share { part, ns });
        }
    };
    let write = i.op == "write";
    // A write's payload arrives after the receive stamp: the OSD timed it.
    // A read's reply payload leaves after the reply stamp: at the path's
    // bandwidth, when measured.
    let payload = if write {
        Some(ev.receive_ns)
    } else {
        i.bandwidth
            .filter(|b| *b > 0.0)
            .map(|bw| i.op_bytes / bw * 1e9 + ev.receive_ns)
    };
    match (i.rtt_ns, payload) {
        (Some(r), Some(p)) => push(Part::PublicNetwork, r + p),
        (Some(r), None) => push(Part::PublicNetwork, r + ev.receive_ns),
        (None, _) => notes.push("no client RTT to this OSD: public network not split out".into()),
    }
    if let (Some(_), Some(m)) = (i.rtt_ns, i.rtt_method) {
        notes.push(format!(
            "public network = the fastest {m} round trip + the payload's receive as the OSD \
             recorded it (header read → all read){}",
            if write {
                ""
            } else {
                " and the reply's at the path's bandwidth"
            }
        ));
    }
    let reply_queue = ev.reply_queue_ns.unwrap_or(0.0);
    push(Part::OsdQueue, ev.queue_ns + reply_queue);
    let flush = flush_of(i.counters, ev.local_ns);
    push(Part::OsdLocal, ev.local_ns - flush.unwrap_or(0.0));
    if let Some(f) = flush {
        push(Part::DeviceFlush, f);
    } else if write {
        notes.push(
            "no BlueStore kv state timers (memstore, or an objectstore without them): no device \
             flush share, it stays in OSD local"
                .into(),
        );
    }
    if !write && i.erasure {
        notes.push(EC_READ_NOTE.into());
    } else if !write || i.pool_size <= 1 {
        push(Part::ClusterNetwork, 0.0);
        push(Part::Replica, 0.0);
    } else {
        match (ev.cluster_network_ns, ev.replica_ns) {
            (Some(c), Some(r)) => {
                let (cable, msgr) = cable_split(c, i.back_rtt_ns);
                push(Part::ClusterNetwork, cable);
                if let Some(m) = msgr {
                    push(Part::Messengers, m);
                }
                push(Part::Replica, r);
                if i.back_rtt_ns.is_some() {
                    notes.push(messengers_note(false));
                }
            }
            _ => {
                push(Part::Replication, ev.replication_ns - reply_queue);
                notes.push(
                    "replication not split: the replicas' records of the repops were not found \
                     (their histories too small for the run's ops? raise --op-history)"
                        .into(),
                );
            }
        }
    }
    notes.push(format!(
        "from this run's own ops as each OSD recorded them (--op-history; how many: \
         osds[].client[].evidence): queue = payload read → the PG took the op{}; local = → its own \
         commit callback ran (op_commit), plus the reply; replication = own commit → the last \
         replica's commit handled{}",
        if write && i.pool_size > 1 {
            ", plus the replicas' replies waiting to be handled"
        } else {
            ""
        },
        if write && i.pool_size > 1 && i.back_rtt_ns.is_some() {
            "; the OSDs' round trip = the repop and its reply between the OSDs' receive stamps \
             (back network and both messengers), as far as the primary waited: cluster network + \
             OSD messengers; replica = the rest: the replica's own time beyond the primary's \
             commit"
        } else if write && i.pool_size > 1 {
            "; cluster network = the repop and its reply between the OSDs' receive stamps (back \
             network and both messengers), as far as the primary waited; replica = the rest: the \
             replica's own time beyond the primary's commit"
        } else {
            ""
        },
    ));
    if ev.history_full {
        notes.push(
            "the OSD's op history was full at a poll: ops may have been dropped, the fastest \
             first (raise --op-history)"
                .into(),
        );
    }
    finish(i.client_mean_ns, shares, notes)
}

/// With `--op-history`, on replicated writes: the repops' round trip of
/// the fastest tenth, over the primaries, so that a messenger starved of CPU
/// is not read as a slow cable.
fn round_trip_note(osds: &[crate::result::OsdReport], op: &str) -> Option<String> {
    let p10: Vec<f64> = osds
        .iter()
        .flat_map(|o| &o.client)
        .filter(|r| r.op == op)
        .filter_map(|r| r.evidence.as_ref()?.repop_round_trip_p10_ns)
        .collect();
    let lo = p10.iter().copied().reduce(f64::min)? / 1e6;
    let hi = p10.iter().copied().reduce(f64::max)? / 1e6;
    let range = if hi - lo < 0.0005 {
        format!("{lo:.3} ms")
    } else {
        format!("{lo:.3}–{hi:.3} ms")
    };
    Some(format!(
        "the fastest tenth of repops went out and back in {range} (wire and both messengers not \
         waiting for a CPU): the OSDs' round trip above that is repops waiting, for a messenger \
         thread's CPU or in the cable's queues"
    ))
}

const CLIENT_NOTE: &str =
    "client (librados/librbd) time is not measured on its own: it is part of unattributed";

/// Orders the shares, adds `unattributed` so they sum to `mean_ns`.
fn finish(mean_ns: f64, mut shares: Vec<Share>, notes: Vec<String>) -> Attribution {
    shares.sort_by_key(|s| Part::ALL.iter().position(|p| *p == s.part));
    let known: f64 = shares.iter().map(|s| s.ns).sum();
    shares.push(Share {
        part: Part::Unattributed,
        ns: mean_ns - known,
    });
    Attribution {
        mean_ns,
        shares,
        notes,
    }
}

/// Combines per-OSD splits into a job's: each part weighted by the OSD's
/// share of the ops; `unattributed` closes the sum to the job's exact mean.
pub fn combine(rows: &[(u64, &Attribution)], job_mean_ns: f64) -> Attribution {
    let total: u64 = rows.iter().map(|(n, _)| n).sum();
    let mut shares: Vec<Share> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    if total > 0 {
        for part in Part::ALL.iter().filter(|p| **p != Part::Unattributed) {
            let mut any = false;
            let mut sum = 0.0;
            for (n, a) in rows {
                if let Some(s) = a.shares.iter().find(|s| s.part == *part) {
                    any = true;
                    sum += s.ns * (*n as f64 / total as f64);
                }
            }
            if any {
                shares.push(Share {
                    part: *part,
                    ns: sum,
                });
            }
        }
        for (_, a) in rows {
            for n in &a.notes {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
        }
    } else {
        notes.push("no ops were mapped to an OSD".into());
    }
    finish(job_mean_ns, shares, notes)
}

/// A device flush at least this long per write is named in the findings:
/// a drive that must write its cache to the media on every flush (consumer
/// SSDs without power-loss protection: milliseconds) rather than one that
/// acknowledges from protected RAM (PLP drives: tens of microseconds).
/// Set above what a loaded test machine's file-backed OSDs reach (0.5–2.6 ms
/// seen here), so a finding means a drive, not a busy host.
pub const SLOW_FLUSH_NS: f64 = 2e6;

/// A write whose replicas took at least this much longer than its primary's
/// own commit (the `replica` share) gets a replication verdict: above what
/// this project's loaded test machine shows between equal file-backed OSDs
/// (0.2–0.3 ms), below one extra cache flush of a drive without power-loss
/// protection (milliseconds).
pub const SLOW_REPLICA_NS: f64 = 1e6;

/// A write that waited at least this much on the cluster network (the
/// `cluster_network` share) gets a replication verdict: a data-centre
/// round trip is 0.05–0.2 ms on the wire; both OSDs' messengers add a few
/// tenths (0.3–0.9 ms seen here through the delay switch on a loaded
/// 2-core host).
pub const SLOW_CLUSTER_NETWORK_NS: f64 = 1e6;

/// The back network carries a cluster-network share only when the OSDs'
/// back-interface heartbeats (a round trip between two OSDs' messengers on
/// that network) took at least this part of it: a slow cable or network
/// stack slows the heartbeats as much as the repops. Below it (a size-3
/// pool on a host whose cores were saturated waited 4.89 ms while the
/// heartbeats took 1.30 ms) the wait is the hosts' CPU or load, not the cable.
pub const CABLE_SHARE_OF_WAIT: f64 = 0.5;

/// The mean of the OSDs' back-interface heartbeat round trips (their 1-min
/// averages) over `results`, ms; `None` when none reported them.
pub fn back_heartbeat_ms<'a>(results: impl IntoIterator<Item = &'a BenchResult>) -> Option<f64> {
    let hb: Vec<f64> = results
        .into_iter()
        .flat_map(|r| r.network.iter().flat_map(|n| &n.heartbeat))
        .filter(|h| h.interface == "back")
        .map(|h| h.avg_1min_ms)
        .collect();
    (!hb.is_empty()).then(|| hb.iter().sum::<f64>() / hb.len() as f64)
}

/// What the heartbeats say about a wait of `wait_ms` on the cluster network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CableEvidence {
    /// The heartbeats took at least [`CABLE_SHARE_OF_WAIT`] of the wait:
    /// the back network (or the hosts' network stack) carries it.
    Carries(f64),
    /// The heartbeats took less: the cable does not explain the wait.
    FallsShort(f64),
    /// No heartbeats were read: nothing tells the cable from the hosts.
    Unknown,
}

impl CableEvidence {
    /// Judges a cluster-network wait of `wait_ms` by the back-interface
    /// heartbeats `heartbeat_ms`.
    pub fn judge(wait_ms: f64, heartbeat_ms: Option<f64>) -> Self {
        match heartbeat_ms {
            None => CableEvidence::Unknown,
            Some(h) if h >= CABLE_SHARE_OF_WAIT * wait_ms => CableEvidence::Carries(h),
            Some(h) => CableEvidence::FallsShort(h),
        }
    }

    /// The cause in words, for a finding or a headline.
    pub fn cause(self) -> String {
        match self {
            CableEvidence::Carries(h) => format!(
                "the back network or the hosts' network stack (the OSDs' back-interface heartbeats \
                 took {h:.2} ms: mean of their 1-min averages, both OSDs' userspace included)"
            ),
            CableEvidence::FallsShort(h) => format!(
                "not explained by the cable: the OSDs' back-interface heartbeats took only {h:.2} ms \
                 (mean of their 1-min averages); the rest may be the replicas' or the primary's CPU \
                 or host load (messenger threads waiting for a core)"
            ),
            CableEvidence::Unknown => "no cause named: no back-interface heartbeats came back (an \
                 OSD reports them from its first minute up on, to osd 'allow *'), and this host \
                 does not reach the OSDs' cluster addresses to time the cable itself, so nothing \
                 here tells the cable from the hosts' CPU or load"
                .to_string(),
        }
    }
}

/// What the per-OSD device-flush shares say about the drives, and what the
/// cluster-network and replica shares say about replication, each line
/// naming its evidence; with no BlueStore kv timers or no replica counters,
/// one line saying why there is no verdict. Empty when no OSD row has write
/// attributions.
pub fn findings(result: &BenchResult) -> Vec<String> {
    let mut out = client_findings(result);
    out.extend(shared_findings(result));
    out.extend(flush_findings(result));
    out.extend(replication_findings(result));
    out.extend(crate::explain::cpu::findings(result));
    out
}

/// Below this share of an OSD's client ops being this run's, the OSD's
/// means (queue, commit, flush, repop) mostly describe other traffic.
pub const OWN_SHARE_MIN: f64 = 0.5;

/// The OSDs whose counters mostly counted other traffic: each OSD's client
/// ops during the counters' window (its `op_w` + `op_r`) against the ops
/// this run sent it as primary. The window includes the ramp, which the
/// client's per-OSD counts leave out, so only a share under
/// [`OWN_SHARE_MIN`] is named. The OSDs' means (commit, device flush,
/// subop_w) are means over all their transactions: there they blend this
/// pool with the others and with other clients.
fn shared_findings(result: &BenchResult) -> Vec<String> {
    let mut shared: Vec<(i32, u64, u64)> = Vec::new();
    for o in &result.osds {
        let Some(c) = o.counters.as_ref().filter(|c| !c.reset) else {
            continue;
        };
        let ours: u64 = o
            .client
            .iter()
            .filter(|r| r.op != "flush")
            .map(|r| r.ops)
            .sum();
        let all = c.op_w.unwrap_or(0) + c.op_r.unwrap_or(0);
        if ours > 0 && all > ours && (ours as f64) < OWN_SHARE_MIN * all as f64 {
            shared.push((o.osd, ours, all));
        }
    }
    if shared.is_empty() {
        return Vec::new();
    }
    let each: Vec<String> = shared
        .iter()
        .map(|(o, ours, all)| {
            format!(
                "osd.{o} {:.0} % ({ours} of {all})",
                *ours as f64 / *all as f64 * 100.0
            )
        })
        .collect();
    vec![format!(
        "shared OSDs: of the client ops these OSDs served during the run, this run sent only {} — \
         other pools or clients used them too, so their means (queue, commit, device flush, \
         replica writes) blend that traffic with this run's; compare pools on OSDs of their own, \
         or on a quiet cluster",
        each.join(", ")
    )]
}

/// A closed-loop job whose client kept too few of its asked ops in flight
/// (see [`crate::result::ClientLoad`]): every figure of it is at a lower
/// depth than asked. One line per job (a mix's read and write reports share
/// the job's block).
fn client_findings(result: &BenchResult) -> Vec<String> {
    let mut seen: Vec<crate::result::ClientLoad> = Vec::new();
    let mut out = Vec::new();
    for j in &result.jobs {
        let Some(c) = j.client.filter(|c| c.fell_short()) else {
            continue;
        };
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        out.push(format!(
            "{}: the client kept {:.1} of the {} ops asked in flight on average: each completed op's \
             slot waited {:.2} ms before the next was issued (this host's CPU, or librados' own cap \
             on ops in flight, objecter_inflight_ops: 1024 by default), so the cluster was measured \
             at a lower depth than asked (the latencies leave that wait out, rados bench's include \
             it)",
            j.name.split('/').next().unwrap_or(&j.name),
            c.mean_in_flight,
            c.asked_in_flight,
            c.refill_wait_ns / 1e6
        ));
    }
    out
}

/// The mean over a run of one counter of one OSD, ns.
pub(crate) fn counter_ns(
    result: &BenchResult,
    osd: i32,
    pick: impl Fn(&OsdCounters) -> Option<crate::result::counters::AvgDelta>,
) -> Option<f64> {
    result
        .osds
        .iter()
        .find(|o| o.osd == osd)
        .and_then(|o| o.counters.as_ref())
        .filter(|c| !c.reset)
        .and_then(pick)
        .and_then(|d| d.mean_ns)
}

/// The pool the run's data went to: an image's data pool where it has
/// one (the pool whose settings and OSDs the verdicts are about), else the
/// run's pool.
fn pool_name(result: &BenchResult) -> &str {
    match &result.workload {
        crate::result::Workload::Rados(w) => &w.pool,
        crate::result::Workload::Rbd(w) => w.data_pool.as_deref().unwrap_or(&w.pool),
    }
}

/// One OSD's mean device flush per transaction (BlueStore's kv queue +
/// sync round), ns.
pub fn device_flush_ns(result: &BenchResult, osd: i32) -> Option<f64> {
    counter_ns(result, osd, |c| c.state_kv_queued_lat)
        .zip(counter_ns(result, osd, |c| c.state_kv_commiting_lat))
        .map(|(q, k)| q + k)
}

/// The pool's replication verdict from its write job's `cluster_network` and
/// `replica` shares: which of the two makes writes wait, naming the slowest
/// replica and its device flush as evidence (and the back-interface
/// heartbeats when the OSDs reported them). Nothing below the thresholds.
fn replication_findings(result: &BenchResult) -> Vec<String> {
    let pool = pool_name(result);
    let Some(a) = result
        .jobs
        .iter()
        .find(|j| j.op == "write" && j.ops >= 20)
        .and_then(|j| j.attribution.as_ref())
    else {
        return Vec::new();
    };
    let share = |p: Part| a.shares.iter().find(|s| s.part == p).map(|s| s.ns);
    let erasure = result.pool.as_ref().is_some_and(|p| p.erasure.is_some());
    if erasure && share(Part::Replication).is_some_and(|r| r > 0.0) {
        return vec![format!("pool '{pool}': no replication verdict: {EC_NOTE}")];
    }
    if share(Part::Replication).is_some_and(|r| r > 0.0) {
        return vec![format!(
            "pool '{pool}': no replication verdict: the wait for the replicas is not split into \
             cluster network and replica, the replicas' subop_w counters were not read (needs osd \
             'allow *' on every replica OSD, e.g. through --telemetry-id)"
        )];
    }
    let (Some(cable), Some(replica)) = (share(Part::ClusterNetwork), share(Part::Replica)) else {
        if result.placement.as_ref().is_some_and(|p| p.size >= 2) {
            return vec![format!(
                "pool '{pool}': no replication verdict: the OSDs' counters were not read (needs \
                 osd 'allow *', e.g. through --telemetry-id)"
            )];
        }
        return Vec::new();
    };
    // The OSDs' round trip: the cable's share and, where the back network's
    // own round trip was measured, the messengers' rest.
    let messengers = share(Part::Messengers);
    let net = cable + messengers.unwrap_or(0.0);
    if replica >= SLOW_REPLICA_NS && replica >= 2.0 * net {
        vec![replicas_finding(result, pool, net, replica)]
    } else if net >= SLOW_CLUSTER_NETWORK_NS && net >= 2.0 * replica {
        vec![cluster_network_finding(
            result,
            pool,
            (cable, messengers),
            replica,
        )]
    } else {
        Vec::new()
    }
}

/// The replicas this pool's primaries wrote to and their mean repop time
/// (`subop_w`, ns), slowest first.
fn replicas_by_repop(result: &BenchResult) -> Vec<(i32, f64)> {
    let mut replicas: Vec<i32> = result
        .osds
        .iter()
        .flat_map(|o| o.replica_sets.iter().flat_map(|s| s.osds.iter().copied()))
        .collect();
    replicas.sort_unstable();
    replicas.dedup();
    let mut by_subop: Vec<(i32, f64)> = replicas
        .iter()
        .filter_map(|o| counter_ns(result, *o, |c| c.subop_w_latency).map(|v| (*o, v)))
        .collect();
    by_subop.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_subop
}

/// The finding of writes that wait for their replicas' own work (`replica`,
/// ns) more than for the cluster network (`net`): the replicas' drives or
/// their queue and objectstore, the slowest replica named.
fn replicas_finding(result: &BenchResult, pool: &str, net: f64, replica: f64) -> String {
    let ms = |ns: f64| ns / 1e6;
    let by_subop = replicas_by_repop(result);
    let slowest = slowest_replica(result, &by_subop);
    let flush_slow = by_subop
        .first()
        .and_then(|(o, _)| device_flush_ns(result, *o))
        .is_some_and(|f| f >= SLOW_FLUSH_NS);
    // The replica share holds the repop's payload transfer where the
    // back network's bandwidth was not measured: "not the cable" only
    // where that transfer is small.
    let not_cable = match payload_per_write(result) {
        Some(b) if b > SMALL_WRITE_BYTES && back_bandwidth(result).is_none() => format!(
            " (the cable is not ruled out: each repop carries {} that no probe timed, the \
             back network's bandwidth was not measured)",
            crate::units::fmt_bytes(b as u64)
        ),
        _ => ", not the cable".to_string(),
    };
    format!(
        "pool '{pool}': each write waited {:.2} ms for its replicas beyond its own commit, \
         {:.2} ms of it on the cluster network: {}{not_cable}{}",
        ms(net + replica),
        ms(net),
        if flush_slow {
            "the replicas' drives"
        } else {
            "the replicas' own work (their queue and objectstore)"
        },
        slowest.unwrap_or_default()
    )
}

/// The slowest replica by repop time, its drive and device flush, against
/// the other replicas (`by_subop`, slowest first).
fn slowest_replica(result: &BenchResult, by_subop: &[(i32, f64)]) -> Option<String> {
    let ms = |ns: f64| ns / 1e6;
    by_subop.first().map(|(o, v)| {
        let others = by_subop
            .iter()
            .skip(1)
            .map(|(_, v)| *v)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let flush = device_flush_ns(result, *o);
        let drive = result
            .osds
            .iter()
            .find(|x| x.osd == *o)
            .and_then(|x| x.device.as_ref())
            .map(|d| format!(" ({})", d.summary()))
            .unwrap_or_default();
        format!(
            "; slowest replica osd.{o}{drive}: {:.2} ms per repop (receive → commit){}{}",
            ms(*v),
            others
                .map(|x| format!(", the other replicas at most {:.2} ms", ms(x)))
                .unwrap_or_default(),
            flush
                .map(|f| format!(", its device flush {:.2} ms per transaction", ms(f)))
                .unwrap_or_default()
        )
    })
}

/// The finding of writes that wait on the cluster network (the `cable`
/// share and the `messengers`' rest, ns) more than for the replicas' own
/// work: the back network or the OSDs' messengers, by the evidence.
fn cluster_network_finding(
    result: &BenchResult,
    pool: &str,
    (cable, messengers): (f64, Option<f64>),
    replica: f64,
) -> String {
    let ms = |ns: f64| ns / 1e6;
    let net = cable + messengers.unwrap_or(0.0);
    let heartbeat = back_heartbeat_ms([result]);
    let cause = match messengers {
        Some(m) if cable >= CABLE_SHARE_OF_WAIT * net => format!(
            "the back network: this host's fastest echo to the replicas' cluster addresses \
             took {:.2} ms of it (the OSDs' messengers the other {:.2} ms)",
            ms(cable),
            ms(m)
        ),
        Some(m) => format!(
            "not the cable: the back network's own round trip (this host's fastest echo to \
             the replicas' cluster addresses) was {:.2} ms; the other {:.2} ms {}",
            ms(cable),
            ms(m),
            messengers_cause(result)
        ),
        None => CableEvidence::judge(ms(net), heartbeat).cause(),
    };
    format!(
        "pool '{pool}': each write waited {:.2} ms on the cluster network (the primary↔replica \
         round trip, both OSDs' messengers included) beyond its replicas' own {:.2} ms, not \
         the replicas' drives: {cause}",
        ms(net),
        ms(replica),
    )
}

/// Writes of at most this many bytes are small: their payload's transfer
/// is small beside a round trip, and their device flush is the transaction's
/// own (above, the flush share carries the data's write to the device).
pub const SMALL_WRITE_BYTES: f64 = 65536.0;

/// The mean payload of the run's writes, bytes.
fn payload_per_write(result: &BenchResult) -> Option<f64> {
    let (b, n) = result
        .jobs
        .iter()
        .filter(|j| j.op == "write")
        .fold((0u64, 0u64), |(b, n), j| (b + j.bytes, n + j.ops));
    (n > 0).then(|| b as f64 / n as f64)
}

/// The back network's bandwidth, where a probe measured it, bytes/s.
fn back_bandwidth(result: &BenchResult) -> Option<f64> {
    result
        .network
        .as_ref()?
        .back_rtt
        .iter()
        .filter_map(|r| r.bandwidth_bytes_per_s)
        .reduce(f64::min)
}

/// What the OSD messengers share is, in words, by the OSDs' CPU figures:
/// their threads waiting for a core only where an OSD's CPU was at its
/// limit; else an unexplained wait, said as such.
fn messengers_cause(result: &BenchResult) -> String {
    let bound: Vec<i32> = result
        .osds
        .iter()
        .filter(|o| o.cpu.as_ref().is_some_and(|c| c.cpu_bound))
        .map(|o| o.osd)
        .collect();
    let measured = result
        .osds
        .iter()
        .filter(|o| o.cpu.as_ref().is_some_and(|c| c.cores_busy.is_some()))
        .count();
    if !bound.is_empty() {
        format!(
            "are the OSDs' messenger threads waiting for a core: {} used what {} may use (see \
             the OSDs' CPU)",
            osd_list(&bound),
            if bound.len() == 1 { "it" } else { "they" }
        )
    } else if measured > 0 && measured == result.osds.len() {
        "are a wait in the OSDs' messengers that the figures do not explain: no OSD's CPU was \
         at its limit"
            .to_string()
    } else {
        "are a wait in the OSDs' messengers that the figures do not explain (the OSDs' CPU was \
         not measured, so a wait for a core is not ruled out)"
            .to_string()
    }
}

/// The per-OSD device-flush verdicts (see [`findings`]): one line per kind
/// of drive, naming its slow OSDs together.
fn flush_findings(result: &BenchResult) -> Vec<String> {
    let pool = pool_name(result);
    let mut out = Vec::new();
    let with_writes = result.osds.iter().any(|o| {
        o.client
            .iter()
            .any(|r| r.op == "write" && r.ops >= 20 && r.attribution.is_some())
    });
    if !with_writes {
        return out;
    }
    let drives = drive_flushes(result);
    let any_flush_share = result.osds.iter().any(|o| {
        o.client
            .iter()
            .filter_map(|r| r.attribution.as_ref())
            .any(|a| a.shares.iter().any(|s| s.part == Part::DeviceFlush))
    });
    if drives.is_empty() && any_flush_share {
        // (The split has the flush share, but no OSD reported enough kv
        // sync rounds to judge its drive on.)
        return out;
    }
    if drives.is_empty() {
        out.push(
            "no device-flush verdict: the OSDs' BlueStore kv timers were not read (needs osd 'allow *', \
             e.g. through --telemetry-id, and a BlueStore OSD; memstore has none)"
                .into(),
        );
        return out;
    }
    // A drive that changed mid-run is judged on neither half: its mean
    // would average the two and could hide it among the others.
    let changed: Vec<(i32, f64, f64, f64)> = changed_flushes(result);
    let drives: Vec<DriveFlush> = drives
        .into_iter()
        .filter(|d| !changed.iter().any(|c| c.0 == d.osd))
        .collect();
    for (osd, t, before, after) in &changed {
        out.push(format!(
            "osd.{osd}: its kv sync round went {:.2} → {:.2} ms from {t:.0} s (see the Change \
             line): its drive is not judged on the run's mean, which averages both",
            before / 1e6,
            after / 1e6
        ));
    }
    let (lines, slow) = drive_verdicts(&drives);
    out.extend(lines);
    if let Some(job) = result.jobs.iter().find(|j| j.op == "write") {
        let flush = job
            .attribution
            .as_ref()
            .and_then(|a| a.shares.iter().find(|s| s.part == Part::DeviceFlush));
        if let (Some(f), false) = (flush, slow.is_empty()) {
            let ids: Vec<i32> = slow.clone();
            out.push(format!(
                "pool '{pool}': writes waited {:.2} ms ({:.0} %) of their mean latency for device \
                 flushes; slow flushes on {}",
                f.ns / 1e6,
                f.ns / job.latency_ns.mean.max(1.0) * 100.0,
                osd_list(&ids)
            ));
        }
    }
    out
}

/// The OSDs whose kv sync round a lasting change moved (a write job's
/// `changes`): (OSD, the change's start s, before ns, after ns).
fn changed_flushes(result: &BenchResult) -> Vec<(i32, f64, f64, f64)> {
    let mut out: Vec<(i32, f64, f64, f64)> = Vec::new();
    for j in result.jobs.iter().filter(|j| j.op == "write") {
        for c in j.changes.iter().flatten() {
            for m in c.osds.iter().filter(|m| m.counter == "kv_sync_lat") {
                if !out.iter().any(|x| x.0 == m.osd) {
                    out.push((m.osd, c.t_s, m.before_ns, m.after_ns));
                }
            }
        }
    }
    out.sort_by_key(|x| x.0);
    out
}

/// Each OSD's drive as its own flushes show it (those with at least
/// [`MIN_FLUSH_ROUNDS`] kv sync rounds). An OSD at its CPU limit is left
/// out: its kv sync thread waited for CPU inside the flush timers
/// ([`crate::explain::cpu::at_its_limit`]; its CPU line says so).
fn drive_flushes(result: &BenchResult) -> Vec<DriveFlush> {
    result
        .osds
        .iter()
        .filter(|o| !crate::explain::cpu::at_its_limit(o))
        .filter_map(|o| {
            let c = o.counters.as_ref().filter(|c| !c.reset)?;
            let d = c.kv_commit_lat.filter(|d| d.count >= MIN_FLUSH_ROUNDS)?;
            Some(DriveFlush {
                osd: o.osd,
                flush_ns: d.mean_ns?,
                drive: o.device.as_ref().map(|d| d.summary()),
            })
        })
        .collect()
}

/// The OSDs whose drives the verdict names slow ([`drive_verdicts`]).
pub fn slow_drives(result: &BenchResult) -> Vec<i32> {
    drive_verdicts(&drive_flushes(result)).1
}

/// One OSD's drive as its own flushes show it.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveFlush {
    /// The OSD.
    pub osd: i32,
    /// Its mean RocksDB WAL commit per kv sync round (`kv_commit_lat`), ns:
    /// one small synchronous write and the device flush that makes it
    /// durable, whatever the block size of the job (a round's data writes
    /// are flushed apart, in `kv_flush_lat`).
    pub flush_ns: f64,
    /// Its drive, as `osd metadata` describes it.
    pub drive: Option<String>,
}

/// A drive is named as slow only when its flush is at least this many
/// times the pool's fastest OSD's: the level of every OSD's flush moves
/// with the host's load and, on file-backed OSDs, with the job's block size
/// (the host's own fdatasync carries the extents just written: 0.5–0.7 ms
/// at 4 KiB, 1.0–3.1 ms at 4 MiB on this project's test machine), while a
/// drive without power-loss protection beside ones with it stands out by
/// far more (0.05 against 1–10 ms).
pub const STANDS_OUT_FACTOR: f64 = 2.5;

/// ... and at least this much slower than the fastest OSD's, ns: a loaded
/// host's noise moves one OSD's mean WAL commit by tenths of a millisecond
/// (0.4 → 1.0 ms seen on this project's test machine within one run).
pub const STANDS_OUT_MARGIN_NS: f64 = 1e6;

/// The verdict lines on the drives, and the OSDs named slow. Each OSD is
/// judged on its own flush ([`DriveFlush::flush_ns`]), never on a share
/// that carries the job's data. A drive is named when its flush is at
/// least [`SLOW_DRIVE_FLUSH_NS`], [`STANDS_OUT_FACTOR`] times the fastest
/// OSD's and [`STANDS_OUT_MARGIN_NS`] more (a pool on one OSD: when it is
/// slow); the named ones share one line, each with its figure and drive.
/// When none stands out but every OSD (two or more) is slow, one line says
/// so, naming no drive: the host's storage (file-backed OSDs, virtual
/// disks) or drives all of one kind.
pub fn drive_verdicts(drives: &[DriveFlush]) -> (Vec<String>, Vec<i32>) {
    let fastest = drives.iter().map(|d| d.flush_ns).fold(f64::MAX, f64::min);
    let slow: Vec<&DriveFlush> = drives
        .iter()
        .filter(|d| {
            d.flush_ns >= SLOW_DRIVE_FLUSH_NS
                && (drives.len() == 1
                    || (d.flush_ns >= STANDS_OUT_FACTOR * fastest
                        && d.flush_ns - fastest >= STANDS_OUT_MARGIN_NS))
        })
        .collect();
    if slow.is_empty() {
        if drives.len() < 2 || fastest < SLOW_DRIVE_FLUSH_NS {
            return (Vec::new(), Vec::new());
        }
        let hi = drives.iter().map(|d| d.flush_ns).fold(0.0, f64::max);
        let mut kinds: Vec<&str> = drives.iter().filter_map(|d| d.drive.as_deref()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let kinds = match kinds.as_slice() {
            [one] => format!(" ({one})"),
            _ => String::new(),
        };
        let ids: Vec<i32> = drives.iter().map(|d| d.osd).collect();
        let line = format!(
            "{}{kinds}: every OSD's WAL commit takes {:.2}–{:.2} ms (RocksDB, per kv sync round, \
             mean: one small sync write and its device flush), and no drive stands out — this host's own storage is slow to flush \
             (file-backed OSDs, virtual disks), or the drives all lack power-loss protection (with it \
             a flush takes well under 0.2 ms)",
            osd_list(&ids),
            fastest / 1e6,
            hi / 1e6
        );
        return (vec![line], Vec::new());
    }
    let ids: Vec<i32> = slow.iter().map(|d| d.osd).collect();
    let beside = if drives.len() >= 2 {
        format!("; the pool's fastest: {:.2} ms", fastest / 1e6)
    } else {
        String::new()
    };
    // One line per kind of drive, naming its slow OSDs together, so that
    // 30 OSDs of one kind do not flood the report.
    let mut kinds: Vec<(Option<&str>, Vec<&DriveFlush>)> = Vec::new();
    for d in &slow {
        match kinds.iter_mut().find(|(k, _)| *k == d.drive.as_deref()) {
            Some((_, v)) => v.push(d),
            None => kinds.push((d.drive.as_deref(), vec![d])),
        }
    }
    let lines = kinds
        .iter()
        .map(|(kind, ds)| {
            let ids: Vec<i32> = ds.iter().map(|d| d.osd).collect();
            let (lo, hi) = ds.iter().fold((f64::MAX, 0.0f64), |(lo, hi), d| {
                (lo.min(d.flush_ns), hi.max(d.flush_ns))
            });
            let took = if hi - lo < 0.005e6 {
                format!("{:.2} ms", hi / 1e6)
            } else {
                format!("{:.2}–{:.2} ms", lo / 1e6, hi / 1e6)
            };
            format!(
                "{}{}: each WAL commit takes {took} (RocksDB, per kv sync round, mean{}{beside}) \
                 — sync writes wait on the drive's cache flush, as on drives without power-loss \
                 protection; drives with it flush in well under 0.2 ms",
                osd_list(&ids),
                kind.map(|k| format!(" ({k})")).unwrap_or_default(),
                if ids.len() > 1 { " per OSD" } else { "" }
            )
        })
        .collect();
    (lines, ids)
}

/// The fastest probe of `osd` among `rows`: its ICMP echo where that ran,
/// else its TCP connect.
fn fastest_echo(rows: &[crate::result::network::ClientRtt], osd: i32) -> Option<RttEstimate> {
    ["icmp_echo", "tcp_connect"].iter().find_map(|m| {
        rows.iter()
            .find(|r| r.osd == osd && r.samples > 0 && r.method == *m)
            .map(|r| RttEstimate {
                ns: r.min_us * 1e3,
                method: if *m == "icmp_echo" {
                    "ICMP echo"
                } else {
                    "TCP connect"
                },
            })
    })
}

/// Fills in the split of every per-OSD row and every job of a result from
/// its counters, records and probes (nothing without a placement).
pub fn attribute_shares(result: &mut BenchResult) {
    let Some(size) = result.placement.as_ref().map(|p| p.size) else {
        return;
    };
    if result.osds.iter().all(|o| o.counters.is_none()) && result.network.is_none() {
        return;
    }
    // The round trip: the fastest of the ICMP echoes where they ran (a
    // loaded host delays some replies, never speeds one up; the kernel
    // answers them), else the fastest TCP connect (its mean carries the
    // OSD host's accept path under load: 360 µs against ICMP's 11 µs seen).
    let rtt = |osd: i32| {
        fastest_echo(
            result.network.as_ref().map(|n| n.client_rtt.as_slice())?,
            osd,
        )
    };
    let bandwidth = |osd: i32| {
        result.network.as_ref().and_then(|n| {
            n.client_rtt
                .iter()
                .find(|r| r.osd == osd && r.method == "icmp_echo")
                .and_then(|r| r.bandwidth_bytes_per_s)
        })
    };
    let op_bytes = |op: &str| {
        let (bytes, ops) = result
            .jobs
            .iter()
            .filter(|j| j.op == op)
            .fold((0u64, 0u64), |(b, n), j| (b + j.bytes, n + j.ops));
        if ops > 0 {
            bytes as f64 / ops as f64
        } else {
            0.0
        }
    };
    // Each OSD's mean repop time as a replica, over the run window (an
    // erasure-coded pool's shard writes are not among them: a subop_w mean
    // there would be another pool's).
    let erasure = result.pool.as_ref().is_some_and(|p| p.erasure.is_some());
    let subop = |osd: i32| counter_ns(result, osd, |c| c.subop_w_latency);
    // This host's fastest echo to each OSD's cluster address (ICMP, else
    // TCP connect: as for the public round trip).
    let back = |osd: i32| {
        fastest_echo(result.network.as_ref().map(|n| n.back_rtt.as_slice())?, osd).map(|r| r.ns)
    };
    let mut per_osd = Vec::new();
    for o in &result.osds {
        let replica_ns = if erasure {
            None
        } else {
            slowest_replica_ns(&o.replica_sets, subop)
        };
        let back_rtt_ns = if erasure {
            None
        } else {
            slowest_replica_ns(&o.replica_sets, back)
        };
        for (ix, row) in o.client.iter().enumerate() {
            if row.op == "flush" {
                continue;
            }
            let a = split_osd(&OsdInputs {
                op: &row.op,
                client_mean_ns: row.mean_ns,
                counters: o.counters.as_ref(),
                rtt_ns: rtt(o.osd).map(|r| r.ns),
                rtt_method: rtt(o.osd).map(|r| r.method),
                op_bytes: op_bytes(&row.op),
                bandwidth: bandwidth(o.osd),
                pool_size: size,
                erasure,
                replica_ns,
                evidence: row.evidence.as_ref(),
                back_rtt_ns,
            });
            per_osd.push((o.osd, ix, a));
        }
    }
    for (osd, ix, a) in &per_osd {
        if let Some(o) = result.osds.iter_mut().find(|o| o.osd == *osd) {
            o.client[*ix].attribution = Some(a.clone());
        }
    }
    for job in &mut result.jobs {
        if job.op == "flush" || job.ops == 0 {
            continue;
        }
        let rows: Vec<(u64, &Attribution)> = result
            .osds
            .iter()
            .flat_map(|o| o.client.iter())
            .filter(|r| r.op == job.op)
            .filter_map(|r| r.attribution.as_ref().map(|a| (r.ops, a)))
            .collect();
        if !rows.is_empty() {
            let mut a = combine(&rows, job.latency_ns.mean);
            a.notes.extend(round_trip_note(&result.osds, &job.op));
            job.attribution = Some(a);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::explain::attribute;
    use crate::result::counters::AvgDelta;

    fn avg(ms: f64) -> Option<AvgDelta> {
        Some(AvgDelta {
            count: 100,
            mean_ns: Some(ms * 1e6),
        })
    }

    fn counters() -> OsdCounters {
        OsdCounters {
            osd: 1,
            reset: false,
            op_w: Some(100),
            op_r: Some(100),
            subop_w: Some(200),
            op_w_latency: avg(5.0),
            op_w_process_latency: avg(4.0),
            op_w_prepare_latency: avg(0.5),
            op_r_latency: avg(1.0),
            op_r_process_latency: avg(0.75),
            subop_w_latency: avg(2.5),
            commit_lat: avg(2.0),
            kv_flush_lat: None,
            kv_commit_lat: None,
            kv_sync_lat: None,
            state_kv_queued_lat: None,
            state_kv_commiting_lat: None,
            submit_lat: None,
            op_before_queue_op_lat: None,
            op_before_dequeue_op_lat: None,
        }
    }

    fn get(a: &Attribution, p: Part) -> Option<f64> {
        a.shares.iter().find(|s| s.part == p).map(|s| s.ns / 1e6)
    }

    /// The unattributed share is `want` ms: the client's mean less the
    /// shares, each worked out by hand from the test's inputs.
    #[track_caller]
    fn un(a: &Attribution, want: f64) {
        let got = get(a, Part::Unattributed).unwrap();
        assert!(
            (got - want).abs() < 1e-9,
            "unattributed {got} ms, want {want}: {a:?}"
        );
    }

    /// A size-3 write on an OSD with counters `c`, 0.25 ms from the client.
    fn size3_write(c: &OsdCounters, client_mean_ns: f64, replica_ns: Option<f64>) -> Attribution {
        size3_write_with_back(c, client_mean_ns, replica_ns, None)
    }

    /// [`size3_write`] with the back network's own round trip measured.
    fn size3_write_with_back(
        c: &OsdCounters,
        client_mean_ns: f64,
        replica_ns: Option<f64>,
        back_rtt_ns: Option<f64>,
    ) -> Attribution {
        split_osd(&OsdInputs {
            op: "write",
            client_mean_ns,
            counters: Some(c),
            rtt_ns: Some(0.25e6),
            rtt_method: None,
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 3,
            erasure: false,
            replica_ns,
            evidence: None,
            back_rtt_ns,
        })
    }

    #[test]
    fn the_replication_wait_splits_into_cluster_network_and_replica() {
        let c = counters();
        let mk = |replica_ns| size3_write(&c, 6e6, replica_ns);
        // wait 3.5 beyond prepare; commit 2.0: replication 1.5. The slowest
        // replica took 2.8 from receive to commit: 0.8 longer than the
        // primary's commit; the remaining 0.7 is the round trip.
        let a = mk(Some(2.8e6));
        assert_eq!(get(&a, Part::Replication), None);
        assert!((get(&a, Part::Replica).unwrap() - 0.8).abs() < 1e-9);
        assert!((get(&a, Part::ClusterNetwork).unwrap() - 0.7).abs() < 1e-9);
        assert_eq!(get(&a, Part::OsdLocal), Some(2.5), "unchanged by the split");
        // By hand: 6 − public 0.25 − queue 1.0 − local 2.5 − copies 1.5.
        un(&a, 0.75);
        let order: Vec<Part> = a.shares.iter().map(|s| s.part).collect();
        assert_eq!(
            order,
            [
                Part::PublicNetwork,
                Part::OsdQueue,
                Part::OsdLocal,
                Part::ClusterNetwork,
                Part::Replica,
                Part::Unattributed
            ]
        );
        assert!(a.notes.iter().any(|n| n.contains("subop_w")));
        // A replica faster than the primary's own commit: all of it is the network.
        let a = mk(Some(1.0e6));
        assert_eq!(get(&a, Part::Replica), Some(0.0));
        assert_eq!(get(&a, Part::ClusterNetwork), Some(1.5));
        // A replica slower than the whole wait (its mean over other primaries'
        // repops too): capped, the network gets 0.
        let a = mk(Some(9.0e6));
        assert_eq!(get(&a, Part::Replica), Some(1.5));
        assert_eq!(get(&a, Part::ClusterNetwork), Some(0.0));
        // A one-way delay D on the back network: the wait grows by 2D, the
        // replica's own timer does not; all of it lands in the network share.
        let mut slow = counters();
        slow.op_w_process_latency = avg(6.0);
        let d = size3_write(&slow, 8e6, Some(2.8e6));
        assert!((get(&d, Part::ClusterNetwork).unwrap() - 2.7).abs() < 1e-9);
        assert!((get(&d, Part::Replica).unwrap() - 0.8).abs() < 1e-9);
        // Unknown replicas: one unsplit share, and a note says why.
        let a = mk(None);
        assert_eq!(get(&a, Part::PublicNetwork), Some(0.25));
        assert_eq!(get(&a, Part::OsdQueue), Some(1.0));
        assert_eq!(get(&a, Part::Replication), Some(1.5));
        assert_eq!(get(&a, Part::OsdLocal), Some(2.5));
        assert_eq!(get(&a, Part::Unattributed), Some(0.75));
        assert_eq!(get(&a, Part::Client), None);
        assert_eq!(get(&a, Part::ClusterNetwork), None);
        assert!(a.notes.iter().any(|n| n.contains("not split")));
    }

    #[test]
    fn the_slowest_replica_is_averaged_over_the_primarys_pgs() {
        let sets = [
            ReplicaSet {
                osds: vec![1, 2],
                pgs: 3,
            },
            ReplicaSet {
                osds: vec![3, 1],
                pgs: 1,
            },
        ];
        let subop = |o: i32| match o {
            1 => Some(1.0),
            2 => Some(3.0),
            3 => Some(0.5),
            _ => None,
        };
        // (3 × max(1, 3) + 1 × max(0.5, 1)) / 4 = 2.5.
        assert_eq!(slowest_replica_ns(&sets, subop), Some(2.5));
        assert_eq!(slowest_replica_ns(&[], subop), None);
        let unknown = [ReplicaSet {
            osds: vec![1, 7],
            pgs: 2,
        }];
        assert_eq!(slowest_replica_ns(&unknown, subop), None);
    }

    #[test]
    fn the_device_flush_comes_out_of_the_local_share() {
        let mut c = counters();
        c.state_kv_queued_lat = avg(0.5);
        c.state_kv_commiting_lat = avg(1.0);
        let input = |c: &OsdCounters, size| {
            split_osd(&OsdInputs {
                op: "write",
                client_mean_ns: 6e6,
                counters: Some(c),
                rtt_ns: None,
                rtt_method: None,
                op_bytes: 4096.0,
                bandwidth: None,
                pool_size: size,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            })
        };
        // size 1: process 4 = local 2.5 + flush 1.5.
        let a = input(&c, 1);
        assert_eq!(get(&a, Part::DeviceFlush), Some(1.5));
        assert_eq!(get(&a, Part::OsdLocal), Some(2.5));
        // By hand: 6 − queue 1.0 − process 4.0 (local 2.5 + flush 1.5).
        un(&a, 1.0);
        // size 3: local 2.5 (process 4 − replication 1.5) = 1.0 + flush 1.5.
        let a = input(&c, 3);
        assert_eq!(get(&a, Part::Replication), Some(1.5));
        assert_eq!(get(&a, Part::DeviceFlush), Some(1.5));
        assert_eq!(get(&a, Part::OsdLocal), Some(1.0));
        // A mean over replica transactions too may exceed the local share: capped.
        c.state_kv_commiting_lat = avg(9.0);
        let a = input(&c, 3);
        assert_eq!(get(&a, Part::DeviceFlush), Some(2.5));
        assert_eq!(get(&a, Part::OsdLocal), Some(0.0));
        // By hand: 6 − queue 1.0 − flush 2.5 − copies 1.5 (local 0).
        un(&a, 1.0);
        // Without the timers (memstore): no share, and a note says so.
        let a = input(&counters(), 1);
        assert_eq!(get(&a, Part::DeviceFlush), None);
        assert!(a.notes.iter().any(|n| n.contains("no device flush share")));
    }

    #[test]
    fn size_one_and_reads_have_no_replication() {
        let c = counters();
        let w = split_osd(&OsdInputs {
            op: "write",
            client_mean_ns: 6e6,
            counters: Some(&c),
            rtt_ns: None,
            rtt_method: None,
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 1,
            erasure: false,
            replica_ns: None,
            evidence: None,
            back_rtt_ns: None,
        });
        assert_eq!(get(&w, Part::ClusterNetwork), Some(0.0));
        assert_eq!(get(&w, Part::Replica), Some(0.0));
        assert_eq!(get(&w, Part::Replication), None);
        assert_eq!(get(&w, Part::OsdLocal), Some(4.0));
        assert_eq!(get(&w, Part::PublicNetwork), None);
        assert_eq!(get(&w, Part::Unattributed), Some(1.0));
        let r = split_osd(&OsdInputs {
            op: "read",
            client_mean_ns: 1.5e6,
            counters: Some(&c),
            rtt_ns: Some(0.1e6),
            rtt_method: None,
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 3,
            erasure: false,
            replica_ns: None,
            evidence: None,
            back_rtt_ns: None,
        });
        assert_eq!(get(&r, Part::OsdQueue), Some(0.25));
        assert_eq!(get(&r, Part::OsdLocal), Some(0.75));
        assert_eq!(get(&r, Part::ClusterNetwork), Some(0.0));
        assert_eq!(get(&r, Part::Replica), Some(0.0));
        assert!((get(&r, Part::Unattributed).unwrap() - 0.4).abs() < 1e-9);
    }

    #[test]
    fn missing_or_reset_counters_leave_the_rest_unattributed() {
        let mut c = counters();
        c.reset = true;
        for counters in [None, Some(&c)] {
            let a = split_osd(&OsdInputs {
                op: "write",
                client_mean_ns: 3e6,
                counters,
                rtt_ns: Some(1e6),
                rtt_method: None,
                op_bytes: 4096.0,
                bandwidth: None,
                pool_size: 3,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            });
            assert_eq!(get(&a, Part::OsdQueue), None);
            assert_eq!(get(&a, Part::Unattributed), Some(2.0));
            assert!(a.notes.len() >= 2, "{:?}", a.notes);
        }
    }

    #[test]
    fn replicas_faster_than_the_local_commit_cost_nothing() {
        let mut c = counters();
        c.commit_lat = avg(10.0);
        let a = split_osd(&OsdInputs {
            op: "write",
            client_mean_ns: 6e6,
            counters: Some(&c),
            rtt_ns: None,
            rtt_method: None,
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 2,
            erasure: false,
            replica_ns: None,
            evidence: None,
            back_rtt_ns: None,
        });
        assert_eq!(get(&a, Part::Replication), Some(0.0));
        assert_eq!(get(&a, Part::OsdLocal), Some(4.0));
        // No commit latency (memstore): the whole wait is replication.
        c.commit_lat = None;
        let a = split_osd(&OsdInputs {
            op: "write",
            client_mean_ns: 6e6,
            counters: Some(&c),
            rtt_ns: None,
            rtt_method: None,
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 2,
            erasure: false,
            replica_ns: None,
            evidence: None,
            back_rtt_ns: None,
        });
        assert_eq!(get(&a, Part::Replication), Some(3.5));
    }

    #[test]
    fn payload_transfer_moves_from_the_write_queue_to_the_network() {
        let c = counters();
        // 1 MB at 1 GB/s: 1 ms on the wire.
        let mk = |op, bandwidth, rtt_ns| {
            split_osd(&OsdInputs {
                op,
                client_mean_ns: 6e6,
                counters: Some(&c),
                rtt_ns,
                rtt_method: None,
                op_bytes: 1e6,
                bandwidth,
                pool_size: 1,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            })
        };
        let w = mk("write", Some(1e9), Some(0.25e6));
        assert_eq!(get(&w, Part::PublicNetwork), Some(1.25));
        assert_eq!(
            get(&w, Part::OsdQueue),
            Some(0.0),
            "queue 1.0 − payload 1.0"
        );
        assert_eq!(get(&w, Part::Unattributed), Some(0.75), "unchanged");
        assert!(w
            .notes
            .iter()
            .any(|n| n.contains("payload at the path's bandwidth")));
        // Twice the payload: the queue share stops at 0, the rest comes out of
        // unattributed, and a note says so.
        let w2 = mk("write", Some(0.5e9), Some(0.25e6));
        assert_eq!(get(&w2, Part::PublicNetwork), Some(2.25));
        assert_eq!(get(&w2, Part::OsdQueue), Some(0.0));
        assert_eq!(get(&w2, Part::Unattributed), Some(-0.25));
        assert!(w2.notes.iter().any(|n| n.contains("exceeds")));
        // A read's reply payload is outside the OSD's timers.
        let r = mk("read", Some(1e9), Some(0.25e6));
        assert_eq!(get(&r, Part::PublicNetwork), Some(1.25));
        assert_eq!(get(&r, Part::OsdQueue), Some(0.25));
        // No bandwidth, or no RTT: no payload term, and notes say why.
        let n = mk("write", None, Some(0.25e6));
        assert_eq!(get(&n, Part::PublicNetwork), Some(0.25));
        assert_eq!(get(&n, Part::OsdQueue), Some(1.0));
        assert!(n.notes.iter().any(|n| n.contains("CAP_NET_RAW")));
        let n = mk("write", Some(1e9), None);
        assert_eq!(get(&n, Part::PublicNetwork), None);
        assert_eq!(get(&n, Part::OsdQueue), Some(1.0));
        // A read: 6 − public 1.25 − queue 0.25 − local 0.75.
        un(&r, 3.75);
    }

    /// A 3-OSD size-3 pool's result: every OSD primary for 4 PGs with the
    /// other two as replicas; per OSD: `wait` ms after prepare, `subop` ms
    /// per repop, `commit` ms local commit, `flush` ms kv queue + sync.
    /// [`pool_result`] with one slow primary among fast replicas, as
    /// perf/projections.sh's one-slow-OSD runs measured it (osd.1 commits
    /// 6.1 ms slower), attributed.
    pub(crate) fn one_slow_primary() -> BenchResult {
        let mut r = pool_result(
            [7.0, 6.63, 7.0],
            [0.7, 6.9, 0.7],
            [0.5, 6.6, 0.5],
            [0.3, 6.4, 0.3],
        );
        crate::explain::attribute(&mut r);
        r
    }

    pub(crate) fn pool_result(
        wait: [f64; 3],
        subop: [f64; 3],
        commit: [f64; 3],
        flush: [f64; 3],
    ) -> BenchResult {
        use crate::result::*;
        let mean = 1.0 + wait.iter().sum::<f64>() / 3.0 + 0.5;
        let osds = (0..3)
            .map(|o: i32| {
                let (wait, i) = (wait[o as usize], o as usize);
                let mut c = counters();
                c.osd = o;
                c.op_w_latency = avg(0.5 + wait + 0.1);
                c.op_w_process_latency = avg(0.5 + wait);
                c.op_w_prepare_latency = avg(0.5);
                c.commit_lat = avg(commit[i]);
                c.subop_w_latency = avg(subop[o as usize]);
                c.state_kv_queued_lat = avg(0.0);
                c.state_kv_commiting_lat = avg(flush[o as usize]);
                OsdReport {
                    osd: o,
                    client: vec![OsdClientRow {
                        op: "write".into(),
                        ops: 100,
                        mean_ns: (1.5 + wait) * 1e6,
                        p99_ns: 0,
                        histogram: None,
                        attribution: None,
                        evidence: None,
                    }],
                    counters: Some(c),
                    timeline: Vec::new(),
                    mgr_perf: None,
                    device: None,
                    replica_sets: vec![ReplicaSet {
                        osds: (0..3).filter(|x| *x != o).collect(),
                        pgs: 4,
                    }],
                    cpu: None,
                }
            })
            .collect();
        let job = JobReport {
            name: "write".into(),
            op: "write".into(),
            ops: 300,
            latency_ns: crate::stats::LatencySummary {
                mean: mean * 1e6,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut r = BenchResult {
            osds,
            placement: Some(PlacementInfo {
                pool_id: 1,
                pg_num: 12,
                epoch: 1,
                size: 3,
                refreshes: Vec::new(),
            }),
            ..test_result("p3", vec![job])
        };
        // One op in flight, as the rows' figures are.
        if let Workload::Rados(w) = &mut r.workload {
            w.concurrent_ios = 1;
        }
        r
    }

    /// A large write: the primary's own transaction starts inside prepare
    /// (queue_transactions runs in execute_ctx), so the part of commit_lat
    /// inside it (submit_lat) is not waited for again after prepare. Taken
    /// off, the wait for the replicas is not clamped to 0 and OSD local
    /// does not carry it.
    #[test]
    fn the_local_commit_inside_prepare_is_counted_once() {
        let mut c = counters();
        // 4 MiB-like: prepare 5 (of which 4.5 queue_transactions), commit 6,
        // process 12: own commit ends at 5 - 4.5 + 6 = 6.5, so the replicas
        // kept the primary 5.5 ms more.
        c.op_w_latency = avg(12.5);
        c.op_w_process_latency = avg(12.0);
        c.op_w_prepare_latency = avg(5.0);
        c.commit_lat = avg(6.0);
        c.submit_lat = avg(4.5);
        let a = size3_write(&c, 13e6, None);
        assert!(
            (get(&a, Part::Replication).unwrap() - 5.5).abs() < 1e-9,
            "{a:?}"
        );
        assert!(
            (get(&a, Part::OsdLocal).unwrap() - 6.5).abs() < 1e-9,
            "{a:?}"
        );
        // Without submit_lat (an objectstore that lacks it) the old
        // formula stands, and a note says what it misses.
        c.submit_lat = None;
        let a = size3_write(&c, 13e6, None);
        assert!(
            (get(&a, Part::Replication).unwrap() - 1.0).abs() < 1e-9,
            "{a:?}"
        );
        assert!(a.notes.iter().any(|n| n.contains("submit_lat")));
        // 4 KiB: the queue share is the queue; 4 MiB: receive + queue, said.
        assert!(!a.notes.iter().any(|n| n.contains("receive + queue")));
        let big = split_osd(&OsdInputs {
            op_bytes: 4.0 * 1048576.0,
            ..OsdInputs {
                op: "write",
                client_mean_ns: 13e6,
                counters: Some(&c),
                rtt_ns: Some(0.25e6),
                rtt_method: None,
                op_bytes: 0.0,
                bandwidth: None,
                pool_size: 3,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            }
        });
        assert!(big
            .notes
            .iter()
            .any(|n| n.contains("OSD queue share is receive + queue")));
    }

    /// A 4 MiB write's time before dequeue is mostly its payload's receive:
    /// with the OSD's before-queue and before-dequeue timers the queue share
    /// is the op queue's mean wait and the rest goes to the public network.
    /// Figures as a 3-OSD size-3 pool measured at QD1 (osd.0): op_w 15.99,
    /// process 13.32, before queue 1.951, before dequeue 2.119 ms.
    #[test]
    fn a_large_writes_receive_is_told_apart_from_its_queue_wait() {
        let mut c = counters();
        c.op_w_latency = avg(15.99);
        c.op_w_process_latency = avg(13.32);
        c.op_before_queue_op_lat = avg(1.951);
        c.op_before_dequeue_op_lat = avg(2.119);
        let split = |c: &OsdCounters, bytes: f64, rtt_ns: Option<f64>| {
            split_osd(&OsdInputs {
                op: "write",
                client_mean_ns: 17e6,
                counters: Some(c),
                rtt_ns,
                rtt_method: None,
                op_bytes: bytes,
                bandwidth: Some(10e9),
                pool_size: 3,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            })
        };
        let big = split(&c, 4.0 * 1048576.0, Some(0.05e6));
        // Queue 2.119 − 1.951 = 0.168; receive 15.99 − 13.32 − 0.168 = 2.502.
        assert!((get(&big, Part::OsdQueue).unwrap() - 0.168).abs() < 1e-9);
        assert!((get(&big, Part::PublicNetwork).unwrap() - (0.05 + 2.502)).abs() < 1e-9);
        // 17 − 0.05 − 15.99 ms the OSD did not time.
        assert!((get(&big, Part::Unattributed).unwrap() - 0.96).abs() < 1e-9);
        assert!(big
            .notes
            .iter()
            .any(|n| n.contains("OSD's counters time apart from its op queue")));
        assert!(!big.notes.iter().any(|n| n.contains("receive + queue")));
        // 4 KiB: not told apart (the bandwidth estimate as before).
        let small = split(&c, 4096.0, Some(0.05e6));
        let wire = 4096.0 / 10e9 * 1e3;
        assert!((get(&small, Part::OsdQueue).unwrap() - (2.67 - wire)).abs() < 1e-9);
        // A mean wait longer than the whole time before dequeue: all queue.
        let mut slow = c.clone();
        slow.op_before_dequeue_op_lat = avg(9.0);
        let s = split(&slow, 4.0 * 1048576.0, Some(0.05e6));
        assert!((get(&s, Part::OsdQueue).unwrap() - 2.67).abs() < 1e-9);
        assert!((get(&s, Part::PublicNetwork).unwrap() - 0.05).abs() < 1e-9);
        // No round trip, or a release without the timers: receive + queue, said.
        for (c, rtt) in [(&c, None), (&counters(), Some(0.05e6))] {
            let mut c = c.clone();
            c.op_w_latency = avg(15.99);
            c.op_w_process_latency = avg(13.32);
            let a = split(&c, 4.0 * 1048576.0, rtt);
            assert!(
                a.notes.iter().any(|n| n.contains("receive + queue")),
                "{a:?}"
            );
        }
    }

    /// An erasure-coded pool's reads gather shards over the cluster
    /// network: no cluster-network or replica share of 0, a note instead.
    #[test]
    fn an_ec_read_shows_what_is_not_measured_as_not_measured() {
        let c = counters();
        let read = |erasure| {
            split_osd(&OsdInputs {
                op: "read",
                client_mean_ns: 2e6,
                counters: Some(&c),
                rtt_ns: Some(0.1e6),
                rtt_method: None,
                op_bytes: 4096.0,
                bandwidth: None,
                pool_size: 3,
                erasure,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            })
        };
        let ec = read(true);
        assert_eq!(get(&ec, Part::ClusterNetwork), None, "{ec:?}");
        assert_eq!(get(&ec, Part::Replica), None, "{ec:?}");
        assert!(ec
            .notes
            .iter()
            .any(|n| n.contains("not measured on its own, not 0")));
        let rep = read(false);
        assert_eq!(get(&rep, Part::ClusterNetwork), Some(0.0));
    }

    /// A drive slowed mid-run: the verdict does not average its halves and
    /// then say that no drive stands out; it says that the drive changed.
    #[test]
    fn a_drive_that_changed_mid_run_is_not_judged_on_its_mean() {
        let mut r = pool_result([1.5; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        for (o, ms) in r.osds.iter_mut().zip([1.55, 3.58, 2.9]) {
            o.counters.as_mut().unwrap().kv_commit_lat = avg(ms);
        }
        attribute(&mut r);
        assert!(
            r.findings.iter().any(|f| f.contains("no drive stands out")),
            "{:?}",
            r.findings
        );
        let phase = crate::result::changes::Phase {
            from_s: 0.0,
            to_s: 27.0,
            iops: 100.0,
            mean_ns: 2e6,
            p99_ns: None,
        };
        r.jobs[0].changes = Some(vec![crate::result::changes::Change {
            t_s: 27.0,
            before: phase,
            after: phase,
            osds: vec![crate::result::changes::OsdMove {
                osd: 1,
                counter: "kv_sync_lat".into(),
                before_ns: 1.63e6,
                after_ns: 18.6e6,
            }],
            events: Vec::new(),
        }]);
        attribute(&mut r);
        assert!(
            r.findings.iter().any(|f| f.starts_with(
                "osd.1: its kv sync round went 1.63 → 18.60 ms from 27 s (see the Change line)"
            )),
            "{:?}",
            r.findings
        );
        // The others alone: no longer "no drive stands out" over osd.1's mean.
        assert!(
            r.findings
                .iter()
                .all(|f| !f.contains("osd.0, osd.1, osd.2") || !f.contains("WAL commit")),
            "{:?}",
            r.findings
        );
    }

    fn drive(osd: i32, ms: f64) -> DriveFlush {
        DriveFlush {
            osd,
            flush_ns: ms * 1e6,
            drive: Some(
                if osd == 1 {
                    "class consumer"
                } else {
                    "class plp"
                }
                .into(),
            ),
        }
    }

    /// Drives are judged on their own flush (one WAL commit per kv sync
    /// round): one slow drive is named with its figure beside the pool's
    /// fastest; several share a line; every OSD alike is one line about the
    /// host or the drives' kind, naming none.
    #[test]
    fn drive_verdicts_name_one_drive_or_say_the_host() {
        let (l, slow) = drive_verdicts(&[drive(0, 0.08), drive(1, 4.1), drive(2, 0.09)]);
        assert_eq!(slow, [1]);
        assert_eq!(l.len(), 1);
        assert!(
            l[0].starts_with("osd.1 (class consumer): each WAL commit takes 4.10 ms")
                && l[0].contains("the pool's fastest: 0.08 ms"),
            "{l:?}"
        );
        // Two kinds of drive: a line each.
        let (l, slow) = drive_verdicts(&[drive(0, 0.08), drive(1, 4.1), drive(2, 3.0)]);
        assert_eq!((slow, l.len()), (vec![1, 2], 2));
        assert!(
            l[1].starts_with("osd.2 (class plp): each WAL commit takes 3.00 ms"),
            "{l:?}"
        );
        // This host's file-backed OSDs: all slow and none standing out, one
        // line naming no drive (and no OSD counted as a slow drive).
        let (l, slow) = drive_verdicts(&[drive(0, 1.02), drive(1, 2.10), drive(2, 1.06)]);
        assert!(slow.is_empty());
        assert_eq!(l.len(), 1);
        assert!(
            l[0].starts_with("osd.0, osd.1, osd.2: every OSD's WAL commit takes 1.02–2.10 ms")
                && l[0].contains("no drive stands out"),
            "{l:?}"
        );
        // All slow but one far slower: that one is named.
        let (l, slow) = drive_verdicts(&[drive(0, 1.0), drive(1, 4.5), drive(2, 1.1)]);
        assert_eq!(slow, [1]);
        assert!(
            l[0].starts_with("osd.1 (class consumer): each WAL commit takes 4.50 ms"),
            "{l:?}"
        );
        // Slow, but not standing out from a fast one: no verdict on it
        // (twice the fastest; 2.5 times, but only 0.9 ms more).
        assert!(drive_verdicts(&[drive(0, 0.6), drive(1, 1.2)]).0.is_empty());
        assert!(drive_verdicts(&[drive(0, 0.6), drive(1, 1.5)]).0.is_empty());
        // A pool on one OSD: slow is enough.
        assert_eq!(drive_verdicts(&[drive(1, 1.5)]).1, [1]);
        assert!(drive_verdicts(&[drive(0, 0.05), drive(1, 0.9)])
            .0
            .is_empty());
    }

    /// The same drives give the same verdict whatever the job's block size:
    /// a 4 MiB job's device-flush share carries the data writes, its WAL
    /// commit per round does not move.
    #[test]
    fn the_drive_verdict_does_not_move_with_the_block_size() {
        let verdict = |flush_share_ms: f64| {
            let mut r = pool_result([1.8; 3], [1.5; 3], [1.2; 3], [flush_share_ms; 3]);
            for (i, o) in r.osds.iter_mut().enumerate() {
                let c = o.counters.as_mut().unwrap();
                c.kv_commit_lat = avg([0.09, 2.5, 0.1][i]);
            }
            attribute(&mut r);
            r.findings
                .into_iter()
                .filter(|f| f.contains("WAL commit takes"))
                .collect::<Vec<_>>()
        };
        let (small, large) = (verdict(0.3), verdict(4.2));
        assert_eq!(small, large);
        assert!(
            small.len() == 1 && small[0].starts_with("osd.1"),
            "{small:?}"
        );
    }

    /// The round trip is the fastest ICMP echo when there is one: the TCP
    /// connect's mean carries the OSD host's load.
    #[test]
    fn the_round_trip_is_the_fastest_echo() {
        use crate::result::network::ClientRtt;
        let mut r = pool_result([1.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        let row = |osd, method: &str, min_us, mean_us| ClientRtt {
            osd,
            addr: "127.0.0.1".into(),
            method: method.into(),
            samples: 10,
            failures: 0,
            min_us,
            mean_us,
            max_us: mean_us * 2.0,
            bulk_bytes: None,
            bulk_min_us: None,
            bandwidth_bytes_per_s: None,
        };
        let mut rtts = Vec::new();
        for o in 0..3 {
            rtts.push(row(o, "tcp_connect", 300.0, 360.0));
            rtts.push(row(o, "icmp_echo", 11.0, 25.0));
        }
        r.network = Some(crate::result::NetworkReport {
            client_rtt: rtts,
            back_rtt: Vec::new(),
            heartbeat: Vec::new(),
        });
        attribute(&mut r);
        let a = r.jobs[0].attribution.as_ref().unwrap();
        assert!(
            (get(a, Part::PublicNetwork).unwrap() - 0.011).abs() < 1e-9,
            "{a:?}"
        );
        assert!(
            a.notes.iter().any(|n| n.contains("the fastest ICMP echo")),
            "{:?}",
            a.notes
        );
    }

    /// An OSD whose client ops were mostly another pool's or client's is
    /// named: its means blend that traffic.
    #[test]
    fn osds_busy_with_other_traffic_are_named() {
        let mut r = pool_result([1.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        attribute(&mut r);
        assert!(
            !r.findings.iter().any(|f| f.starts_with("shared OSDs")),
            "{:?}",
            r.findings
        );
        let c = r.osds[2].counters.as_mut().unwrap();
        (c.op_w, c.op_r) = (Some(400), Some(0));
        attribute(&mut r);
        let f = r
            .findings
            .iter()
            .find(|f| f.starts_with("shared OSDs"))
            .expect("named");
        assert!(
            f.contains("osd.2 25 % (100 of 400)") && !f.contains("osd.0"),
            "{f}"
        );
    }

    /// Every OSD's back-interface heartbeat to the next one, `ms` each
    /// (none without).
    fn back_heartbeats(ms: Option<f64>) -> crate::result::NetworkReport {
        crate::result::NetworkReport {
            client_rtt: Vec::new(),
            back_rtt: Vec::new(),
            heartbeat: ms
                .into_iter()
                .flat_map(|ms| {
                    (0..3).map(move |o| crate::result::network::HeartbeatRtt {
                        from: o,
                        to: (o + 1) % 3,
                        interface: "back".into(),
                        avg_1min_ms: ms,
                        last_ms: Some(ms),
                    })
                })
                .collect(),
        }
    }

    /// This host's echoes to the OSDs' cluster addresses, `us` each.
    fn back_echoes(us: [f64; 3]) -> Vec<crate::result::network::ClientRtt> {
        (0..3)
            .map(|o: i32| crate::result::network::ClientRtt {
                osd: o,
                addr: format!("127.0.1.{}", 20 + o),
                method: "icmp_echo".into(),
                samples: 4,
                failures: 0,
                min_us: us[o as usize],
                mean_us: us[o as usize] * 1.5,
                max_us: us[o as usize] * 3.0,
                bulk_bytes: None,
                bulk_min_us: None,
                bandwidth_bytes_per_s: None,
            })
            .collect()
    }

    /// Where the back network's own round trip was measured, the
    /// cluster-network share is held to it (the slowest replica's echo) and
    /// the rest of the OSDs' round trip is the messengers'; the verdict
    /// names the cable only when the echo carries the wait.
    #[test]
    fn the_cable_share_is_held_to_the_back_networks_own_round_trip() {
        let c = counters();
        let split = |back| size3_write_with_back(&c, 6e6, Some(2.8e6), back);
        // The OSDs' round trip is 0.7 ms (as in the split above).
        let a = split(Some(0.3e6));
        assert!((get(&a, Part::ClusterNetwork).unwrap() - 0.3).abs() < 1e-9);
        assert!((get(&a, Part::Messengers).unwrap() - 0.4).abs() < 1e-9);
        assert!((get(&a, Part::Replica).unwrap() - 0.8).abs() < 1e-9);
        // By hand: 6 − public 0.25 − queue 1.0 − local 2.5 − copies 1.5.
        un(&a, 0.75);
        assert!(a
            .notes
            .iter()
            .any(|n| n.contains("commit callback waiting")));
        // An echo slower than the whole round trip: all of it is the cable's.
        let a = split(Some(5e6));
        assert!((get(&a, Part::ClusterNetwork).unwrap() - 0.7).abs() < 1e-9);
        assert_eq!(get(&a, Part::Messengers), Some(0.0));
        // Not measured: no messengers share, the round trip stays whole.
        let a = split(None);
        assert_eq!(get(&a, Part::Messengers), None);
        assert!((get(&a, Part::ClusterNetwork).unwrap() - 0.7).abs() < 1e-9);

        // From the OSDs' own records: the same hold.
        let ev = OpEvidence {
            ops: 100,
            split_ops: 100,
            receive_ns: 0.01e6,
            queue_ns: 0.1e6,
            local_ns: 1.0e6,
            replication_ns: 0.5e6,
            reply_queue_ns: Some(0.05e6),
            cluster_network_ns: Some(0.35e6),
            replica_ns: Some(0.1e6),
            osd_ns: 1.7e6,
            ..OpEvidence::default()
        };
        let r = split_osd(&OsdInputs {
            op: "write",
            client_mean_ns: 2.5e6,
            counters: None,
            rtt_ns: Some(0.05e6),
            rtt_method: Some("ICMP echo"),
            op_bytes: 4096.0,
            bandwidth: None,
            pool_size: 3,
            erasure: false,
            replica_ns: None,
            evidence: Some(&ev),
            back_rtt_ns: Some(0.05e6),
        });
        assert!((get(&r, Part::ClusterNetwork).unwrap() - 0.05).abs() < 1e-9);
        assert!((get(&r, Part::Messengers).unwrap() - 0.3).abs() < 1e-9);
        // By hand: 2.5 − public 0.06 (0.05 + receive 0.01) − queue 0.15 − local 1.0 − cable
        // 0.05 − messengers 0.3 − replica 0.1.
        un(&r, 0.84);
        assert!(r.notes.iter().any(|n| n.contains("OSD messengers")));
        assert!(!r
            .notes
            .iter()
            .any(|n| n.contains("commit callback waiting")));

        // A whole pool: the slowest replica's echo per primary (osd.2's
        // 0.3 ms for the primaries it replicates for; 0.2 ms for osd.2's
        // own, whose replicas are osd.0 and osd.1).
        let mut p = pool_result([6.39; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        p.network = Some(crate::result::NetworkReport {
            back_rtt: back_echoes([100.0, 200.0, 300.0]),
            ..back_heartbeats(None)
        });
        attribute(&mut p);
        let row = |o: usize| p.osds[o].client[0].attribution.clone().unwrap();
        assert!((get(&row(0), Part::ClusterNetwork).unwrap() - 0.3).abs() < 1e-9);
        assert!((get(&row(2), Part::ClusterNetwork).unwrap() - 0.2).abs() < 1e-9);
        assert!((get(&row(2), Part::Messengers).unwrap() - 4.69).abs() < 1e-9);
        let f = &p.findings[0];
        assert!(
            f.contains("waited 4.89 ms on the cluster network")
                && f.contains("not the cable")
                && f.contains(
                    "a wait in the OSDs' messengers that the figures do not explain (the OSDs' \
                     CPU was not measured"
                ),
            "{f}"
        );
        // Put down to the OSDs' CPU only where it was at its limit.
        let cpu = |bound: bool| crate::result::OsdCpu {
            cores_busy: Some(0.5),
            cpu_bound: bound,
            ..Default::default()
        };
        for o in &mut p.osds {
            o.cpu = Some(cpu(false));
        }
        let f = replication_findings(&p).join(" ");
        assert!(f.contains("no OSD's CPU was at its limit"), "{f}");
        p.osds[1].cpu = Some(cpu(true));
        let f = replication_findings(&p).join(" ");
        assert!(
            f.contains(
                "the OSDs' messenger threads waiting for a core: osd.1 used what it may use"
            ),
            "{f}"
        );
        for o in &mut p.osds {
            o.cpu = None;
        }
        // A slow cable: the echoes carry the wait.
        p.network = Some(crate::result::NetworkReport {
            back_rtt: back_echoes([4000.0; 3]),
            ..back_heartbeats(None)
        });
        attribute(&mut p);
        let f = &p.findings[0];
        assert!(
            f.contains("waited 4.89 ms on the cluster network")
                && f.contains("the back network: this host's fastest echo")
                && f.contains("took 4.00 ms"),
            "{f}"
        );
    }

    /// Slow device flushes on several OSDs of one kind of drive are one
    /// line naming them together, so that 30 OSDs do not flood the report.
    #[test]
    fn slow_flushes_of_one_kind_of_drive_are_one_finding() {
        let mut r = pool_result([2.0; 3], [1.5; 3], [3.5; 3], [3.0, 3.1, 3.2]);
        let kinds = ["class consumer", "class plp", "class consumer"];
        for (i, o) in r.osds.iter_mut().enumerate() {
            o.counters.as_mut().unwrap().kv_commit_lat = avg([3.0, 0.1, 3.2][i]);
            o.device = Some(crate::device::DeviceInfo {
                class: Some(kinds[i].trim_start_matches("class ").into()),
                ..Default::default()
            });
        }
        attribute(&mut r);
        let per_osd: Vec<&String> = r
            .findings
            .iter()
            .filter(|f| f.contains("each WAL commit takes"))
            .collect();
        assert_eq!(per_osd.len(), 1, "{:?}", r.findings);
        assert!(
            per_osd[0].starts_with(
                "osd.0, osd.2 (class consumer, objectstore unknown): each WAL commit takes \
                 3.00–3.20 ms (RocksDB, per kv sync round, mean per OSD; the pool's fastest: \
                 0.10 ms)"
            ),
            "{}",
            per_osd[0]
        );
        assert!(
            r.findings
                .iter()
                .any(|f| f.ends_with("slow flushes on osd.0, osd.2")),
            "{:?}",
            r.findings
        );
        assert_eq!(
            osd_list(&[29, 0, 1, 2, 3, 31, 5, 6, 7, 8, 9]),
            "osd.0–osd.3, osd.5–osd.9, osd.29, osd.31"
        );
        assert_eq!(osd_list(&[4, 2]), "osd.2, osd.4");
    }

    /// A replica wait the heartbeats do not carry (a size-3 pool on
    /// saturated cores: 4.89 ms waited, heartbeats 1.30 ms) names no cable;
    /// without heartbeats no cause is named at all.
    #[test]
    fn the_cable_is_named_only_when_the_heartbeats_carry_the_wait() {
        // 1.5 ms repops, a 6.39 ms wait after prepare: 4.89 ms on the network.
        let mut r = pool_result([6.39; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        r.network = Some(back_heartbeats(Some(1.30)));
        attribute(&mut r);
        assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
        let f = &r.findings[0];
        assert!(f.contains("waited 4.89 ms on the cluster network"), "{f}");
        assert!(
            f.contains("not explained by the cable")
                && f.contains("heartbeats took only 1.30 ms")
                && f.contains("CPU"),
            "{f}"
        );
        assert!(!f.contains("the back network or"), "{f}");
        r.network = Some(back_heartbeats(None));
        attribute(&mut r);
        let f = &r.findings[0];
        assert!(
            f.contains("no cause named") && !f.contains("the back network or"),
            "{f}"
        );
        assert_eq!(
            CableEvidence::judge(4.89, Some(2.5)),
            CableEvidence::Carries(2.5)
        );
        assert_eq!(
            CableEvidence::judge(4.89, Some(1.3)),
            CableEvidence::FallsShort(1.3)
        );
    }

    #[test]
    fn replication_verdicts_name_the_replica_or_the_cable() {
        let job = |r: &BenchResult, p: Part| {
            get(r.jobs[0].attribution.as_ref().unwrap(), p).unwrap_or(f64::NAN)
        };
        // Equal replicas, a 0.3 ms round trip: no verdict.
        let mut r = pool_result([1.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        attribute(&mut r);
        assert!((job(&r, Part::ClusterNetwork) - 0.3).abs() < 1e-9);
        assert!((job(&r, Part::Replica) - 0.3).abs() < 1e-9);
        // By hand: the client's 3.3 ms less the primaries' op_w 2.4 (queue
        // 0.1 + process 0.5 + 1.8); no round trip was probed.
        un(r.jobs[0].attribution.as_ref().unwrap(), 0.9);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        // 1 ms one way on the back network: 2 ms more wait, same replicas;
        // the heartbeats on it took as long: the cable.
        let mut r = pool_result([3.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        r.network = Some(back_heartbeats(Some(2.4)));
        attribute(&mut r);
        assert!((job(&r, Part::ClusterNetwork) - 2.3).abs() < 1e-9);
        assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
        assert!(
            r.findings[0].contains("waited 2.30 ms on the cluster network")
                && r.findings[0].contains("not the replicas' drives")
                && r.findings[0].contains("the back network or the hosts' network stack")
                && r.findings[0].contains("heartbeats took 2.40 ms"),
            "{:?}",
            r.findings
        );
        // osd.2's drive flushes 3 ms slower: its repops take 4.5 ms; osd.0
        // and osd.1 (its primaries for 2/3 of the writes) wait for it; as a
        // primary it waits for its own commit.
        let slow = ([4.8, 4.8, 4.2], [1.5, 1.5, 4.5], [1.2, 1.2, 4.2]);
        let mut r = pool_result(slow.0, slow.1, slow.2, [0.5, 0.5, 3.5]);
        attribute(&mut r);
        // (3.3 + 3.3 + 0) / 3 and (0.3 + 0.3 + 0) / 3.
        assert!((job(&r, Part::Replica) - 2.2).abs() < 1e-9);
        assert!((job(&r, Part::ClusterNetwork) - 0.2).abs() < 1e-9);
        let f = r
            .findings
            .iter()
            .find(|f| f.contains("for its replicas"))
            .unwrap();
        assert!(
            f.contains("the replicas' drives, not the cable")
                && f.contains("slowest replica osd.2")
                && f.contains("its device flush 3.50 ms"),
            "{f}"
        );
        // 4 MiB writes: the replica share holds the repop's payload on a
        // back network whose bandwidth no probe measured: the cable is not
        // ruled out.
        r.jobs[0].bytes = r.jobs[0].ops * (4 << 20);
        let f = replication_findings(&r).join(" ");
        assert!(
            !f.contains("not the cable") && f.contains("the cable is not ruled out"),
            "{f}"
        );
        // An RBD image in 'rep' with its data in the erasure-coded 'ec': the
        // verdict names the data pool, whose layout it is about (it named
        // the replicated metadata pool as erasure-coded).
        let mut r = pool_result(slow.0, slow.1, slow.2, [0.5; 3]);
        r.workload = serde_json::from_value(serde_json::json!({
            "kind": "rbd", "pool": "rep", "data_pool": "ec", "image": "i",
            "image_created": true, "image_size": 1u64 << 30, "object_size": 4u64 << 20,
            "features": 1, "test_area": 1u64 << 30, "rw": "randwrite", "rwmix_read": 50,
            "bs": 4096, "iodepth": 1, "numjobs": 1, "duration_s": 5.0, "io_total": null,
            "ramp_s": 0.0, "fsync_every": null, "rbd_cache": false, "preconditioned": false,
            "precondition": null
        }))
        .unwrap();
        r.pool = Some(crate::result::test_pool("ec", 3, Some((2, 1))));
        attribute(&mut r);
        let named: Vec<&String> = r.findings.iter().filter(|f| f.contains("pool '")).collect();
        assert!(
            named
                .iter()
                .any(|f| f.contains("pool 'ec': no replication verdict")),
            "{named:?}"
        );
        assert!(!named.iter().any(|f| f.contains("pool 'rep'")), "{named:?}");
        // No replica counters (a replica's subop_w unread): no verdict, and why.
        let mut r = pool_result(slow.0, slow.1, slow.2, [0.5; 3]);
        for o in &mut r.osds {
            o.counters.as_mut().unwrap().subop_w_latency = None;
        }
        attribute(&mut r);
        assert!((job(&r, Part::Replication) - 2.4).abs() < 1e-9);
        assert!(
            r.findings
                .iter()
                .any(|f| f.contains("no replication verdict")
                    && f.contains("subop_w")
                    && f.contains("osd 'allow *'")),
            "{:?}",
            r.findings
        );
        // No counters at all: no verdict either, and the cap is named.
        let mut r = pool_result(slow.0, slow.1, slow.2, [0.5; 3]);
        for o in &mut r.osds {
            o.counters = None;
        }
        r.network = Some(crate::result::NetworkReport {
            client_rtt: Vec::new(),
            back_rtt: Vec::new(),
            heartbeat: Vec::new(),
        });
        attribute(&mut r);
        assert!(
            r.findings
                .iter()
                .any(|f| f.contains("no replication verdict: the OSDs' counters were not read")),
            "{:?}",
            r.findings
        );
    }

    #[test]
    fn combine_weights_by_ops_and_closes_to_the_job_mean() {
        let c = counters();
        let mk = |mean, rtt| {
            split_osd(&OsdInputs {
                op: "write",
                client_mean_ns: mean,
                counters: Some(&c),
                rtt_ns: Some(rtt),
                rtt_method: None,
                op_bytes: 4096.0,
                bandwidth: None,
                pool_size: 3,
                erasure: false,
                replica_ns: None,
                evidence: None,
                back_rtt_ns: None,
            })
        };
        let (a, b) = (mk(6e6, 0.2e6), mk(8e6, 0.6e6));
        let job = combine(&[(300, &a), (100, &b)], 6.5e6);
        assert!((get(&job, Part::PublicNetwork).unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(get(&job, Part::OsdQueue), Some(1.0));
        // By hand: 6.5 − public 0.3 − queue 1.0 − local 2.5 − replication 1.5.
        un(&job, 1.2);
        assert_eq!(job.notes.len(), a.notes.len());
        let empty = combine(&[], 1e6);
        assert_eq!(get(&empty, Part::Unattributed), Some(1.0));
    }

    /// A client that kept too few ops in flight is a finding, once per job,
    /// with or without telemetry.
    #[test]
    fn a_client_short_of_cpu_is_a_finding() {
        let mut short = pool_result([1.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        let load = crate::result::ClientLoad {
            asked_in_flight: 16,
            mean_in_flight: 11.8,
            refill_wait_ns: 1_300_000.0,
        };
        short.jobs[0].client = Some(load);
        short.jobs.push(short.jobs[0].clone());
        attribute(&mut short);
        assert_eq!(short.findings.len(), 1, "{:?}", short.findings);
        assert!(
            short.findings[0].contains("kept 11.8 of the 16 ops")
                && short.findings[0].contains("waited 1.30 ms"),
            "{:?}",
            short.findings
        );
        // Without telemetry (no placement, no counters) the finding stays.
        let mut bare = short.clone();
        bare.placement = None;
        bare.osds.clear();
        attribute(&mut bare);
        assert_eq!(bare.findings, short.findings);
        short.jobs[0].client = Some(crate::result::ClientLoad {
            mean_in_flight: 15.0,
            ..load
        });
        short.jobs.truncate(1);
        attribute(&mut short);
        assert!(
            short.findings.is_empty(),
            "15 of 16 is not short: {:?}",
            short.findings
        );
    }
}
