//! Report formats: each is one file behind the [`Reporter`] trait.
#![forbid(unsafe_code)]

mod csv;
pub mod html;
mod json;
mod markdown;
pub mod svg;
mod tables;
mod text;

use std::io;

use crate::result::{Attribution, BenchResult, Part};

pub use crate::result::workload_label;

pub use csv::{Csv, HEADER as CSV_HEADER};
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use tables::{comparison_table, suite_table};
pub use text::Text;

/// Renders a finished result.
pub trait Reporter {
    /// Writes the report for `result` to `out`.
    fn render(&self, result: &BenchResult, out: &mut dyn io::Write) -> io::Result<()>;
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
    /// A Markdown table.
    Markdown,
    /// One self-contained HTML page with SVG plots.
    Html,
}

impl Format {
    /// The reporter for this format, with every section.
    pub fn reporter(self) -> Box<dyn Reporter> {
        self.reporter_for(true)
    }

    /// The reporter for this format; `verbose` false gives the short text
    /// report (the other formats always carry everything).
    pub fn reporter_for(self, verbose: bool) -> Box<dyn Reporter> {
        match self {
            Format::Text => Box::new(Text { verbose }),
            Format::Json => Box::new(Json),
            Format::Csv => Box::new(Csv),
            Format::Markdown => Box::new(Markdown),
            Format::Html => Box::new(Html),
        }
    }
}

/// The parts a report can show as columns, in path order (`client` is not
/// measured on its own, so it has no column; it is inside `unattributed`).
/// `replication` is the unsplit wait for the replicas (older results, or no
/// replica counters): [`share_columns`] drops it when no row has it.
pub const SHARE_COLUMNS: [Part; 8] = [
    Part::PublicNetwork,
    Part::OsdQueue,
    Part::OsdLocal,
    Part::DeviceFlush,
    Part::ClusterNetwork,
    Part::Replica,
    Part::Replication,
    Part::Unattributed,
];

/// The columns for these attributions: [`SHARE_COLUMNS`], without
/// `replication` unless one of them has that (unsplit) share.
pub fn share_columns<'a>(atts: impl IntoIterator<Item = &'a Attribution>) -> Vec<Part> {
    let unsplit = atts
        .into_iter()
        .any(|a| a.shares.iter().any(|s| s.part == Part::Replication));
    SHARE_COLUMNS
        .into_iter()
        .filter(|p| unsplit || *p != Part::Replication)
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

#[cfg(test)]
mod tests {
    use super::wrap;

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
