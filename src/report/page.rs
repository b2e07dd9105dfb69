//! What every HTML page shares: the head with its style, the letters that
//! name the results, and the comparison section (table, bars, where the mean
//! moved). Used by the results page ([`super::html`]) and the suites' page
//! ([`super::suite_html`]).
#![forbid(unsafe_code)]

use super::svg::{self, esc, num, Bar, BarChart, BarGroup};
use crate::compare;

/// The page's head and title.
pub fn open_page(title: &str) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width\">");
    h.push_str(&format!(
        "<title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    ));
    h
}

/// The page's style sheet (also used by the sweep page).
pub const CSS: &str =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1180px}\
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}\
h3{font-size:1.05em;margin-bottom:.3em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.plots{display:flex;flex-wrap:wrap;gap:12px}.note{color:#555;font-size:.9em}\
.warn{color:#a40000;font-weight:bold}\
svg{background:#fff;border:1px solid #eee;font-size:11px}svg text{fill:#222}\
svg .t{font-size:13px;font-weight:bold}svg .s{font-size:10px}\
svg .g{stroke:#e4e4e4}svg .a{stroke:#444}svg .m{stroke:#000;stroke-width:2;stroke-dasharray:3 2}\
svg .ramp{fill:#eee}";

/// The letter that names result `i` on a page (A, B, ...).
pub fn letter(i: usize) -> char {
    char::from(b'A' + (i % 26) as u8)
}

/// The comparison: its sources (with the file each came from, `names`,
/// where given), bars of IOPS and latency, the table and the evidence.
pub fn comparison_section(h: &mut String, c: &compare::Comparison, names: &[String]) {
    h.push_str("<section><h2>Comparison</h2><ul>");
    for (i, l) in c.labels.iter().enumerate() {
        let src = match names.get(i) {
            Some(name) if !name.is_empty() => {
                format!(" <span class=\"note\">({})</span>", esc(name))
            }
            _ => String::new(),
        };
        h.push_str(&format!("<li><b>{}</b>: {}{src}</li>", letter(i), esc(l)));
    }
    h.push_str("</ul>");
    for n in &c.notes {
        h.push_str(&format!("<p class=\"note\">Note: {}</p>", esc(n)));
    }
    let series: Vec<String> = (0..c.labels.len()).map(|i| letter(i).to_string()).collect();
    let bars = |figure: &str, label: &dyn Fn(&str) -> String| -> Vec<BarGroup> {
        c.rows
            .iter()
            .filter(|r| r.figure == figure)
            .map(|r| BarGroup {
                label: label(&compare::job_label(&r.job)),
                bars: r
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        v.map(|v| Bar {
                            value: v,
                            note: match r.diff_pct[i] {
                                Some(d) if i > 0 => format!("{} ({d:+.1}%)", num(v)),
                                _ => num(v),
                            },
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    h.push_str("<div class=\"plots\">");
    h.push_str(&svg::bar_chart(&BarChart {
        title: "IOPS per job (Diff % against A)".into(),
        y_label: "IOPS (ops/s)".into(),
        series: series.clone(),
        groups: bars("IOPS", &|j| j.to_string()),
    }));
    let mut lat = bars("mean lat ms", &|j| format!("{j} mean"));
    lat.extend(bars("p99 lat ms", &|j| format!("{j} p99")));
    h.push_str(&svg::bar_chart(&BarChart {
        title: "Mean and p99 completion latency (Diff % against A)".into(),
        y_label: "completion latency, ms".into(),
        series,
        groups: lat,
    }));
    h.push_str("</div><table><tr><th>job</th><th>figure</th>");
    for i in 0..c.labels.len() {
        h.push_str(&format!("<th>{}</th>", letter(i)));
        if i > 0 {
            h.push_str(&format!("<th>Diff {}</th>", letter(i)));
        }
    }
    h.push_str("</tr>");
    for r in &c.rows {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td>",
            esc(&compare::job_label(&r.job)),
            esc(r.figure)
        ));
        for i in 0..r.values.len() {
            h.push_str(&format!("<td class=\"n\">{}</td>", compare::fmt_cell(r, i)));
            if i > 0 {
                h.push_str(&format!(
                    "<td class=\"n\">{}</td>",
                    esc(&compare::fmt_diff(r.diff_pct[i], r.significant[i]))
                ));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str(&format!(
        "</table><p class=\"note\">* = {}; ~ = within the noise.</p>\n",
        esc(c.method)
    ));
    evidence(h, c);
    if !c.projections.is_empty() || !c.projections_left_out.is_empty() {
        h.push_str(
            "<h3>What if</h3><p class=\"note\">Each side with the other side's OSD queue, OSD \
             local, device flush and replica shares, and its unattributed time when one client \
             host ran both, its own network kept; like jobs only.</p><ul>",
        );
        for p in &c.projections {
            h.push_str(&format!(
                "<li>{}: {}</li>",
                esc(&compare::job_label(&p.job)),
                esc(&p.line())
            ));
        }
        for l in &c.projections_left_out {
            h.push_str(&format!("<li>{}</li>", esc(l)));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

/// Where each job's mean moved, share by share, the headline, and the
/// drives behind each source.
fn evidence(h: &mut String, c: &compare::Comparison) {
    let n = c.labels.len();
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    for m in &c.moved {
        h.push_str(&format!(
            "<h3>{}: where the mean went (ms)</h3><table><tr><th>part</th>",
            esc(&compare::job_label(&m.job))
        ));
        for i in 0..n {
            h.push_str(&format!("<th>{}</th>", letter(i)));
            if i > 0 {
                h.push_str(&format!("<th>moved {}</th><th>% of diff</th>", letter(i)));
            }
        }
        h.push_str("</tr>");
        let mut row = |name: &str, v: &[Option<f64>], pct: Option<&[Option<f64>]>| {
            h.push_str(&format!("<tr><td>{}</td>", esc(name)));
            for i in 0..n {
                h.push_str(&format!("<td class=\"n\">{}</td>", ms(v[i])));
                if i > 0 {
                    let moved = match (v[0], v[i]) {
                        (Some(a), Some(b)) => format!("{:+.3}", b - a),
                        _ => "-".into(),
                    };
                    let p = compare::pct_of_diff_cell(c, m, pct.and_then(|p| p[i]), i);
                    h.push_str(&format!(
                        "<td class=\"n\">{moved}</td><td class=\"n\">{p}</td>"
                    ));
                }
            }
            h.push_str("</tr>");
        };
        for p in &m.parts {
            row(p.part.label(), &p.ms, Some(&p.pct_of_diff));
        }
        row("= mean", &m.mean_ms, None);
        h.push_str("</table>");
    }
    for l in compare::headlines(c) {
        h.push_str(&format!("<p><b>{}</b></p>", esc(&l)));
    }
    if !c.osds.is_empty() {
        h.push_str(
            "<h3>Drives</h3><table><tr><th></th><th>OSD</th><th>device flush ms</th>\
             <th>kv sync ms</th><th>drive</th></tr>",
        );
        for o in &c.osds {
            h.push_str(&format!(
                "<tr><td>{}</td><td>osd.{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                letter(o.source),
                o.osd,
                ms(o.device_flush_ms),
                ms(o.kv_sync_ms),
                esc(o.drive.as_deref().unwrap_or("-"))
            ));
        }
        h.push_str(
            "</table><p class=\"note\">device flush: the flush share of each write the OSD was \
             primary for; kv sync: BlueStore's device flush + WAL commit round; means over the runs.</p>",
        );
    }
}
