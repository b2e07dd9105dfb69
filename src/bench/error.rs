//! Errors of a benchmark run, and the diagnosis of a failed op: a full pool
//! (naming the quota), a deleted pool, an op timeout, missing caps.
#![forbid(unsafe_code)]

use crate::ceph::{CephError, Rados};
use crate::telemetry::cluster;

/// Errors of a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A librados call failed.
    #[error(transparent)]
    Ceph(#[from] CephError),
    /// `seq`/`rand` found no write run to read.
    #[error(
        "no objects of run '{run}' in pool '{pool}': run `cephbench rados write -p {pool}{ns} --run-name {run} --no-cleanup` first"
    )]
    NothingWritten {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
    },
    /// `seq`/`rand` of a run that wrote omap values or xattrs.
    #[error(
        "run '{run}' in pool '{pool}' wrote {dest}; seq and rand read object data only, as rados bench does: \
         read a run written without --write-omap/--write-xattr"
    )]
    NotObjectData {
        /// Pool.
        pool: String,
        /// Run name.
        run: String,
        /// Where it wrote, e.g. `object+omap`.
        dest: String,
    },
    /// `write` would overwrite an earlier run's objects.
    #[error(
        "pool '{pool}' still holds run '{run}' ({ops} ops written by {host}); remove it with `cephbench cleanup -p {pool}{ns} --run-name {run}` or choose another --run-name"
    )]
    RunExists {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
        /// Ops recorded in the metadata.
        ops: u64,
        /// Host that wrote them.
        host: String,
    },
    /// The image named by `--image` does not exist.
    #[error("no image '{image}' in pool '{pool}' (list images with `rbd ls -p {pool}`, or use --size to let cephbench create one)")]
    NoSuchImage {
        /// Pool.
        pool: String,
        /// Image.
        image: String,
    },
    /// The workload would write to an image cephbench did not create.
    #[error("image '{image}' was not created by cephbench and {why} would write to it; pass --allow-write if its data may be destroyed")]
    ReadOnlyImage {
        /// Image.
        image: String,
        /// What would write.
        why: String,
    },
    /// The client's caps do not allow I/O on the pool.
    #[error("{entity} may not do I/O on pool '{pool}' ({refused}); grant it: ceph auth caps {entity} mon 'allow r' osd 'allow rw pool={pool}'")]
    NoAccess {
        /// The client.
        entity: String,
        /// The pool.
        pool: String,
        /// The refused call.
        refused: Box<CephError>,
    },
    /// `--test-area` / `--bs` do not fit the image.
    #[error("{0}")]
    BadGeometry(String),
    /// A job run on a group of agents (`suite --group`) failed, or agents
    /// delivered no result (the message names them).
    #[error("{0}")]
    Group(String),
    /// The pool does not exist and `--create-pool` was not given.
    #[error("pool '{pool}' does not exist (list pools with `ceph osd pool ls`); create it, or pass --create-pool [--pool-size N] [--pg-num N] to let cephbench create it and remove it afterwards")]
    NoPool {
        /// Pool.
        pool: String,
    },
    /// Writes failed because the pool reached its quota (EDQUOT) or the
    /// cluster is full (ENOSPC).
    #[error("pool '{pool}' is full: {detail}; writes stopped")]
    PoolFull {
        /// Pool.
        pool: String,
        /// Which limit, and how much is stored.
        detail: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// The pool disappeared while the run used it.
    #[error("pool '{pool}' was deleted during the run; nothing of the run is left in it")]
    PoolDeleted {
        /// Pool.
        pool: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// An op did not complete within `--op-timeout`.
    #[error("an op did not complete within --op-timeout {limit}; check `ceph -s` (mons or OSDs down, PGs inactive, pool full) and raise --op-timeout if the cluster is merely slow")]
    OpTimeout {
        /// The bound, as configured.
        limit: String,
        /// The failed op.
        source: Box<CephError>,
    },
    /// A data object of the requested run exists without the run's
    /// metadata: it was not written by this run, and is left alone.
    #[error("pool '{pool}' already holds object '{name}' but no metadata of run '{run}': it is not cephbench's to overwrite; choose another --run-name (if it is a crashed cephbench run's, `cephbench cleanup -p {pool}{ns} --run-name {run}` removes it)")]
    ForeignObject {
        /// Pool.
        pool: String,
        /// ` -N NS` when the run is in a namespace, else empty.
        ns: String,
        /// Run name.
        run: String,
        /// The object found.
        name: String,
    },
    /// The metadata object exists but is not ours or is corrupt.
    #[error("metadata object '{name}' in pool '{pool}' is unusable: {why}")]
    BadMeta {
        /// Pool.
        pool: String,
        /// Object name.
        name: String,
        /// What is wrong.
        why: String,
    },
}

/// Explains a failed op of a run on `pool`: a full pool (naming the quota),
/// a deleted pool, an op timeout; other errors pass through. Each check is
/// one bounded mon command.
pub fn diagnose(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    match e.errno() {
        Some(libc::EDQUOT) | Some(libc::ENOSPC) => BenchError::PoolFull {
            pool: pool.into(),
            detail: quota_detail(rados, pool).unwrap_or_else(|| {
                if e.errno() == Some(libc::ENOSPC) {
                    "the cluster (an OSD at its full ratio) or the pool has no room; see `ceph health detail`, free space or add OSDs".into()
                } else {
                    format!(
                        "its quota was reached (the mons clear the full flag seconds after usage drops below it); \
                         see `ceph osd pool get-quota {pool}`, free space, or remove the quota with \
                         `ceph osd pool set-quota {pool} max_bytes 0` (and max_objects 0)"
                    )
                }
            }),
            source: Box::new(e),
        },
        Some(libc::ENOENT) | Some(libc::ETIMEDOUT) if pool_gone(rados, pool) => {
            BenchError::PoolDeleted {
                pool: pool.into(),
                source: Box::new(e),
            }
        }
        Some(libc::ETIMEDOUT) => match quota_detail(rados, pool) {
            // librbd (and librados without FULL_TRY) waits on a full pool
            // until the op timeout: name the quota rather than the timeout.
            Some(detail) => BenchError::PoolFull {
                pool: pool.into(),
                detail,
                source: Box::new(e),
            },
            None => BenchError::OpTimeout {
                limit: rados
                    .conf_get("rados_osd_op_timeout")
                    .map(|s| format!("{s} s"))
                    .unwrap_or_else(|_| "?".into()),
                source: Box::new(e),
            },
        },
        _ => data_access(e, rados, pool),
    }
}

/// [`diagnose`] for the first op on the pool (e.g. creating the image): a
/// timeout there, with the pool present, no quota reached and every OSD up,
/// is the missing osd cap of reef and later (see [`data_access`]).
pub(crate) fn first_op_error(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    if e.errno() == Some(libc::ETIMEDOUT)
        && !pool_gone(rados, pool)
        && quota_detail(rados, pool).is_none()
    {
        return match data_access(e, rados, pool) {
            BenchError::Ceph(e) => diagnose(rados, pool, e),
            other => other,
        };
    }
    diagnose(rados, pool, e)
}

/// Whether the pool no longer exists (per the client's current OSD map).
fn pool_gone(rados: &Rados, pool: &str) -> bool {
    matches!(rados.pool_id(pool), Err(CephError::NoSuchPool(_)))
}

/// "quota max_objects 100 reached (3337 objects stored)", if a quota of the
/// pool is reached.
fn quota_detail(rados: &Rados, pool: &str) -> Option<String> {
    let cmd = serde_json::json!({"prefix": "osd pool get-quota", "pool": pool, "format": "json"});
    let out = rados.mon_command(&cmd.to_string()).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.out).ok()?;
    let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let (max_obj, obj) = (n("quota_max_objects"), n("current_num_objects"));
    let (max_b, b) = (n("quota_max_bytes"), n("current_num_bytes"));
    let fix = |q: &str| {
        format!(
            "; free space, or raise or remove the quota: `ceph osd pool set-quota {pool} {q} 0`"
        )
    };
    if max_obj > 0 && obj >= max_obj {
        Some(format!(
            "quota max_objects {max_obj} reached ({obj} objects stored){}",
            fix("max_objects")
        ))
    } else if max_b > 0 && b >= max_b {
        Some(format!(
            "quota max_bytes {max_b} ({}) reached ({b} bytes stored){}",
            crate::units::fmt_bytes(max_b),
            fix("max_bytes")
        ))
    } else {
        None
    }
}

/// Turns a refused data op (EPERM/EACCES) into an error naming the cap to add.
/// A timeout while every OSD is up counts as refused too: from reef on, the
/// mons issue no OSD ticket to a key without osd caps, so its ops time out
/// (ETIMEDOUT) instead of failing with EPERM as on pacific.
pub(crate) fn data_access(e: CephError, rados: &Rados, pool: &str) -> BenchError {
    let refused = match e.errno() {
        Some(libc::EPERM | libc::EACCES) => true,
        Some(libc::ETIMEDOUT) => cluster::osd_states(rados)
            .is_ok_and(|s| !s.is_empty() && s.iter().all(|&(_, up, inn)| up && inn)),
        _ => false,
    };
    if refused {
        BenchError::NoAccess {
            entity: rados.entity().to_string(),
            pool: pool.to_string(),
            refused: Box::new(e),
        }
    } else {
        BenchError::Ceph(e)
    }
}
