//! The text and Markdown tables of comparisons and suites, shared by the
//! `text` and `markdown` reporters (one function each, `markdown` picking the
//! form).
#![forbid(unsafe_code)]

use std::io;

use super::{wrap, TEXT_WIDTH};
use crate::compare::{
    fmt_cell, fmt_diff, headlines, job_label, letter, pct_of_diff_cell, Comparison,
};
use crate::suite::{Aggregate, CdmCell, CdmDiff, CdmTable, Figure, SuiteDoc, Suites};
use crate::units::thousands;

/// Renders the comparison as a text or Markdown table.
pub fn comparison_table(c: &Comparison, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    // Prose is wrapped to the terminal width in text mode; the table is not.
    let fit = |s: String| {
        if markdown {
            s
        } else {
            wrap(&s, TEXT_WIDTH)
        }
    };
    for (i, l) in c.labels.iter().enumerate() {
        let line = format!("{}{}: {l}", if markdown { "- " } else { "" }, letter(i));
        writeln!(out, "{}", fit(line))?;
    }
    for n in &c.notes {
        let line = format!("{}Note: {n}", if markdown { "- " } else { "" });
        writeln!(out, "{}", fit(line))?;
    }
    writeln!(out)?;
    let mut head = vec!["job".to_string(), "figure".to_string()];
    for i in 0..c.labels.len() {
        head.push(letter(i));
        if i > 0 {
            head.push(format!("Diff {}", letter(i)));
        }
    }
    let mut lines = vec![head];
    for r in &c.rows {
        let mut line = vec![job_label(&r.job), r.figure.to_string()];
        for i in 0..r.values.len() {
            line.push(fmt_cell(r, i));
            if i > 0 {
                line.push(fmt_diff(r.diff_pct[i], r.significant[i]));
            }
        }
        lines.push(line);
    }
    table(&lines, &|i| i < 2, markdown, out)?;
    writeln!(out)?;
    let foot = format!("* = {}; ~ = within the noise.", c.method);
    writeln!(out, "{}", fit(foot))?;
    render_evidence(c, markdown, out)?;
    render_projections(c, markdown, out)
}

/// The what-if projections held against the other side's measured mean,
/// one line each under its job.
fn render_projections(c: &Comparison, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    if c.projections.is_empty() && c.projections_left_out.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let head = "What if (each side with the other side's OSD queue, OSD local, device flush and \
                replica shares, and its unattributed time when one client host ran both, its own \
                network kept; like jobs only):";
    if markdown {
        writeln!(out, "**{head}**\n")?;
    } else {
        writeln!(out, "{}", wrap(head, TEXT_WIDTH))?;
    }
    let mut job = "";
    for p in &c.projections {
        if p.job != job {
            job = &p.job;
            if !markdown {
                writeln!(out, "  {}", job_label(job))?;
            }
        }
        if markdown {
            writeln!(out, "- {}: {}", job_label(job), p.line())?;
        } else {
            writeln!(out, "{}", wrap(&format!("    {}", p.line()), TEXT_WIDTH))?;
        }
    }
    for l in &c.projections_left_out {
        if markdown {
            writeln!(out, "- {l}")?;
        } else {
            writeln!(out, "{}", wrap(&format!("  {l}"), TEXT_WIDTH))?;
        }
    }
    Ok(())
}

