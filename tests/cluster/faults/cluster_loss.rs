//! The cluster loses a part mid-run (an OSD, the mon, the pool itself): the run
//! survives what it can, says what happened, and every wait is bounded.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::*;
use crate::common::{self, ceph, cephbench, conf, list, pool_sized, serial, validate, wait_clean};

fn cluster_dir() -> PathBuf {
    conf()
        .parent()
        .expect("conf lives in the cluster dir")
        .to_path_buf()
}

fn osd_pid(id: u32) -> String {
    let p = cluster_dir().join("run").join(format!("osd.{id}.pid"));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .trim()
        .to_string()
}

/// SIGKILL one OSD of three during a 4 KiB write run on a size-3 pool and
/// restart it a few seconds later: the run goes on, reports the stall and
/// no errors, and every op it wrote reads back intact.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn osd_killed_and_revived_mid_run() {
    let _g = serial();
    let osds: u64 = serde_json::from_str::<Value>(&common::ceph(&["osd", "stat", "-f", "json"]))
        .unwrap()["num_up_osds"]
        .as_u64()
        .unwrap();
    assert!(
        osds >= 3,
        "this test needs a 3-OSD cluster (tests/run.sh starts one)"
    );
    let p = pool_sized("cbt-faults", "rados", 3);
    let bin = assert_cmd::cargo::cargo_bin("cephbench");
    let child = Command::new(bin)
        .arg("-c")
        .arg(conf())
        .args([
            "--format",
            "json",
            "--progress",
            "always",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "-t",
            "16",
            "-d",
            "16",
            "--run-name",
            "faults",
            "--no-cleanup",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let victim = osd_pid(1);
    assert!(Command::new("kill")
        .args(["-KILL", &victim])
        .status()
        .unwrap()
        .success());
    let killed = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let up = Command::new("bash")
        .arg("containers/cluster.sh")
        .arg("up")
        .arg("--dir")
        .arg(cluster_dir())
        .output()
        .unwrap();
    assert!(
        up.status.success(),
        "restart: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    eprintln!("osd.1 down for {:.1} s", killed.elapsed().as_secs_f64());

    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run must survive: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    let job = &v["jobs"][0];
    let ops = job["ops"].as_u64().unwrap();
    eprintln!(
        "ops {ops}, errors {}, longest gap {} s, slow ops {}",
        job["errors"], job["longest_gap_s"], job["slow_ops"]
    );
    assert!(ops > 500);
    assert_eq!(job["errors"], 0);
    assert!(
        job["longest_gap_s"].as_f64().unwrap() >= 0.5,
        "a killed OSD stalls its PGs' writes until it is marked down: {job:#}"
    );
    // The live line went on through the stall.
    assert!(
        stderr
            .lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count()
            >= 12,
        "{stderr}"
    );

    wait_clean();
    let s = cephbench()
        .args([
            "--format",
            "json",
            "rados",
            "seq",
            "-p",
            p,
            "-t",
            "16",
            "--run-name",
            "faults",
            "--verify",
        ])
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let sv: Value = serde_json::from_slice(&s.stdout).unwrap();
    let issued = sv["jobs"][0]["ops"].as_u64().unwrap();
    assert!(
        issued >= ops,
        "every op written reads back ({issued} of at least {ops})"
    );
    assert_eq!(sv["jobs"][0]["verify_mismatches"], 0);
    assert_eq!(sv["jobs"][0]["errors"], 0);
    let c = cephbench()
        .args(["cleanup", "-p", p, "--run-name", "faults"])
        .output()
        .unwrap();
    assert!(c.status.success());
    assert!(common::list(p).iter().all(|n| !n.starts_with("cephbench_")));
}

/// Another process deletes the pool mid-run: the run stops within seconds
/// with the pool named, prints what it did, exits 1.
/// A pool whose PGs are not active (its CRUSH rule maps them to no OSD)
/// times out on its first op: the error says the PGs are inactive and
/// points at `ceph pg ls-by-pool`, not at caps the key has, and advises no
/// `ceph auth caps` (which would replace every cap of the key).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn inactive_pgs_are_named_not_taken_for_missing_caps() {
    let _g = serial();
    let pool = "cbt-f-inact";
    let rm = || remove_pool(pool);
    rm();
    // No datacenter bucket: the rule maps every PG to no OSD.
    ceph(&[
        "osd",
        "crush",
        "rule",
        "create-replicated",
        "cbt-nowhere",
        "default",
        "datacenter",
    ]);
    ceph(&[
        "osd",
        "pool",
        "create",
        pool,
        "8",
        "8",
        "replicated",
        "cbt-nowhere",
    ]);
    ceph(&["osd", "pool", "application", "enable", pool, "rados"]);
    for args in [
        &["rados", "write", "-p", pool, "-b", "4K", "-d", "3"][..],
        &[
            "rbd",
            "-p",
            pool,
            "--size",
            "16M",
            "--rw",
            "randwrite",
            "-d",
            "3",
        ][..],
    ] {
        let t = Instant::now();
        let out = cephbench()
            .args(["--op-timeout", "5s"])
            .args(args)
            .output()
            .unwrap();
        let took = t.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        eprintln!("{args:?}: {err} ({took:?})");
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("pool '{pool}' has 8 of 8 PGs not active")),
            "{err}"
        );
        assert!(
            err.contains(&format!("`ceph pg ls-by-pool {pool}`")),
            "{err}"
        );
        assert!(!err.contains("ceph auth caps"), "{err}");
        assert!(took < Duration::from_secs(30), "{took:?}");
    }
    rm();
    ceph(&["osd", "crush", "rule", "rm", "cbt-nowhere"]);
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn pool_deleted_mid_run_is_named() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-del", "rados");
    let r = spawn(&[
        "--format",
        "json",
        "--op-timeout",
        "10s",
        "rados",
        "write",
        "-p",
        p.0,
        "-b",
        "4K",
        "-t",
        "8",
        "-d",
        "20",
        "--run-name",
        "del",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !list(p.0)
        .iter()
        .any(|n| n.starts_with("cephbench_data.del."))
    {
        assert!(Instant::now() < deadline, "no objects appeared");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1));
    ceph(&[
        "osd",
        "pool",
        "rm",
        p.0,
        p.0,
        "--yes-i-really-really-mean-it",
    ]);
    let deleted = Instant::now();
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    let after = deleted.elapsed();
    eprintln!("exit {after:?} after the deletion: {stderr}");
    assert_eq!(code, Some(3), "{stderr}");
    let err = stderr.lines().last().unwrap();
    assert!(
        err.contains("pool 'cbt-f2-del' was deleted during the run"),
        "{err}"
    );
    assert!(after < Duration::from_secs(15), "{after:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    validate(&v);
    let job = &v["jobs"][0];
    assert_eq!(job["stop_reason"], "error");
    assert!(job["errors_by_errno"]["2"].as_u64().unwrap() >= 1, "{job}");
    assert!(job["ops"].as_u64().unwrap() > 0);
    assert!(!pools().contains(&p.0.to_string()));
}

/// The mon stops answering (SIGSTOP, so the shared cluster is back seconds
/// later) one second into a write run: ops in flight to the OSDs need no
/// mon, so the run finishes, reports and removes its objects within its
/// bounds; a new run started while the mon is gone fails within
/// --connect-timeout with a message naming the mons.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn mon_lost_mid_run_is_bounded() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-mon", "rados");
    let pidfile = conf().parent().unwrap().join("run").join("mon.a.pid");
    let mon = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let r = spawn(&[
        "--progress",
        "always",
        "--format",
        "json",
        "--op-timeout",
        "5s",
        "rados",
        "write",
        "-p",
        p.0,
        "-b",
        "4K",
        "-t",
        "8",
        "-d",
        "4",
        "--run-name",
        "monlost",
    ]);
    r.wait_stderr("    1 ", Duration::from_secs(20));
    assert!(Command::new("kill")
        .args(["-STOP", &mon])
        .status()
        .unwrap()
        .success());
    let guard = Stopped(mon);
    let t = Instant::now();
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(40));
    let took = t.elapsed();
    eprintln!("finished {took:?} after the mon stopped");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    validate(&v);
    assert!(v["jobs"][0]["ops"].as_u64().unwrap() > 0);
    assert_eq!(v["jobs"][0]["errors"], 0);
    assert!(stderr.contains("cleaning up:"), "{stderr}");

    // A new client cannot connect without a mon: bounded, named.
    let t = Instant::now();
    let out = cephbench()
        .args([
            "--connect-timeout",
            "3s",
            "rados",
            "write",
            "-p",
            p.0,
            "--ops",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    assert!(err.contains("no monitor answered within 3 s"), "{err}");
    drop(guard);
    // The OSD writes really happened and the cleanup really removed them.
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0));
}

