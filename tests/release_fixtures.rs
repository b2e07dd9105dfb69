//! The parsers of Ceph's JSON, over answers captured from real daemons of
//! every release in `tests/fixtures/<release>/` (by
//! `tests/capture-fixtures.sh`), checked against `expected.json`: the same
//! facts read from Ceph's plain-text answers, not from the JSON. A release
//! whose output shapes break a parser fails here, without a cluster.
//!
//! `CEPHBENCH_EXTRA_FIXTURES` (colon-separated directories of the same
//! layout) adds freshly captured sets, e.g. the release job's
//! (`tests/run.sh --release reef`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cephbench::device::parse_devices;
use cephbench::telemetry::counters::parse_perf_dump;
use cephbench::telemetry::historic::parse_historic_ops;
use cephbench::telemetry::network::{parse_osd_addrs, parse_osd_network};
use cephbench::telemetry::parse::{
    parse_config_u64, parse_osd_dump_pool, parse_osd_states, parse_pgs_brief, parse_pool_settings,
};
use serde_json::Value;

/// The Ceph major version each release directory must hold.
const RELEASES: &[(&str, u64)] = &[
    ("pacific", 16),
    ("quincy", 17),
    ("reef", 18),
    ("squid", 19),
    ("tentacle", 20),
];

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    if let Some(extra) = std::env::var_os("CEPHBENCH_EXTRA_FIXTURES") {
        dirs.extend(std::env::split_paths(&extra).filter(|p| !p.as_os_str().is_empty()));
    }
    dirs.sort();
    dirs
}

fn load(dir: &Path, file: &str) -> Value {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `check` on every release directory, naming the directory on failure.
fn each(check: impl Fn(&Path, &Value)) {
    let dirs = fixture_dirs();
    let releases: BTreeSet<String> = dirs
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // The host's own release and at least one newer one.
    assert!(releases.contains("pacific"), "{releases:?}");
    assert!(
        releases.iter().any(|r| r != "pacific"),
        "no newer release captured: {releases:?}"
    );
    for d in &dirs {
        if !d.join("expected.json").exists() {
            continue; // a directory of single files (e.g. older fixtures)
        }
        let exp = load(d, "expected.json");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(d, &exp)));
        if let Err(e) = r {
            eprintln!("fixture set {} failed", d.display());
            std::panic::resume_unwind(e);
        }
    }
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("expected.json: no number {k}"))
}

#[test]
fn each_directory_holds_its_release() {
    each(|d, exp| {
        let name = d.file_name().unwrap().to_string_lossy();
        let ver = exp["ceph_version"].as_str().unwrap();
        let major: u64 = ver.split('.').next().unwrap().parse().unwrap();
        if let Some((_, want)) = RELEASES.iter().find(|(r, _)| *r == name) {
            assert_eq!(major, *want, "{name} holds ceph {ver}");
        }
        // What cephbench reports as the cluster's version (`version` mon command).
        let v = load(d, "version.json");
        let s = v["version"]
            .as_str()
            .expect("version.json: no 'version' string");
        assert!(s.contains(ver), "{s} vs {ver}");
    });
}

#[test]
fn osd_dump_gives_pg_num_epoch_states_and_addresses() {
    each(|d, exp| {
        let dump = load(d, "osd_dump.json");
        let pool = &exp["pool"];
        let id = u(pool, "id") as i64;
        assert_eq!(
            parse_osd_dump_pool(&dump, id).unwrap(),
            (u(pool, "pg_num") as u32, u(exp, "epoch"))
        );
        assert!(parse_osd_dump_pool(&dump, id + 1000).is_err());
        let want: Vec<(i32, bool, bool)> = exp["osds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["id"].as_i64().unwrap() as i32,
                    o["up"].as_bool().unwrap(),
                    o["in"].as_bool().unwrap(),
                )
            })
            .collect();
        assert!(!want.is_empty());
        assert_eq!(parse_osd_states(&dump).unwrap(), want);
        let addrs: Vec<(i32, String)> = parse_osd_addrs(&dump)
            .unwrap()
            .into_iter()
            .map(|(o, a)| (o, a.to_string()))
            .collect();
        let want: Vec<(i32, String)> = exp["osds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["id"].as_i64().unwrap() as i32,
                    o["public_addr"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(addrs, want);
    });
}

