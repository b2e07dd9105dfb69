//! Against the real cluster: was the cluster quiet (`noout` and a deep
//! scrub during a run, in text and JSON; `--require-quiet`), and cold reads
//! (`--drop-caches`). Each figure printed is checked against what the test
//! reads itself (`ceph health`, `ceph pg dump`, the OSD's own counters).

use crate::common;

use std::time::{Duration, Instant};

use common::{ceph, cephbench, conf, serial};
use serde_json::Value;

const POOL: &str = "cbquiet";
const RUN: &str = "quiet";
/// Objects the deep scrub goes through, `CHUNK` at a time with
/// `SLEEP` seconds between chunks: about 40 s of scrubbing (cut short at
/// the end by removing the sleep and the pool).
const OBJECTS: u64 = 40;
const CHUNK: &str = "1";
const SLEEP: &str = "1";

/// Puts the cluster back however the test ends: `noout` unset, the scrub
/// settings removed, the pool removed (its scrub with it).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let quiet = |args: &[&str]| {
            let _ = std::process::Command::new("timeout")
                .arg("60")
                .arg("ceph")
                .arg("-c")
                .arg(conf())
                .args(args)
                .output();
        };
        quiet(&["osd", "unset", "noout"]);
        for k in [
            "osd_scrub_sleep",
            "osd_scrub_chunk_max",
            "osd_scrub_chunk_min",
        ] {
            quiet(&["config", "rm", "osd", k]);
        }
        quiet(&[
            "osd",
            "pool",
            "rm",
            POOL,
            POOL,
            "--yes-i-really-really-mean-it",
        ]);
        // Removing the pool ends its scrub; wait (bounded) until the mgr agrees.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !scrubbing().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// The PGs the mgr lists as scrubbing now (`ceph pg dump pgs_brief`).
fn scrubbing() -> Vec<String> {
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg("ceph")
        .arg("-c")
        .arg(conf())
        .args(["pg", "dump", "pgs_brief", "-f", "json"])
        .output();
    let Ok(out) = out else { return Vec::new() };
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let list = v
        .get("pg_stats")
        .or(Some(&v))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.iter()
        .filter(|p| p["state"].as_str().is_some_and(|s| s.contains("scrubbing")))
        .filter_map(|p| p["pgid"].as_str().map(str::to_string))
        .collect()
}

