//! Merging the clients' results of a group run into one [`BenchResult`]:
//! counts and rates add up, latency histograms are added (so percentiles
//! are those of every op of every client), the mean and standard deviation
//! are combined exactly from each client's count, mean and deviation.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::progress::Sample;
use crate::result::{BenchResult, ClientLoad, JobReport, OsdClientRow, OsdReport};
use crate::stats::{decode_histogram, encode_histogram, LatencySummary};

use super::GroupError;

/// Percentiles of a merged histogram, as [`crate::stats::LatencyRecorder`]
/// reports them: the bucket's highest equivalent value, never above `max`.
fn quantile(h: &Histogram<u64>, q: f64, max: u64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    h.value_at_quantile(q).min(max)
}

/// The exact min, mean, standard deviation and max of several clients'
/// latencies from each one's (ops, summary): the mean weighted by ops, the
/// pooled variance (within-client sums of squares plus the spread between
/// the clients' means).
fn moments(parts: &[(u64, &LatencySummary)]) -> (u64, f64, f64, u64) {
    let parts: Vec<&(u64, &LatencySummary)> = parts.iter().filter(|(n, _)| *n > 0).collect();
    let n: f64 = parts.iter().map(|(k, _)| *k as f64).sum();
    if n == 0.0 {
        return (0, 0.0, 0.0, 0);
    }
    let mean = parts.iter().map(|(k, l)| *k as f64 * l.mean).sum::<f64>() / n;
    let ss: f64 = parts
        .iter()
        .map(|(k, l)| {
            let k = *k as f64;
            (k - 1.0).max(0.0) * l.stddev.powi(2) + k * (l.mean - mean).powi(2)
        })
        .sum();
    let stddev = if n > 1.0 {
        (ss / (n - 1.0)).max(0.0).sqrt()
    } else {
        0.0
    };
    let min = parts.iter().map(|(_, l)| l.min).min().unwrap_or(0);
    let max = parts.iter().map(|(_, l)| l.max).max().unwrap_or(0);
    (min, mean, stddev, max)
}

/// Open-loop jobs: the clients' service times, combined without a
/// histogram (results carry none for it): min, mean, deviation and max
/// exact, each percentile the highest client's — an upper bound of the
/// group's. `None` unless every client with ops has one.
fn merge_service(jobs: &[(&str, &JobReport)]) -> Option<LatencySummary> {
    let parts: Vec<(u64, &LatencySummary)> = jobs
        .iter()
        .filter(|(_, j)| j.ops > 0)
        .map(|(_, j)| j.service_latency_ns.as_ref().map(|s| (j.ops, s)))
        .collect::<Option<_>>()?;
    if parts.is_empty() {
        return None;
    }
    let (min, mean, stddev, max) = moments(&parts);
    let top = |f: fn(&LatencySummary) -> u64| parts.iter().map(|(_, s)| f(s)).max().unwrap_or(0);
    Some(LatencySummary {
        min,
        mean,
        stddev,
        p50: top(|s| s.p50),
        p90: top(|s| s.p90),
        p99: top(|s| s.p99),
        p99_9: top(|s| s.p99_9),
        max,
    })
}

/// Open-loop jobs: the group's schedule — asked and achieved rates, ops,
/// late ops and backlogs add up (each client ran its share of the rate);
/// the timer's error is the worst client's. `None` unless every client has one.
fn merge_rate(jobs: &[(&str, &JobReport)]) -> Option<crate::result::RateReport> {
    let rs: Vec<&crate::result::RateReport> = jobs
        .iter()
        .map(|(_, j)| j.rate.as_ref())
        .collect::<Option<_>>()?;
    let first = rs.first()?;
    let sum = |f: fn(&crate::result::RateReport) -> u64| rs.iter().map(|r| f(r)).sum::<u64>();
    let worst = |f: fn(&crate::result::ScheduleError) -> u64| {
        rs.iter()
            .map(|r| f(&r.schedule_error_ns))
            .max()
            .unwrap_or(0)
    };
    let asked: f64 = rs.iter().map(|r| r.asked).sum();
    let achieved: f64 = rs.iter().map(|r| r.achieved).sum();
    let (late, scheduled) = (sum(|r| r.late_ops), sum(|r| r.scheduled_ops));
    Some(crate::result::RateReport {
        asked,
        achieved,
        arrival: first.arrival.clone(),
        late_ops: late,
        scheduled_ops: scheduled,
        max_backlog: sum(|r| r.max_backlog),
        final_backlog: sum(|r| r.final_backlog),
        schedule_error_ns: crate::result::ScheduleError {
            p50: worst(|e| e.p50),
            p99: worst(|e| e.p99),
            max: worst(|e| e.max),
        },
        kept_up: achieved >= 0.98 * asked && late * 100 <= scheduled.max(1),
    })
}

