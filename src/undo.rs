//! Every change cephbench makes to a cluster's state, made in one place: an
//! OSD marked out or down, an OSD's daemon stopped (`--disrupt`), an OSD's
//! settings raised (`--op-history`), and the one that leaves nothing to
//! undo, an OSD's caches dropped (`--drop-caches`).
//!
//! A lasting change is recorded in the cluster before it is made: a key of
//! the mons' config-key store under [`KEY_PREFIX`], its value a JSON
//! [`Record`] naming who made it (host, pid, run) and when. The run removes
//! the record once it has undone the change itself. A run that could not
//! (SIGKILL, a crash, a lost host) leaves it: `cephbench cleanup` undoes
//! what a dead run left ([`undo_dead`]), and every later run warns while a
//! record is open ([`open_warnings`]).
//!
//! Whether the run that made a change is gone ([`judge`]): on the host that
//! made it (the same host name and PID namespace) exactly, from `/proc`
//! (the pid no longer runs, or runs another process: its start time
//! differs, or the host restarted since); from another host, by a lease: a
//! running cephbench renews its records every [`RENEW`], and a record not
//! renewed for [`LEASE`] is a dead run's. A run's length cannot bound it:
//! suites, sweeps and jobs bounded by size have none known up front.
//!
//! Recording needs mon 'allow service config-key rw' (or mon 'allow *'):
//! mon 'allow rw' alone does not reach the config-key store (EACCES,
//! pacific 16.2.15).
#![forbid(unsafe_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::ceph::{CephError, Rados};

/// Every record's key starts with this.
pub const KEY_PREFIX: &str = "cephbench/change/";

/// The record's format; a record of a later one is left alone.
pub const VERSION: u32 = 1;

/// How often a running cephbench renews its open records.
pub const RENEW: Duration = Duration::from_secs(60);

/// A record not renewed for this long is a dead run's (five renewals
/// missed: a mon election or a slow mon does not take a live run's change
/// away from it).
pub const LEASE: Duration = Duration::from_secs(300);

/// How long a run waits for an OSD it marked down to be up again.
pub const DOWN_WAIT: Duration = Duration::from_secs(15);

/// What could not be done.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// The record could not be written or removed: nothing was changed.
    #[error(
        "cannot record the change in the mons' config-key store as {entity} ({source}): it \
         needs mon 'allow service config-key rw' (or mon 'allow *')"
    )]
    Record {
        /// The identity.
        entity: String,
        /// Why.
        source: CephError,
    },
    /// The records could not be read.
    #[error(
        "cannot read cephbench's records of cluster changes as {entity} ({source}): it needs \
         mon 'allow service config-key r' (or mon 'allow *')"
    )]
    List {
        /// The identity.
        entity: String,
        /// Why.
        source: CephError,
    },
    /// A command that makes or undoes a change failed.
    #[error("`{what}` failed ({source})")]
    Command {
        /// The command, as the `ceph` CLI spells it.
        what: String,
        /// Why.
        source: CephError,
    },
    /// `systemctl` failed, or is not for this host.
    #[error("{0}")]
    Local(String),
    /// An OSD marked down did not come back up (its daemon is not running).
    #[error("osd.{0} is still down: its daemon did not come back; start it on its host (`systemctl start ceph-osd@{0}.service`)")]
    StillDown(i32),
}

/// One OSD setting changed at run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// Its name.
    pub key: String,
    /// The value the OSD ran with before.
    pub was: String,
    /// The value cephbench set.
    pub set: String,
}

/// A change to the cluster's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// `ceph osd out N`; undone by `ceph osd in N`.
    OsdOut {
        /// The OSD.
        osd: i32,
    },
    /// `ceph osd down N`; a running OSD marks itself up again within
    /// seconds: undone once it is up.
    OsdDown {
        /// The OSD.
        osd: i32,
    },
    /// `systemctl stop ceph-osd@N.service` on the recording host; undone by
    /// `systemctl start` there.
    OsdStopped {
        /// The OSD.
        osd: i32,
    },
    /// `ceph tell osd.N config set KEY VALUE`; undone by `config unset`
    /// (a value from ceph.conf or the mons' database applies again), then
    /// setting the old value where that did not bring it back.
    OsdConfig {
        /// The OSD.
        osd: i32,
        /// What was set.
        settings: Vec<Setting>,
    },
}

impl Change {
    /// The OSD changed.
    pub fn osd(&self) -> i32 {
        match self {
            Change::OsdOut { osd }
            | Change::OsdDown { osd }
            | Change::OsdStopped { osd }
            | Change::OsdConfig { osd, .. } => *osd,
        }
    }

