//! Where an object lives: name → placement seed (Ceph's rjenkins string
//! hash) → PG (the pool's stable mod over pg_num) → acting set and primary
//! OSD (from the PG map). Pure functions; the cluster is asked by
//! [`crate::telemetry::cluster`], its answers parsed by
//! [`crate::telemetry::parse`].
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Bob Jenkins' 96-bit mix, as in Ceph's `src/common/ceph_hash.cc`.
#[inline]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 13);
    *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 8);
    *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 13);
    *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 12);
    *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 16);
    *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 5);
    *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 3);
    *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 10);
    *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 15);
}

fn word(k: &[u8]) -> u32 {
    u32::from(k[0]) | u32::from(k[1]) << 8 | u32::from(k[2]) << 16 | u32::from(k[3]) << 24
}

/// `ceph_str_hash_rjenkins`: the placement seed of an object key.
pub fn str_hash_rjenkins(key: &[u8]) -> u32 {
    let (mut a, mut b, mut c) = (0x9e37_79b9u32, 0x9e37_79b9u32, 0u32);
    let mut k = key;
    while k.len() >= 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    c = c.wrapping_add(key.len() as u32);
    let byte = |i: usize, shift: u32| u32::from(k[i]) << shift;
    // The C switch falls through from the longest tail down.
    let n = k.len();
    if n >= 11 {
        c = c.wrapping_add(byte(10, 24));
    }
    if n >= 10 {
        c = c.wrapping_add(byte(9, 16));
    }
    if n >= 9 {
        c = c.wrapping_add(byte(8, 8));
    }
    if n >= 8 {
        b = b.wrapping_add(byte(7, 24));
    }
    if n >= 7 {
        b = b.wrapping_add(byte(6, 16));
    }
    if n >= 6 {
        b = b.wrapping_add(byte(5, 8));
    }
    if n >= 5 {
        b = b.wrapping_add(byte(4, 0));
    }
    if n >= 4 {
        a = a.wrapping_add(byte(3, 24));
    }
    if n >= 3 {
        a = a.wrapping_add(byte(2, 16));
    }
    if n >= 2 {
        a = a.wrapping_add(byte(1, 8));
    }
    if n >= 1 {
        a = a.wrapping_add(byte(0, 0));
    }
    mix(&mut a, &mut b, &mut c);
    c
}

/// The placement seed of an object: the hash of its name, or of
/// `namespace + '\x1f' + name` when it has a namespace.
pub fn object_seed(namespace: &str, name: &str) -> u32 {
    if namespace.is_empty() {
        str_hash_rjenkins(name.as_bytes())
    } else {
        let mut key = Vec::with_capacity(namespace.len() + 1 + name.len());
        key.extend_from_slice(namespace.as_bytes());
        key.push(0x1f);
        key.extend_from_slice(name.as_bytes());
        str_hash_rjenkins(&key)
    }
}

/// `ceph_stable_mod`: folds a seed into `0..pg_num` so that growing pg_num
/// splits PGs instead of reshuffling them.
pub fn stable_mod(x: u32, pg_num: u32) -> u32 {
    let mask = pg_num_mask(pg_num);
    if x & mask < pg_num {
        x & mask
    } else {
        x & (mask >> 1)
    }
}

/// `(1 << bits(pg_num - 1)) - 1`, as `pg_pool_t::calc_pg_masks`.
pub fn pg_num_mask(pg_num: u32) -> u32 {
    let n = pg_num.saturating_sub(1);
    if n == 0 {
        0
    } else {
        u32::MAX >> n.leading_zeros()
    }
}

/// Where one pool's PGs live, as of one osdmap epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolPlacement {
    /// The pool id.
    pub pool: i64,
    /// Its pg_num.
    pub pg_num: u32,
    /// Acting set of each PG (index = PG seed), primary first.
    pub acting: Vec<Vec<i32>>,
    /// The osdmap epoch this was read at.
    pub epoch: u64,
}

impl PoolPlacement {
    /// The PG seed of an object.
    pub fn pg_of(&self, namespace: &str, name: &str) -> u32 {
        stable_mod(object_seed(namespace, name), self.pg_num)
    }

