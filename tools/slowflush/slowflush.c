/*
 * slowflush.so - a drive whose cache flushes are slow, for cephbench's test rig.
 *
 * Preloaded into a ceph-osd (LD_PRELOAD, by `containers/cluster.sh up --slow-flush`),
 * it wraps fsync(2) and fdatasync(2): each call does the real flush, then sleeps for
 * the delay written (in microseconds, decimal) in the file named by
 * $CEPHBENCH_SLOW_FLUSH_FILE. BlueStore makes writes durable through exactly these
 * calls (KernelDevice::flush for the main device, BlueFS's flush of the RocksDB WAL),
 * so the OSD behaves like one on a drive without power-loss protection, whose every
 * cache flush waits for the media. The file is re-read at most every 100 ms, so the
 * delay can change while the OSD runs (`cluster.sh slow-flush`). No file, an empty or
 * unparsable one: no delay. Nothing else is changed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_long delay_us;
static atomic_long next_read_ns;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static long current_delay(void) {
    long now = now_ns();
    if (now >= atomic_load(&next_read_ns)) {
        atomic_store(&next_read_ns, now + 100000000L);
        const char *path = getenv("CEPHBENCH_SLOW_FLUSH_FILE");
        long us = 0;
        if (path) {
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                char buf[32];
                ssize_t n = read(fd, buf, sizeof buf - 1);
                close(fd);
                if (n > 0) {
                    buf[n] = 0;
                    us = strtol(buf, NULL, 10);
                    if (us < 0 || us > 10000000) us = 0;
                }
            }
        }
        atomic_store(&delay_us, us);
    }
    return atomic_load(&delay_us);
}

static void slow(void) {
    int saved = errno;
    long us = current_delay();
    if (us > 0) {
        struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
        while (nanosleep(&t, &t) == -1 && errno == EINTR) {}
    }
    errno = saved;
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int r = real(fd);
    slow();
    return r;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int r = real(fd);
    slow();
    return r;
}
