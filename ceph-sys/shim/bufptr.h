/* Zero-copy RADOS writes: a payload buffer that Ceph reference-counts.
 *
 * librados' C API copies every write's payload into a new bufferlist
 * (rados_aio_write: bl.append(buf, len)); its C++ API takes a bufferlist,
 * which can share a buffer that Ceph reference-counts. These few functions
 * (bufptr.cc, compiled by build.rs) give C callers that: a buffer allocated
 * and refcounted by Ceph, written through copy_in (which drops any crc Ceph
 * cached for it), and an aio write that sends it without copying. Memory is
 * freed when the last reference goes, ours or the messenger's, so a buffer
 * can never be freed under an op still using it. No function throws; errors
 * are negative errno values or NULL. */
#ifndef CEPHSYS_BUFPTR_H
#define CEPHSYS_BUFPTR_H

#include <stddef.h>
#include <stdint.h>
#include <rados/librados.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A new buffer of len bytes (contents undefined), or NULL on allocation failure. */
void *cephsys_bufptr_new(size_t len);
/* Drops the caller's reference (Ceph may still hold others). */
void cephsys_bufptr_free(void *b);
/* References held, the caller's included: 1 when only the caller holds it. */
int cephsys_bufptr_nref(const void *b);
/* Copies len bytes from src to offset off (off + len <= the length); drops
 * any cached crc. Returns 0, or -EINVAL when out of range. */
int cephsys_bufptr_copy_in(void *b, size_t off, const char *src, size_t len);
/* Like rados_aio_write, with the first len bytes of b as the payload, shared
 * (not copied) until Ceph is done with it. b must not be changed while the
 * op may still read it: check cephsys_bufptr_nref() == 1 first. */
int cephsys_rados_aio_write_bufptr(rados_ioctx_t io, const char *oid,
                                   rados_completion_t completion,
                                   const void *b, size_t len, uint64_t off);

#ifdef __cplusplus
}
#endif

#endif
