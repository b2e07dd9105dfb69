//! The result document: what a run measured, self-describing enough to be
//! compared and re-rendered later. `--format json` prints it as is; its
//! JSON Schema is `schema/result.schema.json`.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use crate::progress::Sample;
use crate::stats::LatencySummary;
pub mod changes;
pub mod cluster;
pub mod counters;
pub mod disruption;
pub mod network;
pub mod ops;
pub mod projection;

use counters::OsdCounters;
use network::{ClientRtt, HeartbeatRtt};

/// Version of this document's layout.
pub const SCHEMA_VERSION: u32 = 1;

/// One benchmark invocation's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool that made it.
    pub tool: ToolInfo,
    /// Where it ran.
    pub cluster: ClusterInfo,
    /// When the run started, seconds since the epoch.
    pub started_unix: u64,
    /// What was run.
    pub workload: Workload,
    /// Which latency the figures are: always `"completion"` here.
    pub latency_kind: String,
    /// How that latency is measured, in words.
    pub latency_definition: String,
    /// One entry per job (for mixes, one for reads and one for writes).
    pub jobs: Vec<JobReport>,
    /// Per primary OSD: the client's view of its ops and the OSD's own
    /// counters over the run (empty when the probes were off or not allowed).
    pub osds: Vec<OsdReport>,
    /// Where the pool's PGs were during the run, if probed.
    pub placement: Option<PlacementInfo>,
    /// Round trips to the OSDs during the run, if probed.
    pub network: Option<NetworkReport>,
    /// The client's slowest ops, joined to their primary OSD's own record
    /// of them (empty without OSD access).
    #[serde(default)]
    pub tail: Vec<TailOp>,
    /// Whether the run was cut short by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Things the reader must know to trust the numbers.
    pub warnings: Vec<String>,
    /// What the evidence says about the drives (e.g. an OSD whose device
    /// flushes make every write wait), each naming its evidence; made only
    /// when the counters were read (`explain::attribution::findings`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// The pool's settings at the start of the run, if they could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolSettings>,
    /// For group runs (`--group`): the clients whose results were merged
    /// into the figures above, one row each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<GroupReport>,
    /// Whether the cluster was quiet: health, PGs, scrubs, recovery and the
    /// osdmap looked at before, during and after the job (null: not looked
    /// at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_state: Option<cluster::ClusterState>,
    /// Reads only: `cold` when the OSDs' caches were dropped just before the
    /// job (`--drop-caches`), `warm` when not (null: no read job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_cache: Option<ReadCache>,
    /// `--disrupt`: what was done to an OSD during the job, and the
    /// client's figures phase by phase (null: nothing was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption: Option<disruption::Disruption>,
    /// How the path's own latency depends on the pace of ops, probed after
    /// a write job (null: not probed): the what-if projections scale what
    /// they keep as measured with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<PaceProbe>,
}

/// 4 KiB reads of one object of the tool's own, after the job, in sets: back
/// to back, then one read every `gap` for gaps from the job's time between
/// ops down to a sixteenth of it. What a read takes at one pace against
/// another is what the path's threads gain or lose waking from idle, drive
/// flushes aside (a read flushes nothing); the projections take it as the
/// pace's share of what they keep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaceProbe {
    /// One set each, the fastest pace first (back to back: its gap is its
    /// own mean latency, the time from one read's start to the next's).
    pub sets: Vec<PaceSet>,
}

/// One set of the pace probe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PaceSet {
    /// Time from one read's start to the next's, ns.
    pub gap_ns: f64,
    /// Reads.
    pub reads: u32,
    /// Their mean latency without the slowest tenth, ns.
    pub mean_ns: f64,
}

impl PaceProbe {
    /// A read's latency at `gap_ns` between reads' starts: the sets'
    /// figures, linear in the gap's logarithm between them, the nearest
    /// set's beyond them; `None` without a set.
    pub fn read_ns_at(&self, gap_ns: f64) -> Option<f64> {
        let mut sets: Vec<PaceSet> = self
            .sets
            .iter()
            .copied()
            .filter(|s| s.gap_ns > 0.0 && s.mean_ns.is_finite())
            .collect();
        sets.sort_by(|a, b| a.gap_ns.total_cmp(&b.gap_ns));
        let (first, last) = (sets.first()?, sets.last()?);
        if gap_ns <= first.gap_ns {
            return Some(first.mean_ns);
        }
        if gap_ns >= last.gap_ns {
            return Some(last.mean_ns);
        }
        let i = sets.iter().position(|s| s.gap_ns >= gap_ns)?;
        let (lo, hi) = (sets[i - 1], sets[i]);
        let t = (gap_ns / lo.gap_ns).ln() / (hi.gap_ns / lo.gap_ns).ln();
        Some(lo.mean_ns + t * (hi.mean_ns - lo.mean_ns))
    }
}

/// Whether a read job found the OSDs' caches empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadCache {
    /// Every OSD of the pool dropped its caches (`cache drop`) just before the job.
    Cold,
    /// The caches were left as they were.
    Warm,
}

impl ReadCache {
    /// `cold` or `warm`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadCache::Cold => "cold",
            ReadCache::Warm => "warm",
        }
    }
}

/// What went wrong with a run's data: failed ops, short reads and
/// mismatches, summed over its jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataErrors {
    /// Failed ops.
    pub failed: u64,
    /// Reads that returned fewer bytes than asked.
    pub short_reads: u64,
    /// Reads whose data differed from what was written.
    pub mismatches: u64,
}

impl DataErrors {
    /// Whether there were none.
    pub fn is_clean(&self) -> bool {
        *self == DataErrors::default()
    }

    /// Adds another run's.
    pub fn add(&mut self, o: DataErrors) {
        self.failed += o.failed;
        self.short_reads += o.short_reads;
        self.mismatches += o.mismatches;
    }
}

