//! The CPU an OSD process uses, read from `/proc` when it runs on this host:
//! its `utime + stime` (`/proc/PID/stat`, every thread of the process, the
//! exited ones included) at the edges of a window, the CPUs it may run on
//! (its affinity, its cgroup's CPU quota) and how busy those CPUs were
//! (`/proc/stat`). The figures made from them are `explain::cpu`'s.
//!
//! Which local process is `osd.N`: a `ceph-osd` process whose command line
//! names id N (`-i N`, `--id N`, `-n osd.N`, `--name osd.N`), on the host
//! `osd metadata` names. Several clusters on one host each have an osd.0, so
//! the cluster's own word settles it first: an OSD's messenger nonce (the
//! `/NONCE` of its addresses in `osd dump`) is its process id
//! (`Messenger::get_pid_nonce`, random only for a process that is pid 1 in
//! a container). Without that, the one candidate on the command line, else
//! the one holding the OSD's data directory open ([`super::osdmem`]).
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::osdmem::{pids_holding, NotMeasured};
use crate::result::OsdCpu;

/// One OSD process found on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsdProcess {
    /// The OSD id.
    pub osd: i32,
    /// Its process id.
    pub pid: u32,
    /// Its start time (`/proc/PID/stat` field 22, clock ticks after boot):
    /// a restarted OSD (or a reused pid) has another.
    pub start: u64,
    /// How it was found: `osdmap nonce`, `command line`, `data directory`.
    pub found_by: &'static str,
}

/// `utime + stime` and the start time of a `/proc/PID/stat` text, in clock
/// ticks. The command name (field 2) is in parentheses and may hold spaces
/// or parentheses: the fields are counted after its last `)`.
pub fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): field N is f[N - 3].
    let num = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some((num(14)? + num(15)?, num(22)?))
}

/// The OSD id a `ceph-osd` command line (`/proc/PID/cmdline`, NUL-separated)
/// names: `-i N`, `--id N`, `--id=N`, `-n osd.N`, `--name osd.N`,
/// `--name=osd.N`.
pub fn cmdline_osd_id(cmdline: &[u8]) -> Option<i32> {
    let args: Vec<&str> = cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .collect();
    let id = |v: &str| v.parse::<i32>().ok().filter(|n| *n >= 0);
    let name = |v: &str| v.strip_prefix("osd.").and_then(id);
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).copied().unwrap_or("");
        let got = match *a {
            "-i" | "--id" => id(next),
            "-n" | "--name" => name(next),
            _ => a
                .strip_prefix("--id=")
                .and_then(id)
                .or_else(|| a.strip_prefix("--name=").and_then(name)),
        };
        if got.is_some() {
            return got;
        }
    }
    None
}

/// Each OSD's messenger nonce from `osd dump` (its public addresses'
/// `nonce`; older releases' `public_addr` string ends in `/NONCE`).
pub fn parse_nonces(doc: &Value) -> Vec<(i32, u64)> {
    let Some(osds) = doc.get("osds").and_then(Value::as_array) else {
        return Vec::new();
    };
    osds.iter()
        .filter_map(|o| {
            let id = i32::try_from(o.get("osd")?.as_i64()?).ok()?;
            let nonce = o
                .get("public_addrs")
                .and_then(|a| a.get("addrvec"))
                .and_then(Value::as_array)
                .and_then(|v| v.iter().find_map(|a| a.get("nonce")?.as_u64()))
                .or_else(|| {
                    let s = o.get("public_addr")?.as_str()?;
                    s.rsplit_once('/')?.1.parse().ok()
                })?;
            Some((id, nonce))
        })
        .collect()
}

/// The clock ticks per second of `/proc`'s CPU times (`AT_CLKTCK` of this
/// process's auxiliary vector; 100 when it cannot be read: Linux's USER_HZ
/// on every common architecture).
pub fn clock_ticks() -> u64 {
    std::fs::read("/proc/self/auxv")
        .ok()
        .and_then(|b| parse_auxv_clktck(&b))
        .unwrap_or(100)
}

/// `AT_CLKTCK` (17) of an auxiliary vector of native-endian 64-bit pairs.
fn parse_auxv_clktck(b: &[u8]) -> Option<u64> {
    const AT_CLKTCK: u64 = 17;
    let word = |c: &[u8]| -> Option<u64> { Some(u64::from_ne_bytes(c.try_into().ok()?)) };
    b.chunks_exact(16)
        .find(|c| word(&c[..8]) == Some(AT_CLKTCK))
        .and_then(|c| word(&c[8..]))
        .filter(|t| *t > 0)
}

