//! What each OSD stores its data on, as the OSD itself reports it to the
//! mons (`ceph osd metadata`) and as CRUSH classes it (`ceph osd tree`):
//! the drive behind the numbers, so that "the slow pool" can be told apart
//! from "the pool on consumer drives". Pure parsing; [`crate::telemetry::cluster`]
//! fetches the documents. Every field is optional: releases, objectstores
//! (memstore has no block device) and hardware (no model behind a file or a
//! virtual disk) leave some out, and a missing field is `null`, never an
//! error.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One OSD's data device, DB and WAL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// CRUSH device class (`ceph osd tree`), e.g. `ssd`, or one an operator set.
    pub class: Option<String>,
    /// `bluestore`, `memstore`, ... (`osd_objectstore`).
    pub objectstore: Option<String>,
    /// BlueStore's view of the main device: `hdd` or `ssd` (`bluestore_bdev_type`).
    pub bdev_type: Option<String>,
    /// Whether the main device is rotational (`bluestore_bdev_rotational`, else `rotational`).
    pub rotational: Option<bool>,
    /// The main device's model (`bluestore_bdev_model`), when the kernel names one.
    pub model: Option<String>,
    /// Stable device ids (`device_ids`: `dev=VENDOR_MODEL_SERIAL`, comma-separated).
    pub device_ids: Option<String>,
    /// Kernel devices under the OSD (`devices`, e.g. `sdb` or `nvme0n1`).
    pub devices: Option<String>,
    /// Whether RocksDB's DB has a device of its own (`bluefs_dedicated_db`).
    pub dedicated_db: Option<bool>,
    /// Whether the WAL has a device of its own (`bluefs_dedicated_wal`).
    pub dedicated_wal: Option<bool>,
    /// The DB device's model, when dedicated (`bluefs_db_model`).
    pub db_model: Option<String>,
    /// The WAL device's model, when dedicated (`bluefs_wal_model`).
    pub wal_model: Option<String>,
}

impl DeviceInfo {
    /// One line for the text report, e.g. `class ssd, bluestore on ssd
    /// (model Samsung SSD 860), DB/WAL on the main device`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.class {
            parts.push(format!("class {c}"));
        }
        let store = self.objectstore.as_deref().unwrap_or("objectstore unknown");
        let mut on = match (&self.bdev_type, self.rotational) {
            (Some(t), _) => format!("{store} on {t}"),
            (None, Some(true)) => format!("{store} on a rotational device"),
            (None, Some(false)) => format!("{store} on a non-rotational device"),
            (None, None) => store.to_string(),
        };
        match (&self.model, &self.device_ids) {
            (Some(m), _) => on.push_str(&format!(" (model {m})")),
            (None, Some(id)) => on.push_str(&format!(" (device {id})")),
            (None, None) => {}
        }
        parts.push(on);
        let placed = |dedicated: Option<bool>, model: &Option<String>, what: &str| match dedicated {
            Some(true) => Some(format!(
                "{what} on its own device{}",
                model
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )),
            _ => None,
        };
        match (
            placed(self.dedicated_db, &self.db_model, "DB"),
            placed(self.dedicated_wal, &self.wal_model, "WAL"),
        ) {
            (None, None) if self.dedicated_db == Some(false) => {
                parts.push("DB/WAL on the main device".into())
            }
            (db, wal) => parts.extend(db.into_iter().chain(wal)),
        }
        parts.join(", ")
    }
}

