//! librbd: image create / open / resize / remove, and asynchronous image I/O.

use std::ffi::{c_void, CStr, CString};
use std::os::raw::c_char;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use ceph_sys as sys;

use super::cluster::ClusterHandle;
use super::completion::{submit, AioFuture, CompletionQueue, InFlight, Rbd};
use super::error::{CephError, Result};
use super::ioctx::IoCtx;

fn cname(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| CephError::InvalidArgument(format!("{what} contains a NUL byte")))
}

/// Image features by name, as `rbd create --image-feature` takes them.
pub const FEATURES: [(&str, u64); 7] = [
    ("layering", sys::RBD_FEATURE_LAYERING as u64),
    ("striping", sys::RBD_FEATURE_STRIPINGV2 as u64),
    ("exclusive-lock", sys::RBD_FEATURE_EXCLUSIVE_LOCK as u64),
    ("object-map", sys::RBD_FEATURE_OBJECT_MAP as u64),
    ("fast-diff", sys::RBD_FEATURE_FAST_DIFF as u64),
    ("deep-flatten", sys::RBD_FEATURE_DEEP_FLATTEN as u64),
    ("journaling", sys::RBD_FEATURE_JOURNALING as u64),
];

/// Creates image `name` of `size` bytes in `io`'s pool. `features` `None`
/// uses the cluster's `rbd_default_features`.
pub fn create_image(io: &IoCtx, name: &str, size: u64, features: Option<u64>) -> Result<()> {
    let n = cname("image name", name)?;
    let mut order: i32 = 0; // 0: the default object size (4 MiB)
                            // SAFETY: valid ioctx, NUL-terminated name, valid out-pointer for order.
    let r = unsafe {
        match features {
            None => sys::rbd_create(io.raw(), n.as_ptr(), size, &mut order),
            Some(f) => sys::rbd_create2(io.raw(), n.as_ptr(), size, f, &mut order),
        }
    };
    if r < 0 {
        return Err(CephError::call(
            format!("create image '{name}' in pool '{}'", io.pool_name()),
            r,
        ));
    }
    Ok(())
}

/// librbd's image options (`rbd_image_options_t`), freed on drop: what
/// `rbd_create4` takes beyond the name and size.
struct ImageOptions {
    ptr: NonNull<c_void>,
}

impl ImageOptions {
    fn new() -> Result<ImageOptions> {
        let mut opts: sys::rbd_image_options_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer; librbd allocates the options.
        unsafe { sys::rbd_image_options_create(&mut opts) };
        let ptr = NonNull::new(opts).ok_or(CephError::Lost("rbd_image_options_create"))?;
        Ok(ImageOptions { ptr })
    }

    fn set_u64(&mut self, opt: u32, value: u64, what: &str) -> Result<()> {
        // SAFETY: valid options handle; librbd checks the option's type.
        let r = unsafe { sys::rbd_image_options_set_uint64(self.ptr.as_ptr(), opt as i32, value) };
        if r < 0 {
            return Err(CephError::call(format!("set image option {what}"), r));
        }
        Ok(())
    }

    fn set_string(&mut self, opt: u32, value: &str, what: &str) -> Result<()> {
        let v = cname(what, value)?;
        // SAFETY: valid options handle and NUL-terminated value; librbd
        // copies the string.
        let r =
            unsafe { sys::rbd_image_options_set_string(self.ptr.as_ptr(), opt as i32, v.as_ptr()) };
        if r < 0 {
            return Err(CephError::call(format!("set image option {what}"), r));
        }
        Ok(())
    }
}

impl Drop for ImageOptions {
    fn drop(&mut self) {
        // SAFETY: created by rbd_image_options_create, destroyed once.
        unsafe { sys::rbd_image_options_destroy(self.ptr.as_ptr()) };
    }
}

/// Creates image `name` of `size` bytes in `io`'s pool with its data
/// objects in pool `data_pool` (`rbd create --data-pool`): the header,
/// id and object map stay in `io`'s pool. `features` `None` uses the
/// cluster's `rbd_default_features`. Without a data pool this is
/// [`create_image`].
pub fn create_image_in(
    io: &IoCtx,
    name: &str,
    size: u64,
    features: Option<u64>,
    data_pool: Option<&str>,
) -> Result<()> {
    let Some(data_pool) = data_pool else {
        return create_image(io, name, size, features);
    };
    let n = cname("image name", name)?;
    let mut opts = ImageOptions::new()?;
    opts.set_string(sys::RBD_IMAGE_OPTION_DATA_POOL, data_pool, "data pool")?;
    if let Some(f) = features {
        opts.set_u64(sys::RBD_IMAGE_OPTION_FEATURES, f, "features")?;
    }
    // SAFETY: valid ioctx, NUL-terminated name and a valid options handle
    // (librbd reads it during the call only).
    let r = unsafe { sys::rbd_create4(io.raw(), n.as_ptr(), size, opts.ptr.as_ptr()) };
    if r < 0 {
        return Err(CephError::call(
            format!(
                "create image '{name}' in pool '{}' with data pool '{data_pool}'",
                io.pool_name()
            ),
            r,
        ));
    }
    Ok(())
}

