//! `cephbench osd-bench`: the operator's quick "which drive is the slow one".
//!
//! Each chosen OSD in turn runs its own built-in benchmark (`ceph tell
//! osd.N bench COUNT SIZE`): the OSD queues COUNT/SIZE writes of SIZE bytes
//! back to back straight into its objectstore (`queue_transaction` on its
//! meta collection, then waits for all of them to commit) — no client, no
//! messenger, no PG, no replicas, no op scheduler. So the figure is the
//! drive plus BlueStore at a deep queue, and nothing of the cable or the
//! copies. One OSD at a time, so they do not compete for a shared host.
//!
//! A deep queue hides a slow flush (BlueStore commits many writes per
//! device flush), so each OSD is then asked `--probes` times for a bench of
//! one single write: its `elapsed_sec` is that write queued → committed
//! at queue depth 1, timed by the OSD itself (the `tell` round trip is not
//! in it) — the sync-write latency a VM's fsync waits for on that drive,
//! before the network and the replicas add theirs.
//!
//! Around each bench cephbench reads the OSD's BlueStore timers (`perf
//! dump`): `kv_flush_lat` is the block device's flush (the `fdatasync` of
//! `KernelDevice::flush`) in each kv sync round, `kv_sync_lat` the whole
//! round (flush + RocksDB's synchronous WAL commit), `commit_lat` a
//! transaction's queue → committed. Their means over the bench window are
//! the evidence behind a slow drive: a drive that acknowledges a flush only
//! once the data is on stable media (no power-loss protection) shows
//! milliseconds here, a PLP drive well under 0.1 ms. The window holds
//! whatever else the OSD did meanwhile; on a busy cluster, say so.
//!
//! Pure parts here (parsing the OSD's answer, the verdict); the commands go
//! through [`crate::telemetry::cluster`] (the OSD's own bench: [`osd_bench`]).
#![forbid(unsafe_code)]

pub mod report;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ceph::Rados;
use crate::device::DeviceInfo;
use crate::explain::attribution::SLOW_FLUSH_NS;
use crate::result::counters::AvgDelta;
use crate::telemetry::cluster::{self, ProbeError};
use crate::telemetry::counters;
use crate::telemetry::parse::{json, ShapeError};

/// Which OSDs to bench.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Every OSD that is up.
    AllUp,
    /// The OSDs holding a PG of this pool (acting sets).
    Pool(String),
    /// These OSDs.
    Osds(Vec<i32>),
}

/// A validated `osd-bench`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsdBenchConfig {
    /// Which OSDs.
    pub target: Target,
    /// Bytes per write.
    pub block_size: u64,
    /// Writes per OSD in the deep-queue bench.
    pub writes: u64,
    /// Single-write benches per OSD.
    pub probes: u64,
}

/// What an OSD's `bench` answers (its `osd_bench_results`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BenchFigures {
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes per write.
    pub blocksize: u64,
    /// Seconds from the first write queued to the last committed.
    pub elapsed_sec: f64,
    /// bytes_written / elapsed_sec.
    pub bytes_per_sec: f64,
    /// Writes per second.
    pub iops: f64,
}

/// Parses an OSD's `bench` answer. Older releases leave out `iops` and
/// `elapsed_sec`; they are then derived from what is there.
pub fn parse_bench(doc: &Value) -> Result<BenchFigures, ShapeError> {
    let shape = |why: &str| ShapeError {
        what: "osd bench",
        why: why.to_string(),
    };
    let u = |k: &str| doc.get(k).and_then(Value::as_u64);
    let f = |k: &str| doc.get(k).and_then(Value::as_f64);
    let bytes_written = u("bytes_written").ok_or_else(|| shape("no bytes_written"))?;
    let blocksize = u("blocksize")
        .filter(|b| *b > 0)
        .ok_or_else(|| shape("no blocksize"))?;
    let bytes_per_sec = f("bytes_per_sec")
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or_else(|| shape("no bytes_per_sec above 0"))?;
    let elapsed_sec = f("elapsed_sec").unwrap_or(bytes_written as f64 / bytes_per_sec);
    let iops = f("iops").unwrap_or(bytes_per_sec / blocksize as f64);
    Ok(BenchFigures {
        bytes_written,
        blocksize,
        elapsed_sec,
        bytes_per_sec,
        iops,
    })
}

