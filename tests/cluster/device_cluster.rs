//! The drive rig: `cluster.sh up --slow-flush osd.1=DUR --class ...` starts osd.1 with
//! tools/slowflush preloaded (every fsync/fdatasync of that OSD takes a set extra time,
//! as on a drive without power-loss protection) and gives the two OSDs device classes,
//! so that a pool on each class can be compared. Checked here against the delay the
//! test sets itself: the slow pool's QD1 write mean rises by at least the delay, the
//! slow OSD's own BlueStore kv sync round shows it and the other OSD's does not, and
//! each OSD's row names its class; `osd-bench` names the slow drive from the
//! OSDs' own benches, at two delays; `compare` and `suite --pools` name the
//! moved share and the slow pool's OSD. The rig is a cluster of its own (2 bluestore OSDs
//! in a network namespace), started and stopped by its tests.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use common::ok;

/// In RAM: the OSDs' block files on tmpfs flush in no time, so the injected
/// delay is all that tells the two drives apart. On the host's disk a CI run
/// saw both OSDs' flushes go from 0.3 to 1.5 ms and back within a minute,
/// which no projection check can tell from the drive under test.
const DIR: &str = "/dev/shm/cephbench-device-test";
const NAME: &str = "cbdevtest";
const SUBNET: &str = "198.51.105";
const CEPHBENCH: &str = env!("CARGO_BIN_EXE_cephbench");

fn cluster(args: &[&str]) -> Output {
    common::cluster_sh(DIR, args)
}

/// One OSD's figures of a run: (osd, class, kv sync round mean ms).
type OsdRow = (i64, String, f64);

/// A job's share of its mean, ms (0 when absent).
fn share(v: &Value, part: &str) -> f64 {
    v["jobs"][0]["attribution"]["shares"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["part"] == part))
        .map_or(0.0, |s| s["ns"].as_f64().unwrap() / 1e6)
}

/// The shares of the split the test follows.
const PARTS: [&str; 5] = [
    "public_network",
    "osd_queue",
    "osd_local",
    "device_flush",
    "unattributed",
];