#[test]
fn pgs_brief_gives_every_pgs_acting_set_and_primary() {
    each(|d, exp| {
        let pool = &exp["pool"];
        let (id, pg_num) = (u(pool, "id") as i64, u(pool, "pg_num") as u32);
        let p = parse_pgs_brief(
            &load(d, "pg_dump_pgs_brief.json"),
            id,
            pg_num,
            u(exp, "epoch"),
        )
        .unwrap();
        let want = exp["acting"].as_array().unwrap();
        assert_eq!(p.acting.len(), want.len());
        for (seed, (got, want)) in p.acting.iter().zip(want).enumerate() {
            let want: Vec<i32> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_i64().unwrap() as i32)
                .collect();
            assert_eq!(got.len(), u(pool, "size") as usize, "pg {id}.{seed:x}");
            // `ceph pg map` lists the primary first.
            assert_eq!(got[0], want[0], "primary of pg {id}.{seed:x}");
            let (mut a, mut b) = (got.clone(), want.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "acting set of pg {id}.{seed:x}");
        }
    });
}

#[test]
fn perf_dump_has_every_counter_and_they_agree() {
    each(|d, _| {
        let raw = load(d, "perf_dump.json");
        let s = parse_perf_dump(&raw).unwrap();
        for (i, (sec, name)) in cephbench::telemetry::counters::LATENCY_COUNTERS
            .iter()
            .enumerate()
        {
            let a = s.latency[i].unwrap_or_else(|| panic!("{sec}.{name} missing"));
            // The raw counter, under this name or a later release's.
            let later = cephbench::telemetry::counters::RENAMED_COUNTERS
                .iter()
                .find(|(s, n, _)| s == sec && n == name)
                .map(|r| r.2);
            let c = raw[sec]
                .get(name)
                .or_else(|| raw[sec].get(later?))
                .unwrap_or_else(|| panic!("raw {sec}.{name} missing"));
            assert_eq!(a.avgcount, c["avgcount"].as_u64().unwrap(), "{name}");
            assert_eq!(a.sum, c["sum"].as_f64().unwrap(), "{name}");
        }
        for (i, (sec, name)) in cephbench::telemetry::counters::COUNT_COUNTERS
            .iter()
            .enumerate()
        {
            assert!(s.counts[i].is_some(), "{sec}.{name} missing");
        }
        // Each op counter and its latency counter are bumped together.
        let [op_w, op_r, subop_w] = s.counts.map(Option::unwrap);
        assert!(op_w > 0 && op_r > 0, "the capture wrote and read objects");
        assert_eq!(s.latency[0].unwrap().avgcount, op_w, "op_w_latency");
        assert_eq!(s.latency[3].unwrap().avgcount, op_r, "op_r_latency");
        assert_eq!(s.latency[5].unwrap().avgcount, subop_w, "subop_w_latency");
        assert!(s.latency[0].unwrap().sum > 0.0);
    });
}

