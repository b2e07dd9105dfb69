//! Pure: each OSD's CPU figures (cores busy, CPU µs per client op and per
//! OSD op) from what `telemetry::osdcpu` read into the result, the
//! pool's, and the verdict on whether an OSD's CPU, not its drive, set the
//! pace (docs/explain.md, *CPU per op*).
#![forbid(unsafe_code)]

use crate::explain::drive::{drive_flush_ns, SLOW_DRIVE_FLUSH_NS};
use crate::result::{BenchResult, OsdCpu, OsdReport, AGENT_THERE};
use crate::units::osd_list;

/// An OSD that used at least this share of the cores it may use (its
/// affinity, its cgroup's quota, the host's CPUs: the fewest) had no more
/// to take: CPU-bound. Not 1: the OSD's threads wake and sleep around
/// every op, and the kernel's accounting is in ticks, so an OSD held to one
/// core measured 0.9–0.97 of it here.
pub const BOUND_SHARE: f64 = 0.8;

/// When the CPUs an OSD may run on were at least this busy (every process
/// on them, steal included) it competed for them: CPU-starved. Not 1 for
/// the same reason: idle moments between wake-ups.
pub const STARVED_BUSY: f64 = 0.9;

/// The least an OSD must have done to be judged: this many ops of its own
/// counters or of the client's on it as primary, over a window of at least
/// [`MIN_WINDOW_S`] (`/proc` counts CPU in 10 ms ticks: 1 % of a second).
pub const MIN_OPS: u64 = 20;

/// See [`MIN_OPS`].
pub const MIN_WINDOW_S: f64 = 1.0;

/// The client ops this run sent `o` as primary (flushes left out).
pub fn client_ops(o: &OsdReport) -> u64 {
    o.client
        .iter()
        .filter(|r| r.op != "flush")
        .map(|r| r.ops)
        .sum()
}

/// The OSD's own ops over the counters' window: client ops as primary
/// (`op_w + op_r`, every client's) and replica writes (`subop_w`). An
/// erasure-coded pool's shard writes are in none of them.
pub fn osd_ops(o: &OsdReport) -> Option<u64> {
    let c = o.counters.as_ref().filter(|c| !c.reset)?;
    Some(c.op_w.unwrap_or(0) + c.op_r.unwrap_or(0) + c.subop_w.unwrap_or(0))
}

/// The cores the OSD may use: the fewest of its CPUs and its quota.
pub fn limit_cores(c: &OsdCpu) -> Option<f64> {
    let cpus = c.allowed_cpus.map(f64::from);
    match (cpus, c.quota_cores) {
        (Some(a), Some(q)) => Some(a.min(q)),
        (a, q) => a.or(q),
    }
}

/// Fills each OSD's CPU figures from the raw readings and the rows (so a
/// merged group result or a saved one is figured again the same way).
pub fn fill(result: &mut BenchResult) {
    for o in &mut result.osds {
        let clients = client_ops(o);
        let own = osd_ops(o);
        let Some(c) = o.cpu.as_mut() else { continue };
        c.cores_busy = c
            .cpu_s
            .zip(c.window_s)
            .filter(|(_, w)| *w > 0.0)
            .map(|(s, w)| s / w);
        c.us_per_client_op = c
            .cpu_s
            .filter(|_| clients > 0)
            .map(|s| s * 1e6 / clients as f64);
        c.us_per_osd_op = c
            .counters_cpu_s
            .zip(own.filter(|n| *n > 0))
            .map(|(s, n)| s * 1e6 / n as f64);
        let judged = c.window_s.is_some_and(|w| w >= MIN_WINDOW_S)
            && (clients >= MIN_OPS || own.is_some_and(|n| n >= MIN_OPS));
        c.cpu_bound = judged && verdict(c).is_some();
    }
}

