//! What-if projections: a job's measured split with some of its parts
//! replaced — by another pool's (or OSD's) drive-side shares, by what a
//! class of drive flushes in, by a shorter cluster round trip, or by no
//! wait for copies at all — and the mean and IOPS that would follow.
//!
//! A projection moves only the parts it names; every other share (the
//! public network, the client's unattributed time) stays as measured. The
//! mean moves by the sum of the replaced parts' differences. The IOPS
//! follows from the closed loop's own law: each of the job's slots cycles
//! through one op's latency and the client's refill wait, so
//! `IOPS' = IOPS × (mean + refill) / (mean' + refill)`. That holds while the
//! OSDs were not saturated: with more than one op in flight and an OSD queue
//! share of [`SATURATED_QUEUE_SHARE`] of the mean or more, the IOPS would be
//! set by the OSDs' throughput, which a split does not give, and the
//! projection says so instead of guessing. An open-loop job's IOPS is its
//! `--rate`.
//!
//! Drive-side parts, as one OSD's row of the split has them: OSD queue, OSD
//! local, device flush, and the replicas' own time beyond the primary's
//! commit (`replica`). The cluster network and the public network are the
//! cable's.
//!
//! Flush projections (a drive class, or the pool's fastest drive) work per
//! primary OSD row, then combine by the rows' op counts as the split does.
//! Each OSD loses `ΔF = F − F'` of its device flush per transaction (`F`
//! BlueStore's kv queue + sync round, the flush share's own figure). The
//! row's flush share drops by the primary's loss; its replica share, the
//! slowest replica's repop time beyond the primary's commit, is taken again
//! from the counters with each side less its own loss:
//! `R' = max(0, max_replicas(subop_w − ΔF_replica) − (commit_lat − ΔF_primary))`
//! (so a replica that was faster than a slow primary can become the one
//! waited for). Only writes of at most [`FLUSH_PROJECTION_MAX_BYTES`]:
//! above, the flush share carries the data's own write to the device, which
//! a faster flush does not remove.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use crate::attribution::{counter_ns, device_flush_ns, slowest_replica_ns};
use crate::result::{Attribution, BenchResult, JobReport, Part};
use crate::units::ms_prose as ms;

/// A device flush on a drive with power-loss protection, ns: it
/// acknowledges from protected RAM in 0.02–0.2 ms; the projection takes
/// 0.1 ms.
pub const PLP_FLUSH_NS: f64 = 0.1e6;

/// With more than one op in flight, an OSD queue share of this fraction of
/// the mean or more means the OSDs were saturated: no IOPS projection.
pub const SATURATED_QUEUE_SHARE: f64 = 0.2;

/// Flush projections are made for writes of at most this many bytes.
pub const FLUSH_PROJECTION_MAX_BYTES: f64 = 65536.0;

/// A projection is shown unasked only when it moves the mean by at least
/// this fraction.
pub const SHOWN_FROM: f64 = 0.1;

/// What a projection changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Another pool's (or OSD's) drive-side shares in place of this one's.
    Drives,
    /// Every drive's flush as a class of drive flushes (or as the pool's
    /// fastest drive's).
    Flush,
    /// A cluster network with a shorter round trip.
    ClusterCable,
    /// No wait for copies (replicas or shards) at all.
    NoCopyWait,
}

/// One part of a projection: as measured and as projected, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedPart {
    /// The part.
    pub part: Part,
    /// Its share as measured (0 where the split had none).
    pub measured_ns: f64,
    /// Its share as projected.
    pub projected_ns: f64,
}

/// One what-if projection of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// What kind of change.
    pub kind: Kind,
    /// The change in words, e.g. "PLP drives (a flush of 0.1 ms)".
    pub what: String,
    /// Where the replacing figures come from.
    pub reference: String,
    /// The measured mean completion latency, ns.
    pub mean_ns: f64,
    /// The projected mean, ns.
    pub projected_mean_ns: f64,
    /// The measured IOPS.
    pub iops: f64,
    /// The projected IOPS (null where it cannot be projected: see `iops_basis`).
    pub projected_iops: Option<f64>,
    /// How the IOPS was projected, or why not.
    pub iops_basis: String,
    /// The parts that moved.
    pub parts: Vec<ProjectedPart>,
    /// What the projection assumes.
    pub assumptions: Vec<String>,
}

impl Projection {
    /// The projection in one line: "PLP drives (…): mean 7.30 → 0.85 ms,
    /// IOPS 137 → 1,180".
    pub fn line(&self) -> String {
        let iops = match self.projected_iops {
            Some(p) => format!(
                ", IOPS {} → {}",
                crate::units::thousands(self.iops.round() as u64),
                crate::units::thousands(p.round() as u64)
            ),
            None => format!(" (IOPS not projected: {})", self.iops_basis),
        };
        format!(
            "{}: mean {} → {} ms{iops}",
            self.what,
            ms(self.mean_ns),
            ms(self.projected_mean_ns)
        )
    }