fn text(m: &Value, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn flag(m: &Value, key: &str) -> Option<bool> {
    match text(m, key)?.as_str() {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

/// Parses one OSD's `osd metadata` object; `class` is its CRUSH class.
pub fn parse_osd_metadata(m: &Value, class: Option<&str>) -> DeviceInfo {
    DeviceInfo {
        class: class.map(str::to_string),
        objectstore: text(m, "osd_objectstore"),
        bdev_type: text(m, "bluestore_bdev_type"),
        rotational: flag(m, "bluestore_bdev_rotational").or_else(|| flag(m, "rotational")),
        model: text(m, "bluestore_bdev_model"),
        device_ids: text(m, "device_ids"),
        devices: text(m, "devices"),
        dedicated_db: flag(m, "bluefs_dedicated_db"),
        dedicated_wal: flag(m, "bluefs_dedicated_wal"),
        db_model: text(m, "bluefs_db_model"),
        wal_model: text(m, "bluefs_wal_model"),
    }
}

/// The CRUSH class of every OSD in `ceph osd tree -f json`.
pub fn parse_osd_classes(tree: &Value) -> Vec<(i32, String)> {
    tree.get("nodes")
        .and_then(Value::as_array)
        .map(|nodes| {
            nodes
                .iter()
                .filter(|n| n.get("type").and_then(Value::as_str) == Some("osd"))
                .filter_map(|n| {
                    let id = i32::try_from(n.get("id")?.as_i64()?).ok()?;
                    Some((id, n.get("device_class")?.as_str()?.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every OSD's device from `ceph osd metadata -f json` (an array of
/// objects with `id`) and the classes of [`parse_osd_classes`].
pub fn parse_devices(metadata: &Value, classes: &[(i32, String)]) -> Vec<(i32, DeviceInfo)> {
    metadata
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|m| {
                    let id = i32::try_from(m.get("id")?.as_i64()?).ok()?;
                    let class = classes
                        .iter()
                        .find(|(o, _)| *o == id)
                        .map(|(_, c)| c.as_str());
                    Some((id, parse_osd_metadata(m, class)))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_backed_pacific_osd() {
        let doc: Value =
            serde_json::from_str(include_str!("../tests/fixtures/pacific/osd_metadata.json"))
                .unwrap();
        let classes = vec![(0, "hdd".to_string()), (1, "consumer".to_string())];
        let d = parse_devices(&doc, &classes);
        assert_eq!(d.len(), 2);
        let (id, o) = &d[0];
        assert_eq!(*id, 0);
        assert_eq!(o.class.as_deref(), Some("hdd"));
        assert_eq!(o.objectstore.as_deref(), Some("bluestore"));
        assert_eq!(o.bdev_type.as_deref(), Some("hdd"));
        assert_eq!(o.rotational, Some(true));
        assert_eq!(o.model, None, "a file has no model");
        assert_eq!(o.device_ids, None, "empty is absent");
        assert_eq!(
            (o.dedicated_db, o.dedicated_wal),
            (Some(false), Some(false))
        );
        assert_eq!(
            o.summary(),
            "class hdd, bluestore on hdd, DB/WAL on the main device"
        );
        assert_eq!(d[1].1.class.as_deref(), Some("consumer"));
    }

    #[test]
    fn a_drive_with_its_own_db_device_and_a_memstore_osd() {
        let m = serde_json::json!({
            "id": 4, "osd_objectstore": "bluestore", "bluestore_bdev_type": "ssd",
            "bluestore_bdev_rotational": "0", "bluestore_bdev_model": "Samsung SSD 870 QVO 1TB",
            "device_ids": "sdb=Samsung_SSD_870_QVO_1TB_S5VSNJ0R123456",
            "bluefs_dedicated_db": "1", "bluefs_db_model": "INTEL SSDPE2KX010T8",
            "bluefs_dedicated_wal": "0"
        });
        let d = parse_osd_metadata(&m, Some("consumer"));
        assert_eq!(d.rotational, Some(false));
        assert_eq!(
            d.summary(),
            "class consumer, bluestore on ssd (model Samsung SSD 870 QVO 1TB), \
             DB on its own device (INTEL SSDPE2KX010T8)"
        );
        let mem = parse_osd_metadata(&serde_json::json!({"osd_objectstore": "memstore"}), None);
        assert_eq!(mem.summary(), "memstore");
        assert_eq!(mem.rotational, None);
        // Nothing known is not an error.
        assert_eq!(
            parse_osd_metadata(&Value::Null, None),
            DeviceInfo::default()
        );
        assert!(parse_devices(&serde_json::json!({"no": "array"}), &[]).is_empty());
    }

    #[test]
    fn classes_come_from_the_osd_tree() {
        let tree = serde_json::json!({"nodes": [
            {"id": -1, "type": "root", "name": "default"},
            {"id": 0, "type": "osd", "device_class": "plp"},
            {"id": 1, "type": "osd"}
        ]});
        assert_eq!(parse_osd_classes(&tree), vec![(0, "plp".to_string())]);
    }
}
