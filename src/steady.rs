//! Steady state, with fio's `steadystate` criteria: over a rolling window
//! of per-interval figures (IOPS, or mean latency), a job is steady when
//! every interval lies within a limit of the window's mean (`iops`, `lat`),
//! or when the least-squares slope through the window is within a limit
//! (`iops_slope`, `lat_slope`). A limit is absolute (ops/s, or ms for
//! latency; the slope's per second) or a percentage of the window's mean.
//! Pure functions over the figures; the sampler feeds them.
#![forbid(unsafe_code)]

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What `--steady` asked of a job (as sent to a group's agents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyConfig {
    /// The criterion as given (`iops:2%`), checked when the config was made.
    pub criterion: String,
    /// The rolling window the criterion looks at (`--steady-window`).
    pub window: Duration,
    /// The longest the measured window runs (`--steady-max`).
    pub max: Duration,
}

impl SteadyConfig {
    /// The criterion.
    pub fn criterion(&self) -> Result<Criterion, CriterionError> {
        self.criterion.parse()
    }
}

/// `--steady-window`'s default: 30 s of intervals, fio's example window.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(30);
/// `--steady-max`'s default.
pub const DEFAULT_MAX: Duration = Duration::from_secs(600);

/// Where a job stood against its criterion when it stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Whether the job became steady (it then stopped).
    pub attained: bool,
    /// When (seconds since the job's start, ramp included) the window
    /// first met the criterion.
    pub at_s: Option<f64>,
    /// The last check of a full window, if the job ran that long.
    pub last: Option<Check>,
}

/// What the criterion watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Ops per second of each interval (every op kind).
    Iops,
    /// Mean completion latency of each interval, ms.
    Lat,
}

/// How far the figures may move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// In the metric's unit (ops/s, ms; a slope per second).
    Abs(f64),
    /// In percent of the window's mean.
    Pct(f64),
}

/// One criterion: `iops:2%`, `iops_slope:0.5%`, `lat:0.2`, `lat_slope:1%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    /// The figure.
    pub metric: Metric,
    /// The slope's criterion (`_slope`), else the deviation from the mean.
    pub slope: bool,
    /// The limit.
    pub limit: Limit,
}

/// A criterion that does not parse; the message names the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--steady {given}: {why}; use iops:2%, iops_slope:0.5%, lat:5% or lat_slope:1% (an absolute limit without %: ops/s, or ms)")]
pub struct CriterionError {
    given: String,
    why: &'static str,
}

impl FromStr for Criterion {
    type Err = CriterionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| CriterionError {
            given: s.to_string(),
            why,
        };
        let (name, limit) = s.split_once(':').ok_or_else(|| err("no limit after ':'"))?;
        let (metric, slope) = match name {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "lat" => (Metric::Lat, false),
            "lat_slope" => (Metric::Lat, true),
            _ => return Err(err("unknown criterion")),
        };
        let (num, pct) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let v: f64 = num
            .trim()
            .parse()
            .map_err(|_| err("the limit is not a number"))?;
        if !v.is_finite() || v <= 0.0 {
            return Err(err("the limit must be above 0"));
        }
        Ok(Criterion {
            metric,
            slope,
            limit: if pct { Limit::Pct(v) } else { Limit::Abs(v) },
        })
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.metric, self.slope) {
            (Metric::Iops, false) => "iops",
            (Metric::Iops, true) => "iops_slope",
            (Metric::Lat, false) => "lat",
            (Metric::Lat, true) => "lat_slope",
        };
        match self.limit {
            Limit::Abs(v) => write!(f, "{name}:{v}"),
            Limit::Pct(v) => write!(f, "{name}:{v}%"),
        }
    }
}

/// One check of a full window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    /// The window's mean figure.
    pub mean: f64,
    /// What the criterion measured: the largest deviation from the mean,
    /// or the slope's magnitude per second (the metric's unit).
    pub value: f64,
    /// The limit in the metric's unit (a percentage applied to the mean).
    pub limit: f64,
    /// `value <= limit`.
    pub steady: bool,
}

