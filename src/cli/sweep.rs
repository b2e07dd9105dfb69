//! `cephbench sweep rados|rbd`: the workload's flags, the points, and their translation.

use std::time::Duration;

use clap::{Args, Subcommand};

use cephbench::plan::{self, Source::Flags};

use super::{dur, rate_arg, ArrivalArg, RadosArgs, RbdArgs, UsageError};

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
    #[command(flatten)]
    pub paired: super::DataPoolsArg,
}

impl SweepOpts {
    /// The pools, what rises, the steps and the target, validated.
    fn plan(
        &self,
        pool: &str,
        data_pool: Option<&str>,
        arrival: ArrivalArg,
    ) -> Result<cephbench::sweep::SweepOptions, UsageError> {
        use cephbench::sweep::{check_rising, rate_steps, Axis};
        let u = |s: String| UsageError(s);
        let pools = match (pool.is_empty(), &self.pools) {
            (false, None) => vec![pool.to_string()],
            (true, Some(ps)) if !ps.is_empty() && ps.iter().all(|p| !p.is_empty()) => {
                if self.paired.data_pools.is_none()
                    && ps.iter().enumerate().any(|(i, p)| ps[..i].contains(p))
                {
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
        let data_pools =
            plan::data_pools(&pools, data_pool, self.paired.data_pools.as_deref()).map_err(u)?;
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
            data_pools,
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
                if a.sweep.paired.data_pools.is_some() {
                    return Err(u(
                        "--data-pools places an RBD image's data; sweep rados writes objects into \
                         each of --pools itself: drop --data-pools",
                    ));
                }
                let mut o = a.sweep.plan(&b.pool, None, b.arrival)?;
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
                if a.sweep.paired.data_pools.is_some() && b.size.is_none() {
                    return Err(u(
                        "--data-pools places the data of an image cephbench creates: give --size \
                         (an existing --image keeps its own data pool)",
                    ));
                }
                let o = a.sweep.plan(&b.pool, b.data_pool.as_deref(), b.arrival)?;
                (SweepJob::Rbd(cfg), o)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

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