/// The health check names `ceph health` reports now.
fn health_checks() -> (String, Vec<String>) {
    let v: Value = serde_json::from_str(&ceph(&["health", "-f", "json"])).unwrap();
    let checks = v["checks"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    (v["status"].as_str().unwrap_or("").to_string(), checks)
}

use common::bench_json as run_json;

/// Writes `objects` objects of `bs` of run `run`, kept.
fn fill(pool: &str, run: &str, objects: u64, bs: &str) {
    let ops = objects.to_string();
    let out = cephbench()
        .args(["rados", "write", "-p", pool, "-b", bs, "-t", "4"])
        .args(["--ops", &ops, "--run-name", run, "--no-cleanup"])
        .output();
    common::ok(out.unwrap(), "rados write");
}

/// One counter of the bluestore section, summed over every OSD: a pool's
/// objects spread over the OSDs by its id, which depends on the pools made
/// before it, so one OSD's share of a run is not fixed.
fn bluestore(counter: &str) -> u64 {
    let ids: Vec<u64> =
        serde_json::from_str(&ceph(&["osd", "ls", "--format", "json"])).expect("osd ls json");
    ids.iter()
        .map(|id| {
            let v: Value = serde_json::from_str(&ceph(&[
                "tell",
                &format!("osd.{id}"),
                "perf",
                "dump",
                "bluestore",
            ]))
            .expect("perf dump json");
            v["bluestore"][counter]
                .as_u64()
                .unwrap_or_else(|| panic!("osd.{id}: no {counter}"))
        })
        .sum()
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn noout_and_a_deep_scrub_show_and_require_quiet_refuses() {
    let _g = serial();
    let _restore = Restore;
    ceph(&["osd", "pool", "create", POOL, "1", "1"]);
    ceph(&[
        "osd",
        "pool",
        "set",
        POOL,
        "size",
        "1",
        "--yes-i-really-mean-it",
    ]);
    ceph(&["osd", "pool", "application", "enable", POOL, "rados"]);
    common::wait_clean();
    fill(POOL, RUN, OBJECTS, "4K");

    // The mgr lists a new pool's PG as unknown until its OSD reports it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v: Value = serde_json::from_str(&ceph(&["status", "-f", "json"])).unwrap();
        let states = v["pgmap"]["pgs_by_state"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if states.iter().all(|s| s["state_name"] == "active+clean") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "PGs not active+clean: {states:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // Quiet: --require-quiet starts, the result says quiet, the text has no line.
    let (status, checks) = health_checks();
    assert_eq!(
        (status.as_str(), checks.len()),
        ("HEALTH_OK", 0),
        "{checks:?}"
    );
    let read = |mode: &str, more: &[&str]| {
        run_json(
            &[
                &["rados", mode, "-p", POOL, "--run-name", RUN, "-t", "2"],
                more,
            ]
            .concat(),
        )
    };
    let v = read("seq", &["--require-quiet"]);
    assert_eq!(v["cluster_state"]["quiet"], true, "{}", v["cluster_state"]);
    assert_eq!(v["cluster_state"]["before"]["health"], "HEALTH_OK");
    assert!(!common::render_text(&v).contains("not quiet"));
    assert_eq!(v["read_cache"], "warm");

    // noout set, and a deep scrub slowed down to last ~10 s.
    ceph(&["osd", "set", "noout"]);
    ceph(&["config", "set", "osd", "osd_scrub_chunk_max", CHUNK]);
    ceph(&["config", "set", "osd", "osd_scrub_chunk_min", "1"]);
    ceph(&["config", "set", "osd", "osd_scrub_sleep", SLEEP]);
    let id: Value =
        serde_json::from_str(&ceph(&["osd", "pool", "ls", "detail", "-f", "json"])).unwrap();
    let pool_id = id
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pool_name"] == POOL)
        .and_then(|p| p["pool_id"].as_i64())
        .unwrap();
    let pgid = format!("{pool_id}.0");
    ceph(&["pg", "deep-scrub", &pgid]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !scrubbing().contains(&pgid) {
        assert!(Instant::now() < deadline, "{pgid} did not start scrubbing");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (status, checks) = health_checks();
    assert_eq!(status, "HEALTH_WARN");
    assert!(checks.contains(&"OSDMAP_FLAGS".to_string()), "{checks:?}");

    // --require-quiet refuses, in one line naming both.
    let out = cephbench()
        .args([
            "rados",
            "write",
            "-p",
            POOL,
            "-d",
            "2s",
            "--run-name",
            "refused",
        ])
        .arg("--require-quiet")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("not quiet") && err.contains("OSDMAP_FLAGS") && err.contains("deep scrub"),
        "{err}"
    );
    assert!(!common::list(POOL).iter().any(|o| o.contains("refused")));

    // A run during both: in the JSON and one text line.
    let v = read("rand", &["-d", "3s"]);
    let still = scrubbing();
    let cs = &v["cluster_state"];
    assert_eq!(cs["quiet"], false);
    let before_checks: Vec<&str> = cs["before"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let mut want: Vec<&str> = checks.iter().map(String::as_str).collect();
    want.sort();
    let mut got = before_checks.clone();
    got.sort();
    assert_eq!(got, want, "the checks `ceph health` named");
    let events = cs["events"].as_array().unwrap();
    let deep = events
        .iter()
        .find(|e| e["kind"] == "deep_scrub")
        .unwrap_or_else(|| panic!("no deep scrub event: {cs}"));
    assert_eq!(deep["pg_ids"], serde_json::json!([pgid]), "{cs}");
    assert!(events
        .iter()
        .any(|e| e["kind"] == "health" && e["name"] == "OSDMAP_FLAGS" && e["until_end"] == true));
    // The scrub seen at the end exactly when the test still sees it.
    assert_eq!(
        deep["until_end"],
        still.contains(&pgid),
        "{cs} vs {still:?}"
    );
    let text = common::render_text(&v);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("not quiet:"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].contains("HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set")
            && lines[0].contains("deep scrub on 1 PG"),
        "{}",
        lines[0]
    );
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn drop_caches_makes_reads_cold_and_needs_osd_caps() {
    let _g = serial();
    let pool = common::pool("cbcold");
    let run = "cold";
    // A run left by an earlier, failed attempt.
    let _ = cephbench()
        .args(["cleanup", "-p", pool, "--run-name", run])
        .output();
    // 128 KiB writes: not deferred (BlueStore defers writes under 64 KiB on
    // HDDs and keeps their onodes pinned, in cache, until they are on disk).
    fill(pool, run, 64, "128K");
    let seq = ["rados", "seq", "-p", pool, "--run-name", run, "-t", "2"];
    // Warm: read once to fill the caches, then again.
    run_json(&seq);
    let misses = bluestore("onode_misses");
    let v = run_json(&seq);
    assert_eq!(v["read_cache"], "warm");
    let warm_misses = bluestore("onode_misses") - misses;
    // Cold: the OSDs had to load every object's onode again (their own
    // count of onode cache misses: at least one per object), warm next to
    // none.
    let misses = bluestore("onode_misses");
    let v = run_json(&[&seq[..], &["--drop-caches"]].concat());
    assert_eq!(v["read_cache"], "cold");
    assert!(
        !v["warnings"].to_string().contains("still held"),
        "{}",
        v["warnings"]
    );
    let cold_misses = bluestore("onode_misses") - misses;
    assert!(
        cold_misses >= 64 && cold_misses > 4 * warm_misses,
        "onode cache misses: cold {cold_misses} vs warm {warm_misses}"
    );
    let text = common::render_text(&v);
    assert!(text.contains("reads ran cold"), "{text}");

    // An rbd read job: the caches dropped after preconditioning, just
    // before the reads.
    let rbd_pool = common::pool_for("cbcold-rbd", "rbd");
    let v = run_json(&[
        "rbd",
        "-p",
        rbd_pool,
        "--size",
        "16M",
        "--rw",
        "randread",
        "--iodepth",
        "2",
        "-d",
        "1s",
        "--drop-caches",
    ]);
    assert_eq!(v["read_cache"], "cold");
    assert_eq!(v["workload"]["preconditioned"], true);

    // A write job: bad input.
    let out = cephbench()
        .args(["rados", "write", "-p", pool, "-d", "1s", "--drop-caches"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    // Without osd 'allow *': refused before the run, the cap named.
    let dir = tempfile::tempdir().unwrap();
    let keyring = dir.path().join("keyring");
    let entity = "client.cbquiet-nocaps";
    let cap = format!("allow rwx pool={pool}");
    ceph(&[
        "auth",
        "get-or-create",
        entity,
        "mon",
        "allow r",
        "mgr",
        "allow r",
        "osd",
        &cap,
        "-o",
        keyring.to_str().unwrap(),
    ]);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&keyring, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let out = cephbench()
        .args(["-n", entity, "-k", keyring.to_str().unwrap()])
        .args(seq)
        .arg("--drop-caches")
        .output()
        .unwrap();
    ceph(&["auth", "rm", entity]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("osd 'allow *'") && err.contains("cache drop"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let cleanup = cephbench()
        .args(["cleanup", "-p", pool, "--run-name", run])
        .output()
        .unwrap();
    assert!(cleanup.status.success());
}
