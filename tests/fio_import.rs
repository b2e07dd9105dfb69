//! fio JSON output imported by `cephbench compare`: the numbers in the
//! comparison are fio's own (IOPS, bandwidth, lat mean, clat percentiles),
//! read back independently from fio's file. One test uses a captured fio
//! file (no cluster); one runs Debian's fio with its rbd engine against the
//! test cluster (`CEPHBENCH_TEST_CONF`).

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const POOL: &str = "cbt-html-fio";

/// `cephbench compare FILES --format json`, which must succeed.
fn compare_json(files: &[&Path]) -> Value {
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["compare", "--format", "json"])
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The comparison's value of `figure` for `job` in column `col`.
fn value(c: &Value, job: &str, figure: &str, col: usize) -> f64 {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["job"] == job && r["figure"] == figure)
        .unwrap_or_else(|| panic!("no row {job} {figure} in {c}"))["values"][col]
        .as_f64()
        .unwrap()
}

/// Every imported figure equals fio's own number (exactly: the same f64).
fn assert_fio_numbers(c: &Value, col: usize, fio: &Value) {
    let mut checked = 0;
    for job in fio["jobs"].as_array().unwrap() {
        let name = job["jobname"].as_str().unwrap();
        for op in ["read", "write"] {
            let s = &job[op];
            if s["total_ios"].as_u64().unwrap() == 0 {
                continue;
            }
            let key = format!("{name}/{op}");
            // The mean is fio's lat (what cephbench's timer matches), the
            // percentiles clat's unless fio printed lat percentiles.
            let (lat, clat) = (&s["lat_ns"], &s["clat_ns"]);
            let pcts = if lat["percentile"].is_object() {
                lat
            } else {
                clat
            };
            let pct = |p: &str| pcts["percentile"][p].as_u64().unwrap() as f64 / 1e6;
            assert_eq!(value(c, &key, "IOPS", col), s["iops"].as_f64().unwrap());
            assert_eq!(
                value(c, &key, "MiB/s", col),
                s["bw_bytes"].as_f64().unwrap() / 1048576.0
            );
            assert_eq!(
                value(c, &key, "mean lat ms", col),
                lat["mean"].as_f64().unwrap() / 1e6
            );
            assert!(lat["mean"].as_f64() > clat["mean"].as_f64());
            assert_eq!(value(c, &key, "p50 lat ms", col), pct("50.000000"));
            assert_eq!(value(c, &key, "p99 lat ms", col), pct("99.000000"));
            assert_eq!(value(c, &key, "p99.9 lat ms", col), pct("99.900000"));
            checked += 1;
        }
    }
    assert!(checked > 0, "no fio section with I/O");
}

#[test]
fn captured_fio_file_imports_with_fios_numbers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-randrw.json");
    let fio: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let c = compare_json(&[&path, &path]);
    assert_fio_numbers(&c, 0, &fio);
    assert_fio_numbers(&c, 1, &fio);
    // randrw: a read and a write row; the label and the lat/clat notes.
    assert_eq!(c["rows"].as_array().unwrap().len(), 12);
    assert!(c["labels"][0]
        .as_str()
        .unwrap()
        .starts_with("fio-3.33 randrw 4k QD1 (psync)"));
    assert!(c["notes"][0].as_str().unwrap().contains("fio's lat"));
    assert!(c["notes"][1]
        .as_str()
        .unwrap()
        .contains("percentiles of mix/read, mix/write are fio's clat"));
    let diff = c["rows"][0]["diff_pct"][1].as_f64().unwrap();
    assert_eq!(diff, 0.0);

    // fio's notes before the JSON (stdout redirected) are skipped; the text
    // table names lat and fits 100 columns.
    let dir = tempfile::tempdir().unwrap();
    let noisy = dir.path().join("noisy.json");
    let mut text = b"note: both iodepth >= 1 and synchronous I/O engine are selected\n".to_vec();
    text.extend(std::fs::read(&path).unwrap());
    std::fs::write(&noisy, text).unwrap();
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .arg("compare")
        .arg(&path)
        .arg(&noisy)
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("mix/read ") && l.contains(" IOPS ") && l.contains("13181")),
        "{table}"
    );
    assert!(table.contains("fio's lat"), "{table}");
    for l in table.lines() {
        assert!(l.chars().count() <= 100, "too wide: {l}");
    }

    // fio output is not a cephbench result for `report`: one line, exit 2.
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .arg("report")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fio-randrw.json: this is fio output"), "{err}");
}

fn rbd(args: &[&str]) -> std::process::Output {
    common::run(
        Command::new("timeout")
            .arg("120")
            .arg("rbd")
            .arg("-c")
            .arg(common::conf())
            .args(args),
    )
}

/// Debian's fio, rbd engine, on the test cluster: its JSON file imports
/// with the numbers fio wrote.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn fio_rbd_engine_output_imports_with_fios_numbers() {
    let _g = common::serial();
    common::pool_for(POOL, "rbd");
    let image = "cbt-html-fio-img";
    let _ = rbd(&["rm", "-p", POOL, image]);
    assert!(rbd(&["create", "-p", POOL, "--size", "64M", image])
        .status
        .success());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fio.json");
    let out = common::run(
        Command::new("timeout")
            .arg("120")
            .arg("fio")
            .env("CEPH_CONF", common::conf())
            .args([
                "--name=rbdw",
                "--ioengine=rbd",
                "--clientname=admin",
                &format!("--pool={POOL}"),
                &format!("--rbdname={image}"),
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=8",
                "--size=16M",
                "--time_based",
                "--runtime=2",
                "--output-format=json",
            ])
            .arg(format!("--output={}", json.display())),
    );
    let _ = rbd(&["rm", "-p", POOL, image]);
    assert!(
        out.status.success(),
        "fio failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let fio: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(fio["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0);
    let c = compare_json(&[&json, &json]);
    assert_fio_numbers(&c, 0, &fio);
    assert_eq!(c["rows"].as_array().unwrap().len(), 6, "write only: {c}");
    assert!(c["labels"][0]
        .as_str()
        .unwrap()
        .contains(&format!("randwrite 4k QD8 (rbd) on {POOL}/{image}")));
}
