//! Protocol-neutral pieces shared by the transports: reassembly of a message
//! from packets, DCTCP's congestion estimator (used by DCTCP itself and by
//! SIRD's two AIMD loops), and a host's one-packet-per-slot pacer (NDP's
//! pull pacer, PayDebt's control class).

use fabriclab_engine::Time;

/// Tracks which packets of one inbound message have arrived.
#[derive(Clone, Debug)]
pub struct Reassembly {
    bits: Vec<u64>,
    n_packets: u64,
    received_packets: u64,
    received_bytes: u64,
    size: u64,
}

impl Reassembly {
    pub fn new(size: u64, mss: u32) -> Self {
        let n_packets = crate::net::wire::packets_for(size, mss);
        Reassembly {
            bits: vec![0; n_packets.div_ceil(64) as usize],
            n_packets,
            received_packets: 0,
            received_bytes: 0,
            size,
        }
    }

    /// Records packet `index` carrying `bytes`; returns true if it is new.
    pub fn insert(&mut self, index: u64, bytes: u32) -> bool {
        debug_assert!(index < self.n_packets);
        let (w, b) = ((index / 64) as usize, index % 64);
        if self.bits[w] & (1 << b) != 0 {
            return false;
        }
        self.bits[w] |= 1 << b;
        self.received_packets += 1;
        self.received_bytes += bytes as u64;
        true
    }

    pub fn has(&self, index: u64) -> bool {
        self.bits[(index / 64) as usize] & (1 << (index % 64)) != 0
    }

    pub fn is_complete(&self) -> bool {
        self.received_packets == self.n_packets
    }

    pub fn received_bytes(&self) -> u64 {
        self.received_bytes
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn n_packets(&self) -> u64 {
        self.n_packets
    }

    /// First packet index not yet received at or after `from`. A word of
    /// the bitmap at a time: some transports ask from 0 at every packet, and
    /// a bit at a time made that quadratic in the message's length.
    pub fn first_missing(&self, from: u64) -> Option<u64> {
        if from >= self.n_packets {
            return None;
        }
        let mut w = (from / 64) as usize;
        let mut holes = !self.bits[w] & (!0u64 << (from % 64));
        while holes == 0 {
            w += 1;
            holes = !*self.bits.get(w)?;
        }
        // The bits past the last packet are never set, so they read as holes.
        let i = w as u64 * 64 + holes.trailing_zeros() as u64;
        (i < self.n_packets).then_some(i)
    }
}

/// DCTCP's estimate of the extent of congestion (Alizadeh et al., SIGCOMM'10):
/// `alpha <- (1 - g) * alpha + g * F` once per window, where F is the fraction
/// of bytes marked in that window.
#[derive(Clone, Debug)]
pub struct DctcpAlpha {
    pub alpha: f64,
    pub g: f64,
    marked: u64,
    total: u64,
}

impl DctcpAlpha {
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        DctcpAlpha { alpha: initial_alpha, g, marked: 0, total: 0 }
    }

    /// Counts `bytes` acknowledged/received in the current window.
    #[inline]
    pub fn observe(&mut self, bytes: u64, marked: bool) {
        self.total += bytes;
        if marked {
            self.marked += bytes;
        }
    }

    /// Ends the current window: updates alpha and returns whether any byte was marked.
    pub fn end_window(&mut self) -> bool {
        let any = self.marked > 0;
        if self.total > 0 {
            let f = self.marked as f64 / self.total as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        }
        self.marked = 0;
        self.total = 0;
        any
    }

    pub fn window_bytes(&self) -> u64 {
        self.total
    }
}

/// Lets a host's packets of one kind out at most one per `spacing` (NDP's
/// PULLs, PayDebt's tokens and debts), and keeps at most one timer armed for
/// the next slot: a pacer with work asks for a timer once per slot, not once
/// per poll.
#[derive(Clone, Debug)]
pub struct SlotPacer {
    spacing: Time,
    next_at: Time,
    timer_at: Option<Time>,
}

impl SlotPacer {
    /// Slots `spacing` apart (at least 1 ps).
    pub fn new(spacing: Time) -> Self {
        SlotPacer { spacing: spacing.max(1), next_at: 0, timer_at: None }
    }

    /// Whether a packet may leave at `now`. If not, `arm` is called with the
    /// next slot's time, unless a timer is already armed for it.
    #[inline]
    pub fn ready(&mut self, now: Time, arm: impl FnOnce(Time)) -> bool {
        if now >= self.next_at {
            return true;
        }
        if self.timer_at != Some(self.next_at) {
            self.timer_at = Some(self.next_at);
            arm(self.next_at);
        }
        false
    }

