//! The HTML page of suites (`suite --format html`, `report SUITE.json
//! --format html`): CrystalDiskMark's table and its bars where the suites
//! have its jobs, each pool's table, bars of IOPS, MB/s and p99 per job and
//! pool, and for several pools the comparison with where the mean went.
#![forbid(unsafe_code)]

use std::io;

use super::page::{comparison_section, open_page};
use super::svg::{self, esc, num, Bar, BarChart, BarGroup};
use super::tables::cdm_lines;
use crate::suite::{Aggregate, CdmCell, CdmTable, Figure, SuiteDoc, Suites};

/// Renders the suites' page.
pub fn render_suites_page(s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
    let pools: Vec<&str> = s.docs.iter().map(SuiteDoc::io_pool).collect();
    let name = s.docs.first().map_or("", |d| d.suite.as_str());
    let mut h = open_page(&format!("cephbench suite {name} on {}", pools.join(", ")));
    if let Some(t) = &s.cdm {
        cdm_section(&mut h, t);
    }
    for d in &s.docs {
        suite_section(&mut h, d);
    }
    job_bars(&mut h, &s.docs);
    if let Some(c) = &s.comparison {
        comparison_section(&mut h, c, &[]);
    }
    h.push_str("</body></html>\n");
    out.write_all(h.as_bytes())
}

