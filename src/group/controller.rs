//! The controller side of a group run: wait for the agents, measure their
//! clocks, notify the job with a common start, gather and merge the results.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::time::{Duration, Instant, SystemTime};

use super::merge::merge_results;
use super::{
    agent_prefix, group_object, unix_ns, AgentInfo, Assignment, GroupError, JobMsg, JobSpec,
    Message, PrepareSpec, Reply,
};
use crate::bench;
use crate::ceph::{CephError, IoCtx, NotifyReply, Rados};
use crate::engine::StopRx;
use crate::result::{BenchResult, ClientReport, GroupReport, Workload};

/// How long one ping waits for the agents' pongs.
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a stop notify waits for the agents.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The group part of `cephbench rados --group G --clients N`.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    /// The pool holding the group.
    pub pool: String,
    /// The namespace of the group's control objects (`-N`; "" for the
    /// default): the agents must be started with the same one.
    pub namespace: String,
    /// The group's name.
    pub group: String,
    /// How many agents run the job.
    pub clients: usize,
    /// How long to wait for that many agents.
    pub wait_agents: Duration,
    /// The common start is this far in the future when the job is sent.
    pub start_delay: Duration,
    /// How long after the job's expected end to wait for results.
    pub margin: Duration,
    /// Run on exactly these agents (in this order; a suite keeps the ones
    /// its first job ran on); `None`: any `clients` of those present.
    pub agents: Option<Vec<String>>,
}

/// A finished group run.
#[derive(Debug)]
pub struct GroupOutcome {
    /// The merged result, with its `clients` section.
    pub result: BenchResult,
    /// Agents that delivered no result, with the reason.
    pub missing: Vec<(String, String)>,
    /// Agents that answered with an error.
    pub failed: Vec<(String, String)>,
}

/// One agent as a ping saw it.
#[derive(Debug, Clone)]
struct Seen {
    info: AgentInfo,
    busy: bool,
    /// Agent clock minus controller clock, ns.
    offset_ns: f64,
    /// The ping's round trip, ns.
    rtt_ns: f64,
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("names built by cephbench have no NUL")
}

/// Pings the group; `None` if the group object does not exist (yet).
async fn ping(io: &IoCtx, gobj: &str) -> Result<Option<Vec<Seen>>, GroupError> {
    let payload = serde_json::to_vec(&Message::Ping).expect("serializes");
    let sent = SystemTime::now();
    let reply = match io.notify(&cstr(gobj), &payload, PING_TIMEOUT).await {
        Err(e) if e.errno() == Some(libc::ENOENT) => return Ok(None),
        r => r?,
    };
    let recv = SystemTime::now();
    let (s, r) = (unix_ns(sent) as f64, unix_ns(recv) as f64);
    let mut seen = Vec::new();
    for a in &reply.acks {
        if let Ok(Reply::Pong {
            agent,
            clock_unix_ns,
            busy,
        }) = serde_json::from_slice::<Reply>(&a.payload)
        {
            seen.push(Seen {
                info: agent,
                busy,
                offset_ns: clock_unix_ns as f64 - (s + r) / 2.0,
                rtt_ns: r - s,
            });
        }
    }
    Ok(Some(seen))
}

/// Keeps each agent's lowest-RTT sample.
fn keep_best(best: &mut BTreeMap<String, Seen>, seen: &[Seen]) {
    for s in seen {
        match best.get(&s.info.id) {
            Some(b) if b.rtt_ns <= s.rtt_ns => {
                let b = best.get_mut(&s.info.id).expect("present");
                b.busy = s.busy;
            }
            _ => {
                best.insert(s.info.id.clone(), s.clone());
            }
        }
    }
}

async fn read_object(io: &IoCtx, name: &str) -> Result<Vec<u8>, CephError> {
    let c = cstr(name);
    let st = io.stat(&c)?.await?;
    st.check(|| format!("stat object '{name}'"))?;
    let size = st.buf.size as usize;
    let rd = io.read(&c, vec![0u8; size.max(1)], 0)?.await?;
    let n = rd.check(|| format!("read object '{name}'"))? as usize;
    let mut buf = rd.buf;
    buf.truncate(n);
    Ok(buf)
}

