//! The limit for cephbench's client overhead: a bare loop of librados (or
//! librbd) aio calls and nothing else: N completions in flight, one issuing
//! thread, a C callback that hands the finished slot back over a channel, a
//! fixed duration. Prints one JSON line on stdout:
//! `{"ops":N,"secs":S,"iops":I,"mean_us":M,"p99_us":P}`.
//!
//! ```text
//! bare_aio --conf C --pool P --mode write|rand|remove [--bs 4096] [--qd 16] [--secs 10] [--run-name R]
//! bare_aio --conf C --pool P --mode rbd-randwrite|rbd-randread --image IMG [--bs 4096] [--qd 32] [--secs 10]
//! ```
//! `write` writes one new object per op, `bare_aio_data.R.<n>` (like `rados
//! bench write`, object size = op size) and records the count in
//! `bare_aio_meta.R`; `rand` reads those objects at random (like `rados bench
//! rand`). Objects are left in place: the caller deletes the pool.
//! Run with `cargo run --release -p ceph-sys --example bare_aio -- ...`.

use ceph_sys::*;
use std::ffi::{c_void, CString};
use std::ptr;
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Completed slots: (slot index, return value, completion time).
static DONE: OnceLock<Sender<(usize, i64, Instant)>> = OnceLock::new();

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Write,
    Rand,
    Remove,
    RbdRandWrite,
    RbdRandRead,
}

struct Args {
    conf: String,
    pool: String,
    mode: Mode,
    bs: usize,
    qd: usize,
    secs: f64,
    run: String,
    image: String,
}

fn usage(msg: &str) -> ! {
    eprintln!("bare_aio: {msg} (usage: bare_aio --conf C --pool P --mode write|rand|remove|rbd-randwrite|rbd-randread [--image I] [--bs B] [--qd N] [--secs S] [--run-name R])");
    std::process::exit(2);
}

fn parse() -> Args {
    let mut a = Args {
        conf: std::env::var("CEPH_CONF").unwrap_or_default(),
        pool: String::new(),
        mode: Mode::Write,
        bs: 4096,
        qd: 16,
        secs: 10.0,
        run: "default".into(),
        image: String::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it
            .next()
            .unwrap_or_else(|| usage(&format!("{k} needs a value")));
        match k.as_str() {
            "--conf" => a.conf = v,
            "--pool" => a.pool = v,
            "--image" => a.image = v,
            "--run-name" => a.run = v,
            "--bs" => a.bs = v.parse().unwrap_or_else(|_| usage("--bs: bytes")),
            "--qd" => a.qd = v.parse().unwrap_or_else(|_| usage("--qd: a count")),
            "--secs" => a.secs = v.parse().unwrap_or_else(|_| usage("--secs: seconds")),
            "--mode" => {
                a.mode = match v.as_str() {
                    "write" => Mode::Write,
                    "rand" => Mode::Rand,
                    "remove" => Mode::Remove,
                    "rbd-randwrite" => Mode::RbdRandWrite,
                    "rbd-randread" => Mode::RbdRandRead,
                    _ => usage("unknown --mode"),
                }
            }
            _ => usage(&format!("unknown option {k}")),
        }
    }
    if a.pool.is_empty() || a.conf.is_empty() || a.qd == 0 || a.bs == 0 {
        usage("--conf (or CEPH_CONF), --pool, --qd >= 1 and --bs >= 1 are required");
    }
    if matches!(a.mode, Mode::RbdRandWrite | Mode::RbdRandRead) && a.image.is_empty() {
        usage("rbd modes need --image");
    }
    a
}

/// ENOENT, for an object already gone.
const fn libc_enoent() -> i32 {
    2
}

fn check(what: &str, r: i64) {
    if r < 0 {
        eprintln!("bare_aio: {what} failed: error {r}");
        std::process::exit(1);
    }
}

/// The completion callback (librados and librbd share the signature):
/// `arg` is the slot index.
unsafe extern "C" fn on_rados_done(c: rados_completion_t, arg: *mut c_void) {
    let now = Instant::now();
    // SAFETY: `c` is the live completion this callback was registered on;
    // librados calls the callback once, before the caller releases it.
    let r = unsafe { rados_aio_get_return_value(c) } as i64;
    if let Some(tx) = DONE.get() {
        let _ = tx.send((arg as usize, r, now));
    }
}

unsafe extern "C" fn on_rbd_done(c: rbd_completion_t, arg: *mut c_void) {
    let now = Instant::now();
    // SAFETY: as above, for librbd's completion.
    let r = unsafe { rbd_aio_get_return_value(c) } as i64;
    if let Some(tx) = DONE.get() {
        let _ = tx.send((arg as usize, r, now));
    }
}

