//! Suites on the throwaway cluster (short runtimes): `suite lab`, `suite
//! cdm` and `suite vm` end to end with every cell filled and a valid document; the
//! pool settings and the cost line checked against the `ceph` CLI; a size-1
//! vs size-3 comparison flags the write difference; a suite compared with
//! itself shows 0% and no significant difference. Tests run one at a time.

use crate::common;

use cephbench::suite::{self, SuiteDoc};
use serde_json::Value;

fn run_suite(args: &[&str]) -> (Value, String) {
    let out = common::cephbench()
        .args(["--format", "json", "suite"])
        .args(args)
        .output()
        .expect("cephbench runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "suite {args:?} failed: {err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    (v, err)
}

/// A built-in suite at short runtimes (1 s + 0.2 s ramp, 64 MiB image and
/// test area, no telemetry) on `pool`; its document, checked against the schema.
fn short_suite(name: &str, pool: &str, extra: &[&str]) -> SuiteDoc {
    let mut args = vec![
        name,
        "-p",
        pool,
        "--no-telemetry",
        "--runtime",
        "1s",
        "--ramp",
        "200ms",
        "--image-size",
        "64M",
        "--test-area",
        "64M",
    ];
    args.extend_from_slice(extra);
    let (v, _) = run_suite(&args);
    common::validate_suite(&v);
    serde_json::from_value(v).unwrap()
}

/// Every cell of the table has a number: no job without runs, no figure
/// missing, the text table without a '-' cell.
/// Every row complete: `runs` runs each, but once for the jobs in `once`.
fn assert_full(doc: &SuiteDoc, rows: usize, runs: u32, once: &[&str]) {
    assert!(!doc.interrupted);
    assert_eq!(doc.summary.rows.len(), rows, "{:#?}", doc.summary.rows);
    for r in &doc.summary.rows {
        let want = if once.contains(&r.job.as_str()) {
            1
        } else {
            runs
        };
        assert_eq!(r.runs, want, "{r:?}");
        assert!(r.iops.value > 0.0, "{r:?}");
        assert!(r.mean_ms.value > 0.0 && r.p99_ms.value > 0.0, "{r:?}");
        if r.op != "flush" {
            assert!(r.mb_s.value > 0.0, "{r:?}");
        }
        // A flush moves no bytes: it gets no IOPS per GiB of RAM.
        if r.op == "flush" {
            assert_eq!(r.iops_per_gib, None, "{r:?}");
        } else {
            assert!(r.iops_per_gib.is_some_and(|x| x > 0.0), "{r:?}");
        }
    }
    let mut text = Vec::new();
    cephbench::report::suite_table(doc, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "{l}");
        // (A flush row's IOPS/GiB cell is the one left empty.)
        let cells: Vec<&str> = l.split_whitespace().collect();
        let empty = cells.iter().filter(|c| **c == "-").count();
        let allowed = usize::from(l.contains(" flush "));
        assert!(empty <= allowed, "empty cell: {l}");
    }
    for e in &doc.runs {
        assert!(
            !e.result
                .warnings
                .iter()
                .any(|w| w.contains("NOT PRECONDITIONED")),
            "{:?}",
            e.result.warnings
        );
    }
}

/// The checks under the suite table: one line per run, each the run's own
/// client RTT (mean over the OSDs probed), mean latency and split, as the
/// run's result document holds them.
fn checks_match_the_runs(doc: &SuiteDoc) {
    let mut text = Vec::new();
    assert!(cephbench::report::checks_table(doc, false, &mut text).unwrap());
    let text = String::from_utf8(text).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("job "))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), doc.runs.len(), "{text}");
    for (row, e) in rows.iter().zip(&doc.runs) {
        // The job name takes the first cells; the rest are numbers from the right.
        let n = row.len();
        let (run, rtt, mean) = (row[n - 11], row[n - 10], row[n - 8]);
        assert_eq!(run, e.run.to_string(), "{row:?}");
        let rtts: Vec<f64> = e
            .result
            .network
            .iter()
            .flat_map(|n| &n.client_rtt)
            .filter(|c| c.samples > 0)
            .map(|c| c.mean_us / 1e3)
            .collect();
        let want = rtts.iter().sum::<f64>() / rtts.len() as f64;
        assert_eq!(rtt, format!("{want:.3}"), "{}: {row:?}", e.job);
        let j = e.result.jobs.iter().find(|j| j.op != "flush").unwrap();
        assert_eq!(mean, format!("{:.2}", j.latency_ns.mean / 1e6), "{row:?}");
        let other = j
            .attribution
            .as_ref()
            .and_then(|a| {
                a.shares
                    .iter()
                    .find(|s| s.part == cephbench::result::Part::Unattributed)
            })
            .map(|s| format!("{:.2}", s.ns / 1e6))
            .expect("the split of each run");
        assert_eq!(row[n - 1], other, "{row:?}");
    }
}