    /// Whether it changes an OSD's place in the cluster (out, down,
    /// stopped) rather than a setting.
    pub fn is_osd_state(&self) -> bool {
        !matches!(self, Change::OsdConfig { .. })
    }

    /// In words: `osd.1 out`, `osd.1 osd_op_history_size 1000 (was 20)`.
    pub fn describe(&self) -> String {
        match self {
            Change::OsdOut { osd } => format!("osd.{osd} out"),
            Change::OsdDown { osd } => format!("osd.{osd} marked down"),
            Change::OsdStopped { osd } => format!("osd.{osd} stopped ({})", unit(*osd)),
            Change::OsdConfig { osd, settings } => format!(
                "osd.{osd} {}",
                settings
                    .iter()
                    .map(|s| format!("{} {} (was {})", s.key, s.set, s.was))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// The systemd unit of an OSD.
pub fn unit(osd: i32) -> String {
    format!("ceph-osd@{osd}.service")
}

/// Who made a change: the process and the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The host name.
    pub host: String,
    /// The process.
    pub pid: u32,
    /// The host's boot (`/proc/sys/kernel/random/boot_id`).
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The process's PID namespace (`/proc/self/ns/pid`): a pid means
    /// something only within it.
    #[serde(default)]
    pub pid_ns: Option<String>,
    /// The process's start, in clock ticks after boot (`/proc/PID/stat`):
    /// a pid used again by another process has another.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    /// The identity that made the change.
    pub entity: String,
    /// The command, e.g. `rados write`.
    #[serde(default)]
    pub command: Option<String>,
    /// The run's name.
    #[serde(default)]
    pub run: Option<String>,
    /// The run's pool.
    #[serde(default)]
    pub pool: Option<String>,
}

/// One change, as recorded in the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// [`VERSION`].
    pub version: u32,
    /// What was changed.
    pub change: Change,
    /// Who changed it.
    #[serde(flatten)]
    pub owner: Owner,
    /// When it was recorded (just before the change was made), Unix s.
    pub made_unix: f64,
    /// When a running owner last renewed the record, Unix s.
    pub renewed_unix: f64,
}

impl Record {
    /// Parses a record's value. The error says why it is not one.
    pub fn parse(value: &str) -> Result<Record, String> {
        let v: Value = serde_json::from_str(value).map_err(|e| format!("not JSON: {e}"))?;
        match v.get("version").and_then(Value::as_u64) {
            Some(n) if n > u64::from(VERSION) => {
                return Err(format!(
                    "a record of format {n}, newer than this cephbench's {VERSION}: clean up with \
                     the cephbench that made it"
                ))
            }
            None => return Err("no version".into()),
            _ => {}
        }
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    /// Its value in the config-key store.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Who made it and when, e.g. `run 'r1' (rados write on pool 'p'),
    /// pid 4242 on host h1 as client.admin, at 2026-12-07T03:01:02Z`.
    pub fn by(&self) -> String {
        let o = &self.owner;
        let mut s = match &o.run {
            Some(r) => format!("run '{r}'"),
            None => "a run".into(),
        };
        match (&o.command, &o.pool) {
            (Some(c), Some(p)) => s.push_str(&format!(" ({c} on pool '{p}')")),
            (Some(c), None) => s.push_str(&format!(" ({c})")),
            (None, Some(p)) => s.push_str(&format!(" (on pool '{p}')")),
            (None, None) => {}
        }
        format!(
            "{s}, pid {} on host {} as {}, at {}",
            o.pid,
            o.host,
            o.entity,
            crate::units::fmt_utc(self.made_unix.max(0.0) as u64)
        )
    }
}

/// Where a process is judged from: this host and process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    /// The host name.
    pub host: String,
    /// See [`Owner::boot_id`].
    pub boot_id: Option<String>,
    /// See [`Owner::pid_ns`].
    pub pid_ns: Option<String>,
}

impl Here {
    /// This host and process.
    pub fn now() -> Here {
        Here {
            host: crate::names::hostname(),
            boot_id: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_string()),
            pid_ns: std::fs::read_link("/proc/self/ns/pid")
                .ok()
                .map(|p| p.to_string_lossy().into_owned()),
        }
    }
}

/// Whether the run that made a change can still undo it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// It may: leave the change to it. Why.
    Alive(String),
    /// It is gone. Why.
    Gone(String),
}

