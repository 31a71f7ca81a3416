//! A rate-limited control class at a switch port (PayDebt's token/debt queue,
//! issue 7): control packets wait in a queue of their own, leave no faster
//! than a fraction of the link, and are CE-marked above their own threshold.

use super::port::Enqueue;
use fabriclab_engine::{serialization_time, Time};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct ControlQueue {
    /// (packet, wire bytes), FIFO.
    queue: VecDeque<(u32, u32)>,
    bytes: u64,
    limit: u64,
    ecn_threshold: u64,
    /// The limiter's rate: a control packet of w bytes holds the class back
    /// for w / limited_rate after it starts.
    limited_rate_bps: u64,
    next_at: Time,
    /// A wake-up is scheduled for when the head becomes eligible.
    pub wake_pending: bool,
    pub drops: u64,
}

impl ControlQueue {
    pub fn new(limit: u64, ecn_threshold: u64, limited_rate_bps: u64) -> Self {
        ControlQueue {
            queue: VecDeque::new(),
            bytes: 0,
            limit,
            ecn_threshold,
            limited_rate_bps: limited_rate_bps.max(1),
            next_at: 0,
            wake_pending: false,
            drops: 0,
        }
    }

    /// Admits a control packet, or drops it when the class's buffer is full.
    pub fn enqueue(&mut self, pkt: u32, wire: u32) -> Enqueue {
        let after = self.bytes + wire as u64;
        if after > self.limit {
            self.drops += 1;
            return Enqueue::Dropped;
        }
        self.bytes = after;
        self.queue.push_back((pkt, wire));
        Enqueue::Queued { mark_ce: after > self.ecn_threshold }
    }

    /// The head, if the limiter lets it go at `now`.
    #[inline]
    pub fn pop_eligible(&mut self, now: Time) -> Option<u32> {
        let &(pkt, wire) = self.queue.front()?;
        if now < self.next_at {
            return None;
        }
        self.queue.pop_front();
        self.bytes -= wire as u64;
        self.next_at = now + serialization_time(wire as u64, self.limited_rate_bps);
        Some(pkt)
    }

    /// When the waiting head becomes eligible, if one waits.
    pub fn next_eligible(&self) -> Option<Time> {
        (!self.queue.is_empty()).then_some(self.next_at)
    }

    pub fn queued_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_spaces_packets_by_their_size_over_the_limited_rate() {
        // 1 Gbps limiter: an 84 B packet holds the class for 672 ns.
        let mut c = ControlQueue::new(200, 100, 1_000_000_000);
        assert_eq!(c.enqueue(1, 84), Enqueue::Queued { mark_ce: false });
        assert_eq!(c.enqueue(2, 84), Enqueue::Queued { mark_ce: true });
        assert_eq!(c.enqueue(3, 84), Enqueue::Dropped);
        assert_eq!(c.pop_eligible(0), Some(1));
        assert_eq!(c.pop_eligible(671_999), None);
        assert_eq!(c.next_eligible(), Some(672_000));
        assert_eq!(c.pop_eligible(672_000), Some(2));
        assert_eq!((c.next_eligible(), c.queued_bytes(), c.drops), (None, 0, 1));
    }
}