/// Where the means moved (share by share) and the drives behind each
/// source, under the comparison table.
fn render_evidence(c: &Comparison, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let fit = |s: String| {
        if markdown {
            s
        } else {
            wrap(&s, TEXT_WIDTH)
        }
    };
    let n = c.labels.len();
    for m in &c.moved {
        writeln!(out)?;
        let mut head = vec![format!("{}: where the mean went, ms", job_label(&m.job))];
        for i in 0..n {
            head.push(letter(i));
            if i > 0 {
                head.push(format!("moved {}", letter(i)));
                head.push("% of diff".into());
            }
        }
        let mut lines = vec![head];
        let row = |name: String, ms: &[Option<f64>], pct: Option<&[Option<f64>]>| {
            let mut l = vec![name];
            for i in 0..n {
                l.push(ms[i].map_or("-".into(), |v| format!("{v:.3}")));
                if i > 0 {
                    l.push(match (ms[0], ms[i]) {
                        (Some(a), Some(b)) => format!("{:+.3}", b - a),
                        _ => "-".into(),
                    });
                    l.push(pct_of_diff_cell(c, m, pct.and_then(|p| p[i]), i));
                }
            }
            l
        };
        for p in &m.parts {
            lines.push(row(p.part.label().to_string(), &p.ms, Some(&p.pct_of_diff)));
        }
        lines.push(row("= mean".into(), &m.mean_ms, None));
        table(&lines, &|i| i == 0, markdown, out)?;
    }
    for h in headlines(c) {
        writeln!(out)?;
        writeln!(out, "{}", fit(h))?;
    }
    if !c.osds.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            fit(
                "Drives (device flush: the flush share of each write the OSD was primary for; \
                 kv sync: BlueStore's flush + WAL commit round; means over the runs):"
                    .to_string()
            )
        )?;
        let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
        if markdown {
            let mut lines = vec![vec![
                "".to_string(),
                "OSD".into(),
                "device flush ms".into(),
                "kv sync ms".into(),
                "drive".into(),
            ]];
            for o in &c.osds {
                lines.push(vec![
                    letter(o.source),
                    format!("osd.{}", o.osd),
                    ms(o.device_flush_ms),
                    ms(o.kv_sync_ms),
                    o.drive.clone().unwrap_or_else(|| "-".into()),
                ]);
            }
            table(&lines, &|i| i < 2 || i == 4, markdown, out)?;
        } else {
            for o in &c.osds {
                let line = format!(
                    "{} osd.{}: device flush {} ms, kv sync {} ms — {}",
                    letter(o.source),
                    o.osd,
                    ms(o.device_flush_ms),
                    ms(o.kv_sync_ms),
                    o.drive.as_deref().unwrap_or("drive unknown")
                );
                writeln!(out, "{}", fit(line))?;
            }
        }
    }
    Ok(())
}

/// A table whose first line is the header: Markdown, or text with padded
/// columns, the columns `left` says left-aligned, the others right-aligned.
pub(super) fn table(
    lines: &[Vec<String>],
    left: &dyn Fn(usize) -> bool,
    markdown: bool,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let cols = lines[0].len();
    if markdown {
        for (k, l) in lines.iter().enumerate() {
            let cells: Vec<String> = l.iter().map(|c| c.replace('|', "\\|")).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
            if k == 0 {
                let seps: Vec<&str> = (0..cols)
                    .map(|i| if left(i) { "---" } else { "---:" })
                    .collect();
                writeln!(out, "| {} |", seps.join(" | "))?;
            }
        }
        return Ok(());
    }
    padded(lines, &col_widths(lines), left, out)
}

/// The width of each column of `lines`, in characters.
fn col_widths(lines: &[Vec<String>]) -> Vec<usize> {
    (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Writes `lines` padded to `widths`, two spaces apart, the columns `left`
/// says left-aligned, the others right-aligned.
fn padded(
    lines: &[Vec<String>],
    widths: &[usize],
    left: &dyn Fn(usize) -> bool,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    for l in lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if left(i) {
                    format!("{s:<w$}", w = widths[i])
                } else {
                    format!("{s:>w$}", w = widths[i])
                }
            })
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

/// A rate: whole numbers with thousands separators from 100 up.
pub(super) fn rate(x: f64) -> String {
    if x >= 99.95 {
        thousands(x.round() as u64)
    } else if x >= 9.995 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A latency in ms: three significant digits.
fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.1}")
    } else if x >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn cell(f: &Figure, fmt: fn(f64) -> String, markdown: bool) -> String {
    let flag = if f.flagged { "!" } else { "" };
    match (f.spread(), markdown) {
        // One run: no spread to give (the notes say so once).
        (None, _) => fmt(f.value),
        (Some(s), true) => format!("{} (±{s:.0}%){flag}", fmt(f.value)),
        (Some(s), false) => format!("{} ±{s:.0}%{flag}", fmt(f.value)),
    }
}