/// The JSON result of 4 KiB QD1 writes on `pool` (`args`: duration, ramp).
fn qd1_json(pool: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(CEPHBENCH)
        .args(["-c", &format!("{DIR}/ceph.conf"), "--progress", "never"])
        .args(["--format", "json", "rados", "write", "-p", pool])
        .args(["-b", "4K", "-t", "1"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// 4 KiB QD1 writes on `pool` for 3 s: (client mean ms, the OSD rows, the
/// job's shares in [`PARTS`] order).
fn qd1(pool: &str) -> (f64, Vec<OsdRow>, Vec<f64>) {
    let v: Value = serde_json::from_slice(&qd1_json(pool, &["-d", "3", "--ramp", "1s"])).unwrap();
    common::validate(&v);
    let mean = v["jobs"][0]["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    let rows = v["osds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["osd"].as_i64().unwrap(),
                o["device"]["class"].as_str().unwrap_or("?").to_string(),
                o["counters"]["kv_sync_lat"]["mean_ns"]
                    .as_f64()
                    .unwrap_or(0.0)
                    / 1e6,
            )
        })
        .collect();
    let shares = PARTS.iter().map(|p| share(&v, p)).collect();
    (mean, rows, shares)
}

/// The findings of a short QD1 write run on `pool`.
fn findings(pool: &str) -> Vec<String> {
    let v: Value = serde_json::from_slice(&qd1_json(pool, &["-d", "2"])).unwrap();
    v["findings"]
        .as_array()
        .map(|a| a.iter().map(|l| l.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// `osd-bench` (JSON, 30 single writes per OSD) with `args`: per OSD (id,
/// median single-write commit ms, kv sync round mean ms), and the findings.
/// Checks the bench wrote what was asked and that the text says the same.
fn osd_bench(args: &[&str]) -> (Vec<(i64, f64, f64)>, Vec<String>) {
    let run = |format: &str| {
        let out = Command::new(CEPHBENCH)
            .args(["-c", &format!("{DIR}/ceph.conf"), "--progress", "never"])
            .args(["--format", format, "osd-bench", "--probes", "30"])
            .args(["--writes", "500"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let v: Value = serde_json::from_slice(&run("json")).unwrap();
    let rows = v["osds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert_eq!(o["bench"]["bytes_written"], 500 * 4096, "{o}");
            assert_eq!(o["qd1"]["samples"], 30, "{o}");
            (
                o["osd"].as_i64().unwrap(),
                o["qd1"]["p50_ns"].as_f64().unwrap() / 1e6,
                o["kv_sync_lat"]["mean_ns"].as_f64().unwrap_or(0.0) / 1e6,
            )
        })
        .collect::<Vec<_>>();
    let findings = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    let text = String::from_utf8(run("text")).unwrap();
    for (osd, ..) in &rows {
        assert!(text.contains(&format!("\nosd.{osd} ")), "{text}");
    }
    (rows, findings)
}

/// The drive rig, up with its two pools (`fast` on osd.0, class plp;
/// `slow` on osd.1, class consumer, its flush delay at 0), for one test at
/// a time (they share its directory); `None` (said) without root.
/// What if the slow pool's drive flushed like the fast pool's, checked:
/// with osd.1's flush delay off, three pairs of runs back to back (the fast
/// pool's reference and the slow pool undelayed, which one goes first
/// alternated), each the delayed run
/// `delayed` (a result file) projected onto the pair's fast run by
/// `compare`, and the pair's undelayed run; the delay is `us` again after.
/// Each pair: (projected ms, measured undelayed ms, that run less its flush
/// beyond 0.1 ms).
fn swap_pairs(delayed: &Path, us: u32, tmp: &Path) -> Vec<(f64, f64, f64)> {
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "0"]),
        "cluster.sh slow-flush 0",
    );
    // Both OSDs' RocksDB compacted first: the fast pool has written and
    // removed several times the slow one's objects by now (it ran fast
    // while the other waited). A CI run saw it 40 % slower than the slow
    // pool undelayed in every pair; compacting takes the removed objects'
    // tombstones out of both OSDs' way.
    for osd in ["osd.0", "osd.1"] {
        let out = Command::new("timeout")
            .args(["120", "ceph", "-c", &format!("{DIR}/ceph.conf")])
            .args(["tell", osd, "compact"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ceph tell {osd} compact: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Pairs back to back, which goes first alternated, and each projection
    // held against its own pair's run, so that the host's drift does not
    // decide it (a CI run saw the fast pool at 1.04 then 1.58 ms a minute
    // apart).
    let mut pairs = Vec::new();
    let mut fast_ms = Vec::new();
    for i in 0..3 {
        let fast_now = tmp.join(format!("fast-now-{us}-{i}.json"));
        let slow_first = i % 2 == 1;
        let slow_run = || qd1_json("slow", &["-d", "2"]);
        let early = slow_first.then(slow_run);
        let fast: Vec<u8> = qd1_json("fast", &["-d", "2"]);
        let off: Value = serde_json::from_slice(&early.unwrap_or_else(slow_run)).unwrap();
        let fv: Value = serde_json::from_slice(&fast).unwrap();
        fast_ms.push(fv["jobs"][0]["latency_ns"]["mean"].as_f64().unwrap() / 1e6);
        std::fs::write(&fast_now, fast).unwrap();
        let out = Command::new(CEPHBENCH)
            .args(["--format", "json", "compare"])
            .arg(&fast_now)
            .arg(delayed)
            .output()
            .unwrap();
        assert!(out.status.success());
        let c: Value = serde_json::from_slice(&out.stdout).unwrap();
        let onto_fast = c["projections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["source"] == 1 && p["projection"]["kind"] == "drives")
            .map(|p| p["projection"]["projected_mean_ns"].as_f64().unwrap() / 1e6)
            .unwrap_or_else(|| panic!("no projection of the slow pool: {c}"));
        let off_ms = off["jobs"][0]["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
        let plp_want = off_ms - share(&off, "device_flush") + 0.1;
        pairs.push((onto_fast, off_ms, plp_want));
    }
    eprintln!("the pairs' fast pool runs, ms: {fast_ms:.3?}");
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", &us.to_string()]),
        "cluster.sh slow-flush",
    );
    pairs
}

/// The median pair's projection error (projected / measured − 1).
fn median_error(pairs: &[(f64, f64, f64)]) -> f64 {
    let mut v: Vec<f64> = pairs.iter().map(|p| p.0 / p.1 - 1.0).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rig() -> Option<(common::Down, std::sync::MutexGuard<'static, ()>)> {
    if !common::is_root() {
        common::cannot_run("the drive rig needs root (network namespace, daemons)");
        return None;
    }
    let turn = common::serial();
    let down = common::up_slow_flush_rig(
        DIR,
        NAME,
        SUBNET,
        "0",
        [("fast", "plp"), ("slow", "consumer")],
    );
    // The rig goes down (the first field) before the turn is given up.
    Some((down, turn))
}

#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_slow_flushing_drive_shows_in_its_pool_and_its_osd_only() {
    let Some(_rig) = rig() else {
        return;
    };
    // Warm both paths, then the baseline without a delay.
    qd1("fast");
    qd1("slow");
    let (fast0, rows_fast0, _) = qd1("fast");
    let (slow0, rows_slow0, shares0) = qd1("slow");
    let d_ms = 3.0;
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "3000"]),
        "cluster.sh slow-flush",
    );
    let (fast1, rows_fast, _) = qd1("fast");
    let (slow1, rows_slow, shares1) = qd1("slow");
    eprintln!(
        "QD1 4K write mean, ms: fast {fast0:.3} -> {fast1:.3}, slow {slow0:.3} -> {slow1:.3} \
         (flush delay {d_ms} ms on osd.1); OSD rows: fast {rows_fast0:?} -> {rows_fast:?}, \
         slow {rows_slow0:?} -> {rows_slow:?}"
    );
    // Each pool sits on its class's OSD, and the report says which drive that is.
    assert_eq!(rows_fast.len(), 1, "{rows_fast:?}");
    assert_eq!((rows_fast[0].0, rows_fast[0].1.as_str()), (0, "plp"));
    assert_eq!(rows_slow.len(), 1, "{rows_slow:?}");
    assert_eq!((rows_slow[0].0, rows_slow[0].1.as_str()), (1, "consumer"));
    // Both pools share the machine's load (2 cores for both OSDs, the mon
    // and the client): judge each rise against the other pool's.
    // The slow pool pays at least the delay more (a write waits for at
    // least one flush).
    let (slow_rise, fast_rise) = (slow1 - slow0, fast1 - fast0);
    assert!(
        slow_rise - fast_rise >= d_ms,
        "slow pool rose {slow_rise:.3} ms, fast pool {fast_rise:.3} ms"
    );
    // The slow OSD's own kv sync round shows the delay; the fast one's does not.
    let (kv_slow, kv_fast) = (
        rows_slow[0].2 - rows_slow0[0].2,
        rows_fast[0].2 - rows_fast0[0].2,
    );
    assert!(
        kv_slow - kv_fast >= d_ms,
        "kv sync round rose {kv_slow:.3} ms on osd.1, {kv_fast:.3} ms on osd.0"
    );
    assert!(
        rows_fast[0].2 + d_ms <= rows_slow[0].2,
        "osd.0's kv sync round ({:.3} ms) is not a delay below osd.1's ({:.3} ms)",
        rows_fast[0].2,
        rows_slow[0].2
    );
    // Where the slow pool's rise went: into the device flush share.
    let moved: Vec<(&str, f64)> = PARTS
        .iter()
        .zip(shares0.iter().zip(&shares1))
        .map(|(p, (a, b))| (*p, b - a))
        .collect();
    eprintln!("slow pool shares before {shares0:.3?}, after {shares1:.3?}: moved {moved:.3?}");
    let flush_moved = moved[3].1;
    assert!(
        flush_moved >= 0.8 * slow_rise,
        "device flush took {flush_moved:.3} ms of the slow pool's {slow_rise:.3} ms rise: {moved:.3?}"
    );
    // The finding names the slow OSD and its pool, and not the fast one.
    let f = findings("slow");
    assert!(
        f.iter().any(|l| l.starts_with("osd.1 (class consumer"))
            && f.iter().any(|l| l.starts_with("pool 'slow'")),
        "{f:?}"
    );
    // (A CPU line may name osd.0 on a busy host: only drive lines count.)
    assert!(
        !f.iter()
            .any(|l| l.starts_with("osd.0") && l.contains("device flush")),
        "{f:?}"
    );
    // The per-OSD check names the same drive from the OSDs' own benches:
    // osd.1's single writes commit at least the delay slower than osd.0's.
    let (rows, f) = osd_bench(&[]);
    eprintln!("osd-bench, {d_ms} ms flush delay on osd.1: {rows:?}\n{f:#?}");
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1]);
    assert!(
        rows[1].1 >= d_ms && rows[1].1 - rows[0].1 >= d_ms,
        "single-write commit, ms: osd.0 {:.3}, osd.1 {:.3}",
        rows[0].1,
        rows[1].1
    );
    assert!(
        rows[1].2 >= d_ms,
        "osd.1's kv sync round {:.3} ms",
        rows[1].2
    );
    // The verdict ranks osd.1 against osd.0, never the other way round (osd.0
    // may still get a line of its own when its file-backed "drive" flushes
    // slowly under the machine's load: see below).
    assert!(
        f.iter()
            .any(|l| l.starts_with("osd.1 (class consumer") && l.contains("x osd.0's")),
        "{f:?}"
    );
    assert!(
        !f.iter()
            .any(|l| l.starts_with("osd.0") && l.contains("x osd.1's")),
        "{f:?}"
    );
    // Its last line ranks the drives by what PLP would gain them: osd.1
    // first.
    assert!(
        f.last().is_some_and(
            |l| l.starts_with("PLP drives (a flush of at most 0.100 ms) would gain: osd.1 ")
        ),
        "{f:?}"
    );
    // Comparisons keep the evidence: `compare` of the two pools' runs, and a
    // suite on both pools (alternated, 3 runs each), name the moved share and
    // the slow pool's OSD.
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for pool in ["fast", "slow"] {
        let f = tmp.path().join(format!("{pool}.json"));
        std::fs::write(&f, qd1_json(pool, &["-d", "3"])).unwrap();
        files.push(f);
    }
    let out = Command::new(CEPHBENCH)
        .arg("compare")
        .args(&files)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
    eprintln!("{text}");
    assert!(out.status.success());
    assert!(
        text.contains("write: slow is ")
            && text.contains("slower than fast per op (+")
            && text.contains("of that is the device flush")
            && text.contains("slow's osd.1 (class consumer")
            && text.contains("B: with A's drives: mean "),
        "{text}"
    );
    // What if the slow pool's drive flushed like the fast pool's: its own
    // network, the fast pool's OSD-side shares and (one client host) its
    // unattributed time. Held against the slow pool measured with its delay
    // off. The host's load still drifts, so the fast pool's reference run
    // and the undelayed run are made back to back and each projection is
    // held against its own pair: the median pair within 15 % (medians -1 to
    // +9 % over four runs in RAM; single pairs -17 to +45 %: this host's
    // noise on a 0.3 ms write). With PLP drives: against the undelayed run less its
    // flush share beyond 0.1 ms (a file flushes slower than a PLP drive),
    // within 30 % below or 0.5 ms above: at the delayed run's slow pace the OSD's
    // threads wake from idle more slowly, which the projection keeps (0.54
    // to 0.70 projected against 0.31 to 0.44 measured here: local +0.13 ms,
    // unattributed +0.18 ms under the delay).
    let slow_run: Value = serde_json::from_slice(&std::fs::read(&files[1]).unwrap()).unwrap();
    let plp = slow_run["jobs"][0]["projections"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["kind"] == "flush"))
        .map(|p| p["projected_mean_ns"].as_f64().unwrap() / 1e6)
        .unwrap_or_else(|| panic!("no PLP projection: {}", slow_run["jobs"][0]));
    let pairs = swap_pairs(&files[1], 3000, tmp.path());
    let median = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        let mut v: Vec<f64> = pairs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let drives_off = median_error(&pairs);
    // The PLP projection errs high (see above): up to 30 % or 0.5 ms above,
    // at most 30 % below.
    let plp_off = median(&|p| {
        let d = plp - p.2;
        d / if d > 0.0 {
            (0.3 * p.2).max(0.5)
        } else {
            0.3 * p.2
        }
    });
    eprintln!(
        "what if, per pair (slow pool with the fast pool's drives, measured undelayed, \
         undelayed less its flush beyond 0.1 ms), ms: {pairs:.3?}; with PLP drives {plp:.3} ms; \
         median: drives {:+.0} %, PLP {:+.2} of its bound",
        drives_off * 100.0,
        plp_off
    );
    assert!(
        drives_off.abs() <= 0.15,
        "projected with the fast pool's drives against measured undelayed: {pairs:.3?}"
    );
    assert!(
        plp_off.abs() <= 1.0,
        "projected {plp:.3} ms with PLP drives, the undelayed runs less their flush: {pairs:.3?}"
    );
    let suite = tmp.path().join("qd1.toml");
    std::fs::write(
        &suite,
        "name = \"qd1\"\nruns = 3\nduration = \"2s\"\nramp = \"0s\"\n[[job]]\nname = \"4k QD1\"\n\
         command = \"rados\"\nmode = \"write\"\nblock-size = \"4K\"\nconcurrent-ios = 1\n",
    )
    .unwrap();
    let out = Command::new(CEPHBENCH)
        .args(["-c", &format!("{DIR}/ceph.conf"), "--progress", "never"])
        .arg("suite")
        .arg(&suite)
        .args(["--pools", "fast,slow"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
    eprintln!("{text}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("4k QD1/write: slow is ")
            && text.contains("of that is the device flush")
            && text.contains("slow's osd.1 (class consumer")
            && text.contains("Welch"),
        "{text}"
    );
    // Three alternated runs a side tell a pool several times slower from noise
    // (with two, Welch's test has one degree of freedom: one slow first run
    // of the fast pool, 28 % off, hid a 3.7x difference in a CI run).
    assert!(
        text.lines()
            .any(|l| l.starts_with("4k QD1/write  IOPS") && l.trim_end().ends_with('*')),
        "{text}"
    );
    // (The fast pool's osd.0 is not checked for the absence of a finding: on
    // this shared machine a file-backed OSD's fdatasync itself reached 3 ms
    // while other tests ran — a finding that is true of that "drive".)
    // Turned off, the slow pool comes back.
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "0"]),
        "cluster.sh slow-flush 0",
    );
    let (slow2, _, shares2) = qd1("slow");
    // Two undelayed runs of the slow pool give each share's run-to-run noise;
    // the 3 ms delay moved the network and queue shares by no more than that
    // (with 0.3 ms of slack for this shared machine).
    for (k, part) in PARTS.iter().enumerate().take(2) {
        let noise = (shares2[k] - shares0[k]).abs();
        let moved = (shares1[k] - shares0[k]).abs();
        eprintln!("{part}: moved {moved:.3} ms under the delay, run-to-run noise {noise:.3} ms");
        assert!(
            moved <= 2.0 * noise + 0.3,
            "{part} moved {moved:.3} ms under a flush delay (noise {noise:.3} ms)"
        );
    }
    // A second delay value, 1 ms: the slow pool's QD1 writes rise by at least
    // it, most of the rise lands in the device flush, and osd-bench through
    // `-p` benches only the slow pool's OSD and sees it.
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "1000"]),
        "cluster.sh slow-flush 1000",
    );
    let (slow3, _, shares3) = qd1("slow");
    let (rise, flush) = (slow3 - slow2, shares3[3] - shares2[3]);
    eprintln!(
        "1 ms flush delay: slow pool {slow2:.3} -> {slow3:.3} ms, device flush +{flush:.3} ms"
    );
    assert!(
        rise >= 1.0,
        "slow pool rose {rise:.3} ms under a 1 ms flush delay"
    );
    assert!(
        flush >= 0.8 * rise,
        "device flush took {flush:.3} of {rise:.3} ms"
    );
    // The drive swap again at 1 ms per flush: the 1 ms run projected onto
    // the fast pool's drives, against the slow pool undelayed, ±15 %.
    let delayed_1ms = tmp.path().join("slow-1ms.json");
    std::fs::write(&delayed_1ms, qd1_json("slow", &["-d", "3"])).unwrap();
    let pairs_1ms = swap_pairs(&delayed_1ms, 1000, tmp.path());
    let err_1ms = median_error(&pairs_1ms);
    eprintln!(
        "what if at 1 ms, per pair (projected, measured undelayed, -): {pairs_1ms:.3?}; median \
         {:+.0} %",
        err_1ms * 100.0
    );
    assert!(
        err_1ms.abs() <= 0.15,
        "1 ms: projected with the fast pool's drives against measured undelayed: {pairs_1ms:.3?}"
    );
    let (rows, f) = osd_bench(&["-p", "slow"]);
    eprintln!("osd-bench -p slow, 1 ms flush delay on osd.1: {rows:?}\n{f:#?}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].0 == 1 && rows[0].1 >= 1.0, "{rows:?}");
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "0"]),
        "cluster.sh slow-flush 0",
    );
    assert!(
        slow2 < slow1 - d_ms / 2.0,
        "slow pool did not recover: {slow1:.3} -> {slow2:.3} ms"
    );
    ok(cluster(&["down"]), "cluster.sh down");
    assert!(!Path::new(DIR).exists(), "{DIR} left after down");
}

