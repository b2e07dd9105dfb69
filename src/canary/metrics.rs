//! What `watch` exports, and its rendering in the Prometheus text format
//! (version 0.0.4). Pure: the loop records each op here, the HTTP thread
//! renders a snapshot.
//!
//! Memory is bounded over days: per series one fixed set of bucket counters
//! and one HDR histogram (fixed size for its range and precision); the
//! per-interval histograms are merged into them and dropped.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::result::counters::OsdCounters;
use crate::result::Part;

/// The histogram's upper bounds, seconds: about 1.5× apart from 100 µs to
/// 30 s (a 4 KiB write on PLP drives to an op held by a down OSD).
pub const BUCKETS_S: [f64; 34] = [
    0.0001, 0.00015, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004,
    0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0,
    1.5, 2.0, 3.0, 5.0, 10.0, 30.0,
];

/// The quantiles exported from the exact (HDR) histograms.
pub const QUANTILES: [f64; 2] = [0.5, 0.99];

/// The op kinds of the canary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// A 4 KiB (by default) write of a whole object.
    Write,
    /// A read of it back.
    Read,
}

impl Op {
    /// The `op` label.
    pub fn label(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Read => "read",
        }
    }
}

/// Why an op did not count as a latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Failure {
    /// It did not complete within the op timeout (`rados_osd_op_timeout`).
    Timeout,
    /// It failed with another error.
    Error,
    /// A read came back shorter than written.
    Short,
    /// A read came back other than the last write of that object.
    Mismatch,
}

impl Failure {
    /// The `kind` label.
    pub fn label(self) -> &'static str {
        match self {
            Failure::Timeout => "timeout",
            Failure::Error => "error",
            Failure::Short => "short_read",
            Failure::Mismatch => "mismatch",
        }
    }
}

/// One latency series: bucket counts, sum and count since the start.
#[derive(Debug, Clone)]
struct Buckets {
    counts: [u64; BUCKETS_S.len()],
    /// Beyond the last bound (counted in `+Inf` only).
    over: u64,
    sum_s: f64,
    count: u64,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            counts: [0; BUCKETS_S.len()],
            over: 0,
            sum_s: 0.0,
            count: 0,
        }
    }
}

impl Buckets {
    fn record(&mut self, seconds: f64) {
        match BUCKETS_S.iter().position(|b| seconds <= *b) {
            Some(i) => self.counts[i] += 1,
            None => self.over += 1,
        }
        self.sum_s += seconds;
        self.count += 1;
    }
}

/// An HDR histogram of ns, 1 µs to 10 min, 2 significant digits.
fn hdr() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 600_000_000_000, 2).expect("valid HDR bounds")
}

/// One pool's series: everything below is keyed by pool name once, so an
/// op's record looks its pool up by `&str` and allocates nothing.
#[derive(Debug, Default)]
struct PoolSeries {
    /// Whether its last op succeeded (0 until one has).
    up: bool,
    /// The Unix time of each op kind's last success.
    last_success: BTreeMap<Op, f64>,
    /// (op, primary OSD): the exported histogram.
    latency: BTreeMap<(Op, i32), Buckets>,
    /// Per op: every op since the start, exactly.
    exact: BTreeMap<Op, Histogram<u64>>,
    /// Per op: this log interval's (the log line's), then dropped.
    interval: BTreeMap<Op, Histogram<u64>>,
    /// (op, primary OSD): ops and their summed latency (ns) since the
    /// probe's last look (the split's client mean).
    since_probe: BTreeMap<(Op, i32), (u64, f64)>,
    /// (op, kind): failed ops.
    failures: BTreeMap<(Op, Failure), u64>,
}

/// A series: pool, op, primary OSD (-1: unknown).
pub type SeriesKey = (String, Op, i32);

/// One series' split: each share's part and ns.
pub type Split = (SeriesKey, Vec<(Part, f64)>);

