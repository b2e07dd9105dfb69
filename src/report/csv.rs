//! `--format csv`: one header line, then one line per job (op kind), for
//! spreadsheets. Latencies in milliseconds, bandwidth in MiB/s.
#![forbid(unsafe_code)]

use std::io;

use super::{share_ns, workload_label, Reporter, SHARE_COLUMNS};
use crate::compare::{letter, Comparison};
use crate::result::BenchResult;
use crate::suite::Suites;

/// The CSV reporter.
pub struct Csv;

/// The columns, in order. The share columns are [`SHARE_COLUMNS`]: a cell is
/// empty where that part was not measured; `replication_ms` holds the
/// unsplit wait for the replicas (results made before it was split into
/// `cluster_network_ms` and `replica_ms`, or without the replicas' counters)
/// and is empty otherwise; `messengers_ms` is empty where the back
/// network's own round trip was not measured (the cluster-network cell then
/// holds the whole round trip), so the share cells always add up to the
/// mean.
/// `mean_in_flight` / `asked_in_flight`: the ops the cluster had in flight
/// on average and the ops asked (closed loop; empty where not recorded):
/// below 90 % the client set the pace. `cluster_quiet`: `true`/`false`
/// (empty: not looked at), `not_quiet` the reports' one line,
/// `read_cache` `cold`/`warm` for reads. `changes`: the lasting changes of
/// the job's per-interval figures (empty: too few intervals to tell), and
/// `change_lines` the reports' line of each, joined by ` | `. `what_if`:
/// the job's what-if projections, each as the reports' line, joined by ` | `.
/// `--disrupt`: `disrupt` the spec,
/// then per phase (before, degraded, recovering, after) that job's IOPS,
/// mean, p99 (the phase's own), worst p99 (the highest of its intervals'
/// p99s), max (ms) and
/// longest stall (s), empty where the phase did not occur; `clean_after_s`
/// from the last action to active+clean (empty: not reached), the
/// recovery's highest rates. `osd_cpu_cores`: the cores the pool's OSD
/// processes used over the run (those measured), `osd_cpu_us_per_op` their
/// CPU µs per client op (empty unless every OSD was measured),
/// `cpu_bound_osds` the OSDs whose CPU set the pace (`osd.0 osd.2`): the
/// whole run's, on every job line of it.
pub const HEADER: &str = "workload,pool,job,op,ops,errors,elapsed_s,iops,mib_per_s,\
lat_min_ms,lat_mean_ms,lat_stddev_ms,lat_p50_ms,lat_p90_ms,lat_p99_ms,lat_p99_9_ms,lat_max_ms,stop_reason,\
public_network_ms,osd_queue_ms,osd_local_ms,device_flush_ms,cluster_network_ms,messengers_ms,replica_ms,replication_ms,\
unattributed_ms,mean_in_flight,asked_in_flight,cluster_quiet,not_quiet,read_cache,changes,change_lines,what_if,disrupt,\
before_iops,before_mean_ms,before_p99_ms,before_worst_p99_ms,before_max_ms,before_stall_s,\
degraded_iops,degraded_mean_ms,degraded_p99_ms,degraded_worst_p99_ms,degraded_max_ms,degraded_stall_s,\
recovering_iops,recovering_mean_ms,recovering_p99_ms,recovering_worst_p99_ms,recovering_max_ms,recovering_stall_s,\
after_iops,after_mean_ms,after_p99_ms,after_worst_p99_ms,after_max_ms,after_stall_s,\
clean_after_s,recovery_max_objects_per_s,recovery_max_bytes_per_s,\
osd_cpu_cores,osd_cpu_us_per_op,cpu_bound_osds";

