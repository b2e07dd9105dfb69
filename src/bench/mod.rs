//! Benchmark runs: orchestration around the engine for each command
//! (metadata, images, preconditioning, cleanup) and assembly of the
//! [`crate::result::BenchResult`]. An index: `rados` and `rbd` are the
//! commands, `measure` the step they share, `error`, `pool` and `assemble`
//! what they use.
#![forbid(unsafe_code)]

mod assemble;
mod error;
mod measure;
mod pace;
mod pool;
mod rados;
mod rbd;

pub use assemble::{
    client_load, cluster_info, job_report, latency_definition, latency_kind, rate_report,
    tool_info, INTENDED_LATENCY_DEFINITION, LATENCY_DEFINITION, SLOW_OP,
};
pub use error::{access_fix, diagnose, no_access, BenchError};
pub use measure::{sampled, Outcome};
pub use pool::{
    cache_fit_warning, check_rbd_pools, create_pool, pool_settings, remove_created_pool, PoolSpec,
};
pub use rados::{
    cephbench_objects_elsewhere, cleanup, cleanup_all_namespaces, cleanup_hint, read_meta,
    remove_objects, remove_run, run_rados, write_meta, CleanupReport, RadosConfig,
};
pub use rbd::{prepare_image, rbd_cache_overrides, run_rbd, ImageChoice, RbdConfig};
