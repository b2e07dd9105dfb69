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
}
