//! Running one job on a group of agents: `--group` of rados, rbd, suite and sweep.

use std::time::Duration;

use clap::Args;

use cephbench::plan::{self, Source::Flags};

use super::{dur, UsageError};

/// Running one job on a group of agents (`--group`).
#[derive(Debug, Args)]
pub struct GroupArgs {
    /// Run on the agents of this group (see `cephbench agent`) instead of here.
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// How many agents run the job.
    #[arg(long, value_name = "N")]
    pub clients: Option<usize>,
    /// How long to wait for --clients agents to be present.
    #[arg(long, default_value = "60s", value_parser = dur, value_name = "DURATION")]
    pub wait_agents: Duration,
    /// The common start is this far in the future when the job is sent.
    #[arg(long, default_value = "3s", value_parser = dur, value_name = "DURATION")]
    pub start_delay: Duration,
    /// How long after the job's expected end to wait for results.
    #[arg(long, default_value = "60s", value_parser = dur, value_name = "DURATION")]
    pub group_margin: Duration,
}

impl GroupArgs {
    /// The group run these flags describe, if any.
    pub fn config(
        &self,
        pool: &str,
        namespace: &str,
    ) -> Result<Option<cephbench::group::GroupConfig>, UsageError> {
        let (group, clients) = match (&self.group, self.clients) {
            (None, None) => return Ok(None),
            (Some(g), Some(n)) => (g, n),
            _ => {
                return Err(UsageError(
                    "--group and --clients go together: e.g. --group lab --clients 3".into(),
                ))
            }
        };
        cephbench::names::validate_token("--group", group).map_err(UsageError)?;
        plan::in_range(Flags, "clients", clients as u64, 1, plan::MAX_CLIENTS)
            .map_err(UsageError)?;
        Ok(Some(cephbench::group::GroupConfig {
            pool: pool.to_string(),
            namespace: namespace.to_string(),
            group: group.clone(),
            clients,
            wait_agents: self.wait_agents,
            start_delay: self.start_delay,
            margin: self.group_margin,
            agents: None,
        }))
    }
}
