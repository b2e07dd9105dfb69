//! Suites without a cluster: the summary of a fixed set of runs (checked
//! against figures computed by hand), its text and Markdown tables
//! (snapshots, 100 columns), the suite schema, `compare` of suite files,
//! and the TOML loader against garbage.

mod common;

use cephbench::progress::Sample;
use cephbench::result::*;
use cephbench::stats::LatencySummary;
use cephbench::suite::{self, RunEntry, SuiteDoc, SuiteSettings};
use proptest::prelude::*;

fn job(name: &str, op: &str, iops: f64, bs: u64, mean_ms: f64, p99_ms: f64) -> JobReport {
    let secs = 4.0;
    let ops = (iops * secs) as u64;
    JobReport {
        client: None,
        changes: None,
        projections: None,
        per_second: None,
        end_flush: None,
        name: name.into(),
        op: op.into(),
        ops,
        errors: 0,
        bytes: ops * bs,
        elapsed_s: secs,
        iops,
        bytes_per_sec: iops * bs as f64,
        latency_ns: LatencySummary {
            min: 100_000,
            mean: mean_ms * 1e6,
            stddev: mean_ms * 2e5,
            p50: (mean_ms * 0.9e6) as u64,
            p90: (mean_ms * 1.5e6) as u64,
            p99: (p99_ms * 1e6) as u64,
            p99_9: (p99_ms * 1.5e6) as u64,
            max: (p99_ms * 2e6) as u64,
        },
        stop_reason: "duration".into(),
        verify_mismatches: None,
        short_reads: 0,
        first_error: None,
        errors_by_errno: Default::default(),
        longest_gap_s: 0.0,
        slow_ops: 0,
        slow_op_s: 1.0,
        timeline: (0..5)
            .map(|i| Sample {
                t_s: i as f64 + 1.0,
                ramp: i == 0,
                ops: (iops * (1.0 + 0.02 * (i % 2) as f64)) as u64,
                bytes: (iops as u64) * bs,
                mean_latency_ns: mean_ms * 1e6,
                in_flight: 1,
                errors: 0,
                ..Default::default()
            })
            .collect(),
        histogram: None,
        attribution: None,
        service_latency_ns: None,
        rate: None,
    }
}

fn pool() -> PoolSettings {
    common::pool_of_three(None)
}

fn result(jobs: Vec<JobReport>, rw: &str, bs: u64, qd: u64, fsync: Option<u64>) -> BenchResult {
    BenchResult {
        schema_version: 1,
        tool: ToolInfo {
            name: "cephbench".into(),
            version: "0.0.0-test".into(),
        },
        cluster: ClusterInfo {
            fsid: "54c4ac3b-6091-470a-8324-1db1b843c304".into(),
            ceph_version: Some("ceph version 16.2.15 pacific (stable)".into()),
            librados_version: "3.0.0".into(),
            client_host: "bench01".into(),
            entity: "client.admin".into(),
            client_kernel: None,
            client_cpu_governor: None,
        },
        started_unix: 1_700_000_000,
        workload: Workload::Rbd(RbdWorkload {
            pool: "rbd-vm".into(),
            data_pool: None,
            image: "cephbench_img.bench01.1.1700000000".into(),
            image_created: false,
            image_size: 8 << 30,
            object_size: 4 << 20,
            features: 61,
            test_area: 2 << 30,
            rw: rw.into(),
            rwmix_read: 50,
            bs,
            iodepth: qd,
            numjobs: 1,
            duration_s: Some(4.0),
            io_total: None,
            ramp_s: 1.0,
            fsync_every: fsync,
            rbd_cache: false,
            random_map: Some(true),
            end_flush: false,
            preconditioned: true,
            precondition: Some(Precondition {
                bytes: 2 << 30,
                block_size: 4 << 20,
                elapsed_s: 12.5,
            }),
        }),
        latency_kind: "completion".into(),
        latency_definition: "completion latency".into(),
        jobs,
        osds: vec![],
        placement: None,
        network: None,
        tail: Vec::new(),
        clients: None,
        cluster_state: None,
        read_cache: None,
        disruption: None,
        pace: None,
        interrupted: false,
        warnings: vec![],
        findings: Vec::new(),
        pool: Some(pool()),
    }
}