    /// The primary OSD of an object (`None` if its PG has no acting set).
    pub fn primary_of(&self, namespace: &str, name: &str) -> Option<i32> {
        self.primary_of_pg(self.pg_of(namespace, name))
    }

    /// The primary OSD of a PG.
    pub fn primary_of_pg(&self, pg: u32) -> Option<i32> {
        self.acting
            .get(pg as usize)
            .and_then(|a| a.first().copied())
    }

    /// The replicas of the PGs `primary` is primary for: each distinct
    /// set (acting set but the primary, in order) with how many PGs have it,
    /// most PGs first. Empty when it is primary for none or the pool keeps
    /// one copy.
    pub fn replica_sets(&self, primary: i32) -> Vec<ReplicaSet> {
        let mut out: Vec<ReplicaSet> = Vec::new();
        for a in &self.acting {
            let (Some(&p), Some(rest)) = (a.first(), a.get(1..)) else {
                continue;
            };
            if p != primary || rest.is_empty() {
                continue;
            }
            ReplicaSet::count(&mut out, rest);
        }
        out.sort_by(|a, b| b.pgs.cmp(&a.pgs).then_with(|| a.osds.cmp(&b.osds)));
        out
    }

    /// Every OSD that serves the pool, sorted.
    pub fn osds(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.acting.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The most PGs a pool can have (`mon_max_pool_pg_num`'s default): the
/// size of [`OsdSlots`]'s table, so pg_num can grow during a run without
/// the table being reallocated under the I/O threads.
pub const MAX_PG_NUM: u32 = 65_536;

/// A slot value meaning "no slot" (no acting set, or a primary outside the
/// OSDs the slots were made for).
const NO_SLOT: u16 = u16::MAX;

/// The replicas (acting set but the primary) of some of a primary's PGs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplicaSet {
    /// The replica OSDs, in acting-set order.
    pub osds: Vec<i32>,
    /// How many of the primary's PGs have exactly these replicas.
    pub pgs: u32,
}

impl ReplicaSet {
    /// Counts one more PG with the replicas `osds` into `sets`.
    pub fn count(sets: &mut Vec<ReplicaSet>, osds: &[i32]) {
        match sets.iter_mut().find(|s| s.osds == osds) {
            Some(s) => s.pgs += 1,
            None => sets.push(ReplicaSet {
                osds: osds.to_vec(),
                pgs: 1,
            }),
        }
    }
}

/// One re-read of the placement during a run (the osdmap epoch changed).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlacementRefresh {
    /// Milliseconds since the slots were made (the job's start, near enough).
    pub t_ms: u64,
    /// The osdmap epoch of the new placement.
    pub epoch: u64,
    /// The pool's pg_num in it.
    pub pg_num: u32,
    /// PGs whose primary OSD differs from the placement in use before.
    pub moved: u32,
    /// PGs whose primary is none of the OSDs that served the pool at the
    /// start (their ops count in the job, in no per-OSD row).
    pub outside: u32,
}

/// Maps objects to a dense slot per primary OSD, for per-OSD histograms on
/// the I/O path: a hash and two relaxed atomic loads per op, no allocation,
/// no lock. The slots are the OSDs that serve the pool at the start; the
/// PG → slot table can be replaced while ops run ([`OsdSlots::install`],
/// from the placement watcher when the osdmap epoch changes), one atomic
/// store per PG, pg_num last.
#[derive(Debug)]
pub struct OsdSlots {
    start: PoolPlacement,
    osds: Vec<i32>,
    /// The pg_num the table is valid for.
    pg_num: AtomicU32,
    /// Slot of each PG seed's primary (`NO_SLOT`: none), [`MAX_PG_NUM`] long.
    table: Box<[AtomicU16]>,
    /// The placement installed last and the re-reads so far: touched only by
    /// the watcher thread and the report, never by an op.
    current: Mutex<(PoolPlacement, Vec<PlacementRefresh>)>,
    made: Instant,
}

impl OsdSlots {
    /// Slots for every OSD serving the pool.
    pub fn new(placement: PoolPlacement) -> Self {
        let osds = placement.osds();
        let table: Box<[AtomicU16]> = (0..MAX_PG_NUM).map(|_| AtomicU16::new(NO_SLOT)).collect();
        let s = OsdSlots {
            start: placement.clone(),
            osds,
            pg_num: AtomicU32::new(0),
            table,
            current: Mutex::new((placement.clone(), Vec::new())),
            made: Instant::now(),
        };
        s.write_table(&placement);
        s
    }

