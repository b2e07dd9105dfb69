//! `cephbench-netdelay`: a user-space Ethernet delay switch for cephbench's network tests
//! (the kernel here has no sch_netem). See `switch.rs` for the design and `control.rs` for
//! the control protocol.

mod control;
mod links;
mod probe;
mod switch;
mod sys;
mod table;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cephbench-netdelay",
    version,
    about = "User-space Ethernet switch over TAP devices that delays each frame per (source, destination) port pair"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create one TAP per port and switch frames between them until killed.
    ///
    /// Each TAP is created in the caller's network namespace; move it elsewhere with
    /// `ip link set IFNAME netns NS` after `ready` was printed (the switch keeps its fd).
    Run {
        /// A port: NAME=IFNAME[@SEGMENT] (frames never cross segments). At least two.
        #[arg(long = "port", required = true, value_parser = parse_port)]
        ports: Vec<table::PortSpec>,
        /// UNIX control socket to create.
        #[arg(long)]
        ctl: PathBuf,
        /// Initial one-way delay of every port pair, µs.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=control::MAX_DELAY_US))]
        delay_us: u64,
        /// Busy-poll this long before each deadline, µs (timer wake-ups are late by tens of µs).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=10_000u64))]
        spin_us: u64,
        /// Frames queued per link before further frames are dropped.
        #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..=1_000_000u64))]
        queue_limit: u64,
    },
    /// Send control lines to a running switch and print the answers.
    ///
    /// Lines: `delay SRC DST MICROS` (SRC/DST: port name, `*`, or `@SEGMENT`), `show`, `stats`,
    /// `ping`. Exits 1 if any line is refused.
    Ctl {
        /// The switch's control socket.
        #[arg(long)]
        ctl: PathBuf,
        /// One or more control lines.
        #[arg(required = true)]
        lines: Vec<String>,
    },
    /// Echo TCP and UDP on ADDR:PORT until killed (run it inside a namespace).
    Echo {
        /// Address to listen on, e.g. 0.0.0.0:7777.
        #[arg(long)]
        listen: SocketAddr,
    },
    /// TCP round-trip time to an `echo` server: prints `rtt_us min=.. median=.. mean=..`.
    Rtt {
        /// The echo server.
        #[arg(long)]
        to: SocketAddr,
        /// Measured round trips.
        #[arg(long, default_value_t = 200)]
        count: usize,
    },
    /// Numbered UDP datagrams to an `echo` server; prints `sent=.. received=.. out_of_order=..`.
    Burst {
        /// The echo server.
        #[arg(long)]
        to: SocketAddr,
        /// Datagrams to send.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Spacing between datagrams, µs.
        #[arg(long, default_value_t = 50)]
        gap_us: u64,
        /// A switch control socket to send --midway lines to, halfway through.
        #[arg(long)]
        ctl: Option<PathBuf>,
        /// Control lines sent halfway through (e.g. 'delay * * 0').
        #[arg(long)]
        midway: Vec<String>,
    },
}

fn parse_port(s: &str) -> Result<table::PortSpec, String> {
    table::parse_port_spec(s)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Run {
            ports,
            ctl,
            delay_us,
            spin_us,
            queue_limit,
        } => switch::run(switch::Config {
            ports,
            ctl,
            delay_us,
            spin_us,
            queue_limit: queue_limit as usize,
        }),
        Cmd::Ctl { ctl, lines } => switch::control(&ctl, &lines).map(|out| print!("{out}")),
        Cmd::Echo { listen } => probe::echo(listen),
        Cmd::Rtt { to, count } => probe::rtt(to, count).map(|(min, median, mean)| {
            println!("rtt_us min={min:.1} median={median:.1} mean={mean:.1}")
        }),
        Cmd::Burst {
            to,
            count,
            gap_us,
            ctl,
            midway,
        } => probe::burst(to, count, Duration::from_micros(gap_us), ctl, &midway).map(|b| {
            println!(
                "sent={} received={} out_of_order={}",
                b.sent, b.received, b.out_of_order
            )
        }),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cephbench-netdelay: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
