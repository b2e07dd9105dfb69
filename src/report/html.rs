//! `--format html`: one self-contained page (inline CSS, no scripts, no
//! network fetches) with plots rendered here as inline SVG ([`super::svg`]):
//! per job a completion-latency percentile curve and per-second IOPS and
//! latency timelines, per-OSD latency bars, the attribution as stacked bars,
//! and, for several results, comparison bars with Diff %.
#![forbid(unsafe_code)]

use std::io;

use super::page::{comparison_section, letter, open_page};
use super::svg::{self, esc, Bar, BarChart, BarGroup, LineChart, Series, StackRow};
use super::{workload_label, Reporter};
use crate::compare;
use crate::result::{BenchResult, JobReport, Part};
use crate::stats::decode_histogram;
use crate::suite::Suites;

/// The HTML reporter (one result per page; see [`render_page`] for several).
pub struct Html;

impl Reporter for Html {
    fn render(&self, result: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        render_page(&[(String::new(), result.clone())], out)
    }

    /// One page: the comparison, then each result.
    fn render_results(
        &self,
        results: &[(String, BenchResult)],
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        render_page(results, out)
    }

    /// One page: the comparison table, its bars and where the mean went.
    fn render_comparison(
        &self,
        c: &compare::Comparison,
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        let mut h = open_page(&format!(
            "cephbench: comparison of {} results",
            c.labels.len()
        ));
        comparison_section(&mut h, c, &[]);
        h.push_str("</body></html>\n");
        out.write_all(h.as_bytes())
    }

    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        super::suite_html::render_suites_page(s, out)
    }
}

/// Renders one page holding every result (`(source name, result)`; the
/// name, e.g. the file, may be empty), with comparison bars when there are
/// several.
pub fn render_page(results: &[(String, BenchResult)], out: &mut dyn io::Write) -> io::Result<()> {
    let title = match results {
        [(_, r)] => {
            let (w, p) = workload_label(r);
            format!("cephbench: {w} on {p}")
        }
        _ => format!("cephbench: {} results", results.len()),
    };
    let mut h = open_page(&title);
    if results.len() > 1 {
        let rs: Vec<BenchResult> = results.iter().map(|(_, r)| r.clone()).collect();
        let names: Vec<String> = results.iter().map(|(n, _)| n.clone()).collect();
        comparison_section(&mut h, &compare::compare(&rs), &names);
    }
    for (i, (name, r)) in results.iter().enumerate() {
        result_section(&mut h, i, results.len() > 1, name, r);
    }
    h.push_str("</body></html>\n");
    out.write_all(h.as_bytes())
}

