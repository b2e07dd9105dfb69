//! Command-line arguments (clap) and their translation into validated configs.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use cephbench::bench::{ImageChoice, RadosConfig, RbdConfig};
use cephbench::ceph::ConnectOptions;
use cephbench::objects::{self, VerifyMode};
use cephbench::plan::{self, Source::Flags};
use cephbench::report::Format;
use cephbench::units::{fmt_bytes, parse_duration, parse_size};
use cephbench::workload::rados::{RadosMode, WriteDest};
use cephbench::workload::rbd::RbdMode;

/// The `--help` heading of the options that say how to reach the cluster.
const CONNECTION: &str = "Connection";
/// The `--help` heading of the report's options.
const OUTPUT: &str = "Output";
/// The `--help` heading of the options of the probes around a run.
const TELEMETRY: &str = "Telemetry";
/// Subcommands that read files only: the cluster's options are accepted but
/// not shown in their `--help`.
const OFFLINE: [&str; 2] = ["compare", "report"];

/// Parses the process's arguments. `compare` and `report` work without a
/// cluster, so their `--help` leaves out the connection and telemetry options
/// (and the live line) that every command accepts.
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = Cli::command();
    // A subcommand's own argument of a global's id shadows the global there:
    // hidden copies keep `compare -c C` accepted but out of `compare --help`.
    let cluster_options: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            matches!(a.get_help_heading(), Some(CONNECTION | TELEMETRY)) || a.get_id() == "progress"
        })
        .map(|a| a.clone().global(false).hide(true))
        .collect();
    for name in OFFLINE {
        cmd = cmd.mut_subcommand(name, |sc| sc.args(cluster_options.iter().cloned()));
    }
    Cli::from_arg_matches(&cmd.try_get_matches()?)
}

/// A Ceph-native storage benchmark: RADOS workloads with HDR percentiles.
#[derive(Debug, Parser)]
#[command(
    name = "cephbench",
    version,
    about,
    max_term_width = 100,
    args_override_self = true,
    after_help = "Exit codes: 0 clean; 1 the run could not start or failed outside the \
                  measurement; 2 bad arguments; 3 the run finished (report printed) but ops \
                  failed, reads came back short or did not match; 4 `compare --fail-if-slower` found a \
                  regression; 130 interrupted."
)]
pub struct Cli {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Output format of the final report (stdout).
    #[arg(long, value_enum, default_value_t = Format::Text, global = true, help_heading = OUTPUT)]
    pub format: Format,
    /// Skip the probes (PG map, OSD perf counters) around the run.
    #[arg(long, global = true, help_heading = TELEMETRY)]
    pub no_telemetry: bool,
    /// Read the OSDs' counters this often during a run, for the counter
    /// timelines (0: only before and after).
    #[arg(
        long,
        global = true,
        default_value = "5s",
        value_parser = dur,
        value_name = "DURATION",
        help_heading = TELEMETRY
    )]
    pub counter_interval: Duration,
    /// Per-second progress line on stderr: auto = when stderr is a terminal.
    #[arg(long, value_enum, default_value_t = Progress::Auto, global = true, help_heading = OUTPUT)]
    pub progress: Progress,
    /// Text report with every section: the network probes, `ceph osd perf`, the OSDs'
    /// counters over time, each OSD's split, the slowest ops (JSON and HTML always have them).
    #[arg(short = 'v', long, global = true, help_heading = OUTPUT)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The options every command shares, resolved once.
#[derive(Debug, Clone, Copy)]
pub struct Globals {
    /// The report's format.
    pub format: Format,
    /// `-v`: every section of the text report.
    pub verbose: bool,
    /// The live line on stderr (`--progress`, auto = stderr is a terminal).
    pub live: bool,
    /// Announcements on stderr (what a suite or sweep will do), unless
    /// `--progress never`.
    pub announce: bool,
    /// The probes around a run (`--no-telemetry` turns them off).
    pub telemetry: bool,
    /// `--counter-interval`.
    pub counter_interval: Duration,
}

impl Cli {
    /// The options every command shares.
    pub fn globals(&self) -> Globals {
        use std::io::IsTerminal;
        Globals {
            format: self.format,
            verbose: self.verbose,
            live: match self.progress {
                Progress::Always => true,
                Progress::Never => false,
                Progress::Auto => std::io::stderr().is_terminal(),
            },
            announce: self.progress != Progress::Never,
            telemetry: !self.no_telemetry,
            counter_interval: self.counter_interval,
        }
    }
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

/// When to print the live line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Progress {
    /// When stderr is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// How to reach the cluster (same flags as the `ceph`/`rados` CLIs).
#[derive(Debug, Args)]
#[command(next_help_heading = CONNECTION)]
pub struct ConnArgs {
    /// Ceph config file (default: $CEPH_CONF, then /etc/ceph/ceph.conf, ~/.ceph/config, ./ceph.conf).
    #[arg(short = 'c', long = "conf", global = true, value_name = "PATH")]
    pub conf: Option<PathBuf>,
    /// Client id, e.g. `admin` for client.admin.
    #[arg(
        long = "id",
        visible_alias = "user",
        global = true,
        value_name = "ID",
        conflicts_with = "name"
    )]
    pub id: Option<String>,
    /// Full entity name, e.g. client.bench.
    #[arg(short = 'n', long = "name", global = true, value_name = "TYPE.ID")]
    pub name: Option<String>,
    /// Keyring file.
    #[arg(short = 'k', long, global = true, value_name = "PATH")]
    pub keyring: Option<PathBuf>,
    /// Monitor address(es), overriding `mon host` of the config.
    #[arg(short = 'm', long = "mon-host", global = true, value_name = "ADDRS")]
    pub mon_host: Option<String>,
    /// Give up connecting after this long.
    #[arg(long, global = true, default_value = "10s", value_parser = dur, value_name = "DURATION")]
    pub connect_timeout: Duration,
    /// Bound on every single op and command (rados_osd_op_timeout / rados_mon_op_timeout).
    #[arg(long, global = true, default_value = "60s", value_parser = dur, value_name = "DURATION")]
    pub op_timeout: Duration,
    /// A separate identity for the probes (OSD counters need osd 'allow *',
    /// the PG map mon 'allow r' + mgr 'allow r'), e.g. `telemetry` for client.telemetry.
    #[arg(long, global = true, value_name = "ID", help_heading = TELEMETRY)]
    pub telemetry_id: Option<String>,
    /// Keyring of the telemetry identity (default: the data identity's keyring setting).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        requires = "telemetry_id",
        help_heading = TELEMETRY
    )]
    pub telemetry_keyring: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// RADOS object benchmark, compatible with `rados bench` (write, seq, rand).
    Rados(RadosArgs),
    /// RBD image benchmark with fio's workloads (through librbd, no VM needed).
    Rbd(RbdArgs),
    /// Remove objects left behind by cephbench runs (only cephbench's own).
    Cleanup(CleanupArgs),
    /// Compare result files (from --format json) side by side, with a Diff % column.
    Compare(CompareArgs),
    /// Re-render saved result files (from --format json) in any format, without a cluster.
    Report(ReportArgs),
    /// Run a suite of jobs (built-in lab, cdm, rados, vm, or a TOML file), each --runs times.
    Suite(SuiteArgs),
    /// Join a group of clients and run the jobs a controller (`rados --group`) sends.
    Agent(AgentArgs),
    /// Which drive is the slow one: each OSD's own write bench (`ceph tell osd.N bench`), one
    /// OSD after the other, with its device flush timers and its drive.
    OsdBench(OsdBenchArgs),
    /// Run a rados or rbd workload at rising rates (or queue depths) and find the knee.
    Sweep(SweepArgs),
}

