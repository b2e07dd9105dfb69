//! `cephbench agent`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{dur, UsageError};

/// Shortest `--watch-timeout`: librados pings its watches once per
/// `objecter_tick_interval` (5 s); a shorter timeout lets the OSD drop live
/// watches (seen here: `ENOTCONN` on every agent mid-job with 5 s).
const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(15);

/// `cephbench agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Pool holding the group object (and benchmarked by the jobs).
    #[arg(short = 'p', long)]
    pub pool: String,
    /// The group to join.
    #[arg(long, value_name = "NAME")]
    pub group: String,
    /// RADOS namespace of the group's control objects: the controller's `-N`.
    #[arg(short = 'N', long, default_value = "", value_name = "NS")]
    pub namespace: String,
    /// This agent's id in the group [default: <host>-<pid>].
    #[arg(long, value_name = "ID")]
    pub agent_id: Option<String>,
    /// Leave the group after this long without a job [default: never].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub timeout: Option<Duration>,
    /// How long the OSD keeps this agent's watch after losing contact with it.
    #[arg(long, default_value = "30s", value_parser = dur, value_name = "DURATION")]
    pub watch_timeout: Duration,
    /// Also keep each job's result here, as <group>.<job>.json.
    #[arg(long, value_name = "DIR")]
    pub save_results: Option<PathBuf>,
}

impl AgentArgs {
    /// Validates the arguments.
    pub fn config(&self) -> Result<cephbench::group::AgentConfig, UsageError> {
        use cephbench::names::{validate_namespace, validate_token};
        validate_token("--group", &self.group).map_err(UsageError)?;
        let id = (self.agent_id.clone()).unwrap_or_else(cephbench::group::default_agent_id);
        validate_token("--agent-id", &id).map_err(UsageError)?;
        if self.watch_timeout < MIN_WATCH_TIMEOUT {
            return Err(UsageError(
                "--watch-timeout must be at least 15s (librados confirms a watch only every 5 s)"
                    .into(),
            ));
        }
        validate_namespace(&self.namespace).map_err(UsageError)?;
        Ok(cephbench::group::AgentConfig {
            pool: self.pool.clone(),
            namespace: self.namespace.clone(),
            group: self.group.clone(),
            id,
            watch_timeout: self.watch_timeout,
            idle_timeout: self.timeout,
            save_results: self.save_results.clone(),
        })
    }
}
