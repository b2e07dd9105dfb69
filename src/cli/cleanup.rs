//! `cephbench cleanup`.

use clap::Args;

/// `cephbench cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Pool to clean.
    #[arg(short = 'p', long)]
    pub pool: String,
    /// Only this run's objects [default: every cephbench run in the pool].
    #[arg(long, conflicts_with = "image")]
    pub run_name: Option<String>,
    /// Only this image made by `cephbench rbd --size` (a cephbench_img.* name).
    #[arg(long, value_name = "NAME")]
    pub image: Option<String>,
    /// Clean this RADOS namespace ("" for the default).
    #[arg(short = 'N', long, default_value = "", value_name = "NS")]
    pub namespace: String,
    /// Clean cephbench's objects in every namespace of the pool (needs a key that may list them all).
    #[arg(long, conflicts_with_all = ["namespace", "image"])]
    pub all_namespaces: bool,
}
