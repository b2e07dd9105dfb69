//! The settings that change results, read from the running OSDs: each
//! one's release and kernel (`osd metadata`, one mon command for all), and
//! its op scheduler, mClock profile and mClock capacity (the mgr's `config
//! show` of the running daemon, one OSD at a time: a run's pool's OSDs, or the
//! OSDs diagnose checks).
#![forbid(unsafe_code)]

use serde_json::Value;

use crate::ceph::Rados;
use crate::result::OsdSettings;

/// The options read from each checked OSD: the scheduler, the mClock
/// profile, and mClock's capacity for the OSD's kind of drive.
const OP_QUEUE: &str = "osd_op_queue";
const MCLOCK_PROFILE: &str = "osd_mclock_profile";

/// Each OSD of `osds` as `osd metadata` (`md`, the JSON list) describes it:
/// release, version and kernel; OSDs it does not list are left out.
pub fn from_metadata(md: &Value, osds: &[i32]) -> Vec<OsdSettings> {
    let text = |m: &Value, k: &str| m.get(k).and_then(Value::as_str).map(String::from);
    md.as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let osd = i32::try_from(m.get("id")?.as_i64()?).ok()?;
            osds.contains(&osd).then(|| OsdSettings {
                osd,
                release: text(m, "ceph_release"),
                version: text(m, "ceph_version_short"),
                kernel: text(m, "kernel_version"),
                rotational: text(m, "bluestore_bdev_rotational").map(|r| r == "1"),
                objectstore: text(m, "osd_objectstore"),
                min_alloc_size: text(m, "bluestore_min_alloc_size").and_then(|v| v.parse().ok()),
                ..OsdSettings::default()
            })
        })
        .collect()
}

/// A `config show WHO KEY` answer: the value as text (a JSON string, or
/// bare); `None` when empty.
pub fn parse_config_text(out: &[u8]) -> Option<String> {
    let raw = String::from_utf8_lossy(out);
    let t = raw.trim();
    let v = match serde_json::from_str::<Value>(t) {
        Ok(Value::String(s)) => s,
        Ok(Value::Number(_)) => t.to_string(),
        _ => t.trim_matches('"').to_string(),
    };
    (!v.is_empty()).then_some(v)
}

/// `key` as osd.N runs with it (mgr 'allow r'); `None` where it cannot be
/// read, or the release has no such option.
fn running(rados: &Rados, osd: i32, key: &str) -> Option<String> {
    let q = serde_json::json!({
        "prefix": "config show", "who": format!("osd.{osd}"), "key": key, "format": "json"
    });
    parse_config_text(&rados.mgr_command(&q.to_string()).ok()?.out)
}

/// The settings of `osds` (see the module); what cannot be read stays
/// empty.
pub fn read(rados: &Rados, osds: &[i32]) -> Vec<OsdSettings> {
    let md = rados
        .mon_command(r#"{"prefix":"osd metadata","format":"json"}"#)
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.out).ok())
        .unwrap_or(Value::Null);
    let mut out = from_metadata(&md, osds);
    for &osd in osds {
        if !out.iter().any(|s| s.osd == osd) {
            out.push(OsdSettings {
                osd,
                ..OsdSettings::default()
            });
        }
    }
    for s in &mut out {
        s.op_queue = running(rados, s.osd, OP_QUEUE);
        s.mclock_profile = running(rados, s.osd, MCLOCK_PROFILE);
        let capacity = match s.rotational {
            Some(false) => "osd_mclock_max_capacity_iops_ssd",
            _ => "osd_mclock_max_capacity_iops_hdd",
        };
        s.mclock_capacity_iops = running(rados, s.osd, capacity).and_then(|v| v.parse().ok());
    }
    out.sort_by_key(|s| s.osd);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(release: &str) -> Value {
        let p = format!(
            "{}/tests/fixtures/{release}/osd_metadata.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn each_release_metadata_gives_the_version() {
        for (rel, v) in [
            ("pacific", "16.2.15"),
            ("reef", "18.2.7"),
            ("tentacle", "20.2.4"),
        ] {
            let s = from_metadata(&fixture(rel), &[0]);
            assert_eq!(s.len(), 1, "{rel}");
            assert_eq!(s[0].release.as_deref(), Some(rel));
            assert_eq!(s[0].version.as_deref(), Some(v));
            assert!(s[0].kernel.is_some(), "{rel}");
        }
        assert!(from_metadata(&fixture("pacific"), &[99]).is_empty());
        assert!(from_metadata(&Value::Null, &[0]).is_empty());
    }

    #[test]
    fn config_show_answers_as_text() {
        assert_eq!(parse_config_text(b"\"wpq\"\n").as_deref(), Some("wpq"));
        assert_eq!(
            parse_config_text(b"mclock_scheduler\n").as_deref(),
            Some("mclock_scheduler")
        );
        assert_eq!(
            parse_config_text(b"315.000000").as_deref(),
            Some("315.000000")
        );
        assert_eq!(parse_config_text(b"  \n"), None);
    }
}