/// The `--disrupt` cells of job `job`'s line (all empty without it).
fn disruption_cells(r: &BenchResult, job: &str) -> String {
    use crate::result::disruption::PhaseKind;
    let Some(d) = &r.disruption else {
        return ",".repeat(4 * 5 + 3);
    };
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    let mut cells = vec![field(&d.spec)];
    for kind in [
        PhaseKind::Before,
        PhaseKind::Degraded,
        PhaseKind::Recovering,
        PhaseKind::After,
    ] {
        match d.phases.iter().find(|p| p.job == job && p.phase == kind) {
            Some(p) => cells.extend([
                format!("{:.1}", p.iops),
                if p.ops > 0 {
                    ms(p.mean_ns)
                } else {
                    String::new()
                },
                p.p99_ns.map_or(String::new(), |n| ms(n as f64)),
                p.worst_interval_p99_ns
                    .map_or(String::new(), |n| ms(n as f64)),
                p.max_ns.map_or(String::new(), |n| ms(n as f64)),
                format!("{:.3}", p.longest_stall_s),
            ]),
            None => cells.extend((0..6).map(|_| String::new())),
        }
    }
    let rec = &d.recovery;
    cells.push(
        rec.clean_after_last_action_s
            .map_or(String::new(), |s| format!("{s:.1}")),
    );
    cells.push(format!("{:.0}", rec.max_objects_per_sec));
    cells.push(format!("{:.0}", rec.max_bytes_per_sec));
    cells.join(",")
}

/// The `osd_cpu_cores,osd_cpu_us_per_op,cpu_bound_osds` cells of a result.
fn cpu_cells(r: &BenchResult) -> String {
    let p = crate::explain::cpu::pool(r);
    let bound: Vec<String> = r
        .osds
        .iter()
        .filter(|o| o.cpu.as_ref().is_some_and(|c| c.cpu_bound))
        .map(|o| format!("osd.{}", o.osd))
        .collect();
    format!(
        "{},{},{}",
        p.map_or(String::new(), |p| format!("{:.3}", p.cores)),
        p.and_then(|p| p.us_per_op)
            .map_or(String::new(), |u| format!("{u:.1}")),
        bound.join(" ")
    )
}

/// Quotes a field if it needs it (RFC 4180).
pub(super) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The columns of a comparison: one line per job, figure and source
/// (`source` is its letter, A the baseline; `diff_pct` against A, empty for
/// A; `significant`: `true` real, `false` within the noise, empty without a
/// verdict).
pub const COMPARISON_HEADER: &str = "job,figure,source,label,value,diff_pct,significant";

/// The columns of a suite: one line per pool and job (op kind), each
/// figure the median over runs (or the best run's, `aggregate`) with its
/// spread between runs in percent (empty with one run); `mb_per_s` in 10^6 bytes/s with the same
/// figure in MiB/s (2^20 bytes/s, the unit of every other table) beside it, latencies in ms;
/// `mean_in_flight` / `asked_in_flight` of the run that kept fewest ops in
/// flight (empty where not recorded); `data_pool` the pool the RBD image's
/// data and the rados jobs went to (empty: `pool`), `usable_pct` that
/// pool's usable share of its raw capacity (empty where unknown),
/// `osd_cpu_us_per_op` the pool's OSDs' CPU µs per client op (empty where not
/// every OSD was measured).
pub const SUITE_HEADER: &str = "suite,pool,job,op,label,runs,aggregate,iops,iops_spread_pct,\
mb_per_s,mib_per_s,mb_per_s_spread_pct,mean_ms,mean_ms_spread_pct,p99_ms,p99_ms_spread_pct,iops_per_gib,flagged,\
mean_in_flight,asked_in_flight,data_pool,usable_pct,osd_cpu_us_per_op";

impl Reporter for Csv {
    fn render(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{HEADER}")?;
        rows(r, out)
    }

