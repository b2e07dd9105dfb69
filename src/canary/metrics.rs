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

/// The state of one pool's canary, as last seen.
#[derive(Debug, Clone, Default)]
struct PoolState {
    /// Whether its last op succeeded (0 until one has).
    up: bool,
    /// The Unix time of each op kind's last success.
    last_success: BTreeMap<Op, f64>,
}

/// Everything `watch` exports.
#[derive(Debug)]
pub struct Metrics {
    version: String,
    librados: String,
    /// Whether the cluster answered the last command (its placement).
    connected: bool,
    pools: BTreeMap<String, PoolState>,
    /// (pool, op, primary OSD): the exported histogram.
    latency: BTreeMap<(String, Op, i32), Buckets>,
    /// (pool, op): every op since the start, exactly.
    exact: BTreeMap<(String, Op), Histogram<u64>>,
    /// (pool, op): this interval's, merged into nothing (the log line's).
    interval: BTreeMap<(String, Op), Histogram<u64>>,
    /// (pool, op, kind): failed ops.
    failures: BTreeMap<(String, Op, Failure), u64>,
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
    /// Their median and 99th percentile, ns (0 without ops).
    pub p50_ns: u64,
    /// See `p50_ns`.
    pub p99_ns: u64,
}

impl Metrics {
    /// Nothing recorded yet; `pools` start down.
    pub fn new(version: &str, librados: &str, pools: &[String]) -> Metrics {
        Metrics {
            version: version.into(),
            librados: librados.into(),
            connected: false,
            pools: pools
                .iter()
                .map(|p| (p.clone(), PoolState::default()))
                .collect(),
            latency: BTreeMap::new(),
            exact: BTreeMap::new(),
            interval: BTreeMap::new(),
            failures: BTreeMap::new(),
        }
    }

    /// Whether the cluster answered the last command.
    pub fn set_connected(&mut self, up: bool) {
        self.connected = up;
    }

    /// An op of `pool` on an object whose primary is `osd` (-1: unknown)
    /// took `ns`, completing at Unix time `now_s`.
    pub fn record(&mut self, pool: &str, op: Op, osd: i32, ns: u64, now_s: f64) {
        self.latency
            .entry((pool.to_string(), op, osd))
            .or_default()
            .record(ns as f64 / 1e9);
        let v = ns.clamp(1_000, 600_000_000_000);
        for map in [&mut self.exact, &mut self.interval] {
            let h = map.entry((pool.to_string(), op)).or_insert_with(hdr);
            let _ = h.record(v);
        }
        let p = self.pools.entry(pool.to_string()).or_default();
        p.up = true;
        p.last_success.insert(op, now_s);
    }

    /// An op of `pool` failed.
    pub fn fail(&mut self, pool: &str, op: Op, why: Failure) {
        *self
            .failures
            .entry((pool.to_string(), op, why))
            .or_default() += 1;
        self.pools.entry(pool.to_string()).or_default().up = false;
    }

    /// The interval's lines (every pool and op that had ops or failures),
    /// and a new interval.
    pub fn take_interval(&mut self) -> Vec<IntervalLine> {
        let out = self
            .interval
            .iter()
            .map(|((pool, op), h)| IntervalLine {
                pool: pool.clone(),
                op: *op,
                ops: h.len(),
                p50_ns: h.value_at_quantile(0.5),
                p99_ns: h.value_at_quantile(0.99),
            })
            .collect();
        self.interval.clear();
        out
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
        self.failures
            .iter()
            .filter(|((p, _, _), _)| p == pool)
            .map(|(_, n)| n)
            .sum()
    }

    /// The Prometheus text format.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(4096 + 2048 * self.latency.len());
        let head = |s: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        head(
            &mut s,
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
            &mut s,
            "cephbench_watch_up",
            "gauge",
            "1 when the cluster answered watch's last command (the pools' placement), else 0.",
        );
        let _ = writeln!(s, "cephbench_watch_up {}", u8::from(self.connected));
        head(
            &mut s,
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
            &mut s,
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
        head(
            &mut s,
            "cephbench_watch_op_latency_seconds",
            "histogram",
            "Completion latency of the canary's ops (submitted to librados -> completion \
             callback), by pool, op and the object's primary OSD at the time.",
        );
        for ((pool, op, osd), b) in &self.latency {
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
        head(
            &mut s,
            "cephbench_watch_op_latency_exact_seconds",
            "summary",
            "The same ops by pool and op, every one since watch started, from its exact (HDR, \
             1 %) histogram; for a window, use histogram_quantile over the _bucket series.",
        );
        for ((pool, op), h) in &self.exact {
            let labels = format!("pool=\"{}\",op=\"{}\"", esc(pool), op.label());
            for q in QUANTILES {
                let _ = writeln!(
                    s,
                    "cephbench_watch_op_latency_exact_seconds{{{labels},quantile=\"{q}\"}} {}",
                    num(h.value_at_quantile(q) as f64 / 1e9)
                );
            }
            let sum_s: f64 = self
                .latency
                .iter()
                .filter(|((p, o, _), _)| p == pool && o == op)
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
        head(
            &mut s,
            "cephbench_watch_op_failures_total",
            "counter",
            "Canary ops that gave no latency, by pool, op and kind (timeout, error, short_read, \
             mismatch).",
        );
        for ((pool, op, kind), n) in &self.failures {
            let _ = writeln!(
                s,
                "cephbench_watch_op_failures_total{{pool=\"{}\",op=\"{}\",kind=\"{}\"}} {n}",
                esc(pool),
                op.label(),
                kind.label()
            );
        }
        s
    }
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
        m.set_connected(true);
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
}
