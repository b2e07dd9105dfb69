//! Report formats: each is one file behind the [`Reporter`] trait.
#![forbid(unsafe_code)]

mod json;
mod text;

use std::io;

use crate::result::BenchResult;

pub use json::Json;
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
}

impl Format {
    /// The reporter for this format.
    pub fn reporter(self) -> Box<dyn Reporter> {
        match self {
            Format::Text => Box::new(Text),
            Format::Json => Box::new(Json),
        }
    }
}
