//! The tail, explained: the slowest ops the OSDs kept
//! (`dump_historic_ops_by_duration`, with each op's event timestamps) joined
//! to the client's own slowest ops, and where each one's time went.
//!
//! The events of a client op on its primary (pacific; see `OpRequest`,
//! `PrimaryLogPG::execute_ctx`, `ReplicatedBackend`): `header_read` (the
//! messenger's receive stamp, before the payload is read), `all_read`,
//! `dispatched`, `queued_for_pg`, `reached_pg`, `started`, `waiting for
//! subops from ...`, `op_commit` (the local commit), `sub_op_commit_rec`
//! (one per replica), `commit_sent`, `done`.
#![forbid(unsafe_code)]

use serde_json::Value;

use super::shape::ShapeError;
use crate::result::ops::{OpEvidence, OsdSplit};

/// Which message an OSD's record is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Record {
    /// A client op on its primary (`osd_op`).
    Op,
    /// A replica's write for a client op (`osd_repop`, on the replica).
    Repop,
    /// A replica's commit reply (`osd_repop_reply`, on the primary).
    RepopReply,
}

/// One op as an OSD recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoricOp {
    /// The OSD that recorded it.
    pub osd: i32,
    /// What kind of message the record is of.
    pub record: Record,
    /// The client that issued the op (`client.4349`), from its request id.
    pub client: String,
    /// The op's id within that client's session (the request id's tid).
    pub tid: u64,
    /// The pool, from the PG id.
    pub pool: i64,
    /// The object, as the description names it.
    pub object: String,
    /// `read`, `write` or another op name, from the description's op list.
    pub op: String,
    /// Byte extent of the first op (`[write 0~4096]`), if it has one.
    pub extent: Option<(u64, u64)>,
    /// Events, seconds since the epoch, in the OSD's order.
    pub events: Vec<(String, f64)>,
}

fn shape(why: impl Into<String>) -> ShapeError {
    ShapeError {
        what: "dump_historic_ops",
        why: why.into(),
    }
}

/// Parses Ceph's UTC timestamps (`2026-12-02T13:06:49.880192+0000`) into
/// seconds since the epoch.
pub fn parse_time(s: &str) -> Option<f64> {
    let (date, rest) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let split = rest.rfind(['+', '-'])?;
    let (clock, zone) = rest.split_at(split);
    let mut c = clock.splitn(3, ':');
    let (hh, mm, ss): (i64, i64, f64) = (
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
    );
    let z = zone.get(1..)?.replace(':', "");
    if z.len() != 4 {
        return None;
    }
    let zmin = z[..2].parse::<i64>().ok()? * 60 + z[2..].parse::<i64>().ok()?;
    let zsign = if zone.starts_with('-') { -1 } else { 1 };
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 - zsign * zmin * 60;
    Some(secs as f64 + ss)
}

/// What a record's description names.
#[derive(Debug, Clone, PartialEq)]
struct Described {
    record: Record,
    client: String,
    tid: u64,
    pool: i64,
    object: String,
    op: String,
    extent: Option<(u64, u64)>,
}

/// The request id and pool that open every description:
/// `client.4349.0:1199 2.8` → (`client.4349`, 1199, 2).
fn request(reqid: &str, pg: &str) -> Option<(String, u64, i64)> {
    let (entity, tid) = reqid.rsplit_once(':')?;
    let (client, _incarnation) = entity.rsplit_once('.')?;
    let pool = pg.split_once('.')?.0.parse().ok()?;
    Some((client.to_string(), tid.parse().ok()?, pool))
}

/// The object of a hobject (`pool:hash:namespace:key:name:snap`; the name may
/// itself hold ':').
fn object_name(hobj: &str) -> Option<String> {
    let parts: Vec<&str> = hobj.split(':').collect();
    (parts.len() >= 6).then(|| parts[4..parts.len() - 1].join(":"))
}