/// The head lines of a suite: what ran where, and the pool's settings.
fn suite_head(doc: &SuiteDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let s = &doc.settings;
    let head = format!(
        "Suite {} on {}: {} run(s) per job, {} s measured after a {} s ramp{}",
        doc.suite,
        doc.where_ran(),
        s.runs,
        s.runtime_s,
        s.ramp_s,
        if doc.interrupted {
            " (INTERRUPTED)"
        } else {
            ""
        }
    );
    if markdown {
        writeln!(out, "**{head}**\n")?;
    } else {
        writeln!(out, "{head}")?;
    }
    if let Some(p) = &doc.pool_settings {
        let what = if doc.data_pool.is_some() {
            "Data pool"
        } else {
            "Pool"
        };
        let line = format!("{what}: {}", p.summary());
        if markdown {
            writeln!(out, "{line}  ")?;
        } else {
            writeln!(out, "{}", wrap(&line, TEXT_WIDTH))?;
        }
    }
    if markdown {
        writeln!(out)?;
    }
    Ok(())
}

/// Renders the suite table (text fitting 100 columns, or Markdown) with the
/// header lines, the cost line and the notes on how it is made: one row per
/// job and op.
pub fn suite_table(doc: &SuiteDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    suite_rows(doc, markdown, out)?;
    suite_notes(std::slice::from_ref(doc), markdown, out)
}

/// The suite table with its header lines and cost line, without the notes.
fn suite_rows(doc: &SuiteDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    suite_head(doc, markdown, out)?;
    let (header, rows) = suite_lines(doc, &|f: &Figure, fmt: fn(f64) -> String| {
        cell(f, fmt, markdown)
    });
    let in_flight = header.iter().any(|h| h == "in flight");
    let mut lines = vec![header];
    lines.extend(rows);
    // Text: the CPU column only where the job names keep their width
    // (else one line under the table says the same).
    let mut cpu_line = None;
    if !markdown && lines[0].last().is_some_and(|h| h == CPU_HEADER) {
        let full = col_widths(&lines);
        let rest: usize = full[1..].iter().sum::<usize>() + 2 * (full.len() - 1);
        if full[0] + rest > 100 {
            let cells: Vec<String> = lines
                .iter_mut()
                .skip(1)
                .zip(&doc.summary.rows)
                .filter_map(|(l, r)| {
                    let c = l.pop()?;
                    (c != "-").then(|| format!("{} {c}", r.label))
                })
                .collect();
            lines[0].pop();
            cpu_line = Some(format!(
                "CPU µs per client op of the pool's OSDs: {}.",
                cells.join(", ")
            ));
        }
    }
    if markdown {
        for (n, l) in lines.iter().enumerate() {
            writeln!(out, "| {} |", l.join(" | "))?;
            if n == 0 {
                writeln!(out, "|---|{}", "---:|".repeat(l.len() - 1))?;
            }
        }
        writeln!(out)?;
    } else {
        let mut widths = col_widths(&lines);
        // Fit 100 columns: the job names give way.
        let rest: usize = widths[1..].iter().sum::<usize>() + 2 * (widths.len() - 1);
        widths[0] = widths[0].min(100usize.saturating_sub(rest).max(12));
        for l in &lines {
            let cells: Vec<String> = l
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if i == 0 {
                        let t: String = if s.chars().count() > widths[0] {
                            let mut t: String = s.chars().take(widths[0] - 1).collect();
                            t.push('~');
                            t
                        } else {
                            s.clone()
                        };
                        format!("{t:<w$}", w = widths[0])
                    } else {
                        format!("{s:>w$}", w = widths[i])
                    }
                })
                .collect();
            writeln!(out, "{}", cells.join("  ").trim_end())?;
        }
        writeln!(out)?;
    }
    let b = if markdown { "- " } else { "" };
    let fit = |s: String| if markdown { s } else { wrap(&s, TEXT_WIDTH) };
    if let Some(l) = cpu_line {
        writeln!(out, "{}", fit(l))?;
    }
    if in_flight {
        writeln!(out, "{}", fit(format!("{b}{}.", super::IN_FLIGHT_NOTE)))?;
    }
    writeln!(out, "{}", fit(format!("{b}{}", cost_line(doc))))
}

/// The suite table's CPU column.
const CPU_HEADER: &str = "CPU µs/op";

/// How a table makes a figure's cell, given how to print its value.
pub type FigureCell<'a> = dyn Fn(&Figure, fn(f64) -> String) -> String + 'a;

