//! The pollers that run beside a job, each on a thread of its own (off the
//! I/O path): the placement watcher (re-reads the placement when the osdmap
//! changes) and the counter sampler (the OSDs' counter timelines).
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::cluster::{osd_epoch, perf_dump, placement_now};
use super::counters::{self, Snapshot};
use super::osdcpu::{process_ticks, OsdProcess};
use super::stop::StopSignal;
use crate::ceph::Rados;
use crate::placement;
use crate::result::counters::CounterSample;

/// A polling thread's wait for its next turn: sleeps until `next` unless
/// `stop` is raised (then `false`), and moves `next` one `period` on, never
/// into the past. The signal is looked at before every poll, so a poll
/// slower than the period (a mon command waiting out the op timeout while
/// the mons are away) delays the stop by one poll, not forever.
pub(super) fn wait_turn(stop: &StopSignal, next: &mut Instant, period: Duration) -> bool {
    if stop.wait_until(*next) {
        return false;
    }
    *next = (*next + period).max(Instant::now());
    true
}

/// Watches the osdmap epoch (once a `period`, off the I/O path) and, when
/// it changes, re-reads the pool's placement and installs it in the slots,
/// so ops issued after a change are tagged with their new primary.
pub struct PlacementWatcher {
    stop: StopSignal,
    /// Whether the mons failed the last poll.
    mons_away: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<String>>>,
}

impl PlacementWatcher {
    /// Starts watching for `slots`, made from a placement of pool `pool`.
    pub fn start(
        rados: Rados,
        pool: String,
        slots: Arc<placement::OsdSlots>,
        period: Duration,
    ) -> PlacementWatcher {
        let stop = StopSignal::new();
        let flag = stop.clone();
        let mons_away = Arc::new(AtomicBool::new(false));
        let away = Arc::clone(&mons_away);
        let thread = std::thread::Builder::new()
            .name("placement-watch".into())
            .spawn(move || {
                let mut errors = Vec::new();
                let id = slots.placement().pool;
                let mut seen = slots.placement().epoch;
                let mut next = Instant::now() + period;
                loop {
                    if !wait_turn(&flag, &mut next, period) {
                        return errors;
                    }
                    let epoch = osd_epoch(&rados);
                    away.store(epoch.is_err(), Ordering::Relaxed);
                    let Ok(epoch) = epoch else {
                        continue; // the mons are away: try again next period
                    };
                    if epoch == seen {
                        continue;
                    }
                    match placement_now(&rados, &pool, id) {
                        Ok(p) => {
                            seen = p.epoch;
                            slots.install(p);
                        }
                        Err(e) if errors.is_empty() => {
                            errors.push(format!(
                                "the osdmap changed (epoch {epoch}) but re-reading the placement failed ({e}); \
                                 the per-OSD figures use the placement read before"
                            ));
                        }
                        Err(_) => {}
                    }
                }
            })
            .ok();
        PlacementWatcher {
            stop,
            mons_away,
            thread,
        }
    }

    /// Stops the thread; returns what went wrong, as warnings, and whether
    /// the mons failed its last poll (then further mon commands would only
    /// wait out the op timeout).
    pub fn finish(mut self) -> (Vec<String>, bool) {
        let warnings = self.stop_and_join().unwrap_or_default();
        (warnings, self.mons_away.load(Ordering::Relaxed))
    }

