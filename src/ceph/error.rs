//! Typed errors of the safe Ceph layer. Every error keeps the errno that
//! librados/librbd returned, so callers can branch on it.

use std::fmt;
use std::time::Duration;

/// An error from librados or librbd.
#[derive(Debug, thiserror::Error)]
pub enum CephError {
    /// A library call returned a negative errno.
    #[error("{op}: {}", Errno(*errno))]
    Call {
        /// What was being done (e.g. `write object 'x'`).
        op: String,
        /// The positive errno value.
        errno: i32,
    },
    /// The named pool does not exist.
    #[error("no such pool '{0}' (list pools with `ceph osd pool ls`)")]
    NoSuchPool(String),
    /// Connecting to the cluster failed.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A bounded wait on the cluster ran out.
    #[error("{what} did not finish within {}", fmt_secs(*.limit))]
    Timeout {
        /// What was being waited for.
        what: String,
        /// The bound that ran out.
        limit: Duration,
    },
    /// A mon/mgr/osd command returned an error.
    #[error("{target} command {prefix} failed: {} {}", Errno(*errno), status.trim())]
    Command {
        /// `mon`, `mgr` or `osd.N`.
        target: String,
        /// The command's prefix, e.g. `perf dump`.
        prefix: String,
        /// The positive errno value.
        errno: i32,
        /// The status text the daemon sent back.
        status: String,
    },
    /// An argument cannot be passed to the C library (e.g. an interior NUL).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A completion's callback never reported (the library dropped it).
    #[error("completion of {0} was lost")]
    Lost(&'static str),
}

impl CephError {
    /// The errno behind this error, if there is one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            CephError::Call { errno, .. } | CephError::Command { errno, .. } => Some(*errno),
            CephError::NoSuchPool(_) => Some(libc::ENOENT),
            CephError::Connect(c) => Some(c.errno),
            CephError::Timeout { .. } => Some(libc::ETIMEDOUT),
            CephError::InvalidArgument(_) => Some(libc::EINVAL),
            CephError::Lost(_) => None,
        }
    }

    pub(crate) fn call(op: impl Into<String>, ret: i32) -> Self {
        CephError::Call {
            op: op.into(),
            errno: ret.abs(),
        }
    }
}

/// Why `connect` failed, with the fix spelled out for the common causes.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to the cluster as {entity}: {}{}", Errno(*errno), hint(*errno, *limit, entity))]
pub struct ConnectError {
    /// The positive errno value.
    pub errno: i32,
    /// The entity name used, e.g. `client.admin`.
    pub entity: String,
    /// The connect timeout that was in force.
    pub limit: Duration,
}

fn hint(errno: i32, limit: Duration, entity: &str) -> String {
    match errno {
        libc::ETIMEDOUT => format!(
            " — no monitor answered within {}; check -m/--mon-host or `mon host` in ceph.conf \
             and that the mons are up (raise --connect-timeout if the cluster is just slow)",
            fmt_secs(limit)
        ),
        // Measured on pacific 16.2.15: a key with no caps at all and a
        // wrong secret get the same reply (the mon's auth answer -13, cephx
        // refused); only the mon's own log tells them apart ('mon caps
        // null' against 'unexpected key'). So both are named.
        libc::EACCES | libc::EPERM => format!(
            " — the monitors refused this key: either it does not match `ceph auth get {entity}` \
             (check --keyring and --id/--user), or {entity} has no mon caps (a key without them \
             is refused the same way, and the mon tells a client no more); cephbench needs at \
             least mon 'allow r' osd 'allow rw pool=POOL' (`ceph auth caps {entity} mon 'allow r' \
             osd 'allow rw pool=POOL'`)"
        ),
        libc::ENOENT => {
            " — no keyring or config found; pass --keyring and -c/--conf (or -m/--mon-host)"
                .to_string()
        }
        _ => String::new(),
    }
}

fn fmt_secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Formats an errno as the OS describes it, with its number.
pub struct Errno(pub i32);

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = std::io::Error::from_raw_os_error(self.0);
        let text = e.to_string();
        // io::Error renders "Permission denied (os error 13)"; keep Ceph's style instead.
        let text = text.split(" (os error").next().unwrap_or(&text);
        write!(f, "({}) {}", self.0, text)
    }
}

/// Result alias for the Ceph layer.
pub type Result<T, E = CephError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_renders_like_ceph() {
        assert_eq!(Errno(110).to_string(), "(110) Connection timed out");
        let e = CephError::call("write object 'a'", -28);
        assert_eq!(
            e.to_string(),
            "write object 'a': (28) No space left on device"
        );
        assert_eq!(e.errno(), Some(28));
    }

    #[test]
    fn connect_error_names_the_fix() {
        let e = ConnectError {
            errno: libc::ETIMEDOUT,
            entity: "client.admin".into(),
            limit: Duration::from_secs(3),
        };
        let s = e.to_string();
        assert!(s.contains("--mon-host"), "{s}");
        assert!(s.contains("3 s"), "{s}");
        assert!(!s.contains('\n'));
    }

    /// A wrong key and a key with no caps get the same -13 from the mon
    /// (measured on pacific): the error names both, and the caps needed.
    #[test]
    fn a_refused_key_names_a_wrong_key_and_missing_caps() {
        let e = ConnectError {
            errno: libc::EACCES,
            entity: "client.nocaps".into(),
            limit: Duration::from_secs(3),
        };
        let s = e.to_string();
        assert!(s.contains("`ceph auth get client.nocaps`"), "{s}");
        assert!(s.contains("--keyring"), "{s}");
        assert!(s.contains("client.nocaps has no mon caps"), "{s}");
        assert!(s.contains("mon 'allow r' osd 'allow rw pool=POOL'"), "{s}");
        assert!(!s.contains('\n'));
    }
}