/// The lab method's rbd-vm row, two runs per job, numbers chosen so the centre
/// and spread are easy to check by hand.
fn fixture() -> SuiteDoc {
    let mut runs = Vec::new();
    let k = 4096;
    let m = 1 << 20;
    for (run, f) in [(1u32, 0.83), (2, 1.17)] {
        let e = |name: &str, jobs: Vec<JobReport>, rw: &str, bs, qd, fsync| RunEntry {
            job: name.into(),
            run,
            result: result(jobs, rw, bs, qd, fsync),
        };
        runs.push(e(
            "4k randread QD32",
            vec![job("randread/read", "read", 10357.0 * f, k, 3.0 * f, 9.0)],
            "randread",
            k,
            32,
            None,
        ));
        runs.push(e(
            "4k randwrite QD32",
            vec![job("randwrite/write", "write", 306.0, k, 100.0, 300.0 * f)],
            "randwrite",
            k,
            32,
            None,
        ));
        runs.push(e(
            "1M seq read QD16",
            vec![job("read/read", "read", 937.5, m, 17.0, 40.0)],
            "read",
            m,
            16,
            None,
        ));
        runs.push(e(
            "4k randwrite QD1 fsync",
            vec![
                job("randwrite/write", "write", 26.0, k, 38.21, 42.21),
                job("randwrite/flush", "flush", 26.0, 0, 38.53, 45.0),
            ],
            "randwrite",
            k,
            1,
            Some(1),
        ));
    }
    let order: Vec<String> = [
        "4k randread QD32",
        "4k randwrite QD32",
        "1M seq read QD16",
        "4k randwrite QD1 fsync",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let summary = suite::summarize(&order, &runs, Some(&pool()), Default::default());
    SuiteDoc {
        suite_schema_version: suite::SUITE_SCHEMA_VERSION,
        suite: "lab".into(),
        source: "built-in".into(),
        pool: "rbd-vm".into(),
        data_pool: None,
        settings: SuiteSettings {
            runs: 2,
            runtime_s: 4.0,
            ramp_s: 1.0,
            image_size: 8 << 30,
            test_area: 2 << 30,
            telemetry: true,
            aggregate: Default::default(),
        },
        pool_settings: Some(pool()),
        started_unix: 1_700_000_000,
        elapsed_s: 50.0,
        interrupted: false,
        runs,
        summary,
    }
}

#[test]
fn summary_figures_match_hand_computation() {
    let d = fixture();
    let rows = &d.summary.rows;
    assert_eq!(rows.len(), 5, "fsync job: a write row and a flush row");
    // 10357 x 0.83 and x 1.17: mean 10357, spread (1.17-0.83)/2 = 17%.
    let rr = &rows[0];
    assert!((rr.iops.value - 10357.0).abs() < 1e-6, "{rr:?}");
    assert!((rr.iops.spread_pct - 17.0).abs() < 1e-6 && rr.iops.flagged);
    assert!((rr.mb_s.value - 10357.0 * 4096.0 / 1e6).abs() < 1e-6);
    assert!((rr.mean_ms.value - 3.0).abs() < 1e-9);
    assert_eq!((rr.p99_ms.value, rr.p99_ms.spread_pct), (9.0, 0.0));
    // IOPS per GiB of one OSD's RAM. Not measured here (no
    // OSD ran on the host): 12 GiB configured over 3 OSDs, 4 GiB each.
    assert_eq!(d.summary.ram_source.as_deref(), Some("osd_memory_target"));
    assert!((rr.iops_per_gib.unwrap() - 10357.0 / 4.0).abs() < 1e-6);
    // Measured after each run: the largest total of a run counts, over its OSDs.
    let mut m = d.clone();
    for (i, e) in m.runs.iter_mut().enumerate() {
        let p = e.result.pool.get_or_insert_with(pool);
        let gib = [1.2, 1.5][i % 2];
        p.memory_measured_bytes = Some((gib * f64::from(1u32 << 30)) as u64);
    }
    m.summary = suite::summarize(
        &m.job_order(),
        &m.runs,
        m.pool_settings.as_ref(),
        Default::default(),
    );
    assert_eq!(m.summary.ram_source.as_deref(), Some("measured"));
    let one = m.summary.ram_per_osd_bytes.unwrap() / f64::from(1u32 << 30);
    assert!((one - 0.5).abs() < 1e-6, "1.5 GiB over 3 OSDs: {one}");
    assert!((m.summary.rows[0].iops_per_gib.unwrap() - 10357.0 / 0.5).abs() < 1e-3);
    let mut text = Vec::new();
    cephbench::report::suite_table(&m, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("held 1.50 GiB of RAM, measured") && text.contains("one OSD's 512 MiB"),
        "{text}"
    );
    let rw = &rows[1];
    assert!(!rw.iops.flagged && rw.p99_ms.flagged && rw.flagged);
    assert_eq!(rows[3].label, "4k randwrite QD1 fsync write");
    assert_eq!(rows[4].label, "4k randwrite QD1 fsync flush");
    assert!((rows[4].mean_ms.value - 38.53).abs() < 1e-9);
}

/// A suite's HTML/JSON view of a job keeps the repetition that kept the
/// fewest of its asked ops in flight, so one CLIENT SHORT run is not averaged away.
#[test]
fn the_suite_view_keeps_the_client_that_fell_shortest() {
    let mut d = fixture();
    for e in &mut d.runs {
        let in_flight = if e.run == 1 { 31.0 } else { 22.0 };
        for j in &mut e.result.jobs {
            j.client = Some(cephbench::result::ClientLoad {
                asked_in_flight: 32,
                mean_in_flight: in_flight,
                refill_wait_ns: 1000.0,
            });
        }
    }
    let r = cephbench::suite::as_bench_result(&d).unwrap();
    let c = r.jobs[0].client.unwrap();
    assert_eq!(c.mean_in_flight, 22.0, "{c:?}");
    assert!(c.fell_short());
}

/// A preconditioning pass cut short is not reported as a preconditioned
/// test area.
#[test]
fn preconditioning_cut_short_is_not_preconditioned() {
    let mut r = result(
        vec![job("randread/read", "read", 10_000.0, 4096, 3.0, 9.0)],
        "randread",
        4096,
        32,
        None,
    );
    if let cephbench::result::Workload::Rbd(w) = &mut r.workload {
        w.preconditioned = false;
        w.precondition = Some(Precondition {
            bytes: 477 << 20,
            block_size: 4 << 20,
            elapsed_s: 3.5,
        });
    }
    let doc = cephbench::report::Document::Results(vec![("r.json".into(), r)]);
    let mut buf = Vec::new();
    cephbench::report::render(
        &doc,
        cephbench::report::Format::Text,
        cephbench::report::View::default(),
        &mut buf,
    )
    .unwrap();
    // (The text wraps at 100 columns: compare word by word.)
    let text = String::from_utf8(buf).unwrap();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("preconditioning CUT SHORT: 477 MiB of the 2 GiB test area"),
        "{text}"
    );
    assert!(!text.contains("preconditioned ("), "{text}");
}

#[test]
fn table_snapshots_fit_100_columns() {
    let d = fixture();
    let mut text = Vec::new();
    cephbench::report::suite_table(&d, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "wider than 100: {l}");
    }
    assert!(text.contains("10,357 ±17%!"), "{text}");
    insta::assert_snapshot!("suite_table_text", text);
    let mut md = Vec::new();
    cephbench::report::suite_table(&d, true, &mut md).unwrap();
    insta::assert_snapshot!("suite_table_markdown", String::from_utf8(md).unwrap());
}

#[test]
fn long_job_names_are_cut_to_fit() {
    let mut d = fixture();
    d.summary.rows[0].label = "x".repeat(150);
    let mut text = Vec::new();
    cephbench::report::suite_table(&d, false, &mut text).unwrap();
    for l in String::from_utf8(text).unwrap().lines() {
        assert!(l.chars().count() <= 100, "wider than 100: {l}");
    }
}

#[test]
fn suite_document_validates_and_round_trips() {
    let d = fixture();
    let v = serde_json::to_value(&d).unwrap();
    common::validate_suite(&v);
    let back: SuiteDoc = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(back, d);
    // The schema is not vacuous.
    let mut bad = v.clone();
    bad["summary"]["rows"][0]["iops"]["spread_pct"] = serde_json::json!("17%");
    let r = std::panic::catch_unwind(|| common::validate_suite(&bad));
    assert!(r.is_err(), "a string spread must not validate");
    let mut bad = v;
    bad["runs"][0]["result"]["pool"]["size"] = serde_json::json!(-1);
    assert!(std::panic::catch_unwind(|| common::validate_suite(&bad)).is_err());
}

#[test]
fn compare_accepts_suite_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    std::fs::write(&a, serde_json::to_vec(&fixture()).unwrap()).unwrap();
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["--format", "json", "compare"])
        .arg(&a)
        .arg(&a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["labels"][0], "suite lab on rbd-vm");
    let rows = c["rows"].as_array().unwrap();
    let iops = rows
        .iter()
        .find(|r| r["job"] == "4k randread QD32/read" && r["figure"] == "IOPS")
        .expect("the suite's rows");
    assert_eq!(iops["values"][0].as_f64().unwrap().round(), 10357.0);
    for r in rows {
        if let Some(d) = r["diff_pct"][1].as_f64() {
            assert_eq!(d, 0.0, "{r}");
        }
        assert_ne!(r["significant"][1], true, "{r}");
    }
    assert!(rows.iter().any(|r| r["significant"][1] == false));
}