/// 4 KiB QD4 writes on the size-1 pool of osd.1 for 40 s (the counters
/// sampled every 2 s, the default), osd.1 flushing 1 ms slow; when
/// `switch_at` is given, its flush delay goes from 1 to 4 ms once the live
/// line (stderr, the run's own clock) reaches that second. The JSON result,
/// and the run-clock second the switch was made at.
///
/// Not from 0: with the drives in RAM an undelayed write takes 0.6 ms at
/// QD4, and a CI run saw this host's load double its p99 for 7 s on its
/// own (a real change, correctly reported without an OSD, but not the
/// one under test). A drive 1 ms slow per flush writes in ~2.5 ms, which
/// the host's load does not double.
fn changed_run(tag: &str, switch_at: Option<u64>) -> (Value, Option<f64>) {
    use std::io::{BufRead, BufReader, Read};
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "1000"]),
        "cluster.sh slow-flush 1000",
    );
    let mut child = Command::new(CEPHBENCH)
        .args(["-c", &format!("{DIR}/ceph.conf"), "--progress", "always"])
        .args(["--format", "json"])
        .args(["rados", "write", "-p", "slow", "-b", "4K", "-t", "4"])
        // Kept: removing 100,000 objects a run costs a minute, and the rig
        // goes down with them.
        .args([
            "-d",
            "40",
            "--ramp",
            "2s",
            "--run-name",
            tag,
            "--no-cleanup",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).map(|_| s)
    });
    let mut switched = None;
    let mut err = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let sec = line
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<u64>().ok());
        if let (Some(at), Some(sec), None) = (switch_at, sec, switched) {
            if sec >= at {
                ok(
                    cluster(&["slow-flush", "--osd", "1", "--us", "4000"]),
                    "cluster.sh slow-flush 4000",
                );
                switched = Some(sec as f64);
            }
        }
        err.push_str(&line);
        err.push('\n');
    }
    let status = child.wait().unwrap();
    let out = reader.join().unwrap().unwrap();
    ok(
        cluster(&["slow-flush", "--osd", "1", "--us", "0"]),
        "cluster.sh slow-flush 0",
    );
    assert!(status.success(), "{err}");
    assert!(
        switch_at.is_none() || switched.is_some(),
        "no switch: {err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    common::validate(&v);
    (v, switched)
}

