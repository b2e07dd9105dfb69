//! The delay switch alone: two network namespaces, one TAP each, joined by
//! cephbench-netdelay. Needs root and `ip netns`; skipped (with a message) otherwise.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_cephbench-netdelay");

fn sh(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn ns_usable() -> Result<(), String> {
    // Root: the effective uid in /proc/self/status.
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("?");
    if uid != "0" {
        return Err(format!("not root (euid {uid})"));
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("no /dev/net/tun".into());
    }
    let probe = format!("ndprobe{}", std::process::id());
    sh(&["ip", "netns", "add", &probe])?;
    sh(&["ip", "netns", "del", &probe])
}

/// The switch and the namespaces; everything is removed on drop.
struct Rig {
    switch: Child,
    echo: Option<Child>,
    ns: Vec<String>,
    ctl: PathBuf,
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Some(e) = &mut self.echo {
            let _ = e.kill();
            let _ = e.wait();
        }
        let _ = self.switch.kill();
        let _ = self.switch.wait();
        for ns in &self.ns {
            let _ = sh(&["ip", "netns", "del", ns]);
        }
        let _ = std::fs::remove_file(&self.ctl);
    }
}

impl Rig {
    fn start() -> Rig {
        let id = std::process::id() % 100_000;
        let ctl = std::env::temp_dir().join(format!("netdelay-test-{id}.sock"));
        let taps = [format!("ndt{id}a"), format!("ndt{id}b")];
        let mut switch = Command::new(BIN)
            .args(["run", "--ctl"])
            .arg(&ctl)
            .args(["--port", &format!("a={}", taps[0])])
            .args(["--port", &format!("b={}", taps[1])])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start switch");
        let mut line = String::new();
        BufReader::new(switch.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut rig = Rig {
            switch,
            echo: None,
            ns: Vec::new(),
            ctl,
        };
        assert_eq!(line.trim(), "ready", "switch did not start");
        for (i, tap) in taps.iter().enumerate() {
            let ns = format!("ndt-{id}-{i}");
            sh(&["ip", "netns", "add", &ns]).unwrap();
            rig.ns.push(ns.clone());
            for kv in [
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ] {
                sh(&["ip", "netns", "exec", &ns, "sysctl", "-qw", kv]).unwrap();
            }
            sh(&["ip", "link", "set", tap, "netns", &ns]).unwrap();
            sh(&["ip", "-n", &ns, "link", "set", tap, "name", "eth0"]).unwrap();
            sh(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("192.0.2.{}/24", i + 1),
                "dev",
                "eth0",
            ])
            .unwrap();
            sh(&["ip", "-n", &ns, "link", "set", "eth0", "up"]).unwrap();
            sh(&["ip", "-n", &ns, "link", "set", "lo", "up"]).unwrap();
        }
        let mut echo = Command::new("ip")
            .args([
                "netns",
                "exec",
                &rig.ns[1],
                BIN,
                "echo",
                "--listen",
                "192.0.2.2:7777",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start echo");
        let mut line = String::new();
        BufReader::new(echo.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        rig.echo = Some(echo);
        assert_eq!(line.trim(), "ready", "echo server did not start");
        rig
    }

    fn ctl(&self, lines: &[&str]) -> String {
        let out = Command::new(BIN)
            .arg("ctl")
            .arg("--ctl")
            .arg(&self.ctl)
            .args(lines)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ctl {lines:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs the tool in namespace 0 and returns its stdout.
    fn client(&self, args: &[&str]) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns[0], BIN])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Median TCP round trip, µs.
    fn rtt(&self) -> f64 {
        let out = self.client(&["rtt", "--to", "192.0.2.2:7777", "--count", "300"]);
        field(&out, "median")
    }
}

fn field(out: &str, key: &str) -> f64 {
    out.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {out:?}"))
        .parse()
        .unwrap()
}

#[test]
fn delay_raises_rtt_by_twice_the_one_way_delay_and_keeps_order() {
    if let Err(why) = ns_usable() {
        eprintln!("SKIPPED: the switch test needs root, /dev/net/tun and `ip netns`: {why}");
        return;
    }
    let rig = Rig::start();

    // Every pair starts at 0; `show` lists both directions.
    let show = rig.ctl(&["show"]);
    assert!(
        show.contains("a b 0\n") && show.contains("b a 0\n"),
        "{show}"
    );

    let base = rig.rtt();
    rig.ctl(&["delay * * 1000"]);
    assert!(rig.ctl(&["show"]).contains("a b 1000\n"));
    let delayed = rig.rtt();
    // One direction only: the round trip gains one delay.
    rig.ctl(&["delay a b 0"]);
    let one_way = rig.rtt();
    rig.ctl(&["delay * * 0"]);
    let back = rig.rtt();
    eprintln!(
        "median TCP RTT: D=0 {base:.0} us, D=1000 us both ways {delayed:.0} us, one way {one_way:.0} us, D=0 again {back:.0} us"
    );
    assert!(
        base < 1000.0,
        "zero-delay RTT {base:.0} us: the switch itself is too slow"
    );
    let rise = delayed - base;
    assert!(
        (1600.0..=2400.0).contains(&rise),
        "RTT rose by {rise:.0} us, want 2000 ± 20%"
    );
    let rise1 = one_way - base;
    assert!(
        (800.0..=1200.0).contains(&rise1),
        "one-way delay raised RTT by {rise1:.0} us, want 1000 ± 20%"
    );
    assert!(
        back < base + 500.0,
        "RTT did not come back after delay 0: {back:.0} us"
    );

    // Order: 1000 datagrams 50 µs apart at 2 ms each way; halfway the delay drops to 0, so
    // the later datagrams are due before the ~40 still queued on each link. A per-link FIFO
    // keeps them behind.
    rig.ctl(&["delay * * 2000"]);
    let ctl = rig.ctl.to_str().unwrap().to_string();
    let t = Instant::now();
    let out = rig.client(&[
        "burst",
        "--to",
        "192.0.2.2:7777",
        "--count",
        "1000",
        "--gap-us",
        "50",
        "--ctl",
        &ctl,
        "--midway",
        "delay * * 0",
    ]);
    eprintln!("burst: {} ({:?})", out.trim(), t.elapsed());
    assert_eq!(
        field(&out, "out_of_order"),
        0.0,
        "frames were reordered: {out}"
    );
    assert!(field(&out, "received") >= 990.0, "lost too many: {out}");
    let stats = rig.ctl(&["stats"]);
    assert!(stats.contains("dropped_full=0"), "{stats}");
    // Bad control lines are refused with a message naming the ports.
    let out = Command::new(BIN)
        .args(["ctl", "--ctl", &ctl, "delay nope * 5"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ports: a b"));
}
