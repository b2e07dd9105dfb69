//! What a job may ask for, in one place however the job is given: command-line
//! flags (the binary's `cli/`), a suite file ([`crate::suite::file`]) or a
//! sweep. The limits are named once here; each rule is a function over plain
//! values that returns the message naming the fix, spelled the way the user
//! gave the option (`--iodepth` on the command line, `iodepth` in a file). The
//! caller adds where the value came from (a file position).
#![forbid(unsafe_code)]

use std::time::Duration;

use crate::workload::rbd::RbdMode;

/// Largest op (block) size: 1 GiB.
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;
/// Most ops in flight in one job (`--iodepth`, `--concurrent-ios`, a sweep's
/// queue depths).
pub const MAX_IN_FLIGHT: u64 = 65536;
/// Most parallel rbd jobs of one run (`--numjobs`).
pub const MAX_NUMJOBS: u64 = 1024;
/// Most placement groups of a pool cephbench creates (`--pg-num`).
pub const MAX_PG_NUM: u64 = 65536;
/// Most copies of a pool cephbench creates (`--pool-size`).
pub const MAX_POOL_SIZE: u64 = 10;
/// Most runs of one suite job (`--runs`, `runs`).
pub const MAX_RUNS: u64 = 1000;
/// Most clients of a group run (`--clients`).
pub const MAX_CLIENTS: u64 = 1000;
/// Images cephbench creates larger than this must not be more than
/// [`MAX_IMAGE_OVER_AREA`] times their test area (see [`image_size`]).
pub const LARGE_IMAGE: u64 = 16 << 40;
/// How many times its test area a large image may be.
pub const MAX_IMAGE_OVER_AREA: u64 = 1024;

/// Checks the size of an image cephbench is to create against the test area
/// the job touches: librbd removes an image by walking every object it
/// could hold, whatever was written (with the object map too: ~2 s per
/// 10 TiB on a test host, 13 min for 900 TiB), so a huge image around a
/// small test area makes the cleanup, not the run, take the time. Larger
/// than [`LARGE_IMAGE`] it may be at most [`MAX_IMAGE_OVER_AREA`] times
/// the test area.
pub fn image_size(
    src: Source,
    size_key: &str,
    area_key: &str,
    size: u64,
    area: u64,
) -> Result<(), String> {
    use crate::units::fmt_bytes;
    if size > LARGE_IMAGE && size / MAX_IMAGE_OVER_AREA > area {
        let most = LARGE_IMAGE.max(area.saturating_mul(MAX_IMAGE_OVER_AREA));
        return Err(format!(
            "{} {} is out of proportion to the {} {}: librbd removes an image by walking every \
             object it could hold (minutes for hundreds of TiB), so cephbench creates one at most \
             {} (or {MAX_IMAGE_OVER_AREA}x the test area); use a smaller {}, a larger {}, or an image of \
             your own (--image)",
            src.name(size_key),
            fmt_bytes(size),
            src.name(area_key),
            fmt_bytes(area),
            fmt_bytes(most),
            src.name(size_key),
            src.name(area_key),
        ));
    }
    Ok(())
}

/// The queue depth of an rbd job that does not name one (fio's rbd examples);
/// a job that flushes every N writes runs at 1.
pub const fn default_iodepth(fsync_every: bool) -> u64 {
    if fsync_every {
        1
    } else {
        32
    }
}

/// Where a job's options were given, which decides how they are spelled in
/// a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Command-line flags: `--iodepth`.
    Flags,
    /// A suite file's keys: `iodepth`.
    File,
}

impl Source {
    /// The option `key` (its long flag without dashes) as spelled here.
    pub fn name(self, key: &str) -> String {
        match self {
            Source::Flags => format!("--{key}"),
            Source::File => key.to_string(),
        }
    }
}