#[test]
fn bad_suite_files_fail_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.toml");
    std::fs::write(
        &f,
        "runs = 2\n\n[[job]]\ncommand = \"rbd\"\nbs = 4096\nqd = 3\n",
    )
    .unwrap();
    // An unreachable mon: the error must come before any connection attempt.
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["-m", "192.0.2.1:1", "--connect-timeout", "1s", "suite"])
        .arg(&f)
        .args(["-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("s.toml: line 6: unknown field `qd`"), "{err}");
    assert!(out.stdout.is_empty());

    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["suite", "nosuch", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lab, cdm, rados, vm"));
}

#[test]
fn builtins_are_the_methods() {
    let lab = suite::builtin("lab").unwrap();
    assert_eq!(lab.runs, 2);
    assert_eq!(lab.jobs.len(), 7);
    assert_eq!(lab.test_area, 2 << 30);
    // The lab method: five 20 s + 3 s jobs twice, the fsync job 15 s + 2 s once,
    // and `rados bench -b 4096 -t 1` write twice.
    assert_eq!(
        lab.expected(),
        std::time::Duration::from_secs(2 * 6 * 23 + 17)
    );
    let fsync = &lab.jobs[5];
    assert_eq!(
        (
            fsync.runs,
            fsync.runtime.unwrap().as_secs(),
            fsync.ramp.unwrap().as_secs()
        ),
        (Some(1), 15, 2)
    );
    assert_eq!(lab.plan().iter().filter(|(j, _)| *j == 5).count(), 1);
    let cdm = suite::builtin("cdm").unwrap();
    assert_eq!(cdm.jobs.len(), 8);
    let rados = suite::builtin("rados").unwrap();
    assert!(!rados.uses_image());
    // IOPS per GiB of one OSD's RAM: QD32 x 4 jobs for 4k, one job for 1M, 60 s, median of 3 runs.
    let vm = suite::builtin("vm").unwrap();
    assert_eq!((vm.runs, vm.runtime.as_secs()), (3, 60));
    assert_eq!(vm.test_area, 32 << 30);
    let shape: Vec<_> = vm
        .jobs
        .iter()
        .map(|j| match &j.kind {
            suite::JobKind::Rbd {
                rw,
                bs,
                iodepth,
                numjobs,
                ..
            } => (rw.as_str(), *bs, *iodepth, *numjobs),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("randread", 4096, 32, 4),
            ("randwrite", 4096, 32, 4),
            ("read", 1 << 20, 32, 1)
        ]
    );
    // --runtime/--ramp override every job; expected time = runs x jobs x (runtime + ramp).
    let o = suite::SuiteOptions {
        pool: "p".into(),
        data_pool: None,
        runs: Some(3),
        runtime: Some(std::time::Duration::from_secs(2)),
        ramp: Some(std::time::Duration::from_secs(1)),
        image_size: None,
        test_area: Some(3 << 20),
        telemetry: false,
        counter_interval: std::time::Duration::ZERO,
        interval: std::time::Duration::from_secs(1),
        op_history: None,
        drop_caches: false,
        progress: false,
        group: None,
        namespace: None,
    };
    let s = lab.with_options(&o).unwrap();
    assert_eq!(s.expected(), std::time::Duration::from_secs(3 * 7 * 3));
    let o = suite::SuiteOptions {
        test_area: Some((1 << 20) + 4096),
        ..o
    };
    let e = lab.with_options(&o).unwrap_err();
    assert!(e.contains("1M seq read QD16"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Garbage never panics; an error always names the file and a line
    /// inside it, on one line.
    #[test]
    fn toml_loader_survives_garbage(text in "\\PC{0,200}") {
        check(&text);
    }

    /// Near-valid files (keys and values shuffled from the real format).
    #[test]
    fn toml_loader_survives_near_misses(lines in proptest::collection::vec(
        prop_oneof![
            Just("[[job]]".to_string()),
            Just("[job]".to_string()),
            Just("command = \"rbd\"".to_string()),
            Just("command = \"rados\"".to_string()),
            Just("mode = \"seq\"".to_string()),
            Just("mode = \"write\"".to_string()),
            Just("rw = \"randrw\"".to_string()),
            Just("fsync-every = 1".to_string()),
            Just("fsync-every = 0".to_string()),
            Just("iodepth = 99999999999999999999".to_string()),
            Just("iodepth = -1".to_string()),
            Just("bs = \"3K\"".to_string()),
            Just("bs = 1.5".to_string()),
            Just("duration = \"-1s\"".to_string()),
            Just("duration = 1e400".to_string()),
            Just("ramp = 0.5".to_string()),
            Just("test-area = \"1M\"".to_string()),
            Just("image-size = \"512K\"".to_string()),
            Just("runs = 0".to_string()),
            Just("name = \"x\"".to_string()),
            "[a-z-]{1,10} = [0-9\"a-z]{0,6}",
        ],
        0..14,
    )) {
        check(&lines.join("\n"));
    }
}

fn check(text: &str) {
    match suite::parse(text, "g.toml") {
        Ok(s) => {
            assert!(!s.jobs.is_empty());
            assert!(s.runs >= 1 && !s.runtime.is_zero());
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with("g.toml: line "), "{m}");
            assert!(!m.contains('\n'), "{m}");
            assert!(
                e.line >= 1 && e.line <= text.matches('\n').count() + 1,
                "{m} for {text:?}"
            );
        }
    }
}

/// CrystalDiskMark's four profiles on one pool, three runs each: MB/s per profile
/// (read, write) and p99 ms (read, write), each run scaled by 0.97, 1.0 and
/// 1.03 (so the median is the figure and the best run 1.03 x it).
fn cdm_doc(pool: &str, figures: [(f64, f64, f64, f64); 4]) -> SuiteDoc {
    let k = 4096u64;
    let m = 1u64 << 20;
    let profiles = [
        ("SEQ1M Q8T1", m, 8, "read", "write"),
        ("SEQ1M Q1T1", m, 1, "read", "write"),
        ("RND4K Q32T1", k, 32, "randread", "randwrite"),
        ("RND4K Q1T1", k, 1, "randread", "randwrite"),
    ];
    let mut runs = Vec::new();
    let mut order = Vec::new();
    for (run, f) in [(1u32, 0.97), (2, 1.0), (3, 1.03)] {
        for dir in 0..2 {
            for ((name, bs, qd, rrw, wrw), (rmb, rp99, wmb, wp99)) in profiles.iter().zip(figures) {
                let (op, rw, mbs, p99) = if dir == 0 {
                    ("read", *rrw, rmb, rp99)
                } else {
                    ("write", *wrw, wmb, wp99)
                };
                let job_name = format!("{name} {op}");
                if run == 1 {
                    order.push(job_name.clone());
                }
                let iops = mbs * f * 1e6 / *bs as f64;
                let mut res = result(
                    vec![job(
                        &format!("{rw}/{op}"),
                        op,
                        iops,
                        *bs,
                        p99 / 3.0,
                        p99 / f,
                    )],
                    rw,
                    *bs,
                    *qd,
                    None,
                );
                if let Workload::Rbd(w) = &mut res.workload {
                    w.pool = pool.into();
                }
                runs.push(RunEntry {
                    job: job_name,
                    run,
                    result: res,
                });
            }
        }
    }
    let summary = suite::summarize(&order, &runs, Some(&self::pool()), Default::default());
    SuiteDoc {
        suite: "cdm".into(),
        pool: pool.into(),
        settings: SuiteSettings {
            runs: 3,
            runtime_s: 5.0,
            ramp_s: 1.0,
            image_size: 1 << 30,
            test_area: 1 << 30,
            ..fixture().settings
        },
        runs,
        summary,
        ..fixture()
    }
}

/// A consumer-SSD Ceph pool's and a Gluster volume's columns, as a
/// side-by-side CrystalDiskMark comparison printed them.
fn cdm_pools() -> Vec<SuiteDoc> {
    vec![
        cdm_doc(
            "consumer",
            [
                (1296.0, 9.1, 150.0, 61.0),
                (409.0, 3.2, 65.0, 17.5),
                (237.0, 0.95, 10.0, 21.0),
                (20.0, 0.31, 1.0, 4.6),
            ],
        ),
        cdm_doc(
            "plp",
            [
                (893.0, 12.4, 859.0, 10.2),
                (353.0, 3.6, 537.0, 2.4),
                (149.0, 1.4, 75.0, 2.8),
                (10.0, 0.62, 66.0, 0.09),
            ],
        ),
    ]
}

fn render(docs: Vec<SuiteDoc>, format: cephbench::report::Format, long: bool) -> String {
    let doc = cephbench::report::Document::Suites(suite::Suites::new(docs));
    let view = cephbench::report::View {
        verbose: false,
        long,
    };
    let mut buf = Vec::new();
    cephbench::report::render(&doc, format, view, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn cdm_table_one_pool() {
    use cephbench::report::Format;
    let docs = cdm_pools();
    assert!(suite::is_cdm(&docs[0]));
    let text = render(vec![docs[0].clone()], Format::Text, false);
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "wider than 100: {l}");
    }
    // The comparison's figures, in MB/s as CrystalDiskMark counts them.
    let row = text.lines().find(|l| l.starts_with("SEQ1M Q8T1")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2..], ["1,296", "9.100", "150", "61.00"], "{row}");
    assert!(text.contains("median of 3 runs"), "{text}");
    assert!(
        !text.contains("IOPS/GiB"),
        "the long table only with --long"
    );
    insta::assert_snapshot!("cdm_table_one_pool_text", text);
    let md = render(vec![docs[0].clone()], Format::Markdown, false);
    insta::assert_snapshot!("cdm_table_one_pool_markdown", md);
    // --long: the table per job too.
    let long = render(vec![docs[0].clone()], Format::Text, true);
    assert!(long.contains("IOPS/GiB") && long.contains("SEQ1M Q8T1 read"));
}

#[test]
fn cdm_table_two_pools_is_crystaldiskmarks() {
    use cephbench::report::Format;
    let text = render(cdm_pools(), Format::Text, false);
    for l in text.lines() {
        assert!(
            l.chars().count() <= cephbench::report::CDM_TEXT_WIDTH,
            "wider than 120: {l}"
        );
    }
    // CrystalDiskMark's comparison: | SEQ1M Q8T1 | 1296 | 893 | -31% | 150 | 859 | +473% |, and the
    // per-run spread (+-3%) is far below these differences: real (*).
    let row = text.lines().find(|l| l.starts_with("SEQ1M Q8T1")).unwrap();
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells[..7],
        [
            "SEQ1M Q8T1",
            "1,296",
            "893",
            "-31% *",
            "150",
            "859",
            "+473% *"
        ],
        "{row}"
    );
    let row = text.lines().find(|l| l.starts_with("RND4K Q1T1")).unwrap();
    assert!(row.contains("-50% *") && row.contains("+6500% *"), "{row}");
    insta::assert_snapshot!("cdm_table_two_pools_text", text);
    let md = render(cdm_pools(), Format::Markdown, false);
    assert!(
        md.contains("| Test | consumer Read (MB/s) | plp Read (MB/s) | Diff | consumer Write (MB/s) | plp Write (MB/s) | Diff |"),
        "{md}"
    );
    insta::assert_snapshot!("cdm_table_two_pools_markdown", md);
    // Long pool names: letters and a legend, still within 120 columns.
    let mut docs = cdm_pools();
    docs[0].pool = "consumer-ssd-replicated-3".into();
    docs[1].pool = "enterprise-plp-replicated-3".into();
    let text = render(docs, Format::Text, false);
    assert!(text.contains("A = pool consumer-ssd-replicated-3, B = pool enterprise-plp"));
    for l in text.lines() {
        assert!(l.chars().count() <= 120, "wider than 120: {l}");
    }
    // One run a side: no verdict, and the table says why.
    let one: Vec<SuiteDoc> = cdm_pools()
        .into_iter()
        .map(|mut d| {
            d.runs.retain(|r| r.run == 2);
            d.summary = suite::summarize(
                &d.job_order(),
                &d.runs,
                d.pool_settings.as_ref(),
                Default::default(),
            );
            d
        })
        .collect();
    let text = render(one, Format::Text, false);
    let row = text.lines().find(|l| l.starts_with("SEQ1M Q8T1")).unwrap();
    assert!(
        row.contains("-31% ") && !row.contains('*') && !row.contains('~'),
        "{row}"
    );
    assert!(text.contains("One run a side"), "{text}");
}

#[test]
fn aggregate_best_takes_the_best_run_and_says_so() {
    use cephbench::report::Format;
    let docs: Vec<SuiteDoc> = cdm_pools()
        .into_iter()
        .map(|d| d.with_aggregate(suite::Aggregate::Best))
        .collect();
    // The best run is run 3 (x 1.03), its p99 that run's (p99 / 1.03).
    let r = &docs[0].summary.rows[0];
    assert!((r.mb_s.value - 1296.0 * 1.03).abs() < 1e-6, "{r:?}");
    assert!((r.p99_ms.value - 9.1 / 1.03).abs() < 1e-5, "{r:?}");
    let text = render(docs.clone(), Format::Text, false);
    assert!(text.contains("best of 3 runs per cell"), "{text}");
    assert!(text.contains("the p99 is that run's"), "{text}");
    let row = text.lines().find(|l| l.starts_with("SEQ1M Q8T1")).unwrap();
    assert!(row.contains("1,335"), "1296 x 1.03: {row}");
    insta::assert_snapshot!("cdm_table_best_text", text);
    // Recorded in the document, which still validates, and read back.
    let v = serde_json::to_value(&docs[0]).unwrap();
    assert_eq!(v["settings"]["aggregate"], "best");
    common::validate_suite(&v);
    let back: SuiteDoc = serde_json::from_value(v).unwrap();
    assert_eq!(back.settings.aggregate, suite::Aggregate::Best);
    // Documents written before --aggregate read as median.
    let mut old = serde_json::to_value(fixture()).unwrap();
    old["settings"].as_object_mut().unwrap().remove("aggregate");
    let back: SuiteDoc = serde_json::from_value(old).unwrap();
    assert_eq!(back.settings.aggregate, suite::Aggregate::Median);
}

#[test]
fn suites_as_csv_and_html() {
    use cephbench::report::Format;
    let csv = render(cdm_pools(), Format::Csv, false);
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), cephbench::report::SUITE_CSV_HEADER);
    assert_eq!(csv.lines().count(), 1 + 2 * 8, "{csv}");
    insta::assert_snapshot!("suite_csv_two_pools", csv);
    let html = render(cdm_pools(), Format::Html, false);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    assert!(html.contains("<h2>CrystalDiskMark's table</h2>"), "{html}");
    assert!(html.contains("<td class=\"n\">+473% *</td>"));
    assert!(html.contains("<h2>Suite cdm on pool plp</h2>"));
    assert!(html.contains("<h2>Comparison</h2>"));
    // CrystalDiskMark's four bar charts, IOPS / MB/s / p99 per job, the
    // comparison's two.
    assert_eq!(html.matches("<svg ").count(), 4 + 3 + 2, "{html}");
    // A page for one suite that is not CrystalDiskMark's: its table and bars.
    let html = render(vec![fixture()], Format::Html, false);
    assert!(!html.contains("CrystalDiskMark"));
    assert!(html.contains("4k randwrite QD1 fsync flush"));
    assert_eq!(html.matches("<svg ").count(), 3);
    if let Some(dir) = std::env::var_os("CEPHBENCH_HTML_OUT") {
        let p = std::path::Path::new(&dir);
        std::fs::write(
            p.join("suite-cdm.html"),
            render(cdm_pools(), Format::Html, false),
        )
        .unwrap();
        std::fs::write(p.join("suite-lab.html"), html).unwrap();
    }
}

