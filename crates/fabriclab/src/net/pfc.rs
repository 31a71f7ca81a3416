//! Priority flow control (IEEE 802.1Qbb) bookkeeping. A switch counts, per
//! ingress link and lossless class, the bytes it holds that arrived on that
//! link. Crossing XOFF queues a PAUSE frame for the upstream sender, falling to
//! XON a RESUME; the frames are sent by the switch's port on the reverse link
//! and take link time like any frame. The upstream port then holds the class
//! back, whatever the destinations behind it: head-of-line blocking emerges.
//!
//! Links are identified by the port that transmits onto them; ports come in
//! pairs, so the reverse of link `l` is port `l ^ 1` (see [`super::Fabric`]).

use std::collections::VecDeque;

/// The ingress link of a packet that crossed none.
pub const NO_LINK: u32 = u32::MAX;

pub struct Pfc {
    pub xoff: u64,
    pub xon: u64,
    pub headroom: u64,
    /// Bit c set: class c is lossless.
    pub lossless: u8,
    /// Bytes held per (link, class), at the switch the link leads to.
    ingress: Vec<u64>,
    /// Per link: classes the downstream switch has paused.
    paused: Vec<u8>,
    /// Frames (class, pause?) waiting to be sent, per port.
    pending: Vec<VecDeque<(u8, bool)>>,
    /// Per packet slot: the link it last crossed.
    link_of: Vec<u32>,
    /// Per port: the (link, class, bytes) of the lossless packet it is
    /// serialising, still counted at its ingress until the last bit has left
    /// (`queue_accounting = "until_last_bit"`); link NO_LINK when none.
    serving: Vec<(u32, u8, u32)>,
    /// Per host: a packet its NIC pulled for a paused class, waiting (slot or u32::MAX).
    pub held: Vec<u32>,
    pub pauses: u64,
    pub resumes: u64,
}

/// A PFC frame: a minimum Ethernet frame on the wire.
pub const FRAME_WIRE: u32 = super::wire::CONTROL_WIRE;

impl Pfc {
    pub fn new(xoff: u64, xon: u64, headroom: u64, lossless: u8, n_ports: usize, n_hosts: usize) -> Self {
        Pfc {
            xoff,
            xon,
            headroom,
            lossless,
            ingress: vec![0; n_ports * 8],
            paused: vec![0; n_ports],
            pending: (0..n_ports).map(|_| VecDeque::new()).collect(),
            link_of: Vec::new(),
            serving: vec![(NO_LINK, 0, 0); n_ports],
            held: vec![u32::MAX; n_hosts],
            pauses: 0,
            resumes: 0,
        }
    }

    #[inline]
    pub fn is_lossless(&self, class: u8) -> bool {
        self.lossless >> class & 1 != 0
    }

    /// Packet slot `idx` starts crossing link `link`.
    #[inline]
    pub fn tag(&mut self, idx: u32, link: u32) {
        let i = idx as usize;
        if i >= self.link_of.len() {
            self.link_of.resize(i + 1, u32::MAX);
        }
        self.link_of[i] = link;
    }

    #[inline]
    pub fn link_of(&self, idx: u32) -> u32 {
        // A packet made at a switch (Bolt's SRC) in a slot never tagged has
        // crossed no link: NO_LINK (found by tests/fuzz_config.rs).
        self.link_of.get(idx as usize).copied().unwrap_or(NO_LINK)
    }

    /// Whether the headroom above XOFF still fits `wire` more bytes from `link`.
    #[inline]
    pub fn fits(&self, link: u32, class: u8, wire: u32) -> bool {
        if link == NO_LINK {
            return true; // made here: no upstream to pause
        }
        self.ingress[link as usize * 8 + class as usize] + wire as u64 <= self.xoff + self.headroom
    }

    /// Counts `wire` bytes admitted from `link`; returns the port that must
    /// send a PAUSE upstream, if XOFF was crossed.
    #[inline]
    pub fn add(&mut self, link: u32, class: u8, wire: u32) -> Option<u32> {
        if link == NO_LINK {
            return None;
        }
        let b = &mut self.ingress[link as usize * 8 + class as usize];
        *b += wire as u64;
        if *b >= self.xoff && self.paused[link as usize] >> class & 1 == 0 {
            self.paused[link as usize] |= 1 << class;
            self.pauses += 1;
            self.pending[(link ^ 1) as usize].push_back((class, true));
            return Some(link ^ 1);
        }
        None
    }

