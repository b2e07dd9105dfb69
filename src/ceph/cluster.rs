//! The cluster handle (`rados_t`): configuration, bounded connect, commands.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_void};
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use ceph_sys as sys;

use super::error::{CephError, ConnectError, Result};

/// How to find and authenticate to a cluster, as the `ceph` CLI takes it.
///
/// Precedence, lowest first: the config file (`conf`, else `$CEPH_CONF`, else
/// `/etc/ceph/ceph.conf`, `~/.ceph/config`, `./ceph.conf`), then `$CEPH_ARGS`,
/// then the explicit fields here.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Config file path (`-c/--conf`).
    pub conf: Option<PathBuf>,
    /// Full entity name, e.g. `client.admin`.
    pub entity: String,
    /// Keyring path (`--keyring`).
    pub keyring: Option<PathBuf>,
    /// Monitor addresses (`-m/--mon-host`).
    pub mon_host: Option<String>,
    /// Bound on `connect` (sets `client_mount_timeout`, plus a watchdog).
    pub connect_timeout: Duration,
    /// Bound on each mon/osd operation (`rados_mon_op_timeout`, `rados_osd_op_timeout`).
    pub op_timeout: Duration,
    /// Further `key=value` config overrides applied last.
    pub overrides: Vec<(String, String)>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            conf: None,
            entity: "client.admin".into(),
            keyring: None,
            mon_host: None,
            connect_timeout: Duration::from_secs(10),
            op_timeout: Duration::from_secs(60),
            overrides: Vec::new(),
        }
    }
}

/// Owner of a `rados_t`. Freed with `rados_shutdown` only in `Drop`.
pub(crate) struct ClusterHandle(NonNull<c_void>);

// SAFETY: a `rados_t` is a `RadosClient*`, which librados documents as safe to
// use from several threads at once (all its state is behind its own locks);
// nothing here hands out interior references to it.
unsafe impl Send for ClusterHandle {}
// SAFETY: as above; shared `&ClusterHandle` only passes the pointer to
// thread-safe librados entry points.
unsafe impl Sync for ClusterHandle {}

impl ClusterHandle {
    pub(crate) fn as_ptr(&self) -> sys::rados_t {
        self.0.as_ptr()
    }
}

impl Drop for ClusterHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from rados_create2, is freed only here, and
        // every IoCtx holds an Arc to it, so none is alive any more.
        unsafe { sys::rados_shutdown(self.0.as_ptr()) }
    }
}

/// A connected cluster. Cheap to clone (shared handle).
#[derive(Clone)]
pub struct Rados {
    pub(super) handle: Arc<ClusterHandle>,
    entity: String,
    /// A second connection, under another identity, for the probes.
    telemetry: Option<Box<Rados>>,
}

/// Output of a mon/mgr/osd command.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// The return code (≥ 0; some mgr commands return 1 on success).
    pub rc: i32,
    /// The command's data output (usually JSON).
    pub out: Vec<u8>,
    /// The status string.
    pub status: String,
}

pub(super) fn cstring(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| CephError::InvalidArgument(format!("{what} contains a NUL byte")))
}

impl Rados {
    /// Hands the probes (OSD `perf dump`, `dump_osd_network`, the PG map) a
    /// separate connection, e.g. an identity with `osd 'allow *'` beside a
    /// data identity that may only read and write its pool.
    pub fn with_telemetry(mut self, telemetry: Rados) -> Rados {
        self.telemetry = Some(Box::new(telemetry));
        self
    }

    /// The connection the probes use: the telemetry identity if one was
    /// given, this one otherwise.
    pub fn telemetry(&self) -> &Rados {
        self.telemetry.as_deref().unwrap_or(self)
    }

