//! Names of the objects cephbench writes, and the metadata object that
//! records what a write run left behind so that `seq`, `rand` and `cleanup`
//! can find exactly those objects and nothing else.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

pub use crate::names::{DATA_PREFIX, META_PREFIX};
/// The run name used when none is given.
pub const DEFAULT_RUN: &str = "default";

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
    /// Where the writes put their payload (object data unless the run
    /// used --write-omap/--write-xattr).
    #[serde(default)]
    pub write_dest: WriteDest,
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
/// [`fill_pattern`] for the run's seed): every byte compared.
pub fn verify(got: &[u8], pattern: &[u8], op: u64) -> bool {
    let n = got.len().min(8);
    got.len() == pattern.len() && got[..n] == op.to_le_bytes()[..n] && got[n..] == pattern[n..]
}

/// [`verify`]'s cheap form: the length, op `op`'s stamp (the first 8 bytes)
/// and the pattern's last 8 bytes, which depend on the run's seed — so a
/// block of another op, of another run, of zeros or cut short fails, at the
/// cost of two 8-byte compares instead of a pass over the block.
#[inline]
pub fn verify_stamp(got: &[u8], pattern: &[u8], op: u64) -> bool {
    let len = got.len();
    let n = len.min(8);
    let tail = len.saturating_sub(8).max(n);
    len == pattern.len() && got[..n] == op.to_le_bytes()[..n] && got[tail..] == pattern[tail..]
}

/// How reads are checked against what the write run wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Not at all (`--no-verify`): only the length of each read.
    None,
    /// Each block's op stamp and seed-dependent tail ([`verify_stamp`]); the default.
    #[default]
    Stamp,
    /// Every byte ([`verify`]; `--verify full`), as rados bench does.
    Full,
}

impl VerifyMode {
    /// `"none"`, `"stamp"` or `"full"`.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyMode::None => "none",
            VerifyMode::Stamp => "stamp",
            VerifyMode::Full => "full",
        }
    }

    /// Whether any content check runs.
    pub fn checks(self) -> bool {
        self != VerifyMode::None
    }

    /// Checks one block read by op `op` (`pattern` as for [`verify`]).
    #[inline]
    pub fn check(self, got: &[u8], pattern: &[u8], op: u64) -> bool {
        match self {
            VerifyMode::None => true,
            VerifyMode::Stamp => verify_stamp(got, pattern, op),
            VerifyMode::Full => verify(got, pattern, op),
        }
    }
}

/// Results written before the modes existed said `"verify": true|false`
/// (true: every byte).
impl<'de> serde::Deserialize<'de> for VerifyMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Name(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(true) => Ok(VerifyMode::Full),
            Raw::Bool(false) => Ok(VerifyMode::None),
            Raw::Name(n) => match n.as_str() {
                "none" => Ok(VerifyMode::None),
                "stamp" => Ok(VerifyMode::Stamp),
                "full" => Ok(VerifyMode::Full),
                other => Err(serde::de::Error::unknown_variant(
                    other,
                    &["none", "stamp", "full"],
                )),
            },
        }
    }
}

/// Where a write op puts its `-b` bytes: object data, an omap value, an
/// xattr — rados bench's `--write-object`, `--write-omap`, `--write-xattr`
/// (any combination, in one op; object data alone by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WriteDest {
    /// Object data at the op's offset.
    pub object: bool,
    /// One omap key per op (`cephbench.<offset>`) with the payload as value.
    pub omap: bool,
    /// One xattr per op (`cephbench.<offset>`) with the payload as value.
    pub xattr: bool,
}

impl Default for WriteDest {
    fn default() -> Self {
        WriteDest {
            object: true,
            omap: false,
            xattr: false,
        }
    }
}

impl WriteDest {
    /// How many destinations each op writes `-b` bytes to.
    pub fn count(self) -> u64 {
        u64::from(self.object) + u64::from(self.omap) + u64::from(self.xattr)
    }

    /// Object data only (the zero-copy path).
    pub fn object_only(self) -> bool {
        self == WriteDest::default()
    }

    /// `object`, `omap`, `xattr` joined with `+`, e.g. `object+omap`.
    pub fn label(self) -> String {
        let mut v = Vec::new();
        for (on, name) in [
            (self.object, "object"),
            (self.omap, "omap"),
            (self.xattr, "xattr"),
        ] {
            if on {
                v.push(name);
            }
        }
        v.join("+")
    }
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
        // The stamp check sees the op number, the seed's tail and the length.
        let mut p = pattern.clone();
        stamp(&mut p, 99);
        assert!(verify_stamp(&p, &pattern, 99));
        assert!(!verify_stamp(&p, &pattern, 98));
        assert!(!verify_stamp(&p[..4000], &pattern, 99));
        assert!(!verify_stamp(&vec![0u8; 4096], &pattern, 0));
        let mut other = vec![0u8; 4096];
        fill_pattern(&mut other, 8);
        stamp(&mut other, 99);
        assert!(!verify_stamp(&other, &pattern, 99), "another run's block");
        p[100] ^= 1;
        assert!(
            verify_stamp(&p, &pattern, 99),
            "the middle is full mode's job"
        );
        assert!(!VerifyMode::Full.check(&p, &pattern, 99));
        assert!(VerifyMode::None.check(&p, &pattern, 98));
        let mut small = vec![0u8; 4];
        fill_pattern(&mut small, 7);
        let pat = small.clone();
        stamp(&mut small, 3);
        assert!(verify(&small, &pat, 3));
        assert!(verify_stamp(&small, &pat, 3));
        assert!(!verify_stamp(&small, &pat, 2));
    }

    #[test]
    fn verify_mode_reads_old_and_new_results() {
        let m = |s: &str| serde_json::from_str::<VerifyMode>(s).unwrap();
        assert_eq!(m("true"), VerifyMode::Full);
        assert_eq!(m("false"), VerifyMode::None);
        assert_eq!(m("\"stamp\""), VerifyMode::Stamp);
        assert_eq!(
            serde_json::to_string(&VerifyMode::Full).unwrap(),
            "\"full\""
        );
        assert!(serde_json::from_str::<VerifyMode>("\"most\"").is_err());
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
            write_dest: Default::default(),
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
