//! User suites from TOML files. Every error names the file, the line and
//! the fix, on one line; nothing is run before the whole file is valid.
#![forbid(unsafe_code)]

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{JobKind, Suite, SuiteJob};
use crate::plan::{self, Source::File};
use crate::units::{fmt_bytes, parse_duration, parse_size};
use crate::workload::rados::RadosMode;
use crate::workload::rbd::RbdMode;

/// A suite file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{file}: line {line}: {message}")]
pub struct SuiteFileError {
    /// The file.
    pub file: String,
    /// 1-based line of the problem (1 when the file as a whole is wrong).
    pub line: usize,
    /// What is wrong and how to fix it (one line).
    pub message: String,
}

const FORMAT_HINT: &str = "the format is in docs/usage.md (User suites) and examples/suite.toml";

/// A number or a string with a unit (`4096`, `"4K"`, `20`, `"3s"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Quantity {
    Int(u64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileSuite {
    name: Option<String>,
    runs: Option<Spanned<i64>>,
    duration: Option<Spanned<Quantity>>,
    ramp: Option<Spanned<Quantity>>,
    image_size: Option<Spanned<Quantity>>,
    test_area: Option<Spanned<Quantity>>,
    namespace: Option<Spanned<String>>,
    data_pool: Option<Spanned<String>>,
    #[serde(default)]
    job: Vec<Spanned<FileJob>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileJob {
    command: Spanned<String>,
    name: Option<String>,
    duration: Option<Spanned<Quantity>>,
    ramp: Option<Spanned<Quantity>>,
    // rbd
    rw: Option<Spanned<String>>,
    bs: Option<Spanned<Quantity>>,
    iodepth: Option<Spanned<i64>>,
    numjobs: Option<Spanned<i64>>,
    rwmix_read: Option<Spanned<i64>>,
    fsync_every: Option<Spanned<i64>>,
    // rados
    mode: Option<Spanned<String>>,
    block_size: Option<Spanned<Quantity>>,
    object_size: Option<Spanned<Quantity>>,
    concurrent_ios: Option<Spanned<i64>>,
}

/// Reads and validates a suite file.
pub fn load(path: &Path) -> Result<Suite, SuiteFileError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SuiteFileError {
        file: file.clone(),
        line: 1,
        message: format!(
            "cannot read it ({e}); give a built-in suite (lab, cdm, rados, vm) or a readable TOML file"
        ),
    })?;
    parse(&text, &file)
}

/// Parses and validates the text of a suite file named `file`.
pub fn parse(text: &str, file: &str) -> Result<Suite, SuiteFileError> {
    let src = SuiteText { text, file };
    let raw: FileSuite = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let msg = e.message().trim_end_matches('.').to_string();
        let fix = if msg.contains("unknown field") {
            "use one of the expected keys".to_string()
        } else if msg.contains("missing field `command`") {
            "give every [[job]] a `command = \"rbd\"` or `command = \"rados\"`".to_string()
        } else {
            FORMAT_HINT.to_string()
        };
        src.err(at, format!("{msg}; {fix}"))
    })?;
    let mut suite = src.suite_settings(&raw)?;
    if raw.job.is_empty() {
        return Err(src.err(
            text.len(),
            "the suite has no jobs; add at least one [[job]] table with a `command`".into(),
        ));
    }

    // The block and object size of the last rados write job: what a seq or
    // rand job after it reads.
    let mut written: Option<(u64, u64)> = None;
    for (i, spanned) in raw.job.iter().enumerate() {
        let job = JobAt {
            number: i + 1,
            at: spanned.span().start,
            keys: spanned.get_ref(),
        };
        let j = job.keys;
        let kind = match j.command.get_ref().as_str() {
            "rbd" => src.rbd_job(&job, suite.test_area)?,
            "rados" => src.rados_job(&job, &mut written)?,
            other => {
                return Err(src.err(
                    j.command.span().start,
                    format!("command = \"{other}\" is not a benchmark; use \"rbd\" or \"rados\""),
                ))
            }
        };
        let runtime = match &j.duration {
            Some(d) => {
                let d = src.duration(d, "duration")?;
                if d.is_zero() {
                    return Err(src.err(job.at, "duration must be longer than 0".into()));
                }
                Some(d)
            }
            None => None,
        };
        let ramp = match &j.ramp {
            Some(d) => Some(src.duration(d, "ramp")?),
            None => None,
        };
        let name = j.name.clone().unwrap_or_else(|| default_name(&kind));
        if suite.jobs.iter().any(|o: &SuiteJob| o.name == name) {
            return Err(src.err(
                job.at,
                format!(
                    "job {}: the name '{name}' is used twice; give each job its own `name`",
                    job.number
                ),
            ));
        }
        suite.jobs.push(SuiteJob {
            name,
            kind,
            runtime,
            ramp,
            runs: None,
        });
    }
    Ok(suite)
}