/// One result's section: its head, summary, plots, split and OSDs (also
/// `diagnose`'s page, one per job).
pub fn result_section(h: &mut String, i: usize, several: bool, name: &str, r: &BenchResult) {
    let (w, p) = workload_label(r);
    let head = if several {
        format!("{}: {w} on {p}", letter(i))
    } else {
        format!("{w} on {p}")
    };
    h.push_str(&format!("<section><h2>{}</h2>\n", esc(&head)));
    if !name.is_empty() {
        h.push_str(&format!("<p class=\"note\">From {}</p>", esc(name)));
    }
    h.push_str(&format!(
        "<p>cephbench {} · cluster {} ({}) · client {} as {} · started {} (UTC)<br>\
         Latency is {}.</p>\n",
        esc(&r.tool.version),
        esc(&r.cluster.fsid),
        esc(r
            .cluster
            .ceph_version
            .as_deref()
            .unwrap_or("version unknown")),
        esc(&r.cluster.client_host),
        esc(&r.cluster.entity),
        crate::units::fmt_utc(r.started_unix),
        esc(&r.latency_definition)
    ));
    if let Some(line) = super::pool_line(r, true) {
        h.push_str(&format!("<p>{}</p>", esc(&line)));
    }
    if r.interrupted {
        h.push_str("<p class=\"warn\">Interrupted: partial results.</p>");
    }
    for w in &r.warnings {
        h.push_str(&format!("<p class=\"warn\">Warning: {}</p>", esc(w)));
    }
    if let Some(line) = super::not_quiet(r) {
        h.push_str(&format!("<p class=\"warn\">Cluster {}</p>", esc(&line)));
    }
    if let Some(c) = super::read_cache_line(r, true) {
        h.push_str(&format!("<p>{}</p>", esc(&c)));
    }
    for f in &r.findings {
        h.push_str(&format!("<p><b>Finding:</b> {}</p>", esc(f)));
    }
    summary_table(h, r);
    disruption_table(h, r);
    for j in &r.jobs {
        h.push_str(&format!(
            "<h3>{} ({})</h3><div class=\"plots\">",
            esc(&j.name),
            esc(&j.op)
        ));
        let (curve, from_hist) = percentile_curve(j);
        h.push_str(&percentile_chart(j, &curve, from_hist));
        let t = timelines(j);
        let mut marks = event_marks(r, t.iops.last().map_or(0.0, |p| p.0));
        marks.extend(change_marks(j));
        let shade = t.ramp.map(|t| (0.0, t, "ramp (excluded)".to_string()));
        let chart = |title: &str, y_label: &str, series: Vec<Series>| LineChart {
            title: title.into(),
            x_label: "time since start, s".into(),
            y_label: y_label.into(),
            series,
            x_ticks: None,
            shade: shade.clone(),
            y_cap: None,
            marks: marks.clone(),
        };
        let series = |name: &str, points: Points| Series {
            name: name.into(),
            points,
        };
        let interval = interval_label(j);
        h.push_str(&svg::line_chart(&chart(
            &format!("IOPS per {interval}"),
            "IOPS (ops/s)",
            vec![series("IOPS", t.iops)],
        )));
        h.push_str(&svg::line_chart(&chart(
            &format!("Mean completion latency per {interval}"),
            "completion latency, ms",
            vec![series("mean", t.mean)],
        )));
        if !t.p99.is_empty() {
            h.push_str(&svg::line_chart(&chart(
                &format!("p50 and p99 completion latency per {interval}"),
                "completion latency, ms",
                vec![series("p50", t.p50), series("p99", t.p99)],
            )));
        }
        h.push_str("</div>");
        for l in super::change_lines(r, j) {
            h.push_str(&format!("<p><b>Change:</b> {}</p>", esc(&l)));
        }
        h.push_str(&format!(
            "<p class=\"note\">Percentile curve {}. Timelines: one point per \
             sample, IOPS normalised by the sample's interval, p50 and p99 from each \
             interval's own histogram (intervals shorter than half the interval, i.e. the job's \
             last partial interval, left out of every plot).</p>\n",
            if from_hist {
                "from the job's HDR histogram"
            } else {
                "from the summary percentiles (no histogram in the result)"
            }
        ));
    }
    attribution(h, r);
    osd_bars(h, r);
    counter_timeline(h, r);
    h.push_str("</section>\n");
}

/// The timeline's sample length as a plot title says it: "second", or
/// "0.5 s interval" (the most common gap between samples, to 0.1 s).
fn interval_label(j: &JobReport) -> String {
    let d = crate::progress::typical_interval(&j.timeline);
    if d == 1.0 {
        "second".into()
    } else {
        format!("{d} s interval")
    }
}

fn summary_table(h: &mut String, r: &BenchResult) {
    // The in-flight column where some job's client fell short.
    let in_flight = super::shows_in_flight(r.jobs.iter().map(|j| j.client));
    h.push_str(&format!(
        "<table><tr><th>job</th><th>op</th><th>ops</th><th>errors</th>{}<th>IOPS</th>\
         <th>MiB/s</th><th>mean ms</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>\
         <th>p99.9 ms</th><th>max ms</th><th>stopped by</th></tr>",
        if in_flight { "<th>in flight</th>" } else { "" }
    ));
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    for j in &r.jobs {
        let l = &j.latency_ns;
        let cell = if in_flight {
            format!(
                "<td class=\"n\">{}</td>",
                esc(&super::in_flight_cell(j.client))
            )
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{cell}\
             <td class=\"n\">{:.1}</td><td class=\"n\">{:.3}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&j.name),
            esc(&j.op),
            j.ops,
            j.errors,
            j.iops,
            j.bytes_per_sec / f64::from(1u32 << 20),
            ms(l.mean),
            ms(l.p50 as f64),
            ms(l.p90 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
            ms(l.max as f64),
            esc(&j.stop_reason.replace('_', " "))
        ));
    }
    h.push_str("</table>\n");
    if in_flight {
        h.push_str(&format!(
            "<p class=\"note\">{}.</p>\n",
            esc(super::IN_FLIGHT_NOTE)
        ));
    }
}

