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
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::cluster::ProbeError;
use super::historic::{self, Record, Stamps};
use super::stop::StopSignal;
use crate::ceph::Rados;
use crate::undo::{Change, Held, Setting};

/// How often each OSD's history is read.
pub const POLL: Duration = Duration::from_secs(1);

/// `osd_op_history_duration` during the run, s: long enough that an op is
/// still there at the next poll (a poll of every OSD may take a while on a
/// busy cluster), short enough that the history holds few ops beside them.
pub const HISTORY_WINDOW_S: u32 = 5;

/// The smallest and largest `--op-history`.
pub const MIN_SIZE: u32 = 100;
/// See [`MIN_SIZE`].
pub const MAX_SIZE: u32 = 100_000;

/// The most records kept (~150 bytes each): beyond, the evidence is what
/// was gathered until then.
const MAX_STAMPS: usize = 500_000;

const KEYS: [&str; 2] = ["osd_op_history_size", "osd_op_history_duration"];

/// Why the history could not be raised.
#[derive(Debug, thiserror::Error)]
pub enum RaiseError {
    /// An OSD did not answer or refused.
    #[error("{0}; it needs osd 'allow *'")]
    Osd(crate::undo::UndoError),
    /// The change could not be recorded in the cluster first.
    #[error("{0}")]
    Record(crate::undo::UndoError),
}

impl From<crate::undo::UndoError> for RaiseError {
    fn from(e: crate::undo::UndoError) -> RaiseError {
        match e {
            e @ crate::undo::UndoError::Record { .. } => RaiseError::Record(e),
            e => RaiseError::Osd(e),
        }
    }
}

/// The raised history on the pool's OSDs, each OSD's change recorded in
/// the cluster ([`crate::undo`]); puts the settings back when
/// [`OpHistory::restore`]d or dropped.
pub struct OpHistory {
    held: Vec<(i32, Was, Held)>,
}

/// One OSD's settings before the run, for the warning when they cannot be
/// put back.
type Was = [String; 2];

impl OpHistory {
    /// Reads each OSD's two settings, then sets the size to `size` and the
    /// window to [`HISTORY_WINDOW_S`], each OSD's change recorded first.
    /// Fails (with every OSD already changed put back) when an OSD does not
    /// answer or refuses (it needs osd 'allow *'), or the change cannot be
    /// recorded.
    pub fn raise(rados: &Rados, osds: &[i32], size: u32) -> Result<OpHistory, RaiseError> {
        let mut guard = OpHistory { held: Vec::new() };
        let set = [size.to_string(), HISTORY_WINDOW_S.to_string()];
        for &osd in osds {
            let was = [
                crate::undo::config_get(rados, osd, KEYS[0])?,
                crate::undo::config_get(rados, osd, KEYS[1])?,
            ];
            let settings = KEYS
                .iter()
                .zip(was.iter().zip(&set))
                .map(|(k, (w, s))| Setting {
                    key: (*k).to_string(),
                    was: w.clone(),
                    set: s.clone(),
                })
                .collect();
            let held = crate::undo::make(rados, Change::OsdConfig { osd, settings })?;
            guard.held.push((osd, was, held));
        }
        Ok(guard)
    }

    /// Puts every OSD's settings back; what could not be, as warnings.
    pub fn restore(mut self) -> Vec<String> {
        self.put_all_back()
    }

    fn put_all_back(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        for (osd, was, held) in std::mem::take(&mut self.held) {
            if let Err(e) = held.undo() {
                warnings.push(format!(
                    "could not put osd.{osd}'s op history back ({e}): set it with `ceph tell osd.{osd} \
                     config set osd_op_history_size {}` and `... osd_op_history_duration {}`",
                    was[0], was[1]
                ));
            }
        }
        warnings
    }
}

impl Drop for OpHistory {
    fn drop(&mut self) {
        let _ = self.put_all_back();
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
