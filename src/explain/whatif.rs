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

use crate::explain::attribution::{counter_ns, device_flush_ns, slowest_replica_ns};
use crate::result::projection::{Band, Kind, ProjectedPart, Projection};
use crate::result::{Attribution, BenchResult, JobReport, PaceProbe, Part, ReplicaSet};
use crate::units::ms_prose as ms;

/// A device flush on a drive with power-loss protection, ns: it
/// acknowledges from protected RAM in 0.02–0.2 ms; the projection takes
/// 0.1 ms.
pub const PLP_FLUSH_NS: f64 = 0.1e6;

/// With more than one op in flight, an OSD queue share of this fraction of
/// the mean or more means the OSDs were saturated: no IOPS projection.
pub const SATURATED_QUEUE_SHARE: f64 = 0.2;

/// Flush projections are made for writes of at most this many bytes.
pub const FLUSH_PROJECTION_MAX_BYTES: f64 = crate::explain::attribution::SMALL_WRITE_BYTES;

/// A projection is shown unasked only when it moves the mean by at least
/// this fraction.
pub const SHOWN_FROM: f64 = 0.1;

/// A projection that moves the mean by at least this fraction changes the
/// ops' pace, which it keeps as measured: it carries its kind's [`Band`].
pub const BAND_FROM: f64 = 0.25;

/// The band of a projection of `kind` that changes the pace (see
/// [`BAND_FROM`]), on a pool with copies or of one copy, with the pace
/// probe's cut (`paced`) or without; `None` where the project's rig found
/// it within ±15 % in every pair. `deep`: the job kept more than one op in
/// flight.
pub fn band_of(kind: Kind, copies: bool, paced: bool, deep: bool) -> Option<Band> {
    // perf/projections.sh, 4 KiB QD1 writes, 3 OSDs in RAM, 3 ms added per
    // flush, 3 alternated pairs (docs/explain.md): measured / projected − 1
    // per pair. Without the pace probe: −19 to +1 % for the flush caps, PLP
    // and like:osd.N on a size-3 pool; −25 to −34 % for the flush cap on
    // size 1 (at a slow drive's pace the rest of the path took ~0.3 ms
    // longer, which a flush projection keeps). With it: −20 to +14 % on
    // size 3; like:osd.0 on the drive rig's size-2 pool of two OSDs, one 3
    // ms slow (tests/cluster/device_cluster.rs), medians −16, −21, −25 and
    // −27 % over four runs; −31 to −3 % on size 1. No-copy-wait against size 1 either way: −30 to −38 % (the
    // OSDs no longer write the copies).
    //
    // Re-measured on 2026-12-07 with the host busier (the CI's cluster
    // tests, and the drive rig by hand): like:osd.0 on the drive rig's
    // size-2 pool −45, −7, −30 % per pair (CI medians −41 and −33 %), PLP −35,
    // +7, −18 %; diagnose's slow replica on the switched rig −35 % (paced)
    // and −57 % (a run without the probe). At a slow drive's pace every kept
    // part is slower (the OSD's own work, the client's wake-ups, the fast
    // drive's own flush: 0.31 against 0.19 ms undelayed), more than the
    // read probe's cut takes off: the bands below take these in.
    //
    // At QD4 and QD16 (the same script with --qd, with the probe,
    // 2026-12-07): the flush caps, PLP and like:osd.0 on size 3 −15 to +17 %
    // (QD4 medians −8 to −10 %, QD16 +2 to +11 %); the flush cap on size 1
    // −14 to +6 %; no-copy-wait against size 1 −44 to −57 % (at depth the
    // OSDs' CPU is the limit, and one copy needs a third of it). At 64 KiB
    // QD1: size 3 −25 to +10 %; size 1 −19 to +19 %; no-copy-wait −23 to
    // −35 %.
    let band = |low_pct, high_pct| Some(Band { low_pct, high_pct });
    match (kind, copies, paced, deep) {
        (Kind::Flush, true, _, true) => band(-15.0, 20.0),
        (Kind::Flush, false, _, true) => None,
        (Kind::NoCopyWait, _, _, true) => band(-60.0, -40.0),
        (Kind::Flush, true, false, false) => band(-60.0, 5.0),
        (Kind::Flush, true, true, false) => band(-50.0, 15.0),
        (Kind::Flush, false, false, false) => band(-35.0, -20.0),
        (Kind::Flush, false, true, false) => band(-35.0, 20.0),
        (Kind::NoCopyWait, ..) => band(-40.0, -20.0),
        (Kind::Drives | Kind::ClusterCable, ..) => None,
    }
}