/// The OSD-side figures of the last probe (replaced whole each interval:
/// a series the last probe did not see is not exported).
#[derive(Debug, Default)]
struct ProbeState {
    /// Per OSD: the TCP connect to its public address, ns (`None`: failed).
    rtt: BTreeMap<i32, Option<f64>>,
    /// Per OSD: failed connects since the start.
    rtt_failures: BTreeMap<i32, u64>,
    /// Per OSD: its counters over the interval (all its traffic).
    counters: BTreeMap<i32, OsdCounters>,
    /// The splits of the interval's series.
    splits: Vec<Split>,
    /// Why the last probe missed something.
    note: Option<String>,
    /// When the last probe ended (Unix s).
    at: Option<f64>,
}

/// Everything `watch` exports.
#[derive(Debug)]
pub struct Metrics {
    version: String,
    librados: String,
    /// Whether the cluster answered the last command (its placement).
    connected: bool,
    /// The last command's error, while not connected.
    not_connected_why: Option<String>,
    pools: BTreeMap<String, PoolSeries>,
    probe: ProbeState,
    /// (pool, op, direction): lasting changes found in the intervals.
    changes: BTreeMap<(String, Op, &'static str), u64>,
    /// Times the placement connection was made anew (or tried).
    reconnects: u64,
    /// What to log at the next interval.
    events: Vec<String>,
}

/// One pool and op's interval: ops, failures, and their p50/p99 (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalLine {
    /// The pool.
    pub pool: String,
    /// The op.
    pub op: Op,
    /// Ops that completed.
    pub ops: u64,
    /// Their mean, ns (0 without ops).
    pub mean_ns: f64,
    /// Their median and 99th percentile, ns (0 without ops).
    pub p50_ns: u64,
    /// See `p50_ns`.
    pub p99_ns: u64,
    /// The slowest, ns.
    pub max_ns: u64,
}

impl Metrics {
    /// Nothing recorded yet; `pools` start down.
    pub fn new(version: &str, librados: &str, pools: &[String]) -> Metrics {
        Metrics {
            version: version.into(),
            librados: librados.into(),
            connected: false,
            not_connected_why: None,
            pools: pools
                .iter()
                .map(|p| (p.clone(), PoolSeries::default()))
                .collect(),
            probe: ProbeState::default(),
            changes: BTreeMap::new(),
            reconnects: 0,
            events: Vec::new(),
        }
    }

    /// Whether the cluster answered the last command, and if not, why.
    pub fn set_connected(&mut self, up: bool, why: Option<String>) {
        self.connected = up;
        self.not_connected_why = why.filter(|_| !up);
    }

    /// Why the cluster did not answer the last command.
    pub fn not_connected_why(&self) -> Option<&str> {
        self.not_connected_why.as_deref()
    }

    fn pool(&mut self, pool: &str) -> &mut PoolSeries {
        // The pools are known from the start: the insert is for a caller's
        // mistake only, not the op path.
        if !self.pools.contains_key(pool) {
            self.pools.insert(pool.to_string(), PoolSeries::default());
        }
        self.pools.get_mut(pool).expect("inserted above")
    }

    /// An op of `pool` on an object whose primary is `osd` (-1: unknown)
    /// took `ns`, completing at Unix time `now_s`.
    pub fn record(&mut self, pool: &str, op: Op, osd: i32, ns: u64, now_s: f64) {
        let p = self.pool(pool);
        p.latency
            .entry((op, osd))
            .or_default()
            .record(ns as f64 / 1e9);
        let v = ns.clamp(1_000, 600_000_000_000);
        for map in [&mut p.exact, &mut p.interval] {
            let _ = map.entry(op).or_insert_with(hdr).record(v);
        }
        let s = p.since_probe.entry((op, osd)).or_default();
        s.0 += 1;
        s.1 += ns as f64;
        p.up = true;
        p.last_success.insert(op, now_s);
    }

    /// An op of `pool` failed.
    pub fn fail(&mut self, pool: &str, op: Op, why: Failure) {
        let p = self.pool(pool);
        *p.failures.entry((op, why)).or_default() += 1;
        p.up = false;
    }

