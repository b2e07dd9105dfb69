//! `cephbench compare`.

use std::path::PathBuf;

use clap::Args;

use super::suite::SuiteViewArgs;

/// `cephbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files, suite files (a `suite --pools` file counts as its suites) or fio JSON
    /// outputs; the first is the baseline of the Diff columns.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub view: SuiteViewArgs,
    /// Exit 4 when a file is worse than the baseline by more than PCT % in IOPS, MiB/s or mean
    /// latency and the difference is not within the noise (for CI regression gates).
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub fail_if_slower: Option<f64>,
    /// Also show the baseline's own what-if projections (those its report showed, or asked
    /// with `report --what-if`) beside each later run of the same pool and job. They are
    /// figures beside a measurement, not a check: the later run is not independent of them.
    #[arg(long)]
    pub own_projections: bool,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a percentage >= 0 (e.g. 10)")),
    }
}
