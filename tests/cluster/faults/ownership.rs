//! Data cephbench does not own is never touched; pools are made only when asked
//! and removed only when made.

use std::process::{Command, Stdio};

use serde_json::Value;

use super::support::*;
use crate::common::{self, cephbench, list, serial, validate};

fn md5(data: &[u8]) -> String {
    let mut c = Command::new("md5sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(data).unwrap();
    String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).into_owned()
}

/// Checksums of every object (name → md5 of its data) and of the image.
fn fingerprint(pool: &str, image: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list(pool)
        .into_iter()
        .filter(|n| !n.starts_with("cephbench_data.") && !n.starts_with("cephbench_meta."))
        .filter(|n| !n.contains("cephbench_img."))
        .map(|n| {
            let out = common::rados(&["-p", pool, "get", &n, "-"]);
            assert!(out.status.success());
            let sum = md5(&out.stdout);
            (n, sum)
        })
        .collect();
    let img = rbd(&["export", &format!("{pool}/{image}"), "-"]);
    assert!(img.status.success());
    v.push((format!("image {image}"), md5(&img.stdout)));
    v.sort();
    v
}

/// Foreign objects and a foreign image survive every cephbench command
/// byte for byte: writes with and without cleanup, `cleanup` of one run and
/// of all runs, an RBD run; a foreign object in cephbench's own name space
/// is refused rather than overwritten.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn foreign_objects_and_images_are_never_touched() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-foreign", "rbd");
    let dir = tempfile::tempdir().unwrap();
    for (i, name) in [
        "vm-data.0",
        "cephbench",
        "cephbench_dataX",
        "benchmark_data_x",
    ]
    .iter()
    .enumerate()
    {
        let f = dir.path().join(format!("f{i}"));
        let body: Vec<u8> = (0..10_000u32).map(|b| (b * 7 + i as u32) as u8).collect();
        std::fs::write(&f, body).unwrap();
        assert!(
            common::rados(&["-p", p.0, "put", name, f.to_str().unwrap()])
                .status
                .success()
        );
    }
    assert!(
        rbd(&["create", "--size", "16M", &format!("{}/vm-disk", p.0)])
            .status
            .success()
    );
    let f = dir.path().join("img");
    std::fs::write(&f, vec![0xA5u8; 1 << 20]).unwrap();
    assert!(
        rbd(&["import", f.to_str().unwrap(), &format!("{}/vm-disk2", p.0)])
            .status
            .success()
    );
    let before = fingerprint(p.0, "vm-disk2");

    let ok = |args: &[&str]| {
        let out = cephbench().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(&["rados", "write", "-p", p.0, "-b", "4K", "--ops", "300"]);
    ok(&[
        "rados",
        "write",
        "-p",
        p.0,
        "-b",
        "4K",
        "--ops",
        "300",
        "--run-name",
        "kept",
        "--no-cleanup",
    ]);
    ok(&["rados", "seq", "-p", p.0, "--run-name", "kept", "--verify"]);
    ok(&["cleanup", "-p", p.0, "--run-name", "kept"]);
    ok(&[
        "rados",
        "write",
        "-p",
        p.0,
        "-b",
        "4K",
        "--ops",
        "300",
        "--run-name",
        "k2",
        "--no-cleanup",
    ]);
    ok(&[
        "rbd",
        "-p",
        p.0,
        "--size",
        "16M",
        "--rw",
        "randwrite",
        "--io-total",
        "4M",
    ]);
    ok(&[
        "rbd",
        "-p",
        p.0,
        "--size",
        "16M",
        "--rw",
        "randwrite",
        "--io-total",
        "4M",
        "--keep",
    ]);
    ok(&["cleanup", "-p", p.0]);
    // An existing image is only read without --allow-write.
    ok(&[
        "rbd",
        "-p",
        p.0,
        "--image",
        "vm-disk2",
        "--rw",
        "randread",
        "--io-total",
        "1M",
    ]);
    let out = cephbench()
        .args([
            "rbd",
            "-p",
            p.0,
            "--image",
            "vm-disk2",
            "--rw",
            "randwrite",
            "--io-total",
            "1M",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    // A foreign object where run 'collide' would write its first object.
    let f0 = dir.path().join("f0");
    assert!(common::rados(&[
        "-p",
        p.0,
        "put",
        "cephbench_data.collide.0",
        f0.to_str().unwrap()
    ])
    .status
    .success());
    let out = cephbench()
        .args([
            "rados",
            "write",
            "-p",
            p.0,
            "-b",
            "4K",
            "--ops",
            "10",
            "--run-name",
            "collide",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("already holds object 'cephbench_data.collide.0'")
            && err.contains("--run-name"),
        "{err}"
    );
    let got = common::rados(&["-p", p.0, "get", "cephbench_data.collide.0", "-"]);
    assert_eq!(
        got.stdout,
        std::fs::read(&f0).unwrap(),
        "refused, not overwritten"
    );
    assert!(
        common::rados(&["-p", p.0, "rm", "cephbench_data.collide.0"])
            .status
            .success()
    );

    // librbd may add its own pool metadata (rbd_trash, on image removal);
    // every object that was there before must be there, unchanged.
    let after: Vec<(String, String)> = fingerprint(p.0, "vm-disk2")
        .into_iter()
        .filter(|(n, _)| before.iter().any(|(b, _)| b == n))
        .collect();
    assert_eq!(before, after, "foreign data changed");
    let imgs = String::from_utf8_lossy(&rbd(&["ls", p.0]).stdout).into_owned();
    assert_eq!(
        imgs.split_whitespace().collect::<Vec<_>>(),
        ["vm-disk", "vm-disk2"]
    );
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0));
}

/// Puts `mon_allow_pool_delete` back to true on every mon however the test
/// ends, and waits (at most 30 s) until the mgr's view of the quorum
/// leader's settings, which `--create-pool` reads, says so too: the next
/// test's `--create-pool` was refused once with the mons already back at
/// true (a CI run: "mon_allow_pool_delete is false on the mons").
struct PoolDeleteBack;

impl Drop for PoolDeleteBack {
    fn drop(&mut self) {
        let ceph = |args: &[&str]| {
            Command::new("timeout")
                .arg("30")
                .arg("ceph")
                .arg("-c")
                .arg(common::conf())
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        let _ = ceph(&[
            "tell",
            "mon.*",
            "injectargs",
            "--mon_allow_pool_delete=true",
        ]);
        let Some(leader) = ceph(&["quorum_status", "-f", "json"])
            .and_then(|q| serde_json::from_str::<Value>(&q).ok())
            .and_then(|q| q["quorum_leader_name"].as_str().map(str::to_string))
        else {
            return;
        };
        let mon = format!("mon.{leader}");
        let t = std::time::Instant::now();
        while ceph(&["config", "show", &mon, "mon_allow_pool_delete"]).as_deref() != Some("true")
            && t.elapsed().as_secs() < 30
        {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

/// With the mons refusing pool deletion, `--create-pool` refuses up front
/// in one line naming the setting, and creates nothing (it created the
/// pool, kept it and exited 0).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn create_pool_refused_up_front_when_pools_cannot_be_deleted() {
    let _g = serial();
    let _back = PoolDeleteBack;
    let name = "cbt-f2-nodelete";
    remove_pool(name);
    common::ceph(&[
        "tell",
        "mon.*",
        "injectargs",
        "--mon_allow_pool_delete=false",
    ]);
    // The mgr's view of the mons' settings (what the check reads) follows
    // with their next report.
    let leader: Value =
        serde_json::from_str(&common::ceph(&["quorum_status", "-f", "json"])).unwrap();
    let mon = format!("mon.{}", leader["quorum_leader_name"].as_str().unwrap());
    let t = std::time::Instant::now();
    while common::ceph(&["config", "show", &mon, "mon_allow_pool_delete"]).trim() != "false" {
        assert!(t.elapsed().as_secs() < 30, "the mgr never saw the setting");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let out = cephbench()
        .args(["rados", "write", "-p", name, "-b", "4K", "--ops", "10"])
        .args(["--create-pool", "--pool-size", "1", "--pg-num", "8"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("mon_allow_pool_delete is false") && err.contains("ceph config set mon"),
        "{err}"
    );
    assert!(!pools().contains(&name.to_string()), "nothing created");
}

/// A missing pool is one line naming --create-pool; with it the pool is
/// created, recorded, and removed with the run — and only that pool: an
/// existing pool given --create-pool is used and kept.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn create_pool_only_when_asked_and_remove_only_what_was_created() {
    let _g = serial();
    let name = "cbt-f2-created";
    remove_pool(name);
    let out = cephbench()
        .args(["rados", "write", "-p", name, "-b", "4K", "--ops", "10"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("does not exist") && err.contains("--create-pool"),
        "{err}"
    );
    assert!(
        !pools().contains(&name.to_string()),
        "not created without the flag"
    );

    // Created, used, removed.
    let out = cephbench()
        .args([
            "--format", "json", "rados", "write", "-p", name, "-b", "4K", "--ops", "100",
        ])
        .args(["--create-pool", "--pool-size", "1", "--pg-num", "8"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&v);
    assert_eq!(v["workload"]["pool_created"], true);
    assert_eq!(v["jobs"][0]["ops"], 100);
    assert!(!pools().contains(&name.to_string()), "created pool removed");

    // Kept with --no-cleanup; the metadata remembers, so cleanup removes it.
    let out = cephbench()
        .args([
            "rados",
            "write",
            "-p",
            name,
            "-b",
            "4K",
            "--ops",
            "100",
            "--no-cleanup",
        ])
        .args(["--create-pool", "--pool-size", "1", "--pg-num", "8"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(pools().contains(&name.to_string()));
    let meta = common::rados(&["-p", name, "get", "cephbench_meta.default", "-"]);
    let m: Value = serde_json::from_slice(&meta.stdout).unwrap();
    assert_eq!(m["created_pool"], true);
    let out = cephbench().args(["cleanup", "-p", name]).output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(so.contains(&format!("removed pool '{name}'")), "{so}");
    assert!(!pools().contains(&name.to_string()));

    // An existing pool is never removed, even with --create-pool.
    let p = TempPool::new("cbt-f2-existing", "rados");
    let out = cephbench()
        .args([
            "--format", "json", "rados", "write", "-p", p.0, "-b", "4K", "--ops", "50",
        ])
        .args(["--create-pool"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["workload"].get("pool_created").is_none_or(|c| c == false));
    assert!(pools().contains(&p.0.to_string()));
}
