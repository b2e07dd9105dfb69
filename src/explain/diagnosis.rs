//! The diagnosis of a pool: its weak links, each with the figures that show
//! it and, where a projection can say it, what fixing it would gain,
//! ranked by that gain. Pure: from the OSDs' own single-write benches (one
//! figure per OSD, robustly ranked within its device class) and the
//! results of the diagnosis' jobs (the QD1 4 KiB write's split and
//! projections, the deep write's OSD CPU).
//!
//! A weak link is named only with its evidence:
//! - **slow drives**: OSDs whose single-write commit stands out from their
//!   class's peers ([`outliers`](super::outliers)); the gain is the QD1
//!   write with no drive flushing slower than the class's median OSD
//!   ([`whatif::like_osd`]);
//! - **slow flushes everywhere**: no drive stands out, but the pool's
//!   median single-write commit is that of drives without power-loss
//!   protection ([`SLOW_FLUSH_NS`]); the gain is the QD1 write with PLP
//!   drives ([`whatif::with_plp`]);
//! - **the OSDs' CPU**: OSDs that used what they may use of the CPU during
//!   the deep write ([`cpu::verdict`]); no projection (more cores help only
//!   up to the next limit), the cores used against the cores allowed.
//!
//! A gain below [`whatif::SHOWN_FROM`] of the mean names nothing.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use super::attribution::SLOW_FLUSH_NS;
use super::cpu::{self, Bound};
use super::outliers::{self, OsdFigure, Outlier, Ranking, Worse};
use super::whatif::{self, SHOWN_FROM};
use crate::result::projection::Projection;
use crate::result::BenchResult;
pub use crate::result::OsdSettings;

/// One weak link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WeakLink {
    /// Drives slower than their class's peers in the OSDs' own bench.
    SlowDrives {
        /// The OSDs, worst first, with their figure and their class's median
        /// (single-write commit, ns).
        osds: Vec<Outlier>,
        /// The OSD whose drive the gain assumes for them (the class's median).
        like_osd: Option<i32>,
        /// The QD1 write with no drive flushing slower than `like_osd`'s.
        gain: Option<Projection>,
    },
    /// Every drive flushes as drives without power-loss protection do.
    SlowFlushes {
        /// The pool's median single-write commit, ns.
        median_commit_ns: f64,
        /// Its OSDs.
        osds: usize,
        /// The QD1 write with PLP drives.
        gain: Option<Projection>,
    },
    /// OSDs that used what they may use of the CPU in the deep write.
    OsdCpu {
        /// The job it was seen in.
        job: String,
        /// Each such OSD: id, cores used, cores it may use.
        osds: Vec<(i32, f64, f64)>,
    },
}

impl WeakLink {
    /// The fraction of the mean its fix would take off (0 without a
    /// projection).
    pub fn gain_fraction(&self) -> f64 {
        let p = match self {
            WeakLink::SlowDrives { gain, .. } | WeakLink::SlowFlushes { gain, .. } => gain.as_ref(),
            WeakLink::OsdCpu { .. } => None,
        };
        p.filter(|p| p.unchanged.is_none() && p.mean_ns > 0.0)
            .map_or(0.0, |p| (p.mean_ns - p.projected_mean_ns) / p.mean_ns)
    }
}

/// mClock takes an OSD whose measured capacity is below this many IOPS to
/// be that slow and holds its client I/O to it: a startup bench on a busy
/// drive can leave such a figure (Ceph itself ignores capacities below 50
/// IOPS on HDDs from reef on, `osd_mclock_iops_capacity_low_threshold_hdd`).
pub const LOW_MCLOCK_CAPACITY_IOPS: f64 = 50.0;

/// A setting or state that distorts a benchmark's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distortion {
    /// The OSDs ran different op schedulers.
    MixedOpQueue {
        /// Each scheduler and its OSDs.
        queues: Vec<(String, Vec<i32>)>,
    },
    /// The OSDs ran different versions.
    MixedRelease {
        /// Each version and its OSDs.
        versions: Vec<(String, Vec<i32>)>,
    },
    /// mClock took an OSD to be able to do implausibly few IOPS.
    LowMclockCapacity {
        /// The OSD.
        osd: i32,
        /// Its capacity, IOPS.
        iops: f64,
    },
    /// The cluster was not quiet during jobs (its line for the first).
    NotQuiet {
        /// The jobs.
        jobs: Vec<String>,
        /// What the first of them saw.
        first: String,
    },
}

