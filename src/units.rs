//! Parsing and formatting of sizes and durations given on the command line.
#![forbid(unsafe_code)]

use std::time::Duration;

/// Bytes in a MiB: bandwidth is MiB/s (2^20 bytes/s) throughout.
pub const MIB: f64 = 1_048_576.0;

/// A size or duration argument that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} '{input}': {why}")]
pub struct ParseError {
    what: &'static str,
    input: String,
    why: String,
}

fn err(what: &'static str, input: &str, why: impl Into<String>) -> ParseError {
    ParseError {
        what,
        input: input.to_string(),
        why: why.into(),
    }
}

/// Parses a byte size: a whole number with an optional binary suffix
/// (`K`, `M`, `G`, `T`, optionally followed by `iB` or `B`, any case), as
/// rados bench and fio read them: `4096`, `4K`, `4k`, `4KiB`, `1M`, `10G`.
pub fn parse_size(input: &str) -> Result<u64, ParseError> {
    let s = input.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    if num.is_empty() {
        return Err(err(
            "size",
            input,
            "expected a number such as 4096, 4K or 4M",
        ));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| err("size", input, "number too large"))?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(err(
                "size",
                input,
                "unknown unit (use K, M, G or T; binary multiples)",
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| err("size", input, "too large"))
}

/// Parses a duration: a number of seconds, or a number with a unit
/// (`ms`, `s`, `m`, `h`): `60`, `60s`, `500ms`, `5m`, `1.5s`.
pub fn parse_duration(input: &str) -> Result<Duration, ParseError> {
    let s = input.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err(err(
            "duration",
            input,
            "expected a number such as 60, 30s or 5m",
        ));
    }
    let n: f64 = num
        .parse()
        .map_err(|_| err("duration", input, "not a number"))?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err("duration", input, "unknown unit (use ms, s, m or h)")),
    };
    let secs = n * scale;
    if !secs.is_finite() || secs > 365.0 * 86400.0 {
        return Err(err("duration", input, "too long"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A latency given in ns as ms in a line of prose, to about three
/// significant figures: `412`, `41.2`, `4.12`, `0.412`.
pub fn ms_prose(ns: f64) -> String {
    let v = ns / 1e6;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Formats a byte count with a binary unit, e.g. `4 KiB`, `4 MiB`, `1.5 GiB`.
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[i])
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// A Unix time (seconds) as a date and time in UTC, ISO 8601:
/// `2026-12-04T21:47:05Z`. Days to a civil date by Howard Hinnant's
/// `civil_from_days` (proleptic Gregorian).
pub fn fmt_utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

/// A whole number with thousands separators, e.g. `1,480`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// OSD names, in id order, runs of four or more consecutive ids folded
/// (`osd.0, osd.1, osd.2`, `osd.0–osd.29, osd.31`), so that many OSDs do
/// not flood a line.
pub fn osd_list(ids: &[i32]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if j - i >= 3 {
            out.push(format!("osd.{}–osd.{}", ids[i], ids[j]));
        } else {
            out.extend(ids[i..=j].iter().map(|o| format!("osd.{o}")));
        }
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unix times as `date -u +%FT%TZ` prints them: the epoch, a leap
    /// day, the turn of a century that is a leap year, and the issue's.
    #[test]
    fn unix_times_read_as_utc_dates() {
        assert_eq!(fmt_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(fmt_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(fmt_utc(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(fmt_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(fmt_utc(1_796_434_425), "2026-12-05T01:33:45Z");
        assert_eq!(fmt_utc(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert_eq!(parse_size("10G"), Ok(10 << 30));
        assert_eq!(parse_size(" 1t "), Ok(1 << 40));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-4K").is_err());
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("1e999").is_err());
        assert!(parse_duration("99999999h").is_err());
        let e = parse_duration("abc").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid duration 'abc': expected a number such as 60, 30s or 5m"
        );
    }

    #[test]
    fn byte_formatting() {
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(4 << 20), "4 MiB");
        assert_eq!(fmt_bytes(1536), "1.50 KiB");
        assert_eq!(fmt_bytes(100), "100 B");
    }
}