/// The header and rows of a suite's table, figures made by `cell`; an
/// `in flight` column after `runs` where some row's client fell short
/// ([`super::shows_in_flight`]). Shared by the text, Markdown and HTML
/// tables.
pub fn suite_lines(doc: &SuiteDoc, cell: &FigureCell<'_>) -> (Vec<String>, Vec<Vec<String>>) {
    let clients: Vec<_> = doc
        .summary
        .rows
        .iter()
        .map(|r| crate::suite::row_client(doc, r))
        .collect();
    let in_flight = super::shows_in_flight(clients.iter().copied());
    let mut header: Vec<String> = [
        "job", "runs", "IOPS", "MiB/s", "mean ms", "p99 ms", "IOPS/GiB",
    ]
    .map(String::from)
    .to_vec();
    let cpu = doc.summary.rows.iter().any(|r| r.cpu_us_per_op.is_some());
    if cpu {
        header.push(CPU_HEADER.into());
    }
    if in_flight {
        header.insert(2, "in flight".into());
    }
    let rows = doc
        .summary
        .rows
        .iter()
        .zip(clients)
        .map(|(r, c)| {
            let mut l = vec![
                r.label.clone(),
                r.runs.to_string(),
                cell(&r.iops, rate),
                cell(&crate::suite::mib_s(&r.mb_s), rate),
                cell(&r.mean_ms, ms),
                cell(&r.p99_ms, ms),
                r.iops_per_gib.map_or("-".into(), rate),
            ];
            if cpu {
                l.push(r.cpu_us_per_op.map_or("-".into(), |u| format!("{u:.0}")));
            }
            if in_flight {
                l.insert(2, super::in_flight_cell(c));
            }
            l
        })
        .collect();
    (header, rows)
}

/// The notes under suite tables (`docs`, one or several pools' alike): what
/// a flush row is, and how the figures are made.
fn suite_notes(docs: &[SuiteDoc], markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let Some(doc) = docs.first() else {
        return Ok(());
    };
    let b = if markdown { "- " } else { "" };
    let fit = |s: String| if markdown { s } else { wrap(&s, TEXT_WIDTH) };
    for d in docs {
        for line in crate::suite::not_quiet_runs(d) {
            let pool = if docs.len() > 1 {
                format!("pool '{}', ", d.io_pool())
            } else {
                String::new()
            };
            writeln!(out, "{}", fit(format!("{b}{pool}{line}")))?;
        }
    }
    if docs
        .iter()
        .any(|d| d.summary.rows.iter().any(|r| r.op == "flush"))
    {
        writeln!(out, "{}", fit(format!("{b}{FLUSH_NOTE}")))?;
    }
    let centre = match doc.settings.aggregate {
        Aggregate::Median => "median over runs (mean of two)",
        Aggregate::Best => "the best run's (highest bandwidth; its latencies too)",
    };
    if docs.iter().all(SuiteDoc::one_run_each) {
        writeln!(
            out,
            "{b}Figures: one run per job, so no spread between runs is given;"
        )?;
    } else {
        writeln!(
            out,
            "{b}Figures: {centre}, ± half the range between runs, ! = spread > {:.0}%;",
            doc.summary.spread_limit_pct
        )?;
    }
    writeln!(
        out,
        "{b}completion latency (op submitted -> completion callback); MiB/s = 2^20 bytes/s."
    )
}

/// What a flush row measures (the lab method's fsync job, natively).
pub const FLUSH_NOTE: &str = "Flush rows: a guest's fsync reaches librbd as this flush. With \
librbd's cache off, every write was acknowledged only once all copies were on the OSDs' stable \
storage, so the flush waits for nothing but librbd's own round: its cost is in the write row \
(the device-flush share there says whether the drives' own cache flushes are slow); a fast \
flush row does not show that a drive's cache is safe against power loss.";

/// The cost line (IOPS per GiB of one OSD's RAM): the RAM the pool's OSDs hold (measured, or as
/// configured) and what IOPS/GiB divides by.
pub fn cost_line(doc: &SuiteDoc) -> String {
    let mut line = ram_cost_line(doc);
    if doc.summary.rows.iter().any(|r| r.cpu_us_per_op.is_some()) {
        line.push_str(
            " CPU µs/op = the CPU time (utime + stime) of all the pool's OSD processes per client \
             op, over each run's measured window.",
        );
    } else if let Some(l) = doc
        .runs
        .iter()
        .rev()
        .find_map(|e| crate::explain::cpu::pool_line(&e.result))
    {
        line.push_str(&format!(" {l}."));
    }
    line
}