/// Points per decade of the percentile curve's x axis.
const PER_DECADE: u32 = 10;
/// The curve stops at 99.9999%.
const MAX_NINES: f64 = 6.0;

/// The percentile curve of a job's completion latency as
/// (x = log10(1 / (1 − q)), latency ns): x = 0 is the minimum, 1 the 90th
/// percentile, 2 the 99th, ... up to what the op count supports. From the
/// serialized histogram when the result has one (never above the job's
/// exact max), otherwise from the summary percentiles. The flag says which.
pub fn percentile_curve(j: &JobReport) -> (Vec<(f64, u64)>, bool) {
    if let Some(hist) = j
        .histogram
        .as_deref()
        .and_then(|t| decode_histogram(t).ok())
    {
        let n = hist.len();
        if n > 0 {
            let xmax = (n as f64).log10().min(MAX_NINES);
            let steps = (xmax * f64::from(PER_DECADE)).floor() as u32;
            let cap = if j.latency_ns.max > 0 {
                j.latency_ns.max
            } else {
                u64::MAX
            };
            let pts = (0..=steps)
                .map(|k| {
                    let x = f64::from(k) / f64::from(PER_DECADE);
                    let q = 1.0 - 10f64.powf(-x);
                    (x, hist.value_at_quantile(q).min(cap))
                })
                .collect();
            return (pts, true);
        }
    }
    let l = &j.latency_ns;
    if j.ops == 0 {
        return (Vec::new(), false);
    }
    let mut pts = vec![
        (0.0, l.min),
        (2f64.log10(), l.p50),
        (1.0, l.p90),
        (2.0, l.p99),
        (3.0, l.p99_9),
    ];
    pts.retain(|(x, _)| *x <= (j.ops as f64).log10().max(1.0));
    (pts, false)
}

fn percentile_chart(j: &JobReport, curve: &[(f64, u64)], from_hist: bool) -> String {
    let xmax = curve.last().map_or(1.0, |p| p.0).ceil().max(1.0) as u32;
    let ticks = (0..=xmax)
        .map(|k| {
            let label = match k {
                0 => "0%".to_string(),
                k => format!("{}%", 100.0 - 100.0 * 10f64.powi(-(k as i32))),
            };
            (f64::from(k), label)
        })
        .collect();
    svg::line_chart(&LineChart {
        title: format!(
            "Completion latency by percentile{}",
            if from_hist { "" } else { " (summary)" }
        ),
        x_label: "percentile (log scale toward 100%)".into(),
        y_label: "completion latency, ms".into(),
        series: vec![Series {
            name: j.name.clone(),
            points: curve.iter().map(|(x, v)| (*x, *v as f64 / 1e6)).collect(),
        }],
        x_ticks: Some(ticks),
        shade: None,
        y_cap: None,
        marks: Vec::new(),
    })
}

/// (x, y) points of a plot.
pub type Points = Vec<(f64, f64)>;

/// A job's timeline as plot points, one per sample of at least half the
/// timeline's interval (the ramp's samples included, shaded; the short last
/// interval of a job's drain left out of every plot).
#[derive(Debug, Default, PartialEq)]
pub struct TimelinePoints {
    /// (t, IOPS): the sample's ops over its interval.
    pub iops: Points,
    /// (t, mean latency ms), samples with ops.
    pub mean: Points,
    /// (t, p50 ms), samples with a per-interval histogram.
    pub p50: Points,
    /// (t, p99 ms), as `p50`.
    pub p99: Points,
    /// The end of the ramp-up (the last ramp sample's time), if any.
    pub ramp: Option<f64>,
}