/// What distorts the figures: schedulers or versions that differ between
/// the OSDs, an implausible mClock capacity (where the OSD runs mClock),
/// jobs the cluster was not quiet in (`not_quiet`: job and its line).
pub fn distortions(settings: &[OsdSettings], not_quiet: &[(String, String)]) -> Vec<Distortion> {
    let mut out = Vec::new();
    let queues = OsdSettings::grouped(settings, |s| s.op_queue.clone());
    if queues.len() > 1 {
        out.push(Distortion::MixedOpQueue { queues });
    }
    let versions = OsdSettings::grouped(settings, |s| s.version.clone());
    if versions.len() > 1 {
        out.push(Distortion::MixedRelease { versions });
    }
    for s in settings {
        let mclock = s.op_queue.as_deref() == Some("mclock_scheduler");
        if let Some(iops) = s
            .mclock_capacity_iops
            .filter(|c| mclock && *c < LOW_MCLOCK_CAPACITY_IOPS)
        {
            out.push(Distortion::LowMclockCapacity { osd: s.osd, iops });
        }
    }
    if let Some((_, first)) = not_quiet.first() {
        out.push(Distortion::NotQuiet {
            jobs: not_quiet.iter().map(|(j, _)| j.clone()).collect(),
            first: first.clone(),
        });
    }
    out
}

/// The diagnosis.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// What distorts the figures below (see [`distortions`]).
    #[serde(default)]
    pub distortions: Vec<Distortion>,
    /// The weak links, the largest gain first (those without a projection
    /// last); empty: nothing stands out.
    pub weak_links: Vec<WeakLink>,
    /// The OSDs' single-write commits ranked within their classes.
    pub drives: Ranking,
    /// The job whose mean the gains project.
    pub projected_job: Option<String>,
}

/// The inputs: each OSD's median single-write commit (ns) with its class,
/// the QD1 4 KiB write (the gains' base) and the deep write (the CPU).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The OSDs' own single-write benches.
    pub commits: &'a [OsdFigure],
    /// The QD1 4 KiB write's result.
    pub qd1_write: Option<&'a BenchResult>,
    /// The deep 4 KiB write's result.
    pub deep_write: Option<&'a BenchResult>,
}

/// See the module.
pub fn diagnose(i: &Inputs) -> Diagnosis {
    let drives = outliers::rank(i.commits, Worse::Higher);
    let qd1 = i
        .qd1_write
        .and_then(|r| r.jobs.first().map(|j| (r, j)))
        .filter(|(_, j)| j.attribution.is_some());
    let mut links = Vec::new();
    if !drives.outliers.is_empty() {
        let like = median_osd(i.commits, &drives);
        let gain = qd1
            .zip(like)
            .and_then(|((r, j), osd)| whatif::like_osd(r, j, osd));
        links.push(WeakLink::SlowDrives {
            osds: drives.outliers.clone(),
            like_osd: like,
            gain,
        });
    } else {
        let mut all: Vec<f64> = i.commits.iter().map(|f| f.value).collect();
        all.sort_by(f64::total_cmp);
        let median = all.get(all.len() / 2).copied();
        if let Some(m) = median.filter(|m| *m >= SLOW_FLUSH_NS) {
            links.push(WeakLink::SlowFlushes {
                median_commit_ns: m,
                osds: all.len(),
                gain: qd1.and_then(|(r, j)| whatif::with_plp(r, j)),
            });
        }
    }
    // A fix that the QD1 write says gains little is not a weak link.
    links.retain(|l| match l {
        WeakLink::SlowDrives { gain: Some(_), .. }
        | WeakLink::SlowFlushes { gain: Some(_), .. } => l.gain_fraction() >= SHOWN_FROM,
        _ => true,
    });
    links.extend(cpu_link(i.deep_write));
    links.sort_by(|a, b| b.gain_fraction().total_cmp(&a.gain_fraction()));
    Diagnosis {
        distortions: Vec::new(),
        weak_links: links,
        drives,
        projected_job: qd1.map(|(_, j)| j.name.clone()),
    }
}

/// The OSD of the outliers' class whose figure is the median of the
/// others (the drive the gain assumes for the slow ones).
fn median_osd(commits: &[OsdFigure], r: &Ranking) -> Option<i32> {
    let class = &r.outliers.first()?.class;
    let mut peers: Vec<&OsdFigure> = commits
        .iter()
        .filter(|f| &f.class == class && !r.outliers.iter().any(|o| o.osd == f.osd))
        .collect();
    peers.sort_by(|a, b| a.value.total_cmp(&b.value));
    peers.get(peers.len().checked_sub(1)? / 2).map(|f| f.osd)
}

