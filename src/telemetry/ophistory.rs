//! Per-op evidence (`--op-history N`): each OSD's records of this run's own
//! ops, read from `dump_historic_ops` while the job runs.
//!
//! An OSD keeps the `osd_op_history_size` *slowest* ops of the last
//! `osd_op_history_duration` seconds (`OpHistory::cleanup` drops the
//! shortest first), so with the defaults (20 ops, 600 s) its history is the
//! tail, not a sample. Only when the user asks does cephbench raise the size
//! to N and shorten the window to [`HISTORY_WINDOW_S`] on the pool's OSDs,
//! polls each OSD every [`POLL`], keeps the records of its own client and
//! pool, and puts both settings back afterwards ([`OpHistory`]: on every
//! way out, an interrupt included). A poll that finds the history full says
//! so: ops may then have been dropped, the fastest first.
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::cluster::ProbeError;
use super::historic::{self, Record, Stamps};
use super::stop::StopSignal;
use crate::ceph::Rados;

/// How often each OSD's history is read.
pub const POLL: Duration = Duration::from_secs(1);

/// `osd_op_history_duration` during the run, s: long enough that an op is
/// still there at the next poll (a poll of every OSD may take a while on a
/// busy cluster), short enough that the history holds few ops beside them.
pub const HISTORY_WINDOW_S: u32 = 3;

/// The smallest and largest `--op-history`.
pub const MIN_SIZE: u32 = 100;
/// See [`MIN_SIZE`].
pub const MAX_SIZE: u32 = 100_000;

/// The most records kept (~150 bytes each): beyond, the evidence is what
/// was gathered until then.
const MAX_STAMPS: usize = 500_000;

const KEYS: [&str; 2] = ["osd_op_history_size", "osd_op_history_duration"];

/// One OSD's settings as they were before the run.
#[derive(Debug, Clone)]
struct Saved {
    osd: i32,
    values: [String; 2],
}

/// The settings to put back if the process must exit at once (a second
/// interrupt): [`restore_now`] reads it.
static PENDING: Mutex<Option<(Rados, Vec<Saved>)>> = Mutex::new(None);

fn tell(rados: &Rados, osd: i32, cmd: serde_json::Value) -> Result<Vec<u8>, ProbeError> {
    Ok(rados.osd_command(osd, &cmd.to_string())?.out)
}

fn get(rados: &Rados, osd: i32, key: &str) -> Result<String, ProbeError> {
    let out = tell(
        rados,
        osd,
        serde_json::json!({"prefix": "config get", "var": key, "format": "json"}),
    )?;
    let v: serde_json::Value = serde_json::from_slice(&out).map_err(|e| {
        ProbeError::Shape(super::ShapeError {
            what: "config get",
            why: e.to_string(),
        })
    })?;
    v.get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            ProbeError::Shape(super::ShapeError {
                what: "config get",
                why: format!("no {key} in {v}"),
            })
        })
}

fn set(rados: &Rados, osd: i32, key: &str, value: &str) -> Result<(), ProbeError> {
    tell(
        rados,
        osd,
        serde_json::json!({"prefix": "config set", "var": key, "val": [value]}),
    )
    .map(drop)
}

/// Puts one OSD's settings back: drops the run's override (so a value from
/// ceph.conf or the mons' database applies again), then sets the saved
/// value only if that did not bring it back.
fn put_back(rados: &Rados, s: &Saved) -> Result<(), ProbeError> {
    for (key, value) in KEYS.iter().zip(&s.values) {
        let _ = tell(
            rados,
            s.osd,
            serde_json::json!({"prefix": "config unset", "var": key}),
        );
        if get(rados, s.osd, key).ok().as_deref() != Some(value.as_str()) {
            set(rados, s.osd, key, value)?;
        }
    }
    Ok(())
}

/// The raised history on the pool's OSDs; puts the settings back when
/// [`OpHistory::restore`]d or dropped.
pub struct OpHistory {
    rados: Rados,
    saved: Vec<Saved>,
}

impl OpHistory {
    /// Reads each OSD's two settings, then sets the size to `size` and the
    /// window to [`HISTORY_WINDOW_S`]. Fails (with every OSD already
    /// changed put back) when an OSD does not answer or refuses: it needs
    /// osd 'allow *'.
    pub fn raise(rados: &Rados, osds: &[i32], size: u32) -> Result<OpHistory, ProbeError> {
        let mut guard = OpHistory {
            rados: rados.clone(),
            saved: Vec::new(),
        };
        for &osd in osds {
            let values = [get(rados, osd, KEYS[0])?, get(rados, osd, KEYS[1])?];
            guard.saved.push(Saved { osd, values });
            *PENDING.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((rados.clone(), guard.saved.clone()));
            set(rados, osd, KEYS[0], &size.to_string())?;
            set(rados, osd, KEYS[1], &HISTORY_WINDOW_S.to_string())?;
        }
        Ok(guard)
    }