/// Removes image `name` (blocking; bounded by the op timeouts).
pub fn remove_image(io: &IoCtx, name: &str) -> Result<()> {
    let n = cname("image name", name)?;
    // SAFETY: valid ioctx and NUL-terminated name.
    let r = unsafe { sys::rbd_remove(io.raw(), n.as_ptr()) };
    if r < 0 {
        return Err(CephError::call(
            format!("remove image '{name}' from pool '{}'", io.pool_name()),
            r,
        ));
    }
    Ok(())
}

/// The names of the images in `io`'s pool's directory (`rbd ls`): also an
/// image whose removal was cut short after its id object went.
pub fn list_images(io: &IoCtx) -> Result<Vec<String>> {
    let mut cap = 4096usize;
    loop {
        let mut buf = vec![0u8; cap];
        let mut size = cap;
        // SAFETY: `buf` holds `size` bytes; librbd writes at most that many
        // (NUL-separated names) or returns -ERANGE with the size it needs.
        let r = unsafe { sys::rbd_list(io.raw(), buf.as_mut_ptr().cast::<c_char>(), &mut size) };
        if r == -libc::ERANGE && size > cap {
            cap = size;
            continue;
        }
        if r < 0 {
            return Err(CephError::call(
                format!("list the images of pool '{}'", io.pool_name()),
                r,
            ));
        }
        buf.truncate(size.min(cap));
        return Ok(buf
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect());
    }
}

/// An image in a pool's trash (`rbd trash ls`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrashEntry {
    /// The image id (what `trash_remove` takes).
    pub id: String,
    /// The name it had.
    pub name: String,
    /// Put there by an image removal that did not finish (librbd moves an
    /// image to the trash first, then deletes its objects).
    pub removing: bool,
}

/// The images in `io`'s pool's trash.
pub fn trash_list(io: &IoCtx) -> Result<Vec<TrashEntry>> {
    let mut cap = 16usize;
    loop {
        let mut entries: Vec<sys::rbd_trash_image_info_t> = Vec::with_capacity(cap);
        let mut n = cap;
        // SAFETY: `entries` has room for `cap` structs and `n` says so; librbd
        // fills at most that many and sets `n` (or returns -ERANGE with the
        // count it needs, writing nothing).
        let r = unsafe { sys::rbd_trash_list(io.raw(), entries.as_mut_ptr(), &mut n) };
        if r == -libc::ERANGE && n > cap {
            cap = n;
            continue;
        }
        if r < 0 {
            return Err(CephError::call(
                format!("list the trash of pool '{}'", io.pool_name()),
                r,
            ));
        }
        let n = n.min(cap);
        // SAFETY: librbd initialised the first `n` entries.
        unsafe { entries.set_len(n) };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: librbd's entries hold NUL-terminated strings it
                // allocated; they live until the cleanup below.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let out = entries
            .iter()
            .map(|e| TrashEntry {
                id: text(e.id),
                name: text(e.name),
                removing: e.source == sys::rbd_trash_image_source_t_RBD_TRASH_IMAGE_SOURCE_REMOVING,
            })
            .collect();
        // SAFETY: frees the strings librbd allocated for these `n` entries,
        // once; `entries` is not read again.
        unsafe { sys::rbd_trash_list_cleanup(entries.as_mut_ptr(), n) };
        return Ok(out);
    }
}

/// Removes image `id` from the trash, deleting its objects (forced: also
/// before its deferment ends). Blocking, like [`remove_image`].
pub fn trash_remove(io: &IoCtx, id: &str) -> Result<()> {
    let c = cname("image id", id)?;
    // SAFETY: valid ioctx and NUL-terminated id.
    let r = unsafe { sys::rbd_trash_remove(io.raw(), c.as_ptr(), true) };
    if r < 0 {
        return Err(CephError::call(
            format!(
                "remove image id '{id}' from the trash of pool '{}'",
                io.pool_name()
            ),
            r,
        ));
    }
    Ok(())
}

