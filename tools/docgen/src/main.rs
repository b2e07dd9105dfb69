//! `cephbench-docgen OUT_DIR [--date YYYY-MM-DD]`: writes cephbench's man
//! pages and shell completions, generated from the clap command the binary
//! parses with (`src/cli/`, compiled in here), for `packaging/build-deb.sh`:
//!
//! - `OUT_DIR/man/cephbench.1`, and one page per command and subcommand
//!   (`cephbench-rados.1`, `cephbench-sweep-rbd.1`, ...), each with a SEE ALSO;
//! - `OUT_DIR/completions/cephbench.bash`, `_cephbench` (zsh), `cephbench.fish`.
//!
//! The date in the pages' title line is `--date` (build-deb.sh passes the
//! last commit's day), else left empty: the same sources give the same files.
#![forbid(unsafe_code)]

// The binary's own definition, not a copy of it: what is not used here (the
// translation into configs) is dead code to this crate only.
#[allow(dead_code)]
#[path = "../../../src/cli/mod.rs"]
mod cli;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap_complete::Shell;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cephbench-docgen: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut out, mut date) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--date" => date = Some(args.next().context("--date needs YYYY-MM-DD")?),
            "-h" | "--help" => {
                println!("usage: cephbench-docgen OUT_DIR [--date YYYY-MM-DD]");
                return Ok(());
            }
            _ if out.is_none() && !a.starts_with('-') => out = Some(a),
            _ => bail!(
                "unexpected argument '{a}' (usage: cephbench-docgen OUT_DIR [--date YYYY-MM-DD])"
            ),
        }
    }
    let out = out.context("usage: cephbench-docgen OUT_DIR [--date YYYY-MM-DD]")?;
    let date = date.unwrap_or_default();
    let out = Path::new(&out);

    let man_dir = out.join("man");
    fs::create_dir_all(&man_dir).with_context(|| format!("creating {}", man_dir.display()))?;
    let mut cmd = cli::command().disable_help_subcommand(true);
    cmd.build();
    let n = man_pages(&cmd, None, &man_dir, &date)?;

    let comp_dir = out.join("completions");
    fs::create_dir_all(&comp_dir).with_context(|| format!("creating {}", comp_dir.display()))?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = cli::command();
        let path = clap_complete::generate_to(shell, &mut cmd, "cephbench", &comp_dir)
            .with_context(|| {
                format!("writing the {shell} completion into {}", comp_dir.display())
            })?;
        eprintln!("cephbench-docgen: {}", path.display());
    }
    eprintln!("cephbench-docgen: {n} man pages in {}", man_dir.display());
    Ok(())
}

/// Writes `cmd`'s page and its visible subcommands' pages; returns how many.
fn man_pages(cmd: &clap::Command, parent: Option<&str>, dir: &Path, date: &str) -> Result<usize> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let children: Vec<&clap::Command> =
        cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    let mut n = 0;
    for c in &children {
        n += man_pages(c, Some(&name), dir, date)?;
    }
    let man = clap_mangen::Man::new(cmd.clone())
        .date(date)
        .source(format!("cephbench {}", env!("CARGO_PKG_VERSION")))
        .manual("cephbench Manual");
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)?;
    // SEE ALSO: the parent command, the subcommands, the documentation.
    let mut see: Vec<String> = parent
        .map(|p| format!("\\fB{p}\\fR(1)"))
        .into_iter()
        .collect();
    for c in &children {
        see.push(format!(
            "\\fB{}\\fR(1)",
            c.get_display_name().unwrap_or(c.get_name())
        ));
    }
    writeln!(page, ".SH \"SEE ALSO\"")?;
    if !see.is_empty() {
        writeln!(page, "{}", see.join(", "))?;
        writeln!(page, ".PP")?;
    }
    writeln!(
        page,
        "The README, the documentation and examples: /usr/share/doc/cephbench/."
    )?;
    fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    Ok(n + 1)
}
