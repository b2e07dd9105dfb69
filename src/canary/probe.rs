//! What `watch` reads beside its ops, once an interval, on a thread of its
//! own (off the I/O path): the round trip to each primary OSD of its
//! objects (a TCP connect to the OSD's public address, as a run's probe
//! times it), those OSDs' and their replicas' own latency counters, and
//! from both the split of the canary's mean per pool, op and primary OSD.
//!
//! The split is labelled for what it is: the client-side shares (the public
//! network) are the canary's own, but the OSD-side ones (queue, own work,
//! device flush, copies) are the OSDs' counters over **all** their traffic
//! in the interval, of which the canary's few ops are a sliver on a busy
//! cluster. `basis="osd_counters_all_traffic"` says so on every series; the
//! exported means of the counters themselves carry the same warning.
//!
//! A probe that fails leaves its series out for the interval (no stale
//! figure is presented as fresh) and counts a failure.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::ceph::Rados;
use crate::explain::attribution::{slowest_replica_ns, split_osd, OsdInputs};
use crate::placement::{PoolPlacement, ReplicaSet};
use crate::result::counters::OsdCounters;
use crate::telemetry::counters::Snapshot;

use super::metrics::Metrics;

/// The longest one TCP connect may take before it counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// What the probe thread keeps between intervals.
pub struct Prober {
    slot: super::TelemetrySlot,
    namespace: String,
    /// The canary's object names (the same in every pool).
    names: Vec<String>,
    block_size: usize,
    /// Each OSD's counters at the last read.
    last: BTreeMap<i32, Snapshot>,
    /// Each pool's id when its kind was read, and whether it is
    /// erasure-coded.
    kinds: BTreeMap<String, (i64, bool)>,
}

/// One pool as the probe sees it this interval.
struct PoolView {
    pool: String,
    erasure: bool,
    size: u32,
    /// Per primary OSD of the canary's objects: the acting sets (but the
    /// primary) of those objects' PGs.
    primaries: BTreeMap<i32, Vec<ReplicaSet>>,
}

impl Prober {
    /// A prober of the canary's `names` in `namespace`.
    pub fn new(
        slot: super::TelemetrySlot,
        namespace: &str,
        names: Vec<String>,
        block_size: usize,
    ) -> Prober {
        Prober {
            slot,
            namespace: namespace.to_string(),
            names,
            block_size,
            last: BTreeMap::new(),
            kinds: BTreeMap::new(),
        }
    }

