//! fio-style block workloads on an RBD image: sequential or random reads,
//! writes and mixes over a test area, with an optional flush after every N
//! writes (fio's `fsync=N`).
#![forbid(unsafe_code)]

use std::task::{Context, Poll};

use crate::ceph::{CephError, CompletionQueue, Image, ImageInfo, Reaped};
use crate::engine::{Op, OpKind, OpSource, Rng, Target};
use crate::objects;
use crate::placement::OsdSlots;

/// fio's `--rw` values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum RbdMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed reads and writes (`--rwmix-read`).
    #[value(alias = "rw")]
    Readwrite,
    /// Random mixed reads and writes (`--rwmix-read`).
    Randrw,
}

impl RbdMode {
    /// The fio name.
    pub fn as_str(self) -> &'static str {
        match self {
            RbdMode::Read => "read",
            RbdMode::Write => "write",
            RbdMode::Randread => "randread",
            RbdMode::Randwrite => "randwrite",
            RbdMode::Readwrite => "readwrite",
            RbdMode::Randrw => "randrw",
        }
    }

    /// Percentage of ops that read, given `--rwmix-read` for mixes.
    pub fn read_pct(self, rwmix_read: u8) -> u8 {
        match self {
            RbdMode::Read | RbdMode::Randread => 100,
            RbdMode::Write | RbdMode::Randwrite => 0,
            RbdMode::Readwrite | RbdMode::Randrw => rwmix_read,
        }
    }

    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RbdMode::Randread | RbdMode::Randwrite | RbdMode::Randrw
        )
    }

    /// Whether any op writes.
    pub fn writes(self, rwmix_read: u8) -> bool {
        self.read_pct(rwmix_read) < 100
    }

    /// Whether any op reads.
    pub fn reads(self, rwmix_read: u8) -> bool {
        self.read_pct(rwmix_read) > 0
    }
}

/// Random block numbers that visit each block of `0..blocks` exactly once
/// per pass, as fio's default random map does, without its bitmap: a
/// counter over the next power of two goes through a keyed bijection
/// (xor with a key, odd multiplications and right xor-shifts, each
/// invertible on k-bit numbers), values at or past `blocks` are skipped
/// (fewer than 2 tries per block on average), and each pass draws a new key.
#[derive(Debug, Clone)]
pub struct RandomMap {
    blocks: u64,
    bits: u32,
    mask: u64,
    counter: u64,
    key: u64,
}

impl RandomMap {
    /// A map over `blocks` (> 0) blocks.
    pub fn new(blocks: u64, rng: &mut Rng) -> Self {
        let bits = 64 - blocks.saturating_sub(1).leading_zeros();
        RandomMap {
            blocks,
            bits,
            mask: if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            counter: 0,
            key: rng.below(u64::MAX),
        }
    }

    fn permute(&self, x: u64) -> u64 {
        let (m, half) = (self.mask, (self.bits / 2).max(1));
        let mut x = (x ^ self.key) & m;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & m;
        x ^= x >> half;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & m;
        x ^= x >> half;
        x.wrapping_add(self.key >> 7) & m
    }

    /// The next block; a new pass (and key) after every block was given once.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        loop {
            if self.counter > self.mask || (self.bits == 0 && self.counter > 0) {
                self.counter = 0;
                self.key = rng.below(u64::MAX);
            }
            let v = self.permute(self.counter);
            self.counter += 1;
            if v < self.blocks {
                return v;
            }
        }
    }
}

/// The ops of one job over its byte range `[start, start + len)` of the image.
#[derive(Debug, Clone)]
pub struct RbdSource {
    random: bool,
    /// Random offsets: each block once per pass (`Some`), or uniform with
    /// repeats (fio's `norandommap`, `None`).
    map: Option<RandomMap>,
    read_pct: u8,
    bs: u64,
    start: u64,
    blocks: u64,
    fsync_every: Option<u64>,
    writes_since_flush: u64,
    cursor: u64,
    seq: u64,
    rng: Rng,
}

