//! Coordinated multi-client runs through RADOS itself: `cephbench agent`
//! processes watch a group object in the pool; a controller notifies them
//! with a job and a common start time, each runs it with its own object
//! names, stores its result (with HDR histograms) in the pool and acks; the
//! controller merges the histograms into one result.
//!
//! Objects (all in the benchmarked pool, all with the `cephbench_` prefix):
//! - `cephbench_group.<G>`: the group object every agent watches;
//! - `cephbench_group.<G>.agent.<ID>`: one per agent while it runs (its
//!   [`AgentInfo`]);
//! - `cephbench_group.<G>.result.<JOB>.<ID>`: an agent's result document,
//!   read and removed by the controller.
//!
//! Notify payloads are JSON [`Message`]s; acks are JSON [`Reply`]s.
#![forbid(unsafe_code)]

mod agent;
mod controller;
pub mod merge;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::bench::{BenchError, RadosConfig, RbdConfig};
use crate::ceph::CephError;

pub use agent::{run_agent, AgentConfig};
pub use controller::{prepare_images, run_group, GroupConfig, GroupOutcome};

pub use crate::names::GROUP_PREFIX;

/// The object the agents of group `g` watch.
pub fn group_object(g: &str) -> String {
    format!("{GROUP_PREFIX}{g}")
}

/// Prefix of the agents' registration objects of group `g`.
pub fn agent_prefix(g: &str) -> String {
    format!("{GROUP_PREFIX}{g}.agent.")
}

/// Where agent `id` stores its result of job `job`.
pub fn result_object(g: &str, job: &str, id: &str) -> String {
    format!("{GROUP_PREFIX}{g}.result.{job}.{id}")
}

/// The default agent id: `<host>-<pid>`, reduced to the allowed characters.
pub fn default_agent_id() -> String {
    let host = crate::names::host_token(&crate::names::hostname());
    format!("{host}-{}", std::process::id())
}

/// Who an agent is (its registration object and its pong).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The agent id.
    pub id: String,
    /// Its host name.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Its RADOS client global id.
    pub gid: u64,
    /// The entity it authenticated as.
    pub entity: String,
    /// Its IP address as its RADOS messenger knows it (see [`client_ip`]);
    /// `None` from agents that predate it or when librados has none.
    #[serde(default)]
    pub addr: Option<String>,
}

impl AgentInfo {
    /// `host (address)`, or the host alone.
    pub fn where_(&self) -> String {
        crate::result::host_and_addr(&self.host, self.addr.as_deref())
    }
}

/// The IP address in a messenger address vector as `rados_getaddrs`
/// prints it (`[v2:192.0.2.101:0/3521868,v1:...]`, `v2:[::1]:0/7`):
/// the first entry's address without type, port and nonce. `None` when
/// there is none or it is unspecified (`0.0.0.0`, `::`, before the
/// messenger learned its address).
pub fn client_ip(addrs: &str) -> Option<String> {
    let first = addrs
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .next()?
        .trim();
    let no_type = first.split_once(':').map_or(first, |(t, rest)| {
        if matches!(t, "v1" | "v2" | "any") {
            rest
        } else {
            first
        }
    });
    let before_nonce = no_type.split('/').next()?;
    let ip = before_nonce
        .rsplit_once(':')
        .map_or(before_nonce, |(ip, _)| ip);
    let ip = ip.trim_start_matches('[').trim_end_matches(']');
    match ip {
        "" | "0.0.0.0" | "::" | "-" => None,
        _ => Some(ip.to_string()),
    }
}

/// The job a group runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum JobSpec {
    /// `cephbench rados ...`; each agent replaces `run_name` and `start_at`.
    Rados(RadosConfig),
    /// `cephbench rbd ...`; each agent replaces `start_at`. With `--size`
    /// every agent creates its own image; with `--image` they share it.
    Rbd(RbdConfig),
    /// Each agent creates and preconditions its own image
    /// `<image_base>.<agent id>` (a group suite's rbd jobs then run on it).
    Prepare(PrepareSpec),
    /// An rbd job on each agent's own image `<image_base>.<agent id>`, made
    /// by an earlier [`JobSpec::Prepare`] of the same agent.
    RbdOwnImage {
        /// The image name before `.<agent id>`.
        image_base: String,
        /// The job; its `image` and `prior_precondition` are the agent's.
        cfg: RbdConfig,
    },
}

