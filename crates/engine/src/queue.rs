//! The event queue: events ordered by (time, sequence).
//!
//! The sequence number makes the order of equal-time events the order in which
//! they were scheduled, which is what makes runs deterministic.
//!
//! Structure: a timing wheel of [`WHEEL`] buckets, each 1.024 ns wide,
//! covers the near future; events beyond its horizon wait in a binary heap and
//! move into the wheel as time approaches them. Packet events (serialisation
//! plus propagation: a few microseconds at most) land in the wheel with a
//! push at the end of their bucket, which reads none of the bucket's entries;
//! a bucket is sorted, if it was filled out of order, when it becomes the one
//! being drained (by a branch-free network up to 4 events, a radix sort on the
//! time for big buckets, a comparison sort otherwise), and pushes into that
//! bucket go straight to their place. Events are stored packed in 8 bytes
//! ([`Packed`]), so an entry is 16.
//! Timers and far arrivals use the heap. The pop order is exactly the
//! (time, sequence) order of a plain binary heap (docs/performance.md has the
//! measurements that led here; a test below checks the order against one).

use crate::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::marker::PhantomData;

/// An event the queue stores as 8 bytes, so that a wheel entry is 16 (at
/// 1,024 hosts the wheel holds megabytes of pending packet events, and its
/// pushes are among the event loop's cache misses).
/// `pop` returns a `Popped`, which may be another type than the one
/// scheduled (say, a struct that reads without a branch on the kind, where
/// the scheduled type is an enum).
pub trait Packed: Copy {
    type Popped;
    fn pack(self) -> u64;
    fn unpack(bits: u64) -> Self::Popped;
}

impl Packed for u64 {
    type Popped = u64;
    #[inline(always)]
    fn pack(self) -> u64 {
        self
    }
    #[inline(always)]
    fn unpack(bits: u64) -> u64 {
        bits
    }
}

/// log2 of the bucket width in picoseconds (1.024 ns).
const BUCKET_BITS: u32 = 10;
/// log2 of the number of buckets: the wheel spans 4096 x 1.024 ns = 4.2 us.
const WHEEL_BITS: u32 = 12;
const WHEEL: u64 = 1 << WHEEL_BITS;
const MASK: u64 = WHEEL - 1;

/// Bits of a wheel key that hold the sequence number; the bits above hold the
/// event's time within its bucket.
const SEQ_BITS: u32 = 64 - BUCKET_BITS;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// An event in the wheel. Its bucket is known from where it is stored, so the
/// key needs only (time within the bucket, sequence): one u64 comparison
/// orders a bucket, and entries stay small.
#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    event: u64,
}

/// An event beyond the wheel's horizon: the full (time, sequence) key.
#[derive(Clone, Copy)]
struct Far {
    /// (time << 64) | seq.
    key: u128,
    event: u64,
}

impl Far {
    #[inline]
    fn bucket(&self) -> u64 {
        (self.key >> (64 + BUCKET_BITS)) as u64
    }

    #[inline]
    fn entry(&self) -> Entry {
        let time = (self.key >> 64) as u64;
        Entry { key: wheel_key(time, self.key as u64), event: self.event }
    }
}