/// The RAM part of [`cost_line`].
fn ram_cost_line(doc: &SuiteDoc) -> String {
    use crate::units::fmt_bytes;
    let s = &doc.summary;
    let Some(p) = &doc.pool_settings else {
        return "Cost: the pool's settings could not be read (needs mon 'allow r'), so IOPS/GiB is '-'."
            .into();
    };
    let each: Vec<u64> = p.osd_memory_target.iter().map(|o| o.bytes).collect();
    let (lo, hi) = (
        each.iter().copied().min().unwrap_or(0),
        each.iter().copied().max().unwrap_or(0),
    );
    let target = if lo == hi {
        format!("osd_memory_target {} x {}", each.len(), fmt_bytes(lo))
    } else {
        format!(
            "osd_memory_target {} OSDs of {} to {}",
            each.len(),
            fmt_bytes(lo),
            fmt_bytes(hi)
        )
    };
    let per = |b: f64| fmt_bytes(b.round() as u64);
    match (s.ram_source.as_deref(), s.ram_per_osd_bytes, s.memory_measured_bytes) {
        (Some("measured"), Some(one), Some(m)) => format!(
            "Cost: the pool's {} OSD(s) held {} of RAM, measured (their processes' resident sets, \
             the largest after a run; {target}); IOPS/GiB = IOPS / one OSD's {}: IOPS per GiB of one OSD's RAM.",
            each.len(),
            fmt_bytes(m),
            per(one)
        ),
        (_, Some(one), _) => format!(
            "Cost: the pool's OSDs are configured to hold {} of RAM ({target}; not measured: \
             {}); IOPS/GiB = IOPS / one OSD's {}: IOPS per GiB of one OSD's RAM.",
            fmt_bytes(s.memory_held_bytes.unwrap_or(0)),
            doc.runs
                .iter()
                .rev()
                .find_map(|e| e.result.pool.as_ref()?.memory_not_measured.as_deref())
                .unwrap_or("not every one runs on this host"),
            per(one)
        ),
        _ => "Cost: osd_memory_target could not be read (needs mon 'allow r'), so IOPS/GiB is '-'."
            .into(),
    }
}

/// Columns CrystalDiskMark's text table keeps within, pool names and all.
pub const CDM_TEXT_WIDTH: usize = 120;

/// A Diff cell of CrystalDiskMark's table: whole percent as
/// CrystalDiskMark's comparisons print it, with the noise verdict (`*` real, `~` within the noise).
fn cdm_diff(d: Option<CdmDiff>) -> String {
    match d {
        None => "-".into(),
        Some(d) => format!(
            "{:+.0}%{}",
            d.pct,
            match d.significant {
                Some(true) => " *",
                Some(false) => " ~",
                None => "",
            }
        ),
    }
}

/// The column groups (label, columns spanned) and the lines (header first)
/// of CrystalDiskMark's table, naming the pools `names`. Markdown gets one
/// header line with the group in each column's name, as CrystalDiskMark's comparisons do.
pub fn cdm_lines(
    t: &CdmTable,
    names: &[String],
    markdown: bool,
) -> (Vec<(String, usize)>, Vec<Vec<String>>) {
    let n = t.pools.len();
    let mbs = |c: &Option<CdmCell>| c.as_ref().map_or("-".into(), |c| rate(c.mb_s));
    let p99 = |c: &Option<CdmCell>| c.as_ref().map_or("-".into(), |c| ms(c.p99_ms));
    let diff_name = |i: usize| {
        if n == 2 {
            "Diff".to_string()
        } else {
            format!("Diff {}", names[i])
        }
    };
    let mut head = vec!["Test".to_string()];
    let groups;
    if n == 1 {
        groups = vec![
            (String::new(), 1),
            ("Read".to_string(), 2),
            ("Write".to_string(), 2),
        ];
        if markdown {
            head.extend(
                [
                    "Read (MB/s)",
                    "Read p99 (ms)",
                    "Write (MB/s)",
                    "Write p99 (ms)",
                ]
                .map(String::from),
            );
        } else {
            head.extend(["MB/s", "p99 ms", "MB/s", "p99 ms"].map(String::from));
        }
    } else {
        groups = vec![
            (String::new(), 1),
            ("Read MB/s".to_string(), 2 * n - 1),
            ("Write MB/s".to_string(), 2 * n - 1),
            ("Read p99 ms".to_string(), n),
            ("Write p99 ms".to_string(), n),
        ];
        for (what, p99) in [
            ("Read", false),
            ("Write", false),
            ("Read", true),
            ("Write", true),
        ] {
            for name in names {
                head.push(match (markdown, p99) {
                    (false, _) => name.clone(),
                    (true, false) => format!("{name} {what} (MB/s)"),
                    (true, true) => format!("{name} {what} p99 (ms)"),
                });
            }
            if !p99 {
                head.extend((1..n).map(diff_name));
            }
        }
    }
    let mut lines = vec![head];
    for r in &t.rows {
        let mut l = vec![r.profile.clone()];
        if n == 1 {
            l.extend([
                mbs(&r.read[0]),
                p99(&r.read[0]),
                mbs(&r.write[0]),
                p99(&r.write[0]),
            ]);
        } else {
            for (cells, diffs) in [(&r.read, &r.read_diff), (&r.write, &r.write_diff)] {
                l.extend(cells.iter().map(mbs));
                l.extend(diffs[1..].iter().map(|d| cdm_diff(*d)));
            }
            l.extend(r.read.iter().map(p99));
            l.extend(r.write.iter().map(p99));
        }
        lines.push(l);
    }
    // Several pools: their capacity beside their figures, under the read
    // MB/s columns (usable / raw, the Diff against the first pool).
    if n > 1 && t.usable.iter().any(Option::is_some) {
        let pct = |u: &Option<f64>| u.map_or("-".into(), |u| format!("{:.0} %", u * 100.0));
        let mut l = vec![USABLE_ROW.to_string()];
        l.extend(t.usable.iter().map(pct));
        l.extend(t.usable[1..].iter().map(|u| match (t.usable[0], u) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:+.0}%", (b - a) / a * 100.0),
            _ => "-".into(),
        }));
        l.resize(lines[0].len(), String::new());
        lines.push(l);
    }
    (groups, lines)
}

