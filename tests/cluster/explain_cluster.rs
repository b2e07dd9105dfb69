//! The per-OSD view against the real cluster: cephbench's own object → PG
//! → primary mapping against the monitors' `osd map`, and its per-OSD
//! client counts against the OSDs' own perf counters.

use crate::common;

use cephbench::placement::{object_seed, stable_mod};
use cephbench::telemetry::cluster;
use common::{cephbench, connect, pool, serial, validate};
use serde_json::Value;

const POOL: &str = "cbt-explain";

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn local_mapping_matches_osd_map_for_hundreds_of_names() {
    let _g = serial();
    let p = pool(POOL);
    let rados = connect();
    let placement = cluster::placement(&rados, p).expect("placement");
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
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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
        // BlueStore's kv sync rounds: each round's flush and commit add up
        // to its sync time, so over the run the three counters have the same
        // count and the means add up (a swapped or mis-delta'd field shows).
        let kv = |k: &str| {
            let v = &c[k];
            (
                v["count"].as_u64().unwrap(),
                v["mean_ns"].as_f64().unwrap_or(0.0),
            )
        };
        let ((nf, flush), (nc, commit), (ns, sync)) =
            (kv("kv_flush_lat"), kv("kv_commit_lat"), kv("kv_sync_lat"));
        if client_ops > 0 {
            assert!(ns > 0, "osd.{}: writes but no kv sync round", o["osd"]);
        }
        assert_eq!((nf, nc), (ns, ns), "osd.{}: kv round counts", o["osd"]);
        assert!(
            ns == 0 || (flush + commit - sync).abs() <= 0.02 * sync,
            "osd.{}: kv flush {flush} + commit {commit} ns != sync {sync} ns",
            o["osd"]
        );
        // The drive behind it, as the CLI reports it.
        let id = o["osd"].as_i64().unwrap().to_string();
        let class = common::ceph(&["osd", "crush", "get-device-class", &format!("osd.{id}")]);
        let md: Value =
            serde_json::from_str(&common::ceph(&["osd", "metadata", &id, "-f", "json"])).unwrap();
        let d = &o["device"];
        assert_eq!(d["class"].as_str(), Some(class.trim()), "osd.{id}");
        assert_eq!(d["objectstore"], md["osd_objectstore"], "osd.{id}");
        assert_eq!(d["bdev_type"], md["bluestore_bdev_type"], "osd.{id}");
        assert_eq!(
            d["rotational"].as_bool(),
            Some(md["bluestore_bdev_rotational"] == "1"),
            "osd.{id}"
        );
        client_total += client_ops;
        osd_total += op_w;
    }
    assert_eq!(client_total, ops, "every op is attributed to one OSD");

    // The client's RTT to every serving OSD, at the address the mons list.
    let dump: Value = serde_json::from_str(&common::ceph(&["osd", "dump", "-f", "json"])).unwrap();
    // One TCP-connect row per OSD, and one ICMP row per OSD where raw
    // sockets are permitted (root: CI), none otherwise.
    let rtt = v["network"]["client_rtt"].as_array().unwrap();
    let count = |m: &str| rtt.iter().filter(|r| r["method"] == m).count();
    assert_eq!(count("tcp_connect"), osds.len(), "{rtt:?}");
    assert!([0, osds.len()].contains(&count("icmp_echo")), "{rtt:?}");
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
        // Loopback: well under a millisecond when idle, but never zero; a
        // loaded 2-core machine has shown single connects of 12 ms. A unit
        // slip (ms or s for µs) would still fail this.
        let mean = r["mean_us"].as_f64().unwrap();
        assert!(mean > 0.0 && mean < 50_000.0, "{r}");
    }
    assert!(osd_total >= ops && osd_total <= ops + 2 * osds.len() as u64);
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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

/// Runs its closure when dropped: undoes an injected fault even when the
/// test fails halfway.
struct Reset<F: Fn()>(F);
impl<F: Fn()> Drop for Reset<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

/// Sets `osd`'s injected dispatch delay: with probability `prob`, each
/// message sleeps `dur` seconds in `ms_fast_dispatch`.
fn dispatch_delay(osd: i64, prob: &str, dur: &str) {
    for (k, val) in [
        ("osd_debug_inject_dispatch_delay_duration", dur),
        ("osd_debug_inject_dispatch_delay_probability", prob),
    ] {
        common::ceph(&["tell", &format!("osd.{osd}"), "config", "set", k, val]);
    }
}

/// Sets how many recent ops every OSD keeps in its history (default 20):
/// the tail join finds only ops still there.
fn op_history(n: &str) {
    common::ceph(&["tell", "osd.*", "config", "set", "osd_op_history_size", n]);
}

