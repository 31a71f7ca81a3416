//! Aeolus (Hu, Bai, Zeng, Wang, Qiao, Chen, Tan, Wang, "Aeolus: A Building
//! Block for Proactive Transport in Datacenters", SIGCOMM 2020): what a
//! proactive transport adds to send its first RTT safely.
//!
//! - **Pre-credit packets**: a new message sends its first RTT at line rate,
//!   flagged [`crate::net::UNSCHEDULED`]; switches drop such packets as soon as
//!   the egress queue would exceed a small threshold (`network.
//!   selective_drop_bytes`, [`SELECTIVE_DROP_BYTES`]), so scheduled packets
//!   never queue behind a burst (scheduled-packet-first).
//! - **Loss detection without timeouts**: the receiver acknowledges every
//!   pre-credit packet, and a minimum-size PROBE, not droppable, follows the
//!   last one in the same class and on the same path. A message's packets stay
//!   in order, so an ACK for packet `i` means every earlier pre-credit packet
//!   not yet acknowledged was dropped, and the PROBE's ACK settles the tail.
//! - **Recovery as scheduled data**: packets known lost are sent again with
//!   the next credits (grants), ahead of new data, never as pre-credit packets.
//!
//! [`FirstRtt`] is the sender's bookkeeping of one message's pre-credit
//! packets; Homa(A) ([`super::homa_aeolus`]) and ExpressPass(A)
//! ([`super::expresspass_aeolus`]) drive it from their own state machines.

use super::toolkit::Reassembly;

/// Selective-dropping threshold PayDebt's Homa(A) and EP(A) baselines use
/// (PayDebt §2.3 and §5: "unscheduled packets are dropped selectively when the
/// buffer occupancy exceeds 8KB").
pub const SELECTIVE_DROP_BYTES: u64 = 8000;

/// What the sender knows of one pre-credit packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Sent; neither acknowledged nor known lost.
    InFlight,
    Acked,
    /// Known lost, waiting for a credit to go again.
    Lost,
    /// Sent again as scheduled data.
    Resent,
}

/// The sender's view of a message's pre-credit packets `0..n`, sent in index
/// order. One allocation per message, none per packet.
#[derive(Clone, Debug)]
pub struct FirstRtt {
    fate: Vec<Fate>,
    /// Packets `0..sent` have left.
    sent: u32,
    /// Every packet below `known` is acknowledged or known lost.
    known: u32,
    in_flight: u32,
    lost: u32,
    /// No packet below `scan` is [`Fate::Lost`].
    scan: u32,
}

impl FirstRtt {
    /// `n` pre-credit packets (the message's first RTT).
    pub fn new(n: u32) -> FirstRtt {
        FirstRtt { fate: vec![Fate::InFlight; n as usize], sent: 0, known: 0, in_flight: 0, lost: 0, scan: 0 }
    }

    /// Pre-credit packets in all.
    pub fn len(&self) -> u32 {
        self.fate.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.fate.is_empty()
    }

    /// Pre-credit packets sent so far (the next one to send has this index).
    pub fn sent(&self) -> u32 {
        self.sent
    }

    /// Whether every pre-credit packet has left.
    pub fn all_sent(&self) -> bool {
        self.sent == self.len()
    }

    /// Pre-credit packet `index` left; they leave in order.
    pub fn on_sent(&mut self, index: u32) {
        debug_assert_eq!(index, self.sent, "pre-credit packets leave in order");
        self.sent += 1;
        self.in_flight += 1;
    }

    /// The receiver acknowledged pre-credit packet `index`: it arrived, and so
    /// would have every earlier one still in flight.
    pub fn on_ack(&mut self, index: u32) {
        if index >= self.sent {
            return;
        }
        match self.fate[index as usize] {
            Fate::InFlight => self.in_flight -= 1,
            // Its ACK overtook nothing: an earlier ACK was lost and we guessed wrong.
            Fate::Lost => self.lost -= 1,
            Fate::Acked | Fate::Resent => return,
        }
        self.fate[index as usize] = Fate::Acked;
        self.settle(index);
        self.known = self.known.max(index + 1);
    }

    /// The PROBE sent after pre-credit packet `upto - 1` came back: every
    /// packet below `upto` not acknowledged by now was dropped.
    pub fn on_probe_ack(&mut self, upto: u32) {
        let upto = upto.min(self.sent);
        self.settle(upto);
        self.known = self.known.max(upto);
    }

