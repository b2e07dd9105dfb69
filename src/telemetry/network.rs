//! The network between the client and the OSDs: the client's own round-trip
//! time to each OSD's public address (TCP connect time to its messenger
//! port, and ICMP echo where raw sockets are permitted; sampled once a
//! second on a thread of its own, off the I/O path), the bandwidth of that
//! path (a bulk ICMP echo beside the small one: the payload's transfer
//! time is their difference), and the OSDs' heartbeat round trips as they
//! report them (`dump_osd_network`).
#![forbid(unsafe_code)]

use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::shape::ShapeError;
use super::stop::StopSignal;
use crate::result::network::{ClientRtt, HeartbeatRtt};

/// The public (client-facing) messenger address of each OSD in `osd dump`
/// output: the `v2` entry of `public_addrs`, else the `v1` one, else the
/// legacy `public_addr` string.
pub fn parse_osd_addrs(doc: &Value) -> Result<Vec<(i32, SocketAddr)>, ShapeError> {
    parse_addrs_of(doc, "public_addrs", "public_addr")
}

/// The cluster (back, OSD↔OSD) messenger address of each OSD in `osd dump`
/// output, picked as [`parse_osd_addrs`] picks the public one.
pub fn parse_osd_back_addrs(doc: &Value) -> Result<Vec<(i32, SocketAddr)>, ShapeError> {
    parse_addrs_of(doc, "cluster_addrs", "cluster_addr")
}

fn parse_addrs_of(
    doc: &Value,
    vec_key: &str,
    legacy_key: &str,
) -> Result<Vec<(i32, SocketAddr)>, ShapeError> {
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
            .get(vec_key)
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
            .get(legacy_key)
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

/// ICMP payload of the small echo, bytes.
pub const SMALL_ECHO_BYTES: usize = 8;
/// ICMP payload of the bulk echo, bytes (just under the 65,507 an IPv4
/// datagram can carry: the longer the payload, the less the estimate
/// extrapolates to a large op).
pub const BULK_ECHO_BYTES: usize = 60_000;

/// The path's bandwidth (bytes/s) from the fastest small and bulk echo
/// round trips (µs): `None` unless the bulk one is measurably slower.
pub fn echo_bandwidth(small_min_us: f64, bulk_min_us: f64) -> Option<f64> {
    let extra = 2.0 * (BULK_ECHO_BYTES - SMALL_ECHO_BYTES) as f64;
    let dt = (bulk_min_us - small_min_us) * 1e-6;
    (dt > 1e-6).then(|| extra / dt)
}

#[derive(Default, Clone, Copy)]
struct Acc {
    n: u64,
    fail: u64,
    min: f64,
    sum: f64,
    max: f64,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            min: f64::MAX,
            ..Acc::default()
        }
    }

    fn add(&mut self, sample: Option<Duration>) {
        match sample {
            Some(d) => {
                let us = d.as_secs_f64() * 1e6;
                self.n += 1;
                self.sum += us;
                self.min = self.min.min(us);
                self.max = self.max.max(us);
            }
            None => self.fail += 1,
        }
    }

    fn row(&self, osd: i32, addr: String, method: &str) -> ClientRtt {
        ClientRtt {
            osd,
            addr,
            method: method.into(),
            samples: self.n,
            failures: self.fail,
            min_us: if self.n > 0 { self.min } else { 0.0 },
            mean_us: if self.n > 0 {
                self.sum / self.n as f64
            } else {
                0.0
            },
            max_us: self.max,
            bulk_bytes: None,
            bulk_min_us: None,
            bandwidth_bytes_per_s: None,
        }
    }
}

/// ICMP echo over a raw socket (needs CAP_NET_RAW, e.g. root); `None` when
/// not permitted, and then only the TCP connect times are reported.
struct Pinger {
    sock: socket2::Socket,
    id: u16,
    seq: u16,
    /// The request being sent and the reply being read: allocated once.
    req: Vec<u8>,
    buf: Vec<u8>,
}

impl Pinger {
    fn open() -> Option<Pinger> {
        use socket2::{Domain, Protocol, Socket, Type};
        let sock = Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4)).ok()?;
        Some(Pinger {
            sock,
            id: (std::process::id() & 0xffff) as u16,
            seq: 0,
            req: Vec::with_capacity(8 + BULK_ECHO_BYTES),
            buf: vec![0; 65_536],
        })
    }

    /// One echo request with `payload` bytes to `ip` and the wait for its
    /// reply (bounded by `timeout`).
    fn ping(
        &mut self,
        ip: std::net::Ipv4Addr,
        payload: usize,
        timeout: Duration,
    ) -> Option<Duration> {
        use std::io::Read;
        self.seq = self.seq.wrapping_add(1);
        echo_request(&mut self.req, self.id, self.seq, payload);
        let to = socket2::SockAddr::from(SocketAddr::new(ip.into(), 0));
        let t = Instant::now();
        self.sock.send_to(&self.req, &to).ok()?;
        loop {
            let left = timeout.checked_sub(t.elapsed())?;
            self.sock
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .ok()?;
            let n = (&self.sock).read(&mut self.buf).ok()?;
            if is_echo_reply(&self.buf[..n], ip, self.id, self.seq) {
                return Some(t.elapsed());
            }
        }
    }
}