/// The CPUs of a list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b.min(a.saturating_add(4095)));
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// Per CPU of `/proc/stat` (`cpuN` lines): (N, busy ticks, all ticks).
/// Busy is all but idle, iowait and nice: the time of niced processes
/// (nice > 0) is not counted, since they yield the CPU to an OSD at the
/// default priority (CFS gives a nice-0 thread ~9 times a nice-10 one's
/// share); steal counts as busy (a virtual machine's CPU taken by its host
/// was not this guest's to use).
pub fn parse_proc_stat(text: &str) -> Vec<(u32, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cpu = it.next()?.strip_prefix("cpu")?.parse::<u32>().ok()?;
            // user nice system idle iowait irq softirq steal (guest is in user)
            let v: Vec<u64> = it.take(8).filter_map(|x| x.parse().ok()).collect();
            if v.len() < 4 {
                return None;
            }
            let all: u64 = v.iter().sum();
            let free = v[1] + v[3] + v.get(4).copied().unwrap_or(0);
            Some((cpu, all - free, all))
        })
        .collect()
}

/// The CPU quota, in cores, of the cgroup a process is in and of its
/// ancestors (the smallest): cgroup v2 `cpu.max` (`QUOTA PERIOD`, `max` for
/// none) or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 for none).
/// `None`: no quota, or none readable.
pub fn cgroup_quota_cores(proc_root: &Path, sys_cgroup: &Path, pid: u32) -> Option<f64> {
    let groups = std::fs::read_to_string(proc_root.join(pid.to_string()).join("cgroup")).ok()?;
    let mut best: Option<f64> = None;
    for line in groups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (base, v2) = if ctrl.is_empty() {
            (sys_cgroup.join("unified"), true)
        } else if ctrl.split(',').any(|c| c == "cpu") {
            (sys_cgroup.join(ctrl), false)
        } else {
            continue;
        };
        // v2 mounted at /sys/fs/cgroup itself (no "unified" directory).
        let base = if v2 && !base.is_dir() {
            sys_cgroup.to_path_buf()
        } else {
            base
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            let q = if v2 {
                std::fs::read_to_string(dir.join("cpu.max"))
                    .ok()
                    .and_then(|s| parse_cpu_max(&s))
            } else {
                let r = |f: &str| {
                    std::fs::read_to_string(dir.join(f))
                        .ok()
                        .and_then(|s| s.trim().parse::<i64>().ok())
                };
                match (r("cpu.cfs_quota_us"), r("cpu.cfs_period_us")) {
                    (Some(q), Some(p)) if q > 0 && p > 0 => Some(q as f64 / p as f64),
                    _ => None,
                }
            };
            if let Some(q) = q {
                best = Some(best.map_or(q, |b: f64| b.min(q)));
            }
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
    }
    best
}

/// cgroup v2 `cpu.max`: `QUOTA PERIOD` in µs → cores; `max` → none.
fn parse_cpu_max(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let q = it.next()?.parse::<f64>().ok()?;
    let p = it
        .next()
        .map_or(Some(100_000.0), |p| p.parse::<f64>().ok())?;
    (q > 0.0 && p > 0.0).then(|| q / p)
}

