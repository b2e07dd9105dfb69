//! Was the cluster quiet? Looks at the cluster before and after a job and
//! polls it during the job (off the I/O path, on the telemetry connection):
//! `ceph health` (status and checks), PGs not active+clean, scrubs and deep
//! scrubs running (which PGs), recovery rates, and the osdmap (epoch, OSDs
//! down or out). What changed becomes [`ClusterEvent`]s with times relative
//! to the job's start; [`ClusterState::not_quiet`] is the one line the
//! reports print when the cluster was not quiet.
//!
//! Cost per poll: one `status` (mon); `pg dump pgs_brief` (mgr) on clusters
//! of up to [`SCRUB_LIST_LIMIT`] PGs, on larger ones only while `status`
//! counts scrubbing PGs; `osd dump` (mon) only when the osdmap epoch moved. Each command is bounded by the connection's op timeout.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cluster::ProbeError;
use super::parse::parse_osd_states;
use super::shape::{json, shape, ShapeError};
use super::stop::StopSignal;
use crate::ceph::Rados;
use crate::result::cluster::{
    ClusterEvent, ClusterSnapshot, ClusterState, HealthCheck, MAX_EVENTS, MAX_PG_IDS,
};

/// How often the cluster is looked at during a job.
pub const QUIET_POLL: Duration = Duration::from_secs(5);

/// Clusters of up to this many PGs have their scrubs read from `pg dump
/// pgs_brief` at every look (current to the second); larger ones only
/// while `status` (the mgr's digest, a few seconds late) counts a scrub.
pub const SCRUB_LIST_LIMIT: u32 = 4096;

/// `HEALTH_OK`.
pub const HEALTH_OK: &str = "HEALTH_OK";

impl ClusterSnapshot {
    /// Whether this look found the cluster quiet: `HEALTH_OK`, every PG
    /// active+clean, no scrub, no recovery.
    pub fn is_quiet(&self) -> bool {
        self.health == HEALTH_OK
            && self.pgs_not_clean.is_empty()
            && self.scrubbing == 0
            && self.deep_scrubbing == 0
            && !self.recovering()
    }

    fn recovering(&self) -> bool {
        self.recovering_objects_per_sec > 0.0 || self.recovering_bytes_per_sec > 0.0
    }

