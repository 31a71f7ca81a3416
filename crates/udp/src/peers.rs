//! Peers: UDP addresses mapped to the host ids SIRD uses (1..=max_peers; the
//! endpoint itself is host 0), each with a bounded filter of delivered messages.

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

#[derive(Debug)]
pub struct Peer {
    pub addr: SocketAddr,
    /// The peer endpoint's incarnation, once heard from.
    pub incarnation: Option<u32>,
    pub delivered: DedupWindow,
    /// Local ids of the messages being received from this peer.
    pub inbound: Vec<u64>,
}

/// Host id of a peer in the SIRD state machine.
pub type PeerId = u32;

pub struct Peers {
    by_addr: HashMap<SocketAddr, PeerId>,
    /// Index = host id; slot 0 is this endpoint.
    slots: Vec<Option<Peer>>,
    max: u32,
}

impl Peers {
    pub fn new(max: u32) -> Peers {
        Peers { by_addr: HashMap::new(), slots: vec![None], max }
    }

    pub fn lookup(&self, addr: &SocketAddr) -> Option<PeerId> {
        self.by_addr.get(addr).copied()
    }

    /// The id of `addr`, adding it while there is room.
    pub fn add(&mut self, addr: SocketAddr) -> Option<PeerId> {
        if let Some(id) = self.lookup(&addr) {
            return Some(id);
        }
        if self.slots.len() as u32 > self.max {
            return None;
        }
        let id = self.slots.len() as PeerId;
        self.slots.push(Some(Peer { addr, incarnation: None, delivered: DedupWindow::default(), inbound: Vec::new() }));
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
        let mut p = Peers::new(2);
        let a = |port| SocketAddr::from(([127, 0, 0, 1], port));
        assert_eq!(p.add(a(1)), Some(1));
        assert_eq!(p.add(a(2)), Some(2));
        assert_eq!(p.add(a(1)), Some(1));
        assert_eq!(p.add(a(3)), None);
    }
}