/// The pool's OSDs that run on this host, found (see the module's text),
/// and why each other one was not.
pub fn locate(
    metadata: Option<&Value>,
    nonces: &[(i32, u64)],
    osds: &[i32],
    host: &str,
    proc_root: &Path,
) -> (Vec<OsdProcess>, Vec<(i32, NotMeasured)>) {
    let mut procs: Option<Vec<(u32, Option<i32>)>> = None;
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for &osd in osds {
        let Some(all) = metadata.and_then(Value::as_array) else {
            missing.push((osd, NotMeasured::NoMetadata));
            continue;
        };
        let Some(m) = all
            .iter()
            .find(|m| m.get("id").and_then(Value::as_i64) == Some(i64::from(osd)))
        else {
            missing.push((osd, NotMeasured::NoHost));
            continue;
        };
        match m.get("hostname").and_then(Value::as_str) {
            None => {
                missing.push((osd, NotMeasured::NoHost));
                continue;
            }
            Some(h) if h != host => {
                missing.push((osd, NotMeasured::OtherHost(h.to_string())));
                continue;
            }
            Some(_) => {}
        }
        let procs = procs.get_or_insert_with(|| ceph_osd_processes(proc_root));
        let nonce = nonces.iter().find(|(o, _)| *o == osd).map(|(_, n)| *n);
        let by_cmdline: Vec<u32> = procs
            .iter()
            .filter(|(_, id)| *id == Some(osd))
            .map(|(p, _)| *p)
            .collect();
        let pick = if let Some(p) = procs
            .iter()
            .find(|(p, _)| Some(u64::from(*p)) == nonce)
            .map(|(p, _)| *p)
        {
            Ok((p, "osdmap nonce"))
        } else if by_cmdline.len() == 1 {
            Ok((by_cmdline[0], "command line"))
        } else {
            let data = m.get("osd_data").and_then(Value::as_str).unwrap_or("");
            let (holding, denied) = if data.is_empty() {
                (Vec::new(), false)
            } else {
                pids_holding(proc_root, Path::new(data))
            };
            match holding.as_slice() {
                [p] => Ok((*p, "data directory")),
                [] if by_cmdline.len() > 1 => Err(NotMeasured::Several),
                [] if denied => Err(NotMeasured::Denied),
                [] => Err(NotMeasured::NoProcess),
                _ => Err(NotMeasured::Several),
            }
        };
        match pick {
            Ok((pid, how)) => match read_stat(proc_root, pid) {
                Some((_, start)) => found.push(OsdProcess {
                    osd,
                    pid,
                    start,
                    found_by: how,
                }),
                None => missing.push((osd, NotMeasured::NoStatus)),
            },
            Err(e) => missing.push((osd, e)),
        }
    }
    (found, missing)
}

/// Every `ceph-osd` process under `proc_root` with the OSD id its command
/// line names.
fn ceph_osd_processes(proc_root: &Path) -> Vec<(u32, Option<i32>)> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            (comm.trim_end() == "ceph-osd").then_some(())?;
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            Some((pid, cmdline_osd_id(&cmdline)))
        })
        .collect()
}

/// `utime + stime` and the start time of one process, clock ticks.
fn read_stat(proc_root: &Path, pid: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    parse_stat(&s)
}

/// `utime + stime` of `p`'s process now, clock ticks; `None` when it
/// ended or was replaced since it was found.
pub fn process_ticks(p: &OsdProcess) -> Option<u64> {
    read_stat(Path::new("/proc"), p.pid)
        .filter(|(_, start)| *start == p.start)
        .map(|(t, _)| t)
}

/// One reading of the found OSDs' CPU times and of the host's CPUs.
#[derive(Debug, Clone)]
pub struct CpuReading {
    /// When it was taken.
    pub at: Instant,
    /// The same on the wall clock.
    pub wall: SystemTime,
    /// Per OSD, its `utime + stime` in clock ticks; `None` when its process
    /// ended or was replaced (another start time) since it was found.
    pub osds: Vec<(i32, Option<u64>)>,
    /// Per CPU of the host: (N, busy ticks, all ticks).
    pub host: Vec<(u32, u64, u64)>,
}

/// Reads the CPU times of `procs` and of the host's CPUs now.
pub fn read(procs: &[OsdProcess], proc_root: &Path) -> CpuReading {
    let osds = procs
        .iter()
        .map(|p| {
            let t = read_stat(proc_root, p.pid)
                .filter(|(_, start)| *start == p.start)
                .map(|(t, _)| t);
            (p.osd, t)
        })
        .collect();
    let host = std::fs::read_to_string(proc_root.join("stat"))
        .map(|s| parse_proc_stat(&s))
        .unwrap_or_default();
    CpuReading {
        at: Instant::now(),
        wall: SystemTime::now(),
        osds,
        host,
    }
}

/// The CPUs a process may run on (`Cpus_allowed_list` of its status).
pub fn allowed_cpus(proc_root: &Path, pid: u32) -> Option<Vec<u32>> {
    let s = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
    Some(parse_cpu_list(&l["Cpus_allowed_list:".len()..])).filter(|v| !v.is_empty())
}

/// Ticks of one OSD between two readings (`None` if either lacks it or the
/// counter went backwards).
pub fn osd_ticks(a: &CpuReading, b: &CpuReading, osd: i32) -> Option<u64> {
    let get = |r: &CpuReading| r.osds.iter().find(|(o, _)| *o == osd).and_then(|x| x.1);
    get(b)?.checked_sub(get(a)?)
}

