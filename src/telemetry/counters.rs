//! OSD perf counters (`ceph tell osd.N perf dump`): the latency counters
//! that explain where a client's op spent its time, and their deltas over a
//! run window. Pure parsing and arithmetic; [`super::cluster`] fetches them.
//!
//! Where each timer starts and stops (pacific, `src/osd/`):
//! * `op_w_latency`: client message received → reply sent (on commit: local
//!   commit and every replica's ack). `op_w_process_latency`: dequeued with
//!   the PG lock → the same stop; their difference is queueing.
//! * `subop_w_latency`: measured on a *replica*, MOSDRepOp received → its
//!   commit reply.
//! * bluestore `commit_lat`: transaction queued → kv committed, for client
//!   writes and replica writes alike.
//! * bluestore `kv_flush_lat`, `kv_commit_lat`, `kv_sync_lat`: one sample per
//!   round of `BlueStore::_kv_sync_thread`, which commits every transaction
//!   queued since the last round as one batch. `kv_flush_lat` times
//!   `bdev->flush()` — `KernelDevice::flush`, an `fdatasync` of the block
//!   device that makes the round's data writes durable (skipped when no
//!   data was written since the last flush: small writes on hdd-class
//!   devices are deferred, their data rides in the RocksDB WAL) — plus
//!   swapping the deferred queues; `kv_commit_lat` the RocksDB `submit_transaction_sync` that
//!   follows (its WAL write and sync, on the DB/WAL device); `kv_sync_lat`
//!   the whole round (flush + commit). On a drive without power-loss
//!   protection each of those syncs waits for the drive's cache to reach
//!   the media; on a PLP drive it returns in microseconds.
//! * bluestore `state_kv_queued_lat`, `state_kv_commiting_lat`: per
//!   transaction (`BlueStore::_txc_state_proc` logs the time spent in each
//!   state): queued for the kv sync thread until a round takes it, then in
//!   that round until committed (`_txc_committed_kv`, where the commit
//!   callback runs). Their sum is the time a transaction's commit waited on
//!   the device's durability: `commit_lat` is prepare + data write (aio) +
//!   these two.
//! * `op_before_queue_op_lat`, `op_before_dequeue_op_lat`: every op the OSD
//!   queues (client ops, repops and their replies alike), from its receive
//!   stamp (msgr2 stamps a message's frame preamble, before its payload is
//!   read) to `OSD::enqueue_op`, and to `OSD::dequeue_op`. Their difference
//!   is the mean wait in the op queue over all those ops.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shape::ShapeError;
use crate::result::counters::{AvgDelta, MgrOsdPerf, OsdCounters};

/// The averaged (`avgcount` / `sum`) counters cephbench reads, as
/// (section, name).
pub const LATENCY_COUNTERS: [(&str, &str); 15] = [
    ("osd", "op_w_latency"),
    ("osd", "op_w_process_latency"),
    ("osd", "op_w_prepare_latency"),
    ("osd", "op_r_latency"),
    ("osd", "op_r_process_latency"),
    ("osd", "subop_w_latency"),
    ("bluestore", "commit_lat"),
    ("bluestore", "kv_flush_lat"),
    ("bluestore", "kv_commit_lat"),
    ("bluestore", "kv_sync_lat"),
    ("bluestore", "state_kv_queued_lat"),
    ("bluestore", "state_kv_commiting_lat"),
    ("bluestore", "submit_lat"),
    ("osd", "op_before_queue_op_lat"),
    ("osd", "op_before_dequeue_op_lat"),
];

/// Counters of [`LATENCY_COUNTERS`] that later releases renamed, as
/// (section, name here, later name): quincy renamed bluestore's `commit_lat`
/// to `txc_commit_lat` (same timer: queue_transactions → kv committed), which
/// reef and later report; likewise `submit_lat` became `txc_submit_lat`.
/// Either name is read; results keep the first.
pub const RENAMED_COUNTERS: [(&str, &str, &str); 2] = [
    ("bluestore", "commit_lat", "txc_commit_lat"),
    ("bluestore", "submit_lat", "txc_submit_lat"),
];

