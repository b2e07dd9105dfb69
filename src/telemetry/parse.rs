//! Ceph's JSON answers, parsed: the placement (`osd dump`, `pg dump
//! pgs_brief`, `pg map`, `osd stat`), the pool's settings and `config get`
//! numbers. Their error, [`ShapeError`], is that of every parser of a Ceph
//! document (those of the counters, the network and the historic ops too).
//! Pure functions; [`super::cluster`] asks the cluster.
#![forbid(unsafe_code)]

use serde_json::Value;

use super::shape::shape;
pub use super::shape::{json, ShapeError};
use crate::placement::PoolPlacement;
use crate::result::PoolSettings;

/// Reads pool `pool`'s pg_num and the epoch from `ceph osd dump -f json`.
pub fn parse_osd_dump_pool(doc: &Value, pool: i64) -> Result<(u32, u64), ShapeError> {
    let epoch = doc
        .get("epoch")
        .and_then(Value::as_u64)
        .ok_or_else(|| shape("osd dump", "no epoch"))?;
    let pools = doc
        .get("pools")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("osd dump", "no pools array"))?;
    let p = pools
        .iter()
        .find(|p| p.get("pool").and_then(Value::as_i64) == Some(pool))
        .ok_or_else(|| shape("osd dump", format!("pool {pool} not listed")))?;
    let pg_num = p
        .get("pg_num")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0 && *n <= u64::from(u32::MAX))
        .ok_or_else(|| shape("osd dump", format!("pool {pool} has no valid pg_num")))?;
    Ok((pg_num as u32, epoch))
}

/// Every OSD's (id, up, in) from `osd dump`.
pub fn parse_osd_states(doc: &Value) -> Result<Vec<(i32, bool, bool)>, ShapeError> {
    let osds = doc
        .get("osds")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("osd dump", "no osds array"))?;
    osds.iter()
        .map(|o| {
            let n = |k: &str| o.get(k).and_then(Value::as_i64);
            match (
                n("osd").and_then(|i| i32::try_from(i).ok()),
                n("up"),
                n("in"),
            ) {
                (Some(id), Some(up), Some(inn)) => Ok((id, up != 0, inn != 0)),
                _ => Err(shape("osd dump", "an OSD without osd/up/in")),
            }
        })
        .collect()
}

/// One PG's osdmap epoch and acting set (primary first) from `pg map PGID`
/// (mon), e.g. `{"epoch":13,"raw_pgid":"2.0","pgid":"2.0","up":[0,2,1],"acting":[0,2,1]}`.
pub fn parse_pg_map(doc: &Value) -> Result<(u64, Vec<i32>), ShapeError> {
    const W: &str = "pg map";
    let epoch = doc
        .get("epoch")
        .and_then(Value::as_u64)
        .ok_or_else(|| shape(W, "no epoch"))?;
    let acting = doc
        .get("acting")
        .and_then(Value::as_array)
        .ok_or_else(|| shape(W, "no acting set"))?
        .iter()
        .filter_map(Value::as_i64)
        .filter(|o| *o >= 0 && *o < i64::from(i32::MAX))
        .map(|o| o as i32)
        .collect();
    Ok((epoch, acting))
}

/// The pg_num in `osd pool get POOL pg_num` output (`{"pool":"x","pool_id":2,"pg_num":16}`).
pub fn parse_pool_pg_num(doc: &Value) -> Result<u32, ShapeError> {
    doc.get("pg_num")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0 && *n <= u64::from(u32::MAX))
        .map(|n| n as u32)
        .ok_or_else(|| shape("osd pool get pg_num", "no valid pg_num"))
}

/// The epoch in `osd stat` output.
pub fn parse_osd_stat_epoch(doc: &Value) -> Result<u64, ShapeError> {
    doc.get("epoch")
        .and_then(Value::as_u64)
        .ok_or_else(|| shape("osd stat", "no epoch"))
}

/// The caps of the first entity in an `auth get` answer, by service. The
/// key beside them is not read.
pub fn parse_auth_caps(
    doc: &Value,
) -> Result<std::collections::BTreeMap<String, String>, ShapeError> {
    let first = doc.as_array().and_then(|a| a.first()).unwrap_or(doc);
    let caps = first
        .get("caps")
        .and_then(Value::as_object)
        .ok_or_else(|| shape("auth get", "no caps object"))?;
    Ok(caps
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect())
}

