//! Completions as futures, the rdkafka way.
//!
//! Each asynchronous operation allocates one boxed [`CbState`] that holds the
//! oneshot sender and the buffer the C library reads from or writes into. The
//! box is handed to the C completion callback as its argument; the callback
//! takes ownership back, stamps the completion time, releases the C
//! completion and sends the buffer with the result. The future the caller
//! awaits holds only the receiver, so dropping the future early is sound: the
//! buffer lives until the library is done with it, and the handle that issued
//! the op waits for every op in flight before it is destroyed.
//!
//! The benchmark's I/O loop does not use these futures: it runs its ops in
//! the fixed slots of a [`CompletionQueue`] (no allocation, channel or task
//! per op; one wakeup per wait of the issuing task, however many ops
//! completed meanwhile).

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use ceph_sys as sys;
use tokio::sync::oneshot;

use super::error::{CephError, Result};

/// The outcome of one asynchronous operation.
#[derive(Debug)]
pub struct AioDone<B> {
    /// The library's return value: bytes for reads, 0 for writes, or a negative errno.
    pub ret: i64,
    /// When the completion callback ran (the end of "completion latency").
    pub completed_at: Instant,
    /// The buffer the op owned while in flight, handed back for reuse.
    pub buf: B,
}

impl<B> AioDone<B> {
    /// `Ok(ret)` or the errno wrapped in a [`CephError`] naming `op`.
    pub fn check(&self, op: impl FnOnce() -> String) -> Result<i64> {
        if self.ret < 0 {
            Err(CephError::call(op(), self.ret as i32))
        } else {
            Ok(self.ret)
        }
    }
}

/// Future of an in-flight operation; resolves when the C callback has run.
#[must_use = "an op's result is only seen by awaiting its future"]
pub struct AioFuture<B> {
    rx: oneshot::Receiver<AioDone<B>>,
    what: &'static str,
}

impl<B> Future for AioFuture<B> {
    type Output = Result<AioDone<B>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let what = self.what;
        Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.map_err(|_| CephError::Lost(what)))
    }
}

/// What the C callback owns while an op is in flight.
struct CbState<B> {
    tx: oneshot::Sender<AioDone<B>>,
    buf: B,
    _guard: Option<InFlightGuard>,
}

/// The completion API of one C library (librados or librbd). Both use a
/// `void *` completion handle and a `void (*)(completion, void *arg)` callback.
pub(crate) trait CompletionApi {
    /// Library name for error messages.
    const CREATE: &'static str;
    /// Creates a completion that calls `cb(comp, arg)` once when the op ends.
    ///
    /// # Safety
    /// `out` must be a valid out-pointer; `arg` must stay valid until `cb` runs.
    unsafe fn create(
        arg: *mut c_void,
        cb: unsafe extern "C" fn(*mut c_void, *mut c_void),
        out: *mut *mut c_void,
    ) -> i32;
    /// The op's return value.
    ///
    /// # Safety
    /// `c` must be a live completion.
    unsafe fn return_value(c: *mut c_void) -> i64;
    /// Drops the caller's reference.
    ///
    /// # Safety
    /// `c` must be a live completion, released once.
    unsafe fn release(c: *mut c_void);
}

/// librados completions.
pub(crate) enum Rados {}

impl CompletionApi for Rados {
    const CREATE: &'static str = "rados_aio_create_completion2";
    unsafe fn create(
        arg: *mut c_void,
        cb: unsafe extern "C" fn(*mut c_void, *mut c_void),
        out: *mut *mut c_void,
    ) -> i32 {
        // SAFETY: forwarded contract.
        unsafe { sys::rados_aio_create_completion2(arg, Some(cb), out) }
    }
    unsafe fn return_value(c: *mut c_void) -> i64 {
        // SAFETY: forwarded contract.
        i64::from(unsafe { sys::rados_aio_get_return_value(c) })
    }
    unsafe fn release(c: *mut c_void) {
        // SAFETY: forwarded contract.
        unsafe { sys::rados_aio_release(c) }
    }
}

/// librbd completions.
pub(crate) enum Rbd {}

impl CompletionApi for Rbd {
    const CREATE: &'static str = "rbd_aio_create_completion";
    unsafe fn create(
        arg: *mut c_void,
        cb: unsafe extern "C" fn(*mut c_void, *mut c_void),
        out: *mut *mut c_void,
    ) -> i32 {
        // SAFETY: forwarded contract.
        unsafe { sys::rbd_aio_create_completion(arg, Some(cb), out) }
    }
    unsafe fn return_value(c: *mut c_void) -> i64 {
        // SAFETY: forwarded contract.
        unsafe { sys::rbd_aio_get_return_value(c) as i64 }
    }
    unsafe fn release(c: *mut c_void) {
        // SAFETY: forwarded contract.
        unsafe { sys::rbd_aio_release(c) }
    }
}

