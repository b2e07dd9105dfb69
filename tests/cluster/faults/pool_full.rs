//! A pool that fills up (quota or full ratio) before or during a run.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::*;
use crate::common::{self, ceph, list, serial, validate};

/// A quota reached mid-run: writes fail at once with EDQUOT (the ioctx
/// sets FULL_TRY; plain librados, like `rados bench`, would pause them
/// forever), the error names the quota, the summary of what was written is
/// printed, the run's objects are removed, exit 3 (ops failed mid-run) — all long before the
/// 20 s duration.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn pool_quota_reached_fails_fast_naming_the_quota() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-full", "rados");
    ceph(&["osd", "pool", "set-quota", p.0, "max_objects", "300"]);
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
        "full",
    ]);
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    let took = stdout_took(&stdout);
    eprintln!("{stderr}");
    assert_eq!(code, Some(3), "{stderr}");
    let err = stderr.lines().last().unwrap();
    assert!(
        err.contains("pool 'cbt-f2-full' is full: quota max_objects 300 reached")
            && err.contains("(122) Disk quota exceeded"),
        "{err}"
    );
    let job = job_stopped_on_edquot(&stdout, &stderr);
    // The quota is enforced once the mon sees the pool's usage (a few
    // seconds): more than 300 objects land first. Each written op is one object.
    let ops = job["ops"].as_u64().unwrap();
    assert!(ops >= 300, "{job}");
    assert!(
        took < 15.0,
        "stopped on the error, not the duration: {took} s"
    );
    // Removal works on the full pool: nothing of the run is left.
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0).len());
}

/// What an rbd run may leave in a pool of its own: its image (listed by
/// `rbd ls`) and the image's objects.
pub(crate) fn rbd_leftovers(pool: &str) -> Vec<String> {
    let ls = rbd(&["ls", pool]);
    assert!(ls.status.success(), "{ls:?}");
    String::from_utf8_lossy(&ls.stdout)
        .lines()
        .map(str::to_string)
        .chain(list(pool).into_iter().filter(|n| {
            ["rbd_data.", "rbd_header.", "rbd_object_map.", "rbd_id."]
                .iter()
                .any(|p| n.starts_with(p))
        }))
        .collect()
}

/// The one-line error of a run on `pool` whose max_bytes quota `quota` is
/// reached: the quota, the command that lifts it, the refused write.
pub(crate) fn names_the_quota(err: &str, pool: &str, quota: &str) {
    assert!(
        err.contains(&format!(
            "pool '{pool}' is full: quota max_bytes {quota} reached"
        )) && err.contains(&format!("`ceph osd pool set-quota {pool} max_bytes 0`"))
            && err.contains("(122) Disk quota exceeded"),
        "{err}"
    );
}

/// Fills `pool` past a max_bytes quota of 1 MiB with a foreign object and
/// waits until the mons flag it full.
pub(crate) fn fill_past_quota(pool: &str) {
    ceph(&["osd", "pool", "set-quota", pool, "max_bytes", "1048576"]);
    let dir = tempfile::tempdir().unwrap();
    let filler = dir.path().join("filler");
    std::fs::write(&filler, vec![7u8; 2 << 20]).unwrap();
    let put = common::rados(&["-p", pool, "put", "filler", filler.to_str().unwrap()]);
    assert!(put.status.success(), "{put:?}");
    wait_full_quota(pool);
}

/// Waits (bounded) until the mons flag `pool` full for its quota.
pub(crate) fn wait_full_quota(pool: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v: Value =
            serde_json::from_str(&ceph(&["osd", "pool", "ls", "detail", "-f", "json"])).unwrap();
        let flags = v
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pool_name"] == pool)
            .and_then(|p| p["flags_names"].as_str().map(str::to_string))
            .unwrap_or_default();
        if flags.split(',').any(|f| f == "full_quota") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{pool} never flagged full: {flags}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// RBD writes reaching a pool's quota mid-run: librbd's ImageCtx inherits
/// the ioctx's FULL_TRY, so the writes fail at once with EDQUOT instead of
/// pausing until the 30 s op timeout; the error names the quota and the
/// command that lifts it, the partial summary is printed, exit 3 (ops failed mid-run), and the
/// image is removed although the pool is full (its `rbd_trash` object,
/// which a full pool could not create, was made before the run). The pool
/// is new, so it has no `rbd_trash` of its own.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn rbd_quota_reached_fails_fast_naming_the_quota() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-rbdfull", "rbd");
    assert!(!list(p.0).contains(&"rbd_trash".to_string()));
    ceph(&["osd", "pool", "set-quota", p.0, "max_bytes", "33554432"]);
    let args = format!(
        "--format json --op-timeout 30s rbd -p {} --size 1G --rw write --bs 4K --iodepth 8 \
         -d 30 --no-precondition",
        p.0
    );
    let t = Instant::now();
    let r = spawn(&args.split_whitespace().collect::<Vec<_>>());
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(90));
    let total = t.elapsed();
    eprintln!("{stderr}\nexit after {total:?}");
    assert_eq!(code, Some(3), "{stderr}");
    names_the_quota(stderr.lines().last().unwrap(), p.0, "33554432 (32 MiB)");
    let job = job_stopped_on_edquot(&stdout, &stderr);
    // The mon flags the pool a few seconds late: at least the quota lands.
    // Small writes, so that the flag comes long before the whole image is
    // written: overwrites add no bytes and pass a full pool (64 KiB writes
    // covered the 1 GiB in 5 s on reef, before the flag, and ran 30 s).
    assert!(job["ops"].as_u64().unwrap() * 4096 >= 33554432, "{job}");
    let took = stdout_took(&stdout);
    assert!(
        took < 15.0,
        "stopped on the error, not the op timeout: {took} s"
    );
    assert!(total < Duration::from_secs(25), "{total:?}");
    assert_eq!(rbd_leftovers(p.0), Vec::<String>::new());
}

