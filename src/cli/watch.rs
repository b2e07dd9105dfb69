//! `cephbench watch`.

use std::net::SocketAddr;

use clap::Args;

use super::UsageError;

/// `cephbench watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The pools to watch, comma-separated (each gets its own objects).
    #[arg(short = 'p', long = "pool", value_delimiter = ',', required = true)]
    pub pools: Vec<String>,
    /// Ops per second on each pool: a write and a read of it back in turn (at most 1000;
    /// `0.5`, `4`, `1k`).
    #[arg(long, default_value = "4", value_parser = super::rate_arg)]
    pub rate: f64,
    /// Objects per pool, overwritten in place (the pool's space never grows).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub objects: u32,
    /// Bytes per object and op (4K, 64K...; at most 4M).
    #[arg(short = 'b', long = "block-size", default_value = "4K", value_parser = super::size)]
    pub block_size: u64,
    /// Where `/metrics` is served (Prometheus' text format).
    #[arg(long, default_value = "127.0.0.1:9478", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// RADOS namespace of the objects.
    #[arg(short = 'N', long, default_value = "", value_name = "NS")]
    pub namespace: String,
    /// How often each pool's line is logged (ops, p50, p99, failures) and the pools' placement
    /// read (the `osd` label and `cephbench_watch_up`).
    #[arg(long, default_value = "10s", value_parser = super::dur, value_name = "DURATION")]
    pub log_interval: std::time::Duration,
    /// Leave the objects in place on exit (a restarted watch reuses them; `cephbench cleanup`
    /// removes them).
    #[arg(long)]
    pub keep_objects: bool,
}

impl WatchArgs {
    /// The validated canary.
    pub fn config(&self) -> Result<cephbench::canary::WatchConfig, UsageError> {
        if self.log_interval < std::time::Duration::from_secs(1) {
            return Err(UsageError(
                "--log-interval below 1s: give 1s or more (default 10s)".into(),
            ));
        }
        if self.rate > 1000.0 {
            return Err(UsageError(format!(
                "--rate {}: give ops per second above 0 and at most 1000 (a canary, not a load)",
                self.rate
            )));
        }
        if self.block_size == 0 || self.block_size > 4 << 20 {
            return Err(UsageError(format!(
                "--block-size {}: give 1 B to 4M",
                self.block_size
            )));
        }
        if self.listen.port() == 9283 {
            return Err(UsageError(
                "--listen port 9283 is the mgr's prometheus module's: pick another (default 9478)"
                    .into(),
            ));
        }
        let mut pools = self.pools.clone();
        if pools.iter().any(String::is_empty) {
            return Err(UsageError("-p needs pool names: -p rbd,fast".into()));
        }
        pools.sort();
        pools.dedup();
        if !self.namespace.is_empty() {
            cephbench::names::validate_namespace(&self.namespace).map_err(UsageError)?;
        }
        Ok(cephbench::canary::WatchConfig {
            pools,
            rate: self.rate,
            objects: self.objects,
            block_size: self.block_size as usize,
            interval: self.log_interval,
            listen: self.listen,
            namespace: self.namespace.clone(),
            keep_objects: self.keep_objects,
            reconnect: None,
        })
    }
}
