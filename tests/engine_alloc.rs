//! The engine's I/O loop allocates nothing per op: a counting global
//! allocator (per thread, so parallel tests do not blur the count) measures
//! a run of 20,000 ops against a target whose ops complete at once without
//! allocating, on the issuing thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use cephbench::ceph::{CephError, Reaped};
use cephbench::engine::{self, Op, OpKind, OpSource, RunSpec, Target};
use cephbench::progress::WorkerProgress;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialised
// thread-local Cell without a destructor, so touching it cannot allocate or recurse.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

/// Ops complete as soon as they are submitted (a preallocated list of
/// finished slots), so the count is the engine's own.
struct Instantly {
    done: Vec<Reaped>,
}

impl Target for Instantly {
    fn submit(&mut self, slot: usize, op: &mut Op) -> Result<(), CephError> {
        op.osd = Some((op.index % 3) as u16);
        self.done.push(Reaped {
            slot,
            ret: 0,
            completed_at: Instant::now(),
        });
        Ok(())
    }
    fn poll_reap(&mut self, _: &mut Context<'_>, out: &mut Vec<Reaped>) -> Poll<()> {
        if self.done.is_empty() {
            return Poll::Pending;
        }
        out.append(&mut self.done);
        Poll::Ready(())
    }
    fn complete(&mut self, _: usize, _: &Op, _: i64) -> bool {
        true
    }
    fn describe(&self, op: &Op) -> String {
        format!("op {}", op.index)
    }
}

struct Writes;
impl OpSource for Writes {
    fn next(&mut self, issued: u64) -> Option<Op> {
        Some(Op {
            kind: OpKind::Write,
            index: issued,
            offset: 0,
            len: 4096,
            osd: None,
        })
    }
}

fn run(ops: u64) -> (u64, engine::JobOutcome) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let spec = RunSpec {
        concurrency: 16,
        duration: None,
        ramp: Duration::ZERO,
        max_ops: Some(ops),
        max_bytes: None,
        // Every op is "slow" and so competes for the slowest-ops list: the
        // list is bounded, so it must not allocate per op either.
        slow_op: Duration::ZERO,
        rate: None,
    };
    let mut target = Instantly {
        done: Vec::with_capacity(16),
    };
    let progress = WorkerProgress::new(Arc::default());
    rt.block_on(async {
        let before = allocs();
        let out = engine::run(&mut target, &mut Writes, &spec, rx, progress).await;
        (allocs() - before, out)
    })
}

#[test]
fn the_io_loop_allocates_nothing_per_op() {
    let (small, o1) = run(1_000);
    let (large, o2) = run(21_000);
    assert_eq!(o1.issued, 1_000);
    assert_eq!(o2.issued, 21_000);
    assert_eq!(o2.kind(OpKind::Write).ops, 21_000, "every op was measured");
    // Fixed costs (slot tables, histograms, the slowest-ops names) are the
    // same for both runs; 20,000 more ops may add none (a little slack for
    // the runtime's own timer wheel, not one per op or per 100 ops).
    assert!(
        large <= small + 20,
        "{small} allocations for 1,000 ops but {large} for 21,000: the loop allocates per op"
    );
}
