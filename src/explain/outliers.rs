//! The OSDs that stand out from their peers, by robust statistics: within
//! each device class, an OSD's figure against the class's median, in units
//! of its median absolute deviation (MAD), as Ceph's own fail-slow proposal
//! compares an OSD with its peers. The median and the MAD ignore the few
//! outliers they are there to find, so a handful of slow drives among
//! hundreds cannot hide each other, and "the fastest OSD" (one extreme
//! drive) does not set the bar.
//!
//! An OSD stands out when its figure is worse than its class's median by
//! both at least [`MIN_SCORE`] scaled MADs and at least [`MIN_RATIO`] times
//! the median. The scale never falls below [`MIN_SCALE`] of the median,
//! so that a class of near-identical drives (MAD ≈ 0) does not name an OSD
//! for a difference of a few percent. A class of fewer than [`MIN_PEERS`]
//! OSDs has no majority to stand out from and names none.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// Which way a figure is worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worse {
    /// A latency: higher is worse.
    Higher,
    /// A rate: lower is worse.
    Lower,
}

/// One OSD's figure.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdFigure {
    /// The OSD id.
    pub osd: i32,
    /// Its device class ("" when unknown: those OSDs are one class).
    pub class: String,
    /// The figure (a latency in ns, or a rate).
    pub value: f64,
}

/// An OSD that stands out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    /// The OSD id.
    pub osd: i32,
    /// Its device class ("" when unknown).
    pub class: String,
    /// Its figure.
    pub value: f64,
    /// Its class's median.
    pub median: f64,
    /// Its figure over the class's median (below 1 for a slow rate).
    pub ratio: f64,
    /// How many scaled MADs it is worse than the median.
    pub score: f64,
}

/// One device class's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSpread {
    /// The device class ("" when unknown).
    pub class: String,
    /// OSDs with a figure.
    pub osds: usize,
    /// The median figure.
    pub median: f64,
    /// The median absolute deviation from it.
    pub mad: f64,
}

/// The ranking: the outliers, worst first, and each class's spread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// The OSDs that stand out, worst (highest score) first.
    pub outliers: Vec<Outlier>,
    /// Each class, in name order.
    pub classes: Vec<ClassSpread>,
}

/// An OSD is named only this many scaled MADs from its class's median.
pub const MIN_SCORE: f64 = 5.0;

/// ... and only this many times its class's median (or, for a rate, at
/// most its inverse).
pub const MIN_RATIO: f64 = 2.0;

/// The scale (1.4826 × MAD, the standard deviation of a normal sample) is
/// at least this fraction of the median.
pub const MIN_SCALE: f64 = 0.05;

/// A class needs this many OSDs to name one of them.
pub const MIN_PEERS: usize = 3;

/// 1.4826 × MAD estimates the standard deviation of normal figures.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The median of `v` (sorted here); NaN for none.
fn median(v: &mut [f64]) -> f64 {
    crate::stats::median(v).unwrap_or(f64::NAN)
}