    /// Matched against a measured run: "projected 0.85 ms, measured 0.79 ms
    /// (−7 %)".
    pub fn against(&self, measured_mean_ns: f64) -> String {
        format!(
            "projected {} ms, measured {} ms ({:+.0} %)",
            ms(self.projected_mean_ns),
            ms(measured_mean_ns),
            (measured_mean_ns / self.projected_mean_ns - 1.0) * 100.0
        )
    }
}

fn share(a: &Attribution, part: Part) -> Option<f64> {
    a.shares.iter().find(|s| s.part == part).map(|s| s.ns)
}

/// The drive-side parts of a split.
const DRIVE_PARTS: [Part; 4] = [
    Part::OsdQueue,
    Part::OsdLocal,
    Part::DeviceFlush,
    Part::Replica,
];

/// Builds a projection of `job` (its split `a`) with `moved` parts: the
/// mean moves by their differences; `None` when nothing moves or the
/// projected mean would not be positive.
fn project(
    job: &JobReport,
    a: &Attribution,
    kind: Kind,
    what: String,
    reference: String,
    moved: Vec<ProjectedPart>,
    assumptions: Vec<String>,
) -> Option<Projection> {
    let delta: f64 = moved.iter().map(|p| p.projected_ns - p.measured_ns).sum();
    let projected = a.mean_ns + delta;
    // (NaN is not positive either.)
    let positive = |x: f64| x > 0.0;
    if moved.is_empty() || !positive(projected) || !positive(a.mean_ns) {
        return None;
    }
    let (projected_iops, iops_basis) = project_iops(job, a, projected);
    Some(Projection {
        kind,
        what,
        reference,
        mean_ns: a.mean_ns,
        projected_mean_ns: projected,
        iops: job.iops,
        projected_iops,
        iops_basis,
        parts: moved,
        assumptions,
    })
}

/// The IOPS at a projected mean, and its basis (see the module's docs).
fn project_iops(job: &JobReport, a: &Attribution, projected_ns: f64) -> (Option<f64>, String) {
    if let Some(r) = &job.rate {
        return (
            None,
            format!("an open-loop job's IOPS is its --rate ({:.0}/s)", r.asked),
        );
    }
    let (in_flight, refill) = job
        .client
        .as_ref()
        .map_or((1.0, 0.0), |c| (c.mean_in_flight, c.refill_wait_ns));
    let queue = share(a, Part::OsdQueue).unwrap_or(0.0);
    if in_flight > 1.5 && queue >= SATURATED_QUEUE_SHARE * a.mean_ns {
        return (
            None,
            format!(
                "the OSDs queued ops ({} of {} ms at {in_flight:.1} in flight): the IOPS would \
                 be their throughput, which the split does not give",
                ms(queue),
                ms(a.mean_ns)
            ),
        );
    }
    let iops = job.iops * (a.mean_ns + refill) / (projected_ns + refill);
    (
        Some(iops),
        format!(
            "Little's law over the job's {in_flight:.1} ops in flight (the OSDs' queue was {} ms: \
             not saturated)",
            ms(queue)
        ),
    )
}