/// The plot points of `j`'s timeline.
pub fn timelines(j: &JobReport) -> TimelinePoints {
    let mut p = TimelinePoints::default();
    let mut prev = 0.0;
    let shortest = crate::progress::shortest_counted(&j.timeline);
    let ms = |ns: u64| ns as f64 / 1e6;
    for s in &j.timeline {
        let dt = s.t_s - prev;
        prev = s.t_s;
        if s.ramp {
            p.ramp = Some(s.t_s);
        }
        if dt < shortest {
            continue;
        }
        p.iops.push((s.t_s, s.ops as f64 / dt));
        if s.ops > 0 {
            p.mean.push((s.t_s, s.mean_latency_ns / 1e6));
        }
        if let (Some(p50), Some(p99)) = (s.p50_latency_ns, s.p99_latency_ns) {
            p.p50.push((s.t_s, ms(p50)));
            p.p99.push((s.t_s, ms(p99)));
        }
    }
    p
}

fn attribution(h: &mut String, r: &BenchResult) {
    let jobs: Vec<&JobReport> = r.jobs.iter().filter(|j| j.attribution.is_some()).collect();
    if jobs.is_empty() {
        return;
    }
    // The parts any job has a share for (e.g. no `client` when it is not
    // measured on its own), in path order.
    let parts: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|p| {
            jobs.iter().any(|j| {
                j.attribution
                    .iter()
                    .flat_map(|a| &a.shares)
                    .any(|s| s.part == *p)
            })
        })
        .collect();
    h.push_str("<h3>Where the mean completion latency went</h3>");
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    h.push_str("<table><tr><th>job</th><th>mean ms</th>");
    for p in &parts {
        h.push_str(&format!("<th>{} ms</th>", esc(p.label())));
    }
    h.push_str("</tr>");
    for j in &jobs {
        let a = j.attribution.as_ref().expect("filtered");
        let label = compare::job_label(&format!("{}/{}", j.name, j.op));
        let by_part: Vec<f64> = parts
            .iter()
            .map(|p| {
                a.shares
                    .iter()
                    .filter(|s| s.part == *p)
                    .map(|s| s.ns / 1e6)
                    .sum()
            })
            .collect();
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{:.3}</td>",
            esc(&label),
            a.mean_ns / 1e6
        ));
        for v in &by_part {
            h.push_str(&format!("<td class=\"n\">{v:.3}</td>"));
        }
        h.push_str("</tr>");
        for (p, v) in parts.iter().zip(&by_part) {
            if *v < 0.0 {
                notes.push(format!(
                    "{label}: {} is {v:.3} ms (negative: the measured parts add up to \
                     more than the client's mean, so they overlap); not drawn",
                    p.label()
                ));
            }
        }
        for n in &a.notes {
            notes.push(format!("{label}: {n}"));
        }
        rows.push(StackRow {
            label,
            segments: by_part,
            marker: Some((a.mean_ns / 1e6, format!("mean {:.3} ms", a.mean_ns / 1e6))),
        });
    }
    h.push_str("</table>");
    h.push_str(&svg::stacked_bars(&svg::StackedChart {
        title: "Attribution of the mean completion latency".into(),
        x_label: "completion latency, ms".into(),
        parts: parts.iter().map(|p| p.label().to_string()).collect(),
        rows,
    }));
    if !notes.is_empty() {
        h.push_str("<ul class=\"note\">");
        for n in notes {
            h.push_str(&format!("<li>{}</li>", esc(&n)));
        }
        h.push_str("</ul>");
    }
    what_if(h, r);
    h.push('\n');
}

/// Each job's what-if projections, a line each with its source and
/// assumptions folded under it.
fn what_if(h: &mut String, r: &BenchResult) {
    if r.jobs
        .iter()
        .all(|j| j.projections.as_deref().unwrap_or_default().is_empty())
    {
        return;
    }
    h.push_str("<h3>What if</h3>");
    for j in &r.jobs {
        for p in j.projections.iter().flatten() {
            h.push_str(&format!(
                "<details class=\"whatif\"><summary><b>{}:</b> {}</summary><p class=\"note\">\
                 From {}. Assuming {}.{}</p></details>\n",
                esc(&j.name),
                esc(&p.line()),
                esc(&p.reference),
                esc(&p.assumptions.join("; ")),
                if p.projected_iops.is_some() {
                    format!(" IOPS: {}.", esc(&p.iops_basis))
                } else {
                    String::new()
                }
            ));
        }
    }
}