    /// The interval's lines (every pool and op that had ops), and a new
    /// interval.
    pub fn take_interval(&mut self) -> Vec<IntervalLine> {
        let mut out = Vec::new();
        for (pool, p) in &mut self.pools {
            for (op, h) in &p.interval {
                out.push(IntervalLine {
                    pool: pool.clone(),
                    op: *op,
                    ops: h.len(),
                    mean_ns: h.mean(),
                    p50_ns: h.value_at_quantile(0.5),
                    p99_ns: h.value_at_quantile(0.99),
                    max_ns: h.max(),
                });
            }
            p.interval.clear();
        }
        out
    }

    /// Each (pool, op, primary OSD)'s ops and summed latency (ns) since the
    /// last call.
    pub fn take_series(&mut self) -> Vec<(SeriesKey, (u64, f64))> {
        let mut out = Vec::new();
        for (pool, p) in &mut self.pools {
            for ((op, osd), v) in std::mem::take(&mut p.since_probe) {
                out.push(((pool.clone(), op, osd), v));
            }
        }
        out
    }

    /// The last probe's figures, at Unix time `now_s`: each primary's
    /// connect time (`None`: failed), each OSD's counters over the interval,
    /// the splits.
    pub fn set_probes(
        &mut self,
        now_s: f64,
        rtt: BTreeMap<i32, Option<f64>>,
        counters: BTreeMap<i32, OsdCounters>,
        splits: Vec<Split>,
    ) {
        for (osd, v) in &rtt {
            if v.is_none() {
                *self.probe.rtt_failures.entry(*osd).or_default() += 1;
            }
        }
        self.probe.rtt = rtt;
        self.probe.counters = counters;
        self.probe.splits = splits;
        self.probe.at = Some(now_s);
    }

    /// The placement connection was made anew (or that failed): counted,
    /// and `what` logged.
    pub fn reconnected(&mut self, what: String) {
        self.reconnects += 1;
        self.events.push(what);
    }

    /// The events to log since the last call.
    pub fn take_events(&mut self) -> Vec<String> {
        std::mem::take(&mut self.events)
    }

    /// Why the last probe missed something (`None`: it did not).
    pub fn set_probe_note(&mut self, note: Option<String>) {
        self.probe.note = note;
    }

    /// See [`Metrics::set_probe_note`].
    pub fn probe_note(&self) -> Option<&str> {
        self.probe.note.as_deref()
    }

    /// A lasting change of `pool`'s `op` latency was found (`slower` or
    /// `faster`).
    pub fn count_change(&mut self, pool: &str, op: Op, slower: bool) {
        let dir = if slower { "slower" } else { "faster" };
        *self.changes.entry((pool.to_string(), op, dir)).or_default() += 1;
    }

    /// Whether the cluster answered the last command.
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// The pools watched.
    pub fn pool_names(&self) -> Vec<String> {
        self.pools.keys().cloned().collect()
    }

    /// Failed ops of `pool` so far, all kinds.
    pub fn failures_of(&self, pool: &str) -> u64 {
        self.pools
            .get(pool)
            .map_or(0, |p| p.failures.values().sum())
    }

    /// The Prometheus text format.
    pub fn render(&self) -> String {
        let series: usize = self.pools.values().map(|p| p.latency.len()).sum();
        let mut s = String::with_capacity(8192 + 2048 * series + 256 * self.probe.splits.len());
        self.render_state(&mut s);
        self.render_latency(&mut s);
        self.render_exact(&mut s);
        self.render_failures(&mut s);
        self.render_probes(&mut s);
        s
    }