/// Merges the latency summaries and histograms of one job across clients.
fn merge_latency(
    jobs: &[(&str, &JobReport)],
) -> Result<(LatencySummary, Option<String>), GroupError> {
    let mut hist: Option<Histogram<u64>> = None;
    let with_ops: Vec<&(&str, &JobReport)> = jobs.iter().filter(|(_, j)| j.ops > 0).collect();
    for (agent, j) in &with_ops {
        let text = j
            .histogram
            .as_deref()
            .ok_or_else(|| GroupError::BadResult {
                agent: agent.to_string(),
                why: format!("job '{}' has {} ops but no histogram", j.name, j.ops),
            })?;
        let h = decode_histogram(text).map_err(|e| GroupError::BadResult {
            agent: agent.to_string(),
            why: e.to_string(),
        })?;
        match &mut hist {
            None => hist = Some(h),
            Some(acc) => acc.add(&h).map_err(|e| GroupError::BadResult {
                agent: agent.to_string(),
                why: format!("histogram cannot be added: {e:?}"),
            })?,
        }
    }
    let Some(h) = hist else {
        return Ok((LatencySummary::default(), None));
    };
    let (min, mean, stddev, max) = moments(
        &with_ops
            .iter()
            .map(|(_, j)| (j.ops, &j.latency_ns))
            .collect::<Vec<_>>(),
    );
    let s = LatencySummary {
        min,
        mean,
        stddev,
        p50: quantile(&h, 0.50, max),
        p90: quantile(&h, 0.90, max),
        p99: quantile(&h, 0.99, max),
        p99_9: quantile(&h, 0.999, max),
        max,
    };
    Ok((s, Some(encode_histogram(&h))))
}

/// Adds the clients' per-second samples second by second.
fn merge_timeline(jobs: &[(&str, &JobReport)]) -> Vec<Sample> {
    let len = jobs
        .iter()
        .map(|(_, j)| j.timeline.len())
        .max()
        .unwrap_or(0);
    (0..len)
        .map(|i| {
            let present: Vec<&Sample> =
                jobs.iter().filter_map(|(_, j)| j.timeline.get(i)).collect();
            let ops: u64 = present.iter().map(|s| s.ops).sum();
            let lat = if ops > 0 {
                present
                    .iter()
                    .map(|s| s.ops as f64 * s.mean_latency_ns)
                    .sum::<f64>()
                    / ops as f64
            } else {
                0.0
            };
            Sample {
                t_s: present[0].t_s,
                ramp: present.iter().any(|s| s.ramp),
                ops,
                bytes: present.iter().map(|s| s.bytes).sum(),
                mean_latency_ns: lat,
                in_flight: present.iter().map(|s| s.in_flight).sum(),
                errors: present.iter().map(|s| s.errors).sum(),
                // Percentiles do not add up from each client's; the slowest
                // op does, where every client with ops has its own.
                p50_latency_ns: None,
                p99_latency_ns: None,
                max_latency_ns: present
                    .iter()
                    .filter(|s| s.ops > 0)
                    .map(|s| s.max_latency_ns)
                    .collect::<Option<Vec<u64>>>()
                    .and_then(|v| v.into_iter().max()),
            }
        })
        .collect()
}

