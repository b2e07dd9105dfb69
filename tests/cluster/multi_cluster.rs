//! Coordinated multi-client runs: the watch/notify layer against the real
//! cluster, then `cephbench agent` processes driven by a controller.

use crate::common;

use std::ffi::CString;
use std::time::{Duration, SystemTime};

use cephbench::ceph::WatchEvent;
use common::{connect, pool, serial};

const POOL: &str = "cbt-multi";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A watcher that acks, one that does not: the reply names both, with the
/// gids and cookies of the watches and the acking one's payload.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn watch_notify_round_trip() {
    let _g = serial();
    let p = pool(POOL);
    let (a, b, c) = (connect(), connect(), connect());
    let (ioa, iob, ioc) = (
        a.ioctx(p).unwrap(),
        b.ioctx(p).unwrap(),
        c.ioctx(p).unwrap(),
    );
    let name = "cephbench_test_watch";
    let oid = CString::new(name).unwrap();
    rt().block_on(async {
        ioa.write_full(&oid, b"x")
            .unwrap()
            .await
            .unwrap()
            .check(|| "create".into())
            .unwrap();
        let mut wa = ioa.watch(name, Duration::from_secs(10)).unwrap();
        let wb = iob.watch(name, Duration::from_secs(10)).unwrap();
        let sent = SystemTime::now();
        let notify = ioc.notify(&oid, b"ping-payload", Duration::from_secs(3));
        let acker = async {
            let ev = wa.next_event().await.unwrap();
            let WatchEvent::Notify(n) = ev else {
                panic!("unexpected {ev:?}")
            };
            assert_eq!(n.payload, b"ping-payload");
            assert_eq!(n.cookie, wa.cookie());
            assert_eq!(n.notifier_id, c.instance_id());
            assert!(n.received_at >= sent - Duration::from_millis(1));
            wa.ack(n.notify_id, b"pong").unwrap();
        };
        let (reply, ()) = tokio::join!(notify, acker);
        let reply = reply.unwrap();
        assert!(reply.timed_out, "{reply:?}");
        assert_eq!(reply.acks.len(), 1, "{reply:?}");
        assert_eq!(reply.acks[0].gid, a.instance_id());
        assert_eq!(reply.acks[0].cookie, wa.cookie());
        assert_eq!(reply.acks[0].payload, b"pong");
        assert_eq!(reply.timeouts.len(), 1, "{reply:?}");
        assert_eq!(reply.timeouts[0].gid, b.instance_id());
        assert_eq!(reply.timeouts[0].cookie, wb.cookie());
        assert!(wa.check().is_ok());
        // Once dropped, the watches are gone: a notify completes at once, empty.
        drop(wb);
        drop(wa);
        let t = std::time::Instant::now();
        let reply = ioc.notify(&oid, b"", Duration::from_secs(3)).await.unwrap();
        assert!(
            !reply.timed_out && reply.acks.is_empty() && reply.timeouts.is_empty(),
            "{reply:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(2));
        // A watch on a missing object is an error with its errno.
        ioc.remove(&oid)
            .unwrap()
            .await
            .unwrap()
            .check(|| "rm".into())
            .unwrap();
        let e = ioa
            .watch(name, Duration::from_secs(10))
            .err()
            .expect("no object, no watch");
        assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    });
}

// ---------------------------------------------------------------------------
// Agents as separate processes, driven by `cephbench rados --group`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cephbench::result::{BenchResult, Part};
use cephbench::stats::decode_histogram;

struct Agent {
    id: String,
    child: Child,
    log: PathBuf,
    dir: PathBuf,
}

/// A test's directory under the system's temp dir: removed when the test
/// passes, kept (its agents' logs) when it fails.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("cbt-multi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn spawn_agent(group: &str, id: &str, base: &Path) -> Agent {
    spawn_agent_as(group, id, base, &[])
}

/// An agent with extra global options (e.g. `--id USER --keyring FILE`).
fn spawn_agent_as(group: &str, id: &str, base: &Path, global: &[&str]) -> Agent {
    spawn_agent_in(POOL, group, id, base, global)
}

/// An agent whose group lives in `pool`.
fn spawn_agent_in(pool: &str, group: &str, id: &str, base: &Path, global: &[&str]) -> Agent {
    let cmd = Command::new(env!("CARGO_BIN_EXE_cephbench"));
    spawn_agent_with(cmd, pool, group, id, base, global)
}

/// An agent in a UTS namespace of its own, whose host name is `host`: to
/// it, this host's OSDs run on another host (`unshare` and `sh` exec, so
/// the child is the agent itself and takes SIGINT as one).
fn spawn_agent_on(host: &str, group: &str, id: &str, base: &Path) -> Agent {
    let mut cmd = Command::new("unshare");
    cmd.args(["--uts", "--", "sh", "-c", "hostname \"$0\" && exec \"$@\""])
        .arg(host)
        .arg(env!("CARGO_BIN_EXE_cephbench"));
    spawn_agent_with(cmd, POOL, group, id, base, &[])
}

/// `cmd` (cephbench, or what execs it) with an agent's arguments, started.
fn spawn_agent_with(
    mut cmd: Command,
    pool: &str,
    group: &str,
    id: &str,
    base: &Path,
    global: &[&str],
) -> Agent {
    let dir = base.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let log = base.join(format!("{id}.log"));
    let child = cmd
        .arg("-c")
        .arg(common::conf())
        .args(global)
        .args(["--progress", "never", "agent", "-p", pool, "--group", group])
        .args([
            "--agent-id",
            id,
            "--timeout",
            "120s",
            "--watch-timeout",
            "15s",
        ])
        .arg("--save-results")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn an agent");
    Agent {
        id: id.into(),
        child,
        log,
        dir,
    }
}

