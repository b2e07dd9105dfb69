//! `cephbench suite`, and how suite tables are shown (also `compare`, `report`).

use std::time::Duration;

use clap::Args;

use super::group::GroupArgs;
use super::{dur, size, Globals, UsageError};

/// `cephbench suite`.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A built-in suite (`lab`, `cdm`, `rados`) or a suite file (TOML, see examples/suite.toml).
    #[arg(value_name = "NAME|FILE")]
    pub suite: String,
    /// Pool to run it on.
    #[arg(short = 'p', long, required_unless_present = "pools")]
    pub pool: Option<String>,
    /// Run it on each of these pools in turn and compare them (the first is the baseline).
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "pool",
        value_name = "A,B"
    )]
    pub pools: Option<Vec<String>>,
    /// Put the RBD image's data objects in this pool (as `rbd create --data-pool`; e.g. an
    /// erasure-coded pool with allow_ec_overwrites): -p keeps the image's metadata, and the
    /// rados jobs run on the data pool [default: the suite file's data-pool].
    #[arg(long, value_name = "POOL")]
    pub data_pool: Option<String>,
    #[command(flatten)]
    pub paired: super::DataPoolsArg,
    /// Runs of every job [default: the suite's, 2 for the built-ins].
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// Measured time of every run [default: the suite's: lab 20s, cdm 5s, rados 60s].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub runtime: Option<Duration>,
    /// Ramp-up of every run, excluded from the figures [default: the suite's].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub ramp: Option<Duration>,
    /// Size of the RBD image the rbd jobs share [default: lab 8G, cdm 1G].
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub image_size: Option<u64>,
    /// Bytes of the image used, preconditioned once [default: lab 2G, cdm 1G].
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub test_area: Option<u64>,
    /// RADOS namespace of the rados jobs' objects (and of a group's control objects)
    /// [default: the suite file's, else the default namespace]; RBD images stay in the default.
    #[arg(short = 'N', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Every job runs on a group of agents (with --pools: the agents join the first pool).
    #[command(flatten)]
    pub group: GroupArgs,
    #[command(flatten)]
    pub view: SuiteViewArgs,
}

/// How suite tables are shown (`suite`, `compare` and `report` of suite files).
#[derive(Debug, Args)]
pub struct SuiteViewArgs {
    /// How each figure of a suite's table is made from its runs: the median (two runs: their
    /// mean), or the best run (highest MB/s, its p99 too; CrystalDiskMark's way). Recorded in
    /// the suite document; on `compare`/`report` it overrides the document's [default: median]
    #[arg(long, value_enum, value_name = "HOW")]
    pub aggregate: Option<cephbench::suite::Aggregate>,
    /// Suites: also the checks beside each run and, with several pools, the full comparison
    /// (every figure, where each job's mean went, the drives); with CrystalDiskMark's jobs the
    /// long table (one row per job) beside its table. `-v` shows them too.
    #[arg(long)]
    pub long: bool,
}

impl SuiteViewArgs {
    /// How a report of suites is shown, `-v` included.
    pub fn view(&self, g: &Globals) -> cephbench::report::View {
        cephbench::report::View {
            verbose: g.verbose,
            long: self.long,
        }
    }
}

impl SuiteArgs {
    /// The suite to run and the pools, validated (nothing sent to the cluster yet).
    pub fn plan(
        &self,
        telemetry: bool,
        counter_interval: Duration,
        progress: bool,
    ) -> Result<(cephbench::suite::Suite, Vec<cephbench::suite::SuiteOptions>), UsageError> {
        use cephbench::suite;
        let path = std::path::Path::new(&self.suite);
        let base = if suite::BUILTINS.contains(&self.suite.as_str()) && !path.is_file() {
            suite::builtin(&self.suite).expect("a built-in")
        } else if path.is_file() {
            suite::load(path).map_err(|e| UsageError(e.to_string()))?
        } else {
            return Err(UsageError(format!(
                "no suite '{}': use a built-in (lab, cdm, rados, vm) or the path of a TOML suite file",
                self.suite
            )));
        };
        let pools = match (&self.pool, &self.pools) {
            (Some(p), None) => vec![p.clone()],
            (None, Some(ps)) if ps.len() >= 2 && ps.iter().all(|p| !p.is_empty()) => ps.clone(),
            _ => {
                return Err(UsageError(
                    "give -p POOL, or --pools A,B with at least two pools".into(),
                ))
            }
        };
        if let Some(n) = &self.namespace {
            cephbench::names::validate_namespace(n).map_err(UsageError)?;
        }
        let namespace = self.namespace.as_ref().unwrap_or(&base.namespace);
        // The suite file's data-pool is the default of --data-pool (not of --data-pools).
        let one = self.data_pool.as_deref().or(base
            .data_pool
            .as_deref()
            .filter(|_| self.paired.data_pools.is_none()));
        let data_pools =
            cephbench::plan::data_pools(&pools, one, self.paired.data_pools.as_deref()).map_err(
                |e| match (self.data_pool.is_none(), &base.data_pool) {
                    (true, Some(d)) if pools.len() > 1 && self.paired.data_pools.is_none() => {
                        UsageError(format!(
                            "suite {} sets data-pool {d}; with --pools give --data-pools, one per \
                         pool in order and - for none",
                            self.suite
                        ))
                    }
                    _ => UsageError(e),
                },
            )?;
        // The group object lives in the agents' pool: -p POOL, or the first of --pools.
        let group = self.group.config(&pools[0], namespace)?;
        let opts: Vec<suite::SuiteOptions> = pools
            .into_iter()
            .zip(data_pools)
            .map(|(pool, data_pool)| suite::SuiteOptions {
                pool,
                data_pool,
                runs: self.runs,
                runtime: self.runtime,
                ramp: self.ramp,
                image_size: self.image_size,
                test_area: self.test_area,
                telemetry,
                counter_interval,
                interval: cephbench::progress::DEFAULT_INTERVAL,
                op_history: None,
                drop_caches: false,
                progress,
                group: group.clone(),
                namespace: self.namespace.clone(),
            })
            .collect();
        if !base.uses_image() && opts.iter().any(|o| o.data_pool.is_some()) {
            return Err(UsageError(format!(
                "suite {} has no rbd jobs, so no image whose data could go to a data pool; drop \
                 --data-pool(s) (its rados jobs run on -p)",
                base.name
            )));
        }
        let s = base.with_options(&opts[0]).map_err(UsageError)?;
        Ok((s, opts))
    }
}