/// Starts one asynchronous operation of library `A`.
///
/// `start` receives the new completion and a raw pointer to the buffer owned
/// by the callback state; it must submit the op and return the library's
/// return code. On a synchronous failure the completion and the state are
/// freed here and the callback never runs. `guard` (if any) is held by the
/// callback state until the op completes, so its owner can wait for drain.
pub(crate) fn submit<A: CompletionApi, B: Send + 'static>(
    what: &'static str,
    buf: B,
    guard: Option<InFlightGuard>,
    start: impl FnOnce(*mut c_void, *mut B) -> i32,
) -> Result<AioFuture<B>> {
    let (tx, rx) = oneshot::channel();
    let state: *mut CbState<B> = Box::into_raw(Box::new(CbState {
        tx,
        buf,
        _guard: guard,
    }));
    let mut comp: *mut c_void = std::ptr::null_mut();
    // SAFETY: `state` is a valid, uniquely owned heap pointer; the library
    // stores it opaquely and passes it back to `done::<A, B>` exactly once;
    // `comp` is a valid out-pointer.
    let r = unsafe { A::create(state.cast(), done::<A, B>, &mut comp) };
    if r < 0 {
        // SAFETY: the completion was not created, so nothing else references `state`.
        drop(unsafe { Box::from_raw(state) });
        return Err(CephError::call(A::CREATE, r));
    }
    // SAFETY: `state` stays valid until the callback runs; only a raw pointer
    // to the buffer escapes, so no reference outlives a concurrent callback.
    let buf_ptr = unsafe { std::ptr::addr_of_mut!((*state).buf) };
    let r = start(comp, buf_ptr);
    if r < 0 {
        // SAFETY: the op was not submitted, so the callback will never run:
        // this is the only owner of both the completion and the state.
        unsafe {
            A::release(comp);
            drop(Box::from_raw(state));
        }
        return Err(CephError::call(what, r));
    }
    Ok(AioFuture { rx, what })
}

/// The C completion callback.
///
/// # Safety
/// Called by the library exactly once per completion with the `arg` given to
/// `A::create`, i.e. a `Box<CbState<B>>` leaked by [`submit`].
unsafe extern "C" fn done<A: CompletionApi, B>(comp: *mut c_void, arg: *mut c_void) {
    let completed_at = Instant::now();
    // SAFETY: see the function's contract: `arg` is our leaked box, handed
    // back once; reclaiming it here makes this callback its only owner.
    let state = unsafe { Box::from_raw(arg.cast::<CbState<B>>()) };
    // SAFETY: `comp` is the live completion this callback was registered on.
    let ret = unsafe { A::return_value(comp) };
    // SAFETY: we hold the only user reference; the library keeps its own
    // reference while the callback runs (librados' AioCompletionImpl and
    // librbd's AioCompletion are refcounted, and QEMU's rbd driver releases
    // in the callback the same way), so this release happens exactly once.
    unsafe { A::release(comp) };
    let CbState { tx, buf, _guard } = *state;
    // The receiver may be gone (future dropped); then the buffer is freed here.
    let _ = tx.send(AioDone {
        ret,
        completed_at,
        buf,
    });
    // `_guard` drops last: the op is fully finished for whoever waits on drain.
}

/// Counts a handle's ops in flight so its `Drop` can wait for them.
#[derive(Debug, Default)]
pub(crate) struct InFlight(AtomicUsize);

/// One op's share of an [`InFlight`] count, released when the op completes.
pub(crate) struct InFlightGuard(Arc<InFlight>);

impl InFlight {
    /// Registers one op.
    pub(crate) fn enter(self: &Arc<Self>) -> InFlightGuard {
        self.0.fetch_add(1, Ordering::AcqRel);
        InFlightGuard(Arc::clone(self))
    }