/// `cephbench sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub target: SweepTarget,
}

/// What a sweep runs.
#[derive(Debug, Subcommand)]
pub enum SweepTarget {
    /// `cephbench rados` workloads (write, seq, rand) at rising load.
    Rados(SweepOf<RadosArgs>),
    /// `cephbench rbd` workloads at rising load.
    Rbd(SweepOf<RbdArgs>),
}

/// `cephbench sweep rados|rbd`: the flags of `cephbench rados` or `rbd`
/// (`T`), with `-p` or `--pools`, and the points. `--rate` is refused (the
/// points set it) and the ramp defaults to 1 s.
#[derive(Debug, Args)]
#[command(
    mut_arg("pool", |a| a
        .required(false)
        .default_value("")
        .hide_default_value(true)
        .help("Pool to sweep (must exist); or --pools A,B")),
    mut_arg("rate", |a| a.hide(true)),
    mut_arg("arrival", |a| a.requires(clap::builder::Resettable::Reset)),
    mut_arg("ramp", |a| a.default_value("1s")),
    mut_arg("duration", |a| a.help("Measured time of each point, after its ramp [default: 5s]")),
)]
pub struct SweepOf<T: Args> {
    #[command(flatten)]
    pub base: T,
    #[command(flatten)]
    pub sweep: SweepOpts,
}

/// Each point's measured time when `-d` is not given.
const SWEEP_POINT: Duration = Duration::from_secs(5);

/// The points of a sweep and where it runs.
#[derive(Debug, Args)]
pub struct SweepOpts {
    /// The asked rates of the points, rising (ops/s, e.g. 200,400,800,1.6k); open loop.
    #[arg(long, value_delimiter = ',', value_parser = rate_arg, value_name = "R1,R2,..")]
    pub rates: Option<Vec<f64>>,
    /// First rate of a generated series: ×2 per point unless --rate-step or --rate-factor.
    #[arg(long, value_parser = rate_arg, value_name = "OPS/S")]
    pub rate_from: Option<f64>,
    /// Last rate of the series [default: until the ceiling stops it, at most --max-points].
    #[arg(long, value_parser = rate_arg, value_name = "OPS/S")]
    pub rate_to: Option<f64>,
    /// Add this much to each next rate (ops/s).
    #[arg(long, value_parser = rate_arg, value_name = "OPS/S")]
    pub rate_step: Option<f64>,
    /// Multiply each next rate by this (> 1).
    #[arg(long, value_name = "F")]
    pub rate_factor: Option<f64>,
    /// Points of a --rate-from series at most.
    #[arg(long, default_value_t = cephbench::sweep::DEFAULT_MAX_POINTS, value_name = "N")]
    pub max_points: usize,
    /// Closed loop at these queue depths instead, rising (e.g. 1,2,4,8,16,32).
    #[arg(long, value_delimiter = ',', value_name = "Q1,Q2,..")]
    pub qd: Option<Vec<usize>>,
    /// The knee is the highest load whose p99 stays under this (e.g. 5ms) [default: where
    /// p99 doubles over the low-load p99, or the throughput ceiling].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub p99_target: Option<Duration>,
    /// Sweep each of these pools in turn: one curve and knee each, on one plot.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub pools: Option<Vec<String>>,
}

impl SweepOpts {
    /// The pools, what rises, the steps and the target, validated.
    fn plan(
        &self,
        pool: &str,
        arrival: ArrivalArg,
    ) -> Result<cephbench::sweep::SweepOptions, UsageError> {
        use cephbench::sweep::{check_rising, rate_steps, Axis};
        let u = |s: String| UsageError(s);
        let pools = match (pool.is_empty(), &self.pools) {
            (false, None) => vec![pool.to_string()],
            (true, Some(ps)) if !ps.is_empty() && ps.iter().all(|p| !p.is_empty()) => {
                if ps.iter().enumerate().any(|(i, p)| ps[..i].contains(p)) {
                    return Err(u("--pools lists a pool twice; name each pool once".into()));
                }
                ps.clone()
            }
            (false, Some(_)) => {
                return Err(u("give -p POOL or --pools A,B, not both".into()));
            }
            _ => {
                return Err(u(
                    "give -p POOL, or --pools A,B for one curve per pool".into()
                ))
            }
        };
        if self.rate_from.is_none()
            && (self.rate_to.is_some() || self.rate_step.is_some() || self.rate_factor.is_some())
        {
            return Err(u(
                "--rate-to, --rate-step and --rate-factor shape a --rate-from series; add --rate-from A"
                    .into(),
            ));
        }
        let (axis, steps, flag) = match (&self.rates, self.rate_from, &self.qd) {
            (Some(r), None, None) => (Axis::Rate, r.clone(), "--rates"),
            (None, Some(from), None) => (
                Axis::Rate,
                rate_steps(
                    from,
                    self.rate_to,
                    self.rate_step,
                    self.rate_factor,
                    self.max_points,
                )
                .map_err(u)?,
                "--rate-from",
            ),
            (None, None, Some(q)) => {
                for d in q {
                    plan::in_range(Flags, "qd", *d as u64, 1, plan::MAX_IN_FLIGHT).map_err(u)?;
                }
                (Axis::Qd, q.iter().map(|d| *d as f64).collect(), "--qd")
            }
            _ => {
                return Err(u(
                    "give the points once: --rates 200,400,800, or --rate-from 200 \
                     [--rate-to 3200] [--rate-step 200 | --rate-factor 2], or --qd 1,2,4,8"
                        .into(),
                ))
            }
        };
        check_rising(&steps, flag).map_err(u)?;
        if axis == Axis::Qd && arrival != ArrivalArg::Uniform {
            return Err(u(
                "--arrival applies to rate sweeps; drop it with --qd".into()
            ));
        }
        if self.p99_target.is_some_and(|t| t.is_zero()) {
            return Err(u("--p99-target must be above 0, e.g. 5ms".into()));
        }
        Ok(cephbench::sweep::SweepOptions {
            pools,
            axis,
            steps,
            p99_target: self.p99_target,
            arrival: match arrival {
                ArrivalArg::Uniform => cephbench::engine::Arrival::Uniform,
                ArrivalArg::Poisson => cephbench::engine::Arrival::Poisson,
            },
            progress: false,
            group: None,
        })
    }
}

