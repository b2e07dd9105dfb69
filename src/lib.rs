//! cephbench: a Ceph-native storage benchmark.
//!
//! The crate is split the way hyperfine and oha are: [`ceph`] is the safe
//! wrapper over the C libraries (the only `unsafe` code), [`engine`] drives
//! the workloads and produces [`result`]s, [`report`] renders them, and the
//! binary (`main.rs`) only turns arguments into a validated config.
#![warn(missing_docs)]
// Short functions: the limit is clippy.toml's (tests are exempt where they say so).
#![warn(clippy::too_many_lines)]
// `unsafe` lives in `ceph` alone (and the bindgen crate `ceph-sys`); every
// other module also says `#![forbid(unsafe_code)]` itself.
#![deny(unsafe_code)]

pub mod bench;
pub mod canary;
#[allow(unsafe_code)]
pub mod ceph;
pub mod compare;
pub mod device;
pub mod diagnose;
pub mod disrupt;
pub mod engine;
pub mod explain;
pub mod fio;
pub mod group;
pub mod input;
pub mod names;
pub mod objects;
pub mod osdbench;
pub mod placement;
pub mod plan;
pub mod progress;
pub mod report;
pub mod result;
pub mod secrets;
pub mod stats;
pub mod steady;
pub mod suite;
pub mod sweep;
pub mod telemetry;
pub mod undo;
pub mod units;
pub mod workload;
