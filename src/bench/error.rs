//! Errors of a benchmark run, and the diagnosis of a failed op: a full pool
//! (naming the quota), a deleted pool, inactive PGs, an op timeout, missing
//! caps (with advice that keeps the caps the entity has).
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
    #[error("{entity} may not do I/O on pool '{pool}' ({refused}); {fix}")]
    NoAccess {
        /// The client.
        entity: String,
        /// The pool.
        pool: String,
        /// The refused call.
        refused: Box<CephError>,
        /// How to add the cap without removing any ([`access_fix`]).
        fix: String,
    },
    /// An op timed out because PGs of the pool are not active: no OSD set
    /// serves them (too few OSDs or hosts for its size, min_size or CRUSH
    /// rule, or OSDs down).
    #[error("pool '{pool}' has {inactive} of {pg_num} PGs not active ({states}), so its I/O waits until the op times out; see `ceph -s` and `ceph pg ls-by-pool {pool}` (OSDs down, or too few OSDs or hosts for the pool's size, min_size or CRUSH rule)")]
    PgsInactive {
        /// Pool.
        pool: String,
        /// PGs not active.
        inactive: u32,
        /// The pool's pg_num.
        pg_num: u32,
        /// Their states, e.g. `undersized+peered: 32`.
        states: String,
        /// The timed-out op.
        source: Box<CephError>,
    },
    /// A write larger than the pool's OSDs accept (`osd_max_write_size`,
    /// `osd_max_object_size`): refused before the run.
    #[error("{0}")]
    TooLarge(String),
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
    /// A pool cannot hold what an RBD image would put there (an
    /// erasure-coded pool for the metadata, a data pool that does not exist
    /// or is erasure-coded without overwrites): found before anything is
    /// written; bad input ([`BenchError::is_bad_input`]).
    #[error("{0}")]
    UnfitPool(String),
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

impl BenchError {
    /// Whether the error is the user's input, found at the cluster before
    /// anything was written (exit code 2, as a bad flag).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, BenchError::UnfitPool(_))
    }
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
        Some(libc::ETIMEDOUT) => match inactive_pgs(rados, pool, e) {
            Ok(inactive) => inactive,
            Err(e) => timeout(rados, pool, e),
        },
        _ => data_access(e, rados, pool),
    }
}

/// A timed-out op on a pool whose PGs are all active (or unreadable): a
/// reached quota, else the op timeout.
fn timeout(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    match quota_detail(rados, pool) {
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
    }
}

/// [`BenchError::PgsInactive`] when some of the pool's PGs are not active
/// (read with the mgr's `pg dump`); else the error back.
fn inactive_pgs(rados: &Rados, pool: &str, e: CephError) -> Result<BenchError, CephError> {
    match cluster::pool_pg_states(rados, pool) {
        Ok(pgs) if pgs.inactive() > 0 => Ok(BenchError::PgsInactive {
            pool: pool.into(),
            inactive: pgs.inactive(),
            pg_num: pgs.pg_num,
            states: pgs.inactive_states(),
            source: Box::new(e),
        }),
        _ => Err(e),
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

/// Refuses writes the pool's OSDs would refuse: a block over
/// `osd_max_write_size` (MiB; the OSD answers EMSGSIZE) or an object over
/// `osd_max_object_size` (EFBIG), as the OSDs of `osds` run with them (the
/// smallest of the first 16). Unreadable limits pass: the OSD still says no.
pub(crate) fn check_write_limits(
    rados: &Rados,
    osds: &[i32],
    block_size: u64,
    object_size: u64,
) -> Result<(), BenchError> {
    use crate::units::fmt_bytes;
    let least = |key: &str, shift: u32| {
        osds.iter()
            .take(16)
            .filter_map(|&o| cluster::osd_config(rados, o, key).ok())
            .map(|(v, _)| v << shift)
            .min()
    };
    if let Some(max) = least("osd_max_write_size", 20) {
        if block_size > max {
            return Err(BenchError::TooLarge(format!(
                "-b {} is larger than the OSDs' osd_max_write_size ({}): they refuse such writes \
                 (EMSGSIZE); use -b {} or less, or raise osd_max_write_size",
                fmt_bytes(block_size),
                fmt_bytes(max),
                fmt_bytes(max).replace(' ', "")
            )));
        }
    }
    if let Some(max) = least("osd_max_object_size", 0) {
        if object_size > max {
            return Err(BenchError::TooLarge(format!(
                "-O {} is larger than the OSDs' osd_max_object_size ({}): they refuse writes past it \
                 (EFBIG); use -O {} or less",
                fmt_bytes(object_size),
                fmt_bytes(max),
                fmt_bytes(max).replace(' ', "")
            )));
        }
    }
    Ok(())
}

/// Whether the pool no longer exists (per the client's current OSD map).
fn pool_gone(rados: &Rados, pool: &str) -> bool {
    matches!(rados.pool_id(pool), Err(CephError::NoSuchPool(_)))
}

/// A pool's quotas (0: none) and what it stores, from `osd pool get-quota`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quota {
    max_objects: u64,
    objects: u64,
    max_bytes: u64,
    bytes: u64,
}

fn pool_quota(rados: &Rados, pool: &str) -> Option<Quota> {
    let cmd = serde_json::json!({"prefix": "osd pool get-quota", "pool": pool, "format": "json"});
    let out = rados.mon_command(&cmd.to_string()).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.out).ok()?;
    let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    Some(Quota {
        max_objects: n("quota_max_objects"),
        objects: n("current_num_objects"),
        max_bytes: n("quota_max_bytes"),
        bytes: n("current_num_bytes"),
    })
}