/// Waits for the agents (`cfg.agents`, or any `cfg.clients` of those
/// present) and measures their clocks: the chosen ones, in assignment order.
async fn choose(
    io: &IoCtx,
    cfg: &GroupConfig,
    stop: &mut StopRx,
    log: &mut impl FnMut(&str),
) -> Result<Vec<Seen>, GroupError> {
    let gobj = group_object(&cfg.group);
    let want = cfg.agents.as_ref().map_or(cfg.clients, Vec::len);
    let pinned = |seen: &[Seen]| -> Vec<Seen> {
        match &cfg.agents {
            None => seen.to_vec(),
            Some(ids) => seen
                .iter()
                .filter(|s| ids.contains(&s.info.id))
                .cloned()
                .collect(),
        }
    };

    // 1. Wait for the agents.
    let waited = Instant::now();
    let deadline = waited + cfg.wait_agents;
    let mut best: BTreeMap<String, Seen> = BTreeMap::new();
    let present: Vec<Seen> = loop {
        let all = ping(io, &gobj).await?.unwrap_or_default();
        keep_best(&mut best, &all);
        let seen = pinned(&all);
        if seen.len() >= want {
            break seen;
        }
        if Instant::now() >= deadline || *stop.borrow() {
            let registered: Vec<String> = io
                .list_prefix(&agent_prefix(&cfg.group))
                .map(|v| {
                    v.into_iter()
                        .map(|e| e.name[agent_prefix(&cfg.group).len()..].to_string())
                        .collect()
                })
                .unwrap_or_default();
            let ids: Vec<&str> = all.iter().map(|s| s.info.id.as_str()).collect();
            let silent: Vec<&str> = registered
                .iter()
                .map(String::as_str)
                .filter(|r| !ids.contains(r))
                .collect();
            let present_s: Vec<String> = all
                .iter()
                .map(|s| format!("{} on {}", s.info.id, s.info.where_()))
                .collect();
            let present_n = seen.len();
            let missing = match &cfg.agents {
                None => format!("{} missing", cfg.clients - present_n),
                Some(ids) => format!(
                    "missing the agents the run began with: {}",
                    ids.iter()
                        .filter(|i| !seen.iter().any(|s| &s.info.id == *i))
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Err(GroupError::NotEnoughAgents(format!(
                "group '{group}' in pool '{pool}' has {present_n} of {want} agents after {waited:.0} s \
                 (present: {present}{silent}); {missing}: start more with \
                 `cephbench agent -p {pool} --group {group}` or lower --clients",
                group = cfg.group,
                pool = cfg.pool,
                waited = waited.elapsed().as_secs_f64(),
                present = if present_s.is_empty() {
                    "none".into()
                } else {
                    present_s.join(", ")
                },
                silent = if silent.is_empty() {
                    String::new()
                } else {
                    format!("; registered but not answering: {}", silent.join(", "))
                },
            )));
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            _ = stop.changed() => {}
        }
    };
    // 2. A few more round trips for the clock offsets (lowest RTT wins).
    for _ in 0..3 {
        if let Some(seen) = ping(io, &gobj).await? {
            keep_best(&mut best, &seen);
        }
    }
    let mut chosen: Vec<Seen> = present
        .iter()
        .map(|s| best.get(&s.info.id).cloned().unwrap_or_else(|| s.clone()))
        .collect();
    match &cfg.agents {
        Some(ids) => chosen.sort_by_key(|s| ids.iter().position(|i| *i == s.info.id)),
        None => chosen.sort_by(|a, b| (a.busy, &a.info.id).cmp(&(b.busy, &b.info.id))),
    }
    chosen.truncate(want);
    for s in &chosen {
        log(&format!(
            "agent {} on {} (client.{}): clock offset {:+.3} ms ± {:.3} ms (ping RTT {:.3} ms){}",
            s.info.id,
            s.info.where_(),
            s.info.gid,
            s.offset_ns / 1e6,
            s.rtt_ns / 2e6,
            s.rtt_ns / 1e6,
            if s.busy { ", BUSY" } else { "" }
        ));
    }
    Ok(chosen)
}

/// A job sent to the chosen agents and their answers.
struct Sent {
    start_ns: u64,
    assignments: Vec<Assignment>,
    expected: Duration,
    reply: NotifyReply,
    stopped: bool,
}

/// Notifies `job` to `chosen` with a common start `cfg.start_delay` ahead
/// and waits (bounded) for their acks; a stop request is passed on.
async fn send(
    io: &IoCtx,
    cfg: &GroupConfig,
    chosen: &[Seen],
    job: &JobSpec,
    stop: &mut StopRx,
    log: &mut impl FnMut(&str),
) -> Result<Sent, GroupError> {
    let base_run = job.run_name();
    let now = SystemTime::now();
    let start = now + cfg.start_delay;
    let start_ns = unix_ns(start);
    let job_id = format!("{:x}", unix_ns(now));
    let assignments: Vec<Assignment> = chosen
        .iter()
        .enumerate()
        .map(|(i, s)| Assignment {
            agent: s.info.id.clone(),
            run_name: format!("{base_run}-c{i}"),
            start_local_unix_ns: (start_ns as f64 + s.offset_ns).max(0.0) as u64,
        })
        .collect();
    let expected = cfg.start_delay + job.expected() + cfg.margin;
    let msg = Message::Job(Box::new(JobMsg {
        job_id: job_id.clone(),
        start_unix_ns: start_ns,
        spec: job.clone(),
        assignments: assignments.clone(),
    }));
    let payload = serde_json::to_vec(&msg).expect("serializes");
    log(&format!(
        "job {job_id}: sent to {} agents, common start in {:.1} s; waiting up to {:.0} s for results",
        chosen.len(),
        cfg.start_delay.as_secs_f64(),
        expected.as_secs_f64()
    ));
    let gc = cstr(&group_object(&cfg.group));
    let notify = io.notify(&gc, &payload, expected);
    tokio::pin!(notify);
    let mut stopped = false;
    let reply: NotifyReply = loop {
        tokio::select! {
            r = &mut notify => break r?,
            _ = stop.changed(), if !stopped => {
                stopped = true;
                log("interrupted: telling the agents to stop");
                let m = serde_json::to_vec(&Message::Stop { job_id: job_id.clone() }).expect("serializes");
                if let Err(e) = io.notify(&gc, &m, STOP_TIMEOUT).await {
                    log(&format!("cannot notify the stop: {e}"));
                }
            }
        }
    };
    Ok(Sent {
        start_ns,
        assignments,
        expected,
        reply,
        stopped,
    })
}

/// The agents' [`Reply::JobDone`]s, by agent.
fn job_dones(reply: &NotifyReply) -> BTreeMap<String, Reply> {
    let mut done = BTreeMap::new();
    for a in &reply.acks {
        if let Ok(r @ Reply::JobDone { .. }) = serde_json::from_slice::<Reply>(&a.payload) {
            if let Reply::JobDone { agent, .. } = &r {
                done.insert(agent.clone(), r.clone());
            }
        }
    }
    done
}

/// Why agent `s` did not answer `sent`.
fn silence(sent: &Sent, s: &Seen) -> String {
    if sent.reply.timeouts.iter().any(|t| t.gid == s.info.gid) {
        format!(
            "no result within {:.0} s (the agent stalled or died; its watch was still registered)",
            sent.expected.as_secs_f64()
        )
    } else {
        "no result: its watch disappeared (the agent died or lost the cluster)".into()
    }
}

/// Has each agent of the group create and precondition its own image
/// `<spec.image_base>.<agent id>` ([`JobSpec::Prepare`]). Returns the agents
/// (pin them in `cfg.agents` for the jobs on these images); an agent that
/// fails or does not answer fails the whole preparation, naming it (the
/// caller removes the images: [`super::agent_image`] of each returned or
/// named agent).
pub async fn prepare_images(
    rados: &Rados,
    cfg: &GroupConfig,
    spec: PrepareSpec,
    mut stop: StopRx,
    mut log: impl FnMut(&str),
) -> Result<Vec<String>, (Vec<String>, GroupError)> {
    let mut io = rados.ioctx(&cfg.pool).map_err(|e| (vec![], e.into()))?;
    io.set_namespace(&cfg.namespace)
        .map_err(|e| (vec![], e.into()))?;
    let io = io;
    let chosen = choose(&io, cfg, &mut stop, &mut log)
        .await
        .map_err(|e| (vec![], e))?;
    let ids: Vec<String> = chosen.iter().map(|s| s.info.id.clone()).collect();
    let job = JobSpec::Prepare(spec);
    let sent = send(&io, cfg, &chosen, &job, &mut stop, &mut log)
        .await
        .map_err(|e| (ids.clone(), e))?;
    let mut done = job_dones(&sent.reply);
    let mut bad = Vec::new();
    for s in &chosen {
        match done.remove(&s.info.id) {
            Some(Reply::JobDone { error: None, .. }) => {}
            Some(Reply::JobDone { error: Some(e), .. }) => bad.push(format!("{}: {e}", s.info.id)),
            _ => bad.push(format!("{}: {}", s.info.id, silence(&sent, s))),
        }
    }
    if sent.stopped {
        bad.push("interrupted".into());
    }
    if !bad.is_empty() {
        return Err((
            ids,
            GroupError::NoResults {
                group: cfg.group.clone(),
                why: format!("preparing the agents' images failed: {}", bad.join("; ")),
            },
        ));
    }
    Ok(ids)
}

/// Waits for `cfg.clients` agents, runs `job` on them and merges their results.
/// `log` gets progress lines (for stderr).
pub async fn run_group(
    rados: &Rados,
    cfg: &GroupConfig,
    job: JobSpec,
    mut stop: StopRx,
    mut log: impl FnMut(&str),
) -> Result<GroupOutcome, GroupError> {
    let mut io = rados.ioctx(&cfg.pool)?;
    io.set_namespace(&cfg.namespace)?;
    let io = io;
    let base_run = job.run_name().to_string();
    if base_run.len() + 1 + 1 + cfg.clients.to_string().len() > 64 {
        return Err(GroupError::BadResult {
            agent: "controller".into(),
            why: format!("--run-name '{base_run}' is too long for a group run (each client appends -c<N>; keep it under 58 characters)"),
        });
    }
    let chosen = choose(&io, cfg, &mut stop, &mut log).await?;
    let sent = send(&io, cfg, &chosen, &job, &mut stop, &mut log).await?;
    let (start_ns, stopped) = (sent.start_ns, sent.stopped);
    let assignments = &sent.assignments;

    // Gather.
    let mut done = job_dones(&sent.reply);
    let mut results: Vec<(String, BenchResult)> = Vec::new();
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let mut failed = Vec::new();
    let mut starts = Vec::new();
    for (s, a) in chosen.iter().zip(assignments) {
        let id = &s.info.id;
        let mut row = client_row(s, a);
        match done.remove(id) {
            Some(Reply::JobDone {
                result_object,
                measured_start_unix_ns,
                error,
                ..
            }) => {
                if let Some(ms) = measured_start_unix_ns {
                    let on_ctl = ms as f64 - s.offset_ns;
                    starts.push(on_ctl);
                    row.start_delta_ms = Some((on_ctl - start_ns as f64) / 1e6);
                }
                if let Some(e) = &error {
                    row.status = "failed".into();
                    row.error = Some(e.clone());
                    failed.push((id.clone(), e.clone()));
                }
                if let Some(obj) = result_object {
                    let r = take_result(&io, &obj, id).await?;
                    client_figures(&mut row, &r);
                    results.push((id.clone(), r));
                }
            }
            _ => {
                let why = silence(&sent, s);
                log(&format!("agent {id}: {why}"));
                row.status = "missing".into();
                row.error = Some(why.clone());
                missing.push((id.clone(), why));
                remove_what_it_left(rados, &io, cfg, &job, a, &mut log).await?;
            }
        }
        rows.push(row);
    }
    if results.is_empty() {
        let why: Vec<String> = missing
            .iter()
            .chain(failed.iter())
            .map(|(a, w)| format!("{a}: {w}"))
            .collect();
        return Err(GroupError::NoResults {
            group: cfg.group.clone(),
            why: why.join("; "),
        });
    }
    let named: Vec<(&str, &BenchResult)> = results.iter().map(|(a, r)| (a.as_str(), r)).collect();
    let mut merged = merge_results(&named)?;
    if let Workload::Rados(w) = &mut merged.workload {
        w.run_name = base_run;
    }
    if stopped {
        merged.interrupted = true;
    }
    for (a, w) in &missing {
        merged.warnings.push(format!(
            "agent {a} delivered no result: {w}; the figures are those of the other agents"
        ));
    }
    let spread = if starts.len() > 1 {
        let lo = starts.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = starts.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        Some((hi - lo) / 1e6)
    } else {
        None
    };
    merged.clients = Some(GroupReport {
        group: cfg.group.clone(),
        requested: cfg.clients as u64,
        planned_start_unix_ns: start_ns,
        start_spread_ms: spread,
        clients: rows,
    });
    Ok(GroupOutcome {
        result: merged,
        missing,
        failed,
    })
}

/// A client's row before its reply is read: who it is, its run and its
/// clock against the controller's.
fn client_row(s: &Seen, a: &Assignment) -> ClientReport {
    ClientReport {
        agent: s.info.id.clone(),
        host: s.info.host.clone(),
        addr: s.info.addr.clone(),
        status: "ok".into(),
        error: None,
        run_name: a.run_name.clone(),
        ops: 0,
        iops: 0.0,
        mean_ns: 0.0,
        p99_ns: 0,
        clock_offset_ms: s.offset_ns / 1e6,
        clock_rtt_ms: s.rtt_ns / 1e6,
        start_delta_ms: None,
    }
}

/// Reads agent `agent`'s result from object `obj`, then removes the object.
async fn take_result(io: &IoCtx, obj: &str, agent: &str) -> Result<BenchResult, GroupError> {
    let body = read_object(io, obj).await?;
    let r: BenchResult = serde_json::from_slice(&body).map_err(|e| GroupError::BadResult {
        agent: agent.to_string(),
        why: e.to_string(),
    })?;
    let _ = bench::remove_objects(io, [obj.to_string()], 1).await;
    Ok(r)
}

/// A client's ops, IOPS, mean (weighted by its jobs' ops) and p99 from its
/// result.
fn client_figures(row: &mut ClientReport, r: &BenchResult) {
    let n: u64 = r.jobs.iter().map(|j| j.ops).sum();
    row.ops = n;
    row.iops = r.jobs.iter().map(|j| j.iops).sum();
    row.mean_ns = if n > 0 {
        r.jobs
            .iter()
            .map(|j| j.ops as f64 * j.latency_ns.mean)
            .sum::<f64>()
            / n as f64
    } else {
        0.0
    };
    row.p99_ns = r.jobs.iter().map(|j| j.latency_ns.p99).max().unwrap_or(0);
}

/// Removes what an agent that delivered nothing left: its run's objects
/// and its registration.
async fn remove_what_it_left(
    rados: &Rados,
    io: &IoCtx,
    cfg: &GroupConfig,
    job: &JobSpec,
    a: &Assignment,
    log: &mut impl FnMut(&str),
) -> Result<(), GroupError> {
    let id = &a.agent;
    if job.leaves_objects() {
        let mut jio = rados.ioctx(job.pool())?;
        jio.set_namespace(job.namespace())?;
        match bench::cleanup(rados, &jio, Some(a.run_name.as_str()), 16).await {
            Ok(r) => log(&format!(
                "agent {id}: removed {} objects of its run '{}'",
                r.removed, a.run_name
            )),
            Err(e) => log(&format!(
                "agent {id}: cleanup of '{}' failed: {e}",
                a.run_name
            )),
        }
    }
    let _ = bench::remove_objects(io, [format!("{}{id}", agent_prefix(&cfg.group))], 1).await;
    Ok(())
}
