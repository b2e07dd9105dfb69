//! The human-readable summary, in the spirit of rados bench's, plus percentiles.
#![forbid(unsafe_code)]

use std::io;

use super::{share_columns, share_ns, wrap, Reporter, TEXT_WIDTH};
use crate::compare::Comparison;
use crate::result::{Attribution, BenchResult, JobReport, RadosWorkload, RbdWorkload, Workload};
use crate::suite::Suites;
use crate::units::fmt_bytes;

/// The text reporter. The default report is short: the summary, the
/// percentiles, where the mean went, one row per OSD with its drive, the
/// findings and warnings. `verbose` adds the network probes, `ceph osd
/// perf`, the OSDs' counter timeline, each OSD's split and the slowest ops
/// (JSON and HTML always carry everything).
#[derive(Debug, Clone, Copy, Default)]
pub struct Text {
    /// Every section (`-v/--verbose`).
    pub verbose: bool,
    /// Suites: the checks beside each run, the full comparison and the long
    /// table beside CrystalDiskMark's (`--long`; `-v` too).
    pub long: bool,
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

impl Reporter for Text {
    fn render(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        let mut buf = Vec::new();
        self.render_unwrapped(r, &mut buf)?;
        out.write_all(wrap(&String::from_utf8_lossy(&buf), TEXT_WIDTH).as_bytes())
    }

    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()> {
        super::comparison_table(c, false, out)
    }

    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        super::tables::suites(s, self.long || self.verbose, false, out)
    }
}

impl Text {
    /// The report before long lines are wrapped to [`TEXT_WIDTH`].
    fn render_unwrapped(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        match &r.workload {
            Workload::Rados(w) => render_rados_heading(r, w, out)?,
            Workload::Rbd(w) => render_rbd_heading(r, w, out)?,
        }
        self.render_cluster(r, out)?;
        self.render_jobs(r, out)?;
        super::render_disruption(r, false, self.verbose, out)?;
        render_clients(r, out)?;
        render_osds(r, self.verbose, out)
    }

    /// The cluster and client, the pool, and the warnings and findings
    /// above the jobs.
    fn render_cluster(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        let version = r
            .cluster
            .ceph_version
            .as_deref()
            .unwrap_or("version unknown");
        writeln!(
            out,
            "cluster {} ({}), client {} as {}",
            r.cluster.fsid,
            if self.verbose {
                version.to_string()
            } else {
                without_build_hash(version)
            },
            r.cluster.client_host,
            r.cluster.entity
        )?;
        if let Some(line) = super::pool_line(r, self.verbose) {
            writeln!(out, "{line}")?;
        }
        if r.interrupted {
            writeln!(out, "INTERRUPTED: partial results")?;
        }
        for w in &r.warnings {
            writeln!(out, "warning: {w}")?;
        }
        if let Some(line) = super::not_quiet(r) {
            writeln!(out, "{line}")?;
        }
        if let Some(c) = super::read_cache_line(r, self.verbose) {
            writeln!(out, "{c}")?;
        }
        for f in &r.findings {
            writeln!(out, "finding: {f}")?;
        }
        Ok(())
    }

