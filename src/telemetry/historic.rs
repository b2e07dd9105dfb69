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

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shape::ShapeError;

/// One op as an OSD recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoricOp {
    /// The OSD that recorded it.
    pub osd: i32,
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

/// What an `osd_op` description names: object, first op, its byte extent.
type Described = (String, String, Option<(u64, u64)>);

/// Object, op name and extent from an `osd_op(...)` description:
/// `osd_op(client.4349.0:1199 2.8 2:1c4bbf39:::NAME:head [write 0~4096] ...)`.
fn parse_description(d: &str) -> Option<Described> {
    let inner = d.strip_prefix("osd_op(")?;
    let mut words = inner.split(' ');
    let _reqid = words.next()?;
    let _pg = words.next()?;
    let hobj = words.next()?;
    // pool:hash:namespace:key:name:snap — the name may itself hold ':'.
    let parts: Vec<&str> = hobj.split(':').collect();
    if parts.len() < 6 {
        return None;
    }
    let object = parts[4..parts.len() - 1].join(":");
    let ops = &inner[inner.find('[')? + 1..inner.find(']')?];
    let first = ops.split(',').next()?.trim();
    let mut w = first.split(' ');
    let op = w.next()?.to_string();
    let extent = w.next().and_then(|e| {
        let (off, len) = e.split_once('~')?;
        Some((off.parse().ok()?, len.parse().ok()?))
    });
    Some((object, op, extent))
}

/// Parses one OSD's `dump_historic_ops[_by_duration]`. Ops that are not
/// client `osd_op`s (e.g. replica `osd_repop`) are skipped.
pub fn parse_historic_ops(osd: i32, doc: &Value) -> Result<Vec<HistoricOp>, ShapeError> {
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
        let Some((object, op, extent)) = parse_description(desc) else {
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
            object,
            op,
            extent,
            events,
        });
    }
    Ok(v)
}

/// Where one op's time went inside its primary OSD, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdSplit {
    /// The primary OSD.
    pub osd: i32,
    /// Receive stamp → reply sent (`commit_sent`, else `done`).
    pub total_ns: f64,
    /// Receive stamp → payload read (`header_read` → `all_read`).
    pub receive_ns: f64,
    /// Payload read → the PG started the op (dispatch, throttles, op queue).
    pub queue_ns: f64,
    /// Started → local commit (writes) or → done (reads).
    pub local_ns: f64,
    /// Local commit → the last replica's commit, when the replicas were later.
    pub replication_ns: f64,
    /// Events relative to the receive stamp, ms.
    pub events: Vec<(String, f64)>,
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
    fn descriptions_name_object_op_and_extent() {
        let d = "osd_op(client.4349.0:1199 2.8 2:1c4bbf39:::cephbench_data.default.566:head \
                 [write 0~4096 in=4096b] snapc 0=[] ondisk+write e50)";
        assert_eq!(
            parse_description(d),
            Some((
                "cephbench_data.default.566".into(),
                "write".into(),
                Some((0, 4096))
            ))
        );
        let d = "osd_op(client.1.0:2 2.8 2:1c4bbf39:ns1::a:b:head [delete] snapc 0=[] e5)";
        assert_eq!(
            parse_description(d),
            Some(("a:b".into(), "delete".into(), None))
        );
        assert_eq!(parse_description("osd_repop(client.1.0:2 2.8 e5/3)"), None);
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
            serde_json::json!({"ops": [{"description": "osd_op(c 1.0 1:0:::o:head [read 0~1])"}]}),
            serde_json::json!({"ops": [{"description": "osd_op(c 1.0 1:0:::o:head [read 0~1])",
                "type_data": {"events": [{"event": "x", "time": "bad"}]}}]}),
        ] {
            assert!(parse_historic_ops(0, &doc).is_err(), "{doc}");
        }
    }
}