/// `job` with the drive-side shares of `reference` (another pool's job of
/// the same kind, or one OSD's row): "if this pool's drives were like
/// pool B's". The network shares stay this run's.
///
/// `same_client` names the host both runs were made from, when they were:
/// then the unattributed time is the reference's too. It is the client's
/// own time and what the OSDs' counters do not time (messengers, commit
/// callbacks, a slow drive's deferred writes); with one client host only
/// the latter differ, and they go with the drives: under a 3 ms flush
/// delay it rose 0.29 → 0.78 ms here, and a projection that kept it read
/// 33 % above the pool measured without the delay. From another client
/// host it is kept, and said so.
pub fn onto_drives(
    job: &JobReport,
    reference: &Attribution,
    what: String,
    reference_label: String,
    same_client: Option<&str>,
) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    let mut assumptions = vec![format!(
        "the public network ({} ms) and the cluster network ({} ms) stay as this run measured them",
        ms(share(a, Part::PublicNetwork).unwrap_or(0.0)),
        ms(share(a, Part::ClusterNetwork).unwrap_or(0.0))
    )];
    // Without OSD counters on either side there is nothing to swap.
    share(a, Part::OsdLocal)?;
    share(reference, Part::OsdLocal)?;
    let mut moved = Vec::new();
    for part in DRIVE_PARTS {
        let (mine, theirs) = (share(a, part), share(reference, part));
        match (part, mine, theirs) {
            (Part::Replica, Some(m), None) => {
                let unsplit = share(reference, Part::Replication).is_some();
                assumptions.push(if unsplit {
                    "the reference's wait for its copies is not split into cable and drives: \
                     this run's replica share is kept"
                        .into()
                } else {
                    "the reference has no replicas: the replicas are taken to be as fast as the \
                     primary (replica share 0)"
                        .into()
                });
                if !unsplit {
                    moved.push(ProjectedPart {
                        part,
                        measured_ns: m,
                        projected_ns: 0.0,
                    });
                }
            }
            (Part::Replica, None, _) => {}
            (Part::Replica, Some(m), Some(t)) => {
                if t <= 0.0 && m > 0.0 {
                    assumptions.push(
                        "the reference waited for no replicas beyond its primary's commit (it \
                         has none, or none slower): this run's replicas are taken to be as fast \
                         as the primary"
                            .into(),
                    );
                }
                moved.push(ProjectedPart {
                    part,
                    measured_ns: m,
                    projected_ns: t,
                });
            }
            (_, m, t) => {
                if m.is_none() && t.is_none() {
                    continue;
                }
                moved.push(ProjectedPart {
                    part,
                    measured_ns: m.unwrap_or(0.0),
                    projected_ns: t.unwrap_or(0.0),
                });
            }
        }
    }
    if share(a, Part::Replication).is_some() {
        assumptions.push(
            "this run's wait for its copies is not split into cable and drives: it is kept".into(),
        );
    }
    let unattributed = (
        share(a, Part::Unattributed),
        share(reference, Part::Unattributed),
    );
    match (same_client, unattributed) {
        (Some(host), (Some(m), Some(t))) => {
            assumptions.push(format!(
                "the unattributed time is the reference's ({} ms, this run {} ms): both ran from \
                 host {host}, so it differs by what the OSDs' counters do not time \
                 (messengers, callbacks, deferred writes), which goes with the drives",
                ms(t),
                ms(m)
            ));
            moved.push(ProjectedPart {
                part: Part::Unattributed,
                measured_ns: m,
                projected_ns: t,
            });
        }
        (None, (Some(m), _)) => assumptions.push(format!(
            "this run's unattributed time ({} ms) is kept: the reference ran from another \
             client host, or its host is not known",
            ms(m)
        )),
        (Some(_), (Some(m), None)) => assumptions.push(format!(
            "this run's unattributed time ({} ms) is kept: the reference has none",
            ms(m)
        )),
        _ => {}
    }
    assumptions.push(
        "the reference's shares are means at its own load: they carry over where both ran \
         the same job (block size, ops in flight)"
            .into(),
    );
    project(
        job,
        a,
        Kind::Drives,
        what,
        reference_label,
        moved,
        assumptions,
    )
}

/// `job` of `result` with every OSD's device flush per transaction made
/// at most `cap`; `None` for reads, large writes, or where no
/// row has a flush share.
fn with_flush(
    result: &BenchResult,
    job: &JobReport,
    what: String,
    reference: String,
    cap: f64,
    mut assumptions: Vec<String>,
) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    if job.op != "write" || job.ops == 0 {
        return None;
    }
    if job.bytes as f64 / job.ops as f64 > FLUSH_PROJECTION_MAX_BYTES {
        return None;
    }
    let loss = |osd: i32| device_flush_ns(result, osd).map(|f| (f - f.min(cap)).max(0.0));
    // Per primary row: (ops, flush Δ, replica Δ).
    let (mut ops, mut d_flush, mut d_replica, mut replica_before, mut flush_before) =
        (0u64, 0.0, 0.0, 0.0, 0.0);
    let mut replica_kept = false;
    for o in &result.osds {
        for row in o.client.iter().filter(|r| r.op == job.op) {
            let Some(ra) = &row.attribution else { continue };
            let Some(f) = share(ra, Part::DeviceFlush) else {
                continue;
            };
            let f_new = f.min(cap);
            let gain_primary = f - f_new;
            let w = row.ops as f64;
            ops += row.ops;
            d_flush += w * (f_new - f);
            flush_before += w * f;
            if let Some(r) = share(ra, Part::Replica) {
                // R = max(0, S - commit) before the clamp, from the counters:
                // the slowest replica's repop time less its flush loss, and
                // the primary's commit less its own.
                let subop = |osd: i32| counter_ns(result, osd, |c| c.subop_w_latency);
                let s_new = slowest_replica_ns(&o.replica_sets, |osd| {
                    Some(subop(osd)? - loss(osd).unwrap_or(0.0))
                });
                let commit = counter_ns(result, o.osd, |c| c.commit_lat);
                let r_new = match s_new.zip(commit) {
                    Some((s, c)) => (s - (c - gain_primary)).max(0.0),
                    None => {
                        replica_kept = true;
                        r
                    }
                };
                d_replica += w * (r_new - r);
                replica_before += w * r;
            }
        }
    }
    if ops == 0 {
        return None;
    }
    let n = ops as f64;
    let mut moved = vec![ProjectedPart {
        part: Part::DeviceFlush,
        measured_ns: flush_before / n,
        projected_ns: (flush_before + d_flush) / n,
    }];
    if replica_before > 0.0 || d_replica != 0.0 {
        moved.push(ProjectedPart {
            part: Part::Replica,
            measured_ns: replica_before / n,
            projected_ns: (replica_before + d_replica) / n,
        });
        assumptions.push(
            "the wait for the replicas beyond the primary's own commit is taken again from \
             their repop times (subop_w) and the primary's commit, each less its drive's loss"
                .into(),
        );
    }
    if replica_kept {
        assumptions.push(
            "some replicas' repop or commit times were not read: their wait is kept as measured"
                .into(),
        );
    }
    if share(a, Part::Replication).is_some() {
        assumptions.push(
            "the wait for the copies is not split into cable and drives: it is kept as measured"
                .into(),
        );
    }
    assumptions.push(kept_at_a_slow_pace());
    project(job, a, Kind::Flush, what, reference, moved, assumptions)
}