/// How many of pool `pool`'s PGs are in each state, from `pg dump
/// pgs_brief` (state strings as Ceph writes them, e.g. `active+clean`).
pub fn parse_pg_states(
    doc: &Value,
    pool: i64,
) -> Result<std::collections::BTreeMap<String, u32>, ShapeError> {
    const W: &str = "pg dump pgs_brief";
    let list = doc
        .as_array()
        .or_else(|| doc.get("pg_stats").and_then(Value::as_array))
        .ok_or_else(|| shape(W, "neither an array nor {pg_stats: [...]}"))?;
    let mut states = std::collections::BTreeMap::new();
    for entry in list {
        let pgid = entry
            .get("pgid")
            .and_then(Value::as_str)
            .ok_or_else(|| shape(W, "entry without pgid"))?;
        if pgid
            .split_once('.')
            .and_then(|(p, _)| p.parse::<i64>().ok())
            != Some(pool)
        {
            continue;
        }
        let state = entry
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        *states.entry(state.to_string()).or_insert(0) += 1;
    }
    Ok(states)
}

/// Builds a pool's placement from `pg dump pgs_brief` (mgr) output, which
/// is an array (octopus and older) or `{"pg_stats": [...]}` (pacific on).
pub fn parse_pgs_brief(
    doc: &Value,
    pool: i64,
    pg_num: u32,
    epoch: u64,
) -> Result<PoolPlacement, ShapeError> {
    const W: &str = "pg dump pgs_brief";
    let list = doc
        .as_array()
        .or_else(|| doc.get("pg_stats").and_then(Value::as_array))
        .ok_or_else(|| shape(W, "neither an array nor {pg_stats: [...]}"))?;
    let mut acting = vec![Vec::new(); pg_num as usize];
    for entry in list {
        let pgid = entry
            .get("pgid")
            .and_then(Value::as_str)
            .ok_or_else(|| shape(W, "entry without pgid"))?;
        let (p, seed) = pgid
            .split_once('.')
            .ok_or_else(|| shape(W, format!("bad pgid '{pgid}'")))?;
        if p.parse::<i64>().ok() != Some(pool) {
            continue;
        }
        let seed =
            u32::from_str_radix(seed, 16).map_err(|_| shape(W, format!("bad pgid '{pgid}'")))?;
        let set: Vec<i32> = entry
            .get("acting")
            .and_then(Value::as_array)
            .ok_or_else(|| shape(W, format!("pg {pgid} without acting set")))?
            .iter()
            .filter_map(Value::as_i64)
            .filter(|o| *o >= 0 && *o < i64::from(i32::MAX))
            .map(|o| o as i32)
            .collect();
        let primary = entry
            .get("acting_primary")
            .and_then(Value::as_i64)
            .map(|o| o as i32);
        let mut ordered = set;
        if let Some(p) = primary {
            if let Some(i) = ordered.iter().position(|o| *o == p) {
                ordered.swap(0, i);
            }
        }
        if let Some(slot) = acting.get_mut(seed as usize) {
            *slot = ordered;
        }
    }
    Ok(PoolPlacement {
        pool,
        pg_num,
        acting,
        epoch,
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

/// The OSD flags `osd dump` says are set (`flags_set`, else its `flags`
/// text), less those every current cluster has.
pub fn parse_osd_flags(dump: &Value) -> Vec<String> {
    const ALWAYS: [&str; 4] = [
        "sortbitwise",
        "recovery_deletes",
        "purged_snapdirs",
        "pglog_hardlimit",
    ];
    let set: Vec<String> = match dump.get("flags_set").and_then(Value::as_array) {
        Some(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        None => dump
            .get("flags")
            .and_then(Value::as_str)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
    };
    let mut out: Vec<String> = set
        .into_iter()
        .filter(|f| !ALWAYS.contains(&f.as_str()))
        .collect();
    out.sort();
    out
}

/// `balancer status`: its mode and whether it is active (`upmap, active`,
/// `upmap, off`).
pub fn parse_balancer(status: &Value) -> Option<String> {
    let mode = status.get("mode")?.as_str()?;
    let active = status.get("active")?.as_bool()?;
    Some(format!("{mode}, {}", if active { "active" } else { "off" }))
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
        memory_not_measured: None,
        erasure: None,
        osd_settings: Vec::new(),
        autoscale_mode: get
            .get("pg_autoscale_mode")
            .and_then(Value::as_str)
            .map(String::from),
        flags: ["noscrub", "nodeep-scrub"]
            .into_iter()
            .filter(|f| get.get(*f).and_then(Value::as_bool) == Some(true))
            .map(String::from)
            .collect(),
        balancer: None,
    })
}

/// Whether a pool is erasure-coded and allows partial overwrites, from `osd
/// pool get POOL all`: what RBD needs of a pool (its metadata a replicated
/// pool, its data a replicated pool or an erasure-coded one with
/// `allow_ec_overwrites`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolKind {
    /// The pool has an erasure-code profile.
    pub erasure: bool,
    /// `allow_ec_overwrites` (false for a replicated pool, which needs none).
    pub ec_overwrites: bool,
}

/// [`PoolKind`] from `osd pool get POOL all`.
pub fn parse_pool_kind(get: &Value) -> PoolKind {
    let erasure = get
        .get("erasure_code_profile")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    PoolKind {
        erasure,
        ec_overwrites: erasure
            && get
                .get("allow_ec_overwrites")
                .and_then(Value::as_bool)
                .unwrap_or(false),
    }
}

/// An erasure-coded pool's layout from `osd pool get POOL all` (`get`:
/// its `erasure_code_profile`, `allow_ec_overwrites`), `osd
/// erasure-code-profile get` (`profile`: k, m, plugin, technique, failure
/// domain; every value a string) and the pool's `stripe_width` from `osd
/// dump`. `None` for a replicated pool (no profile in `get`).
pub fn parse_erasure(
    get: &Value,
    profile: &Value,
    stripe_width: u64,
) -> Result<Option<crate::result::ErasureLayout>, ShapeError> {
    const W: &str = "osd erasure-code-profile get";
    let Some(name) = get
        .get("erasure_code_profile")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return Ok(None);
    };
    let text = |k: &str| profile.get(k).and_then(Value::as_str).map(str::to_string);
    let num = |k: &str| -> Result<u32, ShapeError> {
        text(k)
            .and_then(|v| v.parse().ok())
            .filter(|v| *v > 0)
            .ok_or_else(|| shape(W, format!("no number '{k}'")))
    };
    let k = num("k")?;
    Ok(Some(crate::result::ErasureLayout {
        profile: name.to_string(),
        k,
        m: num("m")?,
        plugin: text("plugin").ok_or_else(|| shape(W, "no 'plugin'"))?,
        technique: text("technique").filter(|t| !t.is_empty()),
        stripe_unit: stripe_width / u64::from(k),
        failure_domain: text("crush-failure-domain").unwrap_or_else(|| "host".into()),
        allow_ec_overwrites: get
            .get("allow_ec_overwrites")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }))
}