/// Restarts osd.`id` (SIGTERM, then `cluster.sh up`) and waits until every
/// PG is active+clean.
fn restart_osd(id: u32) {
    let pid = osd_pid(id);
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let gone = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            gone.elapsed() < Duration::from_secs(30),
            "osd.{id} did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let up = common::cluster_sh(cluster_dir().to_str().unwrap(), &["up"]);
    assert!(
        up.status.success(),
        "restart osd.{id}: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    wait_clean();
}

/// Puts osd.2 back on the scheduler the cluster's config gives it, and
/// unsets `noout`.
struct SchedulerBack;

impl Drop for SchedulerBack {
    fn drop(&mut self) {
        let _ = ceph_status(&["osd", "unset", "noout"]);
        let _ = ceph_status(&["config", "rm", "osd.2", "osd_op_queue"]);
        restart_osd(2);
    }
}

/// `ceph ARGS`, its success only.
fn ceph_status(args: &[&str]) -> bool {
    Command::new("timeout")
        .arg("60")
        .arg("ceph")
        .arg("-c")
        .arg(conf())
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One OSD restarted on another op scheduler (osd.2 on mclock_scheduler,
/// the others on pacific's wpq) and `noout` set: a run's result records
/// what each of its pool's OSDs ran with, each figure as `ceph config show`
/// and `ceph osd metadata` give it, the cluster's flags and balancer as
/// `osd dump` and `balancer status` do, and `compare` of a run before and a
/// run after says in one line that the comparison mixes them; `diagnose
/// --pools` of two pools on those OSDs says so in each pool's report.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn an_osd_on_another_scheduler_is_recorded_and_compare_says_so() {
    let _g = serial();
    let p = pool_sized("cbt-faults", "rados", 3);
    let dir = std::env::temp_dir().join(format!("cbt-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str| {
        let v = common::bench_json(&["rados", "write", "-p", p, "-b", "4K", "-d", "2"]);
        let file = dir.join(name);
        std::fs::write(&file, v.to_string()).unwrap();
        (v, file)
    };
    let queue_of = |osd: &str| {
        common::ceph(&["config", "show", osd, "osd_op_queue"])
            .trim()
            .to_string()
    };
    let (before, a) = run("before.json");
    assert_eq!(queue_of("osd.2"), "wpq", "pacific's default");
    let _back = SchedulerBack;
    assert!(ceph_status(&["osd", "set", "noout"]));
    assert!(ceph_status(&[
        "config",
        "set",
        "osd.2",
        "osd_op_queue",
        "mclock_scheduler"
    ]));
    restart_osd(2);
    let (after, b) = run("after.json");
    let metadata: Value =
        serde_json::from_str(&common::ceph(&["osd", "metadata", "--format", "json"])).unwrap();
    for (v, changed) in [(&before, false), (&after, true)] {
        let settings = v["pool"]["osd_settings"].as_array().expect("osd_settings");
        assert_eq!(settings.len(), 3, "{settings:?}");
        for s in settings {
            let osd = s["osd"].as_i64().unwrap();
            let md = metadata
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["id"] == osd)
                .unwrap();
            assert_eq!(s["version"], md["ceph_version_short"], "{s}");
            assert_eq!(s["kernel"], md["kernel_version"], "{s}");
            assert_eq!(s["objectstore"], md["osd_objectstore"], "{s}");
            assert_eq!(
                s["min_alloc_size"].to_string(),
                md["bluestore_min_alloc_size"].as_str().unwrap(),
                "{s}"
            );
            let want = if changed {
                queue_of(&format!("osd.{osd}"))
            } else {
                "wpq".into()
            };
            assert_eq!(s["op_queue"], want.as_str(), "{s}");
        }
    }
    assert_eq!(queue_of("osd.2"), "mclock_scheduler");
    // This host's kernel as uname gives it.
    let uname = Command::new("uname").arg("-r").output().unwrap();
    let kernel = String::from_utf8_lossy(&uname.stdout).trim().to_string();
    assert_eq!(after["cluster"]["client_kernel"], kernel.as_str());
    // The flags as `osd dump` has them (less those every cluster has), the
    // balancer as its status says.
    let dump: Value =
        serde_json::from_str(&common::ceph(&["osd", "dump", "--format", "json"])).unwrap();
    assert!(
        dump["flags"].as_str().unwrap().contains("noout"),
        "{}",
        dump["flags"]
    );
    assert_eq!(before["pool"]["flags"], Value::Null, "{}", before["pool"]);
    assert_eq!(after["pool"]["flags"], serde_json::json!(["noout"]));
    let balancer: Value =
        serde_json::from_str(&common::ceph(&["balancer", "status", "--format", "json"])).unwrap();
    let active = if balancer["active"] == true {
        "active"
    } else {
        "off"
    };
    assert_eq!(
        after["pool"]["balancer"],
        format!("{}, {active}", balancer["mode"].as_str().unwrap()).as_str()
    );
    let out = cephbench().arg("compare").args([&a, &b]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let want = "A ran with flags none, B with noout; A ran with osd_op_queue wpq, B with \
                mixed (mclock_scheduler: osd.2; wpq: osd.0, osd.1)";
    // (The text wraps a note's line, indenting the rest.)
    let flat = text.replace("\n  ", " ");
    let line: Vec<&str> = flat.lines().filter(|l| l.contains("mixes them")).collect();
    assert_eq!(line.len(), 1, "{text}");
    assert!(
        line[0].starts_with("Note: ") && line[0].contains(want),
        "{text}"
    );
    // diagnose of two pools on these OSDs, one after the other in 2 min:
    // each report says so among what distorts its figures, naming each
    // scheduler's OSDs as `config show` gave them above.
    let q = pool_sized("cbt-explain-3", "rados", 3);
    let t = Instant::now();
    let pools = format!("{p},{q}");
    let out = cephbench()
        .args([
            "--progress",
            "never",
            "diagnose",
            "--pools",
            &pools,
            "--budget",
            "2m",
        ])
        .output()
        .unwrap();
    let took = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took <= 125.0, "diagnose took {took:.1} s of a 2 min budget");
    let mixed = "the OSDs run different op schedulers (osd_op_queue): mclock_scheduler (osd.2), \
                 wpq (osd.0, osd.1); the figures mix them";
    assert_eq!(text.matches(mixed).count(), 2, "{text}");
    let (first, second) = (
        text.find(&format!("diagnose — pool '{p}': ")),
        text.find(&format!("diagnose — pool '{q}': ")),
    );
    assert!(first.is_some() && first < second, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
