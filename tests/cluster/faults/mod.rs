//! Faults against the real cluster, one file a topic: a pool filling up, the
//! cluster losing a part mid-run, an OSD taken out and put back in
//! (`--disrupt`), interrupts at every phase, and data
//! cephbench does not own. Each test makes and removes its own pools; the
//! tests take turns (`common::serial`).

mod cluster_loss;
mod disrupt;
mod interrupts;
mod ownership;
mod pool_full;
pub(crate) mod support;