fn osd_bars(h: &mut String, r: &BenchResult) {
    let groups: Vec<BarGroup> = r
        .osds
        .iter()
        .flat_map(|o| {
            o.client.iter().map(move |c| BarGroup {
                label: format!("osd.{} {}", o.osd, c.op),
                bars: vec![
                    Some(Bar {
                        value: c.mean_ns / 1e6,
                        note: format!("{:.3}", c.mean_ns / 1e6),
                    }),
                    Some(Bar {
                        value: c.p99_ns as f64 / 1e6,
                        note: format!("{:.3}", c.p99_ns as f64 / 1e6),
                    }),
                ],
            })
        })
        .collect();
    if groups.is_empty() {
        return;
    }
    h.push_str("<h3>Per OSD (client completion latency by primary OSD)</h3>");
    h.push_str(&svg::bar_chart(&BarChart {
        title: "Completion latency by primary OSD".into(),
        y_label: "completion latency, ms".into(),
        series: vec!["mean".into(), "p99".into()],
        groups,
    }));
    osd_table(h, r);
    h.push('\n');
}

/// One row per OSD and op kind: the client's figures and the OSD's drive.
fn osd_table(h: &mut String, r: &BenchResult) {
    let with_cpu = crate::explain::cpu::any(r);
    h.push_str("<table><tr><th>osd</th><th>op</th><th>ops</th><th>mean ms</th><th>p99 ms</th>");
    if with_cpu {
        h.push_str("<th>CPU cores</th><th>CPU µs/client op</th><th>CPU µs/OSD op</th>");
    }
    h.push_str("<th>device</th></tr>");
    for (o, c) in super::osd_rows(r) {
        let device = o
            .device
            .as_ref()
            .map_or_else(|| "-".into(), |d| d.summary());
        let cpu: String = if with_cpu {
            crate::explain::cpu::cells(o.cpu.as_ref())
                .iter()
                .map(|c| format!("<td class=\"n\">{}</td>", esc(c)))
                .collect()
        } else {
            String::new()
        };
        match c {
            Some(c) => h.push_str(&format!(
                "<tr><td>osd.{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td>\
                 <td class=\"n\">{:.3}</td>{cpu}<td>{}</td></tr>",
                o.osd,
                esc(&c.op),
                c.ops,
                c.mean_ns / 1e6,
                c.p99_ns as f64 / 1e6,
                esc(&device)
            )),
            None => h.push_str(&format!(
                "<tr><td>osd.{}</td><td>-</td><td class=\"n\">0</td><td class=\"n\">-</td>\
                 <td class=\"n\">-</td>{cpu}<td>{}</td></tr>",
                o.osd,
                esc(&device)
            )),
        }
    }
    h.push_str("</table>");
    if let Some(line) = crate::explain::whatif::plp_line_of(r) {
        h.push_str(&format!("<p>{}</p>", esc(&line)));
    }
    if let Some(line) = crate::explain::cpu::pool_line(r) {
        h.push_str(&format!("<p>{}</p>", esc(&line)));
    }
}

/// Each OSD's own op latency (`op_w_latency`, else `op_r_latency`) per
/// `--counter-interval`: where a slow OSD shows when it became slow.
fn counter_timeline(h: &mut String, r: &BenchResult) {
    let pick = |write: bool| {
        osd_series(r, |s| {
            let c = &s.counters;
            let d = if write {
                c.op_w_latency
            } else {
                c.op_r_latency
            };
            d.filter(|_| !c.reset)?.mean_ns.map(|ns| ns / 1e6)
        })
    };
    let (series, counter) = match pick(true) {
        s if !s.is_empty() => (s, "op_w_latency"),
        _ => (pick(false), "op_r_latency"),
    };
    if series.is_empty() {
        return;
    }
    h.push_str("<h3>OSD counters over time</h3><div class=\"plots\">");
    h.push_str(&svg::line_chart(&LineChart {
        title: format!("Each OSD's own mean {counter} per counter interval"),
        x_label: "time since start, s (the job's clock)".into(),
        y_label: format!("{counter} (OSD receive → reply), ms"),
        series,
        x_ticks: None,
        shade: None,
        y_cap: None,
        marks: Vec::new(),
    }));
    // The OSD processes' CPU per interval, where measured.
    let cpu = osd_series(r, |s| {
        s.cpu_s
            .filter(|_| s.interval_s > 0.0)
            .map(|c| c / s.interval_s)
    });
    if !cpu.is_empty() {
        h.push_str(&svg::line_chart(&LineChart {
            title: "Each OSD process's CPU per counter interval".into(),
            x_label: "time since start, s (the job's clock)".into(),
            y_label: "cores busy (utime + stime / interval)".into(),
            series: cpu,
            x_ticks: None,
            shade: None,
            y_cap: None,
            marks: Vec::new(),
        }));
    }
    h.push_str(
        "</div><p class=\"note\">One point per interval, at its end: the OSD's \
         Δsum / Δcount over that interval (intervals with no ops or a counter reset left out).</p>\n",
    );
}