/// Runs an OSD's own write benchmark (`ceph tell osd.N bench BYTES BS`,
/// parsed by [`parse_bench`]): blocks until the OSD answers, bounded by the
/// op timeout.
pub fn osd_bench(
    rados: &Rados,
    osd: i32,
    bytes: u64,
    block_size: u64,
) -> Result<BenchFigures, ProbeError> {
    let q = serde_json::json!({"prefix": "bench", "count": bytes, "size": block_size, "format": "json"});
    let out = rados.osd_command(osd, &q.to_string())?;
    Ok(parse_bench(&json(&out.out, "osd bench")?)?)
}

/// Single-write benches of one OSD: each write queued → committed, alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Qd1Latency {
    /// How many single-write benches answered.
    pub samples: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub p50_ns: f64,
    /// 99th percentile (nearest rank), ns.
    pub p99_ns: f64,
    /// Slowest, ns.
    pub max_ns: f64,
}

impl Qd1Latency {
    /// The figures of these single-write times (seconds); `None` when empty.
    pub fn from_secs(secs: &[f64]) -> Option<Qd1Latency> {
        if secs.is_empty() {
            return None;
        }
        let mut ns: Vec<f64> = secs.iter().map(|s| s * 1e9).collect();
        ns.sort_by(f64::total_cmp);
        let rank = |q: f64| ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1];
        Some(Qd1Latency {
            samples: ns.len() as u64,
            mean_ns: ns.iter().sum::<f64>() / ns.len() as f64,
            p50_ns: rank(0.5),
            p99_ns: rank(0.99),
            max_ns: ns[ns.len() - 1],
        })
    }
}

/// One OSD's bench.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdBenchRow {
    /// The OSD id.
    pub osd: i32,
    /// Its drive, as the OSD reports it (null when `osd metadata` was not readable).
    pub device: Option<DeviceInfo>,
    /// The OSD's answer to the deep-queue bench (null when it failed).
    pub bench: Option<BenchFigures>,
    /// The single-write benches (null when none answered).
    pub qd1: Option<Qd1Latency>,
    /// BlueStore's device flush per kv sync round over the bench (null without BlueStore timers).
    pub kv_flush_lat: Option<AvgDelta>,
    /// BlueStore's kv sync round (flush + WAL commit) over the bench.
    pub kv_sync_lat: Option<AvgDelta>,
    /// BlueStore's transaction queued → committed over the bench.
    pub commit_lat: Option<AvgDelta>,
    /// Why the bench or its counters failed, if they did.
    pub error: Option<String>,
}

/// The whole `osd-bench` document (`--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdBenchResult {
    /// cephbench's version.
    pub version: String,
    /// The pool whose OSDs were benched, if one was given.
    pub pool: Option<String>,
    /// Bytes per write.
    pub block_size: u64,
    /// Writes asked of each OSD in the deep-queue bench.
    pub writes: u64,
    /// Single-write benches asked of each OSD.
    pub probes: u64,
    /// One row per OSD, in the order they ran.
    pub osds: Vec<OsdBenchRow>,
    /// What the figures say, one line each (see [`findings`]).
    pub findings: Vec<String>,
}

impl OsdBenchResult {
    /// How many OSDs' benches failed.
    pub fn failed(&self) -> usize {
        self.osds.iter().filter(|r| r.bench.is_none()).count()
    }
}

/// An OSD whose deep-queue writes ran at under this fraction of the
/// fastest OSD's rate is named as slow.
pub const SLOW_IOPS_FRACTION: f64 = 0.5;

