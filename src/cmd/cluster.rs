//! The commands around runs: `osd-bench` (each OSD's own bench), `agent`
//! (one client of a group run) and `cleanup`.

use std::io::Write;
use std::process::ExitCode;

use cephbench::bench;
use cephbench::names::IMAGE_PREFIX;
use cephbench::report::Format;

use crate::cli::{AgentArgs, CleanupArgs, ConnArgs, Globals, OsdBenchArgs, UsageError};
use crate::cmd::{connect, exit, signals};

/// `cephbench osd-bench`: each OSD's own bench in turn, its report on
/// stdout; exit 3 when an OSD's bench failed (the others still reported).
pub fn osd_bench(conn: &ConnArgs, args: &OsdBenchArgs, g: &Globals) -> anyhow::Result<ExitCode> {
    let cfg = args.config()?;
    let (format, live) = (g.format, g.live);
    if matches!(format, Format::Html | Format::TimelineCsv) {
        return Err(UsageError(
            "osd-bench prints text, markdown, csv or json; --format html and timeline-csv are \
             for benchmark results"
                .into(),
        )
        .into());
    }
    let s = connect::connect(conn, Vec::new())?;
    let r = cephbench::osdbench::run(&s.rados, &cfg, |l| {
        if live {
            eprintln!("cephbench: {l}")
        }
    })?;
    let mut out = std::io::stdout().lock();
    cephbench::osdbench::report::render(&r, format, &mut out)?;
    out.flush()?;
    let failed = r.failed();
    if failed > 0 {
        eprintln!(
            "cephbench: error: the bench failed on {failed} of {} OSDs (exit code 3)",
            r.osds.len()
        );
        return Ok(ExitCode::from(exit::DATA_ERRORS));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cephbench agent`: serves the jobs of a group's controller until it is
/// dismissed or interrupted.
pub fn agent(conn: &ConnArgs, args: &AgentArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.config()?;
    let s = connect::connect(conn, Vec::new())?;
    s.rt.block_on(async {
        let stop = signals::install(format!("cephbench cleanup -p {}", args.pool));
        let interrupted = stop.clone();
        let id = cfg.id.clone();
        let jobs = cephbench::group::run_agent(&s.rados, &cfg, stop, |l| {
            eprintln!("cephbench agent {id}: {l}")
        })
        .await?;
        eprintln!("cephbench agent {}: ran {jobs} job(s)", cfg.id);
        Ok(if *interrupted.borrow() {
            ExitCode::from(exit::INTERRUPTED)
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// `cephbench cleanup`: removes cephbench's own objects (a run, or all of
/// them) or one image it made, nothing else.
pub fn cleanup(conn: &ConnArgs, args: &CleanupArgs) -> anyhow::Result<ExitCode> {
    if let Some(r) = &args.run_name {
        cephbench::names::validate_token("--run-name", r).map_err(UsageError)?;
    }
    cephbench::names::validate_namespace(&args.namespace).map_err(UsageError)?;
    if let Some(i) = &args.image {
        if !i.starts_with(IMAGE_PREFIX) || i.len() == IMAGE_PREFIX.len() {
            return Err(UsageError(format!(
                "--image '{i}' is not an image cephbench made (those are named {}*); remove other images with `rbd rm`",
                IMAGE_PREFIX
            ))
            .into());
        }
    }
    let s = connect::connect(conn, Vec::new())?;
    let rados = &s.rados;
    // First what dead runs left changed in the cluster (an OSD out, its
    // settings): one line per change, whichever the pool.
    let undo_failed = undo_dead(rados, args.run_name.as_deref());
    s.rt.block_on(async {
        let mut io = rados.ioctx(&args.pool)?;
        // Removal works on a full pool too.
        io.set_pool_full_try();
        if let Some(image) = &args.image {
            cephbench::ceph::remove_image(&io, image)?;
            println!("removed image '{image}' from pool '{}'", args.pool);
            return Ok(ExitCode::SUCCESS);
        }
        let r = if args.all_namespaces {
            bench::cleanup_all_namespaces(rados, &mut io, args.run_name.as_deref(), 16).await?
        } else {
            io.set_namespace(&args.namespace)?;
            bench::cleanup(rados, &io, args.run_name.as_deref(), 16).await?
        };
        let what = if args.all_namespaces {
            " (every namespace)".to_string()
        } else if args.namespace.is_empty() {
            String::new()
        } else {
            format!(", namespace '{}'", args.namespace)
        };
        println!(
            "removed {} cephbench objects and images from pool '{}'{what}",
            r.removed, args.pool
        );
        if r.pool_removed {
            println!(
                "removed pool '{}' (created by cephbench --create-pool)",
                args.pool
            );
        }
        if let Some(w) = r.warning {
            eprintln!("cephbench: warning: {w}");
        }
        if !args.all_namespaces && !r.pool_removed {
            // What this cleanup did not look at: cephbench's objects in
            // the pool's other namespaces.
            if let Ok(elsewhere) = bench::cephbench_objects_elsewhere(&mut io, &args.namespace) {
                for (ns, n) in &elsewhere {
                    let flag = if ns.is_empty() {
                        String::new()
                    } else {
                        format!(" -N {ns}")
                    };
                    let name = if ns.is_empty() { "(default)" } else { ns.as_str() };
                    eprintln!(
                        "cephbench: note: namespace '{name}' holds {n} objects of cephbench's; remove them \
                         with `cephbench cleanup -p {}{flag}` (or --all-namespaces)",
                        args.pool
                    );
                }
            }
        }
        Ok(if undo_failed {
            ExitCode::from(exit::FAILURE)
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// Undoes the changes dead runs left recorded in the cluster, one line per
/// record (stdout; what could not be undone on stderr); whether any could
/// not be. Records that cannot be read are a warning: the objects are
/// still cleaned.
fn undo_dead(rados: &cephbench::ceph::Rados, run: Option<&str>) -> bool {
    match cephbench::undo::undo_dead(rados.telemetry(), run) {
        Ok(lines) => {
            let mut failed = false;
            for l in lines {
                if l.failed {
                    failed = true;
                    eprintln!("cephbench: error: {}", l.line);
                } else {
                    println!("{}", l.line);
                }
            }
            failed
        }
        Err(e) => {
            eprintln!("cephbench: warning: {e}");
            false
        }
    }
}