    /// Puts every OSD's settings back; what could not be, as warnings.
    pub fn restore(mut self) -> Vec<String> {
        self.put_all_back()
    }

    fn put_all_back(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        for s in std::mem::take(&mut self.saved) {
            if let Err(e) = put_back(&self.rados, &s) {
                warnings.push(format!(
                    "could not put osd.{}'s op history back ({e}): set it with `ceph tell osd.{} \
                     config set osd_op_history_size {}` and `... osd_op_history_duration {}`",
                    s.osd, s.osd, s.values[0], s.values[1]
                ));
            }
        }
        *PENDING.lock().unwrap_or_else(PoisonError::into_inner) = None;
        warnings
    }
}

impl Drop for OpHistory {
    fn drop(&mut self) {
        let _ = self.put_all_back();
    }
}

/// Puts back the settings of a run that is still going, for a process that
/// must exit at once (a second interrupt). Each command is bounded by the
/// connection's op timeout.
pub fn restore_now() {
    let pending = PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some((rados, saved)) = pending {
        for s in &saved {
            let _ = put_back(&rados, s);
        }
    }
}

/// What the sampler gathered.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Each record of this client and pool, once.
    pub stamps: Vec<Stamps>,
    /// OSDs whose history was full at some poll.
    pub full: Vec<i32>,
    /// What failed, once per OSD.
    pub warnings: Vec<String>,
    /// The record cap was reached.
    pub capped: bool,
}

/// Polls the OSDs' histories beside the job, on a thread of its own.
pub struct HistorySampler {
    stop: StopSignal,
    thread: Option<JoinHandle<Gathered>>,
}

/// The sampler's state between polls.
struct Poller {
    rados: Rados,
    osds: Vec<i32>,
    client: String,
    pool: i64,
    size: usize,
    /// (OSD, record, tid, receive stamp): a primary records one reply per
    /// replica under the same tid.
    seen: HashSet<(i32, Record, u64, u64)>,
    out: Gathered,
    failed: HashSet<i32>,
}

impl Poller {
    fn poll(&mut self) {
        for &osd in &self.osds {
            if self.failed.contains(&osd) {
                continue;
            }
            let records = self
                .rados
                .osd_command(osd, r#"{"prefix":"dump_historic_ops"}"#)
                .map_err(ProbeError::from)
                .and_then(|o| Ok(super::parse::json(&o.out, "dump_historic_ops")?))
                .and_then(|doc| {
                    let n = doc
                        .get("ops")
                        .and_then(serde_json::Value::as_array)
                        .map_or(0, Vec::len);
                    Ok((n, historic::parse_records(osd, &doc)?))
                });
            let (n, records) = match records {
                Ok(r) => r,
                Err(e) => {
                    self.failed.insert(osd);
                    self.out
                        .warnings
                        .push(format!("no op records from osd.{osd}: {e}"));
                    continue;
                }
            };
            if n >= self.size && !self.out.full.contains(&osd) {
                self.out.full.push(osd);
            }
            for r in records {
                if r.client != self.client || r.pool != self.pool {
                    continue;
                }
                if self.out.stamps.len() >= MAX_STAMPS {
                    self.out.capped = true;
                    return;
                }
                let Some(st) = r.stamps() else { continue };
                if self
                    .seen
                    .insert((osd, r.record, r.tid, st.received.to_bits()))
                {
                    self.out.stamps.push(st);
                }
            }
        }
    }
}

impl HistorySampler {
    /// Starts polling `osds` for the records of `client` (`client.4143`) in
    /// pool `pool`; `size` is the history size the OSDs were given.
    pub fn start(
        rados: Rados,
        osds: Vec<i32>,
        client: String,
        pool: i64,
        size: u32,
    ) -> HistorySampler {
        let stop = StopSignal::new();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("op-history".into())
            .spawn(move || {
                let mut p = Poller {
                    rados,
                    osds,
                    client,
                    pool,
                    size: size as usize,
                    seen: HashSet::new(),
                    out: Gathered::default(),
                    failed: HashSet::new(),
                };
                let mut next = Instant::now() + POLL;
                while !flag.wait_until(next) {
                    next = (next + POLL).max(Instant::now());
                    p.poll();
                }
                // The job is over: its last ops are still in the histories.
                p.poll();
                p.out
            })
            .ok();
        HistorySampler { stop, thread }
    }

    /// Stops polling after one last poll; what was gathered.
    pub fn finish(mut self) -> Gathered {
        self.stop_and_join().unwrap_or_default()
    }

    fn stop_and_join(&mut self) -> Option<Gathered> {
        self.stop.raise();
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for HistorySampler {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}