/// Parses a record's description:
/// `osd_op(client.4349.0:1199 2.8 2:1c4bbf39:::NAME:head [write 0~4096] ...)`,
/// `osd_repop(client.4349.0:1199 2.8 e13/11 2:1c4bbf39:::NAME:head v ...)`,
/// `osd_repop_reply(client.4349.0:1199 2.8 e13/11 ondisk, result = 0)`.
fn parse_description(d: &str) -> Option<Described> {
    let (record, inner) = if let Some(i) = d.strip_prefix("osd_op(") {
        (Record::Op, i)
    } else if let Some(i) = d.strip_prefix("osd_repop(") {
        (Record::Repop, i)
    } else if let Some(i) = d.strip_prefix("osd_repop_reply(") {
        (Record::RepopReply, i)
    } else {
        return None;
    };
    let mut words = inner.split(' ');
    let (client, tid, pool) = request(words.next()?, words.next()?)?;
    let described = |object, op: &str, extent| Described {
        record,
        client: client.clone(),
        tid,
        pool,
        object,
        op: op.to_string(),
        extent,
    };
    match record {
        Record::Op => {
            let object = object_name(words.next()?)?;
            // The first data op names it (librbd opens writes with
            // `set-alloc-hint`); else the first op.
            let ops = &inner[inner.find('[')? + 1..inner.find(']')?];
            let data = |o: &&str| {
                let name = o.trim().split(' ').next().unwrap_or("");
                matches!(name, "write" | "writefull" | "read" | "sparse-read")
            };
            let mut all = ops.split(',');
            let first = ops.split(',').find(data).or_else(|| all.next())?.trim();
            let mut w = first.split(' ');
            let op = w.next()?;
            let extent = w.next().and_then(|e| {
                let (off, len) = e.split_once('~')?;
                Some((off.parse().ok()?, len.parse().ok()?))
            });
            Some(described(object, op, extent))
        }
        Record::Repop => {
            let _epochs = words.next()?;
            let object = words.next().and_then(object_name).unwrap_or_default();
            Some(described(object, "repop", None))
        }
        Record::RepopReply => Some(described(String::new(), "repop_reply", None)),
    }
}

/// Parses one OSD's `dump_historic_ops[_by_duration]`: its client ops
/// (`osd_op`; replica writes and their replies are skipped).
pub fn parse_historic_ops(osd: i32, doc: &Value) -> Result<Vec<HistoricOp>, ShapeError> {
    let mut v = parse_records(osd, doc)?;
    v.retain(|o| o.record == Record::Op);
    Ok(v)
}

/// Parses one OSD's `dump_historic_ops[_by_duration]`: client ops, replica
/// writes and their replies; other records (e.g. peering messages) are
/// skipped.
pub fn parse_records(osd: i32, doc: &Value) -> Result<Vec<HistoricOp>, ShapeError> {
    let ops = doc
        .get("ops")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no `ops` array"))?;
    let mut v = Vec::new();
    for o in ops {
        let desc = o
            .get("description")
            .and_then(Value::as_str)
            .ok_or_else(|| shape("an op without a description"))?;
        let Some(d) = parse_description(desc) else {
            continue;
        };
        let events = o
            .pointer("/type_data/events")
            .and_then(Value::as_array)
            .ok_or_else(|| shape("an op without type_data.events"))?
            .iter()
            .map(|e| {
                let name = e.get("event").and_then(Value::as_str);
                let t = e.get("time").and_then(Value::as_str).and_then(parse_time);
                name.zip(t).map(|(n, t)| (n.to_string(), t))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| shape("an event without a name or a valid time"))?;
        v.push(HistoricOp {
            osd,
            record: d.record,
            client: d.client,
            tid: d.tid,
            pool: d.pool,
            object: d.object,
            op: d.op,
            extent: d.extent,
            events,
        });
    }
    Ok(v)
}

impl HistoricOp {
    fn at(&self, name: &str) -> Option<f64> {
        self.events.iter().find(|e| e.0 == name).map(|e| e.1)
    }

    fn last(&self, name: &str) -> Option<f64> {
        self.events.iter().rev().find(|e| e.0 == name).map(|e| e.1)
    }

    /// When the OSD received the op (its messenger's receive stamp).
    pub fn received(&self) -> Option<f64> {
        self.at("header_read")
            .or_else(|| self.at("initiated"))
            .or_else(|| self.events.first().map(|e| e.1))
    }

    /// Splits the op's time on its OSD.
    pub fn split(&self) -> Option<OsdSplit> {
        let t0 = self.received()?;
        let end = self.at("commit_sent").or_else(|| self.last("done"))?;
        let all_read = self.at("all_read").unwrap_or(t0);
        let started = self.at("started").unwrap_or(all_read);
        let ns = |a: f64, b: f64| ((b - a) * 1e9).max(0.0);
        let (local, repl) = match self.at("op_commit") {
            Some(commit) => {
                let replicas = self.last("sub_op_commit_rec");
                let repl = replicas.map_or(0.0, |r| ns(commit, r));
                (ns(started, commit), repl)
            }
            None => (ns(started, end), 0.0),
        };
        Some(OsdSplit {
            osd: self.osd,
            total_ns: ns(t0, end),
            receive_ns: ns(t0, all_read),
            queue_ns: ns(all_read, started),
            local_ns: local,
            replication_ns: repl,
            events: self
                .events
                .iter()
                .map(|(n, t)| (n.clone(), (t - t0) * 1e3))
                .collect(),
        })
    }
}

/// One of the client's slowest ops.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientSlowOp {
    /// `read` or `write`.
    pub op: String,
    /// The RADOS object it went to.
    pub object: String,
    /// Byte offset within the object.
    pub offset: u64,
    /// Completion latency, ns.
    pub latency_ns: u64,
    /// When it was submitted, seconds since the epoch (this host's clock).
    pub submitted: f64,
}

