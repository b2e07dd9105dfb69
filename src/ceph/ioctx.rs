//! The pool I/O context (`rados_ioctx_t`) and its asynchronous object ops.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

use ceph_sys as sys;

use super::bufptr::SharedBuf;
use super::cluster::{self, cstring, ClusterHandle};
use super::completion::{submit, AioFuture, CompletionQueue, Rados};
use super::error::{CephError, Result};

/// An I/O context on one pool. Ops are asynchronous; each returns an
/// [`AioFuture`]. Dropping the context first waits for every op it issued.
pub struct IoCtx {
    ptr: NonNull<c_void>,
    // Keeps the cluster alive for as long as this context exists.
    cluster: Arc<ClusterHandle>,
    pool: String,
}

// SAFETY: librados' IoCtxImpl serialises its own state; the only thread-unsafe
// operation (changing the namespace) takes `&mut self`.
unsafe impl Send for IoCtx {}
// SAFETY: shared references only submit ops, which librados allows from many
// threads on one ioctx.
unsafe impl Sync for IoCtx {}

/// Size and modification time of an object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ObjectStat {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, seconds since the epoch.
    pub mtime: libc::time_t,
}

/// What one [`IoCtx::write_op_in`] writes; `None` parts are left out.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteParts<'a> {
    /// Object data and the offset it goes to.
    pub data: Option<(&'a [u8], u64)>,
    /// One omap key and its value.
    pub omap: Option<(&'a CStr, &'a [u8])>,
    /// One xattr name and its value.
    pub xattr: Option<(&'a CStr, &'a [u8])>,
}

/// One entry of a pool listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// The object's namespace ("" for the default).
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

/// An I/O context is opened from a connection; the constructor lives with
/// the type it makes, so the connection's file needs nothing of this one.
impl cluster::Rados {
    /// Opens an I/O context on a pool.
    pub fn ioctx(&self, pool: &str) -> Result<IoCtx> {
        let p = cstring("pool name", pool)?;
        let mut io: sys::rados_ioctx_t = std::ptr::null_mut();
        // SAFETY: valid handle, NUL-terminated name, valid out-pointer.
        let r = unsafe { sys::rados_ioctx_create(self.handle.as_ptr(), p.as_ptr(), &mut io) };
        if r == -libc::ENOENT {
            return Err(CephError::NoSuchPool(pool.into()));
        }
        if r < 0 {
            return Err(CephError::call(format!("open pool '{pool}'"), r));
        }
        let ptr = NonNull::new(io).ok_or(CephError::Lost("rados_ioctx_create"))?;
        Ok(IoCtx::from_raw(
            ptr,
            Arc::clone(&self.handle),
            pool.to_string(),
        ))
    }
}

impl IoCtx {
    pub(crate) fn from_raw(
        ptr: NonNull<c_void>,
        cluster: Arc<ClusterHandle>,
        pool: String,
    ) -> Self {
        IoCtx { ptr, cluster, pool }
    }

    pub(crate) fn raw(&self) -> sys::rados_ioctx_t {
        self.ptr.as_ptr()
    }

    pub(crate) fn cluster(&self) -> Arc<ClusterHandle> {
        Arc::clone(&self.cluster)
    }

    /// The pool's name.
    pub fn pool_name(&self) -> &str {
        &self.pool
    }

    /// The pool's id.
    pub fn pool_id(&self) -> i64 {
        // SAFETY: valid ioctx.
        unsafe { sys::rados_ioctx_get_id(self.raw()) }
    }

    /// Sets the namespace for subsequent ops ("" for the default namespace).
    pub fn set_namespace(&mut self, ns: &str) -> Result<()> {
        let c = CString::new(ns)
            .map_err(|_| CephError::InvalidArgument("namespace contains a NUL byte".into()))?;
        // SAFETY: valid ioctx; `&mut self` guarantees no concurrent submitter;
        // librados copies the string.
        unsafe { sys::rados_ioctx_set_namespace(self.raw(), c.as_ptr()) };
        Ok(())
    }