/// Ranks `figures` (see the module): per class, the OSDs worse than their
/// peers, worst first.
pub fn rank(figures: &[OsdFigure], worse: Worse) -> Ranking {
    let mut classes: Vec<&str> = figures.iter().map(|f| f.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    let mut out = Ranking::default();
    for class in classes {
        let peers: Vec<&OsdFigure> = figures
            .iter()
            .filter(|f| f.class == class && f.value.is_finite())
            .collect();
        let mut values: Vec<f64> = peers.iter().map(|f| f.value).collect();
        let med = median(&mut values);
        let mut dev: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
        let mad = median(&mut dev);
        out.classes.push(ClassSpread {
            class: class.to_string(),
            osds: peers.len(),
            median: med,
            mad,
        });
        if peers.len() < MIN_PEERS || med <= 0.0 {
            continue;
        }
        let scale = (MAD_TO_SIGMA * mad).max(MIN_SCALE * med);
        for f in peers {
            let (score, far) = match worse {
                Worse::Higher => ((f.value - med) / scale, f.value >= MIN_RATIO * med),
                Worse::Lower => ((med - f.value) / scale, f.value * MIN_RATIO <= med),
            };
            if score >= MIN_SCORE && far {
                out.outliers.push(Outlier {
                    osd: f.osd,
                    class: class.to_string(),
                    value: f.value,
                    median: med,
                    ratio: f.value / med,
                    score,
                });
            }
        }
    }
    out.outliers
        .sort_by(|a, b| b.score.total_cmp(&a.score).then(a.osd.cmp(&b.osd)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator (xorshift64*), so the made-up clusters are
    /// the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }

        /// A normal draw (Box-Muller), held within 3 standard deviations
        /// (drives of one model: none is off by more than its model's spread).
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.next().max(1e-12), self.next());
            ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()).clamp(-3.0, 3.0)
        }
    }

    /// A made-up pool of `n` OSDs (stated as such: figures the test makes,
    /// not measured): a third HDDs flushing in ~8 ms, the rest SSDs in
    /// ~0.3 ms, each with a log-normal spread of 15 % (drives of one model
    /// differ; at most 3 spreads, ×0.64–1.57); `slow` OSDs flush `factor` times their class's typical time.
    fn made_up_pool(n: i32, slow: &[i32], factor: f64, seed: u64) -> Vec<OsdFigure> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|osd| {
                let (class, typical) = if osd % 3 == 0 {
                    ("hdd", 8e6)
                } else {
                    ("ssd", 0.3e6)
                };
                let mut value = typical * (0.15 * rng.normal()).exp();
                if slow.contains(&osd) {
                    value = typical * factor;
                }
                OsdFigure {
                    osd,
                    class: class.into(),
                    value,
                }
            })
            .collect()
    }

    fn named(r: &Ranking) -> Vec<i32> {
        let mut v: Vec<i32> = r.outliers.iter().map(|o| o.osd).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn names_exactly_the_planted_outliers_among_120_and_1000_osds() {
        for (n, slow) in [(120, vec![7, 44, 90]), (1000, vec![3, 250, 251, 777, 998])] {
            for seed in 1..=20 {
                let figs = made_up_pool(n, &slow, 2.5, seed);
                let r = rank(&figs, Worse::Higher);
                assert_eq!(named(&r), slow, "n {n} seed {seed}: {:?}", r.outliers);
                // Each is named against its own class: an HDD at 2.5x the
                // HDDs' median, an SSD at 2.5x the SSDs'.
                for o in &r.outliers {
                    assert!((o.ratio - 2.5).abs() < 0.5, "{o:?}");
                }
            }
        }
    }

    #[test]
    fn a_healthy_pool_names_none_and_a_slower_class_is_not_an_outlier() {
        for seed in 1..=50 {
            let r = rank(&made_up_pool(1000, &[], 1.0, seed), Worse::Higher);
            assert!(r.outliers.is_empty(), "seed {seed}: {:?}", r.outliers);
            assert_eq!(r.classes.len(), 2);
            let hdd = &r.classes[0];
            assert_eq!((hdd.class.as_str(), hdd.osds), ("hdd", 334));
            assert!((hdd.median / 8e6 - 1.0).abs() < 0.05, "{hdd:?}");
        }
    }

    #[test]
    fn three_osds_one_slow_flush() {
        // The throwaway cluster's shape: 3 OSDs of one class, one 3 ms slow.
        let f = |osd, ms: f64| OsdFigure {
            osd,
            class: "hdd".into(),
            value: ms * 1e6,
        };
        let r = rank(&[f(0, 0.41), f(1, 3.43), f(2, 0.39)], Worse::Higher);
        assert_eq!(named(&r), [1]);
        assert!((r.outliers[0].ratio - 3.43 / 0.41).abs() < 1e-9);
        // Near-identical drives name none (the scale floor), and two OSDs
        // are too few to tell which one is off.
        assert!(rank(&[f(0, 0.40), f(1, 0.46), f(2, 0.39)], Worse::Higher)
            .outliers
            .is_empty());
        assert!(rank(&[f(0, 0.4), f(1, 3.4)], Worse::Higher)
            .outliers
            .is_empty());
        // Two slow of three: the majority is slow, the fast one is not worse.
        assert!(rank(&[f(0, 3.4), f(1, 3.4), f(2, 0.4)], Worse::Higher)
            .outliers
            .is_empty());
    }

    #[test]
    fn a_rate_is_worse_when_lower() {
        let f = |osd, iops| OsdFigure {
            osd,
            class: String::new(),
            value: iops,
        };
        let figs: Vec<_> = (0..10)
            .map(|o| {
                f(
                    o,
                    if o == 4 {
                        300.0
                    } else {
                        1000.0 + o as f64 * 10.0
                    },
                )
            })
            .collect();
        let r = rank(&figs, Worse::Lower);
        assert_eq!(named(&r), [4]);
        assert!(rank(&figs, Worse::Higher).outliers.is_empty());
    }
}
