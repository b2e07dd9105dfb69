//! The `cephbench` binary: parses arguments, runs the command, prints the
//! report, and maps failures to one error line and an exit code
//! ([`cmd::exit`]: 0 clean, 1 failed outside the measurement, 2 bad input,
//! 3 the report was printed but its data is not clean, 4 a regression, 130
//! interrupted).
#![forbid(unsafe_code)]
#![warn(clippy::too_many_lines)]

mod cli;
mod cmd;

use std::process::ExitCode;

use cli::{Cli, Command, UsageError};

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            // -V / --version: ours, and the libraries the loader gave us.
            let libs = cephbench::ceph::Libraries::loaded();
            println!(
                "cephbench {}\n{}",
                env!("CARGO_PKG_VERSION"),
                libs.describe()
            );
            return ExitCode::SUCCESS;
        }
        Err(e) if !e.use_stderr() => {
            // --help
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let line = cli::usage_line(&e);
            eprintln!("cephbench: error: {line} (see `cephbench --help`)");
            return ExitCode::from(cmd::exit::USAGE);
        }
    };
    match run(&cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cephbench: error: {e:#}");
            let bad_pool = e
                .downcast_ref::<cephbench::bench::BenchError>()
                .is_some_and(cephbench::bench::BenchError::is_bad_input);
            if e.downcast_ref::<UsageError>().is_some() || bad_pool {
                ExitCode::from(cmd::exit::USAGE)
            } else {
                ExitCode::from(cmd::exit::FAILURE)
            }
        }
    }
}

/// Runs the command. Each validates its arguments before it touches the
/// cluster; `compare` and `report` never connect.
fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let (g, conn) = (&cli.globals(), &cli.conn);
    let offline = matches!(cli.command, Command::Compare(_) | Command::Report(_));
    if !offline {
        // Before anything is asked of a cluster: a librados/librbd older than
        // pacific is refused in one line naming the fix.
        if let Some(why) = cephbench::ceph::Libraries::loaded().too_old() {
            anyhow::bail!(why);
        }
    }
    if g.disrupt.is_some() && !matches!(cli.command, Command::Rados(_) | Command::Rbd(_)) {
        return Err(UsageError(
            "--disrupt is for rados and rbd runs: drop it (suites, sweeps and osd-bench do not \
             disrupt)"
                .into(),
        )
        .into());
    }
    match &cli.command {
        Command::Rados(a) => cmd::bench::rados(conn, a, g),
        Command::Rbd(a) => cmd::bench::rbd(conn, a, g),
        Command::Suite(a) => cmd::suite::suite(conn, a, g),
        Command::Sweep(a) => cmd::suite::sweep(conn, a, g),
        Command::OsdBench(a) => cmd::cluster::osd_bench(conn, a, g),
        Command::Diagnose(a) => cmd::diagnose::diagnose(conn, a, g),
        Command::Watch(a) => cmd::watch::watch(conn, a, g),
        Command::Agent(a) => cmd::cluster::agent(conn, a),
        Command::Cleanup(a) => cmd::cluster::cleanup(conn, a),
        Command::Compare(a) => cmd::offline::compare(a, g),
        Command::Report(a) => cmd::offline::report(a, g),
    }
}

/// The reader of stdout went away (e.g. `| head`): not an error of ours.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
