//! The one way a command reaches the cluster.

use anyhow::Context;
use cephbench::ceph::Rados;

use crate::cli::ConnArgs;

/// A command's async runtime and its connection to the cluster.
pub struct Session {
    /// The runtime the command's I/O runs on (one thread: the I/O loop
    /// needs no more; probes run on threads of their own).
    pub rt: tokio::runtime::Runtime,
    /// The data identity, with the telemetry identity when one was given.
    pub rados: Rados,
}

/// Connects the data identity with the config `overrides` (and the
/// telemetry identity, when given), warning about a keyring others can read.
pub fn connect(conn: &ConnArgs, overrides: Vec<(String, String)>) -> anyhow::Result<Session> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut options = conn.options();
    options.overrides = overrides;
    let mut rados = Rados::connect(&options)?;
    if let Some(t) = conn.telemetry_options() {
        let telemetry = Rados::connect(&t)
            .with_context(|| format!("connecting the telemetry identity {}", t.entity))?;
        rados = rados.with_telemetry(telemetry);
    }
    if let Ok(k) = rados.conf_get("keyring") {
        for w in cephbench::secrets::keyring_warnings(&k) {
            eprintln!("cephbench: warning: {w}");
        }
    }
    Ok(Session { rt, rados })
}