    /// Why this look is not quiet, in words (`None`: quiet), e.g.
    /// `HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set); deep scrub on 1 PG (2.0)`.
    pub fn why_not_quiet(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.health != HEALTH_OK {
            parts.push(format!("{} ({})", self.health, checks_text(&self.checks)));
        }
        for (what, n, ids) in [
            ("deep scrub", self.deep_scrubbing, &self.deep_scrubbing_pgs),
            ("scrub", self.scrubbing, &self.scrubbing_pgs),
        ] {
            if n > 0 {
                parts.push(format!("{what} on {}{}", pgs(n), ids_text(ids)));
            }
        }
        if !self.pgs_not_clean.is_empty() {
            parts.push(format!(
                "PGs not active+clean: {}",
                self.pgs_not_clean
                    .iter()
                    .map(|(s, n)| format!("{n} {s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.recovering() {
            parts.push(format!("recovery at {}", rate_text(self)));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

fn pgs(n: u32) -> String {
    format!("{n} PG{}", if n == 1 { "" } else { "s" })
}

fn ids_text(ids: &[String]) -> String {
    if ids.is_empty() {
        String::new()
    } else {
        format!(" ({})", ids.join(", "))
    }
}

fn checks_text(checks: &[HealthCheck]) -> String {
    checks
        .iter()
        .map(|c| format!("{}: {}", c.name, c.message))
        .collect::<Vec<_>>()
        .join("; ")
}

fn rate_text(s: &ClusterSnapshot) -> String {
    format!(
        "{:.0} objects/s, {}/s",
        s.recovering_objects_per_sec,
        crate::units::fmt_bytes(s.recovering_bytes_per_sec as u64)
    )
}

impl ClusterEvent {
    fn new(kind: &str, name: &str, t: f64) -> ClusterEvent {
        ClusterEvent {
            kind: kind.into(),
            from_s: t,
            to_s: t,
            until_end: false,
            name: name.into(),
            severity: String::new(),
            detail: String::new(),
            pgs: None,
            pg_ids: Vec::new(),
            max_objects_per_sec: None,
            max_bytes_per_sec: None,
            epochs: None,
        }
    }
}

impl ClusterState {
    /// The one line the reports print when the cluster was not quiet, e.g.
    /// `not quiet: HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set); deep scrub
    /// on 3 PGs during 12–40 s`; `None` when it was.
    pub fn not_quiet(&self) -> Option<String> {
        if self.quiet {
            return None;
        }
        let mut parts = Vec::new();
        let worst = [&self.before, &self.after]
            .into_iter()
            .flatten()
            .map(|s| s.health.as_str())
            .chain(
                self.events
                    .iter()
                    .filter(|e| e.kind == "health")
                    .map(|e| e.severity.as_str()),
            )
            .max_by_key(|h| health_rank(h))
            .filter(|h| *h != HEALTH_OK);
        let checks: Vec<String> = self
            .events
            .iter()
            .filter(|e| e.kind == "health")
            .map(|e| format!("{}: {}{}", e.name, e.detail, self.span_if_partial(e)))
            .collect();
        if let Some(h) = worst {
            parts.push(if checks.is_empty() {
                h.to_string()
            } else {
                format!("{h} ({})", checks.join("; "))
            });
        }
        for e in &self.events {
            let span = self.span(e);
            match e.kind.as_str() {
                "scrub" | "deep_scrub" => parts.push(format!(
                    "{} on {} {span}",
                    if e.kind == "scrub" {
                        "scrub"
                    } else {
                        "deep scrub"
                    },
                    pgs(e.pgs.unwrap_or(0))
                )),
                "pgs_not_clean" => {
                    parts.push(format!("{} {} {span}", pgs(e.pgs.unwrap_or(0)), e.name))
                }
                "recovery" => parts.push(format!("recovery ({}) {span}", e.detail)),
                "osdmap" => parts.push(format!("osdmap {} {span}", e.detail)),
                _ => {}
            }
        }
        if self.events_left_out > 0 {
            parts.push(format!("{} more events", self.events_left_out));
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!("not quiet: {}", parts.join("; ")))
    }

    /// When `e` was seen, in words: `during 12–40 s`, `throughout the run`,
    /// `at 12 s`, or `between 5 and 10 s` (an osdmap change).
    pub fn span(&self, e: &ClusterEvent) -> String {
        let (a, b) = (e.from_s.max(0.0), e.to_s.max(0.0));
        if e.kind == "osdmap" {
            return format!("between {a:.0} and {b:.0} s");
        }
        let from_start = self.before.as_ref().is_some_and(|s| e.from_s <= s.t_s);
        if from_start && e.until_end {
            return "throughout the run".into();
        }
        if (b - a) < 0.5 {
            format!("at {a:.0} s")
        } else {
            format!("during {a:.0}–{b:.0} s")
        }
    }

    /// A short label of `e` for a mark on a timeline, e.g. `deep scrub, 3
    /// PGs, 12–40 s` or `OSDMAP_FLAGS, throughout the run`.
    pub fn label(&self, e: &ClusterEvent) -> String {
        let what = match e.kind.as_str() {
            "health" => e.name.clone(),
            "scrub" | "deep_scrub" => {
                format!("{}, {}", e.kind.replace('_', " "), pgs(e.pgs.unwrap_or(0)))
            }
            "pgs_not_clean" => format!("{} {}", pgs(e.pgs.unwrap_or(0)), e.name),
            "osdmap" => format!("osdmap {}", e.detail),
            k => k.to_string(),
        };
        format!("{what}, {}", self.span(e))
    }

    fn span_if_partial(&self, e: &ClusterEvent) -> String {
        match self.span(e).as_str() {
            "throughout the run" => String::new(),
            s => format!(" {s}"),
        }
    }
}

fn health_rank(h: &str) -> u8 {
    match h {
        HEALTH_OK => 0,
        "HEALTH_ERR" => 2,
        _ => 1,
    }
}

/// Folds looks into events, one look at a time (memory bounded by the
/// conditions open at once and [`MAX_EVENTS`]). Pure.
#[derive(Debug, Default)]
pub struct EventTracker {
    open: BTreeMap<(String, String), ClusterEvent>,
    closed: Vec<ClusterEvent>,
    left_out: u64,
    last: Option<ClusterSnapshot>,
    looks: u32,
    all_quiet: bool,
}

impl EventTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> EventTracker {
        EventTracker {
            all_quiet: true,
            ..EventTracker::default()
        }
    }

    /// Takes one look into account.
    pub fn add(&mut self, s: &ClusterSnapshot) {
        self.looks += 1;
        self.all_quiet &= s.is_quiet();
        let t = s.t_s;
        let mut seen: Vec<(String, String)> = Vec::new();
        for c in &s.checks {
            let e = self.touch("health", &c.name, t, &mut seen);
            e.detail.clone_from(&c.message);
            e.severity.clone_from(&c.severity);
        }
        for (kind, n, ids) in [
            ("scrub", s.scrubbing, &s.scrubbing_pgs),
            ("deep_scrub", s.deep_scrubbing, &s.deep_scrubbing_pgs),
        ] {
            if n == 0 {
                continue;
            }
            let e = self.touch(kind, "", t, &mut seen);
            for id in ids {
                if !e.pg_ids.contains(id) && e.pg_ids.len() < MAX_PG_IDS {
                    e.pg_ids.push(id.clone());
                }
            }
            // Every PG seen scrubbing, as far as the ids tell; at least the
            // most at one look.
            let count = (e.pg_ids.len() as u32).max(n).max(e.pgs.unwrap_or(0));
            e.pgs = Some(count);
        }
        for (state, n) in &s.pgs_not_clean {
            let e = self.touch("pgs_not_clean", state, t, &mut seen);
            e.pgs = Some(e.pgs.unwrap_or(0).max(*n));
        }
        if s.recovering() {
            let e = self.touch("recovery", "", t, &mut seen);
            let o = e
                .max_objects_per_sec
                .unwrap_or(0.0)
                .max(s.recovering_objects_per_sec);
            let b = e
                .max_bytes_per_sec
                .unwrap_or(0.0)
                .max(s.recovering_bytes_per_sec);
            e.max_objects_per_sec = Some(o);
            e.max_bytes_per_sec = Some(b);
            e.detail = format!(
                "up to {o:.0} objects/s, {}/s",
                crate::units::fmt_bytes(b as u64)
            );
        }
        if let Some(prev) = &self.last {
            if prev.osdmap_epoch != s.osdmap_epoch && prev.osdmap_epoch != 0 {
                let mut e = ClusterEvent::new("osdmap", "", prev.t_s);
                e.to_s = t;
                e.epochs = Some((prev.osdmap_epoch, s.osdmap_epoch));
                e.detail = osdmap_change(prev, s);
                self.push(e);
            }
        }
        // Conditions not seen in this look have ended.
        let ended: Vec<(String, String)> = self
            .open
            .keys()
            .filter(|k| !seen.contains(k))
            .cloned()
            .collect();
        for k in ended {
            if let Some(e) = self.open.remove(&k) {
                self.push(e);
            }
        }
        self.last = Some(s.clone());
    }

    fn touch(
        &mut self,
        kind: &str,
        name: &str,
        t: f64,
        seen: &mut Vec<(String, String)>,
    ) -> &mut ClusterEvent {
        let key = (kind.to_string(), name.to_string());
        seen.push(key.clone());
        let e = self
            .open
            .entry(key)
            .or_insert_with(|| ClusterEvent::new(kind, name, t));
        e.to_s = t;
        e
    }

    fn push(&mut self, e: ClusterEvent) {
        if self.closed.len() < MAX_EVENTS {
            self.closed.push(e);
        } else {
            self.left_out += 1;
        }
    }

    /// The cluster's state around the job: the events so far, the
    /// conditions still open marked as seen until the end when there is a
    /// look `after` the job (the last one added).
    pub fn finish(
        mut self,
        before: Option<ClusterSnapshot>,
        after: Option<ClusterSnapshot>,
        poll: Duration,
    ) -> ClusterState {
        let at_end = after.is_some();
        let open = std::mem::take(&mut self.open);
        for (_, mut e) in open {
            e.until_end = at_end;
            self.push(e);
        }
        let mut events = self.closed;
        events.sort_by(|a, b| a.from_s.total_cmp(&b.from_s));
        let quiet = self.all_quiet
            && events.is_empty()
            && self.left_out == 0
            && before.is_some()
            && after.is_some();
        ClusterState {
            before,
            after,
            events,
            events_left_out: self.left_out,
            poll_s: poll.as_secs_f64(),
            looks: self.looks,
            quiet,
        }
    }
}

/// An osdmap change in words: `epoch 13 → 14` and the OSDs that went
/// down, up, out or in (when both looks read `osd dump`; else the counts).
fn osdmap_change(a: &ClusterSnapshot, b: &ClusterSnapshot) -> String {
    let mut moved = Vec::new();
    let diff = |x: &[i32], y: &[i32], word: &str, out: &mut Vec<String>| {
        for o in y.iter().filter(|o| !x.contains(o)) {
            out.push(format!("osd.{o} {word}"));
        }
    };
    diff(&a.osds_down, &b.osds_down, "down", &mut moved);
    diff(&b.osds_down, &a.osds_down, "up", &mut moved);
    diff(&a.osds_out, &b.osds_out, "out", &mut moved);
    diff(&b.osds_out, &a.osds_out, "in", &mut moved);
    if moved.is_empty() && (a.osds_up, a.osds_in) != (b.osds_up, b.osds_in) {
        moved.push(format!(
            "OSDs up {} → {}, in {} → {}",
            a.osds_up, b.osds_up, a.osds_in, b.osds_in
        ));
    }
    let mut s = format!("epoch {} → {}", a.osdmap_epoch, b.osdmap_epoch);
    if !moved.is_empty() {
        s.push_str(&format!(" ({})", moved.join(", ")));
    }
    s
}

/// What `ceph status` (format json) says of health, PGs, recovery and the
/// osdmap. Pure.
pub fn parse_status(doc: &Value, t_s: f64) -> Result<ClusterSnapshot, ShapeError> {
    const W: &str = "status";
    let health = doc.get("health").ok_or_else(|| shape(W, "no health"))?;
    let status = health
        .get("status")
        .and_then(Value::as_str)
        .ok_or_else(|| shape(W, "no health.status"))?;
    let mut checks = Vec::new();
    if let Some(m) = health.get("checks").and_then(Value::as_object) {
        for (name, c) in m {
            if c.get("muted").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            checks.push(HealthCheck {
                name: name.clone(),
                severity: c
                    .get("severity")
                    .and_then(Value::as_str)
                    .unwrap_or("HEALTH_WARN")
                    .into(),
                message: c
                    .pointer("/summary/message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
            });
        }
    }
    let pgmap = doc.get("pgmap").ok_or_else(|| shape(W, "no pgmap"))?;
    let mut pgs_not_clean = BTreeMap::new();
    let (mut scrubbing, mut deep_scrubbing) = (0, 0);
    for s in pgmap
        .get("pgs_by_state")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let (Some(state), Some(n)) = (
            s.get("state_name").and_then(Value::as_str),
            s.get("count").and_then(Value::as_u64),
        ) else {
            return Err(shape(W, "a pgs_by_state entry without state_name/count"));
        };
        let n = n as u32;
        match scrub_kind(state) {
            Some(true) => deep_scrubbing += n,
            Some(false) => scrubbing += n,
            None => {}
        }
        let rest = without_scrub(state);
        if rest != "active+clean" {
            *pgs_not_clean.entry(rest).or_insert(0) += n;
        }
    }
    let f = |k: &str| pgmap.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    // pacific on: {"osdmap": {"epoch":..}}; before: {"osdmap": {"osdmap": {..}}}.
    let osdmap = doc
        .get("osdmap")
        .map(|o| o.get("osdmap").unwrap_or(o))
        .ok_or_else(|| shape(W, "no osdmap"))?;
    let u = |k: &str| osdmap.get(k).and_then(Value::as_u64);
    Ok(ClusterSnapshot {
        t_s,
        health: status.into(),
        checks,
        pgs: pgmap.get("num_pgs").and_then(Value::as_u64).unwrap_or(0) as u32,
        pgs_not_clean,
        scrubbing,
        deep_scrubbing,
        scrubbing_pgs: Vec::new(),
        deep_scrubbing_pgs: Vec::new(),
        recovering_objects_per_sec: f("recovering_objects_per_sec"),
        recovering_bytes_per_sec: f("recovering_bytes_per_sec"),
        osdmap_epoch: u("epoch").ok_or_else(|| shape(W, "no osdmap epoch"))?,
        osds: u("num_osds").unwrap_or(0) as u32,
        osds_up: u("num_up_osds").unwrap_or(0) as u32,
        osds_in: u("num_in_osds").unwrap_or(0) as u32,
        osds_down: Vec::new(),
        osds_out: Vec::new(),
    })
}

/// Whether a PG state is a scrub: `Some(true)` deep, `Some(false)` shallow.
fn scrub_kind(state: &str) -> Option<bool> {
    let parts: Vec<&str> = state.split('+').collect();
    parts
        .contains(&"scrubbing")
        .then(|| parts.contains(&"deep"))
}

/// A PG state without its scrub flags (`active+clean+scrubbing+deep` → `active+clean`).
pub(crate) fn without_scrub(state: &str) -> String {
    state
        .split('+')
        .filter(|p| !matches!(*p, "scrubbing" | "deep"))
        .collect::<Vec<_>>()
        .join("+")
}

/// The PGs scrubbing (not deep) and deep-scrubbing (sorted, at most
/// [`MAX_PG_IDS`] each) and how many of each, from [`parse_scrubbing_pgs`].
pub type ScrubbingPgs = (Vec<String>, Vec<String>, u32, u32);

/// The PGs scrubbing (not deep) and deep-scrubbing, from `pg dump
/// pgs_brief`. Pure.
pub fn parse_scrubbing_pgs(doc: &Value) -> Result<ScrubbingPgs, ShapeError> {
    const W: &str = "pg dump pgs_brief";
    let list = doc
        .as_array()
        .or_else(|| doc.get("pg_stats").and_then(Value::as_array))
        .ok_or_else(|| shape(W, "neither an array nor {pg_stats: [...]}"))?;
    let (mut shallow, mut deep) = (Vec::new(), Vec::new());
    for entry in list {
        let (Some(id), Some(state)) = (
            entry.get("pgid").and_then(Value::as_str),
            entry.get("state").and_then(Value::as_str),
        ) else {
            return Err(shape(W, "entry without pgid/state"));
        };
        match scrub_kind(state) {
            Some(true) => deep.push(id.to_string()),
            Some(false) => shallow.push(id.to_string()),
            None => {}
        }
    }
    let (n, nd) = (shallow.len() as u32, deep.len() as u32);
    for v in [&mut shallow, &mut deep] {
        v.sort();
        v.truncate(MAX_PG_IDS);
    }
    Ok((shallow, deep, n, nd))
}

/// One look at the cluster: `status`, then `pg dump pgs_brief` when it
/// counts scrubbing PGs, and `osd dump` when the osdmap epoch is not
/// `prev`'s (then the OSDs down and out are named; else they are carried
/// from `prev`).
pub fn look(
    rados: &Rados,
    t_s: f64,
    prev: Option<&ClusterSnapshot>,
) -> Result<ClusterSnapshot, ProbeError> {
    let out = rados.mon_command(r#"{"prefix":"status","format":"json"}"#)?;
    let mut s = parse_status(&json(&out.out, "status")?, t_s)?;
    // `status` has the mgr's digest, seconds behind `pg dump`: on a cluster
    // of up to SCRUB_LIST_LIMIT PGs the scrubs are always read from the mgr.
    if s.scrubbing + s.deep_scrubbing > 0 || s.pgs <= SCRUB_LIST_LIMIT {
        let pgs = rados
            .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#);
        // Without the mgr's answer the scrubs are counted, not named.
        let named = pgs
            .ok()
            .and_then(|p| parse_scrubbing_pgs(&json(&p.out, "pg dump pgs_brief").ok()?).ok());
        if let Some((a, b, n, nd)) = named {
            s.scrubbing_pgs = a;
            s.deep_scrubbing_pgs = b;
            s.scrubbing = n;
            s.deep_scrubbing = nd;
        }
    }
    match prev {
        Some(p) if p.osdmap_epoch == s.osdmap_epoch => {
            s.osds_down.clone_from(&p.osds_down);
            s.osds_out.clone_from(&p.osds_out);
        }
        _ => {
            let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
            for (id, up, inn) in parse_osd_states(&json(&dump.out, "osd dump")?)? {
                if !up {
                    s.osds_down.push(id);
                }
                if !inn {
                    s.osds_out.push(id);
                }
            }
        }
    }
    Ok(s)
}

/// Watches the cluster around one job: a look before ([`QuietWatch::start`]),
/// one every `poll` on a thread of its own, one after ([`QuietWatch::finish`]).
pub struct QuietWatch {
    t0: Instant,
    before: Option<ClusterSnapshot>,
    stop: StopSignal,
    state: Arc<Mutex<(EventTracker, Option<ClusterSnapshot>)>>,
    /// Whether the last look failed (the mons away: no look after).
    failing: Arc<AtomicBool>,
    poll: Duration,
    thread: Option<JoinHandle<()>>,
    rados: Rados,
    note: Option<String>,
}

impl QuietWatch {
    /// Looks at the cluster now and starts polling it every `poll`; times
    /// are relative to the end of this look, the job's start (the look
    /// before it has a small negative time).
    pub fn start(rados: &Rados, poll: Duration) -> QuietWatch {
        let rados = rados.telemetry().clone();
        let asked = Instant::now();
        let first = look(&rados, 0.0, None);
        let t0 = Instant::now();
        let mut tracker = EventTracker::new();
        let (before, note) = match first {
            Ok(mut s) => {
                s.t_s = -t0.duration_since(asked).as_secs_f64();
                tracker.add(&s);
                (Some(s), None)
            }
            Err(e) => (
                None,
                Some(format!(
                    "whether the cluster was quiet is not known: `status` as {} failed ({e}); \
                     it needs mon 'allow r'",
                    rados.entity()
                )),
            ),
        };
        let last = before.clone();
        let state = Arc::new(Mutex::new((tracker, last)));
        let failing = Arc::new(AtomicBool::new(before.is_none()));
        let stop = StopSignal::new();
        let thread = if before.is_some() && !poll.is_zero() {
            let (flag, st, fail, r) = (
                stop.clone(),
                Arc::clone(&state),
                Arc::clone(&failing),
                rados.clone(),
            );
            std::thread::Builder::new()
                .name("quiet-watch".into())
                .spawn(move || {
                    let mut next = t0 + poll;
                    while super::sampler::wait_turn(&flag, &mut next, poll) {
                        let prev = st.lock().unwrap_or_else(PoisonError::into_inner).1.clone();
                        let t = Instant::now().duration_since(t0).as_secs_f64();
                        match look(&r, t, prev.as_ref()) {
                            Ok(s) => {
                                fail.store(false, Ordering::Relaxed);
                                let mut g = st.lock().unwrap_or_else(PoisonError::into_inner);
                                g.0.add(&s);
                                g.1 = Some(s);
                            }
                            Err(_) => fail.store(true, Ordering::Relaxed),
                        }
                    }
                })
                .ok()
        } else {
            None
        };
        QuietWatch {
            t0,
            before,
            stop,
            state,
            failing,
            poll,
            thread,
            rados,
            note,
        }
    }

    /// Stops the poller: waits for it at most [`POLLER_GRACE`]; one still
    /// inside a look (the mons gone: it waits out the op timeout) is left
    /// to end on its own, and the mons are taken as away.
    fn stop_poller(&mut self) {
        self.stop.raise();
        let Some(t) = self.thread.take() else {
            return;
        };
        let deadline = Instant::now() + POLLER_GRACE;
        while !t.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if t.is_finished() {
            let _ = t.join();
        } else {
            self.failing.store(true, Ordering::Relaxed);
        }
    }

    /// Stops polling and starts the look after the job on a thread of its
    /// own (unless the mons failed the last look), so that it overlaps
    /// whatever the run does next; [`QuietEnding::collect`] takes it.
    pub fn end(mut self) -> QuietEnding {
        self.stop_poller();
        let note = self.note.take();
        let entity = self.rados.entity().to_string();
        let Some(before) = self.before.take() else {
            return QuietEnding {
                seen: None,
                after: None,
                note,
                entity,
            };
        };
        let mut g = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (tracker, last) = (std::mem::take(&mut g.0), g.1.take());
        drop(g);
        let after = (!self.failing.load(Ordering::Relaxed)).then(|| {
            let t = Instant::now().duration_since(self.t0).as_secs_f64();
            let (tx, rx) = std::sync::mpsc::channel();
            let r = self.rados.clone();
            let _ = std::thread::Builder::new()
                .name("quiet-after".into())
                .spawn(move || {
                    let _ = tx.send(look(&r, t, last.as_ref()));
                });
            (rx, Instant::now() + AFTER_LOOK_LIMIT)
        });
        QuietEnding {
            seen: Some((tracker, before, self.poll)),
            after,
            note,
            entity,
        }
    }

    /// [`QuietWatch::end`], then [`QuietEnding::collect`] at once.
    pub fn finish(self) -> (Option<ClusterState>, Option<String>) {
        self.end().collect()
    }
}

/// A [`QuietWatch`] stopped, its look after the job under way.
pub struct QuietEnding {
    seen: Option<(EventTracker, ClusterSnapshot, Duration)>,
    after: Option<(
        std::sync::mpsc::Receiver<Result<ClusterSnapshot, ProbeError>>,
        Instant,
    )>,
    note: Option<String>,
    entity: String,
}

impl QuietEnding {
    /// What was seen around the job, with a note when a look failed; waits
    /// for the look after the job until [`AFTER_LOOK_LIMIT`] from its start
    /// (mons gone since the last poll would hold it for the op timeout).
    pub fn collect(self) -> (Option<ClusterState>, Option<String>) {
        let Some((mut tracker, before, poll)) = self.seen else {
            return (None, self.note);
        };
        let after = self.after.and_then(|(rx, deadline)| {
            let wait = deadline.saturating_duration_since(Instant::now());
            rx.recv_timeout(wait).ok()?.ok()
        });
        let mut note = self.note;
        match &after {
            Some(s) => tracker.add(s),
            None => {
                note = Some(format!(
                    "whether the cluster stayed quiet to the end is not known: `status` as {} \
                     failed after the run",
                    self.entity
                ));
            }
        }
        (Some(tracker.finish(Some(before), after, poll)), note)
    }
}

impl Drop for QuietWatch {
    fn drop(&mut self) {
        self.stop_poller();
    }
}

/// How long [`QuietWatch::finish`] waits for a poller still inside a look.
const POLLER_GRACE: Duration = Duration::from_millis(300);

/// The longest the look after the job may take (a quiet cluster answers in
/// milliseconds; mons gone would hold it for the whole op timeout).
const AFTER_LOOK_LIMIT: Duration = Duration::from_secs(3);

/// `--require-quiet`: one look; `Err` with the reason in one line when the
/// cluster is not quiet or the look failed.
pub fn require_quiet(rados: &Rados) -> Result<(), String> {
    let rados = rados.telemetry();
    match look(rados, 0.0, None) {
        Ok(s) => match s.why_not_quiet() {
            None => Ok(()),
            Some(why) => Err(format!(
                "--require-quiet: the cluster is not quiet: {why}; wait until it is (or mute a \
                 health check that does not matter with `ceph health mute`), or drop --require-quiet"
            )),
        },
        Err(e) => Err(format!(
            "--require-quiet: cannot tell whether the cluster is quiet: `status` as {} failed \
             ({e}); it needs mon 'allow r' (and mgr 'allow r' for the scrubbing PGs)",
            rados.entity()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/pacific/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A quiet look at `t`: HEALTH_OK, 9 PGs active+clean, epoch 13.
    fn quiet(t: f64) -> ClusterSnapshot {
        let mut s = parse_status(&fixture("status_noout_deep_scrub.json"), t).unwrap();
        s.health = HEALTH_OK.into();
        s.checks.clear();
        s.deep_scrubbing = 0;
        s
    }

    fn noout(mut s: ClusterSnapshot) -> ClusterSnapshot {
        s.health = "HEALTH_WARN".into();
        s.checks = vec![HealthCheck {
            name: "OSDMAP_FLAGS".into(),
            severity: "HEALTH_WARN".into(),
            message: "noout flag(s) set".into(),
        }];
        s
    }

    fn deep(mut s: ClusterSnapshot, ids: &[&str]) -> ClusterSnapshot {
        s.deep_scrubbing = ids.len() as u32;
        s.deep_scrubbing_pgs = ids.iter().map(|i| i.to_string()).collect();
        s
    }

    fn run(looks: &[ClusterSnapshot]) -> ClusterState {
        let mut t = EventTracker::new();
        for s in looks {
            t.add(s);
        }
        t.finish(looks.first().cloned(), looks.last().cloned(), QUIET_POLL)
    }

    #[test]
    fn status_with_noout_and_a_deep_scrub() {
        // Captured from pacific 16.2.15 after `ceph osd set noout` and
        // `ceph osd pool deep-scrub` on a pool with data.
        let s = parse_status(&fixture("status_noout_deep_scrub.json"), 1.5).unwrap();
        assert_eq!(s.health, "HEALTH_WARN");
        assert_eq!(
            s.checks,
            vec![HealthCheck {
                name: "OSDMAP_FLAGS".into(),
                severity: "HEALTH_WARN".into(),
                message: "noout flag(s) set".into(),
            }]
        );
        assert_eq!((s.pgs, s.deep_scrubbing, s.scrubbing), (9, 1, 0));
        // A deep scrub alone leaves the PG active+clean.
        assert!(s.pgs_not_clean.is_empty());
        assert_eq!(
            (s.osdmap_epoch, s.osds, s.osds_up, s.osds_in),
            (13, 1, 1, 1)
        );
        assert_eq!(s.recovering_objects_per_sec, 0.0);
        assert!(!s.is_quiet());
        assert_eq!(
            s.why_not_quiet().unwrap(),
            "HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set); deep scrub on 1 PG"
        );
    }

    #[test]
    fn which_pgs_scrub() {
        let (shallow, deep, n, nd) =
            parse_scrubbing_pgs(&fixture("pg_dump_pgs_brief_deep_scrub.json")).unwrap();
        assert!(shallow.is_empty());
        assert_eq!(deep, vec!["2.0".to_string()]);
        assert_eq!((n, nd), (0, 1));
        assert!(parse_scrubbing_pgs(&serde_json::json!({"x": 1})).is_err());
    }

    #[test]
    fn recovery_rates_and_states_not_clean() {
        // The captured status with the fields Ceph's pgmap digest adds
        // while PGs recover (`recovering_*_per_sec`).
        let mut doc = fixture("status_noout_deep_scrub.json");
        let pgmap = doc.get_mut("pgmap").unwrap();
        pgmap["recovering_objects_per_sec"] = 120.into();
        pgmap["recovering_bytes_per_sec"] = (40u64 << 20).into();
        pgmap["pgs_by_state"] = serde_json::json!([
            {"state_name": "active+clean", "count": 5},
            {"state_name": "active+recovering+degraded", "count": 3},
            {"state_name": "active+undersized+degraded+scrubbing", "count": 1}
        ]);
        let s = parse_status(&doc, 0.0).unwrap();
        assert_eq!(s.recovering_objects_per_sec, 120.0);
        assert_eq!(s.recovering_bytes_per_sec, (40u64 << 20) as f64);
        assert_eq!(s.scrubbing, 1);
        assert_eq!(
            s.pgs_not_clean
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            vec![
                ("active+recovering+degraded", 3),
                ("active+undersized+degraded", 1)
            ]
        );
    }

    #[test]
    fn a_quiet_cluster_gives_no_line() {
        let st = run(&[quiet(-0.01), quiet(5.0), quiet(10.0), quiet(12.0)]);
        assert!(st.quiet);
        assert!(st.events.is_empty());
        assert_eq!(st.looks, 4);
        assert_eq!(st.not_quiet(), None);
    }

    #[test]
    fn noout_throughout_and_a_deep_scrub_during() {
        let looks = [
            noout(quiet(-0.01)),
            noout(quiet(6.0)),
            noout(deep(quiet(12.0), &["2.1", "2.3"])),
            noout(deep(quiet(24.0), &["2.3", "2.7"])),
            noout(deep(quiet(40.0), &["2.7"])),
            noout(quiet(46.0)),
        ];
        let st = run(&looks);
        assert!(!st.quiet);
        assert_eq!(
            st.not_quiet().unwrap(),
            "not quiet: HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set); deep scrub on 3 PGs during 12–40 s"
        );
        let d = st.events.iter().find(|e| e.kind == "deep_scrub").unwrap();
        assert_eq!((d.from_s, d.to_s, d.until_end), (12.0, 40.0, false));
        assert_eq!(d.pg_ids, vec!["2.1", "2.3", "2.7"]);
        let h = st.events.iter().find(|e| e.kind == "health").unwrap();
        assert_eq!((h.name.as_str(), h.until_end), ("OSDMAP_FLAGS", true));
    }

    #[test]
    fn a_check_raised_during_the_run_names_its_span() {
        let st = run(&[
            quiet(0.0),
            noout(quiet(5.0)),
            noout(quiet(10.0)),
            quiet(15.0),
        ]);
        assert_eq!(
            st.not_quiet().unwrap(),
            "not quiet: HEALTH_WARN (OSDMAP_FLAGS: noout flag(s) set during 5–10 s)"
        );
    }

    #[test]
    fn an_osd_going_down_is_an_osdmap_change() {
        let mut down = quiet(10.0);
        down.osdmap_epoch = 15;
        down.osds_up = 0;
        down.osds_down = vec![0];
        let st = run(&[quiet(0.0), quiet(5.0), down.clone(), down]);
        let e = st.events.iter().find(|e| e.kind == "osdmap").unwrap();
        assert_eq!(e.epochs, Some((13, 15)));
        assert_eq!(e.detail, "epoch 13 → 15 (osd.0 down)");
        assert_eq!(
            st.not_quiet().unwrap(),
            "not quiet: osdmap epoch 13 → 15 (osd.0 down) between 5 and 10 s"
        );
    }

    #[test]
    fn events_are_bounded() {
        let mut t = EventTracker::new();
        for i in 0..(2 * MAX_EVENTS + 10) {
            let s = if i % 2 == 0 {
                quiet(i as f64)
            } else {
                noout(quiet(i as f64))
            };
            t.add(&s);
        }
        let st = t.finish(None, None, QUIET_POLL);
        assert_eq!(st.events.len(), MAX_EVENTS);
        assert!(st.events_left_out > 0);
        assert!(st.not_quiet().unwrap().ends_with("more events"));
    }

    #[test]
    fn the_json_round_trips() {
        let st = run(&[
            noout(quiet(-0.01)),
            noout(deep(quiet(5.0), &["2.0"])),
            quiet(9.0),
        ]);
        let back: ClusterState =
            serde_json::from_str(&serde_json::to_string(&st).unwrap()).unwrap();
        assert_eq!(back, st);
    }
}
