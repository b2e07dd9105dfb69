//! Payload buffers that Ceph reference-counts, for zero-copy RADOS writes.
//!
//! librados' C API copies every write's payload (`rados_aio_write` appends
//! it to a new bufferlist); for 4 MiB writes that copy is about a fifth of
//! the client's CPU. A [`SharedBuf`] is a Ceph `buffer::ptr` (see
//! `ceph-sys/shim/bufptr.h`): an op shares it instead of copying it, and the
//! memory is freed when the last reference goes, ours or the messenger's, so
//! it cannot be freed under an op still sending it. It is changed only while
//! nobody else holds it ([`SharedBuf::write_at`] refuses otherwise), and
//! changing it drops the crc Ceph may have cached for it.

use std::ffi::c_void;
use std::ptr::NonNull;

use ceph_sys as sys;

use super::error::{CephError, Result};

/// A payload buffer Ceph reference-counts (one Ceph `buffer::ptr`).
pub struct SharedBuf {
    ptr: NonNull<c_void>,
    len: usize,
}

// SAFETY: the `buffer::ptr` object is only touched through this owner (`&mut`
// to change it, `&` to read its length and reference count); Ceph's threads
// hold references of their own to the underlying raw buffer, whose count is
// atomic, and never touch this `ptr` object.
unsafe impl Send for SharedBuf {}

impl std::fmt::Debug for SharedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBuf")
            .field("len", &self.len)
            .field("shared", &self.shared())
            .finish()
    }
}

impl SharedBuf {
    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[u8]) -> Result<SharedBuf> {
        // SAFETY: plain allocation; a null return is handled below.
        let raw = unsafe { sys::cephsys_bufptr_new(data.len()) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            CephError::call(
                format!("allocating a {} byte payload buffer", data.len()),
                -libc::ENOMEM,
            )
        })?;
        let mut buf = SharedBuf {
            ptr,
            len: data.len(),
        };
        buf.write_at(0, data)?;
        Ok(buf)
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether an op (or the messenger) still holds a reference to it.
    pub fn shared(&self) -> bool {
        // SAFETY: `ptr` is a live buffer::ptr owned by `self`.
        unsafe { sys::cephsys_bufptr_nref(self.ptr.as_ptr()) > 1 }
    }

    /// Copies `data` to `offset`. Fails, changing nothing, while anybody
    /// else holds the buffer or when the range does not fit.
    pub fn write_at(&mut self, offset: usize, data: &[u8]) -> Result<()> {
        if self.shared() {
            return Err(CephError::InvalidArgument(
                "payload buffer still held by an op".into(),
            ));
        }
        // SAFETY: `ptr` is live and only ours (checked above), so nothing
        // reads it concurrently; `data` is valid for `data.len()` bytes; the
        // shim checks the range.
        let r = unsafe {
            sys::cephsys_bufptr_copy_in(self.ptr.as_ptr(), offset, data.as_ptr().cast(), data.len())
        };
        if r < 0 {
            return Err(CephError::call("cephsys_bufptr_copy_in", r));
        }
        Ok(())
    }

    /// The raw `buffer::ptr`, for [`super::IoCtx::write_shared_in`].
    pub(crate) fn as_raw(&self) -> *const c_void {
        self.ptr.as_ptr()
    }
}

impl Drop for SharedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cephsys_bufptr_new and is freed once, here;
        // this drops our reference only: an op still holding the raw buffer
        // keeps it alive.
        unsafe { sys::cephsys_bufptr_free(self.ptr.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_in_range_only() {
        let mut b = SharedBuf::from_slice(&[1u8; 64]).unwrap();
        assert_eq!(b.len(), 64);
        assert!(!b.shared());
        b.write_at(56, &[2u8; 8]).unwrap();
        assert!(b.write_at(57, &[2u8; 8]).is_err());
        assert!(b.write_at(65, &[]).is_err());
    }
}
