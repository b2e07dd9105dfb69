//! `--disrupt`: client I/O through an OSD failure. An OSD is taken out,
//! marked down or stopped at set times of a job and put back
//! ([`spec`]: the plan); a thread of its own does it beside the job, looks
//! at the cluster every second and restores the OSD on every way out
//! ([`run`]); the job's timeline is cut into phases — before, degraded,
//! recovering, after — and each gets its figures ([`phases`]).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

pub mod phases;
pub mod run;
pub mod spec;

pub use run::{check, restore_now, CheckError, Disruptor};
pub use spec::{Action, DisruptPlan};

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

impl PhaseKind {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::Before => "before",
            PhaseKind::Degraded => "degraded",
            PhaseKind::Recovering => "recovering",
            PhaseKind::After => "after",
        }
    }
}

/// One job's figures in one phase (see [`phases`] for how each is taken).
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
    /// The highest of its intervals' p99, ns: at most 1 % of the phase's
    /// ops were slower.
    pub p99_ns: Option<u64>,
    /// The slowest op, ns.
    pub max_ns: Option<u64>,
    /// The longest time without a completion, s.
    pub longest_stall_s: f64,
}

/// Recovery, from the looks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// The first action that took something away took effect.
    pub degraded_from_s: Option<f64>,
    /// Recovery began (see [`phases`]).
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

impl Disruption {
    /// The one line on recovery the reports print, e.g. `active+clean 3.9 s
    /// after the last action (in@20s); recovery up to 120 objects/s, 480
    /// KiB/s (mean 80 objects/s, 320 KiB/s)`.
    pub fn recovery_line(&self) -> String {
        let r = &self.recovery;
        let last = self
            .actions
            .iter()
            .rev()
            .find(|a| a.done_s.is_some())
            .map(|a| format!(" ({})", a.action))
            .unwrap_or_default();
        let mut s = match (r.clean_after_last_action_s, r.clean_by_job_end) {
            (Some(c), true) => format!("active+clean {c:.1} s after the last action{last}"),
            (Some(c), false) => format!(
                "active+clean {c:.1} s after the last action{last}, {:.1} s after the job's end",
                r.waited_after_job_s
            ),
            (None, _) if r.note.is_some() => format!(
                "active+clean not reached by the job's end; {}",
                r.note.as_deref().unwrap_or_default()
            ),
            (None, _) if r.recovering_from_s.is_none() && r.degraded_from_s.is_some() => {
                "recovery did not begin".into()
            }
            (None, _) if r.degraded_from_s.is_none() => "no action took effect".into(),
            (None, _) => format!(
                "active+clean not reached: not by the job's end, nor {:.0} s after it",
                r.waited_after_job_s
            ),
        };
        if r.max_degraded_objects > 0 || r.max_misplaced_objects > 0 {
            s.push_str(&format!(
                "; up to {} objects degraded, {} misplaced",
                r.max_degraded_objects, r.max_misplaced_objects
            ));
        }
        if r.recovering_from_s.is_some()
            && r.max_objects_per_sec == 0.0
            && r.max_bytes_per_sec == 0.0
        {
            s.push_str("; no recovery traffic seen (the mgr's recovering rates stayed 0)");
        }
        if r.max_objects_per_sec > 0.0 || r.max_bytes_per_sec > 0.0 {
            s.push_str(&format!(
                "; recovery up to {:.0} objects/s, {}/s (mean {:.0} objects/s, {}/s)",
                r.max_objects_per_sec,
                crate::units::fmt_bytes(r.max_bytes_per_sec as u64),
                r.mean_objects_per_sec,
                crate::units::fmt_bytes(r.mean_bytes_per_sec as u64)
            ));
        }
        s
    }

    /// The actions in words, e.g. `out@5s at 5.03 s, in@20s at 20.01 s`.
    pub fn actions_line(&self) -> String {
        self.actions
            .iter()
            .map(|a| {
                let what = match a.asked_s {
                    Some(t) => format!("{}@{}", a.action, spec::secs(secs_of(t))),
                    None => format!("{} on exit", a.action),
                };
                match (&a.error, a.done_s, a.sent_s) {
                    (Some(e), _, _) => format!("{what} FAILED ({e})"),
                    (None, Some(d), _) => format!("{what} at {d:.2} s"),
                    (None, None, Some(s)) => format!("{what} sent at {s:.2} s"),
                    (None, None, None) => format!("{what} not done"),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn secs_of(t: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(t.max(0.0))
}
