//! [`ShapeError`]: a Ceph JSON document without the expected shape, the
//! error of every parser of telemetry ([`super::parse`], the counters, the
//! network, the historic ops). A file of its own so that the parsers of the
//! result's parts need nothing else of each other.
#![forbid(unsafe_code)]

use serde_json::Value;

/// A Ceph JSON document that did not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected {what} output: {why}")]
pub struct ShapeError {
    /// Which document.
    pub what: &'static str,
    /// What was missing or wrong.
    pub why: String,
}

pub(crate) fn shape(what: &'static str, why: impl Into<String>) -> ShapeError {
    ShapeError {
        what,
        why: why.into(),
    }
}

/// Parses a command's answer as JSON.
pub fn json(out: &[u8], what: &'static str) -> Result<Value, ShapeError> {
    serde_json::from_slice(out).map_err(|e| ShapeError {
        what,
        why: format!("not JSON: {e}"),
    })
}