/// A test area larger than the room the pool's quota leaves is refused
/// before the preconditioning writes anything: one line naming the quota
/// and the largest test area that fits; no image is left.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_test_area_over_the_quota_is_refused_before_preconditioning() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-rbdquota", "rbd");
    ceph(&["osd", "pool", "set-quota", p.0, "max_bytes", "67108864"]);
    let t = Instant::now();
    let r = spawn(&[
        "rbd", "-p", p.0, "--size", "256M", "--rw", "randread", "-d", "5",
    ]);
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    eprintln!("{stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("pool '{}' has a quota of max_bytes 64 MiB", p.0))
            && stderr.contains("the test area 256 MiB does not fit"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(rbd_leftovers(p.0), Vec::<String>::new());
}

/// An rbd run on a pool that is full already fails at its first write (the
/// pool's `rbd_trash`, or the image), at once, naming the quota; nothing of
/// the run is left.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn rbd_on_a_full_pool_fails_at_once() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-rbdfull0", "rbd");
    fill_past_quota(p.0);
    let mut before = list(p.0);
    before.sort();
    let t = Instant::now();
    let r = spawn(&[
        "--op-timeout",
        "30s",
        "rbd",
        "-p",
        p.0,
        "--size",
        "64M",
        "--rw",
        "randwrite",
        "-d",
        "10",
    ]);
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    let took = t.elapsed();
    eprintln!("{stderr}\nexit after {took:?}");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    names_the_quota(&stderr, p.0, "1048576 (1 MiB)");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let mut after = list(p.0);
    after.sort();
    assert_eq!(after, before);
}

/// Preconditioning an existing image on a pool that is full: the first
/// write fails at once with EDQUOT, the run stops there (no job), the
/// summary of the preconditioning is printed with the error naming the
/// quota, exit 1; the image is not cephbench's and stays.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn rbd_precondition_on_a_full_pool_stops_with_a_summary() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-rbdfullpre", "rbd");
    let img = format!("{}/precond", p.0);
    assert!(rbd(&["create", "--size", "64M", &img]).status.success());
    fill_past_quota(p.0);
    let t = Instant::now();
    let args = format!(
        "--format json --op-timeout 30s rbd -p {} --image precond --allow-write --rw randread -d 10",
        p.0
    );
    let r = spawn(&args.split(' ').collect::<Vec<_>>());
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    let took = t.elapsed();
    eprintln!("{stderr}\nexit after {took:?}");
    assert_eq!(code, Some(1), "{stderr}");
    names_the_quota(stderr.lines().last().unwrap(), p.0, "1048576 (1 MiB)");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    assert_eq!(
        v["jobs"].as_array().unwrap().len(),
        0,
        "no job ran: {stdout}"
    );
    let pre = &v["workload"]["precondition"];
    assert!(pre["bytes"].as_u64().unwrap() < 64 << 20, "{pre}");
    let ls = rbd(&["ls", p.0]);
    assert_eq!(String::from_utf8_lossy(&ls.stdout).trim(), "precond");
}

/// The (validated) JSON result's job, checked to have stopped on EDQUOT.
pub(crate) fn job_stopped_on_edquot(stdout: &str, stderr: &str) -> Value {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    let job = v["jobs"][0].clone();
    assert_eq!(job["stop_reason"], "error");
    assert!(
        job["errors_by_errno"]["122"].as_u64().unwrap() >= 1,
        "{job}"
    );
    job
}

pub(crate) fn stdout_took(stdout: &str) -> f64 {
    serde_json::from_str::<Value>(stdout)
        .ok()
        .and_then(|v| v["jobs"][0]["elapsed_s"].as_f64())
        .unwrap_or(f64::NAN)
}
