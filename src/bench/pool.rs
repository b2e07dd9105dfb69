//! The pool of a run: `--create-pool` (create, then remove once empty), its
//! settings for the result document, and the warning when the read area
//! fits in its OSDs' memory.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use crate::ceph::{CephError, IoCtx, Rados};
use crate::result::{OsdMemory, PoolSettings};
use crate::telemetry::cluster;

/// How `--create-pool` makes a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PoolSpec {
    /// Replicas (`size`).
    pub size: u32,
    /// Placement groups (`pg_num` = `pgp_num`).
    pub pg_num: u32,
}

/// Creates a replicated pool for `app` and waits (up to 60 s) until its PGs
/// are active.
pub fn create_pool(rados: &Rados, pool: &str, spec: PoolSpec, app: &str) -> Result<(), CephError> {
    use serde_json::json;
    let cmd = |v: serde_json::Value| rados.mon_command(&v.to_string()).map(|_| ());
    cmd(
        json!({"prefix": "osd pool create", "pool": pool, "pg_num": spec.pg_num,
               "pgp_num": spec.pg_num, "pool_type": "replicated"}),
    )?;
    cmd(
        json!({"prefix": "osd pool set", "pool": pool, "var": "size",
               "val": spec.size.to_string(), "yes_i_really_mean_it": true}),
    )?;
    let min = spec.size.saturating_sub(1).max(1);
    cmd(
        json!({"prefix": "osd pool set", "pool": pool, "var": "min_size", "val": min.to_string()}),
    )?;
    cmd(json!({"prefix": "osd pool application enable", "pool": pool, "app": app}))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let q = json!({"prefix": "pg ls-by-pool", "poolstr": pool, "format": "json"}).to_string();
    while Instant::now() < deadline {
        let active = rados.mgr_command(&q).ok().and_then(|o| {
            let v: serde_json::Value = serde_json::from_slice(&o.out).ok()?;
            let pgs = v.get("pg_stats").or(Some(&v))?.as_array()?.clone();
            Some(
                pgs.len() as u64 >= u64::from(spec.pg_num)
                    && pgs.iter().all(|p| {
                        p.get("state")
                            .and_then(|s| s.as_str())
                            .is_some_and(|s| s.starts_with("active"))
                    }),
            )
        });
        if active == Some(true) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(CephError::Timeout {
        what: format!("activation of the PGs of the new pool '{pool}'"),
        limit: Duration::from_secs(60),
    })
}

/// What `--create-pool` says when the mons refuse to delete pools: the
/// setting named, and the fix.
pub const NO_POOL_DELETE: &str = "mon_allow_pool_delete is false on the mons, so a pool \
cephbench creates could not be removed again: run `ceph config set mon mon_allow_pool_delete \
true` (or set it in the mons' ceph.conf), or create the pool yourself and drop --create-pool";

/// Before `--create-pool` creates anything: whether the mons would let the
/// pool be removed again (`mon_allow_pool_delete` as the quorum's leader
/// runs with it: the mgr's `config show`, not the config database, which misses a
/// ceph.conf setting). `Err` with [`NO_POOL_DELETE`] when they would not;
/// `Ok` when it cannot be read (the removal then says so). The mgr learns
/// a runtime change (`injectargs`) with the mon's next report, seconds later.
pub fn check_pool_delete_allowed(rados: &Rados) -> Result<(), String> {
    let leader = rados
        .mon_command(r#"{"prefix":"quorum_status","format":"json"}"#)
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.out).ok())
        .and_then(|v| v.get("quorum_leader_name")?.as_str().map(String::from));
    let Some(leader) = leader else {
        return Ok(());
    };
    let cmd = serde_json::json!({"prefix": "config show", "who": format!("mon.{leader}"),
                                 "key": "mon_allow_pool_delete"});
    // `config show` is the mgr's: it holds what each daemon reported.
    let value = rados.mgr_command(&cmd.to_string()).ok().map(|o| {
        String::from_utf8_lossy(&o.out)
            .trim()
            .trim_matches('"')
            .to_string()
    });
    match value.as_deref() {
        Some("false") => Err(NO_POOL_DELETE.into()),
        _ => Ok(()),
    }
}

