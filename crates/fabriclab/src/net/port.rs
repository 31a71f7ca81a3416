//! An output-queued port: strict-priority FIFO classes sharing one byte budget,
//! drop-tail at the limit, ECN CE marking above a threshold.

use fabriclab_engine::Time;
use std::collections::VecDeque;

pub struct Port {
    /// Node that owns this port.
    pub node: u32,
    /// Node at the other end of the link.
    pub peer: u32,
    pub rate_bps: u64,
    /// Propagation delay, plus the peer switch's forwarding latency when the peer is a switch.
    pub delay: Time,
    /// Bytes held: queued plus the packet being serialised.
    pub bytes: u64,
    pub busy: bool,
    pub limit_bytes: u64,
    pub ecn_threshold: u64,
    /// Wire bytes of the packet being serialised.
    pub in_service: u32,
    pub max_bytes: u64,
    pub drops: u64,
    queues: Box<[VecDeque<u32>]>,
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued { mark_ce: bool },
    Dropped,
}

impl Port {
    pub fn new(node: u32, peer: u32, rate_bps: u64, delay: Time, classes: u8, limit: u64, ecn: u64) -> Self {
        Port {
            node,
            peer,
            rate_bps,
            delay,
            bytes: 0,
            busy: false,
            limit_bytes: limit,
            ecn_threshold: ecn,
            in_service: 0,
            max_bytes: 0,
            drops: 0,
            queues: (0..classes.max(1)).map(|_| VecDeque::new()).collect(),
        }
    }

    /// Admits packet `pkt` of `wire` bytes into class `prio` (clamped to the
    /// lowest class), or drops it if the buffer would overflow.
    #[inline]
    pub fn enqueue(&mut self, pkt: u32, wire: u32, prio: u8) -> Enqueue {
        let after = self.bytes + wire as u64;
        if after > self.limit_bytes {
            self.drops += 1;
            return Enqueue::Dropped;
        }
        self.bytes = after;
        self.max_bytes = self.max_bytes.max(after);
        let c = (prio as usize).min(self.queues.len() - 1);
        self.queues[c].push_back(pkt);
        Enqueue::Queued { mark_ce: after > self.ecn_threshold }
    }

    /// Next packet to serialise: head of the highest non-empty class.
    #[inline]
    pub fn dequeue(&mut self) -> Option<u32> {
        self.queues.iter_mut().find_map(|q| q.pop_front())
    }

    pub fn queued_packets(&self) -> usize {
        self.queues.iter().map(|q| q.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_then_fifo() {
        let mut p = Port::new(0, 1, 1, 0, 3, u64::MAX, u64::MAX);
        p.enqueue(10, 100, 2);
        p.enqueue(11, 100, 0);
        p.enqueue(12, 100, 2);
        p.enqueue(13, 100, 9); // clamped to class 2
        assert_eq!(p.bytes, 400);
        let order: Vec<_> = std::iter::from_fn(|| p.dequeue()).collect();
        assert_eq!(order, vec![11, 10, 12, 13]);
    }

    #[test]
    fn drop_tail_and_ecn() {
        let mut p = Port::new(0, 1, 1, 0, 1, 250, 150);
        assert_eq!(p.enqueue(1, 100, 0), Enqueue::Queued { mark_ce: false });
        assert_eq!(p.enqueue(2, 100, 0), Enqueue::Queued { mark_ce: true });
        assert_eq!(p.enqueue(3, 100, 0), Enqueue::Dropped);
        assert_eq!((p.bytes, p.drops, p.max_bytes), (200, 1, 200));
    }
}