/// Judges the owner of a record renewed at `renewed_unix` from `here` at
/// `now_unix`; `started(pid)` is the start (clock ticks) of the process
/// `pid` on this host, `None` when there is none. Pure.
pub fn judge(
    owner: &Owner,
    renewed_unix: f64,
    here: &Here,
    now_unix: f64,
    started: impl Fn(u32) -> Option<u64>,
) -> Liveness {
    let pid = owner.pid;
    let same_host =
        owner.host == here.host && owner.pid_ns.is_some() && owner.pid_ns == here.pid_ns;
    if same_host {
        if owner.boot_id.is_some() && here.boot_id.is_some() && owner.boot_id != here.boot_id {
            return Liveness::Gone("this host has restarted since".into());
        }
        return match started(pid) {
            None => Liveness::Gone(format!("its process {pid} has ended")),
            Some(t) if owner.start_ticks.is_some_and(|s| s != t) => Liveness::Gone(format!(
                "its process has ended (pid {pid} is another process now)"
            )),
            Some(_) => Liveness::Alive(format!("its process {pid} is still running on this host")),
        };
    }
    let age = now_unix - renewed_unix;
    if age > LEASE.as_secs_f64() {
        Liveness::Gone(format!(
            "not renewed for {age:.0} s (a running cephbench renews its records every {} s)",
            RENEW.as_secs()
        ))
    } else {
        Liveness::Alive(format!(
            "renewed {:.0} s ago from host {}: its run may still be going (a record not renewed \
             for {} s is a dead run's)",
            age.max(0.0),
            owner.host,
            LEASE.as_secs()
        ))
    }
}

/// The start (field 22, clock ticks after boot) in a `/proc/PID/stat`
/// line. Pure.
pub fn parse_start_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may hold spaces and parentheses: count
    // from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn process_start(pid: u32) -> Option<u64> {
    parse_start_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// What the binary says about the run (for the records).
#[derive(Default)]
struct RunContext {
    command: Option<String>,
    pool: Option<String>,
    run: Option<String>,
}

static CONTEXT: Mutex<RunContext> = Mutex::new(RunContext {
    command: None,
    pool: None,
    run: None,
});

/// Names the run in the records this process makes: its command (`rados
/// write`), pool and run name.
pub fn set_context(command: &str, pool: &str, run: Option<&str>) {
    *lock(&CONTEXT) = RunContext {
        command: Some(command.to_string()),
        pool: Some(pool.to_string()),
        run: run.map(str::to_string),
    };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn owner(entity: &str) -> Owner {
    let here = Here::now();
    let pid = std::process::id();
    let c = lock(&CONTEXT);
    Owner {
        host: here.host,
        pid,
        boot_id: here.boot_id,
        pid_ns: here.pid_ns,
        start_ticks: process_start(pid),
        entity: entity.to_string(),
        command: c.command.clone(),
        run: c.run.clone(),
        pool: c.pool.clone(),
    }
}

/// A change this process made and has not undone yet.
struct Entry {
    id: u64,
    key: String,
    rados: Rados,
    record: Record,
}

static HELD: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A change made and recorded ([`make`]); [`Held::undo`] undoes it and
/// removes its record. Dropped without that, the change stays held: the
/// record is renewed while the process lives, [`restore_now`] undoes it.
#[derive(Debug)]
pub struct Held {
    id: u64,
}

fn mon(rados: &Rados, what: String, cmd: Value) -> Result<Vec<u8>, UndoError> {
    rados
        .mon_command(&cmd.to_string())
        .map(|o| o.out)
        .map_err(|source| UndoError::Command { what, source })
}

fn tell(rados: &Rados, osd: i32, what: String, cmd: Value) -> Result<Vec<u8>, UndoError> {
    rados
        .osd_command(osd, &cmd.to_string())
        .map(|o| o.out)
        .map_err(|source| UndoError::Command { what, source })
}

fn put(rados: &Rados, key: &str, record: &Record) -> Result<(), UndoError> {
    rados
        .mon_command(
            &json!({"prefix": "config-key set", "key": key, "val": record.to_json()}).to_string(),
        )
        .map(drop)
        .map_err(|source| UndoError::Record {
            entity: rados.entity().to_string(),
            source,
        })
}

fn remove(rados: &Rados, key: &str) -> Result<(), UndoError> {
    rados
        .mon_command(&json!({"prefix": "config-key rm", "key": key}).to_string())
        .map(drop)
        .map_err(|source| UndoError::Record {
            entity: rados.entity().to_string(),
            source,
        })
}

/// Whether this identity may record changes, before any is made: removes a
/// key of cephbench's that no record uses (the mons answer a missing key
/// with success once the cap allows writes; nothing changes).
pub fn check_may_record(rados: &Rados) -> Result<(), UndoError> {
    remove(rados, &format!("{KEY_PREFIX}probe"))
}

/// Records `change`, then makes it through `rados`. A change that fails is
/// put back (as far as it went) and its record removed.
pub fn make(rados: &Rados, change: Change) -> Result<Held, UndoError> {
    let held = record(rados, change)?;
    held.make()?;
    Ok(held)
}

/// Records `change` in the cluster without making it yet ([`Held::make`]
/// does): a caller that times the change starts its clock between the two.
pub fn record(rados: &Rados, change: Change) -> Result<Held, UndoError> {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let now = now_unix();
    let record = Record {
        version: VERSION,
        change,
        owner: owner(rados.entity()),
        made_unix: now,
        renewed_unix: now,
    };
    let key = format!(
        "{KEY_PREFIX}{}/{}.{}/{id}",
        crate::names::host_token(&record.owner.host),
        record.owner.pid,
        record.owner.start_ticks.unwrap_or(0)
    );
    {
        let mut held = lock(&HELD);
        put(rados, &key, &record)?;
        held.push(Entry {
            id,
            key,
            rados: rados.clone(),
            record,
        });
    }
    start_renewing();
    Ok(Held { id })
}

/// How an undo went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undone {
    /// The change was undone.
    Done,
    /// It was undone already (or never took effect): nothing was sent.
    Already,
}

