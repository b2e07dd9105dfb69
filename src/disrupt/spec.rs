//! `--disrupt osd.N:out@20s,in@60s`: the plan, parsed and checked. Pure.
//!
//! Times are seconds from the job's start, on the timeline's clock (the
//! ramp included). Each action must make sense after the ones before it:
//! `in` only after `out`, `start` only after `stop`, nothing while the
//! OSD is stopped but `start`; times rise strictly.
#![forbid(unsafe_code)]

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::result::disruption::Action;

impl Action {
    /// The word of the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Out => "out",
            Action::In => "in",
            Action::Down => "down",
            Action::Stop => "stop",
            Action::Start => "start",
        }
    }

    fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "out" => Action::Out,
            "in" => Action::In,
            "down" => Action::Down,
            "stop" => Action::Stop,
            "start" => Action::Start,
            _ => return None,
        })
    }

    /// Whether this action takes something away (`out`, `down`, `stop`).
    pub fn disrupts(self) -> bool {
        matches!(self, Action::Out | Action::Down | Action::Stop)
    }

    /// Whether it runs `systemctl` on this host.
    pub fn is_local(self) -> bool {
        matches!(self, Action::Stop | Action::Start)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One action at its time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// What.
    pub action: Action,
    /// When, from the job's start.
    pub at: Duration,
}

/// A parsed `--disrupt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisruptPlan {
    /// The OSD.
    pub osd: i32,
    /// Its actions, in time order.
    pub steps: Vec<Step>,
    /// The spec as given (for the report).
    pub spec: String,
}

/// The most actions one spec may hold.
pub const MAX_STEPS: usize = 16;

/// Parses `osd.N:ACTION@TIME[,ACTION@TIME...]` (times as `--duration`
/// takes them: `20`, `20s`, `500ms`, `1m`). The error is one line naming
/// the fix.
pub fn parse(spec: &str) -> Result<DisruptPlan, String> {
    const FORM: &str = "give osd.N:ACTION@TIME[,ACTION@TIME...], e.g. osd.1:out@20s,in@60s \
                        (actions: out, in, down, stop, start)";
    let s = spec.trim();
    let (osd, list) = s
        .split_once(':')
        .ok_or_else(|| format!("'{spec}' names no actions: {FORM}"))?;
    let osd: i32 = osd
        .strip_prefix("osd.")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("'{osd}' is not an OSD: {FORM}"))?;
    let mut steps = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        let (a, t) = part
            .split_once('@')
            .ok_or_else(|| format!("'{part}' has no time: {FORM}"))?;
        let action =
            Action::parse(a.trim()).ok_or_else(|| format!("'{a}' is not an action: {FORM}"))?;
        let at = crate::units::parse_duration(t).map_err(|e| format!("'{part}': {e}: {FORM}"))?;
        steps.push(Step { action, at });
    }
    if steps.len() > MAX_STEPS {
        return Err(format!("{} actions: give at most {MAX_STEPS}", steps.len()));
    }
    check_order(&steps)?;
    Ok(DisruptPlan {
        osd,
        steps,
        spec: s.to_string(),
    })
}

/// Times rise strictly; each action follows one it makes sense after.
fn check_order(steps: &[Step]) -> Result<(), String> {
    let (mut out, mut stopped) = (false, false);
    let mut prev: Option<&Step> = None;
    for s in steps {
        let here = format!("{}@{}", s.action, secs(s.at));
        if let Some(p) = prev {
            if s.at <= p.at {
                return Err(format!(
                    "{here} is not after {}@{}: give the actions in time order, each later \
                     than the one before",
                    p.action,
                    secs(p.at)
                ));
            }
        }
        let bad = match s.action {
            Action::Out if out => Some("the OSD is already out: drop it or put an `in` before it"),
            Action::In if !out => Some("the OSD is not out: `in` undoes an earlier `out`"),
            Action::Stop if stopped => Some("the OSD is already stopped: put a `start` before it"),
            Action::Start if !stopped => {
                Some("the OSD is not stopped: `start` undoes an earlier `stop`")
            }
            Action::Down | Action::Out | Action::In if stopped => {
                Some("the OSD is stopped: `start` it first")
            }
            _ => None,
        };
        if let Some(why) = bad {
            return Err(format!("{here}: {why}"));
        }
        match s.action {
            Action::Out => out = true,
            Action::In => out = false,
            Action::Stop => stopped = true,
            Action::Start => stopped = false,
            Action::Down => {}
        }
        prev = Some(s);
    }
    Ok(())
}

