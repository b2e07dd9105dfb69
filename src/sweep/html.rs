//! The sweep as one self-contained HTML page (`--format html`): latency
//! and throughput against the load, one curve per pool with its knee
//! marked, the split of the mean per point as stacked bars, and the table.
#![forbid(unsafe_code)]

use std::io;

use super::{x_label, x_of, Axis, SweepDoc};
use crate::report::svg::{self, esc, LineChart, Series, StackRow, StackedChart};
use crate::report::SHARE_COLUMNS;

/// A y cap for the latency plot: overloaded points' intended-start
/// latencies (seconds of backlog) would flatten the rest, so the axis ends
/// at 4x the largest p99 below the ceiling.
fn latency_cap(doc: &SweepDoc) -> Option<f64> {
    let mut below = 0.0f64;
    let mut all = 0.0f64;
    for c in &doc.curves {
        let figs: Vec<_> = c.points.iter().map(|p| p.figures.clone()).collect();
        for (i, f) in figs.iter().enumerate() {
            let p99 = f.latency_ns.p99 as f64 / 1e6;
            all = all.max(p99);
            if !super::at_ceiling(doc.axis, &figs, i) {
                below = below.max(p99);
            }
        }
    }
    (below > 0.0 && all > 4.0 * below).then_some(4.0 * below)
}

fn knee_marks(doc: &SweepDoc) -> Vec<(f64, String)> {
    doc.curves
        .iter()
        .filter_map(|c| {
            let i = c.knee.index?;
            let f = &c.points[i].figures;
            Some((
                x_of(doc.axis, f),
                format!("knee {}: {}", c.pool, x_label(doc.axis, f)),
            ))
        })
        .collect()
}

/// Renders the page.
pub fn render_html(doc: &SweepDoc, out: &mut dyn io::Write) -> io::Result<()> {
    let pools: Vec<&str> = doc.curves.iter().map(|c| c.pool.as_str()).collect();
    let title = format!("cephbench sweep: {} on {}", doc.workload, pools.join(", "));
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width\">");
    h.push_str(&format!(
        "<title>{t}</title><style>{}</style></head><body>\n<h1>{t}</h1>\n",
        crate::report::html::CSS,
        t = esc(&title)
    ));
    let mut table = Vec::new();
    super::render_table(doc, false, &mut table)?;
    let text = String::from_utf8_lossy(&table);
    let mut lines = text.lines();
    if let Some(first) = lines.next() {
        h.push_str(&format!("<p>{}</p>", esc(first)));
    }
    h.push_str("<ul>");
    for c in &doc.curves {
        h.push_str(&format!(
            "<li><b>{}</b>: {}</li>",
            esc(&c.pool),
            esc(&c.knee.line)
        ));
    }
    h.push_str("</ul>");
    let rate = doc.axis == Axis::Rate;
    let x_label_axis = if rate {
        "asked rate, ops/s"
    } else {
        "queue depth (ops in flight)"
    };
    let lat_kind = if rate {
        "from intended start"
    } else {
        "completion"
    };
    let mut lat = Vec::new();
    let mut thr = Vec::new();
    for c in &doc.curves {
        let pts = |f: &dyn Fn(&super::Figures) -> Option<f64>| -> Vec<(f64, f64)> {
            c.points
                .iter()
                .filter_map(|p| f(&p.figures).map(|y| (x_of(doc.axis, &p.figures), y)))
                .collect()
        };
        lat.push(Series {
            name: format!("{} p50", c.pool),
            points: pts(&|f| Some(f.latency_ns.p50 as f64 / 1e6)),
        });
        lat.push(Series {
            name: format!("{} p99", c.pool),
            points: pts(&|f| Some(f.latency_ns.p99 as f64 / 1e6)),
        });
        if rate {
            lat.push(Series {
                name: format!("{} service p99", c.pool),
                points: pts(&|f| f.service_latency_ns.map(|s| s.p99 as f64 / 1e6)),
            });
        }
        thr.push(Series {
            name: format!("{} achieved", c.pool),
            points: pts(&|f| Some(f.achieved_iops)),
        });
    }
    if rate {
        let steps = &doc.settings.steps;
        let asked = doc
            .curves
            .iter()
            .flat_map(|c| c.points.iter())
            .filter_map(|p| p.figures.asked_rate)
            .fold(0.0f64, f64::max);
        thr.push(Series {
            name: "asked".into(),
            points: steps
                .iter()
                .filter(|x| **x <= asked)
                .map(|x| (*x, *x))
                .collect(),
        });
    }
    let cap = latency_cap(doc);
    h.push_str("<div class=\"plots\">");
    h.push_str(&svg::line_chart(&LineChart {
        title: format!("Latency {lat_kind} against the load"),
        x_label: x_label_axis.into(),
        y_label: format!("latency {lat_kind}, ms"),
        series: lat,
        x_ticks: None,
        shade: None,
        y_cap: cap,
        marks: knee_marks(doc),
    }));
    h.push_str(&svg::line_chart(&LineChart {
        title: "Achieved IOPS against the load".into(),
        x_label: x_label_axis.into(),
        y_label: "IOPS (ops/s)".into(),
        series: thr,
        x_ticks: None,
        shade: None,
        y_cap: None,
        marks: knee_marks(doc),
    }));
    h.push_str("</div>");
    if let Some(cap) = cap {
        h.push_str(&format!(
            "<p class=\"note\">The latency axis ends at {:.3} ms (4x the largest p99 below \
             the throughput ceiling); higher points are drawn at the top.</p>",
            cap
        ));
    }
    // The split per point.
    let mut parts: Vec<String> = SHARE_COLUMNS
        .iter()
        .map(|p| p.label().to_string())
        .collect();
    if rate {
        parts.push("waiting to be issued".into());
    }
    let rows: Vec<StackRow> = doc
        .curves
        .iter()
        .flat_map(|c| {
            c.points.iter().filter_map(move |p| {
                let s = p.split.as_ref()?;
                let mut segments: Vec<f64> = SHARE_COLUMNS
                    .iter()
                    .map(|part| s.ns(*part).unwrap_or(0.0) / 1e6)
                    .collect();
                if rate {
                    segments.push(s.schedule_wait_ns / 1e6);
                }
                Some(StackRow {
                    label: format!("{} {}", c.pool, x_label(doc.axis, &p.figures)),
                    segments,
                    marker: Some((s.mean_ns / 1e6, format!("mean {:.3} ms", s.mean_ns / 1e6))),
                })
            })
        })
        .collect();
    if !rows.is_empty() {
        h.push_str("<h2>Where the mean went, per point</h2>");
        h.push_str(&svg::stacked_bars(&StackedChart {
            title: format!("Split of the mean latency {lat_kind}"),
            x_label: format!("mean latency {lat_kind}, ms"),
            parts,
            rows,
        }));
        h.push_str(
            "<p class=\"note\">Each point's split comes from the OSDs' counters over that \
             point's run (see the README, \"Where the time went\"); a negative unattributed \
             share is not drawn.</p>",
        );
    }
    h.push_str("<h2>Points</h2><pre>");
    for l in lines {
        h.push_str(&esc(l));
        h.push('\n');
    }
    h.push_str("</pre></body></html>\n");
    out.write_all(h.as_bytes())
}
