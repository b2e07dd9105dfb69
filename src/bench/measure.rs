//! The measure step of a run: the job driven with its per-second sampler,
//! and the finished run it hands back.
#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::error::BenchError;
use crate::progress::{Counters, Sample, Sampler};
use crate::result::BenchResult;

/// A finished run: the result document and whether it should fail the command.
#[derive(Debug)]
pub struct Outcome {
    /// The result.
    pub result: BenchResult,
    /// The first op error, explained (the run is then reported and fails).
    pub error: Option<BenchError>,
    /// Objects removed afterwards.
    pub cleaned: Option<u64>,
    /// When the run could not remove what it created: the command that does.
    pub leftovers: Option<String>,
    /// When the measured ops started, on this host's clock (rados runs).
    pub measured_start: Option<SystemTime>,
}

/// Drives `job` while sampling `counters` once a second (the timeline, and
/// the live line on stderr when `live`).
pub async fn sampled<F: Future>(
    job: F,
    counters: Vec<Arc<Counters>>,
    ramp: Duration,
    live: bool,
) -> (F::Output, Vec<Sample>) {
    let start = Instant::now();
    let mut sampler = Sampler::new(counters, start, ramp, live);
    tokio::pin!(job);
    let mut tick = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let out = loop {
        tokio::select! {
            out = &mut job => break out,
            _ = tick.tick() => sampler.tick(),
        }
    };
    sampler.tick();
    (out, sampler.into_samples())
}
