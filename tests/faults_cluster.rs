//! Faults in the middle of a run, against the real cluster: the tool must
//! survive what the cluster does and say what happened.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{cephbench, conf, pool_sized, serial, validate, wait_clean};
use serde_json::Value;

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