/// Finds the OSD's record of a client op: same object and op, the same
/// extent when both name one, received within the op's lifetime (plus
/// `slack_s` for clock offsets); the closest such record wins.
pub fn join<'a>(
    c: &ClientSlowOp,
    osd_ops: &'a [HistoricOp],
    slack_s: f64,
) -> Option<&'a HistoricOp> {
    let end = c.submitted + c.latency_ns as f64 / 1e9;
    osd_ops
        .iter()
        .filter(|h| h.object == c.object && h.op == c.op)
        .filter(|h| h.extent.map_or(true, |(off, _)| off == c.offset))
        .filter_map(|h| {
            let t = h.received()?;
            (t >= c.submitted - slack_s && t <= end + slack_s).then_some((h, t))
        })
        .min_by(|a, b| {
            (a.1 - c.submitted)
                .abs()
                .total_cmp(&(b.1 - c.submitted).abs())
        })
        .map(|(h, _)| h)
}

/// The stamps of one record that the per-op split needs, kept compact (the
/// history sampler keeps one per record of the run).
#[derive(Debug, Clone, PartialEq)]
pub struct Stamps {
    /// The OSD that recorded it.
    pub osd: i32,
    /// What the record is of.
    pub record: Record,
    /// The request's tid (the client is the sampler's filter).
    pub tid: u64,
    /// `write`, `read`, or `""` for other ops (and replica records).
    pub class: &'static str,
    /// Receive stamp (`header_read`, else `initiated`), s.
    pub received: f64,
    /// Payload read (`all_read`), s.
    pub all_read: f64,
    /// The PG took the op from its queue (`reached_pg`), s.
    pub reached_pg: f64,
    /// The repops went out (`waiting for subops from ...`), s.
    pub subops_sent: Option<f64>,
    /// The replicas that event names.
    pub replicas: Vec<i32>,
    /// The primary's own commit callback ran (`op_commit`), s.
    pub own_commit: Option<f64>,
    /// The last replica commit the primary handled (`sub_op_commit_rec`), s.
    pub last_commit_rec: Option<f64>,
    /// Reply sent (`commit_sent`), else `done`, s.
    pub end: f64,
}

impl HistoricOp {
    /// The stamps the per-op split needs; `None` without a receive stamp or
    /// an end.
    pub fn stamps(&self) -> Option<Stamps> {
        let received = self.received()?;
        let end = self.at("commit_sent").or_else(|| self.last("done"))?;
        let all_read = self.at("all_read").unwrap_or(received);
        let waiting = self
            .events
            .iter()
            .find(|e| e.0.starts_with("waiting for subops from "));
        Some(Stamps {
            osd: self.osd,
            record: self.record,
            tid: self.tid,
            class: match (self.record, self.op.as_str()) {
                (Record::Op, "write" | "writefull") => "write",
                (Record::Op, "read" | "sparse-read") => "read",
                _ => "",
            },
            received,
            all_read,
            reached_pg: self.at("reached_pg").unwrap_or(all_read),
            subops_sent: waiting.map(|e| e.1),
            replicas: waiting
                .map(|e| {
                    e.0["waiting for subops from ".len()..]
                        .split(',')
                        .filter_map(|x| x.trim().parse().ok())
                        .collect()
                })
                .unwrap_or_default(),
            own_commit: self.at("op_commit"),
            last_commit_rec: self.last("sub_op_commit_rec"),
            end,
        })
    }
}