/// The `perf dump` sections the counters above live in, `osd` first.
pub const SECTIONS: [&str; 2] = ["osd", "bluestore"];

/// The plain counters cephbench reads.
pub const COUNT_COUNTERS: [(&str, &str); 3] =
    [("osd", "op_w"), ("osd", "op_r"), ("osd", "subop_w")];

/// One averaged counter: how many samples, and their sum in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Avg {
    /// Samples.
    pub avgcount: u64,
    /// Sum of the samples, seconds.
    pub sum: f64,
}

/// The counters of one OSD at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// The averaged counters, in [`LATENCY_COUNTERS`] order (`None`: absent
    /// in this release).
    pub latency: [Option<Avg>; 15],
    /// The plain counters, in [`COUNT_COUNTERS`] order.
    pub counts: [Option<u64>; 3],
}

/// Parses `perf dump` output. Counters a release does not have are `None`;
/// a document without an `osd` section is an error.
pub fn parse_perf_dump(doc: &Value) -> Result<Snapshot, ShapeError> {
    if !doc.get("osd").is_some_and(Value::is_object) {
        return Err(ShapeError {
            what: "perf dump",
            why: "no 'osd' section (is this an OSD's perf dump?)".into(),
        });
    }
    let mut s = Snapshot::default();
    for (i, (sec, name)) in LATENCY_COUNTERS.iter().enumerate() {
        let section = doc.get(sec);
        let counter = section.and_then(|v| v.get(name)).or_else(|| {
            let (_, _, later) = RENAMED_COUNTERS
                .iter()
                .find(|(s, n, _)| s == sec && n == name)?;
            section?.get(later)
        });
        s.latency[i] = counter.and_then(|c| {
            Some(Avg {
                avgcount: c.get("avgcount")?.as_u64()?,
                sum: c
                    .get("sum")?
                    .as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)?,
            })
        });
    }
    for (i, (sec, name)) in COUNT_COUNTERS.iter().enumerate() {
        s.counts[i] = doc
            .get(sec)
            .and_then(|v| v.get(name))
            .and_then(Value::as_u64);
    }
    Ok(s)
}

fn avg_delta(a: Option<Avg>, b: Option<Avg>) -> Result<Option<AvgDelta>, ()> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    if b.avgcount < a.avgcount || b.sum < a.sum {
        return Err(());
    }
    let count = b.avgcount - a.avgcount;
    let mean_ns = (count > 0).then(|| (b.sum - a.sum) / count as f64 * 1e9);
    Ok(Some(AvgDelta { count, mean_ns }))
}

/// The counters of `osd` between two snapshots.
pub fn delta(osd: i32, before: &Snapshot, after: &Snapshot) -> OsdCounters {
    let mut lat = [None; 15];
    let mut reset = false;
    for (i, slot) in lat.iter_mut().enumerate() {
        match avg_delta(before.latency[i], after.latency[i]) {
            Ok(d) => *slot = d,
            Err(()) => reset = true,
        }
    }
    let mut counts = [None; 3];
    for (i, slot) in counts.iter_mut().enumerate() {
        if let (Some(a), Some(b)) = (before.counts[i], after.counts[i]) {
            if b < a {
                reset = true;
            } else {
                *slot = Some(b - a);
            }
        }
    }
    if reset {
        return OsdCounters {
            osd,
            reset,
            op_w: None,
            op_r: None,
            subop_w: None,
            op_w_latency: None,
            op_w_process_latency: None,
            op_w_prepare_latency: None,
            op_r_latency: None,
            op_r_process_latency: None,
            subop_w_latency: None,
            commit_lat: None,
            kv_flush_lat: None,
            kv_commit_lat: None,
            kv_sync_lat: None,
            state_kv_queued_lat: None,
            state_kv_commiting_lat: None,
            submit_lat: None,
            op_before_queue_op_lat: None,
            op_before_dequeue_op_lat: None,
        };
    }
    OsdCounters {
        osd,
        reset,
        op_w: counts[0],
        op_r: counts[1],
        subop_w: counts[2],
        op_w_latency: lat[0],
        op_w_process_latency: lat[1],
        op_w_prepare_latency: lat[2],
        op_r_latency: lat[3],
        op_r_process_latency: lat[4],
        subop_w_latency: lat[5],
        commit_lat: lat[6],
        kv_flush_lat: lat[7],
        kv_commit_lat: lat[8],
        kv_sync_lat: lat[9],
        state_kv_queued_lat: lat[10],
        state_kv_commiting_lat: lat[11],
        submit_lat: lat[12],
        op_before_queue_op_lat: lat[13],
        op_before_dequeue_op_lat: lat[14],
    }
}

