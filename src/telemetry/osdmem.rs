//! The RAM an OSD actually holds, measured: the resident set of its process
//! when it runs on this host (the cost figure, IOPS per GiB of one OSD's RAM,
//! measured rather than planned).
//!
//! Which local process is `osd.N`? Its `osd metadata` names the host
//! (`hostname`) and the data directory (`osd_data`); BlueStore keeps
//! `<osd_data>/fsid` open (and locked) for as long as the OSD runs, so the
//! `ceph-osd` process with a descriptor on a path under `osd_data` is that
//! OSD, whatever its command line says, even with several clusters on the
//! host. Its `VmRSS` (`/proc/PID/status`) is the figure. An OSD on another
//! host, or in a container whose hostname differs, is not measured here; the
//! caller then falls back to `osd_memory_target` and says so.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One OSD process found on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalOsd {
    /// The OSD id.
    pub osd: i32,
    /// Its process id.
    pub pid: u32,
    /// Its resident set (`VmRSS`), bytes.
    pub rss_bytes: u64,
}

/// `VmRSS` of a `/proc/PID/status` text, bytes.
pub fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut it = line["VmRSS:".len()..].split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some("kB") | None => Some(n * 1024),
        _ => None,
    }
}

/// The `ceph-osd` processes under `proc_root` (normally `/proc`) that hold a
/// file under `osd_data` open.
fn pids_holding(proc_root: &Path, osd_data: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let dir = e.path();
        match std::fs::read_to_string(dir.join("comm")) {
            Ok(c) if c.trim_end() == "ceph-osd" => {}
            _ => continue,
        }
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|t: PathBuf| t.starts_with(osd_data))
        });
        if holds {
            found.push(pid);
        }
    }
    found
}

/// Every OSD of `metadata` (`ceph osd metadata -f json`) that runs on host
/// `host`, found under `proc_root`, with its resident set. An OSD whose
/// process cannot be told apart (none, or more than one holding its data
/// directory) is left out.
pub fn local_osds(metadata: &Value, host: &str, proc_root: &Path) -> Vec<LocalOsd> {
    let Some(all) = metadata.as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in all {
        let (Some(id), Some(h), Some(data)) = (
            m.get("id").and_then(Value::as_i64),
            m.get("hostname").and_then(Value::as_str),
            m.get("osd_data").and_then(Value::as_str),
        ) else {
            continue;
        };
        if h != host || data.is_empty() {
            continue;
        }
        let Ok(osd) = i32::try_from(id) else {
            continue;
        };
        if let [pid] = pids_holding(proc_root, Path::new(data))[..] {
            let status = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status"));
            if let Some(rss_bytes) = status.ok().as_deref().and_then(parse_vm_rss) {
                out.push(LocalOsd {
                    osd,
                    pid,
                    rss_bytes,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_in_bytes() {
        let s = "Name:\tceph-osd\nVmPeak:\t 1200000 kB\nVmRSS:\t  345678 kB\nThreads:\t60\n";
        assert_eq!(parse_vm_rss(s), Some(345_678 * 1024));
        assert_eq!(
            parse_vm_rss("Name:\tx\n"),
            None,
            "a kernel thread has no VmRSS"
        );
        assert_eq!(parse_vm_rss("VmRSS:\t12 MB\n"), None, "unknown unit");
    }

    /// A fake /proc: two clusters' osd.0 on this host (told apart by the data
    /// directory they hold open), a process that is not an OSD holding the
    /// same directory, and an OSD of another host.
    #[test]
    fn finds_each_osd_by_the_data_directory_its_process_holds() {
        let root = std::env::temp_dir().join(format!("cephbench-osdmem-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let proc_ = root.join("proc");
        let proc_entry = |pid: u32, comm: &str, rss_kb: u64, holds: &[&Path]| {
            let d = proc_.join(pid.to_string());
            std::fs::create_dir_all(d.join("fd")).unwrap();
            std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
            std::fs::write(
                d.join("status"),
                format!("Name:\t{comm}\nVmRSS:\t{rss_kb} kB\n"),
            )
            .unwrap();
            for (i, p) in holds.iter().enumerate() {
                std::os::unix::fs::symlink(p, d.join("fd").join(i.to_string())).unwrap();
            }
        };
        let a = root.join("a/osd.0");
        let b = root.join("b/osd.0");
        proc_entry(
            100,
            "ceph-osd",
            300_000,
            &[&a.join("fsid"), Path::new("/dev/null")],
        );
        proc_entry(200, "ceph-osd", 500_000, &[&b.join("fsid")]);
        proc_entry(300, "bash", 4_000, &[&a]);
        std::fs::create_dir_all(proc_.join("self")).unwrap();
        let md = serde_json::json!([
            {"id": 0, "hostname": "here", "osd_data": b.to_str().unwrap()},
            {"id": 1, "hostname": "elsewhere", "osd_data": a.to_str().unwrap()},
            {"id": 2, "hostname": "here", "osd_data": "/nowhere/osd.2"},
        ]);
        let got = local_osds(&md, "here", &proc_);
        assert_eq!(
            got,
            vec![LocalOsd {
                osd: 0,
                pid: 200,
                rss_bytes: 500_000 * 1024
            }]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
