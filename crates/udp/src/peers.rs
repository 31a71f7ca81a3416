//! Peers: UDP addresses mapped to the host ids SIRD uses (1..=max_peers; the
//! endpoint itself is host 0), each with a bounded filter of delivered messages,
//! its address-validation state and its response bucket.
//!
//! A peer is *validated* once it has proved that it receives what we send to
//! its address: a datagram from it echoes the token we put in our datagrams to
//! that address (docs/udp.md, "Defences"). Peers added by the application
//! (`add_peer`) are validated from the start: the application chose the address.

use fabriclab_engine::{Time, S};
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;

/// Application messages from one peer already delivered. Every id below
/// `contiguous` was delivered; ids below `floor` are refused; at most `cap` ids
/// above `floor` are remembered (sender ids count up from 0, so the contiguous
/// prefix normally keeps the set small).
#[derive(Debug, Default)]
pub struct DedupWindow {
    contiguous: u64,
    floor: u64,
    above: BTreeSet<u64>,
}

pub enum Seen {
    New,
    Delivered,
    /// Below the floor but not known delivered: a message overtaken by more than
    /// `dedup_window` newer ones (or a replay). Refused, never delivered twice.
    TooOld,
}

impl DedupWindow {
    pub fn check(&self, app: u64) -> Seen {
        if app < self.contiguous || self.above.contains(&app) {
            Seen::Delivered
        } else if app < self.floor {
            Seen::TooOld
        } else {
            Seen::New
        }
    }

    pub fn insert(&mut self, app: u64, cap: usize) {
        if app < self.floor {
            return;
        }
        self.above.insert(app);
        loop {
            if self.contiguous == self.floor && self.above.first() == Some(&self.floor) {
                self.above.pop_first();
                self.contiguous += 1;
                self.floor += 1;
            } else if self.above.len() > cap {
                // Forget the oldest delivered id; the gap below it becomes refused.
                self.floor = self.above.pop_first().expect("non-empty") + 1;
            } else {
                return;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.above.len()
    }

    pub fn is_empty(&self) -> bool {
        self.above.is_empty()
    }
}

/// Token bucket: `rate` tokens per second up to `burst`; starts full.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    tokens: f64,
    at: Time,
}

impl Bucket {
    pub fn full(burst: u32, now: Time) -> Bucket {
        Bucket { tokens: burst as f64, at: now }
    }

    /// Adds one token (up to `burst`): the peer's DATA earns it RESENDs.
    pub fn earn(&mut self, burst: u32) {
        self.tokens = (self.tokens + 1.0).min(burst as f64);
    }