impl std::fmt::Display for DataErrors {
    /// The non-zero counts, e.g. "2 failed ops, 300 short reads" ("no
    /// errors" when clean).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = [
            (self.failed, "failed op", "failed ops"),
            (self.short_reads, "short read", "short reads"),
            (self.mismatches, "mismatch", "mismatches"),
        ]
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
        .collect();
        if parts.is_empty() {
            f.write_str("no errors")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

impl BenchResult {
    /// The run's failed ops, short reads and mismatches. A failed op is
    /// counted once even when a mix reports it on its read and write job.
    pub fn data_errors(&self) -> DataErrors {
        DataErrors {
            failed: self.jobs.iter().map(|j| j.errors).max().unwrap_or(0),
            short_reads: self.jobs.iter().map(|j| j.short_reads).sum(),
            mismatches: self.jobs.iter().filter_map(|j| j.verify_mismatches).sum(),
        }
    }
}

/// A pool's settings, as the mons report them: what makes two results
/// comparable (or not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolSettings {
    /// Pool name.
    pub name: String,
    /// Pool id.
    pub id: i64,
    /// Replicas (`size`).
    pub size: u32,
    /// `min_size`.
    pub min_size: u32,
    /// `pg_num`.
    pub pg_num: u32,
    /// The CRUSH rule's name.
    pub crush_rule: String,
    /// Device classes of the OSDs the rule can choose from (sorted).
    pub device_classes: Vec<String>,
    /// The OSDs the rule can choose from (sorted).
    pub osds: Vec<i32>,
    /// `osd_memory_target` of each of those OSDs as the running daemon uses
    /// it (see [`OsdMemory::source`]), bytes; empty if it could not be read.
    #[serde(default)]
    pub osd_memory_target: Vec<OsdMemory>,
    /// The RAM those OSDs are configured to hold: the sum of their
    /// `osd_memory_target`, bytes (null if it could not be read).
    #[serde(default)]
    pub memory_held_bytes: Option<u64>,
    /// The RAM those OSDs hold, measured: the sum of their processes'
    /// resident sets when every one of them runs on this host (null
    /// otherwise; see `telemetry::osdmem`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_measured_bytes: Option<u64>,
    /// Why `memory_measured_bytes` is null although the OSDs' targets were
    /// read: which OSDs were not measured and why (another host, another
    /// user's process without root, ...), as the reports say it. Null when
    /// every OSD was measured, or no measurement was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_not_measured: Option<String>,
    /// An erasure-coded pool's layout (null: replicated; `size` is then
    /// its k + m shards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erasure: Option<ErasureLayout>,
    /// What each of those OSDs ran with (release, kernel, op scheduler,
    /// mClock profile and capacity), as far as it could be read; empty in
    /// results made before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub osd_settings: Vec<OsdSettings>,
    /// `pg_autoscale_mode` (`on`, `warn`, `off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale_mode: Option<String>,
    /// The flags that were set: the pool's own (`noscrub`, `nodeep-scrub`)
    /// and the cluster's OSD flags (`osd dump`: `noout`, `noscrub`, …; the
    /// ones every cluster has, `sortbitwise` and the like, left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The mgr's balancer: its mode and whether it is active (`upmap,
    /// active`); null where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balancer: Option<String>,
}

/// What an OSD ran with, as far as it could be read (each field `None`
/// where not).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsdSettings {
    /// The OSD id.
    pub osd: i32,
    /// Its release (`pacific`, ...).
    pub release: Option<String>,
    /// Its version (`16.2.15`).
    pub version: Option<String>,
    /// Its host's kernel.
    pub kernel: Option<String>,
    /// Whether its data device is rotational.
    pub rotational: Option<bool>,
    /// Its objectstore (`bluestore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objectstore: Option<String>,
    /// BlueStore's allocation unit, bytes, as the OSD was made with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_alloc_size: Option<u64>,
    /// `osd_op_queue`: `wpq` or `mclock_scheduler`.
    pub op_queue: Option<String>,
    /// `osd_mclock_profile`.
    pub mclock_profile: Option<String>,
    /// `osd_mclock_max_capacity_iops_hdd|ssd` (its kind of drive): the IOPS
    /// mClock takes the OSD to be able to do.
    pub mclock_capacity_iops: Option<f64>,
}

impl OsdSettings {
    /// The OSDs of `settings` grouped by what `of` reads of each (an OSD it
    /// reads nothing of is left out), in value order.
    pub fn grouped(
        settings: &[OsdSettings],
        of: impl Fn(&OsdSettings) -> Option<String>,
    ) -> Vec<(String, Vec<i32>)> {
        let mut out: Vec<(String, Vec<i32>)> = Vec::new();
        for s in settings {
            let Some(v) = of(s) else { continue };
            match out.iter_mut().find(|(x, _)| *x == v) {
                Some((_, osds)) => osds.push(s.osd),
                None => out.push((v, vec![s.osd])),
            }
        }
        out.sort();
        out
    }
}

/// An erasure-coded pool's layout: its profile as the mons hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErasureLayout {
    /// The erasure-code profile's name.
    pub profile: String,
    /// Data chunks.
    pub k: u32,
    /// Coding chunks.
    pub m: u32,
    /// The plugin, e.g. `jerasure`, `isa`.
    pub plugin: String,
    /// The plugin's technique, e.g. `reed_sol_van` (null where it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technique: Option<String>,
    /// Bytes of each data chunk in a stripe (the pool's `stripe_width` / k).
    pub stripe_unit: u64,
    /// CRUSH failure domain (`crush-failure-domain`, e.g. `host`, `osd`).
    pub failure_domain: String,
    /// Whether partial overwrites are allowed (`allow_ec_overwrites`; RBD
    /// and CephFS data need it).
    pub allow_ec_overwrites: bool,
}

