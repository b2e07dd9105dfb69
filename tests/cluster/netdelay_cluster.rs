//! The delay-switch rig end to end: a 3-OSD bluestore cluster started by
//! `cluster.sh up --switch` (every daemon and the client in a netns of its own, joined by
//! cephbench-netdelay; osd.2 with the slow-flush shim, at 0), `ceph -s` and a cephbench
//! `rados write` from the client namespace on a size-3 pool, then a one-way delay on the
//! cluster network only and 1 ms on the client's public path only: each raises the write
//! latency by about two delays (a round trip over the delayed link: primary -> replicas ->
//! primary, replicas in parallel; or client -> primary -> client), and the split puts it in
//! the cluster-network or the public-network share; then a slow flush on the replica osd.2
//! lands in the replica share, not in the cluster network.
//!
//! A second test starts the rig with three client namespaces ("hosts" of their own, each
//! with its own switch port and address) and runs a group: three `cephbench agent`s, one
//! per client namespace, and a controller; merged figures against the agents' own, and a
//! delay on one client's link only shows in that client's row.
//!
//! Starts and stops its own cluster (it does not use CEPHBENCH_TEST_CONF) in
//! $CEPHBENCH_NETDELAY_TEST_DIR (default /dev/shm/cephbench-netdelay-test, in RAM), namespaces
//! prefixed $CEPHBENCH_NETDELAY_TEST_NAME (default cbndtest); the tests take turns.
//! Needs root and `ip netns`; skipped with a message otherwise. Needs the switch binary,
//! which `cargo build --workspace` (tests/run.sh) builds.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::ok;

const POOL: &str = "ndtest";
/// The one-way delay put on the cluster network, and on the client link, µs.
const DELAY_US: u32 = 2000;
/// The replica whose drive gets slow flushes, and by how much, µs.
const SLOW_OSD: u32 = 2;
const FLUSH_US: u32 = 2000;
const CEPHBENCH: &str = env!("CARGO_BIN_EXE_cephbench");

fn env_or(var: &str, default: &str) -> &'static str {
    let v = std::env::var(var).unwrap_or_else(|_| default.to_string());
    Box::leak(v.into_boxed_str())
}

/// The rig's cluster directory: in RAM, so that the OSDs' block files flush
/// in no time and the injected delays are all that moves. On the host's disk
/// the device-flush share's run-to-run range was 0.39 ms (0.08 ms in RAM),
/// and the flush slowed or sped up with the op's pace, which a cable
/// projection keeps as measured: its median error was -20 % there, -4 % in
/// RAM.
fn dir() -> &'static str {
    static D: OnceLock<&'static str> = OnceLock::new();
    D.get_or_init(|| {
        env_or(
            "CEPHBENCH_NETDELAY_TEST_DIR",
            "/dev/shm/cephbench-netdelay-test",
        )
    })
}

