//! Report formats rendered from a fixed result: snapshot tests (insta), and
//! the JSON checked against the schema. No cluster needed.

mod common;

use cephbench::progress::Sample;
use cephbench::report::Format;
use cephbench::result::counters::{AvgDelta, CounterSample, MgrOsdPerf, OsdCounters};
use cephbench::result::network::ClientRtt;
use cephbench::result::NetworkReport;
use cephbench::result::{
    Attribution, BenchResult, ClientLoad, ClientReport, ClusterInfo, GroupReport, JobReport,
    OsdClientRow, OsdReport, Part, PlacementInfo, RadosWorkload, Share, ToolInfo, Workload,
};
use cephbench::stats::LatencySummary;

/// A write split as a size-3 pool's would be (the replication wait split
/// into cluster network, the OSDs' messengers and replica).
fn attribution() -> Attribution {
    let ms = |part, v: f64| Share { part, ns: v * 1e6 };
    Attribution {
        mean_ns: 13_301_250.5,
        shares: vec![
            ms(Part::PublicNetwork, 0.12),
            ms(Part::OsdQueue, 1.1),
            ms(Part::OsdLocal, 6.0),
            ms(Part::ClusterNetwork, 0.55),
            ms(Part::Messengers, 0.15),
            ms(Part::Replica, 1.3),
            ms(Part::Unattributed, 4.08125),
        ],
        notes: vec![
            "client (librados/librbd) time is not measured on its own: it is part of unattributed"
                .into(),
            "cluster network = the primary's wait for its replicas beyond its own commit, less \
             the slowest replica's own repop time (subop_w)"
                .into(),
        ],
    }
}

/// The CSV's last cells for [`fixture`]'s osd.0: cores, CPU µs per client
/// op, no OSD CPU-bound.
const CPU_CELLS: &str = ",0.310,258.3,";

fn fixture() -> BenchResult {
    let mut r = BenchResult {
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
            namespace: String::new(),
            write_to: None,
            verify: cephbench::objects::VerifyMode::None,
            no_cleanup: false,
            pool_created: false,
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
            short_reads: 0,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: 0.052,
            slow_ops: 0,
            slow_op_s: 1.0,
            // 1200 IOPS x 13.30 ms = 15.96 in flight; + 1200/s x 32 us = 16.
            client: Some(ClientLoad {
                asked_in_flight: 16,
                mean_in_flight: 15.96,
                refill_wait_ns: 32_000.0,
            }),
            timeline: vec![
                Sample {
                    t_s: 1.0,
                    ramp: true,
                    ops: 1100,
                    bytes: 1100 * 4096,
                    mean_latency_ns: 14e6,
                    in_flight: 16,
                    errors: 0,
                    p50_latency_ns: Some(12_100_000),
                    p99_latency_ns: Some(41_000_000),
                    max_latency_ns: Some(52_300_000),
                },
                Sample {
                    t_s: 2.0,
                    ramp: false,
                    ops: 1210,
                    bytes: 1210 * 4096,
                    mean_latency_ns: 13.2e6,
                    in_flight: 16,
                    errors: 0,
                    p50_latency_ns: Some(11_800_000),
                    p99_latency_ns: Some(38_500_000),
                    max_latency_ns: Some(49_900_000),
                },
            ],
            histogram: None,
            attribution: Some(attribution()),
            service_latency_ns: None,
            rate: None,
            per_second: Some(cephbench::result::PerSecond {
                samples: 10,
                iops: cephbench::result::Spread {
                    mean: 1200.5,
                    stddev: 35.25,
                    min: 1150.0,
                    max: 1262.0,
                },
                mib_s: cephbench::result::Spread {
                    mean: 4.689,
                    stddev: 0.1377,
                    min: 4.492,
                    max: 4.930,
                },
            }),
            end_flush: None,
            changes: None,
            projections: None,
        }],
        osds: vec![OsdReport {
            osd: 0,
            client: vec![OsdClientRow {
                op: "write".into(),
                ops: 12_000,
                mean_ns: 13_301_250.5,
                p99_ns: 22_000_000,
                histogram: None,
                attribution: Some(attribution()),
                evidence: None,
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
                kv_flush_lat: Some(AvgDelta {
                    count: 3_100,
                    mean_ns: Some(3_150_000.0),
                }),
                kv_commit_lat: Some(AvgDelta {
                    count: 3_100,
                    mean_ns: Some(420_000.0),
                }),
                kv_sync_lat: Some(AvgDelta {
                    count: 3_100,
                    mean_ns: Some(3_570_000.0),
                }),
                state_kv_queued_lat: Some(AvgDelta {
                    count: 12_010,
                    mean_ns: Some(1_200_000.0),
                }),
                state_kv_commiting_lat: Some(AvgDelta {
                    count: 12_010,
                    mean_ns: Some(3_300_000.0),
                }),
                submit_lat: None,
                op_before_queue_op_lat: None,
                op_before_dequeue_op_lat: None,
            }),
            timeline: [
                (5.0, 8_000_000.0),
                (10.0, 9_200_000.0),
                (15.0, 10_100_000.0),
            ]
            .iter()
            .map(|&(t_s, mean)| CounterSample {
                t_s,
                interval_s: 5.0,
                // 0.3 cores, then 0.35 as the OSD slows.
                cpu_s: Some(if t_s < 10.0 { 1.5 } else { 1.75 }),
                counters: OsdCounters {
                    osd: 0,
                    reset: false,
                    op_w: Some(4_000),
                    op_r: Some(0),
                    subop_w: Some(0),
                    op_w_latency: Some(AvgDelta {
                        count: 4_000,
                        mean_ns: Some(mean),
                    }),
                    op_w_process_latency: None,
                    op_w_prepare_latency: None,
                    op_r_latency: None,
                    op_r_process_latency: None,
                    subop_w_latency: None,
                    commit_lat: None,
                    kv_flush_lat: None,
                    kv_commit_lat: None,
                    kv_sync_lat: None,
                    state_kv_queued_lat: None,
                    state_kv_commiting_lat: None,
                    submit_lat: None,
                    op_before_queue_op_lat: None,
                    op_before_dequeue_op_lat: None,
                },
            })
            .collect(),
            mgr_perf: Some(MgrOsdPerf {
                osd: 0,
                commit_latency_ms: 5,
                apply_latency_ms: 5,
                commit_latency_ns: Some(5_400_000),
                apply_latency_ns: Some(5_400_000),
            }),
            device: Some(cephbench::device::DeviceInfo {
                class: Some("consumer".into()),
                objectstore: Some("bluestore".into()),
                bdev_type: Some("ssd".into()),
                rotational: Some(false),
                model: Some("Samsung SSD 870 QVO 1TB".into()),
                dedicated_db: Some(false),
                dedicated_wal: Some(false),
                ..Default::default()
            }),
            replica_sets: vec![cephbench::result::ReplicaSet {
                osds: vec![1, 2],
                pgs: 8,
            }],
            cpu: Some(cephbench::result::OsdCpu {
                host: Some("node1".into()),
                pid: Some(4242),
                cpu_s: Some(3.1),
                window_s: Some(10.0),
                counters_cpu_s: Some(3.4),
                allowed_cpus: Some(4),
                allowed_cpus_busy: Some(1.5),
                ..Default::default()
            }),
        }],
        placement: Some(PlacementInfo {
            pool_id: 2,
            pg_num: 8,
            epoch: 17,
            size: 3,
            refreshes: vec![cephbench::placement::PlacementRefresh {
                t_ms: 4_200,
                epoch: 19,
                pg_num: 8,
                moved: 3,
                outside: 0,
            }],
        }),
        network: Some(NetworkReport {
            back_rtt: vec![ClientRtt {
                osd: 0,
                addr: "127.0.1.20".into(),
                method: "icmp_echo".into(),
                samples: 10,
                failures: 0,
                min_us: 550.0,
                mean_us: 571.5,
                max_us: 630.0,
                bulk_bytes: None,
                bulk_min_us: None,
                bandwidth_bytes_per_s: None,
            }],
            client_rtt: vec![
                ClientRtt {
                    osd: 0,
                    addr: "127.0.0.20:6802".into(),
                    method: "tcp_connect".into(),
                    samples: 10,
                    failures: 0,
                    min_us: 31.5,
                    mean_us: 44.25,
                    max_us: 90.0,
                    bulk_bytes: None,
                    bulk_min_us: None,
                    bandwidth_bytes_per_s: None,
                },
                ClientRtt {
                    osd: 0,
                    addr: "127.0.0.20".into(),
                    method: "icmp_echo".into(),
                    samples: 10,
                    failures: 0,
                    min_us: 18.0,
                    mean_us: 25.5,
                    max_us: 61.0,
                    bulk_bytes: Some(60_000),
                    bulk_min_us: Some(138.0),
                    bandwidth_bytes_per_s: Some(999_866_666.7),
                },
            ],
            heartbeat: vec![],
        }),
        tail: Vec::new(),
        interrupted: false,
        warnings: vec![],
        findings: vec![
            "no device-flush verdict: the OSDs' BlueStore kv timers were not read (needs osd \
             'allow *', e.g. through --telemetry-id, and a BlueStore OSD; memstore has none)"
                .into(),
        ],
        pool: None,
        clients: None,
        cluster_state: None,
        read_cache: None,
        disruption: None,
        pace: None,
    };
    cephbench::explain::cpu::fill(&mut r);
    r
}

