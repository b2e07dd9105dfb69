//! The tests against a real Ceph cluster, in one binary: linked once instead of
//! once per topic. A module per topic (each was a test binary of its own), so a
//! test's name is `MODULE::name` and a topic runs alone with a filter:
//! `cargo test --test cluster -- --include-ignored rados_cluster::`.
//!
//! They are #[ignore]d (plain `cargo test` needs no cluster and lists them as
//! ignored); tests/run.sh runs them with --include-ignored against the cluster
//! it starts (CEPHBENCH_TEST_CONF). Every cluster test takes its turn
//! (`common::serial`), the rigs' tests too, as when cargo ran the topics'
//! binaries one after another: none shares the cluster or the machine's cores
//! with another cluster test.

#[path = "../common/mod.rs"]
mod common;

mod ceph_layer;
mod device_cluster;
mod explain_cluster;
mod faults;
mod multi_cluster;
mod netdelay_cluster;
mod quiet_cluster;
mod rados_cluster;
mod rate_cluster;
mod rbd_cluster;
mod security_cluster;
mod suite_cluster;
mod sweep_cluster;
mod watch_cluster;
