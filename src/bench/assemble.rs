//! Assembling the result document: each op kind's job report, the rate
//! block of an open loop, the tool's and the cluster's identity, and the
//! definitions printed next to the latencies.
#![forbid(unsafe_code)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::ceph::{CephError, Rados};
use crate::engine::{JobOutcome, OpKind};
use crate::names::hostname;
use crate::result::{ClusterInfo, JobReport, ToolInfo};

/// The definition printed next to every latency figure.
pub const LATENCY_DEFINITION: &str =
    "completion latency: op submitted to librados/librbd -> its completion callback ran";

/// The definition of open-loop (`--rate`) latency.
pub const INTENDED_LATENCY_DEFINITION: &str =
    "latency from intended start (open loop, corrected for coordinated omission): \
     op's scheduled start -> its completion callback ran; service time (from submit) beside it";

/// `latency_kind` of a run: `completion`, or `intended_start` in an open loop.
pub fn latency_kind(open_loop: bool) -> &'static str {
    if open_loop {
        "intended_start"
    } else {
        "completion"
    }
}

/// `latency_definition` of a run.
pub fn latency_definition(open_loop: bool) -> &'static str {
    if open_loop {
        INTENDED_LATENCY_DEFINITION
    } else {
        LATENCY_DEFINITION
    }
}

/// Ops slower than this are counted as slow.
pub const SLOW_OP: Duration = Duration::from_secs(1);

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Identity of the cluster for the result document.
pub fn cluster_info(rados: &Rados) -> Result<ClusterInfo, CephError> {
    let ceph_version = rados
        .mon_command(r#"{"prefix":"version","format":"json"}"#)
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.out).ok())
        .and_then(|v| {
            v.get("version")
                .and_then(|s| s.as_str())
                .map(str::to_string)
        });
    Ok(ClusterInfo {
        fsid: rados.fsid()?,
        ceph_version,
        librados_version: crate::ceph::librados_version(),
        client_host: hostname(),
        entity: rados.entity().to_string(),
        client_kernel: host_file("/proc/sys/kernel/osrelease"),
        client_cpu_governor: host_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
    })
}

/// A one-line file of this host's, trimmed; `None` where absent or empty.
fn host_file(path: &str) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    Some(s.trim().to_string()).filter(|s| !s.is_empty())
}

/// The report of one op kind of a job.
pub fn job_report(
    name: &str,
    kind: OpKind,
    out: &JobOutcome,
    verify: bool,
    timeline: Vec<crate::progress::Sample>,
) -> JobReport {
    let k = out.kind(kind);
    let elapsed = out.elapsed.as_secs_f64();
    let rate = |x: u64| {
        if elapsed > 0.0 {
            x as f64 / elapsed
        } else {
            0.0
        }
    };
    JobReport {
        per_second: crate::result::PerSecond::of(&timeline),
        end_flush: None,
        name: name.into(),
        op: kind.as_str().into(),
        ops: k.ops,
        errors: out.errors,
        bytes: k.bytes,
        elapsed_s: elapsed,
        iops: rate(k.ops),
        bytes_per_sec: rate(k.bytes),
        latency_ns: k.latency.summary(),
        stop_reason: out.stop.as_str().into(),
        verify_mismatches: verify.then_some(out.mismatches),
        short_reads: if kind == OpKind::Read {
            out.short_reads
        } else {
            0
        },
        first_error: out.first_error.as_ref().map(|e| e.to_string()).or_else(|| {
            // Short reads and mismatches belong to the read job of a mix.
            (kind == OpKind::Read)
                .then(|| out.first_data_error.clone())
                .flatten()
        }),
        errors_by_errno: out
            .errors_by_errno
            .iter()
            .map(|(e, n)| (e.to_string(), *n))
            .collect(),
        longest_gap_s: out.longest_gap.as_secs_f64(),
        slow_ops: out.slow_ops,
        slow_op_s: SLOW_OP.as_secs_f64(),
        timeline,
        histogram: (k.ops > 0).then(|| crate::stats::encode_histogram(k.latency.histogram())),
        attribution: None,
        service_latency_ns: k.service.as_ref().map(|s| s.summary()),
        rate: out.rate.as_ref().map(|r| rate_report(r, rate(k.ops))),
        client: client_load(out),
        changes: None,
        projections: None,
    }
}

/// The `client` block of a closed-loop job: what it asked in flight, what
/// the cluster had on average and how long a completed op's slot waited.
pub fn client_load(out: &JobOutcome) -> Option<crate::result::ClientLoad> {
    let elapsed_ns = out.elapsed.as_nanos();
    if out.slots == 0 || elapsed_ns == 0 {
        return None;
    }
    let busy_ns: u128 = out.kinds.iter().map(|k| k.latency.sum_ns()).sum();
    Some(crate::result::ClientLoad {
        asked_in_flight: out.slots as u64,
        mean_in_flight: busy_ns as f64 / elapsed_ns as f64,
        refill_wait_ns: if out.refills > 0 {
            out.refill_wait_ns as f64 / out.refills as f64
        } else {
            0.0
        },
    })
}

/// The `rate` block of an open-loop job.
pub fn rate_report(r: &crate::engine::RateOutcome, achieved: f64) -> crate::result::RateReport {
    let e = r.schedule_error.summary();
    let kept_up = achieved >= 0.98 * r.asked && r.late_ops * 100 <= r.scheduled.max(1);
    crate::result::RateReport {
        asked: r.asked,
        achieved,
        arrival: r.arrival.as_str().into(),
        late_ops: r.late_ops,
        scheduled_ops: r.scheduled,
        max_backlog: r.max_backlog,
        final_backlog: r.final_backlog,
        schedule_error_ns: crate::result::ScheduleError {
            p50: e.p50,
            p99: e.p99,
            max: e.max,
        },
        kept_up,
    }
}

/// This tool's identity for the result document.
pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "cephbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}
