//! A small SVG plotting kit for the HTML report: line charts, grouped bar
//! charts and horizontal stacked bars, each rendered by a pure function to
//! one self-contained `<svg>` element (no scripts, no external resources).
//! Every piece of text is escaped with [`esc`].
#![forbid(unsafe_code)]

use std::fmt::Write as _;

/// Colours, in series order (colour-blind friendly: Okabe–Ito).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#999999",
];

const W: f64 = 560.0;
const H: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 48.0;

/// Escapes text for HTML and SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for a label: 3 significant digits, no exponent.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || !v.is_finite() {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A coordinate, one decimal.
fn c(v: f64) -> String {
    format!("{v:.1}")
}

/// Round tick positions covering `0..=max` (about five), the last ≥ `max`.
pub fn ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) in axis units.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with a linear y axis from 0.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// x axis label, with unit.
    pub x_label: String,
    /// y axis label, with unit.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// x ticks as (position, label); `None`: round numbers from `x_min`.
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// A shaded x range with its label (e.g. the ramp-up).
    pub shade: Option<(f64, f64, String)>,
    /// Top of the y axis: larger values are drawn at the top (clipped);
    /// `None`: the largest value.
    pub y_cap: Option<f64>,
    /// Dashed vertical marks at these x values, with their labels.
    pub marks: Vec<(f64, String)>,
}

fn open(out: &mut String, title: &str, h: f64) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" \
         role=\"img\" aria-label=\"{t}\"><title>{t}</title>\
         <text x=\"{x}\" y=\"18\" class=\"t\" text-anchor=\"middle\">{t}</text>",
        t = esc(title),
        x = c(W / 2.0),
    );
}

fn y_axis(out: &mut String, label: &str, ymax: f64, h: f64) -> f64 {
    let ts = ticks(ymax);
    let top = *ts.last().unwrap_or(&1.0);
    let bottom = h - BOTTOM;
    for t in &ts {
        let y = bottom - t / top * (bottom - TOP);
        let _ = write!(
            out,
            "<line x1=\"{l}\" x2=\"{r}\" y1=\"{y}\" y2=\"{y}\" class=\"g\"/>\
             <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\">{v}</text>",
            l = c(LEFT),
            r = c(W - RIGHT),
            y = c(y),
            tx = c(LEFT - 4.0),
            ty = c(y + 4.0),
            v = num(*t)
        );
    }
    let cy = (TOP + bottom) / 2.0;
    let _ = write!(
        out,
        "<text x=\"14\" y=\"{cy}\" transform=\"rotate(-90 14 {cy})\" text-anchor=\"middle\">{}</text>",
        esc(label),
        cy = c(cy)
    );
    top
}

/// Lays the legend out from `y` on, wrapping to new rows of 16 px; returns
/// the rows used.
fn legend(out: &mut String, names: &[String], y: f64) -> usize {
    legend_from(out, names, LEFT, y)
}

/// The width one row of [`legend`] takes for `names`.
fn legend_width(names: &[String]) -> f64 {
    names
        .iter()
        .map(|n| 24.0 + 6.5 * n.chars().count() as f64)
        .sum()
}

/// [`legend`] starting at `x0` (rows after the first start at the left).
fn legend_from(out: &mut String, names: &[String], x0: f64, y: f64) -> usize {
    let mut x = x0;
    let mut y = y;
    let mut rows = 1;
    for (i, n) in names.iter().enumerate() {
        let w = 24.0 + 6.5 * n.chars().count() as f64;
        if x > LEFT && x + w > W - RIGHT {
            x = LEFT;
            y += 16.0;
            rows += 1;
        }
        let _ = write!(
            out,
            "<rect x=\"{x}\" y=\"{ry}\" width=\"10\" height=\"10\" fill=\"{f}\"/>\
             <text x=\"{tx}\" y=\"{y}\">{n}</text>",
            x = c(x),
            ry = c(y - 9.0),
            f = PALETTE[i % PALETTE.len()],
            tx = c(x + 14.0),
            y = c(y),
            n = esc(n)
        );
        x += w;
    }
    rows
}