/// `--rate` is what a sweep sets per point.
fn sweep_conflicts(rate: Option<f64>) -> Result<(), UsageError> {
    if rate.is_some() {
        return Err(UsageError(
            "--rate fixes one rate; a sweep takes --rates R1,R2,.. (or --rate-from, --qd)".into(),
        ));
    }
    Ok(())
}

impl SweepArgs {
    /// The workload of every point and the sweep, validated (nothing sent
    /// to the cluster yet).
    pub fn plan(
        &self,
        telemetry: bool,
        counter_interval: Duration,
        progress: bool,
    ) -> Result<(cephbench::sweep::SweepJob, cephbench::sweep::SweepOptions), UsageError> {
        use cephbench::sweep::SweepJob;
        let u = |s: &str| UsageError(s.into());
        let (job, mut opts) = match &self.target {
            SweepTarget::Rados(a) => {
                let b = &a.base;
                sweep_conflicts(b.rate)?;
                if b.no_cleanup || b.create_pool || b.max_objects.is_some() || b.ops.is_some() {
                    return Err(u(
                        "a sweep removes each point's objects and runs each for -d: drop \
                         --no-cleanup, --create-pool, --max-objects and --ops",
                    ));
                }
                let mut cfg = b.config(false)?;
                cfg.duration = Some(b.duration.unwrap_or(SWEEP_POINT));
                cfg.telemetry = telemetry;
                cfg.counter_interval = counter_interval;
                let mut o = a.sweep.plan(&b.pool, b.arrival)?;
                // The agents join the group in the first pool (of --pools).
                o.group = b.group.config(&o.pools[0], &b.namespace)?;
                (SweepJob::Rados(cfg), o)
            }
            SweepTarget::Rbd(a) => {
                let b = &a.base;
                sweep_conflicts(b.rate)?;
                if b.group.group.is_some() || b.group.clients.is_some() {
                    return Err(u(
                        "sweep rbd does not run on a group yet (sweep rados does); drop \
                         --group/--clients",
                    ));
                }
                if b.io_total.is_some() {
                    return Err(u("a sweep runs each point for -d: drop --io-total"));
                }
                let mut cfg = b.config(false)?;
                cfg.duration = Some(b.duration.unwrap_or(SWEEP_POINT));
                cfg.telemetry = telemetry;
                cfg.counter_interval = counter_interval;
                (SweepJob::Rbd(cfg), a.sweep.plan(&b.pool, b.arrival)?)
            }
        };
        opts.progress = progress;
        if let (SweepJob::Rbd(c), cephbench::sweep::Axis::Qd) = (&job, opts.axis) {
            if c.fsync_every.is_some() {
                return Err(u(
                    "--fsync-every runs at iodepth 1; a queue-depth sweep cannot use it",
                ));
            }
        }
        Ok((job, opts))
    }
}

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
        // The group object lives in the agents' pool: -p POOL, or the first of --pools.
        let group = self.group.config(&pools[0], namespace)?;
        let opts: Vec<suite::SuiteOptions> = pools
            .into_iter()
            .map(|pool| suite::SuiteOptions {
                pool,
                runs: self.runs,
                runtime: self.runtime,
                ramp: self.ramp,
                image_size: self.image_size,
                test_area: self.test_area,
                telemetry,
                counter_interval,
                progress,
                group: group.clone(),
                namespace: self.namespace.clone(),
            })
            .collect();
        let s = base.with_options(&opts[0]).map_err(UsageError)?;
        Ok((s, opts))
    }
}

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

/// `--verify=CHECK`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum VerifyArg {
    /// Each block's op stamp and seed-dependent tail (two 8-byte compares).
    Stamp,
    /// Every byte.
    Full,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Write new objects.
    Write,
    /// Read a write run's objects in order.
    Seq,
    /// Read a write run's objects at random.
    Rand,
}