/// Why an OSD's CPU set the pace, if it did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// It used what it may use.
    Used {
        /// Cores it used.
        used: f64,
        /// Cores it may use.
        limit: f64,
    },
    /// The CPUs it may run on were busy (every process on them).
    Starved {
        /// Cores it used.
        used: f64,
        /// Cores busy on the CPUs it may run on.
        busy: f64,
        /// The CPUs it may run on.
        cpus: u32,
    },
}

/// The rule ([`BOUND_SHARE`], [`STARVED_BUSY`]) on one OSD's figures.
pub fn verdict(c: &OsdCpu) -> Option<Bound> {
    let used = c.cores_busy?;
    if let Some(limit) = limit_cores(c).filter(|l| *l > 0.0) {
        if used >= BOUND_SHARE * limit {
            return Some(Bound::Used { used, limit });
        }
    }
    let (busy, cpus) = c.allowed_cpus_busy.zip(c.allowed_cpus)?;
    (cpus > 0 && busy >= STARVED_BUSY * f64::from(cpus)).then_some(Bound::Starved {
        used,
        busy,
        cpus,
    })
}

/// Whether `o` used what it may use of the CPU ([`Bound::Used`]): then its
/// BlueStore timers, the flush's included, hold its threads' waits for
/// CPU, and its drive is not judged on them.
pub fn at_its_limit(o: &OsdReport) -> bool {
    o.cpu
        .as_ref()
        .filter(|c| c.cpu_bound)
        .and_then(verdict)
        .is_some_and(|b| matches!(b, Bound::Used { .. }))
}

/// The findings on the OSDs whose CPU set the pace (see [`verdict`]): one
/// line per OSD that used what it may use, naming what it used, what limits
/// it, the client IOPS it served as primary and its drive's flush (four or
/// more such OSDs share one line); one line per host for the OSDs that
/// competed for busy CPUs.
pub fn findings(result: &BenchResult) -> Vec<String> {
    let judged: Vec<Judged<'_>> = result
        .osds
        .iter()
        .filter_map(|o| {
            let c = o.cpu.as_ref().filter(|c| c.cpu_bound)?;
            Some((o, c, verdict(c)?))
        })
        .collect();
    let used: Vec<_> = judged
        .iter()
        .filter(|(_, _, b)| matches!(b, Bound::Used { .. }))
        .collect();
    let mut out = Vec::new();
    if used.len() >= 4 {
        let ids: Vec<i32> = used.iter().map(|(o, _, _)| o.osd).collect();
        let (lo, hi) = range(used.iter().map(|(_, c, _)| c.cores_busy.unwrap_or(0.0)));
        out.push(format!(
            "{}: each used {lo:.2}–{hi:.2} cores, at least {:.0} % of the cores it may use: \
             CPU-bound — the OSDs' CPU, not their drives, sets the pace; more or faster cores (or \
             fewer OSDs per core) would raise it",
            osd_list(&ids),
            BOUND_SHARE * 100.0
        ));
    } else {
        for (o, c, b) in &used {
            let Bound::Used { used, limit } = b else {
                continue;
            };
            out.push(format!(
                "osd.{} used {used:.2} cores{}, {:.0} % of the {} it may use ({}): CPU-bound{}",
                o.osd,
                per_op(o, c),
                used / limit * 100.0,
                cores(*limit),
                limit_source(c),
                drive_words(o, true)
            ));
        }
    }
    // The OSDs that competed for busy CPUs, one line per host.
    let mut hosts: Vec<(Option<&str>, Vec<&Judged<'_>>)> = Vec::new();
    for j in judged
        .iter()
        .filter(|(_, _, b)| matches!(b, Bound::Starved { .. }))
    {
        let h = j.1.host.as_deref();
        match hosts.iter_mut().find(|(x, _)| *x == h) {
            Some((_, v)) => v.push(j),
            None => hosts.push((h, vec![j])),
        }
    }
    for (host, v) in hosts {
        let busy = |(_, _, b): &&Judged<'_>| match b {
            Bound::Starved { busy, cpus, .. } => busy / f64::from(*cpus) * 100.0,
            Bound::Used { .. } => 0.0,
        };
        let (blo, bhi) = range(v.iter().map(busy));
        let busy = if bhi - blo < 0.5 {
            format!("{bhi:.0} %")
        } else {
            format!("{blo:.0}–{bhi:.0} %")
        };
        let cpus = match v[0].2 {
            Bound::Starved { cpus: 1, .. } => "1 CPU".to_string(),
            Bound::Starved { cpus, .. } => format!("{cpus} CPUs"),
            Bound::Used { .. } => String::new(),
        };
        let on = host.map(|h| format!(" (host {h})")).unwrap_or_default();
        if let [(o, c, Bound::Starved { used, .. })] = v.as_slice() {
            out.push(format!(
                "osd.{}{on} used {used:.2} cores{} while the {cpus} it may run on were {busy} busy \
                 (every process on them, this host's others included): CPU-bound{}",
                o.osd,
                per_op(o, c),
                drive_words(o, false)
            ));
            continue;
        }
        let ids: Vec<i32> = v.iter().map(|(o, _, _)| o.osd).collect();
        let (lo, hi) = range(v.iter().map(|(_, c, _)| c.cores_busy.unwrap_or(0.0)));
        out.push(format!(
            "{}{on}: used {lo:.2}–{hi:.2} cores each while the CPUs they may run on were {busy} \
             busy (every process on them, this host's others included): CPU-bound — the host's \
             CPU, not the drives, sets the pace",
            osd_list(&ids)
        ));
    }
    out
}

