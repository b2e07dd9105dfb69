//! The pace probe: how much of an op's latency is its threads waking from
//! idle at the job's pace. After a write job, 4 KiB reads of one object of
//! the tool's own (written, read, removed here) run back to back, then one
//! every `gap` (the job's time between ops). A read flushes nothing, so what
//! the paced reads take beyond the back-to-back ones is the path's own
//! wake-ups: the what-if projections take that share off what they keep as
//! measured when they forecast a faster pace (docs/explain.md, *The pace*).
#![forbid(unsafe_code)]

use std::ffi::CString;
use std::time::{Duration, Instant};

use crate::ceph::{IoCtx, Rados};
use crate::result::{PaceProbe, PaceSet};

/// Reads back to back.
const BACK_TO_BACK: u32 = 100;
/// Most reads a paced set, and the time the slowest set may take.
const PACED_MAX: u32 = 40;
const PACED_BUDGET: Duration = Duration::from_millis(500);
/// Fewest reads a paced set.
const PACED_MIN: u32 = 10;
/// The paced sets: the job's gap over these.
const DIVISORS: [u32; 5] = [16, 8, 4, 2, 1];
/// The bound on each op's wait.
const OP_TIMEOUT: Duration = Duration::from_secs(5);

/// Probes `pool` at paces up to one op every `gap` (the job's time between
/// ops). `None` when it cannot (no write access, an op failed or timed out,
/// a gap of no length): the projections then keep the path as measured.
pub(super) async fn probe(rados: &Rados, pool: &str, gap: Duration) -> Option<PaceProbe> {
    if gap.is_zero() {
        return None;
    }
    let io = rados.ioctx(pool).ok()?;
    let name = format!(
        "cephbench_pace_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let oid = CString::new(name).expect("no NUL in a name built here");
    // Never over an object of someone else's.
    let st = bounded(io.stat(&oid).ok()?).await?;
    if st.ret != -i64::from(libc::ENOENT) {
        return None;
    }
    let wrote = bounded(io.write_full(&oid, &[0x5a; 4096]).ok()?)
        .await
        .is_some_and(|d| d.ret >= 0);
    let probe = if wrote {
        sets(&io, &oid, gap).await
    } else {
        None
    };
    // Removed whatever the reads did (a failed write may still have made it).
    if let Ok(f) = io.remove(&oid) {
        let _ = bounded(f).await;
    }
    probe
}

/// The sets of reads of `oid`, the fastest pace first.
async fn sets(io: &IoCtx, oid: &CString, gap: Duration) -> Option<PaceProbe> {
    let mut buf = vec![0u8; 4096];
    // One read first, unmeasured: the object's metadata into the caches.
    buf = read(io, oid, buf).await?.1;
    let mut lat = Vec::with_capacity(BACK_TO_BACK as usize);
    let start = Instant::now();
    for _ in 0..BACK_TO_BACK {
        let (ns, b) = read(io, oid, buf).await?;
        lat.push(ns);
        buf = b;
    }
    let mut sets = vec![PaceSet {
        gap_ns: start.elapsed().as_secs_f64() * 1e9 / f64::from(BACK_TO_BACK),
        reads: BACK_TO_BACK,
        mean_ns: trimmed_mean(&mut lat),
    }];
    let n = ((PACED_BUDGET.as_secs_f64() / gap.as_secs_f64()) as u32).clamp(PACED_MIN, PACED_MAX);
    for d in DIVISORS {
        let every = gap / d;
        // Not faster than back to back.
        if every.as_secs_f64() * 1e9 <= 1.5 * sets[0].gap_ns {
            continue;
        }
        lat.clear();
        let start = tokio::time::Instant::now();
        for k in 1..=n {
            tokio::time::sleep_until(start + every * k).await;
            let (ns, b) = read(io, oid, buf).await?;
            lat.push(ns);
            buf = b;
        }
        sets.push(PaceSet {
            gap_ns: every.as_secs_f64() * 1e9,
            reads: n,
            mean_ns: trimmed_mean(&mut lat),
        });
    }
    Some(PaceProbe { sets })
}

/// The mean without the slowest tenth: a read the host's scheduler held
/// back says nothing of the pace.
fn trimmed_mean(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let keep = &v[..v.len() - v.len() / 10];
    keep.iter().sum::<f64>() / keep.len() as f64
}

/// One 4 KiB read: its latency, ns (submitted to completion callback), and
/// the buffer back; `None` on an error, a short read or a timeout.
async fn read(io: &IoCtx, oid: &CString, buf: Vec<u8>) -> Option<(f64, Vec<u8>)> {
    let t = Instant::now();
    let done = bounded(io.read(oid, buf, 0).ok()?).await?;
    (done.ret == 4096).then(|| {
        let ns = done.completed_at.saturating_duration_since(t).as_secs_f64() * 1e9;
        (ns, done.buf)
    })
}

/// `f`, or `None` after [`OP_TIMEOUT`] or on a failed completion.
async fn bounded<B>(f: crate::ceph::AioFuture<B>) -> Option<crate::ceph::AioDone<B>> {
    tokio::time::timeout(OP_TIMEOUT, f).await.ok()?.ok()
}