/// The OSDs that used what they may use of the CPU in `deep`.
fn cpu_link(deep: Option<&BenchResult>) -> Option<WeakLink> {
    let r = deep?;
    let osds: Vec<(i32, f64, f64)> = r
        .osds
        .iter()
        .filter_map(|o| match cpu::verdict(o.cpu.as_ref()?)? {
            Bound::Used { used, limit } => Some((o.osd, used, limit)),
            Bound::Starved { .. } => None,
        })
        .collect();
    (!osds.is_empty()).then(|| WeakLink::OsdCpu {
        job: r.jobs.first().map_or_else(String::new, |j| j.name.clone()),
        osds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commits(ms: &[f64]) -> Vec<OsdFigure> {
        ms.iter()
            .enumerate()
            .map(|(o, ms)| OsdFigure {
                osd: o as i32,
                class: "ssd".into(),
                value: ms * 1e6,
            })
            .collect()
    }

    fn osd(osd: i32, queue: &str, version: &str, capacity: f64) -> OsdSettings {
        OsdSettings {
            osd,
            op_queue: Some(queue.into()),
            version: Some(version.into()),
            mclock_capacity_iops: Some(capacity),
            ..OsdSettings::default()
        }
    }

    #[test]
    fn schedulers_versions_and_capacities_that_distort() {
        let even = [
            osd(0, "wpq", "16.2.15", 10.0),
            osd(1, "wpq", "16.2.15", 10.0),
        ];
        // wpq ignores mClock's capacity: nothing.
        assert!(distortions(&even, &[]).is_empty());
        let mixed = [
            osd(0, "wpq", "16.2.15", 315.0),
            osd(1, "mclock_scheduler", "18.2.7", 21.0),
            osd(2, "wpq", "16.2.15", 315.0),
        ];
        let d = distortions(&mixed, &[("4k write QD1".into(), "noout".into())]);
        assert_eq!(
            d,
            [
                Distortion::MixedOpQueue {
                    queues: vec![
                        ("mclock_scheduler".into(), vec![1]),
                        ("wpq".into(), vec![0, 2])
                    ]
                },
                Distortion::MixedRelease {
                    versions: vec![("16.2.15".into(), vec![0, 2]), ("18.2.7".into(), vec![1])]
                },
                Distortion::LowMclockCapacity { osd: 1, iops: 21.0 },
                Distortion::NotQuiet {
                    jobs: vec!["4k write QD1".into()],
                    first: "noout".into()
                },
            ]
        );
    }

    #[test]
    fn nothing_stands_out_on_fast_even_drives() {
        let d = diagnose(&Inputs {
            commits: &commits(&[0.41, 0.39, 0.44]),
            qd1_write: None,
            deep_write: None,
        });
        assert!(d.weak_links.is_empty(), "{:?}", d.weak_links);
        assert_eq!(d.drives.classes[0].osds, 3);
    }

    #[test]
    fn every_drive_slow_is_the_flushes_not_a_drive() {
        let d = diagnose(&Inputs {
            commits: &commits(&[3.4, 3.5, 3.3]),
            qd1_write: None,
            deep_write: None,
        });
        match &d.weak_links[..] {
            [WeakLink::SlowFlushes {
                median_commit_ns,
                osds: 3,
                gain: None,
            }] => assert_eq!(*median_commit_ns, 3.4e6),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_slow_drive_is_named_with_the_gain_of_a_median_drive() {
        // A result whose osd.1 flushes 6 ms slower than osd.0 and osd.2 (the
        // shape perf/projections.sh's one-slow-OSD runs measured).
        let r = crate::explain::attribution::tests::one_slow_primary();
        let d = diagnose(&Inputs {
            commits: &commits(&[0.41, 6.43, 0.39]),
            qd1_write: Some(&r),
            deep_write: None,
        });
        let [WeakLink::SlowDrives {
            osds,
            like_osd,
            gain: Some(gain),
        }] = &d.weak_links[..]
        else {
            panic!("{:?}", d.weak_links)
        };
        assert_eq!(osds.iter().map(|o| o.osd).collect::<Vec<_>>(), [1]);
        // The others, 0.39 (osd.2) and 0.41 (osd.0): the lower median, osd.2.
        assert_eq!(*like_osd, Some(2));
        assert!(gain.what.contains("osd.2"), "{}", gain.what);
        // The gain is the projection's own, nothing added.
        let direct = whatif::like_osd(&r, &r.jobs[0], 2).unwrap();
        assert_eq!(gain, &direct);
        assert!(d.weak_links[0].gain_fraction() > SHOWN_FROM);
        assert_eq!(d.projected_job.as_deref(), Some(r.jobs[0].name.as_str()));
    }
}
