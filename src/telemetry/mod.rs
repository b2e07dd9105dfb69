//! Telemetry: what cephbench reads from the cluster off the I/O path,
//! before, during and after a job, over its second connection
//! ([`crate::ceph::Rados::telemetry`], the `--telemetry-id` identity):
//!
//! * [`cluster`]: the mon, mgr and OSD commands (placement, OSD states and
//!   devices, perf counters, heartbeats, slowest ops, pool settings);
//! * [`parse`]: Ceph's JSON answers parsed; [`shape`]: [`ShapeError`], the
//!   error of every parser here;
//! * [`counters`], [`network`], [`historic`], [`osdmem`], [`osdcpu`]: each kind of
//!   reading with its parser and arithmetic (counter deltas, the client's
//!   RTT probe, the slowest ops joined to the client's, the OSDs' RAM and CPU);
//! * [`sampler`]: the pollers that run beside a job (placement watcher,
//!   counter sampler);
//! * [`quiet`]: was the cluster quiet (health, PGs, scrubs, recovery, the
//!   osdmap) before, during and after a job;
//! * [`probes`]: [`Probes`], what all of them saw around one job;
//! * `stop`: the pollers' stop signal (they sleep until their turn or it).
#![forbid(unsafe_code)]

pub mod cluster;
pub mod counters;
pub mod historic;
pub mod network;
pub mod ophistory;
pub mod osdcpu;
pub mod osdmem;
pub mod parse;
pub mod probes;
pub mod quiet;
pub mod sampler;
pub mod settings;
pub mod shape;
mod stop;

pub use cluster::ProbeError;
pub use probes::Probes;
pub use sampler::{
    default_counter_interval, CounterSampler, PlacementWatcher, DEFAULT_COUNTER_INTERVAL,
};
pub use shape::ShapeError;
