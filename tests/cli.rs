//! Bad input at the command line: one clear line, a non-zero exit, no cluster needed.

mod common;

use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;

fn cephbench() -> Command {
    let mut c = Command::cargo_bin("cephbench").unwrap();
    c.timeout(Duration::from_secs(60));
    c
}

fn one_line_error(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "expected one line, got: {err}"
    );
    assert!(err.starts_with("cephbench: error: "), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout on a usage error");
    err
}

/// `args` against an unreachable mon: bad input found before connecting,
/// exit 2 and one line; the line.
fn usage_error(args: &[&str]) -> String {
    let out = cephbench()
        .args(["-m", "127.0.0.1:1"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    one_line_error(&out)
}

#[test]
fn unknown_flag_is_one_line_exit_2() {
    let out = cephbench()
        .args(["rados", "write", "-p", "x", "--frobnicate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = one_line_error(&out);
    assert!(e.contains("--frobnicate"), "{e}");
}

/// A missing required argument is named on the one line (clap lists them on
/// lines of its own, which the one-line error used to drop).
#[test]
fn missing_required_arguments_are_named() {
    let e = usage_error(&["rados", "write"]);
    assert!(
        e.contains("missing required arguments: --pool <POOL>"),
        "{e}"
    );
    let e = usage_error(&["rbd", "-p", "x"]);
    assert!(e.contains("--image") && e.contains("--size"), "{e}");
    let e = usage_error(&["compare"]);
    assert!(e.contains("RESULT.json"), "{e}");
}

/// An invalid value lists the valid ones on the one line, with a "did you
/// mean" where one is close; so does an unknown subcommand.
#[test]
fn invalid_values_list_the_valid_ones() {
    let e = usage_error(&["--format", "xml", "report", "a.json"]);
    assert!(e.contains("valid values: text, json, csv"), "{e}");
    let e = usage_error(&["rados", "writ", "-p", "x"]);
    assert!(e.contains("did you mean 'write'?"), "{e}");
    assert!(e.contains("valid values: write, seq, rand"), "{e}");
    let e = usage_error(&["rbd", "-p", "x", "--size", "1G", "--rw", "radnread"]);
    assert!(e.contains("did you mean 'randread'?"), "{e}");
    let e = usage_error(&["rados", "write", "-p", "x", "--verfy", "stamp"]);
    assert!(e.contains("did you mean '--verify'?"), "{e}");
    let e = usage_error(&["sweeep"]);
    assert!(e.contains("did you mean 'sweep'?"), "{e}");
}

#[test]
fn interval_out_of_range_is_one_line_exit_2() {
    for bad in ["0", "50ms", "2h", "abc"] {
        let out = cephbench()
            .args([
                "-m",
                "127.0.0.1:1",
                "rados",
                "write",
                "-p",
                "x",
                "--interval",
                bad,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--interval {bad}");
        let e = one_line_error(&out);
        assert!(e.contains("--interval"), "{e}");
    }
    let out = cephbench()
        .args(["-m", "127.0.0.1:1", "rbd", "-p", "x", "--interval", "0"])
        .output()
        .unwrap();
    assert!(one_line_error(&out).contains("must be from 100ms to 1h"));
}

#[test]
fn bad_steady_options_are_one_line_exit_2() {
    for (args, want) in [
        (&["--steady", "iops:abc"][..], "the limit is not a number"),
        (&["--steady", "bw:2%"][..], "unknown criterion"),
        (&["--steady-window", "10s"][..], "need --steady"),
        (&["--steady", "iops:2%", "-d", "10"][..], "drop -d"),
        (
            &["--steady", "iops:2%", "--steady-window", "1s"][..],
            "two intervals",
        ),
        (
            &[
                "--steady",
                "iops:2%",
                "--steady-window",
                "2s",
                "--interval",
                "2s",
            ][..],
            "two intervals",
        ),
        (
            &["--steady", "lat:1", "--steady-max", "10s"][..],
            "at least --steady-window",
        ),
    ] {
        let mut c = cephbench();
        c.args(["-m", "127.0.0.1:1", "rados", "write", "-p", "x"]);
        let out = c.args(args).output().unwrap();
        let e = one_line_error(&out);
        assert!(
            out.status.code() == Some(2) && e.contains(want),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn zero_block_size_is_rejected_before_connecting() {
    // -m points nowhere: the error must come from validation, instantly.
    let t = Instant::now();
    let out = cephbench()
        .args(["-m", "127.0.0.1:1", "rados", "write", "-p", "x", "-b", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_error(&out).contains("--block-size"));
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn end_flush_needs_writes_and_one_client() {
    for (args, want) in [
        (
            &["--rw", "randread"][..],
            "--end-flush needs a workload that writes",
        ),
        (&["--rw", "write", "--group", "g"][..], "drop --group"),
    ] {
        let out = cephbench()
            .args([
                "-m",
                "127.0.0.1:1",
                "rbd",
                "-p",
                "x",
                "--size",
                "1G",
                "--end-flush",
            ])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = one_line_error(&out);
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

#[test]
fn op_history_is_bounded_and_for_one_client() {
    for (args, want) in [
        (
            vec!["--op-history", "5", "rados", "write", "-p", "x"],
            "100..=100000",
        ),
        (
            vec![
                "--op-history",
                "500",
                "rados",
                "write",
                "-p",
                "x",
                "--group",
                "g",
                "--clients",
                "2",
            ],
            "--op-history is for one client",
        ),
    ] {
        let out = cephbench()
            .args(["-m", "127.0.0.1:1"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = one_line_error(&out);
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

#[test]
fn block_larger_than_object_is_rejected() {
    let out = cephbench()
        .args(["rados", "write", "-p", "x", "-b", "8M", "-O", "4M"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_error(&out).contains("larger than --object-size"));
}

#[test]
fn bad_size_and_duration_name_the_format() {
    let out = cephbench()
        .args(["rados", "write", "-p", "x", "-b", "4Q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_error(&out).contains("unknown unit"));
    let out = cephbench()
        .args(["rados", "write", "-p", "x", "-d", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_error(&out).contains("expected a number"));
}

#[test]
fn unreachable_mon_fails_within_the_connect_timeout() {
    // Nothing listens on port 1: the client retries until its mount timeout.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ceph.conf");
    std::fs::write(
        &conf,
        "[global]\nmon host = 127.0.0.1:1\nauth client required = none\n",
    )
    .unwrap();
    let t = Instant::now();
    let out = cephbench()
        .arg("-c")
        .arg(&conf)
        .args([
            "--connect-timeout",
            "3s",
            "rados",
            "write",
            "-p",
            "x",
            "-b",
            "4K",
        ])
        .output()
        .unwrap();
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let e = one_line_error(&out);
    assert!(
        e.contains("Connection timed out") && e.contains("--mon-host"),
        "{e}"
    );
    assert!(
        took < Duration::from_secs(7),
        "took {took:?} with a 3 s timeout"
    );
    assert!(
        took >= Duration::from_secs(2),
        "gave up too early: {took:?}"
    );
}

#[test]
fn missing_config_file_is_named() {
    let out = cephbench()
        .args(["-c", "/nonexistent/ceph.conf", "rados", "write", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(one_line_error(&out).contains("/nonexistent/ceph.conf"));
}

/// Image sizes that cannot be benchmarked are refused before connecting:
/// none at all, and one out of proportion to its test area (removing it
/// would take minutes).
#[test]
fn image_sizes_without_blocks_or_out_of_proportion_are_refused() {
    for (args, want) in [
        (&["--size", "0"][..], "--size 0 holds no block"),
        (
            &["--size", "1G", "--test-area", "0"][..],
            "--test-area 0 holds no block",
        ),
        (
            &["--size", "900T", "--test-area", "64M"][..],
            "--size 900 TiB is out of proportion to the --test-area 64 MiB",
        ),
    ] {
        let t = Instant::now();
        let mut all = vec!["rbd", "-p", "x", "--rw", "randwrite"];
        all.extend_from_slice(args);
        let e = usage_error(&all);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
    // A large image around a test area in proportion is fine (the mon is
    // unreachable: it fails later, connecting).
    let out = cephbench()
        .args([
            "-m",
            "127.0.0.1:1",
            "--connect-timeout",
            "1s",
            "rbd",
            "-p",
            "x",
        ])
        .args(["--size", "32T", "--test-area", "64G"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A config file that exists but cannot be read is named with the real
/// reason, not librados' "No such file or directory".
#[test]
fn unreadable_config_file_says_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let conf = dir.path().join("ceph.conf");
    std::fs::write(&conf, "[global]\nmon host = 127.0.0.1:1\n").unwrap();
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads any file: run as nobody then, from a copy of the binary
    // nobody may run wherever the build directory is.
    let bin = dir.path().join("cephbench");
    std::fs::copy(assert_cmd::cargo::cargo_bin("cephbench"), &bin).unwrap();
    let mut cmd = if nix_is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        std::process::Command::new(&bin)
    };
    let out = cmd
        .arg("-c")
        .arg(&conf)
        .args(["rados", "write", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = one_line_error(&out);
    assert!(e.contains("Permission denied"), "{e}");
    assert!(!e.contains("No such file"), "{e}");
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn help_lists_the_commands() {
    cephbench()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("rados").and(predicate::str::contains("cleanup")));
}

/// `compare --fail-if-slower PCT`: exit 0 when no file is worse than the baseline by more than
/// PCT %, exit 1 with one `regression:` line per worse figure otherwise (a fio file: no
/// per-second samples, so no noise verdict can excuse the difference); a bad PCT is a usage error.
#[test]
fn compare_fail_if_slower_gates_on_regressions() {
    let base =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-randrw.json");
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    let read = &mut v["jobs"][0]["read"];
    read["iops"] = serde_json::json!(read["iops"].as_f64().unwrap() * 0.7);
    read["bw_bytes"] = serde_json::json!((read["bw_bytes"].as_f64().unwrap() * 0.7) as u64);
    let slower = dir.path().join("slower.json");
    std::fs::write(&slower, serde_json::to_vec(&v).unwrap()).unwrap();

    cephbench()
        .args(["compare", "--fail-if-slower", "5"])
        .arg(&base)
        .arg(&base)
        .assert()
        .success();
    let out = cephbench()
        .args(["compare", "--fail-if-slower", "10%"])
        .arg(&base)
        .arg(&slower)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().any(
            |l| l.starts_with("cephbench: regression: mix/read IOPS: ") && l.contains("-30.0%")
        ),
        "{err}"
    );
    assert!(!out.stdout.is_empty(), "the table is still printed");
    cephbench()
        .args(["compare", "--fail-if-slower", "50"])
        .arg(&base)
        .arg(&slower)
        .assert()
        .success();
    let out = cephbench()
        .args(["compare", "--fail-if-slower", "-3"])
        .arg(&base)
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_line_error(&out);
}

/// `--help` groups the options every command accepts under Connection,
/// Telemetry and Output; `compare` and `report` read files only, so their
/// help leaves the cluster's options out, and still accepts them (a script
/// that passes `-c` to every command keeps working).
#[test]
fn help_groups_cluster_options_and_hides_them_offline() {
    let help = |args: &[&str]| {
        let out = cephbench().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let rados = help(&["rados", "--help"]);
    for heading in ["\nConnection:\n", "\nTelemetry:\n", "\nOutput:\n"] {
        assert!(rados.contains(heading), "{heading:?} missing: {rados}");
    }
    let telemetry = &rados[rados.find("\nTelemetry:\n").unwrap()..];
    let telemetry = &telemetry[..telemetry.find("\nOutput:\n").unwrap()];
    for flag in ["--telemetry-id", "--no-telemetry", "--counter-interval"] {
        assert!(
            telemetry.contains(flag),
            "{flag} not under Telemetry: {rados}"
        );
    }
    for cmd in ["compare", "report"] {
        let h = help(&[cmd, "--help"]);
        for flag in [
            "--conf",
            "--telemetry-id",
            "--op-timeout",
            "--progress",
            "Connection:",
        ] {
            assert!(!h.contains(flag), "`{cmd} --help` shows {flag}: {h}");
        }
        assert!(h.contains("--format"), "{h}");
        let out = cephbench()
            .args([
                cmd,
                "-c",
                "/nonexistent.conf",
                "--progress",
                "never",
                "missing.json",
            ])
            .output()
            .unwrap();
        let e = one_line_error(&out);
        assert!(
            e.contains("missing.json"),
            "{cmd} rejected a cluster option: {e}"
        );
    }
}

#[test]
fn version_names_the_loaded_libraries() {
    for flag in ["--version", "-V"] {
        let out = cephbench().arg(flag).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], concat!("cephbench ", env!("CARGO_PKG_VERSION")));
        // librados 3.0.0 from /lib/x86_64-linux-gnu/librados.so.2 (Ceph 16.2.15)
        assert!(lines[1].starts_with("librados 3."), "{text}");
        assert!(lines[1].contains("librados.so.2 (Ceph "), "{text}");
        // librbd 1.16.0 from /lib/x86_64-linux-gnu/librbd.so.1
        assert!(lines[2].starts_with("librbd 1."), "{text}");
        assert!(lines[2].ends_with("/librbd.so.1"), "{text}");
    }
}

#[test]
fn drop_caches_on_a_job_without_reads_is_refused_before_connecting() {
    let t = Instant::now();
    for args in [
        &["rados", "write", "-p", "x"][..],
        &["rbd", "-p", "x", "--size", "1G", "--rw", "randwrite"][..],
        &["sweep", "rados", "write", "-p", "x"][..],
    ] {
        let out = cephbench()
            .args(["-m", "127.0.0.1:1", "--drop-caches"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = one_line_error(&out);
        assert!(e.contains("--drop-caches is for jobs that read"), "{e}");
    }
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// `--disrupt`: a spec that does not parse or does not fit the job, no
/// `--allow-disrupt`, a group or a command that does not run one job: one
/// line naming the fix, exit 2, before connecting.
#[test]
fn bad_disrupt_is_one_line_exit_2_before_connecting() {
    let t = Instant::now();
    let write = ["rados", "write", "-p", "x", "-d", "30"];
    for (pre, args, want) in [
        (
            vec!["--disrupt", "osd.1:out@5s,in@20s"],
            &write[..],
            "add --allow-disrupt to confirm",
        ),
        (
            vec!["--disrupt", "osd.1:in@5s", "--allow-disrupt"],
            &write[..],
            "in@5s: the OSD is not out: `in` undoes an earlier `out`",
        ),
        (
            vec!["--disrupt", "osd.1:out@9s,in@5s", "--allow-disrupt"],
            &write[..],
            "in@5s is not after out@9s",
        ),
        (
            vec!["--disrupt", "1:out@5s", "--allow-disrupt"],
            &write[..],
            "give osd.N:ACTION@TIME",
        ),
        (
            vec!["--disrupt", "osd.1:kill@5s", "--allow-disrupt"],
            &write[..],
            "'kill' is not an action",
        ),
        (
            vec!["--disrupt", "osd.1:out@5s,in@40s", "--allow-disrupt"],
            &write[..],
            "in@40s is not before the job's end (30s",
        ),
        (
            vec!["--disrupt", "osd.1:out@5s", "--allow-disrupt"],
            &[
                "rados",
                "write",
                "-p",
                "x",
                "--group",
                "g",
                "--clients",
                "2",
            ][..],
            "--disrupt is for one client",
        ),
        (
            vec!["--disrupt", "osd.1:out@5s", "--allow-disrupt"],
            &["sweep", "rados", "write", "-p", "x"][..],
            "--disrupt is for rados and rbd runs",
        ),
        (
            vec!["--disrupt", "osd.1:out@5s"],
            &[
                "rbd",
                "-p",
                "x",
                "--size",
                "1G",
                "--rw",
                "randwrite",
                "-d",
                "10",
            ][..],
            "add --allow-disrupt",
        ),
    ] {
        let out = cephbench()
            .args(["-m", "127.0.0.1:1"])
            .args(&pre)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{pre:?} {args:?}");
        let e = one_line_error(&out);
        assert!(e.contains(want), "{pre:?} {args:?}: {e}");
    }
    assert!(t.elapsed() < Duration::from_secs(10));
}

/// `--data-pool` / `--data-pools` that cannot be right whatever the
/// cluster holds: one line naming the fix, exit 2, before connecting.
#[test]
fn bad_data_pools_are_refused_before_connecting() {
    let t = Instant::now();
    for (args, want) in [
        (
            &["rbd", "-p", "rbd", "--data-pool", "rbd", "--size", "1G"][..],
            "the image's own pool",
        ),
        // An existing image keeps its own data pool.
        (
            &["rbd", "-p", "rbd", "--data-pool", "ec", "--image", "vm"][..],
            "--size",
        ),
        (
            &["suite", "lab", "--pools", "a,b", "--data-pool", "ec"][..],
            "--data-pools -,ec",
        ),
        (
            &["suite", "lab", "--pools", "a,b", "--data-pools", "ec"][..],
            "1 entries for the 2 pools",
        ),
        (
            &["suite", "lab", "-p", "a", "--data-pools", "ec"][..],
            "give --data-pool ec",
        ),
        (
            &["suite", "lab", "--pools", "a,b", "--data-pools", "-,a"][..],
            "pool 'a'",
        ),
        (
            &["suite", "rados", "-p", "a", "--data-pool", "ec"][..],
            "no rbd jobs",
        ),
        (
            &[
                "sweep",
                "rados",
                "write",
                "--pools",
                "a,b",
                "--data-pools",
                "-,ec",
                "--rates",
                "1,2",
            ][..],
            "drop --data-pools",
        ),
        (
            &[
                "sweep",
                "rbd",
                "--pools",
                "a,b",
                "--data-pool",
                "ec",
                "--size",
                "1G",
                "--rates",
                "1,2",
            ][..],
            "--data-pools",
        ),
    ] {
        let e = usage_error(args);
        assert!(e.contains(want), "{args:?}: {e}");
        // One line as written: no run of spaces left by a broken string continuation.
        assert!(!e.trim().contains("  "), "{args:?}: {e}");
    }
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn diagnose_refuses_a_budget_too_short_and_formats_it_has_none_of() {
    let e = usage_error(&["diagnose", "-p", "x", "--budget", "30s"]);
    assert!(
        e.contains("--budget 30s is below 60 s") && e.contains("give --budget 1m or more"),
        "{e}"
    );
    for f in ["csv", "timeline-csv"] {
        let e = usage_error(&["--format", f, "diagnose", "-p", "x"]);
        assert!(
            e.contains("diagnose prints text, markdown, json or html"),
            "{e}"
        );
    }
    let e = usage_error(&["diagnose", "-p", "x", "-N", "a/b"]);
    assert!(e.contains("namespace"), "{e}");
    let e = usage_error(&["diagnose"]);
    assert!(e.contains("--pool"), "{e}");
    // Several pools: each once, each its minute, text or JSON.
    let e = usage_error(&["diagnose", "--pools", "a,b,a"]);
    assert!(e.contains("--pools names 'a' twice"), "{e}");
    let e = usage_error(&["diagnose", "--pools", "a,,b"]);
    assert!(e.contains("no empty name"), "{e}");
    let e = usage_error(&["diagnose", "--pools", "a,b", "--budget", "90s"]);
    assert!(
        e.contains("--budget 90s over 2 pools gives each 45 s") && e.contains("--budget 2m"),
        "{e}"
    );
    let e = usage_error(&["--format", "html", "diagnose", "--pools", "a,b"]);
    assert!(e.contains("for the HTML page give one pool"), "{e}");
    let e = usage_error(&["diagnose", "-p", "a", "--pools", "b,c"]);
    assert!(e.contains("cannot be used with"), "{e}");
}
