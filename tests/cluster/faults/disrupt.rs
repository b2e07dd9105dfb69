//! `--disrupt`: client I/O through an OSD taken out and put back in, on a
//! size-3 pool of three OSDs. The figures are checked against the `ceph`
//! CLI (an independent watcher polling `ceph status` while the run goes on)
//! and the job's own timeline.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::*;
use crate::common::{ceph, conf, pool_sized, serial, validate, wait_clean};

const OSD: &str = "1";

/// Whether osd.1 is in, from `ceph osd dump`.
fn osd_in() -> bool {
    let v: Value = crate::common::query(false, serde_json::json!({"prefix": "osd dump"}));
    v["osds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["osd"] == 1)
        .map(|o| o["in"] == 1)
        .expect("osd.1 in the map")
}

/// Puts osd.1 back in however the test ends.
struct BackIn;

impl Drop for BackIn {
    fn drop(&mut self) {
        let _ = Command::new("ceph")
            .arg("-c")
            .arg(conf())
            .args(["osd", "in", OSD])
            .output();
    }
}

fn three_osds_up() {
    let v: Value = crate::common::query(false, serde_json::json!({"prefix": "osd stat"}));
    assert!(
        v["num_up_osds"].as_u64().unwrap() >= 3 && v["num_in_osds"].as_u64().unwrap() >= 3,
        "this test needs 3 OSDs up and in: {v}"
    );
}

/// What the watcher saw: (seconds since it started, OSDs in, every PG
/// active+clean, objects misplaced, recovery objects/s), one `ceph
/// status` at a time.
type Seen = Arc<Mutex<Vec<(f64, u64, bool, u64, f64)>>>;

fn watch(stop: Arc<AtomicBool>) -> (Seen, std::thread::JoinHandle<()>) {
    let seen: Seen = Arc::default();
    let out = Arc::clone(&seen);
    let t0 = Instant::now();
    let h = std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let o = Command::new("ceph")
                .arg("-c")
                .arg(conf())
                .args(["status", "-f", "json"])
                .output();
            let t = t0.elapsed().as_secs_f64();
            if let Some(v) = o
                .ok()
                .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            {
                let inn = v["osdmap"]["num_in_osds"].as_u64().unwrap_or(0);
                let pgs = v["pgmap"]["num_pgs"].as_u64().unwrap_or(0);
                let clean: u64 = v["pgmap"]["pgs_by_state"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter(|s| s["state_name"] == "active+clean")
                            .map(|s| s["count"].as_u64().unwrap_or(0))
                            .sum()
                    })
                    .unwrap_or(0);
                let misplaced = v["pgmap"]["misplaced_objects"].as_u64().unwrap_or(0);
                let rate = v["pgmap"]["recovering_objects_per_sec"]
                    .as_f64()
                    .unwrap_or(0.0);
                out.lock()
                    .unwrap()
                    .push((t, inn, pgs > 0 && clean == pgs, misplaced, rate));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    (seen, h)
}

/// 40 s of 4 KiB writes at QD4 on `pool` with `--disrupt spec`, JSON on stdout.
fn write_40s(pool: &str, spec: &str, run: &str) -> Running {
    write_for(pool, spec, "40", run)
}

/// `secs` seconds of 4 KiB writes at QD4 on `pool` with `--disrupt spec`.
fn write_for(pool: &str, spec: &str, secs: &str, run: &str) -> Running {
    spawn(&[
        "--format",
        "json",
        "--progress",
        "always",
        "--disrupt",
        spec,
        "--allow-disrupt",
        "rados",
        "write",
        "-p",
        pool,
        "-b",
        "4K",
        "-t",
        "4",
        "-d",
        secs,
        "--run-name",
        run,
    ])
}

/// The 40 s write with osd.1 out at 2 s (back in at 30 s) on the size-3
/// pool, once osd.1 is out as `ceph` says.
fn write_until_out(run: &str) -> (&'static str, Running) {
    write_until_out_as(run, "osd.1:out@2s,in@30s", "40")
}

/// `secs` seconds of writes with `spec` on the size-3 pool, once osd.1 is
/// out as `ceph` says.
fn write_until_out_as(run: &str, spec: &str, secs: &str) -> (&'static str, Running) {
    three_osds_up();
    let p = pool_sized("cbt-disrupt", "rados", 3);
    wait_clean();
    let r = write_for(p, spec, secs, run);
    let t = Instant::now();
    while osd_in() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "osd.1 never went out: {}",
            r.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (p, r)
}

fn phase<'a>(d: &'a Value, name: &str) -> Option<&'a Value> {
    d["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == name)
}