/// What a flush projection keeps: the rest of the path as measured at a
/// slow drive's pace, where threads woke from idle more slowly than they
/// would at the faster pace.
fn kept_at_a_slow_pace() -> String {
    "everything else of the path (network, queue, the OSDs' own work) stays as measured; at a \
     slow drive's pace the OSDs' threads wake from idle more slowly, so this may be pessimistic \
     by a few tenths of a ms"
        .into()
}

/// `job` as if every drive flushed as drives with power-loss protection do
/// (at most [`PLP_FLUSH_NS`] per transaction).
pub fn with_plp(result: &BenchResult, job: &JobReport) -> Option<Projection> {
    with_flush(
        result,
        job,
        format!("PLP drives (a flush of {} ms)", PLP_FLUSH_NS / 1e6),
        "drives with power-loss protection acknowledge a flush from protected RAM in 0.02–0.2 ms"
            .into(),
        PLP_FLUSH_NS,
        vec![format!(
            "each transaction's device flush becomes at most {} ms",
            ms(PLP_FLUSH_NS)
        )],
    )
}

/// `job` as if every OSD's drive flushed like `osd`'s (this run's own
/// figure for it).
pub fn like_osd(result: &BenchResult, job: &JobReport, osd: i32) -> Option<Projection> {
    let f = device_flush_ns(result, osd)?;
    with_flush(
        result,
        job,
        format!("every drive flushing like osd.{osd}'s ({} ms)", ms(f)),
        format!("osd.{osd}'s device flush per transaction in this run"),
        f,
        vec![format!(
            "each transaction's device flush becomes osd.{osd}'s {} ms where it was slower",
            ms(f)
        )],
    )
}

/// `job` with a cluster network round trip `less_ns` shorter (never below 0).
pub fn with_cluster_cable(job: &JobReport, less_ns: f64) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    let (part, m) = [Part::ClusterNetwork, Part::Replication]
        .into_iter()
        .find_map(|p| share(a, p).map(|v| (p, v)))?;
    if m <= 0.0 {
        return None;
    }
    let mut assumptions = vec![format!(
        "the primary waits {} ms less for its copies (never below 0)",
        ms(less_ns)
    )];
    if part == Part::Replication {
        assumptions.push(
            "the wait for the copies is not split into cable and drives: the whole wait is \
             shortened"
                .into(),
        );
    }
    assumptions.push(
        "everything else of the path stays as measured under the slow cable: the OSDs' threads \
         wake from idle more slowly at that pace, while the primary's own commit no longer \
         shares the cores with its copies' writes, so this may be off by a few tenths of a ms \
         either way"
            .into(),
    );
    project(
        job,
        a,
        Kind::ClusterCable,
        format!("a cluster network {} ms faster per round trip", ms(less_ns)),
        "this run's cluster-network share".into(),
        vec![ProjectedPart {
            part,
            measured_ns: m,
            projected_ns: (m - less_ns).max(0.0),
        }],
        assumptions,
    )
}

/// `job` with no wait for copies: the floor any layout with copies stands
/// on (the cluster network and the replicas' own time gone).
pub fn without_copies(job: &JobReport) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    let moved: Vec<ProjectedPart> = [
        Part::ClusterNetwork,
        Part::Messengers,
        Part::Replica,
        Part::Replication,
    ]
    .into_iter()
    .filter_map(|p| {
        share(a, p).filter(|v| *v > 0.0).map(|v| ProjectedPart {
            part: p,
            measured_ns: v,
            projected_ns: 0.0,
        })
    })
    .collect();
    project(
        job,
        a,
        Kind::NoCopyWait,
        "no wait for copies".into(),
        "this run's cluster-network, messenger and replica shares".into(),
        moved,
        vec![
            "the primary answers after its own commit: the floor of any layout with copies, not \
             a layout to run"
                .into(),
            "the OSDs' own work (queue, local, flush) stays as measured, under the load the \
             copies put on them: a pool of one copy, whose OSDs take only its own writes, is \
             faster still"
                .into(),
        ],
    )
}

