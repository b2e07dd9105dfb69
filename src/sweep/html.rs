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
/// at [`CAP`] x the largest p99 below the ceiling.
const CAP: f64 = 3.0;

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
    (below > 0.0 && all > CAP * below).then_some(CAP * below)
}

/// The x axis: logarithmic (one tick per step) when the steps span a
/// factor of 8 or more, as a doubling series does; else linear.
struct XAxis {
    log: bool,
}

impl XAxis {
    fn new(doc: &SweepDoc) -> XAxis {
        let st = &doc.settings.steps;
        let (lo, hi) = (st.first().copied(), st.last().copied());
        XAxis {
            log: matches!((lo, hi), (Some(a), Some(b)) if a > 0.0 && b / a >= 8.0),
        }
    }

    fn x(&self, v: f64) -> f64 {
        if self.log {
            v.max(1e-9).log2()
        } else {
            v
        }
    }

    /// One tick per step that was measured.
    fn ticks(&self, doc: &SweepDoc) -> Option<Vec<(f64, String)>> {
        let top = doc
            .curves
            .iter()
            .flat_map(|c| c.points.iter())
            .map(|p| x_of(doc.axis, &p.figures))
            .fold(0.0f64, f64::max);
        self.log.then(|| {
            doc.settings
                .steps
                .iter()
                .filter(|v| **v <= top)
                .map(|v| (self.x(*v), super::fmt_rate(*v)))
                .collect()
        })
    }
}

fn knee_marks(doc: &SweepDoc, ax: &XAxis) -> Vec<(f64, String)> {
    doc.curves
        .iter()
        .filter_map(|c| {
            let i = c.knee.index?;
            let f = &c.points[i].figures;
            Some((
                ax.x(x_of(doc.axis, f)),
                format!("knee {}: {}", c.name(), x_label(doc.axis, f)),
            ))
        })
        .collect()
}

/// Renders the page.
pub fn render_html(doc: &SweepDoc, out: &mut dyn io::Write) -> io::Result<()> {
    let pools: Vec<&str> = doc.curves.iter().map(|c| c.name()).collect();
    let title = format!("cephbench sweep: {} on {}", doc.workload, pools.join(", "));
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width\">");
    h.push_str(&format!(
        "<title>{t}</title><style>{}</style></head><body>\n<h1>{t}</h1>\n",
        crate::report::page::CSS,
        t = esc(&title)
    ));
    let text = super::text::table(doc, false);
    let mut lines = text.lines();
    if let Some(first) = lines.next() {
        h.push_str(&format!("<p>{}</p>", esc(first)));
    }
    h.push_str("<ul>");
    for c in &doc.curves {
        h.push_str(&format!(
            "<li><b>{}</b>: {}</li>",
            esc(c.name()),
            esc(&c.knee.line)
        ));
    }
    h.push_str("</ul>");
    let rate = doc.axis == Axis::Rate;
    let x_label_axis = match (rate, XAxis::new(doc).log) {
        (true, false) => "asked rate, ops/s",
        (true, true) => "asked rate, ops/s (log scale)",
        (false, false) => "queue depth (ops in flight)",
        (false, true) => "queue depth (ops in flight, log scale)",
    };
    let (lat_title, lat_kind) = if rate {
        ("Latency from intended start", "latency from intended start")
    } else {
        ("Completion latency", "completion latency")
    };
    let ax = XAxis::new(doc);
    let (lat, thr) = series(doc, &ax);
    let cap = latency_cap(doc);
    h.push_str("<div class=\"plots\">");
    h.push_str(&svg::line_chart(&LineChart {
        title: format!("{lat_title} against the load"),
        x_label: x_label_axis.into(),
        y_label: format!("{lat_kind}, ms"),
        series: lat,
        x_ticks: ax.ticks(doc),
        shade: None,
        y_cap: cap,
        marks: knee_marks(doc, &ax),
    }));
    h.push_str(&svg::line_chart(&LineChart {
        title: "Achieved IOPS against the load".into(),
        x_label: x_label_axis.into(),
        y_label: "IOPS (ops/s)".into(),
        series: thr,
        x_ticks: ax.ticks(doc),
        shade: None,
        y_cap: None,
        marks: knee_marks(doc, &ax),
    }));
    h.push_str("</div>");
    if let Some(cap) = cap {
        h.push_str(&format!(
            "<p class=\"note\">The latency axis ends at {cap:.3} ms ({CAP}x the largest p99 \
             below the throughput ceiling); higher points are drawn at the top.</p>"
        ));
    }
    split_section(&mut h, doc);
    h.push_str("<h2>Points</h2><pre>");
    let rest: Vec<&str> = lines.collect();
    h.push_str(&esc(&crate::report::wrap(&rest.join("\n"), 120)));
    h.push_str("</pre></body></html>\n");
    out.write_all(h.as_bytes())
}

