//! The sweep as a table: one row per point, per pool, and the knee line
//! (`--format text` for a terminal, `--format markdown` for a forum post).
#![forbid(unsafe_code)]

use std::io;

use super::{fmt_rate, Axis, Curve, SweepDoc};
use crate::result::Part;

/// The split columns: (header, part) — the shares that move with load
/// (the others are in the JSON and the HTML page).
const SPLIT: [(&str, Part); 2] = [("queue", Part::OsdQueue), ("flush", Part::DeviceFlush)];

fn cells(doc: &SweepDoc, c: &Curve) -> (Vec<String>, Vec<Vec<String>>) {
    let rate = doc.axis == Axis::Rate;
    let (x, iops) = if rate {
        ("asked/s", "achieved")
    } else {
        ("QD", "IOPS")
    };
    let mut head: Vec<String> = [x, iops, "p50 ms", "p99 ms", "p99.9 ms"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if rate {
        head.push("svc p99".into());
    }
    head.extend(SPLIT.iter().map(|(h, _)| format!("{h} ms")));
    if rate {
        head.push("wait ms".into());
    }
    head.push(String::new());
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    let rows = c
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = &p.figures;
            let mut r = vec![
                if rate {
                    fmt_rate(f.asked_rate.unwrap_or(0.0))
                } else {
                    f.qd.to_string()
                },
                format!("{:.1}", f.achieved_iops),
                ms(f.latency_ns.p50 as f64),
                ms(f.latency_ns.p99 as f64),
                ms(f.latency_ns.p99_9 as f64),
            ];
            if rate {
                r.push(
                    f.service_latency_ns
                        .map_or("-".into(), |s| ms(s.p99 as f64)),
                );
            }
            for (_, part) in SPLIT {
                r.push(
                    p.split
                        .as_ref()
                        .and_then(|s| s.ns(part))
                        .map_or("-".into(), ms),
                );
            }
            if rate {
                r.push(
                    p.split
                        .as_ref()
                        .map_or("-".into(), |s| ms(s.schedule_wait_ns)),
                );
            }
            let mut flag = Vec::new();
            if c.knee.index == Some(i) {
                flag.push("<- knee");
            }
            if f.overload {
                // What happened there is said in words under the table.
                flag.push("overloaded");
            }
            if p.result.interrupted {
                flag.push("(interrupted)");
            }
            r.push(flag.join(" "));
            r
        })
        .collect();
    (head, rows)
}

/// Writes the sweep's table(s) and knee line(s); text lines longer than
/// the report width are wrapped.
pub fn render_table(doc: &SweepDoc, markdown: bool, out: &mut dyn io::Write) -> io::Result<()> {
    let s = table(doc, markdown);
    let s = if markdown {
        s
    } else {
        crate::report::wrap(&s, crate::report::TEXT_WIDTH)
    };
    out.write_all(s.as_bytes())
}

/// The table(s) and knee line(s), lines unwrapped.
pub(super) fn table(doc: &SweepDoc, markdown: bool) -> String {
    let mut s = String::new();
    let s_ = &mut s;
    heading(s_, doc, markdown);
    for c in &doc.curves {
        line(s_, "");
        let (head, rows) = cells(doc, c);
        if markdown {
            markdown_curve(s_, c, &head, &rows);
        } else {
            text_curve(s_, c, &head, &rows);
        }
        for p in &c.points {
            if let Some(w) = super::overload_words(&p.figures) {
                let at = super::x_label(doc.axis, &p.figures);
                line(s_, &format!("  overloaded at {at}: {w}"));
            }
        }
        for n in &c.knee.notes {
            line(s_, &format!("  note: {n}"));
        }
        if let Some(why) = &c.stopped {
            line(s_, &format!("  {why}"));
        }
    }
    if doc.curves.len() > 1 {
        line(s_, "");
        let knees: Vec<String> = doc
            .curves
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c.name(),
                    c.knee.index.map_or("none".into(), |i| super::x_label(
                        doc.axis,
                        &c.points[i].figures
                    ))
                )
            })
            .collect();
        line(s_, &format!("Knees: {}", knees.join(", ")));
    }
    if doc.interrupted {
        line(
            s_,
            "INTERRUPTED: the sweep was cut short; the points above are what was measured",
        );
    }
    s
}

fn line(s: &mut String, l: &str) {
    s.push_str(l);
    s.push('\n');
}

/// What was swept and how, what the latency is, and the p99 target.
fn heading(s: &mut String, doc: &SweepDoc, markdown: bool) {
    let what = match doc.axis {
        Axis::Rate => format!(
            "open loop at rising rates, at most {} in flight, {} arrivals",
            doc.settings.concurrency.unwrap_or(0),
            doc.settings.arrival.as_deref().unwrap_or("uniform")
        ),
        Axis::Qd => "closed loop at rising queue depths".into(),
    };
    let head = format!(
        "Sweep: {}, {what}; {} per point after a {} ramp",
        doc.workload,
        super::secs(doc.settings.duration_s),
        super::secs(doc.settings.ramp_s)
    );
    if markdown {
        line(s, &format!("### {head}"));
        line(s, "");
    } else {
        line(s, &head);
    }
    let latency = match doc.axis {
        Axis::Rate => {
            "latency from each op's intended start; svc = service time (submit -> completion); \
             split of the mean: OSD queue, device flush, wait = waiting to be issued"
        }
        Axis::Qd => {
            "completion latency (submit -> completion); split of the mean: OSD queue, device flush"
        }
    };
    line(s, latency);
    if let Some(t) = doc.settings.p99_target_ns {
        line(s, &format!("p99 target: {:.3} ms", t as f64 / 1e6));
    }
}

/// One curve as a Markdown table, its knee line under it.
fn markdown_curve(s: &mut String, c: &Curve, head: &[String], rows: &[Vec<String>]) {
    line(s, &format!("**{}**", c.where_ran()));
    line(s, "");
    let h: Vec<&str> = head.iter().map(|h| h.as_str()).collect();
    line(s, &format!("| {} |", h.join(" | ")));
    line(
        s,
        &format!(
            "|{}",
            head.iter()
                .enumerate()
                .map(|(i, _)| if i + 1 == head.len() { "---|" } else { "---:|" })
                .collect::<String>()
        ),
    );
    for r in rows {
        line(s, &format!("| {} |", r.join(" | ")));
    }
    line(s, "");
    line(s, &format!("**{}**", c.knee.line));
}

/// One curve as a text table, columns as wide as their widest cell, its
/// knee line under it.
fn text_curve(s: &mut String, c: &Curve, head: &[String], rows: &[Vec<String>]) {
    line(s, &format!("{}:", c.where_ran()));
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let fmt = |r: &[String]| {
        let mut l = String::from(" ");
        for (i, v) in r.iter().enumerate() {
            if i + 1 == r.len() {
                if !v.is_empty() {
                    l.push_str("  ");
                    l.push_str(v);
                }
            } else {
                l.push_str(&format!(" {v:>w$}", w = widths[i]));
            }
        }
        l
    };
    line(s, &fmt(head));
    for r in rows {
        line(s, &fmt(r));
    }
    line(s, &format!("  {}", c.knee.line));
}