/// An OSD named, with its CPU and the verdict.
type Judged<'a> = (&'a OsdReport, &'a OsdCpu, Bound);

/// The lowest and highest of `v`.
fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// ` for 1,234 client IOPS (812 µs of CPU per op)`, where known.
fn per_op(o: &OsdReport, c: &OsdCpu) -> String {
    let iops = c
        .window_s
        .filter(|w| *w > 0.0)
        .map(|w| client_ops(o) as f64 / w);
    match (iops, c.us_per_client_op) {
        (Some(i), Some(us)) if i > 0.0 => {
            format!(
                " for {} client IOPS ({us:.0} µs of CPU per op)",
                crate::units::thousands(i.round() as u64)
            )
        }
        _ => String::new(),
    }
}

/// What the OSD's drive flush says beside a CPU verdict. A flush timer
/// includes the kv sync thread's own wait for CPU: a long one beside a CPU
/// limit (`at_limit`) says nothing of the drive (a 0.2-core quota raised a
/// file-backed OSD's from 1.2 to 5–6 ms here), beside busy CPUs it may not.
fn drive_words(o: &OsdReport, at_limit: bool) -> String {
    match drive_flush_ns(o) {
        Some(f) if f >= SLOW_DRIVE_FLUSH_NS && at_limit => format!(
            "; its flush timer ({:.2} ms per kv sync round) includes its kv sync thread's wait \
             for CPU, so its drive is not judged on it",
            f / 1e6
        ),
        Some(f) if f >= SLOW_DRIVE_FLUSH_NS => format!(
            "; its flush timer is long too ({:.2} ms per kv sync round), waits for CPU included",
            f / 1e6
        ),
        Some(f) => format!(
            " — its drive flushes in {:.2} ms per kv sync round: the CPU, not the drive, sets \
             the pace",
            f / 1e6
        ),
        None => " — the CPU, not the drive, sets the pace".into(),
    }
}

/// What limits an OSD's cores, in words.
fn limit_source(c: &OsdCpu) -> String {
    let cpus = c.allowed_cpus.map(f64::from);
    match (cpus, c.quota_cores) {
        (Some(a), Some(q)) if q < a => format!("its cgroup's CPU quota; {}", cpus_word(a)),
        (Some(a), _) => cpus_word(a),
        (None, Some(_)) => "its cgroup's CPU quota".into(),
        (None, None) => "unknown".into(),
    }
}