/// A table whose first line is the header.
fn html_table(h: &mut String, lines: &[Vec<String>]) {
    h.push_str("<table>");
    for (k, l) in lines.iter().enumerate() {
        h.push_str("<tr>");
        for (i, c) in l.iter().enumerate() {
            match (k, i) {
                (0, _) => h.push_str(&format!("<th>{}</th>", esc(c))),
                (_, 0) => h.push_str(&format!("<td style=\"white-space:nowrap\">{}</td>", esc(c))),
                _ => h.push_str(&format!("<td class=\"n\">{}</td>", esc(c))),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>\n");
}

fn cdm_section(h: &mut String, t: &CdmTable) {
    h.push_str("<section><h2>CrystalDiskMark's table</h2>");
    h.push_str(&format!(
        "<p>{} per cell; MB/s = 10<sup>6</sup> bytes/s (as CrystalDiskMark counts; 1 MB/s = 0.954 MiB/s, \
         the unit of cephbench's other tables); p99 = 99th percentile completion latency, ms.</p>",
        esc(&t.of_runs())
    ));
    let (_, lines) = cdm_lines(t, &t.pools, true);
    html_table(h, &lines);
    if t.pools.len() > 1 {
        h.push_str(&format!(
            "<p class=\"note\">Diff: MB/s against {}; * = real, ~ = within the noise, by Welch's \
             t-test at 95% on the logarithms of the per-run MB/s (the pools took turns run by \
             run); no mark where a side has one run.</p>",
            esc(&t.pools[0])
        ));
    }
    if t.aggregate == Aggregate::Best {
        h.push_str(
            "<p class=\"note\">Best: the run with the highest MB/s, the p99 is that run's \
             (CrystalDiskMark takes the best of its passes).</p>",
        );
    }
    let bars = |pick: &dyn Fn(&crate::suite::CdmRow) -> &Vec<Option<CdmCell>>,
                value: &dyn Fn(&CdmCell) -> f64| {
        t.rows
            .iter()
            .map(|r| BarGroup {
                label: r.profile.clone(),
                bars: pick(r)
                    .iter()
                    .map(|c| {
                        c.as_ref().map(|c| Bar {
                            value: value(c),
                            note: num(value(c)),
                        })
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let series = t.pools.clone();
    h.push_str("<div class=\"plots\">");
    for (title, y, groups) in [
        (
            "Read MB/s",
            "MB/s (10^6 bytes/s)",
            bars(&|r| &r.read, &|c| c.mb_s),
        ),
        (
            "Write MB/s",
            "MB/s (10^6 bytes/s)",
            bars(&|r| &r.write, &|c| c.mb_s),
        ),
        (
            "Read p99 completion latency",
            "p99, ms",
            bars(&|r| &r.read, &|c| c.p99_ms),
        ),
        (
            "Write p99 completion latency",
            "p99, ms",
            bars(&|r| &r.write, &|c| c.p99_ms),
        ),
    ] {
        h.push_str(&svg::bar_chart(&BarChart {
            title: format!("{title} ({})", t.of_runs()),
            y_label: y.into(),
            series: series.clone(),
            groups,
        }));
    }
    h.push_str("</div></section>\n");
}

fn cell(f: &Figure, fmt: fn(f64) -> String) -> String {
    match f.spread() {
        // One run: no spread to give (the section's line says so once).
        None => fmt(f.value),
        Some(s) => format!(
            "{} ±{s:.0}%{}",
            fmt(f.value),
            if f.flagged { "!" } else { "" }
        ),
    }
}

fn suite_section(h: &mut String, d: &SuiteDoc) {
    let s = &d.settings;
    h.push_str(&format!(
        "<section><h2>Suite {} on {}</h2><p>{} run(s) per job, {} s measured after a {} s \
         ramp; figures: {}{}{}.</p>",
        esc(&d.suite),
        esc(&d.where_ran()),
        s.runs,
        s.runtime_s,
        s.ramp_s,
        esc(&s.aggregate.of_runs(s.runs)),
        if d.one_run_each() {
            ", so no spread between runs is given"
        } else {
            ""
        },
        if d.interrupted {
            " <span class=\"warn\">(INTERRUPTED)</span>"
        } else {
            ""
        }
    ));
    if let Some(p) = &d.pool_settings {
        let what = if d.data_pool.is_some() {
            "Data pool"
        } else {
            "Pool"
        };
        h.push_str(&format!("<p>{what}: {}</p>", esc(&p.summary())));
    }
    let (header, rows) =
        super::tables::suite_lines(d, &|f: &Figure, fmt: fn(f64) -> String| cell(f, fmt));
    let in_flight = header.iter().any(|h| h == "in flight");
    let mut lines = vec![header];
    lines.extend(rows);
    html_table(h, &lines);
    if in_flight {
        h.push_str(&format!(
            "<p class=\"note\">{}.</p>",
            esc(super::IN_FLIGHT_NOTE)
        ));
    }
    for line in crate::suite::not_quiet_runs(d) {
        h.push_str(&format!("<p class=\"warn\">{}</p>", esc(&line)));
    }
    h.push_str(&format!(
        "<p class=\"note\">{}</p>",
        esc(&super::tables::cost_line(d))
    ));
    h.push_str(&format!(
        "<p class=\"note\">{}.</p>",
        esc(&d.summary.method)
    ));
    h.push_str("</section>\n");
}

/// Bars of IOPS, MiB/s and p99 per job, one bar per pool.
fn job_bars(h: &mut String, docs: &[SuiteDoc]) {
    let Some(first) = docs.first().filter(|d| !d.summary.rows.is_empty()) else {
        return;
    };
    h.push_str("<section><h2>Per job</h2>");
    let series: Vec<String> = docs.iter().map(|d| d.io_pool().to_string()).collect();
    let groups = |f: &dyn Fn(&crate::suite::SummaryRow) -> f64| -> Vec<BarGroup> {
        first
            .summary
            .rows
            .iter()
            .map(|row| BarGroup {
                label: row.label.clone(),
                bars: docs
                    .iter()
                    .map(|d| {
                        d.summary
                            .rows
                            .iter()
                            .find(|r| r.job == row.job && r.op == row.op)
                            .map(|r| Bar {
                                value: f(r),
                                note: num(f(r)),
                            })
                    })
                    .collect(),
            })
            .collect()
    };
    let how = first.settings.aggregate.of_runs(first.settings.runs);
    h.push_str("<div class=\"plots\">");
    for (title, y, g) in [
        ("IOPS per job", "IOPS (ops/s)", groups(&|r| r.iops.value)),
        (
            "MiB/s per job",
            "MiB/s (2^20 bytes/s)",
            groups(&|r| crate::suite::mib_s(&r.mb_s).value),
        ),
        (
            "p99 completion latency per job",
            "p99, ms",
            groups(&|r| r.p99_ms.value),
        ),
    ] {
        h.push_str(&svg::bar_chart(&BarChart {
            title: format!("{title} ({how})"),
            y_label: y.into(),
            series: series.clone(),
            groups: g,
        }));
    }
    h.push_str("</div></section>\n");
}
