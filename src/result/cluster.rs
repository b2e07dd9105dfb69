//! The cluster around and during a job (`cluster_state` in the result): the
//! looks before and after, and what was not quiet in between
//! (`telemetry::quiet` looks, polls and folds what changed into events).
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// At most this many events are kept (a flapping condition on a run of
/// hours); the rest are counted in [`ClusterState::events_left_out`].
pub const MAX_EVENTS: usize = 256;

/// At most this many PG ids are kept per scrub event (the count is exact).
pub const MAX_PG_IDS: usize = 32;

/// One health check (`ceph health detail`'s name, severity and summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthCheck {
    /// Its code, e.g. `OSDMAP_FLAGS`.
    pub name: String,
    /// `HEALTH_WARN` or `HEALTH_ERR`.
    pub severity: String,
    /// Its summary, e.g. `noout flag(s) set`.
    pub message: String,
}

/// One look at the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSnapshot {
    /// When, seconds from the job's start (negative: before it).
    pub t_s: f64,
    /// `HEALTH_OK`, `HEALTH_WARN` or `HEALTH_ERR`.
    pub health: String,
    /// The health checks raised (muted ones left out).
    #[serde(default)]
    pub checks: Vec<HealthCheck>,
    /// PGs in the cluster.
    pub pgs: u32,
    /// PGs not active+clean, by state (a scrub alone does not count).
    #[serde(default)]
    pub pgs_not_clean: BTreeMap<String, u32>,
    /// PGs scrubbing (not deep).
    #[serde(default)]
    pub scrubbing: u32,
    /// PGs deep-scrubbing.
    #[serde(default)]
    pub deep_scrubbing: u32,
    /// Which PGs scrub (not deep), when the mgr said (at most [`MAX_PG_IDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scrubbing_pgs: Vec<String>,
    /// Which PGs deep-scrub, when the mgr said (at most [`MAX_PG_IDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deep_scrubbing_pgs: Vec<String>,
    /// Recovery and backfill, objects per second (`pgmap.recovering_objects_per_sec`).
    #[serde(default)]
    pub recovering_objects_per_sec: f64,
    /// Recovery and backfill, bytes per second (`pgmap.recovering_bytes_per_sec`).
    #[serde(default)]
    pub recovering_bytes_per_sec: f64,
    /// The osdmap epoch.
    pub osdmap_epoch: u64,
    /// OSDs in the map.
    pub osds: u32,
    /// OSDs up.
    pub osds_up: u32,
    /// OSDs in.
    pub osds_in: u32,
    /// The OSDs down (when `osd dump` was read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub osds_down: Vec<i32>,
    /// The OSDs out (when `osd dump` was read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub osds_out: Vec<i32>,
}

/// What was not quiet for a while: a health check raised, scrubs or deep
/// scrubs running, PGs in a state other than active+clean, recovery, or a
/// change of the osdmap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterEvent {
    /// `health`, `scrub`, `deep_scrub`, `pgs_not_clean`, `recovery` or `osdmap`.
    pub kind: String,
    /// First seen, seconds from the job's start (an osdmap change: the look
    /// before it).
    pub from_s: f64,
    /// Last seen (an osdmap change: the look that saw it).
    pub to_s: f64,
    /// Still seen at the look after the job.
    pub until_end: bool,
    /// The check's name (`health`), the PG state (`pgs_not_clean`), empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// A health check's severity (`HEALTH_WARN`, `HEALTH_ERR`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub severity: String,
    /// In words: the check's summary, the OSDs that changed, the rates.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The most PGs at once (scrubs: every PG seen scrubbing; PG states:
    /// the most in that state at one look).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgs: Option<u32>,
    /// The PGs seen scrubbing (at most [`MAX_PG_IDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pg_ids: Vec<String>,
    /// Recovery: the highest rate seen, objects per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_objects_per_sec: Option<f64>,
    /// Recovery: the highest rate seen, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes_per_sec: Option<f64>,
    /// osdmap: the epochs before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epochs: Option<(u64, u64)>,
}

/// The cluster around and during one job (`cluster_state` in the result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    /// The look before the job (null: it failed).
    pub before: Option<ClusterSnapshot>,
    /// The look after it (null: it failed or was skipped).
    pub after: Option<ClusterSnapshot>,
    /// What was not quiet, in order of when it was first seen.
    pub events: Vec<ClusterEvent>,
    /// Events beyond [`MAX_EVENTS`], not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events_left_out: u64,
    /// Seconds between the looks during the job.
    pub poll_s: f64,
    /// Looks taken (before, during and after).
    pub looks: u32,
    /// Whether every look found the cluster quiet and nothing changed.
    pub quiet: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