#[test]
fn report_and_compare_render_saved_suites() {
    let dir = tempfile::tempdir().unwrap();
    let pools = dir.path().join("pools.json");
    let docs = cdm_pools();
    let c = suite::compare_suites(&docs);
    std::fs::write(
        &pools,
        serde_json::to_vec(&serde_json::json!({"suites": docs, "comparison": c})).unwrap(),
    )
    .unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, serde_json::to_vec(&docs[0]).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_vec(&docs[1]).unwrap()).unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = assert_cmd::Command::cargo_bin("cephbench")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    // report of the --pools document = compare of the two suite files = CrystalDiskMark's table.
    let report = run(&[os("report"), pools.as_os_str()]);
    let compare = run(&[os("compare"), a.as_os_str(), b.as_os_str()]);
    assert_eq!(report, compare);
    assert!(report.contains("-31% *"), "{report}");
    // compare of the one --pools file is the same comparison.
    assert_eq!(run(&[os("compare"), pools.as_os_str()]), compare);
    // --long adds each pool's table and the full comparison.
    let long = run(&[os("compare"), os("--long"), a.as_os_str(), b.as_os_str()]);
    assert!(
        long.contains("IOPS/GiB") && long.contains("Diff B"),
        "{long}"
    );
    // --aggregate re-renders a saved document.
    let best = run(&[
        os("report"),
        os("--aggregate"),
        os("best"),
        pools.as_os_str(),
    ]);
    assert!(best.contains("best of 3 runs"), "{best}");
    // Every format.
    let csv = run(&[os("--format"), os("csv"), os("report"), pools.as_os_str()]);
    assert!(csv.starts_with("suite,pool,job,"), "{csv}");
    let html = run(&[os("--format"), os("html"), os("report"), a.as_os_str()]);
    assert!(html.contains("<svg "), "{html}");
    let json = run(&[os("--format"), os("json"), os("report"), a.as_os_str()]);
    let back: SuiteDoc = serde_json::from_str(&json).unwrap();
    assert_eq!(back, docs[0]);
    // compare --format json stays the comparison.
    let json = run(&[
        os("--format"),
        os("json"),
        os("compare"),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["rows"].is_array(), "{v}");
    // --aggregate on results alone, suites mixed with results: bad input.
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["compare", "--aggregate", "best"])
        .arg(dir.path().join("nosuch.json"))
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `d` on `pool`, every job's mean split (public network 10 %, the rest
/// unattributed), as a run with telemetry has it.
fn probed(mut d: SuiteDoc, pool: &str) -> SuiteDoc {
    d.pool = pool.into();
    for e in &mut d.runs {
        for j in &mut e.result.jobs {
            let mean = j.latency_ns.mean;
            j.attribution = Some(Attribution {
                mean_ns: mean,
                shares: vec![
                    Share {
                        part: Part::PublicNetwork,
                        ns: 0.1 * mean,
                    },
                    Share {
                        part: Part::Unattributed,
                        ns: 0.9 * mean,
                    },
                ],
                notes: vec![],
            });
        }
    }
    d
}

