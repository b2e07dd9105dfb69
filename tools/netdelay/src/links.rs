//! One FIFO of delayed frames per (ingress, egress) link. Frames leave a link in the order
//! they entered it, each no earlier than its deadline: a frame whose deadline is earlier than
//! the one ahead of it (the delay was lowered) waits behind it. Frame buffers are recycled, so
//! a warmed-up switch does not allocate per frame.
#![forbid(unsafe_code)]

use std::collections::VecDeque;

struct Frame {
    deadline: u64,
    buf: Vec<u8>,
}

/// The per-link queues, and the list of links that hold frames.
pub struct Links {
    ports: usize,
    queues: Vec<VecDeque<Frame>>,
    active: Vec<usize>,
    is_active: Vec<bool>,
    pool: Vec<Vec<u8>>,
    limit: usize,
    dropped: u64,
    queued: usize,
}

impl Links {
    /// Queues for `ports`² links, each holding at most `limit` frames (more are dropped, as a
    /// switch with full buffers does).
    pub fn new(ports: usize, limit: usize) -> Self {
        Self {
            ports,
            queues: (0..ports * ports).map(|_| VecDeque::new()).collect(),
            active: Vec::new(),
            is_active: vec![false; ports * ports],
            pool: Vec::new(),
            limit: limit.max(1),
            dropped: 0,
            queued: 0,
        }
    }

    /// Whether link `link` holds no frame (then a zero-delay frame may bypass the queue).
    pub fn is_empty(&self, link: usize) -> bool {
        self.queues[link].is_empty()
    }

    /// Frames dropped because a link's queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Frames waiting in all queues.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Appends a copy of `frame` to `link`, to leave at `deadline` (ns) or later. Returns
    /// false (and counts a drop) when the queue is full.
    pub fn push(&mut self, link: usize, deadline: u64, frame: &[u8]) -> bool {
        let q = &mut self.queues[link];
        if q.len() >= self.limit {
            self.dropped += 1;
            return false;
        }
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(frame);
        q.push_back(Frame { deadline, buf });
        self.queued += 1;
        if !self.is_active[link] {
            self.is_active[link] = true;
            self.active.push(link);
        }
        true
    }

    /// Hands every frame that is due at `now` (ns) to `send(egress_port, frame)`, in FIFO
    /// order per link. Returns the earliest deadline still queued.
    pub fn release_due(&mut self, now: u64, mut send: impl FnMut(usize, &[u8])) -> Option<u64> {
        let mut next: Option<u64> = None;
        let mut i = 0;
        while i < self.active.len() {
            let link = self.active[i];
            let q = &mut self.queues[link];
            while let Some(f) = q.front() {
                if f.deadline > now {
                    break;
                }
                let f = q.pop_front().expect("front exists");
                send(link % self.ports, &f.buf);
                self.queued -= 1;
                self.pool.push(f.buf);
            }
            match q.front() {
                Some(f) => {
                    next = Some(next.map_or(f.deadline, |n| n.min(f.deadline)));
                    i += 1;
                }
                None => {
                    self.is_active[link] = false;
                    self.active.swap_remove(i);
                }
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(l: &mut Links, now: u64) -> (Vec<(usize, u8)>, Option<u64>) {
        let mut out = Vec::new();
        let next = l.release_due(now, |port, f| out.push((port, f[0])));
        (out, next)
    }

    #[test]
    fn fifo_per_link_even_when_the_delay_drops() {
        // 2 ports: link 1 = 0 -> 1.
        let mut l = Links::new(2, 100);
        assert!(l.is_empty(1));
        l.push(1, 1_000, &[1]); // sent with a 1000 ns delay at t=0
        l.push(1, 1_100, &[2]);
        l.push(1, 200, &[3]); // delay lowered: due earlier, but must wait behind 1 and 2
        assert!(!l.is_empty(1));
        assert_eq!(l.queued(), 3);
        assert_eq!(drain(&mut l, 500), (vec![], Some(1_000)));
        assert_eq!(drain(&mut l, 1_000), (vec![(1, 1)], Some(1_100)));
        assert_eq!(drain(&mut l, 1_100), (vec![(1, 2), (1, 3)], None));
        assert!(l.is_empty(1));
        assert_eq!(l.queued(), 0);
    }

    #[test]
    fn links_are_independent_and_next_is_the_earliest_head() {
        // 3 ports: link 0->1 = 1, 0->2 = 2, 2->0 = 6.
        let mut l = Links::new(3, 100);
        l.push(1, 5_000, &[10]);
        l.push(2, 3_000, &[20]);
        l.push(6, 4_000, &[30]);
        assert_eq!(drain(&mut l, 0), (vec![], Some(3_000)));
        assert_eq!(drain(&mut l, 3_500), (vec![(2, 20)], Some(4_000)));
        // A slow link does not hold back another one.
        let (out, next) = drain(&mut l, 4_000);
        assert_eq!(out, vec![(0, 30)]);
        assert_eq!(next, Some(5_000));
        l.push(2, 4_500, &[21]);
        let (mut out, next) = drain(&mut l, 10_000);
        out.sort();
        assert_eq!(out, vec![(1, 10), (2, 21)]);
        assert_eq!(next, None);
    }

    #[test]
    fn full_queue_drops_and_buffers_are_reused() {
        let mut l = Links::new(2, 2);
        assert!(l.push(1, 0, &[1; 100]));
        assert!(l.push(1, 0, &[2; 50]));
        assert!(!l.push(1, 0, &[3]));
        assert_eq!(l.dropped(), 1);
        let mut lens = Vec::new();
        l.release_due(0, |_, f| lens.push(f.len()));
        assert_eq!(lens, vec![100, 50]);
        assert_eq!(l.pool.len(), 2);
        assert!(l.push(1, 0, &[4; 10]));
        assert_eq!(l.pool.len(), 1, "a pooled buffer was taken");
        let mut got = Vec::new();
        l.release_due(0, |_, f| got.extend_from_slice(f));
        assert_eq!(got, vec![4; 10]);
    }
}