/// xorshift64*: a cheap random stream for offsets and object picks.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn main() {
    let a = parse();
    let (tx, rx) = channel();
    DONE.set(tx).expect("set once");

    let id = CString::new("admin").unwrap();
    let conf = CString::new(a.conf.clone()).unwrap();
    let pool = CString::new(a.pool.clone()).unwrap();
    let mut cluster: rados_t = ptr::null_mut();
    let mut io: rados_ioctx_t = ptr::null_mut();
    let mut img: rbd_image_t = ptr::null_mut();
    let rbd = matches!(a.mode, Mode::RbdRandWrite | Mode::RbdRandRead);
    // SAFETY: out-pointers are valid locals; the C strings outlive the calls.
    unsafe {
        check(
            "rados_create",
            rados_create(&mut cluster, id.as_ptr()) as i64,
        );
        check(
            "rados_conf_read_file",
            rados_conf_read_file(cluster, conf.as_ptr()) as i64,
        );
        // $CEPH_ARGS, as the ceph tools read it (e.g. to try an option's cost).
        check(
            "rados_conf_parse_env",
            rados_conf_parse_env(cluster, ptr::null()) as i64,
        );
        let (k, v) = (
            CString::new("rbd_cache").unwrap(),
            CString::new("false").unwrap(),
        );
        check(
            "rados_conf_set",
            rados_conf_set(cluster, k.as_ptr(), v.as_ptr()) as i64,
        );
        check("rados_connect", rados_connect(cluster) as i64);
        check(
            "rados_ioctx_create",
            rados_ioctx_create(cluster, pool.as_ptr(), &mut io) as i64,
        );
    }
    let mut image_size = 0u64;
    if rbd {
        let name = CString::new(a.image.clone()).unwrap();
        // SAFETY: `io` is a live ioctx; out-pointers are valid locals.
        unsafe {
            check(
                "rbd_open",
                rbd_open(io, name.as_ptr(), &mut img, ptr::null()) as i64,
            );
            check("rbd_get_size", rbd_get_size(img, &mut image_size) as i64);
        }
        if image_size < a.bs as u64 {
            usage("image smaller than one block");
        }
    }
    let meta = CString::new(format!("bare_aio_meta.{}", a.run)).unwrap();
    let mut objects = 0u64;
    if matches!(a.mode, Mode::Rand | Mode::Remove) {
        let mut b = [0u8; 32];
        // SAFETY: `b` is a writable buffer of the length given.
        let n = unsafe { rados_read(io, meta.as_ptr(), b.as_mut_ptr().cast(), b.len(), 0) };
        check(
            "reading the write run's metadata (run --mode write first)",
            n as i64,
        );
        objects = std::str::from_utf8(&b[..n as usize])
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        if objects == 0 {
            usage("the write run left no objects");
        }
    }
    if a.mode == Mode::Remove {
        let mut removed = 0u64;
        for n in 0..objects {
            let name = CString::new(format!("bare_aio_data.{}.{n}", a.run)).unwrap();
            // SAFETY: valid ioctx and NUL-terminated name.
            let r = unsafe { rados_remove(io, name.as_ptr()) };
            if r != -libc_enoent() {
                check("removing an object", r as i64);
                removed += 1;
            }
        }
        // SAFETY: as above.
        let r = unsafe { rados_remove(io, meta.as_ptr()) };
        check("removing the metadata", r as i64);
        // SAFETY: no op is in flight; each handle is closed once, children first.
        unsafe {
            rados_ioctx_destroy(io);
            rados_shutdown(cluster);
        }
        println!("{{\"removed\":{removed}}}");
        return;
    }

    // One buffer and one preformatted object name per slot, prepared once.
    let mut bufs: Vec<Vec<u8>> = (0..a.qd)
        .map(|i| vec![b'a' + (i % 26) as u8; a.bs])
        .collect();
    let mut names: Vec<Vec<u8>> = vec![Vec::with_capacity(96); a.qd];
    let mut started = vec![Instant::now(); a.qd];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ std::process::id() as u64);
    let blocks = (image_size / a.bs as u64).max(1);
    let mut next_obj = 0u64;
    let mut lat_us: Vec<u32> = Vec::with_capacity(1 << 20);
    let mut sum_ns = 0u128;
    // How long a completed op's slot stood empty until the next op started in it.
    let (mut refill_ns, mut refills) = (0u128, 0u64);

    let mut issue =
        |slot: usize, started: &mut [Instant], names: &mut [Vec<u8>], bufs: &mut [Vec<u8>]| {
            started[slot] = Instant::now();
            let arg = slot as *mut c_void;
            let buf = &mut bufs[slot];
            match a.mode {
                Mode::Write | Mode::Rand | Mode::Remove => {
                    let n = if a.mode == Mode::Write {
                        next_obj += 1;
                        next_obj - 1
                    } else {
                        rng.below(objects)
                    };
                    let name = &mut names[slot];
                    name.clear();
                    use std::io::Write;
                    let _ = write!(name, "bare_aio_data.{}.{}\0", a.run, n);
                    let mut c: rados_completion_t = ptr::null_mut();
                    // SAFETY: `name` is NUL-terminated and `buf` stays allocated and
                    // untouched until this slot's completion is received below; the
                    // completion is released only after its callback ran.
                    let r = unsafe {
                        check(
                            "rados_aio_create_completion",
                            rados_aio_create_completion(arg, Some(on_rados_done), None, &mut c)
                                as i64,
                        );
                        if a.mode == Mode::Write {
                            rados_aio_write(
                                io,
                                name.as_ptr().cast(),
                                c,
                                buf.as_ptr().cast(),
                                buf.len(),
                                0,
                            )
                        } else {
                            rados_aio_read(
                                io,
                                name.as_ptr().cast(),
                                c,
                                buf.as_mut_ptr().cast(),
                                buf.len(),
                                0,
                            )
                        }
                    };
                    check("rados_aio_write/read", r as i64);
                    c
                }
                Mode::RbdRandWrite | Mode::RbdRandRead => {
                    let off = rng.below(blocks) * a.bs as u64;
                    let mut c: rbd_completion_t = ptr::null_mut();
                    // SAFETY: as above, for librbd: `buf` lives until the completion
                    // is received.
                    let r = unsafe {
                        check(
                            "rbd_aio_create_completion",
                            rbd_aio_create_completion(arg, Some(on_rbd_done), &mut c) as i64,
                        );
                        if a.mode == Mode::RbdRandWrite {
                            rbd_aio_write(img, off, buf.len(), buf.as_ptr().cast(), c)
                        } else {
                            rbd_aio_read(img, off, buf.len(), buf.as_mut_ptr().cast(), c)
                        }
                    };
                    check("rbd_aio_write/read", r as i64);
                    c
                }
            }
        };

    let mut comps: Vec<*mut c_void> = vec![ptr::null_mut(); a.qd];
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(a.secs);
    for (s, c) in comps.iter_mut().enumerate() {
        *c = issue(s, &mut started, &mut names, &mut bufs);
    }
    let mut inflight = a.qd;
    let mut ops = 0u64;
    let mut last = t0;
    while inflight > 0 {
        let (slot, r, at) = rx.recv().expect("callbacks keep the sender alive");
        // SAFETY: the callback for this completion has run; nothing else
        // refers to it.
        unsafe {
            if rbd {
                rbd_aio_release(comps[slot]);
            } else {
                rados_aio_release(comps[slot]);
            }
        }
        check("aio op", r);
        let ns = at.duration_since(started[slot]).as_nanos();
        sum_ns += ns;
        lat_us.push((ns / 1000).min(u32::MAX as u128) as u32);
        ops += 1;
        last = at;
        if Instant::now() < end {
            comps[slot] = issue(slot, &mut started, &mut names, &mut bufs);
            refill_ns += started[slot].duration_since(at).as_nanos();
            refills += 1;
        } else {
            inflight -= 1;
        }
    }
    let secs = last.duration_since(t0).as_secs_f64();
    if a.mode == Mode::Write {
        let s = format!("{next_obj}");
        // SAFETY: valid ioctx, NUL-terminated name, buffer of the length given.
        let r = unsafe { rados_write_full(io, meta.as_ptr(), s.as_ptr().cast(), s.len()) };
        check("writing metadata", r as i64);
    }
    lat_us.sort_unstable();
    let p99 = lat_us
        .get(((lat_us.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0);
    // SAFETY: no op is in flight; each handle is closed once, children first.
    unsafe {
        if rbd {
            rbd_close(img);
        }
        rados_ioctx_destroy(io);
        rados_shutdown(cluster);
    }
    println!(
        "{{\"ops\":{ops},\"secs\":{secs:.6},\"iops\":{:.3},\"mean_us\":{:.3},\"p99_us\":{p99},\"refill_wait_us\":{:.3}}}",
        ops as f64 / secs.max(1e-9),
        sum_ns as f64 / 1000.0 / ops.max(1) as f64,
        refill_ns as f64 / 1000.0 / refills.max(1) as f64
    );
}