impl PoolSettings {
    /// Usable over raw capacity: k / (k + m) erasure-coded, 1 / size
    /// replicated.
    pub fn usable_fraction(&self) -> f64 {
        match &self.erasure {
            Some(e) => f64::from(e.k) / f64::from(e.k + e.m),
            None => 1.0 / f64::from(self.size.max(1)),
        }
    }

    /// The pool in one line: its layout, pg_num, CRUSH rule, the device
    /// classes and how many OSDs the rule can choose from.
    pub fn summary(&self) -> String {
        format!(
            "{}; {} PGs, rule {} over {} OSDs (class {})",
            self.layout(),
            self.pg_num,
            self.crush_rule,
            self.osds.len(),
            if self.device_classes.is_empty() {
                "-".to_string()
            } else {
                self.device_classes.join("+")
            },
        )
    }

    /// The layout in words: `size 3, min_size 2` or `erasure 2+1 (jerasure
    /// reed_sol_van, failure domain osd, stripe unit 4 KiB, EC overwrites
    /// off), min_size 2`, with the usable fraction.
    pub fn layout(&self) -> String {
        let usable = format!("usable {:.0} %", self.usable_fraction() * 100.0);
        match &self.erasure {
            None => format!("size {}, min_size {}, {usable}", self.size, self.min_size),
            Some(e) => format!(
                "erasure {}+{} ({}{}, failure domain {}, stripe unit {}, EC overwrites {}), \
                 min_size {}, {usable}",
                e.k,
                e.m,
                e.plugin,
                e.technique
                    .as_ref()
                    .map(|t| format!(" {t}"))
                    .unwrap_or_default(),
                e.failure_domain,
                crate::units::fmt_bytes(e.stripe_unit),
                if e.allow_ec_overwrites { "on" } else { "off" },
                self.min_size
            ),
        }
    }
}

/// The RAM one OSD of a pool holds (the cost figure: IOPS per GiB of one OSD's RAM): the pool's
/// OSDs' total over their count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RamPerOsd {
    /// The OSDs' total, bytes.
    pub total: u64,
    /// One OSD's share, bytes.
    pub per_osd: f64,
    /// Whether the total is their resident sets, measured here (else the sum
    /// of their `osd_memory_target`).
    pub measured: bool,
}

impl PoolSettings {
    /// The RAM one OSD of the pool holds: measured when every OSD of the pool
    /// runs on this host, else as configured (`osd_memory_target`); `None`
    /// when neither is known.
    pub fn ram_per_osd(&self) -> Option<RamPerOsd> {
        match self.memory_measured_bytes {
            Some(m) => self.share(m, true),
            None => self.configured_ram_per_osd(),
        }
    }

    /// The RAM one OSD of the pool is configured to hold (the sum of their
    /// `osd_memory_target` over their count), measured or not.
    pub fn configured_ram_per_osd(&self) -> Option<RamPerOsd> {
        self.share(self.memory_held_bytes?, false)
    }

    fn share(&self, total: u64, measured: bool) -> Option<RamPerOsd> {
        let n = self.osd_memory_target.len();
        (n > 0 && total > 0).then(|| RamPerOsd {
            total,
            per_osd: total as f64 / n as f64,
            measured,
        })
    }
}

/// One OSD's configured memory target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdMemory {
    /// The OSD id.
    pub osd: i32,
    /// Its `osd_memory_target`, bytes.
    pub bytes: u64,
    /// Its process's resident set (`VmRSS`) at the end of the probe, bytes,
    /// when the OSD runs on this host; null otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// Where `bytes` was read: [`OsdMemory::DAEMON`] (the value the running
    /// OSD uses, its ceph.conf included) or [`OsdMemory::MON_DATABASE`]
    /// (the mons' configuration database, when the daemon could not be
    /// asked: a ceph.conf setting on the OSD's host is then not seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl OsdMemory {
    /// `source` of a value read from the running daemon.
    pub const DAEMON: &'static str = "daemon";
    /// `source` of a value read from the mons' configuration database.
    pub const MON_DATABASE: &'static str = "mon config database";
}

/// The clients of a coordinated multi-client run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    /// The group's name.
    pub group: String,
    /// How many clients were asked for.
    pub requested: u64,
    /// The common start, on the controller's clock, ns since the epoch.
    pub planned_start_unix_ns: u64,
    /// Latest minus earliest measured start of the clients that reported,
    /// on the controller's clock (clock offsets removed), ms.
    pub start_spread_ms: Option<f64>,
    /// One row per client, including the ones that delivered nothing.
    pub clients: Vec<ClientReport>,
}

/// One client of a group run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientReport {
    /// The agent's id (`--agent-id`, default `<host>-<pid>`).
    pub agent: String,
    /// The agent's host.
    pub host: String,
    /// The agent's IP address as its RADOS client knows it (tells apart
    /// agents on hosts of one name, e.g. network namespaces of one machine).
    #[serde(default)]
    pub addr: Option<String>,
    /// `ok`, `missing` (no answer: died or stalled) or `failed` (it answered with an error).
    pub status: String,
    /// Why it failed or is missing.
    pub error: Option<String>,
    /// The run name (object names) it used.
    pub run_name: String,
    /// Measured ops (all its jobs).
    pub ops: u64,
    /// Its ops per second.
    pub iops: f64,
    /// Its mean completion latency, ns.
    pub mean_ns: f64,
    /// Its 99th percentile (the highest of its jobs'), ns.
    pub p99_ns: u64,
    /// Its clock minus the controller's, ms (from notify round trips).
    pub clock_offset_ms: f64,
    /// The round trip of the ping the offset came from, ms: the offset's
    /// error is at most half of it.
    pub clock_rtt_ms: f64,
    /// Its measured start minus the planned common start, on the
    /// controller's clock, ms.
    pub start_delta_ms: Option<f64>,
}

