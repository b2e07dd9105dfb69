//! The switch: one TAP per port, MAC learning per segment, flooding of broadcast/multicast and
//! unknown destinations, and per-link delay queues. Single thread: epoll over the TAPs, the
//! control socket and a timerfd that wakes the loop `spin` before the next deadline; the loop
//! then polls (epoll with timeout 0) until the deadline passes, so frames leave within a few
//! microseconds of it while arriving frames are still read.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::control::{parse_line, Command};
use crate::links::Links;
use crate::sys::{create_tap, Epoll, Timer};
use crate::table::{DelayTable, PortSpec};

/// How the switch runs.
pub struct Config {
    /// The ports, in order.
    pub ports: Vec<PortSpec>,
    /// Path of the UNIX control socket.
    pub ctl: PathBuf,
    /// Initial delay of every pair, µs.
    pub delay_us: u64,
    /// Busy-poll this long before each deadline, µs.
    pub spin_us: u64,
    /// Frames per link queue before tail drop.
    pub queue_limit: usize,
}

/// Frames read from one TAP per wake-up before the others get their turn.
const READ_BATCH: usize = 64;
/// Largest frame: the largest TAP MTU (65535) plus the Ethernet header.
const MAX_FRAME: usize = 65535 + 14;
const CONN_BASE: u64 = 1 << 32;
const MAX_CTL_LINE: usize = 64 * 1024;

#[derive(Default)]
struct Counters {
    frames_in: u64,
    frames_out: u64,
    fast_path: u64,
    flooded: u64,
    write_errors: u64,
    runts: u64,
}

struct Conn {
    stream: UnixStream,
    inbuf: Vec<u8>,
    outbuf: Vec<u8>,
    eof: bool,
}

struct Switch {
    taps: Vec<File>,
    table: DelayTable,
    links: Links,
    /// Segment index of each port.
    seg: Vec<u16>,
    /// For each port, the other ports of its segment (flood targets).
    peers: Vec<Vec<usize>>,
    macs: HashMap<(u16, [u8; 6]), usize>,
    counters: Counters,
    clock: Instant,
}

fn send(tap: &File, frame: &[u8], c: &mut Counters) {
    // A TAP write takes one whole frame or fails (EIO while the interface is down: the frame
    // is lost, as on a dead link).
    match (&*tap).write(frame) {
        Ok(n) if n == frame.len() => c.frames_out += 1,
        _ => c.write_errors += 1,
    }
}