/// An OSD whose median single-write commit is at least this many times the
/// fastest OSD's (and [`SLOW_QD1_MIN_EXTRA_NS`] more) is named as slow.
pub const SLOW_QD1_FACTOR: f64 = 2.0;

/// The least extra median commit time, ns, that names an OSD as slower
/// than the fastest (below it the machine's own noise decides).
pub const SLOW_QD1_MIN_EXTRA_NS: f64 = 0.5e6;

/// What the rows say, one line each:
/// - a median single-write commit of at least [`SLOW_FLUSH_NS`]: sync
///   writes wait on the drive (drives without power-loss protection flush
///   in milliseconds; with it, a BlueStore commit takes well under 1 ms);
/// - a median single-write commit [`SLOW_QD1_FACTOR`] times the fastest
///   OSD's (and [`SLOW_QD1_MIN_EXTRA_NS`] more);
/// - a deep-queue rate under [`SLOW_IOPS_FRACTION`] of the fastest OSD's;
/// - which drives would gain from PLP ([`crate::explain::whatif::plp_line`] over
///   each one's kv sync round), always, as the last line.
pub fn findings(rows: &[OsdBenchRow]) -> Vec<String> {
    let mut out = Vec::new();
    let drive = |r: &OsdBenchRow| {
        r.device
            .as_ref()
            .map(|d| format!(" ({})", d.summary()))
            .unwrap_or_default()
    };
    let fastest = rows
        .iter()
        .filter_map(|r| r.qd1.map(|q| (r.osd, q.p50_ns)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    for r in rows {
        let Some(q) = r.qd1 else { continue };
        let slow_abs = q.p50_ns >= SLOW_FLUSH_NS;
        let slow_rel = fastest.filter(|(o, f)| {
            *o != r.osd && q.p50_ns >= SLOW_QD1_FACTOR * f && q.p50_ns - f >= SLOW_QD1_MIN_EXTRA_NS
        });
        if !slow_abs && slow_rel.is_none() {
            continue;
        }
        let mut line = format!(
            "osd.{}{}: a single write takes {:.2} ms to commit (median of {}, p99 {:.2} ms)",
            r.osd,
            drive(r),
            q.p50_ns / 1e6,
            q.samples,
            q.p99_ns / 1e6
        );
        if let Some((o, f)) = slow_rel {
            line.push_str(&format!(
                ", {:.1}x osd.{o}'s {:.2} ms",
                q.p50_ns / f,
                f / 1e6
            ));
        }
        if slow_abs {
            line.push_str(
                " — sync writes wait on the drive's cache flush, as on drives without power-loss \
                 protection; with it a BlueStore write commits in well under 1 ms",
            );
        }
        out.push(line);
    }
    // Which drives would gain from PLP: each one's kv sync round (its
    // device flush and WAL commit, both cache flushes on a drive without
    // it) against the flush of a PLP drive.
    let rounds: Vec<(i32, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.osd, r.kv_sync_lat?.mean_ns?)))
        .collect();
    let plp = crate::explain::whatif::plp_line(&rounds, "per kv sync round");
    let best = rows
        .iter()
        .filter_map(|r| r.bench.map(|b| (r.osd, b.iops)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((best_osd, best_iops)) = best {
        for r in rows {
            let Some(b) = r.bench else { continue };
            if r.osd != best_osd && b.iops < SLOW_IOPS_FRACTION * best_iops {
                out.push(format!(
                    "osd.{}{}: {:.0} writes/s at a deep queue, {:.2}x the fastest OSD's (osd.{best_osd}, {:.0}/s)",
                    r.osd,
                    drive(r),
                    b.iops,
                    b.iops / best_iops,
                    best_iops
                ));
            }
        }
    }
    out.extend(plp);
    out
}

/// A failed `osd-bench` before any OSD ran.
#[derive(Debug, thiserror::Error)]
pub enum OsdBenchError {
    /// Reading the cluster map failed.
    #[error("reading which OSDs to bench: {0}")]
    Probe(#[from] ProbeError),
    /// `--osds` named OSDs the cluster does not have (or that are down).
    #[error("{0}")]
    NoSuchOsd(String),
    /// Nothing to bench.
    #[error("no OSD to bench: {0}")]
    Empty(String),
}

/// The OSD ids `target` means on this cluster: up OSDs only, sorted.
pub fn choose_osds(rados: &Rados, target: &Target) -> Result<Vec<i32>, OsdBenchError> {
    let states = cluster::osd_states(rados)?;
    let up: Vec<i32> = states
        .iter()
        .filter(|(_, up, _)| *up)
        .map(|(o, _, _)| *o)
        .collect();
    let mut ids = match target {
        Target::AllUp => up.clone(),
        Target::Pool(p) => {
            let pl = cluster::placement(rados, p)?;
            let mut ids: Vec<i32> = pl.acting.iter().flatten().copied().collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        }
        Target::Osds(list) => {
            for o in list {
                if !states.iter().any(|(id, _, _)| id == o) {
                    let all: Vec<String> = states.iter().map(|(i, _, _)| format!("{i}")).collect();
                    return Err(OsdBenchError::NoSuchOsd(format!(
                        "osd.{o} does not exist (the cluster has OSDs {}): fix --osds",
                        all.join(",")
                    )));
                }
                if !up.contains(o) {
                    return Err(OsdBenchError::NoSuchOsd(format!(
                        "osd.{o} is down: leave it out of --osds"
                    )));
                }
            }
            list.clone()
        }
    };
    ids.retain(|o| up.contains(o));
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Err(OsdBenchError::Empty(match target {
            Target::Pool(p) => format!("pool '{p}' has no PG on an OSD that is up"),
            _ => "no OSD is up".into(),
        }));
    }
    Ok(ids)
}

/// Runs the benches on each OSD of `cfg` in turn (through the telemetry
/// identity: `tell` needs osd 'allow *'): the deep-queue bench, then the
/// single-write ones, with the OSD's BlueStore timers read around both. A
/// failing OSD is a row with its error, and the others still run.
/// `progress` hears one line per OSD.
pub fn run(
    rados: &Rados,
    cfg: &OsdBenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<OsdBenchResult, OsdBenchError> {
    let tele = rados.telemetry();
    let ids = choose_osds(tele, &cfg.target)?;
    let devices = cluster::osd_devices(tele).ok();
    let mut rows = Vec::with_capacity(ids.len());
    for osd in ids {
        progress(&format!(
            "osd.{osd}: {} writes of {}, then {} single writes ...",
            cfg.writes,
            crate::units::fmt_bytes(cfg.block_size),
            cfg.probes
        ));
        let device = devices
            .as_ref()
            .and_then(|d| d.iter().find(|(o, _)| *o == osd).map(|(_, d)| d.clone()));
        let mut row = OsdBenchRow {
            osd,
            device,
            bench: None,
            qd1: None,
            kv_flush_lat: None,
            kv_sync_lat: None,
            commit_lat: None,
            error: None,
        };
        let before = cluster::perf_dump(tele, osd);
        match osd_bench(tele, osd, cfg.writes * cfg.block_size, cfg.block_size) {
            Ok(b) => row.bench = Some(b),
            Err(e) => row.error = Some(bench_error(osd, &e)),
        }
        let mut single = Vec::with_capacity(cfg.probes as usize);
        if row.error.is_none() {
            for _ in 0..cfg.probes {
                match osd_bench(tele, osd, cfg.block_size, cfg.block_size) {
                    Ok(b) => single.push(b.elapsed_sec),
                    Err(e) => {
                        row.error = Some(bench_error(osd, &e));
                        break;
                    }
                }
            }
        }
        row.qd1 = Qd1Latency::from_secs(&single);
        let after = cluster::perf_dump(tele, osd);
        match (before, after) {
            (Ok(a), Ok(b)) => {
                let d = counters::delta(osd, &a, &b);
                row.kv_flush_lat = d.kv_flush_lat.filter(|x| x.count > 0);
                row.kv_sync_lat = d.kv_sync_lat.filter(|x| x.count > 0);
                row.commit_lat = d.commit_lat.filter(|x| x.count > 0);
            }
            (Err(e), _) | (_, Err(e)) if row.error.is_none() => {
                row.error = Some(format!("osd.{osd}: its counters were not read: {e}"));
            }
            _ => {}
        }
        rows.push(row);
    }
    Ok(OsdBenchResult {
        version: env!("CARGO_PKG_VERSION").to_string(),
        pool: match &cfg.target {
            Target::Pool(p) => Some(p.clone()),
            _ => None,
        },
        block_size: cfg.block_size,
        writes: cfg.writes,
        probes: cfg.probes,
        findings: findings(&rows),
        osds: rows,
    })
}

/// One line for a failed bench, naming the fix where there is one.
fn bench_error(osd: i32, e: &ProbeError) -> String {
    let text = e.to_string();
    let hint = match e {
        ProbeError::Ceph(c) if c.errno() == Some(libc::EACCES) => {
            " — `tell` needs osd 'allow *': give an identity with it (--telemetry-id)"
        }
        ProbeError::Ceph(c) if c.errno() == Some(libc::EINVAL) && text.contains("count") => {
            " — ask for fewer --writes (the OSD caps a small-block bench at osd_bench_small_size_max_iops x osd_bench_duration writes)"
        }
        _ => "",
    };
    format!("osd.{osd}: bench failed: {text}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(osd: i32, iops: Option<f64>, qd1_ms: Option<f64>) -> OsdBenchRow {
        OsdBenchRow {
            osd,
            device: Some(DeviceInfo {
                class: Some(if osd == 1 { "consumer" } else { "plp" }.into()),
                objectstore: Some("bluestore".into()),
                ..DeviceInfo::default()
            }),
            bench: iops.map(|iops| BenchFigures {
                bytes_written: 4096 * 1000,
                blocksize: 4096,
                elapsed_sec: 1000.0 / iops,
                bytes_per_sec: iops * 4096.0,
                iops,
            }),
            qd1: qd1_ms.and_then(|m| Qd1Latency::from_secs(&vec![m / 1e3; 100])),
            kv_flush_lat: None,
            kv_sync_lat: None,
            commit_lat: None,
            error: None,
        }
    }

    #[test]
    fn single_write_figures_use_nearest_ranks() {
        let secs: Vec<f64> = (1..=100).map(|i| i as f64 / 1e3).collect();
        let q = Qd1Latency::from_secs(&secs).unwrap();
        assert_eq!(q.samples, 100);
        assert_eq!((q.p50_ns, q.p99_ns, q.max_ns), (50e6, 99e6, 100e6));
        assert!((q.mean_ns - 50.5e6).abs() < 1.0);
        let one = Qd1Latency::from_secs(&[0.002]).unwrap();
        assert_eq!((one.p50_ns, one.p99_ns), (2e6, 2e6));
        assert!(Qd1Latency::from_secs(&[]).is_none());
    }

    #[test]
    fn parses_the_pacific_answer_and_derives_what_older_ones_leave_out() {
        let pacific = json!({"bytes_written": 4096000, "blocksize": 4096,
            "elapsed_sec": 0.5, "bytes_per_sec": 8192000.0, "iops": 2000.0});
        let b = parse_bench(&pacific).unwrap();
        assert_eq!((b.bytes_written, b.blocksize), (4096000, 4096));
        assert_eq!((b.elapsed_sec, b.iops), (0.5, 2000.0));
        let old = json!({"bytes_written": 4096000, "blocksize": 4096, "bytes_per_sec": 8192000.0});
        let b = parse_bench(&old).unwrap();
        assert_eq!((b.elapsed_sec, b.iops), (0.5, 2000.0));
        for bad in [
            json!({}),
            json!({"bytes_written": 1, "blocksize": 0, "bytes_per_sec": 1.0}),
            json!({"bytes_written": 1, "blocksize": 4096, "bytes_per_sec": 0.0}),
        ] {
            assert!(parse_bench(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_the_slow_committing_and_the_slow_osd_and_not_the_others() {
        let rows = [
            row(0, Some(2000.0), Some(0.8)),
            row(1, Some(400.0), Some(3.1)),
            row(2, Some(1900.0), Some(1.2)),
        ];
        let f = findings(&rows);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].starts_with("osd.1 (class consumer")
                && f[0].contains("3.10 ms to commit (median of 100, p99 3.10 ms), 3.9x osd.0's 0.80 ms — sync writes wait"),
            "{f:#?}"
        );
        assert!(
            f[1].starts_with("osd.1 (class consumer")
                && f[1].contains(
                    "400 writes/s at a deep queue, 0.20x the fastest OSD's (osd.0, 2000/s)"
                )
        );
        assert!(!f
            .iter()
            .any(|l| l.starts_with("osd.0") || l.starts_with("osd.2")));
    }

    #[test]
    fn a_relative_verdict_needs_both_the_factor_and_the_margin() {
        // 2.5x but only 0.3 ms more: noise on a fast drive, not a verdict.
        assert!(findings(&[row(0, None, Some(0.2)), row(1, None, Some(0.5))]).is_empty());
        // 2x and 1 ms more, under the absolute threshold: relative only.
        let f = findings(&[row(0, None, Some(0.9)), row(1, None, Some(1.9))]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].ends_with("2.1x osd.0's 0.90 ms"), "{f:#?}");
        // Every OSD slow: each named on the absolute rule alone.
        let f = findings(&[row(0, None, Some(2.5)), row(1, None, Some(2.6))]);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(f.iter().all(|l| !l.contains("x osd.")), "{f:#?}");
        assert!(findings(&[]).is_empty());
    }

    /// With BlueStore's kv sync rounds read, the last line says which
    /// drives would gain from PLP.
    #[test]
    fn the_last_line_says_which_drives_would_gain_from_plp() {
        let mut rows = [row(0, None, Some(0.8)), row(1, None, Some(3.1))];
        for (r, ms) in rows.iter_mut().zip([0.08, 2.9]) {
            r.kv_sync_lat = Some(AvgDelta {
                count: 100,
                mean_ns: Some(ms * 1e6),
            });
        }
        let f = findings(&rows);
        assert_eq!(
            f.last().unwrap(),
            "PLP drives (a flush of at most 0.100 ms) would gain: osd.1 2.80 ms per kv sync round \
             (its flush 2.90 ms); osd.0 (0.080 ms) already flushes about as fast"
        );
    }

    /// The text report keeps to 100 columns: long findings wrap.
    #[test]
    fn text_report_fits_100_columns() {
        let mut rows = vec![
            row(0, Some(2000.0), Some(0.8)),
            row(1, Some(400.0), Some(3.1)),
        ];
        rows[1].device.as_mut().unwrap().model = Some("Samsung SSD 870 EVO 2TB".into());
        let r = OsdBenchResult {
            version: "0".into(),
            pool: Some("p".into()),
            block_size: 4096,
            writes: 1000,
            probes: 100,
            findings: findings(&rows),
            osds: rows,
        };
        let mut out = Vec::new();
        report::render(&r, crate::report::Format::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("sync writes wait on"), "{text}");
        for l in text.lines() {
            assert!(
                l.chars().count() <= 100,
                "{} columns: {l}",
                l.chars().count()
            );
        }
    }
}
