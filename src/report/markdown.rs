//! `--format markdown`: the summary as a Markdown table, for issues, wikis
//! and forum posts.
#![forbid(unsafe_code)]

use std::io;

use super::{osd_rows, share_columns, share_ns, workload_label, Reporter};
use crate::compare::Comparison;
use crate::result::BenchResult;
use crate::suite::Suites;

/// The Markdown reporter.
pub struct Markdown {
    /// Suites: the long table beside CrystalDiskMark's (`--long`).
    pub long: bool,
}

impl Reporter for Markdown {
    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()> {
        super::comparison_table(c, true, out)
    }

    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        super::tables::suites(s, self.long, true, out)
    }

    fn render(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        header(r, out)?;
        job_table(r, out)?;
        changes_and_projections(r, out)?;
        super::render_disruption(r, true, true, out)?;
        attribution_table(r, out)?;
        osd_table(r, out)?;
        clients_table(r, out)
    }
}

/// Milliseconds with three decimals, from nanoseconds.
fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The title, the cluster, the pool, and the warnings, findings and notes
/// above the tables.
fn header(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let (workload, pool) = workload_label(r);
    writeln!(
        out,
        "### cephbench {}: {workload} on `{pool}`",
        r.tool.version
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Cluster `{}` ({}); latency is {}.",
        r.cluster.fsid,
        r.cluster
            .ceph_version
            .as_deref()
            .unwrap_or("version unknown"),
        r.latency_definition
    )?;
    if let Some(line) = super::pool_line(r, false) {
        writeln!(out, "\n{}", line.replace('|', "\\|"))?;
    }
    for w in &r.warnings {
        writeln!(out, "\n> **Warning:** {w}")?;
    }
    if let Some(line) = super::not_quiet(r) {
        writeln!(out, "\n> **Cluster {line}**")?;
    }
    if let Some(c) = super::read_cache_line(r, true) {
        writeln!(out, "\n{c}")?;
    }
    for f in &r.findings {
        writeln!(out, "\n> **Finding:** {f}")?;
    }
    if r.interrupted {
        writeln!(out, "\n> **Interrupted:** partial results.")?;
    }
    writeln!(out)?;
    Ok(())
}