/// What [`JobSpec::Prepare`] asks of each agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrepareSpec {
    /// The pool of the images.
    pub pool: String,
    /// The pool of their data objects (`--data-pool`), if not `pool`.
    #[serde(default)]
    pub data_pool: Option<String>,
    /// The image name before `.<agent id>`.
    pub image_base: String,
    /// Image size, bytes.
    pub size: u64,
    /// Bytes preconditioned (from offset 0).
    pub test_area: u64,
    /// The block size the preconditioning falls back to when 64 KiB does
    /// not divide the test area.
    pub bs: u64,
}

/// Agent `agent`'s own image of a group suite: `<image_base>.<agent>`.
pub fn agent_image(image_base: &str, agent: &str) -> String {
    format!("{image_base}.{agent}")
}

impl JobSpec {
    /// Checks the job by the rules its flags were checked by
    /// ([`crate::plan`]): an agent runs nothing a controller of another
    /// version, or a bad actor with write access to the pool, could not
    /// have asked for on the command line.
    pub fn check(&self) -> Result<(), String> {
        match self {
            JobSpec::Rados(c) => crate::plan::rados_job(c),
            JobSpec::Rbd(c) | JobSpec::RbdOwnImage { cfg: c, .. } => crate::plan::rbd_job(c),
            JobSpec::Prepare(p) => {
                crate::plan::block_size(crate::plan::Source::Flags, "bs", p.bs).map(|_| ())
            }
        }
    }

    /// The run name the clients' run names derive from (rbd: `rbd`).
    pub fn run_name(&self) -> &str {
        match self {
            JobSpec::Rados(c) => &c.run_name,
            JobSpec::Rbd(_) | JobSpec::RbdOwnImage { .. } => "rbd",
            JobSpec::Prepare(_) => "prepare",
        }
    }

    /// The RADOS namespace of the job's objects ("" for the default).
    pub fn namespace(&self) -> &str {
        match self {
            JobSpec::Rados(c) => &c.namespace,
            _ => "",
        }
    }

    /// The pool the job runs on (it may differ from the group's).
    pub fn pool(&self) -> &str {
        match self {
            JobSpec::Rados(c) => &c.pool,
            JobSpec::Rbd(c) | JobSpec::RbdOwnImage { cfg: c, .. } => &c.pool,
            JobSpec::Prepare(p) => &p.pool,
        }
    }

    /// How long the job should take once started (ramp + duration; 0 when
    /// bounded by ops or bytes only).
    pub fn expected(&self) -> Duration {
        let (ramp, d) = match self {
            JobSpec::Rados(c) => (c.ramp, c.duration),
            JobSpec::Rbd(c) | JobSpec::RbdOwnImage { cfg: c, .. } => (c.ramp, c.duration),
            // A bound, not an estimate: 2 MB/s of preconditioning writes per
            // agent, plus a minute for creating the image.
            JobSpec::Prepare(p) => (
                Duration::from_secs(60),
                Some(Duration::from_secs(p.test_area / 2_000_000)),
            ),
        };
        ramp + d.unwrap_or(Duration::ZERO)
    }

    /// Whether a dead client leaves run objects behind that the controller
    /// should remove (rados writes; rbd images go with `cephbench cleanup`).
    pub fn leaves_objects(&self) -> bool {
        matches!(self, JobSpec::Rados(c) if c.mode.is_write())
    }
}

/// One agent's part of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Assignment {
    /// The agent id.
    pub agent: String,
    /// The run name it uses (its object names).
    pub run_name: String,
    /// The common start on the agent's own clock (the controller's start
    /// plus the agent's measured clock offset), ns since the epoch.
    pub start_local_unix_ns: u64,
}

