//! Probes: what cephbench asks the cluster, off the I/O path — the pool's
//! PG placement (osd dump + pg dump) and the OSDs' perf counters.
#![forbid(unsafe_code)]

use serde_json::Value;

use crate::ceph::{CephError, Rados};
use crate::counters::{self, Snapshot};
use crate::network::{self, HeartbeatRtt};
use crate::placement::{self, PoolPlacement, ShapeError};
use std::net::SocketAddr;

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

/// One OSD's perf counters now.
pub fn perf_dump(rados: &Rados, osd: i32) -> Result<Snapshot, ProbeError> {
    let out = rados.osd_command(osd, r#"{"prefix":"perf dump"}"#)?;
    Ok(counters::parse_perf_dump(&json(&out.out, "perf dump")?)?)
}

/// Snapshots of several OSDs; the first failure is returned with the OSD named.
pub fn perf_dumps(rados: &Rados, osds: &[i32]) -> Result<Vec<(i32, Snapshot)>, ProbeError> {
    osds.iter()
        .map(|o| perf_dump(rados, *o).map(|s| (*o, s)))
        .collect()
}