/// The label of CrystalDiskMark's table's capacity row.
pub const USABLE_ROW: &str = "usable/raw";

/// A text table under a line of column groups, each label centred over
/// the columns it spans; the first column left-aligned, the others right.
fn grouped_table(
    groups: &[(String, usize)],
    lines: &[Vec<String>],
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let mut widths = col_widths(lines);
    let mut spans = Vec::new();
    let mut at = 0;
    for (label, n) in groups {
        let span = |w: &[usize]| w[at..at + n].iter().sum::<usize>() + 2 * (n - 1);
        let need = label.chars().count();
        if need > span(&widths) {
            widths[at + n - 1] += need - span(&widths);
        }
        spans.push((label, span(&widths)));
        at += n;
    }
    let top: Vec<String> = spans
        .iter()
        .map(|(l, w)| format!("{l:^w$}", w = *w))
        .collect();
    writeln!(out, "{}", top.join("  ").trim_end())?;
    padded(lines, &widths, &|i| i == 0, out)
}

/// Renders CrystalDiskMark's table (CrystalDiskMark's four profiles, pools side by side) as text (within
/// [`CDM_TEXT_WIDTH`] columns: the pools' names, or letters with a legend
/// when the names do not fit) or Markdown, with the lines saying how the
/// cells are made.
pub fn cdm_table(t: &CdmTable, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let fit = |s: String| {
        if markdown {
            s
        } else {
            wrap(&s, TEXT_WIDTH)
        }
    };
    let b = if markdown { "- " } else { "" };
    let title = format!(
        "CrystalDiskMark's table: {} per cell; MB/s = 10^6 bytes/s (as CrystalDiskMark counts; \
         1 MB/s = 0.954 MiB/s, the unit of cephbench's other tables); p99 = 99th percentile \
         completion latency",
        t.of_runs()
    );
    if markdown {
        writeln!(out, "**{title}**\n")?;
    } else {
        writeln!(out, "{}", fit(title))?;
    }
    let mut names = t.pools.clone();
    let (mut groups, mut lines) = cdm_lines(t, &names, markdown);
    let width =
        |lines: &[Vec<String>]| col_widths(lines).iter().sum::<usize>() + 2 * (lines[0].len() - 1);
    if !markdown && t.pools.len() > 1 && width(&lines) > CDM_TEXT_WIDTH {
        names = (0..t.pools.len()).map(letter).collect();
        (groups, lines) = cdm_lines(t, &names, markdown);
        let legend: Vec<String> = t
            .pools
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} = pool {p}", letter(i)))
            .collect();
        writeln!(out, "{}", fit(legend.join(", ")))?;
    }
    if markdown {
        table(&lines, &|i| i == 0, true, out)?;
    } else {
        grouped_table(&groups, &lines, out)?;
    }
    if t.pools.len() > 1 || t.aggregate == Aggregate::Best {
        writeln!(out)?;
    }
    if t.pools.len() > 1 {
        writeln!(
            out,
            "{}",
            fit(format!(
                "{b}Diff: MB/s against {}; * = real, ~ = within the noise, by Welch's t-test at 95% \
                 on the logarithms of the per-run MB/s (the pools took turns run by run); no \
                 mark where a side has one run.",
                t.pools[0]
            ))
        )?;
        if t.single_run() {
            writeln!(
                out,
                "{}",
                fit(format!(
                    "{b}One run a side cannot tell a difference from run-to-run noise; repeat with \
                     --runs 3 or more."
                ))
            )?;
        }
    }
    if t.aggregate == Aggregate::Best {
        writeln!(
            out,
            "{}",
            fit(format!(
                "{b}Best: the run with the highest bandwidth, the p99 is that run's \
                 (CrystalDiskMark takes the best of its passes)."
            ))
        )?;
    }
    Ok(())
}

