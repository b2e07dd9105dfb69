//! The per-OSD view against the real cluster: cephbench's own object → PG
//! → primary mapping against the monitors' `osd map`, and its per-OSD
//! client counts against the OSDs' own perf counters.

mod common;

use cephbench::placement::{object_seed, stable_mod};
use cephbench::probe;
use common::{cephbench, connect, pool, serial, validate};
use serde_json::Value;

const POOL: &str = "cbt-explain";

#[test]
fn local_mapping_matches_osd_map_for_hundreds_of_names() {
    let _g = serial();
    let p = pool(POOL);
    let rados = connect();
    let placement = probe::placement(&rados, p).expect("placement");
    assert_eq!(placement.pg_num, 16);
    let mut checked = 0;
    for i in 0..300 {
        let (ns, name) = match i % 3 {
            0 => (String::new(), format!("cephbench_data.default.{i}")),
            1 => (String::new(), format!("rbd_data.5e1f2a3b4c.{i:016x}")),
            _ => (format!("tenant{}", i % 7), format!("obj-{i}")),
        };
        let cmd = serde_json::json!({
            "prefix": "osd map", "pool": p, "object": name, "nspace": ns, "format": "json"
        });
        let out = rados.mon_command(&cmd.to_string()).expect("osd map");
        let v: Value = serde_json::from_slice(&out.out).unwrap();
        let raw = v["raw_pgid"].as_str().unwrap();
        let seed = u32::from_str_radix(raw.split_once('.').unwrap().1, 16).unwrap();
        assert_eq!(object_seed(&ns, &name), seed, "hash of {ns:?}/{name:?}");
        let pgid = v["pgid"].as_str().unwrap();
        let pg = u32::from_str_radix(pgid.split_once('.').unwrap().1, 16).unwrap();
        assert_eq!(stable_mod(seed, placement.pg_num), pg, "pg of {name}");
        assert_eq!(
            placement.primary_of(&ns, &name).map(i64::from),
            v["acting_primary"].as_i64(),
            "primary of {name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 300);
}

/// On a size-1 pool each write touches exactly one OSD, its primary: the
/// client's per-OSD op counts (from cephbench's own placement) must equal
/// each OSD's `op_w` delta from its perf counters, and no OSD can report a
/// longer mean write latency than the client that waited for it.
#[test]
fn per_osd_counts_match_the_osds_own_counters() {
    let _g = serial();
    let p = pool(POOL);
    let ops = 600;
    let out = cephbench()
        .args([
            "--format",
            "json",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "-t",
            "8",
            "--ops",
            &ops.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    assert_eq!(v["jobs"][0]["ops"], ops);
    assert!(v["placement"]["pg_num"].as_u64().unwrap() == 16);
    let osds = v["osds"].as_array().unwrap();
    assert!(!osds.is_empty(), "per-OSD rows: {v:#}");
    let mut client_total = 0;
    let mut osd_total = 0;
    for o in osds {
        let client_ops = o["client"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["op"] == "write")
            .map(|r| r["ops"].as_u64().unwrap())
            .sum::<u64>();
        let c = &o["counters"];
        assert_eq!(c["reset"], false);
        let op_w = c["op_w"].as_u64().unwrap();
        // The mgr may write a stray object (device health) meanwhile: allow 2.
        assert!(
            op_w >= client_ops && op_w <= client_ops + 2,
            "osd.{}: client sent {client_ops} writes, the OSD counted {op_w}",
            o["osd"]
        );
        if client_ops > 20 {
            let client_mean = o["client"][0]["mean_ns"].as_f64().unwrap();
            let osd_mean = c["op_w_latency"]["mean_ns"].as_f64().unwrap();
            assert!(osd_mean > 0.0);
            assert!(
                osd_mean <= client_mean,
                "osd.{}: OSD op_w {osd_mean} ns > client {client_mean} ns",
                o["osd"]
            );
        }
        client_total += client_ops;
        osd_total += op_w;
    }
    assert_eq!(client_total, ops, "every op is attributed to one OSD");

    // The client's RTT to every serving OSD, at the address the mons list.
    let dump: Value = serde_json::from_str(&common::ceph(&["osd", "dump", "-f", "json"])).unwrap();
    let rtt = v["network"]["client_rtt"].as_array().unwrap();
    assert_eq!(rtt.len(), osds.len(), "{rtt:?}");
    for r in rtt {
        let id = r["osd"].as_i64().unwrap();
        let listed = dump["osds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["osd"].as_i64() == Some(id))
            .unwrap();
        assert!(
            listed["public_addrs"]
                .to_string()
                .contains(r["addr"].as_str().unwrap()),
            "{r} vs {listed}"
        );
        assert!(r["samples"].as_u64().unwrap() >= 1, "{r}");
        assert_eq!(r["failures"], 0);
        // Loopback: well under a millisecond, but never zero.
        let mean = r["mean_us"].as_f64().unwrap();
        assert!(mean > 0.0 && mean < 5_000.0, "{r}");
    }
    assert!(osd_total >= ops && osd_total <= ops + 2 * osds.len() as u64);
}

#[test]
fn no_telemetry_means_no_probes() {
    let _g = serial();
    let p = pool(POOL);
    let out = cephbench()
        .args([
            "--format",
            "json",
            "--no-telemetry",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "--ops",
            "50",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["osds"], serde_json::json!([]));
    assert_eq!(v["placement"], Value::Null);
}
