//! rados bench's workloads: `write` creates objects, `seq` reads them back
//! in order, `rand` at random. Op `i` touches object `i / (object_size /
//! block_size)` at offset `(i mod that) * block_size`, as rados bench does.
#![forbid(unsafe_code)]

use std::ffi::CStr;

use std::task::{Context, Poll};

use crate::ceph::{CephError, CompletionQueue, IoCtx, Reaped, SharedBuf, WriteParts};
use crate::engine::{Op, OpKind, OpSource, Rng, Target};
use crate::objects;
use crate::placement::OsdSlots;

/// The three rados-bench workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RadosMode {
    /// Write new objects.
    Write,
    /// Read the written ops back in order.
    Seq,
    /// Read written ops at random.
    Rand,
}

impl RadosMode {
    /// `"write"`, `"seq"` or `"rand"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RadosMode::Write => "write",
            RadosMode::Seq => "seq",
            RadosMode::Rand => "rand",
        }
    }

    /// Whether ops of this mode write.
    pub fn is_write(self) -> bool {
        self == RadosMode::Write
    }
}

pub use crate::objects::WriteDest;

/// Object layout of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Bytes per op.
    pub block_size: u64,
    /// Bytes per object (a multiple of `block_size`).
    pub object_size: u64,
}

impl Layout {
    /// Object number and offset of op `i`.
    pub fn locate(&self, op: u64) -> (u64, u64) {
        let wpo = (self.object_size / self.block_size).max(1);
        (op / wpo, (op % wpo) * self.block_size)
    }
}

/// Which ops a RADOS job issues.
#[derive(Debug, Clone)]
pub struct RadosSource {
    mode: RadosMode,
    layout: Layout,
    /// Bytes a write op carries: the block once per destination.
    write_len: u64,
    available: u64,
    wrap: bool,
    rng: Rng,
}

impl RadosSource {
    /// A source for `mode`; reads draw from the `available` ops of the write run.
    pub fn new(mode: RadosMode, layout: Layout, available: u64, wrap: bool, seed: u64) -> Self {
        RadosSource {
            mode,
            layout,
            write_len: layout.block_size,
            available,
            wrap,
            rng: Rng::new(seed ^ 0x5EED),
        }
    }

    /// Writes go to `dest`: each op carries the block once per destination.
    pub fn write_dest(mut self, dest: WriteDest) -> Self {
        self.write_len = self.layout.block_size * dest.count().max(1);
        self
    }

    fn op(&self, kind: OpKind, index: u64) -> Op {
        Op {
            kind,
            index,
            offset: self.layout.locate(index).1,
            len: if kind == OpKind::Write {
                self.write_len
            } else {
                self.layout.block_size
            },
            osd: None,
        }
    }
}

impl OpSource for RadosSource {
    fn next(&mut self, issued: u64) -> Option<Op> {
        let n = self.available;
        let index = match self.mode {
            RadosMode::Write => return Some(self.op(OpKind::Write, issued)),
            RadosMode::Seq if issued < n => issued,
            RadosMode::Seq if self.wrap && n > 0 => issued % n,
            RadosMode::Seq => return None,
            RadosMode::Rand if n > 0 => self.rng.below(n),
            RadosMode::Rand => return None,
        };
        Some(self.op(OpKind::Read, index))
    }
}

/// Issues RADOS ops on a pool: names objects into a reused buffer, writes
/// from per-slot payload buffers that Ceph shares instead of copying (each
/// filled once, then only the op number stamped in), reads into per-slot
/// buffers allocated once, and checks each read as its [`objects::VerifyMode`] says. Completions
/// arrive in a [`CompletionQueue`], one slot per op in flight.
pub struct RadosTarget<'a> {
    io: &'a IoCtx,
    layout: Layout,
    prefix: String,
    name: Vec<u8>,
    /// The placement key: `namespace + '\x1f'` (when there is one), then
    /// the object's name; the prefix stays, names are swapped in per op.
    key: Vec<u8>,
    key_prefix: usize,
    pattern: Vec<u8>,
    /// Per slot: the payload its writes send (made on the slot's first write).
    payloads: Vec<Option<SharedBuf>>,
    queue: CompletionQueue,
    verify: objects::VerifyMode,
    slots: Option<&'a OsdSlots>,
    dest: WriteDest,
    /// Compound writes (omap/xattr): the stamped payload, copied by
    /// librados per op, and the NUL-terminated key/xattr name.
    scratch: Vec<u8>,
    attr: Vec<u8>,
}

