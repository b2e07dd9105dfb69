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

/// Why one OSD's resident set was not measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotMeasured {
    /// `osd metadata` could not be read.
    NoMetadata,
    /// Its `osd metadata` names no host or no data directory.
    NoHost,
    /// It runs on another host (as `osd metadata` names it).
    OtherHost(String),
    /// No `ceph-osd` process here holds its data directory, and some
    /// `ceph-osd` processes' descriptors could not be read: they run as
    /// another user (reading another user's `/proc/PID/fd` needs root).
    Denied,
    /// No `ceph-osd` process here holds its data directory (one in a
    /// container, whose paths differ, is not seen).
    NoProcess,
    /// Several `ceph-osd` processes hold it: none can be told to be it.
    Several,
    /// Its process's `/proc/PID/status` had no readable `VmRSS`.
    NoStatus,
}

impl NotMeasured {
    /// In words, as the reports say it after an OSD's name.
    pub fn reason(&self) -> String {
        match self {
            NotMeasured::NoMetadata => {
                "osd metadata could not be read (needs mon 'allow r')".into()
            }
            NotMeasured::NoHost => "its osd metadata names no host or data directory".into(),
            NotMeasured::OtherHost(h) => format!("on host {h}, not this one"),
            NotMeasured::Denied => "needs root to read another user's /proc/PID (its ceph-osd \
                                    process runs as another user)"
                .into(),
            NotMeasured::NoProcess => "no ceph-osd process on this host holds its data directory \
                                       (in a container?)"
                .into(),
            NotMeasured::Several => "several ceph-osd processes hold its data directory".into(),
            NotMeasured::NoStatus => "its process's /proc/PID/status could not be read".into(),
        }
    }
}

/// Why the OSDs `missing` (of `total` in the pool) were not measured, one
/// sentence: "no OSD of this pool runs on this host (HOST)" when none does,
/// else each reason with the OSDs it holds for. `None` when none is missing.
pub fn why_not_measured(
    missing: &[(i32, NotMeasured)],
    total: usize,
    host: &str,
) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    if missing.len() == total
        && missing
            .iter()
            .all(|(_, m)| matches!(m, NotMeasured::OtherHost(_)))
    {
        return Some(format!("no OSD of this pool runs on this host ({host})"));
    }
    let mut by: Vec<(String, Vec<i32>)> = Vec::new();
    for (osd, m) in missing {
        let r = m.reason();
        match by.iter_mut().find(|(x, _)| *x == r) {
            Some((_, ids)) => ids.push(*osd),
            None => by.push((r, vec![*osd])),
        }
    }
    Some(
        by.iter()
            .map(|(r, ids)| format!("{}: {r}", crate::units::osd_list(ids)))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// The `ceph-osd` processes under `proc_root` (normally `/proc`) that hold a
/// file under `osd_data` open, and whether any `ceph-osd` process's
/// descriptors could not be read (another user's, without root).
pub(super) fn pids_holding(proc_root: &Path, osd_data: &Path) -> (Vec<u32>, bool) {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return (Vec::new(), false);
    };
    let mut denied = false;
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
        let fds = match std::fs::read_dir(dir.join("fd")) {
            Ok(fds) => fds,
            Err(e) => {
                denied |= e.kind() == std::io::ErrorKind::PermissionDenied;
                continue;
            }
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|t: PathBuf| t.starts_with(osd_data))
        });
        if holds {
            found.push(pid);
        }
    }
    (found, denied)
}

/// Every OSD of `metadata` (`ceph osd metadata -f json`) that runs on host
/// `host`, found under `proc_root`, with its resident set. An OSD whose
/// process cannot be told apart (none, or more than one holding its data
/// directory) is left out.
pub fn local_osds(metadata: &Value, host: &str, proc_root: &Path) -> Vec<LocalOsd> {
    let Some(all) = metadata.as_array() else {
        return Vec::new();
    };
    all.iter()
        .filter_map(|m| {
            let id = i32::try_from(m.get("id")?.as_i64()?).ok()?;
            measure_one(m, id, host, proc_root).ok()
        })
        .collect()
}

