//! `cephbench agent`: joins a group, answers pings, runs the jobs it is
//! notified of at the common start, stores each result in the pool and acks.

use std::ffi::CString;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::{
    agent_image, agent_prefix, from_unix_ns, group_object, result_object, unix_ns, AgentInfo,
    GroupError, JobSpec, Message, Reply,
};
use crate::bench::{self, BenchError, Outcome};
use crate::ceph::{CephError, IoCtx, Rados, WatchEvent};
use crate::engine::StopRx;
use crate::result::Precondition;

/// A validated `cephbench agent` invocation.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The pool holding the group (and benchmarked by its jobs).
    pub pool: String,
    /// The namespace of the group's control objects (`-N`, as the controller's).
    pub namespace: String,
    /// The group's name.
    pub group: String,
    /// This agent's id.
    pub id: String,
    /// How long the OSD keeps the watch after losing this client.
    pub watch_timeout: Duration,
    /// Leave the group after this long without a job (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Also write each result as `<dir>/<group>.<job>.json` on this host.
    pub save_results: Option<std::path::PathBuf>,
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("names built by cephbench have no NUL")
}

async fn put(io: &IoCtx, name: &str, body: &[u8]) -> Result<(), CephError> {
    io.write_full(&cstr(name), body)?
        .await?
        .check(|| format!("write object '{name}'"))?;
    Ok(())
}

/// What a job ends with: a benchmark's outcome, or a prepared image.
enum JobOut {
    Bench(Box<Result<Outcome, BenchError>>),
    Prepared {
        image: String,
        pool: String,
        done: Result<Precondition, BenchError>,
    },
}

type JobFuture = Pin<Box<dyn Future<Output = JobOut>>>;

/// The job being run: its notify (acked when it ends), id and stop switch.
struct Running {
    notify_id: u64,
    job_id: String,
    stop: watch::Sender<bool>,
    fut: JobFuture,
}

/// Runs an agent until `stop` (SIGINT/SIGTERM) or the idle timeout, then
/// leaves the group, removing its registration (and the group object when
/// it was the last member). `log` receives one line per event.
pub async fn run_agent(
    rados: &Rados,
    cfg: &AgentConfig,
    mut stop: StopRx,
    mut log: impl FnMut(&str),
) -> Result<u64, GroupError> {
    let mut io = rados.ioctx(&cfg.pool)?;
    io.set_namespace(&cfg.namespace)?;
    let io = io;
    let gobj = group_object(&cfg.group);
    let aobj = format!("{}{}", agent_prefix(&cfg.group), cfg.id);
    let marker = serde_json::json!({"tool": "cephbench", "group": cfg.group});
    put(&io, &gobj, marker.to_string().as_bytes())
        .await
        .map_err(|e| bench_access(e, rados, &cfg.pool))?;
    // After a first op: the messenger has learned its address from its peers.
    let me = AgentInfo {
        id: cfg.id.clone(),
        host: crate::names::hostname(),
        pid: std::process::id(),
        gid: rados.instance_id(),
        entity: rados.entity().to_string(),
        addr: rados.addrs().ok().as_deref().and_then(super::client_ip),
    };
    put(&io, &aobj, &serde_json::to_vec(&me).expect("serializes")).await?;
    let mut prepared = Prepared::default();
    let result = serve(
        rados,
        &io,
        cfg,
        &me,
        &gobj,
        &mut stop,
        &mut log,
        &mut prepared,
    )
    .await;
    // Our own suite images the controller has not removed yet.
    for (image, (pool, _)) in prepared {
        if let Ok(pio) = rados.ioctx(&pool) {
            if crate::ceph::remove_image(&pio, &image).is_ok() {
                log(&format!("removed image '{image}' of pool '{pool}'"));
            }
        }
    }
    // Leave: our registration, then the group object if nobody else is left.
    let _ = bench::remove_objects(&io, [aobj], 1).await;
    if let Ok(left) = io.list_prefix(&agent_prefix(&cfg.group)) {
        if left.is_empty() {
            let _ = bench::remove_objects(&io, [gobj], 1).await;
        }
    }
    log("left the group");
    result
}

fn bench_access(e: CephError, rados: &Rados, pool: &str) -> GroupError {
    match e.errno() {
        Some(libc::EPERM | libc::EACCES) => GroupError::Bench(bench::no_access(rados, pool, e)),
        _ => GroupError::Ceph(e),
    }
}

/// The images this agent prepared (name -> pool and preconditioning pass).
type Prepared = std::collections::BTreeMap<String, (String, Precondition)>;