/// The rows [`legend`] will use for `names`.
fn legend_rows(names: &[String]) -> usize {
    legend(&mut String::new(), names, 0.0)
}

/// A dashed marker line at `x` from `y.0` to `y.1`, its label at height
/// `ty`: labels right of `mid` end at the line, the others start there, so
/// they stay inside the plot.
fn mark(out: &mut String, x: f64, y: (f64, f64), ty: f64, mid: f64, label: &str) {
    let right = x > mid;
    let _ = write!(
        out,
        "<line x1=\"{x}\" x2=\"{x}\" y1=\"{y0}\" y2=\"{y1}\" class=\"m\"/>\
         <text x=\"{tx}\" y=\"{ty}\" class=\"s\" text-anchor=\"{anchor}\">{l}</text>",
        x = c(x),
        y0 = c(y.0),
        y1 = c(y.1),
        anchor = if right { "end" } else { "start" },
        tx = c(if right { x - 3.0 } else { x + 3.0 }),
        ty = c(ty),
        l = esc(label)
    );
}

/// Renders a line chart.
pub fn line_chart(ch: &LineChart) -> String {
    let mut out = String::new();
    open(&mut out, &ch.title, H);
    let (x0, x1, ymax) = extent(ch);
    let ytop = y_axis(&mut out, &ch.y_label, ymax, H);
    let plot = Plot { x0, x1, ytop };
    let bottom = H - BOTTOM;
    if let Some((a, b, label)) = &ch.shade {
        let _ = write!(
            out,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" class=\"ramp\"/>\
             <text x=\"{tx}\" y=\"{ty}\" class=\"s\">{l}</text>",
            x = c(plot.px(*a)),
            y = c(TOP),
            w = c(plot.px(*b) - plot.px(*a)),
            h = c(bottom - TOP),
            tx = c(plot.px(*a) + 3.0),
            ty = c(TOP + 12.0),
            l = esc(label)
        );
    }
    x_axis(&mut out, ch, &plot);
    polylines(&mut out, ch, &plot);
    marks(&mut out, ch, &plot);
    if ch.series.len() > 1 {
        // At the top right: a shaded stretch (the ramp) labels its top left.
        let names: Vec<String> = ch.series.iter().map(|s| s.name.clone()).collect();
        let x0 = (W - RIGHT - legend_width(&names)).max(LEFT);
        legend_from(&mut out, &names, x0, TOP + 12.0);
    }
    out.push_str("</svg>");
    out
}

/// Where a line chart's data land: its x range and the top of its y axis,
/// in the data's units.
struct Plot {
    x0: f64,
    x1: f64,
    ytop: f64,
}

impl Plot {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        let bottom = H - BOTTOM;
        bottom - y.min(self.ytop) / self.ytop * (bottom - TOP)
    }
}