/// One op's wait for its replicas split into (reply queue, cable, replica),
/// ns; `None` when a replica's or a reply's record is missing.
fn split_replication(
    op: &Stamps,
    wait: f64,
    repops: &std::collections::HashMap<(u64, i32), &Stamps>,
    replies: &std::collections::HashMap<u64, Vec<&Stamps>>,
) -> Option<(f64, f64, f64, f64)> {
    let sent = op.subops_sent?;
    let last = op.last_commit_rec?;
    let replies = replies.get(&op.tid)?;
    let mine: Vec<&&Stamps> = replies.iter().filter(|r| r.osd == op.osd).collect();
    if op.replicas.is_empty() || mine.len() < op.replicas.len() {
        return None;
    }
    let reply = mine.iter().max_by(|a, b| a.end.total_cmp(&b.end))?;
    let own = op
        .replicas
        .iter()
        .map(|r| repops.get(&(op.tid, *r)).map(|x| x.end - x.received))
        .collect::<Option<Vec<f64>>>()?
        .into_iter()
        .fold(0.0_f64, f64::max);
    let ns = |x: f64| (x * 1e9).max(0.0);
    let queued = ns(last - reply.received).min(wait);
    let round_trip = ns(reply.received - sent - own);
    let cable = round_trip.min(wait - queued);
    Some((queued, cable, wait - queued - cable, round_trip))
}