#[test]
fn osd_network_lists_heartbeat_times_to_every_peer() {
    each(|d, exp| {
        let raw = load(d, "dump_osd_network.json");
        let rtts = parse_osd_network(&raw).unwrap();
        let n_raw = raw["entries"].as_array().expect("entries").len();
        assert!(n_raw > 0, "no heartbeat entries captured");
        assert_eq!(rtts.len(), n_raw, "every entry parses");
        let osds: BTreeSet<i32> = exp["osds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_i64().unwrap() as i32)
            .collect();
        let mut peers = BTreeSet::new();
        for r in &rtts {
            assert_eq!(r.from, 0, "captured from osd.0");
            assert!(osds.contains(&r.to) && r.to != 0, "{r:?}");
            assert!(r.interface == "front" || r.interface == "back", "{r:?}");
            assert!(r.avg_1min_ms > 0.0 && r.avg_1min_ms < 1000.0, "{r:?}");
            peers.insert(r.to);
        }
        assert_eq!(peers.len(), osds.len() - 1, "every peer of osd.0");
    });
}

#[test]
fn historic_ops_parse_and_split() {
    each(|d, _| {
        let raw = load(d, "dump_historic_ops_by_duration.json");
        let ops = parse_historic_ops(0, &raw).unwrap();
        let client_ops = raw["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| {
                o["description"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("osd_op("))
            })
            .count();
        assert!(client_ops > 0, "no client op captured");
        assert_eq!(ops.len(), client_ops);
        for op in &ops {
            let s = op
                .split()
                .unwrap_or_else(|| panic!("{op:?} does not split"));
            assert!(
                s.receive_ns + s.queue_ns + s.local_ns <= s.total_ns + 1.0,
                "{s:?}"
            );
            assert!(s.total_ns > 0.0);
        }
    });
}

#[test]
fn pool_settings_and_memory_target() {
    each(|d, exp| {
        let s = parse_pool_settings(
            &load(d, "osd_pool_get_all.json"),
            &load(d, "osd_crush_rule_dump.json"),
            &load(d, "osd_crush_tree.json"),
        )
        .unwrap();
        let pool = &exp["pool"];
        assert_eq!(s.name, pool["name"].as_str().unwrap());
        assert_eq!(s.id, u(pool, "id") as i64);
        assert_eq!(
            (s.size, s.min_size, s.pg_num),
            (
                u(pool, "size") as u32,
                u(pool, "min_size") as u32,
                u(pool, "pg_num") as u32
            )
        );
        assert_eq!(s.crush_rule, pool["crush_rule"].as_str().unwrap());
        let osds: Vec<i32> = exp["osds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_i64().unwrap() as i32)
            .collect();
        assert_eq!(s.osds, osds);
        assert_eq!(
            s.device_classes,
            vec!["hdd".to_string()],
            "file-backed OSDs"
        );
        let raw = std::fs::read(d.join("config_get_osd_memory_target.json")).unwrap();
        assert_eq!(parse_config_u64(&raw), Some(u(exp, "osd_memory_target")));
    });
}

/// `osd metadata` of every release (pacific 16.2, reef 18.2, tentacle 20.2):
/// each OSD's device parses, with what a file-backed bluestore OSD reports.
#[test]
fn osd_metadata_gives_each_osds_device() {
    let mut seen = Vec::new();
    for d in fixture_dirs() {
        let p = d.join("osd_metadata.json");
        if !p.exists() {
            continue;
        }
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let doc = load(&d, "osd_metadata.json");
        let n = doc.as_array().map_or(0, Vec::len);
        let classes = vec![(0, "hdd".to_string())];
        let devs = parse_devices(&doc, &classes);
        assert!(
            n > 0 && devs.len() == n,
            "{name}: {n} entries, {} parsed",
            devs.len()
        );
        for (id, o) in &devs {
            assert_eq!(
                o.objectstore.as_deref(),
                Some("bluestore"),
                "{name} osd.{id}"
            );
            assert_eq!(
                o.bdev_type.as_deref(),
                Some("hdd"),
                "{name} osd.{id}: a file"
            );
            assert_eq!(o.rotational, Some(true), "{name} osd.{id}");
            assert_eq!(o.model, None, "{name} osd.{id}: a file has no model");
            assert_eq!(
                (o.dedicated_db, o.dedicated_wal),
                (Some(false), Some(false)),
                "{name} osd.{id}"
            );
            assert!(
                o.summary()
                    .contains("bluestore on hdd, DB/WAL on the main device"),
                "{name} osd.{id}: {}",
                o.summary()
            );
        }
        assert_eq!(devs[0].1.class.as_deref(), Some("hdd"));
        seen.push(name);
    }
    for want in ["pacific", "reef", "tentacle"] {
        assert!(
            seen.iter().any(|s| s == want),
            "no {want} osd_metadata.json: {seen:?}"
        );
    }
}
