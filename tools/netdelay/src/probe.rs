//! Measuring tools for the rig, run inside the namespaces (`ip netns exec NS
//! cephbench-netdelay ...`): a TCP+UDP echo server, a TCP round-trip timer, and a UDP burst
//! that checks the order frames arrive in.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Echoes TCP streams (one thread per connection) and UDP datagrams on `listen` until killed.
pub fn echo(listen: SocketAddr) -> Result<()> {
    let tcp = TcpListener::bind(listen).with_context(|| format!("bind tcp {listen}"))?;
    let udp = UdpSocket::bind(listen).with_context(|| format!("bind udp {listen}"))?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok((n, from)) = udp.recv_from(&mut buf) {
            let _ = udp.send_to(&buf[..n], from);
        }
    });
    println!("ready");
    std::io::stdout().flush()?;
    for s in tcp.incoming() {
        let mut s = s?;
        let _ = s.set_nodelay(true);
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 || s.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
    }
    Ok(())
}

/// Round-trip times of `count` 64-byte TCP ping-pongs (after 10 unmeasured ones), µs:
/// `min median mean`.
pub fn rtt(to: SocketAddr, count: usize) -> Result<(f64, f64, f64)> {
    let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(5))
        .with_context(|| format!("connect {to}"))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let msg = [7u8; 64];
    let mut back = [0u8; 64];
    let mut us = Vec::with_capacity(count);
    for i in 0..count + 10 {
        let t = Instant::now();
        s.write_all(&msg)?;
        s.read_exact(&mut back)?;
        if i >= 10 {
            us.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    if us.is_empty() {
        bail!("--count must be at least 1");
    }
    us.sort_by(f64::total_cmp);
    let mean = us.iter().sum::<f64>() / us.len() as f64;
    Ok((us[0], us[us.len() / 2], mean))
}

/// What a burst saw.
pub struct Burst {
    /// Datagrams sent.
    pub sent: usize,
    /// Echoes received.
    pub received: usize,
    /// Echoes that arrived after one with a higher sequence number.
    pub out_of_order: usize,
}

/// Sends `count` numbered UDP datagrams to an echo server, `gap` apart, and collects the
/// echoes. Halfway through, sends `midway` control lines to the switch at `ctl` (e.g. a lower
/// delay, which a switch without per-link FIFOs would answer by reordering).
pub fn burst(
    to: SocketAddr,
    count: usize,
    gap: Duration,
    ctl: Option<PathBuf>,
    midway: &[String],
) -> Result<Burst> {
    let bind: SocketAddr = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse()?;
    let sock = UdpSocket::bind(bind)?;
    sock.connect(to)?;
    let rx = sock.try_clone()?;
    rx.set_read_timeout(Some(Duration::from_millis(500)))?;
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 64];
        while let Ok(n) = rx.recv(&mut buf) {
            if n >= 8 {
                seen.push(u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")));
            }
        }
        seen
    });
    let start = Instant::now();
    for i in 0..count {
        if i == count / 2 && !midway.is_empty() {
            if let Some(ctl) = &ctl {
                crate::switch::control(ctl, midway)?;
            }
        }
        let due = start + gap * i as u32;
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        let mut msg = [0u8; 32];
        msg[..8].copy_from_slice(&(i as u64).to_le_bytes());
        sock.send(&msg)?;
    }
    let seen = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader thread panicked"))?;
    let mut max = None;
    let mut out_of_order = 0;
    for &s in &seen {
        if max.is_some_and(|m| s < m) {
            out_of_order += 1;
        }
        max = max.max(Some(s));
    }
    Ok(Burst {
        sent: count,
        received: seen.len(),
        out_of_order,
    })
}