/// The lab's shape on `pool`, probed: eight rows (the fixture's jobs and
/// three more), two runs each.
fn lab_on(name: &str) -> SuiteDoc {
    let mut d = fixture();
    let extra: Vec<RunEntry> = d
        .runs
        .iter()
        .filter(|e| e.job != "4k randwrite QD1 fsync")
        .map(|e| RunEntry {
            job: format!("{} again", e.job),
            ..e.clone()
        })
        .collect();
    d.runs.extend(extra);
    let mut order: Vec<String> = Vec::new();
    for e in &d.runs {
        if !order.contains(&e.job) {
            order.push(e.job.clone());
        }
    }
    d.summary = suite::summarize(&order, &d.runs, Some(&pool()), Default::default());
    probed(d, name)
}

/// `suite lab --pools A,B`: the default view fits two screens (each pool's
/// table, the notes once, the comparison's IOPS and mean rows, the
/// headlines); the checks, every figure and where the mean went are behind
/// `--long` (and `-v`).
#[test]
fn two_pools_fit_two_screens_and_the_rest_is_behind_long() {
    use cephbench::report::{Document, Format, View};
    let docs = vec![lab_on("consumer"), lab_on("plp")];
    assert_eq!(docs[0].summary.rows.len(), 8);
    let show = |format: Format, view: View| {
        let doc = Document::Suites(suite::Suites::new(docs.clone()));
        let mut buf = Vec::new();
        cephbench::report::render(&doc, format, view, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    };
    for format in [Format::Text, Format::Markdown] {
        let short = show(format, View::default());
        let n = short.lines().count();
        assert!(n <= 100, "{format:?}: {n} lines\n{short}");
        for hidden in [
            "Checks beside each run",
            "where the mean went",
            "p99 lat ms",
        ] {
            assert!(
                !short.contains(hidden),
                "{format:?} shows {hidden:?}:\n{short}"
            );
        }
        assert_eq!(short.matches("Flush rows:").count(), 1, "{short}");
        assert!(
            short.contains("--long: the checks beside each run"),
            "{short}"
        );
        let long = show(
            format,
            View {
                verbose: false,
                long: true,
            },
        );
        for shown in [
            "Checks beside each run",
            "where the mean went",
            "p99 lat ms",
        ] {
            assert!(
                long.contains(shown),
                "{format:?} --long lacks {shown:?}:\n{long}"
            );
        }
    }
    let verbose = show(
        Format::Text,
        View {
            verbose: true,
            long: false,
        },
    );
    assert!(verbose.contains("where the mean went"), "{verbose}");
    // One pool: its checks behind --long too, and the hint only where
    // there is something behind it.
    let one = render(vec![lab_on("p")], Format::Text, false);
    assert!(
        !one.contains("Checks beside each run,") && one.contains("--long: the checks"),
        "{one}"
    );
    let bare = render(vec![fixture()], Format::Text, false);
    assert!(!bare.contains("--long"), "{bare}");
}

/// Whether `text` names a method by an internal label ("seed" and a
/// three-digit number) rather than by what it is.
fn internal_label(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let b = lower.as_bytes();
    lower.match_indices("seed").find_map(|(i, _)| {
        let mut j = i + 4;
        if matches!(b.get(j), Some(b' ' | b'_' | b'-')) {
            j += 1;
        }
        let digits = b.get(j..j + 3)?;
        (digits[0] == b'0' && digits.iter().all(u8::is_ascii_digit))
            .then(|| lower[i..j + 3].to_string())
    })
}

#[test]
fn internal_label_is_found() {
    // Spelled in parts, so that this file passes the scan of the tree below.
    let label = |sep: &str, n: &str| format!("Seed{sep}{n}");
    let said = |sep: &str, n: &str| Some(label(sep, n).to_lowercase());
    assert_eq!(
        internal_label(&format!("Cost ({}): x", label(" ", "000"))),
        said(" ", "000")
    );
    assert_eq!(
        internal_label(&format!("{}'s", label("_", "002"))),
        said("_", "002")
    );
    assert_eq!(internal_label(&label("", "004")), said("", "004"));
    assert_eq!(
        internal_label("the run's seed-dependent tail, seed 7"),
        None
    );
}

/// The product speaks in its own words: no format renders a method by an
/// internal label, for a result, a comparison or suites (one pool, two, and
/// CrystalDiskMark's), with and without the long views.
#[test]
fn no_format_names_a_method_by_an_internal_label() {
    use cephbench::report::{render, Document, Format, View};
    let a = probed(fixture(), "consumer");
    let b = probed(fixture(), "plp");
    let results: Vec<(String, BenchResult)> = a
        .runs
        .iter()
        .take(4)
        .map(|e| (e.job.clone(), e.result.clone()))
        .collect();
    let docs = [
        Document::Results(results.clone()),
        Document::Results(results[..1].to_vec()),
        Document::Comparison(cephbench::compare::compare(&[
            a.runs[0].result.clone(),
            b.runs[1].result.clone(),
        ])),
        Document::Suites(suite::Suites::new(vec![a.clone()])),
        Document::Suites(suite::Suites::new(vec![a, b])),
        Document::Suites(suite::Suites::new(cdm_pools())),
        Document::Suites(suite::Suites::new(cdm_pools()[..1].to_vec())),
    ];
    let views = [
        View::default(),
        View {
            verbose: true,
            long: true,
        },
    ];
    let mut seen_cost = false;
    for doc in &docs {
        for format in [
            Format::Text,
            Format::Json,
            Format::Csv,
            Format::Markdown,
            Format::Html,
        ] {
            for view in views {
                let mut buf = Vec::new();
                render(doc, format, view, &mut buf).unwrap();
                let out = String::from_utf8(buf).unwrap();
                seen_cost |= out.contains("Cost");
                assert_eq!(
                    internal_label(&out),
                    None,
                    "{format:?} {view:?} of {doc:?}:\n{out}"
                );
            }
        }
    }
    assert!(seen_cost, "the cost line, where the label was, is rendered");
}

/// Neither the sources, the docs nor the tests name a method by an internal
/// label (the rendered snapshots included).
#[test]
fn the_tree_names_no_method_by_an_internal_label() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack: Vec<std::path::PathBuf> = [
        "src",
        "docs",
        "tests",
        "schema",
        "perf",
        "examples",
        "containers",
        "README.md",
        "CHANGELOG.md",
        "ARCHITECTURE.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    let mut files = 0;
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
            continue;
        }
        // Text files only (fixtures hold gzip'd captures).
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        files += 1;
        if let Some(hit) = internal_label(&text) {
            panic!("{} says {hit:?}", p.display());
        }
    }
    assert!(files > 50, "{files} files read");
}