/// The text of a suite file and its name: what every error points into.
struct SuiteText<'a> {
    text: &'a str,
    file: &'a str,
}

/// One `[[job]]` table: its 1-based number, where it starts, its keys.
struct JobAt<'a> {
    number: usize,
    at: usize,
    keys: &'a FileJob,
}

impl JobAt<'_> {
    /// An error at the job's table, prefixed with its number.
    fn err(&self, src: &SuiteText, message: String) -> SuiteFileError {
        src.err(self.at, format!("job {}: {message}", self.number))
    }

    /// Refuses `key` when it is set: it belongs to the other command `cmd`.
    fn only(&self, src: &SuiteText, set: bool, key: &str, cmd: &str) -> Result<(), SuiteFileError> {
        if set {
            Err(self.err(
                src,
                format!("`{key}` applies to command = \"{cmd}\" only; remove it"),
            ))
        } else {
            Ok(())
        }
    }
}

impl SuiteText<'_> {
    /// An error at byte `offset` of the text, on one line.
    fn err(&self, offset: usize, message: String) -> SuiteFileError {
        let line = self
            .text
            .get(..offset.min(self.text.len()))
            .map_or(1, |t| t.matches('\n').count() + 1);
        SuiteFileError {
            file: self.file.to_string(),
            line,
            message: one_line(&message),
        }
    }

    fn duration(&self, q: &Spanned<Quantity>, key: &str) -> Result<Duration, SuiteFileError> {
        let d = match q.get_ref() {
            Quantity::Int(n) => Ok(Duration::from_secs(*n)),
            Quantity::Float(f) if f.is_finite() && *f >= 0.0 && *f < 1e9 => {
                Ok(Duration::from_secs_f64(*f))
            }
            Quantity::Float(_) => Err(format!("{key} is out of range")),
            Quantity::Text(t) => parse_duration(t).map_err(|e| e.to_string()),
        }
        .map_err(|m| {
            self.err(
                q.span().start,
                format!("{m}; write {key} as seconds or with a unit, e.g. {key} = \"20s\""),
            )
        })?;
        Ok(d)
    }

    fn size(&self, q: &Spanned<Quantity>, key: &str) -> Result<u64, SuiteFileError> {
        let s = match q.get_ref() {
            Quantity::Int(n) => Ok(*n),
            Quantity::Float(_) => Err(format!("{key} must be a whole number of bytes")),
            Quantity::Text(t) => parse_size(t).map_err(|e| e.to_string()),
        }
        .map_err(|m| {
            self.err(
                q.span().start,
                format!("{m}; write {key} in bytes or with a binary unit, e.g. {key} = \"4K\""),
            )
        })?;
        if s == 0 {
            return Err(self.err(
                q.span().start,
                format!("{key} must be larger than 0, e.g. {key} = \"4K\""),
            ));
        }
        Ok(s)
    }

    fn int(&self, v: &Spanned<i64>, key: &str, min: u64, max: u64) -> Result<u64, SuiteFileError> {
        plan::in_range(File, key, *v.get_ref(), min, max).map_err(|m| self.err(v.span().start, m))
    }

    /// The suite-wide keys (name, runs, duration, sizes, pool, namespace),
    /// with the defaults for those not given; no jobs yet.
    fn suite_settings(&self, raw: &FileSuite) -> Result<Suite, SuiteFileError> {
        let file = self.file;
        let mut suite = super::Suite {
            name: raw.name.clone().unwrap_or_else(|| {
                Path::new(file)
                    .file_stem()
                    .map_or("suite".into(), |s| s.to_string_lossy().into_owned())
            }),
            source: file.to_string(),
            runs: 2,
            runtime: Duration::from_secs(20),
            ramp: Duration::from_secs(3),
            image_size: 8 << 30,
            test_area: 2 << 30,
            jobs: Vec::new(),
            namespace: String::new(),
            data_pool: None,
        };
        if let Some(d) = &raw.data_pool {
            if d.get_ref().is_empty() {
                return Err(self.err(
                    d.span().start,
                    "data-pool needs a pool name, e.g. data-pool = \"ec21\"".into(),
                ));
            }
            suite.data_pool = Some(d.get_ref().clone());
        }
        if let Some(n) = &raw.namespace {
            crate::names::validate_namespace(n.get_ref())
                .map_err(|m| self.err(n.span().start, m.replacen("--namespace", "namespace", 1)))?;
            suite.namespace = n.get_ref().clone();
        }
        if let Some(r) = &raw.runs {
            suite.runs = self.int(r, "runs", 1, plan::MAX_RUNS)? as u32;
        }
        if let Some(d) = &raw.duration {
            suite.runtime = self.duration(d, "duration")?;
            if suite.runtime.is_zero() {
                return Err(self.err(d.span().start, "duration must be longer than 0".into()));
            }
        }
        if let Some(d) = &raw.ramp {
            suite.ramp = self.duration(d, "ramp")?;
        }
        self.suite_sizes(raw, &mut suite)?;
        Ok(suite)
    }

    /// `image-size` and `test-area`: the area at most the image.
    fn suite_sizes(&self, raw: &FileSuite, suite: &mut Suite) -> Result<(), SuiteFileError> {
        if let Some(s) = &raw.image_size {
            suite.image_size = self.size(s, "image-size")?;
            suite.test_area = suite.test_area.min(suite.image_size);
        }
        if let Some(s) = &raw.test_area {
            suite.test_area = self.size(s, "test-area")?;
            if suite.test_area > suite.image_size {
                return Err(self.err(
                    s.span().start,
                    format!(
                        "test-area {} is larger than image-size {}; make image-size at least as large",
                        fmt_bytes(suite.test_area),
                        fmt_bytes(suite.image_size)
                    ),
                ));
            }
        }
        if let Some(s) = &raw.image_size {
            plan::image_size(
                plan::Source::File,
                "image-size",
                "test-area",
                suite.image_size,
                suite.test_area,
            )
            .map_err(|m| self.err(s.span().start, m))?;
        }
        Ok(())
    }

    /// A `command = "rbd"` job's keys, checked against the suite's test area.
    fn rbd_job(&self, job: &JobAt, test_area: u64) -> Result<JobKind, SuiteFileError> {
        let j = job.keys;
        job.only(self, j.mode.is_some(), "mode", "rados")?;
        job.only(self, j.block_size.is_some(), "block-size", "rados")?;
        job.only(self, j.object_size.is_some(), "object-size", "rados")?;
        job.only(self, j.concurrent_ios.is_some(), "concurrent-ios", "rados")?;
        let rw = match &j.rw {
            None => RbdMode::Randread,
            Some(s) => match s.get_ref().as_str() {
                "read" => RbdMode::Read,
                "write" => RbdMode::Write,
                "randread" => RbdMode::Randread,
                "randwrite" => RbdMode::Randwrite,
                "readwrite" | "rw" => RbdMode::Readwrite,
                "randrw" => RbdMode::Randrw,
                other => {
                    return Err(self.err(
                        s.span().start,
                        format!("rw = \"{other}\" is not a workload; use read, write, randread, randwrite, readwrite or randrw"),
                    ))
                }
            },
        };
        let bs = match &j.bs {
            Some(q) => self.size(q, "bs")?,
            None => 4096,
        };
        plan::block_size(File, "bs", bs).map_err(|m| self.err(job.at, m))?;
        let rwmix_read = match &j.rwmix_read {
            Some(v) => self.int(v, "rwmix-read", 0, 100)? as u8,
            None => 50,
        };
        let fsync_every = match &j.fsync_every {
            Some(v) => Some(self.int(v, "fsync-every", 1, u64::MAX)?),
            None => None,
        };
        let iodepth = match &j.iodepth {
            Some(v) => self.int(v, "iodepth", 1, plan::MAX_IN_FLIGHT)?,
            None => plan::default_iodepth(fsync_every.is_some()),
        };
        plan::rbd_flushes(File, rw, rwmix_read, iodepth, fsync_every)
            .map_err(|m| job.err(self, m))?;
        let iodepth = iodepth as usize;
        let numjobs = match &j.numjobs {
            Some(v) => self.int(v, "numjobs", 1, plan::MAX_NUMJOBS)? as usize,
            None => 1,
        };
        if test_area % bs != 0 || test_area / bs < numjobs as u64 {
            return Err(job.err(
                self,
                format!(
                    "bs {} does not divide the test area {} into numjobs {} slices; change bs or test-area",
                    fmt_bytes(bs),
                    fmt_bytes(test_area),
                    numjobs
                ),
            ));
        }
        Ok(JobKind::Rbd {
            rw,
            bs,
            iodepth,
            numjobs,
            rwmix_read,
            fsync_every,
        })
    }

    /// A `command = "rados"` job's keys. A write job sets `written`, the block
    /// and object size a seq or rand job after it reads.
    fn rados_job(
        &self,
        job: &JobAt,
        written: &mut Option<(u64, u64)>,
    ) -> Result<JobKind, SuiteFileError> {
        let j = job.keys;
        for (set, key) in [
            (j.rw.is_some(), "rw"),
            (j.bs.is_some(), "bs"),
            (j.iodepth.is_some(), "iodepth"),
            (j.numjobs.is_some(), "numjobs"),
            (j.rwmix_read.is_some(), "rwmix-read"),
            (j.fsync_every.is_some(), "fsync-every"),
        ] {
            job.only(self, set, key, "rbd")?;
        }
        let mode = match &j.mode {
            None => RadosMode::Write,
            Some(s) => match s.get_ref().as_str() {
                "write" => RadosMode::Write,
                "seq" => RadosMode::Seq,
                "rand" => RadosMode::Rand,
                other => {
                    return Err(self.err(
                        s.span().start,
                        format!(
                            "mode = \"{other}\" is not a rados workload; use write, seq or rand"
                        ),
                    ))
                }
            },
        };
        if !mode.is_write() && written.is_none() {
            return Err(job.err(
                self,
                format!("a rados {} job reads what a write job wrote; put a rados job with mode = \"write\" before it", mode.as_str()),
            ));
        }
        let (block_size, object_size) = match (mode.is_write(), *written) {
            (false, Some(w)) => w,
            _ => {
                let block_size = match &j.block_size {
                    Some(q) => self.size(q, "block-size")?,
                    None => 4 << 20,
                };
                let object_size = match &j.object_size {
                    Some(q) => self.size(q, "object-size")?,
                    None => block_size,
                };
                (block_size, object_size)
            }
        };
        if object_size % block_size != 0 || block_size > plan::MAX_BLOCK_SIZE {
            return Err(job.err(
                self,
                format!(
                    "object-size {} must be a multiple of block-size {} (at most 1 GiB)",
                    fmt_bytes(object_size),
                    fmt_bytes(block_size)
                ),
            ));
        }
        if !mode.is_write() && (j.block_size.is_some() || j.object_size.is_some()) {
            return Err(job.err(
                self,
                "seq/rand use the write job's block and object size; remove block-size/object-size"
                    .into(),
            ));
        }
        if mode.is_write() {
            *written = Some((block_size, object_size));
        }
        let concurrent_ios = match &j.concurrent_ios {
            Some(v) => self.int(v, "concurrent-ios", 1, plan::MAX_IN_FLIGHT)? as usize,
            None => 16,
        };
        Ok(JobKind::Rados {
            mode,
            block_size,
            object_size,
            concurrent_ios,
        })
    }
}

