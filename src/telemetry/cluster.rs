//! What cephbench asks the cluster, off the I/O path: the pool's PG
//! placement (osd dump + pg dump), the OSDs' states, devices and perf
//! counters, their heartbeat round trips and slowest ops, the pool's
//! settings and the OSDs' memory. One bounded mon, mgr or OSD command each;
//! the answers are parsed by [`super::parse`] and the domain files beside it.
#![forbid(unsafe_code)]

use std::net::SocketAddr;

use serde_json::Value;

use super::counters::{self, Snapshot};
use super::historic::{self, HistoricOp};
use super::network;
use super::parse::{self, json, parse_config_u64, parse_pool_settings, ShapeError};
use crate::ceph::{CephError, Rados};
use crate::placement::PoolPlacement;
use crate::result::counters::MgrOsdPerf;
use crate::result::network::HeartbeatRtt;
use crate::result::{OsdMemory, PoolSettings};

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

/// Where pool `pool`'s PGs live now ([`placement_now`]: the mons' `pg map`
/// of each PG, or the mgr's `pg dump` for pools over [`PG_MAP_LIMIT`] PGs).
pub fn placement(rados: &Rados, pool: &str) -> Result<PoolPlacement, ProbeError> {
    cluster_map(rados, pool).map(|(p, _)| p)
}

/// Each OSD's messenger addresses, from `osd dump`.
#[derive(Debug, Clone, Default)]
pub struct OsdAddrs {
    /// Public (client-facing).
    pub public: Vec<(i32, SocketAddr)>,
    /// Cluster (back, OSD↔OSD).
    pub back: Vec<(i32, SocketAddr)>,
}

/// The placement and every OSD's public and cluster addresses, from one
/// `osd dump`.
pub fn cluster_map(rados: &Rados, pool: &str) -> Result<(PoolPlacement, OsdAddrs), ProbeError> {
    let id = rados.pool_id(pool)?;
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    let dump = json(&dump.out, "osd dump")?;
    parse::parse_osd_dump_pool(&dump, id)?;
    let addrs = OsdAddrs {
        public: network::parse_osd_addrs(&dump)?,
        back: network::parse_osd_back_addrs(&dump)?,
    };
    // The PGs' acting sets as the mons compute them now: the mgr's `pg
    // dump` follows the OSDs' reports, seconds late, and a placement read
    // from it just after a change stays wrong until the next osdmap epoch
    // (a CI run tagged 16 of 168 ops with an OSD that was no longer
    // their primary).
    let p = placement_now(rados, pool, id)?;
    Ok((p, addrs))
}

/// Every OSD's public (client-facing) address, from `osd dump`.
pub fn osd_public_addrs(rados: &Rados) -> Result<Vec<(i32, SocketAddr)>, ProbeError> {
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    Ok(network::parse_osd_addrs(&json(&dump.out, "osd dump")?)?)
}

