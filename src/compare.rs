//! `cephbench compare`: result files side by side, with a Diff % column per
//! figure against the first file and a verdict on whether the difference is
//! larger than the run-to-run noise.
//!
//! Noise method (stated in the output): each figure's per-second samples in
//! the measured window (ramp seconds excluded) give a mean and a standard
//! error (sd / sqrt(n)); a difference counts as real when it exceeds twice
//! the combined standard error, sqrt(se_a² + se_b²). Per-second samples are
//! serially correlated, so this under-states the noise of short runs; repeat
//! runs give a better estimate. Percentiles have no per-second samples and
//! get no verdict.
#![forbid(unsafe_code)]

use serde::Serialize;

use crate::result::{workload_label, BenchResult, JobReport, Part, PoolSettings};

/// One figure of one job across the files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `job/op`, e.g. `randwrite/write`.
    pub job: String,
    /// The figure, e.g. `IOPS`.
    pub figure: &'static str,
    /// Its value in each file (`None` if a file lacks the job).
    pub values: Vec<Option<f64>>,
    /// Diff % of each file against the first.
    pub diff_pct: Vec<Option<f64>>,
    /// Whether each difference exceeds the noise (`None`: no estimate).
    pub significant: Vec<Option<bool>>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// A label per file (workload on pool).
    pub labels: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
    /// The noise method, in words.
    pub method: &'static str,
    /// What the reader must know about the inputs (e.g. fio's latency kind).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where each job's mean latency moved between the sources, share by
    /// share (jobs whose split is known on the baseline and another source).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Moved>,
    /// Each source's OSDs with their drive and its flush figures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub osds: Vec<OsdEvidence>,
    /// What the headlines call each source: its pool's name where the
    /// pools differ, else its letter (A, B, ...).
    #[serde(skip)]
    pub names: Vec<String>,
    /// Each source's back-interface heartbeat round trip, ms (the OSDs'
    /// 1-min averages, mean), the evidence for or against the cable.
    #[serde(skip)]
    pub back_heartbeat_ms: Vec<Option<f64>>,
    /// What-if projections beside another side's measured mean: each side's
    /// job with the other side's drive-side shares (both ways between the
    /// baseline and each other side, where it moves the mean by
    /// [`CROSS_PROJECTION_FROM`] or more, between like jobs only), and, when
    /// asked for ([`Comparison::with_own_projections`]), the baseline's own
    /// projections beside each later run of the same pool.
    pub projections: Vec<ProjectionCheck>,
    /// Why pairs of jobs got no cross projection (unlike jobs, the same
    /// drives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub projections_left_out: Vec<String>,
}

/// One what-if projection of a comparison and the measured mean it is
/// held against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectionCheck {
    /// The row key (`job/op`).
    pub job: String,
    /// The source whose job is projected.
    pub source: usize,
    /// The source it is held against (whose drives a `drives` projection
    /// takes, and whose measured mean is beside it).
    pub against: usize,
    /// The projection.
    pub projection: crate::result::projection::Projection,
    /// `against`'s measured mean of the same job, ns.
    pub measured_mean_ns: f64,
    /// A cross projection (`source` with `against`'s drives): its reference
    /// is the run it is set beside, so the two differ only by what the
    /// projection kept (the networks, and the unattributed time when the
    /// runs came from different client hosts). Else the baseline's own
    /// projection, beside a later run of its pool. Neither is a check of
    /// the projection: that needs a pool measured independently.
    pub cross: bool,
}

impl ProjectionCheck {
    /// In one line, with the sources' letters: "A with B's drives: mean
    /// 7.30 → 0.85 ms, IOPS 137 → 1,180 (B measured 0.79 ms)", or "A's own:
    /// PLP drives (…): mean … (B, the same pool later, measured 0.79 ms)".
    pub fn line(&self) -> String {
        if self.cross {
            return format!(
                "{}: {} ({} measured {} ms)",
                letter(self.source),
                self.projection.line(),
                letter(self.against),
                crate::units::ms_prose(self.measured_mean_ns)
            );
        }
        format!(
            "{}'s own: {} ({}, the same pool later, measured {} ms)",
            letter(self.source),
            self.projection.line(),
            letter(self.against),
            crate::units::ms_prose(self.measured_mean_ns)
        )
    }
}

/// A cross projection (one side with the other's drives) is shown when it
/// moves the mean by at least this fraction.
pub const CROSS_PROJECTION_FROM: f64 = 0.05;

fn find_job<'a>(r: &'a Source, key: &str) -> Option<&'a JobReport> {
    r.jobs
        .iter()
        .find(|j| format!("{}/{}", j.name, j.op) == key)
}

/// What differs between two jobs that a projection from one onto the
/// other cannot carry: op, block size, ops in flight, rate.
fn unlike(a: &JobReport, b: &JobReport) -> Vec<String> {
    let bs = |j: &JobReport| (j.ops > 0).then(|| j.bytes / j.ops);
    let qd = |j: &JobReport| j.client.as_ref().map(|c| c.asked_in_flight);
    let rate = |j: &JobReport| j.rate.as_ref().map(|r| r.asked.round() as u64);
    let mut out = Vec::new();
    if a.op != b.op {
        out.push(format!("op {} vs {}", a.op, b.op));
    }
    if let (Some(x), Some(y)) = (bs(a), bs(b)) {
        if x != y {
            out.push(format!(
                "block size {} vs {}",
                crate::units::fmt_bytes(x),
                crate::units::fmt_bytes(y)
            ));
        }
    }
    if let (Some(x), Some(y)) = (qd(a), qd(b)) {
        if x != y {
            out.push(format!("queue depth {x} vs {y}"));
        }
    }
    if rate(a) != rate(b) {
        let r = |v: Option<u64>| v.map_or("closed loop".to_string(), |v| format!("{v}/s"));
        out.push(format!("rate {} vs {}", r(rate(a)), r(rate(b))));
    }
    out
}

/// The cross projections of `keys` between the baseline and every other
/// side (see [`Comparison::projections`]), and why pairs got none.
fn projection_checks(keys: &[String], results: &[Source]) -> (Vec<ProjectionCheck>, Vec<String>) {
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for key in keys {
        for other in 1..results.len() {
            let (Some(x), Some(y)) = (find_job(&results[0], key), find_job(&results[other], key))
            else {
                continue;
            };
            let differ = unlike(x, y);
            if !differ.is_empty() {
                left_out.push(format!(
                    "no what-if between A and {} for {}: unlike jobs ({})",
                    letter(other),
                    job_label(key),
                    differ.join(", ")
                ));
                continue;
            }
            if same_drives(&results[0], &results[other]) {
                left_out.push(format!(
                    "no drive swap between A and {}: the same pool on the same OSDs",
                    letter(other)
                ));
                continue;
            }
            for (from, to) in [(0, other), (other, 0)] {
                let (Some(a), Some(b)) =
                    (find_job(&results[from], key), find_job(&results[to], key))
                else {
                    continue;
                };
                let Some(reference) = &b.attribution else {
                    continue;
                };
                // Both from one client host: the unattributed time goes
                // with the drives (see `onto_drives`).
                let host = results[from]
                    .client_host
                    .as_deref()
                    .filter(|h| results[to].client_host.as_deref() == Some(*h));
                let p = crate::explain::whatif::onto_drives(
                    a,
                    reference,
                    format!("with {}'s drives", letter(to)),
                    format!(
                        "{} ({}): its OSD queue, OSD local, device flush and replica shares{}",
                        letter(to),
                        results[to].label,
                        if host.is_some() {
                            " and its unattributed time"
                        } else {
                            ""
                        }
                    ),
                    host,
                );
                // A swap that moves the mean by less than 5 % says only
                // that the drives are alike: left out.
                let p = p.filter(|p| {
                    (p.projected_mean_ns - p.mean_ns).abs() >= CROSS_PROJECTION_FROM * p.mean_ns
                });
                out.extend(p.map(|projection| ProjectionCheck {
                    job: key.clone(),
                    source: from,
                    against: to,
                    projection,
                    measured_mean_ns: b.latency_ns.mean,
                    cross: true,
                }));
            }
        }
    }
    left_out.dedup();
    (out, left_out)
}

/// Two sources ran on the same pool and the same OSDs: swapping their
/// drives would change nothing.
fn same_drives(a: &Source, b: &Source) -> bool {
    let ids = |s: &Source| {
        let mut v: Vec<i32> = s.osds.iter().map(|o| o.osd).collect();
        v.sort_unstable();
        v
    };
    a.name == b.name && !a.osds.is_empty() && ids(a) == ids(b)
}