/// The latency series (p50, p99 and, on a rate sweep, the service p99) and
/// the throughput series (achieved, and on a rate sweep the asked rate) of
/// every curve, on the x axis `ax`.
fn series(doc: &SweepDoc, ax: &XAxis) -> (Vec<Series>, Vec<Series>) {
    let rate = doc.axis == Axis::Rate;
    let mut lat = Vec::new();
    let mut thr = Vec::new();
    for c in &doc.curves {
        let pts = |f: &dyn Fn(&super::Figures) -> Option<f64>| -> Vec<(f64, f64)> {
            c.points
                .iter()
                .filter_map(|p| f(&p.figures).map(|y| (ax.x(x_of(doc.axis, &p.figures)), y)))
                .collect()
        };
        lat.push(Series {
            name: format!("{} p50", c.name()),
            points: pts(&|f| Some(f.latency_ns.p50 as f64 / 1e6)),
        });
        lat.push(Series {
            name: format!("{} p99", c.name()),
            points: pts(&|f| Some(f.latency_ns.p99 as f64 / 1e6)),
        });
        if rate {
            lat.push(Series {
                name: format!("{} service p99", c.name()),
                points: pts(&|f| f.service_latency_ns.map(|s| s.p99 as f64 / 1e6)),
            });
        }
        thr.push(Series {
            name: format!("{} achieved", c.name()),
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
                .map(|x| (ax.x(*x), *x))
                .collect(),
        });
    }
    (lat, thr)
}

/// Where the mean went at each point, as stacked bars (nothing when no
/// point has a split).
fn split_section(h: &mut String, doc: &SweepDoc) {
    // The split per point: the OSD-side shares; the wait to be issued
    // (seconds past the ceiling) would flatten them: it is in the table.
    let parts: Vec<String> = SHARE_COLUMNS
        .iter()
        .map(|p| p.label().to_string())
        .collect();
    let rows: Vec<StackRow> = doc
        .curves
        .iter()
        .flat_map(|c| {
            c.points.iter().filter_map(move |p| {
                let s = p.split.as_ref()?;
                let segments: Vec<f64> = SHARE_COLUMNS
                    .iter()
                    .map(|part| s.ns(*part).unwrap_or(0.0) / 1e6)
                    .collect();
                let issued = (s.mean_ns - s.schedule_wait_ns) / 1e6;
                Some(StackRow {
                    label: format!("{} {}", c.name(), x_label(doc.axis, &p.figures)),
                    segments,
                    marker: Some((issued, format!("{issued:.3} ms"))),
                })
            })
        })
        .collect();
    if !rows.is_empty() {
        h.push_str("<h2>Where the mean went, per point</h2>");
        let what = if doc.axis == Axis::Rate {
            "from issue"
        } else {
            "completion latency"
        };
        h.push_str(&svg::stacked_bars(&StackedChart {
            title: format!("Split of the mean {what}"),
            x_label: "ms".into(),
            parts,
            rows,
        }));
        h.push_str(
            "<p class=\"note\">Each point's split comes from the OSDs' counters over that \
             point's run (see docs/explain.md, \"Where the time went\"); a negative unattributed \
             share is not drawn. The wait to be issued (the timer; past the ceiling, the \
             backlog) is the table's <code>wait ms</code> column.</p>",
        );
    }
}
