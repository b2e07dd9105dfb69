//! The network figures the result keeps: the client's round trips to each
//! OSD and the OSDs' heartbeat round trips (`telemetry::network` measures and
//! parses them).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// The client's round trips to one OSD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRtt {
    /// The OSD id.
    pub osd: i32,
    /// The address probed (its public messenger address).
    pub addr: String,
    /// How: `tcp_connect` (SYN → SYN/ACK, measured by `connect()`) or
    /// `icmp_echo` (echo request → reply over a raw socket).
    pub method: String,
    /// Successful samples.
    pub samples: u64,
    /// Connects that failed or timed out.
    pub failures: u64,
    /// Fastest, µs.
    pub min_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Slowest, µs.
    pub max_us: f64,
    /// `icmp_echo` rows: the payload of the bulk echo sent beside each small
    /// one (bytes, each way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_bytes: Option<u64>,
    /// The fastest bulk echo, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_min_us: Option<f64>,
    /// The path's bandwidth, bytes/s: both directions carry the bulk echo's
    /// extra payload, so `2 × (bulk − small payload) / (bulk_min − min)`.
    /// The fastest of each is taken, so the figure is the idle path's, not
    /// one slowed by the benchmark's own traffic. Absent when the two
    /// minima are too close to tell apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// One OSD-to-OSD heartbeat round trip, as the sending OSD reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatRtt {
    /// Reporting OSD.
    pub from: i32,
    /// Peer OSD.
    pub to: i32,
    /// `front` (public network) or `back` (cluster network).
    pub interface: String,
    /// Mean over the last minute, ms.
    pub avg_1min_ms: f64,
    /// The last sample, ms.
    pub last_ms: Option<f64>,
}