/// One bandwidth unit: suites, their comparison and their tables count
/// MiB/s (2^20 bytes/s) as runs, progress and compare do; CrystalDiskMark's
/// table, whose shape needs MB/s, states the MiB/s factor beside it, and the
/// CSV gives both side by side. A flush row, which moves no data of its own,
/// gets no IOPS per GiB.
#[test]
fn suites_compare_in_mib_s_and_flushes_get_no_iops_per_gib() {
    use cephbench::report::{Format, View};
    let c = suite::compare_suites(&cdm_pools());
    let figures: Vec<&str> = c.rows.iter().map(|r| r.figure).collect();
    assert!(
        figures.contains(&"MiB/s") && !figures.contains(&"MB/s"),
        "{figures:?}"
    );
    let row = c
        .rows
        .iter()
        .find(|r| r.figure == "MiB/s" && r.job.starts_with("SEQ1M Q8T1 read"))
        .unwrap();
    // The cdm table's 1,296 MB/s is 1,236 MiB/s.
    assert!(
        (row.values[0].unwrap() - 1296e6 / 1_048_576.0).abs() < 0.01,
        "{row:?}"
    );
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Csv] {
        let doc = cephbench::report::Document::Suites(suite::Suites::new(cdm_pools()));
        let mut buf = Vec::new();
        let long = View {
            verbose: true,
            long: true,
        };
        cephbench::report::render(&doc, format, long, &mut buf).unwrap();
        let out = String::from_utf8(buf).unwrap();
        // Every MB/s is said next to its MiB/s.
        if format == Format::Csv {
            assert!(out.contains("mb_per_s,mib_per_s,"), "{out}");
            // 1,296 MB/s = 1235.962 MiB/s on the SEQ1M Q8T1 read line.
            assert!(out.contains(",1296.000,1235.962,"), "{out}");
        } else {
            assert!(out.contains("MiB/s"), "{format:?}:\n{out}");
            assert!(out.contains("1 MB/s = 0.954 MiB/s"), "{format:?}:\n{out}");
        }
    }
    let text = {
        let doc = cephbench::report::Document::Suites(suite::Suites::new(vec![fixture()]));
        let mut buf = Vec::new();
        cephbench::report::render(&doc, Format::Text, View::default(), &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    };
    assert!(
        text.contains(" MiB/s ") && !text.contains("MB/s"),
        "a suite table counts MiB/s:\n{text}"
    );

    let d = fixture();
    let flush = d.summary.rows.iter().find(|r| r.op == "flush").unwrap();
    assert_eq!(flush.iops_per_gib, None, "{flush:?}");
    assert!(d
        .summary
        .rows
        .iter()
        .filter(|r| r.op != "flush")
        .all(|r| r.iops_per_gib.is_some()));
    let c = suite::compare_suites(&[fixture(), fixture()]);
    assert!(
        c.rows
            .iter()
            .filter(|r| r.figure == cephbench::compare::IOPS_PER_GIB)
            .all(|r| !r.job.ends_with("/flush")),
        "{:?}",
        c.rows
    );
    assert!(c
        .rows
        .iter()
        .any(|r| r.figure == cephbench::compare::IOPS_PER_GIB));
}