impl RbdSource {
    /// A source for `mode` over `len` bytes at `start`, `bs` per op (bs
    /// divides len); random offsets uniform with repeats (fio's
    /// `norandommap`) until [`RbdSource::with_random_map`].
    pub fn new(
        mode: RbdMode,
        rwmix_read: u8,
        bs: u64,
        start: u64,
        len: u64,
        fsync_every: Option<u64>,
        seed: u64,
    ) -> Self {
        RbdSource {
            map: None,
            random: mode.is_random(),
            read_pct: mode.read_pct(rwmix_read),
            bs,
            start,
            blocks: (len / bs).max(1),
            fsync_every,
            writes_since_flush: 0,
            cursor: 0,
            seq: 0,
            rng: Rng::new(seed),
        }
    }

    /// Random offsets visit each block once per pass (fio's default).
    pub fn with_random_map(mut self) -> Self {
        self.map = Some(RandomMap::new(self.blocks, &mut self.rng));
        self
    }
}

impl OpSource for RbdSource {
    fn next(&mut self, _issued: u64) -> Option<Op> {
        let index = self.seq;
        self.seq += 1;
        if self
            .fsync_every
            .is_some_and(|n| self.writes_since_flush >= n)
        {
            self.writes_since_flush = 0;
            return Some(Op {
                kind: OpKind::Flush,
                index,
                offset: 0,
                len: 0,
                osd: None,
            });
        }
        let kind = match self.read_pct {
            100 => OpKind::Read,
            0 => OpKind::Write,
            p => {
                if self.rng.below(100) < u64::from(p) {
                    OpKind::Read
                } else {
                    OpKind::Write
                }
            }
        };
        let block = if self.random {
            match &mut self.map {
                Some(m) => m.next(&mut self.rng),
                None => self.rng.below(self.blocks),
            }
        } else {
            let b = self.cursor % self.blocks;
            self.cursor += 1;
            b
        };
        if kind == OpKind::Write {
            self.writes_since_flush += 1;
        }
        Some(Op {
            kind,
            index,
            offset: self.start + block * self.bs,
            len: self.bs,
            osd: None,
        })
    }
}

/// Issues ops on an open image. librbd may use a write buffer without
/// copying until the op completes, so each op slot owns its buffers: write
/// buffers hold an incompressible pattern prepared once per slot, read
/// buffers are allocated once per slot. Completions arrive in a
/// [`CompletionQueue`], one slot per op in flight.
pub struct RbdTarget<'a> {
    image: &'a Image,
    slots: Option<&'a OsdSlots>,
    object_prefix: String,
    object_size: u64,
    name: Vec<u8>,
    queue: CompletionQueue,
    pattern: Vec<u8>,
}

impl<'a> RbdTarget<'a> {
    /// A target on `image` for ops of `bs` bytes with up to `concurrency`
    /// in flight. With `slots` (and the image's data object prefix and
    /// object size), each op is tagged with the primary OSD of the data
    /// object `<prefix>.<objno:016x>` it starts in.
    pub fn new(
        image: &'a Image,
        bs: u64,
        seed: u64,
        concurrency: usize,
        slots: Option<(&'a OsdSlots, &ImageInfo)>,
    ) -> Self {
        let mut pattern = vec![0u8; bs as usize];
        objects::fill_pattern(&mut pattern, seed);
        RbdTarget {
            image,
            slots: slots.map(|s| s.0),
            object_prefix: slots
                .map(|s| s.1.block_name_prefix.clone())
                .unwrap_or_default(),
            object_size: slots.map_or(1, |s| s.1.object_size.max(1)),
            name: Vec::with_capacity(64),
            queue: CompletionQueue::new(concurrency),
            pattern,
        }
    }
}

impl Target for RbdTarget<'_> {
    fn submit(&mut self, slot: usize, op: &mut Op) -> Result<(), CephError> {
        if let (Some(slots), OpKind::Read | OpKind::Write) = (self.slots, op.kind) {
            use std::io::Write as _;
            self.name.clear();
            let objno = op.offset / self.object_size;
            let _ = write!(self.name, "{}.{objno:016x}", self.object_prefix);
            op.osd = slots.slot_of(&self.name);
        }
        match op.kind {
            OpKind::Write => {
                let buf = self.queue.write_buf(slot);
                if buf.len() != self.pattern.len() {
                    buf.clone_from(&self.pattern);
                }
                self.image.write_in(&mut self.queue, slot, op.offset)
            }
            OpKind::Read => {
                let buf = self.queue.read_buf(slot);
                if buf.len() != op.len as usize {
                    *buf = vec![0u8; op.len as usize];
                }
                self.image.read_in(&mut self.queue, slot, op.offset)
            }
            OpKind::Flush => self.image.flush_in(&mut self.queue, slot),
        }
    }