fn render(f: Format, r: &BenchResult) -> String {
    let mut buf = Vec::new();
    f.reporter().render(r, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

/// The default (short, no -v) text report.
fn render_short(r: &BenchResult) -> String {
    let mut buf = Vec::new();
    Format::Text
        .reporter_for(cephbench::report::View::default())
        .render(r, &mut buf)
        .unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render(Format::Text, &fixture()));
}

/// The per-OSD table's "OSD ops" and the "µs per OSD op" of its CPU line
/// count the same ops: client ops as primary plus replica writes (the
/// column showed op_w + op_r while the CPU figure divided by subop_w too).
#[test]
fn osd_ops_column_is_what_us_per_osd_op_divides_by() {
    let mut r = fixture();
    let o = &mut r.osds[0];
    let c = o.counters.as_mut().unwrap();
    c.subop_w = Some(18_000);
    let own = c.op_w.unwrap_or(0) + c.op_r.unwrap_or(0) + 18_000;
    let cpu_s = o.cpu.as_ref().unwrap().counters_cpu_s.unwrap();
    cephbench::explain::cpu::fill(&mut r);
    let text = render(Format::Text, &r);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("osd.0   write"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row.split_whitespace().last(),
        Some(own.to_string().as_str()),
        "{row}"
    );
    let per_op = format!("{:.0} µs per OSD op", cpu_s * 1e6 / own as f64);
    assert!(text.contains(&per_op), "{per_op}: {text}");
    assert!(text.contains("OSD ops = op_w + op_r + subop_w"), "{text}");
}

/// The default text report (no -v): the summary, the percentiles, where the
/// mean went, one row per OSD with its drive, the findings, and one line
/// naming what -v adds; none of the verbose sections.
#[test]
fn text_report_default_is_short() {
    let text = render_short(&fixture());
    for gone in [
        "Network:",
        "`ceph osd perf` after",
        "over the run (the OSD",
        "Where each primary",
    ] {
        assert!(!text.contains(gone), "{gone} in the short report:\n{text}");
    }
    assert!(text.lines().count() + 10 < render(Format::Text, &fixture()).lines().count());
    insta::assert_snapshot!(text);
}

/// The default text of one run is under 50 lines: a real run's result (a
/// 10 s 4 KiB write on a size-3 pool of 3 bluestore OSDs, pacific, with
/// telemetry: 60 lines before) and this file's fixtures. What only defines
/// a share or a column waits for -v; a note that changes what a figure
/// means (here: the payload's transfer is in another share) stays.
#[test]
fn the_default_text_of_one_run_is_under_50_lines() {
    let real: BenchResult =
        serde_json::from_str(include_str!("fixtures/run-write-size3-pacific.json")).unwrap();
    for (name, r) in [
        ("the real run", real.clone()),
        ("fixture", fixture()),
        ("disruption", disruption_fixture()),
        ("not quiet", not_quiet_fixture()),
    ] {
        let text = render_short(&r);
        let n = text.lines().count();
        assert!(n < 50, "{name}: {n} lines:\n{text}");
    }
    let short = render_short(&real);
    let long = render(Format::Text, &real);
    for definition in [
        "note: client (librados/librbd) time is not measured on its own",
        "kv_sync = BlueStore's kv sync round",
    ] {
        assert!(!short.contains(definition), "{definition}:\n{short}");
        assert!(long.contains(definition), "{definition} with -v:\n{long}");
    }
    // The denominator of µs per OSD op stays, as does the build-less version.
    assert!(short.contains("(OSD ops = op_w + op_r + subop_w: what µs per OSD op divides by"));
    assert!(
        short.contains("(ceph 16.2.15 pacific), client vm"),
        "{short}"
    );
    let mut r = fixture();
    let caveat = "no path bandwidth (ICMP echo needs root or CAP_NET_RAW): the payload's \
                  transfer time is not in the network share (writes: in OSD queue; reads: \
                  unattributed)";
    r.jobs[0]
        .attribution
        .as_mut()
        .unwrap()
        .notes
        .push(caveat.into());
    let short = render_short(&r).replace("\n      ", " ");
    assert!(short.contains(caveat), "{short}");
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

/// A client that kept too few ops in flight says so in the short report,
/// beside the latency it leaves out; a healthy one only with -v.
#[test]
fn text_report_client_short() {
    assert!(!render_short(&fixture()).contains("In flight:"));
    assert!(render(Format::Text, &fixture()).contains("In flight:"));
    let mut r = fixture();
    // 1200 IOPS: 11.8 in flight on average, a slot waiting 3.5 ms per op.
    r.jobs[0].client = Some(ClientLoad {
        asked_in_flight: 16,
        mean_in_flight: 11.8,
        refill_wait_ns: 3_500_000.0,
    });
    r.jobs[0].latency_ns.mean = 9_833_333.0;
    let text = render_short(&r);
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  In flight:"))
        .take_while(|l| !l.starts_with("  Latency"))
        .collect();
    assert!(!lines.is_empty(), "{text}");
    insta::assert_snapshot!(lines.join("\n"));
}

/// The cost line (IOPS per GiB of one OSD's RAM) and the per-OSD
/// RAM beside each drive: measured when the OSDs run on this host, else
/// their `osd_memory_target`, and said which.
#[test]
fn text_report_cost_line() {
    let mut out = String::new();
    for rss in [None, Some(1 << 30)] {
        let mut r = fixture();
        r.pool = Some(common::pool_of_three(rss));
        let text = render(Format::Text, &r);
        // The OSDs' drive rows down to the cost line, with its continuation.
        let mut seen_cost = false;
        for line in text
            .lines()
            .skip_while(|l| !l.starts_with("  osd.0: class"))
        {
            if seen_cost && !line.starts_with("    ") {
                break;
            }
            seen_cost |= line.starts_with("  Cost: ");
            out += line;
            out.push('\n');
        }
    }
    insta::assert_snapshot!(out);
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

/// A result saved before the replication wait was split (one `replication`
/// share, no replica sets) still loads, validates and renders, with a
/// `replication` column where the split ones would be empty.
#[test]
fn a_result_from_before_the_split_still_renders() {
    let mut v = serde_json::to_value(fixture()).unwrap();
    let unsplit = serde_json::json!([
        {"part": "public_network", "ns": 0.12e6},
        {"part": "osd_queue", "ns": 1.1e6},
        {"part": "osd_local", "ns": 6.0e6},
        {"part": "replication", "ns": 2.0e6},
        {"part": "unattributed", "ns": 4.08125e6}
    ]);
    v["jobs"][0]["attribution"]["shares"] = unsplit.clone();
    v["osds"][0]["client"][0]["attribution"]["shares"] = unsplit;
    v["osds"][0].as_object_mut().unwrap().remove("replica_sets");
    common::validate(&v);
    let old: BenchResult = serde_json::from_value(v).unwrap();
    assert!(old.osds[0].replica_sets.is_empty());
    let text = render(Format::Text, &old);
    assert!(text.contains("replication              2.000 ms"), "{text}");
    assert!(text.contains("replic."), "{text}");
    let md = render(Format::Markdown, &old);
    assert!(md.contains("| replication |"), "{md}");
    assert!(!render(Format::Markdown, &fixture()).contains("| replication |"));
    let csv = render(Format::Csv, &old);
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.ends_with(&format!(
            ",,,2.000,4.081,16.0,16,,,{}{CPU_CELLS}",
            ",".repeat(27)
        )),
        "{row}"
    );
    let html = render(Format::Html, &old);
    assert!(html.contains("<th>replication ms</th>"));
}

/// The fixture run on a cluster with `noout` set throughout and a deep
/// scrub on 3 PGs from 2 to 6 s, its reads cold.
fn not_quiet_fixture() -> BenchResult {
    use cephbench::telemetry::quiet::EventTracker;
    let look = |t_s: f64, deep: &[&str]| common::cluster_look(t_s, true, deep);
    let looks = [
        look(-0.02, &[]),
        look(2.0, &["2.1", "2.4"]),
        look(4.0, &["2.4", "2.9"]),
        look(6.0, &["2.9"]),
        look(8.1, &[]),
    ];
    let mut t = EventTracker::new();
    for l in &looks {
        t.add(l);
    }
    let mut r = fixture();
    r.cluster_state = Some(t.finish(
        Some(looks[0].clone()),
        Some(looks[4].clone()),
        std::time::Duration::from_secs(2),
    ));
    r.read_cache = Some(cephbench::result::ReadCache::Cold);
    r
}

/// A cluster that was not quiet: one line in every format, marks on the
/// HTML timelines, the JSON valid against the schema; a quiet one: no line.
#[test]
fn a_cluster_not_quiet_is_one_line_in_every_format() {
    let r = not_quiet_fixture();
    let line = "not quiet: HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set); deep scrub on 3 PGs during 2–6 s";
    let text = render(Format::Text, &r);
    assert_eq!(text.matches(line).count(), 1, "{text}");
    assert!(text.contains("reads ran cold"), "{text}");
    insta::assert_snapshot!(text);
    let md = render(Format::Markdown, &r);
    assert!(md.contains(&format!("> **Cluster {line}**")), "{md}");
    let csv = render(Format::Csv, &r);
    let row = csv.lines().nth(1).unwrap();
    // The change and `--disrupt` cells after them are empty.
    let tail = format!(",false,{line},cold{}{CPU_CELLS}", ",".repeat(27));
    assert!(row.ends_with(&tail), "{row}");
    let html = render(Format::Html, &r);
    assert!(html.contains(&format!("Cluster {line}")), "{html}");
    // One mark per event on each timeline of the job (IOPS, mean, p50/p99).
    assert_eq!(html.matches("deep scrub, 3 PGs, during 2–6 s").count(), 3);
    assert_eq!(html.matches("OSDMAP_FLAGS, throughout the run").count(), 3);
    let v: serde_json::Value = serde_json::from_str(&render(Format::Json, &r)).unwrap();
    common::validate(&v);
    assert_eq!(v["read_cache"], "cold");
    assert_eq!(v["cluster_state"]["quiet"], false);
    assert_eq!(
        v["cluster_state"]["events"][1]["pg_ids"],
        serde_json::json!(["2.1", "2.4", "2.9"])
    );
    let back: BenchResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);

    // The same looks all HEALTH_OK and without a scrub: quiet, no line.
    let mut quiet = r.clone();
    let st = quiet.cluster_state.as_mut().unwrap();
    for s in [st.before.as_mut().unwrap(), st.after.as_mut().unwrap()] {
        s.health = "HEALTH_OK".into();
        s.checks.clear();
    }
    st.events.clear();
    st.quiet = true;
    for f in [Format::Text, Format::Markdown, Format::Csv, Format::Html] {
        assert!(!render(f, &quiet).contains("not quiet"));
    }
    common::validate(&serde_json::to_value(&quiet).unwrap());
}

/// The fixture with osd.1 out at 3 s and in at 7 s during 12 s of writes:
/// a stall at 3-4 s, recovery until 9 s.
fn disruption_fixture() -> BenchResult {
    use cephbench::disrupt::phases;
    use cephbench::result::disruption::{Action, ActionDone, Disruption, Look};
    let mut r = fixture();
    let job = &mut r.jobs[0];
    job.timeline = (1..=12)
        .map(|t| {
            let (ops, mean, p99, max) = match t {
                4 => (0, 0.0, None, None),
                5 => (600, 25e6, Some(900_000_000), Some(1_400_000_000)),
                8 | 9 => (900, 17e6, Some(60_000_000), Some(95_000_000)),
                _ => (1200, 13.3e6, Some(40_000_000), Some(50_000_000)),
            };
            Sample {
                t_s: t as f64,
                ramp: t == 1,
                ops,
                bytes: ops * 4096,
                mean_latency_ns: mean,
                in_flight: 16,
                errors: 0,
                p50_latency_ns: p99.map(|_| 12_000_000),
                p99_latency_ns: p99,
                max_latency_ns: max,
            }
        })
        .collect();
    let act = |action, asked: f64, done: f64| ActionDone {
        action,
        asked_s: Some(asked),
        sent_s: Some(asked + 0.001),
        done_s: Some(done),
        on_exit: false,
        error: None,
    };
    let actions = vec![act(Action::Out, 3.0, 3.04), act(Action::In, 7.0, 7.02)];
    let looks: Vec<Look> = (0..=12)
        .map(|t| {
            let (not_clean, recovering, inn) = match t {
                0..=3 => (0, false, 3),
                4..=7 => (32, false, 2),
                8 | 9 => (12, true, 3),
                _ => (0, false, 3),
            };
            Look {
                t_s: t as f64 + 0.05,
                pgs: 32,
                pgs_not_clean: not_clean,
                recovering,
                degraded_objects: if not_clean > 0 { 480 } else { 0 },
                misplaced_objects: 0,
                recovering_objects_per_sec: if recovering { 150.0 } else { 0.0 },
                recovering_bytes_per_sec: if recovering { 614_400.0 } else { 0.0 },
                osds_up: 3,
                osds_in: inn,
            }
        })
        .collect();
    let b = phases::bounds(&actions, &looks);
    let stalls = [(3.05, 1.3)];
    // Each interval's histogram: its ops at its mean, its slowest at its max.
    let latencies: Vec<_> = job
        .timeline
        .iter()
        .map(|s| {
            let mut r = cephbench::stats::LatencyRecorder::new();
            for _ in 1..s.ops {
                r.record(s.mean_latency_ns as u64);
            }
            if let Some(m) = s.max_latency_ns.filter(|_| s.ops > 0) {
                r.record(m);
            }
            r.pack()
        })
        .collect();
    let tl = phases::JobTimeline {
        job: &job.name,
        samples: &job.timeline,
        latencies: &latencies,
    };
    let ph = phases::phases(&tl, &b, &stalls);
    let recovery = phases::recovery(&b, &actions, &looks, 12.0, 60.0);
    r.disruption = Some(Disruption {
        osd: 1,
        spec: "osd.1:out@3s,in@7s".into(),
        actions,
        phases: ph,
        recovery,
        looks,
        looks_left_out: 0,
        poll_s: 1.0,
    });
    r
}

/// `--disrupt`: the phases' table and the recovery line in text and
/// Markdown, the cells in CSV, a mark per action on every HTML timeline,
/// the JSON valid and round-tripping.
#[test]
fn a_disruption_in_every_format() {
    let r = disruption_fixture();
    let text = render(Format::Text, &r);
    assert!(text.contains("Disruption: osd.1:out@3s,in@7s"), "{text}");
    assert!(
        text.contains("Actions: out@3s at 3.04 s, in@7s at 7.02 s"),
        "{text}"
    );
    assert!(
        text.contains("Recovery: active+clean 3.0 s after the last action (in);"),
        "{text}"
    );
    assert_eq!(
        r.disruption.as_ref().unwrap().recovery_line(),
        "active+clean 3.0 s after the last action (in); up to 480 objects degraded, 0 \
         misplaced; recovery 150 objects/s, 600 KiB/s (the mean of the looks that saw it)"
    );
    assert_fits(&text);
    insta::assert_snapshot!(text);
    let md = render(Format::Markdown, &r);
    assert!(md.contains("| job | phase | time s |"), "{md}");
    let csv = render(Format::Csv, &r);
    // RFC 4180 fields (the spec has a comma: quoted).
    let split = |line: &str| {
        let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => cells.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        cells.push(cur);
        cells
    };
    let head = split(csv.lines().next().unwrap());
    let row = split(csv.lines().nth(1).unwrap());
    assert_eq!(head.len(), row.len(), "{csv}");
    let cell = |name: &str| row[head.iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(cell("disrupt"), "osd.1:out@3s,in@7s");
    assert_eq!(cell("before_iops"), "1200.0");
    assert_eq!(cell("clean_after_s"), "3.0");
    let html = render(Format::Html, &r);
    assert!(
        html.contains("<h3>Disruption: osd.1:out@3s,in@7s</h3>"),
        "{html}"
    );
    assert_eq!(
        html.matches("osd.1 out at 3.0 s").count(),
        3,
        "one mark per timeline"
    );
    assert_eq!(html.matches("osd.1 in at 7.0 s").count(), 3);
    let v: serde_json::Value = serde_json::from_str(&render(Format::Json, &r)).unwrap();
    common::validate(&v);
    let phases: Vec<&str> = v["disruption"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["before", "degraded", "recovering", "after"]);
    let back: BenchResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

/// A phase is named after the PG states seen in it: an `out` whose PGs
/// kept every copy misplaces objects and degrades none, and its phase says
/// `misplaced`, not `degraded`. The table's p99 is the worst interval's,
/// labelled so. Recovery has one rate: the recovery line's, also in the
/// not-quiet line (whose own watch saw another).
#[test]
fn a_disruption_phase_is_named_after_the_pg_states_seen() {
    let mut r = disruption_fixture();
    let d = r.disruption.as_mut().unwrap();
    for l in &mut d.looks {
        (l.misplaced_objects, l.degraded_objects) = (l.degraded_objects * 13, 0);
    }
    // Sent on time, answered 0.75 s later (as measured on pacific: the mon
    // commits the osdmap change in its next batch).
    d.actions[0].sent_s = Some(3.0);
    d.actions[0].done_s = Some(3.75);
    let mut quiet = not_quiet_fixture().cluster_state.unwrap();
    let mut e = serde_json::to_value(&quiet.events[0]).unwrap();
    e["kind"] = "recovery".into();
    e["name"] = "".into();
    e["detail"] = "up to 527 objects/s, 0 B/s".into();
    e["max_objects_per_sec"] = 527.0.into();
    quiet.events.push(serde_json::from_value(e).unwrap());
    r.cluster_state = Some(quiet);
    // Wrapped lines joined.
    let text = render(Format::Text, &r)
        .replace("\n    ", " ")
        .replace("\n  (", " (");
    assert!(text.contains("  write  misplaced "), "{text}");
    assert!(!text.contains("write  degraded"), "{text}");
    assert!(text.contains("worst p99 ms"), "{text}");
    assert!(
        text.contains(
            "p99: the phase's own, from its intervals' histograms merged; worst p99: the highest \
             of its intervals' p99s"
        ),
        "{text}"
    );
    // The fixture's looks: 150 objects/s, 600 KiB/s at each of the two
    // that saw recovery.
    assert!(
        text.contains("recovery 150 objects/s, 600 KiB/s (the mean of the looks that saw it)"),
        "{text}"
    );
    assert!(
        text.contains("recovery (150 objects/s, 600 KiB/s, the mean of the looks that saw it)"),
        "{text}"
    );
    assert!(!text.contains("527"), "a second recovery rate: {text}");
    assert!(!text.contains("up to 150"), "{text}");
    assert!(
        text.contains("Actions: out@3s sent at 3.00 s, in effect at 3.75 s, in@7s at 7.02 s"),
        "{text}"
    );
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

/// One line per job and interval; the rates over each interval's length,
/// the percentiles as the samples hold them (empty where a sample has none).
#[test]
fn timeline_csv_report() {
    let text = render(Format::TimelineCsv, &fixture());
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        cephbench::report::TIMELINE_CSV_HEADER
    );
    let r = fixture();
    let samples: usize = r.jobs.iter().map(|j| j.timeline.len()).sum();
    assert_eq!(lines.count(), samples);
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
    // B's split: its OSD-local and replica shares are what it saved.
    let att = b.jobs[0].attribution.as_mut().unwrap();
    att.mean_ns /= 2.0;
    for s in &mut att.shares {
        match s.part {
            Part::OsdLocal => s.ns = 1.0e6,
            Part::Replica => s.ns = 0.0,
            _ => {}
        }
    }
    let rest: f64 = att
        .shares
        .iter()
        .filter(|s| s.part != Part::Unattributed)
        .map(|s| s.ns)
        .sum();
    let mean = att.mean_ns;
    if let Some(u) = att.shares.iter_mut().find(|s| s.part == Part::Unattributed) {
        u.ns = mean - rest;
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
    assert!(String::from_utf8_lossy(&out.stdout).contains("| write | IOPS | 1200 | 2400 | +100.0%"));

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
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("bad.json: not a cephbench result"), "{err}");
    assert!(out.stdout.is_empty());
}

/// The fixture with a serialized histogram whose percentiles are the
/// summary's (a deterministic skewed sample around 13 ms with a slow tail).
pub fn fixture_with_histogram() -> BenchResult {
    let mut rec = cephbench::stats::LatencyRecorder::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..12_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = 10_000_000 + x % 6_000_000;
        rec.record(if i % 100 == 0 { v * 3 } else { v });
    }
    let mut r = fixture();
    r.jobs[0].latency_ns = rec.summary();
    r.jobs[0].histogram = Some(cephbench::stats::encode_histogram(rec.histogram()));
    r
}

#[test]
fn html_report() {
    let html = render(Format::Html, &fixture_with_histogram());
    insta::assert_snapshot!(html);
    // One job: percentile curve + three timelines (IOPS, mean, p50/p99),
    // the attribution, per-OSD bars, the OSD counter timeline and its CPU.
    assert_eq!(html.matches("<svg ").count(), 8);
    assert!(html.contains("p50 and p99 completion latency per second"));
    assert!(html.contains("Each OSD&#39;s own mean op_w_latency per counter interval"));
    assert!(html.contains("Each OSD process&#39;s CPU per counter interval"));
    for forbidden in ["<script", "<link", "@import", "url(", "https://", "<img"] {
        assert!(
            !html.contains(forbidden),
            "self-contained: found {forbidden}"
        );
    }
    assert!(html.contains("from the job's HDR histogram"));
}

#[test]
fn html_escapes_text_from_the_file() {
    let mut r = fixture();
    if let Workload::Rados(w) = &mut r.workload {
        w.pool = "<script>alert('pool')</script>".into();
    }
    r.jobs[0].name = "a<b>&\"c\"".into();
    r.warnings.push("<img src=x onerror=alert(1)>".into());
    let html = render(Format::Html, &r);
    assert!(!html.contains("<script"), "unescaped pool name");
    assert!(!html.contains("<img"), "unescaped warning");
    assert!(!html.contains("a<b>"), "unescaped job name");
    assert!(html.contains("&lt;script&gt;alert(&#39;pool&#39;)&lt;/script&gt;"));
    assert!(html.contains("a&lt;b&gt;&amp;&quot;c&quot;"));
}

/// A negative unattributed share (overlapping measurements) is listed as a
/// note, not drawn, and the plot stays well-formed.
#[test]
fn html_with_negative_unattributed_share() {
    let mut r = fixture();
    let a = r.jobs[0].attribution.as_mut().unwrap();
    let last = a.shares.last_mut().unwrap();
    assert_eq!(last.part, Part::Unattributed);
    last.ns = -400_000.0;
    let html = render(Format::Html, &r);
    assert!(
        html.contains("write: unattributed is -0.400 ms (negative"),
        "note missing"
    );
    assert!(!html.contains("NaN") && !html.contains("width=\"-") && !html.contains("inf"));
    assert_eq!(html.matches("<svg ").count(), 8);
}

fn assert_fits(text: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= cephbench::report::TEXT_WIDTH,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

/// Text output fits a 100-column terminal, whatever the file holds.
#[test]
fn text_fits_100_columns() {
    assert_fits(&render(Format::Text, &fixture()));
    let mut r = fixture();
    r.cluster.ceph_version =
        Some("ceph version 18.2.4 (e7ad5345525c7aa95470c26863873b581076945d) reef (stable)".into());
    r.warnings.push("w".repeat(150));
    r.jobs[0].first_error = Some(format!(
        "write {} at offset 0: (28) No space",
        "o".repeat(90)
    ));
    let text = render(Format::Text, &r);
    assert_fits(&text);
    assert!(text.contains(&"w".repeat(90)), "nothing dropped");

    let c = cephbench::compare::compare(&[fixture(), fixture()]);
    let mut buf = Vec::new();
    cephbench::report::comparison_table(&c, false, &mut buf).unwrap();
    assert_fits(&String::from_utf8(buf).unwrap());
}

#[test]
fn report_command_rerenders_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    std::fs::write(&a, serde_json::to_vec(&fixture()).unwrap()).unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        assert_cmd::Command::cargo_bin("cephbench")
            .unwrap()
            .args(args)
            .output()
            .unwrap()
    };
    // Each format re-rendered from the file equals the direct rendering.
    for (name, f) in [
        ("text", Format::Text),
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("timeline-csv", Format::TimelineCsv),
        ("markdown", Format::Markdown),
        ("html", Format::Html),
    ] {
        // -v: every section, as the library's reporter renders it.
        let out = run(&[
            "report".as_ref(),
            a.as_os_str(),
            "-v".as_ref(),
            "--format".as_ref(),
            name.as_ref(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut got = String::from_utf8(out.stdout).unwrap();
        if f == Format::Html {
            // The page names its source file.
            let from = format!("<p class=\"note\">From {}</p>", a.display());
            assert!(got.contains(&from), "{got}");
            got = got.replace(&from, "");
        }
        assert_eq!(got, render(f, &fixture()), "{name}");
    }
    // Several files: csv keeps one header; -o writes the file.
    let o = dir.path().join("out.csv");
    let out = run(&[
        "report".as_ref(),
        a.as_os_str(),
        a.as_os_str(),
        "--format".as_ref(),
        "csv".as_ref(),
        "-o".as_ref(),
        o.as_os_str(),
    ]);
    assert!(out.status.success() && out.stdout.is_empty());
    let csv = std::fs::read_to_string(&o).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert_eq!(csv.matches("workload,pool").count(), 1);

    // Bad, old and garbled files: one line naming the file, exit 2, nothing written.
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "garbled.json",
            b"{\"schema_version\": 1, \"jobs\": [".to_vec(),
            "not JSON",
        ),
        ("empty.json", Vec::new(), "not JSON"),
        ("other.json", b"{\"jobs\": 3}".to_vec(), "no schema_version"),
        (
            "old.json",
            {
                let mut v = serde_json::to_value(fixture()).unwrap();
                v["schema_version"] = 0.into();
                serde_json::to_vec(&v).unwrap()
            },
            "schema version 0 is not supported",
        ),
        (
            "missing.json",
            {
                let mut v = serde_json::to_value(fixture()).unwrap();
                v["jobs"][0].as_object_mut().unwrap().remove("latency_ns");
                serde_json::to_vec(&v).unwrap()
            },
            "missing field `latency_ns`",
        ),
        (
            "hist.json",
            {
                let mut v = serde_json::to_value(fixture()).unwrap();
                v["jobs"][0]["histogram"] = "AAAA".into();
                serde_json::to_vec(&v).unwrap()
            },
            "job 'write': histogram",
        ),
    ];
    for (file, bytes, want) in cases {
        let bad = dir.path().join(file);
        std::fs::write(&bad, bytes).unwrap();
        let o = dir.path().join("never.html");
        let out = run(&[
            "report".as_ref(),
            a.as_os_str(),
            bad.as_os_str(),
            "--format".as_ref(),
            "html".as_ref(),
            "-o".as_ref(),
            o.as_os_str(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{file}: {err}");
        assert!(err.contains(file) && err.contains(want), "{file}: {err}");
        assert!(
            out.stdout.is_empty() && !o.exists(),
            "{file}: something was written"
        );
    }
    let out = run(&["report".as_ref(), dir.path().join("nope.json").as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.json: cannot read"));
}

/// A group run: two clients on hosts of one name, told apart by address,
/// and one that delivered nothing (no address known).
fn group_fixture() -> BenchResult {
    let row = |agent: &str, addr: Option<&str>, ops: u64| ClientReport {
        agent: agent.into(),
        host: "lab1".into(),
        addr: addr.map(Into::into),
        status: if ops > 0 { "ok" } else { "missing" }.into(),
        error: (ops == 0).then(|| "no result: its watch disappeared".into()),
        run_name: format!("default-{agent}"),
        ops,
        iops: ops as f64 / 10.0,
        mean_ns: 2_125_000.0,
        p99_ns: 4_200_000,
        clock_offset_ms: -0.125,
        clock_rtt_ms: 1.5,
        start_delta_ms: (ops > 0).then_some(0.4),
    };
    let mut r = fixture();
    r.clients = Some(GroupReport {
        group: "g1".into(),
        requested: 3,
        planned_start_unix_ns: 1_700_000_000_000_000_000,
        start_spread_ms: Some(1.25),
        clients: vec![
            row("a0", Some("192.0.2.100"), 1000),
            row("a1", Some("192.0.2.101"), 2000),
            row("a2", None, 0),
        ],
    });
    r
}

#[test]
fn group_rows_show_host_and_address() {
    let r = group_fixture();
    let text = render(Format::Text, &r);
    assert!(text.contains("lab1 (192.0.2.101)"), "{text}");
    insta::assert_snapshot!(text);
    let md = render(Format::Markdown, &r);
    assert!(md.contains("| a0 | lab1 (192.0.2.100) | ok |"), "{md}");
    insta::assert_snapshot!(md);
    let json = render(Format::Json, &r);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    common::validate(&v);
    assert_eq!(v["clients"]["clients"][1]["addr"], "192.0.2.101");
    assert!(v["clients"]["clients"][2]["addr"].is_null());
    // Results of versions without the field still load.
    let mut old = v.clone();
    old["clients"]["clients"][0]
        .as_object_mut()
        .unwrap()
        .remove("addr");
    let back: BenchResult = serde_json::from_value(old).unwrap();
    assert_eq!(back.clients.unwrap().clients[0].addr, None);
}

/// A rate sweep of two pools made from the fixture: each point the
/// fixture's run with its rate, figures and split scaled to the load.
fn sweep_fixture() -> cephbench::sweep::SweepDoc {
    use cephbench::result::{RateReport, ScheduleError};
    use cephbench::sweep::{figures, split, Axis, Curve, Point, SweepDoc, SweepSettings};
    // (asked, achieved, p99 ms) per point.
    let curve = |pool: &str, pts: &[(f64, f64, f64)]| {
        let points: Vec<Point> = pts
            .iter()
            .map(|&(asked, achieved, p99)| {
                let mut r = fixture();
                let j = &mut r.jobs[0];
                j.iops = achieved;
                j.latency_ns.p50 = (p99 * 0.4e6) as u64;
                j.latency_ns.p99 = (p99 * 1e6) as u64;
                j.latency_ns.p99_9 = (p99 * 1.5e6) as u64;
                j.latency_ns.mean = p99 * 0.45e6;
                let mut svc = j.latency_ns;
                svc.mean -= 0.7e6;
                svc.p99 = (p99 * 0.9e6) as u64;
                j.service_latency_ns = Some(svc);
                if let Some(a) = j.attribution.as_mut() {
                    a.mean_ns = j.latency_ns.mean;
                    let known: f64 = a
                        .shares
                        .iter()
                        .filter(|s| s.part != Part::Unattributed)
                        .map(|s| s.ns)
                        .sum();
                    for s in &mut a.shares {
                        if s.part == Part::Unattributed {
                            s.ns = a.mean_ns - known;
                        }
                    }
                }
                j.rate = Some(RateReport {
                    asked,
                    achieved,
                    arrival: "uniform".into(),
                    late_ops: if achieved < 0.98 * asked { 900 } else { 0 },
                    scheduled_ops: (asked * 10.0) as u64,
                    max_backlog: if achieved < 0.98 * asked { 2_000 } else { 0 },
                    final_backlog: 0,
                    schedule_error_ns: ScheduleError {
                        p50: 700_000,
                        p99: 1_000_000,
                        max: 2_000_000,
                    },
                    kept_up: achieved >= 0.98 * asked,
                });
                r.latency_kind = "intended_start".into();
                Point {
                    figures: figures(Axis::Rate, 16, &r),
                    split: split(&r),
                    result: r,
                }
            })
            .collect();
        Curve::new(Axis::Rate, pool.into(), points, None, None)
    };
    SweepDoc {
        sweep_schema_version: cephbench::sweep::SWEEP_SCHEMA_VERSION,
        tool: fixture().tool,
        workload: "rados write 4 KiB".into(),
        axis: Axis::Rate,
        latency_kind: "intended_start".into(),
        settings: SweepSettings {
            duration_s: 5.0,
            ramp_s: 1.0,
            steps: vec![250.0, 500.0, 1000.0, 2000.0],
            concurrency: Some(16),
            arrival: Some("uniform".into()),
            p99_target_ns: None,
        },
        curves: vec![
            curve(
                "consumer",
                &[
                    (250.0, 250.2, 14.0),
                    (500.0, 499.1, 15.5),
                    (1000.0, 610.0, 900.0),
                ],
            ),
            curve(
                "plp",
                &[
                    (250.0, 250.0, 2.0),
                    (500.0, 500.3, 2.2),
                    (1000.0, 999.0, 2.9),
                    (2000.0, 1995.0, 7.5),
                ],
            ),
        ],
        started_unix: 1_700_000_000,
        elapsed_s: 41.5,
        interrupted: false,
    }
}

fn sweep_text(md: bool) -> String {
    let mut buf = Vec::new();
    cephbench::sweep::render_table(&sweep_fixture(), md, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn sweep_table_text() {
    let t = sweep_text(false);
    assert_fits(&t);
    // The overloaded point says what happened there, in words: the
    // fixture's 610 of 1000 ops/s, 900 ops late, a backlog of 2,000.
    assert!(!t.contains("OVERLOAD"), "{t}");
    let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "overloaded at 1000 ops/s: the cluster could not keep up: achieved 610 of 1000 ops/s \
             (61 %), 900 ops issued over 1 ms late (every slot busy), up to 2,000 ops waiting"
        ),
        "{t}"
    );
    insta::assert_snapshot!(t);
}

#[test]
fn sweep_table_markdown() {
    insta::assert_snapshot!(sweep_text(true));
}

#[test]
fn sweep_json_matches_its_schema() {
    let doc = sweep_fixture();
    let v = serde_json::to_value(&doc).unwrap();
    common::validate_sweep(&v);
    let back: cephbench::sweep::SweepDoc = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(back, doc, "round trip");
    // The knees: the consumer pool's first.
    let knee = |i: usize| v["curves"][i]["knee"]["asked_rate"].as_f64();
    assert_eq!((knee(0), knee(1)), (Some(500.0), Some(1000.0)));
    assert_eq!(v["curves"][0]["knee"]["rule"], "ceiling");
    assert_eq!(v["curves"][1]["knee"]["rule"], "p99_doubled");
    // additionalProperties is enforced.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../schema/sweep.schema.json")).unwrap();
    assert!(schema["$defs"]["point"]["additionalProperties"] == false);
}

#[test]
fn sweep_html_plots_both_curves_and_their_knees() {
    let mut buf = Vec::new();
    cephbench::sweep::render_html(&sweep_fixture(), &mut buf).unwrap();
    let h = String::from_utf8(buf).unwrap();
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert_eq!(h.matches("<svg").count(), 3, "latency, IOPS, split");
    for s in [
        "consumer p99",
        "plp p99",
        "knee consumer: 500 ops/s",
        "knee plp: 1000 ops/s",
    ] {
        assert!(h.contains(s), "{s}");
    }
    assert!(!h.contains("<script"));
    // The overloaded point's 900 ms would flatten the rest: the axis is capped.
    assert!(h.contains("The latency axis ends at"), "cap note");
}

/// `--end-flush`: the rate through the flush is in the report's unit, as
/// Bandwidth above it, and dd's MB/s beside it is labelled, so that the two
/// lines do not read as if the flush made the run faster.
#[test]
fn end_flush_rate_is_in_the_reports_unit() {
    let mut r = fixture();
    let j = &mut r.jobs[0];
    // The writes' own rate, and a flush that took nothing: the same rate.
    j.end_flush = Some(cephbench::result::EndFlush::new(
        j.bytes,
        j.bytes as f64 / j.bytes_per_sec,
        0.0,
    ));
    let text = render(Format::Text, &r);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no {start} in\n{text}"))
            .to_string()
    };
    let (bw, flush) = (line("Bandwidth:"), line("Through end flush:"));
    // The figure after the line's name.
    let mib = |l: &str| {
        l.split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .map(String::from)
    };
    assert!(
        flush.contains(" MiB/s = ") && flush.contains("MB/s, dd's unit"),
        "{flush}"
    );
    assert_eq!(mib(&bw), mib(&flush), "{bw}\n{flush}");
}

/// A job whose client fell short shows its depth as a column of the
/// Markdown and HTML job tables, with what the column means; a healthy
/// run's tables have no such column. CSV always carries the two figures.
#[test]
fn job_tables_show_in_flight_where_the_client_fell_short() {
    for f in [Format::Markdown, Format::Html] {
        assert!(!render(f, &fixture()).contains("in flight"), "{f:?}");
    }
    let mut r = fixture();
    r.jobs[0].client = Some(ClientLoad {
        asked_in_flight: 16,
        mean_in_flight: 11.8,
        refill_wait_ns: 3_500_000.0,
    });
    let md = render(Format::Markdown, &r);
    assert!(
        md.contains("| job | op | ops | in flight | IOPS |") && md.contains("| 12000 | 11.8/16* |"),
        "{md}"
    );
    assert!(
        md.contains("the client, not the cluster, set the pace"),
        "{md}"
    );
    let html = render(Format::Html, &r);
    assert!(
        html.contains("<th>in flight</th>") && html.contains("<td class=\"n\">11.8/16*</td>"),
        "{html}"
    );
    let csv = render(Format::Csv, &r);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",mean_in_flight,asked_in_flight,"));
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .ends_with(&format!(",11.8,16,,,{}{CPU_CELLS}", ",".repeat(27))),
        "{csv}"
    );
}

/// A job whose IOPS fell from 17 s on while osd.0's kv sync round slowed:
/// [`cephbench::explain::changes::annotate`] finds the one change, and every format
/// carries it (text and Markdown one line each, CSV two columns, HTML a
/// line and a mark on each timeline, JSON valid against the schema).
#[test]
fn a_change_during_the_run_is_in_every_format() {
    let mut r = not_quiet_fixture();
    let timeline: Vec<Sample> = (1..=32)
        .map(|t| {
            let iops: u64 = if t <= 17 { 1480 } else { 610 } + (t * 7 % 23);
            let mean = 4e9 / iops as f64;
            Sample {
                t_s: t as f64,
                ramp: t <= 2,
                ops: iops,
                bytes: iops * 4096,
                mean_latency_ns: mean,
                in_flight: 4,
                errors: 0,
                p50_latency_ns: Some(mean as u64),
                p99_latency_ns: Some(3 * mean as u64),
                max_latency_ns: Some(5 * mean as u64),
            }
        })
        .collect();
    r.jobs[0].timeline = timeline;
    let kv = |ms: f64| AvgDelta {
        count: 200,
        mean_ns: Some(ms * 1e6),
    };
    let template = r.osds[0].timeline[0].counters.clone();
    r.osds[0].timeline = (1..=16)
        .map(|k| {
            let t_s = 2.0 * k as f64;
            CounterSample {
                t_s,
                interval_s: 2.0,
                cpu_s: None,
                counters: OsdCounters {
                    kv_sync_lat: Some(kv(if t_s <= 16.0 { 0.6 } else { 9.1 })),
                    ..template.clone()
                },
            }
        })
        .collect();
    cephbench::explain::changes::annotate(&mut r);
    let changes = r.jobs[0].changes.as_ref().expect("judged");
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].t_s, 17.0);
    let text = render(Format::Text, &r);
    assert_eq!(text.matches("Change:").count(), 1, "{text}");
    // The line as wrapped to the report's width (continuations indented).
    let wrapped: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  Change:"))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with("    "))
        .map(|(_, l)| l)
        .collect();
    insta::assert_snapshot!(wrapped.join("\n"));
    let lines = [wrapped
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ")];
    assert!(
        lines[0].contains(
            "osd.0 (class consumer, model Samsung SSD 870 QVO 1TB) kv sync round 0.600 → 9.10 ms"
        ) && lines[0].ends_with("; no cluster event"),
        "{}",
        lines[0]
    );
    let md = render(Format::Markdown, &r);
    assert!(md.contains("\n- from 17 s: IOPS 1,4"), "{md}");
    let csv = render(Format::Csv, &r);
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.contains(",cold,1,\"from 17 s: IOPS 1,492 → 621"),
        "{row}"
    );
    let html = render(Format::Html, &r);
    assert_eq!(html.matches("change at 17 s: IOPS −").count(), 3, "{html}");
    assert!(html.contains("<b>Change:</b> from 17 s"));
    let v: serde_json::Value = serde_json::from_str(&render(Format::Json, &r)).unwrap();
    common::validate(&v);
    assert_eq!(
        v["jobs"][0]["changes"][0]["osds"][0]["counter"],
        "kv_sync_lat"
    );
}

/// What-if projections in every format: the text one line each (with -v
/// their source and assumptions), Markdown a list, CSV one column, HTML a
/// line each with its assumptions folded under it, JSON valid against the
/// schema and round-tripping.
#[test]
fn a_projection_is_in_every_format() {
    let mut r = fixture();
    let job = r.jobs[0].clone();
    let p = vec![
        cephbench::explain::whatif::without_copies(&r, &job).unwrap(),
        cephbench::explain::whatif::with_cluster_cable(&r, &job, 0.5e6).unwrap(),
    ];
    r.jobs[0].projections = Some(p);
    let short = render_short(&r);
    let lines: Vec<&str> = short
        .lines()
        .filter(|l| l.starts_with("  What if:"))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    assert_eq!(lines.len(), 2, "{short}");
    assert!(!short.contains("assuming"), "{short}");
    let long = render(Format::Text, &r);
    assert!(
        long.contains("    assuming the primary answers after its own commit"),
        "{long}"
    );
    let md = render(Format::Markdown, &r);
    assert!(
        md.contains("What if, for `write`") && md.contains("- no wait for copies: mean 13.3 → "),
        "{md}"
    );
    let csv = render(Format::Csv, &r);
    assert!(
        csv.contains(",\"no wait for copies: mean 13.3 → 11.3 ms, IOPS 1,200 → "),
        "{csv}"
    );
    let html = render(Format::Html, &r);
    assert!(
        html.contains("<h3>What if</h3>")
            && html.contains("<summary><b>write:</b> no wait for copies: mean 13.3 → 11.3 ms"),
        "{html}"
    );
    let text = render(Format::Json, &r);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::validate(&v);
    let back: BenchResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}

/// `report --what-if`: the asked projections join each result's jobs (the
/// text one line each); a change the split cannot carry, or a bad one, is
/// one line on stderr, a non-zero exit and nothing on stdout.
#[test]
fn report_adds_the_projections_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    std::fs::write(&a, serde_json::to_vec(&fixture()).unwrap()).unwrap();
    let run = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("cephbench")
            .unwrap()
            .arg("report")
            .arg(&a)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--what-if",
        "cluster-rtt:-0.5ms",
        "--what-if",
        "no-copy-wait",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "  What if:             a cluster network 0.500 ms faster per round trip: mean 13.3 → 12.8 ms"
        ) && text.contains("  What if:             no wait for copies: mean 13.3 → 11.3 ms"),
        "{text}"
    );
    // The fixture's write has no device-flush share: nothing to project.
    for (args, says) in [
        (
            &["--what-if", "plp"][..],
            "no job's split allows the --what-if",
        ),
        (&["--what-if", "cluster-rtt:0.5ms"], "give how much faster"),
        (&["--what-if", "like:0"], "name an OSD as osd.N"),
        (&["--what-if", "faster"], "unknown change"),
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            err.contains(says) && err.trim().lines().count() <= 2,
            "{args:?}: {err}"
        );
    }
}

