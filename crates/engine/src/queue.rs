//! The event queue: a binary min-heap keyed by (time, sequence).
//!
//! The sequence number makes the order of equal-time events the order in which
//! they were scheduled, which is what makes runs deterministic.

use crate::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    /// (time << 64) | seq, so one integer comparison orders the heap.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest-first.
        other.key.cmp(&self.key)
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self { heap: BinaryHeap::with_capacity(1 << 12), seq: 0, now: 0, popped: 0 }
    }

    /// Current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at absolute time `at`. Scheduling in the past is a logic error.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let key = ((at as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// Removes and returns the earliest event, advancing `now`.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.now = (e.key >> 64) as Time;
        self.popped += 1;
        Some((self.now, e.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule(5, 'b');
        q.schedule(10, 'c');
        q.schedule(5, 'd');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, 'b'), (5, 'd'), (10, 'a'), (10, 'c')]);
        assert_eq!(q.now(), 10);
        assert_eq!(q.events_processed(), 4);
    }
}