/// `cephbench rados`.
#[derive(Debug, Args)]
pub struct RadosArgs {
    /// Workload.
    #[arg(value_enum)]
    pub mode: ModeArg,
    /// Pool to benchmark (must exist).
    #[arg(short = 'p', long)]
    pub pool: String,
    /// Bytes per op [default: 4M]; reads use the write run's.
    #[arg(short = 'b', long = "block-size", value_parser = size, value_name = "SIZE")]
    pub block_size: Option<u64>,
    /// Bytes per object, a multiple of the block size [default: the block size].
    #[arg(short = 'O', long = "object-size", value_parser = size, value_name = "SIZE")]
    pub object_size: Option<u64>,
    /// Ops in flight (queue depth).
    #[arg(
        short = 't',
        long = "concurrent-ios",
        default_value_t = 16,
        value_name = "N"
    )]
    pub concurrent_ios: usize,
    /// Measured run time, after the ramp [default: 60s, or unbounded with --ops].
    #[arg(short = 'd', long, value_parser = dur, value_name = "DURATION")]
    pub duration: Option<Duration>,
    /// Stop after this many ops (ramp included).
    #[arg(long, value_name = "N")]
    pub ops: Option<u64>,
    /// Ramp-up before measuring; its ops are excluded from the figures.
    #[arg(long, default_value = "0s", value_parser = dur, value_name = "DURATION")]
    pub ramp: Duration,
    /// Name of the run: objects are cephbench_data.<run>.<n>, metadata cephbench_meta.<run>.
    #[arg(long, default_value = objects::DEFAULT_RUN)]
    pub run_name: String,
    /// RADOS namespace of every object of the run (and of a group's control objects), as `rados -N`.
    #[arg(short = 'N', long, default_value = "", value_name = "NS")]
    pub namespace: String,
    /// Keep the written objects (for seq/rand later).
    #[arg(long)]
    pub no_cleanup: bool,
    /// Write at most this many objects.
    #[arg(long, value_name = "N")]
    pub max_objects: Option<u64>,
    /// write: put each op's block in the object's data (the default; with
    /// --write-omap/--write-xattr: also there), as rados bench --write-object.
    #[arg(long)]
    pub write_object: bool,
    /// write: put each op's block in an omap value of the object (a RocksDB
    /// commit on BlueStore), as rados bench --write-omap.
    #[arg(long)]
    pub write_omap: bool,
    /// write: put each op's block in an xattr of the object, as rados bench --write-xattr.
    #[arg(long)]
    pub write_xattr: bool,
    /// seq: start over when every written op was read once (instead of stopping).
    #[arg(long)]
    pub wrap: bool,
    /// How seq/rand check what each read returns [default: stamp, each block's op stamp and
    /// the run's seed-dependent tail]; `--verify` alone: full, every byte (one memcmp per read).
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "full",
        value_name = "CHECK"
    )]
    pub verify: Option<VerifyArg>,
    /// Do not check what reads return (their length still is: a short read is an error).
    #[arg(long, conflicts_with = "verify")]
    pub no_verify: bool,
    /// write: create the pool if it does not exist; a pool created so is
    /// removed with the run's objects (never a pool cephbench did not create).
    #[arg(long)]
    pub create_pool: bool,
    /// Replicas of a pool made by --create-pool.
    #[arg(long, default_value_t = 3, requires = "create_pool", value_name = "N")]
    pub pool_size: u32,
    /// Placement groups of a pool made by --create-pool.
    #[arg(long, default_value_t = 32, requires = "create_pool", value_name = "N")]
    pub pg_num: u32,
    /// Open loop: issue ops at this rate (ops/s, e.g. 1000 or 2k), at most
    /// the queue depth in flight; latency counts from each op's intended start.
    #[arg(long, value_parser = rate_arg, value_name = "OPS/S")]
    pub rate: Option<f64>,
    /// With --rate: intended start times evenly spaced or a Poisson process.
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform, requires = "rate")]
    pub arrival: ArrivalArg,
    #[command(flatten)]
    pub group: GroupArgs,
}

/// `cephbench rbd`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("img").required(true).args(["image", "size"])))]
pub struct RbdArgs {
    /// Pool holding the image.
    #[arg(short = 'p', long)]
    pub pool: String,
    /// Use this existing image (written only with --allow-write).
    #[arg(long, value_name = "NAME")]
    pub image: Option<String>,
    /// Create a uniquely named image of this size, removed afterwards unless --keep.
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub size: Option<u64>,
    /// Keep the created image.
    #[arg(long, requires = "size")]
    pub keep: bool,
    /// Allow writes (workload and preconditioning) to an existing --image: destroys its data.
    #[arg(long, requires = "image")]
    pub allow_write: bool,
    /// Features of the created image, comma-separated (e.g. layering,exclusive-lock) [default: the cluster's rbd_default_features].
    #[arg(long, value_delimiter = ',', requires = "size", value_name = "LIST")]
    pub image_features: Option<Vec<String>>,
    /// I/O pattern, as fio's --rw.
    #[arg(long, value_enum, default_value_t = RbdMode::Randread)]
    pub rw: RbdMode,
    /// Percentage of reads in readwrite/randrw.
    #[arg(long, default_value_t = 50, value_name = "PCT")]
    pub rwmix_read: u8,
    /// Bytes per op.
    #[arg(long, default_value = "4K", value_parser = size, value_name = "SIZE")]
    pub bs: u64,
    /// Ops in flight per job [default: 32; 1 with --fsync-every].
    #[arg(long, value_name = "N")]
    pub iodepth: Option<usize>,
    /// Parallel jobs, each with its own image handle and an equal slice of the test area.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub numjobs: usize,
    /// Measured run time, after the ramp [default: 60s, or unbounded with --io-total].
    #[arg(short = 'd', long, value_parser = dur, value_name = "DURATION")]
    pub duration: Option<Duration>,
    /// Stop each job after it moved this many bytes (ramp included).
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub io_total: Option<u64>,
    /// Ramp-up whose ops are excluded from the figures.
    #[arg(long, default_value = "0s", value_parser = dur, value_name = "DURATION")]
    pub ramp: Duration,
    /// Bytes of the image to use, from offset 0 [default: the whole image].
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub test_area: Option<u64>,
    /// Flush after every N writes (the lab method's fsync job); runs at iodepth 1.
    #[arg(long, value_name = "N")]
    pub fsync_every: Option<u64>,
    /// librbd's client cache; off means every write is acknowledged by the OSDs.
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    pub rbd_cache: OnOff,
    /// Skip writing the test area once before the jobs (the report flags it).
    #[arg(long)]
    pub no_precondition: bool,
    /// Random offsets uniform with repeats, as fio's norandommap [default: each block once
    /// per pass, fio's default random map].
    #[arg(long)]
    pub norandommap: bool,
    /// End with one flush of the image and report the write rate through it, as
    /// `dd conv=fsync` and `rbd bench` do (e.g. --rw write --bs 1M --iodepth 1 --io-total 1G).
    #[arg(long)]
    pub end_flush: bool,
    /// Open loop: issue ops at this rate (ops/s, e.g. 1000 or 2k), at most
    /// the queue depth in flight; latency counts from each op's intended start.
    #[arg(long, value_parser = rate_arg, value_name = "OPS/S")]
    pub rate: Option<f64>,
    /// With --rate: intended start times evenly spaced or a Poisson process.
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform, requires = "rate")]
    pub arrival: ArrivalArg,
    #[command(flatten)]
    pub group: GroupArgs,
}

/// A switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