fn cpus_word(a: f64) -> String {
    if a == 1.0 {
        "1 allowed CPU".into()
    } else {
        format!("{a:.0} allowed CPUs")
    }
}

fn cores(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        if x == 1.0 {
            "1 core".into()
        } else {
            format!("{x:.0} cores")
        }
    } else {
        format!("{x:.2} cores")
    }
}

/// A pool's CPU over a run: its OSDs' summed over the measured window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolCpu {
    /// Cores busy, summed over the measured OSDs.
    pub cores: f64,
    /// CPU µs per client op, over every OSD of the pool; `None` unless
    /// every one was measured.
    pub us_per_op: Option<f64>,
    /// OSDs measured.
    pub measured: usize,
    /// OSDs of the pool in the result.
    pub total: usize,
}

/// The pool's CPU ([`PoolCpu`]); `None` when no OSD was measured.
pub fn pool(result: &BenchResult) -> Option<PoolCpu> {
    let total = result.osds.len();
    let measured: Vec<&OsdReport> = result
        .osds
        .iter()
        .filter(|o| o.cpu.as_ref().is_some_and(|c| c.cpu_s.is_some()))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let cpu: f64 = measured.iter().filter_map(|o| o.cpu.as_ref()?.cpu_s).sum();
    let cores: f64 = measured
        .iter()
        .filter_map(|o| o.cpu.as_ref()?.cores_busy)
        .sum();
    let ops: u64 = result.osds.iter().map(client_ops).sum();
    Some(PoolCpu {
        cores,
        us_per_op: (measured.len() == total && ops > 0).then(|| cpu * 1e6 / ops as f64),
        measured: measured.len(),
        total,
    })
}

/// Why the OSDs not measured were not, one clause per reason: the OSDs of
/// another host together (`osd.0, osd.3 run on host b, not here; run an
/// agent there`), each other reason as the OSD's own.
fn not_measured(result: &BenchResult) -> Vec<String> {
    let mut away: Vec<(&str, Vec<i32>)> = Vec::new();
    let mut other = Vec::new();
    for o in &result.osds {
        let Some(c) = o.cpu.as_ref() else { continue };
        let Some(why) = c.not_measured.as_deref() else {
            continue;
        };
        match c.host.as_deref().filter(|_| why.ends_with(AGENT_THERE)) {
            Some(h) => match away.iter_mut().find(|(x, _)| *x == h) {
                Some((_, ids)) => ids.push(o.osd),
                None => away.push((h, vec![o.osd])),
            },
            None => other.push(why.to_string()),
        }
    }
    let mut out: Vec<String> = away
        .iter()
        .map(|(h, ids)| {
            format!(
                "{} {} on host {h}, not here; {AGENT_THERE}",
                osd_list(ids),
                if ids.len() == 1 { "runs" } else { "run" }
            )
        })
        .collect();
    out.extend(other);
    out
}

/// One line on the pool's OSDs' CPU for the reports: `CPU: the pool's 3
/// OSDs used 1.23 cores, 410 µs per client op`, or what was not measured.
pub fn pool_line(result: &BenchResult) -> Option<String> {
    let missing = not_measured(result);
    let p = pool(result);
    let head = match p {
        Some(p) if p.measured == p.total => format!(
            "CPU: the pool's {} used {:.2} cores{}",
            if p.total == 1 {
                "OSD".to_string()
            } else {
                format!("{} OSDs", p.total)
            },
            p.cores,
            p.us_per_op
                .map(|u| format!(", {u:.0} µs of CPU per client op"))
                .unwrap_or_default()
        ),
        Some(p) => format!(
            "CPU: {} of the pool's {} OSDs measured, {:.2} cores",
            p.measured, p.total, p.cores
        ),
        None if missing.is_empty() => return None,
        None => "CPU: not measured".into(),
    };
    if missing.is_empty() {
        Some(head)
    } else {
        Some(format!("{head} ({})", missing.join("; ")))
    }
}

