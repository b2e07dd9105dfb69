//! `cephbench diagnose`.

use std::time::Duration;

use clap::Args;

use super::{dur, UsageError};

/// `cephbench diagnose`.
#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// The pool to diagnose (its OSDs are checked, its objects written and removed again).
    #[arg(
        short = 'p',
        long,
        required_unless_present = "pools",
        conflicts_with = "pools"
    )]
    pub pool: Option<String>,
    /// Several pools, one after another (`--pools hdd,plp`): each gets its share of the
    /// budget and its own report, in the order given.
    #[arg(long, value_delimiter = ',', value_name = "POOL,POOL")]
    pub pools: Vec<String>,
    /// The time the whole diagnosis may take (at least 1m per pool): the OSDs' own checks take at
    /// most a quarter of a pool's share (sampled by id beyond that), the four jobs the rest.
    #[arg(long, default_value = "5m", value_parser = dur, value_name = "DURATION")]
    pub budget: Duration,
    /// RADOS namespace of the jobs' objects.
    #[arg(short = 'N', long)]
    pub namespace: Option<String>,
}

impl DiagnoseArgs {
    /// The validated diagnosis: one per pool, in the order given, each with
    /// its share of the budget.
    pub fn configs(
        &self,
        counter_interval: Duration,
        progress: bool,
    ) -> Result<Vec<cephbench::diagnose::DiagnoseConfig>, UsageError> {
        use cephbench::diagnose::MIN_BUDGET;
        let pools: Vec<String> = match &self.pool {
            Some(p) => vec![p.clone()],
            None => self.pools.clone(),
        };
        if pools.iter().any(String::is_empty) {
            return Err(UsageError(
                "-p/--pools needs pool names (--pools a,b: no empty name)".into(),
            ));
        }
        if let Some(p) = pools
            .iter()
            .enumerate()
            .find_map(|(i, p)| pools[..i].contains(p).then_some(p))
        {
            return Err(UsageError(format!(
                "--pools names '{p}' twice: give each pool once"
            )));
        }
        let n = pools.len() as u32;
        let each = self.budget / n.max(1);
        if self.budget < MIN_BUDGET {
            return Err(UsageError(format!(
                "--budget {:?} is below {} s: its jobs would be too short to say anything; give \
                 --budget 1m or more",
                self.budget,
                MIN_BUDGET.as_secs()
            )));
        }
        if each < MIN_BUDGET {
            return Err(UsageError(format!(
                "--budget {:?} over {n} pools gives each {:.0} s, below the {} s a pool's jobs \
                 need: give --budget {}m or more",
                self.budget,
                each.as_secs_f64(),
                MIN_BUDGET.as_secs(),
                n * MIN_BUDGET.as_secs() as u32 / 60
            )));
        }
        if let Some(n) = &self.namespace {
            cephbench::names::validate_namespace(n).map_err(UsageError)?;
        }
        Ok(pools
            .into_iter()
            .map(|pool| cephbench::diagnose::DiagnoseConfig {
                pool,
                budget: each,
                namespace: self.namespace.clone(),
                counter_interval,
                progress,
            })
            .collect())
    }
}