impl RbdArgs {
    /// Validates the arguments.
    pub fn config(&self, live: bool) -> Result<RbdConfig, UsageError> {
        let u = |s: String| UsageError(s);
        plan::block_size(Flags, "bs", self.bs).map_err(u)?;
        let iodepth = self
            .iodepth
            .map_or(plan::default_iodepth(self.fsync_every.is_some()), |d| {
                d as u64
            });
        plan::in_range(Flags, "iodepth", iodepth, 1, plan::MAX_IN_FLIGHT).map_err(u)?;
        let iodepth = iodepth as usize;
        plan::in_range(Flags, "numjobs", self.numjobs as u64, 1, plan::MAX_NUMJOBS).map_err(u)?;
        plan::in_range(Flags, "rwmix-read", self.rwmix_read, 0, 100).map_err(u)?;
        plan::rbd_flushes(
            Flags,
            self.rw,
            self.rwmix_read,
            iodepth as u64,
            self.fsync_every,
        )
        .map_err(u)?;
        if self.io_total == Some(0) {
            return Err(u("--io-total must be at least 1 byte".into()));
        }
        if self.end_flush && self.group.group.is_some() {
            return Err(u(
                "--end-flush runs on one client; drop --group (or --end-flush)".into(),
            ));
        }
        if self.end_flush && !self.rw.writes(self.rwmix_read) {
            return Err(u(format!(
                "--end-flush needs a workload that writes, not --rw {}",
                self.rw.as_str()
            )));
        }
        if let (Some(area), Some(size)) = (self.test_area, self.size) {
            if area > size {
                return Err(u(format!(
                    "--test-area {} is larger than --size {}",
                    fmt_bytes(area),
                    fmt_bytes(size)
                )));
            }
        }
        let area = self.test_area.or(self.size);
        if let Some(area) = area {
            if area == 0 || area % self.bs != 0 {
                return Err(u(format!(
                    "--bs {} does not divide the test area {}; pick a --bs or --test-area so that it does",
                    fmt_bytes(self.bs),
                    fmt_bytes(area)
                )));
            }
        }
        let features = match &self.image_features {
            None => None,
            Some(names) => {
                let mut bits = 0;
                for n in names {
                    let f = cephbench::ceph::rbd::FEATURES
                        .iter()
                        .find(|(name, _)| name == n)
                        .ok_or_else(|| {
                            let all: Vec<&str> =
                                cephbench::ceph::rbd::FEATURES.iter().map(|f| f.0).collect();
                            u(format!(
                                "unknown image feature '{n}' (known: {})",
                                all.join(", ")
                            ))
                        })?;
                    bits |= f.1;
                }
                Some(bits)
            }
        };
        let duration = match (self.duration, self.io_total) {
            (Some(d), _) if d.is_zero() => {
                return Err(u("--duration must be longer than 0".into()))
            }
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(60)),
        };
        let image = match (&self.image, self.size) {
            (Some(name), None) => ImageChoice::Existing {
                name: name.clone(),
                allow_write: self.allow_write,
            },
            (None, Some(size)) if size > 0 => ImageChoice::Create {
                name: cephbench::names::new_image_name(),
                size,
                keep: self.keep,
                features,
            },
            (None, Some(_)) => return Err(u("--size must be larger than 0".into())),
            _ => return Err(u("give exactly one of --image NAME or --size SIZE".into())),
        };
        Ok(RbdConfig {
            pool: self.pool.clone(),
            image,
            mode: self.rw,
            rwmix_read: self.rwmix_read,
            bs: self.bs,
            iodepth,
            numjobs: self.numjobs,
            duration,
            io_total: self.io_total,
            ramp: self.ramp,
            test_area: self.test_area,
            fsync_every: self.fsync_every,
            rbd_cache: self.rbd_cache == OnOff::On,
            norandommap: self.norandommap,
            end_flush: self.end_flush,
            precondition: !self.no_precondition,
            prior_precondition: None,
            live,
            telemetry: true,
            counter_interval: cephbench::telemetry::DEFAULT_COUNTER_INTERVAL,
            start_at: None,
            rate: rate_spec(self.rate, self.arrival),
        })
    }
}

/// `cephbench osd-bench`.
#[derive(Debug, Args)]
pub struct OsdBenchArgs {
    /// Bench the OSDs that hold this pool's PGs [default: every OSD that is up].
    #[arg(short = 'p', long, conflicts_with = "osds")]
    pub pool: Option<String>,
    /// Bench these OSDs, e.g. `0,1` (comma-separated ids).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub osds: Vec<i32>,
    /// Bytes per write (4 KiB .. 64 MiB).
    #[arg(
        short = 'b',
        long = "block-size",
        default_value = "4K",
        value_name = "SIZE"
    )]
    pub block_size: String,
    /// Writes per OSD in the queued bench [default: 1000 below 1 MiB blocks (the OSD allows 3000
    /// by default), else 100].
    #[arg(long, value_name = "N")]
    pub writes: Option<u64>,
    /// Single-write benches per OSD (each one write queued -> committed, alone).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub probes: u64,
}

impl OsdBenchArgs {
    /// The validated run.
    pub fn config(&self) -> Result<cephbench::osdbench::OsdBenchConfig, UsageError> {
        use cephbench::osdbench::{OsdBenchConfig, Target};
        let block_size =
            parse_size(&self.block_size).map_err(|e| UsageError(format!("--block-size: {e}")))?;
        if !(4096..=64 << 20).contains(&block_size) {
            return Err(UsageError(format!(
                "--block-size {} is outside 4 KiB .. 64 MiB (the OSD's osd_bench_max_block_size): pick a size in that range",
                self.block_size
            )));
        }
        let writes = self
            .writes
            .unwrap_or(if block_size < 1 << 20 { 1000 } else { 100 });
        if !(1..=1_000_000).contains(&writes) {
            return Err(UsageError(format!(
                "--writes {writes} is outside 1 .. 1000000: give a count in that range"
            )));
        }
        if !(1..=10_000).contains(&self.probes) {
            return Err(UsageError(format!(
                "--probes {} is outside 1 .. 10000: give a count in that range",
                self.probes
            )));
        }
        if let Some(o) = self.osds.iter().find(|o| **o < 0) {
            return Err(UsageError(format!(
                "--osds: '{o}' is not an OSD id: give ids such as 0,1"
            )));
        }
        let target = match (&self.pool, self.osds.is_empty()) {
            (Some(p), _) => Target::Pool(p.clone()),
            (None, false) => Target::Osds(self.osds.clone()),
            (None, true) => Target::AllUp,
        };
        Ok(OsdBenchConfig {
            target,
            block_size,
            writes,
            probes: self.probes,
        })
    }
}