/// A pool's `stripe_width` from `osd dump` (0 for a replicated pool).
pub fn parse_stripe_width(dump: &Value, pool_id: i64) -> Result<u64, ShapeError> {
    dump.get("pools")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|p| p.get("pool").and_then(Value::as_i64) == Some(pool_id))
        })
        .and_then(|p| p.get("stripe_width").and_then(Value::as_u64))
        .ok_or_else(|| shape("osd dump", format!("no stripe_width of pool {pool_id}")))
}

/// Whether `osd dump`'s `removed_snaps_queue` holds snapshots of any of
/// `pool_ids` (removed, not yet purged by the OSDs). Pure.
pub fn snaps_queued(dump: &Value, pool_ids: &[i64]) -> bool {
    dump.get("removed_snaps_queue")
        .and_then(Value::as_array)
        .is_some_and(|q| {
            q.iter().any(|e| {
                e.get("pool")
                    .and_then(Value::as_i64)
                    .is_some_and(|p| pool_ids.contains(&p))
                    && e.get("snaps")
                        .and_then(Value::as_array)
                        .is_some_and(|s| !s.is_empty())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_pgs_brief_shapes() {
        let pacific = serde_json::json!({"pg_ready": true, "pg_stats": [
            {"pgid": "3.0", "state": "active+clean", "up": [1, 0, 2], "up_primary": 1, "acting": [1, 0, 2], "acting_primary": 1},
            {"pgid": "3.1", "state": "active+clean", "up": [2, 1, 0], "up_primary": 2, "acting": [0, 2, 1], "acting_primary": 2},
            {"pgid": "4.0", "state": "active+clean", "up": [0], "up_primary": 0, "acting": [0], "acting_primary": 0}
        ]});
        let p = parse_pgs_brief(&pacific, 3, 2, 7).unwrap();
        assert_eq!(p.acting, vec![vec![1, 0, 2], vec![2, 0, 1]]);
        assert_eq!(p.primary_of_pg(1), Some(2));
        assert_eq!(p.osds(), vec![0, 1, 2]);
        let octopus = serde_json::json!([{"pgid": "3.0", "acting": [5], "acting_primary": 5}]);
        assert_eq!(
            parse_pgs_brief(&octopus, 3, 1, 1).unwrap().primary_of_pg(0),
            Some(5)
        );
        assert!(parse_pgs_brief(&serde_json::json!({"x": 1}), 3, 1, 1).is_err());
        assert!(parse_pgs_brief(&serde_json::json!([{"pgid": "zz"}]), 3, 1, 1).is_err());
    }

    #[test]
    fn pg_states_of_one_pool_and_auth_caps_without_the_key() {
        let d = serde_json::json!({"pg_stats": [
            {"pgid": "3.0", "state": "undersized+peered", "acting": [1]},
            {"pgid": "3.1", "state": "undersized+peered", "acting": [2]},
            {"pgid": "3.2", "state": "active+clean", "acting": [0, 1, 2]},
            {"pgid": "4.0", "state": "unknown", "acting": []}
        ]});
        let s = parse_pg_states(&d, 3).unwrap();
        assert_eq!(s.get("undersized+peered"), Some(&2));
        assert_eq!(s.get("active+clean"), Some(&1));
        assert_eq!(s.get("unknown"), None);
        let pgs = crate::telemetry::cluster::PgStates {
            pg_num: 4,
            states: [
                ("undersized+peered".to_string(), 2),
                ("active+clean".to_string(), 1),
                ("unknown".to_string(), 1),
            ]
            .into_iter()
            .collect(),
        };
        assert_eq!(pgs.inactive(), 3);
        assert_eq!(pgs.inactive_states(), "undersized+peered: 2, unknown: 1");
        let auth = serde_json::json!([{"entity": "client.x", "key": "AQD-not-a-key==",
            "caps": {"mon": "allow r", "osd": "allow rw pool=a"}}]);
        let caps = parse_auth_caps(&auth).unwrap();
        assert_eq!(caps.len(), 2);
        assert_eq!(caps["osd"], "allow rw pool=a");
        assert!(!format!("{caps:?}").contains("AQD"));
    }

    #[test]
    fn pg_map_and_small_mon_answers() {
        let d = serde_json::json!({"epoch":13,"raw_pgid":"2.0","pgid":"2.0","up":[0,2,1],"acting":[1,2,0]});
        assert_eq!(parse_pg_map(&d).unwrap(), (13, vec![1, 2, 0]));
        assert!(parse_pg_map(&serde_json::json!({"epoch": 1})).is_err());
        let g = serde_json::json!({"pool":"x","pool_id":2,"pg_num":16});
        assert_eq!(parse_pool_pg_num(&g).unwrap(), 16);
        assert!(parse_pool_pg_num(&serde_json::json!({"pg_num": 0})).is_err());
        let st = serde_json::json!({"epoch":13,"num_osds":3});
        assert_eq!(parse_osd_stat_epoch(&st).unwrap(), 13);
    }

    #[test]
    fn osd_dump_pool_lookup() {
        let d = serde_json::json!({"epoch": 42, "pools": [{"pool": 3, "pool_name": "x", "pg_num": 32}]});
        assert_eq!(parse_osd_dump_pool(&d, 3).unwrap(), (32, 42));
        assert!(parse_osd_dump_pool(&d, 4).is_err());
        assert!(parse_osd_dump_pool(&serde_json::json!({"epoch": 1}), 3).is_err());
    }

    #[test]
    fn osd_flags_and_the_balancer_read_as_set() {
        let dump = serde_json::json!({
            "flags": "noout,sortbitwise,recovery_deletes,purged_snapdirs,pglog_hardlimit,noscrub",
            "flags_set": ["noout", "noscrub", "pglog_hardlimit", "purged_snapdirs",
                          "recovery_deletes", "sortbitwise"]
        });
        assert_eq!(parse_osd_flags(&dump), ["noout", "noscrub"]);
        let text_only = serde_json::json!({"flags": "sortbitwise,nodeep-scrub"});
        assert_eq!(parse_osd_flags(&text_only), ["nodeep-scrub"]);
        assert!(parse_osd_flags(&serde_json::json!({})).is_empty());
        let on = serde_json::json!({"active": true, "mode": "upmap", "plans": []});
        assert_eq!(parse_balancer(&on).as_deref(), Some("upmap, active"));
        let off = serde_json::json!({"active": false, "mode": "none"});
        assert_eq!(parse_balancer(&off).as_deref(), Some("none, off"));
        assert_eq!(parse_balancer(&serde_json::json!({"mode": "upmap"})), None);
    }

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

    #[test]
    fn a_pool_kind_says_erasure_and_overwrites() {
        let ec = serde_json::json!({"pool":"e","size":3,"erasure_code_profile":"p",
            "allow_ec_overwrites":false});
        assert_eq!(
            parse_pool_kind(&ec),
            PoolKind {
                erasure: true,
                ec_overwrites: false
            }
        );
        let ecw = serde_json::json!({"erasure_code_profile":"p","allow_ec_overwrites":true});
        assert!(parse_pool_kind(&ecw).ec_overwrites);
        let rep = serde_json::json!({"pool":"r","size":3,"min_size":2});
        assert_eq!(
            parse_pool_kind(&rep),
            PoolKind {
                erasure: false,
                ec_overwrites: false
            }
        );
    }

    #[test]
    fn an_erasure_coded_pool_is_described_by_its_profile() {
        let get = serde_json::json!({"pool":"ec21","pool_id":26,"size":3,"min_size":2,
            "pg_num":16,"crush_rule":"ec21","allow_ec_overwrites":true,
            "erasure_code_profile":"cb21"});
        let profile = serde_json::json!({"crush-device-class":"","crush-failure-domain":"osd",
            "crush-root":"default","jerasure-per-chunk-alignment":"false","k":"2","m":"1",
            "plugin":"jerasure","technique":"reed_sol_van","w":"8"});
        let e = parse_erasure(&get, &profile, 8192).unwrap().unwrap();
        assert_eq!((e.k, e.m, e.stripe_unit), (2, 1, 4096));
        assert_eq!(e.plugin, "jerasure");
        assert_eq!(e.technique.as_deref(), Some("reed_sol_van"));
        assert_eq!(e.failure_domain, "osd");
        assert!(e.allow_ec_overwrites);
        let replicated = serde_json::json!({"pool":"r","size":3});
        assert_eq!(parse_erasure(&replicated, &profile, 0).unwrap(), None);
        let bad = serde_json::json!({"k":"two","m":"1","plugin":"isa"});
        assert!(parse_erasure(&get, &bad, 8192).is_err());
        let dump = serde_json::json!({"pools":[{"pool":26,"stripe_width":8192}]});
        assert_eq!(parse_stripe_width(&dump, 26).unwrap(), 8192);
        assert!(parse_stripe_width(&dump, 27).is_err());
    }

    #[test]
    fn snaps_queued_reads_the_removed_snaps_queue() {
        let d: Value = serde_json::from_str(
            r#"{"removed_snaps_queue":[{"pool":8,"snaps":[{"begin":2,"length":1}]}]}"#,
        )
        .unwrap();
        assert!(snaps_queued(&d, &[8]));
        assert!(!snaps_queued(&d, &[7]));
        let empty: Value = serde_json::from_str(r#"{"removed_snaps_queue":[]}"#).unwrap();
        assert!(!snaps_queued(&empty, &[8]));
    }
}
