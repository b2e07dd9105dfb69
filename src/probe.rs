//! Probes: what cephbench asks the cluster, off the I/O path — the pool's
//! PG placement (osd dump + pg dump) and the OSDs' perf counters.
#![forbid(unsafe_code)]

use serde_json::Value;

use crate::ceph::{CephError, Rados};
use crate::counters::{self, CounterSample, Snapshot};
use crate::network::{self, HeartbeatRtt};
use crate::placement::{self, PoolPlacement, ShapeError};
use crate::result::{OsdMemory, PoolSettings};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A probe that failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The command failed (e.g. missing caps).
    #[error(transparent)]
    Ceph(#[from] CephError),
    /// The answer was not JSON of the expected shape.
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

fn json(out: &[u8], what: &'static str) -> Result<Value, ShapeError> {
    serde_json::from_slice(out).map_err(|e| ShapeError {
        what,
        why: format!("not JSON: {e}"),
    })
}

/// Where pool `pool`'s PGs live now: `osd dump` (mon) for pg_num and the
/// epoch, `pg dump pgs_brief` (mgr) for the acting sets.
pub fn placement(rados: &Rados, pool: &str) -> Result<PoolPlacement, ProbeError> {
    cluster_map(rados, pool).map(|(p, _)| p)
}

/// The placement and every OSD's public address, from one `osd dump`.
pub fn cluster_map(
    rados: &Rados,
    pool: &str,
) -> Result<(PoolPlacement, Vec<(i32, SocketAddr)>), ProbeError> {
    let id = rados.pool_id(pool)?;
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    let dump = json(&dump.out, "osd dump")?;
    let (pg_num, epoch) = placement::parse_osd_dump_pool(&dump, id)?;
    let addrs = network::parse_osd_addrs(&dump)?;
    let pgs = rados
        .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#)?;
    let p = placement::parse_pgs_brief(&json(&pgs.out, "pg dump pgs_brief")?, id, pg_num, epoch)?;
    Ok((p, addrs))
}

/// The osdmap epoch now (`osd stat`, mon: a small answer, cheap to poll).
pub fn osd_epoch(rados: &Rados) -> Result<u64, ProbeError> {
    let out = rados.mon_command(r#"{"prefix":"osd stat","format":"json"}"#)?;
    Ok(placement::parse_osd_stat_epoch(&json(
        &out.out, "osd stat",
    )?)?)
}

/// Pools with at most this many PGs are re-read PG by PG from the mons
/// (`pg map`, the osdmap's own answer); larger ones from the mgr's
/// `pg dump pgs_brief`, which follows the OSDs' stats reports (seconds late).
pub const PG_MAP_LIMIT: u32 = 1024;

/// Re-reads pool `pool` (id `id`)'s placement during a run: pg_num from the
/// mons, then each PG's acting set from `pg map` (the mon computes it from
/// the osdmap: current the moment the epoch changes, needs only mon 'allow
/// r'), or for pools over [`PG_MAP_LIMIT`] PGs from `pg dump pgs_brief`.
/// The placement's epoch is the oldest any answer was computed at.
pub fn placement_now(rados: &Rados, pool: &str, id: i64) -> Result<PoolPlacement, ProbeError> {
    let q = serde_json::json!({"prefix": "osd pool get", "pool": pool, "var": "pg_num", "format": "json"});
    let pg_num = placement::parse_pool_pg_num(&json(
        &rados.mon_command(&q.to_string())?.out,
        "osd pool get pg_num",
    )?)?;
    if pg_num > PG_MAP_LIMIT {
        let epoch = osd_epoch(rados)?;
        let pgs = rados
            .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#)?;
        return Ok(placement::parse_pgs_brief(
            &json(&pgs.out, "pg dump pgs_brief")?,
            id,
            pg_num,
            epoch,
        )?);
    }
    let mut acting = Vec::with_capacity(pg_num as usize);
    let mut epoch = u64::MAX;
    for seed in 0..pg_num {
        let q = format!(r#"{{"prefix":"pg map","pgid":"{id}.{seed:x}","format":"json"}}"#);
        let (e, set) = placement::parse_pg_map(&json(&rados.mon_command(&q)?.out, "pg map")?)?;
        epoch = epoch.min(e);
        acting.push(set);
    }
    Ok(PoolPlacement {
        pool: id,
        pg_num,
        acting,
        epoch,
    })
}

/// A polling thread's wait for its next turn: sleeps until `next` unless
/// `stop` is raised (then `false`), and moves `next` one `period` on, never
/// into the past. The stop flag is checked before every poll, so a poll
/// slower than the period (a mon command waiting out the op timeout while
/// the mons are away) delays the stop by one poll, not forever.
fn wait_turn(stop: &AtomicBool, next: &mut Instant, period: Duration) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= *next {
            break;
        }
        std::thread::sleep(Duration::from_millis(20).min(*next - now));
    }
    *next = (*next + period).max(Instant::now());
    true
}

/// Watches the osdmap epoch (once a `period`, off the I/O path) and, when
/// it changes, re-reads the pool's placement and installs it in the slots,
/// so ops issued after a change are tagged with their new primary.
pub struct PlacementWatcher {
    stop: Arc<AtomicBool>,
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
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
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
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for PlacementWatcher {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// Every OSD's (id, up, in) now, from `osd dump`.
pub fn osd_states(rados: &Rados) -> Result<Vec<(i32, bool, bool)>, ProbeError> {
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    Ok(placement::parse_osd_states(&json(&dump.out, "osd dump")?)?)
}

/// Every OSD's data device (`osd metadata`) with its CRUSH class (`osd tree`).
pub fn osd_devices(rados: &Rados) -> Result<Vec<(i32, crate::device::DeviceInfo)>, ProbeError> {
    let md = rados.mon_command(r#"{"prefix":"osd metadata","format":"json"}"#)?;
    let tree = rados.mon_command(r#"{"prefix":"osd tree","format":"json"}"#)?;
    let classes = crate::device::parse_osd_classes(&json(&tree.out, "osd tree")?);
    Ok(crate::device::parse_devices(
        &json(&md.out, "osd metadata")?,
        &classes,
    ))
}

/// The heartbeat round trips one OSD reports to its peers (all of them:
/// threshold 0).
pub fn osd_network(rados: &Rados, osd: i32) -> Result<Vec<HeartbeatRtt>, ProbeError> {
    let out = rados.osd_command(osd, r#"{"prefix":"dump_osd_network","value":0}"#)?;
    Ok(network::parse_osd_network(&json(
        &out.out,
        "dump_osd_network",
    )?)?)
}

/// The slowest client ops one OSD kept (`dump_historic_ops_by_duration`:
/// its `osd_op_history_size` slowest of the last `osd_op_history_duration`
/// seconds; `dump_historic_ops` holds the same set, by arrival).
pub fn historic_ops(
    rados: &Rados,
    osd: i32,
) -> Result<Vec<crate::historic::HistoricOp>, ProbeError> {
    let out = rados.osd_command(osd, r#"{"prefix":"dump_historic_ops_by_duration"}"#)?;
    Ok(crate::historic::parse_historic_ops(
        osd,
        &json(&out.out, "dump_historic_ops_by_duration")?,
    )?)
}

/// Every OSD's row of `osd perf` (mgr; needs mgr 'allow r').
pub fn osd_perf(rados: &Rados) -> Result<Vec<counters::MgrOsdPerf>, ProbeError> {
    let out = rados.mgr_command(r#"{"prefix":"osd perf","format":"json"}"#)?;
    Ok(counters::parse_osd_perf(&json(&out.out, "osd perf")?)?)
}

/// The perf-counter sections ([`counters::SECTIONS`]) asked of an OSD one
/// at a time (`perf dump <logger>`), instead of its whole dump: the OSD
/// serialises and the client parses only what is read, during the run too.
const PERF_DUMP_SECTION: &str = r#"{"prefix":"perf dump","logger":"SECTION"}"#;

/// One OSD's perf counters now. Its `osd` section must come back; a
/// missing `bluestore` section (memstore, filestore) leaves those counters
/// out.
pub fn perf_dump(rados: &Rados, osd: i32) -> Result<Snapshot, ProbeError> {
    let mut doc = serde_json::Map::new();
    for (i, section) in counters::SECTIONS.iter().enumerate() {
        let cmd = PERF_DUMP_SECTION.replace("SECTION", section);
        match rados.osd_command(osd, &cmd) {
            Ok(out) => {
                if let Value::Object(m) = json(&out.out, "perf dump")? {
                    doc.extend(m);
                }
            }
            Err(e) if i == 0 => return Err(e.into()),
            Err(_) => {}
        }
    }
    Ok(counters::parse_perf_dump(&Value::Object(doc))?)
}

/// Snapshots of several OSDs; the first failure is returned with the OSD named.
pub fn perf_dumps(rados: &Rados, osds: &[i32]) -> Result<Vec<(i32, Snapshot)>, ProbeError> {
    osds.iter()
        .map(|o| perf_dump(rados, *o).map(|s| (*o, s)))
        .collect()
}

/// Runs an OSD's own write benchmark (`ceph tell osd.N bench BYTES BS`,
/// see [`crate::osdbench`]): blocks until the OSD answers, bounded by the
/// op timeout.
pub fn osd_bench(
    rados: &Rados,
    osd: i32,
    bytes: u64,
    block_size: u64,
) -> Result<crate::osdbench::BenchFigures, ProbeError> {
    let q = serde_json::json!({"prefix": "bench", "count": bytes, "size": block_size, "format": "json"});
    let out = rados.osd_command(osd, &q.to_string())?;
    Ok(crate::osdbench::parse_bench(&json(&out.out, "osd bench")?)?)
}

/// The default `--counter-interval`.
pub const DEFAULT_COUNTER_INTERVAL: Duration = Duration::from_secs(5);

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
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Sampled>>,
}

/// What a [`CounterSampler`] gathered: per OSD, its timeline and its last
/// snapshot (with the time it was taken).
type Sampled = Vec<(i32, Vec<CounterSample>, Option<(Instant, Snapshot)>)>;

impl CounterSampler {
    /// Starts sampling from the snapshots `first`, taken at `t0`.
    pub fn start(
        rados: Rados,
        first: Vec<(i32, Snapshot)>,
        t0: Instant,
        interval: Duration,
    ) -> CounterSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("counter-sampler".into())
            .spawn(move || {
                let mut state: Sampled = first
                    .into_iter()
                    .map(|(o, s)| (o, Vec::new(), Some((t0, s))))
                    .collect();
                let mut next = t0 + interval;
                loop {
                    if !wait_turn(&flag, &mut next, interval) {
                        return state;
                    }
                    for (osd, timeline, last) in state.iter_mut() {
                        let Some((t_prev, prev)) = last.take() else {
                            continue; // failed before: left out
                        };
                        if let Ok(now) = perf_dump(&rados, *osd) {
                            let t = Instant::now();
                            timeline.push(CounterSample {
                                t_s: t.duration_since(t0).as_secs_f64(),
                                interval_s: t.duration_since(t_prev).as_secs_f64(),
                                counters: counters::delta(*osd, &prev, &now),
                            });
                            *last = Some((t, now));
                        }
                    }
                }
            })
            .ok();
        CounterSampler { t0, stop, thread }
    }

    /// Stops the thread; closes each OSD's timeline with a last interval
    /// ending at `t_end` with the snapshots `end` (taken after the job),
    /// and returns the timelines.
    pub fn finish(
        mut self,
        end: &[(i32, Snapshot)],
        t_end: Instant,
    ) -> Vec<(i32, Vec<CounterSample>)> {
        let t0 = self.t0;
        let Some(state) = self.stop_and_join() else {
            return Vec::new();
        };
        state
            .into_iter()
            .map(|(osd, mut timeline, last)| {
                if let (Some((t_prev, prev)), Some((_, now))) =
                    (last, end.iter().find(|(o, _)| *o == osd))
                {
                    if t_end > t_prev {
                        timeline.push(CounterSample {
                            t_s: t_end.duration_since(t0).as_secs_f64(),
                            interval_s: t_end.duration_since(t_prev).as_secs_f64(),
                            counters: counters::delta(osd, &prev, now),
                        });
                    }
                }
                (osd, timeline)
            })
            .collect()
    }

    fn stop_and_join(&mut self) -> Option<Sampled> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for CounterSampler {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// The pool's settings (`osd pool get POOL all`), the OSDs and device
/// classes its CRUSH rule draws from (`osd crush rule dump`, `osd crush tree
/// --show-shadow`) and those OSDs' `osd_memory_target` (`config get`).
/// Needs only `mon 'allow r'`. A memory target that cannot be read leaves
/// `memory_held_bytes` null rather than failing.
pub fn pool_settings(rados: &Rados, pool: &str) -> Result<PoolSettings, ProbeError> {
    let q =
        serde_json::json!({"prefix": "osd pool get", "pool": pool, "var": "all", "format": "json"});
    let get = json(&rados.mon_command(&q.to_string())?.out, "osd pool get")?;
    let rules = rados.mon_command(r#"{"prefix":"osd crush rule dump","format":"json"}"#)?;
    let rules = json(&rules.out, "osd crush rule dump")?;
    let tree = rados
        .mon_command(r#"{"prefix":"osd crush tree","shadow":"--show-shadow","format":"json"}"#)?;
    let tree = json(&tree.out, "osd crush tree")?;
    let mut s = parse_pool_settings(&get, &rules, &tree)?;
    let mut mem = Vec::new();
    for &osd in &s.osds {
        match osd_memory_target(rados, osd) {
            Ok(b) => mem.push(OsdMemory {
                osd,
                bytes: b,
                rss_bytes: None,
            }),
            Err(_) => {
                mem.clear();
                break;
            }
        }
    }
    if !mem.is_empty() {
        s.memory_held_bytes = Some(mem.iter().map(|m| m.bytes).sum());
    }
    s.osd_memory_target = mem;
    Ok(s)
}

/// Measures the RAM of the pool's OSDs that run on this host (their
/// processes' resident sets, [`crate::osdmem`]) into `s`: after a run, what
/// they hold under that load. OSDs elsewhere keep `rss_bytes` null, and
/// `memory_measured_bytes` stays null unless every one was measured.
pub fn measure_osd_ram(rados: &Rados, s: &mut PoolSettings) {
    let local = rados
        .mon_command(r#"{"prefix":"osd metadata","format":"json"}"#)
        .ok()
        .and_then(|md| serde_json::from_slice::<Value>(&md.out).ok())
        .map(|md| {
            crate::osdmem::local_osds(
                &md,
                &crate::bench::hostname(),
                std::path::Path::new("/proc"),
            )
        })
        .unwrap_or_default();
    for m in &mut s.osd_memory_target {
        m.rss_bytes = local.iter().find(|l| l.osd == m.osd).map(|l| l.rss_bytes);
    }
    s.memory_measured_bytes = if s.osd_memory_target.is_empty() {
        None
    } else {
        s.osd_memory_target.iter().map(|m| m.rss_bytes).sum()
    };
}

/// `config get osd.N osd_memory_target`, bytes.
pub fn osd_memory_target(rados: &Rados, osd: i32) -> Result<u64, ProbeError> {
    let q = serde_json::json!({"prefix": "config get", "who": format!("osd.{osd}"),
        "key": "osd_memory_target", "format": "json"});
    let out = rados.mon_command(&q.to_string())?;
    parse_config_u64(&out.out).ok_or_else(|| {
        ProbeError::Shape(ShapeError {
            what: "config get",
            why: format!(
                "osd_memory_target is not a number: {}",
                String::from_utf8_lossy(&out.out).trim()
            ),
        })
    })
}

/// A `config get` answer holding a number: JSON number, JSON string or plain text.
pub fn parse_config_u64(out: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(out);
    let t = text.trim().trim_matches('"');
    t.parse::<u64>().ok().or_else(|| {
        serde_json::from_str::<Value>(text.trim())
            .ok()
            .and_then(|v| v.as_u64())
    })
}

fn shape(what: &'static str, why: impl Into<String>) -> ShapeError {
    ShapeError {
        what,
        why: why.into(),
    }
}

/// Builds [`PoolSettings`] (memory left empty) from the JSON of `osd pool get
/// POOL all`, `osd crush rule dump` and `osd crush tree --show-shadow`.
pub fn parse_pool_settings(
    get: &Value,
    rules: &Value,
    tree: &Value,
) -> Result<PoolSettings, ShapeError> {
    const W: &str = "osd pool get";
    let u = |k: &str| -> Result<u64, ShapeError> {
        get.get(k)
            .and_then(Value::as_u64)
            .ok_or_else(|| shape(W, format!("no number '{k}'")))
    };
    let name = get
        .get("pool")
        .and_then(Value::as_str)
        .ok_or_else(|| shape(W, "no 'pool'"))?
        .to_string();
    let rule_name = get
        .get("crush_rule")
        .and_then(Value::as_str)
        .ok_or_else(|| shape(W, "no 'crush_rule'"))?
        .to_string();
    let rule = rules
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|r| r.get("rule_name").and_then(Value::as_str) == Some(&rule_name))
        })
        .ok_or_else(|| shape("osd crush rule dump", format!("no rule '{rule_name}'")))?;
    let nodes = tree
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("osd crush tree", "no 'nodes'"))?;
    let mut osds = Vec::new();
    let mut classes = Vec::new();
    let steps = rule
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("osd crush rule dump", "no 'steps'"))?;
    for step in steps {
        if step.get("op").and_then(Value::as_str) != Some("take") {
            continue;
        }
        let item = step.get("item").and_then(Value::as_i64);
        let mut stack: Vec<i64> = item.into_iter().collect();
        let mut seen = 0;
        while let Some(id) = stack.pop() {
            seen += 1;
            if seen > 100_000 {
                return Err(shape("osd crush tree", "cycle"));
            }
            let Some(n) = nodes
                .iter()
                .find(|n| n.get("id").and_then(Value::as_i64) == Some(id))
            else {
                continue;
            };
            if id >= 0 {
                osds.push(id as i32);
                if let Some(c) = n.get("device_class").and_then(Value::as_str) {
                    classes.push(c.to_string());
                }
            } else if let Some(ch) = n.get("children").and_then(Value::as_array) {
                stack.extend(ch.iter().filter_map(Value::as_i64));
            }
        }
    }
    osds.sort_unstable();
    osds.dedup();
    classes.sort();
    classes.dedup();
    Ok(PoolSettings {
        name,
        id: u("pool_id")? as i64,
        size: u("size")? as u32,
        min_size: u("min_size")? as u32,
        pg_num: u("pg_num")? as u32,
        crush_rule: rule_name,
        device_classes: classes,
        osds,
        osd_memory_target: Vec::new(),
        memory_held_bytes: None,
        memory_measured_bytes: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_settings_follow_the_rule_into_the_shadow_tree() {
        let get = serde_json::json!({"pool":"fast","pool_id":4,"size":3,"min_size":2,"pg_num":32,
            "crush_rule":"ssd_rule"});
        let rules = serde_json::json!([
            {"rule_id":0,"rule_name":"replicated_rule","steps":[{"op":"take","item":-1,"item_name":"default"}]},
            {"rule_id":1,"rule_name":"ssd_rule","steps":[{"op":"take","item":-3,"item_name":"default~ssd"},
              {"op":"chooseleaf_firstn","num":0,"type":"host"},{"op":"emit"}]}]);
        let tree = serde_json::json!({"nodes":[
            {"id":-1,"name":"default","type":"root","children":[-2]},
            {"id":-2,"name":"h0","type":"host","children":[0,1]},
            {"id":-3,"name":"default~ssd","device_class":"ssd","type":"root","children":[-4]},
            {"id":-4,"name":"h0~ssd","device_class":"ssd","type":"host","children":[1]},
            {"id":0,"name":"osd.0","device_class":"hdd","type":"osd"},
            {"id":1,"name":"osd.1","device_class":"ssd","type":"osd"}]});
        let s = parse_pool_settings(&get, &rules, &tree).unwrap();
        assert_eq!((s.size, s.min_size, s.pg_num, s.id), (3, 2, 32, 4));
        assert_eq!(s.crush_rule, "ssd_rule");
        assert_eq!(s.osds, vec![1]);
        assert_eq!(s.device_classes, vec!["ssd".to_string()]);
        let get = serde_json::json!({"pool":"all","pool_id":1,"size":1,"min_size":1,"pg_num":8,
            "crush_rule":"replicated_rule"});
        let s = parse_pool_settings(&get, &rules, &tree).unwrap();
        assert_eq!(s.osds, vec![0, 1]);
        assert_eq!(s.device_classes, vec!["hdd".to_string(), "ssd".to_string()]);
        let bad = serde_json::json!({"pool":"x","crush_rule":"nope"});
        assert!(parse_pool_settings(&bad, &rules, &tree).is_err());
    }

    #[test]
    fn config_numbers_in_every_shape() {
        assert_eq!(parse_config_u64(b"4294967296\n"), Some(4294967296));
        assert_eq!(parse_config_u64(b"\"8589934592\""), Some(8589934592));
        assert_eq!(parse_config_u64(b"4G"), None);
    }
}
