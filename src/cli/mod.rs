//! Command-line arguments (clap) and their translation into validated configs.
//!
//! Here: the top-level [`Cli`] with the options every command shares (connection,
//! telemetry, output) and the subcommands; the value parsers the commands share.
//! Each command's arguments and their translation are in a file of their own,
//! named as the command (`osd_bench.rs` for `osd-bench`); `group.rs` the
//! `--group` options of rados, rbd, suite and sweep.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use cephbench::ceph::ConnectOptions;
use cephbench::report::Format;
use cephbench::units::{parse_duration, parse_size};

mod agent;
mod cleanup;
mod compare;
mod diagnose;
mod group;
mod osd_bench;
mod rados;
mod rbd;
mod report;
mod suite;
mod sweep;
mod watch;

pub use agent::AgentArgs;
pub use cleanup::CleanupArgs;
pub use compare::CompareArgs;
pub use diagnose::DiagnoseArgs;
pub use osd_bench::OsdBenchArgs;
pub use rados::RadosArgs;
pub use rbd::RbdArgs;
pub use report::ReportArgs;
pub use suite::SuiteArgs;
pub use sweep::SweepArgs;
pub use watch::WatchArgs;

/// The `--help` heading of the options that say how to reach the cluster.
const CONNECTION: &str = "Connection";
/// The `--help` heading of the report's options.
const OUTPUT: &str = "Output";
/// The `--help` heading of the options of the probes around a run.
const TELEMETRY: &str = "Telemetry";
/// The `--help` heading of `--disrupt`.
const DISRUPTION: &str = "Disruption";
/// Subcommands that read files only: the cluster's options are accepted but
/// not shown in their `--help`.
const OFFLINE: [&str; 2] = ["compare", "report"];

/// Parses the process's arguments. `compare` and `report` work without a
/// cluster, so their `--help` leaves out the connection and telemetry options
/// (and the live line) that every command accepts.
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    Cli::from_arg_matches(&command().try_get_matches()?)
}

/// The clap command [`parse`] parses with, as `--help` shows it: also what
/// the man pages and shell completions are generated from (`tools/docgen`).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    // A subcommand's own argument of a global's id shadows the global there:
    // hidden copies keep `compare -c C` accepted but out of `compare --help`.
    let cluster_options: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            matches!(
                a.get_help_heading(),
                Some(CONNECTION | TELEMETRY | DISRUPTION)
            ) || a.get_id() == "progress"
        })
        .map(|a| a.clone().global(false).hide(true))
        .collect();
    for name in OFFLINE {
        cmd = cmd.mut_subcommand(name, |sc| sc.args(cluster_options.iter().cloned()));
    }
    cmd
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
    /// timelines and the OSDs named with a change (0: only before and after).
    #[arg(
        long,
        global = true,
        default_value = "2s",
        value_parser = dur,
        value_name = "DURATION",
        help_heading = TELEMETRY
    )]
    pub counter_interval: Duration,
    /// Length of each timeline sample (IOPS, mean, p50, p99 and max per interval;
    /// the live line's period). From 100ms to 1h.
    #[arg(
        long,
        global = true,
        default_value = "1s",
        value_parser = interval,
        value_name = "DURATION",
        help_heading = OUTPUT
    )]
    pub interval: Duration,
    /// Raise each OSD's op history to N ops for the run (and a 5 s window;
    /// both put back afterwards) and split the mean from the OSDs' records
    /// of this run's own ops, not only from their counters (needs osd 'allow *').
    #[arg(
        long,
        global = true,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(
            i64::from(cephbench::telemetry::ophistory::MIN_SIZE)
                ..=i64::from(cephbench::telemetry::ophistory::MAX_SIZE)
        ),
        help_heading = TELEMETRY
    )]
    pub op_history: Option<u32>,
    /// Refuse to start unless the cluster is quiet: HEALTH_OK, every PG
    /// active+clean, no scrub, no recovery (exit 1, the reason named).
    #[arg(long, global = true, help_heading = TELEMETRY)]
    pub require_quiet: bool,
    /// Cold reads: before each job that reads, every OSD of the pool drops
    /// its caches (`ceph tell osd.N cache drop`; needs osd 'allow *').
    #[arg(long, global = true, help_heading = TELEMETRY)]
    pub drop_caches: bool,
    /// Take an OSD out (or down, or stop it) during the job and put it back:
    /// `osd.N:out@20s,in@60s`, times from the job's start; actions out, in,
    /// down, stop, start (stop/start: a systemd unit ceph-osd@N on this host).
    /// Each phase (before, degraded, recovering, after) is reported. Needs
    /// --allow-disrupt and mon 'allow rw'; the OSD is put back on every way out.
    #[arg(
        long,
        global = true,
        value_name = "SPEC",
        value_parser = disrupt_arg,
        help_heading = DISRUPTION
    )]
    pub disrupt: Option<cephbench::disrupt::DisruptPlan>,
    /// Confirm --disrupt: it changes the cluster for everyone using it.
    #[arg(long, global = true, help_heading = DISRUPTION)]
    pub allow_disrupt: bool,
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
#[derive(Debug, Clone)]
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
    /// `--interval`: the timeline's sample length.
    pub interval: Duration,
    /// `--op-history`.
    pub op_history: Option<u32>,
    /// `--require-quiet`.
    pub require_quiet: bool,
    /// `--drop-caches`.
    pub drop_caches: bool,
    /// `--disrupt`.
    pub disrupt: Option<cephbench::disrupt::DisruptPlan>,
    /// `--allow-disrupt`.
    pub allow_disrupt: bool,
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
            interval: self.interval,
            op_history: self.op_history,
            require_quiet: self.require_quiet,
            drop_caches: self.drop_caches,
            disrupt: self.disrupt.clone(),
            allow_disrupt: self.allow_disrupt,
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
    /// What to fix first: the pool's weak links ranked by what fixing each would gain (each OSD
    /// checked on its own, then QD1 and QD16 4 KiB writes, 4 KiB reads, a 4 MiB write).
    Diagnose(DiagnoseArgs),
    /// Run a rados or rbd workload at rising rates (or queue depths) and find the knee.
    Sweep(SweepArgs),
    /// A canary until stopped: a few timed writes and reads per second on each pool, exported
    /// for Prometheus at /metrics (latency histograms by pool, op and primary OSD; failures).
    Watch(WatchArgs),
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