/// Refuses, before anything is written, a test area of `area` bytes in
/// objects of `object_size` that the pool's quota has no room for: the
/// preconditioning would fill the pool and the run fail part-way.
pub(crate) fn check_quota_room(
    rados: &Rados,
    pool: &str,
    area: u64,
    object_size: u64,
) -> Result<(), BenchError> {
    match pool_quota(rados, pool) {
        Some(q) => quota_room(pool, q, area, object_size),
        None => Ok(()),
    }
}

fn quota_room(pool: &str, q: Quota, area: u64, object_size: u64) -> Result<(), BenchError> {
    use crate::units::fmt_bytes;
    if q.max_bytes > 0 && q.bytes.saturating_add(area) > q.max_bytes {
        let room = q.max_bytes.saturating_sub(q.bytes);
        return Err(BenchError::TooLarge(format!(
            "pool '{pool}' has a quota of max_bytes {} ({} stored): the test area {} does not fit; \
             use --test-area {} or less, or raise the quota (`ceph osd pool set-quota {pool} max_bytes N`)",
            fmt_bytes(q.max_bytes),
            fmt_bytes(q.bytes),
            fmt_bytes(area),
            fmt_bytes(room)
        )));
    }
    let objects = area.div_ceil(object_size.max(1));
    if q.max_objects > 0 && q.objects.saturating_add(objects) > q.max_objects {
        return Err(BenchError::TooLarge(format!(
            "pool '{pool}' has a quota of max_objects {} ({} stored): the test area {} takes {objects} \
             objects of {}; use a smaller --test-area, or raise the quota \
             (`ceph osd pool set-quota {pool} max_objects N`)",
            q.max_objects,
            q.objects,
            fmt_bytes(area),
            fmt_bytes(object_size)
        )));
    }
    Ok(())
}

