//! SIGINT at every phase of a run: preconditioning, cleanup, twice at once.

use std::time::Duration;

use serde_json::Value;

use super::support::*;
use crate::common::{cephbench, serial, validate};

/// SIGINT while RBD preconditions the test area: stops promptly, prints
/// the (empty) result marked interrupted, removes the image, exits 130.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn sigint_during_rbd_preconditioning() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-rbd", "rbd");
    let r = spawn(&[
        "--progress",
        "always",
        "--format",
        "json",
        "rbd",
        "-p",
        p.0,
        "--size",
        "8G",
        "--rw",
        "randread",
        "-d",
        "30",
    ]);
    r.wait_stderr("preconditioning:", Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(1));
    r.signal("-INT");
    let (code, stdout, stderr, waited) = r.finish(Duration::from_secs(30));
    eprintln!("exit {waited:?} after SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    validate(&v);
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 0, "no job ran");
    let pre = v["workload"]["precondition"]["bytes"].as_u64().unwrap();
    assert!(pre > 0 && pre < 8 << 30, "precondition cut short: {pre}");
    assert!(stderr.contains("cleaning up: removing image"), "{stderr}");
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0));
}

/// Each OSD's op history size, as it answers.
fn op_history_sizes() -> Vec<String> {
    (0..3)
        .map(|osd| {
            crate::common::ceph(&[
                "tell",
                &format!("osd.{osd}"),
                "config",
                "get",
                "osd_op_history_size",
            ])
        })
        .collect()
}

/// Each OSD's op history size and duration, as it answers.
fn op_history_settings() -> Vec<(String, String)> {
    let get = |osd: i32, key: &str| {
        let v: Value = serde_json::from_str(&crate::common::ceph(&[
            "tell",
            &format!("osd.{osd}"),
            "config",
            "get",
            key,
            "-f",
            "json",
        ]))
        .unwrap();
        v[key].as_str().unwrap().to_string()
    };
    (0..3)
        .map(|osd| {
            (
                get(osd, "osd_op_history_size"),
                get(osd, "osd_op_history_duration"),
            )
        })
        .collect()
}

/// SIGKILL of a run with `--op-history 500`: its OSDs keep the raised
/// history (the run recorded each OSD's change in the cluster first);
/// `cephbench cleanup` puts each OSD's two settings back, one line per
/// OSD, and removes the records.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn sigkill_with_op_history_is_put_back_by_cleanup() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-kill", "rados");
    let _clean = CleanupRun(p.0, "opkill");
    let before = op_history_settings();
    let r = spawn(&[
        "--op-history",
        "500",
        "--progress",
        "always",
        "rados",
        "write",
        "-p",
        p.0,
        "-b",
        "4K",
        "-t",
        "4",
        "-d",
        "60",
        "--run-name",
        "opkill",
    ]);
    // The job runs once every OSD of the pool has its history raised.
    r.wait_stderr("    1 ", Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(2));
    let recs = records_of("opkill");
    assert!(!recs.is_empty(), "no record: {}", r.stderr());
    let pid = r.pid();
    r.signal("-KILL");
    let (code, _, _, _) = r.finish(Duration::from_secs(10));
    assert_eq!(code, None, "killed by the signal");
    let raised = op_history_settings();
    let mut osds: Vec<i64> = recs
        .iter()
        .map(|r| {
            assert_eq!(r["change"]["kind"], "osd_config", "{r}");
            assert_eq!(r["pid"], pid);
            let osd = r["change"]["osd"].as_i64().unwrap();
            assert_eq!(
                raised[osd as usize],
                ("500".to_string(), "5".to_string()),
                "osd.{osd} keeps the raised history after the kill"
            );
            let was = &r["change"]["settings"];
            assert_eq!(
                (
                    was[0]["was"].as_str().unwrap(),
                    was[1]["was"].as_str().unwrap()
                ),
                (
                    before[osd as usize].0.as_str(),
                    before[osd as usize].1.as_str()
                ),
                "{r}"
            );
            osd
        })
        .collect();
    osds.sort_unstable();
    let out = cephbench().args(["cleanup", "-p", p.0]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("restored osd."))
        .collect();
    assert_eq!(said.len(), osds.len(), "one line per OSD: {stdout}");
    for osd in &osds {
        let (size, dur) = &before[*osd as usize];
        let line = format!(
            "restored osd.{osd}: osd_op_history_size {size}, osd_op_history_duration {dur}: \
             osd.{osd} osd_op_history_size 500 (was {size}), osd_op_history_duration 5 (was {dur}) \
             made by run 'opkill' (rados write on pool 'cbt-f2-kill')"
        );
        assert!(
            said.iter().any(|l| l.starts_with(&line)),
            "{line}\n{stdout}"
        );
    }
    assert_eq!(op_history_settings(), before, "the settings are back");
    assert_eq!(
        records_of("opkill"),
        Vec::<Value>::new(),
        "the records are gone"
    );
    assert!(ours(p.0).is_empty());
}