/// Checks `value` lies in `min..=max` (a file may hold a negative number).
pub fn in_range(
    src: Source,
    key: &str,
    value: impl Into<i128>,
    min: u64,
    max: u64,
) -> Result<u64, String> {
    let value = value.into();
    match u64::try_from(value) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => {
            let given = match src {
                Source::Flags => format!("--{key} {value}"),
                Source::File => format!("{key} = {value}"),
            };
            Err(format!("{given} is out of range; use {min} to {max}"))
        }
    }
}

/// Checks an op size given as `key`: at least one byte, at most
/// [`MAX_BLOCK_SIZE`].
pub fn block_size(src: Source, key: &str, bs: u64) -> Result<u64, String> {
    if bs == 0 {
        return Err(format!(
            "{} must be at least 1 byte (e.g. 4K)",
            src.name(key)
        ));
    }
    if bs > MAX_BLOCK_SIZE {
        return Err(format!(
            "{} larger than 1 GiB is not supported",
            src.name(key)
        ));
    }
    Ok(bs)
}

/// The shortest timeline interval: shorter ones hold too few ops for a p99
/// and make the sampler's work per second grow.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// The longest timeline interval.
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);

/// Checks a timeline interval (`--interval`) lies in
/// [`MIN_INTERVAL`]..=[`MAX_INTERVAL`].
pub fn interval(src: Source, key: &str, d: Duration) -> Result<Duration, String> {
    if (MIN_INTERVAL..=MAX_INTERVAL).contains(&d) {
        return Ok(d);
    }
    Err(format!(
        "{} must be from 100ms to 1h (e.g. 1s)",
        src.name(key)
    ))
}

/// The rules of `--steady`: a criterion that parses, a window of at least
/// two `interval`s, a longest run (`--steady-max`, which takes `-d`'s place)
/// at least the window. `None` without `--steady` (then `--steady-window`
/// and `--steady-max` must not be given either).
pub fn steady(
    criterion: Option<&str>,
    window: Option<Duration>,
    max: Option<Duration>,
    interval: Duration,
    duration_given: bool,
) -> Result<Option<crate::steady::SteadyConfig>, String> {
    let Some(c) = criterion else {
        if window.is_some() || max.is_some() {
            return Err(
                "--steady-window and --steady-max need --steady (e.g. --steady iops:2%)".into(),
            );
        }
        return Ok(None);
    };
    c.parse::<crate::steady::Criterion>()
        .map_err(|e| e.to_string())?;
    if duration_given {
        return Err("--steady runs until steady or --steady-max; drop -d/--duration".into());
    }
    let window = window.unwrap_or(crate::steady::DEFAULT_WINDOW);
    let max = max.unwrap_or(crate::steady::DEFAULT_MAX);
    if window < interval * 2 {
        return Err(
            "--steady-window must hold at least two intervals (e.g. --steady-window 30s)".into(),
        );
    }
    if max < window {
        return Err("--steady-max must be at least --steady-window".into());
    }
    Ok(Some(crate::steady::SteadyConfig {
        criterion: c.to_string(),
        window,
        max,
    }))
}

/// The rules between an rbd job's options: a job that flushes every N
/// writes (N ≥ 1) runs one op at a time and must write.
pub fn rbd_flushes(
    src: Source,
    rw: RbdMode,
    rwmix_read: u8,
    iodepth: u64,
    fsync_every: Option<u64>,
) -> Result<(), String> {
    let Some(n) = fsync_every else {
        return Ok(());
    };
    let (fsync, depth) = (src.name("fsync-every"), src.name("iodepth"));
    if n == 0 {
        return Err(format!("{fsync} must be at least 1"));
    }
    if iodepth != 1 {
        return Err(format!(
            "{fsync} runs at iodepth 1; drop {depth} or set it to 1"
        ));
    }
    if !rw.writes(rwmix_read) {
        return Err(format!(
            "{fsync} needs a workload that writes, not {} {}",
            src.name("rw"),
            rw.as_str()
        ));
    }
    Ok(())
}