/// A 40 s 4 KiB write at QD4 on a size-3 pool while osd.1 goes out at 5 s
/// and back in at 20 s: no errors, every phase reported, the actions on
/// time, osd.1 in at the end and the cluster active+clean; the figures
/// match the timeline and an independent `ceph status` watcher.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_out_and_in_through_a_write() {
    let _g = serial();
    let _back = BackIn;
    three_osds_up();
    let p = pool_sized("cbt-disrupt", "rados", 3);
    wait_clean();
    let stop = Arc::new(AtomicBool::new(false));
    let (seen, watcher) = watch(Arc::clone(&stop));
    let r = write_40s(p, "osd.1:out@5s,in@20s", "disrupt");
    let (code, stdout, stderr, waited) = r.finish(Duration::from_secs(150));
    stop.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    eprintln!("run took {waited:?}");
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    let job = &v["jobs"][0];
    assert_eq!(job["errors"], 0, "{job}");
    let d = &v["disruption"];
    eprintln!("actions {}\nrecovery {}", d["actions"], d["recovery"]);
    assert_eq!(d["osd"], 1);
    // The actions took effect within ~2 s of their times.
    let acts = d["actions"].as_array().unwrap();
    assert_eq!(acts.len(), 2, "no restore needed on exit: {acts:?}");
    for (a, (what, at)) in acts.iter().zip([("out", 5.0), ("in", 20.0)]) {
        assert_eq!(a["action"], what);
        assert_eq!(a["on_exit"], false);
        let done = a["done_s"].as_f64().unwrap_or_else(|| panic!("{a}"));
        eprintln!("{what}: asked {at} s, done {done:.3} s");
        assert!(done >= at && done < at + 2.0, "{a}");
    }
    let done = |i: usize| acts[i]["done_s"].as_f64().unwrap();

    // Every phase, no errors; their ops add up to the job's, and each
    // phase's ops and IOPS are its intervals' in the timeline.
    let timeline = job["timeline"].as_array().unwrap();
    let mut total = 0;
    let mut phase_p99s = Vec::new();
    for name in ["before", "degraded", "recovering", "after"] {
        let ph = phase(d, name).unwrap_or_else(|| panic!("no {name} phase: {}", d["phases"]));
        assert_eq!(ph["errors"], 0);
        let (from, to) = (ph["from_s"].as_f64().unwrap(), ph["to_s"].as_f64().unwrap());
        let mut prev = 0.0;
        let (mut ops, mut dur, mut longest_zero, mut zero) = (0, 0.0, 0.0, 0.0);
        // The lowest and highest of its intervals' p99s.
        let (mut p99_lo, mut p99_hi) = (f64::MAX, 0.0_f64);
        for s in timeline {
            let t = s["t_s"].as_f64().unwrap();
            let (a, b) = (prev, t);
            prev = t;
            if s["ramp"] == true || b <= from + 1e-9 || a >= to - 1e-9 {
                continue;
            }
            let n = s["ops"].as_u64().unwrap();
            if let Some(p) = s["p99_latency_ns"].as_f64() {
                p99_lo = p99_lo.min(p);
                p99_hi = p99_hi.max(p);
            }
            ops += n;
            dur += b - a;
            if n == 0 {
                zero += b - a;
                longest_zero = f64::max(longest_zero, zero);
            } else {
                zero = 0.0;
            }
        }
        assert_eq!(ph["ops"].as_u64().unwrap(), ops, "{name}: {ph}");
        // Its own p99 (its intervals' histograms merged) lies between its
        // intervals' lowest and highest p99 (each has 1 % of its ops at or
        // above its own p99), to the histograms' 3 digits; the worst is the
        // highest.
        let p99 = ph["p99_ns"].as_f64().unwrap();
        assert!(
            p99 >= p99_lo * 0.999 && p99 <= p99_hi * 1.001,
            "{name}: p99 {p99} outside its intervals' {p99_lo}..{p99_hi}: {ph}"
        );
        assert_eq!(
            ph["worst_interval_p99_ns"].as_f64(),
            Some(p99_hi),
            "{name}: {ph}"
        );
        phase_p99s.push(p99);
        let iops = ph["iops"].as_f64().unwrap();
        assert!(
            (iops - ops as f64 / dur).abs() < 0.01 * iops + 0.1,
            "{name}: {ph}"
        );
        let stall = ph["longest_stall_s"].as_f64().unwrap();
        assert!(stall + 1e-9 >= longest_zero, "{name}: {ph}");
        assert!(
            stall <= job["longest_gap_s"].as_f64().unwrap() + 1e-6,
            "{name}: a phase's stall is within the job's longest gap: {ph}"
        );
        eprintln!(
            "{name:>10}: {from:5.1}-{to:5.1} s  {iops:7.0} IOPS  mean {:.2} ms  p99 {:.2} ms  worst p99 {:.2} ms  max {:.2} ms  stall {stall:.3} s",
            ph["mean_ns"].as_f64().unwrap() / 1e6,
            p99 / 1e6,
            p99_hi / 1e6,
            ph["max_ns"].as_f64().unwrap_or(0.0) / 1e6,
        );
        total += ops;
    }
    assert_eq!(total, job["ops"].as_u64().unwrap());
    // The job's p99, from the workers' own histograms (not the sampler's),
    // lies between its phases' p99s.
    let job_p99 = job["latency_ns"]["p99"].as_f64().unwrap();
    let (lo, hi) = phase_p99s
        .iter()
        .fold((f64::MAX, 0.0_f64), |(l, h), &p| (l.min(p), h.max(p)));
    assert!(
        job_p99 >= lo * 0.999 && job_p99 <= hi * 1.001,
        "the job's p99 {job_p99} outside its phases' {lo}..{hi}"
    );
    // The phases follow the actions.
    let deg = phase(d, "degraded").unwrap()["from_s"].as_f64().unwrap();
    assert!((deg - done(0)).abs() <= 1.0, "{deg} vs {}", done(0));
    let rec = &d["recovery"];
    let rec_from = rec["recovering_from_s"].as_f64().unwrap();
    assert!(
        rec_from <= done(1) + 1e-9,
        "recovery begins by the `in`: {rec}"
    );

    // The independent watcher: osd.1 out then in, the span between them
    // and the time from `in` to active+clean as cephbench saw them.
    let seen = seen.lock().unwrap().clone();
    let out_at = seen
        .iter()
        .find(|s| s.1 == 2)
        .expect("watcher saw osd.1 out")
        .0;
    let in_at = seen
        .iter()
        .find(|s| s.0 > out_at && s.1 == 3)
        .expect("watcher saw osd.1 in again")
        .0;
    let clean_at = seen
        .iter()
        .find(|s| s.0 > in_at && s.2)
        .expect("watcher saw active+clean again")
        .0;
    let span = in_at - out_at;
    eprintln!(
        "watcher: out→in {span:.1} s, in→clean {:.1} s; cephbench: {:.1} s, {}",
        clean_at - in_at,
        done(1) - done(0),
        rec["clean_after_last_action_s"]
    );
    assert!((span - (done(1) - done(0))).abs() < 2.5, "{span}");
    let clean_after = rec["clean_after_last_action_s"].as_f64().unwrap();
    assert!(
        (clean_after - (clean_at - in_at)).abs() < 2.5,
        "cephbench {clean_after} s, watcher {} s",
        clean_at - in_at
    );
    assert_eq!(rec["clean_by_job_end"], true, "{rec}");
    // Objects misplaced while osd.1 was out (its PGs remapped), at most
    // as the watcher saw them (the counts grow with the writes: 25 %).
    let misplaced = seen.iter().map(|s| s.3).max().unwrap_or(0) as f64;
    let ours = rec["max_misplaced_objects"].as_f64().unwrap();
    eprintln!("misplaced: cephbench {ours}, watcher {misplaced}");
    assert!(
        (ours - misplaced).abs() <= 0.25 * misplaced.max(ours) + 50.0,
        "cephbench {ours}, watcher {misplaced}"
    );
    // Recovery traffic (the mgr's rate): cephbench reports one only where
    // `ceph status` showed one too.
    let rate = seen.iter().map(|s| s.4).fold(0.0, f64::max);
    let our_rate = rec["max_objects_per_sec"].as_f64().unwrap();
    eprintln!("recovery objects/s: cephbench {our_rate}, watcher {rate}");
    assert!(our_rate == 0.0 || rate > 0.0, "{rec}");
    // Recovery rates are the looks' (the mgr's) highest.
    let looks = d["looks"].as_array().unwrap();
    let max_obj = looks
        .iter()
        .filter(|l| l["t_s"].as_f64().unwrap() >= rec_from)
        .map(|l| l["recovering_objects_per_sec"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(rec["max_objects_per_sec"].as_f64().unwrap(), max_obj);

    // At the end: osd.1 in, the cluster active+clean, as `ceph` says,
    // and no record of the change left behind.
    assert!(osd_in(), "osd.1 is not in after the run");
    assert_eq!(records_of("disrupt"), Vec::<Value>::new());
    let t = Instant::now();
    wait_clean();
    assert!(t.elapsed() < Duration::from_secs(5), "not clean at the end");
    // The text report says it too.
    let text = crate::common::render_text(&v);
    assert!(text.contains("Disruption: osd.1:out@5s,in@20s"), "{text}");
    assert!(text.contains("Recovery: active+clean"), "{text}");
}

/// SIGINT while osd.1 is out: the run stops, reports, and marks osd.1 in
/// again on its way out (exit 130).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_sigint_while_out_puts_the_osd_back_in() {
    let _g = serial();
    let _back = BackIn;
    let (_, r) = write_until_out("disrupt-int");
    std::thread::sleep(Duration::from_secs(2));
    r.signal("-INT");
    let (code, stdout, stderr, waited) = r.finish(Duration::from_secs(60));
    eprintln!("exit {waited:?} after SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(osd_in(), "osd.1 was left out: {stderr}");
    assert_eq!(records_of("disrupt-int"), Vec::<Value>::new());
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    assert_eq!(v["interrupted"], true);
    let acts = v["disruption"]["actions"].as_array().unwrap();
    let last = acts.last().unwrap();
    assert_eq!(
        (&last["action"], &last["on_exit"]),
        (&"in".into(), &true.into()),
        "{acts:?}"
    );
    assert!(last["done_s"].as_f64().is_some(), "{last}");
    assert_eq!(v["jobs"][0]["errors"], 0);
    wait_clean();
}

/// SIGKILL while osd.1 is out (`out@2s,in@60s`): nothing of the run puts
/// it back, but it recorded the change in the cluster before making it.
/// Another run warns about the record, naming `cephbench cleanup`; the
/// cleanup marks osd.1 in, says so in one line, and removes the record.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_sigkill_while_out_is_undone_by_cleanup() {
    let _g = serial();
    let _back = BackIn;
    let (p, r) = write_until_out_as("disrupt-kill", "osd.1:out@2s,in@60s", "70");
    let _clean = CleanupRun(p, "disrupt-kill");
    let pid = r.pid();
    // While the run goes on: its record, naming it.
    let rec = records_of("disrupt-kill");
    assert_eq!(rec.len(), 1, "{rec:?}");
    assert_eq!(
        rec[0]["change"],
        serde_json::json!({"kind": "osd_out", "osd": 1})
    );
    assert_eq!(rec[0]["pid"], pid);
    assert_eq!(rec[0]["pool"], p);
    assert_eq!(rec[0]["command"], "rados write");
    assert_eq!(
        rec[0]["host"].as_str(),
        Some(cephbench::names::hostname().as_str())
    );
    r.signal("-KILL");
    let (code, _, _, _) = r.finish(Duration::from_secs(10));
    assert_eq!(code, None, "killed by the signal");
    std::thread::sleep(Duration::from_secs(2));
    assert!(!osd_in(), "osd.1 stays out after the kill");
    assert_eq!(records_of("disrupt-kill").len(), 1, "the record stays");

    // Another run warns, in one line naming the fix.
    let out = crate::common::cephbench()
        .args([
            "--progress",
            "never",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "--ops",
            "20",
        ])
        .args(["--run-name", "disrupt-after"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("osd.1 out (by run 'disrupt-kill'"))
        .collect();
    assert_eq!(warned.len(), 1, "{err}");
    assert!(
        warned[0].starts_with("cephbench: warning: the cluster still holds 1 change(s) of cephbench runs that ended without undoing them")
            && warned[0].contains(&format!("pid {pid} on host "))
            && warned[0].ends_with(&format!("undo them with `cephbench cleanup -p {p}`")),
        "{err}"
    );

    // Seen from another PID namespace (as from another host) the run's
    // pid means nothing there: its record, renewed seconds ago, may be a
    // live run's, and a cleanup from there leaves it alone, saying so.
    if crate::common::is_root() {
        let out = Command::new("unshare")
            .args(["-p", "-f", "--mount-proc"])
            .arg(assert_cmd::cargo::cargo_bin("cephbench"))
            .arg("-c")
            .arg(conf())
            .args(["cleanup", "-p", p, "--run-name", "disrupt-kill"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.lines().any(|l| l
                .starts_with("left osd.1 out as it is: made by run 'disrupt-kill'")
                && l.contains("s ago from host ")
                && l.ends_with(
                    "its run may still be going (a record not renewed for 300 s is a dead run's)"
                )),
            "{stdout}"
        );
        assert!(!osd_in(), "left out");
        assert_eq!(records_of("disrupt-kill").len(), 1, "the record stays");
    } else {
        crate::common::cannot_run("another PID namespace (unshare -p) needs root");
    }

    // The cleanup puts osd.1 back in and says so, one line; the record goes.
    let out = crate::common::cephbench()
        .args(["cleanup", "-p", p])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprintln!("{stdout}{stderr}");
    assert!(out.status.success(), "{stderr}");
    let said: Vec<&str> = stdout.lines().filter(|l| l.contains("osd.1")).collect();
    assert_eq!(said.len(), 1, "{stdout}");
    assert!(
        said[0].starts_with("restored osd.1: marked in: osd.1 out made by run 'disrupt-kill' (rados write on pool 'cbt-disrupt')")
            && said[0].ends_with(&format!("its process {pid} has ended")),
        "{stdout}"
    );
    assert!(osd_in(), "osd.1 is in again after the cleanup");
    assert_eq!(
        records_of("disrupt-kill"),
        Vec::<Value>::new(),
        "the record is gone"
    );
    // A second cleanup has nothing to undo.
    let out = crate::common::cephbench()
        .args(["cleanup", "-p", p])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("osd.1"));
    wait_clean();
}

/// Before anything is written: an identity without mon 'allow rw' is
/// refused naming the cap (exit 1); an OSD that does not exist is bad
/// input (exit 2); neither leaves an object behind.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_refused_without_the_caps_or_the_osd() {
    let _g = serial();
    let p = pool_sized("cbt-disrupt", "rados", 3);
    let before = ours(p).len();
    let dir = tempfile::tempdir().unwrap();
    let keyring = dir.path().join("keyring");
    let _key = super::support::Key::new(
        "client.cbt-nodisrupt",
        &["mon", "allow r", "osd", "allow rwx"],
        &keyring,
    );
    let run = |extra: &[&str], osd: &str| {
        let spec = format!("osd.{osd}:out@2s,in@4s");
        let mut args = extra.to_vec();
        args.extend([
            "--progress",
            "never",
            "--disrupt",
            &spec,
            "--allow-disrupt",
            "rados",
            "write",
            "-p",
            p,
            "-d",
            "6",
        ]);
        spawn(&args).finish(Duration::from_secs(60))
    };
    let as_it = ["--id", "cbt-nodisrupt", "-k", keyring.to_str().unwrap()];
    let (code, stdout, stderr, _) = run(&as_it, OSD);
    // With mon 'allow rw' it may mark OSDs out, but not record the change
    // in the config-key store first: refused too, naming that cap.
    ceph(&[
        "auth",
        "caps",
        "client.cbt-nodisrupt",
        "mon",
        "allow rw",
        "osd",
        "allow rwx",
    ]);
    let (code_rw, stdout_rw, stderr_rw, _) = run(&as_it, OSD);
    let _ = Command::new("ceph")
        .arg("-c")
        .arg(conf())
        .args(["auth", "rm", "client.cbt-nodisrupt"])
        .output();
    eprintln!("{stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("client.cbt-nodisrupt may not mark OSDs out")
            && stderr.contains("mon 'allow rw'"),
        "{stderr}"
    );
    assert_eq!(ours(p).len(), before, "nothing written");
    assert!(osd_in());
    eprintln!("{stderr_rw}");
    assert_eq!(code_rw, Some(1), "{stderr_rw}");
    assert!(stdout_rw.is_empty());
    assert_eq!(stderr_rw.trim_end().lines().count(), 1, "{stderr_rw}");
    assert!(
        stderr_rw.contains(
            "cannot record the change in the mons' config-key store as client.cbt-nodisrupt"
        ) && stderr_rw.contains("mon 'allow service config-key rw'"),
        "{stderr_rw}"
    );
    assert_eq!(ours(p).len(), before, "nothing written");
    assert!(osd_in());

    let (code, _, stderr, _) = run(&[], "9");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("osd.9 does not exist: give one of osd.0"),
        "{stderr}"
    );
    assert_eq!(ours(p).len(), before, "nothing written");
}