impl Projection {
    /// The projection in one line: "PLP drives (…): mean 7.30 → 0.85 ms,
    /// IOPS 137 → 1,180".
    pub fn line(&self) -> String {
        if let Some(why) = &self.unchanged {
            return format!("{}: no change, {why}", self.what);
        }
        let clamped = self
            .clamped
            .as_ref()
            .map_or(String::new(), |c| format!(" ({c})"));
        let band = self.band.map_or(String::new(), |b| {
            format!(
                " ({:+.0}/{:+.0} % on the project's rig)",
                b.low_pct, b.high_pct
            )
            .replace('-', "−")
        });
        let iops = match self.projected_iops {
            Some(p) => format!(
                ", IOPS {} → {}",
                crate::units::thousands(self.iops.round() as u64),
                crate::units::thousands(p.round() as u64)
            ),
            None => format!(" (IOPS not projected: {})", self.iops_basis),
        };
        format!(
            "{}: mean {} → {} ms{band}{iops}{clamped}",
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
/// mean moves by their differences. With nothing moved it is a projection
/// of no change when `unchanged` says why, else `None`; `None` too when the
/// projected mean would not be positive. `bound` caps the IOPS.
#[allow(clippy::too_many_arguments)]
fn project(
    job: &JobReport,
    a: &Attribution,
    kind: Kind,
    what: String,
    reference: String,
    moved: Vec<ProjectedPart>,
    assumptions: Vec<String>,
    unchanged: Option<String>,
    limits: Limits,
) -> Option<Projection> {
    let mut assumptions = assumptions;
    let delta: f64 = moved.iter().map(|p| p.projected_ns - p.measured_ns).sum();
    // (NaN is not positive either.)
    let positive = |x: f64| x > 0.0;
    if !positive(a.mean_ns) {
        return None;
    }
    let unchanged = unchanged.filter(|_| delta.abs() < 1e-6 * a.mean_ns);
    if moved.is_empty() && unchanged.is_none() {
        return None;
    }
    let mut projected = a.mean_ns + delta;
    if unchanged.is_some() {
        projected = a.mean_ns;
    }
    if !positive(projected) {
        return None;
    }
    // The faster pace: what the kept parts lose of their wake-ups.
    let mut pace_ns = None;
    match limits
        .pace
        .filter(|_| unchanged.is_none() && projected < a.mean_ns)
    {
        Some(p) => {
            let moved_ns: f64 = moved.iter().map(|m| m.measured_ns).sum();
            let kept = a.mean_ns - moved_ns - share(a, Part::PublicNetwork).unwrap_or(0.0);
            let gap = job_gap_ns(job);
            let cut = pace_cut(&p, gap, a.mean_ns, projected).min(kept.max(0.0));
            if cut > 0.0 {
                projected -= cut;
                pace_ns = Some(cut);
                let at = |g: f64| p.read_ns_at(g).map_or("?".into(), ms);
                assumptions.push(format!(
                    "at the faster pace the path's threads wake from idle sooner: {} ms of what \
                     is kept comes off (the pace probe after the run: a 4 KiB read took {} ms \
                     at this run's {} ms between ops, {} ms at the projected {} ms)",
                    ms(cut),
                    at(gap),
                    ms(gap),
                    at(gap * projected / a.mean_ns),
                    ms(gap * projected / a.mean_ns)
                ));
            }
        }
        None if kind == Kind::Flush && unchanged.is_none() => {
            assumptions.push(kept_at_a_slow_pace());
        }
        None => {}
    }
    let (projected_iops, iops_basis, projected) =
        project_iops(job, a, projected, limits.cpu.as_ref());
    // A pool with copies: its split waited for some.
    let copies = [
        Part::ClusterNetwork,
        Part::Messengers,
        Part::Replica,
        Part::Replication,
    ]
    .iter()
    .any(|p| share(a, *p).is_some_and(|v| v > 0.0));
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
        band: band_of(kind, copies, pace_ns.is_some(), limits.deep)
            .filter(|_| (projected - a.mean_ns).abs() >= BAND_FROM * a.mean_ns),
        unchanged,
        clamped: None,
        pace_ns,
    })
}

/// The job's time from one op's start to the next's, ns.
fn job_gap_ns(job: &JobReport) -> f64 {
    if job.iops > 0.0 {
        1e9 / job.iops
    } else {
        0.0
    }
}

/// What a projection is held to beside its moved parts.
#[derive(Debug, Clone, Default)]
struct Limits {
    /// The OSDs' CPU (see [`CpuBound`]).
    cpu: Option<CpuBound>,
    /// The run's pace probe, for a closed-loop write job.
    pace: Option<PaceProbe>,
    /// The job kept more than one op in flight (its bands differ).
    deep: bool,
}

/// The limits of `job` of `result`.
fn limits(result: &BenchResult, job: &JobReport) -> Limits {
    Limits {
        cpu: cpu_bound(result, job),
        pace: result
            .pace
            .clone()
            .filter(|_| job.rate.is_none() && job.op == "write"),
        deep: queue_depth(result) > 1,
    }
}

/// The ops `result`'s workload keeps in flight: rados `-t`, rbd iodepth ×
/// numjobs.
fn queue_depth(result: &BenchResult) -> u64 {
    match &result.workload {
        crate::result::Workload::Rados(w) => w.concurrent_ios,
        crate::result::Workload::Rbd(w) => w.iodepth * w.numjobs,
    }
}

/// What the wake-ups lose from a mean of `mean_ns` (ops `gap_ns` apart) to
/// a projected `projected_ns`, ns: the time between ops scales with the
/// mean (a closed loop), and a read at each pace takes what the probe
/// measured at it ([`PaceProbe::read_ns_at`]); solved for the mean they
/// land on.
fn pace_cut(p: &PaceProbe, gap_ns: f64, mean_ns: f64, projected_ns: f64) -> f64 {
    let Some(at_run) = p.read_ns_at(gap_ns) else {
        return 0.0;
    };
    let mut m = projected_ns;
    for _ in 0..16 {
        let at = p.read_ns_at(gap_ns * m / mean_ns).unwrap_or(at_run);
        m = projected_ns - (at_run - at).max(0.0);
    }
    (projected_ns - m).max(0.0)
}

/// The IOPS at a projected mean, its basis (see the module's docs), and
/// the mean again: where the OSDs' CPU bounds the IOPS, the ops in flight
/// wait that much longer.
fn project_iops(
    job: &JobReport,
    a: &Attribution,
    projected_ns: f64,
    bound: Option<&CpuBound>,
) -> (Option<f64>, String, f64) {
    if let Some(r) = &job.rate {
        return (
            None,
            format!("an open-loop job's IOPS is its --rate ({:.0}/s)", r.asked),
            projected_ns,
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
            projected_ns,
        );
    }
    let iops = job.iops * (a.mean_ns + refill) / (projected_ns + refill);
    if let Some(b) = bound.filter(|b| iops > b.iops && b.iops >= job.iops) {
        // Little's law again: the slots cycle no faster than the bound.
        let mean = (in_flight / b.iops * 1e9 - refill)
            .max(projected_ns)
            .min(a.mean_ns);
        return (
            Some(b.iops),
            format!(
                "bounded by the OSDs' CPU: on {host} they used {:.2} of the {} cores they may \
                 use at {} IOPS, so at most {} IOPS (Little's law alone would give {})",
                b.busy,
                b.cores,
                crate::units::thousands(job.iops.round() as u64),
                crate::units::thousands(b.iops.round() as u64),
                crate::units::thousands(iops.round() as u64),
                host = b.host,
            ),
            mean,
        );
    }
    (
        Some(iops),
        format!(
            "Little's law over the job's {in_flight:.1} ops in flight (the OSDs' queue was {} ms: \
             not saturated)",
            ms(queue)
        ),
        projected_ns,
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
        None,
        Limits::default(),
    )
}

/// One primary OSD row of a job's split: what its ops waited for beyond
/// the primary's own commit, part by part (ns, the row's own means).
#[derive(Debug, Clone)]
struct RowWait<'a> {
    /// The row's ops (its weight in the job's split).
    ops: f64,
    /// Its PGs' replica (or shard) sets.
    sets: &'a [ReplicaSet],
    /// Its device-flush share.
    flush: Option<f64>,
    /// The cluster-network share (the whole OSDs' round trip where no echo
    /// split off the messengers).
    cable: f64,
    /// The OSD messengers share.
    messengers: f64,
    /// The replica share (the slowest replica's own time beyond the
    /// primary's commit).
    replica: f64,
    /// The unsplit wait for the copies (erasure-coded, or no replica
    /// counters), where there is one.
    unsplit: Option<f64>,
    /// How much sooner the slowest copy's repop ended than the primary's
    /// own commit, from the counters: `commit_lat − subop_w` of the slowest
    /// copy (`None` where either is unread).
    own_ahead: Option<f64>,
}

