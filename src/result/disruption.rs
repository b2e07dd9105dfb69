//! What `--disrupt` did and what the client saw (`disruption` in the
//! result): the actions, the looks at the cluster, each job's figures per
//! phase and recovery (`disrupt` plans, runs and cuts the phases).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// What is done to the OSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// `ceph osd out N`: its PGs move elsewhere (the daemon keeps running).
    Out,
    /// `ceph osd in N`: back in (undoes `out`).
    In,
    /// `ceph osd down N`: marked down; the running daemon says it was
    /// wrongly marked down and comes back up by itself within seconds.
    Down,
    /// `systemctl stop ceph-osd@N` (the OSD must run on this host).
    Stop,
    /// `systemctl start ceph-osd@N` (undoes `stop`).
    Start,
}

/// What `--disrupt` did and what the client saw (`disruption` in the
/// result). Times are seconds from the job's start (the timeline's clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disruption {
    /// The OSD.
    pub osd: i32,
    /// The spec as given.
    pub spec: String,
    /// Each action: asked for, sent, acknowledged; and the OSD put back at
    /// the end (`on_exit`).
    pub actions: Vec<ActionDone>,
    /// Each job's figures per phase, in time order.
    #[serde(deserialize_with = "phases_from_file")]
    pub phases: Vec<Phase>,
    /// When recovery began and ended, and how fast it went.
    pub recovery: Recovery,
    /// The looks at the cluster (one every `poll_s`), also after the job
    /// while waiting for active+clean.
    pub looks: Vec<Look>,
    /// Looks beyond [`MAX_LOOKS`], not kept (nor used).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub looks_left_out: u64,
    /// Seconds between looks.
    pub poll_s: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// At most this many looks are kept (an hour at one a second).
pub const MAX_LOOKS: usize = 3600;

/// One action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionDone {
    /// What.
    pub action: Action,
    /// When the plan asked for it (null: the OSD put back at the end).
    pub asked_s: Option<f64>,
    /// When the command was sent (null: never).
    pub sent_s: Option<f64>,
    /// When it was acknowledged: the mon committed the new osdmap, or
    /// `systemctl` returned (null: it failed or was not sent).
    pub done_s: Option<f64>,
    /// Done at the end of the run to put the OSD back (the job ended, was
    /// interrupted or failed before the plan's own action).
    #[serde(default)]
    pub on_exit: bool,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One look at the cluster (`status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// When.
    pub t_s: f64,
    /// PGs in the cluster.
    pub pgs: u32,
    /// PGs not active+clean.
    pub pgs_not_clean: u32,
    /// A PG recovering or backfilling (or waiting to), by its state (the
    /// mgr's rates lag: they stay up for seconds after a recovery ended).
    pub recovering: bool,
    /// `pgmap.degraded_objects`.
    #[serde(default)]
    pub degraded_objects: u64,
    /// `pgmap.misplaced_objects`.
    #[serde(default)]
    pub misplaced_objects: u64,
    /// `pgmap.recovering_objects_per_sec`.
    pub recovering_objects_per_sec: f64,
    /// `pgmap.recovering_bytes_per_sec`.
    pub recovering_bytes_per_sec: f64,
    /// OSDs up.
    pub osds_up: u32,
    /// OSDs in.
    pub osds_in: u32,
}

/// A phase of the disruption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseKind {
    /// Before the first action.
    Before,
    /// The OSD out, down or stopped; recovery not yet begun.
    Degraded,
    /// Recovery under way, PGs not all active+clean.
    Recovering,
    /// Active+clean again.
    After,
}

/// One job's figures in one phase (see `disrupt::phases` for how each is taken).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// The job's name.
    pub job: String,
    /// Which phase.
    pub phase: PhaseKind,
    /// Its first interval's start.
    pub from_s: f64,
    /// Its last interval's end.
    pub to_s: f64,
    /// Its intervals' length, summed (the ramp's left out).
    pub duration_s: f64,
    /// Ops completed.
    pub ops: u64,
    /// Ops failed.
    pub errors: u64,
    /// ops / duration.
    pub iops: f64,
    /// Mean completion latency, ns.
    pub mean_ns: f64,
    /// Its own p99, ns: from its intervals' histograms merged.
    pub p99_ns: Option<u64>,
    /// The highest of its intervals' p99s, ns (a short stall shows here,
    /// not in `p99_ns`).
    #[serde(default)]
    pub worst_interval_p99_ns: Option<u64>,
    /// The slowest op, ns.
    pub max_ns: Option<u64>,
    /// The longest time without a completion, s.
    pub longest_stall_s: f64,
}

/// Phases as a file holds them. Files from before a phase had a p99 of its
/// own hold the worst interval's in `p99_ns` (and no `worst_interval_p99_ns`,
/// which is never absent where a p99 is present today): it moves there.
fn phases_from_file<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Phase>, D::Error> {
    let mut phases = Vec::<Phase>::deserialize(d)?;
    for p in &mut phases {
        if p.worst_interval_p99_ns.is_none() {
            p.worst_interval_p99_ns = p.p99_ns.take();
        }
    }
    Ok(phases)
}

/// Recovery, from the looks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// The first action that took something away took effect.
    pub degraded_from_s: Option<f64>,
    /// Recovery began (see `disrupt::phases`).
    pub recovering_from_s: Option<f64>,
    /// The first look that found every PG active+clean after the last action.
    pub clean_at_s: Option<f64>,
    /// From the last action to `clean_at_s`.
    pub clean_after_last_action_s: Option<f64>,
    /// The job's end.
    pub job_end_s: f64,
    /// Whether active+clean came before the job's end.
    pub clean_by_job_end: bool,
    /// How long the run waited after the job for active+clean.
    pub waited_after_job_s: f64,
    /// The most it would wait.
    pub wait_limit_s: f64,
    /// Recovery's highest rate, objects/s (the mgr's `recovering_objects_per_sec`).
    pub max_objects_per_sec: f64,
    /// Recovery's highest rate, bytes/s.
    pub max_bytes_per_sec: f64,
    /// The mean of the rates of the looks that saw recovery, objects/s.
    pub mean_objects_per_sec: f64,
    /// The same, bytes/s.
    pub mean_bytes_per_sec: f64,
    /// The most objects degraded at one look, from the first action until
    /// active+clean (`degraded_objects`: copies missing).
    #[serde(default)]
    pub max_degraded_objects: u64,
    /// The most objects misplaced at one look (`misplaced_objects`: not
    /// where CRUSH wants them, e.g. still on an OSD that is out).
    #[serde(default)]
    pub max_misplaced_objects: u64,
    /// Why the wait was cut short (an interrupt), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