/// Measures each of `osds` as [`local_osds`] does, and says why each one
/// left out was: (measured, not measured with the reason).
pub fn measure(
    metadata: Option<&Value>,
    osds: &[i32],
    host: &str,
    proc_root: &Path,
) -> (Vec<LocalOsd>, Vec<(i32, NotMeasured)>) {
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for &osd in osds {
        let Some(all) = metadata.and_then(Value::as_array) else {
            missing.push((osd, NotMeasured::NoMetadata));
            continue;
        };
        let m = all
            .iter()
            .find(|m| m.get("id").and_then(Value::as_i64) == Some(i64::from(osd)));
        match m.map(|m| measure_one(m, osd, host, proc_root)) {
            Some(Ok(l)) => found.push(l),
            Some(Err(why)) => missing.push((osd, why)),
            None => missing.push((osd, NotMeasured::NoHost)),
        }
    }
    (found, missing)
}

/// One OSD's process and resident set from its `osd metadata` entry `m`.
fn measure_one(m: &Value, osd: i32, host: &str, proc_root: &Path) -> Result<LocalOsd, NotMeasured> {
    let (Some(h), Some(data)) = (
        m.get("hostname").and_then(Value::as_str),
        m.get("osd_data").and_then(Value::as_str),
    ) else {
        return Err(NotMeasured::NoHost);
    };
    if data.is_empty() {
        return Err(NotMeasured::NoHost);
    }
    if h != host {
        return Err(NotMeasured::OtherHost(h.to_string()));
    }
    let pid = match pids_holding(proc_root, Path::new(data)) {
        (pids, _) if pids.len() > 1 => return Err(NotMeasured::Several),
        (pids, _) if pids.len() == 1 => pids[0],
        (_, true) => return Err(NotMeasured::Denied),
        (_, false) => return Err(NotMeasured::NoProcess),
    };
    let status = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status"));
    let rss_bytes = status
        .ok()
        .as_deref()
        .and_then(parse_vm_rss)
        .ok_or(NotMeasured::NoStatus)?;
    Ok(LocalOsd {
        osd,
        pid,
        rss_bytes,
    })
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
        let osd0 = LocalOsd {
            osd: 0,
            pid: 200,
            rss_bytes: 500_000 * 1024,
        };
        assert_eq!(got, vec![osd0.clone()]);
        // Each OSD left out says why: another host, no process holding its
        // directory, no metadata entry; two processes holding one directory.
        let c = root.join("c/osd.4");
        proc_entry(400, "ceph-osd", 1_000, &[&c.join("fsid")]);
        proc_entry(401, "ceph-osd", 1_000, &[&c.join("block")]);
        let md = serde_json::json!([
            {"id": 0, "hostname": "here", "osd_data": b.to_str().unwrap()},
            {"id": 1, "hostname": "elsewhere", "osd_data": a.to_str().unwrap()},
            {"id": 2, "hostname": "here", "osd_data": "/nowhere/osd.2"},
            {"id": 4, "hostname": "here", "osd_data": c.to_str().unwrap()},
        ]);
        let (found, missing) = measure(Some(&md), &[0, 1, 2, 3, 4], "here", &proc_);
        assert_eq!(found, vec![osd0]);
        assert_eq!(
            missing,
            vec![
                (1, NotMeasured::OtherHost("elsewhere".into())),
                (2, NotMeasured::NoProcess),
                (3, NotMeasured::NoHost),
                (4, NotMeasured::Several),
            ]
        );
        let (_, none) = measure(None, &[0, 1], "here", &proc_);
        assert_eq!(
            none,
            vec![(0, NotMeasured::NoMetadata), (1, NotMeasured::NoMetadata)]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// What the reports say when the RAM was not measured.
    #[test]
    fn the_reason_names_the_osds_and_why() {
        let elsewhere = |o| (o, NotMeasured::OtherHost("b".into()));
        assert_eq!(why_not_measured(&[], 3, "a"), None);
        assert_eq!(
            why_not_measured(&[elsewhere(0), elsewhere(1), elsewhere(2)], 3, "a").unwrap(),
            "no OSD of this pool runs on this host (a)"
        );
        let mixed = [elsewhere(1), elsewhere(2), (0, NotMeasured::Denied)];
        assert_eq!(
            why_not_measured(&mixed, 3, "a").unwrap(),
            "osd.1, osd.2: on host b, not this one; osd.0: needs root to read another \
             user's /proc/PID (its ceph-osd process runs as another user)"
        );
    }
}