impl<'a> RadosTarget<'a> {
    /// A target on `io` for objects named `prefix<n>` with up to
    /// `concurrency` ops in flight; `seed` picks the payload pattern; with
    /// `slots`, each op is tagged with its primary OSD.
    pub fn new(
        io: &'a IoCtx,
        layout: Layout,
        prefix: String,
        namespace: &str,
        seed: u64,
        concurrency: usize,
        slots: Option<&'a OsdSlots>,
    ) -> Self {
        let mut pattern = vec![0u8; layout.block_size as usize];
        objects::fill_pattern(&mut pattern, seed);
        let mut key = Vec::with_capacity(namespace.len() + 1 + prefix.len() + 24);
        if !namespace.is_empty() {
            key.extend_from_slice(namespace.as_bytes());
            key.push(0x1f);
        }
        RadosTarget {
            io,
            layout,
            key_prefix: key.len(),
            key,
            name: Vec::with_capacity(prefix.len() + 24),
            prefix,
            pattern,
            payloads: (0..concurrency.max(1)).map(|_| None).collect(),
            queue: CompletionQueue::new(concurrency),
            verify: objects::VerifyMode::None,
            slots,
            dest: WriteDest::default(),
            scratch: Vec::new(),
            attr: Vec::with_capacity(32),
        }
    }

    /// Writes go to `dest` (object data only by default).
    pub fn write_dest(mut self, dest: WriteDest) -> Self {
        self.dest = dest;
        self
    }

    /// Checks each read as `mode` says (reads are not checked by default).
    pub fn verify(mut self, mode: objects::VerifyMode) -> Self {
        self.verify = mode;
        self
    }
}