    /// Creates a handle, applies the configuration and connects, failing
    /// within `connect_timeout` (plus a small grace) if no monitor answers.
    pub fn connect(opts: &ConnectOptions) -> Result<Rados> {
        let handle = Arc::new(create(&opts.entity)?);
        configure(&handle, opts)?;

        // rados_connect honours client_mount_timeout; the watchdog thread is a
        // second bound in case some other phase of connect blocks.
        let (tx, rx) = mpsc::channel();
        let h2 = Arc::clone(&handle);
        std::thread::Builder::new()
            .name("rados-connect".into())
            .spawn(move || {
                // SAFETY: the handle is valid (kept alive by h2) and configured.
                let r = unsafe { sys::rados_connect(h2.as_ptr()) };
                let _ = tx.send(r);
            })
            .map_err(|e| CephError::InvalidArgument(format!("cannot spawn a thread: {e}")))?;
        let limit = opts.connect_timeout;
        let r = match rx.recv_timeout(limit + Duration::from_secs(2)) {
            Ok(r) => r,
            // The thread keeps its Arc: the handle is freed when connect returns.
            Err(_) => -libc::ETIMEDOUT,
        };
        if r < 0 {
            return Err(ConnectError {
                errno: -r,
                entity: opts.entity.clone(),
                limit,
            }
            .into());
        }
        Ok(Rados {
            handle,
            entity: opts.entity.clone(),
            telemetry: None,
        })
    }

    /// The entity name this handle authenticated as.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// This client's global id in the cluster (`client.<gid>`, as notify
    /// replies name watchers and notifiers).
    pub fn instance_id(&self) -> u64 {
        // SAFETY: valid, connected handle.
        unsafe { sys::rados_get_instance_id(self.handle.as_ptr()) }
    }

    /// This client's own address(es) as its messenger knows them once
    /// connected, e.g. `[v2:192.0.2.101:0/3521868],v1:...`: which host a
    /// client is, even when several share one host name.
    pub fn addrs(&self) -> Result<String> {
        let mut p: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid, connected handle; `p` is an out pointer librados
        // sets to a string it allocated with strdup.
        let r = unsafe { sys::rados_getaddrs(self.handle.as_ptr(), &mut p) };
        if r < 0 {
            return Err(CephError::call("rados_getaddrs", r));
        }
        if p.is_null() {
            return Ok(String::new());
        }
        // SAFETY: `p` is the NUL-terminated string librados just returned.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: librados allocated it with strdup (librados_c.cc) and hands
        // ownership to the caller; it is freed exactly once, here.
        unsafe { libc::free(p.cast::<c_void>()) };
        Ok(s)
    }