impl ClientReport {
    /// `host (address)`, or the host alone when the address is unknown.
    pub fn host_and_addr(&self) -> String {
        host_and_addr(&self.host, self.addr.as_deref())
    }
}

/// `host (address)`, or `host` without an address.
pub fn host_and_addr(host: &str, addr: Option<&str>) -> String {
    match addr {
        Some(a) => format!("{host} ({a})"),
        None => host.to_string(),
    }
}

/// One OSD, as the client saw the ops it was primary for and as its own
/// perf counters saw the run window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdReport {
    /// The OSD id.
    pub osd: i32,
    /// Client-side completion latency of the ops this OSD was primary for, per op kind.
    pub client: Vec<OsdClientRow>,
    /// The OSD's counters over the window (null if they could not be read).
    pub counters: Option<OsdCounters>,
    /// The same counters per interval (`--counter-interval`), the last
    /// interval ending with the window; empty when not sampled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<counters::CounterSample>,
    /// The OSD's row of `ceph osd perf` (mgr) read right after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mgr_perf: Option<counters::MgrOsdPerf>,
    /// What the OSD stores on (`ceph osd metadata`, class from `ceph osd
    /// tree`), read before the run; null if it could not be read.
    #[serde(default)]
    pub device: Option<crate::device::DeviceInfo>,
    /// The replicas of the PGs this OSD is primary for in the run's pool, as
    /// placed at the start: one row per distinct replica set (empty for
    /// size-1 pools, OSDs that are no primary, and results made before it
    /// was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica_sets: Vec<ReplicaSet>,
    /// The CPU its process used (read from `/proc` where it runs on the
    /// measuring host; a group run's agents measure their own hosts'), or
    /// why it was not measured; absent in results made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<OsdCpu>,
}

pub use crate::placement::ReplicaSet;

/// One OSD process's CPU over a run (`telemetry::osdcpu` reads it,
/// `explain::cpu` makes the figures and the verdict). Two windows: the
/// measured one (the ramp's end to the job's end), over which the client's
/// per-OSD ops are counted, and the counters' (the perf dumps before and
/// after the job), over which the OSD's own op counts are.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OsdCpu {
    /// The host it runs on (`osd metadata`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why it was not measured (then every figure is null), e.g. `osd.2
    /// runs on host b, not here; run an agent there`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// Its process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// `utime + stime` of the process over the measured window, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// The measured window's length, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// Its start on this host's clock, seconds since the epoch (to line it
    /// up with other tools' records: pidstat, sar, a metrics store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_unix: Option<f64>,
    /// `utime + stime` over the counters' window, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_cpu_s: Option<f64>,
    /// The CPUs it may run on (its affinity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_cpus: Option<u32>,
    /// Its cgroup's CPU quota, cores (null: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_cores: Option<f64>,
    /// How busy the CPUs it may run on were over the measured window, with
    /// every process on them: cores (0 to `allowed_cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_cpus_busy: Option<f64>,
    /// Figures (`explain::cpu::fill`, from the above and the rows): cores
    /// busy over the measured window (`cpu_s / window_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_busy: Option<f64>,
    /// CPU µs per client op this run sent it as primary (measured window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_client_op: Option<f64>,
    /// CPU µs per op of its own counters (`op_w + op_r + subop_w`: client
    /// ops as primary and replica writes, every client's; counters' window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_osd_op: Option<f64>,
    /// `true` when its CPU, not its drive, set the pace (`explain::cpu`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_bound: bool,
}

/// How [`OsdCpu::not_measured`] ends for an OSD on another host
/// (`explain::cpu` names those OSDs together, host by host).
pub const AGENT_THERE: &str = "run an agent there";

/// Client-side figures of one op kind on one primary OSD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsdClientRow {
    /// `read`, `write` or `flush`.
    pub op: String,
    /// Measured ops.
    pub ops: u64,
    /// Mean completion latency, ns.
    pub mean_ns: f64,
    /// 99th percentile (2 significant digits), ns.
    pub p99_ns: u64,
    /// These ops' completion latencies (ns) as an HDR histogram (2
    /// significant digits), so group runs merge per-OSD percentiles exactly:
    /// encoded like [`JobReport::histogram`] (`stats::decode_histogram`).
    #[serde(default)]
    pub histogram: Option<String>,
    /// Where this OSD's mean went, if the counters allow saying.
    #[serde(default)]
    pub attribution: Option<Attribution>,
    /// `--op-history`: the same ops' time on this OSD from its own records
    /// of each op (the split then uses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<ops::OpEvidence>,
}

/// One of the client's slowest ops and where its time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailOp {
    /// `read` or `write`.
    pub op: String,
    /// The RADOS object.
    pub object: String,
    /// Byte offset in the object.
    pub offset: u64,
    /// The client's completion latency, ns.
    pub latency_ns: u64,
    /// When the client submitted it, seconds since the epoch.
    pub submitted_unix: f64,
    /// The primary OSD's record of it: null when the OSD no longer held one
    /// (it keeps its slowest `osd_op_history_size` ops of the last
    /// `osd_op_history_duration` seconds).
    pub osd: Option<ops::OsdSplit>,
    /// Client latency − the OSD's receive → reply time: both directions of
    /// the public network and the client's own time.
    pub outside_osd_ns: Option<f64>,
}

/// Where a client-observed mean latency went. The shares, `unattributed`
/// included, add up to `mean_ns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// The client-observed mean completion latency the shares split, ns.
    pub mean_ns: f64,
    /// The shares, in path order (client, network, OSD, cluster network,
    /// replica), then
    /// `unattributed`.
    pub shares: Vec<Share>,
    /// What each share rests on and what could not be measured.
    pub notes: Vec<String>,
}

