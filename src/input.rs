//! Reading result files for `cephbench report` and `cephbench compare`:
//! cephbench's JSON results (checked whole before anything is rendered) and,
//! for `compare`, fio's JSON output ([`crate::fio`]).
#![forbid(unsafe_code)]

use std::path::Path;

use serde_json::Value;

use crate::compare::Source;
use crate::result::{BenchResult, SCHEMA_VERSION};
use crate::stats::decode_histogram;

/// A file that cannot be used, with what is wrong (one line).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct LoadError {
    /// The file as given.
    pub path: String,
    /// What is wrong and, where there is one, the fix.
    pub problem: String,
}

fn err(path: &Path, problem: impl Into<String>) -> LoadError {
    LoadError {
        path: path.display().to_string(),
        problem: problem.into(),
    }
}

/// One line of a serde error.
fn one_line(e: impl std::fmt::Display) -> String {
    e.to_string().lines().collect::<Vec<_>>().join(" ")
}

/// Reads a file as JSON. fio's output may be preceded by fio's notes (when
/// stdout was redirected): parsing then starts at the first line that opens
/// an object.
fn read_json(path: &Path) -> Result<(Vec<u8>, Value), LoadError> {
    let bytes =
        std::fs::read(path).map_err(|e| err(path, format!("cannot read: {}", one_line(e))))?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => Ok((bytes, v)),
        Err(e) => {
            let text = String::from_utf8_lossy(&bytes);
            if let Some(start) = text.find("\n{") {
                if let Ok(v) = serde_json::from_str::<Value>(&text[start + 1..]) {
                    if crate::fio::is_fio(&v) {
                        return Ok((bytes, v));
                    }
                }
            }
            Err(err(
                path,
                format!(
                    "not JSON ({}); expected a result from `cephbench ... --format json`",
                    one_line(e)
                ),
            ))
        }
    }
}

fn check_result(path: &Path, bytes: &[u8], v: &Value) -> Result<BenchResult, LoadError> {
    if !v.is_object() {
        return Err(err(
            path,
            "not a cephbench result (not a JSON object); make one with `cephbench ... --format json`",
        ));
    }
    match v.get("schema_version").map(Value::as_u64) {
        None => {
            return Err(err(
                path,
                "not a cephbench result (no schema_version); make one with `cephbench ... --format json`",
            ))
        }
        Some(Some(n)) if n == u64::from(SCHEMA_VERSION) => {}
        Some(n) => {
            return Err(err(
                path,
                format!(
                    "result schema version {} is not supported: this cephbench ({}) reads version \
                     {SCHEMA_VERSION}; render it with the cephbench that wrote it",
                    n.map_or_else(|| "(not a number)".into(), |n| n.to_string()),
                    env!("CARGO_PKG_VERSION")
                ),
            ))
        }
    }
    let r: BenchResult = serde_json::from_slice(bytes).map_err(|e| {
        err(
            path,
            format!("not a valid cephbench result: {}", one_line(e)),
        )
    })?;
    for j in &r.jobs {
        if let Some(h) = &j.histogram {
            decode_histogram(h).map_err(|e| {
                err(
                    path,
                    format!("job '{}': histogram: {}", j.name, one_line(e)),
                )
            })?;
        }
    }
    Ok(r)
}

/// Loads and checks a cephbench result file: JSON, the current schema
/// version, every field, and every serialized histogram.
pub fn load_result(path: &Path) -> Result<BenchResult, LoadError> {
    let (bytes, v) = read_json(path)?;
    if crate::fio::is_fio(&v) {
        return Err(err(
            path,
            "this is fio output: `cephbench compare` imports it; `report` renders cephbench results",
        ));
    }
    check_result(path, &bytes, &v)
}

/// Loads a comparison input: a cephbench result, a suite result (its
/// per-job medians), or fio's JSON output (detected by its `fio version` key).
pub fn load_source(path: &Path) -> Result<Source, LoadError> {
    let (bytes, v) = read_json(path)?;
    if crate::fio::is_fio(&v) {
        return crate::fio::import(&v).map_err(|e| err(path, e.to_string()));
    }
    if v.get("suite_schema_version").is_some() {
        let doc: crate::suite::SuiteDoc = serde_json::from_value(v)
            .map_err(|e| err(path, format!("not a suite result: {}", one_line(e))))?;
        return crate::suite::suite_source(&doc)
            .ok_or_else(|| err(path, "a suite result without any run"));
    }
    Ok(Source::from(&check_result(path, &bytes, &v)?))
}