/// The wheel key of an event at `time` with sequence number `seq`.
#[inline(always)]
fn wheel_key(time: Time, seq: u64) -> u64 {
    ((time & ((1 << BUCKET_BITS) - 1)) << SEQ_BITS) | (seq & SEQ_MASK)
}

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Far {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

pub struct EventQueue<E> {
    /// The bucket being drained (absolute number `cur`), ascending; the events
    /// before `head` have been popped.
    active: Vec<Entry>,
    head: usize,
    cur: u64,
    /// Buckets cur+1 .. cur+WHEEL-1 at index (bucket & MASK), in push order.
    wheel: Vec<Vec<Entry>>,
    /// One bit per wheel slot: non-empty.
    occupied: Vec<u64>,
    /// One bit per wheel slot: holds an event that came from the far heap
    /// (so its entries are not in sequence order).
    from_far: Vec<u64>,
    /// Room for the radix sort of a big bucket.
    scratch: Vec<Entry>,
    in_wheel: usize,
    /// Events at bucket >= cur + WHEEL, earliest first.
    far: BinaryHeap<Reverse<Far>>,
    seq: u64,
    now: Time,
    popped: u64,
    /// Buckets that took the checked sort when they became active (tests).
    #[cfg(test)]
    resorted: u64,
    event: PhantomData<E>,
}

impl<E: Packed> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Inserts `e` into the ascending `v` at its place (not before `lo`); a new
/// event almost always belongs at the end.
#[inline(always)]
fn insert_sorted(v: &mut Vec<Entry>, e: Entry, lo: usize) {
    match v.last() {
        Some(last) if last.key > e.key => {
            // Keys are unique (the sequence number).
            let at = lo + v[lo..].iter().rposition(|x| x.key < e.key).map_or(0, |i| i + 1);
            v.insert(at, e);
        }
        _ => v.push(e),
    }
}

/// Puts entries `i` < `j` in key order, without a branch.
#[inline(always)]
fn exchange(v: &mut [Entry], i: usize, j: usize) {
    let (a, b) = (v[i], v[j]);
    let m = ((a.key > b.key) as u64).wrapping_neg(); // all ones: swap
    v[i] = Entry { key: (b.key & m) | (a.key & !m), event: (b.event & m) | (a.event & !m) };
    v[j] = Entry { key: (a.key & m) | (b.key & !m), event: (a.event & m) | (b.event & !m) };
}

/// Buckets of more events than this that need sorting take the radix sort.
const RADIX_MIN: usize = 32;

/// Sorts a bucket whose entries stand in push order, hence in sequence
/// order, by their time within the bucket: two stable counting passes of 5
/// bits each, so equal times keep their sequence order and the result is the
/// (time, sequence) order. At 1,024 hosts a bucket holds about 150 events
/// pushed in no particular time order, and the comparison sort of them took
/// a tenth of the run (scenario d, SIRD).
fn radix_sort_by_time(v: &mut [Entry], scratch: &mut Vec<Entry>) {
    const DIGIT: u32 = BUCKET_BITS / 2;
    let digit = |e: &Entry, pass: u32| ((e.key >> (SEQ_BITS + pass * DIGIT)) & ((1 << DIGIT) - 1)) as usize;
    let mut counts = [[0u32; 1 << DIGIT]; 2];
    for e in v.iter() {
        counts[0][digit(e, 0)] += 1;
        counts[1][digit(e, 1)] += 1;
    }
    for c in counts.iter_mut() {
        let mut sum = 0;
        for x in c.iter_mut() {
            (*x, sum) = (sum, sum + *x);
        }
    }
    scratch.clear();
    scratch.resize(v.len(), Entry { key: 0, event: 0 });
    for e in v.iter() {
        let d = &mut counts[0][digit(e, 0)];
        scratch[*d as usize] = *e;
        *d += 1;
    }
    for e in scratch.iter() {
        let d = &mut counts[1][digit(e, 1)];
        v[*d as usize] = *e;
        *d += 1;
    }
}

impl<E: Packed> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            active: Vec::with_capacity(64),
            head: 0,
            cur: 0,
            wheel: (0..WHEEL).map(|_| Vec::new()).collect(),
            occupied: vec![0; (WHEEL / 64) as usize],
            from_far: vec![0; (WHEEL / 64) as usize],
            scratch: Vec::new(),
            in_wheel: 0,
            far: BinaryHeap::new(),
            seq: 0,
            now: 0,
            popped: 0,
            #[cfg(test)]
            resorted: 0,
            event: PhantomData,
        }
    }

    /// Current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at absolute time `at`. Scheduling in the past is a logic error.
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: E) {
        let event = event.pack();
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        debug_assert!(self.seq < SEQ_MASK, "sequence numbers exhausted");
        let seq = self.seq;
        self.seq += 1;
        let b = at >> BUCKET_BITS;
        // `now` lies in bucket `cur` (the wheel only advances when a pop needs
        // it), so b >= cur.
        debug_assert!(b >= self.cur);
        if b == self.cur {
            // The bucket being drained (its popped events all have smaller keys).
            insert_sorted(&mut self.active, Entry { key: wheel_key(at, seq), event }, self.head);
        } else if b - self.cur < WHEEL {
            self.push_wheel(b, Entry { key: wheel_key(at, seq), event });
        } else {
            self.far.push(Reverse(Far { key: ((at as u128) << 64) | seq as u128, event }));
        }
    }

    /// The event `pop` will return next, if it is already in the bucket being
    /// drained (so a caller can prefetch what that event will touch).
    #[inline(always)]
    pub fn peek_next(&self) -> Option<E::Popped> {
        self.active.get(self.head).map(|e| E::unpack(e.event))
    }

    /// Removes and returns the earliest event, advancing `now`.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E::Popped)> {
        if self.head == self.active.len() && !self.advance() {
            return None;
        }
        let e = self.active[self.head];
        self.head += 1;
        self.now = self.time_of(e.key);
        self.popped += 1;
        Some((self.now, E::unpack(e.event)))
    }

    /// The time of a key in the active bucket.
    #[inline(always)]
    fn time_of(&self, key: u64) -> Time {
        (self.cur << BUCKET_BITS) | (key >> SEQ_BITS)
    }

    /// Makes the next non-empty bucket the active one; false if none is left.
    #[cold]
    fn advance(&mut self) -> bool {
        if self.in_wheel > 0 {
            self.cur += self.distance_to_next_occupied();
        } else if let Some(Reverse(first)) = self.far.peek() {
            self.cur = first.bucket();
        } else {
            return false;
        }
        // The horizon moved: bring the far events it now covers into the wheel
        // (possibly into bucket `cur` itself).
        while let Some(Reverse(first)) = self.far.peek() {
            let b = first.bucket();
            if b - self.cur >= WHEEL {
                break;
            }
            let Reverse(e) = self.far.pop().expect("peeked");
            self.push_wheel(b, e.entry());
            self.from_far[(b & MASK) as usize / 64] |= 1 << ((b & MASK) % 64);
        }
        let slot = (self.cur & MASK) as usize;
        self.active.clear();
        self.head = 0;
        std::mem::swap(&mut self.active, &mut self.wheel[slot]);
        let bit = 1u64 << (slot % 64);
        self.occupied[slot / 64] &= !bit;
        let far_events = self.from_far[slot / 64] & bit != 0;
        self.from_far[slot / 64] &= !bit;
        // Keys are unique (the sequence number), so the order is total.
        let v = &mut self.active[..];
        match v.len() {
            0 | 1 => {}
            // Most buckets hold a few events, about half of them out of
            // order, in no pattern a branch predictor can learn: sorting
            // networks that select rather than branch.
            2 => exchange(v, 0, 1),
            3 => {
                exchange(v, 0, 1);
                exchange(v, 1, 2);
                exchange(v, 0, 1);
            }
            4 => {
                exchange(v, 0, 1);
                exchange(v, 2, 3);
                exchange(v, 0, 2);
                exchange(v, 1, 3);
                exchange(v, 1, 2);
            }
            // Bigger buckets: one pass to check the order, a sort only if needed.
            n if !v.windows(2).all(|w| w[0].key < w[1].key) => {
                if n > RADIX_MIN && !far_events {
                    radix_sort_by_time(v, &mut self.scratch);
                } else {
                    v.sort_unstable_by_key(|e| e.key);
                }
                #[cfg(test)]
                {
                    self.resorted += 1;
                }
            }
            _ => {}
        }
        self.in_wheel -= self.active.len();
        true
    }

    /// Appends `e` to wheel bucket `b`, which is sorted when it becomes the
    /// active one. The push reads nothing of the bucket's entries (comparing
    /// with its last entry was a cache miss on most pushes), so it is a store.
    #[inline(always)]
    fn push_wheel(&mut self, b: u64, e: Entry) {
        let slot = (b & MASK) as usize;
        self.wheel[slot].push(e);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_wheel += 1;
    }

    /// Buckets from `cur` to the next occupied wheel slot (at least 1).
    fn distance_to_next_occupied(&self) -> u64 {
        let start = (self.cur + 1) & MASK;
        // The length of `occupied`. Scan its words cyclically from the one
        // holding `start`; the first word is masked below `start`, and
        // revisited whole at the end.
        const WORDS: u64 = WHEEL / 64;
        for i in 0..=WORDS {
            let w = ((start / 64) + i) % WORDS;
            let mut bits = self.occupied[w as usize];
            if i == 0 {
                bits &= !0u64 << (start % 64);
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as u64;
                return 1 + ((slot + WHEEL - start) & MASK);
            }
        }
        unreachable!("in_wheel > 0 but no occupied slot")
    }

    /// Time of the earliest pending event (the queue is left as it is, so
    /// events may still be scheduled at any time from `now` on).
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.head < self.active.len() {
            return Some(self.time_of(self.active[self.head].key));
        }
        if self.in_wheel == 0 {
            return self.far.peek().map(|Reverse(f)| (f.key >> 64) as Time);
        }
        // Far events all lie beyond the wheel's buckets.
        let b = self.cur + self.distance_to_next_occupied();
        let slot = (b & MASK) as usize;
        let first = self.wheel[slot].iter().map(|e| e.key).min().expect("occupied");
        Some((b << BUCKET_BITS) | (first >> SEQ_BITS))
    }

    pub fn len(&self) -> usize {
        self.active.len() - self.head + self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const BUCKET_PS: Time = 1 << BUCKET_BITS;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(10, 1u64);
        q.schedule(5, 2);
        q.schedule(10, 3);
        q.schedule(5, 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, 2), (5, 4), (10, 1), (10, 3)]);
        assert_eq!(q.now(), 10);
        assert_eq!(q.events_processed(), 4);
    }

    type Xoshiro = rand_xoshiro::Xoshiro256PlusPlus;

    /// Drives the wheel and a plain binary heap of (time, seq) with the same
    /// random schedule, scheduled from inside the run as a simulator does:
    /// `initial` events in [0, `span`), then after each pop up to two more at
    /// `now + delay(rng)`. Checks the same pop order, peek time and length at
    /// every step; returns whether a big bucket was filled out of order (and
    /// so sorted when it became active).
    fn against_a_binary_heap(
        seed: u64,
        initial: usize,
        span: Time,
        mut delay: impl FnMut(&mut Xoshiro) -> Time,
    ) -> bool {
        let mut rng = Xoshiro::seed_from_u64(seed);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut schedule = |q: &mut EventQueue<u64>, reference: &mut BinaryHeap<Reverse<(Time, u64)>>, at| {
            q.schedule(at, seq);
            reference.push(Reverse((at, seq)));
            seq += 1;
        };
        for _ in 0..initial {
            let at = rng.gen_range(0..span);
            schedule(&mut q, &mut reference, at);
        }
        for _ in 0..60_000 {
            assert_eq!(q.peek_time(), reference.peek().map(|Reverse((t, _))| *t), "seed {seed}");
            let got = q.pop();
            assert_eq!(got, reference.pop().map(|Reverse(x)| x), "seed {seed}");
            let Some((now, _)) = got else { break };
            assert_eq!(q.len(), reference.len());
            for _ in 0..rng.gen_range(0..3) {
                let at = now + delay(&mut rng);
                schedule(&mut q, &mut reference, at);
            }
        }
        q.resorted > 0
    }

    /// Near, same-bucket, far and very far events.
    #[test]
    fn same_order_as_a_binary_heap() {
        for seed in 0..20u64 {
            against_a_binary_heap(seed, 50, 10 * BUCKET_PS, |rng| match rng.gen_range(0..10) {
                0 => 0,
                1 => rng.gen_range(0..BUCKET_PS),
                2 => rng.gen_range(0..WHEEL * BUCKET_PS * 3),
                3 => rng.gen_range(0..1_000_000_000_000),
                _ => rng.gen_range(0..4_000_000),
            });
        }
    }

    /// Crowded buckets (tens of events per 1.024 ns, as at 1,024 hosts), so
    /// that big buckets are filled out of order and sorted, with far events
    /// moving in among them and many equal times.
    #[test]
    fn same_order_as_a_binary_heap_with_crowded_buckets() {
        for seed in 0..10u64 {
            let sorted = against_a_binary_heap(seed, 200, 4 * BUCKET_PS, |rng| match rng.gen_range(0..20) {
                0 => WHEEL * BUCKET_PS + rng.gen_range(0..8 * BUCKET_PS),
                // A few picosecond values, so that equal times are common.
                1..=9 => 40 * BUCKET_PS + rng.gen_range(0..4),
                _ => rng.gen_range(30 * BUCKET_PS..50 * BUCKET_PS),
            });
            assert!(sorted, "seed {seed}: no big bucket was filled out of order");
        }
    }

    #[test]
    fn empty_then_refilled() {
        let mut q = EventQueue::new();
        assert_eq!(q.pop(), None);
        q.schedule(WHEEL * BUCKET_PS * 10, 1u64);
        q.schedule(3, 2);
        assert_eq!(q.peek_time(), Some(3));
        assert_eq!(q.pop(), Some((3, 2)));
        assert_eq!(q.pop(), Some((WHEEL * BUCKET_PS * 10, 1)));
        assert!(q.is_empty());
        q.schedule(WHEEL * BUCKET_PS * 10 + 1, 3);
        assert_eq!(q.pop(), Some((WHEEL * BUCKET_PS * 10 + 1, 3)));
    }
}
