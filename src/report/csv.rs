//! `--format csv`: one header line, then one line per job (op kind), for
//! spreadsheets. Latencies in milliseconds, bandwidth in MiB/s.
#![forbid(unsafe_code)]

use std::io;

use super::{share_ns, workload_label, Reporter, SHARE_COLUMNS};
use crate::result::BenchResult;

/// The CSV reporter.
pub struct Csv;

/// The columns, in order. The share columns are [`SHARE_COLUMNS`]: a cell is
/// empty where that part was not measured; `replication_ms` holds the
/// unsplit wait for the replicas (results made before it was split into
/// `cluster_network_ms` and `replica_ms`, or without the replicas' counters)
/// and is empty otherwise, so the share cells always add up to the mean.
pub const HEADER: &str = "workload,pool,job,op,ops,errors,elapsed_s,iops,mib_per_s,\
lat_min_ms,lat_mean_ms,lat_stddev_ms,lat_p50_ms,lat_p90_ms,lat_p99_ms,lat_p99_9_ms,lat_max_ms,stop_reason,\
public_network_ms,osd_queue_ms,osd_local_ms,device_flush_ms,cluster_network_ms,replica_ms,replication_ms,\
unattributed_ms";

/// Quotes a field if it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Reporter for Csv {
    fn render(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        writeln!(out, "{HEADER}")?;
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
                "{},{},{},{},{},{},{:.3},{:.1},{:.3},{},{},{},{},{},{},{},{},{},{}",
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
                shares
            )?;
        }
        Ok(())
    }
}
