//! What the probes saw around a job: before it, the placement (for per-OSD
//! tagging), the OSDs' counters, states and devices; during it, the
//! placement watcher, the counter sampler and the RTT probe; after it, the
//! per-OSD reports, the placement changes, the network and the slowest ops
//! explained.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cluster;
use super::counters::{self, Snapshot};
use super::historic::{self, join, ClientSlowOp};
use super::network::RttProbe;
use super::ophistory::{HistorySampler, OpHistory};
use super::osdcpu::CpuWatch;
use super::sampler::{CounterSampler, PlacementWatcher};
use crate::ceph::Rados;
use crate::engine::{JobOutcome, OpKind};
use crate::placement::{self, OsdSlots};
use crate::result::ops::OpEvidence;
use crate::result::{NetworkReport, OsdClientRow, OsdReport, PlacementInfo};

/// What the probes saw before a job: the placement (for per-OSD tagging)
/// and the OSDs' counters.
pub struct Probes {
    /// Object → primary OSD slot map, if the placement could be read
    /// (kept current by the watcher when the osdmap changes).
    pub slots: Option<Arc<OsdSlots>>,
    watcher: Option<PlacementWatcher>,
    before: Vec<(i32, Snapshot)>,
    rtt: Option<RttProbe>,
    pool: String,
    states: Vec<(i32, bool, bool)>,
    /// The mons failed the placement watcher's last poll: no mon is asked
    /// after the run.
    mons_away: bool,
    /// When `before` was read.
    t0: Instant,
    /// The same on the wall clock (the job's start is told on it).
    t0_wall: std::time::SystemTime,
    sampler: Option<CounterSampler>,
    /// Each OSD's device, read before the run.
    devices: Vec<(i32, crate::device::DeviceInfo)>,
    /// `--op-history`: the raised histories and their sampler.
    op_history: Option<(OpHistory, HistorySampler)>,
    /// The CPU of the pool's OSDs that run on this host.
    cpu: Option<CpuWatch>,
}