fn merge_job(jobs: &[(&str, &JobReport)]) -> Result<JobReport, GroupError> {
    let first = jobs[0].1;
    let (latency, histogram) = merge_latency(jobs)?;
    let mut stops: Vec<&str> = jobs.iter().map(|(_, j)| j.stop_reason.as_str()).collect();
    stops.dedup();
    stops.sort_unstable();
    stops.dedup();
    let mut by_errno = BTreeMap::new();
    for (_, j) in jobs {
        for (e, n) in &j.errors_by_errno {
            *by_errno.entry(e.clone()).or_insert(0) += n;
        }
    }
    let timeline = merge_timeline(jobs);
    Ok(JobReport {
        per_second: crate::result::PerSecond::of(&timeline),
        end_flush: None,
        name: first.name.clone(),
        op: first.op.clone(),
        ops: jobs.iter().map(|(_, j)| j.ops).sum(),
        errors: jobs.iter().map(|(_, j)| j.errors).sum(),
        bytes: jobs.iter().map(|(_, j)| j.bytes).sum(),
        elapsed_s: jobs.iter().map(|(_, j)| j.elapsed_s).fold(0.0, f64::max),
        iops: jobs.iter().map(|(_, j)| j.iops).sum(),
        bytes_per_sec: jobs.iter().map(|(_, j)| j.bytes_per_sec).sum(),
        latency_ns: latency,
        stop_reason: stops.join(","),
        verify_mismatches: jobs
            .iter()
            .filter_map(|(_, j)| j.verify_mismatches)
            .reduce(|a, b| a + b),
        short_reads: jobs.iter().map(|(_, j)| j.short_reads).sum(),
        first_error: jobs
            .iter()
            .find_map(|(a, j)| j.first_error.as_ref().map(|e| format!("[{a}] {e}"))),
        errors_by_errno: by_errno,
        longest_gap_s: jobs
            .iter()
            .map(|(_, j)| j.longest_gap_s)
            .fold(0.0, f64::max),
        slow_ops: jobs.iter().map(|(_, j)| j.slow_ops).sum(),
        slow_op_s: first.slow_op_s,
        timeline,
        histogram,
        attribution: None,
        service_latency_ns: merge_service(jobs),
        rate: merge_rate(jobs),
        client: merge_client(jobs),
        changes: None,
        projections: None,
    })
}

/// The clients' `client` blocks as one: asked and mean ops in flight add up,
/// the refill wait is weighted by ops. Absent when any client lacks one.
fn merge_client(jobs: &[(&str, &JobReport)]) -> Option<ClientLoad> {
    let loads: Vec<(ClientLoad, u64)> = jobs
        .iter()
        .map(|(_, j)| j.client.map(|c| (c, j.ops)))
        .collect::<Option<_>>()?;
    let ops: u64 = loads.iter().map(|(_, n)| n).sum();
    Some(ClientLoad {
        asked_in_flight: loads.iter().map(|(c, _)| c.asked_in_flight).sum(),
        mean_in_flight: loads.iter().map(|(c, _)| c.mean_in_flight).sum(),
        refill_wait_ns: if ops > 0 {
            loads
                .iter()
                .map(|(c, n)| c.refill_wait_ns * *n as f64)
                .sum::<f64>()
                / ops as f64
        } else {
            0.0
        },
    })
}