/// The fixture as an RBD run whose image keeps its data in a k=2 m=1 pool:
/// every format names both pools and describes the data pool (its layout
/// and usable fraction); JSON validates; a result saved before
/// `workload.data_pool` existed still loads.
#[test]
fn an_image_with_a_data_pool_names_both_pools_in_every_format() {
    use cephbench::result::RbdWorkload;
    let mut r = fixture();
    r.workload = Workload::Rbd(RbdWorkload {
        pool: "rbd".into(),
        data_pool: Some("ec21".into()),
        image: "cephbench_img.h.1.2".into(),
        image_created: true,
        image_size: 1 << 30,
        object_size: 4 << 20,
        features: 61,
        test_area: 1 << 30,
        rw: "randwrite".into(),
        rwmix_read: 50,
        bs: 4096,
        iodepth: 16,
        numjobs: 1,
        duration_s: Some(10.0),
        io_total: None,
        ramp_s: 0.0,
        fsync_every: None,
        rbd_cache: false,
        random_map: Some(true),
        end_flush: false,
        preconditioned: true,
        precondition: None,
    });
    let mut pool = common::pool_of_three(None);
    pool.name = "ec21".into();
    pool.erasure = Some(common::ec21_layout());
    r.pool = Some(pool);
    // (Long lines wrap, continued with two spaces.)
    let text = render_short(&r).replace("\n  ", " ");
    assert!(
        text.contains(
            "image 'rbd/cephbench_img.h.1.2' (1 GiB, created for this run, data in pool 'ec21')"
        ) && text.contains("data pool 'ec21': erasure 2+1 (jerasure reed_sol_van")
            && text.contains("usable 67 %"),
        "{text}"
    );
    // The per-OSD rows show the shard writes the OSD took for other
    // primaries: its transactions (12,010) beyond its client writes
    // (12,004) and replica writes (0).
    let raw = render_short(&r);
    let header = raw
        .lines()
        .find(|l| l.trim_start().starts_with("osd ") && l.contains("kv_sync"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains(" kv_sync shard_w OSD ops"), "{header}");
    let row = raw
        .lines()
        .find(|l| l.trim_start().starts_with("osd.0 ") && l.contains(" | "))
        .unwrap();
    assert!(row.trim_end().ends_with("      6   12004"), "{row}");
    assert!(
        text.contains("shard_w = the erasure-coded sub-writes it took, a count"),
        "{text}"
    );
    let md = render(Format::Markdown, &r);
    assert!(
        md.contains("on `rbd/cephbench_img.h.1.2 (data in ec21)`")
            && md.contains("data pool 'ec21': erasure 2+1"),
        "{md}"
    );
    let html = render(Format::Html, &r);
    assert!(
        html.contains("rbd/cephbench_img.h.1.2 (data in ec21)") && html.contains("usable 67 %"),
        "html"
    );
    let csv = render(Format::Csv, &r);
    assert!(
        csv.contains("rbd/cephbench_img.h.1.2 (data in ec21)"),
        "{csv}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&render(Format::Json, &r)).unwrap();
    assert_eq!(v["workload"]["data_pool"], "ec21");
    common::validate(&v);
    // Saved before the field existed: the data in the image's pool.
    v["workload"].as_object_mut().unwrap().remove("data_pool");
    common::validate(&v);
    let old: BenchResult = serde_json::from_value(v).unwrap();
    assert!(matches!(&old.workload, Workload::Rbd(w) if w.data_pool.is_none()));
}
