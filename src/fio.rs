//! Importing fio's JSON output (`fio --output-format=json`) into
//! `cephbench compare`, so one table holds Ceph and local storage.
//!
//! Each fio job's `read` and `write` sections (those that did I/O) become one
//! row each, named `jobname/read` and `jobname/write`: fio's `total_ios`,
//! `io_bytes`, `runtime`, `iops` and `bw_bytes`, and as latency fio's
//! **lat** (`lat_ns`: from before the I/O is submitted to its completion,
//! clat plus the submission): cephbench's timer starts before the aio call,
//! so its completion latency is fio's lat, not its clat. fio prints lat
//! percentiles only with `lat_percentiles=1`; otherwise the percentiles are
//! clat's (a note says which rows). fio has no per-second samples here, so
//! its rows get no noise verdict.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use serde_json::Value;

use crate::compare::Source;
use crate::result::JobReport;
use crate::stats::LatencySummary;

/// What the compare output says about fio rows.
pub const LAT_NOTE: &str = "fio rows: latency is fio's lat (submission + completion), the \
figure cephbench's completion latency matches (its timer starts before the aio call); fio's \
clat leaves the submission out";

/// fio output that cannot be imported.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FioError(String);

/// Whether a JSON document is fio's output (it has a `fio version` key).
pub fn is_fio(v: &Value) -> bool {
    v.get("fio version").is_some()
}

/// fio's percentile keys are printed with `%f`: `99.900000`.
fn percentile(clat: &Value, p: f64) -> Option<u64> {
    clat.get("percentile")?.get(format!("{p:.6}"))?.as_u64()
}

fn u64_of(v: &Value, key: &str, what: &str) -> Result<u64, FioError> {
    v.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| FioError(format!("{what}: no integer '{key}'")))
}

fn f64_of(v: &Value, key: &str, what: &str) -> Result<f64, FioError> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| FioError(format!("{what}: no number '{key}'")))
}

fn opts(job: &Value, global: &Value) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for src in [global, &job["job options"]] {
        if let Some(o) = src.as_object() {
            for (k, v) in o {
                if let Some(s) = v.as_str() {
                    m.insert(k.clone(), s.to_string());
                }
            }
        }
    }
    m
}

fn label(o: &BTreeMap<String, String>, version: &str) -> String {
    let get = |k: &str, d: &str| o.get(k).cloned().unwrap_or_else(|| d.to_string());
    let engine = get("ioengine", "psync");
    let target = match (o.get("pool"), o.get("rbdname")) {
        (Some(p), Some(i)) => format!("{p}/{i}"),
        _ => get("filename", get("directory", "?").as_str()),
    };
    let jobs = o
        .get("numjobs")
        .map(|n| format!("x{n}"))
        .unwrap_or_default();
    format!(
        "{version} {} {} QD{}{jobs} ({engine}) on {target}",
        get("rw", "read"),
        get("bs", "4k"),
        get("iodepth", "1"),
    )
}

/// How much of fio's lat a row carries: fio always prints lat's min, mean
/// and max, its percentiles only with `lat_percentiles=1`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lat {
    /// lat with its percentiles.
    Full,
    /// lat, with clat's percentiles standing in.
    ClatPercentiles,
    /// No lat: clat throughout.
    None,
}

/// One read or write section's latency (`what` names it in errors): fio's
/// lat where it printed it, else clat.
fn latency(s: &Value, what: &str) -> Result<(LatencySummary, Lat), FioError> {
    let clat = s
        .get("clat_ns")
        .ok_or_else(|| FioError(format!("{what}: no 'clat_ns'")))?;
    // fio always prints lat's min/mean/max; its percentiles only
    // with lat_percentiles=1, else clat's stand in.
    let lat = s.get("lat_ns").filter(|l| l.get("mean").is_some());
    let whole = lat.unwrap_or(clat);
    let (pcts, kind) = match lat {
        Some(l) if l.get("percentile").is_some() => (l, "lat"),
        _ => (clat, "clat"),
    };
    let pct = |p: f64| {
        percentile(pcts, p).ok_or_else(|| {
            FioError(format!(
                "{what}: no {kind} percentile {p} (fio ran with clat_percentiles=0; \
                 rerun with fio's defaults or lat_percentiles=1)"
            ))
        })
    };
    let summary = LatencySummary {
        min: u64_of(whole, "min", what)?,
        mean: f64_of(whole, "mean", what)?,
        stddev: f64_of(whole, "stddev", what)?,
        p50: pct(50.0)?,
        p90: pct(90.0)?,
        p99: pct(99.0)?,
        p99_9: pct(99.9)?,
        max: u64_of(whole, "max", what)?,
    };
    let which = match (lat, kind) {
        (None, _) => Lat::None,
        (Some(_), "clat") => Lat::ClatPercentiles,
        _ => Lat::Full,
    };
    Ok((summary, which))
}

