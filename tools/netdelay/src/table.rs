//! Ports, segments and the delay table (one-way delay per (ingress, egress) port pair).
#![forbid(unsafe_code)]

use crate::control::{valid_name, Selector};

/// Longest Linux interface name (IFNAMSIZ - 1).
pub const MAX_IFNAME: usize = 15;

/// One switch port as given on the command line: `NAME=IFNAME[@SEGMENT]` or `NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
    /// Name used by the control protocol.
    pub name: String,
    /// Name of the TAP device the switch creates (in its own network namespace).
    pub ifname: String,
    /// Broadcast domain: frames never cross segments.
    pub segment: String,
}

/// Parses `NAME=IFNAME[@SEGMENT]` (or `NAME[@SEGMENT]`, the TAP then named NAME). The default
/// segment is `default`.
pub fn parse_port_spec(s: &str) -> Result<PortSpec, String> {
    let (rest, segment) = match s.split_once('@') {
        Some((r, seg)) => (r, seg.to_string()),
        None => (s, "default".to_string()),
    };
    let (name, ifname) = match rest.split_once('=') {
        Some((n, i)) => (n.to_string(), i.to_string()),
        None => (rest.to_string(), rest.to_string()),
    };
    if !valid_name(&name) || !valid_name(&segment) {
        return Err(format!(
            "bad port '{s}': want NAME=IFNAME[@SEGMENT], names of [A-Za-z0-9_.-]"
        ));
    }
    if ifname.is_empty()
        || ifname.len() > MAX_IFNAME
        || !ifname
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "bad interface name '{ifname}' in port '{s}': 1..{MAX_IFNAME} of [A-Za-z0-9_-]"
        ));
    }
    Ok(PortSpec {
        name,
        ifname,
        segment,
    })
}

/// The delay of every ordered port pair, in nanoseconds.
#[derive(Debug, Clone)]
pub struct DelayTable {
    names: Vec<String>,
    segments: Vec<String>,
    delays_ns: Vec<u64>,
}

impl DelayTable {
    /// A table for these ports, every pair at `initial_us`. Port names and interface names
    /// must be unique.
    pub fn new(ports: &[PortSpec], initial_us: u64) -> Result<Self, String> {
        for (i, p) in ports.iter().enumerate() {
            for q in &ports[..i] {
                if q.name == p.name {
                    return Err(format!("port name '{}' given twice", p.name));
                }
                if q.ifname == p.ifname {
                    return Err(format!("interface name '{}' given twice", p.ifname));
                }
            }
        }
        let n = ports.len();
        Ok(Self {
            names: ports.iter().map(|p| p.name.clone()).collect(),
            segments: ports.iter().map(|p| p.segment.clone()).collect(),
            delays_ns: vec![initial_us * 1000; n * n],
        })
    }

    /// Number of ports.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Index of the link (src, dst) in per-link arrays of `len()²` entries.
    pub fn link(&self, src: usize, dst: usize) -> usize {
        src * self.names.len() + dst
    }

    /// One-way delay of frames entering at `src` and leaving at `dst`, ns.
    pub fn delay_ns(&self, src: usize, dst: usize) -> u64 {
        self.delays_ns[self.link(src, dst)]
    }

    /// Segment index equality: may a frame go from `a` to `b`?
    pub fn same_segment(&self, a: usize, b: usize) -> bool {
        self.segments[a] == self.segments[b]
    }

    /// Port name.
    pub fn name(&self, port: usize) -> &str {
        &self.names[port]
    }