/// `cephbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files, suite files (a `suite --pools` file counts as its suites) or fio JSON
    /// outputs; the first is the baseline of the Diff columns.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub view: SuiteViewArgs,
    /// Exit 4 when a file is worse than the baseline by more than PCT % in IOPS, MiB/s or mean
    /// latency and the difference is not within the noise (for CI regression gates).
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub fail_if_slower: Option<f64>,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a percentage >= 0 (e.g. 10)")),
    }
}

/// `cephbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files (from --format json); html puts them all on one page with comparison bars.
    /// Or suite files (`suite --format json`, one pool or --pools), or one sweep file.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub view: SuiteViewArgs,
    /// Write the report to this file instead of stdout (only if every input is valid).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `cephbench cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Pool to clean.
    #[arg(short = 'p', long)]
    pub pool: String,
    /// Only this run's objects [default: every cephbench run in the pool].
    #[arg(long, conflicts_with = "image")]
    pub run_name: Option<String>,
    /// Only this image made by `cephbench rbd --size` (a cephbench_img.* name).
    #[arg(long, value_name = "NAME")]
    pub image: Option<String>,
    /// Clean this RADOS namespace ("" for the default).
    #[arg(short = 'N', long, default_value = "", value_name = "NS")]
    pub namespace: String,
    /// Clean cephbench's objects in every namespace of the pool (needs a key that may list them all).
    #[arg(long, conflicts_with_all = ["namespace", "image"])]
    pub all_namespaces: bool,
}

/// `--arrival`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalArg {
    /// Evenly spaced.
    Uniform,
    /// Exponential gaps (a Poisson process).
    Poisson,
}

/// `--rate`: ops/s, `1000`, `2k`, `1.5k`, `1M`; > 0 and finite.
fn rate_arg(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v * mult > 0.0 && v * mult <= 1e7 => Ok(v * mult),
        _ => Err(format!(
            "'{s}' is not a rate: give ops per second above 0 and at most 10M, e.g. 500 or 2k"
        )),
    }
}

