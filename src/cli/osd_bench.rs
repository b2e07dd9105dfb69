//! `cephbench osd-bench`.

use clap::Args;

use cephbench::units::parse_size;

use super::UsageError;

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