/// A 4 KiB write run of 4 s into `pool` as run `run` (after the options
/// `first`), once it has started removing its few thousand objects.
fn write_until_cleanup(pool: &str, run: &str, first: &[&str]) -> Running {
    let rest = [
        "--progress",
        "always",
        "rados",
        "write",
        "-p",
        pool,
        "-b",
        "4K",
        "-t",
        "32",
        "-d",
        "4",
        "--run-name",
        run,
    ];
    let args: Vec<&str> = first.iter().chain(rest.iter()).copied().collect();
    let r = spawn(&args);
    r.wait_stderr("cleaning up: removing the", Duration::from_secs(30));
    r
}

/// Two SIGINTs while a write run removes its objects: the first lets the
/// removal go on, the second exits at once (130) printing the results so
/// far, marked interrupted (the report would have come after the removal),
/// and the exact `cephbench cleanup` command, which then removes every
/// leftover. The OSDs' op history, raised by `--op-history` for the run, is
/// back.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn second_sigint_during_cleanup_exits_at_once_naming_the_command() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-clean", "rados");
    let history = op_history_sizes();
    let r = write_until_cleanup(p.0, "sigclean", &["--op-history", "500"]);
    r.signal("-INT");
    // Well past the window in which a repeat counts as the same interrupt.
    std::thread::sleep(Duration::from_secs(1));
    r.signal("-INT");
    let (code, _stdout, stderr, waited) = r.finish(Duration::from_secs(30));
    eprintln!("exit {waited:?} after the second SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    assert_eq!(
        op_history_sizes(),
        history,
        "the OSDs' op history was not put back"
    );
    let cmd = format!("cephbench cleanup -p {} --run-name sigclean", p.0);
    assert!(stderr.contains(&format!("`{cmd}`")), "{stderr}");
    // The results so far: the job's measured ops, each a 4 KiB object
    // written; at least as many as the objects the cut removal left.
    assert!(
        stderr.contains("cephbench: INTERRUPTED (a second interrupt): the results so far"),
        "{stderr}"
    );
    let ops: u64 = stderr
        .lines()
        .find(|l| l.starts_with("cephbench:   measured "))
        .and_then(|l| l.split_once(" s: ")?.1.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no ops in the results so far: {stderr}"));
    let left = ours(p.0).len();
    assert!(
        ops as usize >= left && ops > 0,
        "{ops} ops, {left} left: {stderr}"
    );
    eprintln!("{left} objects left by the interrupted cleanup");
    assert!(left > 0, "the cleanup was cut short");
    let out = cephbench()
        .args(["cleanup", "-p", p.0, "--run-name", "sigclean"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(ours(p.0).is_empty());
}

/// One SIGINT while a write run removes its objects: the removal goes on to
/// the end, the report is printed, and the exit code says the run was
/// interrupted (130; it was 0: only an interrupt of the job itself counted).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn one_sigint_during_cleanup_finishes_it_and_exits_130() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-clean1", "rados");
    let r = write_until_cleanup(p.0, "sigclean1", &[]);
    r.signal("-INT");
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stdout.contains("Removed "), "{stdout}");
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0));
}

