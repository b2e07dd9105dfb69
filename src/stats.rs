//! Latency recording: an HDR histogram per worker plus exact moments,
//! merged at the end of a run.
#![forbid(unsafe_code)]

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histogram holds exactly (1 hour, in ns); longer ones
/// are clamped to it (and still counted in the exact max).
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Values below 1 µs share one bucket; Ceph ops are never that fast.
const LOWEST_NS: u64 = 1_000;
/// Three significant digits: each percentile within 0.1%.
const SIGFIG: u8 = 3;
/// Two significant digits (1%) for the many per-OSD histograms: 1/8 the memory.
const SIGFIG_COMPACT: u8 = 2;

/// Records latencies (in nanoseconds) of one worker.
#[derive(Clone, Debug)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
    count: u64,
    sum: u128,
    sum_sq: f64,
    min: u64,
    max: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    /// An empty recorder (percentiles to 3 significant digits).
    pub fn new() -> Self {
        Self::with_sigfig(SIGFIG)
    }

    /// An empty recorder with percentiles to 2 significant digits (1%),
    /// for per-OSD breakdowns.
    pub fn compact() -> Self {
        Self::with_sigfig(SIGFIG_COMPACT)
    }

    fn with_sigfig(sigfig: u8) -> Self {
        LatencyRecorder {
            hist: Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, sigfig)
                .expect("static histogram bounds are valid"),
            count: 0,
            sum: 0,
            sum_sq: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one latency in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.clamp(LOWEST_NS, HIGHEST_NS));
        self.count += 1;
        self.sum += u128::from(ns);
        let f = ns as f64;
        self.sum_sq += f * f;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Adds another recorder's values into this one.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        self.hist
            .add(&other.hist)
            .expect("recorders share the same bounds");
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Empties the recorder, keeping its histogram's memory (no allocation).
    pub fn reset(&mut self) {
        self.hist.reset();
        self.count = 0;
        self.sum = 0;
        self.sum_sq = 0.0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Compressed for keeping many (a timeline's intervals): the histogram
    /// in HdrHistogram's V2 deflate encoding and the exact moments.
    pub fn pack(&self) -> PackedLatencies {
        let mut hist = Vec::new();
        if self.count > 0 {
            V2DeflateSerializer::new()
                .serialize(&self.hist, &mut hist)
                .expect("serializing to a Vec cannot fail for u64 counts");
        }
        PackedLatencies {
            count: self.count,
            sum: self.sum,
            sum_sq: self.sum_sq,
            min: self.min,
            max: self.max,
            hist,
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of the values recorded, ns (exact).
    pub fn sum_ns(&self) -> u128 {
        self.sum
    }

    /// The underlying histogram (for serialization and re-analysis).
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// The latency at quantile `q` (0..=1), in ns, from the histogram.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        // The histogram reports the bucket's highest equivalent value; never
        // report more than the true maximum.
        self.hist.value_at_quantile(q).min(self.max)
    }

    /// Summary statistics. Min, max, mean and stddev are exact; the
    /// percentiles come from the histogram (3 significant digits).
    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        let var = if self.count > 1 {
            ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        LatencySummary {
            min: self.min,
            mean,
            stddev: var.sqrt(),
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p99_9: self.quantile(0.999),
            max: self.max,
        }
    }
}

/// A [`LatencyRecorder`] compressed ([`LatencyRecorder::pack`]): what a
/// timeline keeps per interval and op kind. An interval with a few thousand
/// ops spread over a few hundred histogram buckets takes 0.5–2 KiB.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedLatencies {
    count: u64,
    sum: u128,
    sum_sq: f64,
    min: u64,
    max: u64,
    /// Empty when `count` is 0.
    hist: Vec<u8>,
}

impl Default for PackedLatencies {
    fn default() -> Self {
        LatencyRecorder::new().pack()
    }
}

impl PackedLatencies {
    /// The recorder back, exactly as packed.
    pub fn unpack(&self) -> LatencyRecorder {
        let mut r = LatencyRecorder::new();
        if self.count > 0 {
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut self.hist.as_slice())
                .expect("packed by LatencyRecorder::pack");
            r.hist.add(&h).expect("recorders share the same bounds");
        }
        r.count = self.count;
        r.sum = self.sum;
        r.sum_sq = self.sum_sq;
        r.min = self.min;
        r.max = self.max;
        r
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Largest value recorded (exact), 0 when none.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Adds `other`'s values (exactly: the histograms are added).
    pub fn merge(&mut self, other: &PackedLatencies) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        let mut r = self.unpack();
        r.merge(&other.unpack());
        *self = r.pack();
    }

    /// Bytes this takes in memory (the struct and its histogram's bytes).
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.hist.capacity()
    }
}