/// A line chart's x range (its series, shade, ticks and marks) and its
/// largest y (at most `y_cap`).
fn extent(ch: &LineChart) -> (f64, f64, f64) {
    let all = ch.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (x, y) in all {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        ymax = ymax.max(*y);
    }
    if let Some(cap) = ch.y_cap.filter(|c| *c > 0.0) {
        ymax = ymax.min(cap);
    }
    if let Some((a, b, _)) = &ch.shade {
        x0 = x0.min(*a);
        x1 = x1.max(*b);
    }
    if let Some(t) = &ch.x_ticks {
        for (x, _) in t {
            x0 = x0.min(*x);
            x1 = x1.max(*x);
        }
    }
    // A mark before the first sample (an event seen from the run's start,
    // at 0 s, on a timeline whose first interval ends at 1 s) is inside the
    // plot: it was drawn left of the y axis, over its labels.
    for (x, _) in &ch.marks {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    (x0, x1, ymax)
}

/// The x axis: its ticks (given, or every step of the range), its line,
/// the y axis' line and the x label.
fn x_axis(out: &mut String, ch: &LineChart, plot: &Plot) {
    let bottom = H - BOTTOM;
    let xt: Vec<(f64, String)> = match &ch.x_ticks {
        Some(t) => t.clone(),
        None => ticks(plot.x1 - plot.x0)
            .into_iter()
            .map(|t| (plot.x0 + t, num(plot.x0 + t)))
            .filter(|(x, _)| *x <= plot.x1 + 1e-9)
            .collect(),
    };
    for (x, l) in &xt {
        let _ = write!(
            out,
            "<line x1=\"{x}\" x2=\"{x}\" y1=\"{b}\" y2=\"{b2}\" class=\"a\"/>\
             <text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\">{l}</text>",
            x = c(plot.px(*x)),
            b = c(bottom),
            b2 = c(bottom + 4.0),
            ty = c(bottom + 16.0),
            l = esc(l)
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{l}\" x2=\"{r}\" y1=\"{b}\" y2=\"{b}\" class=\"a\"/>\
         <line x1=\"{l}\" x2=\"{l}\" y1=\"{t}\" y2=\"{b}\" class=\"a\"/>\
         <text x=\"{cx}\" y=\"{ly}\" text-anchor=\"middle\">{xl}</text>",
        l = c(LEFT),
        r = c(W - RIGHT),
        b = c(bottom),
        t = c(TOP),
        cx = c((LEFT + W - RIGHT) / 2.0),
        ly = c(H - 14.0),
        xl = esc(&ch.x_label)
    );
}

/// Each series as a line (a lone point as a dot too).
fn polylines(out: &mut String, ch: &LineChart, plot: &Plot) {
    for (i, s) in ch.series.iter().enumerate() {
        if s.points.is_empty() {
            continue;
        }
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|(x, y)| format!("{},{}", c(plot.px(*x)), c(plot.py(*y))))
            .collect();
        let color = PALETTE[i % PALETTE.len()];
        let _ = write!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
            pts.join(" ")
        );
        if s.points.len() == 1 {
            let (x, y) = s.points[0];
            let _ = write!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{color}\"/>",
                c(plot.px(x)),
                c(plot.py(y))
            );
        }
    }
}

/// The marks: a line each, and its label on the lowest row (12 px apart,
/// from the bottom up to below the legend's and the ramp's row) where it
/// meets no label already placed; only past the last row does one share a
/// row.
fn marks(out: &mut String, ch: &LineChart, plot: &Plot) {
    let bottom = H - BOTTOM;
    let mid = (LEFT + W - RIGHT) / 2.0;
    let rows = (((bottom - 6.0) - (TOP + 24.0)) / 12.0).floor().max(0.0) as usize + 1;
    let mut placed: Vec<Vec<(f64, f64)>> = vec![Vec::new(); rows];
    for (i, (x, label)) in ch.marks.iter().enumerate() {
        let x = plot.px(*x);
        let w = label.chars().count() as f64 * CHAR_W * 10.0 / 11.0;
        let span = if x > mid {
            (x - 3.0 - w, x - 3.0)
        } else {
            (x + 3.0, x + 3.0 + w)
        };
        let free = |row: &Vec<(f64, f64)>| {
            row.iter()
                .all(|(a, b)| span.1 + 4.0 <= *a || *b + 4.0 <= span.0)
        };
        let row = placed.iter().position(free).unwrap_or(i % rows);
        placed[row].push(span);
        let ty = bottom - 6.0 - 12.0 * row as f64;
        mark(out, x, (TOP, bottom), ty, mid, label);
    }
}

/// One bar of a [`BarChart`] group.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Value in axis units (negative values are drawn as 0).
    pub value: f64,
    /// Text above the bar (e.g. the value and a Diff %).
    pub note: String,
}

/// A group of bars (one per series) under one x label.
#[derive(Debug, Clone)]
pub struct BarGroup {
    /// Label under the group.
    pub label: String,
    /// One bar per series, in legend order (`None`: no value).
    pub bars: Vec<Option<Bar>>,
}

/// A grouped vertical bar chart with a linear y axis from 0.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// y axis label, with unit.
    pub y_label: String,
    /// Series names (legend).
    pub series: Vec<String>,
    /// The groups.
    pub groups: Vec<BarGroup>,
}