/// The rules of a RADOS job, over its config: what an agent checks of a job
/// a controller sent before it runs it (the controller's own flags were
/// checked the same way).
pub fn rados_job(c: &crate::bench::RadosConfig) -> Result<(), String> {
    let src = Source::Flags;
    block_size(src, "block-size", c.block_size)?;
    if c.object_size % c.block_size != 0 {
        return Err("--object-size is not a multiple of --block-size".into());
    }
    in_range(
        src,
        "concurrent-ios",
        c.concurrency as u64,
        1,
        MAX_IN_FLIGHT,
    )?;
    crate::names::validate_namespace(&c.namespace)
}

/// Checks `--data-pool` (`data_pool` in a suite file) given for `pool`'s
/// images: a name, and not `pool` itself.
pub fn data_pool(src: Source, pool: &str, data_pool: &str) -> Result<(), String> {
    let key = src.name("data-pool");
    if data_pool.is_empty() {
        return Err(format!("{key} needs a pool name"));
    }
    if data_pool == pool {
        return Err(format!(
            "{key} {data_pool} is the image's own pool (-p): drop {key}, or name another pool \
             for the data"
        ));
    }
    Ok(())
}

/// The data pool of each of `pools`, from `--data-pool` (`one`, with a
/// single pool) or `--data-pools` (`paired`, one per pool in order; `-` or
/// empty for none). Refuses a count that does not match and two entries
/// whose data would land in the same pool: each side of a comparison
/// writes to its own pool.
pub fn data_pools(
    pools: &[String],
    one: Option<&str>,
    paired: Option<&[String]>,
) -> Result<Vec<Option<String>>, String> {
    let list = match (one, paired) {
        (Some(_), Some(_)) => {
            return Err(
                "give --data-pool (with -p) or --data-pools (with --pools), not both".into(),
            )
        }
        (Some(d), None) if pools.len() > 1 => {
            return Err(format!(
                "--data-pool {d} goes with one -p POOL; with --pools give --data-pools, one per \
                 pool in order and - for none (e.g. --pools {} --data-pools -,{d})",
                pools.join(",")
            ))
        }
        (Some(d), None) => vec![Some(d.to_string())],
        (None, Some(ds)) if pools.len() < 2 => {
            return Err(format!(
                "--data-pools goes with --pools A,B; with -p POOL give --data-pool {}",
                ds.first().map_or("POOL", |d| d.as_str())
            ))
        }
        (None, Some(ds)) if ds.len() != pools.len() => {
            return Err(format!(
                "--data-pools has {} entries for the {} pools of --pools {}: give one per pool, \
                 - for none",
                ds.len(),
                pools.len(),
                pools.join(",")
            ))
        }
        (None, Some(ds)) => ds
            .iter()
            .map(|d| (!d.is_empty() && d != "-").then(|| d.clone()))
            .collect(),
        (None, None) => vec![None; pools.len()],
    };
    let mut seen: Vec<&str> = Vec::new();
    for (p, d) in pools.iter().zip(&list) {
        if let Some(d) = d {
            data_pool(Source::Flags, p, d)?;
        }
        let target = d.as_deref().unwrap_or(p);
        if seen.contains(&target) {
            return Err(format!(
                "two entries of --pools/--data-pools put their data in pool '{target}'; each \
                 side must write to its own pool"
            ));
        }
        seen.push(target);
    }
    Ok(list)
}