    /// Lets listings see every namespace of the pool (each entry names its
    /// own); other ops need one namespace set again with [`Self::set_namespace`].
    pub fn set_all_namespaces(&mut self) {
        let all = CStr::from_bytes_with_nul(sys::LIBRADOS_ALL_NSPACES)
            .expect("librados' constant ends with its NUL");
        // SAFETY: valid ioctx; `&mut self` guarantees no concurrent submitter;
        // librados copies the string.
        unsafe { sys::rados_ioctx_set_namespace(self.raw(), all.as_ptr()) };
    }

    /// Makes writes to a full pool (quota reached, or the cluster's full
    /// ratio) fail at once with `EDQUOT`/`ENOSPC` instead of waiting, paused
    /// in the client, until the pool has room again (librados' default:
    /// `rados bench` hangs on a full pool). Deletes still succeed, so a run
    /// that filled the pool can remove its objects. Never forces a write
    /// past the full ratio (that is `FULL_FORCE`, not used).
    pub fn set_pool_full_try(&mut self) {
        // SAFETY: valid ioctx; `&mut self` guarantees no concurrent submitter
        // while librados sets the flag for subsequent ops.
        unsafe { sys::rados_set_pool_full_try(self.raw()) };
    }

    /// Writes `data` at `offset` of object `oid`.
    ///
    /// librados copies `data` into its own buffer before `rados_aio_write`
    /// returns (`bl.append(buf, len)` in librados_c.cc), so the caller may
    /// reuse `data` immediately.
    pub fn write(&self, oid: &CStr, data: &[u8], offset: u64) -> Result<AioFuture<()>> {
        let io = self.raw();
        submit::<Rados, _>("rados_aio_write", (), None, |c, _| {
            // SAFETY: valid ioctx and completion; oid and data are valid for
            // the call and copied by librados before it returns.
            unsafe {
                sys::rados_aio_write(
                    io,
                    oid.as_ptr(),
                    c,
                    data.as_ptr().cast(),
                    data.len(),
                    offset,
                )
            }
        })
    }

    /// Replaces object `oid` with `data` (copied by librados, as for [`IoCtx::write`]).
    pub fn write_full(&self, oid: &CStr, data: &[u8]) -> Result<AioFuture<()>> {
        let io = self.raw();
        submit::<Rados, _>("rados_aio_write_full", (), None, |c, _| {
            // SAFETY: as in `write`.
            unsafe {
                sys::rados_aio_write_full(io, oid.as_ptr(), c, data.as_ptr().cast(), data.len())
            }
        })
    }

    /// Reads up to `buf.len()` bytes at `offset` of `oid` into `buf`, which
    /// the op owns until it completes and then hands back in
    /// [`AioDone::buf`](super::AioDone); `ret` is the number of bytes read.
    pub fn read(&self, oid: &CStr, buf: Vec<u8>, offset: u64) -> Result<AioFuture<Vec<u8>>> {
        let io = self.raw();
        submit::<Rados, _>("rados_aio_read", buf, None, |c, b| {
            // SAFETY: `b` points to the Vec owned by the callback state, whose
            // heap block stays put until the callback hands it back.
            let (ptr, len) = unsafe { ((*b).as_mut_ptr(), (*b).len()) };
            // SAFETY: valid ioctx and completion; ptr is writable for len bytes
            // until completion (see above); oid is copied by librados.
            unsafe { sys::rados_aio_read(io, oid.as_ptr(), c, ptr.cast::<c_char>(), len, offset) }
        })
    }

    /// Writes `data` at `offset` of `oid` as the op of `slot` in `queue`
    /// (no per-op allocation on this side). librados copies `data` before
    /// returning, as for [`IoCtx::write`].
    pub fn write_in(
        &self,
        queue: &mut CompletionQueue,
        slot: usize,
        oid: &CStr,
        data: &[u8],
        offset: u64,
    ) -> Result<()> {
        let io = self.raw();
        queue.start::<Rados>(slot, "rados_aio_write", None, |c, _, _| {
            // SAFETY: as in `write`.
            unsafe {
                sys::rados_aio_write(
                    io,
                    oid.as_ptr(),
                    c,
                    data.as_ptr().cast(),
                    data.len(),
                    offset,
                )
            }
        })
    }

