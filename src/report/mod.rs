//! Report formats: each is one file behind the [`Reporter`] trait.
#![forbid(unsafe_code)]

mod csv;
pub mod html;
mod json;
mod markdown;
pub mod page;
mod suite_html;
pub mod svg;
mod tables;
mod text;
mod timeline_csv;

use std::io;

use crate::compare::Comparison;
use crate::result::{Attribution, BenchResult, ClientLoad, Part};
use crate::suite::Suites;

pub use crate::result::workload_label;

pub use csv::{
    Csv, COMPARISON_HEADER as COMPARISON_CSV_HEADER, HEADER as CSV_HEADER,
    SUITE_HEADER as SUITE_CSV_HEADER,
};
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use tables::{cdm_table, checks_table, comparison_table, suite_table, CDM_TEXT_WIDTH};
pub use text::Text;
pub use timeline_csv::{TimelineCsv, TIMELINE_HEADER as TIMELINE_CSV_HEADER};

/// One output format: renders a finished result, several results, a
/// comparison and suites. `main.rs` picks the format once
/// ([`Format::reporter_for`]) and calls the method for what it has.
pub trait Reporter {
    /// Writes the report for `result` to `out`.
    fn render(&self, result: &BenchResult, out: &mut dyn io::Write) -> io::Result<()>;

    /// Several results (`(source name, result)`): each in turn, a blank
    /// line between, unless the format has a better way (one CSV header,
    /// one JSON array, one HTML page with their comparison).
    fn render_results(
        &self,
        results: &[(String, BenchResult)],
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        for (i, (_, r)) in results.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            self.render(r, out)?;
        }
        Ok(())
    }

    /// A comparison (`cephbench compare`).
    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()>;

    /// Suites, one per pool, with their comparison and CrystalDiskMark's
    /// table where they have them (`cephbench suite`, `report SUITE.json`).
    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()>;
}

/// What a command renders.
#[derive(Debug, Clone)]
pub enum Document {
    /// One result, or several (`report A.json B.json`).
    Results(Vec<(String, BenchResult)>),
    /// A comparison (`compare`).
    Comparison(Comparison),
    /// Suites (`suite`, `report SUITE.json`, `compare` of CrystalDiskMark suites).
    Suites(Suites),
}

/// Renders `doc` in `format`: the one place a format's renderer is chosen
/// for results, comparisons and suites.
pub fn render(
    doc: &Document,
    format: Format,
    view: View,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let r = format.reporter_for(view);
    match doc {
        Document::Results(rs) => r.render_results(rs, out),
        Document::Comparison(c) => r.render_comparison(c, out),
        Document::Suites(s) => r.render_suites(s, out),
    }
}

/// What a report shows besides its format's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// Every section of the text report (`-v/--verbose`).
    pub verbose: bool,
    /// The long suite tables (one row per job) beside CrystalDiskMark's
    /// table (`--long`).
    pub long: bool,
}

/// The output formats the CLI offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable summary.
    Text,
    /// One JSON document (see `schema/result.schema.json`).
    Json,
    /// One CSV line per job, with a header line.
    Csv,
    /// One CSV line per job and timeline interval (IOPS, mean, p50, p99,
    /// max), with a header line.
    TimelineCsv,
    /// A Markdown table.
    Markdown,
    /// One self-contained HTML page with SVG plots.
    Html,
}

impl Format {
    /// The reporter for this format, with every section.
    pub fn reporter(self) -> Box<dyn Reporter> {
        self.reporter_for(View {
            verbose: true,
            long: true,
        })
    }

    /// The reporter for this format; the view's `verbose` and `long` shape
    /// the text and Markdown reports (JSON, CSV and HTML always carry
    /// everything).
    pub fn reporter_for(self, view: View) -> Box<dyn Reporter> {
        match self {
            Format::Text => Box::new(Text {
                verbose: view.verbose,
                long: view.long,
            }),
            Format::Json => Box::new(Json),
            Format::Csv => Box::new(Csv),
            Format::TimelineCsv => Box::new(TimelineCsv),
            Format::Markdown => Box::new(Markdown { long: view.long }),
            Format::Html => Box::new(Html),
        }
    }
}

