//! `cephbench agent`: joins a group, answers pings, runs the jobs it is
//! notified of at the common start, stores each result in the pool and acks.

use std::ffi::CString;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::{
    agent_image, agent_prefix, from_unix_ns, group_object, result_object, unix_ns, AgentInfo,
    Assignment, GroupError, JobMsg, JobSpec, Message, Reply,
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
    let result = Agent {
        rados,
        io: &io,
        cfg,
        me: &me,
        gobj: &gobj,
        log: &mut log,
        prepared: &mut prepared,
    }
    .serve(&mut stop)
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

/// What the agent serves the group with: the cluster, its registration and
/// the images it prepared; `log` receives one line per event.
struct Agent<'a, L: FnMut(&str)> {
    rados: &'a Rados,
    io: &'a IoCtx,
    cfg: &'a AgentConfig,
    me: &'a AgentInfo,
    gobj: &'a str,
    log: &'a mut L,
    prepared: &'a mut Prepared,
}

fn reply_bytes(r: &Reply) -> Vec<u8> {
    serde_json::to_vec(r).expect("serializes")
}

impl<L: FnMut(&str)> Agent<'_, L> {
    fn say(&mut self, line: &str) {
        (self.log)(line)
    }

    /// Watches the group object and answers its notifies, one job at a
    /// time, until `stop`, the idle timeout or the watch's end; returns the
    /// number of jobs run.
    async fn serve(&mut self, stop: &mut StopRx) -> Result<u64, GroupError> {
        let mut w = self.io.watch(self.gobj, self.cfg.watch_timeout)?;
        let joined = format!(
            "joined group '{}' in pool '{}' as '{}' (client.{}{}); waiting for jobs",
            self.cfg.group,
            self.cfg.pool,
            self.me.id,
            self.me.gid,
            self.me
                .addr
                .as_deref()
                .map_or(String::new(), |a| format!(" at {a}"))
        );
        self.say(&joined);
        let mut running: Option<Running> = None;
        let mut jobs_done = 0u64;
        let mut last_activity = Instant::now();
        let mut leaving = false;
        loop {
            if leaving && running.is_none() {
                return Ok(jobs_done);
            }
            let idle_deadline = match self.cfg.idle_timeout {
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
                            self.say(&format!("watch broke (errno {errno}); watching again"));
                            drop(w);
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            w = self.io.watch(self.gobj, self.cfg.watch_timeout)?;
                            continue;
                        }
                        WatchEvent::Notify(n) => {
                            let message: Result<Message, _> = serde_json::from_slice(&n.payload);
                            if matches!(message, Ok(Message::Job(_))) {
                                last_activity = Instant::now();
                            }
                            let answer = self.answer(&n, message, &mut running, leaving);
                            if let Some(a) = answer {
                                if let Err(e) = w.ack(n.notify_id, &reply_bytes(&a)) {
                                    self.say(&format!("cannot ack a notify: {e}"));
                                }
                            }
                        }
                    }
                }
                out = job_done => {
                    let r = running.take().expect("a job was running");
                    jobs_done += 1;
                    last_activity = Instant::now();
                    let done = self.job_ended(&r.job_id, out).await;
                    if let Err(e) = w.ack(r.notify_id, &reply_bytes(&done)) {
                        self.say(&format!("cannot ack job {}: {e}", r.job_id));
                    }
                }
                _ = stop.changed(), if !leaving => {
                    leaving = true;
                    if let Some(r) = &running {
                        self.say("interrupted: stopping the job, then leaving");
                        let _ = r.stop.send(true);
                    }
                }
                _ = idle => {
                    self.say("idle timeout: leaving");
                    return Ok(jobs_done);
                }
            }
        }
    }

    /// The ack for a notify, or `None` when it started a job (acked when
    /// the job ends).
    fn answer(
        &mut self,
        n: &crate::ceph::Notify,
        message: Result<Message, serde_json::Error>,
        running: &mut Option<Running>,
        leaving: bool,
    ) -> Option<Reply> {
        match message {
            Err(e) => Some(Reply::Invalid {
                agent: self.me.id.clone(),
                error: e.to_string(),
            }),
            Ok(Message::Ping) => Some(Reply::Pong {
                agent: self.me.clone(),
                clock_unix_ns: unix_ns(n.received_at),
                busy: running.is_some(),
            }),
            Ok(Message::Stop { job_id }) => {
                if let Some(r) = running.as_ref() {
                    if r.job_id == job_id {
                        self.say(&format!("job {job_id}: stop requested"));
                        let _ = r.stop.send(true);
                    }
                }
                Some(Reply::Stopping {
                    agent: self.me.id.clone(),
                })
            }
            Ok(Message::Job(job)) => {
                let busy = running.is_some() || leaving;
                match self.accept_job(n.notify_id, *job, busy) {
                    Ok(r) => {
                        *running = Some(r);
                        None
                    }
                    Err(reply) => Some(reply),
                }
            }
        }
    }

    /// Starts a job assigned to this agent, or the reply that refuses it
    /// (not assigned, not valid, busy).
    fn accept_job(&mut self, notify_id: u64, job: JobMsg, busy: bool) -> Result<Running, Reply> {
        let refused = |error: String| Reply::JobDone {
            agent: self.me.id.clone(),
            result_object: None,
            measured_start_unix_ns: None,
            error: Some(error),
        };
        let invalid = job.spec.check().err();
        let a = match job.assignments.iter().find(|a| a.agent == self.me.id) {
            None => {
                return Err(Reply::NotAssigned {
                    agent: self.me.id.clone(),
                })
            }
            Some(_) if invalid.is_some() => {
                let e = invalid.expect("checked");
                return Err(refused(format!("the job is not valid: {e}")));
            }
            Some(_) if busy => return Err(refused("busy with another job or leaving".into())),
            Some(a) => a,
        };
        let (tx, rx) = watch::channel(false);
        let (what, fut) = self.job_future(job.spec, a, rx);
        self.say(&format!(
            "job {}: {what}, starting in {:.3} s",
            job.job_id,
            from_unix_ns(a.start_local_unix_ns)
                .duration_since(std::time::SystemTime::now())
                .map_or(0.0, |d| d.as_secs_f64())
        ));
        Ok(Running {
            notify_id,
            job_id: job.job_id,
            stop: tx,
            fut,
        })
    }

    /// What the job does (for the log) and the future that runs it at the
    /// assignment's start; `rx` stops it.
    fn job_future(
        &self,
        spec: JobSpec,
        a: &Assignment,
        rx: watch::Receiver<bool>,
    ) -> (String, JobFuture) {
        let start_at = Some(from_unix_ns(a.start_local_unix_ns));
        let r2 = self.rados.clone();
        match spec {
            JobSpec::Rados(mut rc) => {
                rc.run_name = a.run_name.clone();
                rc.start_at = start_at;
                rc.live = false;
                (
                    format!(
                        "rados {} as run '{}' on pool '{}'",
                        rc.mode.as_str(),
                        rc.run_name,
                        rc.pool
                    ),
                    Box::pin(async move {
                        JobOut::Bench(Box::new(bench::run_rados(&r2, &rc, rx).await))
                    }),
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
                    Box::pin(
                        async move { JobOut::Bench(Box::new(bench::run_rbd(&r2, &rc, rx).await)) },
                    ),
                )
            }
            JobSpec::RbdOwnImage {
                image_base,
                cfg: mut rc,
            } => {
                let image = agent_image(&image_base, &self.me.id);
                let what = format!("rbd {} on own image '{image}'", rc.mode.as_str());
                match self.prepared.get(&image) {
                    Some((_, p)) => {
                        rc.image = bench::ImageChoice::Existing {
                            name: image,
                            allow_write: true,
                        };
                        rc.prior_precondition = Some(p.clone());
                        rc.start_at = start_at;
                        rc.live = false;
                        (
                            what,
                            Box::pin(async move {
                                JobOut::Bench(Box::new(bench::run_rbd(&r2, &rc, rx).await))
                            }),
                        )
                    }
                    None => {
                        let e = BenchError::Group(format!(
                            "image '{image}' was not prepared by this agent (was it restarted?)"
                        ));
                        (
                            what,
                            Box::pin(async move { JobOut::Bench(Box::new(Err(e))) }),
                        )
                    }
                }
            }
            JobSpec::Prepare(p) => {
                let image = agent_image(&p.image_base, &self.me.id);
                (
                    format!(
                        "create and precondition image '{image}' ({} of {}) in pool '{}'",
                        crate::units::fmt_bytes(p.test_area),
                        crate::units::fmt_bytes(p.size),
                        p.pool
                    ),
                    Box::pin(async move {
                        let done = bench::prepare_image(
                            &r2,
                            &p.pool,
                            p.data_pool.as_deref(),
                            &image,
                            p.size,
                            p.test_area,
                            p.bs,
                            rx,
                        )
                        .await;
                        JobOut::Prepared {
                            image,
                            pool: p.pool,
                            done,
                        }
                    }),
                )
            }
        }
    }

    /// The ack for a job that ended: a benchmark's result stored in the
    /// pool, or a prepared image kept for the jobs on it.
    async fn job_ended(&mut self, job_id: &str, out: JobOut) -> Reply {
        let out = match out {
            JobOut::Bench(b) => *b,
            JobOut::Prepared { image, pool, done } => {
                let error = match done {
                    Ok(p) => {
                        self.say(&format!(
                            "job {job_id}: image '{image}' ready ({} written in {:.1} s)",
                            crate::units::fmt_bytes(p.bytes),
                            p.elapsed_s
                        ));
                        self.prepared.insert(image, (pool, p));
                        None
                    }
                    Err(e) => {
                        self.say(&format!("job {job_id}: failed: {e}"));
                        Some(e.to_string())
                    }
                };
                return Reply::JobDone {
                    agent: self.me.id.clone(),
                    result_object: None,
                    measured_start_unix_ns: None,
                    error,
                };
            }
        };
        let done = finish_job(self.io, self.cfg, self.me, job_id, out).await;
        match &done {
            Reply::JobDone { error: Some(e), .. } => {
                self.say(&format!("job {job_id}: failed: {e}"))
            }
            _ => self.say(&format!("job {job_id}: done, result stored")),
        }
        done
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
