//! `osd-bench` as text, Markdown, CSV and JSON (its own small document;
//! the run reports of `src/report/` are for client benchmarks).
#![forbid(unsafe_code)]

use std::io;

use super::{OsdBenchResult, OsdBenchRow};
use crate::report::Format;
use crate::result::counters::AvgDelta;
use crate::units::fmt_bytes;

/// Writes `r` in `format`; HTML has no page for osd-bench (the caller
/// refuses it before running).
pub fn render(r: &OsdBenchResult, format: Format, out: &mut dyn io::Write) -> io::Result<()> {
    match format {
        Format::Text => text(r, out),
        Format::Markdown => markdown(r, out),
        Format::Csv | Format::TimelineCsv => csv(r, out),
        Format::Json | Format::Html => {
            serde_json::to_writer_pretty(&mut *out, r)?;
            writeln!(out)
        }
    }
}

fn rounds(d: Option<AvgDelta>) -> String {
    match d.and_then(|d| d.mean_ns.map(|m| (m, d.count))) {
        Some((m, n)) => format!("{:.2} ms ({n})", m / 1e6),
        None => "-".into(),
    }
}

fn mib_s(b: f64) -> String {
    format!("{:.1}", b / (1024.0 * 1024.0))
}

fn drive(r: &OsdBenchRow) -> String {
    r.device
        .as_ref()
        .map(|d| d.summary())
        .unwrap_or_else(|| "-".into())
}

/// The header line saying what was measured.
fn what(r: &OsdBenchResult) -> String {
    let on = r
        .pool
        .as_ref()
        .map(|p| format!(" (the OSDs of pool '{p}')"))
        .unwrap_or_default();
    format!(
        "osd-bench{on}: each OSD's own bench, one OSD at a time, written by the OSD straight into its \
         objectstore (no client, network, PG or replicas: the drive and BlueStore): {} writes of {} \
         queued at once, then {} single writes, each timed by the OSD from queued to committed",
        r.writes,
        fmt_bytes(r.block_size),
        r.probes
    )
}

/// A row's cells: writes/s, MiB/s, QD1 p50, QD1 p99.
fn cells(o: &OsdBenchRow) -> [String; 4] {
    let (iops, mbs) = match o.bench {
        Some(b) => (format!("{:.0}", b.iops), mib_s(b.bytes_per_sec)),
        None => ("failed".into(), "-".into()),
    };
    let (p50, p99) = match o.qd1 {
        Some(q) => (
            format!("{:.2} ms", q.p50_ns / 1e6),
            format!("{:.2} ms", q.p99_ns / 1e6),
        ),
        None => ("-".into(), "-".into()),
    };
    [iops, mbs, p50, p99]
}

/// The text report, within [`crate::report::TEXT_WIDTH`] columns (long
/// findings wrap).
fn text(r: &OsdBenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let mut buf = Vec::new();
    text_lines(r, &mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    out.write_all(crate::report::wrap(&text, crate::report::TEXT_WIDTH).as_bytes())
}

fn text_lines(r: &OsdBenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, "{}", what(r))?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<7} {:>9} {:>7}  {:>10} {:>10}  {:<16}  drive",
        "OSD", "writes/s", "MiB/s", "1 write", "p99", "kv sync (n)"
    )?;
    for o in &r.osds {
        let [iops, mbs, p50, p99] = cells(o);
        writeln!(
            out,
            "{:<7} {iops:>9} {mbs:>7}  {p50:>10} {p99:>10}  {:<16}  {}",
            format!("osd.{}", o.osd),
            rounds(o.kv_sync_lat),
            drive(o)
        )?;
    }
    writeln!(
        out,
        "(writes/s, MiB/s: the queued bench; 1 write: median single-write commit; kv sync: BlueStore's \
         device flush + WAL commit per sync round, mean over the OSD's bench window)"
    )?;
    if !r.findings.is_empty() {
        writeln!(out)?;
        for f in &r.findings {
            writeln!(out, "{f}")?;
        }
    }
    for o in &r.osds {
        if let Some(e) = &o.error {
            writeln!(out, "error: {e}")?;
        }
    }
    Ok(())
}

fn markdown(r: &OsdBenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, "{}", what(r))?;
    writeln!(out)?;
    writeln!(
        out,
        "| OSD | writes/s | MiB/s | 1 write (median) | 1 write p99 | kv sync round (n) | drive |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---|")?;
    for o in &r.osds {
        let [iops, mbs, p50, p99] = cells(o);
        writeln!(
            out,
            "| osd.{} | {iops} | {mbs} | {p50} | {p99} | {} | {} |",
            o.osd,
            rounds(o.kv_sync_lat),
            drive(o).replace('|', "\\|")
        )?;
    }
    for f in &r.findings {
        writeln!(out, "\n- {f}")?;
    }
    for o in &r.osds {
        if let Some(e) = &o.error {
            writeln!(out, "\n- error: {e}")?;
        }
    }
    Ok(())
}

/// The CSV header of [`csv`].
pub const CSV_HEADER: &str = "osd,class,model,block_size,writes,iops,bytes_per_sec,elapsed_sec,\
                              qd1_samples,qd1_p50_ms,qd1_p99_ms,qd1_mean_ms,kv_sync_mean_ms,kv_syncs,\
                              kv_flush_mean_ms,commit_mean_ms,error";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(r: &OsdBenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")?;
    let mean = |d: Option<AvgDelta>| {
        d.and_then(|d| d.mean_ns)
            .map(|m| format!("{:.4}", m / 1e6))
            .unwrap_or_default()
    };
    for o in &r.osds {
        let dev = o.device.as_ref();
        let (iops, bps, el) = match o.bench {
            Some(b) => (
                format!("{:.1}", b.iops),
                format!("{:.0}", b.bytes_per_sec),
                format!("{:.4}", b.elapsed_sec),
            ),
            None => Default::default(),
        };
        let q = |f: fn(&super::Qd1Latency) -> f64| {
            o.qd1
                .map(|q| format!("{:.4}", f(&q) / 1e6))
                .unwrap_or_default()
        };
        writeln!(
            out,
            "{},{},{},{},{},{iops},{bps},{el},{},{},{},{},{},{},{},{},{}",
            o.osd,
            csv_field(dev.and_then(|d| d.class.as_deref()).unwrap_or("")),
            csv_field(dev.and_then(|d| d.model.as_deref()).unwrap_or("")),
            r.block_size,
            r.writes,
            o.qd1.map(|q| q.samples.to_string()).unwrap_or_default(),
            q(|q| q.p50_ns),
            q(|q| q.p99_ns),
            q(|q| q.mean_ns),
            mean(o.kv_sync_lat),
            o.kv_sync_lat
                .map(|d| d.count.to_string())
                .unwrap_or_default(),
            mean(o.kv_flush_lat),
            mean(o.commit_lat),
            csv_field(o.error.as_deref().unwrap_or("")),
        )?;
    }
    Ok(())
}