    /// The build, the connection and each pool's state.
    fn render_state(&self, s: &mut String) {
        head(
            s,
            "cephbench_watch_build_info",
            "gauge",
            "cephbench's version and the librados it runs on (always 1).",
        );
        let _ = writeln!(
            s,
            "cephbench_watch_build_info{{version=\"{}\",librados=\"{}\"}} 1",
            esc(&self.version),
            esc(&self.librados)
        );
        head(
            s,
            "cephbench_watch_up",
            "gauge",
            "1 when the cluster answered watch's last command (the pools' placement), else 0.",
        );
        let _ = writeln!(s, "cephbench_watch_up {}", u8::from(self.connected));
        head(
            s,
            "cephbench_watch_reconnects_total",
            "counter",
            "Times watch made its placement connection anew after the mons had not answered it \
             for 15 s (tries, also those that failed).",
        );
        let _ = writeln!(s, "cephbench_watch_reconnects_total {}", self.reconnects);
        head(
            s,
            "cephbench_watch_pool_up",
            "gauge",
            "1 when the pool's last canary op succeeded, else 0.",
        );
        for (pool, st) in &self.pools {
            let _ = writeln!(
                s,
                "cephbench_watch_pool_up{{pool=\"{}\"}} {}",
                esc(pool),
                u8::from(st.up)
            );
        }
        head(
            s,
            "cephbench_watch_last_success_timestamp_seconds",
            "gauge",
            "Unix time of the pool's last successful canary op of each kind: a latency is only \
             as fresh as this.",
        );
        for (pool, st) in &self.pools {
            for (op, t) in &st.last_success {
                let _ = writeln!(
                    s,
                    "cephbench_watch_last_success_timestamp_seconds{{pool=\"{}\",op=\"{}\"}} {}",
                    esc(pool),
                    op.label(),
                    num(*t)
                );
            }
        }
    }

    /// The latency histograms by pool, op and OSD.
    fn render_latency(&self, s: &mut String) {
        head(
            s,
            "cephbench_watch_op_latency_seconds",
            "histogram",
            "Completion latency of the canary's ops (submitted to librados -> completion \
             callback), by pool, op and the object's primary OSD at the time.",
        );
        for ((pool, op, osd), b) in self.pools.iter().flat_map(|(pool, p)| {
            p.latency
                .iter()
                .map(move |((op, osd), b)| ((pool, op, osd), b))
        }) {
            let labels = format!(
                "pool=\"{}\",op=\"{}\",osd=\"{}\"",
                esc(pool),
                op.label(),
                osd_label(*osd)
            );
            let mut cum = 0;
            for (bound, n) in BUCKETS_S.iter().zip(b.counts) {
                cum += n;
                let _ = writeln!(
                    s,
                    "cephbench_watch_op_latency_seconds_bucket{{{labels},le=\"{}\"}} {cum}",
                    num(*bound)
                );
            }
            let _ = writeln!(
                s,
                "cephbench_watch_op_latency_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
                 cephbench_watch_op_latency_seconds_sum{{{labels}}} {}\n\
                 cephbench_watch_op_latency_seconds_count{{{labels}}} {}",
                b.count,
                num(b.sum_s),
                b.count
            );
        }
    }

    /// The exact quantiles by pool and op.
    fn render_exact(&self, s: &mut String) {
        head(
            s,
            "cephbench_watch_op_latency_exact_seconds",
            "summary",
            "The same ops by pool and op, every one since watch started, from its exact (HDR, \
             1 %) histogram; for a window, use histogram_quantile over the _bucket series.",
        );
        for (pool, op, h) in self
            .pools
            .iter()
            .flat_map(|(pool, p)| p.exact.iter().map(move |(op, h)| (pool, op, h)))
        {
            let labels = format!("pool=\"{}\",op=\"{}\"", esc(pool), op.label());
            for q in QUANTILES {
                let _ = writeln!(
                    s,
                    "cephbench_watch_op_latency_exact_seconds{{{labels},quantile=\"{q}\"}} {}",
                    num(h.value_at_quantile(q) as f64 / 1e9)
                );
            }
            let sum_s: f64 = self.pools[pool]
                .latency
                .iter()
                .filter(|((o, _), _)| o == op)
                .map(|(_, b)| b.sum_s)
                .sum();
            let _ = writeln!(
                s,
                "cephbench_watch_op_latency_exact_seconds_sum{{{labels}}} {}\n\
                 cephbench_watch_op_latency_exact_seconds_count{{{labels}}} {}",
                num(sum_s),
                h.len()
            );
        }
    }