/// Size and layout of an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    /// Size in bytes.
    pub size: u64,
    /// Bytes per RADOS object.
    pub object_size: u64,
    /// Number of RADOS objects the image spans.
    pub num_objects: u64,
    /// Name prefix of the data objects, e.g. `rbd_data.1234abcd`.
    pub block_name_prefix: String,
    /// Enabled feature bits.
    pub features: u64,
}

/// An open RBD image. Dropping it waits for its ops in flight, then closes it.
pub struct Image {
    ptr: NonNull<c_void>,
    inflight: Arc<InFlight>,
    name: String,
    // librbd's ImageCtx duplicates the IoCtx it was opened with, but needs the
    // cluster connection to outlive it.
    _cluster: Arc<ClusterHandle>,
}

// SAFETY: librbd's ImageCtx serialises its own state; all methods here are
// documented as callable from any thread, and none hands out references into
// librbd memory.
unsafe impl Send for Image {}
// SAFETY: as above: concurrent aio submission on one image is supported.
unsafe impl Sync for Image {}

impl Image {
    /// Opens image `name` (head, read-write).
    pub fn open(io: &IoCtx, name: &str) -> Result<Image> {
        let n = cname("image name", name)?;
        let mut img: sys::rbd_image_t = std::ptr::null_mut();
        // SAFETY: valid ioctx, NUL-terminated name, valid out-pointer; NULL
        // snapshot name opens the head.
        let r = unsafe { sys::rbd_open(io.raw(), n.as_ptr(), &mut img, std::ptr::null()) };
        if r < 0 {
            return Err(CephError::call(
                format!("open image '{name}' in pool '{}'", io.pool_name()),
                r,
            ));
        }
        let ptr = NonNull::new(img).ok_or(CephError::Lost("rbd_open"))?;
        Ok(Image {
            ptr,
            inflight: Arc::default(),
            name: name.to_string(),
            _cluster: io.cluster(),
        })
    }

    fn raw(&self) -> sys::rbd_image_t {
        self.ptr.as_ptr()
    }