/// Writes into `p` an ICMP echo request (type 8) with identifier `id`,
/// sequence `seq` and `payload` bytes of payload.
pub fn echo_request(p: &mut Vec<u8>, id: u16, seq: u16, payload: usize) {
    p.clear();
    p.extend_from_slice(&[8, 0, 0, 0]);
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend(b"cephbnch".iter().cycle().take(payload));
    let c = inet_checksum(p);
    p[2..4].copy_from_slice(&c.to_be_bytes());
}

/// The Internet checksum (RFC 1071).
pub fn inet_checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether `pkt` (an IPv4 packet as a raw socket returns it) is the echo
/// reply from `from` to request (`id`, `seq`).
pub fn is_echo_reply(pkt: &[u8], from: std::net::Ipv4Addr, id: u16, seq: u16) -> bool {
    let Some(&v) = pkt.first() else {
        return false;
    };
    let ihl = usize::from(v & 0x0f) * 4;
    if v >> 4 != 4 || ihl < 20 || pkt.len() < ihl + 8 || pkt[9] != 1 {
        return false;
    }
    let src = std::net::Ipv4Addr::new(pkt[12], pkt[13], pkt[14], pkt[15]);
    let icmp = &pkt[ihl..];
    src == from && icmp[0] == 0 && icmp[4..6] == id.to_be_bytes() && icmp[6..8] == seq.to_be_bytes()
}

/// Per target: the TCP connect times and (where permitted) the small and
/// bulk ICMP echo ones.
type Rounds = (Vec<Acc>, Option<Vec<(Acc, Acc)>>);

/// A background thread that times, once per interval, a TCP connect to
/// every OSD's public address and (where raw sockets are permitted) an
/// ICMP echo (small, then bulk) to its host, until stopped; and the same
/// host's round trip to each OSD's cluster (back) address, by small ICMP
/// echo (else TCP connect), where this host reaches it.
pub struct RttProbe {
    stop: StopSignal,
    thread: Option<JoinHandle<Rounds>>,
    targets: Vec<(i32, SocketAddr)>,
    back: Vec<(i32, SocketAddr)>,
}

/// What [`RttProbe::finish`] returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RttRows {
    /// One row per OSD and method to its public address: `tcp_connect`,
    /// then `icmp_echo` where permitted.
    pub front: Vec<ClientRtt>,
    /// One row per OSD to its cluster address (`icmp_echo` where permitted,
    /// else `tcp_connect`); none for an address this host could not reach
    /// at the first try (a client that is not on the cluster network).
    pub back: Vec<ClientRtt>,
}

/// Small + bulk echo pairs sent to each target before the workload starts,
/// so the path's bandwidth is also measured while the benchmark's own
/// traffic does not queue ahead of the echoes.
const CALIBRATION_PAIRS: usize = 3;
/// The longest [`RttProbe::start`] waits for those pairs.
const CALIBRATION_WAIT: Duration = Duration::from_secs(2);