impl Comparison {
    /// Adds the baseline's own projections (`report --what-if`, or shown
    /// unasked in its run) beside each later run of the same pool and like
    /// job: asked for with `compare --own-projections`.
    pub fn with_own_projections(mut self, results: &[Source]) -> Self {
        let mut keys: Vec<&String> = self.rows.iter().map(|r| &r.job).collect();
        keys.dedup();
        for key in keys {
            for other in 1..results.len() {
                if results[0].name != results[other].name {
                    continue;
                }
                let (Some(a), Some(b)) =
                    (find_job(&results[0], key), find_job(&results[other], key))
                else {
                    continue;
                };
                if !unlike(a, b).is_empty() {
                    continue;
                }
                for p in a.projections.iter().flatten() {
                    self.projections.push(ProjectionCheck {
                        job: key.clone(),
                        source: 0,
                        against: other,
                        projection: p.clone(),
                        measured_mean_ns: b.latency_ns.mean,
                        cross: false,
                    });
                }
            }
        }
        self
    }
}

/// One job's split of the mean in every source, and how each share moved
/// against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    /// The row key, `job/op`.
    pub job: String,
    /// The mean latency the shares split, ms, per source.
    pub mean_ms: Vec<Option<f64>>,
    /// One entry per part of the path.
    pub parts: Vec<MovedPart>,
}

/// One share of a [`Moved`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MovedPart {
    /// The part of the path.
    pub part: Part,
    /// Its share of the mean, ms, per source.
    pub ms: Vec<Option<f64>>,
    /// How much of the mean's difference against the baseline this share's
    /// difference is, percent, per source (null for the baseline, or when
    /// the means are equal).
    pub pct_of_diff: Vec<Option<f64>>,
}

/// One OSD of one source: its drive and what its flushes cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OsdEvidence {
    /// Which source (index into the labels).
    pub source: usize,
    /// The OSD id.
    pub osd: i32,
    /// Its drive, one line (`osd metadata` + CRUSH class).
    pub drive: Option<String>,
    /// The device-flush share of the writes it was primary for, ms.
    pub device_flush_ms: Option<f64>,
    /// BlueStore's kv sync round (device flush + WAL commit), mean, ms.
    pub kv_sync_ms: Option<f64>,
}