/// Splits `label` at spaces into lines of at most `chars` characters (a
/// longer word stays whole on its own line).
fn wrap_label(label: &str, chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for w in label.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= chars => {
                l.push(' ');
                l.push_str(w);
            }
            _ => lines.push(w.to_string()),
        }
    }
    lines
}

/// Width of one character of the charts' 11 px text, px (a little over).
const CHAR_W: f64 = 6.2;

/// Renders a grouped bar chart: vertical bars while every bar's note fits
/// above its bar and every group label fits on three lines under its
/// group, else horizontal bars ([`hbar_chart`]), whose notes and labels
/// have a row each and cannot overlap.
pub fn bar_chart(ch: &BarChart) -> String {
    let ng = ch.groups.len().max(1) as f64;
    let gw = (W - LEFT - RIGHT) / ng;
    let bw = (gw * 0.8 / ch.series.len().max(1) as f64).min(60.0);
    let chars = ((gw - 4.0) / CHAR_W).max(4.0) as usize;
    let fits = ch.groups.iter().all(|g| {
        wrap_label(&g.label, chars).len() <= 3
            && g.bars
                .iter()
                .flatten()
                .all(|b| b.note.chars().count() as f64 * CHAR_W <= bw)
    });
    if !fits {
        return hbar_chart(ch);
    }
    let mut out = String::new();
    let labels: Vec<Vec<String>> = ch
        .groups
        .iter()
        .map(|g| wrap_label(&g.label, chars))
        .collect();
    let extra = 12.0 * (labels.iter().map(Vec::len).max().unwrap_or(1).max(1) - 1) as f64;
    open(&mut out, &ch.title, H + extra);
    let ymax = ch
        .groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .map(|b| b.value)
        .fold(0.0f64, f64::max);
    let ytop = y_axis(&mut out, &ch.y_label, ymax, H);
    let bottom = H - BOTTOM;
    let nb = ch.series.len().max(1) as f64;
    let bw = (gw * 0.8 / nb).min(60.0);
    for (gi, g) in ch.groups.iter().enumerate() {
        let gx = LEFT + gi as f64 * gw + (gw - bw * nb) / 2.0;
        for (bi, b) in g.bars.iter().enumerate() {
            let Some(b) = b else { continue };
            let v = b.value.max(0.0);
            let h = v / ytop * (bottom - TOP);
            let x = gx + bi as f64 * bw;
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{f}\"/>\
                 <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"middle\" class=\"s\">{n}</text>",
                x = c(x),
                y = c(bottom - h),
                w = c(bw - 2.0),
                h = c(h),
                f = PALETTE[bi % PALETTE.len()],
                tx = c(x + bw / 2.0 - 1.0),
                ty = c(bottom - h - 3.0),
                n = esc(&b.note)
            );
        }
        for (k, l) in labels[gi].iter().enumerate() {
            let _ = write!(
                out,
                "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\">{l}</text>",
                x = c(LEFT + gi as f64 * gw + gw / 2.0),
                y = c(bottom + 16.0 + 12.0 * k as f64),
                l = esc(l)
            );
        }
    }
    let _ = write!(
        out,
        "<line x1=\"{l}\" x2=\"{r}\" y1=\"{b}\" y2=\"{b}\" class=\"a\"/>\
         <line x1=\"{l}\" x2=\"{l}\" y1=\"{t}\" y2=\"{b}\" class=\"a\"/>",
        l = c(LEFT),
        r = c(W - RIGHT),
        b = c(bottom),
        t = c(TOP),
    );
    let rows = legend_rows(&ch.series) as f64;
    legend(&mut out, &ch.series, H + extra - 12.0 - 16.0 * (rows - 1.0));
    out.push_str("</svg>");
    out
}

/// The vertical grid lines of a horizontal chart at the ticks `ts`, from
/// the top to `axis_y`, with their values under the axis.
fn x_grid(out: &mut String, ts: &[f64], px: &dyn Fn(f64) -> f64, axis_y: f64) {
    for t in ts {
        let _ = write!(
            out,
            "<line x1=\"{x}\" x2=\"{x}\" y1=\"{t0}\" y2=\"{ay}\" class=\"g\"/>\
             <text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\">{v}</text>",
            x = c(px(*t)),
            t0 = c(TOP),
            ay = c(axis_y),
            ty = c(axis_y + 14.0),
            v = num(*t)
        );
    }
}