impl Probes {
    /// Probes the pool before a job. Failures (missing caps, an old
    /// release's output shape) become warnings: the benchmark itself goes on.
    pub fn before(rados: &Rados, pool: &str, enabled: bool, warnings: &mut Vec<String>) -> Probes {
        let rados = rados.telemetry();
        if !enabled {
            return Probes {
                slots: None,
                watcher: None,
                before: Vec::new(),
                rtt: None,
                pool: pool.to_string(),
                states: Vec::new(),
                mons_away: false,
                t0: Instant::now(),
                t0_wall: std::time::SystemTime::now(),
                sampler: None,
                devices: Vec::new(),
                op_history: None,
                cpu: None,
            };
        }
        let mut rtt = None;
        let slots = match cluster::cluster_map(rados, pool) {
            Ok((p, addrs)) => {
                let serving = p.osds();
                let pick = |v: Vec<(i32, std::net::SocketAddr)>| {
                    v.into_iter()
                        .filter(|(o, _)| serving.contains(o))
                        .collect::<Vec<_>>()
                };
                rtt = Some(RttProbe::start(
                    pick(addrs.public),
                    pick(addrs.back),
                    Duration::from_secs(1),
                    Duration::from_secs(1),
                ));
                Some(Arc::new(OsdSlots::new(p)))
            }
            Err(e) => {
                warnings.push(format!(
                    "no per-OSD view: {} cannot read the PG map ({e}); it needs mon 'allow r' \
                     and mgr 'allow r'",
                    rados.entity()
                ));
                None
            }
        };
        let mut cpu = slots.as_ref().map(|s| CpuWatch::find(rados, s.osds()));
        let (t0, t0_wall) = (Instant::now(), std::time::SystemTime::now());
        let before = match &slots {
            Some(s) => match cluster::perf_dumps(rados, s.osds()) {
                Ok(v) => v,
                Err(e) => {
                    warnings.push(format!(
                        "no OSD counters: `perf dump` as {} failed ({e}), so the split names \
                         the public network only (the OSD's queue, its own time and the \
                         replication stay unattributed); it needs osd 'allow *' (or pass \
                         --telemetry-id with such an identity)",
                        rados.entity()
                    ));
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        if let Some(c) = cpu.as_mut() {
            c.counters_started();
        }
        let watcher = slots.as_ref().map(|s| {
            PlacementWatcher::start(
                rados.clone(),
                pool.to_string(),
                Arc::clone(s),
                PLACEMENT_POLL,
            )
        });
        let devices = match (&slots, cluster::osd_devices(rados)) {
            (None, _) => Vec::new(),
            (Some(_), Ok(d)) => d,
            (Some(_), Err(e)) => {
                warnings.push(format!(
                    "no drive identity per OSD: `osd metadata` as {} failed ({e}); it needs mon 'allow r'",
                    rados.entity()
                ));
                Vec::new()
            }
        };
        Probes {
            slots,
            watcher,
            before,
            rtt,
            pool: pool.to_string(),
            states: cluster::osd_states(rados).unwrap_or_default(),
            mons_away: false,
            t0,
            t0_wall,
            sampler: None,
            devices,
            op_history: None,
            cpu,
        }
    }

    /// The job's clock for the OSDs' CPU over the measured window (the
    /// job's start plus `ramp` to its end, [`Probes::job_ended`]).
    pub fn cpu_clock(&mut self, ramp: Duration) -> crate::progress::JobClock {
        self.cpu
            .as_mut()
            .map_or_else(crate::progress::JobClock::default, |c| c.clock(ramp))
    }

    /// The job has ended: the OSDs' CPU over the measured window is read.
    pub fn job_ended(&mut self) {
        if let Some(c) = self.cpu.as_mut() {
            c.job_ended();
        }
    }

    /// `--op-history N`: raises the history of the pool's OSDs to `size`
    /// and samples this run's own ops from it until [`Probes::after`]. A
    /// failure (caps) is a warning; the benchmark goes on with the counters.
    pub fn sample_ops(&mut self, rados: &Rados, size: Option<u32>, warnings: &mut Vec<String>) {
        let (Some(size), Some(slots)) = (size, &self.slots) else {
            return;
        };
        let client = format!("client.{}", rados.instance_id());
        let telemetry = rados.telemetry();
        let osds = slots.placement().osds();
        match OpHistory::raise(telemetry, &osds, size) {
            Ok(guard) => {
                let pool = slots.placement().pool;
                let sampler = HistorySampler::start(telemetry.clone(), osds, client, pool, size);
                self.op_history = Some((guard, sampler));
            }
            Err(e) => warnings.push(format!(
                "no per-op evidence: raising the OSDs' op history as {} failed: {e}",
                telemetry.entity()
            )),
        }
    }

    /// Samples the OSDs' counters every `interval` until [`Probes::after`]
    /// (the counter timelines); zero: only before and after.
    pub fn sample_counters(&mut self, rados: &Rados, interval: Duration) {
        if interval.is_zero() || self.before.is_empty() {
            return;
        }
        let cpu = self.cpu.as_ref().map_or((Vec::new(), 100), CpuWatch::seed);
        self.sampler = Some(CounterSampler::start(
            rados.telemetry().clone(),
            self.before.clone(),
            self.t0,
            interval,
            cpu,
        ));
    }

    /// Puts the counter timelines of `osds` on the run's clock: seconds
    /// from `start`, where the job's own timeline begins (the first
    /// interval began just before it, when the counters were first read).
    pub fn to_run_clock(&self, osds: &mut [OsdReport], start: std::time::SystemTime) {
        let shift = match start.duration_since(self.t0_wall) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        };
        for s in osds.iter_mut().flat_map(|o| o.timeline.iter_mut()) {
            s.t_s -= shift;
        }
    }

    /// Stops the RTT probe and reads the OSDs' heartbeat round trips.
    pub fn network(&mut self, rados: &Rados) -> Option<NetworkReport> {
        let rados = rados.telemetry();
        let rows = self.rtt.take()?.finish();
        let mut heartbeat = Vec::new();
        for (osd, _) in &self.before {
            if let Ok(h) = cluster::osd_network(rados, *osd) {
                heartbeat.extend(h);
            }
        }
        Some(NetworkReport {
            client_rtt: rows.front,
            back_rtt: rows.back,
            heartbeat,
        })
    }

    /// Probes again after the job and builds the per-OSD reports.
    pub fn after(
        &mut self,
        rados: &Rados,
        out: Option<&JobOutcome>,
        ramp_end: Option<std::time::SystemTime>,
        warnings: &mut Vec<String>,
    ) -> Vec<OsdReport> {
        let rados = rados.telemetry();
        let evidence = self.op_evidence(ramp_end, warnings);
        let mut mons_away = false;
        if let Some(w) = self.watcher.take() {
            let (w, away) = w.finish();
            warnings.extend(w);
            mons_away = away;
            self.mons_away = away;
        }
        let Some(slots) = &self.slots else {
            return Vec::new();
        };
        warnings.extend(self.placement_change(rados, mons_away));
        let mut after = Vec::new();
        if !self.before.is_empty() {
            let osds: Vec<i32> = self.before.iter().map(|(o, _)| *o).collect();
            match cluster::perf_dumps(rados, &osds) {
                Ok(v) => after = v,
                Err(e) => warnings.push(format!("no OSD counters after the run: {e}")),
            }
        }
        let t_end = Instant::now();
        let mut cpu = self
            .cpu
            .as_mut()
            .map(|c| c.finish(slots.osds()))
            .unwrap_or_default();
        let mgr_perf = match cluster::osd_perf(rados) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("no `osd perf` (mgr): {e}; it needs mgr 'allow r'"));
                Vec::new()
            }
        };
        let end_ticks = self
            .cpu
            .as_ref()
            .map(CpuWatch::end_ticks)
            .unwrap_or_default();
        let mut timelines = self
            .sampler
            .take()
            .map(|s| s.finish(&after, &end_ticks, t_end))
            .unwrap_or_default();
        slots
            .osds()
            .iter()
            .enumerate()
            .map(|(slot, &osd)| {
                let client = OpKind::ALL
                    .iter()
                    .filter_map(|k| {
                        let ks = out?.osd_kind(slot, *k)?;
                        (ks.ops > 0).then(|| {
                            let s = ks.latency.summary();
                            OsdClientRow {
                                op: k.as_str().into(),
                                ops: ks.ops,
                                mean_ns: s.mean,
                                p99_ns: s.p99,
                                histogram: Some(crate::stats::encode_histogram(
                                    ks.latency.histogram(),
                                )),
                                attribution: None,
                                evidence: evidence
                                    .iter()
                                    .find(|(o, kind, _)| *o == osd && *kind == k.as_str())
                                    .map(|(_, _, e)| e.clone()),
                            }
                        })
                    })
                    .collect();
                let counters = self
                    .before
                    .iter()
                    .find(|(o, _)| *o == osd)
                    .zip(after.iter().find(|(o, _)| *o == osd))
                    .map(|((_, b), (_, a))| counters::delta(osd, b, a));
                OsdReport {
                    osd,
                    client,
                    counters,
                    timeline: timelines
                        .iter_mut()
                        .find(|(o, _)| *o == osd)
                        .map(|(_, t)| std::mem::take(t))
                        .unwrap_or_default(),
                    mgr_perf: mgr_perf.iter().find(|m| m.osd == osd).cloned(),
                    device: self
                        .devices
                        .iter()
                        .find(|(o, _)| *o == osd)
                        .map(|(_, d)| d.clone()),
                    replica_sets: slots.placement().replica_sets(osd),
                    cpu: cpu
                        .iter_mut()
                        .find(|(o, _)| *o == osd)
                        .map(|(_, c)| std::mem::take(c)),
                }
            })
            .collect()
    }

    /// Stops the op-history sampler (after its last poll), puts the OSDs'
    /// settings back, and splits this run's ops received from
    /// `ramp_end` on (the ramp's ops are left out).
    fn op_evidence(
        &mut self,
        ramp_end: Option<std::time::SystemTime>,
        warnings: &mut Vec<String>,
    ) -> Vec<(i32, &'static str, OpEvidence)> {
        let Some((guard, sampler)) = self.op_history.take() else {
            return Vec::new();
        };
        let gathered = sampler.finish();
        warnings.extend(guard.restore());
        warnings.extend(gathered.warnings);
        if gathered.capped {
            warnings.push(
                "per-op evidence: the record limit was reached; the split uses the ops \
                 recorded until then"
                    .into(),
            );
        }
        let unix = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        let from = ramp_end.map_or(0.0, unix);
        let mut ev = historic::evidence(&gathered.stamps, from, f64::INFINITY);
        for (osd, _, e) in &mut ev {
            e.history_full = gathered.full.contains(osd);
        }
        ev
    }

    /// The OSDs whose up/in state differs from before the run, as one
    /// warning. Asked once everything the run did to the cluster is undone
    /// (`--disrupt`'s OSD back in and up): read while the tool's own
    /// restore was still on its way, an OSD put back in was reported out.
    pub fn osd_state_change(&self, rados: &Rados) -> Option<String> {
        if self.mons_away || self.states.is_empty() || self.slots.is_none() {
            return None;
        }
        let states = cluster::osd_states(rados.telemetry()).ok()?;
        let changed: Vec<String> = states
            .iter()
            .filter(|s| !self.states.contains(s))
            .map(|(id, up, inn)| {
                format!(
                    "osd.{id} now {} and {}",
                    if *up { "up" } else { "down" },
                    if *inn { "in" } else { "out" }
                )
            })
            .collect();
        (!changed.is_empty())
            .then(|| format!("OSDs changed state during the run: {}", changed.join(", ")))
    }

    /// What the reader must know of placement changes during the run: the
    /// re-reads the watcher made and a change the
    /// watcher did not see in time (in the run's last poll period).
    /// With `mons_away` (they failed the watcher's last poll) no mon is asked.
    fn placement_change(&self, rados: &Rados, mons_away: bool) -> Vec<String> {
        let mut out = Vec::new();
        let Some(slots) = self.slots.as_ref() else {
            return out;
        };
        let start = slots.placement();
        let refreshes = slots.refreshes();
        if let Some(last) = refreshes.last() {
            let moved: u32 = refreshes.iter().map(|r| r.moved).sum();
            let outside: u32 = refreshes.iter().map(|r| r.outside).max().unwrap_or(0);
            out.push(format!(
                "the placement changed during the run: re-read {} time(s) (osdmap epoch {} -> {}, \
                 pg_num {} -> {}, {moved} PG primary change(s)); each op is tagged with the primary \
                 of the placement current when it was issued{}",
                refreshes.len(),
                start.epoch,
                last.epoch,
                start.pg_num,
                last.pg_num,
                if outside > 0 {
                    format!(
                        "; {outside} PG(s) moved to OSDs that did not serve the pool at the start: \
                         their ops are in the job's figures, in no per-OSD row"
                    )
                } else {
                    String::new()
                }
            ));
        }
        // One bounded mon command; when the mons do not answer, skip the rest
        // (each further command would wait out the op timeout too).
        if mons_away {
            return out;
        }
        let Ok(now) = cluster::placement_now(rados, &self.pool, start.pool) else {
            return out;
        };
        let cur = slots.current();
        let moved = (0..now.pg_num)
            .filter(|pg| {
                cur.primary_of_pg(placement::stable_mod(*pg, cur.pg_num)) != now.primary_of_pg(*pg)
            })
            .count();
        if moved > 0 || now.pg_num != cur.pg_num {
            out.push(format!(
                "the placement changed at the end of the run, after its last re-read (osdmap epoch \
                 {} -> {}, pg_num {} -> {}, {moved} PG(s) with another primary): the run's last ops \
                 may be tagged with their old primary",
                cur.epoch, now.epoch, cur.pg_num, now.pg_num
            ));
        }
        out
    }

    /// Joins the job's slowest ops with the OSDs' own records of their
    /// slowest ops (`dump_historic_ops_by_duration`).
    pub fn tail(
        &self,
        rados: &Rados,
        out: Option<&JobOutcome>,
        warnings: &mut Vec<String>,
    ) -> Vec<crate::result::TailOp> {
        let rados = rados.telemetry();
        let (Some(slots), Some(out)) = (&self.slots, out) else {
            return Vec::new();
        };
        if self.before.is_empty() || out.slowest.is_empty() {
            return Vec::new();
        }
        let mut osd_ops = Vec::new();
        for osd in slots.osds() {
            match cluster::historic_ops(rados, *osd) {
                Ok(v) => osd_ops.extend(v),
                Err(e) => {
                    warnings.push(format!(
                        "no OSD record of the slowest ops of osd.{osd}: {e}"
                    ));
                }
            }
        }
        let unix = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        out.slowest
            .iter()
            .filter_map(|s| {
                let (object, offset) = s.object.clone()?;
                let c = ClientSlowOp {
                    op: s.kind.as_str().into(),
                    object,
                    offset,
                    latency_ns: s.latency_ns,
                    submitted: unix(s.submitted),
                };
                // Same host clocks here; 50 ms of slack for another host's.
                let split = join(&c, &osd_ops, 0.05).and_then(|h| h.split());
                Some(crate::result::TailOp {
                    outside_osd_ns: split.as_ref().map(|x| c.latency_ns as f64 - x.total_ns),
                    op: c.op,
                    object: c.object,
                    offset: c.offset,
                    latency_ns: c.latency_ns,
                    submitted_unix: c.submitted,
                    osd: split,
                })
            })
            .collect()
    }

    /// The placement summary for the result.
    pub fn placement_info(&self) -> Option<PlacementInfo> {
        self.slots.as_ref().map(|s| PlacementInfo {
            pool_id: s.placement().pool,
            pg_num: s.placement().pg_num,
            epoch: s.placement().epoch,
            size: s.placement().acting.iter().map(Vec::len).max().unwrap_or(0) as u32,
            refreshes: s.refreshes(),
        })
    }
}

/// How often the placement watcher polls the osdmap epoch.
const PLACEMENT_POLL: Duration = Duration::from_secs(1);
