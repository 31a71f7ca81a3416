//! The FIFO queues of every port's priority classes, as linked lists threaded
//! through packet slots: a queue is a (head, tail) pair in one dense table and
//! each queued packet names the one behind it.
//!
//! Why not a `VecDeque` per class: its header lives in a separate allocation
//! behind each port, and at 1,024 hosts reading it was a cache miss on almost
//! every enqueue (docs/performance.md). The table here holds 8 bytes per
//! class, so a whole fabric's queues stay in cache, and dequeuing reads only
//! the link of the packet about to be sent.

/// No packet: an empty queue's head and tail.
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Fifo {
    head: u32,
    tail: u32,
}

const EMPTY: Fifo = Fifo { head: NIL, tail: NIL };

/// All class queues of a fabric. A packet (a slot of the packet slab) is in at
/// most one queue at a time: it waits at one port.
#[derive(Debug, Default)]
pub struct Fifos {
    queues: Vec<Fifo>,
    /// The packet queued behind each packet slot. A queue's tail has no
    /// successor and its entry is stale: the end is found by comparing with
    /// the tail, so a push writes no terminator.
    next: Vec<u32>,
}

impl Fifos {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `n` empty queues and returns the number of the first.
    pub fn add(&mut self, n: usize) -> u32 {
        let first = self.queues.len() as u32;
        self.queues.resize(self.queues.len() + n, EMPTY);
        first
    }

    /// Appends packet `pkt` to queue `q`.
    #[inline(always)]
    pub fn push(&mut self, q: u32, pkt: u32) {
        let i = pkt as usize;
        if i >= self.next.len() {
            self.grow(i);
        }
        let f = &mut self.queues[q as usize];
        if f.head == NIL {
            f.head = pkt;
        } else {
            self.next[f.tail as usize] = pkt;
        }
        f.tail = pkt;
    }

    #[cold]
    fn grow(&mut self, i: usize) {
        self.next.resize((i + 1).next_power_of_two().max(1 << 12), NIL);
    }

    /// Removes and returns the head of queue `q`.
    #[inline(always)]
    pub fn pop(&mut self, q: u32) -> Option<u32> {
        let f = &mut self.queues[q as usize];
        let pkt = f.head;
        if pkt == NIL {
            return None;
        }
        if pkt == f.tail {
            *f = EMPTY;
        } else {
            f.head = self.next[pkt as usize];
        }
        Some(pkt)
    }

    #[inline(always)]
    pub fn is_empty(&self, q: u32) -> bool {
        self.queues[q as usize].head == NIL
    }

    /// Packets in queue `q` (walks the queue).
    #[cfg(test)]
    fn len(&self, q: u32) -> usize {
        let Fifo { head, tail } = self.queues[q as usize];
        if head == NIL {
            return 0;
        }
        let mut n = 1;
        let mut at = head;
        while at != tail {
            at = self.next[at as usize];
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn queues_are_fifo_and_independent() {
        let mut f = Fifos::new();
        let (a, b) = (f.add(1), f.add(1));
        assert_eq!((a, b), (0, 1));
        f.push(a, 7);
        f.push(b, 9000);
        f.push(a, 3);
        assert_eq!((f.len(a), f.len(b)), (2, 1));
        assert_eq!(f.pop(a), Some(7));
        assert_eq!(f.pop(b), Some(9000));
        assert!(f.is_empty(b));
        assert_eq!(f.pop(a), Some(3));
        assert_eq!(f.pop(a), None);
        // A slot freed and reused joins a queue afresh.
        f.push(b, 7);
        f.push(b, 3);
        assert_eq!((f.pop(b), f.pop(b), f.pop(b)), (Some(7), Some(3), None));
    }

    /// Random pushes and pops over several queues, checked against a VecDeque
    /// per queue; packet slots are reused as a slab reuses them.
    #[test]
    fn same_as_a_deque_per_queue() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let mut f = Fifos::new();
        let first = f.add(4);
        let mut want: Vec<VecDeque<u32>> = vec![VecDeque::new(); 4];
        let mut free: Vec<u32> = (0..64).collect();
        for _ in 0..100_000 {
            let q = rng.gen_range(0..4u32);
            if rng.gen_bool(0.5) && !free.is_empty() {
                let pkt = free.swap_remove(rng.gen_range(0..free.len()));
                f.push(first + q, pkt);
                want[q as usize].push_back(pkt);
            } else {
                let got = f.pop(first + q);
                assert_eq!(got, want[q as usize].pop_front());
                free.extend(got);
            }
            assert_eq!(f.len(first + q), want[q as usize].len());
        }
    }
}