/// Two SIGINTs while osd.1 is out, the second 300 ms after the first (an
/// exit at once): osd.1 is in again all the same.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_second_sigint_still_puts_the_osd_back_in() {
    let _g = serial();
    let _back = BackIn;
    let (p, r) = write_until_out("disrupt-int2");
    r.signal("-INT");
    std::thread::sleep(Duration::from_millis(300));
    r.signal("-INT");
    let (code, _, stderr, waited) = r.finish(Duration::from_secs(60));
    eprintln!("exit {waited:?} after the second SIGINT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(osd_in(), "osd.1 was left out: {stderr}");
    // The exit at once removed the record of what it put back.
    assert_eq!(records_of("disrupt-int2"), Vec::<Value>::new());
    let out = crate::common::rados(&["-p", p, "ls"]);
    let left = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("cephbench_"))
        .count();
    if left > 0 {
        let _ = crate::common::cephbench()
            .args(["cleanup", "-p", p, "--run-name", "disrupt-int2"])
            .output();
    }
    wait_clean();
}

/// An out-only plan: the run records the change while osd.1 is out, puts
/// osd.1 back in on its way out, leaves no record, and then reports no OSD
/// as changed (it read the state while its own restore was
/// on its way and said "osd.1 now up and out" of an OSD that was in).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_out_only_restored_on_exit_reports_no_osd_changed() {
    let _g = serial();
    let _back = BackIn;
    three_osds_up();
    let p = pool_sized("cbt-disrupt", "rados", 3);
    wait_clean();
    let r = write_for(p, "osd.1:out@3s", "8", "disrupt-exit");
    // While osd.1 is out the change is recorded in the cluster; the run
    // removes the record once it has put osd.1 back.
    let t = Instant::now();
    while osd_in() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "osd.1 never went out: {}",
            r.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let rec = records_of("disrupt-exit");
    assert_eq!(rec.len(), 1, "{rec:?}");
    assert_eq!(rec[0]["change"]["kind"], "osd_out");
    let (code, stdout, stderr, _) = r.finish(Duration::from_secs(150));
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let acts = v["disruption"]["actions"].as_array().unwrap();
    assert!(
        acts.iter()
            .any(|a| a["action"] == "in" && a["on_exit"] == true),
        "osd.1 put back in on exit: {acts:?}"
    );
    assert!(osd_in(), "osd.1 is not in after the run");
    assert_eq!(records_of("disrupt-exit"), Vec::<Value>::new());
    let warnings = v["warnings"].to_string();
    assert!(!warnings.contains("changed state"), "{warnings}");
    wait_clean();
}