/// osd.N's pid from the throwaway cluster's pid file (`DIR/run/osd.N.pid`).
fn osd_pid(osd: i32) -> u32 {
    let p = common::conf()
        .parent()
        .unwrap()
        .join("run")
        .join(format!("osd.{osd}.pid"));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .trim()
        .parse()
        .unwrap()
}

/// Waits (at most 60 s) until every agent says it joined its group.
fn wait_joined(agents: &[Agent]) {
    let t0 = std::time::Instant::now();
    while !agents
        .iter()
        .all(|a| log_of(a).contains("waiting for jobs"))
    {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "agents did not join: {:#?}",
            agents.iter().map(log_of).collect::<Vec<_>>()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

impl Drop for Agent {
    /// A failed test must not leave agents running.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Removes what an earlier, failed run of these tests may have left.
fn purge() {
    for o in cephbench_objects() {
        let _ = common::rados(&["-p", POOL, "rm", &o]);
    }
}

fn log_of(a: &Agent) -> String {
    std::fs::read_to_string(&a.log).unwrap_or_default()
}

/// Waits (bounded) until `f` holds.
fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SIGINT to an agent: it leaves the group, removes its objects, exits 130.
fn stop_agent(a: &mut Agent) {
    let ok = Command::new("kill")
        .args(["-INT", &a.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -INT {}", a.id);
    let t = std::time::Instant::now();
    loop {
        if let Some(st) = a.child.try_wait().unwrap() {
            assert_eq!(st.code(), Some(130), "agent {} exit: {}", a.id, log_of(a));
            assert!(log_of(a).contains("left the group"), "{}", log_of(a));
            return;
        }
        if t.elapsed() > Duration::from_secs(30) {
            let _ = a.child.kill();
            panic!("agent {} did not exit after SIGINT: {}", a.id, log_of(a));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The one result file an agent saved.
fn saved_result(a: &Agent) -> BenchResult {
    let files: Vec<_> = std::fs::read_dir(&a.dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "agent {}: {files:?} {}", a.id, log_of(a));
    serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap()
}

fn cephbench_objects() -> Vec<String> {
    common::list(POOL)
        .into_iter()
        .filter(|n| n.starts_with("cephbench_"))
        .collect()
}

fn controller(args: &[&str]) -> Command {
    // --foreground: a SIGINT to `timeout` reaches cephbench once, not twice
    // (without it, timeout signals the child and then its whole process
    // group; two SIGINTs are cephbench's "exit at once, no report").
    let mut c = Command::new("timeout");
    c.args(["--foreground", "120"])
        .arg(env!("CARGO_BIN_EXE_cephbench"))
        .arg("-c")
        .arg(common::conf())
        .args(["--progress", "never", "--format", "json"])
        .args(args);
    c
}

/// Three agents: the merged histogram holds every op of every agent, the
/// merged percentiles are those of the concatenated histograms, the group's
/// IOPS is the sum, and the clients start together.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn three_agents_merge_into_one_result() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("merge");
    // No agents: a bounded wait and a message naming what is missing.
    let out = common::run(&mut controller(&[
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-d",
        "2s",
        "--group",
        "nobody",
        "--clients",
        "2",
        "--wait-agents",
        "2s",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has 0 of 2 agents") && err.contains("2 missing"),
        "{err}"
    );
    assert!(
        err.contains("cephbench agent -p cbt-multi --group nobody"),
        "{err}"
    );

    let mut agents: Vec<Agent> = ["m1", "m2", "m3"]
        .iter()
        .map(|id| spawn_agent("gmerge", id, &base))
        .collect();
    let out = common::run(&mut controller(&[
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-t",
        "4",
        "-d",
        "4s",
        "--run-name",
        "mt",
        "--group",
        "gmerge",
        "--clients",
        "3",
        "--wait-agents",
        "60s",
        "--start-delay",
        "3s",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let logs: Vec<String> = agents.iter().map(log_of).collect();
    assert!(out.status.success(), "controller: {err}\nagents: {logs:#?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate(&doc);
    let merged: BenchResult = serde_json::from_value(doc).unwrap();
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: Vec<BenchResult> = agents.iter().map(saved_result).collect();

    let j = &merged.jobs[0];
    let ops: u64 = parts.iter().map(|p| p.jobs[0].ops).sum();
    assert!(ops > 100, "too few ops to say anything: {ops}");
    assert_eq!(j.ops, ops);
    // The split, on the merged figures: its OSD-side shares hold what the
    // primaries' own write timer (op_w_latency, weighted by their writes)
    // measured over the window.
    let a = j
        .attribution
        .as_ref()
        .expect("an attribution on the merged job");
    assert_eq!(a.mean_ns, j.latency_ns.mean);
    let side: f64 = a
        .shares
        .iter()
        .filter(|s| !matches!(s.part, Part::PublicNetwork | Part::Unattributed))
        .map(|s| s.ns)
        .sum();
    let (n, sum) = merged
        .osds
        .iter()
        .filter_map(|o| o.counters.as_ref()?.op_w_latency)
        .filter_map(|d| Some((d.count, d.count as f64 * d.mean_ns?)))
        .fold((0, 0.0), |(n, s), (k, t)| (n + k, s + t));
    assert!(n > 0, "no op_w_latency in the merged OSDs");
    let timer = sum / n as f64;
    assert!(
        (side - timer).abs() <= 0.1 * timer + 50e3 && side < a.mean_ns,
        "OSD-side shares {side:.0} ns, the primaries' op_w_latency {timer:.0} ns, mean {}",
        a.mean_ns
    );
    let mh = decode_histogram(j.histogram.as_deref().unwrap()).unwrap();
    assert_eq!(
        mh.len(),
        ops,
        "merged histogram count = sum of the agents' ops"
    );
    // Percentiles of the concatenation, computed here from the agents' own histograms.
    let mut pairs = Vec::new();
    let max = parts
        .iter()
        .map(|p| p.jobs[0].latency_ns.max)
        .max()
        .unwrap();
    for p in &parts {
        let h = decode_histogram(p.jobs[0].histogram.as_deref().unwrap()).unwrap();
        assert_eq!(h.len(), p.jobs[0].ops);
        pairs.extend(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value())),
        );
    }
    for (q, got) in [
        (0.5, j.latency_ns.p50),
        (0.99, j.latency_ns.p99),
        (0.999, j.latency_ns.p99_9),
    ] {
        assert_eq!(
            got,
            common::quantile_of_concatenation(&mut pairs, q).min(max),
            "q{q}"
        );
    }
    assert_eq!(j.latency_ns.max, max);
    // The exact mean: total latency over total ops.
    let sum: f64 = parts
        .iter()
        .map(|p| p.jobs[0].latency_ns.mean * p.jobs[0].ops as f64)
        .sum();
    assert!((j.latency_ns.mean - sum / ops as f64).abs() < 1e-6 * j.latency_ns.mean);
    let iops: f64 = parts.iter().map(|p| p.jobs[0].iops).sum();
    assert!((j.iops - iops).abs() < 1e-6 * iops, "{} vs {iops}", j.iops);
    // Per-OSD rows: each is the merge of the agents' rows for that OSD,
    // computed here from the agents' own per-OSD histograms.
    let mut osd_rows = 0;
    for o in &merged.osds {
        for row in &o.client {
            let theirs: Vec<&cephbench::result::OsdClientRow> = parts
                .iter()
                .flat_map(|p| p.osds.iter().filter(|x| x.osd == o.osd))
                .flat_map(|x| x.client.iter().filter(|c| c.op == row.op))
                .collect();
            assert!(!theirs.is_empty(), "osd.{} {}", o.osd, row.op);
            assert_eq!(
                row.ops,
                theirs.iter().map(|c| c.ops).sum::<u64>(),
                "osd.{} ops",
                o.osd
            );
            let mut h: Option<hdrhistogram::Histogram<u64>> = None;
            for c in &theirs {
                let x =
                    decode_histogram(c.histogram.as_deref().expect("per-OSD histogram")).unwrap();
                assert_eq!(x.len(), c.ops);
                match &mut h {
                    None => h = Some(x),
                    Some(acc) => acc.add(&x).unwrap(),
                }
            }
            let h = h.unwrap();
            assert_eq!(h.len(), row.ops);
            if theirs.len() > 1 {
                assert_eq!(row.p99_ns, h.value_at_quantile(0.99), "osd.{} p99", o.osd);
                osd_rows += 1;
            }
            let mean =
                theirs.iter().map(|c| c.mean_ns * c.ops as f64).sum::<f64>() / row.ops as f64;
            assert!(
                (row.mean_ns - mean).abs() < 1e-6 * mean,
                "osd.{} mean",
                o.osd
            );
            let mh = decode_histogram(row.histogram.as_deref().unwrap()).unwrap();
            assert_eq!(mh, h);
        }
    }
    assert!(
        osd_rows >= 2,
        "per-OSD rows merged from several agents: {osd_rows}"
    );
    assert_eq!(
        merged
            .osds
            .iter()
            .flat_map(|o| &o.client)
            .map(|c| c.ops)
            .sum::<u64>(),
        ops,
        "every op is on one primary"
    );
    assert!(
        !merged.warnings.iter().any(|w| w.contains("per-OSD")),
        "{:?}",
        merged.warnings
    );
    // Attribution on the merged per-OSD rows, split from the merged mean:
    // the clients' merged clock and the OSD's own timers agree (little that
    // neither timed), and the OSD's queue share is its own counters' op_w −
    // op_w_process.
    let mut split_rows = 0;
    for o in &merged.osds {
        for row in o.client.iter().filter(|r| r.op == "write") {
            let Some(a) = &row.attribution else { continue };
            assert_eq!(a.mean_ns, row.mean_ns);
            let part = |p: Part| a.shares.iter().find(|s| s.part == p).map(|s| s.ns);
            let un = part(Part::Unattributed).unwrap();
            eprintln!(
                "osd.{} {}: merged mean {:.3} ms, unattributed {:.3}",
                o.osd,
                row.op,
                row.mean_ns / 1e6,
                un / 1e6
            );
            // (Three client processes on two cores: 19–23 % of the mean was
            // the clients' own here; a merge that mixed up means would be off
            // by whole means.)
            assert!(un.abs() < 0.4 * row.mean_ns, "osd.{}: {a:?}", o.osd);
            let c = o.counters.as_ref().unwrap();
            let (w, p) = (c.op_w_latency.unwrap(), c.op_w_process_latency.unwrap());
            // (less a 4 KiB payload's transfer at the path's bandwidth)
            let less = w.mean_ns.unwrap() - p.mean_ns.unwrap() - part(Part::OsdQueue).unwrap();
            assert!((0.0..0.05e6).contains(&less), "osd.{}: {less} ns", o.osd);
            split_rows += 1;
        }
    }
    assert!(split_rows > 0, "no merged row was split");
    // Each agent's own IOPS is its ops over its elapsed time.
    for p in &parts {
        let pj = &p.jobs[0];
        assert!((pj.iops - pj.ops as f64 / pj.elapsed_s).abs() < 1e-6 * pj.iops);
    }

    let g = merged.clients.as_ref().expect("a clients section");
    assert_eq!(g.requested, 3);
    assert_eq!(g.clients.len(), 3);
    for (row, (a, p)) in g.clients.iter().zip(agents.iter().zip(&parts)) {
        assert_eq!(row.agent, a.id);
        assert_eq!(row.status, "ok");
        assert_eq!(row.ops, p.jobs[0].ops);
        assert_eq!(row.p99_ns, p.jobs[0].latency_ns.p99);
        assert!((row.iops - p.jobs[0].iops).abs() < 1e-9);
        assert!(
            row.clock_offset_ms.abs() < 50.0,
            "one host, one clock: {row:?}"
        );
        assert!(
            row.clock_offset_ms.abs() <= row.clock_rtt_ms / 2.0 + 0.01,
            "{row:?}"
        );
        let d = row.start_delta_ms.expect("measured start");
        assert!(
            (-5.0..50.0).contains(&d),
            "start {d} ms from the planned start"
        );
    }
    // The text and markdown reports print each client's row from these figures.
    for format in [
        cephbench::report::Format::Text,
        cephbench::report::Format::Markdown,
    ] {
        let mut buf = Vec::new();
        format.reporter().render(&merged, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        for c in &g.clients {
            let line = text
                .lines()
                .find(|l| l.contains(&format!(" {} ", c.agent)) && l.contains(" ok "))
                .unwrap_or_else(|| panic!("no row for {}: {text}", c.agent));
            for want in [
                c.ops.to_string(),
                format!("{:.1}", c.iops),
                format!("{:.3}", c.mean_ns / 1e6),
                format!("{:.3}", c.p99_ns as f64 / 1e6),
            ] {
                assert!(line.contains(&want), "{want} not in {line}");
            }
        }
    }
    let spread = g.start_spread_ms.unwrap();
    assert!(spread < 50.0, "start spread {spread} ms");
    eprintln!(
        "start spread {spread:.2} ms; offsets/RTT ms: {:?}",
        g.clients
            .iter()
            .map(|c| (c.clock_offset_ms, c.clock_rtt_ms))
            .collect::<Vec<_>>()
    );
    // Every run name distinct; nothing left in the pool.
    let mut runs: Vec<&str> = g.clients.iter().map(|c| c.run_name.as_str()).collect();
    runs.dedup();
    assert_eq!(runs, ["mt-c0", "mt-c1", "mt-c2"]);
    assert_eq!(cephbench_objects(), Vec::<String>::new());
}

/// SIGKILL of one agent mid-run: the report names it as missing, merges the
/// others, the command fails, and what the dead agent left is removed.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_killed_agent_is_named_not_waited_for() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("kill");
    let mut agents: Vec<Agent> = ["k1", "k2", "k3"]
        .iter()
        .map(|id| spawn_agent("gkill", id, &base))
        .collect();
    let ctl = controller(&[
        "--no-telemetry",
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-t",
        "4",
        "-d",
        "6s",
        "--run-name",
        "mk",
        "--group",
        "gkill",
        "--clients",
        "3",
        "--start-delay",
        "2s",
        "--group-margin",
        "5s",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for("k2 to get the job", Duration::from_secs(60), || {
        log_of(&agents[1]).contains("starting in")
    });
    std::thread::sleep(Duration::from_secs(4)); // 2 s delay + 2 s into the run
    agents[1].child.kill().unwrap();
    let _ = agents[1].child.wait();
    let t = std::time::Instant::now();
    let out = ctl.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "waited {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("agent k2") && err.contains("1 of 3 agents delivered no complete result (k2)"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate(&doc);
    let merged: BenchResult = serde_json::from_value(doc).unwrap();
    for i in [0, 2] {
        stop_agent(&mut agents[i]);
    }
    let g = merged.clients.as_ref().unwrap();
    let st: Vec<(&str, &str)> = g
        .clients
        .iter()
        .map(|c| (c.agent.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(st, [("k1", "ok"), ("k2", "missing"), ("k3", "ok")]);
    assert!(g.clients[1].error.as_deref().unwrap().contains("no result"));
    assert!(merged
        .warnings
        .iter()
        .any(|w| w.contains("agent k2 delivered no result")));
    let ops = saved_result(&agents[0]).jobs[0].ops + saved_result(&agents[2]).jobs[0].ops;
    assert_eq!(merged.jobs[0].ops, ops);
    assert!(ops > 0);
    assert_eq!(
        cephbench_objects(),
        Vec::<String>::new(),
        "the dead agent's objects are removed"
    );
    // What a killed controller would leave: `cephbench cleanup` removes it.
    let f = base.join("stale");
    std::fs::write(&f, b"{}").unwrap();
    for o in ["cephbench_group.gstale", "cephbench_group.gstale.agent.x"] {
        assert!(common::rados(&["-p", POOL, "put", o, f.to_str().unwrap()])
            .status
            .success());
    }
    common::cephbench()
        .args(["cleanup", "-p", POOL])
        .assert()
        .success()
        .stdout(predicates::str::contains("removed 2 cephbench objects"));
    assert_eq!(cephbench_objects(), Vec::<String>::new());
}

/// SIGINT at the controller: the agents stop their job early, still report,
/// and the command exits 130 with an interrupted result.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn interrupting_the_controller_stops_the_agents() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("int");
    let mut agents: Vec<Agent> = ["i1", "i2"]
        .iter()
        .map(|id| spawn_agent("gint", id, &base))
        .collect();
    let ctl = controller(&[
        "--no-telemetry",
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-t",
        "2",
        "-d",
        "60s",
        "--run-name",
        "mi",
        "--group",
        "gint",
        "--clients",
        "2",
        "--start-delay",
        "1s",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for(
        "the job to reach the agents",
        Duration::from_secs(60),
        || agents.iter().all(|a| log_of(a).contains("starting in")),
    );
    std::thread::sleep(Duration::from_secs(3));
    let t = std::time::Instant::now();
    assert!(Command::new("kill")
        .args(["-INT", &ctl.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = ctl.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "stop took {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    let merged: BenchResult = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no merged result ({e}): {err}"));
    assert!(merged.interrupted);
    assert!(merged.jobs[0].elapsed_s < 20.0);
    for a in &agents {
        assert!(log_of(a).contains("stop requested"), "{}", log_of(a));
    }
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: u64 = agents.iter().map(|a| saved_result(a).jobs[0].ops).sum();
    assert_eq!(merged.jobs[0].ops, parts);
    assert_eq!(cephbench_objects(), Vec::<String>::new());
}

/// Bad group arguments: one line naming the fix, exit 2, nothing sent.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn bad_group_arguments_are_usage_errors() {
    for (args, want) in [
        (&["agent", "-p", "x", "--group", "a.b"][..], "--group 'a.b'"),
        (
            &["agent", "-p", "x", "--group", "g", "--agent-id", "h/1"][..],
            "--agent-id 'h/1'",
        ),
        (
            &["agent", "-p", "x", "--group", "g", "--watch-timeout", "5s"][..],
            "at least 15s",
        ),
        (
            &[
                "rados",
                "write",
                "-p",
                "x",
                "--group",
                "g",
                "--clients",
                "0",
            ][..],
            "--clients 0 is out of range; use 1 to 1000",
        ),
        (
            &["rados", "write", "-p", "x", "--group", "g"][..],
            "--group and --clients go together",
        ),
        (
            &["rados", "write", "-p", "x", "--clients", "2"][..],
            "--group and --clients go together",
        ),
    ] {
        let out = common::run(
            Command::new(env!("CARGO_BIN_EXE_cephbench"))
                .args(["-m", "192.0.2.1", "--connect-timeout", "1s"])
                .args(args),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// `rbd --group`: each agent creates, preconditions and removes its own
/// image, starts at the common start, and the merged ops are the sum.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn rbd_group_run_uses_one_image_per_agent() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("rbd");
    let mut agents: Vec<Agent> = ["r1", "r2"]
        .iter()
        .map(|id| spawn_agent("grbd", id, &base))
        .collect();
    let out = common::run(&mut controller(&[
        "--no-telemetry",
        "rbd",
        "-p",
        POOL,
        "--size",
        "32M",
        "--rw",
        "randwrite",
        "--bs",
        "4K",
        "--iodepth",
        "4",
        "-d",
        "3s",
        "--group",
        "grbd",
        "--clients",
        "2",
        "--start-delay",
        "4s",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "controller: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate(&doc);
    let merged: BenchResult = serde_json::from_value(doc).unwrap();
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: Vec<BenchResult> = agents.iter().map(saved_result).collect();
    let images: Vec<String> = parts
        .iter()
        .map(|p| match &p.workload {
            cephbench::result::Workload::Rbd(w) => {
                assert!(w.image_created);
                w.image.clone()
            }
            _ => panic!("not an rbd result"),
        })
        .collect();
    assert_ne!(images[0], images[1], "one image per agent");
    let ops: u64 = parts.iter().map(|p| p.jobs[0].ops).sum();
    assert!(ops > 0);
    assert_eq!(merged.jobs[0].ops, ops);
    let mh = decode_histogram(merged.jobs[0].histogram.as_deref().unwrap()).unwrap();
    assert_eq!(mh.len(), ops);
    let g = merged.clients.as_ref().unwrap();
    assert!(g
        .clients
        .iter()
        .all(|c| c.status == "ok" && c.start_delta_ms.is_some()));
    let left: Vec<String> = common::list(POOL)
        .into_iter()
        .filter(|o| o.starts_with("rbd_id.cephbench_img.") || o.starts_with("cephbench_"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// An agent's saved results, oldest job first (job ids are the send time in
/// fixed-width hex, so the file names sort by time).
fn saved_results(a: &Agent) -> Vec<BenchResult> {
    let mut files: Vec<_> = std::fs::read_dir(&a.dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

/// `suite FILE --group`: each job runs on both agents at a common start (the
/// read job reads what each agent's write job wrote), the suite's figures are
/// the merged ones, and nothing is left in the pool.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn suite_runs_each_job_on_the_group() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("suite");
    let file = base.join("small.toml");
    std::fs::write(
        &file,
        r#"name = "group-small"
runs = 1
duration = "2s"
ramp = "0s"

[[job]]
name = "w 4K"
command = "rados"
mode = "write"
block-size = "4K"
object-size = "4K"
concurrent-ios = 4

[[job]]
name = "r 4K"
command = "rados"
mode = "rand"
concurrent-ios = 4
"#,
    )
    .unwrap();
    let mut agents: Vec<Agent> = ["s1", "s2"]
        .iter()
        .map(|id| spawn_agent("gsuite", id, &base))
        .collect();
    let out = common::run(&mut controller(&[
        "suite",
        file.to_str().unwrap(),
        "-p",
        POOL,
        "--group",
        "gsuite",
        "--clients",
        "2",
        "--start-delay",
        "2s",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let logs: Vec<String> = agents.iter().map(log_of).collect();
    assert!(out.status.success(), "controller: {err}\nagents: {logs:#?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate_suite(&v);
    let doc: cephbench::suite::SuiteDoc = serde_json::from_value(v).unwrap();
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: Vec<Vec<BenchResult>> = agents.iter().map(saved_results).collect();
    assert!(!doc.interrupted);
    assert_eq!(doc.runs.len(), 2);
    for (k, (entry, want_op)) in doc.runs.iter().zip(["write", "read"]).enumerate() {
        let r = &entry.result;
        common::validate(&serde_json::to_value(r).unwrap());
        let j = &r.jobs[0];
        assert_eq!(j.op, want_op);
        let theirs: Vec<&BenchResult> = parts.iter().map(|p| &p[k]).collect();
        let ops: u64 = theirs.iter().map(|p| p.jobs[0].ops).sum();
        assert!(ops > 0, "{}: no ops", entry.job);
        assert_eq!(j.ops, ops, "{}: merged ops = sum of the agents'", entry.job);
        assert_eq!(theirs[0].jobs[0].op, want_op);
        let mh = decode_histogram(j.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(mh.len(), ops);
        let iops: f64 = theirs.iter().map(|p| p.jobs[0].iops).sum();
        assert!((j.iops - iops).abs() < 1e-6 * iops);
        // The suite's table row is the merged figure.
        let row = doc
            .summary
            .rows
            .iter()
            .find(|x| x.job == entry.job)
            .unwrap();
        assert!((row.iops.value - iops).abs() < 1e-6 * iops, "{row:?}");
        let g = r.clients.as_ref().expect("a clients section per job");
        assert_eq!(g.group, "gsuite");
        assert_eq!(g.clients.len(), 2);
        for (c, p) in g.clients.iter().zip(&theirs) {
            assert_eq!(c.status, "ok");
            assert_eq!(c.ops, p.jobs[0].ops);
        }
        // The read job reads the objects its client's write job wrote.
        if want_op == "read" {
            assert_eq!(j.errors, 0, "{:?}", j.first_error);
        }
    }
    // Each agent kept its write run for the read job; the suite removed both.
    assert_eq!(cephbench_objects(), Vec::<String>::new());
    // Suites with rbd jobs, and several pools, are no longer usage errors:
    // these get as far as connecting (to nowhere).
    for args in [
        &["suite", "lab", "-p", "x", "--group", "g", "--clients", "2"][..],
        &[
            "suite",
            "rados",
            "--pools",
            "a,b",
            "--group",
            "g",
            "--clients",
            "2",
        ][..],
    ] {
        let out = common::run(
            Command::new(env!("CARGO_BIN_EXE_cephbench"))
                .args(["-m", "192.0.2.1", "--connect-timeout", "1s"])
                .args(args),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    }
}

const RBD_POOL: &str = "cbt-multi-rbd";

fn images(pool: &str) -> Vec<String> {
    let out = common::run(
        Command::new("rbd")
            .arg("-c")
            .arg(common::conf())
            .args(["-p", pool, "ls"]),
    );
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cephbench_img."))
        .map(String::from)
        .collect()
}

/// `suite FILE --group` with rbd jobs, three agents present and two asked
/// for: the two chosen ones each create and precondition an image of their
/// own (`cephbench_img.<suite run>.<agent id>`) before the measured jobs,
/// every job runs on those same two, the merged figures are per job, and
/// no image is left afterwards; the third agent is never given a job.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn rbd_suite_on_a_group_gives_each_agent_its_own_image() {
    let _g = serial();
    let pool = common::pool_for(RBD_POOL, "rbd");
    for i in images(pool) {
        let _ = Command::new("rbd")
            .arg("-c")
            .arg(common::conf())
            .args(["-p", pool, "rm", &i])
            .output();
    }
    let base = scratch("rbdsuite");
    let file = base.join("rbd.toml");
    std::fs::write(
        &file,
        r#"name = "group-rbd"
runs = 1
duration = "2s"
ramp = "0s"
image-size = "16M"
test-area = "8M"

[[job]]
name = "rw 4K"
command = "rbd"
rw = "randwrite"
bs = "4K"
iodepth = 4

[[job]]
name = "rr 4K"
command = "rbd"
rw = "randread"
bs = "4K"
iodepth = 4
"#,
    )
    .unwrap();
    let mut agents: Vec<Agent> = ["r1", "r2", "r3"]
        .iter()
        .map(|id| spawn_agent_in(pool, "grbd", id, &base, &[]))
        .collect();
    // The controller takes the first two agents it finds in the group (by
    // id among those present): let all three join first, so r1 and r2 are
    // the two (a slow r2 made it r1 and r3 on a loaded CI machine).
    wait_joined(&agents);
    let out = common::run(&mut controller(&[
        "suite",
        file.to_str().unwrap(),
        "-p",
        pool,
        "--group",
        "grbd",
        "--clients",
        "2",
        "--start-delay",
        "2s",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let logs: Vec<String> = agents.iter().map(log_of).collect();
    assert!(out.status.success(), "controller: {err}\nagents: {logs:#?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::validate_suite(&v);
    let doc: cephbench::suite::SuiteDoc = serde_json::from_value(v).unwrap();
    // Nothing left once the suite returned (agents still running).
    assert_eq!(images(pool), Vec::<String>::new(), "controller: {err}");
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: Vec<Vec<BenchResult>> = agents.iter().map(saved_results).collect();
    assert!(!doc.interrupted);
    assert_eq!(doc.runs.len(), 2);
    let run_image = |a: &str| -> String {
        let line = log_of(&agents[if a == "r1" { 0 } else { 1 }]);
        let i = line
            .find("image 'cephbench_img.")
            .unwrap_or_else(|| panic!("{line}"));
        line[i + 7..].split('\'').next().unwrap().to_string()
    };
    for id in ["r1", "r2"] {
        let img = run_image(id);
        assert!(
            img.starts_with("cephbench_img.suite-") && img.ends_with(&format!(".{id}")),
            "{img}"
        );
    }
    assert_ne!(run_image("r1"), run_image("r2"));
    for (k, (entry, want_op)) in doc.runs.iter().zip(["write", "read"]).enumerate() {
        let r = &entry.result;
        let j = &r.jobs[0];
        assert_eq!(j.op, want_op, "{}", entry.job);
        let g = r.clients.as_ref().expect("a clients section per job");
        let ids: Vec<&str> = g.clients.iter().map(|c| c.agent.as_str()).collect();
        assert_eq!(ids, ["r1", "r2"], "the same two agents for every job");
        let theirs: Vec<&BenchResult> = parts[..2].iter().map(|p| &p[k]).collect();
        let ops: u64 = theirs.iter().map(|p| p.jobs[0].ops).sum();
        assert!(ops > 0, "{}: no ops", entry.job);
        assert_eq!(j.ops, ops, "{}: merged ops = sum of the agents'", entry.job);
        assert_eq!(j.errors, 0, "{:?}", j.first_error);
        for (c, (p, id)) in g.clients.iter().zip(theirs.iter().zip(["r1", "r2"])) {
            assert_eq!(c.status, "ok");
            assert_eq!(c.ops, p.jobs[0].ops);
            // Each agent ran on its own image, preconditioned once before.
            let cephbench::result::Workload::Rbd(w) = &p.workload else {
                panic!("not an rbd result")
            };
            assert_eq!(w.image, run_image(id));
            assert_eq!(w.test_area, 8 << 20);
            let pc = w.precondition.as_ref().expect("preconditioned");
            assert_eq!(pc.bytes, 8 << 20, "{pc:?}");
            assert!(!w.image_created);
        }
        let row = doc
            .summary
            .rows
            .iter()
            .find(|x| x.job == entry.job)
            .unwrap();
        let iops: f64 = theirs.iter().map(|p| p.jobs[0].iops).sum();
        assert!((row.iops.value - iops).abs() < 1e-6 * iops, "{row:?}");
    }
    // One preparation per agent, the same pass recorded by both jobs.
    for p in &parts[..2] {
        let w = |r: &BenchResult| match &r.workload {
            cephbench::result::Workload::Rbd(w) => w.precondition.clone(),
            _ => None,
        };
        assert_eq!(w(&p[0]), w(&p[1]));
    }
    assert!(parts[2].is_empty(), "r3 got a job: {}", log_of(&agents[2]));
    assert!(
        !log_of(&agents[2]).contains("image"),
        "{}",
        log_of(&agents[2])
    );
}

fn auth_rm(entity: &str) {
    let _ = Command::new("ceph")
        .arg("-c")
        .arg(common::conf())
        .args(["auth", "rm", entity])
        .output();
}

/// A keyring for a new user with exactly `caps`.
fn user(dir: &Path, id: &str, caps: &[&str]) -> PathBuf {
    let entity = format!("client.{id}");
    auth_rm(&entity);
    let mut args = vec!["auth", "get-or-create", entity.as_str()];
    args.extend_from_slice(caps);
    let path = dir.join(format!("{id}.keyring"));
    std::fs::write(&path, common::ceph(&args)).unwrap();
    path
}

/// The caps the README gives agents and controller suffice for a group run
/// (watch, notify, results): `mon 'allow r' osd 'allow rw pool=POOL'`.
/// With `osd 'allow r'` an agent cannot join and names the caps it needs.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn data_path_caps_suffice_for_a_group_run() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("caps");
    let data_cap = format!("allow rw pool={POOL}");
    let k = user(
        &base,
        "cbt-multi-data",
        &["mon", "allow r", "osd", &data_cap],
    );
    let ks = k.to_str().unwrap();
    let as_user = ["--id", "cbt-multi-data", "--keyring", ks];
    let mut agent = spawn_agent_as("gcaps", "c1", &base, &as_user);
    let mut args = as_user.to_vec();
    args.extend_from_slice(&[
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-d",
        "1s",
        "--group",
        "gcaps",
        "--clients",
        "1",
        "--start-delay",
        "1s",
    ]);
    let out = common::run(&mut controller(&args));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "controller: {err}\nagent: {}",
        log_of(&agent)
    );
    let merged: BenchResult = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged.cluster.entity, "client.cbt-multi-data");
    let part = {
        stop_agent(&mut agent);
        saved_result(&agent)
    };
    assert!(part.jobs[0].ops > 0);
    assert_eq!(merged.jobs[0].ops, part.jobs[0].ops);
    assert_eq!(cephbench_objects(), Vec::<String>::new());

    // Read-only on the pool: the agent cannot create or watch the group
    // object, and says which caps to grant.
    let k = user(
        &base,
        "cbt-multi-ro",
        &["mon", "allow r", "osd", &format!("allow r pool={POOL}")],
    );
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cephbench"))
            .arg("-c")
            .arg(common::conf())
            .args(["--id", "cbt-multi-ro", "--keyring", k.to_str().unwrap()])
            .args(["agent", "-p", POOL, "--group", "gcaps", "--timeout", "5s"]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("osd 'allow rw pool={POOL}'")),
        "{err}"
    );
    for u in ["client.cbt-multi-data", "client.cbt-multi-ro"] {
        auth_rm(u);
    }
}

/// `-N NS` on a group: agents and controller meet in the namespace (their
/// control objects live there), the agents' runs write there, and a key
/// that allows only that namespace suffices for all of it; nothing of
/// cephbench's is left in the namespace or outside it afterwards.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn a_group_runs_in_a_namespace_under_a_namespace_only_key() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("ns");
    let cap = format!("allow rw pool={POOL} namespace=gns");
    let k = user(&base, "cbt-multi-ns", &["mon", "allow r", "osd", &cap]);
    let ks = k.to_str().unwrap();
    let as_user = ["--id", "cbt-multi-ns", "--keyring", ks];
    let dir = base.join("n1");
    std::fs::create_dir_all(&dir).unwrap();
    let log = base.join("n1.log");
    let child = Command::new(env!("CARGO_BIN_EXE_cephbench"))
        .arg("-c")
        .arg(common::conf())
        .args(as_user)
        .args(["--progress", "never", "agent", "-p", POOL, "-N", "gns"])
        .args(["--group", "gns", "--agent-id", "n1", "--timeout", "120s"])
        .args(["--watch-timeout", "15s", "--save-results"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn an agent");
    let mut agent = Agent {
        id: "n1".into(),
        child,
        log,
        dir,
    };
    wait_joined(std::slice::from_ref(&agent));
    let mut args = as_user.to_vec();
    args.extend_from_slice(&[
        "rados",
        "write",
        "-p",
        POOL,
        "-N",
        "gns",
        "-b",
        "4K",
        "-d",
        "1s",
        "--group",
        "gns",
        "--clients",
        "1",
        "--start-delay",
        "1s",
    ]);
    let out = common::run(&mut controller(&args));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "controller: {err}\nagent: {}",
        log_of(&agent)
    );
    let merged: BenchResult = serde_json::from_slice(&out.stdout).unwrap();
    let part = {
        stop_agent(&mut agent);
        saved_result(&agent)
    };
    assert!(part.jobs[0].ops > 0);
    assert_eq!(merged.jobs[0].ops, part.jobs[0].ops);
    match &part.workload {
        cephbench::result::Workload::Rados(w) => assert_eq!(w.namespace, "gns"),
        w => panic!("not a rados workload: {w:?}"),
    }
    let all = common::rados(&["-p", POOL, "ls", "--all"]);
    let left: Vec<String> = String::from_utf8_lossy(&all.stdout)
        .lines()
        .filter(|l| l.contains("cephbench_"))
        .map(str::to_string)
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    auth_rm("client.cbt-multi-ns");
}

/// `sweep rados --group`: each point runs on the agents with the asked rate
/// split between them (each agent's own result asks half), the merged point
/// holds every agent's ops, and below capacity the group achieves the rate.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn sweep_splits_each_points_rate_across_the_group() {
    let _g = serial();
    pool(POOL);
    purge();
    let base = scratch("sweep");
    let mut agents: Vec<Agent> = ["w1", "w2"]
        .iter()
        .map(|id| spawn_agent("gsweep", id, &base))
        .collect();
    let out = common::run(&mut controller(&[
        "sweep",
        "rados",
        "write",
        "-p",
        POOL,
        "-b",
        "4K",
        "-t",
        "8",
        "--rates",
        "40,80",
        "-d",
        "3s",
        "--ramp",
        "0s",
        "--group",
        "gsweep",
        "--clients",
        "2",
        "--start-delay",
        "2s",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let logs: Vec<String> = agents.iter().map(log_of).collect();
    assert!(out.status.success(), "controller: {err}\nagents: {logs:#?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for a in &mut agents {
        stop_agent(a);
    }
    let parts: Vec<Vec<BenchResult>> = agents.iter().map(saved_results).collect();
    let points = v["curves"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{v}");
    for (k, (p, asked)) in points.iter().zip([40.0, 80.0]).enumerate() {
        assert_eq!(p["asked_rate"].as_f64(), Some(asked), "{p}");
        let achieved = p["achieved_iops"].as_f64().unwrap();
        assert!(
            (achieved / asked - 1.0).abs() < 0.05,
            "asked {asked}, achieved {achieved}"
        );
        let merged: BenchResult = serde_json::from_value(p["result"].clone()).unwrap();
        let ops: u64 = parts.iter().map(|r| r[k].jobs[0].ops).sum();
        assert_eq!(merged.jobs[0].ops, ops, "merged ops = the agents' sum");
        for r in &parts {
            let rate = r[k].jobs[0].rate.as_ref().expect("an open-loop result");
            assert_eq!(rate.asked, asked / 2.0, "each agent asks half");
        }
    }
    assert!(cephbench_objects().is_empty(), "{:?}", cephbench_objects());
}

/// OSD CPU in a group run: each agent measures the OSDs of its own host and
/// the merge keeps those. One agent runs under another host name (a UTS
/// namespace), so to it every OSD runs elsewhere; the other on this host.
/// The merged result has every OSD's CPU as the agent on its host measured
/// it (the process in the cluster's pid file), and the far agent's own
/// result names this host and says to run an agent there. With the far
/// agent alone, the group's result says the same, measuring nothing.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn each_agent_measures_the_cpu_of_its_own_hosts_osds() {
    let _g = serial();
    if !common::is_root() {
        common::cannot_run("unshare --uts needs root");
        return;
    }
    pool(POOL);
    purge();
    let here = cephbench::names::hostname();
    let base = scratch("cpu");
    let run = |group: &str, clients: &str| {
        let out = common::run(&mut controller(&[
            "rados",
            "write",
            "-p",
            POOL,
            "-b",
            "4K",
            "-t",
            "2",
            "-d",
            "3s",
            "--group",
            group,
            "--clients",
            clients,
            "--wait-agents",
            "60s",
            "--start-delay",
            "3s",
        ]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        common::validate(&doc);
        serde_json::from_value::<BenchResult>(doc).unwrap()
    };
    let mut agents = vec![
        spawn_agent("gcpu", "near", &base),
        spawn_agent_on("elsewhere", "gcpu", "far", &base),
    ];
    let merged = run("gcpu", "2");
    for a in &mut agents {
        stop_agent(a);
    }
    let (near, far) = (saved_result(&agents[0]), saved_result(&agents[1]));
    assert!(!merged.osds.is_empty());
    for o in &merged.osds {
        let c = o
            .cpu
            .as_ref()
            .unwrap_or_else(|| panic!("osd.{}: no cpu", o.osd));
        assert!(
            c.cpu_s.is_some_and(|s| s > 0.0) && c.not_measured.is_none(),
            "osd.{}: {c:?}",
            o.osd
        );
        assert_eq!(c.pid, Some(osd_pid(o.osd)), "osd.{}", o.osd);
        assert_eq!(c.host.as_deref(), Some(here.as_str()));
        let mine = near.osds.iter().find(|x| x.osd == o.osd).unwrap();
        assert_eq!(
            mine.cpu.as_ref().unwrap().cpu_s,
            c.cpu_s,
            "osd.{}: the near agent's figure",
            o.osd
        );
    }
    for o in &far.osds {
        let why = o
            .cpu
            .as_ref()
            .and_then(|c| c.not_measured.clone())
            .unwrap_or_else(|| panic!("far agent measured osd.{}: {:?}", o.osd, o.cpu));
        assert!(
            why.contains(&format!("runs on host {here}, not here")),
            "{why}"
        );
    }
    // The far agent alone: nothing measured, and the report says where to
    // run an agent.
    let mut alone = vec![spawn_agent_on("elsewhere", "gcpu2", "far2", &base)];
    let r = run("gcpu2", "1");
    for a in &mut alone {
        stop_agent(a);
    }
    assert!(r
        .osds
        .iter()
        .all(|o| o.cpu.as_ref().is_some_and(|c| c.cpu_s.is_none())));
    let text = common::render_text(&serde_json::to_value(&r).unwrap());
    assert!(
        text.contains(&format!("on host {here}, not here; run an agent there")),
        "{text}"
    );
}