    /// Marks packets `known..upto` still in flight as lost.
    fn settle(&mut self, upto: u32) {
        for i in self.known..upto {
            let f = &mut self.fate[i as usize];
            if *f == Fate::InFlight {
                *f = Fate::Lost;
                self.in_flight -= 1;
                self.lost += 1;
            }
        }
    }

    /// Whether a lost packet waits for a credit.
    pub fn has_lost(&self) -> bool {
        self.lost > 0
    }

    /// Packets whose fate is still unknown.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Packets that may still have to go (lost or unknown).
    pub fn pending(&self) -> u32 {
        self.lost + self.in_flight
    }

    /// The lowest lost packet, now to be sent again as scheduled data.
    pub fn pop_lost(&mut self) -> Option<u32> {
        if self.lost == 0 {
            return None;
        }
        while self.fate[self.scan as usize] != Fate::Lost {
            self.scan += 1;
        }
        self.fate[self.scan as usize] = Fate::Resent;
        self.lost -= 1;
        Some(self.scan)
    }
}

/// Receiver: pre-credit packets below `upto` that never arrived, once the
/// PROBE that follows them has (it cannot overtake them).
pub fn missing_before(reasm: &Reassembly, upto: u32) -> u32 {
    let upto = (upto as u64).min(reasm.n_packets());
    (0..upto).filter(|&i| !reasm.has(i)).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(n: u32, k: u32) -> FirstRtt {
        let mut f = FirstRtt::new(n);
        for i in 0..k {
            f.on_sent(i);
        }
        f
    }

    #[test]
    fn an_ack_reveals_the_earlier_packets_it_overtook() {
        let mut f = sent(8, 8);
        f.on_ack(0);
        f.on_ack(3); // 1 and 2 were dropped
        assert_eq!((f.in_flight(), f.pending()), (4, 6));
        assert!(f.has_lost());
        assert_eq!(f.pop_lost(), Some(1));
        f.on_ack(5); // 4 dropped
        assert_eq!(f.pop_lost(), Some(2));
        assert_eq!(f.pop_lost(), Some(4));
        assert_eq!(f.pop_lost(), None);
        assert_eq!(f.in_flight(), 2);
    }

    #[test]
    fn the_probe_settles_the_tail() {
        let mut f = sent(6, 6);
        for i in [0, 1, 3] {
            f.on_ack(i);
        }
        // 4 and 5 dropped at the tail: no later ACK reveals them, the PROBE's does.
        assert_eq!((f.in_flight(), f.lost), (2, 1));
        f.on_probe_ack(6);
        assert_eq!((f.in_flight(), f.pending()), (0, 3));
        let lost: Vec<u32> = std::iter::from_fn(|| f.pop_lost()).collect();
        assert_eq!(lost, vec![2, 4, 5]);
        assert_eq!(f.pending(), 0);
    }

    #[test]
    fn a_probe_after_a_partial_burst_covers_only_what_left() {
        // The first credit cut the burst short after 3 of 5 packets.
        let mut f = sent(5, 3);
        f.on_probe_ack(3);
        assert_eq!(f.pending(), 3);
        assert!(!f.all_sent());
        f.on_sent(3);
        f.on_ack(3);
        assert_eq!((f.in_flight(), f.pending()), (0, 3));
    }

    #[test]
    fn late_acks_and_duplicates_change_nothing_twice() {
        let mut f = sent(4, 4);
        f.on_ack(2); // 0 and 1 presumed lost
        f.on_ack(0); // 0's ACK was only late (an earlier ACK was lost): not lost after all
        assert_eq!(f.pending(), 2); // 1 lost, 3 in flight
        f.on_ack(2);
        f.on_ack(9); // never sent
        assert_eq!(f.pop_lost(), Some(1));
        f.on_ack(1); // the original arrived after all; the resend stands
        assert_eq!(f.pending(), 1);
        f.on_probe_ack(4);
        assert_eq!(f.pop_lost(), Some(3));
        assert_eq!(f.pending(), 0);
    }

    #[test]
    fn the_receiver_counts_the_holes_before_the_probe() {
        let mut r = Reassembly::new(10 * 1460, 1460);
        for i in [0, 2, 3, 6] {
            r.insert(i, 1460);
        }
        assert_eq!(missing_before(&r, 5), 2);
        assert_eq!(missing_before(&r, 7), 3);
        assert_eq!(missing_before(&r, 99), 6);
    }
}