/// A drive that slows mid-run is found as one lasting change, when it
/// began, with the slowed OSD's own counter named and the other OSD not;
/// the same run without the switch reports no change. Twice with the
/// switch, so that it is not luck.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_drive_slowed_mid_run_is_one_change_naming_its_osd() {
    let Some(_rig) = rig() else {
        return;
    };
    qd1("slow");
    for (k, switch_at) in [Some(15), None, Some(15)].into_iter().enumerate() {
        let (v, switched) = changed_run(&format!("chg{k}"), switch_at);
        let job = &v["jobs"][0];
        assert_eq!(job["errors"], 0, "{job}");
        let changes = job["changes"].as_array().expect("the run was judged");
        let summary: Vec<String> = changes
            .iter()
            .map(|c| {
                format!(
                    "{:.0} s: IOPS {:.0} -> {:.0}, osds {}",
                    c["t_s"], c["before"]["iops"], c["after"]["iops"], c["osds"]
                )
            })
            .collect();
        eprintln!("run {k}: switch {switched:?}: changes {summary:#?}");
        let Some(at) = switched else {
            assert!(changes.is_empty(), "a steady run reported {summary:#?}");
            continue;
        };
        assert_eq!(changes.len(), 1, "{summary:#?}");
        let c = &changes[0];
        let t = c["t_s"].as_f64().unwrap();
        assert!((t - at).abs() <= 3.0, "change at {t} s, switch at {at} s");
        let (before, after) = (
            c["before"]["iops"].as_f64().unwrap(),
            c["after"]["iops"].as_f64().unwrap(),
        );
        assert!(after <= 0.5 * before, "IOPS {before:.0} -> {after:.0}");
        let named: Vec<(i64, &str)> = c["osds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["osd"].as_i64().unwrap(), m["counter"].as_str().unwrap()))
            .collect();
        assert!(
            named.contains(&(1, "kv_sync_lat")),
            "osd.1's kv sync round not named: {named:?}"
        );
        assert!(named.iter().all(|m| m.0 == 1), "{named:?}");
        // The text report says it in one line, naming osd.1's drive.
        let text = common::render_text(&v);
        let line: String = text
            .lines()
            .skip_while(|l| !l.starts_with("  Change:"))
            .enumerate()
            .take_while(|(i, l)| *i == 0 || l.starts_with("    "))
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            line.contains("osd.1 (class consumer") && line.contains("kv sync round"),
            "{text}"
        );
    }
}