/// One part of an [`Attribution`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// Which part of the path.
    pub part: Part,
    /// Its share of the mean, ns (may be negative for `unattributed` when the
    /// measured parts overlap; never hidden).
    pub ns: f64,
}

/// The parts of an op's path a share can belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The client: librados/librbd, its messenger threads, this process.
    Client,
    /// The public network: the client↔primary round trip plus payload transfer.
    PublicNetwork,
    /// Waiting in the primary OSD's queue (op latency − process latency).
    OsdQueue,
    /// The primary's own work and local commit, but for its device flush.
    OsdLocal,
    /// The primary's objectstore waiting for its device to make the op's
    /// transaction durable: BlueStore's kv queue and kv sync round.
    DeviceFlush,
    /// The primary↔replica round trip on the cluster (back) network, as far
    /// as the primary waited for it: the primary's wait after its own prepare
    /// minus the slowest replica's own receive → commit time (`subop_w`) —
    /// the wire both ways plus both sides' messengers (see
    /// `explain::attribution`).
    ClusterNetwork,
    /// The rest of the OSDs' round trip for the repop and its reply, beyond
    /// what the back network itself took (this host's fastest ICMP echo to
    /// the OSDs' cluster addresses): both OSDs' messenger threads, waiting
    /// for a core or busy (and, from the counters, the primary's commit
    /// callback waiting to run). Only where that echo was measured; else it
    /// stays in `cluster_network`.
    Messengers,
    /// The rest of the wait for the replicas: how much longer the slowest
    /// replica took from receiving the repop to its commit (`subop_w`: its
    /// queue, its objectstore, its device flush) than the primary's own
    /// commit.
    Replica,
    /// The whole wait for the replicas, not split into `cluster_network` and
    /// `replica`: results made before the split, or when the replicas'
    /// counters could not be read.
    Replication,
    /// What the measurements do not explain.
    Unattributed,
}

impl Part {
    /// Every part, in report order.
    pub const ALL: [Part; 10] = [
        Part::Client,
        Part::PublicNetwork,
        Part::OsdQueue,
        Part::OsdLocal,
        Part::DeviceFlush,
        Part::ClusterNetwork,
        Part::Messengers,
        Part::Replica,
        Part::Replication,
        Part::Unattributed,
    ];

    /// Name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Part::Client => "client",
            Part::PublicNetwork => "public network",
            Part::OsdQueue => "OSD queue",
            Part::OsdLocal => "OSD local",
            Part::DeviceFlush => "device flush",
            Part::ClusterNetwork => "cluster network",
            Part::Messengers => "OSD messengers",
            Part::Replica => "replica",
            Part::Replication => "replication",
            Part::Unattributed => "unattributed",
        }
    }
}

/// Round trips measured during the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkReport {
    /// The client's own RTT to each serving OSD's public address.
    pub client_rtt: Vec<ClientRtt>,
    /// This host's RTT to each serving OSD's cluster (back) address, where
    /// it reaches it (a host on the cluster network): the back network's
    /// own round trip, kernel to kernel, that the split's cluster-network
    /// share is held to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub back_rtt: Vec<ClientRtt>,
    /// OSD↔OSD heartbeat RTTs on the front and back networks, as the OSDs
    /// report them (empty until an OSD has been up for a minute).
    pub heartbeat: Vec<HeartbeatRtt>,
}

/// The pool's placement as probed at the start of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementInfo {
    /// Pool id.
    pub pool_id: i64,
    /// pg_num.
    pub pg_num: u32,
    /// osdmap epoch.
    pub epoch: u64,
    /// Copies per object: the longest acting set (0: unknown).
    #[serde(default)]
    pub size: u32,
    /// Re-reads of the placement during the run (the osdmap epoch changed
    /// and PGs moved); pool id, pg_num and epoch above are the start's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refreshes: Vec<crate::placement::PlacementRefresh>,
}

/// Tool identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `"cephbench"`.
    pub name: String,
    /// The crate version.
    pub version: String,
}

/// The cluster and client the run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterInfo {
    /// The cluster's fsid.
    pub fsid: String,
    /// The monitors' `ceph version` string, if readable.
    pub ceph_version: Option<String>,
    /// The client library version (`major.minor.extra`).
    pub librados_version: String,
    /// The client's host name.
    pub client_host: String,
    /// The entity the client authenticated as (never the key).
    pub entity: String,
    /// The client host's kernel (`/proc/sys/kernel/osrelease`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_kernel: Option<String>,
    /// The client host's CPU frequency governor (`cpu0`'s
    /// `scaling_governor`; null where the kernel exposes none, as in most
    /// VMs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_governor: Option<String>,
}

/// The workload's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Workload {
    /// `cephbench rados ...`.
    Rados(RadosWorkload),
    /// `cephbench rbd ...`.
    Rbd(RbdWorkload),
}