/// The notes of an import labelled `label`: what its latency is, and the
/// rows whose percentiles (`clat_pcts`) or whole latency (`no_lat`) are
/// clat's.
fn notes(label: &str, clat_pcts: &[String], no_lat: &[String]) -> Vec<String> {
    let mut notes = vec![LAT_NOTE.to_string()];
    if !clat_pcts.is_empty() {
        notes.push(format!(
            "{label}: percentiles of {} are fio's clat (fio prints lat percentiles only with \
             lat_percentiles=1): short of lat by the submission time",
            clat_pcts.join(", ")
        ));
    }
    if !no_lat.is_empty() {
        notes.push(format!(
            "{label}: {} have no lat in fio's output: their latency is clat",
            no_lat.join(", ")
        ));
    }
    notes
}

/// Converts fio's JSON output into a comparison input.
pub fn import(v: &Value) -> Result<Source, FioError> {
    let version = v["fio version"].as_str().unwrap_or("fio");
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| FioError("fio output without a 'jobs' array".into()))?;
    let global = v.get("global options").cloned().unwrap_or(Value::Null);
    let mut rows: Vec<JobReport> = Vec::new();
    let (mut clat_pcts, mut no_lat) = (Vec::new(), Vec::new());
    let mut first_label = None;
    for (i, job) in jobs.iter().enumerate() {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| FioError(format!("fio job {i} has no 'jobname'")))?;
        let o = opts(job, &global);
        first_label.get_or_insert_with(|| label(&o, version));
        let error = job.get("error").and_then(Value::as_u64).unwrap_or(0);
        for op in ["read", "write"] {
            let what = format!("fio job '{name}' {op}");
            let s = job
                .get(op)
                .ok_or_else(|| FioError(format!("{what}: section missing")))?;
            let ops = u64_of(s, "total_ios", &what)?;
            let bytes = u64_of(s, "io_bytes", &what)?;
            if ops == 0 && bytes == 0 {
                continue;
            }
            let (latency_ns, lat) = latency(s, &what)?;
            let mut row_name = name.to_string();
            if rows.iter().any(|r| r.name == row_name && r.op == op) {
                row_name = format!("{name}#{i}");
            }
            match lat {
                Lat::None => no_lat.push(format!("{row_name}/{op}")),
                Lat::ClatPercentiles => clat_pcts.push(format!("{row_name}/{op}")),
                Lat::Full => {}
            }
            rows.push(JobReport {
                name: row_name,
                op: op.to_string(),
                ops,
                errors: 0,
                bytes,
                elapsed_s: u64_of(s, "runtime", &what)? as f64 / 1e3,
                iops: f64_of(s, "iops", &what)?,
                bytes_per_sec: f64_of(s, "bw_bytes", &what)?,
                latency_ns,
                stop_reason: "fio".into(),
                verify_mismatches: None,
                short_reads: 0,
                first_error: (error != 0).then(|| format!("fio reported error {error}")),
                errors_by_errno: Default::default(),
                longest_gap_s: 0.0,
                slow_ops: 0,
                slow_op_s: 0.0,
                timeline: Vec::new(),
                histogram: None,
                attribution: None,
                service_latency_ns: None,
                rate: None,
                per_second: None,
                end_flush: None,
                client: None,
                changes: None,
                projections: None,
            });
        }
    }
    if rows.is_empty() {
        return Err(FioError(
            "fio output with no job that did reads or writes".into(),
        ));
    }
    let mut label = first_label.unwrap_or_default();
    if jobs.len() > 1 {
        label.push_str(&format!(" (+{} more fio jobs)", jobs.len() - 1));
    }
    let notes = notes(&label, &clat_pcts, &no_lat);
    Ok(Source {
        label,
        jobs: rows,
        notes,
        osds: Vec::new(),
        per_run: Vec::new(),
        ram_per_osd_bytes: None,
        usable: None,
        client_host: None,
        shape: Vec::new(),
        settings: Vec::new(),
        name: String::new(),
        back_heartbeat_ms: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's numbers are read correctly rounded, so what `compare` prints
    /// is fio's own figure: serde_json's default fast float parser is off by
    /// one ulp for some decimals (a CI run saw fio's clat mean 490806.056013
    /// ns come back as 0.49080605601300004 ms), `float_roundtrip` is exact.
    #[test]
    fn fio_decimals_parse_exactly() {
        for text in [
            "490806.056013",
            "0.49080605601300004",
            "1234.567891",
            "98765.432109",
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v.as_f64(), Some(text.parse::<f64>().unwrap()), "{text}");
        }
        let ms = 490806.056013_f64 / 1e6;
        let back: Value = serde_json::from_str(&serde_json::to_string(&ms).unwrap()).unwrap();
        assert_eq!(back.as_f64(), Some(ms));
    }

    #[test]
    fn rejects_fio_output_without_clat_percentiles() {
        let v: Value = serde_json::json!({
            "fio version": "fio-3.33",
            "jobs": [{
                "jobname": "x", "error": 0, "job options": {"rw": "write"},
                "read": {"total_ios": 0, "io_bytes": 0},
                "write": {"total_ios": 10, "io_bytes": 40960, "runtime": 1000,
                          "iops": 10.0, "bw_bytes": 40960,
                          "clat_ns": {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0}}
            }]
        });
        let e = import(&v).unwrap_err().to_string();
        assert!(e.contains("no clat percentile 50"), "{e}");
        let e = import(&serde_json::json!({"fio version": "fio-3"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'jobs'"), "{e}");
    }
}