    fn stop_and_join(&mut self) -> Option<Vec<String>> {
        self.stop.raise();
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for PlacementWatcher {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// Seconds of CPU between two readings of clock ticks (`None` if either is
/// missing or the second is lower: the process was replaced).
fn cpu_between(a: Option<u64>, b: Option<u64>, hz: f64) -> Option<f64> {
    Some(b?.checked_sub(a?)? as f64 / hz)
}

/// The default `--counter-interval`.
pub const DEFAULT_COUNTER_INTERVAL: Duration = Duration::from_secs(2);

/// [`DEFAULT_COUNTER_INTERVAL`], for serde.
pub fn default_counter_interval() -> Duration {
    DEFAULT_COUNTER_INTERVAL
}

/// Samples the OSDs' perf counters every `interval` on a thread of its own
/// (off the I/O path), for the counter timelines. An OSD whose `perf dump`
/// fails is left out from then on, so a dead OSD costs one op timeout, not
/// one per interval.
pub struct CounterSampler {
    t0: Instant,
    /// Clock ticks per second of the CPU times.
    hz: f64,
    stop: StopSignal,
    thread: Option<JoinHandle<Sampled>>,
}

/// What a [`CounterSampler`] gathered: per OSD, its timeline and its last
/// snapshot (with the time it was taken, and its process's CPU ticks then).
type Sampled = Vec<(i32, Vec<CounterSample>, Option<Last>)>;

/// One OSD's last sample: when, its counters, its process's CPU ticks.
type Last = (Instant, Snapshot, Option<u64>);

/// The OSD processes found on this host (each with its CPU ticks at the
/// first snapshot) and the clock ticks per second: the CPU per interval.
pub type CpuSeed = (Vec<(OsdProcess, Option<u64>)>, u64);

impl CounterSampler {
    /// Starts sampling from the snapshots `first`, taken at `t0`.
    pub fn start(
        rados: Rados,
        first: Vec<(i32, Snapshot)>,
        t0: Instant,
        interval: Duration,
        cpu: CpuSeed,
    ) -> CounterSampler {
        let stop = StopSignal::new();
        let flag = stop.clone();
        let (procs, hz) = cpu;
        let hz = hz as f64;
        let thread = std::thread::Builder::new()
            .name("counter-sampler".into())
            .spawn(move || {
                let proc_of = |osd: i32| procs.iter().find(|(p, _)| p.osd == osd);
                let mut state: Sampled = first
                    .into_iter()
                    .map(|(o, s)| {
                        let ticks = proc_of(o).and_then(|(_, t)| *t);
                        (o, Vec::new(), Some((t0, s, ticks)))
                    })
                    .collect();
                let mut next = t0 + interval;
                loop {
                    if !wait_turn(&flag, &mut next, interval) {
                        return state;
                    }
                    for (osd, timeline, last) in state.iter_mut() {
                        let Some((t_prev, prev, ticks_prev)) = last.take() else {
                            continue; // failed before: left out
                        };
                        if let Ok(now) = perf_dump(&rados, *osd) {
                            let t = Instant::now();
                            let ticks = proc_of(*osd).and_then(|(p, _)| process_ticks(p));
                            timeline.push(CounterSample {
                                t_s: t.duration_since(t0).as_secs_f64(),
                                interval_s: t.duration_since(t_prev).as_secs_f64(),
                                cpu_s: cpu_between(ticks_prev, ticks, hz),
                                counters: counters::delta(*osd, &prev, &now),
                            });
                            *last = Some((t, now, ticks));
                        }
                    }
                }
            })
            .ok();
        CounterSampler {
            t0,
            hz,
            stop,
            thread,
        }
    }

    /// Stops the thread; closes each OSD's timeline with a last interval
    /// ending at `t_end` with the snapshots `end` (taken after the job) and
    /// the CPU ticks `end_ticks` read with them, and returns the timelines.
    pub fn finish(
        mut self,
        end: &[(i32, Snapshot)],
        end_ticks: &[(i32, Option<u64>)],
        t_end: Instant,
    ) -> Vec<(i32, Vec<CounterSample>)> {
        let (t0, hz) = (self.t0, self.hz);
        let Some(state) = self.stop_and_join() else {
            return Vec::new();
        };
        state
            .into_iter()
            .map(|(osd, mut timeline, last)| {
                if let (Some((t_prev, prev, ticks_prev)), Some((_, now))) =
                    (last, end.iter().find(|(o, _)| *o == osd))
                {
                    if t_end > t_prev {
                        let ticks = end_ticks.iter().find(|(o, _)| *o == osd).and_then(|x| x.1);
                        timeline.push(CounterSample {
                            t_s: t_end.duration_since(t0).as_secs_f64(),
                            interval_s: t_end.duration_since(t_prev).as_secs_f64(),
                            cpu_s: cpu_between(ticks_prev, ticks, hz),
                            counters: counters::delta(osd, &prev, now),
                        });
                    }
                }
                (osd, timeline)
            })
            .collect()
    }

    fn stop_and_join(&mut self) -> Option<Sampled> {
        self.stop.raise();
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for CounterSampler {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}
