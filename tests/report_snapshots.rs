//! Report formats rendered from a fixed result: snapshot tests (insta), and
//! the JSON checked against the schema. No cluster needed.

mod common;

use cephbench::counters::{AvgDelta, OsdCounters};
use cephbench::network::ClientRtt;
use cephbench::progress::Sample;
use cephbench::report::Format;
use cephbench::result::NetworkReport;
use cephbench::result::{
    Attribution, BenchResult, ClusterInfo, JobReport, OsdClientRow, OsdReport, Part, PlacementInfo,
    RadosWorkload, Share, ToolInfo, Workload,
};
use cephbench::stats::LatencySummary;

/// A write split as a size-1 pool's would be (no replication share).
fn attribution() -> Attribution {
    let ms = |part, v: f64| Share { part, ns: v * 1e6 };
    Attribution {
        mean_ns: 13_301_250.5,
        shares: vec![
            ms(Part::Client, 0.35),
            ms(Part::PublicNetwork, 0.12),
            ms(Part::OsdQueue, 1.1),
            ms(Part::OsdLocal, 8.0),
            ms(Part::Replication, 0.0),
            ms(Part::Unattributed, 3.73125),
        ],
        notes: vec!["size-1 pool: no replication share".into()],
    }
}

fn fixture() -> BenchResult {
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
        },
        started_unix: 1_700_000_000,
        workload: Workload::Rados(RadosWorkload {
            mode: "write".into(),
            pool: "rbd-vm".into(),
            block_size: 4096,
            object_size: 4096,
            concurrent_ios: 16,
            duration_s: Some(10.0),
            ramp_s: 1.0,
            max_ops: None,
            run_name: "default".into(),
            verify: false,
            no_cleanup: false,
        }),
        latency_kind: "completion".into(),
        latency_definition: cephbench::bench::LATENCY_DEFINITION.into(),
        jobs: vec![JobReport {
            name: "write".into(),
            op: "write".into(),
            ops: 12_000,
            errors: 0,
            bytes: 12_000 * 4096,
            elapsed_s: 10.0,
            iops: 1200.0,
            bytes_per_sec: 1200.0 * 4096.0,
            latency_ns: LatencySummary {
                min: 412_000,
                mean: 13_301_250.5,
                stddev: 2_100_000.25,
                p50: 12_900_000,
                p90: 15_700_000,
                p99: 22_100_000,
                p99_9: 41_000_000,
                max: 60_200_000,
            },
            stop_reason: "duration".into(),
            verify_mismatches: None,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: 0.052,
            slow_ops: 0,
            slow_op_s: 1.0,
            timeline: vec![
                Sample {
                    t_s: 1.0,
                    ramp: true,
                    ops: 1100,
                    bytes: 1100 * 4096,
                    mean_latency_ns: 14e6,
                    in_flight: 16,
                    errors: 0,
                },
                Sample {
                    t_s: 2.0,
                    ramp: false,
                    ops: 1210,
                    bytes: 1210 * 4096,
                    mean_latency_ns: 13.2e6,
                    in_flight: 16,
                    errors: 0,
                },
            ],
            histogram: None,
            attribution: Some(attribution()),
        }],
        osds: vec![OsdReport {
            osd: 0,
            client: vec![OsdClientRow {
                op: "write".into(),
                ops: 12_000,
                mean_ns: 13_301_250.5,
                p99_ns: 22_000_000,
                attribution: Some(attribution()),
            }],
            counters: Some(OsdCounters {
                osd: 0,
                reset: false,
                op_w: Some(12_004),
                op_r: Some(0),
                subop_w: Some(0),
                op_w_latency: Some(AvgDelta {
                    count: 12_004,
                    mean_ns: Some(9_100_000.0),
                }),
                op_w_process_latency: Some(AvgDelta {
                    count: 12_004,
                    mean_ns: Some(8_000_000.0),
                }),
                op_w_prepare_latency: None,
                op_r_latency: Some(AvgDelta {
                    count: 0,
                    mean_ns: None,
                }),
                op_r_process_latency: Some(AvgDelta {
                    count: 0,
                    mean_ns: None,
                }),
                subop_w_latency: Some(AvgDelta {
                    count: 0,
                    mean_ns: None,
                }),
                commit_lat: Some(AvgDelta {
                    count: 12_010,
                    mean_ns: Some(5_500_000.0),
                }),
            }),
        }],
        placement: Some(PlacementInfo {
            pool_id: 2,
            pg_num: 8,
            epoch: 17,
        }),
        network: Some(NetworkReport {
            client_rtt: vec![ClientRtt {
                osd: 0,
                addr: "127.0.0.20:6802".into(),
                method: "tcp_connect".into(),
                samples: 10,
                failures: 0,
                min_us: 31.5,
                mean_us: 44.25,
                max_us: 90.0,
            }],
            heartbeat: vec![],
        }),
        interrupted: false,
        warnings: vec![],
        clients: None,
    }
}

fn render(f: Format, r: &BenchResult) -> String {
    let mut buf = Vec::new();
    f.reporter().render(r, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render(Format::Text, &fixture()));
}

#[test]
fn text_report_interrupted_with_error() {
    let mut r = fixture();
    r.interrupted = true;
    r.warnings.push("the write run 'x' did not finish".into());
    r.jobs[0].stop_reason = "interrupted".into();
    r.jobs[0].errors_by_errno.insert("28".into(), 3);
    r.jobs[0].errors = 3;
    r.jobs[0].longest_gap_s = 4.25;
    r.jobs[0].slow_ops = 16;
    r.jobs[0].first_error =
        Some("write cephbench_data.default.7 at offset 0: (28) No space left on device".into());
    insta::assert_snapshot!(render(Format::Text, &r));
}

#[test]
fn json_report_round_trips_and_matches_schema() {
    let text = render(Format::Json, &fixture());
    insta::assert_snapshot!(text);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::validate(&v);
    let back: BenchResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, fixture());
}

#[test]
fn schema_rejects_a_result_missing_its_latency() {
    let mut v = serde_json::to_value(fixture()).unwrap();
    v["jobs"][0].as_object_mut().unwrap().remove("latency_ns");
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../schema/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(
        !validator.is_valid(&v),
        "the schema must catch a missing field"
    );
}

#[test]
fn csv_report() {
    let text = render(Format::Csv, &fixture());
    assert_eq!(text.lines().next().unwrap(), cephbench::report::CSV_HEADER);
    insta::assert_snapshot!(text);
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(render(Format::Markdown, &fixture()));
}

#[test]
fn compare_two_result_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture();
    let mut b = fixture();
    b.jobs[0].iops *= 2.0;
    b.jobs[0].bytes_per_sec *= 2.0;
    b.jobs[0].latency_ns.mean /= 2.0;
    for s in &mut b.jobs[0].timeline {
        s.ops *= 2;
    }
    let (pa, pb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&pa, serde_json::to_vec(&a).unwrap()).unwrap();
    std::fs::write(&pb, serde_json::to_vec(&b).unwrap()).unwrap();
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .arg("compare")
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    insta::assert_snapshot!(text);
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["compare", "--format", "markdown"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("| write/write | IOPS | 1200 | 2400 | +100.0%"));

    // Not a result file: one line, non-zero, nothing on stdout.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"{\"jobs\": 3}").unwrap();
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .arg("compare")
        .arg(&pa)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("is not a cephbench result"), "{err}");
    assert!(out.stdout.is_empty());
}