    /// A packet left at `now`: the next slot opens `spacing` later.
    #[inline]
    pub fn sent(&mut self, now: Time) {
        self.next_at = now + self.spacing;
    }

    /// The pacer's timer fired at `now` (an earlier, superseded one is ignored).
    #[inline]
    pub fn timer_fired(&mut self, now: Time) {
        if self.timer_at == Some(now) {
            self.timer_at = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_pacer_arms_one_timer_per_slot() {
        let mut p = SlotPacer::new(10);
        let mut armed = Vec::new();
        assert!(p.ready(0, |t| armed.push(t)));
        p.sent(0);
        assert!(!p.ready(3, |t| armed.push(t)));
        assert!(!p.ready(5, |t| armed.push(t)));
        assert_eq!(armed, [10], "one timer for the slot, however often polled");
        p.timer_fired(10);
        assert!(p.ready(10, |t| armed.push(t)));
        p.sent(12);
        assert!(!p.ready(15, |t| armed.push(t)));
        assert_eq!(armed, [10, 22]);
        // A zero spacing (a rounded-down rate) still spaces packets by 1 ps.
        let mut z = SlotPacer::new(0);
        z.sent(7);
        assert!(!z.ready(7, |_| {}) && z.ready(8, |_| {}));
    }

    #[test]
    fn reassembly_counts_unique_bytes() {
        let mut r = Reassembly::new(3000, 1460);
        assert_eq!(r.n_packets(), 3);
        assert!(r.insert(2, 80));
        assert!(!r.insert(2, 80));
        assert!(r.insert(0, 1460));
        assert_eq!(r.first_missing(0), Some(1));
        assert!(!r.is_complete());
        assert!(r.insert(1, 1460));
        assert!(r.is_complete());
        assert_eq!(r.received_bytes(), 3000);
    }

    /// The word-at-a-time search agrees with the definition, a packet at a
    /// time, at every start, for random fills of messages that end inside a
    /// word and on a word's boundary.
    #[test]
    fn first_missing_is_the_first_hole() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for n in [1u64, 63, 64, 65, 128, 200] {
            for fill in [0.0, 0.5, 0.95, 1.0] {
                let mut r = Reassembly::new(n * 100, 100);
                for i in 0..n {
                    if rng.gen_bool(fill) {
                        r.insert(i, 100);
                    }
                }
                for from in 0..=n + 1 {
                    let want = (from..n).find(|&i| !r.has(i));
                    assert_eq!(r.first_missing(from), want, "n {n}, fill {fill}, from {from}");
                }
            }
        }
    }

    #[test]
    fn alpha_converges_to_marked_fraction() {
        let mut a = DctcpAlpha::new(1.0 / 16.0, 0.0);
        for _ in 0..500 {
            a.observe(3, true);
            a.observe(1, false);
            a.end_window();
        }
        assert!((a.alpha - 0.75).abs() < 1e-6);
    }

    #[test]
    fn slot_map_keeps_slots_and_reuses_freed_ones() {
        let mut m = SlotMap::default();
        let (a, b) = (m.insert(10, "a"), m.insert(20, "b"));
        assert_ne!(a, b);
        assert_eq!((m.slot(10), m.get(20), m.len()), (Some(a), Some(&"b"), 2));
        assert_eq!(m.remove(10), Some((a, "a")));
        assert_eq!((m.remove(10), m.get(10), m.try_at(a)), (None, None, None));
        // A freed slot is reused: a list holding (slot, id) tells the new value by its id.
        let c = m.insert(30, "c");
        assert_eq!((c, m.try_at(c), m.at(b)), (a, Some(&"c"), &"b"));
        *m.get_mut(30).unwrap() = "d";
        assert_eq!((m.at(c), m.len(), m.is_empty()), (&"d", 2, false));
    }

    /// Against a `BTreeSet` driven with the same random inserts, removals and
    /// replacements (moving keys both ways, to both ends).
    #[test]
    fn sorted_set_matches_a_btree_set() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let (mut s, mut b) = (SortedSet::default(), std::collections::BTreeSet::new());
        for _ in 0..20_000 {
            let k: (u16, u8) = (rng.gen_range(0..64), rng.gen_range(0..4));
            match rng.gen_range(0..3) {
                0 => assert_eq!(s.insert(k), b.insert(k)),
                1 => assert_eq!(s.remove(&k), b.remove(&k)),
                _ => {
                    if let Some(&old) = b.iter().nth(rng.gen_range(0..b.len().max(1))) {
                        if !b.contains(&k) {
                            s.replace(&old, k);
                            b.remove(&old);
                            b.insert(k);
                        }
                    }
                }
            }
            assert!(s.iter().eq(b.iter()));
            assert_eq!((s.first(), s.len(), s.is_empty()), (b.first(), b.len(), b.is_empty()));
        }
    }
}

