//! `cephbench rbd`.

use std::time::Duration;

use clap::{Args, ValueEnum};

use cephbench::bench::{ImageChoice, RbdConfig};
use cephbench::plan::{self, Source::Flags};
use cephbench::units::fmt_bytes;
use cephbench::workload::rbd::RbdMode;

use super::group::GroupArgs;
use super::{dur, rate_arg, rate_spec, size, ArrivalArg, UsageError};

/// `cephbench rbd`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("img").required(true).args(["image", "size"])))]
pub struct RbdArgs {
    /// Pool holding the image (with --data-pool: its metadata only).
    #[arg(short = 'p', long)]
    pub pool: String,
    /// Put the created image's data objects in this pool, as `rbd create --data-pool`
    /// (e.g. an erasure-coded pool with allow_ec_overwrites); the metadata stays in -p.
    #[arg(long, value_name = "POOL")]
    pub data_pool: Option<String>,
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
    #[command(flatten)]
    pub steady: super::SteadyArgs,
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
        let iodepth = self.checked_iodepth()? as usize;
        self.check_sizes()?;
        let features = self.image_features()?;
        let steady = self.steady.config(self.duration.is_some())?;
        let duration = match (self.duration, self.io_total) {
            (Some(d), _) if d.is_zero() => {
                return Err(u("--duration must be longer than 0".into()))
            }
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(steady.as_ref().map_or(Duration::from_secs(60), |s| s.max)),
        };
        let image = self.image_choice(features)?;
        if let Some(d) = &self.data_pool {
            if self.image.is_some() {
                return Err(u(format!(
                    "--data-pool {d} places the data of an image cephbench creates: use --size; \
                     an existing --image keeps its own data pool (read from the image)"
                )));
            }
            plan::data_pool(Flags, &self.pool, d).map_err(u)?;
        }
        Ok(RbdConfig {
            pool: self.pool.clone(),
            data_pool: self.data_pool.clone(),
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
            interval: cephbench::progress::DEFAULT_INTERVAL,
            steady,
            op_history: None,
            drop_caches: false,
            disrupt: None,
            start_at: None,
            rate: rate_spec(self.rate, self.arrival),
        })
    }

    /// The workload's flags checked (block size, depth, jobs, mix, flushes,
    /// `--io-total`, `--end-flush`); the queue depth, given or by default.
    fn checked_iodepth(&self) -> Result<u64, UsageError> {
        let u = |s: String| UsageError(s);
        plan::block_size(Flags, "bs", self.bs).map_err(u)?;
        let iodepth = self
            .iodepth
            .map_or(plan::default_iodepth(self.fsync_every.is_some()), |d| {
                d as u64
            });
        plan::in_range(Flags, "iodepth", iodepth, 1, plan::MAX_IN_FLIGHT).map_err(u)?;
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
        Ok(iodepth)
    }

    /// `--size` and `--test-area`: each holds a block, the area fits the
    /// image and `--bs` divides it.
    fn check_sizes(&self) -> Result<(), UsageError> {
        let u = |s: String| UsageError(s);
        for (flag, v) in [("--size", self.size), ("--test-area", self.test_area)] {
            if v == Some(0) {
                return Err(u(format!(
                    "{flag} 0 holds no block: give it at least one --bs ({})",
                    fmt_bytes(self.bs)
                )));
            }
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
        if let Some(size) = self.size {
            let area = self.test_area.unwrap_or(size);
            plan::image_size(Flags, "size", "test-area", size, area).map_err(u)?;
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
        Ok(())
    }

    /// `--image-features`: the named features' bits.
    fn image_features(&self) -> Result<Option<u64>, UsageError> {
        let u = |s: String| UsageError(s);
        let Some(names) = &self.image_features else {
            return Ok(None);
        };
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
        Ok(Some(bits))
    }

    /// The image to run on: `--image`, or one to create of `--size` (with
    /// the features of `--image-features`).
    fn image_choice(&self, features: Option<u64>) -> Result<ImageChoice, UsageError> {
        match (&self.image, self.size) {
            (Some(name), None) => Ok(ImageChoice::Existing {
                name: name.clone(),
                allow_write: self.allow_write,
            }),
            (None, Some(size)) if size > 0 => Ok(ImageChoice::Create {
                name: cephbench::names::new_image_name(),
                size,
                keep: self.keep,
                features,
            }),
            (None, Some(_)) => Err(UsageError("--size must be larger than 0".into())),
            _ => Err(UsageError(
                "give exactly one of --image NAME or --size SIZE".into(),
            )),
        }
    }
}
