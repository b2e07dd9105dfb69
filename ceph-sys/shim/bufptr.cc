// See bufptr.h. Built against librados.hpp (Debian: libradospp-dev).
#include "bufptr.h"

#include <cerrno>
#include <climits>
#include <new>
#include <string>

#include <rados/librados.hpp>

using ceph::buffer::ptr;

extern "C" void *cephsys_bufptr_new(size_t len) {
  if (len > UINT_MAX) return nullptr;
  try {
    return new ptr(static_cast<unsigned>(len));
  } catch (...) {
    return nullptr;
  }
}

extern "C" void cephsys_bufptr_free(void *b) { delete static_cast<ptr *>(b); }

extern "C" int cephsys_bufptr_nref(const void *b) {
  return static_cast<const ptr *>(b)->raw_nref();
}

extern "C" int cephsys_bufptr_copy_in(void *b, size_t off, const char *src, size_t len) {
  ptr *p = static_cast<ptr *>(b);
  if (off > p->length() || len > p->length() - off) return -EINVAL;
  p->copy_in(static_cast<unsigned>(off), static_cast<unsigned>(len), src);
  return 0;
}

extern "C" int cephsys_rados_aio_write_bufptr(rados_ioctx_t io, const char *oid,
                                              rados_completion_t completion,
                                              const void *b, size_t len, uint64_t off) {
  const ptr *p = static_cast<const ptr *>(b);
  if (len > p->length()) return -EINVAL;
  try {
    librados::IoCtx ioctx;
    librados::IoCtx::from_rados_ioctx_t(io, ioctx);  // one more reference, dropped below
    // A C++ view of the C completion. Its destructor would release the
    // completion, which belongs to the C caller: construct it in place and
    // never destroy it (it owns nothing else).
    alignas(librados::AioCompletion) unsigned char storage[sizeof(librados::AioCompletion)];
    auto *c = new (storage) librados::AioCompletion(
        static_cast<librados::AioCompletionImpl *>(completion));
    ceph::bufferlist bl;
    bl.append(*p, 0, static_cast<unsigned>(len));
    return ioctx.aio_write(oid, c, bl, len, off);
  } catch (const std::bad_alloc &) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}
