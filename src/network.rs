//! The network between the client and the OSDs: the client's own round-trip
//! time to each OSD's public address (TCP connect time to its messenger
//! port, sampled once a second on a thread of its own, off the I/O path),
//! and the OSDs' heartbeat round trips as they report them
//! (`dump_osd_network`).
#![forbid(unsafe_code)]

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::placement::ShapeError;

/// The public (client-facing) messenger address of each OSD in `osd dump`
/// output: the `v2` entry of `public_addrs`, else the `v1` one, else the
/// legacy `public_addr` string.
pub fn parse_osd_addrs(doc: &Value) -> Result<Vec<(i32, SocketAddr)>, ShapeError> {
    let osds = doc
        .get("osds")
        .and_then(Value::as_array)
        .ok_or_else(|| ShapeError {
            what: "osd dump",
            why: "no osds array".into(),
        })?;
    let mut out = Vec::new();
    for o in osds {
        let Some(id) = o.get("osd").and_then(Value::as_i64) else {
            continue;
        };
        let vec = o
            .get("public_addrs")
            .and_then(|a| a.get("addrvec"))
            .and_then(Value::as_array);
        let pick = |t: &str| {
            vec.and_then(|v| {
                v.iter()
                    .find(|a| a.get("type").and_then(Value::as_str) == Some(t))
                    .and_then(|a| a.get("addr").and_then(Value::as_str))
            })
        };
        let legacy = o
            .get("public_addr")
            .and_then(Value::as_str)
            .map(|s| s.split('/').next().unwrap_or(s));
        let addr = pick("v2").or_else(|| pick("v1")).or(legacy);
        if let Some(a) = addr.and_then(|a| a.parse::<SocketAddr>().ok()) {
            if a.port() != 0 && i32::try_from(id).is_ok() {
                out.push((id as i32, a));
            }
        }
    }
    Ok(out)
}

/// The client's round trips to one OSD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRtt {
    /// The OSD id.
    pub osd: i32,
    /// The address probed (its public messenger address).
    pub addr: String,
    /// How: `tcp_connect` (SYN → SYN/ACK, measured by `connect()`).
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
}

#[derive(Default, Clone, Copy)]
struct Acc {
    n: u64,
    fail: u64,
    min: f64,
    sum: f64,
    max: f64,
}

/// A background thread that times a TCP connect to every OSD once per
/// interval until stopped.
pub struct RttProbe {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Acc>>>,
    targets: Vec<(i32, SocketAddr)>,
}

impl RttProbe {
    /// Starts probing `targets` every `interval`; each connect is bounded by `timeout`.
    pub fn start(
        targets: Vec<(i32, SocketAddr)>,
        interval: Duration,
        timeout: Duration,
    ) -> RttProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let addrs: Vec<SocketAddr> = targets.iter().map(|t| t.1).collect();
        let thread = std::thread::Builder::new()
            .name("rtt-probe".into())
            .spawn(move || {
                let mut acc = vec![
                    Acc {
                        min: f64::MAX,
                        ..Acc::default()
                    };
                    addrs.len()
                ];
                while !flag.load(Ordering::Relaxed) {
                    let round = Instant::now();
                    for (a, addr) in acc.iter_mut().zip(&addrs) {
                        let t = Instant::now();
                        match TcpStream::connect_timeout(addr, timeout) {
                            Ok(s) => {
                                let us = t.elapsed().as_secs_f64() * 1e6;
                                drop(s);
                                a.n += 1;
                                a.sum += us;
                                a.min = a.min.min(us);
                                a.max = a.max.max(us);
                            }
                            Err(_) => a.fail += 1,
                        }
                    }
                    // Sleep out the interval in short steps so stop is prompt.
                    while round.elapsed() < interval && !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                acc
            })
            .ok();
        RttProbe {
            stop,
            thread,
            targets,
        }
    }