fn rate_spec(rate: Option<f64>, arrival: ArrivalArg) -> Option<cephbench::engine::RateSpec> {
    rate.map(|ops_per_sec| cephbench::engine::RateSpec {
        ops_per_sec,
        arrival: match arrival {
            ArrivalArg::Uniform => cephbench::engine::Arrival::Uniform,
            ArrivalArg::Poisson => cephbench::engine::Arrival::Poisson,
        },
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    })
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

fn dur(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// Bad input that clap's types cannot catch; printed as one line, exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl ConnArgs {
    /// The connection options these flags describe.
    pub fn options(&self) -> ConnectOptions {
        let entity = match (&self.name, &self.id) {
            (Some(n), _) => n.clone(),
            (None, Some(id)) => format!("client.{id}"),
            (None, None) => std::env::var("CEPH_CLIENT_ID")
                .map(|id| format!("client.{id}"))
                .unwrap_or_else(|_| "client.admin".into()),
        };
        ConnectOptions {
            conf: self.conf.clone(),
            entity,
            keyring: self.keyring.clone(),
            mon_host: self.mon_host.clone(),
            connect_timeout: self.connect_timeout,
            op_timeout: self.op_timeout,
            overrides: Vec::new(),
        }
    }

    /// The telemetry identity's connection options, if one was given.
    pub fn telemetry_options(&self) -> Option<ConnectOptions> {
        let id = self.telemetry_id.as_ref()?;
        let mut o = self.options();
        o.entity = if id.contains('.') {
            id.clone()
        } else {
            format!("client.{id}")
        };
        if self.telemetry_keyring.is_some() {
            o.keyring = self.telemetry_keyring.clone();
        }
        Some(o)
    }
}

impl RadosArgs {
    /// Validates the arguments.
    pub fn config(&self, live: bool) -> Result<RadosConfig, UsageError> {
        let u = |s: String| UsageError(s);
        cephbench::names::validate_token("--run-name", &self.run_name).map_err(u)?;
        cephbench::names::validate_namespace(&self.namespace).map_err(u)?;
        let block_size = self.block_size.unwrap_or(4 << 20);
        let object_size = self.object_size.unwrap_or(block_size);
        if block_size == 0 {
            return Err(u("--block-size must be at least 1 byte (e.g. -b 4K)".into()));
        }
        if block_size > object_size {
            return Err(u(format!(
                "--block-size {} is larger than --object-size {}; use -O {} or a smaller -b",
                fmt_bytes(block_size),
                fmt_bytes(object_size),
                fmt_bytes(block_size)
            )));
        }
        if object_size % block_size != 0 {
            return Err(u(format!(
                "--object-size {} is not a multiple of --block-size {}",
                fmt_bytes(object_size),
                fmt_bytes(block_size)
            )));
        }
        plan::block_size(Flags, "block-size", block_size).map_err(u)?;
        plan::in_range(
            Flags,
            "concurrent-ios",
            self.concurrent_ios as u64,
            1,
            plan::MAX_IN_FLIGHT,
        )
        .map_err(u)?;
        if self.ops == Some(0) || self.max_objects == Some(0) {
            return Err(u("--ops and --max-objects must be at least 1".into()));
        }
        let duration = match (self.duration, self.ops) {
            (Some(d), _) if d.is_zero() => {
                return Err(u("--duration must be longer than 0".into()))
            }
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(60)),
        };
        let mode = match self.mode {
            ModeArg::Write => RadosMode::Write,
            ModeArg::Seq => RadosMode::Seq,
            ModeArg::Rand => RadosMode::Rand,
        };
        if !mode.is_write() && (self.no_cleanup || self.max_objects.is_some()) {
            return Err(u(
                "--no-cleanup and --max-objects apply to `write` only".into()
            ));
        }
        if !mode.is_write() && self.create_pool {
            return Err(u(
                "--create-pool applies to `write` only (seq/rand read an existing run)".into(),
            ));
        }
        plan::in_range(Flags, "pool-size", self.pool_size, 1, plan::MAX_POOL_SIZE).map_err(u)?;
        plan::in_range(Flags, "pg-num", self.pg_num, 1, plan::MAX_PG_NUM).map_err(u)?;
        if mode.is_write() && (self.verify.is_some() || self.no_verify || self.wrap) {
            return Err(u(
                "--verify, --no-verify and --wrap apply to `seq`/`rand` only".into(),
            ));
        }
        let dest_flags = self.write_object || self.write_omap || self.write_xattr;
        if !mode.is_write() && dest_flags {
            return Err(u(
                "--write-object/--write-omap/--write-xattr apply to `write` only (seq/rand read object data)".into(),
            ));
        }
        let write_dest = if dest_flags {
            WriteDest {
                object: self.write_object,
                omap: self.write_omap,
                xattr: self.write_xattr,
            }
        } else {
            WriteDest::default()
        };
        let verify = match (self.verify, self.no_verify) {
            (_, true) => VerifyMode::None,
            (Some(VerifyArg::Full), _) => VerifyMode::Full,
            (Some(VerifyArg::Stamp) | None, _) => VerifyMode::Stamp,
        };
        Ok(RadosConfig {
            pool: self.pool.clone(),
            mode,
            block_size,
            object_size,
            concurrency: self.concurrent_ios,
            duration,
            ramp: self.ramp,
            max_ops: self.ops,
            max_objects: self.max_objects,
            run_name: self.run_name.clone(),
            namespace: self.namespace.clone(),
            no_cleanup: self.no_cleanup,
            wrap: self.wrap,
            write_dest,
            verify,
            live,
            telemetry: true,
            counter_interval: cephbench::telemetry::DEFAULT_COUNTER_INTERVAL,
            create_pool: self.create_pool.then_some(cephbench::bench::PoolSpec {
                size: self.pool_size,
                pg_num: self.pg_num,
            }),
            start_at: None,
            rate: rate_spec(self.rate, self.arrival),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RadosConfig, String> {
        let mut v = vec!["cephbench", "rados"];
        v.extend_from_slice(args);
        let cli = Cli::try_parse_from(v).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Rados(r) => r.config(false).map_err(|e| e.to_string()),
            _ => unreachable!(),
        }
    }

    /// A job a controller sends is checked by the agent with the rules its
    /// flags were checked with: what the command line refuses, a received
    /// job cannot ask for either.
    #[test]
    fn received_jobs_are_checked_by_the_flags_rules() {
        use cephbench::group::JobSpec;
        let mut rados = parse(&["write", "-p", "x", "-b", "4K", "-t", "8"]).unwrap();
        assert_eq!(JobSpec::Rados(rados.clone()).check(), Ok(()));
        rados.concurrency = 70_000;
        let e = JobSpec::Rados(rados.clone()).check().unwrap_err();
        assert!(
            e.starts_with("--concurrent-ios 70000 is out of range"),
            "{e}"
        );
        rados.concurrency = 8;
        rados.block_size = 0;
        assert!(JobSpec::Rados(rados).check().is_err());
        let cli = Cli::try_parse_from([
            "cephbench",
            "rbd",
            "-p",
            "x",
            "--size",
            "1G",
            "--rw",
            "randwrite",
        ])
        .unwrap();
        let Command::Rbd(a) = cli.command else {
            panic!("an rbd command")
        };
        let mut rbd = a.config(false).unwrap();
        assert_eq!(JobSpec::Rbd(rbd.clone()).check(), Ok(()));
        rbd.fsync_every = Some(1);
        let e = JobSpec::Rbd(rbd.clone()).check().unwrap_err();
        assert!(e.contains("runs at iodepth 1"), "{e}");
        rbd.iodepth = 1;
        assert_eq!(JobSpec::Rbd(rbd.clone()).check(), Ok(()));
        rbd.numjobs = 0;
        assert!(JobSpec::Rbd(rbd).check().is_err());
    }

    #[test]
    fn defaults_match_rados_bench() {
        let c = parse(&["write", "-p", "x"]).unwrap();
        assert_eq!(
            (c.block_size, c.object_size, c.concurrency),
            (4 << 20, 4 << 20, 16)
        );
        assert_eq!(c.duration, Some(Duration::from_secs(60)));
        let c = parse(&["write", "-p", "x", "-b", "4K", "-O", "4M", "--ops", "10"]).unwrap();
        assert_eq!(
            (c.block_size, c.object_size, c.duration),
            (4096, 4 << 20, None)
        );
    }

    #[test]
    fn write_destinations_as_rados_bench() {
        let d = |a: &[&str]| parse(a).map(|c| c.write_dest);
        assert_eq!(d(&["write", "-p", "x"]).unwrap(), WriteDest::default());
        let omap = d(&["write", "-p", "x", "--write-omap"]).unwrap();
        assert!(omap.omap && !omap.object && !omap.xattr);
        let all = d(&[
            "write",
            "-p",
            "x",
            "--write-object",
            "--write-omap",
            "--write-xattr",
        ]);
        assert_eq!(all.unwrap().count(), 3);
        assert!(d(&["seq", "-p", "x", "--write-omap"]).is_err());
    }

    #[test]
    fn reads_are_checked_by_default() {
        let v = |a: &[&str]| parse(a).unwrap().verify;
        assert_eq!(v(&["seq", "-p", "x"]), VerifyMode::Stamp);
        assert_eq!(v(&["seq", "-p", "x", "--verify"]), VerifyMode::Full);
        assert_eq!(v(&["rand", "--verify", "-p", "x"]), VerifyMode::Full);
        assert_eq!(v(&["seq", "-p", "x", "--verify=stamp"]), VerifyMode::Stamp);
        assert_eq!(v(&["seq", "-p", "x", "--no-verify"]), VerifyMode::None);
        assert_eq!(
            v(&["write", "-p", "x"]),
            VerifyMode::Stamp,
            "unused by writes"
        );
    }

    #[test]
    fn bad_values_name_the_fix() {
        let e = parse(&["write", "-p", "x", "-b", "0"]).unwrap_err();
        assert!(e.contains("at least 1 byte"), "{e}");
        let e = parse(&["write", "-p", "x", "-b", "8K", "-O", "4K"]).unwrap_err();
        assert!(e.contains("larger than --object-size"), "{e}");
        let e = parse(&["write", "-p", "x", "-b", "3K", "-O", "4K"]).unwrap_err();
        assert!(e.contains("multiple"), "{e}");
        assert!(parse(&["write", "-p", "x", "-t", "0"]).is_err());
        assert!(parse(&["write", "-p", "x", "-d", "0"]).is_err());
        assert!(parse(&["write", "-p", "x", "--run-name", "a/b"]).is_err());
        assert!(parse(&["seq", "-p", "x", "--no-cleanup"]).is_err());
        assert!(parse(&["write", "-p", "x", "--verify"]).is_err());
        assert!(parse(&["write", "-p", "x", "--no-verify"]).is_err());
        assert!(parse(&["seq", "-p", "x", "--verify", "--no-verify"]).is_err());
        assert!(parse(&["seq", "-p", "x", "--verify=most"]).is_err());
        assert!(parse(&["write", "-p", "x", "-b", "4X"]).is_err());
    }

    #[test]
    fn rate_parses_and_validates() {
        let c = parse(&["write", "-p", "x", "--rate", "2k"]).unwrap();
        let r = c.rate.unwrap();
        assert_eq!(r.ops_per_sec, 2000.0);
        assert_eq!(r.arrival, cephbench::engine::Arrival::Uniform);
        let c = parse(&["write", "-p", "x", "--rate", "150", "--arrival", "poisson"]).unwrap();
        assert_eq!(c.rate.unwrap().ops_per_sec, 150.0);
        assert_eq!(c.rate.unwrap().arrival, cephbench::engine::Arrival::Poisson);
        assert!(parse(&["write", "-p", "x"]).unwrap().rate.is_none());
        for bad in ["0", "-5", "nan", "inf", "fast", "1e9"] {
            let e = parse(&["write", "-p", "x", &format!("--rate={bad}")]).unwrap_err();
            assert!(e.contains("not a rate"), "{bad}: {e}");
        }
        assert!(parse(&["write", "-p", "x", "--arrival", "poisson"]).is_err());
    }

    fn sweep(
        args: &[&str],
    ) -> Result<(cephbench::sweep::SweepJob, cephbench::sweep::SweepOptions), String> {
        let mut v = vec!["cephbench", "sweep"];
        v.extend_from_slice(args);
        let cli = Cli::try_parse_from(v).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Sweep(s) => s
                .plan(true, Duration::from_secs(5), false)
                .map_err(|e| e.to_string()),
            _ => unreachable!(),
        }
    }

    #[test]
    fn sweep_takes_the_workload_flags_and_the_points() {
        use cephbench::sweep::{Axis, SweepJob};
        let (job, o) = sweep(&[
            "rados",
            "write",
            "-p",
            "x",
            "-b",
            "4K",
            "--rates",
            "200,400,1k",
        ])
        .unwrap();
        assert_eq!(
            (o.axis, o.steps.clone()),
            (Axis::Rate, vec![200.0, 400.0, 1000.0])
        );
        assert_eq!(o.pools, vec!["x".to_string()]);
        let SweepJob::Rados(c) = job else { panic!() };
        assert_eq!(c.block_size, 4096);
        assert_eq!(c.duration, Some(Duration::from_secs(5)), "5 s per point");
        assert_eq!(c.ramp, Duration::from_secs(1), "1 s ramp per point");
        assert!(c.rate.is_none(), "set per point");
        let (_, o) = sweep(&[
            "rados",
            "write",
            "--pools",
            "a,b",
            "--rate-from",
            "100",
            "--rate-to",
            "800",
        ])
        .unwrap();
        assert_eq!(o.steps, vec![100.0, 200.0, 400.0, 800.0]);
        assert_eq!(o.pools, vec!["a".to_string(), "b".to_string()]);
        let (job, o) = sweep(&[
            "rbd",
            "-p",
            "r",
            "--size",
            "1G",
            "--rw",
            "randwrite",
            "--qd",
            "1,2,4",
            "-d",
            "3",
        ])
        .unwrap();
        assert_eq!((o.axis, o.steps), (Axis::Qd, vec![1.0, 2.0, 4.0]));
        let SweepJob::Rbd(c) = job else { panic!() };
        assert_eq!(c.duration, Some(Duration::from_secs(3)));
        let (_, o) = sweep(&[
            "rados",
            "write",
            "-p",
            "x",
            "--rates",
            "1,2",
            "--p99-target",
            "5ms",
            "--arrival",
            "poisson",
        ])
        .unwrap();
        assert_eq!(o.p99_target, Some(Duration::from_millis(5)));
        assert_eq!(o.arrival, cephbench::engine::Arrival::Poisson);
    }

    #[test]
    fn sweep_refuses_what_it_cannot_do_naming_the_fix() {
        let e = |a: &[&str]| sweep(a).unwrap_err();
        assert!(e(&["rados", "write", "-p", "x"]).contains("give the points once"));
        assert!(
            e(&["rados", "write", "-p", "x", "--rates", "1,2", "--qd", "1,2"])
                .contains("give the points once")
        );
        assert!(e(&["rados", "write", "--rates", "1,2"]).contains("give -p POOL"));
        assert!(
            e(&["rados", "write", "-p", "x", "--pools", "a,b", "--rates", "1,2"])
                .contains("not both")
        );
        assert!(e(&["rados", "write", "--pools", "a,a", "--rates", "1,2"]).contains("twice"));
        assert!(e(&["rados", "write", "-p", "x", "--rates", "2,1"]).contains("must rise"));
        assert!(e(&["rados", "write", "-p", "x", "--rates", "2"]).contains("at least two"));
        assert!(
            e(&["rados", "write", "-p", "x", "--rates", "1,2", "--rate", "5"]).contains("--rates")
        );
        assert!(e(&[
            "rados",
            "write",
            "-p",
            "x",
            "--rates",
            "1,2",
            "--no-cleanup"
        ])
        .contains("--no-cleanup"));
        assert!(e(&[
            "rbd",
            "-p",
            "x",
            "--size",
            "1G",
            "--rates",
            "1,2",
            "--group",
            "g",
            "--clients",
            "2"
        ])
        .contains("group"));
        assert!(e(&["rados", "write", "-p", "x", "--rate-step", "5"]).contains("add --rate-from"));
        assert!(e(&["rados", "write", "-p", "x", "--qd", "0,2"])
            .contains("--qd 0 is out of range; use 1 to 65536"));
        assert!(e(&[
            "rados",
            "write",
            "-p",
            "x",
            "--qd",
            "1,2",
            "--arrival",
            "poisson"
        ])
        .contains("rate sweeps"));
        assert!(e(&[
            "rados",
            "write",
            "-p",
            "x",
            "--rates",
            "1,2",
            "--p99-target",
            "0"
        ])
        .contains("above 0"));
        assert!(e(&[
            "rbd",
            "-p",
            "x",
            "--size",
            "1G",
            "--rates",
            "1,2",
            "--io-total",
            "1M"
        ])
        .contains("--io-total"));
    }
}