    /// Takes one token if there is one.
    pub fn take(&mut self, now: Time, rate_per_s: f64, burst: u32) -> bool {
        let dt = now.saturating_sub(self.at) as f64 / S as f64;
        self.tokens = (self.tokens + dt * rate_per_s).min(burst as f64);
        self.at = now.max(self.at);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[derive(Debug)]
pub struct Peer {
    pub addr: SocketAddr,
    /// The peer endpoint's incarnation, once heard from.
    pub incarnation: Option<u64>,
    pub delivered: DedupWindow,
    /// Local ids of the messages being received from this peer.
    pub inbound: Vec<u64>,
    /// The address has proved that it receives our datagrams (or was configured).
    pub validated: bool,
    /// The peer's token for our address, echoed in every datagram we send it.
    pub their_token: u64,
    /// While unvalidated: datagram bytes received from and sent to the address.
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// RESENDs and repeated DONEs to this peer.
    pub responses: Bucket,
    /// Order of arrival in the table (eviction takes the oldest unvalidated).
    pub added: u64,
    /// The `mtu` the peer announced (an MTU datagram) when our DATA did not fit
    /// its own; None while it has not.
    pub mtu: Option<u32>,
}

/// Host id of a peer in the SIRD state machine.
pub type PeerId = u32;

pub struct Peers {
    by_addr: HashMap<SocketAddr, PeerId>,
    /// Index = host id; slot 0 is this endpoint.
    slots: Vec<Option<Peer>>,
    max: u32,
    burst: u32,
    added: u64,
}

impl Peers {
    /// A table of at most `max` peers whose response buckets hold `burst` tokens.
    pub fn new(max: u32, burst: u32) -> Peers {
        Peers { by_addr: HashMap::new(), slots: vec![None], max, burst, added: 0 }
    }

    fn fresh(&mut self, addr: SocketAddr, validated: bool, now: Time) -> Peer {
        self.added += 1;
        Peer {
            addr,
            incarnation: None,
            delivered: DedupWindow::default(),
            inbound: Vec::new(),
            validated,
            their_token: 0,
            rx_bytes: 0,
            tx_bytes: 0,
            responses: Bucket::full(self.burst, now),
            added: self.added,
            mtu: None,
        }
    }

    /// The oldest unvalidated peer: the one a new address may replace when the table is full.
    pub fn eviction_candidate(&self) -> Option<PeerId> {
        let unvalidated = self.slots.iter().enumerate().filter_map(|(i, p)| p.as_ref().map(|p| (i, p)));
        unvalidated.filter(|(_, p)| !p.validated).min_by_key(|(_, p)| p.added).map(|(i, _)| i as PeerId)
    }

    /// Gives slot `id` to `addr` (unvalidated), returning the peer it held.
    pub fn replace(&mut self, id: PeerId, addr: SocketAddr, now: Time) -> Option<Peer> {
        let new = self.fresh(addr, false, now);
        let old = self.slots.get_mut(id as usize)?.replace(new);
        if let Some(o) = &old {
            self.by_addr.remove(&o.addr);
        }
        self.by_addr.insert(addr, id);
        old
    }

    pub fn lookup(&self, addr: &SocketAddr) -> Option<PeerId> {
        self.by_addr.get(addr).copied()
    }

    /// The id of `addr`, adding it while there is room (`validated`: configured
    /// by the application; an existing peer is then marked validated too).
    pub fn add(&mut self, addr: SocketAddr, validated: bool, now: Time) -> Option<PeerId> {
        if let Some(id) = self.lookup(&addr) {
            if validated {
                self.get_mut(id).expect("mapped").validated = true;
            }
            return Some(id);
        }
        if self.slots.len() as u32 > self.max {
            return None;
        }
        let id = self.slots.len() as PeerId;
        let p = self.fresh(addr, validated, now);
        self.slots.push(Some(p));
        self.by_addr.insert(addr, id);
        Some(id)
    }

    pub fn get(&self, id: PeerId) -> Option<&Peer> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, id: PeerId) -> Option<&mut Peer> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }

    pub fn len(&self) -> usize {
        self.by_addr.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_addr.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_remembers_recent_ids_and_stays_bounded() {
        let mut w = DedupWindow::default();
        for id in [0, 1, 2, 5, 7] {
            w.insert(id, 4);
        }
        assert!(matches!(w.check(1), Seen::Delivered));
        assert_eq!(w.len(), 2);
        assert!(matches!(w.check(5), Seen::Delivered));
        assert!(matches!(w.check(3), Seen::New));
        for id in 10..100 {
            w.insert(id, 4);
        }
        assert!(w.len() <= 4);
        assert!(matches!(w.check(3), Seen::TooOld));
        assert!(matches!(w.check(99), Seen::Delivered));
    }

    #[test]
    fn peer_table_is_bounded() {
        let mut p = Peers::new(2, 8);
        let a = |port| SocketAddr::from(([127, 0, 0, 1], port));
        assert_eq!(p.add(a(1), true, 0), Some(1));
        assert_eq!(p.add(a(2), false, 0), Some(2));
        assert_eq!(p.add(a(1), false, 0), Some(1));
        assert_eq!(p.add(a(3), false, 0), None);
        // Only the unvalidated peer may be replaced.
        assert_eq!(p.eviction_candidate(), Some(2));
        assert_eq!(p.replace(2, a(3), 0).map(|o| o.addr), Some(a(2)));
        assert_eq!((p.lookup(&a(3)), p.lookup(&a(2))), (Some(2), None));
    }

    #[test]
    fn bucket_allows_the_burst_then_the_rate() {
        let mut b = Bucket::full(3, 0);
        let n = (0..10).filter(|_| b.take(0, 1000.0, 3)).count();
        assert_eq!(n, 3);
        // 1000 per second: one more token after 1 ms, never more than the burst.
        assert!(b.take(S / 1000, 1000.0, 3));
        assert!(!b.take(S / 1000, 1000.0, 3));
        assert_eq!((0..10).filter(|_| b.take(10 * S, 1000.0, 3)).count(), 3);
        b.earn(3);
        assert!(b.take(10 * S, 1000.0, 3));
    }
}