/// One OSD's CPU in a few words for the per-OSD lines: `CPU 0.31 cores,
/// 258 µs per client op, 95 µs per OSD op` (`, CPU-bound` when so); with
/// `detail`, its process, the CPUs it may use and how busy they were.
pub fn osd_summary(c: &OsdCpu, detail: bool) -> Option<String> {
    let cores = c.cores_busy?;
    let mut s = format!("CPU {cores:.2} cores");
    if let Some(u) = c.us_per_client_op {
        s.push_str(&format!(", {u:.0} µs per client op"));
    }
    if let Some(u) = c.us_per_osd_op {
        s.push_str(&format!(", {u:.0} µs per OSD op"));
    }
    if c.cpu_bound {
        s.push_str(", CPU-bound");
    }
    if detail {
        let mut d = Vec::new();
        if let Some(p) = c.pid {
            d.push(format!("pid {p}"));
        }
        if let Some(n) = c.allowed_cpus {
            let busy = c
                .allowed_cpus_busy
                .map(|b| format!(", {:.0} % busy", b / f64::from(n.max(1)) * 100.0))
                .unwrap_or_default();
            d.push(format!("{}{busy}", cpus_word(f64::from(n))));
        }
        if let Some(q) = c.quota_cores {
            d.push(format!("cgroup quota {q:.2} cores"));
        }
        if !d.is_empty() {
            s.push_str(&format!(" ({})", d.join("; ")));
        }
    }
    Some(s)
}

/// The per-OSD table cells: cores busy, CPU µs per client op and per OSD
/// op (`-` where not known).
pub fn cells(c: Option<&OsdCpu>) -> [String; 3] {
    let f = |x: Option<f64>, p: usize| x.map_or_else(|| "-".to_string(), |v| format!("{v:.p$}"));
    [
        f(c.and_then(|c| c.cores_busy), 2),
        f(c.and_then(|c| c.us_per_client_op), 0),
        f(c.and_then(|c| c.us_per_osd_op), 0),
    ]
}