/// This run's per-op split on each primary OSD, per op kind, from the
/// stamps of its records (one client's, one pool's; replica and reply
/// records joined by tid): ops received in `[from, to]` (seconds since the
/// epoch, the OSDs' clocks) count. Sorted by OSD, then kind.
pub fn evidence(stamps: &[Stamps], from: f64, to: f64) -> Vec<(i32, &'static str, OpEvidence)> {
    use std::collections::{BTreeMap, HashMap};
    let mut repops = HashMap::new();
    let mut replies: HashMap<u64, Vec<&Stamps>> = HashMap::new();
    for s in stamps {
        match s.record {
            Record::Repop => {
                repops.insert((s.tid, s.osd), s);
            }
            Record::RepopReply => replies.entry(s.tid).or_default().push(s),
            Record::Op => {}
        }
    }
    #[derive(Default)]
    struct Sums {
        ops: u64,
        receive: f64,
        queue: f64,
        local: f64,
        wait: f64,
        osd: f64,
        split_ops: u64,
        split_wait: f64,
        queued: f64,
        cable: f64,
        round_trips: Vec<f64>,
    }
    let mut acc: BTreeMap<(i32, &'static str), Sums> = BTreeMap::new();
    let ns = |a: f64, b: f64| ((b - a) * 1e9).max(0.0);
    for op in stamps.iter().filter(|s| s.record == Record::Op) {
        if op.class.is_empty() || op.received < from || op.received > to {
            continue;
        }
        let (local, wait) = match (op.class, op.own_commit) {
            ("write", Some(c)) => {
                let last = op.last_commit_rec.unwrap_or(c);
                (ns(op.reached_pg, c) + ns(c.max(last), op.end), ns(c, last))
            }
            _ => (ns(op.reached_pg, op.end), 0.0),
        };
        let a = acc.entry((op.osd, op.class)).or_default();
        a.ops += 1;
        a.receive += ns(op.received, op.all_read);
        a.queue += ns(op.all_read, op.reached_pg);
        a.local += local;
        a.wait += wait;
        a.osd += ns(op.received, op.end);
        if op.subops_sent.is_some() {
            if let Some((q, c, _, rt)) = split_replication(op, wait, &repops, &replies) {
                a.split_ops += 1;
                a.split_wait += wait;
                a.queued += q;
                a.cable += c;
                a.round_trips.push(rt);
            }
        }
    }
    acc.into_iter()
        .map(|((osd, class), mut a)| {
            a.round_trips.sort_by(f64::total_cmp);
            let p10 = (!a.round_trips.is_empty()).then(|| a.round_trips[a.round_trips.len() / 10]);
            let n = a.ops as f64;
            let replication = a.wait / n;
            // The split ops' proportions, applied to every op's mean wait.
            let part = |x: f64| {
                (a.split_ops > 0).then(|| {
                    if a.split_wait > 0.0 {
                        replication * x / a.split_wait
                    } else {
                        0.0
                    }
                })
            };
            let (queued, cable) = (part(a.queued), part(a.cable));
            let replica = queued
                .zip(cable)
                .map(|(q, c)| (replication - q - c).max(0.0));
            let e = OpEvidence {
                ops: a.ops,
                split_ops: a.split_ops,
                receive_ns: a.receive / n,
                queue_ns: a.queue / n,
                local_ns: a.local / n,
                replication_ns: replication,
                reply_queue_ns: queued,
                cluster_network_ns: cable,
                replica_ns: replica,
                osd_ns: a.osd / n,
                repop_round_trip_p10_ns: p10,
                history_full: false,
            };
            (osd, class, e)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Value {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/pacific/dump_historic_ops_by_duration.json"
        ))
        .unwrap()
    }

    #[test]
    fn times_parse_as_utc_seconds() {
        // date -u -d 2026-12-02T13:06:49Z +%s
        assert_eq!(
            parse_time("2026-12-02T13:06:49.500000+0000"),
            Some(1_796_216_809.5)
        );
        assert_eq!(parse_time("1970-01-01T00:00:00.000000+0000"), Some(0.0));
        assert_eq!(parse_time("1970-01-01T01:00:00.000000+0100"), Some(0.0));
        assert_eq!(
            parse_time("2024-02-29T00:00:00-0100"),
            Some(1_709_168_400.0)
        );
        for bad in [
            "",
            "2026-13-01T00:00:00+0000",
            "2026-12-02 13:06:49",
            "x-y-zT1:2:3+0000",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn descriptions_name_request_pool_object_op_and_extent() {
        let d = "osd_op(client.4349.0:1199 2.8 2:1c4bbf39:::cephbench_data.default.566:head \
                 [write 0~4096 in=4096b] snapc 0=[] ondisk+write e50)";
        let got = parse_description(d).unwrap();
        assert_eq!(
            (got.record, got.client.as_str(), got.tid, got.pool),
            (Record::Op, "client.4349", 1199, 2)
        );
        assert_eq!(
            (got.object.as_str(), got.op.as_str(), got.extent),
            ("cephbench_data.default.566", "write", Some((0, 4096)))
        );
        let d = "osd_op(client.1.0:2 12.8s0 12:1c4bbf39:ns1::a:b:head [delete] snapc 0=[] e5)";
        let got = parse_description(d).unwrap();
        assert_eq!(
            (got.pool, got.object.as_str(), got.op.as_str(), got.extent),
            (12, "a:b", "delete", None)
        );
        let d =
            "osd_repop(client.4143.0:2358 2.0 e13/11 2:07a4d37b:::cephbench_data.default.26:head \
                 v 13'305, mlcod=13'303)";
        let got = parse_description(d).unwrap();
        assert_eq!(
            (
                got.record,
                got.client.as_str(),
                got.tid,
                got.pool,
                got.object.as_str()
            ),
            (
                Record::Repop,
                "client.4143",
                2358,
                2,
                "cephbench_data.default.26"
            )
        );
        let d = "osd_repop_reply(client.4143.0:2358 2.0 e13/11 ondisk, result = 0)";
        let got = parse_description(d).unwrap();
        assert_eq!(
            (got.record, got.client.as_str(), got.tid, got.pool),
            (Record::RepopReply, "client.4143", 2358, 2)
        );
        for other in [
            "pg_notify((query:13 sent:13 2.0( empty local-lis/les=0/0 n=0 ec=13/13 lis/c=0/0 les/c/f=0/0/0 sis=13) ...)",
            "osd_op(garbage)",
            "osd_repop(client.1.0:x 2.0 e5/3)",
        ] {
            assert_eq!(parse_description(other), None, "{other}");
        }
    }

    #[test]
    fn a_captured_pacific_dump_parses_and_splits() {
        let ops = parse_historic_ops(2, &fixture()).unwrap();
        assert!(!ops.is_empty());
        for op in &ops {
            let s = op
                .split()
                .expect("every client op has a receive stamp and an end");
            let parts = s.receive_ns + s.queue_ns + s.local_ns;
            assert!(parts <= s.total_ns + 1.0, "{s:?}");
            assert!(!s.events.is_empty());
        }
        // A replicated op: the replicas' commits came after the local one.
        let repl = ops
            .iter()
            .find(|o| o.events.iter().any(|e| e.0 == "sub_op_commit_rec"))
            .expect("the fixture holds a replicated op");
        let s = repl.split().unwrap();
        assert!(s.total_ns > 0.0);
        assert!(s.replication_ns >= 0.0);
    }

    #[test]
    fn join_takes_the_same_object_and_extent_closest_in_time() {
        let ev = |t: f64| {
            vec![
                ("header_read".to_string(), t),
                ("done".to_string(), t + 0.01),
            ]
        };
        let h = |t, off| HistoricOp {
            osd: 1,
            record: Record::Op,
            client: "client.1".into(),
            tid: 1,
            pool: 1,
            object: "obj".into(),
            op: "write".into(),
            extent: Some((off, 4096)),
            events: ev(t),
        };
        let ops = vec![h(100.0, 0), h(100.5, 0), h(100.001, 4096), h(200.0, 0)];
        let c = ClientSlowOp {
            op: "write".into(),
            object: "obj".into(),
            offset: 0,
            latency_ns: 20_000_000,
            submitted: 100.499,
        };
        assert_eq!(join(&c, &ops, 0.01), Some(&ops[1]));
        let far = ClientSlowOp {
            submitted: 150.0,
            ..c.clone()
        };
        assert_eq!(join(&far, &ops, 0.01), None);
        let other = ClientSlowOp {
            object: "nope".into(),
            ..c
        };
        assert_eq!(join(&other, &ops, 0.01), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for doc in [
            serde_json::json!({}),
            serde_json::json!({"ops": [{}]}),
            serde_json::json!({"ops": [{"description": "osd_op(client.1.0:1 1.0 1:0:::o:head [read 0~1])"}]}),
            serde_json::json!({"ops": [{"description": "osd_op(client.1.0:1 1.0 1:0:::o:head [read 0~1])",
                "type_data": {"events": [{"event": "x", "time": "bad"}]}}]}),
        ] {
            assert!(parse_historic_ops(0, &doc).is_err(), "{doc}");
        }
    }

    fn st(
        osd: i32,
        record: Record,
        tid: u64,
        class: &'static str,
        t: [f64; 3],
        end: f64,
    ) -> Stamps {
        Stamps {
            osd,
            record,
            tid,
            class,
            received: t[0],
            all_read: t[1],
            reached_pg: t[2],
            subops_sent: None,
            replicas: Vec::new(),
            own_commit: None,
            last_commit_rec: None,
            end,
        }
    }

    #[test]
    fn the_per_op_split_takes_each_part_from_its_own_stamps() {
        let ms = |x: f64| x / 1e3;
        // A replicated write on osd.0: repops out at 0.3 ms, own commit
        // callback at 1.3 ms, the last reply received at 2.4 ms and handled
        // at 2.5 ms, reply sent at 2.6 ms. Replicas took 1.0 and 1.2 ms.
        let mut w = st(0, Record::Op, 1, "write", [0.0, ms(0.1), ms(0.2)], ms(2.6));
        w.subops_sent = Some(ms(0.3));
        w.replicas = vec![1, 2];
        w.own_commit = Some(ms(1.3));
        w.last_commit_rec = Some(ms(2.5));
        let stamps = vec![
            w.clone(),
            st(1, Record::Repop, 1, "", [5.0, 5.0, 5.0], 5.0 + ms(1.0)),
            st(2, Record::Repop, 1, "", [7.0, 7.0, 7.0], 7.0 + ms(1.2)),
            st(0, Record::RepopReply, 1, "", [ms(1.9); 3], ms(2.0)),
            st(0, Record::RepopReply, 1, "", [ms(2.4); 3], ms(2.5)),
            // Another client's reply for tid 1 on another OSD: not joined.
            st(3, Record::RepopReply, 1, "", [ms(2.45); 3], ms(9.0)),
            // Outside the window, and a delete: not counted.
            st(0, Record::Op, 2, "write", [-1.0; 3], -0.9),
            st(0, Record::Op, 3, "", [0.0; 3], 0.1),
            st(0, Record::Op, 4, "read", [0.0, ms(0.05), ms(0.1)], ms(0.5)),
        ];
        let ev = evidence(&stamps, 0.0, 10.0);
        assert_eq!(ev.len(), 2, "{ev:?}");
        let (osd, kind, r) = &ev[0];
        assert_eq!((*osd, *kind, r.ops), (0, "read", 1));
        assert!(
            (r.local_ns - 0.4e6).abs() < 1.0 && r.replication_ns == 0.0,
            "{r:?}"
        );
        let (_, kind, e) = &ev[1];
        assert_eq!((*kind, e.ops, e.split_ops), ("write", 1, 1));
        let near = |a: f64, b: f64| (a - b).abs() < 1.0;
        assert!(
            near(e.receive_ns, 0.1e6) && near(e.queue_ns, 0.1e6),
            "{e:?}"
        );
        // 0.2 → 1.3 ms, plus the reply after the last commit: 0.1 ms.
        assert!(near(e.local_ns, 1.2e6), "{e:?}");
        assert!(near(e.replication_ns, 1.2e6), "{e:?}");
        assert!(near(e.reply_queue_ns.unwrap(), 0.1e6), "{e:?}");
        // 2.4 − 0.3 − 1.2 (the slower replica's own time).
        assert!(near(e.cluster_network_ns.unwrap(), 0.9e6), "{e:?}");
        // The slower replica's 1.2 ms beyond the primary's own 1.0 ms.
        assert!(near(e.replica_ns.unwrap(), 0.2e6), "{e:?}");
        assert!(
            near(
                e.receive_ns + e.queue_ns + e.local_ns + e.replication_ns,
                e.osd_ns
            ),
            "{e:?}"
        );
        // Without one replica's record the wait is not split.
        let missing: Vec<Stamps> = stamps
            .iter()
            .filter(|s| !(s.record == Record::Repop && s.osd == 2))
            .cloned()
            .collect();
        let e = &evidence(&missing, 0.0, 10.0)[1].2;
        assert_eq!((e.split_ops, e.cluster_network_ns), (0, None));
        assert!(near(e.replication_ns, 1.2e6));
        // A wait shorter than the reply's queue and the cable: capped, never negative.
        let mut quick = w;
        quick.last_commit_rec = Some(ms(1.35));
        let e = &evidence(&[quick], 0.0, 10.0)[0].2;
        assert!(near(e.replication_ns, 0.05e6), "{e:?}");
        let _ = e;
    }

    #[test]
    fn captured_records_give_stamps_for_ops_repops_and_replies() {
        let doc = serde_json::json!({"ops": [
            {"description": "osd_op(client.4143.0:2893 2.0 2:0d7ac0b5:::o:head [set-alloc-hint object_size 4194304 write_size 4194304,write 0~4096] snapc 0=[] ondisk+write e13)",
             "type_data": {"events": [
                {"event": "initiated", "time": "2026-12-05T05:38:02.907576+0000"},
                {"event": "header_read", "time": "2026-12-05T05:38:02.907576+0000"},
                {"event": "all_read", "time": "2026-12-05T05:38:02.907582+0000"},
                {"event": "reached_pg", "time": "2026-12-05T05:38:02.907594+0000"},
                {"event": "started", "time": "2026-12-05T05:38:02.907669+0000"},
                {"event": "waiting for subops from 1,2", "time": "2026-12-05T05:38:02.907694+0000"},
                {"event": "op_commit", "time": "2026-12-05T05:38:02.909773+0000"},
                {"event": "sub_op_commit_rec", "time": "2026-12-05T05:38:02.909788+0000"},
                {"event": "sub_op_commit_rec", "time": "2026-12-05T05:38:02.925374+0000"},
                {"event": "commit_sent", "time": "2026-12-05T05:38:02.925376+0000"},
                {"event": "done", "time": "2026-12-05T05:38:02.925381+0000"}]}},
            {"description": "osd_repop_reply(client.4143.0:2893 2.0 e13/11 ondisk, result = 0)",
             "type_data": {"events": [
                {"event": "initiated", "time": "2026-12-05T05:38:02.925300+0000"},
                {"event": "done", "time": "2026-12-05T05:38:02.925380+0000"}]}},
            {"description": "pg_notify(...)", "type_data": {"events": []}}
        ]});
        let recs = parse_records(0, &doc).unwrap();
        assert_eq!(recs.len(), 2);
        let op = recs[0].stamps().unwrap();
        assert_eq!(
            (op.class, op.tid, op.replicas.clone()),
            ("write", 2893, vec![1, 2])
        );
        assert_eq!(recs[0].extent, Some((0, 4096)));
        assert!(op.own_commit.is_some() && op.last_commit_rec > op.own_commit);
        let reply = recs[1].stamps().unwrap();
        assert_eq!(
            (reply.record, reply.class, reply.tid),
            (Record::RepopReply, "", 2893)
        );
        assert_eq!(parse_historic_ops(0, &doc).unwrap().len(), 1);
    }
}