/// The parts a report can show as columns, in path order (`client` is not
/// measured on its own, so it has no column; it is inside `unattributed`).
/// `replication` is the unsplit wait for the replicas (older results, or no
/// replica counters), `messengers` exists only where the back network's own
/// round trip was measured: [`share_columns`] drops each when no row has it.
pub const SHARE_COLUMNS: [Part; 9] = [
    Part::PublicNetwork,
    Part::OsdQueue,
    Part::OsdLocal,
    Part::DeviceFlush,
    Part::ClusterNetwork,
    Part::Messengers,
    Part::Replica,
    Part::Replication,
    Part::Unattributed,
];

/// The columns for these attributions: [`SHARE_COLUMNS`], without
/// `replication` or `messengers` unless one of them has that share.
pub fn share_columns<'a>(atts: impl IntoIterator<Item = &'a Attribution>) -> Vec<Part> {
    let atts: Vec<&Attribution> = atts.into_iter().collect();
    let has = |part: Part| atts.iter().any(|a| a.shares.iter().any(|s| s.part == part));
    let (unsplit, messengers) = (has(Part::Replication), has(Part::Messengers));
    SHARE_COLUMNS
        .into_iter()
        .filter(|p| unsplit || *p != Part::Replication)
        .filter(|p| messengers || *p != Part::Messengers)
        .collect()
}

/// The per-OSD table's rows: each OSD with each of its client rows (op
/// kinds), or once with `None` when the client sent it no op (a replica
/// only), so every OSD's drive is listed.
pub fn osd_rows(
    r: &BenchResult,
) -> Vec<(
    &crate::result::OsdReport,
    Option<&crate::result::OsdClientRow>,
)> {
    r.osds
        .iter()
        .flat_map(|o| {
            let rows: Vec<_> = if o.client.is_empty() {
                vec![(o, None)]
            } else {
                o.client.iter().map(|c| (o, Some(c))).collect()
            };
            rows
        })
        .collect()
}

/// One part's share of an attribution, ns, if it was measured.
pub fn share_ns(a: &Attribution, part: Part) -> Option<f64> {
    a.shares.iter().find(|s| s.part == part).map(|s| s.ns)
}

/// Columns the text output fits in.
pub const TEXT_WIDTH: usize = 100;

/// Whether a job table shows the in-flight column: some job's client fell
/// short of the ops asked ([`ClientLoad::fell_short`]).
pub fn shows_in_flight(clients: impl IntoIterator<Item = Option<ClientLoad>>) -> bool {
    clients.into_iter().flatten().any(|c| c.fell_short())
}

/// The in-flight cell of a job table: ops in flight on average / ops asked
/// (`22.0/32`), `*` where the client fell short; `-` where unknown.
pub fn in_flight_cell(c: Option<ClientLoad>) -> String {
    c.map_or("-".into(), |c| {
        format!(
            "{:.1}/{}{}",
            c.mean_in_flight,
            c.asked_in_flight,
            if c.fell_short() { "*" } else { "" }
        )
    })
}

/// What the in-flight column means, under a table that has it.
pub const IN_FLIGHT_NOTE: &str = "in flight = the ops the cluster had in flight on average / the \
ops asked (a suite: the run that kept fewest); * = below 90 %: the client, not the cluster, set \
the pace, so the row was measured at a lower depth than asked";