/// The foot of a horizontal chart: the x axis label centred on `centre`
/// under the axis at `axis_y`, the legend of `names`, the closing tag.
fn x_foot(out: &mut String, centre: f64, axis_y: f64, label: &str, names: &[String]) {
    let _ = write!(
        out,
        "<text x=\"{cx}\" y=\"{ly}\" text-anchor=\"middle\">{xl}</text>",
        cx = c(centre),
        ly = c(axis_y + 30.0),
        xl = esc(label)
    );
    legend(out, names, axis_y + 48.0);
    out.push_str("</svg>");
}

/// Renders a grouped bar chart with horizontal bars: each group's label at
/// the left (wrapped), one bar per series below each other, each bar's note
/// right of its end, the value axis at the bottom.
pub fn hbar_chart(ch: &BarChart) -> String {
    const LABEL: f64 = 170.0;
    const BAR: f64 = 15.0;
    const GAP: f64 = 10.0;
    let ns = ch.series.len().max(1);
    let label_chars = ((LABEL - 10.0) / CHAR_W) as usize;
    let labels: Vec<Vec<String>> = ch
        .groups
        .iter()
        .map(|g| wrap_label(&g.label, label_chars))
        .collect();
    let group_h: Vec<f64> = labels
        .iter()
        .map(|l| (BAR * ns as f64).max(12.0 * l.len() as f64) + GAP)
        .collect();
    let plot_h: f64 = group_h.iter().sum::<f64>().max(BAR + GAP);
    let note_w = ch
        .groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .map(|b| b.note.chars().count() as f64 * CHAR_W + 6.0)
        .fold(0.0f64, f64::max);
    let plot_w = (W - LABEL - RIGHT - note_w).max(120.0);
    let axis_y = TOP + plot_h;
    let rows = legend_rows(&ch.series) as f64;
    let h = axis_y + 52.0 + 16.0 * rows;
    let mut out = String::new();
    open(&mut out, &ch.title, h);
    let xmax = ch
        .groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .map(|b| b.value)
        .fold(0.0f64, f64::max);
    let ts = ticks(xmax);
    let top = *ts.last().unwrap_or(&1.0);
    let px = |v: f64| LABEL + v.max(0.0) / top * plot_w;
    x_grid(&mut out, &ts, &px, axis_y);
    let mut y = TOP;
    for (gi, g) in ch.groups.iter().enumerate() {
        let bars_h = BAR * ns as f64;
        let mid = y + bars_h / 2.0;
        let lines = &labels[gi];
        for (k, l) in lines.iter().enumerate() {
            let ly = mid - 6.0 * (lines.len() as f64 - 1.0) + 12.0 * k as f64 + 4.0;
            let _ = write!(
                out,
                "<text x=\"{x}\" y=\"{ly}\" text-anchor=\"end\">{l}</text>",
                x = c(LABEL - 6.0),
                ly = c(ly),
                l = esc(l)
            );
        }
        for (bi, b) in g.bars.iter().enumerate() {
            let Some(b) = b else { continue };
            let by = y + BAR * bi as f64;
            let end = px(b.value);
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{f}\"/>\
                 <text x=\"{tx}\" y=\"{ty}\" class=\"s\">{n}</text>",
                x = c(LABEL),
                y = c(by + 1.0),
                w = c(end - LABEL),
                h = c(BAR - 3.0),
                f = PALETTE[bi % PALETTE.len()],
                tx = c(end + 3.0),
                ty = c(by + BAR - 4.0),
                n = esc(&b.note)
            );
        }
        y += group_h[gi];
    }
    let _ = write!(
        out,
        "<line x1=\"{l}\" x2=\"{l}\" y1=\"{t}\" y2=\"{b}\" class=\"a\"/>",
        l = c(LABEL),
        t = c(TOP),
        b = c(axis_y),
    );
    x_foot(
        &mut out,
        LABEL + plot_w / 2.0,
        axis_y,
        &ch.y_label,
        &ch.series,
    );
    out
}

