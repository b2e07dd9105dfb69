//! RADOS watch/notify: a [`Watch`] on an object forwards every notify sent
//! to that object into a channel; [`IoCtx::notify`] sends one and gathers
//! the watchers' acknowledgements.
//!
//! The C watch callback runs on a librados finisher thread. It only copies
//! the payload and pushes it into an unbounded channel (never blocks); the
//! channel's sender lives in a boxed context owned by the [`Watch`], freed in
//! `Drop` after `rados_unwatch2` and `rados_watch_flush` guarantee that no
//! callback can run any more.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::time::{Duration, SystemTime};

use ceph_sys as sys;
use tokio::sync::mpsc;

use super::completion::{submit, Rados};
use super::error::{CephError, Result};
use super::ioctx::IoCtx;

/// One notify delivered to a watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notify {
    /// The notify's id (pass it to [`Watch::ack`]).
    pub notify_id: u64,
    /// The cookie of the watch it was delivered to.
    pub cookie: u64,
    /// The notifier's global id (`client.<gid>`).
    pub notifier_id: u64,
    /// The notifier's payload.
    pub payload: Vec<u8>,
    /// This host's clock when the callback ran.
    pub received_at: SystemTime,
}

/// What a watch reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A notify arrived; it must be acknowledged with [`Watch::ack`] or the
    /// notifier waits until its timeout.
    Notify(Notify),
    /// The watch session failed (e.g. `ENOTCONN` after a disconnect longer
    /// than the watch timeout, `ENOENT` when the object was removed); notifies
    /// may have been missed and the watch should be re-established.
    Error {
        /// The watch's cookie.
        cookie: u64,
        /// The positive errno.
        errno: i32,
    },
}

/// What the C callbacks own: only the channel's sender.
struct WatchCtx {
    tx: mpsc::UnboundedSender<WatchEvent>,
}

/// A registered watch on one object. Unregistered (and its callbacks
/// flushed) when dropped.
pub struct Watch<'a> {
    io: &'a IoCtx,
    oid: CString,
    cookie: u64,
    ctx: NonNull<WatchCtx>,
    rx: mpsc::UnboundedReceiver<WatchEvent>,
}

/// A watcher's acknowledgement of a notify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyAck {
    /// The watcher's client global id.
    pub gid: u64,
    /// The watch's cookie.
    pub cookie: u64,
    /// The payload the watcher passed to `rados_notify_ack`.
    pub payload: Vec<u8>,
}

/// A watcher that did not acknowledge in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotifyTimeout {
    /// The watcher's client global id.
    pub gid: u64,
    /// The watch's cookie.
    pub cookie: u64,
}

/// The outcome of a notify.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotifyReply {
    /// Whether the notify ran into its timeout (some watchers did not ack).
    pub timed_out: bool,
    /// The watchers that acknowledged.
    pub acks: Vec<NotifyAck>,
    /// The watchers that did not acknowledge within the timeout.
    pub timeouts: Vec<NotifyTimeout>,
}

/// Decodes a notify reply buffer (librados.h, `rados_aio_notify`):
/// `le32 num_acks`, per ack `le64 gid, le64 cookie, le32 len, payload`,
/// then `le32 num_timeouts`, per timeout `le64 gid, le64 cookie`.
pub fn decode_notify_reply(buf: &[u8]) -> Result<(Vec<NotifyAck>, Vec<NotifyTimeout>)> {
    struct Cur<'b>(&'b [u8]);
    impl<'b> Cur<'b> {
        fn take(&mut self, n: usize) -> Result<&'b [u8]> {
            if self.0.len() < n {
                return Err(CephError::InvalidArgument(format!(
                    "notify reply truncated: {} bytes left, {n} needed",
                    self.0.len()
                )));
            }
            let (a, b) = self.0.split_at(n);
            self.0 = b;
            Ok(a)
        }
        fn u32(&mut self) -> Result<u32> {
            Ok(u32::from_le_bytes(
                self.take(4)?.try_into().expect("4 bytes"),
            ))
        }
        fn u64(&mut self) -> Result<u64> {
            Ok(u64::from_le_bytes(
                self.take(8)?.try_into().expect("8 bytes"),
            ))
        }
    }
    let mut c = Cur(buf);
    let n = c.u32()? as usize;
    let mut acks = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let gid = c.u64()?;
        let cookie = c.u64()?;
        let len = c.u32()? as usize;
        let payload = c.take(len)?.to_vec();
        acks.push(NotifyAck {
            gid,
            cookie,
            payload,
        });
    }
    let n = c.u32()? as usize;
    let mut timeouts = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let gid = c.u64()?;
        let cookie = c.u64()?;
        timeouts.push(NotifyTimeout { gid, cookie });
    }
    Ok((acks, timeouts))
}

