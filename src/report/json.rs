//! `--format json`: exactly one JSON document on stdout.
#![forbid(unsafe_code)]

use std::io;

use super::Reporter;
use crate::result::BenchResult;

/// The JSON reporter.
pub struct Json;

impl Reporter for Json {
    fn render(&self, result: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, result)?;
        writeln!(out)
    }
}