/// One input of a comparison: a cephbench result or an imported fio run.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// What ran where, e.g. `rados write 4 KiB QD16 on rbd-vm`.
    pub label: String,
    /// Its jobs, in cephbench's row shape.
    pub jobs: Vec<JobReport>,
    /// Notes printed under the labels.
    pub notes: Vec<String>,
    /// Its OSDs' drive evidence (`source` is set when compared).
    pub osds: Vec<OsdEvidence>,
    /// Repeated runs (a suite): every run's report of each row, named like
    /// the row. When every source has them, differences are judged between
    /// runs ([`judge_between_runs`]); else from each run's per-second samples.
    pub per_run: Vec<JobReport>,
    /// The RAM one OSD of its pool holds, bytes (measured when its OSDs ran
    /// on the client's host, else `osd_memory_target`): IOPS per GiB of one
    /// OSD's RAM divides by it. `None` for fio outputs and results without it.
    pub ram_per_osd_bytes: Option<f64>,
    /// Its pool's name (fio: its label), what the headlines call it.
    pub name: String,
    /// The OSDs' back-interface heartbeats during it, ms (see
    /// [`crate::explain::attribution::back_heartbeat_ms`]).
    pub back_heartbeat_ms: Option<f64>,
    /// The usable fraction of its pool's raw capacity (1/size, or k/(k+m)
    /// erasure-coded); `None` where the pool's settings are unknown.
    pub usable: Option<f64>,
    /// The host the client ran on, where known.
    pub client_host: Option<String>,
    /// What its job was, setting by setting (`("queue depth", "8")`), for
    /// the line that names what differs between unlike jobs; empty where
    /// unknown (fio outputs, suites: their jobs are matched by name).
    pub shape: Vec<(&'static str, String)>,
    /// What its pool and OSDs ran with, setting by setting (`("osd_op_queue",
    /// "wpq")`), for the line that names the settings two results differ
    /// in; empty where unknown.
    pub settings: Vec<(&'static str, String)>,
}

/// A result's job, setting by setting: op, block size, queue depth, rate
/// (or closed loop), object or image size.
fn job_shape(r: &BenchResult) -> Vec<(&'static str, String)> {
    use crate::units::fmt_bytes;
    let rate = r
        .jobs
        .iter()
        .find_map(|j| j.rate.as_ref())
        .map_or("closed loop".into(), |x| format!("{} ops/s", x.asked));
    match &r.workload {
        crate::result::Workload::Rados(w) => vec![
            ("op", format!("rados {}", w.mode)),
            ("block size", fmt_bytes(w.block_size)),
            ("queue depth", w.concurrent_ios.to_string()),
            ("rate", rate),
            ("object size", fmt_bytes(w.object_size)),
        ],
        crate::result::Workload::Rbd(w) => vec![
            ("op", format!("rbd {}", w.rw)),
            ("block size", fmt_bytes(w.bs)),
            ("queue depth", format!("{}x{}", w.iodepth, w.numjobs)),
            ("rate", rate),
            ("image size", fmt_bytes(w.image_size)),
        ],
    }
}

/// One line naming what differs between the sources' jobs (each setting
/// that all of them know), e.g. `unlike jobs: queue depth 8 (A), 4 (B)`;
/// none where they are alike.
pub fn unlike_jobs(sources: &[Source]) -> Option<String> {
    let differs: Vec<String> = differing(sources, |s| &s.shape)
        .into_iter()
        .map(|(what, vals)| {
            let each: Vec<String> = vals
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{v} ({})", letter(i)))
                .collect();
            format!("{what} {}", each.join(", "))
        })
        .collect();
    (!differs.is_empty()).then(|| {
        format!(
            "unlike jobs, compared anyway: {}; a difference below may be the jobs', not the \
             cluster's",
            differs.join("; ")
        )
    })
}

/// Each setting of `of` that every source knows and not all share: its
/// name and each source's value.
fn differing<'a>(
    sources: &'a [Source],
    of: impl Fn(&'a Source) -> &'a [(&'static str, String)],
) -> Vec<(&'static str, Vec<&'a String>)> {
    let Some(first) = sources.first() else {
        return Vec::new();
    };
    of(first)
        .iter()
        .filter_map(|(what, _)| {
            let vals: Vec<&String> = sources
                .iter()
                .map(|s| of(s).iter().find(|(w, _)| w == what).map(|(_, v)| v))
                .collect::<Option<_>>()?;
            vals.iter().any(|v| *v != vals[0]).then_some((*what, vals))
        })
        .collect()
}

impl From<&BenchResult> for Source {
    fn from(r: &BenchResult) -> Self {
        let (w, p) = workload_label(r);
        Source {
            label: format!("{w} on {p}"),
            jobs: r.jobs.clone(),
            notes: Vec::new(),
            osds: osd_evidence(&[r]),
            per_run: Vec::new(),
            ram_per_osd_bytes: r
                .pool
                .as_ref()
                .and_then(|p| p.ram_per_osd())
                .map(|m| m.per_osd),
            // The pool the data went to (an image's data pool).
            name: match &r.workload {
                crate::result::Workload::Rados(w) => w.pool.clone(),
                crate::result::Workload::Rbd(w) => {
                    w.data_pool.clone().unwrap_or_else(|| w.pool.clone())
                }
            },
            back_heartbeat_ms: crate::explain::attribution::back_heartbeat_ms([r]),
            usable: r.pool.as_ref().map(PoolSettings::usable_fraction),
            client_host: Some(r.cluster.client_host.clone()).filter(|h| !h.is_empty()),
            shape: job_shape(r),
            settings: settings_of(r),
        }
    }
}

/// The settings of a result's pool, its OSDs and its client host that
/// change results, each as one value; a setting the OSDs do not share reads
/// `mixed (mclock_scheduler: osd.2; wpq: osd.0, osd.1)`. Settings that were
/// not read are left out.
fn settings_of(r: &BenchResult) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(p) = &r.pool {
        out.extend(pool_settings(p));
    }
    if let crate::result::Workload::Rbd(w) = &r.workload {
        out.push(("rbd_cache", if w.rbd_cache { "on" } else { "off" }.into()));
    }
    let c = &r.cluster;
    out.extend(c.client_kernel.clone().map(|k| ("client kernel", k)));
    out.extend(
        c.client_cpu_governor
            .clone()
            .map(|g| ("client CPU governor", g)),
    );
    out
}

/// [`settings_of`] for the pool and its OSDs.
fn pool_settings(p: &PoolSettings) -> Vec<(&'static str, String)> {
    type Of = fn(&crate::result::OsdSettings) -> Option<String>;
    let per_osd: [(&'static str, Of); 6] = [
        ("release", |o| o.version.clone()),
        ("osd_op_queue", |o| o.op_queue.clone()),
        ("osd_mclock_profile", |o| {
            o.mclock_profile
                .clone()
                .filter(|_| o.op_queue.as_deref() == Some("mclock_scheduler"))
        }),
        ("kernel", |o| o.kernel.clone()),
        ("objectstore", |o| o.objectstore.clone()),
        ("min_alloc_size", |o| {
            o.min_alloc_size.map(|b| b.to_string())
        }),
    ];
    let mut out = vec![
        ("size", p.size.to_string()),
        ("pg_num", p.pg_num.to_string()),
    ];
    out.extend(p.autoscale_mode.clone().map(|m| ("pg_autoscale_mode", m)));
    out.extend(p.balancer.clone().map(|b| ("balancer", b)));
    // A result made before flags were recorded has none to compare.
    if p.balancer.is_some() || p.autoscale_mode.is_some() {
        let flags = if p.flags.is_empty() {
            "none".into()
        } else {
            p.flags.join(",")
        };
        out.push(("flags", flags));
    }
    for (what, of) in per_osd {
        let each = crate::result::OsdSettings::grouped(&p.osd_settings, of);
        match each.as_slice() {
            [] => {}
            [(v, _)] => out.push((what, v.clone())),
            _ => {
                let parts: Vec<String> = each
                    .iter()
                    .map(|(v, osds)| format!("{v}: {}", crate::units::osd_list(osds)))
                    .collect();
                out.push((what, format!("mixed ({})", parts.join("; "))));
            }
        }
    }
    out
}

/// One line naming the settings the sources ran with differently (each
/// that all of them know), e.g. `A ran with osd_op_queue wpq, B with
/// mclock_scheduler: the comparison mixes them`; none where alike.
pub fn unlike_settings(sources: &[Source]) -> Option<String> {
    let differs: Vec<String> = differing(sources, |s| &s.settings)
        .into_iter()
        .map(|(what, vals)| {
            let each: Vec<String> = vals
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, v)| format!("{} with {v}", letter(i)))
                .collect();
            format!("A ran with {what} {}, {}", vals[0], each.join(", "))
        })
        .collect();
    (!differs.is_empty()).then(|| format!("{}: the comparison mixes them", differs.join("; ")))
}

/// How a row key `job/op` reads: the job alone where its name already ends
/// in the op (`write/write` is `write`, `4k randwrite QD1 fsync flush/flush`
/// is `4k randwrite QD1 fsync flush`).
pub fn job_label(key: &str) -> String {
    match key.rsplit_once('/') {
        Some((name, op)) if name == op || name.ends_with(&format!(" {op}")) => name.to_string(),
        _ => key.to_string(),
    }
}

/// What each source is called: the pools' names where they differ and are
/// short, else the letters.
fn source_names(sources: &[Source]) -> Vec<String> {
    let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
    let distinct = names
        .iter()
        .enumerate()
        .all(|(i, n)| !n.is_empty() && n.chars().count() <= 40 && !names[..i].contains(n));
    (0..sources.len())
        .map(|i| {
            if distinct {
                names[i].to_string()
            } else {
                letter(i)
            }
        })
        .collect()
}

/// The comparison row of IOPS per GiB of one OSD's RAM.
pub const IOPS_PER_GIB: &str = "IOPS/GiB";

/// The figure of the comparison's capacity row: each source's usable
/// fraction of its pool's raw capacity, percent.
pub const USABLE: &str = "usable %";

/// The row key of the capacity row (a pool's, not a job's).
pub const USABLE_KEY: &str = "pool";

/// The capacity row: each source's usable fraction of raw (percent) and
/// its Diff against the first, where some source's pool is known and the
/// sources are different pools (a pool compared with itself over time
/// gets none). No verdict: capacity is exact.
fn usable_row(results: &[Source]) -> Option<Row> {
    let known = results.iter().any(|s| s.usable.is_some());
    let differ = results.iter().any(|s| s.name != results[0].name)
        || results.iter().any(|s| s.usable != results[0].usable);
    if !known || !differ {
        return None;
    }
    let values: Vec<Option<f64>> = results
        .iter()
        .map(|s| s.usable.map(|u| u * 100.0))
        .collect();
    Some(Row {
        job: USABLE_KEY.into(),
        figure: USABLE,
        diff_pct: values
            .iter()
            .map(|v| match (values[0], v) {
                (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b * 100.0),
                _ => None,
            })
            .collect(),
        significant: vec![None; values.len()],
        values,
    })
}

/// The OSDs of `runs` (one result, or a suite's runs) with their drive
/// evidence, each figure the mean over the runs that have it.
pub fn osd_evidence(runs: &[&BenchResult]) -> Vec<OsdEvidence> {
    let mut ids: Vec<i32> = runs
        .iter()
        .flat_map(|r| r.osds.iter().map(|o| o.osd))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    ids.into_iter()
        .map(|id| {
            let reps: Vec<_> = runs
                .iter()
                .filter_map(|r| r.osds.iter().find(|o| o.osd == id))
                .collect();
            let flush = reps
                .iter()
                .filter_map(|o| {
                    let a = o
                        .client
                        .iter()
                        .find(|c| c.op == "write")?
                        .attribution
                        .as_ref()?;
                    a.shares
                        .iter()
                        .find(|s| s.part == Part::DeviceFlush)
                        .map(|s| s.ns / 1e6)
                })
                .collect();
            let kv = reps
                .iter()
                .filter_map(|o| o.counters.as_ref()?.kv_sync_lat?.mean_ns.map(|m| m / 1e6))
                .collect();
            OsdEvidence {
                source: 0,
                osd: id,
                drive: reps
                    .iter()
                    .find_map(|o| o.device.as_ref().map(|d| d.summary())),
                device_flush_ms: mean(flush),
                kv_sync_ms: mean(kv),
            }
        })
        .collect()
}

/// How each job's shares moved between `sources` (the first is the baseline).
fn moved(keys: &[String], sources: &[Source]) -> Vec<Moved> {
    let mut out = Vec::new();
    for key in keys {
        let atts: Vec<Option<&crate::result::Attribution>> = sources
            .iter()
            .map(|s| {
                s.jobs
                    .iter()
                    .find(|j| format!("{}/{}", j.name, j.op) == *key)
                    .and_then(|j| j.attribution.as_ref())
            })
            .collect();
        if atts[0].is_none() || atts.iter().skip(1).all(|a| a.is_none()) {
            continue;
        }
        let mean_ms: Vec<Option<f64>> = atts.iter().map(|a| a.map(|a| a.mean_ns / 1e6)).collect();
        let mut parts = Vec::new();
        for part in Part::ALL {
            // A side without this share did not measure it (an erasure-coded
            // pool's replication is one share, unsplit): no figure, not 0.
            // Unattributed is the rest of the mean: absent, it is 0.
            let ms: Vec<Option<f64>> = atts
                .iter()
                .map(|a| {
                    let a = a.filter(|a| {
                        part == Part::Unattributed || a.shares.iter().any(|s| s.part == part)
                    })?;
                    Some(
                        a.shares
                            .iter()
                            .filter(|s| s.part == part)
                            .map(|s| s.ns / 1e6)
                            // From +0 (an empty sum is -0, printed "-0.00").
                            .fold(0.0, |a, b| a + b),
                    )
                })
                .collect();
            if ms.iter().all(|m| m.map_or(true, |m| m == 0.0)) {
                continue;
            }
            let pct_of_diff = (0..ms.len())
                .map(|i| {
                    let (Some(m0), Some(mi), Some(p0), Some(pi)) =
                        (mean_ms[0], mean_ms[i], ms[0], ms[i])
                    else {
                        return None;
                    };
                    (i > 0 && (mi - m0).abs() > 1e-9).then(|| (pi - p0) / (mi - m0) * 100.0)
                })
                .collect();
            parts.push(MovedPart {
                part,
                ms,
                pct_of_diff,
            });
        }
        out.push(Moved {
            job: key.clone(),
            mean_ms,
            parts,
        });
    }
    out
}

/// A difference of the mean latency smaller than this part of the
/// baseline's mean gets no "why" headline: its shares are noise.
pub const HEADLINE_MIN_PCT: f64 = 3.0;

/// Whether source `i`'s difference of `m`'s mean from the baseline's is
/// large enough to split: at least 0.05 ms and [`HEADLINE_MIN_PCT`] of the
/// baseline's mean, and not called noise by the mean-latency row's verdict.
pub fn explainable(c: &Comparison, m: &Moved, i: usize) -> bool {
    let (Some(m0), Some(mi)) = (m.mean_ms[0], m.mean_ms.get(i).copied().flatten()) else {
        return false;
    };
    let diff = (mi - m0).abs();
    let noise = c
        .rows
        .iter()
        .find(|r| r.job == m.job && r.figure == "mean lat ms")
        .and_then(|r| r.significant.get(i).copied().flatten());
    diff >= 0.05 && diff >= HEADLINE_MIN_PCT / 100.0 * m0.abs() && noise != Some(false)
}

/// The "% of diff" cell of a share in a where-the-mean-went table: blank
/// where the difference is not [`explainable`], and never beyond ±100 %
/// (a share that moved more than the mean did reads `>100%`).
pub fn pct_of_diff_cell(c: &Comparison, m: &Moved, pct: Option<f64>, i: usize) -> String {
    match pct {
        Some(p) if explainable(c, m, i) => {
            if p > 100.0 {
                ">100%".into()
            } else if p < -100.0 {
                "<-100%".into()
            } else {
                fmt_pct(p)
            }
        }
        _ => String::new(),
    }
}

/// One line per source other than the baseline and per job: which share
/// carried most of the difference, and, for the device flush, the OSD
/// whose drive shows it; for the cluster network, whether the heartbeats
/// carry the cable. Only when that share carries at least half of a
/// difference of at least 0.05 ms and [`HEADLINE_MIN_PCT`] of the mean that
/// the noise verdict does not call noise. Sources are named by their pools.
pub fn headlines(c: &Comparison) -> Vec<String> {
    c.moved
        .iter()
        .flat_map(|m| (1..m.mean_ms.len()).filter_map(move |i| headline(c, m, i)))
        .collect()
}

/// The headline of source `i` against the baseline for one job, if any
/// (see [`headlines`]).
fn headline(c: &Comparison, m: &Moved, i: usize) -> Option<String> {
    let (Some(m0), Some(mi)) = (m.mean_ms[0], m.mean_ms[i]) else {
        return None;
    };
    let diff = mi - m0;
    if !explainable(c, m, i) {
        return None;
    }
    let name = |i: usize| c.names.get(i).cloned().unwrap_or_else(|| letter(i));
    let (n0, ni) = (name(0), name(i));
    let unsplit = unsplit_shares(m, i, &n0, &ni);
    let top = m
        .parts
        .iter()
        .filter(|p| p.part != Part::Unattributed)
        .filter_map(|p| p.pct_of_diff[i].map(|pct| (p, pct)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|t| t.1 >= 50.0);
    let Some(top) = top else {
        // No share measured on both sides carries half of it.
        return unsplit.map(|u| {
            format!(
                "{}: {ni} is {:.2} ms {} than {n0} per op ({:+.1}%); no share measured on \
                 both sides carries half of that; {u}",
                job_label(&m.job),
                diff.abs(),
                if diff > 0.0 { "slower" } else { "faster" },
                diff / m0 * 100.0,
            )
        });
    };
    let (s0, si) = (top.0.ms[0].unwrap_or(0.0), top.0.ms[i].unwrap_or(0.0));
    let slower = if diff > 0.0 { i } else { 0 };
    // The cluster-network share names the cable only when the
    // heartbeats on the back network carry it, or when it was held
    // to the back network's own echo (the messengers split off).
    let held = m
        .parts
        .iter()
        .any(|p| p.part == Part::Messengers && p.ms[slower].is_some());
    let cable = (top.0.part == Part::ClusterNetwork && !held).then(|| {
        crate::explain::attribution::CableEvidence::judge(
            top.0.ms[slower].unwrap_or(0.0),
            c.back_heartbeat_ms.get(slower).copied().flatten(),
        )
    });
    let part = match cable {
        Some(crate::explain::attribution::CableEvidence::Carries(_)) | None => {
            top.0.part.label().to_string()
        }
        Some(_) => {
            "wait for the replicas beyond their own work (the cluster-network share)".to_string()
        }
    };
    let what = if top.1 > 100.0 {
        // A share that moved more than the mean did: others moved
        // the other way; no percentage over 100.
        format!(
            "the {part} alone moved {:+.2} ms ({s0:.2} -> {si:.2} ms), more than the \
             mean did (other shares moved the other way)",
            si - s0
        )
    } else {
        format!(
            "{:.0}% of that is the {part} ({s0:.2} -> {si:.2} ms)",
            top.1
        )
    };
    let mut line = format!(
        "{}: {ni} is {:.2} ms {} than {n0} per op ({:+.1}%); {what}",
        job_label(&m.job),
        diff.abs(),
        if diff > 0.0 { "slower" } else { "faster" },
        diff / m0 * 100.0,
    );
    if let Some(cable) = cable {
        line.push_str(&format!(": on {}, {}", name(slower), cable.cause()));
    } else if held && top.0.part == Part::ClusterNetwork {
        line.push_str(&format!(
            ": on {}, the back network itself (the share is held to this host's fastest \
             echo to the replicas' cluster addresses; the OSDs' messengers are a share of \
             their own)",
            name(slower)
        ));
    }
    if top.0.part == Part::DeviceFlush {
        line.push_str(&slowest_flush(c, slower, &name(slower)));
    }
    if let Some(u) = &unsplit {
        line.push_str(&format!("; {u}"));
    }
    Some(line)
}

/// Shares one side measured and the other could not split out
/// (replicated against erasure-coded: cluster network, OSD messengers and
/// replica against one replication share), as the headline words them: no
/// move of theirs is a headline; the line says what was not compared.
fn unsplit_shares(m: &Moved, i: usize, n0: &str, ni: &str) -> Option<String> {
    let one_side = |a: usize, b: usize| -> Vec<&str> {
        m.parts
            .iter()
            .filter(|p| p.part != Part::Unattributed)
            .filter(|p| p.ms[a].is_some() && p.ms[b].is_none())
            .map(|p| p.part.label())
            .collect()
    };
    let (only0, onlyi) = (one_side(0, i), one_side(i, 0));
    match (only0.is_empty(), onlyi.is_empty()) {
        (true, true) => None,
        (false, true) => Some(format!(
            "{ni} could not split out {} ({n0}'s shares, not compared)",
            only0.join(", ")
        )),
        (true, false) => Some(format!(
            "{n0} could not split out {} ({ni}'s shares, not compared)",
            onlyi.join(", ")
        )),
        (false, false) => Some(format!(
            "{n0}'s {} against {ni}'s {}: each side's split of that time differs, not \
             compared",
            only0.join(", "),
            onlyi.join(", ")
        )),
    }
}

/// For a device-flush headline: the OSD of source `src` (named `name`)
/// that waits longest for its drive's flush, and the drive; empty when no
/// OSD of it has a flush share.
fn slowest_flush(c: &Comparison, src: usize, name: &str) -> String {
    c.osds
        .iter()
        .filter(|o| o.source == src)
        .filter_map(|o| o.device_flush_ms.map(|f| (o, f)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(o, f)| {
            format!(
                ": {name}'s osd.{}{} waits {f:.2} ms per write for its device flush",
                o.osd,
                o.drive
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

/// How noise is judged, as printed.
pub const METHOD: &str =
    "difference counted as real (*) when larger than 2 x sqrt(se_a^2 + se_b^2), \
se = standard error of the per-second samples of the measured window; percentiles get no verdict";

#[derive(Clone, Copy, PartialEq)]
enum Fig {
    Iops,
    MibS,
    Mean,
    P50,
    P99,
    P999,
}

/// Every figure of a comparison: bandwidth in MiB/s (2^20 bytes/s) for
/// results and suites alike, the unit of runs, progress and suites' tables.
const FIGURES: [(Fig, &str); 6] = [
    (Fig::Iops, "IOPS"),
    (Fig::MibS, "MiB/s"),
    (Fig::Mean, "mean lat ms"),
    (Fig::P50, "p50 lat ms"),
    (Fig::P99, "p99 lat ms"),
    (Fig::P999, "p99.9 lat ms"),
];

/// The figures of a comparison.
fn figures() -> impl Iterator<Item = (Fig, &'static str)> {
    FIGURES.into_iter()
}

fn value(j: &JobReport, f: Fig) -> f64 {
    let l = &j.latency_ns;
    match f {
        Fig::Iops => j.iops,
        Fig::MibS => j.bytes_per_sec / f64::from(1u32 << 20),
        Fig::Mean => l.mean / 1e6,
        Fig::P50 => l.p50 as f64 / 1e6,
        Fig::P99 => l.p99 as f64 / 1e6,
        Fig::P999 => l.p99_9 as f64 / 1e6,
    }
}

/// Mean and standard error of a figure from the per-second samples: rates
/// are normalised by each sample's interval, and the short last interval
/// (the job ending between two ticks) is left out.
fn noise(j: &JobReport, f: Fig) -> Option<(f64, f64)> {
    let mut prev_t = 0.0;
    let mut samples = Vec::new();
    let shortest = crate::progress::shortest_counted(&j.timeline);
    for s in &j.timeline {
        let dt = s.t_s - prev_t;
        prev_t = s.t_s;
        if s.ramp || s.ops == 0 || dt < shortest {
            continue;
        }
        samples.push(match f {
            Fig::Iops => s.ops as f64 / dt,
            Fig::MibS => s.bytes as f64 / f64::from(1u32 << 20) / dt,
            Fig::Mean => s.mean_latency_ns / 1e6,
            _ => return None,
        });
    }
    let n = samples.len();
    if n < 3 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, (var / n as f64).sqrt()))
}

/// Builds the comparison of `results` (the first is the baseline).
pub fn compare(results: &[BenchResult]) -> Comparison {
    let sources: Vec<Source> = results.iter().map(Source::from).collect();
    compare_sources(&sources)
}

/// Builds the comparison of `sources` (the first is the baseline).
pub fn compare_sources(results: &[Source]) -> Comparison {
    let labels = results.iter().map(|s| s.label.clone()).collect();
    // What differs between unlike jobs: the first line under the labels.
    let mut notes: Vec<String> = unlike_jobs(results).into_iter().collect();
    notes.extend(unlike_settings(results));
    for s in results {
        for n in &s.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let mut keys: Vec<String> = Vec::new();
    for r in results {
        for j in &r.jobs {
            let k = format!("{}/{}", j.name, j.op);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let find = |r: &Source, key: &str| -> Option<JobReport> {
        r.jobs
            .iter()
            .find(|j| format!("{}/{}", j.name, j.op) == key)
            .cloned()
    };
    let mut rows: Vec<Row> = usable_row(results).into_iter().collect();
    for key in &keys {
        let jobs: Vec<Option<JobReport>> = results.iter().map(|r| find(r, key)).collect();
        rows.extend(figures().map(|(fig, name)| figure_row(key, name, fig, &jobs)));
        rows.extend(ram_row(key, &jobs, results));
    }
    let osds = results
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.osds.iter().map(move |o| OsdEvidence {
                source: i,
                ..o.clone()
            })
        })
        .collect();
    let (projections, projections_left_out) = projection_checks(&keys, results);
    let mut c = Comparison {
        labels,
        moved: moved(&keys, results),
        rows,
        method: METHOD,
        notes,
        osds,
        names: source_names(results),
        back_heartbeat_ms: results.iter().map(|s| s.back_heartbeat_ms).collect(),
        projections,
        projections_left_out,
    };
    if !results.is_empty() && results.iter().all(|s| !s.per_run.is_empty()) {
        let per_run = |i: usize, key: &str| -> Vec<JobReport> {
            results[i]
                .per_run
                .iter()
                .filter(|j| format!("{}/{}", j.name, j.op) == key)
                .cloned()
                .collect()
        };
        judge_between_runs(&mut c, &per_run);
    }
    c
}

/// Each value's difference from the first, in % of it (`None` where
/// either is missing or the first is 0).
fn diff_pcts(values: &[Option<f64>]) -> Vec<Option<f64>> {
    values
        .iter()
        .map(|v| match (values[0], v) {
            (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b * 100.0),
            _ => None,
        })
        .collect()
}

/// The row of figure `fig` (labelled `name`) for job `key` across the
/// sources' `jobs`, each difference judged against the per-second noise.
fn figure_row(key: &str, name: &'static str, fig: Fig, jobs: &[Option<JobReport>]) -> Row {
    let values: Vec<Option<f64>> = jobs
        .iter()
        .map(|j| j.as_ref().map(|j| value(j, fig)))
        .collect();
    let base = values[0];
    let base_noise = jobs[0].as_ref().and_then(|j| noise(j, fig));
    let significant = jobs
        .iter()
        .map(|j| {
            let (_, se_b) = noise(j.as_ref()?, fig)?;
            let (_, se_a) = base_noise?;
            let (a, b) = (base?, value(j.as_ref()?, fig));
            Some((b - a).abs() > 2.0 * (se_a * se_a + se_b * se_b).sqrt())
        })
        .collect();
    Row {
        job: key.to_string(),
        figure: name,
        diff_pct: diff_pcts(&values),
        values,
        significant,
    }
}

/// IOPS per GiB of one OSD's RAM, where every source knows its OSDs' RAM
/// (no verdict: it moves with the IOPS row's); none for flushes, which
/// move no data of their own.
fn ram_row(key: &str, jobs: &[Option<JobReport>], results: &[Source]) -> Option<Row> {
    if !results.iter().all(|r| r.ram_per_osd_bytes.is_some()) || key.ends_with("/flush") {
        return None;
    }
    let gib = f64::from(1u32 << 30);
    let values: Vec<Option<f64>> = jobs
        .iter()
        .zip(results)
        .map(|(j, r)| Some(j.as_ref()?.iops / (r.ram_per_osd_bytes? / gib)))
        .collect();
    Some(Row {
        job: key.to_string(),
        figure: IOPS_PER_GIB,
        significant: vec![None; values.len()],
        diff_pct: diff_pcts(&values),
        values,
    })
}

/// How noise is judged between repeated runs (suites on several pools), as printed.
pub const METHOD_BETWEEN_RUNS: &str =
    "difference counted as real (*) by Welch's t-test at 95% over the logarithms of the per-run \
figures (n runs a side, the pools alternated run by run: A B A B); the table shows medians; \
percentiles get no verdict";

/// What a comparison of single runs cannot tell, as printed.
pub const ONE_RUN_NOTE: &str = "one run a side cannot tell a difference from run-to-run noise \
(the drift between runs is larger than one run's per-second spread): no verdict (blank) where a \
side has a single run; repeat with --runs 3 or more";

/// Two-sided 95% critical values of Student's t for 1..=30 degrees of
/// freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95% critical value of Student's t at `df` degrees of
/// freedom (fractional, as Welch's are): linear between the table's
/// whole degrees, 1.96 above 30.
fn t95(df: f64) -> f64 {
    if !df.is_finite() || df >= 30.0 {
        return 1.96;
    }
    let df = df.max(1.0);
    let lo = df.floor() as usize;
    let frac = df - lo as f64;
    let hi = if lo >= 30 { 1.96 } else { T95[lo] };
    T95[lo - 1] + (hi - T95[lo - 1]) * frac
}

/// Welch's t-test at 95% on the logarithms of the values (a rate's or a
/// latency's spread grows with it, so the ratio is what varies; plain
/// values when one is not above 0): whether `a` and `b` differ by more than
/// their run-to-run spread explains; `None` with fewer than 2 values a side.
pub fn welch_differs(a: &[f64], b: &[f64]) -> Option<bool> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let log = a.iter().chain(b).all(|x| *x > 0.0 && x.is_finite());
    let tr = |v: &[f64]| -> Vec<f64> {
        if log {
            v.iter().map(|x| x.ln()).collect()
        } else {
            v.to_vec()
        }
    };
    let mv = |v: &[f64]| {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        (
            m,
            v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0),
            n,
        )
    };
    let ((ma, va, na), (mb, vb, nb)) = (mv(&tr(a)), mv(&tr(b)));
    let (qa, qb) = (va / na, vb / nb);
    let se = (qa + qb).sqrt();
    if se == 0.0 {
        return Some(ma != mb);
    }
    // Welch–Satterthwaite degrees of freedom.
    let df = (qa + qb).powi(2) / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    Some((mb - ma).abs() > t95(df) * se)
}

/// Re-judges the IOPS, MiB/s and mean-latency rows of `c` from repeated
/// runs: `per_run(i, key)` gives source `i`'s run-by-run reports of the
/// row key `job/op`. A side with one run gets no verdict, and the
/// comparison says why.
pub fn judge_between_runs(c: &mut Comparison, per_run: &dyn Fn(usize, &str) -> Vec<JobReport>) {
    let mut single = false;
    for row in &mut c.rows {
        let Some(fig) = FIGURES
            .iter()
            .find(|(_, n)| *n == row.figure)
            .map(|(f, _)| *f)
        else {
            continue;
        };
        if !matches!(fig, Fig::Iops | Fig::MibS | Fig::Mean) {
            continue;
        }
        let vals: Vec<Vec<f64>> = (0..row.values.len())
            .map(|i| per_run(i, &row.job).iter().map(|j| value(j, fig)).collect())
            .collect();
        for (i, v) in vals.iter().enumerate() {
            row.significant[i] = welch_differs(&vals[0], v);
            single |= row.values[i].is_some() && v.len() < 2;
        }
    }
    c.method = METHOD_BETWEEN_RUNS;
    if single && !c.notes.iter().any(|n| n == ONE_RUN_NOTE) {
        c.notes.push(ONE_RUN_NOTE.to_string());
    }
}

/// The figures `compare --fail-if-slower` judges, and whether higher is better.
const GATED: [(&str, bool); 3] = [("IOPS", true), ("MiB/s", true), ("mean lat ms", false)];

/// The regressions beyond `pct` percent: every IOPS, MiB/s or mean-latency
/// figure of a file other than the baseline that is worse than the
/// baseline's by more than `pct` % (lower throughput, higher latency), unless
/// the noise verdict says the difference is within the noise. One line each.
pub fn regressions(c: &Comparison, pct: f64) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        let Some(&(_, higher_better)) = GATED.iter().find(|(f, _)| *f == r.figure) else {
            continue;
        };
        for i in 1..r.diff_pct.len() {
            let Some(d) = r.diff_pct[i] else { continue };
            let worse = if higher_better { -d } else { d };
            if worse > pct && r.significant[i] != Some(false) {
                out.push(format!(
                    "{} {}: {} -> {} ({:+.1}%, worse than the {pct}% threshold) in {}",
                    r.job,
                    r.figure,
                    fmt_value(r.values[0]),
                    fmt_value(r.values[i]),
                    d,
                    c.labels[i]
                ));
            }
        }
    }
    out
}

/// Cell `i` of row `r` as the tables print it: the capacity row in whole
/// percent (`67 %`), the others by [`fmt_value`].
pub fn fmt_cell(r: &Row, i: usize) -> String {
    match r.values[i] {
        Some(v) if r.figure == USABLE => format!("{v:.0} %"),
        v => fmt_value(v),
    }
}

/// A figure as the tables print it (`-` when absent).
pub fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// A "% of diff" cell: whole percent, never `-0%`.
pub fn fmt_pct(p: f64) -> String {
    let r = p.round();
    format!("{}%", if r == 0.0 { 0.0 } else { r })
}

/// A Diff % cell: `+12.3% *` (significant), `~` (within the noise), or
/// bare (no noise estimate).
pub fn fmt_diff(d: Option<f64>, sig: Option<bool>) -> String {
    match d {
        None => "-".into(),
        Some(d) => format!(
            "{d:+.1}%{}",
            match sig {
                Some(true) => " *",
                Some(false) => " ~",
                None => "",
            }
        ),
    }
}

/// The letter naming source `i` (A, B, ...).
pub fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Sample;
    use crate::stats::LatencySummary;

    fn job(iops_per_sec: &[u64], mean_ms: f64) -> JobReport {
        let ops: u64 = iops_per_sec.iter().sum();
        let secs = iops_per_sec.len() as f64;
        JobReport {
            client: None,
            changes: None,
            projections: None,
            per_second: None,
            end_flush: None,
            name: "write".into(),
            op: "write".into(),
            ops,
            errors: 0,
            bytes: ops * 4096,
            elapsed_s: secs,
            iops: ops as f64 / secs,
            bytes_per_sec: ops as f64 * 4096.0 / secs,
            latency_ns: LatencySummary {
                mean: mean_ms * 1e6,
                p99: (mean_ms * 3e6) as u64,
                ..Default::default()
            },
            stop_reason: "duration".into(),
            verify_mismatches: None,
            short_reads: 0,
            first_error: None,
            errors_by_errno: Default::default(),
            longest_gap_s: 0.0,
            slow_ops: 0,
            slow_op_s: 1.0,
            timeline: iops_per_sec
                .iter()
                .enumerate()
                .map(|(i, o)| Sample {
                    t_s: i as f64 + 1.0,
                    ramp: false,
                    ops: *o,
                    bytes: o * 4096,
                    mean_latency_ns: mean_ms * 1e6,
                    in_flight: 16,
                    errors: 0,
                    ..Default::default()
                })
                .collect(),
            histogram: None,
            attribution: None,
            service_latency_ns: None,
            rate: None,
        }
    }

    fn result_with(j: JobReport) -> BenchResult {
        crate::result::test_result("p", vec![j])
    }

    /// A QD8 run against a QD4 run with another block size: one line at the
    /// top names what differs; alike runs get none.
    #[test]
    fn unlike_jobs_are_named_in_one_line() {
        let a = result_with(job(&[1000, 1000, 1000], 1.0));
        let mut b = a.clone();
        let same = compare(&[a.clone(), b.clone()]);
        assert!(
            !same.notes.iter().any(|n| n.contains("unlike")),
            "{:?}",
            same.notes
        );
        if let crate::result::Workload::Rados(w) = &mut b.workload {
            w.concurrent_ios = 4;
            w.block_size = 16 << 10;
        }
        let c = compare(&[a, b]);
        assert_eq!(
            c.notes.first().map(String::as_str),
            Some(
                "unlike jobs, compared anyway: block size 4 KiB (A), 16 KiB (B); queue depth \
                 16 (A), 4 (B); a difference below may be the jobs', not the cluster's"
            ),
            "{:?}",
            c.notes
        );
        assert_eq!(c.notes.iter().filter(|n| n.contains("unlike")).count(), 1);
    }

    /// Two results whose OSDs ran different schedulers (and one of them a
    /// mixed release): one line names each difference; alike settings, or
    /// settings only one side recorded, say nothing.
    #[test]
    fn unlike_settings_are_named_in_one_line() {
        use crate::result::OsdSettings;
        let osd = |osd, queue: &str, version: &str| OsdSettings {
            osd,
            version: Some(version.into()),
            op_queue: Some(queue.into()),
            mclock_profile: Some("high_client_ops".into()),
            ..OsdSettings::default()
        };
        let with = |osds: Vec<OsdSettings>| {
            let mut r = result_with(job(&[1000, 1000, 1000], 1.0));
            let mut p = crate::result::test_pool("p", 3, None);
            p.osd_settings = osds;
            r.pool = Some(p);
            r
        };
        let a = with((0..3).map(|o| osd(o, "wpq", "16.2.15")).collect());
        let same = compare(&[a.clone(), a.clone()]);
        assert!(
            !same.notes.iter().any(|n| n.contains("mixes")),
            "{:?}",
            same.notes
        );
        let b = with(vec![
            osd(0, "mclock_scheduler", "16.2.15"),
            osd(1, "mclock_scheduler", "16.2.15"),
            osd(2, "mclock_scheduler", "18.2.7"),
        ]);
        let c = compare(&[a.clone(), b]);
        let lines: Vec<&String> = c.notes.iter().filter(|n| n.contains("mixes")).collect();
        assert_eq!(
            lines,
            [
                "A ran with release 16.2.15, B with mixed (16.2.15: osd.0, osd.1; 18.2.7: \
                 osd.2); A ran with osd_op_queue wpq, B with mclock_scheduler: the comparison \
                 mixes them"
            ],
            "{:?}",
            c.notes
        );
        // The mClock profile only where mClock ran; nothing from a result
        // that did not record its OSDs.
        let none = compare(&[a, with(Vec::new())]);
        assert!(
            !none.notes.iter().any(|n| n.contains("mixes")),
            "{:?}",
            none.notes
        );
        // The cluster's flags and the client host's kernel too.
        let (mut x, mut y) = (with(Vec::new()), with(Vec::new()));
        for (r, flags, kernel) in [(&mut x, vec![], "6.18.4"), (&mut y, vec!["noout"], "6.1.0")] {
            let p = r.pool.as_mut().unwrap();
            p.balancer = Some("upmap, active".into());
            p.flags = flags.into_iter().map(String::from).collect();
            r.cluster.client_kernel = Some(kernel.into());
        }
        let c = compare(&[x, y]);
        let lines: Vec<&String> = c.notes.iter().filter(|n| n.contains("mixes")).collect();
        assert_eq!(
            lines,
            [
                "A ran with flags none, B with noout; A ran with client kernel 6.18.4, B with \
                 6.1.0: the comparison mixes them"
            ]
        );
    }

    #[test]
    fn diff_and_noise_verdicts() {
        let a = job(&[1000, 1010, 990, 1005, 995], 16.0);
        let b_same = job(&[1001, 1012, 989, 1004, 996], 16.0);
        let b_faster = job(&[2000, 2010, 1990, 2005, 1995], 8.0);
        let noisy = job(&[500, 1500, 700, 1400, 900], 16.0);
        for (b, sig, pct) in [(b_same, false, 0.04), (b_faster, true, 100.0)] {
            let ra = result_with(a.clone());
            let rb = result_with(b);
            let c = compare(&[ra, rb]);
            let iops = c.rows.iter().find(|r| r.figure == "IOPS").unwrap();
            assert!((iops.diff_pct[1].unwrap() - pct).abs() < 0.5, "{iops:?}");
            assert_eq!(iops.significant[1], Some(sig), "{iops:?}");
            let p99 = c.rows.iter().find(|r| r.figure == "p99 lat ms").unwrap();
            assert_eq!(p99.significant[1], None, "percentiles get no verdict");
        }
        let c = compare(&[
            result_with(noisy),
            result_with(job(&[1100, 1100, 1100, 1100, 1100], 16.0)),
        ]);
        let iops = c.rows.iter().find(|r| r.figure == "IOPS").unwrap();
        assert_eq!(
            iops.significant[1],
            Some(false),
            "+10% inside a noisy baseline: {iops:?}"
        );
    }

    /// IOPS per GiB of one OSD's RAM: measured RAM where known, the
    /// targets otherwise; no row unless every source knows it.
    #[test]
    fn iops_per_gib_row_over_the_ram_one_osd_holds() {
        use crate::result::{OsdMemory, PoolSettings};
        let gib = 1u64 << 30;
        let pool = |measured: Option<u64>| PoolSettings {
            name: "p".into(),
            id: 1,
            size: 3,
            min_size: 2,
            pg_num: 32,
            crush_rule: "r".into(),
            device_classes: vec![],
            osds: vec![0, 1, 2, 3],
            osd_memory_target: (0..4)
                .map(|osd| OsdMemory {
                    osd,
                    bytes: 8 * gib,
                    rss_bytes: None,
                    source: None,
                })
                .collect(),
            memory_held_bytes: Some(32 * gib),
            memory_measured_bytes: measured,
            memory_not_measured: None,
            osd_settings: Vec::new(),
            autoscale_mode: None,
            flags: Vec::new(),
            balancer: None,
            erasure: None,
        };
        let mut a = result_with(job(&[9000; 4], 1.0));
        a.pool = Some(pool(None));
        let mut b = result_with(job(&[1000; 4], 1.0));
        b.pool = Some(pool(Some(2 * gib)));
        let c = compare(&[a.clone(), b]);
        let row = c.rows.iter().find(|r| r.figure == IOPS_PER_GIB).unwrap();
        // 9,000 IOPS over one OSD's 8 GiB target; 1,000 over 2 GiB / 4 measured.
        assert_eq!(row.values, vec![Some(1125.0), Some(2000.0)]);
        assert!((row.diff_pct[1].unwrap() - 77.777).abs() < 0.01);
        assert_eq!(row.significant, vec![None, None]);
        let c = compare(&[a, result_with(job(&[1000; 4], 1.0))]);
        assert!(c.rows.iter().all(|r| r.figure != IOPS_PER_GIB));
    }

    /// 3 copies against 2+1: the capacity row first, 33 % and 67 % usable
    /// (+100 %), no verdict; none for one pool compared with itself.
    #[test]
    fn capacity_row_sets_each_pool_usable_fraction_beside_its_figures() {
        let pool = crate::result::test_pool;
        let mut a = crate::result::test_result("rep3", vec![job(&[1000; 4], 1.0)]);
        a.pool = Some(pool("rep3", 3, None));
        let mut b = crate::result::test_result("ec21", vec![job(&[800; 4], 1.2)]);
        b.pool = Some(pool("ec21", 3, Some((2, 1))));
        let c = compare(&[a.clone(), b]);
        let row = &c.rows[0];
        assert_eq!((row.job.as_str(), row.figure), (USABLE_KEY, USABLE));
        assert!((row.values[0].unwrap() - 100.0 / 3.0).abs() < 1e-9);
        assert!((row.values[1].unwrap() - 200.0 / 3.0).abs() < 1e-9);
        assert!((row.diff_pct[1].unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(row.significant, vec![None, None]);
        assert_eq!(
            (fmt_cell(row, 0), fmt_cell(row, 1)),
            ("33 %".into(), "67 %".into())
        );
        // Not a regression, whatever the threshold.
        assert!(regressions(&c, 0.0).iter().all(|l| !l.contains(USABLE)));
        assert!(compare(&[a.clone(), a])
            .rows
            .iter()
            .all(|r| r.figure != USABLE));
    }

    #[test]
    fn welch_needs_two_runs_a_side_and_weighs_their_spread() {
        assert_eq!(welch_differs(&[1.0], &[2.0, 2.1]), None);
        // Clearly apart: 100 +- 1 vs 120 +- 1.
        assert_eq!(
            welch_differs(&[99.0, 100.0, 101.0], &[119.0, 120.0, 121.0]),
            Some(true)
        );
        // 10% apart but each side spreads +-15%: noise.
        assert_eq!(
            welch_differs(&[85.0, 100.0, 115.0], &[95.0, 110.0, 125.0]),
            Some(false)
        );
        // Two runs a side: t = 4.30 at 2 df (Welch), not 1.96.
        // 100 vs 104, sd 1.4% each: t 2.8 -> not real at 95%; 100 vs 110 is.
        assert_eq!(welch_differs(&[99.0, 101.0], &[103.0, 105.0]), Some(false));
        assert_eq!(welch_differs(&[99.0, 101.0], &[109.0, 111.0]), Some(true));
        assert_eq!(welch_differs(&[5.0, 5.0], &[5.0, 5.0]), Some(false));
        // Far apart with one noisy side (a pool 6x slower, 2 runs each): real.
        assert_eq!(welch_differs(&[600.0, 780.0], &[100.0, 112.0]), Some(true));
        // Zero or negative values: plain scale.
        assert_eq!(welch_differs(&[0.0, 1.0], &[0.0, 1.0]), Some(false));
        assert!((t95(1.0) - 12.706).abs() < 1e-9 && (t95(2.5) - 3.7425).abs() < 1e-9);
        assert_eq!((t95(0.3), t95(45.0)), (12.706, 1.96));
    }

    #[test]
    fn between_run_verdicts_replace_the_per_second_ones() {
        let a = result_with(job(&[1000, 1000, 1000, 1000], 1.0));
        let b = result_with(job(&[2000, 2000, 2000, 2000], 0.5));
        let mut c = compare(&[a.clone(), b.clone()]);
        let iops = |c: &Comparison| c.rows.iter().find(|r| r.figure == "IOPS").unwrap().clone();
        assert_eq!(iops(&c).significant[1], Some(true));
        // One run a side: no verdict, and the note says why.
        let one = |i: usize, _: &str| vec![if i == 0 { &a } else { &b }.jobs[0].clone()];
        judge_between_runs(&mut c, &one);
        assert_eq!(iops(&c).significant[1], None);
        assert!(c.notes.iter().any(|n| n == ONE_RUN_NOTE));
        assert_eq!(c.method, METHOD_BETWEEN_RUNS);
        // Runs that overlap: within the noise although one run alone said real.
        let mut c = compare(&[a.clone(), b.clone()]);
        let spread = |i: usize, _: &str| {
            let iops: &[f64] = if i == 0 {
                &[1000.0, 3000.0, 500.0]
            } else {
                &[2000.0, 900.0, 2600.0]
            };
            iops.iter()
                .map(|x| JobReport {
                    iops: *x,
                    ..a.jobs[0].clone()
                })
                .collect()
        };
        judge_between_runs(&mut c, &spread);
        assert_eq!(iops(&c).significant[1], Some(false));
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // Percentiles still get none.
        assert!(c
            .rows
            .iter()
            .filter(|r| r.figure.starts_with('p'))
            .all(|r| r.significant[1].is_none()));
    }

    /// A split of `mean` ms into `parts` (ms).
    fn split(mean: f64, parts: &[(Part, f64)]) -> crate::result::Attribution {
        crate::result::Attribution {
            mean_ns: mean * 1e6,
            shares: parts
                .iter()
                .map(|(p, ms)| crate::result::Share {
                    part: *p,
                    ns: ms * 1e6,
                })
                .collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_moved_shares_and_the_headline_name_the_device_flush_and_its_osd() {
        let mut a = job(&[1000, 1000, 1000], 1.0);
        a.attribution = Some(split(
            1.0,
            &[
                (Part::PublicNetwork, 0.2),
                (Part::OsdLocal, 0.3),
                (Part::DeviceFlush, 0.5),
            ],
        ));
        let mut b = job(&[250, 250, 250], 4.0);
        b.attribution = Some(split(
            4.0,
            &[
                (Part::PublicNetwork, 0.2),
                (Part::OsdLocal, 0.4),
                (Part::DeviceFlush, 3.3),
                (Part::Unattributed, 0.1),
            ],
        ));
        let mut c = compare(&[result_with(a), result_with(b)]);
        assert_eq!(c.moved.len(), 1);
        let m = &c.moved[0];
        assert_eq!(m.mean_ms, [Some(1.0), Some(4.0)]);
        let flush = m
            .parts
            .iter()
            .find(|p| p.part == Part::DeviceFlush)
            .unwrap();
        assert!(
            (flush.pct_of_diff[1].unwrap() - 93.333).abs() < 0.01,
            "{flush:?}"
        );
        assert_eq!(flush.pct_of_diff[0], None);
        // The percentages of the moved shares add up to the whole difference.
        let total: f64 = m.parts.iter().filter_map(|p| p.pct_of_diff[1]).sum();
        assert!((total - 100.0).abs() < 1e-6, "{total}");
        c.osds = vec![
            OsdEvidence {
                source: 0,
                osd: 0,
                drive: Some("class plp".into()),
                device_flush_ms: Some(0.5),
                kv_sync_ms: None,
            },
            OsdEvidence {
                source: 1,
                osd: 1,
                drive: Some("class consumer".into()),
                device_flush_ms: Some(3.3),
                kv_sync_ms: None,
            },
        ];
        let h = headlines(&c);
        assert_eq!(
            h,
            ["write: B is 3.00 ms slower than A per op (+300.0%); 93% of that is the device flush \
              (0.50 -> 3.30 ms): B's osd.1 (class consumer) waits 3.30 ms per write for its device flush"]
        );
        let mut text = Vec::new();
        crate::report::comparison_table(&c, false, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("device flush") && text.contains("93%"),
            "{text}"
        );
        assert!(text.contains("B osd.1: device flush 3.300 ms"), "{text}");
    }

    /// A result on `pool` whose one job has mean `mean` ms split into `parts`.
    fn split_on(pool: &str, mean: f64, parts: &[(Part, f64)]) -> BenchResult {
        let mut j = job(&[1000, 1000, 1000], mean);
        j.attribution = Some(split(mean, parts));
        crate::result::test_result(pool, vec![j])
    }

    /// A difference inside the noise gets no "why": a 12 ms mean 0.4 %
    /// lower, the OSD queue moving 18 times as much as the mean.
    #[test]
    fn no_headline_for_a_difference_inside_the_noise() {
        let a = split_on("a", 12.0, &[(Part::OsdQueue, 1.0), (Part::OsdLocal, 11.0)]);
        let b = split_on(
            "b",
            11.95,
            &[(Part::OsdQueue, 1.886), (Part::OsdLocal, 10.064)],
        );
        let c = compare(&[a, b]);
        let q = c.moved[0].parts.iter().find(|p| p.part == Part::OsdQueue);
        assert!(q.unwrap().pct_of_diff[1].unwrap() < -1700.0);
        assert!(headlines(&c).is_empty(), "{:?}", headlines(&c));
        // Nor a share of it in the table.
        let text = table_text(&c);
        assert!(
            !text.contains("772%") && !text.contains("% of that"),
            "{text}"
        );
    }

    /// The comparison as the text report prints it.
    fn table_text(c: &Comparison) -> String {
        let mut text = Vec::new();
        crate::report::comparison_table(c, false, &mut text).unwrap();
        String::from_utf8(text).unwrap()
    }

    /// Headlines name the pools, and a share that moved more than the mean
    /// is said so, never as a percentage over 100.
    #[test]
    fn headlines_name_the_pools_and_no_share_over_the_whole() {
        let a = split_on(
            "consumer",
            10.0,
            &[(Part::OsdQueue, 7.0), (Part::OsdLocal, 3.0)],
        );
        let b = split_on("plp", 5.0, &[(Part::OsdQueue, 1.0), (Part::OsdLocal, 4.0)]);
        let c = compare(&[a, b]);
        let text = table_text(&c);
        assert!(text.contains(">100%") && !text.contains("120%"), "{text}");
        let h = headlines(&c);
        assert_eq!(
            h,
            [
                "write: plp is 5.00 ms faster than consumer per op (-50.0%); the OSD queue alone \
              moved -6.00 ms (7.00 -> 1.00 ms), more than the mean did (other shares moved the \
              other way)"
            ]
        );
    }

    /// Replicated against erasure-coded on the same OSDs: the EC side has
    /// one replication share where the replicated side has cluster network,
    /// OSD messengers and replica. None of those moved from (or to) 0 in
    /// the headline: the line says what the EC side could not split.
    #[test]
    fn a_share_moves_in_a_headline_only_when_both_sides_measured_it() {
        let rep = split_on(
            "rep",
            30.0,
            &[
                (Part::OsdLocal, 4.0),
                (Part::ClusterNetwork, 0.3),
                (Part::Messengers, 20.76),
                (Part::Replica, 4.94),
            ],
        );
        let ec = split_on(
            "ec",
            39.0,
            &[(Part::OsdLocal, 5.0), (Part::Replication, 34.0)],
        );
        let c = compare(&[rep, ec]);
        let m = &c.moved[0];
        let msgr = m.parts.iter().find(|p| p.part == Part::Messengers).unwrap();
        assert_eq!(msgr.ms, vec![Some(20.76), None], "{msgr:?}");
        assert_eq!(msgr.pct_of_diff[1], None, "{msgr:?}");
        let repl = m
            .parts
            .iter()
            .find(|p| p.part == Part::Replication)
            .unwrap();
        assert_eq!(repl.ms, vec![None, Some(34.0)], "{repl:?}");
        let h = headlines(&c);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(!h[0].contains("0.00"), "no share from or to 0: {h:?}");
        assert!(
            h[0].contains("no share measured on both sides carries half of that")
                && h[0].contains(
                    "rep's cluster network, OSD messengers, replica against ec's replication"
                ),
            "{h:?}"
        );
        // One side split, the other not measured at all (no replication
        // share either): said which side could not split.
        let plain = split_on("plain", 39.0, &[(Part::OsdLocal, 39.0)]);
        let rep = split_on("rep", 30.0, &[(Part::OsdLocal, 4.0), (Part::Replica, 26.0)]);
        let h = headlines(&compare(&[rep, plain]));
        assert!(
            h[0].contains("plain could not split out replica (rep's shares, not compared)"),
            "{h:?}"
        );
    }

    /// The cluster-network share names the cable only when the back
    /// network's heartbeats carry it (a size-3 pool on saturated cores:
    /// 4.89 ms waited, heartbeats 1.30 ms).
    #[test]
    fn the_cluster_network_headline_names_the_cable_only_with_the_heartbeats() {
        // A size-1 pool against a size-3 one split into `parts`.
        let size3 = |parts: &[(Part, f64)]| {
            // A size-1 split has its replication shares, at 0 (measured).
            let a = split_on(
                "size1",
                4.0,
                &[
                    (Part::OsdLocal, 4.0),
                    (Part::ClusterNetwork, 0.0),
                    (Part::Replica, 0.0),
                ],
            );
            compare(&[a, split_on("size3", 12.6, parts)])
        };
        let mut c = size3(&[
            (Part::OsdLocal, 5.0),
            (Part::ClusterNetwork, 4.89),
            (Part::Replica, 2.71),
        ]);
        c.back_heartbeat_ms = vec![Some(1.2), Some(1.30)];
        let h = headlines(&c);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].contains("57% of that is the wait for the replicas beyond their own work")
                && h[0].contains("on size3, not explained by the cable")
                && h[0].contains("heartbeats took only 1.30 ms"),
            "{h:?}"
        );
        assert!(!h[0].contains("of that is the cluster network"), "{h:?}");
        c.back_heartbeat_ms = vec![None, Some(4.0)];
        let h = headlines(&c);
        assert!(
            h[0].contains("57% of that is the cluster network (0.00 -> 4.89 ms)")
                && h[0].contains("the back network or the hosts' network stack"),
            "{h:?}"
        );
        // Held to the back network's own echo (the messengers split off):
        // the share is the cable whatever the heartbeats say.
        let mut c = size3(&[
            (Part::OsdLocal, 5.0),
            (Part::ClusterNetwork, 4.89),
            (Part::Messengers, 0.2),
            (Part::Replica, 2.51),
        ]);
        c.back_heartbeat_ms = vec![Some(1.2), Some(1.30)];
        let h = headlines(&c);
        assert!(
            h[0].contains("57% of that is the cluster network (0.00 -> 4.89 ms)")
                && h[0].contains("on size3, the back network itself")
                && !h[0].contains("heartbeats"),
            "{h:?}"
        );
    }

    #[test]
    fn no_headline_without_a_share_carrying_half_the_difference() {
        let mut a = job(&[1000, 1000, 1000], 1.0);
        a.attribution = Some(split(
            1.0,
            &[(Part::OsdQueue, 0.5), (Part::DeviceFlush, 0.5)],
        ));
        let mut b = job(&[500, 500, 500], 2.0);
        // Spread over two shares (40% each) and unattributed: no single cause.
        b.attribution = Some(split(
            2.0,
            &[
                (Part::OsdQueue, 0.9),
                (Part::DeviceFlush, 0.9),
                (Part::Unattributed, 0.2),
            ],
        ));
        let c = compare(&[result_with(a), result_with(b)]);
        assert!(headlines(&c).is_empty(), "{:?}", headlines(&c));
    }

    #[test]
    fn regressions_beyond_threshold() {
        let base = job(&[1000, 1010, 990, 1005, 995], 16.0);
        let slower = job(&[800, 810, 790, 805, 795], 20.0);
        let faster = job(&[2000, 2010, 1990, 2005, 1995], 8.0);
        let c = compare(&[result_with(base.clone()), result_with(slower)]);
        let r = regressions(&c, 10.0);
        // IOPS -20%, MiB/s -20%, mean latency +25%: three lines.
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(
            r[0].starts_with("write/write IOPS: ") && r[0].contains("-20.0%"),
            "{r:?}"
        );
        assert!(regressions(&c, 30.0).is_empty(), "within a 30% threshold");
        let c = compare(&[result_with(base.clone()), result_with(faster)]);
        assert!(regressions(&c, 1.0).is_empty(), "faster is no regression");
        let noisy = job(&[500, 1500, 700, 1400, 900], 16.0);
        let c = compare(&[result_with(base), result_with(noisy)]);
        assert!(
            regressions(&c, 5.0).is_empty(),
            "-20% but within the noise: {:?}",
            regressions(&c, 5.0)
        );
    }
}
