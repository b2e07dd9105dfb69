//! The text and Markdown tables of comparisons and suites, shared by the
//! `text` and `markdown` reporters (one function each, `markdown` picking the
//! form).
#![forbid(unsafe_code)]

use std::io;

use super::{wrap, TEXT_WIDTH};
use crate::compare::{fmt_diff, fmt_pct, fmt_value, headlines, letter, Comparison};
use crate::suite::{Figure, SuiteDoc};

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
        let mut line = vec![r.job.clone(), r.figure.to_string()];
        for i in 0..r.values.len() {
            line.push(fmt_value(r.values[i]));
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
    render_evidence(c, markdown, out)
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
        let mut head = vec![format!("{}: where the mean went, ms", m.job)];
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
                    l.push(pct.and_then(|p| p[i]).map_or(String::new(), fmt_pct));
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
fn table(
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
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
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

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate: whole numbers with thousands separators from 100 up.
fn rate(x: f64) -> String {
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
    if markdown {
        format!("{} (±{:.0}%){flag}", fmt(f.value), f.spread_pct)
    } else {
        format!("{} ±{:.0}%{flag}", fmt(f.value), f.spread_pct)
    }
}

/// Renders the suite table (text fitting 100 columns, or Markdown) with the
/// header lines and the cost line.
pub fn suite_table(doc: &SuiteDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let s = &doc.settings;
    let head = format!(
        "Suite {} on pool {}: {} run(s) per job, {} s measured after a {} s ramp{}",
        doc.suite,
        doc.pool,
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
        let line = format!(
            "Pool: size {}, min_size {}, pg_num {}, crush rule {} (device class {}, {} OSDs)",
            p.size,
            p.min_size,
            p.pg_num,
            p.crush_rule,
            if p.device_classes.is_empty() {
                "-".to_string()
            } else {
                p.device_classes.join("+")
            },
            p.osds.len()
        );
        writeln!(out, "{line}{}", if markdown { "  " } else { "" })?;
    }
    if markdown {
        writeln!(out)?;
    }
    let header = [
        "job", "runs", "IOPS", "MB/s", "mean ms", "p99 ms", "IOPS/GiB",
    ];
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in &doc.summary.rows {
        lines.push(vec![
            r.label.clone(),
            r.runs.to_string(),
            cell(&r.iops, rate, markdown),
            cell(&r.mb_s, rate, markdown),
            cell(&r.mean_ms, ms, markdown),
            cell(&r.p99_ms, ms, markdown),
            r.iops_per_gib.map_or("-".into(), rate),
        ]);
    }
    if markdown {
        for (n, l) in lines.iter().enumerate() {
            writeln!(out, "| {} |", l.join(" | "))?;
            if n == 0 {
                writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
            }
        }
        writeln!(out)?;
    } else {
        let mut widths: Vec<usize> = (0..header.len())
            .map(|i| {
                lines
                    .iter()
                    .map(|l| l[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
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
    match (&doc.pool_settings, doc.summary.memory_held_bytes) {
        (Some(p), Some(m)) => {
            let each: Vec<u64> = p.osd_memory_target.iter().map(|o| o.bytes).collect();
            let lo = each.iter().copied().min().unwrap_or(0);
            let hi = each.iter().copied().max().unwrap_or(0);
            let per = if lo == hi {
                format!("{} x {}", each.len(), crate::units::fmt_bytes(lo))
            } else {
                format!(
                    "{} OSDs of {} to {}",
                    each.len(),
                    crate::units::fmt_bytes(lo),
                    crate::units::fmt_bytes(hi)
                )
            };
            writeln!(
                out,
                "{b}Cost: the pool's OSDs hold {} of RAM (osd_memory_target {per}); IOPS/GiB = IOPS / that.",
                crate::units::fmt_bytes(m),
            )?;
        }
        _ => writeln!(
            out,
            "{b}Cost: osd_memory_target could not be read (needs mon 'allow r'), so IOPS/GiB is '-'."
        )?,
    }
    writeln!(
        out,
        "{b}Figures: median over runs (mean of two), ± half the range between runs, ! = spread > {:.0}%;",
        doc.summary.spread_limit_pct
    )?;
    writeln!(
        out,
        "{b}completion latency (op submitted -> completion callback); MB/s = 10^6 bytes/s."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_the_seed() {
        assert_eq!(rate(44289.4), "44,289");
        assert_eq!(rate(1036.0), "1,036");
        assert_eq!(rate(42.04), "42.0");
        assert_eq!(rate(0.5), "0.50");
        assert_eq!(ms(8.3123), "8.312");
        assert_eq!(ms(38.21), "38.21");
    }
}