impl Switch {
    fn now(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    fn forward(&mut self, src: usize, dst: usize, frame: &[u8], t: u64) {
        let link = self.table.link(src, dst);
        let delay = self.table.delay_ns(src, dst);
        if delay == 0 && self.links.is_empty(link) {
            self.counters.fast_path += 1;
            send(&self.taps[dst], frame, &mut self.counters);
        } else {
            self.links.push(link, t + delay, frame);
        }
    }

    /// Reads up to [`READ_BATCH`] frames from port `p` and handles them.
    fn read_port(&mut self, p: usize, scratch: &mut [u8]) {
        for _ in 0..READ_BATCH {
            match (&self.taps[p]).read(scratch) {
                Ok(len) => {
                    let t = self.now();
                    self.handle_frame(p, &scratch[..len], t);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    eprintln!("netdelay: read from port {}: {e}", self.table.name(p));
                    break;
                }
            }
        }
    }

    fn handle_frame(&mut self, src: usize, frame: &[u8], t: u64) {
        if frame.len() < 14 {
            self.counters.runts += 1;
            return;
        }
        self.counters.frames_in += 1;
        let mut dst_mac = [0u8; 6];
        let mut src_mac = [0u8; 6];
        dst_mac.copy_from_slice(&frame[0..6]);
        src_mac.copy_from_slice(&frame[6..12]);
        let seg = self.seg[src];
        if src_mac[0] & 1 == 0 && self.macs.get(&(seg, src_mac)) != Some(&src) {
            self.macs.insert((seg, src_mac), src);
        }
        if dst_mac[0] & 1 == 0 {
            if let Some(&dst) = self.macs.get(&(seg, dst_mac)) {
                if dst != src {
                    self.forward(src, dst, frame, t);
                }
                return;
            }
        }
        self.counters.flooded += 1;
        for i in 0..self.peers[src].len() {
            let dst = self.peers[src][i];
            self.forward(src, dst, frame, t);
        }
    }

    fn release(&mut self) -> Option<u64> {
        let now = self.now();
        let (taps, counters) = (&self.taps, &mut self.counters);
        self.links
            .release_due(now, |port, frame| send(&taps[port], frame, counters))
    }

    fn command(&mut self, line: &str) -> String {
        match parse_line(line) {
            Ok(None) => String::new(),
            Err(e) => format!("err {e}\n"),
            Ok(Some(Command::Ping)) => "ok\n".into(),
            Ok(Some(Command::Delay { src, dst, micros })) => {
                match self.table.set(&src, &dst, micros) {
                    Ok(n) => {
                        eprintln!("netdelay: delay {src} -> {dst} = {micros} us ({n} links)");
                        "ok\n".into()
                    }
                    Err(e) => format!("err {e}\n"),
                }
            }
            Ok(Some(Command::Show)) => {
                let mut s = self.table.lines().join("\n");
                s.push_str("\nok\n");
                s
            }
            Ok(Some(Command::Stats)) => {
                let c = &self.counters;
                format!(
                    "frames_in={} frames_out={} fast_path={} flooded={} queued={} dropped_full={} write_errors={} runts={} macs={}\nok\n",
                    c.frames_in,
                    c.frames_out,
                    c.fast_path,
                    c.flooded,
                    self.links.queued(),
                    self.links.dropped(),
                    c.write_errors,
                    c.runts,
                    self.macs.len()
                )
            }
        }
    }

    /// Reads what the connection sent, answers each complete line, writes what fits. Returns
    /// false when the connection is finished (or broken) and must be closed.
    fn service(&mut self, conn: &mut Conn) -> bool {
        let mut tmp = [0u8; 4096];
        loop {
            match conn.stream.read(&mut tmp) {
                Ok(0) => {
                    conn.eof = true;
                    break;
                }
                Ok(n) => {
                    conn.inbuf.extend_from_slice(&tmp[..n]);
                    if conn.inbuf.len() > MAX_CTL_LINE {
                        return false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        while let Some(pos) = conn.inbuf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = conn.inbuf.drain(..=pos).collect();
            let answer = self.command(&String::from_utf8_lossy(&line));
            conn.outbuf.extend_from_slice(answer.as_bytes());
        }
        if conn.eof && !conn.inbuf.is_empty() {
            let line = std::mem::take(&mut conn.inbuf);
            let answer = self.command(&String::from_utf8_lossy(&line));
            conn.outbuf.extend_from_slice(answer.as_bytes());
        }
        while !conn.outbuf.is_empty() {
            match conn.stream.write(&conn.outbuf) {
                Ok(n) => {
                    conn.outbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        !(conn.eof && conn.outbuf.is_empty())
    }
}

/// Creates the TAPs and the control socket, prints `ready` on stdout, then forwards frames
/// until killed.
pub fn run(cfg: Config) -> Result<()> {
    if cfg.ports.len() < 2 {
        bail!("a switch needs at least two --port");
    }
    let table = DelayTable::new(&cfg.ports, cfg.delay_us).map_err(anyhow::Error::msg)?;
    let mut taps = Vec::new();
    for p in &cfg.ports {
        taps.push(create_tap(&p.ifname).with_context(|| {
            format!(
                "cannot create TAP '{}' (run as root; does /dev/net/tun exist? is the name taken?)",
                p.ifname
            )
        })?);
    }
    let (seg, peers) = segments(&cfg.ports);
    let n = cfg.ports.len();

    let listener = bind_control(&cfg.ctl)?;

    let timer = Timer::new()?;
    let mut epoll = Epoll::new(256)?;
    for (i, t) in taps.iter().enumerate() {
        epoll.add(t.as_raw_fd(), libc::EPOLLIN as u32, i as u64)?;
    }
    let tok_timer = n as u64;
    let tok_listen = n as u64 + 1;
    epoll.add(timer.fd(), libc::EPOLLIN as u32, tok_timer)?;
    epoll.add(listener.as_raw_fd(), libc::EPOLLIN as u32, tok_listen)?;

    let mut sw = Switch {
        taps,
        table,
        links: Links::new(n, cfg.queue_limit),
        seg,
        peers,
        macs: HashMap::new(),
        counters: Counters::default(),
        clock: Instant::now(),
    };
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let spin = cfg.spin_us * 1000;
    let mut scratch = vec![0u8; MAX_FRAME];
    let mut events = Vec::with_capacity(256);
    let mut armed: Option<u64> = None;

    println!("ready");
    io::stdout().flush()?;
    eprintln!(
        "netdelay: {} ports ({}), control socket {}, delay {} us, spin {} us",
        n,
        cfg.ports
            .iter()
            .map(|p| format!("{}={}@{}", p.name, p.ifname, p.segment))
            .collect::<Vec<_>>()
            .join(" "),
        cfg.ctl.display(),
        cfg.delay_us,
        cfg.spin_us
    );

    loop {
        let next = sw.release();
        let now = sw.now();
        let timeout = match next {
            None => {
                if armed.take().is_some() {
                    timer.set(None)?;
                }
                -1
            }
            Some(d) if d <= now + spin => 0,
            Some(d) => {
                let fire = d - spin;
                if armed != Some(fire) {
                    timer.set(Some(Duration::from_nanos(fire - now)))?;
                    armed = Some(fire);
                }
                -1
            }
        };
        epoll.wait(timeout, &mut events)?;
        for &(tok, _ev) in &events {
            if tok < n as u64 {
                sw.read_port(tok as usize, &mut scratch);
            } else if tok == tok_timer {
                timer.clear();
                armed = None;
            } else if tok == tok_listen {
                accept_all(&listener, &mut conns, &mut epoll, &mut sw)?;
            } else if tok >= CONN_BASE {
                let slot = (tok - CONN_BASE) as usize;
                if let Some(mut conn) = conns.get_mut(slot).and_then(Option::take) {
                    if sw.service(&mut conn) {
                        conns[slot] = Some(conn);
                    } else {
                        let _ = epoll.delete(conn.stream.as_raw_fd());
                    }
                }
            }
        }
    }
}

/// Each port's segment index, and for each port the other ports of its
/// segment (its flood targets).
fn segments(ports: &[PortSpec]) -> (Vec<u16>, Vec<Vec<usize>>) {
    let mut seg_names: Vec<&str> = Vec::new();
    let seg: Vec<u16> = ports
        .iter()
        .map(|p| {
            let i = seg_names
                .iter()
                .position(|s| *s == p.segment)
                .unwrap_or_else(|| {
                    seg_names.push(&p.segment);
                    seg_names.len() - 1
                });
            i as u16
        })
        .collect();
    let n = ports.len();
    let peers: Vec<Vec<usize>> = (0..n)
        .map(|s| (0..n).filter(|&d| d != s && seg[d] == seg[s]).collect())
        .collect();
    (seg, peers)
}

/// Binds the control socket at `ctl`, replacing a stale socket there (and
/// refusing anything else).
fn bind_control(ctl: &std::path::Path) -> Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(ctl) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            bail!(
                "{} exists and is not a socket; remove it or pick another --ctl",
                ctl.display()
            );
        }
        std::fs::remove_file(ctl)?;
    }
    let listener = UnixListener::bind(ctl)
        .with_context(|| format!("cannot bind control socket {}", ctl.display()))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Takes every pending control connection: serves what it sent, and keeps
/// it (watched in `epoll`) until it is done.
fn accept_all(
    listener: &UnixListener,
    conns: &mut Vec<Option<Conn>>,
    epoll: &mut Epoll,
    sw: &mut Switch,
) -> Result<()> {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(true)?;
                let slot = conns.iter().position(Option::is_none).unwrap_or_else(|| {
                    conns.push(None);
                    conns.len() - 1
                });
                epoll.add(
                    stream.as_raw_fd(),
                    (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
                    CONN_BASE + slot as u64,
                )?;
                let mut conn = Conn {
                    stream,
                    inbuf: Vec::new(),
                    outbuf: Vec::new(),
                    eof: false,
                };
                if sw.service(&mut conn) {
                    conns[slot] = Some(conn);
                } else {
                    let _ = epoll.delete(conn.stream.as_raw_fd());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("netdelay: accept: {e}");
                break;
            }
        }
    }
    Ok(())
}

/// Sends control lines to a running switch and returns its answers; an error if the switch
/// cannot be reached or any line was refused (`err ...`).
pub fn control(ctl: &std::path::Path, lines: &[String]) -> Result<String> {
    let mut s = UnixStream::connect(ctl).with_context(|| {
        format!(
            "cannot connect to {} (is the switch running?)",
            ctl.display()
        )
    })?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut req = lines.join("\n");
    req.push('\n');
    s.write_all(req.as_bytes())?;
    s.shutdown(std::net::Shutdown::Write)?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    if let Some(err) = out.lines().find(|l| l.starts_with("err ")) {
        bail!("switch refused a command: {}", &err[4..]);
    }
    Ok(out)
}