/// The reply buffer librados allocates for a notify; freed with
/// `rados_buffer_free` when dropped (also when the notify's future was
/// dropped before completion: the callback state then drops it).
struct ReplyBuf {
    ptr: *mut c_char,
    len: usize,
}

// SAFETY: the buffer is plain heap memory owned exclusively by this value;
// librados writes the pointer once, before the completion fires.
unsafe impl Send for ReplyBuf {}

impl ReplyBuf {
    fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: librados allocated `len` bytes at `ptr`, owned by self until Drop.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for ReplyBuf {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: allocated by librados for this notify, freed exactly once.
            unsafe { sys::rados_buffer_free(self.ptr) };
        }
    }
}

/// The C notify callback.
///
/// # Safety
/// `arg` is the `WatchCtx` of a live [`Watch`] (freed only after
/// `rados_unwatch2` + `rados_watch_flush`); `data` is NULL or valid for
/// `len` bytes for the duration of the call.
unsafe extern "C" fn on_notify(
    arg: *mut c_void,
    notify_id: u64,
    cookie: u64,
    notifier_id: u64,
    data: *mut c_void,
    len: usize,
) {
    let received_at = SystemTime::now();
    let payload = if data.is_null() || len == 0 {
        Vec::new()
    } else {
        // SAFETY: per the contract, `data` is readable for `len` bytes.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec()
    };
    // SAFETY: per the contract, `arg` is a live WatchCtx; only shared access.
    let ctx = unsafe { &*arg.cast::<WatchCtx>() };
    // Unbounded: never blocks. The receiver may be gone while the watch is
    // being torn down; the notify is then dropped.
    let _ = ctx.tx.send(WatchEvent::Notify(Notify {
        notify_id,
        cookie,
        notifier_id,
        payload,
        received_at,
    }));
}

/// The C watch error callback.
///
/// # Safety
/// As for [`on_notify`].
unsafe extern "C" fn on_watch_error(arg: *mut c_void, cookie: u64, err: c_int) {
    // SAFETY: per the contract, `arg` is a live WatchCtx; only shared access.
    let ctx = unsafe { &*arg.cast::<WatchCtx>() };
    let _ = ctx.tx.send(WatchEvent::Error {
        cookie,
        errno: err.abs(),
    });
}

