//! The binary's commands, one function each: validate the arguments, connect
//! (only commands that need the cluster), run, print the report, and turn the
//! outcome into an exit code. `main.rs` only picks the function.

pub mod bench;
pub mod cluster;
pub mod connect;
pub mod diagnose;
pub mod exit;
pub mod offline;
pub mod signals;
pub mod suite;
pub mod watch;
