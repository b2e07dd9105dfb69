//! Names of the objects cephbench writes, and the metadata object that
//! records what a write run left behind so that `seq`, `rand` and `cleanup`
//! can find exactly those objects and nothing else.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// Every data object cephbench writes starts with this.
pub const DATA_PREFIX: &str = "cephbench_data.";
/// Every metadata object cephbench writes starts with this.
pub const META_PREFIX: &str = "cephbench_meta.";
/// The run name used when none is given.
pub const DEFAULT_RUN: &str = "default";

/// Checks a `--run-name`: 1–64 characters of `[A-Za-z0-9_-]`.
pub fn validate_run_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "--run-name '{name}' must be 1 to 64 characters long"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "--run-name '{name}' may only contain letters, digits, '_' and '-'"
        ));
    }
    Ok(())
}

/// The name prefix of a run's data objects.
pub fn data_prefix(run: &str) -> String {
    format!("{DATA_PREFIX}{run}.")
}

/// The name of a run's metadata object.
pub fn meta_name(run: &str) -> String {
    format!("{META_PREFIX}{run}")
}

/// Writes the NUL-terminated name of object `n` of a run into `buf`
/// (reused between ops, so naming an object allocates nothing).
pub fn object_name_into(buf: &mut Vec<u8>, prefix: &str, n: u64) {
    use std::io::Write as _;
    buf.clear();
    buf.extend_from_slice(prefix.as_bytes());
    write!(buf, "{n}").expect("writing to a Vec cannot fail");
    buf.push(0);
}

/// What a write run recorded about the objects it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    /// Always `"cephbench"`: marks the object as ours.
    pub tool: String,
    /// Format of this record.
    pub format: u32,
    /// The run name.
    pub run_name: String,
    /// Bytes per write op.
    pub block_size: u64,
    /// Bytes per object.
    pub object_size: u64,
    /// Write ops issued (and completed): op `i` wrote object
    /// `i / (object_size / block_size)` at offset `(i % that) * block_size`.
    pub ops: u64,
    /// Seed of the payload pattern, for `--verify`.
    pub seed: u64,
    /// Whether the write run finished (false while running or after a crash).
    pub complete: bool,
    /// Host that wrote the objects.
    pub host: String,
    /// Process id of the writer.
    pub pid: u32,
    /// When the run started, seconds since the epoch.
    pub started_unix: u64,
    /// Whether this run created the pool (`--create-pool`): `cleanup` then
    /// removes the pool too once it holds nothing else.
    #[serde(default)]
    pub created_pool: bool,
}

impl RunMeta {
    /// Writes per object.
    pub fn writes_per_object(&self) -> u64 {
        (self.object_size / self.block_size.max(1)).max(1)
    }

    /// Number of distinct objects the run wrote.
    pub fn objects(&self) -> u64 {
        self.ops.div_ceil(self.writes_per_object())
    }

    /// Parses a metadata object, rejecting anything not written by cephbench.
    pub fn parse(bytes: &[u8]) -> Result<RunMeta, String> {
        let meta: RunMeta = serde_json::from_slice(bytes)
            .map_err(|e| format!("not a cephbench metadata record: {e}"))?;
        if meta.tool != "cephbench" || meta.format != 1 {
            return Err(format!(
                "unsupported metadata record (tool '{}', format {})",
                meta.tool, meta.format
            ));
        }
        if meta.block_size == 0 || meta.object_size < meta.block_size {
            return Err("corrupt metadata record: bad block/object size".into());
        }
        Ok(meta)
    }
}

/// A deterministic, incompressible payload pattern for a seed.
pub fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// Stamps op `i`'s index into the first bytes of a payload.
#[inline]
pub fn stamp(buf: &mut [u8], op: u64) {
    let b = op.to_le_bytes();
    let n = buf.len().min(8);
    buf[..n].copy_from_slice(&b[..n]);
}

/// Whether `got` is what op `op` wrote with `pattern` (a buffer filled by
/// [`fill_pattern`] for the run's seed).
pub fn verify(got: &[u8], pattern: &[u8], op: u64) -> bool {
    let n = got.len().min(8);
    got.len() == pattern.len() && got[..n] == op.to_le_bytes()[..n] && got[n..] == pattern[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let mut b = Vec::new();
        object_name_into(&mut b, &data_prefix("r1"), 42);
        assert_eq!(b, b"cephbench_data.r1.42\0");
        assert_eq!(meta_name("r1"), "cephbench_meta.r1");
        assert!(validate_run_name("ok_Run-1").is_ok());
        assert!(validate_run_name("").is_err());
        assert!(validate_run_name("a.b").is_err());
        assert!(validate_run_name(&"x".repeat(65)).is_err());
    }

    #[test]
    fn payload_round_trip() {
        let mut pattern = vec![0u8; 4096];
        fill_pattern(&mut pattern, 7);
        let mut p = pattern.clone();
        stamp(&mut p, 99);
        assert!(verify(&p, &pattern, 99));
        assert!(!verify(&p, &pattern, 98));
        p[100] ^= 1;
        assert!(!verify(&p, &pattern, 99));
        let mut small = vec![0u8; 4];
        fill_pattern(&mut small, 7);
        let pat = small.clone();
        stamp(&mut small, 3);
        assert!(verify(&small, &pat, 3));
    }

    #[test]
    fn meta_parse_rejects_foreign_records() {
        let m = RunMeta {
            tool: "cephbench".into(),
            format: 1,
            run_name: "x".into(),
            block_size: 4096,
            object_size: 16384,
            ops: 9,
            seed: 1,
            complete: true,
            host: "h".into(),
            pid: 1,
            started_unix: 0,
            created_pool: false,
        };
        let bytes = serde_json::to_vec(&m).unwrap();
        let back = RunMeta::parse(&bytes).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.objects(), 3);
        assert!(RunMeta::parse(b"{}").is_err());
        assert!(RunMeta::parse(b"\x00\x01").is_err());
        let mut other = m.clone();
        other.tool = "rados".into();
        assert!(RunMeta::parse(&serde_json::to_vec(&other).unwrap()).is_err());
    }
}