    /// Writes `buf` at `offset` of `oid` as the op of `slot` in `queue`,
    /// without copying it: the op holds a reference to the buffer until Ceph
    /// is done with it (see [`SharedBuf`]).
    pub fn write_shared_in(
        &self,
        queue: &mut CompletionQueue,
        slot: usize,
        oid: &CStr,
        buf: &SharedBuf,
        offset: u64,
    ) -> Result<()> {
        let io = self.raw();
        let b = buf.as_raw();
        let len = buf.len();
        queue.start::<Rados>(slot, "rados_aio_write", None, |c, _, _| {
            // SAFETY: valid ioctx and completion; `b` is a live buffer::ptr
            // (borrowed for this call), to which the op takes a reference of
            // its own, so it outlives the op whatever the caller does next;
            // oid is copied by librados.
            unsafe { sys::cephsys_rados_aio_write_bufptr(io, oid.as_ptr(), c, b, len, offset) }
        })
    }

    /// One compound write of `slot` in `queue` to `oid`, as rados bench's
    /// `--write-object/--write-omap/--write-xattr` make it: object data at
    /// an offset, one omap key, one xattr — whichever `parts` names, in one
    /// op that the OSD applies atomically. librados copies every value
    /// while the op is built and moves the built op into its request at
    /// submission, so the write op is released here and nothing the caller
    /// passed is referenced afterwards (rados bench drops its
    /// `ObjectWriteOperation` the same way, right after `aio_operate`).
    pub fn write_op_in(
        &self,
        queue: &mut CompletionQueue,
        slot: usize,
        oid: &CStr,
        parts: &WriteParts<'_>,
    ) -> Result<()> {
        let io = self.raw();
        queue.start::<Rados>(slot, "rados_aio_write_op_operate", None, |c, _, _| {
            // SAFETY: the write op is created, filled, submitted and released
            // here only; every pointer handed to librados (oid, keys, names,
            // values) is valid for the duration of these calls, which copy
            // what they need (see above); io and c are valid.
            unsafe {
                let op = sys::rados_create_write_op();
                if op.is_null() {
                    return -libc::ENOMEM;
                }
                if let Some((data, offset)) = parts.data {
                    sys::rados_write_op_write(op, data.as_ptr().cast(), data.len(), offset);
                }
                if let Some((key, val)) = parts.omap {
                    let keys = [key.as_ptr()];
                    let vals = [val.as_ptr().cast::<c_char>()];
                    let lens = [val.len()];
                    sys::rados_write_op_omap_set(
                        op,
                        keys.as_ptr(),
                        vals.as_ptr(),
                        lens.as_ptr(),
                        1,
                    );
                }
                if let Some((name, val)) = parts.xattr {
                    sys::rados_write_op_setxattr(op, name.as_ptr(), val.as_ptr().cast(), val.len());
                }
                let r = sys::rados_aio_write_op_operate(
                    op,
                    io,
                    c,
                    oid.as_ptr(),
                    std::ptr::null_mut(),
                    0,
                );
                sys::rados_release_write_op(op);
                r
            }
        })
    }

    /// Reads into the read buffer of `slot` in `queue` (its whole length) at
    /// `offset` of `oid`; the reaped `ret` is the number of bytes read.
    pub fn read_in(
        &self,
        queue: &mut CompletionQueue,
        slot: usize,
        oid: &CStr,
        offset: u64,
    ) -> Result<()> {
        let io = self.raw();
        queue.start::<Rados>(slot, "rados_aio_read", None, |c, _, b| {
            // SAFETY: `b` points to the slot's read buffer, which the queue
            // leaves untouched (and keeps alive) until the op completes.
            let (ptr, len) = unsafe { ((*b).as_mut_ptr(), (*b).len()) };
            // SAFETY: valid ioctx and completion; ptr is writable for len
            // bytes until completion (see above); oid is copied by librados.
            unsafe { sys::rados_aio_read(io, oid.as_ptr(), c, ptr.cast::<c_char>(), len, offset) }
        })
    }

    /// Size and mtime of `oid`; the result is in [`AioDone::buf`](super::AioDone).
    pub fn stat(&self, oid: &CStr) -> Result<AioFuture<ObjectStat>> {
        let io = self.raw();
        submit::<Rados, _>("rados_aio_stat", ObjectStat::default(), None, |c, o| {
            // SAFETY: `o` points into the callback state, which outlives the
            // op; librados writes the two fields at completion.
            unsafe {
                sys::rados_aio_stat(
                    io,
                    oid.as_ptr(),
                    c,
                    std::ptr::addr_of_mut!((*o).size),
                    std::ptr::addr_of_mut!((*o).mtime),
                )
            }
        })
    }