/// Renders suites (one per pool) as text or Markdown. CrystalDiskMark's
/// suites get its table alone unless `long`; every other suite, and `long`,
/// each pool's full table and, for several pools, the comparison with where
/// the mean went and the drives.
pub fn suites(s: &Suites, long: bool, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    if let (Some(t), false) = (&s.cdm, long) {
        for d in &s.docs {
            suite_head(d, markdown, out)?;
        }
        if !markdown {
            writeln!(out)?;
        }
        cdm_table(t, markdown, out)?;
        if let Some(c) = &s.comparison {
            for h in headlines(c) {
                writeln!(out)?;
                writeln!(out, "{}", if markdown { h } else { wrap(&h, TEXT_WIDTH) })?;
            }
        }
        return Ok(());
    }
    if let Some(t) = &s.cdm {
        cdm_table(t, markdown, out)?;
        writeln!(out)?;
    }
    if long || s.docs.len() < 2 {
        for d in &s.docs {
            suite_table(d, markdown, out)?;
            writeln!(out)?;
            if long && checks_table(d, markdown, out)? {
                writeln!(out)?;
            }
        }
    } else {
        // Several pools, the default view: their tables, the notes once.
        for d in &s.docs {
            suite_rows(d, markdown, out)?;
            writeln!(out)?;
        }
        suite_notes(&s.docs, markdown, out)?;
        writeln!(out)?;
    }
    match &s.comparison {
        Some(c) if long => comparison_table(c, markdown, out)?,
        Some(c) => comparison_short(c, markdown, out)?,
        None => {}
    }
    if !long && (s.comparison.is_some() || s.docs.iter().any(has_checks)) {
        let more = if s.comparison.is_some() {
            "--long: the checks beside each run, every figure of the comparison, where each \
             job's mean went, the drives and the what-if projections"
        } else {
            "--long: the checks beside each run (the client's RTT, ceph osd perf, the split)"
        };
        let b = if markdown { "- " } else { "" };
        let line = format!("{b}{more}.");
        writeln!(
            out,
            "{}",
            if markdown {
                line
            } else {
                wrap(&line, TEXT_WIDTH)
            }
        )?;
    }
    Ok(())
}

/// The comparison the default view of several pools prints: IOPS and mean
/// latency of each job with their Diff and verdict, then the headlines.
fn comparison_short(c: &Comparison, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let short = Comparison {
        rows: c
            .rows
            .iter()
            .filter(|r| {
                r.figure == "IOPS"
                    || r.figure == "mean lat ms"
                    || r.figure == crate::compare::USABLE
            })
            .cloned()
            .collect(),
        moved: Vec::new(),
        osds: Vec::new(),
        projections: Vec::new(),
        projections_left_out: Vec::new(),
        ..c.clone()
    };
    comparison_table(&short, markdown, out)?;
    let fit = |s: String| if markdown { s } else { wrap(&s, TEXT_WIDTH) };
    for h in headlines(c) {
        writeln!(out)?;
        writeln!(out, "{}", fit(h))?;
    }
    writeln!(out)
}