    fn poll_reap(&mut self, cx: &mut Context<'_>, out: &mut Vec<Reaped>) -> Poll<()> {
        self.queue.poll_reap(cx, out)
    }

    fn complete(&mut self, _: usize, _: &Op, _: i64) -> bool {
        true
    }

    fn describe(&self, op: &Op) -> String {
        match op.kind {
            OpKind::Flush => format!("flush image '{}'", self.image.name()),
            k => format!(
                "{} {} bytes at offset {} of image '{}'",
                k.as_str(),
                op.len,
                op.offset,
                self.image.name()
            ),
        }
    }
    fn object_of(&self, op: &Op) -> Option<(String, u64)> {
        if self.object_prefix.is_empty() || op.kind == OpKind::Flush {
            return None;
        }
        let objno = op.offset / self.object_size;
        Some((
            format!("{}.{objno:016x}", self.object_prefix),
            op.offset % self.object_size,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps_inside_the_range() {
        let mut s = RbdSource::new(RbdMode::Write, 50, 4096, 8192, 3 * 4096, None, 1);
        let offs: Vec<u64> = (0..4).map(|i| s.next(i).unwrap().offset).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192]);
    }

    #[test]
    fn the_random_map_gives_each_block_once_per_pass() {
        let mut rng = Rng::new(9);
        for blocks in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut m = RandomMap::new(blocks, &mut rng);
            for _pass in 0..3 {
                let mut seen = vec![false; blocks as usize];
                for _ in 0..blocks {
                    let b = m.next(&mut rng) as usize;
                    assert!(!seen[b], "block {b} twice in a pass of {blocks}");
                    seen[b] = true;
                }
            }
        }
        // Not sequential: far fewer neighbours than a walk in order.
        let mut m = RandomMap::new(1 << 16, &mut rng);
        let v: Vec<u64> = (0..1 << 16).map(|_| m.next(&mut rng)).collect();
        let steps = v.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(steps < 100, "{steps} sequential steps");
        // Through the source: a pass of a random-map randread covers the range.
        let mut s =
            RbdSource::new(RbdMode::Randread, 50, 4096, 0, 4096 * 100, None, 5).with_random_map();
        let mut offs: Vec<u64> = (0..100).map(|i| s.next(i).unwrap().offset).collect();
        offs.sort_unstable();
        assert_eq!(offs, (0..100).map(|b| b * 4096).collect::<Vec<_>>());
    }

    #[test]
    fn random_stays_aligned_inside_the_range() {
        let mut s = RbdSource::new(RbdMode::Randread, 50, 4096, 1 << 20, 1 << 20, None, 7);
        for i in 0..10_000 {
            let op = s.next(i).unwrap();
            assert_eq!(op.kind, OpKind::Read);
            assert!(op.offset >= 1 << 20 && op.offset + 4096 <= 2 << 20);
            assert_eq!(op.offset % 4096, 0);
        }
    }

    #[test]
    fn mix_follows_rwmix_read() {
        let mut s = RbdSource::new(RbdMode::Randrw, 70, 4096, 0, 1 << 30, None, 3);
        let reads = (0..100_000)
            .filter(|i| s.next(*i).unwrap().kind == OpKind::Read)
            .count();
        assert!((69_000..71_000).contains(&reads), "{reads}");
    }

    #[test]
    fn flush_after_every_n_writes() {
        let mut s = RbdSource::new(RbdMode::Randwrite, 0, 4096, 0, 1 << 20, Some(2), 3);
        let kinds: Vec<OpKind> = (0..6).map(|i| s.next(i).unwrap().kind).collect();
        use OpKind::*;
        assert_eq!(kinds, vec![Write, Write, Flush, Write, Write, Flush]);
    }
}
