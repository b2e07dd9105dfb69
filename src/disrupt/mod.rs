//! `--disrupt`: client I/O through an OSD failure. An OSD is taken out,
//! marked down or stopped at set times of a job and put back
//! ([`spec`]: the plan); a thread of its own does it beside the job, looks
//! at the cluster every second and restores the OSD on every way out
//! ([`run`]); the job's timeline is cut into phases — before, degraded,
//! recovering, after — and each gets its figures ([`phases`]).
#![forbid(unsafe_code)]

pub mod phases;
pub mod run;
pub mod spec;

pub use phases::JobTimeline;
pub use run::{check, CheckError, Disruptor};
pub use spec::DisruptPlan;

use crate::result::disruption::{Disruption, Look, Phase, PhaseKind};

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
        if let Some(rate) = self.recovery_rate() {
            s.push_str(&format!(
                "; recovery {rate} (the mean of the looks that saw it)"
            ));
        }
        s
    }

    /// Recovery's one rate figure: the mean of the mgr's recovering rates
    /// over the looks that saw recovery, the same in the recovery line and
    /// in the not-quiet line ([`crate::report::not_quiet`]); `None` when no
    /// look saw any.
    pub fn recovery_rate(&self) -> Option<String> {
        let r = &self.recovery;
        (r.mean_objects_per_sec > 0.0 || r.mean_bytes_per_sec > 0.0).then(|| {
            format!(
                "{:.0} objects/s, {}/s",
                r.mean_objects_per_sec,
                crate::units::fmt_bytes(r.mean_bytes_per_sec as u64)
            )
        })
    }

    /// A phase's name as the PG states seen during it were: the phase after
    /// the first disruptive action is `degraded` only where a look in it saw
    /// degraded objects (copies missing), else `misplaced` (objects not yet
    /// where CRUSH wants them, e.g. on an OSD that is out, every copy
    /// there), else `PGs not clean`, else `no PG change seen`; the others
    /// keep their kind's name.
    pub fn phase_name(&self, p: &Phase) -> &'static str {
        if p.phase != PhaseKind::Degraded {
            return p.phase.as_str();
        }
        let looks: Vec<&Look> = self
            .looks
            .iter()
            .filter(|l| l.t_s >= p.from_s && l.t_s <= p.to_s)
            .collect();
        if looks.iter().any(|l| l.degraded_objects > 0) {
            "degraded"
        } else if looks.iter().any(|l| l.misplaced_objects > 0) {
            "misplaced"
        } else if looks.iter().any(|l| l.pgs_not_clean > 0) {
            "PGs not clean"
        } else {
            "no PG change seen"
        }
    }

    /// The actions in words, e.g. `out@5s sent at 5.00 s, in effect at
    /// 5.75 s, in@20s at 20.01 s`: an action acknowledged 50 ms or more
    /// after it was sent gives both times (the mon answers an `osd out` once
    /// the new osdmap is committed, which paxos batches:
    /// `paxos_propose_interval`, 1 s by default).
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
                    // Sent on time; in effect when the mon answered (it
                    // commits osdmap changes in batches: 0.75 and 0.95 s
                    // after sending, measured on pacific).
                    (None, Some(d), Some(s)) if d - s >= 0.05 => {
                        format!("{what} sent at {s:.2} s, in effect at {d:.2} s")
                    }
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
