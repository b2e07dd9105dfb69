//! Least privilege and secrets, against the real cluster.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{ceph, cephbench, conf, pool, serial};
use serde_json::Value;

const POOL: &str = "cbt-sec";

fn admin_keyring() -> PathBuf {
    conf().parent().unwrap().join("ceph.client.admin.keyring")
}

fn key_of(keyring: &Path) -> String {
    std::fs::read_to_string(keyring)
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("key = ").map(str::to_string))
        .expect("a key line")
}

/// A keyring for a new user with exactly `caps`.
fn user(dir: &Path, id: &str, caps: &[&str]) -> PathBuf {
    let entity = format!("client.{id}");
    let _ = std::process::Command::new("ceph")
        .arg("-c")
        .arg(conf())
        .args(["auth", "rm", &entity])
        .output();
    let mut args = vec!["auth", "get-or-create", entity.as_str()];
    args.extend_from_slice(caps);
    let out = ceph(&args);
    let path = dir.join(format!("{id}.keyring"));
    std::fs::write(&path, out).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

fn run_as(id: &str, keyring: &Path, extra: &[&str]) -> std::process::Output {
    cephbench()
        .args(["--id", id, "--keyring"])
        .arg(keyring)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

/// A key with no caps at all and a wrong secret of a user that exists get
/// the same refusal from the mon (-13 at connect: measured on pacific
/// 16.2.15, both `handle_auth_bad_method ... (13) Permission denied`; only
/// the mon's own log tells `mon caps null` from `unexpected key`). Both
/// errors name both causes and the caps the tool needs, on one line.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_key_without_caps_and_a_wrong_key_name_both_causes() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let nocaps = user(dir.path(), "cbt-nocaps", &[]);
    let wrong = dir.path().join("wrong.keyring");
    let text = std::fs::read_to_string(&nocaps).unwrap();
    // Another valid cephx secret (16 bytes of key material), not this user's.
    let other = "AQBnyDRlAAAAABAAq1DMO7hgMIfj5u9pwl3Tug==";
    assert_ne!(key_of(&nocaps), other);
    std::fs::write(&wrong, text.replace(&key_of(&nocaps), other)).unwrap();
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600)).unwrap();
    let write = ["rados", "write", "-p", POOL, "-b", "4K", "--ops", "10"];
    let mut seen = Vec::new();
    for k in [&nocaps, &wrong] {
        let out = run_as("cbt-nocaps", k, &write);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        for want in [
            "(13) Permission denied",
            "does not match `ceph auth get client.cbt-nocaps`",
            "client.cbt-nocaps has no mon caps",
            "mon 'allow r' osd 'allow rw pool=POOL'",
        ] {
            assert!(err.contains(want), "{want}: {err}");
        }
        seen.push(err);
    }
    assert_eq!(seen[0], seen[1], "the two cannot be told apart");
    let _ = std::process::Command::new("ceph")
        .arg("-c")
        .arg(conf())
        .args(["auth", "rm", "client.cbt-nocaps"])
        .output();
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn data_path_caps_suffice_and_missing_caps_are_named() {
    let _g = serial();
    let p = pool(POOL);
    let dir = tempfile::tempdir().unwrap();
    let write = ["rados", "write", "-p", p, "-b", "4K", "--ops", "50"];

    // Exactly the data-path caps: the run works; the per-OSD view is
    // missing and the warning names the cap that would give it.
    let data_cap = format!("allow rw pool={p}");
    let k = user(
        dir.path(),
        "cbt-data",
        &["mon", "allow r", "osd", &data_cap],
    );
    let out = run_as("cbt-data", &k, &write);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["ops"], 50);
    assert_eq!(v["cluster"]["entity"], "client.cbt-data");
    let w = v["warnings"].to_string();
    assert!(w.contains("mgr 'allow r'"), "{w}");

    // Add the mgr cap: the PG map works, the OSD counters name theirs.
    let k = user(
        dir.path(),
        "cbt-mgr",
        &["mon", "allow r", "mgr", "allow r", "osd", &data_cap],
    );
    let out = run_as("cbt-mgr", &k, &write);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["placement"].is_object());
    assert!(
        v["warnings"].to_string().contains("osd 'allow *'"),
        "{}",
        v["warnings"]
    );

    // A separate telemetry identity beside the data identity: the data
    // path keeps its least caps, the probes get the OSD counters and the
    // attribution, and the result names only the data identity.
    let t = user(
        dir.path(),
        "cbt-tel",
        &["mon", "allow r", "mgr", "allow r", "osd", "allow *"],
    );
    let k = user(
        dir.path(),
        "cbt-data",
        &["mon", "allow r", "osd", &data_cap],
    );
    let mut with_tel = vec!["--telemetry-id", "cbt-tel", "--telemetry-keyring"];
    with_tel.push(t.to_str().unwrap());
    with_tel.extend_from_slice(&write);
    let out = run_as("cbt-data", &k, &with_tel);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cluster"]["entity"], "client.cbt-data");
    assert_eq!(v["warnings"], serde_json::json!([]), "{}", v["warnings"]);
    assert!(v["osds"][0]["counters"].is_object(), "{}", v["osds"]);
    assert!(v["jobs"][0]["attribution"].is_object());
    // Without it, the same data identity names what the report lacks: the
    // placement (mon 'allow r') and the round trips give the per-OSD view
    // and the public network, nothing of the OSD's part.
    let out = run_as("cbt-data", &k, &write);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = v["warnings"].to_string();
    assert!(
        w.contains("no OSD counters") && w.contains("osd 'allow *'"),
        "{w}"
    );
    let a = &v["jobs"][0]["attribution"];
    for part in ["osd_queue", "osd_local", "device_flush", "replica"] {
        assert!(
            !a["shares"].to_string().contains(part),
            "{part} attributed without the OSDs' counters: {a}"
        );
    }

    // Less than the data path: one line naming the cap to add, and no
    // `ceph auth caps` command that would drop the caps the key has (it
    // replaces them all): without a way to read them, how to read them.
    let k = user(
        dir.path(),
        "cbt-none",
        &[
            "mon",
            "allow r",
            "mgr",
            "allow r",
            "osd",
            "allow rw pool=cbt-other",
        ],
    );
    let out = run_as("cbt-none", &k, &write);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("osd 'allow rw pool={p}'")), "{err}");
    assert!(err.contains("`ceph auth get client.cbt-none`"), "{err}");
    assert!(!err.contains("ceph auth caps client.cbt-none mon"), "{err}");
    // A key that may read its own caps gets the whole command, each cap it
    // has kept and the pool added.
    let k = user(
        dir.path(),
        "cbt-none",
        &[
            "mon",
            "allow r, allow command \"auth get\"",
            "mgr",
            "allow r",
            "osd",
            "allow rw pool=cbt-other",
        ],
    );
    let out = run_as("cbt-none", &k, &write);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "ceph auth caps client.cbt-none mgr 'allow r' mon 'allow r, allow command \"auth get\"' \
             osd 'allow rw pool=cbt-other, allow rw pool={p}'"
        )),
        "{err}"
    );
    assert!(!err.contains("AQ"), "no key printed: {err}");
    let out = run_as(
        "cbt-none",
        &k,
        &["rbd", "-p", p, "--size", "16M", "-d", "1s"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("osd 'allow rw pool="));
    for id in ["cbt-data", "cbt-mgr", "cbt-none", "cbt-tel"] {
        ceph(&["auth", "rm", &format!("client.{id}")]);
    }
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn keys_never_appear_in_anything_the_tool_prints() {
    let _g = serial();
    let p = pool(POOL);
    let key = key_of(&admin_keyring());
    let mut printed = Vec::new();
    for args in [
        vec!["rados", "write", "-p", p, "-b", "4K", "--ops", "20"],
        vec![
            "--format", "json", "rados", "write", "-p", p, "-b", "4K", "--ops", "20",
        ],
        vec![
            "--progress",
            "always",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "-d",
            "1",
        ],
        vec!["rados", "write", "-p", "no-such-pool", "-b", "4K"],
        vec!["rados", "seq", "-p", p, "--run-name", "none"],
        vec![
            "rbd", "-p", p, "--size", "16M", "-d", "1s", "--format", "json",
        ],
        vec!["cleanup", "-p", p],
    ] {
        let out = cephbench().args(&args).output().unwrap();
        printed.push(out.stdout);
        printed.push(out.stderr);
    }
    // A keyring readable by others: warned about, and the key still never printed.
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open.keyring");
    std::fs::copy(admin_keyring(), &open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = cephbench()
        .arg("--keyring")
        .arg(&open)
        .args(["rados", "write", "-p", p, "-b", "4K", "--ops", "5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("readable by group/others") && err.contains("chmod 600"),
        "{err}"
    );
    printed.push(out.stdout);
    printed.push(out.stderr);
    let all: Vec<u8> = printed.concat();
    assert!(!all.is_empty());
    let text = String::from_utf8_lossy(&all);
    assert!(!text.contains(&key), "the key was printed");
    assert!(!text.contains(&key[..16]), "part of the key was printed");
    // The private admin keyring draws no warning.
    let out = cephbench()
        .args(["rados", "write", "-p", p, "-b", "4K", "--ops", "5"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("readable"));
}

/// `rados -p P -N NS args...` as admin, which must succeed; returns stdout.
fn rados_ns(p: &str, ns: &str, args: &[&str]) -> Vec<u8> {
    let mut all = vec!["-p", p, "-N", ns];
    all.extend_from_slice(args);
    let out = common::rados(&all);
    assert!(
        out.status.success(),
        "rados {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Objects of every namespace, as `rados ls --all` lists them: "ns\tname".
fn ls_all(p: &str) -> Vec<String> {
    let out = common::rados(&["-p", p, "ls", "--all"]);
    assert!(out.status.success());
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// `-N NS` under a key whose osd cap allows only that namespace: the write
/// run, its reads (checked) and its cleanup work with that key; the per-OSD
/// rows (telemetry through the telemetry identity) place every op on the
/// OSD that counted it, so the namespace is part of the placement key; a
/// run kept in another namespace, a tenant's object in the same namespace
/// and one in the default namespace are byte-identical afterwards.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_namespace_only_key_runs_reads_and_cleans_up_its_namespace() {
    let _g = serial();
    let p = pool(POOL);
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, b"tenant data").unwrap();
    let body = body.to_str().unwrap();
    // What an earlier failed run of this test may have left.
    for ns in ["cbns1", "cbns3"] {
        let _ = cephbench().args(["cleanup", "-p", p, "-N", ns]).output();
    }
    rados_ns(p, "", &["put", "cbt_ns_default_obj", body]);
    rados_ns(p, "cbns3", &["put", "tenant_obj", body]);
    // A run kept in namespace cbns1 (admin key).
    let out = cephbench()
        .args([
            "rados", "write", "-p", p, "-N", "cbns1", "-b", "4K", "--ops", "40",
        ])
        .args(["--run-name", "ns1", "--no-cleanup"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ns1_obj = rados_ns(p, "cbns1", &["get", "cephbench_data.ns1.7", "-"]);
    assert_eq!(ns1_obj.len(), 4096);
    let before = ls_all(p);

    let t = user(
        dir.path(),
        "cbt-tel",
        &["mon", "allow r", "mgr", "allow r", "osd", "allow *"],
    );
    let cap = format!("allow rw pool={p} namespace=cbns3");
    let k = user(dir.path(), "cbt-ns", &["mon", "allow r", "osd", &cap]);
    let tel = [
        "--telemetry-id",
        "cbt-tel",
        "--telemetry-keyring",
        t.to_str().unwrap(),
    ];
    let mut args: Vec<&str> = tel.to_vec();
    args.extend_from_slice(&["rados", "write", "-p", p, "-N", "cbns3", "-b", "4K"]);
    args.extend_from_slice(&[
        "--ops",
        "300",
        "-t",
        "8",
        "--run-name",
        "ns3",
        "--no-cleanup",
    ]);
    let out = run_as("cbt-ns", &k, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["ops"], 300);
    assert_eq!(v["workload"]["namespace"], "cbns3");
    assert_eq!(
        common::osd_counted_writes(&v),
        300,
        "every op placed on the OSD that counted it"
    );
    // The objects are in the namespace, not in the default one.
    let ns3: Vec<String> = ls_all(p)
        .into_iter()
        .filter(|l| l.starts_with("cbns3\tcephbench_"))
        .collect();
    assert_eq!(ns3.len(), 301, "300 data objects and the metadata");

    // Reads under the same key, checked.
    let out = run_as(
        "cbt-ns",
        &k,
        &["rados", "seq", "-p", p, "-N", "cbns3", "--run-name", "ns3"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["ops"], 300);
    assert_eq!(v["jobs"][0]["verify_mismatches"], 0);

    // Cleanup of the namespace with that key: only run ns3 goes.
    let out = run_as("cbt-ns", &k, &["cleanup", "-p", p, "-N", "cbns3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed 301 "));
    assert_eq!(ls_all(p), before, "everything else is still there");
    assert_eq!(
        rados_ns(p, "cbns1", &["get", "cephbench_data.ns1.7", "-"]),
        ns1_obj
    );
    assert_eq!(
        rados_ns(p, "cbns3", &["get", "tenant_obj", "-"]),
        b"tenant data"
    );
    assert_eq!(
        rados_ns(p, "", &["get", "cbt_ns_default_obj", "-"]),
        b"tenant data"
    );

    // The sweep of every namespace (admin) takes the kept ns1 run too, and
    // nothing that is not cephbench's.
    let out = cephbench()
        .args(["cleanup", "-p", p, "--all-namespaces"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = ls_all(p);
    assert!(
        !left.iter().any(|l| l.contains("cephbench_")),
        "cephbench objects left: {left:?}"
    );
    assert!(left.contains(&"cbns3\ttenant_obj".to_string()), "{left:?}");
    assert!(
        left.iter().any(|l| l.ends_with("cbt_ns_default_obj")),
        "{left:?}"
    );
    rados_ns(p, "cbns3", &["rm", "tenant_obj"]);
    rados_ns(p, "", &["rm", "cbt_ns_default_obj"]);
    for id in ["cbt-ns", "cbt-tel"] {
        ceph(&["auth", "rm", &format!("client.{id}")]);
    }
}