    /// The cluster's fsid.
    pub fn fsid(&self) -> Result<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: buf is writable for its full length, which is passed along.
        let r =
            unsafe { sys::rados_cluster_fsid(self.handle.as_ptr(), buf.as_mut_ptr(), buf.len()) };
        if r < 0 {
            return Err(CephError::call("rados_cluster_fsid", r));
        }
        // SAFETY: librados wrote a NUL-terminated string into buf.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// The value of a config option as this client sees it.
    pub fn conf_get(&self, key: &str) -> Result<String> {
        let k = cstring("config key", key)?;
        let mut buf = vec![0 as c_char; 4096];
        // SAFETY: buf is writable for its full length, which is passed along.
        let r = unsafe {
            sys::rados_conf_get(
                self.handle.as_ptr(),
                k.as_ptr(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        if r < 0 {
            return Err(CephError::call(format!("read config option {key}"), r));
        }
        // SAFETY: librados wrote a NUL-terminated string into buf.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// The id of a pool, or [`CephError::NoSuchPool`].
    pub fn pool_id(&self, pool: &str) -> Result<i64> {
        let p = cstring("pool name", pool)?;
        // SAFETY: valid handle and NUL-terminated name.
        let r = unsafe { sys::rados_pool_lookup(self.handle.as_ptr(), p.as_ptr()) };
        match r {
            r if r >= 0 => Ok(r),
            r if r == -i64::from(libc::ENOENT) => Err(CephError::NoSuchPool(pool.into())),
            r => Err(CephError::call(format!("look up pool '{pool}'"), r as i32)),
        }
    }

    /// The name of pool `id`, or [`CephError::NoSuchPool`].
    pub fn pool_name(&self, id: i64) -> Result<String> {
        let mut buf = vec![0 as c_char; 256];
        loop {
            // SAFETY: buf is writable for its full length, which is passed along.
            let r = unsafe {
                sys::rados_pool_reverse_lookup(
                    self.handle.as_ptr(),
                    id,
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            if r == -libc::ERANGE && buf.len() < 1 << 16 {
                buf = vec![0 as c_char; buf.len() * 4];
                continue;
            }
            if r == -libc::ENOENT {
                return Err(CephError::NoSuchPool(format!("#{id}")));
            }
            if r < 0 {
                return Err(CephError::call(format!("look up pool id {id}"), r));
            }
            // SAFETY: librados wrote a NUL-terminated name into buf.
            return Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned());
        }
    }

    /// Sends a JSON command to the monitors.
    pub fn mon_command(&self, json: &str) -> Result<CommandOutput> {
        self.command(Target::Mon, json)
    }

    /// Sends a JSON command to the active mgr.
    pub fn mgr_command(&self, json: &str) -> Result<CommandOutput> {
        self.command(Target::Mgr, json)
    }

    /// Sends a JSON command to one OSD (`ceph tell osd.N ...`).
    pub fn osd_command(&self, osd: i32, json: &str) -> Result<CommandOutput> {
        self.command(Target::Osd(osd), json)
    }

    fn command(&self, target: Target, json: &str) -> Result<CommandOutput> {
        let cmd = cstring("command", json)?;
        let cmds = [cmd.as_ptr()];
        let mut outbuf: *mut c_char = std::ptr::null_mut();
        let mut outlen = 0usize;
        let mut outs: *mut c_char = std::ptr::null_mut();
        let mut outslen = 0usize;
        let h = self.handle.as_ptr();
        // SAFETY: cmds points to one NUL-terminated string that outlives the
        // call; no input buffer; the four out-pointers are valid. The calls
        // are bounded by rados_mon_op_timeout / rados_osd_op_timeout.
        let r = unsafe {
            match target {
                Target::Mon => sys::rados_mon_command(
                    h,
                    cmds.as_ptr() as *mut *const c_char,
                    1,
                    std::ptr::null(),
                    0,
                    &mut outbuf,
                    &mut outlen,
                    &mut outs,
                    &mut outslen,
                ),
                Target::Mgr => sys::rados_mgr_command(
                    h,
                    cmds.as_ptr() as *mut *const c_char,
                    1,
                    std::ptr::null(),
                    0,
                    &mut outbuf,
                    &mut outlen,
                    &mut outs,
                    &mut outslen,
                ),
                Target::Osd(id) => sys::rados_osd_command(
                    h,
                    id,
                    cmds.as_ptr() as *mut *const c_char,
                    1,
                    std::ptr::null(),
                    0,
                    &mut outbuf,
                    &mut outlen,
                    &mut outs,
                    &mut outslen,
                ),
            }
        };
        // SAFETY: librados allocated these buffers (or left them NULL) with
        // the given lengths; we copy them out and free them exactly once.
        let (out, status) = unsafe {
            let out = copy_and_free(outbuf, outlen);
            let status = String::from_utf8_lossy(&copy_and_free(outs, outslen)).into_owned();
            (out, status)
        };
        if r < 0 {
            let prefix = serde_json::from_str::<serde_json::Value>(json)
                .ok()
                .and_then(|v| v.get("prefix").and_then(|p| p.as_str()).map(str::to_string))
                .unwrap_or_else(|| json.to_string());
            return Err(CephError::Command {
                target: target.to_string(),
                prefix: format!("'{prefix}'"),
                errno: -r,
                status,
            });
        }
        Ok(CommandOutput { rc: r, out, status })
    }
}

/// Copies a librados-allocated buffer and frees it.
///
/// # Safety
/// `p` must be NULL or a buffer of `len` bytes allocated by librados.
unsafe fn copy_and_free(p: *mut c_char, len: usize) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: per the contract, p points to len readable bytes.
    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
    // SAFETY: per the contract, p was allocated by librados and is freed once.
    unsafe { sys::rados_buffer_free(p) };
    v
}

#[derive(Clone, Copy)]
enum Target {
    Mon,
    Mgr,
    Osd(i32),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Mon => f.write_str("mon"),
            Target::Mgr => f.write_str("mgr"),
            Target::Osd(id) => write!(f, "osd.{id}"),
        }
    }
}

fn create(entity: &str) -> Result<ClusterHandle> {
    let name = cstring("entity name", entity)?;
    let cluster = c"ceph";
    let mut h: sys::rados_t = std::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated strings; flags 0.
    let r = unsafe { sys::rados_create2(&mut h, cluster.as_ptr(), name.as_ptr(), 0) };
    if r < 0 {
        return Err(CephError::call(
            format!("create a cluster handle for {entity}"),
            r,
        ));
    }
    NonNull::new(h)
        .map(ClusterHandle)
        .ok_or(CephError::Lost("rados_create2"))
}

fn conf_set(h: &ClusterHandle, key: &str, val: &str) -> Result<()> {
    let k = cstring("config key", key)?;
    let v = cstring("config value", val)?;
    // SAFETY: valid, not yet connected handle; NUL-terminated strings.
    let r = unsafe { sys::rados_conf_set(h.as_ptr(), k.as_ptr(), v.as_ptr()) };
    if r < 0 {
        return Err(CephError::call(format!("set config option {key}"), r));
    }
    Ok(())
}

fn configure(h: &ClusterHandle, opts: &ConnectOptions) -> Result<()> {
    let path = opts
        .conf
        .as_ref()
        .map(|p| cstring("config path", &p.to_string_lossy()))
        .transpose()?;
    // SAFETY: valid handle; path is NULL (default search, which honours
    // $CEPH_CONF) or a NUL-terminated path.
    let r = unsafe {
        sys::rados_conf_read_file(
            h.as_ptr(),
            path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
        )
    };
    if r < 0 {
        match &opts.conf {
            Some(p) => {
                // librados says ENOENT for any file it cannot open: name
                // the real reason (a file mode 000 is not a missing file).
                let r = match std::fs::File::open(p) {
                    Err(e) => e.raw_os_error().map_or(r, |c| -c),
                    Ok(_) => r,
                };
                return Err(CephError::call(
                    format!("read config file {} (check -c/--conf)", p.display()),
                    r,
                ));
            }
            // No default config anywhere: fine if -m gives the mons.
            None if opts.mon_host.is_some() => {}
            None => return Err(CephError::call(
                "find a ceph.conf ($CEPH_CONF, /etc/ceph/ceph.conf, ~/.ceph/config, ./ceph.conf); \
                     pass -c/--conf or -m/--mon-host",
                r,
            )),
        }
    }
    // SAFETY: valid handle; NULL means "the CEPH_ARGS variable".
    let r = unsafe { sys::rados_conf_parse_env(h.as_ptr(), std::ptr::null()) };
    if r < 0 {
        return Err(CephError::call("parse $CEPH_ARGS", r));
    }
    if let Some(k) = &opts.keyring {
        conf_set(h, "keyring", &k.to_string_lossy())?;
    }
    if let Some(m) = &opts.mon_host {
        conf_set(h, "mon_host", m)?;
    }
    let secs = |d: Duration| format!("{}", d.as_secs_f64().max(1.0).ceil() as u64);
    conf_set(h, "client_mount_timeout", &secs(opts.connect_timeout))?;
    conf_set(h, "rados_mon_op_timeout", &secs(opts.op_timeout))?;
    conf_set(h, "rados_osd_op_timeout", &secs(opts.op_timeout))?;
    for (k, v) in &opts.overrides {
        conf_set(h, k, v)?;
    }
    Ok(())
}

/// The librados version linked at run time, as `major.minor.extra`.
pub fn librados_version() -> String {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: writes three ints through valid pointers.
    unsafe { sys::rados_version(&mut a, &mut b, &mut c) };
    format!("{a}.{b}.{c}")
}
