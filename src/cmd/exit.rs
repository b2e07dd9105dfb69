//! Exit codes: 0 clean; 1 the run could not start or failed outside the
//! measurement; 2 bad input; 3 the report was printed but ops failed, reads
//! came back short or did not match; 4 `compare --fail-if-slower` found a
//! regression; 130 interrupted (3 wins: an interrupt never hides bad data).

use std::process::ExitCode;

/// The run could not start, or failed outside the measurement.
pub const FAILURE: u8 = 1;
/// Bad input.
pub const USAGE: u8 = 2;
/// The report was printed, but its data is not clean.
pub const DATA_ERRORS: u8 = 3;
/// `compare --fail-if-slower` found a regression.
pub const REGRESSION: u8 = 4;
/// Interrupted (SIGINT/SIGTERM).
pub const INTERRUPTED: u8 = 130;

/// The exit code of a run whose report was printed: data errors (3) first,
/// then an interrupt (130), else 0. Data errors are counted on stderr, the
/// error that stopped the run (if any) last, as the line naming the fix.
pub fn after_report(
    errors: cephbench::result::DataErrors,
    interrupted: bool,
    stopped_by: Option<anyhow::Error>,
) -> ExitCode {
    if !errors.is_clean() {
        eprintln!("cephbench: error: the run finished with {errors} (exit code 3)");
        if let Some(e) = stopped_by {
            eprintln!("cephbench: error: {e:#}");
        }
        ExitCode::from(DATA_ERRORS)
    } else if interrupted {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    }
}

/// A run that stopped on `error`: before anything was measured it is the
/// command's error (exit 1); after, the report was printed and the exit code
/// says what the data is ([`after_report`]).
pub fn after_stop(
    errors: cephbench::result::DataErrors,
    interrupted: bool,
    error: Option<anyhow::Error>,
) -> anyhow::Result<ExitCode> {
    match error {
        Some(e) if errors.is_clean() => Err(e),
        error => Ok(after_report(errors, interrupted, error)),
    }
}