/// Per primary OSD and op kind: the clients' ops add up, means are weighted
/// by ops (exact), and the per-OSD histograms are added so the p99 is that of
/// every client's ops on that OSD. A client row without a histogram (a result
/// of an older cephbench) leaves only the highest client's p99 for that row:
/// the returned flag says so. The OSDs' own counters cover the whole cluster:
/// the first client's are kept. Each OSD's CPU is the measurement of the
/// client on its host (the first that has one).
fn merge_osds(results: &[(&str, &[OsdReport])]) -> Result<(Vec<OsdReport>, bool), GroupError> {
    let mut out: Vec<OsdReport> = Vec::new();
    // (osd index, row index) -> (merged histogram, None once a row lacks
    // one; how many clients' rows it merges).
    type Merged = (Option<Histogram<u64>>, usize);
    let mut hists: BTreeMap<(usize, usize), Merged> = BTreeMap::new();
    for (agent, osds) in results {
        for o in *osds {
            let idx = match out.iter().position(|x| x.osd == o.osd) {
                Some(i) => i,
                None => {
                    out.push(OsdReport {
                        osd: o.osd,
                        client: Vec::new(),
                        counters: o.counters.clone(),
                        timeline: o.timeline.clone(),
                        mgr_perf: o.mgr_perf.clone(),
                        device: o.device.clone(),
                        replica_sets: o.replica_sets.clone(),
                        cpu: o.cpu.clone(),
                    });
                    out.len() - 1
                }
            };
            let m = &mut out[idx];
            // Each agent measures the OSDs of its own host: keep the one
            // that measured this OSD (figured again over every client's ops).
            let measured =
                |c: &Option<crate::result::OsdCpu>| c.as_ref().is_some_and(|c| c.cpu_s.is_some());
            if !measured(&m.cpu) && measured(&o.cpu) {
                m.cpu.clone_from(&o.cpu);
            }
            for row in &o.client {
                let h = row
                    .histogram
                    .as_deref()
                    .map(|t| {
                        decode_histogram(t).map_err(|e| GroupError::BadResult {
                            agent: agent.to_string(),
                            why: format!("osd.{} {} histogram: {e}", o.osd, row.op),
                        })
                    })
                    .transpose()?;
                let ri = match m.client.iter().position(|x| x.op == row.op) {
                    None => {
                        m.client.push(OsdClientRow {
                            attribution: None,
                            evidence: None,
                            histogram: None,
                            ..row.clone()
                        });
                        hists.insert((idx, m.client.len() - 1), (h, 1));
                        continue;
                    }
                    Some(i) => i,
                };
                let x = &mut m.client[ri];
                let n = x.ops + row.ops;
                if n > 0 {
                    x.mean_ns =
                        (x.mean_ns * x.ops as f64 + row.mean_ns * row.ops as f64) / n as f64;
                }
                x.ops = n;
                x.p99_ns = x.p99_ns.max(row.p99_ns);
                let (slot, merged) = hists.get_mut(&(idx, ri)).expect("inserted with the row");
                *merged += 1;
                match (slot.as_mut(), h) {
                    (Some(acc), Some(h)) => acc.add(&h).map_err(|e| GroupError::BadResult {
                        agent: agent.to_string(),
                        why: format!("osd.{} {} histogram cannot be added: {e:?}", o.osd, row.op),
                    })?,
                    _ => *slot = None,
                }
            }
        }
    }
    let mut approximate = false;
    for ((oi, ri), (h, merged)) in hists {
        let row = &mut out[oi].client[ri];
        match h {
            // One client's row stays as it was (its p99 is capped by the
            // exact maximum, which the histogram alone does not know).
            h if merged == 1 => row.histogram = h.as_ref().map(encode_histogram),
            Some(h) if h.len() == row.ops => {
                row.p99_ns = if h.is_empty() {
                    0
                } else {
                    h.value_at_quantile(0.99)
                };
                row.histogram = Some(encode_histogram(&h));
            }
            _ => approximate = true,
        }
    }
    out.sort_by_key(|o| o.osd);
    Ok((out, approximate))
}