/// One series per OSD of the values `point` gives its counter samples, at
/// their ends (OSDs without any left out).
fn osd_series(
    r: &BenchResult,
    point: impl Fn(&crate::result::counters::CounterSample) -> Option<f64>,
) -> Vec<Series> {
    r.osds
        .iter()
        .map(|o| Series {
            name: format!("osd.{}", o.osd),
            points: o
                .timeline
                .iter()
                .filter_map(|s| Some((s.t_s, point(s)?)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Marks on a job's timelines for what was not quiet in the cluster
/// ([`crate::result::cluster::ClusterState`]): one at each event's start
/// (within `0..=end`), labelled with what and when.
fn event_marks(r: &BenchResult, end: f64) -> Vec<(f64, String)> {
    let mut marks: Vec<(f64, String)> = r.cluster_state.as_ref().map_or_else(Vec::new, |c| {
        c.events
            .iter()
            .map(|e| (e.from_s.clamp(0.0, end.max(0.0)), c.label(e)))
            .collect()
    });
    // `--disrupt`: a mark where each action took effect, and at active+clean.
    if let Some(d) = &r.disruption {
        for a in &d.actions {
            if let Some(t) = a.done_s.filter(|t| *t <= end) {
                let what = if a.on_exit {
                    format!("osd.{} {} (on exit)", d.osd, a.action)
                } else {
                    format!("osd.{} {}", d.osd, a.action)
                };
                marks.push((t.max(0.0), format!("{what} at {t:.1} s")));
            }
        }
        if let Some(t) = d.recovery.clean_at_s.filter(|t| *t <= end) {
            marks.push((t, format!("active+clean at {t:.0} s")));
        }
    }
    marks
}

/// `--disrupt`: the actions, each job's figures per phase, recovery.
fn disruption_table(h: &mut String, r: &BenchResult) {
    let Some(d) = &r.disruption else {
        return;
    };
    h.push_str(&format!(
        "<h3>Disruption: {}</h3><p>Actions: {}</p><table>",
        esc(&d.spec),
        esc(&d.actions_line())
    ));
    for (k, line) in super::disruption_lines(d).iter().enumerate() {
        h.push_str("<tr>");
        for (i, c) in line.iter().enumerate() {
            let (tag, class) = match (k, i) {
                (0, _) => ("th", ""),
                (_, 0..=2) => ("td", ""),
                _ => ("td", " class=\"n\""),
            };
            h.push_str(&format!("<{tag}{class}>{}</{tag}>", esc(c)));
        }
        h.push_str("</tr>");
    }
    h.push_str(&format!(
        "</table><p>Recovery: {}</p><p class=\"note\">{}.</p>\n",
        esc(&d.recovery_line()),
        esc(super::DISRUPTION_NOTE)
    ));
}

/// Marks on a job's timelines where each lasting change began, labelled
/// with its IOPS move.
fn change_marks(j: &JobReport) -> Vec<(f64, String)> {
    j.changes
        .iter()
        .flatten()
        .map(|c| {
            (
                c.t_s,
                format!("change at {:.0} s: IOPS {}", c.t_s, c.iops_move()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{encode_histogram, LatencyRecorder, LatencySummary};

    fn job_with(values: &[u64]) -> JobReport {
        let mut rec = LatencyRecorder::new();
        for v in values {
            rec.record(*v);
        }
        JobReport {
            client: None,
            per_second: None,
            end_flush: None,
            name: "j".into(),
            op: "write".into(),
            ops: values.len() as u64,
            errors: 0,
            bytes: 0,
            elapsed_s: 1.0,
            iops: 0.0,
            bytes_per_sec: 0.0,
            latency_ns: rec.summary(),
            stop_reason: "duration".into(),
            verify_mismatches: None,
            short_reads: 0,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: 0.0,
            slow_ops: 0,
            slow_op_s: 1.0,
            timeline: vec![],
            histogram: Some(encode_histogram(rec.histogram())),
            attribution: None,
            service_latency_ns: None,
            rate: None,
            changes: None,
            projections: None,
        }
    }

    /// The curve's points are the raw data's percentiles (nearest rank)
    /// within the histogram's 0.1%.
    #[test]
    fn percentile_curve_matches_raw_values() {
        let mut x: u64 = 88_172_645_463_325_252;
        let values: Vec<u64> = (0..20_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = 500_000 + x % 2_000_000;
                if i % 50 == 0 {
                    v * 10
                } else {
                    v
                }
            })
            .collect();
        let j = job_with(&values);
        let (pts, from_hist) = percentile_curve(&j);
        assert!(from_hist);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        // 20000 ops support log10(20000) = 4.3 decades: 44 points.
        assert_eq!(pts.len(), 44);
        for (x, got) in &pts {
            let q = 1.0 - 10f64.powf(-x);
            let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
            let want = sorted[rank - 1];
            let err = (*got as f64 - want as f64).abs() / want as f64;
            assert!(err <= 0.001, "x {x}: got {got}, want {want}");
        }
        assert!(pts.iter().all(|(_, v)| *v <= j.latency_ns.max));
    }

    #[test]
    fn percentile_curve_falls_back_to_the_summary() {
        let mut j = job_with(&[1_000_000; 5000]);
        j.histogram = None;
        j.latency_ns = LatencySummary {
            min: 1,
            mean: 5.0,
            stddev: 0.0,
            p50: 2,
            p90: 3,
            p99: 4,
            p99_9: 5,
            max: 6,
        };
        let (pts, from_hist) = percentile_curve(&j);
        assert!(!from_hist);
        let ys: Vec<u64> = pts.iter().map(|p| p.1).collect();
        assert_eq!(ys, vec![1, 2, 3, 4, 5]);
    }

    /// Every timeline plot leaves out intervals under 0.5 s (the drain's
    /// last partial interval: its few slow ops made a spike at the end of
    /// the mean plot); p50 and p99 come from the samples.
    #[test]
    fn timeline_plots_leave_out_short_intervals() {
        use crate::progress::Sample;
        let mut j = job_with(&[1_000_000]);
        let s = |t_s: f64, ops: u64, p99: Option<u64>| Sample {
            t_s,
            ops,
            mean_latency_ns: 2e6,
            p50_latency_ns: p99.map(|p| p / 4),
            p99_latency_ns: p99,
            max_latency_ns: p99,
            ..Default::default()
        };
        j.timeline = vec![
            s(0.5, 100, Some(8_000_000)),
            s(1.5, 300, Some(9_000_000)),
            s(2.5, 0, None),
            s(2.6, 3, Some(90_000_000)),
        ];
        let t = timelines(&j);
        assert_eq!(t.iops, vec![(0.5, 200.0), (1.5, 300.0), (2.5, 0.0)]);
        assert_eq!(t.mean, vec![(0.5, 2.0), (1.5, 2.0)]);
        assert_eq!(t.p99, vec![(0.5, 8.0), (1.5, 9.0)]);
        assert_eq!(t.p50, vec![(0.5, 2.0), (1.5, 2.25)]);
        assert_eq!(interval_label(&j), "second");
        j.timeline = (1..=6).map(|i| s(i as f64 * 0.5, 10, Some(1))).collect();
        assert_eq!(interval_label(&j), "0.5 s interval");
        assert_eq!(timelines(&j).p99.len(), 6);
    }
}