/// A suite row whose client fell short (in its shortest run) shows its
/// depth in an `in flight` column of the text, Markdown and HTML tables,
/// with what it means; CSV carries it always.
#[test]
fn suite_tables_show_in_flight_where_the_client_fell_short() {
    use cephbench::report::Format;
    let plain = render(vec![fixture()], Format::Text, false);
    assert!(!plain.contains("in flight"), "{plain}");
    let mut d = fixture();
    for e in &mut d.runs {
        for j in &mut e.result.jobs {
            let short = e.job == "4k randread QD32" && e.run == 2;
            j.client = Some(cephbench::result::ClientLoad {
                asked_in_flight: 32,
                mean_in_flight: if short { 22.0 } else { 31.5 },
                refill_wait_ns: 1000.0,
            });
        }
    }
    let text = render(vec![d.clone()], Format::Text, false);
    let head = text.lines().find(|l| l.starts_with("job ")).unwrap();
    assert!(head.contains("runs  in flight"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("4k randread QD32"))
        .unwrap();
    assert!(row.contains(" 22.0/32* "), "{row}");
    let row = text
        .lines()
        .find(|l| l.starts_with("1M seq read QD16"))
        .unwrap();
    assert!(row.contains(" 31.5/32 "), "{row}");
    assert!(
        text.contains("the client, not the cluster, set the pace"),
        "{text}"
    );
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "wider than 100: {l}");
    }
    let md = render(vec![d.clone()], Format::Markdown, false);
    assert!(md.contains("| job | runs | in flight | IOPS |"), "{md}");
    assert!(
        md.contains("|---|---:|---:|---:|---:|---:|---:|---:|"),
        "{md}"
    );
    let html = render(vec![d.clone()], Format::Html, false);
    assert!(html.contains("22.0/32*"), "{html}");
    let csv = render(vec![d], Format::Csv, false);
    let row = csv
        .lines()
        .find(|l| l.contains(",4k randread QD32,"))
        .unwrap();
    // (then the data pool, none, the usable percentage and the CPU, none)
    assert!(row.ends_with(",22.0,32,,33.3,"), "{row}");
}

/// A run on a cluster that was not quiet is named under the suite's table
/// (text, Markdown, HTML) with the reason; the quiet runs are not.
#[test]
fn suites_mark_the_runs_that_were_not_quiet() {
    use cephbench::telemetry::quiet::EventTracker;
    let look = |t_s: f64, warn: bool| common::cluster_look(t_s, warn, &[]);
    let state = |warn: bool| {
        let mut t = EventTracker::new();
        let (a, b) = (look(-0.01, warn), look(30.0, warn));
        t.add(&a);
        t.add(&b);
        t.finish(Some(a), Some(b), std::time::Duration::from_secs(5))
    };
    let mut doc = fixture();
    for r in &mut doc.runs {
        let warn = r.job == "4k randwrite QD32" && r.run == 2;
        r.result.cluster_state = Some(state(warn));
    }
    let line =
        "job '4k randwrite QD32' run 2 not quiet: HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set)";
    assert_eq!(
        cephbench::suite::not_quiet_runs(&doc),
        vec![line.to_string()]
    );
    let text = render(vec![doc.clone()], cephbench::report::Format::Text, false);
    assert_eq!(text.matches("not quiet").count(), 1, "{text}");
    assert!(text.contains(line), "{text}");
    let md = render(
        vec![doc.clone()],
        cephbench::report::Format::Markdown,
        false,
    );
    assert!(md.contains(&format!("- {line}")), "{md}");
    let html = render(vec![doc.clone()], cephbench::report::Format::Html, false);
    assert!(
        html.contains(&format!(
            "<p class=\"warn\">{}</p>",
            line.replace('\'', "&#39;")
        )),
        "{html}"
    );
    // All quiet: no line.
    for r in &mut doc.runs {
        r.result.cluster_state = Some(state(false));
    }
    assert!(!render(vec![doc], cephbench::report::Format::Text, false).contains("not quiet"));
}