/// Wraps every line of `text` longer than `width` characters at spaces;
/// continuation lines get the line's indent plus two spaces. A word longer
/// than the room left is split.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.chars().take_while(|c| *c == ' ').count();
        let cont = if indent + 2 < width / 2 {
            indent + 2
        } else {
            0
        };
        let mut cur = " ".repeat(indent);
        let mut cur_len = indent;
        let mut fresh = true;
        for word in body[indent..].split(' ') {
            let wl = word.chars().count();
            if !fresh && cur_len + 1 + wl > width {
                out.push_str(cur.trim_end());
                out.push('\n');
                cur = " ".repeat(cont);
                cur_len = cont;
                fresh = true;
            }
            if !fresh {
                cur.push(' ');
                cur_len += 1;
            }
            let mut rest: Vec<char> = word.chars().collect();
            while cur_len + rest.len() > width {
                let room = width.saturating_sub(cur_len).max(1);
                cur.extend(rest.drain(..room.min(rest.len())));
                out.push_str(&cur);
                out.push('\n');
                cur = " ".repeat(cont);
                cur_len = cont;
            }
            cur_len += rest.len();
            cur.extend(rest);
            fresh = false;
        }
        out.push_str(cur.trim_end());
        out.push_str(nl);
    }
    out
}

/// The header and one row per job and phase of `--disrupt`'s table (text,
/// Markdown and HTML).
pub fn disruption_lines(d: &crate::result::disruption::Disruption) -> Vec<Vec<String>> {
    let ms = |ns: f64| format!("{:.2}", ns / 1e6);
    let opt = |v: Option<u64>| v.map_or_else(|| "-".into(), |n| ms(n as f64));
    let mut lines = vec![[
        "job",
        "phase",
        "time s",
        "IOPS",
        "mean ms",
        "p99 ms",
        "worst p99 ms",
        "max ms",
        "stall s",
        "errors",
    ]
    .map(String::from)
    .to_vec()];
    for p in &d.phases {
        lines.push(vec![
            p.job.clone(),
            d.phase_name(p).into(),
            span(p.from_s, p.to_s),
            format!("{:.0}", p.iops),
            if p.ops > 0 { ms(p.mean_ns) } else { "-".into() },
            opt(p.p99_ns),
            opt(p.worst_interval_p99_ns),
            opt(p.max_ns),
            format!("{:.2}", p.longest_stall_s),
            p.errors.to_string(),
        ]);
    }
    lines
}

/// A phase's span in seconds: whole seconds where they tell it apart
/// (`6–21`), else tenths (the job's last, partial interval: `12–12.1`).
fn span(from: f64, to: f64) -> String {
    let whole = |x: f64| (x - x.round()).abs() < 0.05;
    if (to.round() - from.round()).abs() >= 1.0 && whole(from) && whole(to) {
        format!("{from:.0}–{to:.0}")
    } else {
        format!("{from:.1}–{to:.1}")
    }
}

/// What `--disrupt`'s table's figures are, in one line.
pub const DISRUPTION_NOTE: &str = "in effect: when the mon answered, the new osdmap committed (the mons batch changes: paxos_propose_interval, 1 s by default), and where a phase begins; phase: named after the PG states seen in it (degraded: copies missing; misplaced: every copy there, not where CRUSH wants it); p99: the phase's own, from its intervals' histograms merged; worst p99: the highest of its intervals' p99s (a short stall shows there); stall: the longest time without a completion";

/// `--disrupt`'s block for text and Markdown: the OSD and the actions, the
/// phases' table, recovery.
/// `notes`: the definitions of its columns and times (`-v` in text).
pub fn render_disruption(
    r: &BenchResult,
    markdown: bool,
    notes: bool,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let Some(d) = &r.disruption else {
        return Ok(());
    };
    writeln!(out)?;
    let (b, q) = if markdown { ("**", "`") } else { ("", "") };
    writeln!(out, "{b}Disruption{b}: {q}{}{q}", d.spec)?;
    if markdown {
        writeln!(out)?;
    }
    writeln!(
        out,
        "{}Actions: {}",
        if markdown { "" } else { "  " },
        d.actions_line()
    )?;
    if markdown {
        writeln!(out)?;
    }
    let lines = disruption_lines(d);
    if lines.len() > 1 {
        if !markdown {
            let mut indented = lines.clone();
            indented[0][0] = format!("  {}", indented[0][0]);
            for l in indented.iter_mut().skip(1) {
                l[0] = format!("  {}", l[0]);
            }
            tables::table(&indented, &|i| i < 3, false, out)?;
        } else {
            tables::table(&lines, &|i| i < 3, true, out)?;
            writeln!(out)?;
        }
    }
    let ind = if markdown { "" } else { "  " };
    writeln!(out, "{ind}Recovery: {}", d.recovery_line())?;
    if !notes {
        return Ok(());
    }
    if markdown {
        writeln!(out)?;
    }
    writeln!(out, "{ind}({DISRUPTION_NOTE})")
}