/// A time as the spec writes it: `20s`, `2.5s`.
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0}s")
    } else {
        format!("{}s", (s * 1000.0).round() / 1000.0)
    }
}

impl DisruptPlan {
    /// Whether an action runs `systemctl` on this host.
    pub fn is_local(&self) -> bool {
        self.steps.iter().any(|s| s.action.is_local())
    }

    /// Every action before `end` (the job's end on its clock: ramp plus
    /// duration); else the first that is not, in one line naming the fix.
    pub fn within(&self, end: Duration) -> Result<(), String> {
        match self.steps.iter().find(|s| s.at >= end) {
            Some(s) => Err(format!(
                "--disrupt: {}@{} is not before the job's end ({} with the ramp): give a \
                 time before it, or a longer --duration (the OSD is put back at the end anyway)",
                s.action,
                secs(s.at),
                secs(end)
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_issue_s_example() {
        let p = parse("osd.3:out@20s,in@60s").unwrap();
        assert_eq!(p.osd, 3);
        assert_eq!(
            p.steps,
            vec![
                Step {
                    action: Action::Out,
                    at: at(20)
                },
                Step {
                    action: Action::In,
                    at: at(60)
                }
            ]
        );
        assert_eq!(p.spec, "osd.3:out@20s,in@60s");
        assert!(!p.is_local());
    }

    #[test]
    fn every_action_and_time_unit() {
        let p = parse("osd.0:down@500ms,stop@2,start@1m, out@61s ,in@1.5m").unwrap();
        let acts: Vec<_> = p.steps.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(acts, ["down", "stop", "start", "out", "in"]);
        assert_eq!(p.steps[0].at, Duration::from_millis(500));
        assert_eq!(p.steps[4].at, at(90));
        assert!(p.is_local());
        // `out` alone is fine: the OSD is put back at the end.
        assert!(parse("osd.1:out@5s").is_ok());
        assert!(parse("osd.1:down@5s,down@9s").is_ok());
    }

    #[test]
    fn bad_specs_name_the_fix() {
        for (spec, says) in [
            ("out@5s", "names no actions"),
            ("1:out@5s", "'1' is not an OSD"),
            ("osd.x:out@5s", "is not an OSD"),
            ("osd.-1:out@5s", "is not an OSD"),
            ("osd.1:out", "has no time"),
            ("osd.1:kill@5s", "'kill' is not an action"),
            ("osd.1:out@5x", "unknown unit"),
            ("osd.1:in@5s", "the OSD is not out"),
            ("osd.1:out@5s,out@9s", "already out"),
            ("osd.1:out@9s,in@5s", "in@5s is not after out@9s"),
            ("osd.1:out@5s,in@5s", "is not after"),
            ("osd.1:start@5s", "not stopped"),
            ("osd.1:stop@5s,stop@6s", "already stopped"),
            ("osd.1:stop@5s,out@6s", "`start` it first"),
            ("osd.1:stop@5s,down@6s", "`start` it first"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let many = format!(
            "osd.1:{}",
            (0..20)
                .map(|i| format!("down@{i}s"))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(parse(&many).unwrap_err().contains("at most 16"));
    }

    #[test]
    fn actions_must_lie_within_the_job() {
        let p = parse("osd.1:out@5s,in@20s").unwrap();
        assert!(p.within(at(40)).is_ok());
        let e = p.within(at(20)).unwrap_err();
        assert!(e.contains("in@20s is not before the job's end (20s"), "{e}");
        assert_eq!(secs(Duration::from_millis(2500)), "2.5s");
    }
}
