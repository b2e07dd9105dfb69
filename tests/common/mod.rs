//! Shared helpers of the integration tests: the throwaway cluster's config,
//! a per-binary test pool, the `ceph`/`rados` CLIs, and schema validation.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The cluster under test: `CEPHBENCH_TEST_CONF` names its ceph.conf
/// (`.ci/run` starts the throwaway cluster and sets it). Cluster tests fail,
/// rather than pass vacuously, when it is missing.
pub fn conf() -> PathBuf {
    let p = std::env::var_os("CEPHBENCH_TEST_CONF").unwrap_or_else(|| {
        panic!(
            "CEPHBENCH_TEST_CONF is not set: start a cluster with \
             `bash containers/cluster.sh up` and export CEPHBENCH_TEST_CONF=/tmp/cephbench-cluster/ceph.conf \
             (or run everything with `bash .ci/run`)"
        )
    });
    PathBuf::from(p)
}

/// A library-level connection to the test cluster.
pub fn connect() -> cephbench::ceph::Rados {
    cephbench::ceph::Rados::connect(&cephbench::ceph::ConnectOptions {
        conf: Some(conf()),
        connect_timeout: std::time::Duration::from_secs(10),
        ..Default::default()
    })
    .expect("connect to the test cluster")
}

/// The cluster tests share one cluster (the rigs' tests the machine's cores):
/// one at a time, across the whole cluster binary (tests/cluster/).
pub fn serial() -> Turn {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    Turn {
        _guard: guard,
        start: std::time::Instant::now(),
        whole_at_start: configured() && whole().is_ok(),
    }
}

/// Runs `checks` one after another on one rig, `reset` before each: every
/// check runs whatever the others did, each failure is printed with its
/// name and time, and the test fails naming the checks that failed.
/// `CEPHBENCH_CHECKS=WORDS` (a developer's run) runs only the checks whose
/// name contains WORDS; it is refused under `CI=true`.
pub fn checks_in_turn(checks: &[(&str, fn())], reset: impl Fn()) {
    let only = std::env::var("CEPHBENCH_CHECKS").ok();
    assert!(
        only.is_none() || std::env::var("CI").map_or(true, |v| v != "true"),
        "CEPHBENCH_CHECKS is for a developer's run, not CI"
    );
    let mut failed = Vec::new();
    for (name, check) in checks {
        if only.as_deref().is_some_and(|w| !name.contains(w)) {
            eprintln!("check '{name}': not run (CEPHBENCH_CHECKS)");
            continue;
        }
        let t = std::time::Instant::now();
        let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reset();
            check()
        }))
        .is_ok();
        eprintln!(
            "check '{name}': {} in {:.1} s",
            if passed { "passed" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        );
        if !passed {
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "failed checks: {failed:?}");
}

/// A cluster test's turn (`serial`). When it ends, its time goes to the
/// file `CEPHBENCH_TEST_TIMES` names, a line "seconds test", so that
/// tests/run.sh can say where a CI run's minutes went.
pub struct Turn {
    _guard: MutexGuard<'static, ()>,
    start: std::time::Instant,
    /// The test cluster was whole ([`left_whole`]) when the turn began: then a turn that
    /// leaves it otherwise fails (one failure, not one in every test after it).
    whole_at_start: bool,
}

impl Drop for Turn {
    fn drop(&mut self) {
        use std::io::Write;
        let name = std::thread::current().name().unwrap_or("?").to_owned();
        // The next test starts on a whole cluster, or this one, which left it otherwise, fails.
        let left = if self.whole_at_start {
            left_whole()
        } else {
            Ok(())
        };
        if let Err(state) = &left {
            eprintln!("{name} left the test cluster not whole after 60 s: {state}");
        }
        let failed = if std::thread::panicking() {
            " (failed)"
        } else {
            ""
        };
        let times = std::env::var_os("CEPHBENCH_TEST_TIMES").and_then(|path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .ok()
        });
        if let Some(mut f) = times {
            let _ = writeln!(
                f,
                "{:7.1} {name}{failed}",
                self.start.elapsed().as_secs_f64()
            );
        }
        assert!(std::thread::panicking() || left.is_ok(), "{left:?}");
    }
}

/// The OSD map flags a test may set and must clear again.
const FLAGS: [&str; 10] = [
    "noout",
    "noin",
    "noup",
    "nodown",
    "pause",
    "norecover",
    "nobackfill",
    "norebalance",
    "noscrub",
    "nodeep-scrub",
];

