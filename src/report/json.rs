//! `--format json`: exactly one JSON document on stdout.
#![forbid(unsafe_code)]

use std::io;

use super::Reporter;
use crate::compare::Comparison;
use crate::result::BenchResult;
use crate::suite::Suites;

/// The JSON reporter.
pub struct Json;

impl Reporter for Json {
    fn render(&self, result: &BenchResult, out: &mut dyn io::Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, result)?;
        writeln!(out)
    }

    /// Several results: one JSON array.
    fn render_results(
        &self,
        results: &[(String, BenchResult)],
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        match results {
            [(_, r)] => self.render(r, out),
            _ => {
                let all: Vec<&BenchResult> = results.iter().map(|(_, r)| r).collect();
                serde_json::to_writer_pretty(&mut *out, &all)?;
                writeln!(out)
            }
        }
    }

    /// The comparison's rows, labels, notes and evidence.
    fn render_comparison(&self, c: &Comparison, out: &mut dyn io::Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, c)?;
        writeln!(out)
    }

    /// One suite: its document (`schema/suite.schema.json`); several:
    /// `{"suites": [...], "comparison": ...}`.
    fn render_suites(&self, s: &Suites, out: &mut dyn io::Write) -> io::Result<()> {
        match &s.docs[..] {
            [d] => serde_json::to_writer_pretty(&mut *out, d)?,
            _ => serde_json::to_writer_pretty(
                &mut *out,
                &serde_json::json!({"suites": s.docs, "comparison": s.comparison}),
            )?,
        }
        writeln!(out)
    }
}