/// The jobs' figures, with the in-flight column where a client fell short.
fn job_table(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    // The in-flight column where some job's client fell short.
    let in_flight = super::shows_in_flight(r.jobs.iter().map(|j| j.client));
    let (head, rule) = if in_flight {
        (" in flight |", "---:|")
    } else {
        ("", "")
    };
    writeln!(
        out,
        "| job | op | ops |{head} IOPS | MiB/s | mean ms | p50 ms | p99 ms | p99.9 ms | max ms |"
    )?;
    writeln!(
        out,
        "|---|---|---:|{rule}---:|---:|---:|---:|---:|---:|---:|"
    )?;
    for j in &r.jobs {
        let l = &j.latency_ns;
        let cell = if in_flight {
            format!(" {} |", super::in_flight_cell(j.client))
        } else {
            String::new()
        };
        writeln!(
            out,
            "| {} | {} | {} |{cell} {:.1} | {:.2} | {} | {} | {} | {} | {} |",
            j.name.replace('|', "\\|"),
            j.op,
            j.ops,
            j.iops,
            j.bytes_per_sec / f64::from(1u32 << 20),
            ms(l.mean),
            ms(l.p50 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
            ms(l.max as f64)
        )?;
    }
    if in_flight {
        writeln!(out, "\n{}.", super::IN_FLIGHT_NOTE)?;
    }
    Ok(())
}

/// Each job's lasting changes and what-if projections.
fn changes_and_projections(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    for j in &r.jobs {
        let lines = super::change_lines(r, j);
        if !lines.is_empty() {
            writeln!(out, "\nChanges during `{}`:\n", j.name.replace('`', "'"))?;
            for l in lines {
                writeln!(out, "- {l}")?;
            }
        }
        let projections = j.projections.as_deref().unwrap_or_default();
        if !projections.is_empty() {
            writeln!(
                out,
                "\nWhat if, for `{}` (projections from its split):\n",
                j.name.replace('`', "'")
            )?;
            for p in projections {
                writeln!(
                    out,
                    "- {} — assuming {}",
                    p.line(),
                    p.assumptions.join("; ")
                )?;
            }
        }
    }
    Ok(())
}

/// Where each attributed job's mean went, and the split's notes.
fn attribution_table(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let attributed: Vec<_> = r
        .jobs
        .iter()
        .filter_map(|j| j.attribution.as_ref().map(|a| (j, a)))
        .collect();
    if !attributed.is_empty() {
        writeln!(out)?;
        writeln!(out, "Where the mean went (ms; `-`: not measured):")?;
        writeln!(out)?;
        let columns = share_columns(attributed.iter().map(|(_, a)| *a));
        let heads: Vec<&str> = columns.iter().map(|p| p.label()).collect();
        writeln!(out, "| job | mean | {} |", heads.join(" | "))?;
        writeln!(out, "|---|---:|{}", "---:|".repeat(heads.len()))?;
        for (j, a) in &attributed {
            let cells: Vec<String> = columns
                .iter()
                .map(|p| share_ns(a, *p).map_or_else(|| "-".into(), ms))
                .collect();
            writeln!(
                out,
                "| {} | {} | {} |",
                j.name.replace('|', "\\|"),
                ms(a.mean_ns),
                cells.join(" | ")
            )?;
        }
        let mut notes: Vec<&String> = attributed.iter().flat_map(|(_, a)| &a.notes).collect();
        notes.dedup();
        for n in notes {
            writeln!(out, "\n> {n}")?;
        }
    }
    Ok(())
}

/// The per-OSD table (latency by primary, CPU, drive) and the lines below it.
fn osd_table(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let rows = osd_rows(r);
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "Per OSD (client latency by primary OSD; its drive):")?;
        writeln!(out)?;
        let with_cpu = crate::explain::cpu::any(r);
        let (cpu_head, cpu_rule) = if with_cpu {
            (
                " CPU cores | CPU µs/client op | CPU µs/OSD op |",
                "---:|---:|---:|",
            )
        } else {
            ("", "")
        };
        writeln!(
            out,
            "| osd | op | ops | mean ms | p99 ms |{cpu_head} device |"
        )?;
        writeln!(out, "|---|---|---:|---:|---:|{cpu_rule}---|")?;
        for (o, c) in rows {
            let device = o
                .device
                .as_ref()
                .map_or_else(|| "-".into(), |d| d.summary().replace('|', "\\|"));
            let cpu = if with_cpu {
                format!(
                    " {} |",
                    crate::explain::cpu::cells(o.cpu.as_ref()).join(" | ")
                )
            } else {
                String::new()
            };
            match c {
                Some(c) => writeln!(
                    out,
                    "| osd.{} | {} | {} | {} | {} |{cpu} {device} |",
                    o.osd,
                    c.op,
                    c.ops,
                    ms(c.mean_ns),
                    ms(c.p99_ns as f64)
                )?,
                None => writeln!(out, "| osd.{} | - | 0 | - | - |{cpu} {device} |", o.osd)?,
            }
        }
        if let Some(line) = crate::explain::whatif::plp_line_of(r) {
            writeln!(out, "\n{line}")?;
        }
        if let Some(line) = crate::explain::cpu::pool_line(r) {
            writeln!(out, "\n{line}")?;
        }
    }
    Ok(())
}

/// A group run's clients.
fn clients_table(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    if let Some(g) = &r.clients {
        writeln!(out)?;
        writeln!(
            out,
            "Clients of group `{}` (figures above merge their histograms):",
            g.group
        )?;
        writeln!(out)?;
        writeln!(
            out,
            "| agent | host | status | ops | IOPS | mean ms | p99 ms | clock offset ms | start ms |"
        )?;
        writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|")?;
        for c in &g.clients {
            writeln!(
                out,
                "| {} | {} | {} | {} | {:.1} | {} | {} | {:+.3} | {} |",
                c.agent,
                c.host_and_addr(),
                c.status,
                c.ops,
                c.iops,
                ms(c.mean_ns),
                ms(c.p99_ns as f64),
                c.clock_offset_ms,
                c.start_delta_ms
                    .map_or("-".to_string(), |d| format!("{d:+.1}"))
            )?;
        }
    }
    Ok(())
}