/// A job notify.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobMsg {
    /// Unique id of this job (names its result objects).
    pub job_id: String,
    /// The common start on the controller's clock, ns since the epoch.
    pub start_unix_ns: u64,
    /// What to run.
    pub spec: JobSpec,
    /// Who runs it; agents not listed ack [`Reply::NotAssigned`].
    pub assignments: Vec<Assignment>,
}

/// What the controller notifies.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Who is there, and what time is it? Answered with [`Reply::Pong`].
    Ping,
    /// Run a job; answered with [`Reply::JobDone`] once it finished.
    Job(Box<JobMsg>),
    /// Stop job `job_id` now (its result is still written and acked).
    Stop {
        /// The job to stop.
        job_id: String,
    },
}

/// What an agent acks with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// Answer to [`Message::Ping`].
    Pong {
        /// The agent.
        agent: AgentInfo,
        /// The agent's clock when the notify arrived, ns since the epoch.
        clock_unix_ns: u64,
        /// Whether it is running a job.
        busy: bool,
    },
    /// A job finished (or could not run).
    JobDone {
        /// The agent id.
        agent: String,
        /// The object holding its result, if it produced one.
        result_object: Option<String>,
        /// When its measured ops started, on its clock, ns since the epoch.
        measured_start_unix_ns: Option<u64>,
        /// Why it could not run or failed.
        error: Option<String>,
    },
    /// The job was not for this agent.
    NotAssigned {
        /// The agent id.
        agent: String,
    },
    /// Acknowledges a stop.
    Stopping {
        /// The agent id.
        agent: String,
    },
    /// The notify could not be understood.
    Invalid {
        /// The agent id.
        agent: String,
        /// Why.
        error: String,
    },
}

/// Errors of group runs.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// A librados call failed.
    #[error(transparent)]
    Ceph(#[from] CephError),
    /// The benchmark itself failed.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// Fewer agents than `--clients` answered in time (the message names
    /// who is present, who is registered but silent, and how many are missing).
    #[error("{0}")]
    NotEnoughAgents(String),
    /// An agent's result object is unusable.
    #[error("result of agent '{agent}' is unusable: {why}")]
    BadResult {
        /// The agent.
        agent: String,
        /// What is wrong.
        why: String,
    },
    /// No agent delivered a result at all.
    #[error("no agent of group '{group}' delivered a result ({why})")]
    NoResults {
        /// The group.
        group: String,
        /// What happened to each.
        why: String,
    },
}

/// `t` as ns since the epoch (0 before it).
pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// ns since the epoch as a time.
pub fn from_unix_ns(ns: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_messages() {
        assert_eq!(group_object("g1"), "cephbench_group.g1");
        assert_eq!(
            result_object("g1", "j", "a-1"),
            "cephbench_group.g1.result.j.a-1"
        );
        assert!(crate::names::validate_token("--agent-id", &default_agent_id()).is_ok());
        let m: Message = serde_json::from_str(r#"{"type":"stop","job_id":"x"}"#).unwrap();
        assert!(matches!(m, Message::Stop { job_id } if job_id == "x"));
        assert_eq!(
            client_ip("[v2:192.0.2.101:0/3521868,v1:192.0.2.101:0/3521868]").as_deref(),
            Some("192.0.2.101")
        );
        assert_eq!(
            client_ip("v2:198.51.100.1:0/1").as_deref(),
            Some("198.51.100.1")
        );
        assert_eq!(client_ip("v2:[fd00::5]:0/7").as_deref(), Some("fd00::5"));
        assert_eq!(client_ip("192.0.2.5:0/7").as_deref(), Some("192.0.2.5"));
        assert_eq!(client_ip("v2:0.0.0.0:0/7"), None);
        assert_eq!(client_ip(""), None);
        let t = SystemTime::now();
        let back = from_unix_ns(unix_ns(t));
        assert!(t.duration_since(back).unwrap_or_default() < Duration::from_micros(1));
    }
}