    /// The OSD id of each slot.
    pub fn osds(&self) -> &[i32] {
        &self.osds
    }

    /// The placement the slots were built from (the start of the run).
    pub fn placement(&self) -> &PoolPlacement {
        &self.start
    }

    /// The placement in use now.
    pub fn current(&self) -> PoolPlacement {
        self.lock().0.clone()
    }

    /// The re-reads installed so far.
    pub fn refreshes(&self) -> Vec<PlacementRefresh> {
        self.lock().1.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (PoolPlacement, Vec<PlacementRefresh>)> {
        // A panic while holding it cannot leave the data half-written in a
        // way that matters for a report: take it anyway.
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The slot of the primary OSD of the object whose placement key is
    /// `key`: its name, or `namespace + '\x1f' + name` (see [`object_seed`]).
    #[inline]
    pub fn slot_of(&self, key: &[u8]) -> Option<u16> {
        let pg_num = self.pg_num.load(Ordering::Acquire);
        let pg = stable_mod(str_hash_rjenkins(key), pg_num);
        let slot = self.table.get(pg as usize)?.load(Ordering::Relaxed);
        (slot != NO_SLOT).then_some(slot)
    }

    fn slot_of_osd(&self, osd: i32) -> u16 {
        self.osds.binary_search(&osd).map_or(NO_SLOT, |i| i as u16)
    }

    fn write_table(&self, p: &PoolPlacement) -> u32 {
        let mut outside = 0;
        for (pg, cell) in self.table.iter().enumerate().take(p.pg_num as usize) {
            let slot = p
                .primary_of_pg(pg as u32)
                .map_or(NO_SLOT, |o| self.slot_of_osd(o));
            if slot == NO_SLOT && p.primary_of_pg(pg as u32).is_some() {
                outside += 1;
            }
            cell.store(slot, Ordering::Relaxed);
        }
        // Readers that see the new pg_num see the entries written above.
        self.pg_num
            .store(p.pg_num.min(MAX_PG_NUM), Ordering::Release);
        outside
    }

    /// Installs a placement read during the run; returns the re-read it
    /// records, or `None` when nothing changed for the ops (same pg_num,
    /// same primaries: only the epoch moved).
    pub fn install(&self, p: PoolPlacement) -> Option<PlacementRefresh> {
        let mut cur = self.lock();
        if p.epoch < cur.0.epoch {
            return None; // older than what is in use
        }
        let moved = (0..p.pg_num)
            .filter(|pg| {
                // A PG compares with the one it split from when pg_num grew.
                let before = stable_mod(*pg, cur.0.pg_num);
                cur.0.primary_of_pg(before) != p.primary_of_pg(*pg)
            })
            .count() as u32;
        if moved == 0 && p.pg_num == cur.0.pg_num {
            cur.0.epoch = p.epoch;
            return None;
        }
        let outside = self.write_table(&p);
        let r = PlacementRefresh {
            t_ms: self.made.elapsed().as_millis() as u64,
            epoch: p.epoch,
            pg_num: p.pg_num,
            moved,
            outside,
        };
        cur.0 = p;
        cur.1.push(r.clone());
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeds printed by `ceph osd map POOL NAME` ("pg 2.<seed> (...)") on a
    /// pacific cluster: an independent source for the hash.
    const VECTORS: &[(&str, u32)] = include!("placement_vectors.in");

    #[test]
    fn hash_matches_ceph_osd_map() {
        for (name, want) in VECTORS {
            assert_eq!(str_hash_rjenkins(name.as_bytes()), *want, "{name:?}");
        }
    }

    #[test]
    fn stable_mod_splits_rather_than_reshuffles() {
        assert_eq!(pg_num_mask(1), 0);
        assert_eq!(pg_num_mask(8), 7);
        assert_eq!(pg_num_mask(12), 15);
        assert_eq!(stable_mod(0xdead_beef, 8), 0xdead_beef & 7);
        // pg_num 12: seeds with (x & 15) >= 12 fold into x & 7.
        assert_eq!(stable_mod(13, 12), 5);
        assert_eq!(stable_mod(11, 12), 11);
        for x in 0..1000u32 {
            assert!(stable_mod(x, 12) < 12);
            assert!(stable_mod(x, 1) == 0);
        }
    }

    #[test]
    fn namespace_changes_the_key() {
        assert_ne!(object_seed("ns", "obj"), object_seed("", "obj"));
        assert_eq!(object_seed("ns", "obj"), str_hash_rjenkins(b"ns\x1fobj"));
    }

    #[test]
    fn replica_sets_group_a_primarys_pgs_by_their_replicas() {
        let p = PoolPlacement {
            pool: 1,
            pg_num: 5,
            acting: vec![
                vec![0, 1, 2],
                vec![0, 2, 1],
                vec![0, 1, 2],
                vec![1, 0, 2],
                vec![],
            ],
            epoch: 1,
        };
        let s = p.replica_sets(0);
        let got: Vec<(Vec<i32>, u32)> = s.into_iter().map(|r| (r.osds, r.pgs)).collect();
        assert_eq!(got, vec![(vec![1, 2], 2), (vec![2, 1], 1)]);
        assert_eq!(p.replica_sets(1).len(), 1);
        assert!(p.replica_sets(2).is_empty(), "primary for none");
        let single = PoolPlacement {
            acting: vec![vec![0]],
            pg_num: 1,
            ..p
        };
        assert!(single.replica_sets(0).is_empty(), "size 1");
    }

    fn placement(pg_num: u32, primaries: &[i32], epoch: u64) -> PoolPlacement {
        PoolPlacement {
            pool: 3,
            pg_num,
            acting: primaries.iter().map(|p| vec![*p]).collect(),
            epoch,
        }
    }

    /// Names whose PG (pg_num 4) is 0, 1, 2 and 3.
    fn name_in_pg(pg: u32, pg_num: u32) -> String {
        (0..)
            .map(|i| format!("obj{i}"))
            .find(|n| stable_mod(str_hash_rjenkins(n.as_bytes()), pg_num) == pg)
            .unwrap()
    }

    #[test]
    fn slots_follow_an_installed_placement() {
        let s = OsdSlots::new(placement(4, &[0, 1, 2, 0], 10));
        assert_eq!(s.osds(), &[0, 1, 2]);
        let n3 = name_in_pg(3, 4);
        assert_eq!(s.slot_of(n3.as_bytes()), Some(0));
        // Same primaries at a newer epoch: nothing to record.
        assert_eq!(s.install(placement(4, &[0, 1, 2, 0], 11)), None);
        assert_eq!(s.current().epoch, 11);
        // PG 3 moves to osd.2, PG 1 to osd.7 (not a slot).
        let r = s.install(placement(4, &[0, 7, 2, 2], 12)).unwrap();
        assert_eq!((r.epoch, r.pg_num, r.moved, r.outside), (12, 4, 2, 1));
        assert_eq!(s.slot_of(n3.as_bytes()), Some(2));
        assert_eq!(s.slot_of(name_in_pg(1, 4).as_bytes()), None);
        // An older read never replaces a newer one.
        assert_eq!(s.install(placement(4, &[1, 1, 1, 1], 5)), None);
        assert_eq!(s.slot_of(n3.as_bytes()), Some(2));
        // pg_num grows to 8: PGs 4..8 split from 0..4; those with their
        // parent's primary count as unmoved.
        let r = s
            .install(placement(8, &[0, 7, 2, 2, 0, 1, 2, 2], 13))
            .unwrap();
        assert_eq!((r.pg_num, r.moved, r.outside), (8, 1, 1));
        for pg in 0..8 {
            let want = [
                Some(0),
                None,
                Some(2),
                Some(2),
                Some(0),
                Some(1),
                Some(2),
                Some(2),
            ];
            assert_eq!(
                s.slot_of(name_in_pg(pg, 8).as_bytes()),
                want[pg as usize],
                "pg {pg}"
            );
        }
        assert_eq!(s.refreshes().len(), 2);
        assert_eq!(s.placement().epoch, 10, "the start placement is kept");
    }
}