impl Held {
    /// Makes the recorded change. One that fails is put back (as far as it
    /// went) and its record removed.
    pub fn make(&self) -> Result<(), UndoError> {
        let Some((rados, change)) = self.entry() else {
            return Ok(());
        };
        if let Err(e) = apply(&rados, &change) {
            let _ = self.undo();
            return Err(e);
        }
        Ok(())
    }

    fn entry(&self) -> Option<(Rados, Change)> {
        lock(&HELD)
            .iter()
            .find(|e| e.id == self.id)
            .map(|e| (e.rados.clone(), e.record.change.clone()))
    }

    /// Undoes the change, then removes its record. On an error the change
    /// stays held (and recorded).
    pub fn undo(&self) -> Result<Undone, UndoError> {
        self.undo_as(false)
    }

    /// [`Held::undo`]; `look_first`: see [`revert`] (no wait for an OSD
    /// marked down to come back).
    fn undo_as(&self, look_first: bool) -> Result<Undone, UndoError> {
        let Some((rados, change)) = self.entry() else {
            return Ok(Undone::Already);
        };
        let how = revert(&rados, &change, look_first)?;
        forget(self.id);
        Ok(how)
    }
}

/// Drops the entry `id` and removes its record.
fn forget(id: u64) {
    let mut held = lock(&HELD);
    if let Some(i) = held.iter().position(|e| e.id == id) {
        let e = held.remove(i);
        let _ = remove(&e.rados, &e.key);
    }
}

/// Undoes at once, for a process that must exit (a second interrupt, a
/// thread that died), every change this process holds that `which` picks;
/// each command is bounded by the connection's op timeout.
pub fn restore_now(which: impl Fn(&Change) -> bool) {
    let ids: Vec<u64> = lock(&HELD)
        .iter()
        .filter(|e| which(&e.record.change))
        .map(|e| e.id)
        .collect();
    // Without waiting for an OSD marked down: a record of one not up yet
    // stays for `cephbench cleanup`.
    for id in ids {
        let _ = Held { id }.undo_as(true);
    }
}

/// Renews every held record each [`RENEW`], on a thread of its own (the
/// lock is held across the writes, so a record undone meanwhile is not
/// written again).
fn start_renewing() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("cephbench-records".into())
            .spawn(|| loop {
                std::thread::sleep(RENEW);
                let mut held = lock(&HELD);
                let now = now_unix();
                for e in held.iter_mut() {
                    e.record.renewed_unix = now;
                    let _ = put(&e.rados, &e.key, &e.record);
                }
            });
    });
}

fn osd_ids(osd: i32) -> Value {
    json!([osd.to_string()])
}

fn apply(rados: &Rados, change: &Change) -> Result<(), UndoError> {
    match change {
        Change::OsdOut { osd } => mon(
            rados,
            format!("ceph osd out {osd}"),
            json!({"prefix": "osd out", "ids": osd_ids(*osd)}),
        )
        .map(drop),
        Change::OsdDown { osd } => mon(
            rados,
            format!("ceph osd down {osd}"),
            json!({"prefix": "osd down", "ids": osd_ids(*osd)}),
        )
        .map(drop),
        Change::OsdStopped { osd } => systemctl(&["stop", &unit(*osd)]).map(drop),
        Change::OsdConfig { osd, settings } => {
            for s in settings {
                config_set(rados, *osd, &s.key, &s.set)?;
            }
            Ok(())
        }
    }
}

/// Puts back what `change` changed, with no record of it (an `in` after an
/// `out` that failed, a `start` of an OSD stopped by hand).
pub fn put_back(rados: &Rados, change: &Change) -> Result<Undone, UndoError> {
    revert(rados, change, false)
}