/// `suite cdm --pools plp,plp --data-pools -,ec21`: 3 copies against 2+1.
/// Every format sets each side's usable fraction beside its figures
/// (CrystalDiskMark's table, the comparison, the CSV, the JSON) and names
/// the second side's data pool with its layout.
#[test]
fn three_copies_vs_two_plus_one_show_their_usable_fraction_in_every_format() {
    use cephbench::report::Format;
    let mut docs = cdm_pools();
    docs[1].pool = "consumer".into();
    docs[1].data_pool = Some("ec21".into());
    let ec = docs[1].pool_settings.as_mut().unwrap();
    ec.name = "ec21".into();
    ec.erasure = Some(common::ec21_layout());
    let ec = ec.clone();
    for e in &mut docs[1].runs {
        e.result.pool = Some(ec.clone());
    }
    let capacity_line = |text: &str| -> String {
        text.lines()
            .find(|l| l.starts_with("usable/raw") || l.starts_with("| usable/raw"))
            .unwrap_or_else(|| panic!("no capacity row:\n{text}"))
            .to_string()
    };
    for format in [Format::Text, Format::Markdown] {
        let text = render(docs.clone(), format, false);
        let l = capacity_line(&text);
        assert!(
            l.contains("33 %") && l.contains("67 %") && l.contains("+100%"),
            "{l}"
        );
        assert!(
            text.contains("Suite cdm on pool consumer, data in pool ec21")
                && text.contains("Data pool: erasure 2+1 (jerasure reed_sol_van"),
            "{text}"
        );
        // The CrystalDiskMark columns are named by the pools the data went to.
        assert!(text.contains("ec21"), "{text}");
        let long = render(docs.clone(), format, true);
        let row = long
            .lines()
            .find(|l| l.contains("usable %"))
            .unwrap_or_else(|| panic!("{long}"));
        assert!(
            row.contains("33 %") && row.contains("67 %") && row.contains("+100.0%"),
            "{row}"
        );
    }
    let html = render(docs.clone(), Format::Html, false);
    assert!(
        html.contains("usable/raw") && html.contains("67 %") && html.contains("data in pool ec21"),
        "html"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(docs.clone(), Format::Json, false)).unwrap();
    let row = &json["comparison"]["rows"][0];
    assert_eq!(row["figure"], "usable %", "{row}");
    assert!((row["values"][1].as_f64().unwrap() - 200.0 / 3.0).abs() < 1e-9);
    assert_eq!(json["suites"][1]["data_pool"], "ec21");
    common::validate_suite(&json["suites"][1]);
    let csv = render(docs, Format::Csv, false);
    let last = csv.lines().last().unwrap();
    assert!(last.ends_with(",ec21,66.7,"), "{last}");
    assert!(csv.lines().nth(1).unwrap().ends_with(",,33.3,"), "{csv}");
}

/// Every run of a job with its pool's OSDs' CPU measured: the suite's table
/// gets a `CPU µs/op` column (the median over the runs, as the other
/// figures; `-` for the jobs without it), the cost line says what it is,
/// the CSV has the cell and the document stays valid.
#[test]
fn suites_give_the_pools_cpu_per_op() {
    let mut d = fixture();
    for e in d.runs.iter_mut().filter(|e| e.job == "4k randwrite QD32") {
        let ops = e.result.jobs[0].ops;
        // 500 µs per op in run 1, 700 in run 2: the median of two is 600.
        let us = if e.run == 1 { 500.0 } else { 700.0 };
        e.result.osds = vec![OsdReport {
            osd: 0,
            client: vec![OsdClientRow {
                op: "write".into(),
                ops,
                mean_ns: 1e8,
                p99_ns: 300_000_000,
                histogram: None,
                attribution: None,
                evidence: None,
            }],
            counters: None,
            timeline: Vec::new(),
            mgr_perf: None,
            device: None,
            replica_sets: Vec::new(),
            cpu: Some(OsdCpu {
                cpu_s: Some(us * ops as f64 / 1e6),
                window_s: Some(4.0),
                ..Default::default()
            }),
        }];
        cephbench::explain::cpu::fill(&mut e.result);
    }
    let mut order: Vec<String> = d.runs.iter().map(|e| e.job.clone()).collect();
    order.dedup();
    order.truncate(4);
    d.summary = suite::summarize(&order, &d.runs, Some(&pool()), Default::default());
    let row = |job: &str| d.summary.rows.iter().find(|r| r.job == job).unwrap();
    assert!((row("4k randwrite QD32").cpu_us_per_op.unwrap() - 600.0).abs() < 1e-6);
    assert_eq!(row("4k randread QD32").cpu_us_per_op, None);
    // Text: the job names would not fit beside a column: one line.
    let text = render(vec![d.clone()], cephbench::report::Format::Text, false);
    assert!(
        text.contains("CPU µs per client op of the pool's OSDs: 4k randwrite QD32 600."),
        "{text}"
    );
    let md = render(vec![d.clone()], cephbench::report::Format::Markdown, false);
    let line = md
        .lines()
        .find(|l| l.starts_with("| 4k randwrite QD32 |"))
        .unwrap();
    assert!(line.ends_with("| 600 |"), "{md}");
    assert!(md.contains("| CPU µs/op |"), "{md}");
    assert!(
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("CPU µs/op = the CPU time (utime + stime) of all the pool's OSD processes"),
        "{text}"
    );
    let csv = render(vec![d.clone()], cephbench::report::Format::Csv, false);
    let w = csv
        .lines()
        .find(|l| l.contains(",4k randwrite QD32,"))
        .unwrap();
    assert!(w.ends_with(",,,,33.3,600.0"), "{w}");
    let v = serde_json::to_value(&d).unwrap();
    common::validate_suite(&v);
}

/// A suite that ran each job once has no spread between runs: no format
/// prints one ("±0%" was in every cell), and the text says so once.
#[test]
fn one_run_suites_print_no_spread_and_say_so_once() {
    use cephbench::report::Format;
    let mut d = fixture();
    d.runs.retain(|r| r.run == 1);
    d.settings.runs = 1;
    let order: Vec<String> = d.summary.rows.iter().map(|r| r.job.clone()).collect();
    d.summary = suite::summarize(&order, &d.runs, Some(&pool()), Default::default());
    assert!(d.summary.rows.iter().all(|r| r.runs == 1));
    for format in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(vec![d.clone()], format, false);
        assert!(!out.contains('±'), "{format:?}: {out}");
        assert_eq!(
            out.matches("no spread between runs is given").count(),
            1,
            "{format:?}: {out}"
        );
    }
    let csv = render(vec![d.clone()], Format::Csv, false);
    let head: Vec<&str> = cephbench::report::SUITE_CSV_HEADER.split(',').collect();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        for (h, c) in head.iter().zip(&cells) {
            if h.ends_with("_spread_pct") {
                assert_eq!(*c, "", "{h} in {line}");
            }
        }
    }
    // Two runs still give their spread.
    let out = render(vec![fixture()], Format::Text, false);
    assert!(
        out.contains('±') && !out.contains("no spread between runs"),
        "{out}"
    );
}
