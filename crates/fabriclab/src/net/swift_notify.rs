//! Swift's congestion notifications generated in the network (Arslan thesis
//! §4.2.1, Fig. 4.2, the experiment that motivates Bolt): instead of learning
//! its RTT from the ACK, the sender is told by a switch "the RTT the packet
//! will observe with current congestion". Run by the programmable hook of
//! [`super::program`] at every switch:
//! - each Swift data packet (`P_DATA`) yields exactly one notification: at the
//!   first switch where it finds bytes waiting ahead of it in its egress port,
//!   or, if it never does, at the last switch of its path (the one whose
//!   egress leads to a host), so an uncongested path still gives the sender
//!   its samples. The packet then carries `P_DEC` (a notification was made);
//! - the notification carries the packet's queueing delay at that switch; the
//!   sender adds its base RTT (`transport::swift`);
//! - "Ing": generated when the packet arrives at the switch (after reception
//!   and the forwarding latency), before it joins the egress queue; the delay
//!   carried is the bytes waiting ahead of it (the packet in service excluded,
//!   as the queue-depth register of [`Egress`] reports) over the link rate;
//! - "Egr": generated when the packet leaves that queue (starts its
//!   serialisation); the delay carried is the time it waited, measured
//!   (exact whatever the classes overtaking it). Until then the packet holds
//!   its arrival time's low 32 bits in `prog_qlen` and `P_PENDING`, so a wait
//!   must stay below 2^32 ps (4.29 ms).
//!
//! Delivery is the simulator's (`sim::program`): through the network as a
//! control packet in the top class, like Bolt's SRC, or, with a configured
//! delay, straight to the sender that long after generation.

use super::program::{Action, Egress, NotifyAt, SwiftNotify, SwiftNotifyConfig, P_DATA, P_DEC, P_PENDING};
use super::Packet;
use fabriclab_engine::{serialization_time, Time};

// The types live in `program`, which names them in its enums; this file only
// implements them (so the two files do not import each other).
impl SwiftNotify {
    pub fn new(cfg: SwiftNotifyConfig) -> Self {
        SwiftNotify { cfg, notifications: 0 }
    }

    /// At switch ingress; `last_hop`: the egress port leads to a host.
    #[inline]
    pub fn ingress<H>(&mut self, now: Time, eg: Egress, last_hop: bool, pkt: &mut Packet<H>) -> Action {
        if pkt.prog & (P_DATA | P_DEC) != P_DATA || (eg.queued == 0 && !last_hop) {
            return Action::Forward;
        }
        pkt.prog |= P_DEC;
        match self.cfg.at {
            NotifyAt::Ingress => {
                self.notifications += 1;
                Action::Notify { wait: serialization_time(eg.queued, eg.rate_bps) }
            }
            NotifyAt::Egress => {
                pkt.prog |= P_PENDING;
                pkt.prog_qlen = now as u32;
                Action::Forward
            }
        }
    }

    /// When a packet leaves a switch queue: the wait to notify, if it is due.
    #[inline]
    pub fn dequeue<H>(&mut self, now: Time, pkt: &mut Packet<H>) -> Option<Time> {
        if pkt.prog & P_PENDING == 0 {
            return None;
        }
        pkt.prog &= !P_PENDING;
        self.notifications += 1;
        Some((now as u32).wrapping_sub(pkt.prog_qlen) as Time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::NS;

    const RATE: u64 = 100_000_000_000;

    fn eg(queued: u64) -> Egress {
        Egress { port: 0, queued, rate_bps: RATE }
    }

    fn data() -> Packet<()> {
        Packet::new(0, 1, 1538, 0, 0, ()).with_prog(P_DATA)
    }

    #[test]
    fn ingress_notifies_once_at_the_first_queue_or_the_last_hop() {
        let mut s = SwiftNotify::new(SwiftNotifyConfig { at: NotifyAt::Ingress, delay: None });
        // An empty queue mid-path: nothing yet.
        let mut p = data();
        assert_eq!(s.ingress(0, eg(0), false, &mut p), Action::Forward);
        // 2 x 1538 B ahead at 100 Gb/s: 246.08 ns.
        assert_eq!(s.ingress(0, eg(3076), false, &mut p), Action::Notify { wait: 246_080 });
        assert_eq!(p.prog & P_DEC, P_DEC);
        // Later hops stay silent, even the last one.
        assert_eq!(s.ingress(0, eg(3076), true, &mut p), Action::Forward);
        // A packet that never queues is notified at its last hop, with no wait.
        let mut q = data();
        assert_eq!(s.ingress(0, eg(0), true, &mut q), Action::Notify { wait: 0 });
        // Only data.
        let mut ack = Packet::new(1, 0, 84, 0, 0, ());
        assert_eq!(s.ingress(0, eg(3076), true, &mut ack), Action::Forward);
        assert_eq!(s.notifications, 2);
    }

    #[test]
    fn egress_notifies_when_the_packet_leaves_with_its_measured_wait() {
        let mut s = SwiftNotify::new(SwiftNotifyConfig { at: NotifyAt::Egress, delay: None });
        let mut p = data();
        let t_in = (1u64 << 32) + 5 * NS; // the low 32 bits wrap
        assert_eq!(s.ingress(t_in, eg(1538), false, &mut p), Action::Forward);
        assert_eq!(s.dequeue(t_in + 700 * NS, &mut p), Some(700 * NS));
        // Due once.
        assert_eq!(s.dequeue(t_in + 800 * NS, &mut p), None);
        assert_eq!(s.notifications, 1);
    }
}