/// Merges the results of several clients (agent id, result) into one.
/// Jobs are matched by position and must have the same names.
pub fn merge_results(results: &[(&str, &BenchResult)]) -> Result<BenchResult, GroupError> {
    let (_, first) = *results.first().ok_or_else(|| GroupError::NoResults {
        group: String::new(),
        why: "nothing to merge".into(),
    })?;
    let mut jobs = Vec::new();
    for (i, j) in first.jobs.iter().enumerate() {
        let mut same = Vec::new();
        for (a, r) in results {
            let other = r.jobs.get(i).filter(|o| o.name == j.name && o.op == j.op);
            let other = other.ok_or_else(|| GroupError::BadResult {
                agent: a.to_string(),
                why: format!("job {i} is not '{}' like the other clients'", j.name),
            })?;
            same.push((*a, other));
        }
        jobs.push(merge_job(&same)?);
    }
    let mut hosts: Vec<&str> = results
        .iter()
        .map(|(_, r)| r.cluster.client_host.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut cluster = first.cluster.clone();
    cluster.client_host = hosts.join(",");
    let mut warnings = Vec::new();
    for (a, r) in results {
        warnings.extend(r.warnings.iter().map(|w| format!("[{a}] {w}")));
    }
    let per_client: Vec<(&str, &[OsdReport])> = results
        .iter()
        .map(|(a, r)| (*a, r.osds.as_slice()))
        .collect();
    let (osds, approximate) = merge_osds(&per_client)?;
    if approximate && results.len() > 1 {
        warnings.push(
            "some per-OSD client p99s are the highest client's (a client's result carries no per-OSD histogram); counts and means are exact"
                .into(),
        );
    }
    // The slowest ops of every client, slowest first.
    let mut tail: Vec<_> = results
        .iter()
        .flat_map(|(_, r)| r.tail.iter().cloned())
        .collect();
    tail.sort_by_key(|t| std::cmp::Reverse(t.latency_ns));
    let mut merged = BenchResult {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        cluster,
        started_unix: results
            .iter()
            .map(|(_, r)| r.started_unix)
            .min()
            .unwrap_or(0),
        workload: first.workload.clone(),
        latency_kind: first.latency_kind.clone(),
        latency_definition: first.latency_definition.clone(),
        jobs,
        osds,
        placement: first.placement.clone(),
        network: first.network.clone(),
        pool: first.pool.clone(),
        tail,
        interrupted: results.iter().any(|(_, r)| r.interrupted),
        warnings,
        findings: Vec::new(),
        clients: None,
        cluster_state: first.cluster_state.clone(),
        read_cache: first.read_cache,
        disruption: None,
        pace: None,
    };
    // The split on the merged figures: every client ran in the same window,
    // and each OSD's counters count every client's ops.
    crate::explain::attribute(&mut merged);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatencyRecorder;

    fn job(rec: &LatencyRecorder, secs: f64) -> JobReport {
        JobReport {
            client: None,
            per_second: None,
            end_flush: None,
            name: "write".into(),
            op: "write".into(),
            ops: rec.count(),
            errors: 0,
            bytes: rec.count() * 4096,
            elapsed_s: secs,
            iops: rec.count() as f64 / secs,
            bytes_per_sec: rec.count() as f64 * 4096.0 / secs,
            latency_ns: rec.summary(),
            stop_reason: "duration".into(),
            verify_mismatches: None,
            short_reads: 0,
            first_error: None,
            errors_by_errno: BTreeMap::new(),
            longest_gap_s: 0.1,
            slow_ops: 0,
            slow_op_s: 1.0,
            timeline: vec![],
            histogram: Some(encode_histogram(rec.histogram())),
            attribution: None,
            service_latency_ns: None,
            rate: None,
            changes: None,
            projections: None,
        }
    }

    /// The merged figures equal those of one recorder that saw every value.
    #[test]
    fn merged_equals_recording_everything_once() {
        let mut all = LatencyRecorder::new();
        let mut parts = [
            LatencyRecorder::new(),
            LatencyRecorder::new(),
            LatencyRecorder::new(),
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for i in 0..30_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Each client has its own distribution: percentiles of the
            // union differ from any average of the parts.
            let k = (i % 3) as usize;
            let v =
                300_000 * (k as u64 + 1) + x % 500_000 + if i % 97 == 0 { 9_000_000 } else { 0 };
            parts[k].record(v);
            all.record(v);
        }
        let jobs: Vec<JobReport> = parts.iter().map(|p| job(p, 10.0)).collect();
        let named: Vec<(&str, &JobReport)> = ["a", "b", "c"].into_iter().zip(jobs.iter()).collect();
        let m = merge_job(&named).unwrap();
        let want = all.summary();
        assert_eq!(m.ops, 30_000);
        assert_eq!((m.latency_ns.min, m.latency_ns.max), (want.min, want.max));
        assert_eq!(
            (
                m.latency_ns.p50,
                m.latency_ns.p90,
                m.latency_ns.p99,
                m.latency_ns.p99_9
            ),
            (want.p50, want.p90, want.p99, want.p99_9)
        );
        assert!((m.latency_ns.mean - want.mean).abs() < 1e-6 * want.mean);
        assert!((m.latency_ns.stddev - want.stddev).abs() < 1e-6 * want.stddev);
        assert!((m.iops - 3000.0).abs() < 1e-9);
        let h = decode_histogram(m.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(&h, all.histogram());
    }

    /// Two clients' `client` blocks: depths add up, the refill wait is
    /// weighted by ops; one client without a block leaves none.
    #[test]
    fn client_loads_add_up() {
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        (0..300).for_each(|_| a.record(1_000_000));
        (0..100).for_each(|_| b.record(1_000_000));
        let (mut ja, mut jb) = (job(&a, 1.0), job(&b, 1.0));
        let load = |mean_in_flight, refill_wait_ns| ClientLoad {
            asked_in_flight: 16,
            mean_in_flight,
            refill_wait_ns,
        };
        ja.client = Some(load(15.0, 100.0));
        jb.client = Some(load(10.0, 500.0));
        let m = merge_job(&[("a", &ja), ("b", &jb)]).unwrap();
        let want = ClientLoad {
            asked_in_flight: 32,
            ..load(25.0, 200.0)
        };
        assert_eq!(m.client, Some(want));
        jb.client = None;
        assert_eq!(merge_job(&[("a", &ja), ("b", &jb)]).unwrap().client, None);
    }

    fn osd_row(rec: &LatencyRecorder, hist: bool) -> OsdClientRow {
        let s = rec.summary();
        OsdClientRow {
            op: "write".into(),
            ops: rec.count(),
            mean_ns: s.mean,
            p99_ns: s.p99,
            histogram: hist.then(|| encode_histogram(rec.histogram())),
            attribution: None,
            evidence: None,
        }
    }

    /// Per-OSD rows merge like jobs: ops add up, the mean is exact, the p99
    /// is that of the added histograms; without histograms, a flag says so.
    #[test]
    fn per_osd_rows_merge_their_histograms() {
        let mut all = LatencyRecorder::compact();
        let mut parts = [LatencyRecorder::compact(), LatencyRecorder::compact()];
        for i in 0..5_000u64 {
            // Client 0 is fast, client 1 has the tail: the p99 of the union
            // is neither client's p99.
            let (k, v) = if i % 2 == 0 {
                (0, 1_000_000 + i * 37)
            } else {
                (1, 2_000_000 + (i % 100) * 100_000)
            };
            parts[k].record(v);
            all.record(v);
        }
        let result = |rec: &LatencyRecorder, hist: bool| {
            vec![OsdReport {
                osd: 4,
                client: vec![osd_row(rec, hist)],
                counters: None,
                timeline: Vec::new(),
                mgr_perf: None,
                device: None,
                replica_sets: Vec::new(),
                cpu: None,
            }]
        };
        let (a, b) = (result(&parts[0], true), result(&parts[1], true));
        let (osds, approx) = merge_osds(&[("a", &a[..]), ("b", &b[..])]).unwrap();
        assert!(!approx);
        let row = &osds[0].client[0];
        assert_eq!(row.ops, 5_000);
        assert_eq!(row.p99_ns, all.histogram().value_at_quantile(0.99));
        assert!((row.mean_ns - all.summary().mean).abs() < 1e-6 * row.mean_ns);
        let h = decode_histogram(row.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(&h, all.histogram());
        assert_ne!(
            row.p99_ns,
            parts[0].summary().p99.max(parts[1].summary().p99)
        );
        // A client without per-OSD histograms: the highest p99, flagged.
        let old = result(&parts[1], false);
        let (osds, approx) = merge_osds(&[("a", &a[..]), ("old", &old[..])]).unwrap();
        assert!(approx);
        assert_eq!(osds[0].client[0].p99_ns, parts[1].summary().p99);
        assert!(osds[0].client[0].histogram.is_none());
        // One client: its row as it was.
        let (osds, approx) = merge_osds(&[("a", &a[..])]).unwrap();
        assert!(!approx);
        assert_eq!(osds[0].client[0], a[0].client[0]);
    }

    /// Each agent measures the OSDs of its own host: the merged row keeps
    /// the agent's measurement that has one, and its CPU per client op is
    /// over every client's ops on that OSD.
    #[test]
    fn each_osds_cpu_comes_from_the_agent_on_its_host() {
        let mut rec = LatencyRecorder::compact();
        for i in 0..1_000u64 {
            rec.record(1_000_000 + i);
        }
        let osd = |cpu: crate::result::OsdCpu| OsdReport {
            osd: 1,
            client: vec![osd_row(&rec, true)],
            counters: None,
            timeline: Vec::new(),
            mgr_perf: None,
            device: None,
            replica_sets: Vec::new(),
            cpu: Some(cpu),
        };
        let away = osd(crate::result::OsdCpu {
            host: Some("b".into()),
            not_measured: Some("osd.1 runs on host b, not here; run an agent there".into()),
            ..Default::default()
        });
        let there = osd(crate::result::OsdCpu {
            host: Some("b".into()),
            pid: Some(7),
            cpu_s: Some(0.6),
            window_s: Some(10.0),
            ..Default::default()
        });
        let (a, b) = (vec![away], vec![there]);
        let (osds, _) = merge_osds(&[("on-a", &a[..]), ("on-b", &b[..])]).unwrap();
        let c = osds[0].cpu.as_ref().unwrap();
        assert_eq!((c.pid, c.not_measured.as_deref()), (Some(7), None));
        let mut r = crate::result::test_result("p", Vec::new());
        r.osds = osds;
        crate::explain::cpu::fill(&mut r);
        // 0.6 s over both clients' 2,000 ops on osd.1.
        let c = r.osds[0].cpu.as_ref().unwrap();
        assert!((c.us_per_client_op.unwrap() - 300.0).abs() < 1e-9, "{c:?}");
        // Either order.
        let (osds, _) = merge_osds(&[("on-b", &b[..]), ("on-a", &a[..])]).unwrap();
        assert_eq!(osds[0].cpu.as_ref().unwrap().pid, Some(7));
    }

    /// Open-loop clients: the rate block adds up (each ran its share), the
    /// service time's percentiles are the highest client's (an upper bound).
    #[test]
    fn rate_and_service_time_of_open_loop_clients_merge() {
        use crate::result::{RateReport, ScheduleError};
        let mut recs = [LatencyRecorder::new(), LatencyRecorder::new()];
        for v in 1..=1000u64 {
            recs[0].record(v * 1000);
            recs[1].record(v * 3000);
        }
        let jobs: Vec<JobReport> = recs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut j = job(r, 10.0);
                j.service_latency_ns = Some(r.summary());
                j.rate = Some(RateReport {
                    asked: 100.0,
                    achieved: 100.0 - i as f64 * 10.0,
                    arrival: "uniform".into(),
                    late_ops: 5 * i as u64,
                    scheduled_ops: 1000,
                    max_backlog: 3,
                    final_backlog: i as u64,
                    schedule_error_ns: ScheduleError {
                        p50: 100 + i as u64,
                        p99: 900,
                        max: 2000 * (i as u64 + 1),
                    },
                    kept_up: true,
                });
                j
            })
            .collect();
        let named: Vec<(&str, &JobReport)> = ["a", "b"].into_iter().zip(jobs.iter()).collect();
        let m = merge_job(&named).unwrap();
        let r = m.rate.unwrap();
        assert_eq!((r.asked, r.achieved), (200.0, 190.0));
        assert_eq!(
            (r.late_ops, r.scheduled_ops, r.max_backlog, r.final_backlog),
            (5, 2000, 6, 1)
        );
        assert_eq!(
            (r.schedule_error_ns.p50, r.schedule_error_ns.max),
            (101, 4000)
        );
        assert!(!r.kept_up, "190 of 200 is below 98 %");
        let s = m.service_latency_ns.unwrap();
        assert_eq!(s.p99, recs[1].summary().p99, "the higher client's");
        assert_eq!((s.min, s.max), (1000, 3_000_000));
        assert!((s.mean - 1_001_000.0).abs() < 1.0, "{}", s.mean);
        // A client without the block (a closed-loop result) drops it.
        let mut closed = jobs[1].clone();
        closed.rate = None;
        closed.service_latency_ns = None;
        let m = merge_job(&[("a", &jobs[0]), ("b", &closed)]).unwrap();
        assert!(m.rate.is_none() && m.service_latency_ns.is_none());
    }
}