/// Parameters of an RBD job (fio's names where fio has one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RbdWorkload {
    /// The pool (with a data pool: the image's metadata only).
    pub pool: String,
    /// The pool holding the image's data objects (`--data-pool`, or an
    /// existing image's), where its I/O and capacity go: `pool` above then
    /// holds its metadata only, and the result's `pool` settings, placement
    /// and per-OSD rows are the data pool's. Null: the data is in `pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// The image.
    pub image: String,
    /// Whether cephbench created (and removed) the image.
    pub image_created: bool,
    /// Image size, bytes.
    pub image_size: u64,
    /// Bytes per RADOS object of the image.
    pub object_size: u64,
    /// Image feature bits.
    pub features: u64,
    /// Bytes of the image the jobs touch (from offset 0).
    pub test_area: u64,
    /// fio's `rw`.
    pub rw: String,
    /// Percentage of reads in mixes.
    pub rwmix_read: u8,
    /// Bytes per op.
    pub bs: u64,
    /// Ops in flight per job.
    pub iodepth: u64,
    /// Parallel jobs, each with its own image handle and offset range.
    pub numjobs: u64,
    /// Requested measured duration, seconds.
    pub duration_s: Option<f64>,
    /// Byte limit per job.
    pub io_total: Option<u64>,
    /// Ramp-up excluded from the figures, seconds.
    pub ramp_s: f64,
    /// A flush after every N writes.
    pub fsync_every: Option<u64>,
    /// Whether librbd's client cache was on (off: every write is acknowledged by the OSDs).
    pub rbd_cache: bool,
    /// Random offsets: each block once per pass (true, fio's default random
    /// map) or uniform with repeats (false, `--norandommap`); null for
    /// sequential jobs and results from before the choice existed (uniform).
    #[serde(default)]
    pub random_map: Option<bool>,
    /// `--end-flush`: the run ended with an image flush, and the write job
    /// reports its rate through it (`jobs[].end_flush`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_flush: bool,
    /// Whether the test area was written once before the jobs.
    pub preconditioned: bool,
    /// The preconditioning pass, if any.
    pub precondition: Option<Precondition>,
}

/// The preconditioning pass: the test area written once, sequentially.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// Bytes written.
    pub bytes: u64,
    /// Bytes per write.
    pub block_size: u64,
    /// How long it took, seconds.
    pub elapsed_s: f64,
}

/// Parameters of a RADOS job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RadosWorkload {
    /// `write`, `seq` or `rand`.
    pub mode: String,
    /// The pool.
    pub pool: String,
    /// Bytes per op.
    pub block_size: u64,
    /// Bytes per object.
    pub object_size: u64,
    /// Ops in flight.
    pub concurrent_ios: u64,
    /// Requested measured duration, seconds (null: bounded by ops only).
    pub duration_s: Option<f64>,
    /// Ramp-up excluded from the figures, seconds.
    pub ramp_s: f64,
    /// Op limit, if any.
    pub max_ops: Option<u64>,
    /// The run name (object names are `cephbench_data.<run>.<n>`).
    pub run_name: String,
    /// The RADOS namespace the run's objects live in ("" or absent: the default).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Where writes put their payload when not object data alone, e.g.
    /// `omap`, `object+xattr` (`--write-omap/--write-xattr`); each op carries
    /// the block once per destination, and `bytes` counts them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_to: Option<String>,
    /// How reads were checked: `none`, `stamp` (each block's op stamp and
    /// seed-dependent tail; the default) or `full` (every byte). Older
    /// results say `true` (full) or `false`.
    pub verify: crate::objects::VerifyMode,
    /// Whether the written objects were kept.
    pub no_cleanup: bool,
    /// Whether cephbench created the pool (`--create-pool`); only such a
    /// pool is ever removed by cephbench.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pool_created: bool,
}

/// Results of one job (one op type).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    /// Job name, e.g. `write`.
    pub name: String,
    /// `read` or `write`.
    pub op: String,
    /// Successful measured ops.
    pub ops: u64,
    /// Failed ops.
    pub errors: u64,
    /// Bytes moved by the measured ops.
    pub bytes: u64,
    /// Measurement start → last completion, seconds.
    pub elapsed_s: f64,
    /// ops / elapsed.
    pub iops: f64,
    /// bytes / elapsed.
    pub bytes_per_sec: f64,
    /// Completion latency statistics, nanoseconds.
    pub latency_ns: LatencySummary,
    /// Why the job stopped.
    pub stop_reason: String,
    /// Reads whose content did not match, when verified.
    pub verify_mismatches: Option<u64>,
    /// Reads that returned fewer bytes than asked: failed ops, not in `ops`
    /// (the bytes they did return are in `bytes`).
    #[serde(default)]
    pub short_reads: u64,
    /// The first error, if any: the op that failed, else the first short
    /// read or mismatch.
    pub first_error: Option<String>,
    /// Failed ops by errno (0: no errno), e.g. `{"110": 3}`.
    pub errors_by_errno: std::collections::BTreeMap<String, u64>,
    /// Longest stretch of the measured window with no op completing, seconds
    /// (a stall: an OSD down, peering, a full pool).
    pub longest_gap_s: f64,
    /// Measured ops slower than `slow_op_s`.
    pub slow_ops: u64,
    /// The threshold for `slow_ops`, seconds.
    pub slow_op_s: f64,
    /// Per-second samples (ramp seconds flagged).
    pub timeline: Vec<Sample>,
    /// The job's completion latencies (ns) as an HDR histogram, so results can
    /// be merged and re-analysed: HdrHistogram's V2 compressed encoding, base64
    /// (`stats::decode_histogram`).
    #[serde(default)]
    pub histogram: Option<String>,
    /// Where the mean went, if the probes could say.
    #[serde(default)]
    pub attribution: Option<Attribution>,
    /// Open-loop runs (`--rate`): service time, submit → completion, ns.
    /// `latency_ns` is then the latency from each op's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_latency_ns: Option<LatencySummary>,
    /// Open-loop runs (`--rate`): how well the asked rate was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateReport>,
    /// rados bench's summary over the per-second samples (mean, stddev,
    /// min, max of IOPS and bandwidth); see [`PerSecond::of`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_second: Option<PerSecond>,
    /// `--end-flush` (dd's conv=fsync, rbd bench's end): the image flush
    /// after the last write, and the write rate through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_flush: Option<EndFlush>,
    /// Closed-loop runs: how fully this client kept the asked ops in flight
    /// (the whole job's, all op kinds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientLoad>,
    /// The lasting changes of the per-interval figures, with the OSD
    /// counters and cluster events that moved with them
    /// (`explain::changes`); empty: none; absent: too few intervals to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<changes::Change>>,
    /// What-if projections from the job's split (`explain::whatif`): the
    /// ones with evidence (each moves the mean by 10 % or more); absent:
    /// no split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projections: Option<Vec<projection::Projection>>,
}