impl Target for RadosTarget<'_> {
    fn submit(&mut self, slot: usize, op: &mut Op) -> Result<(), CephError> {
        let (obj, off) = self.layout.locate(op.index);
        objects::object_name_into(&mut self.name, &self.prefix, obj);
        if let Some(slots) = &self.slots {
            self.key.truncate(self.key_prefix);
            self.key
                .extend_from_slice(&self.name[..self.name.len() - 1]);
            op.osd = slots.slot_of(&self.key);
        }
        let oid = CStr::from_bytes_with_nul(&self.name).expect("names end with one NUL");
        match op.kind {
            OpKind::Write if !self.dest.object_only() => {
                use std::io::Write as _;
                if self.scratch.len() != self.pattern.len() {
                    self.scratch.clone_from(&self.pattern);
                }
                let n = self.scratch.len().min(8);
                objects::stamp(&mut self.scratch[..n], op.index);
                self.attr.clear();
                let _ = write!(self.attr, "cephbench.{off}\0");
                let attr = CStr::from_bytes_with_nul(&self.attr).expect("one NUL at the end");
                let parts = WriteParts {
                    data: self.dest.object.then_some((&self.scratch[..], off)),
                    omap: self.dest.omap.then_some((attr, &self.scratch[..])),
                    xattr: self.dest.xattr.then_some((attr, &self.scratch[..])),
                };
                self.io.write_op_in(&mut self.queue, slot, oid, &parts)
            }
            OpKind::Write => {
                let payload = &mut self.payloads[slot];
                // Still held by Ceph (an op that timed out while queued in
                // the messenger, say): leave it to Ceph and take a new one.
                if !payload.as_ref().is_some_and(|b| !b.shared()) {
                    *payload = Some(SharedBuf::from_slice(&self.pattern)?);
                }
                let buf = payload.as_mut().expect("set above");
                let mut stamp = [0u8; 8];
                let stamp = &mut stamp[..buf.len().min(8)];
                objects::stamp(stamp, op.index);
                buf.write_at(0, stamp)?;
                self.io
                    .write_shared_in(&mut self.queue, slot, oid, buf, off)
            }
            OpKind::Read => {
                let buf = self.queue.read_buf(slot);
                if buf.len() != self.layout.block_size as usize {
                    *buf = vec![0u8; self.layout.block_size as usize];
                }
                self.io.read_in(&mut self.queue, slot, oid, off)
            }
            OpKind::Flush => Err(CephError::InvalidArgument("RADOS ops have no flush".into())),
        }
    }

    fn poll_reap(&mut self, cx: &mut Context<'_>, out: &mut Vec<Reaped>) -> Poll<()> {
        self.queue.poll_reap(cx, out)
    }

    fn complete(&mut self, slot: usize, op: &Op, ret: i64) -> bool {
        if op.kind != OpKind::Read || !self.verify.checks() || ret < 0 {
            return true;
        }
        let buf = self.queue.read_buf(slot);
        self.verify.check(
            &buf[..(ret as usize).min(buf.len())],
            &self.pattern,
            op.index,
        )
    }

    fn describe(&self, op: &Op) -> String {
        let (obj, off) = self.layout.locate(op.index);
        format!("{} {}{obj} at offset {off}", op.kind.as_str(), self.prefix)
    }

    fn object_of(&self, op: &Op) -> Option<(String, u64)> {
        let (obj, off) = self.layout.locate(op.index);
        Some((format!("{}{obj}", self.prefix), off))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Layout = Layout {
        block_size: 4096,
        object_size: 16384,
    };

    #[test]
    fn op_layout_matches_rados_bench() {
        assert_eq!(L.locate(0), (0, 0));
        assert_eq!(L.locate(3), (0, 12288));
        assert_eq!(L.locate(4), (1, 0));
    }

    #[test]
    fn writes_carry_the_block_once_per_destination() {
        let d = WriteDest {
            object: true,
            omap: true,
            xattr: false,
        };
        assert_eq!(d.label(), "object+omap");
        assert_eq!(WriteDest::default().label(), "object");
        let mut w = RadosSource::new(RadosMode::Write, L, 0, false, 1).write_dest(d);
        assert_eq!(w.next(0).unwrap().len, 2 * 4096);
        let mut r = RadosSource::new(RadosMode::Seq, L, 10, false, 1).write_dest(d);
        assert_eq!(r.next(0).unwrap().len, 4096, "reads ask for one block");
    }

    #[test]
    fn seq_stops_or_wraps() {
        let mut s = RadosSource::new(RadosMode::Seq, L, 10, false, 1);
        assert_eq!(
            s.next(9).map(|o| (o.kind, o.index, o.offset)),
            Some((OpKind::Read, 9, 4096))
        );
        assert_eq!(s.next(10), None);
        let mut w = RadosSource::new(RadosMode::Seq, L, 10, true, 1);
        assert_eq!(w.next(13).map(|o| o.index), Some(3));
    }

    #[test]
    fn rand_stays_in_the_written_set_and_write_counts_up() {
        let mut r = RadosSource::new(RadosMode::Rand, L, 10, false, 1);
        for i in 0..1000 {
            assert!(r.next(i).unwrap().index < 10);
        }
        assert_eq!(
            RadosSource::new(RadosMode::Rand, L, 0, false, 1).next(0),
            None
        );
        let mut w = RadosSource::new(RadosMode::Write, L, 0, false, 1);
        assert_eq!(
            w.next(5).map(|o| (o.kind, o.index)),
            Some((OpKind::Write, 5))
        );
    }
}
