//! What the fault tests share: a pool of the test's own, removed on drop, and a
//! cephbench run watched line by line while it runs.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ceph, conf, list, query};

/// A key of the test's own: `entity` made anew with `caps` (`mon`, `allow r`,
/// ...), its keyring written to `path` (mode 0600); removed when dropped.
pub(crate) struct Key(pub(crate) String);

impl Key {
    pub(crate) fn new(entity: &str, caps: &[&str], path: &std::path::Path) -> Key {
        let _ = Command::new("ceph")
            .arg("-c")
            .arg(conf())
            .args(["auth", "rm", entity])
            .output();
        let mut args = vec!["auth", "get-or-create", entity];
        args.extend(caps);
        args.extend(["-o", path.to_str().expect("a UTF-8 path")]);
        ceph(&args);
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        Key(entity.to_string())
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        let _ = Command::new("ceph")
            .arg("-c")
            .arg(conf())
            .args(["auth", "rm", &self.0])
            .output();
    }
}

/// cephbench's records of changes it made to the cluster (the mons'
/// config-key store, keys under `cephbench/change/`), each value parsed.
pub(crate) fn records() -> Vec<Value> {
    let v = crate::common::query(
        false,
        serde_json::json!({"prefix": "config-key dump", "key": "cephbench/change/"}),
    );
    v.as_object()
        .unwrap_or_else(|| panic!("config-key dump: {v}"))
        .values()
        .map(|r| serde_json::from_str(r.as_str().unwrap()).unwrap())
        .collect()
}

/// The records of run `run`.
pub(crate) fn records_of(run: &str) -> Vec<Value> {
    records().into_iter().filter(|r| r["run"] == run).collect()
}

/// However a test ends: `cephbench cleanup -p POOL --run-name RUN`, which
/// undoes what a killed run `RUN` left changed (its records) and removes
/// its objects, so that a failed test leaves no record to warn the next.
pub(crate) struct CleanupRun(pub(crate) &'static str, pub(crate) &'static str);

impl Drop for CleanupRun {
    fn drop(&mut self) {
        let _ = crate::common::cephbench()
            .args(["cleanup", "-p", self.0, "--run-name", self.1])
            .output();
    }
}

/// A size-1 pool of this test, removed on drop.
pub(crate) struct TempPool(pub(crate) &'static str);

/// Removes pool `name` if it exists.
pub(crate) fn remove_pool(name: &str) {
    let _ = Command::new("ceph")
        .arg("-c")
        .arg(conf())
        .args([
            "osd",
            "pool",
            "rm",
            name,
            name,
            "--yes-i-really-really-mean-it",
        ])
        .output();
}

impl TempPool {
    pub(crate) fn new(name: &'static str, app: &str) -> TempPool {
        remove_pool(name);
        crate::common::create_replicated(name, "8", 1);
        ceph(&["osd", "pool", "application", "enable", name, app]);
        if app == "rbd" {
            assert!(rbd(&["pool", "init", name]).status.success());
        }
        wait_active(name);
        TempPool(name)
    }
}

impl Drop for TempPool {
    fn drop(&mut self) {
        remove_pool(self.0);
    }
}

/// Waits (bounded) until every PG of `pool` is active (other pools of a
/// shared cluster may be recovering: not our business).
pub(crate) fn wait_active(pool: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v = query(
            true,
            serde_json::json!({"prefix": "pg ls-by-pool", "poolstr": pool}),
        );
        let out = v.to_string();
        let pgs = v
            .get("pg_stats")
            .or(Some(&v))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !pgs.is_empty()
            && pgs
                .iter()
                .all(|p| p["state"].as_str().is_some_and(|s| s.starts_with("active")))
        {
            return;
        }
        assert!(Instant::now() < deadline, "PGs of {pool} not active: {out}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub(crate) fn pools() -> Vec<String> {
    ceph(&["osd", "pool", "ls"])
        .lines()
        .map(str::to_string)
        .collect()
}

pub(crate) fn rbd(args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("120")
        .arg("rbd")
        .arg("-c")
        .arg(conf())
        .args(args)
        .output()
        .unwrap()
}

pub(crate) fn ours(pool: &str) -> Vec<String> {
    list(pool)
        .into_iter()
        .filter(|n| {
            n.starts_with("cephbench_data.")
                || n.starts_with("cephbench_meta.")
                || n.starts_with("rbd_id.cephbench_img.")
        })
        .collect()
}

/// A running cephbench whose stderr is collected line by line, and its
/// stdout as it comes (a report larger than the pipe's buffer would
/// otherwise hold the process before its exit).
pub(crate) struct Running {
    child: Child,
    stderr: Arc<Mutex<String>>,
    stdout: std::thread::JoinHandle<String>,
}

pub(crate) fn spawn(args: &[&str]) -> Running {
    let bin = assert_cmd::cargo::cargo_bin("cephbench");
    let mut child = Command::new(bin)
        .arg("-c")
        .arg(conf())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let stderr = Arc::new(Mutex::new(String::new()));
    let err = child.stderr.take().unwrap();
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let mut s = sink.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    Running {
        child,
        stderr,
        stdout,
    }
}

impl Running {
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (bounded) until stderr contains `pat`.
    pub(crate) fn wait_stderr(&self, pat: &str, limit: Duration) {
        let t = Instant::now();
        while !self.stderr().contains(pat) {
            assert!(
                t.elapsed() < limit,
                "'{pat}' did not appear on stderr within {limit:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn signal(&self, sig: &str) {
        assert!(Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success());
    }

    /// Waits (bounded) for the exit; returns the exit code, stdout, stderr
    /// and how long the wait took.
    pub(crate) fn finish(mut self, limit: Duration) -> (Option<i32>, String, String, Duration) {
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > limit {
                let _ = self.child.kill();
                panic!("no exit within {limit:?}: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let waited = t.elapsed();
        // Let the reader thread catch the last lines.
        std::thread::sleep(Duration::from_millis(100));
        let stderr = self.stderr();
        (status.code(), self.stdout.join().unwrap(), stderr, waited)
    }
}

/// Resumes a SIGSTOPped daemon when dropped, also when the test fails.
pub(crate) struct Stopped(pub(crate) String);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0]).status();
    }
}
