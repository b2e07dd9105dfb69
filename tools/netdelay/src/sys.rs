//! The only module with `unsafe`: TAP creation (TUNSETIFF), epoll and timerfd. Reads and
//! writes go through `std::fs::File`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (a union of 24 bytes).
#[repr(C)]
struct IfReqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates TAP device `name` (IFF_TAP | IFF_NO_PI: plain Ethernet frames) in the caller's
/// network namespace and returns its non-blocking file. The device lives as long as the file.
pub fn create_tap(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad interface name",
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    let mut req = IfReqFlags {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads (and may write back the name into) a struct ifreq; `req` is a
    // properly laid out, NUL-terminated ifreq of the full size that outlives the call, and
    // the fd is a valid open /dev/net/tun.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            libc::TUNSETIFF,
            &mut req as *mut IfReqFlags,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful syscall that creates a new descriptor;
    // nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An epoll instance (level-triggered unless a registration says EPOLLET).
pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// A new epoll instance that returns at most `max_events` per wait.
    pub fn new(max_events: usize) -> io::Result<Self> {
        // SAFETY: plain syscall with no pointer arguments.
        let fd = owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Self {
            fd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; max_events.max(1)],
        })
    }

    /// Registers `fd` for `events`, reported with `token`.
    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    /// Unregisters `fd`.
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call; the kernel copies it.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: poll) and appends the ready tokens and event
    /// masks to `out` (cleared first). EINTR is an empty result.
    pub fn wait(&mut self, timeout_ms: i32, out: &mut Vec<(u64, u32)>) -> io::Result<()> {
        out.clear();
        // SAFETY: the buffer holds `events.len()` writable epoll_event entries and the kernel
        // writes at most that many.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        for ev in &self.events[..n as usize] {
            let (token, events) = (ev.u64, ev.events);
            out.push((token, events));
        }
        Ok(())
    }
}

/// A one-shot CLOCK_MONOTONIC timerfd (non-blocking).
pub struct Timer {
    file: File,
}

impl Timer {
    /// A disarmed timer.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall with no pointer arguments.
        let fd = owned(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(Self {
            file: File::from(fd),
        })
    }

    /// The descriptor, for epoll.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Fires once after `after` (at least 1 ns); `None` disarms.
    pub fn set(&self, after: Option<Duration>) -> io::Result<()> {
        let d = after
            .map(|d| d.max(Duration::from_nanos(1)))
            .unwrap_or_default();
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec for the call; the old-value pointer may be null.
        let rc =
            unsafe { libc::timerfd_settime(self.file.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes an expiry, if any.
    pub fn clear(&self) {
        use std::io::Read;
        let mut b = [0u8; 8];
        let _ = (&self.file).read(&mut b);
    }
}