/// Whether any OSD of the result carries a CPU block (the tables then
/// show its columns).
pub fn any(result: &BenchResult) -> bool {
    result.osds.iter().any(|o| o.cpu.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::counters::OsdCounters;
    use crate::result::OsdClientRow;

    fn counters(op_w: u64, subop_w: u64, flush_ms: f64) -> OsdCounters {
        serde_json::from_value(serde_json::json!({
            "osd": 0, "reset": false, "op_w": op_w, "op_r": 0, "subop_w": subop_w,
            "op_w_latency": {"count": op_w, "mean_ns": 2e6},
            "kv_commit_lat": {"count": 500, "mean_ns": flush_ms * 1e6},
        }))
        .unwrap()
    }

    fn osd(id: i32, ops: u64, cpu: Option<OsdCpu>) -> OsdReport {
        OsdReport {
            osd: id,
            client: vec![OsdClientRow {
                op: "write".into(),
                ops,
                mean_ns: 1e6,
                p99_ns: 2_000_000,
                histogram: None,
                attribution: None,
                evidence: None,
            }],
            counters: Some(counters(ops + ops / 10, 2 * ops, 0.4)),
            timeline: Vec::new(),
            mgr_perf: None,
            device: None,
            replica_sets: Vec::new(),
            cpu,
        }
    }

    fn measured(cpu_s: f64, window_s: f64, cpus: u32, quota: Option<f64>, busy: f64) -> OsdCpu {
        OsdCpu {
            host: Some("here".into()),
            pid: Some(42),
            cpu_s: Some(cpu_s),
            window_s: Some(window_s),
            counters_cpu_s: Some(cpu_s * 1.1),
            allowed_cpus: Some(cpus),
            quota_cores: quota,
            allowed_cpus_busy: Some(busy),
            ..OsdCpu::default()
        }
    }

    fn result(osds: Vec<OsdReport>) -> BenchResult {
        let mut r = crate::result::test_result("p", Vec::new());
        r.osds = osds;
        fill(&mut r);
        r
    }

    /// The figures: cores busy, µs per client op (measured window) and per
    /// OSD op (counters' window, replica writes included).
    #[test]
    fn figures_per_client_op_and_per_osd_op() {
        let r = result(vec![osd(
            0,
            10_000,
            Some(measured(4.0, 10.0, 2, None, 1.0)),
        )]);
        let c = r.osds[0].cpu.as_ref().unwrap();
        assert!((c.cores_busy.unwrap() - 0.4).abs() < 1e-12);
        assert!((c.us_per_client_op.unwrap() - 400.0).abs() < 1e-9);
        // 4.4 s over 11,000 + 20,000 own ops.
        assert!((c.us_per_osd_op.unwrap() - 4.4e6 / 31_000.0).abs() < 1e-9);
        assert!(!c.cpu_bound, "0.4 of 2 cores, the CPUs half busy");
        assert!(findings(&r).is_empty());
    }

    /// Held to a quarter of a core by its cgroup, using it all: named, with
    /// its drive's flush; the same OSD with the CPUs to spare is not.
    #[test]
    fn an_osd_held_to_its_quota_is_cpu_bound() {
        let r = result(vec![osd(
            0,
            3_000,
            Some(measured(2.4, 10.0, 2, Some(0.25), 0.9)),
        )]);
        assert!(r.osds[0].cpu.as_ref().unwrap().cpu_bound);
        assert_eq!(
            findings(&r),
            vec![
                "osd.0 used 0.24 cores for 300 client IOPS (800 µs of CPU per op), 96 % of the \
                 0.25 cores it may use (its cgroup's CPU quota; 2 allowed CPUs): CPU-bound — its \
                 drive flushes in 0.40 ms per kv sync round: the CPU, not the drive, sets the pace"
                    .to_string()
            ]
        );
        let free = result(vec![osd(0, 3_000, Some(measured(2.4, 10.0, 2, None, 0.9)))]);
        assert!(!free.osds[0].cpu.as_ref().unwrap().cpu_bound);
    }

    /// At its CPU limit an OSD's flush timers hold its kv sync thread's
    /// wait for CPU: its drive is not named slow on them (a 0.2-core quota
    /// made a file-backed OSD's WAL commit 5.3 ms beside the others' 1.2),
    /// and its CPU line says why.
    #[test]
    fn an_osd_at_its_cpu_limit_is_not_judged_on_its_drive() {
        let mut capped = osd(1, 3_000, Some(measured(2.0, 10.0, 2, Some(0.2), 0.9)));
        capped.counters = Some(counters(3_300, 6_000, 5.26));
        let mut other = osd(0, 3_000, Some(measured(2.0, 10.0, 2, None, 0.9)));
        other.counters = Some(counters(3_300, 6_000, 0.5));
        let r = result(vec![other.clone(), capped.clone()]);
        assert!(at_its_limit(&r.osds[1]) && !at_its_limit(&r.osds[0]));
        assert!(crate::explain::attribution::slow_drives(&r).is_empty());
        let f = findings(&r);
        assert!(
            f[0].ends_with(
                "CPU-bound; its flush timer (5.26 ms per kv sync round) includes its kv sync \
                 thread's wait for CPU, so its drive is not judged on it"
            ),
            "{f:?}"
        );
        // Without the quota the same flush names the drive.
        capped.cpu = Some(measured(2.0, 10.0, 2, None, 0.9));
        assert_eq!(
            crate::explain::attribution::slow_drives(&result(vec![other, capped])),
            [1]
        );
    }

    /// Pinned to one CPU that another process keeps busy: it gets half a
    /// core, which is not its limit, but its CPU was 98 % busy: starved.
    #[test]
    fn an_osd_on_a_busy_cpu_is_starved() {
        let r = result(vec![osd(
            1,
            5_000,
            Some(measured(5.0, 10.0, 1, None, 0.98)),
        )]);
        let f = findings(&r);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].starts_with(
                "osd.1 (host here) used 0.50 cores for 500 client IOPS (1000 µs of CPU per op) \
                 while the 1 CPU it may run on were 98 % busy"
            ),
            "{f:?}"
        );
        // Too short a window, or too few ops: no verdict.
        let short = result(vec![osd(
            1,
            5_000,
            Some(measured(0.45, 0.5, 1, None, 0.98)),
        )]);
        assert!(findings(&short).is_empty());
        let idle = result(vec![osd(1, 5, Some(measured(5.0, 10.0, 1, None, 0.98)))]);
        let mut idle = idle;
        idle.osds[0].counters = None;
        fill(&mut idle);
        assert!(findings(&idle).is_empty());
    }

    /// Four or more OSDs at their limit share one line; OSDs on busy CPUs
    /// share one line per host.
    #[test]
    fn many_bound_osds_fold_into_one_line() {
        let osds = (0..5)
            .map(|i| osd(i, 1_000, Some(measured(9.5, 10.0, 1, None, 0.99))))
            .collect();
        let f = findings(&result(osds));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].starts_with("osd.0–osd.4: each used 0.95–0.95 cores"),
            "{f:?}"
        );
        let osds = (0..3)
            .map(|i| {
                osd(
                    i,
                    1_000,
                    Some(measured(4.0 + f64::from(i), 10.0, 2, None, 1.9)),
                )
            })
            .collect();
        let f = findings(&result(osds));
        assert_eq!(
            f,
            vec![
                "osd.0, osd.1, osd.2 (host here): used 0.40–0.60 cores each while the CPUs they \
                 may run on were 95 % busy (every process on them, this host's others included): \
                 CPU-bound — the host's CPU, not the drives, sets the pace"
                    .to_string()
            ]
        );
    }

    /// The pool's figure needs every OSD; what was not measured is said.
    #[test]
    fn the_pool_line() {
        let r = result(vec![
            osd(0, 1_000, Some(measured(1.0, 10.0, 2, None, 0.5))),
            osd(1, 3_000, Some(measured(2.0, 10.0, 2, None, 0.5))),
        ]);
        let p = pool(&r).unwrap();
        assert!((p.cores - 0.3).abs() < 1e-12);
        assert!((p.us_per_op.unwrap() - 750.0).abs() < 1e-9);
        assert_eq!(
            pool_line(&r).unwrap(),
            "CPU: the pool's 2 OSDs used 0.30 cores, 750 µs of CPU per client op"
        );
        let away = OsdCpu {
            host: Some("b".into()),
            not_measured: Some("osd.2 runs on host b, not here; run an agent there".into()),
            ..OsdCpu::default()
        };
        let r = result(vec![
            osd(0, 1_000, Some(measured(1.0, 10.0, 2, None, 0.5))),
            osd(2, 1_000, Some(away.clone())),
        ]);
        assert_eq!(pool(&r).unwrap().us_per_op, None);
        assert_eq!(
            pool_line(&r).unwrap(),
            "CPU: 1 of the pool's 2 OSDs measured, 0.10 cores (osd.2 runs on host b, not here; \
             run an agent there)"
        );
        let away3 = OsdCpu {
            not_measured: Some("osd.3 runs on host b, not here; run an agent there".into()),
            ..away.clone()
        };
        let two = result(vec![
            osd(2, 1_000, Some(away.clone())),
            osd(3, 1_000, Some(away3)),
        ]);
        assert_eq!(
            pool_line(&two).unwrap(),
            "CPU: not measured (osd.2, osd.3 run on host b, not here; run an agent there)"
        );
        let none = result(vec![osd(2, 1_000, Some(away))]);
        assert_eq!(
            pool_line(&none).unwrap(),
            "CPU: not measured (osd.2 runs on host b, not here; run an agent there)"
        );
        assert_eq!(pool_line(&result(vec![osd(0, 10, None)])), None);
    }
}