/// The median of `v` (sorted here); `None` for none.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// A histogram string in a result file that could not be decoded.
#[derive(Debug, thiserror::Error)]
#[error("not an HdrHistogram V2 (deflate, base64) histogram: {0}")]
pub struct HistogramDecodeError(String);

/// Encodes a latency histogram (ns) the way HdrHistogram's own tools write
/// them in logs: the V2 compressed (deflate) encoding, base64.
pub fn encode_histogram(hist: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .expect("serializing to a Vec cannot fail for u64 counts");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes what [`encode_histogram`] wrote.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, HistogramDecodeError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| HistogramDecodeError(e.to_string()))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| HistogramDecodeError(format!("{e:?}")))
}

/// Latency statistics in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Smallest value.
    pub min: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// Largest value.
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank percentile over raw values: the independent reference.
    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn summary_matches_exact_statistics() {
        // A skewed, deterministic sample: 1 ms body with a slow tail.
        let mut values = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let base = 800_000 + x % 400_000;
            values.push(if i % 100 == 0 { base * 20 } else { base });
        }
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        for (i, v) in values.iter().enumerate() {
            if i % 3 == 0 {
                a.record(*v)
            } else {
                b.record(*v)
            }
        }
        a.merge(&b);
        let s = a.summary();
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let n = values.len() as f64;
        let mean = values.iter().sum::<u64>() as f64 / n;
        let var = values
            .iter()
            .map(|v| (*v as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        assert_eq!(a.count(), 100_000);
        assert_eq!(s.min, sorted[0]);
        assert_eq!(s.max, *sorted.last().unwrap());
        assert!((s.mean - mean).abs() < 1e-6 * mean);
        assert!((s.stddev - var.sqrt()).abs() < 1e-6 * var.sqrt());
        for (q, got) in [(0.5, s.p50), (0.9, s.p90), (0.99, s.p99), (0.999, s.p99_9)] {
            let want = exact_quantile(&sorted, q);
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err <= 0.001, "q{q}: got {got}, want {want}");
        }
    }

    #[test]
    fn histograms_survive_encoding() {
        let mut r = LatencyRecorder::new();
        for i in 1..=10_000u64 {
            r.record(i * 997);
        }
        let text = encode_histogram(r.histogram());
        let back = decode_histogram(&text).unwrap();
        assert_eq!(back.len(), 10_000);
        assert_eq!(&back, r.histogram());
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("AAAA").is_err());
    }

    #[test]
    fn packed_recorders_unpack_exactly_and_merge() {
        let (mut a, mut b, mut both) = (
            LatencyRecorder::new(),
            LatencyRecorder::new(),
            LatencyRecorder::new(),
        );
        for i in 1..=5_000u64 {
            let v = 700_000 + (i * 7919) % 900_000;
            if i % 2 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            both.record(v);
        }
        let mut p = a.pack();
        assert_eq!(p.unpack().summary(), a.summary());
        assert_eq!(p.unpack().histogram(), a.histogram());
        p.merge(&b.pack());
        assert_eq!(p.unpack().histogram(), both.histogram());
        assert_eq!(p.count(), 5_000);
        assert_eq!(p.max(), both.summary().max);
        let mut empty = PackedLatencies::default();
        empty.merge(&p);
        assert_eq!(empty, p);
        a.reset();
        assert_eq!(a.summary(), LatencySummary::default());
        assert_eq!(a.histogram().len(), 0);
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(LatencyRecorder::new().summary(), LatencySummary::default());
        let mut r = LatencyRecorder::new();
        r.record(1_234_567);
        let s = r.summary();
        assert_eq!((s.min, s.max, s.stddev), (1_234_567, 1_234_567, 0.0));
        assert!(s.p50 >= 1_233_000 && s.p50 <= 1_234_567);
    }
}