/// How fully a closed-loop job kept its ops in flight. A client short of
/// CPU (on a busy OSD or mon host) reaps completions late, so the cluster
/// sees fewer ops in flight than asked; the completion latency leaves that
/// delay out, rados bench's latency puts it in. By Little's law
/// `asked ≈ mean_in_flight + refills per second × refill_wait`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientLoad {
    /// Ops asked to be kept in flight (`-t` / `--io-threads`, summed over
    /// parallel jobs).
    pub asked_in_flight: u64,
    /// Ops the cluster had on average: the measured ops' completion
    /// latencies summed, over the elapsed time.
    pub mean_in_flight: f64,
    /// Mean time a slot stood empty between an op's completion and the
    /// next submission in it (reaping, recording, issuing), ns.
    pub refill_wait_ns: f64,
}

impl ClientLoad {
    /// Below this share of the asked ops in flight the report says the
    /// client held the cluster back.
    pub const SHORT: f64 = 0.9;

    /// The share of the asked ops the cluster had in flight on average.
    pub fn share(&self) -> f64 {
        if self.asked_in_flight == 0 {
            1.0
        } else {
            self.mean_in_flight / self.asked_in_flight as f64
        }
    }

    /// Whether the client kept less than [`ClientLoad::SHORT`] of the asked
    /// ops in flight.
    pub fn fell_short(&self) -> bool {
        self.share() < Self::SHORT
    }
}

/// The flush that ends an `--end-flush` run, and the rate through it: the
/// measured writes' bytes over their time plus the flush's, as `dd
/// conv=fsync` and `rbd bench` report (both count the final flush).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndFlush {
    /// The flush: issued after the last write completed → completed, seconds.
    pub flush_s: f64,
    /// The measured writes' bytes (ramp excluded).
    pub bytes: u64,
    /// The measured writes' time plus the flush, seconds.
    pub elapsed_s: f64,
    /// `bytes / elapsed_s`.
    pub bytes_per_sec: f64,
}

impl EndFlush {
    /// The figure for a job that wrote `bytes` in `writes_s` seconds and then
    /// flushed for `flush_s`.
    pub fn new(bytes: u64, writes_s: f64, flush_s: f64) -> Self {
        let elapsed_s = writes_s + flush_s;
        EndFlush {
            flush_s,
            bytes,
            elapsed_s,
            bytes_per_sec: if elapsed_s > 0.0 {
                bytes as f64 / elapsed_s
            } else {
                0.0
            },
        }
    }
}

/// Mean, sample standard deviation (n − 1, 0 for one sample), min and max
/// of one figure over the per-second samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Mean of the samples.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Lowest sample.
    pub min: f64,
    /// Highest sample.
    pub max: f64,
}

/// The per-second figures `rados bench` prints at the end (Stddev / Max /
/// Min of bandwidth and of IOPS), from a job's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerSecond {
    /// How many samples: the measured window's intervals of at least half the timeline's interval
    /// (ramp and the short last interval left out; seconds without a
    /// completion count, as zeros, as in rados bench).
    pub samples: u64,
    /// Ops per second.
    pub iops: Spread,
    /// MiB per second (rados bench's "MB/sec" is MiB/s).
    pub mib_s: Spread,
}