fn disrupt_arg(s: &str) -> Result<cephbench::disrupt::DisruptPlan, String> {
    cephbench::disrupt::spec::parse(s)
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

fn dur(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

fn interval(s: &str) -> Result<Duration, String> {
    cephbench::plan::interval(cephbench::plan::Source::Flags, "interval", dur(s)?)
}

/// `--steady` and its window, shared by `rados` and `rbd`.
#[derive(Debug, Clone, clap::Args)]
pub struct SteadyArgs {
    /// Stop once steady, with fio's criteria over the last --steady-window of intervals:
    /// iops:2% (every interval's IOPS within 2 % of the window's mean), iops_slope:0.5%
    /// (least-squares slope per second), lat:5%, lat_slope:1% (mean latency; without %: ms).
    #[arg(long, value_name = "CRITERION")]
    pub steady: Option<String>,
    /// The rolling window --steady looks at [default: 30s].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub steady_window: Option<Duration>,
    /// Longest measured run with --steady; past it the report says "not steady after" [default: 10m].
    #[arg(long, value_parser = dur, value_name = "DURATION")]
    pub steady_max: Option<Duration>,
}

impl SteadyArgs {
    /// The validated `--steady` config (its window against the shortest
    /// `--interval`; the command checks it again at the one given).
    pub fn config(
        &self,
        duration_given: bool,
    ) -> Result<Option<cephbench::steady::SteadyConfig>, UsageError> {
        cephbench::plan::steady(
            self.steady.as_deref(),
            self.steady_window,
            self.steady_max,
            cephbench::plan::MIN_INTERVAL,
            duration_given,
        )
        .map_err(UsageError)
    }
}

/// `--data-pools` of `suite` and `sweep rbd` with `--pools`.
#[derive(Debug, Args)]
pub struct DataPoolsArg {
    /// With --pools: each pool's RBD data pool, in order, - for none (e.g. --pools rep3,rep3
    /// --data-pools -,ec21 compares 3 copies with 2+1, both images' metadata in rep3).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "A,B",
        allow_hyphen_values = true
    )]
    pub data_pools: Option<Vec<String>>,
}

/// clap's error as one line: the missing arguments named, an invalid
/// value's valid values listed with clap's "did you mean" (its rendering
/// puts them on lines of their own, after the first).
pub fn usage_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let strings = |k| match e.get(k) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let did_you_mean = [
        ContextKind::SuggestedValue,
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
    ]
    .into_iter()
    .flat_map(strings)
    .next()
    .map(|s| format!(": did you mean '{s}'?"))
    .unwrap_or_default();
    let arg = strings(ContextKind::InvalidArg);
    let valid = strings(ContextKind::ValidValue);
    match e.kind() {
        ErrorKind::MissingRequiredArgument if !arg.is_empty() => {
            format!("missing required arguments: {}", arg.join(", "))
        }
        ErrorKind::InvalidValue if !valid.is_empty() => format!(
            "invalid value '{}' for '{}'{did_you_mean} (valid values: {})",
            strings(ContextKind::InvalidValue).join(""),
            arg.join(""),
            valid.join(", ")
        ),
        _ => format!("{}{did_you_mean}", first_line(e)),
    }
}

/// The first line of clap's rendering of `e`, without its "error: ".
fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("invalid arguments");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
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