#[allow(clippy::too_many_arguments)]
async fn serve(
    rados: &Rados,
    io: &IoCtx,
    cfg: &AgentConfig,
    me: &AgentInfo,
    gobj: &str,
    stop: &mut StopRx,
    log: &mut impl FnMut(&str),
    prepared: &mut Prepared,
) -> Result<u64, GroupError> {
    let mut w = io.watch(gobj, cfg.watch_timeout)?;
    log(&format!(
        "joined group '{}' in pool '{}' as '{}' (client.{}{}); waiting for jobs",
        cfg.group,
        cfg.pool,
        me.id,
        me.gid,
        me.addr
            .as_deref()
            .map_or(String::new(), |a| format!(" at {a}"))
    ));
    let mut running: Option<Running> = None;
    let mut jobs_done = 0u64;
    let mut last_activity = Instant::now();
    let mut leaving = false;
    let reply = |r: &Reply| serde_json::to_vec(r).expect("serializes");
    loop {
        if leaving && running.is_none() {
            return Ok(jobs_done);
        }
        let idle_deadline = match cfg.idle_timeout {
            Some(t) if running.is_none() => Some(last_activity + t),
            _ => None,
        };
        let idle = async move {
            match idle_deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        let job_done = async {
            match running.as_mut() {
                Some(r) => r.fut.as_mut().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ev = w.next_event() => {
                let Some(ev) = ev else { return Ok(jobs_done) };
                match ev {
                    WatchEvent::Error { errno, .. } => {
                        log(&format!("watch broke (errno {errno}); watching again"));
                        drop(w);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        w = io.watch(gobj, cfg.watch_timeout)?;
                        continue;
                    }
                    WatchEvent::Notify(n) => {
                        let msg: Result<Message, _> = serde_json::from_slice(&n.payload);
                        let answer = match msg {
                            Err(e) => Some(Reply::Invalid { agent: me.id.clone(), error: e.to_string() }),
                            Ok(Message::Ping) => Some(Reply::Pong {
                                agent: me.clone(),
                                clock_unix_ns: unix_ns(n.received_at),
                                busy: running.is_some(),
                            }),
                            Ok(Message::Stop { job_id }) => {
                                if let Some(r) = &running {
                                    if r.job_id == job_id {
                                        log(&format!("job {job_id}: stop requested"));
                                        let _ = r.stop.send(true);
                                    }
                                }
                                Some(Reply::Stopping { agent: me.id.clone() })
                            }
                            Ok(Message::Job(job)) => {
                                last_activity = Instant::now();
                                let invalid = job.spec.check().err();
                                match job.assignments.iter().find(|a| a.agent == me.id) {
                                    None => Some(Reply::NotAssigned { agent: me.id.clone() }),
                                    Some(_) if invalid.is_some() => Some(Reply::JobDone {
                                        agent: me.id.clone(),
                                        result_object: None,
                                        measured_start_unix_ns: None,
                                        error: invalid.map(|e| format!("the job is not valid: {e}")),
                                    }),
                                    Some(_) if running.is_some() || leaving => Some(Reply::JobDone {
                                        agent: me.id.clone(),
                                        result_object: None,
                                        measured_start_unix_ns: None,
                                        error: Some("busy with another job or leaving".into()),
                                    }),
                                    Some(a) => {
                                        let (tx, rx) = watch::channel(false);
                                        let start_at = Some(from_unix_ns(a.start_local_unix_ns));
                                        let r2 = rados.clone();
                                        let (what, fut): (String, JobFuture) = match job.spec {
                                            JobSpec::Rados(mut rc) => {
                                                rc.run_name = a.run_name.clone();
                                                rc.start_at = start_at;
                                                rc.live = false;
                                                (
                                                    format!("rados {} as run '{}' on pool '{}'", rc.mode.as_str(), rc.run_name, rc.pool),
                                                    Box::pin(async move { JobOut::Bench(Box::new(bench::run_rados(&r2, &rc, rx).await)) }),
                                                )
                                            }
                                            JobSpec::Rbd(mut rc) => {
                                                // The controller named one image; each agent
                                                // creates (and removes) one of its own.
                                                if let bench::ImageChoice::Create { name, .. } = &mut rc.image {
                                                    *name = crate::names::new_image_name();
                                                }
                                                rc.start_at = start_at;
                                                rc.live = false;
                                                (
                                                    format!("rbd {} on pool '{}'", rc.mode.as_str(), rc.pool),
                                                    Box::pin(async move { JobOut::Bench(Box::new(bench::run_rbd(&r2, &rc, rx).await)) }),
                                                )
                                            }
                                            JobSpec::RbdOwnImage { image_base, cfg: mut rc } => {
                                                let image = agent_image(&image_base, &me.id);
                                                let what = format!("rbd {} on own image '{image}'", rc.mode.as_str());
                                                match prepared.get(&image) {
                                                    Some((_, p)) => {
                                                        rc.image = bench::ImageChoice::Existing { name: image, allow_write: true };
                                                        rc.prior_precondition = Some(p.clone());
                                                        rc.start_at = start_at;
                                                        rc.live = false;
                                                        (what, Box::pin(async move { JobOut::Bench(Box::new(bench::run_rbd(&r2, &rc, rx).await)) }))
                                                    }
                                                    None => {
                                                        let e = BenchError::Group(format!(
                                                            "image '{image}' was not prepared by this agent (was it restarted?)"
                                                        ));
                                                        (what, Box::pin(async move { JobOut::Bench(Box::new(Err(e))) }))
                                                    }
                                                }
                                            }
                                            JobSpec::Prepare(p) => {
                                                let image = agent_image(&p.image_base, &me.id);
                                                (
                                                    format!(
                                                        "create and precondition image '{image}' ({} of {}) in pool '{}'",
                                                        crate::units::fmt_bytes(p.test_area),
                                                        crate::units::fmt_bytes(p.size),
                                                        p.pool
                                                    ),
                                                    Box::pin(async move {
                                                        let done = bench::prepare_image(
                                                            &r2, &p.pool, p.data_pool.as_deref(), &image, p.size, p.test_area, p.bs, rx,
                                                        )
                                                        .await;
                                                        JobOut::Prepared { image, pool: p.pool, done }
                                                    }),
                                                )
                                            }
                                        };
                                        log(&format!(
                                            "job {}: {what}, starting in {:.3} s",
                                            job.job_id,
                                            from_unix_ns(a.start_local_unix_ns)
                                                .duration_since(std::time::SystemTime::now())
                                                .map_or(0.0, |d| d.as_secs_f64())
                                        ));
                                        running = Some(Running {
                                            notify_id: n.notify_id,
                                            job_id: job.job_id,
                                            stop: tx,
                                            fut,
                                        });
                                        None // acked when the job ends
                                    }
                                }
                            }
                        };
                        if let Some(a) = answer {
                            if let Err(e) = w.ack(n.notify_id, &reply(&a)) {
                                log(&format!("cannot ack a notify: {e}"));
                            }
                        }
                    }
                }
            }
            out = job_done => {
                let r = running.take().expect("a job was running");
                jobs_done += 1;
                last_activity = Instant::now();
                let out = match out {
                    JobOut::Bench(b) => *b,
                    JobOut::Prepared { image, pool, done } => {
                        let error = match done {
                            Ok(p) => {
                                log(&format!(
                                    "job {}: image '{image}' ready ({} written in {:.1} s)",
                                    r.job_id,
                                    crate::units::fmt_bytes(p.bytes),
                                    p.elapsed_s
                                ));
                                prepared.insert(image, (pool, p));
                                None
                            }
                            Err(e) => {
                                log(&format!("job {}: failed: {e}", r.job_id));
                                Some(e.to_string())
                            }
                        };
                        let done = Reply::JobDone {
                            agent: me.id.clone(),
                            result_object: None,
                            measured_start_unix_ns: None,
                            error,
                        };
                        if let Err(e) = w.ack(r.notify_id, &reply(&done)) {
                            log(&format!("cannot ack job {}: {e}", r.job_id));
                        }
                        continue;
                    }
                };
                let done = finish_job(io, cfg, me, &r.job_id, out).await;
                match &done {
                    Reply::JobDone { error: Some(e), .. } => log(&format!("job {}: failed: {e}", r.job_id)),
                    _ => log(&format!("job {}: done, result stored", r.job_id)),
                }
                if let Err(e) = w.ack(r.notify_id, &reply(&done)) {
                    log(&format!("cannot ack job {}: {e}", r.job_id));
                }
            }
            _ = stop.changed(), if !leaving => {
                leaving = true;
                if let Some(r) = &running {
                    log("interrupted: stopping the job, then leaving");
                    let _ = r.stop.send(true);
                }
            }
            _ = idle => {
                log("idle timeout: leaving");
                return Ok(jobs_done);
            }
        }
    }
}

/// Stores the job's result in the pool and builds the ack.
async fn finish_job(
    io: &IoCtx,
    cfg: &AgentConfig,
    me: &AgentInfo,
    job_id: &str,
    out: Result<Outcome, BenchError>,
) -> Reply {
    let fail = |e: String| Reply::JobDone {
        agent: me.id.clone(),
        result_object: None,
        measured_start_unix_ns: None,
        error: Some(e),
    };
    let outcome = match out {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    let name = result_object(&cfg.group, job_id, &me.id);
    let body = serde_json::to_vec(&outcome.result).expect("results serialize");
    if let Some(dir) = &cfg.save_results {
        let path = dir.join(format!("{}.{job_id}.json", cfg.group));
        if let Err(e) = std::fs::write(&path, &body) {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
    }
    if let Err(e) = put(io, &name, &body).await {
        return fail(format!("cannot store the result: {e}"));
    }
    Reply::JobDone {
        agent: me.id.clone(),
        result_object: Some(name),
        measured_start_unix_ns: outcome.measured_start.map(unix_ns),
        error: outcome.error.map(|e| e.to_string()),
    }
}