impl Spread {
    fn of(v: &[f64]) -> Spread {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let stddev = if v.len() < 2 {
            0.0
        } else {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        };
        Spread {
            mean,
            stddev,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

impl PerSecond {
    /// The summary of `timeline`: each sample's ops and bytes divided by its
    /// interval. `None` without a full measured second.
    pub fn of(timeline: &[Sample]) -> Option<PerSecond> {
        let mut prev = 0.0;
        let (mut iops, mut mib) = (Vec::new(), Vec::new());
        let shortest = crate::progress::shortest_counted(timeline);
        for s in timeline {
            let dt = s.t_s - prev;
            prev = s.t_s;
            if s.ramp || dt < shortest {
                continue;
            }
            iops.push(s.ops as f64 / dt);
            mib.push(s.bytes as f64 / f64::from(1u32 << 20) / dt);
        }
        (!iops.is_empty()).then(|| PerSecond {
            samples: iops.len() as u64,
            iops: Spread::of(&iops),
            mib_s: Spread::of(&mib),
        })
    }
}

/// How an open-loop job kept its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateReport {
    /// Ops per second asked for.
    pub asked: f64,
    /// Measured ops per second achieved (ops / elapsed).
    pub achieved: f64,
    /// `uniform` or `poisson`.
    pub arrival: String,
    /// Measured ops issued more than 1 ms after their intended start because
    /// every slot (`-t`) was busy when they fell due.
    pub late_ops: u64,
    /// Measured ops issued (intended start after the ramp).
    pub scheduled_ops: u64,
    /// Most ops due but not yet issued at once.
    pub max_backlog: u64,
    /// Ops due before the end that were never issued.
    pub final_backlog: u64,
    /// Issue time − intended start of the ops that were not late: the
    /// timer's own error, ns.
    pub schedule_error_ns: ScheduleError,
    /// Whether the cluster kept up (achieved ≥ 98 % of asked and at most
    /// 1 % of the ops late).
    pub kept_up: bool,
}

/// The timer's error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScheduleError {
    /// Median, ns.
    pub p50: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// Largest, ns.
    pub max: u64,
}

impl RateReport {
    /// The one-line verdict when the cluster did not keep up.
    pub fn overload_line(&self) -> Option<String> {
        (!self.kept_up).then(|| {
            format!(
                "cluster could not keep up: achieved {:.0} of {:.0} ops/s, {} ops late, backlog up to {}",
                self.achieved, self.asked, self.late_ops, self.max_backlog
            )
        })
    }
}

/// A short name of the workload (`rados write 4 KiB QD16`, `rbd randread
/// 4 KiB QD32x1`) and the pool (`pool` or `pool/image`).
pub fn workload_label(r: &BenchResult) -> (String, String) {
    use crate::units::fmt_bytes;
    match &r.workload {
        Workload::Rados(w) => (
            format!(
                "rados {} {} QD{}",
                w.mode,
                fmt_bytes(w.block_size),
                w.concurrent_ios
            ),
            w.pool.clone(),
        ),
        Workload::Rbd(w) => (
            format!(
                "rbd {} {} QD{}x{}{}",
                w.rw,
                fmt_bytes(w.bs),
                w.iodepth,
                w.numjobs,
                w.fsync_every
                    .map(|n| format!(" fsync={n}"))
                    .unwrap_or_default()
            ),
            match &w.data_pool {
                Some(d) => format!("{}/{} (data in {d})", w.pool, w.image),
                None => format!("{}/{}", w.pool, w.image),
            },
        ),
    }
}

/// Where a run's I/O went, in words: `pool rbd`, or `pool rbd, data in pool
/// ec21` for an RBD image with a data pool.
pub fn where_ran(pool: &str, data_pool: Option<&str>) -> String {
    match data_pool {
        Some(d) => format!("pool {pool}, data in pool {d}"),
        None => format!("pool {pool}"),
    }
}

/// A pool for unit tests: `size` copies (or `k`+`m` erasure-coded) over
/// OSDs 0-2.
#[cfg(test)]
pub(crate) fn test_pool(name: &str, size: u32, erasure: Option<(u32, u32)>) -> PoolSettings {
    PoolSettings {
        name: name.into(),
        id: 1,
        size,
        min_size: 2,
        pg_num: 32,
        crush_rule: "r".into(),
        device_classes: vec![],
        osds: vec![0, 1, 2],
        osd_memory_target: vec![],
        memory_held_bytes: None,
        memory_measured_bytes: None,
        memory_not_measured: None,
        osd_settings: Vec::new(),
        autoscale_mode: None,
        flags: Vec::new(),
        balancer: None,
        erasure: erasure.map(|(k, m)| ErasureLayout {
            profile: "p".into(),
            k,
            m,
            plugin: "jerasure".into(),
            technique: None,
            stripe_unit: 4096,
            failure_domain: "osd".into(),
            allow_ec_overwrites: true,
        }),
    }
}

/// A result for unit tests: `rados write` on pool `pool` (4 KiB, QD16, 5 s)
/// holding `jobs`, with nothing probed.
#[cfg(test)]
pub(crate) fn test_result(pool: &str, jobs: Vec<JobReport>) -> BenchResult {
    BenchResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "cephbench".into(),
            version: "t".into(),
        },
        cluster: ClusterInfo {
            fsid: "f".into(),
            ceph_version: None,
            librados_version: "3.0.0".into(),
            client_host: "h".into(),
            entity: "client.admin".into(),
            client_kernel: None,
            client_cpu_governor: None,
        },
        started_unix: 0,
        workload: Workload::Rados(RadosWorkload {
            mode: "write".into(),
            pool: pool.into(),
            block_size: 4096,
            object_size: 4096,
            concurrent_ios: 16,
            duration_s: Some(5.0),
            ramp_s: 0.0,
            max_ops: None,
            run_name: "default".into(),
            namespace: String::new(),
            write_to: None,
            verify: crate::objects::VerifyMode::None,
            no_cleanup: false,
            pool_created: false,
        }),
        latency_kind: "completion".into(),
        latency_definition: String::new(),
        jobs,
        osds: vec![],
        placement: None,
        network: None,
        tail: Vec::new(),
        interrupted: false,
        warnings: vec![],
        findings: Vec::new(),
        pool: None,
        clients: None,
        cluster_state: None,
        read_cache: None,
        disruption: None,
        pace: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{DataErrors, PerSecond, Sample};

    #[test]
    fn per_second_is_rados_benchs_summary_of_the_measured_seconds() {
        let s = |t_s: f64, ramp: bool, ops: u64| Sample {
            t_s,
            ramp,
            ops,
            bytes: ops << 20,
            mean_latency_ns: 1e6,
            in_flight: 1,
            errors: 0,
            ..Default::default()
        };
        // Ramp second, three measured seconds (one without a completion),
        // a cut last interval of 0.3 s.
        let p = PerSecond::of(&[
            s(1.0, true, 500),
            s(2.0, false, 100),
            s(3.0, false, 0),
            s(4.0, false, 200),
            s(4.3, false, 90),
        ])
        .unwrap();
        assert_eq!(p.samples, 3);
        assert_eq!((p.iops.mean, p.iops.min, p.iops.max), (100.0, 0.0, 200.0));
        assert_eq!(p.iops.stddev, 100.0);
        assert_eq!((p.mib_s.mean, p.mib_s.stddev), (100.0, 100.0));
        assert!(PerSecond::of(&[s(1.0, true, 5), s(1.2, false, 5)]).is_none());
        let one = PerSecond::of(&[s(1.0, false, 7)]).unwrap();
        assert_eq!(
            (one.iops.stddev, one.iops.min, one.iops.max),
            (0.0, 7.0, 7.0)
        );
    }

    #[test]
    fn data_errors_name_what_went_wrong() {
        let e = DataErrors {
            failed: 0,
            short_reads: 1,
            mismatches: 3,
        };
        assert_eq!(e.to_string(), "1 short read, 3 mismatches");
        assert!(!e.is_clean());
        assert_eq!(DataErrors::default().to_string(), "no errors");
    }
}