/// The projections a result shows unasked, per job: each only with its
/// evidence, i.e. where it moves the mean by [`SHOWN_FROM`] or more — PLP
/// drives; every drive flushing like the pool's fastest OSD where the
/// drive verdict named slow ones; no wait for copies.
pub fn unasked(result: &BenchResult, job: &JobReport, slow_osds: &[i32]) -> Vec<Projection> {
    let mut out = Vec::new();
    out.extend(with_plp(result, job));
    if !slow_osds.is_empty() {
        let fastest = result
            .osds
            .iter()
            .filter(|o| !slow_osds.contains(&o.osd))
            .filter_map(|o| device_flush_ns(result, o.osd).map(|f| (o.osd, f)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((osd, _)) = fastest {
            out.extend(like_osd(result, job, osd));
        }
    }
    out.extend(without_copies(job));
    out.retain(|p| (p.mean_ns - p.projected_mean_ns).abs() >= SHOWN_FROM * p.mean_ns);
    out
}

/// A projection asked for by name (`report --what-if`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ask {
    /// `plp`: every drive flushing as drives with power-loss protection do.
    Plp,
    /// `flush:DUR`: every drive's flush per transaction at most this, ns.
    Flush(f64),
    /// `like:osd.N`: every drive flushing like osd.N's in the same run.
    LikeOsd(i32),
    /// `cluster-rtt:-DUR`: a cluster network this much faster per round
    /// trip, ns.
    ClusterRtt(f64),
    /// `no-copy-wait`: no wait for copies.
    NoCopyWait,
}

/// What `--what-if` accepts, for its error message.
pub const ASK_FORMS: &str = "plp, flush:0.1ms, like:osd.N, cluster-rtt:-0.5ms or no-copy-wait";

impl std::str::FromStr for Ask {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| format!("{why} (one of {ASK_FORMS})");
        let dur = |v: &str| -> Result<f64, String> {
            crate::units::parse_duration(v)
                .map(|d| d.as_secs_f64() * 1e9)
                .map_err(|e| bad(&e.to_string()))
        };
        match s.split_once(':') {
            None if s == "plp" => Ok(Ask::Plp),
            None if s == "no-copy-wait" => Ok(Ask::NoCopyWait),
            Some(("flush", v)) => Ok(Ask::Flush(dur(v)?)),
            Some(("like", v)) => v
                .strip_prefix("osd.")
                .and_then(|n| n.parse().ok())
                .map(Ask::LikeOsd)
                .ok_or_else(|| bad("name an OSD as osd.N")),
            Some(("cluster-rtt", v)) => match v.strip_prefix('-') {
                Some(d) => match dur(d)? {
                    ns if ns > 0.0 => Ok(Ask::ClusterRtt(ns)),
                    _ => Err(bad("give a time above 0")),
                },
                None => Err(bad("give how much faster, e.g. cluster-rtt:-0.5ms")),
            },
            _ => Err(bad("unknown change")),
        }
    }
}

/// The projection `ask` makes of `job` of `result`, if its split allows it.
pub fn asked(result: &BenchResult, job: &JobReport, ask: Ask) -> Option<Projection> {
    match ask {
        Ask::Plp => with_plp(result, job),
        Ask::Flush(ns) => with_flush(
            result,
            job,
            format!("drives flushing in {} ms", ms(ns)),
            "the flush asked for (--what-if flush:…)".into(),
            ns,
            vec![format!(
                "each transaction's device flush becomes at most {} ms",
                ms(ns)
            )],
        ),
        Ask::LikeOsd(osd) => like_osd(result, job, osd),
        Ask::ClusterRtt(ns) => with_cluster_cable(job, ns),
        Ask::NoCopyWait => without_copies(job),
    }
}

/// Adds the asked projections to every job of `result` whose split allows
/// them (in place of an unasked one of the same change); how many it added.
pub fn add_asked(result: &mut BenchResult, asks: &[Ask]) -> usize {
    let mut added = 0;
    for ix in 0..result.jobs.len() {
        for ask in asks {
            let Some(p) = asked(result, &result.jobs[ix], *ask) else {
                continue;
            };
            let list = result.jobs[ix].projections.get_or_insert_with(Vec::new);
            list.retain(|q| q.what != p.what);
            list.push(p);
            added += 1;
        }
    }
    added
}