/// Hasher for message ids and other small integer keys: one multiply
/// (Fibonacci hashing). Deterministic, and much cheaper than SipHash on the
/// per-packet path; keys are simulator-assigned, so no flooding concern.
#[derive(Clone, Copy, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64)
    }
}

pub type IdMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;
pub type IdSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<IdHasher>>;

/// Values keyed by a message id, each also reachable by a slot number that stays
/// the same while the value is stored. Per-packet code finds a value by id once;
/// lists that are scanned on every poll (a sender's ready messages, a receiver's
/// grantable ones) hold slots and read them without hashing. A removed value's
/// slot is reused by a later insert.
pub struct SlotMap<T> {
    slots: IdMap<u64, u32>,
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for SlotMap<T> {
    fn default() -> Self {
        SlotMap { slots: IdMap::default(), items: Vec::new(), free: Vec::new() }
    }
}

impl<T> SlotMap<T> {
    pub fn slot(&self, id: u64) -> Option<u32> {
        self.slots.get(&id).copied()
    }

    pub fn contains(&self, id: u64) -> bool {
        self.slots.contains_key(&id)
    }

    pub fn get(&self, id: u64) -> Option<&T> {
        self.slot(id).map(|s| self.at(s))
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        self.slot(id).map(|s| self.at_mut(s))
    }

    /// The value in `slot`, if that slot holds one.
    #[inline]
    pub fn try_at(&self, slot: u32) -> Option<&T> {
        self.items.get(slot as usize)?.as_ref()
    }

    #[inline]
    pub fn try_at_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.items.get_mut(slot as usize)?.as_mut()
    }

    /// The value in `slot`, which must hold one.
    #[inline]
    pub fn at(&self, slot: u32) -> &T {
        self.items[slot as usize].as_ref().expect("live slot")
    }

    #[inline]
    pub fn at_mut(&mut self, slot: u32) -> &mut T {
        self.items[slot as usize].as_mut().expect("live slot")
    }

    /// Stores `value` under `id` (which must be absent) and returns its slot.
    pub fn insert(&mut self, id: u64, value: T) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = Some(value);
                s
            }
            None => {
                self.items.push(Some(value));
                (self.items.len() - 1) as u32
            }
        };
        let old = self.slots.insert(id, slot);
        debug_assert!(old.is_none(), "id {id} inserted twice");
        slot
    }

    /// Removes the value of `id`, returning the slot it had and the value.
    pub fn remove(&mut self, id: u64) -> Option<(u32, T)> {
        let slot = self.slots.remove(&id)?;
        self.free.push(slot);
        Some((slot, self.items[slot as usize].take().expect("live slot")))
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The items held, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }
}

/// A small ordered set kept as a sorted vector: iteration in ascending order, as
/// a `BTreeSet`'s, without its node allocations and pointer chasing. Meant for
/// the SRPT sets a host keeps (a few to a few hundred entries), where moving a
/// key costs a short `memmove`; [`SortedSet::replace`] moves one key to its new
/// place in a single shift.
#[derive(Clone, Debug)]
pub struct SortedSet<K>(Vec<K>);

impl<K> Default for SortedSet<K> {
    fn default() -> Self {
        SortedSet(Vec::new())
    }
}

impl<K: Ord + Copy> SortedSet<K> {
    /// Adds `key`; returns false (and changes nothing) if it is already there.
    pub fn insert(&mut self, key: K) -> bool {
        match self.0.binary_search(&key) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, key);
                true
            }
        }
    }

    /// Removes `key`; returns whether it was there.
    pub fn remove(&mut self, key: &K) -> bool {
        match self.0.binary_search(key) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Removes `old` (which must be there) and adds `new` (which must not), as
    /// `remove` then `insert` would, shifting only the keys between the two places.
    pub fn replace(&mut self, old: &K, new: K) {
        let v = &mut self.0;
        let i = v.binary_search(old).expect("replaced key is in the set");
        if new < *old {
            let j = v[..i].partition_point(|k| *k < new);
            v[j..=i].rotate_right(1);
            v[j] = new;
        } else {
            let j = i + v[i + 1..].partition_point(|k| *k < new);
            v[i..=j].rotate_left(1);
            v[j] = new;
        }
        debug_assert!(v.windows(2).all(|w| w[0] < w[1]), "replace kept the set sorted and without duplicates");
    }

    pub fn first(&self) -> Option<&K> {
        self.0.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, K> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a, K> IntoIterator for &'a SortedSet<K> {
    type Item = &'a K;
    type IntoIter = std::slice::Iter<'a, K>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