impl RowWait<'_> {
    /// The whole wait for the copies beyond the primary's own commit.
    fn wait(&self) -> f64 {
        self.unsplit
            .unwrap_or(self.cable + self.messengers + self.replica)
    }

    /// The pool keeps copies of this row's objects.
    fn has_copies(&self) -> bool {
        !self.sets.is_empty()
    }

    /// Whether the copies, not the primary's own commit, ended the wait:
    /// where the slowest copy took longer than the primary's commit (a
    /// replica share above 0), or where its repop and the round trip the
    /// row shows outlasted that commit. A slow primary's row shows a small
    /// round trip that is its own (its commit callback waiting to run), not
    /// the copies': there the own commit was the later. An unsplit wait, or
    /// unread counters, cannot tell: any wait counts.
    fn copies_later(&self) -> bool {
        match (self.unsplit, self.own_ahead) {
            (Some(u), _) => u > 0.0,
            (None, _) if self.replica > 0.0 => true,
            (None, Some(ahead)) => ahead - (self.cable + self.messengers) <= 0.0,
            (None, None) => self.wait() > 0.0,
        }
    }
}

/// The rows of `job` (primary OSD by primary OSD) that have a split.
fn row_waits<'a>(result: &'a BenchResult, job: &JobReport) -> Vec<RowWait<'a>> {
    let mut out = Vec::new();
    for o in &result.osds {
        for row in o.client.iter().filter(|r| r.op == job.op && r.ops > 0) {
            let Some(ra) = &row.attribution else { continue };
            let get = |p| share(ra, p).unwrap_or(0.0).max(0.0);
            out.push(RowWait {
                ops: row.ops as f64,
                sets: &o.replica_sets,
                flush: share(ra, Part::DeviceFlush),
                cable: get(Part::ClusterNetwork),
                messengers: get(Part::Messengers),
                replica: get(Part::Replica),
                unsplit: share(ra, Part::Replication).map(|v| v.max(0.0)),
                own_ahead: counter_ns(result, o.osd, |c| c.commit_lat)
                    .zip(slowest_replica_ns(&o.replica_sets, |r| {
                        counter_ns(result, r, |c| c.subop_w_latency)
                    }))
                    .map(|(c, s)| c - s),
            });
        }
    }
    out
}

/// How one row changes: the primary's own commit `own` ns shorter, the
/// slowest copy's path `copies` ns shorter (its drive faster, or its cable),
/// the round trip at most `cable_cut` ns shorter.
#[derive(Debug, Clone, Copy, Default)]
struct RowChange {
    own: f64,
    copies: f64,
}