    /// The image's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Size, layout and features.
    pub fn info(&self) -> Result<ImageInfo> {
        // SAFETY: rbd_image_info_t is plain old data; all-zero is valid.
        let mut info: sys::rbd_image_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid image; info is writable for the size passed.
        let r = unsafe { sys::rbd_stat(self.raw(), &mut info, std::mem::size_of_val(&info)) };
        if r < 0 {
            return Err(CephError::call(format!("stat image '{}'", self.name), r));
        }
        let mut features = 0u64;
        // SAFETY: valid image and out-pointer.
        let r = unsafe { sys::rbd_get_features(self.raw(), &mut features) };
        if r < 0 {
            return Err(CephError::call(
                format!("read features of image '{}'", self.name),
                r,
            ));
        }
        let mut prefix = [0 as c_char; 128];
        // SAFETY: valid image; the buffer is writable for its length.
        let r = unsafe {
            sys::rbd_get_block_name_prefix(self.raw(), prefix.as_mut_ptr(), prefix.len())
        };
        if r < 0 {
            return Err(CephError::call(
                format!("read the object prefix of image '{}'", self.name),
                r,
            ));
        }
        // SAFETY: librbd wrote a NUL-terminated string.
        let block_name_prefix = unsafe { CStr::from_ptr(prefix.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        Ok(ImageInfo {
            size: info.size,
            object_size: info.obj_size,
            num_objects: info.num_objs,
            block_name_prefix,
            features,
        })
    }

    /// The id of the pool holding the image's data objects: its data pool
    /// (`rbd create --data-pool`), else the pool it was opened in.
    pub fn data_pool_id(&self) -> i64 {
        // SAFETY: valid image.
        unsafe { sys::rbd_get_data_pool_id(self.raw()) }
    }

    /// Grows or shrinks the image.
    pub fn resize(&self, size: u64) -> Result<()> {
        // SAFETY: valid image.
        let r = unsafe { sys::rbd_resize(self.raw(), size) };
        if r < 0 {
            return Err(CephError::call(format!("resize image '{}'", self.name), r));
        }
        Ok(())
    }

    /// Writes `buf` at `offset`. librbd may use the buffer without copying
    /// (zero-copy aio) until the op completes, so the op owns it and hands it
    /// back in [`AioDone::buf`](super::AioDone).
    pub fn write(&self, offset: u64, buf: Vec<u8>) -> Result<AioFuture<Vec<u8>>> {
        let img = self.raw();
        submit::<Rbd, _>("rbd_aio_write", buf, Some(self.inflight.enter()), |c, b| {
            // SAFETY: `b` points to the Vec owned by the callback state; its
            // heap block stays put until the callback hands it back.
            let (ptr, len) = unsafe { ((*b).as_ptr(), (*b).len()) };
            // SAFETY: valid image and completion; ptr is readable for len
            // bytes until completion.
            unsafe { sys::rbd_aio_write(img, offset, len, ptr.cast(), c) as i32 }
        })
    }

    /// Reads `buf.len()` bytes at `offset` into `buf` (owned by the op until it completes).
    pub fn read(&self, offset: u64, buf: Vec<u8>) -> Result<AioFuture<Vec<u8>>> {
        let img = self.raw();
        submit::<Rbd, _>("rbd_aio_read", buf, Some(self.inflight.enter()), |c, b| {
            // SAFETY: as in `write`, and the block is writable.
            let (ptr, len) = unsafe { ((*b).as_mut_ptr(), (*b).len()) };
            // SAFETY: valid image and completion; ptr is writable for len
            // bytes until completion.
            unsafe { sys::rbd_aio_read(img, offset, len, ptr.cast(), c) as i32 }
        })
    }

    /// Flushes: completes when every write acknowledged before it is durable
    /// (with the client cache off, a write is already durable when acknowledged).
    pub fn flush(&self) -> Result<AioFuture<()>> {
        let img = self.raw();
        submit::<Rbd, _>("rbd_aio_flush", (), Some(self.inflight.enter()), |c, _| {
            // SAFETY: valid image and completion.
            unsafe { sys::rbd_aio_flush(img, c) }
        })
    }

    /// Writes the write buffer of `slot` in `queue` (its whole length) at
    /// `offset`; librbd may read the buffer until the op completes, and the
    /// queue leaves it untouched until then.
    pub fn write_in(&self, queue: &mut CompletionQueue, slot: usize, offset: u64) -> Result<()> {
        let img = self.raw();
        let guard = Some(self.inflight.enter());
        queue.start::<Rbd>(slot, "rbd_aio_write", guard, |c, w, _| {
            // SAFETY: `w` points to the slot's write buffer, left untouched
            // and alive by the queue until the op completes.
            let (ptr, len) = unsafe { ((*w).as_ptr(), (*w).len()) };
            // SAFETY: valid image and completion; ptr is readable for len
            // bytes until completion.
            unsafe { sys::rbd_aio_write(img, offset, len, ptr.cast(), c) as i32 }
        })
    }

    /// Reads into the read buffer of `slot` in `queue` (its whole length) at `offset`.
    pub fn read_in(&self, queue: &mut CompletionQueue, slot: usize, offset: u64) -> Result<()> {
        let img = self.raw();
        let guard = Some(self.inflight.enter());
        queue.start::<Rbd>(slot, "rbd_aio_read", guard, |c, _, r| {
            // SAFETY: as in `write_in`, and the block is writable.
            let (ptr, len) = unsafe { ((*r).as_mut_ptr(), (*r).len()) };
            // SAFETY: valid image and completion; ptr is writable for len
            // bytes until completion.
            unsafe { sys::rbd_aio_read(img, offset, len, ptr.cast(), c) as i32 }
        })
    }

    /// Flushes as the op of `slot` in `queue` (see [`Image::flush`]).
    pub fn flush_in(&self, queue: &mut CompletionQueue, slot: usize) -> Result<()> {
        let img = self.raw();
        let guard = Some(self.inflight.enter());
        queue.start::<Rbd>(slot, "rbd_aio_flush", guard, |c, _, _| {
            // SAFETY: valid image and completion.
            unsafe { sys::rbd_aio_flush(img, c) }
        })
    }

    /// Discards `len` bytes at `offset`.
    pub fn discard(&self, offset: u64, len: u64) -> Result<AioFuture<()>> {
        let img = self.raw();
        submit::<Rbd, _>(
            "rbd_aio_discard",
            (),
            Some(self.inflight.enter()),
            |c, _| {
                // SAFETY: valid image and completion.
                unsafe { sys::rbd_aio_discard(img, offset, len, c) }
            },
        )
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // Every op's callback holds a guard; wait for all of them (bounded:
        // ops are themselves bounded by rados_osd_op_timeout).
        self.inflight.drain(Duration::from_secs(600));
        // SAFETY: valid image, closed exactly once, nothing in flight.
        unsafe { sys::rbd_close(self.raw()) };
    }
}