impl RttProbe {
    /// Starts probing `targets` every `interval`; each connect or echo is
    /// bounded by `timeout`. Where ICMP is permitted, first sends a few echo
    /// pairs on the idle path (waiting for them at most 2 s).
    pub fn start(
        targets: Vec<(i32, SocketAddr)>,
        back: Vec<(i32, SocketAddr)>,
        interval: Duration,
        timeout: Duration,
    ) -> RttProbe {
        let stop = StopSignal::new();
        let flag = stop.clone();
        let front = targets.len();
        let addrs: Vec<SocketAddr> = targets.iter().chain(&back).map(|t| t.1).collect();
        let (calibrated, wait) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("rtt-probe".into())
            .spawn(move || {
                let mut tcp = vec![Acc::new(); addrs.len()];
                let mut pinger = Pinger::open();
                let mut icmp = pinger
                    .as_ref()
                    .map(|_| vec![(Acc::new(), Acc::new()); addrs.len()]);
                if let (Some(p), Some(acc)) = (pinger.as_mut(), icmp.as_mut()) {
                    for _ in 0..CALIBRATION_PAIRS {
                        for (i, addr) in addrs.iter().enumerate().take(front) {
                            if let std::net::IpAddr::V4(ip) = addr.ip() {
                                acc[i].0.add(p.ping(ip, SMALL_ECHO_BYTES, timeout));
                                acc[i].1.add(p.ping(ip, BULK_ECHO_BYTES, timeout));
                            }
                        }
                    }
                }
                let _ = calibrated.send(());
                // A cluster address that does not answer its first probe is
                // not reachable from here (a client host off the cluster
                // network): it is not probed again, so it costs the public
                // probes no timeouts.
                let mut unreachable = vec![false; addrs.len()];
                while !flag.is_raised() {
                    let round = Instant::now();
                    for (i, addr) in addrs.iter().enumerate() {
                        if i >= front {
                            if unreachable[i] {
                                continue;
                            }
                            let acc = match (pinger.as_mut(), icmp.as_mut(), addr.ip()) {
                                (Some(p), Some(acc), std::net::IpAddr::V4(ip)) => {
                                    acc[i].0.add(p.ping(ip, SMALL_ECHO_BYTES, timeout));
                                    acc[i].0
                                }
                                _ => {
                                    let t = Instant::now();
                                    let s = TcpStream::connect_timeout(addr, timeout).ok();
                                    tcp[i].add(s.map(|_| t.elapsed()));
                                    tcp[i]
                                }
                            };
                            unreachable[i] = acc.n == 0;
                            continue;
                        }
                        let t = Instant::now();
                        let s = TcpStream::connect_timeout(addr, timeout).ok();
                        tcp[i].add(s.map(|_| t.elapsed()));
                        if let (Some(p), Some(acc), std::net::IpAddr::V4(ip)) =
                            (pinger.as_mut(), icmp.as_mut(), addr.ip())
                        {
                            acc[i].0.add(p.ping(ip, SMALL_ECHO_BYTES, timeout));
                            // The bandwidth is taken from the fastest (idle-path)
                            // bulk echo, which the calibration already sent: during
                            // the run a bulk echo (60 kB, fragmented both ways)
                            // only costs client and OSD CPU, unless calibration
                            // came up short.
                            if acc[i].1.n < CALIBRATION_PAIRS as u64 {
                                acc[i].1.add(p.ping(ip, BULK_ECHO_BYTES, timeout));
                            }
                        }
                    }
                    // Sleep out the interval, woken at once by a stop.
                    if flag.wait_until(round + interval) {
                        break;
                    }
                }
                (tcp, icmp)
            })
            .ok();
        if thread.is_some() {
            let _ = wait.recv_timeout(CALIBRATION_WAIT);
        }
        RttProbe {
            stop,
            thread,
            targets,
            back,
        }
    }

    /// Stops the thread and returns its rows.
    pub fn finish(mut self) -> RttRows {
        self.stop.raise();
        let (tcp, icmp) = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let front = self.targets.len();
        let back = self
            .back
            .iter()
            .enumerate()
            .filter_map(|(j, (osd, addr))| {
                let i = front + j;
                // ICMP where it ran (IPv4 with raw sockets), else the TCP
                // connects (the probe's fallback, e.g. for IPv6).
                let echo = icmp
                    .as_ref()
                    .and_then(|v| v.get(i))
                    .map(|a| a.0.row(*osd, addr.ip().to_string(), "icmp_echo"));
                let connect = tcp
                    .get(i)
                    .map(|a| a.row(*osd, addr.to_string(), "tcp_connect"));
                echo.filter(|r| r.samples > 0)
                    .or_else(|| connect.filter(|r| r.samples > 0))
            })
            .collect();
        let mut rows: Vec<ClientRtt> = self
            .targets
            .iter()
            .zip(&tcp)
            .map(|((osd, addr), a)| a.row(*osd, addr.to_string(), "tcp_connect"))
            .collect();
        if let Some(icmp) = icmp {
            rows.extend(
                self.targets
                    .iter()
                    .zip(&icmp)
                    .map(|((osd, addr), (small, bulk))| {
                        let mut row = small.row(*osd, addr.ip().to_string(), "icmp_echo");
                        if bulk.n > 0 {
                            row.bulk_bytes = Some(BULK_ECHO_BYTES as u64);
                            row.bulk_min_us = Some(bulk.min);
                            if small.n > 0 {
                                row.bandwidth_bytes_per_s = echo_bandwidth(small.min, bulk.min);
                            }
                        }
                        row
                    }),
            );
        }
        RttRows { front: rows, back }
    }
}