/// Busy and all ticks of the CPUs `cpus` (all when empty) between two
/// readings.
pub fn host_ticks(a: &CpuReading, b: &CpuReading, cpus: &[u32]) -> Option<(u64, u64)> {
    let mut busy = 0u64;
    let mut all = 0u64;
    for (n, bb, ba) in &b.host {
        if !cpus.is_empty() && !cpus.contains(n) {
            continue;
        }
        let (_, ab, aa) = a.host.iter().find(|(m, _, _)| m == n)?;
        busy += bb.checked_sub(*ab)?;
        all += ba.checked_sub(*aa)?;
    }
    (all > 0).then_some((busy, all))
}

/// The OSD processes of a pool found on this host and their CPU readings
/// around one job, each taken off the I/O path: with the counters before
/// and after the job (the counters' window), and at the ramp's end (a
/// thread of its own, woken by the job's clock) and the job's end (the
/// measured window).
pub struct CpuWatch {
    procs: Vec<OsdProcess>,
    missing: Vec<(i32, NotMeasured)>,
    proc_root: PathBuf,
    ticks: u64,
    counters_start: Option<CpuReading>,
    measured_start: Arc<(Mutex<WindowStart>, Condvar)>,
    thread: Option<JoinHandle<()>>,
    measured_end: Option<CpuReading>,
    /// The reading with the perf dumps after the job.
    counters_end: Option<CpuReading>,
}

/// The measured window's start, as the job's clock and the thread see it.
#[derive(Default)]
struct WindowStart {
    /// The job's start, once marked, and the ramp after it.
    start: Option<Instant>,
    ramp: Duration,
    /// The job ended (or the watch was dropped): the thread stops waiting.
    ended: bool,
    /// Its reading at the ramp's end.
    reading: Option<CpuReading>,
}