/// Below this gain per flush, ns, a drive is said to gain nothing from PLP.
pub const PLP_MIN_GAIN_NS: f64 = 0.05e6;

/// Which drives would gain from power-loss protection, in one line: each
/// OSD's flush (`flushes`: OSD, ns `per` transaction or round) against
/// [`PLP_FLUSH_NS`], the most to gain first; `None` without a figure.
/// "PLP drives (a flush of at most 0.1 ms) would gain: osd.1 7.80 ms per
/// write transaction (its flush 7.90 ms), osd.0 0.810 ms (0.910 ms);
/// osd.2 (0.090 ms) already flushes about as fast".
pub fn plp_line(flushes: &[(i32, f64)], per: &str) -> Option<String> {
    if flushes.is_empty() {
        return None;
    }
    let mut by_gain: Vec<(i32, f64, f64)> = flushes
        .iter()
        .map(|&(osd, f)| (osd, f, (f - PLP_FLUSH_NS).max(0.0)))
        .collect();
    by_gain.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let (gain, mut none): (Vec<&(i32, f64, f64)>, Vec<_>) =
        by_gain.iter().partition(|x| x.2 >= PLP_MIN_GAIN_NS);
    none.sort_by_key(|x| x.0);
    let mut line = format!(
        "PLP drives (a flush of at most {} ms) would gain",
        ms(PLP_FLUSH_NS)
    );
    if gain.is_empty() {
        line.push_str(": nothing");
    }
    for (i, (osd, f, g)) in gain.iter().enumerate() {
        line.push_str(&if i == 0 {
            format!(": osd.{osd} {} ms {per} (its flush {} ms)", ms(*g), ms(*f))
        } else {
            format!(", osd.{osd} {} ms ({} ms)", ms(*g), ms(*f))
        });
    }
    if !none.is_empty() {
        let list: Vec<String> = none
            .iter()
            .map(|(osd, f, _)| format!("osd.{osd} ({} ms)", ms(*f)))
            .collect();
        line.push_str(&format!(
            "; {} already flush{} about as fast",
            list.join(", "),
            if none.len() == 1 { "es" } else { "" }
        ));
    }
    Some(line)
}

/// [`plp_line`] for a run's OSDs: each one's device flush per write
/// transaction (BlueStore's kv queue + sync round, as the split takes it).
pub fn plp_line_of(result: &BenchResult) -> Option<String> {
    let flushes: Vec<(i32, f64)> = result
        .osds
        .iter()
        .filter_map(|o| Some((o.osd, device_flush_ns(result, o.osd)?)))
        .collect();
    plp_line(&flushes, "per write transaction")
}