/// Whether `CEPHBENCH_TEST_CONF` names a test cluster (a rig's test may run without one).
fn configured() -> bool {
    std::env::var_os("CEPHBENCH_TEST_CONF").is_some()
}

/// Waits (at most 60 s) until the test cluster is whole: every OSD up and in, none of [`FLAGS`] set, every PG active+clean. Two
/// queries on the kept connection ([`query`]), milliseconds when it is. A test that killed an
/// OSD, marked one out or set noout, and failed before it undid that, would otherwise fail the
/// tests after it (a size-1 pool's ops on a down OSD hang; its counters restart from 0).
fn left_whole() -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let state = whole();
        if state.is_ok() || std::time::Instant::now() >= deadline {
            return state;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// One look at the test cluster: Ok when whole (see [`left_whole`]), else what is not.
fn whole() -> Result<(), String> {
    let osd = try_query(false, serde_json::json!({"prefix": "osd dump"}))?;
    let osds = osd["osds"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut not = Vec::new();
    for o in osds {
        if o["up"] != 1 || o["in"] != 1 {
            not.push(format!("osd.{} up {} in {}", o["osd"], o["up"], o["in"]));
        }
    }
    let flags = osd["flags"].as_str().unwrap_or_default();
    not.extend(
        flags
            .split(',')
            .filter(|f| FLAGS.contains(f))
            .map(|f| format!("flag {f} set")),
    );
    let pg = try_query(true, serde_json::json!({"prefix": "pg stat"}))?;
    let summary = pg.get("pg_summary").unwrap_or(&pg);
    let unclean: Vec<String> = summary["num_pg_by_state"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|s| s["name"] != "active+clean")
        .map(|s| format!("{} PGs {}", s["num"], s["name"]))
        .collect();
    not.extend(unclean);
    if not.is_empty() {
        Ok(())
    } else {
        Err(not.join(", "))
    }
}

/// Runs a command, panicking with its output if it cannot be started.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// `ceph -c CONF args...`, which must succeed; returns stdout.
pub fn ceph(args: &[&str]) -> String {
    let out = run(Command::new("timeout")
        .arg("60")
        .arg("ceph")
        .arg("-c")
        .arg(conf())
        .args(args));
    assert!(
        out.status.success(),
        "ceph {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A read-only query of the cluster's state (`{"prefix": "osd dump", ...}`,
/// JSON format added) to the mons, or with `mgr` to the mgr (`pg ...`),
/// over one librados connection kept for the test binary: a `ceph` CLI call
/// took ~0.7 s here (Python start-up and a connection of its own), the
/// polls of the fault tests and `wait_clean` make dozens. A failed query
/// drops the connection and asks once more on a new one (a test may have
/// restarted the mon or the mgr).
pub fn query(mgr: bool, cmd: serde_json::Value) -> serde_json::Value {
    try_query(mgr, cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// [`query`], with what went wrong as the error instead of a panic (the end of a turn asks
/// while a failed test unwinds, where a second panic would abort the test binary).
pub fn try_query(mgr: bool, mut cmd: serde_json::Value) -> Result<serde_json::Value, String> {
    static CONN: Mutex<Option<std::sync::Arc<cephbench::ceph::Rados>>> = Mutex::new(None);
    cmd["format"] = "json".into();
    let json = cmd.to_string();
    let mut last = String::new();
    for _ in 0..2 {
        let rados = {
            let mut conn = CONN.lock().unwrap_or_else(|e| e.into_inner());
            std::sync::Arc::clone(conn.get_or_insert_with(|| std::sync::Arc::new(connect())))
        };
        let out = if mgr {
            rados.mgr_command(&json)
        } else {
            rados.mon_command(&json)
        };
        match out {
            Ok(o) if o.rc >= 0 => {
                return serde_json::from_slice(&o.out)
                    .map_err(|e| format!("{json}: {e}: {}", String::from_utf8_lossy(&o.out)))
            }
            Ok(o) => last = format!("rc {}: {}", o.rc, o.status),
            Err(e) => last = e.to_string(),
        }
        *CONN.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
    Err(format!("{json}: {last}"))
}

/// `rados -c CONF args...`; returns the raw output.
pub fn rados(args: &[&str]) -> Output {
    run(Command::new("timeout")
        .arg("120")
        .arg("rados")
        .arg("-c")
        .arg(conf())
        .args(args))
}

/// Creates (once per test binary) a replicated size-1 pool named `name`
/// and waits until its PGs are active+clean.
pub fn pool(name: &'static str) -> &'static str {
    pool_for(name, "rados")
}

/// Like [`pool`], for RBD: the `rbd` application enabled and `rbd pool init` run.
pub fn pool_for(name: &'static str, app: &str) -> &'static str {
    pool_sized(name, app, 1)
}

/// Like [`pool_for`], with replication `size` (min_size = size - 1, at least 1).
pub fn pool_sized(name: &'static str, app: &str, size: u32) -> &'static str {
    static CREATED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let created = CREATED.get_or_init(|| Mutex::new(Vec::new()));
    let mut c = created.lock().unwrap_or_else(|e| e.into_inner());
    if !c.iter().any(|p| p == name) {
        // Size 1 by default, so that per-OSD figures of the client and of
        // the OSDs' counters can be matched op for op (each op touches one OSD).
        create_replicated(name, "16", size);
        // Ceph's own min_size for a new pool is size - size/2; set where the
        // tests' (size - 1, at least 1) differs: above size 3.
        let min = size.saturating_sub(1).max(1);
        if min != size - size / 2 {
            ceph(&["osd", "pool", "set", name, "min_size", &min.to_string()]);
        }
        ceph(&["osd", "pool", "application", "enable", name, app]);
        if app == "rbd" {
            let out = run(Command::new("timeout")
                .arg("60")
                .arg("rbd")
                .arg("-c")
                .arg(conf())
                .args(["pool", "init", name]));
            assert!(
                out.status.success(),
                "rbd pool init: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        wait_clean();
        c.push(name.to_string());
    }
    name
}

/// Creates replicated pool `name` with `pgs` PGs and replication `size`:
/// `osd pool create ... --size N` sets size (and Ceph's min_size for it) in
/// one `ceph` call (~1 s each: three calls were two seconds more a pool).
/// A pool already there (a cluster of an earlier run), or a Ceph refusing
/// the size at create, gets size and min_size set one by one.
pub fn create_replicated(name: &str, pgs: &str, size: u32) {
    let size = size.to_string();
    let out = run(Command::new("timeout")
        .arg("60")
        .arg("ceph")
        .arg("-c")
        .arg(conf())
        .args(["osd", "pool", "create", name, pgs, pgs, "replicated"])
        .args(["--size", &size]));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && !said.contains("already exists") {
        return;
    }
    ceph(&["osd", "pool", "create", name, pgs, pgs]);
    ceph(&[
        "osd",
        "pool",
        "set",
        name,
        "size",
        &size,
        "--yes-i-really-mean-it",
    ]);
    let min = (size.parse::<u32>().unwrap() - 1).max(1).to_string();
    ceph(&["osd", "pool", "set", name, "min_size", &min]);
}

/// Creates (once per test binary) an erasure-coded pool `name` of k=2 m=1
/// with failure domain osd (profile `cbt-ec21`: three OSDs hold each
/// object's two data chunks and its coding chunk), 16 PGs, application
/// `app` and `allow_ec_overwrites` as `overwrites` says (RBD data needs
/// it), and waits until its PGs are active+clean.
pub fn ec_pool(name: &'static str, app: &str, overwrites: bool) -> &'static str {
    static CREATED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let created = CREATED.get_or_init(|| Mutex::new(Vec::new()));
    let mut c = created.lock().unwrap_or_else(|e| e.into_inner());
    if !c.iter().any(|p| p == name) {
        // (The profile may exist from an earlier binary: setting it again
        // to the same values succeeds.)
        ceph(&[
            "osd",
            "erasure-code-profile",
            "set",
            "cbt-ec21",
            "k=2",
            "m=1",
            "crush-failure-domain=osd",
        ]);
        ceph(&[
            "osd", "pool", "create", name, "16", "16", "erasure", "cbt-ec21",
        ]);
        if overwrites {
            ceph(&["osd", "pool", "set", name, "allow_ec_overwrites", "true"]);
        }
        ceph(&["osd", "pool", "application", "enable", name, app]);
        wait_clean();
        c.push(name.to_string());
    }
    name
}

/// Every OSD's `op_w`, `op_r` and `op_w_in_bytes` summed, as `ceph tell
/// osd.N perf dump osd` gives them: the OSDs' own count, read outside
/// cephbench.
pub fn osd_op_totals() -> (u64, u64, u64) {
    let ids: Vec<String> = ceph(&["osd", "ls"])
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut t = (0, 0, 0);
    for id in ids {
        let v: serde_json::Value = serde_json::from_str(&ceph(&[
            "tell",
            &format!("osd.{id}"),
            "perf",
            "dump",
            "osd",
        ]))
        .expect("perf dump json");
        let n = |k: &str| {
            v["osd"][k]
                .as_u64()
                .unwrap_or_else(|| panic!("osd.{id} {k}: {v}"))
        };
        t.0 += n("op_w");
        t.1 += n("op_r");
        t.2 += n("op_w_in_bytes");
    }
    t
}

/// Per OSD, its `op_w_latency` as `ceph tell osd.N perf dump osd` gives it:
/// (osd, ops timed, their summed seconds). The OSDs' own timer of a client
/// write, from the message's receipt to the reply, read outside cephbench.
pub fn osd_write_latency() -> Vec<(i64, u64, f64)> {
    ceph(&["osd", "ls"])
        .split_whitespace()
        .map(|id| {
            let v: serde_json::Value = serde_json::from_str(&ceph(&[
                "tell",
                &format!("osd.{id}"),
                "perf",
                "dump",
                "osd",
            ]))
            .expect("perf dump json");
            let l = &v["osd"]["op_w_latency"];
            (
                id.parse().unwrap(),
                l["avgcount"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("osd.{id}: {v}")),
                l["sum"].as_f64().unwrap_or_else(|| panic!("osd.{id}: {v}")),
            )
        })
        .collect()
}

/// Waits (bounded) until every PG is active+clean.
pub fn wait_clean() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let v = query(true, serde_json::json!({"prefix": "pg stat"}));
        let out = v.to_string();
        let summary = v.get("pg_summary").unwrap_or(&v);
        let total = summary["num_pgs"].as_u64().unwrap_or(0);
        let clean: u64 = summary["num_pg_by_state"]
            .as_array()
            .map(|states| {
                states
                    .iter()
                    .filter(|s| s["name"].as_str() == Some("active+clean"))
                    .map(|s| s["num"].as_u64().unwrap_or(0))
                    .sum()
            })
            .unwrap_or(0);
        if total > 0 && clean == total {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "PGs not active+clean after 120 s: {out}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Object names in a pool.
pub fn list(pool: &str) -> Vec<String> {
    let out = rados(&["-p", pool, "ls"]);
    assert!(
        out.status.success(),
        "rados ls: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The cephbench binary with the test cluster's config.
pub fn cephbench() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cephbench").expect("binary built");
    c.arg("-c").arg(conf()).arg("--progress").arg("never");
    c.timeout(std::time::Duration::from_secs(300));
    c
}

/// `cephbench --format json ARGS` against the test cluster, which must
/// succeed (else the test fails showing its stderr): its result, validated
/// against the schema.
pub fn bench_json(args: &[&str]) -> serde_json::Value {
    let out = cephbench().args(["--format", "json"]).args(args).output();
    let v = serde_json::from_str(&ok(out.unwrap(), &format!("cephbench {args:?}")))
        .expect("one JSON document");
    validate(&v);
    v
}

/// Validates a JSON document against `schema/result.schema.json`.
pub fn validate(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result.schema.json"))
            .expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match the schema: {errors:#?}\n{doc:#}"
    );
}

/// Validates a document against `schema` (a schema document that refers
/// to `result.schema.json`).
fn validate_against(doc: &serde_json::Value, schema: &str, what: &str) {
    let result: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result.schema.json"))
            .expect("schema is JSON");
    let schema: serde_json::Value = serde_json::from_str(schema).expect("schema is JSON");
    let v = jsonschema::options()
        .with_resource(
            "https://cephbench.invalid/schema/result.schema.json",
            jsonschema::Resource::from_contents(result).expect("a resource"),
        )
        .build(&schema)
        .expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema: {:#?}",
        &errors[..errors.len().min(20)]
    );
}

/// Validates a suite document against `schema/suite.schema.json` (which
/// refers to `result.schema.json` for every run's result).
pub fn validate_suite(doc: &serde_json::Value) {
    validate_against(
        doc,
        include_str!("../../schema/suite.schema.json"),
        "suite result",
    );
}

/// Validates a sweep document against `schema/sweep.schema.json` (which
/// refers to `result.schema.json` for every point's result).
pub fn validate_sweep(doc: &serde_json::Value) {
    validate_against(
        doc,
        include_str!("../../schema/sweep.schema.json"),
        "sweep result",
    );
}

/// Renders a result document (as the JSON report printed it) with the text reporter.
pub fn render_text(doc: &serde_json::Value) -> String {
    let r: cephbench::result::BenchResult =
        serde_json::from_value(doc.clone()).expect("a result document");
    let mut out = Vec::new();
    cephbench::report::Format::Text
        .reporter()
        .render(&r, &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// Nearest-rank quantile over (value, count) pairs of several histograms
/// (the test's own percentile of concatenated latencies, independent of
/// hdrhistogram's merge).
pub fn quantile_of_concatenation(pairs: &mut [(u64, u64)], q: f64) -> u64 {
    pairs.sort_unstable();
    let total: u64 = pairs.iter().map(|p| p.1).sum();
    let rank = ((q * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (v, n) in pairs.iter() {
        seen += n;
        if seen >= rank {
            return *v;
        }
    }
    unreachable!()
}

/// Every OSD counted exactly the writes the client placed on it (the mgr
/// may write a stray object meanwhile: 2 allowed); returns their sum.
pub fn osd_counted_writes(v: &serde_json::Value) -> u64 {
    osd_counted(v, "write", "op_w")
}

/// Every OSD counted exactly the reads the client placed on it (its
/// `op_r`; 2 spare, as [`osd_counted_writes`]); returns their sum.
pub fn osd_counted_reads(v: &serde_json::Value) -> u64 {
    osd_counted(v, "read", "op_r")
}

/// Each OSD's `counter` against the client's `op` ops placed on it.
fn osd_counted(v: &serde_json::Value, op: &str, counter: &str) -> u64 {
    let mut total = 0;
    for o in v["osds"].as_array().expect("per-OSD rows") {
        let client: u64 = o["client"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["op"] == op)
            .map(|r| r["ops"].as_u64().unwrap())
            .sum();
        let osd = o["counters"][counter].as_u64().unwrap();
        assert!(
            osd >= client && osd <= client + 2,
            "osd.{}: client placed {client} {op}s there, the OSD counted {osd} ({counter})",
            o["osd"]
        );
        total += client;
    }
    total
}

/// Pool `pool`'s entry of `ceph osd pool ls detail` (pool_id, pg_num,
/// stripe_width, ...).
pub fn pool_detail(pool: &str) -> serde_json::Value {
    let detail: serde_json::Value =
        serde_json::from_str(&ceph(&["osd", "pool", "ls", "detail", "-f", "json"])).unwrap();
    detail
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pool_name"] == pool)
        .unwrap_or_else(|| panic!("no pool {pool} in {detail}"))
        .clone()
}

/// The erasure-code profile of [`ec_pool`]'s pools, as `ceph osd
/// erasure-code-profile get` gives it (every value a string).
pub fn ec_profile() -> serde_json::Value {
    serde_json::from_str(&ceph(&[
        "osd",
        "erasure-code-profile",
        "get",
        "cbt-ec21",
        "-f",
        "json",
    ]))
    .unwrap()
}

/// A command's output, which must have succeeded (else the test fails
/// showing both streams); returns its stdout.
pub fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether this process runs as root (a rig of its own needs network
/// namespaces and daemons).
/// A cluster test that cannot run on this machine: says why and lets the
/// test return, or fails it under `CI=true` (CI must never pass a test it
/// did not run).
pub fn cannot_run(why: &str) {
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "this test cannot run here, and CI=true: {why}"
    );
    eprintln!("SKIPPED: {why}");
}

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|u| u.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// `bash containers/cluster.sh ARGS --dir DIR`: a rig's own cluster.
pub fn cluster_sh(dir: &str, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/cluster.sh"))
        .args(args)
        .args(["--dir", dir])
        .output()
        .expect("run cluster.sh")
}

/// Stops the rig's cluster in its directory when dropped, also when the
/// test fails.
pub struct Down(pub &'static str);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = cluster_sh(self.0, &["down"]);
    }
}

/// Starts the slow-flush rig in `dir` (after stopping what was there): two
/// bluestore OSDs in network namespace `name` on `subnet`, osd.1 with
/// `flush` added to each fsync/fdatasync (`0`, `5ms`; changed later with
/// `cluster.sh slow-flush`), and one size-1 pool per OSD, `pools[i]` =
/// (name, device class of osd.i). Returns the guard that stops it.
pub fn up_slow_flush_rig(
    dir: &'static str,
    name: &str,
    subnet: &str,
    flush: &str,
    pools: [(&str, &str); 2],
) -> Down {
    let _ = cluster_sh(dir, &["down"]);
    let down = Down(dir);
    let slow = format!("osd.1={flush}");
    let classes = [
        format!("osd.0={}", pools[0].1),
        format!("osd.1={}", pools[1].1),
    ];
    let up = [
        "up",
        "--osds",
        "2",
        "--netns",
        "--subnet",
        subnet,
        "--name",
        name,
        "--slow-flush",
        &slow,
        "--class",
        &classes[0],
        "--class",
        &classes[1],
    ];
    ok(cluster_sh(dir, &up), "cluster.sh up --slow-flush");
    for (pool, class) in pools {
        let create = [
            "pool", "create", pool, "--class", class, "--size", "1", "--pg-num", "8",
        ];
        ok(cluster_sh(dir, &create), "pool create --class");
    }
    down
}

/// A size-3 pool on osd.0-2, each with a 4 GiB `osd_memory_target`; with
/// `rss`, osd.N resident at `rss + N x 100 MiB`, measured (the report
/// fixtures' pool).
pub fn pool_of_three(rss: Option<u64>) -> cephbench::result::PoolSettings {
    use cephbench::result::{OsdMemory, PoolSettings};
    let rss_of = |osd: i32| rss.map(|b| b + osd as u64 * (100 << 20));
    PoolSettings {
        name: "rbd-vm".into(),
        id: 3,
        size: 3,
        min_size: 2,
        pg_num: 32,
        crush_rule: "replicated_rule".into(),
        device_classes: vec!["ssd".into()],
        osds: vec![0, 1, 2],
        osd_memory_target: (0..3)
            .map(|osd| OsdMemory {
                osd,
                bytes: 4 << 30,
                rss_bytes: rss_of(osd),
                source: None,
            })
            .collect(),
        memory_held_bytes: Some(12 << 30),
        memory_measured_bytes: rss.map(|_| (0..3).filter_map(rss_of).sum()),
        memory_not_measured: rss
            .is_none()
            .then(|| "no OSD of this pool runs on this host (bench01)".into()),
        erasure: None,
        osd_settings: Vec::new(),
        autoscale_mode: None,
        flags: Vec::new(),
        balancer: None,
    }
}

/// A k=2 m=1 layout (jerasure reed_sol_van, failure domain osd, 4 KiB
/// stripe unit, overwrites on): 2+1, usable 67 %.
pub fn ec21_layout() -> cephbench::result::ErasureLayout {
    cephbench::result::ErasureLayout {
        profile: "ec21".into(),
        k: 2,
        m: 1,
        plugin: "jerasure".into(),
        technique: Some("reed_sol_van".into()),
        stripe_unit: 4096,
        failure_domain: "osd".into(),
        allow_ec_overwrites: true,
    }
}

/// A look at a cluster of 3 OSDs and 32 PGs (osdmap epoch 40) at `t_s`:
/// HEALTH_OK, or with `noout` HEALTH_WARN (OSDMAP_FLAGS); `deep` the PGs
/// deep-scrubbing.
pub fn cluster_look(
    t_s: f64,
    noout: bool,
    deep: &[&str],
) -> cephbench::result::cluster::ClusterSnapshot {
    use cephbench::result::cluster::{ClusterSnapshot, HealthCheck};
    ClusterSnapshot {
        t_s,
        health: if noout { "HEALTH_WARN" } else { "HEALTH_OK" }.into(),
        checks: if noout {
            vec![HealthCheck {
                name: "OSDMAP_FLAGS".into(),
                severity: "HEALTH_WARN".into(),
                message: "noout flag(s) set".into(),
            }]
        } else {
            Vec::new()
        },
        pgs: 32,
        pgs_not_clean: Default::default(),
        scrubbing: 0,
        deep_scrubbing: deep.len() as u32,
        scrubbing_pgs: Vec::new(),
        deep_scrubbing_pgs: deep.iter().map(|s| s.to_string()).collect(),
        recovering_objects_per_sec: 0.0,
        recovering_bytes_per_sec: 0.0,
        osdmap_epoch: 40,
        osds: 3,
        osds_up: 3,
        osds_in: 3,
        osds_down: Vec::new(),
        osds_out: Vec::new(),
    }
}
