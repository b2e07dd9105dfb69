//! The control protocol: one command per line on the UNIX control socket, one answer per
//! command (`ok` or `err MESSAGE`, after any data lines).
//!
//! ```text
//! delay SRC DST MICROS   one-way delay of frames entering at SRC and leaving at DST
//! show                   one line `SRC DST MICROS` per port pair (same segment, SRC != DST)
//! stats                  one line of counters
//! ping                   answers ok
//! ```
//!
//! SRC and DST are selectors: a port name, `*` (every port) or `@SEGMENT` (every port of a
//! segment).
#![forbid(unsafe_code)]

use std::fmt;

/// Largest accepted delay: 10 s.
pub const MAX_DELAY_US: u64 = 10_000_000;

/// Which ports a side of a `delay` command applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Every port.
    All,
    /// Every port of the named segment.
    Segment(String),
    /// One port, by name.
    Port(String),
}

impl Selector {
    fn parse(word: &str) -> Result<Self, ParseError> {
        if word == "*" {
            return Ok(Self::All);
        }
        if let Some(seg) = word.strip_prefix('@') {
            if !valid_name(seg) {
                return Err(ParseError(format!("bad segment name '{seg}'")));
            }
            return Ok(Self::Segment(seg.to_string()));
        }
        if !valid_name(word) {
            return Err(ParseError(format!(
                "bad port selector '{word}' (a port name, '*' or '@SEGMENT')"
            )));
        }
        Ok(Self::Port(word.to_string()))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("*"),
            Self::Segment(s) => write!(f, "@{s}"),
            Self::Port(p) => f.write_str(p),
        }
    }
}

/// Port and segment names: 1..32 of `[A-Za-z0-9_.-]`.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// One parsed control line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Set the one-way delay of every (src, dst) pair the selectors match.
    Delay {
        /// Ingress ports.
        src: Selector,
        /// Egress ports.
        dst: Selector,
        /// Delay in microseconds.
        micros: u64,
    },
    /// List the delay table.
    Show,
    /// Print the counters.
    Stats,
    /// Liveness check.
    Ping,
}

/// A control line that cannot be understood; the message says what is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

/// Parses one control line (surrounding whitespace ignored). `Ok(None)` for an empty line or
/// a `#` comment.
pub fn parse_line(line: &str) -> Result<Option<Command>, ParseError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let cmd = match words.as_slice() {
        ["delay", src, dst, us] => {
            let micros: u64 = us.parse().map_err(|_| {
                ParseError(format!(
                    "bad delay '{us}': want whole microseconds, e.g. 1000"
                ))
            })?;
            if micros > MAX_DELAY_US {
                return Err(ParseError(format!(
                    "delay {micros} us is above the maximum {MAX_DELAY_US} us"
                )));
            }
            Command::Delay {
                src: Selector::parse(src)?,
                dst: Selector::parse(dst)?,
                micros,
            }
        }
        ["delay", ..] => return Err(ParseError("usage: delay SRC DST MICROS".into())),
        ["show"] => Command::Show,
        ["stats"] => Command::Stats,
        ["ping"] => Command::Ping,
        [w, ..] => {
            return Err(ParseError(format!(
                "unknown command '{w}' (delay SRC DST MICROS | show | stats | ping)"
            )))
        }
        [] => return Ok(None),
    };
    Ok(Some(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_delay_lines() {
        assert_eq!(
            parse_line("delay cli osd0 1000\n").unwrap(),
            Some(Command::Delay {
                src: Selector::Port("cli".into()),
                dst: Selector::Port("osd0".into()),
                micros: 1000
            })
        );
        assert_eq!(
            parse_line("  delay * @cluster 0 ").unwrap(),
            Some(Command::Delay {
                src: Selector::All,
                dst: Selector::Segment("cluster".into()),
                micros: 0
            })
        );
        assert_eq!(parse_line("show").unwrap(), Some(Command::Show));
        assert_eq!(parse_line("stats").unwrap(), Some(Command::Stats));
        assert_eq!(parse_line("ping").unwrap(), Some(Command::Ping));
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("# comment").unwrap(), None);
    }

    #[test]
    fn rejects_bad_lines() {
        for bad in [
            "delay a b",
            "delay a b c d",
            "delay a b -1",
            "delay a b 1.5",
            "delay a b 10000001",
            "delay a/b c 1",
            "delay @ c 1",
            "delay a @x/y 1",
            "frobnicate",
            "show me",
        ] {
            let e = parse_line(bad).expect_err(bad);
            assert!(!e.0.is_empty());
        }
        assert!(parse_line("delay a b 10000000").is_ok());
    }

    #[test]
    fn selector_display_round_trips() {
        for s in ["*", "@public", "osd12"] {
            assert_eq!(Selector::parse(s).unwrap().to_string(), s);
        }
    }
}