/// The osdmap epoch now (`osd stat`, mon: a small answer, cheap to poll).
pub fn osd_epoch(rados: &Rados) -> Result<u64, ProbeError> {
    let out = rados.mon_command(r#"{"prefix":"osd stat","format":"json"}"#)?;
    Ok(parse::parse_osd_stat_epoch(&json(&out.out, "osd stat")?)?)
}

/// Pools with at most this many PGs are re-read PG by PG from the mons
/// (`pg map`, the osdmap's own answer); larger ones from the mgr's
/// `pg dump pgs_brief`, which follows the OSDs' stats reports (seconds late).
pub const PG_MAP_LIMIT: u32 = 1024;

/// `pg map` commands in flight at once while re-reading a placement.
const PG_MAP_READERS: usize = 8;

/// One `pg map` answer: the epoch it was computed at, the acting set.
type PgMapAnswer = (u64, Vec<i32>);

/// Re-reads pool `pool` (id `id`)'s placement during a run: pg_num from the
/// mons, then each PG's acting set from `pg map` (the mon computes it from
/// the osdmap: current the moment the epoch changes, needs only mon 'allow
/// r'), or for pools over [`PG_MAP_LIMIT`] PGs from `pg dump pgs_brief`.
/// The placement's epoch is the oldest any answer was computed at.
pub fn placement_now(rados: &Rados, pool: &str, id: i64) -> Result<PoolPlacement, ProbeError> {
    let q = serde_json::json!({"prefix": "osd pool get", "pool": pool, "var": "pg_num", "format": "json"});
    let pg_num = parse::parse_pool_pg_num(&json(
        &rados.mon_command(&q.to_string())?.out,
        "osd pool get pg_num",
    )?)?;
    if pg_num > PG_MAP_LIMIT {
        let epoch = osd_epoch(rados)?;
        let pgs = rados
            .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#)?;
        return Ok(parse::parse_pgs_brief(
            &json(&pgs.out, "pg dump pgs_brief")?,
            id,
            pg_num,
            epoch,
        )?);
    }
    // A few commands in flight at once: one after another, a 32-PG pool's
    // re-read took 5.5 s on a loaded host (the mons busy with the very
    // change that made it), and ops sent meanwhile keep their old primary.
    let per = (pg_num as usize).div_ceil(PG_MAP_READERS).max(1);
    let seeds: Vec<u32> = (0..pg_num).collect();
    let parts: Vec<Result<Vec<PgMapAnswer>, ProbeError>> = std::thread::scope(|s| {
        let readers: Vec<_> = seeds
            .chunks(per)
            .map(|chunk| {
                s.spawn(move || -> Result<Vec<PgMapAnswer>, ProbeError> {
                    chunk
                        .iter()
                        .map(|seed| -> Result<PgMapAnswer, ProbeError> {
                            let q = format!(
                                r#"{{"prefix":"pg map","pgid":"{id}.{seed:x}","format":"json"}}"#
                            );
                            Ok(parse::parse_pg_map(&json(
                                &rados.mon_command(&q)?.out,
                                "pg map",
                            )?)?)
                        })
                        .collect()
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| r.join().expect("a pg map reader panicked"))
            .collect()
    });
    let mut acting = Vec::with_capacity(pg_num as usize);
    let mut epoch = u64::MAX;
    for part in parts {
        for (e, set) in part? {
            epoch = epoch.min(e);
            acting.push(set);
        }
    }
    Ok(PoolPlacement {
        pool: id,
        pg_num,
        acting,
        epoch,
    })
}

/// A pool's PGs by state: `pg_num` from the mons, the states from the
/// mgr's `pg dump pgs_brief` (mgr 'allow r'). PGs the mgr does not list
/// (never created, or no OSD reported them) count as `unknown`.
pub fn pool_pg_states(rados: &Rados, pool: &str) -> Result<PgStates, ProbeError> {
    let id = rados.pool_id(pool)?;
    let q = serde_json::json!({"prefix": "osd pool get", "pool": pool, "var": "pg_num", "format": "json"});
    let pg_num = parse::parse_pool_pg_num(&json(
        &rados.mon_command(&q.to_string())?.out,
        "osd pool get pg_num",
    )?)?;
    let pgs = rados
        .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#)?;
    let mut states = parse::parse_pg_states(&json(&pgs.out, "pg dump pgs_brief")?, id)?;
    let listed: u32 = states.values().sum();
    if listed < pg_num {
        *states.entry("unknown".into()).or_insert(0) += pg_num - listed;
    }
    Ok(PgStates { pg_num, states })
}

/// A pool's PGs by state ([`pool_pg_states`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PgStates {
    /// The pool's `pg_num`.
    pub pg_num: u32,
    /// How many PGs are in each state.
    pub states: std::collections::BTreeMap<String, u32>,
}

impl PgStates {
    /// PGs not active: no I/O is served on them.
    pub fn inactive(&self) -> u32 {
        self.states
            .iter()
            .filter(|(s, _)| !s.split('+').any(|p| p == "active"))
            .map(|(_, n)| n)
            .sum()
    }

    /// The inactive PGs' states, e.g. `undersized+peered: 32`.
    pub fn inactive_states(&self) -> String {
        self.states
            .iter()
            .filter(|(s, _)| !s.split('+').any(|p| p == "active"))
            .map(|(s, n)| format!("{s}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An entity's caps by service (`auth get`; needs more than mon 'allow r',
/// e.g. mon 'allow *' or an `allow command "auth get"` cap). The answer
/// also holds the entity's key: only the caps are kept, the rest is dropped
/// unread.
pub fn entity_caps(
    rados: &Rados,
    entity: &str,
) -> Result<std::collections::BTreeMap<String, String>, ProbeError> {
    let q = serde_json::json!({"prefix": "auth get", "entity": entity, "format": "json"});
    let out = rados.mon_command(&q.to_string())?;
    Ok(parse::parse_auth_caps(&json(&out.out, "auth get")?)?)
}

/// Every OSD's (id, up, in) now, from `osd dump`.
pub fn osd_states(rados: &Rados) -> Result<Vec<(i32, bool, bool)>, ProbeError> {
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    Ok(parse::parse_osd_states(&json(&dump.out, "osd dump")?)?)
}

/// Waits (up to `limit`) until the OSDs have purged the snapshots removed in
/// the pools `pool_ids` (`osd dump`'s `removed_snaps_queue` holds none of
/// theirs). Creating an RBD image makes librbd create and remove a
/// self-managed snapshot; the OSDs' purge of it moves the osdmap epoch a few
/// seconds later, which a run measuring by then reads as a cluster that is
/// not quiet. Whether the queue emptied in time; a mon that does not answer
/// counts as emptied (nothing to wait for that can be seen).
pub fn wait_snaps_purged(rados: &Rados, pool_ids: &[i64], limit: std::time::Duration) -> bool {
    let t0 = std::time::Instant::now();
    loop {
        let Ok(dump) = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#) else {
            return true;
        };
        let Ok(v) = json(&dump.out, "osd dump") else {
            return true;
        };
        if !parse::snaps_queued(&v, pool_ids) {
            return true;
        }
        if t0.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
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
pub fn historic_ops(rados: &Rados, osd: i32) -> Result<Vec<HistoricOp>, ProbeError> {
    let out = rados.osd_command(osd, r#"{"prefix":"dump_historic_ops_by_duration"}"#)?;
    Ok(historic::parse_historic_ops(
        osd,
        &json(&out.out, "dump_historic_ops_by_duration")?,
    )?)
}

/// Every OSD's row of `osd perf` (mgr; needs mgr 'allow r').
pub fn osd_perf(rados: &Rados) -> Result<Vec<MgrOsdPerf>, ProbeError> {
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

/// classes its CRUSH rule draws from (`osd crush rule dump`, `osd crush tree
/// --show-shadow`) and those OSDs' `osd_memory_target` as they run with it
/// ([`osd_memory_target`]). Needs only `mon 'allow r'`. A memory target that cannot be read leaves
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
    if let Some(name) = get.get("erasure_code_profile").and_then(Value::as_str) {
        let q = serde_json::json!({"prefix": "osd erasure-code-profile get", "name": name, "format": "json"});
        let profile = json(
            &rados.mon_command(&q.to_string())?.out,
            "osd erasure-code-profile get",
        )?;
        let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
        let width = parse::parse_stripe_width(&json(&dump.out, "osd dump")?, s.id)?;
        s.erasure = parse::parse_erasure(&get, &profile, width)?;
    }
    let mut mem = Vec::new();
    for &osd in &s.osds {
        match osd_memory_target(rados, osd) {
            Ok((b, source)) => mem.push(OsdMemory {
                osd,
                bytes: b,
                rss_bytes: None,
                source: Some(source.into()),
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
    s.osd_settings = super::settings::read(rados, &s.osds);
    if let Ok(dump) = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#) {
        if let Ok(dump) = json(&dump.out, "osd dump") {
            s.flags.extend(parse::parse_osd_flags(&dump));
        }
    }
    s.balancer = rados
        .mgr_command(r#"{"prefix":"balancer status","format":"json"}"#)
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.out).ok())
        .and_then(|v| parse::parse_balancer(&v));
    Ok(s)
}

/// Whether `pool` is erasure-coded and allows overwrites (`osd pool get
/// POOL all`; mon 'allow r').
pub fn pool_kind(rados: &Rados, pool: &str) -> Result<parse::PoolKind, ProbeError> {
    let q =
        serde_json::json!({"prefix": "osd pool get", "pool": pool, "var": "all", "format": "json"});
    let get = json(&rados.mon_command(&q.to_string())?.out, "osd pool get")?;
    Ok(parse::parse_pool_kind(&get))
}

/// Measures the RAM of the pool's OSDs that run on this host (their
/// processes' resident sets, [`super::osdmem`]) into `s`: after a run, what
/// they hold under that load. OSDs elsewhere keep `rss_bytes` null, and
/// `memory_measured_bytes` stays null unless every one was measured.
pub fn measure_osd_ram(rados: &Rados, s: &mut PoolSettings) {
    let md = rados
        .mon_command(r#"{"prefix":"osd metadata","format":"json"}"#)
        .ok()
        .and_then(|md| serde_json::from_slice::<Value>(&md.out).ok());
    let host = crate::names::hostname();
    let osds: Vec<i32> = s.osd_memory_target.iter().map(|m| m.osd).collect();
    let (local, missing) =
        super::osdmem::measure(md.as_ref(), &osds, &host, std::path::Path::new("/proc"));
    for m in &mut s.osd_memory_target {
        m.rss_bytes = local.iter().find(|l| l.osd == m.osd).map(|l| l.rss_bytes);
    }
    s.memory_measured_bytes = if s.osd_memory_target.is_empty() {
        None
    } else {
        s.osd_memory_target.iter().map(|m| m.rss_bytes).sum()
    };
    s.memory_not_measured = super::osdmem::why_not_measured(&missing, osds.len(), &host);
}

/// The `osd_memory_target` osd.N runs with, bytes, and where it was read
/// ([`OsdMemory::source`]); see [`osd_config`].
pub fn osd_memory_target(rados: &Rados, osd: i32) -> Result<(u64, &'static str), ProbeError> {
    osd_config(rados, osd, "osd_memory_target")
}

/// A numeric option as osd.N runs with it, and where it was read: the
/// running daemon's value first (mgr `config show`, needs mgr 'allow r';
/// else the OSD's own `config get`, needs osd 'allow *'), which counts its
/// ceph.conf and command line ([`OsdMemory::DAEMON`]); only when neither
/// answers, the mons' configuration database (`config get`), which does
/// not ([`OsdMemory::MON_DATABASE`]).
pub fn osd_config(rados: &Rados, osd: i32, key: &str) -> Result<(u64, &'static str), ProbeError> {
    let who = format!("osd.{osd}");
    let show =
        serde_json::json!({"prefix": "config show", "who": who, "key": key, "format": "json"});
    if let Some(b) = rados
        .mgr_command(&show.to_string())
        .ok()
        .and_then(|o| parse_config_u64(&o.out))
    {
        return Ok((b, OsdMemory::DAEMON));
    }
    let tell = serde_json::json!({"prefix": "config get", "var": key, "format": "json"});
    if let Some(b) = rados
        .osd_command(osd, &tell.to_string())
        .ok()
        .and_then(|o| parse_osd_config_get(&o.out))
    {
        return Ok((b, OsdMemory::DAEMON));
    }
    let q = serde_json::json!({"prefix": "config get", "who": who, "key": key, "format": "json"});
    let out = rados.mon_command(&q.to_string())?;
    parse_config_u64(&out.out)
        .map(|b| (b, OsdMemory::MON_DATABASE))
        .ok_or_else(|| {
            ProbeError::Shape(ShapeError {
                what: "config get",
                why: format!(
                    "{key} is not a number: {}",
                    String::from_utf8_lossy(&out.out).trim()
                ),
            })
        })
}

/// An OSD's own `config get KEY` answer, `{"KEY": "value"}`, or a bare value.
fn parse_osd_config_get(out: &[u8]) -> Option<u64> {
    match serde_json::from_slice::<Value>(out).ok()? {
        Value::Object(m) => m
            .values()
            .next()
            .and_then(|v| parse_config_u64(v.to_string().as_bytes())),
        _ => parse_config_u64(out),
    }
}

/// `cache drop` on each of `osds` (`ceph tell osd.N cache drop`: the OSD
/// empties its BlueStore caches, needs osd 'allow *'); stops at the first
/// failure, named in one line.
pub fn drop_caches(rados: &Rados, osds: &[i32]) -> Result<(), String> {
    for &osd in osds {
        crate::undo::drop_cache(rados, osd).map_err(|e| {
            format!(
                "--drop-caches: `ceph tell osd.{osd} cache drop` as {} failed ({e}); it needs \
                     osd 'allow *' (give the identity that cap, or --telemetry-id one that has it)",
                rados.entity()
            )
        })?;
    }
    Ok(())
}

/// Onodes an OSD may keep after `cache drop` without the reads being warm
/// (an idle OSD pins a few of its own).
pub const ONODES_KEPT_LIMIT: u64 = 16;

/// After `cache drop`: the OSDs of `osds` that still hold more than
/// [`ONODES_KEPT_LIMIT`] onodes (`cache status`; BlueStore cannot drop a
/// pinned onode, e.g. of an object whose small, deferred write is not yet
/// on the disk), with that count. An OSD that does not answer is left out.
pub fn onodes_kept(rados: &Rados, osds: &[i32]) -> Vec<(i32, u64)> {
    osds.iter()
        .filter_map(|&osd| {
            let out = rados
                .osd_command(osd, r#"{"prefix":"cache status","format":"json"}"#)
                .ok()?;
            let n = parse_cache_status_onodes(&json(&out.out, "cache status").ok()?)?;
            (n > ONODES_KEPT_LIMIT).then_some((osd, n))
        })
        .collect()
}

/// The onodes an OSD's BlueStore holds, from its `cache status`
/// (`{"object_ctx": N, "bluestore_onode": N, "bluestore_buffers": N}`). Pure.
pub fn parse_cache_status_onodes(doc: &Value) -> Option<u64> {
    doc.get("bluestore_onode").and_then(Value::as_u64)
}

/// Checks before a run that `--drop-caches` can work: one OSD up drops its
/// caches (harmless: the run drops them again just before its reads).
pub fn check_drop_caches(rados: &Rados) -> Result<(), String> {
    let rados = rados.telemetry();
    let up = osd_states(rados).map_err(|e| {
        format!(
            "--drop-caches: cannot list the OSDs as {} ({e}); it needs mon 'allow r'",
            rados.entity()
        )
    })?;
    match up.iter().find(|o| o.1) {
        Some(o) => drop_caches(rados, &[o.0]),
        None => Err("--drop-caches: no OSD is up".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_status_counts_the_onodes_held() {
        // Captured from pacific 16.2.15 right after `cache drop`, with 64
        // objects of deferred 4 KiB writes still pinned.
        let doc: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/pacific/cache_status.json"
        ))
        .unwrap();
        assert_eq!(parse_cache_status_onodes(&doc), Some(81));
        assert_eq!(parse_cache_status_onodes(&serde_json::json!({})), None);
    }
}