    /// `wire` bytes from `link` left the switch; returns the port that must
    /// send a RESUME upstream, if the count fell to XON.
    #[inline]
    pub fn release(&mut self, link: u32, class: u8, wire: u32) -> Option<u32> {
        if link == NO_LINK {
            return None;
        }
        let b = &mut self.ingress[link as usize * 8 + class as usize];
        *b -= wire as u64;
        if *b <= self.xon && self.paused[link as usize] >> class & 1 != 0 {
            self.paused[link as usize] &= !(1 << class);
            self.resumes += 1;
            self.pending[(link ^ 1) as usize].push_back((class, false));
            return Some(link ^ 1);
        }
        None
    }

    /// Port `port` starts serialising `wire` bytes from `link` in `class`,
    /// which stay counted until [`Pfc::finish_serving`].
    #[inline]
    pub fn start_serving(&mut self, port: u32, link: u32, class: u8, wire: u32) {
        self.serving[port as usize] = (link, class, wire);
    }

    /// Port `port` finished serialising: its packet's bytes leave the
    /// ingress count ([`Pfc::release`]'s result).
    #[inline]
    pub fn finish_serving(&mut self, port: u32) -> Option<u32> {
        let (link, class, wire) = std::mem::replace(&mut self.serving[port as usize], (NO_LINK, 0, 0));
        self.release(link, class, wire)
    }

    /// The next frame port `port` must send, if any.
    #[inline]
    pub fn next_frame(&mut self, port: u32) -> Option<(u8, bool)> {
        self.pending[port as usize].pop_front()
    }

    /// Bytes held from `link` in `class`.
    pub fn ingress_bytes(&self, link: u32, class: u8) -> u64 {
        self.ingress[link as usize * 8 + class as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PFC frames go back on `link ^ 1`: ports must come in (a -> b, b -> a) pairs.
    #[test]
    fn ports_pair_up_with_their_reverse() {
        use crate::net::fat_tree::FatTree;
        use crate::net::topology_config::TopologyConfig;
        for topo in [FatTree { k: 4, ..FatTree::default() }.build(), TopologyConfig::default().build()] {
            let f = super::super::Fabric::build(topo, 1, u64::MAX, u64::MAX).unwrap();
            for (i, p) in f.ports.iter().enumerate() {
                let r = &f.ports[i ^ 1];
                assert_eq!((r.node, r.peer, r.rate_bps()), (p.peer, p.node, p.rate_bps()));
            }
        }
    }

    #[test]
    fn xoff_pauses_once_and_xon_resumes() {
        let mut p = Pfc::new(3000, 1000, 10_000, 0xff, 4, 1);
        assert_eq!(p.add(2, 1, 1500), None);
        assert_eq!(p.add(2, 1, 1500), Some(3));
        assert_eq!(p.add(2, 1, 1500), None); // already paused
        assert!(p.fits(2, 1, 1500) && !p.fits(2, 1, 10_000));
        assert_eq!(p.release(2, 1, 1500), None);
        assert_eq!(p.release(2, 1, 1500), None); // 1500 B left: above XON
        assert_eq!(p.release(2, 1, 1000), Some(3));
        assert_eq!(p.ingress_bytes(2, 1), 500);
        assert_eq!(p.next_frame(3), Some((1, true)));
        assert_eq!(p.next_frame(3), Some((1, false)));
        assert_eq!(p.next_frame(3), None);
        assert_eq!((p.pauses, p.resumes), (1, 1));
    }

    #[test]
    fn a_packet_in_service_is_released_when_its_last_bit_leaves() {
        let mut p = Pfc::new(3000, 1500, 10_000, 0xff, 4, 1);
        p.add(2, 1, 1500);
        assert_eq!(p.add(2, 1, 1500), Some(3));
        p.start_serving(0, 2, 1, 1500);
        assert_eq!(p.ingress_bytes(2, 1), 3000, "still held while serialised");
        assert_eq!(p.finish_serving(0), Some(3));
        assert_eq!(p.ingress_bytes(2, 1), 1500);
        assert_eq!(p.finish_serving(0), None, "nothing in service any more");
    }
}
