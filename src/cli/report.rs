//! `cephbench report`.

use std::path::PathBuf;

use clap::Args;

use super::suite::SuiteViewArgs;

/// `cephbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files (from --format json); html puts them all on one page with comparison bars.
    /// Or suite files (`suite --format json`, one pool or --pools), or one sweep file.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub view: SuiteViewArgs,
    /// Write the report to this file instead of stdout (only if every input is valid).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Project each result's jobs onto a change, from their split (repeatable): plp,
    /// flush:0.1ms, like:osd.N, cluster-rtt:-0.5ms (a cluster network that much faster per
    /// round trip) or no-copy-wait.
    #[arg(long = "what-if", value_name = "CHANGE", value_parser = what_if)]
    pub what_if: Vec<cephbench::explain::whatif::Ask>,
}

fn what_if(s: &str) -> Result<cephbench::explain::whatif::Ask, String> {
    s.parse()
}