/// One interrupt delivered twice, as `timeout` delivers it (to its child,
/// then to the child's process group): the second, 50 ms later, is the same
/// interrupt, not a request to exit at once — the run still prints its
/// partial result and removes its objects. (Before, about one run in four
/// under `timeout` exited at once, without result or cleanup.)
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_doubled_sigint_is_one_interrupt() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-twice", "rados");
    let args = format!(
        "--progress always --format json rados write -p {} -b 4K -t 4 -d 30 --run-name twice",
        p.0
    );
    let r = spawn(&args.split(' ').collect::<Vec<_>>());
    r.wait_stderr("    1 ", Duration::from_secs(30));
    r.signal("-INT");
    std::thread::sleep(Duration::from_millis(50));
    r.signal("-INT");
    let (code, stdout, stderr, waited) = r.finish(Duration::from_secs(30));
    eprintln!("exit {waited:?} after the doubled SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!stderr.contains("interrupted again"), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    assert_eq!(v["interrupted"], true);
    assert!(v["jobs"][0]["ops"].as_u64().unwrap() > 0, "{stdout}");
    assert!(ours(p.0).is_empty(), "{:?}", ours(p.0));
}

/// The images of this pool that cephbench made, in the pool and in its
/// trash (where an image removal cut short leaves one).
fn our_images(pool: &str) -> Vec<String> {
    let ls = rbd(&["ls", pool]);
    let trash = rbd(&["trash", "ls", pool]);
    assert!(ls.status.success() && trash.status.success());
    String::from_utf8_lossy(&ls.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&trash.stdout).lines())
        .filter(|l| l.contains("cephbench_img."))
        .map(str::to_string)
        .collect()
}

/// A multi-terabyte image: SIGINT a few seconds into the run exits within
/// 10 s and leaves no image behind. A second SIGINT while the image is
/// being removed (librbd walks every object the image could hold) exits at
/// once: the signals are watched on a thread of their own, not on the
/// runtime that librbd's removal blocks. `cephbench cleanup` then removes
/// the half-removed image from the pool's trash.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn sigint_on_a_multi_terabyte_image_exits_promptly_and_leaves_no_image() {
    let _g = serial();
    let p = TempPool::new("cbt-f2-huge", "rbd");
    let run = |size: &str| {
        spawn(&[
            "--progress",
            "always",
            "rbd",
            "-p",
            p.0,
            "--size",
            size,
            "--test-area",
            "16G",
            "--rw",
            "randwrite",
            "--no-precondition",
            "-d",
            "60",
        ])
    };
    let r = run("8T");
    r.wait_stderr("    1 ", Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(2));
    r.signal("-INT");
    let (code, _stdout, stderr, waited) = r.finish(Duration::from_secs(60));
    eprintln!("exit {waited:?} after SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(waited < Duration::from_secs(10), "{waited:?}: {stderr}");
    assert_eq!(our_images(p.0), Vec::<String>::new());

    // Interrupted twice while the image is removed: out at once.
    let r = run("16T");
    r.wait_stderr("    1 ", Duration::from_secs(60));
    r.signal("-INT");
    r.wait_stderr("cleaning up: removing image", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(400));
    r.signal("-INT");
    let (code, _stdout, stderr, waited) = r.finish(Duration::from_secs(60));
    eprintln!("exit {waited:?} after the second SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(waited < Duration::from_secs(2), "{waited:?}: {stderr}");
    assert!(stderr.contains("interrupted again"), "{stderr}");
    eprintln!("left behind: {:?}", our_images(p.0));
    let out = crate::common::cephbench()
        .args(["cleanup", "-p", p.0])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(our_images(p.0), Vec::<String>::new());
}