fn default_name(kind: &JobKind) -> String {
    match kind {
        JobKind::Rbd {
            rw,
            bs,
            iodepth,
            fsync_every,
            ..
        } => format!(
            "{} {} QD{}{}",
            rw.as_str(),
            fmt_bytes(*bs).replace(' ', ""),
            iodepth,
            fsync_every
                .map(|n| format!(" fsync={n}"))
                .unwrap_or_default()
        ),
        JobKind::Rados {
            mode,
            block_size,
            concurrent_ios,
            ..
        } => format!(
            "rados {} {} QD{}",
            mode.as_str(),
            fmt_bytes(*block_size).replace(' ', ""),
            concurrent_ios
        ),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../examples/suite.toml");

    #[test]
    fn the_example_file_loads() {
        let s = parse(EXAMPLE, "examples/suite.toml").unwrap();
        assert!(!s.jobs.is_empty());
        assert!(s.jobs.iter().any(|j| j.kind.is_rbd()));
    }

    #[test]
    fn a_data_pool_is_a_pool_name() {
        let jobs = "[[job]]\ncommand = \"rbd\"\n";
        let s = parse(&format!("data-pool = \"ec21\"\n{jobs}"), "s.toml").unwrap();
        assert_eq!(s.data_pool.as_deref(), Some("ec21"));
        assert_eq!(parse(jobs, "s.toml").unwrap().data_pool, None);
        let e = parse(&format!("data-pool = \"\"\n{jobs}"), "s.toml").unwrap_err();
        assert!(e.to_string().contains("data-pool needs a pool name"), "{e}");
    }

    #[test]
    fn errors_name_file_line_and_fix() {
        let e = parse(
            "runs = 2\n[[job]]\ncommand = \"rbd\"\niodeph = 4\n",
            "s.toml",
        )
        .unwrap_err();
        let m = e.to_string();
        assert_eq!(e.line, 4, "{m}");
        assert!(
            m.starts_with("s.toml: line 4: unknown field `iodeph`"),
            "{m}"
        );
        assert!(m.contains("iodepth") && !m.contains('\n'), "{m}");

        let e = parse("[[job]]\ncommand = \"rbd\"\nbs = \"4X\"\n", "s.toml").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.to_string().contains("e.g. bs = \"4K\""), "{e}");

        let e = parse("[[job]]\ncommand = \"rados\"\nmode = \"seq\"\n", "s.toml").unwrap_err();
        assert!(e.to_string().contains("mode = \"write\" before it"), "{e}");

        let e = parse("[[job]]\ncommand = \"fio\"\n", "s.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");

        let e = parse("[[job]]\ncommand = \"rbd\"\nmode = \"write\"\n", "s.toml").unwrap_err();
        assert!(e.to_string().contains("remove it"), "{e}");

        let e = parse("name = \"x\"\n", "s.toml").unwrap_err();
        assert!(e.to_string().contains("no jobs"), "{e}");

        let e = parse("[[job]\n", "s.toml").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
        assert!(e.to_string().contains("docs/usage.md"), "{e}");
    }

    #[test]
    fn defaults_are_the_commands_defaults() {
        let s = parse(
            "duration = \"2s\"\nramp = 0\n[[job]]\ncommand = \"rbd\"\nrw = \"randwrite\"\nfsync-every = 1\n[[job]]\ncommand = \"rados\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(s.name, "x");
        assert_eq!(s.runtime, Duration::from_secs(2));
        assert_eq!(
            s.jobs[0].kind,
            JobKind::Rbd {
                rw: RbdMode::Randwrite,
                bs: 4096,
                iodepth: 1,
                numjobs: 1,
                rwmix_read: 50,
                fsync_every: Some(1)
            }
        );
        assert_eq!(
            s.jobs[1].kind,
            JobKind::Rados {
                mode: RadosMode::Write,
                block_size: 4 << 20,
                object_size: 4 << 20,
                concurrent_ios: 16
            }
        );
    }

    /// A seq or rand job reads what the write job before it wrote: its
    /// block and object size, and so its name, are that job's.
    #[test]
    fn reads_take_the_write_jobs_block_size() {
        let s = parse(
            "duration = \"2s\"\n[[job]]\ncommand = \"rados\"\nblock-size = \"4K\"\n\
             [[job]]\ncommand = \"rados\"\nmode = \"rand\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(s.jobs[1].name, "rados rand 4KiB QD16");
        assert!(matches!(
            s.jobs[1].kind,
            JobKind::Rados {
                mode: RadosMode::Rand,
                block_size: 4096,
                object_size: 4096,
                ..
            }
        ));
    }
}