/// Whether any run of `doc` was probed, so that [`checks_table`] has
/// something to show.
fn has_checks(doc: &SuiteDoc) -> bool {
    doc.runs.iter().any(|e| {
        let r = &e.result;
        r.network.as_ref().is_some_and(|n| !n.client_rtt.is_empty())
            || r.osds.iter().any(|o| o.mgr_perf.is_some())
            || r.jobs.iter().any(|j| j.attribution.is_some())
    })
}

/// Short column names of the split's shares.
fn short_part(p: crate::result::Part) -> &'static str {
    use crate::result::Part::*;
    match p {
        Client => "client",
        PublicNetwork => "net",
        OsdQueue => "queue",
        OsdLocal => "local",
        DeviceFlush => "flush",
        ClusterNetwork => "cable",
        Messengers => "msgr",
        Replica => "repl",
        Replication => "repl",
        Unattributed => "other",
    }
}

/// The lab method's checks, beside every run: the client's RTT to the
/// OSDs it used, `ceph osd perf` commit/apply (mean over the OSDs), and the
/// split of the run's mean. Nothing (and `false`) when no run was probed.
pub fn checks_table(doc: &SuiteDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<bool> {
    use crate::result::Part;
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    if !has_checks(doc) {
        return Ok(false);
    }
    let atts = doc
        .runs
        .iter()
        .flat_map(|e| e.result.jobs.iter().filter_map(|j| j.attribution.as_ref()));
    let parts: Vec<Part> = super::share_columns(atts);
    let mut head = vec![
        "job".to_string(),
        "run".into(),
        "RTT".into(),
        "osd perf".into(),
        "mean".into(),
    ];
    head.extend(parts.iter().map(|p| short_part(*p).to_string()));
    let mut lines = vec![head];
    let f3 = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    let f2 = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.2}"));
    for e in &doc.runs {
        let r = &e.result;
        let Some(j) = r.jobs.iter().find(|j| j.op != "flush") else {
            continue;
        };
        let rtt = mean(
            r.network
                .iter()
                .flat_map(|n| &n.client_rtt)
                .filter(|c| c.samples > 0)
                .map(|c| c.mean_us / 1e3)
                .collect(),
        );
        let perf: Vec<&crate::result::counters::MgrOsdPerf> =
            r.osds.iter().filter_map(|o| o.mgr_perf.as_ref()).collect();
        let ms_of = |ns: Option<u64>, ms: u64| ns.map_or(ms as f64, |n| n as f64 / 1e6);
        let commit = mean(
            perf.iter()
                .map(|p| ms_of(p.commit_latency_ns, p.commit_latency_ms))
                .collect(),
        );
        let apply = mean(
            perf.iter()
                .map(|p| ms_of(p.apply_latency_ns, p.apply_latency_ms))
                .collect(),
        );
        // Whole ms where the release reports no ns (pacific) and one OSD
        // served, as `ceph osd perf` prints them.
        let whole = perf.len() == 1 && perf[0].commit_latency_ns.is_none();
        let mut line = vec![
            e.job.clone(),
            e.run.to_string(),
            f3(rtt),
            match (commit, apply) {
                (Some(c), Some(a)) if whole => format!("{c:.0}/{a:.0}"),
                (Some(c), Some(a)) => format!("{c:.1}/{a:.1}"),
                _ => "-".into(),
            },
            format!("{:.2}", j.latency_ns.mean / 1e6),
        ];
        for p in &parts {
            line.push(f2(j
                .attribution
                .as_ref()
                .and_then(|a| super::share_ns(a, *p))
                .map(|ns| ns / 1e6)));
        }
        lines.push(line);
    }
    let title = "Checks beside each run, ms: RTT = the client's round \
                 trip to the OSDs it used; osd perf = `ceph osd perf` commit/apply, mean over the \
                 OSDs; mean = the run's mean latency and its split (net = public network, flush = \
                 device flush, cable = cluster network, repl = replica, other = unattributed)";
    if markdown {
        writeln!(out, "{title}\n")?;
    } else {
        writeln!(out, "{}", wrap(title, TEXT_WIDTH))?;
    }
    table(&lines, &|i| i == 0, markdown, out)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_crystaldiskmark() {
        assert_eq!(rate(44289.4), "44,289");
        assert_eq!(rate(1036.0), "1,036");
        assert_eq!(rate(42.04), "42.0");
        assert_eq!(rate(0.5), "0.50");
        assert_eq!(ms(8.3123), "8.312");
        assert_eq!(ms(38.21), "38.21");
    }
}