/// The pool settings and memory targets, against the `ceph` CLI.
fn assert_pool_settings(doc: &SuiteDoc, pool: &str) {
    let p = doc.pool_settings.as_ref().expect("pool settings probed");
    let get: Value = serde_json::from_str(&common::ceph(&[
        "osd", "pool", "get", pool, "all", "-f", "json",
    ]))
    .unwrap();
    assert_eq!(p.name, pool);
    assert_eq!(i64::from(p.size), get["size"].as_i64().unwrap());
    assert_eq!(i64::from(p.min_size), get["min_size"].as_i64().unwrap());
    assert_eq!(i64::from(p.pg_num), get["pg_num"].as_i64().unwrap());
    assert_eq!(p.crush_rule, get["crush_rule"].as_str().unwrap());
    assert_eq!(p.id, get["pool_id"].as_i64().unwrap());
    // The default rule takes the whole default root: every OSD, with its class.
    let tree: Value = serde_json::from_str(&common::ceph(&["osd", "tree", "-f", "json"])).unwrap();
    let mut osds = Vec::new();
    let mut classes = Vec::new();
    for n in tree["nodes"].as_array().unwrap() {
        if n["type"] == "osd" {
            osds.push(n["id"].as_i64().unwrap() as i32);
            classes.push(n["device_class"].as_str().unwrap().to_string());
        }
    }
    osds.sort_unstable();
    classes.sort();
    classes.dedup();
    assert_eq!(p.osds, osds);
    assert_eq!(p.device_classes, classes);
    // osd_memory_target per OSD, and the sum held.
    let mut sum = 0;
    for m in &p.osd_memory_target {
        // What the running OSD uses (`config show`): the test cluster sets
        // it in ceph.conf, which the mons' database (`config get`) does not see.
        let cli: u64 = common::ceph(&[
            "config",
            "show",
            &format!("osd.{}", m.osd),
            "osd_memory_target",
        ])
        .trim()
        .parse()
        .unwrap();
        assert_eq!(m.bytes, cli, "osd.{}", m.osd);
        sum += cli;
    }
    assert_eq!(p.osd_memory_target.len(), osds.len());
    assert_eq!(p.memory_held_bytes, Some(sum));
    assert_eq!(doc.summary.memory_held_bytes, Some(sum));
    // IOPS per GiB of one OSD's RAM: over the RAM one OSD held, measured (the
    // test cluster's OSDs run here): the largest total after a run, per OSD.
    let measured = doc
        .runs
        .iter()
        .filter_map(|e| e.result.pool.as_ref()?.memory_measured_bytes)
        .max()
        .expect("the OSDs' resident sets were measured");
    assert_eq!(doc.summary.ram_source.as_deref(), Some("measured"));
    assert_eq!(doc.summary.memory_measured_bytes, Some(measured));
    let gib = measured as f64 / osds.len() as f64 / f64::from(1u32 << 30);
    for r in doc.summary.rows.iter().filter(|r| r.op != "flush") {
        let want = r.iops.value / gib;
        assert!(
            (r.iops_per_gib.unwrap() - want).abs() < 1e-9 * want.max(1.0),
            "{r:?}"
        );
    }
    // And every run's own result carries them.
    // (Their measured RAM is each run's own: taken after it.)
    for e in &doc.runs {
        let mut q = e.result.pool.clone().expect("pool settings of the run");
        q.memory_measured_bytes = None;
        for m in &mut q.osd_memory_target {
            m.rss_bytes = None;
        }
        assert_eq!(Some(&q), Some(p));
    }
}

