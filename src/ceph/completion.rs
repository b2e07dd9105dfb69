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

use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
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
