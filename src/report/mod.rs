//! Report formats: each is one file behind the [`Reporter`] trait.
#![forbid(unsafe_code)]

mod csv;
mod json;
mod markdown;
mod text;

use std::io;

use crate::result::{Attribution, BenchResult, Part, Workload};

pub use csv::{Csv, HEADER as CSV_HEADER};
pub use json::Json;
pub use markdown::Markdown;
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
}

impl Format {
    /// The reporter for this format.
    pub fn reporter(self) -> Box<dyn Reporter> {
        match self {
            Format::Text => Box::new(Text),
            Format::Json => Box::new(Json),
            Format::Csv => Box::new(Csv),
            Format::Markdown => Box::new(Markdown),
        }
    }
}

/// A short name of the workload (`rados write 4 KiB QD16`, `rbd randread
/// 4 KiB QD32x1`) and the pool (`pool` or `pool/image`).
pub fn workload_label(r: &BenchResult) -> (String, String) {
    use crate::units::fmt_bytes;
    match &r.workload {
        Workload::Rados(w) => (
            format!(
                "rados {} {} QD{}",
                w.mode,
                fmt_bytes(w.block_size),
                w.concurrent_ios
            ),
            w.pool.clone(),
        ),
        Workload::Rbd(w) => (
            format!(
                "rbd {} {} QD{}x{}{}",
                w.rw,
                fmt_bytes(w.bs),
                w.iodepth,
                w.numjobs,
                w.fsync_every
                    .map(|n| format!(" fsync={n}"))
                    .unwrap_or_default()
            ),
            format!("{}/{}", w.pool, w.image),
        ),
    }
}

/// The parts a report shows as columns, in path order (`client` is not
/// measured on its own, so it has no column; it is inside `unattributed`).
pub const SHARE_COLUMNS: [Part; 5] = [
    Part::PublicNetwork,
    Part::OsdQueue,
    Part::OsdLocal,
    Part::Replication,
    Part::Unattributed,
];

/// One part's share of an attribution, ns, if it was measured.
pub fn share_ns(a: &Attribution, part: Part) -> Option<f64> {
    a.shares.iter().find(|s| s.part == part).map(|s| s.ns)
}
