//! `cephbench diagnose`.

use std::time::Duration;

use clap::Args;

use super::{dur, UsageError};

/// `cephbench diagnose`.
#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// The pool to diagnose (its OSDs are checked, its objects written and removed again).
    #[arg(short = 'p', long)]
    pub pool: String,
    /// The time the whole diagnosis may take (at least 1m): the OSDs' own checks take at most a
    /// quarter of it (sampled by id beyond that), the four jobs the rest.
    #[arg(long, default_value = "5m", value_parser = dur, value_name = "DURATION")]
    pub budget: Duration,
    /// RADOS namespace of the jobs' objects.
    #[arg(short = 'N', long)]
    pub namespace: Option<String>,
}

impl DiagnoseArgs {
    /// The validated diagnosis.
    pub fn config(
        &self,
        counter_interval: Duration,
        progress: bool,
    ) -> Result<cephbench::diagnose::DiagnoseConfig, UsageError> {
        use cephbench::diagnose::MIN_BUDGET;
        if self.budget < MIN_BUDGET {
            return Err(UsageError(format!(
                "--budget {:?} is below {} s: its jobs would be too short to say anything; give \
                 --budget 1m or more",
                self.budget,
                MIN_BUDGET.as_secs()
            )));
        }
        if self.pool.is_empty() {
            return Err(UsageError("-p needs a pool name".into()));
        }
        if let Some(n) = &self.namespace {
            cephbench::names::validate_namespace(n).map_err(UsageError)?;
        }
        Ok(cephbench::diagnose::DiagnoseConfig {
            pool: self.pool.clone(),
            budget: self.budget,
            namespace: self.namespace.clone(),
            counter_interval,
            progress,
        })
    }
}