/// Every OSD up, from `ceph osd stat`.
fn all_up() -> bool {
    let v: Value = crate::common::query(false, serde_json::json!({"prefix": "osd stat"}));
    v["num_up_osds"] == v["num_osds"]
}

/// `down`: osd.2 marked down at 4 s of a 20 s write comes back up by
/// itself; the client sees a stall and no errors, the phases follow, and
/// the run reports active+clean (waiting after the job if need be) as the
/// `ceph` CLI finds it at the end.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn disrupt_down_through_a_write() {
    let _g = serial();
    three_osds_up();
    let p = pool_sized("cbt-disrupt", "rados", 3);
    wait_clean();
    let r = write_for(p, "osd.2:down@4s", "20", "disrupt-down");
    let (code, stdout, stderr, waited) = r.finish(Duration::from_secs(150));
    eprintln!("run took {waited:?}");
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    validate(&v);
    assert_eq!(v["jobs"][0]["errors"], 0);
    let d = &v["disruption"];
    let a = &d["actions"][0];
    assert_eq!(a["action"], "down");
    let done = a["done_s"].as_f64().unwrap();
    assert!((4.0..6.0).contains(&done), "{a}");
    assert_eq!(
        d["actions"].as_array().unwrap().len(),
        1,
        "nothing to put back"
    );
    for name in ["before", "degraded"] {
        assert!(phase(d, name).is_some(), "no {name}: {}", d["phases"]);
    }
    let rec = &d["recovery"];
    eprintln!("recovery {rec}");
    for p in d["phases"].as_array().unwrap() {
        eprintln!(
            "{:>10}: {:.0} IOPS, stall {:.3} s",
            p["phase"].as_str().unwrap(),
            p["iops"].as_f64().unwrap(),
            p["longest_stall_s"].as_f64().unwrap()
        );
    }
    let clean_at = rec["clean_at_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("not clean within the wait: {rec}"));
    assert!(rec["waited_after_job_s"].as_f64().unwrap() <= 60.0 + 2.0);
    assert_eq!(
        rec["clean_by_job_end"],
        clean_at <= rec["job_end_s"].as_f64().unwrap()
    );
    // As the `ceph` CLI finds it now: every OSD up, every PG active+clean.
    assert!(all_up(), "an OSD is still down");
    assert_eq!(
        records_of("disrupt-down"),
        Vec::<Value>::new(),
        "the down's record went once osd.2 was up"
    );
    let t = Instant::now();
    wait_clean();
    assert!(t.elapsed() < Duration::from_secs(5), "not clean at the end");
}