/// A saved file, by what it holds.
#[derive(Debug, Clone)]
pub enum Input {
    /// A cephbench result.
    Result(Box<BenchResult>),
    /// A suite document, or the several of a `suite --pools` document.
    Suites(Vec<crate::suite::SuiteDoc>),
    /// A sweep document.
    Sweep(Box<crate::sweep::SweepDoc>),
    /// fio's JSON output, imported as a comparison source.
    Fio(Box<Source>),
}

impl Input {
    /// What it is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Input::Result(_) => "a result",
            Input::Suites(_) => "a suite",
            Input::Sweep(_) => "a sweep",
            Input::Fio(_) => "fio output",
        }
    }
}

/// A document of a layout version this cephbench does not read.
fn unsupported(path: &Path, what: &str, reads: u32) -> LoadError {
    err(
        path,
        format!(
            "{what} schema version not supported: this cephbench ({}) reads version {reads}; \
             render it with the cephbench that wrote it",
            env!("CARGO_PKG_VERSION"),
        ),
    )
}

/// Checks a suite document: its version, every field, and every run's
/// serialized histograms.
fn check_suite(path: &Path, v: Value) -> Result<crate::suite::SuiteDoc, LoadError> {
    match v.get("suite_schema_version").map(Value::as_u64) {
        Some(Some(n)) if n == u64::from(crate::suite::SUITE_SCHEMA_VERSION) => {}
        _ => {
            return Err(unsupported(
                path,
                "suite",
                crate::suite::SUITE_SCHEMA_VERSION,
            ))
        }
    }
    let doc: crate::suite::SuiteDoc = serde_json::from_value(v)
        .map_err(|e| err(path, format!("not a valid suite result: {}", one_line(e))))?;
    for r in &doc.runs {
        for j in &r.result.jobs {
            if let Some(h) = &j.histogram {
                decode_histogram(h).map_err(|e| {
                    err(
                        path,
                        format!(
                            "suite job '{}' run {}: histogram: {}",
                            r.job,
                            r.run,
                            one_line(e)
                        ),
                    )
                })?;
            }
        }
    }
    Ok(doc)
}

/// Loads and checks any file cephbench reads: a result, a suite document
/// (`suite --format json`, one pool or `--pools`' `{"suites": [...]}`), a
/// sweep document, or fio's JSON output.
pub fn load_input(path: &Path) -> Result<Input, LoadError> {
    let (bytes, v) = read_json(path)?;
    if crate::fio::is_fio(&v) {
        return crate::fio::import(&v)
            .map(|s| Input::Fio(Box::new(s)))
            .map_err(|e| err(path, e.to_string()));
    }
    if v.get("suite_schema_version").is_some() {
        return Ok(Input::Suites(vec![check_suite(path, v)?]));
    }
    if let Some(suites) = v.get("suites").and_then(Value::as_array) {
        let docs = suites
            .iter()
            .map(|s| check_suite(path, s.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        if docs.is_empty() {
            return Err(err(path, "a suite document without any suite"));
        }
        return Ok(Input::Suites(docs));
    }
    if v.get("sweep_schema_version").is_some() {
        return load_sweep(path)?
            .map(|d| Input::Sweep(Box::new(d)))
            .ok_or_else(|| err(path, "not a sweep"));
    }
    check_result(path, &bytes, &v).map(|r| Input::Result(Box::new(r)))
}

/// Loads a sweep document (`cephbench sweep --format json`) if `path` holds
/// one; `None` when the file is something else (checked by the caller).
pub fn load_sweep(path: &Path) -> Result<Option<crate::sweep::SweepDoc>, LoadError> {
    let (_, v) = read_json(path)?;
    match v.get("sweep_schema_version").map(Value::as_u64) {
        None => Ok(None),
        Some(Some(n)) if n == u64::from(crate::sweep::SWEEP_SCHEMA_VERSION) => {
            serde_json::from_value(v)
                .map(Some)
                .map_err(|e| err(path, format!("not a valid sweep result: {}", one_line(e))))
        }
        Some(_) => Err(unsupported(
            path,
            "sweep",
            crate::sweep::SWEEP_SCHEMA_VERSION,
        )),
    }
}