    /// Stops the thread and returns one row per OSD.
    pub fn finish(mut self) -> Vec<ClientRtt> {
        self.stop.store(true, Ordering::Relaxed);
        let acc = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        self.targets
            .iter()
            .zip(acc)
            .map(|((osd, addr), a)| ClientRtt {
                osd: *osd,
                addr: addr.to_string(),
                method: "tcp_connect".into(),
                samples: a.n,
                failures: a.fail,
                min_us: if a.n > 0 { a.min } else { 0.0 },
                mean_us: if a.n > 0 { a.sum / a.n as f64 } else { 0.0 },
                max_us: a.max,
            })
            .collect()
    }
}

impl Drop for RttProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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

/// Parses `dump_osd_network` output (`{"threshold": .., "entries": [...]}`).
/// Heartbeat RTTs include both OSDs' userspace, so they exceed the wire RTT.
pub fn parse_osd_network(doc: &Value) -> Result<Vec<HeartbeatRtt>, ShapeError> {
    let entries = doc
        .get("entries")
        .or_else(|| doc.get("network_ping_times"))
        .and_then(Value::as_array)
        .ok_or_else(|| ShapeError {
            what: "dump_osd_network",
            why: "no entries array".into(),
        })?;
    Ok(entries
        .iter()
        .filter_map(|e| {
            Some(HeartbeatRtt {
                from: i32::try_from(e.get("from osd")?.as_i64()?).ok()?,
                to: i32::try_from(e.get("to osd")?.as_i64()?).ok()?,
                interface: e.get("interface")?.as_str()?.to_string(),
                avg_1min_ms: e.get("average")?.get("1min")?.as_f64()?,
                last_ms: e.get("last").and_then(Value::as_f64),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn picks_v2_then_v1_then_legacy() {
        let d = json!({"osds": [
            {"osd": 0, "public_addrs": {"addrvec": [
                {"type": "v2", "addr": "127.0.0.20:6802", "nonce": 1},
                {"type": "v1", "addr": "127.0.0.20:6803", "nonce": 1}]}},
            {"osd": 1, "public_addrs": {"addrvec": [{"type": "v1", "addr": "127.0.0.21:6801", "nonce": 1}]}},
            {"osd": 2, "public_addr": "127.0.0.22:6800/123"},
            {"osd": 3, "public_addr": "-"},
            {"osd": 4, "public_addrs": {"addrvec": [{"type": "v2", "addr": "0.0.0.0:0"}]}}
        ]});
        let a = parse_osd_addrs(&d).unwrap();
        let got: Vec<(i32, String)> = a.iter().map(|(o, s)| (*o, s.to_string())).collect();
        assert_eq!(
            got,
            vec![
                (0, "127.0.0.20:6802".into()),
                (1, "127.0.0.21:6801".into()),
                (2, "127.0.0.22:6800".into())
            ]
        );
        assert!(parse_osd_addrs(&json!({})).is_err());
    }

    #[test]
    fn probe_times_a_local_listener_and_counts_failures() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let good = listener.local_addr().unwrap();
        // A port nothing listens on: refused at once.
        let bad = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let p = RttProbe::start(
            vec![(0, good), (1, bad)],
            Duration::from_millis(50),
            Duration::from_secs(1),
        );
        std::thread::sleep(Duration::from_millis(600));
        let r = p.finish();
        assert!(r[0].samples >= 2, "{r:?}");
        assert_eq!(r[0].failures, 0);
        assert!(r[0].mean_us > 0.0 && r[0].mean_us < 1_000_000.0, "{r:?}");
        assert!(r[0].min_us <= r[0].mean_us && r[0].mean_us <= r[0].max_us);
        assert_eq!(r[1].samples, 0);
        assert!(r[1].failures >= 2);
    }

    #[test]
    fn heartbeat_entries() {
        let d = json!({"threshold": 0, "entries": [
            {"last update": "x", "stale": false, "from osd": 0, "to osd": 1, "interface": "back",
             "average": {"1min": 0.412, "5min": 0.4, "15min": 0.4}, "min": {}, "max": {}, "last": 0.39},
            {"from osd": 0, "to osd": 1, "interface": "front", "average": {"1min": "bad"}}
        ]});
        let h = parse_osd_network(&d).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(
            (h[0].from, h[0].to, h[0].interface.as_str()),
            (0, 1, "back")
        );
        assert_eq!(h[0].last_ms, Some(0.39));
        assert!(parse_osd_network(&json!({"x": []})).is_err());
    }
}
