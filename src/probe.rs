//! Probes: what cephbench asks the cluster, off the I/O path — the pool's
//! PG placement (osd dump + pg dump) and the OSDs' perf counters.
#![forbid(unsafe_code)]

use serde_json::Value;

use crate::ceph::{CephError, Rados};
use crate::counters::{self, Snapshot};
use crate::placement::{self, PoolPlacement, ShapeError};

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
    let id = rados.pool_id(pool)?;
    let dump = rados.mon_command(r#"{"prefix":"osd dump","format":"json"}"#)?;
    let (pg_num, epoch) = placement::parse_osd_dump_pool(&json(&dump.out, "osd dump")?, id)?;
    let pgs = rados
        .mgr_command(r#"{"prefix":"pg dump","dumpcontents":["pgs_brief"],"format":"json"}"#)?;
    Ok(placement::parse_pgs_brief(
        &json(&pgs.out, "pg dump pgs_brief")?,
        id,
        pg_num,
        epoch,
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
