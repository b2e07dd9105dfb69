//! `--disrupt` against the cluster: the checks before the run (the OSD,
//! the pool, the caps), and the [`Disruptor`], a thread of its own (off the
//! I/O path, on the telemetry connection) that does the plan's actions at
//! their times on the job's clock, looks at the cluster every
//! [`POLL`], and puts the OSD back (`osd in`, `systemctl start`) on every
//! way out: the job's end, an error, an interrupt, and a second interrupt
//! ([`restore_now`]).
#![forbid(unsafe_code)]

use std::process::Command;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::phases::{self, JobTimeline};
use super::spec::DisruptPlan;
use crate::ceph::Rados;
use crate::engine::Stall;
use crate::progress::JobClock;
use crate::result::disruption::{Action, ActionDone, Disruption, Look, MAX_LOOKS};
use crate::telemetry::quiet::parse_status;
use crate::undo::{Change, Held, UndoError};

/// How often the cluster is looked at during a disruption.
pub const POLL: Duration = Duration::from_secs(1);

/// The longest the run waits after its job for active+clean.
pub const CLEAN_WAIT: Duration = Duration::from_secs(60);

/// Why `--disrupt` cannot run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The spec does not fit the cluster (no such OSD, not the pool's).
    #[error("{0}")]
    Usage(String),
    /// The cluster or the identity does not allow it (caps, no systemd
    /// unit, the OSD already out).
    #[error("{0}")]
    Refused(String),
}

/// Whether an action is sent to the mons (`osd out`, `osd in`, `osd
/// down`) rather than run with `systemctl`.
fn is_mon(a: Action) -> bool {
    !a.is_local()
}

/// The systemd unit of an OSD.
pub use crate::undo::unit;