fn no_images_left(pool: &str) {
    let out = common::run(
        std::process::Command::new("rbd")
            .arg("-c")
            .arg(common::conf())
            .args(["ls", "-p", pool]),
    );
    assert!(out.status.success());
    let ls = String::from_utf8_lossy(&out.stdout);
    assert!(!ls.contains("cephbench_img."), "images left: {ls}");
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn suite_lab_end_to_end_and_self_compare() {
    let _g = common::serial();
    let pool = common::pool_for("cb_suite_s1", "rbd");
    let (v, err) = run_suite(&[
        "lab",
        "-p",
        pool,
        "--runtime",
        "1s",
        "--ramp",
        "500ms",
        "--image-size",
        "64M",
        "--test-area",
        "64M",
        "--progress",
        "always",
    ]);
    common::validate_suite(&v);
    // The lab method: five jobs and the rados bench check twice, the fsync job once.
    assert!(err.contains("expected 0:19 of measuring"), "{err}");
    assert!(err.contains("job 13 of 13"), "{err}");
    let doc: SuiteDoc = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(doc.runs.len(), 13);
    assert_full(&doc, 8, 2, &["4k randwrite QD1 fsync"]);
    assert_pool_settings(&doc, pool);
    // One image, preconditioned once: every run records the same pass.
    let pre: Vec<_> = doc
        .runs
        .iter()
        .filter_map(|e| match &e.result.workload {
            cephbench::result::Workload::Rbd(w) => Some((w.image.clone(), w.precondition.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(pre.len(), 11);
    assert!(pre.iter().all(|p| p == &pre[0] && p.1.is_some()), "{pre:?}");
    let p = pre[0].1.as_ref().unwrap();
    assert_eq!(
        (p.bytes, p.block_size),
        (64 << 20, 1 << 20),
        "the lab method's 1 MiB fill"
    );
    // The check: rados bench -b 4096 -t 1 write.
    let check: Vec<_> = doc
        .runs
        .iter()
        .filter_map(|e| match &e.result.workload {
            cephbench::result::Workload::Rados(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(check.len(), 2);
    checks_match_the_runs(&doc);
    for w in check {
        assert_eq!(
            (
                w.mode.as_str(),
                w.block_size,
                w.object_size,
                w.concurrent_ios
            ),
            ("write", 4096, 4096, 1)
        );
    }
    no_images_left(pool);
    // The centre of each figure is the mean of the two runs' results.
    let row = &doc.summary.rows[0];
    let iops: Vec<f64> = doc
        .runs
        .iter()
        .filter(|e| e.job == row.job)
        .map(|e| e.result.jobs[0].iops)
        .collect();
    assert!((row.iops.value - (iops[0] + iops[1]) / 2.0).abs() < 1e-6);

    // The same file twice: 0% everywhere, nothing significant.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("lab.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = common::cephbench()
        .arg("compare")
        .arg(&f)
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("A: suite lab on cb_suite_s1"), "{text}");
    // The comparison table's rows (not the "where the mean went" tables under it).
    let body: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("* = "))
        .filter(|l| l.starts_with("4k ") || l.starts_with("1M "))
        .collect();
    assert!(body.len() >= 7 * 6, "{text}");
    for l in &body {
        // Percentiles get no verdict; a zero baseline (flush MB/s) no Diff.
        assert!(
            l.ends_with("+0.0% ~") || l.ends_with("+0.0%") || l.ends_with(" -"),
            "{l}"
        );
    }
    assert!(body.iter().any(|l| l.ends_with("+0.0% ~")), "{text}");
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn suite_cdm_end_to_end() {
    let _g = common::serial();
    let pool = common::pool_for("cb_suite_s1", "rbd");
    let doc = short_suite("cdm", pool, &[]);
    assert_eq!(doc.runs.len(), 16);
    assert_full(&doc, 8, 2, &[]);
    let labels: Vec<&str> = doc.summary.rows.iter().map(|r| r.label.as_str()).collect();
    for want in [
        "SEQ1M Q8T1 read",
        "SEQ1M Q1T1 read",
        "RND4K Q32T1 read",
        "RND4K Q1T1 read",
        "SEQ1M Q8T1 write",
        "SEQ1M Q1T1 write",
        "RND4K Q32T1 write",
        "RND4K Q1T1 write",
    ] {
        assert!(labels.contains(&want), "{labels:?}");
    }
    no_images_left(pool);
    cdm_table_matches_the_document(&doc);
}

/// The guest of IOPS per GiB of one OSD's RAM (`suite vm`) at short runtimes: its fio lines (4k at
/// QD32 x 4 jobs, 1M at QD32 x 1), every cell filled, and the cost over the
/// RAM one OSD held, measured here (the test cluster's OSDs run on this host).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn suite_vm_end_to_end_with_the_measured_cost() {
    let _g = common::serial();
    let pool = common::pool_for("cb_suite_s1", "rbd");
    let doc = short_suite("vm", pool, &["--runs", "2"]);
    assert_eq!(doc.runs.len(), 6);
    assert_full(&doc, 3, 2, &[]);
    for e in &doc.runs {
        match &e.result.workload {
            cephbench::result::Workload::Rbd(w) => {
                let jobs = if w.bs == 4096 { 4 } else { 1 };
                assert_eq!((w.numjobs, w.iodepth), (jobs, 32), "{}", e.job);
            }
            _ => panic!("vm runs rbd jobs"),
        }
    }
    let s = &doc.summary;
    assert_eq!(s.ram_source.as_deref(), Some("measured"));
    let n = doc.pool_settings.as_ref().unwrap().osds.len() as f64;
    let one = s.ram_per_osd_bytes.unwrap();
    assert!((one - s.memory_measured_bytes.unwrap() as f64 / n).abs() < 1.0);
    let gib = one / f64::from(1u32 << 30);
    for r in s.rows.iter().filter(|r| r.op != "flush") {
        assert!(
            (r.iops_per_gib.unwrap() - r.iops.value / gib).abs() < 1e-6 * r.iops.value.max(1.0)
        );
    }
    let mut text = Vec::new();
    cephbench::report::suite_table(&doc, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("of RAM, measured") && text.contains("IOPS/GiB = IOPS / one OSD's"),
        "{text}"
    );
    no_images_left(pool);
}

/// A cell of CrystalDiskMark's text table as a number (`1,296` -> 1296).
fn number(cell: &str) -> f64 {
    cell.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell}"))
}

/// Whether a printed figure is `want` to the digits it shows.
fn shows(cell: &str, want: f64) -> bool {
    let decimals = cell.split('.').nth(1).map_or(0, str::len) as i32;
    (number(cell) - want).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9
}

/// `report` of the saved document prints CrystalDiskMark's table whose
/// cells are the document's figures: MB/s = bytes/s / 10^6 of that job's
/// runs (their mean for two runs, or the best run's with `--aggregate
/// best`), and its p99; `compare` of the file with itself: +0% within the
/// noise in every Diff.
fn cdm_table_matches_the_document(doc: &SuiteDoc) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cdm.json");
    std::fs::write(&f, serde_json::to_vec(doc).unwrap()).unwrap();
    for best in [false, true] {
        let mut cmd = common::cephbench();
        cmd.arg("report").arg(&f);
        if best {
            cmd.args(["--aggregate", "best"]);
        }
        let text = common::ok(cmd.output().unwrap(), "report of the cdm suite");
        let how = if best {
            "best of 2 runs"
        } else {
            "median of 2 runs"
        };
        assert!(text.contains(how), "{text}");
        assert!(text.contains("MB/s = 10^6 bytes/s"), "{text}");
        for profile in suite::CDM_PROFILES {
            let row = text
                .lines()
                .find(|l| l.starts_with(&format!("{profile}  ")))
                .unwrap_or_else(|| panic!("no row {profile}: {text}"));
            let cells: Vec<&str> = row[profile.len()..].split_whitespace().collect();
            assert_eq!(cells.len(), 4, "{row}");
            for (k, op) in ["read", "write"].into_iter().enumerate() {
                let runs: Vec<&cephbench::result::JobReport> = doc
                    .runs
                    .iter()
                    .filter(|e| e.job == format!("{profile} {op}"))
                    .map(|e| &e.result.jobs[0])
                    .collect();
                assert_eq!(runs.len(), 2);
                let mbs: Vec<f64> = runs.iter().map(|j| j.bytes_per_sec / 1e6).collect();
                let p99: Vec<f64> = runs.iter().map(|j| j.latency_ns.p99 as f64 / 1e6).collect();
                let (want_mbs, want_p99) = if best {
                    let i = if mbs[0] >= mbs[1] { 0 } else { 1 };
                    (mbs[i], p99[i])
                } else {
                    ((mbs[0] + mbs[1]) / 2.0, (p99[0] + p99[1]) / 2.0)
                };
                assert!(shows(cells[2 * k], want_mbs), "{op} MB/s {want_mbs}: {row}");
                assert!(
                    shows(cells[2 * k + 1], want_p99),
                    "{op} p99 {want_p99}: {row}"
                );
            }
        }
    }
    let text = common::ok(
        common::cephbench()
            .arg("compare")
            .arg(&f)
            .arg(&f)
            .output()
            .unwrap(),
        "compare of the cdm suite with itself",
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| suite::CDM_PROFILES.iter().any(|p| l.starts_with(p)))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    for r in rows {
        assert_eq!(r.matches("+0% ~").count(), 2, "{r}");
    }
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn size_1_vs_size_3_writes_differ_significantly_with_pools_alternated() {
    let _g = common::serial();
    let s1 = common::pool_for("cb_suite_s1", "rbd");
    let s3 = common::pool_sized("cb_suite_s3", "rbd", 3);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.toml");
    std::fs::write(
        &f,
        "name = \"w\"\nruns = 4\nduration = \"3s\"\nramp = \"1s\"\nimage-size = \"64M\"\n\
         [[job]]\nname = \"4k write QD16\"\ncommand = \"rbd\"\nrw = \"randwrite\"\nbs = \"4K\"\niodepth = 16\n",
    )
    .unwrap();
    let pools = format!("{s1},{s3}");
    // A second suite only where the first found no significant difference:
    // a loaded moment of the 2 shared cores that slows one run of a side
    // widens its spread past what Welch's test takes for 4 runs. A suite
    // that cannot tell size 1 from size 3 fails both.
    let significant = |v: &serde_json::Value| {
        v["comparison"]["rows"].as_array().and_then(|rows| {
            rows.iter()
                .find(|r| r["job"] == "4k write QD16/write" && r["figure"] == "IOPS")
                .map(|r| r["significant"][1] == true)
        }) == Some(true)
    };
    let (mut v, _) = run_suite(&[f.to_str().unwrap(), "--pools", &pools, "--no-telemetry"]);
    if !significant(&v) {
        eprintln!(
            "first suite, no significant difference: {}",
            v["comparison"]
        );
        v = run_suite(&[f.to_str().unwrap(), "--pools", &pools, "--no-telemetry"]).0;
    }
    let suites = v["suites"].as_array().expect("one document per pool");
    assert_eq!(suites.len(), 2);
    for s in suites {
        common::validate_suite(s);
    }
    assert_eq!(suites[1]["pool_settings"]["size"], 3);
    // The two pools differ in their size, and the comparison says so in one
    // line (their OSDs are the same, and so are their other settings).
    let notes = v["comparison"]["notes"].to_string();
    assert_eq!(
        notes.matches("the comparison mixes them").count(),
        1,
        "{notes}"
    );
    assert!(
        notes.contains("A ran with size 1, B with 3: the comparison mixes them"),
        "{notes}"
    );
    // The pools took turns run by run: A1 B1 A2 B2 A3 B3 A4 B4 (four a
    // side: with three, one slow run hid a 57 % difference from Welch's
    // test once here).
    let starts: Vec<Vec<u64>> = suites
        .iter()
        .map(|s| {
            s["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["result"]["started_unix"].as_u64().unwrap())
                .collect()
        })
        .collect();
    assert_eq!((starts[0].len(), starts[1].len()), (4, 4), "{starts:?}");
    for k in 0..4 {
        assert!(starts[0][k] < starts[1][k], "{starts:?}");
        if k + 1 < 4 {
            assert!(starts[1][k] < starts[0][k + 1], "{starts:?}");
        }
    }
    // Judged between runs (Welch over the 4 runs a side).
    assert!(
        v["comparison"]["method"]
            .as_str()
            .unwrap()
            .contains("Welch"),
        "{}",
        v["comparison"]["method"]
    );
    let rows = v["comparison"]["rows"].as_array().unwrap();
    let iops = rows
        .iter()
        .find(|r| r["job"] == "4k write QD16/write" && r["figure"] == "IOPS")
        .unwrap_or_else(|| panic!("{rows:#?}"));
    eprintln!("size 1 vs size 3: {iops}");
    let diff = iops["diff_pct"][1].as_f64().unwrap();
    assert!(diff < 0.0, "size 3 writes slower: {iops}");
    assert_eq!(iops["significant"][1], true, "{iops}");
    // The numbers are the two suites' medians.
    assert_eq!(
        iops["values"][0].as_f64().unwrap(),
        suites[0]["summary"]["rows"][0]["iops"]["value"]
            .as_f64()
            .unwrap()
    );
    no_images_left(s3);
}

/// The global options reach a suite's runs as they reach a single run:
/// `--counter-interval` (per-OSD counter timelines of each run) and the
/// telemetry identity (`--telemetry-id`), which gives a data identity
/// without `osd 'allow *'` the per-OSD counters; `-N` puts the rados jobs
/// in a namespace. Before, the suite used the default interval and never
/// connected the telemetry identity.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn suite_honours_counter_interval_telemetry_identity_and_namespace() {
    let _g = common::serial();
    let p = common::pool("cbt-suite-flags");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flags.toml");
    std::fs::write(
        &file,
        "name = \"flags\"\nruns = 1\nduration = \"4s\"\nramp = \"0s\"\n\n[[job]]\nname = \"w\"\n\
         command = \"rados\"\nmode = \"write\"\nblock-size = \"4K\"\nconcurrent-ios = 4\n",
    )
    .unwrap();
    let keyring = |id: &str, caps: &[&str]| {
        let entity = format!("client.{id}");
        let _ = common::run(
            std::process::Command::new("ceph")
                .arg("-c")
                .arg(common::conf())
                .args(["auth", "rm", &entity]),
        );
        let mut args = vec!["auth", "get-or-create", entity.as_str()];
        args.extend_from_slice(caps);
        let path = dir.path().join(format!("{id}.keyring"));
        std::fs::write(&path, common::ceph(&args)).unwrap();
        path
    };
    let data_cap = format!("allow rw pool={p}");
    let data = keyring(
        "cbt-sdata",
        &["mon", "allow r", "mgr", "allow r", "osd", &data_cap],
    );
    let tel = keyring(
        "cbt-stel",
        &["mon", "allow r", "mgr", "allow r", "osd", "allow *"],
    );
    let out = common::cephbench()
        .args(["--id", "cbt-sdata", "--keyring"])
        .arg(&data)
        .args(["--telemetry-id", "cbt-stel", "--telemetry-keyring"])
        .arg(&tel)
        .args(["--counter-interval", "1s", "--format", "json", "suite"])
        .arg(&file)
        .args(["-p", p, "-N", "cbt-suite-ns"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let run = &v["runs"][0]["result"];
    assert_eq!(run["workload"]["namespace"], "cbt-suite-ns");
    let osds = run["osds"].as_array().expect("per-OSD rows");
    assert!(!osds.is_empty());
    for o in osds {
        assert!(
            o["counters"].is_object(),
            "no OSD counters: the telemetry identity was not used: {o}"
        );
        let samples = o["timeline"].as_array().map_or(0, Vec::len);
        assert!(
            samples >= 3,
            "osd.{}: {samples} counter samples in a 4 s run at --counter-interval 1s",
            o["osd"]
        );
    }
    let left = common::rados(&["-p", p, "ls", "--all"]);
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains("cephbench_"),
        "the suite left objects behind"
    );
    for id in ["cbt-sdata", "cbt-stel"] {
        common::ceph(&["auth", "rm", &format!("client.{id}")]);
    }
}

/// 3 copies against 2+1 as one table: `--pools S3,S3 --data-pools -,EC`
/// runs a suite file's rbd write and read on an image of the size-3 pool and
/// on one whose data objects are in a k=2 m=1 pool (its metadata in the
/// size-3 pool), and its rados write on each side's data pool. The
/// comparison's capacity row holds each side's usable fraction (1/size and
/// k/(k+m) from the `ceph` CLI) beside its IOPS; the text shows both, the
/// second side's data pool named; nothing is left behind.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn three_copies_vs_two_plus_one_show_their_usable_capacity() {
    let _g = common::serial();
    let s3 = common::pool_sized("cb_suite_s3", "rbd", 3);
    let ec = common::ec_pool("cb_suite_ec21", "rbd", true);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ec.toml");
    std::fs::write(
        &f,
        "name = \"ec\"\nruns = 1\nduration = \"1s\"\nramp = \"200ms\"\nimage-size = \"16M\"\n\
         [[job]]\nname = \"4k randwrite QD16\"\ncommand = \"rbd\"\nrw = \"randwrite\"\niodepth = 16\n\
         [[job]]\nname = \"4k randread QD16\"\ncommand = \"rbd\"\nrw = \"randread\"\niodepth = 16\n\
         [[job]]\nname = \"rados 4k write QD16\"\ncommand = \"rados\"\nmode = \"write\"\n\
         block-size = \"4K\"\nobject-size = \"4K\"\nconcurrent-ios = 16\n",
    )
    .unwrap();
    let (v, _) = run_suite(&[
        f.to_str().unwrap(),
        "--pools",
        &format!("{s3},{s3}"),
        "--data-pools",
        &format!("-,{ec}"),
        "--no-telemetry",
    ]);
    let suites = v["suites"].as_array().expect("one document per pool");
    assert_eq!(suites.len(), 2);
    for s in suites {
        common::validate_suite(s);
    }
    assert_eq!(suites[0]["pool"], s3);
    assert!(suites[0].get("data_pool").is_none());
    assert_eq!(suites[1]["pool"], s3);
    assert_eq!(suites[1]["data_pool"], ec);
    assert_eq!(suites[1]["pool_settings"]["name"], ec);
    assert_eq!(suites[1]["pool_settings"]["erasure"]["k"], 2);
    for r in suites[1]["runs"].as_array().unwrap() {
        let w = &r["result"]["workload"];
        match w["kind"].as_str() {
            Some("rbd") => assert_eq!(w["data_pool"], ec, "{w}"),
            _ => assert_eq!(w["pool"], ec, "the rados job runs on the data pool: {w}"),
        }
        assert_eq!(r["result"]["pool"]["name"], ec);
    }
    // The usable fractions, from the CLI: 1/size and k/(k+m).
    let size: f64 = common::ceph(&["osd", "pool", "get", s3, "size", "-f", "json"])
        .parse::<Value>()
        .unwrap()["size"]
        .as_f64()
        .unwrap();
    let profile = common::ec_profile();
    let num = |k: &str| profile[k].as_str().unwrap().parse::<f64>().unwrap();
    let want = [100.0 / size, 100.0 * num("k") / (num("k") + num("m"))];
    let rows = v["comparison"]["rows"].as_array().unwrap();
    let usable = rows
        .iter()
        .find(|r| r["figure"] == "usable %")
        .unwrap_or_else(|| panic!("no capacity row: {rows:#?}"));
    for (i, w) in want.iter().enumerate() {
        let got = usable["values"][i].as_f64().unwrap();
        assert!((got - w).abs() < 1e-9, "{usable}");
    }
    let iops = rows
        .iter()
        .find(|r| r["job"] == "4k randwrite QD16/write" && r["figure"] == "IOPS")
        .unwrap();
    eprintln!(
        "3 copies vs 2+1: usable {:.0} % vs {:.0} %, 4k randwrite QD16 {:.0} vs {:.0} IOPS",
        want[0],
        want[1],
        iops["values"][0].as_f64().unwrap(),
        iops["values"][1].as_f64().unwrap()
    );
    // The text table, from the saved document.
    let saved = dir.path().join("pools.json");
    std::fs::write(&saved, v.to_string()).unwrap();
    let text = common::ok(
        common::cephbench()
            .arg("report")
            .arg(&saved)
            .output()
            .unwrap(),
        "report",
    );
    let line = text
        .lines()
        .find(|l| l.contains("usable %"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("33 %") && line.contains("67 %"), "{line}");
    assert!(
        text.contains(&format!("on pool {s3}, data in pool {ec}"))
            && text.contains("Data pool: erasure 2+1"),
        "{text}"
    );
    no_images_left(s3);
    let left = common::ok(common::rados(&["-p", ec, "ls"]), "rados ls");
    assert!(
        !left
            .lines()
            .any(|l| l.starts_with("rbd_data.") || l.starts_with("cephbench_")),
        "left in {ec}: {left}"
    );
}