    fn matches(&self, sel: &Selector) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| match sel {
                Selector::All => true,
                Selector::Segment(s) => &self.segments[i] == s,
                Selector::Port(p) => &self.names[i] == p,
            })
            .collect()
    }

    /// Sets the delay of every pair (s, d) with s matched by `src`, d by `dst`, s != d, both
    /// in one segment. Returns how many pairs were set; an error if a selector matches no port
    /// or no pair results.
    pub fn set(&mut self, src: &Selector, dst: &Selector, micros: u64) -> Result<usize, String> {
        let srcs = self.matches(src);
        let dsts = self.matches(dst);
        for (sel, v) in [(src, &srcs), (dst, &dsts)] {
            if v.is_empty() {
                return Err(format!(
                    "'{sel}' matches no port (ports: {})",
                    self.names.join(" ")
                ));
            }
        }
        let mut n = 0;
        for &s in &srcs {
            for &d in &dsts {
                if s != d && self.same_segment(s, d) {
                    let l = self.link(s, d);
                    self.delays_ns[l] = micros * 1000;
                    n += 1;
                }
            }
        }
        if n == 0 {
            return Err(format!(
                "'{src}' -> '{dst}' names no pair of distinct ports in one segment"
            ));
        }
        Ok(n)
    }

    /// `SRC DST MICROS` for every pair of distinct ports in one segment.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in 0..self.len() {
            for d in 0..self.len() {
                if s != d && self.same_segment(s, d) {
                    out.push(format!(
                        "{} {} {}",
                        self.names[s],
                        self.names[d],
                        self.delay_ns(s, d) / 1000
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> Vec<PortSpec> {
        [
            "cli=t-cli@pub",
            "osd0=t-p0@pub",
            "osd1=t-p1@pub",
            "osd0c=t-c0@clu",
            "osd1c=t-c1@clu",
        ]
        .iter()
        .map(|s| parse_port_spec(s).unwrap())
        .collect()
    }

    #[test]
    fn port_specs() {
        assert_eq!(
            parse_port_spec("a=tap1@seg").unwrap(),
            PortSpec {
                name: "a".into(),
                ifname: "tap1".into(),
                segment: "seg".into()
            }
        );
        let p = parse_port_spec("tap2").unwrap();
        assert_eq!(
            (p.name.as_str(), p.ifname.as_str(), p.segment.as_str()),
            ("tap2", "tap2", "default")
        );
        for bad in [
            "",
            "a=",
            "a=b@",
            "=b",
            "a=0123456789abcdef",
            "a=b.c",
            "a b=c",
            "a=b@s/t",
        ] {
            assert!(parse_port_spec(bad).is_err(), "{bad}");
        }
        assert!(parse_port_spec("a=0123456789abcde").is_ok());
        let mut dup = ports();
        dup.push(parse_port_spec("cli=other").unwrap());
        assert!(DelayTable::new(&dup, 0).is_err());
        let mut dup = ports();
        dup.push(parse_port_spec("x=t-cli").unwrap());
        assert!(DelayTable::new(&dup, 0).is_err());
    }

    #[test]
    fn delays_per_pair_and_segment() {
        let mut t = DelayTable::new(&ports(), 5).unwrap();
        assert_eq!(t.delay_ns(0, 1), 5000);
        // Within one segment, both directions, never self or cross-segment pairs.
        assert_eq!(
            t.set(
                &Selector::Segment("clu".into()),
                &Selector::Segment("clu".into()),
                1000
            ),
            Ok(2)
        );
        assert_eq!(t.delay_ns(3, 4), 1_000_000);
        assert_eq!(t.delay_ns(4, 3), 1_000_000);
        assert_eq!(t.delay_ns(1, 2), 5000);
        // One direction only.
        assert_eq!(
            t.set(&Selector::Port("cli".into()), &Selector::All, 250),
            Ok(2)
        );
        assert_eq!(t.delay_ns(0, 1), 250_000);
        assert_eq!(t.delay_ns(0, 2), 250_000);
        assert_eq!(t.delay_ns(1, 0), 5000);
        assert_eq!(t.delay_ns(0, 3), 5000, "cross-segment pair untouched");
        // All pairs: 5 ports, 3 + 2 in their segments: 3*2 + 2*1 = 8 ordered pairs.
        assert_eq!(t.set(&Selector::All, &Selector::All, 0), Ok(8));
        assert_eq!(t.lines().len(), 8);
        assert!(t.lines().iter().all(|l| l.ends_with(" 0")));
        // Errors name the fix.
        assert!(t
            .set(&Selector::Port("nope".into()), &Selector::All, 1)
            .unwrap_err()
            .contains("ports: cli"));
        assert!(t
            .set(
                &Selector::Port("cli".into()),
                &Selector::Port("osd0c".into()),
                1
            )
            .is_err());
        assert!(t
            .set(
                &Selector::Port("cli".into()),
                &Selector::Port("cli".into()),
                1
            )
            .is_err());
    }
}
