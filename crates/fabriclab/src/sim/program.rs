//! The simulator's side of the switch-side programmable hook
//! ([`crate::net::program`]): runs the protocol's program on a packet at switch
//! ingress and forwards the feedback packet it asks for.

use super::{Ev, Sim};
use crate::net::program::{mirror_back, notify_back, Action, Egress};
use crate::net::LoadBalancing;
use crate::transport::Transport;

impl<T: Transport> Sim<T> {
    /// Packet `idx`, at switch `node`, is about to join egress `port`.
    #[inline]
    pub(super) fn run_program(&mut self, node: u32, idx: u32, port: u32) {
        let now = self.q.now();
        let Some(prog) = self.feat.as_deref_mut().and_then(|f| f.program.as_mut()) else {
            return;
        };
        let p = &self.fabric.ports[port as usize];
        let (eg, last_hop) = (Egress::of(port, p), self.fabric.is_host(p.peer));
        let mut pkt = self.slab.get_mut(idx);
        let fb = match prog.ingress(now, eg, last_hop, &mut pkt) {
            Action::Forward => return,
            Action::ForwardAndFeedback { qlen, rate_bps } => mirror_back(&pkt, qlen, rate_bps),
            Action::Notify { wait } => notify_back(&pkt, wait),
        };
        drop(pkt);
        self.send_feedback(node, fb);
    }

    /// Packet `idx` leaves a queue of switch `node`: an egress notification, if
    /// one is due. Called only for a program that acts there
    /// ([`crate::net::features::Features::program_at_dequeue`]).
    #[inline]
    pub(super) fn program_dequeue(&mut self, node: u32, idx: u32) {
        let now = self.q.now();
        let Some(prog) = self.feat.as_deref_mut().and_then(|f| f.program.as_mut()) else {
            return;
        };
        let mut pkt = self.slab.get_mut(idx);
        if let Some(wait) = prog.dequeue(now, &mut pkt) {
            let fb = notify_back(&pkt, wait);
            drop(pkt);
            self.send_feedback(node, fb);
        }
    }

    /// Sends a switch's feedback packet to its destination (the sender):
    /// through the network from switch `node`, or straight to the host after
    /// the program's delivery delay.
    fn send_feedback(&mut self, node: u32, fb: crate::net::Packet<T::Header>) {
        let delay = self.feat.as_deref().and_then(|f| f.program.as_ref()).and_then(|p| p.delivery_delay());
        let (dst, entropy) = (fb.dst, fb.entropy);
        self.counters.packets_sent += 1;
        let fidx = self.slab.insert(fb);
        if let Some(d) = delay {
            self.q.schedule(self.q.now() + d, Ev::Arrive { node: dst, pkt: fidx });
            return;
        }
        let back = self.fabric.routes.select(node, dst, entropy, self.lb == LoadBalancing::SymmetricEcmp);
        self.forward_featured(node, fidx, back);
    }
}