    /// One interval's probes, from the placements the placement thread
    /// read, into `metrics`.
    pub fn probe(
        &mut self,
        placements: &BTreeMap<String, PoolPlacement>,
        metrics: &Mutex<Metrics>,
    ) {
        let rados = super::current(&self.slot);
        let views: Vec<PoolView> = placements
            .iter()
            .map(|(pool, p)| self.view(&rados, pool, p))
            .collect();
        // The round trips to the primaries' public addresses.
        let primaries: BTreeSet<i32> = views
            .iter()
            .flat_map(|v| v.primaries.keys().copied())
            .collect();
        let addrs = crate::telemetry::cluster::osd_public_addrs(&rados).unwrap_or_default();
        let mut rtt: BTreeMap<i32, Option<f64>> = BTreeMap::new();
        for osd in &primaries {
            if let Some((_, addr)) = addrs.iter().find(|(o, _)| o == osd) {
                rtt.insert(*osd, connect_ns(addr));
            }
        }
        // The counters of every OSD the split looks at: the primaries and
        // their copies.
        let mut wanted: BTreeSet<i32> = primaries.clone();
        for v in &views {
            for sets in v.primaries.values() {
                wanted.extend(sets.iter().flat_map(|s| s.osds.iter().copied()));
            }
        }
        let mut deltas: BTreeMap<i32, OsdCounters> = BTreeMap::new();
        let mut failed: Option<(i32, String)> = None;
        for osd in &wanted {
            match crate::telemetry::cluster::perf_dump(&rados, *osd) {
                Ok(now) => {
                    if let Some(before) = self.last.get(osd) {
                        deltas.insert(*osd, crate::telemetry::counters::delta(*osd, before, &now));
                    }
                    self.last.insert(*osd, now);
                }
                Err(e) => {
                    // No delta across a gap: the next read starts afresh.
                    self.last.remove(osd);
                    failed.get_or_insert((*osd, e.to_string()));
                }
            }
        }
        self.last.retain(|o, _| wanted.contains(o));
        let mut m = metrics.lock().unwrap_or_else(PoisonError::into_inner);
        let series = m.take_series();
        let mut splits = Vec::new();
        for ((pool, op, osd), (count, sum_ns)) in series {
            let Some(v) = views.iter().find(|v| v.pool == pool) else {
                continue;
            };
            let (Some(c), true) = (deltas.get(&osd), count > 0) else {
                continue;
            };
            let sets = v.primaries.get(&osd).cloned().unwrap_or_default();
            let replica_ns = slowest_replica_ns(&sets, |o| {
                deltas
                    .get(&o)
                    .and_then(|d| d.subop_w_latency)
                    .and_then(|d| d.mean_ns)
            });
            let inputs = OsdInputs {
                op: op.label(),
                client_mean_ns: sum_ns / count as f64,
                counters: Some(c),
                rtt_ns: rtt.get(&osd).copied().flatten(),
                rtt_method: Some("TCP connect"),
                op_bytes: self.block_size as f64,
                bandwidth: None,
                pool_size: v.size,
                erasure: v.erasure,
                replica_ns,
                evidence: None,
                back_rtt_ns: None,
            };
            let a = split_osd(&inputs);
            splits.push((
                (pool, op, osd),
                a.shares.iter().map(|s| (s.part, s.ns)).collect(),
            ));
        }
        m.set_probes(super::unix_now(), rtt, deltas, splits);
        m.set_probe_note(failed.map(|(osd, e)| {
            format!(
                "osd.{osd}'s counters could not be read ({e}): no split for the series of the \
                 OSDs that did not answer (`tell osd.N perf dump` needs the key's osd caps to \
                 allow it, e.g. 'allow *' or the 'profile' caps a monitoring key has)"
            )
        }));
    }

    /// The pool's primaries of the canary's objects, with their copies.
    fn view(&mut self, rados: &Rados, pool: &str, p: &PoolPlacement) -> PoolView {
        let erasure = match self.kinds.get(pool) {
            Some((id, e)) if *id == p.pool => *e,
            _ => {
                let e = crate::telemetry::cluster::pool_kind(rados, pool)
                    .map(|k| k.erasure)
                    .unwrap_or(false);
                self.kinds.insert(pool.to_string(), (p.pool, e));
                e
            }
        };
        let mut primaries: BTreeMap<i32, Vec<ReplicaSet>> = BTreeMap::new();
        let mut size = 1;
        for name in &self.names {
            let Some(acting) = p.acting.get(p.pg_of(&self.namespace, name) as usize) else {
                continue;
            };
            let Some((&primary, rest)) = acting.split_first() else {
                continue;
            };
            size = size.max(acting.len() as u32);
            let sets = primaries.entry(primary).or_default();
            if !rest.is_empty() {
                ReplicaSet::count(sets, rest);
            }
        }
        PoolView {
            pool: pool.to_string(),
            erasure,
            size,
            primaries,
        }
    }
}

/// One TCP connect to `addr`, ns (`None`: refused or not within
/// [`CONNECT_TIMEOUT`]).
fn connect_ns(addr: &SocketAddr) -> Option<f64> {
    let t = Instant::now();
    TcpStream::connect_timeout(addr, CONNECT_TIMEOUT)
        .ok()
        .map(|_| t.elapsed().as_nanos() as f64)
}