    /// One header for every file.
    fn render_results(
        &self,
        results: &[(String, BenchResult)],
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        writeln!(out, "{HEADER}")?;
        for (_, r) in results {
            rows(r, out)?;
        }
        Ok(())
    }

    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{COMPARISON_HEADER}")?;
        for r in &c.rows {
            for (i, v) in r.values.iter().enumerate() {
                writeln!(
                    out,
                    "{},{},{},{},{},{},{}",
                    field(&r.job),
                    field(r.figure),
                    letter(i),
                    field(&c.labels[i]),
                    v.map_or(String::new(), |v| format!("{v:.3}")),
                    r.diff_pct[i]
                        .filter(|_| i > 0)
                        .map_or(String::new(), |d| format!("{d:.1}")),
                    r.significant[i]
                        .filter(|_| i > 0)
                        .map_or(String::new(), |b| b.to_string())
                )?;
            }
        }
        Ok(())
    }

    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{SUITE_HEADER}")?;
        for d in &s.docs {
            for r in &d.summary.rows {
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{:.1},{},{:.3},{:.3},{},{:.3},{},{:.3},{},{},{},{},{},{},{}",
                    field(&d.suite),
                    field(&d.pool),
                    field(&r.job),
                    field(&r.op),
                    field(&r.label),
                    r.runs,
                    d.settings.aggregate.as_str(),
                    r.iops.value,
                    spread(&r.iops),
                    r.mb_s.value,
                    crate::suite::mib_s(&r.mb_s).value,
                    spread(&r.mb_s),
                    r.mean_ms.value,
                    spread(&r.mean_ms),
                    r.p99_ms.value,
                    spread(&r.p99_ms),
                    r.iops_per_gib.map_or(String::new(), |x| format!("{x:.1}")),
                    r.flagged,
                    in_flight(crate::suite::row_client(d, r)),
                    d.data_pool.as_deref().map(field).unwrap_or_default(),
                    d.pool_settings.as_ref().map_or(String::new(), |p| format!(
                        "{:.1}",
                        p.usable_fraction() * 100.0
                    )),
                    r.cpu_us_per_op.map_or(String::new(), |u| format!("{u:.1}"))
                )?;
            }
        }
        Ok(())
    }
}

/// The `mean_in_flight,asked_in_flight` cells (empty without a record).
fn in_flight(c: Option<crate::result::ClientLoad>) -> String {
    c.map_or(",".into(), |c| {
        format!("{:.1},{}", c.mean_in_flight, c.asked_in_flight)
    })
}

/// One line per job of `r`.
fn rows(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let (workload, pool) = workload_label(r);
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    for j in &r.jobs {
        let l = &j.latency_ns;
        // Empty cells where a part was not measured.
        let shares: Vec<String> = SHARE_COLUMNS
            .iter()
            .map(|p| {
                j.attribution
                    .as_ref()
                    .and_then(|a| share_ns(a, *p))
                    .map(ms)
                    .unwrap_or_default()
            })
            .collect();
        let shares = shares.join(",");
        writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{:.1},{:.3},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&workload),
            field(&pool),
            field(&j.name),
            j.op,
            j.ops,
            j.errors,
            j.elapsed_s,
            j.iops,
            j.bytes_per_sec / f64::from(1u32 << 20),
            ms(l.min as f64),
            ms(l.mean),
            ms(l.stddev),
            ms(l.p50 as f64),
            ms(l.p90 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
            ms(l.max as f64),
            j.stop_reason,
            shares,
            in_flight(j.client),
            r.cluster_state
                .as_ref()
                .map_or(String::new(), |c| c.quiet.to_string()),
            field(&super::not_quiet(r).unwrap_or_default()),
            r.read_cache.map_or("", |c| c.as_str()),
            j.changes
                .as_ref()
                .map_or(String::new(), |c| c.len().to_string()),
            field(&super::change_lines(r, j).join(" | ")),
            field(
                &j.projections
                    .iter()
                    .flatten()
                    .map(|p| p.line())
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            disruption_cells(r, &j.name),
            cpu_cells(r),
        )?;
    }
    Ok(())
}

/// A suite figure's spread between runs, percent; empty with one run.
fn spread(f: &crate::suite::Figure) -> String {
    f.spread().map_or(String::new(), |s| format!("{s:.1}"))
}