fn systemctl(args: &[&str], limit: Duration) -> Result<String, String> {
    let out = Command::new("timeout")
        .arg(limit.as_secs().max(1).to_string())
        .arg("systemctl")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run systemctl: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "`systemctl {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|u| u.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Before anything is written: the OSD exists, is up and in, holds PGs of
/// `pool` (when it exists already), this identity may mark OSDs out and in
/// (an `osd out` of an id no OSD has: the mon checks the cap first, then
/// answers "does not exist" and changes nothing; an `osd in` of an OSD that
/// is in passes without the cap on pacific), and for `stop`/`start` its
/// systemd unit is on this host and we are root.
pub fn check(rados: &Rados, plan: &DisruptPlan, pool: Option<&str>) -> Result<(), CheckError> {
    let rados = rados.telemetry();
    let who = rados.entity();
    let n = plan.osd;
    let states = crate::telemetry::cluster::osd_states(rados).map_err(|e| {
        CheckError::Refused(format!(
            "--disrupt: cannot read the OSDs as {who} ({e}); it needs mon 'allow r'"
        ))
    })?;
    let Some(&(_, up, inn)) = states.iter().find(|s| s.0 == n) else {
        let ids: Vec<String> = states.iter().map(|s| format!("osd.{}", s.0)).collect();
        return Err(CheckError::Usage(format!(
            "--disrupt: osd.{n} does not exist: give one of {}",
            ids.join(", ")
        )));
    };
    if !up || !inn {
        return Err(CheckError::Refused(format!(
            "--disrupt: osd.{n} is already {}: bring it back (`ceph osd in {n}`, start it) and \
             wait for active+clean first",
            if up { "out" } else { "down" }
        )));
    }
    if let Some(pool) = pool.filter(|p| rados.pool_id(p).is_ok()) {
        if let Ok(p) = crate::telemetry::cluster::placement(rados, pool) {
            let osds = p.osds();
            if !osds.contains(&n) {
                let ids: Vec<String> = osds.iter().map(|o| format!("osd.{o}")).collect();
                return Err(CheckError::Usage(format!(
                    "--disrupt: osd.{n} holds no PG of pool '{pool}': give one of {}",
                    ids.join(", ")
                )));
            }
        }
    }
    if plan.steps.iter().any(|s| is_mon(s.action)) {
        let nobody = states.iter().map(|s| s.0).max().unwrap_or(0) + 10_000;
        let probe = serde_json::json!({"prefix": "osd out", "ids": [nobody.to_string()]});
        match rados.mon_command(&probe.to_string()).map(drop) {
            Ok(()) => {}
            Err(e) if e.errno() == Some(libc::EACCES) => {
                return Err(CheckError::Refused(format!(
                    "--disrupt: {who} may not mark OSDs out, in or down (`osd out` was refused: \
                     EACCES): it needs mon 'allow rw' (or pass --telemetry-id with an identity \
                     that has it)"
                )))
            }
            Err(e) => {
                return Err(CheckError::Refused(format!(
                    "--disrupt: `osd out` as {who} failed ({e}): the actions could not be done"
                )))
            }
        }
    }
    // Each action that takes something away is recorded in the cluster
    // before it is made (`cephbench cleanup` undoes it after a kill).
    if let Err(e) = crate::undo::check_may_record(rados) {
        return Err(CheckError::Refused(format!(
            "--disrupt: {e}; or pass --telemetry-id with an identity that has it"
        )));
    }
    if plan.is_local() {
        let u = unit(n);
        let state = systemctl(
            &["show", "--property=LoadState", "--value", &u],
            Duration::from_secs(10),
        );
        if state.as_deref() != Ok("loaded") {
            return Err(CheckError::Refused(format!(
                "--disrupt: stop/start need osd.{n} to run on this host as systemd unit {u}, \
                 which is not there: use out/in or down instead"
            )));
        }
        if !is_root() {
            return Err(CheckError::Refused(format!(
                "--disrupt: stop/start run `systemctl stop {u}`: run as root, or use out/in or down"
            )));
        }
    }
    Ok(())
}

/// Puts the OSD back for a process that must exit at once (a thread that
/// died): `osd in` and `systemctl start` as needed, each bounded.
fn restore_now() {
    crate::undo::restore_now(Change::is_osd_state);
}

/// The state the thread and its owner share.
#[derive(Default)]
struct Marks {
    /// The job's start (the timeline's zero).
    start: Option<Instant>,
    /// The job ended: when, and whether by an interrupt.
    ended: Option<(Instant, bool)>,
    /// Stop waiting for active+clean (the owner is dropped).
    abandon: bool,
}

type Shared = Arc<(Mutex<Marks>, Condvar)>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Marks> {
    s.0.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the thread gathered.
#[derive(Default)]
struct Gathered {
    start: Option<Instant>,
    end_s: f64,
    actions: Vec<ActionDone>,
    looks: Vec<Look>,
    looks_left_out: u64,
    note: Option<String>,
    warnings: Vec<String>,
}

/// The plan carried out beside one job.
pub struct Disruptor {
    plan: DisruptPlan,
    shared: Shared,
    thread: Option<JoinHandle<Gathered>>,
}

impl Disruptor {
    /// Starts the thread, which waits for the job's start ([`Disruptor::clock`]);
    /// `stop` (the interrupt) cuts the wait for active+clean short.
    pub fn start(
        rados: &Rados,
        plan: DisruptPlan,
        stop: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> Disruptor {
        let shared: Shared = Arc::default();
        let worker = Worker {
            rados: rados.telemetry().clone(),
            plan: plan.clone(),
            shared: Arc::clone(&shared),
            stop,
            out: Gathered::default(),
            held_out: None,
            held_stop: None,
            held_downs: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("disrupt".into())
            .spawn(move || worker.run())
            .ok();
        Disruptor {
            plan,
            shared,
            thread,
        }
    }

    /// The job's clock: marking it starts the plan's countdown.
    pub fn clock(&self) -> JobClock {
        let s = Arc::clone(&self.shared);
        JobClock::new(move |t| {
            lock(&s).start.get_or_insert(t);
            s.1.notify_all();
        })
    }

    /// The job is over: the thread puts the OSD back at once and (unless
    /// `interrupted`) keeps looking until active+clean or [`CLEAN_WAIT`].
    pub fn job_ended(&self, interrupted: bool) {
        lock(&self.shared)
            .ended
            .get_or_insert((Instant::now(), interrupted));
        self.shared.1.notify_all();
    }

    /// Waits for the thread; the disruption with each job's phases, `stalls`
    /// the engine's gaps without a completion. Warnings: what could not be
    /// put back.
    pub fn finish(
        mut self,
        timelines: &[JobTimeline],
        stalls: &[Stall],
        warnings: &mut Vec<String>,
    ) -> Option<Disruption> {
        self.job_ended(true);
        let Ok(g) = self.thread.take()?.join() else {
            // The thread died (a panic) before it could put the OSD back.
            restore_now();
            return None;
        };
        warnings.extend(g.warnings);
        let t0 = g.start?;
        let stalls: Vec<(f64, f64)> = stalls
            .iter()
            .map(|s| (signed_secs(s.from, t0), s.len.as_secs_f64()))
            .collect();
        let b = phases::bounds(&g.actions, &g.looks);
        let mut all = Vec::new();
        for tl in timelines {
            all.extend(phases::phases(tl, &b, &stalls));
        }
        let mut recovery =
            phases::recovery(&b, &g.actions, &g.looks, g.end_s, CLEAN_WAIT.as_secs_f64());
        recovery.note = g.note;
        Some(Disruption {
            osd: self.plan.osd,
            spec: self.plan.spec.clone(),
            actions: g.actions,
            phases: all,
            recovery,
            looks: g.looks,
            looks_left_out: g.looks_left_out,
            poll_s: POLL.as_secs_f64(),
        })
    }
}

impl Drop for Disruptor {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            {
                let mut m = lock(&self.shared);
                m.ended.get_or_insert((Instant::now(), true));
                m.abandon = true;
            }
            self.shared.1.notify_all();
            if t.join().is_err() {
                restore_now();
            }
        }
    }
}

/// `t` in seconds from `t0`, negative before it.
fn signed_secs(t: Instant, t0: Instant) -> f64 {
    match t.checked_duration_since(t0) {
        Some(d) => d.as_secs_f64(),
        None => -t0.duration_since(t).as_secs_f64(),
    }
}

/// Undoes the change `slot` holds, else puts `change` back unrecorded
/// (an `in` after an `out` that failed); the slot empties once it is undone.
fn undo(rados: &Rados, slot: &mut Option<Held>, change: Change) -> Result<(), UndoError> {
    match slot {
        Some(h) => {
            h.undo()?;
            *slot = None;
            Ok(())
        }
        None => crate::undo::put_back(rados, &change).map(drop),
    }
}

struct Worker {
    rados: Rados,
    plan: DisruptPlan,
    shared: Shared,
    stop: Option<tokio::sync::watch::Receiver<bool>>,
    out: Gathered,
    /// The OSD marked out, stopped, marked down by us (each recorded in
    /// the cluster before it was made).
    held_out: Option<Held>,
    held_stop: Option<Held>,
    held_downs: Vec<Held>,
}

impl Worker {
    fn run(mut self) -> Gathered {
        self.gather();
        // An OSD marked down comes back by itself: its record goes once
        // it is up (a bounded wait).
        for h in std::mem::take(&mut self.held_downs) {
            if let Err(e) = h.undo() {
                self.out.warnings.push(format!(
                    "--disrupt: {e}; the change stays recorded for `cephbench cleanup`"
                ));
            }
        }
        std::mem::take(&mut self.out)
    }

    fn gather(&mut self) {
        // Wait for the job's start (or its end, if it never started).
        let t0 = {
            let mut m = lock(&self.shared);
            loop {
                if let Some(t) = m.start {
                    break Some(t);
                }
                if m.ended.is_some() {
                    break None;
                }
                m = self
                    .shared
                    .1
                    .wait(m)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let Some(t0) = t0 else {
            return;
        };
        self.out.start = Some(t0);
        let mut next_step = 0;
        let mut next_look = t0;
        let interrupted = loop {
            let due_step = self.plan.steps.get(next_step).map(|s| t0 + s.at);
            let wake = due_step.map_or(next_look, |d| d.min(next_look));
            if let Some((_, interrupted)) = self.wait(wake) {
                break interrupted;
            }
            let now = Instant::now();
            if due_step.is_some_and(|d| d <= now) {
                let step = self.plan.steps[next_step];
                self.act(step.action, Some(step.at.as_secs_f64()), t0, false);
                next_step += 1;
                // Look right after an action: its effect shows at once.
                next_look = Instant::now();
                continue;
            }
            if next_look <= now {
                self.look(t0);
                next_look = (next_look + POLL).max(Instant::now());
            }
        };
        let end = lock(&self.shared).ended.map_or_else(Instant::now, |e| e.0);
        self.out.end_s = signed_secs(end, t0);
        // Put the OSD back at once.
        if self.held_stop.is_some() {
            self.act(Action::Start, None, t0, true);
        }
        if self.held_out.is_some() {
            self.act(Action::In, None, t0, true);
        }
        if !self.out.actions.iter().any(|a| a.action.disrupts()) {
            return;
        }
        if interrupted {
            self.out.note = Some("not waited for: the run was interrupted".into());
            self.look(t0);
            return;
        }
        // Wait (bounded) for active+clean.
        let limit = end + CLEAN_WAIT;
        let mut next = Instant::now();
        loop {
            self.look(t0);
            if phases::bounds(&self.out.actions, &self.out.looks)
                .clean
                .is_some()
            {
                break;
            }
            next = (next + POLL).max(Instant::now());
            if next > limit {
                break;
            }
            if self.interrupted() || self.sleep_until(next) {
                self.out.note =
                    Some("the wait for active+clean after the job was interrupted".into());
                break;
            }
        }
    }

    /// Sleeps until `t` unless the job ends first: `Some(interrupted)` then.
    fn wait(&self, t: Instant) -> Option<(Instant, bool)> {
        let mut m = lock(&self.shared);
        loop {
            if let Some(e) = m.ended {
                return Some(e);
            }
            let now = Instant::now();
            if now >= t {
                return None;
            }
            m = self
                .shared
                .1
                .wait_timeout(m, t - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// After the job: sleeps until `t`; `true` when abandoned.
    fn sleep_until(&self, t: Instant) -> bool {
        let mut m = lock(&self.shared);
        loop {
            if m.abandon {
                return true;
            }
            let now = Instant::now();
            if now >= t {
                return false;
            }
            m = self
                .shared
                .1
                .wait_timeout(m, (t - now).min(Duration::from_millis(200)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            drop(m);
            if self.interrupted() {
                return true;
            }
            m = lock(&self.shared);
        }
    }

    fn interrupted(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| *s.borrow())
    }

    fn act(&mut self, action: Action, asked_s: Option<f64>, t0: Instant, on_exit: bool) {
        let n = self.plan.osd;
        let (mut sent, result) = match action {
            Action::Out | Action::Down | Action::Stop => {
                let change = match action {
                    Action::Out => Change::OsdOut { osd: n },
                    Action::Down => Change::OsdDown { osd: n },
                    _ => Change::OsdStopped { osd: n },
                };
                // Recorded first; the action's clock starts when it is sent.
                match crate::undo::record(&self.rados, change) {
                    Ok(held) => {
                        let sent = Instant::now();
                        let made = held.make();
                        if made.is_ok() {
                            match action {
                                Action::Out => self.held_out = Some(held),
                                Action::Stop => self.held_stop = Some(held),
                                _ => self.held_downs.push(held),
                            }
                        }
                        (sent, made)
                    }
                    Err(e) => (Instant::now(), Err(e)),
                }
            }
            Action::In => (
                Instant::now(),
                undo(&self.rados, &mut self.held_out, Change::OsdOut { osd: n }),
            ),
            Action::Start => (
                Instant::now(),
                undo(
                    &self.rados,
                    &mut self.held_stop,
                    Change::OsdStopped { osd: n },
                ),
            ),
        };
        let done = Instant::now();
        sent = sent.min(done);
        let result = result.map_err(|e| e.to_string());
        if result.is_err() && on_exit {
            self.out.warnings.push(match action {
                Action::In => format!(
                    "--disrupt: osd.{n} could not be marked in again: run `ceph osd in {n}` (or \
                     `cephbench cleanup` once this run has ended)"
                ),
                _ => format!(
                    "--disrupt: osd.{n} could not be started again: run `systemctl start {}`",
                    unit(n)
                ),
            });
        }
        self.out.actions.push(ActionDone {
            action,
            asked_s,
            sent_s: Some(signed_secs(sent, t0)),
            done_s: result.is_ok().then(|| signed_secs(done, t0)),
            on_exit,
            error: result.err(),
        });
    }

    /// `status` (mon: the OSDs up and in, current), then the PGs from the
    /// mgr's `pg stat` (current to the second; `status` carries the mgr's
    /// digest, seconds behind), else from `status`.
    fn look(&mut self, t0: Instant) {
        let t = signed_secs(Instant::now(), t0);
        let Ok(out) = self
            .rados
            .mon_command(r#"{"prefix":"status","format":"json"}"#)
        else {
            return;
        };
        let Some(mut l) = serde_json::from_slice::<Value>(&out.out)
            .ok()
            .and_then(|doc| parse_look(&doc, t))
        else {
            return;
        };
        if let Some(doc) = self
            .rados
            .mgr_command(r#"{"prefix":"pg stat","format":"json"}"#)
            .ok()
            .and_then(|o| serde_json::from_slice::<Value>(&o.out).ok())
        {
            pg_stat_into(&doc, &mut l);
        }
        if self.out.looks.len() < MAX_LOOKS {
            self.out.looks.push(l);
        } else {
            self.out.looks_left_out += 1;
        }
    }
}

/// One look from `status` (format json). Pure.
pub fn parse_look(doc: &Value, t_s: f64) -> Option<Look> {
    let s = parse_status(doc, t_s).ok()?;
    let pgmap = doc.get("pgmap")?;
    let n = |k: &str| pgmap.get(k).and_then(Value::as_u64).unwrap_or(0);
    let states_recover = s
        .pgs_not_clean
        .keys()
        .any(|k| k.contains("recover") || k.contains("backfill"));
    Some(Look {
        t_s,
        pgs: s.pgs,
        pgs_not_clean: s.pgs_not_clean.values().sum(),
        recovering: states_recover,
        degraded_objects: n("degraded_objects"),
        misplaced_objects: n("misplaced_objects"),
        recovering_objects_per_sec: s.recovering_objects_per_sec,
        recovering_bytes_per_sec: s.recovering_bytes_per_sec,
        osds_up: s.osds_up,
        osds_in: s.osds_in,
    })
}

/// The PGs of the mgr's `pg stat` (format json: `{"pg_summary":
/// {"num_pg_by_state": [{"name", "num"}], "num_pgs", ...}}`) into `l`: its
/// PG counts, and its recovery figures where it has them. Pure; a
/// document of another shape leaves `l` as it was.
pub fn pg_stat_into(doc: &Value, l: &mut Look) {
    let sum = doc.get("pg_summary").unwrap_or(doc);
    let (Some(states), Some(pgs)) = (
        sum.get("num_pg_by_state").and_then(Value::as_array),
        sum.get("num_pgs").and_then(Value::as_u64),
    ) else {
        return;
    };
    let mut not_clean = 0;
    let mut recovering = false;
    for s in states {
        let (Some(name), Some(n)) = (
            s.get("name").and_then(Value::as_str),
            s.get("num").and_then(Value::as_u64),
        ) else {
            return;
        };
        if crate::telemetry::quiet::without_scrub(name) != "active+clean" {
            not_clean += n as u32;
            recovering |= name.contains("recover") || name.contains("backfill");
        }
    }
    let f = |k: &str| sum.get(k).and_then(Value::as_f64);
    let u = |k: &str| sum.get(k).and_then(Value::as_u64);
    l.pgs = pgs as u32;
    l.pgs_not_clean = not_clean;
    if let (Some(o), Some(b)) = (
        f("recovering_objects_per_sec"),
        f("recovering_bytes_per_sec"),
    ) {
        l.recovering_objects_per_sec = o;
        l.recovering_bytes_per_sec = b;
    }
    l.degraded_objects = u("degraded_objects").unwrap_or(l.degraded_objects);
    l.misplaced_objects = u("misplaced_objects").unwrap_or(l.misplaced_objects);
    l.recovering = recovering;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_from_status() {
        let mut doc: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/pacific/status_noout_deep_scrub.json"
        ))
        .unwrap();
        let pgmap = doc.get_mut("pgmap").unwrap();
        pgmap["recovering_objects_per_sec"] = 7.into();
        pgmap["degraded_objects"] = 120.into();
        pgmap["pgs_by_state"] = serde_json::json!([
            {"state_name": "active+clean", "count": 5},
            {"state_name": "active+recovery_wait+degraded", "count": 3},
            {"state_name": "active+undersized+degraded", "count": 1}
        ]);
        let l = parse_look(&doc, 2.5).unwrap();
        assert_eq!((l.t_s, l.pgs_not_clean, l.degraded_objects), (2.5, 4, 120));
        assert!(l.recovering);
        assert_eq!(l.recovering_objects_per_sec, 7.0);
        // The mgr's rate lags (seconds after a recovery ended): the PG
        // states alone say whether one is under way.
        pgmap_states(&mut doc, "active+undersized+degraded");
        let l = parse_look(&doc, 3.0).unwrap();
        assert!(!l.recovering);
        assert_eq!(l.recovering_objects_per_sec, 7.0);
    }

    fn pgmap_states(doc: &mut Value, state: &str) {
        doc["pgmap"]["pgs_by_state"] = serde_json::json!([{"state_name": state, "count": 9}]);
    }

    #[test]
    fn the_pgs_from_pg_stat() {
        let doc: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/pacific/status_noout_deep_scrub.json"
        ))
        .unwrap();
        let mut l = parse_look(&doc, 1.0).unwrap();
        let stat = serde_json::json!({"pg_ready": true, "pg_summary": {
            "num_pg_by_state": [
                {"name": "active+clean", "num": 20},
                {"name": "active+clean+scrubbing", "num": 1},
                {"name": "active+recovering+degraded", "num": 3},
                {"name": "active+undersized+degraded", "num": 8}],
            "num_pgs": 32, "degraded_objects": 77}});
        pg_stat_into(&stat, &mut l);
        assert_eq!((l.pgs, l.pgs_not_clean, l.degraded_objects), (32, 11, 77));
        assert!(l.recovering);
        let before = l.clone();
        pg_stat_into(&serde_json::json!({"pg_summary": {}}), &mut l);
        assert_eq!(l, before, "another shape changes nothing");
    }

    #[test]
    fn times_before_the_start_are_negative() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(1500);
        assert!((signed_secs(later, t0) - 1.5).abs() < 1e-9);
        assert!((signed_secs(t0, later) + 1.5).abs() < 1e-9);
    }
}