/// Parses `osd perf -f json` (pacific and later nest the rows under
/// `osdstats`; older releases had `osd_perf_infos` at the top).
pub fn parse_osd_perf(doc: &Value) -> Result<Vec<MgrOsdPerf>, ShapeError> {
    let bad = |why: &str| ShapeError {
        what: "osd perf",
        why: why.into(),
    };
    let infos = doc
        .get("osdstats")
        .unwrap_or(doc)
        .get("osd_perf_infos")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no 'osd_perf_infos'"))?;
    infos
        .iter()
        .map(|i| {
            let id = i
                .get("id")
                .and_then(Value::as_i64)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| bad("a row without an 'id'"))?;
            let st = i
                .get("perf_stats")
                .ok_or_else(|| bad("a row without 'perf_stats'"))?;
            let u = |k: &str| st.get(k).and_then(Value::as_u64);
            Ok(MgrOsdPerf {
                osd: id,
                commit_latency_ms: u("commit_latency_ms")
                    .ok_or_else(|| bad("no 'commit_latency_ms'"))?,
                apply_latency_ms: u("apply_latency_ms")
                    .ok_or_else(|| bad("no 'apply_latency_ms'"))?,
                commit_latency_ns: u("commit_latency_ns"),
                apply_latency_ns: u("apply_latency_ns"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_lives_in_a_dumped_section() {
        let named = LATENCY_COUNTERS
            .iter()
            .chain(COUNT_COUNTERS.iter())
            .map(|(sec, _)| sec)
            .chain(RENAMED_COUNTERS.iter().map(|(sec, _, _)| sec));
        for sec in named {
            assert!(SECTIONS.contains(sec), "section {sec} is not asked for");
        }
        assert_eq!(SECTIONS[0], "osd", "the required section comes first");
    }
    use serde_json::json;

    fn dump(w: u64, wsum: f64, r: u64) -> Value {
        json!({
            "osd": {
                "op_w": w, "op_r": r, "subop_w": 0,
                "op_w_latency": {"avgcount": w, "sum": wsum, "avgtime": 0.0},
                "op_w_process_latency": {"avgcount": w, "sum": wsum / 2.0, "avgtime": 0.0},
                "op_r_latency": {"avgcount": r, "sum": 0.5, "avgtime": 0.0},
                "subop_w_latency": {"avgcount": 0, "sum": 0.0, "avgtime": 0.0}
            },
            "bluestore": {"commit_lat": {"avgcount": w, "sum": wsum / 4.0, "avgtime": 0.0}}
        })
    }

    #[test]
    fn deltas_are_means_over_the_window() {
        let a = parse_perf_dump(&dump(100, 0.1, 5)).unwrap();
        let b = parse_perf_dump(&dump(1100, 2.1, 5)).unwrap();
        let d = delta(0, &a, &b);
        assert!(!d.reset);
        assert_eq!(d.op_w, Some(1000));
        let w = d.op_w_latency.unwrap();
        assert_eq!(w.count, 1000);
        assert!((w.mean_ns.unwrap() - 2.0e6).abs() < 1.0, "{w:?}"); // 2 s / 1000 = 2 ms
        assert!((d.op_w_process_latency.unwrap().mean_ns.unwrap() - 1.0e6).abs() < 1.0);
        assert!((d.commit_lat.unwrap().mean_ns.unwrap() - 0.5e6).abs() < 1.0);
        assert_eq!(
            d.op_r_latency.unwrap().mean_ns,
            None,
            "no reads in the window"
        );
        assert_eq!(d.op_w_prepare_latency, None, "absent counter stays absent");
    }

    #[test]
    fn osd_perf_rows_in_both_shapes() {
        let pacific = json!({"pg_ready":true,"osdstats":{"osd_perf_infos":[
            {"id":1,"perf_stats":{"commit_latency_ms":3,"apply_latency_ms":3,
              "commit_latency_ns":3400000,"apply_latency_ns":3400000}},
            {"id":0,"perf_stats":{"commit_latency_ms":0,"apply_latency_ms":0,
              "commit_latency_ns":0,"apply_latency_ns":0}}]}});
        let rows = parse_osd_perf(&pacific).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].osd, 1);
        assert_eq!(rows[0].commit_latency_ms, 3);
        assert_eq!(rows[0].commit_latency_ns, Some(3_400_000));
        let old = json!({"osd_perf_infos":[{"id":2,"perf_stats":{"commit_latency_ms":7,"apply_latency_ms":9}}]});
        let rows = parse_osd_perf(&old).unwrap();
        assert_eq!(
            (
                rows[0].osd,
                rows[0].apply_latency_ms,
                rows[0].apply_latency_ns
            ),
            (2, 9, None)
        );
        assert!(parse_osd_perf(&json!({})).is_err());
        assert!(parse_osd_perf(&json!({"osd_perf_infos":[{"id":"x"}]})).is_err());
    }

    #[test]
    fn a_counter_going_backwards_is_a_reset() {
        let a = parse_perf_dump(&dump(1100, 2.1, 5)).unwrap();
        let b = parse_perf_dump(&dump(10, 0.01, 0)).unwrap();
        let d = delta(3, &a, &b);
        assert!(d.reset);
        assert_eq!(d.op_w, None);
        assert_eq!(d.op_w_latency, None);
    }

    #[test]
    fn bad_documents_are_errors_or_gaps_never_panics() {
        assert!(parse_perf_dump(&json!({})).is_err());
        assert!(parse_perf_dump(&json!([1, 2])).is_err());
        let s = parse_perf_dump(
            &json!({"osd": {"op_w_latency": {"avgcount": "x", "sum": 1.0}, "op_w": -1}}),
        )
        .unwrap();
        assert_eq!(s.latency[0], None);
        assert_eq!(s.counts[0], None);
        let s =
            parse_perf_dump(&json!({"osd": {"op_w_latency": {"avgcount": 1, "sum": f64::MAX}}}))
                .unwrap();
        assert!(s.latency[0].is_some());
    }

    #[test]
    fn reef_renamed_bluestore_commit_lat() {
        let reef = json!({"osd": {}, "bluestore": {"txc_commit_lat": {"avgcount": 7, "sum": 0.5}}});
        let s = parse_perf_dump(&reef).unwrap();
        assert_eq!(
            s.latency[6],
            Some(Avg {
                avgcount: 7,
                sum: 0.5
            })
        );
        let both = json!({"osd": {}, "bluestore": {
            "commit_lat": {"avgcount": 1, "sum": 0.1},
            "txc_commit_lat": {"avgcount": 7, "sum": 0.5}}});
        assert_eq!(
            parse_perf_dump(&both).unwrap().latency[6],
            Some(Avg {
                avgcount: 1,
                sum: 0.1
            })
        );
        let neither =
            json!({"osd": {}, "bluestore": {"kv_commit_lat": {"avgcount": 7, "sum": 0.5}}});
        assert_eq!(parse_perf_dump(&neither).unwrap().latency[6], None);
    }
}