/// Deletes a pool cephbench created, if it holds no object any more.
/// Returns a warning when it cannot.
pub fn remove_created_pool(rados: &Rados, io: &IoCtx, pool: &str) -> Option<String> {
    // Objects of every namespace count, not only those of `io`'s.
    let left = rados.ioctx(io.pool_name()).and_then(|mut all| {
        all.set_all_namespaces();
        all.list_prefix("")
    });
    match left {
        Ok(left) if !left.is_empty() => {
            return Some(format!(
                "pool '{pool}' (created by cephbench) was kept: it holds {} objects cephbench did not write",
                left.len()
            ))
        }
        Err(e) => return Some(format!("pool '{pool}' (created by cephbench) was kept: {e}")),
        Ok(_) => {}
    }
    let cmd = serde_json::json!({"prefix": "osd pool rm", "pool": pool, "pool2": pool,
                                 "yes_i_really_really_mean_it": true});
    match rados.mon_command(&cmd.to_string()) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "pool '{pool}' (created by cephbench) was kept: {e} (pool deletion needs \
             mon_allow_pool_delete=true on the mons: `ceph config set mon mon_allow_pool_delete \
             true`, then `ceph osd pool rm {pool} {pool} --yes-i-really-really-mean-it`)"
        )),
    }
}

/// Whether an RBD image can be created in `pool` with its data in
/// `data_pool` (`--data-pool`), before anything is written: the data pool
/// exists and, if erasure-coded, allows overwrites (else librbd fails on
/// its first partial write), and `pool`, which keeps the image's metadata
/// (omap), is not erasure-coded. A pool whose kind cannot be read (mon
/// 'allow r' missing) is let through: librbd then says what is wrong.
pub fn check_rbd_pools(
    rados: &Rados,
    pool: &str,
    data_pool: Option<&str>,
) -> Result<(), crate::bench::BenchError> {
    use crate::bench::BenchError::UnfitPool;
    let kind = |p: &str| cluster::pool_kind(rados.telemetry(), p).ok();
    if let Some(d) = data_pool {
        match rados.pool_id(d) {
            Err(CephError::NoSuchPool(_)) => {
                return Err(UnfitPool(format!(
                "data pool '{d}' does not exist (list pools with `ceph osd pool ls`); create it \
                     (erasure-coded: `ceph osd pool create {d} erasure PROFILE` and `ceph osd pool \
                     set {d} allow_ec_overwrites true`) or name another --data-pool"
            )))
            }
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        if kind(d).is_some_and(|k| k.erasure && !k.ec_overwrites) {
            return Err(UnfitPool(format!(
                "data pool '{d}' is erasure-coded without overwrites, so librbd cannot write into \
                 its objects; allow them with `ceph osd pool set {d} allow_ec_overwrites true`"
            )));
        }
    }
    if kind(pool).is_some_and(|k| k.erasure) {
        let data = data_pool.unwrap_or(pool);
        return Err(UnfitPool(format!(
            "pool '{pool}' is erasure-coded: an RBD image keeps its metadata (omap) in a \
             replicated pool; give a replicated -p POOL and --data-pool {data}"
        )));
    }
    Ok(())
}

/// The lab method's cache pitfall on the OSD side: the warning for reads of `area`
/// bytes when that fits in the memory the pool's OSDs may use
/// (`osd_memory_target` summed; BlueStore's cache autotunes within it, and
/// reads are cached by default), so reads may be answered from OSD RAM
/// rather than the drives. `None` when the area is larger or the targets
/// are unknown.
pub fn cache_fit_warning(area: u64, pool: Option<&PoolSettings>) -> Option<String> {
    let p = pool?;
    let held = p.memory_held_bytes?;
    if area == 0 || area > held {
        return None;
    }
    let each: Vec<u64> = p.osd_memory_target.iter().map(|o| o.bytes).collect();
    let per = match (each.iter().min(), each.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => {
            format!("{} x {}", each.len(), crate::units::fmt_bytes(*lo))
        }
        _ => format!("{} OSDs", each.len()),
    };
    Some(format!(
        "the {} that is read fits in the pool's OSD memory ({} osd_memory_target = {}, within which \
         BlueStore sizes its cache): reads may come from OSD RAM, not the drives; use a test \
         area larger than {} to measure the drives",
        crate::units::fmt_bytes(area),
        per,
        crate::units::fmt_bytes(held),
        crate::units::fmt_bytes(held)
    ))
}

/// The pool's settings for the result document; a failed probe becomes a
/// warning (the run goes on).
pub fn pool_settings(
    rados: &Rados,
    pool: &str,
    warnings: &mut Vec<String>,
) -> Option<PoolSettings> {
    // The telemetry identity (`--telemetry-id`), when there is one, may ask
    // the OSDs what they run with; the data identity need not.
    match cluster::pool_settings(rados.telemetry(), pool) {
        Ok(s) => {
            if s.osd_memory_target
                .iter()
                .any(|m| m.source.as_deref() == Some(OsdMemory::MON_DATABASE))
            {
                warnings.push(
                    "osd_memory_target was read from the mons' configuration database: the running OSDs \
                     could not be asked (mgr `config show` needs mgr 'allow r'), so a value set in an OSD \
                     host's ceph.conf is not seen"
                        .into(),
                );
            }
            if s.memory_held_bytes.is_none() {
                warnings.push(
                    "no osd_memory_target: neither the OSDs (mgr `config show`) nor the mons (`config get osd.N osd_memory_target`) answered; the cost line is missing".into(),
                );
            }
            Some(s)
        }
        Err(e) => {
            warnings.push(format!(
                "no pool settings: reading them from the mons failed ({e}); it needs mon 'allow r'"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{OsdMemory, PoolSettings};

    fn pool(targets: &[u64]) -> PoolSettings {
        PoolSettings {
            name: "p".into(),
            id: 1,
            size: 3,
            min_size: 2,
            pg_num: 32,
            crush_rule: "replicated_rule".into(),
            device_classes: vec!["ssd".into()],
            osds: (0..targets.len() as i32).collect(),
            osd_memory_target: targets
                .iter()
                .enumerate()
                .map(|(i, &bytes)| OsdMemory {
                    osd: i as i32,
                    bytes,
                    rss_bytes: None,
                    source: None,
                })
                .collect(),
            memory_held_bytes: (!targets.is_empty()).then(|| targets.iter().sum()),
            memory_measured_bytes: None,
            memory_not_measured: None,
            osd_settings: Vec::new(),
            autoscale_mode: None,
            flags: Vec::new(),
            balancer: None,
            erasure: None,
        }
    }

    #[test]
    fn warns_when_the_read_area_fits_in_the_osds_memory() {
        let gib = 1u64 << 30;
        let p = pool(&[4 * gib; 3]);
        let w = cache_fit_warning(2 * gib, Some(&p)).expect("2 GiB fits in 12 GiB");
        assert!(
            w.contains("2 GiB") && w.contains("3 x 4 GiB") && w.contains("larger than 12 GiB"),
            "{w}"
        );
        assert!(cache_fit_warning(12 * gib, Some(&p)).is_some());
        assert_eq!(cache_fit_warning(12 * gib + 1, Some(&p)), None);
        assert_eq!(
            cache_fit_warning(gib, Some(&pool(&[]))),
            None,
            "targets unknown"
        );
        assert_eq!(cache_fit_warning(gib, None), None);
        let mixed = pool(&[4 * gib, 8 * gib]);
        assert!(cache_fit_warning(gib, Some(&mixed))
            .unwrap()
            .contains("(2 OSDs osd_memory_target = 12 GiB"));
    }
}