/// A row's projected parts: (flush, cable, messengers, replica, unsplit).
#[derive(Debug, Clone, Copy, Default)]
struct RowParts {
    flush: f64,
    cable: f64,
    messengers: f64,
    replica: f64,
    unsplit: f64,
}

impl RowWait<'_> {
    fn parts(&self) -> RowParts {
        RowParts {
            flush: self.flush.unwrap_or(0.0),
            cable: self.cable,
            messengers: self.messengers,
            replica: self.replica,
            unsplit: self.unsplit.unwrap_or(0.0),
        }
    }

    /// The row's parts after `change`: the primary waits for the later of
    /// its own commit and its slowest copy's path. Where the copies were
    /// the later ([`RowWait::copies_later`]) they were so by the measured
    /// wait `w` beyond its own commit; else its own commit was, by `slack`
    /// (estimated, never below 0). So the op gets `min(w + own, copies)`
    /// faster in the one case, `min(own, slack + copies)` in the other:
    /// never slower, and not at all where a change binds nothing.
    fn after(&self, change: RowChange, slack: f64, hidden_rt: (f64, f64)) -> RowParts {
        let mut p = self.parts();
        let own = change.own.clamp(0.0, p.flush);
        let copies = change.copies.max(0.0);
        if !self.has_copies() {
            p.flush -= own;
            return p;
        }
        let w = self.wait();
        let gain = if self.copies_later() {
            (w + own).min(copies)
        } else {
            own.min(slack + copies)
        };
        p.flush -= own;
        // The wait beyond the (new) own commit moves by own − gain.
        let dw = own - gain;
        if let Some(u) = self.unsplit {
            p.unsplit = (u + dw).max(0.0);
            return p;
        }
        if dw >= 0.0 {
            // More of the copies' path shows: first a round trip that the
            // primary's own commit hid (the pool's), then the replica's.
            let (hc, hm) = if self.copies_later() {
                (0.0, 0.0)
            } else {
                hidden_rt
            };
            let c = dw.min(hc);
            let m = (dw - c).min(hm);
            p.cable += c;
            p.messengers += m;
            p.replica += dw - c - m;
        } else {
            // Less of it: off the replica's time first, then the messengers',
            // then the cable's.
            let mut less = -dw;
            for v in [&mut p.replica, &mut p.messengers, &mut p.cable] {
                let d = less.min(*v);
                *v -= d;
                less -= d;
            }
        }
        p
    }
}