    /// Removes `oid`.
    pub fn remove(&self, oid: &CStr) -> Result<AioFuture<()>> {
        let io = self.raw();
        submit::<Rados, _>("rados_aio_remove", (), None, |c, _| {
            // SAFETY: valid ioctx and completion; oid is copied by librados.
            unsafe { sys::rados_aio_remove(io, oid.as_ptr(), c) }
        })
    }

    /// Creates object `oid`, empty, unless it exists (then it is left as it
    /// is); blocking (bounded by `rados_osd_op_timeout`).
    pub fn create_if_missing(&self, oid: &CStr) -> Result<()> {
        // SAFETY: the write op is created, used and released here only; the
        // ioctx is valid and oid is NUL-terminated and copied by librados.
        let r = unsafe {
            let op = sys::rados_create_write_op();
            if op.is_null() {
                return Err(CephError::call("rados_create_write_op", -libc::ENOMEM));
            }
            sys::rados_write_op_create(
                op,
                sys::LIBRADOS_CREATE_IDEMPOTENT as i32,
                std::ptr::null(),
            );
            let r =
                sys::rados_write_op_operate(op, self.raw(), oid.as_ptr(), std::ptr::null_mut(), 0);
            sys::rados_release_write_op(op);
            r
        };
        if r < 0 {
            return Err(CephError::call(
                format!("create object '{}'", oid.to_string_lossy()),
                r,
            ));
        }
        Ok(())
    }

    /// Lists the objects of the current namespace whose names start with
    /// `prefix`, blocking (bounded by `rados_osd_op_timeout`).
    pub fn list_prefix(&self, prefix: &str) -> Result<Vec<ListEntry>> {
        let mut ctx: sys::rados_list_ctx_t = std::ptr::null_mut();
        // SAFETY: valid ioctx and out-pointer.
        let r = unsafe { sys::rados_nobjects_list_open(self.raw(), &mut ctx) };
        if r < 0 {
            return Err(CephError::call(format!("list pool '{}'", self.pool), r));
        }
        let mut found = Vec::new();
        let result = loop {
            let mut entry: *const c_char = std::ptr::null();
            let mut key: *const c_char = std::ptr::null();
            let mut nspace: *const c_char = std::ptr::null();
            let (mut elen, mut klen, mut nlen) = (0usize, 0usize, 0usize);
            // SAFETY: ctx is open; the out-pointers are valid; the strings
            // returned stay valid until the next call on ctx.
            let r = unsafe {
                sys::rados_nobjects_list_next2(
                    ctx,
                    &mut entry,
                    &mut key,
                    &mut nspace,
                    &mut elen,
                    &mut klen,
                    &mut nlen,
                )
            };
            if r == -libc::ENOENT {
                break Ok(());
            }
            if r < 0 {
                break Err(CephError::call(format!("list pool '{}'", self.pool), r));
            }
            // SAFETY: librados returned `elen`/`nlen` valid bytes, live until
            // the next call; we copy them now.
            let (name, ns) = unsafe { (bytes(entry, elen), bytes(nspace, nlen)) };
            if name.starts_with(prefix.as_bytes()) {
                found.push(ListEntry {
                    namespace: String::from_utf8_lossy(ns).into_owned(),
                    name: String::from_utf8_lossy(name).into_owned(),
                });
            }
        };
        // SAFETY: ctx was opened above and is closed exactly once.
        unsafe { sys::rados_nobjects_list_close(ctx) };
        result.map(|()| found)
    }
}

/// A slice over a possibly-NULL C buffer.
///
/// # Safety
/// `p` must be NULL or valid for `len` bytes for the returned lifetime.
unsafe fn bytes<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }
}

impl Drop for IoCtx {
    fn drop(&mut self) {
        // SAFETY: valid ioctx. rados_aio_flush blocks until every op issued on
        // it has completed, so no callback can still reference buffers tied
        // to this context; then the context is destroyed exactly once.
        unsafe {
            sys::rados_aio_flush(self.raw());
            sys::rados_ioctx_destroy(self.raw());
        }
    }
}