    /// Waits (polling, bounded) until no op is in flight; false on timeout.
    pub(crate) fn drain(&self, limit: std::time::Duration) -> bool {
        let deadline = Instant::now() + limit;
        while self.0.load(Ordering::Acquire) != 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        true
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One finished op of a [`CompletionQueue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// The slot the op ran in.
    pub slot: usize,
    /// The library's return value: bytes for reads, 0 for writes, or a negative errno.
    pub ret: i64,
    /// When the completion callback ran (the end of "completion latency").
    pub completed_at: Instant,
}

/// One op slot: the op's buffers and the result the callback leaves.
///
/// Ownership alternates: while the slot's op is in flight the library and
/// then the callback own the cells; once the callback has set the slot's
/// ready bit (release) and the queue has taken it (acquire), the queue does.
struct Slot {
    /// Buffer an op writes from (librbd may read it until completion).
    write: UnsafeCell<Vec<u8>>,
    /// Buffer an op reads into.
    read: UnsafeCell<Vec<u8>>,
    ret: UnsafeCell<i64>,
    completed_at: UnsafeCell<Option<Instant>>,
    /// Held while the op is in flight, so a handle's `Drop` waits for it.
    guard: UnsafeCell<Option<InFlightGuard>>,
    /// The shared part this slot lives in (its address is stable: the slots
    /// are a boxed slice inside an `Arc`).
    shared: *const Shared,
    index: usize,
}

/// The part of a queue the completion callbacks touch.
struct Shared {
    slots: Box<[Slot]>,
    /// Bit `i` set = slot `i`'s op completed and was not reaped yet.
    ready: Box<[AtomicU64]>,
    waker: futures_util::task::AtomicWaker,
    /// Ops whose callback has not finished yet.
    in_flight: AtomicUsize,
}

// SAFETY: the cells of a slot are only touched by one side at a time (see
// `Slot`), handed over through the `ready` bits with release/acquire; the
// rest is atomics. The raw `shared` pointers point into the same allocation.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// A fixed set of op slots whose completions are collected without a
/// per-op allocation, channel or task: the C callback stamps the time,
/// stores the return value in the op's slot, sets the slot's bit in a
/// lock-free bitmap and wakes the issuing task (at most once per time the
/// task waits, so a burst of completions costs one wakeup). The issuing task
/// takes every finished slot in one sweep.
///
/// Dropping the queue waits for every op still in flight (their callbacks
/// write into the slots).
pub struct CompletionQueue {
    shared: Arc<Shared>,
    /// Consumer-side: whether slot `i` has an op in flight.
    busy: Vec<bool>,
}

impl std::fmt::Debug for CompletionQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionQueue")
            .field("slots", &self.busy.len())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

impl CompletionQueue {
    /// A queue of `slots` op slots (at least 1).
    pub fn new(slots: usize) -> Self {
        let n = slots.max(1);
        let mut shared = Arc::new(Shared {
            slots: (0..n)
                .map(|index| Slot {
                    write: UnsafeCell::new(Vec::new()),
                    read: UnsafeCell::new(Vec::new()),
                    ret: UnsafeCell::new(0),
                    completed_at: UnsafeCell::new(None),
                    guard: UnsafeCell::new(None),
                    shared: std::ptr::null(),
                    index,
                })
                .collect(),
            ready: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            waker: futures_util::task::AtomicWaker::new(),
            in_flight: AtomicUsize::new(0),
        });
        let ptr = Arc::as_ptr(&shared);
        let s = Arc::get_mut(&mut shared).expect("just created");
        for slot in s.slots.iter_mut() {
            slot.shared = ptr;
        }
        CompletionQueue {
            shared,
            busy: vec![false; n],
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.busy.len()
    }

    /// Always false: a queue has at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Ops submitted and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.busy.iter().filter(|b| **b).count()
    }

    fn idle_slot(&self, slot: usize) -> &Slot {
        assert!(
            !self.busy[slot],
            "slot {slot} of a completion queue is in flight"
        );
        &self.shared.slots[slot]
    }

    /// The buffer slot `slot` writes from (empty until set). Panics if the
    /// slot's op is in flight.
    pub fn write_buf(&mut self, slot: usize) -> &mut Vec<u8> {
        let s = self.idle_slot(slot);
        // SAFETY: the slot is idle (checked above), so no op or callback
        // touches its cells, and `&mut self` makes this the only reference.
        unsafe { &mut *s.write.get() }
    }

    /// The buffer slot `slot` reads into (empty until set). Panics if the
    /// slot's op is in flight.
    pub fn read_buf(&mut self, slot: usize) -> &mut Vec<u8> {
        let s = self.idle_slot(slot);
        // SAFETY: as in `write_buf`.
        unsafe { &mut *s.read.get() }
    }

    /// Takes every finished op into `out` (appending); `Pending` (with the
    /// task's waker registered) when none has finished.
    pub fn poll_reap(&mut self, cx: &mut Context<'_>, out: &mut Vec<Reaped>) -> Poll<()> {
        if self.sweep(out) {
            return Poll::Ready(());
        }
        self.shared.waker.register(cx.waker());
        // A callback may have set its bit before the waker was registered.
        if self.sweep(out) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    fn sweep(&mut self, out: &mut Vec<Reaped>) -> bool {
        let before = out.len();
        for (w, word) in self.shared.ready.iter().enumerate() {
            if word.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = word.swap(0, Ordering::Acquire);
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let i = w * 64 + b;
                let s = &self.shared.slots[i];
                // SAFETY: the ready bit was set by the callback after its
                // last write to the slot (release) and taken here (acquire):
                // the slot's cells belong to this side again.
                let (ret, at) = unsafe { (*s.ret.get(), (*s.completed_at.get()).take()) };
                self.busy[i] = false;
                out.push(Reaped {
                    slot: i,
                    ret,
                    completed_at: at.unwrap_or_else(Instant::now),
                });
            }
        }
        out.len() > before
    }

    /// Starts one op of library `A` in `slot`: `start` gets the new
    /// completion and the slot's buffers (write, read) and must submit the
    /// op, returning the library's code. On a synchronous failure the
    /// completion is released here and the slot stays idle.
    pub(crate) fn start<A: CompletionApi>(
        &mut self,
        slot: usize,
        what: &'static str,
        guard: Option<InFlightGuard>,
        start: impl FnOnce(*mut c_void, *mut Vec<u8>, *mut Vec<u8>) -> i32,
    ) -> Result<()> {
        assert!(
            !self.busy[slot],
            "slot {slot} of a completion queue is in flight"
        );
        let s = &self.shared.slots[slot];
        let arg = std::ptr::from_ref(s).cast_mut().cast::<c_void>();
        let mut comp: *mut c_void = std::ptr::null_mut();
        // SAFETY: `arg` points to a slot inside `self.shared`, which lives
        // until every op has completed (see `Drop`); `comp` is a valid
        // out-pointer.
        let r = unsafe { A::create(arg, slot_done::<A>, &mut comp) };
        if r < 0 {
            return Err(CephError::call(A::CREATE, r));
        }
        // SAFETY: the slot is idle, so this side owns its cells.
        unsafe { *s.guard.get() = guard };
        self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
        self.busy[slot] = true;
        let r = start(comp, s.write.get(), s.read.get());
        if r < 0 {
            self.busy[slot] = false;
            self.shared.in_flight.fetch_sub(1, Ordering::AcqRel);
            // SAFETY: the op was not submitted, so the callback will never
            // run: this is the only owner of the completion and the slot.
            unsafe {
                A::release(comp);
                drop((*s.guard.get()).take());
            }
            return Err(CephError::call(what, r));
        }
        Ok(())
    }
}

impl Drop for CompletionQueue {
    fn drop(&mut self) {
        // The callbacks of ops still in flight write into the slots: wait
        // for them (bounded: ops are bounded by rados_osd_op_timeout). If
        // they do not finish, leak the slots rather than free them under a
        // callback.
        let deadline = Instant::now() + std::time::Duration::from_secs(600);
        while self.shared.in_flight.load(Ordering::Acquire) != 0 {
            if Instant::now() >= deadline {
                std::mem::forget(Arc::clone(&self.shared));
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// The C completion callback of a [`CompletionQueue`] slot.
///
/// # Safety
/// Called by the library exactly once per completion with the `arg` given to
/// `A::create` in [`CompletionQueue::start`], i.e. a pointer to a slot whose
/// queue waits for this callback before it frees the slot.
unsafe extern "C" fn slot_done<A: CompletionApi>(comp: *mut c_void, arg: *mut c_void) {
    let completed_at = Instant::now();
    // SAFETY: per the contract `arg` is a live slot; its op is in flight, so
    // this callback owns the slot's cells until it sets the ready bit.
    let slot = unsafe { &*arg.cast::<Slot>() };
    // SAFETY: the slot's `shared` pointer is its own queue's shared part,
    // alive until `in_flight` drops to zero below.
    let shared = unsafe { &*slot.shared };
    // SAFETY: `comp` is the live completion this callback was registered on;
    // released once, here (see `done`).
    let ret = unsafe {
        let ret = A::return_value(comp);
        A::release(comp);
        ret
    };
    // SAFETY: this callback owns the slot's cells (see above).
    let guard = unsafe {
        *slot.ret.get() = ret;
        *slot.completed_at.get() = Some(completed_at);
        (*slot.guard.get()).take()
    };
    // The op is finished for whoever waits on its handle's drain.
    drop(guard);
    shared.ready[slot.index / 64].fetch_or(1 << (slot.index % 64), Ordering::Release);
    shared.waker.wake();
    // Last touch of the shared part: after this the queue may be freed.
    shared.in_flight.fetch_sub(1, Ordering::AcqRel);
}
