//! Workloads: what ops to issue ([`OpSource`](crate::engine::OpSource)) and
//! how to issue them ([`Target`](crate::engine::Target)), for RADOS objects
//! and RBD images.
#![forbid(unsafe_code)]

pub mod rados;
pub mod rbd;