/// "quota max_objects 100 reached (3337 objects stored)", if a quota of the
/// pool is reached.
fn quota_detail(rados: &Rados, pool: &str) -> Option<String> {
    let q = pool_quota(rados, pool)?;
    let (max_obj, obj) = (q.max_objects, q.objects);
    let (max_b, b) = (q.max_bytes, q.bytes);
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
/// A timeout is taken for refused only when the pool's PGs are all active:
/// a timeout on inactive PGs is [`BenchError::PgsInactive`].
pub(crate) fn data_access(e: CephError, rados: &Rados, pool: &str) -> BenchError {
    let refused = match e.errno() {
        Some(libc::EPERM | libc::EACCES) => true,
        Some(libc::ETIMEDOUT) => {
            let e = match inactive_pgs(rados, pool, e) {
                Ok(inactive) => return inactive,
                Err(e) => e,
            };
            if !cluster::osd_states(rados)
                .is_ok_and(|s| !s.is_empty() && s.iter().all(|&(_, up, inn)| up && inn))
            {
                return BenchError::Ceph(e);
            }
            return no_access(rados, pool, e);
        }
        _ => false,
    };
    if refused {
        no_access(rados, pool, e)
    } else {
        BenchError::Ceph(e)
    }
}

/// [`BenchError::NoAccess`] for the connected entity, with [`access_fix`]
/// over its caps when it may read them.
pub fn no_access(rados: &Rados, pool: &str, e: CephError) -> BenchError {
    let entity = rados.entity().to_string();
    let caps = cluster::entity_caps(rados, &entity).ok();
    BenchError::NoAccess {
        fix: access_fix(&entity, pool, caps.as_ref()),
        entity,
        pool: pool.to_string(),
        refused: Box::new(e),
    }
}

/// How to give `entity` I/O on `pool` without taking any cap away:
/// `ceph auth caps` replaces all of an entity's caps, so the command names
/// every cap it has (`caps`, when readable) with `allow rw pool=POOL` added
/// to its osd caps (and mon 'allow r' when it has no mon cap). Without its
/// caps: how to read them, and what to add.
pub fn access_fix(
    entity: &str,
    pool: &str,
    caps: Option<&std::collections::BTreeMap<String, String>>,
) -> String {
    let add = format!("allow rw pool={pool}");
    let Some(caps) = caps else {
        return format!(
            "add osd '{add}' to its caps: `ceph auth get {entity}` shows them, and `ceph auth caps {entity}` \
             must repeat every one of them (it replaces them all)"
        );
    };
    let mut merged = caps.clone();
    let osd = merged.entry("osd".into()).or_default();
    *osd = if osd.trim().is_empty() {
        add.clone()
    } else {
        format!("{}, {add}", osd.trim())
    };
    merged
        .entry("mon".into())
        .and_modify(|m| {
            if m.trim().is_empty() {
                *m = "allow r".into();
            }
        })
        .or_insert_with(|| "allow r".into());
    let args: Vec<String> = merged
        .iter()
        .map(|(svc, cap)| format!("{svc} {}", shell_quote(cap)))
        .collect();
    format!(
        "add osd '{add}' to the caps it has (`ceph auth caps` replaces them all, so this names each): \
         ceph auth caps {entity} {}",
        args.join(" ")
    )
}

/// `s` in single quotes for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::{access_fix, quota_room, Quota};
    use std::collections::BTreeMap;

    fn caps(c: &[(&str, &str)]) -> BTreeMap<String, String> {
        c.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// `ceph auth caps` replaces every cap: the advice repeats each cap the
    /// entity has and only adds the pool, so following it removes nothing.
    #[test]
    fn access_advice_keeps_every_cap_the_entity_has() {
        let have = caps(&[
            ("mon", "allow r"),
            ("mgr", "allow r"),
            ("osd", "allow rw pool=other"),
        ]);
        let fix = access_fix("client.bench2", "inact", Some(&have));
        assert!(
            fix.ends_with(
                "ceph auth caps client.bench2 mgr 'allow r' mon 'allow r' \
                 osd 'allow rw pool=other, allow rw pool=inact'"
            ),
            "{fix}"
        );
        // client.admin keeps its 'allow *' caps, mds included.
        let admin = caps(&[("mds", "allow *"), ("mgr", "allow *"), ("mon", "allow *")]);
        let fix = access_fix("client.admin", "p", Some(&admin));
        assert!(
            fix.ends_with(
                "ceph auth caps client.admin mds 'allow *' mgr 'allow *' mon 'allow *' osd 'allow rw pool=p'"
            ),
            "{fix}"
        );
        // A cap with a quote in it stays one shell word.
        let quoted = caps(&[("mon", "allow r, allow command 'auth get'")]);
        let fix = access_fix("client.q", "p", Some(&quoted));
        assert!(
            fix.contains(r"mon 'allow r, allow command '\''auth get'\'''"),
            "{fix}"
        );
    }

    #[test]
    fn a_test_area_larger_than_the_quota_room_is_refused() {
        let q = Quota {
            max_objects: 0,
            objects: 0,
            max_bytes: 1 << 30,
            bytes: 300 << 20,
        };
        let e = quota_room("p", q, 4 << 30, 4 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_bytes 1 GiB (300 MiB stored)"), "{e}");
        assert!(e.contains("--test-area 724 MiB or less"), "{e}");
        assert!(quota_room("p", q, 512 << 20, 4 << 20).is_ok());
        let objs = Quota {
            max_objects: 100,
            objects: 90,
            max_bytes: 0,
            bytes: 0,
        };
        assert!(quota_room("p", objs, 64 << 20, 4 << 20).is_err());
        assert!(quota_room("p", objs, 40 << 20, 4 << 20).is_ok());
        let none = Quota {
            max_objects: 0,
            objects: 5,
            max_bytes: 0,
            bytes: 5,
        };
        assert!(quota_room("p", none, u64::MAX / 2, 4 << 20).is_ok());
    }

    /// Without its caps the advice prints no `ceph auth caps` command that
    /// could be pasted: it says how to read them and what to add.
    #[test]
    fn access_advice_without_the_caps_names_no_replacing_command() {
        let fix = access_fix("client.x", "p", None);
        assert!(fix.contains("`ceph auth get client.x`"), "{fix}");
        assert!(fix.contains("osd 'allow rw pool=p'"), "{fix}");
        assert!(!fix.contains("ceph auth caps client.x mon"), "{fix}");
    }
}