/// Fills `jobs[].projections` of a finished, attributed result.
pub fn annotate(result: &mut BenchResult, slow_osds: &[i32]) {
    let all: Vec<Option<Vec<Projection>>> = result
        .jobs
        .iter()
        .map(|j| {
            j.attribution
                .as_ref()
                .map(|_| unasked(result, j, slow_osds))
        })
        .collect();
    for (j, p) in result.jobs.iter_mut().zip(all) {
        j.projections = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::attribute;
    use crate::attribution::tests::pool_result;
    use crate::result::{ClientLoad, RateReport, ScheduleError};
    use crate::telemetry::counters::AvgDelta;

    fn part(p: &Projection, part: Part) -> Option<(f64, f64)> {
        p.parts
            .iter()
            .find(|x| x.part == part)
            .map(|x| (x.measured_ns / 1e6, x.projected_ns / 1e6))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// osd.2's drive flushes 3 ms slower than the others (3.5 against 0.5
    /// ms): its repops take 4.5 ms, and osd.0 and osd.1 wait 3.3 ms for
    /// it; as a primary it waits for its own commit (4.2 ms) instead.
    fn slow_osd2() -> BenchResult {
        let mut r = pool_result(
            [4.8, 4.8, 4.2],
            [1.5, 1.5, 4.5],
            [1.2, 1.2, 4.2],
            [0.5, 0.5, 3.5],
        );
        for (o, ms) in r.osds.iter_mut().zip([0.4, 0.4, 3.4]) {
            o.counters.as_mut().unwrap().kv_commit_lat = Some(AvgDelta {
                count: 100,
                mean_ns: Some(ms * 1e6),
            });
        }
        r.jobs[0].iops = 200.0;
        r.jobs[0].bytes = 300 * 4096;
        r
    }

    /// With PLP drives every OSD flushes in 0.1 ms: each loses its flush
    /// beyond that (0.4, 0.4, 3.4 ms). The replicas' wait is taken again
    /// from the counters: S' = max(1.5 − 0.4, 4.5 − 3.4) = 1.1 on every
    /// row, commit' = 0.8 on every row, so R' = 0.3 — also on osd.2's
    /// rows, where a clamped R (0) could not have said that its replicas
    /// now become the ones waited for.
    #[test]
    fn plp_drives_take_the_flush_and_the_replicas_wait_again() {
        let mut r = slow_osd2();
        attribute(&mut r);
        let job = &r.jobs[0];
        let p = with_plp(&r, job).unwrap();
        let (f, f2) = part(&p, Part::DeviceFlush).unwrap();
        assert!(close(f, 1.5) && close(f2, 0.1), "{p:?}");
        let (rep, rep2) = part(&p, Part::Replica).unwrap();
        assert!(close(rep, 2.2) && close(rep2, 0.3), "{p:?}");
        let mean = job.latency_ns.mean / 1e6;
        assert!(close(p.projected_mean_ns / 1e6, mean - 1.4 - 1.9), "{p:?}");
        // One op in flight (no client figures): IOPS scales with the mean.
        let iops = p.projected_iops.unwrap();
        assert!((iops - 200.0 * mean / (mean - 3.3)).abs() < 1e-6, "{p:?}");
        assert!(p
            .line()
            .starts_with("PLP drives (a flush of 0.1 ms): mean "));
        // Unasked: PLP and "like osd.0" (the verdict names osd.2), each
        // moving the mean by 10 % or more, and no wait for copies.
        let kinds: Vec<String> = job
            .projections
            .as_ref()
            .unwrap()
            .iter()
            .map(|p| p.what.clone())
            .collect();
        assert_eq!(
            kinds,
            [
                "PLP drives (a flush of 0.1 ms)",
                "every drive flushing like osd.0's (0.500 ms)",
                "no wait for copies"
            ],
            "{kinds:?}"
        );
    }

    /// Like the pool's fastest OSD: only osd.2 loses (3.0 ms); osd.0's
    /// rows: S' = max(1.5, 1.5) = 1.5, commit 1.2 → R' = 0.3; osd.2's:
    /// commit' = 1.2 → R' = 0.3.
    #[test]
    fn like_the_fastest_osd_moves_only_the_slow_ones() {
        let mut r = slow_osd2();
        attribute(&mut r);
        let p = like_osd(&r, &r.jobs[0], 0).unwrap();
        let (f, f2) = part(&p, Part::DeviceFlush).unwrap();
        assert!(close(f, 1.5) && close(f2, 0.5), "{p:?}");
        let (_, rep2) = part(&p, Part::Replica).unwrap();
        assert!(close(rep2, 0.3), "{p:?}");
    }

    /// Another pool's drive-side shares in place of this one's; the
    /// network stays; a size-1 reference has no replica share, so the
    /// replicas are taken to be as fast as the primary, and said so.
    #[test]
    fn onto_another_pools_drives_keeps_the_network() {
        let mut a = slow_osd2();
        attribute(&mut a);
        let mut b = pool_result([0.6; 3], [0.4; 3], [0.3; 3], [0.1; 3]);
        attribute(&mut b);
        let (ja, jb) = (&a.jobs[0], &b.jobs[0]);
        let p = onto_drives(
            ja,
            jb.attribution.as_ref().unwrap(),
            "with B's drives".into(),
            "B".into(),
            None,
        )
        .unwrap();
        let get = |j: &JobReport, x: Part| share(j.attribution.as_ref().unwrap(), x).unwrap_or(0.0);
        let want = ja.latency_ns.mean
            + DRIVE_PARTS
                .iter()
                .map(|x| get(jb, *x) - get(ja, *x))
                .sum::<f64>();
        assert!((p.projected_mean_ns - want).abs() < 1e-3, "{p:?}");
        assert!(part(&p, Part::ClusterNetwork).is_none());
        assert!(part(&p, Part::Unattributed).is_none());
        assert!(p.assumptions[0].starts_with("the public network"));
        assert!(p
            .assumptions
            .iter()
            .any(|s| s.contains("unattributed time") && s.contains("is kept")));
        // From the same client host the unattributed time goes with the
        // drives too.
        let mut b2 = b.clone();
        let extra = 0.5e6;
        b2.jobs[0].latency_ns.mean += extra;
        attribute(&mut b2);
        let (u_a, u_b) = (
            get(ja, Part::Unattributed),
            get(&b2.jobs[0], Part::Unattributed),
        );
        assert!((u_b - get(jb, Part::Unattributed) - extra).abs() < 1e-3);
        let same = onto_drives(
            ja,
            b2.jobs[0].attribution.as_ref().unwrap(),
            "x".into(),
            "y".into(),
            Some("h"),
        )
        .unwrap();
        let (m, t) = part(&same, Part::Unattributed).unwrap();
        assert!(close(m, u_a / 1e6) && close(t, u_b / 1e6), "{same:?}");
        assert!((same.projected_mean_ns - (want + u_b - u_a)).abs() < 1e-3);
        assert!(same.assumptions.iter().any(|s| s.contains("from host h")));
        // A size-1 reference.
        let mut one = b.clone();
        one.placement.as_mut().unwrap().size = 1;
        attribute(&mut one);
        let p = onto_drives(
            ja,
            one.jobs[0].attribution.as_ref().unwrap(),
            "x".into(),
            "y".into(),
            None,
        )
        .unwrap();
        assert_eq!(part(&p, Part::Replica).unwrap().1, 0.0);
        assert!(p
            .assumptions
            .iter()
            .any(|s| s.contains("as fast as the primary")));
    }

    /// At more than one op in flight the IOPS is projected only while the
    /// OSDs did not queue; an open-loop job's IOPS is its rate.
    #[test]
    fn iops_only_where_the_osds_were_not_saturated() {
        let mut r = slow_osd2();
        attribute(&mut r);
        let mut job = r.jobs[0].clone();
        job.client = Some(ClientLoad {
            asked_in_flight: 16,
            mean_in_flight: 15.8,
            refill_wait_ns: 0.05e6,
        });
        // The queue share is 0.1 ms of ~6 ms: projected, refill included.
        let p = with_plp(&r, &job).unwrap();
        let (m, m2) = (p.mean_ns, p.projected_mean_ns);
        let want = job.iops * (m + 0.05e6) / (m2 + 0.05e6);
        assert!((p.projected_iops.unwrap() - want).abs() < 1e-6);
        assert!(p.iops_basis.contains("15.8 ops in flight"));
        // A queue of a third of the mean: saturated.
        let a = job.attribution.as_mut().unwrap();
        let q = a.mean_ns / 3.0;
        a.shares
            .iter_mut()
            .find(|s| s.part == Part::OsdQueue)
            .unwrap()
            .ns = q;
        let p = without_copies(&job).unwrap();
        assert_eq!(p.projected_iops, None);
        assert!(p.line().contains("IOPS not projected: the OSDs queued ops"));
        job.rate = Some(RateReport {
            asked: 500.0,
            achieved: 499.0,
            arrival: "uniform".into(),
            late_ops: 0,
            scheduled_ops: 100,
            max_backlog: 0,
            final_backlog: 0,
            schedule_error_ns: ScheduleError {
                p50: 0,
                p99: 0,
                max: 0,
            },
            kept_up: true,
        });
        let p = without_copies(&job).unwrap();
        assert!(p.iops_basis.contains("--rate"));
    }

    /// Large writes get no flush projection (the share carries the data's
    /// write); reads none either.
    #[test]
    fn no_flush_projection_for_large_writes_or_reads() {
        let mut r = slow_osd2();
        r.jobs[0].bytes = 300 * (4 << 20);
        attribute(&mut r);
        assert!(with_plp(&r, &r.jobs[0]).is_none());
        r.jobs[0].op = "read".into();
        assert!(with_plp(&r, &r.jobs[0]).is_none());
    }

    /// A faster cluster cable takes its difference off the cluster
    /// network share, never below 0.
    /// The PLP line ranks the drives by what they would gain and names the
    /// ones that flush as fast already.
    #[test]
    fn the_plp_line_names_who_gains() {
        let line = plp_line(&[(0, 0.91e6), (1, 7.9e6), (2, 0.09e6)], "per write").unwrap();
        assert_eq!(
            line,
            "PLP drives (a flush of at most 0.100 ms) would gain: osd.1 7.80 ms per write (its \
             flush 7.90 ms), osd.0 0.810 ms (0.910 ms); osd.2 (0.090 ms) already flushes about as fast"
        );
        let line = plp_line(&[(0, 0.09e6), (1, 0.12e6)], "per write").unwrap();
        assert_eq!(
            line,
            "PLP drives (a flush of at most 0.100 ms) would gain: nothing; osd.0 (0.090 ms), \
             osd.1 (0.120 ms) already flush about as fast"
        );
        assert_eq!(plp_line(&[], "per write"), None);
    }

    #[test]
    fn a_faster_cable_never_goes_below_nothing() {
        let mut r = pool_result([3.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]);
        attribute(&mut r);
        let job = &r.jobs[0];
        let cn = share(job.attribution.as_ref().unwrap(), Part::ClusterNetwork).unwrap();
        assert!(cn > 1e6, "{cn}");
        let p = with_cluster_cable(job, 1e6).unwrap();
        assert!(close(p.mean_ns - p.projected_mean_ns, 1e6));
        let p = with_cluster_cable(job, 100e6).unwrap();
        assert!(close(p.mean_ns - p.projected_mean_ns, cn));
        assert!(p.line().contains("100 ms faster"));
    }
}