/// One horizontal stacked bar.
#[derive(Debug, Clone)]
pub struct StackRow {
    /// Label left of the bar.
    pub label: String,
    /// Segment values in legend order (values ≤ 0 are not drawn).
    pub segments: Vec<f64>,
    /// A marker at this value (e.g. the measured mean), with its label.
    pub marker: Option<(f64, String)>,
}

/// Horizontal stacked bars sharing one x axis from 0.
#[derive(Debug, Clone)]
pub struct StackedChart {
    /// Title above the plot.
    pub title: String,
    /// x axis label, with unit.
    pub x_label: String,
    /// Segment names (legend).
    pub parts: Vec<String>,
    /// The bars.
    pub rows: Vec<StackRow>,
}

/// Renders horizontal stacked bars.
pub fn stacked_bars(ch: &StackedChart) -> String {
    const ROW: f64 = 34.0;
    const LABEL: f64 = 120.0;
    let h = TOP + ROW * ch.rows.len().max(1) as f64 + 48.0 + 16.0 * legend_rows(&ch.parts) as f64;
    let mut out = String::new();
    open(&mut out, &ch.title, h);
    let xmax = ch
        .rows
        .iter()
        .map(|r| {
            let sum: f64 = r.segments.iter().filter(|v| **v > 0.0).sum();
            sum.max(r.marker.as_ref().map_or(0.0, |m| m.0))
        })
        .fold(0.0f64, f64::max);
    let ts = ticks(xmax);
    let top = *ts.last().unwrap_or(&1.0);
    let plot_w = W - LABEL - RIGHT;
    let px = |v: f64| LABEL + v / top * plot_w;
    let axis_y = TOP + ROW * ch.rows.len().max(1) as f64 + 4.0;
    x_grid(&mut out, &ts, &px, axis_y);
    for (ri, r) in ch.rows.iter().enumerate() {
        let y = TOP + ri as f64 * ROW + 6.0;
        let _ = write!(
            out,
            "<text x=\"{x}\" y=\"{ty}\" text-anchor=\"end\">{l}</text>",
            x = c(LABEL - 6.0),
            ty = c(y + 15.0),
            l = esc(&r.label)
        );
        let mut acc = 0.0;
        for (si, v) in r.segments.iter().enumerate() {
            if *v <= 0.0 || !v.is_finite() {
                continue;
            }
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"22\" fill=\"{f}\">\
                 <title>{n}: {val}</title></rect>",
                x = c(px(acc)),
                y = c(y),
                w = c(px(acc + v) - px(acc)),
                f = PALETTE[si % PALETTE.len()],
                n = esc(ch.parts.get(si).map_or("", |s| s.as_str())),
                val = num(*v)
            );
            acc += v;
        }
        if let Some((m, label)) = &r.marker {
            mark(
                &mut out,
                px(*m),
                (y - 3.0, y + 25.0),
                y - 1.0,
                LABEL + plot_w / 2.0,
                label,
            );
        }
    }
    x_foot(
        &mut out,
        LABEL + plot_w / 2.0,
        axis_y,
        &ch.x_label,
        &ch.parts,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>a&'b\"</script>"),
            "&lt;script&gt;a&amp;&#39;b&quot;&lt;/script&gt;"
        );
    }

    #[test]
    fn ticks_cover_the_range_with_round_steps() {
        assert_eq!(ticks(9.3), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(
            ticks(1200.0),
            vec![0.0, 250.0, 500.0, 750.0, 1000.0, 1250.0]
        );
        assert_eq!(
            ticks(0.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        for m in [0.013, 7.0, 55.5, 1e6, 123_456.0] {
            let t = ticks(m);
            assert!(*t.last().unwrap() >= m && t.len() <= 7, "{m}: {t:?}");
        }
    }

    /// Bar heights are proportional to the values on the drawn axis.
    #[test]
    fn bars_are_to_scale() {
        let s = bar_chart(&BarChart {
            title: "t".into(),
            y_label: "IOPS".into(),
            series: vec!["A".into(), "B".into()],
            groups: vec![BarGroup {
                label: "g".into(),
                bars: vec![
                    Some(Bar {
                        value: 1200.0,
                        note: "1200".into(),
                    }),
                    Some(Bar {
                        value: 600.0,
                        note: "600".into(),
                    }),
                ],
            }],
        });
        let heights: Vec<f64> = s
            .split("<rect ")
            .skip(1)
            .filter_map(|r| {
                let h = r.split("height=\"").nth(1)?.split('"').next()?;
                h.parse().ok()
            })
            .collect();
        // Two bars then two legend squares (10 high).
        let axis = H - BOTTOM - TOP;
        assert!(
            (heights[0] - 1200.0 / 1250.0 * axis).abs() < 0.1,
            "{heights:?}"
        );
        assert!(
            (heights[1] - 600.0 / 1250.0 * axis).abs() < 0.1,
            "{heights:?}"
        );
    }

    /// The boxes of a chart's texts as its 11 px (notes 10 px) font sets
    /// them: (x from, x to, baseline, text); the title and rotated labels
    /// left out.
    fn text_boxes(svg: &str) -> Vec<(f64, f64, f64, String)> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| {
                let (attrs, rest) = t.split_once('>')?;
                let attr = |name: &str| {
                    attrs
                        .split(&format!(" {name}=\""))
                        .nth(1)
                        .or_else(|| attrs.strip_prefix(&format!("{name}=\"")))
                        .and_then(|v| v.split('"').next())
                };
                if attr("transform").is_some() || attr("class") == Some("t") {
                    return None;
                }
                let (x, y): (f64, f64) = (attr("x")?.parse().ok()?, attr("y")?.parse().ok()?);
                let body = rest.split('<').next()?.to_string();
                let scale = if attr("class") == Some("s") {
                    10.0 / 11.0
                } else {
                    1.0
                };
                let w = body.chars().count() as f64 * CHAR_W * scale;
                let x0 = match attr("text-anchor") {
                    Some("middle") => x - w / 2.0,
                    Some("end") => x - w,
                    _ => x,
                };
                Some((x0, x0 + w, y, body))
            })
            .collect()
    }

    /// Pairs of texts of `svg` that overlap.
    fn overlaps(svg: &str) -> Vec<(String, String)> {
        let b = text_boxes(svg);
        let mut out = Vec::new();
        for i in 0..b.len() {
            for j in i + 1..b.len() {
                let (p, q) = (&b[i], &b[j]);
                if p.0 < q.1 - 1.0 && q.0 < p.1 - 1.0 && (p.2 - q.2).abs() < 10.0 {
                    out.push((p.3.clone(), q.3.clone()));
                }
            }
        }
        out
    }

    /// A disruption run's timeline (as measured on pacific: osd.1 out at
    /// 3.75 s, in at 8.95 s, active+clean at 12 s, an osdmap change seen
    /// from 0 s, a timeline from 1 s): no mark's label overlaps another
    /// text, and none lies left of the y axis (the one at 0 s did, over the
    /// axis's "0").
    #[test]
    fn a_disruptions_marks_keep_their_labels_apart_and_in_the_plot() {
        let marks: Vec<(f64, String)> = [
            (0.0, "osdmap epoch 15 → 18 (osd.1 out), between 0 and 5 s"),
            (5.0, "osdmap epoch 18 → 21 (osd.1 in), between 5 and 10 s"),
            (3.75, "osd.1 out at 3.8 s"),
            (8.95, "osd.1 in at 9.0 s"),
            (12.0, "active+clean at 12 s"),
            (12.4, "change at 12 s: IOPS 328 → 677"),
            (4.0, "32 PGs active+undersized+degraded, during 4–9 s"),
            (9.0, "recovery, during 9–12 s"),
        ]
        .into_iter()
        .map(|(x, l)| (x, l.to_string()))
        .collect();
        let ch = LineChart {
            title: "IOPS".into(),
            x_label: "time, s".into(),
            y_label: "IOPS".into(),
            series: vec![Series {
                name: "write".into(),
                points: (1..=14)
                    .map(|t| (t as f64, 400.0 + 20.0 * t as f64))
                    .collect(),
            }],
            x_ticks: None,
            shade: None,
            y_cap: None,
            marks,
        };
        let svg = line_chart(&ch);
        assert_eq!(overlaps(&svg), Vec::<(String, String)>::new(), "{svg}");
        for (x0, x1, _, text) in text_boxes(&svg) {
            if text.contains(" s") && !text.starts_with("time") {
                assert!(x0 >= LEFT && x1 <= W - RIGHT, "{text}: {x0}..{x1}");
            }
        }
    }

    /// The comparison's mean and p99 chart of a suite on two pools: sixteen
    /// groups of two bars with notes like `38.2 (+12.5%)`. No label or note
    /// overlaps another (vertical bars this narrow cannot hold them: the
    /// chart lays its bars horizontally).
    #[test]
    fn crowded_bar_charts_keep_every_text_apart() {
        let jobs = [
            "4k randread QD32/read",
            "4k randwrite QD32/write",
            "4k randwrite QD1/write",
            "1M seq read QD16/read",
            "1M seq write QD16/write",
            "4k randwrite QD1 fsync write",
            "4k randwrite QD1 fsync flush",
            "rados bench -b 4096 -t 1 write",
        ];
        let groups: Vec<BarGroup> = ["mean", "p99"]
            .iter()
            .flat_map(|what| jobs.iter().map(move |j| format!("{j} {what}")))
            .enumerate()
            .map(|(i, label)| BarGroup {
                label,
                bars: vec![
                    Some(Bar {
                        value: 3.0 + i as f64 * 19.7,
                        note: num(3.0 + i as f64 * 19.7),
                    }),
                    Some(Bar {
                        value: 3.3 + i as f64 * 21.1,
                        note: format!("{} (+{:.1}%)", num(3.3 + i as f64 * 21.1), 10.0 + i as f64),
                    }),
                ],
            })
            .collect();
        let ch = BarChart {
            title: "Mean and p99 completion latency (Diff % against consumer)".into(),
            y_label: "completion latency, ms".into(),
            series: vec!["consumer".into(), "plp".into()],
            groups,
        };
        let s = bar_chart(&ch);
        assert_eq!(overlaps(&s), Vec::<(String, String)>::new());
        // Every note and every label is drawn.
        let texts: Vec<String> = text_boxes(&s).into_iter().map(|b| b.3).collect();
        assert!(
            texts.iter().any(|t| t == "12.0 (+10.0%)")
                || texts.iter().any(|t| t.contains("(+10.0%)"))
        );
        assert!(texts.iter().any(|t| t.contains("fsync")), "{texts:?}");
        // Few groups with short notes keep vertical bars, as before.
        let two = BarChart {
            groups: ch.groups[..2]
                .iter()
                .map(|g| BarGroup {
                    label: "4k".into(),
                    bars: g
                        .bars
                        .iter()
                        .map(|b| {
                            b.clone().map(|b| Bar {
                                note: num(b.value),
                                ..b
                            })
                        })
                        .collect(),
                })
                .collect(),
            ..ch
        };
        let v = bar_chart(&two);
        assert_eq!(overlaps(&v), Vec::<(String, String)>::new());
        assert!(v.contains("height=\"300\""), "vertical: the fixed height");
    }

    #[test]
    fn negative_segments_are_not_drawn() {
        let s = stacked_bars(&StackedChart {
            title: "t".into(),
            x_label: "ms".into(),
            parts: vec!["a".into(), "b".into()],
            rows: vec![StackRow {
                label: "r".into(),
                segments: vec![2.0, -1.0],
                marker: Some((1.0, "mean".into())),
            }],
        });
        // One segment and two legend squares.
        assert_eq!(s.matches("<rect ").count(), 3, "{s}");
        assert!(!s.contains("NaN") && !s.contains("width=\"-"), "{s}");
    }
}