impl Drop for RttProbe {
    fn drop(&mut self) {
        self.stop.raise();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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
        // Back (cluster) addresses: one this host reaches, one it does not
        // (TEST-NET-1, routed nowhere here: dropped after its first probe).
        let nowhere: SocketAddr = "192.0.2.254:6800".parse().unwrap();
        // An IPv6 address (where this host has ::1): no ICMP there, its TCP
        // connects make its row.
        let v6 = std::net::TcpListener::bind("[::1]:0").ok();
        let mut back = vec![(0, good), (5, nowhere)];
        back.extend(v6.as_ref().map(|l| (6, l.local_addr().unwrap())));
        let p = RttProbe::start(
            vec![(0, good), (1, bad)],
            back,
            Duration::from_millis(50),
            Duration::from_millis(300),
        );
        std::thread::sleep(Duration::from_millis(900));
        let rows = p.finish();
        assert_eq!(
            rows.back.len(),
            1 + usize::from(v6.is_some()),
            "{:?}",
            rows.back
        );
        assert_eq!(rows.back[0].osd, 0);
        assert!(rows.back[0].samples >= 2, "{:?}", rows.back);
        if v6.is_some() {
            assert_eq!(rows.back[1].osd, 6);
            assert_eq!(rows.back[1].method, "tcp_connect", "{:?}", rows.back);
            assert!(rows.back[1].samples >= 2, "{:?}", rows.back);
        }
        let r = rows.front;
        assert!(r[0].samples >= 2, "{r:?}");
        assert_eq!(r[0].failures, 0);
        assert!(r[0].mean_us > 0.0 && r[0].mean_us < 1_000_000.0, "{r:?}");
        assert!(r[0].min_us <= r[0].mean_us && r[0].mean_us <= r[0].max_us);
        assert_eq!(r[1].samples, 0);
        assert!(r[1].failures >= 2);
        // As root (CI) the host also answers ICMP echo: one row per target.
        if Pinger::open().is_some() {
            let icmp: Vec<_> = r.iter().filter(|x| x.method == "icmp_echo").collect();
            assert_eq!(icmp.len(), 2, "{r:?}");
            assert!(
                icmp.iter().all(|x| x.samples >= 2 && x.failures == 0),
                "{r:?}"
            );
            assert_eq!(icmp[0].addr, "127.0.0.1");
            assert!(
                icmp.iter().all(
                    |x| x.bulk_bytes == Some(BULK_ECHO_BYTES as u64) && x.bulk_min_us.is_some()
                ),
                "{r:?}"
            );
        }
    }

    #[test]
    fn bandwidth_from_two_echo_minima() {
        // 2 × 59,992 bytes more in 1,199.84 µs more: 100 MB/s.
        let bw = echo_bandwidth(50.0, 50.0 + 1_199.84).unwrap();
        assert!((bw - 1e8).abs() < 1.0, "{bw}");
        assert_eq!(echo_bandwidth(50.0, 50.5), None, "within a µs: unknown");
        assert_eq!(echo_bandwidth(50.0, 40.0), None);
    }

    #[test]
    fn echo_packets() {
        let mut req = Vec::new();
        echo_request(&mut req, 0x1234, 7, BULK_ECHO_BYTES + 1);
        assert_eq!(req.len(), 8 + BULK_ECHO_BYTES + 1);
        assert_eq!(inet_checksum(&req), 0, "an odd length sums to zero too");
        echo_request(&mut req, 0x1234, 7, SMALL_ECHO_BYTES);
        assert_eq!(req.len(), 16, "the buffer is reused");
        assert_eq!(inet_checksum(&req), 0, "a valid checksum sums to zero");
        assert_eq!(&req[4..8], &[0x12, 0x34, 0, 7]);
        assert_eq!(&req[8..], b"cephbnch");
        // The reply as a raw socket returns it: a 20-byte IPv4 header first.
        let from = std::net::Ipv4Addr::new(192, 0, 2, 10);
        let mut pkt = vec![
            0x45, 0, 0, 36, 0, 0, 0, 0, 64, 1, 0, 0, 192, 0, 2, 10, 192, 0, 2, 1,
        ];
        let mut reply = req.clone();
        reply[0] = 0;
        pkt.extend_from_slice(&reply);
        assert!(is_echo_reply(&pkt, from, 0x1234, 7));
        assert!(!is_echo_reply(&pkt, from, 0x1234, 8), "another sequence");
        assert!(!is_echo_reply(
            &pkt,
            std::net::Ipv4Addr::LOCALHOST,
            0x1234,
            7
        ));
        let mut own = pkt.clone();
        own[20] = 8; // our own request, seen on loopback
        assert!(!is_echo_reply(&own, from, 0x1234, 7));
        assert!(!is_echo_reply(&pkt[..24], from, 0x1234, 7), "truncated");
        assert!(!is_echo_reply(&[], from, 0x1234, 7));
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