/// The rows' parts after `change(row)`, combined by op weight: (measured,
/// projected) per part.
fn moved_parts(
    rows: &[RowWait<'_>],
    change: impl Fn(&RowWait<'_>) -> RowChange,
) -> Vec<ProjectedPart> {
    let n: f64 = rows.iter().map(|r| r.ops).sum();
    if n <= 0.0 {
        return Vec::new();
    }
    // The round trip the rows that waited for their copies measured: what
    // a row whose own commit hid it would show once its commit is faster.
    let waited: Vec<&RowWait<'_>> = rows
        .iter()
        .filter(|r| r.unsplit.is_none() && r.copies_later())
        .collect();
    let wn: f64 = waited.iter().map(|r| r.ops).sum();
    let hidden_rt = if wn > 0.0 {
        (
            waited.iter().map(|r| r.ops * r.cable).sum::<f64>() / wn,
            waited.iter().map(|r| r.ops * r.messengers).sum::<f64>() / wn,
        )
    } else {
        (0.0, 0.0)
    };
    let (mut before, mut after) = (RowParts::default(), RowParts::default());
    for r in rows {
        let w = r.ops / n;
        let slack = slack_ns(r, hidden_rt.0 + hidden_rt.1);
        let (b, a) = (r.parts(), r.after(change(r), slack, hidden_rt));
        for (acc, v) in [(&mut before, b), (&mut after, a)] {
            acc.flush += w * v.flush;
            acc.cable += w * v.cable;
            acc.messengers += w * v.messengers;
            acc.replica += w * v.replica;
            acc.unsplit += w * v.unsplit;
        }
    }
    let any = |f: fn(&RowWait<'_>) -> bool| rows.iter().any(f);
    [
        (
            Part::DeviceFlush,
            before.flush,
            after.flush,
            any(|r| r.flush.is_some()),
        ),
        (
            Part::ClusterNetwork,
            before.cable,
            after.cable,
            any(|r| r.unsplit.is_none() && r.has_copies()),
        ),
        (
            Part::Messengers,
            before.messengers,
            after.messengers,
            before.messengers + after.messengers > 0.0,
        ),
        (
            Part::Replica,
            before.replica,
            after.replica,
            any(|r| r.unsplit.is_none() && r.has_copies()),
        ),
        (
            Part::Replication,
            before.unsplit,
            after.unsplit,
            any(|r| r.unsplit.is_some()),
        ),
    ]
    .into_iter()
    .filter(|(_, b, a, present)| *present && (a - b).abs() > 1e-6)
    .map(|(part, measured_ns, projected_ns, _)| ProjectedPart {
        part,
        measured_ns,
        projected_ns,
    })
    .collect()
}

/// How much sooner a row's primary committed than its slowest copy came
/// back, where it waited for none: its own commit less the slowest
/// replica's repop time and the round trip (the pool's, where its own
/// commit hid the row's), never below 0; 0 where unknown, which gives the
/// smaller gain.
fn slack_ns(r: &RowWait<'_>, round_trip: f64) -> f64 {
    if r.copies_later() || r.unsplit.is_some() {
        return 0.0;
    }
    r.own_ahead.map_or(0.0, |ahead| {
        (ahead - round_trip.max(r.cable + r.messengers)).max(0.0)
    })
}

/// The mean over a primary's PGs (by PG count) of the least of `f` over
/// each PG's copies: how much sooner an unsplit wait for shards at least
/// ends when each shard's OSD gets `f` faster.
fn least_over_sets(sets: &[ReplicaSet], f: impl Fn(i32) -> f64) -> f64 {
    let (mut sum, mut pgs) = (0.0, 0u64);
    for s in sets.iter().filter(|s| s.pgs > 0 && !s.osds.is_empty()) {
        let least = s.osds.iter().map(|o| f(*o)).fold(f64::INFINITY, f64::min);
        sum += least * f64::from(s.pgs);
        pgs += u64::from(s.pgs);
    }
    if pgs > 0 {
        sum / pgs as f64
    } else {
        0.0
    }
}

/// `job` of `result` with every OSD's device flush per transaction made
/// at most `cap`; `None` for reads, large writes, or where no row has a
/// flush share. `what` names the change, `binds_nothing` says why nothing
/// moves when no flush is above the cap.
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
    let rows = row_waits(result, job);
    if !rows.iter().any(|r| r.flush.is_some()) {
        return None;
    }
    let loss = |osd: i32| device_flush_ns(result, osd).map_or(0.0, |f| (f - f.min(cap)).max(0.0));
    // The slowest copy's path: its repop time (subop_w) less its drive's
    // loss, against the same before; for an unsplit wait, the least loss
    // among the copies.
    let subop = |osd: i32| counter_ns(result, osd, |c| c.subop_w_latency);
    let copies = |r: &RowWait<'_>| {
        if r.unsplit.is_some() {
            return least_over_sets(r.sets, loss);
        }
        let before = slowest_replica_ns(r.sets, subop);
        let after = slowest_replica_ns(r.sets, |o| Some(subop(o)? - loss(o)));
        before.zip(after).map_or(0.0, |(b, x)| (b - x).max(0.0))
    };
    let moved = moved_parts(&rows, |r| RowChange {
        own: r.flush.map_or(0.0, |f| f - f.min(cap)),
        copies: copies(r),
    });
    let slowest = result
        .osds
        .iter()
        .filter_map(|o| device_flush_ns(result, o.osd).map(|f| (o.osd, f)))
        .max_by(|x, y| x.1.total_cmp(&y.1));
    let unchanged = slowest.filter(|(_, f)| *f <= cap).map(|(osd, f)| {
        format!(
            "every flush is already at most that (the slowest, osd.{osd}'s, {} ms)",
            ms(f)
        )
    });
    if rows.iter().any(|r| r.has_copies()) {
        assumptions.push(
            "the primary waits for the later of its own commit and its slowest copy: each gets \
             faster by its own drive's loss (a copy's from its repop time, subop_w), so a \
             faster primary gains nothing while a slower copy holds it"
                .into(),
        );
    }
    if rows.iter().any(|r| r.unsplit.is_some()) {
        assumptions.push(
            "the wait for the copies is not split into cable and drives: it is taken to end \
             sooner by the least loss among each PG's copies"
                .into(),
        );
    }
    project(
        job,
        a,
        Kind::Flush,
        what,
        reference,
        moved,
        assumptions,
        unchanged,
        limits(result, job),
    )
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

/// `job` as if no drive flushed slower than `osd`'s (this run's own figure
/// for it): a cap, so drives faster than it stay as they are.
pub fn like_osd(result: &BenchResult, job: &JobReport, osd: i32) -> Option<Projection> {
    let f = device_flush_ns(result, osd)?;
    with_flush(
        result,
        job,
        format!(
            "every drive flushing no slower than osd.{osd}'s ({} ms)",
            ms(f)
        ),
        format!("osd.{osd}'s device flush per transaction in this run"),
        f,
        vec![format!(
            "each transaction's device flush becomes osd.{osd}'s {} ms where it was slower",
            ms(f)
        )],
    )
}

/// `job` of `result` with a cluster network round trip `less_ns` shorter.
/// Each row gains at most the round trip its back network measured (the
/// cluster-network share): the cable cannot go below nothing, and a row
/// whose own commit hid its copies' path gains nothing.
pub fn with_cluster_cable(
    result: &BenchResult,
    job: &JobReport,
    less_ns: f64,
) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    let rows = row_waits(result, job);
    if !rows.iter().any(|r| r.has_copies() && r.wait() > 0.0) {
        return None;
    }
    let cut = |r: &RowWait<'_>| match r.unsplit {
        Some(u) => less_ns.min(u),
        None => less_ns.min(r.cable),
    };
    let moved = moved_parts(&rows, |r| RowChange {
        own: 0.0,
        copies: cut(r),
    });
    let n: f64 = rows.iter().map(|r| r.ops).sum();
    let mean_cut = rows.iter().map(|r| r.ops * cut(r)).sum::<f64>() / n;
    let mut assumptions = vec![format!(
        "the primary's copies come back {} ms sooner, at most by the cable's own round trip \
         (the cluster-network share)",
        ms(less_ns)
    )];
    if rows.iter().any(|r| r.unsplit.is_some()) {
        assumptions.push(
            "the wait for the copies is not split into cable and drives: its whole is taken as \
             the cable's"
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
    let clamped = (mean_cut < less_ns - 1e3).then(|| {
        format!(
            "held to the cable's measured round trip: {} ms per op, on average",
            ms(mean_cut)
        )
    });
    let mut p = project(
        job,
        a,
        Kind::ClusterCable,
        format!("a cluster network {} ms faster per round trip", ms(less_ns)),
        "this run's cluster-network share".into(),
        moved,
        assumptions,
        None,
        limits(result, job),
    )?;
    p.clamped = clamped;
    Some(p)
}

/// `job` of `result` with no wait for copies: the floor any layout with
/// copies stands on (every row's wait beyond its own commit gone).
pub fn without_copies(result: &BenchResult, job: &JobReport) -> Option<Projection> {
    let a = job.attribution.as_ref()?;
    let rows = row_waits(result, job);
    if rows.is_empty() {
        return None;
    }
    let moved = moved_parts(&rows, |r| RowChange {
        own: 0.0,
        copies: r.wait(),
    });
    let named: Vec<&str> = moved.iter().map(|p| p.part.label()).collect();
    let unchanged = if !rows.iter().any(RowWait::has_copies) {
        Some("a pool of one copy waits for no copies".to_string())
    } else if moved.is_empty() {
        Some("every write's own commit outlasted its copies: no wait for them to take off".into())
    } else {
        None
    };
    let reference = if named.is_empty() {
        "this run's split".to_string()
    } else {
        format!(
            "this run's {} {}",
            and_list(&named),
            if named.len() == 1 { "share" } else { "shares" }
        )
    };
    project(
        job,
        a,
        Kind::NoCopyWait,
        "no wait for copies".into(),
        reference,
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
        unchanged,
        limits(result, job),
    )
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The most IOPS the OSDs' measured CPU allows: on each host, the job's
/// IOPS scaled by the cores its OSDs may use over the cores they used (the
/// OSDs' own CPU, which grows with the IOPS; other processes' load is not
/// counted, so the bound is the most the OSDs could do with the host to
/// themselves); the least over the hosts. `None` unless every OSD's CPU was
/// measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuBound {
    /// The bound, IOPS.
    pub iops: f64,
    /// The host it comes from ("this host" where not known).
    pub host: String,
    /// The cores its OSDs may use (the fewest any of them may).
    pub cores: f64,
    /// The cores its OSDs used during the run.
    pub busy: f64,
}

/// See [`CpuBound`].
pub fn cpu_bound(result: &BenchResult, job: &JobReport) -> Option<CpuBound> {
    if job.iops <= 0.0 || result.osds.is_empty() {
        return None;
    }
    let mut hosts: Vec<CpuBound> = Vec::new();
    for o in &result.osds {
        let c = o.cpu.as_ref()?;
        let used = c.cores_busy?;
        let cores = crate::explain::cpu::limit_cores(c)?;
        let host = c.host.clone().unwrap_or_else(|| "this host".into());
        match hosts.iter_mut().find(|h| h.host == host) {
            Some(h) => {
                h.cores = h.cores.min(cores);
                h.busy += used;
            }
            None => hosts.push(CpuBound {
                iops: 0.0,
                host,
                cores,
                busy: used,
            }),
        }
    }
    hosts
        .into_iter()
        .filter(|h| h.busy > 0.0 && h.cores > 0.0)
        .map(|h| CpuBound {
            iops: job.iops * h.cores / h.busy,
            ..h
        })
        .min_by(|a, b| a.iops.total_cmp(&b.iops))
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
    out.extend(without_copies(result, job));
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
            format!("drives flushing in at most {} ms", ms(ns)),
            "the flush asked for (--what-if flush:…)".into(),
            ns,
            vec![format!(
                "each transaction's device flush becomes at most {} ms",
                ms(ns)
            )],
        ),
        Ask::LikeOsd(osd) => like_osd(result, job, osd),
        Ask::ClusterRtt(ns) => with_cluster_cable(result, job, ns),
        Ask::NoCopyWait => without_copies(result, job),
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
    use crate::explain::attribute;
    use crate::explain::attribution::tests::pool_result;
    use crate::result::counters::AvgDelta;
    use crate::result::{ClientLoad, RateReport, ScheduleError};

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
        // osd.2's rows waited for no copy: its own commit (4.2 ms) hid
        // their path, the round trip the other rows measured (0.3 ms) and
        // its replicas' 1.5 ms, with 2.4 ms to spare. With its flush 3.4 ms
        // faster its copies are waited for again: 0.3 ms of round trip and
        // 0.3 of replica show, a third of the rows: +0.1 ms of cable.
        let (c, c2) = part(&p, Part::ClusterNetwork).unwrap();
        assert!(close(c, 0.2) && close(c2, 0.3), "{p:?}");
        let mean = job.latency_ns.mean / 1e6;
        assert!(
            close(p.projected_mean_ns / 1e6, mean - 1.4 - 1.9 + 0.1),
            "{p:?}"
        );
        // One op in flight (no client figures): IOPS scales with the mean.
        let iops = p.projected_iops.unwrap();
        assert!((iops - 200.0 * mean / (mean - 3.2)).abs() < 1e-6, "{p:?}");
        assert!(p
            .line()
            .starts_with("PLP drives (a flush of 0.1 ms): mean "));
        // It halves the mean: the ops' pace changes, which the projection
        // keeps as measured, so it carries its kind's measured band.
        assert_eq!(p.band, band_of(Kind::Flush, true, false, false));
        let band = "ms (−60/+5 % on the project's rig), IOPS";
        assert!(p.line().contains(band), "{}", p.line());
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
                "every drive flushing no slower than osd.0's (0.500 ms)",
                "no wait for copies"
            ],
            "{kinds:?}"
        );
    }

    /// The pace probe: a read's latency at a gap, linear in the gap's
    /// logarithm between the sets; and the mean a projection lands on,
    /// solved by hand for sets (gap, mean) of (0.3, 0.3) back to back,
    /// (0.5, 0.36), (1, 0.4), (2, 0.5), (4, 0.6), (8, 0.76) ms and a run of
    /// 8 ms between ops projected to 1.8 ms before its pace: m = 1.8 − (0.76
    /// − (0.4 + 0.1 log2 m)), m = 1.498336 ms, so 0.301664 ms off.
    #[test]
    fn the_pace_takes_off_the_wake_ups_the_faster_pace_saves() {
        let p = PaceProbe {
            sets: [
                (0.3, 0.3),
                (8.0, 0.76),
                (0.5, 0.36),
                (1.0, 0.4),
                (2.0, 0.5),
                (4.0, 0.6),
            ]
            .iter()
            .map(|&(g, m): &(f64, f64)| crate::result::PaceSet {
                gap_ns: g * 1e6,
                reads: 40,
                mean_ns: m * 1e6,
            })
            .collect(),
        };
        assert_eq!(p.read_ns_at(20e6), Some(0.76e6));
        assert_eq!(p.read_ns_at(0.1e6), Some(0.3e6));
        // Between 2 and 4 ms: 0.5 + 0.1 ln 1.5 / ln 2.
        assert!((p.read_ns_at(3e6).unwrap() - 0.5584963e6).abs() < 1.0);
        let cut = pace_cut(&p, 8e6, 8e6, 1.8e6);
        assert!((cut - 0.301664e6).abs() < 1.0, "{cut}");
        // No faster pace, nothing off.
        assert_eq!(pace_cut(&p, 8e6, 8e6, 8e6), 0.0);
        // Applied to a projection: the PLP drives of a slow pool come that
        // much lower, say so, and a change that binds nothing stays put.
        let mut r = slow_osd2();
        attribute(&mut r);
        let before = with_plp(&r, &r.jobs[0]).unwrap();
        assert_eq!(before.pace_ns, None);
        r.pace = Some(p.clone());
        let job = &r.jobs[0];
        let after = with_plp(&r, job).unwrap();
        let off = after.pace_ns.expect("a pace cut");
        let mean = job.attribution.as_ref().unwrap().mean_ns;
        let want = pace_cut(&p, 1e9 / job.iops, mean, before.projected_mean_ns);
        assert!((off - want).abs() < 1.0, "{off} vs {want}");
        assert!((before.projected_mean_ns - after.projected_mean_ns - off).abs() < 1.0);
        assert!(
            after
                .assumptions
                .iter()
                .any(|a| a.contains("wake from idle sooner")),
            "{after:?}"
        );
        let same = asked(&r, job, Ask::Flush(100e6)).unwrap();
        assert_eq!((same.projected_mean_ns, same.pace_ns), (same.mean_ns, None));
    }

    /// A change that binds nothing moves nothing: a flush cap above every
    /// flush, "like" the slowest drive, a pool of one copy without copies.
    /// Said as no change, not as a forecast.
    #[test]
    fn a_change_that_binds_nothing_moves_nothing() {
        let mut r = slow_osd2();
        attribute(&mut r);
        let job = &r.jobs[0];
        for p in [
            asked(&r, job, Ask::Flush(100e6)).unwrap(),
            like_osd(&r, job, 2).unwrap(),
        ] {
            assert_eq!(p.projected_mean_ns, p.mean_ns, "{p:?}");
            assert_eq!(p.projected_iops, Some(p.iops), "{p:?}");
            assert!(p.parts.is_empty(), "{p:?}");
            assert!(
                p.line().ends_with(
                    "no change, every flush is already at most that (the slowest, osd.2's, 3.50 ms)"
                ),
                "{}",
                p.line()
            );
        }
        assert!(asked(&r, job, Ask::Flush(100e6))
            .unwrap()
            .line()
            .starts_with("drives flushing in at most 100 ms: no change"));
        let mut one = pool_result([0.0; 3], [0.4; 3], [0.3; 3], [0.1; 3]);
        one.placement.as_mut().unwrap().size = 1;
        for o in &mut one.osds {
            o.replica_sets.clear();
        }
        attribute(&mut one);
        let p = without_copies(&one, &one.jobs[0]).unwrap();
        assert_eq!(p.projected_mean_ns, p.mean_ns);
        assert!(p
            .line()
            .ends_with("no change, a pool of one copy waits for no copies"));
    }

    /// A faster part never forecasts a slower pool: every flush cap from
    /// above the slowest drive down to nothing, on pools where the primary
    /// or a replica is the slow one, and where the replicas' repop times
    /// carry another pool's traffic (shared OSDs: subop_w far above what
    /// this pool's primaries waited), moves the mean down or not at all, and
    /// a lower cap never gives a higher mean.
    #[test]
    fn a_faster_part_never_forecasts_a_slower_pool() {
        let pools = [
            slow_osd2(),
            pool_result([3.8; 3], [1.5; 3], [1.2; 3], [0.5; 3]),
            // Shared OSDs: the replicas' subop_w is 9 ms (another pool's
            // large writes), the primaries waited 1.3 ms beyond prepare.
            pool_result([1.3; 3], [9.0; 3], [1.0; 3], [0.6; 3]),
            // The primaries' own commit the slowest everywhere.
            pool_result([2.0; 3], [0.5; 3], [2.0; 3], [1.5; 3]),
        ];
        for mut r in pools {
            attribute(&mut r);
            let job = r.jobs[0].clone();
            let mut last = job.latency_ns.mean;
            for cap_us in [
                10_000.0, 4_000.0, 3_000.0, 1_000.0, 500.0, 300.0, 100.0, 10.0, 0.0,
            ] {
                let p = asked(&r, &job, Ask::Flush(cap_us * 1e3)).unwrap();
                assert!(
                    p.projected_mean_ns <= p.mean_ns + 1e-6,
                    "{cap_us} µs: {p:?}"
                );
                assert!(p.projected_mean_ns <= last + 1e-6, "{cap_us} µs: {p:?}");
                last = p.projected_mean_ns;
            }
            for less_us in [1.0, 100.0, 1_000.0, 100_000.0] {
                if let Some(p) = with_cluster_cable(&r, &job, less_us * 1e3) {
                    assert!(p.projected_mean_ns <= p.mean_ns + 1e-6, "{p:?}");
                }
            }
            let p = without_copies(&r, &job).unwrap();
            assert!(p.projected_mean_ns <= p.mean_ns + 1e-6, "{p:?}");
        }
    }

    /// One slow primary among fast replicas (as perf/projections.sh's
    /// one-slow-OSD runs measured it): its rows wait 0.03 ms beyond its own
    /// 6.6 ms commit, its own callback's time, while its replicas finished
    /// 5.9 ms earlier. Its own commit was the later: every drive flushing
    /// like osd.0's takes 5.8 ms off those rows (its commit 6.1 ms faster,
    /// the pool's 0.1 ms round trip uncovered), not 0 as if the 0.03 ms
    /// had been the copies' wait.
    #[test]
    fn a_slow_primarys_own_commit_is_the_later_despite_a_small_wait() {
        let r = crate::explain::attribution::tests::one_slow_primary();
        let job = &r.jobs[0];
        let p = like_osd(&r, job, 0).unwrap();
        let gain = (p.mean_ns - p.projected_mean_ns) / 1e6;
        assert!(
            (gain - (6.1 + 5.8 + 6.1) / 3.0).abs() < 1e-6,
            "{gain}: {p:?}"
        );
    }

    /// The IOPS a projection promises is bounded by the OSDs' CPU: 2 cores
    /// with 1.6 busy hold a quarter more IOPS than measured; the bound is
    /// said, and the ops in flight wait the longer for it.
    #[test]
    fn projected_iops_stay_within_the_cpu_measured() {
        let mut r = slow_osd2();
        for o in &mut r.osds {
            o.cpu = Some(crate::result::OsdCpu {
                host: Some("h".into()),
                allowed_cpus: Some(2),
                // Other processes' load is not the OSDs': not counted.
                allowed_cpus_busy: Some(2.0),
                cpu_s: Some(1.6 / 3.0 * 10.0),
                window_s: Some(10.0),
                ..Default::default()
            });
        }
        // Little's law holds for the measured run: 8 in flight at its mean.
        let mean = r.jobs[0].latency_ns.mean;
        r.jobs[0].iops = 8.0 / (mean / 1e9);
        r.jobs[0].client = Some(ClientLoad {
            asked_in_flight: 8,
            mean_in_flight: 8.0,
            refill_wait_ns: 0.0,
        });
        attribute(&mut r);
        let p = with_plp(&r, &r.jobs[0]).unwrap();
        let iops = r.jobs[0].iops;
        assert!(
            (p.projected_iops.unwrap() - 1.25 * iops).abs() < 1e-6,
            "{p:?}"
        );
        assert!(
            p.iops_basis
                .starts_with("bounded by the OSDs' CPU: on h they used 1.60 of the 2 cores"),
            "{}",
            p.iops_basis
        );
        assert!((p.projected_mean_ns - 0.8 * mean).abs() < 1.0, "{p:?}");
        // Without every OSD's CPU there is no bound.
        r.osds[0].cpu = None;
        assert!(cpu_bound(&r, &r.jobs[0]).is_none());
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
        let p = without_copies(&r, &job).unwrap();
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
        let p = without_copies(&r, &job).unwrap();
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
        let p = with_cluster_cable(&r, job, 1e6).unwrap();
        assert!(close(p.mean_ns - p.projected_mean_ns, 1e6));
        let p = with_cluster_cable(&r, job, 100e6).unwrap();
        assert!(close(p.mean_ns - p.projected_mean_ns, cn));
        assert!(p.line().contains("100 ms faster"));
    }
}