impl IoCtx {
    /// Watches object `oid` (which must exist), with `timeout`: how long the
    /// OSD keeps the watch after losing contact with this client (whole
    /// seconds, at least 1; `rados_watch3`).
    pub fn watch(&self, oid: &str, timeout: Duration) -> Result<Watch<'_>> {
        let c_oid = CString::new(oid)
            .map_err(|_| CephError::InvalidArgument("object name contains a NUL byte".into()))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let ctx = NonNull::from(Box::leak(Box::new(WatchCtx { tx })));
        let secs = u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX);
        let mut cookie = 0u64;
        // SAFETY: valid ioctx, NUL-terminated name (copied by librados), valid
        // out-pointer; `ctx` stays valid until Drop has unwatched and flushed.
        let r = unsafe {
            sys::rados_watch3(
                self.raw(),
                c_oid.as_ptr(),
                &mut cookie,
                Some(on_notify),
                Some(on_watch_error),
                secs,
                ctx.as_ptr().cast(),
            )
        };
        if r < 0 {
            // SAFETY: the watch was not registered, so no callback holds `ctx`.
            drop(unsafe { Box::from_raw(ctx.as_ptr()) });
            return Err(CephError::call(format!("watch object '{oid}'"), r));
        }
        Ok(Watch {
            io: self,
            oid: c_oid,
            cookie,
            ctx,
            rx,
        })
    }

    /// Notifies every watcher of `oid` with `payload` and waits (up to
    /// `timeout`) for their acknowledgements. Running into the timeout is
    /// not an error: the reply says who did not answer.
    pub async fn notify(
        &self,
        oid: &CStr,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<NotifyReply> {
        let io = self.raw();
        let len = c_int::try_from(payload.len())
            .map_err(|_| CephError::InvalidArgument("notify payload larger than 2 GiB".into()))?;
        let timeout_ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let reply = ReplyBuf {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        let fut = submit::<Rados, _>("rados_aio_notify", reply, None, |c, b| {
            // SAFETY: valid ioctx and completion; oid and payload are copied
            // by librados before it returns; `b` points into the callback
            // state, which outlives the op, so librados may write the reply
            // pointer and length there at completion.
            unsafe {
                sys::rados_aio_notify(
                    io,
                    oid.as_ptr(),
                    c,
                    payload.as_ptr().cast(),
                    len,
                    timeout_ms,
                    std::ptr::addr_of_mut!((*b).ptr),
                    std::ptr::addr_of_mut!((*b).len),
                )
            }
        })?;
        let done = fut.await?;
        let timed_out = done.ret == -i64::from(libc::ETIMEDOUT);
        if done.ret < 0 && !timed_out {
            done.check(|| format!("notify object '{}'", oid.to_string_lossy()))?;
        }
        let (acks, timeouts) = decode_notify_reply(done.buf.bytes())?;
        Ok(NotifyReply {
            timed_out,
            acks,
            timeouts,
        })
    }
}

impl Watch<'_> {
    /// The watch's cookie (as it appears in notify replies).
    pub fn cookie(&self) -> u64 {
        self.cookie
    }

    /// The next event; `None` only if the channel closed (never while the
    /// watch lives).
    pub async fn next_event(&mut self) -> Option<WatchEvent> {
        self.rx.recv().await
    }

    /// Acknowledges notify `notify_id` with `payload` (sent, not waited for).
    pub fn ack(&self, notify_id: u64, payload: &[u8]) -> Result<()> {
        let len = c_int::try_from(payload.len())
            .map_err(|_| CephError::InvalidArgument("ack payload larger than 2 GiB".into()))?;
        // SAFETY: valid ioctx (borrowed for the watch's life), NUL-terminated
        // name; librados copies the payload.
        let r = unsafe {
            sys::rados_notify_ack(
                self.io.raw(),
                self.oid.as_ptr(),
                notify_id,
                self.cookie,
                payload.as_ptr().cast(),
                len,
            )
        };
        if r < 0 {
            return Err(CephError::call("rados_notify_ack", r));
        }
        Ok(())
    }

    /// Milliseconds since the OSD last confirmed the watch, or the error
    /// that broke it (`rados_watch_check`).
    pub fn check(&self) -> Result<u64> {
        // SAFETY: valid ioctx and this watch's cookie.
        let r = unsafe { sys::rados_watch_check(self.io.raw(), self.cookie) };
        if r < 0 {
            return Err(CephError::call("rados_watch_check", r));
        }
        Ok(r as u64)
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        // SAFETY: valid ioctx and cookie, unwatched exactly once. After
        // rados_unwatch2 no new callback is queued for this cookie and
        // rados_watch_flush waits for those already queued, so afterwards no
        // callback can touch `ctx`, which is then freed exactly once.
        unsafe {
            sys::rados_unwatch2(self.io.raw(), self.cookie);
            sys::rados_watch_flush(self.io.cluster().as_ptr());
            drop(Box::from_raw(self.ctx.as_ptr()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_acks_and_timeouts() {
        let mut b = Vec::new();
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&4101u64.to_le_bytes());
        b.extend_from_slice(&7u64.to_le_bytes());
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(b"abc");
        b.extend_from_slice(&4102u64.to_le_bytes());
        b.extend_from_slice(&8u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&4103u64.to_le_bytes());
        b.extend_from_slice(&9u64.to_le_bytes());
        let (acks, tos) = decode_notify_reply(&b).unwrap();
        assert_eq!(acks.len(), 2);
        assert_eq!((acks[0].gid, acks[0].cookie), (4101, 7));
        assert_eq!(acks[0].payload, b"abc");
        assert_eq!(
            (acks[1].gid, acks[1].cookie, acks[1].payload.len()),
            (4102, 8, 0)
        );
        assert_eq!(
            tos,
            vec![NotifyTimeout {
                gid: 4103,
                cookie: 9
            }]
        );
        // Every truncation is an error, never a panic.
        for cut in 0..b.len() {
            assert!(decode_notify_reply(&b[..cut]).is_err(), "cut at {cut}");
        }
    }
}