    /// The failed ops by pool, op and kind.
    fn render_failures(&self, s: &mut String) {
        head(
            s,
            "cephbench_watch_op_failures_total",
            "counter",
            "Canary ops that gave no latency, by pool, op and kind (timeout, error, short_read, \
             mismatch).",
        );
        for (pool, (op, kind), n) in self
            .pools
            .iter()
            .flat_map(|(pool, p)| p.failures.iter().map(move |(k, n)| (pool, k, n)))
        {
            let _ = writeln!(
                s,
                "cephbench_watch_op_failures_total{{pool=\"{}\",op=\"{}\",kind=\"{}\"}} {n}",
                esc(pool),
                op.label(),
                kind.label()
            );
        }
    }

    /// The probe's families: round trips, the OSDs' counters, the splits,
    /// and the changes found.
    fn render_probes(&self, s: &mut String) {
        head(
            s,
            "cephbench_watch_probe_timestamp_seconds",
            "gauge",
            "Unix time of the last probe (round trips, counters, split): its figures are as \
             fresh as this (a down OSD's counters hold a probe up to the op timeout).",
        );
        if let Some(at) = self.probe.at {
            let _ = writeln!(s, "cephbench_watch_probe_timestamp_seconds {}", num(at));
        }
        head(
            s,
            "cephbench_watch_osd_rtt_seconds",
            "gauge",
            "A TCP connect from this host to the OSD's public address, timed once an interval \
             (the primaries of the canary's objects; absent after a failed connect).",
        );
        for (osd, v) in &self.probe.rtt {
            if let Some(ns) = v {
                let _ = writeln!(
                    s,
                    "cephbench_watch_osd_rtt_seconds{{osd=\"{osd}\"}} {}",
                    num(ns / 1e9)
                );
            }
        }
        head(
            s,
            "cephbench_watch_osd_rtt_failures_total",
            "counter",
            "TCP connects to the OSD's public address that failed or took over 1 s.",
        );
        for (osd, n) in &self.probe.rtt_failures {
            let _ = writeln!(
                s,
                "cephbench_watch_osd_rtt_failures_total{{osd=\"{osd}\"}} {n}"
            );
        }
        head(
            s,
            "cephbench_watch_osd_counter_mean_seconds",
            "gauge",
            "The OSD's own latency counter's mean over the last interval, over ALL of its \
             traffic (every client's, not the canary's alone); absent when it counted nothing.",
        );
        for (osd, c) in &self.probe.counters {
            for (name, d) in [
                ("op_w_latency", c.op_w_latency),
                ("op_r_latency", c.op_r_latency),
                ("subop_w_latency", c.subop_w_latency),
                ("commit_lat", c.commit_lat),
                ("kv_sync_lat", c.kv_sync_lat),
                ("kv_flush_lat", c.kv_flush_lat),
            ] {
                if let Some(ns) = d.and_then(|d| d.mean_ns) {
                    let _ = writeln!(
                        s,
                        "cephbench_watch_osd_counter_mean_seconds{{osd=\"{osd}\",counter=\"{name}\"}} {}",
                        num(ns / 1e9)
                    );
                }
            }
        }
        head(
            s,
            "cephbench_watch_split_seconds",
            "gauge",
            "The canary's mean latency over the last interval split into shares, by pool, op, \
             primary OSD and part. basis=\"osd_counters_all_traffic\": the public network is \
             the canary's own round trip, the OSD-side parts are the OSDs' counters over all of \
             their traffic, not the canary's ops alone; unattributed is the rest (may be \
             negative).",
        );
        for ((pool, op, osd), shares) in &self.probe.splits {
            for (part, ns) in shares {
                let _ = writeln!(
                    s,
                    "cephbench_watch_split_seconds{{pool=\"{}\",op=\"{}\",osd=\"{}\",part=\"{}\",basis=\"osd_counters_all_traffic\"}} {}",
                    esc(pool),
                    op.label(),
                    osd_label(*osd),
                    part_label(*part),
                    num(ns / 1e9)
                );
            }
        }
        head(
            s,
            "cephbench_watch_changes_total",
            "counter",
            "Lasting changes of the canary's latency found in its intervals (the run's change \
             detector over the last hour of intervals), by pool, op and direction.",
        );
        for ((pool, op, dir), n) in &self.changes {
            let _ = writeln!(
                s,
                "cephbench_watch_changes_total{{pool=\"{}\",op=\"{}\",direction=\"{dir}\"}} {n}",
                esc(pool),
                op.label()
            );
        }
    }
}