    /// Each job's figures, its lasting changes and what-if projections.
    fn render_jobs(&self, r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        let verify = match &r.workload {
            Workload::Rados(w) if w.mode != "write" => Some(w.verify),
            _ => None,
        };
        for job in &r.jobs {
            render_job(job, &r.latency_definition, verify, self.verbose, out)?;
            for c in super::change_lines(r, job) {
                writeln!(out, "  Change:              {c}")?;
            }
            if self.verbose && job.changes.as_ref().is_some_and(Vec::is_empty) {
                writeln!(out, "  Change:              none lasting")?;
            }
            for p in job.projections.iter().flatten() {
                writeln!(out, "  What if:             {}", p.line())?;
                if self.verbose {
                    writeln!(out, "    from: {}", p.reference)?;
                    for a in &p.assumptions {
                        writeln!(out, "    assuming {a}")?;
                    }
                    if p.projected_iops.is_some() {
                        writeln!(out, "    IOPS: {}", p.iops_basis)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The first line of a rados run: the workload and the pool.
fn render_rados_heading(
    r: &BenchResult,
    w: &RadosWorkload,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let ns = if w.namespace.is_empty() {
        String::new()
    } else {
        format!(", namespace '{}'", w.namespace)
    };
    let to = w
        .write_to
        .as_ref()
        .map(|t| format!(" (payload to {t})"))
        .unwrap_or_default();
    writeln!(
        out,
        "cephbench {} — rados {}{to} on pool '{}'{ns}: {} ops on {} objects, {} in flight",
        r.tool.version,
        w.mode,
        w.pool,
        fmt_bytes(w.block_size),
        fmt_bytes(w.object_size),
        w.concurrent_ios
    )?;
    Ok(())
}

/// The first lines of an rbd run: the workload and the image, the cache,
/// preconditioning and flushes.
fn render_rbd_heading(r: &BenchResult, w: &RbdWorkload, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(
        out,
        "cephbench {} — rbd {} on image '{}/{}' ({}{}{}): {} ops, iodepth {} x {} job(s), test area {}",
        r.tool.version,
        w.rw,
        w.pool,
        w.image,
        fmt_bytes(w.image_size),
        if w.image_created { ", created for this run" } else { "" },
        w.data_pool
            .as_ref()
            .map(|d| format!(", data in pool '{d}'"))
            .unwrap_or_default(),
        fmt_bytes(w.bs),
        w.iodepth,
        w.numjobs,
        fmt_bytes(w.test_area),
    )?;
    let pre = match &w.precondition {
        Some(p) if p.bytes < w.test_area => format!(
            "preconditioning CUT SHORT: {} of the {} test area written in {:.1} s",
            fmt_bytes(p.bytes),
            fmt_bytes(w.test_area),
            p.elapsed_s
        ),
        Some(p) => format!(
            "preconditioned ({} written in {:.1} s)",
            fmt_bytes(p.bytes),
            p.elapsed_s
        ),
        None => "NOT preconditioned".into(),
    };
    let mut sync = w
        .fsync_every
        .map(|n| format!(", flush after every {n} write(s)"))
        .unwrap_or_default();
    match w.random_map {
        Some(true) => sync.push_str(", random offsets: each block once per pass"),
        Some(false) => sync.push_str(", random offsets: uniform, blocks repeat (norandommap)"),
        None => {}
    }
    writeln!(
        out,
        "rbd cache {}, {pre}{sync}",
        if w.rbd_cache {
            "ON (writes may be acknowledged from client RAM)"
        } else {
            "off (writes acknowledged by the OSDs)"
        }
    )?;
    if w.end_flush {
        writeln!(out, "{}", end_flush_note(w.rbd_cache))?;
    }
    Ok(())
}

/// Group runs: one row per client, and how well the clients started together.
fn render_clients(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let Some(g) = &r.clients else {
        return Ok(());
    };
    let ms = |ns: f64| ns / 1e6;
    writeln!(out)?;
    writeln!(
        out,
        "Clients of group '{}' ({} requested; figures above merge their histograms)",
        g.group, g.requested
    )?;
    // Columns as wide as their longest entry, so that rows fit 100 columns
    // for the usual agent ids and addresses.
    let hosts: Vec<String> = g.clients.iter().map(|c| c.host_and_addr()).collect();
    let hw = hosts.iter().map(|h| h.chars().count()).fold(4, usize::max);
    let aw = g
        .clients
        .iter()
        .map(|c| c.agent.chars().count())
        .fold(5, usize::max);
    writeln!(
        out,
        "  {:<aw$} {:<hw$} {:<7} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8}",
        "agent", "host", "status", "ops", "IOPS", "mean ms", "p99 ms", "clock ms", "start ms"
    )?;
    for (c, host) in g.clients.iter().zip(&hosts) {
        writeln!(
            out,
            "  {:<aw$} {:<hw$} {:<7} {:>9} {:>9.1} {:>8.3} {:>8.3} {:>+9.3} {:>8}",
            c.agent,
            host,
            c.status,
            c.ops,
            c.iops,
            ms(c.mean_ns),
            ms(c.p99_ns as f64),
            c.clock_offset_ms,
            c.start_delta_ms
                .map_or("-".to_string(), |d| format!("{d:+.1}"))
        )?;
        if let Some(e) = &c.error {
            writeln!(out, "    {}: {e}", c.agent)?;
        }
    }
    if let Some(s) = g.start_spread_ms {
        writeln!(
            out,
            "  Start spread: {s:.1} ms (latest minus earliest measured start, on the controller's clock)"
        )?;
    }
    writeln!(
        out,
        "  clock ms: the agent's clock minus the controller's, within ± half its ping RTT (max RTT {:.3} ms)",
        g.clients
            .iter()
            .map(|c| c.clock_rtt_ms)
            .fold(0.0, f64::max)
    )
}

/// IOPS per GiB of one OSD's RAM for one run: its IOPS over the RAM one OSD of the pool
/// holds (measured when every OSD of the pool runs on this host).
fn cost_line(r: &BenchResult) -> Option<String> {
    let ram = r.pool.as_ref()?.ram_per_osd()?;
    let how = if ram.measured {
        "resident, measured".to_string()
    } else {
        format!(
            "osd_memory_target; not measured: {}",
            r.pool
                .as_ref()
                .and_then(|p| p.memory_not_measured.as_deref())
                .unwrap_or("not every OSD of the pool runs on this host")
        )
    };
    let iops: f64 = r
        .jobs
        .iter()
        .filter(|j| j.op != "flush")
        .map(|j| j.iops)
        .sum();
    Some(format!(
        "Cost: {iops:.0} IOPS / one OSD's {} ({how}) = {:.0} IOPS per GiB of one OSD's RAM",
        fmt_bytes(ram.per_osd.round() as u64),
        iops / (ram.per_osd / f64::from(1u32 << 30))
    ))
}

/// What the end flush of `--end-flush` does here, against dd on a guest.
pub fn end_flush_note(rbd_cache: bool) -> &'static str {
    if rbd_cache {
        "end flush: the writes were acknowledged from librbd's cache in client RAM; the flush \
         waited until the OSDs had them all, so the rate through it is what reached the cluster"
    } else {
        "end flush: with the cache off each write was acknowledged only once every copy was on \
         the OSDs' stable storage, so the flush had nothing left to wait for (dd on a guest counts the same only \
         with conv=fsync: without it, dd times the guest's page cache)"
    }
}

fn render_job(
    j: &JobReport,
    latency_definition: &str,
    verify: Option<crate::objects::VerifyMode>,
    verbose: bool,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    writeln!(out)?;
    let what = match j.op.as_str() {
        "flush" => "flushes",
        "read" => "reads",
        _ => "writes",
    };
    writeln!(out, "{} ({what})", j.name)?;
    render_throughput(j, out)?;
    // A job that ran its planned duration says so with -v only: its Total
    // time run says as much.
    if verbose || j.stop_reason != "duration" {
        writeln!(
            out,
            "  Stopped by:          {}",
            j.stop_reason.replace('_', " ")
        )?;
    }
    render_checks(j, verify, out)?;
    // The depth the cluster saw: always when the client fell short (the
    // run's finding says what that does to the figures), else with -v.
    if let Some(c) = j.client.filter(|c| verbose || c.fell_short()) {
        writeln!(
            out,
            "  In flight:           {:.1} of {} on average; a freed slot waited {} ms{}",
            c.mean_in_flight,
            c.asked_in_flight,
            ms(c.refill_wait_ns),
            if c.fell_short() { ": CLIENT SHORT" } else { "" }
        )?;
    }
    render_latency(j, latency_definition, verbose, out)?;
    if let Some(a) = &j.attribution {
        render_attribution(a, verbose, out)?;
    }
    Ok(())
}

/// A job's time, ops, IOPS and bandwidth (through the end flush too), and
/// their spread per second.
fn render_throughput(j: &JobReport, out: &mut dyn io::Write) -> io::Result<()> {
    let mib = (1u64 << 20) as f64;
    writeln!(out, "  Total time run:      {:.3} s", j.elapsed_s)?;
    let short = if j.short_reads > 0 {
        format!(", short reads: {}", j.short_reads)
    } else {
        String::new()
    };
    writeln!(
        out,
        "  Ops:                 {} (errors: {}{short})",
        j.ops, j.errors
    )?;
    writeln!(out, "  IOPS:                {:.1}", j.iops)?;
    writeln!(
        out,
        "  Bandwidth:           {:.3} MiB/s ({} bytes in total)",
        j.bytes_per_sec / mib,
        j.bytes
    )?;
    if let Some(f) = &j.end_flush {
        // The report's unit (MiB/s, as Bandwidth above), dd's beside it
        // labelled: one unit per line read, not two that look alike.
        writeln!(
            out,
            "  Through end flush:   {:.3} MiB/s = {:.1} MB/s, dd's unit ({} bytes in {:.3} s: writes \
             {:.3} s + flush {:.3} s; dd conv=fsync's and rbd bench's figure)",
            f.bytes_per_sec / mib,
            f.bytes_per_sec / 1e6,
            f.bytes,
            f.elapsed_s,
            f.elapsed_s - f.flush_s,
            f.flush_s
        )?;
    }
    if let Some(p) = &j.per_second {
        writeln!(
            out,
            "  Per second ({} s):  IOPS stddev {:.1} min {:.0} max {:.0}; MiB/s stddev {:.3} min {:.3} max {:.3}",
            p.samples, p.iops.stddev, p.iops.min, p.iops.max, p.mib_s.stddev, p.mib_s.min, p.mib_s.max
        )?;
    }
    Ok(())
}

/// Whether a job's reads were verified, its errors and its stalls.
fn render_checks(
    j: &JobReport,
    verify: Option<crate::objects::VerifyMode>,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    use crate::objects::VerifyMode;
    match (verify, j.verify_mismatches) {
        (Some(VerifyMode::None), _) => writeln!(
            out,
            "  Verified reads:      no (--no-verify; lengths checked)"
        )?,
        (mode, Some(m)) => {
            let how = match mode {
                Some(VerifyMode::Full) => " (full: every byte)",
                Some(VerifyMode::Stamp) => " (stamp: each block's op number and run tail)",
                _ => "",
            };
            writeln!(out, "  Verified reads:      {m} mismatches{how}")?
        }
        _ => {}
    }
    if let Some(e) = &j.first_error {
        writeln!(out, "  First error:         {e}")?;
    }
    if !j.errors_by_errno.is_empty() {
        let by: Vec<String> = j
            .errors_by_errno
            .iter()
            .map(|(e, n)| format!("{n} x errno {e}"))
            .collect();
        writeln!(out, "  Errors by errno:     {}", by.join(", "))?;
    }
    if j.slow_ops > 0 || j.longest_gap_s >= 1.0 {
        writeln!(
            out,
            "  STALLS:              longest gap without a completion {:.3} s; {} ops slower than {} s",
            j.longest_gap_s, j.slow_ops, j.slow_op_s
        )?;
    }
    Ok(())
}

/// A job's latency percentiles (per interval with -v), its service time
/// and, at a fixed rate, how well the rate was kept.
fn render_latency(
    j: &JobReport,
    latency_definition: &str,
    verbose: bool,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let l = &j.latency_ns;
    writeln!(out, "  Latency ({latency_definition}), ms:")?;
    writeln!(
        out,
        "    min {}  mean {}  stddev {}  max {}",
        ms(l.min as f64),
        ms(l.mean),
        ms(l.stddev),
        ms(l.max as f64)
    )?;
    writeln!(
        out,
        "    p50 {}  p90 {}  p99 {}  p99.9 {}",
        ms(l.p50 as f64),
        ms(l.p90 as f64),
        ms(l.p99 as f64),
        ms(l.p99_9 as f64)
    )?;
    if verbose {
        render_intervals(j, out)?;
    }
    if let Some(s) = &j.service_latency_ns {
        writeln!(out, "  Service time (from submit), ms:")?;
        writeln!(
            out,
            "    p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            ms(s.p50 as f64),
            ms(s.p90 as f64),
            ms(s.p99 as f64),
            ms(s.p99_9 as f64),
            ms(s.max as f64)
        )?;
    }
    if let Some(r) = &j.rate {
        writeln!(
            out,
            "  Rate ({}): asked {:.1} ops/s, achieved {:.1}; {} of {} ops late, backlog max {} final {}; timer error p50 {} p99 {} max {} ms",
            r.arrival,
            r.asked,
            r.achieved,
            r.late_ops,
            r.scheduled_ops,
            r.max_backlog,
            r.final_backlog,
            ms(r.schedule_error_ns.p50 as f64),
            ms(r.schedule_error_ns.p99 as f64),
            ms(r.schedule_error_ns.max as f64)
        )?;
        if let Some(line) = r.overload_line() {
            writeln!(out, "  OVERLOAD: {line}")?;
        }
    }
    Ok(())
}

/// A Ceph version in short: `ceph 16.2.15 pacific` for `ceph version
/// 16.2.15 (618f…516) pacific (stable)`; the whole string with -v.
fn without_build_hash(version: &str) -> String {
    let hash = version.split_once(" (").and_then(|(_, rest)| {
        let (h, _) = rest.split_once(')')?;
        (h.len() >= 7 && h.chars().all(|c| c.is_ascii_hexdigit())).then_some(h)
    });
    let short = match hash {
        Some(h) => version.replacen(&format!(" ({h})"), "", 1),
        None => version.to_string(),
    };
    short
        .replacen("ceph version ", "ceph ", 1)
        .trim_end_matches(" (stable)")
        .to_string()
}

/// Whether a split's note only defines a share (how it is made), and so is
/// left to `-v`: a note that changes what a figure means (a share not split
/// out, one held at 0, a part that is in another share) is always shown.
pub fn defines_a_share(note: &str) -> bool {
    let defined = note.split_once(" = ").map(|(what, _)| what);
    defined.is_some_and(|w| {
        crate::result::Part::ALL.iter().any(|p| p.label() == w)
            || w == "round trip"
            || w == "the OSDs' round trip"
    }) || note.starts_with("client (librados/librbd) time is not measured on its own")
        || note.starts_with("from this run's own ops as each OSD recorded them")
}

/// "Where the mean went": one line per part, ms and % of the mean; the
/// notes that only define a share with `verbose` ([`defines_a_share`]).
fn render_attribution(a: &Attribution, verbose: bool, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, "  Where the mean went ({} ms):", ms(a.mean_ns))?;
    for s in &a.shares {
        let pct = if a.mean_ns > 0.0 {
            format!("{:>5.1} %", 100.0 * s.ns / a.mean_ns)
        } else {
            String::new()
        };
        writeln!(out, "    {:<20} {:>9} ms {pct}", s.part.label(), ms(s.ns))?;
    }
    for n in a.notes.iter().filter(|n| verbose || !defines_a_share(n)) {
        writeln!(out, "    note: {n}")?;
    }
    Ok(())
}

/// The per-OSD split: one line per primary OSD and op kind.
fn render_osd_attribution(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let rows: Vec<_> = r
        .osds
        .iter()
        .flat_map(|o| o.client.iter().map(move |c| (o.osd, c)))
        .filter_map(|(osd, c)| c.attribution.as_ref().map(|a| (osd, c, a)))
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Where each primary OSD's mean went, ms:")?;
    write!(out, "  {:<7} {:<6} {:>8}", "osd", "op", "mean")?;
    let columns = share_columns(rows.iter().map(|(_, _, a)| *a));
    for p in &columns {
        let head = match p {
            crate::result::Part::PublicNetwork => "network",
            crate::result::Part::OsdQueue => "queue",
            crate::result::Part::OsdLocal => "local",
            crate::result::Part::DeviceFlush => "flush",
            crate::result::Part::ClusterNetwork => "cl.net",
            crate::result::Part::Messengers => "msgr",
            crate::result::Part::Replica => "replica",
            crate::result::Part::Replication => "replic.",
            _ => "unattr.",
        };
        write!(out, " {head:>8}")?;
    }
    writeln!(out)?;
    for (osd, c, a) in rows {
        write!(
            out,
            "  {:<7} {:<6} {:>8}",
            format!("osd.{osd}"),
            c.op,
            ms(a.mean_ns)
        )?;
        for p in &columns {
            write!(
                out,
                " {:>8}",
                share_ns(a, *p).map_or_else(|| "-".into(), ms)
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// `ceph osd perf` as the mgr had it after the run, on one line.
fn render_mgr_perf(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let rows: Vec<String> = r
        .osds
        .iter()
        .filter_map(|o| o.mgr_perf.as_ref())
        .map(|m| {
            format!(
                "osd.{} {}/{}",
                m.osd, m.commit_latency_ms, m.apply_latency_ms
            )
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "  `ceph osd perf` after the run (mgr; commit/apply ms, whole ms, the OSDs' last \
         report): {}",
        rows.join(", ")
    )
}

/// The most columns of the counter timeline that fit the text width.
const TIMELINE_COLUMNS: usize = 12;

/// Each OSD's mean op_w (or op_r, for a read run) latency per interval from
/// its own counters; adjacent intervals are merged so a row fits.
fn render_counter_timeline(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let n = r.osds.iter().map(|o| o.timeline.len()).max().unwrap_or(0);
    if n < 2 {
        return Ok(());
    }
    let writes = r
        .osds
        .iter()
        .flat_map(|o| &o.timeline)
        .any(|s| s.counters.op_w.unwrap_or(0) > 0);
    let pick = |s: &crate::result::counters::CounterSample| {
        if writes {
            s.counters.op_w_latency
        } else {
            s.counters.op_r_latency
        }
    };
    let group = n.div_ceil(TIMELINE_COLUMNS);
    let span: f64 = r
        .osds
        .iter()
        .find(|o| o.timeline.len() == n)
        .map_or(0.0, |o| {
            o.timeline.iter().map(|s| s.interval_s).sum::<f64>() / n as f64
        });
    writeln!(out)?;
    writeln!(
        out,
        "OSD {} latency over the run (the OSD's own counters), ms per {:.1} s:",
        if writes { "op_w" } else { "op_r" },
        span * group as f64
    )?;
    for o in &r.osds {
        if o.timeline.is_empty() {
            continue;
        }
        let cells: Vec<String> = o
            .timeline
            .chunks(group)
            .map(|c| {
                let (k, sum) = c.iter().filter_map(&pick).fold((0u64, 0.0), |(k, sum), d| {
                    (k + d.count, sum + d.count as f64 * d.mean_ns.unwrap_or(0.0))
                });
                if k == 0 {
                    format!("{:>7}", "-")
                } else {
                    format!("{:>7.2}", sum / k as f64 / 1e6)
                }
            })
            .collect();
        writeln!(out, "  {:<7}{}", format!("osd.{}", o.osd), cells.join(""))?;
    }
    if !r
        .osds
        .iter()
        .flat_map(|o| &o.timeline)
        .any(|s| s.cpu_s.is_some())
    {
        return Ok(());
    }
    writeln!(
        out,
        "OSD process CPU over the run (utime + stime), cores per {:.1} s:",
        span * group as f64
    )?;
    for o in r
        .osds
        .iter()
        .filter(|o| o.timeline.iter().any(|s| s.cpu_s.is_some()))
    {
        let cells: Vec<String> = o
            .timeline
            .chunks(group)
            .map(|c| {
                let cpu: Option<f64> = c.iter().map(|s| s.cpu_s).sum();
                let secs: f64 = c.iter().map(|s| s.interval_s).sum();
                match cpu.filter(|_| secs > 0.0) {
                    Some(cpu) => format!("{:>7.2}", cpu / secs),
                    None => format!("{:>7}", "-"),
                }
            })
            .collect();
        writeln!(out, "  {:<7}{}", format!("osd.{}", o.osd), cells.join(""))?;
    }
    Ok(())
}

fn opt_ms(d: Option<crate::result::counters::AvgDelta>) -> String {
    d.and_then(|d| d.mean_ns).map_or_else(|| "-".into(), ms)
}

/// One probed round trip: OSD, method, address, min/mean/max µs, samples.
fn rtt_row(c: &crate::result::network::ClientRtt, out: &mut dyn io::Write) -> io::Result<()> {
    let how = if c.method == "icmp_echo" {
        "icmp"
    } else {
        "tcp"
    };
    writeln!(
        out,
        "  osd.{:<4} {how:<4} {:<21} min {:>7.1}  mean {:>7.1}  max {:>7.1}  ({} samples, {} failed)",
        c.osd, c.addr, c.min_us, c.mean_us, c.max_us, c.samples, c.failures
    )
}

fn render_network(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let Some(n) = &r.network else {
        return Ok(());
    };
    if !n.client_rtt.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "Network: client -> OSD round trip, µs (TCP connect to its public address; ICMP echo):"
        )?;
        for c in &n.client_rtt {
            rtt_row(c, out)?;
        }
        let bulk: Vec<_> = n
            .client_rtt
            .iter()
            .filter(|c| c.bulk_bytes.is_some())
            .collect();
        if let Some(first) = bulk.first() {
            writeln!(
                out,
                "  path bandwidth, MiB/s ({} B vs {} B ICMP echo, fastest of each):",
                first.bulk_bytes.unwrap_or_default(),
                crate::telemetry::network::SMALL_ECHO_BYTES
            )?;
            for row in bulk.chunks(6) {
                let cells: Vec<String> = row
                    .iter()
                    .map(|c| match c.bandwidth_bytes_per_s {
                        Some(bw) => format!("osd.{} {:.1}", c.osd, bw / crate::units::MIB),
                        None => format!("osd.{} -", c.osd),
                    })
                    .collect();
                writeln!(out, "    {}", cells.join("   "))?;
            }
        }
    }
    if !n.back_rtt.is_empty() {
        writeln!(
            out,
            "  this host -> OSD cluster (back) address, µs (the split's cluster-network share is held to it):"
        )?;
        for c in &n.back_rtt {
            rtt_row(c, out)?;
        }
    }
    if !n.heartbeat.is_empty() {
        writeln!(
            out,
            "  OSD heartbeats, 1-min average ms (includes both OSDs' userspace):"
        )?;
        for h in &n.heartbeat {
            writeln!(
                out,
                "  osd.{} -> osd.{} {:<5} {:.3}",
                h.from, h.to, h.interface, h.avg_1min_ms
            )?;
        }
    }
    Ok(())
}

fn render_osds(r: &BenchResult, verbose: bool, out: &mut dyn io::Write) -> io::Result<()> {
    if verbose {
        render_network(r, out)?;
    }
    if r.osds.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    render_osd_heading(r, out)?;
    // An erasure-coded pool's replicas are shards, whose writes are in no op
    // counter: its table shows them (BlueStore transactions beyond the
    // OSD's client and replica writes) where a replicated pool's shows the
    // replicas' subop_w.
    let ec = r.pool.as_ref().is_some_and(|p| p.erasure.is_some());
    render_osd_rows(r, ec, out)?;
    render_osd_columns_note(ec, verbose, out)?;
    if verbose {
        render_osd_ram_and_cpu(r, out)?;
    } else {
        render_drives(r, out)?;
    }
    // Each OSD's gain per transaction: the What if line above gives the
    // client's; this one with -v.
    if let Some(line) = crate::explain::whatif::plp_line_of(r).filter(|_| verbose) {
        writeln!(out, "  {line}")?;
    }
    if let Some(line) = crate::explain::cpu::pool_line(r) {
        writeln!(out, "  {line}")?;
    }
    if let Some(line) = cost_line(r) {
        writeln!(out, "  {line}")?;
    }
    if !verbose {
        return render_more_with_v(r, out);
    }
    render_mgr_perf(r, out)?;
    render_counter_timeline(r, out)?;
    render_osd_attribution(r, out)?;
    render_tail(r, out)
}

/// The per-OSD table's title (the placement it used) and the placement's
/// re-reads during the run.
fn render_osd_heading(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    match &r.placement {
        Some(p) => writeln!(
            out,
            "Per OSD (client latency by primary OSD; pool id {}, pg_num {}, osdmap epoch {}), ms:",
            p.pool_id, p.pg_num, p.epoch
        )?,
        None => writeln!(out, "Per OSD, ms:")?,
    }
    if let Some(p) = &r.placement {
        for f in &p.refreshes {
            writeln!(
                out,
                "  placement re-read at {:.1} s: osdmap epoch {}, pg_num {}, {} PG(s) with a new primary{}",
                f.t_ms as f64 / 1000.0,
                f.epoch,
                f.pg_num,
                f.moved,
                if f.outside > 0 {
                    format!(", {} on OSDs outside this table", f.outside)
                } else {
                    String::new()
                }
            )?;
        }
    }
    Ok(())
}

/// The per-OSD table: the client's latency by primary OSD, beside the OSD's
/// own counters (`ec`: the shard writes where a replicated pool's table
/// shows subop_w).
fn render_osd_rows(r: &BenchResult, ec: bool, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(
        out,
        "  {:<7} {:<6} {:>7} {:>8} {:>8} | {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "osd",
        "op",
        "ops",
        "mean",
        "p99",
        "op_w",
        "w_proc",
        "op_r",
        "commit",
        "kv_sync",
        if ec { "shard_w" } else { "subop_w" },
        "OSD ops"
    )?;
    for o in &r.osds {
        let c = o.counters.as_ref();
        let osd_side = match c {
            Some(c) if c.reset => "counters reset during the run (OSD restarted?)".to_string(),
            Some(c) => format!(
                "{:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
                opt_ms(c.op_w_latency),
                opt_ms(c.op_w_process_latency),
                opt_ms(c.op_r_latency),
                opt_ms(c.commit_lat),
                opt_ms(c.kv_sync_lat),
                if ec {
                    c.other_transactions()
                        .map_or_else(|| "-".to_string(), |n| n.to_string())
                } else {
                    opt_ms(c.subop_w_latency)
                },
                // The count µs per OSD op divides by (client and replica).
                crate::explain::cpu::osd_ops(o).unwrap_or(0)
            ),
            None => "counters not read".to_string(),
        };
        let name = format!("osd.{}", o.osd);
        if o.client.is_empty() {
            writeln!(
                out,
                "  {name:<7} {:<6} {:>7} {:>8} {:>8} | {osd_side}",
                "-", 0, "-", "-"
            )?;
        }
        for row in &o.client {
            writeln!(
                out,
                "  {name:<7} {:<6} {:>7} {:>8} {:>8} | {osd_side}",
                row.op,
                row.ops,
                ms(row.mean_ns),
                ms(row.p99_ns as f64)
            )?;
        }
    }
    Ok(())
}

/// What the OSD columns are: in short, or defined with -v.
fn render_osd_columns_note(ec: bool, verbose: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let ops = if ec {
        "OSD ops = op_w + op_r"
    } else {
        "OSD ops = op_w + op_r + subop_w"
    };
    if !verbose {
        // The denominator of the µs per OSD op below, and a column that is
        // a count among times; the definitions with -v.
        let shard = if ec {
            "shard_w = the erasure-coded sub-writes it took, a count, not ms; "
        } else {
            ""
        };
        writeln!(
            out,
            "  ({shard}{ops}: what µs per OSD op divides by; the columns defined with -v)"
        )?;
    }
    if verbose {
        writeln!(
        out,
        "  (OSD columns are the OSD's own perf counters over the run: op_w/op_r receive->reply, \
         w_proc dequeue->reply, commit = BlueStore commit_lat, kv_sync = BlueStore's kv sync round: \
         data flush + RocksDB WAL commit, {})",
        if ec {
            "shard_w = the erasure-coded sub-writes it took, a count: its BlueStore \
             transactions beyond its client and replica writes (other primaries' shard writes, \
             and every shard's log roll-forward after a write with none behind it), as Ceph \
             counts no EC sub-write; OSD ops = op_w + op_r, its client ops as primary, what \
             µs per OSD op divides by"
        } else {
            "subop_w = as a replica; OSD ops = op_w + op_r + subop_w, its client ops as primary \
             and its replica writes, what µs per OSD op divides by"
        }
    )?;
    }
    Ok(())
}

/// One line per kind of drive, the OSDs that share it named; each OSD's
/// RAM and CPU with -v (the pool's CPU and cost lines below).
fn render_drives(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let mut drives: Vec<(String, Vec<String>)> = Vec::new();
    for o in &r.osds {
        let Some(d) = &o.device else { continue };
        let name = format!("osd.{}", o.osd);
        match drives.iter_mut().find(|(s, _)| *s == d.summary()) {
            Some((_, osds)) => osds.push(name),
            None => drives.push((d.summary(), vec![name])),
        }
    }
    for (summary, osds) in drives {
        writeln!(out, "  {}: {summary}", osds.join(", "))?;
    }
    Ok(())
}

/// With -v: each OSD's drive, RAM and CPU.
fn render_osd_ram_and_cpu(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let mem = r.pool.as_ref().map(|p| p.osd_memory_target.as_slice());
    for o in &r.osds {
        let ram = mem
            .and_then(|m| m.iter().find(|m| m.osd == o.osd))
            .map(|m| match m.rss_bytes {
                Some(rss) => format!(
                    "; RAM {} resident (osd_memory_target {})",
                    fmt_bytes(rss),
                    fmt_bytes(m.bytes)
                ),
                None => format!("; osd_memory_target {}", fmt_bytes(m.bytes)),
            })
            .unwrap_or_default();
        let cpu = o
            .cpu
            .as_ref()
            .and_then(|c| crate::explain::cpu::osd_summary(c, true))
            .map(|c| format!("; {c}"))
            .unwrap_or_default();
        match &o.device {
            Some(d) => writeln!(out, "  osd.{}: {}{ram}{cpu}", o.osd, d.summary())?,
            None if !ram.is_empty() || !cpu.is_empty() => {
                writeln!(out, "  osd.{}{ram}{cpu}", o.osd)?;
            }
            None => {}
        }
    }
    Ok(())
}

/// Without -v: what -v would add.
fn render_more_with_v(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    let mut more = Vec::new();
    if r.network.as_ref().is_some_and(|n| !n.client_rtt.is_empty()) {
        more.push("RTT probes");
    }
    if r.osds.iter().any(|o| o.mgr_perf.is_some()) {
        more.push("osd perf");
    }
    if r.osds.iter().any(|o| !o.timeline.is_empty()) {
        more.push("counters over time");
    }
    // Each OSD's split, RAM, CPU and PLP gain.
    if r.osds
        .iter()
        .any(|o| o.cpu.is_some() || o.client.iter().any(|c| c.attribution.is_some()))
        || crate::explain::whatif::plp_line_of(r).is_some()
    {
        more.push("per-OSD details");
    }
    if r.jobs.iter().any(|j| {
        j.attribution
            .as_ref()
            .is_some_and(|a| a.notes.iter().any(|n| defines_a_share(n)))
    }) {
        more.push("definitions");
    }
    if !r.tail.is_empty() {
        more.push("slowest ops");
    }
    if !more.is_empty() {
        writeln!(out, "More with -v: {}.", more.join(", "))?;
    }
    Ok(())
}

/// The slowest ops, with their primary OSD's own record of them.
fn render_tail(r: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
    if r.tail.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "Slowest ops, joined to the OSDs' records (dump_historic_ops_by_duration), ms:"
    )?;
    writeln!(
        out,
        "  {:<5} {:>8} {:<7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  object",
        "op", "client", "osd", "in OSD", "receive", "queue", "local", "replic.", "outside"
    )?;
    for t in &r.tail {
        let (osd, cols) = match &t.osd {
            Some(s) => (
                format!("osd.{}", s.osd),
                format!(
                    "{:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
                    ms(s.total_ns),
                    ms(s.receive_ns),
                    ms(s.queue_ns),
                    ms(s.local_ns),
                    ms(s.replication_ns),
                    t.outside_osd_ns.map_or_else(|| "-".into(), ms)
                ),
            ),
            None => (
                "-".into(),
                format!("{:<53}", "  (not in the OSD's kept history)"),
            ),
        };
        writeln!(
            out,
            "  {:<5} {:>8} {osd:<7} {cols}  {}",
            t.op,
            ms(t.latency_ns as f64),
            t.object
        )?;
    }
    writeln!(
        out,
        "  (outside = client latency − the OSD's receive→reply: network both ways + client)"
    )?;
    let gone = r.tail.iter().filter(|t| t.osd.is_none()).count();
    if gone > 0 {
        writeln!(
            out,
            "  {gone} of {} not in the OSDs' history: each keeps its slowest osd_op_history_size \
             ops (20 by default) of the last osd_op_history_duration s (600); \
             `ceph config set osd osd_op_history_size 1000` keeps more",
            r.tail.len()
        )?;
    }
    Ok(())
}

/// `-v`: the per-interval percentiles over the measured window: each
/// interval's p50 and p99 (their median and range over the intervals of at
/// least half the interval) and the slowest op with its interval.
fn render_intervals(j: &JobReport, out: &mut dyn io::Write) -> io::Result<()> {
    let mut prev = 0.0;
    let (mut p50, mut p99) = (Vec::new(), Vec::new());
    let shortest = crate::progress::shortest_counted(&j.timeline);
    let mut slowest: Option<(u64, f64)> = None;
    for s in &j.timeline {
        let dt = s.t_s - prev;
        prev = s.t_s;
        if s.ramp {
            continue;
        }
        if let Some(m) = s.max_latency_ns {
            if slowest.map_or(true, |(x, _)| m > x) {
                slowest = Some((m, s.t_s));
            }
        }
        if let (Some(a), Some(b), true) = (s.p50_latency_ns, s.p99_latency_ns, dt >= shortest) {
            p50.push((a, s.t_s));
            p99.push((b, s.t_s));
        }
    }
    let Some((max, max_at)) = slowest else {
        return Ok(());
    };
    let spread = |v: &mut Vec<(u64, f64)>| {
        v.sort_by_key(|x| x.0);
        let (lo, hi) = (v[0], v[v.len() - 1]);
        let mid = v[v.len() / 2].0;
        format!(
            "median {} range {}-{} (highest at {:.0} s)",
            ms(mid as f64),
            ms(lo.0 as f64),
            ms(hi.0 as f64),
            hi.1
        )
    };
    writeln!(
        out,
        "  Per interval ({} of {} s), ms:",
        p50.len(),
        crate::progress::typical_interval(&j.timeline)
    )?;
    if !p50.is_empty() {
        writeln!(out, "    p50 {}", spread(&mut p50))?;
        writeln!(out, "    p99 {}", spread(&mut p99))?;
    }
    writeln!(
        out,
        "    slowest op {} in the interval ending at {:.1} s",
        ms(max as f64),
        max_at
    )
}