impl Criterion {
    /// Checks a full window of per-interval figures, `interval_s` apart.
    pub fn check(&self, window: &[f64], interval_s: f64) -> Check {
        let n = window.len() as f64;
        let mean = window.iter().sum::<f64>() / n;
        let value = if self.slope {
            // Least squares through (i, y_i): slope per interval, per second.
            let xm = (n - 1.0) / 2.0;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for (i, y) in window.iter().enumerate() {
                let dx = i as f64 - xm;
                sxy += dx * (y - mean);
                sxx += dx * dx;
            }
            if sxx > 0.0 {
                (sxy / sxx / interval_s).abs()
            } else {
                0.0
            }
        } else {
            window.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
        };
        let limit = match self.limit {
            Limit::Abs(v) => v,
            Limit::Pct(p) => p / 100.0 * mean.abs(),
        };
        Check {
            mean,
            value,
            limit,
            steady: window.len() >= 2 && value <= limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_as_fio_spells_them() {
        let c: Criterion = "iops:2%".parse().unwrap();
        assert_eq!(
            c,
            Criterion {
                metric: Metric::Iops,
                slope: false,
                limit: Limit::Pct(2.0)
            }
        );
        assert_eq!(c.to_string(), "iops:2%");
        let s: Criterion = "lat_slope:0.05".parse().unwrap();
        assert_eq!(
            (s.metric, s.slope, s.limit),
            (Metric::Lat, true, Limit::Abs(0.05))
        );
        for bad in ["iops:abc", "iops", "bw:2%", "iops:0%", "lat:-1", "iops:nan"] {
            let e = bad.parse::<Criterion>().unwrap_err().to_string();
            assert!(e.starts_with(&format!("--steady {bad}: ")), "{e}");
            assert!(e.contains("use iops:2%"), "{e}");
        }
    }

    /// The deviation: the largest distance of an interval from the
    /// window's mean; a percentage limit applies to that mean.
    #[test]
    fn deviation_is_the_largest_distance_from_the_mean() {
        let c: Criterion = "iops:2%".parse().unwrap();
        let w = [1000.0, 1010.0, 990.0, 1000.0];
        let k = c.check(&w, 1.0);
        assert_eq!(
            (k.mean, k.value, k.limit, k.steady),
            (1000.0, 10.0, 20.0, true)
        );
        let k = c.check(&[1000.0, 1030.0, 970.0, 1000.0], 1.0);
        assert_eq!((k.value, k.steady), (30.0, false));
    }

    /// The slope: exact for a straight line, per second whatever the
    /// interval; a flat noisy window has a slope near 0.
    #[test]
    fn slope_is_the_least_squares_slope_per_second() {
        let c: Criterion = "iops_slope:1%".parse().unwrap();
        // 1000 rising 5 a sample: slope 5 per sample.
        let line: Vec<f64> = (0..30).map(|i| 1000.0 + 5.0 * i as f64).collect();
        let k = c.check(&line, 1.0);
        assert!((k.value - 5.0).abs() < 1e-9, "{k:?}");
        assert!((k.mean - 1072.5).abs() < 1e-9);
        assert!(k.steady, "5/s is under 1 % of 1072.5");
        // The same samples 0.5 s apart: 10 per second.
        assert!((c.check(&line, 0.5).value - 10.0).abs() < 1e-9);
        let steep: Vec<f64> = (0..30).map(|i| 1000.0 + 20.0 * i as f64).collect();
        assert!(!c.check(&steep, 1.0).steady);
        let flat = [1000.0, 1040.0, 960.0, 1040.0, 960.0, 1000.0];
        assert!(c.check(&flat, 1.0).value < 5.0);
        assert!(!c.check(&[1000.0], 1.0).steady, "one sample is no window");
    }
}