/// Undoes `change`. `look_first`: read the state first and send nothing
/// when it is back already, and do not wait for an OSD marked down to be
/// up (`cleanup`, where it may be back; an exit at once); a run undoing
/// its own change sends at once, on its timeline's clock.
fn revert(rados: &Rados, change: &Change, look_first: bool) -> Result<Undone, UndoError> {
    match change {
        Change::OsdOut { osd } => {
            if look_first && osd_state(rados, *osd)?.1 {
                return Ok(Undone::Already);
            }
            mon(
                rados,
                format!("ceph osd in {osd}"),
                json!({"prefix": "osd in", "ids": osd_ids(*osd)}),
            )?;
            Ok(Undone::Done)
        }
        Change::OsdDown { osd } => {
            // Nothing to send: a running OSD marks itself up.
            let wait = if look_first {
                Duration::ZERO
            } else {
                DOWN_WAIT
            };
            let t = Instant::now();
            loop {
                if osd_state(rados, *osd)?.0 {
                    return Ok(Undone::Already);
                }
                if t.elapsed() >= wait {
                    return Err(UndoError::StillDown(*osd));
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        Change::OsdStopped { osd } => {
            if look_first && systemctl(&["is-active", &unit(*osd)]).is_ok() {
                return Ok(Undone::Already);
            }
            systemctl(&["start", &unit(*osd)])?;
            Ok(Undone::Done)
        }
        Change::OsdConfig { osd, settings } => {
            if look_first {
                let mut still = false;
                for s in settings {
                    still |= config_get(rados, *osd, &s.key)? == s.set;
                }
                if !still {
                    return Ok(Undone::Already);
                }
            }
            for s in settings {
                let _ = tell(
                    rados,
                    *osd,
                    format!("ceph tell osd.{osd} config unset {}", s.key),
                    json!({"prefix": "config unset", "var": s.key}),
                );
                if config_get(rados, *osd, &s.key).ok().as_deref() != Some(s.was.as_str()) {
                    config_set(rados, *osd, &s.key, &s.was)?;
                }
            }
            Ok(Undone::Done)
        }
    }
}

/// `ceph tell osd.N config set KEY VALUE`.
fn config_set(rados: &Rados, osd: i32, key: &str, value: &str) -> Result<(), UndoError> {
    tell(
        rados,
        osd,
        format!("ceph tell osd.{osd} config set {key} {value}"),
        json!({"prefix": "config set", "var": key, "val": [value]}),
    )
    .map(drop)
}

/// What OSD `osd` runs with for `key` (`ceph tell osd.N config get KEY`).
pub fn config_get(rados: &Rados, osd: i32, key: &str) -> Result<String, UndoError> {
    let what = format!("ceph tell osd.{osd} config get {key}");
    let out = tell(
        rados,
        osd,
        what.clone(),
        json!({"prefix": "config get", "var": key, "format": "json"}),
    )?;
    serde_json::from_slice::<Value>(&out)
        .ok()
        .and_then(|v| v.get(key)?.as_str().map(str::to_string))
        .ok_or_else(|| {
            UndoError::Local(format!(
                "`{what}` answered without {key}: {}",
                String::from_utf8_lossy(&out)
            ))
        })
}

/// `ceph tell osd.N cache drop`: the OSD empties its caches. Nothing
/// lasts (the caches fill again as the OSD works), so nothing is recorded.
pub fn drop_cache(rados: &Rados, osd: i32) -> Result<(), CephError> {
    rados
        .osd_command(osd, r#"{"prefix":"cache drop"}"#)
        .map(drop)
}

/// Whether OSD `osd` is (up, in), from `osd dump`.
fn osd_state(rados: &Rados, osd: i32) -> Result<(bool, bool), UndoError> {
    let out = mon(
        rados,
        "ceph osd dump".into(),
        json!({"prefix": "osd dump", "format": "json"}),
    )?;
    let doc: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
    let o = doc
        .get("osds")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|o| o.get("osd").and_then(Value::as_i64) == Some(i64::from(osd)))
        })
        .ok_or_else(|| UndoError::Local(format!("osd.{osd} is not in the osdmap any more")))?;
    let flag = |k: &str| o.get(k).and_then(Value::as_i64).is_some_and(|v| v != 0);
    Ok((flag("up"), flag("in")))
}

fn systemctl(args: &[&str]) -> Result<String, UndoError> {
    let out = Command::new("timeout")
        .args(["60", "systemctl"])
        .args(args)
        .output()
        .map_err(|e| UndoError::Local(format!("cannot run systemctl: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(UndoError::Local(format!(
            "`systemctl {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// A key under [`KEY_PREFIX`] and its record, or why it is not one.
pub type Found = (String, Result<Record, String>);

/// Every record in the cluster (`config-key dump` of [`KEY_PREFIX`]): its
/// key and the record, or why it is not one.
pub fn list(rados: &Rados) -> Result<Vec<Found>, UndoError> {
    let out = rados
        .mon_command(&json!({"prefix": "config-key dump", "key": KEY_PREFIX}).to_string())
        .map_err(|source| UndoError::List {
            entity: rados.entity().to_string(),
            source,
        })?;
    Ok(parse_dump(&out.out))
}

/// The records of a `config-key dump` answer (`{"KEY": "VALUE", ...}`).
/// Pure.
pub fn parse_dump(out: &[u8]) -> Vec<Found> {
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(out) else {
        return Vec::new();
    };
    m.into_iter()
        .filter(|(k, _)| k.starts_with(KEY_PREFIX))
        .map(|(k, v)| {
            let r = v
                .as_str()
                .ok_or_else(|| "not a string".to_string())
                .and_then(Record::parse);
            (k, r)
        })
        .collect()
}

/// One record's line in `cleanup`, and whether it was a failure.
pub struct CleanupLine {
    /// The line.
    pub line: String,
    /// A dead run's change that could not be undone.
    pub failed: bool,
}

/// `cephbench cleanup`: undoes each change whose run is gone (of run `run`
/// only, when given) and removes its record; one line per record, what was
/// done or why not.
pub fn undo_dead(rados: &Rados, run: Option<&str>) -> Result<Vec<CleanupLine>, UndoError> {
    let here = Here::now();
    let now = now_unix();
    let mut lines = Vec::new();
    for (key, rec) in list(rados)? {
        let rec = match rec {
            Ok(r) => r,
            Err(why) => {
                lines.push(CleanupLine {
                    line: format!("left record {key} as it is: {why}"),
                    failed: false,
                });
                continue;
            }
        };
        if run.is_some() && rec.owner.run.as_deref() != run {
            continue;
        }
        let what = rec.change.describe();
        let why = match judge(&rec.owner, rec.renewed_unix, &here, now, process_start) {
            Liveness::Alive(why) => {
                lines.push(CleanupLine {
                    line: format!("left {what} as it is: made by {}; {why}", rec.by()),
                    failed: false,
                });
                continue;
            }
            Liveness::Gone(why) => why,
        };
        let result = match &rec.change {
            Change::OsdStopped { .. } if rec.owner.host != here.host => {
                Err(UndoError::Local(format!(
                    "run `systemctl start {}` on host {}, then `cephbench cleanup` again",
                    unit(rec.change.osd()),
                    rec.owner.host
                )))
            }
            c => revert(rados, c, true),
        };
        let done = match &result {
            Ok(Undone::Done) => format!("restored {}", restored(&rec.change)),
            Ok(Undone::Already) => format!("nothing to undo ({} already)", back(&rec.change)),
            Err(e) => {
                lines.push(CleanupLine {
                    line: format!("could not undo {what} (made by {}; {why}): {e}", rec.by()),
                    failed: true,
                });
                continue;
            }
        };
        remove(rados, &key)?;
        lines.push(CleanupLine {
            line: format!("{done}: {what} made by {}; {why}", rec.by()),
            failed: false,
        });
    }
    Ok(lines)
}

/// What undoing `c` did, e.g. `osd.1: marked in`.
fn restored(c: &Change) -> String {
    let osd = c.osd();
    match c {
        Change::OsdOut { .. } => format!("osd.{osd}: marked in"),
        Change::OsdDown { .. } => format!("osd.{osd}: up"),
        Change::OsdStopped { .. } => format!("osd.{osd}: started ({})", unit(osd)),
        Change::OsdConfig { settings, .. } => format!(
            "osd.{osd}: {}",
            settings
                .iter()
                .map(|s| format!("{} {}", s.key, s.was))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `c`'s OSD as it is once `c` is undone, e.g. `osd.1 in`.
fn back(c: &Change) -> String {
    let osd = c.osd();
    match c {
        Change::OsdOut { .. } => format!("osd.{osd} in"),
        Change::OsdDown { .. } => format!("osd.{osd} up"),
        Change::OsdStopped { .. } => format!("osd.{osd} running"),
        Change::OsdConfig { .. } => format!("osd.{osd}'s settings"),
    }
}

/// A run's warnings about records open in the cluster (none when they
/// cannot be read: the identity may not): one line for those of dead
/// runs, naming `cephbench cleanup`, one for those of runs still going.
pub fn open_warnings(rados: &Rados) -> Vec<String> {
    let Ok(records) = list(rados) else {
        return Vec::new();
    };
    let here = Here::now();
    let records: Vec<Record> = records.into_iter().filter_map(|(_, r)| r.ok()).collect();
    warnings_of(
        &records,
        &here,
        now_unix(),
        std::process::id(),
        process_start,
    )
}

/// [`open_warnings`] over `records`, judged from `here` at `now_unix` by
/// process `me` (whose own records are left out). Pure.
pub fn warnings_of(
    records: &[Record],
    here: &Here,
    now_unix: f64,
    me: u32,
    started: impl Fn(u32) -> Option<u64> + Copy,
) -> Vec<String> {
    let (mut dead, mut live) = (Vec::new(), Vec::new());
    for r in records {
        if r.owner.pid == me && r.owner.host == here.host && r.owner.pid_ns == here.pid_ns {
            continue;
        }
        let item = format!("{} (by {})", r.change.describe(), r.by());
        match judge(&r.owner, r.renewed_unix, here, now_unix, started) {
            Liveness::Gone(_) => dead.push((item, r.owner.pool.clone())),
            Liveness::Alive(_) => live.push(item),
        }
    }
    let mut out = Vec::new();
    if !dead.is_empty() {
        let pool = dead
            .iter()
            .find_map(|d| d.1.clone())
            .unwrap_or_else(|| "POOL".into());
        out.push(format!(
            "the cluster still holds {} change(s) of cephbench runs that ended without undoing \
             them: {}: undo them with `cephbench cleanup -p {pool}`",
            dead.len(),
            dead.into_iter().map(|d| d.0).collect::<Vec<_>>().join("; ")
        ));
    }
    if !live.is_empty() {
        out.push(format!(
            "another cephbench run is changing this cluster now: {}: its figures and these will \
             mix",
            live.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner {
            host: "h1".into(),
            pid: 4242,
            boot_id: Some("b1".into()),
            pid_ns: Some("pid:[4026531836]".into()),
            start_ticks: Some(777),
            entity: "client.admin".into(),
            command: Some("rados write".into()),
            run: Some("r1".into()),
            pool: Some("p".into()),
        }
    }

    fn here() -> Here {
        Here {
            host: "h1".into(),
            boot_id: Some("b1".into()),
            pid_ns: Some("pid:[4026531836]".into()),
        }
    }

    fn record(change: Change) -> Record {
        Record {
            version: VERSION,
            change,
            owner: owner(),
            made_unix: 1_796_612_462.5,
            renewed_unix: 1_796_612_462.5,
        }
    }

    #[test]
    fn a_record_as_json_and_back() {
        let r = record(Change::OsdConfig {
            osd: 2,
            settings: vec![Setting {
                key: "osd_op_history_size".into(),
                was: "20".into(),
                set: "1000".into(),
            }],
        });
        let v: Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["change"]["kind"], "osd_config");
        assert_eq!(v["change"]["settings"][0]["was"], "20");
        assert_eq!(
            (v["host"].as_str(), v["pid"].as_u64()),
            (Some("h1"), Some(4242))
        );
        assert_eq!(Record::parse(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn a_record_as_written_by_hand() {
        // The fields a record needs; the others default.
        let r = Record::parse(
            r#"{"version":1,"change":{"kind":"osd_out","osd":1},"host":"h","pid":7,
                "entity":"client.admin","made_unix":10.0,"renewed_unix":70.0,"extra":true}"#,
        )
        .unwrap();
        assert_eq!(r.change, Change::OsdOut { osd: 1 });
        assert_eq!((r.owner.run.as_deref(), r.owner.start_ticks), (None, None));
        assert!(
            r.by()
                .starts_with("a run, pid 7 on host h as client.admin, at 1970-01-01T00:00:10Z"),
            "{}",
            r.by()
        );
    }

    #[test]
    fn what_is_not_a_record_says_why() {
        assert!(Record::parse("{").unwrap_err().starts_with("not JSON"));
        assert_eq!(Record::parse(r#"{"change":1}"#).unwrap_err(), "no version");
        assert!(Record::parse(r#"{"version":2}"#)
            .unwrap_err()
            .contains("newer than this cephbench's 1"));
        let e = Record::parse(
            r#"{"version":1,"change":{"kind":"osd_lost","osd":1},"host":"h","pid":7,
                "entity":"e","made_unix":1,"renewed_unix":1}"#,
        )
        .unwrap_err();
        assert!(e.contains("osd_lost"), "{e}");
        let e = Record::parse(r#"{"version":1,"change":{"kind":"osd_out","osd":1}}"#).unwrap_err();
        assert!(e.starts_with("missing field"), "{e}");
    }

    #[test]
    fn a_dump_of_the_store() {
        let r = record(Change::OsdOut { osd: 1 });
        let dump = json!({
            "cephbench/change/h1/4242.777/0": r.to_json(),
            "cephbench/change/h1/4242.777/1": "garbage",
            "mgr/dashboard/key": "x",
        });
        let got = parse_dump(dump.to_string().as_bytes());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1.as_ref().unwrap(), &r);
        assert!(got[1].1.as_ref().unwrap_err().starts_with("not JSON"));
        assert!(parse_dump(b"{}").is_empty());
        assert!(parse_dump(b"not json").is_empty());
    }

    #[test]
    fn the_owner_on_this_host_is_judged_by_its_process() {
        let o = owner();
        let t = 1_000.0;
        let running = |p: u32| (p == 4242).then_some(777);
        assert!(matches!(
            judge(&o, t, &here(), t + 9_999.0, running),
            Liveness::Alive(_)
        ));
        assert_eq!(
            judge(&o, t, &here(), t, |_| None),
            Liveness::Gone("its process 4242 has ended".into())
        );
        let reused = judge(&o, t, &here(), t, |_| Some(778));
        assert!(
            matches!(&reused, Liveness::Gone(w) if w.contains("another process")),
            "{reused:?}"
        );
        let rebooted = Here {
            boot_id: Some("b2".into()),
            ..here()
        };
        assert_eq!(
            judge(&o, t, &rebooted, t, running),
            Liveness::Gone("this host has restarted since".into())
        );
    }

    #[test]
    fn the_owner_elsewhere_is_judged_by_its_lease() {
        let o = owner();
        let t = 1_000.0;
        let never = |_: u32| panic!("another host's processes are not looked at");
        for other in [
            Here {
                host: "h2".into(),
                ..here()
            },
            Here {
                pid_ns: Some("pid:[1]".into()),
                ..here()
            },
        ] {
            let lease = LEASE.as_secs_f64();
            assert!(matches!(
                judge(&o, t, &other, t + lease, never),
                Liveness::Alive(_)
            ));
            let gone = judge(&o, t, &other, t + lease + 1.0, never);
            assert!(
                matches!(&gone, Liveness::Gone(w) if w.starts_with("not renewed for 301 s")),
                "{gone:?}"
            );
        }
    }

    #[test]
    fn start_ticks_from_proc_stat() {
        let stat = "4242 (cephbench (x) y) S 1 4242 4242 0 -1 4194560 800 0 0 0 3 1 0 0 20 0 5 0 \
                    123456 100000 500 18446744073709551615";
        assert_eq!(parse_start_ticks(stat), Some(123_456));
        assert_eq!(parse_start_ticks("4242 (x) S 1"), None);
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(parse_start_ticks(&me).is_some(), "{me}");
    }

    #[test]
    fn warnings_name_cleanup_for_dead_runs_only() {
        let t = 1_796_612_462.5;
        let dead = record(Change::OsdOut { osd: 1 });
        let mut live = record(Change::OsdDown { osd: 2 });
        live.owner.pid = 99;
        let mut mine = record(Change::OsdOut { osd: 0 });
        mine.owner.pid = 5;
        let started = |p: u32| (p == 99 || p == 5).then_some(777);
        let w = warnings_of(&[dead, live, mine], &here(), t, 5, started);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(
            w[0],
            "the cluster still holds 1 change(s) of cephbench runs that ended without undoing \
             them: osd.1 out (by run 'r1' (rados write on pool 'p'), pid 4242 on host h1 as \
             client.admin, at 2026-12-07T03:01:02Z): undo them with `cephbench cleanup -p p`"
        );
        assert!(w[1].starts_with("another cephbench run is changing this cluster now: osd.2 marked down (by run 'r1'"), "{}", w[1]);
        assert!(warnings_of(&[], &here(), t, 5, started).is_empty());
    }

    #[test]
    fn changes_in_words() {
        assert_eq!(
            Change::OsdStopped { osd: 3 }.describe(),
            "osd.3 stopped (ceph-osd@3.service)"
        );
        let c = Change::OsdConfig {
            osd: 0,
            settings: vec![
                Setting {
                    key: "a".into(),
                    was: "1".into(),
                    set: "2".into(),
                },
                Setting {
                    key: "b".into(),
                    was: "600".into(),
                    set: "5".into(),
                },
            ],
        };
        assert_eq!(c.describe(), "osd.0 a 2 (was 1), b 5 (was 600)");
        assert_eq!(restored(&c), "osd.0: a 1, b 600");
        assert!(!c.is_osd_state() && Change::OsdDown { osd: 0 }.is_osd_state());
    }
}