/// `cephbench [global] rados write -p pool -b 4K [args]` in the background,
/// JSON on a pipe: for tests that act on the cluster while it runs.
fn spawn_write(pool: &str, global: &[&str], args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_cephbench"))
        .arg("-c")
        .arg(common::conf())
        .args(["--progress", "never", "--format", "json"])
        .args(global)
        .args(["rados", "write", "-p", pool, "-b", "4K"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A short QD1 4 KiB write run on `pool`, as JSON.
fn write_run(pool: &str, secs: &str) -> Value {
    write_run_with(pool, secs, &[])
}

fn write_run_with(pool: &str, secs: &str, extra: &[&str]) -> Value {
    write_run_bs(pool, "4K", secs, extra)
}

/// A QD1 write run of `bs` blocks on `pool` for `secs` after a 1 s ramp:
/// its validated JSON.
fn write_run_bs(pool: &str, bs: &str, secs: &str, extra: &[&str]) -> Value {
    write_run_qd(pool, bs, "1", secs, extra)
}

/// [`write_run_bs`] at `qd` ops in flight.
fn write_run_qd(pool: &str, bs: &str, qd: &str, secs: &str, extra: &[&str]) -> Value {
    let out = cephbench()
        .args([
            "--format",
            "json",
            "rados",
            "write",
            "-p",
            pool,
            "-b",
            bs,
            "-t",
            qd,
            "--duration",
            secs,
            "--ramp",
            "1",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    v
}

/// Share of `part` in an attribution object, ms.
fn share(a: &Value, part: &str) -> Option<f64> {
    a["shares"]
        .as_array()?
        .iter()
        .find(|s| s["part"] == part)
        .map(|s| s["ns"].as_f64().unwrap() / 1e6)
}

/// The shares of an attribution that lie inside the OSDs (all but the
/// public network and unattributed), ms: what the primary's own write
/// timer, op_w_latency, spans.
fn osd_side_ms(a: &Value) -> f64 {
    a["shares"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["part"] != "public_network" && s["part"] != "unattributed")
        .map(|s| s["ns"].as_f64().unwrap() / 1e6)
        .sum()
}

/// Each OSD with a write row: (the OSD's report, its write row).
fn write_rows(v: &Value) -> Vec<(&Value, &Value)> {
    v["osds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| {
            let row = o["client"]
                .as_array()?
                .iter()
                .find(|r| r["op"] == "write")?;
            Some((o, row))
        })
        .collect()
}

/// Per primary OSD: (client mean ms, attribution) of its write row.
fn osd_rows(v: &Value) -> Vec<(i64, f64, Value)> {
    write_rows(v)
        .into_iter()
        .map(|(o, row)| {
            (
                o["osd"].as_i64().unwrap(),
                row["mean_ns"].as_f64().unwrap() / 1e6,
                row["attribution"].clone(),
            )
        })
        .collect()
}

/// The drives a run's findings name as slow (the line saying every OSD is
/// slow and none stands out names none).
fn drive_verdict(v: &Value) -> Vec<String> {
    let Some(line) = v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|f| f.contains("WAL commit takes") && !f.contains("every OSD's"))
    else {
        return Vec::new();
    };
    let head = line.split(": ").next().unwrap();
    let mut osds: Vec<String> = head
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter(|w| w.starts_with("osd.") && w.len() > 4)
        .map(str::to_string)
        .collect();
    osds.sort();
    osds.dedup();
    osds
}

/// A verdict about a drive does not move with the job's block size: a
/// 4 KiB and a 4 MiB QD1 write on the same size-3 pool name the same drives
/// the same way (each is judged on its own WAL commit per kv sync round,
/// not on a share that carries the 4 MiB of data). At 4 MiB the client's
/// mean and the OSDs' timers agree (little unattributed), and the OSD queue
/// at QD1 (with nothing queued) is not the payload's receive time: the
/// counters' receive is held against the OSDs' own records of each op
/// (`--op-history`: header read → all read), a source the counters' split
/// does not use.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_drive_verdict_is_the_same_at_4k_and_4m() {
    let _g = serial();
    let p3 = common::pool_sized("cbt-explain-3", "rados", 3);
    let (small, large, records) = (
        write_run_bs(p3, "4K", "4", &[]),
        write_run_bs(p3, "4M", "4", &[]),
        write_run_bs(p3, "4M", "4", &["--op-history", "2000"]),
    );
    let (a, b) = (drive_verdict(&small), drive_verdict(&large));
    eprintln!(
        "4 KiB: {a:?}, 4 MiB: {b:?}\n{:#}\n{:#}",
        small["findings"], large["findings"]
    );
    assert_eq!(a, b, "the drive verdict moved with the block size");
    let job = &large["jobs"][0];
    let mean = job["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    let att = &job["attribution"];
    let un = share(att, "unattributed").unwrap();
    let queue = share(att, "osd_queue").unwrap();
    eprintln!("4 MiB QD1: mean {mean:.2} ms, unattributed {un:.2}, queue {queue:.2}");
    assert!(
        un.abs() < 0.2 * mean,
        "unattributed {un:.2} of {mean:.2} ms"
    );
    assert!(
        queue < 0.10 * mean,
        "queue {queue:.2} of {mean:.2} ms at QD1"
    );
    assert!(share(att, "cluster_network").is_some() && share(att, "replica").is_some());
    // The receive, two ways: the counters' (the public network less the
    // round trip) and the OSDs' records of each op.
    let notes = att["notes"].to_string();
    assert!(
        notes.contains("OSD's counters time apart from its op queue"),
        "{notes}"
    );
    let rec = &records["jobs"][0]["attribution"];
    assert!(rec["notes"].to_string().contains("--op-history"), "{rec}");
    let (public, public_rec) = (
        share(att, "public_network").unwrap(),
        share(rec, "public_network").unwrap(),
    );
    let queue_rec = share(rec, "osd_queue").unwrap();
    eprintln!(
        "4 MiB QD1 public network (round trip + receive): counters {public:.3} ms, \
         records {public_rec:.3} ms; queue {queue:.3} vs {queue_rec:.3} ms"
    );
    assert!(
        (public / public_rec - 1.0).abs() < 0.25,
        "receive from the counters {public:.3} ms, from the records {public_rec:.3} ms"
    );
    assert!(
        (queue - queue_rec).abs() < 0.05 * mean,
        "queue from the counters {queue:.3} ms, from the records {queue_rec:.3} ms"
    );
}

/// Another client writing to another pool on the same OSDs: the run says
/// its OSDs' means are shared (most of their client ops were not this
/// run's), and a run on a quiet cluster does not.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_background_writer_on_another_pool_is_named() {
    let _g = serial();
    let p = pool(POOL);
    let other = common::pool_sized("cbt-explain-bg", "rados", 1);
    let shared = |v: &Value| {
        v["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|f| f.starts_with("shared OSDs"))
            .map(str::to_string)
    };
    let quiet = write_run(p, "3");
    assert_eq!(shared(&quiet), None, "{:#}", quiet["findings"]);
    // rados itself, not under timeout(1): killing a timeout leaves its
    // child writing into the next tests.
    let mut bg = std::process::Command::new("rados")
        .arg("-c")
        .arg(common::conf())
        .args([
            "-p",
            other,
            "bench",
            "30",
            "write",
            "-b",
            "4096",
            "-t",
            "16",
            "--no-cleanup",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let busy = write_run(p, "3");
    let _ = bg.kill();
    let _ = bg.wait();
    let _ = common::rados(&["-p", other, "cleanup"]);
    let f =
        shared(&busy).unwrap_or_else(|| panic!("no shared-OSD finding: {:#}", busy["findings"]));
    eprintln!("{f}");
    assert!(f.contains("this run sent only osd."), "{f}");
}

/// Each OSD's `osd_op_history_size` and `osd_op_history_duration`, as the
/// OSDs themselves answer.
fn op_history_settings() -> Vec<String> {
    (0..3)
        .flat_map(|osd| {
            ["osd_op_history_size", "osd_op_history_duration"].map(|key| {
                common::ceph(&["tell", &format!("osd.{osd}"), "config", "get", key])
                    .split('"')
                    .nth(3)
                    .unwrap_or_default()
                    .to_string()
            })
        })
        .collect()
}

/// `--op-history`: each OSD's records of this run's own ops. On a quiet
/// size-3 pool they cover the run's ops, their OSD time matches the OSD's
/// own op_w_latency counter (no ramp, so both count the same ops), and the split takes its OSD-side shares from
/// them (still adding up to the mean). Beside a background writer on
/// another pool the records are still only this run's (the OSD counted far
/// more ops), and no op spent longer in the OSD than the client waited for
/// it. Both times the OSDs' history settings are put back.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn per_op_evidence_is_this_runs_ops_and_the_history_is_put_back() {
    let _g = serial();
    let p3 = common::pool_sized("cbt-explain-3", "rados", 3);
    let other = common::pool_sized("cbt-explain-bg", "rados", 1);
    let settings = op_history_settings();
    // (osd, client ops, client mean ms, evidence, OSD op_w count, op_w mean ms)
    let rows = |v: &Value| -> Vec<(i64, u64, f64, Value, u64, f64)> {
        write_rows(v)
            .into_iter()
            .map(|(o, row)| {
                let c = &o["counters"];
                (
                    o["osd"].as_i64().unwrap(),
                    row["ops"].as_u64().unwrap(),
                    row["mean_ns"].as_f64().unwrap() / 1e6,
                    row["evidence"].clone(),
                    c["op_w"].as_u64().unwrap(),
                    c["op_w_latency"]["mean_ns"].as_f64().unwrap() / 1e6,
                )
            })
            .collect()
    };
    let ev_ms = |e: &Value, k: &str| e[k].as_f64().unwrap() / 1e6;
    let quiet = write_run_with(p3, "3", &["--op-history", "5000", "--ramp", "0"]);
    assert_eq!(op_history_settings(), settings, "settings not put back");
    let a = &quiet["jobs"][0]["attribution"];
    let mean = quiet["jobs"][0]["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    assert!(a["notes"].to_string().contains("--op-history"), "{a}");
    // The split from the records against the OSDs' own write timer (their
    // counters, not the records): the primaries' op_w_latency, weighted by
    // their writes.
    let (n, sum) = rows(&quiet)
        .iter()
        .fold((0, 0.0), |(n, s), r| (n + r.4, s + r.4 as f64 * r.5));
    let (side, timer) = (osd_side_ms(a), sum / n as f64);
    assert!(
        (side - timer).abs() <= 0.1 * timer + 0.05 && side < mean,
        "OSD-side shares {side:.3} ms, op_w_latency {timer:.3} ms, client {mean:.3} ms: {a}"
    );
    let repl = share(a, "cluster_network").unwrap()
        + share(a, "messengers").unwrap_or(0.0)
        + share(a, "replica").unwrap();
    assert!(repl > 0.01, "size-3 write with no replication share: {a}");
    for (osd, ops, m, e, _, op_w_ms) in rows(&quiet) {
        let (n, split) = (e["ops"].as_u64().unwrap(), e["split_ops"].as_u64().unwrap());
        assert!(
            n <= ops + 2 && n * 10 >= ops * 7,
            "osd.{osd}: {ops} ops, {e}"
        );
        assert!(
            split * 10 >= n * 8,
            "osd.{osd}: wait split for {split} of {n}"
        );
        let osd_ms = ev_ms(&e, "osd_ns");
        eprintln!(
            "quiet osd.{osd}: {n} of {ops} ops recorded; OSD time {osd_ms:.3} ms (op_w_latency \
             {op_w_ms:.3}), client {m:.3} ms; {e}"
        );
        assert!(
            osd_ms < m,
            "osd.{osd}: OSD time {osd_ms} ms > client {m} ms"
        );
        assert!(
            (osd_ms - op_w_ms).abs() <= 0.1 * op_w_ms + 0.05,
            "osd.{osd}: records say {osd_ms:.3} ms in the OSD, its op_w_latency {op_w_ms:.3} ms"
        );
    }

    // rados itself, not under timeout(1): killing a timeout leaves its
    // child writing into the next tests.
    let mut bg = std::process::Command::new("rados")
        .arg("-c")
        .arg(common::conf())
        .args([
            "-p", other, "bench", "30", "write", "-b", "65536", "-t", "16",
        ])
        .args(["--no-cleanup"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let busy = write_run_with(p3, "3", &["--op-history", "5000"]);
    let _ = bg.kill();
    let _ = bg.wait();
    let _ = common::rados(&["-p", other, "cleanup"]);
    assert_eq!(op_history_settings(), settings, "settings not put back");
    let mut others = 0;
    for (osd, ops, m, e, op_w, op_w_ms) in rows(&busy) {
        let n = e["ops"].as_u64().unwrap();
        let osd_ms = ev_ms(&e, "osd_ns");
        eprintln!(
            "busy osd.{osd}: {n} of {ops} ops recorded (the OSD counted {op_w}); OSD time \
             {osd_ms:.3} ms (op_w_latency over every client's ops {op_w_ms:.3}), client {m:.3} ms"
        );
        assert!(
            n <= ops + 2 && n * 10 >= ops * 7,
            "osd.{osd}: {ops} ops, {e}"
        );
        assert!(
            osd_ms < m,
            "osd.{osd}: OSD time {osd_ms} ms > client {m} ms"
        );
        others += op_w.saturating_sub(ops);
    }
    assert!(
        others > 100,
        "the background writer's ops did not reach the OSDs"
    );
}

/// The split of a replicated write: every part the tool names is there,
/// the wait for the replicas is a real share on a size-3 pool (split into
/// cluster network and replica, never the unsplit `replication`) and none
/// on size 1, and
/// the OSD-side shares hold what the OSDs' own write timer (op_w_latency,
/// read by the test through `ceph tell`) measured, for the job and for
/// each primary's row, and the text report prints the JSON's shares.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_osd_side_shares_hold_the_osds_own_write_timer() {
    let _g = serial();
    let p3 = common::pool_sized("cbt-explain-3", "rados", 3);
    // The OSDs' own timer around the run, read outside cephbench; no
    // cleanup inside the window (a removal is a write to the OSD too).
    let before = common::osd_write_latency();
    let v = write_run_with(p3, "4", &["--no-cleanup", "--run-name", "osdside"]);
    let after = common::osd_write_latency();
    let out = cephbench()
        .args(["cleanup", "-p", p3, "--run-name", "osdside"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Per OSD: (its writes, their mean ms) over the run, ramp included.
    let timer: Vec<(i64, u64, f64)> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| {
            assert_eq!(a.0, b.0);
            let n = a.1 - b.1;
            (
                a.0,
                n,
                if n > 0 {
                    (a.2 - b.2) / n as f64 * 1e3
                } else {
                    0.0
                },
            )
        })
        .collect();
    let job = &v["jobs"][0];
    let mean = job["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    let a = &job["attribution"];
    assert_eq!(a["mean_ns"].as_f64().unwrap() / 1e6, mean);
    let n: u64 = timer.iter().map(|t| t.1).sum();
    let osds_mean = timer.iter().map(|t| t.1 as f64 * t.2).sum::<f64>() / n as f64;
    // The tool's counters cover the run without its 1 s ramp, the test's
    // the whole of it: 10 % and 0.05 ms of room for that.
    let near = |ours: f64, theirs: f64| (ours - theirs).abs() <= 0.1 * theirs + 0.05;
    let side = osd_side_ms(a);
    eprintln!(
        "client mean {mean:.3} ms; OSD-side shares {side:.3} ms; the OSDs' op_w_latency \
         {osds_mean:.3} ms over {n} writes; per OSD {timer:.3?}"
    );
    assert!(
        near(side, osds_mean) && side < mean,
        "OSD-side shares {side:.3} ms, the OSDs' own timer {osds_mean:.3} ms: {a}"
    );
    for part in [
        "public_network",
        "osd_queue",
        "osd_local",
        "device_flush",
        "cluster_network",
        "replica",
    ] {
        let s = share(a, part).unwrap_or_else(|| panic!("no {part} share in {a}"));
        assert!(s >= 0.0 && s < mean, "{part} = {s} ms of {mean} ms");
    }
    assert_eq!(share(a, "replication"), None, "the wait is split: {a}");
    let repl = share(a, "cluster_network").unwrap()
        + share(a, "messengers").unwrap_or(0.0)
        + share(a, "replica").unwrap();
    assert!(repl > 0.01, "size-3 write with no replication share: {a}");
    // This host reaches the OSDs' cluster addresses (127.0.1.x): the
    // cluster-network share is held to its echo there, within noise of 0 on
    // loopback (an echo takes ~0.01 ms; the OSDs' round trip 0.3–0.5 ms
    // here, which is the messengers' rest).
    let back = v["network"]["back_rtt"]
        .as_array()
        .expect("back round trips");
    assert_eq!(back.len(), 3, "{}", v["network"]);
    let slowest_echo = back
        .iter()
        .map(|r| r["min_us"].as_f64().unwrap() / 1e3)
        .fold(0.0, f64::max);
    let cable = share(a, "cluster_network").unwrap();
    assert!(
        cable <= slowest_echo + 1e-9 && cable <= 0.1,
        "loopback cluster-network share {cable} ms (echoes at most {slowest_echo} ms): {a}"
    );
    let msgr = share(a, "messengers").unwrap_or_else(|| panic!("no messengers share: {a}"));
    assert!(
        msgr > 0.0 && msgr < mean,
        "messengers {msgr} ms of {mean}: {a}"
    );
    // Per primary: its row's OSD side against that OSD's own timer.
    for (osd, _, a) in osd_rows(&v) {
        let (_, n, theirs) = *timer.iter().find(|t| t.0 == osd).unwrap();
        let ours = osd_side_ms(&a);
        assert!(
            n > 0 && near(ours, theirs),
            "osd.{osd}: OSD-side shares {ours:.3} ms, its own timer {theirs:.3} ms over {n} writes"
        );
    }
    // The text report prints the JSON's shares (3 decimals), one line each.
    let text = common::render_text(&v);
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Where the mean went"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("note:"))
        .collect();
    let mut printed: Vec<f64> = block
        .iter()
        .map(|l| {
            l.split_whitespace()
                .rev()
                .nth(3)
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .collect();
    let mut shares: Vec<f64> = a["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ns"].as_f64().unwrap() / 1e6)
        .collect();
    printed.sort_by(f64::total_cmp);
    shares.sort_by(f64::total_cmp);
    // One printed line per share (bluestore: the device flush among them).
    assert_eq!(printed.len(), shares.len(), "{block:?}");
    assert!(
        printed
            .iter()
            .zip(&shares)
            .all(|(p, s)| (p - s).abs() <= 0.0005),
        "printed {printed:?}, JSON {shares:?}"
    );

    let v1 = write_run(pool(POOL), "3");
    let a1 = &v1["jobs"][0]["attribution"];
    assert_eq!(share(a1, "cluster_network"), Some(0.0), "{a1}");
    assert_eq!(share(a1, "replica"), Some(0.0), "{a1}");

    // "No wait for copies": the size-3 runs (one before the size-1 run, one
    // after, so the host's drift is on both sides) projected without their
    // cluster-network and replica shares, against the size-1 pool on the
    // same three OSDs measured between them. The projection keeps the OSDs'
    // own work under the copies' load (each OSD takes three times the
    // writes), so a pool of one copy measures lower still: 0.64 against
    // 1.05 ms here (OSD local 0.16 against 0.29, device flush 0.35 against
    // 0.60 ms). It must never promise less than the one-copy pool gives.
    let v3 = write_run(p3, "4");
    // The size-1 pool once more after the second size-3 run: a loaded
    // moment of the shared cores only ever slows a run, and one took the
    // size-1 run to 3.23 ms (0.72 ms unattributed) between size-3 runs of
    // 2.83 and 3.68 ms; each side is judged on its faster run.
    let v1b = write_run(pool(POOL), "3");
    let project = |v: &Value| {
        let r: cephbench::result::BenchResult = serde_json::from_value(v.clone()).unwrap();
        cephbench::explain::whatif::without_copies(&r, &r.jobs[0])
            .map(|p| p.projected_mean_ns / 1e6)
            .unwrap_or_else(|| panic!("no projection: {}", v["jobs"][0]["attribution"]))
    };
    let mean_ms = |v: &Value| v["jobs"][0]["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    let projected = (project(&v) + project(&v3)) / 2.0;
    for (name, v) in [
        ("size 3", &v),
        ("size 1", &v1),
        ("size 3", &v3),
        ("size 1", &v1b),
    ] {
        let a = &v["jobs"][0]["attribution"]["shares"];
        let parts: Vec<String> = a
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{} {:.3}",
                    s["part"].as_str().unwrap(),
                    s["ns"].as_f64().unwrap() / 1e6
                )
            })
            .collect();
        eprintln!("{name}: {}", parts.join(", "));
    }
    // The OSDs' files are on the host's disk, whose flush moves between runs
    // (a CI run saw 1.83 ms in the size-1 run between 1.04 and 1.16 ms in
    // the size-3 runs): the disk's own time is held out of both sides, each
    // side's device-flush share from its OSDs' counters.
    let flush = |v: &Value| share(&v["jobs"][0]["attribution"], "device_flush").unwrap_or(0.0);
    let off_disk = |v: &Value| mean_ms(v) - flush(v);
    let projected_off_disk = projected - (flush(&v) + flush(&v3)) / 2.0;
    let one = mean_ms(&v1).min(mean_ms(&v1b));
    let one_off_disk = off_disk(&v1).min(off_disk(&v1b));
    eprintln!(
        "no wait for copies: size 3 {:.3} / {:.3} ms, projected {:.3} / {:.3} ms; size 1 \
         measured {one:.3} ms; without the device flush: projected {projected_off_disk:.3}, \
         size 1 {one_off_disk:.3} ms",
        mean_ms(&v),
        mean_ms(&v3),
        project(&v),
        project(&v3)
    );
    assert!(
        projected_off_disk >= 0.9 * one_off_disk,
        "projected {projected:.3} ms with no wait for copies ({projected_off_disk:.3} without \
         the device flush), below the size-1 pool's measured {one:.3} ms ({one_off_disk:.3})"
    );
}

/// A delay injected inside one OSD, after its messenger's receive stamp and
/// before its op queue hands the op to a PG (`osd_debug_inject_dispatch_delay_*`,
/// slept in `ms_fast_dispatch`): the client sees its ops on that OSD slow
/// down, and the tool must put that time in that OSD's queue share — not in
/// the network, not in the OSD-local work, not on the other OSDs.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn an_injected_osd_delay_lands_in_that_osds_queue_share() {
    let _g = serial();
    let p = pool(POOL);
    let target = 1;
    let set = |prob: &str, dur: &str| dispatch_delay(target, prob, dur);
    let _reset = Reset(|| set("0", "0.1"));
    let row = |rows: &[(i64, f64, Value)], osd| rows.iter().find(|r| r.0 == osd).cloned().unwrap();
    // A baseline taken while the 2 shared cores were starved (a compile next
    // door) shows queueing of its own; such a pair is measured again.
    let (before, after) = (0..3)
        .map(|attempt| {
            set("0", "0.1");
            let base = osd_rows(&write_run(p, "4"));
            set("1", "0.004");
            let slow = osd_rows(&write_run(p, "4"));
            let q0 = share(&row(&base, target).2, "osd_queue").unwrap();
            eprintln!("attempt {attempt}: baseline queue share of osd.{target} {q0:.3} ms");
            (base, slow, q0)
        })
        .find(|(_, _, q0)| *q0 < 1.0)
        .map(|(b, s, _)| (b, s))
        .expect("three baselines with over 1 ms of queueing: the machine is too busy");
    let (_, m0, a0) = row(&before, target);
    let (_, m1, a1) = row(&after, target);
    let seen = m1 - m0;
    let queue = share(&a1, "osd_queue").unwrap() - share(&a0, "osd_queue").unwrap();
    eprintln!("osd.{target}: client mean {m0:.3} -> {m1:.3} ms, queue share +{queue:.3} ms");
    assert!(
        seen >= 3.0,
        "the injected 4 ms did not reach the client: +{seen} ms"
    );
    assert!(
        (queue - seen).abs() <= 0.25 * seen,
        "queue share rose {queue:.3} ms, the client saw {seen:.3} ms"
    );
    // The sleep also slows the OSD's other messages (its commits' callbacks
    // among them), so OSD-local time may grow a little; the network must not.
    let d = share(&a1, "public_network").unwrap() - share(&a0, "public_network").unwrap();
    assert!(
        d.abs() < 0.5,
        "osd.{target} public network moved by {d:.3} ms"
    );
    let d = share(&a1, "osd_local").unwrap() - share(&a0, "osd_local").unwrap();
    assert!(
        d.abs() < 0.15 * seen,
        "osd.{target} OSD-local moved by {d:.3} ms of {seen:.3} ms"
    );
    for (osd, m, a) in after.iter().filter(|r| r.0 != target) {
        let (_, mb, ab) = row(&before, *osd);
        let dq = share(a, "osd_queue").unwrap() - share(&ab, "osd_queue").unwrap();
        assert!(
            dq.abs() < 1.0,
            "osd.{osd} queue moved by {dq:.3} ms ({mb:.3} -> {m:.3})"
        );
    }
}

/// The tail: 4 MiB writes, 16 in flight — the slowest ops this cluster has
/// seen lately, so each OSD keeps them in its history (its 20 slowest of
/// the last 10 minutes). The client's slowest ops must be found in their
/// primary's record, and the OSD's times must fit inside the client's.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_slowest_ops_are_joined_to_the_osds_records() {
    let _g = serial();
    let p = pool(POOL);
    // On a fresh cluster the slowest ops come first, and an OSD keeps only
    // its last 20: keep the whole run.
    let _reset = Reset(|| op_history("20"));
    op_history("2000");
    let out = cephbench()
        .args([
            "--format", "json", "rados", "write", "-p", p, "-b", "4M", "-t", "16",
        ])
        .args(["--duration", "3", "--ramp", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    let tail = v["tail"].as_array().expect("a tail section");
    assert_eq!(tail.len(), 10, "the 10 slowest ops: {tail:?}");
    let mut joined = 0;
    for t in tail {
        let client = t["latency_ns"].as_f64().unwrap() / 1e6;
        let osd = &t["osd"];
        if osd.is_null() {
            eprintln!("not in the OSD's history: {t}");
            continue;
        }
        joined += 1;
        let ms = |k: &str| osd[k].as_f64().unwrap() / 1e6;
        let inside = ms("receive_ns") + ms("queue_ns") + ms("local_ns");
        assert!(inside <= ms("total_ns") + 0.01, "{osd}");
        // The OSD's record ends at its "done" event, which it stamps when
        // the op is unregistered, after the reply is sent: an OSD thread
        // descheduled in between (2 cores shared with the client) can stamp
        // it after the client already had the reply. A wrongly joined op
        // would be off by far more than that slack.
        let slack = (0.02 * client).max(2.0);
        assert!(
            ms("total_ns") <= client + slack,
            "OSD {} ms > client {client} ms + {slack} ms",
            ms("total_ns")
        );
        let outside = t["outside_osd_ns"].as_f64().unwrap() / 1e6;
        assert!((outside - (client - ms("total_ns"))).abs() < 1e-6);
        // The OSD that recorded it is the one the tool mapped the object to.
        let primary = v["osds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["osd"] == osd["osd"] && o["client"][0]["ops"].as_u64() > Some(0));
        assert!(primary, "{t}");
    }
    assert!(
        joined >= 5,
        "only {joined} of the 10 slowest ops joined: {tail:?}"
    );
    let text = common::render_text(&v);
    assert!(text.contains("Slowest ops, joined"), "{text}");
    let hint = "not in the OSDs' history: each keeps its slowest osd_op_history_size";
    assert_eq!(text.contains(hint), joined < tail.len(), "{text}");

    // With a history of one op per OSD most of the slowest are gone, and
    // the report says so and how to keep more.
    op_history("1");
    let v = write_run_with(p, "2", &["-b", "4M", "-t", "16"]);
    let missing = v["tail"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["osd"].is_null())
        .count();
    assert!(missing >= 5, "{missing} of the slowest ops missing");
    let text = common::render_text(&v);
    assert!(
        text.contains(&format!("{missing} of 10 {hint}"))
            && text.contains("osd_op_history_size 1000"),
        "{text}"
    );
}

/// PGs that move during a run (an OSD marked out 2 s in, on a size-1
/// pool) are followed: the watcher sees the osdmap epoch change, re-reads
/// the placement and tags later ops with their new primary. The independent
/// check is each OSD's own `op_w` count: the client's per-OSD counts must
/// match them to within the ops of one poll period around each change,
/// where the placement read at the start would miss by every op sent to a
/// moved PG after the change (about a quarter of the run).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_placement_change_during_the_run_is_followed() {
    let _g = serial();
    let p = pool(POOL);
    let spawned = std::time::Instant::now();
    let child = spawn_write(p, &[], &["-t", "4", "--duration", "12"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let back_in = Reset(|| {
        common::ceph(&["osd", "in", "2"]);
    });
    common::ceph(&["osd", "out", "2"]);
    // When the mon had taken it, since the spawn (the run's clock starts
    // later): the `ceph` CLI itself takes seconds on a loaded machine.
    let out_ms = spawned.elapsed().as_millis() as u64;
    let out = child.wait_with_output().unwrap();
    drop(back_in);
    common::wait_clean();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    let w = v["warnings"].to_string();
    assert!(w.contains("osd.2 now up and out"), "{w}");
    assert!(
        w.contains("the placement changed during the run: re-read"),
        "{w}"
    );
    let refreshes = v["placement"]["refreshes"].as_array().unwrap();
    assert!(!refreshes.is_empty(), "{:#}", v["placement"]);
    let moved: u64 = refreshes.iter().map(|r| r["moved"].as_u64().unwrap()).sum();
    assert!(moved >= 1, "{refreshes:?}");
    let first_ms = refreshes[0]["t_ms"].as_u64().unwrap();
    // The watcher polls every second: the re-read follows the out within
    // that and its own reads (4 s of slack for a loaded machine).
    assert!(
        (1_500..out_ms + 4_000).contains(&first_ms),
        "the first re-read came {first_ms} ms after the start; osd.2 went out {out_ms} ms \
         after the spawn"
    );
    let total = v["jobs"][0]["ops"].as_u64().unwrap();
    let mut off = 0;
    let mut rows = Vec::new();
    for o in v["osds"].as_array().unwrap() {
        let client: u64 = o["client"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["op"] == "write")
            .map(|r| r["ops"].as_u64().unwrap())
            .sum();
        let osd = o["counters"]["op_w"].as_u64().unwrap();
        off += client.abs_diff(osd);
        rows.push((o["osd"].as_i64().unwrap(), client, osd));
    }
    assert!(
        (off as f64) < 0.08 * total as f64,
        "client per-OSD writes vs the OSDs' op_w (osd, client, OSD): {rows:?}, {off} of {total} apart"
    );
}

/// After pg_num grows, the local mapping still equals `osd map`.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn local_mapping_follows_a_pg_num_change() {
    let _g = serial();
    let p = common::pool_sized("cbt-explain-pgnum", "rados", 1);
    common::ceph(&["osd", "pool", "set", p, "pg_num", "32"]);
    let rados = connect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let placement = loop {
        let pl = cluster::placement(&rados, p).expect("placement");
        if pl.pg_num == 32 && pl.acting.iter().all(|a| !a.is_empty()) {
            break pl;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "pg_num still {}",
            pl.pg_num
        );
        std::thread::sleep(std::time::Duration::from_secs(1));
    };
    common::wait_clean();
    for i in 0..300 {
        let name = format!("cephbench_data.pg.{i}");
        let cmd = serde_json::json!({
            "prefix": "osd map", "pool": p, "object": name, "format": "json"
        });
        let out = rados.mon_command(&cmd.to_string()).expect("osd map");
        let v: Value = serde_json::from_slice(&out.out).unwrap();
        let pgid = v["pgid"].as_str().unwrap();
        let pg = u32::from_str_radix(pgid.split_once('.').unwrap().1, 16).unwrap();
        assert_eq!(placement.pg_of("", &name), pg, "pg of {name}");
    }
}

/// The counter timeline: sampled every second during the run, it must show
/// a delay injected into one OSD halfway through — low before, high after,
/// on that OSD only — and its intervals must add up to the whole window.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_counter_timeline_shows_a_delay_injected_mid_run() {
    let _g = serial();
    let p = pool(POOL);
    let target = 1;
    let set = |prob: &str, dur: &str| dispatch_delay(target, prob, dur);
    let _reset = Reset(|| set("0", "0.1"));
    let child = spawn_write(
        p,
        &["--counter-interval", "1s"],
        &["-t", "1", "--duration", "12", "--ramp", "0"],
    );
    let spawned = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_secs(4));
    set("1", "0.004");
    let injected = spawned.elapsed().as_secs_f64();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    // t_s is on the job's clock (from its start, a little after the
    // spawn); the first interval began when the counters were first read,
    // just before the job.
    let mut seen = Vec::new();
    for o in v["osds"].as_array().unwrap() {
        let osd = o["osd"].as_i64().unwrap();
        let tl = o["timeline"].as_array().expect("a counter timeline");
        assert!(tl.len() >= 10, "osd.{osd}: {} points", tl.len());
        let first = tl[0]["t_s"].as_f64().unwrap() - tl[0]["interval_s"].as_f64().unwrap();
        assert!((-2.0..=0.0).contains(&first), "first read at {first} s");
        let mut prev = first;
        for s in tl {
            let t = s["t_s"].as_f64().unwrap();
            let i = s["interval_s"].as_f64().unwrap();
            assert!((t - i - prev).abs() < 1e-6, "contiguous: {s}");
            assert!(i < 1.6, "sampled every second: {s}");
            prev = t;
        }
        let sum: u64 = tl.iter().map(|s| s["op_w"].as_u64().unwrap()).sum();
        assert_eq!(
            Some(sum),
            o["counters"]["op_w"].as_u64(),
            "osd.{osd}: the intervals add up to the window"
        );
        let mean = |early: bool| {
            let (mut n, mut ns) = (0u64, 0.0);
            for s in tl {
                let (t, i) = (
                    s["t_s"].as_f64().unwrap(),
                    s["interval_s"].as_f64().unwrap(),
                );
                let take = if early {
                    t <= injected - 1.5
                } else {
                    t - i >= injected + 0.5
                };
                let l = &s["op_w_latency"];
                if take && l["count"].as_u64().unwrap_or(0) > 0 {
                    let c = l["count"].as_u64().unwrap();
                    n += c;
                    ns += c as f64 * l["mean_ns"].as_f64().unwrap();
                }
            }
            assert!(
                n > 0,
                "osd.{osd}: no writes {}",
                if early { "before" } else { "after" }
            );
            ns / n as f64 / 1e6
        };
        let (before, after) = (mean(true), mean(false));
        eprintln!("osd.{osd}: op_w {before:.3} ms before, {after:.3} ms after the injection");
        seen.push((osd, after - before));
    }
    // Other load on the 2 shared cores moves every OSD alike; the injected
    // delay moves only the target, by several times the 4 ms slept.
    let rise = |o| seen.iter().find(|s| s.0 == o).unwrap().1;
    assert!(
        rise(target) >= 3.0,
        "osd.{target}: the injected 4 ms show as +{:.3} ms",
        rise(target)
    );
    for (osd, r) in seen.iter().filter(|s| s.0 != target) {
        assert!(
            rise(target) - r >= 3.0,
            "osd.{osd} moved by {r:.3} ms, the target by {:.3} ms",
            rise(target)
        );
    }
}

/// `ceph osd perf` as the mgr serves it: the row cephbench stores for each
/// OSD must be one the `ceph` CLI printed while the run ended. The mgr
/// replaces its rows every few seconds, so the test keeps reading them
/// (about once a second) until cephbench has exited, and the stored value
/// must be one of those seen, to the nanosecond.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_mgr_osd_perf_rows_match_the_ceph_cli() {
    let _g = serial();
    let p = pool(POOL);
    let mut child = spawn_write(p, &[], &["-t", "1", "--duration", "5", "--ramp", "0"]);
    // (osd id, (commit ns, apply ns)) as the CLI printed them while the run went on.
    let mut seen: Vec<(Value, (u64, u64))> = Vec::new();
    let read_cli = |seen: &mut Vec<(Value, (u64, u64))>| {
        let cli: Value =
            serde_json::from_str(&common::ceph(&["osd", "perf", "-f", "json"])).unwrap();
        for r in cli["osdstats"]["osd_perf_infos"].as_array().unwrap() {
            let s = &r["perf_stats"];
            let ns = |k: &str| s[k].as_u64().unwrap();
            seen.push((
                r["id"].clone(),
                (ns("commit_latency_ns"), ns("apply_latency_ns")),
            ));
        }
    };
    while child.try_wait().unwrap().is_none() {
        read_cli(&mut seen);
    }
    read_cli(&mut seen);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    let osds = v["osds"].as_array().unwrap();
    assert!(!osds.is_empty());
    for o in osds {
        let m = &o["mgr_perf"];
        assert!(m.is_object(), "no osd perf row for {}", o["osd"]);
        let ours = (
            m["commit_latency_ns"].as_u64().unwrap(),
            m["apply_latency_ns"].as_u64().unwrap(),
        );
        assert_eq!(
            m["commit_latency_ms"].as_u64().unwrap(),
            ours.0 / 1_000_000,
            "whole ms as the CLI prints them"
        );
        assert_eq!(m["apply_latency_ms"].as_u64().unwrap(), ours.1 / 1_000_000);
        let theirs: Vec<(u64, u64)> = seen
            .iter()
            .filter(|(id, _)| *id == o["osd"])
            .map(|x| x.1)
            .collect();
        eprintln!(
            "osd.{}: cephbench (commit, apply) {ours:?} ns; the CLI showed {theirs:?}",
            o["osd"]
        );
        assert!(
            theirs.contains(&ours),
            "osd.{}: cephbench stored (commit, apply) {ours:?} ns, the CLI showed {theirs:?}",
            o["osd"]
        );
    }
    assert!(common::render_text(&v).contains("`ceph osd perf` after the run"));
}

/// The tail split against a delay of known size and place: with a 4 ms
/// sleep injected into one OSD's dispatch (after the messenger has read the
/// op, before its PG starts it), the client's slowest ops are on that OSD,
/// are found in its history, and each shows the sleep in its `queue` part —
/// not in receive, not in local work.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_tail_split_shows_an_injected_dispatch_delay_as_queueing() {
    let _g = serial();
    let p = pool(POOL);
    let target = 1;
    let _reset = Reset(|| {
        dispatch_delay(target, "0", "0.1");
        op_history("20");
    });
    // Keep every op of the run in the OSDs' history (by default their last 20).
    op_history("2000");
    let tail = |v: &Value| -> Vec<Value> {
        v["tail"]
            .as_array()
            .expect("a tail section")
            .iter()
            .filter(|t| !t["osd"].is_null())
            .cloned()
            .collect()
    };
    let median_queue = |t: &[Value]| {
        let mut q: Vec<f64> = t
            .iter()
            .map(|t| t["osd"]["queue_ns"].as_f64().unwrap() / 1e6)
            .collect();
        q.sort_by(f64::total_cmp);
        q[q.len() / 2]
    };
    let base = tail(&write_run(p, "3"));
    assert!(
        base.len() >= 5,
        "only {} joined without a delay",
        base.len()
    );
    dispatch_delay(target, "1", "0.004");
    let slow = tail(&write_run(p, "3"));
    assert!(
        slow.len() >= 8,
        "only {} of 10 joined: {slow:?}",
        slow.len()
    );
    // On a loaded machine a client-side hiccup (tens of ms spent outside
    // every OSD, which the split itself reports as `outside_osd_ns`) can put
    // an op of another OSD among the slowest: judge the ops whose time went
    // mostly into an OSD.
    let at_osd: Vec<&Value> = slow
        .iter()
        .filter(|t| {
            t["outside_osd_ns"].as_f64().unwrap_or(0.0) < t["osd"]["total_ns"].as_f64().unwrap()
        })
        .collect();
    assert!(
        at_osd.len() >= 5,
        "only {} of the slowest ops spent most of their time in an OSD: {slow:?}",
        at_osd.len()
    );
    // A loaded machine can also stall another OSD's BlueStore commit for
    // tens of ms: such an op may be among the slowest too, but its time
    // must be local work, never queueing — the sleep shows on its OSD only.
    let on_target = at_osd
        .iter()
        .filter(|t| t["osd"]["osd"].as_i64() == Some(target))
        .count();
    assert!(
        on_target * 2 > at_osd.len(),
        "only {on_target} of {} slowest ops on osd.{target}: {slow:?}",
        at_osd.len()
    );
    for t in at_osd {
        let o = &t["osd"];
        let ms = |k: &str| o[k].as_f64().unwrap() / 1e6;
        if o["osd"].as_i64() == Some(target) {
            assert!(ms("queue_ns") >= 3.5, "the 4 ms sleep is not in queue: {o}");
            // The sleep runs in the messenger's thread: an op read while it
            // slept for the one before waits in receive too, but less.
            assert!(
                ms("receive_ns") < ms("queue_ns"),
                "the sleep landed in receive: {o}"
            );
        } else {
            assert!(
                ms("queue_ns") < 3.5 && ms("local_ns") > ms("queue_ns"),
                "queueing on an OSD without the sleep: {t}"
            );
        }
    }
    let (q0, q1) = (median_queue(&base), median_queue(&slow));
    eprintln!("median queue part of the slowest ops: {q0:.3} ms -> {q1:.3} ms");
    assert!(q1 - q0 >= 3.0, "queue part rose only {:.3} ms", q1 - q0);
}

/// An erasure-coded pool (k=2, m=1, failure domain osd) is described as it
/// is, by its profile (checked against `ceph osd erasure-code-profile
/// get`), not as "size 3"; its split keeps the wait for the other shards
/// as one share and says why (Ceph counts no per-op latency for EC
/// sub-writes), never blaming caps the run had; the shares and
/// unattributed add up to the mean; a `seq` run reads every object back.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn an_erasure_coded_pool_is_described_and_split_as_it_is() {
    let _g = serial();
    let pool = common::ec_pool("cbt-ec21", "rados", false);
    // A run left by an earlier, failed attempt.
    let _ = cephbench()
        .args(["cleanup", "-p", pool, "--run-name", "ec"])
        .output();
    let profile = common::ec_profile();
    let v = write_run_with(pool, "3", &["--no-cleanup", "--run-name", "ec"]);
    let e = &v["pool"]["erasure"];
    assert_eq!(
        e["k"].to_string(),
        format!("{}", profile["k"].as_str().unwrap())
    );
    assert_eq!(
        e["m"].to_string(),
        format!("{}", profile["m"].as_str().unwrap())
    );
    assert_eq!(e["plugin"], profile["plugin"]);
    assert_eq!(e["failure_domain"], profile["crush-failure-domain"]);
    assert_eq!(e["allow_ec_overwrites"], false);
    // The mons' stripe_width over k.
    let width = common::pool_detail(pool)["stripe_width"].as_u64().unwrap();
    assert_eq!(e["stripe_unit"].as_u64().unwrap(), width / 2);
    let text = common::render_text(&v);
    assert!(
        text.contains("pool: erasure 2+1 (jerasure") && text.contains("usable 67 %"),
        "{text}"
    );
    let job = &v["jobs"][0];
    let a = &job["attribution"];
    let notes = a["notes"].to_string();
    assert!(notes.contains("erasure-coded pool"), "{notes}");
    assert!(!notes.contains("were not read"), "{notes}");
    let findings = v["findings"].to_string();
    assert!(!findings.contains("allow *"), "{findings}");
    // Two independent clocks agree: the client's mean less the round trip
    // and the primaries' own op_w timers (the OSD side of the split) leave
    // little that neither timed.
    let mean = job["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    let (un, osd) = (share(a, "unattributed").unwrap(), osd_side_ms(a));
    eprintln!("EC 2+1 QD1: client mean {mean:.3} ms, OSD side {osd:.3}, unattributed {un:.3}");
    // (14 % here: the client's own time and its messenger's.)
    assert!(osd > 0.5 * mean && un.abs() < 0.3 * mean, "{a}");
    // Each OSD's shard work: an EC write commits one BlueStore transaction
    // on each of its k + m shards, the primary's own being its client
    // write's; the others are in no op counter. With no other write behind
    // it (QD1) the primary then sends every shard, itself included, an
    // empty sub-write to roll the log forward (`ECBackend::try_finish_rmw`,
    // "submit a dummy transaction to kick the rollforward"). Over the OSDs
    // the transactions beyond their client writes are therefore
    // (k + m − 1) + (k + m) = 5 per client write the OSDs counted (a few of
    // the OSDs' own besides), and the text's per-OSD rows show them.
    let osds = v["osds"].as_array().unwrap();
    let count = |o: &Value, k: &str| o["counters"][k].as_u64().unwrap_or(0);
    let op_w: u64 = osds.iter().map(|o| count(o, "op_w")).sum();
    let shard_w: u64 = osds
        .iter()
        .map(|o| {
            let txc = o["counters"]["commit_lat"]["count"].as_u64().unwrap();
            txc.saturating_sub(count(o, "op_w") + count(o, "subop_w"))
        })
        .sum();
    let want = 5 * op_w;
    eprintln!("EC 2+1: {op_w} client writes, {shard_w} shard writes beside them (want {want})");
    assert!(op_w > 100, "{op_w}");
    assert!(
        shard_w.abs_diff(want) as f64 <= 0.05 * want as f64 + 10.0,
        "{shard_w} shard writes for {op_w} client writes"
    );
    let header = text
        .lines()
        .find(|l| l.trim_start().starts_with("osd ") && l.contains("kv_sync"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains(" kv_sync shard_w OSD ops"), "{header}");
    let printed: u64 = text
        .lines()
        .filter(|l| l.trim_start().starts_with("osd.") && l.contains(" | "))
        .map(|l| {
            l.split_whitespace()
                .rev()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(printed, shard_w, "{text}");
    let seq = common::bench_json(&["rados", "seq", "-p", pool, "--run-name", "ec"]);
    // Every object the write left (its ramp's too), as `rados ls` lists them.
    let objects = common::ok(common::rados(&["-p", pool, "ls"]), "rados ls");
    let written = objects
        .lines()
        .filter(|l| l.starts_with("cephbench_data.ec."))
        .count();
    assert_eq!(seq["jobs"][0]["ops"].as_u64(), Some(written as u64));
    assert_eq!(seq["jobs"][0]["errors"], 0);
    assert_eq!(seq["jobs"][0]["verify_mismatches"], 0);
    // Random reads of the same objects: each read placed on the primary
    // the pool's map gives, as each OSD's own op_r counts them.
    let rand = common::bench_json(&["rados", "rand", "-p", pool, "--run-name", "ec", "-d", "2s"]);
    let job = &rand["jobs"][0];
    assert_eq!(job["errors"], 0);
    assert_eq!(job["verify_mismatches"], 0);
    let ops = job["ops"].as_u64().unwrap();
    assert!(ops > 0);
    assert_eq!(common::osd_counted_reads(&rand), ops);
    let _ = cephbench()
        .args(["cleanup", "-p", pool, "--run-name", "ec"])
        .output();
}

/// osd.N's pid from the throwaway cluster's pid file (`DIR/run/osd.N.pid`,
/// DIR holding the test's ceph.conf): found apart from cephbench's way.
fn osd_pid(osd: i64) -> u32 {
    let dir = common::conf().parent().unwrap().join("run");
    let p = dir.join(format!("osd.{osd}.pid"));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .trim()
        .parse()
        .unwrap()
}

/// `pidstat -h -H -u -p PIDS 1` rows: (epoch second at the row's end, pid,
/// %CPU).
fn pidstat_rows(text: &str) -> Vec<(f64, u32, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("Linux"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Time UID PID %usr %system %guest %wait %CPU CPU Command
            if f.len() < 10 {
                return None;
            }
            Some((f[0].parse().ok()?, f[2].parse().ok()?, f[7].parse().ok()?))
        })
        .collect()
}

/// Puts one process (every thread) in a cgroup of its own with a CPU quota
/// (v1 `cpu.cfs_quota_us` where the `cpu` controller is mounted at
/// /sys/fs/cgroup/cpu, else v2 `cpu.max`), and back where it was on drop,
/// however the test ends.
struct CpuCap {
    dir: std::path::PathBuf,
    back: std::path::PathBuf,
    pid: u32,
}

impl CpuCap {
    fn new(pid: u32, cores: f64) -> CpuCap {
        let quota = (cores * 100_000.0) as u64;
        let v1 = std::path::Path::new("/sys/fs/cgroup/cpu");
        let (dir, back) = if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(format!("cbt-osdcpu-{pid}"));
            let _ = std::fs::create_dir(&dir);
            std::fs::write(dir.join("cpu.cfs_period_us"), "100000").unwrap();
            std::fs::write(dir.join("cpu.cfs_quota_us"), quota.to_string()).unwrap();
            (dir, v1.to_path_buf())
        } else {
            let root = std::path::Path::new("/sys/fs/cgroup");
            let now = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
            let path = now
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .expect("a cgroup v2 path");
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
            let dir = root.join(format!("cbt-osdcpu-{pid}"));
            let _ = std::fs::create_dir(&dir);
            std::fs::write(dir.join("cpu.max"), format!("{quota} 100000")).unwrap();
            (dir, root.join(path.trim_start_matches('/')))
        };
        std::fs::write(dir.join("cgroup.procs"), pid.to_string()).unwrap();
        CpuCap { dir, back, pid }
    }
}

impl Drop for CpuCap {
    fn drop(&mut self) {
        let _ = std::fs::write(self.back.join("cgroup.procs"), self.pid.to_string());
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Each OSD's CPU as cephbench measures it matches pidstat's over the same
/// window within 10 %, and nothing is named CPU-bound; with osd.1 held to a
/// fifth of a core by a cgroup, osd.1 is named CPU-bound (its quota) and
/// the others are not.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn osd_cpu_matches_pidstat_and_a_capped_osd_is_cpu_bound() {
    let _g = serial();
    let p3 = common::pool_sized("cbt-explain-3", "rados", 3);
    let pids: Vec<u32> = (0..3).map(osd_pid).collect();
    let list = pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut pidstat = std::process::Command::new("pidstat")
        .args(["-h", "-H", "-u", "-p", &list, "1"])
        .env("LC_ALL", "C")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("pidstat (package sysstat) on PATH");
    let v = write_run_qd(p3, "4K", "4", "8", &[]);
    pidstat.kill().unwrap();
    let out = pidstat.wait_with_output().unwrap();
    let rows = pidstat_rows(&String::from_utf8_lossy(&out.stdout));
    for o in v["osds"].as_array().unwrap() {
        let id = o["osd"].as_i64().unwrap();
        let c = &o["cpu"];
        assert_eq!(
            c["pid"].as_u64(),
            Some(u64::from(pids[id as usize])),
            "osd.{id}: {c}"
        );
        let (start, window) = (
            c["window_start_unix"].as_f64().unwrap(),
            c["window_s"].as_f64().unwrap(),
        );
        let ours = c["cores_busy"].as_f64().unwrap();
        // pidstat's rows whose second lies wholly inside the window (a row
        // printed at T covers about T-1+f .. T+f, f unknown).
        let inside: Vec<f64> = rows
            .iter()
            .filter(|(t, p, _)| {
                *p == pids[id as usize] && *t - 1.0 >= start && *t + 1.0 <= start + window
            })
            .map(|(_, _, cpu)| cpu / 100.0)
            .collect();
        assert!(inside.len() >= 5, "osd.{id}: {rows:?} in {start}+{window}");
        let theirs = inside.iter().sum::<f64>() / inside.len() as f64;
        eprintln!(
            "osd.{id}: cephbench {ours:.3} cores ({:.2} s over {window:.2} s, {:.0} µs per client \
             op, {:.0} µs per OSD op), pidstat {theirs:.3} cores over {} s",
            c["cpu_s"].as_f64().unwrap(),
            c["us_per_client_op"].as_f64().unwrap(),
            c["us_per_osd_op"].as_f64().unwrap(),
            inside.len()
        );
        assert!(
            (ours - theirs).abs() <= 0.1 * theirs,
            "osd.{id}: cephbench {ours:.3} cores, pidstat {theirs:.3}"
        );
        // The per-interval series adds up to the counters' window's CPU
        // (both are differences of the same readings).
        let series: f64 = o["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["cpu_s"].as_f64().unwrap())
            .sum();
        let whole = c["counters_cpu_s"].as_f64().unwrap();
        assert!(
            (series - whole).abs() < 1e-6,
            "osd.{id}: {series} vs {whole}"
        );
        // Not CPU-bound on an unrestricted OSD: only where the CPUs it may
        // run on were saturated by this host's other work (then it is).
        let saturated =
            c["allowed_cpus_busy"].as_f64().unwrap() >= 0.9 * c["allowed_cpus"].as_f64().unwrap();
        assert!(
            c["cpu_bound"] != true || saturated,
            "osd.{id} named CPU-bound on a quiet host: {c}"
        );
    }
    let capped = {
        let _cap = CpuCap::new(pids[1], 0.2);
        write_run_qd(p3, "4K", "16", "5", &[])
    };
    let text = common::render_text(&capped);
    for o in capped["osds"].as_array().unwrap() {
        let (id, c) = (o["osd"].as_i64().unwrap(), &o["cpu"]);
        eprintln!("capped run, osd.{id}: {c}");
        if id == 1 {
            assert_eq!(c["quota_cores"].as_f64(), Some(0.2), "{c}");
            assert_eq!(c["cpu_bound"], true, "{c}");
        } else {
            let saturated = c["allowed_cpus_busy"].as_f64().unwrap()
                >= 0.9 * c["allowed_cpus"].as_f64().unwrap();
            assert!(c["cpu_bound"] != true || saturated, "osd.{id}: {c}");
        }
    }
    let line = capped["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|f| f.starts_with("osd.1 used"))
        .unwrap_or_else(|| panic!("no CPU finding for osd.1: {}", capped["findings"]));
    eprintln!("capped run: finding: {line}");
    // Its flush timers hold its kv sync thread's wait for CPU: its drive is
    // not named slow on them.
    assert!(
        !capped["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .any(|f| f.starts_with("osd.1 (class") && f.contains("device flush")),
        "{}",
        capped["findings"]
    );
    assert!(
        line.contains("0.20 cores it may use (its cgroup's CPU quota")
            && line.contains("CPU-bound"),
        "{line}"
    );
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&text).contains(&words(line)), "{text}");
}