/// The one line every format prints when the cluster was not quiet during
/// the run (`not quiet: HEALTH_WARN (...); deep scrub on 3 PGs during
/// 12–40 s`); nothing when it was, or was not looked at.
pub fn not_quiet(r: &BenchResult) -> Option<String> {
    let c = r.cluster_state.as_ref()?;
    // With `--disrupt`, recovery has one rate: the disruption's (its looks
    // are the run's record of it), not a second from the quiet watch's.
    match r.disruption.as_ref().and_then(|d| d.recovery_rate()) {
        Some(rate) if c.events.iter().any(|e| e.kind == "recovery") => {
            let mut c = c.clone();
            for e in c.events.iter_mut().filter(|e| e.kind == "recovery") {
                e.detail = format!("{rate}, the mean of the looks that saw it");
            }
            c.not_quiet()
        }
        _ => c.not_quiet(),
    }
}

/// One line per lasting change of job `j` ([`crate::explain::changes::line`]).
pub fn change_lines(r: &BenchResult, j: &crate::result::JobReport) -> Vec<String> {
    j.changes
        .iter()
        .flatten()
        .map(|c| {
            crate::explain::changes::line(
                c,
                &r.osds,
                r.cluster_state.as_ref(),
                r.disruption.as_ref(),
            )
        })
        .collect()
}

/// The pool's layout in one line (`pool: size 3, ...` or `data pool 'ec21':
/// erasure 2+1 ...`): always for an erasure-coded pool (whose size is not
/// its copies) and for an image's data pool (the settings are that pool's,
/// not the image's), else only with `verbose`.
pub fn pool_line(r: &BenchResult, verbose: bool) -> Option<String> {
    let p = r.pool.as_ref()?;
    let data = match &r.workload {
        crate::result::Workload::Rbd(w) => w.data_pool.as_deref(),
        crate::result::Workload::Rados(_) => None,
    };
    match data {
        Some(d) => Some(format!("data pool '{d}': {}", p.summary())),
        None if verbose || p.erasure.is_some() => Some(format!("pool: {}", p.summary())),
        None => None,
    }
}

/// Whether the reads ran cold (the OSDs dropped their caches before the
/// job) or warm; a warm read is said only with `verbose`.
pub fn read_cache_line(r: &BenchResult, verbose: bool) -> Option<String> {
    match r.read_cache? {
        crate::result::ReadCache::Cold => Some(
            "reads ran cold: every OSD of the pool dropped its caches (`cache drop`) just before the job"
                .into(),
        ),
        crate::result::ReadCache::Warm if verbose => Some(
            "reads ran warm: the OSDs' caches were left as the run found them (--drop-caches for cold reads)"
                .into(),
        ),
        crate::result::ReadCache::Warm => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{span, wrap};

    #[test]
    fn phase_spans_in_whole_seconds_unless_too_short() {
        assert_eq!(span(0.0, 6.000_4), "0–6");
        assert_eq!(span(12.000_3, 12.08), "12.0–12.1");
        assert_eq!(span(3.0, 7.5), "3.0–7.5");
    }

    #[test]
    fn wraps_long_lines_only() {
        assert_eq!(wrap("short\n", 10), "short\n");
        assert_eq!(
            wrap("  aaa bbb ccc ddd\nx", 10),
            "  aaa bbb\n    ccc\n    ddd\nx"
        );
        let long = format!("w {}", "z".repeat(25));
        let w = wrap(&long, 10);
        assert!(w.lines().all(|l| l.chars().count() <= 10), "{w}");
        assert_eq!(w.replace(['\n', ' '], ""), long.replace(' ', ""));
    }
}