/// The rig's name (namespace prefix).
fn name() -> &'static str {
    static N: OnceLock<&'static str> = OnceLock::new();
    N.get_or_init(|| env_or("CEPHBENCH_NETDELAY_TEST_NAME", "cbndtest"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/cluster.sh")
}

/// target/<profile>/cephbench-netdelay, next to this test's own directory (target/<profile>/deps).
fn switch_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("cephbench-netdelay");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo build --workspace` (tests/run.sh does)",
        p.display()
    );
    p
}

fn cluster(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .env("CEPHBENCH_NETDELAY", switch_bin())
        .output()
        .expect("run cluster.sh")
}

fn skip_reason() -> Option<String> {
    // Once per process: the tests start at once on the harness's threads, and a second
    // `ip netns add` of the same probe name fails ("File exists"), failing both tests.
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(probe_rig).clone()
}

fn probe_rig() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .to_string();
    if uid != "0" {
        return Some(format!("not root (euid {uid})"));
    }
    let probe = format!("cbndprobe{}", std::process::id());
    let add = Command::new("ip")
        .args(["netns", "add", &probe])
        .output()
        .ok()?;
    if !add.status.success() {
        return Some(format!(
            "`ip netns add` fails: {}",
            String::from_utf8_lossy(&add.stderr).trim()
        ));
    }
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    if !Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    None
}

/// Stops the cluster (switch and namespaces included) even when the test fails.
struct Down;
impl Drop for Down {
    fn drop(&mut self) {
        let _ = cluster(&["down", "--dir", dir()]);
    }
}

struct Lat {
    mean_ms: f64,
    p50_ms: f64,
    /// The attribution's shares, ms.
    public_ms: f64,
    /// The cluster network's share: held to the back network's own round
    /// trip, the rest of the OSDs' round trip is `messengers_ms`.
    cluster_ms: f64,
    messengers_ms: f64,
    replica_ms: f64,
    flush_ms: f64,
    /// The client's fastest ICMP echo round trip to each OSD's host (mean
    /// over OSDs), ms: the delay the switch gives a frame it sends on time.
    icmp_ms: f64,
    /// The same to each OSD's cluster address, from the client's own port
    /// on the cluster network.
    back_icmp_ms: f64,
    findings: Vec<String>,
    /// The run's mean projected with a cluster network 2D faster per round
    /// trip (`report --what-if cluster-rtt:-2D`), ms.
    cable_ms: Option<f64>,
}

/// `cephbench rados MODE` at QD1 for 4 s (1 s ramp) from the client namespace: its JSON.
fn bench_json(mode: &str, block: &str, tag: &str) -> serde_json::Value {
    bench_json_with(mode, block, tag, &[])
}

fn bench_json_with(mode: &str, block: &str, tag: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "exec",
        "--dir",
        dir(),
        "--",
        CEPHBENCH,
        "rados",
        mode,
        "-p",
        POOL,
        "-b",
        block,
    ];
    args.extend(["-t", "1", "-d", "4", "--ramp", "1s", "--progress", "never"]);
    args.extend(["--format", "json", "--run-name", tag]);
    args.extend(extra);
    if mode == "write" {
        args.push("--no-cleanup");
    }
    let out = ok(cluster(&args), &format!("cephbench rados {mode}"));
    serde_json::from_str(&out).expect("one JSON document")
}

/// A job's attribution share, ms.
fn share(job: &serde_json::Value, part: &str) -> f64 {
    job["attribution"]["shares"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["part"] == part))
        .and_then(|s| s["ns"].as_f64())
        .unwrap_or_else(|| panic!("no {part} share: {}", job["attribution"]))
        / 1e6
}

fn write_run(tag: &str) -> Lat {
    let v = bench_json("write", "4K", tag);
    let job = &v["jobs"][0];
    assert!(job["ops"].as_u64().unwrap() > 50, "too few ops: {job}");
    assert_eq!(job["errors"].as_u64(), Some(0));
    let l = &job["latency_ns"];
    let icmp: Vec<f64> = v["network"]["client_rtt"]
        .as_array()
        .expect("client round trips")
        .iter()
        .filter(|r| r["method"] == "icmp_echo" && r["samples"].as_u64() > Some(0))
        .map(|r| r["min_us"].as_f64().unwrap() / 1e3)
        .collect();
    assert!(
        !icmp.is_empty(),
        "no ICMP round trips as root: {}",
        v["network"]
    );
    let back: Vec<f64> = v["network"]["back_rtt"]
        .as_array()
        .expect("round trips to the OSDs' cluster addresses (client 0 is on that network)")
        .iter()
        .filter(|r| r["method"] == "icmp_echo" && r["samples"].as_u64() > Some(0))
        .map(|r| r["min_us"].as_f64().unwrap() / 1e3)
        .collect();
    assert_eq!(
        back.len(),
        3,
        "one back round trip per OSD: {}",
        v["network"]
    );
    common::validate(&v);
    let r: cephbench::result::BenchResult = serde_json::from_value(v.clone()).unwrap();
    let cable = cephbench::explain::whatif::with_cluster_cable(
        &r,
        &r.jobs[0],
        2.0 * f64::from(DELAY_US) * 1e3,
    );
    Lat {
        cable_ms: cable.map(|p| p.projected_mean_ns / 1e6),
        icmp_ms: icmp.iter().sum::<f64>() / icmp.len() as f64,
        back_icmp_ms: back.iter().sum::<f64>() / back.len() as f64,
        messengers_ms: share(job, "messengers"),
        mean_ms: l["mean"].as_f64().unwrap() / 1e6,
        p50_ms: l["p50"].as_f64().unwrap() / 1e6,
        public_ms: share(job, "public_network"),
        cluster_ms: share(job, "cluster_network"),
        replica_ms: share(job, "replica"),
        flush_ms: share(job, "device_flush"),
        findings: v["findings"]
            .as_array()
            .map(|f| {
                f.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn slow_flush(osd: u32, us: u32) {
    ok(
        cluster(&[
            "slow-flush",
            "--dir",
            dir(),
            "--osd",
            &osd.to_string(),
            "--us",
            &us.to_string(),
        ]),
        "cluster.sh slow-flush",
    );
}

fn median(v: Vec<f64>) -> f64 {
    cephbench::suite::median(&v)
}

/// A share's run-to-run noise: its range over the undelayed runs, ms.
fn noise(runs: &[Lat], f: impl Fn(&Lat) -> f64) -> f64 {
    let v: Vec<f64> = runs.iter().map(f).collect();
    v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
}

fn delay(link: &str, us: u32) {
    ok(
        cluster(&[
            "delay",
            "--dir",
            dir(),
            "--link",
            link,
            "--us",
            &us.to_string(),
        ]),
        "cluster.sh delay",
    );
}

/// The tests' turn on the rig, or `None` (with a message) where it cannot run.
fn take_turn() -> Option<common::Turn> {
    if let Some(why) = skip_reason() {
        common::cannot_run(&format!(
            "the delay-switch cluster test needs root, /dev/net/tun and `ip netns`: {why}"
        ));
        return None;
    }
    Some(common::serial())
}

/// Starts the rig (3 OSDs, `clients` client namespaces) and a size-3 pool;
/// the guard stops it again. Bluestore with `slow_osd` started under the
/// slow-flush shim (at 0), or memstore.
fn up_rig(clients: u32, slow_osd: Option<u32>) -> Down {
    let _ = cluster(&["down", "--dir", dir()]);
    let down = Down;
    let t = Instant::now();
    let n = clients.to_string();
    let mut args = vec!["up", "--switch", "--osds", "3"];
    let slow = slow_osd.map(|o| format!("osd.{o}=0"));
    match &slow {
        Some(spec) => args.extend(["--objectstore", "bluestore", "--slow-flush", spec]),
        None => args.extend(["--objectstore", "memstore"]),
    }
    if clients > 1 {
        args.extend(["--clients", &n]);
    }
    args.extend(["--dir", dir(), "--name", name()]);
    ok(cluster(&args), "cluster.sh up --switch");
    let up_s = t.elapsed().as_secs_f64();
    ok(
        cluster(&[
            "pool",
            "create",
            POOL,
            "--size",
            "3",
            "--pg-num",
            "16",
            "--dir",
            dir(),
        ]),
        "pool create",
    );
    eprintln!(
        "switched cluster ({clients} client namespace(s)) up in {up_s:.1} s, pool ready after {:.1} s",
        t.elapsed().as_secs_f64()
    );
    down
}

/// The checks on the rig with one client namespace and osd.2 under the
/// slow-flush shim, on one start of it (a start and stop is ~25 s of the CI
/// run's), each from no delay anywhere and judged on its own; then that
/// `cluster.sh down` leaves nothing behind.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn the_switched_rig_with_a_slow_flushing_replica() {
    let Some(_serial) = take_turn() else {
        return;
    };
    let _down = up_rig(1, Some(SLOW_OSD));
    common::checks_in_turn(
        &[
            (
                "one-way delays on the cluster and public links raise write latency by 2D",
                one_way_delays_on_cluster_and_public_links_raise_write_latency_by_two_d,
            ),
            (
                "per-op evidence follows a cluster delay",
                per_op_evidence_follows_a_cluster_delay,
            ),
            (
                "diagnose ranks the slow drive first and its gain holds once it is fixed",
                diagnose_ranks_the_slow_drive_first_and_its_gain_holds,
            ),
        ],
        || {
            delay("all", 0);
            slow_flush(SLOW_OSD, 0);
            let _ = cluster(&[
                "exec",
                "--dir",
                dir(),
                "--",
                "ceph",
                "osd",
                "unset",
                "noout",
            ]);
        },
    );
    ok(cluster(&["down", "--dir", dir()]), "down");
    let ns = String::from_utf8(
        Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        !ns.contains(&format!("{}-", name())),
        "namespaces left after down: {ns}"
    );
    assert!(!Path::new(dir()).exists(), "{} left after down", dir());
}

/// `cephbench diagnose` with one OSD's every flush 3 ms slower (injected by
/// the slow-flush shim): that drive is the first weak link, its own bench
/// shows the delay, and the projected QD1 write mean with a drive like its
/// class's median lands within the projection's band (±15 % without one)
/// of the QD1 write measured by a second diagnosis once the delay is gone,
/// which finds nothing standing out. Each keeps to its 1 min budget.
fn diagnose_ranks_the_slow_drive_first_and_its_gain_holds() {
    let run = |format: &str| {
        let t = Instant::now();
        let out = cluster(&[
            "exec",
            "--dir",
            dir(),
            "--",
            "timeout",
            "180",
            CEPHBENCH,
            "--progress",
            "never",
            "--format",
            format,
            "diagnose",
            "-p",
            POOL,
            "--budget",
            "1m",
        ]);
        assert!(out.status.success(), "diagnose: {out:?}");
        let took = t.elapsed().as_secs_f64();
        // The budget, with the command's connect and exit around the plan.
        assert!(took <= 62.0, "diagnose took {took:.1} s of a 1 min budget");
        String::from_utf8(out.stdout).unwrap()
    };
    slow_flush(SLOW_OSD, 3000);
    let doc: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    slow_flush(SLOW_OSD, 0);
    let links = doc["diagnosis"]["weak_links"].as_array().unwrap();
    let first = &links[0];
    assert_eq!(first["kind"], "slow_drives", "{links:?}");
    let osds = first["osds"].as_array().unwrap();
    assert_eq!(osds.len(), 1, "{links:?}");
    assert_eq!(osds[0]["osd"], SLOW_OSD, "{links:?}");
    // The OSD's own single writes hold the injected 3 ms (a commit flushes
    // at least once), the others' do not.
    let commit = |o: u32| -> f64 {
        doc["osd_bench"]["osds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["osd"] == o)
            .unwrap()["qd1"]["p50_ns"]
            .as_f64()
            .unwrap()
            / 1e6
    };
    for o in 0..3 {
        let c = commit(o);
        if o == SLOW_OSD {
            assert!(c >= 3.0, "osd.{o}: single write {c:.3} ms with 3 ms added");
        } else {
            assert!(
                c < 3.0 - 0.5,
                "osd.{o}: single write {c:.3} ms without a delay"
            );
        }
    }
    let gain = &first["gain"];
    // The projection's parts and assumptions, for a miss to be read from the log.
    eprintln!("diagnose: the slow drive's projection: {gain}");
    let qd1 = &doc["runs"]["runs"][0]["result"]["jobs"][0];
    eprintln!(
        "diagnose: the slow run's {} split: {}",
        doc["runs"]["runs"][0]["job"], qd1["attribution"]["shares"]
    );
    let projected = gain["projected_mean_ns"].as_f64().unwrap() / 1e6;
    let (low, high) = match gain["band"].as_object() {
        Some(b) => (
            b["low_pct"].as_f64().unwrap(),
            b["high_pct"].as_f64().unwrap(),
        ),
        None => (-15.0, 15.0),
    };

    // noout distorts nothing of the I/O, but a diagnosis says the cluster
    // was not quiet before it ranks anything.
    ok(
        cluster(&["exec", "--dir", dir(), "--", "ceph", "osd", "set", "noout"]),
        "set noout",
    );
    let text = run("text");
    ok(
        cluster(&[
            "exec",
            "--dir",
            dir(),
            "--",
            "ceph",
            "osd",
            "unset",
            "noout",
        ]),
        "unset noout",
    );
    assert!(text.contains("Nothing stands out:"), "{text}");
    let before = text.find("Before trusting the figures:").expect(&text);
    let noout = text.find("noout").expect(&text);
    assert!(
        before < noout && noout < text.find("Nothing stands out:").unwrap(),
        "{text}"
    );
    assert!(
        text.contains("the cluster was not quiet during 4 of the jobs"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("4k write QD1 "))
        .unwrap_or_else(|| panic!("no QD1 write row: {text}"));
    // job, IOPS, MiB/s, mean ms, p99 ms
    let cells: Vec<&str> = row.split_whitespace().collect();
    let measured: f64 = cells[cells.len() - 2].parse().unwrap();
    let err = (measured / projected - 1.0) * 100.0;
    eprintln!(
        "diagnose: slow osd.{SLOW_OSD}'s drive fixed: QD1 write projected {projected:.3} ms \
         ({low:+.0}/{high:+.0} %), measured {measured:.3} ms once fixed ({err:+.1} %)"
    );
    assert!(
        (low..=high).contains(&err),
        "projected {projected:.3} ms, measured {measured:.3} ms: {err:+.1} % outside {low:+.0}/{high:+.0} %"
    );
}

fn one_way_delays_on_cluster_and_public_links_raise_write_latency_by_two_d() {
    let t_all = Instant::now();
    // The cluster is only reachable from the client namespace.
    let s = ok(
        cluster(&["exec", "--dir", dir(), "--", "ceph", "-s"]),
        "ceph -s",
    );
    assert!(s.contains("3 osds: 3 up") && s.contains("3 in"), "{s}");
    let env = ok(cluster(&["env", "--dir", dir()]), "env");
    assert!(
        env.contains(&format!("CEPHBENCH_CLIENT_NETNS={}-cli", name())),
        "{env}"
    );
    let status = ok(cluster(&["status", "--dir", dir()]), "status");
    assert!(status.contains("switch   running"), "{status}");
    // Replication really crosses the cluster segment: each OSD's cluster address is there.
    let dump = ok(
        cluster(&["exec", "--dir", dir(), "--", "ceph", "osd", "dump"]),
        "osd dump",
    );
    for i in 0..3 {
        assert!(
            dump.contains(&format!("[v2:192.0.2.{}:", 148 + i)),
            "osd.{i} cluster addr: {dump}"
        );
    }
    // Bad requests are refused with a reason.
    let bad = cluster(&[
        "delay",
        "--dir",
        dir(),
        "--link",
        "cluster",
        "--us",
        "10",
        "--osd",
        "7",
    ]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("has 3 OSD"));

    // The first run on a fresh pool pays for PG creation and cold caches: not a baseline.
    write_run("warm");
    // Undelayed, cluster-delayed and client-delayed runs alternate, so the
    // machine's drift (2 shared cores) hits all alike; each comparison is a
    // median. Both delays are D one way: the client delay lengthens each
    // op's cycle as much as the cluster delay does without touching the
    // cluster network, so it is the control for what a longer cycle alone
    // does to the OSDs' timers (slower wake-ups of idle threads and of the
    // virtual disk: +0.1-0.5 ms of device flush here).
    let (mut base, mut clu, mut publ) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        base.push(write_run(&format!("base{i}")));
        delay("cluster", DELAY_US);
        if i == 0 {
            let show = ok(
                cluster(&["switchctl", "--dir", dir(), "show"]),
                "switchctl show",
            );
            assert!(
                show.contains(&format!("osd0c osd1c {DELAY_US}")) && show.contains("cli osd0 0"),
                "{show}"
            );
        }
        clu.push(write_run(&format!("clu{i}")));
        delay("cluster", 0);
        delay("client", DELAY_US);
        publ.push(write_run(&format!("pub{i}")));
        delay("all", 0);
    }
    base.push(write_run("base3"));
    // A drive whose flushes take FLUSH_US longer under the replica osd.2,
    // alternated with an undelayed run.
    let mut flushed = Vec::new();
    for i in 0..2 {
        slow_flush(SLOW_OSD, FLUSH_US);
        flushed.push(write_run(&format!("flush{i}")));
        slow_flush(SLOW_OSD, 0);
        if i == 0 {
            base.push(write_run("again"));
        }
    }
    let t_runs = t_all.elapsed().as_secs_f64();

    // Each share's noise: its range over the five undelayed runs (+ 0.1 ms,
    // the floor below which a median of few runs says nothing). A delayed
    // run is compared with the undelayed run next to it (the machine's load
    // drifts by more than a delay within a minute), and the median of those
    // differences is the rise: cluster-delayed run i with base i before it,
    // client-delayed run i with base i + 1 after it, slow-flush run i with
    // base 3 + i before it.
    type Pick = fn(&Lat) -> f64;
    let shares: [(&str, Pick); 5] = [
        ("public network", |l| l.public_ms),
        ("cluster network", |l| l.cluster_ms),
        ("replica", |l| l.replica_ms),
        ("device flush", |l| l.flush_ms),
        ("OSD messengers", |l| l.messengers_ms),
    ];
    let med = |runs: &[Lat], f: Pick| median(runs.iter().map(f).collect());
    let pairs = |runs: &[Lat], refs: &[&Lat], f: Pick| {
        median(runs.iter().zip(refs).map(|(r, b)| f(r) - f(b)).collect())
    };
    // The rise of `runs` over the undelayed runs from base[first] on.
    let rise = |runs: &[Lat], first: usize, f: Pick| {
        pairs(runs, &base[first..].iter().collect::<Vec<_>>(), f)
    };
    // Cluster-delayed against client-delayed run i, next to each other.
    let clu_vs_pub = |f: Pick| pairs(&clu, &publ.iter().collect::<Vec<_>>(), f);
    let d_us = DELAY_US;
    let mut table = Vec::new();
    for (name, f) in shares {
        table.push(format!(
            "{name}: base {:.3} (noise {:.3}), cluster {d_us}us {:+.3}, client {d_us}us {:+.3}, \
             flush {FLUSH_US}us on osd.{SLOW_OSD} {:+.3}",
            med(&base, f),
            noise(&base, f),
            rise(&clu, 0, f),
            rise(&publ, 1, f),
            rise(&flushed, 3, f)
        ));
    }
    eprintln!(
        "shares, ms (medians; {} runs in {t_runs:.0} s since the rig's start):\n  {}",
        base.len() + clu.len() + publ.len() + flushed.len() + 1,
        table.join("\n  ")
    );
    let each = |runs: &[Lat]| -> Vec<String> {
        runs.iter()
            .map(|l| format!("{:.2}", l.cluster_ms))
            .collect()
    };
    eprintln!(
        "cluster-network share per run, ms: base {:?}, cluster-delayed {:?}, client-delayed {:?}",
        each(&base),
        each(&clu),
        each(&publ)
    );
    let noise_of = |f: Pick| noise(&base, f) + 0.1;
    let within = |what: &str, name: &str, d: f64, n: f64| {
        assert!(
            d.abs() <= n,
            "{what} moved the {name} share by {d:+.3} ms, more than its noise {n:.3} ms"
        );
    };

    // The cluster delay: the cluster-network share rises by 2D (± 20 %);
    // replica and device flush stay within their noise of where the same
    // longer cycle through the client link put them; the public share
    // within its noise of the undelayed runs.
    //
    // The 2D checks take each kind's fastest run against the fastest
    // undelayed one (the floor): the switch is a user-space process on 2
    // shared cores, and a loaded moment delays frames further, never less
    // (a CI run's paired median read +5.5 ms for a 4 ms round trip, runs
    // 7.97, 4.35 and 5.90 ms, while its floor read +4.1).
    let two_d = 2.0 * f64::from(DELAY_US) / 1e3;
    let fastest = |runs: &[Lat], f: Pick| runs.iter().map(f).fold(f64::MAX, f64::min);
    let floor_rise = |runs: &[Lat], f: Pick| fastest(runs, f) - fastest(&base, f);
    let clu_net = floor_rise(&clu, |l| l.cluster_ms);
    assert!(
        (0.8 * two_d..=1.2 * two_d).contains(&clu_net),
        "cluster delay: cluster-network share {clu_net:+.3} ms (fastest runs), want {two_d:.1} ± 20%"
    );
    // The cable's share is held to the back network's own round trip (the
    // client's echo to the OSDs' cluster addresses): undelayed, within its
    // noise of 0; the echo itself rises by 2D with the cluster delay (the
    // delay the test injected), not with the client's; the rest of the
    // OSDs' round trip, their messengers, does not take the delay (against
    // the client delay's runs, whose cycle is as long).
    let (cable_base, cable_noise) = (med(&base, |l| l.cluster_ms), noise_of(|l| l.cluster_ms));
    let back_rise = floor_rise(&clu, |l| l.back_icmp_ms);
    let back_pub = rise(&publ, 1, |l| l.back_icmp_ms);
    let msgr = clu_vs_pub(|l| l.messengers_ms);
    eprintln!(
        "back network: echo {:.3} ms undelayed, {back_rise:+.3} under the cluster delay, \
         {back_pub:+.3} under the client's; cluster-network share undelayed {cable_base:.3} ms \
         (noise {cable_noise:.3}); OSD messengers {:.3} ms undelayed, cluster against client \
         delay {msgr:+.3} ms",
        med(&base, |l| l.back_icmp_ms),
        med(&base, |l| l.messengers_ms),
    );
    assert!(
        cable_base <= cable_noise,
        "undelayed cluster-network share {cable_base:.3} ms, more than its noise {cable_noise:.3}"
    );
    assert!(
        (0.8 * two_d..=1.2 * two_d).contains(&back_rise),
        "cluster delay: back echo {back_rise:+.3} ms (fastest runs), want {two_d:.1} ± 20%"
    );
    assert!(
        back_pub.abs() < 0.3,
        "the client delay moved the back echo by {back_pub:+.3} ms"
    );
    assert!(
        msgr.abs() <= noise_of(|l| l.messengers_ms) + 0.3,
        "the cluster delay moved the OSD messengers share by {msgr:+.3} ms against the client \
         delay's"
    );
    // What if the cable were 2D faster: the cluster-delayed runs projected
    // so come back to the undelayed runs' mean, within 25 % of 2D (fastest
    // runs, as above).
    let projected = clu
        .iter()
        .map(|l| l.cable_ms.expect("a cable projection"))
        .fold(f64::MAX, f64::min);
    let undelayed = fastest(&base, |l| l.mean_ms);
    // Against the measured mean: the delay also slows what the projection
    // keeps (the OSDs' threads wake from idle at a 4 ms pace). With the
    // OSDs on the host's disk that read +32 % (fastest runs) on a ~1.2 ms
    // write, as the flush itself slowed; in RAM, -2 % (fastest), -4 %
    // (medians). Judged on the floors as the 2D checks above: a loaded
    // moment of the switch slows one cluster-delayed run beyond its 4 ms
    // (a CI run's pairs read -1, +316 and +230 %: runs of ~8 and ~6 ms
    // above a ~1.9 ms base, whose cable share was still 4.1-4.3 ms, so
    // their projections kept the load), and medians of 3 took that load
    // whole (+31 % once). Each run's pair error is printed.
    let errors: Vec<f64> = clu
        .iter()
        .zip(&base)
        .map(|(c, b)| c.cable_ms.unwrap_or(f64::NAN) / b.mean_ms - 1.0)
        .collect();
    let floor_err = projected / undelayed - 1.0;
    eprintln!(
        "what if the cluster network were {two_d:.1} ms faster: cluster-delayed runs projected to \
         {projected:.3} ms, undelayed runs measured {undelayed:.3} ms (fastest: {:+.0} %); \
         per pair {:?} %",
        floor_err * 100.0,
        errors
            .iter()
            .map(|e| (e * 100.0).round())
            .collect::<Vec<_>>(),
    );
    assert!(
        (projected - undelayed).abs() <= 0.25 * two_d,
        "projected {projected:.3} ms with the cable {two_d:.1} ms faster, measured {undelayed:.3} ms"
    );
    // And against the measured mean itself: the floors within 15 %.
    assert!(
        floor_err.abs() <= 0.15,
        "projected with the cable {two_d:.1} ms faster {projected:.3} ms (fastest run), the \
         undelayed runs' fastest {undelayed:.3} ms: {:+.0} %",
        floor_err * 100.0
    );
    // The device flush share gets twice its noise and 0.2 ms: which kv sync
    // round an op joins depends on how the other OSDs' rounds fall, and a
    // CI run saw it 0.36 ms lower under the cluster delay with a base noise
    // of 0.15 ms (the replica share stayed within 0.1 ms).
    let (replica, f) = shares[2];
    within(
        "the cluster delay (against the client delay)",
        replica,
        clu_vs_pub(f),
        noise_of(f),
    );
    let (flush, f) = shares[3];
    within(
        "the cluster delay (against the client delay)",
        flush,
        clu_vs_pub(f),
        2.0 * noise(&base, f) + 0.2,
    );
    let (public, f) = shares[0];
    within("the cluster delay", public, rise(&clu, 0, f), noise_of(f));
    // The verdict names the cable.
    assert!(
        clu.iter().any(|l| l.findings.iter().any(
            |f| f.contains("on the cluster network") && f.contains("not the replicas' drives")
        )),
        "no cluster-network verdict: {:?}",
        clu.iter().map(|l| &l.findings).collect::<Vec<_>>()
    );

    // The client delay: the public share rises by 2D; the replication
    // shares move far less (the longer cycle slows the messengers' wake-ups
    // too: 0.1-0.6 ms here).
    let pub_pub = floor_rise(&publ, |l| l.public_ms);
    assert!(
        (0.8 * two_d..=1.2 * two_d).contains(&pub_pub),
        "client delay: public share {pub_pub:+.3} ms (fastest runs), want {two_d:.1} ± 20%"
    );
    for (name, f) in [shares[1], shares[2]] {
        within(
            "the client delay",
            name,
            rise(&publ, 1, f),
            noise_of(f) + 0.6,
        );
    }

    // A slow flush on a replica: the replica share rises (a replica's commit
    // waits on at least one flush of its drive), the cluster network does
    // not (it may fall: with one replica always the slower, the replicas'
    // jitter no longer lands in it).
    let fl_rep = rise(&flushed, 3, |l| l.replica_ms);
    let fl_net = rise(&flushed, 3, |l| l.cluster_ms);
    let flush_ms = f64::from(FLUSH_US) / 1e3;
    assert!(
        fl_rep >= 0.5 * flush_ms && fl_rep > noise(&base, |l| l.replica_ms),
        "slow flush on osd.{SLOW_OSD}: replica share {fl_rep:+.3} ms, want ≥ {:.1}",
        0.5 * flush_ms
    );
    assert!(
        fl_net <= noise_of(|l| l.cluster_ms),
        "the replica's slow flush raised the cluster-network share by {fl_net:+.3} ms"
    );
    // The verdict names the replica, not the cable.
    let verdict = flushed
        .iter()
        .flat_map(|l| &l.findings)
        .find(|f| f.contains(&format!("slowest replica osd.{SLOW_OSD}")))
        .unwrap_or_else(|| {
            panic!(
                "no replica verdict naming osd.{SLOW_OSD}: {:?}",
                flushed.iter().map(|l| &l.findings).collect::<Vec<_>>()
            )
        });
    assert!(verdict.contains("not the cable"), "{verdict}");
    let cable = clu
        .iter()
        .flat_map(|l| &l.findings)
        .find(|f| f.contains("on the cluster network"));
    eprintln!(
        "verdicts:\n  {verdict}\n  {}",
        cable.map_or("-", |f| f.as_str())
    );

    // The ICMP echo goes over the same links as the client's TCP: only the
    // client link's delay may move it, by 2D.
    let base_icmp = med(&base, |l| l.icmp_ms);
    let (clu_icmp, pub_icmp) = (
        rise(&clu, 0, |l| l.icmp_ms),
        floor_rise(&publ, |l| l.icmp_ms),
    );
    eprintln!(
        "ICMP echo, ms: base {base_icmp:.3}, cluster {d_us}us {clu_icmp:+.3}, client {d_us}us {pub_icmp:+.3}"
    );
    assert!(
        (0.8 * two_d..=1.2 * two_d).contains(&pub_icmp),
        "client delay: ICMP round trip {pub_icmp:+.3} ms, want {two_d:.1} ± 20%"
    );
    assert!(
        clu_icmp.abs() < 0.3,
        "cluster delay moved the ICMP round trip by {clu_icmp:.3} ms"
    );

    let (mean, p50): (Pick, Pick) = (|l| l.mean_ms, |l| l.p50_ms);
    eprintln!(
        "4 KiB QD1 write latency, mean / p50 ms: base {:.3} / {:.3}; cluster {d_us}us {:+.3} / {:+.3}; \
         client {d_us}us {:+.3} / {:+.3}; flush {FLUSH_US}us on osd.{SLOW_OSD} {:+.3} / {:+.3}",
        med(&base, mean),
        med(&base, p50),
        rise(&clu, 0, mean),
        rise(&clu, 0, p50),
        rise(&publ, 1, mean),
        rise(&publ, 1, p50),
        rise(&flushed, 3, mean),
        rise(&flushed, 3, p50)
    );
    // The client-observed latency rises by 2D plus the slower wake-ups after longer idle
    // waits on each side (0.2-1 ms here on memstore, up to 1.5 ms on bluestore, whose
    // kv-sync and finisher threads add wake-ups to each op, more under load; that
    // remainder shows up as `unattributed` and in the OSDs' timers, not in the shares
    // checked above): at least 0.7 × 2D, at most 2D + 2 ms.
    for (what, runs, first) in [("cluster", &clu, 0), ("client", &publ, 1)] {
        let want = 0.7 * two_d..=two_d + 2.0;
        for (stat, f) in [("median", p50), ("mean", mean)] {
            let r = rise(runs, first, f);
            assert!(
                want.contains(&r),
                "{what} delay: {stat} rose by {r:.3} ms, want {want:?}"
            );
        }
    }
    let (again, before) = (&base[4], median(base[..3].iter().map(p50).collect()));
    assert!(
        again.p50_ms < before + 0.6,
        "delay 0 did not restore the latency: {:.3} ms, {before:.3} before the delays",
        again.p50_ms
    );

    let t = Instant::now();
    payload_transfer_follows_a_bandwidth_limit();
    eprintln!(
        "wall time: rig and split runs {t_runs:.0} s, bandwidth runs {:.0} s",
        t.elapsed().as_secs_f64()
    );
}

/// One-way rate limit (token bucket) on the client's and the OSDs' public interfaces.
const SHAPED_RATE: f64 = 25e6; // 200 Mbit/s, bytes/s
const BIG_OP: f64 = 524_288.0;

fn shape_namespaces() -> Vec<String> {
    let mut ns = vec![format!("{}-cli", name())];
    ns.extend((0..3).map(|i| format!("{}-osd{i}", name())));
    ns
}

/// Removes the rate limits again, also when the test fails.
struct Unshape;
impl Drop for Unshape {
    fn drop(&mut self) {
        for ns in shape_namespaces() {
            let _ = Command::new("ip")
                .args([
                    "netns", "exec", &ns, "tc", "qdisc", "del", "dev", "eth0", "root",
                ])
                .output();
        }
    }
}

struct Big {
    mean_ms: f64,
    public_ms: f64,
    queue_ms: f64,
    /// Mean TCP-connect round trip over the OSDs, ms.
    tcp_ms: f64,
    /// Each OSD's measured path bandwidth, bytes/s.
    bandwidth: Vec<Option<f64>>,
}

fn big_run(mode: &str, tag: &str) -> Big {
    let v = bench_json(mode, "512K", tag);
    let job = &v["jobs"][0];
    assert!(job["ops"].as_u64().unwrap() >= 20, "too few ops: {job}");
    assert_eq!(job["errors"].as_u64(), Some(0));
    let rows = v["network"]["client_rtt"].as_array().expect("round trips");
    let tcp: Vec<f64> = rows
        .iter()
        .filter(|r| r["method"] == "tcp_connect")
        .map(|r| r["min_us"].as_f64().unwrap() / 1e3)
        .collect();
    Big {
        mean_ms: job["latency_ns"]["mean"].as_f64().unwrap() / 1e6,
        public_ms: share(job, "public_network"),
        queue_ms: share(job, "osd_queue"),
        tcp_ms: tcp.iter().sum::<f64>() / tcp.len() as f64,
        bandwidth: rows
            .iter()
            .filter(|r| r["method"] == "icmp_echo")
            .map(|r| r["bandwidth_bytes_per_s"].as_f64())
            .collect(),
    }
}

/// A 200 Mbit/s token bucket on the public path (client and OSD egress): the
/// bulk ICMP echo measures that rate, and a 512 KiB op's transfer time
/// (≈ 21 ms) lands in the public-network share — for writes out of the OSD
/// queue share, where the OSD's receive stamp (taken before the payload is
/// read) would otherwise put it.
fn payload_transfer_follows_a_bandwidth_limit() {
    let base_w = big_run("write", "bwbase");
    let base_r = big_run("rand", "bwbase");
    let _unshape = Unshape;
    for ns in shape_namespaces() {
        ok(
            Command::new("ip")
                .args([
                    "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf",
                    "rate", "200mbit", "burst", "12kb", "latency", "2s",
                ])
                .output()
                .unwrap(),
            "tc qdisc add tbf",
        );
    }
    let w = big_run("write", "bwshaped");
    let r = big_run("rand", "bwshaped");
    drop(_unshape);

    let t_ms = BIG_OP / SHAPED_RATE * 1e3;
    for (what, b) in [("write", &w), ("read", &r)] {
        assert_eq!(b.bandwidth.len(), 3, "{what}: one ICMP row per OSD");
        for bw in &b.bandwidth {
            let bw = bw.unwrap_or_else(|| panic!("{what}: no bandwidth under the limit"));
            // The bucket's 12 KiB burst lets part of the echo through at once.
            assert!(
                (0.8..=1.6).contains(&(bw / SHAPED_RATE)),
                "{what}: measured {:.1} MB/s through a {:.1} MB/s limit",
                bw / 1e6,
                SHAPED_RATE / 1e6
            );
        }
    }
    for (what, b) in [("write", &base_w), ("read", &base_r)] {
        assert!(
            b.bandwidth
                .iter()
                .all(|bw| bw.map_or(true, |bw| bw > 8.0 * SHAPED_RATE)),
            "{what}: unshaped path measured as slow as the limit: {:?}",
            b.bandwidth
        );
    }
    let mut report = Vec::new();
    for (what, base, shaped) in [("write", &base_w, &w), ("read", &base_r, &r)] {
        let mean = shaped.mean_ms - base.mean_ms;
        // The payload term alone: the public share minus the round trip it rests on.
        let payload = shaped.public_ms - shaped.tcp_ms;
        let queue = shaped.queue_ms - base.queue_ms;
        report.push(format!(
            "{what}: mean +{mean:.2} ms, payload term {payload:.2} ms, queue share {queue:+.2} ms \
             (limit: {t_ms:.2} ms per op)"
        ));
        assert!(
            (0.7 * t_ms..=1.6 * t_ms).contains(&mean),
            "{what}: the limit raised the mean by {mean:.2} ms, want ≈ {t_ms:.2}"
        );
        assert!(
            (0.6 * t_ms..=1.3 * t_ms).contains(&payload),
            "{what}: payload term {payload:.2} ms, want ≈ {t_ms:.2}"
        );
        assert!(
            queue < 0.35 * t_ms,
            "{what}: the OSD queue share rose by {queue:.2} ms: the payload stayed in it"
        );
    }
    eprintln!("200 Mbit/s limit, 512 KiB QD1: {}", report.join("; "));
}

// ---------------------------------------------------------------------------
// A group on three client "hosts": one agent per client namespace.

const GROUP: &str = "gsw";

/// An agent running in client namespace `i` (`cluster.sh exec --client I`
/// execs into it: the child is the agent itself).
struct SwAgent {
    id: String,
    child: Child,
    log: PathBuf,
    saved: PathBuf,
}

impl Drop for SwAgent {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn spawn_sw_agent(i: u32, base: &Path) -> SwAgent {
    let id = format!("sw{i}");
    let saved = base.join(&id);
    std::fs::create_dir_all(&saved).unwrap();
    let log = base.join(format!("{id}.log"));
    let client = i.to_string();
    let child = Command::new("bash")
        .arg(script())
        .args(["exec", "--dir", dir(), "--client", &client, "--", CEPHBENCH])
        .args(["--progress", "never", "agent", "-p", POOL, "--group", GROUP])
        .args([
            "--agent-id",
            &id,
            "--watch-timeout",
            "15s",
            "--timeout",
            "120s",
        ])
        .arg("--save-results")
        .arg(&saved)
        .env("CEPHBENCH_NETDELAY", switch_bin())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn an agent");
    SwAgent {
        id,
        child,
        log,
        saved,
    }
}

fn log_of(a: &SwAgent) -> String {
    std::fs::read_to_string(&a.log).unwrap_or_default()
}

/// The result agent `a` saved for the group run named `run`.
fn saved_run(a: &SwAgent, run: &str) -> cephbench::result::BenchResult {
    for e in std::fs::read_dir(&a.saved).unwrap() {
        let r: cephbench::result::BenchResult =
            serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        if let cephbench::result::Workload::Rados(w) = &r.workload {
            if w.run_name.starts_with(&format!("{run}-c")) {
                return r;
            }
        }
    }
    panic!("agent {} saved no result of run {run}: {}", a.id, log_of(a))
}

/// A QD1 4 KiB write run of the group from client 0's namespace: the merged
/// result.
fn group_run(run: &str, secs: u32, agents: &[SwAgent]) -> cephbench::result::BenchResult {
    let d = format!("{secs}s");
    let out = cluster(&[
        "exec",
        "--dir",
        dir(),
        "--client",
        "0",
        "--",
        "timeout",
        "120",
        CEPHBENCH,
        "--progress",
        "never",
        "--format",
        "json",
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-t",
        "1",
        "-d",
        &d,
        "--ramp",
        "1s",
        "--run-name",
        run,
        "--group",
        GROUP,
        "--clients",
        "3",
        "--wait-agents",
        "60s",
        "--start-delay",
        "2s",
    ]);
    let logs: Vec<String> = agents.iter().map(log_of).collect();
    assert!(
        out.status.success(),
        "group run {run}: {}\nagents: {logs:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate(&doc);
    serde_json::from_value(doc).unwrap()
}

/// The three agents as separate hosts: one per client namespace of
/// the switch, each its own address. The merged result against the agents'
/// own (count, p99 of the concatenation, IOPS), each row naming its host by
/// address, and a 1 ms one-way delay on client 1's link only: agent 1's mean
/// rises by ≈ 2 ms, the others' do not.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn three_agents_on_three_client_hosts() {
    let Some(_serial) = take_turn() else {
        return;
    };
    let _down = up_rig(3, None);
    // Each client namespace has its own address on the switch, and no other.
    for i in 0..3u32 {
        let c = i.to_string();
        let a = ok(
            cluster(&[
                "exec",
                "--dir",
                dir(),
                "--client",
                &c,
                "--",
                "ip",
                "-4",
                "-o",
                "addr",
                "show",
                "dev",
                "eth0",
            ]),
            "ip addr",
        );
        assert!(
            a.contains(&format!("192.0.2.{}/25", 100 + i)),
            "client {i}: {a}"
        );
        assert_eq!(a.lines().count(), 1, "client {i}: {a}");
    }
    let bad = cluster(&["exec", "--dir", dir(), "--client", "3", "--", "true"]);
    assert!(
        !bad.status.success()
            && String::from_utf8_lossy(&bad.stderr).contains("has 3 client namespace(s)"),
        "{bad:?}"
    );

    let base = std::env::temp_dir().join(format!("cbnd-agents-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let mut agents: Vec<SwAgent> = (0..3).map(|i| spawn_sw_agent(i, &base)).collect();

    // The first run on a fresh pool pays for PG creation: not a baseline.
    group_run("swwarm", 2, &agents);
    let (merged, slow) = base_and_delayed_runs("swbase", "swslow", &agents);
    // A loaded moment on two cores (the switch busy-polls before each
    // deadline) can slow one run by milliseconds: one more pair, and the
    // delay check passes if either pair shows it. A rig or a tool that puts
    // the delay on the wrong row fails both.
    let delay_checked = client_1_rose_by_2d(&merged, &slow, &agents, "swslow").or_else(|first| {
        eprintln!("first pair: {first}; one more pair");
        let (b2, s2) = base_and_delayed_runs("swbase2", "swslow2", &agents);
        client_1_rose_by_2d(&b2, &s2, &agents, "swslow2")
            .map_err(|second| format!("first pair: {first}; second pair: {second}"))
    });
    for a in &mut agents {
        let _ = Command::new("kill")
            .args(["-INT", &a.child.id().to_string()])
            .status();
    }
    for a in &mut agents {
        let t = Instant::now();
        while matches!(a.child.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(log_of(a).contains("left the group"), "{}", log_of(a));
    }

    // Merged vs the agents' own results (the files each agent saved).
    let parts: Vec<_> = agents.iter().map(|a| saved_run(a, "swbase")).collect();
    let j = &merged.jobs[0];
    let ops: u64 = parts.iter().map(|p| p.jobs[0].ops).sum();
    assert!(ops > 300, "too few ops: {ops}");
    assert_eq!(j.ops, ops, "merged count = sum of the agents' ops");
    let mh = cephbench::stats::decode_histogram(j.histogram.as_deref().unwrap()).unwrap();
    assert_eq!(mh.len(), ops);
    let mut pairs = Vec::new();
    for p in &parts {
        let h =
            cephbench::stats::decode_histogram(p.jobs[0].histogram.as_deref().unwrap()).unwrap();
        assert_eq!(h.len(), p.jobs[0].ops);
        pairs.extend(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value())),
        );
    }
    let max = parts
        .iter()
        .map(|p| p.jobs[0].latency_ns.max)
        .max()
        .unwrap();
    let p99 = common::quantile_of_concatenation(&mut pairs, 0.99).min(max);
    assert_eq!(
        j.latency_ns.p99, p99,
        "merged p99 = p99 of the concatenation"
    );
    let iops: f64 = parts.iter().map(|p| p.jobs[0].iops).sum();
    assert!((j.iops - iops).abs() < 1e-6 * iops, "{} vs {iops}", j.iops);

    // One row per agent, each naming its host by its address.
    let text = {
        let mut buf = Vec::new();
        cephbench::report::Format::Text
            .reporter()
            .render(&merged, &mut buf)
            .unwrap();
        String::from_utf8(buf).unwrap()
    };
    let g = merged.clients.as_ref().expect("clients");
    assert_eq!(g.clients.len(), 3);
    for (i, (row, p)) in g.clients.iter().zip(&parts).enumerate() {
        assert_eq!(row.agent, format!("sw{i}"));
        assert_eq!(row.status, "ok");
        assert_eq!(row.ops, p.jobs[0].ops);
        let ip = format!("192.0.2.{}", 100 + i);
        assert_eq!(row.addr.as_deref(), Some(ip.as_str()), "{row:?}");
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" sw{i} ")))
            .unwrap_or_else(|| panic!("no row for sw{i}: {text}"));
        assert!(line.contains(&format!("{} ({ip})", row.host)), "{line}");
    }

    if let Err(e) = delay_checked {
        panic!("{e}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A 5 s group run, then another with a 1 ms one-way delay on client 1's
/// link only (the switch's table checked), the delay removed after.
fn base_and_delayed_runs(
    base: &str,
    delayed: &str,
    agents: &[SwAgent],
) -> (
    cephbench::result::BenchResult,
    cephbench::result::BenchResult,
) {
    let merged = group_run(base, 5, agents);
    ok(
        cluster(&[
            "delay",
            "--dir",
            dir(),
            "--link",
            "client",
            "--client",
            "1",
            "--us",
            "1000",
        ]),
        "delay client 1",
    );
    let show = ok(cluster(&["switchctl", "--dir", dir(), "show"]), "show");
    assert!(
        show.contains("cli1 osd0 1000")
            && show.contains("cli osd0 0")
            && show.contains("cli2 osd0 0"),
        "{show}"
    );
    let slow = group_run(delayed, 5, agents);
    ok(
        cluster(&["delay", "--dir", dir(), "--link", "client", "--us", "0"]),
        "delay 0",
    );
    (merged, slow)
}

/// Client 1's link only: its row, and only its row, is ≈ 2 ms slower.
fn client_1_rose_by_2d(
    merged: &cephbench::result::BenchResult,
    slow: &cephbench::result::BenchResult,
    agents: &[SwAgent],
    delayed: &str,
) -> Result<(), String> {
    let mean_ms = |r: &cephbench::result::BenchResult, i: usize| {
        r.clients.as_ref().unwrap().clients[i].mean_ns / 1e6
    };
    let mut rise = Vec::new();
    for (i, a) in agents.iter().enumerate() {
        // The row's mean is the agent's own.
        let own = saved_run(a, delayed).jobs[0].latency_ns.mean / 1e6;
        assert!(
            (mean_ms(slow, i) - own).abs() < 1e-6,
            "{} vs {own}",
            mean_ms(slow, i)
        );
        rise.push(mean_ms(slow, i) - mean_ms(merged, i));
    }
    eprintln!(
        "QD1 4 KiB write means, ms: base {:.3} / {:.3} / {:.3}; 1 ms one-way on client 1: \
         {:.3} / {:.3} / {:.3} (rise {:+.3} / {:+.3} / {:+.3})",
        mean_ms(merged, 0),
        mean_ms(merged, 1),
        mean_ms(merged, 2),
        mean_ms(slow, 0),
        mean_ms(slow, 1),
        mean_ms(slow, 2),
        rise[0],
        rise[1],
        rise[2]
    );
    // Judged against what the undelayed clients share: on a loaded host the
    // second run can be slower for everyone (CI saw +0.7 ms on all three),
    // which is not the delay. The delay is what client 1 has on top.
    let shared = (rise[0] + rise[2]) / 2.0;
    if !(1.4..=3.5).contains(&(rise[1] - shared)) {
        return Err(format!(
            "client 1's mean rose by {:.3} ms, {:.3} ms more than the others', want ≈ 2",
            rise[1],
            rise[1] - shared
        ));
    }
    if (rise[0] - rise[2]).abs() >= 0.5 {
        return Err(format!(
            "the undelayed clients 0 and 2 moved apart: {:+.3} vs {:+.3} ms",
            rise[0], rise[2]
        ));
    }
    Ok(())
}

/// `--op-history`: the split from the OSDs' records of each op. A one-way
/// delay D on the cluster network raises its cluster-network share by 2D
/// (± 20 %) at 4 KiB and at 64 KiB, every primary's records cover the run's
/// ops and split their wait for the replicas, and the OSDs' history settings
/// are back to what they were.
fn per_op_evidence_follows_a_cluster_delay() {
    let t_all = Instant::now();
    let history = || {
        let out = ok(
            cluster(&[
                "exec",
                "--dir",
                dir(),
                "--",
                "ceph",
                "tell",
                "osd.0",
                "config",
                "get",
                "osd_op_history_size",
            ]),
            "config get",
        );
        out.split('"').nth(3).unwrap_or_default().to_string()
    };
    let before = history();
    let two_d = 2.0 * f64::from(DELAY_US) / 1e3;
    for bs in ["4K", "64K"] {
        let run = |tag: String| {
            // Each OSD records its client ops, its repops as a replica and
            // the repop replies as a primary: ~4,000 a 4 s run at 800 ops
            // per primary, so 5,000 filled up in a CI run (history_full,
            // 624 of 811 ops split). 20,000 holds a run with room.
            let v = bench_json_with("write", bs, &tag, &["--op-history", "20000"]);
            common::validate(&v);
            let job = &v["jobs"][0];
            assert_eq!(job["errors"].as_u64(), Some(0));
            for o in v["osds"].as_array().unwrap() {
                for row in o["client"].as_array().unwrap() {
                    let ops = row["ops"].as_u64().unwrap();
                    let ev = &row["evidence"];
                    let (recorded, split) = (ev["ops"].as_u64(), ev["split_ops"].as_u64());
                    // The ramp's ops are left out of the records, not of the row.
                    // The records take ops the OSD received after the ramp;
                    // an op sent just before the ramp's end may arrive after
                    // it: one per op in flight (-t 1) may be in the records
                    // but not the row.
                    assert!(
                        recorded.is_some_and(|r| r <= ops + 1 && r * 10 >= ops * 7)
                            && split.is_some_and(|s| s * 10 >= recorded.unwrap() * 8),
                        "osd.{} {bs}: {ops} ops, evidence {ev}",
                        o["osd"]
                    );
                }
            }
            assert!(
                job["attribution"]["notes"]
                    .to_string()
                    .contains("--op-history"),
                "{}",
                job["attribution"]
            );
            share(job, "cluster_network")
        };
        run(format!("ev-warm-{bs}"));
        let (mut base, mut rise) = (Vec::new(), Vec::new());
        for i in 0..2 {
            let b = run(format!("ev-base{i}-{bs}"));
            delay("cluster", DELAY_US);
            let c = run(format!("ev-clu{i}-{bs}"));
            delay("cluster", 0);
            base.push(b);
            rise.push(c - b);
        }
        let r = median(rise.clone());
        eprintln!(
            "per-op evidence, {bs}: cluster-network share undelayed {base:.3?} ms, rise with \
             {DELAY_US} us one way {rise:.3?} ms"
        );
        assert!(
            (0.8 * two_d..=1.2 * two_d).contains(&r),
            "{bs}: cluster delay raised the per-op cluster-network share by {r:+.3} ms, want \
             {two_d:.1} ± 20%"
        );
    }
    assert_eq!(
        history(),
        before,
        "osd.0's op history size was not put back"
    );
    eprintln!("wall time: {:.0} s", t_all.elapsed().as_secs_f64());
}