/// The rules of an RBD job, over its config (see [`rados_job`]).
pub fn rbd_job(c: &crate::bench::RbdConfig) -> Result<(), String> {
    let src = Source::Flags;
    block_size(src, "bs", c.bs)?;
    in_range(src, "iodepth", c.iodepth as u64, 1, MAX_IN_FLIGHT)?;
    in_range(src, "numjobs", c.numjobs as u64, 1, MAX_NUMJOBS)?;
    in_range(src, "rwmix-read", c.rwmix_read, 0, 100)?;
    rbd_flushes(src, c.mode, c.rwmix_read, c.iodepth as u64, c.fsync_every)?;
    match &c.data_pool {
        Some(d) => data_pool(src, &c.pool, d),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_pools_pair_with_the_pools() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            data_pools(&v(&["rep3", "rbd"]), None, Some(&v(&["-", "ec21"]))),
            Ok(vec![None, Some("ec21".into())])
        );
        assert_eq!(
            data_pools(&v(&["rep3", "rbd"]), None, Some(&v(&["", "ec21"]))),
            Ok(vec![None, Some("ec21".into())])
        );
        assert_eq!(
            data_pools(&v(&["rbd"]), Some("ec21"), None),
            Ok(vec![Some("ec21".into())])
        );
        assert_eq!(
            data_pools(&v(&["a", "b"]), None, None),
            Ok(vec![None, None])
        );
        let e = data_pools(&v(&["a", "b"]), Some("ec"), None).unwrap_err();
        assert!(e.contains("--data-pools -,ec"), "{e}");
        let e = data_pools(&v(&["a", "b"]), None, Some(&v(&["ec"]))).unwrap_err();
        assert!(e.contains("1 entries for the 2 pools"), "{e}");
        let e = data_pools(&v(&["a"]), None, Some(&v(&["ec"]))).unwrap_err();
        assert!(e.contains("--data-pool ec"), "{e}");
        let e = data_pools(&v(&["a", "b"]), None, Some(&v(&["-", "a"]))).unwrap_err();
        assert!(e.contains("pool 'a'"), "{e}");
        let e = data_pools(&v(&["rbd"]), Some("rbd"), None).unwrap_err();
        assert!(e.contains("the image's own pool"), "{e}");
        assert!(data_pools(&v(&["a"]), Some("x"), Some(&v(&["x"]))).is_err());
    }

    #[test]
    fn messages_spell_the_option_as_given() {
        assert_eq!(
            in_range(Source::Flags, "iodepth", 0u64, 1, MAX_IN_FLIGHT).unwrap_err(),
            "--iodepth 0 is out of range; use 1 to 65536"
        );
        assert_eq!(
            in_range(Source::File, "iodepth", 70000u64, 1, MAX_IN_FLIGHT).unwrap_err(),
            "iodepth = 70000 is out of range; use 1 to 65536"
        );
        assert_eq!(
            in_range(Source::File, "runs", -1i64, 1, MAX_RUNS).unwrap_err(),
            "runs = -1 is out of range; use 1 to 1000"
        );
        assert_eq!(
            in_range(Source::File, "numjobs", 1024u64, 1, MAX_NUMJOBS),
            Ok(1024)
        );
        assert!(block_size(Source::Flags, "bs", 0)
            .unwrap_err()
            .starts_with("--bs must be at least 1 byte"));
        assert_eq!(block_size(Source::File, "bs", MAX_BLOCK_SIZE), Ok(1 << 30));
        assert!(block_size(Source::File, "block-size", MAX_BLOCK_SIZE + 1)
            .unwrap_err()
            .starts_with("block-size larger than 1 GiB"));
    }

    #[test]
    fn a_flushing_job_writes_one_op_at_a_time() {
        let f = |rw, depth, n| rbd_flushes(Source::Flags, rw, 50, depth, n);
        assert_eq!(f(RbdMode::Randread, 32, None), Ok(()));
        assert_eq!(f(RbdMode::Randwrite, 1, Some(1)), Ok(()));
        assert_eq!(f(RbdMode::Randrw, 1, Some(4)), Ok(()));
        assert_eq!(
            f(RbdMode::Randwrite, 1, Some(0)).unwrap_err(),
            "--fsync-every must be at least 1"
        );
        assert_eq!(
            f(RbdMode::Randwrite, 4, Some(1)).unwrap_err(),
            "--fsync-every runs at iodepth 1; drop --iodepth or set it to 1"
        );
        assert_eq!(
            rbd_flushes(Source::File, RbdMode::Read, 50, 1, Some(1)).unwrap_err(),
            "fsync-every needs a workload that writes, not rw read"
        );
        assert_eq!(default_iodepth(true), 1);
        assert_eq!(default_iodepth(false), 32);
    }
}
