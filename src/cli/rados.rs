//! `cephbench rados`.

use std::time::Duration;

use clap::{Args, ValueEnum};

use cephbench::bench::RadosConfig;
use cephbench::objects::{self, VerifyMode};
use cephbench::plan::{self, Source::Flags};
use cephbench::units::fmt_bytes;
use cephbench::workload::rados::{RadosMode, WriteDest};

use super::group::GroupArgs;
use super::{dur, rate_arg, rate_spec, size, ArrivalArg, UsageError};

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
    #[command(flatten)]
    pub steady: super::SteadyArgs,
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
        let steady = self.steady.config(self.duration.is_some())?;
        let duration = match (self.duration, self.ops) {
            (Some(d), _) if d.is_zero() => {
                return Err(u("--duration must be longer than 0".into()))
            }
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(steady.as_ref().map_or(Duration::from_secs(60), |s| s.max)),
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
            interval: cephbench::progress::DEFAULT_INTERVAL,
            steady,
            op_history: None,
            drop_caches: false,
            disrupt: None,
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
    use crate::cli::{Cli, Command};
    use clap::Parser;

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
}