/// A family's HELP and TYPE lines.
fn head(s: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A split part as a label value (`device_flush`).
fn part_label(p: Part) -> String {
    p.label().replace(' ', "_").to_lowercase()
}

/// The `osd` label: the id, or `unknown` (the placement was not read).
fn osd_label(osd: i32) -> String {
    if osd < 0 {
        "unknown".into()
    } else {
        osd.to_string()
    }
}

/// A sample value as Prometheus reads it (shortest round-trip form).
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

/// A label value escaped as the text format wants (backslash, quote, newline).
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn buckets_are_cumulative_and_end_in_the_count() {
        let mut m = Metrics::new("0.1.0", "3.0.0", &["p".into()]);
        // 0.9 ms, 1.2 ms, 1.2 ms, 40 s (beyond the last bound).
        for ns in [900_000, 1_200_000, 1_200_000, 40_000_000_000] {
            m.record("p", Op::Write, 2, ns, 1_700_000_000.5);
        }
        let t = m.render();
        let b = |le: &str| {
            sample(
                &t,
                &format!(
                    "cephbench_watch_op_latency_seconds_bucket{{pool=\"p\",op=\"write\",osd=\"2\",le=\"{le}\"}}"
                ),
            )
        };
        assert_eq!(b("0.00075"), 0.0);
        assert_eq!(b("0.001"), 1.0);
        assert_eq!(b("0.0015"), 3.0);
        assert_eq!(b("30"), 3.0);
        assert_eq!(b("+Inf"), 4.0);
        let labels = "{pool=\"p\",op=\"write\",osd=\"2\"}";
        assert_eq!(
            sample(
                &t,
                &format!("cephbench_watch_op_latency_seconds_count{labels}")
            ),
            4.0
        );
        let sum = sample(
            &t,
            &format!("cephbench_watch_op_latency_seconds_sum{labels}"),
        );
        assert!((sum - 40.0033).abs() < 1e-9, "{sum}");
        assert_eq!(sample(&t, "cephbench_watch_pool_up{pool=\"p\"}"), 1.0);
        assert_eq!(
            sample(
                &t,
                "cephbench_watch_last_success_timestamp_seconds{pool=\"p\",op=\"write\"}"
            ),
            1_700_000_000.5
        );
    }

    #[test]
    fn quantiles_are_the_exact_histograms_and_intervals_start_over() {
        let mut m = Metrics::new("0.1.0", "3.0.0", &["p".into()]);
        for i in 1..=100u64 {
            m.record("p", Op::Read, i as i32 % 3, i * 1_000_000, 0.0);
        }
        let t = m.render();
        let q = |q: &str| {
            sample(
                &t,
                &format!(
                    "cephbench_watch_op_latency_exact_seconds{{pool=\"p\",op=\"read\",quantile=\"{q}\"}}"
                ),
            )
        };
        // 1..100 ms: the median 50 ms, the 99th 99 ms, within HDR's 1 %.
        assert!((q("0.5") - 0.050).abs() <= 0.0005, "{}", q("0.5"));
        assert!((q("0.99") - 0.099).abs() <= 0.001, "{}", q("0.99"));
        let lines = m.take_interval();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].ops, 100);
        assert!(m.take_interval().is_empty());
        // The export keeps everything since the start.
        assert!(m.render().contains("quantile=\"0.99\"} 0.09"));
    }

    #[test]
    fn failures_count_and_mark_the_pool_down_and_labels_are_escaped() {
        let mut m = Metrics::new("0.1.0", "3.0.0", &["a\"b".into()]);
        m.set_connected(true, None);
        m.record("a\"b", Op::Write, -1, 1_000_000, 1.0);
        m.fail("a\"b", Op::Read, Failure::Timeout);
        m.fail("a\"b", Op::Read, Failure::Timeout);
        m.fail("a\"b", Op::Read, Failure::Mismatch);
        let t = m.render();
        assert_eq!(sample(&t, "cephbench_watch_up"), 1.0);
        assert_eq!(sample(&t, "cephbench_watch_pool_up{pool=\"a\\\"b\"}"), 0.0);
        assert_eq!(
            sample(
                &t,
                "cephbench_watch_op_failures_total{pool=\"a\\\"b\",op=\"read\",kind=\"timeout\"}"
            ),
            2.0
        );
        assert!(t.contains("osd=\"unknown\""), "{t}");
        assert_eq!(m.failures_of("a\"b"), 3);
        // Every family is announced once, before its samples.
        for family in [
            "cephbench_watch_op_latency_seconds",
            "cephbench_watch_op_failures_total",
        ] {
            assert_eq!(t.matches(&format!("# TYPE {family} ")).count(), 1);
        }
    }

    #[test]
    fn probes_replace_each_other_and_a_failed_connect_is_no_figure() {
        use crate::result::counters::AvgDelta;
        let mut m = Metrics::new("0.1.0", "3.0.0", &["p".into()]);
        m.record("p", Op::Write, 1, 2_000_000, 1.0);
        m.record("p", Op::Write, 1, 4_000_000, 1.0);
        m.record("p", Op::Read, 2, 1_000_000, 1.0);
        let mut series = m.take_series();
        series.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            series,
            vec![
                (("p".into(), Op::Write, 1), (2, 6_000_000.0)),
                (("p".into(), Op::Read, 2), (1, 1_000_000.0)),
            ]
        );
        assert!(m.take_series().is_empty(), "taken once");
        let mut c = OsdCounters {
            osd: 1,
            ..Default::default()
        };
        c.kv_flush_lat = Some(AvgDelta {
            count: 10,
            mean_ns: Some(3_000_000.0),
        });
        c.op_r_latency = Some(AvgDelta {
            count: 0,
            mean_ns: None,
        });
        m.set_probes(
            1_700_000_000.0,
            BTreeMap::from([(1, Some(250_000.0)), (2, None)]),
            BTreeMap::from([(1, c)]),
            vec![(
                ("p".into(), Op::Write, 1),
                vec![
                    (Part::DeviceFlush, 3_000_000.0),
                    (Part::Unattributed, -10.0),
                ],
            )],
        );
        m.count_change("p", Op::Write, true);
        let t = m.render();
        assert_eq!(
            sample(&t, "cephbench_watch_osd_rtt_seconds{osd=\"1\"}"),
            0.00025
        );
        assert!(
            !t.contains("cephbench_watch_osd_rtt_seconds{osd=\"2\"}"),
            "{t}"
        );
        assert_eq!(
            sample(&t, "cephbench_watch_osd_rtt_failures_total{osd=\"2\"}"),
            1.0
        );
        assert_eq!(
            sample(
                &t,
                "cephbench_watch_osd_counter_mean_seconds{osd=\"1\",counter=\"kv_flush_lat\"}"
            ),
            0.003
        );
        // A counter that counted nothing is no figure.
        assert!(!t.contains("counter=\"op_r_latency\""), "{t}");
        assert_eq!(
            sample(
                &t,
                "cephbench_watch_split_seconds{pool=\"p\",op=\"write\",osd=\"1\",part=\"device_flush\",basis=\"osd_counters_all_traffic\"}"
            ),
            0.003
        );
        assert_eq!(
            sample(
                &t,
                "cephbench_watch_changes_total{pool=\"p\",op=\"write\",direction=\"slower\"}"
            ),
            1.0
        );
        // The next probe replaces the last: a series it did not see is gone.
        m.set_probes(
            1_700_000_010.0,
            BTreeMap::new(),
            BTreeMap::new(),
            Vec::new(),
        );
        let t = m.render();
        assert!(!t.contains("cephbench_watch_split_seconds{"), "{t}");
        assert!(!t.contains("cephbench_watch_osd_rtt_seconds{"), "{t}");
        assert_eq!(
            sample(&t, "cephbench_watch_osd_rtt_failures_total{osd=\"2\"}"),
            1.0
        );
    }
}