impl CpuWatch {
    /// Finds the OSDs `osds` on this host (`osd metadata`'s hostnames and
    /// the osdmap's nonces, each one mon command) under `/proc`.
    pub fn find(rados: &crate::ceph::Rados, osds: &[i32]) -> CpuWatch {
        let ask = |cmd: &str| {
            rados
                .mon_command(cmd)
                .ok()
                .and_then(|o| serde_json::from_slice::<Value>(&o.out).ok())
        };
        let md = ask(r#"{"prefix":"osd metadata","format":"json"}"#);
        let nonces = ask(r#"{"prefix":"osd dump","format":"json"}"#)
            .map(|d| parse_nonces(&d))
            .unwrap_or_default();
        let proc_root = PathBuf::from("/proc");
        let (procs, missing) = locate(
            md.as_ref(),
            &nonces,
            osds,
            &crate::names::hostname(),
            &proc_root,
        );
        CpuWatch {
            procs,
            missing,
            proc_root,
            ticks: clock_ticks(),
            counters_start: None,
            measured_start: Arc::default(),
            thread: None,
            measured_end: None,
            counters_end: None,
        }
    }

    /// For the counter sampler: each OSD found, its ticks with the
    /// counters before the job, and the clock ticks per second.
    pub fn seed(&self) -> (Vec<(OsdProcess, Option<u64>)>, u64) {
        let procs = self
            .procs
            .iter()
            .map(|p| {
                let t = self
                    .counters_start
                    .as_ref()
                    .and_then(|r| r.osds.iter().find(|(o, _)| *o == p.osd)?.1);
                (p.clone(), t)
            })
            .collect();
        (procs, self.ticks)
    }

    /// Each OSD's ticks with the perf dumps after the job (after
    /// [`CpuWatch::finish`]).
    pub fn end_ticks(&self) -> Vec<(i32, Option<u64>)> {
        self.counters_end
            .as_ref()
            .map(|r| r.osds.clone())
            .unwrap_or_default()
    }

    /// Reads now: the counters' window starts (call right after the perf
    /// dumps before the job).
    pub fn counters_started(&mut self) {
        if !self.procs.is_empty() {
            self.counters_start = Some(read(&self.procs, &self.proc_root));
        }
    }

    /// The job's clock for the measured window: when the job starts, a
    /// thread of its own sleeps through `ramp` and reads.
    pub fn clock(&mut self, ramp: Duration) -> crate::progress::JobClock {
        if self.procs.is_empty() || self.thread.is_some() {
            return crate::progress::JobClock::default();
        }
        let shared = Arc::clone(&self.measured_start);
        let (procs, root) = (self.procs.clone(), self.proc_root.clone());
        self.thread = std::thread::Builder::new()
            .name("osd-cpu".into())
            .spawn(move || {
                let (lock, cv) = &*shared;
                let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
                while st.start.is_none() && !st.ended {
                    st = cv.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                let Some(at) = st.start.map(|s| s + st.ramp) else {
                    return;
                };
                while !st.ended && Instant::now() < at {
                    let left = at.saturating_duration_since(Instant::now());
                    st = cv
                        .wait_timeout(st, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                if !st.ended {
                    drop(st);
                    let r = read(&procs, &root);
                    lock.lock().unwrap_or_else(|e| e.into_inner()).reading = Some(r);
                }
            })
            .ok();
        let shared = Arc::clone(&self.measured_start);
        crate::progress::JobClock::new(move |t| {
            let (lock, cv) = &*shared;
            let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
            st.start = Some(t);
            st.ramp = ramp;
            cv.notify_all();
        })
    }

    /// Reads now: the job has ended (call right after it returns).
    pub fn job_ended(&mut self) {
        if self.thread.is_some() {
            self.measured_end = Some(read(&self.procs, &self.proc_root));
        }
        self.stop();
    }

    fn stop(&mut self) {
        {
            let (lock, cv) = &*self.measured_start;
            lock.lock().unwrap_or_else(|e| e.into_inner()).ended = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Reads now (the counters' window ends: call right after the perf
    /// dumps after the job) and gives each of `osds` its [`OsdCpu`]:
    /// measured, or why not (`hosts`: each OSD's host, for the reason).
    pub fn finish(&mut self, osds: &[i32]) -> Vec<(i32, OsdCpu)> {
        self.stop();
        self.counters_end = (!self.procs.is_empty()).then(|| read(&self.procs, &self.proc_root));
        let end = self.counters_end.as_ref();
        let window_start = self
            .measured_start
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reading
            .take();
        let secs = |t: u64| t as f64 / self.ticks as f64;
        osds.iter()
            .map(|&osd| {
                if let Some((_, why)) = self.missing.iter().find(|(o, _)| *o == osd) {
                    let host = match why {
                        NotMeasured::OtherHost(h) => Some(h.clone()),
                        _ => None,
                    };
                    return (
                        osd,
                        OsdCpu {
                            host,
                            not_measured: Some(cpu_reason(osd, why)),
                            ..OsdCpu::default()
                        },
                    );
                }
                let Some(p) = self.procs.iter().find(|p| p.osd == osd) else {
                    return (osd, OsdCpu::default());
                };
                let measured = window_start
                    .as_ref()
                    .zip(self.measured_end.as_ref())
                    .and_then(|(a, b)| Some((osd_ticks(a, b, osd)?, a, b)));
                let counters = self
                    .counters_start
                    .as_ref()
                    .zip(end)
                    .and_then(|(a, b)| osd_ticks(a, b, osd));
                let cpus = allowed_cpus(&self.proc_root, p.pid);
                let busy = measured.and_then(|(_, a, b)| {
                    let (busy, all) = host_ticks(a, b, cpus.as_deref().unwrap_or(&[]))?;
                    let n = cpus.as_ref().map_or(a.host.len(), Vec::len);
                    Some(busy as f64 / all as f64 * n as f64)
                });
                let gone = measured.is_none() && counters.is_none();
                (
                    osd,
                    OsdCpu {
                        host: Some(crate::names::hostname()),
                        not_measured: gone.then(|| {
                            format!(
                                "osd.{osd}: its process (pid {}) ended or restarted during the run",
                                p.pid
                            )
                        }),
                        pid: Some(p.pid),
                        cpu_s: measured.map(|(t, _, _)| secs(t)),
                        window_s: measured.map(|(_, a, b)| b.at.duration_since(a.at).as_secs_f64()),
                        window_start_unix: measured.and_then(|(_, a, _)| {
                            a.wall
                                .duration_since(std::time::UNIX_EPOCH)
                                .ok()
                                .map(|d| d.as_secs_f64())
                        }),
                        counters_cpu_s: counters.map(secs),
                        allowed_cpus: cpus.map(|c| c.len() as u32),
                        quota_cores: cgroup_quota_cores(
                            &self.proc_root,
                            Path::new("/sys/fs/cgroup"),
                            p.pid,
                        ),
                        allowed_cpus_busy: busy,
                        ..OsdCpu::default()
                    },
                )
            })
            .collect()
    }
}

impl Drop for CpuWatch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why an OSD's CPU was not measured, as the reports say it.
pub fn cpu_reason(osd: i32, why: &NotMeasured) -> String {
    match why {
        NotMeasured::OtherHost(h) => {
            format!(
                "osd.{osd} runs on host {h}, not here; {}",
                crate::result::AGENT_THERE
            )
        }
        NotMeasured::NoProcess => format!(
            "osd.{osd}: no ceph-osd process on this host names it or holds its data directory \
             (in a container?)"
        ),
        other => format!("osd.{osd}: {}", other.reason()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_the_command_name() {
        // A command name with a space and a parenthesis.
        let s = "4242 (ceph-osd (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 \
                 1500 250 0 0 20 0 60 0 987654 1234 56 18446744073709551615";
        assert_eq!(parse_stat(s), Some((1750, 987654)));
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }

    #[test]
    fn osd_id_from_the_command_line() {
        let c = |s: &str| cmdline_osd_id(s.replace(' ', "\0").as_bytes());
        assert_eq!(c("/usr/bin/ceph-osd -c /tmp/x/ceph.conf -i 2"), Some(2));
        assert_eq!(
            c("ceph-osd -f --cluster ceph --id 11 --setuser ceph"),
            Some(11)
        );
        assert_eq!(c("ceph-osd --id=3"), Some(3));
        assert_eq!(c("ceph-osd -n osd.7"), Some(7));
        assert_eq!(c("ceph-osd --name=osd.8"), Some(8));
        assert_eq!(c("ceph-osd -n client.admin"), None);
        assert_eq!(c("ceph-osd --mkfs"), None);
        assert_eq!(c("ceph-osd -i"), None);
    }

    #[test]
    fn nonces_from_the_osdmap() {
        let doc = serde_json::json!({"osds": [
            {"osd": 0, "public_addrs": {"addrvec": [
                {"type": "v2", "addr": "127.0.0.20:6800", "nonce": 4321},
                {"type": "v1", "addr": "127.0.0.20:6801", "nonce": 4321}]}},
            {"osd": 1, "public_addr": "127.0.0.21:6801/999"},
            {"osd": 2}
        ]});
        assert_eq!(parse_nonces(&doc), vec![(0, 4321), (1, 999)]);
        assert!(parse_nonces(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn auxv_clock_ticks() {
        let mut b = Vec::new();
        for (k, v) in [(6u64, 4096u64), (17, 100), (0, 0)] {
            b.extend_from_slice(&k.to_ne_bytes());
            b.extend_from_slice(&v.to_ne_bytes());
        }
        assert_eq!(parse_auxv_clktck(&b), Some(100));
        assert_eq!(parse_auxv_clktck(&b[..16]), None);
        assert!(clock_ticks() > 0);
    }

    #[test]
    fn cpu_lists_proc_stat_and_quotas() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("1"), vec![1]);
        assert!(parse_cpu_list("").is_empty());
        let stat = "cpu  10 0 10 100 5 0 0 0 0 0\ncpu0 8 0 2 40 2 0 0 1 0 0\ncpu1 2 7 8 60 3 0 0 0\nintr 5\n";
        // cpu1's niced time (7) is not busy.
        assert_eq!(parse_proc_stat(stat), vec![(0, 11, 53), (1, 10, 80)]);
        assert_eq!(parse_cpu_max("50000 100000\n"), Some(0.5));
        assert_eq!(parse_cpu_max("max 100000"), None);
    }

    /// A fake /proc and /sys/fs/cgroup: two clusters' osd.0 on this host
    /// (the osdmap's nonce picks ours), osd.1 found by its command line,
    /// osd.2 on another host, osd.3 named by two processes and held by
    /// neither; a v1 quota on osd.0's cgroup's parent.
    #[test]
    fn finds_each_osd_and_reads_its_cpu() {
        let root = std::env::temp_dir().join(format!("cephbench-osdcpu-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let proc_ = root.join("proc");
        let entry = |pid: u32, cmd: &str, ticks: (u64, u64), cg: &str| {
            let d = proc_.join(pid.to_string());
            std::fs::create_dir_all(d.join("fd")).unwrap();
            let comm = cmd.split(' ').next().unwrap();
            std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
            std::fs::write(d.join("cmdline"), cmd.replace(' ', "\0")).unwrap();
            std::fs::write(
                d.join("stat"),
                format!(
                    "{pid} ({comm}) S 1 1 1 0 -1 0 0 0 0 0 {} {} 0 0 20 0 9 0 555 0 0",
                    ticks.0, ticks.1
                ),
            )
            .unwrap();
            std::fs::write(d.join("status"), "Name:\tx\nCpus_allowed_list:\t0-1,3\n").unwrap();
            std::fs::write(d.join("cgroup"), cg).unwrap();
        };
        entry(
            100,
            "ceph-osd -c /a/ceph.conf -i 0",
            (10, 5),
            "1:cpu:/osds/osd0\n",
        );
        entry(200, "ceph-osd -c /b/ceph.conf -i 0", (99, 1), "1:cpu:/\n");
        entry(300, "ceph-osd -c /b/ceph.conf -i 1", (7, 3), "0::/\n");
        entry(400, "ceph-osd -i 3", (0, 0), "");
        entry(401, "ceph-osd -i 3", (0, 0), "");
        entry(500, "bash -i 0", (0, 0), "");
        std::fs::write(proc_.join("stat"), "cpu0 10 0 0 90 0 0 0 0\n").unwrap();
        let cg = root.join("cgroup");
        std::fs::create_dir_all(cg.join("cpu/osds/osd0")).unwrap();
        std::fs::write(cg.join("cpu/osds/cpu.cfs_quota_us"), "25000\n").unwrap();
        std::fs::write(cg.join("cpu/osds/cpu.cfs_period_us"), "100000\n").unwrap();
        std::fs::write(cg.join("cpu/osds/osd0/cpu.cfs_quota_us"), "-1\n").unwrap();
        std::fs::write(cg.join("cpu/osds/osd0/cpu.cfs_period_us"), "100000\n").unwrap();
        let md = serde_json::json!([
            {"id": 0, "hostname": "here", "osd_data": "/a/osd.0"},
            {"id": 1, "hostname": "here", "osd_data": "/b/osd.1"},
            {"id": 2, "hostname": "there", "osd_data": "/c/osd.2"},
            {"id": 3, "hostname": "here", "osd_data": "/d/osd.3"},
        ]);
        let (found, missing) = locate(Some(&md), &[(0, 100)], &[0, 1, 2, 3, 4], "here", &proc_);
        let pids: Vec<(i32, u32, &str)> =
            found.iter().map(|p| (p.osd, p.pid, p.found_by)).collect();
        assert_eq!(
            pids,
            vec![(0, 100, "osdmap nonce"), (1, 300, "command line")]
        );
        assert_eq!(
            missing,
            vec![
                (2, NotMeasured::OtherHost("there".into())),
                (3, NotMeasured::Several),
                (4, NotMeasured::NoHost),
            ]
        );
        // Without the nonce, osd.0 has two candidates holding nothing.
        let (_, missing) = locate(Some(&md), &[], &[0], "here", &proc_);
        assert_eq!(missing, vec![(0, NotMeasured::Several)]);
        let r = read(&found, &proc_);
        assert_eq!(r.osds, vec![(0, Some(15)), (1, Some(10))]);
        assert_eq!(r.host, vec![(0, 10, 100)]);
        assert_eq!(allowed_cpus(&proc_, 100), Some(vec![0, 1, 3]));
        assert_eq!(cgroup_quota_cores(&proc_, &cg, 100), Some(0.25));
        assert_eq!(cgroup_quota_cores(&proc_, &cg, 200), None);
        // A replaced process (another start time) reads as gone.
        let mut moved = found.clone();
        moved[0].start = 1;
        assert_eq!(read(&moved, &proc_).osds[0], (0, None));
        let later = CpuReading {
            at: r.at,
            wall: r.wall,
            osds: vec![(0, Some(115)), (1, None)],
            host: vec![(0, 60, 200)],
        };
        assert_eq!(osd_ticks(&r, &later, 0), Some(100));
        assert_eq!(osd_ticks(&r, &later, 1), None);
        assert_eq!(host_ticks(&r, &later, &[]), Some((50, 100)));
        assert_eq!(host_ticks(&r, &later, &[0, 1]), Some((50, 100)));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
